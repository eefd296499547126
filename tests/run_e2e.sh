#!/bin/sh
# tests/run_e2e.sh REDFOX PROG.logic: compiles the program to a .rfx file,
# runs the .rfx with --device cpu on tests/e2e/data, and compares the tbl
# output with PROG.expected. A program whose first line is
# "// expect-error: TEXT" must instead fail with exit status 1 and print TEXT.
# "// args: ..." adds options to `redfox run`. "// expect-from: SCRIPT.py":
# the expected output is what `python3 DIR/SCRIPT.py DIR/data` prints, computed
# from the data (no PROG.expected). RF_UPDATE_GOLDEN=1 rewrites PROG.expected
# (review the diff).
set -u
redfox=$1
prog=$2
dir=$(dirname "$prog")
name=$(basename "$prog" .logic)
tmp=${TMPDIR:-/tmp}/rf_e2e.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
args=$(sed -n 's|^// args: ||p' "$prog")
experr=$(sed -n 's|^// expect-error: ||p' "$prog")
expfrom=$(sed -n 's|^// expect-from: ||p' "$prog")
expected=$dir/$name.expected
if [ -n "$expfrom" ]; then
    expected=$tmp/expected
    python3 -B "$dir/$expfrom" "$dir/data" >"$expected" || { echo "FAIL: $expfrom"; exit 1; }
fi
"$redfox" compile "$prog" -o "$tmp/$name.rfx" 2>"$tmp/compile.err"
rc=$?
if [ $rc -ne 0 ]; then
    echo "FAIL: compile exited $rc"; cat "$tmp/compile.err"; exit 1
fi
# shellcheck disable=SC2086
"$redfox" run "$tmp/$name.rfx" --data "$dir/data" --device cpu --format tbl $args >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ -n "$experr" ]; then
    if [ $rc -ne 1 ]; then echo "FAIL: exit $rc, expected 1"; cat "$tmp/err"; exit 1; fi
    if ! grep -qF -- "$experr" "$tmp/err"; then echo "FAIL: stderr lacks: $experr"; cat "$tmp/err"; exit 1; fi
    exit 0
fi
if [ $rc -ne 0 ]; then echo "FAIL: run exited $rc"; cat "$tmp/err"; exit 1; fi
# the same result with one thread and from the source directly (determinism)
"$redfox" run "$prog" --data "$dir/data" --device cpu --format tbl --threads 1 $args >"$tmp/out1" 2>/dev/null
if ! cmp -s "$tmp/out" "$tmp/out1"; then echo "FAIL: output differs between --threads 1 and the default"; diff "$tmp/out" "$tmp/out1" | head; exit 1; fi
if [ "${RF_UPDATE_GOLDEN:-0}" = 1 ] && [ -z "$expfrom" ]; then cp "$tmp/out" "$dir/$name.expected"; echo "updated $dir/$name.expected"; exit 0; fi
if ! diff -u "$expected" "$tmp/out"; then echo "FAIL: output differs from $(basename "$expected")"; exit 1; fi
