#!/bin/sh
# tests/run_text_folder_lock.sh REDFOX: a text folder that `tpch gen` rewrites
# is read under the folder's lock, as a database is (docs/LANGUAGE.md,
# Inputs; docs/DATABASE.md): `tpch gen` renames its .tbl files into place under the
# folder's exclusive lock (flock on the folder itself), and the readers of a
# text folder (`run`, `tpch run`, `tpch bench`, `import`) hold it shared from
# their first table to their last. Before, they took none, and a `tpch run`
# beside a gen could load lineitem of one scale factor and orders of
# another: wrong answers, exit 0.
#   1. each reader waits for a writer's exclusive lock (held here by flock(1));
#   2. `tpch gen` waits, before its renames, for a reader's shared lock;
#   3. reading creates no file in the folder (a read-only folder reads as
#      before);
#   4. `tpch run`s beside a gen replacing SF 0.01 by 0.02 each answer
#      wholly from one of them;
#   5. `run --out DIR` reading DIR beside a gen of DIR ends (the run lets its
#      read lock go before it waits for DIR/.redfox.lock, which the gen holds
#      while it waits for the readers).
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_textlock.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if command -v timeout >/dev/null 2>&1; then to="timeout 120"; else to=; fi
command -v flock >/dev/null 2>&1 || { echo "skipped: no flock(1)"; exit 0; }
tables=lineitem,orders,customer,supplier
# (each gen costs seconds whatever the scale, its text pool: as few as can be)
$to "$redfox" tpch gen --sf 0.01 --tables $tables --out "$tmp/d" >/dev/null 2>&1 || fail "tpch gen"
$to "$redfox" tpch gen --sf 0.02 --tables $tables --out "$tmp/ref0.02" >/dev/null 2>&1 || fail "tpch gen 0.02"
mkdir -p "$tmp/ref0.01"
cp "$tmp/d/"*.tbl "$tmp/ref0.01/"
cat >"$tmp/p.logic" <<'P'
customer(ck, n, a, nk, ph, bal, seg, c) -> int(ck), string(n), string(a), int(nk), string(ph), decimal(bal), string(seg), string(c).
lang:input[`customer] = "customer.tbl".
segs(s, k) <- agg<<k = count()>> customer(_, _, _, _, _, _, s, _).
lang:output[`segs] = "segs".
P
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# ---- 1. readers wait for the writer's exclusive lock (all four at once) ----
flock "$tmp/d" sleep 2 &
holder=$!
sleep 0.5
k=0
for cmd in "run $tmp/p.logic --data $tmp/d --device cpu" \
    "tpch run --data $tmp/d --queries 3 --device cpu" \
    "tpch bench --data $tmp/d --queries 3 --repeat 1 --device cpu" \
    "import $tmp/p.logic --data $tmp/d --out $tmp/db"; do
    k=$((k + 1))
    (
        s=$(date +%s%N)
        # shellcheck disable=SC2086
        $to "$redfox" $cmd >"$tmp/out$k" 2>&1 || { cat "$tmp/out$k"; echo "$cmd under a lock failed" >"$tmp/fail$k"; exit; }
        waited=$(ms "$s")
        [ "$waited" -ge 1000 ] || echo "$cmd did not wait for the writer's lock ($waited ms)" >"$tmp/fail$k"
    ) &
done
wait
for k in 1 2 3 4; do [ -f "$tmp/fail$k" ] && fail "$(cat "$tmp/fail$k")"; done

# ---- 2. tpch gen waits for a reader before its renames ----
# (a reader's shared lock held until the gen is seen waiting for the folder's
# exclusive lock in /proc/locks, where the system has it; region.tbl must
# not change meanwhile)
if [ -r /proc/locks ]; then
    cp "$tmp/d/lineitem.tbl" "$tmp/lineitem.before"
    flock -s "$tmp/d" sh -c 'while [ ! -f "$0" ]; do sleep 0.1; done' "$tmp/release" &
    holder=$!
    sleep 0.5
    "$redfox" tpch gen --sf 0.02 --tables lineitem --out "$tmp/d" >/dev/null 2>"$tmp/gerr" &
    gen=$!
    seen=0 i=0
    while [ $i -lt 600 ] && kill -0 $gen 2>/dev/null; do
        if grep -q -- "-> FLOCK *ADVISORY *WRITE *$gen " /proc/locks; then seen=1; break; fi
        sleep 0.1
        i=$((i + 1))
    done
    cmp -s "$tmp/d/lineitem.tbl" "$tmp/lineitem.before" || { touch "$tmp/release"; fail "tpch gen replaced a table under a reader's lock"; }
    touch "$tmp/release"
    wait $holder
    wait $gen || { cat "$tmp/gerr"; fail "tpch gen beside a reader"; }
    [ $seen = 1 ] || fail "tpch gen did not wait for the reader's lock"
    grep -q 'waited for the runs reading this folder' "$tmp/gerr" || { cat "$tmp/gerr"; fail "tpch gen's note"; }
    cmp -s "$tmp/d/lineitem.tbl" "$tmp/lineitem.before" && fail "tpch gen did not replace lineitem"
    cp "$tmp/ref0.01/lineitem.tbl" "$tmp/d/"
