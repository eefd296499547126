/*
** runtime/gpu/rt_gpu_host.c: what the GPU executor does on the host.
**
** Owns: the per-code string tables that the host computes (islands with
** concatenation or without a column: the CPU evaluator over one row per
** code), the message of a kernel's lowest failing row (the CPU evaluator on
** that row, so it is worded exactly as a CPU run words it), the whole map
** kernel on the host where the GPU cannot run it (its inputs and output in
** host memory where they do not fit on the GPU), float aggregates (their
** value depends on the order of additions, which only the CPU code
** reproduces).
*/
#include "rt_gpu_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- string codes: ranges, ranks, per-code tables ----------------------------- */

/* The codes that column col holds at rows (NULL: 0..n-1): their range
** [*lo, *hi] and a byte per code of the range, 1 where present (owned). */
static rf_status code_set(gx *x, gptr col, gptr rows, int64_t n, int64_t *lo, int64_t *hi, uint8_t **bits)
{
    *bits = NULL;
    *lo = 0;
    *hi = -1;
    if (n <= 0) return RF_OK;
    gbuf bm = {0, 0};
    rf_status st = rf_gpu_code_set(&x->str, col, rows, n, lo, hi, &bm);
    if (st) return st;
    int64_t span = *hi - *lo + 1;
    if (!(*bits = rf_malloc((size_t)span))) st = RF_ENOMEM;
    if (!st) st = x->g.ops->d2h(&x->g, *bits, bm.p, (uint64_t)span);
    gfree(x, &bm);
    if (st) {
        free(*bits);
        *bits = NULL;
    }
    return st;
}

/* A copy of e with the column (side, col) read as side 0, column 0. */
static rf_qp_expr *remap_expr(const rf_qp_expr *e, int32_t side, int32_t col)
{
    rf_qp_expr *c = rf_calloc(1, sizeof *c);
    if (!c) return NULL;
    *c = *e;
    c->args = NULL;
    if (e->kind == RF_QP_E_COL && e->side == side && e->col == col) {
        c->side = 0;
        c->col = 0;
    }
    if (e->nargs) {
        c->args = rf_calloc((size_t)e->nargs, sizeof *c->args);
        if (!c->args) {
            free(c);
            return NULL;
        }
        for (int32_t i = 0; i < e->nargs; i++)
            if (!(c->args[i] = remap_expr(e->args[i], side, col))) {
                c->nargs = i;
                return c; /* the caller sees the NULL argument and frees */
            }
    }
    return c;
}

static void free_expr(rf_qp_expr *e)
{
    if (!e) return;
    for (int32_t i = 0; i < e->nargs; i++) free_expr(e->args[i]);
    free(e->args);
    free(e);
}

static int expr_complete(const rf_qp_expr *e)
{
    if (!e) return 0;
    for (int32_t i = 0; i < e->nargs; i++)
        if (!expr_complete(e->args[i])) return 0;
    return 1;
}

/* The first argument of a date:parse island: its string. */
static rf_status island_dates(gx *x, const rf_qp_expr *e, const uint32_t *codes, int64_t m, int64_t *out)
{
    const rf_qp_expr *s = e->args[0];
    for (int64_t i = 0; i < m; i++) {
        const char *p;
        int64_t len;
        uint32_t code = codes ? codes[i] : 0;
        if (s->kind == RF_QP_E_CONST) {
            p = s->c.s ? s->c.s : "";
            len = s->c.s ? s->c.slen : 0;
        } else {
            p = rf_rt_dict_str(x->dict, code, &len);
            if (!p) p = "", len = 0;
        }
        int32_t dv;
        out[i] = rf_val_parse_date(p, len, &dv, NULL) ? INT64_MIN : dv;
    }
    return RF_OK;
}

