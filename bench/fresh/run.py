#!/usr/bin/env python3
# bench/fresh/run.py: what a user waits for, from a fresh process: TPC-H queries
# run by `redfox run` from text files and from a redfox database, on the GPU and
# the CPU, with DuckDB beside them (from its .tbl load and from its own database
# file), on the same machine in the same call.
# Owns: the fresh-process data-path benchmark of docs/BENCHMARKS.md.
#
# usage: bench/fresh/run.py --build DIR --work DIR [--sf 10] [--queries 1,6,18]
#          [--base DIR] [--duckdb LIB.so[.xz]] [--sql DIR] [--threads 16]
#          [--devices gpu,cpu,auto] [--text yes|no] [--budget SECONDS] [--cold yes|no]
# Every process is timed from fork to exit (wall) with its peak RSS (wait4).
# Each run is made twice; the table shows both (the first pays the page cache
# and the GPU's JIT cache, the second is what a user sees next time).
# --base DIR: a second build measured the same way in the same call (before/
# after comparisons). The data is generated once under --work and reused.
# --devices may name auto (the placement model chooses; it learns from the
# gpu and cpu runs before it, in the default cache folder). --cold yes adds
# a `tpch run` of the 22 queries with an empty --cache-dir (NVRTC and the
# JIT compile every query's GPU code in that run).
import argparse, json, lzma, os, shutil, subprocess, sys, time

