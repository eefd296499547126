/*
** api/tests/test_api_level5.c: what API level 5 added to libredfox, through
** its public header only: totals of decimals exact to 38 digits
** (REDFOX_DECIMAL128, rf_result_decimal128, rf_run_options.decimal128 and
** the narrowing for callers of older levels) and rf_world_barrier.
**
** Owns: `test_api5 wide|barrier`. The totals are checked against sums
** computed here in 128 bits from the rows the test puts in.
*/
#include "redfox.h"
#include "test_check.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src = "sale(r, a) -> int(r), decimal(a).\n"
                         "lang:input[`sale] = \"sale.csv\".\n"
                         "sum[r] = t -> int(r), decimal(t).\n"
                         "sum[r] = t <- agg<<t = total(a)>> sale(r, a).\n"
                         "lang:output[`sum] = \"sum\".\n";

#define NROWS 64

/* Region 1's amounts reach past decimal's 64 bits in total (each near
** 9e12, times 32 rows); region 2's stay small. */
static int64_t amount(int i) { return i % 2 ? 1000000 * (int64_t)(i + 1) : 9000000000000000000LL - 12345 * (int64_t)i; }

static rf_database *sales(rf_program **p)
{
    static int64_t r[NROWS], a[NROWS];
    for (int i = 0; i < NROWS; i++) r[i] = 1 + i % 2, a[i] = amount(i);
    rf_database *db = NULL;
    CHECK(rf_open(NULL, &db) == REDFOX_OK);
    const void *cols[] = {r, a};
    int types[] = {REDFOX_INT, REDFOX_DECIMAL};
    CHECK(rf_database_put_rows(db, "sale", 2, types, NROWS, cols) == REDFOX_OK);
    *p = NULL;
    int rc = rf_compile(src, -1, "sale.logic", p);
    if (rc) fprintf(stderr, "compile: %s\n", rf_program_errmsg(*p));
    CHECK(rc == REDFOX_OK);
    return db;
}

static __int128 want_total(int region)
{
    __int128 s = 0;
    for (int i = 0; i < NROWS; i++)
        if (1 + i % 2 == region) s += amount(i);
    return s;
}

/* The row of output 0 whose key is region, or -1. */
static int64_t row_of(const rf_result *res, int64_t region)
{
    for (int64_t i = 0; i < rf_result_rows(res, 0); i++)
        if (rf_result_int(res, 0, 0, i) == region) return i;
    return -1;
}

