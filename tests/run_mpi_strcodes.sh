#!/bin/sh
# tests/run_mpi_strcodes.sh REDFOX TESTS_DIR: string codes every rank shares
# (runtime/dist/dist_codes.c, issue 22), read from --profile, outputs byte
# for byte one process's:
#   1. from a database (the strings of its dictionaries and the program's
#      constants): relations with strings move as codes, on CPU ranks and on
#      emulated GPU ranks device to device (nothing through host memory)
#      and so do a second run's in one process (--repeat 2)
#   2. a text input (each rank interns its own share's strings): bytes
#   3. a database, but a rule that builds strings (w + "!") and groups by
#      them: those move as bytes, the database's strings still as codes
#   4. each rank's moves report their round trips; the moves before one
#      kernel go together (one vote, one exchange)
#   5. a plain (not dictionary-coded) column's strings, which may be a rank's
#      own (rank_plain_bytes=off), whose relations hold shared codes only
#      (q22's country codes): checked, they move device to device on
#      emulated GPU ranks
#   6. plain columns no bigger than rank_plain_bytes (the default): every
#      rank interns them whole first, so their strings move as codes (q21's
#      supplier names, q02's supplier columns), in a second run of the
#      process too; with rank_plain_bytes=off, or below the columns' size,
#      as bytes; the same output every way
# Skipped (77) where mpirun is missing or redfox was built without MPI.
set -u
redfox=$1
tests=$2
tmp=${TMPDIR:-/tmp}/rf_mpi_strcodes.$$
. "$tests/mpi_env.sh"
q=$tests/../tpch/queries
"$redfox" tpch gen --sf 0.01 --format tbl --out "$tmp/tbl" >/dev/null 2>&1 || { echo "FAIL: tpch gen (tbl)"; exit 1; }
# a database of 1,024-row blocks (a table of one block is replicated, moving
# nothing: at SF 0.01 every table would be), every string column dictionary-coded
"$redfox" import "$q/schema.logic" --data "$tmp/tbl" --out "$tmp/db" --strings dict --block-rows 1024 >/dev/null 2>&1 ||
    { echo "FAIL: redfox import (db)"; exit 1; }

# coded N FILE / bytes N FILE: the profile's moves of relations with strings
# that sent codes only, that sent bytes
coded() { sed -n "s/^ranks' string codes: .*; \([0-9]*\) moves of relations with strings sent codes only.*/\1/p" "$1"; }
bytes() { sed -n "s/^ranks' string codes: .* sent codes only, \([0-9]*\) sent bytes.*/\1/p" "$1"; }
shared() { sed -n "s/^ranks' string codes: \([0-9]*\) shared by every rank.*/\1/p" "$1"; }

# run NAME DEV NP ARGS...: one process and NP ranks, the same bytes
run() {
    name=$1 dev=$2 np=$3
    shift 3
    "$redfox" run "$@" --device $dev --format tbl >"$tmp/$name.1" 2>"$tmp/$name.err1" || { fail "$name: one process"; cat "$tmp/$name.err1"; }
    $mpi $np "$redfox" run "$@" --device $dev --format tbl --profile --set rank_timeout_s=120 >"$tmp/$name.n" 2>"$tmp/$name.err" ||
        { fail "$name: $np ranks"; cat "$tmp/$name.err"; }
    cmp -s "$tmp/$name.1" "$tmp/$name.n" || { fail "$name: $np ranks' output differs from one process"; diff "$tmp/$name.1" "$tmp/$name.n" | head -5; }
}

# ---- 1. a database: codes -----------------------------------------------------------
for query in q05 q16 q10; do
    for np in 2 3; do
        run "db_$query.$np" cpu $np "$q/schema.logic" "$q/$query.logic" --data "$tmp/db"
        f=$tmp/db_$query.$np.err
        [ "$(shared "$f")" -gt 0 ] 2>/dev/null || { fail "$query on $np CPU ranks: no codes shared"; grep "^ranks'" "$f"; }
        [ "$(coded "$f")" -gt 0 ] 2>/dev/null || { fail "$query on $np CPU ranks: no relation with strings moved as codes"; grep "^ranks'" "$f"; }
    done
