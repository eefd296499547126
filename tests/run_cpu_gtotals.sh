#!/bin/sh
# tests/run_cpu_gtotals.sh REDFOX DIR: grouped totals on the CPU (a map read
# only by its group and reduce, run as one pass) give the same outputs and
# errors as the three kernels apart (--no-fuse): few groups, groups spread
# over several row chunks, more groups than one pass keeps (it then runs
# apart), and an overflowing total. Also checks that the spans did fuse.
set -u
redfox=$1
dir=$2/gtotals
tmp=${TMPDIR:-/tmp}/rf_gtotals.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
fail=0
check() { # name rows regions: fused against apart
    name=$1
    mkdir -p "$tmp/$name"
    awk -v n="$2" -v regions="$3" -v seed=7 -f "$dir/gen.awk" >"$tmp/$name/sales.csv"
    "$redfox" run "$dir/sales.logic" --data "$tmp/$name" --device cpu --threads 3 --profile --out "$tmp/$name/a" 2>"$tmp/$name/err.a" >/dev/null || { echo "FAIL $name: fused run"; cat "$tmp/$name/err.a"; fail=1; }
    "$redfox" run "$dir/sales.logic" --data "$tmp/$name" --device cpu --threads 2 --no-fuse --profile --out "$tmp/$name/b" 2>"$tmp/$name/err.b" >/dev/null || { echo "FAIL $name: apart"; fail=1; }
    for f in by_region by_day_region everything nothing shared_a shared_b; do
        cmp -s "$tmp/$name/a/$f.csv" "$tmp/$name/b/$f.csv" || { echo "FAIL $name: $f differs"; fail=1; }
    done
    fused=$(sed -n 's/^cpu: \([0-9]*\) grouped totals.*/\1/p' "$tmp/$name/err.a")
    grep -q 'grouped totals' "$tmp/$name/err.b" && { echo "FAIL $name: --no-fuse fused"; fail=1; }
    echo "$name: ${fused:-0} grouped totals, outputs equal"
    [ "${fused:-0}" -ge "$4" ] || { echo "FAIL $name: expected at least $4 grouped totals"; fail=1; }
}
check few 20000 7 4
check chunks 700000 5 4      # several row chunks, every group in each
check many 300000 200000 2   # by_region and by_day_region keep too many groups: apart
# an overflowing total: the same message and exit either way
mkdir -p "$tmp/ov"
awk 'BEGIN { print "id,g,v"; for (i = 1; i <= 5000; i++) printf "%d,%d,%s\n", i, i % 3, (i == 4000 ? "9223372036854775000" : i) }' >"$tmp/ov/big.csv"
"$redfox" run "$dir/overflow.logic" --data "$tmp/ov" --device cpu >/dev/null 2>"$tmp/ov/err.a"; ra=$?
"$redfox" run "$dir/overflow.logic" --data "$tmp/ov" --device cpu --no-fuse >/dev/null 2>"$tmp/ov/err.b"; rb=$?
if [ $ra -eq 0 ] || [ $ra -ne $rb ] || ! cmp -s "$tmp/ov/err.a" "$tmp/ov/err.b"; then
    echo "FAIL overflow: exit $ra / $rb"; cat "$tmp/ov/err.a" "$tmp/ov/err.b"; fail=1
else
    echo "overflow: $(head -1 "$tmp/ov/err.a")"
fi
# a map error in two chunks: the first row's message either way
mkdir -p "$tmp/dz"
awk 'BEGIN { print "id,g,v"; for (i = 1; i <= 300000; i++) printf "%d,%d,%d\n", i, i % 3, i }' >"$tmp/dz/big.csv"
"$redfox" run "$dir/divide.logic" --data "$tmp/dz" --device cpu --threads 4 >/dev/null 2>"$tmp/dz/err.a"; ra=$?
"$redfox" run "$dir/divide.logic" --data "$tmp/dz" --device cpu --no-fuse >/dev/null 2>"$tmp/dz/err.b"; rb=$?
if [ $ra -eq 0 ] || [ $ra -ne $rb ] || ! cmp -s "$tmp/dz/err.a" "$tmp/dz/err.b"; then
    echo "FAIL divide: exit $ra / $rb"; cat "$tmp/dz/err.a" "$tmp/dz/err.b"; fail=1
else
    echo "divide: $(head -1 "$tmp/dz/err.a")"
fi
exit $fail
