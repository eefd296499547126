/*
** runtime/cpu/rt_cpu_exec.c: the CPU executor: rf_rt_cpu_device, the device
** executor interface (runtime/rt_device.h) on the host.
**
** Owns: the values of a run on the CPU (one relation, index vector or group
** table per variable; input columns borrowed from the input cache), the
** device's operations, one kernel dispatched by kind to the file that runs
** it (or to the span of kernels it runs with: grouped totals, a recursion's
** candidates in parts), and the kernels that move rows simply (maps through rf_rt_eval_map,
** joins, groups, concat, gather, copy, facts). The driver
** (runtime/rt_run.c) walks the blocks and reads the inputs; the data
** movement itself is skeletons/cpu (rf_cpu_*).
*/
#include "rt_cpu_internal.h"

/* A borrowed view of a relation for the rf_cpu primitives. */
rf_status rf_cx_view_of(const rf_rt_rel *r, rf_cpu_table *t)
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

rf_status rf_cx_views_of(const rf_rt_rel *l, const rf_rt_rel *r, rf_cpu_table *lv, rf_cpu_table *rv)
{
    rf_status st = rf_cx_view_of(l, lv);
    if (!st && (st = rf_cx_view_of(r, rv))) {
        free(lv->cols);
        lv->cols = NULL;
    }
    return st;
}

void rf_cx_jsides_free(val *v)
{
    rf_cpu_set_free(v->probe);
    v->probe = NULL;
    v->probe_uses = 0;
    v->jside_uses = 0;
    for (int i = 0; i < RF_CX_JSIDES; i++) {
        rf_cpu_join_side_free(v->jside[i]);
        v->jside[i] = NULL;
    }
}

void rf_cx_val_clear(val *v)
{
    rf_cpu_set_free(v->probe);
    v->probe = NULL;
    rf_cx_jsides_free(v);
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
    if (x->fused_rows && x->fused_rows[var] >= 0) return x->fused_rows[var];
    if (hv->kind == RF_HIR_V_REL) return v->rel.nrows;
    return v->has_groups ? v->groups.nrows : v->idx.n;
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
rf_status rf_cx_gather_rel(exec *x, const rf_rt_rel *in, const int64_t *idx, int64_t n, const rf_type *types,
                            rf_rt_rel *out)
{
    rf_cpu_table v, g;
    memset(&g, 0, sizeof g);
    rf_status st = rf_cx_view_of(in, &v);
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
rf_status rf_cx_take_or_copy(exec *x, const rf_hir_kernel *k, int32_t var, const rf_type *types, rf_rt_rel *out)
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
            rf_cx_jsides_free(v);
            return RF_OK;
        }
    }
    rf_status st = rf_rt_rel_alloc(out, v->rel.ncols, types, v->rel.nrows);
    if (st) return st;
    for (int32_t c = 0; c < v->rel.ncols && v->rel.nrows; c++)
        memcpy(out->cols[c], v->rel.cols[c], (size_t)(v->rel.nrows * rf_rt_type_width(types[c])));
    return RF_OK;
}

/* ---- kernels ---------------------------------------------------------- */

static rf_status k_map(exec *x, const rf_hir_kernel *k, const rf_rt_side sides[2], int64_t n)
{
    rf_rt_eval_ctx ctx = {x->dict, x->threads, kloc(x, k), rf_hir_kind_name(k->kind)};
    const rf_hir_var *out = x->p->vars[k->out];
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    int64_t nd = x->d->count, ne = x->d->nerrors;
    rf_status st = rf_rt_eval_map(&ctx, k->filter, k->outs, k->nouts, out->types, sides, n, &r, x->d);
    /* an aggregated expression's error names its group instead */
    if (st == RF_EUSER) st = rf_rt_agg_expr_fail(&ctx, x->p, k, sides, n, x->d, nd, ne, x->fd_clash);
    if (st) return st;
    rf_cx_val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}

