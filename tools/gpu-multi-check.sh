#!/bin/sh
# tools/gpu-multi-check.sh: GPU ranks (runtime/dist, issue 22) on a host of
# several GPUs, in one go, on a bare machine with the source tree and a
# carried build folder:
#   1. every tests/e2e and tests/logiql program: `redfox run --gpus N`
#      against one process on one GPU, outputs byte for byte
#   2. the 22 TPC-H queries at SF 1 (generated when missing): the same, with
#      each query's run time (rank 0's walk, exchanges included) both ways:
#      each query runs --repeat R times in one process (one mpirun), and the
#      time is the last run's, the steady state (the ranks' NCCL communicator
#      and connections, the GPU's kernels started by the first run); the
#      first run's time on N GPUs is listed beside it
#   3. transitive closure of a random graph (bench/tc_graph, bench/tc.logic)
#      on 1 GPU and on N, the same count, the best of R runs in one process each
#   4. a table; every --gpus run must say "GPU to GPU with NCCL" in its
#      profile (else the ranks moved rows through host memory: NCCL missing)
#
# usage: tools/gpu-multi-check.sh [--build DIR] [--work DIR] [--gpus N] [--sf SF]
#                                 [--tc "NODES EDGES"] [--steps e2e,tpch,tc]
#                                 [--jobs J] [--limit SECONDS] [--repeat R]
#   --build DIR   the build folder (default: build, else build-gpu, in the tree)
#   --work DIR    data, outputs and caches (default /tmp/rf-gpu-multi-check)
#   --gpus N      ranks of the multi-GPU runs (default 2)
#   --sf SF       TPC-H scale factor of step 2 (default 1)
#   --tc "N E"    nodes and edges of the TC graph (default "30000 60000": about
#                 570 M paths; every node of a uniform random graph with twice as
#                 many edges as nodes reaches most others, so paths grow as nodes^2)
#   --jobs J      e2e programs checked at once, sharing the GPUs (default 4)
#   --limit S     seconds a run may take before it is killed and failed (default 120)
#   --repeat R    runs of a TPC-H query or of TC in one process (default 3)
# RF_CHECK_EMULATE=1 runs it on the GPU emulator (to test the script; tiny sizes).
# Exit 0 when everything that ran passed; keeps going after a failure.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=""
work=/tmp/rf-gpu-multi-check
gpus=2
sf=1
tc="30000 60000"
steps="e2e,tpch,tc"
jobs=4
limit=120
repeat=3
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --gpus) gpus=$2; shift 2 ;;
    --sf) sf=$2; shift 2 ;;
    --tc) tc=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "gpu-multi-check: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$build" ]; then
    for b in "$root/build" "$root/build-gpu"; do [ -x "$b/tools/redfox" ] && build=$b && break; done
fi
build=$(cd "${build:-.}" && pwd)
redfox=$build/tools/redfox
[ -x "$redfox" ] || { echo "gpu-multi-check: no redfox in $build/tools" >&2; exit 2; }
command -v mpirun >/dev/null 2>&1 || { echo "gpu-multi-check: no mpirun (install openmpi-bin)" >&2; exit 2; }
mkdir -p "$work"
export XDG_CACHE_HOME="$work/cache"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "${RF_CHECK_EMULATE:-0}" = 1 ]; then export RF_GPU_EMULATE=1; else unset RF_GPU_EMULATE; fi
summary="$work/summary.txt"
: >"$summary"
fails=0
has() { case ",$steps," in *",$1,"*) return 0 ;; esac; return 1; }
now() { date +%s; }
# every run under a limit: a hang is a failure, not a lost session
T() { timeout -s KILL "$limit" "$@"; }
note() { printf '%-34s %-8s %6ss  %s\n' "$1" "$2" "$3" "$4" >>"$summary"; [ "$2" = FAIL ] && fails=$((fails + 1)); }
# the run time rank 0 reports (--profile: "profile (device gpu): load X s, run Y s"), in ms
run_ms() { sed -n 's/^profile (device [a-z]*): load [0-9.]* s, run \([0-9.]*\) s$/\1/p' "$1" | tail -n 1 | awk '{ printf "%.3f", $1 * 1000 }'; }
# the first of --repeat runs' time ("run 1 of R (device gpu): load X s, run Y s"), in ms
first_ms() { sed -n 's/^run 1 of [0-9]* (device [a-z]*): load [0-9.]* s, run \([0-9.]*\) s$/\1/p' "$1" | awk '{ printf "%.3f", $1 * 1000 }'; }
# the best of the --repeat runs' times, in ms
best_ms() { sed -n 's/^run [0-9]* of [0-9]* (device [a-z]*): load [0-9.]* s, run \([0-9.]*\) s$/\1/p' "$1" |
    awk 'NR == 1 || $1 < b { b = $1 } END { if (NR) printf "%.3f", b * 1000 }'; }
