/*
** runtime/gpu/rt_gpu_fusedpart.c: a fused kernel of totals run in row ranges
** of its input when the input does not fit in GPU memory (under the
** --gpu-memory cap, or a full GPU).
**
** Owns: which fused kernels can run in ranges, the ranges, and the exact
** combination of the ranges' totals. A fused kernel whose stages are
** row-local and end in totals (rf_gpu_ftotal: counts, exact 128-bit sums,
** averages as sum and count; grouped or over all rows; TPC-H q01 and q06)
** needs nothing of its input but the rows of the range it reads: its input
** (the relation its first stage maps, the index its join or gather maps
** read, or with a join's probe the left rows) waits in host memory, and each
** range's columns (only those the stages read) come to the device, run
** through the whole fused kernel, and go. Nothing is written between the
** stages, as uncapped: the map's output is never made.
**
** Each range hands back its accumulator words (rf_gx_k_fused_words), which
** the host adds up: counts and the (low, high) words of the 128-bit sums
** with their carries; a grouped total's records matched by their keys, each
** group's first row (the range's row plus the range's start) the least of
** its ranges', so the groups come out ordered by first occurrence as GROUP
** numbers them. The combined words are those the whole input would have
** summed, and the results are finished from them by the CPU's rules as
** uncapped (rf_gx_fused_finish): byte-identical outputs. Sums are exact and
** order-free, so no range boundary changes a result.
**
** Ranges start from the cap (each range's columns at most half of it) and
** double while one range does not fit. A stage's run-time error in any
** range, or more groups than a table holds (in one range or together), ends
** the attempt: the stages then run one by one, the path uncapped runs take
** for the CPU's message or the groups. So does a range of one row that does
** not fit. `--profile` counts the fused kernels run in ranges and their ranges.
*/
#include "rt_gpu_internal.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_PARTS = 1 << 20 };

/* The variable whose rows u's ranges split (*index: it is an index, its
** entries split), or -1 where u cannot run in ranges. */
static int32_t split_var(const gx *x, const rf_gpu_funit *u, int *index)
{
    *index = 0;
    if (!u->ntot || u->n < 1) return -1;
    const rf_hir_kernel *h = u->m[0].k;
    if (u->src) {
        /* a join's probe: ranges of the left rows, the build on the right side whole */
        const rf_hir_kernel *j = u->src;
        if ((j->kind != RF_HIR_JOIN_INDEX && j->kind != RF_HIR_ANTI_INDEX) || j->nin != 2) return -1;
        if (j->in[0] == j->in[1] || h->in[0] != j->in[0]) return -1;
        return j->in[0];
    }
    if (h->kind == RF_HIR_MAP) return h->nin == 1 && h->idx < 0 ? h->in[0] : -1;
    if ((h->kind == RF_HIR_JOIN_MAP || h->kind == RF_HIR_GATHER_MAP) && h->idx >= 0) {
        /* (its sides, in[0] and in[1], stay whole; the index may be listed after them) */
        for (int32_t i = 0; i < h->nin && i < 2; i++)
            if (h->in[i] == h->idx) return -1;
        *index = 1;
        return h->idx;
    }
    (void)x;
    return -1;
}

/* The variables u reads whole on the device beside the split one: the
** sides of an index, a join's build side. */
static int32_t whole_vars(const rf_gpu_funit *u, int32_t sv, int32_t out[2])
{
    int32_t n = 0;
    const rf_hir_kernel *h = u->m[0].k;
    if (u->src) {
        out[n++] = u->src->in[1];
    } else if (h->kind != RF_HIR_MAP) {
        for (int32_t i = 0; i < h->nin && i < 2; i++)
            if (h->in[i] >= 0 && h->in[i] != sv) out[n++] = h->in[i];
    }
    return n;
}

int rf_gx_fused_ranges_can(const gx *x, const rf_gpu_funit *u, int held)
{
    int index;
    int32_t sv = split_var(x, u, &index);
    if (sv < 0) return 0;
    const gval *v = &x->vals[sv];
    /* in host memory (a narrow set's or a set in partitions' rows are not plain columns) */
    if ((held && !v->held) || v->rp || v->narrow || v->nrows < 2) return 0;
    int32_t other[2], nother = whole_vars(u, sv, other);
    for (int32_t i = 0; i < nother; i++)
        if (x->vals[other[i]].narrow) return 0; /* (read 64-bit by the fused kernel: widened first, unfused) */
    return 1;
}

