/*
** runtime/gpu/rt_gpu_dev.c: the executor's device primitives and values.
**
** Owns: launches (by kernel name, grid sized to the work), copies on the
** GPU, error words (and the deferred ones of fused write passes), scans,
** selects and sorts (CUB through the device), the device values of a run
** (relations, index vectors, groupings, a set's hash index: allocation,
** release, replacement) and the copies of values between host and device.
*/
#include "rt_gpu_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

rf_status rf_gx_launch_max(gx *x, const char *name, int64_t work, const rf_gpu_args *a, uint64_t max_grid)
{
    if (work <= 0) return RF_OK;
    void *fn;
    /* (a launch before the load's end: the program's kernels first) */
    rf_status st = x->mod_running ? rf_gx_module_wait(x) : RF_OK;
    if (!st) st = x->g.ops->func(&x->g, name, &fn);
    if (st) return st;
    uint64_t grid = ((uint64_t)work + TILE - 1) / TILE;
    if (grid > max_grid) grid = max_grid;
    if (grid < 1) grid = 1;
    return x->g.ops->launch(&x->g, fn, name, grid, a);
}

rf_status rf_gx_launch(gx *x, const char *name, int64_t work, const rf_gpu_args *a)
{
    return rf_gx_launch_max(x, name, work, a, x->g.max_grid);
}

rf_status rf_gx_hlaunch(gx *x, const char *sig, const char *op, int64_t work, const rf_gpu_args *a)
{
    char name[RF_GPU_MAXC + 64];
    snprintf(name, sizeof name, "rfh_%s_%s", sig, op);
    return rf_gx_launch(x, name, work, a);
}

/* A copy on the GPU. Up to 64 KiB it is a gather kernel in identity order:
** a launch costs 4-5 us on an H100, a copy by the driver 11-20 us (measured
** with 8 bytes, docs/BENCHMARKS.md, fifth session); beyond, the driver's. */
rf_status rf_gx_dcopy(gx *x, gptr dst, gptr src, uint64_t n)
{
    if (n == 0) return RF_OK;
    if (n > (UINT64_C(64) << 10)) return x->g.ops->d2d(&x->g, dst, src, n);
    uint64_t w = ((dst | src | n) & 7) == 0 ? 8 : ((dst | src | n) & 3) == 0 ? 4 : 1;
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = (int64_t)(n / w);
    RF_A_NCOLS(a) = 1;
    RF_A_WIDTH(a, 0) = w;
    a.c0[0] = src;
    a.o[0] = dst;
    return rf_gx_launch(x, "rf_gather", a.n, &a);
}

/* An error word set to "no failure". */
rf_status rf_gx_err_word(gx *x, gbuf *e)
{
    rf_status st = galloc(x, 8, e);
    if (!st) st = x->g.ops->memset8(&x->g, e->p, 0xff, 8);
    return st;
}

/* Reads the deferred error words back (one wait) and clears them. */
rf_status rf_gx_wcheck_flush(gx *x)
{
    if (!x->wcheck_used) return RF_OK;
    int64_t w[WCHECK_WORDS];
    rf_status st = x->g.ops->d2h(&x->g, w, x->wcheck.p, (uint64_t)x->wcheck_used * 8);
    for (int64_t i = 0; i < x->wcheck_used && !st; i++)
        if (w[i] != -1) {
            rf_internal_error(x->d, kloc(x, x->wcheck_of[i]),
                     "a fused kernel met a run-time error in its write pass only");
            st = RF_EINTERNAL;
        }
    if (!st) st = x->g.ops->memset8(&x->g, x->wcheck.p, 0xff, (uint64_t)x->wcheck_used * 8);
    x->wcheck_used = 0;
    return st;
}

/* Room for the deferred error words of fused kernel u's stages: *at. Under
** a memory cap the words take one allocation of the pool's least (32 words,
** 256 bytes), not WCHECK_WORDS: on a cap of a few KiB, 2 KiB of words that
** hold a handful of stages' errors left a kernel no room. */
rf_status rf_gx_wcheck_take(gx *x, const rf_gpu_funit *u, gptr *at)
{
    rf_status st = RF_OK;
    int64_t room = x->wcheck.p ? (int64_t)(x->wcheck.n / 8) : 0;
    if (room > WCHECK_WORDS) room = WCHECK_WORDS;
    if (x->wcheck.p && x->wcheck_used + u->n > room) st = rf_gx_wcheck_flush(x);
    if (!st && x->wcheck.p && u->n > room) gfree(x, &x->wcheck); /* (too few words for u's stages) */
    if (!st && !x->wcheck.p) {
        int64_t words = x->g.mem_cap ? 32 : WCHECK_WORDS;
        if (words < u->n) words = u->n;
        st = galloc(x, (uint64_t)words * 8, &x->wcheck);
        if (!st) st = x->g.ops->memset8(&x->g, x->wcheck.p, 0xff, x->wcheck.n);
    }
    if (st) return st;
    *at = x->wcheck.p + (uint64_t)x->wcheck_used * 8;
    for (int32_t m = 0; m < u->n; m++) x->wcheck_of[x->wcheck_used++] = u->m[m].k;
    return RF_OK;
}