/* An anti-join that negates every column of a relation that does not
** change (an input, or a relation computed before a recursion and negated
** again without changing since) probes a hash set of its rows, built once:
** returns 1 when it ran (*st its status), 0 when k is not such a one. */
static int anti_join_probe(exec *x, const rf_hir_kernel *k, const rf_cpu_table *lv, const rf_cpu_table *rv,
                           rf_rt_index *idx, rf_status *st)
{
    val *rvv = &x->vals[k->in[1]];
    if (k->nkeys != rv->ncols || rv->ncols <= 0 || rv->ncols > 64 || lv->nrows < 1) return 0;
    uint64_t seen = 0;
    for (int32_t i = 0; i < k->nkeys; i++) {
        if (k->rkeys[i] < 0 || k->rkeys[i] >= rv->ncols || (seen >> k->rkeys[i] & 1)) return 0;
        if (lv->cols[k->lkeys[i]].kind != rv->cols[k->rkeys[i]].kind) return 0;
        seen |= UINT64_C(1) << k->rkeys[i];
    }
    /* worth it only when the set is reused: the right side much larger than one probe */
    if (!rvv->probe && rv->nrows < 4 * lv->nrows) return 0;
    /* an input never changes; another relation is worth it from its second
    ** anti-join on unchanged rows (one rewritten every round never gets one) */
    if (!rvv->probe && !rvv->borrowed && rvv->probe_uses++ < 1) return 0;
    if (!rvv->probe) {
        rf_cpu_kind kinds[64];
        for (int32_t c = 0; c < rv->ncols; c++) kinds[c] = rv->cols[c].kind;
        rf_cpu_set *s = NULL;
        if ((*st = rf_cpu_set_new(rv->ncols, kinds, &s))) return 1;
        if ((*st = rf_cpu_set_insert(x->pool, s, rv, NULL, NULL))) {
            rf_cpu_set_free(s);
            return 1;
        }
        rvv->probe = s;
    }
    /* the left rows' key columns in the right side's column order */
    rf_cpu_col cols[64];
    rf_cpu_table pt = {lv->nrows, rv->ncols, cols};
    for (int32_t i = 0; i < k->nkeys; i++) cols[k->rkeys[i]] = lv->cols[k->lkeys[i]];
    *st = rf_cpu_set_probe(x->pool, rvv->probe, &pt, 1, &idx->a, &idx->n);
    return 1;
}

/* A join (or an anti-join on some of the right side's columns) whose right
** side is much larger than the left and was joined
** before without changing since (an input, or a relation computed before
** a recursion and joined every round of it) probes a join index of the
** right side built once: returns 1 with *side that index (or *st the
** failure to build it), 0 when k is not such a one. Every change of a
** variable's rows drops its indexes (rf_cx_val_clear, cpu_load, the set
** kernels); a variable rewritten every round is never indexed, as its
** second join never comes. */
int rf_cx_kept_side(exec *x, const rf_hir_kernel *k, const rf_cpu_table *lv, const rf_cpu_table *rv,
                    rf_cpu_join_side **side, rf_status *st)
{
    val *rvv = &x->vals[k->in[1]];
    *side = NULL;
    if (k->nkeys < 1 || lv->nrows < 1 || rv->nrows < 1) return 0;
    int slot = -1;
    for (int i = 0; i < RF_CX_JSIDES && slot < 0; i++)
        if (rf_cpu_join_side_keys(rvv->jside[i], k->rkeys, k->nkeys)) slot = i;
    if (slot < 0) {
        /* worth it only when the index is reused: the right side much larger than one probe */
        if (rv->nrows < 4 * lv->nrows || rvv->jside_uses++ < 1) return 0;
        for (int i = 0; i < RF_CX_JSIDES && slot < 0; i++)
            if (!rvv->jside[i]) slot = i;
        if (slot < 0) return 0;
        if ((*st = rf_cpu_join_side_new(x->pool, rv, k->rkeys, k->nkeys, &rvv->jside[slot]))) return 1;
    }
    *side = rvv->jside[slot];
    return 1;
}

/* k through its right side's kept index: 1 when it ran (*st its status). */
static int join_kept_side(exec *x, const rf_hir_kernel *k, const rf_cpu_table *lv, const rf_cpu_table *rv,
                          rf_rt_index *idx, rf_status *st)
{
    rf_cpu_join_side *side = NULL;
    if (!rf_cx_kept_side(x, k, lv, rv, &side, st)) return 0;
    if (*st) return 1;
    if (k->kind == RF_HIR_ANTI_INDEX) *st = rf_cpu_anti_join_side(x->pool, lv, k->lkeys, rv, side, &idx->a, &idx->n);
    else *st = rf_cpu_hash_join_side(x->pool, lv, k->lkeys, rv, side, &idx->a, &idx->b, &idx->n);
    return 1;
}

