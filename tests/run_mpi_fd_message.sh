#!/bin/sh
# tests/run_mpi_fd_message.sh REDFOX TESTS_DIR: a derived functional
# predicate given two values for several keys fails, on the CPU, on the
# emulated GPU and on 2 and 3 ranks of either, with one message: the least
# key with two values and its two least values (computed here from the
# data), whatever the order the rows were made in and however they were
# split over the ranks (rt_fd_clash.c; the ranks vote the least clash:
# dist_run.c). Before, each device and each split named the first clash in
# its own rows' order. An int key, and a string key whose order by bytes
# is not the order its strings were read in. Skipped (77) where mpirun is
# missing or redfox was built without MPI.
set -u
redfox=$1
tests=$2
tmp=${TMPDIR:-/tmp}/rf_mpi_fd.$$
. "$tests/mpi_env.sh"

# 2,000 rows, b a permutation of a; f[a % 7] takes the 9 rows with b > 1990: 9 values for 7 keys clash
awk 'BEGIN { for (i = 0; i < 2000; i++) print i "," (i * 1237) % 2000 }' >"$tmp/e.csv"
cat >"$tmp/int.logic" <<'P'
e(a, b) -> int(a), int(b).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
f[x] = b <- e(a, b), x = a % 7, b > 1990.
lang:output[`f] = "f".
P
# the same rows keyed by a name: "z6" first in the file, "z0" sorts first by bytes
awk 'BEGIN { for (i = 0; i < 2000; i++) print "z" (6 - i % 7) "," (i * 1237) % 2000 }' >"$tmp/s.csv"
cat >"$tmp/str.logic" <<'P'
s(n, b) -> string(n), int(b).
lang:input[`s] = "s.csv".
lang:input:delimiter[`s] = ",".
g[n] = b <- s(n, b), b > 1990.
lang:output[`g] = "g".
P

# the least key with two values and its two least values, from the rows themselves
least() { # FILE PRED KEYQUOTE: key,value lines with value > 1990
    awk -F, '$2 > 1990' "$1" | sort -t, -k1,1 -k2,2n | awk -F, -v p="$2" -v q="$3" '
        NR > 1 && $1 == k && !done { printf "functional dependency violated: `%s` has two values for the key (%s%s%s): (%s) and (%s)\n", p, q, k, q, v, $2; done = 1 }
        { k = $1; v = $2 }'
}
awk -F, '{ print $1 % 7 "," $2 }' "$tmp/e.csv" | sort -t, -k1,1n -k2,2n >"$tmp/ekeys.csv"
want_int=$(least "$tmp/ekeys.csv" f "")
want_str=$(LC_ALL=C least "$tmp/s.csv" g '"')
[ -n "$want_int" ] && [ -n "$want_str" ] || { echo "FAIL: no clash in the test's own data"; exit 1; }

check() { # NAME PROG WANT RC-FILE ERR-FILE
    rc=$(cat "$4")
    [ "$rc" -eq 1 ] || fail "$1: exit $rc, expected 1"
    grep -qF -- ": error: $3" "$5" || { fail "$1: not the message: $3"; grep "functional" "$5"; }
    [ "$(grep -c "functional dependency" "$5")" -eq 1 ] || { fail "$1: the error not once"; cat "$5"; }
}
for prog in int str; do
    eval "want=\$want_$prog"
    "$redfox" run "$tmp/$prog.logic" --data "$tmp" --out "$tmp/o" --device cpu 2>"$tmp/err"
    echo $? >"$tmp/rc"
    check "$prog, one process" "$tmp/$prog.logic" "$want" "$tmp/rc" "$tmp/err"
    RF_GPU_EMULATE=1 "$redfox" run "$tmp/$prog.logic" --data "$tmp" --out "$tmp/o" --device gpu 2>"$tmp/err"
    echo $? >"$tmp/rc"
    check "$prog, one emulated GPU" "$tmp/$prog.logic" "$want" "$tmp/rc" "$tmp/err"
    for np in 2 3; do
        $mpi $np "$redfox" run "$tmp/$prog.logic" --data "$tmp" --out "$tmp/o" --device cpu --set rank_timeout_s=60 \
            2>"$tmp/err"
        echo $? >"$tmp/rc"
        check "$prog, -np $np" "$tmp/$prog.logic" "$want" "$tmp/rc" "$tmp/err"
    done
    RF_GPU_EMULATE=1 $mpi 3 "$redfox" run "$tmp/$prog.logic" --data "$tmp" --out "$tmp/o" --device gpu \
        --set rank_timeout_s=60 2>"$tmp/err"
    echo $? >"$tmp/rc"
    check "$prog, -np 3 emulated GPUs" "$tmp/$prog.logic" "$want" "$tmp/rc" "$tmp/err"
done
[ $fails -eq 0 ] || exit 1
echo "PASS"