/* Table j of a map kernel: the island's value for every code its column
** holds at the rows the kernel reads (or its one value without a column). */
rf_status rf_gx_build_island(gx *x, const rf_hir_kernel *k, const rf_gpu_island *is, const gval *side, gptr rows,
                              int64_t n, gbuf *table, int64_t *base)
{
    if (is->dev)
        return rf_gpu_str_island(&x->str, k->id, (int32_t)(is - x->plans[k->id].islands), is, colp(side, is->col), rows,
                                 n, table, base);
    const rf_qp_expr *e = is->e;
    int64_t lo = 0, hi = 0, m = 0;
    uint8_t *bits = NULL;
    uint32_t *codes = NULL;
    *base = 0;
    rf_status st = RF_OK;
    if (is->side >= 0) {
        st = code_set(x, colp(side, is->col), rows, n, &lo, &hi, &bits);
        if (st || n <= 0) return st;
        int64_t span = hi - lo + 1;
        for (int64_t i = 0; i < span; i++) m += bits[i] != 0;
        if (!(codes = rf_malloc((size_t)(m + 1) * 4))) st = RF_ENOMEM;
        m = 0;
        for (int64_t i = 0; i < span && !st; i++)
            if (bits[i]) codes[m++] = (uint32_t)(lo + i);
        *base = lo;
    } else {
        m = 1;
        hi = lo = 0;
    }
    int64_t span = hi - lo + 1;
    int w = e->type == RF_TYPE_BOOL ? 1 : e->type == RF_TYPE_STRING ? 4 : 8;
    char *tab = st ? NULL : rf_calloc((size_t)span, (size_t)w);
    if (!st && !tab) st = RF_ENOMEM;
    if (!st && e->kind == RF_QP_E_CALL && e->fn == RF_BI_DATE_PARSE) {
        int64_t *vals = rf_malloc((size_t)m * 8);
        if (!vals) st = RF_ENOMEM;
        if (!st) st = island_dates(x, e, codes, m, vals);
        for (int64_t i = 0; i < m && !st; i++) ((int64_t *)tab)[codes ? codes[i] - lo : 0] = vals[i];
        free(vals);
    } else if (!st) {
        /* the CPU evaluator over one row per code: its semantics, exactly */
        rf_qp_expr *ex = remap_expr(e, is->side, is->col);
        if (!ex || !expr_complete(ex)) st = RF_ENOMEM;
        rf_rt_rel in, out;
        memset(&in, 0, sizeof in);
        memset(&out, 0, sizeof out);
        rf_type st_type = RF_TYPE_STRING;
        void *colv[1] = {codes};
        in.nrows = m;
        in.ncols = is->side >= 0 ? 1 : 0;
        in.types = &st_type;
        in.cols = colv;
        rf_rt_side sides[2] = {{&in, NULL}, {NULL, NULL}};
        rf_rt_eval_ctx ctx = {x->dict, x->threads, kloc(x, k), rf_hir_kind_name(k->kind)};
        rf_type ot = e->type;
        if (!st) st = rf_rt_eval_map(&ctx, NULL, &ex, 1, &ot, sides, m, &out, x->d);
        if (!st && out.nrows != m) st = RF_EINTERNAL;
        for (int64_t i = 0; i < m && !st; i++) {
            int64_t at = codes ? codes[i] - lo : 0;
            memcpy(tab + at * w, (const char *)out.cols[0] + i * w, (size_t)w);
        }
        rf_rt_rel_free(&out);
        free_expr(ex);
    }
    if (!st) st = galloc(x, (uint64_t)span * (uint64_t)w, table);
    if (!st) st = x->g.ops->h2d(&x->g, table->p, tab, (uint64_t)span * (uint64_t)w);
    free(tab);
    free(bits);
    free(codes);
    return st;
}

/* ---- a map's error message, a map on the host ------------------------------------- */

