/*
** runtime/rt_lftj.c: the leapfrog triejoin's plan and its search on the CPU
** (rf_rt_lftj.h). Owns: decoding the LFTJ kernel's parameters, bounds
** normalization, the per-item search. The GPU's copy of the search is
** skeletons/cuda/rf_lftj.cuh; the two must find the same bindings.
*/
#include "rf_rt_lftj.h"

#include <string.h>

static int32_t flip(int32_t op)
{
    switch (op) {
    case RF_CMP_LT: return RF_CMP_GT;
    case RF_CMP_LE: return RF_CMP_GE;
    case RF_CMP_GT: return RF_CMP_LT;
    case RF_CMP_GE: return RF_CMP_LE;
    default: return op;
    }
}

static int add_bound(rf_rt_lftj *j, const rf_qp_expr *e)
{
    if (e->kind != RF_QP_E_CMP || e->nargs != 2 || j->nbounds == RF_RT_LFTJ_MAX_BOUNDS) return 0;
    const rf_qp_expr *a = e->args[0], *b = e->args[1];
    rf_rt_lftj_bound *x = &j->bounds[j->nbounds];
    int ca = a->kind == RF_QP_E_COL, cb = b->kind == RF_QP_E_COL;
    if ((!ca && a->kind != RF_QP_E_CONST) || (!cb && b->kind != RF_QP_E_CONST) || (!ca && !cb)) return 0;
    if ((ca && (a->col < 0 || a->col >= j->nvars)) || (cb && (b->col < 0 || b->col >= j->nvars))) return 0;
    if (ca && cb) {
        int later_a = a->col >= b->col;
        x->v = later_a ? a->col : b->col;
        x->x = later_a ? b->col : a->col;
        x->op = later_a ? (int32_t)e->cmp : flip((int32_t)e->cmp);
        x->c = 0;
    } else if (ca) {
        x->v = a->col;
        x->op = (int32_t)e->cmp;
        x->x = -1;
        x->c = b->c.i;
    } else {
        x->v = b->col;
        x->op = flip((int32_t)e->cmp);
        x->x = -1;
        x->c = a->c.i;
    }
    j->nbounds++;
    return 1;
}

rf_status rf_rt_lftj_plan(int32_t nvars, int32_t nin, const int32_t *vars, const int32_t *ins, int32_t n,
                          const rf_qp_expr *filter, rf_rt_lftj *out)
{
    memset(out, 0, sizeof *out);
    if (nvars < 1 || nvars > RF_RT_LFTJ_MAX_VARS || nin < 1 || nin > RF_RT_LFTJ_MAX_INPUTS) return RF_EINTERNAL;
    out->nvars = nvars;
    out->nin = nin;
    uint64_t all = 0;
    for (int32_t f = 0; f < n; f++) {
        int32_t i = ins[f], v = vars[f];
        if (i < 0 || i >= nin || v < 0 || v >= nvars || (f && ins[f - 1] > i)) return RF_EINTERNAL;
        if (out->ncols[i] == 0) out->coloff[i] = f;
        if (out->mask[i] >> v) return RF_EINTERNAL; /* increasing within an input */
        out->mask[i] |= UINT64_C(1) << v;
        out->ncols[i]++;
        all |= UINT64_C(1) << v;
    }
    for (int32_t i = 0; i < nin; i++)
        if (!out->ncols[i]) return RF_EINTERNAL;
    if (all != (UINT64_C(1) << nvars) - 1) return RF_EINTERNAL;
    out->driver = -1;
    for (int32_t i = 0; i < nin; i++)
        if ((out->mask[i] & 3) == 3 && out->driver < 0) out->driver = i;
    for (int32_t i = 0; i < nin && out->driver < 0; i++)
        if (out->mask[i] & 1) out->driver = i;
    out->fixed = (out->mask[out->driver] & 3) == 3 ? 2 : 1;
    if (filter) {
        const rf_qp_expr *const *cs = filter->kind == RF_QP_E_AND ? (const rf_qp_expr *const *)filter->args : &filter;
        int32_t nc = filter->kind == RF_QP_E_AND ? filter->nargs : 1;
        for (int32_t k = 0; k < nc; k++)
            if (!add_bound(out, cs[k])) return RF_EINTERNAL;
    }
    return RF_OK;
}

