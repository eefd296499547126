/*
** runtime/cpu/rt_cpu_exec.c: the CPU executor: rf_rt_cpu_device, the device
** executor interface (runtime/rt_device.h) on the host, and its kernels.
**
** Owns: the values of a run on the CPU (one relation, index vector or group
** table per variable; input columns borrowed from the input cache), the
** kernels by kind, releasing values when the driver says, and the
** functional-dependency check. The driver (runtime/rt_run.c) walks the
** blocks and loads the inputs; the data movement itself is skeletons/cpu
** (rf_cpu_*); expressions are evaluated by rf_rt_eval_map.
*/
#include "rt_device.h"
#include "rf_cpu.h"
#include "rf_rt_input.h"

#include <stdlib.h>
#include <string.h>

typedef struct val {
    rf_rt_rel rel;        /* with set: rel.cols points into the set's storage */
    rf_rt_index idx;
    rf_cpu_groups groups;
    int has_groups;
    rf_cpu_set *set;      /* a hash index on rel's rows, kept while rel only grows */
    int borrowed;         /* rel's columns belong to the input cache */
} val;

typedef struct exec {
    const rf_hir_program *p;
    rf_rt_options o;
    rf_diags *d;
    rf_rt_dict *dict;
    rf_cpu_pool *pool;
    int threads;
    val *vals;
} exec;

/* A borrowed view of a relation for the rf_cpu primitives. */
static rf_status view_of(const rf_rt_rel *r, rf_cpu_table *t)
{
    t->nrows = r->nrows;
    t->ncols = r->ncols;
    t->cols = rf_calloc((size_t)r->ncols + 1, sizeof *t->cols);
    if (!t->cols) return RF_ENOMEM;
    for (int32_t c = 0; c < r->ncols; c++) {
        t->cols[c].kind = rf_rt_cpu_kind(r->types[c]);
        t->cols[c].data = r->nrows ? r->cols[c] : NULL;
    }
    return RF_OK;
}

static void val_clear(val *v)
{
    if (v->borrowed) {
        /* the cache owns the columns; only the pointer array is ours */
        free(v->rel.cols);
        v->rel.cols = NULL;
        v->rel.nrows = 0;
        v->borrowed = 0;
    }
    if (v->set) {
        /* the columns belong to the set */
        free(v->rel.cols);
        v->rel.cols = NULL;
        rf_cpu_set_free(v->set);
        v->set = NULL;
    }
    rf_rt_rel_free(&v->rel);
    v->rel.nrows = 0;
    rf_rt_index_free(&v->idx);
    memset(&v->idx, 0, sizeof v->idx);
    if (v->has_groups) rf_cpu_groups_free(&v->groups);
    memset(&v->groups, 0, sizeof v->groups);
    v->has_groups = 0;
}

static int64_t val_rows(const exec *x, int32_t var)
{
    const rf_hir_var *hv = x->p->vars[var];
    const val *v = &x->vals[var];
    if (hv->kind == RF_HIR_V_REL) return v->rel.nrows;
    return v->has_groups ? v->groups.nrows : v->idx.n;
}

static rf_loc kloc(const exec *x, const rf_hir_kernel *k)
{
    return rf_mkloc(x->p->source, k->loc.line, k->loc.line ? k->loc.col : 0);
}

/* Moves a table made by rf_cpu into a relation with the given types. */
static void rel_from_table(rf_rt_rel *r, int32_t ncols, const rf_type *types, rf_cpu_table *t)
{
    r->ncols = ncols;
    r->types = types;
    r->nrows = t->nrows;
    r->cols = rf_calloc((size_t)ncols + 1, sizeof *r->cols);
    if (!r->cols) return;
    for (int32_t c = 0; c < ncols; c++) {
        r->cols[c] = t->cols[c].data;
        t->cols[c].data = NULL;
    }
    rf_cpu_table_free(t);
}

/* Rows of in at idx (all columns) into out. */
static rf_status gather_rel(exec *x, const rf_rt_rel *in, const int64_t *idx, int64_t n, const rf_type *types,
                            rf_rt_rel *out)
{
    rf_cpu_table v, g;
    memset(&g, 0, sizeof g);
    rf_status st = view_of(in, &v);
    if (st) return st;
    st = rf_cpu_gather_table(x->pool, &v, idx, n, &g);
    free(v.cols);
    if (st) return st;
    rel_from_table(out, in->ncols, types, &g);
    return out->cols || !in->ncols ? RF_OK : RF_ENOMEM;
}

/* Whether kernel k releases variable var (it is dead after k). */
static int releases(const rf_hir_kernel *k, int32_t var)
{
    for (int32_t i = 0; i < k->nrelease; i++)
        if (k->release[i] == var) return 1;
    return 0;
}

