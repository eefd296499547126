/*
** runtime/rt_dict.c: the run's string dictionary (rf_rt_dict): interning of
** byte strings to dense uint32 codes 0..n-1 in first-interned order.
**
** Owns: the strings' bytes, the code -> bytes table and the hash tables;
** with several ranks, how many codes they share (a number runtime/dist sets,
** and the hash of the prefix it compares).
**
** Layout. Interning is split into 64 stripes by the top 6 bits of the
** string's 32-bit hash (the low bits index the stripe's table); each stripe
** has its own mutex, open-addressing table and byte arena, so threads
** interning different strings rarely wait for each other, and a bulk intern
** can work stripe by stripe on tables small enough to stay in cache. Codes
** come from one atomic counter (so while others intern, rf_rt_dict_count
** may include a code whose entry is still being written: only codes a
** caller was given are safe to read). The code -> bytes
** table is a fixed array of segments of growing size (segment k holds
** 2^(k+10) entries) that are never moved or freed before the dictionary, and
** the bytes live in arena chunks that never move either, so rf_rt_dict_str
** and rf_rt_dict_cmp read without locks while other threads intern. Each
** stored string is a 4-byte length, the bytes and a NUL; an entry is a
** pointer to the bytes. A segment holds its entries' lengths too, after
** its pointers (4 bytes a code more), so that the running ends of a range
** of codes (rf_rt_dict_ends: the GPU dictionary copy's offsets) read 4
** bytes a code, not every string's line of the arena.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rf_rt_data.h"
#include "rf_mix.h"

#define STRIPE_BITS 6
#define NSTRIPES (1 << STRIPE_BITS)
#define SEG_BASE_BITS 10
#define NSEGS 22 /* enough for codes below 2^31 */
#define EMPTY UINT32_MAX
#define PEND 0x80000000u            /* a bulk intern's not yet numbered string */
#define MAX_LEN INT64_C(0xfffffff0) /* the length prefix is 32 bits */
#define MAX_TAB (UINT64_C(1) << 26) /* index bits must stay below the stripe bits */
#define CHUNK_MIN ((size_t)16 << 10)
#define CHUNK_MAX ((size_t)1 << 20)
#define BULK_MIN 4096                 /* below this, bulk interns one by one */
#define BULK_BATCH (INT64_C(1) << 30) /* rows of a bulk batch: PEND | position fits 32 bits */

typedef struct slot {
    uint32_t code; /* EMPTY, a code, or PEND | bucket position (during a bulk intern) */
    uint32_t h;    /* the hash: the table index and a cheap filter */
} slot;

typedef struct chunk {
    struct chunk *next;
} chunk; /* the bytes follow the header */

typedef struct stripe {
    _Alignas(64) pthread_mutex_t mu; /* own cache line: stripes are locked by different threads */
    slot *tab;
    uint64_t cap, used; /* cap is 0 or a power of two */
    chunk *chunks;
    char *cur;
    size_t left, next_size;
} stripe;

struct rf_rt_dict {
    stripe st[NSTRIPES];
    _Atomic(const char **) seg[NSEGS];
    pthread_mutex_t segmu;
    _Atomic int64_t count;
    atomic_int broken; /* a failure left a hole in the codes: every later intern fails */
    int64_t shared;    /* codes below it mean the same strings on every rank (runtime/dist) */
};

/* ---- hashing ------------------------------------------------------------ */

__extension__ typedef unsigned __int128 u128;