int rf_rt_lftj_item_starts(const rf_rt_lftj *j, const int64_t *const *cols, int64_t r)
{
    if (r == 0) return 1;
    const int64_t *const *c = cols + j->coloff[j->driver];
    for (int32_t d = 0; d < j->fixed; d++)
        if (c[d][r] != c[d][r - 1]) return 1;
    return 0;
}

/* The first position in [lo, hi) whose value is >= v (galloping from lo). */
static int64_t seek(const int64_t *c, int64_t lo, int64_t hi, int64_t v)
{
    if (lo >= hi || c[lo] >= v) return lo;
    int64_t step = 1, a = lo; /* c[a] < v */
    while (a + step < hi && c[a + step] < v) {
        a += step;
        step *= 2;
    }
    int64_t b = a + step < hi ? a + step : hi; /* c[b] >= v or b == hi */
    while (b - a > 1) {
        int64_t m = a + (b - a) / 2;
        if (c[m] < v) a = m;
        else b = m;
    }
    return b;
}

/* The end of the run of v starting at lo. */
static int64_t run_end(const int64_t *c, int64_t lo, int64_t hi, int64_t v)
{
    return v == INT64_MAX ? hi : seek(c, lo, hi, v + 1);
}

static int holds(int32_t op, int64_t a, int64_t b)
{
    switch (op) {
    case RF_CMP_EQ: return a == b;
    case RF_CMP_NE: return a != b;
    case RF_CMP_LT: return a < b;
    case RF_CMP_LE: return a <= b;
    case RF_CMP_GT: return a > b;
    default: return a >= b;
    }
}

/* The range [*lo, *hi] the bounds of v allow given the earlier values;
** 0 when it is empty. */
static int range_of(const rf_rt_lftj *j, int32_t v, const int64_t *val, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MIN;
    *hi = INT64_MAX;
    for (int32_t b = 0; b < j->nbounds; b++) {
        const rf_rt_lftj_bound *x = &j->bounds[b];
        if (x->v != v || x->x == v || x->op == RF_CMP_NE) continue;
        int64_t y = x->x < 0 ? x->c : val[x->x];
        switch (x->op) {
        case RF_CMP_EQ:
            if (y > *lo) *lo = y;
            if (y < *hi) *hi = y;
            break;
        case RF_CMP_LT:
            if (y == INT64_MIN) return 0;
            if (y - 1 < *hi) *hi = y - 1;
            break;
        case RF_CMP_LE:
            if (y < *hi) *hi = y;
            break;
        case RF_CMP_GT:
            if (y == INT64_MAX) return 0;
            if (y + 1 > *lo) *lo = y + 1;
            break;
        default:
            if (y > *lo) *lo = y;
            break;
        }
    }
    return *lo <= *hi;
}

/* The bounds range_of does not narrow by: != and a variable against itself. */
static int others_hold(const rf_rt_lftj *j, int32_t v, const int64_t *val, int64_t cand)
{
    for (int32_t b = 0; b < j->nbounds; b++) {
        const rf_rt_lftj_bound *x = &j->bounds[b];
        if (x->v != v) continue;
        if (x->x == v) {
            if (!holds(x->op, cand, cand)) return 0;
        } else if (x->op == RF_CMP_NE && !holds(x->op, cand, x->x < 0 ? x->c : val[x->x])) {
            return 0;
        }
    }
    return 1;
}

