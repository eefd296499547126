#!/usr/bin/env python3
# tests/lattice/lattice_ref.py: inputs and independent answers for the
# recursive min/max programs (tests/e2e/lattice_*.logic).
#
# Owns: a reproducible random graph generator (directed edges, int weights,
# sources), the reference answers computed by textbook algorithms that share
# nothing with redfox (breadth-first search, Dijkstra's algorithm, union-find,
# the widest-path variant of Dijkstra, breadth-first search over node and
# parity), and the two ways the tests use them:
#   lattice_ref.py expected DIR            the e2e data (DIR/data) and .expected files
#   lattice_ref.py check REDFOX [TEST_GPU_RUN] [--seeds N] [--nodes N]
#                                          random graphs: redfox on the CPU (and the
#                                          GPU emulator) against the references
import heapq
import os
import random
import subprocess
import sys
import tempfile

PROGRAMS = ["lattice_hops", "lattice_sssp", "lattice_cc", "lattice_widest", "lattice_parity"]


def gen(seed, n, m, nsrc, maxw):
    rnd = random.Random(seed)
    edges = {}
    while len(edges) < m:
        x, y = rnd.randrange(n), rnd.randrange(n)
        if x != y and (x, y) not in edges:
            edges[(x, y)] = rnd.randint(0, maxw)
    sources = sorted(rnd.sample(range(n), nsrc))
    return sorted(edges.items()), sources


def adjacency(edges):
    adj = {}
    for (x, y), w in edges:
        adj.setdefault(x, []).append((y, w))
    return adj


def bfs(edges, sources):
    adj, dist = adjacency(edges), {s: 0 for s in sources}
    frontier = list(sources)
    while frontier:
        nxt = []
        for x in frontier:
            for y, _ in adj.get(x, []):
                if y not in dist:
                    dist[y] = dist[x] + 1
                    nxt.append(y)
        frontier = nxt
    return dist


def dijkstra(edges, sources):
    adj, dist = adjacency(edges), {}
    heap = [(0, s) for s in sources]
    while heap:
        d, x = heapq.heappop(heap)
        if x in dist:
            continue
        dist[x] = d
        for y, w in adj.get(x, []):
            if y not in dist:
                heapq.heappush(heap, (d + w, y))
    return dist


def components(edges):
    parent = {}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for (x, y), _ in edges:
        parent.setdefault(x, x)
        parent.setdefault(y, y)
    for (x, y), _ in edges:
        a, b = find(x), find(y)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return {x: min(v for v in parent if find(v) == find(x)) for x in parent}


def widest(edges, sources):
    """The greatest bottleneck over paths of one or more edges from a source."""
    adj, best = adjacency(edges), {}
    heap = []
    for s in sources:
        for y, c in adj.get(s, []):
            heapq.heappush(heap, (-c, y))
    while heap:
        c, x = heapq.heappop(heap)
        if x in best:
            continue
        best[x] = -c
        for y, k in adj.get(x, []):
            if y not in best:
                heapq.heappush(heap, (-min(-c, k), y))
    return best


def parity(edges, sources):
    adj, dist = adjacency(edges), {(s, 0): 0 for s in sources}
    frontier = [(s, 0) for s in sources]
    while frontier:
        nxt = []
        for x, p in frontier:
            for y, _ in adj.get(x, []):
                if (y, 1 - p) not in dist:
                    dist[(y, 1 - p)] = dist[(x, p)] + 1
                    nxt.append((y, 1 - p))
        frontier = nxt
    return ({x: d for (x, p), d in dist.items() if p == 0}, {x: d for (x, p), d in dist.items() if p == 1})


def table(name, cols, rows):
    out = ["%s (%d row%s)" % (name, len(rows), "" if len(rows) == 1 else "s"), "|".join(cols)]
    out += ["|".join(str(v) for v in r) for r in sorted(rows)]
    return "\n".join(out) + "\n"


