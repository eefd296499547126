#!/bin/bash
# bench/fresh/hold_table.sh BUILD LIBDUCKDB_SO SQL_DIR [WORK] [SF]: fresh processes of TPC-H q06,
# q01 and q18 (SF 10 by default) from a redfox database: the GPU alone, the GPU while
# `redfox hold` runs, the CPU, and DuckDB from its own file (bench/duckdb/tpch_duck.c), a
# second apart, five rounds; then `tpch run` of the 22 queries both ways and DuckDB's 22.
# Wall from fork to exit (median of five) and peak RSS; GPU outputs checked equal to the CPU's.
# Ends with --profile's start lines of one q06 each way (cuInit's share). docs/BENCHMARKS.md,
# "Fresh process and the data path", has the numbers and the machine.
set -u
[ $# -ge 3 ] || { echo "usage: $0 BUILD LIBDUCKDB_SO SQL_DIR [WORK] [SF]" >&2; exit 2; }
R=$(cd "$1" && pwd)/tools/redfox; DUCKSO=$2; SQL=$3; W=${4:-/tmp/hold_table}; SF=${5:-10}
cd "$(dirname "$0")/../.." || exit 1
mkdir -p "$W"
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc
cc -O2 -o "$W/duck" bench/duckdb/tpch_duck.c -ldl -lm || exit 1
"$R" tpch gen --sf "$SF" --out "$W/text" --jobs "$(nproc)" >/dev/null || exit 1
"$R" import tpch/queries/schema.logic --data "$W/text" --out "$W/db" --threads "$(nproc)" >/dev/null || exit 1
for q in 01 06 18; do "$R" compile tpch/queries/schema.logic tpch/queries/q$q.logic -o "$W/q$q.rfx" || exit 1; done
"$W/duck" "$DUCKSO" "$W/text" "$SQL" "$(nproc)" 1 "$W/duck.db" 0 >/dev/null || exit 1
for q in 01 06 18; do
    "$R" run "$W/q$q.rfx" --data "$W/db" --device gpu --out "$W/g$q" >/dev/null &&
        "$R" run "$W/q$q.rfx" --data "$W/db" --device cpu --out "$W/c$q" >/dev/null &&
        diff -r "$W/g$q" "$W/c$q" >/dev/null && echo "q$q: gpu = cpu" || { echo "q$q: outputs differ"; exit 1; }
done
python3 - "$R" "$W" "$DUCKSO" "$SQL" <<'P'
import os, subprocess, sys, time, statistics as st
R, W, so, sql = sys.argv[1:5]
def timed(cmd):
    t0 = time.monotonic(); p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0); return time.monotonic() - t0, ru.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)
res = {}
def rec(k, cmd):
    time.sleep(1); w, r, rc = timed(cmd); res.setdefault(k, []).append((w, r, rc))
def hold():
    h = subprocess.Popen([R, "hold"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    h.stderr.readline()  # the line comes once the driver is held
    return h
duck = [f"{W}/duck", so, f"{W}/text", sql, str(os.cpu_count()), "1", f"{W}/duck.db"]
run = lambda q, d: [R, "run", f"{W}/q{q}.rfx", "--data", f"{W}/db", "--device", d, "--out", f"{W}/o"]
tpch = [R, "tpch", "run", "--data", f"{W}/db", "--device", "gpu", "--out", f"{W}/t"]
for rnd in range(5):
    for q in ("06", "01", "18"):
        rec(f"q{q} gpu", run(q, "gpu")); rec(f"q{q} cpu", run(q, "cpu")); rec(f"q{q} duckdb", duck + [str(int(q))])
    h = hold(); time.sleep(1)
    for q in ("06", "01", "18"):
        rec(f"q{q} gpu, redfox hold", run(q, "gpu"))
    if rnd < 2: rec("tpch run 22 gpu, redfox hold", tpch)
    h.terminate(); h.wait()
    if rnd < 2:
        rec("tpch run 22 gpu", tpch); rec("duckdb 22 from file", duck + ["all"])
for k, v in res.items():
    ws = sorted(x[0] for x in v)
    print(f"{k:30s} n={len(v)} min {ws[0]:.3f} med {st.median(ws):.3f} max {ws[-1]:.3f} s  rss {max(x[1] for x in v):.0f} MB  rc {set(x[2] for x in v)}")
P
"$R" hold --seconds 30 2>"$W/hold.err" & sleep 2; echo "-- q06 --profile, redfox hold running: $(cat "$W/hold.err")"
"$R" run "$W/q06.rfx" --data "$W/db" --device gpu --out "$W/o" --profile 2>&1 | grep -i -E 'start|process|copy' | head -8
kill %1; wait; sleep 1; echo "-- q06 --profile alone"
"$R" run "$W/q06.rfx" --data "$W/db" --device gpu --out "$W/o" --profile 2>&1 | grep -i -E 'start|process|copy' | head -8
