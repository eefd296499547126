#!/bin/sh
# tests/run_exec_crash.sh REDFOX EXEC_DIR ROUNDS: `redfox exec` killed with
# SIGKILL at a random moment of a transaction, ROUNDS times: the database is
# then exactly the old state or the new one (its base data gives one of the
# two outputs, and its stored derived predicates agree with its base data),
# never a mix, never missing. Then an insert-only batch, whose commit appends
# to the files in place, killed (through strace's fault injection) at each of
# its writes, syncs and renames: the manifest is then byte for byte the old
# one, and every file's bytes that it names the old ones, or the manifest and
# files are the new ones; the next exec cuts off any tail and commits. The
# same for a copy-on-write commit that takes a history's files over (linked
# into the new folder and appended to) while it rewrites a derived table.
set -u
redfox=$1
dir=$2
rounds=$3
tmp=${TMPDIR:-/tmp}/rf_exec_crash.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
p="$dir/tc.logic"
awk 'BEGIN { srand(11); for (i = 0; i < 500; i++) printf "%d,%d\n", int(rand() * 400), int(rand() * 400) }' >"$tmp/data/edge.csv"
awk 'BEGIN { srand(12); for (i = 0; i < 40; i++) printf "+edge(%d, %d).\n", int(rand() * 400), int(rand() * 400);
             for (i = 0; i < 5; i++) printf "+edge(%d, %d).\n", 400 + i, i }' >"$tmp/b.txn"
"$redfox" import "$p" --data "$tmp/data" --out "$tmp/db0" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
"$redfox" exec "$tmp/db0" "$p" --device cpu --format csv >"$tmp/old" 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec"; }
cp -r "$tmp/db0" "$tmp/dbn"
"$redfox" exec "$tmp/dbn" "$p" --device cpu --format csv --batch "$tmp/b.txn" >"$tmp/new" 2>"$tmp/err" || { cat "$tmp/err"; fail "exec"; }
cmp -s "$tmp/old" "$tmp/new" && fail "the batch changes nothing"
olds=0 news=0 r=0
while [ $r -lt "$rounds" ]; do
    rm -rf "$tmp/db" "$tmp"/db.tmp.*
    cp -r "$tmp/db0" "$tmp/db"
    "$redfox" exec "$tmp/db" "$p" --device cpu --format csv --batch "$tmp/b.txn" >/dev/null 2>&1 &
    pid=$!
    sleep "$(awk -v s=$r 'BEGIN { srand(s); printf "%.3f", rand() * 0.25 }')"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    [ -f "$tmp/db/manifest.rfdb" ] || fail "round $r: no database left at its name"
    "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "round $r: run"; }
    if cmp -s "$tmp/got" "$tmp/old"; then olds=$((olds + 1))
    elif cmp -s "$tmp/got" "$tmp/new"; then news=$((news + 1))
    else fail "round $r: neither the old nor the new state"; fi
    # the stored derived predicates agree with the base data
    "$redfox" exec "$tmp/db" "$p" --device cpu --format csv >"$tmp/got2" 2>"$tmp/err" || { cat "$tmp/err"; fail "round $r: exec"; }
    cmp -s "$tmp/got" "$tmp/got2" || fail "round $r: stored derived predicates disagree with the base data"
    r=$((r + 1))
done
echo "ok: $olds old, $news new"

# ---- killed inside an in-place append --------------------------------------
command -v strace >/dev/null 2>&1 || { echo "ok (strace missing: the in-place kills not tested)"; exit 0; }
mkdir -p "$tmp/data2"
awk 'BEGIN { srand(21); while (n < 500) { k = int(rand() * 400) "," int(rand() * 400); if (!(k in seen)) { seen[k] = 1; print k; n++ } } }' \
    >"$tmp/data2/edge.csv"
