#!/bin/sh
# runtime/gpu/test_gpu_cli.sh REDFOX E2E_DIR: the device choice on the
# command line. Without a GPU: --device gpu fails with exit 1 and a message
# naming the GPU, --device auto runs on the CPU and says so on stderr. With a
# GPU: --device gpu runs there and auto says which device its placement
# model picked (the GPU, or the CPU as faster than the GPU). Either way
# the output equals the CPU's. --profile's phases line gives the copy's
# share of the pinned bandwidth measured (a GPU) or says it was not
# measured (the emulator). Its "gpu start:" line gives the start's parts:
# on the emulator the open and the program's module; on a GPU also the
# driver's (cuInit, context, cudart and CUB on a thread of its own), the
# stream and the pinned buffers, and in a process's second run that the
# driver started earlier and the buffers and the program's module were kept. Exit 77 while redfox
# does not call the GPU backend yet.
set -u
redfox=$1
dir=$2
tmp=${TMPDIR:-/tmp}/rf_gpu_cli.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
unset RF_GPU_EMULATE
prog="$dir/tc.logic"
"$redfox" run "$prog" --data "$dir/data" --device cpu --format csv >"$tmp/cpu" 2>"$tmp/cpu.err" || {
    echo "FAIL: the CPU run failed"; cat "$tmp/cpu.err"; exit 1; }
"$redfox" run "$prog" --data "$dir/data" --device gpu --format csv >"$tmp/gpu" 2>"$tmp/gpu.err"
rc=$?
if grep -q "no GPU backend" "$tmp/gpu.err"; then echo "SKIP: this redfox does not call the GPU backend yet"; exit 77; fi
"$redfox" run "$prog" --data "$dir/data" --device auto --format csv >"$tmp/auto" 2>"$tmp/auto.err"
arc=$?
if [ $arc -ne 0 ]; then echo "FAIL: --device auto exited $arc"; cat "$tmp/auto.err"; exit 1; fi
if ! cmp -s "$tmp/cpu" "$tmp/auto"; then echo "FAIL: --device auto gives another output than the CPU"; exit 1; fi
# --profile's phases line: the copy's share of the pinned bandwidth measured
# in this process on a GPU, "not measured" on the emulator
RF_GPU_EMULATE=1 "$redfox" run "$prog" --data "$dir/data" --device gpu --format csv --profile >/dev/null 2>"$tmp/emu.err" || {
    echo "FAIL: the emulated run failed"; cat "$tmp/emu.err"; exit 1; }
if ! grep -q "^phases: .* GB/s, pinned bandwidth not measured)" "$tmp/emu.err"; then
    echo "FAIL: the emulator's profile does not say the pinned bandwidth was not measured"; cat "$tmp/emu.err"; exit 1; fi
if ! grep -q "^gpu start: emulated (no driver), the rest of the device's open (plans, pool) [0-9.]* ms; program [0-9.]* ms on a thread of its own beside the copies (waited for [0-9.]* ms at the load's end); pool arenas [0-9.]* ms" "$tmp/emu.err"; then
    echo "FAIL: the emulator's profile does not give the start's parts"; cat "$tmp/emu.err"; exit 1; fi
# the device's open beside the reading, the program's module beside the copies
if ! grep -q "^start: device ([0-9.]* ms) on a thread beside the reading ([0-9.]* ms); the reading then waited [0-9.]* ms for it; the program ([0-9.]* ms) on a thread of its own beside the copies" "$tmp/emu.err"; then
    echo "FAIL: the emulator's profile does not say what ran beside what"; cat "$tmp/emu.err"; exit 1; fi
if [ $rc -eq 0 ]; then
    # there is a GPU
    "$redfox" run "$prog" --data "$dir/data" --device gpu --format csv --profile >/dev/null 2>"$tmp/prof.err" || {
        echo "FAIL: the profiled GPU run failed"; cat "$tmp/prof.err"; exit 1; }
    if ! grep -q "^phases: .* GB/s, [0-9]*% of the [0-9.]* GB/s pinned bandwidth measured)" "$tmp/prof.err"; then
        echo "FAIL: the GPU's profile does not give the copy's share of the pinned bandwidth"; cat "$tmp/prof.err"; exit 1; fi
    # the start's parts: the driver's in a fresh process, cudart and the pinned buffers on threads of their own
    if ! grep -q "^gpu start: driver and cuInit [0-9.]* ms, context [0-9.]* ms, cudart and CUB [0-9.]* ms on a thread of its own (waited for [0-9.]* ms), stream [0-9.]* ms, pinned buffers [0-9.]* ms on a thread beside the program's load (waited for [0-9.]* ms), the rest of the device's open (plans, pool) [0-9.]* ms; program [0-9.]* ms on a thread of its own beside the copies (waited for [0-9.]* ms at the load's end); pool arenas" "$tmp/prof.err"; then
        echo "FAIL: the GPU's profile does not give the start's parts"; cat "$tmp/prof.err"; exit 1; fi
    # a second run of the process: the driver started earlier, the buffers kept
    "$redfox" run "$prog" --data "$dir/data" --device gpu --format csv --profile --repeat 2 >"$tmp/gpu2" 2>"$tmp/prof2.err" || {
        echo "FAIL: the profiled GPU run with --repeat 2 failed"; cat "$tmp/prof2.err"; exit 1; }
    if ! grep -q "^gpu start: driver started earlier in the process, stream and pinned buffers kept from an earlier run" "$tmp/prof2.err"; then
        echo "FAIL: the second run's profile does not say the driver and the buffers were there"; cat "$tmp/prof2.err"; exit 1; fi
    # and the program's module, loaded by the first run, kept for the second
    if ! grep -q "^gpu start: .*; program [0-9.]* ms on a thread of its own beside the copies (waited for [0-9.]* ms at the load's end), its module kept loaded from an earlier run;" "$tmp/prof2.err"; then
        echo "FAIL: the second run's profile does not say the program's module was kept"; cat "$tmp/prof2.err"; exit 1; fi
    if ! cmp -s "$tmp/cpu" "$tmp/gpu"; then echo "FAIL: --device gpu gives another output than the CPU"; exit 1; fi
    if ! grep -q "running on the GPU\|running on the CPU: predicted faster than the GPU" "$tmp/auto.err"; then
        echo "FAIL: --device auto does not say where it runs and why"; cat "$tmp/auto.err"; exit 1; fi
    echo "ok (with a GPU)"
    exit 0
fi
if [ $rc -ne 1 ]; then echo "FAIL: --device gpu without a GPU exited $rc, expected 1"; cat "$tmp/gpu.err"; exit 1; fi
if [ -s "$tmp/gpu" ]; then echo "FAIL: --device gpu without a GPU printed results (a silent fallback?)"; exit 1; fi
if ! grep -qi "gpu" "$tmp/gpu.err"; then echo "FAIL: the --device gpu error does not name the GPU"; cat "$tmp/gpu.err"; exit 1; fi
if ! grep -qi "cpu" "$tmp/auto.err"; then echo "FAIL: --device auto does not say it runs on the CPU"; cat "$tmp/auto.err"; exit 1; fi
echo "ok (without a GPU)"
