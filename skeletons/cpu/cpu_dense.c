/*
** skeletons/cpu/cpu_dense.c: dense key indexes, the hash table's stand-in
** for one-word keys from a small range.
**
** Owns: building a bitmap of the keys present with a rank per 64-bit word
** (and a group id per rank), and probing it. Join keys are mostly integer
** ids drawn from a range not much larger than the table (order, part,
** supplier keys): then a bit per possible key is smaller than a hash table
** slot per key, a probe is a bit test and a popcount instead of a hash and
** a search, and probe rows that arrive in key order (a data file written
** in key order, and everything that keeps its order) walk the bitmap
** forward instead of hashing to random slots.
**
** Results are those of cpu_ht_build (ids: groups numbered by first
** occurrence) and of its probes; nothing depends on the thread count.
*/
#include "cpu_internal.h"

enum {
    BLK = 256,                 /* rows encoded at a time */
    DENSE_BITS_PER_ROW = 64,   /* a bitmap of at most this many bits per built row */
    DENSE_SLACK = 1 << 21,     /* ... plus this many (a 256 KiB bitmap stays in cache) */
    DENSE_PROBE_MAX = 1 << 24  /* bits at most for a small table probed by many rows */
};

/* The largest word-0 value e can produce: each column's field at its top. */
static uint64_t max_key(const cpu_enc *e)
{
    uint64_t m = 0;
    for (int32_t c = 0; c < e->nk; c++) {
        const cpu_kcol *k = &e->k[c];
        if (k->word != 0 || k->bits == 0) continue;
        m |= ((k->hi - k->lo) + k->add) << k->shift;
    }
    return m;
}

int cpu_dense_fits(const cpu_enc *e, int64_t n, int64_t nprobe)
{
    if (e->nw != 1 || e->lead || n <= 0 || n >= (int64_t)UINT32_MAX) return 0;
    if (e->wbits[0] > 40) return 0;
    uint64_t nbits = max_key(e) + 1;
    /* or a bitmap of up to 2 MiB when the probe side has 8 rows per bit or
    ** more: clearing it costs less than hashing them */
    return nbits <= (uint64_t)n * DENSE_BITS_PER_ROW + DENSE_SLACK ||
           (nbits <= DENSE_PROBE_MAX && nbits <= (uint64_t)nprobe * 8);
}

void cpu_dense_free(cpu_dense *d)
{
    free(d->bits);
    free(d->base);
    free(d->gid);
    memset(d, 0, sizeof *d);
}

/* The rank of key k among the keys present (k is present). */
static inline int64_t dense_rank(const cpu_dense *d, uint64_t k)
{
    uint64_t w = d->bits[k >> 6], below = w & ((UINT64_C(1) << (k & 63)) - 1);
    return (int64_t)d->base[k >> 6] + __builtin_popcountll(below);
}

typedef struct dbuild_ctx {
    cpu_dense *d;
    const cpu_enc *e;
    const void *const *data;
    int64_t *gid_of_row;
    atomic_int dup;
} dbuild_ctx;

/* Sets the bits of rows [b, e); two rows with one key set dup. */
static void dense_set(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    dbuild_ctx *c = vp;
    uint64_t buf[BLK];
    int dup = 0;
    for (int64_t x = b; x < e; x += BLK) {
        int64_t m = e - x < BLK ? e - x : BLK;
        cpu_encode(c->e, c->data, NULL, x, x + m, 0, buf, NULL);
        for (int64_t i = 0; i < m; i++) {
            uint64_t bit = UINT64_C(1) << (buf[i] & 63);
            uint64_t old = __atomic_fetch_or(&c->d->bits[buf[i] >> 6], bit, __ATOMIC_RELAXED);
            dup |= (old & bit) != 0;
        }
    }
    if (dup) atomic_store(&c->dup, 1);
}

/* Distinct keys: row r is group r; gid[rank] = r. */
static void dense_ids(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    dbuild_ctx *c = vp;
    uint64_t buf[BLK];
    for (int64_t x = b; x < e; x += BLK) {
        int64_t m = e - x < BLK ? e - x : BLK;
        cpu_encode(c->e, c->data, NULL, x, x + m, 0, buf, NULL);
        for (int64_t i = 0; i < m; i++) {
            c->d->gid[dense_rank(c->d, buf[i])] = x + i;
            if (c->gid_of_row) c->gid_of_row[x + i] = x + i;
        }
    }
}

