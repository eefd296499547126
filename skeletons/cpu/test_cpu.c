/*
** skeletons/cpu/test_cpu.c: unit tests of the rf_cpu primitives.
**
** Each primitive is checked against a deliberately simple reference
** (nested loops, brute-force first occurrences, rf_value.h comparisons) on
** random data with duplicates, several kinds, empty and one-row inputs and
** all-equal keys, and its output must be byte-identical for pools of 1, 2
** and 4 threads. `test_cpu NAME` runs one group (the cpu_NAME ctest);
** `test_cpu` runs them all.
*/
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rf_cpu.h"
#include "rf_value.h"

static int failures;
#define CHECK(c)                                                                                               \
    do {                                                                                                       \
        if (!(c)) {                                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                              \
            failures++;                                                                                        \
            return;                                                                                            \
        }                                                                                                      \
    } while (0)
#define OK(x) CHECK((x) == RF_OK)

enum { NPOOLS = 3 };
static rf_cpu_pool *pools[NPOOLS];
static const int pool_threads[NPOOLS] = {1, 2, 4};

/* ---- random data ------------------------------------------------------ */

static uint64_t rs = 1;
static uint64_t rnd(void)
{
    uint64_t z = (rs += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double dbl_of_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}
static uint64_t bits_of_dbl(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

/* Special floats, so that every float test meets NaNs (with different
** payloads and signs), both zeros and the infinities. */
static double special_f64(uint64_t i)
{
    switch (i % 12) {
    case 0: return NAN;
    case 1: return dbl_of_bits(0xFFF8000000000001u); /* negative NaN with payload */
    case 2: return dbl_of_bits(0x7FF0000000000123u); /* signalling-pattern NaN */
    case 3: return -0.0;
    case 4: return 0.0;
    case 5: return INFINITY;
    case 6: return -INFINITY;
    case 7: return DBL_MAX;
    case 8: return -DBL_MAX;
    case 9: return DBL_MIN;
    case 10: return -DBL_MIN / 4; /* subnormal */
    default: return 1.5;
    }
}

/* A value drawn from about `domain` distinct values; wide: spread over the
** kind's whole range. */
static void fill_col(rf_cpu_col *c, int64_t n, uint64_t domain, int wide)
{
    if (domain == 0) domain = 1;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = rnd() % domain, salt = r * 0x9E3779B97F4A7C15u;
        switch (c->kind) {
        case RF_CPU_I64:
            ((int64_t *)c->data)[i] = wide ? (r == 0 ? INT64_MIN : r == 1 ? INT64_MAX : (int64_t)salt)
                                           : (int64_t)r - (int64_t)(domain / 2);
            break;
        case RF_CPU_F64:
            ((double *)c->data)[i] = r < 12 ? special_f64(r) : wide ? dbl_of_bits(salt) : (double)r * 0.25 - 3.0;
            if (wide && isnan(((double *)c->data)[i]) && r >= 12) ((double *)c->data)[i] = (double)r;
            break;
        case RF_CPU_I32:
            ((int32_t *)c->data)[i] = wide ? (int32_t)(uint32_t)salt : (int32_t)r - (int32_t)(domain / 2);
            break;
        case RF_CPU_U32: ((uint32_t *)c->data)[i] = wide ? (uint32_t)(salt >> 17) : (uint32_t)r; break;
        case RF_CPU_I128: {
            /* wide: the extremes, and values that differ only in the low word
            ** (whose order is unsigned) or only in the high word */
            rf_dec128 v = wide ? (r == 0   ? RF_DEC128_MIN
                                  : r == 1 ? RF_DEC128_MAX
                                           : (rf_dec128)(int64_t)(salt % 7 - 3) * ((rf_dec128)1 << 64) +
                                                 (rf_dec128)(salt >> 3))
                               : ((rf_dec128)r - (rf_dec128)(domain / 2)) * ((rf_dec128)1 << 62);
            ((rf_dec128 *)c->data)[i] = v;
            break;
        }
        default: ((uint8_t *)c->data)[i] = (uint8_t)(r & 1); break;
        }
    }
}

static int mk_table(rf_cpu_table *t, int32_t ncols, const rf_cpu_kind *kinds, int64_t n, uint64_t domain, int wide)
{
    if (rf_cpu_table_alloc(ncols, kinds, n, t)) return 0;
    for (int32_t i = 0; i < ncols; i++) fill_col(&t->cols[i], n, domain, wide);
    return 1;
}

/* ---- reference comparisons (rf_value.h semantics) --------------------- */

static int cmp_cell(const rf_cpu_col *a, int64_t i, const rf_cpu_col *b, int64_t j)
{
    switch (a->kind) {
    case RF_CPU_I64: return rf_val_cmp_int(((int64_t *)a->data)[i], ((int64_t *)b->data)[j]);
    case RF_CPU_F64: return rf_val_cmp_float(((double *)a->data)[i], ((double *)b->data)[j]);
    case RF_CPU_I32: return rf_val_cmp_int(((int32_t *)a->data)[i], ((int32_t *)b->data)[j]);
    case RF_CPU_U32: {
        uint32_t x = ((uint32_t *)a->data)[i], y = ((uint32_t *)b->data)[j];
        return x < y ? -1 : x > y;
    }
    case RF_CPU_I128: return rf_val_cmp_dec128(((rf_dec128 *)a->data)[i], ((rf_dec128 *)b->data)[j]);
    default: {
        uint8_t x = ((uint8_t *)a->data)[i], y = ((uint8_t *)b->data)[j];
        return x < y ? -1 : x > y;
    }
    }
}

static int cmp_keys(const rf_cpu_table *ta, const int32_t *ka, int64_t i, const rf_cpu_table *tb, const int32_t *kb,
                    int64_t j, int32_t nk, const uint8_t *desc)
{
    for (int32_t c = 0; c < nk; c++) {
        int r = cmp_cell(&ta->cols[ka[c]], i, &tb->cols[kb[c]], j);
        if (r) return desc && desc[c] ? -r : r;
    }
    return 0;
}

static int32_t ALL[64] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static void init_all(void)
{
    for (int i = 0; i < 64; i++) ALL[i] = i;
}

static int same_i64(const int64_t *a, const int64_t *b, int64_t n)
{
    return n == 0 || memcmp(a, b, (size_t)n * 8) == 0;
}

static int same_table(const rf_cpu_table *a, const rf_cpu_table *b)
{
    if (a->nrows != b->nrows || a->ncols != b->ncols) return 0;
    for (int32_t c = 0; c < a->ncols; c++)
        if (a->cols[c].kind != b->cols[c].kind ||
            (a->nrows && memcmp(a->cols[c].data, b->cols[c].data, (size_t)a->nrows * rf_cpu_kind_size(a->cols[c].kind))))
            return 0;
    return 1;
}

/* Rows i of a (all columns) equal row j of b, bit for bit. */
static int same_row_bits(const rf_cpu_table *a, int64_t i, const rf_cpu_table *b, int64_t j)
{
    for (int32_t c = 0; c < a->ncols; c++) {
        int sz = rf_cpu_kind_size(a->cols[c].kind);
        if (memcmp((char *)a->cols[c].data + i * sz, (char *)b->cols[c].data + j * sz, (size_t)sz)) return 0;
    }
    return 1;
}

/* ---- pool ------------------------------------------------------------- */

typedef struct pf_ctx {
    atomic_int *hits;
    int threads;
    atomic_int bad;
    rf_cpu_pool *pool;
    int nested;
} pf_ctx;

static void pf_fn(void *vp, int64_t b, int64_t e, int w)
{
    pf_ctx *c = vp;
    if (w < 0 || w >= c->threads || b >= e) atomic_store(&c->bad, 1);
    for (int64_t i = b; i < e; i++) {
        if (c->nested) {
            atomic_int one;
            atomic_init(&one, 0);
            pf_ctx inner = {&one, c->threads, 0, c->pool, 0};
            atomic_init(&inner.bad, 0);
            rf_cpu_parallel_for(c->pool, 1, 1, pf_fn, &inner); /* runs inline: the pool is busy */
            if (atomic_load(&one) != 1 || atomic_load(&inner.bad)) atomic_store(&c->bad, 1);
        }
        atomic_fetch_add(&c->hits[i], 1);
    }
}

static void test_pool(void)
{
    int64_t sizes[] = {0, 1, 7, 1000, 100003};
    int64_t grains[] = {0, 1, 13, 1000000};
    CHECK(rf_cpu_pool_threads(NULL) == 1);
    for (int p = 0; p < NPOOLS; p++) {
        CHECK(rf_cpu_pool_threads(pools[p]) == pool_threads[p]);
        for (int si = 0; si < 5; si++)
            for (int gi = 0; gi < 4; gi++) {
                int64_t n = sizes[si];
                if (gi == 1 && n > 1000) continue;
                atomic_int *hits = calloc((size_t)n + 1, sizeof *hits);
                CHECK(hits);
                pf_ctx c = {hits, pool_threads[p], 0, pools[p], 0};
                atomic_init(&c.bad, 0);
                rf_cpu_parallel_for(pools[p], n, grains[gi], pf_fn, &c);
                int ok = !atomic_load(&c.bad);
                for (int64_t i = 0; i < n; i++) ok &= atomic_load(&hits[i]) == 1;
                free(hits);
                CHECK(ok);
            }
        /* nested: the inner call must run inline rather than deadlock */
        atomic_int *hits = calloc(5000, sizeof *hits);
        CHECK(hits);
        pf_ctx c = {hits, pool_threads[p], 0, pools[p], 1};
        atomic_init(&c.bad, 0);
        rf_cpu_parallel_for(pools[p], 5000, 100, pf_fn, &c);
        int ok = !atomic_load(&c.bad);
        for (int64_t i = 0; i < 5000; i++) ok &= atomic_load(&hits[i]) == 1;
        free(hits);
        CHECK(ok);
    }
    rf_cpu_pool *bad = NULL;
    CHECK(rf_cpu_pool_new(0, &bad) == RF_EINTERNAL && !bad);
}

/* ---- gather ----------------------------------------------------------- */

static void test_gather(void)
{
    rf_cpu_kind kinds[6] = {RF_CPU_I64, RF_CPU_F64, RF_CPU_I32, RF_CPU_U32, RF_CPU_U8, RF_CPU_I128};
    int64_t sizes[] = {0, 1, 1000, 300000};
    for (int si = 0; si < 4; si++) {
        int64_t n = sizes[si], m = n ? n * 2 + 3 : 0;
        rf_cpu_table t;
        CHECK(mk_table(&t, 6, kinds, n, 1000000, 1));
        int64_t *idx = malloc((size_t)(m + 1) * 8);
        CHECK(idx);
        for (int64_t i = 0; i < m; i++) idx[i] = (int64_t)(rnd() % (uint64_t)n);
        rf_cpu_table ref = {0};
        for (int p = 0; p < NPOOLS; p++) {
            rf_cpu_table out;
            OK(rf_cpu_gather_table(pools[p], &t, idx, m, &out));
            CHECK(out.nrows == m && out.ncols == 6);
            for (int64_t i = 0; i < m; i++) CHECK(same_row_bits(&out, i, &t, idx[i]));
            if (p == 0)
                ref = out;
            else {
                CHECK(same_table(&ref, &out));
                rf_cpu_table_free(&out);
            }
        }
        rf_cpu_col one;
        OK(rf_cpu_gather(NULL, &t.cols[2], idx, m, &one));
        CHECK(one.kind == RF_CPU_I32 && (m == 0 || !memcmp(one.data, ref.cols[2].data, (size_t)m * 4)));
        free(one.data);
        rf_cpu_table_free(&ref);
        rf_cpu_table_free(&t);
        free(idx);
    }
}

/* ---- sort, top-k ------------------------------------------------------ */

typedef struct sort_case {
    int32_t nk;
    rf_cpu_kind kinds[3];
    uint8_t desc[3];
    int64_t n;
    uint64_t domain;
    int wide;
} sort_case;

static const sort_case sort_cases[] = {
    {1, {RF_CPU_I64}, {0}, 1000, 50, 0},
    {1, {RF_CPU_I64}, {1}, 70000, 100000, 0},
    {1, {RF_CPU_F64}, {0}, 3000, 40, 0},
    {1, {RF_CPU_F64}, {1}, 70000, 1000000, 1},
    {2, {RF_CPU_I32, RF_CPU_U32}, {0, 1}, 5000, 30, 0},
    {3, {RF_CPU_U8, RF_CPU_I64, RF_CPU_F64}, {1, 0, 1}, 20000, 20, 0},
    {2, {RF_CPU_I64, RF_CPU_I64}, {0, 1}, 70000, 1000, 1}, /* 128 bits: several words */
    {3, {RF_CPU_I64, RF_CPU_I32, RF_CPU_U32}, {1, 1, 0}, 70000, 300, 1},
    {1, {RF_CPU_U32}, {0}, 0, 5, 0},
    {1, {RF_CPU_U32}, {0}, 1, 5, 0},
    {2, {RF_CPU_I64, RF_CPU_U8}, {0, 0}, 2, 5, 0},
    {2, {RF_CPU_I64, RF_CPU_F64}, {1, 0}, 50000, 1, 0}, /* all keys equal */
    {1, {RF_CPU_I128}, {0}, 3000, 40, 0},                  /* wide decimals: two key parts */
    {1, {RF_CPU_I128}, {1}, 20000, 1000000, 1},
    {2, {RF_CPU_I128, RF_CPU_U32}, {0, 1}, 20000, 300, 1},
    {3, {RF_CPU_U8, RF_CPU_I128, RF_CPU_I128}, {1, 0, 1}, 5000, 20, 0},
};

static void test_sort(void)
{
    for (size_t ci = 0; ci < sizeof sort_cases / sizeof *sort_cases; ci++) {
        const sort_case *sc = &sort_cases[ci];
        rf_cpu_table t;
        CHECK(mk_table(&t, sc->nk, sc->kinds, sc->n, sc->domain, sc->wide));
        int64_t *ref = NULL;
        for (int p = 0; p < NPOOLS; p++) {
            int64_t *perm;
            OK(rf_cpu_sort_perm(pools[p], &t, ALL, sc->desc, sc->nk, &perm));
            if (p == 0) {
                ref = perm;
                char *seen = calloc((size_t)sc->n + 1, 1);
                CHECK(seen);
                int ok = 1;
                for (int64_t i = 0; i < sc->n; i++) {
                    ok &= perm[i] >= 0 && perm[i] < sc->n && !seen[perm[i]];
                    if (ok) seen[perm[i]] = 1;
                    if (ok && i > 0) {
                        int r = cmp_keys(&t, ALL, perm[i - 1], &t, ALL, perm[i], sc->nk, sc->desc);
                        ok &= r < 0 || (r == 0 && perm[i - 1] < perm[i]); /* ordered and stable */
                    }
                }
                free(seen);
                CHECK(ok);
            } else {
                CHECK(same_i64(ref, perm, sc->n));
                free(perm);
            }
        }
        /* top-k is the prefix of the stable sort */
        int64_t ks[] = {0, 1, 5, 100, 5000, sc->n, sc->n + 5};
        for (int ki = 0; ki < 7; ki++)
            for (int p = 0; p < NPOOLS; p++) {
                int64_t *top, nt, k = ks[ki];
                OK(rf_cpu_top_k(pools[p], &t, ALL, sc->desc, sc->nk, k, &top, &nt));
                int64_t want = k < sc->n ? k : sc->n;
                CHECK(nt == want && same_i64(top, ref, want));
                free(top);
            }
        free(ref);
        rf_cpu_table_free(&t);
    }
    /* float order: -inf < finite < inf < nan, -0.0 == 0.0 (stable) */
    double v[] = {NAN, 0.0, -INFINITY, -0.0, INFINITY, -1.0, dbl_of_bits(0xFFF8000000000001u), 0.0, 2.0};
    rf_cpu_col col = {RF_CPU_F64, v};
    rf_cpu_table t = {9, 1, &col};
    int64_t *perm;
    OK(rf_cpu_sort_perm(NULL, &t, ALL, NULL, 1, &perm));
    int64_t want[] = {2, 5, 1, 3, 7, 8, 4, 0, 6};
    CHECK(same_i64(perm, want, 9));
    free(perm);
    uint8_t d = 1;
    OK(rf_cpu_sort_perm(pools[1], &t, ALL, &d, 1, &perm));
    int64_t wantd[] = {0, 6, 4, 8, 1, 3, 7, 5, 2};
    CHECK(same_i64(perm, wantd, 9));
    free(perm);
    int32_t badcol = 3;
    CHECK(rf_cpu_sort_perm(NULL, &t, &badcol, NULL, 1, &perm) == RF_EINTERNAL);
}

static void test_topk(void)
{
    /* the heap path: k small against n */
    rf_cpu_kind kinds[2] = {RF_CPU_F64, RF_CPU_I32};
    uint8_t desc[2] = {1, 0};
    rf_cpu_table t;
    CHECK(mk_table(&t, 2, kinds, 200000, 5000, 0));
    int64_t *full;
    OK(rf_cpu_sort_perm(pools[2], &t, ALL, desc, 2, &full));
    int64_t ks[] = {1, 10, 1000, 4096};
    for (int ki = 0; ki < 4; ki++)
        for (int p = 0; p < NPOOLS; p++) {
            int64_t *top, nt;
            OK(rf_cpu_top_k(pools[p], &t, ALL, desc, 2, ks[ki], &top, &nt));
            CHECK(nt == ks[ki] && same_i64(top, full, nt));
            free(top);
        }
    free(full);
    rf_cpu_table_free(&t);
    /* all keys equal: the first k rows */
    CHECK(mk_table(&t, 1, kinds, 100000, 1, 0));
    int64_t *top, nt;
    OK(rf_cpu_top_k(pools[1], &t, ALL, desc, 1, 7, &top, &nt));
    int64_t want[] = {0, 1, 2, 3, 4, 5, 6};
    CHECK(nt == 7 && same_i64(top, want, 7));
    free(top);
    rf_cpu_table_free(&t);
}

/* ---- unique, group ---------------------------------------------------- */

/* Brute force: the first row equal to row i (all n^2 / 2 comparisons). */
static int64_t *first_equal(const rf_cpu_table *t, const int32_t *keys, int32_t nk)
{
    int64_t n = t->nrows, *f = malloc((size_t)(n + 1) * 8), nf = 0, *firsts = malloc((size_t)(n + 1) * 8);
    if (!f || !firsts) return NULL;
    for (int64_t i = 0; i < n; i++) {
        f[i] = i;
        for (int64_t j = 0; j < nf; j++)
            if (!cmp_keys(t, keys, firsts[j], t, keys, i, nk, NULL)) {
                f[i] = firsts[j];
                break;
            }
        if (f[i] == i) firsts[nf++] = i;
    }
    free(firsts);
    return f;
}

typedef struct tab_case {
    int32_t nc;
    rf_cpu_kind kinds[3];
    int64_t n;
    uint64_t domain;
    int wide;
} tab_case;

static const tab_case tab_cases[] = {
    {1, {RF_CPU_I64}, 0, 5, 0},
    {1, {RF_CPU_I64}, 1, 5, 0},
    {2, {RF_CPU_I64, RF_CPU_I64}, 2000, 30, 0},
    {1, {RF_CPU_F64}, 2000, 40, 0},
    {2, {RF_CPU_F64, RF_CPU_U8}, 3000, 20, 1},
    {3, {RF_CPU_I32, RF_CPU_U32, RF_CPU_U8}, 3000, 8, 0},
    {2, {RF_CPU_I64, RF_CPU_I64}, 3000, 60, 1},
    {2, {RF_CPU_U32, RF_CPU_I64}, 2500, 1, 0}, /* all equal */
    {1, {RF_CPU_U8}, 3000, 2, 0},
    {2, {RF_CPU_I64, RF_CPU_F64}, 30000, 150, 0}, /* > the serial build size */
    {1, {RF_CPU_I64}, 40000, 100000, 0},          /* many distinct: partitioned */
    {1, {RF_CPU_I128}, 3000, 40, 0},               /* wide decimals: two key parts */
    {2, {RF_CPU_I128, RF_CPU_U32}, 3000, 30, 1},
    {2, {RF_CPU_I64, RF_CPU_I128}, 30000, 150, 0},
};

static void test_unique(void)
{
    for (size_t ci = 0; ci < sizeof tab_cases / sizeof *tab_cases; ci++) {
        const tab_case *tc = &tab_cases[ci];
        rf_cpu_table t;
        CHECK(mk_table(&t, tc->nc, tc->kinds, tc->n, tc->domain, tc->wide));
        int64_t *f = first_equal(&t, ALL, tc->nc);
        CHECK(f);
        int64_t *ref = NULL, nref = 0;
        for (int p = 0; p < NPOOLS; p++) {
            int64_t *keep, nk;
            OK(rf_cpu_unique(pools[p], &t, &keep, &nk));
            if (p == 0) {
                int64_t j = 0;
                int ok = 1;
                for (int64_t i = 0; i < tc->n; i++)
                    if (f[i] == i) ok &= j < nk && keep[j++] == i;
                CHECK(ok && j == nk);
                ref = keep;
                nref = nk;
            } else {
                CHECK(nk == nref && same_i64(keep, ref, nk));
                free(keep);
            }
        }
        free(ref);
        free(f);
        rf_cpu_table_free(&t);
    }
    /* -0.0 == 0.0 and NaNs are one value */
    double v[] = {0.0, -0.0, NAN, dbl_of_bits(0xFFF8000000000001u), 1.0, dbl_of_bits(0x7FF0000000000123u), -0.0};
    rf_cpu_col col = {RF_CPU_F64, v};
    rf_cpu_table t = {7, 1, &col};
    int64_t *keep, nk;
    OK(rf_cpu_unique(pools[1], &t, &keep, &nk));
    int64_t want[] = {0, 2, 4};
    CHECK(nk == 3 && same_i64(keep, want, 3));
    free(keep);
    /* zero columns: one empty tuple */
    rf_cpu_table z = {5, 0, NULL};
    OK(rf_cpu_unique(NULL, &z, &keep, &nk));
    CHECK(nk == 1 && keep[0] == 0);
    free(keep);
}

/* Checks g against brute force (or, for big inputs, against its own
** invariants plus the distinct count from rf_cpu_unique). */
static void check_groups(const rf_cpu_table *t, const int32_t *keys, int32_t nk, const rf_cpu_groups *g, int brute)
{
    int64_t n = t->nrows;
    CHECK(g->nrows == n);
    if (nk == 0) {
        CHECK(g->ngroups == (n > 0));
        for (int64_t i = 0; i < n; i++) CHECK(g->group_of_row[i] == 0);
        if (n) CHECK(g->first_row[0] == 0);
        return;
    }
    for (int64_t k = 0; k < g->ngroups; k++) {
        CHECK(g->first_row[k] >= 0 && g->first_row[k] < n && g->group_of_row[g->first_row[k]] == k);
        if (k) CHECK(g->first_row[k - 1] < g->first_row[k]);
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t k = g->group_of_row[i];
        CHECK(k >= 0 && k < g->ngroups && g->first_row[k] <= i);
        CHECK(!cmp_keys(t, keys, i, t, keys, g->first_row[k], nk, NULL));
    }
    if (brute) {
        int64_t *f = first_equal(t, keys, nk);
        CHECK(f);
        int ok = 1;
        for (int64_t i = 0; i < n; i++) ok &= g->first_row[g->group_of_row[i]] == f[i];
        free(f);
        CHECK(ok);
    } else {
        /* no two groups share a key: as many groups as distinct keys */
        rf_cpu_table kt = {n, nk, malloc((size_t)nk * sizeof(rf_cpu_col))};
        CHECK(kt.cols);
        for (int32_t c = 0; c < nk; c++) kt.cols[c] = t->cols[keys[c]];
        int64_t *keep, nkeep;
        rf_status st = rf_cpu_unique(NULL, &kt, &keep, &nkeep);
        free(kt.cols);
        OK(st);
        CHECK(nkeep == g->ngroups && same_i64(keep, g->first_row, nkeep));
        free(keep);
    }
}

static void group_all_pools(const rf_cpu_table *t, const int32_t *keys, int32_t nk, int brute)
{
    rf_cpu_groups ref = {0};
    for (int p = 0; p < NPOOLS; p++) {
        rf_cpu_groups g;
        OK(rf_cpu_group(pools[p], t, keys, nk, &g));
        if (p == 0) {
            check_groups(t, keys, nk, &g, brute);
            ref = g;
        } else {
            CHECK(g.ngroups == ref.ngroups && same_i64(g.group_of_row, ref.group_of_row, g.nrows) &&
                  same_i64(g.first_row, ref.first_row, g.ngroups));
            rf_cpu_groups_free(&g);
        }
    }
    rf_cpu_groups_order(pools[1], &ref);
    CHECK(ref.order && ref.offsets && ref.offsets[0] == 0 && ref.offsets[ref.ngroups] == ref.nrows);
    for (int64_t k = 0; k < ref.ngroups; k++)
        for (int64_t j = ref.offsets[k]; j < ref.offsets[k + 1]; j++) {
            CHECK(ref.group_of_row[ref.order[j]] == k);
            if (j > ref.offsets[k]) CHECK(ref.order[j - 1] < ref.order[j]);
        }
    rf_cpu_groups_free(&ref);
}

static void test_group(void)
{
    for (size_t ci = 0; ci < sizeof tab_cases / sizeof *tab_cases; ci++) {
        const tab_case *tc = &tab_cases[ci];
        rf_cpu_table t;
        CHECK(mk_table(&t, tc->nc, tc->kinds, tc->n, tc->domain, tc->wide));
        int32_t rev[3] = {tc->nc - 1, 0, 1};
        group_all_pools(&t, ALL, tc->nc, tc->n <= 5000);
        group_all_pools(&t, rev, 1, tc->n <= 5000);
        group_all_pools(&t, ALL, 0, 1);
        rf_cpu_table_free(&t);
    }
    /* bigger: few groups (probe mode), few groups appearing late, many groups */
    rf_cpu_kind kinds[2] = {RF_CPU_I64, RF_CPU_U32};
    rf_cpu_table t;
    CHECK(mk_table(&t, 2, kinds, 600000, 6, 0));
    group_all_pools(&t, ALL, 2, 0);
    for (int64_t i = 500000; i < 600000; i += 7) ((int64_t *)t.cols[0].data)[i] = i % 5000; /* late new keys */
    group_all_pools(&t, ALL, 2, 0);
    rf_cpu_table_free(&t);
    CHECK(mk_table(&t, 2, kinds, 600000, 700, 0));
    group_all_pools(&t, ALL, 2, 0);
    rf_cpu_table_free(&t);
}

/* Rows in order of column 0 (runs of equal values, checked by brute force
** against the hash paths' semantics): unique and group take the run path
** when runs are short and fall back to hashing when a run is long or the
** order breaks late. */
static void unique_all_pools(const rf_cpu_table *t)
{
    int64_t *f = first_equal(t, ALL, t->ncols), *ref = NULL, nref = 0;
    CHECK(f);
    for (int p = 0; p < NPOOLS; p++) {
        int64_t *keep, nk;
        OK(rf_cpu_unique(pools[p], t, &keep, &nk));
        if (p == 0) {
            int64_t j = 0;
            int ok = 1;
            for (int64_t i = 0; i < t->nrows; i++)
                if (f[i] == i) ok &= j < nk && keep[j++] == i;
            CHECK(ok && j == nk);
            ref = keep;
            nref = nk;
        } else {
            CHECK(nk == nref && same_i64(keep, ref, nk));
            free(keep);
        }
    }
    free(ref);
    free(f);
}

static void test_runs(void)
{
    rf_cpu_kind kinds[3] = {RF_CPU_I64, RF_CPU_U32, RF_CPU_F64};
    int64_t runlen[] = {1, 3, 17, 64, 65, 200};
    for (size_t ri = 0; ri < sizeof runlen / sizeof *runlen; ri++)
        for (int brk = 0; brk < 2; brk++) {
            rf_cpu_table t;
            int64_t n = 6000; /* past the serial precheck: a late break fails the parallel check */
            CHECK(mk_table(&t, 3, kinds, n, 3, 0));
            int64_t *c0 = t.cols[0].data;
            for (int64_t i = 0; i < n; i++) c0[i] = -50 + (i / runlen[ri]) * 3;
            if (brk) c0[n - 10] = -1000; /* out of order, late */
            unique_all_pools(&t);
            int32_t k01[2] = {0, 1}, k10[2] = {1, 0};
            group_all_pools(&t, k01, 2, 1);
            group_all_pools(&t, k10, 2, 1);
            group_all_pools(&t, ALL, 1, 1);
            /* strictly increasing: every row kept, groups are the rows */
            for (int64_t i = 0; i < n; i++) c0[i] = i;
            unique_all_pools(&t);
            group_all_pools(&t, k01, 2, 1);
            rf_cpu_table_free(&t);
        }
    /* one key column, and two 64-bit ones, over many chunks: runs that
    ** cross chunk boundaries. Rows are in c0 order, so the first row equal
    ** to row i (on c0, or on c0 and c1) lies in i's run of c0. */
    rf_cpu_kind k2[2] = {RF_CPU_I64, RF_CPU_I64};
    int64_t runlen2[] = {1, 5, 40, 300};
    for (size_t ri = 0; ri < sizeof runlen2 / sizeof *runlen2; ri++) {
        rf_cpu_table t2;
        int64_t n = 200000, L = runlen2[ri];
        CHECK(mk_table(&t2, 2, k2, n, 4, 0));
        int64_t *c0 = t2.cols[0].data, *c1 = t2.cols[1].data;
        for (int64_t i = 0; i < n; i++) c0[i] = (i / L) * 2 - 7;
        int64_t *f1 = malloc((size_t)n * 8), *f2 = malloc((size_t)n * 8), nf2 = 0;
        CHECK(f1 && f2);
        for (int64_t i = 0; i < n; i++) {
            f1[i] = f2[i] = (i / L) * L;
            while (c1[f2[i]] != c1[i]) f2[i]++;
            nf2 += f2[i] == i;
        }
        int32_t k01[2] = {0, 1}, k10[2] = {1, 0};
        for (int p = 0; p < NPOOLS; p++) {
            int64_t *keep, nk;
            OK(rf_cpu_unique(pools[p], &t2, &keep, &nk));
            int ok = nk == nf2;
            for (int64_t i = 0, j = 0; i < n && ok; i++)
                if (f2[i] == i) ok &= keep[j++] == i;
            CHECK(ok);
            free(keep);
            for (int v = 0; v < 3; v++) {
                rf_cpu_groups g;
                const int64_t *f = v == 2 ? f1 : f2;
                OK(rf_cpu_group(pools[p], &t2, v == 0 ? k01 : v == 1 ? k10 : ALL, v == 2 ? 1 : 2, &g));
                check_groups(&t2, v == 0 ? k01 : v == 1 ? k10 : ALL, v == 2 ? 1 : 2, &g, 0);
                ok = 1;
                for (int64_t i = 0; i < n; i++) ok &= g.first_row[g.group_of_row[i]] == f[i];
                CHECK(ok);
                rf_cpu_groups_free(&g);
            }
        }
        free(f1);
        free(f2);
        rf_cpu_table_free(&t2);
    }
    /* groupings for aggregates only: one sorted key column leaves the rows
    ** unlabelled when the groups are many, and labels them when few; the
    ** aggregates agree with those over a full grouping */
    for (int gi = 0; gi < 2; gi++) {
        rf_cpu_kind kk[2] = {RF_CPU_I64, RF_CPU_I64};
        rf_cpu_table t2;
        int64_t n = 150000, per = gi ? 7 : 1000; /* 21,429 or 150 groups */
        CHECK(mk_table(&t2, 2, kk, n, 1000, 1));
        for (int64_t i = 0; i < n; i++) ((int64_t *)t2.cols[0].data)[i] = i / per;
        for (int p = 0; p < NPOOLS; p++) {
            rf_cpu_groups full, lazy;
            OK(rf_cpu_group(pools[p], &t2, ALL, 1, &full));
            OK(rf_cpu_group_for_agg(pools[p], &t2, ALL, 1, &lazy));
            CHECK(lazy.ngroups == full.ngroups && same_i64(lazy.first_row, full.first_row, full.ngroups));
            CHECK(gi ? lazy.group_of_row == NULL : same_i64(lazy.group_of_row, full.group_of_row, n));
            int64_t *c1, *c2, m1[21430], m2[21430], x1[21430], x2[21430];
            rf_dec128 *s1, *s2;
            OK(rf_cpu_agg_count(pools[p], &full, &c1));
            OK(rf_cpu_agg_count(pools[p], &lazy, &c2));
            OK(rf_cpu_agg_sum_i64(pools[p], &full, t2.cols[1].data, &s1));
            OK(rf_cpu_agg_sum_i64(pools[p], &lazy, t2.cols[1].data, &s2));
            OK(rf_cpu_agg_minmax_i64(pools[p], &full, t2.cols[1].data, m1, x1));
            OK(rf_cpu_agg_minmax_i64(pools[p], &lazy, t2.cols[1].data, m2, x2));
            int ok = 1;
            for (int64_t k = 0; k < full.ngroups; k++)
                ok &= c1[k] == c2[k] && s1[k] == s2[k] && m1[k] == m2[k] && x1[k] == x2[k];
            CHECK(ok);
            free(c1);
            free(c2);
            free(s1);
            free(s2);
            rf_cpu_groups_free(&full);
            rf_cpu_groups_free(&lazy);
        }
        rf_cpu_table_free(&t2);
    }
    /* a sum over contiguous groups equals the hash path's */
    rf_cpu_table t;
    CHECK(mk_table(&t, 2, kinds, 100000, 1000, 0));
    int64_t *c0 = t.cols[0].data;
    for (int64_t i = 0; i < 100000; i++) c0[i] = i / 7;
    rf_cpu_groups g;
    OK(rf_cpu_group(pools[1], &t, ALL, 1, &g));
    CHECK(g.contiguous && g.ngroups == (100000 + 6) / 7);
    int64_t *cnt = NULL;
    OK(rf_cpu_agg_count(pools[1], &g, &cnt));
    int ok = 1;
    for (int64_t k = 0; k < g.ngroups; k++) ok &= cnt[k] == (k < g.ngroups - 1 ? 7 : 100000 - 7 * k);
    CHECK(ok);
    free(cnt);
    rf_cpu_groups_free(&g);
    rf_cpu_table_free(&t);
}

/* ---- aggregates ------------------------------------------------------- */

static int total_order_less(double a, double b)
{
    uint64_t x = bits_of_dbl(a), y = bits_of_dbl(b);
    x = (x >> 63) ? ~x : x | (UINT64_C(1) << 63);
    y = (y >> 63) ? ~y : y | (UINT64_C(1) << 63);
    return x < y;
}

/* Sums, minima and maxima of 128-bit values against serial loops, and a
** sum beyond the range reported with its group. */
static void test_agg_wide(void)
{
    rf_cpu_kind kk = RF_CPU_I64, vk = RF_CPU_I128;
    int64_t sizes[] = {0, 1, 5000, 100000};
    for (int si = 0; si < 4; si++) {
        int64_t n = sizes[si];
        rf_cpu_table keys, vals;
        CHECK(mk_table(&keys, 1, &kk, n, si == 3 ? 20000 : 7, 0));
        CHECK(mk_table(&vals, 1, &vk, n, 1000000, 1));
        rf_dec128 *v = vals.cols[0].data;
        for (int64_t i = 0; i < n; i++) /* keep the sums in range: |v| < 2^100 */
            if (v[i] > ((rf_dec128)1 << 100) || v[i] < -((rf_dec128)1 << 100)) v[i] >>= 30;
        for (int p = 0; p < NPOOLS; p++) {
            rf_cpu_groups g;
            OK(rf_cpu_group_for_agg(pools[p], &keys, ALL, 1, &g));
            int64_t G = g.ngroups;
            rf_dec128 *sum;
            int64_t bad;
            rf_cpu_col mn, mx;
            OK(rf_cpu_agg_sum_i128(pools[p], &g, v, &sum, &bad));
            OK(rf_cpu_agg_min(pools[p], &g, &vals.cols[0], &mn));
            OK(rf_cpu_agg_max(pools[p], &g, &vals.cols[0], &mx));
            CHECK(bad == -1 && mn.kind == RF_CPU_I128 && mx.kind == RF_CPU_I128);
            rf_cpu_groups gr;
            OK(rf_cpu_group(NULL, &keys, ALL, 1, &gr)); /* group ids for the reference */
            rf_dec128 *rs_ = calloc((size_t)G + 1, 16), *rmn = calloc((size_t)G + 1, 16), *rmx = calloc((size_t)G + 1, 16);
            uint8_t *seen = calloc((size_t)G + 1, 1);
            CHECK(rs_ && rmn && rmx && seen && gr.ngroups == G);
            for (int64_t i = 0; i < n; i++) {
                int64_t gi = gr.group_of_row[i];
                rs_[gi] += v[i];
                if (!seen[gi] || v[i] < rmn[gi]) rmn[gi] = v[i];
                if (!seen[gi] || v[i] > rmx[gi]) rmx[gi] = v[i];
                seen[gi] = 1;
            }
            int ok = 1;
            for (int64_t gi = 0; gi < G; gi++)
                ok &= sum[gi] == rs_[gi] && ((rf_dec128 *)mn.data)[gi] == rmn[gi] && ((rf_dec128 *)mx.data)[gi] == rmx[gi];
            CHECK(ok);
            free(rs_), free(rmn), free(rmx), free(seen);
            free(sum), free(mn.data), free(mx.data);
            rf_cpu_groups_free(&gr);
            rf_cpu_groups_free(&g);
        }
        if (n >= 2) {
            /* two maxima in one group overflow: the group is named */
            int64_t *kv = keys.cols[0].data;
            kv[n - 1] = kv[0];
            v[0] = v[n - 1] = RF_DEC128_MAX;
            rf_cpu_groups g;
            OK(rf_cpu_group(NULL, &keys, ALL, 1, &g));
            rf_dec128 *sum;
            int64_t bad;
            OK(rf_cpu_agg_sum_i128(NULL, &g, v, &sum, &bad));
            CHECK(bad == g.group_of_row[0] && sum[bad] == RF_CPU_I128_OUT);
            /* every other group's sum whole (the caller names the least key) */
            int others = 1;
            for (int64_t gi = 0; gi < g.ngroups; gi++) others &= gi == bad || sum[gi] != RF_CPU_I128_OUT;
            CHECK(others);
            free(sum);
            rf_cpu_groups_free(&g);
        }
        rf_cpu_table_free(&keys);
        rf_cpu_table_free(&vals);
    }
    /* partial sums beyond the range, totals within it: exact in either order
    ** (the GPU's 192-bit accumulators check only the total) */
    rf_cpu_table keys, vals;
    CHECK(mk_table(&keys, 1, &kk, 3, 7, 0));
    CHECK(mk_table(&vals, 1, &vk, 3, 7, 1));
    int64_t *kv = keys.cols[0].data;
    rf_dec128 *v = vals.cols[0].data;
    kv[0] = kv[1] = kv[2] = 1;
    rf_dec128 orders[2][3] = {{RF_DEC128_MAX, RF_DEC128_MAX, -RF_DEC128_MAX},
                              {RF_DEC128_MIN, -5, RF_DEC128_MAX}};
    rf_dec128 want[2] = {RF_DEC128_MAX, -5};
    for (int o = 0; o < 2; o++) {
        memcpy(v, orders[o], sizeof orders[o]);
        rf_cpu_groups g;
        OK(rf_cpu_group(NULL, &keys, ALL, 1, &g));
        rf_dec128 *sum;
        int64_t bad;
        OK(rf_cpu_agg_sum_i128(NULL, &g, v, &sum, &bad));
        CHECK(bad == -1 && g.ngroups == 1 && sum[0] == want[o]);
        free(sum);
        rf_cpu_groups_free(&g);
    }
    /* one past the range after such a detour: still the group's error */
    rf_dec128 past[3] = {RF_DEC128_MAX, 1, 0};
    memcpy(v, past, sizeof past);
    rf_cpu_groups g;
    OK(rf_cpu_group(NULL, &keys, ALL, 1, &g));
    rf_dec128 *sum;
    int64_t bad;
    OK(rf_cpu_agg_sum_i128(NULL, &g, v, &sum, &bad));
    CHECK(bad == 0 && sum[0] == RF_CPU_I128_OUT);
    free(sum);
    rf_cpu_groups_free(&g);
    rf_cpu_table_free(&keys);
    rf_cpu_table_free(&vals);
}

static void test_agg_case(int64_t n, uint64_t gdomain)
{
    rf_cpu_kind kk = RF_CPU_I64;
    rf_cpu_table keys;
    CHECK(mk_table(&keys, 1, &kk, n, gdomain, 0));
    rf_cpu_kind vk[5] = {RF_CPU_I64, RF_CPU_F64, RF_CPU_I32, RF_CPU_U32, RF_CPU_U8};
    rf_cpu_table vals;
    CHECK(mk_table(&vals, 5, vk, n, 1000, 1));
    for (int64_t i = 0; i < n; i++) /* keep sums away from float cancellation */
        if (!isfinite(((double *)vals.cols[1].data)[i]) || fabs(((double *)vals.cols[1].data)[i]) > 1e300)
            ((double *)vals.cols[1].data)[i] = (double)(i % 17);
    /* one group with only zeros of both signs and NaNs, for min/max ties */
    double *fv = vals.cols[1].data;
    int64_t *kv = keys.cols[0].data;
    for (int64_t i = 0; i < n && i < 40; i++) {
        kv[i] = 123456789;
        fv[i] = (i % 3 == 0) ? -0.0 : (i % 3 == 1) ? 0.0 : 0.0;
    }
    rf_cpu_groups g;
    OK(rf_cpu_group(pools[1], &keys, ALL, 1, &g));
    int64_t G = g.ngroups;
    /* reference: serial loops */
    int64_t *cnt = calloc((size_t)G + 1, 8);
    rf_dec128 *sum = calloc((size_t)G + 1, sizeof *sum);
    double *fsum = calloc((size_t)G + 1, 8);
    int64_t *mn[5], *mx[5]; /* row of the min / max per group */
    for (int c = 0; c < 5; c++) mn[c] = malloc((size_t)(G + 1) * 8), mx[c] = malloc((size_t)(G + 1) * 8);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = g.group_of_row[i];
        sum[k] += ((int64_t *)vals.cols[0].data)[i];
        fsum[k] += fv[i];
        for (int c = 0; c < 5; c++) {
            if (!cnt[k]) {
                mn[c][k] = mx[c][k] = i;
                continue;
            }
            int r = cmp_cell(&vals.cols[c], i, &vals.cols[c], mn[c][k]);
            if (r < 0 || (r == 0 && c == 1 && total_order_less(fv[i], fv[mn[c][k]]))) mn[c][k] = i;
            r = cmp_cell(&vals.cols[c], i, &vals.cols[c], mx[c][k]);
            if (r > 0 || (r == 0 && c == 1 && total_order_less(fv[mx[c][k]], fv[i]))) mx[c][k] = i;
        }
        cnt[k]++;
    }
    int64_t *rc = NULL;
    rf_dec128 *rsum = NULL;
    double *rfs = NULL;
    rf_cpu_col rmin[5], rmax[5];
    for (int p = 0; p < NPOOLS; p++) {
        rf_cpu_groups gp;
        OK(rf_cpu_group(pools[p], &keys, ALL, 1, &gp));
        int64_t *c1;
        rf_dec128 *s1;
        double *f1;
        OK(rf_cpu_agg_count(pools[p], &gp, &c1));
        OK(rf_cpu_agg_sum_i64(pools[p], &gp, vals.cols[0].data, &s1));
        OK(rf_cpu_agg_sum_f64(pools[p], &gp, fv, &f1));
        for (int c = 0; c < 5; c++) {
            rf_cpu_col a, b;
            OK(rf_cpu_agg_min(pools[p], &gp, &vals.cols[c], &a));
            OK(rf_cpu_agg_max(pools[p], &gp, &vals.cols[c], &b));
            CHECK(a.kind == vk[c] && b.kind == vk[c]);
            if (p == 0) {
                rmin[c] = a;
                rmax[c] = b;
                rf_cpu_table mt = {G, 1, &a}, xt = {G, 1, &b}, vt = {n, 1, &vals.cols[c]};
                for (int64_t k = 0; k < G; k++) {
                    CHECK(same_row_bits(&mt, k, &vt, mn[c][k]));
                    CHECK(same_row_bits(&xt, k, &vt, mx[c][k]));
                }
            } else {
                int sz = rf_cpu_kind_size(vk[c]);
                CHECK(!memcmp(a.data, rmin[c].data, (size_t)(G * sz)) && !memcmp(b.data, rmax[c].data, (size_t)(G * sz)));
                free(a.data);
                free(b.data);
            }
        }
        if (p == 0) {
            rc = c1, rsum = s1, rfs = f1;
            for (int64_t k = 0; k < G; k++) {
                CHECK(c1[k] == cnt[k] && s1[k] == sum[k]);
                CHECK(fabs(f1[k] - fsum[k]) <= 1e-9 * (fabs(fsum[k]) + 1));
            }
        } else {
            CHECK(same_i64(c1, rc, G) && !memcmp(s1, rsum, (size_t)G * sizeof *s1) && !memcmp(f1, rfs, (size_t)G * 8));
            free(c1), free(s1), free(f1);
        }
        rf_cpu_groups_free(&gp);
    }
    /* the all-zeros group: min is -0.0, max is +0.0 */
    if (n >= 40) {
        int64_t k = g.group_of_row[0];
        CHECK(signbit(((double *)rmin[1].data)[k]) && !signbit(((double *)rmax[1].data)[k]));
    }
    for (int c = 0; c < 5; c++) free(rmin[c].data), free(rmax[c].data), free(mn[c]), free(mx[c]);
    free(rc), free(rsum), free(rfs), free(cnt), free(sum), free(fsum);
    rf_cpu_groups_free(&g);
    rf_cpu_table_free(&keys);
    rf_cpu_table_free(&vals);
}

