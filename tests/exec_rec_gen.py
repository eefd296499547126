#!/usr/bin/env python3
# Owns: the differential test of `redfox exec` on recursive programs against
# this script's own evaluation (tests/CMakeLists.txt: exec_rec_gen,
# gpu_emu_exec_rec_gen). tests/exec_gen.py compares exec with a run; here the
# answer comes from Python, and the programs are those the delta rules and
# DRed maintain: positive rules, linear and non-linear recursion, mutual
# recursion, symmetric closures, recursion through a functional predicate,
# bounded arithmetic inside the recursion, constants and repeated variables in
# body atoms, facts of the program in a derived predicate that rules also
# derive from base facts (DRed must keep them), string columns fed by
# strings new to the dictionary, and now and then a predicate with
# aggregates or negation beside (recomputed or by diffs).
# Batches: inserts, deletes (present and absent), an insert and a delete of
# one fact in both orders, functional keys replaced (delete then insert, and
# several times a batch), a key violation now and then (refused, nothing
# changed), deletes that empty a base predicate, batch sizes at the eighth of
# the stored rows where diffs give way to a recomputation. After every
# transaction every predicate printed (base and derived) equals Python's
# evaluation over Python's base state; --recompute runs on a copy and must
# agree; with --emu the GPU emulator on another copy must print the same bytes.
# Exploring: RF_EXEC_REC_NV (ints in 0..NV-1; 10), RF_EXEC_REC_ROWS (times the
# rows and batches; 1), RF_EXEC_GEN_TIMEOUT (seconds a command may take; 60).
# usage: exec_rec_gen.py REDFOX WORKDIR [--emu] [--seeds A-B | --seed N ...] [--keep] [-v]
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# one runner for both generators: commands, values in files and batches, seeds
from exec_gen import Fail, csv_value, read_csv_row, run_seeds, sh, txn_value  # noqa: E402


# ---- programs -------------------------------------------------------------------
# Base predicates: e(a, b), g(a, b) int relations; k[a] = v functional int;
# w(a, s) int x string keyed on a (lang:input:key).
BASE_DECL = """e(a, b) -> int(a), int(b).
lang:input[`e] = "e.csv".
lang:input:delimiter[`e] = ",".
g(a, b) -> int(a), int(b).
lang:input[`g] = "g.csv".
lang:input:delimiter[`g] = ",".
k[a] = v -> int(a), int(v).
lang:input[`k] = "k.csv".
lang:input:delimiter[`k] = ",".
w(a, s) -> int(a), string(s).
lang:input[`w] = "w.csv".
lang:input:delimiter[`w] = ",".
lang:input:key[`w] = "a".
"""
NV = int(os.environ.get("RF_EXEC_REC_NV", "10"))  # ints in 0..NV-1 (exploring: more)
ROWS = int(os.environ.get("RF_EXEC_REC_ROWS", "1"))  # exploring: this many times the rows


class Prog:
    def __init__(self):
        self.decls = []
        self.text_rules = []
        self.rules = []   # (head_pred, head_terms, body, agg) body: list of ('atom', p, terms) / ('not', p, terms)
        #                   / ('cmp', a, op, b) / ('add', v, a, c); agg: None or (fn, arg)
        self.facts = []   # (pred, tuple)
        self.types = {"e": "ii", "g": "ii", "k": "ii", "w": "is"}
        self.outs = ["e", "g", "k", "w"]


def term_text(t):
    if isinstance(t, str) and t.startswith("_"):
        return "_"  # a wildcard (named here so that Python's aggregates bind it)
    return str(t)


def atom_text(p, terms):
    if p == "k" or p.startswith("a"):
        return "%s[%s] = %s" % (p, ", ".join(term_text(t) for t in terms[:-1]), term_text(terms[-1]))
    return "%s(%s)" % (p, ", ".join(term_text(t) for t in terms))


def body_text(body):
    out = []
    for b in body:
        if b[0] == "atom":
            out.append(atom_text(b[1], b[2]))
        elif b[0] == "not":
            out.append("!" + atom_text(b[1], b[2]))
        elif b[0] == "cmp":
            out.append("%s %s %s" % (term_text(b[1]), b[2], term_text(b[3])))
        else:
            out.append("%s = %s + %s" % (b[1], b[2], b[3]))
    return ", ".join(out)


