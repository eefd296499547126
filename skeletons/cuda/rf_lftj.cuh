// skeletons/cuda/rf_lftj.cuh: the leapfrog triejoin (Harmony's LFTJ), the
// multi-predicate join of the Red Fox thesis (chapter 5), after the CPU's
// runtime/rt_lftj.c, which it must agree with binding for binding.
//
// Owns the search on the GPU: one thread per work item (a row of the
// driver input that starts a new prefix of its first `fixed` variables: an
// edge (x, y) of a triangle query, so a hub's work spreads over its edges);
// the variables bound in order, each one's candidates the values every input
// holding it has in its current range, found by leapfrogging (binary
// searches from each cursor to the largest candidate so far until all
// agree), narrowed by the bounds. Two passes, as every variable-output
// kernel here: lftj_count writes each item's count, the host scans them,
// lftj_write writes each item's rows from its offset. Type-agnostic (int64
// columns only), so one instantiation serves every program.
//   n items (driver rows); x[0] variables, x[1] inputs, x[2] driver, x[3]
//   fixed, x[4] bounds; c0[f] the sorted inputs' columns, flat; k[i] input
//   i's rows, k[8 + i] its variable mask, k[16 + i] its first flat column;
//   k[24 + 2b] bound b (v | op << 8 | (x + 1) << 16; op as rf_cmp_op, x -1:
//   the constant k[25 + 2b]); p[0] counts out (count) or offsets (write);
//   o[v] the variables' columns (write); x[5] the first item: items x[5] to
//   x[5] + n - 1, whose counts and offsets are numbered from 0 (a range of
//   the items where a memory cap leaves no room for all at once).
#ifndef RF_LFTJ_CUH
#define RF_LFTJ_CUH

