#!/usr/bin/env python3
# Owns: differential testing of LogiQL's meaning with random programs: a seeded
# generator of small valid programs with their input files, an independent
# evaluator (naive bottom-up fixpoint per stratum, as docs/LANGUAGE.md defines
# the meaning) and a driver that compares redfox's CPU run with the evaluator,
# and the emulated GPU, the optimisation switches and the .rfx path with the
# CPU run byte for byte.
#
# usage: randprog.py check REDFOX [--seeds A:B] [--gpu] [--switches] [--rfx]
#                    [--keep DIR] [-v]
#        randprog.py gen SEED DIR      (write prog.logic, inputs, expected)
#        randprog.py cases REDFOX CASEDIR TMPDIR   (the shrunk programs that
#                    once failed: CASEDIR/*.logic, each with "// file: NAME:
#                    ROW|ROW", "// expect-exit: N", "// expect-stderr: TEXT",
#                    "// expect-out: PRED: ROW|ROW" lines; run on the CPU and
#                    the GPU emulator)
import datetime
import os
import random
import subprocess
import sys
import shutil
import tempfile
from decimal import Decimal, ROUND_HALF_UP, getcontext

getcontext().prec = 60

CMPS = ['=', '!=', '<', '<=', '>', '>=']


class EvalError(Exception):
    """A run-time error the program must report (exit 1)."""


# ---------------------------------------------------------------- values
def c_div(a, b):
    if b == 0:
        raise EvalError('division by zero')
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def c_mod(a, b):
    if b == 0:
        raise EvalError('division by zero')
    return a - c_div(a, b) * b


INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1


def chk(v):
    if v < INT_MIN or v > INT_MAX:
        raise EvalError('int overflow')
    return v


def ev(e, env):
    k = e[0]
    if k == 'var':
        return env[e[1]]
    if k == 'const':
        return e[1]
    if k == 'neg':
        return chk(-ev(e[1], env))
    if k == 'call':
        a = [ev(x, env) for x in e[2]]
        f = e[1]
        if f == 'int:min':
            return min(a)
        if f == 'int:max':
            return max(a)
        if f == 'int:bitand':
            return a[0] & a[1]
        if f == 'int:bitor':
            return a[0] | a[1]
        if f == 'int:bitxor':
            return a[0] ^ a[1]
        if f == 'date:add_days':
            return a[0] + datetime.timedelta(days=a[1])
        if f == 'date:add_months':
            return add_months(a[0], a[1])
        if f == 'date:add_years':
            return add_months(a[0], 12 * a[1])
        if f == 'date:year':
            return a[0].year
        if f == 'date:month':
            return a[0].month
        if f == 'date:day':
            return a[0].day
        if f == 'int:bitnot':
            return ~a[0]
        if f == 'int:shr':
            if not 0 <= a[1] <= 63:
                raise EvalError('shift')
            return a[0] >> a[1]
        if f == 'int:shl':
            if not 0 <= a[1] <= 63:
                raise EvalError('shift')
            v = (a[0] << a[1]) & ((1 << 64) - 1)
            return v - (1 << 64) if v >= (1 << 63) else v
        if f == 'string:length':
            return len(a[0])
        if f == 'string:substring':
            return a[0][a[1]:a[1] + a[2]]
        raise ValueError(f)
    op, a, b = e[1], ev(e[2], env), ev(e[3], env)
    if isinstance(a, str):
        return a + b
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        a, b = to_dec(a), to_dec(b)
        if op == '+':
            return chk_dec(a + b)
        if op == '-':
            return chk_dec(a - b)
        if op == '*':
            return chk_dec(round6(a * b))
        if op == '/':
            if b == 0:
                raise EvalError('division by zero')
            return chk_dec(round6(a / b))
        raise ValueError(op)
    if op == '+':
        return chk(a + b)
    if op == '-':
        return chk(a - b)
    if op == '*':
        return chk(a * b)
    if op == '/':
        return chk(c_div(a, b))
    if op == '%':
        return c_mod(a, b)
    raise ValueError(op)


DEC_MAX = Decimal('9223372036854.775807')


def add_months(d, n):
    m = d.year * 12 + d.month - 1 + n
    y, m = divmod(m, 12)
    m += 1
    last = (datetime.date(y + (m == 12), m % 12 + 1, 1) -
            datetime.timedelta(days=1)).day
    return datetime.date(y, m, min(d.day, last))


def round6(d):
    return d.quantize(Decimal('0.000001'), rounding=ROUND_HALF_UP)


def chk_dec(d):
    if abs(d) > DEC_MAX:
        raise EvalError('decimal overflow')
    return d


def to_dec(v):
    return chk_dec(Decimal(v))


def like(s, pat):
    import re
    rx = ''.join('.*' if c == '%' else '.' if c == '_' else re.escape(c)
                 for c in pat)
    return re.fullmatch(rx, s, re.S) is not None


def cmp(op, a, b):
    if isinstance(a, Decimal) != isinstance(b, Decimal):
        a, b = to_dec(a), to_dec(b)
    return {'=': a == b, '!=': a != b, '<': a < b, '<=': a <= b,
            '>': a > b, '>=': a >= b}[op]


def fmt_expr(e):
    k = e[0]
    if k == 'var':
        return e[1]
    if k == 'const':
        if isinstance(e[1], str):
            return '"%s"' % e[1]
        if isinstance(e[1], datetime.date):
            return 'date:parse["%s"]' % e[1].isoformat()
        return str(e[1])
    if k == 'neg':
        return '-(' + fmt_expr(e[1]) + ')'
    if k == 'call':
        return e[1] + '[' + ', '.join(fmt_expr(x) for x in e[2]) + ']'
    return '(' + fmt_expr(e[2]) + ' ' + e[1] + ' ' + fmt_expr(e[3]) + ')'


def fmt_term(t):
    if t[0] == 'wild':
        return '_'
    return fmt_expr(t)


