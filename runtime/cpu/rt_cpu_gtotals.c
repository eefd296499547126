/*
** runtime/cpu/rt_cpu_gtotals.c: grouped totals on the CPU: a MAP whose rows
** only a GROUP and that grouping's REDUCE read runs with them as one pass.
**
** Owns: finding such spans (rf_cx_gt_plan), and running one: the map's
** input in row chunks, each chunk's rows computed by rf_rt_eval_map (inline,
** one thread) into columns the column pool recycles, then folded into tables
** of groups (first row, count, exact 128-bit sums, min and max) that are
** merged at the end. Each thread computes whole chunks on its own. The
** map's rows are never all in memory: for TPC-H q01 at SF 10 they were 60 M
** rows of 7 columns, written to fresh pages (whose zeroing by the kernel was
** most of the query's time) and read twice.
**
** The result is the REDUCE's relation exactly as the three kernels make it:
** groups in the order of their first row, the same values, the same errors
** (the map's first failing row, or where it fails in an aggregated
** expression the group rf_rt_agg_expr_fail names; overflow of a total when
** it is finished).
** Only what that allows is fused: counts; totals and averages of int and
** decimal columns (their sums are exact, so the order of adding does not
** matter); min and max of int, decimal and date columns; group keys of any
** type but float. A span whose groups outnumber GT_MAX_GROUPS in one
** thread's table, or that has more than GT_FEW_GROUPS groups with fewer
** than GT_ROWS_PER_GROUP rows each, stops and runs as three kernels
** (nothing was kept).
*/
#include "rt_cpu_internal.h"
#include "rf_mix.h"

#include "rf_value.h"

#include <stdatomic.h>

#define GT_MAX_GROUPS 65536
#define GT_FEW_GROUPS 256     /* never too many to fuse */
#define GT_ROWS_PER_GROUP 8   /* beyond GT_FEW_GROUPS, fewer rows a group than this: apart */
#define GT_MAX_KEYS 8
#define GT_MAX_COLS 16

struct rf_cx_gtplan {
    const rf_hir_kernel *map, *group, *reduce;
    int32_t nk, kcol[GT_MAX_KEYS];
    rf_cpu_kind kkind[GT_MAX_KEYS];
    int32_t ns, scol[GT_MAX_COLS]; /* distinct columns summed */
    int32_t nm, mcol[GT_MAX_COLS], mmax[GT_MAX_COLS];
    rf_cpu_kind mkind[GT_MAX_COLS];
    int32_t *slot; /* per aggregate: its sum or min/max index, -1 for count */
};

/* ---- which spans fuse ---------------------------------------------------- */

static int reads_var(const rf_hir_kernel *k, int32_t v)
{
    for (int32_t i = 0; i < k->nin; i++)
        if (k->in[i] == v) return 1;
    return k->idx == v;
}

/* Is v read by any kernel but a and b, or tested by a branch? */
static int read_elsewhere(const rf_hir_program *p, int32_t v, const rf_hir_kernel *a, const rf_hir_kernel *b)
{
    for (int32_t bi = 0; bi < p->nblocks; bi++) {
        const rf_hir_block *bl = p->blocks[bi];
        for (int32_t t = 0; t < bl->ntest; t++)
            if (bl->test[t] == v) return 1;
        for (int32_t j = 0; j < bl->nkernels; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            if (k != a && k != b && reads_var(k, v)) return 1;
        }
    }
    return 0;
}

/* Can the map's expressions be computed by several threads at once, each
** on its own chunk? Not those that make strings (they add them to the
** dictionary) nor LIKE (its cache is as large as the dictionary, per call). */
static int expr_chunkable(const rf_qp_expr *e)
{
    if (!e) return 1;
    if (e->kind == RF_QP_E_LIKE) return 0;
    if (e->type == RF_TYPE_STRING && e->kind != RF_QP_E_COL && e->kind != RF_QP_E_CONST) return 0;
    for (int32_t i = 0; i < e->nargs; i++)
        if (!expr_chunkable(e->args[i])) return 0;
    return 1;
}

/* keys are kept as 64-bit words: not floats, not wide decimals */
static int key_kind_ok(rf_type t) { return t != RF_TYPE_FLOAT && t != RF_TYPE_DEC128; }

static int minmax_kind_ok(rf_type t)
{
    return t == RF_TYPE_INT || t == RF_TYPE_DECIMAL || t == RF_TYPE_DATE;
}

