#!/bin/sh
# tests/run_db_input_names.sh REDFOX: an input's file name is taken in its
# tidy form ("." and empty segments dropped: "./t.txt" is "t.txt", and
# "sub//./u.txt" is "sub/u.txt"), so that one file is one table of a
# database. A program naming "./t.txt" reads the database that a program
# naming "t.txt" imported (it was "the database has no table './t.txt'"); a
# program reading one file under two spellings imports one table, and from
# a FIFO reads it once (the import waited for ever for a second writer); a
# database an older redfox wrote with the table "./t.txt" is still read by
# either spelling, and exec commits to it. The text run and every database
# answer alike.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_db_input_names.$$
mkdir -p "$tmp/data/sub" "$tmp/fifo"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
printf '1|2\n3|4\n' >"$tmp/data/t.txt"
printf '5|6\n' >"$tmp/data/sub/u.txt"
prog() { # $1: the name of t's file, $2: u's, $3: w's (reads t's file again)
    printf 't(x, y) -> int(x), int(y).\nlang:input[`t] = "%s".\nu(x, y) -> int(x), int(y).\nlang:input[`u] = "%s".\nw(x, y) -> int(x), int(y).\nlang:input[`w] = "%s".\nlang:output[`t] = "t".\nlang:output[`u] = "u".\nlang:output[`w] = "w".\n' "$1" "$2" "$3"
}
prog t.txt sub/u.txt t.txt >"$tmp/plain.logic"
prog ./t.txt sub//./u.txt .//t.txt >"$tmp/dotted.logic"
prog t.txt ./sub/u.txt ./t.txt >"$tmp/mixed.logic"
"$redfox" run "$tmp/plain.logic" --data "$tmp/data" --device cpu --format csv >"$tmp/want" 2>"$tmp/err" || { cat "$tmp/err"; fail "text run"; }
grep -q '^5,6$' "$tmp/want" || { cat "$tmp/want"; fail "the text run reads other rows"; }
for p in dotted mixed; do
    "$redfox" run "$tmp/$p.logic" --data "$tmp/data" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "text run of $p"; }
    cmp -s "$tmp/want" "$tmp/got" || fail "the text run of $p answers otherwise"
done
for imp in plain dotted mixed; do
    rm -rf "$tmp/db"
    "$redfox" import "$tmp/$imp.logic" --data "$tmp/data" --out "$tmp/db" 2>"$tmp/err" || { cat "$tmp/err"; fail "import of $imp"; }
    [ "$(ls "$tmp/db" | grep -c '\.col$')" = 4 ] || { ls "$tmp/db"; fail "import of $imp: not two tables of two columns"; }
    for p in plain dotted mixed; do
        "$redfox" run "$tmp/$p.logic" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" ||
            { cat "$tmp/err"; fail "run of $p from the database $imp imported"; }
        cmp -s "$tmp/want" "$tmp/got" || fail "run of $p from the database $imp imported answers otherwise"
    done
done
# a FIFO read under two spellings: one reading, at import as in a run
mkfifo "$tmp/fifo/t.txt" || fail "mkfifo"
mkdir -p "$tmp/fifo/sub"
cp "$tmp/data/sub/u.txt" "$tmp/fifo/sub/"
cat "$tmp/data/t.txt" >"$tmp/fifo/t.txt" &
rm -rf "$tmp/fdb"
timeout 60 "$redfox" import "$tmp/mixed.logic" --data "$tmp/fifo" --out "$tmp/fdb" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/err"; kill $! 2>/dev/null; fail "import of a FIFO read under two spellings: exit $rc"; }
wait
"$redfox" run "$tmp/plain.logic" --data "$tmp/fdb" --device cpu --format csv >"$tmp/got" 2>/dev/null || fail "run from the FIFO's database"
cmp -s "$tmp/want" "$tmp/got" || fail "the FIFO's database answers otherwise"
# an older import's table "./t.txt" (the manifest rewritten, its checksums made right)
python3 - "$(dirname "$0")" "$tmp/db/manifest.rfdb" "$tmp/old.manifest" <<'PY' || fail "python"
import struct, sys
sys.path.insert(0, sys.argv[1])
from rfdb_manifest import seal
m = bytearray(open(sys.argv[2], 'rb').read())
name = struct.pack('<Q', 5) + b't.txt'
at = m.find(name, 64)
assert at == 68, at                           # the first table's name, after the table count
m[at:at + len(name)] = struct.pack('<Q', 7) + b'./t.txt'
m[16:24] = struct.pack('<Q', len(m))
seal(m)
open(sys.argv[3], 'wb').write(m)
PY
cp "$tmp/old.manifest" "$tmp/db/manifest.rfdb"
for p in plain dotted; do
    "$redfox" run "$tmp/$p.logic" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "run of $p from a database whose table is './t.txt'"; }
    cmp -s "$tmp/want" "$tmp/got" || fail "run of $p from a database whose table is './t.txt' answers otherwise"
done
# ... and redfox exec commits to it (the table "./t.txt" is the program's
# t.txt, not another table: it was "two inputs read this file")
# (exec: no two base predicates of one file)
grep -v '`w\]\|^w(' "$tmp/plain.logic" >"$tmp/xplain.logic"
grep -v '`w\]\|^w(' "$tmp/dotted.logic" >"$tmp/xdotted.logic"
printf '+t(7, 8).\n' >"$tmp/ins.txt"
"$redfox" exec "$tmp/db" "$tmp/xplain.logic" --batch "$tmp/ins.txt" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "exec on a database whose table is './t.txt'"; }
grep -q '^7,8$' "$tmp/got" || { cat "$tmp/got"; fail "exec on a database whose table is './t.txt': the row is not there"; }
printf -- '-t(7, 8).\n' >"$tmp/del.txt"
"$redfox" exec "$tmp/db" "$tmp/xdotted.logic" --batch "$tmp/del.txt" --device cpu --format csv >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "exec (a deletion) on a database whose table is './t.txt'"; }
"$redfox" run "$tmp/plain.logic" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>/dev/null || fail "run after the execs"
cmp -s "$tmp/want" "$tmp/got" || { diff "$tmp/want" "$tmp/got"; fail "after an insert and a delete, the database answers otherwise"; }
echo ok
