#!/bin/sh
# tests/run_gpu_oom.sh REDFOX TC_GRAPH PROG: a program whose data does not fit
# in the (emulated) GPU's memory. Its recursive set does not fit: it stays on
# the GPU, the set in partitions (runtime/gpu/rt_gpu_recpart.c, --profile
# says so), with the CPU backend's answer. On a device too small for any of
# its kernels it runs on the CPU, says so, and gives the same answer.
set -u
redfox=$1 graph=$2 prog=$3
tmp=${TMPDIR:-/tmp}/rf_gpuoom.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# (700 nodes: since recursive sets keep 32-bit columns, 500 nodes fit)
"$graph" 700 2100 1 > "$tmp/edges.tbl" || exit 1
"$redfox" run "$prog" --data "$tmp" --device cpu --format csv > "$tmp/cpu.csv" 2>/dev/null || exit 1
RF_GPU_EMULATE=1 RF_GPU_EMU_MEM_MB=520 "$redfox" run "$prog" --data "$tmp" --device gpu --format csv --profile \
    > "$tmp/gpu.csv" 2> "$tmp/err"
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: exit $rc"; cat "$tmp/err"; exit 1; fi
if grep -q "running on the CPU instead" "$tmp/err"; then echo "FAIL: left the GPU"; grep warning "$tmp/err"; exit 1; fi
grep -q "gpu recursive sets: partitioned into" "$tmp/err" || { echo "FAIL: the set was not partitioned"; cat "$tmp/err"; exit 1; }
cmp -s "$tmp/cpu.csv" "$tmp/gpu.csv" || { echo "FAIL: outputs differ"; exit 1; }
RF_GPU_EMULATE=1 RF_GPU_EMU_MEM_MB=100 "$redfox" run "$prog" --data "$tmp" --device gpu --format csv \
    > "$tmp/gpu.csv" 2> "$tmp/err"
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: small device: exit $rc"; cat "$tmp/err"; exit 1; fi
grep -q "out of GPU memory.*running on the CPU instead" "$tmp/err" || { echo "FAIL: small device: no notice"; cat "$tmp/err"; exit 1; }
cmp -s "$tmp/cpu.csv" "$tmp/gpu.csv" || { echo "FAIL: small device: outputs differ"; exit 1; }
