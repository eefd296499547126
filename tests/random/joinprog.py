#!/usr/bin/env python3
# Owns: differential testing of the planner's join and recursion shapes with
# random programs of int columns: cyclic bodies (triangles, 4-cycles, cliques),
# constants and repeated variables in atoms, comparisons and arithmetic,
# mutual and non-linear recursion, stratified negation (of recursive
# predicates too), aggregates with groups and `_`, functional inputs and
# applications. Each program is judged by an independent naive fixpoint
# evaluator written here (docs/LANGUAGE.md's meaning); redfox's CPU run is
# compared with it, and the other runs (switches, settings, the emulated GPU)
# with the CPU's bytes. It also translates a program to Souffle (`souffle`
# on PATH, or $SOUFFLE) for a second opinion, and shrinks a failing case.
#
# usage: joinprog.py check REDFOX [--seeds A:B] [--gpu | --gpu1] [--gpu-only]
#                    [--souffle] [--rfx-db] [--keep DIR] [--quick] [-v]
#        (--gpu: the emulated GPU's variants too, --gpu1: its plain run only;
#        --gpu-only: no CPU switches; --quick: three CPU switches; --rfx-db:
#        the .rfx and an imported database too)
#        joinprog.py gen SEED DIR           (prog.logic, prog.dl, inputs)
#        joinprog.py shrink REDFOX SEED DIR (the smallest program still failing)
import os
import random
import shutil
import sys
import tempfile

from randprog import run  # (one runner for both generators: a command's status and output, or 'timeout')

BIG = os.environ.get('JOINPROG_BIG') == '1'
CMPS = ['=', '!=', '<', '<=', '>', '>=']
AGGS = ['count', 'total', 'min', 'max']


class FDError(Exception):
    """A functional predicate with two values for a key: the run must
    fail (exit 1) naming the least such key and its two least values."""


class NoSouffle(Exception):
    """A program Souffle cannot say (a negated conjunction)."""


class Prog:
    def __init__(self):
        self.preds = {}      # name -> dict(arity, input, functional, rows)
        self.order = []      # derived names in stratum order
        self.strata = []     # lists of derived names
        self.rules = []      # dicts: head, hterms, body, agg


# ------------------------------------------------------------ evaluation
def c_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def ev(e, env, db):
    k = e[0]
    if k == 'v':
        return env[e[1]]
    if k == 'c':
        return e[1]
    if k == 'f':       # functional application f[x]: None where no value
        key = ev(e[2], env, db)
        if key is None:
            return None
        for t in db[e[1]]:
            if t[0] == key:
                return t[1]
        return None
    a, b = ev(e[2], env, db), ev(e[3], env, db)
    if a is None or b is None:
        return None
    op = e[1]
    if op == '+':
        return a + b
    if op == '-':
        return a - b
    if op == '*':
        return a * b
    if op == '/':
        return c_div(a, b)
    if op == '%':
        return a - c_div(a, b) * b
    raise ValueError(op)


def cmp(op, a, b):
    return {'=': a == b, '!=': a != b, '<': a < b, '<=': a <= b,
            '>': a > b, '>=': a >= b}[op]


def evars(e, out):
    if e[0] == 'v':
        out.add(e[1])
    elif e[0] == 'f':
        evars(e[2], out)
    elif e[0] == 'b':
        evars(e[2], out)
        evars(e[3], out)
    return out


def match(terms, tup, env):
    env = dict(env)
    for t, v in zip(terms, tup):
        if t[0] == 'c':
            if t[1] != v:
                return None
        elif t[0] == 'v':
            if t[1] in env:
                if env[t[1]] != v:
                    return None
            else:
                env[t[1]] = v
        # '_' matches anything; '_N' (a named wildcard for aggregates) binds
        elif t[0] == 'w':
            env[t[1]] = v
    return env


def solve(body, env, db):
    """Every binding (a dict) of the body: atoms in order, then the rest as
    soon as their variables are bound."""
    if not body:
        yield env
        return
    for i, l in enumerate(body):
        k = l[0]
        if k == 'atom':
            rest = body[:i] + body[i + 1:]
            for t in db[l[1]]:
                e2 = match(l[2], t, env)
                if e2 is not None:
                    yield from solve(rest, e2, db)
            return
    for i, l in enumerate(body):
        k = l[0]
        rest = body[:i] + body[i + 1:]
        if k == 'assign':
            if evars(l[2], set()) <= set(env):
                v = ev(l[2], env, db)
                if v is None:
                    return
                if l[1] in env:
                    if env[l[1]] != v:
                        return
                    yield from solve(rest, env, db)
                    return
                e2 = dict(env)
                e2[l[1]] = v
                yield from solve(rest, e2, db)
                return
        elif k == 'cmp':
            if (evars(l[2], set()) | evars(l[3], set())) <= set(env):
                a, b = ev(l[2], env, db), ev(l[3], env, db)
                if a is None or b is None or not cmp(l[1], a, b):
                    return
                yield from solve(rest, env, db)
                return
        elif k == 'neg':
            for t in db[l[1]]:
                if match(l[2], t, env) is not None:
                    return
            yield from solve(rest, env, db)
            return
        elif k == 'negconj':
            if l[2] <= set(env):
                for _ in solve(list(l[1]), env, db):
                    return
                yield from solve(rest, env, db)
                return
        elif k == 'disj':
            if l[2] <= set(env):
                for br in l[1]:
                    for e2 in solve(list(br), env, db):
                        # only the variables common to the branches leave
                        yield from solve(rest, {v: e2[v] for v in e2
                                                if v in env or v in l[3]}, db)
                return
    raise ValueError('unsafe body %r with %r' % (body, env))


