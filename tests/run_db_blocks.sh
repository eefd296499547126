#!/bin/sh
# tests/run_db_blocks.sh REDFOX: block skipping from a database. Writes 5,000
# rows ordered by day, imports them with 128-row blocks, and runs each
# program of tests/db_blocks from the text (CPU), and from the database on
# the CPU and in the GPU emulator, with block skipping on and off
# (`--set block_skip=off`): every output and message must be the text run's,
# byte for byte, and `--profile` must count the blocks skipped: some for
# range.logic, two.logic and empty.logic (all of them), none for
# unbounded.logic and none with block_skip=off; in the emulator, the bytes
# copied to the device must be those of the columns read and blocks kept.
# Skipped blocks are not read: a damaged block that range.logic skips stops
# no run that skips it, and is refused (file and block named) with
# block_skip=off. The same with the tag column stored plain (--strings plain).
set -u
redfox=$1
dir=$(dirname "$0")/db_blocks
tmp=${TMPDIR:-/tmp}/rf_db_blocks.$$
mkdir -p "$tmp/text"
trap 'rm -rf "$tmp"' EXIT
fail=0
# id | day (28-day months from 2000-01-01, five rows a day) | amount | tag | w
awk 'BEGIN { for (i = 0; i < 5000; i++) { d = int(i / 5); y = 2000 + int(d / 336); m = int(d / 28) % 12 + 1;
             printf "%d|%04d-%02d-%02d|%d.%02d|t%d|%.1f|\n", i, y, m, d % 28 + 1, (i * 37) % 10, (i * 11) % 100, i % 7, i * 0.1 } }' \
    >"$tmp/text/events.tbl"
"$redfox" import "$dir/schema.logic" --data "$tmp/text" --out "$tmp/db" --block-rows 128 >/dev/null 2>&1 ||
    { echo "FAIL: import"; exit 1; }
skipped() { sed -n 's/^database: \([0-9]*\) of \([0-9]*\) blocks skipped.*/\1 \2/p' "$1"; }
for p in range two unbounded empty error; do
    prog="$dir/$p.logic"
    "$redfox" run "$dir/schema.logic" "$prog" --data "$tmp/text" --device cpu --format csv >"$tmp/want" 2>"$tmp/want.err"
    rc=$?
    grep -v ": note: \|^==[0-9]*==WARNING: ASan" "$tmp/want.err" >"$tmp/want.msg"
    for dev in cpu emu; do
        for skip in on off; do
            if [ $dev = emu ]; then
                RF_GPU_EMULATE=1 "$redfox" run "$dir/schema.logic" "$prog" --data "$tmp/db" --device gpu --format csv \
                    --set block_skip=$skip --profile >"$tmp/got" 2>"$tmp/got.err"
            else
                "$redfox" run "$dir/schema.logic" "$prog" --data "$tmp/db" --device cpu --format csv \
                    --set block_skip=$skip --profile >"$tmp/got" 2>"$tmp/got.err"
            fi
            got_rc=$?
            h2d=
            what="$p ($dev, block_skip=$skip)"
            [ $got_rc -eq $rc ] || { echo "FAIL: $what exits $got_rc, the text run $rc"; cat "$tmp/got.err"; fail=1; continue; }
            if [ $rc -eq 0 ]; then
                # the profile follows the answers on stdout: compare the answers
                sed '/^profile (device/,$d' "$tmp/got" >"$tmp/ans"
                cmp -s "$tmp/want" "$tmp/ans" || { echo "FAIL: $what answers differ"; diff "$tmp/want" "$tmp/ans" | head; fail=1; }
                cat "$tmp/got" "$tmp/got.err" >"$tmp/prof"
                set -- $(skipped "$tmp/prof")
                n=${1:-x}
                total=${2:-x}
                if [ "$total" != 40 ]; then echo "FAIL: $what: the profile counts '$total' blocks, not 40"; fail=1; fi
                case "$skip/$p" in
                on/range | on/two) [ "$n" != x ] && [ "$n" -gt 0 ] && [ "$n" -lt 40 ] || { echo "FAIL: $what skipped '$n' blocks"; fail=1; } ;;
                on/empty) [ "$n" = 40 ] || { echo "FAIL: $what skipped '$n' blocks, not all 40"; fail=1; } ;;
                *) [ "$n" = 0 ] || { echo "FAIL: $what skipped '$n' blocks, not none"; fail=1; } ;;
                esac
                if [ $dev = emu ]; then
                    # bytes to the device: only the columns read, only the blocks kept
                    # (5,000 rows; id 8 + day 4 + amount 8 + tag 4 + w 8 bytes a row)
                    h2d=$(sed -n 's/^phases: .*(\([0-9]*\) bytes to the device.*/\1/p' "$tmp/prof")
                    # (plus at most 1 KiB of dictionary, sums and error words)
                    case "$skip/$p" in
                    on/range) want_h2d=8192 ;;  # two blocks of 128 rows, every column
                    */range) want_h2d=160000 ;;
                    */unbounded) want_h2d=60000 ;; # id and tag only
                    *) want_h2d=0 ;;
                    esac
                    [ -n "$h2d" ] && [ "$h2d" -ge "$want_h2d" ] && [ "$h2d" -lt $((want_h2d + 1024)) ] ||
                        [ "$want_h2d" = 0 ] ||
                        { echo "FAIL: $what copied '$h2d' bytes to the device, not $want_h2d (+ < 1 KiB)"; fail=1; }
                fi
                echo "$what: $n of $total blocks skipped${h2d:+, $h2d bytes to the device}"
            else
                grep -v ": note: \|^==[0-9]*==WARNING: ASan" "$tmp/got.err" | grep -v "^profile\|^k[0-9]\|^kernel\|^database:\|^gpu" >"$tmp/got.msg"
                cmp -s "$tmp/want.msg" "$tmp/got.msg" || { echo "FAIL: $what messages differ"; diff "$tmp/want.msg" "$tmp/got.msg" | head; fail=1; }
            fi
        done
    done