fi

# ---- 3. a reader creates no file in a text folder ----
mkdir -p "$tmp/ro"
cp "$tmp/d/customer.tbl" "$tmp/ro/"
before=$(ls -A "$tmp/ro")
$to "$redfox" run "$tmp/p.logic" --data "$tmp/ro" --device cpu >"$tmp/ro.out" 2>"$tmp/err" || { cat "$tmp/err"; fail "run on a plain folder"; }
$to "$redfox" import "$tmp/p.logic" --data "$tmp/ro" --out "$tmp/rodb" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import from a plain folder"; }
[ "$(ls -A "$tmp/ro")" = "$before" ] || { ls -A "$tmp/ro"; fail "reading the folder created files in it"; }
chmod a-w "$tmp/ro"
$to "$redfox" run "$tmp/p.logic" --data "$tmp/ro" --device cpu >"$tmp/ro2.out" 2>"$tmp/err" || { chmod u+w "$tmp/ro"; cat "$tmp/err"; fail "run on a read-only folder"; }
chmod u+w "$tmp/ro"
cmp -s "$tmp/ro.out" "$tmp/ro2.out" || fail "a read-only folder reads otherwise"

# ---- 4. tpch run beside gens of two scale factors ----
for sf in 0.01 0.02; do
    $to "$redfox" tpch run --data "$tmp/ref$sf" --queries 3,18 --device cpu --out "$tmp/want$sf" >/dev/null 2>&1 || fail "run $sf"
done
(
    $to "$redfox" tpch gen --sf 0.02 --tables $tables --out "$tmp/d" >/dev/null 2>&1 || echo "the gen failed" >"$tmp/gfail"
) &
writer=$!
n=0
while [ $n -lt 8 ]; do
    rm -rf "$tmp/got"
    $to "$redfox" tpch run --data "$tmp/d" --queries 3,18 --device cpu --out "$tmp/got" >"$tmp/t.out" 2>&1 || { cat "$tmp/t.out"; fail "tpch run $n beside the gens"; }
    diff -r "$tmp/got" "$tmp/want0.01" >/dev/null 2>&1 || diff -r "$tmp/got" "$tmp/want0.02" >/dev/null 2>&1 ||
        fail "tpch run $n: the answers are of neither scale factor (tables of two generations)"
    n=$((n + 1))
done
wait $writer
[ -f "$tmp/gfail" ] && { cat "$tmp/gfail"; fail "a gen failed"; }
# ---- 5. run --out into the folder it reads, beside a gen of that folder ----
# (the gen holds DIR/.redfox.lock from its start and waits for the readers
# before its renames; the run held its read lock while it waited for
# DIR/.redfox.lock to write its output: each waited for the other for ever)
"$redfox" tpch gen --sf 0.01 --tables customer --out "$tmp/d" >/dev/null 2>&1 &
gen=$!
sleep 0.5
timeout 60 "$redfox" run "$tmp/p.logic" --data "$tmp/d" --device cpu --out "$tmp/d" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 124 ] && { kill $gen; fail "run --out into its data folder beside a gen: a deadlock"; }
wait $gen || fail "the gen beside run --out"
[ $rc = 0 ] || { cat "$tmp/err"; fail "run --out into its data folder: exit $rc"; }
[ -s "$tmp/d/segs.csv" ] || fail "run --out into its data folder: no output"

echo "ok: run, tpch run, tpch bench and import waited for the writer; tpch gen for a reader; 8 runs beside a gen; run --out into the folder beside a gen"
