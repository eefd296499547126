/*
** api/tests/test_api_level4.c: what API level 4 added to libredfox, through
** its public header only: a run's figures (rf_result_stats, versioned by
** its size field), the devices described (rf_device_info), and the GPU's
** copies of kept inputs forgotten (rf_database_forget_device).
**
** Owns: `test_api4 stats|device|forget|fallback`. forget and fallback need
** a GPU (or the emulator, RF_GPU_EMULATE=1) and exit 77 without one.
*/
#include "redfox.h"
#include "test_check.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *tc_src = "edge(x, y) -> int(x), int(y).\n"
                            "lang:input[`edge] = \"edge.csv\".\n"
                            "path(x, y) -> int(x), int(y).\n"
                            "path(x, y) <- edge(x, y).\n"
                            "path(x, z) <- path(x, y), edge(y, z).\n"
                            "lang:output[`path] = \"path\".\n";

#define NEDGES 2000

/* A database holding a chain of NEDGES edges (1 -> 2 -> ...), and tc_src. */
static rf_database *chain_db(rf_program **p)
{
    static int64_t a[NEDGES], b[NEDGES];
    for (int i = 0; i < NEDGES; i++) a[i] = i + 1, b[i] = i + 2;
    rf_database *db = NULL;
    CHECK(rf_open(NULL, &db) == REDFOX_OK);
    const void *cols[] = {a, b};
    int types[] = {REDFOX_INT, REDFOX_INT};
    CHECK(rf_database_put_rows(db, "edge", 2, types, NEDGES / 10, cols) == REDFOX_OK);
    *p = NULL;
    int rc = rf_compile(tc_src, -1, "tc.logic", p);
    if (rc) fprintf(stderr, "compile: %s\n", rf_program_errmsg(*p));
    CHECK(rc == REDFOX_OK);
    return db;
}

static rf_result *run_on(rf_database *db, const rf_program *p, int device, int profile, uint64_t gpu_memory, int *rc)
{
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = device;
    o.profile = profile;
    o.threads = 2;
    o.gpu_memory = gpu_memory;
    o.cache_dir = ""; /* no placement model or code cache written by a test */
    rf_result *res = NULL;
    *rc = rf_run(db, p, &o, &res);
    return res;
}

/* The figures of CPU runs: with and without profile, and a caller's struct
** of an older, smaller size, which the library must not write past. */
static void test_stats(void)
{
    CHECK(rf_api_level() >= 4 && REDFOX_API_LEVEL >= 4);
    rf_program *p = NULL;
    rf_database *db = chain_db(&p);
    int rc;
    rf_result *res = run_on(db, p, REDFOX_DEVICE_CPU, 0, 0, &rc);
    CHECK(rc == REDFOX_OK && res);
    rf_run_stats s;
    memset(&s, 0x5a, sizeof s);
    s.size = sizeof s;
    CHECK(rf_result_stats(res, &s) == REDFOX_OK);
    CHECK(s.size == sizeof s);
    CHECK(s.device && !strcmp(s.device, "cpu") && !strcmp(s.device, rf_result_device(res)));
    CHECK(s.gpu_fell_back == 0 && s.rank == 0 && s.nranks == 1);
    CHECK(s.load_seconds == rf_result_load_seconds(res) && s.run_seconds == rf_result_run_seconds(res));
    CHECK(s.run_seconds > 0 && s.read_seconds >= 0 && s.copy_seconds >= 0 && s.device_seconds >= 0);
    CHECK(s.program_seconds >= 0 && s.output_seconds >= 0 && s.load_seconds > 0);
    CHECK(s.input_rows == NEDGES / 10 && s.input_bytes == (NEDGES / 10) * 16);
    CHECK(s.kernel_bytes_in == -1 && s.kernel_bytes_out == -1); /* not profiled */
    CHECK(s.h2d_bytes == 0 && s.d2h_bytes == 0 && s.gpu_peak_bytes == 0 && s.gpu_fused == 0);
    CHECK(s.gpu_memory_cap == 0 && s.gpu_values_moved == 0 && s.gpu_cache_hits == 0);
    rf_result_free(res);

    /* profiled: the kernels' bytes, at least each edge read once (16 bytes a
    ** row) and each path written once (NEDGES/10 * (NEDGES/10 + 1) / 2 rows) */
    res = run_on(db, p, REDFOX_DEVICE_CPU, 1, 0, &rc);
    CHECK(rc == REDFOX_OK && res);
    s.size = sizeof s;
    CHECK(rf_result_stats(res, &s) == REDFOX_OK);
    int64_t paths = rf_result_rows(res, 0);
    CHECK(paths == (int64_t)(NEDGES / 10) * (NEDGES / 10 + 1) / 2);
    CHECK(s.kernel_bytes_in >= (NEDGES / 10) * 16 && s.kernel_bytes_out >= paths * 16);

    /* an older caller's struct: up to run_seconds only; the rest untouched */
    struct {
        rf_run_stats s;
        char guard[8];
    } old;
    memset(&old, 0x5a, sizeof old);
    old.s.size = offsetof(rf_run_stats, run_seconds) + sizeof old.s.run_seconds;
    CHECK(rf_result_stats(res, &old.s) == REDFOX_OK);
    CHECK(old.s.size == offsetof(rf_run_stats, run_seconds) + sizeof old.s.run_seconds);
    CHECK(!strcmp(old.s.device, "cpu") && old.s.run_seconds == rf_result_run_seconds(res));
    unsigned char *rest = (unsigned char *)&old + old.s.size;
    int untouched = 1;
    for (size_t k = old.s.size; k < sizeof old; k++, rest++) untouched &= *rest == 0x5a;
    CHECK(untouched);

    /* misuse: no size, NULL arguments */
    s.size = 0;
    CHECK(rf_result_stats(res, &s) == REDFOX_MISUSE);
    s.size = sizeof s;
    CHECK(rf_result_stats(NULL, &s) == REDFOX_MISUSE && rf_result_stats(res, NULL) == REDFOX_MISUSE);
    rf_result_free(res);
    rf_close(db);
    rf_program_free(p);
}

