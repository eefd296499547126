#!/usr/bin/env python3
# bench/datalog/run.py: the Datalog benchmark suite's driver (README.md here).
#
# Owns: the size presets, running each benchmark on redfox (GPU, CPU) and on
# Soufflé, comparing their answers (and the generator's reference answers),
# and the result table (printed, and written as OUT/datalog.md and .csv).
#
# usage: run.py --build BUILD [--out OUT] [--sizes ci|small|gpu|lftj] [--only tc,sg,...]
#               [--engines gpu,cpu,souffle] [--gpu auto|yes|no] [--souffle DIR|ARCHIVE]
#               [--souffle-interpret] [--redfox-arg ARG] [--threads N] [--repeat N] [--timeout S] [--budget S] [--check] [--programs DIR]
#
# Python 3 standard library only. Every process is timed from start to exit
# (wall clock) and its peak resident memory comes from its own rusage (wait4).
# redfox's programs are compiled to .rfx once, before any timed run (as
# Soufflé's are). redfox runs a benchmark as separate processes: on the GPU one run with
# --profile (whole-process time, host RSS, GPU peak memory, answers) and one
# with --repeat N (the fastest run after the first: load/run split, kernels
# already loaded); on the CPU one run with --profile (its load/run split).
# Soufflé programs are compiled once (souffle -o, in parallel, cached in OUT)
# and run with -jN. Answers are a count and an order-free checksum per result
# relation (dlgen.c, tuple_hash); they must be equal across engines, and equal
# to dlgen's reference with --check. Exit status 1 when any answer differs or
# any engine fails, 2 for bad usage.
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHES = ["tc", "sg", "reach", "csda", "cspa", "tri", "clique4", "hops", "sssp", "cc"]

# (benchmark, size label, dlgen parameters). ci: inputs small enough for
# dlgen's quadratic reference (--check) and for the GPU emulator; small: a
# few seconds each on a laptop; gpu: 100 M+ result tuples for TC, SG and
# REACH, sized so that the whole suite with Soufflé on 16 threads fits in
# about 6 minutes on the lent H100 host (bench/datalog/README.md).
SIZES = {
    "ci": [
        ("tc", "u300", ["graph=uniform", "n=300", "m=600"]),
        ("tc", "grid", ["graph=grid", "n=400", "w=20", "keep=90"]),
        ("sg", "tree", ["graph=layered", "n=400", "w=25", "extra=40"]),
        ("reach", "rmat", ["graph=rmat", "n=1000", "m=3000", "sources=8"]),
        ("csda", "cfg", ["graph=cfg", "n=2000", "far=5", "sources=10"]),
        ("cspa", "c600", ["n=600", "assign=300", "deref=500", "alpha=3"]),
        ("tri", "rmat", ["graph=rmat", "n=512", "m=3000"]),
        ("clique4", "rmat", ["graph=rmat", "n=512", "m=3000"]),
        ("hops", "rmat", ["graph=rmat", "n=2000", "m=5000", "sources=2"]),
        ("sssp", "rmat", ["graph=rmat", "n=2000", "m=5000", "sources=2"]),
        ("cc", "uniform", ["graph=uniform", "n=3000", "m=2400"]),
    ],
    "small": [
        ("tc", "u2000", ["graph=uniform", "n=2000", "m=8000"]),
        ("sg", "tree", ["graph=layered", "n=20001", "w=500"]),
        ("reach", "rmat", ["graph=rmat", "n=65536", "m=262144", "sources=50"]),
        ("csda", "cfg", ["graph=cfg", "n=200000", "far=5", "sources=50"]),
        ("cspa", "c20k", ["n=20000", "assign=7000", "deref=20000", "alpha=3"]),
        ("tri", "rmat", ["graph=rmat", "n=65536", "m=500000"]),
        ("clique4", "rmat", ["graph=rmat", "n=8192", "m=40000"]),
        ("hops", "rmat", ["graph=rmat", "n=200000", "m=800000", "sources=1"]),
        ("sssp", "rmat", ["graph=rmat", "n=200000", "m=800000", "sources=1"]),
        ("cc", "uniform", ["graph=uniform", "n=200000", "m=160000"]),
    ],
    "gpu": [
        ("tc", "u10500", ["graph=uniform", "n=10500", "m=42000"]),
        ("sg", "tree", ["graph=layered", "n=52001", "w=2000"]),
        ("reach", "rmat", ["graph=rmat", "n=1048576", "m=4194304", "sources=300"]),
        ("csda", "cfg", ["graph=cfg", "n=2000000", "far=5", "sources=55"]),
        ("cspa", "c400k", ["n=400000", "assign=120000", "deref=400000", "alpha=3"]),
        ("tri", "rmat", ["graph=rmat", "n=131072", "m=1000000"]),
        ("clique4", "rmat", ["graph=rmat", "n=16384", "m=100000"]),
        ("hops", "rmat", ["graph=rmat", "n=1000000", "m=4000000", "sources=1"]),
        ("sssp", "rmat", ["graph=rmat", "n=1000000", "m=4000000", "sources=1"]),
        ("cc", "uniform", ["graph=uniform", "n=1000000", "m=800000"]),
        ("reach", "grid", ["graph=grid", "n=250000", "w=500", "keep=90", "sources=400"]),
    ],
    # the worst-case-optimal join's target (issue 26): triangles of an R-MAT graph
    # of 10 M edges (20 M rows, both directions); run it twice, once with
    # --redfox-arg=--no-lftj, for the binary-join plan on the same GPU
    "lftj": [
        ("tri", "rmat10m", ["graph=rmat", "n=1048576", "m=10000000"]),
        ("clique4", "rmat1m", ["graph=rmat", "n=262144", "m=1000000"]),
    ],
}