/* The plan of the span starting at bl->kernels[j], or NULL. */
static rf_cx_gtplan *plan_at(const rf_hir_program *p, const rf_hir_block *bl, int32_t j)
{
    if (j + 2 >= bl->nkernels) return NULL;
    const rf_hir_kernel *m = bl->kernels[j], *g = bl->kernels[j + 1], *r = bl->kernels[j + 2];
    if (m->kind != RF_HIR_MAP || g->kind != RF_HIR_GROUP || r->kind != RF_HIR_REDUCE) return NULL;
    if (m->nin != 1 || g->nin != 1 || g->in[0] != m->out || r->in[0] != m->out || r->idx != g->out) return NULL;
    const rf_hir_var *mv = p->vars[m->out], *gv = p->vars[g->out];
    /* a predicate's relation (q01's shipped_line) too, when no other kernel reads it */
    if ((mv->role != RF_HIR_ROLE_TEMP && mv->role != RF_HIR_ROLE_PRED) || gv->role != RF_HIR_ROLE_TEMP) return NULL;
    if (g->ngroup != r->ngroup || g->ngroup > GT_MAX_KEYS || r->naggs > 256) return NULL;
    for (int32_t i = 0; i < g->ngroup; i++)
        if (g->group[i] != r->group[i] || g->group[i] < 0 || g->group[i] >= mv->ncols ||
            !key_kind_ok(mv->types[g->group[i]]))
            return NULL;
    if (read_elsewhere(p, m->out, g, r) || read_elsewhere(p, g->out, r, r)) return NULL;
    if (!expr_chunkable(m->filter)) return NULL;
    for (int32_t o = 0; o < m->nouts; o++)
        if (!expr_chunkable(m->outs[o])) return NULL;
    rf_cx_gtplan *pl = rf_calloc(1, sizeof *pl);
    if (!pl) return NULL;
    pl->slot = rf_calloc((size_t)r->naggs + 1, sizeof *pl->slot);
    if (!pl->slot) {
        free(pl);
        return NULL;
    }
    pl->map = m, pl->group = g, pl->reduce = r;
    pl->nk = g->ngroup;
    for (int32_t i = 0; i < pl->nk; i++) {
        pl->kcol[i] = g->group[i];
        pl->kkind[i] = rf_rt_cpu_kind(mv->types[g->group[i]]);
    }
    int ok = 1;
    for (int32_t a = 0; a < r->naggs && ok; a++) {
        const rf_qp_agg *ag = &r->aggs[a];
        rf_type t = ag->col >= 0 && ag->col < mv->ncols ? mv->types[ag->col] : RF_TYPE_INT;
        pl->slot[a] = -1;
        if (ag->fn == RF_AGG_COUNT) continue;
        if (ag->col < 0 || ag->col >= mv->ncols) {
            ok = 0;
        } else if (ag->fn == RF_AGG_TOTAL || ag->fn == RF_AGG_AVG) {
            if (t != RF_TYPE_INT && t != RF_TYPE_DECIMAL) {
                ok = 0;
                break;
            }
            int32_t s = 0;
            while (s < pl->ns && pl->scol[s] != ag->col) s++;
            if (s == pl->ns) {
                if (pl->ns == GT_MAX_COLS) {
                    ok = 0;
                    break;
                }
                pl->scol[pl->ns++] = ag->col;
            }
            pl->slot[a] = s;
        } else if (ag->fn == RF_AGG_MIN || ag->fn == RF_AGG_MAX) {
            if (!minmax_kind_ok(t) || pl->nm == GT_MAX_COLS) {
                ok = 0;
                break;
            }
            pl->mcol[pl->nm] = ag->col;
            pl->mmax[pl->nm] = ag->fn == RF_AGG_MAX;
            pl->mkind[pl->nm] = rf_rt_cpu_kind(t);
            pl->slot[a] = pl->nm++;
        } else {
            ok = 0;
        }
    }
    if (!ok) {
        rf_cx_gt_plan_free(pl);
        return NULL;
    }
    return pl;
}