"$redfox" import "$p" --data "$tmp/data2" --out "$tmp/ip0" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import 2"; }
"$redfox" exec "$tmp/ip0" "$p" --device cpu --format csv >"$tmp/ipold" 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec 2"; }
cp -r "$tmp/ip0" "$tmp/ipn"
"$redfox" exec "$tmp/ipn" "$p" --device cpu --format csv --profile --batch "$tmp/b.txn" >"$tmp/ipnew" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "exec 2"; }
grep -q "tc: [0-9]* -> [0-9]* tuples (table appended in place)" "$tmp/err" || { cat "$tmp/err"; fail "not appended in place"; }
cmp -s "$tmp/ipold" "$tmp/ipnew" && fail "batch 2 changes nothing"
# same_files A B: every file of database A's manifest is, for the bytes B's file has, B's
same_files() {
    for f in "$2"/*.col; do
        sz=$(wc -c <"$f")
        cmp -s -n "$sz" "$f" "$1/${f##*/}" || return 1
    done
}
kills=0 oldk=0 newk=0 tails=0
for call in write fsync rename; do
    n=1
    while [ $n -le 12 ]; do
        rm -rf "$tmp/ip"
        cp -r "$tmp/ip0" "$tmp/ip"
        strace -f -qq -o /dev/null -e trace=$call -e inject=$call:signal=KILL:when=$n \
            "$redfox" exec "$tmp/ip" "$p" --device cpu --format csv --batch "$tmp/b.txn" >/dev/null 2>&1 && break
        kills=$((kills + 1))
        if cmp -s "$tmp/ip/manifest.rfdb" "$tmp/ip0/manifest.rfdb"; then
            same_files "$tmp/ip" "$tmp/ip0" || fail "$call $n: old manifest, but a file's old bytes changed"
            for f in "$tmp/ip0"/*.col; do [ "$(wc -c <"$tmp/ip/${f##*/}")" -gt "$(wc -c <"$f")" ] && tails=$((tails + 1)) && break; done
            want=$tmp/ipold oldk=$((oldk + 1))
        elif cmp -s "$tmp/ip/manifest.rfdb" "$tmp/ipn/manifest.rfdb"; then
            same_files "$tmp/ip" "$tmp/ipn" || fail "$call $n: new manifest, but not the new files"
            want=$tmp/ipnew newk=$((newk + 1))
        else
            fail "$call $n: the manifest is neither the old nor the new one"
        fi
        "$redfox" run "$p" --data "$tmp/ip" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "$call $n: run"; }
        cmp -s "$tmp/got" "$want" || fail "$call $n: the run reads another state than the manifest's"
        # the next exec: any tail cut off, the batch committed (again: no change)
        "$redfox" exec "$tmp/ip" "$p" --device cpu --format csv --batch "$tmp/b.txn" >"$tmp/got" 2>"$tmp/err" ||
            { cat "$tmp/err"; fail "$call $n: the next exec"; }
        cmp -s "$tmp/got" "$tmp/ipnew" || fail "$call $n: the next exec's outputs"
        cmp -s "$tmp/ip/manifest.rfdb" "$tmp/ipn/manifest.rfdb" || fail "$call $n: the next exec's manifest"
        for f in "$tmp/ipn"/*.col; do cmp -s "$f" "$tmp/ip/${f##*/}" || fail "$call $n: ${f##*/} after the next exec"; done
        n=$((n + 1))
    done
done
[ $oldk -ge 3 ] && [ $newk -ge 1 ] && [ $tails -ge 1 ] ||
    fail "in place: too few kills hit the commit ($oldk old, $tails of them with a tail; $newk new)"
echo "ok in place: $kills kills, $oldk left the old state ($tails with a tail past the manifest), $newk the new"

# ---- killed inside a copy-on-write commit that takes a history's files over
# A history that only gains rows beside a derived total that changes: the
# commit goes copy on write, the history's files linked into the new folder
# and appended to past their old ends (not copied). Killed at each link,
# write, sync and rename: the old manifest with every byte it names as it
# was (at most a tail past them), or the new state; the next exec commits.
cat >"$tmp/hist.logic" <<'EOF2'
h(i, a, v) -> int(i), int(a), int(v).
lang:input[`h] = "h.csv".
lang:input:delimiter[`h] = ",".
lang:input:key[`h] = "i".
bal[a] = s <- agg<<s = total(v)>> h(_, a, v).
lang:output[`bal] = "bal".
EOF2
mkdir -p "$tmp/data3"
awk 'BEGIN { srand(31); for (i = 1; i <= 3000; i++) printf "%d,%d,%d\n", i, int(rand() * 50), int(rand() * 100) }' >"$tmp/data3/h.csv"
awk 'BEGIN { srand(32); for (i = 3001; i <= 3400; i++) printf "+h(%d, %d, %d).\n", i, int(rand() * 60), int(rand() * 100) }' >"$tmp/h.txn"
hp=$tmp/hist.logic
"$redfox" import "$hp" --data "$tmp/data3" --out "$tmp/cw0" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import 3"; }
"$redfox" exec "$tmp/cw0" "$hp" --device cpu --format csv >"$tmp/cwold" 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec 3"; }
cp -r "$tmp/cw0" "$tmp/cwn"
"$redfox" exec "$tmp/cwn" "$hp" --device cpu --format csv --profile --batch "$tmp/h.txn" >"$tmp/cwnew" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "exec 3"; }
grep -q "commit: copy on write; .*: [1-9][0-9]* bytes kept in their files (linked into the new folder, not copied), 0 bytes copied" \
    "$tmp/err" || { cat "$tmp/err"; fail "the history's files not taken over"; }
