#!/bin/sh
# tests/run_aux_names.sh REDFOX: the auxiliary predicates the compiler makes
# (_bodyLINE_COL for a rule of several heads or an aggregate over a
# disjunction, _notLINE_COL for a negated conjunction) never merge with
# another predicate: one the program names so itself, or another file's
# auxiliary predicate made at the same line and column when several files
# are compiled as one program. Answers checked by hand.
set -u
r=$1
tmp=${TMPDIR:-/tmp}/rf_aux_names.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME EXPECTED-FILE GOT-FILE
    if ! cmp -s "$2" "$3"; then echo "FAIL: $1"; diff "$2" "$3"; fail=1; fi
}
# the program's own _body4_1 (empty: no x > 100) and _not3_18 beside the
# compiler's for the rules at 4:1 and 3:18
cat >"$tmp/own.logic" <<'P'
e(x, y) -> int(x), int(y).
e(1, 2). e(2, 3).
q(x) <- e(x, y), !(e(y, z), z > 2).
a(x), b(x) <- e(x, y), y > 2.
_body4_1(x) <- e(x, _), x > 100.
_not3_18(x) <- e(x, _), x > 100.
lang:output[`a] = "a".
lang:output[`q] = "q".
lang:output[`_body4_1] = "body".
lang:output[`_not3_18] = "not".
P
printf 'q (1 row)\nx\n2\n\na (1 row)\nx\n2\n\nbody (0 rows)\nx\n\nnot (0 rows)\nx\n' >"$tmp/own.exp"
"$r" run "$tmp/own.logic" --device cpu --format csv >"$tmp/own.out" 2>"$tmp/err" || { cat "$tmp/err"; fail=1; }
check "a program's own _body4_1 and _not3_18" "$tmp/own.exp" "$tmp/own.out"
# two files, each with a rule of two heads at 1:1 (a = {2}, c = {1}) and a
# negated conjunction at 2:18
cat >"$tmp/A.logic" <<'P'
a(x), b(x) <- e(x, y), y > 2.
na(x) <- e(x, y), !(e(y, z), z > 2).
e(x, y) -> int(x), int(y).
e(1, 2). e(2, 3).
lang:output[`a] = "a".
lang:output[`na] = "na".
P
cat >"$tmp/B.logic" <<'P'
c(x), d(x) <- e(x, y), y < 3.
nb(x) <- e(x, y), !(e(y, z), z < 2).
lang:output[`c] = "c".
lang:output[`nb] = "nb".
P
printf 'a (1 row)\nx\n2\n\nna (1 row)\nx\n2\n\nc (1 row)\nx\n1\n\nnb (2 rows)\nx\n1\n2\n' >"$tmp/ab.exp"
"$r" run "$tmp/A.logic" "$tmp/B.logic" --device cpu --format csv >"$tmp/ab.out" 2>"$tmp/err" || { cat "$tmp/err"; fail=1; }
check "two files' rules at one line and column" "$tmp/ab.exp" "$tmp/ab.out"
"$r" compile "$tmp/A.logic" "$tmp/B.logic" -o "$tmp/ab.rfx" 2>"$tmp/err" || { cat "$tmp/err"; fail=1; }
"$r" run "$tmp/ab.rfx" --device cpu --format csv >"$tmp/abx.out" 2>"$tmp/err" || { cat "$tmp/err"; fail=1; }
check "two files' rules at one line and column, through a .rfx" "$tmp/ab.exp" "$tmp/abx.out"
exit $fail