rf_status rf_cx_gt_plan(exec *x)
{
    const rf_hir_program *p = x->p;
    int32_t nk = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->id >= nk) nk = p->blocks[b]->kernels[j]->id + 1;
    x->nkernels = nk;
    x->gt = rf_calloc((size_t)nk + 1, sizeof *x->gt);
    x->gt_skip = rf_calloc((size_t)nk + 1, 1);
    x->fused_rows = rf_calloc((size_t)p->nvars + 1, sizeof *x->fused_rows);
    if (!x->gt || !x->gt_skip || !x->fused_rows) return RF_ENOMEM;
    for (int32_t v = 0; v < p->nvars; v++) x->fused_rows[v] = -1;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bl = p->blocks[b];
        for (int32_t j = 0; j < bl->nkernels; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            if (k->id < 0 || k->id >= nk) continue;
            x->gt[k->id] = plan_at(p, bl, j);
            if (x->gt[k->id]) j += 2;
        }
    }
    return RF_OK;
}

void rf_cx_gt_plan_free(rf_cx_gtplan *pl)
{
    if (!pl) return;
    free(pl->slot);
    free(pl);
}

/* ---- tables of groups ------------------------------------------------------ */

typedef struct gt_table {
    int32_t nk, ns, nm;
    int64_t n, gcap;     /* groups, groups allocated */
    int64_t scap;        /* slots: a power of two, at least twice gcap */
    int32_t *slots;      /* group + 1; 0 empty */
    uint64_t *hash;      /* [gcap] */
    int64_t *keys;       /* [gcap * nk] */
    int64_t *first;      /* [gcap]: the first row of the group */
    int64_t *count;      /* [gcap] */
    rf_dec128 *sums;     /* [gcap * ns] */
    int64_t *mm;         /* [gcap * nm] */
    int64_t folded;      /* rows folded in */
    int over, oom;
} gt_table;

static void table_free(gt_table *t)
{
    free(t->slots);
    free(t->hash);
    free(t->keys);
    free(t->first);
    free(t->count);
    free(t->sums);
    free(t->mm);
    memset(t, 0, sizeof *t);
}

static int table_grow(gt_table *t)
{
    int64_t g = t->gcap ? t->gcap * 2 : 64;
    uint64_t *h = realloc(t->hash, (size_t)g * sizeof *h);
    if (h) t->hash = h;
    int64_t *k = realloc(t->keys, (size_t)(g * t->nk + 1) * sizeof *k);
    if (k) t->keys = k;
    int64_t *f = realloc(t->first, (size_t)g * sizeof *f);
    if (f) t->first = f;
    int64_t *c = realloc(t->count, (size_t)g * sizeof *c);
    if (c) t->count = c;
    rf_dec128 *s = realloc(t->sums, (size_t)(g * t->ns + 1) * sizeof *s);
    if (s) t->sums = s;
    int64_t *m = realloc(t->mm, (size_t)(g * t->nm + 1) * sizeof *m);
    if (m) t->mm = m;
    int32_t *sl = rf_calloc((size_t)(g * 2), sizeof *sl);
    if (!h || !k || !f || !c || !s || !m || !sl) {
        free(sl);
        return 0;
    }
    free(t->slots);
    t->slots = sl;
    t->scap = g * 2;
    t->gcap = g;
    for (int64_t i = 0; i < t->n; i++) {
        uint64_t at = t->hash[i] & (uint64_t)(t->scap - 1);
        while (t->slots[at]) at = (at + 1) & (uint64_t)(t->scap - 1);
        t->slots[at] = (int32_t)(i + 1);
    }
    return 1;
}

static inline int same_keys(const int64_t *a, const int64_t *b, int32_t nk)
{
    for (int32_t i = 0; i < nk; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static uint64_t hash_keys(const int64_t *k, int32_t nk)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int32_t i = 0; i < nk; i++) {
        h = rf_mix64_combine(h, (uint64_t)k[i]) * UINT64_C(0xff51afd7ed558ccd);
    }
    return h ^ (h >> 29);
}