def fmt_dec(d):
    """A decimal as redfox prints it: trailing zeros trimmed, at least two
    fraction digits."""
    d = d.quantize(Decimal('0.000001'))
    s = '%s' % d
    neg = s.startswith('-')
    if neg:
        s = s[1:]
    ip, fp = s.split('.') if '.' in s else (s, '')
    fp = fp.rstrip('0')
    while len(fp) < 2:
        fp += '0'
    r = ip + '.' + fp
    if neg and d != 0:
        r = '-' + r
    return r


def fmt_val(v):
    if isinstance(v, Decimal):
        return fmt_dec(v)
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, bool):
        return 'true' if v else 'false'
    return str(v)


# ---------------------------------------------------------------- programs
class Pred:
    def __init__(self, name, arity, functional=False, types=None):
        self.name = name
        self.arity = arity
        self.functional = functional   # last column is the value
        self.types = types or ['int'] * arity
        self.rules = []
        self.rows = None                # inputs only
        self.lattice = None             # 'min' or 'max': a recursive min/max
        self.order = None               # [(column, desc)] of orderBy
        self.limit = None
        self.declare = False
        self.key = None                 # lang:input:key columns
        self.lines = None               # the file's rows, repeats included


def fmt_atom(p, terms):
    if p.functional and len(terms) >= 2:
        ks = ', '.join(fmt_term(t) for t in terms[:-1])
        return '%s[%s] = %s' % (p.name, ks, fmt_term(terms[-1]))
    return '%s(%s)' % (p.name, ', '.join(fmt_term(t) for t in terms))


def fmt_lit(l, atom=None, more=None):
    """A body literal as LogiQL. aggprog.py, whose atoms and comparisons are
    its own, passes atom(pred, terms) for atoms and more(l) for the kinds
    only it has (None: a kind of this function's)."""
    atom = atom or fmt_atom
    if more:
        s = more(l)
        if s is not None:
            return s
    k = l[0]
    if k == 'atom':
        return atom(l[1], l[2])
    if k == 'neg':
        return '!' + atom(l[1], l[2])
    if k == 'negconj':
        return '!(' + ', '.join(fmt_lit(x, atom, more) for x in l[1]) + ')'
    if k == 'cmp':
        return '%s %s %s' % (fmt_expr(l[2]), l[1], fmt_expr(l[3]))
    if k == 'assign':
        return '%s = %s' % (l[1], fmt_expr(l[2]))
    if k == 'like':
        return '%sstring:like(%s, "%s")' % ('!' if l[1] else '',
                                            fmt_expr(l[2]), l[3])
    if k == 'disj':
        return '(' + ' ; '.join(', '.join(fmt_lit(x, atom, more) for x in c)
                                for c in l[1]) + ')'
    raise ValueError(k)


def fmt_rule(r):
    head = fmt_atom(r['pred'], r['head'])
    for p2, h2 in r.get('also', []):
        head += ', ' + fmt_atom(p2, h2)
    body = ', '.join(fmt_lit(l) for l in r['body'])
    if r.get('agg'):
        out, fn, arg = r['agg']
        a = '' if arg is None else fmt_expr(arg)
        return '%s <- agg<<%s = %s(%s)>> %s.' % (head, out, fn, a, body)
    if not r['body']:
        return head + '.'
    return '%s <- %s.' % (head, body)


# ---------------------------------------------------------------- evaluator
def match(terms, tup, env):
    env = dict(env)
    for t, v in zip(terms, tup):
        if t[0] == 'wild':
            continue
        if t[0] == 'var':
            if t[1] in env:
                if env[t[1]] != v:
                    return None
            else:
                env[t[1]] = v
        else:
            if ev(t, env) != v:
                return None
    return env


def lit_vars(x, out):
    """The variables a literal or expression reads."""
    if isinstance(x, tuple) and len(x) == 2 and x[0] == 'var':
        out.add(x[1])
    elif isinstance(x, (tuple, list)):
        for y in x:
            lit_vars(y, out)
    return out


def guard_order(body):
    """The body in the order of docs/LANGUAGE.md's "Where such an error is
    raised": the positive atoms and the negations (but those that read an
    assigned variable) guard every condition, so they come first; the
    conditions and assignments then in the order written."""
    atoms = [l for l in body if l[0] == 'atom']
    bound = lit_vars(atoms, set())
    assigned = {l[1] for l in body if l[0] == 'assign' and l[1] not in bound}
    negs = [l for l in body if l[0] in ('neg', 'negconj')
            and not (lit_vars(l[1:], set()) & assigned)]
    return atoms + negs + [l for l in body if l not in atoms and l not in negs]


def solve(body, env, db):
    """Every environment that satisfies the body, literals left to right
    (the generator writes them in a safe order)."""
    if not body:
        yield env
        return
    l, rest = body[0], body[1:]
    k = l[0]
    if k == 'atom':
        for tup in db[l[1].name]:
            e2 = match(l[2], tup, env)
            if e2 is not None:
                yield from solve(rest, e2, db)
    elif k == 'neg':
        for tup in db[l[1].name]:
            if match(l[2], tup, env) is not None:
                return
        yield from solve(rest, env, db)
    elif k == 'negconj':
        # every solution, not just the first: a row of the conjunction that
        # fails (1 / q) fails whatever order the rows come in
        if any([True for _ in solve(l[1], env, db)]):
            return
        yield from solve(rest, env, db)
    elif k == 'cmp':
        if cmp(l[1], ev(l[2], env), ev(l[3], env)):
            yield from solve(rest, env, db)
    elif k == 'assign':
        v = ev(l[2], env)
        if l[1] in env:
            if env[l[1]] == v:
                yield from solve(rest, env, db)
        else:
            e2 = dict(env)
            e2[l[1]] = v
            yield from solve(rest, e2, db)
    elif k == 'like':
        if like(env[l[2][1]], l[3]) != l[1]:
            yield from solve(rest, env, db)
    elif k == 'disj':
        for conj in l[1]:
            yield from solve(conj + rest, env, db)
    else:
        raise ValueError(k)


def body_vars(body, out):
    """Variables of positive atoms and assignments (the aggregate's
    bindings), in order."""
    for l in body:
        if l[0] == 'atom':
            for t in l[2]:
                if t[0] == 'var' and t[1] not in out:
                    out.append(t[1])
        elif l[0] == 'assign' and l[1] not in out:
            out.append(l[1])
        elif l[0] == 'disj':
            # the variables common to every disjunct
            sets = [body_vars(c, []) for c in l[1]]
            for v in sets[0]:
                if all(v in x for x in sets) and v not in out:
                    out.append(v)
    return out


