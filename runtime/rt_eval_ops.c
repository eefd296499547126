/*
** runtime/rt_eval_ops.c: the CPU evaluator's operations: one expression
** node evaluated over a batch of selected rows (rt_eval.c describes the
** design).
**
** Owns: the semantics of each operation on the CPU (arithmetic with its
** overflow errors, casts, string functions, comparisons, LIKE, AND and NOT
** narrowing a selection), as rt_eval.c's opening comment states them, and
** the strings a thread computes entered in its table (rt_eval.c frees the
** tables and interns what reached the output).
*/
#include "rt_eval_internal.h"

/* ---- strings a thread computes, LIKE (see rt_eval.c's opening comment) ---- */

/* memmem, with a plain first-byte scan for short haystacks, where glibc's
** two-way setup costs more than the search */
static const char *find(const char *h, int64_t hn, const char *nd, int64_t nn)
{
    if (hn > 256) return memmem(h, (size_t)hn, nd, (size_t)nn);
    if (nn > hn) return NULL;
    const char *end = h + (hn - nn) + 1;
    while (h < end) {
        h = memchr(h, nd[0], (size_t)(end - h));
        if (!h) return NULL;
        /* the second byte first: most first-byte matches end there, without a call */
        if (nn == 1 || (h[1] == nd[1] && (nn == 2 || memcmp(h + 2, nd + 2, (size_t)nn - 2) == 0))) return h;
        h++;
    }
    return NULL;
}

static int like_fast(const char *s, int64_t n, const char *p, int64_t m)
{
    const char *pct = memchr(p, '%', (size_t)m);
    if (!pct) return n == m && memcmp(s, p, (size_t)n) == 0;
    int64_t j = pct - p, i = j;
    if (j > n || (j && memcmp(s, p, (size_t)j) != 0)) return 0;
    p += j + 1;
    m -= j + 1;
    while ((pct = memchr(p, '%', (size_t)m))) {
        j = pct - p;
        if (j > 0) {
            const char *f = find(s + i, n - i, p, j);
            if (!f) return 0;
            i = f - s + j;
        }
        p += j + 1;
        m -= j + 1;
    }
    return m == 0 || (n - m >= i && memcmp(s + n - m, p, (size_t)m) == 0);
}

int rf_rt_like_fast(const char *s, int64_t n, const char *p, int64_t m) { return like_fast(s, n, p, m); }


static char *lstore(wk *w, const char *s, int64_t len)
{
    size_t need = (size_t)len + 1;
    if (need > w->left) {
        size_t sz = need > LCHUNK / 4 ? need : LCHUNK;
        lchunk *c = malloc(sizeof *c + sz);
        if (!c) return NULL;
        c->next = w->chunks;
        w->chunks = c;
        if (sz == LCHUNK) {
            w->cur = (char *)(c + 1);
            w->left = sz;
        } else {
            char *p = (char *)(c + 1);
            memcpy(p, s, (size_t)len);
            p[len] = 0;
            return p;
        }
    }
    char *p = w->cur;
    if (len) memcpy(p, s, (size_t)len);
    p[len] = 0;
    w->cur += need;
    w->left -= need;
    return p;
}

/* The code of a computed string (see the file comment). 0, or -1 on OOM. */
static int lintern(wk *w, const char *s, int64_t len, uint32_t *code)
{
    uint64_t h64 = rf_rt_hash_bytes(s, len);
    uint32_t h = (uint32_t)(h64 ^ (h64 >> 32));
    if ((uint64_t)(w->nents + 1) * 2 > w->lcap) {
        uint64_t nc = w->lcap ? w->lcap * 2 : 1024;
        uint32_t *ns = calloc(nc, sizeof *ns);
        if (!ns) return -1;
        for (int64_t i = 0; i < w->nents; i++) {
            uint64_t j = w->ents[i].h & (nc - 1);
            while (ns[j]) j = (j + 1) & (nc - 1);
            ns[j] = (uint32_t)(i + 1);
        }
        free(w->lslots);
        w->lslots = ns;
        w->lcap = nc;
    }
    uint64_t m = w->lcap - 1, i = h & m;
    for (uint32_t sl; (sl = w->lslots[i]); i = (i + 1) & m) {
        const lent *e = &w->ents[sl - 1];
        if (e->h == h && e->len == len && (len == 0 || memcmp(e->p, s, (size_t)len) == 0)) {
            *code = e->code;
            return 0;
        }
    }
    if (w->nents == w->capents) {
        int64_t nc = w->capents ? w->capents * 2 : 256;
        lent *ne = realloc(w->ents, (size_t)nc * sizeof *ne);
        if (!ne) return -1;
        w->ents = ne;
        w->capents = nc;
    }
    lent e;
    e.h = h;
    e.len = len;
    uint32_t dc;
    if (rf_rt_dict_find(w->c->dict, s, len, &dc)) {
        int64_t l;
        e.p = rf_rt_dict_str(w->c->dict, dc, &l);
        e.code = dc;
    } else {
        if (w->npend == w->cappend) {
            int64_t nc = w->cappend ? w->cappend * 2 : 256;
            int64_t *np = realloc(w->pend, (size_t)nc * sizeof *np);
            if (!np) return -1;
            w->pend = np;
            w->cappend = nc;
        }
        if (w->npend >= RF_RT_DICT_MAX_CODES || !(e.p = lstore(w, s, len))) return -1;
        e.code = PEND | (uint32_t)w->npend;
        w->pend[w->npend++] = w->nents;
    }
    w->ents[w->nents++] = e;
    w->lslots[i] = (uint32_t)w->nents;
    *code = e.code;
    return 0;
}

