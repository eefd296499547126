#!/bin/sh
# tests/run_exec_aside_crash.sh REDFOX EXEC_DIR: where the system has no
# atomic exchange of folders (here strace fails renameat2 with EINVAL), a
# copy-on-write commit renames the database aside (DB.old.PID.N) and then
# its new folder (DB.tmp.PID.N) to DB. `redfox exec` killed by SIGKILL at
# each rename of its commit:
#  - killed between the two, it leaves no DB: the next reader (`run --data
#    DB`, `tpch`-style readers share the code) or writer (exec, import --out,
#    run --out) puts the old state back, with a note, and removes the new
#    state that was never put in place; the answers are then the old state's
#    (the commit had not ended), the user's files and subfolders are in DB;
#  - killed after it, the old state's folder left beside DB is removed by
#    the next writer (exec, import), with a note, its subfolders moved back.
# Two old states aside are not guessed between (an error naming both); a
# reader that may not rename says what to do; a writer of another host
# still holding the old state's lock is waited for.
set -u
redfox=$1
dir=$2
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace missing"; exit 77; }
tmp=${TMPDIR:-/tmp}/rf_exec_aside.$$
mkdir -p "$tmp/data"
tmp=$(cd "$tmp" && pwd -P)
# (a cache of its own: a placement model another redfox rewrites in the
# shared one would add a rename to those the kills count)
XDG_CACHE_HOME=$tmp/cache
export XDG_CACHE_HOME
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
p="$dir/tc.logic"
awk 'BEGIN { srand(43); for (i = 0; i < 300; i++) printf "%d,%d\n", int(rand() * 200), int(rand() * 200) }' >"$tmp/data/edge.csv"
# deletions: a copy-on-write commit, never an in-place append
head -n 20 "$tmp/data/edge.csv" | sed 's/^\(.*\),\(.*\)$/-edge(\1, \2)./' >"$tmp/b.txn"
"$redfox" import "$p" --data "$tmp/data" --out "$tmp/db0" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
"$redfox" exec "$tmp/db0" "$p" --device cpu --format csv >"$tmp/old" 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec"; }
mkdir -p "$tmp/db0/notes"
echo "a note" >"$tmp/db0/notes/n.txt"
echo "readme" >"$tmp/db0/readme.txt"
cp -r "$tmp/db0" "$tmp/dbn"
"$redfox" exec "$tmp/dbn" "$p" --device cpu --format csv --batch "$tmp/b.txn" >"$tmp/new" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "exec"; }
cmp -s "$tmp/old" "$tmp/new" && fail "the batch changes nothing"
# the next exec applies the batch again to what it finds: from the old
# state, the new state's outputs; from the new one, those of the batch twice
# (deleting absent rows changes nothing)

# kill CALL N: a fresh copy of db0 at db, exec's commit killed at the N-th
# CALL (renameat2 refused); 1 when it was killed
kill_at() {
    rm -rf "$tmp/db" "$tmp"/db.tmp.* "$tmp"/db.old.*
    cp -r "$tmp/db0" "$tmp/db"
    strace -f -qq -o /dev/null -e trace=renameat2,$1 -e inject=renameat2:error=EINVAL -e inject=$1:signal=KILL:when=$2 \
        "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/b.txn" >/dev/null 2>&1 && return 1
    return 0
}
# user_files WHERE: DB holds the user's subfolder and file
user_files() {
    [ "$(cat "$tmp/db/notes/n.txt" 2>/dev/null)" = "a note" ] || fail "$1: notes/n.txt is not in the database's folder"
    [ "$(cat "$tmp/db/readme.txt" 2>/dev/null)" = "readme" ] || fail "$1: readme.txt is not in the database's folder"
}
# no_new_aside WHERE: no new state of a killed commit is left beside db (a
# kill before the first rename leaves one, removed by a writer once ten
# minutes old: not checked then)
no_new_aside() {
    for t in "$tmp"/db.tmp.*; do
        [ -f "$t/manifest.rfdb" ] && fail "$1: the killed commit's new state $t is still there"
    done
    return 0
}