/* Adds 128-bit (lo, hi) words s into d, the carry of the low word into the high. */
static void add128(uint64_t *d, const uint64_t *s)
{
    uint64_t lo = d[0] + s[0];
    d[1] += s[1] + (lo < d[0]);
    d[0] = lo;
}

/* Range words w (rows from lo) added to the combined words into: 0 where a
** grouped total has more groups than its table holds. */
static int combine(const rf_gpu_funit *u, uint64_t *into, const uint64_t *w, int64_t lo)
{
    for (int32_t t = 0; t < u->ntot; t++) {
        const rf_gpu_ftotal *T = &u->tot[t];
        uint64_t *d = into + T->acc;
        const uint64_t *s = w + T->acc;
        if (!T->ngroup) {
            /* the row count, then (low, high) per aggregate */
            d[0] += s[0];
            for (int32_t i = 0; i < T->reduce->naggs; i++) add128(&d[1 + 2 * i], &s[1 + 2 * i]);
            continue;
        }
        /* [status, count, heads, records]: a record [keys, first row, count, (low, high) per sum] */
        if (s[0] || s[1] > RF_GPU_FUSE_GROUPS) return 0;
        int32_t nk = T->ngroup, rw = rf_gpu_ftotal_rec_words(T);
        uint64_t *drec = d + 2 + RF_GPU_FUSE_GHEADS;
        const uint64_t *srec = s + 2 + RF_GPU_FUSE_GHEADS;
        for (uint64_t g = 0; g < s[1]; g++) {
            const uint64_t *r = srec + g * (uint64_t)rw;
            uint64_t first = r[nk] + (uint64_t)lo, e = 0;
            while (e < d[1] && memcmp(drec + e * (uint64_t)rw, r, (size_t)nk * 8)) e++;
            uint64_t *o = drec + e * (uint64_t)rw;
            if (e == d[1]) {
                if (d[1] == RF_GPU_FUSE_GROUPS) return 0;
                d[1]++;
                memset(o, 0, (size_t)rw * 8);
                memcpy(o, r, (size_t)nk * 8);
                o[nk] = first;
            } else if (first < o[nk]) {
                o[nk] = first;
            }
            o[nk + 1] += r[nk + 1];
            for (int32_t i = 0; i < T->nsum; i++) add128(&o[nk + 2 + 2 * i], &r[nk + 2 + 2 * i]);
        }
    }
    return 1;
}

/* The bytes a row of the split variable brings to the device, and which
** of its columns (cols, where not NULL) the fused kernel reads. */
static uint64_t row_bytes(const gx *x, const rf_gpu_funit *u, int32_t sv, int index, uint8_t *cols)
{
    const rf_hir_var *hv = x->p->vars[sv];
    if (index) return rf_gx_held_col(&x->vals[sv], hv->ncols + 1) ? 16 : 8;
    uint8_t need[RF_GPU_FUSE_MAX][RF_GPU_MAXC], in[2][RF_GPU_MAXC];
    rf_gpu_funit_needs(x->p, u, need, in);
    uint64_t b = 0;
    for (int32_t c = 0; c < hv->ncols; c++) {
        int read = c < RF_GPU_MAXC && in[0][c];
        /* a probe reads the left keys */
        for (int32_t i = 0; u->src && i < u->src->nkeys; i++)
            if (u->src->lkeys[i] == c) read = 1;
        if (cols) cols[c] = (uint8_t)read;
        if (read) b += (uint64_t)wid(hv->types[c]);
    }
    return b;
}

