/*
** runtime/gpu/rt_gpu_exec.c: the GPU executor: interprets the Harmony block
** graph as rt_exec.c does, with every value resident on the GPU.
**
** Owns the device values of a run (relations, index vectors, groupings, the
** hash index of a set that grows in place), the kernel algorithms built from
** the generated kernels and the CUB primitives, the per-code string tables
** that the host computes (those the GPU computes, and the dictionary's
** device copy, are rt_gpu_str.c's), and the fallbacks that run a kernel on
** the host (string concatenation over two columns, float aggregates: their
** results depend on the order of additions, which only the CPU code
** reproduces).
**
** Row order. Every kernel produces the rows in exactly the order the CPU
** backend does: filters keep input order (flags, scan, scatter); joins emit
** pairs by left row, then right row (the build side is radix-sorted by hash,
** which keeps rows of one hash ascending); distinct rows and groups are
** numbered by first occurrence (hash tables keep the lowest equal row with
** atomicMin; rows ordered by their first column are deduplicated by a walk
** over each run of equal first columns, which keeps the same rows); sorts
** are stable LSD radix sorts. So outputs, error messages
** and fixpoints are byte for byte the CPU's.
**
** Errors. Kernels record the lowest failing row in an error word; the host
** then re-evaluates that one row with the CPU evaluator, which words the
** message exactly as a CPU run does. Counts are read back after kernels
** whose output size depends on the data (one synchronization each); nothing
** else waits for the GPU until the outputs are copied back.
*/
#include "rf_cpu.h"
#include "rf_load.h"
#include "rf_rt_input.h"
#include "rf_rt_fixpoint.h"
#include "rf_rt_gpu.h"
#include "rt_gpu_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TILE RF_GPU_TILE

typedef struct gset {
    gbuf tab;     /* u64 slots: row numbers, RF_EMPTY when free */
    uint64_t cap; /* slots, a power of two */
} gset;

typedef struct gval {
    int64_t nrows; /* REL rows; index entries; groups: rows grouped */
    int64_t cap;   /* REL: rows the columns have room for */
    gbuf *cols;    /* REL: ncols buffers, NULL when nothing is allocated */
    gbuf a, b;     /* index vectors */
    int has_groups;
    int64_t ngroups;
    gbuf gid, first;
    gset *set;
    int distinct; /* REL: its maker dropped repeated rows (rf_gpu_dedupe_cols) */
} gval;

enum { WCHECK_WORDS = 256 }; /* deferred error words (gx.wcheck) */

typedef struct gx {
    const rf_hir_program *p;
    rf_rt_options o;
    rf_diags *d;
    rf_rt_dict *dict;
    rf_cpu_pool *cpool;
    int threads;
    gdev g;
    int g_open;
    gpool *pool;
    gval *vals;
    rf_rt_result *res;
    rf_gpu_kplan *plans; /* by kernel id */
    const rf_rt_gpu_inputs *inputs;
    int32_t nkernels;
    int on_host; /* the current kernel ran (partly) on the host */
    rf_gpu_fplan *fplan; /* the fused kernels (none with --no-fuse) */
    uint8_t *fdone;      /* by unit: it ran fused in this visit of its block */
    /* by variable, in a program of one block (each kernel runs once): the
    ** last kernel reading it; NULL in programs of several blocks */
    const rf_hir_kernel **last_reader;
    gstr str;    /* the dictionary on the device, string tables (rt_gpu_str.c) */
    /* error words of fused write passes, read once at the end (wcheck_flush):
    ** their stages already passed the flags pass, so an error there is an
    ** internal one, not worth a wait per kernel */
    gbuf wcheck;
    int64_t wcheck_used;
    const rf_hir_kernel *wcheck_of[WCHECK_WORDS];
} gx;

