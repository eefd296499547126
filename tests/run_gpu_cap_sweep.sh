#!/bin/sh
# tests/run_gpu_cap_sweep.sh [--real] MAX_CPU REDFOX DATA PROG.logic...: every program
# on the emulated GPU (with --real: the machine's GPU, exit 77 where there is
# none) under caps of 1/2, 1/4, 1/8, 1/16 and 1/64 of its uncapped
# peak of device memory (--gpu-memory): each run must exit 0 with the
# uncapped run's output byte for byte, whatever the cap makes of it (values
# moved to host memory, kernels in ranges or key partitions, or the CPU for
# a part that does not split). run_gpu_cap.sh checks one tight cap closely;
# this one walks the caps below it, where a crash once hid (an insert that
# widened its set into host memory). A program that expects an error
# (// expect-error:) must fail alike under every cap: the uncapped run's
# exit status and error lines, and no move to the CPU. At most MAX_CPU of
# the runs may leave the GPU other than for a part that does not split (the
# gaps left: see the message), so that a new one fails the test.
set -u
real=0
if [ "$1" = --real ]; then real=1; shift; fi
maxcpu=$1 redfox=$2 data=$3
shift 3
tmp=${TMPDIR:-/tmp}/rf_capsweep.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_device.sh"
use_device $real "$redfox" "$tmp"
fail=0 runs=0 cpu=0
for prog in "$@"; do
    name=$(basename "$prog" .logic)
    args=$(sed -n 's|^// args: ||p' "$prog")
    want=0
    grep -q '^// expect-error:' "$prog" && want=1
    # shellcheck disable=SC2086
    "$redfox" run "$prog" --data "$data" --device gpu --format tbl --profile $args >"$tmp/ref" 2>"$tmp/ref.err"
    refrc=$?
    if [ $want = 0 ] && [ $refrc -ne 0 ]; then echo "FAIL $name: uncapped run"; cat "$tmp/ref.err"; fail=1; continue; fi
    if [ $want = 1 ] && [ $refrc -ne 1 ]; then echo "FAIL $name: uncapped run exit $refrc, expected 1"; fail=1; continue; fi
    grep ' error: ' "$tmp/ref.err" >"$tmp/ref.errors"
    peak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/ref.err")
    # (a failed run prints no profile: fixed caps from 4 MiB down)
    if [ -z "$peak" ] && [ $want = 1 ]; then caps="4194304 3145728 2097152 1048576 262144 65536 16384"
    elif [ -z "$peak" ]; then echo "FAIL $name: no peak in the profile"; fail=1; continue
    else caps="$((peak / 2)) $((peak / 4)) $((peak / 8)) $((peak / 16)) $((peak / 64))"; fi
    for cap in $caps; do
        [ "$cap" -gt 0 ] || continue
        # shellcheck disable=SC2086
        "$redfox" run "$prog" --data "$data" --device gpu --format tbl --gpu-memory "$cap" $args >"$tmp/out" 2>"$tmp/err"
        rc=$?
        runs=$((runs + 1))
        grep ' error: ' "$tmp/err" >"$tmp/errors"
        if [ $want = 1 ]; then
            if [ $rc -ne 1 ] || ! cmp -s "$tmp/ref.errors" "$tmp/errors" || grep -q 'running on the CPU' "$tmp/err"; then
                echo "FAIL $name: exit $rc under the cap $cap (peak $peak), not the uncapped run's error on the GPU"
                head -5 "$tmp/err"; fail=1
            fi
        elif [ $rc -ne 0 ]; then
            echo "FAIL $name: exit $rc under the cap $cap (peak $peak)"; head -5 "$tmp/err"; fail=1
        elif grep -q 'running on the CPU' "$tmp/err" && ! grep -q 'which does not split' "$tmp/err"; then
            cpu=$((cpu + 1))
            echo "note: $name under the cap $cap (peak $peak): $(grep 'running on the CPU' "$tmp/err" | head -n 1)"
            cmp -s "$tmp/ref" "$tmp/out" || { echo "FAIL $name: a different output under the cap $cap (peak $peak)"; fail=1; }
        elif ! cmp -s "$tmp/ref" "$tmp/out"; then
            echo "FAIL $name: a different output under the cap $cap (peak $peak)"; fail=1
        fi
    done
done
echo "capped runs: $runs; $cpu left the GPU other than for a part that does not split (at most $maxcpu)"
[ $cpu -le "$maxcpu" ] || { echo "FAIL: more runs left the GPU than the $maxcpu allowed"; fail=1; }
[ $runs -gt 0 ] || { echo "FAIL: no program ran"; fail=1; }
exit $fail
