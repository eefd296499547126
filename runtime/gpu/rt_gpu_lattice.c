/*
** runtime/gpu/rt_gpu_lattice.c: LATTICE_IMPROVE and LATTICE_UPDATE on the
** GPU executor (a recursive min or max).
**
** Owns: for now, a host path: the lattice relation's per-key table
** (rf_cpu_best, as on the CPU) is kept in host memory beside the device
** copy (gx.lattice, dropped whenever anything else writes the variable);
** the candidates come down, the improving ones go up, and the relation goes
** up after each update. The answers are the CPU's, row for row. A device
** skeleton (a per-key table with atomic min or max in device memory) is to
** replace it.
*/
#include "rt_gpu_internal.h"
#include "rf_rt_input.h"

#include <stdlib.h>
#include <string.h>

static rf_status host_table(gx *x, const rf_cpu_best *b, const rf_type *types, int32_t ncols, rf_rt_rel *r)
{
    rf_cpu_col *cols = rf_calloc((size_t)ncols + 1, sizeof *cols);
    if (!cols) return RF_ENOMEM;
    rf_cpu_table view;
    rf_cpu_best_view(b, cols, &view);
    (void)x;
    memset(r, 0, sizeof *r);
    r->ncols = ncols;
    r->types = types;
    r->nrows = view.nrows;
    r->cols = rf_calloc((size_t)ncols + 1, sizeof *r->cols);
    if (!r->cols) {
        free(cols);
        return RF_ENOMEM;
    }
    for (int32_t c = 0; c < ncols; c++) r->cols[c] = cols[c].data; /* borrowed: free r->cols only */
    free(cols);
    return RF_OK;
}

static rf_status view_rel(const rf_rt_rel *r, rf_cpu_table *t)
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

/* Variable var's per-key table in host memory, made from its rows. */
static rf_status ensure_table(gx *x, int32_t var, const rf_qp_agg *ag, rf_cpu_best **out)
{
    if (!x->lattice && !(x->lattice = rf_calloc((size_t)x->p->nvars + 1, sizeof *x->lattice))) return RF_ENOMEM;
    if (x->lattice[var]) {
        *out = x->lattice[var];
        return RF_OK;
    }
    const rf_hir_var *hv = x->p->vars[var];
    rf_cpu_kind *kinds = rf_calloc((size_t)hv->ncols + 1, sizeof *kinds);
    if (!kinds) return RF_ENOMEM;
    for (int32_t c = 0; c < hv->ncols; c++) kinds[c] = rf_rt_cpu_kind(hv->types[c]);
    rf_cpu_best *b = NULL;
    rf_status st = rf_cpu_best_new(hv->ncols, kinds, ag->fn == RF_AGG_MAX, &b);
    free(kinds);
    if (st) return st;
    rf_rt_rel r;
    rf_cpu_table t = {0, 0, NULL};
    if (!(st = rf_gx_host_rel(x, var, &r))) {
        if (!(st = view_rel(&r, &t))) st = rf_cpu_best_store(x->cpool, b, &t);
        free(t.cols);
        rf_rt_rel_free(&r);
    }
    if (st) {
        rf_cpu_best_free(b);
        return st;
    }
    x->lattice[var] = *out = b;
    return RF_OK;
}

void rf_gx_lattice_drop(gx *x, int32_t var)
{
    if (!x->lattice || !x->lattice[var]) return;
    rf_cpu_best_free(x->lattice[var]);
    x->lattice[var] = NULL;
}

rf_status rf_gx_k_lattice(gx *x, const rf_hir_kernel *k)
{
    x->on_host = 1;
    const rf_hir_var *ov = x->p->vars[k->out];
    rf_cpu_best *b = NULL;
    rf_status st = ensure_table(x, k->kind == RF_HIR_LATTICE_UPDATE ? k->out : k->in[1], &k->aggs[0], &b);
    if (st) return st;
    rf_rt_rel in, r;
    rf_cpu_table t = {0, 0, NULL};
    memset(&r, 0, sizeof r);
    if ((st = rf_gx_host_rel(x, k->in[k->kind == RF_HIR_LATTICE_UPDATE ? 1 : 0], &in))) return st;
    if ((st = view_rel(&in, &t))) {
        rf_rt_rel_free(&in);
        return st;
    }
    gval v;
    memset(&v, 0, sizeof v);
    if (k->kind == RF_HIR_LATTICE_UPDATE) {
        x->lattice[k->out] = NULL; /* kept through the write below */
        if (!(st = rf_cpu_best_store(x->cpool, b, &t)) && !(st = host_table(x, b, ov->types, ov->ncols, &r))) {
            st = rf_gx_upload_rel(x, &r, ov->types, ov->ncols, NULL, &v);
            free(r.cols);
        }
        if (!st) rf_gx_var_set(x, k->out, &v);
        if (st) rf_cpu_best_free(b);
        else x->lattice[k->out] = b;
    } else {
        int64_t *keep = NULL, n = 0;
        if (!(st = rf_cpu_best_improving(x->cpool, b, &t, &keep, &n))) {
            if (!(st = rf_rt_rel_alloc(&r, ov->ncols, ov->types, n))) {
                for (int32_t c = 0; c < ov->ncols; c++) {
                    int w = wid(ov->types[c]);
                    for (int64_t i = 0; i < n; i++)
                        memcpy((char *)r.cols[c] + i * w, (const char *)in.cols[c] + keep[i] * w, (size_t)w);
                }
                if (!(st = rf_gx_upload_rel(x, &r, ov->types, ov->ncols, NULL, &v))) rf_gx_var_set(x, k->out, &v);
                rf_rt_rel_free(&r);
            }
        }
        free(keep);
    }
    free(t.cols);
    rf_rt_rel_free(&in);
    return st;
}