/* ---- evaluation --------------------------------------------------------------- */

#define ROW(j) (sel ? sel[j] : (j))



#define GATHER(T)                                                                                                      \
    do {                                                                                                               \
        const T *s_ = x->col;                                                                                          \
        T *o_ = o;                                                                                                     \
        if (!rows)                                                                                                     \
            for (int j = 0; j < k; j++) o_[j] = s_[r0 + sel[j]];                                                       \
        else if (!sel)                                                                                                 \
            for (int j = 0; j < k; j++) o_[j] = s_[rows[r0 + j]];                                                      \
        else                                                                                                           \
            for (int j = 0; j < k; j++) o_[j] = s_[rows[r0 + sel[j]]];                                                 \
    } while (0)

/* A column's selected rows gathered into o (k elements). */
void rf_rt_ev_gather_col(const wk *w, const en *x, const uint16_t *sel, int k, void *o)
{
    const int64_t *rows = x->rows;
    int64_t r0 = w->r0;
    switch (x->width) {
    case 16: GATHER(rf_dec128); break;
    case 8: GATHER(int64_t); break;
    case 4: GATHER(uint32_t); break;
    default: GATHER(uint8_t); break;
    }
}

static const void *ev_col(wk *w, en *x, const uint16_t *sel, int k)
{
    const int64_t *rows = x->rows;
    int64_t r0 = w->r0;
    if (!rows && !sel) return (const char *)x->col + r0 * x->width;
    void *o = scr(w, x);
    switch (x->width) {
    case 16: GATHER(rf_dec128); break;
    case 8: GATHER(int64_t); break;
    case 4: GATHER(uint32_t); break;
    default: GATHER(uint8_t); break;
    }
    return o;
}