int rf_gx_wcheck_drop(gx *x)
{
    if (!x->wcheck.p) return 0;
    /* (an error word set: the internal error is in the diagnostics, and
    ** the words go all the same) */
    (void)rf_gx_wcheck_flush(x);
    gfree(x, &x->wcheck);
    return 1;
}

/* pos[0..n] = exclusive scan of in[0..n), whose entry n is set to 0 here
** (in has n + 1 entries: bytes when wide is 0, 64-bit counts when 1), into
** pos allocated by the caller (n + nw entries): the nw words from pos[n] on
** come back into w (w[0]: the total, pos[n]) in one wait, so that a status
** word a kernel left after pos[n] costs no wait of its own (nw 0: no wait;
** the caller reads pos[n] later). */
rf_status rf_gx_scan_temp(gx *x, int wide, int64_t n, gbuf *t)
{
    rf_status (*scan)(gdev *, gptr, uint64_t *, gptr, gptr, int64_t) = wide ? x->g.ops->scan_i64 : x->g.ops->scan_u8;
    uint64_t tb = 0;
    rf_status st = scan(&x->g, 0, &tb, 0, 0, n + 1); /* (the size alone: nothing read) */
    if (!st) st = galloc(x, tb ? tb : 8, t);
    return st;
}

rf_status rf_gx_scan_into_temp(gx *x, int wide, gptr in, int64_t n, gptr pos, int64_t *w, int nw, const gbuf *temp)
{
    rf_status (*scan)(gdev *, gptr, uint64_t *, gptr, gptr, int64_t) = wide ? x->g.ops->scan_i64 : x->g.ops->scan_u8;
    uint64_t w1 = wide ? 8 : 1;
    rf_status st = x->g.ops->memset8(&x->g, in + (uint64_t)n * w1, 0, w1);
    uint64_t tb = 0;
    gbuf t = {0, 0};
    if (temp && temp->p) t = *temp;
    else if (!st) st = rf_gx_scan_temp(x, wide, n, &t);
    if (!st) st = scan(&x->g, 0, &tb, in, pos, n + 1);
    if (!st && tb > t.n) st = RF_EINTERNAL; /* (a temp sized for another scan) */
    if (!st) st = scan(&x->g, t.p, &tb, in, pos, n + 1);
    if (!temp || !temp->p) gfree(x, &t);
    if (!st && nw > 0) st = x->g.ops->d2h(&x->g, w, pos + (uint64_t)n * 8, (uint64_t)nw * 8);
    return st;
}

rf_status rf_gx_scan_into(gx *x, int wide, gptr in, int64_t n, gptr pos, int64_t *w, int nw)
{
    return rf_gx_scan_into_temp(x, wide, in, n, pos, w, nw, NULL);
}

/* scan_into a fresh *pos: *total = pos[n]. */
static rf_status scan_excl(gx *x, int wide, gptr in, int64_t n, gbuf *pos, int64_t *total)
{
    rf_status st = galloc(x, (uint64_t)(n + 1) * 8, pos);
    if (!st) st = rf_gx_scan_into(x, wide, in, n, pos->p, total, 1);
    return st;
}

/* Exclusive scans of byte flags and of 64-bit counts (see scan_excl). */
rf_status rf_gx_scan_flags(gx *x, gptr flags, int64_t n, gbuf *pos, int64_t *total)
{
    return scan_excl(x, 0, flags, n, pos, total);
}

rf_status rf_gx_scan_counts(gx *x, gptr counts, int64_t n, gbuf *pos, int64_t *total)
{
    return scan_excl(x, 1, counts, n, pos, total);
}