/* The group of key k (hash h), made when new (-1: no room or memory). */
static int64_t table_find(gt_table *t, const int64_t *k, uint64_t h)
{
    if (t->scap) {
        uint64_t at = h & (uint64_t)(t->scap - 1);
        for (int32_t s; (s = t->slots[at]) != 0; at = (at + 1) & (uint64_t)(t->scap - 1)) {
            int64_t gi = s - 1;
            if (t->hash[gi] == h && same_keys(&t->keys[gi * t->nk], k, t->nk)) return gi;
        }
    }
    if (t->n >= GT_MAX_GROUPS) {
        t->over = 1;
        return -1;
    }
    if (t->n == t->gcap && !table_grow(t)) {
        t->oom = 1;
        return -1;
    }
    int64_t gi = t->n++;
    uint64_t at = h & (uint64_t)(t->scap - 1);
    while (t->slots[at]) at = (at + 1) & (uint64_t)(t->scap - 1);
    t->slots[at] = (int32_t)(gi + 1);
    t->hash[gi] = h;
    memcpy(&t->keys[gi * t->nk], k, (size_t)t->nk * sizeof *k);
    t->first[gi] = INT64_MAX;
    t->count[gi] = 0;
    for (int32_t i = 0; i < t->ns; i++) t->sums[gi * t->ns + i] = 0;
    return gi;
}

static int64_t read_int(const void *col, rf_cpu_kind kind, int64_t i)
{
    switch (kind) {
    case RF_CPU_I32: return ((const int32_t *)col)[i];
    case RF_CPU_U32: return ((const uint32_t *)col)[i];
    case RF_CPU_U8: return ((const uint8_t *)col)[i];
    default: return ((const int64_t *)col)[i];
    }
}

/* ---- one span's run ---------------------------------------------------------- */

/* Chunks of the map's input, each computed by one thread on its own (the
** evaluator inline, threads 1) and folded into that thread's table: no
** threads started per chunk, no chunk waits for another. A group's first
** row is kept as (chunk << GT_CHUNK_BITS) + its row in the chunk's output,
** which orders rows as the whole map's output would. */
#define GT_CHUNK_BITS 16
#define GT_CHUNK_ROWS ((int64_t)1 << GT_CHUNK_BITS)

typedef struct gt_run {
    exec *x;
    const rf_cx_gtplan *pl;
    const rf_rt_rel *in;
    gt_table *tables;     /* one per thread */
    int64_t *rows;        /* per chunk: the map's rows */
    rf_diags **diags;     /* per chunk that failed: its messages */
    rf_status *st;        /* per chunk */
    _Atomic int64_t first_err; /* the first chunk that failed (nchunks: none) */
} gt_run;

static void fold_rows(const rf_cx_gtplan *pl, gt_table *t, const rf_rt_rel *rows, int64_t base)
{
    int64_t key[GT_MAX_KEYS];
    int64_t last_g = -1;
    int64_t last_key[GT_MAX_KEYS];
    for (int64_t i = 0; i < rows->nrows; i++) {
        for (int32_t c = 0; c < pl->nk; c++) key[c] = read_int(rows->cols[pl->kcol[c]], pl->kkind[c], i);
        int64_t gi;
        /* runs of one group (input ordered by it) skip the hash */
        if (last_g >= 0 && same_keys(key, last_key, pl->nk)) {
            gi = last_g;
        } else {
            gi = table_find(t, key, hash_keys(key, pl->nk));
            if (gi < 0) return;
            if (t->count[gi] == 0)
                for (int32_t m = 0; m < pl->nm; m++) t->mm[gi * pl->nm + m] = read_int(rows->cols[pl->mcol[m]], pl->mkind[m], i);
            last_g = gi;
            for (int32_t c = 0; c < pl->nk; c++) last_key[c] = key[c];
        }
        int64_t row = base + i;
        if (row < t->first[gi]) t->first[gi] = row;
        t->count[gi]++;
        for (int32_t s = 0; s < pl->ns; s++) t->sums[gi * pl->ns + s] += ((const int64_t *)rows->cols[pl->scol[s]])[i];
        for (int32_t m = 0; m < pl->nm; m++) {
            int64_t v = read_int(rows->cols[pl->mcol[m]], pl->mkind[m], i);
            int64_t *cur = &t->mm[gi * pl->nm + m];
            if (pl->mmax[m] ? v > *cur : v < *cur) *cur = v;
        }
    }
}