namespace rf {

enum { LFTJ_MI = 8, LFTJ_MV = 16 };

__device__ __forceinline__ i64 lftj_seek(const i64 *c, i64 lo, i64 hi, i64 v)
{
    if (lo >= hi || c[lo] >= v) return lo;
    i64 step = 1, a = lo;
    while (a + step < hi && c[a + step] < v) {
        a += step;
        step *= 2;
    }
    i64 b = a + step < hi ? a + step : hi;
    while (b - a > 1) {
        i64 m = a + (b - a) / 2;
        if (c[m] < v) a = m;
        else b = m;
    }
    return b;
}

__device__ __forceinline__ i64 lftj_end(const i64 *c, i64 lo, i64 hi, i64 v)
{
    return v == RF_I64_MAX ? hi : lftj_seek(c, lo, hi, v + 1);
}

__device__ __forceinline__ bool lftj_holds(int op, i64 a, i64 b)
{
    switch (op) {
    case 0: return a == b;
    case 1: return a != b;
    case 2: return a < b;
    case 3: return a <= b;
    case 4: return a > b;
    default: return a >= b;
    }
}

__device__ __forceinline__ bool lftj_range(const Args &a, int v, const i64 *val, i64 *lo, i64 *hi)
{
    *lo = RF_I64_MIN;
    *hi = RF_I64_MAX;
    for (int b = 0; b < (int)a.x[4]; b++) {
        u64 d = a.k[24 + 2 * b];
        int bv = (int)(d & 255), op = (int)(d >> 8 & 255), bx = (int)(d >> 16 & 255) - 1;
        if (bv != v || bx == v || op == 1) continue;
        i64 y = bx < 0 ? (i64)a.k[25 + 2 * b] : val[bx];
        switch (op) {
        case 0:
            if (y > *lo) *lo = y;
            if (y < *hi) *hi = y;
            break;
        case 2:
            if (y == RF_I64_MIN) return false;
            if (y - 1 < *hi) *hi = y - 1;
            break;
        case 3:
            if (y < *hi) *hi = y;
            break;
        case 4:
            if (y == RF_I64_MAX) return false;
            if (y + 1 > *lo) *lo = y + 1;
            break;
        default:
            if (y > *lo) *lo = y;
            break;
        }
    }
    return *lo <= *hi;
}

__device__ __forceinline__ bool lftj_others(const Args &a, int v, const i64 *val, i64 cand)
{
    for (int b = 0; b < (int)a.x[4]; b++) {
        u64 d = a.k[24 + 2 * b];
        int bv = (int)(d & 255), op = (int)(d >> 8 & 255), bx = (int)(d >> 16 & 255) - 1;
        if (bv != v) continue;
        if (bx == v) {
            if (!lftj_holds(op, cand, cand)) return false;
        } else if (op == 1 && !lftj_holds(op, cand, bx < 0 ? (i64)a.k[25 + 2 * b] : val[bx])) {
            return false;
        }
    }
    return true;
}

// The bindings of item r: counted, or written from row `at` when out.
__device__ __noinline__ i64 lftj_item(const Args &a, i64 r, bool out, i64 at)
{
    const int nv = (int)a.x[0], ni = (int)a.x[1], drv = (int)a.x[2], fixed = (int)a.x[3];
    i64 rlo[LFTJ_MI][LFTJ_MV + 1], rhi[LFTJ_MI][LFTJ_MV + 1], cur[LFTJ_MI][LFTJ_MV], val[LFTJ_MV], hiv[LFTJ_MV];
    signed char part[LFTJ_MV][LFTJ_MI], depth[LFTJ_MV][LFTJ_MI], npart[LFTJ_MV];
    bool started[LFTJ_MV];
    for (int v = 0; v < nv; v++) {
        npart[v] = 0;
        for (int i = 0; i < ni; i++) {
            u64 m = a.k[8 + i];
            if (!(m >> v & 1)) continue;
            int d = 0;
            for (int w = 0; w < v; w++) d += (int)(m >> w & 1);
            part[v][(int)npart[v]] = (signed char)i;
            depth[v][(int)npart[v]++] = (signed char)d;
        }
    }
    for (int i = 0; i < ni; i++) {
        rlo[i][0] = 0;
        rhi[i][0] = (i64)a.k[i];
    }
#define RF_LFTJ_COL(i, d) ((const i64 *)a.c0[(int)a.k[16 + (i)] + (d)])
    i64 count = 0;
    int v = 0;
    started[0] = false;
    for (;;) {
        bool found = false;
        i64 cand = 0;
        if (v < fixed) {
            if (!started[v]) {
                started[v] = true;
                cand = RF_LFTJ_COL(drv, v)[r];
                i64 lo, hi;
                found = lftj_range(a, v, val, &lo, &hi) && cand >= lo && cand <= hi && lftj_others(a, v, val, cand);
                for (int k = 0; k < npart[v] && found; k++) {
                    int i = part[v][k], d = depth[v][k];
                    const i64 *c = RF_LFTJ_COL(i, d);
                    i64 s = lftj_seek(c, rlo[i][d], rhi[i][d], cand);
                    if (s == rhi[i][d] || c[s] != cand) {
                        found = false;
                    } else {
                        rlo[i][d + 1] = s;
                        rhi[i][d + 1] = lftj_end(c, s, rhi[i][d], cand);
                    }
                }
            }
        } else {
            i64 lo = RF_I64_MIN;
            bool ok = true;
            if (!started[v]) {
                started[v] = true;
                ok = lftj_range(a, v, val, &lo, &hiv[v]);
                for (int k = 0; k < npart[v] && ok; k++) {
                    int i = part[v][k], d = depth[v][k];
                    cur[i][d] = lftj_seek(RF_LFTJ_COL(i, d), rlo[i][d], rhi[i][d], lo);
                }
            } else {
                for (int k = 0; k < npart[v]; k++) cur[part[v][k]][depth[v][k]] = rhi[part[v][k]][depth[v][k] + 1];
            }
            while (ok && !found) {
                cand = RF_I64_MIN;
                for (int k = 0; k < npart[v] && ok; k++) {
                    int i = part[v][k], d = depth[v][k];
                    if (cur[i][d] >= rhi[i][d]) ok = false;
                    else if (RF_LFTJ_COL(i, d)[cur[i][d]] > cand) cand = RF_LFTJ_COL(i, d)[cur[i][d]];
                }
                if (!ok || cand > hiv[v]) {
                    ok = false;
                    break;
                }
                bool agree = true;
                for (int k = 0; k < npart[v] && ok; k++) {
                    int i = part[v][k], d = depth[v][k];
                    const i64 *c = RF_LFTJ_COL(i, d);
                    cur[i][d] = lftj_seek(c, cur[i][d], rhi[i][d], cand);
                    if (cur[i][d] >= rhi[i][d]) ok = false;
                    else if (c[cur[i][d]] != cand) agree = false;
                }
                if (!ok || !agree) continue;
                for (int k = 0; k < npart[v]; k++) {
                    int i = part[v][k], d = depth[v][k];
                    rlo[i][d + 1] = cur[i][d];
                    rhi[i][d + 1] = lftj_end(RF_LFTJ_COL(i, d), cur[i][d], rhi[i][d], cand);
                }
                if (lftj_others(a, v, val, cand)) found = true;
                else
                    for (int k = 0; k < npart[v]; k++)
                        cur[part[v][k]][depth[v][k]] = rhi[part[v][k]][depth[v][k] + 1];
            }
        }
        if (found) {
            val[v] = cand;
            if (v == nv - 1) {
                if (out)
                    for (int w = 0; w < nv; w++) ((i64 *)a.o[w])[at + count] = val[w];
                count++;
                continue;
            }
            v++;
            started[v] = false;
            continue;
        }
        if (v == 0) break;
        v--;
    }
#undef RF_LFTJ_COL
    return count;
}

__device__ __forceinline__ bool lftj_starts(const Args &a, i64 r)
{
    if (r == 0) return true;
    int drv = (int)a.x[2];
    for (int d = 0; d < (int)a.x[3]; d++) {
        const i64 *c = (const i64 *)a.c0[(int)a.k[16 + drv] + d];
        if (c[r] != c[r - 1]) return true;
    }
    return false;
}

template <int TILE> __device__ __forceinline__ void lftj_count(const Args &a)
{
    i64 *counts = (i64 *)a.p[0];
    const i64 base = a.x[5];
    RF_FOR(r, a.n) counts[r] = lftj_starts(a, base + r) ? lftj_item(a, base + r, false, 0) : 0;
}

template <int TILE> __device__ __forceinline__ void lftj_write(const Args &a)
{
    const i64 *pos = (const i64 *)a.p[0];
    const i64 base = a.x[5];
    RF_FOR(r, a.n)
    {
        i64 end = r + 1 < a.n ? pos[r + 1] : (i64)a.m;
        if (end > pos[r]) lftj_item(a, base + r, true, pos[r]);
    }
}

} // namespace rf

#endif
