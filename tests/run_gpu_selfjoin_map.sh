#!/bin/sh
# tests/run_gpu_selfjoin_map.sh REDFOX: a join of a relation with itself on a
# shared variable whose join map (the pairs' columns gathered from both sides)
# does not fit under the GPU memory cap, in the emulator. Its two sides are
# one value, once left the GPU for the CPU with a warning that named no part
# which does not split; under caps from 16 to 48 KiB the run must stay on the
# GPU (no warning, no CPU profile) and give the CPU's output byte for byte.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_gpuselfmap.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
RF_GPU_EMULATE=1
export RF_GPU_EMULATE
awk 'BEGIN { for (i = 1; i <= 1500; i++) printf "%d,%d,%d\n", i, (i * 7) % 61, i % 5 }' >"$tmp/item.csv"
cat >"$tmp/prog.logic" <<'PROG'
item(k, v, w) -> int(k), int(v), int(w).
lang:input[`item] = "item.csv".
lang:input:delimiter[`item] = ",".
pair(x, y, w) <- item(x, v, w), item(y, v, _), x < y.
lang:output[`pair] = "pair".
tri(a, b) <- item(a, v, w), item(b, w, v), a != b.
lang:output[`tri] = "tri".
PROG
fail=0
"$redfox" run "$tmp/prog.logic" --data "$tmp" --device cpu --format tbl >"$tmp/cpu" 2>"$tmp/cpu.err" ||
    { echo "FAIL: cpu run"; cat "$tmp/cpu.err"; exit 1; }
for cap in 16K 24K 32K 48K; do
    "$redfox" run "$tmp/prog.logic" --data "$tmp" --device gpu --format tbl --profile --gpu-memory $cap \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL: cap $cap exited $rc"; cat "$tmp/err"; fail=1; continue; fi
    if ! cmp -s "$tmp/cpu" "$tmp/out"; then echo "FAIL: cap $cap: output differs from the CPU's"; fail=1; fi
    if grep -q 'warning\|^profile (device cpu)' "$tmp/err"; then
        echo "FAIL: cap $cap: left the GPU"; grep warning "$tmp/err"; fail=1; continue
    fi
    echo "cap $cap: $(grep 'key partitions' "$tmp/err")"
done
exit $fail
