#!/bin/bash
# bench/fresh/uvm_gap.sh BUILD RFX DATA [GAPS]: how long after a GPU process ends the next fresh one
# still finds the GPU registered with the driver's unified-memory module (a short cuInit). Runs
# RFX on the GPU in fresh processes, each GAP seconds after the last one ended (default: 0.2 0.5 1
# 1.5 2 3 5, each three times, in turn), and prints --profile's cuInit and the wall per gap.
set -u
[ $# -ge 3 ] || { echo "usage: $0 BUILD RFX DATA [GAPS]" >&2; exit 2; }
R=$(cd "$1" && pwd)/tools/redfox; RFX=$2; DATA=$3; GAPS=${4:-"0.2 0.5 1 1.5 2 3 5"}
python3 - "$R" "$RFX" "$DATA" $GAPS <<'P'
import re, subprocess, sys, time, statistics as st
R, rfx, data, gaps = sys.argv[1], sys.argv[2], sys.argv[3], [float(g) for g in sys.argv[4:]]
res = {}
subprocess.run([R, "run", rfx, "--data", data, "--device", "gpu", "--out", "/tmp/uvm_gap_o"], capture_output=True)
for rnd in range(3):
    for g in gaps:
        time.sleep(g)
        t0 = time.monotonic()
        p = subprocess.run([R, "run", rfx, "--data", data, "--device", "gpu", "--out", "/tmp/uvm_gap_o", "--profile"],
                           capture_output=True, text=True)
        w = time.monotonic() - t0
        m = re.search(r"driver and cuInit ([0-9.]+) ms", p.stderr)
        res.setdefault(g, []).append((float(m.group(1)) if m else float("nan"), w))
for g in gaps:
    v = res[g]
    print(f"gap {g:4.1f} s: cuInit {' '.join(f'{c:6.1f}' for c, _ in v)} ms; wall {' '.join(f'{w:.3f}' for _, w in v)} s")
P
