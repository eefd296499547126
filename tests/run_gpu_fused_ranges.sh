#!/bin/sh
# tests/run_gpu_fused_ranges.sh REDFOX TESTS_DIR TPCH_DATA: fused kernels of
# totals in row ranges of their input under the GPU memory cap
# (--gpu-memory), in the emulator (runtime/gpu/rt_gpu_fusedpart.c).
# TPCH_DATA: a folder of dbgen .tbl files, or "sf=X" (made by `redfox tpch
# gen`); a missing folder: exit 77. The cases: TPC-H q01 and q06, and
# tests/fused_ranges/: grouped totals (120 and 21 groups), groups that
# overflow a table only together, a stage error, a total over a join's probe
# (ranges of its left rows), a total over a cross product's index (ranges of
# the index); e2e fused_groups (55 groups).
#
# Each case runs uncapped with --profile (its peak device memory P; its
# output, the CPU's), then under caps of P divided by each of its divisors.
# Under every cap: the same output byte for byte and the same messages; no
# kernel on the CPU (no fallback, no host kernel), the peak under the cap;
# and, for a case marked "ranges", "1 fused kernels run in R row ranges"
# with R >= 2 and as many fused kernel runs as uncapped: the fused kernel ran
# in ranges, its map's output never made. A case marked "apart" (the ranges'
# groups together overflow a table) must give the same output with its
# stages one by one; "error" the same error as uncapped.
set -u
redfox=$1 tests=$2 data=$3
q="$tests/../tpch/queries"
tmp=${TMPDIR:-/tmp}/rf_fused_ranges.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
case $data in
sf=*)
    "$redfox" tpch gen --sf "${data#sf=}" --out "$tmp/data" >/dev/null 2>&1 || { echo "FAIL: tpch gen"; exit 1; }
    data=$tmp/data ;;
*) [ -f "$data/lineitem.tbl" ] || { echo "SKIP: no TPC-H data in $data"; exit 77; } ;;
esac
RF_GPU_EMULATE=1
export RF_GPU_EMULATE
fail=0 checked=0
# (the messages of a run: its stderr less the profile, and less a sanitizer's notes)
msgs() { grep -v -e '^profile ' -e '^kernel kind' -e '^k[0-9]' -e '^phases:' -e '^start:' -e '^gpu' -e '^process:' -e '^==[0-9]*==' "$1"; }

