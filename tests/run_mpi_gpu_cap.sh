#!/bin/sh
# tests/run_mpi_gpu_cap.sh REDFOX TESTS_DIR: two emulated GPU ranks under
# --gpu-memory caps. Each run ends, well within rank_timeout_s, with the
# outputs of one process or with an error (exit 1) that names the cap:
#   1. a transitive closure whose final gather on rank 0 finds no room for
#      the rows it receives (the other rank once waited in the exchange
#      until rank_timeout_s: "no answer from the other ranks"; then every
#      rank stopped, exit 1): the rows now move through host memory and the
#      run gives one process's output (so must a join whose hash move did
#      not fit, "GPU failure cutting the hash of variable t0 into parts");
#   2. groups over a string relation kept in host memory under the cap,
#      moved through host memory (its strings are the ranks' own): read
#      there, never brought back to the device first (that once failed as
#      an internal error, exit 3: "the rows of variable t cannot be read
#      for an exchange").
# Skipped (77) without mpirun or MPI support.
set -u
redfox=$1
tests=$2
tmp=${TMPDIR:-/tmp}/rf_mpi_gpu_cap.$$
dev=gpu
export RF_GPU_EMULATE=1
mkdir -p "$tmp/d"
awk 'BEGIN { for (i = 1; i <= 60; i++) printf "%d|%d\n%d|%d\n", i, (i * 7 + 3) % 60 + 1, i, (i * 13 + 5) % 70 + 1 }' \
    >"$tmp/d/e.tbl"
awk 'BEGIN { for (i = 0; i < 900; i++) printf "%d|%d|name%d|%d\n", i, i < 500 ? 0 : i % 40, (i * 37) % 301, i * 7 - 3000 }' \
    >"$tmp/d/t.tbl"
cat >"$tmp/tc.logic" <<'P'
e(a, b) -> int(a), int(b).
lang:input[`e] = "e.tbl".
path(x, y) <- e(x, y).
path(x, z) <- path(x, y), e(y, z).
lang:output[`path] = "path".
P
cat >"$tmp/groups.logic" <<'P'
t(i, g, s, n) -> int(i), int(g), string(s), int(n).
lang:input[`t] = "t.tbl".
a(g, c, ti, ms, xs) <- agg<<c = count(), ti = total(n), ms = min(s), xs = max(s)>> t(_, g, s, n).
lang:output[`a] = "a".
P
. "$tests/mpi_env.sh"

cat >"$tmp/skew.logic" <<'P'
r(k, v) -> int(k), int(v).
s(k, w) -> int(k), int(w).
lang:input[`r] = "r.tbl".
lang:input[`s] = "s.tbl".
j(v, w) <- r(k, v), s(k, w).
lang:output[`j] = "j".
P
awk 'BEGIN { for (i = 0; i < 400; i++) printf "%d|%d\n", i < 120 ? 0 : 1 + (i * 37) % 200, i }' >"$tmp/d/r.tbl"
awk 'BEGIN { for (i = 0; i < 300; i++) printf "%d|%d\n", i < 80 ? 0 : 1 + (i * 53) % 200, 1000 + i }' >"$tmp/d/s.tbl"

# run NAME PROG CAP [ok]: one process uncapped, then 2 ranks under CAP
# (ok: they must give its output)
run() {
    "$redfox" run "$2" --data "$tmp/d" --device gpu --format csv >"$tmp/$1.1" 2>"$tmp/$1.err1" ||
        { fail "$1: one process"; cat "$tmp/$1.err1"; return; }
    start=$(date +%s)
    $mpi 2 "$redfox" run "$2" --data "$tmp/d" --device gpu --format csv --threads 1 --gpu-memory "$3" \
        --set rank_timeout_s=20 >"$tmp/$1.2" 2>"$tmp/$1.err2"
    rc=$? took=$(($(date +%s) - start))
    if [ $took -ge 15 ] || grep -q 'no answer from the other ranks' "$tmp/$1.err2"; then
        fail "$1 under the cap $3: a rank waited for another ($took s)"; head -5 "$tmp/$1.err2"
    elif [ $rc -ne 0 ] && [ "${4:-}" = ok ]; then
        fail "$1 under the cap $3: exit $rc, not one process's output"; head -5 "$tmp/$1.err2"
    elif [ $rc -eq 0 ]; then
        cmp -s "$tmp/$1.1" "$tmp/$1.2" || fail "$1 under the cap $3: not the output of one process"
    elif [ $rc -ne 1 ] || ! grep -q 'error: .*out of GPU memory.*(--gpu-memory)' "$tmp/$1.err2"; then
        fail "$1 under the cap $3: exit $rc, not 1 with an error naming the cap"; head -5 "$tmp/$1.err2"
    fi
}
for cap in 64K 40K; do run tc "$tmp/tc.logic" $cap ok; done
for cap in 256K 64K; do run skew "$tmp/skew.logic" $cap ok; done
for cap in 64K 16K 4K; do run groups "$tmp/groups.logic" $cap; done
[ $fails -eq 0 ] && echo "ok: two GPU ranks under caps end with the outputs or a clear error"
exit $fails
