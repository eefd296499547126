#!/bin/sh
# tests/run_gpu_cap_host_map.sh REDFOX: maps that the host computes on a GPU
# run (a comparison with a string made by concatenation), whose values do not
# fit under the GPU memory cap, in the emulator: once sent the whole run to
# the CPU with a warning that named no part which does not split; now read
# from and left in host memory. Under caps from 24 to 64 KiB the run must
# stay on the GPU (no warning, no CPU profile) and give the CPU's output byte
# for byte.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_gpuhostmap.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
RF_GPU_EMULATE=1
export RF_GPU_EMULATE
awk 'BEGIN { for (i = 1; i <= 1200; i++) printf "%d,n%d,%d\n", i, (i * 7) % 97, i % 41 }' >"$tmp/item.csv"
cat >"$tmp/prog.logic" <<'PROG'
item(k, s, g) -> int(k), string(s), int(g).
lang:input[`item] = "item.csv".
lang:input:delimiter[`item] = ",".
pair(a, b) <- item(a, s, g), item(b, t, g), t > (s + "5"), a < b.
lang:output[`pair] = "pair".
tag(a, u) <- item(a, s, _), u = s + "!", u > ("n" + "5").
lang:output[`tag] = "tag".
PROG
fail=0
"$redfox" run "$tmp/prog.logic" --data "$tmp" --device cpu --format tbl >"$tmp/cpu" 2>"$tmp/cpu.err" ||
    { echo "FAIL: cpu run"; cat "$tmp/cpu.err"; exit 1; }
for cap in 24K 32K 48K 64K; do
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
