/*
** skeletons/cpu/cpu_sort.c: ordering primitives.
**
** Owns: the parallel stable LSD radix sort of (key, value) pairs, grouping
** of ids into CSR form, the multi-key sort permutation and top-k. Keys are
** range-compressed first (cpu_keys.c), so a sort by a date or by two small
** ints usually needs two or three 11-bit passes on one word.
*/
#include "cpu_internal.h"

enum { BLK = 256, MAX_DIGIT = 11, TOPK_HEAP_MAX = 4096 };

/* ---- radix sort ----------------------------------------------------- */

typedef struct rs_ctx {
    const cpu_kv *src;
    cpu_kv *dst;
    int64_t grain, B;
    int shift;
    uint64_t mask;
    int64_t *hist; /* [nch * B] */
} rs_ctx;

static void rs_hist(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    rs_ctx *c = vp;
    int64_t *h = c->hist + (b / c->grain) * c->B;
    for (int64_t i = b; i < e; i++) h[(c->src[i].k >> c->shift) & c->mask]++;
}

static void rs_scatter(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    rs_ctx *c = vp;
    int64_t *pos = c->hist + (b / c->grain) * c->B;
    for (int64_t i = b; i < e; i++) c->dst[pos[(c->src[i].k >> c->shift) & c->mask]++] = c->src[i];
}

rf_status cpu_radix_sort(rf_cpu_pool *pool, cpu_kv *a, cpu_kv *tmp, int64_t n, int bits, cpu_kv **sorted)
{
    *sorted = a;
    if (n <= 1 || bits <= 0) return RF_OK;
    int passes = (bits + MAX_DIGIT - 1) / MAX_DIGIT;
    int dbits = (bits + passes - 1) / passes;
    rs_ctx c = {0};
    c.B = (int64_t)1 << dbits;
    c.mask = (uint64_t)c.B - 1;
    c.grain = (n + 63) / 64;
    if (c.grain < 65536) c.grain = 65536;
    int64_t nch = (n + c.grain - 1) / c.grain;
    c.hist = cpu_alloc(nch * c.B, sizeof(int64_t));
    if (!c.hist) return RF_ENOMEM;
    cpu_kv *src = a, *dst = tmp;
    for (int p = 0; p < passes; p++) {
        c.shift = p * dbits;
        c.src = src;
        c.dst = dst;
        memset(c.hist, 0, (size_t)(nch * c.B) * sizeof(int64_t));
        rf_cpu_parallel_for(pool, n, c.grain, rs_hist, &c);
        int64_t tot = 0, skip = 0;
        for (int64_t d = 0; d < c.B && !skip; d++) {
            int64_t s = 0;
            for (int64_t ch = 0; ch < nch; ch++) s += c.hist[ch * c.B + d];
            skip = s == n; /* every key has this digit: the pass would copy */
        }
        if (skip) continue;
        for (int64_t d = 0; d < c.B; d++)
            for (int64_t ch = 0; ch < nch; ch++) {
                int64_t k = c.hist[ch * c.B + d];
                c.hist[ch * c.B + d] = tot;
                tot += k;
            }
        rf_cpu_parallel_for(pool, n, c.grain, rs_scatter, &c);
        cpu_kv *t = src;
        src = dst;
        dst = t;
    }
    free(c.hist);
    *sorted = src;
    return RF_OK;
}

/* ---- CSR ------------------------------------------------------------ */

typedef struct csr_ctx {
    const int64_t *ids;
    int64_t grain, *counts;
    cpu_kv *kv;
    const cpu_kv *sorted;
    int64_t *order, *offsets;
    int64_t m, G;
} csr_ctx;

static void csr_count(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    csr_ctx *c = vp;
    int64_t k = 0;
    for (int64_t i = b; i < e; i++) k += c->ids[i] >= 0;
    c->counts[b / c->grain] = k;
}

static void csr_fill(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    csr_ctx *c = vp;
    int64_t k = c->counts[b / c->grain];
    for (int64_t i = b; i < e; i++)
        if (c->ids[i] >= 0) {
            c->kv[k].k = (uint64_t)c->ids[i];
            c->kv[k++].v = i;
        }
}