# one case: NAME KIND DATA DIVISORS FILES...
check() {
    name=$1 kind=$2 d=$3 divs=$4
    shift 4
    "$redfox" run "$@" --data "$d" --device cpu --format tbl >"$tmp/cpu" 2>/dev/null
    "$redfox" run "$@" --data "$d" --device gpu --format tbl --profile >"$tmp/ref" 2>"$tmp/ref.err"
    rc0=$?
    if [ $kind != error ] && { [ $rc0 -ne 0 ] || ! cmp -s "$tmp/cpu" "$tmp/ref"; }; then
        echo "FAIL $name: uncapped GPU run (exit $rc0) differs from the CPU's"; cat "$tmp/ref.err"; fail=1; return
    fi
    peak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/ref.err")
    fused=$(sed -n 's/^gpu: \([0-9]*\) fused kernel runs.*/\1/p' "$tmp/ref.err")
    if [ $kind = error ]; then
        peak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/peak.err")
        fused=1
    fi
    if [ -z "$peak" ]; then echo "FAIL $name: no peak in --profile"; cat "$tmp/ref.err"; fail=1; return; fi
    if [ $kind = ranges ] && [ "${fused:-0}" -lt 1 ]; then
        echo "FAIL $name: no fused kernel run uncapped"; cat "$tmp/ref.err"; fail=1; return
    fi
    msgs "$tmp/ref.err" >"$tmp/ref.msg"
    for div in $divs; do
        cap=$((peak / div))
        "$redfox" run "$@" --data "$d" --device gpu --format tbl --profile --gpu-memory "$cap" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        checked=$((checked + 1))
        msgs "$tmp/err" >"$tmp/out.msg"
        if [ $rc -ne $rc0 ]; then echo "FAIL $name: cap $cap exited $rc, uncapped $rc0"; cat "$tmp/err"; fail=1; continue; fi
        if ! cmp -s "$tmp/ref" "$tmp/out"; then echo "FAIL $name: cap $cap changed the output"; fail=1; continue; fi
        if ! cmp -s "$tmp/ref.msg" "$tmp/out.msg"; then
            echo "FAIL $name: cap $cap changed the messages"; diff "$tmp/ref.msg" "$tmp/out.msg"; fail=1; continue
        fi
        [ $kind = error ] && { echo "$name: cap $cap of peak $peak: the same error"; continue; }
        if grep -q '^profile (device cpu)' "$tmp/err" || grep -Eq '^k[0-9]+ +[a-z_]+ +(cpu|gpu\+cpu) ' "$tmp/err"; then
            echo "FAIL $name: cap $cap: a kernel ran on the CPU"; cat "$tmp/err"; fail=1; continue
        fi
        newpeak=$(sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p' "$tmp/err")
        if [ "$newpeak" -gt "$cap" ]; then echo "FAIL $name: cap $cap: peak $newpeak above it"; fail=1; fi
        ranged=$(sed -n 's/.*; \([0-9]*\) fused kernels run in \([0-9]*\) row ranges.*/\1 \2/p' "$tmp/err")
        runs=$(sed -n 's/^gpu: \([0-9]*\) fused kernel runs.*/\1/p' "$tmp/err")
        case $kind in
        ranges)
            nk=${ranged%% *} nr=${ranged#* }
            if [ "${nk:-0}" != 1 ] || [ "${nr:-0}" -lt 2 ] || [ "$runs" != "$fused" ]; then
                echo "FAIL $name: cap $cap: not one fused kernel in row ranges (${ranged:-no cap line}; $runs fused runs, uncapped $fused)"
                cat "$tmp/err"; fail=1; continue
            fi
            # (a probe's build is made once for all of its ranges, not once a range)
            builds=$(sed -n 's/^gpu join builds: \([0-9]*\) made.*/\1/p' "$tmp/err")
            if [ "${builds:-0}" -gt 3 ]; then echo "FAIL $name: cap $cap: $builds join builds for $ranged"; fail=1; fi ;;
        apart)
            case $ranged in 0\ *) ;; *) echo "FAIL $name: cap $cap: fused ranges ($ranged) though the groups overflow"; fail=1 ;; esac ;;
        esac
        echo "$name: cap $cap of peak $peak: ${ranged:-?} (fused kernels, ranges), peak $newpeak"
    done
}

s="$q/schema.logic"
check q01 ranges "$data" "4 32 128" "$s" "$q/q01.logic"
check q06 ranges "$data" "4 32 128" "$s" "$q/q06.logic"
check groups ranges "$data" "4 32" "$s" "$tests/fused_ranges/groups.logic"
check over_groups apart "$data" "4 32" "$s" "$tests/fused_ranges/over_groups.logic"
# (an error leaves no profile: the caps come from q06's peak, whose input is that of this program)
"$redfox" run "$s" "$q/q06.logic" --data "$data" --device gpu --format tbl --profile >/dev/null 2>"$tmp/peak.err"
check stage_error error "$data" "4 32" "$s" "$tests/fused_ranges/stage_error.logic"
check probe ranges "$data" "4 64" "$s" "$tests/fused_ranges/probe.logic"
check fused_groups ranges "$tests/e2e/data" "2 4" "$tests/e2e/fused_groups.logic"
check cross ranges "$tests/e2e/data" "2 3" "$tests/fused_ranges/cross.logic"
echo "capped runs checked: $checked"
[ $checked -ge 18 ] || { echo "FAIL: only $checked capped runs"; fail=1; }
exit $fail