rf_status rf_cx_anti_index(exec *x, const rf_hir_kernel *k, const rf_rt_rel *l, rf_rt_index *idx)
{
    const rf_rt_rel *r = &x->vals[k->in[1]].rel;
    memset(idx, 0, sizeof *idx);
    if (k->nkeys == 0) {
        /* no shared variables: every row survives when the negated relation is empty */
        int64_t n = r->nrows ? 0 : l->nrows;
        idx->a = rf_malloc((size_t)(n + 1) * sizeof *idx->a);
        if (!idx->a) return RF_ENOMEM;
        for (int64_t i = 0; i < n; i++) idx->a[i] = i;
        idx->n = n;
        return RF_OK;
    }
    rf_cpu_table lv, rv;
    rf_status st = rf_cx_views_of(l, r, &lv, &rv);
    if (st) return st;
    if (!anti_join_probe(x, k, &lv, &rv, idx, &st) && !join_kept_side(x, k, &lv, &rv, idx, &st))
        st = rf_cpu_anti_join(x->pool, &lv, k->lkeys, &rv, k->rkeys, k->nkeys, &idx->a, &idx->n);
    free(lv.cols);
    free(rv.cols);
    if (st) {
        rf_rt_index_free(idx);
        memset(idx, 0, sizeof *idx);
    }
    return st;
}

static rf_status k_join_index(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *l = &x->vals[k->in[0]].rel, *r = &x->vals[k->in[1]].rel;
    rf_rt_index idx;
    memset(&idx, 0, sizeof idx);
    rf_status st = RF_OK;
    if (k->kind == RF_HIR_ANTI_INDEX) {
        if ((st = rf_cx_anti_index(x, k, l, &idx))) return st;
    } else if (l->nrows == 0 || r->nrows == 0) {
        /* no pairs, found without a pass over the other side (a recursion's
        ** empty delta against a big relation, every other round of a
        ** mutual recursion) */
        idx.a = rf_malloc(sizeof *idx.a);
        idx.b = rf_malloc(sizeof *idx.b);
        if (!idx.a || !idx.b) {
            free(idx.a);
            free(idx.b);
            return RF_ENOMEM;
        }
    } else {
        rf_cpu_table lv, rv;
        if ((st = rf_cx_views_of(l, r, &lv, &rv))) return st;
        if (!join_kept_side(x, k, &lv, &rv, &idx, &st))
            st = rf_cpu_hash_join(x->pool, &lv, k->lkeys, &rv, k->rkeys, k->nkeys, &idx.a, &idx.b, &idx.n);
        free(lv.cols);
        free(rv.cols);
        if (st) return st;
    }
    rf_cx_val_clear(&x->vals[k->out]);
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
        if ((st = rf_cx_view_of(in, &v))) return st;
        st = rf_cpu_group_for_agg(x->pool, &v, k->group, k->ngroup, &g);
        free(v.cols);
        if (st) return st;
    }
    rf_cx_val_clear(&x->vals[k->out]);
    x->vals[k->out].groups = g;
    x->vals[k->out].has_groups = 1;
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
    rf_cx_val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
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
    rf_status st = rf_cx_gather_rel(x, in, idx->a, n, x->p->vars[k->out]->types, &r);
    if (st) return st;
    rf_cx_val_clear(&x->vals[k->out]);
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
    rf_cx_val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}

static rf_status k_facts(exec *x, const rf_hir_kernel *k)
{
    rf_rt_rel r;
    rf_status st = rf_rt_facts(k, x->p->vars[k->out], x->dict, &r);
    if (st) return st;
    rf_cx_val_clear(&x->vals[k->out]);
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
    rf_cx_val_clear(v);
    v->rel.ncols = ov->ncols;
    v->rel.types = ov->types;
    v->rel.nrows = in->rel.nrows;
    v->rel.cols = cols;
    v->borrowed = 1;
    return 1;
}

rf_status rf_cx_k_map_kernel(exec *x, const rf_hir_kernel *k)
{
    if (x->fused_rows && k->out >= 0) x->fused_rows[k->out] = -1;
    if (map_borrows(x, k)) return RF_OK;
    rf_rt_side s[2] = {{&x->vals[k->in[0]].rel, NULL}, {NULL, NULL}};
    return k_map(x, k, s, s[0].rel->nrows);
}

