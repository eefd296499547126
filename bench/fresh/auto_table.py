#!/usr/bin/env python3
# bench/fresh/auto_table.py: is `--device auto` within 10 % of the better
# device, as a user feels it? Every TPC-H query at the scale factors given
# (from a database) and every program of the e2e suite (tests/e2e, its text
# inputs), each measured two ways:
#   fresh: the wall of a fresh `redfox run` process, from fork to exit, the
#     median of --n (5) per device, the devices alternated (gpu, cpu, auto,
#     gpu, cpu, auto, ...) so that drift hits all alike;
#   repeated: the wall of a whole `redfox run --repeat 3` process, the median
#     of --reps (3), alternated likewise; the third run's own time (the
#     "run 3 of 3" line) is an extra column, not the verdict: auto decides
#     for the whole process (three CPU runs may cost less than the GPU's
#     start).
#   Then the devices still in contention (auto, and gpu or cpu within 1.5x
#     of the better of the two) get more processes, up to --more (15) in all,
#     for at most --extra (3) seconds a program and kind: a process of a few
#     milliseconds varies by 10-30 % from one to the next, so a median of 3
#     could not tell a 10 % difference; a device far behind cannot be the
#     better one and gets no more.
# No --profile (it adds per-kernel timing): auto's choice is read from its
# note on stderr ("running on the CPU: ..."). Prints one markdown table per
# scale factor and one for the e2e suite, then the summary line
#   within 10 %: N of M (fresh a/b, repeated c/d)
# and every miss with its ratio and its milliseconds. --budget stops before
# the next program once spent, and still prints the summary.
# Owns: the placement benchmark of docs/BENCHMARKS.md (issue 27).
#
# usage: bench/fresh/auto_table.py --build DIR --work DIR [--sfs 0.1,1,10|none]
#          [--threads 16] [--e2e yes|no] [--budget SECONDS] [--devices gpu,cpu,auto]
#          [--n 5] [--reps 3] [--more 15] [--extra 3] [--only REGEX] [--cache-dir DIR]
# Auto learns from the gpu and cpu runs before it (the default cache folder,
# or --cache-dir), as a user's runs would teach it.
import argparse, os, re, statistics, subprocess, sys, time

WITHIN = 1.10
CLOSE = 1.5  # a device within 1.5x of the better one is still sampled (Runner.sample)
NAN = float("nan")


def chose(err):
    """The device auto's note names ("running on the CPU: ..."), lower case; '?' when none."""
    m = re.search(r"note: running on the (CPU|GPU)", err)
    return m.group(1).lower() if m else "?"


def repeat_devices(err):
    """The devices of the runs of `--repeat N` in order ("run 2 of 3 (device cpu): ...")."""
    return re.findall(r"^run \d+ of \d+ \(device (\w+)\)", err, re.M)


def third_run(err):
    """The last run's own time (s) of `--repeat N`; nan when there is none."""
    runs = re.findall(r"^run \d+ of \d+ \(device \w+\): load [0-9.]+ s, run ([0-9.]+) s", err, re.M)
    return float(runs[-1]) if runs else NAN


def verdict(row, key):
    """auto's time over the better measured device's (gpu or cpu): nan when either side is missing."""
    auto = row.get("auto" + key, NAN)
    others = [row.get(d + key, NAN) for d in ("gpu", "cpu")]
    others = [x for x in others if x == x]  # a device not run, or failed (nan), is not the better one
    if auto != auto or not others or min(others) <= 0:
        return NAN, None
    best = min(others)
    return auto / best, ("gpu" if row.get("gpu" + key, NAN) == best else "cpu")


def fmt_ms(s):
    return "-" if s != s else f"{s * 1e3:.1f}"


def fmt_ratio(r):
    return "-" if r != r else f"{r:.2f}"


class Tally:
    """The verdicts so far: counts per kind (fresh, repeated) and the misses."""

    def __init__(self):
        self.n = {"fresh": [0, 0], "repeated": [0, 0]}
        self.misses = []

    def add(self, kind, name, row, key):
        r, best = verdict(row, key)
        if r != r:
            return r
        self.n[kind][1] += 1
        if r <= WITHIN:
            self.n[kind][0] += 1
        else:
            self.misses.append(f"{name} {kind}: auto {fmt_ms(row['auto' + key])} ms ({row.get('chose' + key, '?')}) "
                               f"against {best} {fmt_ms(row[best + key])} ms: {r:.2f}, "
                               f"{(row['auto' + key] - row[best + key]) * 1e3:+.1f} ms")
        return r

    def summary(self):
        f, rp = self.n["fresh"], self.n["repeated"]
        lines = [f"within 10 %: {f[0] + rp[0]} of {f[1] + rp[1]} (fresh {f[0]}/{f[1]}, repeated {rp[0]}/{rp[1]})"]
        if self.misses:
            lines.append("misses:")
            lines += ["  " + m for m in self.misses]
        return "\n".join(lines)


