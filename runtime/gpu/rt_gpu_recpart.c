/*
** runtime/gpu/rt_gpu_recpart.c: a recursive relation's set that does not fit
** in GPU memory (under the --gpu-memory cap, or a full GPU), kept in
** partitions by the hash of its rows.
**
** Owns: the partitioned set (grecpart on the set's gval) and how the set's
** own kernels run on it: INSERT (the set grows) and DIFFERENCE (the new
** rows of a round: candidates absent from the set). When one of them does
** not fit with the whole set on the device, the set leaves the GPU for host
** memory in P partitions (P a power of two), row r in partition
** hash(r) mod P; equal rows share a partition, so membership is local to
** one partition. Each kernel then runs once per partition that its
** candidates reach: the partition's rows come to the device (or are still
** there: partitions stay, with their set tables, until the pool needs the
** room; rf_gx_recpart_drop_one), the kernel itself runs on them and the
** candidates of that partition, and only what it adds goes back (an
** insert's new rows, a difference's kept rows). A partition that still does not fit doubles P
** (partition p splits into p and p + P) and the kernel runs again from the
** start: nothing is committed before every partition ran.
**
** Same rows, same order as the whole set: every row keeps its global row
** number (its place in first-occurrence order); a kernel's new rows in a
** partition are matched, in order, to the candidates they came from (the
** first candidate equal to each, after the one before: the kernel keeps
** first occurrences in order), so the rows of all partitions are numbered
** by their first candidate, as the whole insert numbers them, and a
** difference keeps exactly the candidates the whole kernel keeps, in their
** order. Any other reader of the set (a join in a non-linear rule, the
** strata after the loop, an output) first gets the whole set back, put
** together in host memory in row-number order (rf_gx_recpart_join, from
** rt_gpu_spill.c's bring-back): from there the spill path, row ranges and
** key partitions take it as any value in host memory. --profile counts the
** kernels run on partitioned sets, the most partitions and the bytes moved.
*/
#include "rt_gpu_internal.h"
#include "rf_mix.h"

#include "rf_cpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PARTS = 1 << 16 };

/* One partition in host memory: n rows (room for cap), each column at its
** type's width, and each row's global row number; and while there is room,
** the same rows on the device with their set table (dev, has_dev), kept
** from one kernel to the next and dropped, least recently used first
** (stamp), when the pool needs room: the host copy is always whole, so a
** dropped partition costs no copy back. */
typedef struct grpart {
    int64_t n, cap;
    char **col;
    int64_t *rowno;
    gval dev;
    int has_dev;
    uint64_t stamp;
} grpart;

struct grecpart {
    int64_t nparts;
    grpart *part;
};

static void part_drop_dev(gx *x, grpart *p, int32_t ncols)
{
    if (!p->has_dev) return;
    rf_gx_val_clear(x, &p->dev, ncols);
    memset(&p->dev, 0, sizeof p->dev);
    p->has_dev = 0;
}

static void parts_free(gx *x, grpart *p, int64_t nparts, int32_t ncols)
{
    for (int64_t i = 0; p && i < nparts; i++) {
        part_drop_dev(x, &p[i], ncols);
        for (int32_t c = 0; p[i].col && c < ncols; c++) free(p[i].col[c]);
        free(p[i].col);
        free(p[i].rowno);
    }
    free(p);
}

void rf_gx_recpart_free(gx *x, gval *v, int32_t ncols)
{
    if (!v->rp) return;
    parts_free(x, v->rp->part, v->rp->nparts, ncols);
    free(v->rp);
    v->rp = NULL;
}

/* Every partition of rp off the device (their host copies stay). */
static void parts_drop_dev(gx *x, struct grecpart *rp, int32_t ncols)
{
    for (int64_t p = 0; p < rp->nparts; p++) part_drop_dev(x, &rp->part[p], ncols);
}

int rf_gx_recpart_drop_one(gx *x)
{
    grpart *best = NULL;
    int32_t bncols = 0;
    for (int32_t var = 0; var < x->p->nvars; var++) {
        /* (the set a kernel runs on is out of its variable meanwhile) */
        struct grecpart *rp = x->recpart_cur && var == x->recpart_var ? x->recpart_cur : x->vals[var].rp;
        for (int64_t p = 0; rp && p < rp->nparts; p++)
            if (rp->part[p].has_dev && (!best || rp->part[p].stamp < best->stamp)) {
                best = &rp->part[p];
                bncols = x->p->vars[var]->ncols;
            }
    }
    if (!best) return 0;
    part_drop_dev(x, best, bncols);
    return 1;
}

/* ---- rows: values as words, hashes, equality ---------------------------------------------------- */

/* A value's bits, up to a wide decimal's 16 bytes (low word first). */
__extension__ typedef unsigned __int128 vbits;

/* Row i's column c of width w (4 and narrow: a 32-bit int standing for its 64-bit value). */
static vbits value_at(const char *col, int w, int narrow, int64_t i)
{
    if (!col) return 0;
    switch (w) {
    case 1: return *(const uint8_t *)(col + i);
    case 4: {
        uint32_t u;
        memcpy(&u, col + i * 4, 4);
        return narrow ? (vbits)(uint64_t)(int64_t)(int32_t)u : u;
    }
    case 16: {
        vbits u;
        memcpy(&u, col + i * 16, 16);
        return u;
    }
    default: {
        uint64_t u;
        memcpy(&u, col + i * 8, 8);
        return u;
    }
    }
}

static void value_put(char *col, int w, int64_t i, vbits v)
{
    switch (w) {
    case 1: *(uint8_t *)(col + i) = (uint8_t)v; break;
    case 4: {
        uint32_t u = (uint32_t)v;
        memcpy(col + i * 4, &u, 4);
        break;
    }
    case 16: memcpy(col + i * 16, &v, 16); break;
    default: {
        uint64_t u = (uint64_t)v;
        memcpy(col + i * 8, &u, 8);
        break;
    }
    }
}

