#!/bin/sh
# tests/run_keyjoin.sh REDFOX TESTS MODE: joins on computed keys
# (queryplan/pass_keyjoin.c) are equi-joins, compute what the cross product
# and filter computed, and raise the run-time errors it raised, no others.
# Rules over node (1..N without the multiples of 97), a(i, i % 5) for i in
# 1..N, b(j, j % 5) for j in 1..3N and two float sets with -0.0, NaN and
# infinities: a successor (y = x + 1, and written x + 1 = z), keys computed on
# both sides (x * 2 = z + 3), a computed key beside a plain one (z = x * 3 on
# k), a recursion (chain), floats (w = v * -1.0f), a negation and a count over
# such a rule, an atom meeting the others only through the key (joined last,
# not crossed first), dates (date:add_days), strings (a + "b"), decimals (v + 0.75),
# chains of computed keys through atoms that share nothing else (3 atoms in the
# order written, 4 atoms written out of order: one hash join per key; over 1..40
# without the multiples of 7, small enough for the cross products of --no-keyjoin).
# The answers are computed here by Python from the same files.
# Then an overflowing key (9223372036854775807 + 1): no error where the other
# side is empty or meets it on no plain key, the error (exit 1) where it does,
# as with --no-keyjoin; in a recursion counting down (down(y), big(x), y = x + 1,
# the value computed before the loop), the error only where the loop runs; in a
# chain (xa(x), xb(z), xc(w), z = x + 1, w = z + 1), no error where the row whose
# z + 1 overflows is one that z = x + 1 excludes, or where xb or xc is empty, and
# the error where the chain reaches it, as with --no-keyjoin.
# MODE cpu: N = 2000 on the CPU, with and without --no-keyjoin, the plans
#   (no cross product with a filter), through a .rfx file (--no-keyjoin then
#   only prints a note);
# MODE emu: N = 300 on the GPU emulator, fused and --no-fuse;
# MODE mpi: N = 300 on 2 CPU ranks and 2 emulated GPU ranks (skipped, 77,
#   where mpirun is missing or redfox was built without MPI).
set -u
redfox=$1
tests=$2
mode=$3
tmp=${TMPDIR:-/tmp}/rf_keyjoin.$$
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
if [ "$mode" = mpi ]; then
    . "$tests/mpi_env.sh"
else
    mkdir -p "$tmp"
    trap 'rm -rf "$tmp"' EXIT
fi
n=2000
[ "$mode" = cpu ] || n=300
awk -v n=$n 'BEGIN { for (i = 1; i <= n; i++) if (i % 97) print i }' >"$tmp/node.csv"
awk -v n=$n 'BEGIN { for (i = 1; i <= n; i++) printf "%d,%d\n", i, i % 5 }' >"$tmp/a.csv"
awk -v n=$n 'BEGIN { for (i = 1; i <= 3 * n; i++) printf "%d,%d\n", i, i % 5 }' >"$tmp/b.csv"
awk 'BEGIN { for (i = 1; i <= 40; i++) if (i % 7) print i }' >"$tmp/sm.csv"
printf '0.0\n-0.0\nnan\n1.5\ninf\n2.5\n-3.0\n' >"$tmp/f.csv"
printf -- '-0.0\nnan\n-1.5\n-inf\n7.0\n3.0\n' >"$tmp/g.csv"
printf '2024-02-27\n2024-02-28\n2024-02-29\n2024-03-01\n2024-03-05\n2023-12-31\n2024-01-01\n' >"$tmp/day.csv"
printf 'a,1.50\nb,2.25\nab,3.00\nabb,0.75\n' >"$tmp/s.csv"
cat >"$tmp/p.logic" <<'P'
node(x) -> int(x).
lang:input[`node] = "node.csv".
a(x, k) -> int(x), int(k).
lang:input[`a] = "a.csv".
lang:input:delimiter[`a] = ",".
b(z, k) -> int(z), int(k).
lang:input[`b] = "b.csv".
lang:input:delimiter[`b] = ",".
f(v) -> float(v).
lang:input[`f] = "f.csv".
g(w) -> float(w).
lang:input[`g] = "g.csv".
day(x) -> date(x).
lang:input[`day] = "day.csv".
s(n, v) -> string(n), decimal(v).
lang:input[`s] = "s.csv".
lang:input:delimiter[`s] = ",".
next(x, y) <- node(x), y = x + 1, node(y).
rev(x, z) <- node(x), node(z), x + 1 = z.
both(x, z) <- node(x), b(z, _), x * 2 = z + 3.
multi(x, z, k) <- a(x, k), b(z, k), z = x * 3.
chain(1).
chain(y) <- chain(x), node(y), y = x + 1.
fl(v, w) <- f(v), g(w), w = v * -1.0f.
last(x) <- node(x), !next(x, _).
cnt(c) <- agg<<c = count()>> next(_, _).
around(z, x) <- node(z), a(x, k), node(k), z = x + 1.
down(x) <- node(x), x = 96.
down(x) <- down(y), node(x), y = x + 1.
nday(x, y) <- day(x), day(y), y = date:add_days[x, 1].
cat(a, b) <- s(a, _), s(b, _), b = a + "b".
sm(x) -> int(x).
lang:input[`sm] = "sm.csv".
dec(a, b) <- s(a, v), s(b, w), w = v + 0.75.
kc3(x, w) <- sm(x), sm(z), sm(w), z = x + 1, w = z + 1.
kc4(x, v) <- sm(x), sm(z), sm(w), sm(v), w = z + 1, z = x + 1, v = w + 1.
lang:output[`next] = "next". lang:output[`rev] = "rev". lang:output[`both] = "both".
lang:output[`multi] = "multi". lang:output[`chain] = "chain". lang:output[`fl] = "fl".
lang:output[`last] = "last". lang:output[`cnt] = "cnt". lang:output[`nday] = "nday".
lang:output[`cat] = "cat". lang:output[`dec] = "dec". lang:output[`around] = "around". lang:output[`down] = "down".
lang:output[`kc3] = "kc3". lang:output[`kc4] = "kc4".
P
# the expected rows, one file per output, in the order redfox writes them
python3 -B - "$tmp" <<'PY' || fail "python"
import datetime, decimal, math, os, sys
d = sys.argv[1]
rows = lambda f: [l.strip().split(",") for l in open(os.path.join(d, f)) if l.strip()]
node = {int(r[0]) for r in rows("node.csv")}
a = {(int(r[0]), int(r[1])) for r in rows("a.csv")}
b = {(int(r[0]), int(r[1])) for r in rows("b.csv")}
bz = {z for z, _ in b}
def canon(v):  # one value for -0.0 and 0.0, one for every NaN
    return 0.0 if v == 0 else v
