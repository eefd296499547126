#!/bin/sh
# tests/run_db_files.sh REDFOX: the redfox database's files (docs/DATABASE.md):
# a damaged or truncated manifest, column or dictionary is refused with the
# file named and exit 1 (a damaged column the program does not read is never
# opened); two processes reading one database at once agree with each other
# and with the text; a failed import leaves nothing behind and never replaces
# a folder that is not a database (nor a file or a symbolic link), which it
# says before reading any input; types that do not match are refused.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_db_files.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$tmp/prog.logic" <<'P'
t(k, s, d, x) -> int(k), string(s), date(d), decimal(x).
lang:input[`t] = "t.tbl".
lang:input:key[`t] = "k".
out(n, s, m) <- agg<<n = count(), m = max(k)>> t(k, s, _, _).
lang:output[`out] = "out".
P
# 200,000 rows: four min/max blocks, and enough work for two processes to overlap
awk 'BEGIN { for (i = 1; i <= 200000; i++) printf "%d|s%d|2000-01-%02d|%d.%02d|\n", i, i % 97, i % 28 + 1, i % 1000, i % 100 }' >"$tmp/data/t.tbl"
"$redfox" run "$tmp/prog.logic" --data "$tmp/data" --device cpu --format csv >"$tmp/text.out" 2>"$tmp/err" || fail "text run"; 
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db" 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
[ -f "$tmp/db/manifest.rfdb" ] || fail "no manifest"
# a schema with no lang:output is what import reads: it is not warned about
# (a run of it still is)
grep -v "lang:output" "$tmp/prog.logic" >"$tmp/schema.logic"
"$redfox" import "$tmp/schema.logic" --data "$tmp/data" --out "$tmp/db_schema" 2>"$tmp/err" || { cat "$tmp/err"; fail "import of a schema"; }
grep -q "no lang:output" "$tmp/err" && { cat "$tmp/err"; fail "import warns that a schema has no lang:output"; }
"$redfox" run "$tmp/schema.logic" --data "$tmp/db_schema" --device cpu >/dev/null 2>"$tmp/err"
grep -q "warning: the program has no lang:output" "$tmp/err" || { cat "$tmp/err"; fail "a run of a schema is not warned about"; }
ls "$tmp" | grep -q "\.tmp\." && fail "the import left its temporary folder"
# (under timeout: a hang shows as exit 124)
run_db() { timeout 60 "$redfox" run "$tmp/prog.logic" --data "$1" --device cpu --format csv >"$tmp/db.out" 2>"$tmp/db.err"; }
run_db "$tmp/db" || { cat "$tmp/db.err"; fail "run from the database"; }
cmp -s "$tmp/text.out" "$tmp/db.out" || fail "output from the database differs from text"

# two processes at once
"$redfox" run "$tmp/prog.logic" --data "$tmp/db" --device cpu --format csv >"$tmp/p1.out" 2>/dev/null &
p1=$!
"$redfox" run "$tmp/prog.logic" --data "$tmp/db" --device cpu --format csv >"$tmp/p2.out" 2>/dev/null &
p2=$!
wait $p1 || fail "first concurrent reader"
wait $p2 || fail "second concurrent reader"
cmp -s "$tmp/p1.out" "$tmp/text.out" && cmp -s "$tmp/p2.out" "$tmp/text.out" || fail "concurrent readers disagree"

# damage: each case on a fresh copy; expect exit 1 and the file named
flip() { # FILE OFFSET: one byte xor 0x01
    b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
    printf "$(printf '\\%03o' $(( b ^ 1 )))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
refused() { # NAME FILE-IN-MESSAGE
    run_db "$tmp/bad"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/db.err"; fail "$1: exit $rc, expected 1"; }
    grep -q "$2" "$tmp/db.err" || { cat "$tmp/db.err"; fail "$1: the message does not name $2"; }
    grep -qi "error" "$tmp/db.err" || fail "$1: no error message"
}
fresh() { rm -rf "$tmp/bad"; cp -r "$tmp/db" "$tmp/bad"; }
man=manifest.rfdb
size=$(wc -c <"$tmp/db/$man")
for at in 0 9 20 30 40 61 64 70 100 $((size / 2)) $((size - 1)); do
    fresh; flip "$tmp/bad/$man" $at; refused "manifest byte $at flipped" "$man"
done
fresh; head -c $((size - 3)) "$tmp/db/$man" >"$tmp/bad/$man"; refused "manifest truncated" "$man"
fresh; : >"$tmp/bad/$man"; refused "manifest empty" "$man"
fresh; flip "$tmp/bad/t00000.c00000.col" 12345; refused "key column flipped" "t00000.c00000.col"
fresh; head -c 1000 "$tmp/db/t00000.c00000.col" >"$tmp/bad/t00000.c00000.col"; refused "column truncated" "t00000.c00000.col"
# not a regular file in a file's place: refused, not read (a named pipe blocked every reader)
fresh; rm "$tmp/bad/t00000.c00000.col"; mkfifo "$tmp/bad/t00000.c00000.col"; refused "column a named pipe" "t00000.c00000.col: .*named pipe"
fresh; rm "$tmp/bad/t00000.c00000.col"; mkdir "$tmp/bad/t00000.c00000.col"; refused "column a folder" "t00000.c00000.col: .*a folder"
fresh; rm "$tmp/bad/$man"; mkfifo "$tmp/bad/$man"; refused "manifest a named pipe" "$man: .*named pipe"
# no manifest: the folder reads as text, and the missing input file's error
# says that it holds a database's column files
fresh; rm "$tmp/bad/$man"; refused "manifest removed" "t.tbl: .*column files but no manifest.rfdb"
# a column file longer than its manifest says (format 2.1: the tail of a stopped in-place append)
# reads as the manifest's rows; a dictionary must be exactly its size
fresh; cat "$tmp/db/t00000.c00001.col" "$tmp/db/t00000.c00001.col" >"$tmp/bad/t00000.c00001.col"
run_db "$tmp/bad" || { cat "$tmp/db.err"; fail "a column with a tail past the manifest's size refused"; }
cmp -s "$tmp/db.out" "$tmp/text.out" || fail "a column with a tail: another output"
fresh; cat "$tmp/db/t00000.c00001.dict" "$tmp/db/t00000.c00001.dict" >"$tmp/bad/t00000.c00001.dict"; refused "dictionary too long" "t00000.c00001.dict"
fresh; rm "$tmp/bad/t00000.c00001.col"; refused "column missing" "t00000.c00001.col"
fresh; flip "$tmp/bad/t00000.c00001.col" 4; refused "string codes flipped" "t00000.c00001.col"
fresh; flip "$tmp/bad/t00000.c00001.dict" 3; refused "dictionary offsets flipped" "t00000.c00001.dict"
dsize=$(wc -c <"$tmp/db/t00000.c00001.dict")
fresh; flip "$tmp/bad/t00000.c00001.dict" $((dsize - 2)); refused "dictionary bytes flipped" "t00000.c00001.dict"
fresh; head -c $((dsize - 1)) "$tmp/db/t00000.c00001.dict" >"$tmp/bad/t00000.c00001.dict"; refused "dictionary truncated" "t00000.c00001.dict"
# the date and decimal columns are never read by this program: never opened
fresh; flip "$tmp/bad/t00000.c00002.col" 100; rm "$tmp/bad/t00000.c00003.col"
run_db "$tmp/bad" || { cat "$tmp/db.err"; fail "a damaged column the program does not read stopped it"; }
cmp -s "$tmp/db.out" "$tmp/text.out" || fail "output with an unread damaged column"
# ... but a program that reads them refuses
cat >"$tmp/prog2.logic" <<'P'
t(k, s, d, x) -> int(k), string(s), date(d), decimal(x).
lang:input[`t] = "t.tbl".
late(d) <- t(_, _, d, _).
lang:output[`late] = "late".
P
"$redfox" run "$tmp/prog2.logic" --data "$tmp/bad" --device cpu >/dev/null 2>"$tmp/db.err"
[ $? -eq 1 ] && grep -q "t00000.c00002.col" "$tmp/db.err" || { cat "$tmp/db.err"; fail "a damaged read column was not refused"; }

# other types than the database's: refused, naming the manifest
sed 's/int(k), string(s)/string(k), string(s)/' "$tmp/prog.logic" >"$tmp/prog3.logic"
"$redfox" run "$tmp/prog3.logic" --data "$tmp/db" --device cpu >/dev/null 2>"$tmp/db.err"
[ $? -eq 1 ] && grep -q "manifest.rfdb.*import the data again" "$tmp/db.err" || { cat "$tmp/db.err"; fail "mismatched types"; }

# a failed import (bad data, a broken key) leaves nothing and keeps the old database
cp "$tmp/data/t.tbl" "$tmp/t.good"
echo "7|x|2000-02-30|1.0|" >>"$tmp/data/t.tbl"
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "t.tbl:200001:" "$tmp/err" || { cat "$tmp/err"; fail "bad data: exit or message"; }
cp "$tmp/t.good" "$tmp/data/t.tbl"; echo "7|x|2000-02-03|1.0|" >>"$tmp/data/t.tbl"
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "t.tbl:200001:1: error: the key (k) = (7) of line 200001 is already on line 7" "$tmp/err" || { cat "$tmp/err"; fail "a broken key: exit or message"; }
ls "$tmp" | grep -q "\.tmp\.\|\.old\." && fail "a failed import left files"
run_db "$tmp/db" && cmp -s "$tmp/db.out" "$tmp/text.out" || fail "a failed import damaged the old database"
# never replaces a folder that is not a database
mkdir "$tmp/notdb"; echo keep >"$tmp/notdb/file"
cp "$tmp/t.good" "$tmp/data/t.tbl"
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/notdb" 2>"$tmp/err"
[ $? -eq 1 ] && [ -f "$tmp/notdb/file" ] || { cat "$tmp/err"; fail "replaced a folder that is not a database"; }
# ... and says so before reading any input (it read and wrote everything,
# then refused at the commit): an input that is a FIFO no one writes would
# block the import; a folder that is not a database, a file and a symbolic
# link (to a database) are refused at once, each named
mkdir -p "$tmp/nowriter"
mkfifo "$tmp/nowriter/t.tbl" || fail "mkfifo"
echo keep >"$tmp/afile"
ln -s db "$tmp/alink"
for o in notdb afile alink; do
    timeout 20 "$redfox" import "$tmp/prog.logic" --data "$tmp/nowriter" --out "$tmp/$o" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "--out $o: exit $rc, not 1 before reading the input"; }
    case $o in
    notdb) want="notdb: error: exists and is neither a redfox database nor an empty folder: not replacing it" ;;
    afile) want="afile: error: exists and is not a folder: not replacing it" ;;
    alink) want="alink: error: exists and is a symbolic link (give the folder it names): not replacing it" ;;
    esac
    grep -qF "$want" "$tmp/err" || { cat "$tmp/err"; fail "--out $o: not '$want'"; }
done
[ -f "$tmp/notdb/file" ] && [ "$(cat "$tmp/afile")" = keep ] && [ -L "$tmp/alink" ] || fail "a refused --out was changed"
ls "$tmp" | grep -q "\.tmp\.\|\.old\." && fail "a refused --out left a temporary folder"
rm -f "$tmp/afile" "$tmp/alink"
# a table wider than the format's 4096 columns (a text run reads it): said,
# exit 1, not an internal error (exit 3)
for n in 4097; do
    mkdir -p "$tmp/wide$n"
    awk -v n=$n 'BEGIN { s = "t("; u = ""; for (i = 0; i < n; i++) { s = s (i ? ", " : "") "c" i; u = u (i ? ", " : "") "int(c" i ")" }
        print s ") -> " u "."; print "lang:input[`t] = \"t.txt\"."; print "o(c0) <- " s "), c0 > 0."; print "lang:output[`o] = \"o\"." }' \
        >"$tmp/wide$n.logic"
    awk -v n=$n 'BEGIN { for (i = 1; i <= n; i++) printf "%d%s", i, (i < n ? "|" : "\n") }' >"$tmp/wide$n/t.txt"
    "$redfox" import "$tmp/wide$n.logic" --data "$tmp/wide$n" --out "$tmp/widedb$n" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] && grep -qF "t.txt: error: a table of 4097 columns: a table of a redfox database holds at most 4096" "$tmp/err" ||
        { cat "$tmp/err"; fail "import of 4097 columns: exit $rc, or another message"; }
    [ -e "$tmp/widedb$n" ] && fail "a refused wide table left a database"
