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
# run_on WAY PROG: PROG run one way: cpu (one process), gpu (one emulated
# GPU), 2 or 3 (CPU ranks), gpu3 (3 emulated GPU ranks); its stderr in
# $tmp/err, its exit status in $tmp/rc. way_name WAY: the way in words.
run_on() {
    case $1 in
    cpu) "$redfox" run "$2" --data "$tmp" --out "$tmp/o" --device cpu ;;
    gpu) RF_GPU_EMULATE=1 "$redfox" run "$2" --data "$tmp" --out "$tmp/o" --device gpu ;;
    gpu3) RF_GPU_EMULATE=1 $mpi 3 "$redfox" run "$2" --data "$tmp" --out "$tmp/o" --device gpu --set rank_timeout_s=60 ;;
    *) $mpi "$1" "$redfox" run "$2" --data "$tmp" --out "$tmp/o" --device cpu --set rank_timeout_s=60 ;;
    esac 2>"$tmp/err"
    echo $? >"$tmp/rc"
}
way_name() {
    case $1 in
    cpu) echo "one process" ;;
    gpu) echo "one emulated GPU" ;;
    gpu3) echo "-np 3 emulated GPUs" ;;
    *) echo "-np $1" ;;
    esac
}
for prog in int str; do
    eval "want=\$want_$prog"
    for way in cpu gpu 2 3 gpu3; do
        run_on $way "$tmp/$prog.logic"
        check "$prog, $(way_name $way)" "$tmp/$prog.logic" "$want" "$tmp/rc" "$tmp/err"
    done
done

# float keys: -0.0 equals 0.0 and every NaN is one value whatever its bits
# (LANGUAGE.md), so 0.0 and -0.0 clash, and 0.0 / 0.0 (a NaN with its sign
# bit set on x86) with nan / nan (the NaN read from text). Before, the clash
# chooser ordered keys by their bits: no two rows had one key, and the run
# failed with an internal error (exit 3, no message); and the ranks sent the
# two NaNs to different ranks, so a group-by on 2 or 3 ranks counted two NaN
# keys (one process: one) and the clash went unseen there (exit 0).
printf '%s\n' '-0.0,2' '2.5,7' '0.0,1' '2.5,7' >"$tmp/z.csv"
printf '%s\n' '0.0,1' '2.0,5' 'nan,2' >"$tmp/n.csv"
for key in z n; do
    cat >"$tmp/f$key.logic" <<P
t(a, v) -> float(a), int(v).
lang:input[\`t] = "$key.csv".
lang:input:delimiter[\`t] = ",".
f[k] = v <- t(a, v), k = $([ $key = z ] && echo "a" || echo "a / a").
lang:output[\`f] = "f".
P
done
# the NaN keys' count: one group, as in one process (2.0 / 2.0 is the other)
cat >"$tmp/cn.logic" <<'P'
t(a, v) -> float(a), int(v).
lang:input[`t] = "n.csv".
lang:input:delimiter[`t] = ",".
g(k) <- t(a, _), k = a / a.
c[] = n <- agg<<n = count()>> g(_).
lang:output[`c] = "c".
P
want_z='functional dependency violated: `f` has two values for the key \(-?0\.0\): \(1\) and \(2\)$'
want_n='functional dependency violated: `f` has two values for the key \(nan\): \(1\) and \(2\)$'
float_check() { # NAME KEY RC-FILE ERR-FILE
    eval "want=\$want_$2"
    rc=$(cat "$3")
    [ "$rc" -eq 1 ] || { fail "$1: exit $rc, expected 1"; cat "$4"; }
    [ "$(grep -cE -- ": error: $want" "$4")" -eq 1 ] || { fail "$1: not the message once: $want"; cat "$4"; }
}
for key in z n; do
    for way in cpu gpu 2 3; do
        run_on $way "$tmp/f$key.logic"
        float_check "float key $key, $(way_name $way)" $key "$tmp/rc" "$tmp/err"
    done
done
for np in 2 3; do
    rm -rf "$tmp/oc"
    $mpi $np "$redfox" run "$tmp/cn.logic" --data "$tmp" --out "$tmp/oc" --format csv --device cpu >/dev/null 2>"$tmp/err" ||
        { fail "NaN keys, -np $np: exit $?"; cat "$tmp/err"; }
    [ "$(cat "$tmp/oc/c.csv" 2>/dev/null)" = "$(printf 'n\n2')" ] || { fail "NaN keys, -np $np: count not 2"; cat "$tmp/oc/c.csv"; }
done
rm -rf "$tmp/oc"
RF_GPU_EMULATE=1 $mpi 3 "$redfox" run "$tmp/cn.logic" --data "$tmp" --out "$tmp/oc" --format csv --device gpu \
    >/dev/null 2>"$tmp/err" || { fail "NaN keys, -np 3 emulated GPUs: exit $?"; cat "$tmp/err"; }
[ "$(cat "$tmp/oc/c.csv" 2>/dev/null)" = "$(printf 'n\n2')" ] || { fail "NaN keys, -np 3 emulated GPUs: count not 2"; cat "$tmp/oc/c.csv"; }

# two checks without a move between them: g reads f on the rank that holds
# f's key, so a rank where f holds passes f's check and stops at g's. f is
# checked first (g reads it), as one process does, so the message is f's
# clash, key K with values 1 and 2, whichever rank holds K; before, the
# lowest failed rank printed, often one that stopped at g's check.
cat >"$tmp/two.logic" <<'P'
e(a, b) -> int(a), int(b).
lang:input[`e] = "two.csv".
lang:input:delimiter[`e] = ",".
f[a] = b <- e(a, b).
g[a] = c <- f[a] = b, c = b.
g[a] = c <- f[a] = b, c = b + 1, b > 100.
lang:output[`g] = "g".
P
for k in 1 2 3; do
    { echo "$k,1"; echo "$k,2"; awk 'BEGIN { for (i = 4; i < 40; i++) print i ",200" }'; } >"$tmp/two.csv"
    want="functional dependency violated: \`f\` has two values for the key ($k): (1) and (2)"
    for way in cpu 2 3; do
        run_on $way "$tmp/two.logic"
        check "f then g, key $k, $(way_name $way)" "$tmp/two.logic" "$want" "$tmp/rc" "$tmp/err"
    done
done

# another failure before a clash: h divides by b - 1, zero for key 1 only,
# and g (read from h, no move between) clashes for every other key. One
# process stops at h's division; before, the ranks without key 1 ran on to
# g's check and the lowest failed rank printed g's clash instead.
cat >"$tmp/mix.logic" <<'P'
e(a, b) -> int(a), int(b).
lang:input[`e] = "two.csv".
lang:input:delimiter[`e] = ",".
f[a] = b <- e(a, b).
h[a] = c <- f[a] = b, c = 100 / (b - 1).
g[a] = c <- h[a] = b, c = b.
g[a] = c <- h[a] = b, c = b + 1, b > 10.
lang:output[`g] = "g".
P
{ echo "1,1"; awk 'BEGIN { for (i = 4; i < 40; i++) print i ",2" }'; } >"$tmp/two.csv"
for way in cpu 2 3; do
    run_on $way "$tmp/mix.logic"
    rc=$(cat "$tmp/rc")
    if [ $rc -ne 1 ] || [ "$(grep -c ": error: division by zero in 100 / 0" "$tmp/err")" -ne 1 ] ||
        grep -q "functional dependency" "$tmp/err"; then
        fail "a division before a clash, $(way_name $way): exit $rc, not the division's error once"; cat "$tmp/err"
    fi
done
[ $fails -eq 0 ] || exit 1
echo "PASS"
