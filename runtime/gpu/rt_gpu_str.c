/*
** runtime/gpu/rt_gpu_str.c: string work on the GPU: the run's string
** dictionary resident on the device, per-code island tables computed there,
** and byte-order ranks of string codes from radix sorts.
**
** Owns the device copy of the dictionary (gdict: u64 offsets for codes
** 0..n-1 plus one, and the bytes, in code order). It is copied once after
** the inputs are loaded, with the inputs (so its copy counts as loading, not
** as running), and extended in place when a kernel meets a code interned
** later (constants, facts, strings made on the host): capacity is kept with
** some slack, so an extension is usually one small copy of the new tail. The
** host's threads make the bytes in batches of codes straight into the copy's
** staging (h2d_fill), each string read once, with no gathered copy between.
**
** Results are the CPU's exactly: the device functions are ports of
** common/rf_value.c (skeletons/cuda/rf_str.cuh); a string an island makes
** is a byte range of the code's own string, and the host interns only the
** distinct ranges (one per distinct result), so the result codes are the
** dictionary's own. Ranks sort the codes present by their bytes with one
** stable radix sort per 8-byte chunk, least significant first, after one by
** length: the order of rf_val_cmp_str (bytes, then length) exactly.
*/
#include "rf_rt_data.h"
#include "rt_gpu_internal.h"

#include <stdlib.h>
#include <string.h>

static rf_status slaunch(gstr *s, const char *name, int64_t work, const rf_gpu_args *a)
{
    if (work <= 0) return RF_OK;
    void *fn;
    rf_status st = s->g->ops->func(s->g, name, &fn);
    if (st) return st;
    uint64_t grid = ((uint64_t)work + RF_GPU_TILE - 1) / RF_GPU_TILE;
    if (grid > s->g->max_grid) grid = s->g->max_grid;
    return s->g->ops->launch(s->g, fn, name, grid, a);
}

void rf_gpu_dict_free(gstr *s)
{
    rf_gpool_release(s->pool, &s->dd.off);
    rf_gpool_release(s->pool, &s->dd.bytes);
    memset(&s->dd, 0, sizeof s->dd);
}

/* buf grown to want bytes (a kept buffer), its first used bytes copied over. */
static rf_status dict_grow(gstr *s, gbuf *buf, uint64_t want, uint64_t used)
{
    gbuf nb = {0, 0};
    rf_status st = rf_gpool_alloc_kept(s->pool, want, &nb);
    if (!st && buf->p && used) st = s->g->ops->d2d(s->g, nb.p, buf->p, used);
    if (st) {
        rf_gpool_release(s->pool, &nb);
        return st;
    }
    rf_gpool_release(s->pool, buf);
    *buf = nb;
    return RF_OK;
}

/* dict_grow, and where the pool has the room but not in one piece, once
** more with the other array (other_used bytes of it) moved out of the way:
** kept from an earlier run, it can lie in the middle of the room that the
** input cache's evictions freed (under a tight --gpu-memory cap, a 704 KiB
** offsets array left no 3 MiB range with 5.3 MiB free). It goes through
** host memory and comes back after the grown one, beside it. */
static rf_status dict_grow_moving(gstr *s, gbuf *buf, uint64_t want, uint64_t used, gbuf *other, uint64_t other_used)
{
    rf_diags *d = s->g->d;
    int64_t nd = d->count, ne = d->nerrors;
    rf_status st = dict_grow(s, buf, want, used);
    if (st != RF_EDEVMEM || !other->p) return st;
    void *h = malloc(other_used ? (size_t)other_used : 1);
    if (!h) return st;
    uint64_t on = other->n;
    if (s->g->ops->d2h(s->g, h, other->p, other_used)) {
        free(h);
        return st;
    }
    rf_diags_truncate(d, nd, ne);
    rf_gpool_release(s->pool, other);
    st = dict_grow(s, buf, want, used);
    /* back, beside it (or where it was, when the grown one still did not fit) */
    rf_status bst = rf_gpool_alloc_kept(s->pool, on, other);
    if (!bst) bst = s->g->ops->h2d(s->g, other->p, h, other_used);
    free(h);
    if (bst) {
        /* the copy is lost: the next sync copies the dictionary anew */
        rf_gpu_dict_free(s);
        return st ? st : bst;
    }
    return st;
}