done
# a missing folder above --out is named (not the temporary DB.tmp.PID.N)
"$redfox" import "$tmp/prog.logic" --data "$tmp/nowriter" --out "$tmp/no/such/db" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF "$tmp/no/such/db: error: cannot create the database: the folder $tmp/no/such does not exist" "$tmp/err" ||
    { cat "$tmp/err"; fail "--out in a missing folder: not named"; }
# a file where the folder above --out would be is named (not DB.tmp.PID.N)
: >"$tmp/afile"
"$redfox" import "$tmp/prog.logic" --data "$tmp/nowriter" --out "$tmp/afile/db" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF "$tmp/afile/db: error: cannot create the database: $tmp/afile is not a folder" "$tmp/err" ||
    { cat "$tmp/err"; fail "--out under a file: not named"; }
# a second import replaces the database, and removes the temporary folder an
# import stopped by a signal left (its process gone, nothing written to it for
# ten minutes); not one a live writer may still fill, nor anything else. A
# subfolder in one of a writer that is gone is the user's (a database has
# none: a writer killed between its exchange and moving the old folder's
# subfolders into the new one left it): moved back into the database
mkdir -p "$tmp/db.tmp.4194000.0" "$tmp/db.tmp.4194001.0" "$tmp/db.tmp.4194002.1/sub" "$tmp/db.tmp.x.0"
echo part >"$tmp/db.tmp.4194000.0/t00000.c00000.col"; echo part >"$tmp/db.tmp.4194001.0/t00000.c00000.col"
touch -d '1 hour ago' "$tmp/db.tmp.4194000.0/t00000.c00000.col" "$tmp/db.tmp.4194000.0" "$tmp/db.tmp.4194002.1/sub" \
    "$tmp/db.tmp.4194002.1" "$tmp/db.tmp.x.0"
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db" 2>"$tmp/err" || fail "re-import"
run_db "$tmp/db" && cmp -s "$tmp/db.out" "$tmp/text.out" || fail "the re-imported database"
[ -e "$tmp/db.tmp.4194000.0" ] && fail "a stale temporary folder was kept"
grep -q "db.tmp.4194000.0: note: removed this temporary folder" "$tmp/err" || { cat "$tmp/err"; fail "no note of the removal"; }
[ -d "$tmp/db.tmp.4194001.0" ] && [ -d "$tmp/db.tmp.x.0" ] ||
    fail "a folder that is not a stale temporary one was removed"
