/*
** runtime/gpu/rt_gpu_spill.c: values in host memory while a GPU memory cap
** (the gpu_memory setting, --gpu-memory) leaves no room for a kernel's work.
**
** Owns: which device values leave the GPU when the pool is full and how
** they come back. When a request of the pool (rt_gpu_pool.c) fails, the
** pool asks here for room: the value that the longest-ago kernel used (of
** equal ones, the biggest) and that the running kernel does not use is
** copied to host memory, buffer by buffer, and its device memory released;
** the pool tries again. Before a kernel runs (rf_gx_hold_kernel) its values,
** and those of the other stages of its fused kernel, are marked in use
** (gval.used = gx.epoch) and any of them in host memory come back, each
** buffer at the same size (a hash set's table holds row numbers, not
** addresses, so it is valid where it lands). A kernel whose own values do
** not fit under the cap still fails with RF_EDEVMEM (the driver then runs
** the program on the CPU and says so).
**
** A value's rows, groups and flags stay on the gval while its buffers are
** away: the driver's row counts and the fixpoint's tests never bring it
** back. `--profile` counts the values moved out and the bytes each way
** (they are part of the run's bytes to the device and to the host).
**
** Also what holds the pool's bytes when a request fails under a cap, for
** its message (describe): the kernel's values and work, other holders.
*/
#include "rt_gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A value's buffers in host memory: slot i as slot() numbers them. */
typedef struct gheld {
    int32_t nslots;
    void **host;
    uint64_t *len;     /* 0: the slot was empty */
    uint8_t *owner;    /* who frees the host buffer (HELD_*) */
} gheld;

/* A held buffer's owner: malloc'd here; an input cache's column (read in
** place, never freed here); a column taken from an input's host relation
** (rf_rt_col_free). */
enum { HELD_MALLOC, HELD_BORROWED, HELD_RTCOL };

static void host_free(gheld *h, int32_t i)
{
    if (h->owner[i] == HELD_MALLOC) free(h->host[i]);
    else if (h->owner[i] == HELD_RTCOL) rf_rt_col_free(h->host[i]);
    h->host[i] = NULL;
    h->owner[i] = HELD_MALLOC;
}

enum { EXTRA_SLOTS = 5 }; /* a, b, gid, first, the set's table */

/* A value's buffer i: its columns, then a, b, gid, first and the set's table. */
static gbuf *slot(gval *v, int32_t i, int32_t ncols)
{
    if (i < ncols) return v->cols ? &v->cols[i] : NULL;
    switch (i - ncols) {
    case 0: return &v->a;
    case 1: return &v->b;
    case 2: return &v->gid;
    case 3: return &v->first;
    default: return v->set ? &v->set->tab : NULL;
    }
}

static int32_t ncols_of(const gx *x, int32_t var) { return x->p->vars[var]->ncols; }

static uint64_t resident_bytes(gval *v, int32_t ncols)
{
    uint64_t n = 0;
    for (int32_t i = 0; i < ncols + EXTRA_SLOTS; i++) {
        gbuf *b = slot(v, i, ncols);
        if (b && b->p) n += b->n;
    }
    return n;
}

void rf_gx_held_free(gval *v)
{
    gheld *h = v->held;
    if (!h) return;
    for (int32_t i = 0; i < h->nslots; i++) host_free(h, i);
    free(h->host);
    free(h->len);
    free(h->owner);
    free(h);
    v->held = NULL;
}

/* Variable var's device buffers copied to host memory and released. */
rf_status rf_gx_spill_var(gx *x, int32_t var)
{
    gval *v = &x->vals[var];
    int32_t ncols = ncols_of(x, var), ns = ncols + EXTRA_SLOTS;
    rf_status jst = rf_gx_recpart_join(x, var); /* (a set in partitions: whole, in host memory) */
    if (jst) return jst;
    if (v->jidx && !v->jidx->busy) rf_gx_jidx_free(x, v); /* (a kept join build: made again when needed) */
    gheld *h = v->held;
    if (!h) {
        if (!(h = rf_calloc(1, sizeof *h))) return RF_ENOMEM;
        h->nslots = ns;
        h->host = rf_calloc((size_t)ns, sizeof *h->host);
        h->len = rf_calloc((size_t)ns, sizeof *h->len);
        h->owner = rf_calloc((size_t)ns, 1);
        v->held = h;
        if (!h->host || !h->len || !h->owner) return rf_gx_held_free(v), RF_ENOMEM;
    }
    int moved = 0;
    for (int32_t i = 0; i < ns; i++) {
        gbuf *b = slot(v, i, ncols);
        if (!b || !b->p) continue;
        moved = 1;
        void *m = malloc((size_t)b->n);
        if (!m) return RF_ENOMEM;
        rf_status st = x->g.ops->d2h(&x->g, m, b->p, b->n);
        if (st) return free(m), st;
        host_free(h, i); /* (none: a slot on the device has no host copy) */
        h->host[i] = m;
        h->len[i] = b->n;
        x->spill_out += b->n;
        gfree(x, b);
    }
    x->spills += moved;
    return RF_OK;
}

