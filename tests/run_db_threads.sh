#!/bin/sh
# tests/run_db_threads.sh REDFOX: `redfox import` of an RFC 4180 file large
# enough to be parsed and encoded by several threads (over 8 MiB, tens of
# thousands of rows), with quoted fields that hold the delimiter, doubled
# quotes and line ends (records spanning lines, some at every thread's
# chunk edge), gives the same database byte for byte with 1, 2 and 3
# threads; runs from it answer as from the text; and a bad value after
# many spanning records is refused at the same file:line:col as the text
# run names, whatever the thread count.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_db_threads.$$
mkdir -p "$tmp/data" "$tmp/bad"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# 90,000 rows (about 11 MB): every 7th name is quoted with a comma, every
# 11th holds a doubled quote, every 13th spans two lines (LF), every 17th
# three (CRLF inside); a category of 5 values (a dictionary), a note of
# mostly distinct strings (stored plain)
awk 'BEGIN {
    print "id,name,category,price,day,note"
    for (i = 1; i <= 90000; i++) {
        name = "name" i
        if (i % 7 == 0) name = "\"last, first " i "\""
        else if (i % 11 == 0) name = "\"say \"\"hi\"\" " i "\""
        else if (i % 13 == 0) name = "\"two\nlines " i "\""
        else if (i % 17 == 0) name = "\"three\r\nlines\nnow " i "\""
        printf "%d,%s,cat%d,%d.%02d,1995-%02d-%02d,\"note %d, with some text to make the row long enough %d\"\n", \
            i, name, i % 5, i % 1000, i % 100, 1 + i % 12, 1 + i % 28, i * 7919 % 100003, i
    }
}' >"$tmp/data/rows.csv"
cat >"$tmp/prog.logic" <<'EOF'
row(id, name, category, price, day, note) -> int(id), string(name), string(category), decimal(price), date(day), string(note).
lang:input[`row] = "rows.csv".
lang:input:delimiter[`row] = ",".
lang:input:header[`row] = true.
lang:input:key[`row] = "id".
by_cat[c] = n <- agg<<n = count()>> row(_, _, c, _, _, _).
lang:output[`by_cat] = "by_cat".
total[c] = s <- agg<<s = total(p)>> row(_, _, c, p, _, _).
lang:output[`total] = "total".
spanning(id, name) <- row(id, name, _, _, _, _), id % 1000 = 221.
lang:output[`spanning] = "spanning".
EOF
for t in 1 2 3; do
    "$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db$t" --threads $t 2>"$tmp/err$t" ||
        { cat "$tmp/err$t"; fail "import --threads $t"; }
done
diff -r "$tmp/db1" "$tmp/db2" || fail "import with 2 threads differs from 1"
diff -r "$tmp/db1" "$tmp/db3" || fail "import with 3 threads differs from 1"
"$redfox" run "$tmp/prog.logic" --data "$tmp/data" --device cpu --format csv >"$tmp/out.text" 2>/dev/null || fail "run from text"
"$redfox" run "$tmp/prog.logic" --data "$tmp/db2" --device cpu --format csv >"$tmp/out.db" 2>/dev/null || fail "run from the database"
cmp -s "$tmp/out.text" "$tmp/out.db" || { diff "$tmp/out.text" "$tmp/out.db" | head; fail "the database answers otherwise than the text"; }
grep -q "two\$" "$tmp/out.text" || fail "no spanning name in the output"
# a bad price on row 80,000: thousands of records spanning lines come before it
awk -F, '/^80000,/ { sub(/,[0-9]+\.[0-9]+,/, ",12.3x4,") } { print }' "$tmp/data/rows.csv" >"$tmp/bad/rows.csv"
"$redfox" run "$tmp/prog.logic" --data "$tmp/bad" --device cpu >/dev/null 2>"$tmp/err.text" && fail "the text run took a bad price"
want=$(grep -m 1 "error:" "$tmp/err.text")
case "$want" in *rows.csv:*:*": expected a decimal"*) ;; *) cat "$tmp/err.text"; fail "no located error from the text run" ;; esac
for t in 1 2 3; do
    "$redfox" import "$tmp/prog.logic" --data "$tmp/bad" --out "$tmp/bad$t" --threads $t >/dev/null 2>"$tmp/berr$t" &&
        fail "import --threads $t took a bad price"
    grep -qF -- "$want" "$tmp/berr$t" || { echo "want: $want"; cat "$tmp/berr$t"; fail "import --threads $t names another place"; }
    [ -e "$tmp/bad$t" ] && fail "a failed import left a database"
done
echo ok