def agg_value(fn, vals, argtype):
    if fn == 'count':
        return len(vals)
    if fn == 'total':
        s = sum(vals)
        if argtype == 'int':
            return chk(s)
        return s
    if fn == 'min':
        return min(vals)
    if fn == 'max':
        return max(vals)
    if fn == 'avg':
        s = Decimal(sum(vals)) / Decimal(len(vals))
        return chk_dec(s.quantize(Decimal('0.000001'), rounding=ROUND_HALF_UP))
    raise ValueError(fn)


def fire(rule, db, head=None):
    out = set()
    if rule.get('agg'):
        outv, fn, arg = rule['agg']
        # a wildcard of a positive atom is a variable the aggregate ranges
        # over (docs/LANGUAGE.md, Aggregation: "Solutions")
        body = []
        nw = [0]

        def unwild(t):
            if t[0] != 'wild':
                return t
            nw[0] += 1
            return ('var', '_w%d' % nw[0])
        for l in rule['body']:
            if l[0] == 'atom':
                l = ('atom', l[1], [unwild(t) for t in l[2]])
            body.append(l)
        bv = body_vars(body, [])
        binds = set()
        for env in solve(guard_order(body), {}, db):
            binds.add(tuple(env[v] for v in bv))
        groups = {}
        keyterms = rule['head'][:-1]
        for b in binds:
            env = dict(zip(bv, b))
            key = tuple(ev(t, env) for t in keyterms)
            groups.setdefault(key, []).append(
                None if arg is None else ev(arg, env))
        for key, vals in groups.items():
            out.add(key + (agg_value(fn, vals, rule.get('argtype', 'int')),))
        return out
    for env in solve(guard_order(rule['body']), {}, db):
        out.add(tuple(ev(t, env) for t in (head or rule['head'])))
    return out


def better(kind, a, b):
    return a < b if kind == 'min' else a > b


def input_error(prog, p):
    """The key or functional-dependency violation of input p's file, where
    a rule reads p (an input no output needs is not read)."""
    import re
    text = '\n'.join(fmt_rule(r) for q in prog['derived'] for r in q.rules)
    if not re.search(r'\b%s[\[(]' % p.name, text):
        return None
    if p.key:
        seen = set()
        for t in (p.lines or p.rows):
            k = tuple(t[j] for j in p.key)
            if k in seen:
                return EvalError('key of %s' % p.name)
            seen.add(k)
    if p.functional:
        seen = {}
        for t in p.rows:
            if seen.setdefault(t[:-1], t[-1]) != t[-1]:
                return EvalError('functional dependency of %s' % p.name)
    return None


def evaluate(prog):
    db = {}
    for p in prog['inputs']:
        e = input_error(prog, p)
        if e:
            raise e
        db[p.name] = set(p.rows)
    for stratum in prog['strata']:
        for p in stratum:
            db[p.name] = set()
        lattice = [p for p in stratum if p.lattice]
        rounds = 0
        while True:
            changed = False
            rounds += 1
            if rounds > 10000:
                return None
            props = {p.name: set() for p in stratum}
            for p in stratum:
                for r in p.rules:
                    props[p.name] |= fire(r, db)
                    for p2, h2 in r.get('also', []):
                        props[p2.name] |= fire(r, db, h2)
            for p in stratum:
                new = props[p.name]
                if p.lattice:
                    # the best proposal per key, kept or improved
                    best = {t[:-1]: t[-1] for t in db[p.name]}
                    for t in new:
                        k = t[:-1]
                        if k not in best or better(p.lattice, t[-1], best[k]):
                            best[k] = t[-1]
                    new = {k + (v,) for k, v in best.items()}
                    if new != db[p.name]:
                        db[p.name] = new
                        changed = True
                elif not new <= db[p.name]:
                    db[p.name] |= new
                    changed = True
            if not changed:
                break
        for p in stratum:
            if p.functional and not p.lattice:
                seen = {}
                for t in db[p.name]:
                    if seen.setdefault(t[:-1], t[-1]) != t[-1]:
                        raise EvalError('functional dependency of %s'
                                        % p.name)
    return db


# ---------------------------------------------------------------- generator
STRS = ['a', 'b', 'ab', 'ba', 'abc', '']
DATES = [datetime.date(2024, 1, 31), datetime.date(2024, 2, 29),
         datetime.date(2023, 12, 31), datetime.date(2000, 2, 29),
         datetime.date(1999, 3, 1), datetime.date(2024, 3, 31)]
DECS = ['0.5', '1.25', '-0.75', '2.0', '0.333333', '3.5']
BIG = 4611686018427387904
BIGDATA = os.environ.get('RANDPROG_BIGDATA') == '1'  # inputs of hundreds of rows   # 2^62: a product or sum of two overflows