rf_status cpu_dense_build(rf_cpu_pool *pool, cpu_dense *d, const cpu_enc *e, const void *const *data, int64_t n,
                          int64_t **gid_of_row, int64_t **first_row, int64_t *ngroups)
{
    memset(d, 0, sizeof *d);
    if (gid_of_row) *gid_of_row = NULL;
    *first_row = NULL;
    *ngroups = 0;
    uint64_t nbits = max_key(e) + 1;
    int64_t nwords = (int64_t)((nbits + 63) >> 6);
    d->nbits = (int64_t)nbits;
    d->bits = cpu_zalloc(nwords, sizeof(uint64_t));
    d->base = cpu_alloc(nwords, sizeof(uint32_t));
    int64_t *F = NULL, *gr = gid_of_row ? cpu_alloc(n, sizeof(int64_t)) : NULL;
    if (!d->bits || !d->base || (gid_of_row && !gr)) goto oom;
    dbuild_ctx c = {d, e, data, gr, 0};
    atomic_init(&c.dup, 0);
    int64_t grain = cpu_grain(n, 16384);
    rf_cpu_parallel_for(pool, n, grain, dense_set, &c);
    int64_t tot = 0;
    for (int64_t i = 0; i < nwords; i++) {
        d->base[i] = (uint32_t)tot;
        tot += __builtin_popcountll(d->bits[i]);
    }
    d->ndistinct = tot;
    d->gid = cpu_alloc(tot, sizeof(int64_t));
    F = cpu_alloc(tot, sizeof(int64_t));
    if (!d->gid || !F) goto oom;
    if (!atomic_load(&c.dup)) {
        rf_cpu_parallel_for(pool, n, grain, dense_ids, &c);
        for (int64_t i = 0; i < n; i++) F[i] = i;
    } else {
        /* repeated keys: groups numbered by first occurrence, in row order */
        for (int64_t i = 0; i < tot; i++) d->gid[i] = -1;
        uint64_t buf[BLK];
        int64_t G = 0;
        for (int64_t x = 0; x < n; x += BLK) {
            int64_t m = n - x < BLK ? n - x : BLK;
            cpu_encode(e, data, NULL, x, x + m, 0, buf, NULL);
            for (int64_t i = 0; i < m; i++) {
                int64_t *g = &d->gid[dense_rank(d, buf[i])];
                if (*g < 0) {
                    *g = G;
                    F[G++] = x + i;
                }
                if (gr) gr[x + i] = *g;
            }
        }
    }
    if (gid_of_row) *gid_of_row = gr;
    *first_row = F;
    *ngroups = tot;
    return RF_OK;
oom:
    free(gr);
    free(F);
    cpu_dense_free(d);
    return RF_ENOMEM;
}

typedef struct dprobe_ctx {
    const cpu_dense *d;
    const cpu_enc *e;
    const void *const *data;
    int64_t grain;
    int64_t *gid;
    uint8_t *found;
    int64_t *hit_row, *hit_gid, *nhit;
} dprobe_ctx;

static void dense_probe_chunk(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    dprobe_ctx *c = vp;
    const cpu_dense *d = c->d;
    uint64_t buf[BLK];
    uint8_t ok[BLK];
    int64_t nh = 0;
    int64_t *hr = c->hit_row ? c->hit_row + b : NULL, *hg = c->hit_gid ? c->hit_gid + b : NULL;
    for (int64_t x = b; x < e; x += BLK) {
        int64_t m = e - x < BLK ? e - x : BLK;
        memset(ok, 1, (size_t)m);
        cpu_encode(c->e, c->data, NULL, x, x + m, 0, buf, ok);
        for (int64_t i = 0; i < m; i++) {
            uint64_t k = buf[i];
            /* a row outside the ranges encodes to garbage: test ok first */
            int hit = ok[i] && k < (uint64_t)d->nbits && ((d->bits[k >> 6] >> (k & 63)) & 1);
            if (hr) {
                if (hit) {
                    hr[nh] = x + i;
                    hg[nh++] = d->gid[dense_rank(d, k)];
                }
                continue;
            }
            if (c->gid) c->gid[x + i] = hit ? d->gid[dense_rank(d, k)] : -1;
            if (c->found) c->found[x + i] = (uint8_t)hit;
        }
    }
    if (c->nhit) c->nhit[b / c->grain] = nh;
}

