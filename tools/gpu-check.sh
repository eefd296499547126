#!/bin/sh
# tools/gpu-check.sh: everything the GPU machine checks, in one go, on a bare
# machine that has only the source tree and a carried build folder:
#   1. ctest -L gpu (the end-to-end programs on the GPU, compared with their
#      .expected files and with the CPU backend; the 22 TPC-H queries at SF
#      0.01, GPU against CPU, on data generated where ../shared is missing)
#   2. TPC-H data: redfox tpch gen at SF 0.1, 1 and 10
#   3. the 22 queries on the GPU and on the CPU at SF 1 and 10, outputs
#      compared byte for byte (the GPU with Kernel Weaver fusion and with
#      --no-fuse), times taken from `redfox tpch run`
#   4. compute-sanitizer memcheck over the 22 queries at SF 0.1
#   5. a short table of all that, last
#
# usage: tools/gpu-check.sh [--build DIR] [--work DIR] [--steps LIST] [--sf "1 10"]
#   --build DIR   the build folder (default: build, else build-gpu, in the tree)
#   --work DIR    where data, outputs and caches go (default /tmp/rf-gpu-check)
#   --steps LIST  some of ctest,gen,tpch,sanitizer (default: all), e.g. to
#                 split the work over several commands that share --work
#   --sf LIST     the scale factors of step 3 (default "1 10")
#   --jobs N      ctest's parallel tests in step 1 (default 4)
#   --tests RE    step 1 runs only the gpu tests whose names match RE (ctest -R)
# Exit 0 when every step that ran passed. Keeps going after failures, so that
# one run shows everything.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=""
work=/tmp/rf-gpu-check
steps="ctest,gen,tpch,sanitizer"
sfs="1 10"
jobs=4
tests=""
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --sf) sfs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$build" ]; then
    for b in "$root/build" "$root/build-gpu"; do [ -x "$b/tools/redfox" ] && build=$b && break; done
fi
build=$(cd "${build:-.}" && pwd)
redfox=$build/tools/redfox
if [ ! -x "$redfox" ]; then echo "gpu-check: no redfox in $build/tools" >&2; exit 2; fi
mkdir -p "$work"
# caches of NVRTC's PTX and the driver's JIT live with the rest of the run
export XDG_CACHE_HOME="$work/cache" # ($XDG_CACHE_HOME/redfox)
# (RF_CHECK_EMULATE=1 runs the script against the emulator, to test the script)
if [ "${RF_CHECK_EMULATE:-0}" = 1 ]; then export RF_GPU_EMULATE=1; else unset RF_GPU_EMULATE; fi
summary="$work/summary.txt"
: >"$summary"
fails=0
has() { case ",$steps," in *",$1,"*) return 0 ;; esac; return 1; }
now() { date +%s; }
note() { printf '%-34s %-8s %6ss  %s\n' "$1" "$2" "$3" "$4" >>"$summary"; [ "$2" = FAIL ] && fails=$((fails + 1)); }

echo "== gpu-check: $(date -u '+%Y-%m-%d %H:%M UTC'), build $build, work $work"
(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader) || echo "(no nvidia-smi)"
"$redfox" --version

# ---- 1. ctest -L gpu -------------------------------------------------------
if has ctest; then
    t0=$(now)
    # the tests name the paths the build was configured with: make them exist here
    src_cfg=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
    bld_cfg=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
    if [ -n "$src_cfg" ] && [ ! -e "$src_cfg" ]; then mkdir -p "$(dirname "$src_cfg")" 2>/dev/null && ln -s "$root" "$src_cfg" 2>/dev/null; fi
    if [ -n "$bld_cfg" ] && [ ! -e "$bld_cfg" ]; then mkdir -p "$(dirname "$bld_cfg")" 2>/dev/null && ln -s "$build" "$bld_cfg" 2>/dev/null; fi
    tdir=$build
    [ -n "$bld_cfg" ] && [ -e "$bld_cfg" ] && tdir=$bld_cfg
    # the GPU TPC-H tests read SF 0.01 data from the shared folder, which does
    # not travel to the GPU machine: generate it there (they compare the GPU
    # with the CPU on the same data, so generated data serves as well)
    shared_cfg=$(sed -n 's/^RF_SHARED_DIR:PATH=//p' "$build/CMakeCache.txt")
    ref=$shared_cfg/tpch/reference/sf0.01
    if [ -n "$shared_cfg" ] && [ ! -f "$ref/lineitem.tbl" ]; then
        if mkdir -p "$ref" 2>/dev/null && "$redfox" tpch gen --sf 0.01 --out "$ref" >"$work/gen-ref.log" 2>&1; then
            echo "== generated the SF 0.01 data the tests expect in $ref"
        else
            echo "gpu-check: could not generate $ref: the GPU TPC-H tests will skip" >&2
        fi
    fi
    echo "== ctest -L gpu"
    (cd "$tdir" && ctest -L '^gpu$' ${tests:+-R "$tests"} --output-on-failure -j"$jobs" --timeout 300) >"$work/ctest.log" 2>&1
    rc=$?
    tail -n 15 "$work/ctest.log"
    res=$(grep -E "tests passed|tests failed" "$work/ctest.log" | tail -n 1)
    skipped=$(grep -c "\*\*\*Skipped" "$work/ctest.log")
    if [ $rc -eq 0 ]; then st=ok; else st=FAIL; fi
    note "ctest -L gpu" "$st" "$(( $(now) - t0 ))" "${res:-no result} ($skipped skipped)"