def fire(rule, db):
    out = set()
    if rule.get('agg'):
        aggs = [rule['agg']] + ([rule['agg2']] if rule.get('agg2') else [])
        nk = len(rule['hterms']) - len(aggs)
        groups = {}
        sols = set()
        for env in solve(rule['body'], {}, db):
            sols.add(tuple(sorted(env.items())))
        for s in sols:
            env = dict(s)
            key = tuple(ev(t, env, db) for t in rule['hterms'][:nk])
            vs = tuple(ev(arg, env, db) if arg else 1 for fn, arg in aggs)
            groups.setdefault(key, []).append(vs)
        for key, rows in groups.items():
            res = []
            for i, (fn, arg) in enumerate(aggs):
                vs = [row[i] for row in rows]
                if fn == 'count':
                    res.append(len(vs))
                elif fn == 'total':
                    res.append(sum(vs))
                elif fn == 'min':
                    res.append(min(vs))
                else:
                    res.append(max(vs))
            out.add(key + tuple(res))
        return out
    for env in solve(rule['body'], {}, db):
        t = tuple(ev(x, env, db) for x in rule['hterms'])
        if None not in t:
            out.add(t)
    return out


def eval_lattice(lat, db):
    """A recursive min (shortest walk from the sources, weight the edge's
    third column or 1) or max (base K less the weights): each key's best
    value over every walk (LANGUAGE.md, "Recursive min and max")."""
    kind, src, edge, base = lat
    vals = {}
    better = (lambda a, b: a < b) if kind == 'min' else (lambda a, b: a > b)
    for t in db[src]:
        if t[0] not in vals or better(base, vals[t[0]]):
            vals[t[0]] = base
    changed = True
    while changed:
        changed = False
        for t in db[edge]:
            x, y = t[0], t[1]
            w = t[2] if len(t) > 2 else 1
            if x not in vals:
                continue
            c = vals[x] + w if kind == 'min' else vals[x] - w
            if y not in vals or better(c, vals[y]):
                vals[y] = c
                changed = True
    return {(k, v) for k, v in vals.items()}


def evaluate(prog):
    db = {'#fn': {}}
    for n, p in prog.preds.items():
        if p['input']:
            db[n] = set(p['rows'])
            if p['functional']:
                db['#fn'][n] = {t[0]: t[1] for t in p['rows']}
        else:
            db[n] = set()
    for stratum in prog.strata:
        rules = [r for r in prog.rules if r['head'] in stratum]
        if rules and rules[0].get('lattice'):
            db[stratum[0]] = eval_lattice(rules[0]['lattice'], db)
            continue
        rounds = 0
        while True:
            rounds += 1
            if rounds > 200:
                raise RecursionError('no fixpoint')
            new = {n: set() for n in stratum}
            for r in rules:
                new[r['head']] |= fire(r, db)
            changed = False
            for n in stratum:
                if not new[n] <= db[n]:
                    db[n] |= new[n]
                    changed = True
                # values out of the small domain only where a rule computes
                # them: keep the evaluation finite
            if not changed:
                break
            if any(len(db[n]) > 1500 for n in stratum):
                raise RecursionError('too big')
        for n in stratum:
            if not prog.preds[n]['functional']:
                continue
            vals = {}
            for t in db[n]:
                vals.setdefault(t[:-1], set()).add(t[-1])
            clash = sorted(k for k, v in vals.items() if len(v) > 1)
            if clash:
                k = clash[0]
                v = sorted(vals[k])
                rec = any(l[0] in ('atom', 'disj') and
                          repr(l).find("'%s'" % m) >= 0
                          for r in rules for l in r['body'] for m in stratum)
                raise FDError(n, k, v[0], v[1], rec)
    return db


