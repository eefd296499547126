/*
** runtime/gpu/rt_gpu_lftj.c: the LFTJ kernel on the GPU.
**
** Owns: the host side of the leapfrog triejoin (skeletons/cuda/rf_lftj.cuh):
** the plan decoded as the CPU decodes it (rf_rt_lftj.h), the argument block,
** the count pass (one thread per driver row: a new (x, y) prefix is a work
** item), the exclusive scan of the counts for the output offsets, and the
** write pass. The sorted inputs (the tries) were made on the device by the
** SORT and GATHER_MAP kernels before it. Where a memory cap (or a full GPU)
** leaves no room for every item's counts and rows at once, the items run in
** ranges (2, 4, 8, ... of them), each range's rows moved to host memory and
** put together in item order: the rows of the whole kernel, in its order.
*/
#include "rt_gpu_internal.h"
#include "rf_rt_lftj.h"

#include <string.h>

/* The rows of items [lo, hi) (rows of the driver input), as a new relation
** *r on the device. */
static rf_status items(gx *x, const rf_hir_var *ov, const rf_gpu_args *args, int64_t lo, int64_t hi, gval *r)
{
    rf_gpu_args a = *args;
    int64_t n = hi - lo, total = 0;
    gbuf cnt = {0, 0}, pos = {0, 0};
    memset(r, 0, sizeof *r);
    a.n = n;
    a.x[5] = lo;
    rf_status st = RF_OK;
    if (n > 0) {
        /* (n + 1 words: the scan sets word n to 0 and reads it) */
        st = galloc(x, (uint64_t)(n + 1) * 8, &cnt);
        a.p[0] = cnt.p;
        if (!st) st = rf_gx_launch(x, "rf_lftj_count", n, &a);
        if (!st) st = rf_gx_scan_counts(x, cnt.p, n, &pos, &total);
    }
    gfree(x, &cnt); /* (the scan has them: room for the rows) */
    if (!st) st = rf_gx_rel_alloc(x, r, ov->types, ov->ncols, total, total);
    if (!st && total > 0) {
        for (int32_t v = 0; v < ov->ncols; v++) a.o[v] = colp(r, v);
        a.p[0] = pos.p;
        a.m = total;
        st = rf_gx_launch(x, "rf_lftj_write", n, &a);
    }
    gfree(x, &pos);
    if (st) rf_gx_val_clear(x, r, ov->ncols);
    return st;
}

/* The n items in ranges, more of them while one does not fit; the ranges'
** rows gathered in host memory in item order become k's output there. */
static rf_status in_ranges(gx *x, const rf_hir_kernel *k, const rf_hir_var *ov, const rf_gpu_args *a, int64_t n)
{
    int64_t ndiag = x->d->count, nerr = x->d->nerrors;
    for (int64_t parts = 2;; parts *= 2) {
        if (parts > n) parts = n;
        gacc acc;
        memset(&acc, 0, sizeof acc);
        acc.col = rf_calloc((size_t)ov->ncols + 1, sizeof *acc.col);
        acc.cap = rf_calloc((size_t)ov->ncols + 1, sizeof *acc.cap);
        acc.has = rf_calloc((size_t)ov->ncols + 1, 1);
        rf_status st = acc.col && acc.cap && acc.has ? RF_OK : RF_ENOMEM;
        for (int64_t i = 0; i < parts && !st; i++) {
            int64_t lo = n / parts * i + (i < n % parts ? i : n % parts);
            int64_t hi = lo + n / parts + (i < n % parts);
            gval r;
            st = items(x, ov, a, lo, hi, &r);
            if (!st) st = rf_gx_acc_take(x, &acc, ov, 0, 0, 0, &r);
            rf_gx_val_clear(x, &r, ov->ncols);
        }
        if (!st) st = rf_gx_acc_to_value(x, &acc, k->out, 0);
        rf_gx_acc_free(&acc, ov->ncols);
        if (!st) {
            x->parted++;
            x->parts += parts;
            return RF_OK;
        }
        if (st != RF_EDEVMEM) return st;
        if (parts >= n) {
            /* one item (a driver row) with the whole tries does not fit */
            rf_gx_unfit(x, 1, RF_GX_UNIT_ROW);
            return rf_gx_unfit_error(x, ndiag, nerr);
        }
        rf_gx_held_drop_diags(x, ndiag, nerr); /* (smaller ranges next) */
    }
}

rf_status rf_gx_lftj_unfit(gx *x, const rf_hir_kernel *k, int64_t ndiag, int64_t nerr)
{
    rf_gx_held_drop_diags(x, ndiag, nerr);
    uint64_t bytes = 0;
    for (int32_t i = 0; i < k->nin; i++) {
        int seen = 0; /* (an input read in two roles counts once) */
        for (int32_t e = 0; e < i; e++) seen |= k->in[e] == k->in[i];
        if (seen) continue;
        const rf_hir_var *iv = x->p->vars[k->in[i]];
        for (int32_t c = 0; c < iv->ncols; c++)
            bytes += (uint64_t)x->vals[k->in[i]].nrows * (uint64_t)wid(iv->types[c]);
    }
    char cap[96];
    rf_gx_cap_text(x, cap, sizeof cap);
    rf_error(x->d, rf_mkloc(NULL, 0, 0),
             "out of GPU memory: the input of a leapfrog triejoin, its sorted relations read whole (%llu bytes), which "
             "does not split, does not fit %s",
             (unsigned long long)bytes, cap);
    return RF_EDEVMEM;
}

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
    int64_t n = empty ? 0 : x->vals[k->in[j.driver]].nrows, ndiag = x->d->count, nerr = x->d->nerrors;
    gval r;
    st = items(x, ov, &a, 0, n, &r);
    if (st == RF_EDEVMEM && n > 1) {
        rf_gx_held_drop_diags(x, ndiag, nerr);
        return in_ranges(x, k, ov, &a, n);
    }
    if (st) return st;
    rf_gx_var_set(x, k->out, &r);
    return RF_OK;
}