/* The i in [0, n) with flags[i] != 0, ascending, into a fresh *out; their
** count goes to the device word cnt, and the nw words from cnt on come back
** into w (w[0]: the count) in one wait, so that a status word a kernel left
** next to the count costs no wait of its own. */
static rf_status select_room(gx *x, gptr flags, int64_t n, int64_t room, gbuf *out, gptr cnt, int64_t *w, int nw)
{
    gbuf t = {0, 0};
    uint64_t tb = 0;
    /* (cnt 0: the count in the word after the room, one allocation less) */
    uint64_t words = (uint64_t)(room > 0 ? room : 1);
    rf_status st = galloc(x, (words + (cnt ? 0 : 1)) * 8, out);
    if (!st && !cnt) cnt = out->p + words * 8;
    if (!st) st = x->g.ops->select(&x->g, 0, &tb, flags, out->p, cnt, n);
    if (!st) st = galloc(x, tb ? tb : 8, &t);
    if (!st) st = x->g.ops->select(&x->g, t.p, &tb, flags, out->p, cnt, n);
    gfree(x, &t);
    if (!st) st = x->g.ops->d2h(&x->g, w, cnt, (uint64_t)nw * 8);
    if (st) gfree(x, out);
    return st;
}

rf_status rf_gx_select_into(gx *x, gptr flags, int64_t n, gbuf *out, gptr cnt, int64_t *w, int nw)
{
    return select_room(x, flags, n, n, out, cnt, w, nw);
}

/* The i in [0, n) with flags[i] != 0, ascending, into a fresh *out (*m of
** them), room for at most room of them (the caller knows no more are set). */
rf_status rf_gx_select_room(gx *x, gptr flags, int64_t n, int64_t room, gbuf *out, int64_t *m)
{
    /* (under a tight --gpu-memory cap, the count's own allocation of 256
    ** bytes was what a small unique lacked) */
    return select_room(x, flags, n, room < n ? room : n, out, 0, m, 1);
}

rf_status rf_gx_select_flags(gx *x, gptr flags, int64_t n, gbuf *out, int64_t *m)
{
    return rf_gx_select_room(x, flags, n, n, out, m);
}

/* Stable sort of (keys, vals) by key bits [0, bits): results in fresh buffers. */
rf_status rf_gx_sort_pairs(gx *x, gptr keys, gptr vals, int64_t n, int bits, gbuf *kout, gbuf *vout)
{
    uint64_t tb = 0;
    gbuf t = {0, 0};
    rf_status st = galloc(x, (uint64_t)n * 8, kout);
    if (!st) st = galloc(x, (uint64_t)n * 8, vout);
    if (!st) st = x->g.ops->sort_pairs(&x->g, 0, &tb, keys, kout->p, vals, vout->p, n, 0, bits);
    if (!st) st = galloc(x, tb ? tb : 8, &t);
    if (!st) st = x->g.ops->sort_pairs(&x->g, t.p, &tb, keys, kout->p, vals, vout->p, n, 0, bits);
    gfree(x, &t);
    return st;
}

rf_status rf_gx_iota(gx *x, int64_t n, gbuf *out)
{
    rf_status st = galloc(x, (uint64_t)n * 8, out);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    RF_A_IOTA_OUT(a) = out->p;
    if (!st) st = rf_gx_launch(x, "rf_iota", n, &a);
    return st;
}

/* ---- values ---------------------------------------------------------------- */

void rf_gx_set_free(gx *x, gset **s)
{
    if (!*s) return;
    gfree(x, &(*s)->tab);
    free(*s);
    *s = NULL;
}

void rf_gx_val_clear(gx *x, gval *v, int32_t ncols)
{
    if (v->cols) {
        for (int32_t c = 0; c < ncols; c++) gfree(x, &v->cols[c]);
        free(v->cols);
        v->cols = NULL;
    }
    gfree(x, &v->a);
    gfree(x, &v->b);
    gfree(x, &v->gid);
    gfree(x, &v->first);
    rf_gx_set_free(x, &v->set);
    rf_gx_jidx_free(x, v);
    rf_gx_held_free(v);
    rf_gx_recpart_free(x, v, ncols);
    v->nrows = v->cap = v->ngroups = 0;
    v->has_groups = 0;
    v->narrow = 0;
    v->keep_wide = 0;
}

void rf_gx_var_clear(gx *x, int32_t var) { rf_gx_val_clear(x, &x->vals[var], x->p->vars[var]->ncols); }

/* Replaces variable var's value by *v (which is emptied). */
void rf_gx_var_set(gx *x, int32_t var, gval *v)
{
    if (x->range_out && var == x->range_out_var) {
        rf_gx_val_clear(x, x->range_out, x->p->vars[var]->ncols);
        *x->range_out = *v;
        memset(v, 0, sizeof *v);
        return;
    }
    rf_gx_var_clear(x, var);
    x->vals[var] = *v;
    x->vals[var].used = x->epoch; /* made by the running kernel: in use (rt_gpu_spill.c) */
    memset(v, 0, sizeof *v);
}