/* Columns of rows somewhere in host memory: where each is and how wide. */
typedef struct hrows {
    const char *col[64];
    int w[64];
    uint8_t narrow[64];
} hrows;

/* The hash of row i over every column; equal rows hash alike (a float's
** zeros and NaNs each as one value, whatever their bits). */
static uint64_t row_hash(const rf_hir_var *hv, const hrows *r, int64_t i)
{
    uint64_t h = 0x2545f4914f6cdd1dull;
    for (int32_t c = 0; c < hv->ncols; c++) {
        vbits vb = value_at(r->col[c], r->w[c], r->narrow[c], i);
        uint64_t b = (uint64_t)vb ^ (uint64_t)(vb >> 64); /* (a wide decimal's two words) */
        if (hv->types[c] == RF_TYPE_FLOAT) {
            double d;
            memcpy(&d, &b, 8);
            b = rf_val_float_hash_bits(d);
        }
        h = rf_mix64(h ^ b) + (uint64_t)c;
    }
    return rf_mix64(h);
}

static int rows_equal(const rf_hir_var *hv, const hrows *a, int64_t i, const hrows *b, int64_t j)
{
    for (int32_t c = 0; c < hv->ncols; c++)
        if (value_at(a->col[c], a->w[c], a->narrow[c], i) != value_at(b->col[c], b->w[c], b->narrow[c], j)) return 0;
    return 1;
}

/* Variable var's rows in host memory (it was spilled): its held columns. */
static void held_rows(const gx *x, int32_t var, hrows *r)
{
    const rf_hir_var *hv = x->p->vars[var];
    memset(r, 0, sizeof *r);
    for (int32_t c = 0; c < hv->ncols; c++) {
        r->col[c] = rf_gx_held_col(&x->vals[var], c);
        r->w[c] = (int)rf_gx_set_width(x, var, c);
        r->narrow[c] = (uint8_t)rf_gx_narrow_bit(&x->vals[var], c);
    }
}

static void part_rows(const rf_hir_var *hv, const grpart *p, hrows *r)
{
    memset(r, 0, sizeof *r);
    for (int32_t c = 0; c < hv->ncols; c++) {
        r->col[c] = p->col ? p->col[c] : NULL; /* (an empty partition may have none) */
        r->w[c] = wid(hv->types[c]);
    }
}

/* Room in partition p for more rows. */
static rf_status part_reserve(const rf_hir_var *hv, grpart *p, int64_t more)
{
    int64_t need = p->n + more;
    if (need <= p->cap) return RF_OK;
    int64_t cap = need + need / 4 + 16;
    if (!p->col && !(p->col = rf_calloc((size_t)hv->ncols + 1, sizeof *p->col))) return RF_ENOMEM;
    for (int32_t c = 0; c < hv->ncols; c++) {
        char *m = realloc(p->col[c], (size_t)cap * (size_t)wid(hv->types[c]));
        if (!m) return RF_ENOMEM;
        p->col[c] = m;
    }
    int64_t *rn = realloc(p->rowno, (size_t)cap * sizeof *rn);
    if (!rn) return RF_ENOMEM;
    p->rowno = rn;
    p->cap = cap;
    return RF_OK;
}

/* Row i of r appended to partition p, as row number rowno. */
static void part_push(const rf_hir_var *hv, grpart *p, const hrows *r, int64_t i, int64_t rowno)
{
    for (int32_t c = 0; c < hv->ncols; c++)
        value_put(p->col[c], wid(hv->types[c]), p->n, value_at(r->col[c], r->w[c], r->narrow[c], i));
    p->rowno[p->n++] = rowno;
}

/* ---- host work on the run's threads ----------------------------------------------------------- */

/* Rows per chunk of the host's parallel loops: chunk boundaries depend on n
** alone (rf_cpu_parallel_for), so every result is the same on any number of
** threads. */
enum { HOST_GRAIN = 1 << 16, SPLIT_CHUNKS = 64 };

/* The partition of every row of r by its hash, then the rows of each
** partition in ascending order: start[p] .. start[p + 1] of rows. Hashing,
** counting and placing run in chunks on the run's threads (the host work of
** a round was one thread's: TC of 572 M paths under a 6 GB cap did not finish
** in 100 s on an H100). */
typedef struct split_job {
    const rf_hir_var *hv;
    const hrows *r;
    int64_t n, nparts, nchunks, chunk;
    uint32_t *pt;
    int64_t *cnt; /* nchunks x nparts: counts, then each chunk's first place per partition */
    int64_t *rows;
} split_job;

static void split_hash(void *ctx, int64_t b, int64_t e, int worker)
{
    (void)worker;
    split_job *j = ctx;
    for (int64_t i = b; i < e; i++) j->pt[i] = (uint32_t)(row_hash(j->hv, j->r, i) & (uint64_t)(j->nparts - 1));
}

static void split_count(void *ctx, int64_t b, int64_t e, int worker)
{
    (void)worker;
    split_job *j = ctx;
    for (int64_t c = b; c < e; c++) {
        int64_t *cnt = j->cnt + c * j->nparts, lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        for (int64_t i = lo; i < hi; i++) cnt[j->pt[i]]++;
    }
}

static void split_place(void *ctx, int64_t b, int64_t e, int worker)
{
    (void)worker;
    split_job *j = ctx;
    for (int64_t c = b; c < e; c++) {
        int64_t *at = j->cnt + c * j->nparts, lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        for (int64_t i = lo; i < hi; i++) j->rows[at[j->pt[i]]++] = i;
    }
}