class Gen:
    def __init__(self, seed, features=('dec', 'str', 'big', 'date')):
        self.r = random.Random(seed)
        # the draws of later additions, kept apart so that a seed's program
        # stays what it was where they do not apply
        self.r2 = random.Random(seed * 7919 + 1)
        self.nvar = 0
        self.dom = self.r.choice([3, 4, 6])
        if BIGDATA:
            self.dom = self.r.choice([6, 40, 300])
            features = tuple(f for f in features if f != 'big')
        self.features = features if not BIGDATA else \
            tuple(f for f in features if f != 'big')
        self.ty = {}
        self.nextra = 0
        self.neg = self.r.random() < 0.3

    def value(self, ty):
        if ty == 'int':
            if 'big' in self.features and self.r.random() < 0.02:
                return self.r.choice([BIG, -BIG, INT_MAX, INT_MIN])
            return self.r.randrange(-1 if self.neg else 0, self.dom)
        if ty == 'decimal':
            return Decimal(self.r.choice(DECS[:self.dom]))
        if ty == 'date':
            return self.r.choice(DATES[:self.dom])
        return self.r.choice(STRS[:self.dom])

    def const(self, ty='int'):
        return ('const', self.value(ty))

    def fresh(self, ty):
        self.nvar += 1
        v = 'v%d' % self.nvar
        self.ty[v] = ty
        return v

    def of(self, vs, ty):
        return [v for v in vs if self.ty[v] == ty]

    def atom_terms(self, p, bound, allow_wild=True, neg=False):
        ts = []
        local = list(bound)
        for i in range(p.arity):
            ty = p.types[i]
            same = self.of(local, ty)
            x = self.r.random()
            if neg:
                if x < 0.6 and same:
                    ts.append(('var', self.r.choice(same)))
                elif x < 0.8 or not allow_wild:
                    ts.append(self.const(ty))
                else:
                    ts.append(('wild',))
                continue
            if x < 0.35 and same:
                ts.append(('var', self.r.choice(same)))
            elif x < 0.45:
                ts.append(self.const(ty))
            elif x < 0.55 and allow_wild:
                ts.append(('wild',))
            else:
                v = self.fresh(ty)
                local.append(v)
                ts.append(('var', v))
        return ts

    def expr(self, vs, depth=0, ty='int'):
        r = self.r
        x = r.random()
        if ty == 'string':
            cand = self.of(vs, 'string')
            if depth >= 2 or x < 0.6 or not cand:
                if cand and r.random() < 0.8:
                    return ('var', r.choice(cand))
                return ('const', r.choice(STRS))
            if x < 0.8:
                return ('bin', '+', self.expr(vs, depth + 1, 'string'),
                        self.expr(vs, depth + 1, 'string'))
            return ('call', 'string:substring',
                    [self.expr(vs, depth + 1, 'string'),
                     ('const', r.randrange(0, 3)), ('const', r.randrange(0, 3))])
        if ty == 'date':
            cand = self.of(vs, 'date')
            if depth >= 2 or x < 0.5 or not cand:
                if cand and r.random() < 0.8:
                    return ('var', r.choice(cand))
                return ('const', r.choice(DATES))
            return ('call', r.choice(['date:add_days', 'date:add_months',
                                      'date:add_years']),
                    [self.expr(vs, depth + 1, 'date'),
                     ('const', r.choice([-1, 1, 12, -13, 30, 366]))])
        if ty == 'decimal':
            cand = self.of(vs, 'decimal') + self.of(vs, 'int')
            if depth >= 2 or x < 0.4:
                if cand and r.random() < 0.75:
                    return ('var', r.choice(cand))
                return ('const', Decimal(r.choice(DECS)))
            op = r.choice(['+', '-', '*', '/'])
            a = self.expr(vs, depth + 1, 'decimal')
            if op == '/':
                b = ('const', Decimal(r.choice(['0.5', '3.0', '-2.0', '0.7'])))
            else:
                b = self.expr(vs, depth + 1, 'decimal')
            return ('bin', op, a, b)
        cand = self.of(vs, 'int')
        if depth >= 2 or x < 0.4:
            if cand and r.random() < 0.75:
                return ('var', r.choice(cand))
            if 'big' in self.features and r.random() < 0.04:
                return ('const', BIG)
            return ('const', r.randrange(-2, self.dom + 2))
        if x < 0.47:
            return ('call', r.choice(['int:min', 'int:max', 'int:bitand',
                                      'int:bitor', 'int:bitxor']),
                    [self.expr(vs, depth + 1), self.expr(vs, depth + 1)])
        if x < 0.49:
            f = r.choice(['int:shl', 'int:shr', 'int:bitnot'])
            if f == 'int:bitnot':
                return ('call', f, [self.expr(vs, depth + 1)])
            return ('call', f, [self.expr(vs, depth + 1),
                                ('const', r.choice([0, 1, 3, 62, 63]))])
        if x < 0.55 and self.of(vs, 'date'):
            return ('call', r.choice(['date:year', 'date:month', 'date:day']),
                    [self.expr(vs, depth + 1, 'date')])
        if x < 0.52 and self.of(vs, 'string'):
            return ('call', 'string:length',
                    [self.expr(vs, depth + 1, 'string')])
        op = r.choice(['+', '-', '*', '+', '-', '/', '%'])
        a = self.expr(vs, depth + 1)
        if op in '/%':
            # a divisor that is never zero, most of the time
            if r.random() < 0.9:
                b = ('const', r.choice([-3, -2, 2, 3, 5]))
            else:
                b = self.expr(vs, depth + 1)
        else:
            b = self.expr(vs, depth + 1)
        return ('bin', op, a, b)

    def cmp_lit(self, bound, depth=1):
        v = self.r.choice(bound)
        ty = self.ty[v]
        op = self.r.choice(CMPS)
        if ty == 'int' and self.r.random() < 0.3 and 'dec' in self.features:
            ty = 'decimal'
        return ('cmp', op, ('var', v), self.expr(bound, depth, ty))

    def body(self, avail, selfp, nonrec_neg, bound0=()):
        """A safe body: positive atoms first, then assignments, comparisons,
        negations."""
        body = []
        bound = list(bound0)
        natoms = self.r.choice([1, 1, 2, 2, 2, 3])
        for i in range(natoms):
            p = self.r.choice(avail)
            ts = self.atom_terms(p, bound)
            for t in ts:
                if t[0] == 'var' and t[1] not in bound:
                    bound.append(t[1])
            body.append(('atom', p, ts))
        if selfp is not None and not any(l[1] in selfp for l in body):
            p = self.r.choice(selfp)
            ts = self.atom_terms(p, bound)
            for t in ts:
                if t[0] == 'var' and t[1] not in bound:
                    bound.append(t[1])
            body.append(('atom', p, ts))
        if not bound:
            p = self.r.choice([q for q in avail if q.arity > 0])
            v = self.fresh(p.types[0])
            ts = [('var', v)] + [('wild',)] * (p.arity - 1)
            bound.append(v)
            body.append(('atom', p, ts))
        extra = []
        if selfp is None and self.r.random() < 0.4:
            ty = self.r.choice(['int', 'int', 'decimal', 'string'])
            if ty == 'decimal' and 'dec' not in self.features:
                ty = 'int'
            if ty == 'string' and not self.of(bound, 'string'):
                ty = 'int'
            e = self.expr(bound, 0, ty)
            v = self.fresh(self.expr_type(e))
            extra.append(('assign', v, e))
            bound.append(v)
        cmps = [self.cmp_lit(bound)
                for _ in range(self.r.choice([0, 0, 1, 1, 2]))]
        if extra:
            # comparisons that do not read the assigned variable come first,
            # as the plan evaluates them before computing it
            v = extra[0][1]
            first = [c for c in cmps if repr(('var', v)) not in repr(c)]
            extra = first + extra + [c for c in cmps if c not in first]
        else:
            extra = cmps
        if nonrec_neg and self.r.random() < 0.35:
            p = self.r.choice(nonrec_neg)
            extra.append(('neg', p, self.atom_terms(p, bound, neg=True)))
        if nonrec_neg and self.r.random() < 0.15:
            p = self.r.choice(nonrec_neg)
            ts = self.atom_terms(p, bound)
            inner = [('atom', p, ts)]
            iv = [t[1] for t in ts if t[0] == 'var']
            if iv:
                v = self.r.choice(iv)
                lhs = ('var', v)
                if self.ty[v] == 'int' and self.r2.random() < 0.4:
                    # a condition of the conjunction that can fail: only
                    # the rows the rule reaches may reach it
                    lhs = ('bin', '/', ('const', self.r2.choice([7, -5, 12])),
                           ('var', v))
                inner.append(('cmp', self.r.choice(CMPS), lhs,
                              self.const(self.ty[v])))
            extra.append(('negconj', inner))
        strs = [v for v in self.of(bound, 'string')
                if not any(l[0] == 'assign' and l[1] == v for l in extra)]
        if strs and self.r.random() < 0.2:
            pat = self.r.choice(['a%', '%b', '_', '%', 'a_', '%a%', '', '__%'])
            # before any assignment: the plan filters first
            extra.insert(0, ('like', self.r.random() < 0.3,
                             ('var', self.r.choice(strs)), pat))
        if selfp is None and self.r.random() < 0.15:
            # another-row test: an atom whose only new variable is compared
            # with != to a bound one (docs/LANGUAGE.md: --no-exists)
            cands = [q for q in avail if q.arity >= 2]
            if cands:
                q = self.r.choice(cands)
                j = self.r.randrange(q.arity)
                same = self.of(bound, q.types[j])
                if same:
                    ts = []
                    nv = self.fresh(q.types[j])
                    for c in range(q.arity):
                        if c == j:
                            ts.append(('var', nv))
                        else:
                            o = self.of(bound, q.types[c])
                            ts.append(('var', self.r.choice(o)) if o and
                                      self.r.random() < 0.6 else ('wild',))
                    lit = ('atom', q, ts)
                    c = ('cmp', '!=', ('var', nv), ('var', self.r.choice(same)))
                    if self.r.random() < 0.5:
                        body.append(lit)
                        extra.append(c)
                    else:
                        extra.append(('negconj', [lit, c]))
        if self.r.random() < 0.15 and bound:
            a = self.cmp_lit(bound, 2)
            b = self.cmp_lit(bound, 2)
            extra.append(('disj', [[a], [b]]))
        return body + extra, bound

    def expr_type(self, e):
        k = e[0]
        if k == 'var':
            return self.ty[e[1]]
        if k == 'const':
            v = e[1]
            if isinstance(v, datetime.date):
                return 'date'
            return ('string' if isinstance(v, str) else
                    'decimal' if isinstance(v, Decimal) else 'int')
        if k == 'call':
            if e[1].startswith('date:add'):
                return 'date'
            return ('string' if e[1] == 'string:substring' else 'int')
        ts = {self.expr_type(e[2]), self.expr_type(e[3])}
        if 'string' in ts:
            return 'string'
        return 'decimal' if 'decimal' in ts else 'int'

    def make(self):
        r = self.r
        inputs = []
        ninputs = r.choice([1, 2, 3])
        for i in range(ninputs):
            ar = r.choice([1, 2, 2, 3])
            fn = ar >= 2 and r.random() < 0.25
            types = []
            for j in range(ar):
                x = r.random()
                if x < 0.15 and 'dec' in self.features:
                    types.append('decimal')
                elif x < 0.3 and 'str' in self.features:
                    types.append('string')
                elif x < 0.38 and 'date' in self.features:
                    types.append('date')
                else:
                    types.append('int')
            p = Pred('in%d' % i, ar, functional=fn, types=types)
            n = r.randrange(0, 14) if not BIGDATA else r.randrange(0, 400)
            rows = set()
            keys = set()
            loose = r.random() < 0.1     # may break its key
            if r.random() < 0.15:
                p.key = sorted(r.sample(range(ar), r.randrange(1, ar + 1)))
            for _ in range(n):
                t = tuple(self.value(ty) for ty in types)
                if fn and t[:-1] in keys and not loose:
                    continue
                if p.key and tuple(t[j] for j in p.key) in keys and not loose:
                    continue
                keys.add(t[:-1])
                if p.key:
                    keys.add(tuple(t[j] for j in p.key))
                rows.add(t)
            p.rows = sorted(rows)
            p.lines = list(p.rows)
            if p.rows and r.random() < 0.15:
                # a line repeated whole: one fact, unless a key forbids it
                p.lines.append(r.choice(p.rows))
                r.shuffle(p.lines)
            inputs.append(p)
        derived = []
        strata = []
        avail = list(inputs)
        nd = r.randrange(1, 6)
        i = 0
        while i < nd:
            kind = r.random()
            lower = list(avail)
            lower_neg = [p for p in lower]
            if kind < 0.2:
                # aggregate predicate over lower ones
                self.nvar = 0
                body, bound = self.body(lower, None, lower_neg)
                nkeys = r.choice([0, 1, 1, 2])
                keys = [r.choice(bound) for _ in range(nkeys)]
                fn = r.choice(['count', 'total', 'min', 'max', 'avg'])
                arg = None
                outty = 'int'
                if fn != 'count':
                    aty = r.choice(['int', 'int', 'decimal', 'string'])
                    if aty == 'decimal' and 'dec' not in self.features:
                        aty = 'int'
                    if aty == 'string' and (fn not in ('min', 'max') or
                                            not self.of(bound, 'string')):
                        aty = 'int'
                    if fn in ('min', 'max') and self.of(bound, 'date') and \
                            r.random() < 0.3:
                        aty = 'date'
                    arg = self.expr(bound, 1, aty)
                    if 'var' not in repr(arg):
                        cand = self.of(bound, aty) or self.of(bound, 'int')
                        if aty == 'date':
                            arg = ('var', r.choice(self.of(bound, 'date')))
                        elif cand:
                            arg = ('bin', '+', ('var', r.choice(cand)), arg)
                        else:
                            fn, arg = 'count', None
                    if arg is not None:
                        aty = self.expr_type(arg)
                        outty = 'decimal' if fn == 'avg' else aty
                functional = r.random() < 0.7 and nkeys > 0
                p = Pred('a%d' % i, nkeys + 1, functional=functional,
                         types=[self.ty[k] for k in keys] + [outty])
                head = [('var', k) for k in keys] + [('var', 'agg_out')]
                p.rules.append({'pred': p, 'head': head, 'body': body,
                                'agg': ('agg_out', fn, arg),
                                'argtype': outty})
                derived.append(p)
                strata.append([p])
                avail.append(p)
                i += 1
                continue
            mutual = kind > 0.85 and i + 1 < nd
            group = []
            for j in range(2 if mutual else 1):
                ar = r.choice([0, 1, 1, 2, 2, 2, 3, 3])
                types = [r.choice(['int', 'int', 'int', 'decimal', 'string',
                                   'date'])
                         for _ in range(ar)]
                types = [t if (t != 'decimal' or 'dec' in self.features) and
                         (t != 'string' or 'str' in self.features) else 'int'
                         for t in types]
                group.append(Pred('p%d' % (i + j), ar, types=types))
            for p in group:
                if r.random() < 0.15 and p.arity >= 2:
                    p.functional = True
            recursive = mutual or r.random() < 0.45
            extra_preds = []
            for p in group:
                nrules = r.choice([1, 1, 2, 3])
                for k in range(nrules):
                    self.nvar = 0
                    rec = recursive and k > 0
                    if r.random() < 0.1 and not rec:
                        head = [self.const(t) for t in p.types]
                        p.rules.append({'pred': p, 'head': head, 'body': []})
                        continue
                    h = self.head_rule(p, lower, group if rec else None,
                                       lower_neg, rec)
                    if h is not None:
                        extra_preds.append(h)
                if recursive and len(p.rules) == 1:
                    self.nvar = 0
                    self.head_rule(p, lower, group, lower_neg, True)
            group += extra_preds
            derived += group
            strata.append(group)
            avail += group
            i += len(group)
        if r.random() < 0.3:
            p = self.lattice_pred(inputs)
            derived.append(p)
            strata.append([p])
        for p in derived:
            if p.arity > 0 and r.random() < 0.2:
                cols = list(range(p.arity))
                r.shuffle(cols)
                p.order = [(c, r.random() < 0.5)
                           for c in cols[:r.randrange(1, p.arity + 1)]]
            if r.random() < 0.15:
                p.limit = r.randrange(0, 5)
        return {'inputs': inputs, 'derived': derived, 'strata': strata,
                'declare': r.random() < 0.6}

    def lattice_pred(self, inputs):
        """A recursive min or max over a weighted graph g(x, y, w)."""
        r = self.r
        g = Pred('g', 3)
        g.rows = sorted({(r.randrange(0, self.dom + 2), r.randrange(0, self.dom + 2),
                          r.randrange(0, 4)) for _ in range(r.randrange(0, 16))})
        inputs.append(g)
        L = Pred('lat', 2, functional=True)
        L.declare = True
        V = lambda n: ('var', n)
        kind = r.choice(['dist', 'width', 'cc'])
        if kind == 'dist':
            L.lattice = 'min'
            L.rules.append({'pred': L, 'head': [('const', 0), ('const', 0)],
                            'body': []})
            L.rules.append({'pred': L, 'head': [V('y'), V('m')],
                            'body': [('atom', L, [V('x'), V('d')]),
                                     ('atom', g, [V('x'), V('y'), V('w')]),
                                     ('assign', 'e', ('bin', '+', V('d'), V('w')))],
                            'agg': ('m', 'min', V('e'))})
        elif kind == 'width':
            L.lattice = 'max'
            L.rules.append({'pred': L, 'head': [V('y'), V('w')],
                            'body': [('atom', g, [('const', 0), V('y'), V('w')])]})
            L.rules.append({'pred': L, 'head': [V('y'), V('m')],
                            'body': [('atom', L, [V('x'), V('w')]),
                                     ('atom', g, [V('x'), V('y'), V('k')]),
                                     ('assign', 'c', ('call', 'int:min', [V('w'), V('k')]))],
                            'agg': ('m', 'max', V('c'))})
        else:
            L.lattice = 'min'
            L.rules.append({'pred': L, 'head': [V('x'), V('x')],
                            'body': [('atom', g, [V('x'), ('wild',), ('wild',)])]})
            L.rules.append({'pred': L, 'head': [V('x'), V('x')],
                            'body': [('atom', g, [('wild',), V('x'), ('wild',)])]})
            L.rules.append({'pred': L, 'head': [V('y'), V('m')],
                            'body': [('atom', L, [V('x'), V('c')]),
                                     ('disj', [[('atom', g, [V('x'), V('y'), ('wild',)])],
                                               [('atom', g, [V('y'), V('x'), ('wild',)])]])],
                            'agg': ('m', 'min', V('c'))})
        return L

    def head_rule(self, p, lower, selfp, lower_neg, rec):
        r = self.r
        for attempt in range(20):
            body, bound = self.body(lower, selfp, lower_neg)
            head = []
            for j, ty in enumerate(p.types):
                same = self.of(bound, ty)
                if same and r.random() < 0.85:
                    head.append(('var', r.choice(same)))
                elif not rec and r.random() < 0.5:
                    e = self.expr(bound, 1, ty)
                    if self.expr_type(e) != ty:
                        e = self.const(ty)
                    head.append(e)
                elif not rec or not same:
                    head.append(self.const(ty))
                else:
                    head.append(('var', r.choice(same)))
            if not rec or any(t[0] == 'var' for t in head) or attempt > 10:
                rule = {'pred': p, 'head': head, 'body': body}
                p.rules.append(rule)
                if not rec and r.random() < 0.12:
                    # several head atoms share one body
                    ar = r.choice([1, 2])
                    vs = [r.choice(bound) for _ in range(ar)]
                    h = Pred('h%d' % self.nextra, ar,
                             types=[self.ty[v] for v in vs])
                    self.nextra += 1
                    rule['also'] = [(h, [('var', v) for v in vs])]
                    return h
                return None


