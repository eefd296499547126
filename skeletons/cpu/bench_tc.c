/*
** skeletons/cpu/bench_tc.c: transitive closure by semi-naive evaluation,
** written directly with the rf_cpu primitives (benchmark, not a test).
**
**   path(x, y) <- edge(x, y).
**   path(x, z) <- path(x, y), edge(y, z).
**
** The graph: n nodes on one random Hamiltonian cycle (so the whole graph is
** one strongly connected component and the closure has exactly n^2 tuples)
** plus `extra` random edges, fixed seed. Defaults: 2,600 nodes and 1,300
** extra edges (1.5 edges per node), 6,760,000 path tuples.
**
** Each round: delta join edge projected to the candidate (x, z) columns
** (rf_cpu_join_project), then rf_cpu_set_insert, which removes duplicates,
** takes the difference against path and appends the rest to path in one
** pass; the appended rows are the next delta (a view, not a copy). --plain instead runs rf_cpu_unique, then
** rf_cpu_union(path, candidates) (a difference and a concatenation), which
** costs time in |path| every round, for comparison.
**
** usage: bench_cpu_tc [--plain] [nodes [extra_edges [threads [rounds]]]]
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rf_cpu.h"
#include "rf_sys.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

#define CK(x)                                                                                                  \
    do {                                                                                                       \
        rf_status st_ = (x);                                                                                   \
        if (st_) {                                                                                             \
            fprintf(stderr, "bench_cpu_tc: %s failed (%d)\n", #x, (int)st_);                                  \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)

/* Candidates (x, z) of one round: delta join edge on delta.y = edge.x,
** projected to (delta.x, edge.y). */
static void derive(rf_cpu_pool *pool, const rf_cpu_table *delta, const rf_cpu_table *edge, rf_cpu_table *cand)
{
    int32_t lk = 1, rk = 0, lc = 0, rc = 1;
    CK(rf_cpu_join_project(pool, delta, &lk, edge, &rk, 1, &lc, 1, &rc, 1, cand));
}

int main(int argc, char **argv)
{
    int plain = 0, ai = 1;
    if (ai < argc && !strcmp(argv[ai], "--plain")) plain = 1, ai++;
    int64_t nodes = ai < argc ? atoll(argv[ai++]) : 2600;
    int64_t extra = ai < argc ? atoll(argv[ai++]) : 1300;
    int threads = ai < argc ? atoi(argv[ai++]) : 2;
    int runs = ai < argc ? atoi(argv[ai++]) : 3;
    if (nodes < 2 || extra < 0 || threads < 1 || runs < 1) {
        fprintf(stderr, "usage: bench_cpu_tc [--plain] [nodes [extra_edges [threads [runs]]]]\n");
        return 2;
    }

    /* The graph: a random cycle through every node, plus random edges. */
    int64_t m = nodes + extra;
    rf_cpu_kind kinds[2] = {RF_CPU_I64, RF_CPU_I64};
    rf_cpu_table raw;
    CK(rf_cpu_table_alloc(2, kinds, m, &raw));
    int64_t *perm = malloc((size_t)nodes * sizeof *perm), *src = raw.cols[0].data, *dst = raw.cols[1].data;
    if (!perm) CK(RF_ENOMEM);
    for (int64_t i = 0; i < nodes; i++) perm[i] = i;
    for (int64_t i = nodes - 1; i > 0; i--) {
        int64_t j = (int64_t)(rng() % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int64_t i = 0; i < nodes; i++) src[i] = perm[i], dst[i] = perm[(i + 1) % nodes];
    for (int64_t i = nodes; i < m; i++) {
        src[i] = (int64_t)(rng() % (uint64_t)nodes);
        do dst[i] = (int64_t)(rng() % (uint64_t)nodes);
        while (dst[i] == src[i]);
    }
    free(perm);

    rf_cpu_pool *pool;
    CK(rf_cpu_pool_new(threads, &pool));
    double best = 1e30;
    int64_t tuples = 0, rounds = 0, derived = 0;
    for (int run = 0; run < runs; run++) {
        double t0 = rf_now();
        int64_t *keep, nkeep;
        rf_cpu_table edge, delta;
        CK(rf_cpu_unique(pool, &raw, &keep, &nkeep));
        CK(rf_cpu_gather_table(pool, &raw, keep, nkeep, &edge));
        free(keep);
        rounds = derived = 0;
        if (!plain) {
            rf_cpu_set *path;
            rf_cpu_col dcols[2];
            CK(rf_cpu_set_new(2, kinds, &path));
            CK(rf_cpu_set_insert(pool, path, &edge, NULL, NULL));
            rf_cpu_set_view_from(path, 0, dcols, &delta); /* delta = edge */
            while (delta.nrows > 0) {
                rf_cpu_table cand;
                derive(pool, &delta, &edge, &cand);
                derived += cand.nrows;
                int64_t before = rf_cpu_set_size(path);
                CK(rf_cpu_set_insert(pool, path, &cand, NULL, NULL));
                rf_cpu_table_free(&cand);
                rf_cpu_set_view_from(path, before, dcols, &delta); /* the new rows, not copied */
                rounds++;
            }
            tuples = rf_cpu_set_size(path);
            rf_cpu_set_free(path);
            memset(&delta, 0, sizeof delta);
        } else {
            rf_cpu_table path;
            int64_t *all = malloc((size_t)edge.nrows * sizeof *all);
            if (!all) CK(RF_ENOMEM);
            for (int64_t i = 0; i < edge.nrows; i++) all[i] = i;
            CK(rf_cpu_gather_table(pool, &edge, all, edge.nrows, &path));
            CK(rf_cpu_gather_table(pool, &edge, all, edge.nrows, &delta));
            free(all);
            while (delta.nrows > 0) {
                rf_cpu_table cand, ucand, npath;
                derive(pool, &delta, &edge, &cand);
                derived += cand.nrows;
                CK(rf_cpu_unique(pool, &cand, &keep, &nkeep));
                CK(rf_cpu_gather_table(pool, &cand, keep, nkeep, &ucand));
                free(keep);
                rf_cpu_table_free(&cand);
                CK(rf_cpu_union(pool, &path, &ucand, &npath));
                rf_cpu_table_free(&ucand);
                /* delta = the rows the union appended */
                int64_t nd = npath.nrows - path.nrows;
                int64_t *tail = malloc((size_t)(nd ? nd : 1) * sizeof *tail);
                if (!tail) CK(RF_ENOMEM);
                for (int64_t i = 0; i < nd; i++) tail[i] = path.nrows + i;
                rf_cpu_table_free(&delta);
                CK(rf_cpu_gather_table(pool, &npath, tail, nd, &delta));
                free(tail);
                rf_cpu_table_free(&path);
                path = npath;
                rounds++;
            }
            tuples = path.nrows;
            rf_cpu_table_free(&path);
        }
        rf_cpu_table_free(&delta);
        rf_cpu_table_free(&edge);
        double t = rf_now() - t0;
        if (t < best) best = t;
        printf("run %d: %.3f s\n", run + 1, t);
    }
    printf("transitive closure (%s): %lld nodes, %lld edges, %d threads: %lld path tuples, %lld rounds, "
           "%lld derivations; best of %d: %.3f s\n",
           plain ? "unique + union" : "row set", (long long)nodes, (long long)m, threads, (long long)tuples,
           (long long)rounds, (long long)derived, runs, best);
    rf_cpu_pool_free(pool);
    rf_cpu_table_free(&raw);
    return tuples == nodes * nodes ? 0 : 1;
}
