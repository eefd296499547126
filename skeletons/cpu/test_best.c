/*
** skeletons/cpu/test_best.c: tests of rf_cpu_best, the per-key table of a
** recursive min or max.
**
** Owns: the check of rf_cpu_best_improving and rf_cpu_best_store against a
** plain array per key, over rounds of random candidates (min and max,
** negative values, ties that must not count as improvements, keys of two
** columns, a table that grows past its first sizes), floats (-0.0 ties 0.0,
** NaN above every number), and kinds that do not match.
*/
#include "rf_cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                       \
        }                                                                     \
    } while (0)

static uint64_t rs = 0x2545f4914f6cdd1du;
static int64_t rnd(int64_t n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (int64_t)(rs % (uint64_t)n);
}

enum { KA = 40, KB = 30 }; /* keys (a, b): a in [-20, 20), b in [0, 30) */

/* Rounds of candidates (one per key each) against a reference per key. */
static void rounds(rf_cpu_pool *pool, int want_max)
{
    rf_cpu_kind kinds[3] = {RF_CPU_I64, RF_CPU_I32, RF_CPU_I64};
    rf_cpu_best *b = NULL;
    CHECK(rf_cpu_best_new(3, kinds, want_max, &b) == RF_OK);
    if (!b) return;
    static int64_t ref[KA][KB];
    static uint8_t has[KA][KB];
    memset(has, 0, sizeof has);
    int64_t a[KA * KB], v[KA * KB];
    int32_t bb[KA * KB];
    for (int round = 0; round < 30; round++) {
        /* distinct keys, values in [-50, 50): ties with the stored value happen */
        int64_t n = 0;
        for (int32_t i = 0; i < KA; i++)
            for (int32_t j = 0; j < KB; j++)
                if (rnd(4) == 0) {
                    a[n] = i - 20;
                    bb[n] = j;
                    v[n++] = rnd(100) - 50;
                }
        rf_cpu_col cols[3] = {{RF_CPU_I64, a}, {RF_CPU_I32, bb}, {RF_CPU_I64, v}};
        rf_cpu_table t = {n, 3, cols};
        int64_t *keep = NULL, nkeep = 0;
        CHECK(rf_cpu_best_improving(pool, b, &t, &keep, &nkeep) == RF_OK);
        int64_t m = 0;
        for (int64_t r = 0; r < n; r++) {
            int32_t i = (int32_t)(a[r] + 20), j = bb[r];
            int better = !has[i][j] || (want_max ? v[r] > ref[i][j] : v[r] < ref[i][j]);
            if (better) {
                CHECK(m < nkeep && keep[m] == r);
                m++;
            }
        }
        CHECK(m == nkeep);
        /* store the improving rows, as a round's delta */
        int64_t da[KA * KB], dv[KA * KB];
        int32_t db[KA * KB];
        for (int64_t x = 0; x < nkeep; x++) {
            da[x] = a[keep[x]];
            db[x] = bb[keep[x]];
            dv[x] = v[keep[x]];
            ref[da[x] + 20][db[x]] = dv[x];
            has[da[x] + 20][db[x]] = 1;
        }
        free(keep);
        rf_cpu_col dc[3] = {{RF_CPU_I64, da}, {RF_CPU_I32, db}, {RF_CPU_I64, dv}};
        rf_cpu_table d = {nkeep, 3, dc};
        CHECK(rf_cpu_best_store(pool, b, &d) == RF_OK);
        /* the table holds exactly the reference, one row per key */
        rf_cpu_col vc[3];
        rf_cpu_table view;
        rf_cpu_best_view(b, vc, &view);
        int64_t keys = 0;
        for (int32_t i = 0; i < KA; i++)
            for (int32_t j = 0; j < KB; j++) keys += has[i][j];
        CHECK(view.nrows == keys && rf_cpu_best_size(b) == keys);
        for (int64_t r = 0; r < view.nrows; r++) {
            int64_t ka = ((int64_t *)vc[0].data)[r];
            int32_t kb = ((int32_t *)vc[1].data)[r];
            CHECK(has[ka + 20][kb] && ((int64_t *)vc[2].data)[r] == ref[ka + 20][kb]);
        }
    }
    rf_cpu_best_free(b);
}

