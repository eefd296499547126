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
# and so does redfox exec where a batch brings such rows in. An error inside
# the aggregated expression (total(a / b), b zero; min, max, count() over a
# body computing it; no group) names the group too, the least, and there the
# least message; one in a plain rule or a group key does not. On 2 ranks
# whose shares fail in different groups (rank 0 only in a greater one), the
# least group's error prints, as one process prints it.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_agg_group_error.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# (a sanitizer build: Open MPI's own allocations live until exit, as
# tests/mpi_env.sh tells it; else the probe below failed and no rank case ran)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")" && pwd)/lsan_mpi.supp"
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
run_way() { # WAY PROG DIR [options]: PROG on the CPU, the emulated GPU or WAY CPU ranks; stderr in $tmp/err
    rw_way=$1 rw_prog=$2 rw_dir=$3
    shift 3
    case $rw_way in
    cpu) timeout 120 "$redfox" run "$rw_prog" --data "$rw_dir" --out "$tmp/o" --device cpu "$@" 2>"$tmp/err" ;;
    gpu) RF_GPU_EMULATE=1 timeout 120 "$redfox" run "$rw_prog" --data "$rw_dir" --out "$tmp/o" --device gpu "$@" 2>"$tmp/err" ;;
    *) timeout 120 $mpi "$rw_way" "$redfox" run "$rw_prog" --data "$rw_dir" --out "$tmp/o" --device cpu "$@" \
           --set rank_timeout_s=60 >/dev/null 2>"$tmp/err" ;;
    esac
}
check() { # WHAT DIR PROG WANT [--no-fuse]
    what=$1 dir=$2 prog=$3 want=$4
    shift 4
    for way in cpu gpu 2; do
        [ "$way" != 2 ] || [ -n "$mpi" ] || continue
        run_way "$way" "$prog" "$dir" "$@"
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
# ---- an error inside an aggregated expression (total(a / b), b zero) names
# the group of the failing row: the least failing key (as above), and within
# it the least message by its bytes, whatever the rows' order (row 0 of a
# failing group divides 90 + g by zero, row 1 1000 + g: "1000..." is the
# least, though not the first row). Before, it named the operation alone,
# for the first failing row. Columns: group g, string s ("z" and g's last
# digit), a row id, a, b.
make_div() { # DIR NG FAIL
    mkdir -p "$1"
    awk -v ng="$2" -v fl="$3" 'BEGIN {
        nf = split(fl, f, " "); for (i = 1; i <= nf; i++) bf[f[i]] = 1
        id = 0
        for (r = 0; r < 3; r++)
            for (i = 0; i < ng; i++) {
                g = ng - 1 - i
                if (g in bf && r < 2) { a = r == 0 ? 90 + g : 1000 + g; b = 0 }
                else { a = g + r; b = 1 + r }
                print g ",z" (g % 10) "," id++ "," a "," b
            }
    }' >"$1/t.csv"
}
# the expected line: KEYCOL 1 (g, a number), 2 (s, by its bytes) or 0 (no
# group); OP the operator the failing expression applies to a and b
expect_div() { # DIR KEYCOL OP
    LC_ALL=C awk -F, -v kc="$2" -v op="$3" '$5 == 0 {
            print (kc ? $kc : "") "\tdivision by zero in " $4 " " op " 0"
        }' "$1/t.csv" |
        if [ "$2" = 1 ]; then LC_ALL=C sort -t "	" -k1,1n -k2,2; else LC_ALL=C sort -t "	" -k1,1 -k2,2; fi |
        head -n 1 | awk -F "	" -v kc="$2" '{
            q = kc == 2 ? "\"" : ""
            print $2 (kc ? " for the group (" q $1 q ")" : "")
        }'
}
# the first failing row's message (a non-aggregated expression: as before),
# dividing column COL (4: a, 1: g) by b
expect_first() { # DIR COL
    awk -F, -v c="$2" '$5 == 0 { print "division by zero in " $c " / 0"; exit }' "$1/t.csv"
}
div_prog() { # FILE KEYED(0/1) RULE
    { echo 't(g, s, id, a, b) -> int(g), string(s), int(id), int(a), int(b).'
      echo 'lang:input[`t] = "t.csv".'
      echo 'lang:input:delimiter[`t] = ",".'
      if [ "$2" = 1 ]; then echo 'lang:input:key[`t] = "id".'; else echo '// (no key: the body is a set)'; fi
      echo "$3"
      echo "$4"
    } >"$1"
}
check_div() { # WHAT DIR PROG WANT [options]
    what=$1 dir=$2 prog=$3 dwant=$4
    shift 4
    for way in cpu gpu 2; do
        [ "$way" != 2 ] || { [ -n "$mpi" ] && [ -n "$div_ranks" ]; } || continue
        run_way "$way" "$prog" "$dir" "$@"
        rc=$?
        [ $rc -eq 1 ] || fail "$what, $way $*: exit $rc, expected 1"
        grep -qxF -- "$prog:5:1: error: $dwant" "$tmp/err" ||
            { fail "$what, $way $*: not the message: $dwant"; grep error "$tmp/err"; }
        [ "$(grep -c "^$prog:.*error:" "$tmp/err")" -eq 1 ] || fail "$what, $way $*: the error not once"
    done
}
make_div "$tmp/dfew" 7 "5 3 1"
make_div "$tmp/dmany" 300 "250 177 201"
for keyed in 0 1; do
    div_prog "$tmp/tg$keyed.logic" $keyed 'st(g, x) <- agg<<x = total(a / b)>> t(g, _, _, a, b).' 'lang:output[`st] = "st".'
    div_prog "$tmp/ts$keyed.logic" $keyed 'sn[s] = x <- agg<<x = total(a / b)>> t(_, s, _, a, b).' 'lang:output[`sn] = "sn".'
