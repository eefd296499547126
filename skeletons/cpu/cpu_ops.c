/*
** skeletons/cpu/cpu_ops.c: the relational operators built on the hash table.
**
** Owns: unique, group-by, inner / semi / anti equi-joins, a join's right
** side prepared once for many probes (rf_cpu_join_side), a join's pairs
** given in parts of bounded size (rf_cpu_join_parts), difference and
** union. Each one encodes its key columns (over the union of both sides'
** ranges for binary operators, so that equal keys encode equally), builds
** the shared hash table on the smaller side and probes with the other.
*/
#include "cpu_internal.h"

/* Key columns of one or two tables, encoded alike. */
typedef struct keys {
    int32_t nk;
    rf_cpu_kind *kinds;
    const void **ldata, **rdata;
    uint64_t *lo, *hi;
    cpu_enc e;
} keys;

static void keys_free(keys *k)
{
    free(k->kinds);
    free(k->ldata);
    free(k->rdata);
    free(k->lo);
    free(k->hi);
    cpu_enc_free(&k->e);
}

/* Whose values the encoding's ranges cover: both sides, or only the side a
** hash table is built on (the other side is then probed with range checks:
** a value outside the built side's range cannot match, and scanning a big
** probe side for its range costs a pass over it). */
enum { RANGE_BOTH, RANGE_LEFT, RANGE_RIGHT };

/* right may be NULL (one table). */
static rf_status keys_init(rf_cpu_pool *pool, keys *k, const rf_cpu_table *left, const int32_t *lkeys,
                           const rf_cpu_table *right, const int32_t *rkeys, int32_t nk, int range_of)
{
    memset(k, 0, sizeof *k);
    if (nk < 0) return RF_EINTERNAL;
    int64_t mp = CPU_KEY_PARTS(nk);
    k->kinds = cpu_alloc(mp, sizeof *k->kinds);
    rf_cpu_kind *rk = cpu_alloc(mp, sizeof *rk);
    k->ldata = cpu_alloc(mp, sizeof *k->ldata);
    k->rdata = cpu_alloc(mp, sizeof *k->rdata);
    k->lo = cpu_alloc(mp, 8);
    k->hi = cpu_alloc(mp, 8);
    uint64_t *lo2 = cpu_alloc(mp, 8), *hi2 = cpu_alloc(mp, 8);
    rf_status st = RF_ENOMEM;
    if (!k->kinds || !rk || !k->ldata || !k->rdata || !k->lo || !k->hi || !lo2 || !hi2) goto out;
    /* from here on nk counts key parts (a 128-bit column is two) */
    if ((st = cpu_table_keys(left, lkeys, nk, NULL, k->kinds, k->ldata, NULL, &k->nk))) goto out;
    if (right) {
        int32_t rnp;
        if ((st = cpu_table_keys(right, rkeys, nk, NULL, rk, k->rdata, NULL, &rnp))) goto out;
        for (int32_t i = 0; i < k->nk; i++)
            if (rnp != k->nk || rk[i] != k->kinds[i]) {
                st = RF_EINTERNAL;
                goto out;
            }
    }
    nk = k->nk;
    int64_t ln = range_of == RANGE_RIGHT ? 0 : left->nrows;
    int64_t rn = right && range_of != RANGE_LEFT ? right->nrows : 0;
    if (ln > 0) cpu_ranges(pool, nk, k->kinds, k->ldata, ln, k->lo, k->hi);
    if (rn > 0) cpu_ranges(pool, nk, k->kinds, k->rdata, rn, lo2, hi2);
    for (int32_t i = 0; i < nk; i++) {
        if (ln <= 0) {
            k->lo[i] = rn > 0 ? lo2[i] : 0;
            k->hi[i] = rn > 0 ? hi2[i] : 0;
        } else if (rn > 0) {
            if (lo2[i] < k->lo[i]) k->lo[i] = lo2[i];
            if (hi2[i] > k->hi[i]) k->hi[i] = hi2[i];
        }
    }
    st = cpu_enc_init(&k->e, nk, k->kinds, NULL, k->lo, k->hi);
out:
    free(rk);
    free(lo2);
    free(hi2);
    if (st) keys_free(k);
    return st;
}

/* Validates key columns without reading the data. */
static rf_status keys_check(const rf_cpu_table *left, const int32_t *lkeys, const rf_cpu_table *right,
                            const int32_t *rkeys, int32_t nk)
{
    if (!left || !right || left->nrows < 0 || right->nrows < 0 || nk < 0) return RF_EINTERNAL;
    int64_t mp = CPU_KEY_PARTS(nk);
    rf_cpu_kind *a = cpu_alloc(2 * mp, sizeof *a);
    const void **d = cpu_alloc(mp, sizeof *d);
    int32_t lp = 0, rp = 0;
    rf_status st = RF_ENOMEM;
    if (a && d && !(st = cpu_table_keys(left, lkeys, nk, NULL, a, d, NULL, &lp)) &&
        !(st = cpu_table_keys(right, rkeys, nk, NULL, a + mp, d, NULL, &rp))) {
        if (lp != rp) st = RF_EINTERNAL;
        for (int32_t i = 0; i < lp && !st; i++)
            if (a[i] != a[mp + i]) st = RF_EINTERNAL;
    }
    free(a);
    free(d);
    return st;
}

static rf_status all_cols(int32_t ncols, int32_t **cols)
{
    *cols = cpu_alloc(ncols, sizeof(int32_t));
    if (!*cols) return RF_ENOMEM;
    for (int32_t i = 0; i < ncols; i++) (*cols)[i] = i;
    return RF_OK;
}

static rf_status empty_list(int64_t **out, int64_t *n)
{
    *n = 0;
    *out = cpu_alloc(0, sizeof(int64_t));
    return *out ? RF_OK : RF_ENOMEM;
}

static void iota_chunk(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    int64_t *p = vp;
    for (int64_t i = b; i < e; i++) p[i] = i;
}

static rf_status iota_list(rf_cpu_pool *pool, int64_t n, int64_t **out, int64_t *m)
{
    *m = 0;
    *out = cpu_alloc(n, sizeof(int64_t));
    if (!*out) return RF_ENOMEM;
    rf_cpu_parallel_for(pool, n, 0, iota_chunk, *out);
    *m = n;
    return RF_OK;
}