def write_prog(prog, d):
    lines = []
    for p in prog['inputs']:
        cols = ['c%d' % j for j in range(p.arity)]
        if p.functional:
            head = '%s[%s] = %s' % (p.name, ', '.join(cols[:-1]), cols[-1])
        else:
            head = '%s(%s)' % (p.name, ', '.join(cols))
        lines.append('%s -> %s.' % (head, ', '.join(
            '%s(%s)' % (t, c) for t, c in zip(p.types, cols))))
        lines.append('lang:input[`%s] = "%s.csv".' % (p.name, p.name))
        lines.append('lang:input:delimiter[`%s] = ",".' % p.name)
        if p.key:
            lines.append('lang:input:key[`%s] = "%s".' % (
                p.name, ', '.join('c%d' % j for j in p.key)))
        with open(os.path.join(d, p.name + '.csv'), 'w') as f:
            for t in (p.lines or p.rows):
                f.write(','.join(str(x) for x in t) + '\n')
    for p in prog['derived']:
        if prog['declare'] or p.declare:
            cols = ['c%d' % j for j in range(p.arity)]
            if p.functional:
                head = '%s[%s] = %s' % (p.name, ', '.join(cols[:-1]),
                                        cols[-1])
            else:
                head = '%s(%s)' % (p.name, ', '.join(cols))
            lines.append('%s -> %s.' % (head, ', '.join(
                '%s(%s)' % (t, c) for t, c in zip(p.types, cols))))
        for r in p.rules:
            lines.append(fmt_rule(r))
        lines.append('lang:output[`%s] = "%s".' % (p.name, p.name))
        if p.order:
            lines.append('lang:output:orderBy[`%s] = "%s".' % (p.name, ', '.join(
                '%d%s' % (c + 1, ' desc' if d else '') for c, d in p.order)))
        if p.limit is not None:
            lines.append('lang:output:limit[`%s] = %d.' % (p.name, p.limit))
    with open(os.path.join(d, 'prog.logic'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


def expected(prog):
    """{name: sorted rows as text} or an EvalError."""
    try:
        db = evaluate(prog)
    except EvalError as e:
        return e
    except RecursionError:
        return None
    res = {}
    for p in prog['derived']:
        rows = sorted(db[p.name])
        if p.order:
            for col, desc in reversed(p.order):
                rows.sort(key=lambda t: t[col], reverse=desc)
        if p.limit is not None:
            rows = rows[:p.limit]
        if p.arity == 0:
            res[p.name] = [''] * len(rows)
            continue
        # a row of one empty string is written "" (an empty line is no row)
        res[p.name] = [','.join(fmt_val(v) for v in t) or '""' for t in rows]
    return res


def read_out(d, prog):
    res = {}
    for p in prog['derived']:
        fn = os.path.join(d, p.name + '.csv')
        if not os.path.exists(fn):
            res[p.name] = None
            continue
        with open(fn) as f:
            text = f.read()
        if p.arity == 0:
            res[p.name] = [''] * (text.count('\n') - 1)
            continue
        lines = text.split('\n')
        res[p.name] = [l for l in lines[1:] if l != '']
    return res


def run(cmd, env=None, timeout=60):
    e = dict(os.environ)
    if env:
        e.update(env)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=e,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 'timeout', '', ''


def outputs_bytes(d, prog):
    res = {}
    for p in prog['derived']:
        fn = os.path.join(d, p.name + '.csv')
        res[p.name] = open(fn, 'rb').read() if os.path.exists(fn) else None
    return res


def redfox_run(redfox, d, outname, extra, env=None):
    out = os.path.join(d, 'out_' + outname)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    prog = os.path.join(d, 'prog.logic')
    if extra and extra[0].endswith('.rfx'):
        prog, extra = extra[0], extra[1:]
    data = d
    if '--data' in extra:
        i = extra.index('--data')
        data = extra[i + 1]
        extra = extra[:i] + extra[i + 2:]
    rc, so, se = run([redfox, 'run', prog, '--data', data, '--out', out,
                      '--no-cache'] + extra, env)
    return rc, se, out


def check_seed(seed, redfox, opts):
    d = os.path.join(opts['dir'], 's%d' % seed)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    g = Gen(seed)
    prog = g.make()
    write_prog(prog, d)
    exp = expected(prog)
    problems = []
    rc, se, out = redfox_run(redfox, d, 'cpu', ['--device', 'cpu'])
    if exp is None:
        return problems
    if isinstance(exp, EvalError):
        if rc != 1:
            problems.append('oracle: error (%s); cpu exit %s: %s'
                            % (exp, rc, se.strip()[:300]))
            return problems
        # whether a rule fails does not depend on the plan, the device or
        # the .rfx path (docs/LANGUAGE.md, "Where such an error is raised")
        for name, extra, env in variants_of(d, redfox, opts, problems):
            rc2, se2, _ = redfox_run(redfox, d, name, extra, env)
            if rc2 != 1:
                problems.append('oracle: error (%s); %s exit %s: %s'
                                % (exp, name, rc2, se2.strip()[:300]))
        return problems
    if rc != 0:
        problems.append('cpu exit %s: %s' % (rc, se.strip()[:400]))
        return problems
    got = read_out(out, prog)
    for name in exp:
        if got[name] != exp[name]:
            problems.append('cpu %s: got %s expected %s'
                            % (name, got[name], exp[name]))
    base = outputs_bytes(out, prog)
    for name, extra, env in variants_of(d, redfox, opts, problems):
        rc2, se2, out2 = redfox_run(redfox, d, name, extra, env)
        if rc2 != 0:
            problems.append('%s exit %s: %s' % (name, rc2, se2.strip()[:400]))
            continue
        b2 = outputs_bytes(out2, prog)
        for k in base:
            if b2[k] != base[k]:
                problems.append('%s differs from cpu on %s: %r vs %r'
                                % (name, k, b2[k], base[k]))
    return problems


def variants_of(d, redfox, opts, problems):
    """The runs to compare with the CPU's: (name, extra arguments, env)."""
    variants = []
    if opts.get('switches'):
        for sw in opts['switches']:
            variants.append((sw.strip('-'), ['--device', 'cpu', sw], None))
    if opts.get('gpu'):
        variants.append(('gpu', ['--device', 'gpu'], {'RF_GPU_EMULATE': '1'}))
    if opts.get('rfx'):
        rfx = os.path.join(d, 'prog.rfx')
        rc2, _, se2 = run([redfox, 'compile', os.path.join(d, 'prog.logic'),
                           '-o', rfx, '--no-cache'])
        if rc2 != 0:
            problems.append('compile exit %s: %s' % (rc2, se2.strip()[:300]))
        else:
            variants.append(('rfx', [rfx, '--device', 'cpu'], None))
    if opts.get('db'):
        # the inputs imported into a database (small blocks; strings in
        # dictionaries or plain) read as the text files are
        for k, args in enumerate([['--block-rows', '2', '--strings', 'dict'],
                                  ['--strings', 'plain', '--narrow', 'on']]):
            db = os.path.join(d, 'db%d' % k)
            rc2, _, se2 = run([redfox, 'import', os.path.join(d, 'prog.logic'),
                               '--data', d, '--out', db] + args)
            if rc2 == 1 and ('functional dependency' in se2 or
                             'lang:input:key' in se2):
                # import checks every input the program declares, also one
                # no output needs (and the run does not read)
                continue
            if rc2 != 0:
                problems.append('import exit %s: %s' % (rc2, se2.strip()[:300]))
                continue
            variants.append(('db%d' % k, ['--device', 'cpu', '--data', db], None))
    return variants


def check_cases(redfox, casedir, tmp):
    bad = 0
    for name in sorted(os.listdir(casedir)):
        if not name.endswith('.logic'):
            continue
        src = open(os.path.join(casedir, name)).read()
        d = os.path.join(tmp, name[:-6])
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        shutil.copy(os.path.join(casedir, name), os.path.join(d, 'prog.logic'))
        want_rc, want_err, want_out = 0, [], {}
        for line in src.split('\n'):
            if line.startswith('// file: '):
                fn, rows = line[9:].split(': ', 1) if ': ' in line[9:] else \
                    (line[9:].rstrip(':'), '')
                with open(os.path.join(d, fn), 'w') as f:
                    for row in rows.split('|') if rows else []:
                        f.write(row + '\n')
            elif line.startswith('// expect-exit: '):
                want_rc = int(line[16:])
            elif line.startswith('// expect-stderr: '):
                want_err.append(line[18:])
            elif line.startswith('// expect-out: '):
                p, rows = line[15:].split(':', 1)
                want_out[p] = [x for x in rows.strip().split('|') if x]
        for dev, extra, env in [('cpu', ['--device', 'cpu'], None),
                                ('gpu', ['--device', 'gpu'],
                                 {'RF_GPU_EMULATE': '1'})]:
            rc, se, out = redfox_run(redfox, d, dev, extra, env)
            why = []
            if rc != want_rc:
                why.append('exit %s, expected %s' % (rc, want_rc))
            for w in want_err:
                if w not in se:
                    why.append('stderr lacks %r' % w)
            for p, rows in want_out.items():
                fn = os.path.join(out, p + '.csv')
                got = None
                if os.path.exists(fn):
                    got = [l for l in open(fn).read().split('\n')[1:] if l]
                if got != rows:
                    why.append('%s: got %s, expected %s' % (p, got, rows))
            if why:
                bad += 1
                print('case %s (%s): %s; stderr: %s'
                      % (name, dev, '; '.join(why), se.strip()[:300]))
    print('%d case runs failed' % bad)
    return 1 if bad else 0


def main():
    a = sys.argv[1:]
    if a[0] == 'cases':
        return check_cases(a[1], a[2], a[3])
    if a[0] == 'gen':
        seed, d = int(a[1]), a[2]
        os.makedirs(d, exist_ok=True)
        prog = Gen(seed).make()
        write_prog(prog, d)
        print(expected(prog))
        return 0
    redfox = a[1]
    opts = {'dir': None, 'switches': []}
    lo, hi = 0, 100
    i = 2
    verbose = False
    while i < len(a):
        if a[i] == '--seeds':
            lo, hi = map(int, a[i + 1].split(':'))
            i += 1
        elif a[i] == '--gpu':
            opts['gpu'] = True
        elif a[i] == '--db':
            opts['db'] = True
        elif a[i] == '--rfx':
            opts['rfx'] = True
        elif a[i] == '--switch':
            opts['switches'].append(a[i + 1])
            i += 1
        elif a[i] == '--keep':
            opts['dir'] = a[i + 1]
            i += 1
        elif a[i] == '-v':
            verbose = True
        i += 1
    tmp = None
    if opts['dir'] is None:
        tmp = opts['dir'] = tempfile.mkdtemp(prefix='randprog.')
    bad = 0
    for seed in range(lo, hi):
        ps = check_seed(seed, redfox, opts)
        if ps:
            bad += 1
            print('seed %d: %s' % (seed, os.path.join(opts['dir'],
                                                      's%d' % seed)))
            for p in ps:
                print('  ' + p)
        elif verbose:
            print('seed %d ok' % seed)
    if tmp and not bad:
        shutil.rmtree(tmp, ignore_errors=True)
    print('%d of %d seeds failed' % (bad, hi - lo))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