static void test_wide(void)
{
    CHECK(rf_api_level() >= 5 && REDFOX_API_LEVEL >= 5);
    rf_program *p = NULL;
    rf_database *db = sales(&p);
    __int128 big = want_total(1), small = want_total(2);
    CHECK(big > (__int128)INT64_MAX); /* or the test proves nothing */

    /* level 5's default: the totals whole */
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    CHECK(o.decimal128 == 1);
    o.device = REDFOX_DEVICE_CPU;
    o.cache_dir = "";
    rf_result *res = NULL;
    CHECK(rf_run(db, p, &o, &res) == REDFOX_OK && res);
    CHECK(rf_result_column_type(res, 0, 1) == REDFOX_DECIMAL128);
    int64_t hi = 0;
    uint64_t lo = 0;
    int64_t b = row_of(res, 1), s = row_of(res, 2);
    CHECK(b >= 0 && s >= 0);
    CHECK(rf_result_decimal128(res, 0, 1, b, &hi, &lo) == REDFOX_OK);
    CHECK(hi == (int64_t)(big >> 64) && lo == (uint64_t)big);
    CHECK(rf_result_decimal128(res, 0, 1, s, &hi, &lo) == REDFOX_OK);
    CHECK(hi == (int64_t)(small >> 64) && lo == (uint64_t)small);
    CHECK(rf_result_decimal(res, 0, 1, s) == 0); /* another type: 0, as documented */
    rf_result_free(res);

    /* NULL options are level 5's defaults */
    res = NULL;
    CHECK(rf_run(db, p, NULL, &res) == REDFOX_OK && res && rf_result_column_type(res, 0, 1) == REDFOX_DECIMAL128);
    rf_result_free(res);

    /* a caller of level 4 (its struct ends before decimal128): decimals, and
    ** the total beyond decimal's range an error naming the output */
    rf_run_options o4;
    rf_run_options_init_v2(&o4, offsetof(rf_run_options, later_runs) + sizeof o4.later_runs);
    o4.device = REDFOX_DEVICE_CPU;
    o4.cache_dir = "";
    o4.decimal128 = 77; /* past its size: never read */
    res = NULL;
    CHECK(rf_run(db, p, &o4, &res) == REDFOX_ERROR && !res);
    const char *m = rf_errmsg(db);
    CHECK(m && strstr(m, "decimal out of range") && strstr(m, "sum") && strstr(m, "REDFOX_DECIMAL128"));
    /* the row counted from 1, as every message counts rows (it said b's index) */
    char at[64];
    snprintf(at, sizeof at, "row %lld: decimal out of range", (long long)b + 1);
    CHECK(m && strstr(m, at));
    if (!m || !strstr(m, at)) fprintf(stderr, "want '%s' in: %s\n", at, m ? m : "");

    /* level 5 asking for decimals: the same narrowing */
    o.decimal128 = 0;
    res = NULL;
    CHECK(rf_run(db, p, &o, &res) == REDFOX_ERROR && !res);

    /* totals that fit: decimals to such a caller, the same values */
    rf_program *q = NULL;
    const char *small_src = "sale(r, a) -> int(r), decimal(a).\n"
                            "lang:input[`sale] = \"sale.csv\".\n"
                            "sum[r] = t -> int(r), decimal(t).\n"
                            "sum[r] = t <- agg<<t = total(a)>> sale(r, a), r = 2.\n"
                            "lang:output[`sum] = \"sum\".\n";
    CHECK(rf_compile(small_src, -1, "small.logic", &q) == REDFOX_OK);
    rf_run_options o1;
    rf_run_options_init(&o1); /* level 1 */
    o1.device = REDFOX_DEVICE_CPU;
    res = NULL;
    CHECK(rf_run(db, q, &o1, &res) == REDFOX_OK && res);
    if (res) {
        CHECK(rf_result_rows(res, 0) == 1 && rf_result_column_type(res, 0, 1) == REDFOX_DECIMAL);
        CHECK(rf_result_decimal(res, 0, 1, 0) == (int64_t)small);
        char *text = NULL;
        int64_t len = 0;
        CHECK(rf_result_text(res, 0, REDFOX_FORMAT_CSV, &text, &len) == REDFOX_OK);
        CHECK(text && strstr(text, "\n2,")); /* the row prints as a decimal does */
        rf_free(text);
    }
    rf_result_free(res);
    rf_program_free(q);
    rf_program_free(p);
    rf_close(db);
}

/* Level 4's rf_exec_options, as its header declared it: level 5's fields lie
** past its size, so that a level-4 caller's size says it has none (its tail
** padding once held decimal128). (rf_run_options' level 4 ended with an
** int64_t: no padding.) */
struct exec_options_l4 {
    size_t size;
    int device, threads;
    const char *settings, *cache_dir;
    int init, recompute, profile, profile_kernels, show_programs;
    void *log, *log_user;
    double start;
    int incremental;
};

/* REDFOX_DECIMAL128 is a type of results: rows given with it are refused,
** named, not read (a batch's formatting once took its values as strings). */
static void test_wide_inputs(void)
{
    __int128 v[2] = {5, -7};
    const void *cols[] = {v};
    int ty[] = {REDFOX_DECIMAL128};
    rf_database *db = NULL;
    CHECK(rf_open(NULL, &db) == REDFOX_OK);
    CHECK(rf_database_put_rows(db, "p", 1, ty, 2, cols) == REDFOX_MISUSE);
    const char *m = rf_errmsg(db);
    CHECK(m && strstr(m, "REDFOX_DECIMAL128") && strstr(m, "results only"));
    rf_batch *b = rf_batch_new();
    CHECK(b && rf_batch_insert(b, "p", 1, ty, 2, cols) == REDFOX_MISUSE);
    CHECK(b && rf_batch_delete(b, "p", 1, ty, 2, cols) == REDFOX_MISUSE);
    m = b ? rf_batch_errmsg(b) : NULL;
    CHECK(m && strstr(m, "results only"));
    rf_batch_free(b);
    rf_close(db);
}