/* One row of a side, copied to the host (all columns). */
static rf_status host_row(gx *x, int32_t var, gptr rows, int64_t r, rf_rt_rel *out)
{
    const rf_hir_var *hv = x->p->vars[var];
    const gval *v = &x->vals[var];
    int64_t row = r;
    rf_status st = rows ? get_i64(x, rows + (uint64_t)r * 8, &row) : RF_OK;
    if (!st) st = rf_rt_rel_alloc(out, hv->ncols, hv->types, 1);
    for (int32_t c = 0; c < hv->ncols && !st; c++) {
        int w = wid(hv->types[c]);
        if (!colp(v, c)) memset(out->cols[c], 0, (size_t)rf_rt_type_width(hv->types[c])); /* an input column no kernel reads */
        else st = x->g.ops->d2h(&x->g, out->cols[c], colp(v, c) + (uint64_t)row * (uint64_t)w, (uint64_t)w);
    }
    return st;
}

/* Where map k (n rows) fails in an aggregated expression, the group the
** error names (rf_rt_agg_expr_fail) over all its rows, on the host: d's
** diagnostics after keep (the row's message) are replaced then. */
static rf_status map_error_group(gx *x, const rf_hir_kernel *k, const int32_t vars[2], const gptr rows[2], int64_t n,
                                 int64_t keep, int64_t keep_errors)
{
    rf_rt_rel r[2];
    memset(r, 0, sizeof r);
    int64_t *ri[2] = {NULL, NULL};
    rf_status st = RF_OK;
    for (int s = 0; s < 2 && !st; s++) {
        if (vars[s] < 0) continue;
        st = rf_gx_host_rel(x, vars[s], &r[s]);
        if (!st && rows[s]) st = rf_gx_host_i64(x, rows[s], n, &ri[s]);
    }
    rf_rt_side sides[2] = {{vars[0] >= 0 ? &r[0] : NULL, ri[0]}, {vars[1] >= 0 ? &r[1] : NULL, ri[1]}};
    rf_rt_eval_ctx ctx = {x->dict, x->threads, kloc(x, k), rf_hir_kind_name(k->kind)};
    if (!st) st = rf_rt_agg_expr_fail(&ctx, x->p, k, sides, n, x->d, keep, keep_errors, x->fd_clash);
    for (int s = 0; s < 2; s++) {
        rf_rt_rel_free(&r[s]);
        free(ri[s]);
    }
    return st;
}

/* The message for the lowest failing row: the CPU evaluator on that row;
** where that is an aggregated expression's, its group's (map_error_group). */
rf_status rf_gx_map_error(gx *x, const rf_hir_kernel *k, const int32_t vars[2], const gptr rows[2], int64_t n,
                          int64_t row)
{
    int64_t keep = x->d->count, keep_errors = x->d->nerrors;
    rf_rt_rel r[2], tmp;
    memset(r, 0, sizeof r);
    memset(&tmp, 0, sizeof tmp);
    rf_rt_side sides[2] = {{NULL, NULL}, {NULL, NULL}};
    rf_status st = RF_OK;
    for (int s = 0; s < 2 && !st; s++)
        if (vars[s] >= 0) {
            st = host_row(x, vars[s], rows[s], row, &r[s]);
            sides[s].rel = &r[s];
        }
    rf_rt_eval_ctx ctx = {x->dict, 1, kloc(x, k), rf_hir_kind_name(k->kind)};
    if (!st) {
        st = rf_rt_eval_map(&ctx, k->filter, k->outs, k->nouts, x->p->vars[k->out]->types, sides, 1, &tmp, x->d);
        if (!st) {
            rf_internal_error(x->d, kloc(x, k), "k%d: the GPU reported a run-time error in row %" PRId64
                                       " that the CPU evaluator does not see",
                     k->id, row);
            st = RF_EINTERNAL;
        }
    }
    rf_rt_rel_free(&tmp);
    rf_rt_rel_free(&r[0]);
    rf_rt_rel_free(&r[1]);
    if (st == RF_EUSER) st = map_error_group(x, k, vars, rows, n, keep, keep_errors);
    return st;
}

