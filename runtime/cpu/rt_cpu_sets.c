/*
** runtime/cpu/rt_cpu_sets.c: UNIQUE, DIFFERENCE and INSERT on the CPU.
**
** Owns: a relation's hash set (rf_cpu_set, kept while the relation only
** grows, so that differences against it and insertions into it cost time
** in the other side only), distinct rows by first occurrence, and the
** functional-dependency check with its message.
*/
#include "rt_cpu_internal.h"

/* A functional predicate must not give two values for one key. */
static rf_status check_fd(exec *x, const rf_hir_kernel *k, const rf_rt_rel *r)
{
    const rf_hir_var *out = x->p->vars[k->out];
    int32_t nk = out->nkeys;
    /* nk 0: a function without key columns (p[] = v) holds at most one row */
    if (nk < 0 || nk >= r->ncols || r->nrows < 2) return RF_OK;
    rf_cpu_table v;
    rf_status st = rf_cx_view_of(r, &v);
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
    /* the rows of keys with two values, then the least such key and its
    ** two least values (rt_fd_clash.c: any order of the rows, any split
    ** of them over ranks names the same) */
    int64_t *size = rf_calloc((size_t)g.ngroups + 1, sizeof *size), *rows = rf_malloc((size_t)r->nrows * sizeof *rows);
    int64_t n = 0, first = -1, second = -1;
    st = size && rows ? RF_OK : RF_ENOMEM;
    for (int64_t i = 0; i < r->nrows && !st; i++) size[g.group_of_row[i]]++;
    for (int64_t i = 0; i < r->nrows && !st; i++)
        if (size[g.group_of_row[i]] > 1) rows[n++] = i;
    rf_cpu_groups_free(&g);
    free(size);
    if (!st) st = rf_rt_fd_least_clash(x->dict, r, nk, rows, n, &first, &second);
    free(rows);
    if (!st && first < 0) st = RF_EINTERNAL; /* (rows are distinct: a repeated key has two values) */
    if (st) return st;
    return rf_rt_fd_fail(x->dict, out->pred_name ? out->pred_name : out->name, r, nk, first, second, kloc(x, k), x->d,
                         x->fd_clash);
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
rf_status rf_cx_ensure_set(exec *x, int32_t var)
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
    if ((st = rf_cx_view_of(&v->rel, &t)) || (st = rf_cpu_set_insert(x->pool, set, &t, NULL, NULL))) {
        free(t.cols);
        rf_cpu_set_free(set);
        return st;
    }
    free(t.cols);
    rf_cpu_set_free(v->probe); /* its rows change from now on */
    v->probe = NULL;
    rf_cx_jsides_free(v);
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

rf_status rf_cx_k_insert(exec *x, const rf_hir_kernel *k)
{
    rf_status st = rf_cx_ensure_set(x, k->out);
    val *v = &x->vals[k->out];
    for (int32_t i = 1; i < k->nin && !st; i++) {
        rf_cpu_table t;
        if ((st = rf_cx_view_of(&x->vals[k->in[i]].rel, &t))) break;
        st = rf_cpu_set_insert(x->pool, v->set, &t, NULL, NULL);
        free(t.cols);
        if (!st) st = rel_from_set(v);
    }
    rf_cx_jsides_free(v); /* its rows changed */
    return st;
}

/* DIFFERENCE against a relation that has (or gets) a hash index. */
static rf_status difference_by_set(exec *x, const rf_cpu_table *a, int32_t bvar, int64_t **keep, int64_t *n)
{
    rf_status st = rf_cx_ensure_set(x, bvar);
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

rf_status rf_cx_k_unique(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *in = &x->vals[k->in[0]].rel;
    const rf_hir_var *out = x->p->vars[k->out];
    rf_cpu_table v;
    rf_status st = rf_cx_view_of(in, &v);
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
        st = rf_cx_take_or_copy(x, k, k->in[0], out->types, &r);
    } else {
        st = rf_cx_gather_rel(x, in, keep, n, out->types, &r);
    }
    free(keep);
    if (st) return st;
    if (k->check_fd && (st = check_fd(x, k, &r))) {
        rf_rt_rel_free(&r);
        return st;
    }
    rf_cx_val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}
