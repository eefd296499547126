#!/bin/sh
# tests/run_hoist.sh REDFOX TESTS MODE: loop-invariant commands run once,
# before their loop (queryplan/pass_hoist.c), and every backend agrees.
# Three recursions over a chain of N edges (plus one edge that gives node N/2
# two successors) read, besides their deltas, relations computed before the
# loop: a filter of g (nodes by out-degree), a join of g with an input w, an
# existence test of edge. The answers follow from the chain's arithmetic:
#   s (from 1 through nodes of out-degree 1): 1 .. N/2-1
#   t (from 1, 2 through nodes y with degree(y) + w(y) < 5; w is 4 at multiples
#     of K = N/3, else 0): 1 .. K-1
#   a, b (alternating steps from 1; b needs w): a the odd nodes 1 .. N+1 and
#     N+5, b the even nodes 2 .. N
# MODE cpu: N = 3000 on the CPU, with and without --no-hoist (the same bytes),
#   the filter of g run once (and N/2 times without the pass), its result
#   released after the loop (dump --harmony), through a .rfx
#   file (where --no-hoist, acting when compiling, gets a note), and a hoisted filter dividing by zero failing exactly where the
#   loop's own would: when the loop runs, not when it never starts;
# MODE emu: N = 300 on the GPU emulator, fused and --no-fuse, either way;
# MODE mpi: N = 300 on 2 CPU ranks and 2 emulated GPU ranks, either way
#   (skipped, 77, where mpirun is missing or redfox was built without MPI).
set -u
redfox=$1
tests=$2
mode=$3
tmp=${TMPDIR:-/tmp}/rf_hoist.$$
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
if [ "$mode" = mpi ]; then
    . "$tests/mpi_env.sh"
else
    mkdir -p "$tmp"
    trap 'rm -rf "$tmp"' EXIT
fi
n=3000
[ "$mode" = cpu ] || n=300
k=$((n / 3))
awk -v n=$n 'BEGIN { for (i = 1; i <= n; i++) printf "%d\t%d\n", i, i + 1; printf "%d\t%d\n", n / 2, n + 5 }' \
    >"$tmp/edge.facts"
awk -v n=$n -v k=$k 'BEGIN { for (i = 1; i <= n; i++) printf "%d\t%d\n", i, i % k ? 0 : 4 }' >"$tmp/w.facts"
cat >"$tmp/p.logic" <<'P'
edge(x, y) -> int(x), int(y).
lang:input[`edge] = "edge.facts".
lang:input:delimiter[`edge] = "\t".
w(x, v) -> int(x), int(v).
lang:input[`w] = "w.facts".
lang:input:delimiter[`w] = "\t".
g(x, c) <- agg<<c = count()>> edge(x, _).
s(1).
s(y) <- s(x), edge(x, y), g(y, c), c < 2.
t(x) <- edge(x, _), x < 3.
t(y) <- t(x), edge(x, y), g(y, c), w(y, v), c + v < 5.
a(x) <- edge(x, _), x = 1.
a(y) <- b(x), edge(x, y), edge(_, 2).
b(y) <- a(x), edge(x, y), w(y, v), v >= 0.
sn(c, z) <- agg<<c = count(), z = total(x)>> s(x).
tn(c, z) <- agg<<c = count(), z = total(x)>> t(x).
an(c, z) <- agg<<c = count(), z = total(x)>> a(x).
bn(c, z) <- agg<<c = count(), z = total(x)>> b(x).
lang:output[`sn] = "sn". lang:output[`tn] = "tn". lang:output[`an] = "an". lang:output[`bn] = "bn".
P
h=$((n / 2))
# count and total of each output: 1..h-1, 1..k-1, the odd nodes to n+1 and n+5, the even ones to n
exp_sn="$((h - 1)),$(((h - 1) * h / 2))"
exp_tn="$((k - 1)),$(((k - 1) * k / 2))"
exp_an="$((h + 2)),$(((h + 1) * (h + 1) + n + 5))"
exp_bn="$h,$((h * (h + 1)))"

# check DIR WHAT: the csv outputs in DIR are the expected ones
check() {
    for o in sn tn an bn; do
        got=$(tail -n +2 "$1/$o.csv" 2>/dev/null)
        eval "exp=\$exp_$o"
        [ "$got" = "$exp" ] || fail "$2: $o is '$got', expected $exp"
    done
}
# run NAME ARGS...: the program's outputs as csv in $tmp/NAME (stderr in $tmp/NAME.err)
run() {
    name=$1
    shift
    "$@" --data "$tmp" --format csv --out "$tmp/$name" >"$tmp/$name.log" 2>"$tmp/$name.err" ||
        { fail "$name: exit $?"; cat "$tmp/$name.err"; }
    check "$tmp/$name" "$name"
}
same() { diff -r "$tmp/$1" "$tmp/$2" >/dev/null || fail "$2 differs from $1"; }

# the plan: the filter of g in a block of its own before the loop; with --no-hoist in the loop
"$redfox" dump --plan "$tmp/p.logic" >"$tmp/plan" || fail "dump --plan"
"$redfox" dump --plan "$tmp/p.logic" --no-hoist >"$tmp/plan.off" || fail "dump --plan --no-hoist"
grep -B1 'map g filter' "$tmp/plan" | grep -q 'loop-invariant commands' || fail "the filter of g is not hoisted"
grep -q 'loop-invariant' "$tmp/plan.off" && fail "--no-hoist hoisted"