/* Fused stages (maps, join maps, gather maps) read at most this many variables. */
enum { FUSED_MAX_IN = 8 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static rf_loc kloc(const gx *x, const rf_hir_kernel *k)
{
    return rf_mkloc(x->p->source, k->loc.line, k->loc.line ? k->loc.col : 0);
}

static int wid(rf_type t) { return rf_rt_type_width(t); }

static uint64_t pow2_at_least(uint64_t n)
{
    uint64_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

/* The bits that hold every value below n (at least 1): a radix sort's width. */
static int bits_below(uint64_t n)
{
    int b = 1;
    while (b < 64 && (UINT64_C(1) << b) < n) b++;
    return b;
}

/* ---- device helpers ------------------------------------------------------- */

static rf_status galloc(gx *x, uint64_t bytes, gbuf *b) { return rf_gpool_alloc(x->pool, bytes, b); }
static void gfree(gx *x, gbuf *b) { rf_gpool_release(x->pool, b); }

static rf_status launch_max(gx *x, const char *name, int64_t work, const rf_gpu_args *a, uint64_t max_grid)
{
    if (work <= 0) return RF_OK;
    void *fn;
    rf_status st = x->g.ops->func(&x->g, name, &fn);
    if (st) return st;
    uint64_t grid = ((uint64_t)work + TILE - 1) / TILE;
    if (grid > max_grid) grid = max_grid;
    if (grid < 1) grid = 1;
    return x->g.ops->launch(&x->g, fn, name, grid, a);
}

static rf_status launch(gx *x, const char *name, int64_t work, const rf_gpu_args *a)
{
    return launch_max(x, name, work, a, x->g.max_grid);
}

static rf_status hlaunch(gx *x, const char *sig, const char *op, int64_t work, const rf_gpu_args *a)
{
    char name[RF_GPU_MAXC + 64];
    snprintf(name, sizeof name, "rfh_%s_%s", sig, op);
    return launch(x, name, work, a);
}

/* One empty launch at the end of the load. After the host's part of a load
** (reading and copying the inputs, no kernel for a second or more) the
** first launch and the first clear of a run took 25-35 us each on an H100,
** against 4-5 us when a kernel ran just before (docs/BENCHMARKS.md, fifth
** session): the GPU's start belongs to the load, like loading the kernels. */
static rf_status wake(gx *x)
{
    rf_gpu_args a; /* no rows: one block that does nothing */
    memset(&a, 0, sizeof a);
    return launch(x, "rf_gather", 1, &a);
}

/* A copy on the GPU. Up to 64 KiB it is a gather kernel in identity order:
** a launch costs 4-5 us on an H100, a copy by the driver 11-20 us (measured
** with 8 bytes, docs/BENCHMARKS.md, fifth session); beyond, the driver's. */
static rf_status dcopy(gx *x, gptr dst, gptr src, uint64_t n)
{
    if (n == 0) return RF_OK;
    if (n > (UINT64_C(64) << 10)) return x->g.ops->d2d(&x->g, dst, src, n);
    uint64_t w = ((dst | src | n) & 7) == 0 ? 8 : ((dst | src | n) & 3) == 0 ? 4 : 1;
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = (int64_t)(n / w);
    a.x[0] = 1;
    a.k[0] = w;
    a.c0[0] = src;
    a.o[0] = dst;
    return launch(x, "rf_gather", a.n, &a);
}

static rf_status get_i64(gx *x, gptr src, int64_t *v) { return x->g.ops->d2h(&x->g, v, src, 8); }

static rf_status put_u64(gx *x, gptr dst, uint64_t v) { return x->g.ops->h2d(&x->g, dst, &v, 8); }

/* An error word set to "no failure". */
static rf_status err_word(gx *x, gbuf *e)
{
    rf_status st = galloc(x, 8, e);
    if (!st) st = x->g.ops->memset8(&x->g, e->p, 0xff, 8);
    return st;
}

/* Reads the deferred error words back (one wait) and clears them. */
static rf_status wcheck_flush(gx *x)
{
    if (!x->wcheck_used) return RF_OK;
    int64_t w[WCHECK_WORDS];
    rf_status st = x->g.ops->d2h(&x->g, w, x->wcheck.p, (uint64_t)x->wcheck_used * 8);
    for (int64_t i = 0; i < x->wcheck_used && !st; i++)
        if (w[i] != -1) {
            rf_error(x->d, kloc(x, x->wcheck_of[i]),
                     "internal error: a fused kernel met a run-time error in its write pass only");
            st = RF_EINTERNAL;
        }
    if (!st) st = x->g.ops->memset8(&x->g, x->wcheck.p, 0xff, (uint64_t)x->wcheck_used * 8);
    x->wcheck_used = 0;
    return st;
}

/* Room for the deferred error words of fused kernel u's stages: *at. */
static rf_status wcheck_take(gx *x, const rf_gpu_funit *u, gptr *at)
{
    rf_status st = RF_OK;
    if (!x->wcheck.p) {
        st = galloc(x, WCHECK_WORDS * 8, &x->wcheck);
        if (!st) st = x->g.ops->memset8(&x->g, x->wcheck.p, 0xff, WCHECK_WORDS * 8);
    }
    if (!st && x->wcheck_used + u->n > WCHECK_WORDS) st = wcheck_flush(x);
    if (st) return st;
    *at = x->wcheck.p + (uint64_t)x->wcheck_used * 8;
    for (int32_t m = 0; m < u->n; m++) x->wcheck_of[x->wcheck_used++] = u->m[m].k;
    return RF_OK;
}

/* pos[0..n] = exclusive scan of in[0..n), whose entry n is set to 0 here
** (in has n + 1 entries: bytes when wide is 0, 64-bit counts when 1), into
** pos allocated by the caller (n + nw entries): the nw words from pos[n] on
** come back into w (w[0]: the total, pos[n]) in one wait, so that a status
** word a kernel left after pos[n] costs no wait of its own (nw 0: no wait;
** the caller reads pos[n] later). */
static rf_status scan_into(gx *x, int wide, gptr in, int64_t n, gptr pos, int64_t *w, int nw)
{
    rf_status (*scan)(gdev *, gptr, uint64_t *, gptr, gptr, int64_t) = wide ? x->g.ops->scan_i64 : x->g.ops->scan_u8;
    uint64_t w1 = wide ? 8 : 1;
    rf_status st = x->g.ops->memset8(&x->g, in + (uint64_t)n * w1, 0, w1);
    uint64_t tb = 0;
    if (!st) st = scan(&x->g, 0, &tb, in, pos, n + 1);
    gbuf t = {0, 0};
    if (!st) st = galloc(x, tb ? tb : 8, &t);
    if (!st) st = scan(&x->g, t.p, &tb, in, pos, n + 1);
    gfree(x, &t);
    if (!st && nw > 0) st = x->g.ops->d2h(&x->g, w, pos + (uint64_t)n * 8, (uint64_t)nw * 8);
    return st;
}

/* scan_into a fresh *pos: *total = pos[n]. */
static rf_status scan_excl(gx *x, int wide, gptr in, int64_t n, gbuf *pos, int64_t *total)
{
    rf_status st = galloc(x, (uint64_t)(n + 1) * 8, pos);
    if (!st) st = scan_into(x, wide, in, n, pos->p, total, 1);
    return st;
}

/* Exclusive scans of byte flags and of 64-bit counts (see scan_excl). */
static rf_status scan_flags(gx *x, gptr flags, int64_t n, gbuf *pos, int64_t *total)
{
    return scan_excl(x, 0, flags, n, pos, total);
}

static rf_status scan_counts(gx *x, gptr counts, int64_t n, gbuf *pos, int64_t *total)
{
    return scan_excl(x, 1, counts, n, pos, total);
}

/* The i in [0, n) with flags[i] != 0, ascending, into a fresh *out; their
** count goes to the device word cnt, and the nw words from cnt on come back
** into w (w[0]: the count) in one wait, so that a status word a kernel left
** next to the count costs no wait of its own. */
static rf_status select_into(gx *x, gptr flags, int64_t n, gbuf *out, gptr cnt, int64_t *w, int nw)
{
    gbuf t = {0, 0};
    uint64_t tb = 0;
    rf_status st = galloc(x, (uint64_t)n * 8, out);
    if (!st) st = x->g.ops->select(&x->g, 0, &tb, flags, out->p, cnt, n);
    if (!st) st = galloc(x, tb ? tb : 8, &t);
    if (!st) st = x->g.ops->select(&x->g, t.p, &tb, flags, out->p, cnt, n);
    gfree(x, &t);
    if (!st) st = x->g.ops->d2h(&x->g, w, cnt, (uint64_t)nw * 8);
    if (st) gfree(x, out);
    return st;
}

/* The i in [0, n) with flags[i] != 0, ascending, into a fresh *out (*m of them). */
static rf_status select_flags(gx *x, gptr flags, int64_t n, gbuf *out, int64_t *m)
{
    gbuf cnt = {0, 0};
    rf_status st = galloc(x, 8, &cnt);
    if (!st) st = select_into(x, flags, n, out, cnt.p, m, 1);
    gfree(x, &cnt);
    return st;
}

/* Stable sort of (keys, vals) by key bits [0, bits): results in fresh buffers. */
static rf_status sort_pairs(gx *x, gptr keys, gptr vals, int64_t n, int bits, gbuf *kout, gbuf *vout)
{
    uint64_t tb = 0;
    gbuf t = {0, 0};
    rf_status st = galloc(x, (uint64_t)n * 8, kout);
    if (!st) st = galloc(x, (uint64_t)n * 8, vout);
    if (!st) st = x->g.ops->sort_pairs(&x->g, 0, &tb, keys, kout->p, vals, vout->p, n, 0, bits);
    if (!st) st = galloc(x, tb ? tb : 8, &t);
    if (!st) st = x->g.ops->sort_pairs(&x->g, t.p, &tb, keys, kout->p, vals, vout->p, n, 0, bits);
    gfree(x, &t);
    return st;
}

static rf_status iota(gx *x, int64_t n, gbuf *out)
{
    rf_status st = galloc(x, (uint64_t)n * 8, out);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.p[0] = out->p;
    if (!st) st = launch(x, "rf_iota", n, &a);
    return st;
}

/* ---- values ---------------------------------------------------------------- */

static void set_free(gx *x, gset **s)
{
    if (!*s) return;
    gfree(x, &(*s)->tab);
    free(*s);
    *s = NULL;
}

static void val_clear(gx *x, gval *v, int32_t ncols)
{
    if (v->cols) {
        for (int32_t c = 0; c < ncols; c++) gfree(x, &v->cols[c]);
        free(v->cols);
        v->cols = NULL;
    }
    gfree(x, &v->a);
    gfree(x, &v->b);
    gfree(x, &v->gid);
    gfree(x, &v->first);
    set_free(x, &v->set);
    v->nrows = v->cap = v->ngroups = 0;
    v->has_groups = 0;
}

static void var_clear(gx *x, int32_t var) { val_clear(x, &x->vals[var], x->p->vars[var]->ncols); }

/* Replaces variable var's value by *v (which is emptied). */
static void var_set(gx *x, int32_t var, gval *v)
{
    var_clear(x, var);
    x->vals[var] = *v;
    memset(v, 0, sizeof *v);
}

static int64_t var_rows(const gx *x, int32_t var) { return x->vals[var].nrows; }

/* Columns for rows rows (room for cap >= rows). */
static rf_status rel_alloc(gx *x, gval *v, const rf_type *types, int32_t ncols, int64_t rows, int64_t cap)
{
    memset(v, 0, sizeof *v);
    v->nrows = rows;
    v->cap = cap;
    if (cap <= 0 || ncols == 0) return RF_OK;
    v->cols = rf_calloc((size_t)ncols, sizeof *v->cols);
    if (!v->cols) return RF_ENOMEM;
    for (int32_t c = 0; c < ncols; c++) {
        rf_status st = galloc(x, (uint64_t)cap * (uint64_t)wid(types[c]), &v->cols[c]);
        if (st) {
            val_clear(x, v, ncols);
            return st;
        }
    }
    return RF_OK;
}

static gptr colp(const gval *v, int32_t c) { return v->cols ? v->cols[c].p : 0; }

/* out = rows idx[0..n) of in (all columns). */
static rf_status rel_gather(gx *x, const gval *in, const rf_type *types, int32_t ncols, gptr idx, int64_t n,
                            gval *out)
{
    rf_status st = rel_alloc(x, out, types, ncols, n, n);
    if (st || n == 0 || ncols == 0) return st;
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.x[0] = ncols;
    a.r0 = idx;
    for (int32_t c = 0; c < ncols; c++) {
        a.k[c] = (uint64_t)wid(types[c]);
        a.c0[c] = colp(in, c);
        a.o[c] = colp(out, c);
    }
    st = launch(x, "rf_gather", n, &a);
    if (st) val_clear(x, out, ncols);
    return st;
}

/* ---- host copies ------------------------------------------------------------ */

static rf_status host_rel(gx *x, int32_t var, rf_rt_rel *r)
{
    const rf_hir_var *hv = x->p->vars[var];
    const gval *v = &x->vals[var];
    memset(r, 0, sizeof *r);
    rf_status st = rf_rt_rel_alloc(r, hv->ncols, hv->types, v->nrows);
    for (int32_t c = 0; c < hv->ncols && !st && v->nrows; c++)
        st = x->g.ops->d2h(&x->g, r->cols[c], colp(v, c), (uint64_t)v->nrows * (uint64_t)wid(hv->types[c]));
    if (st) rf_rt_rel_free(r);
    return st;
}

static rf_status host_i64(gx *x, gptr src, int64_t n, int64_t **out)
{
    *out = rf_malloc((size_t)(n + 1) * 8);
    if (!*out) return RF_ENOMEM;
    rf_status st = n ? x->g.ops->d2h(&x->g, *out, src, (uint64_t)n * 8) : RF_OK;
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

static rf_status upload_rel(gx *x, const rf_rt_rel *r, const rf_type *types, int32_t ncols, gval *out)
{
    rf_status st = rel_alloc(x, out, types, ncols, r->nrows, r->nrows);
    for (int32_t c = 0; c < ncols && !st && r->nrows; c++)
        st = x->g.ops->h2d(&x->g, colp(out, c), r->cols[c], (uint64_t)r->nrows * (uint64_t)wid(types[c]));
    if (st) val_clear(x, out, ncols);
    return st;
}

/* ---- string codes: ranges, ranks, per-code tables ----------------------------- */

/* The codes that column col holds at rows (NULL: 0..n-1): their range
** [*lo, *hi] and a byte per code of the range, 1 where present (owned). */
static rf_status code_set(gx *x, gptr col, gptr rows, int64_t n, int64_t *lo, int64_t *hi, uint8_t **bits)
{
    *bits = NULL;
    *lo = 0;
    *hi = -1;
    if (n <= 0) return RF_OK;
    gbuf mm = {0, 0};
    uint64_t init[2] = {UINT64_MAX, 0}, got[2];
    rf_status st = galloc(x, 16, &mm);
    if (!st) st = x->g.ops->h2d(&x->g, mm.p, init, 16);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.c0[0] = col;
    a.r0 = rows;
    a.p[0] = mm.p;
    if (!st) st = launch(x, "rf_code_range", n, &a);
    if (!st) st = x->g.ops->d2h(&x->g, got, mm.p, 16);
    gfree(x, &mm);
    if (st) return st;
    *lo = (int64_t)got[0];
    *hi = (int64_t)got[1];
    int64_t span = *hi - *lo + 1;
    gbuf bm = {0, 0};
    if (!(*bits = rf_malloc((size_t)span))) return RF_ENOMEM;
    st = galloc(x, (uint64_t)span, &bm);
    if (!st) st = x->g.ops->memset8(&x->g, bm.p, 0, (uint64_t)span);
    a.p[0] = bm.p;
    a.x[0] = *lo;
    if (!st) st = launch(x, "rf_code_mark", n, &a);
    if (!st) st = x->g.ops->d2h(&x->g, *bits, bm.p, (uint64_t)span);
    gfree(x, &bm);
    if (st) {
        free(*bits);
        *bits = NULL;
    }
    return st;
}

/* Byte-order ranks of the codes present in col (all n rows), as on the CPU:
** ranks (u32 per code from *lo) and, if back is not NULL, the code of each
** rank. Empty when n == 0. Computed on the device (rt_gpu_str.c). */
static rf_status string_ranks(gx *x, gptr col, int64_t n, gbuf *ranks, int64_t *lo, gbuf *back)
{
    return rf_gpu_str_ranks(&x->str, col, n, ranks, lo, back);
}

/* A copy of e with the column (side, col) read as side 0, column 0. */
static rf_qp_expr *remap_expr(const rf_qp_expr *e, int32_t side, int32_t col)
{
    rf_qp_expr *c = rf_calloc(1, sizeof *c);
    if (!c) return NULL;
    *c = *e;
    c->args = NULL;
    if (e->kind == RF_QP_E_COL && e->side == side && e->col == col) {
        c->side = 0;
        c->col = 0;
    }
    if (e->nargs) {
        c->args = rf_calloc((size_t)e->nargs, sizeof *c->args);
        if (!c->args) {
            free(c);
            return NULL;
        }
        for (int32_t i = 0; i < e->nargs; i++)
            if (!(c->args[i] = remap_expr(e->args[i], side, col))) {
                c->nargs = i;
                return c; /* the caller sees the NULL argument and frees */
            }
    }
    return c;
}

static void free_expr(rf_qp_expr *e)
{
    if (!e) return;
    for (int32_t i = 0; i < e->nargs; i++) free_expr(e->args[i]);
    free(e->args);
    free(e);
}

static int expr_complete(const rf_qp_expr *e)
{
    if (!e) return 0;
    for (int32_t i = 0; i < e->nargs; i++)
        if (!expr_complete(e->args[i])) return 0;
    return 1;
}

/* The first argument of a date:parse island: its string. */
static rf_status island_dates(gx *x, const rf_qp_expr *e, const uint32_t *codes, int64_t m, int64_t *out)
{
    const rf_qp_expr *s = e->args[0];
    for (int64_t i = 0; i < m; i++) {
        const char *p;
        int64_t len;
        uint32_t code = codes ? codes[i] : 0;
        if (s->kind == RF_QP_E_CONST) {
            p = s->c.s ? s->c.s : "";
            len = s->c.s ? s->c.slen : 0;
        } else {
            p = rf_rt_dict_str(x->dict, code, &len);
            if (!p) p = "", len = 0;
        }
        int32_t dv;
        out[i] = rf_val_parse_date(p, len, &dv, NULL) ? INT64_MIN : dv;
    }
    return RF_OK;
}

/* Table j of a map kernel: the island's value for every code its column
** holds at the rows the kernel reads (or its one value without a column). */
static rf_status build_island(gx *x, const rf_hir_kernel *k, const rf_gpu_island *is, const gval *side, gptr rows,
                              int64_t n, gbuf *table, int64_t *base)
{
    if (is->dev)
        return rf_gpu_str_island(&x->str, k->id, (int32_t)(is - x->plans[k->id].islands), is, colp(side, is->col), rows,
                                 n, table, base);
    const rf_qp_expr *e = is->e;
    int64_t lo = 0, hi = 0, m = 0;
    uint8_t *bits = NULL;
    uint32_t *codes = NULL;
    *base = 0;
    rf_status st = RF_OK;
    if (is->side >= 0) {
        st = code_set(x, colp(side, is->col), rows, n, &lo, &hi, &bits);
        if (st || n <= 0) return st;
        int64_t span = hi - lo + 1;
        for (int64_t i = 0; i < span; i++) m += bits[i] != 0;
        if (!(codes = rf_malloc((size_t)(m + 1) * 4))) st = RF_ENOMEM;
        m = 0;
        for (int64_t i = 0; i < span && !st; i++)
            if (bits[i]) codes[m++] = (uint32_t)(lo + i);
        *base = lo;
    } else {
        m = 1;
        hi = lo = 0;
    }
    int64_t span = hi - lo + 1;
    int w = e->type == RF_TYPE_BOOL ? 1 : e->type == RF_TYPE_STRING ? 4 : 8;
    char *tab = st ? NULL : rf_calloc((size_t)span, (size_t)w);
    if (!st && !tab) st = RF_ENOMEM;
    if (!st && e->kind == RF_QP_E_CALL && e->fn == RF_BI_DATE_PARSE) {
        int64_t *vals = rf_malloc((size_t)m * 8);
        if (!vals) st = RF_ENOMEM;
        if (!st) st = island_dates(x, e, codes, m, vals);
        for (int64_t i = 0; i < m && !st; i++) ((int64_t *)tab)[codes ? codes[i] - lo : 0] = vals[i];
        free(vals);
    } else if (!st) {
        /* the CPU evaluator over one row per code: its semantics, exactly */
        rf_qp_expr *ex = remap_expr(e, is->side, is->col);
        if (!ex || !expr_complete(ex)) st = RF_ENOMEM;
        rf_rt_rel in, out;
        memset(&in, 0, sizeof in);
        memset(&out, 0, sizeof out);
        rf_type st_type = RF_TYPE_STRING;
        void *colv[1] = {codes};
        in.nrows = m;
        in.ncols = is->side >= 0 ? 1 : 0;
        in.types = &st_type;
        in.cols = colv;
        rf_rt_side sides[2] = {{&in, NULL}, {NULL, NULL}};
        rf_rt_eval_ctx ctx = {x->dict, x->threads, kloc(x, k), rf_hir_kind_name(k->kind)};
        rf_type ot = e->type;
        if (!st) st = rf_rt_eval_map(&ctx, NULL, &ex, 1, &ot, sides, m, &out, x->d);
        if (!st && out.nrows != m) st = RF_EINTERNAL;
        for (int64_t i = 0; i < m && !st; i++) {
            int64_t at = codes ? codes[i] - lo : 0;
            memcpy(tab + at * w, (const char *)out.cols[0] + i * w, (size_t)w);
        }
        rf_rt_rel_free(&out);
        free_expr(ex);
    }
    if (!st) st = galloc(x, (uint64_t)span * (uint64_t)w, table);
    if (!st) st = x->g.ops->h2d(&x->g, table->p, tab, (uint64_t)span * (uint64_t)w);
    free(tab);
    free(bits);
    free(codes);
    return st;
}

/* ---- map, join_map, gather_map --------------------------------------------------- */

/* One row of a side, copied to the host (all columns). */
static rf_status host_row(gx *x, int32_t var, gptr rows, int64_t r, rf_rt_rel *out)
{
    const rf_hir_var *hv = x->p->vars[var];
    const gval *v = &x->vals[var];
    int64_t row = r;
    rf_status st = rows ? get_i64(x, rows + (uint64_t)r * 8, &row) : RF_OK;
    if (!st) st = rf_rt_rel_alloc(out, hv->ncols, hv->types, 1);
    for (int32_t c = 0; c < hv->ncols && !st; c++) {
        int w = wid(hv->types[c]);
        st = x->g.ops->d2h(&x->g, out->cols[c], colp(v, c) + (uint64_t)row * (uint64_t)w, (uint64_t)w);
    }
    return st;
}

/* The message for the lowest failing row: the CPU evaluator on that row. */
/* A map-like kernel's operands: the columns of its (up to) two sides and
** their row indices (0: row r itself). */
static void args_sides(gx *x, rf_gpu_args *a, const int32_t vars[2], const gptr rows[2])
{
    a->r0 = rows[0];
    a->r1 = rows[1];
    for (int s = 0; s < 2; s++) {
        if (vars[s] < 0) continue;
        const gval *v = &x->vals[vars[s]];
        for (int32_t c = 0; c < x->p->vars[vars[s]]->ncols; c++) {
            if (s == 0)
                a->c0[c] = colp(v, c);
            else
                a->c1[c] = colp(v, c);
        }
    }
}

/* The codes of a kernel plan's string constants, into a->k[at ...]. */
static rf_status args_consts(gx *x, const rf_gpu_kplan *pl, rf_gpu_args *a, int32_t at)
{
    rf_status st = RF_OK;
    for (int32_t i = 0; i < pl->nconst && !st; i++) {
        const rf_qp_expr *c = pl->consts[i];
        uint32_t code = 0;
        st = rf_rt_dict_intern(x->dict, c->c.s ? c->c.s : "", c->c.s ? c->c.slen : 0, &code);
        a->k[at + i] = code;
    }
    return st;
}

static rf_status map_error(gx *x, const rf_hir_kernel *k, const int32_t vars[2], const gptr rows[2], int64_t row)
{
    rf_rt_rel r[2], tmp;
    memset(r, 0, sizeof r);
    memset(&tmp, 0, sizeof tmp);
    rf_rt_side sides[2] = {{NULL, NULL}, {NULL, NULL}};
    rf_status st = RF_OK;
    for (int s = 0; s < 2 && !st; s++)
        if (vars[s] >= 0) {
            st = host_row(x, vars[s], rows[s], row, &r[s]);
            sides[s].rel = &r[s];
        }
    rf_rt_eval_ctx ctx = {x->dict, 1, kloc(x, k), rf_hir_kind_name(k->kind)};
    if (!st) {
        st = rf_rt_eval_map(&ctx, k->filter, k->outs, k->nouts, x->p->vars[k->out]->types, sides, 1, &tmp, x->d);
        if (!st) {
            rf_error(x->d, kloc(x, k), "internal error: k%d: the GPU reported a run-time error in row %" PRId64
                                       " that the CPU evaluator does not see",
                     k->id, row);
            st = RF_EINTERNAL;
        }
    }
    rf_rt_rel_free(&tmp);
    rf_rt_rel_free(&r[0]);
    rf_rt_rel_free(&r[1]);
    return st;
}

/* The kernel on the host: inputs down, rt_eval.c, the result up. */
static rf_status map_on_host(gx *x, const rf_hir_kernel *k, const int32_t vars[2], const gval *idx, int64_t n)
{
    rf_rt_rel r[2], out;
    memset(r, 0, sizeof r);
    memset(&out, 0, sizeof out);
    int64_t *ra = NULL, *rb = NULL;
    rf_status st = RF_OK;
    for (int s = 0; s < 2 && !st; s++)
        if (vars[s] >= 0) st = host_rel(x, vars[s], &r[s]);
    if (!st && idx) st = host_i64(x, idx->a.p, idx->nrows, &ra);
    if (!st && idx && vars[1] >= 0) st = host_i64(x, idx->b.p, idx->nrows, &rb);
    rf_rt_side sides[2] = {{vars[0] >= 0 ? &r[0] : NULL, ra}, {vars[1] >= 0 ? &r[1] : NULL, rb}};
    rf_rt_eval_ctx ctx = {x->dict, x->threads, kloc(x, k), rf_hir_kind_name(k->kind)};
    const rf_hir_var *ov = x->p->vars[k->out];
    if (!st) st = rf_rt_eval_map(&ctx, k->filter, k->outs, k->nouts, ov->types, sides, n, &out, x->d);
    gval v;
    memset(&v, 0, sizeof v);
    if (!st) st = upload_rel(x, &out, ov->types, ov->ncols, &v);
    if (!st) var_set(x, k->out, &v);
    rf_rt_rel_free(&out);
    rf_rt_rel_free(&r[0]);
    rf_rt_rel_free(&r[1]);
    free(ra);
    free(rb);
    x->on_host = 1;
    return st;
}

/* Rows ordered by their first column (data files written in key order, and
** the filters, maps, joins and uniques that keep their left input's order)
** are deduplicated (grouped by keys whose first column orders them) without
** a hash table: runs_first compares each row with the earlier rows of its
** run of equal first columns, at most RUNS_LIMIT of them (a longer search is
** reported and the caller hashes). RUNS_MIN_ROWS: below it one hashing pass
** costs about as little as the attempt; the environment's RF_GPU_RUNS_MIN
** replaces it (tests: small inputs through the walk, and its fallbacks). */
enum { RUNS_LIMIT = 32, RUNS_MIN_ROWS = 1 << 16 };

/* A row threshold from the environment's variable name: a count, or "off"
** (never: INT64_MAX); dflt where it is unset or not a count. */
static int64_t env_rows(const char *name, int64_t dflt)
{
    const char *e = getenv(name);
    if (!e || !*e) return dflt;
    if (!strcmp(e, "off")) return INT64_MAX;
    char *end;
    long long v = strtoll(e, &end, 10);
    return *end || v < 0 ? dflt : (int64_t)v;
}

static int64_t runs_min_rows(void) { return env_rows("RF_GPU_RUNS_MIN", RUNS_MIN_ROWS); }

/* Does k drop its output's repeated rows itself this time (fuse.c,
** rf_gpu_dedupe_cols: only a unique reads them)? Over as many rows as the
** unique's walk over runs would take (runs_min_rows). */
static int repeats_dropped(gx *x, const rf_hir_kernel *k, int64_t n)
{
    return x->plans[k->id].ndedupe > 0 && n > 0 && n >= runs_min_rows();
}

/* The tiles of the one-pass kernels (rf_base.cuh's tiles_of): 4 x
** RF_GPU_TILE rows each. */
static int64_t onepass_tiles(int64_t n) { return (n + 4 * RF_GPU_TILE - 1) / (4 * RF_GPU_TILE); }

static rf_status k_map(gx *x, const rf_hir_kernel *k)
{
    int32_t vars[2] = {k->in[0], k->kind == RF_HIR_JOIN_MAP ? k->in[1] : -1};
    const gval *idx = k->kind == RF_HIR_MAP ? NULL : &x->vals[k->idx];
    gptr rows[2] = {idx ? idx->a.p : 0, idx && vars[1] >= 0 ? idx->b.p : 0};
    int64_t n = idx ? idx->nrows : x->vals[k->in[0]].nrows;
    const rf_gpu_kplan *pl = &x->plans[k->id];
    if (!pl->gpu) return map_on_host(x, k, vars, idx, n);
    const rf_hir_var *ov = x->p->vars[k->out];
    gval out;
    memset(&out, 0, sizeof out);
    if (n == 0) {
        var_set(x, k->out, &out);
        return RF_OK;
    }
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    args_sides(x, &a, vars, rows);
    rf_status st = RF_OK;
    if (!st) st = args_consts(x, pl, &a, 0);
    gbuf tabs[RF_GPU_MAX_ISLANDS];
    memset(tabs, 0, sizeof tabs);
    for (int32_t j = 0; j < pl->nisland && !st; j++) {
        const rf_gpu_island *is = &pl->islands[j];
        int32_t sv = is->side >= 0 ? vars[is->side] : -1;
        int64_t base = 0;
        st = build_island(x, k, is, sv >= 0 ? &x->vals[sv] : NULL, is->side >= 0 ? rows[is->side] : 0, n, &tabs[j],
                          &base);
        a.t[j] = tabs[j].p;
        a.k[RF_GPU_KISLAND + j] = (uint64_t)base;
    }
    if (pl->nrowstr > 0 && !st) {
        /* string work over two columns reads the rows' strings from the
        ** dictionary's device copy: every code a column can hold is there */
        st = rf_gpu_dict_sync(&x->str, 0);
        a.t[RF_GPU_TDICT] = x->str.dd.off.p;
        a.t[RF_GPU_TDICT + 1] = x->str.dd.bytes.p;
    }
    gbuf err = {0, 0}, pos = {0, 0};
    int64_t count = n;
    char name[64];
    int dedupe = k->kind == RF_HIR_MAP && repeats_dropped(x, k, n); /* (a join_map: only fused, k_fused) */
    /* a filter or a walk: one kernel (rf_map.cuh's map_onepass; on the H100
    ** at SF 7 p3's map took 1.01 ms in one pass against 1.27 ms in two,
    ** docs/BENCHMARKS.md, ninth session); else the write pass alone */
    int onepass = k->filter || dedupe;
    int64_t bad = -1;
    if (!st && !onepass) st = err_word(x, &err);
    a.p[1] = err.p;
    if (!st && onepass) {
        /* one kernel (rf_map.cuh's map_onepass) into room for every row: the
        ** tiles' words, then the tile counter, the rows written, the walk's
        ** status word and an error word, the last three read back at once */
        int64_t nt = onepass_tiles(n);
        st = galloc(x, (uint64_t)(nt + 4) * 8, &pos);
        if (!st) st = rel_alloc(x, &out, ov->types, ov->ncols, n, n);
        for (int32_t c = 0; c < ov->ncols && !st; c++) a.o[c] = colp(&out, c);
        a.p[0] = pos.p;
        a.p[1] = pos.p + (uint64_t)(nt + 3) * 8;
        a.p[2] = pos.p + (uint64_t)nt * 8;
        a.p[3] = pos.p + (uint64_t)(nt + 2) * 8;
        snprintf(name, sizeof name, "rfk%d_onepass_smem", k->id);
        for (int pass = 0; pass < 2 && !st; pass++) {
            /* the second pass only where the walk gave way: every row kept */
            a.x[5] = dedupe ? RUNS_LIMIT : 0;
            st = x->g.ops->memset8(&x->g, pos.p, 0, (uint64_t)(nt + 3) * 8);
            if (!st) st = x->g.ops->memset8(&x->g, a.p[1], 0xff, 8);
            if (!st) st = launch(x, name, nt * RF_GPU_TILE, &a);
            int64_t w[3] = {0, 0, -1};
            if (!st) st = x->g.ops->d2h(&x->g, w, a.p[2] + 8, sizeof w);
            count = w[0];
            bad = w[2];
            if (!dedupe || w[1] == 0) break;
            dedupe = 0;
        }
        out.nrows = count;
    } else if (!onepass) {
        if (!st) st = rel_alloc(x, &out, ov->types, ov->ncols, count, count);
        for (int32_t c = 0; c < ov->ncols && !st; c++) a.o[c] = colp(&out, c);
        snprintf(name, sizeof name, "rfk%d_write", k->id);
        if (!st && count > 0) st = launch(x, name, n, &a);
        if (!st) st = get_i64(x, err.p, &bad);
    }
    if (!st && bad != -1) st = map_error(x, k, vars, rows, bad);
    gfree(x, &err);
    gfree(x, &pos);
    for (int32_t j = 0; j < RF_GPU_MAX_ISLANDS; j++) gfree(x, &tabs[j]);
    if (st) {
        val_clear(x, &out, ov->ncols);
        return st;
    }
    out.distinct = dedupe;
    var_set(x, k->out, &out);
    return RF_OK;
}

/* ---- joins ---------------------------------------------------------------------------- */

typedef struct jtab {
    gbuf hs, js, start; /* hashes sorted by bucket, their rows (none: ordered), each bucket's start */
    uint64_t mask, base;
    int64_t rot1; /* 0: the mixing hash; else an ordered build's rotation + 1 */
    int64_t n;
} jtab;

static void jtab_free(gx *x, jtab *t)
{
    gfree(x, &t->hs);
    gfree(x, &t->js);
    gfree(x, &t->start);
}

/* The hash's parameters of t's builds and probes (rf_join.cuh struct jh). */
static void jtab_args(const jtab *t, rf_gpu_args *a)
{
    a->x[0] = (int64_t)t->mask;
    a->x[1] = (int64_t)t->base;
    a->x[2] = t->rot1;
}

/* A build whose right side has one key column, in ascending order, skips
** the sort (rf_join.cuh: the ordered build) from ORDERED_MIN_ROWS right rows
** on: below, the sort costs about what join_range's read back does. The
** environment's RF_GPU_ORDERED_MIN replaces it ("off": never; tests: small
** builds that way).
** ORDERED_MAX_ROT: the most key bits the ordered hash drops from a bucket
** (at most 16 distinct keys share one; TPC-H's order keys, 8 of every 32
** values, take 1 bit at SF 1 and 2 at SF 7 and 10). */
enum { ORDERED_MIN_ROWS = 1 << 16, ORDERED_MAX_ROT = 4 };

static int64_t ordered_min_rows(void) { return env_rows("RF_GPU_ORDERED_MIN", ORDERED_MIN_ROWS); }

/* Sets t's base and rot1 for an ordered build where the nr rows of keys
** (one column) ascend and span few enough values for t's buckets; leaves
** them 0 (the mixing hash) otherwise. */
static rf_status join_order(gx *x, const char *sig, const rf_gpu_args *keys, int64_t nr, jtab *t)
{
    if (strlen(sig) != 1 || nr < ordered_min_rows()) return RF_OK;
    const uint64_t init[3] = {UINT64_MAX, 0, 0};
    uint64_t w[3];
    gbuf b = {0, 0};
    rf_gpu_args a = *keys;
    a.n = nr;
    rf_status st = galloc(x, sizeof w, &b);
    a.p[0] = b.p;
    if (!st) st = x->g.ops->h2d(&x->g, b.p, init, sizeof init);
    if (!st) st = hlaunch(x, sig, "join_range_smem", nr, &a);
    if (!st) st = x->g.ops->d2h(&x->g, w, b.p, sizeof w);
    gfree(x, &b);
    if (st || w[2] || w[0] > w[1]) return st;
    int64_t rot = 0;
    while (rot < 64 && ((w[1] - w[0]) >> rot) > t->mask) rot++;
    if (rot > ORDERED_MAX_ROT) return RF_OK;
    t->base = w[0];
    t->rot1 = rot + 1;
    return RF_OK;
}

/* The build side (rf_join.cuh): rows sorted by their key hash's bucket, and
** where each bucket starts. */
static rf_status join_build(gx *x, const char *sig, const rf_gpu_args *keys, int64_t nr, jtab *t)
{
    memset(t, 0, sizeof *t);
    t->n = nr;
    uint64_t cap = pow2_at_least((uint64_t)nr * 2);
    /* the radix sort takes 8 bits a pass: where two buckets per row would
    ** leave one bit to a last pass, one per row saves the pass (orders at
    ** SF 7 and 10: 25 -> 24 bits, 4 -> 3 passes) */
    if (bits_below(cap) % 8 == 1 && cap >= 512 && cap / 2 >= (uint64_t)nr) cap /= 2;
    t->mask = cap - 1;
    rf_status st = join_order(x, sig, keys, nr, t);
    gbuf h = {0, 0}, r = {0, 0};
    rf_gpu_args a = *keys;
    a.n = nr;
    jtab_args(t, &a);
    if (!st) st = galloc(x, (uint64_t)nr * 8, &h);
    if (!st && !t->rot1) st = galloc(x, (uint64_t)nr * 8, &r);
    a.p[0] = h.p;
    a.p[1] = r.p;
    if (!st) st = hlaunch(x, sig, "join_hash", nr, &a);
    if (t->rot1) {
        /* in bucket order already: entry q is right row q */
        t->hs = h;
    } else {
        if (!st) st = sort_pairs(x, h.p, r.p, nr, bits_below(cap), &t->hs, &t->js);
        gfree(x, &h);
        gfree(x, &r);
    }
    if (!st) st = galloc(x, cap * 8, &t->start);
    if (!st) st = x->g.ops->memset8(&x->g, t->start.p, 0xff, cap * 8);
    memset(&a, 0, sizeof a);
    a.n = nr;
    a.p[0] = t->hs.p;
    a.p[1] = t->start.p;
    a.x[0] = (int64_t)t->mask;
    if (!st) st = launch(x, "rf_join_runs", nr, &a);
    if (st) jtab_free(x, t);
    return st;
}

/* A join whose left side is far smaller than its right: a probe walks all
** of its matches alone, so few left rows with many matches each leave the GPU
** idle (q11: one nation row, 4,000 suppliers of it, in one thread). Then the
** build is on the left and the right rows probe, one thread each; the pairs
** are sorted back into left-then-right order (a stable radix sort on the
** left row, log2(left rows) bits), the order the CPU gives. */
static int join_skewed(int64_t nl, int64_t nr) { return nl > 0 && nr / 32 > nl; }

/* The build on `build` (its key columns bk) and the probe arguments for the
** rows of `probe` (keys pk): a.n probe rows, a.m build rows, p[0..2] and
** x[0] the build (rf_join.cuh). */
static rf_status probe_setup(gx *x, const char *sig, const gval *probe, const int32_t *pk, const gval *build,
                             const int32_t *bk, int32_t nkeys, jtab *t, rf_gpu_args *a)
{
    memset(a, 0, sizeof *a);
    for (int32_t i = 0; i < nkeys; i++) {
        a->c0[i] = colp(probe, pk[i]);
        a->c1[i] = colp(build, bk[i]);
    }
    rf_status st = join_build(x, sig, a, build->nrows, t);
    if (st) return st;
    a->n = probe->nrows;
    a->m = build->nrows;
    a->p[0] = t->hs.p;
    a->p[1] = t->js.p;
    a->p[2] = t->start.p;
    jtab_args(t, a);
    return RF_OK;
}

/* The matching (probe row, build row) pairs, by probe row, then build row. */
static rf_status join_pairs(gx *x, const char *sig, const gval *probe, const int32_t *pk, const gval *build,
                            const int32_t *bk, int32_t nkeys, gbuf *pp, gbuf *pb, int64_t *total)
{
    jtab t;
    rf_gpu_args a;
    rf_status st = probe_setup(x, sig, probe, pk, build, bk, nkeys, &t, &a);
    if (st) return st;
    int64_t n = probe->nrows;
    gbuf cnt = {0, 0}, pos = {0, 0};
    *total = 0;
    st = galloc(x, (uint64_t)(n + 1) * 8, &cnt);
    a.p[4] = cnt.p;
    if (!st) st = hlaunch(x, sig, "join_count", n, &a);
    if (!st) st = scan_counts(x, cnt.p, n, &pos, total);
    if (!st) st = galloc(x, (uint64_t)*total * 8, pp);
    if (!st) st = galloc(x, (uint64_t)*total * 8, pb);
    a.p[5] = pos.p;
    a.p[6] = pp->p;
    a.p[7] = pb->p;
    if (!st && *total > 0) st = hlaunch(x, sig, "join_write", n, &a);
    gfree(x, &cnt);
    gfree(x, &pos);
    jtab_free(x, &t);
    return st;
}

static rf_status join_swapped(gx *x, const rf_hir_kernel *k, const char *sig, gval *out)
{
    const gval *l = &x->vals[k->in[0]], *r = &x->vals[k->in[1]];
    gbuf rr = {0, 0}, rl = {0, 0};
    int64_t total = 0;
    /* (right, left) pairs ordered by right row, then left row */
    rf_status st = join_pairs(x, sig, r, k->rkeys, l, k->lkeys, k->nkeys, &rr, &rl, &total);
    if (!st && total > 0) st = sort_pairs(x, rl.p, rr.p, total, bits_below((uint64_t)l->nrows), &out->a, &out->b);
    out->nrows = total;
    gfree(x, &rl);
    gfree(x, &rr);
    return st;
}

static rf_status k_join_index(gx *x, const rf_hir_kernel *k)
{
    const gval *l = &x->vals[k->in[0]], *r = &x->vals[k->in[1]];
    int anti = k->kind == RF_HIR_ANTI_INDEX;
    int64_t nl = l->nrows, nr = r->nrows;
    gval out;
    memset(&out, 0, sizeof out);
    rf_status st = RF_OK;
    if (anti && (k->nkeys == 0 || nr == 0)) {
        /* no shared variables: every row survives when the negated relation is empty */
        int64_t n = nr ? 0 : nl;
        st = iota(x, n, &out.a);
        out.nrows = n;
    } else if (!anti && k->nkeys == 0) {
        if (nr && nl > INT64_MAX / nr) {
            rf_error(x->d, kloc(x, k), "a cross product of %" PRId64 " by %" PRId64 " rows is too large", nl, nr);
            return RF_EUSER;
        }
        int64_t n = nl * nr;
        st = galloc(x, (uint64_t)n * 8, &out.a);
        if (!st) st = galloc(x, (uint64_t)n * 8, &out.b);
        rf_gpu_args a;
        memset(&a, 0, sizeof a);
        a.n = n;
        a.x[0] = nr;
        a.p[0] = out.a.p;
        a.p[1] = out.b.p;
        if (!st) st = launch(x, "rf_cross", n, &a);
        out.nrows = n;
    } else if (nl == 0 || nr == 0) {
        out.nrows = 0;
    } else {
        char sig[RF_GPU_MAXC + 1];
        rf_gpu_sig(x->p->vars[k->in[0]]->types, k->lkeys, k->nkeys, sig);
        if (!anti && join_skewed(nl, nr)) {
            st = join_swapped(x, k, sig, &out);
        } else if (anti) {
            jtab t;
            rf_gpu_args a;
            st = probe_setup(x, sig, l, k->lkeys, r, k->rkeys, k->nkeys, &t, &a);
            if (st) return st;
            gbuf flags = {0, 0};
            st = galloc(x, (uint64_t)nl, &flags);
            a.p[4] = flags.p;
            if (!st) st = hlaunch(x, sig, "anti_flags", nl, &a);
            if (!st) st = select_flags(x, flags.p, nl, &out.a, &out.nrows);
            gfree(x, &flags);
            jtab_free(x, &t);
        } else {
            st = join_pairs(x, sig, l, k->lkeys, r, k->rkeys, k->nkeys, &out.a, &out.b, &out.nrows);
        }
    }
    if (st) {
        val_clear(x, &out, 0);
        return st;
    }
    var_set(x, k->out, &out);
    return RF_OK;
}

/* ---- hash tables of first occurrences --------------------------------------------------- */

typedef struct keycols {
    int32_t n;
    gptr cols[RF_GPU_MAXC];
    char sig[RF_GPU_MAXC + 1];
} keycols;

static void keys_of(const gval *v, const rf_type *types, const int32_t *cols, int32_t n, keycols *kc)
{
    kc->n = n;
    for (int32_t i = 0; i < n; i++) kc->cols[i] = colp(v, cols ? cols[i] : i);
    rf_gpu_sig(types, cols, n, kc->sig);
}

/* flags[i] (n + 1 bytes) = 1 where row i is the first of its key among the
** rows with want[i] != 0 (want 0: all rows); slot and tab as left by the
** insert, for grp_finish. */
static rf_status first_flags(gx *x, const keycols *kc, int64_t n, gptr want, gbuf *tab, gbuf *slot, gbuf *flags)
{
    uint64_t cap = pow2_at_least((uint64_t)n * 2);
    rf_status st = galloc(x, cap * 8, tab);
    if (!st) st = x->g.ops->memset8(&x->g, tab->p, 0xff, cap * 8);
    if (!st) st = galloc(x, (uint64_t)n * 8, slot);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    for (int32_t i = 0; i < kc->n; i++) a.c0[i] = kc->cols[i];
    a.p[0] = tab->p;
    a.p[1] = slot->p;
    a.p[2] = want;
    a.x[0] = (int64_t)(cap - 1);
    if (!st) st = hlaunch(x, kc->sig, "grp_insert", n, &a);
    if (!st) st = galloc(x, (uint64_t)n + 1, flags);
    memset(&a, 0, sizeof a);
    a.n = n;
    a.p[0] = tab->p;
    a.p[1] = slot->p;
    a.p[2] = flags->p;
    if (!st) st = launch(x, "rf_grp_flag", n, &a);
    return st;
}

/* The groups of n rows (rf_grp_finish): each row's group and each group's
** first row, from the first-row flags, their scan and, per row, its slot in
** the hash table tab or (tab 0) the lowest equal row the walk over runs found. */
static rf_status finish_groups(gx *x, gptr tab, gptr slot, gptr flags, gptr pos, int64_t n, int64_t ng, gval *g)
{
    rf_status st = galloc(x, (uint64_t)n * 8, &g->gid);
    if (!st) st = galloc(x, (uint64_t)ng * 8, &g->first);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.p[0] = tab;
    a.p[1] = slot;
    a.p[2] = flags;
    a.p[3] = pos;
    a.p[4] = g->gid.p;
    a.p[5] = g->first.p;
    if (!st) st = launch(x, "rf_grp_finish", n, &a);
    g->has_groups = 1;
    g->nrows = n;
    g->ngroups = ng;
    return st;
}

/* group_rows by the walk over runs (each row's lowest equal row, then the
** scan of the first occurrences numbers the groups); *ok = 0 (nothing made)
** when the rows are not ordered by their first key or a run is too long.
** The status word rides back with the scan's total: no extra wait. */
static rf_status runs_group(gx *x, const keycols *kc, int64_t n, gval *g, int *ok)
{
    *ok = 0;
    gbuf flags = {0, 0}, rep = {0, 0}, pos = {0, 0};
    rf_status st = galloc(x, (uint64_t)n + 1, &flags);
    if (!st) st = galloc(x, (uint64_t)n * 8, &rep);
    if (!st) st = galloc(x, (uint64_t)(n + 2) * 8, &pos); /* the scan, the status word */
    if (!st) st = x->g.ops->memset8(&x->g, pos.p + (uint64_t)(n + 1) * 8, 0, 8);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    for (int32_t i = 0; i < kc->n; i++) a.c0[i] = kc->cols[i];
    a.p[0] = flags.p;
    a.p[2] = pos.p + (uint64_t)(n + 1) * 8;
    a.p[3] = rep.p;
    a.x[0] = RUNS_LIMIT;
    if (!st) st = hlaunch(x, kc->sig, "runs_first", n, &a);
    int64_t w[2] = {0, 0};
    if (!st) st = scan_into(x, 0, flags.p, n, pos.p, w, 2);
    if (!st && w[1] == 0) {
        st = finish_groups(x, 0, rep.p, flags.p, pos.p, n, w[0], g);
        *ok = 1;
    }
    gfree(x, &flags);
    gfree(x, &rep);
    gfree(x, &pos);
    return st;
}

/* Groups of n rows by keys: group of each row, first row of each group. */
static rf_status group_rows(gx *x, const keycols *kc, int64_t n, gval *g)
{
    if (kc->n > 0 && n > 0 && n >= runs_min_rows()) {
        int ok = 0;
        rf_status st = runs_group(x, kc, n, g, &ok);
        if (st || ok) return st;
    }
    gbuf tab = {0, 0}, slot = {0, 0}, flags = {0, 0}, pos = {0, 0};
    int64_t ng = 0;
    rf_status st = first_flags(x, kc, n, 0, &tab, &slot, &flags);
    if (!st) st = scan_flags(x, flags.p, n, &pos, &ng);
    if (!st) st = finish_groups(x, tab.p, slot.p, flags.p, pos.p, n, ng, g);
    gfree(x, &tab);
    gfree(x, &slot);
    gfree(x, &flags);
    gfree(x, &pos);
    return st;
}

/* distinct_rows by the walk over runs; *ok = 0 (and nothing kept) when the
** rows are not ordered by their first column or a run is too long. The
** status word rides back with the select's count: no extra wait. */
static rf_status runs_distinct(gx *x, const keycols *kc, int64_t n, gptr want, gbuf *keep, int64_t *m, int *ok)
{
    *ok = 0;
    gbuf flags = {0, 0}, cs = {0, 0};
    rf_status st = galloc(x, (uint64_t)n + 1, &flags);
    if (!st) st = galloc(x, 16, &cs); /* the select's count, the status word */
    if (!st) st = x->g.ops->memset8(&x->g, cs.p + 8, 0, 8);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    for (int32_t i = 0; i < kc->n; i++) a.c0[i] = kc->cols[i];
    a.p[0] = flags.p;
    a.p[1] = want;
    a.p[2] = cs.p + 8;
    a.x[0] = RUNS_LIMIT;
    if (!st) st = hlaunch(x, kc->sig, "runs_first", n, &a);
    int64_t w[2] = {0, 0};
    if (!st) st = select_into(x, flags.p, n, keep, cs.p, w, 2);
    gfree(x, &flags);
    gfree(x, &cs);
    if (!st && w[1] != 0) gfree(x, keep); /* not ordered, or a run too long */
    else if (!st) {
        *m = w[0];
        *ok = 1;
    }
    return st;
}

/* The first occurrence of every distinct row of v (rows with want != 0), ascending. */
static rf_status distinct_rows(gx *x, const gval *v, const rf_hir_var *hv, gptr want, gbuf *keep, int64_t *m)
{
    keycols kc;
    keys_of(v, hv->types, NULL, hv->ncols, &kc);
    if (kc.n > 0 && v->nrows > 0 && v->nrows >= runs_min_rows()) {
        int ok = 0;
        rf_status st = runs_distinct(x, &kc, v->nrows, want, keep, m, &ok);
        if (st || ok) return st;
    }
    gbuf tab = {0, 0}, slot = {0, 0}, flags = {0, 0};
    rf_status st = first_flags(x, &kc, v->nrows, want, &tab, &slot, &flags);
    gfree(x, &tab);
    gfree(x, &slot);
    if (!st) st = select_flags(x, flags.p, v->nrows, keep, m);
    gfree(x, &flags);
    return st;
}

static rf_status k_group(gx *x, const rf_hir_kernel *k)
{
    const gval *in = &x->vals[k->in[0]];
    int64_t n = in->nrows;
    gval g;
    memset(&g, 0, sizeof g);
    rf_status st = RF_OK;
    if (k->ngroup == 0 || n == 0) {
        /* one group holding every row (none when there are no rows) */
        g.has_groups = 1;
        g.nrows = n;
        g.ngroups = n ? 1 : 0;
        st = galloc(x, (uint64_t)n * 8, &g.gid);
        if (!st) st = x->g.ops->memset8(&x->g, g.gid.p, 0, (uint64_t)n * 8);
        if (!st && n) st = galloc(x, 8, &g.first);
        if (!st && n) st = put_u64(x, g.first.p, 0);
    } else {
        keycols kc;
        keys_of(in, x->p->vars[k->in[0]]->types, k->group, k->ngroup, &kc);
        st = group_rows(x, &kc, n, &g);
    }
    if (st) {
        val_clear(x, &g, 0);
        return st;
    }
    var_set(x, k->out, &g);
    return RF_OK;
}

/* ---- sets: the hash index of a relation that only grows ------------------------------------ */

static rf_status set_table(gx *x, int32_t var, uint64_t cap)
{
    const rf_hir_var *hv = x->p->vars[var];
    gval *v = &x->vals[var];
    gset *s = rf_calloc(1, sizeof *s);
    if (!s) return RF_ENOMEM;
    s->cap = cap;
    rf_status st = galloc(x, cap * 8, &s->tab);
    if (!st) st = x->g.ops->memset8(&x->g, s->tab.p, 0xff, cap * 8);
    keycols kc;
    keys_of(v, hv->types, NULL, hv->ncols, &kc);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = v->nrows;
    for (int32_t c = 0; c < kc.n; c++) a.c0[c] = kc.cols[c];
    a.p[0] = s->tab.p;
    a.x[0] = (int64_t)(cap - 1);
    if (!st) st = hlaunch(x, kc.sig, "set_build", v->nrows, &a);
    if (st) {
        set_free(x, &s);
        return st;
    }
    set_free(x, &v->set);
    v->set = s;
    return RF_OK;
}

/* Gives a relation a hash index on its rows, deduplicating it (first
** occurrences in order) as the CPU's ensure_set does. */
static rf_status ensure_set(gx *x, int32_t var)
{
    gval *v = &x->vals[var];
    if (v->set) return RF_OK;
    const rf_hir_var *hv = x->p->vars[var];
    rf_status st = RF_OK;
    if (v->nrows > 1) {
        gbuf keep = {0, 0};
        int64_t m = 0;
        st = distinct_rows(x, v, hv, 0, &keep, &m);
        if (!st && m < v->nrows) {
            gval nv;
            st = rel_gather(x, v, hv->types, hv->ncols, keep.p, m, &nv);
            if (!st) {
                val_clear(x, v, hv->ncols);
                *v = nv;
            }
        }
        gfree(x, &keep);
    }
    if (!st) st = set_table(x, var, pow2_at_least((uint64_t)v->nrows * 2));
    return st;
}

/* Room for rows more rows in a set's columns and table. */
static rf_status set_reserve(gx *x, int32_t var, int64_t more)
{
    gval *v = &x->vals[var];
    const rf_hir_var *hv = x->p->vars[var];
    int64_t need = v->nrows + more;
    if ((uint64_t)need * 2 > v->set->cap) {
        rf_status st = set_table(x, var, pow2_at_least((uint64_t)need * 2));
        if (st) return st;
    }
    if (need > v->cap) {
        int64_t cap = v->cap * 2 > need ? v->cap * 2 : need;
        gval nv;
        rf_status st = rel_alloc(x, &nv, hv->types, hv->ncols, v->nrows, cap);
        for (int32_t c = 0; c < hv->ncols && !st; c++)
            st = dcopy(x, colp(&nv, c), colp(v, c), (uint64_t)v->nrows * (uint64_t)wid(hv->types[c]));
        if (st) {
            val_clear(x, &nv, hv->ncols);
            return st;
        }
        for (int32_t c = 0; c < hv->ncols && v->cols; c++) gfree(x, &v->cols[c]);
        free(v->cols);
        v->cols = nv.cols;
        v->cap = cap;
    }
    return RF_OK;
}

static rf_status k_insert(gx *x, const rf_hir_kernel *k)
{
    int32_t var = k->out;
    rf_status st = ensure_set(x, var);
    const rf_hir_var *hv = x->p->vars[var];
    for (int32_t i = 1; i < k->nin && !st; i++) {
        const gval *t = &x->vals[k->in[i]];
        int64_t tn = t->nrows;
        if (tn == 0) continue;
        if ((st = set_reserve(x, var, tn))) break;
        gval *v = &x->vals[var];
        int64_t N = v->nrows, M = 0;
        keycols kc;
        keys_of(v, hv->types, NULL, hv->ncols, &kc);
        gbuf slot = {0, 0}, flags = {0, 0}, pos = {0, 0};
        rf_gpu_args a;
        memset(&a, 0, sizeof a);
        a.n = tn;
        a.m = N;
        for (int32_t c = 0; c < hv->ncols; c++) {
            a.c0[c] = colp(v, c);
            a.c1[c] = colp(t, c);
        }
        a.p[0] = v->set->tab.p;
        a.x[0] = (int64_t)(v->set->cap - 1);
        st = galloc(x, (uint64_t)tn * 8, &slot);
        a.p[1] = slot.p;
        if (!st) st = hlaunch(x, kc.sig, "set_insert", tn, &a);
        if (!st) st = galloc(x, (uint64_t)tn + 1, &flags);
        rf_gpu_args f;
        memset(&f, 0, sizeof f);
        f.n = tn;
        f.p[0] = v->set->tab.p;
        f.p[1] = slot.p;
        f.p[2] = flags.p;
        f.x[1] = N;
        if (!st) st = launch(x, "rf_grp_flag", tn, &f);
        if (!st) st = scan_flags(x, flags.p, tn, &pos, &M);
        if (!st && M > 0) {
            memset(&a, 0, sizeof a);
            a.n = tn;
            a.x[0] = hv->ncols;
            a.x[1] = N;
            for (int32_t c = 0; c < hv->ncols; c++) {
                a.k[c] = (uint64_t)wid(hv->types[c]);
                a.c1[c] = colp(t, c);
                a.o[c] = colp(v, c);
            }
            a.p[0] = v->set->tab.p;
            a.p[1] = slot.p;
            a.p[2] = flags.p;
            a.p[3] = pos.p;
            st = launch(x, "rf_set_append", tn, &a);
        }
        if (!st) v->nrows = N + M;
        gfree(x, &slot);
        gfree(x, &flags);
        gfree(x, &pos);
    }
    return st;
}

/* ---- unique, difference ------------------------------------------------------------------------ */


/* A functional predicate must not give two values for one key (rt_exec.c's
** check_fd, same message, same rows). */
static rf_status check_fd(gx *x, const rf_hir_kernel *k, const gval *r)
{
    const rf_hir_var *out = x->p->vars[k->out];
    int32_t nk = out->nkeys;
    if (nk <= 0 || nk >= out->ncols || r->nrows < 2) return RF_OK;
    keycols kc;
    keys_of(r, out->types, NULL, nk, &kc);
    gval g;
    memset(&g, 0, sizeof g);
    rf_status st = group_rows(x, &kc, r->nrows, &g);
    if (st || g.ngroups == r->nrows) {
        val_clear(x, &g, 0);
        return st;
    }
    int64_t *gid = NULL, *first = NULL;
    st = host_i64(x, g.gid.p, r->nrows, &gid);
    if (!st) st = host_i64(x, g.first.p, g.ngroups, &first);
    val_clear(x, &g, 0);
    /* the first row whose key was seen before: deterministic */
    int64_t row = -1;
    for (int64_t i = 0; !st && i < r->nrows && row < 0; i++)
        if (first[gid[i]] != i) row = i;
    if (!st && row < 0) st = RF_EINTERNAL;
    int64_t frow = st ? 0 : first[gid[row]];
    free(gid);
    free(first);
    if (st) return st;
    /* the two rows, on the host */
    rf_rt_rel two;
    memset(&two, 0, sizeof two);
    st = rf_rt_rel_alloc(&two, out->ncols, out->types, 2);
    for (int32_t c = 0; c < out->ncols && !st; c++) {
        uint64_t w = (uint64_t)wid(out->types[c]);
        st = x->g.ops->d2h(&x->g, two.cols[c], colp(r, c) + (uint64_t)frow * w, w);
        if (!st) st = x->g.ops->d2h(&x->g, (char *)two.cols[c] + w, colp(r, c) + (uint64_t)row * w, w);
    }
    if (st) {
        rf_rt_rel_free(&two);
        return st;
    }
    rf_buf b;
    rf_buf_init(&b);
    rf_rt_fd_message(x->dict, out->pred_name ? out->pred_name : out->name, &two, nk, 0, 1, &b);
    rf_error(x->d, kloc(x, k), "%s", rf_buf_cstr(&b));
    rf_buf_free(&b);
    rf_rt_rel_free(&two);
    return RF_EUSER;
}

/* A kernel whose result is every row of its input (in[0]) in order (a
** unique that keeps all, a gather in identity order) needs no copy when it
** is the input's last reader (the scheduler then releases it right after:
** hir_schedule.c; each variable owns its buffers, so no one else sees them):
** the result takes the input's columns. 1 when it did. */
static int take_columns(gx *x, const rf_hir_kernel *k, gval *r)
{
    const rf_hir_var *hv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
    gval *in = &x->vals[k->in[0]];
    int same = hv->ncols == ov->ncols && k->in[0] != k->out && in->cols;
    for (int32_t c = 0; c < ov->ncols && same; c++) same = wid(hv->types[c]) == wid(ov->types[c]);
    int last = 0;
    for (int32_t i = 0; i < k->nrelease && same; i++) last |= k->release[i] == k->in[0];
    /* a predicate's relation that no later kernel reads is as dead (only
    ** outputs are read after the run): the output's copy of a total, say */
    if (same && !last && x->last_reader && hv->role == RF_HIR_ROLE_PRED) last = x->last_reader[k->in[0]] == k;
    if (!last) return 0;
    memset(r, 0, sizeof *r);
    r->nrows = in->nrows;
    r->cap = in->cap;
    r->cols = in->cols;
    in->cols = NULL;
    return 1;
}

/* Every row of in[0] as the result: its columns, or a copy of them. */
static rf_status rel_all(gx *x, const rf_hir_kernel *k, gval *r)
{
    if (take_columns(x, k, r)) return RF_OK;
    const rf_hir_var *ov = x->p->vars[k->out];
    const gval *in = &x->vals[k->in[0]];
    rf_status st = rel_alloc(x, r, ov->types, ov->ncols, in->nrows, in->nrows);
    for (int32_t c = 0; c < ov->ncols && !st; c++)
        st = dcopy(x, colp(r, c), colp(in, c), (uint64_t)in->nrows * (uint64_t)wid(ov->types[c]));
    if (st) val_clear(x, r, ov->ncols);
    return st;
}

static rf_status k_unique(gx *x, const rf_hir_kernel *k)
{
    const rf_hir_var *hv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
    gbuf keep = {0, 0};
    int64_t m = 0;
    rf_status st = RF_OK;
    if (k->kind == RF_HIR_DIFFERENCE) {
        st = ensure_set(x, k->in[1]);
        const gval *a = &x->vals[k->in[0]], *b = &x->vals[k->in[1]];
        int64_t n = a->nrows;
        if (!st && n > 0) {
            keycols kc;
            keys_of(a, hv->types, NULL, hv->ncols, &kc);
            gbuf absent = {0, 0};
            rf_gpu_args p;
            memset(&p, 0, sizeof p);
            p.n = n;
            p.m = b->nrows;
            for (int32_t c = 0; c < hv->ncols; c++) {
                p.c0[c] = colp(b, c);
                p.c1[c] = colp(a, c);
            }
            p.p[0] = b->set->tab.p;
            p.x[0] = (int64_t)(b->set->cap - 1);
            st = galloc(x, (uint64_t)n, &absent);
            p.p[2] = absent.p;
            if (!st) st = hlaunch(x, kc.sig, "set_probe", n, &p);
            /* a may repeat rows: keep the first of each */
            if (!st) st = distinct_rows(x, a, hv, absent.p, &keep, &m);
            gfree(x, &absent);
        }
    } else if (x->vals[k->in[0]].distinct) {
        m = x->vals[k->in[0]].nrows; /* its maker dropped the repeats */
    } else if (x->vals[k->in[0]].nrows > 0) {
        st = distinct_rows(x, &x->vals[k->in[0]], hv, 0, &keep, &m);
    }
    gval r;
    memset(&r, 0, sizeof r);
    if (!st && m > 0 && m == x->vals[k->in[0]].nrows) st = rel_all(x, k, &r);
    else if (!st) st = rel_gather(x, &x->vals[k->in[0]], ov->types, ov->ncols, keep.p, m, &r);
    gfree(x, &keep);
    if (!st && k->check_fd) st = check_fd(x, k, &r);
    if (st) {
        val_clear(x, &r, ov->ncols);
        return st;
    }
    var_set(x, k->out, &r);
    return RF_OK;
}

/* ---- reduce ------------------------------------------------------------------------------------ */

static rf_status agg_error(gx *x, const rf_hir_kernel *k, const char *what)
{
    rf_error(x->d, kloc(x, k), "aggregate: %s", what);
    return RF_EUSER;
}

/* Agg ag's value from a group's exact sum s of n rows, by the CPU's rules
** (rf_value.h), into *v; RF_EUSER with the CPU's message where they fail. */
static rf_status sum_final(gx *x, const rf_hir_kernel *k, const rf_qp_agg *ag, rf_type at, rf_dec128 s, int64_t n,
                           int64_t *v)
{
    rf_val_err e = {0, 0};
    rf_status vs;
    *v = 0;
    if (ag->fn == RF_AGG_AVG) {
        vs = at == RF_TYPE_INT ? rf_val_int128_avg(s, n, v, &e) : rf_val_dec128_avg(s, n, v, &e);
    } else if (at == RF_TYPE_INT) {
        vs = (s > INT64_MAX || s < INT64_MIN) ? RF_EUSER : RF_OK;
        if (!vs) *v = (int64_t)s;
    } else {
        vs = rf_val_dec128_to_dec(s, v, &e);
    }
    if (!vs) return RF_OK;
    return agg_error(x, k,
                     at == RF_TYPE_INT && ag->fn == RF_AGG_TOTAL ? "integer overflow in total()"
                     : e.why                                     ? e.why
                                                                 : "overflow");
}

static rf_dec128 sum_of(const uint64_t *w) { return (rf_dec128)(((unsigned __int128)w[1] << 64) | w[0]); }

/* The CPU's conversion of the sums, to word the error the GPU found. */
static rf_status sum_error(gx *x, const rf_hir_kernel *k, const rf_qp_agg *ag, rf_type at, gptr acc, gptr counts,
                           int64_t ng)
{
    uint64_t *s = rf_malloc((size_t)(2 * ng + 1) * 8);
    int64_t *cnt = rf_malloc((size_t)(ng + 1) * 8);
    rf_status st = s && cnt ? RF_OK : RF_ENOMEM;
    if (!st) st = x->g.ops->d2h(&x->g, s, acc, (uint64_t)ng * 16);
    if (!st && counts) st = x->g.ops->d2h(&x->g, cnt, counts, (uint64_t)ng * 8);
    for (int64_t i = 0; i < ng && !st; i++) {
        int64_t v;
        st = sum_final(x, k, ag, at, sum_of(&s[2 * i]), cnt[i], &v);
    }
    free(s);
    free(cnt);
    if (!st) {
        rf_error(x->d, kloc(x, k), "internal error: k%d: the GPU reported an overflow the CPU does not see", k->id);
        st = RF_EINTERNAL;
    }
    return st;
}

/* Float aggregates on the host: their value depends on the order of the
** additions, which rf_cpu_agg_* fixes. */
static rf_status float_agg(gx *x, const rf_qp_agg *ag, const gval *in, int32_t col, const rf_cpu_groups *hg,
                           const int64_t *counts, gptr dst)
{
    int64_t n = in->nrows, ng = hg->ngroups;
    double *vals = rf_malloc((size_t)(n + 1) * 8), *res = rf_malloc((size_t)(ng + 1) * 8);
    rf_status st = vals && res ? RF_OK : RF_ENOMEM;
    if (!st && n) st = x->g.ops->d2h(&x->g, vals, colp(in, col), (uint64_t)n * 8);
    rf_cpu_groups g = *hg; /* the aggregate may add order arrays: freed below */
    g.order = g.offsets = NULL;
    if (!st) {
        if (ag->fn == RF_AGG_MIN || ag->fn == RF_AGG_MAX) {
            rf_cpu_col vc = {RF_CPU_F64, vals}, oc = {RF_CPU_F64, NULL};
            st = ag->fn == RF_AGG_MIN ? rf_cpu_agg_min(x->cpool, &g, &vc, &oc) : rf_cpu_agg_max(x->cpool, &g, &vc, &oc);
            if (!st) memcpy(res, oc.data, (size_t)ng * 8);
            free(oc.data);
        } else {
            double *s = NULL;
            st = rf_cpu_agg_sum_f64(x->cpool, &g, vals, &s);
            for (int64_t i = 0; i < ng && !st; i++) res[i] = ag->fn == RF_AGG_AVG ? s[i] / (double)counts[i] : s[i];
            free(s);
        }
    }
    free(g.order);
    free(g.offsets);
    if (!st && ng) st = x->g.ops->h2d(&x->g, dst, res, (uint64_t)ng * 8);
    free(vals);
    free(res);
    x->on_host = 1;
    return st;
}

static rf_status k_reduce(gx *x, const rf_hir_kernel *k)
{
    const gval *in = &x->vals[k->in[0]];
    const gval *gv = &x->vals[k->idx];
    const rf_hir_var *iv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
    if (!gv->has_groups) return RF_EINTERNAL;
    int64_t ng = gv->ngroups, n = in->nrows;
    gval r;
    rf_status st = rel_alloc(x, &r, ov->types, ov->ncols, ng, ng);
    if (st) return st;
    rf_gpu_args a;
    /* group columns: the values of each group's first row */
    if (k->ngroup > 0 && ng > 0) {
        memset(&a, 0, sizeof a);
        a.n = ng;
        a.x[0] = k->ngroup;
        a.r0 = gv->first.p;
        for (int32_t i = 0; i < k->ngroup; i++) {
            a.k[i] = (uint64_t)wid(ov->types[i]);
            a.c0[i] = colp(in, k->group[i]);
            a.o[i] = colp(&r, i);
        }
        st = launch(x, "rf_gather", ng, &a);
    }
    int small = ng <= RF_GPU_SMALLG;
    gbuf counts = {0, 0};
    int64_t *hcounts = NULL;
    rf_cpu_groups hg;
    memset(&hg, 0, sizeof hg);
    int have_hg = 0;
    for (int32_t ai = 0; ai < k->naggs && !st && ng > 0; ai++) {
        const rf_qp_agg *ag = &k->aggs[ai];
        gptr dst = colp(&r, k->ngroup + ai);
        rf_type at = ag->col >= 0 ? iv->types[ag->col] : RF_TYPE_INT;
        if ((ag->fn == RF_AGG_COUNT || ag->fn == RF_AGG_AVG) && !counts.p) {
            st = galloc(x, (uint64_t)ng * 8, &counts);
            if (!st) st = x->g.ops->memset8(&x->g, counts.p, 0, (uint64_t)ng * 8);
            memset(&a, 0, sizeof a);
            a.n = n;
            a.m = ng;
            a.p[0] = gv->gid.p;
            a.p[1] = counts.p;
            if (!st) st = launch(x, small ? "rf_red_count_smem" : "rf_red_count", n, &a);
            if (st) break;
        }
        if (ag->fn == RF_AGG_COUNT) {
            st = dcopy(x, dst, counts.p, (uint64_t)ng * 8);
            continue;
        }
        if (at == RF_TYPE_FLOAT) {
            if (!have_hg) {
                hg.nrows = n;
                hg.ngroups = ng;
                st = host_i64(x, gv->gid.p, n, &hg.group_of_row);
                if (!st) st = host_i64(x, gv->first.p, ng, &hg.first_row);
                have_hg = 1;
            }
            if (!st && ag->fn == RF_AGG_AVG && !hcounts) st = host_i64(x, counts.p, ng, &hcounts);
            if (!st) st = float_agg(x, ag, in, ag->col, &hg, hcounts, dst);
            continue;
        }
        gbuf acc = {0, 0}, err = {0, 0}, ranks = {0, 0}, back = {0, 0};
        int op, kind = 0;
        memset(&a, 0, sizeof a);
        a.n = n;
        a.m = ng;
        a.p[0] = gv->gid.p;
        a.c0[0] = colp(in, ag->col);
        if (ag->fn == RF_AGG_TOTAL || ag->fn == RF_AGG_AVG) {
            op = (ag->fn == RF_AGG_TOTAL ? 1 : 3) + (at == RF_TYPE_DECIMAL);
            st = galloc(x, (uint64_t)ng * 16, &acc);
            if (!st) st = x->g.ops->memset8(&x->g, acc.p, 0, (uint64_t)ng * 16);
            a.p[1] = acc.p;
            if (!st) st = launch(x, small ? "rf_red_sum_smem" : "rf_red_sum", n, &a);
        } else {
            int is_max = ag->fn == RF_AGG_MAX;
            op = is_max ? 6 : 5;
            kind = at == RF_TYPE_DATE ? 2 : at == RF_TYPE_STRING ? 3 : at == RF_TYPE_BOOL ? 4 : 0;
            a.x[0] = kind;
            if (kind == 3) {
                int64_t lo = 0;
                st = string_ranks(x, colp(in, ag->col), n, &ranks, &lo, &back);
                a.t[0] = ranks.p;
                a.x[2] = lo;
            }
            if (!st) st = galloc(x, (uint64_t)ng * 8, &acc);
            if (!st) st = x->g.ops->memset8(&x->g, acc.p, is_max ? 0 : 0xff, (uint64_t)ng * 8);
            a.p[1] = acc.p;
            if (!st)
                st = launch(x, is_max ? (small ? "rf_red_max_smem" : "rf_red_max") : (small ? "rf_red_min_smem" : "rf_red_min"),
                            n, &a);
        }
        if (!st) st = err_word(x, &err);
        memset(&a, 0, sizeof a);
        a.m = ng;
        a.x[0] = op;
        a.x[1] = kind;
        a.p[1] = acc.p;
        a.p[2] = counts.p;
        a.p[3] = err.p;
        a.o[0] = dst;
        a.t[1] = back.p;
        if (!st) st = launch(x, "rf_red_final", ng, &a);
        int64_t bad = -1;
        if (!st && op <= 4) st = get_i64(x, err.p, &bad);
        if (!st && bad != -1) st = sum_error(x, k, ag, at, acc.p, counts.p, ng);
        gfree(x, &acc);
        gfree(x, &err);
        gfree(x, &ranks);
        gfree(x, &back);
    }
    gfree(x, &counts);
    free(hcounts);
    free(hg.group_of_row);
    free(hg.first_row);
    if (st) {
        val_clear(x, &r, ov->ncols);
        return st;
    }
    var_set(x, k->out, &r);
    return RF_OK;
}

/* ---- concat, sort, gather, copy, facts ------------------------------------------------------------ */

static rf_status k_concat(gx *x, const rf_hir_kernel *k)
{
    const rf_hir_var *ov = x->p->vars[k->out];
    int64_t total = 0;
    for (int32_t i = 0; i < k->nin; i++) total += x->vals[k->in[i]].nrows;
    gval r;
    rf_status st = rel_alloc(x, &r, ov->types, ov->ncols, total, total);
    for (int32_t c = 0; c < ov->ncols && !st; c++) {
        uint64_t w = (uint64_t)wid(ov->types[c]), at = 0;
        for (int32_t i = 0; i < k->nin && !st; i++) {
            const gval *in = &x->vals[k->in[i]];
            if (in->nrows) st = dcopy(x, colp(&r, c) + at * w, colp(in, c), (uint64_t)in->nrows * w);
            at += (uint64_t)in->nrows;
        }
    }
    if (st) {
        val_clear(x, &r, ov->ncols);
        return st;
    }
    var_set(x, k->out, &r);
    return RF_OK;
}

/* The stable permutation of the n rows of in by order[0..norder): one radix
** sort per key, least significant first. */
static rf_status sort_rows(gx *x, const gval *in, const rf_type *types, const rf_fe_order *order, int32_t norder,
                           int64_t n, gval *out)
{
    memset(out, 0, sizeof *out);
    rf_status st = iota(x, n, &out->a);
    out->nrows = n;
    for (int32_t i = norder - 1; i >= 0 && !st && n > 1; i--) {
        int32_t col = order[i].col;
        rf_type t = types[col];
        int kind = t == RF_TYPE_FLOAT ? 1 : t == RF_TYPE_DATE ? 2 : t == RF_TYPE_STRING ? 3 : t == RF_TYPE_BOOL ? 4 : 0;
        int bits = kind <= 1 ? 64 : kind == 4 ? 8 : 32;
        if (order[i].desc) bits = 64;
        gbuf ranks = {0, 0}, keys = {0, 0}, ks = {0, 0}, perm = {0, 0};
        int64_t lo = 0;
        rf_gpu_args a;
        memset(&a, 0, sizeof a);
        if (kind == 3) {
            /* strings sort by bytes, not by code: sort by rank instead */
            st = string_ranks(x, colp(in, col), n, &ranks, &lo, NULL);
            a.t[0] = ranks.p;
            a.x[2] = lo;
        }
        if (!st) st = galloc(x, (uint64_t)n * 8, &keys);
        a.n = n;
        a.c0[0] = colp(in, col);
        a.r0 = out->a.p;
        a.x[0] = kind;
        a.x[1] = order[i].desc != 0;
        a.p[0] = keys.p;
        if (!st) st = launch(x, "rf_sort_key", n, &a);
        if (!st) st = sort_pairs(x, keys.p, out->a.p, n, bits, &ks, &perm);
        if (!st) {
            gfree(x, &out->a);
            out->a = perm;
            memset(&perm, 0, sizeof perm);
        }
        gfree(x, &ranks);
        gfree(x, &keys);
        gfree(x, &ks);
        gfree(x, &perm);
    }
    if (st) val_clear(x, out, 0);
    return st;
}

/* With a limit, only the rows whose first key ties with or beats the
** limit-th place can reach the first places: sort by the first key alone,
** find where its ties end, and sort just those rows by the whole order (no
** string ranks of the rest). The result is shorter than in: GATHER reads
** only its first `limit` places. 1 in *done when it applied. */
static rf_status sort_limited(gx *x, const rf_hir_kernel *k, const gval *in, const rf_hir_var *iv, gval *out, int *done)
{
    *done = 0;
    int64_t n = in->nrows, limit = k->limit;
    if (limit < 1 || k->norder < 2 || n < 4 * limit + 4096 || iv->types[k->order[0].col] == RF_TYPE_STRING)
        return RF_OK;
    gval first;
    rf_status st = sort_rows(x, in, iv->types, k->order, 1, n, &first);
    if (st) return st;
    /* the first key of the rows in sorted order, then where the ties with
    ** the limit-th row end (read back in chunks from there) */
    gval byfirst;
    st = rel_gather(x, in, iv->types, iv->ncols, first.a.p, n, &byfirst);
    int32_t col = k->order[0].col;
    int w = wid(iv->types[col]);
    int64_t m = limit;
    char ref[8], buf[8 * 4096];
    if (!st) st = x->g.ops->d2h(&x->g, ref, colp(&byfirst, col) + (gptr)((limit - 1) * w), (uint64_t)w);
    for (int64_t at = limit; !st && at < n;) {
        int64_t c = n - at < 4096 ? n - at : 4096;
        st = x->g.ops->d2h(&x->g, buf, colp(&byfirst, col) + (gptr)(at * w), (uint64_t)(c * w));
        int64_t j = 0;
        while (!st && j < c && memcmp(buf + j * w, ref, (size_t)w) == 0) j++;
        m = at + j;
        if (j < c) break;
        at += c;
    }
    gval part;
    memset(&part, 0, sizeof part);
    /* the candidates are the first m rows of byfirst: sort them fully */
    if (!st) {
        gval cand = byfirst;
        cand.nrows = m;
        st = sort_rows(x, &cand, iv->types, k->order, k->norder, m, &part);
    }
    /* compose: out[i] = first[part[i]], on the host (m is small) */
    int64_t *pa = NULL, *fa = NULL;
    if (!st) {
        pa = rf_malloc((size_t)m * 8);
        fa = rf_malloc((size_t)m * 8);
        if (!pa || !fa) st = RF_ENOMEM;
    }
    if (!st) st = x->g.ops->d2h(&x->g, pa, part.a.p, (uint64_t)m * 8);
    if (!st) st = x->g.ops->d2h(&x->g, fa, first.a.p, (uint64_t)m * 8);
    if (!st) {
        for (int64_t i = 0; i < m; i++) pa[i] = fa[pa[i]];
        memset(out, 0, sizeof *out);
        st = galloc(x, (uint64_t)m * 8, &out->a);
        if (!st) st = x->g.ops->h2d(&x->g, out->a.p, pa, (uint64_t)m * 8);
        out->nrows = m;
        if (st) val_clear(x, out, 0);
    }
    free(pa);
    free(fa);
    val_clear(x, &part, 0);
    val_clear(x, &byfirst, iv->ncols);
    val_clear(x, &first, 0);
    if (!st) *done = 1;
    return st;
}

static rf_status k_sort(gx *x, const rf_hir_kernel *k)
{
    const gval *in = &x->vals[k->in[0]];
    const rf_hir_var *iv = x->p->vars[k->in[0]];
    gval out;
    if (in->nrows <= 1) {
        /* no index: the identity order (rel_gather reads row i itself), no launch */
        memset(&out, 0, sizeof out);
        out.nrows = in->nrows;
        var_set(x, k->out, &out);
        return RF_OK;
    }
    int done = 0;
    rf_status st = sort_limited(x, k, in, iv, &out, &done);
    if (!st && !done) st = sort_rows(x, in, iv->types, k->order, k->norder, in->nrows, &out);
    if (st) return st;
    var_set(x, k->out, &out);
    return RF_OK;
}

static rf_status k_gather(gx *x, const rf_hir_kernel *k)
{
    const gval *idx = &x->vals[k->idx];
    const rf_hir_var *ov = x->p->vars[k->out];
    int64_t n = idx->nrows;
    if (k->limit >= 0 && k->limit < n) n = k->limit;
    gval r;
    /* the identity order (a sort of at most one row) over every row */
    if (!idx->a.p && n == x->vals[k->in[0]].nrows && take_columns(x, k, &r)) {
        var_set(x, k->out, &r);
        return RF_OK;
    }
    rf_status st = rel_gather(x, &x->vals[k->in[0]], ov->types, ov->ncols, idx->a.p, n, &r);
    if (st) return st;
    var_set(x, k->out, &r);
    return RF_OK;
}

static rf_status k_copy(gx *x, const rf_hir_kernel *k)
{
    const gval *in = &x->vals[k->in[0]];
    const rf_hir_var *ov = x->p->vars[k->out];
    gval r;
    rf_status st = rel_alloc(x, &r, ov->types, ov->ncols, in->nrows, in->nrows);
    for (int32_t c = 0; c < ov->ncols && !st && in->nrows; c++)
        st = dcopy(x, colp(&r, c), colp(in, c), (uint64_t)in->nrows * (uint64_t)wid(ov->types[c]));
    if (st) {
        val_clear(x, &r, ov->ncols);
        return st;
    }
    var_set(x, k->out, &r);
    return RF_OK;
}

static rf_status k_facts(gx *x, const rf_hir_kernel *k)
{
    const rf_hir_var *out = x->p->vars[k->out];
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    rf_status st = rf_rt_rel_alloc(&r, out->ncols, out->types, k->nrows);
    for (int64_t i = 0; i < k->nrows && !st; i++)
        for (int32_t c = 0; c < out->ncols && !st; c++) {
            const rf_fe_const *v = &k->rows[i * out->ncols + c];
            switch (out->types[c]) {
            case RF_TYPE_FLOAT: ((double *)r.cols[c])[i] = v->f; break;
            case RF_TYPE_DATE: ((int32_t *)r.cols[c])[i] = (int32_t)v->i; break;
            case RF_TYPE_BOOL: ((uint8_t *)r.cols[c])[i] = (uint8_t)v->i; break;
            case RF_TYPE_STRING: st = rf_rt_dict_intern(x->dict, v->s, v->slen, &((uint32_t *)r.cols[c])[i]); break;
            default: ((int64_t *)r.cols[c])[i] = v->i; break;
            }
        }
    gval g;
    memset(&g, 0, sizeof g);
    if (!st) st = upload_rel(x, &r, out->types, out->ncols, &g);
    rf_rt_rel_free(&r);
    if (st) return st;
    var_set(x, k->out, &g);
    return RF_OK;
}

/* ---- fused kernels (Kernel Weaver groups) ---------------------------------------- */

/* The relation of fused total t's reduce from its sums, read back to the
** host (acc: the count, then each aggregate's two words; gen_total_rows):
** one row when rows were counted, none otherwise, as k_group and k_reduce
** give it. The host has the sums already, so it finishes them itself by the
** CPU's rules (a copy from the host is 4 us on an H100, a launch of
** rf_red_final and the read of its error word twice that). */
static rf_status fused_total_result(gx *x, const rf_gpu_ftotal *t, const uint64_t *acc, int64_t rows)
{
    const rf_hir_kernel *k = t->reduce;
    const rf_hir_var *iv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
    int64_t ng = rows > 0;
    gval r;
    rf_status st = rel_alloc(x, &r, ov->types, ov->ncols, ng, ng);
    for (int32_t i = 0; i < k->naggs && !st && ng; i++) {
        const rf_qp_agg *ag = &k->aggs[i];
        int64_t v = rows;
        if (ag->fn != RF_AGG_COUNT) st = sum_final(x, k, ag, iv->types[ag->col], sum_of(&acc[1 + 2 * i]), rows, &v);
        if (!st) st = put_u64(x, colp(&r, i), (uint64_t)v);
    }
    if (st) {
        val_clear(x, &r, ov->ncols);
        return st;
    }
    var_set(x, k->out, &r);
    return RF_OK;
}

/* A fused kernel with totals (rf_gpu_ftotal): one pass that sums, no rows
** written. A stage's run-time error leaves *ran 0: the stages then run one
** by one (and the groups and reduces after them), for the CPU's message. */
static rf_status fused_totals(gx *x, const rf_gpu_funit *u, rf_gpu_args *a, int64_t n, int *ran)
{
    /* the error words and the sums in one buffer: one read brings both */
    uint64_t words = (uint64_t)u->n + (uint64_t)u->nacc;
    int64_t host[RF_GPU_FUSE_MAX + RF_GPU_FUSE_TOTALS * (1 + 2 * RF_GPU_FUSE_AGGS)];
    gbuf buf = {0, 0};
    char name[64];
    rf_status st = galloc(x, words * 8, &buf);
    /* "no failure" and zero sums, in one copy rather than two clears */
    for (uint64_t w = 0; w < words; w++) host[w] = w < (uint64_t)u->n ? -1 : 0;
    if (!st) st = x->g.ops->h2d(&x->g, buf.p, host, words * 8);
    gptr acc = buf.p + (uint64_t)u->n * 8;
    a->p[0] = buf.p;
    a->p[3] = acc;
    snprintf(name, sizeof name, "rfg%d_total_smem", u->id);
    /* four rows per thread and round (codegen.c gen_total_kernel) and half
    ** the blocks: on an H200 15-25% faster than one row and all the blocks
    ** (docs/BENCHMARKS.md, fourth session) */
    if (!st) st = launch_max(x, name, n, a, x->g.max_grid >= 4 ? x->g.max_grid / 2 : x->g.max_grid);
    if (!st) st = x->g.ops->d2h(&x->g, host, buf.p, words * 8);
    *ran = 1;
    for (int32_t m = 0; m < u->n && !st; m++)
        if (host[m] != -1) *ran = 0;
    for (int32_t t = 0; t < u->ntot && !st && *ran; t++)
        st = fused_total_result(x, &u->tot[t], (const uint64_t *)&host[u->n + u->tot[t].acc], host[u->n + u->tot[t].acc]);
    gfree(x, &buf);
    return st;
}

/* Runs fused kernel u (all of its stages) at the position of its first
** stage. *ran = 0 when a stage met a run-time error: nothing is kept, and
** the stages then run one by one, so that the error and its message are
** exactly the CPU's (the first failing kernel in schedule order, its lowest
** failing row). */
static rf_status k_fused(gx *x, const rf_gpu_funit *u, int *ran)
{
    const rf_hir_kernel *h = u->m[0].k; /* every head reads what the first stage reads */
    int32_t vars[2] = {h->in[0], h->kind == RF_HIR_JOIN_MAP ? h->in[1] : -1};
    /* with a join source the rows are left rows, each with its matches */
    const gval *idx = h->kind == RF_HIR_MAP || u->src ? NULL : &x->vals[h->idx];
    gptr rows[2] = {idx ? idx->a.p : 0, idx && vars[1] >= 0 ? idx->b.p : 0};
    int64_t n = idx ? idx->nrows : x->vals[h->in[0]].nrows;
    int64_t nr = u->src ? x->vals[u->src->in[1]].nrows : 0;
    /* a join source counts each left row's rows per written output; an
    ** anti-join source flags left rows as a plain fused kernel does */
    int counts = u->src && u->src->kind == RF_HIR_JOIN_INDEX;
    /* a join source whose probes would each walk many matches alone runs
    ** unfused, with the build on its small side (join_skewed) */
    if (counts && join_skewed(n, nr)) {
        *ran = 0;
        return RF_OK;
    }
    *ran = 1;
    gval outs[RF_GPU_FUSE_MAX];
    memset(outs, 0, sizeof outs);
    if (n == 0 || (counts && nr == 0)) {
        for (int32_t m = 0; m < u->n; m++)
            if (u->m[m].mat >= 0) var_set(x, u->m[m].k->out, &outs[m]);
        rf_status st = RF_OK;
        for (int32_t t = 0; t < u->ntot && !st; t++) st = fused_total_result(x, &u->tot[t], NULL, 0);
        return st;
    }
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    args_sides(x, &a, vars, rows);
    rf_status st = RF_OK;
    gbuf tabs[RF_GPU_MAX_ISLANDS];
    memset(tabs, 0, sizeof tabs);
    for (int32_t m = 0; m < u->n && !st; m++) {
        const rf_gpu_fmember *mb = &u->m[m];
        const rf_gpu_kplan *pl = &x->plans[mb->k->id];
        if (!st) st = args_consts(x, pl, &a, mb->kconst);
        /* string tables: only stages reading the input have them (fuse.c) */
        for (int32_t j = 0; j < pl->nisland && !st; j++) {
            const rf_gpu_island *is = &pl->islands[j];
            int32_t sv = is->side >= 0 ? vars[is->side] : -1;
            int32_t slot = mb->kisland + j;
            int64_t base = 0;
            if (mb->parent >= 0 || u->src) {
                rf_error(x->d, kloc(x, mb->k), "internal error: fused kernel rfg%d: a string table in a stage that "
                                               "does not read the kernel's input rows", u->id);
                st = RF_EINTERNAL;
            }
            if (!st)
                st = build_island(x, mb->k, is, sv >= 0 ? &x->vals[sv] : NULL, is->side >= 0 ? rows[is->side] : 0, n,
                                  &tabs[slot], &base);
            a.t[slot] = tabs[slot].p;
            a.k[RF_GPU_KISLAND + slot] = (uint64_t)base;
        }
    }
    gbuf err = {0, 0}, flags = {0, 0}, pos = {0, 0};
    uint64_t n1 = (uint64_t)n + 1;
    int64_t count[RF_GPU_FUSE_MAX];
    char name[64];
    jtab jt;
    memset(&jt, 0, sizeof jt);
    if (!st && u->src && nr > 0) {
        /* the build side, as k_join_index makes it */
        const rf_hir_kernel *j = u->src;
        char sig[RF_GPU_MAXC + 1];
        rf_gpu_sig(x->p->vars[j->in[0]]->types, j->lkeys, j->nkeys, sig);
        rf_gpu_args ka;
        memset(&ka, 0, sizeof ka);
        for (int32_t i = 0; i < j->nkeys; i++) {
            ka.c0[i] = colp(&x->vals[j->in[0]], j->lkeys[i]);
            ka.c1[i] = colp(&x->vals[j->in[1]], j->rkeys[i]);
        }
        st = join_build(x, sig, &ka, nr, &jt);
        for (int32_t c = 0; c < x->p->vars[j->in[1]]->ncols; c++) a.c1[c] = colp(&x->vals[j->in[1]], c);
        a.m = nr;
        a.p[4] = jt.hs.p;
        a.p[5] = jt.js.p;
        a.p[6] = jt.start.p;
        jtab_args(&jt, &a);
    }
    if (u->ntot) {
        if (!st) st = fused_totals(x, u, &a, n, ran);
        jtab_free(x, &jt);
        for (int32_t j = 0; j < RF_GPU_MAX_ISLANDS; j++) gfree(x, &tabs[j]);
        return st;
    }
    /* per written output: a flag per row, or with a join source a count per left row */
    uint64_t fw = counts ? 8 : 1;
    /* the error words, then each written output's row count, then the status
    ** word of the walk that drops repeats (u->dedupe): one read brings all */
    int dedupe = counts && u->dedupe && repeats_dropped(x, u->m[0].k, n);
    int32_t nw = u->n + u->nmat + 1;
    if (!st) st = galloc(x, (uint64_t)nw * 8, &err);
    a.p[0] = err.p;
    a.p[7] = err.p + (uint64_t)(nw - 1) * 8;
    /* the left rows first of their kind in the compared columns (which
    ** hold the join's keys): runs_first over the left relation */
    gbuf first = {0, 0};
    rf_gpu_args ra;
    keycols dk;
    memset(&ra, 0, sizeof ra);
    if (!st && dedupe) {
        const rf_gpu_kplan *dp = &x->plans[u->m[0].k->id];
        keys_of(&x->vals[vars[0]], x->p->vars[vars[0]]->types, dp->dedupe, dp->ndedupe, &dk);
        st = galloc(x, (uint64_t)n + 1, &first);
        ra.n = n;
        for (int32_t i = 0; i < dk.n; i++) ra.c0[i] = dk.cols[i];
        ra.p[0] = first.p;
        ra.p[2] = a.p[7];
        ra.x[0] = RUNS_LIMIT;
        a.p[3] = first.p;
    }
    int64_t words[RF_GPU_FUSE_MAX * 2 + 1];
    if (!st && u->nmat) st = galloc(x, n1 * fw * (uint64_t)u->nmat, &flags);
    if (!st && u->nmat) st = galloc(x, n1 * 8 * (uint64_t)u->nmat, &pos);
    a.p[1] = flags.p;
    a.p[2] = pos.p;
    snprintf(name, sizeof name, "rfg%d_flags", u->id);
    for (int pass = 0; pass < 2 && !st; pass++) {
        /* the second pass only where the walk gave way: every row kept */
        a.x[5] = dedupe ? RUNS_LIMIT : 0;
        st = x->g.ops->memset8(&x->g, err.p, 0xff, (uint64_t)u->n * 8);
        if (!st && dedupe) st = x->g.ops->memset8(&x->g, a.p[7], 0, 8);
        if (!st && dedupe) st = hlaunch(x, dk.sig, "runs_first", n, &ra);
        if (!st) st = launch(x, name, n, &a);
        /* one exclusive scan per written output, queued behind the flags pass
        ** (a stage error discards them) */
        for (int32_t s = 0; s < u->nmat && !st; s++) {
            gptr f = flags.p + (uint64_t)s * n1 * fw, q = pos.p + (uint64_t)s * n1 * 8;
            st = scan_into(x, counts, f, n, q, NULL, 0);
            if (!st) st = dcopy(x, err.p + (uint64_t)(u->n + s) * 8, q + (uint64_t)n * 8, 8);
        }
        if (!st) st = x->g.ops->d2h(&x->g, words, err.p, (uint64_t)nw * 8);
        if (st || !dedupe || words[nw - 1] == 0) break;
        dedupe = 0;
    }
    for (int32_t m = 0; m < u->n && !st; m++)
        if (words[m] != -1) *ran = 0;
    for (int32_t s = 0; s < u->nmat && !st; s++) count[s] = words[u->n + s];
    int64_t any = 0;
    for (int32_t m = 0; m < u->n && !st && *ran; m++) {
        const rf_gpu_fmember *mb = &u->m[m];
        if (mb->mat < 0) continue;
        const rf_hir_var *ov = x->p->vars[mb->k->out];
        int64_t c = count[mb->mat];
        any += c;
        st = rel_alloc(x, &outs[m], ov->types, ov->ncols, c, c);
        for (int32_t i = 0; i < ov->ncols && !st; i++) a.o[mb->ocol + i] = colp(&outs[m], i);
    }
    snprintf(name, sizeof name, "rfg%d_write", u->id);
    if (!st && *ran && any > 0) {
        st = wcheck_take(x, u, &a.p[0]);
        if (!st) st = launch(x, name, n, &a);
    }
    gfree(x, &err);
    gfree(x, &flags);
    gfree(x, &pos);
    gfree(x, &first);
    jtab_free(x, &jt);
    for (int32_t j = 0; j < RF_GPU_MAX_ISLANDS; j++) gfree(x, &tabs[j]);
    for (int32_t m = 0; m < u->n; m++) {
        const rf_gpu_fmember *mb = &u->m[m];
        if (mb->mat < 0) continue;
        if (st || !*ran) {
            val_clear(x, &outs[m], x->p->vars[mb->k->out]->ncols);
        } else {
            outs[m].distinct = dedupe;
            var_set(x, mb->k->out, &outs[m]);
        }
    }
    return st;
}

static rf_status run_kernel(gx *x, const rf_hir_kernel *k)
{
    switch (k->kind) {
    case RF_HIR_MAP:
    case RF_HIR_JOIN_MAP:
    case RF_HIR_GATHER_MAP: return k_map(x, k);
    case RF_HIR_JOIN_INDEX:
    case RF_HIR_ANTI_INDEX: return k_join_index(x, k);
    case RF_HIR_GROUP: return k_group(x, k);
    case RF_HIR_REDUCE: return k_reduce(x, k);
    case RF_HIR_CONCAT: return k_concat(x, k);
    case RF_HIR_UNIQUE:
    case RF_HIR_DIFFERENCE: return k_unique(x, k);
    case RF_HIR_SORT: return k_sort(x, k);
    case RF_HIR_GATHER: return k_gather(x, k);
    case RF_HIR_COPY: return k_copy(x, k);
    case RF_HIR_FACTS: return k_facts(x, k);
    case RF_HIR_CLEAR: var_clear(x, k->out); return RF_OK;
    case RF_HIR_INSERT: return k_insert(x, k);
    }
    return RF_EINTERNAL;
}

/* ---- inputs: loaded on the host (the dictionary lives there), then copied once ---- */

static rf_status load_input(gx *x, int32_t var)
{
    const rf_hir_var *v = x->p->vars[var];
    if (x->inputs && x->inputs->load) {
        rf_rt_rel r;
        memset(&r, 0, sizeof r);
        r.ncols = v->ncols;
        r.types = v->types;
        int borrowed = 0;
        rf_status st = x->inputs->load(x->inputs->ctx, v, x->dict, &r, &borrowed, x->d);
        gval g;
        memset(&g, 0, sizeof g);
        if (!st) st = upload_rel(x, &r, v->types, v->ncols, &g);
        if (borrowed) {
            free(r.cols);
        } else {
            r.types = v->types;
            rf_rt_rel_free(&r);
        }
        if (!st) var_set(x, var, &g);
        return st;
    }
    const char *dir = x->o.data_dir ? x->o.data_dir : ".";
    char *path = rf_sprintf("%s/%s", dir, v->input_file);
    if (!path) return RF_ENOMEM;
    rf_rt_rel r;
    rf_status st = rf_rt_load_input(path, v, x->dict, x->cpool, x->threads, &r, x->d);
    free(path);
    if (st) return st;
    gval g;
    memset(&g, 0, sizeof g);
    st = upload_rel(x, &r, v->types, v->ncols, &g);
    rf_rt_rel_free(&r);
    if (!st) var_set(x, var, &g);
    return st;
}

/* ---- the interpreter ---------------------------------------------------------------- */

static int64_t rows_of_var(const void *ctx, int32_t var) { return var_rows(ctx, var); }

static rf_status run_blocks(gx *x)
{
    const rf_hir_program *p = x->p;
    rf_rt_fixpoint fx;
    rf_status fst = rf_rt_fixpoint_init(&fx, p, &x->o, rows_of_var, x);
    int32_t maxin = rf_hir_max_inputs(p);
    int64_t *in_rows = rf_calloc((size_t)maxin, sizeof *in_rows); /* for --profile */
    if (fst || !in_rows) {
        rf_rt_fixpoint_end(&fx);
        free(in_rows);
        return RF_ENOMEM;
    }
    rf_status st = RF_OK;
    int32_t b = 0;
    while (!st) {
        const rf_hir_block *bl = p->blocks[b];
        if ((st = rf_rt_fixpoint_enter(&fx, b, x->d))) break;
        for (int32_t j = 0; j < bl->nkernels && !st; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            int prof = x->o.profile && k->id >= 0 && k->id < x->res->nstats;
            int32_t fu = x->fplan && k->id >= 0 && k->id < x->fplan->nkernels ? x->fplan->unit_of[k->id] : -1;
            if (fu >= 0) {
                /* a stage of a fused kernel: the whole kernel runs at its first stage */
                const rf_gpu_funit *u = &x->fplan->units[fu];
                int32_t m = x->fplan->member_of[k->id];
                double t0 = now(), secs = 0;
                if (u->src ? m == -1 : m == 0) {
                    int ran = 0;
                    if (prof) st = x->g.ops->mark(&x->g, 0);
                    /* what the first stage reads (harmony/hir_bytes.c); its
                    ** output, when written, is charged below with the others */
                    int64_t in_rows = 0, in_bytes = 0, rows_of[FUSED_MAX_IN], bo = 0;
                    for (int32_t i = 0; i < k->nin && i < FUSED_MAX_IN && prof; i++) {
                        rows_of[i] = var_rows(x, k->in[i]);
                        in_rows += rows_of[i];
                    }
                    if (prof && !u->src) {
                        /* the columns its stages, written outputs and totals need, once per row */
                        const gval *ix = k->kind == RF_HIR_MAP ? NULL : &x->vals[k->idx];
                        int64_t r2[2] = {ix ? ix->nrows : var_rows(x, k->in[0]),
                                         ix ? ix->nrows : (k->nin > 1 ? var_rows(x, k->in[1]) : 0)};
                        in_bytes = rf_gpu_funit_input_bytes(x->p, u, r2) + (ix ? ix->nrows * 8 * (k->nin > 1 ? 2 : 1) : 0);
                    } else if (prof && k->nin <= FUSED_MAX_IN) {
                        rf_hir_kernel_bytes(x->p, k, rows_of, 0, 0, &in_bytes, &bo);
                    }
                    if (!st) st = k_fused(x, u, &ran);
                    if (!st && prof && (st = x->g.ops->mark(&x->g, 1)) == RF_OK) st = x->g.ops->elapsed(&x->g, &secs);
                    if (st) break;
                    x->fdone[fu] = (uint8_t)ran;
                    x->res->gpu_fused += ran;
                    if (ran && prof) {
                        rf_rt_kstat *s = &x->res->stats[k->id];
                        double wall = now() - t0;
                        s->seconds += wall > secs * 4 ? wall : secs;
                        s->rows_in += in_rows;
                        s->bytes_in += in_bytes;
                    }
                }
                if (x->fdone[fu]) {
                    if (prof) {
                        /* stages whose output stays in registers have no row
                        ** count (-1); the input is read once, by the first */
                        rf_rt_kstat *s = &x->res->stats[k->id];
                        s->calls++;
                        s->device = "fused";
                        if (m == RF_GPU_MEMBER_TOTAL) {
                            /* the total's rows are its registers' sums; the reduce's result is written */
                            s->rows_in = -1;
                            s->rows_out = k->kind == RF_HIR_REDUCE ? var_rows(x, k->out) : -1;
                            if (k->kind == RF_HIR_REDUCE) {
                                int64_t bi = 0, bw = 0, zero[FUSED_MAX_IN] = {0};
                                if (k->nin <= FUSED_MAX_IN) rf_hir_kernel_bytes(x->p, k, zero, 0, s->rows_out, &bi, &bw);
                                s->bytes_out += bw;
                            }
                            for (int32_t r = 0; r < k->nrelease; r++) var_clear(x, k->release[r]);
                            continue;
                        }
                        if (m < 0) {
                            s->rows_out = -1; /* the pairs, never written */
                            for (int32_t r = 0; r < k->nrelease; r++) var_clear(x, k->release[r]);
                            continue;
                        }
                        const rf_gpu_fmember *mb = &u->m[m];
                        if (u->src) s->rows_in = -1; /* reads the pairs */
                        else if (m > 0 && mb->parent < 0) s->rows_in += var_rows(x, k->in[0]);
                        else if (mb->parent >= 0 && u->m[mb->parent].mat >= 0)
                            s->rows_in += var_rows(x, u->m[mb->parent].k->out);
                        else if (mb->parent >= 0) s->rows_in = -1;
                        if (mb->mat >= 0) {
                            int64_t nout = var_rows(x, k->out), bi = 0, bw = 0, zero[FUSED_MAX_IN] = {0};
                            if (k->nin <= FUSED_MAX_IN) rf_hir_kernel_bytes(x->p, k, zero, 0, nout, &bi, &bw);
                            /* (repeats dropped where made: fewer rows than the CPU's, uncounted) */
                            s->rows_out = x->vals[k->out].distinct || s->rows_out < 0 ? -1 : s->rows_out + nout;
                            s->bytes_out += bw;
                        } else {
                            s->rows_out = -1;
                        }
                    }
                    for (int32_t r = 0; r < k->nrelease; r++) var_clear(x, k->release[r]);
                    continue;
                }
            }
            int64_t out_before = 0;
            if (prof) {
                /* inputs before the kernel runs: insert grows its first input */
                rf_rt_kstat *s = &x->res->stats[k->id];
                for (int32_t i = 0; i < k->nin; i++) {
                    if (s->rows_in >= 0) s->rows_in += var_rows(x, k->in[i]);
                    in_rows[i] = var_rows(x, k->in[i]);
                }
                /* a unique of rows whose repeats were dropped where made:
                ** fewer rows in than the CPU's (rows_out stays comparable) */
                if (k->kind == RF_HIR_UNIQUE && x->vals[k->in[0]].distinct) s->rows_in = -1;
                out_before = var_rows(x, k->out);
            }
            double t0 = now();
            if (prof) st = x->g.ops->mark(&x->g, 0);
            x->on_host = 0;
            if (!st) st = run_kernel(x, k);
            if (st) break;
            if (prof) {
                double secs = 0;
                if ((st = x->g.ops->mark(&x->g, 1)) || (st = x->g.ops->elapsed(&x->g, &secs))) break;
                rf_rt_kstat *s = &x->res->stats[k->id];
                s->calls++;
                /* host work (string tables, fallbacks) counts in wall time */
                double wall = now() - t0;
                s->seconds += x->on_host || wall > secs * 4 ? wall : secs;
                if (x->on_host && x->plans[k->id].gpu) s->device = "gpu+cpu";
                /* (repeats dropped where made: fewer rows than the CPU's, uncounted) */
                s->rows_out = x->vals[k->out].distinct || s->rows_out < 0 ? -1 : s->rows_out + var_rows(x, k->out);
                /* only the columns the kernel uses (harmony/hir_bytes.c) */
                int64_t bi = 0, bo = 0;
                rf_hir_kernel_bytes(x->p, k, in_rows, out_before, var_rows(x, k->out), &bi, &bo);
                s->bytes_in += bi;
                s->bytes_out += bo;
            }
            for (int32_t r = 0; r < k->nrelease; r++) var_clear(x, k->release[r]);
        }
        if (st) break;
        if (bl->term == RF_HIR_T_HALT) break;
        if (bl->term == RF_HIR_T_GOTO) {
            b = bl->target;
            continue;
        }
        int any = 0;
        for (int32_t t = 0; t < bl->ntest && !any; t++) any = var_rows(x, bl->test[t]) > 0;
        b = any ? bl->target : bl->else_target;
    }
    rf_rt_fixpoint_end(&fx);
    free(in_rows);
    return st;
}

/* Does a kernel read string bytes on the device (device islands, string
** sort keys, min/max of strings)? Then the dictionary is copied up front. */
static int needs_dict(const gx *x)
{
    const rf_hir_program *p = x->p;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            const rf_hir_var *in0 = k->nin > 0 ? p->vars[k->in[0]] : NULL;
            if (k->id >= 0 && k->id < x->nkernels) {
                if (x->plans[k->id].nrowstr > 0) return 1;
                for (int32_t i = 0; i < x->plans[k->id].nisland; i++)
                    if (x->plans[k->id].islands[i].dev) return 1;
            }
            if (k->kind == RF_HIR_SORT && in0)
                for (int32_t i = 0; i < k->norder; i++)
                    if (in0->types[k->order[i].col] == RF_TYPE_STRING) return 1;
            if (k->kind == RF_HIR_REDUCE && in0)
                for (int32_t i = 0; i < k->naggs; i++)
                    if ((k->aggs[i].fn == RF_AGG_MIN || k->aggs[i].fn == RF_AGG_MAX) &&
                        k->aggs[i].col >= 0 && in0->types[k->aggs[i].col] == RF_TYPE_STRING)
                        return 1;
        }
    return 0;
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n > 256 ? 256 : n) : 1;
}

int rf_rt_gpu_available(char *why, size_t n)
{
    if (rf_gpu_emulated()) {
        if (why && n) snprintf(why, n, "an emulated GPU (RF_GPU_EMULATE is set: kernels run on the CPU)");
        return 1;
    }
    return rf_gpu_cuda_probe(why, n);
}

/* Does a PTX0 section hold the PTX of exactly this source? (*ptx filled when so) */
static int ptx0_fits(gx *x, const void *ptx0, uint64_t ptx0_size, const rf_buf *src, rf_gpu_ptx *ptx)
{
    uint64_t h[2];
    rf_gpu_hash128(src->data ? src->data : "", (uint64_t)src->len, h);
    rf_diags quiet;
    rf_diags_init(&quiet);
    int have = 0;
    /* a PTX0 section that does not match is not an error: it is compiled anew */
    if (!rf_gpu_ptx0_decode(x->p->source, ptx0, ptx0_size, ptx, &quiet) && !strcmp(ptx->abi, rf_gpu_abi_tag()) &&
        ptx->src_hash[0] == h[0] && ptx->src_hash[1] == h[1])
        have = 1;
    else
        rf_gpu_ptx_free(ptx);
    rf_diags_free(&quiet);
    return have;
}

/* The program's kernels: the PTX0 section when it fits this build and
** program, else the source compiled now (NVRTC, cached). The fused source
** holds every unfused kernel too: it is the one compiled, also for runs with
** --no-fuse (which launch no fused kernel), so both share the caches; the
** PTX0 of a .rfx compiled with --no-fuse serves runs with --no-fuse. */
static rf_status load_program(gx *x, const void *ptx0, uint64_t ptx0_size)
{
    rf_buf src;
    rf_buf_init(&src);
    rf_status st = rf_gpu_codegen(x->p, 1, &src, x->d);
    rf_gpu_ptx ptx;
    memset(&ptx, 0, sizeof ptx);
    int have = 0;
    if (!st && ptx0 && ptx0_size) {
        have = ptx0_fits(x, ptx0, ptx0_size, &src, &ptx);
        if (!have && x->o.no_fuse) {
            rf_buf usrc;
            rf_buf_init(&usrc);
            st = rf_gpu_codegen(x->p, 0, &usrc, x->d);
            if (!st && (have = ptx0_fits(x, ptx0, ptx0_size, &usrc, &ptx))) {
                rf_buf_free(&src);
                src = usrc;
            } else {
                rf_buf_free(&usrc);
            }
        }
    }
    if (!st && !have && !rf_gpu_emulated())
        st = rf_gpu_nvrtc_compile(rf_buf_cstr(&src), (uint64_t)src.len, NULL, &ptx, x->d);
    if (!st) st = x->g.ops->load(&x->g, &ptx, rf_buf_cstr(&src), (uint64_t)src.len);
    rf_gpu_ptx_free(&ptx);
    rf_buf_free(&src);
    return st;
}

rf_status rf_rt_gpu_run(const rf_hir_program *p, const void *ptx0, uint64_t ptx0_size, const rf_rt_options *o,
                        const rf_rt_gpu_inputs *inputs, rf_rt_result **out, rf_diags *d)
{
    *out = NULL;
    gx x;
    memset(&x, 0, sizeof x);
    x.p = p;
    x.o = *o;
    x.d = d;
    x.inputs = inputs;
    int dict_borrowed = inputs && inputs->dict;
    x.threads = o->threads > 0 ? o->threads : online_cpus();
    char why[256];
    rf_status st;
    if (rf_gpu_emulated())
        st = rf_gpu_emu_open(&x.g, d);
    else
        st = rf_gpu_cuda_open(&x.g, d, why, sizeof why);
    if (st == RF_EUSER) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "no usable GPU: %s", why);
        return st;
    }
    if (st) return st;
    x.g_open = 1;
    rf_gpu_acct_install(&x.g);
    rf_rt_result *res = rf_calloc(1, sizeof *res);
    x.res = res;
    x.vals = rf_calloc((size_t)p->nvars + 1, sizeof *x.vals);
    x.dict = dict_borrowed ? inputs->dict : rf_rt_dict_new();
    int32_t nk = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->id >= nk) nk = p->blocks[b]->kernels[j]->id + 1;
    x.nkernels = nk;
    x.plans = rf_calloc((size_t)nk + 1, sizeof *x.plans);
    st = res && x.vals && x.dict && x.plans ? RF_OK : RF_ENOMEM;
    if (!st) st = rf_cpu_pool_new(x.threads, &x.cpool);
    if (!st) st = rf_gpool_new(&x.g, &x.pool);
    x.g.pool = x.pool;
    x.str.g = &x.g;
    x.str.pool = x.pool;
    x.str.dict = x.dict;
    x.str.threads = x.threads;
    if (!st) {
        res->dict = x.dict;
        res->dict_borrowed = dict_borrowed;
        res->device = "gpu";
        for (int32_t b = 0; b < p->nblocks; b++)
            for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
                const rf_hir_kernel *k = p->blocks[b]->kernels[j];
                if (k->id >= 0 && k->id < nk) rf_gpu_kplan_build(p, k, &x.plans[k->id]);
            }
        if (o->profile) {
            res->nstats = nk;
            res->stats = rf_calloc((size_t)nk + 1, sizeof *res->stats);
            if (!res->stats) st = RF_ENOMEM;
            for (int32_t b = 0; b < p->nblocks && !st; b++)
                for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
                    const rf_hir_kernel *k = p->blocks[b]->kernels[j];
                    if (k->id < 0 || k->id >= nk) continue;
                    res->stats[k->id].kernel = k->id;
                    res->stats[k->id].what = rf_hir_kind_name(k->kind);
                    res->stats[k->id].device = x.plans[k->id].gpu ? "gpu" : "cpu";
                }
        }
    }
    if (!st && p->nblocks == 1) {
        x.last_reader = rf_calloc((size_t)p->nvars + 1, sizeof *x.last_reader);
        if (!x.last_reader) st = RF_ENOMEM;
        for (int32_t j = 0; !st && j < p->blocks[0]->nkernels; j++)
            for (int32_t i = 0; i < p->blocks[0]->kernels[j]->nin; i++)
                if (p->blocks[0]->kernels[j]->in[i] >= 0) x.last_reader[p->blocks[0]->kernels[j]->in[i]] = p->blocks[0]->kernels[j];
    }
    if (!st) st = rf_gpu_fplan_build(p, !o->no_fuse, &x.fplan, d);
    if (!st && !(x.fdone = rf_calloc((size_t)x.fplan->nunits + 1, 1))) st = RF_ENOMEM;
    double t0 = now();
    if (!st) st = load_program(&x, ptx0, ptx0_size);
    for (int32_t v = 0; v < p->nvars && !st; v++)
        if (p->vars[v]->role == RF_HIR_ROLE_INPUT) st = load_input(&x, v);
    /* the dictionary is data like the columns: copied with them */
    if (!st && needs_dict(&x)) st = rf_gpu_dict_sync(&x.str, 0);
    if (!st) st = wake(&x);
    if (!st) st = x.g.ops->sync(&x.g);
    double t1 = now();
    rf_gpu_acct_reset(&x.g);
    if (!st) st = run_blocks(&x);
    if (!st) st = wcheck_flush(&x);
    gfree(&x, &x.wcheck);
    if (!st) st = x.g.ops->sync(&x.g);
    double t2 = now();
    if (res) {
        res->gpu_launches = (int64_t)x.g.acct.calls[RF_GPU_ACCT_LAUNCH];
        res->gpu_waits = (int64_t)x.g.acct.calls[RF_GPU_ACCT_WAIT];
        res->gpu_cub_calls = (int64_t)x.g.acct.calls[RF_GPU_ACCT_CUB];
        res->gpu_launch_seconds = x.g.acct.seconds[RF_GPU_ACCT_LAUNCH];
        res->gpu_wait_seconds = x.g.acct.seconds[RF_GPU_ACCT_WAIT];
        res->gpu_cub_seconds = x.g.acct.seconds[RF_GPU_ACCT_CUB];
        res->gpu_other_calls = (int64_t)x.g.acct.calls[RF_GPU_ACCT_OTHER];
        res->gpu_other_seconds = x.g.acct.seconds[RF_GPU_ACCT_OTHER];
        if (x.g.acct.trace && x.g.acct.trace_text.len) res->gpu_trace = rf_strdup(rf_buf_cstr(&x.g.acct.trace_text));
    }
    if (!st) {
        int32_t n = 0;
        for (int32_t v = 0; v < p->nvars; v++) n += p->vars[v]->role == RF_HIR_ROLE_OUTPUT;
        res->outputs = rf_calloc((size_t)n + 1, sizeof *res->outputs);
        if (!res->outputs) st = RF_ENOMEM;
        for (int32_t v = 0; v < p->nvars && !st; v++)
            if (p->vars[v]->role == RF_HIR_ROLE_OUTPUT) {
                rf_rt_output *ou = &res->outputs[res->noutputs];
                ou->name = p->vars[v]->output_name;
                ou->var = p->vars[v];
                st = host_rel(&x, v, &ou->rel);
                if (!st) res->noutputs++;
            }
    }
    if (res) {
        res->load_seconds = t1 - t0;
        res->run_seconds = t2 - t1;
        if (x.pool) res->gpu_peak_bytes = rf_gpool_peak(x.pool);
    }
    rf_gpu_fplan_free(x.fplan);
    free(x.fdone);
    free(x.last_reader);
    for (int32_t v = 0; x.vals && v < p->nvars; v++) var_clear(&x, v);
    if (x.pool) rf_gpu_dict_free(&x.str);
    free(x.vals);
    free(x.plans);
    rf_gpool_free(x.pool);
    rf_buf_free(&x.g.acct.trace_text);
    if (x.g_open) x.g.ops->close(&x.g);
    rf_cpu_pool_free(x.cpool);
    if (st) {
        /* (rf_rt_result_free lives in rt_exec.c, which calls into this file) */
        if (res) {
            for (int32_t i = 0; i < res->noutputs; i++) rf_rt_rel_free(&res->outputs[i].rel);
            free(res->outputs);
            free(res->stats);
            free(res->gpu_trace);
            free(res);
        }
        if (!dict_borrowed) rf_rt_dict_free(x.dict);
        return st;
    }
    *out = res;
    return RF_OK;
}