/* One step of a chain: po = pa op pb over the k rows (po may be pa). */
static void binop_step(wk *w, en *x, const uint16_t *sel, int k, const void *pa, const void *pb, void *po)
{
    char op = x->e->op;
    char b1[RF_VAL_FMT_MAX], b2[RF_VAL_FMT_MAX];
    switch (x->type) {
    case RF_TYPE_INT: {
        const int64_t *a = pa, *b = pb;
        int64_t *o = po;
        /* one loop per operator: -O2 does not take the switch out of the loop.
        ** The result goes through a local: in a chain o is a, and GCC 12
        ** stores the sum into o[j] and then reloads a[j] to compute the
        ** overflow flag, so (x + 1) + c failed wherever x + 1 + c + c would
        ** overflow; the message also named the stored sum as the operand. */
#define INT_LOOP(BUILTIN)                                                                                              \
    for (int j = 0; j < k; j++) {                                                                                      \
        int64_t r;                                                                                                     \
        if (BUILTIN(a[j], b[j], &r)) {                                                                                 \
            rf_rt_ev_fail(w, sel, j, "integer overflow in %lld %c %lld", (long long)a[j], op, (long long)b[j]);        \
            r = 0;                                                                                                     \
        }                                                                                                              \
        o[j] = r;                                                                                                      \
    }
        switch (op) {
        case '+': INT_LOOP(__builtin_add_overflow); break;
        case '-': INT_LOOP(__builtin_sub_overflow); break;
        case '*': INT_LOOP(__builtin_mul_overflow); break;
        case '%':
            /* the remainder of truncated division (C's), so it has the dividend's
            ** sign; INT64_MIN % -1 is 0 (C leaves it undefined) */
            for (int j = 0; j < k; j++) {
                if (b[j] == 0) {
                    rf_rt_ev_fail(w, sel, j, "division by zero in %lld %% 0", (long long)a[j]);
                    o[j] = 0;
                } else {
                    o[j] = b[j] == -1 ? 0 : a[j] % b[j];
                }
            }
            break;
        default:
            for (int j = 0; j < k; j++) {
                if (b[j] == 0) {
                    rf_rt_ev_fail(w, sel, j, "division by zero in %lld / 0", (long long)a[j]);
                    o[j] = 0;
                } else if (a[j] == INT64_MIN && b[j] == -1) {
                    rf_rt_ev_fail(w, sel, j, "integer overflow in %lld / %lld", (long long)a[j], (long long)b[j]);
                    o[j] = 0;
                } else {
                    o[j] = a[j] / b[j];
                }
            }
        }
#undef INT_LOOP
        break;
    }
    case RF_TYPE_DECIMAL: {
        /* 64-bit fast paths that give exactly rf_value.h's results (the range
        ** is symmetric, so INT64_MIN is out of range); the 128-bit functions
        ** otherwise */
        const int64_t *a = pa, *b = pb;
        int64_t *o = po;
#define DEC_FAIL(j)                                                                                                    \
    do {                                                                                                               \
        rf_rt_ev_fail(w, sel, j, "decimal overflow in %s %c %s", fdec(b1, a[j]), op, fdec(b2, b[j]));                           \
        o[j] = 0;                                                                                                      \
    } while (0)
        switch (op) {
        case '+':
            for (int j = 0; j < k; j++) {
                int64_t r;
                if ((__builtin_add_overflow(a[j], b[j], &r) || r == INT64_MIN) && rf_val_dec_add(a[j], b[j], &r, NULL))
                    DEC_FAIL(j);
                else
                    o[j] = r;
            }
            break;
        case '-':
            for (int j = 0; j < k; j++) {
                int64_t r;
                if ((__builtin_sub_overflow(a[j], b[j], &r) || r == INT64_MIN) && rf_val_dec_sub(a[j], b[j], &r, NULL))
                    DEC_FAIL(j);
                else
                    o[j] = r;
            }
            break;
        case '*':
            for (int j = 0; j < k; j++) {
                int64_t p, r;
                if (!__builtin_mul_overflow(a[j], b[j], &p)) {
                    int64_t q = p / RF_DEC_ONE, m = p % RF_DEC_ONE;
                    o[j] = q + (m >= RF_DEC_ONE / 2) - (m <= -RF_DEC_ONE / 2);
                } else if (rf_val_dec_mul(a[j], b[j], &r, NULL)) {
                    DEC_FAIL(j);
                } else {
                    o[j] = r;
                }
            }
            break;
        default:
            for (int j = 0; j < k; j++) {
                int64_t x1 = a[j], y = b[j], p, r;
                if (y == 0) {
                    rf_rt_ev_fail(w, sel, j, "division by zero in %s / %s", fdec(b1, x1), fdec(b2, y));
                    o[j] = 0;
                } else if (y != INT64_MIN && !__builtin_mul_overflow(x1, RF_DEC_ONE, &p)) {
                    int64_t q = p / y, m = p % y;
                    int64_t am = m < 0 ? -m : m, ay = y < 0 ? -y : y;
                    if (am >= ay - am) q += ((p < 0) != (y < 0)) ? -1 : 1;
                    o[j] = q;
                } else if (rf_val_dec_div(x1, y, &r, NULL)) {
                    DEC_FAIL(j);
                } else {
                    o[j] = r;
                }
            }
        }
#undef DEC_FAIL
        break;
    }
    case RF_TYPE_DEC128: {
        /* wide decimals are totals' results, small relations: the checked
        ** functions of rf_value.h for every row */
        const rf_dec128 *a = pa, *b = pb;
        rf_dec128 *o = po;
        for (int j = 0; j < k; j++) {
            rf_dec128 r;
            rf_val_err e;
            rf_status st = op == '+'   ? rf_val_dec128_add(a[j], b[j], &r, &e)
                           : op == '-' ? rf_val_dec128_sub(a[j], b[j], &r, &e)
                           : op == '*' ? rf_val_dec128_mul(a[j], b[j], &r, &e)
                                       : rf_val_dec128_div(a[j], b[j], &r, &e);
            if (st) {
                rf_val_write_dec128(b1, a[j]);
                rf_val_write_dec128(b2, b[j]);
                if (b[j] == 0 && op == '/')
                    rf_rt_ev_fail(w, sel, j, "division by zero in %s / %s", b1, b2);
                else
                    rf_rt_ev_fail(w, sel, j, "decimal overflow in %s %c %s", b1, op, b2);
                r = 0;
            }
            o[j] = r;
        }
        break;
    }
    case RF_TYPE_FLOAT: {
        /* every result canonical (rf_val_float_canon): 0.0 * -1.0 and an
        ** underflow of a negative product are 0.0, not -0.0 */
        const double *a = pa, *b = pb;
        double *o = po;
        switch (op) {
        case '+':
            for (int j = 0; j < k; j++) o[j] = rf_val_float_canon(a[j] + b[j]);
            break;
        case '-':
            for (int j = 0; j < k; j++) o[j] = rf_val_float_canon(a[j] - b[j]);
            break;
        case '*':
            for (int j = 0; j < k; j++) o[j] = rf_val_float_canon(a[j] * b[j]);
            break;
        default:
            for (int j = 0; j < k; j++) o[j] = rf_val_float_canon(a[j] / b[j]);
            break;
        }
        break;
    }
    default: { /* string + string */
        const uint32_t *a = pa, *b = pb;
        uint32_t *o = po;
        for (int j = 0; j < k; j++) {
            int64_t la, lb;
            const char *sa = sget(w, a[j], &la), *sb = sget(w, b[j], &lb);
            if (lb == 0 || la == 0) {
                o[j] = lb == 0 ? a[j] : b[j];
                continue;
            }
            size_t need = (size_t)(la + lb);
            if (need > w->tcap) {
                size_t nc = need > 2 * w->tcap ? need : 2 * w->tcap;
                char *nb = realloc(w->tbuf, nc);
                if (!nb) {
                    w->oom = 1;
                    return;
                }
                w->tbuf = nb;
                w->tcap = nc;
            }
            memcpy(w->tbuf, sa, (size_t)la);
            memcpy(w->tbuf + la, sb, (size_t)lb);
            if (lintern(w, w->tbuf, la + lb, &o[j])) {
                w->oom = 1;
                return;
            }
        }
        break;
    }
    }
}