done
# q05 and q16 read only the database's dictionaries: no move sends bytes
for query in q05 q16; do
    [ "$(bytes "$tmp/db_$query.2.err")" = 0 ] || { fail "$query: a move sent strings as bytes"; grep "^ranks'" "$tmp/db_$query.2.err"; }
    RF_GPU_EMULATE=1 run "gpu_$query" gpu 2 "$q/schema.logic" "$q/$query.logic" --data "$tmp/db"
    f=$tmp/gpu_$query.err
    [ "$(coded "$f")" -gt 0 ] 2>/dev/null || { fail "$query on 2 GPU ranks: nothing moved as codes"; grep "^ranks'" "$f"; }
    # every move device to device: no byte through host memory on either rank
    [ "$(grep -c '^rank [01] of 2: run .* 0 bytes sent, 0 received through host memory; ' "$f")" = 2 ] &&
        grep -q '^rank [01] of 2: run .* through host memory; [1-9][0-9]* sent' "$f" ||
        { fail "$query on 2 GPU ranks: rows with strings went through host memory"; grep "^rank" "$f"; }
done

# a second run of the process (--repeat 2; --profile is the last run's) shares the
# codes its input cache's dictionary gave the first, though it holds the first's own strings
run "rep_q10" cpu 2 "$q/schema.logic" "$q/q10.logic" --data "$tmp/db" --repeat 2
[ "$(coded "$tmp/rep_q10.err")" = "$(coded "$tmp/db_q10.2.err")" ] ||
    { fail "q10, a second run: other moves as codes than one run"; grep "^ranks'" "$tmp/rep_q10.err" "$tmp/db_q10.2.err"; }

# ---- 2. a text input: each rank's own strings, as bytes -------------------------------
run "tbl_q05" cpu 2 "$q/schema.logic" "$q/q05.logic" --data "$tmp/tbl"
[ "$(bytes "$tmp/tbl_q05.err")" -gt 0 ] 2>/dev/null || { fail "q05 from text: strings should move as bytes"; grep "^ranks'" "$tmp/tbl_q05.err"; }
cmp -s "$tmp/tbl_q05.1" "$tmp/db_q05.2.1" || fail "q05 from text and from the database differ"

# ---- 3. a rule that builds strings ----------------------------------------------------
mkdir -p "$tmp/w"
cat >"$tmp/w/prog.logic" <<'P'
item(k, w) -> int(k), string(w).
lang:input[`item] = "item.tbl".
tagged(t, k) <- item(k, w), t = w + "!".
per_tag(t, n) <- agg<<n = count()>> tagged(t, _).
per_word(w, n) <- agg<<n = count()>> item(_, w).
pairs(k, w, v) <- item(k, w), item(v, w), k < v, v < k + 40.
lang:output[`per_tag] = "per_tag".
lang:output[`per_word] = "per_word".
lang:output[`pairs] = "pairs".
P
awk 'BEGIN { for (i = 1; i <= 5000; i++) printf "%d|w%d|\n", i, (i * 7) % 61 }' >"$tmp/w/item.tbl"
"$redfox" import "$tmp/w/prog.logic" --data "$tmp/w" --out "$tmp/wdb" --strings dict --block-rows 512 >/dev/null 2>"$tmp/imp.err" ||
    { fail "import"; cat "$tmp/imp.err"; }
for np in 2 3; do
    run "build.$np" cpu $np "$tmp/w/prog.logic" --data "$tmp/wdb"
    f=$tmp/build.$np.err
    [ "$(bytes "$f")" -gt 0 ] 2>/dev/null || { fail "built strings on $np ranks: they should move as bytes"; grep "^ranks'" "$f"; }
    [ "$(coded "$f")" -gt 0 ] 2>/dev/null || { fail "built strings on $np ranks: the database's should still move as codes"; grep "^ranks'" "$f"; }
