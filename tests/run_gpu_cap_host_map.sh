#!/bin/sh
# tests/run_gpu_cap_host_map.sh REDFOX: maps that the host computes on a GPU
# run (a comparison with a string made by concatenation), whose values do not
# fit under the GPU memory cap, in the emulator: once sent the whole run to
# the CPU with a warning that named no part which does not split; now read
# from and left in host memory. Under caps from 24 to 64 KiB the run must
# stay on the GPU (no warning, no CPU profile) and give the CPU's output byte
# for byte (lib_device.sh's caps_stay_on_gpu).
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_gpuhostmap.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_device.sh"
use_device 0 "$redfox" "$tmp"
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
caps_stay_on_gpu "$redfox" "$tmp/prog.logic" "$tmp" "$tmp" 'key partitions' "" 24K 32K 48K 64K
