#!/bin/sh
# tests/run_join_programs.sh REDFOX TESTS: the planner's join and recursion
# shapes on random int programs (tests/random/joinprog.py: cyclic bodies,
# constants and repeated variables in atoms, key joins on computed values,
# mutual and non-linear recursion, negation of recursive predicates,
# negated conjunctions, disjunctions, aggregates with groups and `_`,
# recursive min and max, functional predicates and their clashes). For a
# fixed set of seeds: redfox --device cpu against the script's own
# evaluator, and the switches (--no-fuse, --no-lftj, --no-hoist,
# --no-keyjoin, --no-exists, --no-partagg), --threads 1 and recursion in
# parts of one pair against the CPU run, byte for byte; one seed on the GPU
# emulator (its plain run).
redfox=$1
tests=$2
py=${PYTHON3:-python3}
command -v "$py" >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rf_joinprog.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
"$py" "$tests/random/joinprog.py" check "$redfox" --seeds 0:30 --keep "$tmp/cpu" || fail=1
"$py" "$tests/random/joinprog.py" check "$redfox" --seeds 30:31 --gpu1 --gpu-only \
    --keep "$tmp/gpu" || fail=1
[ $fail -eq 0 ] && echo "join programs: all agree"
exit $fail