static void run_chunks(void *ctx, int64_t begin, int64_t end, int worker)
{
    gt_run *g = ctx;
    exec *x = g->x;
    const rf_hir_kernel *m = g->pl->map;
    const rf_rt_rel *in = g->in;
    const rf_hir_var *mv = x->p->vars[m->out];
    gt_table *t = &g->tables[worker];
    void *view[256];
    rf_rt_eval_ctx ectx = {x->dict, 1, kloc(x, m), rf_hir_kind_name(m->kind)};
    for (int64_t c = begin; c < end; c++) {
        /* a chunk after one that failed cannot change the first error */
        if (c > atomic_load(&g->first_err) || t->over || t->oom) continue;
        int64_t r0 = c * GT_CHUNK_ROWS, n = in->nrows - r0 < GT_CHUNK_ROWS ? in->nrows - r0 : GT_CHUNK_ROWS;
        for (int32_t k = 0; k < in->ncols; k++)
            view[k] = in->cols[k] ? (char *)in->cols[k] + r0 * rf_rt_type_width(in->types[k]) : NULL;
        rf_rt_rel vin = {n, in->ncols, in->types, view};
        rf_rt_side s[2] = {{&vin, NULL}, {NULL, NULL}};
        rf_rt_rel rows;
        memset(&rows, 0, sizeof rows);
        rf_diags d;
        rf_diags_init(&d);
        rf_status st = rf_rt_eval_map(&ectx, m->filter, m->outs, m->nouts, mv->types, s, n, &rows, &d);
        if (st) {
            g->st[c] = st;
            rf_diags *keep = malloc(sizeof *keep);
            if (keep) {
                *keep = d;
                g->diags[c] = keep;
            } else {
                rf_diags_free(&d);
            }
            int64_t cur = atomic_load(&g->first_err);
            while (c < cur && !atomic_compare_exchange_weak(&g->first_err, &cur, c)) {
            }
            continue;
        }
        rf_diags_free(&d);
        g->rows[c] = rows.nrows;
        fold_rows(g->pl, t, &rows, c << GT_CHUNK_BITS);
        rf_rt_rel_free(&rows);
        /* few rows a group (q15's 100,000 suppliers at SF 10): the tables
        ** cost more than the map's rows would; stop early, run apart */
        t->folded += rows.nrows;
        if (t->n > GT_FEW_GROUPS && t->n * GT_ROWS_PER_GROUP > t->folded) t->over = 1;
    }
}

/* Adds table b's groups into a. */
static int table_merge(const rf_cx_gtplan *pl, gt_table *a, const gt_table *b)
{
    for (int64_t gb = 0; gb < b->n; gb++) {
        int64_t ga = table_find(a, &b->keys[gb * pl->nk], b->hash[gb]);
        if (ga < 0) return 0;
        int fresh = a->count[ga] == 0;
        if (b->first[gb] < a->first[ga]) a->first[ga] = b->first[gb];
        a->count[ga] += b->count[gb];
        for (int32_t s = 0; s < pl->ns; s++) a->sums[ga * pl->ns + s] += b->sums[gb * pl->ns + s];
        for (int32_t m = 0; m < pl->nm; m++) {
            int64_t v = b->mm[gb * pl->nm + m], *cur = &a->mm[ga * pl->nm + m];
            if (fresh || (pl->mmax[m] ? v > *cur : v < *cur)) *cur = v;
        }
    }
    return 1;
}

/* A group's first row and its index: sorted by the first row (no two
** groups share one), with no state outside the run (runs may be concurrent). */
typedef struct gt_first {
    int64_t first, group;
} gt_first;

static int cmp_first(const void *a, const void *b)
{
    int64_t x = ((const gt_first *)a)->first, y = ((const gt_first *)b)->first;
    return (x > y) - (x < y);
}

static void write_int(void *col, int w, int64_t i, int64_t v)
{
    if (w == 8) ((int64_t *)col)[i] = v;
    else if (w == 4) ((uint32_t *)col)[i] = (uint32_t)v;
    else if (w == 1) ((uint8_t *)col)[i] = (uint8_t)v;
    else memcpy((char *)col + i * w, &v, (size_t)w);
}

