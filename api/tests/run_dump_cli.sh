#!/bin/sh
# api/tests/run_dump_cli.sh REDFOX: `redfox dump` (on rf_program_dump) of a
# program with an error prints the error with its place, exit 1, for every
# form that checks the program; --ast, which only parses, prints the tree.
set -u
r=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'p(x) -> int(x).\np(x) <- q(x).\nlang:output[`p] = "p".\n' > "$tmp/bad.logic"
fail=0
for what in rules plan harmony fused cuda; do
    "$r" dump --$what "$tmp/bad.logic" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    if [ $rc -ne 1 ] || ! grep -q "bad.logic:2:9: error: undefined predicate" "$tmp/err" || [ -s "$tmp/out" ]; then
        echo "FAIL: dump --$what of an undefined predicate: exit $rc"; cat "$tmp/err"; fail=1
    fi
done
"$r" dump --ast "$tmp/bad.logic" > "$tmp/out" 2> "$tmp/err" && grep -q "atom 2:9 q(x)" "$tmp/out" ||
    { echo "FAIL: dump --ast of a program with a type error"; cat "$tmp/err"; fail=1; }
[ $fail -eq 0 ] && echo ok
exit $fail
