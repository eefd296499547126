"""api/tests/test_python_world.py RANKS PROG DATA: a Python script on several
MPI ranks through the redfox module (World.mpi, Database.run(world=...)), as
`mpirun -np RANKS python3 app.py` starts it.

Owns: joins the world, checks it has RANKS ranks, runs PROG on DATA on the
CPU with every rank, and rank 0 prints each output's name and CSV text
(api/tests/run_world.sh compares that with one process's). Exit 0 when
every check held; the failures on stderr.
"""
import sys

import redfox

want, prog, data = int(sys.argv[1]), sys.argv[2], sys.argv[3]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


w = redfox.World.mpi()
rank = w.rank
check(w.size == want, "size %d, expected %d" % (w.size, want))
check(0 <= rank < want, "rank %d" % rank)
check(1 <= w.local_size <= want, "local_size %d" % w.local_size)
check(redfox.api_level() >= 4, "api level %d" % redfox.api_level())
try:
    p = redfox.compile_files(prog)
    with redfox.Database(data) as db:
        res = db.run(p, device="cpu", threads=1, world=w, profile=True)
        st = res.stats()
        check(st["nranks"] == want and st["rank"] == rank, "stats %r" % st)
        if rank == 0:
            if want > 1:  # the profile names every rank: the run was shared
                check("rank %d of %d:" % (want - 1, want) in res.profile_text(), "profile lacks the last rank")
            for rel in res:
                sys.stdout.write(rel.name + "\n")
                rel.write(sys.stdout, "csv")
        else:
            # the same outputs, without rows: rank 0 holds them
            check(res.names() == p.outputs and all(len(rel) == 0 for rel in res),
                  "rank %d holds rows: %r" % (rank, [(rel.name, len(rel)) for rel in res]))
    sys.stdout.flush()
except redfox.Error as e:
    failures.append("rank %d: %s" % (rank, e.message))
# a run with an ended world is refused, not a crash
w.end()
try:
    redfox.Database(data).run(p, world=w)
    failures.append("a run with an ended world was not refused")
except redfox.Error:
    pass
for f in failures:
    sys.stderr.write("rank %d: check failed: %s\n" % (rank, f))
sys.exit(1 if failures else 0)