# ------------------------------------------------------------ generation
class Gen:
    def __init__(self, seed, quick=False):
        self.r = random.Random(seed)
        self.dom = self.r.choice([3, 4, 5, 5, 8, 12] +
                                 ([30, 60] if BIG else []))
        self.quick = quick
        self.nv = 0

    def fresh(self):
        self.nv += 1
        return 'v%d' % self.nv

    def rows(self, arity, fn=False):
        r = self.r
        n = r.randrange(0, 2 + min(self.dom ** min(arity, 2), 5 * self.dom))
        rows = set()
        keys = set()
        for _ in range(n):
            t = tuple(r.randrange(0, self.dom) for _ in range(arity))
            if fn:
                if t[0] in keys:
                    continue
                keys.add(t[0])
            rows.add(t)
        return sorted(rows)

    def term(self, bound, pool):
        """A term of a positive atom: a bound variable, a variable of the
        pool, a constant or `_`."""
        r = self.r
        x = r.random()
        if x < 0.07:
            return ('c', r.randrange(0, self.dom))
        if x < 0.17:
            return ('_',)
        if x < 0.55 and bound:
            return ('v', r.choice(bound))
        return ('v', r.choice(pool))

    def atom(self, name, bound, pool):
        ar = self.prog.preds[name]['arity']
        return ('atom', name, [self.term(bound, pool) for _ in range(ar)])

    def cyclic(self, binaries):
        """A cyclic body over binary predicates: triangle, 4-cycle, K4,
        diamond, a triangle with a chord, a bow tie."""
        r = self.r
        shapes = [
            [(0, 1), (1, 2), (2, 0)],
            [(0, 1), (1, 2), (0, 2)],
            [(0, 1), (1, 2), (2, 3), (3, 0)],
            [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)],
            [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)],
            [(0, 1), (1, 2), (2, 0), (0, 3), (3, 4), (4, 0)],
            [(0, 1), (1, 0)],
            [(0, 1), (1, 2), (2, 0), (2, 3)],
        ]
        shape = r.choice(shapes)
        vs = [self.fresh() for _ in range(5)]
        body = []
        for a, b in shape:
            p = r.choice(binaries)
            if r.random() < 0.3:
                a, b = b, a
            body.append(('atom', p, [('v', vs[a]), ('v', vs[b])]))
        used = sorted({t[1] for l in body for t in l[2]})
        return body, used

    def body(self, lower, group, need_group, allow_neg=True):
        """A safe body. lower: predicates of earlier strata; group: the
        predicates of this stratum (positive only)."""
        r = self.r
        prog = self.prog
        pool = [self.fresh() for _ in range(r.choice([2, 3, 3, 4]))]
        bound = []
        body = []
        binaries = [n for n in lower + group if prog.preds[n]['arity'] == 2]
        if binaries and r.random() < 0.35:
            if need_group:
                gb = [n for n in group if prog.preds[n]['arity'] == 2]
                if gb:
                    binaries = binaries + gb * 3
            body, bound = self.cyclic(binaries)
        natoms = r.choice([1, 1, 2, 2, 3]) if not body else r.choice([0, 0, 1])
        srcs = lower + group if need_group or not lower else lower
        for _ in range(natoms):
            a = self.atom(r.choice(srcs), bound, pool)
            body.append(a)
            for t in a[2]:
                if t[0] == 'v' and t[1] not in bound:
                    bound.append(t[1])
        if need_group and not any(l[1] in group for l in body):
            a = self.atom(r.choice(group), bound, pool)
            body.append(a)
            for t in a[2]:
                if t[0] == 'v' and t[1] not in bound:
                    bound.append(t[1])
        if r.random() < 0.15 and group and need_group:
            # non-linear: a second atom of the stratum
            a = self.atom(r.choice(group), bound, pool)
            body.append(a)
            for t in a[2]:
                if t[0] == 'v' and t[1] not in bound:
                    bound.append(t[1])
        if not bound:
            cands = [n for n in srcs if prog.preds[n]['arity'] > 0]
            p = r.choice(cands)
            v = self.fresh()
            ar = prog.preds[p]['arity']
            body.append(('atom', p, [('v', v)] + [('_',)] * (ar - 1)))
            bound.append(v)
        extra = []
        fns = [n for n in lower if prog.preds[n]['functional'] and
               prog.preds[n]['arity'] == 2]
        if fns and r.random() < 0.25:
            f = r.choice(fns)
            x = r.choice(bound)
            v = self.fresh()
            if r.random() < 0.5:
                e = ('f', f, ('v', x))
            else:
                e = ('b', r.choice(['+', '-', '*']), ('f', f, ('v', x)),
                     ('c', r.randrange(-1, 3)))
            extra.append(('assign', v, e))
            bound.append(v)
        if r.random() < 0.25:
            v = self.fresh()
            a = ('v', r.choice(bound))
            b = ('v', r.choice(bound)) if r.random() < 0.6 else \
                ('c', r.randrange(-1, 3))
            op = r.choice(['+', '-', '*', '%', '/'])
            if op in '%/':
                b = ('c', r.choice([2, 3, -2]))
            extra.append(('assign', v, ('b', op, a, b)))
            bound.append(v)
            if r.random() < 0.5:
                # a join on the computed value (a key join)
                p = r.choice(srcs)
                ar = prog.preds[p]['arity']
                if ar:
                    ts = [self.term(bound, pool + [self.fresh()])
                          for _ in range(ar)]
                    ts[r.randrange(ar)] = ('v', v)
                    body.append(('atom', p, ts))
                    for t in ts:
                        if t[0] == 'v' and t[1] not in bound:
                            bound.append(t[1])
            if need_group:
                # keep a recursion finite: computed values stay small
                extra.append(('cmp', '<', ('v', v), ('c', self.dom)))
                extra.append(('cmp', '>=', ('v', v), ('c', -1)))
        for _ in range(r.choice([0, 0, 0, 1, 1, 2])):
            a = ('v', r.choice(bound))
            if r.random() < 0.5:
                b = ('v', r.choice(bound))
            elif r.random() < 0.5:
                b = ('c', r.randrange(0, self.dom))
            else:
                b = ('b', r.choice(['+', '-']), ('v', r.choice(bound)),
                     ('c', r.randrange(1, 3)))
            extra.append(('cmp', r.choice(CMPS), a, b))
        if fns and r.random() < 0.15:
            f = r.choice(fns)
            extra.append(('cmp', r.choice(CMPS), ('f', f, ('v', r.choice(bound))),
                          ('v', r.choice(bound))))
        if lower and r.random() < 0.2:
            # a disjunction: filters on bound variables, or two atoms that
            # bind one new variable w
            w = self.fresh()
            brs = []
            for _ in range(2):
                if r.random() < 0.5:
                    p = r.choice(srcs)
                    ar = prog.preds[p]['arity']
                    if ar:
                        ts = [('v', r.choice(bound)) if r.random() < 0.5
                              else ('_',) for _ in range(ar)]
                        ts[r.randrange(ar)] = ('v', w)
                        brs.append([('atom', p, ts)])
                        continue
                b = r.choice(bound)
                brs.append([('assign', w, ('b', '+', ('v', b),
                                           ('c', r.randrange(0, 2)))),
                            ('cmp', r.choice(CMPS), ('v', b),
                             ('c', r.randrange(0, self.dom)))])
            extra.append(('disj', brs, set(bound), {w}))
            if need_group:
                extra.append(('cmp', '<', ('v', w), ('c', self.dom)))
            bound.append(w)
        if allow_neg and lower and r.random() < 0.15:
            # a negated conjunction: atoms of lower strata, their new
            # variables existential, maybe compared with bound ones
            inner = []
            local = list(bound)
            for _ in range(r.choice([1, 2])):
                p = r.choice(lower)
                ar = prog.preds[p]['arity']
                ts = []
                for _ in range(ar):
                    x = r.random()
                    if x < 0.5:
                        ts.append(('v', r.choice(local)))
                    elif x < 0.6:
                        ts.append(('_',))
                    else:
                        v = self.fresh()
                        local.append(v)
                        ts.append(('v', v))
                inner.append(('atom', p, ts))
            if r.random() < 0.5:
                inner.append(('cmp', r.choice(CMPS), ('v', r.choice(local)),
                              ('v', r.choice(bound))))
            extra.append(('negconj', inner, set(bound)))
        if allow_neg and lower and r.random() < 0.3:
            for _ in range(r.choice([1, 1, 1, 2])):
                p = r.choice(lower)
                ar = prog.preds[p]['arity']
                ts = []
                for _ in range(ar):
                    x = r.random()
                    if x < 0.65:
                        ts.append(('v', r.choice(bound)))
                    elif x < 0.85:
                        ts.append(('_',))
                    else:
                        ts.append(('c', r.randrange(0, self.dom)))
                extra.append(('neg', p, ts))
        r.shuffle(body)
        return body + extra, bound

    def make(self):
        r = self.r
        prog = Prog()
        self.prog = prog
        ninputs = r.choice([1, 2, 2, 3])
        for i in range(ninputs):
            ar = r.choice([1, 2, 2, 2, 3])
            name = 'e%d' % i
            prog.preds[name] = {'arity': ar, 'input': True, 'functional': False,
                                'rows': self.rows(ar)}
        if r.random() < 0.4:
            prog.preds['f'] = {'arity': 2, 'input': True, 'functional': True,
                               'rows': self.rows(2, fn=True)}
        lower = list(prog.preds)
        nstrata = r.randrange(1, 6)
        k = 0
        for s in range(nstrata):
            x = r.random()
            edges = [n for n in lower if prog.preds[n]['input'] and
                     prog.preds[n]['arity'] in (2, 3) and
                     not prog.preds[n]['functional']]
            if x > 0.9 and edges:
                name = 'l%d' % k
                k += 1
                kind = r.choice(['min', 'max'])
                src = r.choice([n for n in lower if prog.preds[n]['arity'] > 0])
                base = 0 if kind == 'min' else 2 * self.dom
                if r.random() < 0.3:
                    base = r.randrange(0, self.dom)
                prog.preds[name] = {'arity': 2, 'input': False,
                                    'functional': True}
                prog.rules.append({'head': name, 'agg': None, 'hterms': [],
                                   'body': [], 'lattice': (
                                       kind, src, r.choice(edges), base)})
                prog.strata.append([name])
                prog.order.append(name)
                lower.append(name)
                continue
            if x < 0.25 and s > 0 or x < 0.1:
                name = 'a%d' % k
                k += 1
                self.agg_pred(name, lower)
                lower.append(name)
                continue
            nmut = 2 if r.random() < 0.25 else 1
            group = []
            for j in range(nmut):
                name = 'p%d' % k
                k += 1
                ar = r.choice([0, 1, 1, 2, 2, 2, 3]) if j == 0 or True else 2
                prog.preds[name] = {'arity': ar, 'input': False,
                                    'functional': ar >= 2 and
                                    r.random() < 0.2}
                group.append(name)
            recursive = nmut == 2 or r.random() < 0.6
            for name in group:
                # a base rule, then recursive ones
                if r.random() < 0.1:
                    ar = prog.preds[name]['arity']
                    prog.rules.append({'head': name, 'body': [], 'agg': None,
                                       'hterms': [('c', r.randrange(0, self.dom))
                                                  for _ in range(ar)]})
                self.rule(name, lower, group, False)
                if r.random() < 0.3:
                    self.rule(name, lower, group, False)
                if recursive:
                    for _ in range(r.choice([1, 1, 2])):
                        self.rule(name, lower, group, True)
            prog.strata.append(group)
            prog.order += group
            lower += group
        return prog

    def rule(self, name, lower, group, rec):
        prog = self.prog
        ar = prog.preds[name]['arity']
        body, bound = self.body(lower, group, rec)
        hterms = []
        for _ in range(ar):
            if self.r.random() < 0.9:
                hterms.append(('v', self.r.choice(bound)))
            else:
                hterms.append(('c', self.r.randrange(0, self.dom)))
        prog.rules.append({'head': name, 'hterms': hterms, 'body': body,
                           'agg': None})

    def agg_pred(self, name, lower):
        prog = self.prog
        r = self.r
        body, bound = self.body(lower, [], False,
                                allow_neg=r.random() < 0.5)
        nkeys = r.choice([0, 1, 1, 2])
        keys = r.sample(bound, min(nkeys, len(bound)))
        fn = r.choice(AGGS)
        arg = None
        if fn != 'count':
            v = r.choice(bound)
            arg = ('v', v) if r.random() < 0.7 else \
                ('b', r.choice(['+', '*', '-']), ('v', v),
                 ('c', r.randrange(1, 3)))
        agg2 = None
        if r.random() < 0.25:
            fn2 = r.choice(AGGS)
            agg2 = (fn2, None if fn2 == 'count' else
                    ('v', r.choice(bound)))
        # wildcards inside the body count (LANGUAGE.md: every solution)
        functional = bool(keys) and r.random() < 0.5 and not agg2
        prog.preds[name] = {'arity': len(keys) + 1 + bool(agg2),
                            'input': False, 'functional': functional}
        prog.rules.append({'head': name,
                           'hterms': [('v', k) for k in keys] + [('v', '#out')]
                           + ([('v', '#out2')] if agg2 else []),
                           'body': body, 'agg': (fn, arg), 'agg2': agg2})
        prog.strata.append([name])
        prog.order.append(name)


