#!/usr/bin/env python3
# tests/rfx_doc_reader.py REDFOX: docs/RFX.md is precise enough to implement
# from. This reader was written from that page alone (not from the code): it
# compiles a few programs with `redfox compile` and reads every file it wrote,
# the container (header, section table, tiling, CRC-32s), SCHM, HIRS to its
# last byte (every variable, block, kernel, expression and constant) and PTX0,
# and checks that SCHM names the program's inputs and outputs as the page
# says. A field the page leaves out or misplaces makes the walk overrun or
# stop short of a section's end. (It once did: HIRS's input key list, which
# every variable has, and the wide decimal constant, whose encoding the page
# did not give.)
import os
import struct
import subprocess
import sys
import tempfile
import zlib

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg)


class Rd:
    def __init__(self, b):
        self.b, self.p = b, 0

    def take(self, n):
        if self.p + n > len(self.b):
            raise ValueError("overrun at byte %d (want %d of %d)" % (self.p, n, len(self.b)))
        r = self.b[self.p:self.p + n]
        self.p += n
        return r

    def u(self, fmt):
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt)))[0]

    def str(self):
        return self.take(self.u("Q"))

    def optstr(self):
        f = self.u("B")
        if f not in (0, 1):
            raise ValueError("opt-str flag %d at byte %d" % (f, self.p - 1))
        return self.str() if f else None

    def i32s(self):
        return [self.u("i") for _ in range(self.u("Q"))]


def container(data):
    """The container: RFX.md's Header, Section table, Layout and Checksums."""
    if data[:8] != b"\x89RFX\r\n\x1a\n":
        raise ValueError("magic")
    major, minor, flags, fsize, toff, count, tcrc = struct.unpack_from("<HHIQQII", data, 8)
    writer, hcrc = data[40:92], struct.unpack_from("<I", data, 92)[0]
    if (major, minor) != (1, 1):
        fail("version %d.%d" % (major, minor))
    if zlib.crc32(data[:92]) != hcrc:
        fail("header CRC")
    if fsize != len(data):
        fail("file size field %d, file %d" % (fsize, len(data)))
    text, nul, rest = writer.partition(b"\0")
    if not nul or any(rest) or not all(0x20 <= c <= 0x7E for c in text):
        fail("writer field")
    table = data[toff:toff + 24 * count]
    if toff % 8 or toff < 96 or zlib.crc32(table) != tcrc:
        fail("section table offset or CRC")
    sections, regions = {}, [(0, 96), (toff, toff + 24 * count)]
    for i in range(count):
        tag, crc, off, size = struct.unpack_from("<4sIQQ", table, 24 * i)
        body = data[off:off + size]
        if off % 8 or (zlib.crc32(body) if size else 0) != crc or tag.decode() in sections:
            fail("section %r: offset, CRC or repeated tag" % tag)
        sections[tag.decode()] = body
        if size:
            regions.append((off, off + size))
    pos = 0
    for a, b in sorted(regions):
        gap = data[pos:a]
        if a < pos or len(gap) > 7 or any(gap):
            fail("regions do not tile the file at byte %d" % a)
        pos = b
    if len(data) - pos > 7 or any(data[pos:]):
        fail("bytes after the last region")
    return sections


def schm(b):
    r = Rd(b)
    if r.u("I") != 1:
        fail("SCHM version")
    out = []
    for _ in range(r.u("I")):
        role, rel, name = r.u("B"), r.str().decode(), r.str().decode()
        cols = [(r.u("B"), r.str().decode()) for _ in range(r.u("I"))]
        out.append((role, rel, name, cols))
    if r.p != len(b):
        fail("SCHM: %d bytes left after the last entry" % (len(b) - r.p))
    return out


def constant(r):
    t = r.u("B")
    if t in (0, 2, 4, 5, 6):  # int, decimal, boolean, date, wide decimal: i64
        return r.u("q")
    if t == 1:
        return r.u("d")
    if t == 3:
        return r.str()
    raise ValueError("constant type %d" % t)


def expr(r, depth=0):
    if depth > 200:
        raise ValueError("expression deeper than 200")
    if not r.u("B"):
        return 0
    r.u("B"), r.u("B"), r.u("i"), r.u("i")  # kind, type, side, column
    constant(r)
    r.u("B"), r.u("B"), r.u("B")  # operator, comparison, built-in
    return 1 + sum(expr(r, depth + 1) for _ in range(r.u("Q")))


