#!/bin/sh
# tests/run_db_first_error.sh REDFOX: a failed `redfox import` names the
# error a text run (`redfox run --data DIR`) names: with several bad input
# files, the first in the program's order (the run's), not the largest (the
# file the import reads first), whatever the threads; a bad row's, a key's,
# a missing file's, a FIFO's that the import had not reached. Each
# case's expectation is the text run's own errors.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_db_first_error.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$tmp/prog.logic" <<'P'
a(x, y) -> int(x), int(y).
lang:input[`a] = "a.csv".
lang:input:delimiter[`a] = ",".
lang:input:key[`a] = "x".
b(x, y) -> int(x), int(y).
lang:input[`b] = "b.csv".
lang:input:delimiter[`b] = ",".
c(x, y) -> int(x), int(y).
lang:input[`c] = "c.csv".
lang:input:delimiter[`c] = ",".
lang:input:key[`c] = "x".
j(x) <- a(x, _), b(x, _), c(x, _).
lang:output[`j] = "j".
P
rows() { awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "%d,%d\n", i, i }'; }
# case NAME: the files under $tmp/NAME; the import's errors must be the run's
case_() {
    d=$tmp/$1
    "$redfox" run "$tmp/prog.logic" --data "$d" --device cpu >/dev/null 2>"$tmp/run.err"
    [ $? -eq 1 ] || { cat "$tmp/run.err"; fail "$1: the text run did not fail"; }
    grep ': error: ' "$tmp/run.err" >"$tmp/want"
    [ -s "$tmp/want" ] || { cat "$tmp/run.err"; fail "$1: the text run named no error"; }
    grep -q "$2" "$tmp/want" || { cat "$tmp/want"; fail "$1: the run should name $2 (the test's premise)"; }
    for t in 1 2 4; do
        rm -rf "$tmp/db"
        "$redfox" import "$tmp/prog.logic" --data "$d" --out "$tmp/db" --threads $t >/dev/null 2>"$tmp/imp.err"
        rc=$?
        [ $rc -eq 1 ] || { cat "$tmp/imp.err"; fail "$1, --threads $t: exit $rc, expected 1"; }
        grep ': error: ' "$tmp/imp.err" >"$tmp/got"
        cmp -s "$tmp/want" "$tmp/got" ||
            { echo "run:"; cat "$tmp/want"; echo "import:"; cat "$tmp/got"; fail "$1, --threads $t: not the run's error"; }
        [ ! -e "$tmp/db" ] || fail "$1, --threads $t: a failed import left a database"
    done
}
# a's bad row (a small file) and b's (a large one, which the import reads first)
mkdir -p "$tmp/rows"
{ rows 5; echo '6,x'; } >"$tmp/rows/a.csv"
{ rows 3000; echo 'q,1'; } >"$tmp/rows/b.csv"
rows 20 >"$tmp/rows/c.csv"
case_ rows 'a\.csv:6:'
# a's repeated key (checked at its table's end, beside the next file) and
# b's bad row, larger; c larger still and good
mkdir -p "$tmp/key"
{ rows 5; echo '3,9'; } >"$tmp/key/a.csv"
{ rows 2000; echo '1,1,1'; } >"$tmp/key/b.csv"
rows 40000 >"$tmp/key/c.csv"
case_ key 'a\.csv:6:'
# a good and largest (read first and ended), b's bad row, c's repeated key larger than b
mkdir -p "$tmp/mid"
rows 50000 >"$tmp/mid/a.csv"
{ rows 10; echo '11,'; } >"$tmp/mid/b.csv"
{ rows 3000; echo '7,7'; } >"$tmp/mid/c.csv"
case_ mid 'b\.csv:11:'
# a missing (its size 0: read last) and b's bad row
mkdir -p "$tmp/missing"
{ rows 100; echo '101,1.5'; } >"$tmp/missing/b.csv"
rows 20 >"$tmp/missing/c.csv"
case_ missing 'a\.csv'
# a a FIFO with a bad row (its size unknown: the import's turn for it comes
# last) and b's bad row: the import fails at b before opening a, and must
# still read a as the run does (a FIFO that the import never opened is
# unread, not "read once"); each reader gets its own writer
mkdir -p "$tmp/fifo"
if mkfifo "$tmp/fifo/a.csv" 2>/dev/null; then
    { rows 3; echo '4,y'; } >"$tmp/fifo.a"
    { rows 3000; echo 'q,1'; } >"$tmp/fifo/b.csv"
    rows 20 >"$tmp/fifo/c.csv"
    # a writer that gives up after 30 s where nothing opens the FIFO
    writer() { timeout 30 sh -c 'cat "$1" >"$2"' sh "$tmp/fifo.a" "$tmp/fifo/a.csv" 2>/dev/null & }
    writer
    "$redfox" run "$tmp/prog.logic" --data "$tmp/fifo" --device cpu >/dev/null 2>"$tmp/run.err"
    wait
    grep ': error: ' "$tmp/run.err" >"$tmp/want"
    grep -q 'a\.csv:4:' "$tmp/want" || { cat "$tmp/run.err"; fail "fifo: the run should name a.csv:4 (the test's premise)"; }
    for t in 1 2; do
        rm -rf "$tmp/db"
        writer
        wpid=$!
        "$redfox" import "$tmp/prog.logic" --data "$tmp/fifo" --out "$tmp/db" --threads $t >/dev/null 2>"$tmp/imp.err"
        rc=$?
        kill "$wpid" 2>/dev/null
        wait
        [ $rc -eq 1 ] || { cat "$tmp/imp.err"; fail "fifo, --threads $t: exit $rc, expected 1"; }
        grep ': error: ' "$tmp/imp.err" >"$tmp/got"
        cmp -s "$tmp/want" "$tmp/got" ||
            { echo "run:"; cat "$tmp/want"; echo "import:"; cat "$tmp/got"; fail "fifo, --threads $t: not the run's error"; }
    done
fi
echo ok