/* The pool is full: one value that no running kernel uses leaves the GPU. */
static int on_full(void *ctx)
{
    gx *x = ctx;
    /* the fused write passes' error words first: read back at once, a
    ** new buffer at the next fused kernel */
    if (rf_gx_wcheck_drop(x)) return 1;
    /* kept join builds next: they are made again at their next use */
    if (rf_gx_jidx_drop_one(x)) return 1;
    /* then what an input cache keeps that this run does not use (rt_gpu_cache.c) */
    if (rf_gx_cache_evict(x)) return 1;
    /* then partitions of a recursive set kept on the device: their host copies are whole */
    if (rf_gx_recpart_drop_one(x)) return 1;
    int32_t best = -1;
    uint64_t best_used = 0, best_bytes = 0;
    for (int32_t var = 0; var < x->p->nvars; var++) {
        gval *v = &x->vals[var];
        if (v->used == x->epoch && x->epoch) continue;
        uint64_t n = resident_bytes(v, ncols_of(x, var));
        if (!n) continue;
        if (best < 0 || v->used < best_used || (v->used == best_used && n > best_bytes)) {
            best = var;
            best_used = v->used;
            best_bytes = n;
        }
    }
    if (best < 0) return 0;
    /* (a failed copy leaves what it could not move on the device: the
    ** request then fails as it would have) */
    rf_status st = rf_gx_spill_var(x, best);
    return !st;
}

rf_status rf_gx_compact(gx *x)
{
    rf_status st = RF_OK;
    for (int32_t var = 0; var < x->p->nvars && !st; var++)
        if (resident_bytes(&x->vals[var], ncols_of(x, var))) st = rf_gx_spill_var(x, var);
    return st;
}

/* The bytes in use when a request fails, by holder, for the pool's message
** ("the kernel's values V, its work W, the strings' copy S, ..."): the
** kernel's own values (marked in use: they do not move while it runs),
** values no kernel holds that did not move (a failed copy), kept join
** builds, the strings' copy (one piece: kernels read any row's string),
** the fused kernels' error words; the rest is the kernel's work (its
** temporary buffers, a range's or a partition's copy, scratch; also an
** input cache's columns no value holds, though on_full evicts those before
** a request fails, and a recursive set's partitions kept on the device). */
static void describe(void *ctx, uint64_t in_use, char *buf, size_t n)
{
    gx *x = ctx;
    uint64_t mine = 0, others = 0, builds = 0;
    for (int32_t var = 0; var < x->p->nvars; var++) {
        gval *v = &x->vals[var];
        uint64_t r = resident_bytes(v, ncols_of(x, var));
        if (v->used == x->epoch && x->epoch) mine += r;
        else others += r;
        if (v->jidx) builds += v->jidx->t.hs.n + v->jidx->t.js.n + v->jidx->t.start.n;
    }
    uint64_t str = x->str.dd.off.n + x->str.dd.bytes.n, words = x->wcheck.n;
    uint64_t known = mine + others + builds + str + words, work = in_use > known ? in_use - known : 0;
    int at = snprintf(buf, n, "the kernel's values %llu, its work %llu", (unsigned long long)mine,
                      (unsigned long long)work);
    const char *name[4] = {"other values", "kept join builds", "the strings' copy", "error words"};
    uint64_t bytes[4] = {others, builds, str, words};
    for (int i = 0; i < 4 && at > 0 && (size_t)at < n; i++)
        if (bytes[i]) at += snprintf(buf + at, n - (size_t)at, ", %s %llu", name[i], (unsigned long long)bytes[i]);
    /* the strings' copy alone in use (kernels read any code's bytes: it
    ** never moves): it is the part that leaves no room, and does not split */
    if (str && str == in_use && at > 0 && (size_t)at < n) snprintf(buf + at, n - (size_t)at, ", which does not split");
}

void rf_gx_spill_init(gx *x)
{
    rf_gpool_on_full(x->pool, on_full, x);
    rf_gpool_on_describe(x->pool, describe, x);
}

const void *rf_gx_held_col(const gval *v, int32_t c)
{
    return v->held && c < v->held->nslots ? v->held->host[c] : NULL;
}

uint64_t rf_gx_held_len(const gval *v, int32_t c)
{
    return v->held && c < v->held->nslots && v->held->host[c] ? v->held->len[c] : 0;
}

rf_status rf_gx_held_adopt(gval *v, int32_t ncols, int32_t c, void *host, uint64_t len)
{
    gheld *h = v->held;
    if (!h) {
        if (!(h = rf_calloc(1, sizeof *h))) return RF_ENOMEM;
        h->nslots = ncols + EXTRA_SLOTS;
        h->host = rf_calloc((size_t)h->nslots, sizeof *h->host);
        h->len = rf_calloc((size_t)h->nslots, sizeof *h->len);
        h->owner = rf_calloc((size_t)h->nslots, 1);
        v->held = h;
        if (!h->host || !h->len || !h->owner) return rf_gx_held_free(v), RF_ENOMEM;
    }
    host_free(h, c);
    h->host[c] = host;
    h->len[c] = len;
    return RF_OK;
}