[ -d "$tmp/db/sub" ] && [ ! -e "$tmp/db.tmp.4194002.1/sub" ] || fail "a subfolder left aside was not moved back"
grep -q "db/sub: note: moved this folder back from .*db.tmp.4194002.1" "$tmp/err" || { cat "$tmp/err"; fail "no note of the move"; }
rm -rf "$tmp/db/sub"
rm -rf "$tmp/db.tmp.4194001.0" "$tmp/db.tmp.4194002.1" "$tmp/db.tmp.x.0"
# the user's files in a database's folder (a run's outputs written there with
# --out, notes, a symbolic link, a subfolder) stay there when an import or an
# exec's copy-on-write commit replaces the folder: they were removed with the
# old state, silently
"$redfox" run "$tmp/prog.logic" --data "$tmp/db" --device cpu --out "$tmp/db" 2>"$tmp/err" || fail "run --out into the database"
cp "$tmp/db/out.csv" "$tmp/out.keep"
echo notes >"$tmp/db/README"; ln -s README "$tmp/db/link"; mkdir "$tmp/db/sub"; echo sub >"$tmp/db/sub/f"
user_files_kept() {
    [ "$(cat "$tmp/db/README")" = notes ] && [ "$(readlink "$tmp/db/link")" = README ] &&
        [ "$(cat "$tmp/db/sub/f")" = sub ] && cmp -s "$tmp/db/out.csv" "$tmp/out.keep" ||
        { ls -la "$tmp/db"; cat "$tmp/err"; fail "$1: the user's files in the database's folder were not kept"; }
    ls "$tmp" | grep -q "^db\.\(tmp\|old\)\." && { ls "$tmp"; fail "$1: left a folder beside the database"; }
    grep -q "warning" "$tmp/err" && { cat "$tmp/err"; fail "$1: a warning"; }
    run_db "$tmp/db" || { cat "$tmp/db.err"; fail "$1: the database does not read"; }
}
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db" 2>"$tmp/err" || { cat "$tmp/err"; fail "import over a database holding the user's files"; }
user_files_kept "import"
cmp -s "$tmp/db.out" "$tmp/text.out" || fail "import over the user's files: the database"
printf -- '-t(1, "s1", 2000-01-02, 1.01).\n' >"$tmp/del.txn"
"$redfox" exec "$tmp/db" "$tmp/prog.logic" --batch "$tmp/del.txn" --device cpu >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "exec over the user's files"; }
user_files_kept "exec"
cmp -s "$tmp/db.out" "$tmp/text.out" && fail "exec over the user's files: the row was not deleted"
rm -rf "$tmp/db/README" "$tmp/db/link" "$tmp/db/sub" "$tmp/db/out.csv" "$tmp/db/.redfox.lock"
# an import run inside the database, --out . (the commit failed after all
# the work: "cannot move the old database aside: Device or resource busy")
(cd "$tmp/db" && "$redfox" import ../prog.logic --data ../data --out . >/dev/null 2>"$tmp/err") ||
    { cat "$tmp/err"; fail "import --out . inside the database"; }