done
RF_GPU_EMULATE=1 run "gpu_build" gpu 2 "$tmp/w/prog.logic" --data "$tmp/wdb"

# ---- 4. round trips per move ------------------------------------------------------------
grep -q '^rank 0 of 2: .* [0-9]* round trips in the [1-9][0-9]* moves that asked other ranks ([0-9.]* each)' "$tmp/db_q05.2.err" ||
    { fail "the profile lacks the round trips per move"; grep "^rank" "$tmp/db_q05.2.err"; }

# a join whose both sides are hashed (no broadcast): their moves share one vote and
# one exchange, fewer round trips than two per move
run "nobc_q05" cpu 2 "$q/schema.logic" "$q/q05.logic" --data "$tmp/db" --set rank_broadcast_bytes=off
cmp -s "$tmp/nobc_q05.n" "$tmp/db_q05.2.1" || fail "q05 without broadcasts: another output"
trips=$(sed -n 's/^rank 0 of 2: .* \([0-9]*\) round trips in the \([0-9]*\) moves .*/\1 \2/p' "$tmp/nobc_q05.err")
set -- $trips
[ $# = 2 ] && [ "$1" -lt $(($2 * 2)) ] || { fail "q05 without broadcasts: $1 round trips for $2 moves, not fewer than 2 each"; grep "^rank" "$tmp/nobc_q05.err"; }

# ---- 5. strings that may be a rank's own, but are shared this time ---------------------
# q22 from a database whose c_phone is a plain column (the import's default for a
# column of distinct strings), not interned whole (rank_plain_bytes=off): its
# share's strings are each rank's own, so every relation made of them may hold such; but substring(c_phone, 1, 2) finds the
# program's country codes, shared by every rank. The ranks check their rows (the
# device's largest code, then a vote) and move them device to device: nothing
# through host memory, the checks counted, one emulated GPU's output.
"$redfox" import "$q/schema.logic" --data "$tmp/tbl" --out "$tmp/dbplain" --block-rows 1024 >/dev/null 2>&1 ||
    { echo "FAIL: redfox import (plain strings)"; exit 1; }
RF_GPU_EMULATE=1 run "plain_q22" gpu 2 "$q/schema.logic" "$q/q22.logic" --data "$tmp/dbplain" --set rank_plain_bytes=off
f=$tmp/plain_q22.err
checks=$(sed -n "s/^ranks' string codes: .* \([0-9]*\) moves of such checked the ranks' rows, \([0-9]*\) held shared codes only.*/\1 \2/p" "$f")
set -- $checks
[ $# = 2 ] && [ "$1" -gt 0 ] && [ "$1" = "$2" ] || { fail "q22, plain c_phone: checked moves '$checks' (want some, all shared)"; grep "^ranks'" "$f"; }
grep -q "^ranks' string codes: .* [1-9][0-9]* of [0-9]* variables with strings may hold a rank's own strings" "$f" ||
    { fail "q22, plain c_phone: no variable may hold a rank's own strings (is c_phone dictionary-coded?)"; grep "^ranks'" "$f"; }
[ "$(grep -c '^rank [01] of 2: run .* 0 bytes sent, 0 received through host memory; ' "$f")" = 2 ] &&
    grep -q '^rank [01] of 2: run .* through host memory; [1-9][0-9]* sent' "$f" ||
    { fail "q22, plain c_phone, on 2 GPU ranks: rows went through host memory"; grep "^rank" "$f"; }
# each rank's work by step (kernels first)
[ "$(grep -c '^rank [01] of 2: work [0-9.]* ms: kernels [0-9.]* ms, .* the rest -*[0-9.]* ms$' "$f")" = 2 ] ||
    { fail "the profile lacks each rank's work by step"; grep "^rank" "$f"; }
# the same query on CPU ranks: no check (every move goes through host memory anyway)
run "cpu_q22" cpu 2 "$q/schema.logic" "$q/q22.logic" --data "$tmp/dbplain" --set rank_plain_bytes=off
grep -q "^ranks' string codes: .* 0 moves of such checked the ranks' rows, 0 held" "$tmp/cpu_q22.err" ||
    { fail "q22 on CPU ranks: checked moves (they move through host memory anyway)"; grep "^ranks'" "$tmp/cpu_q22.err"; }

# ---- 6. small plain columns interned whole on every rank ------------------------------
# own N FILE: the variables with strings that may hold a rank's own
own() { sed -n "s/^ranks' string codes: .*; \([0-9]*\) of [0-9]* variables with strings may hold a rank's own.*/\1/p" "$1"; }
# every string column plain, in blocks of 32 rows so that the ranks share supplier's 100 rows (a table of one block
# is replicated)
"$redfox" import "$q/schema.logic" --data "$tmp/tbl" --out "$tmp/dbp32" --block-rows 32 --strings plain >/dev/null 2>&1 ||
    { echo "FAIL: redfox import (plain strings, 32-row blocks)"; exit 1; }
for query in q21 q02; do
    for np in 2 3; do
        run "pl_$query.$np" cpu $np "$q/schema.logic" "$q/$query.logic" --data "$tmp/dbp32"
        f=$tmp/pl_$query.$np.err
        [ "$(coded "$f")" -gt 0 ] 2>/dev/null && [ "$(bytes "$f")" = 0 ] ||
            { fail "$query, plain columns, $np CPU ranks: their strings should move as codes"; grep "^ranks'" "$f"; }
        # (q02 reads p_type only through LIKE: its classes may be a rank's own)
        [ $query = q02 ] || [ "$(own "$f")" = 0 ] ||
            { fail "$query, plain columns, $np CPU ranks: a variable may hold a rank's own strings"; grep "^ranks'" "$f"; }
    done
    # not interned whole: off, or a limit below the columns' bytes (s_name alone takes 1,800)
    for lim in off 1K; do
        run "plo_$query.$lim" cpu 2 "$q/schema.logic" "$q/$query.logic" --data "$tmp/dbp32" --set rank_plain_bytes=$lim
        f=$tmp/plo_$query.$lim.err
        [ "$(bytes "$f")" -gt 0 ] 2>/dev/null || { fail "$query, rank_plain_bytes=$lim: strings should move as bytes"; grep "^ranks'" "$f"; }
        cmp -s "$tmp/plo_$query.$lim.n" "$tmp/pl_$query.2.n" || fail "$query, rank_plain_bytes=$lim: another output"
    done
    # a second run in the process takes the columns from the first's dictionary
    # (the input cache remembers them: nothing looked up again)
    run "plrep_$query" cpu 2 "$q/schema.logic" "$q/$query.logic" --data "$tmp/dbp32" --repeat 2
    f=$tmp/plrep_$query.err
    [ "$(coded "$f")" = "$(coded "$tmp/pl_$query.2.err")" ] && [ "$(bytes "$f")" = 0 ] ||
        { fail "$query, plain columns, a second run: other moves than one run"; grep "^ranks'" "$f"; }
    RF_GPU_EMULATE=1 run "plgpu_$query" gpu 2 "$q/schema.logic" "$q/$query.logic" --data "$tmp/dbp32"
    f=$tmp/plgpu_$query.err
    [ "$(grep -c '^rank [01] of 2: run .* 0 bytes sent, 0 received through host memory; ' "$f")" = 2 ] ||
        { fail "$query, plain columns, 2 GPU ranks: rows went through host memory"; grep "^rank" "$f"; }
    cmp -s "$tmp/plgpu_$query.n" "$tmp/pl_$query.2.n" || fail "$query, plain columns: the GPU ranks' output differs"
done

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "mpi strcodes: ok"