def add_rule(P, head, terms, body):
    P.rules.append((head, terms, body, None))
    P.text_rules.append("%s <- %s." % (atom_text(head, terms), body_text(body)))


def add_agg(P, head, keys, fn, arg, body):
    """head[keys] = n <- agg<<n = fn(arg)>> body."""
    P.rules.append((head, keys, body, (fn, arg)))
    P.text_rules.append("%s[%s] = n <- agg<<n = %s(%s)>> %s." % (head, ", ".join(keys), fn, arg or "", body_text(body)))


def gen_program(rng):
    P = Prog()
    ints2 = ["e", "g"]  # binary int relations available
    nonrec = rng.random() < 0.4  # no recursion: maintained by diffs (aggregates, negation) or delta rules
    n = rng.randint(2, 6)
    for i in range(n):
        name = "p%d" % i
        if nonrec:
            ch = rng.choice(["join", "filter", "negw", "negd", "agg", "agg", "agg", "aggk", "aggchain", "unionfacts",
                             "aggexpr"])
        else:
            ch = rng.choice(["tc", "tc", "nonlin", "mutual", "sym", "arith", "viafun", "consts", "facts", "proj",
                             "str", "strrec", "join3", "agg", "neg", "reach", "factonly"])
        B = rng.choice(ints2)
        C = rng.choice(ints2)
        if ch in ("agg", "aggk", "aggchain", "aggexpr"):
            name = "a%d" % i
            fn = rng.choice(["count", "total", "min", "max"])
            if ch == "agg":
                body = rng.choice([
                    [("atom", B, ["x", "y"])],
                    [("atom", B, ["x", "_1"])],
                    [("atom", B, ["x", "y"]), ("atom", C, ["y", "_1"])],
                    [("atom", B, ["x", "_1"]), ("atom", C, ["_2", "x"])],
                    [("atom", B, ["_1", "x"]), ("atom", C, ["x", "y"]), ("cmp", "y", ">", rng.randrange(NV))],
                    [("atom", B, ["x", "y"]), ("not", C, ["y", "_"])],
                ])
            elif ch == "aggexpr":
                # the group a value computed from the body (keys reached through an assignment)
                body = [("atom", B, ["z", "y"]), ("add", "x", "z", "y")]
                if rng.random() < 0.5:
                    body = [("atom", B, ["z", "w"]), ("atom", C, ["w", "y"]), ("add", "x", "z", rng.randint(1, 3))]
            elif ch == "aggk":
                body = [("atom", B, ["x", "z"]), ("atom", "k", ["z", "y"])]
                if rng.random() < 0.5:
                    body = [("atom", B, ["x", "_1"]), ("atom", "k", ["_2", "y"]), ("cmp", "y", ">", "x")]
            else:
                aggs = [q for q in P.types if q.startswith("a") and len(P.types[q]) == 2]
                if not aggs:
                    continue
                body = [("atom", rng.choice(aggs), ["z", "y"]), ("atom", B, ["x", "z"])]
            bvars = set()
            for b in body:
                if b[0] == "atom":
                    bvars |= set(t for t in b[2] if isinstance(t, str) and t != "_")
                elif b[0] == "add":
                    bvars.add(b[1])
            if fn != "count" and "y" not in bvars:
                fn = "count"
            keyless = rng.random() < 0.15
            keys = [] if keyless else ["x"]
            if "x" not in bvars and not keyless:
                continue
            P.decls.append("%s[%s] = n -> %sint(n)." % (name, ", ".join(keys), "int(x), " if keys else ""))
            P.types[name] = "i" * (len(keys) + 1)
            add_agg(P, name, keys, fn, None if fn == "count" else "y", body)
            P.outs.append(name)
            continue
        if ch in ("tc", "nonlin", "sym", "arith", "viafun", "consts", "facts", "join3", "join", "filter", "negw",
                  "negd", "unionfacts"):
            P.decls.append("%s(x, y) -> int(x), int(y)." % name)
            P.types[name] = "ii"
            if ch == "join":
                add_rule(P, name, ["x", "z"], [("atom", B, ["x", "y"]), ("atom", C, ["y", "z"])])
            elif ch == "filter":
                add_rule(P, name, ["x", "y"], [("atom", B, ["x", "y"]), ("cmp", "x", rng.choice(["<", "!=", "<="]), "y")])
            elif ch == "negw":
                add_rule(P, name, ["x", "y"], [("atom", B, ["x", "y"]), ("not", C, ["y", "_"])])
            elif ch == "negd":
                add_rule(P, name, ["x", "y"], [("atom", B, ["x", "y"]), ("not", C, ["y", "x"])])
                add_rule(P, name, ["x", "x"], [("atom", C, ["x", "_"]), ("not", B, ["_", "x"])])
            elif ch == "unionfacts":
                for _ in range(rng.randint(1, 3)):
                    P.facts.append((name, (rng.randrange(NV), rng.randrange(NV))))
                add_rule(P, name, ["x", "y"], [("atom", B, ["x", "y"])])
                add_rule(P, name, ["y", "x"], [("atom", C, ["x", "y"])])
            elif ch == "tc":
                add_rule(P, name, ["x", "y"], [("atom", B, ["x", "y"])])
                if rng.random() < 0.5:
                    add_rule(P, name, ["x", "z"], [("atom", name, ["x", "y"]), ("atom", C, ["y", "z"])])
                else:
                    add_rule(P, name, ["x", "z"], [("atom", C, ["x", "y"]), ("atom", name, ["y", "z"])])
            elif ch == "nonlin":
                add_rule(P, name, ["x", "y"], [("atom", B, ["x", "y"])])
                add_rule(P, name, ["x", "z"], [("atom", name, ["x", "y"]), ("atom", name, ["y", "z"])])
                if rng.random() < 0.3:
                    P.facts.append((name, (rng.randrange(NV), rng.randrange(NV))))
            elif ch == "sym":
                add_rule(P, name, ["x", "y"], [("atom", B, ["x", "y"])])
                add_rule(P, name, ["y", "x"], [("atom", name, ["x", "y"])])
                add_rule(P, name, ["x", "z"], [("atom", name, ["x", "y"]), ("atom", name, ["y", "z"]),
                                              ("cmp", "x", "!=", "z")])
            elif ch == "arith":
                # bounded counting inside the recursion
                add_rule(P, name, ["x", "y"], [("atom", B, ["x", "y"]), ("cmp", "y", "<", 5)])
                add_rule(P, name, ["x", "z"], [("atom", name, ["x", "y"]), ("add", "z", "y", rng.randint(1, 3)),
                                              ("cmp", "z", "<", NV)])
            elif ch == "viafun":
                add_rule(P, name, ["x", "v"], [("atom", "k", ["x", "v"])])
                add_rule(P, name, ["x", "v"], [("atom", name, ["x", "y"]), ("atom", "k", ["y", "v"])])
            elif ch == "consts":
                c = rng.randrange(NV)
                add_rule(P, name, ["x", c], [("atom", B, ["x", "x"])])
                add_rule(P, name, ["x", "y"], [("atom", B, [c, "x"]), ("atom", C, ["x", "y"])])
                add_rule(P, name, ["x", "z"], [("atom", name, ["x", "y"]), ("atom", name, ["y", "_"]),
                                              ("atom", C, ["y", "z"])])
            elif ch == "facts":
                # facts of the program that rules also derive: a delete must not lose them
                for _ in range(rng.randint(1, 3)):
                    P.facts.append((name, (rng.randrange(NV), rng.randrange(NV))))
                add_rule(P, name, ["x", "y"], [("atom", B, ["x", "y"])])
                if rng.random() < 0.7:
                    add_rule(P, name, ["x", "z"], [("atom", name, ["x", "y"]), ("atom", name, ["y", "z"])])
            else:  # join3 over earlier derived predicates
                a, b, c = rng.choice(ints2), rng.choice(ints2), rng.choice(ints2)
                add_rule(P, name, ["x", "w"], [("atom", a, ["x", "y"]), ("atom", b, ["y", "z"]), ("atom", c, ["z", "w"])])
                if rng.random() < 0.5:
                    add_rule(P, name, ["x", "y"], [("atom", name, ["y", "x"]), ("atom", a, ["x", "_"])])
            ints2.append(name)
        elif ch == "mutual":
            o = name + "o"
            P.decls.append("%s(x, y) -> int(x), int(y)." % name)
            P.decls.append("%s(x, y) -> int(x), int(y)." % o)
            P.types[name] = "ii"
            P.types[o] = "ii"
            add_rule(P, name, ["x", "y"], [("atom", B, ["x", "y"])])
            add_rule(P, name, ["x", "z"], [("atom", o, ["x", "y"]), ("atom", B, ["y", "z"])])
            add_rule(P, o, ["x", "z"], [("atom", name, ["x", "y"]), ("atom", C, ["y", "z"])])
            if rng.random() < 0.5:
                P.facts.append((o, (rng.randrange(NV), rng.randrange(NV))))
            ints2 += [name, o]
        elif ch == "reach":
            # reachable from the program's facts only: DRed re-derives from them
            P.decls.append("%s(x) -> int(x)." % name)
            P.types[name] = "i"
            for _ in range(rng.randint(1, 2)):
                P.facts.append((name, (rng.randrange(NV),)))
            add_rule(P, name, ["y"], [("atom", name, ["x"]), ("atom", rng.choice(ints2), ["x", "y"])])
        elif ch == "factonly":
            # a derived predicate of facts alone, read by a rule over the base
            P.decls.append("%s(x) -> int(x)." % name)
            P.types[name] = "i"
            for _ in range(rng.randint(1, 3)):
                P.facts.append((name, (rng.randrange(NV),)))
            q = name + "j"
            P.decls.append("%sj(x, y) -> int(x), int(y)." % name)
            P.types[q] = "ii"
            add_rule(P, q, ["x", "y"], [("atom", B, ["x", "y"]), ("atom", name, ["x"])])
            P.outs.append(q)
        elif ch == "proj":
            P.decls.append("%s(x) -> int(x)." % name)
            P.types[name] = "i"
            src = rng.choice(ints2)
            add_rule(P, name, ["x"], [("atom", src, ["x", "_"])])
            add_rule(P, name, ["y"], [("atom", name, ["x"]), ("atom", src, ["x", "y"])])
            if rng.random() < 0.5:
                P.facts.append((name, (rng.randrange(NV),)))
        elif ch == "str":
            P.decls.append("%s(s, t) -> string(s), string(t)." % name)
            P.types[name] = "ss"
            src = rng.choice(ints2)
            add_rule(P, name, ["s", "t"], [("atom", "w", ["x", "s"]), ("atom", src, ["x", "y"]), ("atom", "w", ["y", "t"])])
            add_rule(P, name, ["s", "u"], [("atom", name, ["s", "t"]), ("atom", name, ["t", "u"])])
            if rng.random() < 0.5:
                P.facts.append((name, (rng.choice(NAMES), rng.choice(NAMES))))
        elif ch == "strrec":
            P.decls.append("%s(x, s) -> int(x), string(s)." % name)
            P.types[name] = "is"
            src = rng.choice(ints2)
            add_rule(P, name, ["x", "s"], [("atom", "w", ["x", "s"])])
            add_rule(P, name, ["x", "s"], [("atom", src, ["x", "y"]), ("atom", name, ["y", "s"])])
        else:  # negation beside the recursion
            a, b = rng.choice(ints2), rng.choice(ints2)
            P.decls.append("%s(x, y) -> int(x), int(y)." % name)
            P.types[name] = "ii"
            add_rule(P, name, ["x", "y"], [("atom", a, ["x", "y"]), ("not", b, ["y", "x"])])
        P.outs.append(name)
        if ch == "mutual":
            P.outs.append(name + "o")
    text = BASE_DECL + "\n".join(P.decls) + "\n"
    for (p, t) in P.facts:
        text += "%s(%s).\n" % (p, ", ".join(txn_value(v) for v in t))
    text += "\n".join(P.text_rules) + "\n"
    for o in P.outs:
        text += 'lang:output[`%s] = "%s".\n' % (o, o)
    P.text = text
    return P


