#!/bin/sh
# tests/run_place_near_tie.sh REDFOX ROOT FAKECUDA_DIR: --device auto near a
# tie, and the driver it loads or not (issue 27). A synthetic model of
# examples/quickstart's program: where the GPU, with its start still to pay,
# is predicted faster by less than 10 % of the CPU's time, auto runs on the
# CPU, says so (the note, --profile), and loads no driver; where the GPU is
# clearly faster, auto looks for it. FAKECUDA_DIR holds a libcuda.so.1 that
# loads but never starts (tests/fakecuda), first on the library path, so
# that "libcuda.so.1 loaded / not loaded" shows what auto did on any host.
set -u
r=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ex=$2/examples/quickstart
fake=$3
tmp=${TMPDIR:-/tmp}/rf_tie.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
unset RF_GPU_EMULATE
[ -f "$fake/libcuda.so.1" ] || { echo "FAIL: no stand-in driver in $fake"; exit 1; }
LD_LIBRARY_PATH=$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
model=$tmp/cache/place/model.txt
"$r" run "$ex/reach.logic" --data "$ex" --device cpu --format csv --cache-dir "$tmp/cache" >"$tmp/cpu" 2>/dev/null ||
    no "cpu run"
set -- $(grep "^r " "$model" | head -n 1)
[ $# -eq 11 ] || { no "no run record to build on"; exit 1; }
# synth CPU_S GPU_RUN_S: this program's records, a fresh GPU start of 0.3 s
synth() {
    printf 'redfox placement model 2\nr %s cpu 0 %s %s %s 0 0 %s\nr %s gpu 1 %s %s %s 0.3 0 %s\n' \
        "$p" "$rows" "$bytes" "$kern" "$1" "$p" "$rows" "$bytes" "$kern" "$2" >"$model"
}
p=$2 rows=$5 bytes=$6 kern=$7

# a near tie: CPU 0.35 s, GPU 0.3 + 0.02 s (8.6 % less): the CPU, no driver
synth 0.35 0.02
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/cache" --profile \
    >"$tmp/a1" 2>"$tmp/e1" || no "near tie: exit $?"
cmp -s "$tmp/cpu" "$tmp/a1" || no "near tie: another output than the CPU's"
grep -q "^auto: predicted cpu 0.350000 s, gpu 0.32[0-9]* s -> chose cpu (model: 2 records); a near tie (the GPU faster by less than 10 % of the CPU's time): the CPU, which needs no start; the GPU's driver not loaded" "$tmp/e1" ||
    { no "near tie: no profile line saying so"; cat "$tmp/e1"; }
grep -q "^auto: the choice took [0-9.]* ms (the model read [0-9.]* ms, .*); libcuda.so.1 not loaded in this process" \
    "$tmp/e1" || { no "near tie: libcuda.so.1 loaded, or the choice's cost not shown"; cat "$tmp/e1"; }
grep -q "note: running on the CPU: the GPU predicted within 10 % of it (0.32[0-9]* s against 0.35 s), and the CPU needs no start" \
    "$tmp/e1" || { no "near tie: no note"; cat "$tmp/e1"; }
grep -q "^h " "$model" && no "near tie: a host record, though no run looked for the GPU"

# the GPU faster by 11 %: auto looks for it (the stand-in loads, never starts: the CPU)
synth 0.36 0.02
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/cache" --profile \
    >"$tmp/a2" 2>"$tmp/e2" || no "GPU faster: exit $?"
cmp -s "$tmp/cpu" "$tmp/a2" || no "GPU faster: another output than the CPU's"
grep -q "near tie" "$tmp/e2" && no "GPU faster by 11 %: called a near tie"
grep -q "note: running on the CPU: no usable GPU" "$tmp/e2" || { no "GPU faster: no look for the GPU"; cat "$tmp/e2"; }
if grep -q "lacks cuInit" "$tmp/e2"; then # a build with the CUDA driver: the stand-in was loaded
    grep -q "^auto: the choice took .*; libcuda.so.1 loaded in this process" "$tmp/e2" ||
        { no "GPU faster: the stand-in driver loaded, the profile says not"; cat "$tmp/e2"; }
fi

# a started GPU has no tie margin: the same numbers with --repeat weigh the
# runs (3 x 0.35 s against 0.3 + 3 x 0.02 s): the GPU looked for
synth 0.35 0.02
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/cache" --profile --repeat 3 \
    >"$tmp/a3" 2>"$tmp/e3" || no "three runs: exit $?"
cmp -s "$tmp/cpu" "$tmp/a3" || no "three runs: another output than the CPU's"
grep -q "^run 1 of 3: auto: predicted .*near tie" "$tmp/e3" && no "three runs: called a near tie"
[ $fail = 0 ] && echo "near tie: the CPU without the driver; a clear GPU win looks for it"
exit $fail
