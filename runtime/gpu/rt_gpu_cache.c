/*
** runtime/gpu/rt_gpu_cache.c: the device part of an input cache: what the
** GPU keeps across the runs that share an rf_rt_cache (`tpch run`, `tpch
** bench`, libredfox's databases with keep_inputs, `redfox exec`).
**
** Owns (gcache, in the cache's device slot, rt_device.h's rf_rt_devcache):
** the memory pool itself, which outlives the run that made it and is
** handed to the next (its arenas are not allocated again); the input columns
** copied to the device, each under the stamp the driver gives the host
** column (rt_inputs.c: a number that names the same bytes for the cache's
** life), so that a later run reading the same column of the same input gets
** the device buffer with no copy; and the dictionary's device copy between
** runs (a run syncs only the strings interned since, rt_gpu_str.c).
**
** A run reads cached columns and never writes them: each variable owns its
** buffers, and the kernels that write in place (an insert growing its set)
** write past the rows a value holds only where its room (gval.cap) allows,
** which for an input is its row count. A cached buffer may still move to
** another value (a unique or copy taking its input's columns, its last
** reader): the pool's keeper (rf_gpool_keeper) turns every release of a
** cached buffer into the end of a run's use of it (a count per column), so
** the buffer stays the cache's until the cache evicts or frees it.
**
** Memory: cached columns and the dictionary's copy are the pool's like any
** value, under the same --gpu-memory cap. When the pool is full, before a
** run's own values move to host memory (rt_gpu_spill.c's on_full), a cached
** column that no value of the running program uses leaves the device, the
** least recently used first; then the dictionary's copy, if no kernel of
** this run has asked for it. A run never fails because of the cache.
**
** Freed when the input cache is (the slot's release), before the host columns;
** a process that ends without freeing (process_exits) leaves it to the
** system with the rest of the device.
*/
#include "rt_gpu_internal.h"

#include <stdlib.h>
#include <string.h>

/* One input column on the device. */
typedef struct gcent {
    uint64_t stamp; /* the host column's (rt_inputs.c) */
    uint64_t bytes; /* its rows' bytes (the buffer is at least this) */
    gbuf buf;
    uint64_t used;  /* the cache's clock when a run last took it (least recently used leaves first) */
    int32_t refs;   /* values of the running program that hold the buffer */
} gcent;

struct gcache {
    gpool *pool;      /* NULL until a run makes it; then kept */
    gdev keep;        /* the device's own operations: the pool freed outside a run */
    uint64_t mem_cap; /* the pool's cap and mode: a run with others starts a new pool */
    int exact, emulated;
    gcent *e;
    int32_t n, cap;
    uint64_t clock;
    uint64_t bytes;   /* the columns' buffers, together */
    uint64_t idle;    /* of them and the dictionary's copy, what no value of the running program holds */
    rf_rt_dict *dict; /* the dictionary dd copies (the cache's) */
    gdict dd;         /* its device copy between runs (during a run it is the run's gstr.dd) */
    int in_run;       /* a run holds the pool */
};

/* ---- the keeper -------------------------------------------------------------- */

static gcent *find_buf(gcache *c, gptr p)
{
    for (int32_t i = 0; i < c->n; i++)
        if (c->e[i].buf.p == p) return &c->e[i];
    return NULL;
}

/* A run released a buffer: the cache's stays, that use of it ends. */
static int keeps(void *ctx, gptr p)
{
    gcache *c = ctx;
    gcent *e = find_buf(c, p);
    if (!e) return 0;
    if (e->refs > 0 && --e->refs == 0) c->idle += e->buf.n;
    return 1;
}

static void drop_entry(gcache *c, int32_t i)
{
    c->bytes -= c->e[i].buf.n;
    if (!c->e[i].refs) c->idle -= c->e[i].buf.n;
    rf_gpool_release_kept(c->pool, &c->e[i].buf);
    c->e[i] = c->e[--c->n];
}

/* Everything the cache holds on the device, and the pool. */
static void drop_all(gcache *c)
{
    if (!c->pool) return;
    while (c->n) drop_entry(c, c->n - 1);
    rf_gpool_release_kept(c->pool, &c->dd.off);
    rf_gpool_release_kept(c->pool, &c->dd.bytes);
    memset(&c->dd, 0, sizeof c->dd);
    c->idle = 0;
    rf_gpool_rebind(c->pool, &c->keep);
    rf_gpool_free(c->pool);
    c->pool = NULL;
}

static void release(void *part)
{
    gcache *c = part;
    if (!c) return;
    /* (on the real device: the context current on this thread) */
    if (c->pool && !c->emulated) rf_gpu_cuda_bind_thread();
    drop_all(c);
    free(c->e);
    free(c);
}

