#!/bin/sh
# tests/run_gpu_hold.sh REDFOX: on the machine's GPU (exit 77 without one),
# `redfox hold` holds the real driver: it says so, GPU runs beside it give
# the CPU's outputs, and SIGTERM ends it with exit 0. (What it saves, a
# fresh GPU process's registration with nvidia-uvm, is measured in
# docs/BENCHMARKS.md, never timed here.)
set -u
r=$1
tmp=${TMPDIR:-/tmp}/rf_gpu_hold.$$
mkdir -p "$tmp"
# the mark of a holder (runtime/rt_hold.c) in this test's own folder: a
# holder here must not change the choices of tests running beside it
TMPDIR=$tmp
export TMPDIR
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

. "$(dirname "$0")/lib_device.sh"
use_device 1 "$r" "$tmp"

p=$tmp/prog.logic
cat >"$p" <<'P'
e(1, 2). e(2, 3). e(3, 4). e(4, 1). e(2, 5).
path(x, y) <- e(x, y).
path(x, z) <- path(x, y), e(y, z).
reach[x] = n <- agg<<n = count()>> path(x, _).
lang:output[`reach] = "reach".
P
"$r" run "$p" --device cpu --out "$tmp/cpu" 2>"$tmp/cpu.err" || { no "cpu run"; cat "$tmp/cpu.err"; }

"$r" hold 2>"$tmp/hold.err" &
pid=$!
i=0
while ! grep -q "is held for" "$tmp/hold.err" 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 300 ] && { no "no 'held' line in 30 s"; cat "$tmp/hold.err"; break; }
    kill -0 "$pid" 2>/dev/null || { no "hold ended: $(cat "$tmp/hold.err")"; break; }
    sleep 0.1
done
for n in 1 2 3; do
    "$r" run "$p" --device gpu --out "$tmp/gpu$n" --cache-dir "$tmp/cache" 2>"$tmp/gpu.err" ||
        { no "gpu run $n beside hold"; cat "$tmp/gpu.err"; }
    cmp -s "$tmp/cpu/reach.csv" "$tmp/gpu$n/reach.csv" || no "gpu run $n beside hold: output differs from the CPU's"
done
# the placement model records those starts as a held driver's (state 2),
# and auto beside the holder weighs them (not the guess)
[ "$(grep -c '^r [0-9a-f]* gpu 2 ' "$tmp/cache/place/model.txt" 2>/dev/null)" -eq 3 ] ||
    { no "the model does not record three held GPU starts"; cat "$tmp/cache/place/model.txt"; }
"$r" run "$p" --device auto --profile --out "$tmp/auto" --cache-dir "$tmp/cache" 2>"$tmp/auto.err" ||
    { no "auto beside hold"; cat "$tmp/auto.err"; }
grep -q "held by .redfox hold.: its start as measured while held" "$tmp/auto.err" ||
    { no "auto beside hold: not the held starts"; cat "$tmp/auto.err"; }
kill -s TERM "$pid"
wait "$pid"; rc=$?
pid=
[ $rc -eq 0 ] || no "hold: exit $rc after SIGTERM"
[ $fail -eq 0 ] && echo "gpu_hold: ok"
exit $fail
