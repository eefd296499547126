/*
** skeletons/cpu/bench_ops.c: timings of the individual rf_cpu primitives on
** 10 million random rows (benchmark, not a test), to see where a query plan's
** time would go and to catch a primitive that stops scaling with threads.
**
** usage: bench_cpu_ops [threads [rows]]
*/
#include <stdio.h>
#include <stdlib.h>

#include "rf_cpu.h"
#include "rf_sys.h"

static uint64_t rs = 88172645463325252u;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

#define TIME(name, call)                                                                                       \
    do {                                                                                                       \
        double t0_ = rf_now();                                                                                    \
        rf_status st_ = (call);                                                                                \
        double t_ = rf_now() - t0_;                                                                               \
        if (st_) {                                                                                             \
            fprintf(stderr, "bench_cpu_ops: %s failed (%d)\n", name, (int)st_);                               \
            return 1;                                                                                          \
        }                                                                                                      \
        printf("%-44s %8.3f s\n", name, t_);                                                                   \
    } while (0)

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    int64_t n = argc > 2 ? atoll(argv[2]) : 10000000;
    if (threads < 1 || n < 1) {
        fprintf(stderr, "usage: bench_cpu_ops [threads [rows]]\n");
        return 2;
    }
    rf_cpu_pool *pool;
    rf_cpu_kind k[3] = {RF_CPU_I64, RF_CPU_I64, RF_CPU_F64}, k1 = RF_CPU_I64;
    rf_cpu_table t, r;
    int64_t rn = n / 10 > 0 ? n / 10 : 1;
    if (rf_cpu_pool_new(threads, &pool) || rf_cpu_table_alloc(3, k, n, &t) || rf_cpu_table_alloc(1, &k1, rn, &r)) {
        fprintf(stderr, "bench_cpu_ops: out of memory\n");
        return 1;
    }
    /* a: n/10 values; b: 4 values; c: floats */
    int64_t *a = t.cols[0].data, *b = t.cols[1].data, *rk = r.cols[0].data;
    double *c = t.cols[2].data;
    for (int64_t i = 0; i < n; i++) {
        a[i] = (int64_t)(rnd() % (uint64_t)rn);
        b[i] = (int64_t)(rnd() % 4);
        c[i] = (double)(rnd() % 100000) / 7;
    }
    for (int64_t i = 0; i < rn; i++) rk[i] = i;
    printf("%lld rows, %d threads\n", (long long)n, threads);
    int32_t ca = 0, cb = 1, cc = 2, ba[2] = {1, 0};
    int64_t *p, *q, m;
    rf_cpu_groups g;
    rf_dec128 *sum;
    double *fs;
    TIME("sort by a (int, n/10 values)", rf_cpu_sort_perm(pool, &t, &ca, NULL, 1, &p));
    free(p);
    TIME("sort by c (float)", rf_cpu_sort_perm(pool, &t, &cc, NULL, 1, &p));
    free(p);
    TIME("sort by (b, a)", rf_cpu_sort_perm(pool, &t, ba, NULL, 2, &p));
    free(p);
    TIME("top-10 by c", rf_cpu_top_k(pool, &t, &cc, NULL, 1, 10, &p, &m));
    free(p);
    TIME("group by b (4 groups)", rf_cpu_group(pool, &t, &cb, 1, &g));
    TIME("  sum_i64 of a per group", rf_cpu_agg_sum_i64(pool, &g, a, &sum));
    free(sum);
    TIME("  sum_f64 of c per group", rf_cpu_agg_sum_f64(pool, &g, c, &fs));
    free(fs);
    rf_cpu_groups_free(&g);
    TIME("group by a (n/10 groups)", rf_cpu_group(pool, &t, &ca, 1, &g));
    TIME("  sum_f64 of c per group", rf_cpu_agg_sum_f64(pool, &g, c, &fs));
    free(fs);
    rf_cpu_groups_free(&g);
    TIME("unique (a, b, c): nearly all distinct", rf_cpu_unique(pool, &t, &p, &m));
    free(p);
    TIME("join a = key of n/10 rows (pairs)", rf_cpu_hash_join(pool, &t, &ca, &r, &ca, 1, &p, &q, &m));
    free(p);
    free(q);
    TIME("semi join a in n/10 keys", rf_cpu_semi_join(pool, &t, &ca, &r, &ca, 1, &p, &m));
    free(p);
    TIME("semi join n/10 keys in a (build left)", rf_cpu_semi_join(pool, &r, &ca, &t, &ca, 1, &p, &m));
    free(p);
    for (int64_t i = 0; i < rn; i++) rk[i] = (int64_t)(rnd() >> 1);
    TIME("join a = random int64 keys (few matches)", rf_cpu_hash_join(pool, &t, &ca, &r, &ca, 1, &p, &q, &m));
    free(p);
    free(q);
    rf_cpu_table_free(&t);
    rf_cpu_table_free(&r);
    rf_cpu_pool_free(pool);
    return 0;
}
