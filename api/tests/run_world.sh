#!/bin/sh
# api/tests/run_world.sh TEST_API_WORLD PROG DATA SUPP: an application on the
# public API run by `mpirun -np 2` (rf_world_mpi, rf_run_options.world)
# prints the outputs one process prints, byte for byte. Skipped (77) where
# mpirun is missing or redfox was built without MPI.
set -u
t=$1 prog=$2 data=$3 supp=$4
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# sanitizer builds: Open MPI's own allocations live until exit
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$supp"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$t" 1 "$prog" "$data" > "$tmp/one" || { echo "FAIL: one process"; exit 1; }
[ -s "$tmp/one" ] || { echo "FAIL: one process printed nothing"; exit 1; }
if ! mpirun --oversubscribe -np 2 "$t" 2 "$prog" "$data" > "$tmp/two" 2> "$tmp/err"; then
    if grep -q "built without MPI" "$tmp/err"; then echo "SKIP: redfox built without MPI"; exit 77; fi
    echo "FAIL: mpirun -np 2"; cat "$tmp/err"; exit 1
fi
cmp -s "$tmp/one" "$tmp/two" || { echo "FAIL: two ranks differ from one process"; diff "$tmp/one" "$tmp/two" | head; exit 1; }
echo "ok: $(wc -l < "$tmp/one") lines alike on 1 and 2 ranks"