/* A concatenation of more than two strings, a + b + ... + z: each row's
** bytes grow in a buffer of this call (so a nested chain in an operand has
** its own) and only the whole string is interned. Interning each partial
** result, as a step of two operands does, kept every prefix of every row
** until the call ended: n terms of m bytes took n^2 m / 2 bytes (a chain of
** 32,000 three-byte terms, 1.5 GB for a 96 KB result). A row's bytes move
** to the buffer's end with twice the room when they outgrow theirs, so
** the buffer stays within a few times the rows' results. */
typedef struct catrow {
    int64_t off, n, cap;
} catrow;

static const void *ev_concat(wk *w, en *x, const uint16_t *sel, int k)
{
    uint32_t *o = scr(w, x);
    catrow *r = malloc((size_t)(k > 0 ? k : 1) * sizeof *r);
    char *buf = NULL;
    int64_t used = 0, cap = 0;
    if (!r) {
        w->oom = 1;
        return o;
    }
    for (int j = 0; j < k; j++) r[j].off = r[j].n = r[j].cap = 0;
    for (int32_t i = 0; i < x->nargs && !w->oom; i++) {
        const uint32_t *a = rf_rt_ev(w, x->args[i], sel, k);
        for (int j = 0; j < k && !w->oom; j++) {
            int64_t l;
            const char *s = sget(w, a[j], &l);
            int64_t need = r[j].n + l;
            if (need > r[j].cap) {
                int64_t nc = need > 2 * r[j].cap ? need : 2 * r[j].cap;
                if (used + nc > cap) {
                    int64_t bc = used + nc > 2 * cap ? used + nc : 2 * cap;
                    if (bc < 4096) bc = 4096;
                    char *nb = realloc(buf, (size_t)bc);
                    if (!nb) {
                        w->oom = 1;
                        break;
                    }
                    buf = nb;
                    cap = bc;
                }
                if (r[j].n) memcpy(buf + used, buf + r[j].off, (size_t)r[j].n);
                r[j].off = used;
                r[j].cap = nc;
                used += nc;
            }
            if (l) memcpy(buf + r[j].off + r[j].n, s, (size_t)l);
            r[j].n = need;
        }
    }
    for (int j = 0; j < k && !w->oom; j++)
        if (lintern(w, r[j].n ? buf + r[j].off : "", r[j].n, &o[j])) w->oom = 1;
    free(buf);
    free(r);
    return o;
}

/* A chain, left to right: the partial result in the node's vector, each
** operand evaluated in turn into the vector above it (rt_eval.c, compile). */
static const void *ev_binop(wk *w, en *x, const uint16_t *sel, int k)
{
    if (x->type == RF_TYPE_STRING && x->nargs > 2) return ev_concat(w, x, sel, k);
    const void *pa = rf_rt_ev(w, x->args[0], sel, k);
    void *po = scr(w, x);
    for (int32_t i = 1; i < x->nargs && !w->oom; i++) {
        const void *pb = rf_rt_ev(w, x->args[i], sel, k);
        binop_step(w, x, sel, k, pa, pb, po);
        pa = po;
    }
    return po;
}


static const void *ev_neg(wk *w, en *x, const uint16_t *sel, int k)
{
    const void *pa = rf_rt_ev(w, x->args[0], sel, k);
    void *po = scr(w, x);
    if (x->type == RF_TYPE_FLOAT) {
        const double *a = pa;
        double *o = po;
        for (int j = 0; j < k; j++) o[j] = rf_val_float_canon(-a[j]); /* -(0.0) is 0.0 */
        return po;
    }
    if (x->type == RF_TYPE_DEC128) {
        const rf_dec128 *a = pa;
        rf_dec128 *o = po;
        for (int j = 0; j < k; j++) o[j] = -a[j]; /* the range is symmetric */
        return po;
    }
    const int64_t *a = pa;
    int64_t *o = po;
    for (int j = 0; j < k; j++) {
        if (a[j] == INT64_MIN) {
            /* only an int can be INT64_MIN: decimals are symmetric */
            rf_rt_ev_fail(w, sel, j, "integer overflow in -(%lld)", (long long)a[j]);
            o[j] = 0;
        } else {
            o[j] = -a[j];
        }
    }
    return po;
}