static void test_agg(void)
{
    test_agg_case(0, 10);
    test_agg_case(1, 10);
    test_agg_case(5000, 1);         /* one group */
    test_agg_case(300000, 7);       /* few groups: row blocks */
    test_agg_case(300000, 100000);  /* many groups: CSR */
    test_agg_case(20000, 5000);
    /* zero keys: one group of everything */
    int64_t v[3] = {INT64_MAX, INT64_MAX, -5};
    rf_cpu_col col = {RF_CPU_I64, v};
    rf_cpu_table t = {3, 1, &col};
    rf_cpu_groups g;
    OK(rf_cpu_group(NULL, &t, NULL, 0, &g));
    rf_dec128 *s;
    OK(rf_cpu_agg_sum_i64(NULL, &g, v, &s));
    CHECK(g.ngroups == 1 && s[0] == (rf_dec128)INT64_MAX * 2 - 5); /* exact beyond 64 bits */
    free(s);
    rf_cpu_groups_free(&g);
    /* min and max in one pass equal min and max one by one: few groups,
    ** many groups in row order (contiguous) and scattered */
    for (int gi = 0; gi < 3; gi++) {
        rf_cpu_kind kk = RF_CPU_I64;
        rf_cpu_table keys, vals;
        CHECK(mk_table(&keys, 1, &kk, 100000, gi ? 20000 : 9, 0));
        CHECK(mk_table(&vals, 1, &kk, 100000, 1000, 1));
        if (gi == 2)
            for (int64_t i = 0; i < 100000; i++) ((int64_t *)keys.cols[0].data)[i] = i / 5;
        for (int p = 0; p < NPOOLS; p++) {
            rf_cpu_groups gg;
            OK(rf_cpu_group(pools[p], &keys, ALL, 1, &gg));
            int64_t *mn = malloc((size_t)gg.ngroups * 8 + 8), *mx = malloc((size_t)gg.ngroups * 8 + 8);
            CHECK(mn && mx);
            OK(rf_cpu_agg_minmax_i64(pools[p], &gg, vals.cols[0].data, mn, mx));
            rf_cpu_col a = {RF_CPU_I64, NULL}, b = {RF_CPU_I64, NULL};
            OK(rf_cpu_agg_min(pools[p], &gg, &vals.cols[0], &a));
            OK(rf_cpu_agg_max(pools[p], &gg, &vals.cols[0], &b));
            CHECK(same_i64(mn, a.data, gg.ngroups) && same_i64(mx, b.data, gg.ngroups));
            free(a.data);
            free(b.data);
            free(mn);
            free(mx);
            rf_cpu_groups_free(&gg);
        }
        rf_cpu_table_free(&keys);
        rf_cpu_table_free(&vals);
    }
    /* several sums in one pass equal the sums one by one, overflowing lanes
    ** and all, for few groups (one pass) and many (column by column) */
    for (int gi = 0; gi < 2; gi++) {
        rf_cpu_kind kk = RF_CPU_I64, vk[3] = {RF_CPU_I64, RF_CPU_I64, RF_CPU_I64};
        rf_cpu_table keys, vals;
        CHECK(mk_table(&keys, 1, &kk, 200000, gi ? 5000 : 9, 0));
        CHECK(mk_table(&vals, 3, vk, 200000, 1000, 1));
        int64_t *v2 = vals.cols[2].data;
        for (int64_t i = 0; i < 200000; i++) v2[i] = INT64_MAX - (i % 5); /* lanes overflow */
        const int64_t *vp[3] = {vals.cols[0].data, vals.cols[1].data, v2};
        for (int p = 0; p < NPOOLS; p++) {
            rf_cpu_groups gg;
            OK(rf_cpu_group(pools[p], &keys, ALL, 1, &gg));
            rf_dec128 *multi[3], *one;
            OK(rf_cpu_agg_sums_i64(pools[p], &gg, 3, vp, multi));
            for (int c = 0; c < 3; c++) {
                OK(rf_cpu_agg_sum_i64(pools[p], &gg, vp[c], &one));
                int ok = 1;
                for (int64_t k = 0; k < gg.ngroups; k++) ok &= one[k] == multi[c][k];
                CHECK(ok);
                free(one);
                free(multi[c]);
            }
            rf_cpu_groups_free(&gg);
        }
        rf_cpu_table_free(&keys);
        rf_cpu_table_free(&vals);
    }
}

