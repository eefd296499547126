#!/bin/sh
# tests/run_gpu_cap_recdiff.sh REDFOX DIR: DIR/prog.logic (a random program,
# tests/random/randprog.py seed 48 with RANDPROG_BIGDATA=1) whose recursive
# nullary relation p1() gets 1293 candidate rows a round, all one row: the
# difference against its set did not fit under caps of 16 to 24 KiB, and a
# set partitioned by row hash cannot split rows that are all equal, so the
# run left the GPU with a warning that named no part which does not split.
# Now that difference runs in ranges of its candidates: under each cap the
# run must stay on the GPU (no warning) and give the CPU's output.
set -u
redfox=$1 dir=$2
tmp=${TMPDIR:-/tmp}/rf_gpurecdiff.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
RF_GPU_EMULATE=1
export RF_GPU_EMULATE
fail=0
"$redfox" run "$dir/prog.logic" --data "$dir" --device cpu --format tbl >"$tmp/cpu" 2>"$tmp/cpu.err" ||
    { echo "FAIL: cpu run"; cat "$tmp/cpu.err"; exit 1; }
for cap in 16K 20K 24K; do
    "$redfox" run "$dir/prog.logic" --data "$dir" --device gpu --format tbl --profile --gpu-memory $cap \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL: cap $cap exited $rc"; cat "$tmp/err"; fail=1; continue; fi
    if ! cmp -s "$tmp/cpu" "$tmp/out"; then echo "FAIL: cap $cap: output differs from the CPU's"; fail=1; fi
    if grep -q 'warning\|^profile (device cpu)' "$tmp/err"; then
        echo "FAIL: cap $cap: left the GPU"; grep warning "$tmp/err"; fail=1; continue
    fi
    echo "cap $cap: $(grep 'row ranges' "$tmp/err")"
done
exit $fail
