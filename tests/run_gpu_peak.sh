#!/bin/sh
# tests/run_gpu_peak.sh REDFOX TC_GRAPH TC_PROG [TPCH_DIR]: the peak device
# memory of the emulated GPU (`--profile`'s "peak device memory N bytes",
# the pool's own count, the same on a real GPU) stays within bounds computed
# from the data, and the answers are the CPU's:
# - transitive closure of a random graph: at most 22 bytes per path tuple
#   (21.7 now; 16 would be its two int columns in 64 bits). It was 67 before
#   the recursion's set held u32 slots at most two thirds full, its columns
#   grew by a quarter one column at a time, and the loop's new rows moved into
#   the delta instead of being copied; 32.7 before the set kept its int
#   columns in 32 bits while they fit (runtime/gpu/rt_gpu_narrow.c), a
#   difference found its absent rows' first occurrences with u32 entries and
#   slots, and a fused join freed its counts before its outputs; the copies
#   coming back fail here.
# - TPC-H q01 (with TPCH_DIR, SF 0.01 .tbl files): at most 64 bytes copied to
#   the device per lineitem row (the 9 columns it reads take 60; the whole
#   string dictionary, copied for a sort of 4 rows, made it 94), and a peak of
#   at most 2.15 times the bytes copied (2.35 before lineitem's columns were
#   freed after their last reader, the map, rather than at the end).
set -u
redfox=$1 graph=$2 prog=$3 tpch=${4:-}
tmp=${TMPDIR:-/tmp}/rf_gpupeak.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0

peak_of() { sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$1" | tail -n 1; }

"$graph" 1000 2000 7 > "$tmp/edges.tbl" || exit 1
"$redfox" run "$prog" --data "$tmp" --device cpu --format csv > "$tmp/cpu.csv" 2>/dev/null || exit 1
RF_GPU_EMULATE=1 "$redfox" run "$prog" --data "$tmp" --device gpu --format csv --profile \
    > "$tmp/gpu.csv" 2> "$tmp/err" || { echo "FAIL: tc: exit $?"; cat "$tmp/err"; exit 1; }
cmp -s "$tmp/cpu.csv" "$tmp/gpu.csv" || { echo "FAIL: tc: outputs differ"; fail=1; }
tuples=$(tail -n 1 "$tmp/cpu.csv")
peak=$(peak_of "$tmp/err")
bound=$((tuples * 22))
echo "tc: $tuples path tuples, peak $peak bytes, bound $bound"
if [ -z "$peak" ] || [ "$tuples" -lt 100000 ]; then echo "FAIL: tc: no peak or too few tuples"; cat "$tmp/err"; fail=1
elif [ "$peak" -gt "$bound" ]; then echo "FAIL: tc: peak $peak bytes over $bound"; fail=1; fi

if [ -n "$tpch" ] && [ -f "$tpch/lineitem.tbl" ]; then
    RF_GPU_EMULATE=1 "$redfox" tpch run --data "$tpch" --queries 1 --device gpu --format csv --profile \
        > "$tmp/q01.gpu" 2> "$tmp/q01.err" || { echo "FAIL: q01: exit $?"; cat "$tmp/q01.err"; exit 1; }
    "$redfox" tpch run --data "$tpch" --queries 1 --device cpu --format csv > "$tmp/q01.cpu" 2>/dev/null || exit 1
    grep -v '^q01 \|^total \|^query ' "$tmp/q01.gpu" > "$tmp/q01.g"
    grep -v '^q01 \|^total \|^query ' "$tmp/q01.cpu" > "$tmp/q01.c"
    cmp -s "$tmp/q01.c" "$tmp/q01.g" || { echo "FAIL: q01: outputs differ"; fail=1; }
    peak=$(peak_of "$tmp/q01.err")
    copied=$(sed -n 's/.*copy [0-9.]* ms (\([0-9]*\) bytes to the device.*/\1/p' "$tmp/q01.err" | tail -n 1)
    rows=$(wc -l < "$tpch/lineitem.tbl")
    echo "q01: $rows lineitem rows, $copied bytes copied, peak $peak bytes"
    if [ -z "$peak" ] || [ -z "$copied" ]; then echo "FAIL: q01: no figures"; cat "$tmp/q01.err"; fail=1
    elif [ "$copied" -gt $((rows * 64)) ]; then echo "FAIL: q01: $copied bytes copied, over 64 a row"; fail=1
    elif [ $((peak * 100)) -gt $((copied * 215)) ]; then echo "FAIL: q01: peak $peak over 2.15 x $copied"; fail=1; fi
fi
exit $fail