def name_wildcards(prog):
    """A copy whose `_` in aggregate bodies' positive atoms are named
    variables for the evaluator (each its own), as LANGUAGE.md defines the
    solutions."""
    n = 0
    for rule in prog.rules:
        if not rule['agg']:
            continue
        body = []
        for l in rule['body']:
            if l[0] == 'atom':
                ts = []
                for t in l[2]:
                    if t[0] == '_':
                        n += 1
                        ts.append(('w', '_w%d' % n))
                    else:
                        ts.append(t)
                l = ('atom', l[1], ts)
            body.append(l)
        rule['ebody'] = body


# ------------------------------------------------------------ printing
def fmt_e(e, fapp):
    k = e[0]
    if k == 'v':
        return e[1]
    if k == 'c':
        return str(e[1]) if e[1] >= 0 else '(%d)' % e[1]
    if k == '_' or k == 'w':
        return '_'
    if k == 'f':
        return fapp(e)
    return '(%s %s %s)' % (fmt_e(e[2], fapp), e[1], fmt_e(e[3], fapp))


def logic_fapp(e):
    return '%s[%s]' % (e[1], fmt_e(e[2], logic_fapp))


def fmt_atom_logic(prog, name, ts):
    p = prog.preds[name]
    s = [fmt_e(t, logic_fapp) for t in ts]
    if p['functional']:
        return '%s[%s] = %s' % (name, ', '.join(s[:-1]), s[-1])
    return '%s(%s)' % (name, ', '.join(s))


