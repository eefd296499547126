/*
** skeletons/cpu/cpu_agg.c: aggregate kernels over a grouping.
**
** Owns: count, exact integer sums, float sums, min and max per group. Two
** strategies, chosen by the number of groups only (never by the thread
** count, so results are reproducible): with few groups, fixed row blocks
** each fill a small partial array and the partials are combined in block
** order; with many groups, the rows are listed by group (CSR) and each group
** is reduced in row order.
*/
#include "cpu_internal.h"

enum { SMALL_G = CPU_AGG_SMALL_G, BLOCK_ROWS = 65536, MAX_BLOCKS = 64 };

typedef enum agg_op { AGG_COUNT, AGG_SUM_I64, AGG_SUM_F64, AGG_MIN, AGG_MAX } agg_op;

/* Min and max compare (normalized value, IEEE 754 totalOrder of the bits):
** a total order that agrees with the value order and also separates -0.0
** from 0.0 and NaN payloads, so the winner does not depend on the order of
** evaluation. */
static inline void mm_key(rf_cpu_kind k, const void *d, int64_t r, uint64_t *nv, uint64_t *raw)
{
    *nv = cpu_norm_at(k, d, r);
    if (k == RF_CPU_F64) {
        uint64_t b;
        memcpy(&b, (const double *)d + r, 8);
        *raw = (b >> 63) ? ~b : (b | (UINT64_C(1) << 63));
    } else {
        *raw = *nv;
    }
}

static inline int mm_better(int is_max, uint64_t n1, uint64_t r1, uint64_t n2, uint64_t r2)
{
    /* is (n1, r1) better than (n2, r2)? */
    if (n1 != n2) return is_max ? n1 > n2 : n1 < n2;
    return is_max ? r1 > r2 : r1 < r2;
}

typedef struct agg_ctx {
    agg_op op;
    rf_cpu_kind kind;
    const void *vals;
    const int64_t *gid, *order, *offsets;
    int64_t n, G, bs;
    /* block partials: [nblocks * G] of the accumulator type, and has-flags */
    void *part;
    uint8_t *has;
    void *out;
    uint64_t *mm; /* group mode min/max: (norm, raw) per group */
} agg_ctx;

/* With a handful of groups, consecutive rows keep hitting the same few
** accumulators, and each add waits for the previous one to the same group
** (a 128-bit one, through memory). LANES independent sets of 64-bit
** accumulators, rows taken round robin, break that chain; a lane that would
** overflow 64 bits first moves its sum into the exact 128-bit total. */
enum { LANES = 4, LANE_G = 16 };

static void count_lanes(const int64_t *gid, int64_t r0, int64_t r1, int64_t G, int64_t *p)
{
    int64_t acc[LANES][LANE_G];
    memset(acc, 0, sizeof acc);
    int64_t r = r0;
    for (; r + LANES <= r1; r += LANES)
        for (int l = 0; l < LANES; l++) acc[l][gid[r + l]]++;
    for (; r < r1; r++) acc[0][gid[r]]++;
    for (int64_t g = 0; g < G; g++)
        for (int l = 0; l < LANES; l++) p[g] += acc[l][g];
}

static void sum_lanes(const int64_t *gid, const int64_t *v, int64_t r0, int64_t r1, int64_t G, rf_dec128 *p)
{
    int64_t acc[LANES][LANE_G];
    memset(acc, 0, sizeof acc);
    int64_t r = r0;
    for (; r + LANES <= r1; r += LANES)
        for (int l = 0; l < LANES; l++) {
            int64_t *a = &acc[l][gid[r + l]], old = *a;
            if (__builtin_add_overflow(old, v[r + l], a)) {
                p[gid[r + l]] += old;
                *a = v[r + l];
            }
        }
    for (; r < r1; r++) p[gid[r]] += v[r];
    for (int64_t g = 0; g < G; g++)
        for (int l = 0; l < LANES; l++) p[g] += acc[l][g];
}

