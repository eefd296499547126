/*
** txn/txn_kset.c: one base predicate's updates of a transaction resolved
** in bulk, GPUTx's k-sets.
**
** Owns: the resolution of a batch against a predicate's rows. Updates that
** conflict (same key: lang:input:key, or a functional predicate's keys; the
** whole fact for a predicate without keys) take effect in batch order; the
** rest commute. So the updates and the database rows they can meet (those
** of the same key, a semi-join) are sorted by key, stably (a key's rows
** first, then its updates in batch order), and every key's run is resolved
** on its own, the runs in parallel on the pool's threads:
**   +r  r present: nothing; another present row holds r's key: a key
**       violation (the earliest in the batch is the error); else r present.
**   -r  r present: absent; else nothing.
** The result is that of applying the batch line by line: the rows kept in
** their order, then the new rows in the order of their first insert.
**
** Where the stored rows are strictly increasing on a one-column key (a
** history of ids appended in order) the rows the updates meet are found by
** binary search instead of hashing the stored rows every transaction. Where
** the updates meet no stored row and their keys strictly increase in batch
** order (a batch of new ids), every run is one update: its inserts are the
** new rows, and the runs are not walked.
**
** A key whose stored row goes and whose new row comes is counted
** (rf_txn_pred.replaced): one row changed toward exec's switch to
** recomputing, not a delete and an insert.
**
** Values compare as the runtime compares them (rf_value.h: -0.0 equals
** 0.0, NaNs equal), and a database row repeated counts once.
*/
#include "rf_cpu.h"
#include "rf_rt_input.h"
#include "rf_txn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct kset {
    const rf_fe_pred *f;
    rf_cpu_table all;       /* the involved database rows (ninv), then the updates (nops) */
    int64_t ninv, nops;
    const int64_t *perm;    /* all's rows by key, stably */
    int32_t gcols[64], ngcols; /* the grouping key: runs of rows equal on it */
    int32_t kcols[2][64], nk[2], nkeys; /* the keys checked, in order */
    const uint8_t *insert;  /* [nops] */
    uint8_t *gone;          /* [ninv]: the row is deleted at the end */
    uint8_t *first_ins;     /* [nops]: the insert that adds a new row */
    rf_txn_violation *viol; /* [threads] */
    int64_t **scratch;      /* [threads]: the present rows of a run */
    int64_t *nscratch;
    int64_t *replaced;      /* [threads]: the runs' keys whose stored row went and a new row came */
    int oom;
} kset;

static int32_t width_of(const kset *k, int32_t c) { return rf_rt_type_width(k->f->types[c]); }

/* Rows a and b of all equal on column c (as values). */
static int same_col(const kset *k, int32_t c, int64_t a, int64_t b)
{
    if (k->f->types[c] == RF_TYPE_FLOAT) {
        double x = ((const double *)k->all.cols[c].data)[a], y = ((const double *)k->all.cols[c].data)[b];
        return x == y || (isnan(x) && isnan(y));
    }
    int32_t w = width_of(k, c);
    return !memcmp((const uint8_t *)k->all.cols[c].data + a * w, (const uint8_t *)k->all.cols[c].data + b * w, (size_t)w);
}

static int same_on(const kset *k, const int32_t *cols, int32_t n, int64_t a, int64_t b)
{
    for (int32_t i = 0; i < n; i++)
        if (!same_col(k, cols[i], a, b)) return 0;
    return 1;
}

static int same_row(const kset *k, int64_t a, int64_t b)
{
    for (int32_t c = 0; c < k->all.ncols; c++)
        if (!same_col(k, c, a, b)) return 0;
    return 1;
}

