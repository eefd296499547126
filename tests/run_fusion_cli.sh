#!/bin/sh
# tests/run_fusion_cli.sh REDFOX E2E_DIR: Kernel Weaver fusion through the
# command line on the emulated GPU: `dump --fused` names the fused kernels,
# `run --profile` runs exactly that many (none with --no-fuse), results are
# identical with and without fusion and to the CPU's, a .rfx compiled with
# --no-fuse runs either way, and every command documents --no-fuse.
set -u
redfox=$1
dir=$2
prog=$dir/fusion.logic
tmp=${TMPDIR:-/tmp}/rf_fusion_cli.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
export RF_GPU_EMULATE=1
fail() { echo "FAIL: $*"; exit 1; }
for c in compile run "tpch run" "tpch bench" dump; do
    # shellcheck disable=SC2086
    $redfox $c --help | grep -q -- "--no-fuse" || fail "redfox $c --help does not mention --no-fuse"
done
"$redfox" dump --fused "$prog" >"$tmp/fused.txt" || fail "dump --fused"
nk=$(sed -n 's/^GPU code generator: \([0-9]*\) fused kernels.*/\1/p' "$tmp/fused.txt")
[ "${nk:-0}" -gt 0 ] || { cat "$tmp/fused.txt"; fail "dump --fused shows no fused kernel"; }
"$redfox" dump --fused --no-fuse "$prog" | grep -q "no fused kernels (--no-fuse)" || fail "dump --fused --no-fuse"
"$redfox" run "$prog" --data "$dir/data" --device cpu --format csv >"$tmp/cpu.csv" || fail "cpu run"
"$redfox" run "$prog" --data "$dir/data" --device gpu --format csv --profile >"$tmp/f.csv" 2>"$tmp/f.err" ||
    { cat "$tmp/f.err"; fail "fused run"; }
grep -q "^gpu: $nk fused kernel runs" "$tmp/f.err" || { cat "$tmp/f.err"; fail "the run did not run the $nk fused kernels dump --fused lists"; }
"$redfox" run "$prog" --data "$dir/data" --device gpu --format csv --profile --no-fuse >"$tmp/u.csv" 2>"$tmp/u.err" ||
    { cat "$tmp/u.err"; fail "unfused run"; }
grep -q "^gpu: 0 fused kernel runs" "$tmp/u.err" || { cat "$tmp/u.err"; fail "--no-fuse ran fused kernels"; }
cmp "$tmp/cpu.csv" "$tmp/f.csv" || fail "fused output differs from the CPU's"
cmp "$tmp/cpu.csv" "$tmp/u.csv" || fail "unfused output differs from the CPU's"
# a .rfx compiled without fused kernels: runs unfused from its PTX, and with
# fusion (the fused kernels compiled at run time)
"$redfox" compile "$prog" --no-fuse -o "$tmp/nf.rfx" 2>/dev/null || fail "compile --no-fuse"
"$redfox" run "$tmp/nf.rfx" --data "$dir/data" --device gpu --format csv --no-fuse >"$tmp/nf1.csv" || fail "run nf.rfx --no-fuse"
"$redfox" run "$tmp/nf.rfx" --data "$dir/data" --device gpu --format csv >"$tmp/nf2.csv" || fail "run nf.rfx"
cmp "$tmp/cpu.csv" "$tmp/nf1.csv" || fail "nf.rfx --no-fuse output"
cmp "$tmp/cpu.csv" "$tmp/nf2.csv" || fail "nf.rfx output"
"$redfox" tpch run --no-fuse --data "$tmp/none" >/dev/null 2>&1
[ $? -ne 2 ] || fail "tpch run refuses --no-fuse"
echo ok