static void agg_block(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    agg_ctx *c = vp;
    for (int64_t blk = b; blk < e; blk++) {
        int64_t r0 = blk * c->bs, r1 = r0 + c->bs < c->n ? r0 + c->bs : c->n;
        uint8_t *has = c->has ? c->has + blk * c->G : NULL;
        const int64_t *gid = c->gid;
        switch (c->op) {
        case AGG_COUNT: {
            int64_t *p = (int64_t *)c->part + blk * c->G;
            if (c->G <= LANE_G) {
                count_lanes(gid, r0, r1, c->G, p);
                break;
            }
            for (int64_t r = r0; r < r1; r++) p[gid[r]]++;
            break;
        }
        case AGG_SUM_I64: {
            rf_dec128 *p = (rf_dec128 *)c->part + blk * c->G;
            const int64_t *v = c->vals;
            if (c->G <= LANE_G) {
                sum_lanes(gid, v, r0, r1, c->G, p);
                break;
            }
            for (int64_t r = r0; r < r1; r++) p[gid[r]] += v[r];
            break;
        }
        case AGG_SUM_F64: {
            double *p = (double *)c->part + blk * c->G;
            const double *v = c->vals;
            for (int64_t r = r0; r < r1; r++) {
                int64_t g = gid[r];
                if (has[g])
                    p[g] += v[r];
                else
                    p[g] = v[r], has[g] = 1;
            }
            break;
        }
        default: {
            uint64_t *p = (uint64_t *)c->part + 2 * blk * c->G;
            int is_max = c->op == AGG_MAX;
            for (int64_t r = r0; r < r1; r++) {
                int64_t g = gid[r];
                uint64_t nv, raw;
                mm_key(c->kind, c->vals, r, &nv, &raw);
                if (!has[g] || mm_better(is_max, nv, raw, p[2 * g], p[2 * g + 1])) {
                    p[2 * g] = nv;
                    p[2 * g + 1] = raw;
                    has[g] = 1;
                }
            }
            break;
        }
        }
    }
}

static void agg_groups(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    agg_ctx *c = vp;
    const int64_t *ord = c->order, *off = c->offsets;
    for (int64_t g = b; g < e; g++) {
        int64_t j0 = off[g], j1 = off[g + 1];
        switch (c->op) {
        case AGG_COUNT: ((int64_t *)c->out)[g] = j1 - j0; break;
        case AGG_SUM_I64: {
            const int64_t *v = c->vals;
            rf_dec128 s = 0;
            for (int64_t j = j0; j < j1; j++) s += v[ord ? ord[j] : j];
            ((rf_dec128 *)c->out)[g] = s;
            break;
        }
        case AGG_SUM_F64: {
            const double *v = c->vals;
            double s = v[ord ? ord[j0] : j0];
            for (int64_t j = j0 + 1; j < j1; j++) s += v[ord ? ord[j] : j];
            ((double *)c->out)[g] = s;
            break;
        }
        default: {
            int is_max = c->op == AGG_MAX;
            if (c->kind == RF_CPU_I64) {
                /* integers: the value order is the order, nothing to normalize */
                const int64_t *v = c->vals;
                int64_t best = v[ord ? ord[j0] : j0];
                if (!ord) {
                    if (is_max)
                        for (int64_t j = j0 + 1; j < j1; j++) best = v[j] > best ? v[j] : best;
                    else
                        for (int64_t j = j0 + 1; j < j1; j++) best = v[j] < best ? v[j] : best;
                } else {
                    for (int64_t j = j0 + 1; j < j1; j++) {
                        int64_t x = v[ord[j]];
                        best = is_max ? (x > best ? x : best) : (x < best ? x : best);
                    }
                }
                ((int64_t *)c->out)[g] = best; /* the result itself: no decoding */
                break;
            }
            uint64_t bn, br;
            mm_key(c->kind, c->vals, ord ? ord[j0] : j0, &bn, &br);
            for (int64_t j = j0 + 1; j < j1; j++) {
                uint64_t nv, raw;
                mm_key(c->kind, c->vals, ord ? ord[j] : j, &nv, &raw);
                if (mm_better(is_max, nv, raw, bn, br)) bn = nv, br = raw;
            }
            c->mm[2 * g] = bn;
            c->mm[2 * g + 1] = br;
            break;
        }
        }
    }
}