int64_t rf_rt_lftj_item(const rf_rt_lftj *j, const int64_t *const *cols, const int64_t *nrows, int64_t r,
                        int64_t *const *out, int64_t at)
{
    enum { MI = RF_RT_LFTJ_MAX_INPUTS, MV = RF_RT_LFTJ_MAX_VARS };
    int64_t rlo[MI][MV + 1], rhi[MI][MV + 1], cur[MI][MV], val[MV], hiv[MV];
    int32_t part[MV][MI], depth[MV][MI], npart[MV];
    uint8_t started[MV];
    for (int32_t v = 0; v < j->nvars; v++) {
        npart[v] = 0;
        for (int32_t i = 0; i < j->nin; i++)
            if (j->mask[i] >> v & 1) {
                part[v][npart[v]] = i;
                depth[v][npart[v]++] = __builtin_popcountll(j->mask[i] & ((UINT64_C(1) << v) - 1));
            }
    }
    for (int32_t i = 0; i < j->nin; i++) {
        rlo[i][0] = 0;
        rhi[i][0] = nrows[i];
    }
    const int64_t *const *dc = cols + j->coloff[j->driver];
    int64_t count = 0;
    int32_t v = 0;
    started[0] = 0;
    for (;;) {
        /* the next binding of v, if any */
        int found = 0;
        int64_t cand = 0;
        if (v < j->fixed) {
            if (!started[v]) {
                started[v] = 1;
                cand = dc[v][r];
                int64_t lo, hi;
                found = range_of(j, v, val, &lo, &hi) && cand >= lo && cand <= hi && others_hold(j, v, val, cand);
                for (int32_t k = 0; k < npart[v] && found; k++) {
                    int32_t i = part[v][k], d = depth[v][k];
                    const int64_t *c = cols[j->coloff[i] + d];
                    int64_t a = seek(c, rlo[i][d], rhi[i][d], cand);
                    if (a == rhi[i][d] || c[a] != cand) found = 0;
                    else {
                        rlo[i][d + 1] = a;
                        rhi[i][d + 1] = run_end(c, a, rhi[i][d], cand);
                    }
                }
            }
        } else {
            int64_t lo = INT64_MIN;
            int ok = 1;
            if (!started[v]) {
                started[v] = 1;
                ok = range_of(j, v, val, &lo, &hiv[v]);
                for (int32_t k = 0; k < npart[v] && ok; k++) {
                    int32_t i = part[v][k], d = depth[v][k];
                    cur[i][d] = seek(cols[j->coloff[i] + d], rlo[i][d], rhi[i][d], lo);
                }
            } else {
                for (int32_t k = 0; k < npart[v]; k++) cur[part[v][k]][depth[v][k]] = rhi[part[v][k]][depth[v][k] + 1];
            }
            while (ok && !found) {
                /* leapfrog: every cursor to the largest value until all agree */
                cand = INT64_MIN;
                for (int32_t k = 0; k < npart[v] && ok; k++) {
                    int32_t i = part[v][k], d = depth[v][k];
                    if (cur[i][d] >= rhi[i][d]) ok = 0;
                    else if (cols[j->coloff[i] + d][cur[i][d]] > cand) cand = cols[j->coloff[i] + d][cur[i][d]];
                }
                if (!ok || cand > hiv[v]) {
                    ok = 0;
                    break;
                }
                int agree = 1;
                for (int32_t k = 0; k < npart[v] && ok; k++) {
                    int32_t i = part[v][k], d = depth[v][k];
                    const int64_t *c = cols[j->coloff[i] + d];
                    cur[i][d] = seek(c, cur[i][d], rhi[i][d], cand);
                    if (cur[i][d] >= rhi[i][d]) ok = 0;
                    else if (c[cur[i][d]] != cand) agree = 0;
                }
                if (!ok || !agree) continue;
                for (int32_t k = 0; k < npart[v]; k++) {
                    int32_t i = part[v][k], d = depth[v][k];
                    const int64_t *c = cols[j->coloff[i] + d];
                    rlo[i][d + 1] = cur[i][d];
                    rhi[i][d + 1] = run_end(c, cur[i][d], rhi[i][d], cand);
                }
                if (others_hold(j, v, val, cand)) found = 1;
                else
                    for (int32_t k = 0; k < npart[v]; k++)
                        cur[part[v][k]][depth[v][k]] = rhi[part[v][k]][depth[v][k] + 1];
            }
        }
        if (found) {
            val[v] = cand;
            if (v == j->nvars - 1) {
                if (out)
                    for (int32_t w = 0; w < j->nvars; w++) out[w][at + count] = val[w];
                count++;
                continue;
            }
            v++;
            started[v] = 0;
            continue;
        }
        if (v == 0) break;
        v--;
    }
    return count;
}