windows=0 afters=0
for next in run exec import runout; do
    for call in rename renameat; do
        n=1
        while [ $n -le 6 ] && kill_at $call $n; do
            what="$next after $call $n"
            missing=0
            [ -e "$tmp/db" ] || missing=1
            if [ $missing = 1 ]; then
                windows=$((windows + 1))
                ls -d "$tmp"/db.old.* >/dev/null 2>&1 || fail "$what: no db and no old state aside"
            else
                afters=$((afters + 1))
            fi
            case $next in
            run)
                "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" ||
                    { cat "$tmp/err"; fail "$what: the next run"; }
                if [ $missing = 1 ]; then
                    cmp -s "$tmp/got" "$tmp/old" || fail "$what: put back, but not the old state"
                else
                    cmp -s "$tmp/got" "$tmp/old" || cmp -s "$tmp/got" "$tmp/new" || fail "$what: neither state"
                fi ;;
            exec)
                "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/b.txn" >"$tmp/got" 2>"$tmp/err" ||
                    { cat "$tmp/err"; fail "$what: the next exec"; }
                cmp -s "$tmp/got" "$tmp/new" || fail "$what: the next exec's outputs"
                ls -d "$tmp"/db.old.* >/dev/null 2>&1 && { cat "$tmp/err"; fail "$what: an old state is still beside db"; } ;;
            import)
                "$redfox" import "$p" --data "$tmp/data" --out "$tmp/db" >/dev/null 2>"$tmp/err" ||
                    { cat "$tmp/err"; fail "$what: the next import"; }
                "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>/dev/null || fail "$what: run after import"
                cmp -s "$tmp/got" "$tmp/old" || fail "$what: the import's outputs"
                ls -d "$tmp"/db.old.* >/dev/null 2>&1 && { cat "$tmp/err"; fail "$what: an old state is still beside db"; } ;;
            runout)
                # run --out DB: the outputs go into the database's folder,
                # not into a new folder of text files made where it was missing
                "$redfox" run "$p" --data "$tmp/dbn" --out "$tmp/db" --device cpu --format csv >/dev/null 2>"$tmp/err" ||
                    { cat "$tmp/err"; fail "$what: run --out"; }
                [ -f "$tmp/db/manifest.rfdb" ] || fail "$what: run --out made a folder where the database was" ;;
            esac
            if [ $missing = 1 ]; then
                grep -q "^$tmp/db: note: put the database back from $tmp/db.old\." "$tmp/err" ||
                    { cat "$tmp/err"; fail "$what: no note saying the database was put back"; }
                ls -d "$tmp"/db.old.* >/dev/null 2>&1 && fail "$what: the old state is still aside"
                no_new_aside "$what"
            fi
            [ -f "$tmp/db/manifest.rfdb" ] || fail "$what: no database at its name"
            # (run --out is no reader of DB: a subfolder a kill after the two
            # renames left aside waits for the next reader or writer)
            [ $next != runout ] || [ $missing = 1 ] && user_files "$what"
            n=$((n + 1))
        done
    done
done
[ $windows -ge 4 ] || fail "too few kills came between the two renames ($windows)"
echo "ok: $windows kills left no database, each put back by the next run, exec, import or run --out; $afters after it"

# ---- killed while removing the old state (its files, then the folder):
# the next writer removes what is left, with a note
swept=0
for call in unlink rmdir; do
    n=1
    while [ $n -le 4 ] && kill_at $call $n; do
        what="$call $n"
        [ -f "$tmp/db/manifest.rfdb" ] || fail "$what: no database at its name"
        old=$(ls -d "$tmp"/db.old.* 2>/dev/null) || { n=$((n + 1)); continue; }
        "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "$what: run"; }
        cmp -s "$tmp/got" "$tmp/new" || fail "$what: not the new state"
        "$redfox" exec "$tmp/db" "$p" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "$what: exec"; }
        grep -q "^$old: note: removed this folder, the database's state before a commit that ended" "$tmp/err" ||
            { cat "$tmp/err"; fail "$what: no note on the old state removed"; }
        [ -e "$old" ] && fail "$what: $old is still there"
        user_files "$what"
        swept=$((swept + 1))
        n=$((n + 1))
    done