/* ---- unique, group -------------------------------------------------- */

rf_status rf_cpu_unique(rf_cpu_pool *pool, const rf_cpu_table *t, int64_t **keep, int64_t *nkeep)
{
    *keep = NULL;
    *nkeep = 0;
    if (!t || t->nrows < 0 || t->ncols < 0) return RF_EINTERNAL;
    if (t->nrows == 0) return empty_list(keep, nkeep);
    if (t->ncols == 0) return iota_list(NULL, 1, keep, nkeep); /* every row is the empty tuple */
    int32_t *cols;
    if (all_cols(t->ncols, &cols)) return RF_ENOMEM;
    rf_status st;
    {
        /* rows in order of some column: no hash table */
        rf_cpu_kind *kinds = cpu_alloc(CPU_KEY_PARTS(t->ncols), sizeof *kinds);
        const void **data = cpu_alloc(CPU_KEY_PARTS(t->ncols), sizeof *data);
        int applied = 0;
        int32_t np = 0;
        st = kinds && data ? cpu_table_keys(t, cols, t->ncols, NULL, kinds, data, NULL, &np) : RF_ENOMEM;
        if (!st) st = cpu_runs_unique(pool, np, kinds, data, t->nrows, keep, nkeep, &applied);
        free(kinds);
        free(data);
        if (st || applied) {
            free(cols);
            return st;
        }
    }
    keys k;
    st = keys_init(pool, &k, t, cols, NULL, NULL, t->ncols, RANGE_BOTH);
    free(cols);
    if (st) return st;
    if (cpu_dense_fits(&k.e, t->nrows, 0)) {
        st = cpu_dense_unique(pool, &k.e, k.ldata, t->nrows, keep, nkeep);
    } else {
        cpu_ht ht;
        st = cpu_ht_build(pool, &ht, &k.e, k.ldata, t->nrows, 0, NULL, keep, nkeep);
        cpu_ht_free(&ht);
    }
    keys_free(&k);
    return st;
}

void rf_cpu_groups_free(rf_cpu_groups *g)
{
    if (!g) return;
    free(g->group_of_row);
    free(g->first_row);
    free(g->order);
    free(g->offsets);
    memset(g, 0, sizeof *g);
}

static rf_status group_impl(rf_cpu_pool *pool, const rf_cpu_table *t, const int32_t *keycols, int32_t nkeys,
                            int lazy, rf_cpu_groups *g)
{
    memset(g, 0, sizeof *g);
    if (!t || t->nrows < 0 || nkeys < 0) return RF_EINTERNAL;
    int64_t n = t->nrows;
    g->nrows = n;
    if (n == 0 || nkeys == 0) {
        g->ngroups = n > 0;
        g->group_of_row = cpu_zalloc(n, sizeof(int64_t));
        g->first_row = cpu_zalloc(1, sizeof(int64_t));
        if (!g->group_of_row || !g->first_row) {
            rf_cpu_groups_free(g);
            return RF_ENOMEM;
        }
        return RF_OK;
    }
    rf_status st;
    {
        /* rows in order of some key column: no hash table */
        rf_cpu_kind *kinds = cpu_alloc(CPU_KEY_PARTS(nkeys), sizeof *kinds);
        const void **data = cpu_alloc(CPU_KEY_PARTS(nkeys), sizeof *data);
        int applied = 0, contiguous = 0;
        int32_t np = 0;
        st = kinds && data ? cpu_table_keys(t, keycols, nkeys, NULL, kinds, data, NULL, &np) : RF_ENOMEM;
        if (!st)
            st = cpu_runs_group(pool, np, kinds, data, n, lazy, &g->group_of_row, &g->first_row, &g->ngroups,
                                &contiguous, &applied);
        free(kinds);
        free(data);
        if (!st && applied && contiguous) {
            /* group g is rows first_row[g] .. first_row[g + 1] - 1 */
            g->offsets = cpu_alloc(g->ngroups + 1, sizeof(int64_t));
            if (!g->offsets) {
                st = RF_ENOMEM;
            } else {
                memcpy(g->offsets, g->first_row, (size_t)g->ngroups * sizeof(int64_t));
                g->offsets[g->ngroups] = n;
                g->contiguous = 1;
            }
        }
        if (st) {
            rf_cpu_groups_free(g);
            g->nrows = 0;
            return st;
        }
        if (applied) return RF_OK;
    }
    keys k;
    st = keys_init(pool, &k, t, keycols, NULL, NULL, nkeys, RANGE_BOTH);
    if (st) return st;
    if (cpu_dense_group_fits(&k.e, n)) {
        st = cpu_dense_group(pool, &k.e, k.ldata, n, &g->group_of_row, &g->first_row, &g->ngroups);
    } else {
        cpu_ht ht;
        st = cpu_ht_build(pool, &ht, &k.e, k.ldata, n, 1, &g->group_of_row, &g->first_row, &g->ngroups);
        cpu_ht_free(&ht);
    }
    keys_free(&k);
    if (st) rf_cpu_groups_free(g), g->nrows = 0;
    return st;
}

rf_status rf_cpu_group(rf_cpu_pool *pool, const rf_cpu_table *t, const int32_t *keycols, int32_t nkeys,
                       rf_cpu_groups *g)
{
    return group_impl(pool, t, keycols, nkeys, 0, g);
}

rf_status rf_cpu_group_for_agg(rf_cpu_pool *pool, const rf_cpu_table *t, const int32_t *keycols, int32_t nkeys,
                               rf_cpu_groups *g)
{
    return group_impl(pool, t, keycols, nkeys, 1, g);
}

rf_status rf_cpu_groups_order(rf_cpu_pool *pool, rf_cpu_groups *g)
{
    if (g->order && g->offsets) return RF_OK;
    if (g->contiguous && g->offsets) {
        if (!(g->order = cpu_alloc(g->nrows, sizeof(int64_t)))) return RF_ENOMEM;
        rf_cpu_parallel_for(pool, g->nrows, 0, iota_chunk, g->order);
        return RF_OK;
    }
    free(g->order);
    free(g->offsets);
    g->order = g->offsets = NULL;
    int64_t m;
    return cpu_csr(pool, g->group_of_row, g->nrows, g->ngroups, &g->order, &g->offsets, &m);
}

