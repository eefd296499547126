#!/bin/sh
# tests/run_db_like.sh REDFOX TESTS: a string column that a program reads
# only through string:like with constant patterns (tests/e2e/like_only_db.logic's
# note.body), from a database whose strings are plain: read as one
# representative string per class of rows (runtime/rt_db_like.c). The
# outputs must be the text run's byte for byte on the CPU (1 and 3 threads)
# and in the GPU emulator (twice in one process: the second run finds the
# classes read), and the dictionary must hold few strings: the 300 rows'
# bodies are not interned (the emulator's profile says how many it holds).
set -u
redfox=$1
tests=$2
prog=$tests/e2e/like_only_db.logic
data=$tests/e2e/data
tmp=${TMPDIR:-/tmp}/rf_db_like.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
"$redfox" run "$prog" --data "$data" --device cpu --format tbl >"$tmp/text" 2>"$tmp/text.err" || {
    echo "FAIL: the text run failed"; cat "$tmp/text.err"; exit 1; }
if ! cmp -s "$tmp/text" "$tests/e2e/like_only_db.expected"; then echo "FAIL: the text run differs from the expected output"; exit 1; fi
"$redfox" import "$prog" --data "$data" --out "$tmp/db" --block-rows 8 --strings plain >/dev/null 2>"$tmp/import.err" || {
    echo "FAIL: the import failed"; cat "$tmp/import.err"; exit 1; }
for t in 1 3; do
    "$redfox" run "$prog" --data "$tmp/db" --device cpu --format tbl --threads $t >"$tmp/cpu$t" 2>"$tmp/cpu$t.err" || {
        echo "FAIL: the CPU run from the database failed (threads $t)"; cat "$tmp/cpu$t.err"; exit 1; }
    if ! cmp -s "$tmp/text" "$tmp/cpu$t"; then
        echo "FAIL: the CPU's output from the database differs (threads $t)"; diff "$tmp/text" "$tmp/cpu$t" | head; exit 1; fi
done
RF_GPU_EMULATE=1 "$redfox" run "$prog" --data "$tmp/db" --device gpu --format tbl --profile --repeat 2 >"$tmp/emu" 2>"$tmp/emu.err" || {
    echo "FAIL: the emulated run from the database failed"; cat "$tmp/emu.err"; exit 1; }
if ! cmp -s "$tmp/text" "$tmp/emu"; then echo "FAIL: the emulator's output from the database differs"; diff "$tmp/text" "$tmp/emu" | head; exit 1; fi
n=$(sed -n 's/^gpu dictionary: .* it holds \([0-9]*\) strings$/\1/p' "$tmp/emu.err" | tail -1)
if [ -z "$n" ]; then echo "FAIL: no dictionary line in the profile"; cat "$tmp/emu.err"; exit 1; fi
# 5 + 4 strings of grp and label, a constant or two, at most 2^5 classes
if [ "$n" -gt 48 ]; then echo "FAIL: the dictionary holds $n strings: the bodies were interned one by one"; exit 1; fi
# with a dictionary in the file (not plain), the column is read as before
"$redfox" import "$prog" --data "$data" --out "$tmp/dictdb" --block-rows 8 >/dev/null 2>"$tmp/import2.err" || {
    echo "FAIL: the import with dictionaries failed"; cat "$tmp/import2.err"; exit 1; }
RF_GPU_EMULATE=1 "$redfox" run "$prog" --data "$tmp/dictdb" --device gpu --format tbl >"$tmp/emu2" 2>"$tmp/emu2.err" || {
    echo "FAIL: the emulated run from the dictionary database failed"; cat "$tmp/emu2.err"; exit 1; }
if ! cmp -s "$tmp/text" "$tmp/emu2"; then echo "FAIL: the emulator's output from the dictionary database differs"; exit 1; fi
echo "ok: LIKE-only strings from the database as classes ($n strings in the dictionary), outputs as from text"