done
div_prog "$tmp/mn.logic" 1 'mm(g, x, y) <- agg<<x = min(a / b), y = max(a)>> t(g, _, _, a, b).' 'lang:output[`mm] = "mm".'
div_prog "$tmp/mx.logic" 0 'mx(s, x) <- agg<<x = max(a % b)>> t(_, s, _, a, b).' 'lang:output[`mx] = "mx".'
div_prog "$tmp/ct.logic" 0 'ct(g, x) <- agg<<x = count()>> t(g, _, _, a, b), y = a / b.' 'lang:output[`ct] = "ct".'
div_prog "$tmp/all.logic" 1 'all[] = x <- agg<<x = total(a / b)>> t(_, _, _, a, b).' 'lang:output[`all] = "all".'
# not aggregated: the rows of a plain rule; a group key computed by the failing division
div_prog "$tmp/q.logic" 0 'q(g, y) <- t(g, _, _, a, b), y = a / b.' 'lang:output[`q] = "q".'
div_prog "$tmp/kq.logic" 0 'kq(k, x) <- agg<<x = total(a)>> t(g, _, _, a, b), k = g / b.' 'lang:output[`kq] = "kq".'
# (2 ranks: on the few groups; the many only change what fuses on one process)
for d in dfew dmany; do
    div_ranks=
    [ $d = dfew ] && div_ranks=1
    want=$(expect_div "$tmp/$d" 1 /)
    case $want in *"in 1"*) ;; *) fail "$d: the test's own data gives $want, not the row of 1000 + g" ;; esac
    wants=$(expect_div "$tmp/$d" 2 /)
    for keyed in 0 1; do
        for fuse in "" --no-fuse; do
            check_div "total(a / b) $d keyed $keyed" "$tmp/$d" "$tmp/tg$keyed.logic" "$want" $fuse
            check_div "total(a / b) by a string, $d keyed $keyed" "$tmp/$d" "$tmp/ts$keyed.logic" "$wants" $fuse
        done
    done
    check_div "min(a / b) $d" "$tmp/$d" "$tmp/mn.logic" "$want"
    check_div "max(a % b) $d" "$tmp/$d" "$tmp/mx.logic" "$(expect_div "$tmp/$d" 2 %)"
    check_div "count() over y = a / b, $d" "$tmp/$d" "$tmp/ct.logic" "$want"
    check_div "total(a / b) without a group, $d" "$tmp/$d" "$tmp/all.logic" "$(expect_div "$tmp/$d" 0 /)"
    check_div "total(a / b) without a group, $d" "$tmp/$d" "$tmp/all.logic" "$(expect_div "$tmp/$d" 0 /)" --no-fuse