# ---- Python's evaluation --------------------------------------------------------
def base_rel(st, p):
    if p in ("e", "g"):
        return set(st[p])
    return set(st[p].items())


def is_var(t):
    return isinstance(t, str) and not t.startswith('"') and t != "_"


def match(terms, row, env):
    env = dict(env)
    for t, v in zip(terms, row):
        if t == "_":
            continue
        if not is_var(t):
            if t != v:
                return None
            continue
        if t in env:
            if env[t] != v:
                return None
        else:
            env[t] = v
    return env


def solve(body, rels, env, i):
    if i == len(body):
        yield env
        return
    b = body[i]
    if b[0] == "atom":
        for row in rels.get(b[1], ()):
            e2 = match(b[2], row, env)
            if e2 is not None:
                yield from solve(body, rels, e2, i + 1)
    elif b[0] == "not":
        if not any(match(b[2], row, env) is not None for row in rels.get(b[1], ())):
            yield from solve(body, rels, env, i + 1)
    elif b[0] == "cmp":
        a = env[b[1]] if is_var(b[1]) else b[1]
        c = env[b[3]] if is_var(b[3]) else b[3]
        ok = {"<": a < c, "<=": a <= c, "!=": a != c, ">": a > c}[b[2]]
        if ok:
            yield from solve(body, rels, env, i + 1)
    else:
        v = env[b[2]] + (env[b[3]] if is_var(b[3]) else b[3])
        if b[1] in env:
            if env[b[1]] != v:
                return
            yield from solve(body, rels, env, i + 1)
        else:
            e2 = dict(env)
            e2[b[1]] = v
            yield from solve(body, rels, e2, i + 1)


