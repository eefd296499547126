/*
** skeletons/cpu/cpu_hash.c: the one hash table of the CPU backend.
**
** Owns: partitioned open-addressing tables on encoded keys (see
** cpu_internal.h), their parallel builds and probes. Joins, semi/anti joins,
** unique, group-by, difference and row sets all use this code.
**
** Determinism: a partition is only ever touched by one thread, which inserts
** its rows in input order, and group ids are renumbered by first occurrence
** at the end, so results do not depend on the thread count or on which of
** the three build strategies ran.
*/
#include <math.h>

#include "cpu_internal.h"

enum {
    HLL_B = 10,
    HLL_M = 1 << HLL_B,      /* HyperLogLog registers per chunk */
    BLK = 256,               /* rows encoded and hashed at a time */
    SERIAL_MAX = 16384,      /* builds this small run on one thread */
    FEW_DISTINCT = 1024,     /* first rows with at most this many keys: probe mode */
    PROBE_MISS_MAX = 65536,  /* rows a probe-mode build may still insert serially */
    PART_ROWS = 32768,       /* rows per partition that the partition count aims at */
    MAX_PBITS = 12
};

int32_t cpu_pick_pbits(int64_t n)
{
    int32_t b = 0;
    while (b < MAX_PBITS && (n >> b) > (int64_t)PART_ROWS) b++;
    return b;
}

static rf_status part_alloc(cpu_htpart *p, int64_t cap, int32_t stride)
{
    p->slots = cpu_zalloc(cap * stride, sizeof(uint64_t));
    if (!p->slots) return RF_ENOMEM;
    p->cap = cap;
    p->count = 0;
    return RF_OK;
}

rf_status cpu_ht_init(cpu_ht *ht, int32_t nw, int32_t payload, int32_t pbits, int64_t per_part)
{
    memset(ht, 0, sizeof *ht);
    ht->nw = nw;
    ht->payload = payload;
    ht->stride = nw + (payload ? 1 : 0);
    ht->pbits = pbits;
    ht->nparts = (int64_t)1 << pbits;
    ht->parts = cpu_zalloc(ht->nparts, sizeof *ht->parts);
    if (!ht->parts) return RF_ENOMEM;
    int64_t cap = cpu_pow2_at_least(2 * (per_part > 8 ? per_part : 8));
    for (int64_t i = 0; i < ht->nparts; i++)
        if (part_alloc(&ht->parts[i], cap, ht->stride)) {
            cpu_ht_free(ht);
            return RF_ENOMEM;
        }
    return RF_OK;
}

rf_status cpu_ht_init_direct(cpu_ht *ht, int32_t dbits, int32_t pbits)
{
    memset(ht, 0, sizeof *ht);
    ht->nw = ht->stride = 1;
    ht->direct = 1;
    ht->dbits = dbits;
    ht->pbits = pbits;
    ht->nparts = (int64_t)1 << pbits;
    ht->bitmap = cpu_zalloc((int64_t)1 << (dbits - 6), sizeof(uint64_t));
    ht->pcount = cpu_zalloc(ht->nparts, sizeof(int64_t));
    if (!ht->bitmap || !ht->pcount) {
        cpu_ht_free(ht);
        return RF_ENOMEM;
    }
    return RF_OK;
}

void cpu_ht_free(cpu_ht *ht)
{
    if (ht->parts)
        for (int64_t i = 0; i < ht->nparts; i++) free(ht->parts[i].slots);
    free(ht->parts);
    free(ht->bitmap);
    free(ht->pcount);
    memset(ht, 0, sizeof *ht);
}

/* Direct mode: sets key's bit; 1 when it was clear. */
static inline int direct_set(cpu_ht *ht, int64_t part, uint64_t k)
{
    uint64_t *w = &ht->bitmap[k >> 6], bit = UINT64_C(1) << (k & 63);
    if (*w & bit) return 0;
    *w |= bit;
    ht->pcount[part]++;
    return 1;
}