/* ---- joins ------------------------------------------------------------ */

/* Whether a join's pairs given in parts of at most bound (*parts of them),
** laid end to end, are rl, rr (nref pairs, rf_cpu_hash_join's), in order. */
static int parts_match(rf_cpu_pool *pool, const rf_cpu_table *l, const int32_t *lkeys, const rf_cpu_table *r,
                       const int32_t *rkeys, int32_t nk, const rf_cpu_join_side *side, int64_t bound,
                       const int64_t *rl, const int64_t *rr, int64_t nref, int64_t *parts)
{
    rf_cpu_join_parts *jp = NULL;
    if (rf_cpu_join_parts_new(pool, l, lkeys, r, rkeys, nk, side, &jp)) return 0;
    int ok = rf_cpu_join_parts_total(jp) == nref;
    int64_t at = 0, *pl, *pr, pn;
    *parts = 0;
    for (;;) {
        if (rf_cpu_join_parts_next(pool, jp, bound, &pl, &pr, &pn)) {
            ok = 0;
            break;
        }
        if (pn == 0) {
            free(pl);
            free(pr);
            break;
        }
        ok &= at + pn <= nref && same_i64(pl, rl + at, pn) && same_i64(pr, rr + at, pn) && pn <= bound;
        at += pn;
        ++*parts;
        free(pl);
        free(pr);
    }
    rf_cpu_join_parts_free(jp);
    return ok && at == nref;
}

