#!/bin/sh
# tests/run_rfx_bad.sh REDFOX PROG.logic: damaged .rfx files must be refused
# with a clear message and exit status 1, never a crash: every truncation
# length in steps, single-byte corruptions across the file, a newer format
# version, and a file that is not an .rfx at all.
set -u
redfox=$1
prog=$2
tmp=${TMPDIR:-/tmp}/rf_rfxbad.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
"$redfox" compile "$prog" -o "$tmp/good.rfx" || { echo "FAIL: compile"; exit 1; }
size=$(wc -c < "$tmp/good.rfx")
fail=0
expect_refused() { # file description
    "$redfox" run "$1" --device cpu --data "$(dirname "$prog")/data" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 1 ] || ! grep -q "error" "$tmp/err"; then
        echo "FAIL: $2: exit $rc"; cat "$tmp/err"; fail=1
    fi
}
step=$((size / 40 + 1))
n=0
while [ $n -lt "$size" ]; do
    head -c $n "$tmp/good.rfx" > "$tmp/t.rfx"
    expect_refused "$tmp/t.rfx" "truncated to $n bytes"
    n=$((n + step))
done
n=0
while [ $n -lt "$size" ]; do
    cp "$tmp/good.rfx" "$tmp/c.rfx"
    # flip every bit of one byte
    b=$(od -An -tu1 -j $n -N1 "$tmp/good.rfx" | tr -d ' ')
    printf "$(printf '\\%03o' $((255 - b)))" | dd of="$tmp/c.rfx" bs=1 seek=$n conv=notrunc 2>/dev/null
    expect_refused "$tmp/c.rfx" "byte $n corrupted"
    n=$((n + step))
done
cp "$tmp/good.rfx" "$tmp/v.rfx"
printf '\143' | dd of="$tmp/v.rfx" bs=1 seek=8 conv=notrunc 2>/dev/null   # major version 99
expect_refused "$tmp/v.rfx" "newer major version"
grep -q "newer" "$tmp/err" || { echo "FAIL: the version message does not say newer"; cat "$tmp/err"; fail=1; }
printf 'edge(1, 2).\n' > "$tmp/f.rfx"
expect_refused "$tmp/f.rfx" "not an .rfx file"
exit $fail
