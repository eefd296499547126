#!/usr/bin/env python3
# Owns: differential testing of aggregation's meaning (docs/LANGUAGE.md,
# Aggregation) with random programs, where randprog.py (one aggregate a rule,
# int keys over its own bodies) does not go: one to three aggregates a rule
# over int, decimal, float (inf, -inf, nan, 0.0) and string arguments; bodies
# with `_` in atoms and in functional atoms (`f1[_] = _`), atoms without named
# variables (joins inside an aggregate, not existence tests), `v = f1[x] + 0`,
# negated atoms with `_`, negated conjunctions and disjunctions of atoms
# (variables common to the disjuncts and private ones); constants in heads;
# two aggregation rules for one head; a rule negating an aggregate's result.
# An independent evaluator (every distinct binding of the body's positive
# variables, wildcards included, counts once) gives the expected outputs.
#
# usage: aggprog.py REDFOX A:B [VARIANT,...]
#   VARIANT: cpu, gpu (RF_GPU_EMULATE=1), nofuse, gpunofuse, mpiN (mpirun -np
#   N, CPU ranks), flag:OPT[:OPT...] (cpu with options), gflag:OPT[:OPT...]
#   (emulated gpu with options). A failing seed's folder is kept and printed.
import csv, os, random, subprocess, sys, shutil, tempfile
from decimal import Decimal, ROUND_HALF_UP

# (one printer of decimals and of literals for both generators)
from randprog import fmt_dec, fmt_lit as randprog_fmt_lit

DOM = range(0, 4)
SV = ['', 'a', 'B', 'ab', 'é', 'a b']
DV = [Decimal('0.1'), Decimal('-0.35'), Decimal('2.000001'), Decimal('0'), Decimal('-7')]
GV = [0.5, -1.25, 2.0, float('inf'), float('-inf'), float('nan'), 0.0]
TYPES = {'e1': ['int', 'int'], 'e2': ['int', 'int'], 'n1': ['int'], 'f1': ['int', 'int'],
         's1': ['int', 'string'], 'd1': ['int', 'decimal'], 'g1': ['int', 'float']}
def fkey(v):
    if isinstance(v, float) and v != v:
        return (2, 0.0)
    if isinstance(v, float):
        return (1, v)
    return (0, v)