/* One key's run perm[s, e): its database rows, then its updates in batch order. */
static void resolve_run(kset *k, int64_t s, int64_t e, int worker)
{
    int64_t *present = k->scratch[worker];
    int64_t np = 0, cap = k->nscratch[worker];
    int64_t nold = 0, ngone = 0, nnew = 0;
    while (s + nold < e && k->perm[s + nold] < k->ninv) nold++;
    for (int64_t i = s; i < e; i++) {
        int64_t r = k->perm[i];
        int64_t found = -1;
        for (int64_t h = 0; h < np && found < 0; h++)
            if (present[h] == r || same_row(k, present[h], r)) found = h;
        int ins = r < k->ninv || k->insert[r - k->ninv];
        if (!ins) {
            if (found >= 0) present[found] = present[--np];
            continue;
        }
        if (found >= 0) continue;
        for (int32_t kk = 0; kk < k->nkeys && r >= k->ninv; kk++)
            for (int64_t h = 0; h < np; h++) {
                if (!same_on(k, k->kcols[kk], k->nk[kk], present[h], r)) continue;
                rf_txn_violation *v = &k->viol[worker];
                int64_t op = r - k->ninv;
                if (v->op < 0 || op < v->op) {
                    int old = present[h] < k->ninv;
                    for (int64_t o = s; o < s + nold && !old; o++) old = same_row(k, k->perm[o], present[h]);
                    *v = (rf_txn_violation){op, kk, old};
                }
                goto out;
            }
        if (np == cap) {
            int64_t nc = cap ? cap * 2 : 16;
            int64_t *pn = rf_realloc(present, (size_t)nc * sizeof *pn);
            if (!pn) {
                k->oom = 1;
                goto out;
            }
            present = k->scratch[worker] = pn;
            cap = k->nscratch[worker] = nc;
        }
        present[np++] = r;
    }
    /* the end state: database rows not present are deleted; a present update
    ** equal to none of them is a new row, placed at its first insert */
    for (int64_t o = s; o < s + nold; o++) {
        int64_t r = k->perm[o];
        int kept = 0;
        for (int64_t h = 0; h < np && !kept; h++) kept = present[h] == r || same_row(k, present[h], r);
        k->gone[r] = (uint8_t)!kept;
        ngone += !kept;
    }
    for (int64_t h = 0; h < np; h++) {
        if (present[h] < k->ninv) continue;
        int old = 0;
        for (int64_t o = s; o < s + nold && !old; o++) old = same_row(k, k->perm[o], present[h]);
        if (old) continue;
        for (int64_t i = s + nold; i < e; i++) {
            int64_t r = k->perm[i];
            if (k->insert[r - k->ninv] && (r == present[h] || same_row(k, r, present[h]))) {
                k->first_ins[r - k->ninv] = 1;
                nnew++;
                break;
            }
        }
    }
    /* a key whose stored row went and whose new row came: its value
    ** replaced, one row changed (a run without keys is one fact, which
    ** cannot both go and come) */
    if (k->nkeys) k->replaced[worker] += ngone < nnew ? ngone : nnew;
out:
    return;
}

/* The runs that start in [begin, end), each to its end. */
static void resolve_chunk(void *ctx, int64_t begin, int64_t end, int worker)
{
    kset *k = ctx;
    int64_t n = k->ninv + k->nops, i = begin;
    while (i > 0 && i < end && same_on(k, k->gcols, k->ngcols, k->perm[i - 1], k->perm[i])) i++;
    while (i < end) {
        int64_t e = i + 1;
        while (e < n && same_on(k, k->gcols, k->ngcols, k->perm[e - 1], k->perm[e])) e++;
        resolve_run(k, i, e, worker);
        i = e;
    }
}

typedef struct order_job {
    kset *k;
    uint8_t *unsorted; /* per chunk of rows: a row below its predecessor */
    uint8_t *repeated; /* per chunk of rows: a row whose key equals its predecessor's */
    int64_t grain;
} order_job;