static void mm_decode(rf_cpu_kind k, const uint64_t *mm, int64_t G, void *out)
{
    for (int64_t g = 0; g < G; g++) {
        uint64_t nv = mm[2 * g], raw = mm[2 * g + 1];
        switch (k) {
        case RF_CPU_I64: ((int64_t *)out)[g] = (int64_t)(nv ^ (UINT64_C(1) << 63)); break;
        case RF_CPU_F64: {
            uint64_t b = (raw >> 63) ? raw & ~(UINT64_C(1) << 63) : ~raw;
            memcpy((double *)out + g, &b, 8);
            break;
        }
        case RF_CPU_I32: ((int32_t *)out)[g] = (int32_t)((uint32_t)nv ^ UINT32_C(0x80000000)); break;
        case RF_CPU_U32: ((uint32_t *)out)[g] = (uint32_t)nv; break;
        default: ((uint8_t *)out)[g] = (uint8_t)nv; break;
        }
    }
}

static rf_status run_agg(rf_cpu_pool *pool, rf_cpu_groups *g, agg_op op, rf_cpu_kind kind, const void *vals,
                         void **outp)
{
    *outp = NULL;
    if (!g || g->ngroups < 0 || g->nrows < 0 || (unsigned)kind > RF_CPU_U8) return RF_EINTERNAL;
    int64_t G = g->ngroups, n = g->nrows;
    size_t osz = op == AGG_COUNT ? 8 : op == AGG_SUM_I64 ? sizeof(rf_dec128) : op == AGG_SUM_F64 ? 8
                                                                           : (size_t)rf_cpu_kind_size(kind);
    void *out = cpu_zalloc(G, osz);
    if (!out) return RF_ENOMEM;
    if (G == 0 || n == 0) {
        *outp = out;
        return RF_OK;
    }
    agg_ctx c = {0};
    c.op = op;
    c.kind = kind;
    c.vals = vals;
    c.n = n;
    c.G = G;
    c.gid = g->group_of_row;
    c.out = out;
    rf_status st = RF_ENOMEM;
    if (G <= SMALL_G) {
        int64_t nb = (n + BLOCK_ROWS - 1) / BLOCK_ROWS;
        if (nb > MAX_BLOCKS) nb = MAX_BLOCKS;
        c.bs = (n + nb - 1) / nb;
        nb = (n + c.bs - 1) / c.bs;
        size_t psz = op == AGG_COUNT ? 8 : op == AGG_SUM_I64 ? sizeof(rf_dec128) : op == AGG_SUM_F64 ? 8 : 16;
        c.part = cpu_zalloc(nb * G, psz);
        if (op >= AGG_SUM_F64) c.has = cpu_zalloc(nb * G, 1);
        if (!c.part || (op >= AGG_SUM_F64 && !c.has)) goto out;
        rf_cpu_parallel_for(pool, nb, 1, agg_block, &c);
        uint64_t *mm = c.part; /* combined min/max land in block 0's partials */
        for (int64_t gi = 0; gi < G; gi++) {
            switch (op) {
            case AGG_COUNT: {
                int64_t s = 0;
                for (int64_t b = 0; b < nb; b++) s += ((int64_t *)c.part)[b * G + gi];
                ((int64_t *)out)[gi] = s;
                break;
            }
            case AGG_SUM_I64: {
                rf_dec128 s = 0;
                for (int64_t b = 0; b < nb; b++) s += ((rf_dec128 *)c.part)[b * G + gi];
                ((rf_dec128 *)out)[gi] = s;
                break;
            }
            case AGG_SUM_F64: {
                double s = 0;
                int any = 0;
                for (int64_t b = 0; b < nb; b++)
                    if (c.has[b * G + gi]) {
                        double x = ((double *)c.part)[b * G + gi];
                        s = any ? s + x : x;
                        any = 1;
                    }
                ((double *)out)[gi] = s;
                break;
            }
            default: {
                int any = 0, is_max = op == AGG_MAX;
                uint64_t bn = 0, br = 0;
                for (int64_t b = 0; b < nb; b++) {
                    if (!c.has[b * G + gi]) continue;
                    uint64_t nv = mm[2 * (b * G + gi)], raw = mm[2 * (b * G + gi) + 1];
                    if (!any || mm_better(is_max, nv, raw, bn, br)) bn = nv, br = raw;
                    any = 1;
                }
                mm[2 * gi] = bn;
                mm[2 * gi + 1] = br;
                break;
            }
            }
        }
        if (op >= AGG_MIN) mm_decode(kind, mm, G, out);
    } else {
        /* contiguous groups need no order: group g is rows offsets[g] .. */
        if (!(g->contiguous && g->offsets) && (st = rf_cpu_groups_order(pool, g))) goto out;
        st = RF_ENOMEM;
        c.order = g->order;
        c.offsets = g->offsets;
        int direct = kind == RF_CPU_I64; /* min / max of integers land in out */
        if (op >= AGG_MIN && !direct && !(c.mm = cpu_alloc(2 * G, 8))) goto out;
        rf_cpu_parallel_for(pool, G, cpu_grain(G, 4096), agg_groups, &c);
        if (op >= AGG_MIN && !direct) mm_decode(kind, c.mm, G, out);
    }
    st = RF_OK;
out:
    free(c.part);
    free(c.has);
    free(c.mm);
    if (st)
        free(out);
    else
        *outp = out;
    return st;
}

