#!/bin/sh
# runtime/gpu/run_e2e_cli.sh REDFOX PROG.logic: an end-to-end program
# through the command line on the GPU: `redfox compile` (the .rfx carries
# the PTX0 section), `redfox run --device gpu --format tbl`, compared with
# PROG.expected; "// expect-error: TEXT" programs must exit 1 with TEXT.
# Exit 77 where there is no usable GPU.
set -u
redfox=$1
prog=$2
dir=$(dirname "$prog")
name=$(basename "$prog" .logic)
tmp=${TMPDIR:-/tmp}/rf_gpu_cli_e2e.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
args=$(sed -n 's|^// args: ||p' "$prog")
experr=$(sed -n 's|^// expect-error: ||p' "$prog")
# "// expect-from: SCRIPT.py": the expected output computed from the data
# (tests/run_e2e.sh)
expfrom=$(sed -n 's|^// expect-from: ||p' "$prog")
expected=$dir/$name.expected
if [ -n "$expfrom" ]; then
    expected=$tmp/expected
    python3 -B "$dir/$expfrom" "$dir/data" >"$expected" || { echo "FAIL: $expfrom"; exit 1; }
fi
if ! "$redfox" compile "$prog" -o "$tmp/$name.rfx" 2>"$tmp/compile.err"; then
    echo "FAIL: compile"; cat "$tmp/compile.err"; exit 1
fi
# shellcheck disable=SC2086
"$redfox" run "$tmp/$name.rfx" --data "$dir/data" --device gpu --format tbl $args >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -q "no usable GPU\|no GPU backend" "$tmp/err"; then echo "SKIP: $(head -n 1 "$tmp/err")"; exit 77; fi
if [ -n "$experr" ]; then
    if [ $rc -ne 1 ]; then echo "FAIL: exit $rc, expected 1"; cat "$tmp/err"; exit 1; fi
    if ! grep -qF -- "$experr" "$tmp/err"; then echo "FAIL: stderr lacks: $experr"; cat "$tmp/err"; exit 1; fi
    exit 0
fi
if [ $rc -ne 0 ]; then echo "FAIL: run exited $rc"; cat "$tmp/err"; exit 1; fi
if ! diff -u "$expected" "$tmp/out"; then echo "FAIL: output differs from $(basename "$expected")"; exit 1; fi