/* offsets[g] = the first position whose id is >= g; each g is written by
** exactly one position, so chunks do not race. */
static void csr_bounds(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    csr_ctx *c = vp;
    for (int64_t j = b; j < e; j++) {
        int64_t g = (int64_t)c->sorted[j].k;
        c->order[j] = c->sorted[j].v;
        int64_t prev = j ? (int64_t)c->sorted[j - 1].k : -1;
        for (int64_t x = prev + 1; x <= g; x++) c->offsets[x] = j;
        if (j == c->m - 1)
            for (int64_t x = g + 1; x <= c->G; x++) c->offsets[x] = c->m;
    }
}

/* Counting sort for groups few enough that one counter array per part of
** the rows is cheap: parts count their rows per group, the counts become
** each part's write positions (group by group, parts in order), and each
** part places its rows. Stable, so the result is the radix sort's whatever
** the number of parts. */
typedef struct cnt_ctx {
    const int64_t *ids;
    int64_t n, P, G;
    int64_t *pos; /* [P][G] counts, then write positions */
    int64_t *order;
} cnt_ctx;

static void cnt_count(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    cnt_ctx *c = vp;
    for (int64_t p = b; p < e; p++) {
        int64_t *h = c->pos + p * c->G, i1 = c->n * (p + 1) / c->P;
        for (int64_t i = c->n * p / c->P; i < i1; i++)
            if (c->ids[i] >= 0) h[c->ids[i]]++;
    }
}

static void cnt_place(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    cnt_ctx *c = vp;
    for (int64_t p = b; p < e; p++) {
        int64_t *h = c->pos + p * c->G, i1 = c->n * (p + 1) / c->P;
        for (int64_t i = c->n * p / c->P; i < i1; i++)
            if (c->ids[i] >= 0) c->order[h[c->ids[i]]++] = i;
    }
}

enum { CNT_MAX_G = 1 << 20 };

static rf_status csr_counting(rf_cpu_pool *pool, const int64_t *ids, int64_t n, int64_t G, int64_t **order,
                              int64_t **offsets, int64_t *m)
{
    cnt_ctx c = {ids, n, rf_cpu_pool_threads(pool), G, NULL, NULL};
    int64_t *off = cpu_alloc(G + 1, sizeof(int64_t));
    c.pos = cpu_zalloc(c.P * G, sizeof(int64_t));
    if (!off || !c.pos) goto oom;
    rf_cpu_parallel_for(pool, c.P, 1, cnt_count, &c);
    int64_t tot = 0;
    for (int64_t g = 0; g < G; g++) {
        off[g] = tot;
        for (int64_t p = 0; p < c.P; p++) {
            int64_t k = c.pos[p * G + g];
            c.pos[p * G + g] = tot;
            tot += k;
        }
    }
    off[G] = tot;
    if (!(c.order = cpu_alloc(tot, sizeof(int64_t)))) goto oom;
    rf_cpu_parallel_for(pool, c.P, 1, cnt_place, &c);
    free(c.pos);
    *order = c.order;
    *offsets = off;
    *m = tot;
    return RF_OK;
oom:
    free(off);
    free(c.pos);
    return RF_ENOMEM;
}