static rf_status split_rows(gx *x, const rf_hir_var *hv, const hrows *r, int64_t n, int64_t nparts, int64_t *start,
                            int64_t *rows)
{
    split_job j = {hv, r, n, nparts, 1, n > 0 ? n : 1, NULL, NULL, rows};
    if (n >= 2 * HOST_GRAIN) {
        j.nchunks = (n + HOST_GRAIN - 1) / HOST_GRAIN;
        if (j.nchunks > SPLIT_CHUNKS) j.nchunks = SPLIT_CHUNKS;
        j.chunk = (n + j.nchunks - 1) / j.nchunks;
        j.nchunks = (n + j.chunk - 1) / j.chunk;
    }
    j.pt = rf_malloc((size_t)n * 4 + 4);
    j.cnt = rf_calloc((size_t)(j.nchunks * nparts), sizeof *j.cnt);
    if (!j.pt || !j.cnt) {
        free(j.pt);
        free(j.cnt);
        return RF_ENOMEM;
    }
    rf_cpu_parallel_for(x->cpool, n, HOST_GRAIN, split_hash, &j);
    rf_cpu_parallel_for(x->cpool, j.nchunks, 1, split_count, &j);
    /* partition-major, chunk-minor: each partition's rows ascend */
    int64_t at = 0;
    for (int64_t p = 0; p < nparts; p++) {
        start[p] = at;
        for (int64_t c = 0; c < j.nchunks; c++) {
            int64_t k = j.cnt[c * nparts + p];
            j.cnt[c * nparts + p] = at;
            at += k;
        }
    }
    start[nparts] = at;
    rf_cpu_parallel_for(x->cpool, j.nchunks, 1, split_place, &j);
    free(j.pt);
    free(j.cnt);
    return RF_OK;
}

/* Rows of r (rows[start[p] .. start[p + 1]) for partition p) appended to
** the partitions, partition by partition on the run's threads. */
typedef struct fill_job {
    const rf_hir_var *hv;
    grpart *parts;
    const hrows *r;
    const int64_t *start, *rows, *rowno;
    atomic_int failed;
} fill_job;

static void fill_parts(void *ctx, int64_t b, int64_t e, int worker)
{
    (void)worker;
    fill_job *j = ctx;
    for (int64_t p = b; p < e; p++) {
        int64_t lo = j->start[p], hi = j->start[p + 1];
        if (part_reserve(j->hv, &j->parts[p], hi - lo)) {
            atomic_store(&j->failed, 1);
            continue;
        }
        for (int64_t i = lo; i < hi; i++) {
            int64_t row = j->rows[i];
            part_push(j->hv, &j->parts[p], j->r, row, j->rowno ? j->rowno[row] : row);
        }
    }
}

/* Rows [0, n) of r into nparts partitions (rowno: base + i, or rowno[i]). */
static rf_status parts_fill(gx *x, const rf_hir_var *hv, grpart *parts, int64_t nparts, const hrows *r, int64_t n,
                            const int64_t *rowno)
{
    int64_t *start = rf_malloc((size_t)(nparts + 1) * 8), *rows = rf_malloc((size_t)n * 8 + 8);
    rf_status st = start && rows ? RF_OK : RF_ENOMEM;
    if (!st) st = split_rows(x, hv, r, n, nparts, start, rows);
    fill_job j = {hv, parts, r, start, rows, rowno, 0};
    if (!st) rf_cpu_parallel_for(x->cpool, nparts, 1, fill_parts, &j);
    if (!st && atomic_load(&j.failed)) st = RF_ENOMEM;
    free(start);
    free(rows);
    return st;
}

/* Twice the partitions: partition p splits into p and p + nparts. */
static rf_status parts_split(gx *x, const rf_hir_var *hv, struct grecpart *rp)
{
    parts_drop_dev(x, rp, hv->ncols);
    int64_t n2 = rp->nparts * 2;
    grpart *np = rf_calloc((size_t)n2, sizeof *np);
    if (!np) return RF_ENOMEM;
    rf_status st = RF_OK;
    for (int64_t p = 0; p < rp->nparts && !st; p++) {
        hrows r;
        part_rows(hv, &rp->part[p], &r);
        st = parts_fill(x, hv, np, n2, &r, rp->part[p].n, rp->part[p].rowno);
    }
    if (st) {
        parts_free(x, np, n2, hv->ncols);
        return st;
    }
    parts_free(x, rp->part, rp->nparts, hv->ncols);
    rp->part = np;
    rp->nparts = n2;
    return RF_OK;
}

/* ---- the set into partitions, and back together ---------------------------------------------- */

/* Partitions to start with: each about a sixteenth of the room the cap
** (else the device) leaves, for its rows, its table and its growth. */
static int64_t first_parts(const gx *x, const rf_hir_var *hv, int64_t n)
{
    uint64_t row = 24;
    for (int32_t c = 0; c < hv->ncols; c++) row += (uint64_t)wid(hv->types[c]) * 2;
    uint64_t room = x->g.mem_cap ? x->g.mem_cap : x->g.mem_free;
    int64_t p = 2;
    while (room && p < MAX_PARTS && (uint64_t)n * row / (uint64_t)p > room / 16) p *= 2;
    return p;
}

/* Set var's rows (in host memory now, or on the device) into partitions. */
static rf_status to_parts(gx *x, int32_t var)
{
    gval *v = &x->vals[var];
    const rf_hir_var *hv = x->p->vars[var];
    rf_status st = rf_gx_spill_var(x, var);
    if (st) return st;
    struct grecpart *rp = rf_calloc(1, sizeof *rp);
    if (!rp) return RF_ENOMEM;
    rp->nparts = first_parts(x, hv, v->nrows);
    rp->part = rf_calloc((size_t)rp->nparts, sizeof *rp->part);
    hrows r;
    held_rows(x, var, &r);
    st = rp->part ? parts_fill(x, hv, rp->part, rp->nparts, &r, v->nrows, NULL) : RF_ENOMEM;
    if (st) {
        parts_free(x, rp->part, rp->nparts, hv->ncols);
        free(rp);
        return st;
    }
    int64_t n = v->nrows;
    rf_gx_val_clear(x, v, hv->ncols);
    v->nrows = v->cap = n;
    v->rp = rp;
    if (rp->nparts > x->recpart_max) x->recpart_max = rp->nparts;
    return RF_OK;
}