/* Doubles (at least) a partition and rehashes it. */
static rf_status part_grow(const cpu_ht *ht, cpu_htpart *p)
{
    int64_t ncap = p->cap * 2, st = ht->stride;
    uint64_t *ns = cpu_zalloc(ncap * st, sizeof(uint64_t));
    if (!ns) return RF_ENOMEM;
    uint64_t mask = (uint64_t)ncap - 1;
    for (int64_t i = 0; i < p->cap; i++) {
        const uint64_t *s = p->slots + i * st;
        if (!s[0]) continue;
        uint64_t j = cpu_hash(s, ht->nw) & mask;
        while (ns[j * st]) j = (j + 1) & mask;
        memcpy(ns + j * st, s, (size_t)st * sizeof(uint64_t));
    }
    free(p->slots);
    p->slots = ns;
    p->cap = ncap;
    return RF_OK;
}

/* Finds key or inserts it (payload = row). Returns the slot, or NULL when
** the partition could not grow; *isnew tells which happened. */
static inline uint64_t *part_upsert(const cpu_ht *ht, cpu_htpart *p, const uint64_t *key, uint64_t h, int64_t row,
                                    int *isnew)
{
    int32_t nw = ht->nw, st = ht->stride;
    for (;;) {
        uint64_t mask = (uint64_t)p->cap - 1, i = h & mask;
        for (;;) {
            uint64_t *s = p->slots + i * (uint64_t)st;
            if (s[0] == 0) break;
            if (cpu_key_eq(s, key, nw)) {
                *isnew = 0;
                return s;
            }
            i = (i + 1) & mask;
        }
        if ((p->count + 1) * 2 > p->cap) {
            if (part_grow(ht, p)) return NULL;
            continue; /* the empty slot moved */
        }
        uint64_t *s = p->slots + i * (uint64_t)st;
        memcpy(s, key, (size_t)nw * sizeof(uint64_t));
        if (ht->payload) s[nw] = (uint64_t)row;
        p->count++;
        *isnew = 1;
        return s;
    }
}

/* Inserts rows (rows ? rows[i] : i), i in [begin, end), in order, into a
** one-partition table. */
static rf_status serial_insert(cpu_ht *ht, const cpu_enc *e, const void *const *data, const int64_t *rows,
                               int64_t begin, int64_t end, uint8_t *isnew, int64_t *first)
{
    uint64_t *buf = cpu_alloc((int64_t)BLK * e->nw, sizeof(uint64_t));
    if (!buf) return RF_ENOMEM;
    cpu_htpart *p = &ht->parts[0];
    for (int64_t b = begin; b < end; b += BLK) {
        int64_t m = end - b < BLK ? end - b : BLK;
        cpu_encode(e, data, rows, b, b + m, -1, buf, NULL);
        for (int64_t i = 0; i < m; i++) {
            const uint64_t *key = buf + i * e->nw;
            int64_t row = rows ? rows[b + i] : b + i;
            if (ht->direct) {
                if (direct_set(ht, 0, key[0]) && isnew) isnew[row] = 1;
                continue;
            }
            int nu;
            uint64_t *s = part_upsert(ht, p, key, cpu_hash(key, e->nw), row, &nu);
            if (!s) {
                free(buf);
                return RF_ENOMEM;
            }
            if (nu && isnew) isnew[row] = 1;
            if (first) first[row] = (int64_t)s[ht->nw];
        }
    }
    free(buf);
    ht->count = ht->direct ? ht->pcount[0] : p->count;
    return RF_OK;
}

/* ---- radix partitioning --------------------------------------------- */

/* Entries of nw key words and the row, grouped by partition, rows ascending
** within a partition. */
typedef struct part_ctx {
    const cpu_ht *ht;
    const cpu_enc *e;
    const void *const *data;
    int64_t n, grain, nch, P;
    int check;
    int64_t *hist;     /* [nch * P]: counts, then write positions */
    int64_t *bad;      /* [nch]: rows outside e's ranges (when check) */
    uint8_t *hll;      /* [nch * HLL_M]: HyperLogLog registers (optional) */
    uint64_t *ent;
    uint64_t *scratch; /* per worker: BLK * (nw + 1) words */
} part_ctx;

static inline int64_t part_of_key(const cpu_ht *ht, const uint64_t *key)
{
    if (ht->direct) return (int64_t)(key[0] >> (ht->dbits - ht->pbits));
    return (int64_t)(cpu_hash(key, ht->nw) >> (64 - ht->pbits));
}