# rank 0's moves, exchanges and transport seconds (--profile), for the table
moves() { sed -n 's/^rank 0 of [0-9]*: \([0-9]*\) moves, \([0-9]*\) exchanges (\([0-9.]*\) ms moving rows).*/\1 moves, \2 exch, \3 ms/p' "$1" | tail -n 1; }
# how the ranks exchanged rows (--profile)
exchange() { sed -n 's/^ranks exchange rows //p' "$1" | tail -n 1; }

echo "== gpu-multi-check: $(date -u '+%Y-%m-%d %H:%M UTC'), build $build, --gpus $gpus"
(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader) || echo "(no nvidia-smi)"
"$redfox" --version

# Float totals add in another order across ranks (runtime/dist/README.md):
# these programs must agree to 12 significant digits, the rest byte for byte.
near_float="join_skewed"
same() {
    cmp -s "$2" "$3" && return 0
    case " $near_float " in *" $1 "*) ;; *) return 1 ;; esac
    awk -F'|' 'NR == FNR { a[FNR] = $0; n = FNR; next }
        { if (!(FNR in a)) exit 1; split(a[FNR], x, "|"); if (NF != length(x)) exit 1
          for (i = 1; i <= NF; i++) if (x[i] != $i) {
              if (x[i] !~ /^-?[0-9.e+-]+$/ || $i !~ /^-?[0-9.e+-]+$/) exit 1
              d = x[i] - $i; if (d < 0) d = -d; m = x[i] < 0 ? -x[i] : x[i]
              if (d > m * 1e-12) exit 1 } m2 = FNR }
        END { if (m2 != n) exit 1 }' "$2" "$3"
}