def fail_usage(msg):
    print("run.py: " + msg, file=sys.stderr)
    sys.exit(2)


def timed_rss(cmd, env=None, timeout=None):
    """Runs cmd: (exit status or 'timeout', wall seconds, peak RSS MB, stdout+stderr).

    The peak RSS comes from GNU time (/usr/bin/time -f %M) where there is one,
    else from wait4's rusage, which also counts the forked Python (~20 MB)."""
    t0 = time.monotonic()
    outpath = os.path.join(TMPDIR, "proc.out")
    rsspath = os.path.join(TMPDIR, "proc.rss")
    gnu_time = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
    if gnu_time:
        cmd = [gnu_time, "-f", "%M", "-o", rsspath, "--"] + cmd
    with open(os.devnull, "rb") as devnull, open(outpath, "wb") as outfile:
        p = subprocess.Popen(cmd, stdin=devnull, stdout=outfile, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)
        deadline = None if timeout is None else t0 + timeout
        while True:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                status = os.waitstatus_to_exitcode(st)
                rss = ru.ru_maxrss / 1024.0  # kilobytes on Linux
                break
            if deadline is not None and time.monotonic() > deadline:
                os.killpg(p.pid, 9)
                os.wait4(p.pid, 0)
                status, rss = "timeout", None
                break
            time.sleep(0.005)
        p.returncode = -9 if status == "timeout" else status
    wall = time.monotonic() - t0
    with open(outpath, "rb") as fh:
        out = fh.read().decode(errors="replace")
    if gnu_time and status != "timeout":
        try:
            with open(rsspath) as fh:
                rss = int(fh.read().split()[-1]) / 1024.0
        except (OSError, ValueError, IndexError):
            pass
    return status, wall, rss, out