/* Room for ncodes codes and nbytes bytes, keeping what is there. */
static rf_status dict_reserve(gstr *s, int64_t ncodes, uint64_t nbytes)
{
    gdict *dd = &s->dd;
    rf_status st = RF_OK;
    uint64_t off_used = dd->off.p ? (uint64_t)(dd->n + 1) * 8 : 0;
    if ((uint64_t)(ncodes + 1) * 8 > dd->off.n) {
        /* slack: an extension by constants or facts should not copy it all.
        ** Under a memory cap only a sixteenth more (and the pool's rounding to
        ** 256 bytes): room is what the run lacks, and a fixed 256 codes and 4
        ** KiB of bytes held 6.4 KB of an 8 KiB cap for a dictionary of a few
        ** dozen bytes, leaving a kernel no room */
        uint64_t want = (uint64_t)(ncodes + ncodes / 16 + (s->g->mem_cap ? 0 : 65536) + 1) * 8;
        st = dict_grow_moving(s, &dd->off, want, off_used, &dd->bytes, dd->nbytes);
        off_used = dd->off.p ? (uint64_t)(dd->n + 1) * 8 : 0;
    }
    if (!st && (nbytes > dd->bytes.n || !dd->bytes.p)) {
        /* (under a cap at least a byte: a copy of no bytes yet has its buffer) */
        uint64_t want = nbytes + nbytes / 16 + (s->g->mem_cap ? 1 : (uint64_t)1 << 20);
        st = dict_grow_moving(s, &dd->bytes, want, dd->nbytes, &dd->off, off_used);
    }
    return st;
}

/* One batch of a copy, codes [c0, c1), in two passes over slices of the
** codes, a thread each: the first notes each code's end (its length added
** to its slice's: rf_rt_dict_ends reads the lengths the code table keeps, 4
** bytes a code, not the strings), which become absolute once the slices'
** sums are known;
** the second runs inside the copy (h2d_fill): each piece of the batch's
** bytes is made straight where the copy takes it from (the real device's
** pinned staging buffer), the codes it covers found by their ends, so that
** no gathered copy of the strings is made on the host. A bulk intern keeps
** the strings it adds in code order (rt_dict.c), so both passes stream. */
typedef struct dsync {
    const rf_rt_dict *dict;
    int64_t c0, c1;
    int T;
    uint64_t *offs;   /* offs[i]: end of code c0 + i */
    uint64_t len[64]; /* bytes of thread t's slice */
    uint64_t add[64]; /* where thread t's slice starts (absolute), for the fix-up */
    uint64_t base;    /* where code c0 starts (absolute) */
    int phase;
} dsync;

static void slice(int64_t lo, int64_t hi, int T, int t, int64_t *a, int64_t *b)
{
    int64_t n = hi - lo, per = (n + T - 1) / T;
    *a = lo + per * t;
    *b = *a + per;
    if (*a > hi) *a = hi;
    if (*b > hi) *b = hi;
}

static void dsync_task(void *arg, int t)
{
    dsync *ds = arg;
    int64_t a, b;
    slice(ds->c0, ds->c1, ds->T, t, &a, &b);
    if (ds->phase == 1) {
        for (int64_t c = a; c < b; c++) ds->offs[c - ds->c0] += ds->add[t];
        return;
    }
    ds->len[t] = rf_rt_dict_ends(ds->dict, a, b, 0, ds->offs + (a - ds->c0));
}

/* h2d_fill's source: bytes [begin, end) of the batch, from the strings of
** the codes they cover (the first found by binary search on the ends),
** gathered a segment of the code table at a time (rf_rt_dict_gather). */
static void dsync_fill(void *ctx, uint64_t begin, uint64_t end, char *out)
{
    const dsync *ds = ctx;
    int64_t n = ds->c1 - ds->c0, lo = 0, hi = n;
    /* the first code that ends after begin */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ds->offs[mid] - ds->base > begin)
            hi = mid;
        else
            lo = mid + 1;
    }
    uint64_t s0 = lo ? ds->offs[lo - 1] - ds->base : 0;
    if (lo < n) rf_rt_dict_gather(ds->dict, ds->c0 + lo, ds->c1, begin - s0, out, end - begin);
}