/* Rows a before b in the order of the grouping key (as rf_cpu_sort_perm orders). */
static int key_less(const kset *k, int64_t a, int64_t b)
{
    for (int32_t i = 0; i < k->ngcols; i++) {
        int32_t c = k->gcols[i];
        const void *d = k->all.cols[c].data;
        int cmp = 0;
        switch (k->f->types[c]) {
        case RF_TYPE_FLOAT: cmp = rf_val_cmp_float(((const double *)d)[a], ((const double *)d)[b]); break;
        case RF_TYPE_DATE: cmp = (((const int32_t *)d)[a] > ((const int32_t *)d)[b]) - (((const int32_t *)d)[a] < ((const int32_t *)d)[b]); break;
        case RF_TYPE_STRING: cmp = (((const uint32_t *)d)[a] > ((const uint32_t *)d)[b]) - (((const uint32_t *)d)[a] < ((const uint32_t *)d)[b]); break;
        case RF_TYPE_BOOL: cmp = (((const uint8_t *)d)[a] > ((const uint8_t *)d)[b]) - (((const uint8_t *)d)[a] < ((const uint8_t *)d)[b]); break;
        default: cmp = (((const int64_t *)d)[a] > ((const int64_t *)d)[b]) - (((const int64_t *)d)[a] < ((const int64_t *)d)[b]); break;
        }
        if (cmp) return cmp < 0;
    }
    return 0;
}

static void check_order(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    order_job *j = ctx;
    for (int64_t i = begin > 0 ? begin : 1; i < end; i++) {
        if (key_less(j->k, i, i - 1)) {
            j->unsorted[begin / j->grain] = 1;
            return;
        }
        if (!j->repeated[begin / j->grain] && !key_less(j->k, i - 1, i)) j->repeated[begin / j->grain] = 1;
    }
}

/* The rows by key, stably: the identity when they already are (updates by
** increasing key, as a batch of new ids), else a parallel radix sort.
** *distinct: the rows' keys strictly increase (every run is one row); then,
** with no database row among them (only_ops), no permutation is made
** (*perm NULL): the caller needs none. */
static rf_status sorted_perm(kset *k, rf_cpu_pool *pool, int only_ops, int64_t **perm, int *distinct)
{
    int64_t n = k->all.nrows, grain = 1 << 14;
    *perm = NULL;
    *distinct = 0;
    order_job j = {k, rf_calloc((size_t)(n / grain + 1), 1), rf_calloc((size_t)(n / grain + 1), 1), grain};
    if (!j.unsorted || !j.repeated) {
        free(j.unsorted);
        free(j.repeated);
        return RF_ENOMEM;
    }
    rf_cpu_parallel_for(pool, n, grain, check_order, &j);
    int sorted = 1, repeats = 0;
    for (int64_t i = 0; i <= n / grain; i++) {
        sorted &= !j.unsorted[i];
        repeats |= j.repeated[i];
    }
    free(j.unsorted);
    free(j.repeated);
    if (!sorted) return rf_cpu_sort_perm(pool, &k->all, k->gcols, NULL, k->ngcols, perm);
    *distinct = !repeats;
    if (*distinct && only_ops) return RF_OK;
    if (!(*perm = rf_malloc((size_t)n * sizeof **perm + 1))) return RF_ENOMEM;
    for (int64_t i = 0; i < n; i++) (*perm)[i] = i;
    return RF_OK;
}

/* The keys an insert is checked against (txn.h's order: lang:input:key,
** then a functional predicate's keys), and the grouping key: the keys'
** common columns (the smaller key where one holds the other), or the whole
** fact without keys. */
static void keys_of(kset *k, const rf_fe_pred *f)
{
    if (f->ninput_key > 0 && f->ninput_key <= 64) {
        k->nk[k->nkeys] = f->ninput_key;
        memcpy(k->kcols[k->nkeys], f->input_key, (size_t)f->ninput_key * sizeof(int32_t));
        k->nkeys++;
    }
    if (f->functional && f->arity > 1 && f->arity - 1 <= 64) {
        k->nk[k->nkeys] = f->arity - 1;
        for (int32_t c = 0; c < f->arity - 1; c++) k->kcols[k->nkeys][c] = c;
        k->nkeys++;
    }
    if (!k->nkeys) {
        k->ngcols = f->arity <= 64 ? f->arity : 64; /* (a prefix of the fact groups it as well) */
        for (int32_t c = 0; c < k->ngcols; c++) k->gcols[c] = c;
        return;
    }
    k->ngcols = 0;
    for (int32_t i = 0; i < k->nk[0]; i++) {
        int32_t c = k->kcols[0][i], in = 1;
        for (int32_t kk = 1; kk < k->nkeys; kk++) {
            in = 0;
            for (int32_t j = 0; j < k->nk[kk]; j++) in |= k->kcols[kk][j] == c;
        }
        if (in) k->gcols[k->ngcols++] = c;
    }
}

