#!/bin/sh
# tests/run_exec_append.sh REDFOX EXEC_DIR: `redfox exec`'s commit carries a
# table whose new rows only follow its old ones over from the old database
# (files linked; or, appended to, the old files themselves taken into the
# new folder, else cloned) instead of writing it again, and when every table
# only gains rows appends them to the files in place: --profile says "table
# appended in place" for the closure after an insert-only batch (the column
# files keep their inodes, and "commit: appended N bytes in place"), "table
# appended" when another table is written (the first batch: the base table
# loses its repeated line; the closure's old files kept, "N bytes kept in
# their files ..., 0 bytes copied"), "table kept" for an unchanged one,
# "table written" after deletions.
# After each batch the outputs and the stored closure equal recomputing on a
# copy, and the next exec reads the database (every file's size and CRC-32C
# checked against its manifest). The same through a symbolic link to the
# database. An in-place commit removes a stale temporary folder.
set -u
redfox=$1
dir=$2
tmp=${TMPDIR:-/tmp}/rf_exec_append.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
p="$dir/tc.logic"
# a repeated line: the base table then cannot be appended to (its repeat is dropped)
awk 'BEGIN { srand(5); for (i = 0; i < 300; i++) printf "%d,%d\n", int(rand() * 200), int(rand() * 200); print "1,2"; print "1,2" }' \
    >"$tmp/data/edge.csv"
"$redfox" import "$p" --data "$tmp/data" --out "$tmp/db" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
"$redfox" exec "$tmp/db" "$p" --device cpu --format csv >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec"; }
# step N BATCH EXPECT: the batch incrementally and by --recompute on a copy; EXPECT: how `tc` is stored
step() {
    rm -rf "$tmp/db2"
    cp -rL "$tmp/db" "$tmp/db2"
    inodes=$(ls -i "$tmp/db"/*.col)
    "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --profile --batch "$2" >"$tmp/inc" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "step $1: exec"; }
    "$redfox" exec "$tmp/db2" "$p" --device cpu --format csv --recompute --batch "$2" >"$tmp/re" 2>"$tmp/err2" ||
        { cat "$tmp/err2"; fail "step $1: exec --recompute"; }
    cmp -s "$tmp/inc" "$tmp/re" || fail "step $1: outputs differ from recomputing"
    grep -q "tc: [0-9]* -> [0-9]* tuples (table $3)" "$tmp/err" ||
        { grep 'tuples' "$tmp/err"; fail "step $1: tc not stored as '$3'"; }
    if [ "$3" = "appended" ]; then
        # copy on write, the closure's old files taken over: linked into the new folder, appended to
        grep -q "commit: copy on write; .*: [1-9][0-9]* bytes kept in their files (linked into the new folder, not copied), 0 bytes copied" \
            "$tmp/err" || { grep 'commit' "$tmp/err"; fail "step $1: the old rows were copied, not kept in their files"; }
    fi
    if [ "$3" = "appended in place" ]; then
        [ "$inodes" = "$(ls -i "$tmp/db"/*.col)" ] || fail "step $1: the column files were replaced, not appended to"
        grep -q "commit: appended [1-9][0-9]* bytes in place" "$tmp/err" || fail "step $1: no bytes appended in place"
    fi
    # the stored state read back: the same outputs, nothing recomputed
    "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --profile >"$tmp/again" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "step $1: the database does not read back"; }
    cmp -s "$tmp/inc" "$tmp/again" || fail "step $1: outputs read back differ"
    grep -q "tc: [0-9]* -> [0-9]* tuples (table kept)" "$tmp/err" || fail "step $1: an unchanged closure not kept"
    "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --init >"$tmp/init" 2>"$tmp/err" || fail "step $1: --init"
    cmp -s "$tmp/inc" "$tmp/init" || fail "step $1: the stored closure differs from recomputing it"
}
i=0
for b in 1 2 3; do
    awk -v s=$b 'BEGIN { srand(s * 7); for (i = 0; i < 6; i++) printf "+edge(%d, %d).\n", int(rand() * 220), int(rand() * 220) }' \
        >"$tmp/ins$b.txn"
    i=$((i + 1))
    how="appended in place"
    [ $b = 1 ] && how=appended
    step "$i (insert)" "$tmp/ins$b.txn" "$how"
done
printf '+edge(1, 2).\n' >"$tmp/dup.txn"
step "4 (a fact already there)" "$tmp/dup.txn" kept
sed 's/^+/-/' "$tmp/ins1.txn" >"$tmp/del.txn"
step "5 (delete)" "$tmp/del.txn" written
step "6 (insert after the delete)" "$tmp/ins1.txn" "appended in place"
# an in-place commit, a writer of the database, removes the temporary folder
# a writer stopped by a signal left (its process gone, nothing written to it
# for ten minutes), with a note, as a copy-on-write commit does
mkdir "$tmp/db.tmp.4194000.0"
cp "$(ls "$tmp/db"/*.col | head -n 1)" "$tmp/db.tmp.4194000.0/"
touch -d '1 hour ago' "$tmp/db.tmp.4194000.0"/* "$tmp/db.tmp.4194000.0"
awk 'BEGIN { srand(13); for (i = 0; i < 6; i++) printf "+edge(%d, %d).\n", 230 + int(rand() * 20), int(rand() * 220) }' \
    >"$tmp/ins5.txn"
"$redfox" exec "$tmp/db" "$p" --device cpu --profile --batch "$tmp/ins5.txn" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "exec beside a stale folder"; }
grep -q "commit: appended [1-9][0-9]* bytes in place" "$tmp/err" || { cat "$tmp/err"; fail "beside a stale folder: not in place"; }
[ -e "$tmp/db.tmp.4194000.0" ] && fail "an in-place commit kept a stale temporary folder"
grep -q "db.tmp.4194000.0: note: removed this temporary folder" "$tmp/err" || { cat "$tmp/err"; fail "no note of the removal"; }
# a database reached through a symbolic link: both kinds of commit go
# through it (the folder it names exchanged copy on write), the link kept
mv "$tmp/db" "$tmp/real"
ln -s real "$tmp/db"
awk 'BEGIN { srand(11); for (i = 0; i < 6; i++) printf "+edge(%d, %d).\n", 200 + int(rand() * 20), int(rand() * 220) }' \
    >"$tmp/ins4.txn"
step "7 (insert through a link)" "$tmp/ins4.txn" "appended in place"
step "8 (delete through a link)" "$tmp/del.txn" written
step "9 (insert through a link after the delete)" "$tmp/ins1.txn" "appended in place"
[ -L "$tmp/db" ] && [ "$(readlink "$tmp/db")" = real ] || fail "the link was replaced"
echo ok
