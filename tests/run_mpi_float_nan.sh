#!/bin/sh
# tests/run_mpi_float_nan.sh REDFOX TESTS_DIR: on 2 ranks, a NaN computed at
# run time (0.0 / 0.0: the sign bit set on x86) and a NaN read as `nan` (sign
# bit clear) are one value, as in one process (docs/LANGUAGE.md, Types): a
# join on them finds every pair, a set holds one `nan`, a count over their
# union is 1. The rows' rank hash (runtime/dist/dist_pack.c on the CPU,
# rf_gather.cuh's part_flags on the GPU) sent them to different ranks, where
# the join found nothing and the set held `nan` twice. CPU ranks and, where
# the emulator runs, 2 emulated GPU ranks (--gpus 2). Skipped (77) where
# mpirun is missing or redfox was built without MPI.
set -u
redfox=$1
tests=$2
tmp=${TMPDIR:-/tmp}/rf_mpi_float_nan.$$
. "$tests/mpi_env.sh"
mkdir -p "$tmp/d"
awk 'BEGIN { for (i = 0; i < 40; i++) { print i "|nan" >"'"$tmp"'/d/x.tbl"; print i "|0.0" >"'"$tmp"'/d/y.tbl" } }'
cat >"$tmp/p.logic" <<'P'
x(i, v) -> int(i), float(v).
lang:input[`x] = "x.tbl".
y(i, v) -> int(i), float(v).
lang:input[`y] = "y.tbl".
w(i, q) <- y(i, v), q = v / v.
u(q) <- x(_, q). u(q) <- w(_, q).
lang:output[`u] = "u".
c(q, n) <- agg<<n = count()>> (x(_, q) ; w(_, q)).
lang:output[`c] = "c".
j(n) <- agg<<n = count()>> x(i, q), w(k, q).
lang:output[`j] = "j".
P
# expected, by hand: one NaN value; 40 x 40 pairs join on it
printf 'u (1 row)\nq\nnan\n\nc (1 row)\nq|n\nnan|1\n\nj (1 row)\nn\n1600\n' >"$tmp/want"
"$redfox" run "$tmp/p.logic" --data "$tmp/d" --device cpu --format tbl >"$tmp/one" 2>"$tmp/err" || { cat "$tmp/err"; fail "one process"; }
cmp -s "$tmp/want" "$tmp/one" || { fail "one process: not the expected rows"; diff "$tmp/want" "$tmp/one"; }
for bc in 256M off; do
    $mpi 2 "$redfox" run "$tmp/p.logic" --data "$tmp/d" --device cpu --format tbl --set rank_broadcast_bytes=$bc \
        --set rank_timeout_s=60 >"$tmp/r2" 2>"$tmp/err" || { cat "$tmp/err"; fail "-np 2 (broadcast $bc): exit"; }
    cmp -s "$tmp/want" "$tmp/r2" || { fail "-np 2 (broadcast $bc): the NaNs split"; diff "$tmp/want" "$tmp/r2"; }
    if RF_GPU_EMULATE=1 "$redfox" run "$tmp/p.logic" --data "$tmp/d" --device gpu >/dev/null 2>&1; then
        RF_GPU_EMULATE=1 "$redfox" run "$tmp/p.logic" --data "$tmp/d" --gpus 2 --format tbl --set rank_broadcast_bytes=$bc \
            --set rank_timeout_s=60 >"$tmp/g2" 2>"$tmp/err" || { cat "$tmp/err"; fail "--gpus 2 (broadcast $bc): exit"; }
        cmp -s "$tmp/want" "$tmp/g2" || { fail "--gpus 2 emulated (broadcast $bc): the NaNs split"; diff "$tmp/want" "$tmp/g2"; }
    fi
done
[ $fails -eq 0 ] || exit 1
echo "PASS"