rf_status rf_cpu_agg_count(rf_cpu_pool *pool, rf_cpu_groups *g, int64_t **out)
{
    void *o;
    rf_status st = run_agg(pool, g, AGG_COUNT, RF_CPU_I64, NULL, &o);
    *out = o;
    return st;
}

rf_status rf_cpu_agg_sum_i64(rf_cpu_pool *pool, rf_cpu_groups *g, const int64_t *vals, rf_dec128 **out)
{
    void *o;
    rf_status st = run_agg(pool, g, AGG_SUM_I64, RF_CPU_I64, vals, &o);
    *out = o;
    return st;
}

rf_status rf_cpu_agg_sum_f64(rf_cpu_pool *pool, rf_cpu_groups *g, const double *vals, double **out)
{
    void *o;
    rf_status st = run_agg(pool, g, AGG_SUM_F64, RF_CPU_F64, vals, &o);
    *out = o;
    return st;
}

/* ---- 128-bit values (wide decimals) --------------------------------- */
/* Wide decimals are totals' results, so their relations are small: one
** thread, group by group over the grouping's order. */

static rf_status i128_groups(rf_cpu_pool *pool, rf_cpu_groups *g, rf_dec128 **out)
{
    *out = NULL;
    if (!g || g->ngroups < 0 || g->nrows < 0) return RF_EINTERNAL;
    if (g->ngroups && g->nrows && !(g->contiguous && g->offsets)) {
        rf_status st = rf_cpu_groups_order(pool, g);
        if (st) return st;
    }
    *out = cpu_zalloc(g->ngroups, sizeof(rf_dec128));
    return *out ? RF_OK : RF_ENOMEM;
}

rf_status rf_cpu_agg_sum_i128(rf_cpu_pool *pool, rf_cpu_groups *g, const rf_dec128 *vals, rf_dec128 **out,
                              int64_t *bad_group)
{
    *bad_group = -1;
    rf_status st = i128_groups(pool, g, out);
    if (st || !g->nrows) return st;
    for (int64_t gi = 0; gi < g->ngroups; gi++) {
        /* A 192-bit accumulator (hi:lo), checked once at the end, as the
        ** GPU's red_sum_w: a partial sum may leave the range on the way to a
        ** total within it, in any order of the rows. */
        unsigned __int128 lo = 0;
        int64_t hi = 0;
        int64_t j1 = g->offsets[gi + 1];
        for (int64_t j = g->offsets[gi]; j < j1; j++) {
            rf_dec128 v = vals[g->order ? g->order[j] : j];
            unsigned __int128 was = lo;
            lo += (unsigned __int128)v;
            hi += (lo < was) - (v < 0); /* the carry, and v's sign extension */
        }
        rf_dec128 s = (rf_dec128)lo;
        /* within 128 bits, then the symmetric range of rf_value.h (this
        ** library does not link it) */
        if (hi != (s < 0 ? -1 : 0) || s < RF_DEC128_MIN) {
            if (*bad_group < 0) *bad_group = gi;
            s = RF_CPU_I128_OUT;
        }
        (*out)[gi] = s;
    }
    return RF_OK;
}

