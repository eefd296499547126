#!/bin/sh
# tests/run_gpu_radix.sh REDFOX PROG.logic: a group-by and sorts larger than
# the GPU memory cap, in the emulator. PROG runs on the CPU, then on the
# emulated GPU uncapped (its peak device memory P) and under a cap of P / 4:
# there it must stay on the GPU (no fallback to the CPU), run kernels in key
# partitions (runtime/gpu/rt_gpu_radix.c, counted by --profile) and give the
# CPU's output byte for byte; under a cap of 2 P, nothing runs in partitions.
set -u
redfox=$1 prog=$2
tmp=${TMPDIR:-/tmp}/rf_gpuradix.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
RF_GPU_EMULATE=1
export RF_GPU_EMULATE
fail=0
"$redfox" run "$prog" --device cpu --format tbl >"$tmp/cpu" 2>"$tmp/cpu.err" || { echo "FAIL: cpu run"; cat "$tmp/cpu.err"; exit 1; }
"$redfox" run "$prog" --device gpu --format tbl --profile >"$tmp/gpu" 2>"$tmp/gpu.err" || { echo "FAIL: gpu run"; cat "$tmp/gpu.err"; exit 1; }
peak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/gpu.err")
[ -n "$peak" ] && [ "$peak" -gt 0 ] || { echo "FAIL: no peak device memory"; cat "$tmp/gpu.err"; exit 1; }
cmp -s "$tmp/cpu" "$tmp/gpu" || { echo "FAIL: the uncapped GPU run differs from the CPU"; exit 1; }
for cap in $((peak / 4)) $((peak * 2)); do
    "$redfox" run "$prog" --device gpu --format tbl --profile --gpu-memory "$cap" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL: cap $cap exited $rc"; cat "$tmp/err"; fail=1; continue; fi
    if ! cmp -s "$tmp/cpu" "$tmp/out"; then echo "FAIL: cap $cap: output differs from the CPU's"; diff "$tmp/cpu" "$tmp/out" | head; fail=1; fi
    if grep -q '^profile (device cpu)' "$tmp/err"; then echo "FAIL: cap $cap: fell back to the CPU"; cat "$tmp/err"; fail=1; continue; fi
    keyed=$(sed -n 's/.*; \([0-9]*\) kernels run in \([0-9]*\) key partitions.*/\1 \2/p' "$tmp/err")
    newpeak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/err")
    echo "cap $cap of peak $peak: peak $newpeak, kernels in key partitions and partitions: ${keyed:-none}"
    if [ "$newpeak" -gt "$cap" ]; then echo "FAIL: peak $newpeak above the cap $cap"; fail=1; fi
    if [ "$cap" -lt "$peak" ]; then
        case $keyed in ''|0\ *) echo "FAIL: cap $cap: no kernel ran in key partitions"; fail=1 ;; esac
    else
        case $keyed in ''|0\ *) ;; *) echo "FAIL: cap $cap above the peak: kernels ran in key partitions"; fail=1 ;; esac
    fi
done
exit $fail