cmp -s "$tmp/cwold" "$tmp/cwnew" && fail "batch 3 changes nothing"
kills=0 oldk=0 newk=0 tails=0
for call in link write syncfs fsync renameat2; do
    n=1
    while [ $n -le 8 ]; do
        rm -rf "$tmp/cw" "$tmp"/cw.tmp.* "$tmp"/cw.old.*
        cp -r "$tmp/cw0" "$tmp/cw"
        strace -f -qq -o /dev/null -e trace=$call -e inject=$call:signal=KILL:when=$n \
            "$redfox" exec "$tmp/cw" "$hp" --device cpu --format csv --batch "$tmp/h.txn" >/dev/null 2>&1 && break
        kills=$((kills + 1))
        [ -f "$tmp/cw/manifest.rfdb" ] || fail "cow $call $n: no database left at its name"
        if cmp -s "$tmp/cw/manifest.rfdb" "$tmp/cw0/manifest.rfdb"; then
            same_files "$tmp/cw" "$tmp/cw0" || fail "cow $call $n: old manifest, but a file's old bytes changed"
            for f in "$tmp/cw0"/*.col; do [ "$(wc -c <"$tmp/cw/${f##*/}")" -gt "$(wc -c <"$f")" ] && tails=$((tails + 1)) && break; done
            want=$tmp/cwold oldk=$((oldk + 1))
        elif cmp -s "$tmp/cw/manifest.rfdb" "$tmp/cwn/manifest.rfdb"; then
            same_files "$tmp/cw" "$tmp/cwn" || fail "cow $call $n: new manifest, but not the new files"
            want=$tmp/cwnew newk=$((newk + 1))
        else
            fail "cow $call $n: the manifest is neither the old nor the new one"
        fi
        "$redfox" run "$hp" --data "$tmp/cw" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "cow $call $n: run"; }
        cmp -s "$tmp/got" "$want" || fail "cow $call $n: the run reads another state than the manifest's"
        # the next exec (a killed commit's folder may still share the files: then copied)
        "$redfox" exec "$tmp/cw" "$hp" --device cpu --format csv --batch "$tmp/h.txn" >"$tmp/got" 2>"$tmp/err" ||
            { cat "$tmp/err"; fail "cow $call $n: the next exec"; }
        cmp -s "$tmp/got" "$tmp/cwnew" || fail "cow $call $n: the next exec's outputs"
        cmp -s "$tmp/cw/manifest.rfdb" "$tmp/cwn/manifest.rfdb" || fail "cow $call $n: the next exec's manifest"
        for f in "$tmp/cwn"/*.col; do cmp -s "$f" "$tmp/cw/${f##*/}" || fail "cow $call $n: ${f##*/} after the next exec"; done
        n=$((n + 1))
    done
done
[ $oldk -ge 3 ] && [ $newk -ge 1 ] && [ $tails -ge 1 ] ||
    fail "copy on write: too few kills hit the commit ($oldk old, $tails of them with a tail; $newk new)"
echo "ok copy on write: $kills kills, $oldk left the old state ($tails with a tail past the manifest), $newk the new"

# ---- after the commit: the folder's sync fails, the old state's folder stays ----
# Once a commit is done (its manifest renamed in place, or its folder
# exchanged with the database's), what follows cannot undo it: the sync of
# the folder that makes the rename durable, and the removal of the old
# state's folder. Where the system refuses them (strace: fsync fails with
# EIO, rmdir with EBUSY), exec says so in a warning naming the folder and
# exits 0, the database at the new state; never an "error:" with exit 0
# (before, the failed sync printed "error: cannot sync: ..." and exited 0,
# and a folder left beside the database was not mentioned).
abs=$(cd "$tmp" && pwd)
# (LeakSanitizer cannot run under ptrace: a sanitizer build's leak check is
# off for the runs under strace, which it would stop with a fatal error)
nolsan="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
e1=$(head -n 1 "$tmp/data2/edge.csv")
printf -- '-edge(%s).\n' "$e1" >"$tmp/del1.txn"
cp -r "$tmp/ip0" "$tmp/sn"
"$redfox" exec "$tmp/sn" "$p" --device cpu --format csv --batch "$tmp/del1.txn" >"$tmp/snnew" 2>"$tmp/err" || { cat "$tmp/err"; fail "sync: exec"; }
# after_commit NAME DB WANT STRACE-ARGS...: the exec on DB (a copy of ip0) with
# the batch of WANT's state, under strace with those arguments
after_commit() {
    name=$1 db=$2 want=$3 batch=$4
    shift 4
    rm -rf "$db" "$db".tmp.*
    cp -r "$tmp/ip0" "$db"
    $nolsan strace -f -qq -o /dev/null "$@" "$redfox" exec "$db" "$p" --device cpu --format csv --batch "$batch" \
        >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "$name: the exec failed"; }
    ! grep -q 'error:' "$tmp/err" || { cat "$tmp/err"; fail "$name: an error printed with exit 0"; }
    cmp -s "$tmp/got" "$want" || fail "$name: the outputs are not the new state's"
    "$redfox" run "$p" --data "$db" --device cpu --format csv >"$tmp/got2" 2>/dev/null || fail "$name: run"
    cmp -s "$tmp/got2" "$want" || fail "$name: the database is not at the new state"
}
after_commit "in place, the folder's sync" "$abs/sa" "$tmp/ipnew" "$tmp/b.txn" -P "$abs/sa" -e trace=fsync -e inject=fsync:error=EIO
grep -q "^$abs/sa: warning: cannot sync the folder after the commit: Input/output error; the commit is done" "$tmp/err" ||
    { cat "$tmp/err"; fail "in place, the folder's sync: no warning"; }
after_commit "copy on write, the parent's sync" "$abs/sb" "$tmp/snnew" "$tmp/del1.txn" -P "$abs" -e trace=fsync -e inject=fsync:error=EIO
grep -q "^$abs: warning: cannot sync the folder after the commit: Input/output error; the commit is done" "$tmp/err" ||
    { cat "$tmp/err"; fail "copy on write, the parent's sync: no warning"; }
after_commit "copy on write, the old folder" "$abs/sc" "$tmp/snnew" "$tmp/del1.txn" -e trace=rmdir -e inject=rmdir:error=EBUSY
left=$(ls -d "$abs"/sc.tmp.* 2>/dev/null)
[ -n "$left" ] && grep -q "^$left: warning: cannot remove this folder, the database's state before the commit: Device or resource busy" \
    "$tmp/err" || { cat "$tmp/err"; fail "copy on write, the old folder: left ($left) without a warning"; }
echo "ok after the commit: a failed sync of the folder and an old folder that stays are warnings, the commit done"
