#!/bin/sh
# tests/run_mpi_xchg.sh REDFOX TESTS_DIR BENCH_TC: the fixed and per-round
# costs of exchanges between ranks (runtime/dist, issue 22), read from
# --profile:
#   1. GPU ranks (the emulator): the first run of a process starts the
#      ranks' transport, a second run (--repeat 2) reuses it
#   2. CPU ranks: transitive closure of a chain of 40 nodes (39 rounds) moves
#      a bounded number of relations (the edges hashed and broadcast once, the
#      paths gathered for the count), none per round; with broadcasts off
#      (rank_broadcast_bytes=off) the moves grow with the rounds again; the
#      count is one process's either way
#   3. relations without columns (existence tests) still move their rows
# Skipped (77) where mpirun is missing or redfox was built without MPI.
set -u
redfox=$1
tests=$2
tc=$3
tmp=${TMPDIR:-/tmp}/rf_mpi_xchg.$$
. "$tests/mpi_env.sh"

# ---- 1. the transport starts once per process ------------------------------------
for n in 1 2; do
    RF_GPU_EMULATE=1 $mpi 2 "$redfox" run "$tests/e2e/tc.logic" --data "$tests/e2e/data" --device gpu --profile \
        --repeat $n --format tbl >"$tmp/rep$n.out" 2>"$tmp/rep$n.err" || { fail "--repeat $n on 2 GPU ranks"; cat "$tmp/rep$n.err"; }
done
cmp -s "$tmp/rep1.out" "$tmp/rep2.out" || fail "--repeat 2 gives other outputs than one run"
# --profile is the last run's: the first run started the transport, the second reused it
[ "$(grep -c '^rank [01] of 2: .* transport started for this run' "$tmp/rep1.err")" = 2 ] ||
    { fail "one run: each rank's profile should say the transport started"; cat "$tmp/rep1.err"; }
[ "$(grep -c '^rank [01] of 2: .* transport reused' "$tmp/rep2.err")" = 2 ] ||
    { fail "second run: each rank's profile should say the transport was reused"; cat "$tmp/rep2.err"; }
grep -q "^ranks exchange rows in the emulated GPUs' memory" "$tmp/rep2.err" ||
    fail "second run: the profile should still say how the ranks exchange rows"
grep -q '^rank 0 of 2: [0-9]* moves, [0-9]* exchanges (.* ms moving rows), [0-9]* collectives (.* ms)' "$tmp/rep2.err" ||
    fail "the profile lacks the moves, exchanges and collectives"

# ---- 2. recursion moves nothing per round ----------------------------------------------
mkdir -p "$tmp/chain"
awk 'BEGIN { for (i = 1; i < 40; i++) printf "%d|%d|\n", i, i + 1 }' >"$tmp/chain/edges.tbl"
"$redfox" run "$tc" --data "$tmp/chain" --device cpu --format tbl >"$tmp/tc.1" 2>&1 || fail "TC in one process"
grep -qx "780" "$tmp/tc.1" || { fail "TC of a chain of 40: 780 paths expected"; cat "$tmp/tc.1"; }
moves() { sed -n "s/^rank $2 of $3: \([0-9]*\) moves.*/\1/p" "$1"; }
for np in 2 3; do
    $mpi $np "$redfox" run "$tc" --data "$tmp/chain" --device cpu --format tbl --profile >"$tmp/tc.$np" 2>"$tmp/tc.err$np" ||
        { fail "TC on $np ranks"; cat "$tmp/tc.err$np"; }
    cmp -s "$tmp/tc.1" "$tmp/tc.$np" || fail "TC on $np ranks: another count"
    for r in $(seq 0 $((np - 1))); do
        m=$(moves "$tmp/tc.err$np" $r $np)
        [ -n "$m" ] && [ "$m" -le 3 ] || { fail "TC on $np ranks, rank $r: $m moves in 39 rounds (at most 3 expected)"; cat "$tmp/tc.err$np"; }
    done
    $mpi $np "$redfox" run "$tc" --data "$tmp/chain" --device cpu --format tbl --profile --set rank_broadcast_bytes=off \
        >"$tmp/tcb.$np" 2>"$tmp/tcb.err$np" || { fail "TC on $np ranks without broadcasts"; cat "$tmp/tcb.err$np"; }
    cmp -s "$tmp/tc.1" "$tmp/tcb.$np" || fail "TC on $np ranks without broadcasts: another count"
    m=$(moves "$tmp/tcb.err$np" 0 $np)
    [ -n "$m" ] && [ "$m" -ge 39 ] || fail "TC on $np ranks without broadcasts: $m moves (the delta moves every round)"
done
# ---- 3. an exchange is skipped only when no rank sends another a row --------------------
# (a relation without columns packs as its row count alone: exists_atoms's existence tests)
"$redfox" run "$tests/e2e/exists_atoms.logic" --data "$tests/e2e/data" --device cpu --format tbl >"$tmp/ex.1" 2>"$tmp/ex.err1" ||
    fail "exists_atoms in one process"
$mpi 2 "$redfox" run "$tests/e2e/exists_atoms.logic" --data "$tests/e2e/data" --device cpu --format tbl >"$tmp/ex.2" 2>"$tmp/ex.err2" ||
    fail "exists_atoms on 2 ranks"
cmp -s "$tmp/ex.1" "$tmp/ex.2" || { fail "exists_atoms on 2 ranks: other outputs"; diff "$tmp/ex.1" "$tmp/ex.2"; }
[ $fails -eq 0 ] && echo "ok: the transport starts once per process; TC's rounds move nothing"
[ $fails -eq 0 ]