done
[ $swept -ge 2 ] || fail "too few kills left an old state after the commit ($swept)"
echo "ok: $swept old states left by a commit that ended removed by the next exec"

# window: kills exec between its two renames (no db left)
window() {
    for call in rename renameat; do
        for n in 1 2 3 4; do
            kill_at $call $n || break
            [ -e "$tmp/db" ] || return 0
        done
    done
    fail "no kill left no database"
}

# ---- the database reached through a symbolic link (exec renames the folder
# it names): the next run through the link puts that folder back
ln -s db "$tmp/dblink"
linked=0
for n in 1 2 3 4; do
    rm -rf "$tmp/db" "$tmp"/db.tmp.* "$tmp"/db.old.*
    cp -r "$tmp/db0" "$tmp/db"
    strace -f -qq -o /dev/null -e trace=renameat2,rename -e inject=renameat2:error=EINVAL -e inject=rename:signal=KILL:when=$n \
        "$redfox" exec "$tmp/dblink" "$p" --device cpu --format csv --batch "$tmp/b.txn" >/dev/null 2>&1 && break
    [ -e "$tmp/db" ] && continue
    "$redfox" run "$p" --data "$tmp/dblink" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "link: the next run"; }
    cmp -s "$tmp/got" "$tmp/old" || fail "link: not the old state"
    grep -q "note: put the database back from $tmp/db.old\." "$tmp/err" || { cat "$tmp/err"; fail "link: no note"; }
    linked=1
    break
done
[ $linked = 1 ] || fail "link: no kill left the folder it names missing"
rm "$tmp/dblink"
echo "ok: through a symbolic link, the folder it names put back"

# ---- two old states aside: neither is guessed
window
old=$(ls -d "$tmp"/db.old.*)
dead=$(sh -c 'echo $$') # (a process that is gone)
cp -r "$old" "$tmp/db.old.$dead.0"
"$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" && fail "two aside: run succeeded"
grep -q "^$tmp/db: error: does not exist; .*more than one state of it beside it .*rename the one to keep to $tmp/db" "$tmp/err" ||
    { cat "$tmp/err"; fail "two aside: no error naming them"; }
[ -e "$tmp/db" ] && fail "two aside: one was put back"
echo "ok: two old states aside: an error, neither put back"

# ---- a writer of another host still holding the old state's lock: waited for
window
old=$(ls -d "$tmp"/db.old.*)
rm -f "$tmp/released"
flock -x "$old" sh -c "sleep 2; touch '$tmp/released'" &
holder=$!
sleep 0.5
"$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "locked: run"; }
[ -e "$tmp/released" ] || fail "locked: the old state was put back while its lock was held"
wait $holder
cmp -s "$tmp/got" "$tmp/old" || fail "locked: not the old state"
echo "ok: an old state whose lock is held is put back once it is released"

# ---- a reader that may not rename it: an error saying what to do (as another user than root)
. "$(dirname "$0")/lib_other_user.sh"
if [ "$as_other" != none ]; then
    window
    old=$(ls -d "$tmp"/db.old.*)
    chmod -R a+rX "$tmp" && chmod a-w "$tmp"
    # shellcheck disable=SC2086
    $as_other "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err.ro" &&
        fail "read-only: run succeeded"
    chmod u+w "$tmp"
    grep -q "^$tmp/db: error: does not exist: $old is the database, .* cannot be put back: Permission denied (rename it to $tmp/db)" "$tmp/err.ro" ||
        { cat "$tmp/err.ro"; fail "read-only: no error saying what to do"; }
    "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "writable: run"; }
    cmp -s "$tmp/got" "$tmp/old" || fail "writable: not the old state"
    echo "ok: a reader that may not put it back says what to do; the next one puts it back"
fi