class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.nv = 0
        self.ty = {}
    def fresh(self):
        self.nv += 1
        return 'v%d' % self.nv
    def data(self):
        r = self.r
        e1 = set((r.choice(DOM), r.choice(DOM)) for _ in range(r.randrange(0, 9)))
        e2 = set((r.choice(DOM), r.choice(DOM)) for _ in range(r.randrange(0, 9)))
        n1 = set((r.choice(DOM),) for _ in range(r.randrange(0, 4)))
        f1 = {}
        for _ in range(r.randrange(0, 5)):
            f1[r.choice(DOM)] = r.choice(range(-3, 6))
        s1 = set((r.choice(DOM), r.choice(SV)) for _ in range(r.randrange(0, 6)))
        d1 = set((r.choice(DOM), r.choice(DV)) for _ in range(r.randrange(0, 6)))
        g1 = set((r.choice(DOM), r.choice(GV)) for _ in range(r.randrange(0, 6)))
        return {'e1': e1, 'e2': e2, 'n1': n1, 'f1': set(f1.items()), 's1': s1, 'd1': d1, 'g1': g1}
    def term(self, bound, ty='int', newok=True):
        r = self.r
        x = r.random()
        same = [v for v in bound if self.ty[v] == ty]
        if x < 0.25:
            return ('w',)
        if x < 0.35 and ty == 'int':
            return ('c', r.choice(DOM))
        if same and (x < 0.65 or not newok):
            return ('v', r.choice(same))
        if not newok:
            return ('w',)
        v = self.fresh()
        self.ty[v] = ty
        bound.append(v)
        return ('v', v)
    def atom(self, bound, preds=('e1', 'e2', 'n1', 'f1', 's1', 'd1', 'g1')):
        p = self.r.choice(preds)
        return ('atom', p, [self.term(bound, t) for t in TYPES[p]])
    def body(self):
        r = self.r
        bound = []
        body = [self.atom(bound) for _ in range(r.choice([1, 1, 2]))]
        if not [v for v in bound if self.ty[v] == 'int']:
            v = self.fresh(); bound.append(v); self.ty[v] = 'int'
            body.append(('atom', 'e1', [('v', v), ('w',)]))
        if r.random() < 0.3:
            # disjunction of atoms: each disjunct an atom over bound vars + its own
            common_new = self.fresh() if r.random() < 0.5 else None
            ds = []
            for _ in range(2):
                b2 = list(bound)
                p = r.choice(['e1', 'e2', 'f1'])
                ts = []
                for i in range(2):
                    if i == 0 and common_new:
                        ts.append(('v', common_new))
                    else:
                        ts.append(self.term(b2, 'int'))
                ds.append([('atom', p, ts)])
            body.append(('disj', ds))
            if common_new:
                bound.append(common_new); self.ty[common_new] = 'int'
        if r.random() < 0.3:
            v = self.fresh()
            body.append(('fapp', r.choice([b for b in bound if self.ty[b] == 'int']), v))
            bound.append(v); self.ty[v] = 'int'
        if r.random() < 0.3:
            a = r.choice(bound); b = r.choice([x for x in bound if self.ty[x] == self.ty[a]])
            body.append(('cmp', r.choice(['<', '<=', '!=', '=', '>']), a, b))
        if r.random() < 0.5:
            p = r.choice(['e1', 'e2', 'n1', 'f1', 's1', 'd1', 'g1'])
            ts = []
            for t in TYPES[p]:
                same = [v for v in bound if self.ty[v] == t]
                ts.append(('v', r.choice(same)) if same and r.random() < 0.6 else (('w',) if r.random() < 0.7 or t != 'int' else ('c', r.choice(DOM))))
            ints = [v for v in bound if self.ty[v] == 'int']
            if not any(t[0] == 'v' for t in ts) and r.random() < 0.5:
                ts[0] = ('v', r.choice(ints))
            body.append(('neg', p, ts))
        if r.random() < 0.2:
            x = self.fresh()
            p = r.choice(['e1', 'e2', 'f1'])
            body.append(('negconj', [('atom', p, [('v', r.choice([b for b in bound if self.ty[b] == 'int'])), ('v', x)]), ('cmpc', '>', x, r.choice(DOM))]))
        return body, bound
    def aggrule(self, head, nkeys, consts, fns):
        body, bound = self.body()
        keys = [self.r.choice([b for b in bound if self.ty[b] == 'int']) for _ in range(nkeys)]
        aggs = []
        for i, (fn, aty) in enumerate(fns):
            cand = [v for v in bound if self.ty[v] == aty]
            if fn != 'count' and not cand:
                v = self.fresh(); self.ty[v] = aty; bound.append(v)
                p = {'int': 'e1', 'string': 's1', 'decimal': 'd1', 'float': 'g1'}[aty]
                body.insert(0, ('atom', p, [('w',), ('v', v)]))
                cand = [v]
            arg = None if fn == 'count' else self.r.choice(cand)
            aggs.append(('o%d' % i, fn, arg))
        return {'head': head, 'keys': keys, 'consts': consts, 'aggs': aggs, 'body': body}
    def prog(self):
        r = self.r
        rules = []
        preds = []
        for i in range(r.randrange(1, 4)):
            nkeys = r.choice([0, 1, 1, 2])
            consts = [r.choice(DOM)] if r.random() < 0.2 else []
            nagg = r.choice([1, 1, 2, 3])
            head = 'a%d' % i
            nrules = 2 if r.random() < 0.25 else 1
            fns = []
            for _ in range(nagg):
                fn = r.choice(['count', 'total', 'min', 'max', 'avg'])
                aty = r.choice(['int', 'int', 'string', 'decimal', 'float'])
                if aty == 'string' and fn in ('total', 'avg'): aty = 'int'
                fns.append((fn, aty))
            for _ in range(nrules):
                self.nv = 0
                rules.append(self.aggrule(head, nkeys, consts, fns))
            preds.append((head, nkeys, consts, nagg))
        # a downstream rule negating an aggregate
        down = None
        if r.random() < 0.5:
            h, nk, cs, na = r.choice(preds)
            if nk >= 1:
                down = h
        return rules, preds, down