def evaluate(P, st):
    """Every predicate, stratum by stratum: a predicate's rules read earlier
    predicates, itself, or (mutual recursion) its partner pNo."""
    rels = {p: base_rel(st, p) for p in ("e", "g", "k", "w")}
    for p in P.types:
        rels.setdefault(p, set())
    for (p, t) in P.facts:
        rels[p].add(t)
    groups = []
    for (h, terms, body, agg) in P.rules:
        g = h.rstrip("o") if h.startswith("p") else h
        if not groups or groups[-1][0] != g:
            groups.append((g, []))
        groups[-1][1].append((h, terms, body, agg))
    for (g, rules) in groups:
        if rules[0][3] is not None:
            (h, keys, body, (fn, arg)) = rules[0]
            sols = {}
            for env in solve(body, rels, {}, 0):
                sol = tuple(sorted(env.items()))
                sols.setdefault(tuple(env[k_] for k_ in keys), set()).add(sol)
            out = set()
            for gk, ss in sols.items():
                vals = [dict(s)[arg] for s in ss] if arg else []
                v = {"count": lambda: len(ss), "total": lambda: sum(vals), "min": lambda: min(vals),
                     "max": lambda: max(vals)}[fn]()
                out.add(gk + (v,))
            rels[h] = out
            continue
        changed = True
        while changed:
            changed = False
            for (h, terms, body, _) in rules:
                new = set()
                for env in solve(body, rels, {}, 0):
                    new.add(tuple(env[t] if is_var(t) else t for t in terms))
                if not new <= rels[h]:
                    rels[h] |= new
                    changed = True
    return rels


