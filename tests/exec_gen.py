#!/usr/bin/env python3
# Owns: the differential test of `redfox exec` by random programs and random
# batches (tests/CMakeLists.txt: exec_gen, gpu_emu_exec_gen). For each seed it
# writes a random program over four base predicates (a relation, a functional
# int predicate, a keyed decimal relation, a functional string predicate):
# recursion, negation, count / total / min / max over ints and decimals,
# derived functional predicates, several strata, predicates derived from two
# bases. It imports random data, then applies a sequence of random batches
# (inserts, deletes, deletes of rows not there, an insert and a delete of one
# row, a functional key updated several times in one batch, now and then a
# key violation), one exec each or several under --each, in the default
# mode, --incremental or --recompute. After each transaction:
#   - the base predicates equal this script's own line-by-line application of
#     the batches (a refused batch: the database unchanged, the key named);
#   - exec's outputs equal, byte for byte, a from-scratch `redfox run` over the
#     database;
#   - with --emu, the same transactions applied by the GPU emulator to a copy
#     of the database print the same bytes.
# A failure prints the seed, where its program and batches are, and the last
# commands. Exploring: more seeds, -v (each seed's outcome), --keep (keep the
# work folders), RF_EXEC_GEN_TIMEOUT (seconds a command may take; 60),
# RF_EXEC_GEN_SCALE (every case at this scale: more rows, bigger batches).
# usage: exec_gen.py REDFOX WORKDIR [--emu] [--seeds A-B | --seed N ...] [--keep] [-v]
import os
import random
import shutil
import subprocess
import sys
from decimal import Decimal

TIMEOUT = int(os.environ.get("RF_EXEC_GEN_TIMEOUT", "60"))


class Fail(Exception):
    pass


# ---- programs ----------------------------------------------------------------
# A predicate: name, shape and how it is written in an atom.
#   rel: two int columns P(x, y);  set: one int column P(x)
#   fi: functional int -> int P[x] = v;  fd: int -> decimal (functional P[x] = v,
#   or keyed P(x, v));  fs: int -> string P[x] = s
class Pred:
    def __init__(self, name, shape, functional=True, base=False):
        self.name, self.shape, self.functional, self.base = name, shape, functional, base

    def kv(self, k, v):
        if self.shape in ("rel",):
            return "%s(%s, %s)" % (self.name, k, v)
        if self.functional:
            return "%s[%s] = %s" % (self.name, k, v)
        return "%s(%s, %s)" % (self.name, k, v)

    def one(self, k):
        if self.shape == "set":
            return "%s(%s)" % (self.name, k)
        return self.kv(k, "_")


BASES = [
    Pred("e", "rel", base=True),
    Pred("f", "fi", base=True),
    Pred("d", "fd", functional=False, base=True),  # lang:input:key a
    Pred("s", "fs", base=True),
]
BASE_DECL = """e(a, b) -> int(a), int(b).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
f[a] = v -> int(a), int(v).
lang:input[`f] = "f.csv".
lang:input:delimiter[`f] = ",".
d(a, x) -> int(a), decimal(x).
lang:input[`d] = "d.csv".
lang:input:delimiter[`d] = ",".
lang:input:key[`d] = "a".
s[a] = n -> int(a), string(n).
lang:input[`s] = "s.csv".
lang:input:delimiter[`s] = ",".
"""


