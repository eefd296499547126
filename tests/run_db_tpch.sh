#!/bin/sh
# tests/run_db_tpch.sh REDFOX ANSWERS: `redfox tpch gen --format db` at SF 0.01
# gives, byte for byte, the database that `redfox import` makes of the .tbl
# files `tpch gen` writes; `tpch run` from it answers the 22 queries
# correctly (when ANSWERS, the SF 0.01 answers, exist) and `tpch bench` runs
# on it. Imports with 1, 2 and 3 threads give the same bytes. `tpch gen
# --format db --tables LIST` over a database keeps the tables it does not
# generate (as text keeps their .tbl files): it dropped them. Text tables
# into a database's folder (never read there) are refused.
set -u
redfox=$1
answers=$2
tmp=${TMPDIR:-/tmp}/rf_db_tpch.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
src=$(dirname "$0")/../tpch/queries/schema.logic
"$redfox" tpch gen --sf 0.01 --format db --out "$tmp/gen.db" 2>"$tmp/gen.err" || fail "tpch gen --format db"
# the built-in schema's own warnings (no lang:output) are not the user's to act on
[ -s "$tmp/gen.err" ] && { cat "$tmp/gen.err"; fail "tpch gen --format db printed on stderr"; }
"$redfox" tpch gen --sf 0.01 --out "$tmp/text" || fail "tpch gen"
"$redfox" import "$src" --data "$tmp/text" --out "$tmp/imp.db" || fail "import"
diff -r "$tmp/gen.db" "$tmp/imp.db" || fail "tpch gen --format db and import of the text differ"
# string dictionaries are built by several threads: the same bytes for any number
for t in 1 2 3; do
    "$redfox" import "$src" --data "$tmp/text" --out "$tmp/imp$t.db" --threads $t 2>/dev/null || fail "import --threads $t"
    diff -r "$tmp/imp.db" "$tmp/imp$t.db" || fail "import with --threads $t differs"
done
# --tables over the database: supplier anew at SF 0.02, the other seven kept
cp -r "$tmp/gen.db" "$tmp/sub.db" || fail "cp"
"$redfox" tpch gen --sf 0.02 --format db --tables supplier --out "$tmp/sub.db" || fail "tpch gen --tables supplier over a database"
"$redfox" tpch gen --sf 0.02 --format db --out "$tmp/gen2.db" || fail "tpch gen --sf 0.02"
for f in "$tmp/gen.db"/t0000[0234567].*; do # the files of every table but supplier (t00001), as they were
    cmp -s "$f" "$tmp/sub.db/${f##*/}" || fail "tpch gen --tables supplier changed or dropped ${f##*/}"
done
for f in "$tmp/gen2.db"/t00001.*; do # supplier's, as a whole SF 0.02 database has them
    cmp -s "$f" "$tmp/sub.db/${f##*/}" || fail "tpch gen --tables supplier did not write ${f##*/}"
done
"$redfox" tpch bench --data "$tmp/sub.db" --device cpu --repeat 1 --queries 1 >"$tmp/sub.out" 2>&1 || { cat "$tmp/sub.out"; fail "bench on the kept tables"; }
grep -q "SF 0.02," "$tmp/sub.out" || { cat "$tmp/sub.out"; fail "supplier's SF is not 0.02"; }
if [ -f "$answers/q01.csv" ]; then
    "$redfox" tpch run --data "$tmp/sub.db" --device cpu --queries 1 --check "$answers" >"$tmp/sub.out" 2>&1 || { cat "$tmp/sub.out"; fail "q01 on the kept lineitem"; }
fi
if [ -f "$answers/q01.csv" ]; then
    "$redfox" tpch run --data "$tmp/gen.db" --device cpu --check "$answers" >"$tmp/run.out" 2>&1 || { cat "$tmp/run.out"; fail "tpch run --check from the database"; }
    grep -q "22 of 22 queries pass" "$tmp/run.out" || { cat "$tmp/run.out"; fail "not all 22 pass"; }
fi
"$redfox" tpch bench --data "$tmp/gen.db" --sf 0.01 --device cpu --repeat 1 --queries 6,13 >"$tmp/bench.out" 2>&1 || { cat "$tmp/bench.out"; fail "tpch bench from the database"; }
grep -q "^q06 " "$tmp/bench.out" || { cat "$tmp/bench.out"; fail "tpch bench printed no Q06"; }
# text tables into a database's folder would never be read (its manifest
# makes it the database): refused, nothing written (it wrote them, exit 0)
"$redfox" tpch gen --sf 0.01 --tables region --out "$tmp/gen.db" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF "gen.db: error: is a redfox database (it holds manifest.rfdb)" "$tmp/err" || { cat "$tmp/err"; fail "tpch gen of text into a database"; }
[ -e "$tmp/gen.db/region.tbl" ] && fail "tpch gen wrote text into a database"
echo ok
