#!/bin/sh
# tests/run_out_crash.sh REDFOX: the files `redfox run --out DIR` and `tpch gen
# --out DIR` put in place are all or nothing, as redfox's readers and
# writers of DIR see them, even for a writer killed by SIGKILL between two
# of its renames (strace's fault injection, at each rename): the next
# reader (`run --data DIR`, `import --data DIR`) or writer (`run --out DIR`)
# finds the journal the killed one left and makes the renames it lists
# before it reads or writes: DIR then holds every file of the old run or
# every file of the new one, never some of each; the folder's other files
# stay; no journal stays. A damaged journal is refused, naming it.
set -u
redfox=$1
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace missing"; exit 77; }
tmp=${TMPDIR:-/tmp}/rf_out_crash.$$
mkdir -p "$tmp/d1" "$tmp/d2"
tmp=$(cd "$tmp" && pwd -P)
# (a cache of its own: a placement model another redfox rewrites in the
# shared one would add a rename to those the kills count)
XDG_CACHE_HOME=$tmp/cache
export XDG_CACHE_HOME
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat >"$tmp/w.logic" <<'EOF'
e(x, y) -> int(x), int(y).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
a(x) <- e(x, _).
b(y) <- e(_, y).
c(x, y) <- e(x, y), x < y.
lang:output[`a] = "a".
lang:output[`b] = "b".
lang:output[`c] = "c".
EOF
# the reader: the three outputs read back as its inputs
cat >"$tmp/r.logic" <<'EOF'
a(x) -> int(x).
b(y) -> int(y).
c(x, y) -> int(x), int(y).
lang:input[`a] = "a.csv".
lang:input[`b] = "b.csv".
lang:input[`c] = "c.csv".
lang:input:header[`a] = true.
lang:input:header[`b] = true.
lang:input:header[`c] = true.
lang:input:delimiter[`a] = ",".
lang:input:delimiter[`b] = ",".
lang:input:delimiter[`c] = ",".
ra(x) <- a(x).
rb(y) <- b(y).
rc(x, y) <- c(x, y).
lang:output[`ra] = "ra".
lang:output[`rb] = "rb".
lang:output[`rc] = "rc".
EOF
awk 'BEGIN { srand(51); for (i = 0; i < 200; i++) printf "%d,%d\n", int(rand() * 100), int(rand() * 100) }' >"$tmp/d1/e.csv"
awk 'BEGIN { srand(52); for (i = 0; i < 200; i++) printf "%d,%d\n", 100 + int(rand() * 100), int(rand() * 100) }' >"$tmp/d2/e.csv"
"$redfox" run "$tmp/w.logic" --data "$tmp/d1" --out "$tmp/old" --device cpu 2>"$tmp/err" || { cat "$tmp/err"; fail "run 1"; }
"$redfox" run "$tmp/w.logic" --data "$tmp/d2" --out "$tmp/new" --device cpu 2>"$tmp/err" || { cat "$tmp/err"; fail "run 2"; }
for f in a b c; do cmp -s "$tmp/old/$f.csv" "$tmp/new/$f.csv" && fail "$f.csv: the two runs agree"; done
"$redfox" run "$tmp/r.logic" --data "$tmp/old" --device cpu --format csv >"$tmp/rold" 2>"$tmp/err" || { cat "$tmp/err"; fail "read old"; }
"$redfox" run "$tmp/r.logic" --data "$tmp/new" --device cpu --format csv >"$tmp/rnew" 2>"$tmp/err" || { cat "$tmp/err"; fail "read new"; }
# one_run DIR WHERE: DIR's outputs are all the old run's or all the new one's; its other file kept; no journal
one_run() {
    o=0 n=0
    for f in a b c; do
        if cmp -s "$1/$f.csv" "$tmp/old/$f.csv"; then o=$((o + 1))
        elif cmp -s "$1/$f.csv" "$tmp/new/$f.csv"; then n=$((n + 1))
        else fail "$2: $f.csv is neither run's"; fi
    done
    [ $o = 3 ] || [ $n = 3 ] || fail "$2: $o files of the old run, $n of the new"
    [ "$(cat "$1/keep.txt")" = "keep" ] || fail "$2: the folder's other file changed"
    [ -e "$1/.redfox-renames" ] && fail "$2: the journal stays"
    return 0
}
kills=0 mixed=0
for next in run import out; do
    for call in rename renameat renameat2; do
        k=1
        while [ $k -le 6 ]; do
            rm -rf "$tmp/o" "$tmp/db"
            cp -r "$tmp/old" "$tmp/o"
            echo keep >"$tmp/o/keep.txt"
            strace -f -qq -o /dev/null -e trace=$call -e inject=$call:signal=KILL:when=$k \
                "$redfox" run "$tmp/w.logic" --data "$tmp/d2" --out "$tmp/o" --device cpu >/dev/null 2>&1 && break
            kills=$((kills + 1))
            o=0
            for f in a b c; do cmp -s "$tmp/o/$f.csv" "$tmp/old/$f.csv" && o=$((o + 1)); done
            [ $o != 0 ] && [ $o != 3 ] && mixed=$((mixed + 1))
            j=0
            [ -e "$tmp/o/.redfox-renames" ] && j=1
            case $next in
            run)
                "$redfox" run "$tmp/r.logic" --data "$tmp/o" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" ||
                    { cat "$tmp/err"; fail "$call $k: the next run"; }
                cmp -s "$tmp/got" "$tmp/rold" || cmp -s "$tmp/got" "$tmp/rnew" || fail "$call $k: the next run read a mix" ;;
            import)
                "$redfox" import "$tmp/r.logic" --data "$tmp/o" --out "$tmp/db" >/dev/null 2>"$tmp/err" ||
                    { cat "$tmp/err"; fail "$call $k: the next import"; }
                "$redfox" run "$tmp/r.logic" --data "$tmp/db" --device cpu --format csv >"$tmp/got" 2>"$tmp/err2" ||
                    { cat "$tmp/err2"; fail "$call $k: the imported database"; }
                cmp -s "$tmp/got" "$tmp/rold" || cmp -s "$tmp/got" "$tmp/rnew" || fail "$call $k: the next import read a mix" ;;
            out)
                "$redfox" run "$tmp/w.logic" --data "$tmp/d1" --out "$tmp/o" --device cpu 2>"$tmp/err" ||
                    { cat "$tmp/err"; fail "$call $k: the next run --out"; }
                for f in a b c; do cmp -s "$tmp/o/$f.csv" "$tmp/old/$f.csv" || fail "$call $k: the next run --out: $f.csv"; done
                ls -a "$tmp/o" | grep -q 'redfox-.*\.tmp$' && fail "$call $k: a temporary stays after the next run --out" ;;
            esac
            one_run "$tmp/o" "$next after $call $k"
            [ $j = 0 ] || grep -q "^$tmp/o: note: finished putting in place the 3 files a redfox writer killed" "$tmp/err" ||
                { cat "$tmp/err"; fail "$next after $call $k: no note of the renames finished"; }
            k=$((k + 1))
        done
    done
done
[ $mixed -ge 3 ] || fail "too few kills came between two renames ($kills kills, $mixed left a mix)"
echo "ok: $kills kills, $mixed of them between two renames, each finished by the next reader or writer"

# ---- tpch gen --out DIR (text), killed at each rename: the next reader (run)
# or writer (tpch gen) finds all the tables of one scale factor
g() { "$redfox" tpch gen --tables supplier,customer --out "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "tpch gen $*"; }; }
g "$tmp/g1" --sf 0.01
g "$tmp/g2" --sf 0.02
cat >"$tmp/c.logic" <<'EOF2'
customer(ck, n, a, nk, ph, bal, seg, c) -> int(ck), string(n), string(a), int(nk), string(ph), decimal(bal), string(seg), string(c).
supplier(sk, n, a, nk, ph, bal, c) -> int(sk), string(n), string(a), int(nk), string(ph), decimal(bal), string(c).
lang:input[`customer] = "customer.tbl".
lang:input[`supplier] = "supplier.tbl".
nations(nk, k) <- agg<<k = count()>> customer(_, _, _, nk, _, _, _, _).
snations(nk, k) <- agg<<k = count()>> supplier(_, _, _, nk, _, _, _).
lang:output[`nations] = "nations".
lang:output[`snations] = "snations".
EOF2
"$redfox" run "$tmp/c.logic" --data "$tmp/g1" --device cpu --format csv >"$tmp/c1" 2>"$tmp/err" || { cat "$tmp/err"; fail "read g1"; }
"$redfox" run "$tmp/c.logic" --data "$tmp/g2" --device cpu --format csv >"$tmp/c2" 2>"$tmp/err" || { cat "$tmp/err"; fail "read g2"; }
gkills=0 gmixed=0
for next in run gen; do
    for call in rename renameat; do
        k=1
        while [ $k -le 4 ]; do
            rm -rf "$tmp/g"
            cp -r "$tmp/g1" "$tmp/g"
            strace -f -qq -o /dev/null -e trace=$call -e inject=$call:signal=KILL:when=$k \
                "$redfox" tpch gen --sf 0.02 --tables supplier,customer --out "$tmp/g" >/dev/null 2>&1 && break
            gkills=$((gkills + 1))
            cmp -s "$tmp/g/customer.tbl" "$tmp/g1/customer.tbl"; c=$?
            cmp -s "$tmp/g/supplier.tbl" "$tmp/g1/supplier.tbl"; [ $? != $c ] && gmixed=$((gmixed + 1))
            if [ $next = run ]; then
                "$redfox" run "$tmp/c.logic" --data "$tmp/g" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" ||
                    { cat "$tmp/err"; fail "gen $call $k: the next run"; }
                cmp -s "$tmp/got" "$tmp/c1" || cmp -s "$tmp/got" "$tmp/c2" || fail "gen $call $k: the next run read a mix"
            else
                g "$tmp/g" --sf 0.01
            fi
            for t in customer supplier; do
                cmp -s "$tmp/g/$t.tbl" "$tmp/g1/$t.tbl" && echo 1 || { cmp -s "$tmp/g/$t.tbl" "$tmp/g2/$t.tbl" && echo 2; } || echo x
            done | sort -u | tr -d '\n' >"$tmp/which"
            [ "$(cat "$tmp/which")" = 1 ] || [ "$(cat "$tmp/which")" = 2 ] || fail "gen $call $k: tables of two scale factors after the next $next"
            [ -e "$tmp/g/.redfox-renames" ] && fail "gen $call $k: the journal stays"
            k=$((k + 1))
        done
    done
done
[ $gmixed -ge 1 ] || fail "no kill of tpch gen came between two renames ($gkills kills)"
echo "ok: tpch gen: $gkills kills, $gmixed between two renames, each finished by the next reader or writer"

# ---- a damaged journal: refused, naming it; nothing renamed
rm -rf "$tmp/o"
cp -r "$tmp/old" "$tmp/o"
echo keep >"$tmp/o/keep.txt"
printf 'redfox renames 1\n../x/a.csv\nend\n' >"$tmp/o/.redfox-renames"
"$redfox" run "$tmp/r.logic" --data "$tmp/o" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" && fail "a damaged journal read"
grep -q "$tmp/o/.redfox-renames: error: not a list of renames as redfox writes them" "$tmp/err" || { cat "$tmp/err"; fail "damaged: the error"; }
one_run_files() { for f in a b c; do cmp -s "$tmp/o/$f.csv" "$tmp/old/$f.csv" || fail "damaged: $f.csv changed"; done; }
one_run_files
"$redfox" run "$tmp/w.logic" --data "$tmp/d2" --out "$tmp/o" --device cpu 2>"$tmp/err" && fail "a damaged journal written over"
grep -q "not a list of renames as redfox writes them" "$tmp/err" || { cat "$tmp/err"; fail "damaged: the writer's error"; }
one_run_files
echo "ok: a damaged journal is refused"

# ---- a reader that may not write DIR: refused, saying what to do (as another user than root)
. "$(dirname "$0")/lib_other_user.sh"
if [ "$as_other" != none ]; then
    k=2
    while [ $k -le 6 ]; do
        rm -rf "$tmp/o"
        cp -r "$tmp/old" "$tmp/o"
        echo keep >"$tmp/o/keep.txt"
        strace -f -qq -o /dev/null -e trace=rename -e inject=rename:signal=KILL:when=$k \
            "$redfox" run "$tmp/w.logic" --data "$tmp/d2" --out "$tmp/o" --device cpu >/dev/null 2>&1 && fail "no kill"
        [ -e "$tmp/o/.redfox-renames" ] && break
        k=$((k + 1))
    done
    [ -e "$tmp/o/.redfox-renames" ] || fail "read-only: no kill left a journal"
    chmod -R a+rX "$tmp" && chmod a-w "$tmp/o" && chmod a+x "$tmp"
    # shellcheck disable=SC2086
    $as_other "$redfox" run "$tmp/r.logic" --data "$tmp/o" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" &&
        fail "read-only: a half-done folder read"
    grep -q "$tmp/o: error: a redfox writer killed while it put its files in place left them half done" "$tmp/err" ||
        { cat "$tmp/err"; fail "read-only: the error"; }
    chmod u+w "$tmp/o"
    "$redfox" run "$tmp/r.logic" --data "$tmp/o" --device cpu --format csv >"$tmp/got" 2>"$tmp/err" || { cat "$tmp/err"; fail "writable: run"; }
    one_run "$tmp/o" "once writable"
    echo "ok: a reader that may not finish the renames refuses"
fi
