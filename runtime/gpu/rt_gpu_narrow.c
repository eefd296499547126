/*
** runtime/gpu/rt_gpu_narrow.c: narrow sets: a recursive relation's int
** columns stored in 32 bits on the GPU while every value fits.
**
** Owns: when a set narrows (its making, rt_gpu_group.c's ensure_set: every
** int value within 32 bits, checked on the GPU in the same pass that
** narrows), a column's width in a set, the keys of a set's own kernels
** (letter N, skeletons/cuda/rf_group.cuh), and widening: back to 64 bits
** for good when a new row brings a value outside 32 bits (set_flag checks
** the new rows, the word rides back with the scan's total) or when any
** kernel but the set's own (insert into it, difference against it) reads
** its columns, and before an output or a view goes to the host.
**
** Why: the transitive closure's `path` is most of its peak device memory
** and its ids fit in 32 bits nearly always; a set's kernels (set_build,
** set_insert, set_probe, set_append) read its columns through the key
** class, which loads a narrow value as the 64-bit int it stands for, so
** hashes and comparisons are those of the 64-bit columns and a widened set
** keeps its table (the same row numbers, the same hashes). Exactness: a
** value outside 32 bits never enters a narrow column; the set widens first.
*/
#include "rt_gpu_internal.h"

#include <stdlib.h>
#include <string.h>

int rf_gx_narrow_bit(const gval *v, int32_t c) { return c < 64 && ((v->narrow >> c) & 1); }

uint64_t rf_gx_set_width(const gx *x, int32_t var, int32_t c)
{
    return rf_gx_narrow_bit(&x->vals[var], c) ? 4 : (uint64_t)wid(x->p->vars[var]->types[c]);
}

void rf_gx_set_keys(gx *x, int32_t var, keycols *kc)
{
    const rf_hir_var *hv = x->p->vars[var];
    const gval *v = &x->vals[var];
    rf_gx_keys_of(v, hv->types, NULL, hv->ncols, kc);
    if (v->narrow) rf_gpu_sig_narrow(hv->types, hv->ncols, kc->sig);
}

/* Column c of n values through kernel name (col_narrow, col_widen) into a
** fresh buffer of room rows of w bytes. */
static rf_status convert(gx *x, const char *name, gptr src, int64_t n, int64_t room, uint64_t w, gptr status,
                         gbuf *out)
{
    rf_status st = galloc(x, (uint64_t)room * w, out);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.c0[0] = src;
    a.o[0] = out->p;
    RF_A_COL_STATUS(a) = status;
    if (!st && n > 0) st = rf_gx_launch(x, name, n, &a);
    return st;
}

rf_status rf_gx_narrow_try(gx *x, int32_t var)
{
    gval *v = &x->vals[var];
    const rf_hir_var *hv = x->p->vars[var];
    /* only a set an insert grows (the right side of a difference alone,
    ** a negated input say, is read whole elsewhere more often than not) */
    if (v->narrow || v->keep_wide || hv->ncols > 64 || !rf_gpu_grown_set(x->p, var)) return RF_OK;
    uint64_t mask = 0;
    for (int32_t c = 0; c < hv->ncols; c++)
        if (hv->types[c] == RF_TYPE_INT) mask |= UINT64_C(1) << c;
    if (!mask) return RF_OK;
    if (!v->cols && !(v->cols = rf_calloc((size_t)hv->ncols + 1, sizeof *v->cols))) return RF_ENOMEM;
    /* every int column narrowed into new room first, one word saying
    ** whether all fit (one wait); the 64-bit columns go only then */
    gbuf nb[64], word = {0, 0};
    memset(nb, 0, sizeof nb);
    int64_t n = v->nrows, room = n > v->cap ? n : v->cap;
    rf_status st = galloc(x, 8, &word);
    if (!st) st = x->g.ops->memset8(&x->g, word.p, 0, 8);
    for (int32_t c = 0; c < hv->ncols && !st; c++)
        if ((mask >> c) & 1) st = convert(x, "rf_col_narrow", colp(v, c), n, room, 4, word.p, &nb[c]);
    int64_t wide = 0;
    if (!st) st = get_i64(x, word.p, &wide);
    gfree(x, &word);
    for (int32_t c = 0; c < hv->ncols; c++) {
        if (!((mask >> c) & 1)) continue;
        if (st || wide) {
            gfree(x, &nb[c]);
        } else {
            gfree(x, &v->cols[c]);
            v->cols[c] = nb[c];
        }
    }
    if (!st && !wide) {
        v->narrow = mask;
        v->cap = room;
    }
    if (!st && wide) v->keep_wide = 1; /* values outside 32 bits: never narrow */
    return st;
}