def fmt_t(t):
    return '_' if t[0] == 'w' else (str(t[1]) if t[0] == 'c' else t[1])

def fmt_atom(p, ts):
    if p == 'f1':
        return 'f1[%s] = %s' % (fmt_t(ts[0]), fmt_t(ts[1]))
    return '%s(%s)' % (p, ', '.join(fmt_t(t) for t in ts))

def agg_lit(l):
    """The literals only this generator writes, over variables' names."""
    k = l[0]
    if k == 'fapp':
        return '%s = f1[%s] + 0' % (l[2], l[1])
    if k in ('cmp', 'cmpc'):
        return '%s %s %s' % (l[2], l[1], l[3])
    return None

def fmt_lit(l):
    return randprog_fmt_lit(l, fmt_atom, agg_lit)

def fmt_rule(ru):
    hargs = [str(c) for c in ru['consts']] + ru['keys'] + [a[0] for a in ru['aggs']]
    aggs = ', '.join('%s = %s(%s)' % (o, fn, a or '') for o, fn, a in ru['aggs'])
    return '%s(%s) <- agg<<%s>> %s.' % (ru['head'], ', '.join(hargs), aggs, ', '.join(fmt_lit(l) for l in ru['body']))

# ---------------- evaluator
def match(ts, tup, env):
    env = dict(env)
    for t, v in zip(ts, tup):
        if t[0] == 'w':
            continue
        if t[0] == 'c':
            if t[1] != v: return None
            continue
        if t[1] in env:
            if fkey(env[t[1]]) != fkey(v): return None
        else:
            env[t[1]] = v
    return env

def solve(lits, env, db, wild):
    """yield (env, wildvals) for positive parts; wild: whether wildcards are recorded"""
    if not lits:
        yield env
        return
    l, rest = lits[0], lits[1:]
    k = l[0]
    if k == 'atom':
        for tup in db[l[1]]:
            e2 = match(l[2], tup, env)
            if e2 is None: continue
            if wild is not None:
                # record wildcard values as distinct bindings
                ws = tuple(v for t, v in zip(l[2], tup) if t[0] == 'w')
                e2 = dict(e2); e2[('w', id(l))] = ws
            yield from solve(rest, e2, db, wild)
    elif k == 'neg':
        if not any(match(l[2], tup, env) is not None for tup in db[l[1]]):
            yield from solve(rest, env, db, wild)
    elif k == 'negconj':
        if not any(True for _ in solve(l[1], env, db, None)):
            yield from solve(rest, env, db, wild)
    elif k in ('cmp', 'cmpc'):
        a = fkey(env[l[2]])
        b = fkey(env[l[3]] if k == 'cmp' else l[3])
        if {'<': a < b, '<=': a <= b, '!=': a != b, '=': a == b, '>': a > b}[l[1]]:
            yield from solve(rest, env, db, wild)
    elif k == 'fapp':
        fm = dict(db['f1'])
        x = env[l[1]]
        if x in fm:
            e2 = dict(env); e2[l[2]] = fm[x]
            yield from solve(rest, e2, db, wild)
    elif k == 'disj':
        # union of the disjuncts' bindings of the common variables
        def dvars(d):
            s = set()
            for x in d:
                if x[0] == 'atom':
                    s |= {t[1] for t in x[2] if t[0] == 'v'}
            return s
        common = set.intersection(*[dvars(d) for d in l[1]]) - set(env)
        seen = set()
        for d in l[1]:
            for e2 in solve(d, env, db, None):
                key = tuple(sorted((v, e2[v]) for v in common))
                if key in seen: continue
                seen.add(key)
                e3 = dict(env); e3.update(dict(key))
                yield from solve(rest, e3, db, wild)
    else:
        raise Exception(k)