typedef struct gather_job {
    const rf_txn_pred *p;
    const int64_t *idx; /* rows of cur, then (>= ncur) of the ops */
    int64_t ncur;
    rf_rt_rel *out;
} gather_job;

static void gather_rows(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    gather_job *g = ctx;
    const rf_txn_pred *p = g->p;
    for (int32_t c = 0; c < p->fe->arity; c++) {
        int32_t w = rf_rt_type_width(p->fe->types[c]);
        uint8_t *dst = g->out->cols[c];
        for (int64_t i = begin; i < end; i++) {
            int64_t r = g->idx[i];
            const uint8_t *src = r < g->ncur ? (const uint8_t *)p->cur.cols[c] + r * w
                                             : (const uint8_t *)p->ops->cols[c] + (r - g->ncur) * w;
            memcpy(dst + i * w, src, (size_t)w);
        }
    }
}

static rf_status gather_rel(rf_cpu_pool *pool, const rf_txn_pred *p, const int64_t *idx, int64_t n, rf_rt_rel *out)
{
    rf_status st = rf_rt_rel_alloc(out, p->fe->arity, p->fe->types, n);
    if (st || !n) return st;
    gather_job g = {p, idx, p->cur.nrows, out};
    rf_cpu_parallel_for(pool, n, 1 << 14, gather_rows, &g);
    return RF_OK;
}

/* ---- stored rows in key order: the rows an update meets by binary search -- */

/* Value i of a key column of type ty, as an integer that orders as the key
** does (key_less); floats are never passed (-0.0 equals 0.0). */
static int64_t key_at(rf_type ty, const void *d, int64_t i)
{
    switch (ty) {
    case RF_TYPE_DATE: return ((const int32_t *)d)[i];
    case RF_TYPE_STRING: return ((const uint32_t *)d)[i];
    case RF_TYPE_BOOL: return ((const uint8_t *)d)[i];
    default: return ((const int64_t *)d)[i];
    }
}

typedef struct ordered_job {
    rf_type ty;
    const void *cur;     /* the stored rows' key column (n rows) */
    int64_t n;
    const void *ops;     /* the updates' key column */
    int64_t *hit;        /* per update: the stored row of its key, or -1 */
    uint8_t *unsorted;   /* per chunk of stored rows: a key not above its predecessor's */
    int64_t grain;
    int64_t known;       /* the first rows known increasing (checked by an earlier transaction) */
} ordered_job;

static void check_increasing(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    ordered_job *j = ctx;
    int64_t from = begin + j->known, to = end + j->known;
    for (int64_t i = from > 0 ? from : 1; i < to; i++)
        if (key_at(j->ty, j->cur, i) <= key_at(j->ty, j->cur, i - 1)) {
            j->unsorted[begin / j->grain] = 1;
            return;
        }
}

static void find_keys(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    ordered_job *j = ctx;
    int64_t first = key_at(j->ty, j->cur, 0), last = key_at(j->ty, j->cur, j->n - 1);
    for (int64_t i = begin; i < end; i++) {
        int64_t x = key_at(j->ty, j->ops, i), lo = 0, hi = j->n;
        j->hit[i] = -1;
        if (x < first || x > last) continue; /* (a batch of new ids: every update) */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (key_at(j->ty, j->cur, mid) < x) lo = mid + 1;
            else hi = mid;
        }
        if (lo < j->n && key_at(j->ty, j->cur, lo) == x) j->hit[i] = lo;
    }
}