/* A narrow set in host memory (moved out under the cap) widened there: a
** reader that runs in row ranges or key partitions takes it from host
** memory, where it may not fit on the device whole. */
static rf_status widen_held(gx *x, int32_t var, int for_reader)
{
    gval *v = &x->vals[var];
    const rf_hir_var *hv = x->p->vars[var];
    int64_t room = v->cap > v->nrows ? v->cap : v->nrows;
    /* (a value partly brought back: all of it in host memory first) */
    rf_status sst = rf_gx_spill_var(x, var);
    if (sst) return sst;
    if (for_reader) {
        /* (the table goes, as below; its host copy too) */
        rf_gx_set_free(x, &v->set);
        rf_status st = rf_gx_held_adopt(v, hv->ncols, hv->ncols + 4, NULL, 0);
        if (st) return st;
        v->keep_wide = 1;
    }
    for (int32_t c = 0; c < hv->ncols; c++) {
        if (!rf_gx_narrow_bit(v, c)) continue;
        const int32_t *h = rf_gx_held_col(v, c);
        uint64_t len = ((uint64_t)(room > 0 ? room : 1) * 8 + 255) / 256 * 256;
        int64_t *m = rf_calloc(1, (size_t)len);
        if (!m) return RF_ENOMEM;
        for (int64_t i = 0; h && i < v->nrows; i++) m[i] = h[i];
        rf_status st = h ? rf_gx_held_adopt(v, hv->ncols, c, m, len) : (free(m), RF_OK);
        if (st) return free(m), st;
        v->narrow &= ~(UINT64_C(1) << c);
    }
    return RF_OK;
}

rf_status rf_gx_widen(gx *x, int32_t var, int for_reader)
{
    gval *v = &x->vals[var];
    if (!v->narrow) return RF_OK;
    if (v->held) return widen_held(x, var, for_reader);
    rf_status st = RF_OK;
    /* a reader's widening is for good: the set's table goes first (fewer
    ** bytes held while a column is in both widths; the next insert makes it
    ** again), and the set stays wide, so that a loop whose body reads the
    ** set does not narrow and widen it every round */
    if (for_reader) {
        rf_gx_set_free(x, &v->set);
        v->keep_wide = 1;
    }
    const rf_hir_var *hv = x->p->vars[var];
    int64_t room = v->cap > v->nrows ? v->cap : v->nrows;
    int64_t ndiag = x->d->count, nerr = x->d->nerrors;
    for (int32_t c = 0; c < hv->ncols && !st; c++) {
        if (!rf_gx_narrow_bit(v, c)) continue;
        gbuf nb = {0, 0};
        st = convert(x, "rf_col_widen", colp(v, c), v->nrows, room, 8, 0, &nb);
        if (st) {
            gfree(x, &nb);
            break;
        }
        gfree(x, &v->cols[c]);
        v->cols[c] = nb;
        v->narrow &= ~(UINT64_C(1) << c);
    }
    if (st == RF_EDEVMEM) {
        /* no room for a column in both widths: widened in host memory
        ** (the columns widened so far are 64-bit already) */
        rf_gx_held_drop_diags(x, ndiag, nerr);
        st = widen_held(x, var, for_reader);
    }
    return st;
}

/* Whether kernel k reads the columns of its input var: a count of all rows
** (one group, count() alone) reads none. */
int rf_gx_reads_cols(const gx *x, const rf_hir_kernel *k, int32_t var)
{
    (void)x;
    if (k->kind == RF_HIR_GROUP && k->ngroup == 0) return 0;
    if (k->kind == RF_HIR_REDUCE && k->ngroup == 0) {
        int any = 0;
        for (int32_t i = 0; i < k->naggs; i++) any |= k->aggs[i].col >= 0;
        if (!any) return 0;
    }
    (void)var;
    return 1;
}

static rf_status widen_kernel(gx *x, const rf_hir_kernel *k)
{
    rf_status st = RF_OK;
    for (int32_t i = -1; i < k->nin && !st; i++) {
        int32_t var = i < 0 ? k->out : k->in[i];
        if (var < 0 || !x->vals[var].narrow) continue;
        /* the set's own kernels read it narrow: an insert into it, a
        ** difference against it */
        if (k->kind == RF_HIR_INSERT && var == k->out) continue;
        if (k->kind == RF_HIR_DIFFERENCE && i == 1 && var != k->in[0]) continue;
        if (i >= 0 && !rf_gx_reads_cols(x, k, var)) continue;
        st = rf_gx_widen(x, var, 1);
    }
    return st;
}

rf_status rf_gx_widen_for(gx *x, const rf_hir_kernel *k, const rf_gpu_funit *u)
{
    rf_status st = widen_kernel(x, k);
    if (u) {
        if (!st && u->src) st = widen_kernel(x, u->src);
        for (int32_t m = 0; m < u->n && !st; m++) st = widen_kernel(x, u->m[m].k);
        for (int32_t t = 0; t < u->ntot && !st; t++) {
            if (u->tot[t].group) st = widen_kernel(x, u->tot[t].group);
            if (!st && u->tot[t].reduce) st = widen_kernel(x, u->tot[t].reduce);
        }
    }
    return st;
}