def fmt_lit_logic(prog, l):
    if l[0] == 'atom':
        return fmt_atom_logic(prog, l[1], l[2])
    if l[0] == 'neg':
        return '!' + fmt_atom_logic(prog, l[1], l[2])
    if l[0] == 'assign':
        return '%s = %s' % (l[1], fmt_e(l[2], logic_fapp))
    if l[0] == 'negconj':
        return '!(%s)' % ', '.join(fmt_lit_logic(prog, x) for x in l[1])
    if l[0] == 'disj':
        return '(%s)' % ' ; '.join(', '.join(fmt_lit_logic(prog, x) for x in br)
                                   for br in l[1])
    return '%s %s %s' % (fmt_e(l[2], logic_fapp), l[1], fmt_e(l[3], logic_fapp))


def to_logic(prog):
    out = []
    for n, p in prog.preds.items():
        cols = ['c%d' % j for j in range(p['arity'])]
        if p['functional']:
            head = '%s[%s] = %s' % (n, ', '.join(cols[:-1]), cols[-1])
        else:
            head = '%s(%s)' % (n, ', '.join(cols))
        out.append('%s -> %s.' % (head, ', '.join('int(%s)' % c for c in cols)))
        if p['input']:
            out.append('lang:input[`%s] = "%s.csv".' % (n, n))
            out.append('lang:input:delimiter[`%s] = ",".' % n)
        else:
            out.append('lang:output[`%s] = "%s".' % (n, n))
    for rule in prog.rules:
        body = ', '.join(fmt_lit_logic(prog, l) for l in rule['body'])
        if rule.get('lattice'):
            kind, src, edge, base = rule['lattice']
            n = rule['head']
            sar = prog.preds[src]['arity']
            ear = prog.preds[edge]['arity']
            out.append('%s[x] = %d <- %s.' % (
                n, base, fmt_atom_logic(prog, src, [('v', 'x')] +
                                        [('_',)] * (sar - 1))))
            w = 'w' if ear == 3 else '1'
            out.append('%s[y] = m <- agg<<m = %s(c)>> %s[x] = v, %s(%s), '
                       'c = v %s %s.' % (n, kind, n, edge,
                                         'x, y, w' if ear == 3 else 'x, y',
                                         '+' if kind == 'min' else '-', w))
            continue
        if rule['agg']:
            fn, arg = rule['agg']
            a2 = rule.get('agg2')
            ht = [fmt_e(t, logic_fapp) for t in
                  rule['hterms'][:len(rule['hterms']) - 1 - bool(a2)]] + ['n']
            if a2:
                ht.append('n2')
            p = prog.preds[rule['head']]
            head = ('%s[%s] = n' % (rule['head'], ', '.join(ht[:-1]))
                    if p['functional'] else
                    '%s(%s)' % (rule['head'], ', '.join(ht)))
            fs = '%s(%s)' % (fn, fmt_e(arg, logic_fapp) if arg else '')
            if a2:
                fs += ', n2 = %s(%s)' % (a2[0], fmt_e(a2[1], logic_fapp)
                                         if a2[1] else '')
            out.append('%s <- agg<<n = %s>> %s.' % (head, fs, body))
        else:
            h = fmt_atom_logic(prog, rule['head'], rule['hterms'])
            out.append('%s <- %s.' % (h, body) if body else h + '.')
    return '\n'.join(out) + '\n'