def answers(edges, sources):
    """The expected tbl output of each program."""
    hops = bfs(edges, sources)
    cc = components(edges)
    even, odd = parity(edges, sources)
    return {
        "lattice_hops": table("hops", ["x", "d"], list(hops.items())) + "\n" +
                        table("reached", ["n"], [(len(hops),)]) + "\n" +
                        table("farthest", ["m"], [(max(hops.values()),)] if hops else []),
        # a program with one output prints no title
        "lattice_sssp": table("dist", ["x", "d"], list(dijkstra(edges, sources).items())).split("\n", 1)[1],
        "lattice_cc": table("cc", ["x", "c"], list(cc.items())) + "\n" +
                      table("components", ["n"], [(len(set(cc.values())),)] if cc else []),
        "lattice_widest": table("width", ["x", "c"], list(widest(edges, sources).items())).split("\n", 1)[1],
        "lattice_parity": table("even", ["x", "d"], list(even.items())) + "\n" +
                          table("odd", ["x", "d"], list(odd.items())),
    }


def write_data(d, edges, sources):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "lattice_edge.tbl"), "w") as f:
        f.writelines("%d|%d\n" % (x, y) for (x, y), _ in edges)
    with open(os.path.join(d, "lattice_wedge.tbl"), "w") as f:
        f.writelines("%d|%d|%d\n" % (x, y, w) for (x, y), w in edges)
    with open(os.path.join(d, "lattice_src.tbl"), "w") as f:
        f.writelines("%d\n" % s for s in sources)


def expected(e2e):
    edges, sources = gen(26, 60, 110, 2, 9)
    write_data(os.path.join(e2e, "data"), edges, sources)
    for prog, text in answers(edges, sources).items():
        with open(os.path.join(e2e, prog + ".expected"), "w") as f:
            f.write(text)


def check(redfox, gpu_run, seeds, nodes):
    e2e = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e")
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, seeds + 1):
            rnd = random.Random(seed * 7919)
            n = max(4, rnd.randint(nodes // 4, nodes))
            m = rnd.randint(n // 2, 3 * n)
            edges, sources = gen(seed, n, min(m, n * (n - 1)), rnd.randint(1, 3), rnd.choice([1, 9, 1000]))
            data = os.path.join(tmp, "s%d" % seed)
            write_data(data, edges, sources)
            want = answers(edges, sources)
            for prog in PROGRAMS:
                src = os.path.join(e2e, prog + ".logic")
                runs = [("cpu", [redfox, "run", src, "--data", data, "--device", "cpu", "--format", "tbl"])]
                if gpu_run and seed <= 2:  # the emulator compiles its kernels: a few runs
                    runs.append(("emulator", [gpu_run, "--compare", "--emulate", "--data", data, src]))
                for what, cmd in runs:
                    try:
                        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                    except subprocess.TimeoutExpired:
                        fails += 1
                        print("FAIL: %s on %s, seed %d: no answer within 120 s" % (prog, what, seed))
                        continue
                    if r.returncode == 77:
                        continue
                    if r.returncode != 0 or r.stdout != want[prog]:
                        fails += 1
                        print("FAIL: %s on %s, seed %d (%d nodes, %d edges, sources %s): exit %d" %
                              (prog, what, seed, n, len(edges), sources, r.returncode))
                        print(r.stderr[-2000:])
                        got, exp = r.stdout.splitlines(), want[prog].splitlines()
                        for i, (a, b) in enumerate(zip(got, exp)):
                            if a != b:
                                print("  line %d: got %r, expected %r" % (i + 1, a, b))
                                break
                        else:
                            print("  %d lines, expected %d" % (len(got), len(exp)))
    print("%d failure(s)" % fails)
    return 1 if fails else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "expected":
        expected(argv[1])
        return 0
    if len(argv) >= 2 and argv[0] == "check":
        seeds, nodes, rest = 6, 400, []
        i = 1
        while i < len(argv):
            if argv[i] in ("--seeds", "--nodes"):
                v = int(argv[i + 1])
                seeds, nodes = (v, nodes) if argv[i] == "--seeds" else (seeds, v)
                i += 2
            else:
                rest.append(argv[i])
                i += 1
        return check(rest[0], rest[1] if len(rest) > 1 else None, seeds, nodes)
    sys.stderr.write(__doc__ if __doc__ else "usage: lattice_ref.py expected DIR | check REDFOX [TEST_GPU_RUN]\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
