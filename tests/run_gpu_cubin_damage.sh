#!/bin/sh
# tests/run_gpu_cubin_damage.sh REDFOX: on the machine's GPU (exit 77 without
# one), a damaged entry of the driver's JIT cache (CACHE/jit/*.cubin,
# runtime/gpu/rt_gpu_cuda.c) is a miss: cut to half, cut to a few bytes, a
# byte changed in its middle, its bytes replaced by others of the same
# length, or emptied, the next `redfox run --device gpu` links the PTX
# again, exits 0 with the CPU's outputs and no error, and leaves the entry
# whole again (the same bytes as the first run wrote); `redfox compile` does
# the same for the entry it keeps. The checks of the entry itself are unit
# tested without a GPU (skeletons/cuda/test_cubin_cache.c); this runs them
# where the driver would load the file.
set -u
r=$1
tmp=${TMPDIR:-/tmp}/rf_cubin_damage.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

. "$(dirname "$0")/lib_device.sh"
use_device 1 "$r" "$tmp"

p=$tmp/prog.logic
cat >"$p" <<'P'
e(1, 2). e(2, 3). e(3, 4). e(4, 1). e(2, 5).
w(1, 10). w(2, 20). w(3, 30). w(4, 40). w(5, 50).
path(x, y) <- e(x, y).
path(x, z) <- path(x, y), e(y, z).
reach[x] = n <- agg<<n = count()>> path(x, _).
heavy[x] = s <- agg<<s = total(v)>> path(x, y), w(y, v).
lang:output[`reach] = "reach".
lang:output[`heavy] = "heavy".
P
c=$tmp/cache
"$r" run "$p" --device cpu --out "$tmp/cpu" 2>"$tmp/err" || { cat "$tmp/err"; echo "FAIL: the CPU's run"; exit 1; }
"$r" run "$p" --device gpu --cache-dir "$c" --out "$tmp/gpu0" 2>"$tmp/err" ||
    { cat "$tmp/err"; echo "FAIL: the GPU's first run"; exit 1; }
diff -r "$tmp/cpu" "$tmp/gpu0" >/dev/null || no "the GPU's first run differs from the CPU's"
n=$(ls "$c/jit" 2>/dev/null | grep -c '\.cubin$')
[ "$n" -ge 1 ] || { echo "FAIL: no cubin in the cache after a GPU run ($(ls -R "$c" 2>&1 | head -5))"; exit 1; }
f=$c/jit/$(ls "$c/jit" | grep '\.cubin$' | head -n 1)
cp "$f" "$tmp/good"
size=$(wc -c <"$tmp/good")
[ "$size" -gt 64 ] || no "the cached cubin has only $size bytes"

# damage KIND: the entry f damaged so
damage() {
    case $1 in
    half) head -c $((size / 2)) "$tmp/good" >"$f" ;;
    stub) head -c 3 "$tmp/good" >"$f" ;;
    flip) # one byte in the middle, changed (xor 0x5a, so never the same byte)
        mid=$((size / 2))
        b=$(od -An -tu1 -j "$mid" -N1 "$tmp/good" | tr -d ' ')
        nb=$(( (b ^ 90) & 255 ))
        { head -c "$mid" "$tmp/good"; printf "$(printf '\\%03o' "$nb")"; tail -c +$((mid + 2)) "$tmp/good"; } >"$f" ;;
    other) head -c "$size" /dev/urandom >"$f" ;;
    empty) : >"$f" ;;
    esac
}

for kind in half stub flip other empty; do
    damage $kind
    cmp -s "$f" "$tmp/good" && { no "$kind: the damage left the entry as it was"; continue; }
    "$r" run "$p" --device gpu --cache-dir "$c" --out "$tmp/gpu-$kind" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { no "$kind: run exited $rc"; cat "$tmp/err"; continue; }
    grep -qi 'error' "$tmp/err" && no "$kind: the run printed an error: $(head -3 "$tmp/err")"
    diff -r "$tmp/cpu" "$tmp/gpu-$kind" >/dev/null || no "$kind: the outputs differ from the CPU's"
    cmp -s "$f" "$tmp/good" || no "$kind: the run left the entry damaged or different ($(wc -c <"$f") bytes, $size expected)"
done

# redfox compile on a GPU host keeps the entry: a damaged one is written anew
damage flip
"$r" compile "$p" -o "$tmp/p.rfx" --cache-dir "$c" 2>"$tmp/err" || { no "compile"; cat "$tmp/err"; }
cmp -s "$f" "$tmp/good" || no "compile left the damaged entry"
"$r" run "$tmp/p.rfx" --device gpu --cache-dir "$c" --out "$tmp/gpu-rfx" 2>"$tmp/err" || { no "run of the .rfx"; cat "$tmp/err"; }
diff -r "$tmp/cpu" "$tmp/gpu-rfx" >/dev/null || no "the .rfx's outputs differ from the CPU's"

[ $fail -eq 0 ] && echo "ok: 5 kinds of damage to a cached cubin are misses, rewritten whole"
exit $fail
