#!/bin/sh
# api/tests/run_world.sh PROG DATA SUPP APP...: an application on the public
# API (APP..., a command: a C program, or python3 and a script) run by
# `mpirun -np 2` (rf_world_mpi, rf_run_options.world) prints the outputs
# one process prints, byte for byte. The application takes RANKS PROG DATA.
# Skipped (77) where mpirun is missing or redfox was built without MPI.
set -u
prog=$1 data=$2 supp=$3
shift 3
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# sanitizer builds: Open MPI's own allocations live until exit
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$supp"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$@" 1 "$prog" "$data" > "$tmp/one" || { echo "FAIL: one process"; exit 1; }
[ -s "$tmp/one" ] || { echo "FAIL: one process printed nothing"; exit 1; }
if ! mpirun --oversubscribe -np 2 "$@" 2 "$prog" "$data" > "$tmp/two" 2> "$tmp/err"; then
    if grep -q "built without MPI" "$tmp/err"; then echo "SKIP: redfox built without MPI"; exit 77; fi
    echo "FAIL: mpirun -np 2"; cat "$tmp/err"; exit 1
fi
cmp -s "$tmp/one" "$tmp/two" || { echo "FAIL: two ranks differ from one process"; diff "$tmp/one" "$tmp/two" | head; exit 1; }
echo "ok: $(wc -l < "$tmp/one") lines alike on 1 and 2 ranks"