def to_souffle(prog):
    """Souffle 2.5: f[x] is an atom f(x, t); an aggregate with groups gets
    its groups from a rule of its own (Souffle needs them bound outside)."""
    out = []
    for n, p in prog.preds.items():
        cols = ['c%d:number' % j for j in range(p['arity'])]
        out.append('.decl %s(%s)' % (n, ', '.join(cols)))
        if p['input']:
            out.append('.input %s(IO=file, filename="%s.csv", delimiter=",")'
                       % (n, n))
        else:
            out.append('.output %s' % n)
    k = [0]

    def body_of(body):
        extra = []

        def fapp(e):
            k[0] += 1
            t = 'fa%d' % k[0]
            extra.append('%s(%s, %s)' % (e[1], fmt_e(e[2], fapp), t))
            return t
        lits = []
        for l in body:
            if l[0] == 'negconj':
                raise NoSouffle()
            if l[0] == 'disj':
                lits.append('(%s)' % ' ; '.join(', '.join(body_of(br))
                                                 for br in l[1]))
                continue
            if l[0] in ('atom', 'neg'):
                s = '%s%s(%s)' % ('!' if l[0] == 'neg' else '', l[1],
                                  ', '.join(fmt_e(t, fapp) for t in l[2]))
            elif l[0] == 'assign':
                s = '%s = %s' % (l[1], fmt_e(l[2], fapp))
            else:
                s = '%s %s %s' % (fmt_e(l[2], fapp), l[1], fmt_e(l[3], fapp))
            lits.append(s)
        # the atoms a functional application stands for come first
        return extra + lits

    for i, rule in enumerate(prog.rules):
        if rule.get('lattice'):
            raise NoSouffle()
        b = body_of(rule['body'])
        if rule['agg']:
            if rule.get('agg2'):
                raise NoSouffle()
            fn, arg = rule['agg']
            keys = [fmt_e(t, None) for t in rule['hterms'][:-1]]
            fnname = {'total': 'sum'}.get(fn, fn)
            argtxt = ''
            if arg:

                def fapp2(e):
                    raise ValueError
                argtxt = ' ' + fmt_e(arg, fapp2)
            if keys:
                g = 'grp%d' % i
                out.append('.decl %s(%s)' % (g, ', '.join('k%d:number' % j for j in range(len(keys)))))
                out.append('%s(%s) :- %s.' % (g, ', '.join(keys), ', '.join(b)))
                out.append('%s(%s, n) :- %s(%s), n = %s%s : { %s }.' % (
                    rule['head'], ', '.join(keys), g, ', '.join(keys), fnname,
                    argtxt, ', '.join(b)))
            else:
                g = 'grp%d' % i
                out.append('.decl %s()' % g)
                out.append('%s() :- %s.' % (g, ', '.join(b)))
                out.append('%s(n) :- %s(), n = %s%s : { %s }.' % (
                    rule['head'], g, fnname, argtxt, ', '.join(b)))
        else:
            ht = ', '.join(fmt_e(t, None) for t in rule['hterms'])
            if b:
                out.append('%s(%s) :- %s.' % (rule['head'], ht, ', '.join(b)))
            else:
                out.append('%s(%s).' % (rule['head'], ht))
    return '\n'.join(out) + '\n'


def write(prog, d):
    os.makedirs(d, exist_ok=True)
    for n, p in prog.preds.items():
        if p['input']:
            with open(os.path.join(d, n + '.csv'), 'w') as f:
                for t in p['rows']:
                    f.write(','.join(str(x) for x in t) + '\n')
    with open(os.path.join(d, 'prog.logic'), 'w') as f:
        f.write(to_logic(prog))
    try:
        dl = to_souffle(prog)
    except NoSouffle:
        return
    with open(os.path.join(d, 'prog.dl'), 'w') as f:
        f.write(dl)


def expected(prog):
    import copy
    p2 = copy.deepcopy(prog)
    name_wildcards(p2)
    for rule in p2.rules:
        if rule['agg']:
            rule['body'] = rule['ebody']
    db = evaluate(p2)
    return {n: sorted(db[n]) for n in prog.order}


# ------------------------------------------------------------ running
def read_rows(path, sep):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = f.read().split('\n')
    return lines


def redfox_rows(out, prog):
    res = {}
    for n in prog.order:
        lines = read_rows(os.path.join(out, n + '.csv'), ',')
        if lines is None:
            res[n] = None
            continue
        ar = prog.preds[n]['arity']
        body = lines[1:]
        if ar == 0:
            res[n] = [()] * (len(lines) - 2)
        else:
            res[n] = sorted(tuple(int(x) for x in l.split(','))
                            for l in body if l)
    return res


