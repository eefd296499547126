#!/bin/sh
# tests/run_db_keyorder.sh REDFOX: `redfox import` checks a declared key by
# the rows' order where the rows come in key order (tools/db_import_order.c:
# each block's rows compared with the row before, the first with the
# previous block's last), and reads the key back and groups it only where
# they do not. A file in key order (two int columns, as dbgen's lineitem)
# and a functional predicate keyed by a string, each in order, are taken
# without reading back (--profile says so), with 1, 2, 3 and 7 threads and
# with text blocks of 4 KiB (hundreds of blocks, so rows are compared
# across blocks); the database answers as the text does. A duplicate key
# in the first, the middle and the last part of the file, a key repeated
# from far back, and a repeated value of the string key are refused with
# the text run's message (file:line, both lines) and exit status, whatever
# the threads and the blocks. Rows out of order with no duplicate are
# accepted (by the grouped check). A failed import leaves no database. A
# header alone in the first text block (a block of no rows) does not stop
# the next blocks' order check (it waited for ever for the header's turn).
# A repeated key after quoted fields that span lines is named by the line
# its record starts on, as the text run names it (not by its row number).
# A float key column is compared in the language's total order (NaN one
# value, above inf): a NaN between two rows of a repeated two-column key
# made each row seem above the one before, and the repeat was taken.
# Several predicates reading one file: each one's key and functional
# dependency is checked (only the first predicate's was: a key declared by
# the second was never checked, and the import took a file the text run
# refuses).
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_db_keyorder.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# 30,000 rows in (ok, ln) order: 4 lines an order, order keys 1, 4, 7, ...
awk 'BEGIN { for (i = 0; i < 30000; i++) printf "%d|%d|%d.%02d|note %d of a row\n", 1 + int(i / 4) * 3, 1 + i % 4, i % 50, i % 100, i }' \
    >"$tmp/data/items.tbl"
# 3,000 names in byte order, each with one price
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "name%05d|%d.%02d\n", i, i % 90, i % 100 }' >"$tmp/data/prices.tbl"
cat >"$tmp/prog.logic" <<'EOF'
item(ok, ln, qty, note) -> int(ok), int(ln), decimal(qty), string(note).
lang:input[`item] = "items.tbl".
lang:input:key[`item] = "ok, ln".
price[name] = p -> string(name), decimal(p).
lang:input[`price] = "prices.tbl".
lines[] = c <- agg<<c = count()>> item(_, _, _, _).
lang:output[`lines] = "lines".
qty[] = s <- agg<<s = total(q)>> item(_, _, q, _).
lang:output[`qty] = "qty".
dear[n] = p <- price[n] = p, p > 88.5.
lang:output[`dear] = "dear".
EOF
"$redfox" run "$tmp/prog.logic" --data "$tmp/data" --device cpu --format csv >"$tmp/out.text" 2>/dev/null || fail "run from text"
grep -q "^30000" "$tmp/out.text" || { cat "$tmp/out.text"; fail "the text run counts other rows"; }
for t in 1 2 3 7; do
    for b in 0 4096; do
        opt=""
        [ "$b" = 0 ] || opt="--text-block $b"
        "$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db$t.$b" --threads $t $opt --profile \
            2>"$tmp/err" || { cat "$tmp/err"; fail "import --threads $t $opt"; }
        grep -q "keys: 2 held by the rows' order.*, 0 read back" "$tmp/err" ||
            { cat "$tmp/err"; fail "import --threads $t $opt read keys in order back"; }
        # the profile's bytes written are the database's files (all but the manifest)
        want_mb=$(find "$tmp/db$t.$b" -type f ! -name manifest.rfdb -printf "%s\n" | awk '{s += $1} END {printf "%.1f", s / 1e6}')
        grep -q "files: $want_mb MB written" "$tmp/err" ||
            { grep "files:" "$tmp/err"; fail "import --threads $t $opt: the profile's bytes written are not $want_mb MB"; }
        "$redfox" run "$tmp/prog.logic" --data "$tmp/db$t.$b" --device cpu --format csv >"$tmp/out.db" 2>/dev/null ||
            fail "run from the database of --threads $t $opt"
        cmp -s "$tmp/out.text" "$tmp/out.db" || { diff "$tmp/out.text" "$tmp/out.db" | head; fail "the database answers otherwise"; }
    done