def gen_program(rng):
    preds = list(BASES)
    rules = []
    decls = []
    n = rng.randint(3, 8)
    for i in range(n):
        name = "p%d" % i
        rels = [p for p in preds if p.shape == "rel"]
        sets = [p for p in preds if p.shape == "set"]
        fis = [p for p in preds if p.shape == "fi"]
        fds = [p for p in preds if p.shape == "fd"]
        ch = rng.choice(["rel"] * 4 + ["set"] * 3 + ["fi"] * 3 + ["fd"] * 2 +
                        ["scalar", "fs", "str", "avg", "fdviol", "recagg", "nullary", "tworules", "aggrel", "twokey"])
        K = rng.randint(0, 12)
        if ch == "rel":
            a, b = rng.choice(rels), rng.choice(rels)
            t = rng.choice(["filter", "join", "tc", "fromfun", "union", "neg", "negset", "arith", "twobase",
                            "swap", "consthead", "repeat", "selfjoin", "valueuse", "mutual"])
            if t == "filter":
                rules.append("%s(x, y) <- %s, x %s y." % (name, a.kv("x", "y"), rng.choice(["<", "<=", "!=", ">"])))
            elif t == "join":
                rules.append("%s(x, z) <- %s, %s." % (name, a.kv("x", "y"), b.kv("y", "z")))
            elif t == "tc":
                rules.append("%s(x, y) <- %s." % (name, a.kv("x", "y")))
                rules.append("%s(x, z) <- %s(x, y), %s." % (name, name, a.kv("y", "z")))
            elif t == "fromfun":
                fp = rng.choice(fis)
                rules.append("%s(x, v) <- %s." % (name, fp.kv("x", "v")))
            elif t == "union":
                rules.append("%s(x, y) <- %s." % (name, a.kv("x", "y")))
                rules.append("%s(x, y) <- %s." % (name, b.kv("y", "x")))
            elif t == "neg":
                if a is b:
                    b = BASES[0]
                if a is b:
                    rules.append("%s(x, y) <- %s, !%s." % (name, a.kv("x", "y"), rng.choice(fis).kv("x", "_")))
                else:
                    rules.append("%s(x, y) <- %s, !%s." % (name, a.kv("x", "y"), b.kv("x", "y")))
            elif t == "negset":
                if sets:
                    rules.append("%s(x, y) <- %s, !%s." % (name, a.kv("x", "y"), rng.choice(sets).one("y")))
                else:
                    rules.append("%s(x, y) <- %s, !%s." % (name, a.kv("x", "y"), rng.choice(fis).one("y")))
            elif t == "arith":
                rules.append("%s(x, z) <- %s, z = y + %d, z < 20." % (name, a.kv("x", "y"), rng.randint(1, 3)))
            elif t == "swap":
                rules.append("%s(y, x) <- %s." % (name, a.kv("x", "y")))
            elif t == "consthead":
                rules.append("%s(x, %d) <- %s." % (name, K % 4, a.kv("x", "_")))
            elif t == "repeat":
                rules.append("%s(x, x) <- %s." % (name, a.kv("x", "_")))
            elif t == "selfjoin":
                rules.append("%s(x, y) <- %s, %s." % (name, a.kv("x", "y"), b.kv("y", "y")))
            elif t == "valueuse":
                fp = rng.choice(fis)
                rules.append("%s(x, w) <- %s, w = %s[y] * 2." % (name, a.kv("x", "y"), fp.name))
            elif t == "mutual":
                # two predicates, each recursive through the other
                rules.append("%s(x, y) <- %s." % (name, a.kv("x", "y")))
                rules.append("%s(x, z) <- %s_o(x, y), %s." % (name, name, a.kv("y", "z")))
                rules.append("%s_o(x, z) <- %s(x, y), %s." % (name, name, b.kv("y", "z")))
                decls.append("%s_o(x, y) -> int(x), int(y)." % name)
                preds.append(Pred(name + "_o", "rel"))
            else:  # twobase: a relation and a functional predicate
                fp = rng.choice(fis)
                rules.append("%s(x, v) <- %s, %s." % (name, a.kv("x", "y"), fp.kv("y", "v")))
            decls.append("%s(x, y) -> int(x), int(y)." % name)
            preds.append(Pred(name, "rel"))
        elif ch == "set":
            t = rng.choice(["proj", "thresh", "negrel", "neg2", "str", "dec", "negconj", "disj", "builtin", "exist", "like"])
            a = rng.choice(rels)
            if t == "proj":
                rules.append("%s(x) <- %s." % (name, a.kv("x", "_")))
            elif t == "thresh":
                fp = rng.choice(fis)
                rules.append("%s(x) <- %s, v > %d." % (name, fp.kv("x", "v"), K * 5))
            elif t == "negrel":
                fp = rng.choice(fis)
                rules.append("%s(x) <- %s, !%s." % (name, fp.kv("x", "_"), a.kv("x", "_")))
            elif t == "neg2":
                fp = rng.choice(fds)
                rules.append("%s(x) <- %s, !%s." % (name, a.kv("x", "_"), fp.one("x")))
            elif t == "negconj":
                b = rng.choice(rels)
                rules.append("%s(x) <- %s, !(%s, z > %d)." % (name, a.kv("x", "y"), b.kv("y", "z"), K % 8))
            elif t == "disj":
                b = rng.choice(rels)
                rules.append("%s(x) <- %s, (y > %d ; %s)." % (name, a.kv("x", "y"), K % 8, b.kv("y", "_")))
            elif t == "builtin":
                rules.append("%s(x) <- s[x] = n, string:length[n] = %d." % (name, rng.randint(2, 3)))
            elif t == "like":
                rules.append('%s(x) <- s[x] = n, %sstring:like(n, "%%%s%%").' % (name, rng.choice(["", "!"]), rng.choice("aboe")))
            elif t == "exist":
                b = rng.choice(rels)
                rules.append("%s(x) <- %s, %s." % (name, a.kv("x", "_"), b.kv("_", str(K % 10))))
            elif t == "str":
                rules.append("%s(x) <- s[x] = %s." % (name, txn_value(rng.choice(NAMES))))
            else:
                fp = rng.choice(fds)
                rules.append("%s(x) <- %s, v >= %d.%d." % (name, fp.kv("x", "v"), K, rng.randint(0, 9)))
            decls.append("%s(x) -> int(x)." % name)
            preds.append(Pred(name, "set"))
        elif ch == "fi":
            t = rng.choice(["count", "total", "min", "max", "div", "countval", "totalfun", "negagg", "inverse", "aggneg2"])
            a = rng.choice(rels)
            fp = rng.choice(fis)
            if t == "count":
                rules.append("%s[x] = n <- agg<<n = count()>> %s." % (name, a.kv("x", "_")))
            elif t == "total":
                rules.append("%s[x] = t <- agg<<t = total(v)>> %s, %s." % (name, a.kv("x", "y"), fp.kv("y", "v")))
            elif t in ("min", "max"):
                rules.append("%s[x] = m <- agg<<m = %s(y)>> %s." % (name, t, a.kv("x", "y")))
            elif t == "div":
                rules.append("%s[x] = v <- %s, v = w / %d." % (name, fp.kv("x", "w"), rng.randint(2, 5)))
            elif t == "countval":
                rules.append("%s[v] = n <- agg<<n = count()>> %s." % (name, fp.kv("_", "v")))
            elif t == "totalfun":
                rules.append("%s[x] = t <- agg<<t = total(v)>> %s." % (name, fp.kv("x", "v")))
            elif t == "inverse":
                # may give one key two values: both a run and exec refuse
                rules.append("%s[v] = x <- %s." % (name, fp.kv("x", "v")))
            elif t == "aggneg2":
                sp = rng.choice(sets) if sets else fp
                rules.append("%s[x] = t <- agg<<t = total(y)>> %s, !%s." % (name, a.kv("x", "y"), sp.one("y")))
            else:
                rules.append("%s[x] = n <- agg<<n = count()>> %s, !%s." % (name, a.kv("x", "y"), fp.one("y")))
            decls.append("%s[x] = v -> int(x), int(v)." % name)
            preds.append(Pred(name, "fi"))
        elif ch == "fd":
            t = rng.choice(["total", "min", "max", "scale", "totaldd"])
            a = rng.choice(rels)
            fp = rng.choice(fds)
            if t == "total":
                rules.append("%s[x] = t <- agg<<t = total(v)>> %s, %s." % (name, a.kv("x", "y"), fp.kv("y", "v")))
            elif t in ("min", "max"):
                rules.append("%s[x] = m <- agg<<m = %s(v)>> %s, %s." % (name, t, a.kv("x", "y"), fp.kv("y", "v")))
            elif t == "scale":
                rules.append("%s[x] = v <- %s, v = w * 0.5." % (name, fp.kv("x", "w")))
            else:
                rules.append("%s[x] = t <- agg<<t = total(v)>> %s." % (name, fp.kv("x", "v")))
            decls.append("%s[x] = v -> int(x), decimal(v)." % name)
            preds.append(Pred(name, "fd"))
        elif ch == "fs":
            rules.append("%s[n] = c <- agg<<c = count()>> s[x] = n, %s." % (name, rng.choice(rels + sets + fis).one("x")))
            decls.append("%s[n] = c -> string(n), int(c)." % name)
            preds.append(Pred(name, "out"))
        elif ch == "nullary":
            # a derived predicate of no columns, and a rule that reads it
            a = rng.choice(rels)
            rules.append("%s_z() <- %s." % (name, a.kv("x", "x")))
            fp = rng.choice(fis)
            rules.append("%s(x) <- %s, %s%s_z()." % (name, fp.kv("x", "_"), rng.choice(["", "!"]), name))
            decls.append("%s(x) -> int(x)." % name)
            preds.append(Pred(name, "set"))
        elif ch == "tworules":
            # a functional predicate of two rules over disjoint keys
            fp = rng.choice(fis)
            a = rng.choice(rels)
            rules.append("%s[x] = v <- %s." % (name, fp.kv("x", "v")))
            rules.append("%s[x] = -1 <- %s, !%s." % (name, a.kv("x", "_"), fp.one("x")))
            decls.append("%s[x] = v -> int(x), int(v)." % name)
            preds.append(Pred(name, "fi"))
        elif ch == "aggrel":
            a = rng.choice(rels)
            rules.append("%s(x, n) <- agg<<n = count()>> %s." % (name, a.kv("x", "_")))
            decls.append("%s(x, n) -> int(x), int(n)." % name)
            preds.append(Pred(name, "rel"))
        elif ch == "twokey":
            a, b = rng.choice(rels), rng.choice(rels)
            rules.append("%s[x, y] = n <- agg<<n = count()>> %s, %s." % (name, a.kv("x", "z"), b.kv("z", "y")))
            decls.append("%s[x, y] = n -> int(x), int(y), int(n)." % name)
            preds.append(Pred(name, "out"))
        elif ch == "str":
            # strings through a join: new strings of a batch reach a derived relation
            a = rng.choice(rels)
            rules.append("%s(x, n) <- %s, s[y] = n." % (name, a.kv("x", "y")))
            decls.append("%s(x, n) -> int(x), string(n)." % name)
            preds.append(Pred(name, "out"))
        elif ch == "avg":
            src = rng.choice(fis + fds)
            a = rng.choice(rels)
            rules.append("%s[x] = m <- agg<<m = avg(v)>> %s, %s." % (name, a.kv("x", "y"), src.kv("y", "v")))
            decls.append("%s[x] = m -> int(x), decimal(m)." % name)
            preds.append(Pred(name, "out"))
        elif ch == "fdviol":
            # a derived functional predicate that a batch may give two values
            a = rng.choice(rels)
            if rng.random() < 0.3:
                rules.append("%s[x] = y <- %s, x > %d." % (name, a.kv("x", "y"), rng.randint(7, 9)))
            else:  # the greatest y of each x: one value, but maintained by diffs through a negated conjunction
                rules.append("%s[x] = y <- %s, !(%s, z > y)." % (name, a.kv("x", "y"), a.kv("x", "z")))
            decls.append("%s[x] = v -> int(x), int(v)." % name)
            preds.append(Pred(name, "fi"))
        elif ch == "recagg":
            # recursion beside aggregation: recomputed whole
            a = rng.choice(rels)
            rules.append("%s_r(x, y) <- %s." % (name, a.kv("x", "y")))
            rules.append("%s_r(x, z) <- %s_r(x, y), %s." % (name, name, a.kv("y", "z")))
            rules.append("%s[x] = n <- agg<<n = count()>> %s_r(x, _)." % (name, name))
            decls.append("%s_r(x, y) -> int(x), int(y)." % name)
            decls.append("%s[x] = v -> int(x), int(v)." % name)
            preds.append(Pred(name + "_r", "rel"))
            preds.append(Pred(name, "fi"))
        else:
            src = rng.choice(fis + fds)
            rules.append("%s[] = t <- agg<<t = %s(v)>> %s." % (name, rng.choice(["total", "min", "max"]), src.kv("_", "v")))
            decls.append("%s[] = t -> %s(t)." % (name, "int" if src.shape == "fi" else "decimal"))
            preds.append(Pred(name, "out"))
    outs = [p.name for p in preds]
    text = BASE_DECL + "\n".join(decls) + "\n" + "\n".join(rules) + "\n"
    for o in outs:
        text += 'lang:output[`%s] = "%s".\n' % (o, o)
    return text