rf_status cpu_csr(rf_cpu_pool *pool, const int64_t *ids, int64_t n, int64_t ngroups, int64_t **order,
                  int64_t **offsets, int64_t *m)
{
    *order = *offsets = NULL;
    *m = 0;
    if (ngroups > 0 && ngroups <= CNT_MAX_G && ngroups <= n) return csr_counting(pool, ids, n, ngroups, order, offsets, m);
    csr_ctx c = {0};
    c.ids = ids;
    c.G = ngroups;
    c.grain = cpu_grain(n, 16384);
    int64_t nch = (n + c.grain - 1) / c.grain;
    c.counts = cpu_alloc(nch, sizeof(int64_t));
    c.offsets = cpu_zalloc(ngroups + 1, sizeof(int64_t));
    if (!c.counts || !c.offsets) goto oom;
    rf_cpu_parallel_for(pool, n, c.grain, csr_count, &c);
    int64_t tot = 0;
    for (int64_t i = 0; i < nch; i++) {
        int64_t k = c.counts[i];
        c.counts[i] = tot;
        tot += k;
    }
    c.m = tot;
    c.kv = cpu_alloc(tot, sizeof(cpu_kv));
    cpu_kv *tmp = cpu_alloc(tot, sizeof(cpu_kv));
    c.order = cpu_alloc(tot, sizeof(int64_t));
    if (!c.kv || !tmp || !c.order) {
        free(tmp);
        goto oom;
    }
    rf_cpu_parallel_for(pool, n, c.grain, csr_fill, &c);
    cpu_kv *s;
    if (cpu_radix_sort(pool, c.kv, tmp, tot, cpu_bitlen((uint64_t)(ngroups > 0 ? ngroups - 1 : 0)), &s)) {
        free(tmp);
        goto oom;
    }
    c.sorted = s;
    rf_cpu_parallel_for(pool, tot, cpu_grain(tot, 16384), csr_bounds, &c);
    free(tmp);
    free(c.kv);
    free(c.counts);
    *order = c.order;
    *offsets = c.offsets;
    *m = tot;
    return RF_OK;
oom:
    free(c.counts);
    free(c.offsets);
    free(c.kv);
    free(c.order);
    return RF_ENOMEM;
}

/* ---- sort permutation ----------------------------------------------- */

typedef struct sk_ctx {
    const cpu_enc *e;
    const void *const *data;
    int32_t word;
    const int64_t *rows; /* NULL: identity */
    cpu_kv *kv;
    uint64_t *scratch; /* per worker: BLK words */
} sk_ctx;

static void sk_fill(void *vp, int64_t b, int64_t e, int w)
{
    sk_ctx *c = vp;
    uint64_t *buf = c->scratch + (int64_t)w * BLK;
    for (int64_t x = b; x < e; x += BLK) {
        int64_t m = e - x < BLK ? e - x : BLK;
        cpu_encode(c->e, c->data, c->rows, x, x + m, c->word, buf, NULL);
        for (int64_t i = 0; i < m; i++) {
            c->kv[x + i].k = buf[i];
            c->kv[x + i].v = c->rows ? c->rows[x + i] : x + i;
        }
    }
}

typedef struct perm_ctx {
    const cpu_kv *kv;
    int64_t *perm;
} perm_ctx;

static void perm_copy(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    perm_ctx *c = vp;
    for (int64_t i = b; i < e; i++) c->perm[i] = c->kv[i].v;
}

static void perm_iota(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    int64_t *p = vp;
    for (int64_t i = b; i < e; i++) p[i] = i;
}

rf_status rf_cpu_sort_perm(rf_cpu_pool *pool, const rf_cpu_table *t, const int32_t *keycols, const uint8_t *desc,
                           int32_t nkeys, int64_t **perm)
{
    *perm = NULL;
    if (nkeys < 0 || !t) return RF_EINTERNAL;
    /* key parts: a 128-bit column is two (cpu_table_keys) */
    rf_cpu_kind *kinds = cpu_alloc(CPU_KEY_PARTS(nkeys), sizeof *kinds);
    const void **data = cpu_alloc(CPU_KEY_PARTS(nkeys), sizeof *data);
    uint64_t *lo = cpu_alloc(CPU_KEY_PARTS(nkeys), 8), *hi = cpu_alloc(CPU_KEY_PARTS(nkeys), 8);
    uint8_t *pdesc = cpu_alloc(CPU_KEY_PARTS(nkeys), 1);
    int32_t np = 0;
    cpu_enc e = {0};
    cpu_kv *kv = NULL, *tmp = NULL;
    uint64_t *scratch = NULL;
    int64_t n = t->nrows, *p = NULL;
    rf_status st = RF_ENOMEM;
    if (!kinds || !data || !lo || !hi || !pdesc) goto out;
    if ((st = cpu_table_keys(t, keycols, nkeys, desc, kinds, data, pdesc, &np))) goto out;
    st = RF_ENOMEM;
    p = cpu_alloc(n, sizeof(int64_t));
    if (!p) goto out;
    if (nkeys == 0 || n <= 1) {
        rf_cpu_parallel_for(pool, n, 0, perm_iota, p);
        st = RF_OK;
        goto out;
    }
    cpu_ranges(pool, np, kinds, data, n, lo, hi);
    if ((st = cpu_enc_init(&e, np, kinds, desc ? pdesc : NULL, lo, hi))) goto out;
    st = RF_ENOMEM;
    kv = cpu_alloc(n, sizeof(cpu_kv));
    tmp = cpu_alloc(n, sizeof(cpu_kv));
    scratch = cpu_alloc((int64_t)rf_cpu_pool_threads(pool) * BLK, sizeof(uint64_t));
    if (!kv || !tmp || !scratch) goto out;
    int first = 1;
    for (int32_t w = e.nw - 1; w >= e.lead; w--) {
        sk_ctx c = {&e, data, w, first ? NULL : p, kv, scratch};
        rf_cpu_parallel_for(pool, n, cpu_grain(n, 4096), sk_fill, &c);
        cpu_kv *s;
        if ((st = cpu_radix_sort(pool, kv, tmp, n, e.wbits[w], &s))) goto out;
        perm_ctx pc = {s, p};
        rf_cpu_parallel_for(pool, n, 0, perm_copy, &pc);
        first = 0;
    }
    if (first) rf_cpu_parallel_for(pool, n, 0, perm_iota, p);
    st = RF_OK;
out:
    if (st) {
        free(p);
        p = NULL;
    }
    *perm = p;
    cpu_enc_free(&e);
    free(pdesc);
    free(kinds);
    free(data);
    free(lo);
    free(hi);
    free(kv);
    free(tmp);
    free(scratch);
    return st;
}