done
want=$(expect_div "$tmp/dfew" 1 /)
[ "$want" = "division by zero in 1001 / 0 for the group (1)" ] || fail "few: the test's own data names $want"
# the emulated GPU's map in row ranges (under a memory cap): the least group
# fails in a later range than another group does; all the ranges' rows count
mkdir -p "$tmp/dranges"
awk 'BEGIN { id = 0
    for (r = 0; r < 40; r++)
        for (i = 0; i < 300; i++) {
            g = 299 - i
            if ((g == 250 && r < 2) || (g == 5 && r >= 30 && r < 32)) { a = r % 2 == 0 ? 90 + g : 1000 + g; b = 0 }
            else { a = g + r; b = 1 + r }
            print g ",z" (g % 10) "," id++ "," a "," b
        }
}' >"$tmp/dranges/t.csv"
want=$(expect_div "$tmp/dranges" 1 /)
[ "$want" = "division by zero in 1005 / 0 for the group (5)" ] || fail "ranges: the test's own data names $want"
RF_GPU_EMULATE=1 timeout 120 "$redfox" run "$tmp/tg0.logic" --data "$tmp/dranges" --out "$tmp/o" --device gpu \
    --gpu-memory 200K 2>"$tmp/err"
grep -qxF -- "$tmp/tg0.logic:5:1: error: $want" "$tmp/err" ||
    { fail "total(a / b), gpu in row ranges: not the message: $want"; grep error "$tmp/err"; }
# not aggregated: the first failing row's message, as before (no group)
for p in q kq; do
    if [ $p = q ]; then first=$(expect_first "$tmp/dfew" 4); else first=$(expect_first "$tmp/dfew" 1); fi
    for dev in cpu gpu; do
        RF_GPU_EMULATE=1 timeout 120 "$redfox" run "$tmp/$p.logic" --data "$tmp/dfew" --out "$tmp/o" --device $dev \
            2>"$tmp/err"
        rc=$?
        [ $rc -eq 1 ] || fail "$p (not aggregated), $dev: exit $rc, expected 1"
        grep -qxF -- "$tmp/$p.logic:5:1: error: $first" "$tmp/err" ||
            { fail "$p (not aggregated), $dev: not the message: $first"; grep error "$tmp/err"; }
    done
done
# the emulated GPU on 2 ranks (fused and not)
if [ -n "$mpi" ]; then
    want=$(expect_div "$tmp/dfew" 1 /)
    for fuse in "" --no-fuse; do
        RF_GPU_EMULATE=1 timeout 120 $mpi 2 -x RF_GPU_EMULATE "$redfox" run "$tmp/tg1.logic" --data "$tmp/dfew" \
            --out "$tmp/o" --device gpu $fuse --set rank_timeout_s=60 >/dev/null 2>"$tmp/err"
        grep -qxF -- "$tmp/tg1.logic:5:1: error: $want" "$tmp/err" ||
            { fail "total(a / b), gpu on 2 ranks $fuse: not the message: $want"; grep error "$tmp/err"; }
        [ "$(grep -c "^$tmp/tg1.logic:.*error:" "$tmp/err")" -eq 1 ] || fail "total(a / b), gpu on 2 ranks $fuse: the error not once"
    done
