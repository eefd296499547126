#!/bin/sh
# tests/run_host_oom.sh REDFOX TC_GRAPH PROG: with too little address space
# for its data, a run is a clear "out of memory" error with exit status 1,
# never a crash, said once and at the rule (not also a generic message): for
# the transitive closure PROG, and for a cross product too big for memory.
set -u
redfox=$1 graph=$2 prog=$3
tmp=${TMPDIR:-/tmp}/rf_hostoom.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
"$graph" 2600 10000 1 > "$tmp/edges.tbl" || exit 1
(ulimit -v 150000; exec "$redfox" run "$prog" --data "$tmp" --device cpu --threads 2) >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -ne 1 ] || [ "$(grep -c "out of memory" "$tmp/err")" != 1 ]; then
    echo "FAIL: exit $rc"; cat "$tmp/err"; exit 1
fi
# a cross product too big for memory (four atoms of 100 rows) names its rule
seq 1 100 > "$tmp/n.csv"
printf 'n(x) -> int(x).\nlang:input[`n] = "n.csv".\nq(a) <- n(a), n(b), n(c), n(d).\nlang:output[`q] = "q".\n' > "$tmp/cp.logic"
(ulimit -v 150000; exec "$redfox" run "$tmp/cp.logic" --data "$tmp" --device cpu --threads 2) >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -ne 1 ] || ! grep -q "cp.logic:3:1: error: out of memory" "$tmp/err" || [ "$(grep -c "out of memory" "$tmp/err")" != 1 ]; then
    echo "FAIL: cross product: exit $rc"; cat "$tmp/err"; exit 1
fi