static int cmp_row(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Where the grouping key is one column (not a float) and the stored rows are
** strictly increasing on it (a history whose ids were appended in order),
** they are distinct (no repeat to drop), and the rows the updates can meet
** are found by a binary search per update: the resolution then costs one
** sequential pass over the stored keys and about the batch, where hashing
** every stored row (rf_cpu_unique, rf_cpu_semi_join) cost the whole table
** each transaction. *applies = 0 (nothing set) when the stored rows are not
** so; else *inv (ascending) and *ninv are the semi-join's. */
static rf_status ordered_meet(const kset *k, const rf_txn_pred *p, const rf_txn_ops *o, rf_cpu_pool *pool, int *applies,
                              int64_t **inv, int64_t *ninv)
{
    *applies = 0;
    if (k->ngcols != 1 || p->fe->types[k->gcols[0]] == RF_TYPE_FLOAT || p->cur.nrows < 1) return RF_OK;
    int32_t c = k->gcols[0];
    ordered_job j = {p->fe->types[c], p->cur.cols[c], p->cur.nrows, o->cols[c], NULL, NULL, 1 << 16, 0};
    /* rows an earlier transaction checked are not checked again: the pair
    ** across the boundary and the rows after it are */
    if (p->inc_col == c && p->inc_rows > 1 && p->inc_rows <= j.n) j.known = p->inc_rows - 1;
    j.unsorted = rf_calloc((size_t)(j.n / j.grain + 1), 1);
    if (!j.unsorted) return RF_ENOMEM;
    rf_cpu_parallel_for(pool, j.n - j.known, j.grain, check_increasing, &j);
    int increasing = 1;
    for (int64_t i = 0; i <= j.n / j.grain; i++) increasing &= !j.unsorted[i];
    free(j.unsorted);
    if (!increasing) return RF_OK;
    j.hit = rf_malloc((size_t)o->n * sizeof *j.hit + 1);
    int64_t *rows = rf_malloc((size_t)o->n * sizeof *rows + 1);
    if (!j.hit || !rows) {
        free(j.hit);
        free(rows);
        return RF_ENOMEM;
    }
    rf_cpu_parallel_for(pool, o->n, 1 << 14, find_keys, &j);
    int64_t n = 0;
    int ascending = 1;
    for (int64_t i = 0; i < o->n; i++)
        if (j.hit[i] >= 0) {
            ascending &= !n || j.hit[i] > rows[n - 1];
            rows[n++] = j.hit[i];
        }
    free(j.hit);
    if (!ascending) { /* several updates of one key, or keys out of order */
        qsort(rows, (size_t)n, sizeof *rows, cmp_row);
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++)
            if (!m || rows[i] != rows[m - 1]) rows[m++] = rows[i];
        n = m;
    }
    *inv = rows;
    *ninv = n;
    *applies = 1;
    return RF_OK;
}

