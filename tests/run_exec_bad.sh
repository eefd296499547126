#!/bin/sh
# tests/run_exec_bad.sh REDFOX EXEC_DIR: bad transactions of `redfox exec`
# (an unknown or derived predicate, a wrong number of values, a value of the
# wrong type, a key violation, a bad line after good ones) are errors naming
# file:line:col, exit 1, and leave the database exactly as it was; so does a
# program declaring a base predicate's columns otherwise than its table (named).
set -u
redfox=$1
dir=$2
tmp=${TMPDIR:-/tmp}/rf_exec_bad.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
printf 'c1,1\nc2,2\n' >"$tmp/data/buys.csv"
printf '1,10\n2,60\n' >"$tmp/data/price.csv"
p="$dir/join.logic"
"$redfox" import "$p" --data "$tmp/data" --out "$tmp/db" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
"$redfox" exec "$tmp/db" "$p" --device cpu >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec"; }
state() { (cd "$tmp/db" && ls -l && cat ./*) | cksum; }
before=$(state)
bad() { # name text expected-message
    printf '%b' "$2" >"$tmp/$1.txn"
    "$redfox" exec "$tmp/db" "$p" --device cpu --batch "$tmp/$1.txn" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "$1: exit $rc, expected 1"; }
    grep -qF "$tmp/$1.txn:$3" "$tmp/err" || { cat "$tmp/err"; fail "$1: expected '$tmp/$1.txn:$3'"; }
    [ "$(state)" = "$before" ] || fail "$1: the database changed"
}
bad unknown '+buys("c3", 1).\n+nosuch(1).\n' '2:2: error: unknown predicate `nosuch`'
bad derived '+spent("c1", 1, 10).\n' '1:2: error: `spent` is derived by the program'"'"'s rules'
bad arity '+buys("c3").\n' '1:1: error: `buys` has 2 columns; this fact gives 1'
bad empty_int '+buys("c3", ).\n' '1:13: error: expected an int value'
bad toomany '+price(3, 4, 5).\n' '1:14: error: too many values: `price` has 2 columns'
bad type '+price(3, x4).\n' '1:11: error: expected an int, found "x4"'
bad key '+buys("c9", 9).\n+price(1, 11).\n' '2:1: error: key violation: `price` already holds (p) = (1)'
bad key2 '+price(7, 1).\n+price(7, 2).\n' '2:1: error: key violation: `price` already holds (p) = (7)'
bad syntax '+buys("c1" 1).\n' '1:12: error: expected '"','"' or '"')'"
bad string '+buys("c1, 1).\n' '1:7: error: a string without its closing quote'
bad nul_after '+buys("c3", 3).\0\n' '1:16: error: a NUL byte: a transaction file is text'
bad missing '// nothing yet\nprice(1, 2).\n' '2:1: error: expected '"'+'"' (insert) or '"'-'"' (delete)'
# a key replaced in batch order is fine
printf -- '-price(1, 10).\n+price(1, 11).\n' >"$tmp/ok.txn"
"$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/ok.txn" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "ordered update"; }
grep -q '^c1,1,11$' "$tmp/out" || { cat "$tmp/out"; fail "ordered update: c1 should pay 11"; }
# a derived functional predicate given two values for a key (maintained by
# diffs): an error naming it and the key, the database unchanged
mkdir -p "$tmp/fd"
printf '1,2\n2,3\n' >"$tmp/fd/e.csv"
"$redfox" import "$dir/fdderived.logic" --data "$tmp/fd" --out "$tmp/fddb" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import fd"; }
"$redfox" exec "$tmp/fddb" "$dir/fdderived.logic" --device cpu >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec fd"; }
fdstate() { (cd "$tmp/fddb" && ls -l && cat ./*) | cksum; }
fdbefore=$(fdstate)
printf '+e(1, 5).\n' >"$tmp/fd.txn"
"$redfox" exec "$tmp/fddb" "$dir/fdderived.logic" --device cpu --batch "$tmp/fd.txn" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/err"; fail "fd: exit $rc, expected 1"; }
grep -qF 'functional dependency violated: `f` has two values for the key (1): (2) and (5)' "$tmp/err" ||
    { cat "$tmp/err"; fail "fd: expected the violated dependency of f"; }
[ "$(fdstate)" = "$fdbefore" ] || fail "fd: the database changed"
# the same with f declared: the violation names the program's declaration of
# f (FILE:LINE:COL), as a run over the batch's state does, whether the
# transaction recomputes f, keeps it by diffs, or is the second of --each;
# never exec's generated programs (`<redfox exec: diffs>`)
printf 'e(a, b) -> int(a), int(b).\nlang:input[`e] = "e.csv".\nlang:input:delimiter[`e] = ",".\nf[a] = b -> int(a), int(b).\nf[a] = b <- e(a, b).\nlang:output[`f] = "f".\n' >"$tmp/fddecl.logic"
mkdir -p "$tmp/fdafter"
printf '1,2\n2,3\n1,5\n' >"$tmp/fdafter/e.csv"
"$redfox" run "$tmp/fddecl.logic" --data "$tmp/fdafter" --device cpu >/dev/null 2>"$tmp/want"
grep -qF "$tmp/fddecl.logic:4:1: error: functional dependency violated: \`f\`" "$tmp/want" || { cat "$tmp/want"; fail "fddecl: the run's error"; }
printf '+e(2, 3).\n' >"$tmp/fdok.txn"
for how in --incremental --recompute "--each --batch $tmp/fdok.txn" ""; do
    rm -rf "$tmp/fddb2"
    "$redfox" import "$tmp/fddecl.logic" --data "$tmp/fd" --out "$tmp/fddb2" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import fddecl"; }
    if [ -n "$how" ]; then
        "$redfox" exec "$tmp/fddb2" "$tmp/fddecl.logic" --device cpu >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec fddecl"; }
        # shellcheck disable=SC2086
        "$redfox" exec "$tmp/fddb2" "$tmp/fddecl.logic" --device cpu $how --batch "$tmp/fd.txn" >/dev/null 2>"$tmp/err"
    else # the first exec, over rows that break it
        rm -rf "$tmp/fddb2"
        "$redfox" import "$tmp/fddecl.logic" --data "$tmp/fdafter" --out "$tmp/fddb2" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import fddecl"; }
        "$redfox" exec "$tmp/fddb2" "$tmp/fddecl.logic" --device cpu >/dev/null 2>"$tmp/err"
    fi
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "fddecl $how: exit $rc, expected 1"; }
    grep -F ' error: ' "$tmp/err" | cmp -s - "$tmp/want" || { cat "$tmp/err"; fail "fddecl $how: the error differs from the run's"; }
done
# a program of two files: a run-time error names the file its rule is in
# (it named the last file given, at the other file's line: `c.logic:4:1` for
# a file of one line), in a run and in exec (there, with its own generated
# program given last, it named `<redfox exec: materialization>`)
printf '// nothing but a comment\n' >"$tmp/other.logic"
for order in "$tmp/fddecl.logic $tmp/other.logic" "$tmp/other.logic $tmp/fddecl.logic"; do
    # shellcheck disable=SC2086
    "$redfox" run $order --data "$tmp/fdafter" --device cpu >/dev/null 2>"$tmp/err"
    cmp -s "$tmp/err" "$tmp/want" || { cat "$tmp/err"; fail "two files ($order): run names another file"; }
    rm -rf "$tmp/fddb2"
    "$redfox" import "$tmp/fddecl.logic" --data "$tmp/fdafter" --out "$tmp/fddb2" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import fddecl"; }
    # shellcheck disable=SC2086
    "$redfox" exec "$tmp/fddb2" $order --device cpu >/dev/null 2>"$tmp/err"
    grep -F ' error: ' "$tmp/err" | cmp -s - "$tmp/want" || { cat "$tmp/err"; fail "two files ($order): exec names another file"; }
done
# a key or functional dependency the program declares and the importing
# program did not, broken by the stored rows: exec refuses as a run does
# (naming the manifest and the rows), with or without derived predicates,
# and commits nothing
mkdir -p "$tmp/kd"
printf '1,2\n1,3\n' >"$tmp/kd/e.csv"
decl='e(a, b) -> int(a), int(b).\nlang:input[`e] = "e.csv".\nlang:input:delimiter[`e] = ",".\n'
printf "$decl" >"$tmp/imp.logic"
printf 'e[a] = b -> int(a), int(b).\nlang:input[`e] = "e.csv".\nlang:input:delimiter[`e] = ",".\nlang:output[`e] = "e".\n' >"$tmp/fdonly.logic"
printf "$decl"'lang:input:key[`e] = "a".\nf(a) <- e(a, b), b > 2.\nlang:output[`f] = "f".\n' >"$tmp/keyed.logic"
"$redfox" import "$tmp/imp.logic" --data "$tmp/kd" --out "$tmp/kddb" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import kd"; }
kdstate() { (cd "$tmp/kddb" && ls -l && cat ./*) | cksum; }
kdbefore=$(kdstate)
printf '+e(5, 6).\n' >"$tmp/kd.txn"
for q in fdonly keyed; do
    "$redfox" run "$tmp/$q.logic" --data "$tmp/kddb" --device cpu >/dev/null 2>"$tmp/want"
    [ $? -eq 1 ] || { cat "$tmp/want"; fail "$q: a run over the broken rows: not exit 1"; }
    "$redfox" exec "$tmp/kddb" "$tmp/$q.logic" --device cpu --batch "$tmp/kd.txn" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "$q: exec over rows breaking its key: exit $rc, expected 1"; }
    grep -qF "$tmp/kddb/manifest.rfdb: error: " "$tmp/err" && grep -qF "row 2 of the database's table" "$tmp/err" ||
        { cat "$tmp/err"; fail "$q: the error does not name the database's rows"; }
    cmp -s "$tmp/err" "$tmp/want" || { cat "$tmp/err" "$tmp/want"; fail "$q: exec's error differs from the run's"; }
    [ "$(kdstate)" = "$kdbefore" ] || fail "$q: the database changed"
done
# a program without the key appends a row breaking it: the manifest no
# longer says the key was checked, so a run and an exec of the keyed program
# refuse the rows
printf '2,5\n' >"$tmp/kd/e.csv"
rm -rf "$tmp/kddb"
"$redfox" import "$tmp/keyed.logic" --data "$tmp/kd" --out "$tmp/kddb" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import keyed"; }
"$redfox" exec "$tmp/kddb" "$tmp/keyed.logic" --device cpu >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec keyed"; }
printf '+e(2, 7).\n' >"$tmp/kd.txn"
"$redfox" exec "$tmp/kddb" "$tmp/imp.logic" --device cpu --batch "$tmp/kd.txn" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "exec without the key"; }
"$redfox" run "$tmp/keyed.logic" --data "$tmp/kddb" --device cpu >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF 'the key (a) = (2) of row 2' "$tmp/err" || { cat "$tmp/err"; fail "run trusts a key the last writer did not check"; }
"$redfox" exec "$tmp/kddb" "$tmp/keyed.logic" --device cpu >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF 'the key (a) = (2) of row 2' "$tmp/err" || { cat "$tmp/err"; fail "exec of the keyed program after another's commit"; }
# a run-time error of a batch (an integer overflow) names the user's rule,
# as a run over the same rows as text does, whether the batch is
# maintained by diffs (a total kept by adding), recomputed, or by delta
# rules (an assignment); nothing committed
mkdir -p "$tmp/ov" "$tmp/ovtext"
printf 'e(id, k, v) -> int(id), int(k), int(v).\nlang:input[`e] = "e.csv".\nlang:input:delimiter[`e] = ",".\n' >"$tmp/ov.logic"
printf 's[k] = t <- agg<<t = total(v)>> e(_, k, v).\nlang:output[`s] = "s".\n' >>"$tmp/ov.logic"
printf 'e(id, k, v) -> int(id), int(k), int(v).\nlang:input[`e] = "e.csv".\nlang:input:delimiter[`e] = ",".\n' >"$tmp/ovd.logic"
printf 'big(x, y) <- e(x, _, v), y = v * 1000.\nlang:output[`big] = "big".\n' >>"$tmp/ovd.logic"
printf '+e(102, 1, 1000000000000000000).\n' >"$tmp/ov.txn"
for q in ov ovd; do
    # (ov: a total near the int's limit the batch's row takes past it)
    awk -v q=$q 'BEGIN { if (q == "ov") print "1,1,9200000000000000000"; for (i = 2; i < 40; i++) printf "%d,2,%d\n", i, i }' \
        >"$tmp/ov/e.csv"
    (cat "$tmp/ov/e.csv"; echo '102,1,1000000000000000000') >"$tmp/ovtext/e.csv"
    "$redfox" run "$tmp/$q.logic" --data "$tmp/ovtext" --device cpu >/dev/null 2>"$tmp/want"
    where=$(sed -n 's/^\([^ ]*:[0-9]*:[0-9]*:\) error: .*/\1/p' "$tmp/want" | head -n 1)
    [ -n "$where" ] && [ "${where#"$tmp/$q.logic:"}" != "$where" ] || { cat "$tmp/want"; fail "$q: the run names no rule of the program"; }
    rm -rf "$tmp/ovdb"
    "$redfox" import "$tmp/$q.logic" --data "$tmp/ov" --out "$tmp/ovdb" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "$q: import"; }
    "$redfox" exec "$tmp/ovdb" "$tmp/$q.logic" --device cpu >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "$q: first exec"; }
    ovstate() { (cd "$tmp/ovdb" && ls -l && cat ./*) | cksum; }
    ovbefore=$(ovstate)
    for mode in "" --recompute; do
        "$redfox" exec "$tmp/ovdb" "$tmp/$q.logic" --device cpu --batch "$tmp/ov.txn" $mode --profile >/dev/null 2>"$tmp/err"
        rc=$?
        [ $rc -eq 1 ] || { cat "$tmp/err"; fail "$q $mode: exit $rc, expected 1"; }
        grep -q "^$where error: .*overflow" "$tmp/err" || { cat "$tmp/err"; fail "$q $mode: the error does not name $where"; }
        # (worded as the run words it: a total kept by adding said "integer overflow in A + B")
        [ "$(grep ' error: ' "$tmp/err")" = "$(grep ' error: ' "$tmp/want")" ] ||
            { cat "$tmp/err" "$tmp/want"; fail "$q $mode: not the run's message"; }
        [ "$(ovstate)" = "$ovbefore" ] || fail "$q $mode: the database changed"
    done
done
# two base predicates reading one input: import and run take it, exec cannot
# update one table as two predicates, and says so at the second one's
# declaration (it said "two inputs read this file with different columns",
# of identical columns), the database unchanged
mkdir -p "$tmp/two"
printf '1,2\n' >"$tmp/two/e.csv"
printf 'a(x, y) -> int(x), int(y).\nlang:input[`a] = "e.csv".\nlang:input:delimiter[`a] = ",".\nb(x, y) -> int(x), int(y).\nlang:input[`b] = "e.csv".\nlang:input:delimiter[`b] = ",".\nr(x) <- a(x, _), b(_, x).\nlang:output[`r] = "r".\n' >"$tmp/two.logic"
"$redfox" import "$tmp/two.logic" --data "$tmp/two" --out "$tmp/twodb" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import two"; }
twostate() { (cd "$tmp/twodb" && ls -l && cat ./*) | cksum; }
twobefore=$(twostate)
printf '+a(2, 1).\n' >"$tmp/two.txn"
for batch in "" "--batch $tmp/two.txn"; do
    # shellcheck disable=SC2086
    "$redfox" exec "$tmp/twodb" "$tmp/two.logic" --device cpu $batch >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "two inputs: exit $rc, expected 1"; }
    grep -qF "$tmp/two.logic:4:1: error: \`b\` reads the input \"e.csv\", as \`a\` does" "$tmp/err" ||
        { cat "$tmp/err"; fail "two inputs: the error"; }
    [ "$(twostate)" = "$twobefore" ] || fail "two inputs: the database changed"
done
# --batch -: a transaction from standard input (a bad one named as /dev/stdin,
# the database unchanged; a good one applied); read once, and not beside a
# program from standard input (exit 2)
before=$(state)
printf '+nosuch(1).\n' | "$redfox" exec "$tmp/db" "$p" --device cpu --batch - >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF '/dev/stdin:1:2: error: unknown predicate `nosuch`' "$tmp/err" ||
    { cat "$tmp/err"; fail "--batch - with a bad line"; }
[ "$(state)" = "$before" ] || fail "--batch - with a bad line: the database changed"
printf '+buys("c7", 1).\n' | "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch - >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "--batch -"; }
grep -q 'c7' "$tmp/out" || { cat "$tmp/out"; fail "--batch -: the inserted row is not in the outputs"; }
"$redfox" exec "$tmp/db" "$p" --batch - --batch - </dev/null >/dev/null 2>&1
[ $? -eq 2 ] || fail "--batch - twice: not bad usage"
"$redfox" exec "$tmp/db" - --batch - <"$p" >/dev/null 2>&1
[ $? -eq 2 ] || fail "the program and --batch - both from standard input: not bad usage"
# a UTF-8 byte order mark at the start of a transaction file is skipped (an
# editor's): a bad first line is named at the column after it, nothing
# committed; a good one is applied (before, 1:1 "expected '+' ...")
before=$(state)
printf '\357\273\277+buys("c8", x).\n' >"$tmp/bom_bad.txn"
"$redfox" exec "$tmp/db" "$p" --device cpu --batch "$tmp/bom_bad.txn" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF "$tmp/bom_bad.txn:1:13: error: expected an int" "$tmp/err" ||
    { cat "$tmp/err"; fail "a byte order mark and a bad line"; }
[ "$(state)" = "$before" ] || fail "a byte order mark and a bad line: the database changed"
printf '\357\273\277+price(77, 1).\n+buys("c8", 1).\n+price(77, 2).\n' >"$tmp/bom_viol.txn"
"$redfox" exec "$tmp/db" "$p" --device cpu --batch "$tmp/bom_viol.txn" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF "$tmp/bom_viol.txn:3:1: error: key violation" "$tmp/err" ||
    { cat "$tmp/err"; fail "a byte order mark and a key violation"; }
printf '\357\273\277+buys("c8", 1).\n' >"$tmp/bom.txn"
"$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/bom.txn" >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "a byte order mark before a good line"; }
grep -q 'c8' "$tmp/out" || { cat "$tmp/out"; fail "a byte order mark: the inserted row is not in the outputs"; }
# a NUL byte is an error naming its line; a stream is read no further than
# its first one (before, --batch /dev/zero read until memory ran out). The
# stream here stays open 4 s after its NUL: exec must end before (timeout 3)
before=$(state)
{ printf '+buys("c5", 1).\n\000\n'; sleep 4; } | timeout 3 "$redfox" exec "$tmp/db" "$p" --device cpu --batch - >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -qF '/dev/stdin:2:1: error: a NUL byte: a transaction file is text' "$tmp/err" ||
    { cat "$tmp/err"; fail "a stream with a NUL byte: exit $rc (124: read on past the NUL)"; }
[ "$(state)" = "$before" ] || fail "a stream with a NUL byte: the database changed"
# options that ask for opposite things: bad usage, the database unchanged
before=$(state)
for opts in "--recompute --incremental" "--init --incremental"; do
    # shellcheck disable=SC2086
    "$redfox" exec "$tmp/db" "$p" --device cpu $opts --batch "$tmp/arity.txn" >/dev/null 2>"$tmp/err"
    [ $? -eq 2 ] && grep -q 'ask for opposite things' "$tmp/err" || { cat "$tmp/err"; fail "$opts: not bad usage"; }
done
[ "$(state)" = "$before" ] || fail "opposite options: the database changed"
# a program of exec's own namespaces (redfox_txn_*, reserved for the
# programs exec generates; before, exec ran it): refused at its rule, exit
# 1, the database unchanged
before=$(state)
{ cat "$p"; echo 'redfox_txn_d:big(c) <- big(c, _).'; } >"$tmp/txnname.logic"
line=$(($(wc -l <"$p") + 1))
"$redfox" exec "$tmp/db" "$tmp/txnname.logic" --device cpu --batch "$tmp/ok.txn" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -qF "txnname.logic:$line:1: error: \`redfox_txn_d:big\` is in the namespace \`redfox_txn_d:\`, reserved" "$tmp/err" ||
    { cat "$tmp/err"; fail "a program defining redfox_txn_d:big: exit $rc"; }
[ "$(state)" = "$before" ] || fail "a program defining redfox_txn_d:big: the database changed"
# a program declaring a base predicate's columns otherwise than the database's table: the
# error names both, as a run over the database does (exec said only that they differ)
before=$(state)
sed 's/^price(p, v) -> int(p), int(v)\./price(p, v) -> int(p), decimal(v)./' "$p" >"$tmp/retyped.logic"
grep -q 'decimal(v)' "$tmp/retyped.logic" || fail "retyped.logic: no column retyped"
"$redfox" exec "$tmp/db" "$tmp/retyped.logic" --device cpu --batch "$tmp/ok.txn" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -qF "$tmp/db/manifest.rfdb: error: the database's table 'price.csv' has columns (int, int), but \`price\` declares (int, decimal)" "$tmp/err" ||
    { cat "$tmp/err"; fail "a program retyping price: exit $rc"; }
[ "$(state)" = "$before" ] || fail "a program retyping price: the database changed"
# not a database; a compiled program
"$redfox" exec "$tmp/data" "$p" --device cpu >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF 'not a redfox database' "$tmp/err" || { cat "$tmp/err"; fail "not a database"; }
echo ok