f = {canon(float(r[0])) for r in rows("f.csv")}
g = {canon(float(r[0])) for r in rows("g.csv")}
def same(x, y): return (math.isnan(x) and math.isnan(y)) or x == y
def fkey(v): return (3, 0) if math.isnan(v) else (0, v) if v == -math.inf else (2, 0) if v == math.inf else (1, v)
def ftext(v): return "nan" if math.isnan(v) else "inf" if v == math.inf else "-inf" if v == -math.inf else repr(canon(v))
nxt = sorted((x, x + 1) for x in node if x + 1 in node)
chain, x = [1], 1
while x + 1 in node:
    x += 1
    chain.append(x)
sm = {int(r[0]) for r in rows("sm.csv")}
out = {
    "next": nxt,
    "rev": nxt,
    "both": sorted((x, z) for x in node for z in bz if 2 * x == z + 3),
    "multi": sorted((x, 3 * x, k) for x, k in a if (3 * x, k) in b),
    "chain": [(c,) for c in chain],
    "last": sorted((x,) for x in node if x + 1 not in node),
    "cnt": [(len(nxt),)],
    "down": [(c,) for c in chain],
    "around": sorted((x + 1, x) for x, k in a if k in node and x + 1 in node),
    "kc3": sorted((x, x + 2) for x in sm if x + 1 in sm and x + 2 in sm),
    "kc4": sorted((x, x + 3) for x in sm if x + 1 in sm and x + 2 in sm and x + 3 in sm),
}
days = {datetime.date.fromisoformat(r[0]) for r in rows("day.csv")}
out["nday"] = sorted((x, x + datetime.timedelta(days=1)) for x in days if x + datetime.timedelta(days=1) in days)
s = {(r[0], decimal.Decimal(r[1])) for r in rows("s.csv")}
names = {n for n, _ in s}
out["cat"] = sorted((a, a + "b") for a in names if a + "b" in names)
out["dec"] = sorted({(a, b) for a, v in s for b, w in s if w == v + decimal.Decimal("0.75")})
for name, rs in out.items():
    with open(os.path.join(d, name + ".want"), "w") as w:
        for r in rs: w.write(",".join(map(str, r)) + "\n")
fl = sorted(((v, w) for v in f for w in g if same(canon(v * -1.0), w)), key=lambda p: (fkey(p[0]), fkey(p[1])))
with open(os.path.join(d, "fl.want"), "w") as w:
    for v, x in fl: w.write(ftext(v) + "," + ftext(x) + "\n")
