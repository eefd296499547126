#!/bin/sh
# tests/run_db_narrow.sh REDFOX: narrow columns (docs/DATABASE.md "Narrow
# columns") through the command line: `import` writes int, decimal, date and
# string-code columns narrow by default (format 3.0, encoding 2, fewer bytes
# than --narrow off), both give the text's answers on the CPU and in the GPU
# emulator, from whole tables and from skipped blocks; a damaged narrow block
# (its bytes, a width byte in the manifest, a truncated file) is refused with
# the file named and exit 1; --narrow takes on or off.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_db_narrow.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$tmp/prog.logic" <<'P'
t(k, s, d, x, f) -> int(k), string(s), date(d), decimal(x), float(f).
lang:input[`t] = "t.tbl".
lang:input:key[`t] = "k".
r(k, x) <- t(k, _, d, x, _), d >= date:parse["2001-01-01"].
out(s, n, m, a, lo) <- agg<<n = count(), m = max(k), a = total(x), lo = min(d)>> t(k, s, d, x, _), d >= date:parse["2001-01-01"].
lang:output[`r] = "r".
lang:output:orderBy[`r] = "1".
lang:output[`out] = "out".
P
# 150,000 rows in date order (blocks skip), negative keys, prices of cents
awk 'BEGIN { for (i = 1; i <= 150000; i++) printf "%d|s%d|%04d-%02d-%02d|%d.%02d|%d.5|\n", i * 3 - 200000, i % 37, 1999 + int(i / 50000), int(i / 4200) % 12 + 1, i % 28 + 1, i % 1000 - 400, i % 100, i }' >"$tmp/data/t.tbl"
"$redfox" run "$tmp/prog.logic" --data "$tmp/data" --device cpu --format csv >"$tmp/text.out" 2>"$tmp/err" || { cat "$tmp/err"; fail "text run"; }
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db" 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/wide" --narrow off 2>"$tmp/err" || { cat "$tmp/err"; fail "import --narrow off"; }
# format 3.0 both; narrow: fewer bytes in the key, date and decimal columns (the floats' the same)
[ "$(od -A n -t u2 -j 8 -N 4 "$tmp/db/manifest.rfdb" | tr -s ' ')" = " 3 0" ] || fail "not format 3.0"
[ "$(od -A n -t u2 -j 8 -N 4 "$tmp/wide/manifest.rfdb" | tr -s ' ')" = " 3 0" ] || fail "--narrow off: not format 3.0"
for c in 0 1 2 3; do
    n=$(wc -c <"$tmp/db/t00000.c0000$c.col")
    w=$(wc -c <"$tmp/wide/t00000.c0000$c.col")
    [ "$n" -lt "$w" ] || fail "column $c: narrow $n bytes, wide $w"
done
cmp -s "$tmp/db/t00000.c00004.col" "$tmp/wide/t00000.c00004.col" || fail "a float column differs between narrow and wide"
[ "$(wc -c <"$tmp/wide/t00000.c00000.col")" -eq 1200000 ] || fail "--narrow off: the key column is not 8 bytes a row"
for db in db wide; do
    for dev in cpu emu; do
        if [ $dev = emu ]; then
            RF_GPU_EMULATE=1 "$redfox" run "$tmp/prog.logic" --data "$tmp/$db" --device gpu --format csv --profile >"$tmp/o" 2>"$tmp/err"
        else
            "$redfox" run "$tmp/prog.logic" --data "$tmp/$db" --device cpu --format csv --profile >"$tmp/o" 2>"$tmp/err"
        fi
        [ $? -eq 0 ] || { cat "$tmp/err"; fail "$db on $dev"; }
        cmp -s "$tmp/o" "$tmp/text.out" || { diff "$tmp/o" "$tmp/text.out" | head; fail "$db on $dev: not the text's answers"; }
        grep -q "database: [1-9][0-9]* of 3 blocks skipped" "$tmp/err" || { grep database "$tmp/err"; fail "$db on $dev: no block skipped"; }
    done
done
# tpch-style reading of the same database by a second program: every column
cat >"$tmp/all.logic" <<'P'
t(k, s, d, x, f) -> int(k), string(s), date(d), decimal(x), float(f).
lang:input[`t] = "t.tbl".
out(k, s, d, x, f) <- t(k, s, d, x, f), k < -199000.
lang:output[`out] = "out".
P
"$redfox" run "$tmp/all.logic" --data "$tmp/data" --device cpu --format csv >"$tmp/all.text" 2>"$tmp/err" || fail "all: text"
"$redfox" run "$tmp/all.logic" --data "$tmp/db" --device cpu --format csv >"$tmp/all.db" 2>"$tmp/err" || { cat "$tmp/err"; fail "all: db"; }
cmp -s "$tmp/all.text" "$tmp/all.db" || fail "all: the database's rows differ from the text's"

refused() { # $1: what, $2: the message expected
    "$redfox" run "$tmp/prog.logic" --data "$tmp/bad" --device cpu --format csv >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "$1: exit $rc, not 1"; }
    grep -qF -- "$2" "$tmp/err" || { cat "$tmp/err"; fail "$1: no '$2'"; }
}
fresh() { rm -rf "$tmp/bad"; cp -r "$tmp/db" "$tmp/bad"; }
flip() { # flips a bit of byte $2 of file $1
    b=$(od -A n -t u1 -j "$2" -N 1 "$1" | tr -d ' ')
    printf "$(printf '\\%03o' $((b ^ 16)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
# the date column's bytes: block 2 is the rows 65537 to 131072
fresh; flip "$tmp/bad/t00000.c00002.col" $((65536 * 2 + 100)); refused "a narrow block flipped" "t00000.c00002.col: error: the file is corrupted (checksum mismatch in block 2, rows 65537 to 131072)"
fresh; head -c 1000 "$tmp/db/t00000.c00003.col" >"$tmp/bad/t00000.c00003.col"; refused "a narrow column truncated" "t00000.c00003.col: error: truncated or damaged"
# a width byte of the manifest (its checksums made right again): the key column's first block record
# ends with width, exp; the record follows the column's entry. Found by the key column's file name.
python3 - "$(dirname "$0")" "$tmp/db/manifest.rfdb" "$tmp/bad.manifest" <<'PY' || fail "python"
import struct, sys
sys.path.insert(0, sys.argv[1])
from rfdb_manifest import seal
m = bytearray(open(sys.argv[2], 'rb').read())
at = m.find(b't00000.c00000.col') + 17 + 8 + 4 + 8  # the name, size, crc, nblocks
assert m[at + 20] in (1, 2, 4, 8)
m[at + 20] = 3                                      # block 1's width
seal(m)
open(sys.argv[3], 'wb').write(m)
PY
fresh; cp "$tmp/bad.manifest" "$tmp/bad/manifest.rfdb"; refused "a width byte out of range" "manifest.rfdb: error: table 't.tbl' column 1 block 1: a width out of range"
# usage
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/x" --narrow some >/dev/null 2>&1; [ $? -eq 2 ] || fail "--narrow some: not 2"
"$redfox" import --help | grep -q -- "--narrow on|off" || fail "--help does not say --narrow"
echo "ok"