static void part_hist(void *vp, int64_t b, int64_t e, int w)
{
    part_ctx *c = vp;
    int32_t nw = c->e->nw;
    uint64_t *buf = c->scratch + (int64_t)w * BLK * (nw + 1);
    uint8_t *ok = (uint8_t *)(buf + (int64_t)BLK * nw);
    int64_t *h = c->hist + (b / c->grain) * c->P, bad = 0;
    for (int64_t x = b; x < e; x += BLK) {
        int64_t m = e - x < BLK ? e - x : BLK;
        if (c->check) memset(ok, 1, (size_t)m);
        cpu_encode(c->e, c->data, NULL, x, x + m, -1, buf, c->check ? ok : NULL);
        if (c->check)
            for (int64_t i = 0; i < m; i++) bad += !ok[i];
        if (bad) continue; /* the caller will not scatter */
        if (c->hll) {
            uint8_t *reg = c->hll + (b / c->grain) * HLL_M;
            for (int64_t i = 0; i < m; i++) {
                uint64_t hv = cpu_hash(buf + i * nw, nw);
                h[c->ht->direct ? part_of_key(c->ht, buf + i * nw) : (int64_t)(hv >> (64 - c->ht->pbits))]++;
                /* register from the low bits, rank from the middle ones: both
                ** independent of the partition's top bits */
                uint8_t rho = (uint8_t)(__builtin_ctzll((hv >> HLL_B) | (UINT64_C(1) << 40)) + 1);
                if (rho > reg[hv & (HLL_M - 1)]) reg[hv & (HLL_M - 1)] = rho;
            }
        } else {
            for (int64_t i = 0; i < m; i++) h[part_of_key(c->ht, buf + i * nw)]++;
        }
    }
    c->bad[b / c->grain] = bad;
}

/* The HyperLogLog estimate of the number of distinct keys (about 3%). */
static double hll_estimate(const uint8_t *regs, int64_t nch)
{
    double sum = 0, m = HLL_M;
    int64_t zeros = 0;
    for (int j = 0; j < HLL_M; j++) {
        uint8_t r = 0;
        for (int64_t ch = 0; ch < nch; ch++)
            if (regs[ch * HLL_M + j] > r) r = regs[ch * HLL_M + j];
        sum += 1.0 / (double)(UINT64_C(1) << r);
        zeros += r == 0;
    }
    double est = 0.7213 / (1 + 1.079 / m) * m * m / sum;
    if (est < 2.5 * m && zeros) est = m * log(m / (double)zeros);
    return est;
}

static void part_scatter(void *vp, int64_t b, int64_t e, int w)
{
    part_ctx *c = vp;
    int32_t nw = c->e->nw;
    uint64_t *buf = c->scratch + (int64_t)w * BLK * (nw + 1);
    int64_t *pos = c->hist + (b / c->grain) * c->P;
    for (int64_t x = b; x < e; x += BLK) {
        int64_t m = e - x < BLK ? e - x : BLK;
        cpu_encode(c->e, c->data, NULL, x, x + m, -1, buf, NULL);
        for (int64_t i = 0; i < m; i++) {
            const uint64_t *key = buf + i * nw;
            uint64_t *d = c->ent + pos[part_of_key(c->ht, key)]++ * (nw + 1);
            for (int32_t k = 0; k < nw; k++) d[k] = key[k];
            d[nw] = (uint64_t)(x + i);
        }
    }
}

/* Rows partitioned by key. The rows of chunk ch (rows [ch * grain, ...))
** that fall in partition p are the entries [seg[p * nch + ch], seg[p * nch +
** ch + 1]), so results written into the entries can be taken back to row
** order one chunk at a time, with writes confined to the chunk's rows. */
typedef struct parted {
    uint64_t *ent; /* nw key words and the row, per entry */
    int64_t *poff; /* [P + 1]: partition p is entries [poff[p], poff[p+1]) */
    int64_t *seg;  /* [P * nch + 1] */
    int64_t nch, grain;
} parted;

static void parted_free(parted *pt)
{
    free(pt->ent);
    free(pt->poff);
    free(pt->seg);
}

