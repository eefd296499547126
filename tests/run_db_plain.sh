#!/bin/sh
# tests/run_db_plain.sh REDFOX TESTS: plain string columns and per-block
# checksums (docs/DATABASE.md, format 2.0). `import --strings auto` stores a
# column of mostly distinct strings plain and one of few distinct strings with
# a dictionary; both, and --strings plain|dict, give the text's answers; a
# damaged or truncated strings file, offsets file or column block is refused
# with the file (and the block) named and exit 1; a block that only a skipped
# block range holds is not read; format 1.0 and 2.1 databases (TESTS/db_v1,
# TESTS/db_v2) still read; a bad --strings is a usage error.
set -u
redfox=$1
tests=$2
tmp=${TMPDIR:-/tmp}/rf_db_plain.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$tmp/prog.logic" <<'P'
t(k, c, s, d) -> int(k), string(c), string(s), date(d).
lang:input[`t] = "t.tbl".
lang:input:key[`t] = "k".
out(s, n, x, y) <- agg<<n = count(), x = max(k), y = min(c)>> t(k, c, s, _), string:like(c, "%7%").
lang:output[`out] = "out".
P
# 100,000 rows: c mostly distinct (UTF-8 too), s of 97 strings, d in date order
awk 'BEGIN { for (i = 1; i <= 100000; i++) printf "%d|c%d\303\251%d|s%d|%04d-01-01|\n", i, i * 7919 % 100003, i % 3, i % 97, 1000 + int(i / 1000) }' >"$tmp/data/t.tbl"
"$redfox" run "$tmp/prog.logic" --data "$tmp/data" --device cpu --format csv >"$tmp/text.out" 2>"$tmp/err" || { cat "$tmp/err"; fail "text run"; }
for mode in auto plain dict; do
    "$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db.$mode" --strings $mode --block-rows 4096 2>"$tmp/err" || { cat "$tmp/err"; fail "import --strings $mode"; }
    "$redfox" run "$tmp/prog.logic" --data "$tmp/db.$mode" --device cpu --format csv >"$tmp/db.out" 2>"$tmp/err" || { cat "$tmp/err"; fail "run from --strings $mode"; }
    cmp -s "$tmp/text.out" "$tmp/db.out" || fail "--strings $mode: output differs from text"
done
# auto: c plain, s a dictionary; plain: both; dict: neither
[ -f "$tmp/db.auto/t00000.c00001.str" ] && [ ! -e "$tmp/db.auto/t00000.c00001.dict" ] || fail "auto: the distinct column is not plain"
[ -f "$tmp/db.auto/t00000.c00002.dict" ] && [ ! -e "$tmp/db.auto/t00000.c00002.str" ] || fail "auto: the 97-string column is not a dictionary"
[ -f "$tmp/db.plain/t00000.c00002.str" ] || fail "plain: a column has a dictionary"
ls "$tmp/db.dict" | grep -q "\.str$" && fail "dict: a column is plain"
# auto chooses on the first --text-block's rows (--help): 4 KiB hold fewer
# than 256 rows, too few to tell, so the distinct column gets a dictionary
# (the help said "a column's first 4096 rows" whatever the block)
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db.small" --text-block 4K --block-rows 4096 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "import --text-block 4K"; }
[ -f "$tmp/db.small/t00000.c00001.dict" ] && [ ! -e "$tmp/db.small/t00000.c00001.str" ] ||
    fail "--text-block 4K: the distinct column is not a dictionary, as the help says"
"$redfox" run "$tmp/prog.logic" --data "$tmp/db.small" --device cpu --format csv >"$tmp/db.out" 2>"$tmp/err" || { cat "$tmp/err"; fail "run from --text-block 4K"; }
cmp -s "$tmp/text.out" "$tmp/db.out" || fail "--text-block 4K: output differs from text"

db=$tmp/db.auto
run_db() { "$redfox" run "$tmp/prog.logic" --data "$1" --device cpu --format csv >"$tmp/db.out" 2>"$tmp/db.err"; }
flip() { # FILE OFFSET: one byte xor 0x01
    b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
    printf "$(printf '\\%03o' $(( b ^ 1 )))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
refused() { # NAME TEXT-IN-MESSAGE
    run_db "$tmp/bad"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/db.err"; fail "$1: exit $rc, expected 1"; }
    grep -q -- "$2" "$tmp/db.err" || { cat "$tmp/db.err"; fail "$1: the message does not say $2"; }
}
fresh() { rm -rf "$tmp/bad"; cp -r "$db" "$tmp/bad"; }
str=t00000.c00001.str
ssize=$(wc -c <"$db/$str")
fresh; flip "$tmp/bad/$str" $((ssize / 2)); refused "strings byte flipped" "$str: error: the file is corrupted (checksum mismatch in block"
fresh; head -c $((ssize - 1)) "$db/$str" >"$tmp/bad/$str"; refused "strings truncated" "$str: error: truncated or damaged"
fresh; rm "$tmp/bad/$str"; refused "strings missing" "$str"
fresh; flip "$tmp/bad/t00000.c00001.col" 8; refused "offsets flipped" "t00000.c00001.col: error: the file is corrupted (checksum mismatch in block 1, rows 1 to 4096)"
fresh; head -c 800 "$db/t00000.c00001.col" >"$tmp/bad/t00000.c00001.col"; refused "offsets truncated" "t00000.c00001.col: error: truncated"
# a value column: the damaged block named
# (narrow: a block of 4,096 consecutive keys is 2 bytes a row)
fresh; flip "$tmp/bad/t00000.c00000.col" $((2 * 4096 * 5 + 16)); refused "key block flipped" "t00000.c00000.col: error: the file is corrupted (checksum mismatch in block 6, rows 20481 to 24576)"

# a 1.0 database (written by redfox before format 2.0) still reads
"$redfox" run "$tests/db_v1/prog.logic" --data "$tests/db_v1" --device cpu --format csv >"$tmp/v1.text" 2>"$tmp/err" || fail "v1 text run"
"$redfox" run "$tests/db_v1/prog.logic" --data "$tests/db_v1/db" --device cpu --format csv >"$tmp/v1.db" 2>"$tmp/err" || { cat "$tmp/err"; fail "a 1.0 database is not read"; }
cmp -s "$tmp/v1.text" "$tmp/v1.db" || fail "a 1.0 database gives other answers than its text"
# a 2.1 database (written by redfox before format 3.0: no narrow columns) still reads
"$redfox" run "$tests/db_v2/prog.logic" --data "$tests/db_v2" --device cpu --format csv >"$tmp/v2.text" 2>"$tmp/err" || fail "v2 text run"
"$redfox" run "$tests/db_v2/prog.logic" --data "$tests/db_v2/db" --device cpu --format csv >"$tmp/v2.db" 2>"$tmp/err" || { cat "$tmp/err"; fail "a 2.1 database is not read"; }
cmp -s "$tmp/v2.text" "$tmp/v2.db" || fail "a 2.1 database gives other answers than its text"
# usage
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/x" --strings some >/dev/null 2>&1; [ $? -eq 2 ] || fail "--strings some: not 2"
echo "ok"
