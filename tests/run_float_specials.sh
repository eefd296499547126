#!/bin/sh
# tests/run_float_specials.sh REDFOX: floats that are not numbers (inf, -inf,
# nan: docs/LANGUAGE.md, Types) print as `inf`, `-inf` and `nan` and read
# back as the same values, on the CPU and the emulated GPU:
#   1. a program computes them (x / 0.0, x * 1e308); its outputs written
#      with --out (csv and tbl) are read back through lang:input, and the
#      same program over them prints the same bytes;
#   2. the written file imported into a database and read from it (the
#      column's blocks' min/max leave NaN out) gives the same bytes;
#   3. `redfox exec` batches insert and delete them; the output equals a run
#      over the same rows as text; a group kept by diffs whose NaN key has
#      other bits than the batch's stays one group;
#   4. a group-by and an order over 3,000 rows (more than the GPU sorts on the
#      host) of inf, -inf, nan, -0.0 and finite values: the counts and the
#      order computed here by awk (nan equal to itself and above inf, -0.0
#      equal to 0.0), the same bytes on both devices, text and database;
#   5. any other spelling (Inf, NaN, -nan, infinity) keeps its file:line:col
#      error, in text and in a batch;
#   6. a functional input whose key has the values 0.0 and -0.0, or nan
#      twice, holds one value for it (they are equal values), as a derived
#      functional predicate does, in text and from a database; 1.0 and 2.0
#      stay a clash;
#   7. the examples of docs/LANGUAGE.md (Types) give what it says.
set -u
r=$1
tmp=${TMPDIR:-/tmp}/rf_fspecial.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if command -v timeout >/dev/null 2>&1; then to="timeout 120"; else to=; fi
cd "$tmp" || exit 1
run() { # run DEVICE ARGS...: redfox run on the CPU or the emulated GPU
    dev=$1
    shift
    if [ "$dev" = emu ]; then RF_GPU_EMULATE=1 $to "$r" run "$@" --device gpu; else $to "$r" run "$@" --device cpu; fi
}

# ---- 1. computed, written, read back ----
printf '1.0\n-2.0\n0.0\n3.5\n' >data/x.csv
cat >mk.logic <<'P'
x(a) -> float(a).
lang:input[`x] = "x.csv".
v(a, b) -> float(a), float(b).
v(a, b) <- x(a), b = a / 0.0.
v(a, b) <- x(a), b = a * 1e308.
lang:output[`v] = "v".
P
cat >rd.logic <<'P'
v(a, b) -> float(a), float(b).
lang:input[`v] = "v.csv".
lang:input:delimiter[`v] = ",".
lang:input:header[`v] = true.
w(a, b) <- v(a, b).
lang:output[`w] = "v".
P
sed -e 's/v\.csv/v.tbl/' -e '/delimiter/d' rd.logic >rdt.logic
for dev in cpu emu; do
    run $dev mk.logic --data data --format tbl >mk.$dev 2>err || { cat err; fail "$dev: computing"; }
    for v in inf -inf nan; do grep -q "|$v\$" mk.$dev || { cat mk.$dev; fail "$dev: no $v computed"; }; done
    rm -rf o.$dev ot.$dev
    run $dev mk.logic --data data --out o.$dev --format csv 2>err || { cat err; fail "$dev: writing csv"; }
    run $dev mk.logic --data data --out ot.$dev --format tbl 2>err || { cat err; fail "$dev: writing tbl"; }
    run $dev rd.logic --data o.$dev --format tbl >rd.$dev 2>err || { cat err; fail "$dev: reading the csv back"; }
    cmp -s mk.$dev rd.$dev || { diff mk.$dev rd.$dev | head; fail "$dev: csv read back differs"; }
    run $dev rdt.logic --data ot.$dev --format tbl >rdt.$dev 2>err || { cat err; fail "$dev: reading the tbl back"; }
    cmp -s mk.$dev rdt.$dev || { diff mk.$dev rdt.$dev | head; fail "$dev: tbl read back differs"; }
done
cmp -s mk.cpu mk.emu || { diff mk.cpu mk.emu | head; fail "the devices differ"; }

# ---- 2. through a database ----
$to "$r" import rd.logic --data o.cpu --out db 2>err || { cat err; fail "import"; }
for dev in cpu emu; do
    run $dev rd.logic --data db --format tbl >db.$dev 2>err || { cat err; fail "$dev: reading the database"; }
    cmp -s mk.cpu db.$dev || { diff mk.cpu db.$dev | head; fail "$dev: the database answers otherwise"; }
done

