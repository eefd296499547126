"""api/tests/test_python.py REDFOX_BINARY EXAMPLES_DIR: the redfox Python module.

Owns: the module's tests with plain python3 (no pyarrow): every type through
put -> run -> rows, the Arrow PyCapsule interface read back through the
module and, independently, through ctypes, errors with their diagnostics,
a run over a data folder compared with what `redfox run` prints, and API
level 2: compile options, compile_buffers, keep_inputs, Relation.write, the
profile's text and progress reports; levels 3 and 4 (dumps, .rfx files, a
run's figures, devices, a world of one process, transactions: Database.exec
with a Batch).
"""
import ctypes
import datetime
import decimal
import os
import subprocess
import sys

import redfox

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


ALL = """
t(i, f, d, s, b, dt) -> int(i), float(f), decimal(d), string(s), boolean(b), date(dt).
lang:input[`t] = "t.csv".
out(i, f, d, s, b, dt) <- t(i, f, d, s, b, dt).
lang:output[`out] = "out".
"""
TYPES = ["int", "float", "decimal", "string", "boolean", "date"]
ROWS = [
    (1, 1.5, decimal.Decimal("12.345678"), "a", True, datetime.date(1995, 3, 15)),
    (-2, -0.25, decimal.Decimal("-0.000001"), "", False, datetime.date(1, 1, 1)),
    (2**63 - 1, 1e300, decimal.Decimal("9999999.5"), "γράμμα, \"quoted\"", True, datetime.date(9999, 12, 31)),
    (0, 0.0, decimal.Decimal("0"), "zz", False, datetime.date(1970, 1, 1)),
]


