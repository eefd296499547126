/*
** runtime/gpu/rt_gpu_lftj.c: the LFTJ kernel on the GPU.
**
** Owns: the host side of the leapfrog triejoin (skeletons/cuda/rf_lftj.cuh):
** the plan decoded as the CPU decodes it (rf_rt_lftj.h), the argument block,
** the count pass (one thread per driver row: a new (x, y) prefix is a work
** item), the exclusive scan of the counts for the output offsets, and the
** write pass. The sorted inputs (the tries) were made on the device by the
** SORT and GATHER_MAP kernels before it.
*/
#include "rt_gpu_internal.h"
#include "rf_rt_lftj.h"

#include <string.h>

rf_status rf_gx_k_lftj(gx *x, const rf_hir_kernel *k)
{
    const rf_hir_var *ov = x->p->vars[k->out];
    rf_rt_lftj j;
    rf_status st = rf_rt_lftj_plan(ov->ncols, k->nin, k->lkeys, k->rkeys, k->nkeys, k->filter, &j);
    if (st || k->nkeys > RF_ARGS_MAXC || ov->ncols > RF_ARGS_MAXC) {
        rf_internal_error(x->d, kloc(x, k), "a malformed leapfrog triejoin (kernel k%d)", (int)k->id);
        return RF_EINTERNAL;
    }
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    int empty = 0;
    for (int32_t i = 0; i < k->nin; i++) {
        const gval *in = &x->vals[k->in[i]];
        empty |= in->nrows == 0;
        a.k[i] = (uint64_t)in->nrows;
        a.k[8 + i] = j.mask[i];
        a.k[16 + i] = (uint64_t)j.coloff[i];
        for (int32_t c = 0; c < j.ncols[i]; c++) a.c0[j.coloff[i] + c] = colp(in, c);
    }
    for (int32_t b = 0; b < j.nbounds; b++) {
        const rf_rt_lftj_bound *d = &j.bounds[b];
        a.k[24 + 2 * b] = (uint64_t)d->v | (uint64_t)d->op << 8 | (uint64_t)(d->x + 1) << 16;
        a.k[25 + 2 * b] = (uint64_t)d->c;
    }
    a.x[0] = j.nvars;
    a.x[1] = j.nin;
    a.x[2] = j.driver;
    a.x[3] = j.fixed;
    a.x[4] = j.nbounds;
    int64_t n = empty ? 0 : x->vals[k->in[j.driver]].nrows, total = 0;
    gbuf cnt = {0, 0}, pos = {0, 0};
    a.n = n;
    if (n > 0) {
        st = galloc(x, (uint64_t)n * 8, &cnt);
        a.p[0] = cnt.p;
        if (!st) st = rf_gx_launch(x, "rf_lftj_count", n, &a);
        if (!st) st = rf_gx_scan_counts(x, cnt.p, n, &pos, &total);
    }
    gval r;
    if (!st) st = rf_gx_rel_alloc(x, &r, ov->types, ov->ncols, total, total);
    if (!st && total > 0) {
        for (int32_t v = 0; v < ov->ncols; v++) a.o[v] = colp(&r, v);
        a.p[0] = pos.p;
        a.m = total;
        st = rf_gx_launch(x, "rf_lftj_write", n, &a);
        if (st) rf_gx_val_clear(x, &r, ov->ncols);
    }
    gfree(x, &cnt);
    gfree(x, &pos);
    if (st) return st;
    rf_gx_var_set(x, k->out, &r);
    return RF_OK;
}
