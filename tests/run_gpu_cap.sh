#!/bin/sh
# tests/run_gpu_cap.sh [--real] REDFOX MIN_SPILLED MIN_RANGED DATA PROG.logic... (or DATA "tpch" SCHEMA QUERY...;
# DATA "sf=X": TPC-H data of scale factor X made by `redfox tpch gen`; a missing DATA: exit 77):
# the GPU memory cap (--gpu-memory) in the emulator, or with --real on the
# machine's GPU (exit 77 where there is none: the ctest label gpu). Each program (one run
# of every PROG, or with "tpch" of SCHEMA with each QUERY) runs uncapped
# with --profile, which gives its peak device memory P; then
#   - under a generous cap (P plus a quarter) it must run on the GPU (no
#     fallback to the CPU, no kernel in row ranges or key partitions) with
#     the same output byte for byte;
#   - under a tight cap (9/10 of the peak under the generous cap) it must give the same output byte for
#     byte, on the GPU (values moved to host memory, counted by --profile).
#     The one way off the GPU: a part that cannot split (one row, the rows
#     of one key, one group) does not fit with its kernel's work, and the
#     warning says so ("which does not split"); any other fallback fails.
# At least MIN_SPILLED programs must have moved values under the tight cap
# and stayed on the GPU, and at least MIN_RANGED of them run a kernel (or a
# fused kernel) in row ranges or key partitions, so that the test fails when the cap, the moves or the
# partitions stop working. Programs that expect an error (// expect-error:) are left out.
set -u
real=0
if [ "$1" = --real ]; then real=1; shift; fi
redfox=$1 min=$2 minranged=$3 data=$4
shift 4
tpch_schema=
if [ "$1" = tpch ]; then tpch_schema=$2; shift 2; fi
tmp=${TMPDIR:-/tmp}/rf_gpucap.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
case $data in
sf=*)
    "$redfox" tpch gen --sf "${data#sf=}" --out "$tmp/data" >/dev/null 2>&1 || { echo "FAIL: tpch gen"; exit 1; }
    data=$tmp/data ;;
*) [ -d "$data" ] || { echo "SKIP: no data folder $data"; exit 77; } ;;
esac
. "$(dirname "$0")/lib_device.sh"
use_device $real "$redfox" "$tmp"
fail=0 spilled=0 ranged=0 keyed=0 fell=0 ran=0
for prog in "$@"; do
    grep -q '^// expect-error:' "$prog" && continue
    name=$(basename "$prog" .logic)
    args=$(sed -n 's|^// args: ||p' "$prog")
    d=$data
    [ -z "$tpch_schema" ] && [ -d "$(dirname "$prog")/data" ] && d=$(dirname "$prog")/data
    files="$prog"
    [ -n "$tpch_schema" ] && files="$tpch_schema $prog"
    # shellcheck disable=SC2086
    "$redfox" run $files --data "$d" --device gpu --format tbl --profile $args >"$tmp/ref" 2>"$tmp/ref.err"
    rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL $name: uncapped run exited $rc"; cat "$tmp/ref.err"; fail=1; continue; fi
    peak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/ref.err")
    if [ -z "$peak" ] || [ "$peak" -eq 0 ]; then echo "FAIL $name: no peak device memory in --profile"; fail=1; continue; fi
    ran=$((ran + 1))
    for which in generous tight; do
        # (tight: below the peak of the run under the generous cap, which
        # reserves less slack for the dictionary than an uncapped run)
        if [ $which = generous ]; then cap=$((peak + peak / 4)); else cap=$((peak * 9 / 10)); fi
        # shellcheck disable=SC2086
        "$redfox" run $files --data "$d" --device gpu --format tbl --profile --gpu-memory "$cap" $args \
            >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc -ne 0 ]; then echo "FAIL $name: $which cap $cap exited $rc"; cat "$tmp/err"; fail=1; continue; fi
        if ! cmp -s "$tmp/ref" "$tmp/out"; then echo "FAIL $name: $which cap $cap changed the output"; fail=1; continue; fi
        if grep -q '^profile (device cpu)' "$tmp/err"; then
            if [ $which = generous ]; then
                echo "FAIL $name: fell back to the CPU under the generous cap $cap (peak $peak)"; cat "$tmp/err"; fail=1
            elif ! grep -q 'out of GPU memory: .*which does not split.*cap (--gpu-memory).*running on the CPU instead' "$tmp/err"; then
                echo "FAIL $name: fell back to the CPU under the tight cap $cap, though no part that cannot split was too big"
                grep 'warning' "$tmp/err"; fail=1
            else
                fell=$((fell + 1))
                echo "$name: cap $cap of peak $peak: on the CPU: $(sed -n 's/.*warning: \(.*\): running on the CPU instead/\1/p' "$tmp/err")"
            fi
            continue
        fi
        moved=$(sed -n 's/.* \([0-9]*\) values moved to host memory.*/\1/p' "$tmp/err")
        if [ -z "$moved" ]; then echo "FAIL $name: no cap line in --profile"; cat "$tmp/err"; fail=1; continue; fi
        newpeak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/err")
        if [ "$newpeak" -gt "$cap" ]; then echo "FAIL $name: peak $newpeak above the cap $cap"; fail=1; fi
        ranges=$(sed -n 's/.*; \([0-9]*\) kernels run in \([0-9]*\) row ranges.*/\1 kernels in \2 row ranges/p' "$tmp/err")
        parts=$(sed -n 's/.*; \([0-9]*\) kernels run in \([0-9]*\) key partitions.*/\1 kernels in \2 key partitions/p' "$tmp/err")
        fused=$(sed -n 's/.*; \([0-9]*\) fused kernels run in \([0-9]*\) row ranges.*/\1 fused kernels in \2 row ranges/p' "$tmp/err")
        if [ $which = generous ]; then
            peak=$newpeak
            case "$ranges$parts$fused" in *[1-9]*) echo "FAIL $name: the generous cap $cap ran $ranges, $parts, $fused"; fail=1 ;; esac
        fi
        if [ $which = tight ]; then
            [ "$moved" -gt 0 ] && spilled=$((spilled + 1))
            case "$ranges/$fused" in 0\ */0\ *|0\ */|/0\ *|/) ;; *) ranged=$((ranged + 1)) ;; esac
            case $parts in 0\ *|'') ;; *) keyed=$((keyed + 1)) ;; esac
            echo "$name: cap $cap of peak $peak: on the GPU, $moved values moved to host memory, $ranges, $parts, $fused, peak $newpeak"
        fi
    done
done
echo "programs: $ran; under the tight cap: $spilled moved values and stayed on the GPU ($ranged ran kernels in" \
    "row ranges, $keyed in key partitions), $fell ran on the CPU (a part that cannot split too big)"
if [ "$spilled" -lt "$min" ]; then echo "FAIL: fewer than $min programs moved values under the tight cap"; fail=1; fi
if [ "$ranged" -lt "$minranged" ]; then echo "FAIL: fewer than $minranged programs ran kernels in row ranges"; fail=1; fi
exit $fail
