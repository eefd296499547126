/*
** runtime/rt_eval.c: rf_rt_eval_map, the CPU evaluator of query-plan
** expressions (rf_qp_expr) over one relation or over pairs of rows of two.
**
** Owns: the compiled form of a call's expressions, the worker threads of a
** call, the per-call LIKE caches and the per-worker string tables. The
** evaluation of each operation over a batch is rt_eval_ops.c, behind
** rt_eval_internal.h.
**
** Shape. The rows [0, n) are split into one contiguous range per thread;
** each thread walks its range in batches of BATCH rows. Within a batch every
** expression node is evaluated for all selected rows at once into a typed
** scratch vector (a column reference read straight from the column needs no
** copy), so the per-row work is tight loops over arrays. The filter yields a
** selection (batch indices of the rows that pass); a conjunction narrows the
** selection argument by argument, so a later conjunct is only evaluated, and
** can only fail, on rows where the earlier ones held. With a filter, a first
** pass keeps each batch's selection as bits and counts the rows kept; a
** second pass evaluates the outputs on the selected rows only and writes
** them straight to the result columns (of the size counted), each thread
** from the sum of the counts of the threads before it, so the result is the
** same for any thread count and is written once, in place.
**
** Errors. A thread records the lowest row of its range that failed (and for
** that row the first failing node in evaluation order), finishes the batch
** and stops; threads above a known failure stop early. The call reports the
** lowest failing row over all threads, so the message does not depend on
** the thread count. An error pass (rf_rt_eval_map_all, call.collect) stops
** at nothing: each expression's first failure in each row is listed, with
** where the row went in the output (rt_agg_expr.c chooses among them).
**
** New strings (concatenation, substring). Threads do not add to the
** dictionary while they run: a string already in the dictionary gets its
** code (looked up), any other gets a temporary code PEND | i private to the
** thread. Every string of one thread's evaluation goes through that thread's
** table first, so equal strings always get equal codes within a row and code
** equality stays string equality. After the threads are done the temporary
** codes that reached the output are interned in row order. Codes therefore
** do not depend on the thread count or on timing, and strings computed only
** to be compared never enter the dictionary.
**
** Semantics where the language reference leaves room (the constant folder,
** queryplan/pass_fold.c, agrees on all of them):
**   string:like      % any run, _ one character (UTF-8 code point; an
**                    invalid byte counts as one), case-sensitive, no escape
**                    character; "" matches only ""
**   string:substring characters [start, start + len) of s intersected with
**                    [0, length): a negative start clips to 0, len <= 0 or a
**                    start past the end gives ""
**   string:length    code points (an invalid byte counts as one)
**   comparisons      strings by bytes (= code point order); floats in
**                    rf_val_cmp_float's total order (-0 = 0, NaN = NaN and
**                    above +inf), so they agree with sorting and grouping
**   float + - * /    plain IEEE: x / 0 is inf or nan, never an error; and
**   float negation   every result canonical (rf_val_float_canon): a zero
**                    has no sign, so 1.0 / (0.0 * -1.0) is inf
**   int, decimal     overflow and division by zero are errors; int / int
**                    truncates toward zero, int % int is its remainder (the
**                    dividend's sign; x % 0 an error, INT64_MIN % -1 = 0);
**                    decimal * and / round half away from zero (rf_value.h,
**                    bit for bit)
** Messages name the operation and its operands, as in "integer overflow in
** 9223372036854775807 + 1", at the rule's location (ctx->what, the kernel,
** appears only in internal errors).
*/
#include "rt_eval_internal.h"

#include <stdarg.h>

/* ---- strings (the general matchers are rf_val_like and friends) ----------- */

/* Can like_fast take the pattern? Its %-separated pieces must be literal
** (no _) and valid UTF-8, so that a byte match can only start and end on a
** character boundary and the greedy leftmost placement is exact. */
static int like_fast_ok(const char *p, int64_t m)
{
    if (memchr(p, '_', (size_t)m)) return 0;
    return rf_val_check_utf8(p, m, NULL) == RF_OK;
}

int rf_rt_like_fast_ok(const char *p, int64_t m) { return like_fast_ok(p, m); }

/* ---- errors ----------------------------------------------------------------- */