fi

# ---- 2. data -----------------------------------------------------------------
gen() {
    sf=$1
    d="$work/sf$sf"
    if [ -f "$d/.done" ]; then return 0; fi
    t0=$(now)
    rm -rf "$d"
    if "$redfox" tpch gen --sf "$sf" --out "$d" >"$work/gen-sf$sf.log" 2>&1; then
        touch "$d/.done"
        note "tpch gen --sf $sf" ok "$(( $(now) - t0 ))" "$(du -sh "$d" | cut -f1)"
    else
        note "tpch gen --sf $sf" FAIL "$(( $(now) - t0 ))" "$(tail -n 1 "$work/gen-sf$sf.log")"
        return 1
    fi
}
if has gen; then
    echo "== data"
    for sf in 0.1 $sfs; do gen "$sf"; done
fi

# ---- 3. the 22 queries, GPU against CPU -----------------------------------------
# per-query run times (ms) from tpch run's table: "qNN rows compile load run device"
qtimes() { awk '/^q[0-9][0-9] /{print $1, $5, $6}' "$1"; }
if has tpch; then
    for sf in $sfs; do
        d="$work/sf$sf"
        if [ ! -f "$d/.done" ]; then gen "$sf" || continue; fi
        echo "== TPC-H SF $sf: CPU"
        rep=3
        [ "$sf" = 10 ] && rep=1
        t0=$(now)
        rm -rf "$work/out-cpu-sf$sf" "$work/out-gpu-sf$sf"
        mkdir -p "$work/out-cpu-sf$sf" "$work/out-gpu-sf$sf"
        "$redfox" tpch run --data "$d" --device cpu --repeat $rep --out "$work/out-cpu-sf$sf" >"$work/cpu-sf$sf.log" 2>&1
        crc=$?
        tail -n 24 "$work/cpu-sf$sf.log"
        echo "== TPC-H SF $sf: GPU"
        t1=$(now)
        "$redfox" tpch run --data "$d" --device gpu --repeat $rep --out "$work/out-gpu-sf$sf" >"$work/gpu-sf$sf.log" 2>&1
        grc=$?
        tail -n 24 "$work/gpu-sf$sf.log"
        t2=$(now)
        same=0
        diffq=""
        for n in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22; do
            c="$work/out-cpu-sf$sf/q$n.csv"
            g="$work/out-gpu-sf$sf/q$n.csv"
            if [ -f "$c" ] && [ -f "$g" ] && cmp -s "$c" "$g"; then same=$((same + 1)); else diffq="$diffq q$n"; fi
        done
        qtimes "$work/cpu-sf$sf.log" >"$work/cpu-sf$sf.times"
        qtimes "$work/gpu-sf$sf.log" >"$work/gpu-sf$sf.times"
        ctot=$(awk '/^total/{print $4}' "$work/cpu-sf$sf.log")
        gtot=$(awk '/^total/{print $4}' "$work/gpu-sf$sf.log")
        st=ok
        [ $crc -ne 0 ] || [ $grc -ne 0 ] || [ $same -ne 22 ] && st=FAIL
        note "TPC-H SF $sf CPU" "$([ $crc -eq 0 ] && echo ok || echo FAIL)" "$(( t1 - t0 ))" "run total ${ctot:-?} ms (median of $rep)"
        note "TPC-H SF $sf GPU" "$([ $grc -eq 0 ] && echo ok || echo FAIL)" "$(( t2 - t1 ))" "run total ${gtot:-?} ms (median of $rep)"
        note "TPC-H SF $sf GPU = CPU bytes" "$st" 0 "$same/22 identical${diffq:+; differ:$diffq}"
        # the same without Kernel Weaver fusion: identical bytes too
        echo "== TPC-H SF $sf: GPU --no-fuse"
        t3=$(now)
        rm -rf "$work/out-gpunf-sf$sf"
        mkdir -p "$work/out-gpunf-sf$sf"
        "$redfox" tpch run --data "$d" --device gpu --no-fuse --repeat $rep --out "$work/out-gpunf-sf$sf" \
            >"$work/gpunf-sf$sf.log" 2>&1
        nrc=$?
        tail -n 24 "$work/gpunf-sf$sf.log"
        same=0
        diffq=""
        for n in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22; do
            c="$work/out-cpu-sf$sf/q$n.csv"
            g="$work/out-gpunf-sf$sf/q$n.csv"
            if [ -f "$c" ] && [ -f "$g" ] && cmp -s "$c" "$g"; then same=$((same + 1)); else diffq="$diffq q$n"; fi
        done
        ntot=$(awk '/^total/{print $4}' "$work/gpunf-sf$sf.log")
        st=ok
        [ $nrc -ne 0 ] || [ $same -ne 22 ] && st=FAIL
        note "TPC-H SF $sf GPU --no-fuse = CPU" "$st" "$(( $(now) - t3 ))" "$same/22 identical${diffq:+; differ:$diffq}; run total ${ntot:-?} ms"
    done
