#!/bin/sh
# tests/run_exec_subfolder_crash.sh REDFOX EXEC_DIR: a user's subfolders kept
# inside a database's folder (not the database's) survive `redfox exec`
# killed by SIGKILL at each rename of its copy-on-write commit (strace's
# fault injection): between the exchange of the folders and the move of
# the subfolders into the new one, they sit in the old state's folder
# DB.tmp.PID.N. The next reader (`redfox run --data DB`) or exec moves them
# back: DB then holds every subfolder with its files, and no DB.tmp.*
# holds any. A subfolder that DB meanwhile holds another of is left, with a
# warning naming it; so is one the reader may not move (not as root).
set -u
redfox=$1
dir=$2
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace missing"; exit 77; }
tmp=${TMPDIR:-/tmp}/rf_exec_subfolder.$$
mkdir -p "$tmp/data"
tmp=$(cd "$tmp" && pwd -P) # (the messages name the folders by their real paths)
# (a cache of its own: a placement model another redfox rewrites in the
# shared one would add a rename to those the kills count)
XDG_CACHE_HOME=$tmp/cache
export XDG_CACHE_HOME
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
p="$dir/tc.logic"
awk 'BEGIN { srand(41); for (i = 0; i < 300; i++) printf "%d,%d\n", int(rand() * 200), int(rand() * 200) }' >"$tmp/data/edge.csv"
# deletions: a copy-on-write commit (an exchange of the folders), never an in-place append
head -n 20 "$tmp/data/edge.csv" | sed 's/^\(.*\),\(.*\)$/-edge(\1, \2)./' >"$tmp/b.txn"
"$redfox" import "$p" --data "$tmp/data" --out "$tmp/db0" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
"$redfox" exec "$tmp/db0" "$p" --device cpu --format csv >"$tmp/old" 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec"; }
mkdir -p "$tmp/db0/notes/deep" "$tmp/db0/more"
echo "a note" >"$tmp/db0/notes/deep/n.txt"
echo "more" >"$tmp/db0/more/m.txt"
echo "readme" >"$tmp/db0/readme.txt"
cp -r "$tmp/db0" "$tmp/dbn"
"$redfox" exec "$tmp/dbn" "$p" --device cpu --format csv --batch "$tmp/b.txn" >"$tmp/new" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "exec"; }
cmp -s "$tmp/old" "$tmp/new" && fail "the batch changes nothing"
# user_files DB WHERE: DB holds the user's subfolders and file, and no temporary folder holds any
user_files() {
    [ "$(cat "$1/notes/deep/n.txt" 2>/dev/null)" = "a note" ] || fail "$2: notes/deep/n.txt is not in the database's folder"
    [ "$(cat "$1/more/m.txt" 2>/dev/null)" = "more" ] || fail "$2: more/m.txt is not in the database's folder"
    [ "$(cat "$1/readme.txt" 2>/dev/null)" = "readme" ] || fail "$2: readme.txt is not in the database's folder"
    for t in "$1".tmp.* "$1".old.*; do
        [ -e "$t/notes" ] || [ -e "$t/more" ] && fail "$2: a subfolder is still in $t"
    done
    return 0
}
kills=0 stranded=0
for next in run exec; do
    for call in renameat2 rename renameat; do
        n=1
        while [ $n -le 6 ]; do
            rm -rf "$tmp/db" "$tmp"/db.tmp.* "$tmp"/db.old.*
            cp -r "$tmp/db0" "$tmp/db"
            strace -f -qq -o /dev/null -e trace=$call -e inject=$call:signal=KILL:when=$n \
                "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/b.txn" >/dev/null 2>&1 && break
            kills=$((kills + 1))
            [ -f "$tmp/db/manifest.rfdb" ] || fail "$call $n: no database left at its name"
            [ -d "$tmp/db/notes" ] && [ -d "$tmp/db/more" ] || stranded=$((stranded + 1))
            if [ $next = run ]; then
                "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" ||
                    { cat "$tmp/err"; fail "$call $n: the next run"; }
                cmp -s "$tmp/got" "$tmp/old" || cmp -s "$tmp/got" "$tmp/new" || fail "$call $n: neither the old nor the new state"
            else
                "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/b.txn" >"$tmp/got" 2>"$tmp/err" ||
                    { cat "$tmp/err"; fail "$call $n: the next exec"; }
                cmp -s "$tmp/got" "$tmp/new" || fail "$call $n: the next exec's outputs"
            fi
            user_files "$tmp/db" "$next after $call $n"
            n=$((n + 1))
        done
    done
done
[ $stranded -ge 2 ] || fail "too few kills came between the exchange and the moves ($kills kills, $stranded of them stranded a subfolder)"
echo "ok: $kills kills, $stranded of them left a subfolder aside, each moved back by the next run or exec"

# ---- without an exchange (a file system refusing RENAME_EXCHANGE; here strace
# fails renameat2 with EINVAL) the old state is renamed aside, DB.old.PID.N,
# and the new folder renamed into place: killed at each move of a subfolder
# after that, the next run moves it back from DB.old.PID.N. (A kill between
# those two renames leaves no DB, until the next reader or writer puts the
# old state back: tests/run_exec_aside_crash.sh.)
fkills=0 fstranded=0
for call in rename renameat; do
    k=3
    while [ $k -le 6 ]; do
        rm -rf "$tmp/db" "$tmp"/db.tmp.* "$tmp"/db.old.*
        cp -r "$tmp/db0" "$tmp/db"
        strace -f -qq -o /dev/null -e trace=renameat2,$call -e inject=renameat2:error=EINVAL \
            -e inject=$call:signal=KILL:when=$k \
            "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/b.txn" >/dev/null 2>&1 && break
        fkills=$((fkills + 1))
        [ -f "$tmp/db/manifest.rfdb" ] || fail "no exchange, $call $k: no database left at its name"
        [ -d "$tmp/db/notes" ] && [ -d "$tmp/db/more" ] || fstranded=$((fstranded + 1))
        "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" ||
            { cat "$tmp/err"; fail "no exchange, $call $k: the next run"; }
        cmp -s "$tmp/got" "$tmp/new" || fail "no exchange, $call $k: not the new state"
        user_files "$tmp/db" "run after no exchange, $call $k"
        k=$((k + 1))
    done
