#!/bin/sh
# tests/run_exec_rules.sh REDFOX MODE: `redfox exec` over programs whose
# shape the random programs of exec_gen.py do not make, each batch's outputs
# compared with answers worked out by hand (and with a from-scratch run over
# the committed database), in the default mode, --incremental and under
# --each; MODE cpu runs exec on the CPU, emu on the GPU emulator:
#   - facts of a derived predicate that another of its rules also derives
#     from a deleted fact (DRed over-deletes them, and must derive them
#     again: it used to drop them, in recursion too);
#   - a predicate declared with no rules, facts or lang:input (empty), read
#     by rules maintained by delta rules, DRed and diffs, and an output (the
#     generated programs used to name it undeclared: every batch failed, and
#     its output was left out); a batch updating it is refused as not a
#     base predicate;
#   - --incremental on a program that cannot be maintained incrementally: a
#     note says it is recomputed, and why: what keeps the delta rules from
#     a recursion (a shared rule body, a derived functional predicate) is
#     named, not "negation or aggregation" that the program does not have.
set -u
redfox=$1
mode=$2
tmp=${TMPDIR:-/tmp}/rf_exec_rules.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if [ "$mode" = emu ]; then
    dev=gpu
    export RF_GPU_EMULATE=1
else
    dev=cpu
fi

# check NAME PROG WANT BATCH...: for the default mode, --incremental and
# --each, a database imported from $tmp/data, its first exec, then the
# batches in turn; the last transaction's outputs (csv, rows only, one line)
# must be WANT and equal a from-scratch run over the database
check() {
    name=$1 prog=$2 want=$3
    shift 3
    for how in default --incremental --each; do
        db=$tmp/db
        rm -rf "$db"
        "$redfox" import "$prog" --data "$tmp/data" --out "$db" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "$name: import"; }
        "$redfox" exec "$db" "$prog" --device $dev --format csv >/dev/null 2>"$tmp/err" ||
            { cat "$tmp/err"; fail "$name: the first exec"; }
        if [ $how = --each ]; then
            args=""
            for b in "$@"; do args="$args --batch $b"; done
            # shellcheck disable=SC2086
            "$redfox" exec "$db" "$prog" --device $dev --format csv --each $args >"$tmp/all" 2>"$tmp/err" ||
                { rc=$?; cat "$tmp/err"; fail "$name --each: exit $rc"; }
            awk '/^-- transaction /{ out = "" ; next } { out = out $0 "\n" } END { printf "%s", out }' "$tmp/all" >"$tmp/out"
        else
            flag=""
            [ $how = default ] || flag=$how
            for b in "$@"; do
                # shellcheck disable=SC2086
                "$redfox" exec "$db" "$prog" --device $dev --format csv $flag --batch "$b" >"$tmp/out" 2>"$tmp/err" ||
                    { rc=$?; cat "$tmp/err"; fail "$name $how: exec of $b: exit $rc"; }
            done
        fi
        got=$(grep -v '^$' "$tmp/out" | tr '\n' ' ')
        [ "$got" = "$want" ] || fail "$name $how: got '$got', want '$want'"
        "$redfox" run "$prog" --data "$db" --device cpu --format csv 2>/dev/null | grep -v '^$' | tr '\n' ' ' >"$tmp/run"
        [ "$(cat "$tmp/run")" = "$want" ] || fail "$name $how: a run over the database: '$(cat "$tmp/run")'"
    done
}

