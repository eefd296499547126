#!/bin/sh
# tests/run_gpu_selfjoin_map.sh REDFOX: a join of a relation with itself on a
# shared variable whose join map (the pairs' columns gathered from both sides)
# does not fit under the GPU memory cap, in the emulator. Its two sides are
# one value, once left the GPU for the CPU with a warning that named no part
# which does not split; under caps from 16 to 48 KiB the run must stay on the
# GPU (no warning, no CPU profile) and give the CPU's output byte for byte
# (lib_device.sh's caps_stay_on_gpu).
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_gpuselfmap.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_device.sh"
use_device 0 "$redfox" "$tmp"
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
caps_stay_on_gpu "$redfox" "$tmp/prog.logic" "$tmp" "$tmp" 'key partitions' "" 16K 24K 32K 48K