/* Partitions rows [0, n) (allocating pt's arrays). With check, a row outside
** e's ranges stops it early with *oor = 1. */
static rf_status partition_rows(rf_cpu_pool *pool, const cpu_ht *ht, const cpu_enc *e, const void *const *data,
                                int64_t n, int check, int *oor, parted *pt, double *distinct)
{
    memset(pt, 0, sizeof *pt);
    part_ctx c = {0};
    c.ht = ht;
    c.e = e;
    c.data = data;
    c.n = n;
    c.check = check;
    c.P = ht->nparts;
    c.grain = (n + 63) / 64;
    if (c.grain < 65536) c.grain = 65536;
    c.nch = (n + c.grain - 1) / c.grain;
    int nt = rf_cpu_pool_threads(pool);
    c.hist = cpu_zalloc(c.nch * c.P, sizeof(int64_t));
    c.bad = cpu_zalloc(c.nch, sizeof(int64_t));
    if (distinct && !(c.hll = cpu_zalloc(c.nch * HLL_M, 1))) distinct = NULL; /* an estimate is optional */
    c.scratch = cpu_alloc((int64_t)nt * BLK * (e->nw + 1), sizeof(uint64_t));
    c.ent = cpu_alloc(n * (e->nw + 1), sizeof(uint64_t));
    int64_t *off = cpu_alloc(c.P + 1, sizeof(int64_t)), *seg = cpu_alloc(c.P * c.nch + 1, sizeof(int64_t));
    if (!c.hist || !c.bad || !c.scratch || !c.ent || !off || !seg) {
        free(c.hist);
        free(c.bad);
        free(c.scratch);
        free(c.ent);
        free(off);
        free(seg);
        return RF_ENOMEM;
    }
    rf_cpu_parallel_for(pool, n, c.grain, part_hist, &c);
    int64_t nbad = 0;
    for (int64_t ch = 0; ch < c.nch; ch++) nbad += c.bad[ch];
    free(c.bad);
    if (c.hll) *distinct = hll_estimate(c.hll, c.nch);
    free(c.hll);
    if (nbad) {
        *oor = 1;
        free(c.hist);
        free(c.scratch);
        free(c.ent);
        free(off);
        free(seg);
        return RF_OK;
    }
    int64_t tot = 0;
    for (int64_t p = 0; p < c.P; p++) {
        off[p] = tot;
        for (int64_t ch = 0; ch < c.nch; ch++) {
            int64_t k = c.hist[ch * c.P + p];
            c.hist[ch * c.P + p] = seg[p * c.nch + ch] = tot;
            tot += k;
        }
    }
    off[c.P] = seg[c.P * c.nch] = tot;
    rf_cpu_parallel_for(pool, n, c.grain, part_scatter, &c);
    free(c.hist);
    free(c.scratch);
    pt->ent = c.ent;
    pt->poff = off;
    pt->seg = seg;
    pt->nch = c.nch;
    pt->grain = c.grain;
    return RF_OK;
}

/* The per-partition workers write each entry's result over its key word 0:
** the key's payload, or for tables without one whether the key was new.
** Writing straight to isnew[row] / first[row] would scatter over all rows. */
typedef struct ins_ctx {
    cpu_ht *ht;
    uint64_t *ent;
    const int64_t *poff;
    double per_part; /* expected distinct keys per partition, 0: unknown */
    atomic_int err;
} ins_ctx;

typedef struct unpart_ctx {
    const parted *pt;
    int64_t P;
    int32_t stride, payload;
    uint8_t *isnew;
    int64_t *first;
} unpart_ctx;

/* Takes the entries' results back to row order, one chunk of rows at a time. */
static void unpart_chunk(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    unpart_ctx *c = vp;
    const parted *pt = c->pt;
    for (int64_t ch = b; ch < e; ch++)
        for (int64_t p = 0; p < c->P; p++)
            for (int64_t j = pt->seg[p * pt->nch + ch]; j < pt->seg[p * pt->nch + ch + 1]; j++) {
                const uint64_t *en = pt->ent + j * c->stride;
                uint64_t row = en[c->stride - 1], v = en[0];
                if (c->first) c->first[row] = (int64_t)v;
                if (c->isnew) c->isnew[row] = c->payload ? v == row : (uint8_t)v;
            }
}

