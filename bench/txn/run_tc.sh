#!/bin/sh
# bench/txn/run_tc.sh BUILD NODES EDGES [DEVICE] [PERCENT]: the transitive
# closure of a random graph (bench/tc_graph.c) kept in a database by `redfox
# exec`; PERCENT % new edges (default 1) inserted once incrementally (delta
# rules) and once by --recompute on a copy, then the same edges deleted
# again (DRed against recomputation). Prints each exec's --profile lines and
# checks that both ways give the same outputs and the same closure size.
set -eu
build=$1
nodes=$2
edges=$3
dev=${4:-cpu}
pct=${5:-1}
redfox=$build/tools/redfox
here=$(cd "$(dirname "$0")" && pwd)
tmp=${TMPDIR:-/tmp}/rf_txn_bench.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
"$build/bench/tc_graph" "$nodes" "$edges" 1 >"$tmp/data/edges.tbl"
"$build/bench/tc_graph" "$nodes" $((edges * pct / 100)) 2 |
    awk -F'|' '{ printf "+edge(%s, %s).\n", $1, $2 }' >"$tmp/ins.txn"
sed 's/^+/-/' "$tmp/ins.txn" >"$tmp/del.txn"
"$redfox" import "$here/tc.logic" --data "$tmp/data" --out "$tmp/db" >/dev/null
t() { # label args...: one exec, its profile's maintenance line and wall time
    label=$1
    shift
    s=$(date +%s.%N)
    "$redfox" exec "$@" --device "$dev" --profile --format csv >"$tmp/out.$label" 2>"$tmp/err.$label"
    e=$(date +%s.%N)
    printf '%-28s wall %8.3f s | %s | commit %s | %s\n' "$label" "$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }')" \
        "$(sed -n 's/.*derived predicates \(.*\) (\([0-9.]* ms\), runs.*/\2: \1/p' "$tmp/err.$label" | cut -c1-70)" \
        "$(sed -n 's/.* commit \([0-9.]* ms\).*/\1/p' "$tmp/err.$label")" \
        "$(grep -o 'path: [0-9]* -> [0-9]* tuples (table [a-z ]*)' "$tmp/err.$label")"
    # where the time went: each generated run (device start, kernels loaded,
    # copies, run, join builds), the GPU code compiled ahead, the reading and the commit
    grep -e '^exec:   run of' -e 'compiled ahead' -e 'GPU started beside' -e 'in place' "$tmp/err.$label" |
        grep -v 'tuples (table' | sed 's/^exec: */    /'
    sed -n 's/^exec: compile [0-9.]* ms, \(read the database .*\), outputs.*\(commit .*written)\).*/    \1; \2/p' \
        "$tmp/err.$label"
}
echo "graph: $nodes nodes, $edges edges; batch: $(wc -l <"$tmp/ins.txn") edges ($pct %), device $dev"
t "init (materialize)" "$tmp/db" "$here/tc.logic"
cp -r "$tmp/db" "$tmp/db2"
t "insert, incremental" "$tmp/db" "$here/tc.logic" --batch "$tmp/ins.txn"
t "insert, --recompute" "$tmp/db2" "$here/tc.logic" --batch "$tmp/ins.txn" --recompute
cmp -s "$tmp/out.insert, incremental" "$tmp/out.insert, --recompute" || { echo "OUTPUTS DIFFER"; exit 1; }
t "delete, incremental (DRed)" "$tmp/db" "$here/tc.logic" --batch "$tmp/del.txn"
t "delete, --recompute" "$tmp/db2" "$here/tc.logic" --batch "$tmp/del.txn" --recompute
cmp -s "$tmp/out.delete, incremental (DRed)" "$tmp/out.delete, --recompute" || { echo "OUTPUTS DIFFER"; exit 1; }