/* The copy kept under stamp, freed (rf_rt_cache_drop_stamp: its host
** relation is gone); outside a run. */
static void drop_stamp(void *part, uint64_t stamp)
{
    gcache *c = part;
    if (!c || !c->pool || c->in_run) return;
    for (int32_t i = 0; i < c->n; i++)
        if (c->e[i].stamp == stamp) {
            if (!c->emulated) rf_gpu_cuda_bind_thread();
            drop_entry(c, i);
            return;
        }
}

/* ---- a run ------------------------------------------------------------------- */

rf_status rf_gx_cache_open(gx *x, rf_rt_devcache *slot)
{
    gcache *c = slot->part;
    if (!c) {
        if (!(c = rf_calloc(1, sizeof *c))) return RF_ENOMEM;
        slot->part = c;
        slot->release = release;
        slot->drop = drop_stamp;
    }
    if (c->in_run) return RF_EINTERNAL; /* (not for concurrent runs: rf_runtime.h) */
    int emulated = rf_gpu_emulated();
    /* a pool made under another cap or mode (or device) starts afresh */
    if (c->pool && (c->mem_cap != x->g.mem_cap || c->exact != x->g.pool_exact || c->emulated != emulated)) drop_all(c);
    c->keep = x->g;
    c->keep.ops = x->g.inner ? x->g.inner : x->g.ops;
    c->keep.inner = NULL;
    c->keep.impl = NULL;
    c->keep.d = NULL;
    memset(&c->keep.acct, 0, sizeof c->keep.acct);
    if (!c->pool) {
        rf_status st = rf_gpool_new(&x->g, &c->pool);
        if (st) return st;
        c->mem_cap = x->g.mem_cap;
        c->exact = x->g.pool_exact;
        c->emulated = emulated;
        rf_gpool_keeper(c->pool, keeps, c, &c->idle);
    } else {
        /* the arenas are the pool's own: free to it, though the device
        ** counts them as taken (the emulator's free memory is a number) */
        if (!emulated) x->g.mem_free += rf_gpool_reserved(c->pool);
    }
    x->pool = c->pool;
    x->gc = c;
    c->in_run = 1;
    for (int32_t i = 0; i < c->n; i++) c->e[i].refs = 0;
    /* the dictionary's copy: the run's from now on, if it is this dictionary's */
    if (c->dict != x->dict) {
        rf_gpool_release_kept(c->pool, &c->dd.off);
        rf_gpool_release_kept(c->pool, &c->dd.bytes);
        memset(&c->dd, 0, sizeof c->dd);
    }
    x->str.dd = c->dd;
    memset(&c->dd, 0, sizeof c->dd);
    /* (the copy counts in the run's peak once a kernel asks for it) */
    x->str.idle = &c->idle;
    x->str.idle_dd = x->str.dd.off.n + x->str.dd.bytes.n;
    c->idle = c->bytes + x->str.idle_dd;
    rf_gpool_rebind(c->pool, &x->g);
    return RF_OK;
}

void rf_gx_cache_close(gx *x)
{
    gcache *c = x->gc;
    if (!c) return;
    c->dd = x->str.dd;
    c->dict = x->dict;
    memset(&x->str.dd, 0, sizeof x->str.dd);
    x->str.idle = NULL;
    for (int32_t i = 0; i < c->n; i++) c->e[i].refs = 0;
    c->idle = c->bytes + c->dd.off.n + c->dd.bytes.n;
    rf_gpool_rebind(c->pool, &c->keep);
    c->in_run = 0;
    x->pool = NULL; /* the cache's */
    x->str.pool = NULL;
    x->gc = NULL;
}

