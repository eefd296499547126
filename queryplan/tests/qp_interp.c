/*
** queryplan/tests/qp_interp.c: a slow, obviously-correct interpreter of the
** plan IR, for the tests only.
**
** Owns: the reference meaning of every command and expression, written as
** plainly as possible (nested loops, sorting by whole rows), so that the
** tests can check that each pass preserves the results of a plan on random
** inputs, and that the lowering computes what LOGIQL.md says. It is not the
** runtime and makes no attempt at speed.
*/
#include "qp_interp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct table {
    int64_t n, cap;
    int32_t w;
    rf_fe_const *v; /* n * w */
} table;

struct qpi {
    const rf_qp_program *p;
    rf_arena a; /* strings made while evaluating */
    table *t;   /* by relation id */
    int err;
    char why[256];
};

/* The plan's order of values (ints, decimals, dates, booleans numerically;
** floats by rf_val_cmp_float; strings bytewise). */
static int qp_const_cmp(const rf_fe_const *a, const rf_fe_const *b)
{
    if (a->type == RF_TYPE_FLOAT) return rf_val_cmp_float(a->f, b->f);
    if (a->type == RF_TYPE_STRING) return rf_val_cmp_str(a->s, a->slen, b->s, b->slen);
    return rf_val_cmp_int(a->i, b->i);
}

static void fail(qpi *q, const char *why)
{
    if (!q->err) snprintf(q->why, sizeof q->why, "%s", why);
    q->err = 1;
}

static void push(qpi *q, table *t, const rf_fe_const *row)
{
    if (t->n == t->cap) {
        int64_t nc = t->cap ? t->cap * 2 : 16;
        rf_fe_const *m = realloc(t->v, (size_t)(nc * (t->w ? t->w : 1)) * sizeof *m);
        if (!m) {
            fail(q, "out of memory");
            return;
        }
        t->v = m;
        t->cap = nc;
    }
    if (t->w) memcpy(&t->v[t->n * t->w], row, (size_t)t->w * sizeof *row);
    t->n++;
}

static int cmp_rows(const rf_fe_const *a, const rf_fe_const *b, int32_t w)
{
    for (int32_t j = 0; j < w; j++) {
        int c = qp_const_cmp(&a[j], &b[j]);
        if (c) return c;
    }
    return 0;
}

/* Insertion sort keeps this file short; tables are small in the tests. */
static void sort_table(table *t, const rf_fe_order *o, int32_t no)
{
    rf_fe_const *tmp = malloc((size_t)(t->w ? t->w : 1) * sizeof *tmp);
    if (!tmp) return;
    for (int64_t i = 1; i < t->n; i++) {
        memcpy(tmp, &t->v[i * t->w], (size_t)t->w * sizeof *tmp);
        int64_t j = i;
        while (j > 0) {
            const rf_fe_const *prev = &t->v[(j - 1) * t->w];
            int c = 0;
            if (o)
                for (int32_t k = 0; k < no && !c; k++) {
                    c = qp_const_cmp(&prev[o[k].col], &tmp[o[k].col]);
                    if (o[k].desc) c = -c;
                }
            else
                c = cmp_rows(prev, tmp, t->w);
            if (c <= 0) break;
            memcpy(&t->v[j * t->w], prev, (size_t)t->w * sizeof *tmp);
            j--;
        }
        memcpy(&t->v[j * t->w], tmp, (size_t)t->w * sizeof *tmp);
    }
    free(tmp);
}

static void dedupe(table *t)
{
    sort_table(t, NULL, 0);
    int64_t m = 0;
    for (int64_t i = 0; i < t->n; i++) {
        if (m && cmp_rows(&t->v[(m - 1) * t->w], &t->v[i * t->w], t->w) == 0) continue;
        if (m != i) memcpy(&t->v[m * t->w], &t->v[i * t->w], (size_t)t->w * sizeof *t->v);
        m++;
    }
    if (t->w == 0 && t->n > 0) m = 1;
    t->n = m;
}

