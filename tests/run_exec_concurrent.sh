#!/bin/sh
# tests/run_exec_concurrent.sh REDFOX EXEC_DIR N: N `redfox exec` processes
# started at once on one database, each inserting its own edge. They commit
# one after another (a lock on the database folder), so every insert is in
# the database afterwards and the stored closure equals a from-scratch run;
# without the lock, execs that read the same old state lose each other's
# inserts.
set -u
redfox=$1
dir=$2
n=$3
tmp=${TMPDIR:-/tmp}/rf_exec_conc.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
awk 'BEGIN { for (i = 0; i < 200; i++) printf "%d,%d\n", i, i + 1 }' >"$tmp/data/edge.csv"
"$redfox" import "$dir/tc.logic" --data "$tmp/data" --out "$tmp/db" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
"$redfox" exec "$tmp/db" "$dir/tc.logic" --init --device cpu --threads 1 >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "init"; }
i=0
while [ $i -lt "$n" ]; do
    printf '+edge(%d, %d).\n' $((1000 + i)) $((1001 + i)) >"$tmp/b$i.txn"
    "$redfox" exec "$tmp/db" "$dir/tc.logic" --batch "$tmp/b$i.txn" --device cpu --threads 1 >/dev/null 2>"$tmp/e$i" &
    i=$((i + 1))
done
wait
i=0
while [ $i -lt "$n" ]; do
    [ -s "$tmp/e$i" ] && { cat "$tmp/e$i"; fail "exec $i wrote errors"; }
    i=$((i + 1))
done
printf 'edge(a, b) -> int(a), int(b).\nlang:input[`edge] = "edge.csv".\nlang:input:delimiter[`edge] = ",".\nlang:output[`edge] = "edge".\n' >"$tmp/dump.logic"
got=$("$redfox" run "$tmp/dump.logic" --data "$tmp/db" --device cpu --format csv 2>/dev/null | tail -n +2 | wc -l)
[ "$got" -eq $((200 + n)) ] || fail "$got edges in the database after $n concurrent inserts into 200: updates were lost"
# the stored closure is the closure of the stored edges
"$redfox" exec "$tmp/db" "$dir/tc.logic" --device cpu --format csv >"$tmp/kept.csv" 2>"$tmp/err" || { cat "$tmp/err"; fail "exec"; }
"$redfox" run "$dir/tc.logic" --data "$tmp/db" --device cpu --format csv >"$tmp/fresh.csv" 2>"$tmp/err" || { cat "$tmp/err"; fail "run"; }
cmp -s "$tmp/kept.csv" "$tmp/fresh.csv" || fail "the maintained closure differs from a from-scratch run"
# an import over the database while an exec runs: it waits for the database's
# lock, so it is never undone by a commit computed from the old data (it was:
# the exec's commit swapped the old data back, both exiting 0). A closure of
# 1,200 nodes, so that the exec's deletion takes a few tenths of a second.
mkdir -p "$tmp/data3" "$tmp/data2"
awk 'BEGIN { for (i = 0; i < 1200; i++) printf "%d,%d\n%d,%d\n", i, i + 1, i, i + 3 }' >"$tmp/data3/edge.csv"
awk 'BEGIN { for (i = 0; i < 200; i++) printf "%d,%d\n", 100000 + i, 100001 + i }' >"$tmp/data2/edge.csv"
printf 'm[] = k <- agg<<k = max(a)>> edge(a, _).\nlang:output[`m] = "m".\n' >>"$tmp/dump.logic"
printf -- '-edge(5, 6).\n' >"$tmp/del.txn"
for delay in 0.02 0.05 0.1; do
    rm -rf "$tmp/db3"
    "$redfox" import "$dir/tc.logic" --data "$tmp/data3" --out "$tmp/db3" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
    "$redfox" exec "$tmp/db3" "$dir/tc.logic" --init --device cpu --threads 1 >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "init"; }
    "$redfox" exec "$tmp/db3" "$dir/tc.logic" --batch "$tmp/del.txn" --device cpu --threads 1 >/dev/null 2>"$tmp/f" &
    sleep $delay
    "$redfox" import "$dir/tc.logic" --data "$tmp/data2" --out "$tmp/db3" >/dev/null 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "import beside an exec"; }
    wait
    m=$("$redfox" run "$tmp/dump.logic" --data "$tmp/db3" --device cpu --format csv 2>/dev/null | sed -n '/^k$/{n;p;}')
    [ "$m" = 100199 ] || fail "import beside an exec (after $delay s): the database's largest node is '$m', not the import's 100199"
done
echo "ok: $n concurrent execs, every insert kept; an import beside execs is kept"
