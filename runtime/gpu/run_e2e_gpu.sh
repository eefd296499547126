#!/bin/sh
# runtime/gpu/run_e2e_gpu.sh TEST_GPU_RUN MODE PROG.logic [FLAGS...]: runs an
# end-to-end program through the GPU backend (MODE gpu) or its emulator
# (MODE emu), compares the tbl output with PROG.expected and with the CPU
# backend's (byte for byte), or, for "// expect-error: TEXT" programs,
# demands exit 1 with TEXT and the CPU's very messages. "// args:" lines
# pass options on (--max-iterations); FLAGS too (--no-fuse: every kernel
# separately, no Kernel Weaver fusion; --set NAME=VALUE: a tuning setting).
# Exit 77 where there is no GPU.
set -u
drv=$1
mode=$2
prog=$3
shift 3
extra="$*"
dir=$(dirname "$prog")
name=$(basename "$prog" .logic)
tmp=${TMPDIR:-/tmp}/rf_gpu_e2e.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
args=$(sed -n 's|^// args: ||p' "$prog")
experr=$(sed -n 's|^// expect-error: ||p' "$prog")
# "// expect-from: SCRIPT.py": the expected output computed from the data
# (tests/run_e2e.sh)
expfrom=$(sed -n 's|^// expect-from: ||p' "$prog")
expected=$dir/$name.expected
if [ -n "$expfrom" ]; then
    expected=$tmp/expected
    python3 -B "$dir/$expfrom" "$dir/data" >"$expected" || { echo "FAIL: $expfrom"; exit 1; }
fi
flags="--compare"
[ "$mode" = emu ] && flags="$flags --emulate"
# the run takes its PTX the way a .rfx hands it over (the emulator checks
# that the section round-trips, then compiles the source itself)
flags="$flags --ptx $extra"
# shellcheck disable=SC2086
"$drv" $flags --data "$dir/data" $args "$prog" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 77 ]; then cat "$tmp/out"; exit 77; fi
if [ -n "$experr" ]; then
    if [ $rc -ne 1 ]; then echo "FAIL: exit $rc, expected 1"; cat "$tmp/err"; exit 1; fi
    if grep -q "^FAIL" "$tmp/err"; then cat "$tmp/err"; exit 1; fi
    if ! grep -qF -- "$experr" "$tmp/err"; then echo "FAIL: stderr lacks: $experr"; cat "$tmp/err"; exit 1; fi
    exit 0
fi
if [ $rc -ne 0 ]; then echo "FAIL: exit $rc"; cat "$tmp/err"; exit 1; fi
if ! diff -u "$expected" "$tmp/out"; then echo "FAIL: output differs from $(basename "$expected")"; exit 1; fi