static void ins_parts(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    ins_ctx *c = vp;
    int32_t nw = c->ht->nw;
    for (int64_t p = b; p < e; p++) {
        if (c->ht->direct) {
            for (int64_t j = c->poff[p]; j < c->poff[p + 1]; j++) {
                uint64_t *ent = c->ent + 2 * j;
                ent[0] = (uint64_t)direct_set(c->ht, p, ent[0]);
            }
            continue;
        }
        cpu_htpart *part = &c->ht->parts[p];
        if (part->count == 0 && c->per_part > 0) {
            /* Size an empty partition for its expected keys once, rather
            ** than grow it step by step (each step rehashes and touches
            ** fresh memory). */
            int64_t rows = c->poff[p + 1] - c->poff[p], want = (int64_t)(c->per_part * 1.25) + 16;
            int64_t cap = cpu_pow2_at_least(2 * (want < rows ? want : rows));
            if (cap > part->cap) {
                uint64_t *ns = cpu_zalloc(cap * c->ht->stride, sizeof(uint64_t));
                if (!ns) {
                    atomic_store(&c->err, 1);
                    return;
                }
                free(part->slots);
                part->slots = ns;
                part->cap = cap;
            }
        }
        /* Hashes run PF entries ahead, with a prefetch of their slots: a
        ** partition's table is cache-sized but its first touches are not. */
        enum { PF = 16 };
        uint64_t hs[PF];
        int64_t j0 = c->poff[p], j1 = c->poff[p + 1];
        for (int64_t j = j0; j < j1 && j < j0 + PF; j++) hs[j % PF] = cpu_hash(c->ent + j * (nw + 1), nw);
        for (int64_t j = j0; j < j1; j++) {
            uint64_t *key = c->ent + j * (nw + 1);
            int64_t row = (int64_t)key[nw];
            uint64_t h = hs[j % PF];
            if (j + PF < j1) {
                uint64_t h2 = cpu_hash(c->ent + (j + PF) * (nw + 1), nw);
                hs[j % PF] = h2;
                __builtin_prefetch(part->slots + (h2 & ((uint64_t)part->cap - 1)) * (uint64_t)c->ht->stride);
            }
            int nu;
            uint64_t *s = part_upsert(c->ht, part, key, h, row, &nu);
            if (!s) {
                atomic_store(&c->err, 1);
                return;
            }
            key[0] = c->ht->payload ? s[nw] : (uint64_t)nu;
        }
    }
}

/* Whether every row [0, n) lies within e's ranges. */
static rf_status rows_fit(const cpu_enc *e, const void *const *data, int64_t n, int *fit)
{
    uint64_t *buf = cpu_alloc((int64_t)BLK * e->nw, sizeof(uint64_t));
    uint8_t ok[BLK];
    if (!buf) return RF_ENOMEM;
    *fit = 1;
    for (int64_t b = 0; b < n && *fit; b += BLK) {
        int64_t m = n - b < BLK ? n - b : BLK;
        memset(ok, 1, (size_t)m);
        cpu_encode(e, data, NULL, b, b + m, -1, buf, ok);
        for (int64_t i = 0; i < m; i++) *fit &= ok[i];
    }
    free(buf);
    return RF_OK;
}

/* Rows below which an insert does not use the pool's workers. */
#define SMALL_INSERT_ROWS 4096

