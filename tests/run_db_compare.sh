#!/bin/sh
# tests/run_db_compare.sh REDFOX DEVICE DATA PROG.logic [PROG2.logic]: the
# text -> database -> output round trip. Runs the program on the text folder
# DATA (--device cpu), imports DATA into a database with the same program,
# runs it from the database on DEVICE (cpu, or emu: the GPU emulator), and
# requires the same exit status, the same stdout byte for byte, and the same
# stderr (less notes). The import writes blocks of 8 rows, so that range
# filters skip blocks (rt_db_blocks.c) in small data too. Where the text run fails on bad data or a broken key,
# the import must fail with the same first error instead. "// args: ..." in
# the program adds options to both runs. DEVICE cpu+plain or emu+plain
# imports with --strings plain (every string column without a dictionary).
set -u
redfox=$1
device=$2
data=$3
shift 3
strings=auto
case "$device" in
*+plain) device=${device%+plain}; strings=plain ;;
esac
if [ ! -d "$data" ]; then echo "skipped: no data folder $data"; exit 77; fi
last=""
for p in "$@"; do last=$p; done
tmp=${TMPDIR:-/tmp}/rf_db_cmp.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
args=$(sed -n 's|^// args: ||p' "$last")
# shellcheck disable=SC2086
"$redfox" run "$@" --data "$data" --device cpu --format csv $args >"$tmp/out.text" 2>"$tmp/err.text"
rc_text=$?
"$redfox" import "$@" --data "$data" --out "$tmp/db" --block-rows 8 --strings "$strings" >"$tmp/out.import" 2>"$tmp/err.import"
rc_import=$?
if [ $rc_import -ne 0 ]; then
    first=$(grep -m 1 "error:" "$tmp/err.text")
    if [ $rc_text -ne 1 ] || [ $rc_import -ne 1 ] || [ -z "$first" ] || ! grep -qF -- "$first" "$tmp/err.import"; then
        echo "FAIL: import exited $rc_import, the text run $rc_text"; cat "$tmp/err.import"; echo "--- text run:"; cat "$tmp/err.text"; exit 1
    fi
    if ls "$tmp"/db* >/dev/null 2>&1; then echo "FAIL: a failed import left files:"; ls -d "$tmp"/db*; exit 1; fi
    echo "ok: the import refuses the data as the text run does: $first"
    exit 0
fi
if [ "$device" = emu ]; then
    # shellcheck disable=SC2086
    RF_GPU_EMULATE=1 "$redfox" run "$@" --data "$tmp/db" --device gpu --format csv $args >"$tmp/out.db" 2>"$tmp/err.db"
else
    # shellcheck disable=SC2086
    "$redfox" run "$@" --data "$tmp/db" --device cpu --format csv $args >"$tmp/out.db" 2>"$tmp/err.db"
fi
rc_db=$?
if [ $rc_db -ne $rc_text ]; then
    echo "FAIL: exit $rc_db from the database, $rc_text from text"; cat "$tmp/err.db"; echo "--- text run:"; cat "$tmp/err.text"; exit 1
fi
if ! cmp -s "$tmp/out.text" "$tmp/out.db"; then
    echo "FAIL: output from the database differs from text"; diff "$tmp/out.text" "$tmp/out.db" | head -20; exit 1
fi
grep -v ": note: \|^==[0-9]*==WARNING: ASan" "$tmp/err.text" >"$tmp/e1"
grep -v ": note: \|^==[0-9]*==WARNING: ASan" "$tmp/err.db" >"$tmp/e2"
if ! cmp -s "$tmp/e1" "$tmp/e2"; then
    echo "FAIL: messages differ"; diff "$tmp/e1" "$tmp/e2" | head -20; exit 1
fi
echo "ok: identical from text and from the database (exit $rc_text, $(wc -c <"$tmp/out.db") bytes)"