run_db "$tmp/db" && cmp -s "$tmp/db.out" "$tmp/text.out" || fail "import --out .: the database"
ls "$tmp" | grep -q "^db\.\(tmp\|old\)\." && fail "import --out .: a folder left"
# a user's file that can be neither linked nor moved into the new folder
# (strace: both fail with ENOSPC) stays in the old state's folder, which a
# warning names as keeping it: never removed, nor called removable
if command -v strace >/dev/null 2>&1; then
    echo notes >"$tmp/db/README"
    env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -o /dev/null -e trace=linkat,rename \
        -e inject=linkat:error=ENOSPC -e inject=rename:error=ENOSPC \
        "$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db" 2>"$tmp/err" || { cat "$tmp/err"; fail "import, the user's file not carried"; }
    kept=$(ls -d "$tmp"/db.tmp.* 2>/dev/null)
    [ -n "$kept" ] && [ "$(cat "$kept/README")" = notes ] || { cat "$tmp/err"; fail "a user's file that could not be carried was removed"; }
    grep -q "^$kept: warning: this folder, the database's state before the commit, keeps files that were in the database's folder and are not the database's" "$tmp/err" ||
        { cat "$tmp/err"; fail "a user's file that could not be carried: not said"; }
    run_db "$tmp/db" || fail "the database after an import whose user's file was not carried"
    rm -rf "$kept"