def souffle_rows(out, prog):
    res = {}
    for n in prog.order:
        lines = read_rows(os.path.join(out, n + '.csv'), '\t')
        if lines is None:
            res[n] = None
            continue
        ar = prog.preds[n]['arity']
        if ar == 0:
            res[n] = [()] * len([l for l in lines if l != ''])
        else:
            res[n] = sorted(tuple(int(x) for x in l.split('\t'))
                            for l in lines if l)
    return res


VARIANTS = [
    ('threads1', ['--device', 'cpu', '--threads', '1'], None),
    ('no-fuse', ['--device', 'cpu', '--no-fuse'], None),
    ('no-lftj', ['--device', 'cpu', '--no-lftj'], None),
    ('no-hoist', ['--device', 'cpu', '--no-hoist'], None),
    ('no-keyjoin', ['--device', 'cpu', '--no-keyjoin'], None),
    ('no-exists', ['--device', 'cpu', '--no-exists'], None),
    ('no-partagg', ['--device', 'cpu', '--no-partagg'], None),
    ('parts1', ['--device', 'cpu', '--set', 'cpu_part_pairs=1',
                '--set', 'cpu_part_linear=1'], None),
]
# --rfx-db: the compiled .rfx and an imported database (blocks of 2 rows)
RFX_DB_VARIANTS = [
    ('rfx', ['@rfx', '--device', 'cpu'], None),
    ('db', ['@db', '--device', 'cpu'], None),
]
GPU_VARIANTS = [
    ('gpu', ['--device', 'gpu'], {'RF_GPU_EMULATE': '1'}),
    ('gpu-cap', ['--device', 'gpu', '--gpu-memory', '4K'], {'RF_GPU_EMULATE': '1'}),
    ('gpu-runs', ['--device', 'gpu', '--set', 'gpu_runs_min=1',
                  '--set', 'gpu_ordered_min=1', '--no-lftj'],
     {'RF_GPU_EMULATE': '1'}),
]


