#!/usr/bin/env python3
# bench/fresh/auto_table.py: is `--device auto` within 10 % of the better
# device? Every TPC-H query at the scale factors given, and every program of
# the e2e suite, run as a fresh `redfox run` process on the GPU, on the CPU
# and with auto (second of two runs each, wall from fork to exit), and each
# query's run time repeated in one process (`redfox run --repeat 3`, the
# third run's time from --profile). Prints one markdown table per scale
# factor and a summary line; auto's choice is read from --profile.
# Owns: the placement benchmark of docs/BENCHMARKS.md (issue 27).
#
# usage: bench/fresh/auto_table.py --build DIR --work DIR [--sfs 0.1,1,10]
#          [--threads 16] [--e2e yes|no] [--budget SECONDS]
# Auto learns from the gpu and cpu runs before it (the default cache folder),
# as a user's runs would teach it.
import argparse, os, re, subprocess, sys, time

def timed(cmd, log):
    t0 = time.monotonic()
    with open(log, "ab") as f:
        f.write(("$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, err = p.communicate()
        f.write(err)
    return time.monotonic() - t0, p.returncode, err.decode(errors="replace")

def chose(err):
    m = re.search(r"-> chose (\w+)", err)
    return m.group(1) if m else "?"

def repeat_run(err):
    # the last "run N of M" line of --repeat, else the profile's run time
    runs = re.findall(r"run \d+ of \d+ \(device \w+\): load [0-9.]+ s, run ([0-9.]+) s", err)
    if runs:
        return float(runs[-1])
    m = re.search(r"profile \(device \w+\): load [0-9.]+ s, run ([0-9.]+) s", err)
    return float(m.group(1)) if m else float("nan")

def measure(redfox, rfx, data, threads, log, repeat):
    row = {}
    for dev in ("gpu", "cpu", "auto"):
        walls = []
        for _ in range(2):
            w, rc, err = timed([redfox, "run", rfx, "--data", data, "--device", dev, "--threads", threads,
                                "--profile", "--out", log + ".out"], log)
            walls.append(w if rc == 0 else float("nan"))
        row[dev] = walls[-1]
        if dev == "auto":
            row["chose"] = chose(err)
    if repeat:
        for dev in ("gpu", "cpu", "auto"):
            w, rc, err = timed([redfox, "run", rfx, "--data", data, "--device", dev, "--threads", threads,
                                "--profile", "--repeat", "3", "--out", log + ".out"], log)
            row["r" + dev] = repeat_run(err) if rc == 0 else float("nan")
            if dev == "auto":
                row["rchose"] = chose(err)
    return row

def verdict(a, g, c):
    ok = [x for x in (g, c) if x == x]  # a device that failed (nan) is not the better one
    best = min(ok) if ok else float("nan")
    return a / best if best > 0 else float("nan")

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--sfs", default="0.1,1,10")
    ap.add_argument("--threads", default=str(os.cpu_count() or 1))
    ap.add_argument("--e2e", default="yes")
    ap.add_argument("--budget", type=float, default=540.0)
    a = ap.parse_args()
    t_start = time.monotonic()
    left = lambda: a.budget - (time.monotonic() - t_start)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    redfox = os.path.abspath(a.build + "/tools/redfox")
    os.makedirs(a.work, exist_ok=True)
    log = a.work + "/auto.log"
    schema = root + "/tpch/queries/schema.logic"
    within = total = 0
    for sf in a.sfs.split(","):
        db = f"{a.work}/sf{sf}.db"
        if not os.path.isdir(db):
            subprocess.run([redfox, "tpch", "gen", "--sf", sf, "--format", "db", "--out", db, "--jobs", a.threads],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"\nSF {sf}: wall of a fresh process (s), second of two; repeated: the third run of --repeat 3 (s)\n")
        print("| query | GPU | CPU | auto | chose | auto / best | GPU rep. | CPU rep. | auto rep. | chose | auto / best |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for q in range(1, 23):
            if left() < 20:
                print("(budget spent)")
                break
            rfx = f"{a.work}/q{q:02d}.rfx"
            if not os.path.exists(rfx):
                subprocess.run([redfox, "compile", schema, f"{root}/tpch/queries/q{q:02d}.logic", "-o", rfx],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            r = measure(redfox, rfx, db, a.threads, log, True)
            v, rv = verdict(r["auto"], r["gpu"], r["cpu"]), verdict(r["rauto"], r["rgpu"], r["rcpu"])
            within += (v <= 1.10) + (rv <= 1.10)
            total += 2
            print(f"| q{q:02d} | {r['gpu']:.3f} | {r['cpu']:.3f} | {r['auto']:.3f} | {r['chose']} | {v:.2f} | "
                  f"{r['rgpu']:.4f} | {r['rcpu']:.4f} | {r['rauto']:.4f} | {r['rchose']} | {rv:.2f} |", flush=True)
    if a.e2e == "yes" and left() > 30:
        data = root + "/tests/e2e/data"
        print("\ne2e suite: wall of a fresh process (s), second of two\n")
        print("| program | GPU | CPU | auto | chose | auto / best |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name in sorted(os.listdir(root + "/tests/e2e")):
            if not name.endswith(".logic") or left() < 10:
                continue
            rfx = f"{a.work}/e2e_{name[:-6]}.rfx"
            if subprocess.run([redfox, "compile", f"{root}/tests/e2e/{name}", "-o", rfx],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
                continue
            r = measure(redfox, rfx, data, a.threads, log, False)
            v = verdict(r["auto"], r["gpu"], r["cpu"])
            within += v <= 1.10
            total += 1
            print(f"| {name[:-6]} | {r['gpu']:.3f} | {r['cpu']:.3f} | {r['auto']:.3f} | {r['chose']} | {v:.2f} |",
                  flush=True)
    print(f"\nauto within 10 % of the better device: {within} of {total}")

if __name__ == "__main__":
    main()
