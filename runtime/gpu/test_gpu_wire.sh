#!/bin/sh
# runtime/gpu/test_gpu_wire.sh REDFOX SF001_TEXT: narrow copies end to end.
# The 22 TPC-H queries from a database (SF 0.01, imported from the text
# folder) on the emulated GPU, with narrow copies (the default) and without
# (--no-narrow-copy): outputs identical to each other and to the CPU's.
# --profile's copy: for q06 fewer bytes on the wire than bytes of the columns
# (and the rate reckoned on the wire's), with --no-narrow-copy the same
# number. Exit 77 where the data is absent.
set -u
redfox=$1
data=$2
if [ ! -d "$data" ]; then echo "skipped: no data folder $data"; exit 77; fi
q=$(dirname "$0")/../../tpch/queries
tmp=${TMPDIR:-/tmp}/rf_gpu_wire.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
"$redfox" import "$q/schema.logic" --data "$data" --out "$tmp/db" >/dev/null 2>"$tmp/import.err" || {
    echo "FAIL: the import failed"; cat "$tmp/import.err"; exit 1; }
fail=0
for n in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22; do
    p="$q/schema.logic $q/q$n.logic"
    # shellcheck disable=SC2086
    "$redfox" run $p --data "$tmp/db" --device cpu --format csv >"$tmp/cpu" 2>"$tmp/cpu.err" || {
        echo "FAIL: q$n on the CPU"; cat "$tmp/cpu.err"; fail=1; continue; }
    for mode in narrow plain; do
        opt=""
        [ $mode = plain ] && opt=--no-narrow-copy
        # shellcheck disable=SC2086
        RF_GPU_EMULATE=1 "$redfox" run $p --data "$tmp/db" --device gpu --format csv --profile $opt \
            >"$tmp/$mode" 2>"$tmp/$mode.err" || { echo "FAIL: q$n $mode on the emulator"; cat "$tmp/$mode.err"; fail=1; continue; }
        cmp -s "$tmp/cpu" "$tmp/$mode" || { echo "FAIL: q$n $mode: another output than the CPU's"; diff "$tmp/cpu" "$tmp/$mode" | head; fail=1; }
        sed -n 's/^phases: .*copy [0-9.]* ms (\([0-9]*\) bytes to the device, \([0-9]*\) on the wire, .*/\1 \2/p' \
            "$tmp/$mode.err" >"$tmp/$mode.bytes"
    done
    read -r cols wire <"$tmp/narrow.bytes" || { echo "FAIL: q$n: no copy in the profile"; cat "$tmp/narrow.err"; fail=1; continue; }
    read -r pcols pwire <"$tmp/plain.bytes" || { echo "FAIL: q$n: no copy in the plain profile"; fail=1; continue; }
    [ "$pcols" = "$pwire" ] && [ "$pcols" = "$cols" ] || {
        echo "FAIL: q$n --no-narrow-copy: $pcols bytes of columns, $pwire on the wire (narrow: $cols)"; fail=1; }
    [ "$wire" -le "$cols" ] || { echo "FAIL: q$n: $wire bytes on the wire, more than the columns' $cols"; fail=1; }
    if [ $n = 06 ]; then
        # l_quantity, l_extendedprice, l_discount, l_shipdate: 28 bytes a row, about 8 narrow
        [ $((wire * 3)) -lt "$cols" ] || { echo "FAIL: q06: $wire bytes on the wire of $cols, not under a third"; fail=1; }
        echo "q06: $cols bytes of columns, $wire on the wire"
    fi
done
[ $fail = 0 ] && echo "ok: 22 queries identical with and without narrow copies"
exit $fail
