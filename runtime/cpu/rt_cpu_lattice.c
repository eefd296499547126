/*
** runtime/cpu/rt_cpu_lattice.c: LATTICE_IMPROVE and LATTICE_UPDATE on the
** CPU (a recursive min or max).
**
** Owns: a lattice relation's per-key table (rf_cpu_best), made from its
** rows by the first lattice kernel that reads it and kept while only
** LATTICE_UPDATE writes it, so that a semi-naive round costs time in its
** candidates and delta, not in the relation: the improving candidates are
** probes, the update overwrites values in place and appends new keys.
*/
#include "rt_cpu_internal.h"

/* Points rel at the table's rows (after a store moved or added them). */
static rf_status rel_from_best(val *v)
{
    int32_t nc = v->rel.ncols;
    rf_cpu_col *cols = rf_calloc((size_t)nc + 1, sizeof *cols);
    if (!cols) return RF_ENOMEM;
    rf_cpu_table view;
    rf_cpu_best_view(v->best, cols, &view);
    if (!v->rel.cols && !(v->rel.cols = rf_calloc((size_t)nc + 1, sizeof *v->rel.cols))) {
        free(cols);
        return RF_ENOMEM;
    }
    v->rel.nrows = view.nrows;
    for (int32_t c = 0; c < nc; c++) v->rel.cols[c] = cols[c].data;
    free(cols);
    return RF_OK;
}

/* Gives variable var its per-key table, made from its rows (one per key). */
static rf_status ensure_best(exec *x, int32_t var, const rf_qp_agg *ag)
{
    val *v = &x->vals[var];
    if (v->best) return RF_OK;
    int32_t nc = v->rel.ncols;
    rf_cpu_kind *kinds = rf_calloc((size_t)nc + 1, sizeof *kinds);
    if (!kinds) return RF_ENOMEM;
    for (int32_t c = 0; c < nc; c++) kinds[c] = rf_rt_cpu_kind(v->rel.types[c]);
    rf_cpu_best *b = NULL;
    rf_status st = rf_cpu_best_new(nc, kinds, ag->fn == RF_AGG_MAX, &b);
    free(kinds);
    if (st) return st;
    rf_cpu_table t;
    memset(&t, 0, sizeof t);
    if ((st = rf_cx_view_of(&v->rel, &t)) || (st = rf_cpu_best_store(x->pool, b, &t))) {
        free(t.cols);
        rf_cpu_best_free(b);
        return st;
    }
    free(t.cols);
    rf_cx_val_clear(v); /* its rows are the table's now */
    v->best = b;
    return rel_from_best(v);
}

rf_status rf_cx_k_lattice(exec *x, const rf_hir_kernel *k)
{
    if (k->kind == RF_HIR_LATTICE_UPDATE) {
        rf_status st = ensure_best(x, k->out, &k->aggs[0]);
        if (st) return st;
        val *v = &x->vals[k->out];
        rf_cpu_set_free(v->probe); /* its rows change */
        v->probe = NULL;
        rf_cx_drop_kept(v);
        rf_cpu_table t;
        if ((st = rf_cx_view_of(&x->vals[k->in[1]].rel, &t))) return st;
        st = rf_cpu_best_store(x->pool, v->best, &t);
        free(t.cols);
        return st ? st : rel_from_best(v);
    }
    rf_status st = ensure_best(x, k->in[1], &k->aggs[0]);
    if (st) return st;
    const rf_rt_rel *in = &x->vals[k->in[0]].rel;
    rf_cpu_table t;
    if ((st = rf_cx_view_of(in, &t))) return st;
    int64_t *keep = NULL, n = 0;
    st = rf_cpu_best_improving(x->pool, x->vals[k->in[1]].best, &t, &keep, &n);
    free(t.cols);
    if (st) return st;
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    st = rf_cx_gather_rel(x, in, keep, n, x->p->vars[k->out]->types, &r);
    free(keep);
    if (st) return st;
    rf_cx_val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}