void cpu_dense_probe(rf_cpu_pool *pool, const cpu_dense *d, const cpu_enc *e, const void *const *data, int64_t n,
                     int64_t *gid, uint8_t *found)
{
    if (n <= 0) return;
    dprobe_ctx c = {d, e, data, cpu_grain(n, 4096), gid, found, NULL, NULL, NULL};
    rf_cpu_parallel_for(pool, n, c.grain, dense_probe_chunk, &c);
}

void cpu_dense_probe_hits(rf_cpu_pool *pool, const cpu_dense *d, const cpu_enc *e, const void *const *data,
                          int64_t n, int64_t grain, int64_t *hit_row, int64_t *hit_gid, int64_t *nhit)
{
    if (n <= 0) return;
    dprobe_ctx c = {d, e, data, grain, NULL, NULL, hit_row, hit_gid, nhit};
    rf_cpu_parallel_for(pool, n, grain, dense_probe_chunk, &c);
}

/* ---- unique over a dense key range ---------------------------------- */

typedef struct duniq_ctx {
    const cpu_enc *e;
    const void *const *data;
    int64_t n, nwords, nparts;
    uint64_t *keys; /* [n] encoded */
    uint64_t *bits;
    uint8_t *isnew;
} duniq_ctx;

static void duniq_encode(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    duniq_ctx *c = vp;
    for (int64_t x = b; x < e; x += BLK) {
        int64_t m = e - x < BLK ? e - x : BLK;
        cpu_encode(c->e, c->data, NULL, x, x + m, 0, c->keys + x, NULL);
    }
}

/* Part p owns the keys of bitmap words [p * nwords / nparts, ...): it walks
** every row in order and marks the first row of each of its keys, so the
** first occurrences are exact whatever the number of parts. */
static void duniq_part(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    duniq_ctx *c = vp;
    for (int64_t p = b; p < e; p++) {
        uint64_t lo = (uint64_t)(p * c->nwords / c->nparts) << 6, hi = (uint64_t)((p + 1) * c->nwords / c->nparts) << 6;
        for (int64_t i = 0; i < c->n; i++) {
            uint64_t k = c->keys[i];
            if (k < lo || k >= hi) continue;
            uint64_t *wd = &c->bits[k >> 6], bit = UINT64_C(1) << (k & 63);
            if (!(*wd & bit)) {
                *wd |= bit;
                c->isnew[i] = 1;
            }
        }
    }
}

rf_status cpu_dense_unique(rf_cpu_pool *pool, const cpu_enc *e, const void *const *data, int64_t n, int64_t **keep,
                           int64_t *nkeep)
{
    *keep = NULL;
    *nkeep = 0;
    duniq_ctx c = {e, data, n, (int64_t)((max_key(e) + 1 + 63) >> 6), 0, NULL, NULL, NULL};
    c.nparts = rf_cpu_pool_threads(pool);
    if (c.nparts > c.nwords) c.nparts = c.nwords;
    c.keys = cpu_alloc(n, sizeof(uint64_t));
    c.bits = cpu_zalloc(c.nwords, sizeof(uint64_t));
    c.isnew = cpu_zalloc(n, 1);
    rf_status st = RF_ENOMEM;
    if (c.keys && c.bits && c.isnew) {
        rf_cpu_parallel_for(pool, n, cpu_grain(n, 16384), duniq_encode, &c);
        rf_cpu_parallel_for(pool, c.nparts, 1, duniq_part, &c);
        st = cpu_compact_flags(pool, c.isnew, 1, n, keep, nkeep);
    }
    free(c.keys);
    free(c.bits);
    free(c.isnew);
    return st;
}

/* ---- group-by over a small key range -------------------------------- */

enum { DGROUP_MAX_BITS = 1 << 16 };

int cpu_dense_group_fits(const cpu_enc *e, int64_t n)
{
    /* a key of 64 bits (a span near 2^64 over its columns) would make the
    ** bitmap's size, max_key + 1, wrap to 0: its key has more bits than
    ** DGROUP_MAX_BITS allows anyway */
    if (e->nw != 1 || e->lead || n <= 0 || e->wbits[0] > 32) return 0;
    uint64_t nbits = max_key(e) + 1;
    return nbits <= DGROUP_MAX_BITS && nbits <= (uint64_t)n * 4;
}