#define BATCH_CODES (INT64_C(1) << 23)

rf_status rf_gpu_dict_sync(gstr *s, int64_t need)
{
    gdict *dd = &s->dd;
    int64_t cnt = rf_rt_dict_count(s->dict);
    if (need > cnt) return RF_EINTERNAL; /* a code the dictionary never gave */
    s->synced = 1;
    if (s->idle) *s->idle -= s->idle_dd; /* a copy kept from earlier runs: this run's now */
    s->idle = NULL;
    s->idle_dd = 0;
    /* only the codes asked for: a column's codes lie below need, and codes
    ** interned later (another table's strings, say) wait for a kernel that
    ** reads them */
    if (need > 0) cnt = need;
    if (cnt <= dd->n && dd->off.p) return RF_OK;
    int Tmax = s->threads < 1 ? 1 : s->threads > 64 ? 64 : s->threads;
    int64_t batch = s->batch_codes > 0 ? s->batch_codes : BATCH_CODES;
    if (batch > cnt - dd->n) batch = cnt - dd->n; /* (an extension: room for its codes only) */
    uint64_t *offs = rf_malloc((size_t)batch * 8 + 8);
    rf_status st = offs ? RF_OK : RF_ENOMEM;
    if (!st && dd->n == 0) {
        /* (room for the codes there are: later batches rarely move it) */
        st = dict_reserve(s, cnt, 0);
        uint64_t zero = 0;
        if (!st) st = s->g->ops->h2d(s->g, dd->off.p, &zero, 8);
    }
    int64_t first_code = dd->n;
    uint64_t first_bytes = dd->nbytes;
    while (!st && dd->n < cnt) {
        dsync ds;
        memset(&ds, 0, sizeof ds);
        ds.dict = s->dict;
        ds.c0 = dd->n;
        ds.c1 = cnt - dd->n > batch ? dd->n + batch : cnt;
        ds.offs = offs;
        ds.base = dd->nbytes;
        /* (an extension by a few codes: one thread) */
        ds.T = ds.c1 - ds.c0 < 65536 && !s->batch_codes ? 1 : Tmax;
        rf_rt_parallel(ds.T, dsync_task, &ds);
        uint64_t at = dd->nbytes;
        for (int t = 0; t < ds.T; t++) {
            ds.add[t] = at;
            at += ds.len[t];
        }
        ds.phase = 1;
        rf_rt_parallel(ds.T, dsync_task, &ds);
        /* room for the rest too, estimated from the bytes per code so
        ** far (an eighth more): the bytes rarely move more than once */
        uint64_t want = at;
        if (at > dd->bytes.n && cnt > ds.c1)
            want += (uint64_t)((double)(at - first_bytes) / (double)(ds.c1 - first_code) * (double)(cnt - ds.c1) *
                               1.125);
        st = dict_reserve(s, cnt, want);
        if (!st && at > dd->nbytes) st = s->g->ops->h2d_fill(s->g, dd->bytes.p + dd->nbytes, at - dd->nbytes, dsync_fill, &ds);
        if (!st)
            st = s->g->ops->h2d(s->g, dd->off.p + (uint64_t)(ds.c0 + 1) * 8, offs, (uint64_t)(ds.c1 - ds.c0) * 8);
        /* the offsets are read by the copy: wait for it */
        if (!st) st = s->g->ops->sync(s->g);
        if (!st) {
            s->copied += at - dd->nbytes + (uint64_t)(ds.c1 - ds.c0) * 8;
            dd->nbytes = at;
            dd->n = ds.c1;
        }
    }
    free(offs);
    return st;
}

rf_status rf_gpu_code_range(gstr *s, gptr col, gptr rows, int64_t n, int64_t *lo, int64_t *hi)
{
    gbuf mm = {0, 0};
    uint64_t init[2] = {UINT64_MAX, 0}, got[2] = {UINT64_MAX, 0};
    rf_status st = rf_gpool_alloc(s->pool, 16, &mm);
    if (!st) st = s->g->ops->h2d(s->g, mm.p, init, 16);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.c0[0] = col;
    a.r0 = rows;
    RF_A_CODE_RANGE_OUT(a) = mm.p;
    if (!st) st = slaunch(s, "rf_code_range", n, &a);
    if (!st) st = s->g->ops->d2h(s->g, got, mm.p, 16);
    rf_gpool_release(s->pool, &mm);
    *lo = (int64_t)got[0];
    *hi = (int64_t)got[1];
    return st;
}

