#!/bin/sh
# api/tests/run_barrier.sh SUPP APP: rf_world_barrier with a rank that comes
# late (api/tests/test_api_barrier.c) under `mpirun -np 2`: mpirun ends within
# 60 s (no hang), non-zero (rf_world_end aborts the broken world), and rank 0
# printed that its barrier timed out, naming it, with every check held.
# Skipped (77) where mpirun is missing or redfox was built without MPI.
set -u
supp=$1
shift
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$supp"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
timeout 60 mpirun --oversubscribe -np 2 "$@" > out 2> err
rc=$?
if grep -q "built without MPI" err; then echo "SKIP: redfox built without MPI"; exit 77; fi
[ $rc -eq 124 ] && { echo "FAIL: mpirun still ran after 60 s (a hang)"; cat out err; exit 1; }
[ $rc -eq 0 ] && { echo "FAIL: mpirun exited 0; the broken world should abort"; cat out err; exit 1; }
grep -q "^rank 0: barrier 1: .*barrier" out || { echo "FAIL: rank 0 did not report the barrier's timeout"; cat out err; exit 1; }
grep -q "^rank 0: 0 checks failed" out || { echo "FAIL: rank 0's checks"; cat out err; exit 1; }
if grep -q "checks failed" err; then echo "FAIL: a rank's checks"; cat err; exit 1; fi
echo "ok: $(grep '^rank 0: barrier' out)"
