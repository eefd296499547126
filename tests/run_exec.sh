#!/bin/sh
# tests/run_exec.sh REDFOX EXEC_DIR MODE PROG ROUNDS: `redfox exec` of
# EXEC_DIR/PROG.logic on a database of random data, ROUNDS random batches
# (inserts only on even rounds, inserts and deletes on odd ones, a
# functional predicate's values replaced by a delete then an insert), each
# compared with a from-scratch `redfox run` over the database's updated base
# data. MODE cpu runs exec on the CPU; emu on the GPU emulator. Programs
# whose rules allow it must have been maintained incrementally (by delta
# rules, or by diffs where they aggregate or negate; --profile says which,
# and for each aggregate of aggs.logic how).
set -u
redfox=$1
dir=$2
mode=$3
prog=$4
rounds=$5
tmp=${TMPDIR:-/tmp}/rf_exec.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
p="$dir/$prog.logic"
if [ "$mode" = emu ]; then
    dev="--device gpu"
    export RF_GPU_EMULATE=1
else
    dev="--device cpu"
fi
seed=7
# ---- the base predicates of each program, and random rows of them -------------
case $prog in
tc | neg | nullary) preds="edge" ;;
join | agg | aggs) preds="buys price" ;;
fd) preds="balance" ;;
*) fail "unknown program $prog" ;;
esac
rows() { # pred seed: random initial rows
    awk -v pred="$1" -v seed="$2" 'BEGIN { srand(seed)
        if (pred == "edge") for (i = 0; i < 30; i++) printf "%d,%d\n", int(rand() * 15), int(rand() * 15)
        if (pred == "buys") for (i = 0; i < 40; i++) printf "c%d,%d\n", int(rand() * 10), int(rand() * 20)
        if (pred == "price") for (i = 0; i < 20; i++) if (rand() < 0.8) printf "%d,%d\n", i, int(rand() * 100)
        if (pred == "balance") for (i = 0; i < 20; i++) printf "%d,%d\n", i, int(rand() * 200) }'
}
for q in $preds; do rows "$q" $seed >"$tmp/data/$q.csv"; done
"$redfox" import "$p" --data "$tmp/data" --out "$tmp/db" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }

# dump PRED: its rows in the database now, as csv without the header
dump() {
    case $1 in
    edge) decl='edge(a, b) -> int(a), int(b).' ;;
    buys) decl='buys(a, b) -> string(a), int(b).' ;;
    price) decl='price(a, b) -> int(a), int(b).' ;;
    balance) decl='balance(a, b) -> int(a), int(b).' ;;
    esac
    printf '%s\nlang:input[`%s] = "%s.csv".\nlang:input:delimiter[`%s] = ",".\nlang:output[`%s] = "%s".\n' \
        "$decl" "$1" "$1" "$1" "$1" "$1" >"$tmp/dump.logic"
    "$redfox" run "$tmp/dump.logic" --data "$tmp/db" --device cpu --format csv 2>/dev/null | tail -n +2
}

# batch ROUND: a random transaction file
batch() {
    r=$1
    : >"$tmp/b$r.txn"
    for q in $preds; do
        dump "$q" | awk -F, -v pred="$q" -v seed="$seed$r" -v del=$((r % 2)) 'BEGIN { srand(seed) }
            { line[NR] = $0; key[$1] = $2 }
            END {
                n = NR
                if (del) for (k = 0; k < 3 && n; k++) { # deletes of rows that are there
                    i = int(rand() * n) + 1
                    if (i in used) continue
                    used[i] = 1
                    split(line[i], f, ",")
                    if (pred == "buys") printf "-buys(\"%s\", %s).\n", f[1], f[2]
                    else if (pred == "balance") printf "-balance[%s] = %s.\n+balance[%s] = %d.\n", f[1], f[2], f[1], int(rand() * 200)
                    else printf "-%s(%s, %s).\n", pred, f[1], f[2]
                }
                for (k = 0; k < 4; k++) {
                    if (pred == "edge") printf "+edge(%d, %d).\n", int(rand() * 18), int(rand() * 18)
                    if (pred == "buys") printf "+buys(\"c%d\", %d).\n", int(rand() * 12), int(rand() * 24)
                    if (pred == "price") { p = 20 + int(rand() * 100); if (!(p in key)) printf "+price(%d, %d).\n", p, int(rand() * 100); key[p] = 1 }
                    if (pred == "balance") { a = 20 + int(rand() * 100); if (!(a in key)) printf "+balance[%d] = %d.\n", a, int(rand() * 200); key[a] = 1 }
                }
            }' >>"$tmp/b$r.txn"
    done
}

# ---- the first exec materializes; then the batches ------------------------------
check() { # what
    "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/want" 2>"$tmp/err" || { cat "$tmp/err"; fail "run after $1"; }
    cmp -s "$tmp/got" "$tmp/want" || { diff "$tmp/got" "$tmp/want" | head -20; fail "$prog: exec differs from a run after $1"; }
}
"$redfox" exec "$tmp/db" "$p" $dev --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec"; }
check "the first exec"
incremental=0
r=0
while [ $r -lt "$rounds" ]; do
    batch $r
    "$redfox" exec "$tmp/db" "$p" --batch "$tmp/b$r.txn" $dev --format csv --profile --incremental >"$tmp/got" 2>"$tmp/err" ||
        { cat "$tmp/err" "$tmp/b$r.txn"; fail "exec of batch $r"; }
    grep -q 'maintained incrementally' "$tmp/err" && incremental=$((incremental + 1))
    cat "$tmp/err" >>"$tmp/profiles"
    check "batch $r"
    r=$((r + 1))
done
case $prog in
tc | join | fd | agg | aggs) [ $incremental -eq "$rounds" ] || fail "$prog: only $incremental batches were maintained incrementally" ;;
neg) [ $incremental -eq 0 ] || fail "$prog: negation over recursion claimed incremental" ;;
nullary) [ $incremental -eq 0 ] || fail "$prog: a predicate of no columns claimed incremental" ;;
esac
# how each aggregate was maintained, as --profile says it
if [ "$prog" = aggs ]; then
    for how in 'spent: .*total maintained: the old value plus' 'buyers: .*count maintained: the old value plus' \
        'cheapest: .*min or max recomputed over the touched groups' 'mean: .*avg recomputed over the touched groups' \
        'unpriced: .*aggregate recomputed over the touched groups (negation in its body)'; do
        grep -q "^exec:   $how" "$tmp/profiles" || { grep "^exec:   ${how%%:*}: " "$tmp/profiles" | head -n 2; fail "aggs: no '$how'"; }
    done
    ! grep '^exec:   mean: .*negation' "$tmp/profiles" || fail "aggs: an avg said recomputed for a negation"
fi
echo ok
