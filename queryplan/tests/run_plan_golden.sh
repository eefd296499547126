#!/bin/sh
# queryplan/tests/run_plan_golden.sh REDFOX EXPECTED PROG [ARGS...]: runs
# `redfox dump --plan PROG ARGS` in the program's folder and compares stdout
# with EXPECTED. With RF_UPDATE_GOLDEN=1 it rewrites EXPECTED instead (review
# the diff before committing it).
redfox=$1
expected=$2
prog=$3
shift 3
cd "$(dirname "$prog")" || exit 1
out=$("$redfox" dump --plan "$(basename "$prog")" "$@")
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "FAIL: redfox dump --plan exited with $rc"
    exit 1
fi
if [ "${RF_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$out" > "$expected"
    echo "updated $expected"
    exit 0
fi
if ! printf '%s\n' "$out" | diff -u "$expected" - ; then
    echo "FAIL: the plan differs from $expected (RF_UPDATE_GOLDEN=1 rewrites it)"
    exit 1
fi