static int like(const char *s, int64_t n, const char *pat, int64_t m)
{
    if (m == 0) return n == 0;
    if (pat[0] == '%') {
        for (int64_t i = 0; i <= n; i++)
            if (like(s + i, n - i, pat + 1, m - 1)) return 1;
        return 0;
    }
    if (n == 0) return 0;
    if (pat[0] == '_') {
        int k = rf_val_utf8_len(s, n);
        if (k < 1) k = 1;
        return like(s + k, n - k, pat + 1, m - 1);
    }
    return s[0] == pat[0] && like(s + 1, n - 1, pat + 1, m - 1);
}

static rf_fe_const mk(rf_type t)
{
    rf_fe_const c;
    memset(&c, 0, sizeof c);
    c.type = t;
    return c;
}

static rf_fe_const eval(qpi *q, const rf_qp_expr *e, const rf_fe_const *r0, const rf_fe_const *r1)
{
    rf_fe_const r = mk(e->type), a, b;
    if (q->err) return r;
    switch (e->kind) {
    case RF_QP_E_COL: return e->side ? r1[e->col] : r0[e->col];
    case RF_QP_E_CONST: return e->c;
    case RF_QP_E_BINOP: /* a chain, left to right */
        a = eval(q, e->args[0], r0, r1);
        for (int32_t k = 1; k < e->nargs && !q->err; k++) {
            b = eval(q, e->args[k], r0, r1);
            if (q->err) return r;
            if (e->type == RF_TYPE_FLOAT) {
                r.f = e->op == '+' ? a.f + b.f : e->op == '-' ? a.f - b.f : e->op == '*' ? a.f * b.f : a.f / b.f;
                r.f = rf_val_float_canon(r.f); /* a float zero has no sign */
            } else if (e->type == RF_TYPE_STRING) {
                char *s = rf_arena_alloc(&q->a, (size_t)(a.slen + b.slen + 1));
                if (!s) {
                    fail(q, "out of memory");
                    return r;
                }
                memcpy(s, a.s, (size_t)a.slen);
                memcpy(s + a.slen, b.s, (size_t)b.slen);
                r.s = s;
                r.slen = a.slen + b.slen;
            } else {
                rf_status st;
                /* wide decimals: this interpreter's values are small, so 64 bits hold them */
                int dec = e->type == RF_TYPE_DECIMAL || e->type == RF_TYPE_DEC128;
                switch (e->op) {
                case '+': st = dec ? rf_val_dec_add(a.i, b.i, &r.i, NULL) : rf_val_int_add(a.i, b.i, &r.i, NULL); break;
                case '-': st = dec ? rf_val_dec_sub(a.i, b.i, &r.i, NULL) : rf_val_int_sub(a.i, b.i, &r.i, NULL); break;
                case '*': st = dec ? rf_val_dec_mul(a.i, b.i, &r.i, NULL) : rf_val_int_mul(a.i, b.i, &r.i, NULL); break;
                case '%': st = rf_val_int_mod(a.i, b.i, &r.i, NULL); break;
                default: st = dec ? rf_val_dec_div(a.i, b.i, &r.i, NULL) : rf_val_int_div(a.i, b.i, &r.i, NULL); break;
                }
                if (st) fail(q, "arithmetic error");
            }
            a = r;
        }
        return r;
    case RF_QP_E_NEG:
        a = eval(q, e->args[0], r0, r1);
        if (e->type == RF_TYPE_FLOAT) r.f = rf_val_float_canon(-a.f);
        else if (e->type == RF_TYPE_DECIMAL || e->type == RF_TYPE_DEC128) {
            if (rf_val_dec_neg(a.i, &r.i, NULL)) fail(q, "arithmetic error");
        } else if (a.i == INT64_MIN) fail(q, "arithmetic error");
        else r.i = -a.i;
        return r;
    case RF_QP_E_CAST:
        a = eval(q, e->args[0], r0, r1);
        if ((e->type == RF_TYPE_DECIMAL || e->type == RF_TYPE_DEC128) && a.type != RF_TYPE_INT) {
            r.i = a.i; /* between decimal and wide decimal: the same value */
        } else if (e->type == RF_TYPE_DECIMAL || e->type == RF_TYPE_DEC128) {
            if (rf_val_dec_from_int(a.i, &r.i, NULL)) fail(q, "arithmetic error");
        } else {
            r.f = a.type == RF_TYPE_INT ? (double)a.i : rf_val_dec_to_float(a.i);
        }
        return r;
    case RF_QP_E_CALL: {
        rf_fe_const x[3];
        for (int32_t i = 0; i < e->nargs && i < 3; i++) x[i] = eval(q, e->args[i], r0, r1);
        if (q->err) return r;
        int32_t d = 0;
        rf_status st = RF_OK;
        switch (e->fn) {
        case RF_BI_INT_FLOAT: r.f = (double)x[0].i; break;
        case RF_BI_INT_DECIMAL: st = rf_val_dec_from_int(x[0].i, &r.i, NULL); break;
        case RF_BI_DECIMAL_FLOAT: r.f = rf_val_dec_to_float(x[0].i); break;
        case RF_BI_FLOAT_DECIMAL: st = rf_val_dec_from_float(x[0].f, &r.i, NULL); break;
        case RF_BI_BITAND: r.i = x[0].i & x[1].i; break;
        case RF_BI_BITOR: r.i = x[0].i | x[1].i; break;
        case RF_BI_BITXOR: r.i = x[0].i ^ x[1].i; break;
        case RF_BI_BITNOT: r.i = ~x[0].i; break;
        case RF_BI_INT_MIN: r.i = x[0].i < x[1].i ? x[0].i : x[1].i; break;
        case RF_BI_INT_MAX: r.i = x[0].i > x[1].i ? x[0].i : x[1].i; break;
        case RF_BI_SHL: st = rf_val_int_shl(x[0].i, x[1].i, &r.i, NULL); break;
        case RF_BI_SHR: st = rf_val_int_shr(x[0].i, x[1].i, &r.i, NULL); break;
        case RF_BI_YEAR: r.i = rf_val_date_year((int32_t)x[0].i); break;
        case RF_BI_MONTH: r.i = rf_val_date_month((int32_t)x[0].i); break;
        case RF_BI_DAY: r.i = rf_val_date_day((int32_t)x[0].i); break;
        case RF_BI_ADD_DAYS: st = rf_val_date_add_days((int32_t)x[0].i, x[1].i, &d, NULL); r.i = d; break;
        case RF_BI_ADD_MONTHS: st = rf_val_date_add_months((int32_t)x[0].i, x[1].i, &d, NULL); r.i = d; break;
        case RF_BI_ADD_YEARS: st = rf_val_date_add_years((int32_t)x[0].i, x[1].i, &d, NULL); r.i = d; break;
        case RF_BI_DATE_PARSE: st = rf_val_parse_date(x[0].s, x[0].slen, &d, NULL); r.i = d; break;
        case RF_BI_LENGTH: {
            int64_t n = 0;
            for (int64_t i = 0; i < x[0].slen; n++) {
                int k = rf_val_utf8_len(x[0].s + i, x[0].slen - i);
                i += k > 0 ? k : 1;
            }
            r.i = n;
            break;
        }
        case RF_BI_SUBSTRING: {
            int64_t i = 0, k = 0;
            if (x[1].i < 0 || x[2].i < 0) {
                fail(q, "bad substring");
                break;
            }
            for (; i < x[0].slen && k < x[1].i; k++) {
                int l = rf_val_utf8_len(x[0].s + i, x[0].slen - i);
                i += l > 0 ? l : 1;
            }
            int64_t j = i;
            for (k = 0; j < x[0].slen && k < x[2].i; k++) {
                int l = rf_val_utf8_len(x[0].s + j, x[0].slen - j);
                j += l > 0 ? l : 1;
            }
            r.s = x[0].s + i;
            r.slen = j - i;
            break;
        }
        default: fail(q, "unknown built-in"); break;
        }
        if (st) fail(q, "built-in error");
        return r;
    }
    case RF_QP_E_CMP: {
        a = eval(q, e->args[0], r0, r1);
        b = eval(q, e->args[1], r0, r1);
        int c = qp_const_cmp(&a, &b);
        switch (e->cmp) {
        case RF_CMP_EQ: r.i = c == 0; break;
        case RF_CMP_NE: r.i = c != 0; break;
        case RF_CMP_LT: r.i = c < 0; break;
        case RF_CMP_LE: r.i = c <= 0; break;
        case RF_CMP_GT: r.i = c > 0; break;
        case RF_CMP_GE: r.i = c >= 0; break;
        }
        return r;
    }
    case RF_QP_E_AND:
        r.i = 1;
        for (int32_t i = 0; i < e->nargs && r.i; i++) r.i = eval(q, e->args[i], r0, r1).i != 0;
        return r;
    case RF_QP_E_NOT: r.i = !eval(q, e->args[0], r0, r1).i; return r;
    case RF_QP_E_LIKE:
        a = eval(q, e->args[0], r0, r1);
        b = eval(q, e->args[1], r0, r1);
        r.i = like(a.s, a.slen, b.s, b.slen);
        return r;
    }
    return r;
}