static rf_status minmax_i128(rf_cpu_pool *pool, rf_cpu_groups *g, const rf_dec128 *vals, int is_max, void **outp)
{
    rf_dec128 *out;
    rf_status st = i128_groups(pool, g, &out);
    if (st || !g->nrows) {
        *outp = out;
        return st;
    }
    for (int64_t gi = 0; gi < g->ngroups; gi++) {
        int64_t j0 = g->offsets[gi], j1 = g->offsets[gi + 1];
        rf_dec128 best = vals[g->order ? g->order[j0] : j0];
        for (int64_t j = j0 + 1; j < j1; j++) {
            rf_dec128 x = vals[g->order ? g->order[j] : j];
            if (is_max ? x > best : x < best) best = x;
        }
        out[gi] = best;
    }
    *outp = out;
    return RF_OK;
}

rf_status rf_cpu_agg_min(rf_cpu_pool *pool, rf_cpu_groups *g, const rf_cpu_col *vals, rf_cpu_col *out)
{
    out->kind = vals->kind;
    if (vals->kind == RF_CPU_I128) return minmax_i128(pool, g, vals->data, 0, &out->data);
    return run_agg(pool, g, AGG_MIN, vals->kind, vals->data, &out->data);
}

rf_status rf_cpu_agg_max(rf_cpu_pool *pool, rf_cpu_groups *g, const rf_cpu_col *vals, rf_cpu_col *out)
{
    out->kind = vals->kind;
    if (vals->kind == RF_CPU_I128) return minmax_i128(pool, g, vals->data, 1, &out->data);
    return run_agg(pool, g, AGG_MAX, vals->kind, vals->data, &out->data);
}

/* ---- several exact sums in one pass --------------------------------- */

enum { MULTI_MAX = 16 };

typedef struct msum_ctx {
    const int64_t *gid;
    const int64_t *const *vals;
    int32_t nc;
    int64_t n, G, bs;
    rf_dec128 *part; /* [nblocks][nc][G] */
} msum_ctx;

/* sum_lanes for nc columns, the group ids read once per row */
static void msum_block(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    msum_ctx *c = vp;
    int64_t acc[MULTI_MAX][LANES][LANE_G];
    for (int64_t blk = b; blk < e; blk++) {
        int64_t r0 = blk * c->bs, r1 = r0 + c->bs < c->n ? r0 + c->bs : c->n;
        rf_dec128 *p = c->part + blk * c->nc * c->G;
        memset(acc, 0, sizeof acc);
        int64_t r = r0;
        for (; r + LANES <= r1; r += LANES)
            for (int l = 0; l < LANES; l++) {
                int64_t g = c->gid[r + l];
                for (int32_t k = 0; k < c->nc; k++) {
                    int64_t *a = &acc[k][l][g], old = *a, v = c->vals[k][r + l];
                    if (__builtin_add_overflow(old, v, a)) {
                        p[k * c->G + g] += old;
                        *a = v;
                    }
                }
            }
        for (; r < r1; r++)
            for (int32_t k = 0; k < c->nc; k++) p[k * c->G + c->gid[r]] += c->vals[k][r];
        for (int32_t k = 0; k < c->nc; k++)
            for (int64_t g = 0; g < c->G; g++)
                for (int l = 0; l < LANES; l++) p[k * c->G + g] += acc[k][l][g];
    }
}