# ---- 3. transactions ----
cat >e.logic <<'P'
e(k, a) -> string(k), float(a).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
n(a, c) <- agg<<c = count()>> e(_, a).
lang:output[`n] = "n".
P
mkdir -p edata
printf 'a,1.5\n' >edata/e.csv
$to "$r" import e.logic --data edata --out edb 2>err || { cat err; fail "exec: import"; }
printf '+e("b", nan).\n+e("c", inf).\n+e("d", -inf).\n+e("f", nan).\n' >b1.txn
printf -- '-e("f", nan).\n+e("g", -inf).\n' >b2.txn
printf 'a,1.5\nb,nan\nc,inf\nd,-inf\nf,nan\n' >edata/e1.csv
printf 'a,1.5\nb,nan\nc,inf\nd,-inf\ng,-inf\n' >edata/e2.csv
i=0
for b in b1 b2; do
    i=$((i + 1))
    $to "$r" exec edb e.logic --batch $b.txn --format tbl >x$i 2>err || { cat err; fail "exec batch $b"; }
    mkdir -p want$i
    cp edata/e$i.csv want$i/e.csv
    run cpu e.logic --data want$i --format tbl >w$i 2>err || { cat err; fail "exec: text run $i"; }
    cmp -s x$i w$i || { diff w$i x$i; fail "exec batch $b: the output differs from a run over the rows as text"; }
    run emu e.logic --data edb --format tbl >g$i 2>err || { cat err; fail "exec: emulated run over the database"; }
    cmp -s x$i g$i || { diff w$i g$i; fail "exec batch $b: the database read on the emulated GPU differs"; }
done

# a group kept by diffs whose key is a NaN of other bits than the batch's
# (0.0 / 0.0 is one NaN, its negation another): one group, as in a run
mkdir -p mdata
printf '0.0,0.0,1.0\n0.0,0.0,-1.0\n1.0,1.0,1.0\n' >mdata/v.csv
cat >m.logic <<'P'
v(a, b, s) -> float(a), float(b), float(s).
lang:input[`v] = "v.csv".
lang:input:delimiter[`v] = ",".
w(c, s) <- v(a, b, s), s > 0.0, c = a / b.
w(c, s) <- v(a, b, s), s < 0.0, c = -(a / b).
g[c] = n -> float(c), int(n).
g[c] = n <- agg<<n = count()>> w(c, _).
lang:output[`g] = "g".
P
printf '+v(0.0, 0.0, -2.0).\n+v(2.0, 2.0, 3.0).\n' >m.txn
$to "$r" import m.logic --data mdata --out mdb 2>err || { cat err; fail "diffs: import"; }
$to "$r" exec mdb m.logic >/dev/null 2>err || { cat err; fail "diffs: first exec"; }
$to "$r" exec mdb m.logic --batch m.txn --incremental --format tbl >m.out 2>err || { cat err; fail "diffs: the batch"; }
[ "$(cat m.out)" = "$(printf 'c|n\n1.0|2\nnan|3')" ] || { cat m.out; fail "diffs: the NaN group"; }

# ---- 4. group-by and order over 3,000 rows ----
awk 'BEGIN { n = split("nan inf -inf 0.0 -0.0 1.5 -2.25 1e+308 nan", v, " ");
             s = 7; print "k,a"
             for (i = 0; i < 3000; i++) { s = (s * 1103515245 + 12345) % 2147483648; printf "r%04d,%s\n", i, v[1 + int(s / 65536) % n] } }' >data/g.csv