/* The reduce's relation from the merged groups, in the order of their first
** rows, finished by rf_cx_k_reduce's rules. */
static rf_status finish(exec *x, const rf_cx_gtplan *pl, gt_table *t, rf_rt_rel *out)
{
    const rf_hir_kernel *r = pl->reduce;
    const rf_hir_var *ov = x->p->vars[r->out];
    int64_t ng = t->n;
    int64_t *ord = rf_calloc((size_t)ng + 1, sizeof *ord);
    if (!ord) return RF_ENOMEM;
    gt_first *byf = rf_calloc((size_t)ng + 1, sizeof *byf);
    if (!byf) {
        free(ord);
        return RF_ENOMEM;
    }
    for (int64_t i = 0; i < ng; i++) byf[i] = (gt_first){t->first[i], i};
    qsort(byf, (size_t)ng, sizeof *byf, cmp_first);
    for (int64_t i = 0; i < ng; i++) ord[i] = byf[i].group;
    free(byf);
    rf_status st = rf_rt_rel_alloc(out, ov->ncols, ov->types, ng);
    for (int32_t c = 0; c < pl->nk && !st; c++)
        for (int64_t i = 0; i < ng; i++) write_int(out->cols[c], rf_rt_type_width(ov->types[c]), i, t->keys[ord[i] * pl->nk + c]);
    const rf_hir_var *mv = x->p->vars[pl->map->out];
    rf_rt_agg_fail fail = RF_RT_AGG_FAIL_NONE; /* the least failing group is named */
    for (int32_t a = 0; a < r->naggs && !st; a++) {
        const rf_qp_agg *ag = &r->aggs[a];
        void *dst = out->cols[r->ngroup + a];
        int w = rf_rt_type_width(ov->types[r->ngroup + a]);
        rf_type at = ag->col >= 0 ? mv->types[ag->col] : RF_TYPE_INT;
        for (int64_t i = 0; i < ng && !st; i++) {
            int64_t gi = ord[i], v = 0;
            if (ag->fn == RF_AGG_COUNT) {
                v = t->count[gi];
            } else if (ag->fn == RF_AGG_MIN || ag->fn == RF_AGG_MAX) {
                v = t->mm[gi * pl->nm + pl->slot[a]];
            } else if (ag->fn == RF_AGG_TOTAL && ov->types[r->ngroup + a] == RF_TYPE_DEC128) {
                /* the total of decimals is a wide decimal: the exact sum itself */
                ((rf_dec128 *)dst)[i] = t->sums[gi * pl->ns + pl->slot[a]];
                continue;
            } else {
                rf_dec128 s = t->sums[gi * pl->ns + pl->slot[a]];
                rf_val_err e = {0, 0};
                rf_status vs;
                if (ag->fn == RF_AGG_AVG)
                    vs = at == RF_TYPE_INT ? rf_val_int128_avg(s, t->count[gi], &v, &e)
                                           : rf_val_dec128_avg(s, t->count[gi], &v, &e);
                else if (at == RF_TYPE_INT)
                    vs = (s > INT64_MAX || s < INT64_MIN) ? RF_EUSER : (v = (int64_t)s, RF_OK);
                else
                    vs = rf_val_dec128_to_dec(s, &v, &e);
                if (vs)
                    rf_rt_agg_fail_note(&fail, x->dict, out, r->ngroup, i,
                                        at == RF_TYPE_INT && ag->fn == RF_AGG_TOTAL ? "integer overflow in total()"
                                        : e.why                                     ? e.why
                                                                                    : "overflow");
            }
            write_int(dst, w, i, v);
        }
    }
    free(ord);
    if (!st && fail.row >= 0) st = rf_rt_agg_fail_report(&fail, x->dict, out, r->ngroup, kloc(x, r), x->d, x->fd_clash);
    if (st) rf_rt_rel_free(out);
    return st;
}