def eval_rule(ru, db):
    sols = set()
    for env in solve(ru['body'], {}, db, True):
        sols.add(tuple(sorted(((str(k), v) for k, v in env.items()), key=lambda kv: kv[0])))
    groups = {}
    for s in sols:
        env = {k: v for k, v in s}
        g = tuple(env[k] for k in ru['keys'])
        groups.setdefault(g, []).append(env)
    out = set()
    for g, envs in groups.items():
        vals = []
        for o, fn, a in ru['aggs']:
            xs = [e[a] for e in envs] if a else None
            if fn == 'count': vals.append(len(envs))
            elif fn == 'total': vals.append(tot(xs))
            elif fn == 'min': vals.append(min(xs, key=fkey))
            elif fn == 'max': vals.append(max(xs, key=fkey))
            elif fn == 'avg':
                if isinstance(xs[0], float): vals.append(tot(xs) / len(xs))
                else: vals.append(('dec', Decimal(tot(xs)) / Decimal(len(xs))))
        out.add(tuple(ru['consts']) + g + tuple(vals))
    return out

def tot(xs):
    if isinstance(xs[0], float):
        if any(x != x for x in xs): return float('nan')
        if float('inf') in xs and float('-inf') in xs: return float('nan')
        if float('inf') in xs: return float('inf')
        if float('-inf') in xs: return float('-inf')
        return sum(xs) + 0.0
    return sum(xs)

def fmtv(v):
    # an average: rounded as redfox rounds (half away from zero), then printed
    if isinstance(v, tuple): return fmt_dec(v[1].quantize(Decimal('0.000001'), rounding=ROUND_HALF_UP))
    if isinstance(v, Decimal): return fmt_dec(v)
    if isinstance(v, float):
        if v == 0: return '0.0'
        return repr(v)
    if isinstance(v, str):
        return v
    return str(v)

def evaluate(prog, db):
    rules, preds, down = prog
    res = {}
    for h, nk, cs, na in preds:
        res[h] = set()
    for ru in rules:
        res[ru['head']] |= eval_rule(ru, db)
    out = {h: list(res[h]) for h in res}
    if down:
        ks = {t[len([c for c in [p for p in preds if p[0] == down][0][2]])] for t in res[down]}
        out['dn'] = sorted({(x,) for (x, _) in db['e1'] if x not in ks})
    return out

def write(seed, d):
    g = Gen(seed)
    db = g.data()
    prog = g.prog()
    rules, preds, down = prog
    os.makedirs(d, exist_ok=True)
    L = ['e1(x, y) -> int(x), int(y).', 'e2(x, y) -> int(x), int(y).', 'n1(x) -> int(x).',
         'f1[x] = y -> int(x), int(y).', 's1(x, y) -> int(x), string(y).',
         'd1(x, y) -> int(x), decimal(y).', 'g1(x, y) -> int(x), float(y).']
    for p in ('e1', 'e2', 'n1', 'f1', 's1', 'd1', 'g1'):
        L.append('lang:input[`%s] = "%s.csv".' % (p, p))
        L.append('lang:input:delimiter[`%s] = ",".' % p)
        with open(os.path.join(d, p + '.csv'), 'w') as f:
            for t in sorted(db[p]):
                f.write(','.join(fmtv(x) if not isinstance(x, str) else x for x in t) + '\n')
    for ru in rules:
        L.append(fmt_rule(ru))
    for h, nk, cs, na in preds:
        L.append('lang:output[`%s] = "%s".' % (h, h))
    if down:
        nc = len([p for p in preds if p[0] == down][0][2])
        hargs = ['_'] * nc + ['x'] + ['_'] * ([p for p in preds if p[0] == down][0][1] - 1 + [p for p in preds if p[0] == down][0][3])
        L.append('dn(x) <- e1(x, _), !%s(%s).' % (down, ', '.join(hargs)))
        L.append('lang:output[`dn] = "dn".')
    with open(os.path.join(d, 'prog.logic'), 'w') as f:
        f.write('\n'.join(L) + '\n')
    return prog, db