static int keys_match(const rf_qp_cmd *c, const rf_fe_const *a, const rf_fe_const *b)
{
    for (int32_t k = 0; k < c->nkeys; k++)
        if (qp_const_cmp(&a[c->lkeys[k]], &b[c->rkeys[k]]) != 0) return 0;
    return 1;
}

static void emit(qpi *q, const rf_qp_cmd *c, table *out, const rf_fe_const *a, const rf_fe_const *b)
{
    if (c->filter && !eval(q, c->filter, a, b).i) return;
    rf_fe_const row[256];
    for (int32_t o = 0; o < c->nouts && o < 256; o++) row[o] = eval(q, c->outs[o], a, b);
    if (!q->err) push(q, out, row);
}

static void aggregate(qpi *q, const rf_qp_cmd *c, const table *in, table *out)
{
    rf_fe_order *o = calloc((size_t)c->ngroup + 1, sizeof *o);
    table s = {0, 0, in->w, NULL};
    if (!o) {
        q->err = 1;
        return;
    }
    for (int64_t i = 0; i < in->n; i++) push(q, &s, &in->v[i * in->w]);
    for (int32_t g = 0; g < c->ngroup; g++) o[g] = (rf_fe_order){c->group[g], 0};
    sort_table(&s, o, c->ngroup);
    for (int64_t i = 0; i < s.n && !q->err;) {
        int64_t j = i;
        const rf_fe_const *first = &s.v[i * s.w];
        while (j < s.n) {
            int same = 1;
            for (int32_t g = 0; g < c->ngroup && same; g++)
                same = qp_const_cmp(&s.v[j * s.w + c->group[g]], &first[c->group[g]]) == 0;
            if (!same) break;
            j++;
        }
        rf_fe_const row[256];
        for (int32_t g = 0; g < c->ngroup; g++) row[g] = first[c->group[g]];
        for (int32_t k = 0; k < c->naggs; k++) {
            const rf_qp_agg *ag = &c->aggs[k];
            rf_fe_const r = mk(ag->type);
            rf_dec128 sum = 0;
            double fs = 0;
            rf_type at = ag->col >= 0 ? first[ag->col].type : RF_TYPE_INT;
            for (int64_t x = i; x < j; x++) {
                const rf_fe_const *v = ag->col >= 0 ? &s.v[x * s.w + ag->col] : NULL;
                if (ag->fn == RF_AGG_MIN || ag->fn == RF_AGG_MAX) {
                    if (x == i || (ag->fn == RF_AGG_MIN ? qp_const_cmp(v, &r) < 0 : qp_const_cmp(v, &r) > 0)) r = *v;
                } else if (v) {
                    sum += v->i;
                    fs += v->f;
                }
            }
            int64_t cnt = j - i;
            if (ag->fn == RF_AGG_COUNT) r.i = cnt;
            else if (ag->fn == RF_AGG_TOTAL) {
                if (at == RF_TYPE_FLOAT) r.f = fs;
                else if (sum > INT64_MAX || sum < -INT64_MAX) fail(q, "sum overflow");
                else r.i = (int64_t)sum;
            } else if (ag->fn == RF_AGG_AVG) {
                if (at == RF_TYPE_FLOAT) r.f = rf_val_float_canon(fs / (double)cnt);
                else if ((at == RF_TYPE_INT ? rf_val_int128_avg(sum, cnt, &r.i, NULL)
                                             : rf_val_dec128_avg(sum, cnt, &r.i, NULL)) != RF_OK)
                    fail(q, "avg error");
            }
            r.type = ag->type;
            row[c->ngroup + k] = r;
        }
        push(q, out, row);
        i = j;
    }
    free(s.v);
    free(o);
}