static rf_status run_kernel(exec *x, const rf_hir_kernel *k)
{
    rf_status gst;
    if (x->gt && rf_cx_gt_run(x, k, &gst)) return gst;
    if (x->cd && rf_cx_cd_run(x, k, &gst)) return gst;
    if (x->fused_rows && k->out >= 0) x->fused_rows[k->out] = -1;
    switch (k->kind) {
    case RF_HIR_MAP: return rf_cx_k_map_kernel(x, k);
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
    case RF_HIR_REDUCE: return rf_cx_k_reduce(x, k);
    case RF_HIR_CONCAT: return k_concat(x, k);
    case RF_HIR_UNIQUE:
    case RF_HIR_DIFFERENCE: return rf_cx_k_unique(x, k);
    case RF_HIR_SORT: return rf_cx_k_sort(x, k);
    case RF_HIR_GATHER: return k_gather(x, k);
    case RF_HIR_COPY: return k_copy(x, k);
    case RF_HIR_FACTS: return k_facts(x, k);
    case RF_HIR_CLEAR:
        rf_cx_val_clear(&x->vals[k->out]);
        return RF_OK;
    case RF_HIR_INSERT: return rf_cx_k_insert(x, k);
    case RF_HIR_LFTJ: return rf_cx_k_lftj(x, k);
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
    x->res = env->res;
    x->fd_clash = env->fd_clash;
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
    /* --no-fuse: every kernel at its place, on the CPU too */
    if (x->o.no_fuse) return RF_OK;
    rf_status st = rf_cx_gt_plan(x);
    return st ? st : rf_cx_cd_plan(x);
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

static rf_status cpu_load(void *dev, int32_t var, rf_rt_rel *rel, int borrowed, const uint64_t *stamps,
                          struct rf_rt_stored *const *stored)
{
    (void)stamps; /* host rows are used where they are: nothing to keep */
    (void)stored; /* (none: the CPU does not take stored columns, it gets them widened) */
    exec *x = dev;
    val *v = &x->vals[var];
    rf_cpu_set_free(v->probe);
    v->probe = NULL;
    rf_cx_jsides_free(v);
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
    rf_cx_jsides_free(&x->vals[var]);
    return RF_OK;
}

static void cpu_free(void *dev, int32_t var)
{
    exec *x = dev;
    rf_cx_val_clear(&x->vals[var]);
    if (x->fused_rows) x->fused_rows[var] = -1;
}

static void cpu_close(void *dev)
{
    exec *x = dev;
    for (int32_t v = 0; x->vals && v < x->p->nvars; v++) rf_cx_val_clear(&x->vals[v]);
    free(x->vals);
    for (int32_t k = 0; x->gt && k < x->nkernels; k++) rf_cx_gt_plan_free(x->gt[k]);
    free(x->gt);
    free(x->gt_skip);
    free(x->gt_unfused);
    for (int32_t k = 0; x->cd && k < x->nkernels; k++) rf_cx_cd_plan_free(x->cd[k]);
    free(x->cd);
    free(x->cd_skip);
    free(x->cd_unfused);
    free(x->fused_rows);
    free(x);
}

static const rf_rt_rel *cpu_view(void *dev, int32_t var) { return &((exec *)dev)->vals[var].rel; }

static int32_t cpu_fused_until(void *dev, const rf_hir_kernel *k)
{
    exec *x = dev;
    int32_t last = x->gt ? rf_cx_gt_until(x, k) : -1;
    return last >= 0 ? last : rf_cx_cd_until(x, k);
}

static void cpu_unfuse(void *dev, const rf_hir_kernel *k)
{
    exec *x = dev;
    if (x->gt && rf_cx_gt_until(x, k) >= 0) rf_cx_gt_unfuse(x, k);
    else rf_cx_cd_unfuse(x, k);
}

const rf_rt_device_ops rf_rt_cpu_device = {
    "cpu",      cpu_open, cpu_where, cpu_nothing, cpu_load, cpu_nothing, cpu_run, cpu_rows, cpu_nothing,
    cpu_to_host, cpu_free, cpu_close, cpu_view, NULL, /* opens at once: no start aside */
    NULL, /* moves through host memory (view) */
    NULL, /* no figures kept for close */
    cpu_fused_until, cpu_unfuse, /* grouped totals at their map; a recursion's candidates at its first join */
    0,                           /* takes columns widened (rt_inputs.c widens stored ones) */
    NULL,                        /* (no exchange: nothing to check codes for) */
    NULL,                        /* a kernel not run: the driver frees its output (cpu_free) */
};