case $mode in
cpu)
    run cpu "$redfox" run "$tmp/p.logic" --device cpu --threads 2 --profile
    run cpu.off "$redfox" run "$tmp/p.logic" --device cpu --threads 2 --profile --no-hoist
    same cpu cpu.off
    # the filter of g: run once, or once per round of s without the pass
    kid=$("$redfox" dump --harmony "$tmp/p.logic" | sed -n 's/^ *\(k[0-9]*\): [^ ]* = map(g) filter.*/\1/p')
    calls=$(awk -v k="$kid" '$1 == k { print $4 }' "$tmp/cpu.err")
    [ -n "$kid" ] && [ "$calls" = 1 ] || fail "the filter of g ($kid) ran '$calls' times, expected once"
    kid=$("$redfox" dump --harmony --no-hoist "$tmp/p.logic" | sed -n 's/^ *\(k[0-9]*\): [^ ]* = map(g) filter.*/\1/p')
    calls=$(awk -v k="$kid" '$1 == k { print $4 }' "$tmp/cpu.off.err")
    [ -n "$kid" ] && [ "${calls:-0}" -ge $((h - 1)) ] || fail "--no-hoist: the filter of g ($kid) ran '$calls' times"
    # its result lives across the loop's rounds and is released where the
    # loop exits: in the block after it, not in the loop (Harmony's liveness)
    "$redfox" dump --harmony "$tmp/p.logic" >"$tmp/hir" || fail "dump --harmony"
    var=$(sed -n 's/^ *k[0-9]*: \([^ ]*\) = map(g) filter.*/\1/p' "$tmp/hir")
    where=$(awk -v v="$var" '/^block/ { b = $0 } / release / { for (i = 1; i <= NF; i++) if ($i == "release") r = i
        for (i = r + 1; i <= NF; i++) if ($i == v) print b }' "$tmp/hir")
    case $where in *"after stratum"*) ;; *) fail "the filter's result ($var) is released in '$where'" ;; esac
    # a hoisted filter that fails (division by zero) fails exactly when the loop
    # runs, as in the loop: not at all when its first round never comes
    mkdir -p "$tmp/err"
    printf '1\t2\n2\t3\n' >"$tmp/err/edge.facts"
    for start in 5 0; do
        cat >"$tmp/err/e.logic" <<P
edge(x, y) -> int(x), int(y).
lang:input[\`edge] = "edge.facts".
lang:input:delimiter[\`edge] = "\t".
g(x, c) <- agg<<c = count()>> edge(x, _).
s(x) <- edge(x, _), x > $start.
s(y) <- s(x), edge(x, y), g(y, c), 100 / (c - 1) > 0.
m(c) <- agg<<c = count()>> s(_).
lang:output[\`m] = "m".
P
        for off in "" --no-hoist; do
            "$redfox" run "$tmp/err/e.logic" --data "$tmp/err" --device cpu $off >"$tmp/err/out" 2>"$tmp/err/msg"
            rc=$?
            if [ $start = 5 ]; then
                [ $rc = 0 ] && grep -q '(0 rows)' "$tmp/err/out" || fail "start $start $off: exit $rc"
            else
                [ $rc = 1 ] && grep -q 'e.logic:6:1: error: division by zero' "$tmp/err/msg" ||
                    fail "start $start $off: exit $rc, $(cat "$tmp/err/msg")"
            fi
        done
    done
    # through a .rfx file
    "$redfox" compile "$tmp/p.logic" -o "$tmp/p.rfx" >/dev/null 2>&1 || fail "compile"
    run rfx "$redfox" run "$tmp/p.rfx" --device cpu --threads 2
    same cpu rfx
    # the plan's switches act when compiling: a .rfx keeps its plan, and says so
    run rfx.off "$redfox" run "$tmp/p.rfx" --device cpu --threads 2 --no-hoist
    same cpu rfx.off
    grep -q 'note: --no-hoist acts when compiling LogiQL: .*p.rfx runs the plan it was compiled with' "$tmp/rfx.off.err" ||
        fail "run p.rfx --no-hoist: no note that the .rfx keeps its plan: $(cat "$tmp/rfx.off.err")"
    grep -q 'acts when compiling' "$tmp/cpu.off.err" && fail "run p.logic --no-hoist: a note meant for .rfx files"
    ;;
emu)
    RF_GPU_EMULATE=1
    export RF_GPU_EMULATE
    run gpu "$redfox" run "$tmp/p.logic" --device gpu
    run gpu.off "$redfox" run "$tmp/p.logic" --device gpu --no-hoist
    run gpu.nofuse "$redfox" run "$tmp/p.logic" --device gpu --no-fuse
    run gpu.nofuse.off "$redfox" run "$tmp/p.logic" --device gpu --no-fuse --no-hoist
    same gpu gpu.off
    same gpu gpu.nofuse
    same gpu gpu.nofuse.off
    ;;
mpi)
    run cpu1 "$redfox" run "$tmp/p.logic" --device cpu
    run cpu2 $mpi 2 "$redfox" run "$tmp/p.logic" --device cpu
    run cpu2.off $mpi 2 "$redfox" run "$tmp/p.logic" --device cpu --no-hoist
    run gpu2 env RF_GPU_EMULATE=1 $mpi 2 "$redfox" run "$tmp/p.logic" --device gpu
    same cpu1 cpu2
    same cpu1 cpu2.off
    same cpu1 gpu2
    ;;
*) echo "usage: run_hoist.sh REDFOX TESTS cpu|emu|mpi"; exit 2 ;;
esac
[ $fails -eq 0 ] && echo "hoist ($mode): ok"
exit $fails