done
diff -r "$tmp/db1.0" "$tmp/db7.0" || fail "import with 7 threads differs from 1"
# the same message and status as the text run: $1 names the case, $2 the
# file changed, $3 an awk program that changes it
refused() {
    rm -rf "$tmp/bad"
    mkdir -p "$tmp/bad"
    cp "$tmp/data/items.tbl" "$tmp/data/prices.tbl" "$tmp/bad/"
    awk "$3" "$tmp/data/$2" >"$tmp/bad/$2"
    cmp -s "$tmp/data/$2" "$tmp/bad/$2" && fail "$1: the file is unchanged"
    "$redfox" run "$tmp/prog.logic" --data "$tmp/bad" --device cpu >/dev/null 2>"$tmp/err.text"
    want_rc=$?
    [ "$want_rc" = 1 ] || { cat "$tmp/err.text"; fail "$1: the text run exits $want_rc"; }
    want=$(grep -m 1 "error:" "$tmp/err.text" | sed "s|$tmp/bad/||")
    case "$want" in *"$4"*) ;; *) cat "$tmp/err.text"; fail "$1: the text run reports otherwise (want $4)" ;; esac
    for t in 1 2 3 7; do
        for b in 0 4096; do
            opt=""
            [ "$b" = 0 ] || opt="--text-block $b"
            "$redfox" import "$tmp/prog.logic" --data "$tmp/bad" --out "$tmp/bdb" --threads $t $opt >/dev/null 2>"$tmp/err"
            rc=$?
            [ "$rc" = "$want_rc" ] || { cat "$tmp/err"; fail "$1: import --threads $t $opt exits $rc, not $want_rc"; }
            got=$(grep -m 1 "error:" "$tmp/err" | sed "s|$tmp/bad/||")
            [ "$got" = "$want" ] || { echo "want: $want"; echo "got:  $got"; fail "$1: import --threads $t $opt"; }
            [ "$(grep -c "error:" "$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "$1: more than one error"; }
            [ -e "$tmp/bdb" ] && fail "$1: a failed import left a database"
        done
    done
}
refused "first" items.tbl 'NR == 2 { sub(/^1\|2\|/, "1|1|") } { print }' "items.tbl:2:1: error: the key (ok, ln) = (1, 1) of line 2 is already on line 1"
refused "middle" items.tbl 'NR == 15002 { sub(/\|2\|/, "|1|") } { print }' "items.tbl:15002:1: error: the key (ok, ln) = (11251, 1) of line 15002 is already on line 15001"
refused "last" items.tbl 'NR == 30000 { sub(/\|4\|/, "|3|") } { print }' "items.tbl:30000:1: error: the key (ok, ln) = (22498, 3) of line 30000 is already on line 29999"
# at the edge of the first two 4 KiB blocks: block 1 holds the lines that
# end within the file's first 4,096 bytes, so line k + 1 starts block 2
k=$(head -c 4096 "$tmp/data/items.tbl" | tr -cd '\n' | wc -c)
kkey=$(sed -n "${k}p" "$tmp/data/items.tbl" | cut -d'|' -f1,2)
kcomma=$(echo "$kkey" | sed 's/|/, /')
refused "block edge" items.tbl "NR == $k + 1 { sub(/^[0-9]+\\|[0-9]+\\|/, \"$kkey|\") } { print }" \
    "items.tbl:$((k + 1)):1: error: the key (ok, ln) = ($kcomma) of line $((k + 1)) is already on line $k"
refused "far back" items.tbl 'NR == 29000 { sub(/^[0-9]+\|[0-9]+\|/, "25|2|") } { print }' "items.tbl:29000:1: error: the key (ok, ln) = (25, 2) of line 29000 is already on line 34"
refused "string key" prices.tbl 'NR == 2500 { sub(/^name[0-9]+/, "name02498") } { print }' "prices.tbl:2500:1: error: functional dependency violated"
# out of order, no duplicate: rows 100 and 20,000 swapped
awk 'NR == FNR { if (FNR == 100) a = $0; if (FNR == 20000) b = $0; next }
     FNR == 100 { print b; next } FNR == 20000 { print a; next } { print }' \
    "$tmp/data/items.tbl" "$tmp/data/items.tbl" >"$tmp/items.swapped"
mkdir -p "$tmp/swap"
cp "$tmp/items.swapped" "$tmp/swap/items.tbl"
cp "$tmp/data/prices.tbl" "$tmp/swap/"
cmp -s "$tmp/data/items.tbl" "$tmp/swap/items.tbl" && fail "the swapped file is unchanged"
for t in 1 3; do
    "$redfox" import "$tmp/prog.logic" --data "$tmp/swap" --out "$tmp/sdb$t" --threads $t --text-block 4096 --profile \
        2>"$tmp/err" || { cat "$tmp/err"; fail "import of rows out of order, --threads $t"; }
    grep -q "keys: 1 held by the rows' order.*, 1 read back and grouped" "$tmp/err" ||
        { cat "$tmp/err"; fail "rows out of order were not grouped"; }