typedef struct join_case {
    int32_t nk;
    rf_cpu_kind kinds[2];
    int64_t ln, rn;
    uint64_t domain;
    int wide; /* values spread over the kind's range: hashed, not a dense index */
} join_case;

static const join_case join_cases[] = {
    {1, {RF_CPU_I64}, 500, 2000, 300, 0},
    {1, {RF_CPU_I64}, 2000, 500, 300, 0},
    {1, {RF_CPU_I64}, 700, 700, 5000, 0},
    {2, {RF_CPU_F64, RF_CPU_U8}, 1500, 900, 20, 0},
    {2, {RF_CPU_I32, RF_CPU_U32}, 800, 1600, 15, 0},
    {1, {RF_CPU_U32}, 300, 200, 1, 0}, /* all keys equal: 60,000 pairs */
    {1, {RF_CPU_F64}, 0, 100, 5, 0},
    {1, {RF_CPU_F64}, 100, 0, 5, 0},
    {1, {RF_CPU_I64}, 1, 1, 1, 0},
    {0, {RF_CPU_I64}, 70, 30, 5, 0}, /* cross product */
    {1, {RF_CPU_I64}, 30000, 20000, 40000, 0}, /* past the serial build size */
    {1, {RF_CPU_I64}, 500, 2000, 300, 1},
    {1, {RF_CPU_I64}, 2000, 500, 300, 1},
    {2, {RF_CPU_I32, RF_CPU_U32}, 800, 1600, 15, 1},
    {1, {RF_CPU_I64}, 30000, 20000, 40000, 1},
    {1, {RF_CPU_I128}, 500, 2000, 300, 0}, /* wide decimals: two key parts */
    {2, {RF_CPU_I128, RF_CPU_U32}, 800, 1600, 15, 1},
    {1, {RF_CPU_I128}, 30000, 20000, 40000, 1},
};