class Runner:
    def __init__(self, redfox, threads, log, cache_dir):
        self.redfox, self.threads, self.log, self.cache_dir = redfox, threads, log, cache_dir

    def timed(self, cmd):
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.monotonic() - t0
        with open(self.log, "ab") as f:
            f.write(("$ " + " ".join(cmd) + f"\n# rc {p.returncode}, wall {wall:.6f} s\n").encode())
            f.write(p.stderr)
        return wall, p.returncode, p.stderr.decode(errors="replace")

    def cmd(self, prog, data, dev, extra, args):
        c = [self.redfox, "run", prog, "--data", data, "--device", dev, "--threads", self.threads,
             "--out", self.log + ".out"] + list(extra) + list(args)
        if self.cache_dir:
            c += ["--cache-dir", self.cache_dir]
        return c

    def sample(self, devices, rounds, more, extra_s, run):
        """Walls per device: `rounds` rounds over all devices, alternated; then, up to `more` rounds
        in all, only over the devices still in contention (auto, and gpu or cpu within CLOSE of the
        better of the two), until they have spent extra_s seconds more. A device far behind cannot
        be the better one, so its time is not spent on it; the close ones get the samples that make
        a median of a few-millisecond process steady. run(dev) gives (wall or nan, stderr)."""
        walls = {d: [] for d in devices}
        errs = {d: "" for d in devices}

        def one(dev):
            w, err = run(dev)
            walls[dev].append(w)
            errs[dev] = err

        for _ in range(rounds):
            for dev in devices:
                one(dev)
        med = {d: statistics.median(walls[d]) if all(w == w for w in walls[d]) else NAN for d in devices}
        base = [med[d] for d in ("gpu", "cpu") if d in med and med[d] == med[d]]
        best = min(base) if base else NAN
        close = [d for d in devices if d == "auto" or (best == best and med[d] == med[d] and med[d] <= CLOSE * best)]
        t0 = time.monotonic()
        for _ in range(rounds, more):
            if time.monotonic() - t0 >= extra_s or len(close) < 2:
                break
            for dev in close:
                one(dev)
        return walls, errs

    def measure(self, prog, data, devices, n, reps, args=(), more=0, extra_s=0.0):
        """One program: fresh walls (median of n, or up to `more` for the devices in contention)
        and, with reps > 0, whole --repeat 3 walls (median of reps, likewise), the devices
        alternated; auto's choices; nan for a failed run."""
        row = {}

        def fresh(dev):
            w, rc, err = self.timed(self.cmd(prog, data, dev, (), args))
            return (w if rc == 0 else NAN), (err if rc == 0 else None)

        walls, errs = self.sample(devices, n, max(n, more), extra_s, fresh)
        if "auto" in errs:
            row["chose"] = chose(errs["auto"]) if errs["auto"] is not None else "failed"
        for dev in devices:
            ok = [w for w in walls[dev] if w == w]
            row[dev] = statistics.median(ok) if len(ok) == len(walls[dev]) and ok else NAN
            row[dev + "_n"] = len(walls[dev])
        if reps > 0:
            third = {d: [] for d in devices}

            def repeated(dev):
                w, rc, err = self.timed(self.cmd(prog, data, dev, ("--repeat", "3"), args))
                third[dev].append(third_run(err) if rc == 0 else NAN)
                return (w if rc == 0 else NAN), (err if rc == 0 else None)

            rw, rerrs = self.sample(devices, reps, max(reps, more), extra_s, repeated)
            if "auto" in rerrs:
                ds = repeat_devices(rerrs["auto"]) if rerrs["auto"] is not None else []
                row["chose_r"] = ("/".join(ds) if len(set(ds)) > 1 else ds[0]) if ds else "failed"
            for dev in devices:
                ok = [w for w in rw[dev] if w == w]
                row[dev + "_r"] = statistics.median(ok) if len(ok) == len(rw[dev]) and ok else NAN
                t = [x for x in third[dev] if x == x]
                row[dev + "_3"] = statistics.median(t) if t else NAN
        return row


def table_head(repeated):
    cols = ["program", "GPU", "CPU", "auto", "chose", "auto / best"]
    if repeated:
        cols += ["GPU rep.", "CPU rep.", "auto rep.", "chose", "auto / best", "GPU 3rd", "CPU 3rd", "auto 3rd"]
    return "| " + " | ".join(cols) + " |\n| " + " | ".join("---" for _ in cols) + " |"


def table_row(name, row, v, rv, repeated):
    cells = [name, fmt_ms(row.get("gpu", NAN)), fmt_ms(row.get("cpu", NAN)), fmt_ms(row.get("auto", NAN)),
             row.get("chose", "-"), fmt_ratio(v)]
    if repeated:
        cells += [fmt_ms(row.get("gpu_r", NAN)), fmt_ms(row.get("cpu_r", NAN)), fmt_ms(row.get("auto_r", NAN)),
                  row.get("chose_r", "-"), fmt_ratio(rv), fmt_ms(row.get("gpu_3", NAN)),
                  fmt_ms(row.get("cpu_3", NAN)), fmt_ms(row.get("auto_3", NAN))]
    return "| " + " | ".join(cells) + " |"