/* Column c of every partition's rows put at their row numbers, partition by
** partition on the run's threads (row numbers are distinct: no two write one place). */
typedef struct join_job {
    const struct grecpart *rp;
    int32_t c;
    int w;
    int64_t n;
    char *m;
    atomic_int failed;
} join_job;

static void join_part(void *ctx, int64_t b, int64_t e, int worker)
{
    (void)worker;
    join_job *j = ctx;
    for (int64_t p = b; p < e; p++) {
        const grpart *pp = &j->rp->part[p];
        for (int64_t i = 0; i < pp->n; i++) {
            int64_t at = pp->rowno[i];
            if (at < 0 || at >= j->n) {
                atomic_store(&j->failed, 1);
                break;
            }
            memcpy(j->m + at * j->w, pp->col[j->c] + i * j->w, (size_t)j->w);
        }
    }
}

rf_status rf_gx_recpart_join(gx *x, int32_t var)
{
    gval *v = &x->vals[var];
    struct grecpart *rp = v->rp;
    if (!rp) return RF_OK;
    const rf_hir_var *hv = x->p->vars[var];
    int64_t n = v->nrows;
    gval g;
    memset(&g, 0, sizeof g);
    g.nrows = g.cap = n;
    rf_status st = (g.cols = rf_calloc((size_t)hv->ncols + 1, sizeof *g.cols)) ? RF_OK : RF_ENOMEM;
    for (int32_t c = 0; c < hv->ncols && !st && n > 0; c++) {
        int w = wid(hv->types[c]);
        /* as the pool would reserve it: a multiple of 256 bytes */
        uint64_t len = ((uint64_t)n * (uint64_t)w + 255) / 256 * 256;
        char *m = rf_calloc(1, (size_t)len);
        if (!m) {
            st = RF_ENOMEM;
            break;
        }
        join_job j = {rp, c, w, n, m, 0};
        rf_cpu_parallel_for(x->cpool, rp->nparts, 1, join_part, &j);
        if (atomic_load(&j.failed)) st = RF_EINTERNAL;
        if (!st) st = rf_gx_held_adopt(&g, hv->ncols, c, m, len);
        else free(m);
    }
    if (st) {
        rf_gx_val_clear(x, &g, hv->ncols);
        return st;
    }
    rf_gx_recpart_free(x, v, hv->ncols);
    g.used = v->used;
    *v = g;
    return RF_OK;
}

/* ---- the set's kernels, partition by partition ----------------------------------------------- */

int rf_gx_recpart_on(const gx *x, const rf_hir_kernel *k)
{
    if (k->kind == RF_HIR_INSERT) return k->out >= 0 && x->vals[k->out].rp != NULL;
    if (k->kind == RF_HIR_DIFFERENCE) return k->nin == 2 && x->vals[k->in[1]].rp != NULL;
    return 0;
}

int rf_gx_recpart_can(const gx *x, const rf_hir_kernel *k)
{
    if (k->id < 0 || k->id >= x->nkernels || !x->plans[k->id].gpu) return 0;
    int32_t set;
    if (k->kind == RF_HIR_INSERT) {
        set = k->out;
        if (k->nin < 2 || k->in[0] != set) return 0;
        for (int32_t i = 1; i < k->nin; i++) {
            if (k->in[i] < 0 || k->in[i] == set) return 0;
            for (int32_t j = 1; j < i; j++)
                if (k->in[j] == k->in[i]) return 0;
        }
    } else if (k->kind == RF_HIR_DIFFERENCE) {
        if (k->nin != 2) return 0;
        set = k->in[1];
        if (k->in[0] == set || k->out == set || k->out == k->in[0]) return 0;
    } else {
        return 0;
    }
    /* a recursive relation's set: one that an insert grows */
    return set >= 0 && x->p->vars[set]->ncols <= 64 && rf_gpu_grown_set(x->p, set);
}

/* Values of one column gathered at another width: dst[i] = src[rows[i]] (rows NULL: i). */
typedef struct gather_job {
    const char *src;
    int sw, narrow, w;
    const int64_t *rows;
    char *dst;
} gather_job;

static void gather_part(void *ctx, int64_t b, int64_t e, int worker)
{
    (void)worker;
    const gather_job *j = ctx;
    if (j->w == 8 && j->sw == 8 && j->rows) {
        const uint64_t *src = (const void *)j->src;
        uint64_t *dst = (void *)j->dst;
        for (int64_t i = b; i < e; i++) dst[i] = src[j->rows[i]];
        return;
    }
    for (int64_t i = b; i < e; i++) value_put(j->dst, j->w, i, value_at(j->src, j->sw, j->narrow, j->rows ? j->rows[i] : i));
}

/* Rows rows[0..n) of r as a relation on the device (types' widths): a
** column already at its width and in order is copied as it is; others are
** gathered on the run's threads first. */
static rf_status rel_of(gx *x, const rf_hir_var *hv, const hrows *r, const int64_t *rows, int64_t n, gval *out)
{
    memset(out, 0, sizeof *out);
    out->used = x->epoch;
    rf_status st = rf_gx_rel_alloc(x, out, hv->types, hv->ncols, n, n);
    out->used = x->epoch;
    char *buf = NULL;
    int bufw = 1; /* (the widest column's: a wide decimal's 16 bytes) */
    for (int32_t c = 0; c < hv->ncols; c++)
        if (wid(hv->types[c]) > bufw) bufw = wid(hv->types[c]);
    for (int32_t c = 0; c < hv->ncols && !st && n > 0; c++) {
        int w = wid(hv->types[c]);
        const char *from = r->col[c];
        if (rows || !from || r->w[c] != w || r->narrow[c]) {
            if (!buf && !(buf = rf_malloc((size_t)n * (size_t)bufw))) {
                st = RF_ENOMEM;
                break;
            }
            gather_job j = {r->col[c], r->w[c], r->narrow[c], w, rows, buf};
            if (from) rf_cpu_parallel_for(x->cpool, n, HOST_GRAIN, gather_part, &j);
            else memset(buf, 0, (size_t)n * (size_t)w);
            from = buf;
        }
        st = x->g.ops->h2d(&x->g, colp(out, c), from, (uint64_t)n * (uint64_t)w);
        x->recpart_in += (uint64_t)n * (uint64_t)w;
    }
    free(buf);
    if (st) rf_gx_val_clear(x, out, hv->ncols);
    return st;
}