/* Records an error of the row at position j unless an earlier row failed. */
void rf_rt_ev_fail(wk *w, const uint16_t *sel, int j, const char *fmt, ...)
{
    int64_t row = w->r0 + (sel ? sel[j] : j);
    if (w->c->collect) {
        /* an error pass: the expression's first failure in the row, listed */
        int bj = sel ? sel[j] : j;
        if (w->failed[bj] || w->oom) return;
        if (w->nfails == w->capfails) {
            int64_t cap = w->capfails ? 2 * w->capfails : 64;
            rf_rt_eval_failure *f = realloc(w->fails, (size_t)cap * sizeof *f);
            if (!f) {
                w->oom = 1;
                return;
            }
            w->fails = f;
            w->capfails = cap;
        }
        va_list ap;
        va_start(ap, fmt);
        char *m = rf_vsprintf(fmt, ap);
        va_end(ap);
        if (!m) {
            w->oom = 1;
            return;
        }
        w->failed[bj] = 1;
        w->fails[w->nfails++] = (rf_rt_eval_failure){row, -1, w->cur_expr, m};
        return;
    }
    if (row >= w->err_row) return;
    va_list ap;
    va_start(ap, fmt);
    char *m = rf_vsprintf(fmt, ap);
    va_end(ap);
    free(w->err_msg);
    w->err_msg = m;
    w->err_row = row;
}



/* ---- threads ------------------------------------------------------------------- */

/* Publishes a thread's failure (or out of memory) to the others. */
static void publish_err(call *c, wk *w)
{
    int64_t cur = atomic_load(&c->err_row);
    while (w->err_row < cur && !atomic_compare_exchange_weak(&c->err_row, &cur, w->err_row)) {
    }
    if (w->oom) atomic_store(&c->err_row, -1);
}

/* Pass 1 (with a filter only): the filter's selection of every batch, as
** bits, and the number of rows kept, so that pass 2 can write each thread's
** rows straight to their final place. */
static void worker_filter(void *arg, int t)
{
    call *c = arg;
    wk *w = &c->w[t];
    int64_t b = 0;
    for (int64_t r0 = w->lo; r0 < w->hi; r0 += BATCH, b++) {
        if (atomic_load_explicit(&c->err_row, memory_order_relaxed) < r0) return; /* a lower row failed */
        int k = (int)(w->hi - r0 < BATCH ? w->hi - r0 : BATCH);
        w->r0 = r0;
        if (c->collect) {
            w->cur_expr = -1;
            memset(w->failed, 0, BATCH);
        }
        int kk = rf_rt_ev_sel(w, c->filter, NULL, k, w->fsel);
        uint64_t *bits = w->selbits + b * (BATCH / 64);
        memset(bits, 0, (BATCH / 64) * sizeof *bits);
        for (int j = 0; j < kk; j++) bits[w->fsel[j] >> 6] |= UINT64_C(1) << (w->fsel[j] & 63);
        w->olen += kk;
        w->nb1 = b + 1;
        if (w->err_row != INT64_MAX || w->oom) {
            publish_err(c, w);
            return;
        }
    }
}

/* Pass 2: the outputs of the selected rows, written from ostart on. */
static void worker(void *arg, int t)
{
    call *c = arg;
    wk *w = &c->w[t];
    int64_t at = w->ostart, nb = c->filter ? w->nb1 : (w->hi - w->lo + BATCH - 1) / BATCH;
    int64_t err1 = w->err_row; /* the filter's failure, if any: in batch nb - 1 */
    for (int64_t b = 0; b < nb; b++) {
        int64_t r0 = w->lo + b * BATCH;
        if (atomic_load_explicit(&c->err_row, memory_order_relaxed) < r0) return; /* a lower row failed */
        int k = (int)(w->hi - r0 < BATCH ? w->hi - r0 : BATCH);
        w->r0 = r0;
        const uint16_t *sel = NULL;
        int kk = k;
        if (c->filter) {
            const uint64_t *bits = w->selbits + b * (BATCH / 64);
            kk = 0;
            for (int q = 0; q < BATCH / 64; q++)
                for (uint64_t m = bits[q]; m; m &= m - 1) w->fsel[kk++] = (uint16_t)(q * 64 + __builtin_ctzll(m));
            sel = kk == k ? NULL : w->fsel;
        }
        /* the outputs run even when the filter failed in this batch: a row
        ** before the failing one may fail in an output, and which row fails
        ** first must not depend on where batches start */
        int64_t f0 = w->nfails;
        if (kk > 0 && !w->oom) {
            for (int32_t o = 0; o < c->nouts; o++) {
                if (c->collect) {
                    w->cur_expr = o;
                    memset(w->failed, 0, BATCH);
                }
                size_t wd = (size_t)rf_rt_type_width(c->out_types[o]);
                char *dst = (char *)c->out->cols[o] + (size_t)at * wd;
                en *x = c->outs[o];
                if (x->kind == RF_QP_E_COL && (sel || x->rows)) {
                    rf_rt_ev_gather_col(w, x, sel, kk, dst); /* straight into the output */
                } else {
                    const void *v = rf_rt_ev(w, x, sel, kk);
                    memcpy(dst, v, (size_t)kk * wd);
                }
            }
            /* an error pass: where the failed rows went (the selection is in row order) */
            for (int64_t f = f0; f < w->nfails; f++) {
                int bj = (int)(w->fails[f].row - r0), lo = 0, hi = kk;
                if (!sel) lo = bj;
                while (sel && lo < hi) {
                    int mid = (lo + hi) / 2;
                    if (sel[mid] < bj) lo = mid + 1;
                    else hi = mid;
                }
                w->fails[f].pos = at + lo;
            }
            at += kk;
        }
        if (!c->filter) w->olen = at - w->ostart;
        if (w->err_row != err1 || w->oom) {
            publish_err(c, w);
            return;
        }
    }
    if (w->err_row != INT64_MAX) publish_err(c, w);
}