/* int->decimal, int->float, decimal->float, float->decimal, and the wide
** decimal's: int or decimal -> wide (never fails), wide -> float, wide ->
** decimal (narrowing: "decimal out of range" beyond 64 bits); shared by the
** casts and the conversion built-ins. */
static void convert(wk *w, rf_type from, rf_type to, const void *pa, void *po, const uint16_t *sel, int k,
                    const char *name)
{
    char b1[RF_VAL_FMT_MAX];
    if (from == to) {
        memcpy(po, pa, (size_t)k * (size_t)rf_rt_type_width(to));
    } else if (to == RF_TYPE_DEC128) {
        const int64_t *a = pa;
        rf_dec128 *o = po;
        if (from == RF_TYPE_INT)
            for (int j = 0; j < k; j++) o[j] = rf_val_dec128_from_int(a[j]);
        else
            for (int j = 0; j < k; j++) o[j] = rf_val_dec128_from_dec(a[j]);
    } else if (from == RF_TYPE_DEC128 && to == RF_TYPE_FLOAT) {
        const rf_dec128 *a = pa;
        double *o = po;
        for (int j = 0; j < k; j++) o[j] = rf_val_dec128_to_float(a[j]);
    } else if (from == RF_TYPE_DEC128) { /* -> decimal */
        const rf_dec128 *a = pa;
        int64_t *o = po;
        for (int j = 0; j < k; j++) {
            if (rf_val_dec128_to_dec(a[j], &o[j], NULL)) {
                rf_val_write_dec128(b1, a[j]);
                rf_rt_ev_fail(w, sel, j, "decimal out of range: %s does not fit a 64-bit decimal (at most "
                              "9223372036854.775807 either way)", b1);
                o[j] = 0;
            }
        }
    } else if (from == RF_TYPE_INT && to == RF_TYPE_DECIMAL) {
        const int64_t *a = pa;
        int64_t *o = po;
        for (int j = 0; j < k; j++) {
            int64_t r;
            if (__builtin_mul_overflow(a[j], RF_DEC_ONE, &r) || r == INT64_MIN) {
                rf_rt_ev_fail(w, sel, j, "decimal overflow in %s[%lld]", name, (long long)a[j]);
                r = 0;
            }
            o[j] = r;
        }
    } else if (from == RF_TYPE_INT && to == RF_TYPE_FLOAT) {
        const int64_t *a = pa;
        double *o = po;
        for (int j = 0; j < k; j++) o[j] = (double)a[j];
    } else if (from == RF_TYPE_DECIMAL && to == RF_TYPE_FLOAT) {
        const int64_t *a = pa;
        double *o = po;
        for (int j = 0; j < k; j++) /* rf_val_dec_to_float, its exact range inline */
            o[j] = a[j] > -((int64_t)1 << 53) && a[j] < ((int64_t)1 << 53) ? (double)a[j] / 1e6 : rf_val_dec_to_float(a[j]);
    } else {                                                   /* float -> decimal */
        const double *a = pa;
        int64_t *o = po;
        for (int j = 0; j < k; j++) {
            if (rf_val_dec_from_float(a[j], &o[j], NULL)) {
                rf_val_write_float(b1, a[j]);
                rf_rt_ev_fail(w, sel, j, "decimal overflow in %s[%s]", name, b1);
                o[j] = 0;
            }
        }
    }
}

static const void *ev_substring(wk *w, en *x, const uint16_t *sel, int k)
{
    const uint32_t *s = rf_rt_ev(w, x->args[0], sel, k);
    const int64_t *st = rf_rt_ev(w, x->args[1], sel, k);
    const int64_t *ln = rf_rt_ev(w, x->args[2], sel, k);
    uint32_t *o = scr(w, x);
    uint32_t *cache = x->sub_slot >= 0 ? w->subcache + (size_t)x->sub_slot * SUBCACHE * 2 : NULL;
    for (int j = 0; j < k; j++) {
        uint32_t in = s[j];
        uint32_t *ce = cache && !(in & PEND) ? cache + 2 * (in & (SUBCACHE - 1)) : NULL;
        if (ce && ce[0] == in) {
            o[j] = ce[1];
            continue;
        }
        int64_t n, b, e;
        const char *p = sget(w, in, &n);
        rf_val_substring(p, n, st[j], ln[j], &b, &e);
        if (b == 0 && e == n) {
            o[j] = in;
        } else if (lintern(w, p + b, e - b, &o[j])) {
            w->oom = 1;
            return o;
        }
        if (ce) {
            ce[0] = in;
            ce[1] = o[j];
        }
    }
    return o;
}