/* Rows [lo, hi) of variable var's value on the device, into host columns
** at their types' widths (narrow columns widened). The kernel may have left
** the value in host memory: an insert of a value outside 32 bits into a
** narrow partition, under a cap with no room for a column in both widths,
** widens it there (rt_gpu_narrow.c, widen_held). Its rows are read there
** then: read from the device, the columns it no longer has gave zeros,
** which matched no candidate, and the run failed with an internal error. */
static rf_status rows_back(gx *x, int32_t var, int64_t lo, int64_t hi, char **cols)
{
    const rf_hir_var *hv = x->p->vars[var];
    const gval *v = &x->vals[var];
    rf_status st = RF_OK;
    hrows h;
    memset(&h, 0, sizeof h);
    /* (a value partly brought back: all of it in host memory first) */
    if (v->held && !(st = rf_gx_spill_var(x, var))) held_rows(x, var, &h);
    for (int32_t c = 0; c < hv->ncols && !st; c++) {
        int w = wid(hv->types[c]), sw = (int)rf_gx_set_width(x, var, c);
        int64_t n = hi - lo;
        if (!(cols[c] = rf_malloc((size_t)(n > 0 ? n : 1) * (size_t)w))) return RF_ENOMEM;
        if (n <= 0) continue;
        if (v->held) {
            if (!h.col[c]) return RF_EINTERNAL; /* a kernel's output holds every column */
            for (int64_t i = 0; i < n; i++) value_put(cols[c], w, i, value_at(h.col[c], h.w[c], h.narrow[c], lo + i));
            continue;
        }
        if (!colp(v, c)) {
            memset(cols[c], 0, (size_t)n * (size_t)w);
            continue;
        }
        char *tmp = sw == w ? cols[c] : rf_malloc((size_t)n * (size_t)sw);
        if (!tmp) return RF_ENOMEM;
        st = x->g.ops->d2h(&x->g, tmp, colp(v, c) + (uint64_t)lo * (uint64_t)sw, (uint64_t)n * (uint64_t)sw);
        x->recpart_out += (uint64_t)n * (uint64_t)sw;
        if (tmp != cols[c]) {
            for (int64_t i = 0; i < n && !st; i++)
                value_put(cols[c], w, i, value_at(tmp, sw, rf_gx_narrow_bit(v, c), i));
            free(tmp);
        }
    }
    return st;
}

static void cols_free(char **cols, int32_t ncols)
{
    for (int32_t c = 0; c < ncols; c++) {
        free(cols[c]);
        cols[c] = NULL;
    }
}

/* The candidates: variable var's rows, in host memory, by partition
** (start[p] .. start[p + 1] of rows, each partition's rows in order). */
typedef struct gcand {
    int32_t var;
    hrows r;
    int64_t n;
    int64_t *start, *rows;
} gcand;

static rf_status cand_split(gx *x, int32_t var, int64_t nparts, gcand *cd)
{
    const rf_hir_var *hv = x->p->vars[var];
    free(cd->start);
    free(cd->rows);
    cd->var = var;
    cd->n = x->vals[var].nrows;
    held_rows(x, var, &cd->r);
    cd->start = rf_calloc((size_t)nparts + 2, sizeof *cd->start);
    cd->rows = rf_malloc((size_t)cd->n * 8 + 8);
    if (!cd->start || !cd->rows) return RF_ENOMEM;
    return split_rows(x, hv, &cd->r, cd->n, nparts, cd->start, cd->rows);
}

/* A partition p that did not fit with its kernel's work: its set rows and
** the candidates cd[0..nc) that reach it. One row (at most one, or copies
** of one row: the set's rows are distinct, a candidate may equal one) no
** partition by row hash splits: the part is named (rf_gx_unfit), and no
** more partitions are made for it. Else distinct rows whose hashes met:
** more partitions part them. */
static void part_unfit(gx *x, const rf_hir_var *hv, const grpart *sp, const gcand *cd, int32_t nc, int64_t p)
{
    int64_t n = sp->n;
    for (int32_t i = 0; i < nc; i++) n += cd[i].start[p + 1] - cd[i].start[p];
    int one = sp->n <= 1;
    hrows sr;
    part_rows(hv, sp, &sr);
    const hrows *fr = sp->n ? &sr : NULL;
    int64_t fi = 0;
    for (int32_t i = 0; i < nc && one; i++)
        for (int64_t j = cd[i].start[p]; j < cd[i].start[p + 1] && one; j++) {
            int64_t r = cd[i].rows[j];
            if (!fr) {
                fr = &cd[i].r;
                fi = r;
            } else {
                one = rows_equal(hv, fr, fi, &cd[i].r, r);
            }
        }
    rf_gx_unfit(x, n, !one ? RF_GX_UNIT_NONE : n <= 1 ? RF_GX_UNIT_ROW : RF_GX_UNIT_KEY);
}

static void cand_free(gcand *cd)
{
    free(cd->start);
    free(cd->rows);
    cd->start = cd->rows = NULL;
}

/* Kernel k with variables vars[0..nv) read as vals[0..nv), then the values
** swapped back (vals[i] then holds what the kernel left in vars[i]). */
static rf_status run_swapped(gx *x, const rf_hir_kernel *k, const int32_t *vars, gval *vals, int32_t nv)
{
    for (int32_t i = 0; i < nv; i++) {
        gval t = x->vals[vars[i]];
        vals[i].used = x->epoch;
        x->vals[vars[i]] = vals[i];
        vals[i] = t;
    }
    rf_status st = rf_gx_run_kernel(x, k);
    for (int32_t i = nv - 1; i >= 0; i--) {
        gval t = x->vals[vars[i]];
        x->vals[vars[i]] = vals[i];
        vals[i] = t;
    }
    return st;
}