NAMES = ["ann", "bob", "cy", "d,e", 'q"t', "zoé"]


# ---- data and batches ----------------------------------------------------------
def dec(rng):
    return Decimal(rng.randint(-300, 900)) / Decimal(rng.choice([1, 10, 100]))


SCALE = [1]  # a case's scale: the value ranges, and the rows, grow with it


def gen_value(rng, pred):
    n = SCALE[0]
    if pred == "e":
        return (rng.randint(0, 10 * n - 1), rng.randint(0, 10 * n - 1))
    if pred == "f":
        return (rng.randint(0, 15 * n - 1), rng.randint(-5, 60))
    if pred == "d":
        return (rng.randint(0, 15 * n - 1), dec(rng))
    return (rng.randint(0, 15 * n - 1), rng.choice(NAMES))


KEYED = {"f", "d", "s"}
RNG_FMT = random.Random(0)


def gen_state(rng):
    st = {"e": set(), "f": {}, "d": {}, "s": {}}
    for _ in range(rng.randint(0, 25 * SCALE[0] * SCALE[0])):
        st["e"].add(gen_value(rng, "e"))
    for q in ("f", "d", "s"):
        for _ in range(rng.randint(0, 12 * SCALE[0])):
            k, v = gen_value(rng, q)
            st[q][k] = v
    return st


