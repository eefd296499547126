#!/bin/sh
# tests/run_agg_programs.sh REDFOX TESTS: aggregation's meaning on random
# programs (tests/random/aggprog.py: several aggregates a rule over every
# type, `_` in atoms and functional atoms, negation and disjunctions of atoms
# inside aggregates' bodies, constants in heads, two rules for one head),
# each against the script's own evaluator: on the CPU, with the optimisation
# switches, and on the GPU emulator.
redfox=$1
tests=$2
py=${PYTHON3:-python3}
command -v "$py" >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
fail=0
"$py" "$tests/random/aggprog.py" "$redfox" 0:30 cpu,nofuse,flag:--no-partagg:--no-exists:--no-lftj:--no-hoist:--no-keyjoin || fail=1
"$py" "$tests/random/aggprog.py" "$redfox" 0:8 gpu,gpunofuse || fail=1
exit $fail
