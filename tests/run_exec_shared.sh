#!/bin/sh
# tests/run_exec_shared.sh REDFOX EXEC_DIR MODE: programs sharing one database.
# Each program keeps its own derived predicates; when another program (or an
# edited version of the program) commits to the base data, the next exec of
# the first one computes them again instead of printing and maintaining
# stale ones: after every exec its outputs equal a from-scratch `redfox run`
# over the database (delta rules: tc.logic; diffs: a count, with
# --incremental). A program's own commits keep its derived predicates
# maintained incrementally (and in place), never recomputed. No exec warns
# (B's deletion: not of a generated program without outputs). A damaged
# derived table: the exec that reads it names the file; --init and
# --recompute do not read it and write it anew. MODE cpu or emu (the GPU
# emulator).
set -u
redfox=$1
dir=$2
mode=$3
tmp=${TMPDIR:-/tmp}/rf_exec_shared.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if [ "$mode" = emu ]; then
    dev="--device gpu"
    export RF_GPU_EMULATE=1
else
    dev="--device cpu"
fi
A="$dir/tc.logic"
B="$tmp/B.logic" A2="$tmp/A2.logic" C="$tmp/C.logic"
# B: the same base predicate, no derived one
cat >"$B" <<'EOF'
edge(src, dst) -> int(src), int(dst).
lang:input[`edge] = "edge.csv".
lang:input:delimiter[`edge] = ",".
lang:output[`edge] = "edge".
EOF
# A2: A edited (another text, so its own derived tables)
{ cat "$A"; echo '// edited'; } >"$A2"
# C: a count maintained by diffs
cat >"$C" <<'EOF'
edge(src, dst) -> int(src), int(dst).
lang:input[`edge] = "edge.csv".
lang:input:delimiter[`edge] = ",".
outdeg[x] = n <- agg<<n = count()>> edge(x, _).
lang:output[`outdeg] = "outdeg".
EOF
awk 'BEGIN { for (i = 1; i < 40; i++) printf "%d,%d\n", i, i + 1 }' >"$tmp/data/edge.csv"
"$redfox" import "$A" --data "$tmp/data" --out "$tmp/db" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }

n=0
# ex PROG [exec options...]: an exec of PROG, its outputs compared with a run's
ex() {
    prog=$1
    shift
    n=$((n + 1))
    "$redfox" exec "$tmp/db" "$prog" $dev --format csv "$@" >"$tmp/exec.out" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "exec $n of $prog: exit $?"; }
    ! grep 'warning' "$tmp/err" || fail "exec $n of $prog ($*): a warning"
    "$redfox" run "$prog" --data "$tmp/db" --device cpu --format csv >"$tmp/run.out" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "run after exec $n"; }
    cmp -s "$tmp/exec.out" "$tmp/run.out" ||
        { diff "$tmp/exec.out" "$tmp/run.out" | head; fail "exec $n of $prog ($*): its outputs differ from a run's"; }
}
txn() { printf '%b' "$1" >"$tmp/b$n.txn"; echo "$tmp/b$n.txn"; }
# profile PROG BATCH: exec --profile's lines
profile() {
    "$redfox" exec "$tmp/db" "$1" $dev --profile --batch "$2" 2>&1 >/dev/null || fail "exec of $1 with --profile"
}

ex "$A"
ex "$C"
ex "$B" --batch "$(txn '+edge(40, 41).\n')"         # B changes edge: A's and C's tables are stale
ex "$A"                                             # no batch: its outputs as they are now
ex "$C"
ex "$B" --batch "$(txn '+edge(41, 1).\n')"
ex "$A" --batch "$(txn '+edge(100, 1).\n')"         # a batch over stale tables
ex "$C" --batch "$(txn '+edge(7, 3).\n')" --incremental
ex "$B" --batch "$(txn '-edge(20, 21).\n+edge(50, 51).\n')"
ex "$A" --incremental --batch "$(txn '+edge(51, 52).\n')"
ex "$C" --incremental --batch "$(txn '-edge(7, 3).\n')"
# an edited program and back again
ex "$A2" --batch "$(txn '-edge(5, 6).\n')"
ex "$A"
ex "$A2"
ex "$A" --batch "$(txn '+edge(5, 6).\n')"
ex "$A2" --batch "$(txn '+edge(60, 61).\n')"
ex "$A"
# A's own commits do not make its tables stale: maintained, in place
profile "$A" "$(txn '+edge(70, 71).\n')" >"$tmp/prof"
grep -q 'derived predicates maintained incrementally by delta rules' "$tmp/prof" ||
    { cat "$tmp/prof"; fail "A's own commit made its derived predicates stale"; }
grep -q 'commit: appended [0-9]* bytes in place' "$tmp/prof" || { cat "$tmp/prof"; fail "A's commit: not in place"; }
profile "$A" "$(txn '-edge(70, 71).\n')" >"$tmp/prof"
grep -q 'maintained incrementally (deletions by DRed)' "$tmp/prof" ||
    { cat "$tmp/prof"; fail "A's own copy-on-write commit made its derived predicates stale"; }
profile "$A" "$(txn '+edge(71, 72).\n')" >"$tmp/prof"
grep -q 'maintained incrementally by delta rules' "$tmp/prof" || { cat "$tmp/prof"; fail "A after DRed: stale"; }
# ... and another program's commit does
"$redfox" exec "$tmp/db" "$B" $dev --batch "$(txn '+edge(72, 73).\n')" >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "exec of B"; }
profile "$A" "$(txn '+edge(73, 74).\n')" >"$tmp/prof"
grep -q 'recomputed from scratch: the derived predicates the database holds for this program were not computed' \
    "$tmp/prof" || { cat "$tmp/prof"; fail "A after B's commit: not recomputed"; }
ex "$A"

# a damaged derived table: named by the exec that reads it; --init and
# --recompute write it anew without reading it
# (the first column file of A's table of tc, the last of tc's tables after an
# exec of A: the manifest names each table, then its files)
tc_col() {
    grep -ao 'derived\.[0-9a-f]*\.tc\|t[0-9]*\.c[0-9]*\.col' "$tmp/db/manifest.rfdb" |
        awk '/^derived/ { t = 1; next } t { f = $0; t = 0 } END { print f }'
}
col=$(tc_col)
[ -n "$col" ] || fail "no table of tc in the manifest"
printf '\377' | dd of="$tmp/db/$col" bs=1 seek=3 conv=notrunc 2>/dev/null
"$redfox" exec "$tmp/db" "$A" $dev >/dev/null 2>"$tmp/err" && fail "exec over a damaged derived table: exit 0"
grep -qF "$col: error: the file is corrupted" "$tmp/err" || { cat "$tmp/err"; fail "exec over a damaged table: no message naming it"; }
ex "$A" --init
ex "$A" --batch "$(txn '+edge(80, 81).\n')"
printf '\377' | dd of="$tmp/db/$(tc_col)" bs=1 seek=3 conv=notrunc 2>/dev/null
ex "$A" --recompute --batch "$(txn '-edge(80, 81).\n')"
ex "$A" --batch "$(txn '+edge(81, 82).\n')"
echo ok