typedef struct dgroup_ctx {
    const cpu_enc *e;
    const void *const *data;
    int64_t n, grain, nbits;
    uint64_t *keys;    /* [n] encoded */
    int64_t *stamp;    /* per worker [nbits]: chunk + 1 that last saw the key */
    int64_t *lfirst;   /* chunk ch's new keys' first rows at [ch * grain ...] */
    int64_t *lcount;   /* per chunk */
    const int64_t *gmap; /* pass 2: key -> group */
    int64_t *gid;
} dgroup_ctx;

/* Pass 1: each chunk's keys, encoded, and the first row of each key within
** the chunk, in row order. */
static void dgroup_local(void *vp, int64_t b, int64_t e, int w)
{
    dgroup_ctx *c = vp;
    int64_t ch = b / c->grain, cnt = 0, *st = c->stamp + (int64_t)w * c->nbits, *lf = c->lfirst + b;
    for (int64_t x = b; x < e; x += BLK) {
        int64_t m = e - x < BLK ? e - x : BLK;
        cpu_encode(c->e, c->data, NULL, x, x + m, 0, c->keys + x, NULL);
        for (int64_t i = x; i < x + m; i++) {
            uint64_t k = c->keys[i];
            if (st[k] != ch + 1) {
                st[k] = ch + 1;
                lf[cnt++] = i;
            }
        }
    }
    c->lcount[ch] = cnt;
}

static void dgroup_ids(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    dgroup_ctx *c = vp;
    for (int64_t i = b; i < e; i++) c->gid[i] = c->gmap[c->keys[i]];
}

rf_status cpu_dense_group(rf_cpu_pool *pool, const cpu_enc *e, const void *const *data, int64_t n,
                          int64_t **gid_of_row, int64_t **first_row, int64_t *ngroups)
{
    *gid_of_row = *first_row = NULL;
    *ngroups = 0;
    dgroup_ctx c = {0};
    c.e = e;
    c.data = data;
    c.n = n;
    c.grain = cpu_grain(n, 16384);
    c.nbits = (int64_t)max_key(e) + 1;
    int64_t nch = (n + c.grain - 1) / c.grain, nt = rf_cpu_pool_threads(pool), G = 0;
    c.keys = cpu_alloc(n, sizeof(uint64_t));
    c.stamp = cpu_zalloc(nt * c.nbits, sizeof(int64_t));
    c.lfirst = cpu_alloc(n, sizeof(int64_t));
    c.lcount = cpu_alloc(nch, sizeof(int64_t));
    int64_t *gmap = cpu_alloc(c.nbits, sizeof(int64_t)), *F = NULL;
    c.gid = cpu_alloc(n, sizeof(int64_t));
    rf_status st = RF_ENOMEM;
    if (!c.keys || !c.stamp || !c.lfirst || !c.lcount || !gmap || !c.gid) goto out;
    rf_cpu_parallel_for(pool, n, c.grain, dgroup_local, &c);
    /* groups numbered by first occurrence: the chunks' new keys, in order */
    for (int64_t k = 0; k < c.nbits; k++) gmap[k] = -1;
    int64_t tot = 0;
    for (int64_t ch = 0; ch < nch; ch++) tot += c.lcount[ch];
    if (!(F = cpu_alloc(tot < c.nbits ? tot : c.nbits, sizeof(int64_t)))) goto out;
    for (int64_t ch = 0; ch < nch; ch++)
        for (int64_t j = 0; j < c.lcount[ch]; j++) {
            int64_t row = c.lfirst[ch * c.grain + j];
            uint64_t k = c.keys[row];
            if (gmap[k] < 0) {
                gmap[k] = G;
                F[G++] = row;
            }
        }
    c.gmap = gmap;
    rf_cpu_parallel_for(pool, n, c.grain, dgroup_ids, &c);
    *gid_of_row = c.gid;
    *first_row = F;
    *ngroups = G;
    c.gid = NULL;
    F = NULL;
    st = RF_OK;
out:
    free(c.keys);
    free(c.stamp);
    free(c.lfirst);
    free(c.lcount);
    free(gmap);
    free(c.gid);
    free(F);
    return st;
}