/* Partition p of a set on the device: the one kept there, else its rows copied. */
static rf_status part_on_device(gx *x, const rf_hir_var *hv, grpart *p, gval *out)
{
    if (p->has_dev) {
        *out = p->dev;
        memset(&p->dev, 0, sizeof p->dev);
        p->has_dev = 0;
        x->recpart_hits++;
        return RF_OK;
    }
    hrows pr;
    part_rows(hv, p, &pr);
    return rel_of(x, hv, &pr, NULL, p->n, out);
}

/* Partition p's device rows kept after a kernel (its set table too). */
static void part_keep(gx *x, grpart *p, gval *dev)
{
    p->dev = *dev;
    p->has_dev = 1;
    p->stamp = ++x->recpart_clock;
    memset(dev, 0, sizeof *dev);
}

/* Variables swapped in at most: the set and 63 candidates. */
enum { MAX_SWAP = 64 };

/* DIFFERENCE(a, set): per partition, the candidates of a in it against the
** set's partition; the rows the kernel keeps matched back to a's rows. */
/* A partition's rows that its kernel kept (or added), back in host memory,
** waiting to be matched to the candidates they came from. */
typedef struct gback {
    int64_t n;
    char *cols[64];
    int64_t *from; /* an insert's: each row's first candidate, its source's base + row */
} gback;

static void backs_free(gback *bk, int64_t nparts, int32_t ncols)
{
    for (int64_t p = 0; bk && p < nparts; p++) {
        cols_free(bk[p].cols, ncols);
        free(bk[p].from);
    }
    free(bk);
}

/* The matching of each partition's kept rows to its candidates, partition
** by partition on the run's threads (the partitions' kernels ran first, one
** after another on the device). */
typedef struct match_job {
    const rf_hir_var *hv;
    gback *bk;
    gcand *cd;
    int32_t ns;         /* sources (a difference: 1) */
    const int64_t *base; /* an insert's: each source's first row number */
    uint8_t *keep;      /* a difference's: 1 for each candidate kept */
    atomic_int failed;
} match_job;

static void match_parts(void *ctx, int64_t b, int64_t e, int worker)
{
    (void)worker;
    match_job *mj = ctx;
    for (int64_t p = b; p < e; p++) {
        gback *g = &mj->bk[p];
        if (g->n == 0) continue;
        hrows kr;
        memset(&kr, 0, sizeof kr);
        for (int32_t c = 0; c < mj->hv->ncols; c++) {
            kr.col[c] = g->cols[c];
            kr.w[c] = wid(mj->hv->types[c]);
        }
        if (mj->base && !(g->from = rf_malloc((size_t)g->n * 8))) {
            atomic_store(&mj->failed, 1);
            continue;
        }
        /* each row is the first candidate equal to it after the one before,
        ** over the sources in order */
        int32_t src = 0;
        int64_t i = mj->cd[0].start[p];
        for (int64_t j = 0; j < g->n; j++) {
            for (;;) {
                if (src >= mj->ns) break;
                if (i >= mj->cd[src].start[p + 1]) {
                    if (++src < mj->ns) i = mj->cd[src].start[p];
                    continue;
                }
                if (rows_equal(mj->hv, &kr, j, &mj->cd[src].r, mj->cd[src].rows[i])) break;
                i++;
            }
            if (src >= mj->ns) {
                atomic_store(&mj->failed, 1);
                break;
            }
            int64_t row = mj->cd[src].rows[i++];
            if (mj->keep) mj->keep[row] = 1;
            else g->from[j] = mj->base[src] + row;
        }
    }
}

/* DIFFERENCE(a, set): per partition, the candidates of a in it against the
** set's partition; the rows the kernel keeps matched back to a's rows. */
static rf_status diff_parts(gx *x, const rf_hir_kernel *k, uint8_t *keep)
{
    int32_t a = k->in[0], s = k->in[1];
    const rf_hir_var *hv = x->p->vars[s], *ov = x->p->vars[k->out];
    struct grecpart *rp = x->vals[s].rp;
    gcand cd;
    memset(&cd, 0, sizeof cd);
    gback *bk = rf_calloc((size_t)rp->nparts, sizeof *bk);
    rf_status st = bk ? cand_split(x, a, rp->nparts, &cd) : RF_ENOMEM;
    memset(keep, 0, (size_t)x->vals[a].nrows + 1);
    for (int64_t p = 0; p < rp->nparts && !st; p++) {
        int64_t lo = cd.start[p], m = cd.start[p + 1] - lo;
        if (m == 0) continue;
        gval sw[2];
        memset(sw, 0, sizeof sw);
        st = rel_of(x, hv, &cd.r, cd.rows + lo, m, &sw[0]);
        if (!st) st = part_on_device(x, hv, &rp->part[p], &sw[1]);
        int32_t vars[2] = {a, s};
        rf_gx_var_clear(x, k->out);
        if (!st) st = run_swapped(x, k, vars, sw, 2);
        if (st == RF_EDEVMEM) part_unfit(x, hv, &rp->part[p], &cd, 1, p);
        rf_gx_val_clear(x, &sw[0], hv->ncols);
        /* (the difference reads the partition: it stays, with its table) */
        if (!st) part_keep(x, &rp->part[p], &sw[1]);
        else rf_gx_val_clear(x, &sw[1], hv->ncols);
        int64_t kept = x->vals[k->out].nrows;
        if (!st) st = rows_back(x, k->out, 0, kept, bk[p].cols);
        if (!st) bk[p].n = kept;
        rf_gx_var_clear(x, k->out);
    }
    match_job mj = {ov, bk, &cd, 1, NULL, keep, 0};
    if (!st) rf_cpu_parallel_for(x->cpool, rp->nparts, 1, match_parts, &mj);
    if (!st && atomic_load(&mj.failed)) st = RF_EINTERNAL;
    backs_free(bk, rp->nparts, ov->ncols);
    cand_free(&cd);
    return st;
}

