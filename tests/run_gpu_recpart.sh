#!/bin/sh
# tests/run_gpu_recpart.sh REDFOX TC_GRAPH DIVISOR NODES EDGES PROG.logic...:
# recursive sets larger than the GPU memory cap, in the emulator. A random
# graph of NODES and EDGES (edges.tbl) feeds each PROG; PROG runs on the CPU, then on the emulated
# GPU uncapped (its peak device memory P: nothing in partitions there) and
# under a cap of P / DIVISOR, where it must stay on the GPU (no "running on
# the CPU instead"), keep its recursive set in partitions (--profile's "gpu
# recursive sets: partitioned into N parts", N >= 2;
# runtime/gpu/rt_gpu_recpart.c), stay under the cap and give the CPU's
# output byte for byte.
set -u
redfox=$1 graph=$2 div=$3 nodes=$4 edges=$5
shift 5
tmp=${TMPDIR:-/tmp}/rf_gpurecpart.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
RF_GPU_EMULATE=1
export RF_GPU_EMULATE
"$graph" "$nodes" "$edges" 3 > "$tmp/edges.tbl" || exit 1
fail=0
for prog in "$@"; do
    name=$(basename "$prog" .logic)
    "$redfox" run "$prog" --data "$tmp" --device cpu --format tbl >"$tmp/cpu" 2>"$tmp/cpu.err" \
        || { echo "FAIL $name: cpu run"; cat "$tmp/cpu.err"; fail=1; continue; }
    "$redfox" run "$prog" --data "$tmp" --device gpu --format tbl --profile >"$tmp/gpu" 2>"$tmp/gpu.err" \
        || { echo "FAIL $name: gpu run"; cat "$tmp/gpu.err"; fail=1; continue; }
    cmp -s "$tmp/cpu" "$tmp/gpu" || { echo "FAIL $name: the uncapped GPU run differs from the CPU"; fail=1; continue; }
    if grep -q 'gpu recursive sets' "$tmp/gpu.err"; then echo "FAIL $name: partitioned without a cap"; fail=1; fi
    peak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/gpu.err")
    [ -n "$peak" ] && [ "$peak" -gt 0 ] || { echo "FAIL $name: no peak device memory"; cat "$tmp/gpu.err"; fail=1; continue; }
    cap=$((peak / div))
    "$redfox" run "$prog" --data "$tmp" --device gpu --format tbl --profile --gpu-memory "$cap" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL $name: cap $cap exited $rc"; cat "$tmp/err"; fail=1; continue; fi
    if grep -q 'running on the CPU instead\|^profile (device cpu)' "$tmp/err"; then
        echo "FAIL $name: cap $cap: fell back to the CPU"; grep 'warning' "$tmp/err"; fail=1; continue
    fi
    if ! cmp -s "$tmp/cpu" "$tmp/out"; then echo "FAIL $name: cap $cap: output differs from the CPU's"; fail=1; continue; fi
    parts=$(sed -n 's/.*gpu recursive sets: partitioned into \([0-9]*\) parts.*/\1/p' "$tmp/err")
    newpeak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/err")
    echo "$name: $(wc -l < "$tmp/cpu") rows out; cap $cap of peak $peak: peak $newpeak, recursive set in ${parts:-no} parts"
    grep 'gpu recursive sets' "$tmp/err"
    case $parts in ''|0|1) echo "FAIL $name: cap $cap: the recursive set was not partitioned"; fail=1 ;; esac
    if [ "$newpeak" -gt "$cap" ]; then echo "FAIL $name: peak $newpeak above the cap $cap"; fail=1; fi
done
exit $fail
