#!/bin/sh
# tests/run_exec_crash.sh REDFOX EXEC_DIR ROUNDS: `redfox exec` killed with
# SIGKILL at a random moment of a transaction, ROUNDS times: the database is
# then exactly the old state or the new one (its base data gives one of the
# two outputs, and its stored derived predicates agree with its base data),
# never a mix, never missing.
set -u
redfox=$1
dir=$2
rounds=$3
tmp=${TMPDIR:-/tmp}/rf_exec_crash.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
p="$dir/tc.logic"
awk 'BEGIN { srand(11); for (i = 0; i < 500; i++) printf "%d,%d\n", int(rand() * 400), int(rand() * 400) }' >"$tmp/data/edge.csv"
awk 'BEGIN { srand(12); for (i = 0; i < 40; i++) printf "+edge(%d, %d).\n", int(rand() * 400), int(rand() * 400);
             for (i = 0; i < 5; i++) printf "+edge(%d, %d).\n", 400 + i, i }' >"$tmp/b.txn"
"$redfox" import "$p" --data "$tmp/data" --out "$tmp/db0" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
"$redfox" exec "$tmp/db0" "$p" --device cpu --format csv >"$tmp/old" 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec"; }
cp -r "$tmp/db0" "$tmp/dbn"
"$redfox" exec "$tmp/dbn" "$p" --device cpu --format csv --batch "$tmp/b.txn" >"$tmp/new" 2>"$tmp/err" || { cat "$tmp/err"; fail "exec"; }
cmp -s "$tmp/old" "$tmp/new" && fail "the batch changes nothing"
olds=0 news=0 r=0
while [ $r -lt "$rounds" ]; do
    rm -rf "$tmp/db" "$tmp"/db.tmp.*
    cp -r "$tmp/db0" "$tmp/db"
    "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/b.txn" >/dev/null 2>&1 &
    pid=$!
    sleep "$(awk -v s=$r 'BEGIN { srand(s); printf "%.3f", rand() * 0.25 }')"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    [ -f "$tmp/db/manifest.rfdb" ] || fail "round $r: no database left at its name"
    "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "round $r: run"; }
    if cmp -s "$tmp/got" "$tmp/old"; then olds=$((olds + 1))
    elif cmp -s "$tmp/got" "$tmp/new"; then news=$((news + 1))
    else fail "round $r: neither the old nor the new state"; fi
    # the stored derived predicates agree with the base data
    "$redfox" exec "$tmp/db" "$p" --device cpu --format csv >"$tmp/got2" 2>"$tmp/err" || { cat "$tmp/err"; fail "round $r: exec"; }
    cmp -s "$tmp/got" "$tmp/got2" || fail "round $r: stored derived predicates disagree with the base data"
    r=$((r + 1))
done
echo "ok: $olds old, $news new"