def hirs(b):
    r = Rd(b)
    if r.u("I") != 3:
        fail("HIRS version")
    r.str()
    variables = []
    for _ in range(r.u("Q")):
        name, kind, role = r.str().decode(), r.u("B"), r.u("B")
        ncols = r.u("Q")
        cols = [(r.u("B"), r.optstr()) for _ in range(ncols)]
        r.u("q"), r.optstr(), r.u("B"), r.u("B")  # estimate, input file, delimiter, header
        keys = r.i32s()  # input key columns: every variable has the list
        r.optstr(), r.u("i"), r.optstr()  # output name, key columns, predicate name
        variables.append((name, role, cols, keys))
    kernels = 0
    for _ in range(r.u("Q")):
        r.optstr(), r.u("B"), r.u("i"), r.u("i"), r.i32s()  # comment, terminator, targets, tested
        for _ in range(r.u("Q")):
            r.u("i"), r.u("B")  # id, kind
            out = r.u("i")
            r.i32s(), r.u("i")  # inputs, index variable
            expr(r)
            for _ in range(r.u("Q")):
                expr(r)
            r.i32s(), r.i32s(), r.i32s()  # left keys, right keys, group columns
            for _ in range(r.u("Q")):
                r.u("B"), r.u("i"), r.u("B")
            nrows = r.u("Q")
            for _ in range(nrows * len(variables[out][2]) if nrows else 0):
                constant(r)
            for _ in range(r.u("Q")):
                r.u("i"), r.u("B")
            r.u("q"), r.u("B"), r.i32s(), r.u("i"), r.u("i")  # limit, flags, released, line, column
            kernels += 1
    if r.p != len(b):
        fail("HIRS: %d bytes left after the last block" % (len(b) - r.p))
    return variables, kernels


def ptx0(b):
    r = Rd(b)
    if r.u("I") != 2:
        fail("PTX0 version")
    r.str(), r.str(), r.str()  # abi, arch, options
    [r.u("Q") for _ in range(4)]  # source hash, key
    n = r.u("Q")
    if len(zlib.decompress(r.str())) != n or r.p != len(b):
        fail("PTX0: the PTX's length, or bytes after it")


PROGRAMS = {
    # an input with a key, a recursion, an aggregate, an output
    "reach.logic": 'edge(src, dst) -> int(src), int(dst).\n'
                   'lang:input[`edge] = "edges.csv". lang:input:key[`edge] = "src, dst".\n'
                   'path(x, y) <- edge(x, y).\npath(x, z) <- path(x, y), edge(y, z).\n'
                   'reach[x] = n <- agg<<n = count()>> path(x, _).\nlang:output[`reach] = "reach".\n',
    # facts of every type; a total of decimals compared with and multiplied by constants
    "facts.logic": 'r(i, f, d, s, b, t) -> int(i), float(f), decimal(d), string(s), boolean(b), date(t).\n'
                   'r(1, 1.5f, 2.25, "a\\"b", true, date:parse["1995-03-15"]).\n'
                   'r(2, -0.0f, 0.5, "", false, date:parse["2000-02-29"]).\n'
                   'p(x) -> decimal(x). p(1.5). p(2.25).\n'
                   't[] = s <- agg<<s = total(x)>> p(x).\n'
                   'big(s, y) <- t[] = s, s > 1.5, y = s * 2.5.\n'
                   'lang:output[`r] = "rows". lang:output[`big] = "big".\n',
}
EXPECT = {
    "reach.logic": [(0, "edge", "edges.csv", ["src", "dst"]), (1, "reach.out", "reach", ["x", "n"])],
    "facts.logic": [(1, "r.out", "rows", ["i", "f", "d", "s", "b", "t"]), (1, "big.out", "big", ["s", "y"])],
}


def main():
    redfox = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in PROGRAMS.items():
            src = os.path.join(tmp, name)
            with open(src, "w") as f:
                f.write(text)
            out = src[:-len(".logic")] + ".rfx"
            p = subprocess.run([redfox, "compile", src, "-o", out, "--no-cache"], capture_output=True, text=True)
            if p.returncode:
                fail("%s: compile exited %d: %s" % (name, p.returncode, p.stderr))
                continue
            try:
                with open(out, "rb") as f:
                    sec = container(f.read())
                got = [(role, rel, fn, [c[1] for c in cols]) for role, rel, fn, cols in schm(sec["SCHM"])]
                if sorted(got) != sorted(EXPECT[name]):
                    fail("%s: SCHM holds %r, expected %r" % (name, got, EXPECT[name]))
                variables, kernels = hirs(sec["HIRS"])
                if not kernels:
                    fail("%s: no kernels" % name)
                keyed = [(v[0], v[3]) for v in variables if v[3]]
                if name == "reach.logic" and keyed != [("edge", [0, 1])]:
                    fail("%s: input keys %r, expected edge's (0, 1) alone" % (name, keyed))
                if "PTX0" in sec:
                    ptx0(sec["PTX0"])
            except (ValueError, KeyError, struct.error, zlib.error) as e:
                fail("%s: %s" % (name, e))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