def e2e_programs(root, only):
    """The e2e suite's programs that run (not those expecting an error), with their // args."""
    out = []
    d = root + "/tests/e2e"
    for name in sorted(os.listdir(d)):
        if not name.endswith(".logic") or (only and not re.search(only, name[:-6])):
            continue
        text = open(f"{d}/{name}", encoding="utf-8", errors="replace").read()
        if re.search(r"^// expect-error:", text, re.M):
            continue
        args = []
        for m in re.finditer(r"^// args: (.*)$", text, re.M):
            args += m.group(1).split()
        out.append((name[:-6], f"{d}/{name}", args))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--sfs", default="0.1,1,10", help="TPC-H scale factors; none: no TPC-H")
    ap.add_argument("--threads", default=str(os.cpu_count() or 1))
    ap.add_argument("--e2e", default="yes")
    ap.add_argument("--budget", type=float, default=540.0, help="seconds; stops before the next program once spent")
    ap.add_argument("--devices", default="gpu,cpu,auto", help="of gpu, cpu, auto (auto is what is judged)")
    ap.add_argument("--n", type=int, default=5, help="fresh processes per device and program (median)")
    ap.add_argument("--reps", type=int, default=3, help="--repeat 3 processes per device and program (median); 0: none")
    ap.add_argument("--more", type=int, default=15,
                    help="up to this many processes for the devices still in contention (auto and a device "
                         "within 1.5x of the better one), fresh and repeated alike")
    ap.add_argument("--extra", type=float, default=3.0,
                    help="seconds a program may spend on those further processes, fresh and repeated each")
    ap.add_argument("--only", default="", help="a regular expression: only the queries (q06) and e2e programs it finds")
    ap.add_argument("--cache-dir", default="", help="redfox's cache folder (default: the user's)")
    a = ap.parse_args(argv)
    devices = [d for d in a.devices.split(",") if d]
    if not devices or any(d not in ("gpu", "cpu", "auto") for d in devices) or a.n < 1 or a.reps < 0 or a.more < 0 or a.extra < 0:
        ap.error("--devices takes gpu, cpu and auto; --n at least 1; --reps at least 0")
    t_start = time.monotonic()
    left = lambda: a.budget - (time.monotonic() - t_start)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    redfox = os.path.abspath(a.build + "/tools/redfox")
    os.makedirs(a.work, exist_ok=True)
    run = Runner(redfox, a.threads, a.work + "/auto.log", a.cache_dir and os.path.abspath(a.cache_dir))
    tally = Tally()
    stopped = None
    schema = root + "/tpch/queries/schema.logic"
    sfs = [] if a.sfs in ("", "none") else a.sfs.split(",")
    for sf in sfs:
        if stopped:
            break
        db = f"{a.work}/sf{sf}.db"
        if not os.path.isdir(db):
            subprocess.run([redfox, "tpch", "gen", "--sf", sf, "--format", "db", "--out", db, "--jobs", a.threads],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"\nSF {sf}: fresh: wall of a fresh process (ms), median of {a.n} (up to {a.more} "
              f"for the devices in contention); repeated: wall of a whole `--repeat 3` process (ms), median of "
              f"{a.reps} (likewise); 3rd: the third run's own time (ms)\n")
        print(table_head(a.reps > 0))
        for q in range(1, 23):
            name = f"q{q:02d}"
            if a.only and not re.search(a.only, name):
                continue
            if left() <= 0:
                stopped = f"SF {sf} {name}"
                break
            rfx = f"{a.work}/{name}.rfx"
            if not os.path.exists(rfx):
                subprocess.run([redfox, "compile", schema, f"{root}/tpch/queries/{name}.logic", "-o", rfx],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            r = run.measure(rfx, db, devices, a.n, a.reps, (), a.more, a.extra)
            label = f"{name} SF {sf}"
            v = tally.add("fresh", label, r, "")
            rv = tally.add("repeated", label, r, "_r") if a.reps > 0 else NAN
            print(table_row(name, r, v, rv, a.reps > 0), flush=True)
    if a.e2e == "yes" and not stopped:
        data = root + "/tests/e2e/data"
        print(f"\ne2e suite (tests/e2e, text inputs): fresh: wall of a fresh process (ms), median of {a.n} "
              f"(up to {a.more} for the devices in contention); repeated: wall of a whole `--repeat 3` process "
              f"(ms), median of {a.reps} (likewise)\n")
        print(table_head(a.reps > 0))
        for name, src, args in e2e_programs(root, a.only):
            if left() <= 0:
                stopped = f"e2e {name}"
                break
            rfx = f"{a.work}/e2e_{name}.rfx"
            if subprocess.run([redfox, "compile", src, "-o", rfx], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode:
                continue
            r = run.measure(rfx, data, devices, a.n, a.reps, args, a.more, a.extra)
            v = tally.add("fresh", name, r, "")
            rv = tally.add("repeated", name, r, "_r") if a.reps > 0 else NAN
            print(table_row(name, r, v, rv, a.reps > 0), flush=True)
    if stopped:
        print(f"\n(budget of {a.budget:.0f} s spent: stopped before {stopped})")
    print("\n" + tally.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
