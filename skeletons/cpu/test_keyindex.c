/*
** skeletons/cpu/test_keyindex.c: tests of rf_cpu_keyindex.
**
** Owns: the check that a kept join index gives rf_cpu_hash_join's pairs in
** its order, for one and two key columns of every kind, probed several times
** (as a loop's rounds do), with keys outside the index's range, empty sides,
** -0.0 against 0.0 and NaN against NaN, over one and three threads.
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

static uint64_t rs = 88172645463325252u;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

/* Column c of kind k, n rows, values in [lo, lo + domain). */
static void fill(rf_cpu_col *c, rf_cpu_kind k, int64_t n, int64_t lo, uint64_t domain)
{
    c->kind = k;
    c->data = calloc((size_t)n + 1, (size_t)rf_cpu_kind_size(k));
    for (int64_t i = 0; i < n; i++) {
        int64_t v = lo + (int64_t)(rnd() % domain);
        switch (k) {
        case RF_CPU_I64: ((int64_t *)c->data)[i] = v; break;
        case RF_CPU_F64: ((double *)c->data)[i] = (double)v * 0.5; break;
        case RF_CPU_I32: ((int32_t *)c->data)[i] = (int32_t)v; break;
        case RF_CPU_U32: ((uint32_t *)c->data)[i] = (uint32_t)(v < 0 ? -v : v); break;
        default: ((uint8_t *)c->data)[i] = (uint8_t)(v & 1); break;
        }
    }
}

static void same_join(rf_cpu_pool *pool, const rf_cpu_keyindex *ix, const rf_cpu_table *l, const int32_t *lk,
                      const rf_cpu_table *r, const int32_t *rk, int32_t nk)
{
    int64_t *a, *b, n, *c, *d, m;
    CHECK(rf_cpu_hash_join(pool, l, lk, r, rk, nk, &a, &b, &n) == RF_OK);
    CHECK(rf_cpu_keyindex_join(pool, ix, l, lk, &c, &d, &m) == RF_OK);
    CHECK(n == m && (!n || (!memcmp(a, c, (size_t)n * 8) && !memcmp(b, d, (size_t)n * 8))));
    free(a);
    free(b);
    free(c);
    free(d);
}

static void one_case(rf_cpu_pool *pool, int32_t nk, rf_cpu_kind k0, rf_cpu_kind k1, int64_t ln, int64_t rn,
                     uint64_t domain)
{
    rf_cpu_col lc[3], rc[3];
    /* keys: left columns 0, 1; right columns 1, 2 (the index's rows have
    ** other columns too); the left's values reach past the right's range */
    fill(&lc[0], k0, ln, -3, domain + 6);
    fill(&lc[1], k1, ln, 0, 3);
    fill(&lc[2], RF_CPU_I32, ln, 0, 100);
    fill(&rc[0], RF_CPU_U8, rn, 0, 2);
    fill(&rc[1], k0, rn, 0, domain);
    fill(&rc[2], k1, rn, 0, 3);
    rf_cpu_table l = {ln, 3, lc}, r = {rn, 3, rc};
    int32_t lk[2] = {0, 1}, rk[2] = {1, 2};
    rf_cpu_keyindex *ix = NULL;
    CHECK(rf_cpu_keyindex_build(pool, &r, rk, nk, &ix) == RF_OK);
    for (int round = 0; round < 3; round++) {
        /* a different slice of the left each round: the index is reused */
        rf_cpu_table part = l;
        part.nrows = ln * (round + 1) / 3;
        same_join(pool, ix, &part, lk, &r, rk, nk);
    }
    rf_cpu_keyindex_free(ix);
    for (int c = 0; c < 3; c++) {
        free(lc[c].data);
        free(rc[c].data);
    }
}

int main(void)
{
    rf_cpu_pool *pools[2];
    if (rf_cpu_pool_new(1, &pools[0]) || rf_cpu_pool_new(3, &pools[1])) return 1;
    rf_cpu_kind kinds[] = {RF_CPU_I64, RF_CPU_F64, RF_CPU_I32, RF_CPU_U32};
    for (int p = 0; p < 2; p++) {
        for (int k = 0; k < 4; k++) {
            one_case(pools[p], 1, kinds[k], RF_CPU_U8, 3000, 20000, 5000);
            one_case(pools[p], 2, kinds[k], RF_CPU_U8, 5000, 800, 40);
            one_case(pools[p], 1, kinds[k], RF_CPU_I64, 0, 100, 10);
            one_case(pools[p], 1, kinds[k], RF_CPU_I64, 100, 0, 10);
            one_case(pools[p], 1, kinds[k], RF_CPU_I64, 40000, 30000, 1 << 20);
        }
        /* -0.0 joins 0.0, NaN joins NaN, as in rf_cpu_hash_join */
        double a[] = {0.0, NAN, 1.0, -7.0}, b[] = {NAN, -0.0, 2.0, -0.0, 1.0};
        rf_cpu_col ca = {RF_CPU_F64, a}, cb = {RF_CPU_F64, b};
        rf_cpu_table ta = {4, 1, &ca}, tb = {5, 1, &cb};
        int32_t k0 = 0;
        rf_cpu_keyindex *ix = NULL;
        CHECK(rf_cpu_keyindex_build(pools[p], &tb, &k0, 1, &ix) == RF_OK);
        same_join(pools[p], ix, &ta, &k0, &tb, &k0, 1);
        /* a key of another kind is refused */
        int64_t ints[] = {1, 2};
        rf_cpu_col ci = {RF_CPU_I64, ints};
        rf_cpu_table ti = {2, 1, &ci};
        int64_t *li, *ri, n;
        CHECK(rf_cpu_keyindex_join(pools[p], ix, &ti, &k0, &li, &ri, &n) == RF_EINTERNAL);
        rf_cpu_keyindex_free(ix);
    }
    rf_cpu_pool_free(pools[0]);
    rf_cpu_pool_free(pools[1]);
    printf("keyindex: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