/* ---- top-k ---------------------------------------------------------- */

/* A max-heap of at most k entries of nw key words and a row, ordered by
** (words, row): the root is the worst of the best k seen so far. */
typedef struct heap {
    uint64_t *a;
    int64_t n, k;
    int32_t nw;
} heap;

static inline int ent_less(const uint64_t *x, const uint64_t *y, int32_t nw)
{
    for (int32_t i = 0; i <= nw; i++) /* the row (word nw) breaks ties: stable */
        if (x[i] != y[i]) return x[i] < y[i];
    return 0;
}

static void heap_swap(uint64_t *x, uint64_t *y, int32_t st)
{
    for (int32_t i = 0; i < st; i++) {
        uint64_t t = x[i];
        x[i] = y[i];
        y[i] = t;
    }
}

static void heap_down(heap *h, int64_t i)
{
    int32_t st = h->nw + 1;
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && ent_less(h->a + m * st, h->a + l * st, h->nw)) m = l;
        if (r < h->n && ent_less(h->a + m * st, h->a + r * st, h->nw)) m = r;
        if (m == i) return;
        heap_swap(h->a + m * st, h->a + i * st, st);
        i = m;
    }
}

static void heap_offer(heap *h, const uint64_t *ent)
{
    int32_t st = h->nw + 1;
    if (h->n < h->k) {
        int64_t i = h->n++;
        memcpy(h->a + i * st, ent, (size_t)st * 8);
        while (i > 0) {
            int64_t par = (i - 1) / 2;
            if (!ent_less(h->a + par * st, h->a + i * st, h->nw)) break;
            heap_swap(h->a + par * st, h->a + i * st, st);
            i = par;
        }
    } else if (ent_less(ent, h->a, h->nw)) {
        memcpy(h->a, ent, (size_t)st * 8);
        heap_down(h, 0);
    }
}

typedef struct topk_ctx {
    const cpu_enc *e;
    const void *const *data;
    int64_t k, grain;
    uint64_t *heaps;   /* [nch * k * (nw + 1)] */
    int64_t *hcount;   /* [nch] */
    uint64_t *scratch; /* per worker: BLK * (nw + 1) words */
} topk_ctx;

static void topk_chunk(void *vp, int64_t b, int64_t e, int w)
{
    topk_ctx *c = vp;
    int32_t nw = c->e->nw, st = nw + 1;
    int64_t ch = b / c->grain;
    heap h = {c->heaps + ch * c->k * st, 0, c->k, nw};
    uint64_t *buf = c->scratch + (int64_t)w * BLK * st, *ent = buf + (int64_t)BLK * nw;
    for (int64_t x = b; x < e; x += BLK) {
        int64_t m = e - x < BLK ? e - x : BLK;
        cpu_encode(c->e, c->data, NULL, x, x + m, -1, buf, NULL);
        for (int64_t i = 0; i < m; i++) {
            memcpy(ent, buf + i * nw, (size_t)nw * 8);
            ent[nw] = (uint64_t)(x + i);
            heap_offer(&h, ent);
        }
    }
    c->hcount[ch] = h.n;
}

