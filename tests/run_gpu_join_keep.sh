#!/bin/sh
# tests/run_gpu_join_keep.sh REDFOX TC_GRAPH TC_PROG EXEC_PROG: on the
# emulated GPU, a fixpoint loop's joins with a relation the loop never writes
# build their hash table once a run, not once a round (--profile's "gpu join
# builds: M made, R reused"; the rounds are the calls of the loop's insert):
# - `redfox run` of the transitive closure: the join with `edge`;
# - `redfox exec` inserting edges into a stored closure: the delta rules'
#   joins with the old and inserted edges and their anti-joins with the
#   stored closure (an input of the run: before, each was built every round).
# Both must give the CPU's answers.
set -u
redfox=$1 graph=$2 prog=$3 xprog=$4
tmp=${TMPDIR:-/tmp}/rf_joinkeep.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail=0
export RF_GPU_EMULATE=1

# check LABEL PROFILE_TEXT MIN_PER_ROUND: builds made fewer than half the
# rounds, at least MIN_PER_ROUND x (rounds - 2) reused (a last round of few
# rows may build on its small side instead)
check() {
    line=$(grep 'gpu join builds:' "$2" | head -n 1)
    made=$(echo "$line" | sed -n 's/.*builds: \([0-9]*\) made, \([0-9]*\) reused.*/\1/p')
    reused=$(echo "$line" | sed -n 's/.*builds: \([0-9]*\) made, \([0-9]*\) reused.*/\2/p')
    rounds=$(awk '$2 == "insert" && $4 > r { r = $4 } END { print r + 0 }' "$2")
    echo "$1: $rounds rounds, join builds: ${made:-?} made, ${reused:-?} reused"
    if [ -z "$made" ] || [ -z "$reused" ] || [ "$rounds" -lt 8 ]; then
        echo "FAIL: $1: no join builds line or too few rounds"; fail=1
    elif [ $((made * 2)) -ge "$rounds" ] || [ "$reused" -lt $(($3 * (rounds - 2))) ]; then
        echo "FAIL: $1: builds not kept across the rounds"; fail=1
    fi
}

"$graph" 300 400 7 >"$tmp/data/edges.tbl" || exit 1
"$redfox" run "$prog" --data "$tmp/data" --device cpu --format csv >"$tmp/cpu.csv" 2>/dev/null || exit 1
"$redfox" run "$prog" --data "$tmp/data" --device gpu --format csv --profile >"$tmp/gpu.csv" 2>"$tmp/err" ||
    { echo "FAIL: run: exit $?"; cat "$tmp/err"; exit 1; }
cmp -s "$tmp/cpu.csv" "$tmp/gpu.csv" || { echo "FAIL: run: outputs differ"; fail=1; }
check "run (tc)" "$tmp/err" 1

# exec: the closure stored, then 2 % new edges inserted by the delta rules
"$graph" 300 8 9 | awk -F'|' '{ printf "+edge(%s, %s).\n", $1, $2 }' >"$tmp/ins.txn"
"$redfox" import "$xprog" --data "$tmp/data" --out "$tmp/db" >/dev/null 2>&1 || { echo "FAIL: import"; exit 1; }
"$redfox" exec "$tmp/db" "$xprog" --device gpu --format csv >/dev/null 2>"$tmp/err0" || { cat "$tmp/err0"; exit 1; }
cp -r "$tmp/db" "$tmp/db2"
"$redfox" exec "$tmp/db" "$xprog" --batch "$tmp/ins.txn" --device gpu --format csv --profile-kernels \
    >"$tmp/inc.csv" 2>"$tmp/xerr" || { echo "FAIL: exec: exit $?"; cat "$tmp/xerr"; exit 1; }
"$redfox" exec "$tmp/db2" "$xprog" --batch "$tmp/ins.txn" --device cpu --recompute --format csv \
    >"$tmp/re.csv" 2>/dev/null || { echo "FAIL: exec --recompute"; exit 1; }
cmp -s "$tmp/inc.csv" "$tmp/re.csv" || { echo "FAIL: exec: outputs differ from recomputing on the CPU"; fail=1; }
# the delta rules' run (the first profile)
sed -n '/^exec: the run of the delta rules/,/^gpu host time/p' "$tmp/xerr" >"$tmp/delta"
check "exec (delta rules)" "$tmp/delta" 2
[ $fail = 0 ] && echo "ok"
exit $fail