/* The rows of held value a that keep marks, as a value in host memory. */
static rf_status kept_value(gx *x, int32_t a, const rf_hir_var *ov, const uint8_t *keep, gval *out)
{
    const gval *v = &x->vals[a];
    int64_t m = 0;
    for (int64_t i = 0; i < v->nrows; i++) m += keep[i];
    memset(out, 0, sizeof *out);
    out->nrows = out->cap = m;
    rf_status st = (out->cols = rf_calloc((size_t)ov->ncols + 1, sizeof *out->cols)) ? RF_OK : RF_ENOMEM;
    hrows r;
    held_rows(x, a, &r);
    int64_t *rows = st || m == 0 ? NULL : rf_malloc((size_t)m * 8);
    if (!st && m > 0 && !rows) st = RF_ENOMEM;
    for (int64_t i = 0, o = 0; i < v->nrows && rows; i++)
        if (keep[i]) rows[o++] = i;
    for (int32_t c = 0; c < ov->ncols && !st && m > 0; c++) {
        int w = wid(ov->types[c]);
        uint64_t len = ((uint64_t)m * (uint64_t)w + 255) / 256 * 256;
        char *buf = rf_calloc(1, (size_t)len);
        if (!buf) {
            st = RF_ENOMEM;
            break;
        }
        gather_job j = {r.col[c], r.w[c], r.narrow[c], w, rows, buf};
        if (r.col[c]) rf_cpu_parallel_for(x->cpool, m, HOST_GRAIN, gather_part, &j);
        if ((st = rf_gx_held_adopt(out, ov->ncols, c, buf, len))) free(buf);
    }
    free(rows);
    if (st) rf_gx_val_clear(x, out, ov->ncols);
    return st;
}

/* INSERT(set, sources...): per partition, the sources' rows in it inserted
** into the set's partition on the device; the new rows staged in nw. */
static rf_status insert_parts(gx *x, const rf_hir_kernel *k, gcand *cd, gback *nw)
{
    int32_t s = k->out, ns = k->nin - 1;
    const rf_hir_var *hv = x->p->vars[s];
    struct grecpart *rp = x->vals[s].rp;
    int64_t *base = rf_calloc((size_t)ns + 1, sizeof *base);
    rf_status st = base ? RF_OK : RF_ENOMEM;
    for (int32_t i = 0; i < ns && !st; i++) {
        st = cand_split(x, k->in[i + 1], rp->nparts, &cd[i]);
        base[i + 1] = base[i] + cd[i].n;
    }
    for (int64_t p = 0; p < rp->nparts && !st; p++) {
        int64_t m = 0;
        for (int32_t i = 0; i < ns; i++) m += cd[i].start[p + 1] - cd[i].start[p];
        if (m == 0) continue;
        gval sw[MAX_SWAP];
        int32_t vars[MAX_SWAP];
        memset(sw, 0, sizeof sw);
        vars[0] = s;
        st = part_on_device(x, hv, &rp->part[p], &sw[0]);
        for (int32_t i = 0; i < ns && !st; i++) {
            vars[i + 1] = k->in[i + 1];
            st = rel_of(x, hv, &cd[i].r, cd[i].rows + cd[i].start[p], cd[i].start[p + 1] - cd[i].start[p], &sw[i + 1]);
        }
        if (!st) st = run_swapped(x, k, vars, sw, ns + 1);
        if (st == RF_EDEVMEM) part_unfit(x, hv, &rp->part[p], cd, ns, p);
        /* the new rows: those past the partition's own, read while the
        ** grown partition is still the set's value (its narrow columns) */
        int64_t n0 = rp->part[p].n, added = st ? 0 : sw[0].nrows - n0;
        if (!st && added > 0) {
            gval t = x->vals[s];
            x->vals[s] = sw[0];
            st = rows_back(x, s, n0, n0 + added, nw[p].cols);
            sw[0] = x->vals[s];
            x->vals[s] = t;
        }
        /* the grown partition stays on the device: its host copy gets
        ** the same rows when the insert commits (else it is dropped) */
        if (!st) part_keep(x, &rp->part[p], &sw[0]);
        for (int32_t i = 0; i <= ns; i++) rf_gx_val_clear(x, &sw[i], hv->ncols);
        if (!st && added > 0) nw[p].n = added;
    }
    match_job mj = {hv, nw, cd, ns, base, NULL, 0};
    if (!st) rf_cpu_parallel_for(x->cpool, rp->nparts, 1, match_parts, &mj);
    if (!st && atomic_load(&mj.failed)) st = RF_EINTERNAL;
    free(base);
    return st;
}

/* Partitions' new rows appended to their host copies, partition by
** partition on the run's threads. */
typedef struct commit_job {
    const rf_hir_var *hv;
    struct grecpart *rp;
    const gback *nw;
    const int64_t *rank;
    int64_t base;
    atomic_int failed;
} commit_job;

static void commit_part(void *ctx, int64_t b, int64_t e, int worker)
{
    (void)worker;
    commit_job *j = ctx;
    for (int64_t p = b; p < e; p++) {
        const gback *g = &j->nw[p];
        if (!g->n) continue;
        hrows nr;
        memset(&nr, 0, sizeof nr);
        for (int32_t c = 0; c < j->hv->ncols; c++) {
            nr.col[c] = g->cols[c];
            nr.w[c] = wid(j->hv->types[c]);
        }
        if (part_reserve(j->hv, &j->rp->part[p], g->n)) {
            atomic_store(&j->failed, 1);
            continue;
        }
        for (int64_t i = 0; i < g->n; i++) part_push(j->hv, &j->rp->part[p], &nr, i, j->base + j->rank[g->from[i]]);
    }
}

