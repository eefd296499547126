#!/bin/sh
# tests/run_rfx_gpu.sh REDFOX PROG.logic OTHER.logic: the GPU sections of a
# .rfx file (GPLN, the plans; PTX0, the code) on the emulator. A run reads
# the plans as they are; a file without them, with damaged or stale ones, or
# with PTX that belongs to another program's plans is refused on the GPU
# with an error naming the file and exit status 1, while the CPU still runs
# it. The sections are rewritten with valid checksums (the container is
# sound; only the section is wrong), so the section's own checks are what
# is tested.
set -u
redfox=$1
prog=$2
other=$3
data=$(dirname "$prog")/data
tmp=${TMPDIR:-/tmp}/rf_rfxgpu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
"$redfox" compile "$prog" -o "$tmp/good.rfx" 2>"$tmp/err" || { echo "FAIL: compile"; cat "$tmp/err"; exit 1; }
"$redfox" compile "$other" -o "$tmp/other.rfx" 2>"$tmp/err" || { echo "FAIL: compile other"; cat "$tmp/err"; exit 1; }
"$redfox" run "$tmp/good.rfx" --device cpu --data "$data" --format csv >"$tmp/cpu" 2>"$tmp/err" ||
    { echo "FAIL: cpu run"; cat "$tmp/err"; exit 1; }

# edit FILE OUT OP [ARG]: rewrites the .rfx container with one section changed
edit() {
    python3 - "$@" <<'PY'
import struct, sys, zlib
src, out, op = sys.argv[1], sys.argv[2], sys.argv[3]
arg = sys.argv[4] if len(sys.argv) > 4 else None
data = open(src, 'rb').read()
count, table = struct.unpack_from('<I', data, 32)[0], struct.unpack_from('<Q', data, 24)[0]
secs = []
for i in range(count):
    tag, crc, off, size = struct.unpack_from('<4sIQQ', data, table + 24 * i)
    secs.append([tag, bytearray(data[off:off + size])])
def sec(tag):
    return [s for s in secs if s[0] == tag][0]
if op == 'drop':
    secs = [s for s in secs if s[0] != arg.encode()]
elif op == 'flip':  # flip a byte of GPLN's body (after its version and tag)
    s = sec(b'GPLN')[1]
    at = int(arg) % (len(s) - 40) + 40
    s[at] ^= 0xFF
elif op == 'version':
    sec(b'GPLN')[1][0] = 9
elif op == 'tag':  # another generator: a hex digit of the tag changed
    s = sec(b'GPLN')[1]
    s[18] = ord('0') if s[18] != ord('0') else ord('1')
elif op == 'ptx0from':  # PTX0 of another program
    o = open(arg, 'rb').read()
    oc, ot = struct.unpack_from('<I', o, 32)[0], struct.unpack_from('<Q', o, 24)[0]
    for i in range(oc):
        tag, crc, off, size = struct.unpack_from('<4sIQQ', o, ot + 24 * i)
        if tag == b'PTX0':
            sec(b'PTX0')[1] = bytearray(o[off:off + size])
# write the container back: header, table, 8-aligned sections
n = len(secs)
pos = 96 + 24 * n
body = b''
entries = b''
for tag, b in secs:
    pad = (-pos) % 8
    body += b'\0' * pad
    pos += pad
    entries += struct.pack('<4sIQQ', tag, zlib.crc32(bytes(b)) if b else 0, pos, len(b))
    body += bytes(b)
    pos += len(b)
body += b'\0' * ((-pos) % 8)
pos += (-pos) % 8
hdr = bytearray(data[:96])
struct.pack_into('<QQII', hdr, 16, pos, 96, n, zlib.crc32(entries))
struct.pack_into('<I', hdr, 92, zlib.crc32(bytes(hdr[:92])))
open(out, 'wb').write(bytes(hdr) + entries + body)
PY
}
# gpu_refused FILE WHAT EXPECTED-TEXT: refused on the emulated GPU, naming the file; the CPU runs it
gpu_refused() {
    RF_GPU_EMULATE=1 "$redfox" run "$1" --device gpu --data "$data" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 1 ] || ! grep -q "^$1: error: .*$3" "$tmp/err"; then
        echo "FAIL: $2: exit $rc, expected 1 and '$1: error: ...$3'"; cat "$tmp/err"; fail=1
    fi
    "$redfox" run "$1" --device cpu --data "$data" --format csv >"$tmp/out" 2>/dev/null
    cmp -s "$tmp/out" "$tmp/cpu" || { echo "FAIL: $2: the CPU run changed"; fail=1; }
}

# the file as compiled: the emulated GPU follows its plans, and agrees with the CPU
for f in "" --no-fuse; do
    RF_GPU_EMULATE=1 "$redfox" run "$tmp/good.rfx" --device gpu --data "$data" --format csv $f >"$tmp/out" 2>"$tmp/err" ||
        { echo "FAIL: emulated run $f"; cat "$tmp/err"; fail=1; }
    cmp -s "$tmp/out" "$tmp/cpu" || { echo "FAIL: emulated run $f differs from the CPU"; fail=1; }
done
# the rewriting itself keeps a file valid
edit "$tmp/good.rfx" "$tmp/same.rfx" none
RF_GPU_EMULATE=1 "$redfox" run "$tmp/same.rfx" --device gpu --data "$data" --format csv >"$tmp/out" 2>"$tmp/err" ||
    { echo "FAIL: a rewritten file"; cat "$tmp/err"; fail=1; }

edit "$tmp/good.rfx" "$tmp/noplan.rfx" drop GPLN
gpu_refused "$tmp/noplan.rfx" "no GPLN" "holds no GPU plans"
edit "$tmp/good.rfx" "$tmp/ver.rfx" version
gpu_refused "$tmp/ver.rfx" "GPLN version 9" "format version 9"
edit "$tmp/good.rfx" "$tmp/tag.rfx" tag
gpu_refused "$tmp/tag.rfx" "another generator" "stale"
if grep -q PTX0 "$tmp/good.rfx" && grep -q PTX0 "$tmp/other.rfx"; then
    edit "$tmp/good.rfx" "$tmp/ptx.rfx" ptx0from "$tmp/other.rfx"
    gpu_refused "$tmp/ptx.rfx" "another program's PTX0" "not compiled from this program's GPU plans"
fi
# damaged plans: refused with one error, or (where the byte changed nothing
# that matters) run with the CPU's results; never a crash
i=0
while [ $i -lt 12 ]; do
    edit "$tmp/good.rfx" "$tmp/flip.rfx" flip $((i * 97 + 5))
    RF_GPU_EMULATE=1 "$redfox" run "$tmp/flip.rfx" --device gpu --data "$data" --format csv \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 0 ]; then
        cmp -s "$tmp/out" "$tmp/cpu" || { echo "FAIL: GPLN byte $i flipped: a wrong answer"; fail=1; }
    elif [ $rc -ne 1 ] || ! grep -q "^$tmp/flip.rfx: error: " "$tmp/err"; then
        echo "FAIL: GPLN byte $i flipped: exit $rc"; cat "$tmp/err"; fail=1
    fi
    i=$((i + 1))
done
exit $fail
