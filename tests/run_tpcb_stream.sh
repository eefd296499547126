#!/bin/sh
# tests/run_tpcb_stream.sh BUILD SRC MODE: bench/txn/tpcb/stream.sh (K
# batches in one `redfox exec --each` process) at its smallest size (2
# branches, 2,000 accounts, 3 batches of 300 transactions), run as is without
# DuckDB: the outputs after the last batch and every account must equal the
# generator's end state, and the script must print a row of phases for each
# batch (its parse ahead counted from the second on) and the first-batch and
# steady-state lines (the integrator runs it on
# the GPU host, where a broken parse of --profile would cost a session). MODE
# cpu runs exec on the CPU backend; emu on the GPU emulator.
set -u
build=$1
src=$2
mode=$3
tmp=${TMPDIR:-/tmp}/rf_tpcb_stream_test.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
dev=cpu
if [ "$mode" = emu ]; then
    dev=gpu
    export RF_GPU_EMULATE=1
fi
sh "$src/bench/txn/tpcb/stream.sh" "$build" 2 300 3 "$dev" 1000 "$tmp/no-duckdb.so" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "stream.sh"; }
cat "$tmp/log"
for k in 1 2 3; do
    grep -Eq "^$k \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \((by diffs|recomputed)\) \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ ms \| [1-9][0-9]* \| [1-9][0-9]*$" "$tmp/log" ||
        fail "no phases of batch $k"
done
# batches 2 and 3 ran while the commit before them ended on a thread (its time there counted),
# and were parsed ahead while the one before them ran (that time counted)
for k in 2 3; do
    awk -F' [|] ' -v k=$k '$1 == k && $10 + 0 > 0 { ok = 1 } END { exit !ok }' "$tmp/log" ||
        fail "batch $k: no end of the commit before it counted"
    awk -F' [|] ' -v k=$k '$1 == k && $3 + 0 > 0 { ok = 1 } END { exit !ok }' "$tmp/log" ||
        fail "batch $k: no parse ahead counted"
done
grep -Eq "^first batch: [0-9.]+ ms whole" "$tmp/log" || fail "no first-batch line"
grep -Eq "^steady state \(batches 2\.\.3, mean\): [0-9.]+ ms a batch: [1-9][0-9]* txn/s with the commit, [1-9][0-9]* txn/s without it, [1-9][0-9]* txn/s executed" "$tmp/log" ||
    fail "no steady-state line"
grep -q "^redfox end state = the generator's" "$tmp/log" || fail "no agreement line"
echo ok
