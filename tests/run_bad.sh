#!/bin/sh
# tests/run_bad.sh REDFOX FILE.logic: compiles a program that must be rejected.
# Every "// expect: LINE:COL: MESSAGE" line at the top of the file must appear
# as "FILE:LINE:COL: error: MESSAGE..." on stderr, and the exit status must be 1.
# "// expect-line: TEXT": a line of stderr is exactly TEXT; "// expect-errors:
# N": exactly N error lines (no echoes of the errors expected).
redfox=$1
file=$2
dir=$(dirname "$file")
base=$(basename "$file")
cd "$dir" || exit 1
err=$("$redfox" compile "$base" 2>&1 >/dev/null)
rc=$?
fail=0
if [ "$rc" -ne 1 ]; then
    echo "FAIL: exit status $rc, expected 1"
    fail=1
fi
grep '^// expect: ' "$base" | sed 's|^// expect: ||' > "${TMPDIR:-/tmp}/rf_expect.$$"
while IFS= read -r exp; do
    if ! printf '%s\n' "$err" | grep -qF -- "$base:${exp%%: *}: error: ${exp#*: }"; then
        echo "FAIL: missing diagnostic: $base:${exp%%: *}: error: ${exp#*: }"
        fail=1
    fi
done < "${TMPDIR:-/tmp}/rf_expect.$$"
grep '^// expect-line: ' "$base" | sed 's|^// expect-line: ||' > "${TMPDIR:-/tmp}/rf_expect.$$"
while IFS= read -r exp; do
    if ! printf '%s\n' "$err" | grep -qxF -- "$exp"; then
        echo "FAIL: missing line: $exp"
        fail=1
    fi
done < "${TMPDIR:-/tmp}/rf_expect.$$"
rm -f "${TMPDIR:-/tmp}/rf_expect.$$"
nexp=$(sed -n 's|^// expect-errors: ||p' "$base")
if [ -n "$nexp" ]; then
    n=$(printf '%s\n' "$err" | grep -c ': error: ')
    if [ "$n" -ne "$nexp" ]; then
        echo "FAIL: $n errors, expected $nexp"
        fail=1
    fi
fi
if [ "$fail" -ne 0 ]; then
    echo "--- stderr was:"
    printf '%s\n' "$err"
fi
exit $fail
