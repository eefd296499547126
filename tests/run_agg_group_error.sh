#!/bin/sh
# tests/run_agg_group_error.sh REDFOX: an aggregate's run-time error (an int
# total past the int range, an average beyond decimal's) names the group it
# failed in, and where several groups fail, the least by key (numbers as
# numbers, strings by their bytes), whatever the order the rows come in:
# with its aggregates fused and not (--no-fuse), on the CPU, on the emulated
# GPU and, where mpirun runs redfox, on 2 CPU ranks, one message.
# The expected group and words are computed here from the data (awk adds in
# doubles: the failing sums are 2^63 and more, the others small). Before,
# the message named the rule only. A total without group columns names none.
# An average of totals (wide decimals) beyond decimal's range names its group
# too (the GPU said "decimal out of range" alone; the CPU named the group),
# and so does redfox exec where a batch brings such rows in.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_agg_group_error.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=
# rows of group g (int) and name n (string): the groups come in descending
# order of g, and so do the names ("z" and g's last digit: "z9" first);
# total(v) leaves the int range in the groups FAILT names, avg(w) leaves
# decimal's in those FAILA names. NG groups.
make_data() { # DIR NG FAILT FAILA
    mkdir -p "$1"
    awk -v ng="$2" -v ft="$3" -v fa="$4" 'BEGIN {
        nt = split(ft, t, " "); for (i = 1; i <= nt; i++) bt[t[i]] = 1
        na = split(fa, a, " "); for (i = 1; i <= na; i++) ba[a[i]] = 1
        for (r = 0; r < 3; r++)
            for (i = 0; i < ng; i++) {
                g = ng - 1 - i
                print g ",z" (g % 10) "," (g in bt ? "4611686018427387904" : g) "," (g in ba ? "10000000000000" : r)
            }
    }' >"$1/t.csv"
}
cat >"$tmp/p.logic" <<'P'
t(g, n, v, w) -> int(g), string(n), int(v), int(w).
lang:input[`t] = "t.csv".
lang:input:delimiter[`t] = ",".
st(g, x, a) <- agg<<x = total(v), a = avg(w)>> t(g, _, v, w).
lang:output[`st] = "st".
P
cat >"$tmp/s.logic" <<'P'
t(g, n, v, w) -> int(g), string(n), int(v), int(w).
lang:input[`t] = "t.csv".
lang:input:delimiter[`t] = ",".
sn[n] = x <- agg<<x = total(v)>> t(_, n, v, _).
lang:output[`sn] = "sn".
P
cat >"$tmp/one.logic" <<'P'
t(g, n, v, w) -> int(g), string(n), int(v), int(w).
lang:input[`t] = "t.csv".
lang:input:delimiter[`t] = ",".
all[] = x <- agg<<x = total(v)>> t(_, _, v, _).
lang:output[`all] = "all".
P
# an average over the totals of each (g, k): wide decimals (a total of
# totals); its mean beyond decimal's range in the groups FAILW names
cat >"$tmp/w.logic" <<'P'
d(g, k, x) -> int(g), int(k), decimal(x).
lang:input[`d] = "d.csv".
lang:input:delimiter[`d] = ",".
wa[g] = a <- agg<<a = avg(v)>> wt[g, k] = v.
wt[g, k] = v <- agg<<v = total(x)>> d(g, k, x).
lang:output[`wa] = "wa".
P
make_wide() { # DIR NG FAILW
    mkdir -p "$1"
    awk -v ng="$2" -v fw="$3" 'BEGIN {
        nw = split(fw, f, " "); for (i = 1; i <= nw; i++) bw[f[i]] = 1
        for (i = 0; i < ng; i++)
            for (k = 1; k <= 2; k++) {
                g = ng - 1 - i
                print g "," k "," (g in bw ? "9000000000000.5" : g "." k)
                print g "," k "," (g in bw ? "8900000000000.25" : "1")
            }
    }' >"$1/d.csv"
}
expect_wide() { # DIR: the least g whose mean of its (g, k) totals passes decimal's range
    awk -F, '{ s[$1 "," $2] += $3 } END {
            for (gk in s) { split(gk, p, ","); t[p[1]] += s[gk]; c[p[1]]++ }
            for (g in t) if (t[g] / c[g] > 9223372036854.775807) print g
        }' "$1/d.csv" | sort -n | head -n 1 | awk '{ print "aggregate: decimal out of range for the group (" $1 ")" }'
}
# the expected message: the least failing key (KEYCOL 1: g as a number; 2:
# n by its bytes), and there the first failing aggregate (total, then avg)
expect() { # DIR KEYCOL
    LC_ALL=C awk -F, -v kc="$2" '
        { k = $kc; s[k] += $3; w[k] += $4; c[k]++ }
        END {
            for (k in s) {
                why = ""
                if (s[k] >= 9223372036854775807 || s[k] < -9223372036854775808) why = "integer overflow in total()"
                else if (kc == 1 && w[k] / c[k] > 9223372036854.775807) why = "decimal out of range"
                if (why != "") print k "\t" why
            }
        }' "$1/t.csv" | if [ "$2" = 1 ]; then sort -t "	" -k1,1n; else LC_ALL=C sort -t "	" -k1,1; fi |
        head -n 1 | awk -F "	" -v kc="$2" '{ q = kc == 2 ? "\"" : ""; print "aggregate: " $2 " for the group (" q $1 q ")" }'
}
check() { # WHAT DIR PROG WANT [--no-fuse]
    what=$1 dir=$2 prog=$3 want=$4
    shift 4
    for way in cpu gpu 2; do
        case $way in
        cpu) timeout 120 "$redfox" run "$prog" --data "$dir" --out "$tmp/o" --device cpu "$@" 2>"$tmp/err" ;;
        gpu) RF_GPU_EMULATE=1 timeout 120 "$redfox" run "$prog" --data "$dir" --out "$tmp/o" --device gpu "$@" 2>"$tmp/err" ;;
        *) [ -n "$mpi" ] || continue
           timeout 120 $mpi "$way" "$redfox" run "$prog" --data "$dir" --out "$tmp/o" --device cpu "$@" \
               --set rank_timeout_s=60 >/dev/null 2>"$tmp/err" ;;
        esac
        rc=$?
        [ $rc -eq 1 ] || fail "$what, $way $*: exit $rc, expected 1"
        grep -qxF -- "$prog:4:1: error: $want" "$tmp/err" ||
            { fail "$what, $way $*: not the message: $want"; grep error "$tmp/err"; }
        [ "$(grep -c "error: aggregate" "$tmp/err")" -eq 1 ] || fail "$what, $way $*: the error not once"
    done
}
if command -v mpirun >/dev/null 2>&1; then
    mkdir -p "$tmp/probe"
    echo "1,z,1,1" >"$tmp/probe/t.csv"
    if mpirun --oversubscribe -np 2 "$redfox" run "$tmp/one.logic" --data "$tmp/probe" --device cpu >/dev/null 2>&1; then
        mpi="mpirun --oversubscribe -np"
    fi