/* The kernel on the host: inputs down, rt_eval.c, the result up. */
rf_status rf_gx_map_on_host(gx *x, const rf_hir_kernel *k, const int32_t vars[2], const gval *idx, int64_t n)
{
    rf_rt_rel r[2], out;
    memset(r, 0, sizeof r);
    memset(&out, 0, sizeof out);
    int64_t *ra = NULL, *rb = NULL;
    rf_status st = RF_OK;
    for (int s = 0; s < 2 && !st; s++)
        if (vars[s] >= 0) st = rf_gx_host_rel(x, vars[s], &r[s]);
    if (!st && idx) st = rf_gx_host_i64(x, idx->a.p, idx->nrows, &ra);
    if (!st && idx && vars[1] >= 0) st = rf_gx_host_i64(x, idx->b.p, idx->nrows, &rb);
    rf_rt_side sides[2] = {{vars[0] >= 0 ? &r[0] : NULL, ra}, {vars[1] >= 0 ? &r[1] : NULL, rb}};
    rf_rt_eval_ctx ctx = {x->dict, x->threads, kloc(x, k), rf_hir_kind_name(k->kind)};
    const rf_hir_var *ov = x->p->vars[k->out];
    int64_t keep = x->d->count, keep_errors = x->d->nerrors;
    if (!st) st = rf_rt_eval_map(&ctx, k->filter, k->outs, k->nouts, ov->types, sides, n, &out, x->d);
    if (st == RF_EUSER) st = rf_rt_agg_expr_fail(&ctx, x->p, k, sides, n, x->d, keep, keep_errors, x->fd_clash);
    gval v;
    memset(&v, 0, sizeof v);
    if (!st) st = rf_gx_upload_rel(x, &out, ov->types, ov->ncols, NULL, NULL, &v);
    if (!st) rf_gx_var_set(x, k->out, &v);
    rf_rt_rel_free(&out);
    rf_rt_rel_free(&r[0]);
    rf_rt_rel_free(&r[1]);
    free(ra);
    free(rb);
    x->on_host = 1;
    return st;
}

/* Map k's inputs as host relations (r), from host memory (moved there), and
** for a join map or gather map its index's entries (e): the sides of
** its n evaluations. */
static rf_status held_sides(gx *x, const rf_hir_kernel *k, rf_rt_rel r[2], int64_t *e[2], rf_rt_side sides[2],
                            int64_t *n)
{
    int32_t vars[2] = {k->in[0], k->kind == RF_HIR_JOIN_MAP ? k->in[1] : -1};
    memset(r, 0, 2 * sizeof *r);
    e[0] = e[1] = NULL;
    *n = 0;
    rf_status st = RF_OK;
    for (int s = 0; s < 2 && !st; s++)
        if (vars[s] >= 0) st = rf_gx_held_host_rel(x, vars[s], &r[s]);
    if (!st && k->kind == RF_HIR_MAP) *n = r[0].nrows;
    if (!st && k->kind != RF_HIR_MAP) {
        /* the index's entries (slot a: left rows, b: right rows) from host memory */
        st = rf_gx_spill_var(x, k->idx);
        const gval *ix = &x->vals[k->idx];
        int32_t inc = x->p->vars[k->idx]->ncols;
        *n = ix->nrows;
        for (int s = 0; s < 2 && !st; s++) {
            if (vars[s] < 0) continue;
            const int64_t *h = rf_gx_held_col(ix, inc + s);
            if (!(e[s] = rf_malloc((size_t)(*n + 1) * 8))) st = RF_ENOMEM;
            else if (*n && !h) st = RF_EINTERNAL;
            else if (*n) memcpy(e[s], h, (size_t)*n * 8);
        }
    }
    for (int s = 0; s < 2; s++) {
        sides[s].rel = vars[s] >= 0 ? &r[s] : NULL;
        sides[s].rows = e[s];
    }
    return st;
}

