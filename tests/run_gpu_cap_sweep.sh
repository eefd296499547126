#!/bin/sh
# tests/run_gpu_cap_sweep.sh [--real] REDFOX DATA PROG.logic...: every program
# on the emulated GPU (with --real: the machine's GPU, exit 77 where there is
# none) under caps of 1/2, 1/4, 1/8, 1/16 and 1/64 of its uncapped
# peak of device memory (--gpu-memory): each run must exit 0 with the
# uncapped run's output byte for byte, whatever the cap makes of it (values
# moved to host memory, kernels in ranges or key partitions, or the CPU for
# a part that does not split). run_gpu_cap.sh checks one tight cap closely;
# this one walks the caps below it, where a crash once hid (an insert that
# widened its set into host memory). Programs that expect an error
# (// expect-error:) are left out.
set -u
real=0
if [ "$1" = --real ]; then real=1; shift; fi
redfox=$1 data=$2
shift 2
tmp=${TMPDIR:-/tmp}/rf_capsweep.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
if [ $real = 1 ]; then
    unset RF_GPU_EMULATE
    printf 'a(1).\nlang:output[`a] = "a".\n' >"$tmp/probe.logic"
    "$redfox" run "$tmp/probe.logic" --device gpu >/dev/null 2>"$tmp/probe.err" ||
        { echo "SKIP: no usable GPU: $(cat "$tmp/probe.err")"; exit 77; }
else
    RF_GPU_EMULATE=1
    export RF_GPU_EMULATE
fi
fail=0 runs=0
for prog in "$@"; do
    grep -q '^// expect-error:' "$prog" && continue
    name=$(basename "$prog" .logic)
    args=$(sed -n 's|^// args: ||p' "$prog")
    # shellcheck disable=SC2086
    "$redfox" run "$prog" --data "$data" --device gpu --format tbl --profile $args >"$tmp/ref" 2>"$tmp/ref.err" ||
        { echo "FAIL $name: uncapped run"; cat "$tmp/ref.err"; fail=1; continue; }
    peak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/ref.err")
    [ -n "$peak" ] || { echo "FAIL $name: no peak in the profile"; fail=1; continue; }
    for div in 2 4 8 16 64; do
        cap=$((peak / div))
        [ "$cap" -gt 0 ] || continue
        # shellcheck disable=SC2086
        "$redfox" run "$prog" --data "$data" --device gpu --format tbl --gpu-memory "$cap" $args >"$tmp/out" 2>"$tmp/err"
        rc=$?
        runs=$((runs + 1))
        if [ $rc -ne 0 ]; then
            echo "FAIL $name: exit $rc under the cap $cap (peak $peak)"; head -5 "$tmp/err"; fail=1
        elif ! cmp -s "$tmp/ref" "$tmp/out"; then
            echo "FAIL $name: a different output under the cap $cap (peak $peak)"; fail=1
        fi
    done
done
echo "capped runs: $runs"
[ $runs -gt 0 ] || { echo "FAIL: no program ran"; fail=1; }
exit $fail