/* LFTJ by its definition: the bindings of the variables grown one input at a
** time by nested loops (a value already bound must agree), then the filter,
** then duplicates removed. */
static void lftj(qpi *q, const rf_qp_cmd *c, table *out)
{
    int32_t w = c->dst->ncols;
    table cur = {0, 0, w, NULL};
    rf_fe_const row[256];
    uint8_t bound[256] = {0};
    for (int32_t v = 0; v < w; v++) row[v] = mk(c->dst->types[v]);
    push(q, &cur, row);
    int32_t off = 0;
    for (int32_t k = 0; k < c->nin && !q->err; k++) {
        const table *x = &q->t[c->in[k]->id];
        table next = {0, 0, w, NULL};
        for (int64_t b = 0; b < cur.n; b++)
            for (int64_t i = 0; i < x->n; i++) {
                memcpy(row, &cur.v[b * w], (size_t)w * sizeof *row);
                int ok = 1;
                for (int32_t col = 0; col < x->w && ok; col++) {
                    int32_t v = c->colvar[off + col];
                    if (v < 0) continue;
                    const rf_fe_const *val = &x->v[i * x->w + col];
                    if (bound[v]) ok = qp_const_cmp(&row[v], val) == 0;
                    else row[v] = *val;
                }
                /* two columns of this input on one variable must agree too */
                for (int32_t col = 0; col < x->w && ok; col++)
                    for (int32_t c2 = 0; c2 < col && ok; c2++)
                        if (c->colvar[off + col] >= 0 && c->colvar[off + col] == c->colvar[off + c2])
                            ok = qp_const_cmp(&x->v[i * x->w + col], &x->v[i * x->w + c2]) == 0;
                if (ok) push(q, &next, row);
            }
        for (int32_t col = 0; col < x->w; col++)
            if (c->colvar[off + col] >= 0) bound[c->colvar[off + col]] = 1;
        off += x->w;
        free(cur.v);
        cur = next;
    }
    for (int64_t b = 0; b < cur.n && !q->err; b++)
        if (!c->filter || eval(q, c->filter, &cur.v[b * w], NULL).i) push(q, out, &cur.v[b * w]);
    free(cur.v);
    dedupe(out);
}

