#!/usr/bin/env python3
# bench/datalog/part_linear.py BUILD WORK [--threads 16] [--reps 2] [--vary NAME
# --settings V,V..] [--program tc|sg]: a recursion's rounds on the CPU apart and in
# parts (TC, a linear recursion: cpu_part_linear's thresholds by default; SG, two
# joins a round), over dlgen's graphs (uniform n:m for TC, layered n:w for SG):
# wall, user and system CPU, peak RSS of each fresh process, the settings
# alternated round by round; every output equal to the first.
# Owns: the measurements behind cpu_part_linear's and cpu_part_pairs's defaults
# (runtime/rt_tuning.c, runtime/cpu/README.md).
import argparse, os, statistics, subprocess, sys, time

p = argparse.ArgumentParser()
p.add_argument("build"); p.add_argument("work")
p.add_argument("--threads", type=int, default=16); p.add_argument("--reps", type=int, default=2)
p.add_argument("--graphs", default="2000:40000,3000:12000,5000:20000,6000:24000")
p.add_argument("--settings", default="off,1048576,16777216")
p.add_argument("--extra", default="", help="more --set NAME=VALUE for every run, comma-separated")
p.add_argument("--vary", default="cpu_part_linear", help="the setting --settings gives values of")
p.add_argument("--program", default="tc", help="bench/datalog's program and dlgen benchmark (tc, sg)")
a = p.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
rf = os.path.join(a.build, "tools", "redfox")
os.makedirs(a.work, exist_ok=True)
dlgen = os.path.join(a.work, "dlgen")
subprocess.check_call(["cc", "-std=c11", "-O2", "-o", dlgen, os.path.join(here, "dlgen.c")])
for g in a.graphs.split(","):
    n, m = g.split(":")
    d = os.path.join(a.work, f"u{n}_{m}")
    shape = ["graph=uniform", f"n={n}", f"m={m}"] if a.program == "tc" else ["graph=layered", f"n={n}", f"w={m}"]
    subprocess.check_call([dlgen, a.program, d, "7"] + shape, stdout=subprocess.DEVNULL)
    res, first = {}, None
    for r in range(a.reps):
        for s in a.settings.split(","):
            out = os.path.join(d, "out_" + s)
            cmd = [rf, "run", os.path.join(here, a.program + ".logic"), "--data", d, "--device", "cpu", "--threads",
                   str(a.threads), "--set", f"{a.vary}={s}", "--out", out, "--profile"]
            for e in filter(None, a.extra.split(",")): cmd += ["--set", e]
            t0 = time.monotonic()
            pr = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            err = pr.stderr.read()
            _, status, ru = os.wait4(pr.pid, 0)
            wall = time.monotonic() - t0
            rc = os.waitstatus_to_exitcode(status)
            if rc:
                print(f"u{n}_{m} {s}: exit {rc}: {err[-500:]}"); sys.exit(1)
            stats = "".join(open(os.path.join(out, f)).read() for f in sorted(os.listdir(out)) if f.endswith(".csv"))
            if first is None: first = stats
            elif stats != first:
                print(f"u{n}_{m} {s}: outputs differ: {stats!r} against {first!r}"); sys.exit(1)
            parts = "in parts" in err
            res.setdefault(s, []).append((wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss / 1024, parts))
    print(f"{a.program} {n}:{m}: outputs {first.strip().splitlines()[-1]}")
    for s, v in res.items():
        med = lambda i: statistics.median(x[i] for x in v)
        print(f"  {a.vary}={s:9s} wall {med(0):7.3f} s (min {min(x[0] for x in v):.3f})  user {med(1):7.2f}  sys {med(2):6.2f}"
              f"  rss {max(x[3] for x in v):7.0f} MB  {'in parts' if any(x[4] for x in v) else 'apart'}")