/* Variable var (marked in use) back on the device. */
rf_status rf_gx_unspill_var(gx *x, int32_t var)
{
    gval *v = &x->vals[var];
    /* a set in partitions (rt_gpu_recpart.c) comes back whole */
    rf_status jst = rf_gx_recpart_join(x, var);
    if (jst) return jst;
    gheld *h = v->held;
    if (!h) return RF_OK;
    int32_t ncols = ncols_of(x, var);
    for (int32_t i = 0; i < h->nslots; i++) {
        if (!h->host[i]) continue;
        gbuf *b = slot(v, i, ncols);
        if (!b) return RF_EINTERNAL;
        rf_status st = galloc(x, h->len[i], b);
        if (!st) st = x->g.ops->h2d(&x->g, b->p, h->host[i], h->len[i]);
        if (st) return st;
        x->spill_in += h->len[i];
        host_free(h, i);
    }
    rf_gx_held_free(v);
    return RF_OK;
}

void rf_gx_held_drop_diags(gx *x, int64_t count, int64_t nerrors) { rf_diags_truncate(x->d, count, nerrors); }

static void mark(gx *x, int32_t var)
{
    if (var >= 0 && var < x->p->nvars) x->vals[var].used = x->epoch;
}

static rf_status bring_back(gx *x, const rf_hir_kernel *k)
{
    rf_status st = RF_OK;
    /* (a count of all rows needs its input's row count alone: a value too
    ** big for the device, a recursive set in partitions, stays where it is) */
    for (int32_t i = 0; i < k->nin && !st; i++)
        if (k->in[i] >= 0 && (k->in[i] == k->out || rf_gx_reads_cols(x, k, k->in[i])))
            st = rf_gx_unspill_var(x, k->in[i]);
    if (!st && k->idx >= 0) st = rf_gx_unspill_var(x, k->idx);
    if (!st && k->out >= 0) st = rf_gx_unspill_var(x, k->out);
    return st;
}

static void mark_kernel(gx *x, const rf_hir_kernel *k)
{
    for (int32_t i = 0; i < k->nin; i++) mark(x, k->in[i]);
    mark(x, k->idx);
    mark(x, k->out);
}

rf_status rf_gx_hold_kernel(gx *x, const rf_hir_kernel *k, const rf_gpu_funit *u)
{
    x->epoch++;
    /* every value of the fused kernel first, so that none of them leaves
    ** while another comes back */
    mark_kernel(x, k);
    if (u) {
        if (u->src) mark_kernel(x, u->src);
        for (int32_t m = 0; m < u->n; m++) mark_kernel(x, u->m[m].k);
        for (int32_t t = 0; t < u->ntot; t++) {
            if (u->tot[t].group) mark_kernel(x, u->tot[t].group);
            if (u->tot[t].reduce) mark_kernel(x, u->tot[t].reduce);
        }
    }
    rf_status st = bring_back(x, k);
    if (u) {
        if (!st && u->src) st = bring_back(x, u->src);
        for (int32_t m = 0; m < u->n && !st; m++) st = bring_back(x, u->m[m].k);
        for (int32_t t = 0; t < u->ntot && !st; t++) {
            if (u->tot[t].group) st = bring_back(x, u->tot[t].group);
            if (!st && u->tot[t].reduce) st = bring_back(x, u->tot[t].reduce);
        }
    }
    return st;
}

rf_status rf_gx_hold_var(gx *x, int32_t var)
{
    x->epoch++;
    mark(x, var);
    return rf_gx_unspill_var(x, var);
}

rf_status rf_gx_held_rel(gx *x, rf_rt_rel *r, const rf_type *types, int32_t ncols, const uint8_t *read, int borrowed,
                         gval *out)
{
    memset(out, 0, sizeof *out);
    out->nrows = out->cap = r->nrows;
    rf_status st = (out->cols = rf_calloc((size_t)ncols + 1, sizeof *out->cols)) ? RF_OK : RF_ENOMEM;
    for (int32_t c = 0; c < ncols && !st && r->nrows > 0; c++) {
        if ((read && !read[c]) || !r->cols[c]) continue;
        /* r's column itself, no copy: an input cache's (read in place), or
        ** taken from r (freed with the value); its bytes exactly */
        uint64_t bytes = (uint64_t)r->nrows * (uint64_t)wid(types[c]);
        st = rf_gx_held_adopt(out, ncols, c, r->cols[c], bytes);
        if (st) break;
        out->held->owner[c] = borrowed ? HELD_BORROWED : HELD_RTCOL;
        if (!borrowed) r->cols[c] = NULL;
    }
    if (st) rf_gx_val_clear(x, out, ncols);
    return st;
}