def csv_value(v):
    if isinstance(v, str):
        return '"' + v.replace('"', '""') + '"'
    return str(v)


def write_data(st, folder):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "e.csv"), "w") as fh:
        for a, b in sorted(st["e"]):
            fh.write("%d,%d\n" % (a, b))
    for q in ("f", "d", "s"):
        with open(os.path.join(folder, q + ".csv"), "w") as fh:
            for k in sorted(st[q]):
                fh.write("%d,%s\n" % (k, csv_value(st[q][k])))


def txn_value(v):
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n") + '"'
    return str(v)


def fact(q, k, v, sign):
    if q == "e":
        return "%se(%d, %d)." % (sign, k, v)
    if q == "d":
        t = txn_value(v)
        if "." in t and RNG_FMT.random() < 0.3:
            t += "0"  # 1.5 and 1.50 are one value
        elif "." not in t and RNG_FMT.random() < 0.2:
            t += ".00"
        return "%sd(%d, %s)." % (sign, k, t)
    return "%s%s[%d] = %s." % (sign, q, k, txn_value(v))


def gen_batch(rng, st, allow_violation):
    """Lines of a batch (STATE is not changed; a violation is generated only
    when ALLOW_VIOLATION)."""
    cur_st = copy_state(st)
    lines = []
    kinds = ["ins", "ins", "ins", "del", "del", "delabsent", "insdel", "upd", "dup"]
    if allow_violation:
        kinds.append("viol")
    size = (rng.choice([0, 1, 2, 3, 6, 12, 30]) if rng.random() < 0.9 else 60) * SCALE[0]
    for _ in range(size):
        q = rng.choice(["e", "e", "f", "d", "s"])
        kind = rng.choice(kinds)
        cur = cur_st[q]
        new = []
        if kind == "ins":
            k, v = gen_value(rng, q)
            if q != "e" and k in cur and rng.random() < 0.8:
                v = cur[k]  # an insert of a row that is there: nothing changes
            if q == "e" or k not in cur or cur[k] == v:
                new.append(fact(q, k, v, "+"))
        elif kind in ("del", "upd") and cur:
            if q == "e":
                k, v = rng.choice(sorted(cur))
            else:
                k = rng.choice(sorted(cur))
                v = cur[k]
            new.append(fact(q, k, v, "-"))
            if kind == "upd" and q != "e":
                for _ in range(rng.randint(1, 3)):
                    _, v2 = gen_value(rng, q)
                    new.append(fact(q, k, v2, "+"))
                    if rng.random() < 0.4:
                        break
                    new.append(fact(q, k, v2, "-"))
        elif kind == "delabsent":
            k, v = gen_value(rng, q)
            if q == "e" and (k, v) in cur or q != "e" and cur.get(k) == v:
                continue
            new.append(fact(q, k, v, "-"))
        elif kind == "insdel":
            k, v = gen_value(rng, q)
            if q != "e" and k in cur and cur[k] != v:
                continue
            if rng.random() < 0.5:
                new += [fact(q, k, v, "+"), fact(q, k, v, "-")]
            else:
                new += [fact(q, k, v, "-"), fact(q, k, v, "+")]
        elif kind == "dup":
            k, v = gen_value(rng, q)
            if q != "e" and k in cur and cur[k] != v:
                continue
            new += [fact(q, k, v, "+"), fact(q, k, v, "+")]
        elif kind == "viol" and q != "e" and cur:
            k = rng.choice(sorted(cur))
            _, v = gen_value(rng, q)
            if v != cur[k]:
                new.append(fact(q, k, v, "+"))
        apply_lines(cur_st, new)
        lines += new
    return lines