rf_status cpu_ht_insert_rows(rf_cpu_pool *pool, cpu_ht *ht, const cpu_enc *e, const void *const *data,
                             int64_t n, uint8_t *isnew, int64_t *first, int *oor)
{
    rf_status st;
    if (oor) *oor = 0;
    if (n <= 0) return RF_OK;
    if (ht->pbits == 0) {
        int fit = 1;
        if (oor && (st = rows_fit(e, data, n, &fit))) return st;
        if (!fit) {
            *oor = 1;
            return RF_OK;
        }
        return serial_insert(ht, e, data, NULL, 0, n, isnew, first);
    }
    parted pt;
    int bad = 0, fresh = ht->count == 0 && !ht->direct;
    double distinct = 0;
    st = partition_rows(pool, ht, e, data, n, oor != NULL, &bad, &pt, fresh ? &distinct : NULL);
    if (st) return st;
    if (bad) {
        *oor = 1;
        return RF_OK;
    }
    ins_ctx c = {ht, pt.ent, pt.poff, distinct / (double)ht->nparts, 0};
    atomic_init(&c.err, 0);
    /* A small batch (a semi-naive delta of a few rows) is inserted by the
    ** caller alone: waking the workers for one task per partition cost more
    ** than the insert (a counter's 10^5 one-row rounds: 40 s with 2 threads
    ** on a loaded 2-core machine, under 1 s with one). */
    rf_cpu_pool *ipool = n < SMALL_INSERT_ROWS ? NULL : pool;
    rf_cpu_parallel_for(ipool, ht->nparts, 1, ins_parts, &c);
    if (!atomic_load(&c.err) && (isnew || first)) {
        unpart_ctx u = {&pt, ht->nparts, e->nw + 1, ht->payload, isnew, first};
        rf_cpu_parallel_for(ipool, pt.nch, 1, unpart_chunk, &u);
    }
    parted_free(&pt);
    int64_t cnt = 0;
    for (int64_t p = 0; p < ht->nparts; p++) cnt += ht->direct ? ht->pcount[p] : ht->parts[p].count;
    ht->count = cnt;
    return atomic_load(&c.err) ? RF_ENOMEM : RF_OK;
}

/* ---- probing -------------------------------------------------------- */

typedef struct probe_ctx {
    const cpu_ht *ht;
    const cpu_enc *e;
    const void *const *data;
    const int64_t *rows; /* optional */
    int check;
    int64_t *gid;
    uint8_t *found;
    int64_t base, grain; /* chunks start at row base */
    int64_t *misses;     /* per chunk, optional */
    uint64_t *scratch;   /* per worker: BLK * (nw + 1) words + BLK bytes */
    /* hit lists (instead of gid / found): chunk c writes its matching rows
    ** and their payloads from index c * grain on, and its count to nhit[c] */
    int64_t *hit_row, *hit_gid, *nhit;
} probe_ctx;

static void probe_chunk(void *vp, int64_t b, int64_t e, int w)
{
    probe_ctx *c = vp;
    const cpu_ht *ht = c->ht;
    int32_t nw = c->e->nw;
    uint64_t *buf = c->scratch + (int64_t)w * BLK * (nw + 2);
    uint64_t *hs = buf + (int64_t)BLK * nw;
    uint8_t *ok = (uint8_t *)(hs + BLK);
    int64_t miss = 0, nh = 0;
    for (int64_t x = c->base + b; x < c->base + e; x += BLK) {
        int64_t m = c->base + e - x < BLK ? c->base + e - x : BLK;
        if (c->check) memset(ok, 1, (size_t)m);
        cpu_encode(c->e, c->data, NULL, x, x + m, -1, buf, c->check ? ok : NULL);
        /* Hash the block first and prefetch, so that the cache misses of a
        ** large table overlap. */
        for (int64_t i = 0; i < m; i++) {
            if (ht->direct) {
                if (!c->check || ok[i]) __builtin_prefetch(ht->bitmap + (buf[i] >> 6));
                continue;
            }
            uint64_t h = cpu_hash(buf + i * nw, nw);
            hs[i] = h;
            const cpu_htpart *p = &ht->parts[cpu_part_of(ht, h)];
            __builtin_prefetch(p->slots + (h & ((uint64_t)p->cap - 1)) * (uint64_t)ht->stride);
        }
        if (c->hit_row) {
            int64_t *hr = c->hit_row + b, *hg = c->hit_gid + b;
            for (int64_t i = 0; i < m; i++) {
                const uint64_t *s = (!c->check || ok[i]) ? cpu_ht_find(ht, buf + i * nw, hs[i]) : NULL;
                if (s) {
                    hr[nh] = x + i;
                    hg[nh++] = (int64_t)s[nw];
                }
            }
            continue;
        }
        for (int64_t i = 0; i < m; i++) {
            const uint64_t *s = (!c->check || ok[i]) ? cpu_ht_find(ht, buf + i * nw, hs[i]) : NULL;
            if (c->gid) c->gid[x + i] = s ? (int64_t)s[nw] : -1;
            if (c->found) c->found[x + i] = s != NULL;
            miss += s == NULL;
        }
    }
    if (c->misses) c->misses[b / c->grain] = miss;
    if (c->nhit) c->nhit[b / c->grain] = nh;
}