fi
# redfox exec: a batch that brings the failing rows in, the same line
mkdir -p "$tmp/dex"
echo "0,z0,9999,1,1" >"$tmp/dex/t.csv"
"$redfox" import "$tmp/tg0.logic" --data "$tmp/dex" --out "$tmp/ddb" >/dev/null 2>&1 || fail "total(a / b): import"
awk -F, '{ print "+t(" $1 ", \"" $2 "\", " $3 ", " $4 ", " $5 ")." }' "$tmp/dfew/t.csv" >"$tmp/div.txn"
want=$(expect_div "$tmp/dfew" 1 /)
for dev in cpu gpu; do
    RF_GPU_EMULATE=1 timeout 120 "$redfox" exec "$tmp/ddb" "$tmp/tg0.logic" --batch "$tmp/div.txn" --device $dev \
        >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || fail "total(a / b), exec $dev: exit $rc, expected 1"
    grep -qxF -- "$tmp/tg0.logic:5:1: error: $want" "$tmp/err" ||
        { fail "total(a / b), exec $dev: not the message: $want"; grep error "$tmp/err"; }
done
# ranks failing in different groups: rank 0's share (the file's first rows)
# fails only in a greater group than rank 1's (the last rows); the least
# group's error prints, as one process prints it, from rank 1, once. With
# rank 1's row gone, rank 0 fails alone in its group: it does hold it.
if [ -n "$mpi" ]; then
    mkdir -p "$tmp/dsplit" "$tmp/dsplit0"
    awk 'BEGIN { for (i = 0; i < 2000; i++) {
        g = i % 9
        if (i == 3) print "5,z5," i ",7,0"; else if (i == 1990) print "1,z1," i ",8,0"; else print g ",z" g "," i ",1,1"
    } }' >"$tmp/dsplit/t.csv"
    grep -v ',1990,8,0$' "$tmp/dsplit/t.csv" >"$tmp/dsplit0/t.csv"
    for pk in "tg0 1" "ts0 2"; do
        set -- $pk
        want=$(expect_div "$tmp/dsplit" "$2" /)
        case $want in *"8 / 0"*) ;; *) fail "split $1: the test's own data names $want, not rank 1's row" ;; esac
        run_way cpu "$tmp/$1.logic" "$tmp/dsplit"
        grep -qxF -- "$tmp/$1.logic:5:1: error: $want" "$tmp/err" || { fail "split $1, one process: not $want"; grep error "$tmp/err"; }
        for fuse in "" --no-fuse; do
            run_way 2 "$tmp/$1.logic" "$tmp/dsplit" $fuse
            rc=$?
            [ $rc -eq 1 ] || fail "split $1, 2 ranks $fuse: exit $rc, expected 1"
            grep -qxF -- "$tmp/$1.logic:5:1: error: $want" "$tmp/err" ||
                { fail "split $1, 2 ranks $fuse: not the message: $want"; grep error "$tmp/err"; }
            [ "$(grep -c "^$tmp/$1.logic:.*error:" "$tmp/err")" -eq 1 ] || fail "split $1, 2 ranks $fuse: the error not once"
            grep -q "rank 1 of 2 stopped with an error" "$tmp/err" || fail "split $1, 2 ranks $fuse: not rank 1's error"
            want0=$(expect_div "$tmp/dsplit0" "$2" /)
            run_way 2 "$tmp/$1.logic" "$tmp/dsplit0" $fuse
            grep -qxF -- "$tmp/$1.logic:5:1: error: $want0" "$tmp/err" ||
                { fail "split $1, rank 0 alone $fuse: not the message: $want0"; grep error "$tmp/err"; }
            grep -q "on rank 0 of 2" "$tmp/err" || fail "split $1, rank 0 alone $fuse: rank 0 did not fail"
        done
    done
fi
[ -n "$mpi" ] || echo "(no mpirun running redfox here: ranks not checked)"
[ $fails -eq 0 ] || exit 1
echo "PASS"
