#!/bin/sh
# tests/run_gpu_oom.sh REDFOX TC_GRAPH PROG: a program whose data does not fit
# in the (emulated) GPU's memory runs on the CPU, says so, and gives the same
# answer as the CPU backend.
set -u
redfox=$1 graph=$2 prog=$3
tmp=${TMPDIR:-/tmp}/rf_gpuoom.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# (700 nodes: since recursive sets keep 32-bit columns, 500 nodes fit)
"$graph" 700 2100 1 > "$tmp/edges.tbl" || exit 1
"$redfox" run "$prog" --data "$tmp" --device cpu --format csv > "$tmp/cpu.csv" 2>/dev/null || exit 1
RF_GPU_EMULATE=1 RF_GPU_EMU_MEM_MB=520 "$redfox" run "$prog" --data "$tmp" --device gpu --format csv \
    > "$tmp/gpu.csv" 2> "$tmp/err"
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: exit $rc"; cat "$tmp/err"; exit 1; fi
grep -q "out of GPU memory.*running on the CPU instead" "$tmp/err" || { echo "FAIL: no notice"; cat "$tmp/err"; exit 1; }
cmp -s "$tmp/cpu.csv" "$tmp/gpu.csv" || { echo "FAIL: outputs differ"; exit 1; }
