/*
** runtime/gpu/rt_gpu_pool.c: the GPU memory pool.
**
** Owns a few big device allocations (arenas) and their sub-allocation: a
** best-fit free list per arena, kept sorted by offset so that freed ranges
** merge with their neighbours; buffers that outlive a run (rf_gpool_alloc_kept)
** are placed at the top instead, away from the run's values. Operators never call the driver to allocate:
** cuMemAlloc and cuMemFree synchronize the device and cost milliseconds for
** large sizes. The first arena is what the device suggests (on a real GPU
** most of its free memory, taken once; the gpu_pool_mb setting overrides), more
** arenas grow geometrically while the device has memory; a request that fits
** nowhere is RF_EDEVMEM with a message giving the sizes and, under a cap,
** what holds the bytes in use as its owner says (rf_gpool_on_describe); the
** runtime then runs the program on the CPU and says so.
**
** The cap (gdev.mem_cap, the gpu_memory setting, --gpu-memory): the arenas
** together (with gpu_pool_exact, the buffers together) never exceed it; the
** pool's one allocation for everything redfox keeps on the device (values,
** CUB's scratch, the dictionary, error words) makes it a cap on all of
** them. Before a request fails, the pool asks its owner to free room
** (rf_gpool_on_full: the executor moves a value no kernel is using to host
** memory, rt_gpu_spill.c) and tries again while the owner frees something.
**
** Across runs (an input cache, rt_gpu_cache.c): the pool outlives the run
** that made it and is handed to the next (rf_gpool_rebind), its arenas kept;
** a keeper (rf_gpool_keeper) names the buffers the cache owns, whose release
** by a run only ends that run's use of them (the cache frees them itself,
** rf_gpool_release_kept).
*/
#include "rt_gpu_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 256u
#define FIRST_ARENA (UINT64_C(1) << 30)
#define MAX_ARENAS 64

typedef struct frange {
    uint64_t off, len;
} frange;

typedef struct arena {
    gptr base;
    uint64_t size;
    frange *fr; /* free ranges, sorted by offset, never adjacent */
    int64_t nfr, capfr;
} arena;

struct gpool {
    gdev *g;
    arena ar[MAX_ARENAS];
    int nar;
    uint64_t reserved, in_use, peak;
    uint64_t cap; /* the most the arenas (exact: the buffers) may hold; 0: none */
    int (*on_full)(void *ctx); /* frees room: 1 when it freed something */
    void *on_full_ctx;
    /* says what holds the bytes in use, for the message of a request that fails */
    void (*describe)(void *ctx, uint64_t in_use, char *buf, size_t n);
    void *describe_ctx;
    int exact; /* gpu_pool_exact: one device allocation per buffer, so that
                  memory checkers see the bounds of each (debugging only) */
    int (*keeps)(void *ctx, gptr p); /* 1: p is the keeper's (not freed by a release) */
    void *keeps_ctx;
    const uint64_t *idle; /* the keeper's bytes no run holds: not in a run's peak */
};

/* What the running program holds: in use, less what the keeper keeps idle. */
static uint64_t held(const gpool *pl)
{
    uint64_t idle = pl->idle ? *pl->idle : 0;
    return idle < pl->in_use ? pl->in_use - idle : 0;
}

rf_status rf_gpool_new(gdev *g, gpool **out)
{
    gpool *pl = rf_calloc(1, sizeof *pl);
    if (!pl) return RF_ENOMEM;
    pl->g = g;
    pl->exact = g->pool_exact;
    pl->cap = g->mem_cap;
    *out = pl;
    return RF_OK;
}

void rf_gpool_free(gpool *pl)
{
    if (!pl) return;
    for (int i = 0; i < pl->nar; i++) {
        pl->g->ops->mem_free(pl->g, pl->ar[i].base);
        free(pl->ar[i].fr);
    }
    free(pl);
}

void rf_gpool_on_full(gpool *pl, int (*fn)(void *ctx), void *ctx)
{
    pl->on_full = fn;
    pl->on_full_ctx = ctx;
}

void rf_gpool_on_describe(gpool *pl, void (*fn)(void *ctx, uint64_t in_use, char *buf, size_t n), void *ctx)
{
    pl->describe = fn;
    pl->describe_ctx = ctx;
}

void rf_gpool_keeper(gpool *pl, int (*keeps)(void *ctx, gptr p), void *ctx, const uint64_t *idle)
{
    pl->keeps = keeps;
    pl->keeps_ctx = ctx;
    pl->idle = idle;
}

void rf_gpool_rebind(gpool *pl, gdev *g)
{
    pl->g = g;
    pl->on_full = NULL;
    pl->on_full_ctx = NULL;
    pl->describe = NULL;
    pl->describe_ctx = NULL;
    pl->peak = held(pl); /* the peak of the run that takes it */
}