static void run_cmd(qpi *q, const rf_qp_cmd *c)
{
    table out = {0, 0, c->dst->ncols, NULL};
    const table *a = c->nin > 0 ? &q->t[c->in[0]->id] : NULL, *b = c->nin > 1 ? &q->t[c->in[1]->id] : NULL;
    switch (c->op) {
    case RF_QP_MAPFILTER:
        for (int64_t i = 0; i < a->n; i++) emit(q, c, &out, &a->v[i * a->w], NULL);
        break;
    case RF_QP_MAPJOIN:
        for (int64_t i = 0; i < a->n; i++)
            for (int64_t j = 0; j < b->n; j++)
                if (keys_match(c, &a->v[i * a->w], &b->v[j * b->w])) emit(q, c, &out, &a->v[i * a->w], &b->v[j * b->w]);
        break;
    case RF_QP_ANTIJOIN:
        for (int64_t i = 0; i < a->n; i++) {
            int hit = 0;
            for (int64_t j = 0; j < b->n && !hit; j++) hit = keys_match(c, &a->v[i * a->w], &b->v[j * b->w]);
            if (!hit) emit(q, c, &out, &a->v[i * a->w], NULL);
        }
        break;
    case RF_QP_AGGREGATE: aggregate(q, c, a, &out); break;
    case RF_QP_UNION:
        for (int32_t k = 0; k < c->nin; k++) {
            const table *x = &q->t[c->in[k]->id];
            for (int64_t i = 0; i < x->n; i++) push(q, &out, &x->v[i * x->w]);
        }
        dedupe(&out);
        break;
    case RF_QP_DIFFERENCE:
        for (int64_t i = 0; i < a->n; i++) {
            int hit = 0;
            for (int64_t j = 0; j < b->n && !hit; j++) hit = cmp_rows(&a->v[i * a->w], &b->v[j * b->w], a->w) == 0;
            if (!hit) push(q, &out, &a->v[i * a->w]);
        }
        dedupe(&out);
        break;
    case RF_QP_UNIQUE:
        for (int64_t i = 0; i < a->n; i++) push(q, &out, &a->v[i * a->w]);
        dedupe(&out);
        if (c->check_fd)
            for (int64_t i = 1; i < out.n; i++)
                if (cmp_rows(&out.v[(i - 1) * out.w], &out.v[i * out.w], c->dst->nkeys) == 0)
                    fail(q, "functional dependency violated");
        break;
    case RF_QP_COPY:
    case RF_QP_ORDERLIMIT:
        for (int64_t i = 0; i < a->n; i++) push(q, &out, &a->v[i * a->w]);
        if (c->op == RF_QP_ORDERLIMIT) {
            sort_table(&out, NULL, 0); /* a canonical start, so ties break the same way */
            sort_table(&out, c->order, c->norder);
            if (c->limit >= 0 && out.n > c->limit) out.n = c->limit;
        }
        break;
    case RF_QP_FACTS:
        for (int64_t i = 0; i < c->nrows; i++) push(q, &out, &c->rows[i * c->dst->ncols]);
        break;
    case RF_QP_CLEAR: break;
    case RF_QP_LFTJ: lftj(q, c, &out); break;
    }
    table *d = &q->t[c->dst->id];
    free(d->v);
    *d = out;
}

