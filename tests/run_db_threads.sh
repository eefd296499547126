#!/bin/sh
# tests/run_db_threads.sh REDFOX: `redfox import` of an RFC 4180 file large
# enough to be parsed and encoded by several threads (over 8 MiB, tens of
# thousands of rows), with quoted fields that hold the delimiter, doubled
# quotes and line ends (records spanning lines, some at every thread's
# chunk edge), gives the same database byte for byte with 1, 2, 3 and 7
# threads, with text parsed over 8 MiB at a time (a window whose last line
# end is inside a quoted field) or 1 MiB at a time (and with small blocks,
# where big columns are written by several threads, a piece of blocks
# each, and dictionaries of thousands of strings are built side by side);
# runs from it answer as from the text; a bad value after many spanning
# records is refused at the same file:line:col as the text run names,
# whatever the thread count; a late duplicate key is reported at the first
# duplicate in file order; and a failed table's key check, run beside the
# next file's parsing, is reported before (and instead of) that file's own
# error. A failed import leaves no database and no temporary folder.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_db_threads.$$
mkdir -p "$tmp/data" "$tmp/bad"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# 90,000 rows (about 11 MB): every 7th name is quoted with a comma, every
# 11th holds a doubled quote, every 13th spans two lines (LF), every 17th
# three (CRLF inside); a category of 5 values (a dictionary), a note of
# mostly distinct strings (stored plain), a city of 2,000 and a tag of
# 3,001 values (dictionaries of many strings)
awk 'BEGIN {
    print "id,name,category,price,day,note,city,tag"
    for (i = 1; i <= 90000; i++) {
        name = "name" i
        if (i % 7 == 0) name = "\"last, first " i "\""
        else if (i % 11 == 0) name = "\"say \"\"hi\"\" " i "\""
        else if (i % 13 == 0) name = "\"two\nlines " i "\""
        else if (i % 17 == 0) name = "\"three\r\nlines\nnow " i "\""
        printf "%d,%s,cat%d,%d.%02d,1995-%02d-%02d,\"note %d, with some text to make the row long enough %d\",city%d,t%d\n", \
            i, name, i % 5, i % 1000, i % 100, 1 + i % 12, 1 + i % 28, i * 7919 % 100003, i, i % 2000, i * 7 % 3001
    }
}' >"$tmp/data/rows.csv"
cat >"$tmp/prog.logic" <<'EOF'
row(id, name, category, price, day, note, city, tag) -> int(id), string(name), string(category), decimal(price), date(day),
    string(note), string(city), string(tag).