rf_status rf_txn_kset_resolve(rf_txn_pred *p, rf_cpu_pool *pool, rf_txn_violation *v)
{
    const rf_fe_pred *f = p->fe;
    rf_txn_ops *o = p->ops; /* (an insert-only batch hands its columns to ins) */
    int threads = rf_cpu_pool_threads(pool);
    kset k;
    memset(&k, 0, sizeof k);
    k.f = f;
    keys_of(&k, f);
    v->op = -1;
    rf_status st = RF_OK;
    rf_cpu_kind kinds[RF_DB_MAX_COLS];
    for (int32_t c = 0; c < f->arity; c++) kinds[c] = rf_rt_cpu_kind(f->types[c]);
    rf_cpu_table cur = {p->cur.nrows, f->arity, NULL}, ops = {o->n, f->arity, NULL};
    cur.cols = rf_calloc((size_t)f->arity + 1, sizeof *cur.cols);
    ops.cols = rf_calloc((size_t)f->arity + 1, sizeof *ops.cols);
    if (!cur.cols || !ops.cols) st = RF_ENOMEM;
    for (int32_t c = 0; !st && c < f->arity; c++) {
        cur.cols[c] = (rf_cpu_col){kinds[c], p->cur.nrows ? p->cur.cols[c] : NULL};
        ops.cols[c] = (rf_cpu_col){kinds[c], o->cols[c]};
    }
    /* the database rows an update can meet: those of an update's key; by
    ** binary search where the stored rows are in key order, else by hash */
    int64_t *inv = NULL, ninv = 0;
    int ordered = 0;
    if (!st) st = ordered_meet(&k, p, o, pool, &ordered, &inv, &ninv);
    if (!st) {
        p->inc_col = ordered ? k.gcols[0] : 0;
        p->inc_rows = ordered ? p->cur.nrows : 0;
    }
    /* a database row repeated counts once (its first occurrence; rows in
    ** strictly increasing key order are distinct) */
    int64_t *uniq = NULL, nuniq = cur.nrows;
    uint8_t *first = NULL;
    if (!st && cur.nrows && !ordered) st = rf_cpu_unique(pool, &cur, &uniq, &nuniq);
    if (!st && nuniq < cur.nrows) {
        if (!(first = rf_calloc((size_t)cur.nrows, 1))) st = RF_ENOMEM;
        for (int64_t i = 0; !st && i < nuniq; i++) first[uniq[i]] = 1;
    }
    if (!st && cur.nrows && !ordered) st = rf_cpu_semi_join(pool, &cur, k.gcols, &ops, k.gcols, k.ngcols, &inv, &ninv);
    if (!st && first) {
        int64_t j = 0;
        for (int64_t i = 0; i < ninv; i++)
            if (first[inv[i]]) inv[j++] = inv[i];
        ninv = j;
    }
    k.ninv = ninv;
    k.nops = o->n;
    k.insert = o->insert;
    int64_t *perm = NULL;
    /* without database rows to meet, the updates are the table (borrowed) */
    int borrowed = !ninv;
    if (!st && borrowed) {
        k.all = ops;
        ops.cols = NULL;
    } else if (!st) {
        st = rf_cpu_table_alloc(f->arity, kinds, ninv + o->n, &k.all);
    }
    for (int32_t c = 0; !st && !borrowed && c < f->arity; c++) {
        int32_t w = rf_rt_type_width(f->types[c]);
        uint8_t *dst = k.all.cols[c].data;
        for (int64_t i = 0; i < ninv; i++) memcpy(dst + i * w, (const uint8_t *)p->cur.cols[c] + inv[i] * w, (size_t)w);
        memcpy(dst + ninv * w, o->cols[c], (size_t)(o->n * w));
    }
    int distinct = 0;
    if (!st) st = sorted_perm(&k, pool, !ninv, &perm, &distinct);
    k.perm = perm;
    k.gone = rf_calloc((size_t)ninv + 1, 1);
    k.first_ins = rf_calloc((size_t)o->n + 1, 1);
    k.viol = rf_calloc((size_t)threads, sizeof *k.viol);
    k.scratch = rf_calloc((size_t)threads, sizeof *k.scratch);
    k.nscratch = rf_calloc((size_t)threads, sizeof *k.nscratch);
    k.replaced = rf_calloc((size_t)threads, sizeof *k.replaced);
    if (!st && (!k.gone || !k.first_ins || !k.viol || !k.scratch || !k.nscratch || !k.replaced)) st = RF_ENOMEM;
    for (int i = 0; !st && i < threads; i++) k.viol[i].op = -1;
    if (!st && distinct && !ninv) {
        /* every update alone on its key, no stored row of it: an insert adds
        ** its row, a delete finds nothing (what resolve_run gives a run of
        ** one update), without walking the runs: a batch of new ids */
        memcpy(k.first_ins, k.insert, (size_t)o->n);
    } else if (!st) {
        rf_cpu_parallel_for(pool, ninv + o->n, 1 << 12, resolve_chunk, &k);
    }
    if (!st && k.oom) st = RF_ENOMEM;
    for (int i = 0; !st && i < threads; i++)
        if (k.viol[i].op >= 0 && (v->op < 0 || k.viol[i].op < v->op)) *v = k.viol[i];
    if (!st && v->op >= 0) st = RF_EUSER;
    /* the new state: the rows kept in their order, then the new rows in
    ** the order of their first insert. The stored rows an update met are
    ** inv's (distinct): when none goes and none is a repeat, the new state
    ** is every stored row then the new ones (appended), and nothing here
    ** walks the stored rows, so that a batch of new ids costs the batch,
    ** not the history it joins */
    int64_t *idx = NULL, nkept = 0, ndel = 0, nnew = 0;
    for (int64_t i = 0; !st && i < ninv; i++) ndel += k.gone[i] != 0;
    int appended = !ndel && !first; /* next is cur, then the new rows */
    int64_t nidx = (appended ? 0 : cur.nrows) + o->n;
    if (!st && !(idx = rf_malloc((size_t)(nidx + 1) * sizeof *idx))) st = RF_ENOMEM;
    uint8_t *gone_row = NULL;
    if (!st && !appended && ninv && !(gone_row = rf_calloc((size_t)cur.nrows, 1))) st = RF_ENOMEM;
    for (int64_t i = 0; !st && gone_row && i < ninv; i++) gone_row[inv[i]] = k.gone[i];
    if (!st && !appended)
        for (int64_t i = 0; i < cur.nrows; i++)
            if ((!first || first[i]) && !(gone_row && gone_row[i])) idx[nkept++] = i;
    for (int64_t i = 0; !st && i < o->n; i++)
        if (k.first_ins[i]) idx[nkept + nnew++] = cur.nrows + i;
    rf_rt_rel next, ins, del;
    memset(&next, 0, sizeof next);
    memset(&ins, 0, sizeof ins);
    memset(&del, 0, sizeof del);
    if (!st && !appended) st = gather_rel(pool, p, idx, nkept + nnew, &next);
    if (!st && nnew == o->n) { /* every update a new row, in order: ins is the updates' columns */
        ins.nrows = o->n;
        ins.ncols = f->arity;
        ins.types = f->types;
        if (!(ins.cols = rf_calloc((size_t)f->arity + 1, sizeof *ins.cols))) st = RF_ENOMEM;
        for (int32_t c = 0; !st && c < f->arity; c++) {
            ins.cols[c] = o->cols[c];
            o->cols[c] = NULL;
        }
    } else if (!st) {
        st = gather_rel(pool, p, idx + nkept, nnew, &ins);
    }
    /* appended: the new state is cur then ins, left so (p->tail): the commit
    ** appends ins to the stored table, and only a run that reads the whole
    ** new state copies the two into one (txn_exec.c) */
    if (!st) {
        int64_t j = 0;
        for (int64_t i = 0; gone_row && i < cur.nrows; i++)
            if (gone_row[i]) idx[j++] = i;
        st = gather_rel(pool, p, idx, j, &del);
    }
    if (!st) {
        rf_rt_rel_free(&p->next);
        rf_rt_rel_free(&p->ins);
        rf_rt_rel_free(&p->del);
        p->next = next;
        p->ins = ins;
        p->del = del;
        p->has_next = !appended;
        p->tail = appended;
        p->changed = ins.nrows > 0 || del.nrows > 0;
        p->replaced = 0;
        for (int i = 0; i < threads; i++) p->replaced += k.replaced[i];
        /* every database row kept, none a repeat: next is cur, then the inserted rows */
        if (ndel || first) p->prefix = 0;
    } else {
        rf_rt_rel_free(&next);
        rf_rt_rel_free(&ins);
        rf_rt_rel_free(&del);
    }
    for (int i = 0; k.scratch && i < threads; i++) free(k.scratch[i]);
    free(k.scratch);
    free(k.nscratch);
    free(k.replaced);
    free(k.viol);
    free(k.gone);
    free(k.first_ins);
    free(gone_row);
    free(idx);
    free(perm);
    if (borrowed) free(k.all.cols);
    else rf_cpu_table_free(&k.all);
    free(inv);
    free(uniq);
    free(first);
    free(cur.cols);
    free(ops.cols);
    return st;
}