def test_types():
    prog = redfox.compile(ALL, name="all.logic")
    check(prog.inputs == [("t", "t.csv")] and prog.outputs == ["out"], "inputs and outputs: %r" % (prog.inputs,))
    db = redfox.Database()
    db.put("t.csv", ROWS, TYPES)
    res = db.run(prog, device="cpu", threads=2)
    rel = res["out"]
    check(rel.types == TYPES, "types %r" % rel.types)
    check(rel.columns == ["i", "f", "d", "s", "b", "dt"], "columns %r" % rel.columns)
    check(sorted(rel.rows()) == sorted(ROWS), "rows %r" % rel.rows())
    check(len(rel) == len(ROWS) and res.device == "cpu", "len, device")
    # trace=: the run's timeline, Chrome trace-event JSON with its kernels
    import json, tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.json")
        db.run(prog, device="cpu", trace=path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        check(any(e.get("cat") == "kernel" for e in events), "trace: no kernel events")
    # Arrow out and back in, through the module: the same rows
    db2 = redfox.Database()
    db2.put_arrow("t", rel)
    check(sorted(db2.run(prog)["out"].rows()) == sorted(ROWS), "arrow array round trip")

    class StreamOnly:
        def __init__(self, r):
            self.r = r

        def __arrow_c_stream__(self, requested_schema=None):
            return self.r.__arrow_c_stream__()

    db3 = redfox.Database()
    db3.put_arrow("t", StreamOnly(rel))
    check(sorted(db3.run(prog)["out"].rows()) == sorted(ROWS), "arrow stream round trip")
    # capsules never consumed are released by their destructors
    for _ in range(3):
        rel.__arrow_c_array__()
        rel.__arrow_c_stream__()
    return rel


def test_capsule_by_ctypes(rel):
    """Reads the exported struct array with ctypes alone (the ABI, not the module)."""
    schema_cap, array_cap = rel.__arrow_c_array__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    s = redfox.ArrowSchema.from_address(get(schema_cap, b"arrow_schema"))
    a = redfox.ArrowArray.from_address(get(array_cap, b"arrow_array"))
    check(s.format == b"+s" and s.n_children == 6, "struct schema")
    fmts = [s.children[c].contents.format for c in range(6)]
    check(fmts == [b"l", b"g", b"d:38,6", b"u", b"b", b"tdD"], "formats %r" % fmts)
    check(a.length == len(ROWS) and a.n_children == 6, "struct array")
    ints = a.children[0].contents
    vals = (ctypes.c_int64 * a.length).from_address(ints.buffers[1])
    check(sorted(vals) == sorted(r[0] for r in ROWS), "int64 buffer %r" % list(vals))
    dec = a.children[2].contents
    raw = ctypes.string_at(dec.buffers[1], 16 * a.length)
    d = sorted(int.from_bytes(raw[16 * k:16 * k + 16], "little", signed=True) for k in range(a.length))
    check(d == sorted(int(r[2] * 1000000) for r in ROWS), "decimal128 buffer %r" % d)
    strs = a.children[3].contents
    offs = (ctypes.c_int32 * (a.length + 1)).from_address(strs.buffers[1])
    data = ctypes.string_at(strs.buffers[2], offs[a.length])
    got = sorted(data[offs[k]:offs[k + 1]].decode() for k in range(a.length))
    check(got == sorted(r[3] for r in ROWS), "utf8 buffers %r" % got)
    bools = a.children[4].contents
    bits = ctypes.string_at(bools.buffers[1], 1)[0]
    check(sorted(bool(bits >> k & 1) for k in range(a.length)) == sorted(r[4] for r in ROWS), "boolean bits")
    dates = (ctypes.c_int32 * a.length).from_address(a.children[5].contents.buffers[1])
    check(sorted(dates) == sorted((r[5] - datetime.date(1970, 1, 1)).days for r in ROWS), "date32 buffer")


def test_errors():
    try:
        redfox.compile("p(x) -> int(x).\nq(x) <- p(x), r(x).\n", name="bad.logic")
        check(False, "a compile error raises")
    except redfox.CompileError as e:
        d = e.diagnostics[0]
        check(d.file == "bad.logic" and d.line == 2 and d.column > 0 and d.severity == "error", "diagnostic %r" % (d,))
    db = redfox.Database()
    try:
        db.put("t", [(1, 1.0, decimal.Decimal("0.0000001"), "x", True, datetime.date.today())], TYPES)
        check(False, "7 decimal digits raise")
    except redfox.Error as e:
        check("6 digits" in str(e), str(e))
    try:
        db.run(ALL)
        check(False, "a missing input file raises")
    except redfox.Error as e:
        check("t.csv" in str(e) and any(d.severity == "error" for d in e.diagnostics), str(e))
    try:
        redfox.Database("/nonexistent/folder")
        check(False, "a missing folder raises")
    except redfox.Error as e:
        check("/nonexistent/folder" in str(e), str(e))


def test_folder(redfox_bin, examples):
    """examples/quickstart through the module and through the command line."""
    folder = os.path.join(examples, "quickstart")
    prog = redfox.compile_files(os.path.join(folder, "reach.logic"))
    with redfox.Database(folder) as db:
        text = db.run(prog, device="cpu")["destinations"].text("csv")
    cli = subprocess.run([redfox_bin, "run", "reach.logic", "--device", "cpu", "--format", "csv"], cwd=folder,
                         capture_output=True, text=True)
    check(cli.returncode == 0 and cli.stdout == text, "module %r, command line %r" % (text, cli.stdout))
    # the same from a redfox database (redfox import), and with one relation of it given from memory
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        dbdir = os.path.join(tmp, "db")
        imp = subprocess.run([redfox_bin, "import", "reach.logic", "--out", dbdir], cwd=folder, capture_output=True)
        check(imp.returncode == 0, "redfox import: %r" % imp.stderr)
        rfx = os.path.join(tmp, "reach.rfx")
        comp = subprocess.run([redfox_bin, "compile", "reach.logic", "-o", rfx], cwd=folder, capture_output=True)
        check(comp.returncode == 0, "redfox compile: %r" % comp.stderr)
        with redfox.Database(folder) as db:
            check(db.run(redfox.compile_files(rfx), device="cpu")["destinations"].text("csv") == text, "a .rfx file")
        with redfox.Database(dbdir) as db:
            check(db.run(prog, device="cpu")["destinations"].text("csv") == text, "from the database")
            db.put("flight", [("Atlanta", "Boston")], ["string", "string"])
            check(db.run(prog, device="cpu")["destinations"].rows() == [("Atlanta", 1)], "memory over the database")
    rows = redfox.run(open(os.path.join(folder, "reach.logic")).read(), data=folder, device="cpu")
    check(sorted(rows) == ["destinations"] and len(rows["destinations"]) == text.count("\n") - 1, "redfox.run")


def test_text_folder_lock():
    """A folder of text files is read under its shared lock, as the command
    line reads it: a run waits while a writer (tpch gen, run --out) holds it
    exclusively to put its files in place (it read on, and could read files
    of two generations)."""
    import fcntl
    import tempfile
    import threading
    import time
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "e.csv"), "w") as f:
            f.write("1,2\n2,3\n")
        fd = os.open(tmp, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        threading.Timer(1.5, lambda: os.close(fd)).start()
        t0 = time.monotonic()
        rows = redfox.run(TRI.replace("tri(a, b, c) <-", "tri(a, b, b) <-").replace("edge(b, c), edge(a, c)", "edge(b, _)"),
                          data=tmp, device="cpu")
        waited = time.monotonic() - t0
        check(waited >= 1.0, "a run of a text folder held exclusively did not wait (%.2f s)" % waited)
        check(len(rows["tri"]) == 1, "the run after the wait: %r" % rows["tri"])


TRI = """
edge(x, y) -> int(x), int(y).
lang:input[`edge] = "e.csv".
lang:input:delimiter[`edge] = ",".
tri(a, b, c) <- edge(a, b), edge(b, c), edge(a, c).
lang:output[`tri] = "tri".
"""
EDGES = [(1, 2), (2, 3), (1, 3), (3, 4), (2, 4), (4, 5)]


def test_level2(redfox_bin):
    """API level 2 through the module: compile options, compile_buffers, keep_inputs,
    Relation.write, the profile's text and progress reports."""
    import io
    import tempfile
    import threading
    db = redfox.Database()
    db.put("edge", EDGES, ["int", "int"])
    base = db.run(redfox.compile(TRI), device="cpu", profile=True)
    binary = db.run(redfox.compile(TRI, no_lftj=True), device="cpu", profile=True)
    check(base["tri"].rows() == binary["tri"].rows() == [(1, 2, 3), (2, 3, 4)], "no_lftj: the same triangles")
    ptext, btext = base.profile_text(), binary.profile_text()
    check(ptext.startswith("profile (device cpu): load ") and " lftj " in ptext and " lftj " not in btext,
          "profile texts: %r / %r" % (ptext, btext))
    files = redfox.compile_files
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tri.logic")
        with open(path, "w") as f:
            f.write(TRI)
        check(db.run(files(path, no_exists=True, no_lftj=True), device="cpu")["tri"].rows() == [(1, 2, 3), (2, 3, 4)],
              "compile_files with options")
        # compile_buffers: texts in memory, and a .rfx file's bytes
        rfx = os.path.join(tmp, "tri.rfx")
        comp = subprocess.run([redfox_bin, "compile", path, "-o", rfx], capture_output=True)
        check(comp.returncode == 0, "redfox compile: %r" % comp.stderr)
        p1 = redfox.compile_buffers([("a.logic", TRI.split("tri(a")[0]), ("b.logic", "tri(a" + TRI.split("tri(a")[1])])
        with open(rfx, "rb") as f:
            p2 = redfox.compile_buffers([("from-a-pipe", f.read())])
        check(not p1.compiled and p2.compiled, "Program.compiled")
        check(db.run(p1, device="cpu")["tri"].rows() == db.run(p2, device="cpu")["tri"].rows() == [(1, 2, 3), (2, 3, 4)],
              "compile_buffers")
        try:
            redfox.compile_buffers([("x.logic", "p(x) <- q(x).")], no_opt=True)
            check(False, "compile_buffers: an error raises")
        except redfox.CompileError as e:
            check(e.diagnostics and e.diagnostics[0].file == "x.logic", str(e))
        # Relation.write: a real file (rf_result_write) and a StringIO (rf_result_write_to)
        out = os.path.join(tmp, "tri.tbl")
        with open(out, "w") as f:
            base["tri"].write(f, "tbl")
        with open(out) as f:
            check(f.read() == base["tri"].text("tbl"), "write to a file")
        sio = io.StringIO()
        base["tri"].write(sio, "table")
        check(sio.getvalue() == base["tri"].text("table"), "write to a StringIO")
        # a BytesIO (it failed: str written to it), a text file in UTF-16 (it
        # got UTF-8 bytes under its own), and the file's position and mode
        # kept: writes after a seek land there (the file was left O_APPEND)
        # a column counted from the end, as a list's (-1 raised a bare TypeError)
        tri = base["tri"]
        check(tri.column(-1) == tri.column(len(tri.columns) - 1), "column(-1)")
        for bad in (len(tri.columns), -len(tri.columns) - 1):
            try:
                tri.column(bad)
                check(False, "column(%d) raises" % bad)
            except IndexError:
                pass
        bio = io.BytesIO()
        base["tri"].write(bio, "tbl")
        check(bio.getvalue() == base["tri"].text("tbl").encode(), "write to a BytesIO")
        with open(out, "w", encoding="utf-16") as f:
            base["tri"].write(f, "csv")
        with open(out, encoding="utf-16") as f:
            check(f.read() == base["tri"].text("csv"), "write to a UTF-16 text file")
        for mode in ("w", "wb"):
            with open(out, mode) as f:
                head = "HEAD\n" if mode == "w" else b"HEAD\n"
                f.write(head)
                base["tri"].write(f, "csv")
                f.write(head)
                f.seek(0)
                f.write("ZZ" if mode == "w" else b"ZZ")
            with open(out) as f:
                want = "ZZAD\n" + base["tri"].text("csv") + "HEAD\n"
                got = f.read()
                check(got == want, "write to a file (%s), then after a seek: %r" % (mode, got))
        # keep_inputs: the second run reads the kept rows, not the changed file
        with open(os.path.join(tmp, "e.csv"), "w") as f:
            f.write("1,2\n2,3\n1,3\n")
        with redfox.Database(tmp) as fdb:
            fdb.keep_inputs(True)
            check(len(fdb.run(redfox.compile(TRI), device="cpu")["tri"]) == 1, "keep: first run")
            with open(os.path.join(tmp, "e.csv"), "w") as f:
                f.write("")
            check(len(fdb.run(redfox.compile(TRI), device="cpu")["tri"]) == 1, "keep: kept rows")
            fdb.keep_inputs(False)
            check(len(fdb.run(redfox.compile(TRI), device="cpu")["tri"]) == 0, "keep off: the file again")
        # progress: an input read from a FIFO that pauses reports its load
        fifo = os.path.join(tmp, "slow")
        os.mkdir(fifo)
        os.mkfifo(os.path.join(fifo, "e.csv"))

        def writer():
            with open(os.path.join(fifo, "e.csv"), "w") as f:
                f.write("1,2\n")
                f.flush()
                import time
                time.sleep(2)
                f.write("2,3\n1,3\n")
        t = threading.Thread(target=writer)
        t.start()
        seen = []
        with redfox.Database(fifo) as sdb:
            res = sdb.run(redfox.compile(TRI), device="cpu", progress=seen.append)
        t.join()
        check(len(res["tri"]) == 1, "progress run's answer")
        loads = [r for r in seen if r["kind"] == "load" and not r["done"]]
        check(loads and loads[0]["input"] == "edge" and loads[0]["phase"] == "reading" and
              seen[-1]["done"], "progress reports %r" % seen)


def test_level3(redfox_bin):
    """API level 3 through the module: Program.write_rfx and Program.dump, each
    equal to what the command writes and prints."""
    import tempfile
    db = redfox.Database()
    db.put("edge", EDGES, ["int", "int"])
    prog = redfox.compile(TRI, name="tri.logic")
    with tempfile.TemporaryDirectory() as tmp:
        rfx = os.path.join(tmp, "tri.rfx")
        prog.write_rfx(rfx, cache_dir="")
        back = redfox.compile_files(rfx)
        check(back.compiled and db.run(back, device="cpu")["tri"].rows() == [(1, 2, 3), (2, 3, 4)],
              "write_rfx, read back")
        try:
            prog.write_rfx(os.path.join(tmp, "no", "such.rfx"))
            check(False, "write_rfx: an error raises")
        except redfox.Error as e:
            check(e.code == 5 and "such.rfx" in e.message, "write_rfx error: %r" % e.message)
        src = os.path.join(tmp, "tri.logic")
        with open(src, "w") as f:
            f.write(TRI)
        for what, fmt, stop in (("plan", "dot", "plan"), ("ast", "yaml", "ast"), ("harmony", "text", None),
                                ("rules", "text", "rules")):
            cmd = subprocess.run([redfox_bin, "dump", "--" + what, src, "--format", fmt], capture_output=True)
            got = redfox.compile_files(src, stop_after=stop).dump(what, fmt)
            check(cmd.returncode == 0 and got == cmd.stdout.decode(), "dump --%s --format %s" % (what, fmt))
        check(back.dump("harmony") == prog.dump("harmony"), "a .rfx program's Harmony is the source's")
        try:
            redfox.compile(TRI, stop_after="plan").dump("cuda")
            check(False, "dump of a form the program lacks raises")
        except redfox.Error as e:
            check(e.code == 2 and "stop_after" in e.message, e.message)


def imported_db(redfox_bin, tmp, prog_text, table, rows):
    """The program prog_text (in tmp) compiled, and the database `redfox
    import` makes in tmp/db from its one input file, tmp/data/TABLE with
    rows: (the program's path, the database's, the program, the database)."""
    os.mkdir(os.path.join(tmp, "data"))
    with open(os.path.join(tmp, "data", table), "w") as f:
        f.write(rows)
    src = os.path.join(tmp, "prog.logic")
    with open(src, "w") as f:
        f.write(prog_text)
    dbdir = os.path.join(tmp, "db")
    r = subprocess.run([redfox_bin, "import", src, "--data", os.path.join(tmp, "data"), "--out", dbdir],
                       capture_output=True)
    check(r.returncode == 0, "import: %r" % r.stderr)
    return src, dbdir, redfox.compile_files(src), redfox.Database(dbdir)


def test_level4(redfox_bin):
    """API level 4 through the module: Database.exec on a database `redfox
    import` made: batches of rows, text and a file applied, each result equal
    to a from-scratch run over the new state and to what `redfox exec` prints
    on a copy of the database; a failed batch raises and changes nothing."""
    import shutil
    import tempfile
    prog_text = """
account(id, owner, bal) -> int(id), string(owner), decimal(bal).
lang:input[`account] = "account.csv".
lang:input:delimiter[`account] = ",".
lang:input:key[`account] = "id".
rich(o) <- account(_, o, b), b >= 100.
link(a, b) <- account(a, o, _), account(b, o, _), a != b.
lang:output[`rich] = "rich".
lang:output[`link] = "link".
"""
    with tempfile.TemporaryDirectory() as tmp:
        src, dbdir, prog, db = imported_db(redfox_bin, tmp, prog_text, "account.csv", "1,ann,50.5\n2,bob,150\n3,ann,10\n")

        def same_as_run(res, what):
            fresh = db.run(prog, device="cpu")
            for name in ("rich", "link"):
                check(sorted(res[name].rows()) == sorted(fresh[name].rows()), "%s: %s as a from-scratch run" % (what, name))

        res = db.exec(prog, device="cpu")
        t = res.transaction
        check(t is not None and not t.incremental and "first exec" in t.why, "first exec: %r" % (t,))
        check([d[0] for d in t.derived] == ["rich", "link"], "derived: %r" % (t.derived,))
        same_as_run(res, "first exec")
        b = redfox.Batch().insert("account", [(4, "cy", decimal.Decimal("100")), (5, "bob", decimal.Decimal("0.25"))],
                                  ["int", "string", "decimal"])
        res = db.exec(prog, b, device="cpu", profile=True)
        t = res.transaction
        check(t.inserted == 2 and t.deleted == 0, "inserted: %r" % (t,))
        check(t.profile and "exec: batch: 2 rows inserted" in t.profile, "profile: %r" % (t.profile,))
        check(sorted(res["rich"].rows()) == [("bob",), ("cy",)], "rich: %r" % (res["rich"].rows(),))
        same_as_run(res, "rows inserted")
        # a key violation: nothing changes
        try:
            db.exec(prog, redfox.Batch().insert("account", [(1, "dan", decimal.Decimal(1))], ["int", "string", "decimal"]),
                    device="cpu")
            check(False, "a key violation raises")
        except redfox.Error as e:
            check(e.code == 1 and "key violation" in e.message and e.diagnostics[0].line == 1, e.message)
        # deletes and text, then a file; the same through `redfox exec` on a copy
        txn = os.path.join(tmp, "b.txn")
        with open(txn, "w") as f:
            f.write("+account(6, \"ann\", 200).\n")
        shutil.copytree(dbdir, os.path.join(tmp, "copy"))
        b = redfox.Batch().delete("account", [(2, "bob", decimal.Decimal(150))], ["int", "string", "decimal"])
        b.add_text("-account(3, \"ann\", 10).\n", name="t").add_file(txn)
        res = db.exec(prog, b, device="cpu")
        check(res.transaction.deleted == 2 and res.transaction.inserted == 1, "deleted: %r" % (res.transaction,))
        same_as_run(res, "deletes, text and a file")
        with open(os.path.join(tmp, "b2.txn"), "w") as f:
            f.write("-account(2, \"bob\", 150).\n-account(3, \"ann\", 10).\n")
        cmd = subprocess.run([redfox_bin, "exec", os.path.join(tmp, "copy"), src, "--batch", os.path.join(tmp, "b2.txn"),
                              "--batch", txn, "--device", "cpu", "--format", "csv"], capture_output=True)
        rich = sorted(x[0] for x in res["rich"].rows())
        lines = cmd.stdout.decode().split("\n")
        check(cmd.returncode == 0 and lines[0] == "rich (%d rows)" % len(rich) and sorted(lines[2:2 + len(rich)]) == rich,
              "redfox exec on a copy: %r against %r" % (cmd.stdout, rich))
        # a closed batch raises, in exec and in its own calls (exec took it as
        # no batch and committed nothing; insert failed with no message)
        b.close()
        for call in (lambda: db.exec(prog, b, device="cpu"), lambda: b.add_text("-account(1, \"x\", 1).\n"),
                     lambda: b.insert("account", [(9, "z", decimal.Decimal(1))], ["int", "string", "decimal"])):
            try:
                call()
                check(False, "a closed batch raises")
            except redfox.Error as e:
                check(e.code == 2 and "the batch is closed" in e.message, e.message)
        db.close()


def test_level4_incremental(redfox_bin):
    """Database.exec(incremental=True) is `exec --incremental`: a batch over an
    eighth of the stored rows is maintained by diffs, not recomputed (the
    keyword was missing: only the command line could ask for it)."""
    import tempfile
    prog_text = """e(a, b) -> int(a), int(b).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
n[a] = c <- agg<<c = count()>> e(a, _).
lang:output[`n] = "n".
"""
    with tempfile.TemporaryDirectory() as tmp:
        _, _, prog, db = imported_db(redfox_bin, tmp, prog_text, "e.csv", "1,1\n1,2\n2,1\n3,3\n")
        db.exec(prog, device="cpu")
        big = redfox.Batch().insert("e", [(2, 2), (4, 1)], ["int", "int"])  # 2 rows over 4 stored: above an eighth
        t = db.exec(prog, big, device="cpu").transaction
        check(not t.incremental and "eighth" in (t.why or ""), "by default: recomputed: %r" % (t,))
        big = redfox.Batch().delete("e", [(2, 2), (4, 1)], ["int", "int"])
        res = db.exec(prog, big, device="cpu", incremental=True)
        t = res.transaction
        check(t.incremental and t.why is None, "incremental=True: maintained by diffs: %r" % (t,))
        check(sorted(res["n"].rows()) == [(1, 2), (2, 1), (3, 1)], "n: %r" % (res["n"].rows(),))
        try:
            db.exec(prog, None, device="cpu", incremental=True, recompute=True)
            check(False, "incremental with recompute raises")
        except redfox.Error as e:
            check(e.code == 2, e.message)
        db.close()


def test_level4_stats():
    """API level 4 through the module: Result.stats(), device_info(),
    Database.forget_device(), and a World of one process (no mpirun)."""
    check(redfox.api_level() >= 4, "api_level %d" % redfox.api_level())
    db = redfox.Database()
    db.put("edge", EDGES, ["int", "int"])
    prog = redfox.compile(TRI, name="tri.logic")
    st = db.run(prog, device="cpu").stats()
    check(st["device"] == "cpu" and st["nranks"] == 1 and st["gpu_fell_back"] is False, "stats %r" % st)
    check(st["input_rows"] == len(EDGES) and st["run_seconds"] > 0 and st["kernel_bytes_in"] == -1, "stats %r" % st)
    st = db.run(prog, device="cpu", profile=True).stats()
    check(st["kernel_bytes_in"] >= len(EDGES) * 16 and st["h2d_bytes"] == 0, "profiled stats %r" % st)
    ok, text = redfox.device_info("cpu")
    check(ok and text, "device_info cpu: %r" % text)
    ok, text = redfox.device_info("gpu")
    check(isinstance(ok, bool) and text, "device_info gpu: %r" % text)
    try:
        redfox.device_info("tpu")
        check(False, "device_info of an unknown device raises")
    except redfox.Error as e:
        check(e.code == 2, e.message)
    db.forget_device()  # nothing kept: nothing to do
    with redfox.World.mpi() as w:  # not under mpirun: this process alone
        check(w.size == 1 and w.rank == 0 and w.local_size == 1, "a world of one")
        res = db.run(prog, device="cpu", world=w)
        check(res["tri"].rows() == [(1, 2, 3), (2, 3, 4)], "a run with a world of one")
    try:
        db.run(prog, world=w)
        check(False, "a run with an ended world raises")
    except redfox.Error as e:
        check(e.code == 2, e.message)


def test_wide():
    # totals of decimals (decimal128) beyond Python's default 28 digits, exact
    src = ("s(k, a) -> int(k), decimal(a).\nlang:input[`s] = \"s.csv\".\n"
           "t[] = y <- agg<<y = total(a)>> s(_, a).\n"
           "w(k, x) <- t[] = y, s(k, a), x = y * a.\nlang:output[`w] = \"w\".\n")
    amounts = [decimal.Decimal("9123456789012.345678"), decimal.Decimal("-8999999999999.999999"),
               decimal.Decimal("7777777777777.777777")]
    db = redfox.Database()
    db.put("s.csv", [(k, a) for k, a in enumerate(amounts)], ["int", "decimal"])
    rel = db.run(redfox.compile(src, name="wide.logic"), device="cpu")["w"]
    exact = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)
    total = sum(amounts, decimal.Decimal(0))
    want = {k: exact.multiply(total, a).quantize(decimal.Decimal("0.000001"), context=exact)
            for k, a in enumerate(amounts)}
    check(rel.types == ["int", "decimal128"], "wide types %r" % rel.types)
    got = dict(zip(rel.column(0), rel.column(1)))
    check(got == want and len(str(got[0]).replace("-", "").replace(".", "")) > 28, "wide values %r %r" % (got, want))
    # values beyond a column's range raise rather than wrap
    for row, types, what in (((2**63, decimal.Decimal(0)), ["int", "decimal"], "int's range"),
                             ((1, decimal.Decimal("9223372036854.775808")), ["int", "decimal"], "decimal's range"),
                             ((1, 5), ["int", "decimal128"], "results only")):
        try:
            db.put("s.csv", [row], types)
            check(False, "%r raises" % (row,))
        except redfox.Error as e:
            check(what in str(e), str(e))
    # values a column cannot take raise redfox.Error naming the column and
    # row (counted from 1): bad data with code 1, a Python type the column
    # does not take with 2. A str with a NUL was cut at it (two rows became
    # one), the others raised TypeError or AttributeError or misnamed NaN.
    sdb = redfox.Database()
    # integer options beyond their C fields' range raise (ctypes kept their
    # low bits: max_iterations=2**64 + 1 ran with a bound of 1 round)
    for opt in ({"max_iterations": (1 << 64) + 1}, {"threads": (1 << 32) + 2}, {"gpu_memory": -1},
                {"threads": "2"}):
        try:
            sdb.run("x(a) -> int(a).\n", device="cpu", **opt)
            check(False, "%r raises" % (opt,))
        except redfox.Error as e:
            check(e.code == 2 and list(opt)[0] in e.message, "%r: %s" % (opt, e.message))
    # arguments of another type than the str they are: redfox.Error code 2
    # naming them (AttributeError: 'int' object has no attribute 'encode')
    for call, what in ((lambda: sdb.put(5, [(1,)], ["int"]), "the relation's name is a str, not a int"),
                       (lambda: sdb.drop(None), "the relation's name is a str, not a NoneType"),
                       (lambda: sdb.put_arrow(b"t", None), "the relation's name is a str, not a bytes"),
                       (lambda: sdb.put_arrow("t", 5), "put_arrow takes an object with __arrow_c_array__"),
                       (lambda: redfox.Batch().insert(3, [(1,)], ["int"]), "the predicate is a str, not a int"),
                       (lambda: redfox.Batch().add_text(b"+e(1)."), "the text is a str, not a bytes")):
        try:
            call()
            check(False, "%s raises" % what)
        except redfox.Error as e:
            check(e.code == 2 and what in e.message, e.message)
        except Exception as e:  # noqa: BLE001 (what the test is about)
            check(False, "%s: %s: %s" % (what, type(e).__name__, e))
    for rows, types, code, what in (
            ([("a",), ("a\x00b",)], ["string"], 1, "column 1 (string), row 2: a string with a NUL character"),
            ([(b"a",)], ["string"], 2, "column 1 (string), row 1: a bytes where string takes a str"),
            ([(1, 2), (3, "x")], ["int", "int"], 2, "column 2 (int), row 2: a str where int takes an int"),
            ([(1.5,)], ["int"], 2, "column 1 (int), row 1: a float where int takes an int"),
            ([("1.5",)], ["float"], 2, "row 1: a str where float takes a float"),
            ([(decimal.Decimal("NaN"),)], ["decimal"], 1, "row 1: Decimal('NaN') is not a finite decimal"),
            ([(decimal.Decimal("-Infinity"),)], ["decimal"], 1, "is not a finite decimal"),
            ([("abc",)], ["decimal"], 1, "row 1: 'abc' is not a decimal number"),
            ([(None,)], ["decimal"], 2, "row 1: a NoneType where decimal takes"),
            ([("2024-01-01",)], ["date"], 2, "row 1: a str where date takes a datetime.date"),
            ([("\ud800",)], ["string"], 1, "row 1: '\\ud800' is not valid UTF-8"),
            ([(1, 2), (3,)], ["int", "int"], 2, "row 2 has 1 values where 2 types were given"),
            # a boolean column took any value by its truth: "false" and "no"
            # were stored as true, None as false, 2 as true
            ([(True,), ("false",)], ["boolean"], 2, "row 2: a str where boolean takes a bool"),
            ([(None,)], ["boolean"], 2, "row 1: a NoneType where boolean takes a bool"),
            ([(0,), (2,)], ["boolean"], 1, "row 2: 2 is not a boolean")):
        for how in ("put", "insert"):
            try:
                if how == "put":
                    sdb.put("t", rows, types)
                else:
                    redfox.Batch().insert("t", rows, types)
                check(False, "%s %r raises" % (how, rows))
            except redfox.Error as e:
                check(e.code == code and "redfox: t: " in e.message and what in e.message,
                      "%s %r: %d %s" % (how, rows, e.code, e.message))
            except Exception as e:  # noqa: BLE001 (what the test is about)
                check(False, "%s %r: %s: %s" % (how, rows, type(e).__name__, e))


rel = test_types()
test_capsule_by_ctypes(rel)
test_errors()
test_wide()
test_folder(sys.argv[1], sys.argv[2])
test_text_folder_lock()
test_level2(sys.argv[1])
test_level3(sys.argv[1])
test_level4_stats()
if redfox.rf_api_level() >= 4:
    test_level4(sys.argv[1])
    test_level4_incremental(sys.argv[1])
print("ok" if not failures else "%d failed" % failures)
sys.exit(1 if failures else 0)
