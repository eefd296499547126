#!/bin/sh
# tests/run_random_programs.sh REDFOX TESTS: the meaning of LogiQL checked on
# random programs (tests/random/randprog.py: a seeded generator of small
# programs with their inputs, and an independent evaluator of docs/LANGUAGE.md's
# meaning). For a fixed set of seeds: redfox --device cpu against the
# evaluator; the optimisation switches and an imported database against the
# CPU run, byte for byte; a few seeds on the GPU emulator against the CPU.
# Then the programs the random runs found wrong once (tests/random/cases), each
# with its expected exit status and message, on the CPU and the emulator.
redfox=$1
tests=$2
py=${PYTHON3:-python3}
command -v "$py" >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rf_randprog.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
"$py" "$tests/random/randprog.py" check "$redfox" --seeds 0:60 \
    --switch --no-fuse --switch --no-lftj --switch --no-exists --switch --no-partagg --switch --no-hoist --switch --no-keyjoin \
    --db --keep "$tmp/cpu" || fail=1
# inputs of hundreds of rows, which take other paths (hash tables, sorted runs)
RANDPROG_BIGDATA=1 "$py" "$tests/random/randprog.py" check "$redfox" --seeds 0:20 \
    --switch --no-fuse --db --keep "$tmp/big" || fail=1
"$py" "$tests/random/randprog.py" check "$redfox" --seeds 0:4 --gpu \
    --keep "$tmp/gpu" || fail=1
"$py" "$tests/random/randprog.py" cases "$redfox" "$tests/random/cases" "$tmp/cases" || fail=1
[ $fail -eq 0 ] && echo "random programs: all agree"
exit $fail
