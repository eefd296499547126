# tests/mpi_env.sh: the setup the run_mpi*.sh tests share, sourced once they
# have set redfox, tests, tmp (a scratch folder, made here and removed at
# exit) and optionally dev (the probe's device, cpu by default).
# Owns: skipping (77) where mpirun is missing or redfox was built without
# MPI; Open MPI allowed to run as root and to oversubscribe (CI containers
# run as root, and 2 cores hold 3 ranks); sanitizer builds told that Open
# MPI's own allocations live until exit (tests/lsan_mpi.supp), with full
# unwinding so that a suppression matches only stacks through its
# libraries; and mpi ("mpirun ... -np"), fails and fail() for the test.
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$tests/lsan_mpi.supp"
mpi="mpirun --oversubscribe -np"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
if ! $mpi 2 "$redfox" run "$tests/e2e/tc.logic" --data "$tests/e2e/data" --device "${dev:-cpu}" >/dev/null 2>"$tmp/probe.err"; then
    if grep -q "built without MPI" "$tmp/probe.err"; then echo "SKIP: redfox built without MPI"; exit 77; fi
    echo "FAIL: mpirun -np 2 redfox run tc.logic"; cat "$tmp/probe.err"; exit 1
fi
