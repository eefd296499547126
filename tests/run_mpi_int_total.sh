#!/bin/sh
# tests/run_mpi_int_total.sh REDFOX TESTS_DIR: totals and averages of ints on
# 2 and 3 ranks give one process's output where a rank's own rows add up past
# the int range and the whole does not (one process adds exactly: 2^63 - 1
# and -(2^63 - 1) alternating, then 5, total 5; partial aggregates on ranks
# stopped it with "integer overflow in total()"), and a total that does leave
# the range fails alike (exit 1, the error once). Skipped (77) where mpirun
# is missing or redfox was built without MPI.
set -u
redfox=$1
tests=$2
tmp=${TMPDIR:-/tmp}/rf_mpi_int_total.$$
. "$tests/mpi_env.sh"
mkdir -p "$tmp/ok" "$tmp/over"
awk 'BEGIN { for (i = 0; i < 600; i++) print i % 3 "," i "," (i % 2 ? "-" : "") "9223372036854775807"
             print "0,10000,5"; print "1,10001,-5" }' >"$tmp/ok/t.csv"
awk 'BEGIN { for (i = 0; i < 600; i++) print i % 3 "," i ",9223372036854775807" }' >"$tmp/over/t.csv"
cat >"$tmp/p.logic" <<'P'
t(g, i, v) -> int(g), int(i), int(v).
lang:input[`t] = "t.csv".
lang:input:delimiter[`t] = ",".
s[g] = x <- agg<<x = total(v)>> t(g, _, v).
a[] = x <- agg<<x = total(v)>> t(_, _, v).
m[g] = x <- agg<<x = avg(v)>> t(g, _, v).
lang:output[`s] = "s".
lang:output[`a] = "a".
lang:output[`m] = "m".
P
for set in ok over; do
    "$redfox" run "$tmp/p.logic" --data "$tmp/$set" --device cpu --format tbl >"$tmp/$set.1" 2>"$tmp/$set.err1"
    rc1=$?
    case $set in ok) want=0 ;; *) want=1 ;; esac
    [ $rc1 -eq $want ] || fail "$set: one process exit $rc1, expected $want"
    for np in 2 3; do
        $mpi $np "$redfox" run "$tmp/p.logic" --data "$tmp/$set" --device cpu --format tbl --set rank_timeout_s=60 \
            >"$tmp/$set.$np" 2>"$tmp/$set.err$np"
        rc=$?
        if [ $rc -ne $rc1 ]; then
            fail "$set -np $np: exit $rc, one process $rc1"; grep error "$tmp/$set.err$np"
        elif [ $rc -eq 0 ]; then
            cmp -s "$tmp/$set.1" "$tmp/$set.$np" || { fail "$set -np $np: output differs"; diff "$tmp/$set.1" "$tmp/$set.$np" | head -5; }
        else
            n=$(grep -c "integer overflow in total()" "$tmp/$set.err$np")
            [ "$n" -eq 1 ] || fail "$set -np $np: the overflow reported $n times"
        fi
    done
done
grep -qx "0|5" "$tmp/ok.1" || fail "one process: no total of 5 in group 0"
[ $fails -eq 0 ] || exit 1
echo "PASS"