/* u over its input sv in nparts ranges, their words combined into acc;
** *ran 0 where a range did not run fused. */
static rf_status run_ranges(gx *x, const rf_gpu_funit *u, int32_t sv, int index, const uint8_t *cols, int64_t nparts,
                            uint64_t *acc, uint64_t *words, int *ran)
{
    const rf_hir_var *hv = x->p->vars[sv];
    int64_t n = x->vals[sv].nrows;
    rf_status st = RF_OK;
    *ran = 1;
    memset(acc, 0, (size_t)u->nacc * 8);
    for (int64_t i = 0; i < nparts && !st && *ran; i++) {
        int64_t lo = n / nparts * i + (i < n % nparts ? i : n % nparts);
        int64_t hi = lo + n / nparts + (i < n % nparts);
        if (lo == hi) continue;
        gval r;
        st = rf_gx_range_of(x, &x->vals[sv], hv, index, cols, lo, hi, &r);
        if (!st) {
            /* the fused kernel reads the range in place of its input */
            gval whole = x->vals[sv];
            r.used = x->epoch; /* in use: never moved out under the kernel */
            x->vals[sv] = r;
            st = rf_gx_k_fused_words(x, u, ran, words);
            r = x->vals[sv];
            x->vals[sv] = whole;
        }
        rf_gx_val_clear(x, &r, hv->ncols);
        if (!st && *ran && !combine(u, acc, words, lo)) *ran = 0;
    }
    return st;
}

/* The memory a range may fill: half of the cap, or of what the device had free. */
static uint64_t range_room(const gx *x) { return (x->g.mem_cap ? x->g.mem_cap : x->g.mem_free) / 2; }

int rf_gx_fused_ranges_first(const gx *x, const rf_gpu_funit *u)
{
    int index;
    int32_t sv = split_var(x, u, &index);
    if (sv < 0 || !rf_gx_fused_ranges_can(x, u, 1)) return 0;
    return (uint64_t)x->vals[sv].nrows * row_bytes(x, u, sv, index, NULL) > range_room(x);
}

/* The first number of ranges: each range's columns at most half of the cap
** (or of the memory the device had free), at least two. */
static int64_t first_parts(const gx *x, int64_t n, uint64_t per_row)
{
    uint64_t half = range_room(x);
    if (half < 1) return 2;
    uint64_t bytes = (uint64_t)n * per_row;
    uint64_t parts = (bytes + half - 1) / half;
    if (parts < 2) parts = 2;
    if (parts > (uint64_t)n) parts = (uint64_t)n;
    return parts > MAX_PARTS ? MAX_PARTS : (int64_t)parts;
}

rf_status rf_gx_k_fused_ranges(gx *x, const rf_gpu_funit *u, int *ran)
{
    *ran = 0;
    int index;
    int32_t sv = split_var(x, u, &index), other[2];
    if (sv < 0) return RF_EINTERNAL;
    int32_t nother = whole_vars(u, sv, other);
    /* the input waits in host memory (all of it); the other sides come back whole */
    x->epoch++;
    x->vals[sv].used = x->epoch;
    for (int32_t i = 0; i < nother; i++) x->vals[other[i]].used = x->epoch;
    rf_status st = rf_gx_spill_var(x, sv);
    for (int32_t i = 0; i < nother && !st; i++) st = rf_gx_unspill_var(x, other[i]);
    if (st) return st;
    const rf_hir_var *hv = x->p->vars[sv];
    uint8_t *cols = rf_calloc((size_t)hv->ncols + 1, 1);
    uint64_t *acc = rf_malloc((size_t)u->nacc * 8 + 8), *words = rf_malloc((size_t)u->nacc * 8 + 8);
    if (!cols || !acc || !words) st = RF_ENOMEM;
    int64_t n = x->vals[sv].nrows, ndiag = x->d->count, nerr = x->d->nerrors;
    int64_t parts = st ? 0 : first_parts(x, n, row_bytes(x, u, sv, index, cols));
    gfrange fr;
    memset(&fr, 0, sizeof fr);
    fr.rows = n;
    x->frange = &fr;
    while (!st) {
        st = run_ranges(x, u, sv, index, cols, parts, acc, words, ran);
        if (st != RF_EDEVMEM || parts >= n || parts >= MAX_PARTS) break;
        rf_gx_held_drop_diags(x, ndiag, nerr); /* (smaller ranges next) */
        st = RF_OK;
        parts = parts * 2 > n ? n : parts * 2;
    }
    x->frange = NULL;
    if (fr.made) rf_gx_jtab_done(x, &fr.jt, fr.kept);
    if (!st && *ran) {
        st = rf_gx_fused_finish(x, u, acc);
        x->fparted++;
        x->fparts += parts;
    }
    free(cols);
    free(acc);
    free(words);
    return st;
}