/* ---- inner join ----------------------------------------------------- */

/* What both join outputs are made from: the left rows with their groups,
** and the right rows listed by group. A cross product is one group holding
** every right row. Left rows come chunk by chunk (grain rows each): either
** every row of the chunk with its group in lg (-1: none), or, when the
** right side was built and the left probed, only the rows that matched
** (hit lists: most rows of a big probe side usually miss, and a list of
** hits is all that later passes then read). */
typedef struct join_plan {
    int64_t *lg;                      /* [ln] group of each left row, -1: none (no hit lists) */
    int64_t *hit_row, *hit_gid, *nhit; /* hit lists: chunk c's from index c * grain, nhit[c] of them */
    int64_t *order, *offsets;         /* right rows by group; NULL: group g is right row g alone */
    int64_t grain, nch;
    int64_t *counts; /* output rows before each chunk of left rows */
    int64_t total;
} join_plan;

static void plan_free(join_plan *jp)
{
    free(jp->lg);
    free(jp->hit_row);
    free(jp->hit_gid);
    free(jp->nhit);
    free(jp->order);
    free(jp->offsets);
    free(jp->counts);
    memset(jp, 0, sizeof *jp);
}

/* Runs BODY for each output pair (L, R) of the left rows [b, e), a chunk,
** in output order: by left row, then by the right row's place in its
** group. */
#define JP_FOR_PAIRS(jp, b, e, L, R, BODY)                                                                    \
    do {                                                                                                       \
        const join_plan *jp_ = (jp);                                                                           \
        int64_t nh_ = jp_->hit_row ? jp_->nhit[(b) / jp_->grain] : (e) - (b);                                 \
        for (int64_t h_ = 0; h_ < nh_; h_++) {                                                                 \
            int64_t L = jp_->hit_row ? jp_->hit_row[(b) + h_] : (b) + h_;                                     \
            int64_t g_ = jp_->hit_row ? jp_->hit_gid[(b) + h_] : jp_->lg[L];                                  \
            if (g_ < 0) continue;                                                                              \
            if (!jp_->offsets) {                                                                               \
                int64_t R = g_;                                                                                \
                BODY;                                                                                          \
            } else {                                                                                           \
                for (int64_t j_ = jp_->offsets[g_]; j_ < jp_->offsets[g_ + 1]; j_++) {                        \
                    int64_t R = jp_->order[j_];                                                                \
                    BODY;                                                                                      \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)

static void emit_count(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    join_plan *c = vp;
    int64_t k = 0;
    JP_FOR_PAIRS(c, b, e, l, r, ((void)l, (void)r, k++));
    c->counts[b / c->grain] = k;
}

static void zero_chunk(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    memset((int64_t *)vp + b, 0, (size_t)(e - b) * sizeof(int64_t));
}

typedef struct remap_ctx {
    int64_t *order;
    const int64_t *rows;
} remap_ctx;

/* order[i] = rows[order[i]]: hit indices to right rows. */
static void remap_chunk(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    remap_ctx *c = vp;
    for (int64_t i = b; i < e; i++) c->order[i] = c->rows[c->order[i]];
}

/* grain: rows of left per chunk (0: the usual, cpu_grain's). */
static rf_status join_prepare(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                              const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys, int64_t grain,
                              join_plan *jp)
{
    memset(jp, 0, sizeof *jp);
    rf_status st = keys_check(left, lkeys, right, rkeys, nkeys);
    if (st) return st;
    int64_t ln = left->nrows, rn = right->nrows, G = 0, m;
    keys k = {0};
    cpu_ht ht = {0};
    cpu_dense dx = {0};
    int64_t *bg = NULL, *F = NULL;
    jp->grain = grain > 0 ? grain : cpu_grain(ln, 16384);
    jp->nch = (ln + jp->grain - 1) / jp->grain;
    st = RF_ENOMEM;
    if (ln == 0 || rn == 0 || nkeys == 0) {
        /* Cross product (or empty): one group with all right rows. */
        jp->lg = cpu_alloc(ln, sizeof(int64_t));
        jp->offsets = cpu_alloc(2, sizeof(int64_t));
        if (!jp->lg || !jp->offsets || iota_list(pool, rn, &jp->order, &m)) goto out;
        rf_cpu_parallel_for(pool, ln, 0, zero_chunk, jp->lg);
        jp->offsets[0] = 0;
        jp->offsets[1] = rn;
        G = 1;
    } else if (rn <= ln) {
        /* Build on the right, probe the left into hit lists. */
        if ((st = keys_init(pool, &k, left, lkeys, right, rkeys, nkeys, RANGE_RIGHT))) goto out;
        int dense = cpu_dense_fits(&k.e, rn, ln);
        if (dense) st = cpu_dense_build(pool, &dx, &k.e, k.rdata, rn, &bg, &F, &G);
        else st = cpu_ht_build(pool, &ht, &k.e, k.rdata, rn, 1, &bg, &F, &G);
        if (st) goto out;
        st = RF_ENOMEM;
        jp->hit_row = cpu_alloc(ln, sizeof(int64_t));
        jp->hit_gid = cpu_alloc(ln, sizeof(int64_t));
        jp->nhit = cpu_alloc(jp->nch, sizeof(int64_t));
        if (!jp->hit_row || !jp->hit_gid || !jp->nhit) goto out;
        if (dense)
            cpu_dense_probe_hits(pool, &dx, &k.e, k.ldata, ln, jp->grain, jp->hit_row, jp->hit_gid, jp->nhit);
        else if ((st = cpu_ht_probe_hits(pool, &ht, &k.e, k.ldata, ln, jp->grain, jp->hit_row, jp->hit_gid,
                                         jp->nhit)))
            goto out;
        cpu_ht_free(&ht);
        cpu_dense_free(&dx);
        /* distinct right keys: groups are numbered by first occurrence, so
        ** group g is right row g and needs no list */
        if (G < rn && (st = cpu_csr(pool, bg, rn, G, &jp->order, &jp->offsets, &m))) goto out;
        st = RF_ENOMEM;
    } else {
        /* Build on the left; the probed right rows are listed by group. */
        if ((st = keys_init(pool, &k, left, lkeys, right, rkeys, nkeys, RANGE_LEFT))) goto out;
        int dense = cpu_dense_fits(&k.e, ln, rn);
        if (dense) st = cpu_dense_build(pool, &dx, &k.e, k.ldata, ln, &jp->lg, &F, &G);
        else st = cpu_ht_build(pool, &ht, &k.e, k.ldata, ln, 1, &jp->lg, &F, &G);
        if (st) goto out;
        /* The right side is probed into lists of hits (most of a big side
        ** usually misses), and only the hits are listed by group. */
        st = RF_ENOMEM;
        int64_t rgrain = cpu_grain(rn, 16384), rnch = (rn + rgrain - 1) / rgrain, H = 0;
        int64_t *hrow = cpu_alloc(rn, sizeof(int64_t)), *nh = cpu_alloc(rnch, sizeof(int64_t));
        bg = cpu_alloc(rn, sizeof(int64_t));
        if (!hrow || !nh || !bg) {
            free(hrow);
            free(nh);
            goto out;
        }
        if (dense) cpu_dense_probe_hits(pool, &dx, &k.e, k.rdata, rn, rgrain, hrow, bg, nh);
        else st = cpu_ht_probe_hits(pool, &ht, &k.e, k.rdata, rn, rgrain, hrow, bg, nh);
        cpu_ht_free(&ht);
        cpu_dense_free(&dx);
        if (!dense && st) {
            free(hrow);
            free(nh);
            goto out;
        }
        /* close up the chunks' lists (each moves down, in chunk order) */
        for (int64_t ch = 0; ch < rnch; ch++) {
            if (H != ch * rgrain) {
                memmove(hrow + H, hrow + ch * rgrain, (size_t)nh[ch] * sizeof(int64_t));
                memmove(bg + H, bg + ch * rgrain, (size_t)nh[ch] * sizeof(int64_t));
            }
            H += nh[ch];
        }
        free(nh);
        st = cpu_csr(pool, bg, H, G, &jp->order, &jp->offsets, &m);
        if (!st) {
            remap_ctx rc = {jp->order, hrow};
            rf_cpu_parallel_for(pool, m, cpu_grain(m, 16384), remap_chunk, &rc);
        }
        free(hrow);
        if (st) goto out;
        st = RF_ENOMEM;
    }
    if (!(jp->counts = cpu_alloc(jp->nch, sizeof(int64_t)))) goto out;
    rf_cpu_parallel_for(pool, ln, jp->grain, emit_count, jp);
    int64_t tot = 0;
    for (int64_t i = 0; i < jp->nch; i++) {
        int64_t x = jp->counts[i];
        if (x > INT64_MAX - tot) goto out; /* cannot be allocated anyway */
        jp->counts[i] = tot;
        tot += x;
    }
    jp->total = tot;
    st = RF_OK;
out:
    cpu_ht_free(&ht);
    cpu_dense_free(&dx);
    free(bg);
    free(F);
    keys_free(&k);
    if (st) plan_free(jp);
    return st;
}

typedef struct emit_ctx {
    const join_plan *jp;
    int64_t *lidx, *ridx;
    /* projected output */
    int32_t ncols;
    const rf_cpu_col *src; /* [ncols] source column of each output column */
    const uint8_t *from_right;
    rf_cpu_col *dst;
    /* a part of the pairs (rf_cpu_join_parts): the chunks from left row
    ** `from` on, written from pair `first` on at index 0 */
    int64_t from, first;
} emit_ctx;

static void emit_pairs(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    emit_ctx *c = vp;
    const join_plan *jp = c->jp;
    b += c->from;
    e += c->from;
    int64_t k = jp->counts[b / jp->grain] - c->first;
    JP_FOR_PAIRS(jp, b, e, l, r, (c->lidx[k] = l, c->ridx[k++] = r));
}

enum { EMIT_BUF = 1024 };

/* Pairs go through a small buffer, then each output column is gathered from
** it, so the index pairs never reach memory. */
static void emit_flush(const emit_ctx *c, const int64_t *li, const int64_t *ri, int64_t n, int64_t at)
{
    for (int32_t col = 0; col < c->ncols; col++) {
        const int64_t *idx = c->from_right[col] ? ri : li;
        const void *s = c->src[col].data;
        void *d = c->dst[col].data;
        switch (rf_cpu_kind_size(c->src[col].kind)) {
        case 16:
            for (int64_t i = 0; i < n; i++) ((rf_dec128 *)d)[at + i] = ((const rf_dec128 *)s)[idx[i]];
            break;
        case 8:
            for (int64_t i = 0; i < n; i++) ((uint64_t *)d)[at + i] = ((const uint64_t *)s)[idx[i]];
            break;
        case 4:
            for (int64_t i = 0; i < n; i++) ((uint32_t *)d)[at + i] = ((const uint32_t *)s)[idx[i]];
            break;
        default:
            for (int64_t i = 0; i < n; i++) ((uint8_t *)d)[at + i] = ((const uint8_t *)s)[idx[i]];
            break;
        }
    }
}

static void emit_cols(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    emit_ctx *c = vp;
    const join_plan *jp = c->jp;
    int64_t li[EMIT_BUF], ri[EMIT_BUF], n = 0;
    int64_t k = jp->counts[b / jp->grain];
    JP_FOR_PAIRS(jp, b, e, l, r, {
        li[n] = l;
        ri[n++] = r;
        if (n == EMIT_BUF) {
            emit_flush(c, li, ri, n, k);
            k += n;
            n = 0;
        }
    });
    emit_flush(c, li, ri, n, k);
}

rf_status rf_cpu_hash_join(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                           const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys, int64_t **lidx,
                           int64_t **ridx, int64_t *n)
{
    *lidx = *ridx = NULL;
    *n = 0;
    join_plan jp;
    rf_status st = join_prepare(pool, left, lkeys, right, rkeys, nkeys, 0, &jp);
    if (st) return st;
    emit_ctx c = {&jp, cpu_alloc(jp.total, 8), cpu_alloc(jp.total, 8), 0, NULL, NULL, NULL, 0, 0};
    if (!c.lidx || !c.ridx) {
        free(c.lidx);
        free(c.ridx);
        plan_free(&jp);
        return RF_ENOMEM;
    }
    rf_cpu_parallel_for(pool, left->nrows, jp.grain, emit_pairs, &c);
    *lidx = c.lidx;
    *ridx = c.ridx;
    *n = jp.total;
    plan_free(&jp);
    return RF_OK;
}

/* ---- a prepared right side ------------------------------------------ */

struct rf_cpu_join_side {
    int32_t nkeys;
    int32_t *rkeys;
    int64_t rn, G;
    keys k; /* the right side's key parts, encoded over its own ranges */
    int dense;
    cpu_ht ht;
    cpu_dense dx;
    int64_t *order, *offsets; /* right rows by group; NULL: group g is right row g */
    int64_t most;             /* the most right rows of one group */
};

void rf_cpu_join_side_free(rf_cpu_join_side *s)
{
    if (!s) return;
    free(s->rkeys);
    keys_free(&s->k);
    cpu_ht_free(&s->ht);
    cpu_dense_free(&s->dx);
    free(s->order);
    free(s->offsets);
    free(s);
}

int64_t rf_cpu_join_side_most(const rf_cpu_join_side *s) { return s->most; }

int rf_cpu_join_side_keys(const rf_cpu_join_side *s, const int32_t *rkeys, int32_t nkeys)
{
    if (!s || s->nkeys != nkeys) return 0;
    for (int32_t i = 0; i < nkeys; i++)
        if (s->rkeys[i] != rkeys[i]) return 0;
    return 1;
}

rf_status rf_cpu_join_side_new(rf_cpu_pool *pool, const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys,
                               rf_cpu_join_side **out)
{
    *out = NULL;
    if (!right || right->nrows < 1 || nkeys < 1) return RF_EINTERNAL;
    rf_cpu_join_side *s = cpu_zalloc(1, sizeof *s);
    if (!s) return RF_ENOMEM;
    int64_t rn = right->nrows, *bg = NULL, *F = NULL, m;
    rf_status st = RF_ENOMEM;
    s->nkeys = nkeys;
    s->rn = rn;
    if (!(s->rkeys = cpu_alloc(nkeys, sizeof *s->rkeys))) goto out;
    memcpy(s->rkeys, rkeys, (size_t)nkeys * sizeof *rkeys);
    /* the right side as the one table: its ranges alone (left rows are probed with range checks) */
    if ((st = keys_init(pool, &s->k, right, rkeys, NULL, NULL, nkeys, RANGE_BOTH))) goto out;
    s->dense = cpu_dense_fits(&s->k.e, rn, 1);
    if (s->dense) st = cpu_dense_build(pool, &s->dx, &s->k.e, s->k.ldata, rn, &bg, &F, &s->G);
    else st = cpu_ht_build(pool, &s->ht, &s->k.e, s->k.ldata, rn, 1, &bg, &F, &s->G);
    if (st) goto out;
    if (s->G < rn) st = cpu_csr(pool, bg, rn, s->G, &s->order, &s->offsets, &m);
    s->most = 1;
    for (int64_t g = 0; !st && s->offsets && g < s->G; g++)
        if (s->offsets[g + 1] - s->offsets[g] > s->most) s->most = s->offsets[g + 1] - s->offsets[g];
out:
    free(bg);
    free(F);
    if (st) rf_cpu_join_side_free(s);
    else *out = s;
    return st;
}

/* The plan of a join of left with the right side s was prepared from: the
** left rows probed into hit lists, s's lists of right rows by group borrowed
** (side_plan_free leaves them to s). grain: as join_prepare's. */
static rf_status side_prepare(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                              const rf_cpu_table *right, const rf_cpu_join_side *s, int64_t grain, join_plan *jp)
{
    memset(jp, 0, sizeof *jp);
    if (!s || !right || right->nrows != s->rn) return RF_EINTERNAL;
    rf_status st = keys_check(left, lkeys, right, s->rkeys, s->nkeys);
    if (st) return st;
    int64_t ln = left->nrows, mp = CPU_KEY_PARTS(s->nkeys);
    jp->grain = grain > 0 ? grain : cpu_grain(ln, 16384);
    jp->nch = (ln + jp->grain - 1) / jp->grain;
    rf_cpu_kind *kinds = cpu_alloc(mp, sizeof *kinds);
    const void **ldata = cpu_alloc(mp, sizeof *ldata);
    int32_t np = 0;
    st = RF_ENOMEM;
    if (!kinds || !ldata) goto out;
    if ((st = cpu_table_keys(left, lkeys, s->nkeys, NULL, kinds, ldata, NULL, &np))) goto out;
    st = RF_ENOMEM;
    jp->hit_row = cpu_alloc(ln, sizeof(int64_t));
    jp->hit_gid = cpu_alloc(ln, sizeof(int64_t));
    jp->nhit = cpu_alloc(jp->nch, sizeof(int64_t));
    jp->counts = cpu_alloc(jp->nch, sizeof(int64_t));
    if (!jp->hit_row || !jp->hit_gid || !jp->nhit || !jp->counts) goto out;
    if (s->dense)
        cpu_dense_probe_hits(pool, &s->dx, &s->k.e, ldata, ln, jp->grain, jp->hit_row, jp->hit_gid, jp->nhit);
    else if ((st = cpu_ht_probe_hits(pool, &s->ht, &s->k.e, ldata, ln, jp->grain, jp->hit_row, jp->hit_gid,
                                     jp->nhit)))
        goto out;
    jp->order = s->order;
    jp->offsets = s->offsets;
    rf_cpu_parallel_for(pool, ln, jp->grain, emit_count, jp);
    int64_t tot = 0;
    st = RF_ENOMEM;
    for (int64_t i = 0; i < jp->nch; i++) {
        int64_t x = jp->counts[i];
        if (x > INT64_MAX - tot) goto out;
        jp->counts[i] = tot;
        tot += x;
    }
    jp->total = tot;
    st = RF_OK;
out:
    free(kinds);
    free(ldata);
    if (st) {
        jp->order = jp->offsets = NULL;
        plan_free(jp);
    }
    return st;
}

/* Frees a plan from side_prepare (its right rows by group are the side's). */
static void side_plan_free(join_plan *jp)
{
    jp->order = jp->offsets = NULL;
    plan_free(jp);
}

rf_status rf_cpu_hash_join_side(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                                const rf_cpu_table *right, const rf_cpu_join_side *s, int64_t **lidx,
                                int64_t **ridx, int64_t *n)
{
    *lidx = *ridx = NULL;
    *n = 0;
    join_plan jp;
    rf_status st = side_prepare(pool, left, lkeys, right, s, 0, &jp);
    if (st) return st;
    emit_ctx c = {&jp, cpu_alloc(jp.total, 8), cpu_alloc(jp.total, 8), 0, NULL, NULL, NULL, 0, 0};
    if (!c.lidx || !c.ridx) {
        free(c.lidx);
        free(c.ridx);
        side_plan_free(&jp);
        return RF_ENOMEM;
    }
    rf_cpu_parallel_for(pool, left->nrows, jp.grain, emit_pairs, &c);
    *lidx = c.lidx;
    *ridx = c.ridx;
    *n = jp.total;
    side_plan_free(&jp);
    return RF_OK;
}

/* ---- a join's pairs in parts ------------------------------------------- */

struct rf_cpu_join_parts {
    join_plan jp;
    int side;       /* the plan borrows a prepared side's lists */
    int inline_;    /* a small left side: every step on the caller's thread */
    int64_t ln;
    int64_t next;   /* the next chunk of left rows to give */
    /* a chunk with more pairs than a part may hold is given in pieces, on
    ** the caller's thread: of chunk `next`, `given` pairs so far, the next
    ** from its hit (or left row) at_h, that row's pairs from at_j on */
    int64_t given, at_h, at_j;
};

/* Chunks of ln / 4096 left rows, at least 1024 (a part holds whole chunks,
** or pieces of one that alone has more pairs than the bound): fine enough that a part can be cut near its bound, coarse enough for the
** threads to share a part's chunks. A left side of at most 16384 rows runs
** on the caller's thread, as rf_cpu_hash_join runs it (one chunk of its
** grain): waking the threads for its pieces cost more than the join (a long
** linear recursion's rounds of a few thousand rows: 3x slower). */
enum { PARTS_MIN_GRAIN = 1024, PARTS_CHUNKS = 4096, PARTS_INLINE = 16384 };

rf_status rf_cpu_join_parts_new(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                                const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys,
                                const rf_cpu_join_side *s, rf_cpu_join_parts **out)
{
    *out = NULL;
    rf_cpu_join_parts *p = cpu_zalloc(1, sizeof *p);
    if (!p) return RF_ENOMEM;
    int64_t ln = left->nrows, grain = (ln + PARTS_CHUNKS - 1) / PARTS_CHUNKS;
    if (grain < PARTS_MIN_GRAIN) grain = PARTS_MIN_GRAIN;
    if (ln <= PARTS_INLINE) pool = NULL;
    rf_status st = s ? side_prepare(pool, left, lkeys, right, s, grain, &p->jp)
                     : join_prepare(pool, left, lkeys, right, rkeys, nkeys, grain, &p->jp);
    if (st) {
        free(p);
        return st;
    }
    p->side = s != NULL;
    p->inline_ = ln <= PARTS_INLINE;
    p->ln = ln;
    *out = p;
    return RF_OK;
}

int64_t rf_cpu_join_parts_total(const rf_cpu_join_parts *p) { return p->jp.total; }

/* The next piece, of at most max_pairs pairs, of chunk p->next, which has
** csize pairs: the left rows' pairs in JP_FOR_PAIRS's order, resumed where
** the last piece ended (a chunk of left rows that each match many right rows
** can hold far more pairs than a part may). */
static rf_status parts_cut(rf_cpu_join_parts *p, int64_t csize, int64_t max_pairs, int64_t **lidx, int64_t **ridx,
                           int64_t *n)
{
    const join_plan *jp = &p->jp;
    int64_t m = csize - p->given < max_pairs ? csize - p->given : max_pairs;
    int64_t *li = cpu_alloc(m, 8), *ri = cpu_alloc(m, 8);
    if (!li || !ri) {
        free(li);
        free(ri);
        return RF_ENOMEM;
    }
    int64_t b = p->next * jp->grain, e = b + jp->grain < p->ln ? b + jp->grain : p->ln;
    int64_t nh = jp->hit_row ? jp->nhit[p->next] : e - b, k = 0;
    while (k < m && p->at_h < nh) {
        int64_t L = jp->hit_row ? jp->hit_row[b + p->at_h] : b + p->at_h;
        int64_t g = jp->hit_row ? jp->hit_gid[b + p->at_h] : jp->lg[L];
        int64_t lo = g < 0 ? 0 : jp->offsets ? jp->offsets[g] : 0;
        int64_t hi = g < 0 ? 0 : jp->offsets ? jp->offsets[g + 1] : 1;
        for (int64_t j = lo + p->at_j; j < hi && k < m; j++, p->at_j++) {
            li[k] = L;
            ri[k++] = jp->offsets ? jp->order[j] : g;
        }
        if (lo + p->at_j >= hi) { /* this row's pairs are all given */
            p->at_h++;
            p->at_j = 0;
        }
    }
    p->given += k;
    if (p->given >= csize) { /* the chunk is done */
        p->next++;
        p->given = p->at_h = p->at_j = 0;
    }
    *lidx = li;
    *ridx = ri;
    *n = k;
    return RF_OK;
}

rf_status rf_cpu_join_parts_next(rf_cpu_pool *pool, rf_cpu_join_parts *p, int64_t max_pairs, int64_t **lidx,
                                 int64_t **ridx, int64_t *n)
{
    *lidx = *ridx = NULL;
    *n = 0;
    const join_plan *jp = &p->jp;
    if (max_pairs < 1) max_pairs = 1;
#define PARTS_AT(c) ((c) < jp->nch ? jp->counts[c] : jp->total)
    /* chunks without pairs are passed over: given alone (a part of none
    ** before a chunk too big to join it), their *n = 0 would read as the
    ** end, and the pairs of the chunks after them were lost (a same-
    ** generation round whose first 1024 left rows matched nothing made no
    ** rows at all: a wrong answer, its fixpoint reached a round early) */
    while (p->next < jp->nch && p->given == 0 && PARTS_AT(p->next + 1) == PARTS_AT(p->next)) p->next++;
    if (p->next >= jp->nch) return RF_OK;
    int64_t c0 = p->next, c1 = c0 + 1;
    if (p->given > 0 || PARTS_AT(c0 + 1) - PARTS_AT(c0) > max_pairs)
        return parts_cut(p, PARTS_AT(c0 + 1) - PARTS_AT(c0), max_pairs, lidx, ridx, n);
    /* whole chunks from next on, at least one, while their pairs stay within the bound */
    while (c1 < jp->nch && PARTS_AT(c1 + 1) - PARTS_AT(c0) <= max_pairs) c1++;
    int64_t first = PARTS_AT(c0), m = PARTS_AT(c1) - first;
#undef PARTS_AT
    int64_t from = c0 * jp->grain, to = c1 * jp->grain < p->ln ? c1 * jp->grain : p->ln;
    emit_ctx c = {jp, cpu_alloc(m, 8), cpu_alloc(m, 8), 0, NULL, NULL, NULL, from, first};
    if (!c.lidx || !c.ridx) {
        free(c.lidx);
        free(c.ridx);
        return RF_ENOMEM;
    }
    rf_cpu_parallel_for(p->inline_ ? NULL : pool, to - from, jp->grain, emit_pairs, &c);
    p->next = c1;
    *lidx = c.lidx;
    *ridx = c.ridx;
    *n = m;
    return RF_OK;
}

void rf_cpu_join_parts_free(rf_cpu_join_parts *p)
{
    if (!p) return;
    if (p->side) side_plan_free(&p->jp);
    else plan_free(&p->jp);
    free(p);
}

rf_status rf_cpu_anti_join_side(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                                const rf_cpu_table *right, const rf_cpu_join_side *s, int64_t **keep,
                                int64_t *nkeep)
{
    *keep = NULL;
    *nkeep = 0;
    if (!s || !right || right->nrows != s->rn) return RF_EINTERNAL;
    rf_status st = keys_check(left, lkeys, right, s->rkeys, s->nkeys);
    if (st) return st;
    int64_t ln = left->nrows, mp = CPU_KEY_PARTS(s->nkeys);
    int64_t grain = cpu_grain(ln, 16384), nch = (ln + grain - 1) / grain;
    rf_cpu_kind *kinds = cpu_alloc(mp, sizeof *kinds);
    const void **ldata = cpu_alloc(mp, sizeof *ldata);
    int64_t *hit_row = cpu_alloc(ln, sizeof(int64_t)), *hit_gid = cpu_alloc(ln, sizeof(int64_t));
    int64_t *nhit = cpu_alloc(nch, sizeof(int64_t)), *out = NULL;
    uint8_t *hit = cpu_zalloc(ln, 1);
    int32_t np = 0;
    st = RF_ENOMEM;
    if (!kinds || !ldata || !hit_row || !hit_gid || !nhit || !hit) goto out;
    if ((st = cpu_table_keys(left, lkeys, s->nkeys, NULL, kinds, ldata, NULL, &np))) goto out;
    if (s->dense)
        cpu_dense_probe_hits(pool, &s->dx, &s->k.e, ldata, ln, grain, hit_row, hit_gid, nhit);
    else if ((st = cpu_ht_probe_hits(pool, &s->ht, &s->k.e, ldata, ln, grain, hit_row, hit_gid, nhit)))
        goto out;
    int64_t nhits = 0;
    for (int64_t c = 0; c < nch; c++)
        for (int64_t h = 0; h < nhit[c]; h++) {
            int64_t r = hit_row[c * grain + h];
            nhits += !hit[r];
            hit[r] = 1;
        }
    st = RF_ENOMEM;
    if (!(out = cpu_alloc(ln - nhits, sizeof(int64_t)))) goto out;
    int64_t m = 0;
    for (int64_t i = 0; i < ln; i++)
        if (!hit[i]) out[m++] = i;
    *keep = out;
    *nkeep = m;
    st = RF_OK;
out:
    free(kinds);
    free(ldata);
    free(hit_row);
    free(hit_gid);
    free(nhit);
    free(hit);
    return st;
}

rf_status rf_cpu_join_project(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                              const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys, const int32_t *lcols,
                              int32_t nl, const int32_t *rcols, int32_t nr, rf_cpu_table *out)
{
    memset(out, 0, sizeof *out);
    if (!left || !right || nl < 0 || nr < 0 || nl > INT32_MAX - nr) return RF_EINTERNAL;
    for (int32_t i = 0; i < nl; i++)
        if (lcols[i] < 0 || lcols[i] >= left->ncols) return RF_EINTERNAL;
    for (int32_t i = 0; i < nr; i++)
        if (rcols[i] < 0 || rcols[i] >= right->ncols) return RF_EINTERNAL;
    join_plan jp;
    rf_status st = join_prepare(pool, left, lkeys, right, rkeys, nkeys, 0, &jp);
    if (st) return st;
    int32_t nc = nl + nr;
    rf_cpu_col *src = cpu_alloc(nc, sizeof *src);
    uint8_t *fr = cpu_alloc(nc, 1);
    rf_cpu_kind *kinds = cpu_alloc(nc, sizeof *kinds);
    st = RF_ENOMEM;
    if (src && fr && kinds) {
        for (int32_t i = 0; i < nc; i++) {
            src[i] = i < nl ? left->cols[lcols[i]] : right->cols[rcols[i - nl]];
            fr[i] = i >= nl;
            kinds[i] = src[i].kind;
        }
        if (!(st = rf_cpu_table_alloc(nc, kinds, jp.total, out))) {
            emit_ctx c = {&jp, NULL, NULL, nc, src, fr, out->cols, 0, 0};
            rf_cpu_parallel_for(pool, left->nrows, jp.grain, emit_cols, &c);
        }
    }
    free(src);
    free(fr);
    free(kinds);
    plan_free(&jp);
    return st;
}

/* ---- semi / anti join ----------------------------------------------- */

typedef struct hit_ctx {
    const int64_t *gid;
    atomic_uchar *hit;
    uint8_t *flags;
} hit_ctx;

/* Several threads may mark one group; relaxed atomic stores of the same
** value make that well defined. */
static void hit_mark(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    hit_ctx *c = vp;
    for (int64_t i = b; i < e; i++)
        if (c->gid[i] >= 0) atomic_store_explicit(&c->hit[c->gid[i]], 1, memory_order_relaxed);
}

static void hit_flags(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    hit_ctx *c = vp;
    for (int64_t i = b; i < e; i++) c->flags[i] = atomic_load_explicit(&c->hit[c->gid[i]], memory_order_relaxed);
}

static rf_status semi_anti(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                           const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys, uint8_t want,
                           int64_t **keep, int64_t *nkeep)
{
    *keep = NULL;
    *nkeep = 0;
    if (!left || !right || left->nrows < 0 || right->nrows < 0 || nkeys < 0) return RF_EINTERNAL;
    int64_t ln = left->nrows, rn = right->nrows;
    keys k;
    rf_status st = keys_check(left, lkeys, right, rkeys, nkeys);
    if (st) return st;
    if (ln == 0 || rn == 0 || nkeys == 0) {
        if ((rn > 0) == want) return iota_list(pool, ln, keep, nkeep);
        return empty_list(keep, nkeep);
    }
    /* the ranges of the side built on; the other is probed with range checks */
    if ((st = keys_init(pool, &k, left, lkeys, right, rkeys, nkeys, rn <= ln ? RANGE_RIGHT : RANGE_LEFT))) return st;
    cpu_ht ht = {0};
    cpu_dense dx = {0};
    uint8_t *flags = cpu_alloc(ln, 1);
    int64_t *lg = NULL, *rg = NULL, *F = NULL, G;
    atomic_uchar *hit = NULL;
    st = RF_ENOMEM;
    if (!flags) goto out;
    if (rn <= ln) {
        if (cpu_dense_fits(&k.e, rn, ln)) {
            if ((st = cpu_dense_build(pool, &dx, &k.e, k.rdata, rn, NULL, &F, &G))) goto out;
            cpu_dense_probe(pool, &dx, &k.e, k.ldata, ln, NULL, flags);
        } else {
            if ((st = cpu_ht_build(pool, &ht, &k.e, k.rdata, rn, 0, NULL, &F, &G))) goto out;
            cpu_ht_probe(pool, &ht, &k.e, k.ldata, ln, 1, NULL, flags);
        }
    } else {
        int dense = cpu_dense_fits(&k.e, ln, rn);
        if (dense) st = cpu_dense_build(pool, &dx, &k.e, k.ldata, ln, &lg, &F, &G);
        else st = cpu_ht_build(pool, &ht, &k.e, k.ldata, ln, 1, &lg, &F, &G);
        if (st) goto out;
        st = RF_ENOMEM;
        rg = cpu_alloc(rn, sizeof(int64_t));
        hit = cpu_zalloc(G, sizeof *hit);
        if (!rg || !hit) goto out;
        if (dense) cpu_dense_probe(pool, &dx, &k.e, k.rdata, rn, rg, NULL);
        else cpu_ht_probe(pool, &ht, &k.e, k.rdata, rn, 1, rg, NULL);
        hit_ctx hc = {rg, hit, flags};
        rf_cpu_parallel_for(pool, rn, cpu_grain(rn, 16384), hit_mark, &hc);
        hc.gid = lg;
        rf_cpu_parallel_for(pool, ln, cpu_grain(ln, 16384), hit_flags, &hc);
    }
    st = cpu_compact_flags(pool, flags, want, ln, keep, nkeep);
out:
    cpu_ht_free(&ht);
    cpu_dense_free(&dx);
    free(flags);
    free(lg);
    free(rg);
    free(F);
    free(hit);
    keys_free(&k);
    return st;
}

rf_status rf_cpu_semi_join(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                           const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys, int64_t **keep,
                           int64_t *nkeep)
{
    return semi_anti(pool, left, lkeys, right, rkeys, nkeys, 1, keep, nkeep);
}

rf_status rf_cpu_anti_join(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                           const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys, int64_t **keep,
                           int64_t *nkeep)
{
    return semi_anti(pool, left, lkeys, right, rkeys, nkeys, 0, keep, nkeep);
}

/* ---- set operations ------------------------------------------------- */

rf_status rf_cpu_difference(rf_cpu_pool *pool, const rf_cpu_table *a, const rf_cpu_table *b, int64_t **keep,
                            int64_t *nkeep)
{
    *keep = NULL;
    *nkeep = 0;
    if (!a || !b || a->ncols != b->ncols || a->ncols < 0) return RF_EINTERNAL;
    int32_t *cols;
    if (all_cols(a->ncols, &cols)) return RF_ENOMEM;
    rf_status st = semi_anti(pool, a, cols, b, cols, a->ncols, 0, keep, nkeep);
    free(cols);
    return st;
}

rf_status rf_cpu_union(rf_cpu_pool *pool, const rf_cpu_table *a, const rf_cpu_table *b, rf_cpu_table *out)
{
    memset(out, 0, sizeof *out);
    int64_t *keep, nkeep;
    rf_status st = rf_cpu_difference(pool, b, a, &keep, &nkeep);
    if (st) return st;
    rf_cpu_kind *kinds = cpu_alloc(a->ncols, sizeof *kinds);
    if (!kinds) {
        free(keep);
        return RF_ENOMEM;
    }
    for (int32_t i = 0; i < a->ncols; i++) kinds[i] = a->cols[i].kind;
    st = rf_cpu_table_alloc(a->ncols, kinds, a->nrows + nkeep, out);
    free(kinds);
    if (!st)
        for (int32_t i = 0; i < a->ncols; i++) {
            size_t sz = (size_t)rf_cpu_kind_size(a->cols[i].kind);
            if (a->nrows) memcpy(out->cols[i].data, a->cols[i].data, (size_t)a->nrows * sz);
            cpu_gather_into(pool, a->cols[i].kind, b->cols[i].data, keep, nkeep,
                            (char *)out->cols[i].data + (size_t)a->nrows * sz);
        }
    free(keep);
    return st;
}