/* Columns for rows rows (room for cap >= rows). */
rf_status rf_gx_rel_alloc(gx *x, gval *v, const rf_type *types, int32_t ncols, int64_t rows, int64_t cap)
{
    memset(v, 0, sizeof *v);
    v->nrows = rows;
    v->cap = cap;
    if (cap <= 0 || ncols == 0) return RF_OK;
    v->cols = rf_calloc((size_t)ncols, sizeof *v->cols);
    if (!v->cols) return RF_ENOMEM;
    for (int32_t c = 0; c < ncols; c++) {
        rf_status st = galloc(x, (uint64_t)cap * (uint64_t)wid(types[c]), &v->cols[c]);
        if (st) {
            rf_gx_val_clear(x, v, ncols);
            return st;
        }
    }
    return RF_OK;
}

/* out = rows idx[0..n) of in (all columns). */
rf_status rf_gx_rel_gather(gx *x, const gval *in, const rf_type *types, int32_t ncols, gptr idx, int64_t n,
                            gval *out)
{
    rf_status st = rf_gx_rel_alloc(x, out, types, ncols, n, n);
    if (st || n == 0 || ncols == 0) return st;
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.r0 = idx;
    int32_t m = 0;
    for (int32_t c = 0; c < ncols; c++) {
        if (!colp(in, c)) {
            gfree(x, &out->cols[c]); /* an input column no kernel reads stays absent */
            continue;
        }
        RF_A_WIDTH(a, m) = (uint64_t)wid(types[c]);
        a.c0[m] = colp(in, c);
        a.o[m++] = colp(out, c);
    }
    RF_A_NCOLS(a) = m;
    if (m == 0) return RF_OK;
    st = rf_gx_launch(x, "rf_gather", n, &a);
    if (st) rf_gx_val_clear(x, out, ncols);
    return st;
}

/* ---- host copies ------------------------------------------------------------ */

rf_status rf_gx_host_rel(gx *x, int32_t var, rf_rt_rel *r)
{
    const rf_hir_var *hv = x->p->vars[var];
    const gval *v = &x->vals[var];
    memset(r, 0, sizeof *r);
    rf_status st = rf_rt_rel_alloc(r, hv->ncols, hv->types, v->nrows);
    for (int32_t c = 0; c < hv->ncols && !st && v->nrows; c++) {
        uint64_t n = (uint64_t)v->nrows * (uint64_t)wid(hv->types[c]);
        /* an input column no kernel reads has no device copy: zeros, as
        ** the CPU's stand-in for it */
        if (!colp(v, c)) {
            memset(r->cols[c], 0, (size_t)v->nrows * (size_t)rf_rt_type_width(hv->types[c]));
        } else {
            st = x->g.ops->d2h(&x->g, r->cols[c], colp(v, c), n);
        }
    }
    if (st) rf_rt_rel_free(r);
    return st;
}

rf_status rf_gx_host_i64(gx *x, gptr src, int64_t n, int64_t **out)
{
    *out = rf_malloc((size_t)(n + 1) * 8);
    if (!*out) return RF_ENOMEM;
    rf_status st = n ? x->g.ops->d2h(&x->g, *out, src, (uint64_t)n * 8) : RF_OK;
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

rf_status rf_gx_upload_rel(gx *x, const rf_rt_rel *r, const rf_type *types, int32_t ncols, const uint8_t *read,
                           struct rf_rt_stored *const *stored, gval *out)
{
    memset(out, 0, sizeof *out);
    out->nrows = out->cap = r->nrows;
    if (r->nrows <= 0 || ncols == 0) return RF_OK;
    if (!(out->cols = rf_calloc((size_t)ncols, sizeof *out->cols))) return RF_ENOMEM;
    rf_status st = RF_OK;
    /* a column no kernel reads gets no device memory and no copy (its
    ** buffer stays empty: nothing launches with it) */
    for (int32_t c = 0; c < ncols && !st; c++)
        if (!read || read[c]) st = galloc(x, (uint64_t)r->nrows * (uint64_t)wid(types[c]), &out->cols[c]);
    for (int32_t c = 0; c < ncols && !st; c++)
        if (out->cols[c].p)
            st = stored && stored[c] ? rf_gx_h2d_stored(x, colp(out, c), stored[c])
                                     : x->g.ops->h2d(&x->g, colp(out, c), r->cols[c], (uint64_t)r->nrows * (uint64_t)wid(types[c]));
    if (st) rf_gx_val_clear(x, out, ncols);
    return st;
}