/* ---- compiling ------------------------------------------------------------------ */

static int count_nodes(const rf_qp_expr *e)
{
    if (!e) return 0;
    int n = 1;
    for (int32_t i = 0; i < e->nargs; i++) n += count_nodes(e->args[i]);
    return n;
}

static en *compile(call *c, const rf_qp_expr *e, int slot);

static int bad(call *c, const rf_qp_expr *e, const char *why)
{
    rf_buf b;
    rf_buf_init(&b);
    rf_qp_print_expr(e, "in0", "in1", &b);
    rf_internal_error(c->d, c->ctx->loc, "%s%scannot evaluate `%s`: %s", c->ctx->what ? c->ctx->what : "",
             c->ctx->what ? ": " : "", rf_buf_cstr(&b), why);
    rf_buf_free(&b);
    if (!c->st) c->st = RF_EINTERNAL;
    return -1;
}

static int is_num(rf_type t)
{
    return t == RF_TYPE_INT || t == RF_TYPE_DECIMAL || t == RF_TYPE_DEC128 || t == RF_TYPE_FLOAT;
}

static int check_like(call *c, en *x)
{
    const rf_qp_expr *e = x->e;
    if (x->nargs != 2 || e->args[0]->type != RF_TYPE_STRING || e->args[1]->type != RF_TYPE_STRING)
        return bad(c, e, "like of non-strings");
    if (e->type != RF_TYPE_BOOL) return bad(c, e, "like is boolean");
    if (e->args[1]->kind == RF_QP_E_CONST) {
        x->pat_const = 1;
        x->pat = e->args[1]->c.s ? e->args[1]->c.s : "";
        x->patlen = e->args[1]->c.s ? e->args[1]->c.slen : 0;
        x->pat_fast = like_fast_ok(x->pat, x->patlen);
    }
    return 0;
}

