#!/bin/sh
# tests/run_mpi_tpch_run.sh REDFOX TESTS_DIR WORK_DIR: `redfox tpch run` on
# several ranks (issue 22): the 22 queries at SF 0.01 from a database, one
# process and 2 and 3 CPU ranks started by the user's mpirun, and 2 emulated
# GPU ranks started by `--gpus 2` itself (six queries): every --out file byte for byte one
# process's, the table of times printed once (by rank 0), and the misuses
# refused: --gpus beside --device cpu, --gpus 3 under an mpirun of 2 ranks.
# Skipped (77) where mpirun is missing or redfox was built without MPI.
set -u
redfox=$1
tests=$2
work=$3
mkdir -p "$work"
tmp=$work/tmp.$$
. "$tests/mpi_env.sh"
"$redfox" tpch gen --sf 0.01 --format db --out "$tmp/db" >/dev/null 2>&1 || { fail "tpch gen"; exit 1; }
"$redfox" tpch run --data "$tmp/db" --device cpu --out "$tmp/one" >"$tmp/one.txt" 2>"$tmp/one.err" ||
    { fail "one process"; cat "$tmp/one.err"; }
[ "$(ls "$tmp/one" | grep -c '^q[0-9][0-9]\.csv$')" = 22 ] || fail "one process wrote $(ls "$tmp/one" | wc -l) files, not 22"
# same NAME N: NAME's --out folder holds N files, each the one process's
same() {
    [ "$(ls "$tmp/$1" 2>/dev/null | grep -c '^q[0-9][0-9]\.csv$')" = $2 ] || fail "$1: not $2 files written"
    for f in "$tmp/$1"/q*.csv; do
        cmp -s "$f" "$tmp/one/$(basename "$f")" || { fail "$1: $(basename "$f") differs from one process"; return; }
    done
}
for np in 2 3; do
    $mpi $np "$redfox" tpch run --data "$tmp/db" --device cpu --out "$tmp/cpu$np" --set rank_timeout_s=120 \
        >"$tmp/cpu$np.txt" 2>"$tmp/cpu$np.err" || { fail "$np CPU ranks"; cat "$tmp/cpu$np.err"; }
    same cpu$np 22
    [ "$(grep -c '^total ' "$tmp/cpu$np.txt")" = 1 ] || fail "$np CPU ranks: the table printed $(grep -c '^total ' "$tmp/cpu$np.txt") times, not once"
done
# (six queries: the emulator's ranks are slow on CI's two cores)
RF_GPU_EMULATE=1 "$redfox" tpch run --data "$tmp/db" --gpus 2 --queries 1,3,6,10,13,18 --out "$tmp/gpu2" --set rank_timeout_s=120 \
    --profile >"$tmp/gpu2.txt" 2>"$tmp/gpu2.err" || { fail "--gpus 2 (emulated)"; cat "$tmp/gpu2.err"; }
# a rank's work is its run less its waits and the run's moves, not the
# load's, which distribute the inputs read from text: never negative, nor
# its rest (from a database each rank reads its share and moves nothing)
"$redfox" tpch gen --sf 0.01 --out "$tmp/text" >/dev/null 2>&1 || fail "tpch gen (text)"
RF_GPU_EMULATE=1 "$redfox" tpch run --data "$tmp/text" --gpus 2 --queries 1,3 --set rank_timeout_s=120 --profile \
    >"$tmp/text2.txt" 2>"$tmp/text2.err" || { fail "--gpus 2 (emulated) from text"; cat "$tmp/text2.err"; }
for e in gpu2 text2; do
    grep -q "^rank 1 of 2: work " "$tmp/$e.err" || fail "$e: --gpus 2 --profile: no rank's work line"
    if grep -E "work -|the rest -[0-9]*\.[0-9]*[1-9]" "$tmp/$e.err"; then fail "$e: --gpus 2 --profile: a rank's work is negative"; fi
done
same gpu2 6
[ "$(grep -c ' gpu ' "$tmp/gpu2.txt")" = 6 ] || fail "--gpus 2: not every query ran on the GPU"
"$redfox" tpch run --data "$tmp/db" --gpus 2 --device cpu >"$tmp/mis.txt" 2>&1 && fail "--gpus 2 --device cpu accepted"
grep -q "takes no --device cpu" "$tmp/mis.txt" || { fail "--gpus with --device cpu: no clear message"; cat "$tmp/mis.txt"; }
RF_GPU_EMULATE=1 $mpi 2 "$redfox" tpch run --data "$tmp/db" --gpus 3 --queries 6 >"$tmp/mis3.txt" 2>&1 &&
    fail "--gpus 3 under 2 ranks accepted"
grep -q "gpus 3, but mpirun started 2 ranks" "$tmp/mis3.txt" || { fail "--gpus 3 under 2 ranks: no clear message"; cat "$tmp/mis3.txt"; }
[ $fails = 0 ] || exit 1
echo "mpi_tpch_run: all passed"
