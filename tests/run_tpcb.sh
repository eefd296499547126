#!/bin/sh
# tests/run_tpcb.sh BUILD SRC MODE: the TPC-B-style benchmark at its smallest
# size (2 branches, 20 tellers, 2,000 accounts, 1,000 transactions): its
# driver, bench/txn/tpcb/run.sh, run as is without DuckDB, must find the
# state `redfox exec` leaves (branch and teller balances, every account, the
# checksum, no violated consistency condition) equal to the one the
# generator computes on its own. Then the integrity output must catch a
# transaction booked at a branch other than its teller's. MODE cpu runs
# exec on the CPU backend; emu on the GPU emulator.
set -u
build=$1
src=$2
mode=$3
tmp=${TMPDIR:-/tmp}/rf_tpcb_test.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
dev=cpu
if [ "$mode" = emu ]; then
    dev=gpu
    export RF_GPU_EMULATE=1
fi
sh "$src/bench/txn/tpcb/run.sh" "$build" 2 1000 "$dev" 1000 "$tmp/no-duckdb.so" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "run.sh"; }
cat "$tmp/log"
grep -q "maintenance .* txn/s" "$tmp/log" || fail "no throughput line"
grep -q "^redfox end state = the generator's" "$tmp/log" || fail "no agreement line"

# A transaction whose branch is not its teller's: teller 1 is of branch 1.
redfox=$build/tools/redfox
prog=$src/bench/txn/tpcb/tpcb.logic
"$build/bench/tpcb_gen" "$tmp/gen" 2 100 10 5 || fail "tpcb_gen"
"$redfox" import "$prog" --data "$tmp/gen/data" --out "$tmp/db" >/dev/null || fail "import"
printf '+txn(11, 1, 1, 2, 500).\n' >>"$tmp/gen/batch.txn"
"$redfox" exec "$tmp/db" "$prog" --batch "$tmp/gen/batch.txn" --device "$dev" --format tbl >"$tmp/out" 2>&1 ||
    { cat "$tmp/out"; fail "exec"; }
# branch 2's balance has 500 its tellers lack; branch 1's tellers 500 more
# than the branch; the grand totals still agree
sed -n '/^violation/,/^$/p' "$tmp/out" >"$tmp/viol"
cat "$tmp/viol"
grep -q '^violation (2 rows)$' "$tmp/viol" || fail "the integrity output missed the misbooked transaction"
b1=$(grep -c '^1|' "$tmp/viol")
b2=$(grep -c '^2|' "$tmp/viol")
[ "$b1" = 1 ] && [ "$b2" = 1 ] || fail "the violations name the wrong branches"
echo "ok"