qpi *qpi_new(const rf_qp_program *p)
{
    qpi *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->p = p;
    rf_arena_init(&q->a);
    q->t = calloc((size_t)p->nrels + 1, sizeof *q->t);
    for (int32_t i = 0; i < p->nrels; i++) q->t[i].w = p->rels[i]->ncols;
    return q;
}

void qpi_free(qpi *q)
{
    if (!q) return;
    for (int32_t i = 0; i < q->p->nrels; i++) free(q->t[i].v);
    free(q->t);
    rf_arena_free(&q->a);
    free(q);
}

/* A small value of type t: few distinct values, so that joins match. */
static rf_fe_const random_value(qpi *q, rf_type t, uint64_t *seed)
{
    static const char *strs[] = {"", "a", "b", "x", "ab", "héllo"};
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t r = *seed >> 33;
    rf_fe_const c = mk(t);
    switch (t) {
    case RF_TYPE_INT: c.i = (int64_t)(r % 8); break;
    case RF_TYPE_DECIMAL:
    case RF_TYPE_DEC128: c.i = (int64_t)(r % 5) * 250000; break;
    case RF_TYPE_FLOAT: c.f = (double)(r % 5) * 0.5; break;
    case RF_TYPE_BOOL: c.i = (int64_t)(r % 2); break;
    case RF_TYPE_DATE: c.i = 9000 + (int64_t)(r % 4); break;
    case RF_TYPE_STRING:
        c.s = strs[r % 6];
        c.slen = (int64_t)strlen(c.s);
        break;
    }
    (void)q;
    return c;
}

