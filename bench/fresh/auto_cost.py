#!/usr/bin/env python3
# bench/fresh/auto_cost.py: what `--device auto` itself costs a fresh
# process: the median wall and user+sys CPU time of N fresh `redfox run`
# processes with --device cpu and with --device auto, on a tiny program
# (examples/quickstart) and on TPC-H queries from a database, for one or two
# builds (--base: the one before, measured in the same call), the CPU's and
# auto's processes alternated.
# Both devices learn in one cache folder first (auto then decides from a
# model as a user's would); auto's cost is auto's median less the CPU's.
# Owns: the auto-cost measurement of docs/BENCHMARKS.md (issue 27).
#
# usage: bench/fresh/auto_cost.py --build DIR [--base DIR] --work DIR
#          [--n 50] [--sf 0.1] [--queries 1,6,14] [--threads 16]
import argparse, os, resource, statistics, subprocess, time

def fresh(cmds, n):
    """Each command n times, alternated (a, b, a, b, ...) so that drift hits
    all alike: per command the median wall and user+sys CPU time in ms."""
    walls, cpus = [[] for _ in cmds], [[] for _ in cmds]
    for _ in range(n):
        for i, cmd in enumerate(cmds):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            walls[i].append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[i].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return [(statistics.median(w) * 1e3, statistics.median(c) * 1e3) for w, c in zip(walls, cpus)]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--base")
    ap.add_argument("--work", required=True)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--sf", default="0.1")
    ap.add_argument("--queries", default="1,6,14")
    ap.add_argument("--threads", default=str(os.cpu_count() or 1))
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.makedirs(a.work, exist_ok=True)
    builds = [("new", os.path.abspath(a.build + "/tools/redfox"))]
    if a.base:
        builds.append(("base", os.path.abspath(a.base + "/tools/redfox")))
    db = f"{a.work}/sf{a.sf}.db"
    if not os.path.isdir(db):
        subprocess.run([builds[0][1], "tpch", "gen", "--sf", a.sf, "--format", "db", "--out", db, "--jobs", a.threads],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    qs = root + "/examples/quickstart"
    cases = [("quickstart", [f"{qs}/reach.logic", "--data", qs])]
    for q in a.queries.split(","):
        src = f"{root}/tpch/queries/q{int(q):02d}.logic"
        cases.append((f"q{int(q):02d} SF {a.sf}", [root + "/tpch/queries/schema.logic", src, "--data", db]))
    print(f"median of {a.n} fresh processes: wall ms / user+sys ms\n")
    print("| program | build | cpu | auto | auto's cost (wall / cpu) |")
    print("| --- | --- | --- | --- | --- |")
    for name, args in cases:
        for tag, redfox in builds:
            cache = f"{a.work}/cache-{tag}"
            common = [redfox, "run"] + args + ["--threads", a.threads, "--cache-dir", cache, "--out", a.work + "/out"]
            for dev in ("cpu", "gpu", "cpu"):  # the model learns both devices first
                subprocess.run(common + ["--device", dev], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            c, u = fresh([common + ["--device", "cpu"], common + ["--device", "auto"]], a.n)
            print(f"| {name} | {tag} | {c[0]:.2f} / {c[1]:.2f} | {u[0]:.2f} / {u[1]:.2f} | "
                  f"{u[0] - c[0]:+.2f} / {u[1] - c[1]:+.2f} |", flush=True)

if __name__ == "__main__":
    main()