static int check_node(call *c, en *x)
{
    const rf_qp_expr *e = x->e;
    for (int32_t i = 0; i < x->nargs; i++)
        if (!e->args[i]) return bad(c, e, "missing argument");
    switch (x->kind) {
    case RF_QP_E_COL: {
        if (e->side < 0 || e->side > 1 || !c->sides[e->side].rel) return bad(c, e, "no such input");
        const rf_rt_rel *r = c->sides[e->side].rel;
        if (e->col < 0 || e->col >= r->ncols) return bad(c, e, "no such column");
        if (r->types[e->col] != e->type) return bad(c, e, "column type differs");
        x->col = r->cols ? r->cols[e->col] : NULL;
        x->rows = c->sides[e->side].rows;
        x->width = rf_rt_type_width(e->type);
        return 0;
    }
    case RF_QP_E_CONST: {
        if (e->c.type != e->type) return bad(c, e, "constant type differs");
        if (e->type == RF_TYPE_STRING) {
            rf_status st = rf_rt_dict_intern(c->dict, e->c.s ? e->c.s : "", e->c.s ? e->c.slen : 0, &x->code);
            if (st) return c->st = st, -1;
        }
        if (c->ncvec == MAX_CVEC) return 0; /* const_fill */
        c->ncvec++;
        x->cvec = malloc((size_t)BATCH * SLOT_WIDTH);
        if (!x->cvec) return c->st = RF_ENOMEM, -1;
        switch (e->type) {
        case RF_TYPE_INT:
        case RF_TYPE_DECIMAL:
            for (int j = 0; j < BATCH; j++) ((int64_t *)x->cvec)[j] = e->c.i;
            break;
        case RF_TYPE_DEC128: /* a wide constant holds a decimal's value */
            for (int j = 0; j < BATCH; j++) ((rf_dec128 *)x->cvec)[j] = e->c.i;
            break;
        case RF_TYPE_FLOAT:
            for (int j = 0; j < BATCH; j++) ((double *)x->cvec)[j] = e->c.f;
            break;
        case RF_TYPE_DATE:
            for (int j = 0; j < BATCH; j++) ((int32_t *)x->cvec)[j] = (int32_t)e->c.i;
            break;
        case RF_TYPE_BOOL: memset(x->cvec, e->c.i != 0, BATCH); break;
        case RF_TYPE_STRING:
            for (int j = 0; j < BATCH; j++) ((uint32_t *)x->cvec)[j] = x->code;
            break;
        }
        return 0;
    }
    case RF_QP_E_BINOP:
        if (x->nargs < 2) return bad(c, e, "an operator chain of fewer than two operands");
        for (int32_t i = 0; i < x->nargs; i++)
            if (e->args[i]->type != e->type) return bad(c, e, "operand types differ from the result");
        if (!strchr("+-*/%", e->op) || !e->op) return bad(c, e, "unknown operator");
        if (e->op == '%' && e->type != RF_TYPE_INT) return bad(c, e, "operator not defined on the type");
        if (!is_num(e->type) && !(e->type == RF_TYPE_STRING && e->op == '+'))
            return bad(c, e, "operator not defined on the type");
        return 0;
    case RF_QP_E_NEG:
        if (x->nargs != 1 || e->args[0]->type != e->type || !is_num(e->type))
            return bad(c, e, "negation of a non-number");
        return 0;
    case RF_QP_E_CAST: {
        rf_type f = x->nargs == 1 ? e->args[0]->type : RF_TYPE_BOOL, t = e->type;
        if (x->nargs != 1 ||
            !(f == t || (f == RF_TYPE_INT && (t == RF_TYPE_DECIMAL || t == RF_TYPE_FLOAT)) ||
              (f == RF_TYPE_DECIMAL && t == RF_TYPE_FLOAT) || (f == RF_TYPE_FLOAT && t == RF_TYPE_DECIMAL) ||
              ((f == RF_TYPE_INT || f == RF_TYPE_DECIMAL) && t == RF_TYPE_DEC128) ||
              (f == RF_TYPE_DEC128 && (t == RF_TYPE_DECIMAL || t == RF_TYPE_FLOAT))))
            return bad(c, e, "unsupported conversion");
        if (f == t && !is_num(t)) return bad(c, e, "unsupported conversion");
        return 0;
    }
    case RF_QP_E_CALL: {
        const rf_builtin_info *bi = e->fn > RF_BI_NONE && e->fn < RF_BI_COUNT_ ? rf_fe_builtin_info(e->fn) : NULL;
        if (!bi) return bad(c, e, "unknown built-in");
        if (bi->nargs != x->nargs) return bad(c, e, "wrong number of arguments");
        for (int32_t i = 0; i < x->nargs; i++)
            if (e->args[i]->type != bi->args[i]) return bad(c, e, "argument type differs");
        if (e->fn == RF_BI_LIKE) {
            x->kind = RF_QP_E_LIKE;
            return check_like(c, x);
        }
        if (bi->result != e->type) return bad(c, e, "result type differs");
        if (e->fn == RF_BI_SUBSTRING && e->args[1]->kind == RF_QP_E_CONST && e->args[2]->kind == RF_QP_E_CONST)
            x->sub_slot = c->nsub++;
        return 0;
    }
    case RF_QP_E_LIKE: return check_like(c, x);
    case RF_QP_E_CMP:
        if (x->nargs != 2 || e->args[0]->type != e->args[1]->type) return bad(c, e, "comparison of different types");
        if (e->type != RF_TYPE_BOOL) return bad(c, e, "comparison is boolean");
        if ((unsigned)e->cmp > RF_CMP_GE) return bad(c, e, "unknown comparison");
        return 0;
    case RF_QP_E_AND:
    case RF_QP_E_NOT:
        if (e->type != RF_TYPE_BOOL || (x->kind == RF_QP_E_NOT && x->nargs != 1))
            return bad(c, e, "logic on non-booleans");
        for (int32_t i = 0; i < x->nargs; i++)
            if (e->args[i]->type != RF_TYPE_BOOL) return bad(c, e, "logic on non-booleans");
        if (x->kind == RF_QP_E_AND) x->and_slot = c->nand++;
        return 0;
    }
    return bad(c, e, "unknown expression kind");
}