def read_stats(folder, header):
    """{relation: (count, checksum)} from one engine's output files.

    redfox's --format csv has a header row and commas (an older redfox: '|');
    Soufflé's .csv output has tabs and no header."""
    res = {}
    if not os.path.isdir(folder):
        return res
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".csv"):
            continue
        with open(os.path.join(folder, f)) as fh:
            lines = [ln.rstrip("\n") for ln in fh if ln.strip()]
        if header and lines:
            lines = lines[1:]
        n, s = 0, 0
        if lines:
            parts = re.split(r"[,|\t]", lines[0])
            n, s = int(parts[0]), int(parts[1])
        res[f[:-4]] = (n, s)
    return res


def read_expected(folder):
    path = os.path.join(folder, "expected.txt")
    if not os.path.exists(path):
        return None
    res = {}
    with open(path) as fh:
        for ln in fh:
            name, n, s = ln.split()
            res[name] = (int(n), int(s))
    return res


def fmt_s(x):
    return "-" if x is None else ("%.3f" % x if x < 10 else "%.2f" % x)


def fmt_ms(x):
    return "-" if x is None else ("%.1f" % (x * 1e3) if x < 10 else "%.0f" % (x * 1e3))


def fmt_mb(x):
    return "-" if x is None else "%.0f" % x


def ensure_dlgen(args):
    built = os.path.join(args.build, "bench", "dlgen")
    if os.path.exists(built) and not args.rebuild_dlgen:
        return built
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        fail_usage("no dlgen in BUILD/bench and no C compiler to build it")
    exe = os.path.join(args.out, "dlgen")
    subprocess.check_call([cc, "-std=c11", "-O2", "-o", exe, os.path.join(HERE, "dlgen.c")])
    return exe


def souffle_home(args):
    """The souffle-2.5 folder: given, or unpacked from the archive into OUT."""
    src = args.souffle
    if os.path.isdir(src):
        return os.path.abspath(src)
    if not os.path.isfile(src):
        fail_usage("--souffle: no such folder or archive: " + src)
    dest = os.path.join(args.out, "peer")
    home = os.path.join(dest, "souffle-2.5")
    if not os.path.isdir(home):
        os.makedirs(dest, exist_ok=True)
        with tarfile.open(src) as tf:
            tf.extractall(dest)
    if not os.path.isdir(home):
        fail_usage("--souffle: the archive holds no souffle-2.5/")
    return home


def start_souffle_compiles(args, benches, home):
    """Starts `souffle -o` for every program not compiled yet; returns {bench: (binary, Popen or None)}."""
    env = dict(os.environ)
    env["PATH"] = os.path.join(home, "bin") + os.pathsep + env.get("PATH", "")
    if args.souffle_interpret:
        return {b: (None, None, None) for b in benches}, env
    bindir = os.path.join(args.out, "souffle-bin")
    os.makedirs(bindir, exist_ok=True)
    jobs = {}
    for b in benches:
        dl = os.path.join(args.programs, b + ".dl")
        with open(dl, "rb") as fh:
            tag = hashlib.sha256(fh.read()).hexdigest()[:12]
        exe = os.path.join(bindir, "%s-%s" % (b, tag))
        if os.path.exists(exe):
            jobs[b] = (exe, None, None)
            continue
        log = open(exe + ".log", "w")
        p = subprocess.Popen(["souffle", "-j%d" % args.threads, "-o", exe, dl], env=env, stdout=log,
                             stderr=subprocess.STDOUT, cwd=bindir)
        jobs[b] = (exe, p, log)
    return jobs, env