uint64_t rf_gpool_reserved(const gpool *pl) { return pl->reserved; }
uint64_t rf_gpool_cap(const gpool *pl) { return pl->cap; }
int rf_gpool_exact(const gpool *pl) { return pl->exact; }

uint64_t rf_gpool_in_use(const gpool *pl) { return pl->in_use; }
uint64_t rf_gpool_peak(const gpool *pl) { return pl->peak; }

static int fr_insert(arena *a, int64_t at, uint64_t off, uint64_t len)
{
    if (a->nfr == a->capfr) {
        int64_t nc = a->capfr ? 2 * a->capfr : 64;
        frange *n = rf_realloc(a->fr, (size_t)nc * sizeof *n);
        if (!n) return -1;
        a->fr = n;
        a->capfr = nc;
    }
    memmove(&a->fr[at + 1], &a->fr[at], (size_t)(a->nfr - at) * sizeof *a->fr);
    a->fr[at].off = off;
    a->fr[at].len = len;
    a->nfr++;
    return 0;
}

static void fr_remove(arena *a, int64_t at)
{
    memmove(&a->fr[at], &a->fr[at + 1], (size_t)(a->nfr - at - 1) * sizeof *a->fr);
    a->nfr--;
}

uint64_t rf_gpool_first_bytes(const gdev *g)
{
    if (g->pool_exact) return 0;
    uint64_t size = g->pool_first ? g->pool_first : FIRST_ARENA;
    uint64_t cap = g->mem_free > (UINT64_C(512) << 20) ? g->mem_free - (UINT64_C(512) << 20) : 0;
    if (size > cap) size = cap;
    size = (size + ALIGN - 1) / ALIGN * ALIGN;
    if (g->mem_cap && size > g->mem_cap) size = g->mem_cap / ALIGN * ALIGN;
    return size;
}

static int add_arena(gpool *pl, uint64_t need)
{
    if (pl->nar == MAX_ARENAS) return -1;
    uint64_t size = pl->nar ? pl->ar[pl->nar - 1].size * 2 : pl->g->pool_first ? pl->g->pool_first : FIRST_ARENA;
    if (size < need) size = need;
    /* leave the driver, the module and CUB's launches some room */
    uint64_t cap = pl->g->mem_free > pl->reserved + (UINT64_C(512) << 20)
                       ? pl->g->mem_free - pl->reserved - (UINT64_C(512) << 20)
                       : 0;
    if (size > cap) size = cap;
    size = (size + ALIGN - 1) / ALIGN * ALIGN;
    /* (reserved <= cap; need is 256-aligned) */
    if (pl->cap && size > pl->cap - pl->reserved) size = (pl->cap - pl->reserved) / ALIGN * ALIGN;
    if (size < need) return -1;
    arena *a = &pl->ar[pl->nar];
    memset(a, 0, sizeof *a);
    /* the driver may refuse what it reported free (fragmentation, other
    ** processes): ask for less, down to what is needed */
    while (pl->g->ops->mem_alloc(pl->g, size, &a->base)) {
        if (size / 2 < need) return -1;
        size = (size / 2 + ALIGN - 1) / ALIGN * ALIGN;
    }
    a->size = size;
    if (fr_insert(a, 0, 0, size)) {
        pl->g->ops->mem_free(pl->g, a->base);
        return -1;
    }
    pl->reserved += size;
    pl->nar++;
    return 0;
}

/* Low: the best fit, from the start of its range (a run's values). High:
** the last range that fits, from its end (buffers that outlive the run: the
** input cache's columns and the dictionary). Kept apart this way, what a run
** frees merges into one span instead of lying between kept buffers, which
** under a tight --gpu-memory cap left no range big enough for a request
** that the cap had room for. */
static int try_alloc(gpool *pl, uint64_t n, int high, gptr *p)
{
    int best_a = -1;
    int64_t best_i = -1;
    uint64_t best_len = UINT64_MAX;
    for (int ai = 0; ai < pl->nar; ai++) {
        arena *a = &pl->ar[ai];
        for (int64_t i = 0; i < a->nfr; i++)
            if (a->fr[i].len >= n && (high || a->fr[i].len < best_len)) {
                best_len = a->fr[i].len;
                best_a = ai;
                best_i = i;
            }
    }
    if (best_a < 0) return -1;
    arena *a = &pl->ar[best_a];
    frange *f = &a->fr[best_i];
    if (high) {
        *p = a->base + f->off + f->len - n;
    } else {
        *p = a->base + f->off;
        f->off += n;
    }
    f->len -= n;
    if (f->len == 0) fr_remove(a, best_i);
    return 0;
}