fi
# a database whose files another writer named otherwise (a reader takes
# every name from the manifest): replaced, none of its files is taken for
# the user's and kept beside the new ones
if command -v python3 >/dev/null 2>&1; then
    rm -rf "$tmp/dbo"
    cp -r "$tmp/db" "$tmp/dbo"
    python3 - "$(dirname "$0")" "$tmp/dbo" <<'PY' || fail "python: rename a column file"
import os, sys
sys.path.insert(0, sys.argv[1])
from rfdb_manifest import seal
d = sys.argv[2]
m = bytearray(open(d + '/manifest.rfdb', 'rb').read())
old, new = b't00000.c00002.col', b'other-col-02.data'
at = m.find(old, 64)
assert at > 0 and len(old) == len(new)
m[at:at + len(old)] = new
seal(m)
open(d + '/manifest.rfdb', 'wb').write(m)
os.rename(d + '/t00000.c00002.col', d + '/other-col-02.data')
PY
    run_db "$tmp/dbo" || { cat "$tmp/db.err"; fail "a database with another writer's file names does not read"; }
    cp "$tmp/db.out" "$tmp/dbo.want"
    "$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/dbo" 2>"$tmp/err" || { cat "$tmp/err"; fail "import over another writer's database"; }
    [ -e "$tmp/dbo/other-col-02.data" ] && fail "import: the old database's file (another writer's name) was kept"
    ls "$tmp" | grep -q "^dbo\.\(tmp\|old\)\." && fail "import over another writer's database: a folder left"
fi
# a functional predicate given two values for one key: refused at import
cat >"$tmp/fn.logic" <<'P'
price[k] = v -> int(k), decimal(v).
lang:input[`price] = "price.tbl".
out(k, v) <- price[k] = v.
lang:output[`out] = "out".
P
mkdir "$tmp/fn"; printf '1|2.5|\n2|3.0|\n1|2.50|\n1|4.0|\n' >"$tmp/fn/price.tbl"
"$redfox" import "$tmp/fn.logic" --data "$tmp/fn" --out "$tmp/fn.db" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "price.tbl:4:1: error: functional dependency violated: .price. has two values for the key (k) = (1): (4.00) on line 4, but (2.50) is already on line 1" "$tmp/err" || { cat "$tmp/err"; fail "functional dependency at import"; }
[ -e "$tmp/fn.db" ] && fail "a refused import left a database"
# usage
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" >/dev/null 2>&1; [ $? -eq 2 ] || fail "import without --out: not 2"
"$redfox" import --out "$tmp/x" >/dev/null 2>&1; [ $? -eq 2 ] || fail "import without a program: not 2"
echo "ok"