rf_status rf_cpu_top_k(rf_cpu_pool *pool, const rf_cpu_table *t, const int32_t *keycols, const uint8_t *desc,
                       int32_t nkeys, int64_t k, int64_t **perm, int64_t *nout)
{
    *perm = NULL;
    *nout = 0;
    if (!t || nkeys < 0 || t->nrows < 0) return RF_EINTERNAL;
    int64_t n = t->nrows;
    if (k < 0) k = 0;
    if (k > n) k = n;
    if (nkeys == 0 || k == 0 || k > TOPK_HEAP_MAX || k * 8 > n) {
        int64_t *p;
        rf_status st = rf_cpu_sort_perm(pool, t, keycols, desc, nkeys, &p);
        if (st) return st;
        if (k < n) {
            int64_t *q = realloc(p, (size_t)(k ? k : 1) * sizeof(int64_t));
            if (q) p = q;
        }
        *perm = p;
        *nout = k;
        return RF_OK;
    }
    /* key parts: a 128-bit column is two (cpu_table_keys) */
    rf_cpu_kind *kinds = cpu_alloc(CPU_KEY_PARTS(nkeys), sizeof *kinds);
    const void **data = cpu_alloc(CPU_KEY_PARTS(nkeys), sizeof *data);
    uint64_t *lo = cpu_alloc(CPU_KEY_PARTS(nkeys), 8), *hi = cpu_alloc(CPU_KEY_PARTS(nkeys), 8);
    uint8_t *pdesc = cpu_alloc(CPU_KEY_PARTS(nkeys), 1);
    int32_t np = 0;
    cpu_enc e = {0};
    topk_ctx c = {0};
    uint64_t *all = NULL;
    int64_t *p = NULL;
    rf_status st = RF_ENOMEM;
    if (!kinds || !data || !lo || !hi || !pdesc) goto out;
    if ((st = cpu_table_keys(t, keycols, nkeys, desc, kinds, data, pdesc, &np))) goto out;
    cpu_ranges(pool, np, kinds, data, n, lo, hi);
    if ((st = cpu_enc_init(&e, np, kinds, desc ? pdesc : NULL, lo, hi))) goto out;
    st = RF_ENOMEM;
    int32_t st1 = e.nw + 1;
    c.e = &e;
    c.data = data;
    c.k = k;
    c.grain = cpu_grain(n, 65536);
    int64_t nch = (n + c.grain - 1) / c.grain;
    c.heaps = cpu_alloc(nch * k * st1, 8);
    c.hcount = cpu_alloc(nch, sizeof(int64_t));
    c.scratch = cpu_alloc((int64_t)rf_cpu_pool_threads(pool) * BLK * st1, 8);
    all = cpu_alloc(k * st1, 8);
    p = cpu_alloc(k, sizeof(int64_t));
    if (!c.heaps || !c.hcount || !c.scratch || !all || !p) goto out;
    rf_cpu_parallel_for(pool, n, c.grain, topk_chunk, &c);
    /* Merge the chunk heaps into one, then pop it from the back. */
    heap h = {all, 0, k, e.nw};
    for (int64_t ch = 0; ch < nch; ch++)
        for (int64_t i = 0; i < c.hcount[ch]; i++) heap_offer(&h, c.heaps + (ch * k + i) * st1);
    int64_t cnt = h.n;
    while (h.n > 0) {
        p[h.n - 1] = (int64_t)h.a[e.nw];
        heap_swap(h.a, h.a + (h.n - 1) * st1, st1);
        h.n--;
        heap_down(&h, 0);
    }
    *perm = p;
    *nout = cnt;
    p = NULL;
    st = RF_OK;
out:
    free(p);
    free(all);
    free(c.heaps);
    free(c.hcount);
    free(c.scratch);
    cpu_enc_free(&e);
    free(pdesc);
    free(kinds);
    free(data);
    free(lo);
    free(hi);
    return st;
}