/* Runs the span: 1 in *ran when it did (*ran 0: too many groups; nothing
** changed, the three kernels run as usual). */
static rf_status run_span(exec *x, const rf_cx_gtplan *pl, int *ran)
{
    *ran = 0;
    const rf_hir_kernel *m = pl->map;
    const rf_rt_rel *in = &x->vals[m->in[0]].rel;
    int T = rf_cpu_pool_threads(x->pool);
    int64_t nchunks = (in->nrows + GT_CHUNK_ROWS - 1) / GT_CHUNK_ROWS;
    gt_run g = {x, pl, in, NULL, NULL, NULL, NULL, nchunks};
    g.tables = rf_calloc((size_t)T, sizeof *g.tables);
    g.rows = rf_calloc((size_t)nchunks + 1, sizeof *g.rows);
    g.diags = rf_calloc((size_t)nchunks + 1, sizeof *g.diags);
    g.st = rf_calloc((size_t)nchunks + 1, sizeof *g.st);
    rf_status st = g.tables && g.rows && g.diags && g.st ? RF_OK : RF_ENOMEM;
    int stop = 0;
    if (!st && in->ncols > 256) stop = 1;
    for (int i = 0; !st && i < T; i++) g.tables[i].nk = pl->nk, g.tables[i].ns = pl->ns, g.tables[i].nm = pl->nm;
    if (!st && !stop) rf_cpu_parallel_for(x->pool, nchunks, 1, run_chunks, &g);
    int64_t fe = st ? nchunks : atomic_load(&g.first_err);
    if (fe < nchunks) {
        /* the first failing chunk's first failing row: the whole map's error */
        st = g.st[fe];
        int64_t nd = x->d->count, ne = x->d->nerrors;
        if (g.diags[fe])
            for (int64_t i = 0; i < g.diags[fe]->count; i++)
                rf_diag_add(x->d, g.diags[fe]->items[i].sev, g.diags[fe]->items[i].loc, "%s", g.diags[fe]->items[i].msg);
        if (st == RF_EUSER) {
            /* an aggregated expression's error names its group, over all the map's rows */
            rf_rt_eval_ctx ectx = {x->dict, x->threads, kloc(x, m), rf_hir_kind_name(m->kind)};
            rf_rt_side s[2] = {{in, NULL}, {NULL, NULL}};
            st = rf_rt_agg_expr_fail(&ectx, x->p, m, s, in->nrows, x->d, nd, ne, x->fd_clash);
        }
    }
    for (int i = 0; !st && g.tables && i < T; i++) {
        if (g.tables[i].oom) st = RF_ENOMEM;
        if (g.tables[i].over) stop = 1;
    }
    for (int i = 1; i < T && !st && !stop; i++)
        if (!table_merge(pl, &g.tables[0], &g.tables[i])) {
            if (g.tables[0].oom) st = RF_ENOMEM;
            else stop = 1;
        }
    int64_t base = 0;
    for (int64_t c = 0; g.rows && c < nchunks; c++) base += g.rows[c];
    rf_rt_rel out;
    memset(&out, 0, sizeof out);
    if (!st && !stop) st = finish(x, pl, &g.tables[0], &out);
    for (int i = 0; g.tables && i < T; i++) table_free(&g.tables[i]);
    for (int64_t c = 0; g.diags && c < nchunks; c++)
        if (g.diags[c]) {
            rf_diags_free(g.diags[c]);
            free(g.diags[c]);
        }
    free(g.tables);
    free(g.rows);
    free(g.diags);
    free(g.st);
    if (st || stop) return st;
    rf_cx_val_clear(&x->vals[pl->reduce->out]);
    x->vals[pl->reduce->out].rel = out;
    rf_cx_val_clear(&x->vals[m->out]);
    rf_cx_val_clear(&x->vals[pl->group->out]);
    x->fused_rows[m->out] = x->fused_rows[pl->group->out] = base;
    *ran = 1;
    return RF_OK;
}

int rf_cx_gt_run(exec *x, const rf_hir_kernel *k, rf_status *st)
{
    *st = RF_OK;
    if (k->id < 0 || k->id >= x->nkernels) return 0;
    if (x->gt_skip[k->id]) {
        /* the group or reduce of a span that ran at its map */
        x->gt_skip[k->id] = 0;
        return 1;
    }
    const rf_cx_gtplan *pl = x->gt[k->id];
    if (!pl || pl->map != k) return 0;
    if (x->gt_unfused && x->gt_unfused[k->id]) {
        x->gt_unfused[k->id] = 0;
        return 0;
    }
    int ran = 0;
    *st = run_span(x, pl, &ran);
    if (*st || !ran) return *st != RF_OK;
    x->gt_skip[pl->group->id] = x->gt_skip[pl->reduce->id] = 1;
    if (x->res) x->res->cpu_fused++;
    return 1;
}

int32_t rf_cx_gt_until(exec *x, const rf_hir_kernel *k)
{
    if (k->id < 0 || k->id >= x->nkernels || !x->gt[k->id] || x->gt[k->id]->map != k) return -1;
    return x->gt[k->id]->reduce->id;
}

void rf_cx_gt_unfuse(exec *x, const rf_hir_kernel *k)
{
    if (k->id < 0 || k->id >= x->nkernels) return;
    if (!x->gt_unfused) x->gt_unfused = rf_calloc((size_t)x->nkernels + 1, 1);
    if (x->gt_unfused) x->gt_unfused[k->id] = 1;
}