static const void *ev_call(wk *w, en *x, const uint16_t *sel, int k)
{
    rf_builtin fn = x->e->fn;
    if (fn == RF_BI_SUBSTRING) return ev_substring(w, x, sel, k);
    const void *pa = rf_rt_ev(w, x->args[0], sel, k);
    const void *pb = x->nargs > 1 ? rf_rt_ev(w, x->args[1], sel, k) : NULL;
    void *po = scr(w, x);
    char b1[RF_VAL_FMT_MAX];
    const char *name = rf_fe_builtin_info(fn)->name;
    switch (fn) {
    case RF_BI_LENGTH: {
        const uint32_t *a = pa;
        int64_t *o = po;
        for (int j = 0; j < k; j++) {
            int64_t n;
            const char *p = sget(w, a[j], &n);
            o[j] = rf_val_utf8_chars(p, n);
        }
        break;
    }
    case RF_BI_DATE_PARSE: {
        const uint32_t *a = pa;
        int32_t *o = po;
        for (int j = 0; j < k; j++) {
            int64_t n;
            const char *p = sget(w, a[j], &n);
            if (rf_val_parse_date(p, n, &o[j], NULL)) {
                rf_rt_ev_fail(w, sel, j, "invalid date in %s[\"%.*s%s\"]", name, (int)(n > 40 ? 40 : n), p, n > 40 ? "..." : "");
                o[j] = 0;
            }
        }
        break;
    }
    case RF_BI_YEAR:
    case RF_BI_MONTH:
    case RF_BI_DAY: {
        const int32_t *a = pa;
        int64_t *o = po;
        for (int j = 0; j < k; j++) {
            int32_t y, m, d;
            rf_val_civil_from_days(a[j], &y, &m, &d);
            o[j] = fn == RF_BI_YEAR ? y : fn == RF_BI_MONTH ? m : d;
        }
        break;
    }
    case RF_BI_ADD_DAYS:
    case RF_BI_ADD_MONTHS:
    case RF_BI_ADD_YEARS: {
        const int32_t *a = pa;
        const int64_t *b = pb;
        int32_t *o = po;
        for (int j = 0; j < k; j++) {
            rf_status st = fn == RF_BI_ADD_DAYS     ? rf_val_date_add_days(a[j], b[j], &o[j], NULL)
                           : fn == RF_BI_ADD_MONTHS ? rf_val_date_add_months(a[j], b[j], &o[j], NULL)
                                                    : rf_val_date_add_years(a[j], b[j], &o[j], NULL);
            if (st) {
                rf_rt_ev_fail(w, sel, j, "date out of range in %s[%s, %lld]", name, fdate(b1, a[j]), (long long)b[j]);
                o[j] = 0;
            }
        }
        break;
    }
    case RF_BI_BITAND:
    case RF_BI_BITOR:
    case RF_BI_BITXOR: {
        const int64_t *a = pa, *b = pb;
        int64_t *o = po;
        if (fn == RF_BI_BITAND)
            for (int j = 0; j < k; j++) o[j] = a[j] & b[j];
        else if (fn == RF_BI_BITOR)
            for (int j = 0; j < k; j++) o[j] = a[j] | b[j];
        else
            for (int j = 0; j < k; j++) o[j] = a[j] ^ b[j];
        break;
    }
    case RF_BI_INT_MIN:
    case RF_BI_INT_MAX: {
        const int64_t *a = pa, *b = pb;
        int64_t *o = po;
        if (fn == RF_BI_INT_MIN)
            for (int j = 0; j < k; j++) o[j] = a[j] < b[j] ? a[j] : b[j];
        else
            for (int j = 0; j < k; j++) o[j] = a[j] > b[j] ? a[j] : b[j];
        break;
    }
    case RF_BI_BITNOT: {
        const int64_t *a = pa;
        int64_t *o = po;
        for (int j = 0; j < k; j++) o[j] = ~a[j];
        break;
    }
    case RF_BI_SHL:
    case RF_BI_SHR: {
        const int64_t *a = pa, *b = pb;
        int64_t *o = po;
        for (int j = 0; j < k; j++) {
            rf_status st = fn == RF_BI_SHL ? rf_val_int_shl(a[j], b[j], &o[j], NULL)
                                           : rf_val_int_shr(a[j], b[j], &o[j], NULL);
            if (st) {
                rf_rt_ev_fail(w, sel, j, "shift count %lld out of range (0 to 63) in %s[%lld, %lld]", (long long)b[j], name,
                     (long long)a[j], (long long)b[j]);
                o[j] = 0;
            }
        }
        break;
    }
    case RF_BI_INT_FLOAT: convert(w, RF_TYPE_INT, RF_TYPE_FLOAT, pa, po, sel, k, name); break;
    case RF_BI_INT_DECIMAL: convert(w, RF_TYPE_INT, RF_TYPE_DECIMAL, pa, po, sel, k, name); break;
    case RF_BI_DECIMAL_FLOAT: convert(w, RF_TYPE_DECIMAL, RF_TYPE_FLOAT, pa, po, sel, k, name); break;
    case RF_BI_FLOAT_DECIMAL: convert(w, RF_TYPE_FLOAT, RF_TYPE_DECIMAL, pa, po, sel, k, name); break;
    default: break; /* rejected when compiling */
    }
    return po;
}