# ---- data and batches ------------------------------------------------------------
NAMES = ["ann", "bob", "cy", "d,e", 'q"t', "zoé", "x y"]


def fresh_name(rng):
    return rng.choice(["new", "é", "n\\b", "t\tab", "😀", "a,b", "Q\"", "z"]) + str(rng.randrange(1000))


def gen_state(rng):
    st = {"e": set(), "g": set(), "k": {}, "w": {}}
    for p in ("e", "g"):
        for _ in range(rng.randint(0, 20 * ROWS)):
            st[p].add((rng.randrange(NV), rng.randrange(NV)))
    for _ in range(rng.randint(0, 8)):
        st["k"][rng.randrange(NV)] = rng.randrange(NV)
    for _ in range(rng.randint(0, 8)):
        st["w"][rng.randrange(NV)] = rng.choice(NAMES)
    return st


def copy_state(st):
    return {"e": set(st["e"]), "g": set(st["g"]), "k": dict(st["k"]), "w": dict(st["w"])}


def write_data(st, folder):
    os.makedirs(folder, exist_ok=True)
    for p in ("e", "g"):
        with open(os.path.join(folder, p + ".csv"), "w") as fh:
            for a, b in sorted(st[p]):
                fh.write("%d,%d\n" % (a, b))
    for p in ("k", "w"):
        with open(os.path.join(folder, p + ".csv"), "w") as fh:
            for a in sorted(st[p]):
                fh.write("%d,%s\n" % (a, csv_value(st[p][a])))