done
# damage in blocks range.logic skips (block 1: January 2000): never read
flip() { # FILE OFFSET: one byte xor 0x01
    b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
    printf "$(printf '\\%03o' $(( b ^ 1 )))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
prog="$dir/range.logic"
"$redfox" run "$dir/schema.logic" "$prog" --data "$tmp/text" --device cpu --format csv >"$tmp/want" 2>/dev/null
"$redfox" import "$dir/schema.logic" --data "$tmp/text" --out "$tmp/plain" --block-rows 128 --strings plain >/dev/null 2>&1 ||
    { echo "FAIL: import --strings plain"; exit 1; }
for db in db plain; do
    rm -rf "$tmp/bad"; cp -r "$tmp/$db" "$tmp/bad"
    flip "$tmp/bad/t00000.c00000.col" 100     # id, block 1
    flip "$tmp/bad/t00000.c00003.col" 40      # tag (codes or offsets), block 1
    [ $db = plain ] && flip "$tmp/bad/t00000.c00003.str" 5 # tag's strings, block 1
    for dev in cpu emu; do
        what="range.logic from a damaged $db database ($dev)"
        if [ $dev = emu ]; then
            RF_GPU_EMULATE=1 "$redfox" run "$dir/schema.logic" "$prog" --data "$tmp/bad" --device gpu --format csv >"$tmp/got" 2>"$tmp/got.err"
        else
            "$redfox" run "$dir/schema.logic" "$prog" --data "$tmp/bad" --device cpu --format csv >"$tmp/got" 2>"$tmp/got.err"
        fi
        [ $? -eq 0 ] && cmp -s "$tmp/want" "$tmp/got" || { echo "FAIL: $what: a skipped damaged block was read"; cat "$tmp/got.err"; fail=1; }
    done
    "$redfox" run "$dir/schema.logic" "$prog" --data "$tmp/bad" --device cpu --format csv --set block_skip=off >/dev/null 2>"$tmp/got.err"
    rc=$?
    [ $rc -eq 1 ] && grep -q "t00000.c0000[03].col: error: the file is corrupted (checksum mismatch in block 1, rows 1 to 128)" "$tmp/got.err" ||
        { echo "FAIL: $db database, block_skip=off: a damaged block was not refused (exit $rc)"; cat "$tmp/got.err"; fail=1; }
    echo "damaged skipped block, $db database: read around; refused with block_skip=off"
done
[ $fail -eq 0 ] && echo ok
exit $fail