rf_status rf_gpu_code_set(gstr *s, gptr col, gptr rows, int64_t n, int64_t *lo, int64_t *hi, gbuf *bm)
{
    rf_status st = rf_gpu_code_range(s, col, rows, n, lo, hi);
    if (st) return st;
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.c0[0] = col;
    a.r0 = rows;
    uint64_t span = (uint64_t)(*hi - *lo + 1);
    st = rf_gpool_alloc(s->pool, span + 1, bm);
    if (!st) st = s->g->ops->memset8(s->g, bm->p, 0, span + 1);
    RF_A_CODE_BITS_OUT(a) = bm->p;
    RF_A_CODE_LO(a) = *lo;
    if (!st) st = slaunch(s, "rf_code_mark", n, &a);
    if (st) rf_gpool_release(s->pool, bm);
    return st;
}

/* The span indices where flags (n bytes) are 1: *out (i64, owned), *m. */
static rf_status select_flags(gstr *s, gptr flags, int64_t n, gbuf *out, int64_t *m)
{
    uint64_t tb = 0;
    gbuf t = {0, 0}, cnt = {0, 0};
    rf_status st = rf_gpool_alloc(s->pool, (uint64_t)n * 8, out);
    if (!st) st = rf_gpool_alloc(s->pool, 8, &cnt);
    if (!st) st = s->g->ops->select(s->g, 0, &tb, flags, out->p, cnt.p, n);
    if (!st) st = rf_gpool_alloc(s->pool, tb ? tb : 8, &t);
    if (!st) st = s->g->ops->select(s->g, t.p, &tb, flags, out->p, cnt.p, n);
    rf_gpool_release(s->pool, &t);
    if (!st) st = s->g->ops->d2h(s->g, m, cnt.p, 8);
    rf_gpool_release(s->pool, &cnt);
    if (st) rf_gpool_release(s->pool, out);
    return st;
}