def redfox_run(redfox, d, name, extra, env=None):
    out = os.path.join(d, 'out_' + name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    prog = os.path.join(d, 'prog.logic')
    data = d
    if extra and extra[0] == '@rfx':
        prog = os.path.join(d, 'prog.rfx')
        rc, _, se = run([redfox, 'compile', os.path.join(d, 'prog.logic'),
                         '-o', prog, '--no-cache'], env)
        if rc != 0:
            return rc, se, out
        extra = extra[1:]
    if extra and extra[0] == '@db':
        data = os.path.join(d, 'db')
        shutil.rmtree(data, ignore_errors=True)
        rc, _, se = run([redfox, 'import', os.path.join(d, 'prog.logic'),
                         '--data', d, '--out', data, '--block-rows', '2'], env)
        if rc != 0:
            return rc, se, out
        extra = extra[1:]
    cache = ['--no-cache']
    if os.environ.get('JOINPROG_CACHE'):
        cache = ['--cache-dir', os.environ['JOINPROG_CACHE']]
    rc, so, se = run([redfox, 'run', prog, '--data', data, '--out', out]
                     + cache + extra, env)
    return rc, se, out


def outbytes(out, prog):
    res = {}
    for n in prog.order:
        fn = os.path.join(out, n + '.csv')
        res[n] = open(fn, 'rb').read() if os.path.exists(fn) else None
    return res


def check(prog, d, redfox, opts):
    """A list of problems (strings), each starting with a short kind."""
    shutil.rmtree(d, ignore_errors=True)
    write(prog, d)
    try:
        exp = expected(prog)
    except RecursionError:
        return []
    except FDError as e:
        n, k, v1, v2, rec = e.args
        msg = ('functional dependency violated: `%s` has two values for the '
               'key (%s): (%s) and (%s)' % (n, ', '.join(map(str, k)), v1, v2))
        if rec:
            # a recursion stops at the first round with a clash: the least
            # key of that round's
            msg = 'functional dependency violated: `'
        problems = []
        variants = [('cpu', ['--device', 'cpu'], None)] + \
            list(opts.get('variants', VARIANTS))
        if opts.get('gpu'):
            variants += GPU_VARIANTS
        for name, extra, env in variants:
            rc, se, out = redfox_run(redfox, d, name, extra, env)
            if rc != 1 or msg not in se:
                problems.append('%s-fd exit %s: %s (expected %s)'
                                % (name, rc, se.strip()[:300], msg))
        return problems
    problems = []
    rc, se, out = redfox_run(redfox, d, 'cpu', ['--device', 'cpu'])
    if rc != 0:
        return ['cpu-exit %s: %s' % (rc, se.strip()[:400])]
    got = redfox_rows(out, prog)
    for n in exp:
        if got[n] != exp[n]:
            problems.append('cpu-wrong %s: got %s expected %s'
                            % (n, got[n], exp[n]))
    base = outbytes(out, prog)
    variants = list(opts.get('variants', VARIANTS))
    if opts.get('gpu'):
        variants += GPU_VARIANTS[:opts.get('ngpu', len(GPU_VARIANTS))]
    for name, extra, env in variants:
        rc2, se2, out2 = redfox_run(redfox, d, name, extra, env)
        if rc2 != 0:
            problems.append('%s-exit %s: %s' % (name, rc2, se2.strip()[:400]))
            continue
        b2 = outbytes(out2, prog)
        for n in base:
            if b2[n] != base[n]:
                problems.append('%s-differs %s: %r vs cpu %r'
                                % (name, n, b2[n], base[n]))
    if opts.get('souffle') and os.path.exists(os.path.join(d, 'prog.dl')):
        sf = os.environ.get('SOUFFLE', 'souffle')
        so_out = os.path.join(d, 'out_souffle')
        shutil.rmtree(so_out, ignore_errors=True)
        os.makedirs(so_out)
        rc3, _, se3 = run([sf, '-j1', os.path.join(d, 'prog.dl'), '-F', d,
                           '-D', so_out])
        if rc3 != 0:
            problems.append('souffle-exit %s: %s' % (rc3, se3.strip()[:300]))
        else:
            sgot = souffle_rows(so_out, prog)
            for n in exp:
                if sgot[n] != exp[n]:
                    problems.append('souffle-wrong %s: got %s expected %s'
                                    % (n, sgot[n], exp[n]))
    return problems


def kinds(problems):
    return {p.split(' ')[0] for p in problems}


def shrink(prog, d, redfox, opts, target):
    """Drop rules, literals and input rows while a problem of the same
    kinds stays."""
    import copy

    def still(p2):
        try:
            p2.strata = [s for s in p2.strata]
            probs = check(p2, d, redfox, opts)
        except (ValueError, KeyError, IndexError):
            return False
        return bool(kinds(probs) & target)

    changed = True
    while changed:
        changed = False
        # whole derived predicates no later rule reads
        for i in range(len(prog.rules) - 1, -1, -1):
            p2 = copy.deepcopy(prog)
            del p2.rules[i]
            if still(p2):
                prog = p2
                changed = True
        for i in range(len(prog.rules)):
            j = 0
            while j < len(prog.rules[i]['body']):
                p2 = copy.deepcopy(prog)
                del p2.rules[i]['body'][j]
                if p2.rules[i]['body'] and safe(p2.rules[i]) and still(p2):
                    prog = p2
                    changed = True
                else:
                    j += 1
        for n in list(prog.preds):
            if not prog.preds[n]['input']:
                continue
            j = 0
            while j < len(prog.preds[n]['rows']):
                p2 = copy.deepcopy(prog)
                del p2.preds[n]['rows'][j]
                if still(p2):
                    prog = p2
                    changed = True
                else:
                    j += 1
    check(prog, d, redfox, opts)
    return prog


def safe(rule):
    bound = set()
    for l in rule['body']:
        if l[0] == 'atom':
            for t in l[2]:
                if t[0] == 'v':
                    bound.add(t[1])
    for _ in range(3):
        for l in rule['body']:
            if l[0] == 'assign' and evars(l[2], set()) <= bound:
                bound.add(l[1])
            if l[0] == 'disj' and l[2] <= bound:
                bound |= l[3]
    for l in rule['body']:
        if l[0] in ('disj', 'negconj') and not l[2] <= bound:
            return False
    need = set()
    for l in rule['body']:
        if l[0] == 'cmp':
            evars(l[2], need)
            evars(l[3], need)
        if l[0] == 'neg':
            for t in l[2]:
                if t[0] == 'v':
                    need.add(t[1])
        if l[0] == 'assign':
            evars(l[2], need)
    for t in rule['hterms']:
        evars(t, need)
    if rule['agg'] and rule['agg'][1]:
        evars(rule['agg'][1], need)
    need.discard('#out')
    need.discard('#out2')
    if rule.get('agg2') and rule['agg2'][1]:
        evars(rule['agg2'][1], need)
    return need <= bound


def main():
    args = sys.argv[1:]
    cmd = args[0]
    if cmd == 'gen':
        prog = Gen(int(args[1])).make()
        write(prog, args[2])
        print(expected(prog))
        return 0
    redfox = os.path.abspath(args[1])
    opts = {'gpu': '--gpu' in args, 'souffle': '--souffle' in args}
    if '--quick' in args:
        opts['variants'] = VARIANTS[1:3] + VARIANTS[-1:]
    if '--gpu-only' in args:
        opts['variants'] = []
    if '--rfx-db' in args:
        opts['variants'] = list(opts.get('variants', VARIANTS)) + \
            RFX_DB_VARIANTS
    if '--gpu1' in args:
        opts['gpu'] = True
        opts['ngpu'] = 1
    keep = None
    if '--keep' in args:
        keep = args[args.index('--keep') + 1]
    tmp = keep or tempfile.mkdtemp(prefix='rf_joinprog.')
    if cmd == 'shrink':
        seed = int(args[2])
        d = os.path.join(tmp, 'shrunk%d' % seed)
        prog = Gen(seed).make()
        probs = check(prog, d, redfox, opts)
        print('\n'.join(probs))
        if not probs:
            return 0
        prog = shrink(prog, d, redfox, opts, kinds(probs))
        print(open(os.path.join(d, 'prog.logic')).read())
        print('\n'.join(check(prog, d, redfox, opts)))
        return 1
    a, b = 0, 50
    if '--seeds' in args:
        a, b = (int(x) for x in args[args.index('--seeds') + 1].split(':'))
    bad = 0
    for seed in range(a, b):
        prog = Gen(seed).make()
        probs = check(prog, os.path.join(tmp, 's%d' % seed), redfox, opts)
        if probs:
            bad += 1
            print('seed %d:' % seed)
            for p in probs:
                print('  ' + p[:600])
        elif '-v' in args:
            print('seed %d: ok' % seed)
        sys.stdout.flush()
    if not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print('%d of %d seeds failed' % (bad, b - a))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
