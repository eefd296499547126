#!/bin/sh
# tests/run_exec_tpcb.sh BUILD SRC MODE: the TPC-B-style bank
# (bench/txn/tpcb/tpcb.logic: totals over the history, balances from them
# with a negation for the keys without transactions, totals of balances)
# kept by successive execs maintained by diffs: insert-only batches, a
# batch deleting every transaction of some accounts and of a teller (their
# totals' groups vanish, their balances fall back to the opening ones), a
# mixed one, a misbooked transaction inserted (a violation appears) and
# deleted again. After each: the outputs equal a from-scratch `redfox run`
# and those of a copy kept with `--recompute`, byte for byte, and so do
# the stored derived tables; every exec says it maintained by diffs. MODE
# cpu or emu (the GPU emulator).
set -u
build=$1
src=$2
mode=$3
redfox=$build/tools/redfox
prog=$src/bench/txn/tpcb/tpcb.logic
tmp=${TMPDIR:-/tmp}/rf_exec_tpcb.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
dev=cpu
if [ "$mode" = emu ]; then
    dev=gpu
    export RF_GPU_EMULATE=1
fi
n=300
"$build/bench/tpcb_gen" "$tmp/gen" 2 200 $n 3 >/dev/null || fail "tpcb_gen"
"$redfox" import "$prog" --data "$tmp/gen/data" --out "$tmp/db" >/dev/null || fail "import"
"$redfox" exec "$tmp/db" "$prog" --device "$dev" --format tbl >/dev/null || fail "first exec"
cp -r "$tmp/db" "$tmp/re"

# renumbered K: the generator's batch with ids from K * n + 1, deltas times K + 1
renumbered() {
    sed 's/^+txn(\([0-9]*\), \([0-9]*\), \([0-9]*\), \([0-9]*\), \(-*[0-9]*\)).*/\1 \2 \3 \4 \5/' "$tmp/gen/batch.txn" |
        awk -v k="$1" -v n=$n '{ printf "+txn(%d, %d, %d, %d, %d).\n", $1 + k * n, $2, $3, $4, $5 * (k + 1) }'
}
dump() { # DB PRED: the stored derived table, ordered
    table=$(grep -ao "derived\.[0-9a-f]*\.$2" "$1/manifest.rfdb" | head -n 1)
    printf 'p(a, v) -> int(a), int(v).\nlang:input[`p] = "%s".\nlang:output[`p] = "p".\nlang:output:orderBy[`p] = "1".\n' \
        "$table" >"$tmp/dump.logic"
    "$redfox" run "$tmp/dump.logic" --data "$1" --device cpu --format tbl
}
step=0
apply() { # BATCH-FILE
    step=$((step + 1))
    "$redfox" exec "$tmp/db" "$prog" --batch "$1" --device "$dev" --format tbl --profile --incremental >"$tmp/got" 2>"$tmp/prof" ||
        { cat "$tmp/prof"; fail "exec of batch $step"; }
    grep -q 'maintained incrementally by diffs' "$tmp/prof" || { cat "$tmp/prof"; fail "batch $step not maintained by diffs"; }
    "$redfox" exec "$tmp/re" "$prog" --batch "$1" --device "$dev" --format tbl --recompute >"$tmp/re_got" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "--recompute of batch $step"; }
    "$redfox" run "$prog" --data "$tmp/db" --device cpu --format tbl >"$tmp/want" 2>"$tmp/err" || { cat "$tmp/err"; fail "run"; }
    cmp -s "$tmp/got" "$tmp/want" || { diff "$tmp/got" "$tmp/want" | head; fail "batch $step: exec differs from a run"; }
    cmp -s "$tmp/got" "$tmp/re_got" || { diff "$tmp/got" "$tmp/re_got" | head; fail "batch $step: exec differs from --recompute"; }
    for q in account_delta teller_delta account_balance teller_balance branch_balance branch_account_total; do
        dump "$tmp/db" $q >"$tmp/t1" && dump "$tmp/re" $q >"$tmp/t2" || fail "dump $q"
        cmp -s "$tmp/t1" "$tmp/t2" || { diff "$tmp/t1" "$tmp/t2" | head; fail "batch $step: stored $q differs from --recompute"; }
    done
}
for k in 0 1 2; do
    renumbered $k >"$tmp/b$k.txn"
    apply "$tmp/b$k.txn"
