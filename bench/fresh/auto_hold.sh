#!/bin/bash
# bench/fresh/auto_hold.sh BUILD [WORK] [SF] [QUERIES] [BASE_REDFOX]: `--device auto` beside `redfox hold` and
# alone, against both devices, fresh processes of TPC-H queries from a redfox database (SF 10,
# q01 q03 q06 q12 q14 q18 by default), a second apart, with a placement model of their own:
#   1. the model learns: each query on the CPU and on the GPU alone, twice;
#   2. a holder starts: auto once (its held start guessed), the GPU and the CPU twice, auto three times;
#   3. the holder stops: auto three times.
# BASE_REDFOX, an older build's redfox: it learns the same way with a model of its own (step 1),
# then runs auto three times beside the holder and three times alone, in the same call.
# Wall from fork to exit; auto's choice from its note. docs/BENCHMARKS.md, "`--device auto`".
set -u
[ $# -ge 1 ] || { echo "usage: $0 BUILD [WORK] [SF] [QUERIES] [BASE_REDFOX]" >&2; exit 2; }
R=$(cd "$1" && pwd)/tools/redfox; W=${2:-/tmp/auto_hold}; SF=${3:-10}; QS=${4:-"01 03 06 12 14 18"}
B=${5:+$(cd "$(dirname "$5")" && pwd)/$(basename "$5")}
cd "$(dirname "$0")/../.." || exit 1
mkdir -p "$W"
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc
[ -d "$W/db" ] || "$R" tpch gen --sf "$SF" --format db --out "$W/db" >/dev/null || exit 1
for q in $QS; do
    [ -f "$W/q$q.rfx" ] || "$R" compile tpch/queries/schema.logic tpch/queries/q$q.logic -o "$W/q$q.rfx" || exit 1
done
rm -rf "$W/cache" "$W/cache-base"
python3 - "$R" "$W" "${B:--}" $QS <<'P'
import os, subprocess, sys, time, statistics as st
R, W, B, qs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def run(q, dev, base=False):
    time.sleep(1)
    cmd = [B if base else R, "run", f"{W}/q{q}.rfx", "--data", f"{W}/db", "--device", dev, "--out", f"{W}/o",
           "--cache-dir", f"{W}/cache-base" if base else f"{W}/cache"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    w = time.monotonic() - t0
    if p.returncode: sys.exit(f"q{q} {dev}: exit {p.returncode}: {p.stderr}")
    chose = "gpu" if "running on the GPU" in p.stderr else "cpu" if dev != "gpu" else "gpu"
    return w, chose
res = {}
def rec(k, q, dev, base=False):
    w, c = run(q, dev, base); res.setdefault((q, k), []).append((w, c))
for rnd in range(2):
    for q in qs:
        rec("cpu", q, "cpu"); rec("gpu", q, "gpu")
        if B != "-": rec("base cpu", q, "cpu", True); rec("base gpu", q, "gpu", True)
h = subprocess.Popen([R, "hold"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
h.stderr.readline()
for q in qs:
    rec("auto held, guessed", q, "auto")
    for _ in range(2): rec("gpu held", q, "gpu"); rec("cpu held", q, "cpu")
    for _ in range(3): rec("auto held", q, "auto")
    if B != "-":
        for _ in range(3): rec("base auto held", q, "auto", True)
h.terminate(); h.wait()
for q in qs:
    for _ in range(3): rec("auto alone", q, "auto")
    if B != "-":
        for _ in range(3): rec("base auto alone", q, "auto", True)
med = lambda k, q: st.median(x[0] for x in res[(q, k)])
print(f"{'query':6s} {'cpu':>7s} {'gpu':>7s} {'gpu held':>9s} {'cpu held':>9s} | {'auto held (guess)':>18s} {'auto held':>16s} {'auto alone':>16s}")
for q in qs:
    ch = lambda k: "".join(c[0] for _, c in res[(q, k)])
    bh = min(med("gpu held", q), med("cpu held", q)); ba = min(med("gpu", q), med("cpu", q))
    print(f"q{q:5s} {med('cpu', q):7.3f} {med('gpu', q):7.3f} {med('gpu held', q):9.3f} {med('cpu held', q):9.3f} | "
          f"{res[(q, 'auto held, guessed')][0][0]:7.3f} {ch('auto held, guessed'):>3s} x{res[(q, 'auto held, guessed')][0][0] / bh:4.2f} "
          f"{med('auto held', q):7.3f} {ch('auto held'):>3s} x{med('auto held', q) / bh:4.2f} "
          f"{med('auto alone', q):7.3f} {ch('auto alone'):>3s} x{med('auto alone', q) / ba:4.2f}")
    if B != "-":
        print(f"{'':6s} base build: auto beside the holder {med('base auto held', q):7.3f} {ch('base auto held'):>3s} "
              f"x{med('base auto held', q) / bh:4.2f}, alone {med('base auto alone', q):7.3f} {ch('base auto alone'):>3s} "
              f"x{med('base auto alone', q) / ba:4.2f}")
print("(seconds, medians of fresh processes; letters: auto's choices in order; x: auto over the better device's median)")
P