static const char *conv_name(rf_type from, rf_type to)
{
    if (to == RF_TYPE_FLOAT) return from == RF_TYPE_INT ? "int:float" : "decimal:float";
    if (to == RF_TYPE_DEC128 || from == RF_TYPE_DEC128) return "decimal";
    return from == RF_TYPE_INT ? "int:decimal" : "float:decimal";
}

static const void *ev_cast(wk *w, en *x, const uint16_t *sel, int k)
{
    const void *pa = rf_rt_ev(w, x->args[0], sel, k);
    if (x->args[0]->type == x->type) return pa;
    void *po = scr(w, x);
    convert(w, x->args[0]->type, x->type, pa, po, sel, k, conv_name(x->args[0]->type, x->type));
    return po;
}

/* The total order of rf_val_cmp_float: -0 = 0, NaNs equal and above all. */
static inline int fcmp(double a, double b)
{
    if (a < b) return -1;
    if (a > b) return 1;
    if (a == b) return 0;
    return isnan(a) - isnan(b);
}

#define CMP_LOOP(T, EXPR)                                                                                              \
    do {                                                                                                               \
        const T *a = pa, *b = pb;                                                                                      \
        switch (x->e->cmp) {                                                                                           \
        case RF_CMP_EQ:                                                                                                \
            for (int j = 0; j < k; j++) o[j] = (EXPR) == 0;                                                            \
            break;                                                                                                     \
        case RF_CMP_NE:                                                                                                \
            for (int j = 0; j < k; j++) o[j] = (EXPR) != 0;                                                            \
            break;                                                                                                     \
        case RF_CMP_LT:                                                                                                \
            for (int j = 0; j < k; j++) o[j] = (EXPR) < 0;                                                             \
            break;                                                                                                     \
        case RF_CMP_LE:                                                                                                \
            for (int j = 0; j < k; j++) o[j] = (EXPR) <= 0;                                                            \
            break;                                                                                                     \
        case RF_CMP_GT:                                                                                                \
            for (int j = 0; j < k; j++) o[j] = (EXPR) > 0;                                                             \
            break;                                                                                                     \
        case RF_CMP_GE:                                                                                                \
            for (int j = 0; j < k; j++) o[j] = (EXPR) >= 0;                                                            \
            break;                                                                                                     \
        }                                                                                                              \
    } while (0)

#define ICMP(u, v) (((u) > (v)) - ((u) < (v)))

static int scmp(const wk *w, uint32_t a, uint32_t b)
{
    if (a == b) return 0;
    int64_t la, lb;
    const char *sa = sget(w, a, &la), *sb = sget(w, b, &lb);
    return rf_val_cmp_str(sa, la, sb, lb);
}

static const void *ev_cmp(wk *w, en *x, const uint16_t *sel, int k)
{
    const void *pa = rf_rt_ev(w, x->args[0], sel, k);
    const void *pb = rf_rt_ev(w, x->args[1], sel, k);
    uint8_t *o = scr(w, x);
    switch (x->args[0]->type) {
    case RF_TYPE_INT:
    case RF_TYPE_DECIMAL: CMP_LOOP(int64_t, ICMP(a[j], b[j])); break;
    case RF_TYPE_DEC128: CMP_LOOP(rf_dec128, ICMP(a[j], b[j])); break;
    case RF_TYPE_DATE: CMP_LOOP(int32_t, ICMP(a[j], b[j])); break;
    case RF_TYPE_BOOL: CMP_LOOP(uint8_t, ICMP(a[j], b[j])); break;
    case RF_TYPE_FLOAT: CMP_LOOP(double, fcmp(a[j], b[j])); break;
    case RF_TYPE_STRING:
        /* equal strings have equal codes (also the temporary ones) */
        if (x->e->cmp == RF_CMP_EQ || x->e->cmp == RF_CMP_NE)
            CMP_LOOP(uint32_t, ICMP(a[j], b[j]));
        else
            CMP_LOOP(uint32_t, scmp(w, a[j], b[j]));
        break;
    }
    return o;
}

static int like_const(const en *x, const char *s, int64_t n)
{
    return x->pat_fast ? like_fast(s, n, x->pat, x->patlen) : rf_val_like(s, n, x->pat, x->patlen);
}

static const void *ev_like(wk *w, en *x, const uint16_t *sel, int k)
{
    const uint32_t *s = rf_rt_ev(w, x->args[0], sel, k);
    uint8_t *o = scr(w, x);
    if (x->pat_const) {
        for (int j = 0; j < k; j++) {
            uint32_t c = s[j];
            int64_t n;
            if ((int64_t)c < x->ncache) {
                unsigned char v = atomic_load_explicit(&x->cache[c], memory_order_relaxed);
                if (!v) {
                    const char *p = sget(w, c, &n);
                    v = (unsigned char)(1 + like_const(x, p, n));
                    atomic_store_explicit(&x->cache[c], v, memory_order_relaxed);
                }
                o[j] = v - 1;
            } else {
                const char *p = sget(w, c, &n);
                o[j] = (uint8_t)like_const(x, p, n);
            }
        }
        return o;
    }
    const uint32_t *pt = rf_rt_ev(w, x->args[1], sel, k);
    for (int j = 0; j < k; j++) {
        int64_t n, m;
        const char *p = sget(w, s[j], &n), *q = sget(w, pt[j], &m);
        o[j] = (uint8_t)rf_val_like(p, n, q, m);
    }
    return o;
}

