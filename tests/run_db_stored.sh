#!/bin/sh
# tests/run_db_stored.sh REDFOX SF [all]: a database's narrow columns copied to the
# GPU as stored and widened there (runtime/gpu/rt_gpu_wire.c), in the GPU
# emulator, against the text path on the CPU: the 22 TPC-H queries at SF in
# one process each way (tpch run: the input cache's stored columns, their
# selections of blocks and the device's kept copies across programs) give
# the text's answers byte for byte, emulated and (with `all`) from the
# database on the CPU and with --device auto (which may put some on the
# CPU: columns held as stored widened on the host); q01, q06 and q18 under GPU memory caps that
# keep inputs in host memory or send the run to the CPU still do; --profile
# says how many bytes were sent (q06 from SF 0.1: under half of those to the
# device);
# a damaged narrow block is refused naming the file, exit 1.
set -u
redfox=$1
sf=$2
all=${3:-}
tmp=${TMPDIR:-/tmp}/rf_db_stored.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
src=$(dirname "$0")/../tpch/queries
"$redfox" tpch gen --sf "$sf" --format db --out "$tmp/db" >/dev/null 2>&1 || fail "tpch gen --format db"
"$redfox" tpch gen --sf "$sf" --out "$tmp/text" >/dev/null 2>&1 || fail "tpch gen"
"$redfox" tpch run --data "$tmp/text" --device cpu --out "$tmp/ref" >"$tmp/o" 2>&1 || { cat "$tmp/o"; fail "text on the CPU"; }
same() { # $1: what, $2: folder of qNN.csv
    for f in "$tmp"/ref/q*.csv; do
        cmp -s "$f" "$2/$(basename "$f")" || { diff "$f" "$2/$(basename "$f")" | head; fail "$1: $(basename "$f") differs from the text's"; }
    done
}
RF_GPU_EMULATE=1 "$redfox" tpch run --data "$tmp/db" --device gpu --out "$tmp/emu" >"$tmp/o" 2>&1 || { cat "$tmp/o"; fail "database, emulator"; }
same "database, emulator" "$tmp/emu"
if [ "$all" = all ]; then
    "$redfox" tpch run --data "$tmp/db" --device cpu --out "$tmp/cpu" >"$tmp/o" 2>&1 || { cat "$tmp/o"; fail "database on the CPU"; }
    same "database, CPU" "$tmp/cpu"
    RF_GPU_EMULATE=1 "$redfox" tpch run --data "$tmp/db" --device auto --out "$tmp/auto" >"$tmp/o" 2>&1 || { cat "$tmp/o"; fail "database, --device auto"; }
    same "database, --device auto" "$tmp/auto"
fi
# one program at a time, under caps: 1 MiB sends the run to the CPU; 40 MiB
# (at SF 0.1) keeps inputs in host memory and runs kernels in ranges
for q in 01 06 18; do
    for cap in 1 40; do
        RF_GPU_EMULATE=1 "$redfox" run "$src/schema.logic" "$src/q$q.logic" --data "$tmp/db" --device gpu --format tbl \
            --gpu-memory "${cap}M" >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "q$q under a ${cap} MiB cap"; }
        cmp -s "$tmp/got" "$tmp/ref/q$q.csv" || { diff "$tmp/got" "$tmp/ref/q$q.csv" | head; fail "q$q under a ${cap} MiB cap: not the text's answer"; }
    done
done
# the bytes sent: q06 reads four narrow lineitem columns
RF_GPU_EMULATE=1 "$redfox" run "$src/schema.logic" "$src/q06.logic" --data "$tmp/db" --device gpu --profile >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "q06 --profile"; }
wide=$(sed -n 's/^phases: .*copy [0-9.]* ms (\([0-9]*\) bytes to the device, \([0-9]*\) bytes sent, .*/\1/p' "$tmp/err")
sent=$(sed -n 's/^phases: .*copy [0-9.]* ms (\([0-9]*\) bytes to the device, \([0-9]*\) bytes sent, .*/\2/p' "$tmp/err")
[ -n "$wide" ] && [ -n "$sent" ] || { grep "^phases" "$tmp/err"; fail "q06: no bytes sent in --profile"; }
# (a table's partial last block is stored as it is: lineitem at SF 0.01, one
# block, is a plain column, sent whole; from two blocks on, its full blocks narrow)
if [ "$(wc -l <"$tmp/text/lineitem.tbl")" -gt 131072 ]; then
    [ $((sent * 2)) -lt "$wide" ] || fail "q06: $sent bytes sent for $wide to the device"
else
    [ "$sent" -gt 0 ] && [ "$sent" -le "$wide" ] || fail "q06: $sent bytes sent for $wide to the device"
fi
echo "q06: $wide bytes to the device, $sent sent"
# a damaged narrow block: every column file flipped in its middle; q01 reads
# lineitem's blocks nearly all
rm -rf "$tmp/bad"
cp -r "$tmp/db" "$tmp/bad"
for f in "$tmp"/bad/t*.col; do
    n=$(wc -c <"$f")
    [ "$n" -gt 0 ] || continue
    at=$((n / 2))
    b=$(od -A n -t u1 -j "$at" -N 1 "$f" | tr -d ' ')
    printf "$(printf '\\%03o' $((b ^ 16)))" | dd of="$f" bs=1 seek="$at" conv=notrunc 2>/dev/null
done
RF_GPU_EMULATE=1 "$redfox" run "$src/schema.logic" "$src/q01.logic" --data "$tmp/bad" --device gpu >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/err"; fail "a damaged database: exit $rc, not 1"; }
grep -q "/t[0-9]*\.c[0-9]*\.col: error: the file is corrupted (checksum mismatch in block" "$tmp/err" ||
    { cat "$tmp/err"; fail "a damaged database: no error naming the column file"; }
echo "ok: SF $sf, the 22 queries from the database emulated${all:+, on the CPU and with --device auto,} as from text"