/* A declared key holds of every input the loader accepts: of the rows that
** agree on the key columns (a row repeated whole included), the first stays. */
static void keep_key(table *t, const rf_qp_rel *r)
{
    int64_t m = 0;
    for (int64_t i = 0; i < t->n; i++) {
        int dup = 0;
        for (int64_t k = 0; k < m && !dup; k++) {
            dup = 1;
            for (int32_t j = 0; j < r->ninput_key && dup; j++) {
                int32_t c = r->input_key[j];
                dup = cmp_rows(&t->v[k * t->w + c], &t->v[i * t->w + c], 1) == 0;
            }
        }
        if (dup) continue;
        if (m != i) memcpy(&t->v[m * t->w], &t->v[i * t->w], (size_t)t->w * sizeof *t->v);
        m++;
    }
    t->n = m;
}

void qpi_random_inputs(qpi *q, uint64_t seed, int64_t rows)
{
    for (int32_t i = 0; i < q->p->nrels; i++) {
        const rf_qp_rel *r = q->p->rels[i];
        if (r->kind != RF_QP_REL_INPUT) continue;
        table *t = &q->t[i];
        uint64_t s = seed ^ rf_hash64(r->name, strlen(r->name), 0);
        rf_fe_const row[256];
        for (int64_t k = 0; k < rows; k++) {
            for (int32_t j = 0; j < r->ncols && j < 256; j++) row[j] = random_value(q, r->types[j], &s);
            /* odd seeds: a key in the first column, as real inputs have */
            if ((seed & 1) && r->ncols > 1 && r->types[0] == RF_TYPE_INT) row[0].i = k;
            push(q, t, row);
        }
        /* input files may repeat rows: one duplicate exercises the dedupes */
        if (t->n && !(seed & 1)) push(q, t, &t->v[0]);
        if (q->p->inputs_are_sets) dedupe(t);
        if (r->ninput_key > 0) keep_key(t, r);
    }
}

int qpi_run(qpi *q, int64_t max_steps)
{
    const rf_qp_program *p = q->p;
    int32_t b = 0;
    for (int64_t step = 0; step < max_steps && !q->err; step++) {
        const rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds && !q->err; i++) run_cmd(q, bl->cmds[i]);
        const rf_qp_term *t = &bl->term;
        if (t->kind == RF_QP_T_HALT) return q->err ? -1 : 0;
        if (t->kind == RF_QP_T_GOTO) {
            b = t->target;
            continue;
        }
        int any = 0;
        for (int32_t j = 0; j < t->nrels; j++) any |= q->t[t->rels[j]->id].n > 0;
        b = any ? t->target : t->else_target;
    }
    if (!q->err) fail(q, "too many steps");
    return -1;
}

const char *qpi_error(const qpi *q) { return q->err ? q->why : NULL; }

int qpi_output(const qpi *q, const char *name, rf_buf *out)
{
    for (int32_t i = 0; i < q->p->nrels; i++) {
        const rf_qp_rel *r = q->p->rels[i];
        if (r->kind != RF_QP_REL_OUTPUT || strcmp(r->output_name, name) != 0) continue;
        const table *t = &q->t[i];
        for (int64_t k = 0; k < t->n; k++) {
            for (int32_t j = 0; j < t->w; j++) {
                if (j) rf_buf_puts(out, ", ");
                rf_fe_const_print(&t->v[k * t->w + j], out);
            }
            rf_buf_putc(out, '\n');
        }
        return 0;
    }
    return -1;
}