def line(p, row, sign):
    if p == "k":
        return "%sk[%d] = %d." % (sign, row[0], row[1])
    return "%s%s(%s)." % (sign, p, ", ".join(txn_value(v) for v in row))


def apply_lines(st, lines_rows):
    """Applies (sign, p, row) in order to ST; returns the index of the first key
    violation or None (ST then partly changed: the caller drops it)."""
    for i, (sign, p, row) in enumerate(lines_rows):
        if p in ("e", "g"):
            if sign == "+":
                st[p].add(row)
            else:
                st[p].discard(row)
        else:
            cur = st[p]
            if sign == "+":
                if row[0] in cur and cur[row[0]] != row[1]:
                    return i
                cur[row[0]] = row[1]
            elif cur.get(row[0], object()) == row[1]:
                del cur[row[0]]
    return None


def nrows(st):
    return len(st["e"]) + len(st["g"]) + len(st["k"]) + len(st["w"])


def gen_batch(rng, st, allow_violation):
    cur = copy_state(st)
    out = []
    n = nrows(st)
    r = rng.random()
    if r < 0.25 and n >= 8:
        size = n // 8 + rng.choice([-1, 0, 0, 1])  # about the eighth of the stored rows
    elif r < 0.35:
        size = 0
    else:
        size = rng.choice([1, 2, 3, 5, 8, 15, 30]) * (1 if rng.random() < 0.7 else ROWS)
    kinds = ["ins", "ins", "del", "del", "delabsent", "insdel", "delins", "upd", "upd2", "dup", "empty"]
    if allow_violation:
        kinds.append("viol")
    while len(out) < size:
        p = rng.choice(["e", "e", "g", "k", "w"])
        kind = rng.choice(kinds)
        rows = list(cur[p]) if p in ("e", "g") else list(cur[p].items())
        if p in ("e", "g"):
            newrow = (rng.randrange(NV + 2), rng.randrange(NV + 2))
        elif p == "k":
            newrow = (rng.randrange(NV + 2), rng.randrange(NV + 2))
        else:
            newrow = (rng.randrange(NV + 2), fresh_name(rng) if rng.random() < 0.4 else rng.choice(NAMES))
        keyed = p in ("k", "w")
        if kind == "ins":
            if keyed and newrow[0] in cur[p] and cur[p][newrow[0]] != newrow[1]:
                continue
            lines = [("+", p, newrow)]
        elif kind == "dup":
            lines = [("+", p, rows[0])] if rows else []
        elif kind == "del":
            lines = [("-", p, rng.choice(rows))] if rows else []
        elif kind == "delabsent":
            lines = [("-", p, newrow)]
            if keyed and newrow[0] in cur[p]:
                lines = [("-", p, (newrow[0], cur[p][newrow[0]] if p == "w" else cur[p][newrow[0]] + 100))]
        elif kind == "insdel":
            if keyed and newrow[0] in cur[p] and cur[p][newrow[0]] != newrow[1]:
                continue
            lines = [("+", p, newrow), ("-", p, newrow)]
        elif kind == "delins":
            lines = [("-", p, rng.choice(rows))] if rows else []
            if lines:
                lines.append(("+", p, lines[0][2]))
        elif kind in ("upd", "upd2"):
            if not keyed or not rows:
                continue
            old = rng.choice(rows)
            lines = [("-", p, old), ("+", p, (old[0], newrow[1]))]
            if kind == "upd2":
                lines += [("-", p, (old[0], newrow[1])), ("+", p, (old[0], old[1]))]
        elif kind == "empty":
            if rng.random() < 0.7:
                continue
            lines = [("-", p, r_) for r_ in rows]
            if not lines:
                continue
        else:  # viol
            if not keyed or not rows:
                continue
            old = rng.choice(rows)
            other = old[1] + 1 if p == "k" else old[1] + "x"
            lines = [("+", p, (old[0], other))]
        if not lines:
            continue
        if apply_lines(cur, lines) is not None and kind != "viol":
            raise AssertionError("generator")
        out += lines
    return out