static void test_join(void)
{
    for (size_t ci = 0; ci < sizeof join_cases / sizeof *join_cases; ci++) {
        const join_case *jc = &join_cases[ci];
        rf_cpu_kind lk[3] = {jc->kinds[0], jc->kinds[1], RF_CPU_I32}, rk[3] = {RF_CPU_U8, jc->kinds[0], jc->kinds[1]};
        int32_t nk = jc->nk, lkeys[2] = {0, 1}, rkeys[2] = {1, 2};
        rf_cpu_table l, r;
        CHECK(mk_table(&l, 3, lk, jc->ln, jc->domain, jc->wide));
        CHECK(mk_table(&r, 3, rk, jc->rn, jc->domain, jc->wide));
        /* reference: nested loops in (left, right) order */
        int64_t cap = jc->ln * jc->rn + 1, nref = 0;
        int64_t *rl = malloc((size_t)cap * 8), *rr = malloc((size_t)cap * 8);
        CHECK(rl && rr);
        int small = jc->ln * jc->rn <= 5000000;
        if (small)
            for (int64_t i = 0; i < jc->ln; i++)
                for (int64_t j = 0; j < jc->rn; j++)
                    if (!cmp_keys(&l, lkeys, i, &r, rkeys, j, nk, NULL)) rl[nref] = i, rr[nref++] = j;
        for (int p = 0; p < NPOOLS; p++) {
            int64_t *li, *ri, n;
            OK(rf_cpu_hash_join(pools[p], &l, lkeys, &r, rkeys, nk, &li, &ri, &n));
            if (!small && p == 0) { /* the reference is then pool 0's result, checked pair by pair */
                int ok = 1;
                for (int64_t x = 0; x < n; x++) {
                    ok &= !cmp_keys(&l, lkeys, li[x], &r, rkeys, ri[x], nk, NULL);
                    if (x) ok &= li[x] > li[x - 1] || (li[x] == li[x - 1] && ri[x] > ri[x - 1]);
                }
                CHECK(ok && n > 0);
                free(rl);
                free(rr);
                rl = malloc((size_t)n * 8 + 8), rr = malloc((size_t)n * 8 + 8);
                CHECK(rl && rr);
                memcpy(rl, li, (size_t)n * 8);
                memcpy(rr, ri, (size_t)n * 8);
                nref = n;
            }
            CHECK(n == nref && same_i64(li, rl, n) && same_i64(ri, rr, n));
            if (jc->rn > 0 && nk > 0) {
                /* the right side prepared once, probed twice: the same pairs in the same order */
                rf_cpu_join_side *side = NULL;
                OK(rf_cpu_join_side_new(pools[p], &r, rkeys, nk, &side));
                CHECK(rf_cpu_join_side_keys(side, rkeys, nk) && !rf_cpu_join_side_keys(side, lkeys, nk));
                for (int rep = 0; rep < 2; rep++) {
                    int64_t *sl, *sr, sn;
                    OK(rf_cpu_hash_join_side(pools[p], &l, lkeys, &r, side, &sl, &sr, &sn));
                    CHECK(sn == nref && same_i64(sl, rl, sn) && same_i64(sr, rr, sn));
                    free(sl);
                    free(sr);
                }
                /* and as an anti-join: the left rows without a match */
                int64_t *ak, an, *bk, bn;
                OK(rf_cpu_anti_join(pools[p], &l, lkeys, &r, rkeys, nk, &ak, &an));
                OK(rf_cpu_anti_join_side(pools[p], &l, lkeys, &r, side, &bk, &bn));
                CHECK(an == bn && same_i64(ak, bk, an));
                free(ak);
                free(bk);
                rf_cpu_join_side_free(side);
            }
            /* in parts (bounds from one pair up, on the side too): the parts
            ** laid end to end are the same pairs in the same order, each part
            ** within its bound (a chunk of left rows with more is cut) */
            for (int on_side = 0; on_side < 2; on_side++) {
                if (on_side && (jc->rn == 0 || nk == 0)) continue;
                rf_cpu_join_side *side = NULL;
                if (on_side) OK(rf_cpu_join_side_new(pools[p], &r, rkeys, nk, &side));
                const int64_t bounds[3] = {1, 777, INT64_MAX};
                for (int bi = 0; bi < 3; bi++) {
                    int64_t parts = 0;
                    CHECK(parts_match(pools[p], &l, lkeys, &r, rkeys, nk, side, bounds[bi], rl, rr, nref, &parts) &&
                          (bi < 2 || parts <= 1));
                }
                rf_cpu_join_side_free(side);
            }
            /* projected: left col 2, right col 0, left col 0 */
            int32_t lc[2] = {2, 0}, rc[1] = {0};
            rf_cpu_table out;
            OK(rf_cpu_join_project(pools[p], &l, lkeys, &r, rkeys, nk, lc, 2, rc, 1, &out));
            CHECK(out.nrows == n && out.ncols == 3);
            int ok = 1;
            for (int64_t i = 0; i < n; i++) {
                ok &= !memcmp((int32_t *)out.cols[0].data + i, (int32_t *)l.cols[2].data + li[i], 4);
                ok &= ((uint8_t *)out.cols[2].data)[i] == ((uint8_t *)r.cols[0].data)[ri[i]];
                ok &= !memcmp((char *)out.cols[1].data + i * rf_cpu_kind_size(lk[0]),
                              (char *)l.cols[0].data + li[i] * rf_cpu_kind_size(lk[0]), (size_t)rf_cpu_kind_size(lk[0]));
            }
            CHECK(ok);
            rf_cpu_table_free(&out);
            free(li);
            free(ri);
        }
        free(rl);
        free(rr);
        rf_cpu_table_free(&l);
        rf_cpu_table_free(&r);
    }
    /* -0.0 joins 0.0, NaN joins NaN */
    double a[] = {0.0, NAN, 1.0}, b[] = {dbl_of_bits(0xFFF8000000000001u), -0.0, 2.0, -0.0};
    rf_cpu_col ca = {RF_CPU_F64, a}, cb = {RF_CPU_F64, b};
    rf_cpu_table ta = {3, 1, &ca}, tb = {4, 1, &cb};
    int64_t *li, *ri, n;
    OK(rf_cpu_hash_join(pools[1], &ta, ALL, &tb, ALL, 1, &li, &ri, &n));
    int64_t wl[] = {0, 0, 1}, wr[] = {1, 3, 0};
    CHECK(n == 3 && same_i64(li, wl, 3) && same_i64(ri, wr, 3));
    free(li);
    free(ri);
    /* mismatched key kinds are refused */
    rf_cpu_col ci = {RF_CPU_I64, b};
    rf_cpu_table ti = {4, 1, &ci};
    CHECK(rf_cpu_hash_join(NULL, &ta, ALL, &ti, ALL, 1, &li, &ri, &n) == RF_EINTERNAL);
}