static const void *ev_and(wk *w, en *x, const uint16_t *sel, int k)
{
    uint8_t *o = scr(w, x);
    uint16_t *idx = w->andbuf + ((size_t)x->and_slot * 3 + 2) * BATCH;
    memset(o, 0, (size_t)k);
    int nk = rf_rt_ev_sel(w, x, sel, k, idx);
    if (!sel) {
        for (int q = 0; q < nk; q++) o[idx[q]] = 1;
    } else {
        /* both lists are increasing: map batch indices back to positions */
        int j = 0;
        for (int q = 0; q < nk; q++) {
            while (sel[j] != idx[q]) j++;
            o[j] = 1;
        }
    }
    return o;
}

static const void *ev_not(wk *w, en *x, const uint16_t *sel, int k)
{
    const uint8_t *a = rf_rt_ev(w, x->args[0], sel, k);
    uint8_t *o = scr(w, x);
    for (int j = 0; j < k; j++) o[j] = !a[j];
    return o;
}

/* A constant without a vector of its own (past MAX_CVEC): k copies in its
** scratch vector, made where it is read. */
static const void *const_fill(wk *w, en *x, int k)
{
    void *o = scr(w, x);
    const rf_qp_expr *e = x->e;
    switch (x->type) {
    case RF_TYPE_FLOAT:
        for (int j = 0; j < k; j++) ((double *)o)[j] = e->c.f;
        break;
    case RF_TYPE_DATE:
        for (int j = 0; j < k; j++) ((int32_t *)o)[j] = (int32_t)e->c.i;
        break;
    case RF_TYPE_BOOL: memset(o, e->c.i != 0, (size_t)k); break;
    case RF_TYPE_STRING:
        for (int j = 0; j < k; j++) ((uint32_t *)o)[j] = x->code;
        break;
    case RF_TYPE_DEC128: /* a wide constant holds a decimal's value */
        for (int j = 0; j < k; j++) ((rf_dec128 *)o)[j] = e->c.i;
        break;
    default:
        for (int j = 0; j < k; j++) ((int64_t *)o)[j] = e->c.i;
        break;
    }
    return o;
}

const void *rf_rt_ev(wk *w, en *x, const uint16_t *sel, int k)
{
    switch (x->kind) {
    case RF_QP_E_COL: return ev_col(w, x, sel, k);
    case RF_QP_E_CONST: /* every element is the value: sel does not matter */
        return x->cvec ? x->cvec : const_fill(w, x, k);
    case RF_QP_E_BINOP: return ev_binop(w, x, sel, k);
    case RF_QP_E_NEG: return ev_neg(w, x, sel, k);
    case RF_QP_E_CALL: return ev_call(w, x, sel, k);
    case RF_QP_E_CAST: return ev_cast(w, x, sel, k);
    case RF_QP_E_CMP: return ev_cmp(w, x, sel, k);
    case RF_QP_E_AND: return ev_and(w, x, sel, k);
    case RF_QP_E_NOT: return ev_not(w, x, sel, k);
    case RF_QP_E_LIKE: return ev_like(w, x, sel, k);
    }
    return scr(w, x);
}

/* Writes to out the batch indices of the rows of (sel, k) where x holds;
** returns how many. out has room for k. */
int rf_rt_ev_sel(wk *w, en *x, const uint16_t *sel, int k, uint16_t *out)
{
    if (x->kind == RF_QP_E_AND) {
        uint16_t *buf = w->andbuf + (size_t)x->and_slot * 3 * BATCH;
        const uint16_t *cur = sel;
        int ck = k;
        for (int32_t a = 0; a < x->nargs; a++) {
            uint16_t *dst = a == x->nargs - 1 ? out : buf + (a & 1) * BATCH;
            ck = rf_rt_ev_sel(w, x->args[a], cur, ck, dst);
            if (ck == 0) return 0;
            cur = dst;
        }
        if (x->nargs == 0)
            for (int j = 0; j < k; j++) out[j] = (uint16_t)ROW(j);
        return ck;
    }
    const uint8_t *v = rf_rt_ev(w, x, sel, k);
    int nk = 0;
    if (!sel) {
        for (int j = 0; j < k; j++) {
            out[nk] = (uint16_t)j;
            nk += v[j] != 0;
        }
    } else {
        for (int j = 0; j < k; j++) {
            out[nk] = sel[j];
            nk += v[j] != 0;
        }
    }
    return nk;
}