done
# every transaction of the accounts a % 7 = 0 and of teller 1, in all batches
cat "$tmp/b0.txn" "$tmp/b1.txn" "$tmp/b2.txn" |
    awk -F'[(,]' '$3 % 7 == 0 || $4 + 0 == 1 { sub(/^\+/, "-"); print }' >"$tmp/del.txn"
[ -s "$tmp/del.txn" ] || fail "no deletions generated"
apply "$tmp/del.txn"
# groups vanished: fewer accounts and tellers with transactions
for q in account_delta teller_delta; do
    sed -n "s/^exec:   $q: \([0-9]*\) -> \([0-9]*\) .*/\1 \2/p" "$tmp/prof" | awk '{ exit !($2 < $1) }' ||
        { grep "$q" "$tmp/prof"; fail "the deletions left no group of $q empty"; }
done
# mixed: some deleted, some new
head -n 20 "$tmp/b1.txn" | sed 's/^+/-/' >"$tmp/mix.txn"
renumbered 3 | head -n 50 >>"$tmp/mix.txn"
apply "$tmp/mix.txn"
# a transaction booked at another branch than its teller's, then deleted
t1=$(awk -F'[(,]' '{ print $4 + 0, $5 + 0; exit }' "$tmp/b0.txn")
set -- $t1
other=$(( $2 == 1 ? 2 : 1 ))
printf '+txn(9999, 1, %d, %d, 777).\n' "$1" "$other" >"$tmp/bad.txn"
apply "$tmp/bad.txn"
grep -q '^violation (2 rows)$' "$tmp/got" || { cat "$tmp/got"; fail "the misbooked transaction made no violation"; }
printf -- '-txn(9999, 1, %d, %d, 777).\n' "$1" "$other" >"$tmp/undo.txn"
apply "$tmp/undo.txn"
grep -q '^violation (0 rows)$' "$tmp/got" || { cat "$tmp/got"; fail "the violation stayed after its transaction was deleted"; }
# without --incremental: a batch of more than an eighth of the stored rows
# (here 300 transactions over 400 accounts, 20 tellers, 2 branches and the
# history) is recomputed, and says so; a small one keeps the diffs
renumbered 5 >"$tmp/big.txn"
"$redfox" exec "$tmp/db" "$prog" --batch "$tmp/big.txn" --device "$dev" --format tbl --profile >"$tmp/got" 2>"$tmp/prof" ||
    { cat "$tmp/prof"; fail "exec of a big batch"; }
grep -q 'more than an eighth' "$tmp/prof" || { cat "$tmp/prof"; fail "a big batch was not recomputed"; }
renumbered 6 | head -n 5 >"$tmp/small.txn"
"$redfox" exec "$tmp/db" "$prog" --batch "$tmp/small.txn" --device "$dev" --format tbl --profile >"$tmp/got" 2>"$tmp/prof" ||
    { cat "$tmp/prof"; fail "exec of a small batch"; }
grep -q 'maintained incrementally by diffs' "$tmp/prof" || { cat "$tmp/prof"; fail "a small batch was not maintained by diffs"; }
"$redfox" run "$prog" --data "$tmp/db" --device cpu --format tbl >"$tmp/want" 2>"$tmp/err" || { cat "$tmp/err"; fail "run"; }
cmp -s "$tmp/got" "$tmp/want" || { diff "$tmp/got" "$tmp/want" | head; fail "the small batch: exec differs from a run"; }
echo "ok: $step batches maintained by diffs, each equal to a run and to --recompute; a big batch recomputed, a small one by diffs"