/* The views of a string island -> codes: distinct views found on the device,
** interned on the host (only those), spread back over the span. */
static rf_status intern_views(gstr *s, rf_gpu_args *a, int64_t span, int64_t lo, gbuf *table)
{
    gbuf slots = {0, 0}, flags = {0, 0}, reps = {0, 0}, rv = {0, 0}, rc = {0, 0}, pres = {0, 0};
    int64_t m = 0, np = 0;
    uint64_t *hv = NULL;
    int64_t *hr = NULL;
    uint32_t *hc = NULL;
    /* the table has room for twice the codes present (not the span: the
    ** codes of a column need not be dense) */
    rf_status st = select_flags(s, RF_A_STR_PRESENT(*a), span, &pres, &np);
    rf_gpool_release(s->pool, &pres);
    uint64_t cap = pow2_at_least((uint64_t)np * 2);
    if (!st) st = rf_gpool_alloc(s->pool, cap * 8, &slots);
    if (!st) st = s->g->ops->memset8(s->g, slots.p, 0xff, cap * 8);
    RF_A_STR_SLOTS(*a) = slots.p;
    RF_A_STR_MASK(*a) = (int64_t)(cap - 1);
    if (!st) st = slaunch(s, "rf_str_dedup", span, a);
    if (!st) st = rf_gpool_alloc(s->pool, (uint64_t)span + 1, &flags);
    RF_A_STR_REP_OUT(*a) = flags.p;
    if (!st) st = slaunch(s, "rf_str_rep", span, a);
    if (!st) st = select_flags(s, flags.p, span, &reps, &m);
    if (!st && m > 0) {
        /* the representatives' views, gathered, then read back */
        rf_gpu_args g;
        memset(&g, 0, sizeof g);
        st = rf_gpool_alloc(s->pool, (uint64_t)m * 8, &rv);
        g.n = m;
        RF_A_NCOLS(g) = 1;
        RF_A_WIDTH(g, 0) = 8;
        g.r0 = reps.p;
        g.c0[0] = RF_A_STR_TABLE(*a);
        g.o[0] = rv.p;
        if (!st) st = slaunch(s, "rf_gather", m, &g);
        hv = rf_malloc((size_t)m * 8);
        hr = rf_malloc((size_t)m * 8);
        hc = rf_malloc((size_t)m * 4);
        if (!st && (!hv || !hr || !hc)) st = RF_ENOMEM;
        if (!st) st = s->g->ops->d2h(s->g, hv, rv.p, (uint64_t)m * 8);
        if (!st) st = s->g->ops->d2h(s->g, hr, reps.p, (uint64_t)m * 8);
        for (int64_t q = 0; q < m && !st; q++) {
            int64_t len = 0;
            const char *p = rf_rt_dict_str(s->dict, (uint32_t)(lo + hr[q]), &len);
            uint64_t from = hv[q] >> 32, to = hv[q] & 0xffffffffu;
            if (!p || to < from || (int64_t)to > len)
                st = RF_EINTERNAL;
            else
                st = rf_rt_dict_intern(s->dict, p + from, (int64_t)(to - from), &hc[q]);
        }
        if (!st) st = rf_gpool_alloc(s->pool, (uint64_t)m * 4, &rc);
        if (!st) st = s->g->ops->h2d(s->g, rc.p, hc, (uint64_t)m * 4);
    }
    if (!st) st = rf_gpool_alloc(s->pool, (uint64_t)span * 4, table);
    RF_A_STR_CODES(*a) = table->p;
    RF_A_STR_REPS(*a) = reps.p;
    RF_A_STR_REP_CODES(*a) = rc.p;
    a->n = m;
    if (!st) st = slaunch(s, "rf_str_scatter", m, a);
    a->n = span;
    if (!st) st = slaunch(s, "rf_str_resolve", span, a);
    /* hv, hc are read by the copies above: wait before freeing them */
    if (!st) st = s->g->ops->sync(s->g);
    free(hv);
    free(hr);
    free(hc);
    rf_gpool_release(s->pool, &slots);
    rf_gpool_release(s->pool, &flags);
    rf_gpool_release(s->pool, &reps);
    rf_gpool_release(s->pool, &rv);
    rf_gpool_release(s->pool, &rc);
    if (st) rf_gpool_release(s->pool, table);
    return st;
}

rf_status rf_gpu_str_island(gstr *s, int32_t kid, int32_t j, const rf_gpu_island *is, gptr col, gptr rows, int64_t n,
                            gbuf *table, int64_t *base)
{
    *base = 0;
    if (n <= 0) return RF_OK;
    int64_t lo, hi;
    gbuf bm = {0, 0}, out = {0, 0};
    rf_status st = rf_gpu_code_set(s, col, rows, n, &lo, &hi, &bm);
    if (st) return st;
    int64_t span = hi - lo + 1;
    st = rf_gpu_dict_sync(s, hi + 1);
    int w = is->e->type == RF_TYPE_BOOL ? 1 : 8;
    if (!st) st = rf_gpool_alloc(s->pool, (uint64_t)span * (uint64_t)w, &out);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = span;
    RF_A_CODE_LO(a) = lo;
    RF_A_STR_PRESENT(a) = bm.p;
    RF_A_STR_TABLE(a) = out.p;
    RF_A_DICT_OFFSETS(a) = s->dd.off.p;
    RF_A_DICT_BYTES(a) = s->dd.bytes.p;
    char name[64];
    snprintf(name, sizeof name, "rfk%d_isl%d", kid, j);
    if (!st) st = slaunch(s, name, span, &a);
    if (!st && is->e->type == RF_TYPE_STRING) {
        st = intern_views(s, &a, span, lo, table);
        rf_gpool_release(s->pool, &out);
    } else if (!st) {
        *table = out;
        memset(&out, 0, sizeof out);
    }
    rf_gpool_release(s->pool, &out);
    rf_gpool_release(s->pool, &bm);
    *base = lo;
    return st;
}

