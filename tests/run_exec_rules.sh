#!/bin/sh
# tests/run_exec_rules.sh REDFOX MODE: `redfox exec` over programs whose
# shape the random programs of exec_gen.py do not make, each batch's outputs
# compared with answers worked out by hand (and with a from-scratch run over
# the committed database), in the default mode, --incremental and under
# --each; MODE cpu runs exec on the CPU, emu on the GPU emulator:
#   - facts of a derived predicate that another of its rules also derives
#     from a deleted fact (DRed over-deletes them, and must derive them
#     again: it used to drop them, in recursion too).
set -u
redfox=$1
mode=$2
tmp=${TMPDIR:-/tmp}/rf_exec_rules.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if [ "$mode" = emu ]; then
    dev=gpu
    export RF_GPU_EMULATE=1
else
    dev=cpu
fi

# check NAME PROG WANT BATCH...: for the default mode, --incremental and
# --each, a database imported from $tmp/data, its first exec, then the
# batches in turn; the last transaction's outputs (csv, rows only, one line)
# must be WANT and equal a from-scratch run over the database
check() {
    name=$1 prog=$2 want=$3
    shift 3
    for how in default --incremental --each; do
        db=$tmp/db
        rm -rf "$db"
        "$redfox" import "$prog" --data "$tmp/data" --out "$db" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "$name: import"; }
        "$redfox" exec "$db" "$prog" --device $dev --format csv >/dev/null 2>"$tmp/err" ||
            { cat "$tmp/err"; fail "$name: the first exec"; }
        if [ $how = --each ]; then
            args=""
            for b in "$@"; do args="$args --batch $b"; done
            # shellcheck disable=SC2086
            "$redfox" exec "$db" "$prog" --device $dev --format csv --each $args >"$tmp/all" 2>"$tmp/err" ||
                { rc=$?; cat "$tmp/err"; fail "$name --each: exit $rc"; }
            awk '/^-- transaction /{ out = "" ; next } { out = out $0 "\n" } END { printf "%s", out }' "$tmp/all" >"$tmp/out"
        else
            flag=""
            [ $how = default ] || flag=$how
            for b in "$@"; do
                # shellcheck disable=SC2086
                "$redfox" exec "$db" "$prog" --device $dev --format csv $flag --batch "$b" >"$tmp/out" 2>"$tmp/err" ||
                    { rc=$?; cat "$tmp/err"; fail "$name $how: exec of $b: exit $rc"; }
            done
        fi
        got=$(grep -v '^$' "$tmp/out" | tr '\n' ' ')
        [ "$got" = "$want" ] || fail "$name $how: got '$got', want '$want'"
        "$redfox" run "$prog" --data "$db" --device cpu --format csv 2>/dev/null | grep -v '^$' | tr '\n' ' ' >"$tmp/run"
        [ "$(cat "$tmp/run")" = "$want" ] || fail "$name $how: a run over the database: '$(cat "$tmp/run")'"
    done
}

# ---- facts beside rules, under DRed -------------------------------------------------
cat >"$tmp/facts.logic" <<'P'
s(a) -> int(a).
lang:input[`s] = "s.csv".
e(a, b) -> int(a), int(b).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
p(x) -> int(x).
p(1).
p(x) <- s(x).
tc(x, y) -> int(x), int(y).
tc(1, 2).
tc(x, y) <- e(x, y).
tc(x, z) <- tc(x, y), e(y, z).
lang:output[`p] = "p".
lang:output[`tc] = "tc".
P
printf '1\n2\n' >"$tmp/data/s.csv"
printf '1,2\n2,3\n' >"$tmp/data/e.csv"
printf -- '-s(1).\n' >"$tmp/f1.txn"
printf -- '-e(1, 2).\n-s(2).\n' >"$tmp/f2.txn"
# p(1) is a fact; tc(1, 2) too, and with e(2, 3) it derives tc(1, 3)
check facts "$tmp/facts.logic" "p (1 row) x 1 tc (3 rows) x,y 1,2 1,3 2,3 " "$tmp/f1.txn" "$tmp/f2.txn"

echo "PASS: exec over facts beside rules ($mode)"