/* ---- semi, anti, difference, union ------------------------------------ */

static void test_semi(void)
{
    for (size_t ci = 0; ci < sizeof join_cases / sizeof *join_cases; ci++) {
        const join_case *jc = &join_cases[ci];
        if (jc->ln * jc->rn > 5000000) continue;
        rf_cpu_kind k2[2] = {jc->kinds[0], jc->kinds[1]};
        int32_t nc = jc->nk ? jc->nk : 1;
        rf_cpu_table l, r;
        CHECK(mk_table(&l, nc, k2, jc->ln, jc->domain, jc->wide));
        CHECK(mk_table(&r, nc, k2, jc->rn, jc->domain, jc->wide));
        char *has = calloc((size_t)jc->ln + 1, 1);
        CHECK(has);
        for (int64_t i = 0; i < jc->ln; i++)
            for (int64_t j = 0; j < jc->rn && !has[i]; j++) has[i] = !cmp_keys(&l, ALL, i, &r, ALL, j, jc->nk, NULL);
        for (int p = 0; p < NPOOLS; p++) {
            int64_t *keep, nkeep;
            for (int anti = 0; anti < 2; anti++) {
                if (anti)
                    OK(rf_cpu_anti_join(pools[p], &l, ALL, &r, ALL, jc->nk, &keep, &nkeep));
                else
                    OK(rf_cpu_semi_join(pools[p], &l, ALL, &r, ALL, jc->nk, &keep, &nkeep));
                int64_t j = 0;
                int ok = 1;
                for (int64_t i = 0; i < jc->ln; i++)
                    if (has[i] != anti) ok &= j < nkeep && keep[j++] == i;
                CHECK(ok && j == nkeep);
                free(keep);
            }
            if (jc->nk == nc) {
                /* difference: rows of l not in r, = anti join on all columns */
                OK(rf_cpu_difference(pools[p], &l, &r, &keep, &nkeep));
                int64_t j = 0;
                int ok = 1;
                for (int64_t i = 0; i < jc->ln; i++)
                    if (!has[i]) ok &= j < nkeep && keep[j++] == i;
                CHECK(ok && j == nkeep);
                free(keep);
                /* union: l, then the rows of r not in l */
                rf_cpu_table u;
                OK(rf_cpu_union(pools[p], &l, &r, &u));
                int64_t k = l.nrows;
                ok = u.nrows >= l.nrows;
                for (int64_t i = 0; i < l.nrows && ok; i++) ok &= same_row_bits(&u, i, &l, i);
                for (int64_t jr = 0; jr < r.nrows && ok; jr++) {
                    int inl = 0;
                    for (int64_t i = 0; i < l.nrows && !inl; i++) inl = !cmp_keys(&l, ALL, i, &r, ALL, jr, nc, NULL);
                    if (!inl) ok &= k < u.nrows && same_row_bits(&u, k++, &r, jr);
                }
                CHECK(ok && k == u.nrows);
                rf_cpu_table_free(&u);
            }
        }
        free(has);
        rf_cpu_table_free(&l);
        rf_cpu_table_free(&r);
    }
}