lang:input[`row] = "rows.csv".
lang:input:delimiter[`row] = ",".
lang:input:header[`row] = true.
lang:input:key[`row] = "id".
small(k, v) -> int(k), string(v).
lang:input[`small] = "small.csv".
lang:input:delimiter[`small] = ",".
lang:input:key[`small] = "k".
by_cat[c] = n <- agg<<n = count()>> row(_, _, c, _, _, _, _, _).
lang:output[`by_cat] = "by_cat".
total[c] = s <- agg<<s = total(p)>> row(_, _, c, p, _, _, _, _).
lang:output[`total] = "total".
spanning(id, name) <- row(id, name, _, _, _, _, _, _), id % 1000 = 221.
lang:output[`spanning] = "spanning".
by_city[c] = n <- agg<<n = count()>> row(_, _, _, _, _, _, c, t), small(_, t).
lang:output[`by_city] = "by_city".
EOF
awk 'BEGIN { for (i = 0; i < 3001; i += 3) printf "%d,t%d\n", i, i }' >"$tmp/data/small.csv"
for t in 1 2 3 7; do
    "$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db$t" --threads $t 2>"$tmp/err$t" ||
        { cat "$tmp/err$t"; fail "import --threads $t"; }
done
for t in 2 3 7; do diff -r "$tmp/db1" "$tmp/db$t" || fail "import with $t threads differs from 1"; done
# text blocks of over 8 MiB, ending just after the line end inside a quoted
# field (the block's '"' found by several threads, so it is cut where the
# record before ends), and of 1 MiB (records that span lines at many block
# edges): the same database
big=$(awk '{ off += length($0) + 1; if (off > 8388608 && /"two$/) { print off + 3; exit } }' "$tmp/data/rows.csv")
[ -n "$big" ] || fail "no record spanning lines after 8 MiB"
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/tb8m" --threads 3 --text-block "$big" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "import --text-block $big"; }
diff -r "$tmp/db1" "$tmp/tb8m" || fail "import with text blocks of $big bytes differs"
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/tb1m" --threads 2 --text-block 1048576 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "import --text-block 1048576"; }
diff -r "$tmp/db1" "$tmp/tb1m" || fail "import with 1 MiB text blocks differs"
# blocks of 1,024 rows: the note column is written in pieces by several threads
for t in 1 7; do
    "$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/sb$t" --threads $t --block-rows 1024 2>"$tmp/err$t" ||
        { cat "$tmp/err$t"; fail "import --threads $t --block-rows 1024"; }
done
diff -r "$tmp/sb1" "$tmp/sb7" || fail "import --block-rows 1024 with 7 threads differs from 1"
"$redfox" run "$tmp/prog.logic" --data "$tmp/sb7" --device cpu --format csv >"$tmp/out.sb" 2>/dev/null || fail "run from the small-block database"
"$redfox" run "$tmp/prog.logic" --data "$tmp/data" --device cpu --format csv >"$tmp/out.text" 2>/dev/null || fail "run from text"
"$redfox" run "$tmp/prog.logic" --data "$tmp/db2" --device cpu --format csv >"$tmp/out.db" 2>/dev/null || fail "run from the database"
cmp -s "$tmp/out.text" "$tmp/out.db" || { diff "$tmp/out.text" "$tmp/out.db" | head; fail "the database answers otherwise than the text"; }
cmp -s "$tmp/out.text" "$tmp/out.sb" || { diff "$tmp/out.text" "$tmp/out.sb" | head; fail "the small-block database answers otherwise than the text"; }
grep -q "city1999" "$tmp/out.text" || fail "no city in the output"
grep -q "two\$" "$tmp/out.text" || fail "no spanning name in the output"
# a bad price on row 80,000: thousands of records spanning lines come before it
awk -F, '/^80000,/ { sub(/,[0-9]+\.[0-9]+,/, ",12.3x4,") } { print }' "$tmp/data/rows.csv" >"$tmp/bad/rows.csv"
cp "$tmp/data/small.csv" "$tmp/bad/small.csv"
"$redfox" run "$tmp/prog.logic" --data "$tmp/bad" --device cpu >/dev/null 2>"$tmp/err.text" && fail "the text run took a bad price"
want=$(grep -m 1 "error:" "$tmp/err.text")
case "$want" in *rows.csv:*:*": expected a decimal"*) ;; *) cat "$tmp/err.text"; fail "no located error from the text run" ;; esac
for t in 1 2 3; do
    "$redfox" import "$tmp/prog.logic" --data "$tmp/bad" --out "$tmp/bad$t" --threads $t >/dev/null 2>"$tmp/berr$t" &&
        fail "import --threads $t took a bad price"
    grep -qF -- "$want" "$tmp/berr$t" || { echo "want: $want"; cat "$tmp/berr$t"; fail "import --threads $t names another place"; }
    [ -e "$tmp/bad$t" ] && fail "a failed import left a database"
done
# duplicate keys late in the file, at rows 70,000 (of row 69,000) and 85,000
# (of row 84,000): the first in file order is reported, as the text run
# reports it; and small.csv's bad value, parsed while rows.csv's key is
# checked, is not what is reported
mkdir -p "$tmp/dup"
awk '/^70000,/ { sub(/^70000,/, "69000,") } /^85000,/ { sub(/^85000,/, "84000,") } { print }' "$tmp/data/rows.csv" >"$tmp/dup/rows.csv"
cp "$tmp/data/small.csv" "$tmp/dup/small.csv"
"$redfox" run "$tmp/prog.logic" --data "$tmp/dup" --device cpu >/dev/null 2>"$tmp/err.dup" && fail "the text run took a duplicate key"
# (the import names the rows' lines as if no record spanned lines: its key
# check reads the database, which keeps no line numbers; so the message is
# compared from "the key" on)
want=$(grep -m 1 "error:" "$tmp/err.dup" | sed 's/.*error: \(the key ([a-z]*) = ([0-9]*)\).*/\1/')
case "$want" in "the key (id) = (69000)") ;; *) cat "$tmp/err.dup"; fail "no key error of row 70,000 from the text run" ;; esac
sed 's/^30,t30$/30x,t30/' "$tmp/data/small.csv" >"$tmp/dup/small.csv"
grep -q "^30x," "$tmp/dup/small.csv" || fail "no bad key in small.csv"
for t in 1 2 3 7; do
    "$redfox" import "$tmp/prog.logic" --data "$tmp/dup" --out "$tmp/dup$t" --threads $t >/dev/null 2>"$tmp/derr$t" &&
        fail "import --threads $t took a duplicate key"
    grep -q "rows.csv:[0-9]*:1: error: $want" "$tmp/derr$t" || { echo "want: $want"; cat "$tmp/derr$t"; fail "import --threads $t names another key"; }
    [ "$(grep -c "error:" "$tmp/derr$t")" = 1 ] || { cat "$tmp/derr$t"; fail "import --threads $t reports more than the first error"; }
    grep -q "small.csv" "$tmp/derr$t" && { cat "$tmp/derr$t"; fail "import --threads $t reports the later file's error"; }
    [ -e "$tmp/dup$t" ] && fail "a failed import left a database"
done
ls "$tmp" | grep -q "\.tmp\." && fail "a failed import left its temporary folder"
echo ok