/* Stable sort of (keys, vals) by key bits [0, bits), into fresh buffers. */
static rf_status ssort(gstr *s, gptr keys, gptr vals, int64_t n, int bits, gbuf *kout, gbuf *vout)
{
    uint64_t tb = 0;
    gbuf t = {0, 0};
    rf_status st = rf_gpool_alloc(s->pool, (uint64_t)n * 8, kout);
    if (!st) st = rf_gpool_alloc(s->pool, (uint64_t)n * 8, vout);
    if (!st) st = s->g->ops->sort_pairs(s->g, 0, &tb, keys, kout->p, vals, vout->p, n, 0, bits);
    if (!st) st = rf_gpool_alloc(s->pool, tb ? tb : 8, &t);
    if (!st) st = s->g->ops->sort_pairs(s->g, t.p, &tb, keys, kout->p, vals, vout->p, n, 0, bits);
    rf_gpool_release(s->pool, &t);
    return st;
}

/* Up to this many rows, string ranks are made on the host from the codes
** the rows hold (one copy back of 4 bytes a row, the CPU's comparison): the
** device then needs no copy of the dictionary for them (TPC-H q01 sorts 4
** rows by two strings: its whole dictionary, a third of the bytes it copied
** to the device at SF 0.1, was copied for them). */
#define HOST_RANK_ROWS 65536

static int cmp_codes(const rf_rt_dict *d, uint32_t a, uint32_t b)
{
    int64_t la = 0, lb = 0;
    const char *sa = rf_rt_dict_str(d, a, &la), *sb = rf_rt_dict_str(d, b, &lb);
    return rf_val_cmp_str(sa, la, sb, lb);
}

/* Sorts the distinct codes c[0..n) by their strings (merge sort: tmp holds n). */
static void sort_codes(const rf_rt_dict *d, uint32_t *c, uint32_t *tmp, int64_t n)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t i = 0; i < n; i += 2 * w) {
            int64_t m = i + w < n ? i + w : n, e = i + 2 * w < n ? i + 2 * w : n, p = i, q = m, o = i;
            while (p < m && q < e) tmp[o++] = cmp_codes(d, c[p], c[q]) <= 0 ? c[p++] : c[q++];
            while (p < m) tmp[o++] = c[p++];
            while (q < e) tmp[o++] = c[q++];
        }
        memcpy(c, tmp, (size_t)n * sizeof *c);
    }
}

/* Ranks for few rows are made on the host while the codes' span is at most
** this: the rank array it copies to the device holds 4 bytes a code of the
** span (64 MiB here), against the dictionary's strings up to the greatest
** code that the device path copies (TPC-H q18 at SF 10 sorts 624 rows by
** c_name, whose codes span 1.5 M strings: 282 ms on an H100 on the device
** path). */
#define HOST_RANK_SPAN (INT64_C(1) << 24)

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* rf_gpu_str_ranks for few rows, on the host: the distinct codes of the n
** rows (sorted by value, then by string), their ranks scattered into an
** array over the span [lo, lo + span) of codes. */
static rf_status host_ranks(gstr *s, gptr col, int64_t n, int64_t lo, int64_t span, gbuf *ranks, gbuf *back)
{
    uint32_t *codes = rf_malloc((size_t)n * 4 + 4), *tmp = rf_malloc((size_t)n * 4 + 4);
    uint32_t *rk = rf_calloc((size_t)span + 1, 4);
    rf_status st = codes && tmp && rk ? RF_OK : RF_ENOMEM;
    if (!st) st = s->g->ops->d2h(s->g, codes, col, (uint64_t)n * 4);
    int64_t np = 0;
    if (!st) {
        qsort(codes, (size_t)n, sizeof *codes, cmp_u32);
        for (int64_t i = 0; i < n; i++)
            if (!np || codes[i] != codes[np - 1]) codes[np++] = codes[i];
        sort_codes(s->dict, codes, tmp, np);
    }
    for (int64_t r = 0; !st && r < np; r++) rk[codes[r] - lo] = (uint32_t)r;
    if (!st) st = rf_gpool_alloc(s->pool, (uint64_t)span * 4, ranks);
    if (!st) st = s->g->ops->h2d(s->g, ranks->p, rk, (uint64_t)span * 4);
    if (!st && back) st = rf_gpool_alloc(s->pool, (uint64_t)np * 4, back);
    if (!st && back) st = s->g->ops->h2d(s->g, back->p, codes, (uint64_t)np * 4);
    if (!st) st = s->g->ops->sync(s->g); /* the host buffers are read by the copies */
    free(codes);
    free(tmp);
    free(rk);
    if (st) {
        rf_gpool_release(s->pool, ranks);
        if (back) rf_gpool_release(s->pool, back);
    }
    return st;
}