rf_status rf_cpu_agg_sums_i64(rf_cpu_pool *pool, rf_cpu_groups *g, int32_t ncols, const int64_t *const *vals,
                              rf_dec128 **out)
{
    for (int32_t k = 0; k < ncols; k++) out[k] = NULL;
    if (!g || ncols < 0 || g->ngroups < 0 || g->nrows < 0) return RF_EINTERNAL;
    int64_t G = g->ngroups, n = g->nrows;
    if (G == 0 || n == 0 || G > LANE_G || ncols > MULTI_MAX || ncols < 2) {
        /* one column at a time */
        for (int32_t k = 0; k < ncols; k++) {
            rf_status st = rf_cpu_agg_sum_i64(pool, g, vals[k], &out[k]);
            if (st) {
                for (int32_t j = 0; j < k; j++) free(out[j]), out[j] = NULL;
                return st;
            }
        }
        return RF_OK;
    }
    /* the same blocks as run_agg's, so each sum is exact either way */
    msum_ctx c = {g->group_of_row, vals, ncols, n, G, 0, NULL};
    int64_t nb = (n + BLOCK_ROWS - 1) / BLOCK_ROWS;
    if (nb > MAX_BLOCKS) nb = MAX_BLOCKS;
    c.bs = (n + nb - 1) / nb;
    nb = (n + c.bs - 1) / c.bs;
    c.part = cpu_zalloc(nb * ncols * G, sizeof(rf_dec128));
    rf_status st = RF_ENOMEM;
    if (!c.part) return st;
    for (int32_t k = 0; k < ncols; k++)
        if (!(out[k] = cpu_zalloc(G, sizeof(rf_dec128)))) goto out;
    rf_cpu_parallel_for(pool, nb, 1, msum_block, &c);
    for (int32_t k = 0; k < ncols; k++)
        for (int64_t gi = 0; gi < G; gi++) {
            rf_dec128 s = 0;
            for (int64_t b = 0; b < nb; b++) s += c.part[(b * ncols + k) * G + gi];
            out[k][gi] = s;
        }
    st = RF_OK;
out:
    free(c.part);
    if (st)
        for (int32_t k = 0; k < ncols; k++) free(out[k]), out[k] = NULL;
    return st;
}

/* ---- min and max of one column in one pass -------------------------- */

typedef struct mm2_ctx {
    const int64_t *vals, *order, *offsets;
    int64_t *mn, *mx;
} mm2_ctx;

static void mm2_groups(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    mm2_ctx *c = vp;
    const int64_t *v = c->vals, *ord = c->order;
    for (int64_t g = b; g < e; g++) {
        int64_t j0 = c->offsets[g], j1 = c->offsets[g + 1];
        int64_t lo = v[ord ? ord[j0] : j0], hi = lo;
        for (int64_t j = j0 + 1; j < j1; j++) {
            int64_t x = v[ord ? ord[j] : j];
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        c->mn[g] = lo;
        c->mx[g] = hi;
    }
}

rf_status rf_cpu_agg_minmax_i64(rf_cpu_pool *pool, rf_cpu_groups *g, const int64_t *vals, int64_t *mn, int64_t *mx)
{
    if (!g || g->ngroups < 0 || g->nrows < 0) return RF_EINTERNAL;
    int64_t G = g->ngroups;
    if (G == 0 || g->nrows == 0) return RF_OK;
    if (G <= SMALL_G) {
        /* few groups: the row-block paths, one after the other */
        rf_cpu_col vc = {RF_CPU_I64, (void *)vals}, a = {RF_CPU_I64, NULL}, b = {RF_CPU_I64, NULL};
        rf_status st = rf_cpu_agg_min(pool, g, &vc, &a);
        if (!st) st = rf_cpu_agg_max(pool, g, &vc, &b);
        if (!st) {
            memcpy(mn, a.data, (size_t)G * sizeof *mn);
            memcpy(mx, b.data, (size_t)G * sizeof *mx);
        }
        free(a.data);
        free(b.data);
        return st;
    }
    if (!(g->contiguous && g->offsets)) {
        rf_status st = rf_cpu_groups_order(pool, g);
        if (st) return st;
    }
    mm2_ctx c = {vals, g->contiguous && g->offsets ? NULL : g->order, g->offsets, mn, mx};
    rf_cpu_parallel_for(pool, G, cpu_grain(G, 4096), mm2_groups, &c);
    return RF_OK;
}