static rf_status probe_range(rf_cpu_pool *pool, const cpu_ht *ht, const cpu_enc *e, const void *const *data,
                             int64_t begin, int64_t end, int check, int64_t *gid, uint8_t *found, int64_t *misses)
{
    int nt = rf_cpu_pool_threads(pool);
    probe_ctx c = {ht, e, data, NULL, check, gid, found, begin, cpu_grain(end - begin, 4096), NULL, NULL, NULL, NULL, NULL};
    c.scratch = cpu_alloc((int64_t)nt * BLK * (e->nw + 2), sizeof(uint64_t));
    int64_t nch = (end - begin + c.grain - 1) / c.grain;
    if (misses) c.misses = cpu_zalloc(nch, sizeof(int64_t));
    if (!c.scratch || (misses && !c.misses)) {
        free(c.scratch);
        free(c.misses);
        return RF_ENOMEM;
    }
    rf_cpu_parallel_for(pool, end - begin, c.grain, probe_chunk, &c);
    if (misses) {
        *misses = 0;
        for (int64_t i = 0; i < nch; i++) *misses += c.misses[i];
    }
    free(c.scratch);
    free(c.misses);
    return RF_OK;
}

void cpu_ht_probe(rf_cpu_pool *pool, const cpu_ht *ht, const cpu_enc *e, const void *const *data, int64_t n,
                  int check, int64_t *gid, uint8_t *found)
{
    /* Fall back to one thread rather than fail when scratch is unavailable. */
    if (n > 0 && probe_range(pool, ht, e, data, 0, n, check, gid, found, NULL))
        probe_range(NULL, ht, e, data, 0, n, check, gid, found, NULL);
}

rf_status cpu_ht_probe_hits(rf_cpu_pool *pool, const cpu_ht *ht, const cpu_enc *e, const void *const *data,
                            int64_t n, int64_t grain, int64_t *hit_row, int64_t *hit_gid, int64_t *nhit)
{
    if (n <= 0) return RF_OK;
    int nt = rf_cpu_pool_threads(pool);
    probe_ctx c = {ht, e, data, NULL, 1, NULL, NULL, 0, grain, NULL, NULL, hit_row, hit_gid, nhit};
    c.scratch = cpu_alloc((int64_t)nt * BLK * (e->nw + 2), sizeof(uint64_t));
    if (!c.scratch) return RF_ENOMEM;
    rf_cpu_parallel_for(pool, n, grain, probe_chunk, &c);
    free(c.scratch);
    return RF_OK;
}

/* ---- builds with group numbering ------------------------------------ */

typedef struct num_ctx {
    uint8_t *isnew;
    int64_t *first; /* first row of each row's key -> group id */
    int64_t *F;
    int64_t *counts;
    int64_t grain;
    cpu_ht *ht;
} num_ctx;

static void num_count(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    num_ctx *c = vp;
    int64_t k = 0;
    for (int64_t i = b; i < e; i++) k += c->isnew[i];
    c->counts[b / c->grain] = k;
}

static void num_rank(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    num_ctx *c = vp;
    int64_t k = c->counts[b / c->grain];
    for (int64_t i = b; i < e; i++)
        if (c->isnew[i]) {
            c->F[k] = i;
            c->first[i] = k++;
        }
}

/* In place: a non-first row's entry names a first row, whose entry is
** already its rank, and first rows are never written here. */
static void num_rows(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    num_ctx *c = vp;
    for (int64_t i = b; i < e; i++)
        if (!c->isnew[i]) c->first[i] = c->first[c->first[i]];
}

static void num_payload(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    num_ctx *c = vp;
    const cpu_ht *ht = c->ht;
    for (int64_t p = b; p < e; p++) {
        cpu_htpart *part = &ht->parts[p];
        for (int64_t i = 0; i < part->cap; i++) {
            uint64_t *s = part->slots + i * ht->stride;
            if (s[0]) s[ht->nw] = (uint64_t)c->first[s[ht->nw]];
        }
    }
}

