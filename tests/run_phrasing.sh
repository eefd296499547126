#!/bin/sh
# tests/run_phrasing.sh REDFOX TESTS_DIR: TPC-H Q21 written as its SQL reads
# (tests/phrasing/q21_natural.logic) gives the answer of the hand-written
# tpch/queries/q21.logic at SF 0.1 (our generator): on the CPU with and
# without the another-row rewrite (--no-exists), and on the GPU emulator; its
# plan has both rewrites (the self-join and the negated one), so that it reads
# no auxiliary predicate of the negation, and has none with --no-exists.
set -u
redfox=$1
tests=$2
src=$(dirname "$tests")
schema=$src/tpch/queries/schema.logic
natural=$tests/phrasing/q21_natural.logic
tmp=${TMPDIR:-/tmp}/rf_phrasing.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$redfox" tpch gen --sf 0.1 --out "$tmp/data" >/dev/null 2>&1 || fail "tpch gen"
"$redfox" run "$schema" "$src/tpch/queries/q21.logic" --data "$tmp/data" --device cpu --format tbl >"$tmp/hand" ||
    fail "the hand-written q21 did not run"
[ "$(wc -l <"$tmp/hand")" -gt 10 ] || fail "the hand-written q21 printed too little"
"$redfox" run "$schema" "$natural" --data "$tmp/data" --device cpu --format tbl >"$tmp/cpu" || fail "natural q21, cpu"
cmp -s "$tmp/hand" "$tmp/cpu" || { diff "$tmp/hand" "$tmp/cpu" | head; fail "natural q21 on the CPU differs"; }
"$redfox" run "$schema" "$natural" --data "$tmp/data" --device cpu --format tbl --no-exists >"$tmp/plain" ||
    fail "natural q21, cpu, --no-exists"
cmp -s "$tmp/hand" "$tmp/plain" || fail "natural q21 with --no-exists differs"
RF_GPU_EMULATE=1 "$redfox" run "$schema" "$natural" --data "$tmp/data" --device gpu --format tbl >"$tmp/emu" 2>"$tmp/emu.err" ||
    { cat "$tmp/emu.err"; fail "natural q21, emulator"; }
cmp -s "$tmp/hand" "$tmp/emu" || fail "natural q21 on the emulator differs"
"$redfox" dump --plan "$schema" "$natural" >"$tmp/plan" || fail "dump --plan"
grep -q 'exists: least and greatest of lineitem.l_suppkey per (lineitem.l_orderkey); !(late_line' "$tmp/plan" ||
    { grep '#' "$tmp/plan"; fail "the plan lacks the two rewrites"; }
if grep -q '_not' "$tmp/plan"; then fail "the rewritten plan still computes the negation's auxiliary predicate"; fi
"$redfox" dump --plan "$schema" "$natural" --no-exists >"$tmp/plan0" || fail "dump --plan --no-exists"
if grep -q 'exists: ' "$tmp/plan0"; then fail "--no-exists still rewrites"; fi
grep -q '_not' "$tmp/plan0" || fail "--no-exists lost the negation's auxiliary predicate"
echo "ok"