/* out = all rows of variable var: its columns themselves when k is var's last
** reader and var owns them (no copy), a copy otherwise. */
static rf_status take_or_copy(exec *x, const rf_hir_kernel *k, int32_t var, const rf_type *types, rf_rt_rel *out)
{
    val *v = &x->vals[var];
    if (releases(k, var) && !v->borrowed && !v->set && v->rel.cols) {
        int32_t nin = 0;
        for (int32_t i = 0; i < k->nin; i++) nin += k->in[i] == var;
        if (nin == 1) {
            *out = v->rel;
            out->types = types;
            v->rel.cols = NULL;
            v->rel.nrows = 0;
            return RF_OK;
        }
    }
    rf_status st = rf_rt_rel_alloc(out, v->rel.ncols, types, v->rel.nrows);
    if (st) return st;
    for (int32_t c = 0; c < v->rel.ncols && v->rel.nrows; c++)
        memcpy(out->cols[c], v->rel.cols[c], (size_t)(v->rel.nrows * rf_rt_type_width(types[c])));
    return RF_OK;
}

/* ---- strings in order: byte order via ranks ------------------------- */

/* qsort_r's comparator: the dictionary comes as the context, so that two
** runs in one process never share state. */
static int code_cmp(const void *a, const void *b, void *dict)
{
    return rf_rt_dict_cmp(dict, *(const uint32_t *)a, *(const uint32_t *)b);
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The index of code in the ascending array u[0..m) (it is there). */
static int64_t u32_find(const uint32_t *u, int64_t m, uint32_t code)
{
    int64_t lo = 0, hi = m - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (u[mid] < code) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* rank_strings for few rows against a large dictionary: time in the rows,
** not in the dictionary's size. */
static rf_status rank_strings_few(exec *x, const uint32_t *codes, int64_t n, uint32_t **ranks,
                                  uint32_t **codes_of_rank)
{
    uint32_t *u = rf_malloc((size_t)(n + 1) * sizeof *u), *byname = NULL, *rank_of_u = NULL;
    uint32_t *r = rf_malloc((size_t)(n + 1) * sizeof *r);
    if (!u || !r) goto oom;
    memcpy(u, codes, (size_t)n * sizeof *u);
    qsort(u, (size_t)n, sizeof *u, u32_cmp);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || u[m - 1] != u[i]) u[m++] = u[i];
    byname = rf_malloc((size_t)(m + 1) * sizeof *byname);
    rank_of_u = rf_malloc((size_t)(m + 1) * sizeof *rank_of_u);
    if (!byname || !rank_of_u) goto oom;
    memcpy(byname, u, (size_t)m * sizeof *u);
    qsort_r(byname, (size_t)m, sizeof *byname, code_cmp, x->dict);
    for (int64_t i = 0; i < m; i++) rank_of_u[u32_find(u, m, byname[i])] = (uint32_t)i;
    for (int64_t i = 0; i < n; i++) r[i] = rank_of_u[u32_find(u, m, codes[i])];
    free(u);
    free(rank_of_u);
    *ranks = r;
    if (codes_of_rank) *codes_of_rank = byname;
    else free(byname);
    return RF_OK;
oom:
    free(u);
    free(r);
    free(byname);
    free(rank_of_u);
    return RF_ENOMEM;
}

/* ranks[i]: the byte-order rank of codes[i] among the codes present, so that
** sorting by rank sorts by string; codes_of_rank maps back. */
static rf_status rank_strings(exec *x, const uint32_t *codes, int64_t n, uint32_t **ranks, uint32_t **codes_of_rank)
{
    *ranks = NULL;
    if (codes_of_rank) *codes_of_rank = NULL;
    int64_t dn = rf_rt_dict_count(x->dict);
    if (n * 8 < dn) return rank_strings_few(x, codes, n, ranks, codes_of_rank);
    uint32_t *map = rf_malloc((size_t)(dn + 1) * sizeof *map);
    uint32_t *r = rf_malloc((size_t)(n + 1) * sizeof *r);
    uint32_t *present = NULL;
    if (!map || !r) goto oom;
    memset(map, 0xff, (size_t)(dn + 1) * sizeof *map);
    int64_t np = 0;
    for (int64_t i = 0; i < n; i++)
        if (map[codes[i]] == UINT32_MAX) {
            map[codes[i]] = 0;
            np++;
        }
    present = rf_malloc((size_t)(np + 1) * sizeof *present);
    if (!present) goto oom;
    np = 0;
    for (int64_t c = 0; c < dn; c++)
        if (map[c] != UINT32_MAX) present[np++] = (uint32_t)c;
    qsort_r(present, (size_t)np, sizeof *present, code_cmp, x->dict);
    for (int64_t i = 0; i < np; i++) map[present[i]] = (uint32_t)i;
    for (int64_t i = 0; i < n; i++) r[i] = map[codes[i]];
    free(map);
    *ranks = r;
    if (codes_of_rank) *codes_of_rank = present;
    else free(present);
    return RF_OK;
oom:
    free(map);
    free(r);
    free(present);
    return RF_ENOMEM;
}

/* ---- kernels ---------------------------------------------------------- */

static rf_status k_map(exec *x, const rf_hir_kernel *k, const rf_rt_side sides[2], int64_t n)
{
    rf_rt_eval_ctx ctx = {x->dict, x->threads, kloc(x, k), rf_hir_kind_name(k->kind)};
    const rf_hir_var *out = x->p->vars[k->out];
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    rf_status st = rf_rt_eval_map(&ctx, k->filter, k->outs, k->nouts, out->types, sides, n, &r, x->d);
    if (st) return st;
    val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}

static rf_status k_join_index(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *l = &x->vals[k->in[0]].rel, *r = &x->vals[k->in[1]].rel;
    rf_rt_index idx;
    memset(&idx, 0, sizeof idx);
    rf_status st = RF_OK;
    if (k->kind == RF_HIR_ANTI_INDEX && k->nkeys == 0) {
        /* no shared variables: every row survives when the negated relation is empty */
        int64_t n = r->nrows ? 0 : l->nrows;
        idx.a = rf_malloc((size_t)(n + 1) * sizeof *idx.a);
        if (!idx.a) return RF_ENOMEM;
        for (int64_t i = 0; i < n; i++) idx.a[i] = i;
        idx.n = n;
    } else {
        rf_cpu_table lv, rv;
        if ((st = view_of(l, &lv))) return st;
        if ((st = view_of(r, &rv))) {
            free(lv.cols);
            return st;
        }
        if (k->kind == RF_HIR_JOIN_INDEX)
            st = rf_cpu_hash_join(x->pool, &lv, k->lkeys, &rv, k->rkeys, k->nkeys, &idx.a, &idx.b, &idx.n);
        else
            st = rf_cpu_anti_join(x->pool, &lv, k->lkeys, &rv, k->rkeys, k->nkeys, &idx.a, &idx.n);
        free(lv.cols);
        free(rv.cols);
        if (st) return st;
    }
    val_clear(&x->vals[k->out]);
    x->vals[k->out].idx = idx;
    return RF_OK;
}

static rf_status k_group(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *in = &x->vals[k->in[0]].rel;
    rf_cpu_groups g;
    memset(&g, 0, sizeof g);
    rf_status st = RF_OK;
    if (k->ngroup == 0 || in->nrows == 0) {
        /* one group holding every row (none when there are no rows) */
        g.nrows = in->nrows;
        g.ngroups = in->nrows ? 1 : 0;
        g.group_of_row = rf_calloc((size_t)in->nrows + 1, sizeof *g.group_of_row);
        g.first_row = rf_calloc(1, sizeof *g.first_row);
        if (!g.group_of_row || !g.first_row) {
            free(g.group_of_row);
            free(g.first_row);
            return RF_ENOMEM;
        }
    } else {
        rf_cpu_table v;
        if ((st = view_of(in, &v))) return st;
        st = rf_cpu_group_for_agg(x->pool, &v, k->group, k->ngroup, &g);
        free(v.cols);
        if (st) return st;
    }
    val_clear(&x->vals[k->out]);
    x->vals[k->out].groups = g;
    x->vals[k->out].has_groups = 1;
    return RF_OK;
}

static rf_status agg_error(exec *x, const rf_hir_kernel *k, const char *what)
{
    rf_error(x->d, kloc(x, k), "aggregate: %s", what);
    return RF_EUSER;
}

static rf_status k_reduce(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *in = &x->vals[k->in[0]].rel;
    val *gv = &x->vals[k->idx];
    rf_cpu_groups *g = &gv->groups;
    const rf_hir_var *out = x->p->vars[k->out];
    if (!gv->has_groups) return RF_EINTERNAL;
    int64_t ng = g->ngroups;
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    rf_status st = rf_rt_rel_alloc(&r, out->ncols, out->types, ng);
    if (st) return st;
    /* group columns: the values of each group's first row */
    for (int32_t i = 0; i < k->ngroup; i++) {
        int w = rf_rt_type_width(out->types[i]);
        const char *src = in->cols[k->group[i]];
        char *dst = r.cols[i];
        const int64_t *fr = g->first_row;
        /* typed copies: a memcpy call per group costs more than the copy */
        if (w == 8)
            for (int64_t gi = 0; gi < ng; gi++) ((int64_t *)dst)[gi] = ((const int64_t *)src)[fr[gi]];
        else if (w == 4)
            for (int64_t gi = 0; gi < ng; gi++) ((uint32_t *)dst)[gi] = ((const uint32_t *)src)[fr[gi]];
        else
            for (int64_t gi = 0; gi < ng; gi++) memcpy(dst + gi * w, src + fr[gi] * w, (size_t)w);
    }
    int64_t *counts = NULL;
    /* exact sums by input column, shared by total() and avg() of one column */
    rf_dec128 **sums = rf_calloc((size_t)in->ncols + 1, sizeof *sums);
    if (!sums) st = RF_ENOMEM;
    {
        /* the integer and decimal columns summed, all in one pass */
        int32_t cols[16], nc = 0;
        const int64_t *vals[16];
        rf_dec128 *outs[16];
        for (int32_t a = 0; a < k->naggs && !st && nc < 16; a++) {
            const rf_qp_agg *ag = &k->aggs[a];
            if ((ag->fn != RF_AGG_TOTAL && ag->fn != RF_AGG_AVG) || ag->col < 0 || in->types[ag->col] == RF_TYPE_FLOAT)
                continue;
            int dup = 0;
            for (int32_t j = 0; j < nc; j++) dup |= cols[j] == ag->col;
            if (!dup) cols[nc] = ag->col, vals[nc++] = in->cols[ag->col];
        }
        if (nc > 1 && !st && !(st = rf_cpu_agg_sums_i64(x->pool, g, nc, vals, outs)))
            for (int32_t j = 0; j < nc; j++) sums[cols[j]] = outs[j];
    }
    /* min and max of one integer column: one pass for both */
    uint8_t done[256] = {0};
    for (int32_t a = 0; a < k->naggs && a < 256 && !st; a++) {
        const rf_qp_agg *ag = &k->aggs[a];
        if ((ag->fn != RF_AGG_MIN && ag->fn != RF_AGG_MAX) || ag->col < 0 || done[a] ||
            rf_rt_cpu_kind(in->types[ag->col]) != RF_CPU_I64 || in->types[ag->col] == RF_TYPE_FLOAT)
            continue;
        for (int32_t b = a + 1; b < k->naggs && b < 256; b++) {
            const rf_qp_agg *bg = &k->aggs[b];
            if (bg->col != ag->col || done[b] || bg->fn != (ag->fn == RF_AGG_MIN ? RF_AGG_MAX : RF_AGG_MIN)) continue;
            int32_t amin = ag->fn == RF_AGG_MIN ? a : b, amax = amin == a ? b : a;
            st = rf_cpu_agg_minmax_i64(x->pool, g, in->cols[ag->col], r.cols[k->ngroup + amin], r.cols[k->ngroup + amax]);
            done[a] = done[b] = 1;
            break;
        }
    }
    for (int32_t a = 0; a < k->naggs && !st; a++) {
        const rf_qp_agg *ag = &k->aggs[a];
        void *dst = r.cols[k->ngroup + a];
        if (a < 256 && done[a]) continue;
        rf_type at = ag->col >= 0 ? in->types[ag->col] : RF_TYPE_INT;
        const void *src = ag->col >= 0 ? in->cols[ag->col] : NULL;
        if ((ag->fn == RF_AGG_COUNT || ag->fn == RF_AGG_AVG) && !counts)
            if ((st = rf_cpu_agg_count(x->pool, g, &counts))) break;
        switch (ag->fn) {
        case RF_AGG_COUNT:
            if (ng) memcpy(dst, counts, (size_t)ng * sizeof *counts); /* no groups: dst may be NULL */
            break;
        case RF_AGG_TOTAL:
        case RF_AGG_AVG:
            if (at == RF_TYPE_FLOAT) {
                double *s = NULL;
                if ((st = rf_cpu_agg_sum_f64(x->pool, g, src, &s))) break;
                for (int64_t i = 0; i < ng; i++)
                    ((double *)dst)[i] = ag->fn == RF_AGG_AVG ? s[i] / (double)counts[i] : s[i];
                free(s);
            } else {
                if (!sums[ag->col] && (st = rf_cpu_agg_sum_i64(x->pool, g, src, &sums[ag->col]))) break;
                const rf_dec128 *s = sums[ag->col];
                for (int64_t i = 0; i < ng && !st; i++) {
                    int64_t v = 0;
                    rf_val_err e = {0, 0};
                    rf_status vs;
                    if (ag->fn == RF_AGG_AVG)
                        vs = at == RF_TYPE_INT ? rf_val_int128_avg(s[i], counts[i], &v, &e)
                                               : rf_val_dec128_avg(s[i], counts[i], &v, &e);
                    else if (at == RF_TYPE_INT)
                        vs = (s[i] > INT64_MAX || s[i] < INT64_MIN) ? RF_EUSER : (v = (int64_t)s[i], RF_OK);
                    else
                        vs = rf_val_dec128_to_dec(s[i], &v, &e);
                    if (vs) st = agg_error(x, k, at == RF_TYPE_INT && ag->fn == RF_AGG_TOTAL ? "integer overflow in total()" : e.why ? e.why : "overflow");
                    ((int64_t *)dst)[i] = v;
                }
            }
            break;
        case RF_AGG_MIN:
        case RF_AGG_MAX: {
            rf_cpu_col vc = {rf_rt_cpu_kind(at), (void *)src}, oc = {rf_rt_cpu_kind(at), NULL};
            uint32_t *ranks = NULL, *back = NULL;
            if (at == RF_TYPE_STRING) {
                if ((st = rank_strings(x, src, in->nrows, &ranks, &back))) break;
                vc.data = ranks;
            }
            st = ag->fn == RF_AGG_MIN ? rf_cpu_agg_min(x->pool, g, &vc, &oc) : rf_cpu_agg_max(x->pool, g, &vc, &oc);
            if (!st) {
                if (at == RF_TYPE_STRING)
                    for (int64_t i = 0; i < ng; i++) ((uint32_t *)dst)[i] = back[((uint32_t *)oc.data)[i]];
                else
                    if (ng) memcpy(dst, oc.data, (size_t)ng * (size_t)rf_rt_type_width(at));
            }
            free(oc.data);
            free(ranks);
            free(back);
            break;
        }
        }
    }
    free(counts);
    for (int32_t c = 0; sums && c < in->ncols; c++) free(sums[c]);
    free(sums);
    if (st) {
        rf_rt_rel_free(&r);
        return st;
    }
    val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}

static rf_status k_concat(exec *x, const rf_hir_kernel *k)
{
    const rf_hir_var *out = x->p->vars[k->out];
    int64_t total = 0;
    for (int32_t i = 0; i < k->nin; i++) total += x->vals[k->in[i]].rel.nrows;
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    rf_status st = rf_rt_rel_alloc(&r, out->ncols, out->types, total);
    if (st) return st;
    for (int32_t c = 0; c < out->ncols; c++) {
        int w = rf_rt_type_width(out->types[c]);
        int64_t at = 0;
        for (int32_t i = 0; i < k->nin; i++) {
            const rf_rt_rel *in = &x->vals[k->in[i]].rel;
            if (in->nrows) memcpy((char *)r.cols[c] + at * w, in->cols[c], (size_t)(in->nrows * w));
            at += in->nrows;
        }
    }
    val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}


/* A functional predicate must not give two values for one key. */
static rf_status check_fd(exec *x, const rf_hir_kernel *k, const rf_rt_rel *r)
{
    const rf_hir_var *out = x->p->vars[k->out];
    int32_t nk = out->nkeys;
    if (nk <= 0 || nk >= r->ncols || r->nrows < 2) return RF_OK;
    rf_cpu_table v;
    rf_status st = view_of(r, &v);
    if (st) return st;
    int32_t keys[4096];
    for (int32_t i = 0; i < nk; i++) keys[i] = i;
    rf_cpu_groups g;
    memset(&g, 0, sizeof g);
    st = rf_cpu_group(x->pool, &v, keys, nk, &g);
    free(v.cols);
    if (st) return st;
    if (g.ngroups == r->nrows) {
        rf_cpu_groups_free(&g);
        return RF_OK;
    }
    /* the first row whose key was seen before: deterministic */
    int64_t row = -1;
    for (int64_t i = 0; i < r->nrows && row < 0; i++)
        if (g.first_row[g.group_of_row[i]] != i) row = i;
    int64_t first = g.first_row[g.group_of_row[row]];
    rf_cpu_groups_free(&g);
    rf_buf b;
    rf_buf_init(&b);
    rf_rt_fd_message(x->dict, out->pred_name ? out->pred_name : out->name, r, nk, first, row, &b);
    rf_error(x->d, kloc(x, k), "%s", rf_buf_cstr(&b));
    rf_buf_free(&b);
    return RF_EUSER;
}

/* Points rel at the set's rows (after an insert moved them). */
static rf_status rel_from_set(val *v)
{
    rf_cpu_table view;
    rf_cpu_set_view(v->set, &view);
    if (!v->rel.cols) {
        v->rel.cols = rf_calloc((size_t)v->rel.ncols + 1, sizeof *v->rel.cols);
        if (!v->rel.cols) return RF_ENOMEM;
    }
    v->rel.nrows = view.nrows;
    for (int32_t c = 0; c < v->rel.ncols; c++) v->rel.cols[c] = view.cols[c].data;
    return RF_OK;
}

/* Gives a relation a hash index on its rows (deduplicating it: variables read
** as sets are sets), so that differences against it and insertions into it
** cost time in the size of the other side only. */
static rf_status ensure_set(exec *x, int32_t var)
{
    val *v = &x->vals[var];
    if (v->set) return RF_OK;
    rf_cpu_kind kinds[4096];
    int32_t nc = v->rel.ncols < 4096 ? v->rel.ncols : 4096;
    for (int32_t c = 0; c < nc; c++) kinds[c] = rf_rt_cpu_kind(v->rel.types[c]);
    rf_cpu_set *set = NULL;
    rf_status st = rf_cpu_set_new(nc, kinds, &set);
    if (st) return st;
    rf_cpu_table t;
    if ((st = view_of(&v->rel, &t)) || (st = rf_cpu_set_insert(x->pool, set, &t, NULL, NULL))) {
        free(t.cols);
        rf_cpu_set_free(set);
        return st;
    }
    free(t.cols);
    if (v->borrowed) {
        free(v->rel.cols);
        v->borrowed = 0;
    } else {
        rf_rt_rel_free(&v->rel);
    }
    v->rel.cols = NULL;
    v->set = set;
    return rel_from_set(v);
}

static rf_status k_insert(exec *x, const rf_hir_kernel *k)
{
    rf_status st = ensure_set(x, k->out);
    val *v = &x->vals[k->out];
    for (int32_t i = 1; i < k->nin && !st; i++) {
        rf_cpu_table t;
        if ((st = view_of(&x->vals[k->in[i]].rel, &t))) break;
        st = rf_cpu_set_insert(x->pool, v->set, &t, NULL, NULL);
        free(t.cols);
        if (!st) st = rel_from_set(v);
    }
    return st;
}

/* DIFFERENCE against a relation that has (or gets) a hash index. */
static rf_status difference_by_set(exec *x, const rf_cpu_table *a, int32_t bvar, int64_t **keep, int64_t *n)
{
    rf_status st = ensure_set(x, bvar);
    if (st) return st;
    int64_t *k1 = NULL, n1 = 0;
    if ((st = rf_cpu_set_probe(x->pool, x->vals[bvar].set, a, 1, &k1, &n1))) return st;
    /* a may repeat rows: keep the first of each */
    rf_cpu_table g;
    memset(&g, 0, sizeof g);
    if ((st = rf_cpu_gather_table(x->pool, a, k1, n1, &g))) {
        free(k1);
        return st;
    }
    int64_t *k2 = NULL, n2 = 0;
    st = rf_cpu_unique(x->pool, &g, &k2, &n2);
    rf_cpu_table_free(&g);
    if (!st) {
        for (int64_t i = 0; i < n2; i++) k2[i] = k1[k2[i]];
        *keep = k2;
        *n = n2;
    }
    free(k1);
    return st;
}

static rf_status k_unique(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *in = &x->vals[k->in[0]].rel;
    const rf_hir_var *out = x->p->vars[k->out];
    rf_cpu_table v;
    rf_status st = view_of(in, &v);
    if (st) return st;
    int64_t *keep = NULL, n = 0;
    if (k->kind == RF_HIR_DIFFERENCE) {
        st = difference_by_set(x, &v, k->in[1], &keep, &n);
    } else {
        st = rf_cpu_unique(x->pool, &v, &keep, &n);
    }
    free(v.cols);
    if (st) return st;
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    if (n == in->nrows && k->kind == RF_HIR_UNIQUE) {
        /* nothing dropped (keep is the identity): the input rows as they are */
        st = take_or_copy(x, k, k->in[0], out->types, &r);
    } else {
        st = gather_rel(x, in, keep, n, out->types, &r);
    }
    free(keep);
    if (st) return st;
    if (k->check_fd && (st = check_fd(x, k, &r))) {
        rf_rt_rel_free(&r);
        return st;
    }
    val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}

/* A key whose unsigned order is the column's order (ascending), for the
** numeric and date types: floats in the total order of rf_val_cmp_float. */
static uint64_t order_key(const rf_rt_rel *r, int32_t col, int64_t row)
{
    switch (r->types[col]) {
    case RF_TYPE_FLOAT: {
        double d = ((const double *)r->cols[col])[row];
        if (d != d) return UINT64_MAX; /* every NaN after +inf */
        if (d == 0) d = 0;             /* -0 == 0 */
        uint64_t b;
        memcpy(&b, &d, sizeof b);
        return (b >> 63) ? ~b : b | (UINT64_C(1) << 63);
    }
    case RF_TYPE_DATE: return (uint64_t)(int64_t)((const int32_t *)r->cols[col])[row] ^ (UINT64_C(1) << 63);
    case RF_TYPE_BOOL: return ((const uint8_t *)r->cols[col])[row];
    default: return (uint64_t)((const int64_t *)r->cols[col])[row] ^ (UINT64_C(1) << 63);
    }
}

/* The k-th smallest of v[0..n) (v is reordered): quickselect. */
static uint64_t kth_smallest(uint64_t *v, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = v[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) {
                uint64_t t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return v[k];
    }
    return v[k];
}

/* With a limit, only the rows whose first key is at least as good as the
** limit-th best first key can be among the first `limit` rows: selecting
** them is linear, and the full sort (string ranks included) then runs on
** them alone. NULL rows: no pruning applies. */
static rf_status limit_candidates(const rf_hir_kernel *k, const rf_rt_rel *in, int64_t **rows, int64_t *n)
{
    *rows = NULL;
    *n = in->nrows;
    int64_t limit = k->limit;
    if (limit < 0 || k->norder < 1 || in->nrows < 4 * limit + 4096) return RF_OK;
    int32_t col = k->order[0].col;
    if (in->types[col] == RF_TYPE_STRING) return RF_OK;
    int64_t nr = in->nrows;
    uint64_t *keys = rf_malloc((size_t)nr * sizeof *keys);
    if (!keys) return RF_ENOMEM;
    uint64_t flip = k->order[0].desc ? UINT64_MAX : 0;
    for (int64_t i = 0; i < nr; i++) keys[i] = order_key(in, col, i) ^ flip;
    uint64_t t = limit ? kth_smallest(keys, nr, limit - 1) : 0;
    int64_t m = 0;
    for (int64_t i = 0; i < nr && limit; i++) m += (order_key(in, col, i) ^ flip) <= t;
    int64_t *r = rf_malloc((size_t)(m + 1) * sizeof *r);
    if (!r) {
        free(keys);
        return RF_ENOMEM;
    }
    m = 0;
    for (int64_t i = 0; i < nr && limit; i++)
        if ((order_key(in, col, i) ^ flip) <= t) r[m++] = i;
    free(keys);
    *rows = r;
    *n = m;
    return RF_OK;
}

static rf_status k_sort(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *all = &x->vals[k->in[0]].rel;
    int64_t *cand = NULL, ncand = 0;
    rf_status st = limit_candidates(k, all, &cand, &ncand);
    if (st) return st;
    /* sort the candidates only (all rows when nothing could be pruned) */
    rf_rt_rel sub;
    memset(&sub, 0, sizeof sub);
    const rf_rt_rel *in = all;
    if (cand) {
        if ((st = gather_rel(x, all, cand, ncand, all->types, &sub))) {
            free(cand);
            return st;
        }
        in = &sub;
    }
    rf_cpu_table v;
    if ((st = view_of(in, &v))) {
        rf_rt_rel_free(&sub);
        free(cand);
        return st;
    }
    int32_t keys[4096];
    uint8_t desc[4096];
    uint32_t *ranks[4096];
    int32_t nk = k->norder < 4096 ? k->norder : 4096;
    memset(ranks, 0, sizeof(ranks[0]) * (size_t)(nk + 1));
    for (int32_t i = 0; i < nk && !st; i++) {
        keys[i] = k->order[i].col;
        desc[i] = (uint8_t)k->order[i].desc;
        if (in->types[keys[i]] == RF_TYPE_STRING && in->nrows) {
            /* strings sort by bytes, not by code: sort by rank instead */
            st = rank_strings(x, in->cols[keys[i]], in->nrows, &ranks[i], NULL);
            if (!st) v.cols[keys[i]].data = ranks[i];
        }
    }
    int64_t *perm = NULL;
    if (!st) st = rf_cpu_sort_perm(x->pool, &v, keys, desc, nk, &perm);
    for (int32_t i = 0; i < nk; i++) free(ranks[i]);
    free(v.cols);
    rf_rt_rel_free(&sub);
    if (!st && cand)
        for (int64_t i = 0; i < ncand; i++) perm[i] = cand[perm[i]];
    free(cand);
    if (st) return st;
    val_clear(&x->vals[k->out]);
    x->vals[k->out].idx.a = perm;
    x->vals[k->out].idx.n = in == all ? all->nrows : ncand;
    return RF_OK;
}

static rf_status k_gather(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *in = &x->vals[k->in[0]].rel;
    const rf_rt_index *idx = &x->vals[k->idx].idx;
    int64_t n = idx->n;
    if (k->limit >= 0 && k->limit < n) n = k->limit;
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    rf_status st = gather_rel(x, in, idx->a, n, x->p->vars[k->out]->types, &r);
    if (st) return st;
    val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}

static rf_status k_copy(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *in = &x->vals[k->in[0]].rel;
    const rf_hir_var *out = x->p->vars[k->out];
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    rf_status st = rf_rt_rel_alloc(&r, out->ncols, out->types, in->nrows);
    if (st) return st;
    for (int32_t c = 0; c < out->ncols && in->nrows; c++)
        memcpy(r.cols[c], in->cols[c], (size_t)(in->nrows * rf_rt_type_width(out->types[c])));
    val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}

static rf_status k_facts(exec *x, const rf_hir_kernel *k)
{
    rf_rt_rel r;
    rf_status st = rf_rt_facts(k, x->p->vars[k->out], x->dict, &r);
    if (st) return st;
    val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}

/* A map without a filter whose outputs are columns of an input that the
** cache owns (they live as long as the run) takes those columns as they
** are: a projection needs no copy. Not for output relations, which the
** result takes over and frees. 1 when it did. */
static int map_borrows(exec *x, const rf_hir_kernel *k)
{
    const val *in = &x->vals[k->in[0]];
    const rf_hir_var *ov = x->p->vars[k->out];
    if (k->filter || !in->borrowed || ov->role == RF_HIR_ROLE_OUTPUT || k->nouts != ov->ncols) return 0;
    for (int32_t o = 0; o < k->nouts; o++) {
        const rf_qp_expr *e = k->outs[o];
        if (!e || e->kind != RF_QP_E_COL || e->side != 0 || e->col < 0 || e->col >= in->rel.ncols ||
            in->rel.types[e->col] != ov->types[o])
            return 0;
    }
    void **cols = rf_calloc((size_t)ov->ncols + 1, sizeof *cols);
    if (!cols) return 0; /* the copying path reports the lack of memory */
    for (int32_t o = 0; o < k->nouts; o++) cols[o] = in->rel.cols[k->outs[o]->col];
    val *v = &x->vals[k->out];
    val_clear(v);
    v->rel.ncols = ov->ncols;
    v->rel.types = ov->types;
    v->rel.nrows = in->rel.nrows;
    v->rel.cols = cols;
    v->borrowed = 1;
    return 1;
}

static rf_status run_kernel(exec *x, const rf_hir_kernel *k)
{
    switch (k->kind) {
    case RF_HIR_MAP: {
        if (map_borrows(x, k)) return RF_OK;
        rf_rt_side s[2] = {{&x->vals[k->in[0]].rel, NULL}, {NULL, NULL}};
        return k_map(x, k, s, s[0].rel->nrows);
    }
    case RF_HIR_JOIN_MAP: {
        const rf_rt_index *idx = &x->vals[k->idx].idx;
        rf_rt_side s[2] = {{&x->vals[k->in[0]].rel, idx->a}, {&x->vals[k->in[1]].rel, idx->b}};
        return k_map(x, k, s, idx->n);
    }
    case RF_HIR_GATHER_MAP: {
        const rf_rt_index *idx = &x->vals[k->idx].idx;
        rf_rt_side s[2] = {{&x->vals[k->in[0]].rel, idx->a}, {NULL, NULL}};
        return k_map(x, k, s, idx->n);
    }
    case RF_HIR_JOIN_INDEX:
    case RF_HIR_ANTI_INDEX: return k_join_index(x, k);
    case RF_HIR_GROUP: return k_group(x, k);
    case RF_HIR_REDUCE: return k_reduce(x, k);
    case RF_HIR_CONCAT: return k_concat(x, k);
    case RF_HIR_UNIQUE:
    case RF_HIR_DIFFERENCE: return k_unique(x, k);
    case RF_HIR_SORT: return k_sort(x, k);
    case RF_HIR_GATHER: return k_gather(x, k);
    case RF_HIR_COPY: return k_copy(x, k);
    case RF_HIR_FACTS: return k_facts(x, k);
    case RF_HIR_CLEAR:
        val_clear(&x->vals[k->out]);
        return RF_OK;
    case RF_HIR_INSERT: return k_insert(x, k);
    }
    return RF_EINTERNAL;
}

/* ---- the device ---------------------------------------------------------- */

static rf_status cpu_open(const rf_rt_env *env, void **dev)
{
    exec *x = rf_calloc(1, sizeof *x);
    if (!x) return RF_ENOMEM;
    x->p = env->p;
    x->o = *env->o;
    x->d = env->d;
    x->dict = env->dict;
    x->pool = env->pool;
    x->threads = env->threads;
    x->vals = rf_calloc((size_t)env->p->nvars + 1, sizeof *x->vals);
    if (!x->vals) {
        free(x);
        return RF_ENOMEM;
    }
    for (int32_t v = 0; v < env->p->nvars; v++) {
        x->vals[v].rel.ncols = env->p->vars[v]->ncols;
        x->vals[v].rel.types = env->p->vars[v]->types;
    }
    *dev = x;
    return RF_OK;
}

static const char *cpu_where(void *dev, const rf_hir_kernel *k)
{
    (void)dev;
    (void)k;
    return "cpu";
}

static rf_status cpu_nothing(void *dev)
{
    (void)dev;
    return RF_OK;
}

static rf_status cpu_load(void *dev, int32_t var, rf_rt_rel *rel, int borrowed)
{
    exec *x = dev;
    val *v = &x->vals[var];
    v->rel.nrows = rel->nrows;
    v->rel.cols = rel->cols;
    v->borrowed = borrowed;
    return RF_OK;
}

static rf_status cpu_run(void *dev, const rf_hir_kernel *k, rf_rt_kprof *prof)
{
    (void)prof; /* the driver's wall clock is the CPU's time */
    return run_kernel(dev, k);
}

static int64_t cpu_rows(const void *dev, int32_t var) { return val_rows(dev, var); }

/* The output's columns themselves: the result takes them over. */
static rf_status cpu_to_host(void *dev, int32_t var, rf_rt_rel *out)
{
    exec *x = dev;
    *out = x->vals[var].rel;
    memset(&x->vals[var].rel, 0, sizeof x->vals[var].rel);
    return RF_OK;
}

static void cpu_free(void *dev, int32_t var) { val_clear(&((exec *)dev)->vals[var]); }

static void cpu_close(void *dev)
{
    exec *x = dev;
    for (int32_t v = 0; x->vals && v < x->p->nvars; v++) val_clear(&x->vals[v]);
    free(x->vals);
    free(x);
}

const rf_rt_device_ops rf_rt_cpu_device = {
    "cpu",      cpu_open, cpu_where, cpu_nothing, cpu_load, cpu_nothing, cpu_run, cpu_rows, cpu_nothing,
    cpu_to_host, cpu_free, cpu_close,
};