# ---- facts beside rules, under DRed -------------------------------------------------
cat >"$tmp/facts.logic" <<'P'
s(a) -> int(a).
lang:input[`s] = "s.csv".
e(a, b) -> int(a), int(b).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
p(x) -> int(x).
p(1).
p(x) <- s(x).
tc(x, y) -> int(x), int(y).
tc(1, 2).
tc(x, y) <- e(x, y).
tc(x, z) <- tc(x, y), e(y, z).
lang:output[`p] = "p".
lang:output[`tc] = "tc".
P
printf '1\n2\n' >"$tmp/data/s.csv"
printf '1,2\n2,3\n' >"$tmp/data/e.csv"
printf -- '-s(1).\n' >"$tmp/f1.txn"
printf -- '-e(1, 2).\n-s(2).\n' >"$tmp/f2.txn"
# p(1) is a fact; tc(1, 2) too, and with e(2, 3) it derives tc(1, 3)
check facts "$tmp/facts.logic" "p (1 row) x 1 tc (3 rows) x,y 1,2 1,3 2,3 " "$tmp/f1.txn" "$tmp/f2.txn"

# ---- a predicate declared only: empty --------------------------------------------------
rm -f "$tmp/data/"*
cat >"$tmp/empty.logic" <<'P'
e(a, b) -> int(a), int(b).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
q(x) -> int(x).
u(x, y) <- e(x, y).
u(x, y) <- q(x), q(y).
tc(x, y) <- u(x, y).
tc(x, z) <- tc(x, y), u(y, z).
lang:output[`q] = "q".
lang:output[`tc] = "tc".
P
cat >"$tmp/empty_diff.logic" <<'P'
e(a, b) -> int(a), int(b).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
q(x) -> int(x).
z[x] = v -> int(x), int(v).
r(x, y) <- e(x, y), !q(y).
c[x] = n <- agg<<n = count()>> e(x, y), !z[y] = _.
d[x] = n <- agg<<n = count()>> e(x, y), q(y).
lang:output[`q] = "q".
lang:output[`r] = "r".
lang:output[`c] = "c".
lang:output[`d] = "d".
P
printf '1,2\n2,3\n' >"$tmp/data/e.csv"
printf -- '+e(3, 4).\n' >"$tmp/e1.txn"
printf -- '-e(1, 2).\n' >"$tmp/e2.txn"
check empty_delta "$tmp/empty.logic" "q (0 rows) x tc (3 rows) x,y 2,3 2,4 3,4 " "$tmp/e1.txn" "$tmp/e2.txn"
check empty_diffs "$tmp/empty_diff.logic" "q (0 rows) x r (2 rows) x,y 2,3 3,4 c (2 rows) x,n 2,1 3,1 d (0 rows) x,n " \
    "$tmp/e1.txn" "$tmp/e2.txn"
# a batch updating the declared-only predicate is refused as one that is not a base predicate
# (it used to say that the program has no such predicate)
printf -- '+e(7, 8).\n+q(1).\n' >"$tmp/q.txn"
"$redfox" exec "$tmp/db" "$tmp/empty_diff.logic" --device $dev --batch "$tmp/q.txn" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -qF "$tmp/q.txn:2:2: error: \`q\` is not a base predicate (it has no lang:input)" "$tmp/err" ||
    { cat "$tmp/err"; fail "a batch updating q: exit $rc"; }
# --incremental on a program that cannot be maintained incrementally (recursion beside an
# aggregate): recomputed, correct, and a note says so (it used to say nothing)
cat >"$tmp/recagg.logic" <<'P'
e(a, b) -> int(a), int(b).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
tc(x, y) <- e(x, y).
tc(x, z) <- tc(x, y), e(y, z).
c[x] = n <- agg<<n = count()>> tc(x, _).
lang:output[`c] = "c".
P
printf -- '+e(3, 4).\n' >"$tmp/r1.txn"
rm -rf "$tmp/db"
"$redfox" import "$tmp/recagg.logic" --data "$tmp/data" --out "$tmp/db" >/dev/null 2>&1 || fail "recagg: import"
"$redfox" exec "$tmp/db" "$tmp/recagg.logic" --device $dev >/dev/null 2>&1 || fail "recagg: the first exec"
got=$("$redfox" exec "$tmp/db" "$tmp/recagg.logic" --device $dev --format csv --incremental --batch "$tmp/r1.txn" 2>"$tmp/err" |
    tr '\n' ' ')
[ "$got" = "x,n 1,3 2,2 3,1 " ] || { cat "$tmp/err"; fail "recagg --incremental: got '$got'"; }
grep -qF "note: --incremental: this program's derived predicates are recomputed from scratch, which incremental maintenance cannot keep: a recursive predicate beside" "$tmp/err" ||
    { cat "$tmp/err"; fail "recagg --incremental: no note"; }
# recursion beside what keeps the delta rules from it without negation or aggregation: the
# reason names it (both said "a recursive predicate beside negation or aggregation")
why() { # name rules reason: exec --incremental of a program of tc and RULES says REASON
    { head -5 "$tmp/recagg.logic"; printf '%s\nlang:output[`tc] = "tc".\n' "$2"; } >"$tmp/$1.logic"
    rm -rf "$tmp/db"
    "$redfox" import "$tmp/$1.logic" --data "$tmp/data" --out "$tmp/db" >/dev/null 2>&1 || fail "$1: import"
    "$redfox" exec "$tmp/db" "$tmp/$1.logic" --device $dev >/dev/null 2>&1 || fail "$1: the first exec"
    got=$("$redfox" exec "$tmp/db" "$tmp/$1.logic" --device $dev --format csv --incremental --batch "$tmp/r1.txn" \
        2>"$tmp/err" | tr '\n' ' ')
    [ "$got" = "x,y 1,2 1,3 1,4 2,3 2,4 3,4 " ] || { cat "$tmp/err"; fail "$1 --incremental: got '$got'"; }
    grep -qF "which incremental maintenance cannot keep: $3" "$tmp/err" || { cat "$tmp/err"; fail "$1: the note does not say '$3'"; }
    ! grep -q "negation or aggregation (" "$tmp/err" || { cat "$tmp/err"; fail "$1: the note names negation or aggregation"; }
}
why recheads 'h1(x), h2(x, x) <- e(x, _).' "the program negates a conjunction or shares a rule body"
why recfun 'f[x] = y <- e(x, y), y > 100.' "a recursive predicate beside a derived functional predicate"
why recaggfun 'f[x] = n <- agg<<n = count()>> e(x, _).' "a recursive predicate beside aggregation"
echo "PASS: exec over facts beside rules and declared-only predicates ($mode)"