rf_status rf_gpu_str_ranks(gstr *s, gptr col, int64_t n, gbuf *ranks, int64_t *lo, gbuf *back)
{
    int64_t hi, np = 0;
    gbuf bm = {0, 0}, idx = {0, 0}, keys = {0, 0}, mx = {0, 0};
    *lo = 0;
    if (n <= 0) return RF_OK;
    rf_status st = rf_gpu_code_set(s, col, 0, n, lo, &hi, &bm);
    if (st) return st;
    int64_t span = hi - *lo + 1;
    if (n <= HOST_RANK_ROWS && span <= HOST_RANK_SPAN) {
        rf_gpool_release(s->pool, &bm);
        return host_ranks(s, col, n, *lo, span, ranks, back);
    }
    if (!st) st = rf_gpu_dict_sync(s, hi + 1);
    if (!st) st = select_flags(s, bm.p, span, &idx, &np);
    rf_gpool_release(s->pool, &bm);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = np;
    RF_A_CHUNK_CODE_LO(a) = *lo;
    RF_A_DICT_OFFSETS(a) = s->dd.off.p;
    RF_A_DICT_BYTES(a) = s->dd.bytes.p;
    uint64_t maxlen = 0;
    if (!st) st = rf_gpool_alloc(s->pool, (uint64_t)np * 8, &keys);
    if (!st) st = rf_gpool_alloc(s->pool, 8, &mx);
    if (!st) st = s->g->ops->memset8(s->g, mx.p, 0, 8);
    /* least significant first: the length (which orders a string after
    ** its zero-padded equals), then the chunks from the last to the first */
    for (int64_t c = -1; !st; c--) {
        if (c == -1) {
            RF_A_CHUNK(a) = -1;
            RF_A_CHUNK_MAXLEN(a) = mx.p;
        } else {
            RF_A_CHUNK(a) = c;
            RF_A_CHUNK_MAXLEN(a) = 0;
        }
        a.c0[0] = idx.p;
        RF_A_CHUNK_KEYS_OUT(a) = keys.p;
        st = slaunch(s, "rf_str_chunk", np, &a);
        int bits = 64;
        if (!st && c == -1) {
            st = s->g->ops->d2h(s->g, &maxlen, mx.p, 8);
            bits = 1;
            while (bits < 64 && (maxlen >> bits)) bits++;
        }
        gbuf ks = {0, 0}, vs = {0, 0};
        if (!st && np > 1) st = ssort(s, keys.p, idx.p, np, bits, &ks, &vs);
        if (!st && np > 1) {
            rf_gpool_release(s->pool, &idx);
            idx = vs;
            memset(&vs, 0, sizeof vs);
        }
        rf_gpool_release(s->pool, &ks);
        rf_gpool_release(s->pool, &vs);
        if (c == -1) c = (int64_t)((maxlen + 7) / 8); /* the next round reads chunk c - 1 */
        if (c == 0) break;
    }
    rf_gpool_release(s->pool, &keys);
    rf_gpool_release(s->pool, &mx);
    if (!st) st = rf_gpool_alloc(s->pool, (uint64_t)span * 4, ranks);
    if (!st && back) st = rf_gpool_alloc(s->pool, (uint64_t)np * 4, back);
    memset(&a, 0, sizeof a);
    a.n = np;
    RF_A_CODE_LO(a) = *lo;
    a.c0[0] = idx.p;
    RF_A_RANK_OUT(a) = ranks->p;
    RF_A_RANK_BACK(a) = back ? back->p : 0;
    if (!st) st = slaunch(s, "rf_rank_scatter", np, &a);
    rf_gpool_release(s->pool, &idx);
    if (st) {
        rf_gpool_release(s->pool, ranks);
        if (back) rf_gpool_release(s->pool, back);
    }
    return st;
}
