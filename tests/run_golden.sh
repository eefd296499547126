#!/bin/sh
# tests/run_golden.sh REDFOX EXPECTED DUMPARGS... : runs `redfox dump DUMPARGS`
# in the program's folder (so paths in the output are plain file names) and
# compares stdout with the EXPECTED file. With RF_UPDATE_GOLDEN=1 it rewrites
# EXPECTED instead: review the diff before committing it.
redfox=$1
expected=$2
shift 2
what=$1
prog=$2
shift 2
cd "$(dirname "$prog")" || exit 1
out=$("$redfox" dump "$what" "$(basename "$prog")" "$@")
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "FAIL: redfox dump exited with $rc"
    exit 1
fi
if [ "${RF_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$out" > "$expected"
    echo "updated $expected"
    exit 0
fi
if ! printf '%s\n' "$out" | diff -u "$expected" - ; then
    echo "FAIL: output differs from $expected (RF_UPDATE_GOLDEN=1 rewrites it)"
    exit 1
fi
