#!/bin/sh
# bench/txn/tpcb/batches.sh BUILD SCALE N BATCHES [DEVICE] [ACCOUNTS]: the
# TPC-B-style bank (README.md here) kept over BATCHES successive batches of N
# transactions each (the generator's batch, seed 1, its ids renumbered per
# batch), once maintained incrementally (by diffs: the totals from their old
# values and the batch) and once with `--recompute` on a copy (every balance
# from the whole history, as before). Per batch: the whole exec's wall time
# (and the process's CPU time) and its maintenance (`--profile`) both ways; the two must print the same
# outputs (the script stops otherwise).
set -eu
build=$1
scale=$2
n=$3
batches=$4
dev=${5:-cpu}
per=${6:-100000}
here=$(cd "$(dirname "$0")" && pwd)
redfox=$build/tools/redfox
prog=$here/tpcb.logic
tmp=${TMPDIR:-/tmp}/rf_tpcb_batches.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
now() { date +%s.%N; }
ms() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.0f", (e - s) * 1000 }'; }
"$build/bench/tpcb_gen" "$tmp/gen" "$scale" "$per" "$n" 1 >/dev/null
"$redfox" import "$prog" --data "$tmp/gen/data" --out "$tmp/inc" >/dev/null
"$redfox" exec "$tmp/inc" "$prog" --device "$dev" >/dev/null
cp -r "$tmp/inc" "$tmp/re"
sed 's/^+txn(\([0-9]*\), /\1 /' "$tmp/gen/batch.txn" >"$tmp/rows"
echo "TPC-B: $scale branch(es), $((scale * per)) accounts; $batches batches of $n transactions; device $dev"
echo "batch | history after | incremental: whole, maintenance | --recompute: whole, maintenance"
# the process's CPU time beside its wall time, where GNU time is there (the
# machine may be shared: then wall time overstates the work)
timer=
[ -x /usr/bin/time ] && timer="/usr/bin/time -f %U+%S -o $tmp/cpu"
k=0
while [ $k -lt "$batches" ]; do
    awk -v off=$((k * n)) '{ i = $1; $1 = ""; printf "+txn(%d,%s\n", i + off, substr($0, 2) }' "$tmp/rows" >"$tmp/b.txn"
    for way in inc re; do
        flag=
        [ $way = re ] && flag=--recompute
        s=$(now)
        $timer "$redfox" exec "$tmp/$way" "$prog" --batch "$tmp/b.txn" --device "$dev" --format tbl --profile $flag \
            >"$tmp/$way.out" 2>"$tmp/$way.prof" || { cat "$tmp/$way.prof"; fail "exec $way"; }
        e=$(now)
        cpu=n/a
        [ -s "$tmp/cpu" ] && cpu=$(awk -F+ '{ printf "%.0f ms", ($1 + $2) * 1000 }' "$tmp/cpu")
        eval "whole_$way=\"$(ms "$s" "$e") ms (cpu $cpu)\""
        eval "maint_$way=$(sed -n 's/^exec: derived predicates .*(\([0-9.]*\) ms, runs.*/\1/p' "$tmp/$way.prof")"
    done
    cmp -s "$tmp/inc.out" "$tmp/re.out" || { diff "$tmp/inc.out" "$tmp/re.out" | head; fail "batch $k: incremental differs from --recompute"; }
    grep -q 'by diffs' "$tmp/inc.prof" || fail "batch $k: not maintained by diffs"
    k=$((k + 1))
    echo "$k | $((k * n)) | ${whole_inc}, ${maint_inc} ms | ${whole_re}, ${maint_re} ms"
done