fi
# a few groups (the fused grouped totals hold them) and many (they do not)
make_data "$tmp/few" 7 "5 3 1" "2"
make_data "$tmp/many" 300 "250 177 201" "123 9"
make_data "$tmp/str" 20 "14 12 11" ""
for d in few many; do
    want=$(expect "$tmp/$d" 1)
    [ -n "$want" ] || { fail "$d: no failing group in the test's own data"; continue; }
    check "$d" "$tmp/$d" "$tmp/p.logic" "$want"
    check "$d" "$tmp/$d" "$tmp/p.logic" "$want" --no-fuse
done
want=$(expect "$tmp/str" 2)
case $want in *'"z1"'*) ;; *) fail "strings: the test's own data names $want, not z1" ;; esac
check strings "$tmp/str" "$tmp/s.logic" "$want"
check strings "$tmp/str" "$tmp/s.logic" "$want" --no-fuse
# no group columns: one group, named by none
check "no group columns" "$tmp/few" "$tmp/one.logic" "aggregate: integer overflow in total()"
check "no group columns" "$tmp/few" "$tmp/one.logic" "aggregate: integer overflow in total()" --no-fuse
# an average of totals (wide decimals) beyond decimal's range
make_wide "$tmp/wide" 9 "7 4 6"
want=$(expect_wide "$tmp/wide")
[ "$want" = "aggregate: decimal out of range for the group (4)" ] || fail "wide: the test's own data names $want, not 4"
check "avg of totals" "$tmp/wide" "$tmp/w.logic" "$want"
check "avg of totals" "$tmp/wide" "$tmp/w.logic" "$want" --no-fuse
# redfox exec: the batch that brings those rows in fails with the same line
mkdir -p "$tmp/wex"
echo "0,1,1" >"$tmp/wex/d.csv"
"$redfox" import "$tmp/w.logic" --data "$tmp/wex" --out "$tmp/wdb" >/dev/null 2>&1 || fail "avg of totals: import"
awk -F, '{ print "+d(" $1 ", " $2 ", " $3 ")." }' "$tmp/wide/d.csv" >"$tmp/wide.txn"
for dev in cpu gpu; do
    RF_GPU_EMULATE=1 timeout 120 "$redfox" exec "$tmp/wdb" "$tmp/w.logic" --batch "$tmp/wide.txn" --device $dev \
        >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || fail "avg of totals, exec $dev: exit $rc, expected 1"
    grep -qxF -- "$tmp/w.logic:4:1: error: $want" "$tmp/err" ||
        { fail "avg of totals, exec $dev: not the message: $want"; grep error "$tmp/err"; }
done
[ -n "$mpi" ] || echo "(no mpirun running redfox here: ranks not checked)"
[ $fails -eq 0 ] || exit 1
echo "PASS"