rf_status rf_gx_map_held(gx *x, const rf_hir_kernel *k)
{
    rf_rt_rel r[2], out;
    memset(&out, 0, sizeof out);
    int64_t *e[2], n = 0;
    rf_rt_side sides[2];
    rf_gx_var_clear(x, k->out);
    rf_status st = held_sides(x, k, r, e, sides, &n);
    rf_rt_eval_ctx ctx = {x->dict, x->threads, kloc(x, k), rf_hir_kind_name(k->kind)};
    const rf_hir_var *ov = x->p->vars[k->out];
    int64_t keep = x->d->count, keep_errors = x->d->nerrors;
    if (!st) st = rf_rt_eval_map(&ctx, k->filter, k->outs, k->nouts, ov->types, sides, n, &out, x->d);
    if (st == RF_EUSER) st = rf_rt_agg_expr_fail(&ctx, x->p, k, sides, n, x->d, keep, keep_errors, x->fd_clash);
    gval v;
    memset(&v, 0, sizeof v);
    if (!st) st = rf_gx_held_rel(x, &out, ov->types, ov->ncols, NULL, 0, &v);
    if (!st) rf_gx_var_set(x, k->out, &v);
    rf_rt_rel_free(&out);
    rf_rt_rel_free(&r[0]);
    rf_rt_rel_free(&r[1]);
    free(e[0]);
    free(e[1]);
    x->on_host = 1;
    return st;
}

rf_status rf_gx_map_error_whole(gx *x, const rf_hir_kernel *k, int64_t keep, int64_t keep_errors)
{
    rf_rt_rel r[2];
    int64_t *e[2], n = 0;
    rf_rt_side sides[2];
    rf_status st = held_sides(x, k, r, e, sides, &n);
    rf_rt_eval_ctx ctx = {x->dict, x->threads, kloc(x, k), rf_hir_kind_name(k->kind)};
    if (!st) st = rf_rt_agg_expr_fail(&ctx, x->p, k, sides, n, x->d, keep, keep_errors, x->fd_clash);
    rf_rt_rel_free(&r[0]);
    rf_rt_rel_free(&r[1]);
    free(e[0]);
    free(e[1]);
    return st;
}

/* Float aggregates on the host: their value depends on the order of the
** additions, which rf_cpu_agg_* fixes. */
rf_status rf_gx_float_agg(gx *x, const rf_qp_agg *ag, const gval *in, int32_t col, const rf_cpu_groups *hg,
                           const int64_t *counts, gptr dst)
{
    int64_t n = in->nrows, ng = hg->ngroups;
    double *vals = rf_malloc((size_t)(n + 1) * 8), *res = rf_malloc((size_t)(ng + 1) * 8);
    rf_status st = vals && res ? RF_OK : RF_ENOMEM;
    if (!st && n) st = x->g.ops->d2h(&x->g, vals, colp(in, col), (uint64_t)n * 8);
    rf_cpu_groups g = *hg; /* the aggregate may add order arrays: freed below */
    g.order = g.offsets = NULL;
    if (!st) {
        if (ag->fn == RF_AGG_MIN || ag->fn == RF_AGG_MAX) {
            rf_cpu_col vc = {RF_CPU_F64, vals}, oc = {RF_CPU_F64, NULL};
            st = ag->fn == RF_AGG_MIN ? rf_cpu_agg_min(x->cpool, &g, &vc, &oc) : rf_cpu_agg_max(x->cpool, &g, &vc, &oc);
            if (!st) memcpy(res, oc.data, (size_t)ng * 8);
            free(oc.data);
        } else {
            double *s = NULL;
            st = rf_cpu_agg_sum_f64(x->cpool, &g, vals, &s);
            for (int64_t i = 0; i < ng && !st; i++)
                res[i] = ag->fn == RF_AGG_AVG ? rf_val_float_canon(s[i] / (double)counts[i]) : s[i];
            free(s);
        }
    }
    free(g.order);
    free(g.offsets);
    if (!st && ng) st = x->g.ops->h2d(&x->g, dst, res, (uint64_t)ng * 8);
    free(vals);
    free(res);
    x->on_host = 1;
    return st;
}