done
"$redfox" run "$tmp/prog.logic" --data "$tmp/sdb3" --device cpu --format csv >"$tmp/out.swap" 2>/dev/null || fail "run from the swapped database"
cmp -s "$tmp/out.text" "$tmp/out.swap" || { diff "$tmp/out.text" "$tmp/out.swap" | head; fail "the swapped database answers otherwise"; }
# a header line in a block of its own, then rows in key order: the import
# ends (under timeout: a hang is exit 124) and answers as the text does
mkdir -p "$tmp/hdr"
{ echo "ok|ln|qty|note"; head -n 2000 "$tmp/data/items.tbl"; } >"$tmp/hdr/items.tbl"
cp "$tmp/data/prices.tbl" "$tmp/hdr/"
sed 's/^lang:input:key\[`item\] = "ok, ln"./&\nlang:input:header[`item] = true./' "$tmp/prog.logic" >"$tmp/hdr.logic"
grep -q 'header\[`item\]' "$tmp/hdr.logic" || fail "no header in hdr.logic"
"$redfox" run "$tmp/hdr.logic" --data "$tmp/hdr" --device cpu --format csv >"$tmp/out.hdrtext" 2>"$tmp/err" || { cat "$tmp/err"; fail "text run with a header"; }
for tb in 1 16 4096; do
    rm -rf "$tmp/hdb"
    timeout 60 "$redfox" import "$tmp/hdr.logic" --data "$tmp/hdr" --out "$tmp/hdb" --text-block $tb 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/err"; fail "import with a header, --text-block $tb: exit $rc"; }
    "$redfox" run "$tmp/hdr.logic" --data "$tmp/hdb" --device cpu --format csv >"$tmp/out.hdb" 2>/dev/null || fail "run from the database with a header"
    cmp -s "$tmp/out.hdrtext" "$tmp/out.hdb" || fail "the database with a header (--text-block $tb) answers otherwise"
done
# records spanning lines (quoted line ends), then a repeated key: the
# import names the lines as the text run does, whatever the blocks
mkdir -p "$tmp/ml"
printf 'ok|ln|qty|note\n1|1|1.5|"two\nlines"\n2|1|2|"three\n\nlines"\n1|1|3|plain\n' >"$tmp/ml/items.tbl"
cp "$tmp/data/prices.tbl" "$tmp/ml/"
"$redfox" run "$tmp/hdr.logic" --data "$tmp/ml" --device cpu >/dev/null 2>"$tmp/err.text" && fail "the text run took a repeated key"
grep -q "items.tbl:7:1: error: the key (ok, ln) = (1, 1) of line 7 is already on line 2" "$tmp/err.text" ||
    { cat "$tmp/err.text"; fail "the text run names other lines"; }
for tb in 1 4096; do
    rm -rf "$tmp/mdb"
    timeout 60 "$redfox" import "$tmp/hdr.logic" --data "$tmp/ml" --out "$tmp/mdb" --text-block $tb 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "import of a repeated key after records spanning lines: exit $rc"; }
    grep -F "$(sed 's/^[^:]*://' "$tmp/err.text")" "$tmp/err" >/dev/null ||
        { cat "$tmp/err"; fail "import (--text-block $tb) names other lines than the text run"; }