PY
# check DIR WHAT: the csv outputs in DIR are the expected ones
check() {
    for o in next rev both multi chain fl last cnt nday cat dec around down kc3 kc4; do
        tail -n +2 "$1/$o.csv" 2>/dev/null | cmp -s - "$tmp/$o.want" || fail "$2: $o differs from the expected rows"
    done
}
# run NAME ARGS...: the program's outputs as csv in $tmp/NAME (stderr in $tmp/NAME.err)
run() {
    name=$1
    shift
    "$@" --data "$tmp" --format csv --out "$tmp/$name" >"$tmp/$name.log" 2>"$tmp/$name.err" ||
        { fail "$name: exit $?"; cat "$tmp/$name.err"; }
    check "$tmp/$name" "$name"
}
[ "$(wc -l <"$tmp/both.want")" -gt 10 ] && [ "$(wc -l <"$tmp/multi.want")" -gt 10 ] &&
    [ "$(wc -l <"$tmp/fl.want")" = 5 ] && [ "$(wc -l <"$tmp/chain.want")" = 96 ] &&
    [ "$(wc -l <"$tmp/nday.want")" = 4 ] && [ "$(wc -l <"$tmp/cat.want")" = 2 ] &&
    [ "$(wc -l <"$tmp/dec.want")" = 3 ] && [ "$(wc -l <"$tmp/around.want")" -gt 10 ] &&
    [ "$(wc -l <"$tmp/kc4.want")" -gt 10 ] || fail "the expected rows are too few"

# overflow: big holds 9223372036854775807 (key 1); e empty, with key 2, with key 1
mkdir -p "$tmp/ov"
echo "9223372036854775807,1" >"$tmp/ov/big.csv"
cat >"$tmp/ov/p.logic" <<'P'
big(x, k) -> int(x), int(k).
lang:input[`big] = "big.csv".
lang:input:delimiter[`big] = ",".
e(y, k) -> int(y), int(k).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
any(x, y) <- big(x, _), y = x + 1, e(y, _).
keyed(x, y) <- big(x, k), e(y, k), y = x + 1.
down(x, k) <- e(x, k), x = 5.
down(x, k) <- down(y, k), big(x, _), y = x + 1.
P
# ovrun WHAT OUTPUT E-ROW WANT ARGS...: exit 0 with no rows, or 1 with the overflow
ovrun() {
    what=$1 o=$2 row=$3 want=$4
    shift 4
    printf '%s' "$row" >"$tmp/ov/e.csv"
    { cat "$tmp/ov/p.logic"; echo "lang:output[\`$o] = \"$o\"."; } >"$tmp/ov/$o.logic"
    "$@" "$tmp/ov/$o.logic" --data "$tmp/ov" --format csv >"$tmp/ov/out" 2>"$tmp/ov/err"
    rc=$?
    case $o in any) line=7 ;; keyed) line=8 ;; *) line=10 ;; esac
    if [ "$want" = 0 ]; then
        [ $rc = 0 ] && [ "$(wc -l <"$tmp/ov/out")" = 1 ] || fail "$what: $o, e = '$row': exit $rc, $(cat "$tmp/ov/err")"
    else
        [ $rc = 1 ] && grep -q "$o.logic:$line:1: error: integer overflow in 9223372036854775807 + 1" "$tmp/ov/err" ||
            fail "$what: $o, e = '$row': exit $rc, expected the overflow: $(cat "$tmp/ov/err")"
    fi
}
# a chain of keys: xa(x), xb(z), xc(w), z = x + 1, w = z + 1
mkdir -p "$tmp/kc"
cat >"$tmp/kc/p.logic" <<'P'
xa(x) -> int(x).
lang:input[`xa] = "xa.csv".
xb(z) -> int(z).
lang:input[`xb] = "xb.csv".
xc(w) -> int(w).
lang:input[`xc] = "xc.csv".
kc(x, w) <- xa(x), xb(z), xc(w), z = x + 1, w = z + 1.
lang:output[`kc] = "kc".
P
# kcrun WHAT XA XB XC WANT ARGS...: WANT is the output's rows (x,w; ...), or err
kcrun() {
    what=$1 want=$5
    printf "$2" >"$tmp/kc/xa.csv"
    printf "$3" >"$tmp/kc/xb.csv"
    printf "$4" >"$tmp/kc/xc.csv"
    shift 5
    "$@" "$tmp/kc/p.logic" --data "$tmp/kc" --format csv >"$tmp/kc/out" 2>"$tmp/kc/err"
    rc=$?
    if [ "$want" = err ]; then
        [ $rc = 1 ] && grep -q "p.logic:7:1: error: integer overflow in 9223372036854775807 + 1" "$tmp/kc/err" ||
            fail "$what: chain, xa/xb/xc = $(cat "$tmp/kc/xa.csv" "$tmp/kc/xb.csv" "$tmp/kc/xc.csv" | tr '\n' ' '): exit $rc, expected the overflow: $(cat "$tmp/kc/err")"
    else
        got=$(tail -n +2 "$tmp/kc/out" | tr '\n' ';')
        [ $rc = 0 ] && [ "$got" = "$want" ] ||
            fail "$what: chain, xa/xb/xc = $(cat "$tmp/kc/xa.csv" "$tmp/kc/xb.csv" "$tmp/kc/xc.csv" | tr '\n' ' '): exit $rc, rows '$got', expected '$want': $(cat "$tmp/kc/err")"
    fi
}
overflow() {
    what=$1
    shift
    max=9223372036854775807
    # z + 1 overflows only for the xb row that no x + 1 reaches: excluded
    kcrun "$what" '1\n' "2\n$max\n" '3\n' '1,3;' "$@"
    # ... and reached from x = max - 1: the error
    kcrun "$what" "1\n9223372036854775806\n" "2\n$max\n" '3\n' err "$@"
    # x + 1 overflows, but xc (or xb) has no row: no combination reaches it
    kcrun "$what" "$max\n" '1\n' '' '' "$@"
    kcrun "$what" "$max\n" '' '3\n' '' "$@"
    kcrun "$what" "$max\n" '1\n' '3\n' err "$@"
    ovrun "$what" any "" 0 "$@"
    ovrun "$what" keyed "" 0 "$@"
    ovrun "$what" any "5,2" 1 "$@"
    ovrun "$what" keyed "5,2" 0 "$@"
    ovrun "$what" keyed "5,1" 1 "$@"
    ovrun "$what" down "" 0 "$@"
    ovrun "$what" down "4,2" 0 "$@"
    ovrun "$what" down "5,2" 1 "$@"
}