# ---- running ---------------------------------------------------------------------


def parse_outputs(text, P):
    """csv outputs: a line naming the predicate, a header, rows, a blank line."""
    outs = {}
    q = None
    skip = False
    for ln in text.split("\n"):
        if q is None:
            if ln:
                q = ln.split(" ")[0]
                outs[q] = set()
                skip = True
            continue
        if ln == "":
            q = None
            continue
        if skip:
            skip = False
            continue
        vals = read_csv_row(ln)
        ty = P.types[q]
        outs[q].add(tuple(int(v) if t == "i" else v for v, t in zip(vals, ty)))
    return outs


def split_each(out):
    parts, cur = [], None
    for ln in out.split("\n"):
        if ln.startswith("-- transaction "):
            if cur is not None:
                parts.append("\n".join(cur))
            cur = []
            continue
        if cur is not None:
            cur.append(ln)
    if cur is not None:
        parts.append("\n".join(cur))
    return parts


class Case:
    def __init__(self, redfox, work, seed, emu):
        self.redfox, self.work, self.seed, self.emu = redfox, work, seed, emu
        self.rng = random.Random(seed)
        self.log = []
        r = random.Random(seed * 5 + 3)
        self.sets = []
        if r.random() < 0.5:
            self.sets = [kv for kv in ("cpu_part_pairs=%d" % r.choice([1, 2, 7, 64]), "cpu_part_linear=%d" % r.choice([1, 4]),
                                       "gpu_runs_min=1", "gpu_ordered_min=1", "block_skip=off") if r.random() < 0.6]

    def exec(self, db, files, mode, device, each):
        args = [self.redfox, "exec", db, self.progf, "--format", "csv", "--device", device]
        if mode:
            args.append(mode)
        if each:
            args.append("--each")
        # settings that change how the generated runs compute, never what:
        # joins in tiny parts, the ordered and run-walking paths at any size
        for kv in self.sets:
            args += ["--set", kv]
        for f in files:
            args += ["--batch", f]
        env = dict(os.environ)
        if device == "gpu":
            env["RF_GPU_EMULATE"] = "1"
        self.log.append(("RF_GPU_EMULATE=1 " if device == "gpu" else "") + " ".join(args))
        return sh(args, env)

    def check(self, outtext, st, what):
        got = parse_outputs(outtext, self.P)
        want = evaluate(self.P, st)
        for o in self.P.outs:
            g = got.get(o, set())
            if g != want[o]:
                raise Fail("%s: %s is %s, expected %s (missing %s, extra %s)" %
                           (what, o, sorted(g), sorted(want[o]), sorted(want[o] - g), sorted(g - want[o])))

    def go(self):
        rng = self.rng
        w = self.work
        shutil.rmtree(w, ignore_errors=True)
        os.makedirs(w)
        self.P = gen_program(rng)
        self.progf = os.path.join(w, "p.logic")
        with open(self.progf, "w") as fh:
            fh.write(self.P.text)
        st = gen_state(rng)
        write_data(st, os.path.join(w, "data"))
        db = os.path.join(w, "db")
        p = sh([self.redfox, "import", self.progf, "--data", os.path.join(w, "data"), "--out", db])
        if p.returncode != 0:
            raise Fail("import: " + p.stderr.decode(errors="replace"))
        dbs = {"cpu": db, "rec": db + "_rec"}
        if self.emu:
            dbs["gpu"] = db + "_gpu"
        for k_, d_ in dbs.items():
            if d_ != db:
                shutil.copytree(db, d_)
        if rng.random() < 0.7:
            for k_, d_ in dbs.items():
                p = self.exec(d_, [], "--recompute" if k_ == "rec" else None, "gpu" if k_ == "gpu" else "cpu", False)
                if p.returncode != 0:
                    raise Fail("first exec (%s): %s" % (k_, p.stderr.decode(errors="replace")))
                self.check(p.stdout.decode(), st, "first exec (%s)" % k_)
        nb = 0
        for step in range(rng.randint(3, 7)):
            each = rng.random() < 0.3
            mode = rng.choice([None, None, None, "--incremental"])
            nfiles = rng.randint(2, 3) if each else rng.randint(1, 2)
            files, sts, viol = [], [], None
            trial = copy_state(st)
            for j in range(nfiles):
                rows = gen_batch(rng, trial, rng.random() < 0.1)
                nb += 1
                f = os.path.join(w, "b%d.txn" % nb)
                with open(f, "w") as fh:
                    for r_ in rows:
                        fh.write(line(r_[1], r_[2], r_[0]) + "\n")
                files.append(f)
                i = apply_lines(trial, rows)
                if i is not None and viol is None:
                    viol = (j, f, i + 1)
                sts.append(copy_state(trial))
            res = {}
            for k_, d_ in dbs.items():
                res[k_] = self.exec(d_, files, "--recompute" if k_ == "rec" else mode, "gpu" if k_ == "gpu" else "cpu", each)
            if viol is not None:
                j, f, ln = viol
                for k_, p in res.items():
                    err = p.stderr.decode(errors="replace")
                    if p.returncode != 1 or ("%s:%d:" % (f, ln)) not in err or "key violation" not in err:
                        raise Fail("%s: the key violation at %s:%d: rc %d %s" % (k_, f, ln, p.returncode, err))
                if each:
                    st = sts[j - 1] if j > 0 else st
                    n_out = len(split_each(res["cpu"].stdout.decode()))
                    if n_out != j:
                        raise Fail("--each: %d outputs before the refused transaction %d" % (n_out, j + 1))
                # the state: a run of the program from scratch over each database
                for k_, d_ in dbs.items():
                    r = sh([self.redfox, "run", self.progf, "--data", d_, "--device", "cpu", "--format", "csv"])
                    if r.returncode != 0:
                        raise Fail("run after a refusal (%s): %s" % (k_, r.stderr.decode(errors="replace")))
                    self.check(r.stdout.decode(), st, "after a refused batch (%s)" % k_)
                continue
            for k_, p in res.items():
                if p.returncode != 0:
                    raise Fail("step %d: exec (%s) failed: %s" % (step, k_, p.stderr.decode(errors="replace")))
                outs = split_each(p.stdout.decode()) if each else [p.stdout.decode()]
                if len(outs) != len(files) if each else 1 != 1:
                    raise Fail("--each: %d outputs" % len(outs))
                for j, o in enumerate(outs):
                    self.check(o, sts[j] if each else sts[-1], "step %d (%s, %s%s) transaction %d" %
                               (step, k_, mode, " --each" if each else "", j + 1))
            if self.emu and res["gpu"].stdout != res["cpu"].stdout:
                raise Fail("step %d: the emulator's bytes differ from the CPU's" % step)
            st = sts[-1]
            # the stored state: a run from scratch over the database
            r = sh([self.redfox, "run", self.progf, "--data", db, "--device", "cpu", "--format", "csv"])
            if r.returncode != 0:
                raise Fail("run: %s" % r.stderr.decode(errors="replace"))
            self.check(r.stdout.decode(), st, "step %d: a run over the database" % step)
        return "ok"


def main():
    run_seeds(Case)


if __name__ == "__main__":
    main()
