#!/bin/sh
# tests/run_db_read_lock.sh REDFOX TC_GRAPH PROG: `redfox run --data DB` reads a
# database under its shared lock: it waits while a writer holds the folder's
# exclusive lock (as `redfox exec` does for a commit), and runs beside a
# stream of commits never fail. So do `tpch run` and `tpch bench` (they took
# no lock: beside `tpch gen --format db` replacing their database they read
# column files of the new folder under the old manifest: 'truncated or
# damaged', 'checksum mismatch', or a segmentation fault).
set -u
redfox=$1 graph=$2 prog=$3
tmp=${TMPDIR:-/tmp}/rf_readlock.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$graph" 300 600 1 > "$tmp/data/edges.tbl" || exit 1
"$redfox" import "$prog" --data "$tmp/data" --out "$tmp/db" > /dev/null 2>&1 || fail "import"
"$redfox" exec "$tmp/db" "$prog" > /dev/null 2>&1 || fail "exec (materialize)"

# 1. a writer's exclusive lock on the folder holds a run back until it ends
flock "$tmp/db" sleep 2 &
holder=$!
sleep 0.5
s=$(date +%s%N)
"$redfox" run "$prog" --data "$tmp/db" --format csv > "$tmp/a.csv" 2> "$tmp/a.err" || { cat "$tmp/a.err"; fail "run under a lock"; }
e=$(date +%s%N)
wait $holder
waited_ms=$(( (e - s) / 1000000 ))
[ "$waited_ms" -ge 1000 ] || fail "the run did not wait for the writer's lock ($waited_ms ms)"

# 1b. a commit waits for a run reading the database (its shared lock), and
# --profile says it waited for the lock, not for "another exec" (it said so)
echo "+edge(999, 998)." > "$tmp/w.txn"
flock -s "$tmp/db" sleep 1 &
holder=$!
sleep 0.3
"$redfox" exec "$tmp/db" "$prog" --batch "$tmp/w.txn" --profile > /dev/null 2> "$tmp/w.err" || { cat "$tmp/w.err"; fail "exec beside a reader"; }
wait $holder
grep -q "^exec: waited for the lock on $tmp/db (another exec or import committing, or runs reading it)$" "$tmp/w.err" ||
    { cat "$tmp/w.err"; fail "exec beside a reader: the profile does not say it waited for the lock"; }

# 2. runs beside a stream of commits: each succeeds
i=0
while [ $i -lt 12 ]; do
    echo "+edge($((1000 + i)), $((1001 + i)))." > "$tmp/b$i.txn"
    i=$((i + 1))
done
(
    i=0
    while [ $i -lt 12 ]; do
        "$redfox" exec "$tmp/db" "$prog" --batch "$tmp/b$i.txn" > /dev/null 2> "$tmp/x$i.err" || { echo "exec $i failed" > "$tmp/xfail"; cat "$tmp/x$i.err" >> "$tmp/xfail"; }
        i=$((i + 1))
    done
) &
writer=$!
n=0
while [ $n -lt 25 ]; do
    "$redfox" run "$prog" --data "$tmp/db" --format csv > "$tmp/r$n.csv" 2> "$tmp/r$n.err" || { cat "$tmp/r$n.err"; fail "run $n beside the commits"; }
    n=$((n + 1))
done
wait $writer
[ -f "$tmp/xfail" ] && { cat "$tmp/xfail"; fail "a commit failed"; }
cmp -s "$tmp/a.csv" "$tmp/r0.csv" || [ -s "$tmp/r0.csv" ] || fail "empty output"

# 3. tpch run and tpch bench wait for a writer's lock, and read beside gens replacing the database
"$redfox" tpch gen --sf 0.01 --format db --tables lineitem,orders,customer,supplier --out "$tmp/tpch" 2>/dev/null || fail "tpch gen"
for cmd in "tpch run --data $tmp/tpch --queries 3 --device cpu" "tpch bench --data $tmp/tpch --queries 3 --repeat 1 --device cpu"; do
    flock "$tmp/tpch" sleep 2 &
    holder=$!
    sleep 0.5
    s=$(date +%s%N)
    $redfox $cmd > "$tmp/t.out" 2>&1 || { cat "$tmp/t.out"; fail "$cmd under a lock"; }
    e=$(date +%s%N)
    wait $holder
    ms=$(( (e - s) / 1000000 ))
    [ "$ms" -ge 1000 ] || fail "$cmd did not wait for the writer's lock ($ms ms)"
done
(
    for sf in 0.02 0.01 0.02 0.01; do
        "$redfox" tpch gen --sf $sf --format db --tables lineitem,orders,customer,supplier --out "$tmp/tpch" > /dev/null 2>&1 || echo "gen $sf failed" > "$tmp/gfail"
    done
) &
writer=$!
n=0
while [ $n -lt 8 ]; do
    "$redfox" tpch run --data "$tmp/tpch" --queries 3,18 --device cpu > "$tmp/t$n.out" 2>&1 || { cat "$tmp/t$n.out"; fail "tpch run $n beside the gens"; }
    n=$((n + 1))
done
wait $writer
[ -f "$tmp/gfail" ] && { cat "$tmp/gfail"; fail "a gen failed"; }
echo "ok: the run waited $waited_ms ms for the writer; 25 runs beside 12 commits; tpch run and bench waited too"