/* ---- row sets --------------------------------------------------------- */

/* Inserts batches whose value ranges drift (forcing the encoding to widen)
** and checks every insert and probe against brute force. */
static void set_case(int32_t nc, const rf_cpu_kind *kinds, int nbatch, int64_t bsize, uint64_t domain)
{
    rf_cpu_set *sets[NPOOLS];
    for (int p = 0; p < NPOOLS; p++) OK(rf_cpu_set_new(nc, kinds, &sets[p]));
    rf_cpu_table all = {0}; /* reference rows, in insertion order */
    int64_t nall = 0, cap = (int64_t)nbatch * bsize + 1;
    CHECK(!rf_cpu_table_alloc(nc, kinds, cap, &all));
    for (int b = 0; b < nbatch; b++) {
        rf_cpu_table t;
        CHECK(mk_table(&t, nc, kinds, b == 2 ? 0 : bsize, domain, 0));
        for (int32_t c = 0; c < nc; c++) /* drift: shift ints by the batch number */
            for (int64_t i = 0; i < t.nrows; i++) {
                if (kinds[c] == RF_CPU_I64) ((int64_t *)t.cols[c].data)[i] += b * (int64_t)domain / 3;
                if (kinds[c] == RF_CPU_F64 && b == 4 && i % 5 == 0) ((double *)t.cols[c].data)[i] = 1e300;
            }
        /* expected new rows */
        int64_t *want = malloc((size_t)t.nrows * 8 + 8), nw = 0;
        CHECK(want);
        int64_t before = nall;
        for (int64_t i = 0; i < t.nrows; i++) {
            int dup = 0;
            for (int64_t j = 0; j < nall && !dup; j++) dup = !cmp_keys(&t, ALL, i, &all, ALL, j, nc, NULL);
            if (dup) continue;
            want[nw++] = i;
            for (int32_t c = 0; c < nc; c++) {
                int sz = rf_cpu_kind_size(kinds[c]);
                memcpy((char *)all.cols[c].data + nall * sz, (char *)t.cols[c].data + i * sz, (size_t)sz);
            }
            nall++;
        }
        all.nrows = nall;
        for (int p = 0; p < NPOOLS; p++) {
            int64_t *got, ng;
            OK(rf_cpu_set_insert(pools[p], sets[p], &t, &got, &ng));
            CHECK(ng == nw && same_i64(got, want, nw));
            free(got);
            rf_cpu_table v;
            rf_cpu_set_view(sets[p], &v);
            CHECK(same_table(&v, &all));
            rf_cpu_col vc[3];
            rf_cpu_set_view_from(sets[p], before, vc, &v);
            CHECK(v.nrows == nw);
            for (int64_t i = 0; i < nw; i++) CHECK(same_row_bits(&v, i, &t, want[i]));
            /* probing the batch again: everything is in; a fresh batch: brute force */
            int64_t *in, nin;
            OK(rf_cpu_set_probe(pools[p], sets[p], &t, 1, &in, &nin));
            CHECK(nin == 0);
            free(in);
        }
        rf_cpu_table q;
        CHECK(mk_table(&q, nc, kinds, bsize, domain * 2, 0));
        char *has = calloc((size_t)bsize + 1, 1);
        CHECK(has);
        for (int64_t i = 0; i < bsize; i++)
            for (int64_t j = 0; j < nall && !has[i]; j++) has[i] = !cmp_keys(&q, ALL, i, &all, ALL, j, nc, NULL);
        for (int p = 0; p < NPOOLS; p++)
            for (int neg = 0; neg < 2; neg++) {
                int64_t *in, nin, j = 0;
                OK(rf_cpu_set_probe(pools[p], sets[p], &q, neg, &in, &nin));
                int ok = 1;
                for (int64_t i = 0; i < bsize; i++)
                    if (has[i] != neg) ok &= j < nin && in[j++] == i;
                CHECK(ok && j == nin);
                free(in);
            }
        free(has);
        rf_cpu_table_free(&q);
        free(want);
        rf_cpu_table_free(&t);
    }
    for (int p = 0; p < NPOOLS; p++) {
        CHECK(rf_cpu_set_size(sets[p]) == nall);
        rf_cpu_set_free(sets[p]);
    }
    rf_cpu_table_free(&all);
}

/* Big sets against rf_cpu_unique: the set's rows are the first occurrences
** of the concatenated batches, in order. */
static void set_big(int32_t nc, const rf_cpu_kind *kinds, int nbatch, int64_t bsize, uint64_t domain, int wide)
{
    rf_cpu_set *s[NPOOLS];
    for (int p = 0; p < NPOOLS; p++) OK(rf_cpu_set_new(nc, kinds, &s[p]));
    rf_cpu_table cat;
    CHECK(!rf_cpu_table_alloc(nc, kinds, (int64_t)nbatch * bsize, &cat));
    for (int b = 0; b < nbatch; b++) {
        rf_cpu_table t;
        CHECK(mk_table(&t, nc, kinds, bsize, domain, wide));
        for (int32_t c = 0; c < nc; c++) {
            int sz = rf_cpu_kind_size(kinds[c]);
            memcpy((char *)cat.cols[c].data + (int64_t)b * bsize * sz, t.cols[c].data, (size_t)(bsize * sz));
        }
        for (int p = 0; p < NPOOLS; p++) OK(rf_cpu_set_insert(pools[p], s[p], &t, NULL, NULL));
        rf_cpu_table_free(&t);
    }
    int64_t *keep, nkeep;
    OK(rf_cpu_unique(pools[2], &cat, &keep, &nkeep));
    rf_cpu_table want;
    OK(rf_cpu_gather_table(pools[2], &cat, keep, nkeep, &want));
    for (int p = 0; p < NPOOLS; p++) {
        rf_cpu_table v;
        rf_cpu_set_view(s[p], &v);
        CHECK(same_table(&v, &want));
        rf_cpu_set_free(s[p]);
    }
    free(keep);
    rf_cpu_table_free(&want);
    rf_cpu_table_free(&cat);
}

static void test_set(void)
{
    rf_cpu_kind k1[2] = {RF_CPU_I64, RF_CPU_F64}, k2[1] = {RF_CPU_U32}, k3[2] = {RF_CPU_I32, RF_CPU_U8};
    set_case(2, k1, 6, 400, 40);
    set_case(1, k2, 5, 300, 200);
    set_case(2, k3, 5, 500, 30);
    set_case(0, k3, 3, 10, 5); /* no columns: the one empty tuple */
    rf_cpu_kind kb[2] = {RF_CPU_I64, RF_CPU_I64};
    set_big(2, kb, 8, 200000, 3000, 0);  /* bitmap index */
    set_big(2, kb, 6, 150000, 200000, 1); /* two-word keys: hash index, growing partitions */
    rf_cpu_kind kc[3] = {RF_CPU_U32, RF_CPU_I32, RF_CPU_F64};
    set_big(3, kc, 4, 100000, 60, 0);
    rf_cpu_kind kw[2] = {RF_CPU_I128, RF_CPU_U32}; /* wide decimals: two key parts */
    set_case(2, kw, 5, 400, 30);
    set_big(2, kw, 4, 50000, 3000, 1);
    /* kinds must match */
    rf_cpu_set *s;
    OK(rf_cpu_set_new(2, kb, &s));
    rf_cpu_table t;
    CHECK(mk_table(&t, 2, k1, 10, 5, 0));
    CHECK(rf_cpu_set_insert(NULL, s, &t, NULL, NULL) == RF_EINTERNAL);
    rf_cpu_table_free(&t);
    rf_cpu_set_free(s);
}

/* ---- large inputs ----------------------------------------------------- */

static void test_large(void)
{
    /* join: 3M x 1M rows on keys from 1M values; checked by counting */
    int64_t ln = 3000000, rn = 1000000, D = 1000000;
    rf_cpu_kind k = RF_CPU_I64;
    rf_cpu_table l, r;
    CHECK(mk_table(&l, 1, &k, ln, (uint64_t)D, 0));
    CHECK(mk_table(&r, 1, &k, rn, (uint64_t)D, 0));
    int64_t *rcount = calloc((size_t)D + 1, 8), expect = 0;
    CHECK(rcount);
    const int64_t *lv = l.cols[0].data, *rv = r.cols[0].data;
    for (int64_t j = 0; j < rn; j++) rcount[rv[j] + D / 2]++;
    for (int64_t i = 0; i < ln; i++) expect += rcount[lv[i] + D / 2];
    int64_t *li0 = NULL, *ri0 = NULL, n0 = 0;
    for (int p = 0; p < NPOOLS; p += 2) {
        int64_t *li, *ri, n;
        OK(rf_cpu_hash_join(pools[p], &l, ALL, &r, ALL, 1, &li, &ri, &n));
        CHECK(n == expect);
        if (p == 0) {
            int ok = 1;
            int64_t run = 0;
            for (int64_t x = 0; x < n; x++) {
                ok &= lv[li[x]] == rv[ri[x]];
                if (x && li[x] == li[x - 1]) {
                    ok &= ri[x] > ri[x - 1];
                    run++;
                } else {
                    if (x) ok &= li[x] > li[x - 1] && run + 1 == rcount[lv[li[x - 1]] + D / 2];
                    run = 0;
                }
            }
            if (n) ok &= run + 1 == rcount[lv[li[n - 1]] + D / 2];
            CHECK(ok);
            li0 = li, ri0 = ri, n0 = n;
        } else {
            CHECK(n == n0 && same_i64(li, li0, n) && same_i64(ri, ri0, n));
            free(li), free(ri);
        }
    }
    free(li0), free(ri0), free(rcount);
    rf_cpu_table_free(&l);
    rf_cpu_table_free(&r);

    /* unique: 4M rows of (a, b) from 2000 x 2000 values, against a seen-map */
    int64_t n = 4000000;
    rf_cpu_kind kk[2] = {RF_CPU_I64, RF_CPU_U32};
    rf_cpu_table t;
    CHECK(mk_table(&t, 2, kk, n, 2000, 0));
    char *seen = calloc(2000 * 2000, 1);
    int64_t *want = malloc((size_t)n * 8), nw = 0;
    CHECK(seen && want);
    for (int64_t i = 0; i < n; i++) {
        int64_t key = (((int64_t *)t.cols[0].data)[i] + 1000) * 2000 + ((uint32_t *)t.cols[1].data)[i];
        if (!seen[key]) seen[key] = 1, want[nw++] = i;
    }
    for (int p = 0; p < NPOOLS; p += 2) {
        int64_t *keep, nkeep;
        OK(rf_cpu_unique(pools[p], &t, &keep, &nkeep));
        CHECK(nkeep == nw && same_i64(keep, want, nw));
        free(keep);
    }
    /* and with many distinct rows: difference against a shifted copy */
    for (int64_t i = 0; i < n; i++) ((int64_t *)t.cols[0].data)[i] = (int64_t)(rnd() % 50000000);
    rf_cpu_table t2;
    OK(rf_cpu_gather_table(NULL, &t, want, nw, &t2));
    for (int64_t i = 0; i < t2.nrows; i += 2) ((uint32_t *)t2.cols[1].data)[i] += 7;
    int64_t *d0 = NULL, nd0 = 0;
    for (int p = 0; p < NPOOLS; p += 2) {
        int64_t *d, nd;
        OK(rf_cpu_difference(pools[p], &t, &t2, &d, &nd));
        if (p == 0)
            d0 = d, nd0 = nd;
        else {
            CHECK(nd == nd0 && same_i64(d, d0, nd));
            free(d);
        }
    }
    CHECK(nd0 > 0 && nd0 < n);
    free(d0);
    free(seen);
    free(want);
    rf_cpu_table_free(&t);
    rf_cpu_table_free(&t2);
}

