#!/bin/sh
# tests/run_gpu_unfit.sh REDFOX DATA PROG.logic...: the one way off the GPU
# under a memory cap, in the emulator. Each PROG runs on the CPU and on the
# emulated GPU uncapped (its peak device memory P), then under caps of P
# times 7/8, 49/64, ... (at most 40, down to 512 bytes). Under every cap its
# output must be the CPU's byte for byte, on the GPU, or on the CPU after the
# one warning a run that does not fit may give: a part that cannot split
# (one row, the rows of one key, one group) does not fit with its kernel's
# work ("which does not split", runtime/gpu/rt_gpu_part.c, rt_gpu_radix.c).
# Any other fallback fails, and so does a program that never meets that
# warning before the caps run out (the warning must be reachable).
set -u
redfox=$1 data=$2
shift 2
tmp=${TMPDIR:-/tmp}/rf_gpuunfit.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
RF_GPU_EMULATE=1
export RF_GPU_EMULATE
fail=0
for prog in "$@"; do
    name=$(basename "$prog" .logic)
    "$redfox" run "$prog" --data "$data" --device cpu --format tbl >"$tmp/cpu" 2>"$tmp/cpu.err" \
        || { echo "FAIL $name: cpu run"; cat "$tmp/cpu.err"; fail=1; continue; }
    "$redfox" run "$prog" --data "$data" --device gpu --format tbl --profile >"$tmp/gpu" 2>"$tmp/gpu.err" \
        || { echo "FAIL $name: gpu run"; cat "$tmp/gpu.err"; fail=1; continue; }
    cmp -s "$tmp/cpu" "$tmp/gpu" || { echo "FAIL $name: the uncapped GPU run differs from the CPU"; fail=1; continue; }
    peak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/gpu.err")
    [ -n "$peak" ] && [ "$peak" -gt 0 ] || { echo "FAIL $name: no peak device memory"; fail=1; continue; }
    cap=$peak runs=0 ongpu=0 unit=
    while [ $runs -lt 40 ] && [ $cap -ge 512 ] && [ -z "$unit" ]; do
        cap=$((cap * 7 / 8)) runs=$((runs + 1))
        "$redfox" run "$prog" --data "$data" --device gpu --format tbl --profile --gpu-memory "$cap" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc -ne 0 ]; then echo "FAIL $name: cap $cap exited $rc"; cat "$tmp/err"; fail=1; break; fi
        if ! cmp -s "$tmp/cpu" "$tmp/out"; then echo "FAIL $name: cap $cap: output differs from the CPU's"; fail=1; break; fi
        if ! grep -q '^profile (device cpu)' "$tmp/err"; then ongpu=$((ongpu + 1)); continue; fi
        unit=$(sed -n 's/.*warning: \(.*out of GPU memory: .*which does not split.*\): running on the CPU instead/\1/p' "$tmp/err")
        if [ -z "$unit" ]; then
            echo "FAIL $name: cap $cap: left the GPU though no part that cannot split was too big"; grep warning "$tmp/err"; fail=1
            unit=failed
        fi
    done
    case $unit in
    failed) ;;
    '') echo "FAIL $name: no cap down to $cap met a part that cannot split"; fail=1 ;;
    *) echo "$name: peak $peak: on the GPU under $ongpu caps, then at $cap: $unit" ;;
    esac
done
exit $fail