/* e's nodes, e's value in scratch vector `slot`. The vectors are a stack:
** what a node reads while it runs sits above it. A chain's first operand
** is at slot + 1 and each later one at slot + 2 (read once, into the
** partial result, before the next is evaluated); a conjunction's
** arguments are read one at a time too (slot + 1); any other node's
** arguments are live together, at slot + 1 + i. */
static en *compile(call *c, const rf_qp_expr *e, int slot)
{
    en *x = &c->nodes[c->nnodes];
    x->id = c->nnodes++;
    x->slot = slot;
    if (slot + 1 > c->nslots) c->nslots = slot + 1;
    if (rf_rt_type_width(e->type) > c->width) c->width = rf_rt_type_width(e->type);
    x->e = e;
    x->kind = e->kind;
    x->type = e->type;
    x->nargs = e->nargs;
    x->sub_slot = -1;
    if (e->nargs > 0) {
        x->args = calloc((size_t)e->nargs, sizeof *x->args);
        if (!x->args) {
            c->st = RF_ENOMEM;
            return NULL;
        }
        for (int32_t i = 0; i < e->nargs; i++) {
            int at = e->kind == RF_QP_E_BINOP ? slot + 1 + (i > 0) : e->kind == RF_QP_E_AND ? slot + 1 : slot + 1 + i;
            if (e->args[i] && !(x->args[i] = compile(c, e->args[i], at))) return NULL;
        }
    }
    if (check_node(c, x)) return NULL;
    return x;
}

/* ---- the call ----------------------------------------------------------------- */

static void free_call(call *c)
{
    for (int i = 0; i < c->nnodes; i++) {
        free(c->nodes[i].args);
        free(c->nodes[i].cvec);
        free((void *)c->nodes[i].cache);
    }
    free(c->nodes);
    free(c->outs);
    if (c->w) {
        for (int t = 0; t < c->T; t++) {
            wk *w = &c->w[t];
            free(w->scratch);
            free(w->fsel);
            free(w->selbits);
            free(w->andbuf);
            free(w->subcache);
            free(w->err_msg);
            free(w->ents);
            free(w->lslots);
            free(w->pend);
            for (lchunk *ch = w->chunks, *nx; ch; ch = nx) {
                nx = ch->next;
                free(ch);
            }
            free(w->tbuf);
            rf_rt_eval_failures_free(w->fails, w->nfails);
            free(w->failed);
        }
        free(c->w);
    }
}

/* Interns the temporary codes that reached the output, in row order. */
static rf_status intern_pending(call *c)
{
    int any = 0;
    for (int t = 0; t < c->T; t++) any |= c->w[t].npend > 0;
    if (!any) return RF_OK;
    int32_t *scols = malloc((size_t)c->nouts * sizeof *scols);
    if (!scols) return RF_ENOMEM;
    int32_t ns = 0;
    for (int32_t o = 0; o < c->nouts; o++)
        if (c->out_types[o] == RF_TYPE_STRING && c->outs[o]->kind != RF_QP_E_COL && c->outs[o]->kind != RF_QP_E_CONST)
            scols[ns++] = o;
    rf_status st = RF_OK;
    for (int t = 0; t < c->T && !st; t++) {
        wk *w = &c->w[t];
        int64_t start = w->ostart;
        if (!w->npend || !ns) continue;
        uint32_t *map = malloc((size_t)w->npend * sizeof *map);
        if (!map) {
            st = RF_ENOMEM;
            break;
        }
        memset(map, 0xff, (size_t)w->npend * sizeof *map);
        for (int64_t r = start; r < start + w->olen && !st; r++) {
            for (int32_t q = 0; q < ns; q++) {
                uint32_t *col = c->out->cols[scols[q]];
                uint32_t code = col[r];
                if (!(code & PEND)) continue;
                uint32_t *m = &map[code & ~PEND];
                if (*m == UINT32_MAX) {
                    const lent *e = &w->ents[w->pend[code & ~PEND]];
                    if ((st = rf_rt_dict_intern(c->dict, e->p, e->len, m))) break;
                }
                col[r] = *m;
            }
        }
        free(map);
    }
    free(scols);
    return st;
}

