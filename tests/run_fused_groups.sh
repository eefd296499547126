#!/bin/sh
# tests/run_fused_groups.sh REDFOX TESTS_DIR TPCH_DATA: grouped totals fused
# into one kernel (Kernel Weaver) on the emulated GPU, through --profile:
# tests/e2e/fused_groups runs its one fused kernel and matches the CPU;
# fused_groups_many and _spread (more groups than a table holds) run it,
# find it too small and run their stages one by one (0 fused runs), with
# the CPU's results; TPC-H q01 (where TPCH_DATA has lineitem.tbl) runs map,
# group and reduce as one kernel that reads its 7 input columns once (44
# bytes a row), writes no rows and computes disc_price once a row.
set -u
redfox=$1
tests=$2
data=$3
tmp=${TMPDIR:-/tmp}/rf_fused_groups.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
export RF_GPU_EMULATE=1
fail() { echo "FAIL: $*"; exit 1; }
for case in fused_groups:1 fused_groups_many:0 fused_groups_spread:0; do
    name=${case%:*}
    want=${case#*:}
    prog=$tests/e2e/$name.logic
    "$redfox" dump --fused "$prog" >"$tmp/d.txt" || fail "$name: dump --fused"
    grep -q "grouped totals" "$tmp/d.txt" || { cat "$tmp/d.txt"; fail "$name: no grouped totals in dump --fused"; }
    "$redfox" run "$prog" --data "$tests/e2e/data" --device cpu --format tbl >"$tmp/cpu" || fail "$name: cpu run"
    "$redfox" run "$prog" --data "$tests/e2e/data" --device gpu --format tbl --profile >"$tmp/gpu" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "$name: gpu run"; }
    grep -q "^gpu: $want fused kernel runs" "$tmp/err" || { cat "$tmp/err"; fail "$name: not $want fused kernel runs"; }
    cmp -s "$tmp/cpu" "$tmp/gpu" || { diff "$tmp/cpu" "$tmp/gpu" | head; fail "$name: output differs from the CPU's"; }
done
q="$tests/../tpch/queries"
# q01's charge, disc_price * (1 + tax), reuses disc_price in the fused
# stage: two decimal products a row, not three (cse, codegen_expr.c)
"$redfox" dump --cuda "$q/schema.logic" "$q/q01.logic" >"$tmp/q01.cu" || fail "q01: dump --cuda"
muls=$(sed -n '/^struct G0 {/,/^};/p' "$tmp/q01.cu" | grep -c 'rf::mul_d(')
[ "$muls" -eq 2 ] || fail "q01: $muls decimal products in its fused stage, not 2"
if [ -f "$data/lineitem.tbl" ]; then
    "$redfox" run "$q/schema.logic" "$q/q01.logic" --data "$data" --device cpu --format csv >"$tmp/cpu" || fail "q01 cpu"
    "$redfox" run "$q/schema.logic" "$q/q01.logic" --data "$data" --device gpu --format csv --profile >"$tmp/gpu" \
        2>"$tmp/err" || { cat "$tmp/err"; fail "q01 gpu"; }
    cmp -s "$tmp/cpu" "$tmp/gpu" || fail "q01: output differs from the CPU's"
    grep -q "^gpu: 1 fused kernel runs" "$tmp/err" || { cat "$tmp/err"; fail "q01: not 1 fused kernel run"; }
    for k in "k0 *map" "k1 *group" "k2 *reduce"; do
        grep -q "^$k *fused " "$tmp/err" || { cat "$tmp/err"; fail "q01: $k not fused"; }
    done
    rows=$(grep -c "" "$data/lineitem.tbl")
    bytes=$(sed -n 's/^k0 *map *fused *[0-9]* *[0-9.]* *[0-9]* *- *\([0-9]*\)$/\1/p' "$tmp/err")
    [ "${bytes:-0}" -eq $((rows * 44)) ] || { cat "$tmp/err"; fail "q01: k0 moved ${bytes:-?} bytes, not $rows rows x 44"; }
fi
echo ok