case $mode in
cpu)
    # the plans: no join filters by a computed value, no cross product has a
    # filter (an existence test, a side of no columns, is crossed); with
    # --no-keyjoin each of the thirteen rules has such a filter, twelve a cross product
    "$redfox" dump --plan "$tmp/p.logic" >"$tmp/plan" || fail "dump --plan"
    "$redfox" dump --plan "$tmp/p.logic" --no-keyjoin >"$tmp/plan.off" || fail "dump --plan --no-keyjoin"
    grep -q ' join .* filter' "$tmp/plan" && fail "a join on a computed key filters: $(grep ' join .* filter' "$tmp/plan")"
    [ "$(grep -c ' join .* filter' "$tmp/plan.off")" = 13 ] && [ "$(grep -c 'cross filter' "$tmp/plan.off")" = 12 ] ||
        fail "--no-keyjoin: not the cross products"
    grep -q 'on (t[0-9]*\.1 = node\.0) ' "$tmp/plan" || fail "next: no equi-join on the computed x + 1"
    # counting down: x + 1 over node computed once, before the loop
    grep -A2 'loop-invariant' "$tmp/plan" | grep -q 'map node -> (node.0, (node.0 + 1))' ||
        fail "down: x + 1 over node is not computed before the loop"
    run cpu "$redfox" run "$tmp/p.logic" --device cpu --threads 2
    run cpu.off "$redfox" run "$tmp/p.logic" --device cpu --threads 2 --no-keyjoin
    run cpu1 "$redfox" run "$tmp/p.logic" --device cpu --threads 1
    overflow cpu "$redfox" run --device cpu
    overflow cpu.off "$redfox" run --device cpu --no-keyjoin
    # through a .rfx file; the plan's switches act when compiling, and a .rfx says so
    "$redfox" compile "$tmp/p.logic" -o "$tmp/p.rfx" >/dev/null 2>&1 || fail "compile"
    run rfx "$redfox" run "$tmp/p.rfx" --device cpu --no-keyjoin
    grep -q 'note: --no-keyjoin acts when compiling LogiQL: .*p.rfx runs the plan it was compiled with' "$tmp/rfx.err" ||
        fail "run p.rfx --no-keyjoin: no note that the .rfx keeps its plan: $(cat "$tmp/rfx.err")"
    ;;
emu)
    RF_GPU_EMULATE=1
    export RF_GPU_EMULATE
    run gpu "$redfox" run "$tmp/p.logic" --device gpu
    run gpu.nofuse "$redfox" run "$tmp/p.logic" --device gpu --no-fuse
    run gpu.off "$redfox" run "$tmp/p.logic" --device gpu --no-keyjoin
    overflow gpu "$redfox" run --device gpu
    overflow gpu.nofuse "$redfox" run --device gpu --no-fuse
    ;;
mpi)
    run cpu2 $mpi 2 "$redfox" run "$tmp/p.logic" --device cpu
    run gpu2 env RF_GPU_EMULATE=1 $mpi 2 "$redfox" run "$tmp/p.logic" --device gpu
    overflow cpu2 $mpi 2 "$redfox" run --device cpu
    ;;
*) echo "usage: run_keyjoin.sh REDFOX TESTS cpu|emu|mpi"; exit 2 ;;
esac
[ $fails -eq 0 ] && echo "keyjoin ($mode): ok"
exit $fails