void rf_rt_eval_failures_free(rf_rt_eval_failure *f, int64_t n)
{
    for (int64_t i = 0; i < n; i++) free(f[i].msg);
    free(f);
}

static rf_status eval_map(const rf_rt_eval_ctx *ctx, const rf_qp_expr *filter, rf_qp_expr *const *outs, int32_t nouts,
                          const rf_type *out_types, const rf_rt_side sides[2], int64_t n, rf_rt_rel *out,
                          rf_rt_eval_failure **fails, int64_t *nfails, rf_diags *d)
{
    call c;
    memset(&c, 0, sizeof c);
    c.collect = fails != NULL;
    c.ctx = ctx;
    c.dict = ctx->dict;
    c.sides = sides;
    c.nouts = nouts;
    c.out_types = out_types;
    c.n = n < 0 ? 0 : n;
    c.out = out;
    c.d = d;
    atomic_init(&c.err_row, INT64_MAX);
    memset(out, 0, sizeof *out);
    out->types = out_types;

    int total = count_nodes(filter);
    for (int32_t o = 0; o < nouts; o++) total += count_nodes(outs[o]);
    c.nodes = calloc((size_t)total + 1, sizeof *c.nodes);
    c.outs = calloc((size_t)nouts + 1, sizeof *c.outs);
    if (!c.nodes || !c.outs) {
        c.st = RF_ENOMEM;
        goto done;
    }
    /* each top-level expression on its own vectors (outputs may be live together) */
    if (filter && !(c.filter = compile(&c, filter, c.nslots))) goto done;
    if (c.filter && c.filter->type != RF_TYPE_BOOL) {
        bad(&c, filter, "the filter is not boolean");
        goto done;
    }
    for (int32_t o = 0; o < nouts; o++) {
        if (!outs[o]) {
            rf_internal_error(d, ctx->loc, "missing output expression");
            c.st = RF_EINTERNAL;
            goto done;
        }
        if (!(c.outs[o] = compile(&c, outs[o], c.nslots))) goto done;
        if (outs[o]->type != out_types[o]) {
            bad(&c, outs[o], "the output column has another type");
            goto done;
        }
    }
    /* the LIKE caches cover every code that exists now: the inputs' and the constants' */
    int64_t ncodes = rf_rt_dict_count(c.dict);
    for (int i = 0; i < c.nnodes; i++) {
        en *x = &c.nodes[i];
        /* (a few rows are cheaper to match than a cache the size of the dictionary) */
        if (x->kind == RF_QP_E_LIKE && x->pat_const && ncodes > 0 && c.n >= 256) {
            x->cache = calloc((size_t)ncodes, 1);
            if (!x->cache) {
                c.st = RF_ENOMEM;
                goto done;
            }
            x->ncache = ncodes;
        }
    }

    int T = ctx->threads < 1 ? 1 : ctx->threads > 256 ? 256 : ctx->threads;
    if (T > (c.n + MIN_ROWS_PER_THREAD - 1) / MIN_ROWS_PER_THREAD)
        T = (int)((c.n + MIN_ROWS_PER_THREAD - 1) / MIN_ROWS_PER_THREAD);
    if (T < 1) T = 1;
    c.w = calloc((size_t)T, sizeof *c.w);
    if (!c.w) {
        c.st = RF_ENOMEM;
        goto done;
    }
    c.T = T;
    for (int t = 0; t < T; t++) {
        wk *w = &c.w[t];
        w->c = &c;
        w->lo = c.n * t / T;
        w->hi = c.n * (t + 1) / T;
        w->err_row = INT64_MAX;
        w->slot_bytes = (size_t)BATCH * (size_t)(c.width > 8 ? c.width : 8);
        w->scratch = malloc((size_t)c.nslots * w->slot_bytes + SLOT_WIDTH);
        w->fsel = malloc(BATCH * sizeof *w->fsel);
        w->andbuf = malloc(((size_t)c.nand * 3 + 1) * BATCH * sizeof *w->andbuf);
        w->subcache = malloc(((size_t)c.nsub * SUBCACHE * 2 + 1) * sizeof *w->subcache);
        if (c.collect && !(w->failed = calloc(BATCH, 1))) {
            c.st = RF_ENOMEM;
            goto done;
        }
        if (c.filter) w->selbits = malloc((size_t)((w->hi - w->lo) / BATCH + 1) * (BATCH / 64) * sizeof *w->selbits);
        if (!w->scratch || !w->fsel || !w->andbuf || !w->subcache || (c.filter && !w->selbits)) {
            c.st = RF_ENOMEM;
            goto done;
        }
        /* an impossible input code (the top bit is never a real code's) */
        memset(w->subcache, 0xff, ((size_t)c.nsub * SUBCACHE * 2 + 1) * sizeof *w->subcache);
    }

    /* each thread's rows start where the previous threads' end: counted
    ** by the filter pass, or all of them without a filter */
    if (c.filter) rf_rt_parallel(T, worker_filter, &c);
    int64_t at = 0;
    for (int t = 0; t < T; t++) {
        c.w[t].ostart = c.filter ? at : c.w[t].lo;
        at += c.w[t].olen;
    }
    /* the columns get the rows kept, counted (no shrinking copy after a
    ** selective filter), or all n */
    if ((c.st = rf_rt_rel_alloc(out, nouts, out_types, c.filter ? at : c.n))) goto done;
    rf_rt_parallel(T, worker, &c);
    at = 0;
    for (int t = 0; t < T; t++) at += c.w[t].olen;

    /* the lowest failing row wins */
    wk *first = NULL;
    for (int t = 0; t < T; t++) {
        if (c.w[t].oom) {
            c.st = RF_ENOMEM;
            goto done;
        }
        if (c.w[t].err_row != INT64_MAX && (!first || c.w[t].err_row < first->err_row)) first = &c.w[t];
    }
    if (first) {
        /* at the rule's location; the kernel's kind (ctx->what) is the
        ** plan's word, not the user's, so it stays out of the message */
        rf_error(d, ctx->loc, "%s", first->err_msg ? first->err_msg : "run-time error");
        c.st = RF_EUSER;
        goto done;
    }
    if ((c.st = rf_rt_rel_truncate(out, at))) goto done;
    c.st = intern_pending(&c);
    if (!c.st && c.collect) {
        /* every thread's failures, handed over */
        int64_t nf = 0;
        for (int t = 0; t < T; t++) nf += c.w[t].nfails;
        rf_rt_eval_failure *all = malloc((size_t)(nf + 1) * sizeof *all);
        if (!all) {
            c.st = RF_ENOMEM;
            goto done;
        }
        nf = 0;
        for (int t = 0; t < T; t++) {
            if (c.w[t].nfails) memcpy(all + nf, c.w[t].fails, (size_t)c.w[t].nfails * sizeof *all);
            nf += c.w[t].nfails;
            c.w[t].nfails = 0;
        }
        *fails = all;
        *nfails = nf;
    }

done:
    if (c.st) {
        rf_rt_rel_free(out);
        out->ncols = 0;
        if (c.st == RF_ENOMEM)
            rf_error(d, ctx->loc, "out of memory while evaluating %s", ctx->what ? ctx->what : "expressions");
    }
    rf_status st = c.st;
    free_call(&c);
    return st;
}

rf_status rf_rt_eval_map(const rf_rt_eval_ctx *ctx, const rf_qp_expr *filter, rf_qp_expr *const *outs, int32_t nouts,
                         const rf_type *out_types, const rf_rt_side sides[2], int64_t n, rf_rt_rel *out, rf_diags *d)
{
    return eval_map(ctx, filter, outs, nouts, out_types, sides, n, out, NULL, NULL, d);
}

rf_status rf_rt_eval_map_all(const rf_rt_eval_ctx *ctx, const rf_qp_expr *filter, rf_qp_expr *const *outs,
                             int32_t nouts, const rf_type *out_types, const rf_rt_side sides[2], int64_t n,
                             rf_rt_rel *out, rf_rt_eval_failure **fails, int64_t *nfails, rf_diags *d)
{
    *fails = NULL;
    *nfails = 0;
    return eval_map(ctx, filter, outs, nouts, out_types, sides, n, out, fails, nfails, d);
}