def timed(cmd, log, cwd=None):
    t0 = time.monotonic()
    with open(log, "ab") as f:
        f.write(("$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        p = subprocess.Popen(cmd, stdout=f, stderr=f, cwd=cwd)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_maxrss / 1024.0, rc

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--base")
    ap.add_argument("--work", required=True)
    ap.add_argument("--sf", default="10")
    ap.add_argument("--queries", default="1,6,18")
    ap.add_argument("--duckdb")
    ap.add_argument("--sql")
    ap.add_argument("--threads", default=str(os.cpu_count() or 1))
    ap.add_argument("--devices", default="gpu,cpu")
    ap.add_argument("--text", default="yes")
    ap.add_argument("--budget", type=float, default=540.0)
    ap.add_argument("--cold", default="no")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    start = time.monotonic()
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "fresh.log")
    rows = []
    def row(what, wall, rss, rc, note=""):
        rows.append({"what": what, "wall_s": round(wall, 3), "rss_mb": round(rss), "rc": rc, "note": note})
        print(f"{what:58s} {wall:8.3f} s {rss:8.0f} MB  rc {rc} {note}", flush=True)
    def left():
        return a.budget - (time.monotonic() - start)
    builds = [("new", os.path.abspath(a.build))]
    if a.base:
        builds.insert(0, ("base", os.path.abspath(a.base)))
    rf = builds[-1][1] + "/tools/redfox"
    text = f"{work}/sf{a.sf}"
    if not os.path.exists(text + "/.done"):
        shutil.rmtree(text, ignore_errors=True)
        w, r, rc = timed([rf, "tpch", "gen", "--sf", a.sf, "--out", text], log)
        row(f"tpch gen --sf {a.sf} (text)", w, r, rc)
        if rc: sys.exit("gen failed: see " + log)
        open(text + "/.done", "w").close()
    qs = [int(q) for q in a.queries.split(",")]
    for name, b in builds:
        rfb = b + "/tools/redfox"
        db = f"{work}/sf{a.sf}-{name}.db"
        shutil.rmtree(db, ignore_errors=True)
        w, r, rc = timed([rfb, "import", root + "/tpch/queries/schema.logic", "--data", text, "--out", db,
                          "--threads", a.threads], log)
        row(f"[{name}] redfox import SF {a.sf} text -> db", w, r, rc)
        for q in qs:
            rfx = f"{work}/q{q:02d}-{name}.rfx"
            w, r, rc = timed([rfb, "compile", root + "/tpch/queries/schema.logic",
                              root + f"/tpch/queries/q{q:02d}.logic", "-o", rfx], log)
            if rc: row(f"[{name}] compile q{q:02d}", w, r, rc); continue
            for dev in a.devices.split(","):
                sources = [("db", db)] + ([("text", text)] if a.text == "yes" else [])
                for src, d in sources:
                    for k in (1, 2):
                        if left() < 20: print("budget spent", flush=True); break
                        out = f"{work}/out-{name}-{dev}-{src}-q{q:02d}"
                        w, r, rc = timed([rfb, "run", rfx, "--data", d, "--device", dev, "--out", out,
                                          "--threads", a.threads], log)
                        row(f"[{name}] q{q:02d} {dev} from {src} run {k}", w, r, rc)
                # one run with --profile, for where the time goes (log only)
                if left() > 20:
                    timed([rfb, "run", rfx, "--data", db, "--device", dev, "--out", f"{work}/prof",
                           "--threads", a.threads, "--profile"], log)
        for dev in a.devices.split(","):
            if left() < 30: break
            w, r, rc = timed([rfb, "tpch", "run", "--data", db, "--device", dev, "--out",
                              f"{work}/tpch-{name}-{dev}"], log)
            row(f"[{name}] tpch run 22 queries {dev} from db (whole process)", w, r, rc)
            if a.cold == "yes" and dev != "cpu" and left() > 60:
                cold = f"{work}/cold-cache-{name}-{dev}"
                shutil.rmtree(cold, ignore_errors=True)
                w, r, rc = timed([rfb, "tpch", "run", "--data", db, "--device", dev, "--out",
                                  f"{work}/tpch-{name}-{dev}-cold", "--cache-dir", cold], log)
                row(f"[{name}] tpch run 22 queries {dev} from db, empty cache (whole process)", w, r, rc)
    # outputs of the builds and devices agree
    for q in qs:
        outs = [f"{work}/{d}" for d in sorted(os.listdir(work)) if d.startswith("out-") and d.endswith(f"q{q:02d}")]
        files = []
        for o in outs:
            for f in sorted(os.listdir(o)):
                if f.endswith(".csv"): files.append(open(os.path.join(o, f), "rb").read())
        same = len(set(files)) <= 1
        print(f"q{q:02d}: {len(files)} outputs, {'identical' if same else 'DIFFER'}", flush=True)
        rows.append({"what": f"q{q:02d} outputs identical", "ok": same})
    if a.duckdb and a.sql and left() > 60:
        lib = a.duckdb
        if lib.endswith(".xz"):
            dst = f"{work}/libduckdb.so"
            if not os.path.exists(dst):
                with lzma.open(lib) as i, open(dst, "wb") as o: shutil.copyfileobj(i, o)
            lib = dst
        duck = f"{work}/tpch_duck"
        subprocess.run(["cc", "-O2", "-o", duck, root + "/bench/duckdb/tpch_duck.c", "-ldl", "-lm"], check=True)
        ddb = f"{work}/sf{a.sf}.duckdb"
        for f in (ddb, ddb + ".wal"):
            if os.path.exists(f): os.remove(f)
        w, r, rc = timed([duck, lib, text, a.sql, a.threads, "1", ddb, "0"], log)
        row(f"duckdb load SF {a.sf} .tbl -> database file", w, r, rc)
        for q in qs:
            for k in (1, 2):
                w, r, rc = timed([duck, lib, text, a.sql, a.threads, "1", ddb, str(q)], log)
                row(f"duckdb q{q:02d} from its database file run {k}", w, r, rc)
        if left() > 60:
            w, r, rc = timed([duck, lib, text, a.sql, a.threads, "1", ddb, "all"], log)
            row("duckdb 22 queries from its database file (whole process)", w, r, rc)
        if left() > 60:
            w, r, rc = timed([duck, lib, text, a.sql, a.threads, "1", "-", "all"], log)
            row(f"duckdb load .tbl in memory + 22 queries (whole process)", w, r, rc)
    with open(f"{work}/fresh.json", "w") as f:
        json.dump(rows, f, indent=1)
    print(f"log: {log}")

if __name__ == "__main__":
    main()