static inline uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t mum(uint64_t a, uint64_t b)
{
    u128 r = (u128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* wyhash-style: 16 bytes a step through a 64x64->128 multiply. */
uint64_t rf_rt_hash_bytes(const char *s, int64_t n)
{
    const uint64_t k0 = UINT64_C(0xa0761d6478bd642f), k1 = UINT64_C(0xe7037ed1a0b428db);
    const unsigned char *p = (const unsigned char *)s;
    uint64_t seed = UINT64_C(0x243f6a8885a308d3) ^ mum((uint64_t)n ^ k0, k1);
    uint64_t a, b;
    if (n <= 16) {
        if (n >= 4) {
            int64_t q = (n >> 3) << 2;
            a = (rd32(p) << 32) | rd32(p + q);
            b = (rd32(p + n - 4) << 32) | rd32(p + n - 4 - q);
        } else if (n > 0) {
            a = ((uint64_t)p[0] << 16) | ((uint64_t)p[n >> 1] << 8) | p[n - 1];
            b = 0;
        } else {
            a = b = 0;
        }
    } else {
        int64_t i = n;
        while (i > 16) {
            seed = mum(rd64(p) ^ k1, rd64(p + 8) ^ seed);
            p += 16;
            i -= 16;
        }
        a = rd64(p + i - 16);
        b = rd64(p + i - 8);
    }
    return mum(k1 ^ (uint64_t)n, mum(a ^ k0, b ^ seed));
}

static inline uint32_t hash32(const char *s, int64_t n)
{
    uint64_t h = rf_rt_hash_bytes(s, n);
    return (uint32_t)(h ^ (h >> 32));
}

static inline int stripe_of(uint32_t h) { return (int)(h >> (32 - STRIPE_BITS)); }

/* ---- code -> bytes ------------------------------------------------------ */

static inline void seg_pos(uint32_t code, int *k, uint64_t *idx)
{
    uint64_t v = (uint64_t)code + (UINT64_C(1) << SEG_BASE_BITS);
    int top = 63 - __builtin_clzll(v);
    *k = top - SEG_BASE_BITS;
    *idx = v - (UINT64_C(1) << top);
}

static int ensure_seg(rf_rt_dict *d, int k)
{
    if (atomic_load_explicit(&d->seg[k], memory_order_acquire)) return 0;
    pthread_mutex_lock(&d->segmu);
    const char **s = atomic_load_explicit(&d->seg[k], memory_order_relaxed);
    if (!s) {
        s = rf_rt_alloc_big((sizeof *s + sizeof(uint32_t)) << (k + SEG_BASE_BITS));
        if (s) atomic_store_explicit(&d->seg[k], s, memory_order_release);
    }
    pthread_mutex_unlock(&d->segmu);
    return s ? 0 : -1;
}

static inline const char **entry_at(const rf_rt_dict *d, uint32_t code)
{
    int k;
    uint64_t idx;
    seg_pos(code, &k, &idx);
    return atomic_load_explicit(&((rf_rt_dict *)d)->seg[k], memory_order_acquire) + idx;
}

/* Segment k's lengths, after its pointers. */
static inline uint32_t *seg_lens(const char **seg, int k)
{
    return (uint32_t *)(seg + ((size_t)1 << (k + SEG_BASE_BITS)));
}

/* Code c's entry: p (the bytes, after the stored length) and its length n. */
static inline void set_entry(rf_rt_dict *d, uint32_t c, const char *p, uint32_t n)
{
    int k;
    uint64_t idx;
    seg_pos(c, &k, &idx);
    const char **seg = atomic_load_explicit(&d->seg[k], memory_order_acquire);
    seg[idx] = p;
    seg_lens(seg, k)[idx] = n;
}

static inline int64_t stored_len(const char *p)
{
    uint32_t n;
    memcpy(&n, p - 4, 4);
    return n;
}

/* ---- per-stripe storage ------------------------------------------------- */

/* Copies s into the stripe's arena as length, bytes, NUL; NULL on OOM. */
static char *store(stripe *st, const char *s, int64_t len)
{
    size_t need = (size_t)len + 5;
    char *p;
    if (need > CHUNK_MAX / 4) {
        /* a long string gets a block of its own, so the current chunk goes on */
        chunk *c = malloc(sizeof(chunk) + need);
        if (!c) return NULL;
        c->next = st->chunks;
        st->chunks = c;
        p = (char *)(c + 1);
    } else {
        if (need > st->left) {
            size_t sz = st->next_size ? st->next_size : CHUNK_MIN;
            /* a string longer than the next chunk size (up to CHUNK_MAX / 4) still fits */
            while (sz < need) sz *= 2;
            chunk *c = malloc(sizeof(chunk) + sz);
            if (!c) return NULL;
            c->next = st->chunks;
            st->chunks = c;
            st->cur = (char *)(c + 1);
            st->left = sz;
            st->next_size = sz < CHUNK_MAX ? sz * 2 : CHUNK_MAX;
        }
        p = st->cur;
        st->cur += need;
        st->left -= need;
    }
    uint32_t n32 = (uint32_t)len;
    memcpy(p, &n32, 4);
    if (len) memcpy(p + 4, s, (size_t)len);
    p[4 + len] = 0;
    return p + 4;
}

/* Doubles the table, or makes it hold at least want entries. */
static int tab_grow_to(stripe *st, uint64_t want)
{
    uint64_t ncap = st->cap ? st->cap * 2 : 256;
    while (ncap * 7 / 10 < want && ncap < MAX_TAB) ncap *= 2;
    if (ncap > MAX_TAB) return -1;
    slot *nt = rf_rt_alloc_big(ncap * sizeof *nt);
    if (!nt) return -1;
    memset(nt, 0xff, ncap * sizeof *nt);
    uint64_t m = ncap - 1;
    for (uint64_t i = 0; i < st->cap; i++) {
        slot s = st->tab[i];
        if (s.code == EMPTY) continue;
        uint64_t j = s.h & m;
        while (nt[j].code != EMPTY) j = (j + 1) & m;
        nt[j] = s;
    }
    free(st->tab);
    st->tab = nt;
    st->cap = ncap;
    return 0;
}

static int tab_grow(stripe *st) { return tab_grow_to(st, 0); }

static inline int needs_grow(const stripe *st) { return (st->used + 1) * 10 > st->cap * 7; }

/* The strings of a bulk batch, for comparing with PEND slots. */
typedef struct batch_src {
    const int64_t *off;
    const char *bytes;
    const uint32_t *brow; /* bucket position -> row */
} batch_src;

/* The bytes a slot stands for: a stored entry, or a batch's row not yet
** stored (PEND). */
static inline const char *slot_bytes(const rf_rt_dict *d, const batch_src *bs, slot sl, int64_t *n)
{
    if (sl.code & PEND) {
        int64_t r = bs->brow[sl.code & ~PEND];
        *n = bs->off[r + 1] - bs->off[r];
        return bs->bytes + bs->off[r];
    }
    const char *p = *entry_at(d, sl.code);
    *n = stored_len(p);
    return p;
}

/* The slot holding s, or (found = 0) the empty slot where it would go.
** The table must exist. */
static inline uint64_t probe(const rf_rt_dict *d, const stripe *st, const batch_src *bs, uint32_t h, const char *s,
                             int64_t len, int *found)
{
    uint64_t m = st->cap - 1, i = h & m;
    for (;;) {
        slot sl = st->tab[i];
        if (sl.code == EMPTY) {
            *found = 0;
            return i;
        }
        if (sl.h == h) {
            int64_t n;
            const char *p = slot_bytes(d, bs, sl, &n);
            if (n == len && (len == 0 || memcmp(p, s, (size_t)len) == 0)) {
                *found = 1;
                return i;
            }
        }
        i = (i + 1) & m;
    }
}

/* probe for a bulk batch's row: its bytes are read only where a slot's
** hash matches (the rows of a stripe lie all over the batch, and their
** offsets would cost a cache miss each). */
static inline uint64_t probe_row(const rf_rt_dict *d, const stripe *st, const batch_src *bs, uint32_t h, uint32_t row,
                                 uint32_t len, int *found)
{
    uint64_t m = st->cap - 1, i = h & m;
    for (;;) {
        slot sl = st->tab[i];
        if (sl.code == EMPTY) {
            *found = 0;
            return i;
        }
        if (sl.h == h) {
            int64_t n;
            const char *p = slot_bytes(d, bs, sl, &n);
            if (n == (int64_t)len && (len == 0 || memcmp(p, bs->bytes + bs->off[row], len) == 0)) {
                *found = 1;
                return i;
            }
        }
        i = (i + 1) & m;
    }
}

static inline uint64_t empty_slot(const stripe *st, uint32_t h)
{
    uint64_t m = st->cap - 1, i = h & m;
    while (st->tab[i].code != EMPTY) i = (i + 1) & m;
    return i;
}

/* ---- public ------------------------------------------------------------- */

rf_rt_dict *rf_rt_dict_new(void)
{
    /* the stripes are cache-line aligned, which malloc does not promise */
    size_t sz = (sizeof(rf_rt_dict) + 63) / 64 * 64;
    rf_rt_dict *d = aligned_alloc(64, sz);
    if (!d) return NULL;
    memset(d, 0, sz);
    for (int i = 0; i < NSTRIPES; i++) pthread_mutex_init(&d->st[i].mu, NULL);
    pthread_mutex_init(&d->segmu, NULL);
    for (int k = 0; k < NSEGS; k++) atomic_init(&d->seg[k], NULL);
    atomic_init(&d->count, 0);
    atomic_init(&d->broken, 0);
    return d;
}

void rf_rt_dict_free(rf_rt_dict *d)
{
    if (!d) return;
    for (int i = 0; i < NSTRIPES; i++) {
        stripe *st = &d->st[i];
        pthread_mutex_destroy(&st->mu);
        free(st->tab);
        for (chunk *c = st->chunks, *n; c; c = n) {
            n = c->next;
            free(c);
        }
    }
    for (int k = 0; k < NSEGS; k++) free((void *)atomic_load(&d->seg[k]));
    pthread_mutex_destroy(&d->segmu);
    free(d);
}

/* Adds s (known absent) under the stripe's lock. */
static rf_status add_locked(rf_rt_dict *d, stripe *st, uint32_t h, const char *s, int64_t len, uint32_t *code)
{
    if (atomic_load(&d->broken)) return RF_ENOMEM;
    if ((!st->cap || needs_grow(st)) && tab_grow(st)) return RF_ENOMEM;
    /* store the bytes before taking a code, so that running out of memory
    ** there leaves no hole in the codes */
    char *p = store(st, s, len);
    if (!p) return RF_ENOMEM;
    int64_t c = atomic_load(&d->count);
    do {
        if (c >= RF_RT_DICT_MAX_CODES) return RF_ENOMEM;
    } while (!atomic_compare_exchange_weak(&d->count, &c, c + 1));
    int k;
    uint64_t idx;
    seg_pos((uint32_t)c, &k, &idx);
    if (ensure_seg(d, k)) {
        atomic_store(&d->broken, 1);
        return RF_ENOMEM;
    }
    set_entry(d, (uint32_t)c, p, (uint32_t)len);
    uint64_t i = empty_slot(st, h);
    st->tab[i].code = (uint32_t)c;
    st->tab[i].h = h;
    st->used++;
    *code = (uint32_t)c;
    return RF_OK;
}

rf_status rf_rt_dict_intern(rf_rt_dict *d, const char *s, int64_t len, uint32_t *code)
{
    if (len < 0) return RF_EINTERNAL;
    if (len > MAX_LEN) return RF_ENOMEM;
    uint32_t h = hash32(s, len);
    stripe *st = &d->st[stripe_of(h)];
    rf_status rc = RF_OK;
    pthread_mutex_lock(&st->mu);
    int found = 0;
    uint64_t i = st->cap ? probe(d, st, NULL, h, s, len, &found) : 0;
    if (found)
        *code = st->tab[i].code;
    else
        rc = add_locked(d, st, h, s, len, code);
    pthread_mutex_unlock(&st->mu);
    return rc;
}

void rf_rt_dict_reserve(rf_rt_dict *d, int64_t more)
{
    if (more <= 0) return;
    /* each stripe's share, with room for the spread of the hash */
    uint64_t share = (uint64_t)more / NSTRIPES, want_extra = share + share / 8 + 64;
    for (int i = 0; i < NSTRIPES; i++) {
        stripe *st = &d->st[i];
        pthread_mutex_lock(&st->mu);
        uint64_t want = st->used + want_extra;
        /* (a failure leaves the table as it was: it grows when it must) */
        if (want * 10 > st->cap * 7) (void)tab_grow_to(st, want);
        pthread_mutex_unlock(&st->mu);
    }
}

int rf_rt_dict_find(const rf_rt_dict *d, const char *s, int64_t len, uint32_t *code)
{
    if (len < 0 || len > MAX_LEN) return 0;
    uint32_t h = hash32(s, len);
    /* the mutex is the only thing changed, and the dictionary is never const itself */
    stripe *st = &((rf_rt_dict *)d)->st[stripe_of(h)];
    pthread_mutex_lock(&st->mu);
    int found = 0;
    uint64_t i = st->cap ? probe(d, st, NULL, h, s, len, &found) : 0;
    if (found) *code = st->tab[i].code;
    pthread_mutex_unlock(&st->mu);
    return found;
}

const char *rf_rt_dict_str(const rf_rt_dict *d, uint32_t code, int64_t *len)
{
    if ((int64_t)code >= atomic_load_explicit(&((rf_rt_dict *)d)->count, memory_order_relaxed)) {
        *len = 0;
        return NULL;
    }
    const char *p = *entry_at(d, code);
    *len = stored_len(p);
    return p;
}

uint64_t rf_rt_dict_ends(const rf_rt_dict *d, int64_t c0, int64_t c1, uint64_t at, uint64_t *ends)
{
    /* segment by segment: one lookup of the segment per run of its entries */
    for (int64_t c = c0; c < c1;) {
        int k;
        uint64_t idx;
        seg_pos((uint32_t)c, &k, &idx);
        const char **base = atomic_load_explicit(&((rf_rt_dict *)d)->seg[k], memory_order_acquire);
        const uint32_t *lens = seg_lens(base, k) + idx;
        int64_t room = ((int64_t)1 << (k + SEG_BASE_BITS)) - (int64_t)idx, m = c1 - c < room ? c1 - c : room;
        uint64_t *e = ends + (c - c0);
        for (int64_t i = 0; i < m; i++) {
            at += lens[i];
            e[i] = at;
        }
        c += m;
    }
    return at;
}

void rf_rt_dict_gather(const rf_rt_dict *d, int64_t c, int64_t c1, uint64_t skip, char *out, uint64_t n)
{
    while (n > 0 && c < c1) {
        int k;
        uint64_t idx;
        seg_pos((uint32_t)c, &k, &idx);
        const char **base = atomic_load_explicit(&((rf_rt_dict *)d)->seg[k], memory_order_acquire);
        const char *const *seg = base + idx;
        const uint32_t *lens = seg_lens(base, k) + idx;
        int64_t room = ((int64_t)1 << (k + SEG_BASE_BITS)) - (int64_t)idx, m = c1 - c < room ? c1 - c : room, i = 0;
        for (; i < m && n > 0; i++) {
            uint64_t len = lens[i];
            if (skip >= len) { /* (an empty string, or one the range starts after) */
                skip -= len;
                continue;
            }
            uint64_t w = len - skip < n ? len - skip : n;
            memcpy(out, seg[i] + skip, (size_t)w);
            out += w;
            n -= w;
            skip = 0;
        }
        c += i;
    }
}

int64_t rf_rt_dict_count(const rf_rt_dict *d) { return atomic_load(&((rf_rt_dict *)d)->count); }

void rf_rt_dict_set_shared(rf_rt_dict *d, int64_t n) { d->shared = n < 0 ? 0 : n; }

int64_t rf_rt_dict_shared(const rf_rt_dict *d) { return d ? d->shared : 0; }

uint64_t rf_rt_dict_prefix_hash(const rf_rt_dict *d, int64_t n)
{
    /* each string's own hash chained with its length, so that the same
    ** strings in another order or cut elsewhere hash differently */
    uint64_t h = UINT64_C(0x243f6a8885a308d3);
    for (int64_t c = 0; c < n; c++) {
        int64_t len = 0;
        const char *s = rf_rt_dict_str(d, (uint32_t)c, &len);
        h = rf_mix64(h ^ rf_rt_hash_bytes(s, len)) + (uint64_t)len;
    }
    return h;
}

int rf_rt_dict_cmp(const rf_rt_dict *d, uint32_t a, uint32_t b)
{
    if (a == b) return 0;
    int64_t la, lb;
    const char *pa = rf_rt_dict_str(d, a, &la), *pb = rf_rt_dict_str(d, b, &lb);
    return rf_val_cmp_str(pa ? pa : "", la, pb ? pb : "", lb);
}

/* ---- bulk interning ------------------------------------------------------
** Phases (each a parallel loop; between them the threads join). Every pass
** streams through memory: rows are bucketed by stripe, and the passes in
** row order keep one cursor per bucket, starting where the bucketing put
** the range's first row of that stripe.
**   1  hash every row; count rows per stripe per range
**   2  bucket (hash, row) by stripe, in row order within a bucket
**   3  per stripe: look each bucketed row up; res = its code when known,
**      else PEND | the bucket position of its first occurrence, which also
**      goes into the table as a PEND slot so that later rows find it
**   4  in row order: count the first occurrences per range and the bytes
**      their copies take; after prefix sums, number and copy them; then
**      give every row its code
**   5  per stripe: replace the PEND slots by the codes
** All stripe locks are held from 3 to 5. Codes therefore depend only on the
** rows' order, as if interned one at a time. */

typedef struct bulk {
    rf_rt_dict *d;
    batch_src src;
    int64_t n;
    uint32_t *codes;
    int T;
    uint32_t *h;    /* per row */
    uint32_t *bh;   /* bucketed: hash */
    uint32_t *brow; /* bucketed: row */
    uint32_t *blen; /* bucketed: the row's length (phase 3 reads the row's offset only on a hash match) */
    uint32_t *res;  /* bucketed: code, or PEND | position of the first occurrence */
    int64_t *start; /* T x NSTRIPES: where range t's rows of stripe s are bucketed */
    int64_t *pos;   /* T x NSTRIPES: counts, then cursors */
    int64_t sstart[NSTRIPES + 1];
    int64_t snew[NSTRIPES]; /* per stripe: the batch's new strings (phase 3) */
    int64_t base;           /* the batch's first new code */
    atomic_int next_stripe;
    atomic_int failed;
    int64_t *first_count; /* per range: first occurrences, then the first code */
    int64_t *first_bytes; /* per range: the bytes their copies take */
    char **task_block;    /* per range: the block the copies go to */
} bulk;

static inline void range_of(const bulk *b, int t, int64_t *lo, int64_t *hi)
{
    *lo = b->n * t / b->T;
    *hi = b->n * (t + 1) / b->T;
}

static void ph_hash(void *arg, int t)
{
    bulk *b = arg;
    int64_t lo, hi;
    range_of(b, t, &lo, &hi);
    int64_t *cnt = b->pos + (int64_t)t * NSTRIPES;
    const int64_t *off = b->src.off;
    for (int64_t i = lo; i < hi; i++) {
        if (off[i + 1] - off[i] > MAX_LEN) atomic_store(&b->failed, 1);
        uint32_t h = hash32(b->src.bytes + off[i], off[i + 1] - off[i]);
        b->h[i] = h;
        cnt[stripe_of(h)]++;
    }
}

static void ph_scatter(void *arg, int t)
{
    bulk *b = arg;
    int64_t lo, hi;
    range_of(b, t, &lo, &hi);
    int64_t *pos = b->pos + (int64_t)t * NSTRIPES;
    for (int64_t i = lo; i < hi; i++) {
        uint32_t h = b->h[i];
        int64_t q = pos[stripe_of(h)]++;
        b->bh[q] = h;
        b->brow[q] = (uint32_t)i;
        b->blen[q] = (uint32_t)(b->src.off[i + 1] - b->src.off[i]);
    }
}

static void ph_dedupe(void *arg, int t)
{
    (void)t;
    bulk *b = arg;
    rf_rt_dict *d = b->d;
    for (;;) {
        int s = atomic_fetch_add(&b->next_stripe, 1);
        if (s >= NSTRIPES || atomic_load(&b->failed)) return;
        stripe *st = &d->st[s];
        int64_t lo = b->sstart[s], hi = b->sstart[s + 1];
        /* after a sample of the stripe's rows, size the table once for the
        ** share of new strings seen so far instead of doubling it again and
        ** again (growth goes on as usual if the estimate was low) */
        int64_t sample = lo + ((hi - lo) / 16 > 2048 ? (hi - lo) / 16 : 2048);
        uint64_t used0 = st->used;
        for (int64_t q = lo; q < hi; q++) {
            if (q == sample && hi - q > 2048) {
                uint64_t fresh = st->used - used0;
                uint64_t want = st->used + (uint64_t)((double)fresh / (double)(q - lo) * (double)(hi - q) * 1.1);
                if (want * 10 > st->cap * 7 && tab_grow_to(st, want)) {
                    atomic_store(&b->failed, 1);
                    return;
                }
            }
            if (!st->cap || needs_grow(st)) {
                if (tab_grow(st)) {
                    atomic_store(&b->failed, 1);
                    return;
                }
            }
            if (q + 8 < hi) __builtin_prefetch(&st->tab[b->bh[q + 8] & (st->cap - 1)]);
            uint32_t h = b->bh[q];
            int found;
            uint64_t k = probe_row(d, st, &b->src, h, b->brow[q], b->blen[q], &found);
            if (found) {
                b->res[q] = st->tab[k].code;
            } else {
                st->tab[k].code = PEND | (uint32_t)q;
                st->tab[k].h = h;
                st->used++;
                b->res[q] = PEND | (uint32_t)q;
            }
        }
        b->snew[s] = (int64_t)(st->used - used0);
    }
}

/* The row-order walks of phase 4 over range t; mode 0 counts, 1 numbers,
** 2 resolves. Numbering also writes the code over the first occurrence's
** res, where later occurrences and PEND slots (which hold its bucket
** position) find it. */
static void walk(bulk *b, int t, int mode)
{
    int64_t lo, hi;
    range_of(b, t, &lo, &hi);
    int64_t cur[NSTRIPES];
    memcpy(cur, b->start + (int64_t)t * NSTRIPES, sizeof cur);
    const int64_t *off = b->src.off;
    int64_t c = 0, nb = 0;
    char *p = NULL;
    if (mode == 1) {
        if (!b->first_bytes[t]) return;
        /* one block of exactly the bytes needed; it goes to stripe 0 afterwards */
        chunk *blk = rf_rt_alloc_big(sizeof(chunk) + (size_t)b->first_bytes[t]);
        if (!blk) {
            atomic_store(&b->failed, 1);
            return;
        }
        b->task_block[t] = (char *)blk;
        p = (char *)(blk + 1);
        c = b->first_count[t];
    }
    for (int64_t i = lo; i < hi; i++) {
        int64_t q = cur[stripe_of(b->h[i])]++;
        uint32_t r = b->res[q];
        if (mode == 2) {
            /* first occurrences hold their codes since mode 1 */
            b->codes[i] = r & PEND ? b->res[r & ~PEND] : r;
            continue;
        }
        if (r != (PEND | (uint32_t)q)) continue;
        uint32_t n = (uint32_t)(off[i + 1] - off[i]);
        if (mode == 0) {
            c++;
            nb += n + 5;
            continue;
        }
        memcpy(p, &n, 4);
        memcpy(p + 4, b->src.bytes + off[i], n);
        p[4 + n] = 0;
        set_entry(b->d, (uint32_t)c, p + 4, n);
        p += n + 5;
        b->res[q] = (uint32_t)c++;
    }
    if (mode == 0) {
        b->first_count[t] = c;
        b->first_bytes[t] = nb;
    }
}

static void ph_count_first(void *arg, int t) { walk(arg, t, 0); }
static void ph_number(void *arg, int t) { walk(arg, t, 1); }
static void ph_resolve(void *arg, int t) { walk(arg, t, 2); }

/* Phase 5 for one stripe: each PEND slot gets its code. Where the stripe's
** table is much bigger than the batch's rows in it (a big dictionary, a
** column interned a batch at a time), the batch's first occurrences are
** looked up again by hash instead of scanning the whole table: the rows
** whose result is a new code (at least base, no PEND bit: a repeat keeps
** PEND | its first occurrence) are the first occurrences. */
static void ph_patch(void *arg, int t)
{
    (void)t;
    bulk *b = arg;
    for (;;) {
        int s = atomic_fetch_add(&b->next_stripe, 1);
        if (s >= NSTRIPES) return;
        stripe *st = &b->d->st[s];
        int64_t lo = b->sstart[s], hi = b->sstart[s + 1];
        if ((uint64_t)(hi - lo) + (uint64_t)b->snew[s] * 8 < st->cap) {
            uint64_t m = st->cap - 1;
            for (int64_t q = lo; q < hi; q++) {
                uint32_t r = b->res[q];
                if ((r & PEND) || (int64_t)r < b->base) continue;
                uint64_t i = b->bh[q] & m;
                while (st->tab[i].code != (PEND | (uint32_t)q)) i = (i + 1) & m;
                st->tab[i].code = r;
            }
            continue;
        }
        for (uint64_t i = 0; i < st->cap; i++) {
            uint32_t c = st->tab[i].code;
            if (c != EMPTY && (c & PEND)) st->tab[i].code = b->res[c & ~PEND]; /* this stripe's bucket */
        }
    }
}

/* Takes the PEND slots out again (after a failure): rebuilds the tables. */
static void purge_pending(rf_rt_dict *d)
{
    for (int s = 0; s < NSTRIPES; s++) {
        stripe *st = &d->st[s];
        if (!st->cap) continue;
        slot *nt = rf_rt_alloc_big(st->cap * sizeof *nt);
        if (!nt) {
            atomic_store(&d->broken, 1);
            continue;
        }
        memset(nt, 0xff, st->cap * sizeof *nt);
        uint64_t m = st->cap - 1, used = 0;
        for (uint64_t i = 0; i < st->cap; i++) {
            slot sl = st->tab[i];
            if (sl.code == EMPTY || (sl.code & PEND)) continue;
            uint64_t j = sl.h & m;
            while (nt[j].code != EMPTY) j = (j + 1) & m;
            nt[j] = sl;
            used++;
        }
        free(st->tab);
        st->tab = nt;
        st->used = used;
    }
}

static rf_status bulk_batch(rf_rt_dict *d, const int64_t *off, const char *bytes, int64_t n, uint32_t *codes, int T)
{
    bulk b;
    memset(&b, 0, sizeof b);
    b.d = d;
    b.src.off = off;
    b.src.bytes = bytes;
    b.n = n;
    b.codes = codes;
    b.T = T;
    b.h = rf_rt_alloc_big((size_t)n * sizeof *b.h);
    b.bh = rf_rt_alloc_big((size_t)n * sizeof *b.bh);
    b.brow = rf_rt_alloc_big((size_t)n * sizeof *b.brow);
    b.blen = rf_rt_alloc_big((size_t)n * sizeof *b.blen);
    b.res = rf_rt_alloc_big((size_t)n * sizeof *b.res);
    b.start = calloc((size_t)T * NSTRIPES, sizeof *b.start);
    b.pos = calloc((size_t)T * NSTRIPES, sizeof *b.pos);
    b.first_count = calloc((size_t)T, sizeof *b.first_count);
    b.first_bytes = calloc((size_t)T, sizeof *b.first_bytes);
    b.task_block = calloc((size_t)T, sizeof *b.task_block);
    rf_status rc = RF_OK;
    b.src.brow = b.brow;
    if (!b.h || !b.bh || !b.brow || !b.blen || !b.res || !b.start || !b.pos || !b.first_count || !b.first_bytes || !b.task_block) {
        rc = RF_ENOMEM;
        goto out;
    }
    atomic_init(&b.failed, 0);
    atomic_init(&b.next_stripe, 0);

    rf_rt_parallel(T, ph_hash, &b);
    if (atomic_load(&b.failed)) {
        rc = RF_ENOMEM; /* a string of 4 GiB or more */
        goto out;
    }
    int64_t acc = 0;
    for (int s = 0; s < NSTRIPES; s++) {
        b.sstart[s] = acc;
        for (int t = 0; t < T; t++) {
            int64_t c = b.pos[t * NSTRIPES + s];
            b.pos[t * NSTRIPES + s] = b.start[t * NSTRIPES + s] = acc;
            acc += c;
        }
    }
    b.sstart[NSTRIPES] = acc;
    rf_rt_parallel(T, ph_scatter, &b);

    for (int s = 0; s < NSTRIPES; s++) pthread_mutex_lock(&d->st[s].mu);
    if (atomic_load(&d->broken)) {
        rc = RF_ENOMEM;
        goto unlock;
    }
    rf_rt_parallel(T, ph_dedupe, &b);
    if (atomic_load(&b.failed)) {
        purge_pending(d);
        rc = RF_ENOMEM;
        goto unlock;
    }
    rf_rt_parallel(T, ph_count_first, &b);
    int64_t base = atomic_load(&d->count), total = 0;
    b.base = base;
    for (int t = 0; t < T; t++) {
        int64_t c = b.first_count[t];
        b.first_count[t] = base + total;
        total += c;
    }
    if (base + total > RF_RT_DICT_MAX_CODES) {
        purge_pending(d);
        rc = RF_ENOMEM;
        goto unlock;
    }
    if (total > 0) {
        int klo, khi;
        uint64_t idx;
        seg_pos((uint32_t)base, &klo, &idx);
        seg_pos((uint32_t)(base + total - 1), &khi, &idx);
        for (int k = klo; k <= khi; k++)
            if (ensure_seg(d, k)) {
                purge_pending(d);
                rc = RF_ENOMEM;
                goto unlock;
            }
    }
    rf_rt_parallel(T, ph_number, &b);
    /* the copies belong to the dictionary whatever happened */
    for (int t = 0; t < T; t++) {
        chunk *c = (chunk *)b.task_block[t];
        if (!c) continue;
        c->next = d->st[0].chunks;
        d->st[0].chunks = c;
    }
    if (atomic_load(&b.failed)) {
        purge_pending(d);
        rc = RF_ENOMEM;
        goto unlock;
    }
    rf_rt_parallel(T, ph_resolve, &b);
    atomic_store(&b.next_stripe, 0);
    rf_rt_parallel(T, ph_patch, &b);
    atomic_store(&d->count, base + total);

unlock:
    for (int s = NSTRIPES - 1; s >= 0; s--) pthread_mutex_unlock(&d->st[s].mu);
out:
    free(b.h);
    free(b.bh);
    free(b.brow);
    free(b.blen);
    free(b.res);
    free(b.start);
    free(b.pos);
    free(b.first_count);
    free(b.first_bytes);
    free(b.task_block);
    return rc;
}

rf_rt_dict *rf_rt_dict_copy(const rf_rt_dict *d)
{
    rf_rt_dict *c = rf_rt_dict_new();
    int64_t n = rf_rt_dict_count(d);
    if (c) rf_rt_dict_reserve(c, n);
    /* codes are given in order of interning: interned in code order, each
    ** string gets its old code */
    for (int64_t i = 0; c && i < n; i++) {
        int64_t len = 0;
        const char *s = rf_rt_dict_str(d, (uint32_t)i, &len);
        uint32_t code = 0;
        if (rf_rt_dict_intern(c, s, len, &code) || code != (uint32_t)i) {
            rf_rt_dict_free(c);
            c = NULL;
        }
    }
    return c;
}

rf_status rf_rt_dict_intern_many(rf_rt_dict *d, const int64_t *off, const char *bytes, int64_t n, uint32_t *codes,
                                 int threads)
{
    if (n <= 0) return RF_OK;
    if (n < BULK_MIN) {
        for (int64_t i = 0; i < n; i++) {
            rf_status rc = rf_rt_dict_intern(d, bytes + off[i], off[i + 1] - off[i], &codes[i]);
            if (rc) return rc;
        }
        return RF_OK;
    }
    for (int64_t lo = 0; lo < n; lo += BULK_BATCH) {
        int64_t m = n - lo < BULK_BATCH ? n - lo : BULK_BATCH;
        int T = threads < 1 ? 1 : threads > 64 ? 64 : threads;
        if (T > m / (4 * BULK_MIN) + 1) T = (int)(m / (4 * BULK_MIN) + 1);
        rf_status rc = bulk_batch(d, off + lo, bytes, m, codes + lo, T);
        if (rc) return rc;
    }
    return RF_OK;
}