def run_rf(R, d, extra, env=None):
    out = os.path.join(d, 'out')
    shutil.rmtree(out, ignore_errors=True)
    e = dict(os.environ); e.update(env or {})
    pre = []
    if extra and extra[0] == 'MPI':
        pre = ['mpirun', '--oversubscribe', '-np', extra[1]]; extra = extra[2:]
    p = subprocess.run(pre + [R, 'run', os.path.join(d, 'prog.logic'), '--data', d, '--out', out] + extra,
                       capture_output=True, text=True, env=e, timeout=120)
    if p.returncode != 0:
        return ('ERR', p.returncode, p.stderr)
    res = {}
    for fn in sorted(os.listdir(out)):
        if fn.endswith('.csv'):
            with open(os.path.join(out, fn)) as f:
                res[fn[:-4]] = [','.join(row) for row in list(csv.reader(f))[1:]]
    return res

def main():
    R = sys.argv[1]
    a, b = map(int, sys.argv[2].split(':'))
    tmp = tempfile.mkdtemp(prefix='rf_aggprog.')
    variants = sys.argv[3].split(',') if len(sys.argv) > 3 else ['cpu']
    bad = 0
    for seed in range(a, b):
        d = os.path.join(tmp, '%d' % seed)
        shutil.rmtree(d, ignore_errors=True)
        prog, db = write(seed, d)
        exp = evaluate(prog, db)
        exp = {h: [','.join(fmtv(v) for v in t) for t in rows] for h, rows in exp.items()}
        for var in variants:
            if var == 'cpu': got = run_rf(R, d, ['--device', 'cpu'])
            elif var == 'gpu': got = run_rf(R, d, ['--device', 'gpu'], {'RF_GPU_EMULATE': '1'})
            elif var == 'nofuse': got = run_rf(R, d, ['--device', 'cpu', '--no-fuse'])
            elif var.startswith('mpi'): got = run_rf(R, d, ['MPI', var[3:], '--device', 'cpu'])
            elif var.startswith('flag'): got = run_rf(R, d, ['--device', 'cpu'] + var.split(':')[1:])
            elif var.startswith('gflag'): got = run_rf(R, d, ['--device', 'gpu'] + var.split(':')[1:], {'RF_GPU_EMULATE': '1'})
            elif var == 'gpunofuse': got = run_rf(R, d, ['--device', 'gpu', '--no-fuse'], {'RF_GPU_EMULATE': '1'})
            else: sys.exit('aggprog.py: unknown variant %s' % var)
            if isinstance(got, tuple) or {h: sorted(v) for h, v in got.items()} != {h: sorted(v) for h, v in exp.items()}:
                bad += 1
                print('seed %d %s: MISMATCH (kept in %s)' % (seed, var, d))
                print(open(d + '/prog.logic').read())
                print('expected', exp)
                print('got     ', got)
                break
        else:
            shutil.rmtree(d, ignore_errors=True)
    if not bad:
        shutil.rmtree(tmp, ignore_errors=True)
    print('aggprog seeds %d:%d on %s: %d bad' % (a, b, ','.join(variants), bad))
    return 1 if bad else 0

sys.exit(main())
