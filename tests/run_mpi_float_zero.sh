#!/bin/sh
# tests/run_mpi_float_zero.sh REDFOX TESTS_DIR: a float zero has no sign on
# ranks too (docs/LANGUAGE.md, Types): an input holding -0.0 and 0.0 is a
# set of one zero and 1.0f / x gives one row (0.0, inf); -0.0 computed on
# the ranks (0.0 * -1.0f, -x, an underflow, 0.0 / -5.0f) gives inf. 2 CPU
# ranks and, where the emulator runs, 2 emulated GPU ranks (--gpus 2); the
# expected rows are written here by hand. Skipped (77) where mpirun is
# missing or redfox was built without MPI.
set -u
redfox=$1
tests=$2
tmp=${TMPDIR:-/tmp}/rf_mpi_float_zero.$$
. "$tests/mpi_env.sh"
mkdir -p "$tmp/d"
awk 'BEGIN { for (i = 0; i < 40; i++) { print (i % 2 ? "-0.0" : "0.0") >"'"$tmp"'/d/v.csv"; print i "|0.0" >"'"$tmp"'/d/w.tbl" } }'
echo 2.0 >>"$tmp/d/v.csv"
cat >"$tmp/p.logic" <<'P'
v(x) -> float(x).
lang:input[`v] = "v.csv".
w(i, x) -> int(i), float(x).
lang:input[`w] = "w.tbl".
r(x, y) -> float(x), float(y).
r(x, y) <- v(x), y = 1.0f / x.
lang:output[`r] = "r".
n[] = c <- agg<<c = count()>> v(_).
lang:output[`n] = "n".
k(y) <- w(_, x), y = x * -1.0f.
k(y) <- w(_, x), y = -x.
k(y) <- w(_, x), y = (x + 1e-300) * -1e-300.
k(y) <- w(_, x), y = x / -5.0f.
q(y, z) <- k(y), z = 1.0f / y.
lang:output[`q] = "q".
P
printf 'r (2 rows)\nx|y\n0.0|inf\n2.0|0.5\n\nn (1 row)\nc\n2\n\nq (1 row)\ny|z\n0.0|inf\n' >"$tmp/want"
"$redfox" run "$tmp/p.logic" --data "$tmp/d" --device cpu --format tbl >"$tmp/one" 2>"$tmp/err" || { cat "$tmp/err"; fail "one process"; }
cmp -s "$tmp/want" "$tmp/one" || { fail "one process: not the expected rows"; diff "$tmp/want" "$tmp/one"; }
$mpi 2 "$redfox" run "$tmp/p.logic" --data "$tmp/d" --device cpu --format tbl --set rank_timeout_s=60 >"$tmp/r2" \
    2>"$tmp/err" || { cat "$tmp/err"; fail "-np 2: exit"; }
cmp -s "$tmp/want" "$tmp/r2" || { fail "-np 2: a signed zero"; diff "$tmp/want" "$tmp/r2"; }
if RF_GPU_EMULATE=1 "$redfox" run "$tmp/p.logic" --data "$tmp/d" --device gpu >/dev/null 2>&1; then
    RF_GPU_EMULATE=1 "$redfox" run "$tmp/p.logic" --data "$tmp/d" --gpus 2 --format tbl --set rank_timeout_s=60 \
        >"$tmp/g2" 2>"$tmp/err" || { cat "$tmp/err"; fail "--gpus 2: exit"; }
    cmp -s "$tmp/want" "$tmp/g2" || { fail "--gpus 2 emulated: a signed zero"; diff "$tmp/want" "$tmp/g2"; }
fi
[ $fails -eq 0 ] || exit 1
echo "PASS"