static rf_status pool_alloc(gpool *pl, uint64_t bytes, int high, int quiet, gbuf *b)
{
    b->p = 0;
    b->n = 0;
    if (bytes == 0) return RF_OK;
    uint64_t n = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    if (n < bytes) n = UINT64_MAX; /* wrapped: fails below */
    gptr p;
    for (;;) {
        int got;
        if (pl->exact)
            got = n != UINT64_MAX && (!pl->cap || (n <= pl->cap && pl->in_use <= pl->cap - n)) &&
                  !pl->g->ops->mem_alloc(pl->g, pl->cap ? n : bytes, &p);
        else
            got = !try_alloc(pl, n, high, &p) || (n != UINT64_MAX && !add_arena(pl, n) && !try_alloc(pl, n, high, &p));
        if (got) break;
        if (n != UINT64_MAX && !quiet && pl->on_full && pl->on_full(pl->on_full_ctx)) continue;
        if (quiet) return RF_EDEVMEM;
        if (pl->cap && n == ALIGN && n > pl->cap)
            rf_error(pl->g->d, rf_mkloc(NULL, 0, 0),
                     "out of GPU memory: the cap (--gpu-memory) of %" PRIu64 " bytes is less than one allocation (%d "
                     "bytes), which does not split",
                     pl->cap, (int)ALIGN);
        else if (pl->cap) {
            /* (what holds the bytes in use: under a cap of a few KiB, what
            ** is not the kernel's may be most of them) */
            char holders[256] = "";
            if (pl->describe) pl->describe(pl->describe_ctx, pl->in_use, holders, sizeof holders);
            rf_error(pl->g->d, rf_mkloc(NULL, 0, 0),
                     "out of GPU memory: %" PRIu64 " bytes wanted, %" PRIu64
                     " bytes in use under the cap (--gpu-memory) of %" PRIu64 " bytes%s%s%s",
                     bytes, pl->in_use, pl->cap, holders[0] ? " (" : "", holders,
                     holders[0] ? ")" : ""); /* (in bytes: a small cap's KiB read 0) */
        }
        else
            rf_error(pl->g->d, rf_mkloc(NULL, 0, 0),
                     "out of GPU memory: %" PRIu64 " MiB wanted, %" PRIu64 " MiB in use of %" PRIu64
                     " MiB the device had free",
                     bytes >> 20, pl->in_use >> 20, pl->g->mem_free >> 20);
        return RF_EDEVMEM;
    }
    b->p = p;
    b->n = n;
    pl->in_use += n;
    if (held(pl) > pl->peak) pl->peak = held(pl);
    return RF_OK;
}

rf_status rf_gpool_alloc(gpool *pl, uint64_t bytes, gbuf *b) { return pool_alloc(pl, bytes, 0, 0, b); }
rf_status rf_gpool_alloc_kept(gpool *pl, uint64_t bytes, gbuf *b) { return pool_alloc(pl, bytes, 1, 0, b); }
rf_status rf_gpool_alloc_quiet(gpool *pl, uint64_t bytes, gbuf *b) { return pool_alloc(pl, bytes, 0, 1, b); }

void rf_gpool_release(gpool *pl, gbuf *b)
{
    if (!b->p) return;
    if (pl->keeps && pl->keeps(pl->keeps_ctx, b->p)) {
        b->p = 0; /* the keeper's: the caller's use of it ends */
        b->n = 0;
        return;
    }
    rf_gpool_release_kept(pl, b);
}

void rf_gpool_release_kept(gpool *pl, gbuf *b)
{
    if (!b->p) return;
    if (pl->exact) {
        pl->g->ops->mem_free(pl->g, b->p);
        pl->in_use -= b->n;
        b->p = 0;
        b->n = 0;
        return;
    }
    for (int ai = 0; ai < pl->nar; ai++) {
        arena *a = &pl->ar[ai];
        if (b->p < a->base || b->p >= a->base + a->size) continue;
        uint64_t off = b->p - a->base, len = b->n;
        int64_t lo = 0, hi = a->nfr;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (a->fr[mid].off < off)
                lo = mid + 1;
            else
                hi = mid;
        }
        /* lo: the first free range after the freed one */
        int prev = lo > 0 && a->fr[lo - 1].off + a->fr[lo - 1].len == off;
        int next = lo < a->nfr && off + len == a->fr[lo].off;
        if (prev && next) {
            a->fr[lo - 1].len += len + a->fr[lo].len;
            fr_remove(a, lo);
        } else if (prev) {
            a->fr[lo - 1].len += len;
        } else if (next) {
            a->fr[lo].off = off;
            a->fr[lo].len += len;
        } else if (fr_insert(a, lo, off, len)) {
            /* no memory for the bookkeeping: the range stays lost until the run ends */
        }
        break;
    }
    pl->in_use -= b->n;
    b->p = 0;
    b->n = 0;
}