/* ---- dense key indexes ------------------------------------------------ */

/* Joins whose built side has distinct keys (every third integer from 10)
** and whose probe side runs over a wider range in key order, then in a
** scrambled order: the dense index (bitmap and ranks) answers, and values
** below and above the built range miss. The key of left row i is i - 50
** (or a permutation of that); right row j holds 10 + 3 * j. */
static void test_dense(void)
{
    const int64_t sizes[][2] = {{300000, 20000}, {20000, 300000}, {70000, 70000}};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int64_t ln = sizes[si][0], rn = sizes[si][1];
        for (int scramble = 0; scramble < 2; scramble++) {
            rf_cpu_kind k1 = RF_CPU_I64;
            rf_cpu_table l, r;
            CHECK(rf_cpu_table_alloc(1, &k1, ln, &l) == RF_OK && rf_cpu_table_alloc(1, &k1, rn, &r) == RF_OK);
            int64_t *lv = l.cols[0].data, *rv = r.cols[0].data;
            for (int64_t i = 0; i < ln; i++) lv[i] = (scramble ? (i * 7919) % ln : i) - 50;
            for (int64_t j = 0; j < rn; j++) rv[j] = 10 + 3 * j;
            int64_t nref = 0;
            for (int64_t i = 0; i < ln; i++) nref += lv[i] >= 10 && (lv[i] - 10) % 3 == 0 && (lv[i] - 10) / 3 < rn;
            for (int p = 0; p < NPOOLS; p++) {
                int64_t *li, *ri, n;
                OK(rf_cpu_hash_join(pools[p], &l, ALL, &r, ALL, 1, &li, &ri, &n));
                int ok = n == nref;
                for (int64_t x = 0; x < n && ok; x++) {
                    ok &= lv[li[x]] == rv[ri[x]];
                    if (x) ok &= li[x] > li[x - 1];
                }
                CHECK(ok);
                free(li);
                free(ri);
                int64_t *keep, nkeep;
                OK(rf_cpu_semi_join(pools[p], &l, ALL, &r, ALL, 1, &keep, &nkeep));
                CHECK(nkeep == nref);
                free(keep);
                OK(rf_cpu_anti_join(pools[p], &l, ALL, &r, ALL, 1, &keep, &nkeep));
                CHECK(nkeep == ln - nref);
                free(keep);
            }
            rf_cpu_table_free(&l);
            rf_cpu_table_free(&r);
        }
    }
    /* unique over keys from a small range, in scrambled order: the first
    ** row of each key (two columns packed into one word) */
    {
        rf_cpu_kind kk[2] = {RF_CPU_I64, RF_CPU_I32};
        rf_cpu_table t;
        int64_t n = 300000;
        CHECK(rf_cpu_table_alloc(2, kk, n, &t) == RF_OK);
        int64_t *a0 = t.cols[0].data;
        int32_t *a1 = t.cols[1].data;
        char *seen = calloc(100000 * 2, 1);
        CHECK(seen);
        int64_t nref = 0;
        for (int64_t i = 0; i < n; i++) {
            a0[i] = 1000 + (i * 7919) % 100000;
            a1[i] = (int32_t)(i % 3 == 0);
            int64_t key = (a0[i] - 1000) * 2 + a1[i];
            if (!seen[key]) seen[key] = 1, nref++;
        }
        int64_t *ref = NULL;
        for (int p = 0; p < NPOOLS; p++) {
            int64_t *keep, nk;
            OK(rf_cpu_unique(pools[p], &t, &keep, &nk));
            CHECK(nk == nref);
            if (!ref) {
                memset(seen, 0, 100000 * 2);
                int ok = 1;
                for (int64_t i = 0, j = 0; i < n; i++) {
                    int64_t key = (a0[i] - 1000) * 2 + a1[i];
                    if (!seen[key]) seen[key] = 1, ok &= j < nk && keep[j++] == i;
                }
                CHECK(ok);
                ref = keep;
            } else {
                CHECK(same_i64(keep, ref, nk));
                free(keep);
            }
        }
        free(ref);
        free(seen);
        rf_cpu_table_free(&t);
    }
    /* group-by over keys from a small range (one packed word), scrambled */
    {
        rf_cpu_kind kk[2] = {RF_CPU_I32, RF_CPU_U8};
        rf_cpu_table t;
        CHECK(mk_table(&t, 2, kk, 100000, 37, 0));
        group_all_pools(&t, ALL, 2, 1);
        group_all_pools(&t, ALL, 1, 1);
        rf_cpu_table_free(&t);
        rf_cpu_kind k1 = RF_CPU_I64;
        CHECK(mk_table(&t, 1, &k1, 60000, 1500, 0));
        group_all_pools(&t, ALL, 1, 1);
        rf_cpu_table_free(&t);
    }
    /* repeated built keys: groups by first occurrence, pairs in right-row order */
    int64_t a[] = {5, 9, 5, 7, 100}, b[] = {9, 5, 9, 9, 5, 6};
    rf_cpu_col ca = {RF_CPU_I64, a}, cb = {RF_CPU_I64, b};
    rf_cpu_table ta = {5, 1, &ca}, tb = {6, 1, &cb};
    int64_t *li, *ri, n;
    OK(rf_cpu_hash_join(pools[1], &ta, ALL, &tb, ALL, 1, &li, &ri, &n));
    int64_t wl[] = {0, 0, 1, 1, 1, 2, 2}, wr[] = {1, 4, 0, 2, 3, 1, 4};
    CHECK(n == 7 && same_i64(li, wl, 7) && same_i64(ri, wr, 7));
    free(li);
    free(ri);
    OK(rf_cpu_hash_join(pools[1], &tb, ALL, &ta, ALL, 1, &li, &ri, &n));
    int64_t wl2[] = {0, 1, 1, 2, 3, 4, 4}, wr2[] = {1, 0, 2, 1, 1, 0, 2};
    CHECK(n == 7 && same_i64(li, wl2, 7) && same_i64(ri, wr2, 7));
    free(li);
    free(ri);
}

/* ---- driver ----------------------------------------------------------- */


/* A join in parts whose left side's first chunks match nothing, before a
** chunk with more pairs than a part holds: every pair must still come, in
** rf_cpu_hash_join's order (an empty chunk given alone once read as the
** end, and a recursion's round in parts lost every later pair). */
static void test_join_parts_gaps(void)
{
    enum { LN = 6000, RN = 40 };
    int64_t *lk = malloc(LN * sizeof *lk), *rk = malloc(RN * sizeof *rk);
    CHECK(lk && rk);
    if (!lk || !rk) return;
    for (int64_t i = 0; i < LN; i++) lk[i] = i < 2500 ? 1000000 + i : (i >= 4000 && i < 4500 ? 2000000 + i : i % 7);
    for (int64_t j = 0; j < RN; j++) rk[j] = j % 7;
    rf_cpu_col lc = {RF_CPU_I64, lk}, rc = {RF_CPU_I64, rk};
    rf_cpu_table l = {LN, 1, &lc}, r = {RN, 1, &rc};
    int32_t keys[1] = {0};
    for (int p = 0; p < NPOOLS; p++) {
        int64_t *rl, *rr, nref;
        OK(rf_cpu_hash_join(pools[p], &l, keys, &r, keys, 1, &rl, &rr, &nref));
        CHECK(nref > 0);
        for (int on_side = 0; on_side < 2; on_side++) {
            rf_cpu_join_side *side = NULL;
            if (on_side) OK(rf_cpu_join_side_new(pools[p], &r, keys, 1, &side));
            const int64_t bounds[4] = {1, 100, 5000, INT64_MAX};
            for (int bi = 0; bi < 4; bi++) {
                int64_t parts = 0;
                CHECK(parts_match(pools[p], &l, keys, &r, keys, 1, side, bounds[bi], rl, rr, nref, &parts));
            }
            rf_cpu_join_side_free(side);
        }
        free(rl);
        free(rr);
    }
    free(lk);
    free(rk);
}

static const struct {
    const char *name;
    void (*fn)(void);
} tests[] = {
    {"pool", test_pool},   {"gather", test_gather}, {"sort", test_sort}, {"topk", test_topk},
    {"unique", test_unique}, {"group", test_group}, {"agg", test_agg},   {"join", test_join},
    {"semi", test_semi},   {"set", test_set},       {"large", test_large}, {"runs", test_runs},
    {"dense", test_dense}, {"agg_wide", test_agg_wide}, {"join_parts_gaps", test_join_parts_gaps},
};

int main(int argc, char **argv)
{
    init_all();
    for (int p = 0; p < NPOOLS; p++)
        if (rf_cpu_pool_new(pool_threads[p], &pools[p])) {
            fprintf(stderr, "test_cpu: no thread pool\n");
            return 1;
        }
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
        if (argc > 1 && strcmp(argv[1], tests[i].name)) continue;
        int before = failures;
        rs = 0x1234567u + i;
        tests[i].fn();
        printf("%s: %s\n", tests[i].name, failures == before ? "ok" : "FAILED");
        if (failures == before)
            passed++;
        else
            failed++;
    }
    for (int p = 0; p < NPOOLS; p++) rf_cpu_pool_free(pools[p]);
    if (!passed && !failed) {
        fprintf(stderr, "test_cpu: no test named %s\n", argc > 1 ? argv[1] : "");
        return 2;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