static void test_device(void)
{
    char text[256];
    CHECK(rf_device_info(REDFOX_DEVICE_CPU, text, sizeof text) == 1 && text[0]);
    char small[4];
    CHECK(rf_device_info(REDFOX_DEVICE_CPU, small, sizeof small) == 1 && strlen(small) <= 3);
    CHECK(rf_device_info(REDFOX_DEVICE_CPU, NULL, 0) == 1);
    CHECK(rf_device_info(42, text, sizeof text) == 0 && strstr(text, "unknown device 42"));
    CHECK(rf_device_info(REDFOX_DEVICE_AUTO, text, sizeof text) == 0);
    /* the GPU: usable or not, the text says what or why */
    int gpu = rf_device_info(REDFOX_DEVICE_GPU, text, sizeof text);
    CHECK((gpu == 0 || gpu == 1) && text[0]);
    /* the same answer as a run's */
    rf_program *p = NULL;
    rf_database *db = chain_db(&p);
    int rc;
    rf_result *res = run_on(db, p, REDFOX_DEVICE_GPU, 0, 0, &rc);
    CHECK(gpu ? rc == REDFOX_OK : rc == REDFOX_ERROR && strstr(rf_errmsg(db), "no usable GPU"));
    rf_result_free(res);
    CHECK(rf_database_forget_device(NULL) == REDFOX_MISUSE);
    CHECK(rf_database_forget_device(db) == REDFOX_OK); /* nothing kept: nothing to do */
    rf_close(db);
    rf_program_free(p);
}