/* A wide column goes to Arrow as decimal128(38, 6), or as decimal256 where
** a value has 39 digits (beyond decimal128's precision of 38). */
static void test_arrow_digits(void)
{
    static int64_t k[2] = {1, 2}, a[2] = {8000000000000000000LL, 8000000000000000000LL};
    const void *cols[] = {k, a};
    int ty[] = {REDFOX_INT, REDFOX_DECIMAL};
    const char *digits = "s(k, a) -> int(k), decimal(a).\nlang:input[`s] = \"s.csv\".\n"
                      "t[] = y <- agg<<y = total(a)>> s(_, a).\n"
                      "small(k, y) <- t[] = y, s(k, _).\n"
                      "big(k, x) <- t[] = y, s(k, a), x = y * a * 1000000.\n"
                      "lang:output[`small] = \"small\".\nlang:output[`big] = \"big\".\n";
    rf_database *db = NULL;
    rf_program *p = NULL;
    CHECK(rf_open(NULL, &db) == REDFOX_OK && rf_database_put_rows(db, "s", 2, ty, 2, cols) == REDFOX_OK);
    CHECK(rf_compile(digits, -1, "digits.logic", &p) == REDFOX_OK);
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = REDFOX_DEVICE_CPU;
    o.cache_dir = "";
    rf_result *res = NULL;
    CHECK(rf_run(db, p, &o, &res) == REDFOX_OK && res);
    /* 1.6e13 * 8e12 * 10^6 = 1.28e32: 1.28e38 millionths, 39 digits */
    __int128 big = (__int128)16000000000000000000ULL * 8000000000000000000ULL;
    for (int32_t i = 0; res && i < rf_result_count(res); i++) {
        struct ArrowSchema s;
        struct ArrowArray arr;
        CHECK(rf_result_arrow(res, i, &s, &arr) == REDFOX_OK);
        int is_big = !strcmp(rf_result_name(res, i), "big");
        const char *f = s.children[1]->format;
        CHECK(!strcmp(f, is_big ? "d:76,6,256" : "d:38,6"));
        const unsigned char *v = arr.children[1]->buffers[1];
        for (int64_t r = 0; is_big && r < arr.length; r++) {
            __int128 lo;
            memcpy(&lo, v + 32 * r, 16);
            int ext = 1;
            for (int j = 16; j < 32; j++) ext &= v[32 * r + j] == 0;
            CHECK(lo == big && ext);
        }
        arr.release(&arr);
        s.release(&s);
    }
    rf_result_free(res);
    rf_program_free(p);
    rf_close(db);
}

static void test_layout(void)
{
    CHECK(offsetof(rf_exec_options, decimal128) >= sizeof(struct exec_options_l4));
    CHECK(offsetof(rf_exec_options, incremental) == offsetof(struct exec_options_l4, incremental));
    /* the init of a level-4 caller writes nothing past its struct */
    union {
        rf_exec_options o;
        unsigned char b[sizeof(rf_exec_options)];
    } u;
    memset(&u, 0xab, sizeof u);
    rf_exec_options_init(&u.o, sizeof(struct exec_options_l4));
    CHECK(u.o.size == sizeof(struct exec_options_l4) && u.o.device == REDFOX_DEVICE_AUTO);
    for (size_t i = sizeof(struct exec_options_l4); i < sizeof u; i++) CHECK(u.b[i] == 0xab);
    rf_exec_options o5;
    rf_exec_options_init(&o5, sizeof o5);
    CHECK(o5.decimal128 == 1);
}

static void test_barrier(void)
{
    CHECK(rf_world_barrier(NULL, 1.0) == REDFOX_OK);
    rf_world *w = NULL;
    CHECK(rf_world_mpi(NULL, NULL, &w) == REDFOX_OK); /* not under mpirun: a world of one */
    CHECK(rf_world_size(w) == 1 && rf_world_barrier(w, 0) == REDFOX_OK);
    rf_world_end(w, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_api5 wide|barrier\n");
        return 2;
    }
    if (!strcmp(argv[1], "wide")) test_wide(), test_layout(), test_wide_inputs(), test_arrow_digits();
    else if (!strcmp(argv[1], "barrier")) test_barrier();
    else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    else printf("ok: %s\n", argv[1]);
    return failures ? 1 : 0;
}
