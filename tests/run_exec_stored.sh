#!/bin/sh
# tests/run_exec_stored.sh REDFOX PROG MODE: `redfox exec` of PROG (bench/txn/
# tc.logic: the closure `path` stored, not an output) on a graph where most
# stored paths do not touch the batch: a component A (150 nodes, every path
# stored) beside a chain B that the batch closes into a cycle of N nodes
# (about N rounds of the delta rules), then a deletion inside B (DRed).
# After each batch the outputs and the stored tables (read back with `redfox
# run`) equal those of --recompute on a copy; the insert-only batch appends
# to the closure in place. MODE cpu or emu (the GPU emulator); on emu,
# --profile's line for the delta rules' run must report about the same join
# builds for N = 42 and N = 82: builds (the stored closure's
# hash table above all) are made once an exec, not once a round.
set -u
redfox=$1
prog=$2
mode=$3
tmp=${TMPDIR:-/tmp}/rf_exec_stored.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
dev=cpu
if [ "$mode" = emu ]; then
    dev=gpu
    export RF_GPU_EMULATE=1
fi

# dump DB: the stored path table, sorted
dump() {
    h=$(strings "$1/manifest.rfdb" | sed -n 's/.*derived\.\([0-9a-f]*\)\.path.*/\1/p' | head -n 1)
    [ -n "$h" ] || fail "no stored path table in $1"
    printf 'path(a, b) -> int(a), int(b).\nlang:input[`path] = "derived.%s.path".\nlang:output[`path] = "path".\n' "$h" \
        >"$tmp/dump.logic"
    "$redfox" run "$tmp/dump.logic" --data "$1" --device cpu --format csv | sort
}

# one N: prints the delta rules' join builds (emu)
one() {
    n=$1
    d=$tmp/n$n
    mkdir -p "$d/data"
    awk -v n="$n" 'BEGIN { for (i = 0; i < 150; i++) { printf "%d|%d\n", i, (i + 1) % 150; printf "%d|%d\n", i, (i * 7 + 3) % 150 }
                           for (i = 1000; i < 1000 + n - 3; i++) printf "%d|%d\n", i, i + 1 }' >"$d/data/edges.tbl"
    e=$((1000 + n - 3))
    printf '+edge(%d, %d).\n+edge(%d, %d).\n+edge(%d, 1000).\n' $e $((e + 1)) $((e + 1)) $((e + 2)) $((e + 2)) >"$d/ins.txn"
    printf -- '-edge(%d, %d).\n' $((1000 + n / 2)) $((1001 + n / 2)) >"$d/del.txn"
    "$redfox" import "$prog" --data "$d/data" --out "$d/db" >/dev/null 2>"$d/err" || { cat "$d/err"; fail "import"; }
    "$redfox" exec "$d/db" "$prog" --device cpu --format csv >/dev/null 2>"$d/err" || { cat "$d/err"; fail "first exec"; }
    cp -r "$d/db" "$d/db2"
    for step in ins del; do
        "$redfox" exec "$d/db" "$prog" --device $dev --batch "$d/$step.txn" --profile --format csv >"$d/inc" 2>"$d/err.$step" ||
            { cat "$d/err.$step"; fail "N=$n $step: exec"; }
        "$redfox" exec "$d/db2" "$prog" --device $dev --batch "$d/$step.txn" --recompute --format csv >"$d/re" 2>"$d/err" ||
            { cat "$d/err"; fail "N=$n $step: exec --recompute"; }
        grep -q "maintained incrementally" "$d/err.$step" || fail "N=$n $step: not maintained incrementally"
        cmp -s "$d/inc" "$d/re" || fail "N=$n $step: outputs differ from --recompute"
        dump "$d/db" >"$d/t1"
        dump "$d/db2" >"$d/t2"
        [ "$(wc -l <"$d/t1")" -gt 22500 ] || fail "N=$n $step: stored closure too small"
        cmp -s "$d/t1" "$d/t2" || fail "N=$n $step: the stored closure differs from --recompute"
    done
    grep -q "path: [0-9]* -> [0-9]* tuples (table appended in place)" "$d/err.ins" || fail "N=$n: the closure not appended to"
    sed -n 's/.*run of the delta rules.*join builds \([0-9]*\) made, \([0-9]*\) reused.*/\1 \2/p' "$d/err.ins"
}
a=$(one 42) || { echo "$a"; exit 1; }
b=$(one 82) || { echo "$b"; exit 1; }
if [ "$mode" = emu ]; then
    echo "join builds (made, reused): N=42: $a; N=82: $b"
    [ -n "$a" ] && [ -n "$b" ] || fail "no join builds in the delta rules' profile line"
    # twice the rounds: at most 2 more builds (a last round of few rows may
    # build on its small side), where builds once a round would add 40
    [ $((${b% *} - ${a% *})) -le 2 ] || fail "the join builds made grow with the rounds ($a, then $b)"
    [ "${b#* }" -gt "${a#* }" ] || fail "no builds reused across the rounds ($a, then $b)"
fi
echo ok