/* Kept inputs on the GPU: a second run finds the edges on the device; after
** rf_database_forget_device the next run copies them again, and finds the
** host's copy (no file read: the edges were given in memory and are kept). */
static int test_forget(void)
{
    if (!rf_device_info(REDFOX_DEVICE_GPU, NULL, 0)) {
        fprintf(stderr, "skipped: no usable GPU\n");
        return 77;
    }
    rf_program *p = NULL;
    rf_database *db = chain_db(&p);
    CHECK(rf_database_keep_inputs(db, 1) == REDFOX_OK);
    rf_run_stats s[3];
    for (int k = 0; k < 3; k++) {
        if (k == 2) CHECK(rf_database_forget_device(db) == REDFOX_OK);
        int rc;
        rf_result *res = run_on(db, p, REDFOX_DEVICE_GPU, 0, 0, &rc);
        if (rc) fprintf(stderr, "run %d: %s\n", k, rf_errmsg(db));
        CHECK(rc == REDFOX_OK && res);
        s[k].size = sizeof s[k];
        CHECK(res && rf_result_stats(res, &s[k]) == REDFOX_OK);
        CHECK(res && rf_result_rows(res, 0) == (int64_t)(NEDGES / 10) * (NEDGES / 10 + 1) / 2);
        rf_result_free(res);
    }
    for (int k = 0; k < 3; k++) {
        CHECK(!strcmp(s[k].device, "gpu") && s[k].gpu_peak_bytes > 0 && s[k].d2h_bytes > 0);
        fprintf(stderr, "run %d: h2d %lld, hits %lld (%lld bytes), misses %lld (%lld bytes)\n", k,
                (long long)s[k].h2d_bytes, (long long)s[k].gpu_cache_hits, (long long)s[k].gpu_cache_hit_bytes,
                (long long)s[k].gpu_cache_misses, (long long)s[k].gpu_cache_miss_bytes);
    }
    /* the first run copies the edge columns; the second finds them there */
    CHECK(s[0].gpu_cache_misses == 2 && s[0].gpu_cache_miss_bytes == (NEDGES / 10) * 16 && s[0].gpu_cache_hits == 0);
    CHECK(s[1].gpu_cache_hits == 2 && s[1].gpu_cache_misses == 0 && s[1].h2d_bytes < s[0].h2d_bytes);
    /* forgotten: copied again, as the first run */
    CHECK(s[2].gpu_cache_misses == 2 && s[2].gpu_cache_hits == 0 && s[2].h2d_bytes == s[0].h2d_bytes);
    rf_close(db);
    rf_program_free(p);
    return 0;
}

/* A GPU whose memory (a cap here) cannot hold the run's data: the run goes
** to the CPU, and the figures say so. */
static int test_fallback(void)
{
    if (!rf_device_info(REDFOX_DEVICE_GPU, NULL, 0)) {
        fprintf(stderr, "skipped: no usable GPU\n");
        return 77;
    }
    rf_program *p = NULL;
    rf_database *db = chain_db(&p);
    int rc;
    /* (below one 256-byte allocation of the pool: no part fits, however split) */
    rf_result *res = run_on(db, p, REDFOX_DEVICE_GPU, 0, 128, &rc);
    if (rc) fprintf(stderr, "run: %s\n", rf_errmsg(db));
    CHECK(rc == REDFOX_OK && res);
    rf_run_stats s;
    s.size = sizeof s;
    CHECK(res && rf_result_stats(res, &s) == REDFOX_OK);
    if (res) {
        CHECK(!strcmp(s.device, "cpu") && s.gpu_fell_back == 1);
        CHECK(rf_result_rows(res, 0) == (int64_t)(NEDGES / 10) * (NEDGES / 10 + 1) / 2);
    }
    int warned = 0;
    for (int64_t i = 0; i < rf_database_diag_count(db); i++)
        warned |= strstr(rf_database_diag(db, i)->message, "running on the CPU instead") != NULL;
    CHECK(warned);
    rf_result_free(res);
    /* without the cap it stays on the GPU */
    res = run_on(db, p, REDFOX_DEVICE_GPU, 0, 0, &rc);
    s.size = sizeof s;
    CHECK(rc == REDFOX_OK && res && rf_result_stats(res, &s) == REDFOX_OK);
    CHECK(res && !strcmp(s.device, "gpu") && s.gpu_fell_back == 0);
    rf_result_free(res);
    rf_close(db);
    rf_program_free(p);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "stats";
    int skip = 0;
    if (!strcmp(what, "stats")) test_stats();
    else if (!strcmp(what, "device")) test_device();
    else if (!strcmp(what, "forget")) skip = test_forget() == 77;
    else if (!strcmp(what, "fallback")) skip = test_fallback() == 77;
    else {
        fprintf(stderr, "usage: test_api4 stats|device|forget|fallback\n");
        return 2;
    }
    if (failures) fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : skip ? 77 : 0;
}