/* The staged new rows into the set's partitions, numbered from the set's
** row count in the order of their first candidates. */
static rf_status insert_commit(gx *x, int32_t s, gback *nw, int64_t total)
{
    const rf_hir_var *hv = x->p->vars[s];
    gval *v = &x->vals[s];
    struct grecpart *rp = v->rp;
    int64_t *rank = rf_calloc((size_t)total + 1, sizeof *rank);
    if (!rank) return RF_ENOMEM;
    for (int64_t p = 0; p < rp->nparts; p++)
        for (int64_t j = 0; j < nw[p].n; j++) rank[nw[p].from[j]] = 1;
    int64_t added = 0;
    for (int64_t i = 0; i < total; i++) {
        int64_t f = rank[i];
        rank[i] = added;
        added += f;
    }
    commit_job cj = {hv, rp, nw, rank, v->nrows, 0};
    rf_cpu_parallel_for(x->cpool, rp->nparts, 1, commit_part, &cj);
    rf_status st = atomic_load(&cj.failed) ? RF_ENOMEM : RF_OK;
    if (!st) v->nrows += added;
    free(rank);
    return st;
}

static rf_status run_insert(gx *x, const rf_hir_kernel *k)
{
    int32_t ns = k->nin - 1;
    gcand *cd = rf_calloc((size_t)ns + 1, sizeof *cd);
    struct grecpart *rp = x->vals[k->out].rp;
    gback *nw = cd ? rf_calloc((size_t)rp->nparts, sizeof *nw) : NULL;
    rf_status st = nw ? insert_parts(x, k, cd, nw) : RF_ENOMEM;
    /* (partitions grown on the device past their host copies: dropped) */
    if (st) parts_drop_dev(x, rp, x->p->vars[k->out]->ncols);
    int64_t total = 0;
    for (int32_t i = 0; i < ns; i++) total += x->vals[k->in[i + 1]].nrows;
    if (!st) st = insert_commit(x, k->out, nw, total);
    for (int32_t i = 0; cd && i < ns; i++) cand_free(&cd[i]);
    free(cd);
    backs_free(nw, rp->nparts, x->p->vars[k->out]->ncols);
    if (!st) x->recpart_rounds++;
    return st;
}

static rf_status run_difference(gx *x, const rf_hir_kernel *k)
{
    int32_t a = k->in[0];
    const rf_hir_var *ov = x->p->vars[k->out];
    uint8_t *keep = rf_malloc((size_t)x->vals[a].nrows + 1);
    rf_status st = keep ? diff_parts(x, k, keep) : RF_ENOMEM;
    gval r;
    if (!st) st = kept_value(x, a, ov, keep, &r);
    free(keep);
    if (!st) rf_gx_var_set(x, k->out, &r);
    return st;
}

rf_status rf_gx_recpart_run(gx *x, const rf_hir_kernel *k)
{
    int32_t set = k->kind == RF_HIR_INSERT ? k->out : k->in[1];
    const rf_hir_var *hv = x->p->vars[set];
    x->epoch++;
    rf_status st = x->vals[set].rp ? RF_OK : to_parts(x, set);
    /* the candidates wait in host memory, where they are split */
    for (int32_t i = 0; i < k->nin && !st; i++)
        if (k->in[i] != set) {
            x->vals[k->in[i]].used = x->epoch;
            st = rf_gx_recpart_join(x, k->in[i]); /* (another partitioned set: whole, in host memory) */
            if (!st) st = rf_gx_spill_var(x, k->in[i]);
        }
    if (k->kind == RF_HIR_DIFFERENCE && !st) rf_gx_var_clear(x, k->out);
    int64_t ndiag = x->d->count, nerr = x->d->nerrors, rows = x->vals[set].nrows;
    for (int32_t i = 0; i < k->nin; i++)
        if (k->in[i] != set) rows += x->vals[k->in[i]].nrows;
    while (!st) {
        x->recpart_var = set;
        x->recpart_cur = x->vals[set].rp;
        rf_gx_unfit(x, 0, RF_GX_UNIT_NONE);
        st = k->kind == RF_HIR_INSERT ? run_insert(x, k) : run_difference(x, k);
        x->recpart_var = -1;
        x->recpart_cur = NULL;
        struct grecpart *rp = x->vals[set].rp;
        /* (a partition of one row that does not fit: no split serves, and
        ** the message says so; distinct rows whose hashes met in a
        ** partition part in more, though there be more partitions than
        ** rows: random seed 88's two rows, 8 partitions for 3 rows) */
        if (st != RF_EDEVMEM || rp->nparts >= MAX_PARTS || x->unfit_unit != RF_GX_UNIT_NONE ||
            (rp->nparts >= rows && x->unfit_rows == 0)) {
            if (st == RF_EDEVMEM && x->unfit_unit != RF_GX_UNIT_NONE) st = rf_gx_unfit_error(x, ndiag, nerr);
            break;
        }
        /* a partition did not fit: smaller ones, and the kernel again */
        rf_gx_held_drop_diags(x, ndiag, nerr);
        if (k->kind == RF_HIR_DIFFERENCE) rf_gx_var_clear(x, k->out);
        st = parts_split(x, hv, rp);
        if (!st && rp->nparts > x->recpart_max) x->recpart_max = rp->nparts;
    }
    if (!st) x->recparted++;
    return st;
}

rf_status rf_gx_held_host_rel(gx *x, int32_t var, rf_rt_rel *r)
{
    /* (a value partly brought back: all of it in host memory first) */
    rf_status st = rf_gx_spill_var(x, var);
    if (st) return st;
    const rf_hir_var *hv = x->p->vars[var];
    const gval *v = &x->vals[var];
    hrows h;
    held_rows(x, var, &h);
    memset(r, 0, sizeof *r);
    st = rf_rt_rel_alloc(r, hv->ncols, hv->types, v->nrows);
    for (int32_t c = 0; c < hv->ncols && !st; c++) {
        int w = wid(hv->types[c]);
        /* (a column no kernel read has no copy: zeros, as rf_gx_host_rel gives) */
        for (int64_t i = 0; i < v->nrows; i++)
            value_put(r->cols[c], w, i, value_at(h.col[c], h.w[c], h.narrow[c], i));
    }
    if (st) rf_rt_rel_free(r);
    return st;
}