done
[ $fstranded -ge 1 ] || fail "no exchange: no kill stranded a subfolder in DB.old.PID.N ($fkills kills)"
echo "ok: no exchange: $fkills kills, $fstranded of them left a subfolder in the old state, moved back by the next run"

# ---- a user's file that cannot be linked into the new folder (EMLINK:
# strace fails every linkat, which only the carrying of the user's files
# uses; protected_hardlinks refuses another owner's file so) is copied into
# it before the exchange, and after it the file itself renamed over its
# copy: killed at each rename, with and without the exchange, DB holds
# readme.txt (the file or its copy) at once, before any reader; it was
# moved after the exchange, and a kill then left it only in the old state's
# folder. A commit that ends keeps the file itself (its inode).
ckills=0
for how in exchange none; do
    inj=""
    [ $how = none ] && inj="-e inject=renameat2:error=EINVAL"
    for call in rename renameat; do
        c=1
        while [ $c -le 8 ]; do
            rm -rf "$tmp/db" "$tmp"/db.tmp.* "$tmp"/db.old.*
            cp -r "$tmp/db0" "$tmp/db"
            ino=$(ls -i "$tmp/db/readme.txt" | cut -d' ' -f1)
            # shellcheck disable=SC2086
            if strace -f -qq -o /dev/null -e trace=linkat,renameat2,$call -e inject=linkat:error=EMLINK $inj \
                -e inject=$call:signal=KILL:when=$c \
                "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/b.txn" >/dev/null 2>"$tmp/err"; then
                [ "$(ls -i "$tmp/db/readme.txt" | cut -d' ' -f1)" = "$ino" ] ||
                    fail "unlinkable, $how: the commit did not keep readme.txt itself"
                ls -d "$tmp"/db.tmp.* "$tmp"/db.old.* >/dev/null 2>&1 && { cat "$tmp/err"; fail "unlinkable, $how: a folder is left"; }
                break
            fi
            ckills=$((ckills + 1))
            if [ -e "$tmp/db" ]; then # (none: killed between the two renames, put back by the run below)
                [ "$(cat "$tmp/db/readme.txt" 2>/dev/null)" = "readme" ] ||
                    fail "unlinkable, $how, $call $c: readme.txt is not in the database's folder"
            fi
            "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" ||
                { cat "$tmp/err"; fail "unlinkable, $how, $call $c: the next run"; }
            cmp -s "$tmp/got" "$tmp/old" || cmp -s "$tmp/got" "$tmp/new" || fail "unlinkable, $how, $call $c: neither state"
            user_files "$tmp/db" "unlinkable, $how, $call $c"
            c=$((c + 1))
        done
    done
done
echo "ok: a file that cannot be linked: $ckills kills, readme.txt in the database's folder after each"

# ---- a subfolder left aside that the database's folder meanwhile holds another of: kept, with a warning
strand() { # kills exec between the exchange and the move of notes/
    for call in rename renameat; do
        m=1
        while [ $m -le 4 ]; do
            rm -rf "$tmp/db" "$tmp"/db.tmp.* "$tmp"/db.old.*
            cp -r "$tmp/db0" "$tmp/db"
            strace -f -qq -o /dev/null -e trace=$call -e inject=$call:signal=KILL:when=$m \
                "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/b.txn" >/dev/null 2>&1 && break
            [ -d "$tmp/db/notes" ] || return 0
            m=$((m + 1))
        done
    done
    fail "no kill stranded notes/"
}
strand
aside=$(ls -d "$tmp"/db.tmp.*/notes) || fail "notes/ is neither in the database's folder nor aside"
mkdir "$tmp/db/notes"
echo other >"$tmp/db/notes/o.txt"
"$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "clash: run"; }
grep -q "${aside}: warning: .*now holds another notes: not moved back" "$tmp/err" || { cat "$tmp/err"; fail "clash: no warning"; }
[ "$(cat "$aside/deep/n.txt")" = "a note" ] || fail "clash: the folder aside lost its file"
[ "$(cat "$tmp/db/notes/o.txt")" = "other" ] || fail "clash: the new folder lost its file"
echo "ok: a clash kept both, with a warning"

# ---- a reader that may not move it: the run reads, with a warning saying what to do (as another user than root)
. "$(dirname "$0")/lib_other_user.sh"
if [ "$as_other" != none ]; then
    strand
    t=$(ls -d "$tmp"/db.tmp.*) || fail "nothing aside"
    chmod -R a+rX "$tmp" && chmod a-w "$t"
    # shellcheck disable=SC2086
    $as_other "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "read-only: run"; }
    cmp -s "$tmp/got" "$tmp/new" || fail "read-only: the run's outputs"
    grep -q "$t/notes: warning: .*cannot move it back: Permission denied (move it back into $tmp/db)" "$tmp/err" ||
        { cat "$tmp/err"; fail "read-only: no warning"; }
    chmod u+w "$t"
    "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "writable: run"; }
    user_files "$tmp/db" "once writable"
    echo "ok: a reader that may not move it warns; the next one moves it"
fi