fi

# ---- 4. compute-sanitizer ---------------------------------------------------------
if has sanitizer; then
    cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    d="$work/sf0.1"
    [ -f "$d/.done" ] || gen 0.1
    if [ -x "$cs" ] && [ -f "$d/.done" ]; then
        echo "== compute-sanitizer memcheck, SF 0.1"
        t0=$(now)
        mkdir -p "$work/out-san"
        # one device allocation per buffer: inside the pool's one big
        # allocation memcheck could not see a buffer's bounds
        "$cs" --tool memcheck --error-exitcode 99 --print-limit 20 \
            "$redfox" tpch run --data "$d" --device gpu --set gpu_pool_exact=on --out "$work/out-san" \
            >"$work/sanitizer.log" 2>&1
        rc=$?
        tail -n 30 "$work/sanitizer.log"
        errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$work/sanitizer.log" | tail -n 1)
        st=ok
        [ $rc -ne 0 ] && st=FAIL
        note "memcheck 22 queries SF 0.1" "$st" "$(( $(now) - t0 ))" "exit $rc, ${errs:-?} errors"
    else
        note "memcheck 22 queries SF 0.1" FAIL 0 "no compute-sanitizer or no data"
    fi
    # racecheck (shared-memory hazards) over the 22 queries at SF 0.01 and
    # memcheck + racecheck over the end-to-end programs
    d1="$work/sf0.01"
    [ -f "$d1/.done" ] || gen 0.01
    if [ -x "$cs" ] && [ -f "$d1/.done" ]; then
        echo "== compute-sanitizer racecheck, SF 0.01"
        t0=$(now)
        mkdir -p "$work/out-race"
        "$cs" --tool racecheck --error-exitcode 99 --print-limit 20 \
            "$redfox" tpch run --data "$d1" --device gpu --set gpu_pool_exact=on --out "$work/out-race" \
            >"$work/racecheck.log" 2>&1
        rc=$?
        tail -n 5 "$work/racecheck.log"
        st=ok
        [ $rc -ne 0 ] && st=FAIL
        note "racecheck 22 queries SF 0.01" "$st" "$(( $(now) - t0 ))" "exit $rc"
        echo "== compute-sanitizer memcheck and racecheck, end-to-end programs"
        t0=$(now)
        bad=0
        n=0
        for prog in "$root"/tests/e2e/*.logic "$root"/tests/logiql/*.logic; do
            grep -q '^// expect-error' "$prog" && continue
            for tool in memcheck racecheck; do
                n=$((n + 1))
                "$cs" --tool $tool --error-exitcode 99 \
                    "$redfox" run "$prog" --device gpu --set gpu_pool_exact=on --data "$(dirname "$prog")/data" \
                    >"$work/san-e2e.log" 2>&1 ||
                    { bad=$((bad + 1)); echo "  $tool FAILED on $prog"; tail -n 5 "$work/san-e2e.log"; }
            done
        done
        st=ok
        [ $bad -ne 0 ] && st=FAIL
        note "sanitizers on e2e programs" "$st" "$(( $(now) - t0 ))" "$((n - bad))/$n clean"
    fi
fi

# ---- 5. the table ---------------------------------------------------------------------
for sf in $sfs; do
    if [ -f "$work/cpu-sf$sf.times" ] && [ -f "$work/gpu-sf$sf.times" ]; then
        echo
        echo "SF $sf run ms (CPU | GPU, device column from redfox):"
        join "$work/cpu-sf$sf.times" "$work/gpu-sf$sf.times" |
            awk '{ printf "  %s  cpu %10s  gpu %10s  %s\n", $1, $2, $4, $5 }'
    fi
done
echo
echo "== summary ($work/summary.txt)"
printf '%-34s %-8s %7s  %s\n' "step" "result" "time" "details"
cat "$summary"
[ $fails -eq 0 ]