cat >g.logic <<'P'
g(k, a) -> string(k), float(a).
lang:input[`g] = "g.csv".
lang:input:delimiter[`g] = ",".
lang:input:header[`g] = true.
cnt(a, c) <- agg<<c = count()>> g(_, a).
lang:output[`cnt] = "cnt".
o(k, a) <- g(k, a).
lang:output[`o] = "o".
lang:output:orderBy[`o] = "2 desc, 1".
lt(c) <- agg<<c = count()>> g(_, a), a < 2.0.
lang:output[`lt] = "lt".
P
# expected: the value order -inf < finite < inf < nan, -0.0 = 0.0 (a zero
# prints as 0.0 whatever its sign)
awk -F, 'NR > 1 { a = $2; if (a == "-0.0") a = "0.0"; c[a]++ }
    END { split("-inf -2.25 0.0 1.5 1e+308 inf nan", o, " "); for (i = 1; i <= 7; i++) print o[i] "|" c[o[i]] }' data/g.csv >cnt.want
awk -F, 'NR > 1 { a = $2; r = a == "nan" ? 0 : a == "inf" ? 1 : a == "1e+308" ? 2 : a == "1.5" ? 3 : a ~ /^-?0\.0$/ ? 4 : a == "-2.25" ? 5 : 6
    printf "%d %s|%s\n", r, $1, a == "-0.0" ? "0.0" : a }' data/g.csv | sort -k1,1n -k2,2 | cut -d' ' -f2- >o.want
awk -F, 'NR > 1 && ($2 == "-inf" || $2 == "-2.25" || $2 == "0.0" || $2 == "-0.0" || $2 == "1.5") { c++ } END { print c }' data/g.csv >lt.want
$to "$r" import g.logic --data data --out gdb 2>err || { cat err; fail "group: import"; }
for src in data gdb; do
    for dev in cpu emu; do
        run $dev g.logic --data $src --format tbl >g.$src.$dev 2>err || { cat err; fail "group $src $dev: run"; }
        sed -n '/^cnt /,/^$/p' g.$src.$dev | sed -e '1,2d' -e '/^$/d' -e 's/^-0\.0|/0.0|/' >cnt.got
        cmp -s cnt.want cnt.got || { diff cnt.want cnt.got; fail "group $src $dev: the counts"; }
        sed -n '/^o /,/^$/p' g.$src.$dev | sed -e '1,2d' -e '/^$/d' >o.got
        cmp -s o.want o.got || { diff o.want o.got | head; fail "group $src $dev: the order"; }
        sed -n '/^lt /,$p' g.$src.$dev | sed -n 3p >lt.got
        cmp -s lt.want lt.got || { cat lt.want lt.got; fail "group $src $dev: a < 2.0 over nan"; }
    done
    cmp -s g.$src.cpu g.$src.emu || { diff g.$src.cpu g.$src.emu | head; fail "group $src: the devices differ"; }
done
cmp -s g.data.cpu g.gdb.cpu || fail "group: text and database differ"

# ---- 5. other spellings stay errors ----
for bad in Inf NaN -nan infinity +inf; do
    printf '1.0\n%s\n' "$bad" >data/x.csv
    run cpu mk.logic --data data >/dev/null 2>err
    rc=$?
    [ $rc = 1 ] || fail "'$bad': exit $rc, expected 1"
    grep -q "x.csv:2:[0-9]*: error: expected a float, found \"$bad\"" err || { cat err; fail "'$bad': the error"; }
done
printf '+e("z", NaN).\n' >bad.txn
$to "$r" exec edb e.logic --batch bad.txn >/dev/null 2>err
rc=$?
[ $rc = 1 ] || { cat err; fail "a batch's NaN: exit $rc, expected 1"; }
grep -q 'bad.txn:1:[0-9]*: error' err || { cat err; fail "a batch's NaN: the error"; }

# ---- 6. a functional input's equal values of other bits ----
mkdir -p fdata
printf '1|nan\n1|nan\n2|0.0\n2|-0.0\n3|-0.0\n3|0.0\n' >fdata/f.tbl
cat >fd.logic <<'P'
f[k] = v -> int(k), float(v).
lang:input[`f] = "f.tbl".
n(c) <- agg<<c = count()>> f[_] = _.
lang:output[`n] = "n".
z(k) <- f[k] = v, v = 0.0f.
lang:output[`z] = "z".
P
printf 'n (1 row)\nc\n3\n\nz (2 rows)\nk\n2\n3\n' >fd.want
$to "$r" import fd.logic --data fdata --out fdb 2>err || { cat err; fail "fd: import"; }
for src in fdata fdb; do
    for dev in cpu emu; do
        run $dev fd.logic --data $src --format tbl >fd.got 2>err || { cat err; fail "fd $src $dev: 0.0 and -0.0 (or nan twice) taken for two values"; }
        cmp -s fd.want fd.got || { diff fd.want fd.got; fail "fd $src $dev: the rows"; }
    done
done
printf '1|1.0\n1|2.0\n' >fdata/f.tbl
run cpu fd.logic --data fdata >/dev/null 2>err
rc=$?
[ $rc = 1 ] && grep -q 'f.tbl:2:1: error: functional dependency violated' err || { cat err; fail "fd: a clash not found (exit $rc)"; }

# ---- 7. the documented examples ----
cat >doc.logic <<'P'
r(a, b, c, d) <- a = 1.0f / 0.0f, b = -1.0f / 0.0f, c = 0.0f / 0.0f, d = 1e308 * 10.0.
lang:output[`r] = "r".
P
for dev in cpu emu; do
    run $dev doc.logic --format tbl >doc.got 2>err || { cat err; fail "doc $dev: the examples"; }
    printf 'a|b|c|d\ninf|-inf|nan|inf\n' | cmp -s - doc.got || { cat doc.got; fail "doc $dev: the examples' values"; }
done
printf 'r(a) <- a = 1.0 / 0.0.\nlang:output[`r] = "r".\n' >doc2.logic
run cpu doc2.logic >/dev/null 2>err
rc=$?
[ $rc = 1 ] && grep -q 'division by zero' err || { cat err; fail "doc: 1.0 / 0.0 of decimals (exit $rc)"; }
echo ok