/* Column bytes of host column col under stamp: the cached buffer (no copy),
** else a new one copied and kept. */
static rf_status column(gx *x, uint64_t stamp, const void *col, struct rf_rt_stored *stored, uint64_t bytes,
                        gbuf *out)
{
    gcache *c = x->gc;
    for (int32_t i = 0; i < c->n; i++) {
        gcent *e = &c->e[i];
        if (e->stamp != stamp) continue;
        /* the same stamp on more rows: the rows it named, then new ones
        ** (rf_rt_cache_put_stamped): only the new ones are copied, into the
        ** buffer's room, else into a larger buffer (half again, for the
        ** next growth) after the old rows copied on the device. A buffer
        ** that a value of this run holds is not moved: the column is then
        ** copied whole into a buffer of the run's own */
        if (e->bytes < bytes) {
            uint64_t have = e->bytes;
            if (e->buf.n < bytes) {
                if (e->refs) {
                    rf_status st = galloc(x, bytes, out);
                    if (!st) st = x->g.ops->h2d(&x->g, out->p, col, bytes);
                    return st;
                }
                gbuf nb = {0, 0};
                rf_status st = rf_gpool_alloc_kept(x->pool, bytes + bytes / 2, &nb);
                if (!st) st = rf_gx_dcopy(x, nb.p, e->buf.p, have);
                if (st) {
                    if (nb.p) rf_gpool_release_kept(x->pool, &nb);
                    return st;
                }
                c->bytes += nb.n - e->buf.n;
                c->idle += nb.n - e->buf.n;
                rf_gpool_release_kept(x->pool, &e->buf);
                e->buf = nb;
            }
            rf_status st = x->g.ops->h2d(&x->g, e->buf.p + have, (const char *)col + have, bytes - have);
            if (st) return st;
            e->bytes = bytes;
            x->gc_grown++;
            x->gc_miss_bytes += bytes - have;
        } else {
            x->gc_hits++;
            x->gc_hit_bytes += bytes;
        }
        /* (on fewer rows: their prefix) */
        if (e->refs++ == 0) c->idle -= e->buf.n;
        e->used = ++c->clock;
        *out = e->buf;
        return RF_OK;
    }
    if (c->n == c->cap) {
        int32_t nc = c->cap ? c->cap * 2 : 32;
        gcent *ne = rf_realloc(c->e, (size_t)nc * sizeof *ne);
        if (!ne) return RF_ENOMEM;
        c->e = ne;
        c->cap = nc;
    }
    gbuf b = {0, 0};
    rf_status st = rf_gpool_alloc_kept(x->pool, bytes, &b);
    /* (a column held as stored is kept widened: what the run's kernels read) */
    if (!st) st = stored ? rf_gx_h2d_stored(x, b.p, stored) : x->g.ops->h2d(&x->g, b.p, col, bytes);
    if (st) {
        gfree(x, &b);
        return st;
    }
    c->e[c->n++] = (gcent){stamp, bytes, b, ++c->clock, 1};
    c->bytes += b.n;
    x->gc_misses++;
    x->gc_miss_bytes += bytes;
    *out = b;
    return RF_OK;
}

rf_status rf_gx_cache_upload_rel(gx *x, const rf_rt_rel *r, const rf_type *types, int32_t ncols, const uint8_t *read,
                                 const uint64_t *stamps, struct rf_rt_stored *const *stored, gval *out)
{
    memset(out, 0, sizeof *out);
    out->nrows = out->cap = r->nrows; /* no room past the rows: no one writes into them */
    if (r->nrows <= 0 || ncols == 0) return RF_OK;
    if (!(out->cols = rf_calloc((size_t)ncols, sizeof *out->cols))) return RF_ENOMEM;
    rf_status st = RF_OK;
    for (int32_t c = 0; c < ncols && !st; c++) {
        if (read && !read[c]) continue; /* (no kernel reads it: no memory, no copy) */
        uint64_t bytes = (uint64_t)r->nrows * (uint64_t)wid(types[c]);
        struct rf_rt_stored *sc = stored ? stored[c] : NULL;
        if (stamps[c]) {
            st = column(x, stamps[c], r->cols[c], sc, bytes, &out->cols[c]);
        } else {
            st = galloc(x, bytes, &out->cols[c]);
            if (!st) st = sc ? rf_gx_h2d_stored(x, out->cols[c].p, sc) : x->g.ops->h2d(&x->g, out->cols[c].p, r->cols[c], bytes);
        }
    }
    if (st) rf_gx_val_clear(x, out, ncols);
    return st;
}

int rf_gx_cache_evict(gx *x)
{
    gcache *c = x->gc;
    if (!c) return 0;
    int32_t best = -1;
    for (int32_t i = 0; i < c->n; i++)
        if (!c->e[i].refs && (best < 0 || c->e[i].used < c->e[best].used)) best = i;
    if (best >= 0) {
        x->gc_evicted++;
        x->gc_evicted_bytes += c->e[best].buf.n;
        drop_entry(c, best);
        return 1;
    }
    /* the dictionary's copy, kept from earlier runs, that no kernel of this
    ** run has read (a later one copies it again) */
    if (!x->str.synced && (x->str.dd.off.p || x->str.dd.bytes.p)) {
        x->gc_evicted_bytes += x->str.dd.off.n + x->str.dd.bytes.n;
        if (x->str.idle) *x->str.idle -= x->str.idle_dd;
        x->str.idle = NULL;
        x->str.idle_dd = 0;
        rf_gpu_dict_free(&x->str);
        return 1;
    }
    return 0;
}

void rf_gx_cache_report(gx *x, rf_rt_result *res)
{
    res->gpu_cache_hits = x->gc_hits;
    res->gpu_cache_hit_bytes = x->gc_hit_bytes;
    res->gpu_cache_misses = x->gc_misses;
    res->gpu_cache_grown = x->gc_grown;
    res->gpu_cache_miss_bytes = x->gc_miss_bytes;
    res->gpu_cache_evictions = x->gc_evicted;
    res->gpu_cache_evicted_bytes = x->gc_evicted_bytes;
    res->gpu_dict_bytes = x->str.copied;
    res->gpu_dict_codes = x->str.dd.n;
    if (!x->gc) return;
    res->gpu_cache = 1;
    res->gpu_cache_columns = x->gc->n;
    res->gpu_cache_bytes = x->gc->bytes;
}