done
# a float key with NaN: (1.0, 5) repeated on line 4, a NaN on line 3 between
mkdir -p "$tmp/nan"
printf '1.0|5|a\n2.0|1|b\nnan|2|c\n1.0|5|d\n' >"$tmp/nan/f.tbl"
for decl in 'f(x, y, s) -> float(x), int(y), string(s).
lang:input:key[`f] = "x, y".' 'f[x, y] = s -> float(x), int(y), string(s).'; do
    printf '%s\nlang:input[`f] = "f.tbl".\nlang:output[`f] = "f".\n' "$decl" >"$tmp/nan.logic"
    "$redfox" run "$tmp/nan.logic" --data "$tmp/nan" --device cpu >/dev/null 2>"$tmp/err.text" && fail "the text run took a repeated float key"
    grep -q "f.tbl:4:1: error: .*(1.0, 5)" "$tmp/err.text" || { cat "$tmp/err.text"; fail "the text run names another row"; }
    for t in 1 2; do
        rm -rf "$tmp/ndb"
        "$redfox" import "$tmp/nan.logic" --data "$tmp/nan" --out "$tmp/ndb" --threads $t >/dev/null 2>"$tmp/err"
        rc=$?
        [ $rc -eq 1 ] || { cat "$tmp/err"; fail "import of a repeated float key beside a NaN (--threads $t): exit $rc"; }
        grep -F "$(sed 's/^[^:]*://' "$tmp/err.text")" "$tmp/err" >/dev/null ||
            { cat "$tmp/err"; fail "import (--threads $t) of a repeated float key: another message than the text run's"; }
        [ -e "$tmp/ndb" ] && fail "a failed import of a float key left a database"
    done
done
# two or three predicates of one file, the key or dependency broken on the
# second or third: refused as the text run refuses it, naming that predicate
mkdir -p "$tmp/two"
printf '1|2\n3|4\n1|5\n' >"$tmp/two/t.tbl"
for decl in 'b(x, y) -> int(x), int(y).
lang:input:key[`b] = "x".' 'b[x] = y -> int(x), int(y).' 'b(x, y) -> int(x), int(y).
lang:input:key[`b] = "y".
c[x] = y -> int(x), int(y).
lang:input[`c] = "t.tbl".
lang:output[`c] = "c".'; do
    printf 'a(x, y) -> int(x), int(y).\nlang:input[`a] = "t.tbl".\n%s\nlang:input[`b] = "t.tbl".\nlang:output[`a] = "a".\nlang:output[`b] = "b".\n' \
        "$decl" >"$tmp/two.logic"
    "$redfox" run "$tmp/two.logic" --data "$tmp/two" --device cpu >/dev/null 2>"$tmp/err.text" && fail "the text run took a second predicate's repeated key"
    grep -q "t.tbl:3:1: error: .*\`[bc]\`" "$tmp/err.text" || { cat "$tmp/err.text"; fail "the text run names another predicate or line"; }
    rm -rf "$tmp/tdb"
    "$redfox" import "$tmp/two.logic" --data "$tmp/two" --out "$tmp/tdb" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "import of a file whose second predicate's key repeats: exit $rc"; }
    grep -F "$(sed 's/^[^:]*://' "$tmp/err.text")" "$tmp/err" >/dev/null ||
        { cat "$tmp/err"; cat "$tmp/err.text"; fail "import of two predicates of one file: another message than the text run's"; }
    [ -e "$tmp/tdb" ] && fail "a failed import of two predicates of one file left a database"
done
# ... and taken where the keys hold, the database answering as the text
printf '1|2\n3|4\n' >"$tmp/two/t.tbl"
"$redfox" run "$tmp/two.logic" --data "$tmp/two" --device cpu --format csv >"$tmp/out.two" 2>"$tmp/err" || { cat "$tmp/err"; fail "text run of two predicates of one file"; }
"$redfox" import "$tmp/two.logic" --data "$tmp/two" --out "$tmp/tdb" --profile 2>"$tmp/err" || { cat "$tmp/err"; fail "import of two predicates of one file"; }
grep -q "keys: 0 held by the rows' order.*, 2 read back and grouped" "$tmp/err" || { cat "$tmp/err"; fail "the second and third predicates' checks not counted"; }
"$redfox" run "$tmp/two.logic" --data "$tmp/tdb" --device cpu --format csv >"$tmp/out.twodb" 2>/dev/null || fail "run from the database of two predicates of one file"
cmp -s "$tmp/out.two" "$tmp/out.twodb" || fail "two predicates of one file: the database answers otherwise"
# two predicates reading one file with other columns: one table per file, said
printf 'a(x, y) -> int(x), int(y).\nlang:input[`a] = "t.tbl".\nb(x, y) -> int(x), string(y).\nlang:input[`b] = "t.tbl".\nlang:output[`a] = "a".\nlang:output[`b] = "b".\n' >"$tmp/twotypes.logic"
rm -rf "$tmp/tdb"
"$redfox" import "$tmp/twotypes.logic" --data "$tmp/two" --out "$tmp/tdb" >/dev/null 2>"$tmp/err" && fail "import of one file as two tables"
grep -qF 't.tbl: error: `a` and `b` both read this file, with different columns or format: a database holds one table per file' "$tmp/err" ||
    { cat "$tmp/err"; fail "one file as two tables: the message does not say why"; }
# NaN keys that rise in that order ((nan, 1), (nan, 2)) are distinct: taken
printf 'nan|1|a\nnan|2|b\ninf|3|c\n' >"$tmp/nan/f.tbl"
rm -rf "$tmp/ndb"
"$redfox" import "$tmp/nan.logic" --data "$tmp/nan" --out "$tmp/ndb" 2>"$tmp/err" || { cat "$tmp/err"; fail "import of distinct NaN keys"; }
echo ok