# ---- 1. end-to-end programs ------------------------------------------------------
if has e2e; then
    echo "== e2e programs: --gpus $gpus against one GPU"
    t0=$(now)
    n=0
    bad=0
    nonccl=0
    mkdir -p "$work/e2e"
    # one program, both ways; its verdict into $o.verdict
    check_prog() {
        prog=$1
        name=$(basename "$prog" .logic)
        args=$(sed -n 's|^// args: ||p' "$prog")
        o="$work/e2e/$name"
        # shellcheck disable=SC2086
        T "$redfox" run "$prog" --data "$(dirname "$prog")/data" $args --device gpu --format tbl >"$o.1" 2>"$o.err1"
        rc1=$?
        # shellcheck disable=SC2086
        T "$redfox" run --gpus "$gpus" "$prog" --data "$(dirname "$prog")/data" $args --format tbl --profile \
            --set rank_timeout_s=60 >"$o.n" 2>"$o.errn"
        rc=$?
        v="ok"
        if [ $rc1 -eq 137 ] || [ $rc -eq 137 ]; then
            v="FAIL $name: killed after ${limit} s (one GPU: exit $rc1, $gpus GPUs: exit $rc)"
        elif [ $rc1 -ne 0 ]; then
            # a failing program fails alike: the first line of its error
            first=$(grep -m1 "error" "$o.err1")
            if [ $rc -eq 0 ] || ! grep -qF -- "$first" "$o.errn"; then
                v="FAIL $name: exit $rc (one GPU: $rc1, '$first')"
            fi
        elif [ $rc -ne 0 ] || ! same "$name" "$o.1" "$o.n"; then
            v="FAIL $name: exit $rc or outputs differ: $(tail -n 1 "$o.errn")"
        else
            case "$(exchange "$o.errn")" in "GPU to GPU with NCCL"*) ;; *) v="ok-host" ;; esac
        fi
        echo "$v" >"$o.verdict"
        case "$v" in FAIL*) echo "  $v" ;; esac
    }
    running=0
    for prog in "$root"/tests/e2e/*.logic "$root"/tests/logiql/*.logic; do
        n=$((n + 1))
        check_prog "$prog" &
        running=$((running + 1))
        if [ $running -ge "$jobs" ]; then wait; running=0; echo "  $n programs checked ($(( $(now) - t0 )) s)"; fi
    done
    wait
    for v in "$work"/e2e/*.verdict; do
        case "$(cat "$v")" in FAIL*) bad=$((bad + 1)) ;; ok-host) nonccl=$((nonccl + 1)) ;; esac
    done
    st=ok
    [ $bad -ne 0 ] && st=FAIL
    note "e2e --gpus $gpus = 1 GPU" "$st" "$(( $(now) - t0 ))" "$((n - bad))/$n identical; $nonccl without NCCL"
fi

# ---- 2. TPC-H ---------------------------------------------------------------------
if has tpch; then
    d="$work/sf$sf"
    if [ ! -f "$d/.done" ]; then
        echo "== tpch gen --sf $sf"
        rm -rf "$d"
        T "$redfox" tpch gen --sf "$sf" --format db --out "$d" >"$work/gen.log" 2>&1 && touch "$d/.done"
    fi
    if [ -f "$d/.done" ]; then
        echo "== TPC-H SF $sf: --gpus $gpus against one GPU"
        t0=$(now)
        same_n=0
        diffq=""
        t1sum=0
        tnsum=0
        : >"$work/tpch.times"
        for q in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22; do
            o="$work/tpch-q$q"
            qs="$root/tpch/queries/schema.logic $root/tpch/queries/q$q.logic"
            # shellcheck disable=SC2086
            T "$redfox" run $qs --data "$d" --device gpu --format csv --profile --repeat "$repeat" >"$o.1" 2>"$o.err1"
            rc1=$?
            # shellcheck disable=SC2086
            T "$redfox" run --gpus "$gpus" $qs --data "$d" --format csv --profile --repeat "$repeat" >"$o.n" 2>"$o.errn"
            rc=$?
            if [ $rc1 -eq 0 ] && [ $rc -eq 0 ] && cmp -s "$o.1" "$o.n"; then same_n=$((same_n + 1)); else diffq="$diffq q$q"; fi
            a=$(run_ms "$o.err1")
            b=$(run_ms "$o.errn")
            f=$(first_ms "$o.errn")
            echo "q$q ${a:-?} ${b:-?} (first ${f:-?}) $(moves "$o.errn"); $(exchange "$o.errn" | cut -c1-40)" >>"$work/tpch.times"
            t1sum=$(awk -v s="$t1sum" -v x="${a:-0}" 'BEGIN { printf "%.3f", s + x }')
            tnsum=$(awk -v s="$tnsum" -v x="${b:-0}" 'BEGIN { printf "%.3f", s + x }')
        done
        st=ok
        [ $same_n -ne 22 ] && st=FAIL
        note "TPC-H SF $sf --gpus $gpus = 1 GPU" "$st" "$(( $(now) - t0 ))" "$same_n/22 identical${diffq:+; differ:$diffq}"
        note "TPC-H SF $sf run ms, sum of 22" ok 0 "1 GPU $t1sum, $gpus GPUs $tnsum"
    else
        note "tpch gen --sf $sf" FAIL 0 "$(tail -n 1 "$work/gen.log")"
    fi
fi

# ---- 3. transitive closure ---------------------------------------------------------------
if has tc; then
    set -- $tc
    nodes=$1
    edges=$2
    g="$work/tc-$nodes-$edges"
    if [ ! -f "$g/edges.tbl" ]; then
        mkdir -p "$g"
        cc -O2 -o "$work/tc_graph" "$root/bench/tc_graph.c" && "$work/tc_graph" "$nodes" "$edges" 1 >"$g/edges.tbl"
    fi
    echo "== TC of a random graph, $nodes nodes, $edges edges: 1 GPU and $gpus"
    t0=$(now)
    T "$redfox" run "$root/bench/tc.logic" --data "$g" --device gpu --format csv --profile --repeat "$repeat" \
        >"$work/tc.1" 2>"$work/tc.err1"
    rc1=$?
    T "$redfox" run --gpus "$gpus" "$root/bench/tc.logic" --data "$g" --format csv --profile --repeat "$repeat" \
        >"$work/tc.n" 2>"$work/tc.errn"
    rc=$?
    best1=$(best_ms "$work/tc.err1")
    bestn=$(best_ms "$work/tc.errn")
    [ "$repeat" -gt 1 ] || { best1=$(run_ms "$work/tc.err1"); bestn=$(run_ms "$work/tc.errn"); }
    grep -E "^rank |^ranks |^slowest|^k[0-9]" "$work/tc.errn" | tail -n 20
    count=$(tail -n 1 "$work/tc.1")
    st=ok
    { [ $rc1 -ne 0 ] || [ $rc -ne 0 ] || ! cmp -s "$work/tc.1" "$work/tc.n"; } && st=FAIL
    speed=$(awk -v a="$best1" -v b="$bestn" 'BEGIN { if (b + 0 > 0) printf "%.2fx", a / b; else print "?" }')
    note "TC $nodes/$edges: $count paths" "$st" "$(( $(now) - t0 ))" "run ms: 1 GPU $best1, $gpus GPUs $bestn ($speed)"
    note "TC exchange" "$(exchange "$work/tc.errn" | grep -q "^GPU to GPU with NCCL" && echo ok || echo FAIL)" 0 \
        "$(exchange "$work/tc.errn")"
fi

# ---- 4. the table ------------------------------------------------------------------------
if [ -f "$work/tpch.times" ]; then
    echo
    echo "TPC-H SF $sf run ms (rank 0's walk, exchanges included; the last of $repeat runs in one process):"
    echo "query, 1 GPU, $gpus GPUs, ($gpus GPUs' first run), rank 0's moves, exchanges, ms moving rows; exchange"
    cat "$work/tpch.times"
fi
echo
echo "== summary ($summary)"
printf '%-34s %-8s %7s  %s\n' "step" "result" "time" "details"
cat "$summary"
[ $fails -eq 0 ]
