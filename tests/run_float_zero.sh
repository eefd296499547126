#!/bin/sh
# tests/run_float_zero.sh REDFOX: a float zero has no sign (docs/LANGUAGE.md,
# Types): -0.0 is read and computed as 0.0, so that 1.0f / x is inf for
# every zero x, on the CPU and the emulated GPU:
#   1. an input holding -0.0 and 0.0: a set of one zero (count 2 with 2.0),
#      and the map 1.0f / x gives one row (0.0, inf), not (0.0, -inf) too;
#   2. -0.0 computed in a program (0.0 * -1.0f, -x, an underflow of a
#      negative product, 0.0 / -5.0f, a literal -0.0f, a fact, an avg whose
#      quotient underflows): 1.0f / y is inf for each; and from the .rfx;
#      and docs/LANGUAGE.md's example 1.0f / (0.0f * -1.0f), folded;
#   3. the input of 1. imported into a database and read from it;
#   4. a `redfox exec` batch inserting -0.0 where the database holds 0.0.
# The expected rows are written here by hand.
set -u
r=$1
tmp=${TMPDIR:-/tmp}/rf_fzero.$$
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
check() { # check WHAT WANT GOT
    cmp -s "$2" "$3" || { diff "$2" "$3"; fail "$1"; }
}

# ---- 1. read ----
printf -- '-0.0\n0.0\n2.0\n' >data/v.csv
cat >v.logic <<'P'
v(x) -> float(x).
lang:input[`v] = "v.csv".
r(x, y) -> float(x), float(y).
r(x, y) <- v(x), y = 1.0f / x.
lang:output[`r] = "r".
n[] = c <- agg<<c = count()>> v(_).
lang:output[`n] = "n".
P
printf 'r (2 rows)\nx|y\n0.0|inf\n2.0|0.5\n\nn (1 row)\nc\n2\n' >v.want
for dev in cpu emu; do
    run $dev v.logic --data data --format tbl >v.$dev 2>err || { cat err; fail "$dev: read"; }
    check "$dev: -0.0 read from a file is not 0.0" v.want v.$dev
done

# ---- 2. computed ----
printf '1|0.0\n2|1e-300\n' >data/w.tbl
printf -- '-5e-324\n0.0\n' >data/t.csv
cat >c.logic <<'P'
w(i, x) -> int(i), float(x).
lang:input[`w] = "w.tbl".
t(x) -> float(x).
lang:input[`t] = "t.csv".
f(x) -> float(x).
f(-0.0f).
a[] = m <- agg<<m = avg(x)>> t(x).
k(i, y) -> int(i), float(y).
k(1, y) <- w(1, x), y = x * -1.0f.
k(2, y) <- w(1, x), y = -x.
k(3, y) <- w(2, x), y = x * -1e-300.
k(4, y) <- w(1, x), y = x / -5.0f.
k(5, y) <- f(y).
k(6, y) <- w(1, _), y = -0.0f.
k(7, y) <- a[] = y.
k(8, y) <- w(1, x), y = -x * 1.0f - 0.0f.
q(i, z) <- k(i, y), z = 1.0f / y.
lang:output[`q] = "q".
P
printf 'i|z\n1|inf\n2|inf\n3|inf\n4|inf\n5|inf\n6|inf\n7|inf\n8|inf\n' >c.want
$to "$r" compile c.logic -o c.rfx 2>err || { cat err; fail "compile"; }
for dev in cpu emu; do
    run $dev c.logic --data data --format tbl >c.$dev 2>err || { cat err; fail "$dev: computed"; }
    check "$dev: a computed -0.0 is not 0.0" c.want c.$dev
    run $dev c.rfx --data data --format tbl >c.rfx.$dev 2>err || { cat err; fail "$dev: computed, .rfx"; }
    check "$dev: a computed -0.0 is not 0.0 (.rfx)" c.want c.rfx.$dev
done

# the example of docs/LANGUAGE.md (Types), folded at compile time
printf 'r(a) <- a = 1.0f / (0.0f * -1.0f).\nlang:output[`r] = "r".\n' >doc.logic
for dev in cpu emu; do
    run $dev doc.logic --format tbl >doc.$dev 2>err || { cat err; fail "$dev: the documented example"; }
    printf 'a\ninf\n' | cmp -s - doc.$dev || { cat doc.$dev; fail "$dev: 1.0f / (0.0f * -1.0f) is not inf"; }
done

# ---- 3. a database ----
$to "$r" import v.logic --data data --out db 2>err || { cat err; fail "import"; }
for dev in cpu emu; do
    run $dev v.logic --data db --format tbl >db.$dev 2>err || { cat err; fail "$dev: database"; }
    check "$dev: -0.0 imported is not 0.0" v.want db.$dev
done

# ---- 4. an exec batch ----
cat >e.logic <<'P'
e(k, a) -> string(k), float(a).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
r(k, y) <- e(k, a), y = 1.0f / a.
lang:output[`r] = "r".
n[] = c <- agg<<c = count()>> e(_, a), a = 0.0f.
lang:output[`n] = "n".
z(a) <- e(_, a).
lang:output[`z] = "z".
P
mkdir -p edata
printf 'a,0.0\n' >edata/e.csv
$to "$r" import e.logic --data edata --out edb 2>err || { cat err; fail "exec: import"; }
printf '+e("b", -0.0).\n' >b.txn
$to "$r" exec edb e.logic --batch b.txn --format tbl >x 2>err || { cat err; fail "exec batch"; }
printf 'r (2 rows)\nk|y\na|inf\nb|inf\n\nn (1 row)\nc\n2\n\nz (1 row)\na\n0.0\n' >e.want
check "exec: -0.0 inserted is not 0.0" e.want x
for dev in cpu emu; do
    run $dev e.logic --data edb --format tbl >edb.$dev 2>err || { cat err; fail "$dev: exec's database"; }
    check "$dev: exec's database" e.want edb.$dev
done
echo "PASS"