def copy_state(st):
    return {"e": set(st["e"]), "f": dict(st["f"]), "d": dict(st["d"]), "s": dict(st["s"])}


def parse_line(line):
    sign = line[0]
    body = line[1:].rstrip(".")
    q = body[0]
    if q == "e" or q == "d":
        inner = body[2:-1]
        k, v = inner.split(", ", 1)
    else:
        k = body[2:body.index("]")]
        v = body[body.index("] = ") + 4:]
    k = int(k)
    if q == "e":
        v = int(v)
    elif q == "f":
        v = int(v)
    elif q == "d":
        v = Decimal(v)
    else:
        v = v[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return sign, q, k, v


def apply_lines(st, lines):
    """Apply the lines in order; return (None, None) or the 1-based line of the
    first key violation and its key."""
    for i, line in enumerate(lines):
        sign, q, k, v = parse_line(line)
        if q == "e":
            if sign == "+":
                st["e"].add((k, v))
            else:
                st["e"].discard((k, v))
            continue
        cur = st[q]
        if sign == "+":
            if k in cur:
                if cur[k] != v:
                    return i + 1, k
            else:
                cur[k] = v
        else:
            if k in cur and cur[k] == v:
                del cur[k]
    return None, None


# ---- running redfox ----------------------------------------------------------------
def sh(args, env=None):
    try:
        p = subprocess.run(args, capture_output=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        raise Fail("timed out (%ds): %s" % (TIMEOUT, " ".join(args)))
    if p.returncode not in (0, 1, 2):
        raise Fail("exit %d: %s\n%s" % (p.returncode, " ".join(args), p.stderr.decode(errors="replace")[-2000:]))
    return p


def split_each(out):
    """The outputs of --each, one per transaction."""
    parts = []
    cur = None
    for line in out.split(b"\n"):
        if line.startswith(b"-- transaction "):
            if cur is not None:
                parts.append(cur)
            cur = []
            continue
        if cur is not None:
            cur.append(line)
    if cur is not None:
        parts.append(cur)
    res = []
    for p in parts:
        while p and p[0] == b"":
            p = p[1:]
        while p and p[-1] == b"":
            p = p[:-1]
        res.append(b"\n".join(p))
    return res


def norm(b):
    return b"\n".join(x for x in b.split(b"\n")).strip(b"\n")


def expected_base(st):
    res = {}
    res["e"] = sorted(st["e"])
    res["f"] = sorted(st["f"].items())
    res["d"] = sorted(st["d"].items())
    res["s"] = sorted(st["s"].items())
    return res


def read_csv_row(line):
    out, cur, i, q = [], "", 0, False
    while i < len(line):
        c = line[i]
        if q:
            if c == '"':
                if i + 1 < len(line) and line[i + 1] == '"':
                    cur += '"'
                    i += 1
                else:
                    q = False
            else:
                cur += c
        elif c == '"':
            q = True
        elif c == ",":
            out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    out.append(cur)
    return out


def got_base(redfox, prog_dir, db):
    """The base predicates stored in DB, read by a program of their own."""
    dump = os.path.join(prog_dir, "dump.logic")
    with open(dump, "w") as fh:
        fh.write(BASE_DECL.replace("lang:input:key[`d] = \"a\".\n", ""))
        for q in ("e", "f", "d", "s"):
            fh.write('lang:output[`%s] = "%s".\n' % (q, q))
    p = sh([redfox, "run", dump, "--data", db, "--device", "cpu", "--format", "csv"])
    if p.returncode != 0:
        raise Fail("dump: %s" % p.stderr.decode(errors="replace"))
    outs = {}
    q = None
    skip = False
    for line in p.stdout.decode().split("\n"):
        if q is None:
            if line:
                q = line.split(" ")[0]
                outs[q] = []
                skip = True
            continue
        if line == "":
            q = None
            continue
        if skip:
            skip = False
            continue
        a, b = read_csv_row(line)
        a = int(a)
        if q in ("e", "f"):
            b = int(b)
        elif q == "d":
            b = Decimal(b)
        outs[q].append((a, b))
    for q in ("e", "f", "d", "s"):
        outs[q] = sorted(outs.get(q, []))
    return outs


def check_base(redfox, work, db, st, what):
    got = got_base(redfox, work, db)
    want = expected_base(st)
    for q in want:
        if got[q] != want[q]:
            raise Fail("%s: base predicate %s is %s, expected %s" % (what, q, got[q], want[q]))


class Case:
    def __init__(self, redfox, work, seed, emu):
        self.redfox, self.work, self.seed, self.emu = redfox, work, seed, emu
        self.rng = random.Random(seed)
        RNG_FMT.seed(seed)
        self.rng_threads = random.Random(seed * 7 + 2)
        SCALE[0] = self.rng.choice([1, 1, 1, 3])
        if os.environ.get("RF_EXEC_GEN_SCALE"):  # exploring: bigger data and batches
            SCALE[0] = int(os.environ["RF_EXEC_GEN_SCALE"])
        self.log = []

    def exec(self, db, batches, mode, device, each):
        args = [self.redfox, "exec", db, self.prog, "--format", "csv", "--device", device]
        if self.rng_threads.random() < 0.3:
            args += ["--threads", "1"]  # the results do not depend on the threads
        if mode:
            args.append(mode)
        if each:
            args.append("--each")
        for b in batches:
            args += ["--batch", b]
        env = dict(os.environ)
        if device == "gpu":
            env["RF_GPU_EMULATE"] = "1"
        self.log.append(" ".join(("RF_GPU_EMULATE=1 " if device == "gpu" else "") + a for a in args[:1]) + " " + " ".join(args[1:]))
        return sh(args, env)

    def run_from_scratch(self, db):
        p = sh([self.redfox, "run", self.prog, "--data", db, "--device", "cpu", "--format", "csv"])
        if p.returncode != 0:
            return None, p.stderr
        return p.stdout, None

    def go(self):
        rng = self.rng
        w = self.work
        shutil.rmtree(w, ignore_errors=True)
        os.makedirs(w)
        # two programs over the same base data; now and then the other one
        # execs on the database (it must recompute what the first one's
        # batches changed), or the program is edited in place
        self.progs = [os.path.join(w, "p.logic"), os.path.join(w, "q.logic")]
        for f in self.progs:
            with open(f, "w") as fh:
                fh.write(gen_program(rng))
        self.prog = self.progs[0]
        st = gen_state(rng)
        write_data(st, os.path.join(w, "data"))
        db = os.path.join(w, "db")
        p = sh([self.redfox, "import", self.prog, "--data", os.path.join(w, "data"), "--out", db])
        if p.returncode != 0:
            raise Fail("import: " + p.stderr.decode(errors="replace"))
        dbg = os.path.join(w, "dbg")
        if self.emu:
            shutil.copytree(db, dbg)
        # the first exec: from scratch, may fail on a functional dependency the data breaks
        want, werr = self.run_from_scratch(db)
        if random.Random(self.seed * 7 + 1).random() < 0.3:
            # or none: the first transaction computes the derived predicates
            if want is None:
                return "run fails: " + werr.decode(errors="replace").strip().split("\n")[0]
            p = None
        else:
            p = self.exec(db, [], None, "cpu", False)
        if p is None:
            pass
        elif want is None:
            if p.returncode == 0:
                raise Fail("the first exec succeeded where a run fails: %s" % werr.decode(errors="replace"))
            return "run fails: " + werr.decode(errors="replace").strip().split("\n")[0]
        if p is not None and (p.returncode != 0 or p.stdout != want):
            raise Fail("first exec differs from a run: rc %d %s" % (p.returncode, p.stderr.decode(errors="replace")))
        if self.emu and p is not None:
            g = self.exec(dbg, [], None, "gpu", False)
            if g.returncode != 0 or g.stdout != want:
                raise Fail("first exec on the emulator differs: rc %d %s" % (g.returncode, g.stderr.decode(errors="replace")))
        nb = 0
        for step in range(rng.randint(3, 6)):
            r = rng.random()
            if r < 0.15:
                self.prog = self.progs[1] if self.prog == self.progs[0] else self.progs[0]
            elif r < 0.2:
                with open(self.prog, "w") as fh:
                    fh.write(gen_program(rng))
            if r < 0.2:
                want, werr = self.run_from_scratch(db)
                if want is None:
                    return "run fails (after an edit): " + werr.decode(errors="replace").strip().split("\n")[0]
            each = rng.random() < 0.3
            mode = rng.choice([None, None, "--incremental", "--recompute", "--init"])
            k = rng.randint(2, 4) if each else rng.randint(1, 2)
            files = []
            sts = []
            viol_at = None
            trial = copy_state(st)
            for j in range(k):
                lines = gen_batch(rng, trial, rng.random() < 0.15)
                nb += 1
                f = os.path.join(w, "b%d.txn" % nb)
                with open(f, "w") as fh:
                    fh.write("\n".join(lines) + ("\n" if lines else ""))
                files.append(f)
                line, key = apply_lines(trial, lines)
                if line is not None and viol_at is None:
                    viol_at = (j, f, line, key)
                sts.append(copy_state(trial))
            # without --each the files are one transaction: the first violation refuses all
            before_want = want
            p = self.exec(db, files, mode, "cpu", each)
            g = self.exec(dbg, files, mode, "gpu", each) if self.emu else None
            if viol_at is not None:
                j, f, line, key = viol_at
                if p.returncode != 1:
                    raise Fail("a key violation at %s:%d was not refused (rc %d)" % (f, line, p.returncode))
                err = p.stderr.decode(errors="replace")
                if ("%s:%d:" % (f, line)) not in err or "key violation" not in err:
                    raise Fail("the refusal does not name %s:%d and the key: %s" % (f, line, err))
                if g is not None and (g.returncode != 1 or g.stderr != p.stderr):
                    raise Fail("emulator: refusal differs: %s / %s" % (g.stderr, p.stderr))
                if each:
                    # the transactions before j are committed
                    st = sts[j - 1] if j > 0 else st
                    outs = split_each(p.stdout)
                    if len(outs) < j:
                        raise Fail("--each: %d outputs before the refused transaction %d" % (len(outs), j + 1))
                    if g is not None and g.stdout != p.stdout:
                        raise Fail("--each emulator outputs differ before the refusal")
                check_base(self.redfox, w, db, st, "after a refused batch")
                if self.emu:
                    check_base(self.redfox, w, dbg, st, "emulator, after a refused batch")
                want, werr = self.run_from_scratch(db)
                if not each and want != before_want:
                    raise Fail("a refused batch changed the outputs")
                if want is None:
                    return "run fails (after a refused batch): " + werr.decode(errors="replace").strip().split("\n")[0]
                continue
            if p.returncode != 0:
                # a derived functional predicate given two values: a run must fail too
                err = p.stderr.decode(errors="replace")
                if "functional dependency" in err or "decimal out of range" in err or "overflow" in err:
                    if each:
                        n = len(split_each(p.stdout))
                        st = sts[n - 1] if n else st
                    check_base(self.redfox, w, db, st, "after a failed exec")
                    alt = os.path.join(w, "want_data")
                    shutil.rmtree(alt, ignore_errors=True)
                    write_data(sts[-1], alt)
                    r = sh([self.redfox, "run", self.prog, "--data", alt, "--device", "cpu", "--format", "csv"])
                    if r.returncode == 0 and not each:
                        raise Fail("exec failed but a run over the batch's state succeeds: %s" % err)
                    # the error names the user's program, where a run names it
                    where = [x.split(" error: ")[0] for x in err.split("\n") if " error: " in x]
                    if not where or "<redfox" in where[0] or not where[0].startswith(self.prog):
                        raise Fail("the error does not name the program: %s" % err)
                    if not each:
                        rerr = r.stderr.decode(errors="replace")
                        rwhere = [x.split(" error: ")[0] for x in rerr.split("\n") if " error: " in x]
                        if "functional dependency" in err and rwhere[:1] != where[:1]:
                            raise Fail("exec names %s, a run %s" % (where[:1], rwhere[:1]))
                    return "exec refused: " + err.strip().split("\n")[-1][:100]
                raise Fail("exec failed: %s" % err)
            if g is not None and g.returncode != 0:
                raise Fail("emulator exec failed: %s" % g.stderr.decode(errors="replace"))
            st = sts[-1]
            check_base(self.redfox, w, db, st, "after step %d" % step)
            want, werr = self.run_from_scratch(db)
            if want is None:
                raise Fail("exec committed but a run fails: %s" % werr.decode(errors="replace"))
            got = split_each(p.stdout)[-1] + b"\n" if each else p.stdout
            if norm(got) != norm(want):
                raise Fail("step %d (%s%s): exec differs from a run\n%s" % (step, mode, " --each" if each else "", udiff(want, got)))
            if g is not None and g.stdout != p.stdout:
                raise Fail("step %d: emulator differs from the CPU\n%s" % (step, udiff(p.stdout, g.stdout)))
            if each:
                # every transaction's outputs: those of a run over this
                # script's state after it (the data as files, not the database)
                outs = split_each(p.stdout)
                if len(outs) != len(files):
                    raise Fail("--each: %d outputs for %d transactions" % (len(outs), len(files)))
                for j, o in enumerate(outs):
                    alt = os.path.join(w, "want_data")
                    shutil.rmtree(alt, ignore_errors=True)
                    write_data(sts[j], alt)
                    r = sh([self.redfox, "run", self.prog, "--data", alt, "--device", "cpu", "--format", "csv"])
                    if r.returncode != 0 or norm(r.stdout) != norm(o):
                        raise Fail("step %d: transaction %d of --each differs from a run over its state\n%s" %
                                   (step, j + 1, udiff(r.stdout, o)))
        return "ok"


def udiff(a, b):
    import difflib
    return "\n".join(list(difflib.unified_diff(a.decode(errors="replace").split("\n"), b.decode(errors="replace").split("\n"), "want", "got", lineterm=""))[:40])


def run_seeds(new_case, note=None):
    """The command line of both generators (exec_rec_gen.py imports it):
    REDFOX WORKDIR [--emu] [--seeds A-B | --seed N ...] [--keep] [-v].
    new_case(redfox, work, seed, emu) makes a case whose go() says how it
    went in a line or raises Fail; with -v, note(case, line) may say more."""
    redfox = sys.argv[1]
    work = sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    emu = "--emu" in sys.argv
    keep = "--keep" in sys.argv
    seeds = []
    i = 3
    while i < len(sys.argv):
        if sys.argv[i] == "--seeds":
            a, b = sys.argv[i + 1].split("-")
            seeds += list(range(int(a), int(b) + 1))
            i += 1
        elif sys.argv[i] == "--seed":
            seeds.append(int(sys.argv[i + 1]))
            i += 1
        i += 1
    bad = 0
    stats = {}
    for seed in seeds:
        c = new_case(redfox, os.path.join(work, "s%d" % seed), seed, emu)
        try:
            r = c.go()
            if "-v" in sys.argv:
                print(seed, r, flush=True)
                if note:
                    note(c, r)
            stats[r.split(":")[0]] = stats.get(r.split(":")[0], 0) + 1
            if not keep:
                shutil.rmtree(c.work, ignore_errors=True)
        except Fail as ex:
            bad += 1
            print("FAIL seed %d: %s" % (seed, ex), flush=True)
            print("  program and batches in %s; commands:" % c.work)
            for ln in c.log[-3:]:
                print("   ", ln)
    print("seeds %d, failed %d, %s" % (len(seeds), bad, stats))
    sys.exit(1 if bad else 0)


def note_refusal(c, r):
    if r.startswith("exec refused"):
        print("   ", c.log[-1])


def main():
    run_seeds(Case, note_refusal)


if __name__ == "__main__":
    main()