rf_status cpu_ht_build(rf_cpu_pool *pool, cpu_ht *ht, const cpu_enc *e, const void *const *data, int64_t n,
                       int ids, int64_t **gid_of_row, int64_t **first_row, int64_t *ngroups)
{
    if (gid_of_row) *gid_of_row = NULL;
    *first_row = NULL;
    *ngroups = 0;
    memset(ht, 0, sizeof *ht);
    rf_status st = RF_ENOMEM;
    int64_t *first = ids ? cpu_alloc(n, sizeof(int64_t)) : NULL, *missed = NULL, *F = NULL, G;
    uint8_t *isnew = cpu_zalloc(n, 1), *found = NULL;
    num_ctx nc = {0};
    if ((ids && !first) || !isnew) goto fail;

    int64_t S = n < SERIAL_MAX ? n : SERIAL_MAX;
    if ((st = cpu_ht_init(ht, e->nw, ids, 0, S < 1024 ? S : 1024))) goto fail;
    if ((st = serial_insert(ht, e, data, NULL, 0, S, isnew, first))) goto fail;
    if (n > S) {
        int partitioned = 1;
        if (ht->count <= FEW_DISTINCT) {
            int64_t nmiss, m;
            st = RF_ENOMEM;
            if (!(found = cpu_alloc(n, 1))) goto fail;
            memset(found, 1, (size_t)S);
            if ((st = probe_range(pool, ht, e, data, S, n, 0, first, found, &nmiss))) goto fail;
            if (nmiss <= PROBE_MISS_MAX) {
                partitioned = 0;
                /* Rows the first table lacked, inserted serially in row order. */
                if (nmiss && ((st = cpu_compact_flags(pool, found, 0, n, &missed, &m)) ||
                              (st = serial_insert(ht, e, data, missed, 0, m, isnew, first))))
                    goto fail;
            }
            free(found);
            found = NULL;
        }
        if (partitioned) {
            /* Partitions are sized from a distinct-count estimate made while
            ** partitioning (the first rows cannot tell 10^6 distinct keys
            ** from 10^7). */
            cpu_ht_free(ht);
            memset(isnew, 0, (size_t)n);
            if ((st = cpu_ht_init(ht, e->nw, ids, cpu_pick_pbits(n), 16))) goto fail;
            if ((st = cpu_ht_insert_rows(pool, ht, e, data, n, isnew, first, NULL))) goto fail;
        }
    }
    G = ht->count;
    if (!ids) {
        /* Keys only: the first rows are the new rows. */
        if ((st = cpu_compact_flags(pool, isnew, 1, n, &F, &G))) goto fail;
        free(isnew);
        free(missed);
        *first_row = F;
        *ngroups = G;
        return RF_OK;
    }

    /* Number the groups by first occurrence. */
    st = RF_ENOMEM;
    F = cpu_alloc(G, sizeof(int64_t));
    nc.grain = cpu_grain(n, 16384);
    nc.counts = cpu_alloc((n + nc.grain - 1) / nc.grain, sizeof(int64_t));
    if (!F || !nc.counts) goto fail;
    nc.isnew = isnew;
    nc.first = first;
    nc.F = F;
    nc.ht = ht;
    rf_cpu_parallel_for(pool, n, nc.grain, num_count, &nc);
    int64_t tot = 0;
    for (int64_t i = 0; i < (n + nc.grain - 1) / nc.grain; i++) {
        int64_t k = nc.counts[i];
        nc.counts[i] = tot;
        tot += k;
    }
    rf_cpu_parallel_for(pool, n, nc.grain, num_rank, &nc);
    rf_cpu_parallel_for(pool, ht->nparts, 1, num_payload, &nc);
    if (gid_of_row) rf_cpu_parallel_for(pool, n, nc.grain, num_rows, &nc);
    free(nc.counts);
    free(isnew);
    free(missed);
    if (gid_of_row)
        *gid_of_row = first;
    else
        free(first);
    *first_row = F;
    *ngroups = G;
    return RF_OK;

fail:
    free(nc.counts);
    free(first);
    free(found);
    free(isnew);
    free(missed);
    free(F);
    cpu_ht_free(ht);
    return st ? st : RF_ENOMEM;
}