static void floats(rf_cpu_pool *pool)
{
    rf_cpu_kind kinds[2] = {RF_CPU_F64, RF_CPU_F64};
    rf_cpu_best *b = NULL;
    CHECK(rf_cpu_best_new(2, kinds, 0, &b) == RF_OK);
    if (!b) return;
    double k0[] = {0.0, NAN, 1.5}, v0[] = {0.0, 2.0, NAN};
    rf_cpu_col c0[2] = {{RF_CPU_F64, k0}, {RF_CPU_F64, v0}};
    rf_cpu_table t0 = {3, 2, c0};
    CHECK(rf_cpu_best_store(pool, b, &t0) == RF_OK);
    /* key -0.0 is key 0.0 and value -0.0 ties 0.0 (no improvement); any
    ** NaN key is the NaN key; a number beats NaN under min */
    double k1[] = {-0.0, -NAN, 1.5, 7.0}, v1[] = {-0.0, 1.0, 3.0, 0.5};
    rf_cpu_col c1[2] = {{RF_CPU_F64, k1}, {RF_CPU_F64, v1}};
    rf_cpu_table t1 = {4, 2, c1};
    int64_t *keep = NULL, n = 0;
    CHECK(rf_cpu_best_improving(pool, b, &t1, &keep, &n) == RF_OK);
    CHECK(n == 3 && keep[0] == 1 && keep[1] == 2 && keep[2] == 3);
    free(keep);
    /* a store of candidates of one key keeps the best of them */
    CHECK(rf_cpu_best_store(pool, b, &t1) == RF_OK);
    double k2[] = {9.0, 9.0, 9.0}, v2[] = {4.0, -1.0, 2.0};
    rf_cpu_col c2[2] = {{RF_CPU_F64, k2}, {RF_CPU_F64, v2}};
    rf_cpu_table t2 = {3, 2, c2};
    CHECK(rf_cpu_best_store(pool, b, &t2) == RF_OK);
    rf_cpu_col vc[2];
    rf_cpu_table view;
    rf_cpu_best_view(b, vc, &view);
    const double *kv = vc[0].data, *vv = vc[1].data;
    CHECK(view.nrows == 5);
    if (view.nrows == 5) {
        CHECK(kv[0] == 0.0 && vv[0] == 0.0 && !signbit(vv[0]));
        CHECK(isnan(kv[1]) && vv[1] == 1.0);
        CHECK(kv[2] == 1.5 && vv[2] == 3.0);
        CHECK(kv[3] == 7.0 && vv[3] == 0.5);
        CHECK(kv[4] == 9.0 && vv[4] == -1.0);
    }
    /* another kind is refused */
    int64_t ints[] = {1, 2};
    rf_cpu_col ci[2] = {{RF_CPU_I64, ints}, {RF_CPU_I64, ints}};
    rf_cpu_table ti = {2, 2, ci};
    CHECK(rf_cpu_best_improving(pool, b, &ti, &keep, &n) == RF_EINTERNAL);
    CHECK(rf_cpu_best_store(pool, b, &ti) == RF_EINTERNAL);
    rf_cpu_best_free(b);
}

int main(void)
{
    rf_cpu_pool *pools[2];
    if (rf_cpu_pool_new(1, &pools[0]) || rf_cpu_pool_new(3, &pools[1])) return 1;
    for (int p = 0; p < 2; p++) {
        rounds(pools[p], 0);
        rounds(pools[p], 1);
        floats(pools[p]);
    }
    rf_cpu_pool_free(pools[0]);
    rf_cpu_pool_free(pools[1]);
    printf("best: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