def gpu_available(args):
    if args.gpu == "yes":
        return True
    if args.gpu == "no":
        return False
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    return subprocess.call([smi, "-L"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0


def parse_profile(out):
    m = re.search(r"profile \(device (\w+)\): load ([0-9.]+) s, run ([0-9.]+) s", out)
    peak = re.search(r"peak device memory (\d+) bytes", out)
    return (float(m.group(2)) if m else None, float(m.group(3)) if m else None,
            int(peak.group(1)) / 1e6 if peak else None)


def parse_repeat(out):
    runs = [(float(a), float(b)) for a, b in re.findall(r"run \d+ of \d+ \(device \w+\): load ([0-9.]+) s, run ([0-9.]+) s", out)]
    if not runs:
        return None, None
    warm = runs[1:] if len(runs) > 1 else runs
    best = min(warm, key=lambda r: r[1])
    return best


def run_timeout(args):
    """Seconds the next engine run may take: --timeout, cut to what --budget leaves."""
    if not args.budget:
        return args.timeout
    return max(1.0, min(args.timeout, DEADLINE - time.monotonic()))


def budget_spent(args):
    return bool(args.budget) and DEADLINE - time.monotonic() < 5


def run_redfox(args, redfox, prog, data, device, workdir):
    """One benchmark on one redfox device: a dict of measurements and answers."""
    r = {"ok": False}
    if budget_spent(args):
        return {"ok": False, "error": "skipped (--budget spent)"}
    base = [redfox, "run", prog, "--data", data, "--device", device, "--format", "csv"] + args.redfox_arg
    if device == "cpu":
        base += ["--threads", str(args.threads)]
    out1 = os.path.join(workdir, "out-" + device)
    shutil.rmtree(out1, ignore_errors=True)
    st, wall, rss, out = timed_rss(base + ["--profile", "--out", out1], timeout=run_timeout(args))
    if st != 0:
        r["error"] = "timeout" if st == "timeout" else "exit %s: %s" % (st, out.strip().splitlines()[-1:] if out.strip() else "")
        return r
    load, run, peak = parse_profile(out)
    r.update(ok=True, whole=wall, rss=rss, load=load, run=run, gpu_peak=peak, answers=read_stats(out1, True))
    if device == "gpu" and args.repeat > 1 and not budget_spent(args):
        out2 = os.path.join(workdir, "out-gpu-repeat")
        shutil.rmtree(out2, ignore_errors=True)
        st, _, _, out = timed_rss(base + ["--repeat", str(args.repeat), "--out", out2], timeout=run_timeout(args))
        if st != 0:
            r.update(ok=False, error="--repeat: " + ("timeout" if st == "timeout" else "exit %s" % st))
            return r
        load, run = parse_repeat(out)
        if run is not None:
            r["load"], r["run"] = load, run
        if read_stats(out2, True) != r["answers"]:
            r.update(ok=False, error="--repeat gave other answers")
    return r


def run_souffle(args, bench, exe, env, data, workdir):
    r = {"ok": False}
    if budget_spent(args):
        return {"ok": False, "error": "skipped (--budget spent)"}
    out = os.path.join(workdir, "out-souffle")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    if exe is None:  # --souffle-interpret
        cmd = ["souffle", "-j%d" % args.threads, "-F", data, "-D", out, os.path.join(args.programs, bench + ".dl")]
    else:
        cmd = [exe, "-j%d" % args.threads, "-F", data, "-D", out]
    st, wall, rss, text = timed_rss(cmd, env=env, timeout=run_timeout(args))
    if st != 0:
        r["error"] = "timeout" if st == "timeout" else "exit %s: %s" % (st, text.strip()[-200:])
        return r
    r.update(ok=True, whole=wall, rss=rss, answers=read_stats(out, False))
    return r


def generate_all(args, dlgen, cases):
    """Writes every case's inputs (dlgen processes in parallel); returns {(bench, label): folder}."""
    with open(dlgen, "rb") as fh:  # a rebuilt generator may draw other inputs
        gen_tag = hashlib.sha256(fh.read()).hexdigest()[:12]
    folders, running = {}, []
    for bench, label, params in cases:
        folder = os.path.join(args.out, "data", "%s-%s" % (bench, label))
        folders[(bench, label)] = folder
        stamp = os.path.join(folder, "dlgen.args")
        want = " ".join([gen_tag, bench, str(args.seed)] + params + (["--expect"] if args.check else []))
        if os.path.exists(stamp):
            with open(stamp) as fh:
                if fh.read().strip() == want:
                    continue
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        cmd = [dlgen, bench, folder, str(args.seed)] + params + (["--expect"] if args.check else [])
        while len(running) >= max(1, args.threads):
            running[0][0].wait()
            running = [r for r in running if r[0].poll() is None or finish_gen(r)]
        running.append((subprocess.Popen(cmd), stamp, want))
    for r in running:
        r[0].wait()
        finish_gen(r)
    return folders


def finish_gen(r):
    """Stamps a finished dlgen run's folder; False (so it leaves the running list)."""
    p, stamp, want = r
    if p.returncode != 0:
        fail_usage("dlgen failed: %s" % " ".join(p.args))
    with open(stamp, "w") as fh:
        fh.write(want + "\n")
    return False


def main():
    ap = argparse.ArgumentParser(description="The Datalog benchmark suite: redfox (GPU, CPU) against Soufflé.")
    ap.add_argument("--build", required=True, help="redfox build folder (BUILD/tools/redfox)")
    ap.add_argument("--out", default="dlbench-out", help="work and result folder (default dlbench-out)")
    ap.add_argument("--sizes", default="small", choices=sorted(SIZES), help="size preset (default small)")
    ap.add_argument("--only", default="", help="comma-separated benchmarks, or bench-size labels (tc,reach-grid)")
    ap.add_argument("--engines", default="gpu,cpu,souffle", help="any of gpu,cpu,souffle (default all that apply)")
    ap.add_argument("--gpu", default="auto", choices=["auto", "yes", "no"], help="run on the GPU (auto: when nvidia-smi sees one)")
    ap.add_argument("--souffle", default="", help="a souffle-2.5 folder or the souffle-2.5.tar.xz archive")
    ap.add_argument("--souffle-interpret", action="store_true",
                    help="run Soufflé's interpreter instead of compiling (quick answer checks; not for timings)")
    ap.add_argument("--redfox-arg", action="append", default=[],
                    help="an option for every redfox run (repeatable): --redfox-arg=--no-lftj")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="CPU threads for redfox CPU and Soufflé")
    ap.add_argument("--repeat", type=int, default=3, help="GPU runs in one process for the warm run time (default 3)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per engine run (default 300)")
    ap.add_argument("--budget", type=float, default=0,
                    help="seconds for the whole suite: runs are cut (and the rest skipped) to end by then")
    ap.add_argument("--seed", type=int, default=1, help="dlgen seed (default 1)")
    ap.add_argument("--check", action="store_true", help="also check answers against dlgen's reference (ci sizes)")
    ap.add_argument("--programs", default=HERE, help="folder of the .logic and .dl programs (default: this folder)")
    ap.add_argument("--rebuild-dlgen", action="store_true", help="compile dlgen.c even when BUILD has one")
    args = ap.parse_args()
    global TMPDIR, DEADLINE
    DEADLINE = time.monotonic() + args.budget
    args.out = os.path.abspath(args.out)
    args.build = os.path.abspath(args.build)
    os.makedirs(args.out, exist_ok=True)
    TMPDIR = args.out
    redfox = os.path.join(args.build, "tools", "redfox")
    if not os.access(redfox, os.X_OK):
        fail_usage("no %s (build redfox first)" % redfox)
    engines = [e for e in args.engines.split(",") if e]
    for e in engines:
        if e not in ("gpu", "cpu", "souffle"):
            fail_usage("--engines: unknown engine " + e)
    if "gpu" in engines and not gpu_available(args):
        engines.remove("gpu")
        print("run.py: no GPU found; redfox runs on the CPU only (--gpu yes to insist)", file=sys.stderr)
    if "souffle" in engines and not args.souffle:
        engines.remove("souffle")
    only = [o for o in args.only.split(",") if o]
    cases = [c for c in SIZES[args.sizes] if not only or c[0] in only or "%s-%s" % (c[0], c[1]) in only]
    if not cases:
        fail_usage("--only selects no benchmark of the %s sizes" % args.sizes)
    dlgen = ensure_dlgen(args)
    sjobs = {}
    if "souffle" in engines:
        home = souffle_home(args)
        sjobs, senv = start_souffle_compiles(args, sorted({c[0] for c in cases}), home)
    t0 = time.monotonic()
    folders = generate_all(args, dlgen, cases)
    print("inputs ready in %.1f s (%s)" % (time.monotonic() - t0, os.path.join(args.out, "data")), flush=True)
    if any(p is not None for _, p, _ in sjobs.values()):  # nothing timed runs beside the compilers
        t0 = time.monotonic()
        for b, (exe, p, log) in sorted(sjobs.items()):
            if p is None:
                continue
            try:
                rc = p.wait(timeout=run_timeout(args))
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
            log.close()
            sjobs[b] = (exe, None, None) if rc == 0 else (None, None, "souffle -o failed (%s.log)" % exe)
        print("Soufflé programs compiled in %.1f s" % (time.monotonic() - t0), flush=True)
    # redfox's programs are compiled once too (`redfox compile`: plan, kernels and
    # NVRTC's PTX into a .rfx), as a user runs a program more than once; the
    # first GPU run still JIT-links the PTX for its card (then cached)
    rfx = {}
    t0 = time.monotonic()
    os.makedirs(os.path.join(args.out, "rfx"), exist_ok=True)
    for b in sorted({c[0] for c in cases}):
        src = os.path.join(args.programs, b + ".logic")
        dst = os.path.join(args.out, "rfx", b + ".rfx")
        p = subprocess.run([redfox, "compile", src, "-o", dst], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        rfx[b] = dst if p.returncode == 0 else src
        if p.returncode != 0:
            print("run.py: redfox compile %s failed; running the .logic: %s" % (src, p.stdout.strip()), file=sys.stderr)
    print("redfox programs compiled in %.1f s" % (time.monotonic() - t0), flush=True)
    rows = []
    bad = 0
    for bench, label, params in cases:
        if budget_spent(args):
            print("run.py: --budget spent; %s %s and the rest skipped" % (bench, label), file=sys.stderr)
            bad += 1
            break
        data = folders[(bench, label)]
        work = os.path.join(args.out, "runs", "%s-%s" % (bench, label))
        os.makedirs(work, exist_ok=True)
        prog = rfx[bench]
        res = {}
        for dev in ("gpu", "cpu"):
            if dev in engines:
                res[dev] = run_redfox(args, redfox, prog, data, dev, work)
        if "souffle" in engines:
            exe, _, error = sjobs[bench]
            if error:
                res["souffle"] = {"ok": False, "error": error}
            else:
                res["souffle"] = run_souffle(args, bench, exe, senv, data, work)
        expected = read_expected(data) if args.check else None
        answers = {e: r["answers"] for e, r in res.items() if r.get("ok")}
        notes = []
        for e, r in res.items():
            if not r.get("ok"):
                notes.append("%s failed: %s" % (e, r.get("error")))
        distinct = {repr(sorted(a.items())) for a in answers.values()}
        if expected is not None:
            distinct.add(repr(sorted(expected.items())))
        if len(distinct) > 1:
            notes.append("ANSWERS DIFFER: " + "; ".join("%s %s" % (e, sorted(a.items())) for e, a in answers.items()) +
                         ("; reference %s" % sorted(expected.items()) if expected is not None else ""))
        verdict = "equal" if not notes else "NO"
        if not notes and len(answers) + (expected is not None) < 2:
            verdict = "unchecked (one engine)"
        if verdict == "equal" and expected is not None:
            verdict = "equal, = reference"
        if notes:
            bad += 1
        first = next(iter(answers.values()), None) or expected or {}
        tuples = sum(n for n, _ in first.values()) if first else None
        g, c, s = res.get("gpu", {}), res.get("cpu", {}), res.get("souffle", {})
        row = {
            "benchmark": bench, "size": label, "tuples": tuples,
            "gpu_run": g.get("run"), "gpu_whole": g.get("whole"), "gpu_peak": g.get("gpu_peak"), "gpu_rss": g.get("rss"),
            "cpu_run": c.get("run"), "cpu_whole": c.get("whole"), "cpu_rss": c.get("rss"),
            "souffle_whole": s.get("whole"), "souffle_rss": s.get("rss"), "answers": verdict, "notes": " | ".join(notes),
        }
        rows.append(row)
        print("%-8s %-7s tuples %-12s gpu %s/%s s  cpu %s/%s s  souffle %s s  %s%s" % (
            bench, label, tuples, fmt_s(row["gpu_run"]), fmt_s(row["gpu_whole"]), fmt_s(row["cpu_run"]),
            fmt_s(row["cpu_whole"]), fmt_s(row["souffle_whole"]), verdict, (" (" + row["notes"] + ")") if notes else ""),
            flush=True)
        write_tables(args, rows, engines, quiet=True)  # what is done survives a kill
    write_tables(args, rows, engines)
    return 1 if bad else 0


def write_tables(args, rows, engines, quiet=False):
    head = ["benchmark", "size", "tuples", "redfox GPU run ms", "redfox GPU whole s", "GPU peak MB",
            "redfox CPU run s", "redfox CPU whole s", "Soufflé whole s", "Soufflé / GPU run", "Soufflé / GPU whole",
            "host RSS MB (GPU, CPU, Soufflé)", "answers"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    csv = [",".join(h.replace(",", ";") for h in head)]
    for r in rows:
        ratio_run = r["souffle_whole"] / r["gpu_run"] if r["souffle_whole"] and r["gpu_run"] else None
        ratio_whole = r["souffle_whole"] / r["gpu_whole"] if r["souffle_whole"] and r["gpu_whole"] else None
        cells = [r["benchmark"], r["size"], "-" if r["tuples"] is None else "{:,}".format(r["tuples"]),
                 fmt_ms(r["gpu_run"]), fmt_s(r["gpu_whole"]), fmt_mb(r["gpu_peak"]), fmt_s(r["cpu_run"]),
                 fmt_s(r["cpu_whole"]), fmt_s(r["souffle_whole"]),
                 "-" if ratio_run is None else "%.0fx" % ratio_run, "-" if ratio_whole is None else "%.1fx" % ratio_whole,
                 "%s, %s, %s" % (fmt_mb(r["gpu_rss"]), fmt_mb(r["cpu_rss"]), fmt_mb(r["souffle_rss"])),
                 r["answers"]]
        lines.append("| " + " | ".join(cells) + " |")
        csv.append(",".join(str(x).replace(",", "") if i != len(cells) - 1 else x.replace(",", ";") for i, x in enumerate(cells)))
    notes = [r for r in rows if r["notes"]]
    text = "\n".join(lines) + "\n"
    if notes:
        text += "\n" + "\n".join("- %s %s: %s" % (r["benchmark"], r["size"], r["notes"]) for r in notes) + "\n"
    text += ("\nSizes: %s (bench/datalog/run.py); threads %d for redfox CPU and Soufflé; engines %s; "
             "GPU run = fastest of %d runs in one process after the first.\n" % (
                 args.sizes, args.threads, ",".join(engines) or "none", args.repeat))
    with open(os.path.join(args.out, "datalog.md"), "w") as fh:
        fh.write(text)
    with open(os.path.join(args.out, "datalog.csv"), "w") as fh:
        fh.write("\n".join(csv) + "\n")
    if quiet:
        return
    print()
    print(text, end="")
    print("written: %s, %s" % (os.path.join(args.out, "datalog.md"), os.path.join(args.out, "datalog.csv")))


if __name__ == "__main__":
    TMPDIR = "."
    DEADLINE = 0.0
    sys.exit(main())
