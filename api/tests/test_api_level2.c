/*
** api/tests/test_api_level2.c: what API level 2 added to libredfox, through
** its public header only: compile options (no_lftj gives the same answer
** with another plan), the level-1 and level-2 option inits, progress
** reports of a slow input load, the profile's text, a caller's timeline
** (rf_trace) and outputs written through a callback (rf_result_write_to);
** --device auto weighing the runs ahead (rf_run_options.runs, later).
**
** Owns: `test_api2 options|progress|profile|runs`.
*/
#include "redfox.h"
#include "test_check.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Triangles a -> b -> c with a -> c: a cyclic body, the leapfrog triejoin's */
static const char *tri_src = "edge(x, y) -> int(x), int(y).\n"
                             "lang:input[`edge] = \"e.csv\".\n"
                             "tri(a, b, c) <- edge(a, b), edge(b, c), edge(a, c).\n"
                             "lang:output[`tri] = \"tri\".\n";

static rf_program *compile_with(const rf_compile_options *o)
{
    const char *names[] = {"tri.logic"}, *texts[] = {tri_src};
    rf_program *p = NULL;
    int rc = rf_compile_buffers_v2(names, texts, NULL, 1, o, &p);
    if (rc) fprintf(stderr, "compile: %d %s\n", rc, rf_program_errmsg(p));
    CHECK(rc == REDFOX_OK && !rf_program_is_compiled(p));
    return p;
}

/* The kernels' kinds of a profiled run, "|"-joined, and its CSV text. */
static void run_profiled(rf_database *db, rf_program *p, char *kinds, size_t kn, char **csv)
{
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = REDFOX_DEVICE_CPU;
    o.profile = 1;
    rf_result *res = NULL;
    int rc = rf_run(db, p, &o, &res);
    if (rc) fprintf(stderr, "run: %s\n", rf_errmsg(db));
    CHECK(rc == REDFOX_OK);
    kinds[0] = 0;
    for (int32_t k = 0; res && k < rf_result_profile_count(res); k++) {
        int64_t calls = 0;
        const char *what = rf_result_profile_kernel(res, k, &calls, NULL, NULL);
        if (what && calls && strlen(kinds) + strlen(what) + 2 < kn) strcat(strcat(kinds, what), "|");
    }
    *csv = NULL;
    CHECK(res && rf_result_text(res, 0, REDFOX_FORMAT_CSV, csv, NULL) == REDFOX_OK);
    rf_result_free(res);
}

static void test_options(void)
{
    CHECK(rf_api_level() == REDFOX_API_LEVEL && REDFOX_API_LEVEL >= 2);
    /* a graph with 4 triangles among 7 nodes (and edges in no triangle) */
    int64_t a[] = {1, 2, 1, 3, 2, 4, 4, 5, 4, 6, 6, 1};
    int64_t b[] = {2, 3, 3, 4, 4, 5, 6, 6, 7, 7, 7, 7};
    int types[] = {REDFOX_INT, REDFOX_INT};
    const void *cols[] = {a, b};
    rf_database *db = NULL;
    CHECK(rf_open(NULL, &db) == REDFOX_OK);
    CHECK(rf_database_put_rows(db, "edge", 2, types, 12, cols) == REDFOX_OK);

    rf_program *lftj = compile_with(NULL);
    rf_compile_options co;
    rf_compile_options_init(&co, sizeof co);
    CHECK(co.size == sizeof co && !co.no_lftj && !co.no_exists && !co.no_opt);
    co.no_lftj = 1;
    rf_program *binary = compile_with(&co);
    char k1[512], k2[512], *csv1 = NULL, *csv2 = NULL;
    run_profiled(db, lftj, k1, sizeof k1, &csv1);
    run_profiled(db, binary, k2, sizeof k2, &csv2);
    /* the same answer, by another plan: a triejoin kernel only without no_lftj */
    CHECK(csv1 && csv2 && !strcmp(csv1, csv2));
    CHECK(csv1 && !strcmp(csv1, "a,b,c\n1,2,3\n2,3,4\n4,5,6\n4,6,7\n"));
    CHECK(strstr(k1, "lftj") && !strstr(k2, "lftj"));
    CHECK(strcmp(k1, k2) != 0);
    rf_free(csv1);
    rf_free(csv2);
    co.no_opt = 1; /* no passes at all: still the same answer */
    rf_program *plain = compile_with(&co);
    run_profiled(db, plain, k2, sizeof k2, &csv2);
    CHECK(csv2 && !strcmp(csv2, "a,b,c\n1,2,3\n2,3,4\n4,5,6\n4,6,7\n"));
    rf_free(csv2);

    /* options not set up by the init: refused, saying so */
    rf_compile_options raw;
    memset(&raw, 0, sizeof raw);
    rf_program *p = NULL;
    const char *names[] = {"tri.logic"}, *texts[] = {tri_src};
    CHECK(rf_compile_buffers_v2(names, texts, NULL, 1, &raw, &p) == REDFOX_MISUSE &&
          strstr(rf_program_errmsg(p), "rf_compile_options_init"));
    rf_program_free(p);
    /* level 1's init sets up only level 1's fields: a level-1 caller's
    ** struct (no room for the rest) is not written past its end */
    struct {
        rf_run_options o;
        unsigned char guard[64];
    } l1;
    memset(&l1, 0xAB, sizeof l1);
    rf_run_options_init(&l1.o);
    size_t l1size = offsetof(rf_run_options, trace_file) + sizeof(const char *);
    CHECK(l1.o.size == l1size && l1.o.device == REDFOX_DEVICE_AUTO && l1.o.trace_file == NULL);
    CHECK(((unsigned char *)&l1.o)[l1size] == 0xAB);
    l1.o.device = REDFOX_DEVICE_CPU;
    rf_result *res = NULL;
    CHECK(rf_run(db, lftj, &l1.o, &res) == REDFOX_OK && rf_result_rows(res, 0) == 4); /* the rest: defaults */
    rf_result_free(res);
    rf_program_free(lftj);
    rf_program_free(binary);
    rf_program_free(plain);
    rf_close(db);
}

/* ---- progress: an input read from a FIFO that pauses ---- */

typedef struct seen {
    int loads, done, fixpoints;
    char input[64], phase[64];
    int64_t bytes;
    void *user;
} seen;

static void on_progress(void *user, const rf_progress *p)
{
    seen *s = user;
    s->user = user;
    CHECK(p->size >= offsetof(rf_progress, bytes_total));
    if (p->kind == REDFOX_PROGRESS_FIXPOINT) {
        s->fixpoints++;
        return;
    }
    CHECK(p->kind == REDFOX_PROGRESS_LOAD);
    if (p->done) {
        s->done++;
        return;
    }
    s->loads++;
    CHECK(p->seconds >= 0.9 && p->input && p->path && p->phase);
    if (p->input) snprintf(s->input, sizeof s->input, "%s", p->input);
    if (p->phase) snprintf(s->phase, sizeof s->phase, "%s", p->phase);
    if (p->bytes_done > s->bytes) s->bytes = p->bytes_done;
}

static void *slow_writer(void *arg)
{
    FILE *f = fopen(arg, "w");
    if (!f) return NULL;
    fputs("1,2\n2,3\n", f);
    fflush(f);
    sleep(2); /* the load has run over a second: it reports */
    fputs("1,3\n", f);
    fclose(f);
    return NULL;
}

static void test_progress(void)
{
    char dir[] = "/tmp/rf_api2_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/e.csv", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    const char *src = "edge(x, y) -> int(x), int(y).\n"
                      "lang:input[`edge] = \"e.csv\".\n"
                      "lang:input:delimiter[`edge] = \",\".\n"
                      "tri(a, b, c) <- edge(a, b), edge(b, c), edge(a, c).\n"
                      "lang:output[`tri] = \"tri\".\n";
    rf_program *p = NULL;
    CHECK(rf_compile(src, -1, "tri.logic", &p) == REDFOX_OK);
    rf_database *db = NULL;
    CHECK(rf_open(dir, &db) == REDFOX_OK);
    pthread_t th;
    pthread_create(&th, NULL, slow_writer, fifo);
    seen s;
    memset(&s, 0, sizeof s);
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = REDFOX_DEVICE_CPU;
    o.progress = on_progress;
    o.progress_user = &s;
    rf_result *res = NULL;
    int rc = rf_run(db, p, &o, &res);
    pthread_join(th, NULL);
    if (rc) fprintf(stderr, "run: %s\n", rf_errmsg(db));
    CHECK(rc == REDFOX_OK && rf_result_rows(res, 0) == 1);
    CHECK(s.loads >= 1 && s.done == 1 && s.user == &s);
    if (strcmp(s.input, "edge") || strcmp(s.phase, "reading") || s.bytes < 8 || s.bytes > 12)
        fprintf(stderr, "progress: input %s phase %s bytes %lld\n", s.input, s.phase, (long long)s.bytes);
    CHECK(!strcmp(s.input, "edge") && !strcmp(s.phase, "reading") && s.bytes >= 8 && s.bytes <= 12); /* 8 before the pause */
    rf_result_free(res);
    rf_program_free(p);
    rf_close(db);
    unlink(fifo);
    rmdir(dir);
}

/* ---- the profile's text, the timeline, a writer callback ---- */

static int to_buf(void *user, const void *bytes, int64_t n)
{
    char *b = user;
    size_t have = strlen(b);
    if (have + (size_t)n >= 256) return 1;
    memcpy(b + have, bytes, (size_t)n);
    b[have + (size_t)n] = 0;
    return 0;
}

static int refuse(void *user, const void *bytes, int64_t n)
{
    (void)user, (void)bytes, (void)n;
    return 1;
}

static void test_profile(void)
{
    int64_t a[] = {1, 2, 1}, b[] = {2, 3, 3};
    int types[] = {REDFOX_INT, REDFOX_INT};
    const void *cols[] = {a, b};
    rf_database *db = NULL;
    CHECK(rf_open(NULL, &db) == REDFOX_OK);
    CHECK(rf_database_put_rows(db, "edge", 2, types, 3, cols) == REDFOX_OK);
    rf_program *p = compile_with(NULL);
    rf_trace *t = rf_trace_new();
    CHECK(t != NULL);
    double c0 = rf_trace_clock();
    CHECK(rf_trace_event(t, "phase", "compile", c0, rf_trace_clock(), -1) == REDFOX_OK);
    /* times that are not finite are refused (NaN was written as nan: no JSON) */
    CHECK(rf_trace_event(t, "phase", "nan", NAN, c0, -1) == REDFOX_MISUSE && strstr(rf_trace_errmsg(t), "finite"));
    CHECK(rf_trace_event(t, "phase", "inf", c0, INFINITY, -1) == REDFOX_MISUSE);
    /* no category or name: said so (the message was empty) */
    CHECK(rf_trace_event(t, NULL, "x", c0, c0, -1) == REDFOX_MISUSE && strstr(rf_trace_errmsg(t), "no category"));
    CHECK(rf_trace_event(t, "phase", NULL, c0, c0, -1) == REDFOX_MISUSE && strstr(rf_trace_errmsg(t), "no name"));
    /* names that are not UTF-8: refused (their bytes went into the file, which no JSON parser read) */
    CHECK(rf_trace_event(t, "phase", "bad\xff", c0, c0, -1) == REDFOX_MISUSE && strstr(rf_trace_errmsg(t), "UTF-8"));
    CHECK(rf_trace_event(t, "ph\xc0\x80", "x", c0, c0, -1) == REDFOX_MISUSE && strstr(rf_trace_errmsg(t), "category"));
    CHECK(rf_trace_event(t, "phase", "later", c0, rf_trace_clock(), -1) == REDFOX_OK && !*rf_trace_errmsg(t));
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = REDFOX_DEVICE_CPU;
    o.profile = 1;
    o.trace = t;
    rf_result *res = NULL;
    CHECK(rf_run(db, p, &o, &res) == REDFOX_OK);
    /* the profile as `redfox run --profile` prints it */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(rf_result_profile_write(res, f) == REDFOX_OK);
    fclose(f);
    CHECK(text && !strncmp(text, "profile (device cpu): load ", 27));
    CHECK(text && strstr(text, "\nkernel kind ") && strstr(text, " lftj ") && strstr(text, "\nphases: read "));
    free(text);
    CHECK(rf_result_profile_write(res, NULL) == REDFOX_MISUSE);
    CHECK(rf_result_device_log(res) == NULL); /* no gpu_trace setting */
    /* a writer callback gets what rf_result_text gives; a refusal is REDFOX_IO */
    char buf[256] = "", *csv = NULL;
    CHECK(rf_result_write_to(res, 0, REDFOX_FORMAT_TBL, to_buf, buf) == REDFOX_OK);
    CHECK(rf_result_text(res, 0, REDFOX_FORMAT_TBL, &csv, NULL) == REDFOX_OK && !strcmp(buf, csv));
    rf_free(csv);
    CHECK(rf_result_write_to(res, 0, REDFOX_FORMAT_CSV, refuse, NULL) == REDFOX_IO);
    CHECK(rf_result_write_to(res, 9, REDFOX_FORMAT_CSV, to_buf, buf) == REDFOX_NOTFOUND);
    /* the caller's timeline: its phase, the run's kernels and "run" phase */
    char dir[] = "/tmp/rf_api2_XXXXXX", path[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/t.json", dir);
    CHECK(rf_trace_write(t, path, "api test") == REDFOX_OK && !*rf_trace_errmsg(t));
    FILE *jf = fopen(path, "r");
    char json[65536] = "";
    size_t n = jf ? fread(json, 1, sizeof json - 1, jf) : 0;
    json[n] = 0;
    if (jf) fclose(jf);
    CHECK(strstr(json, "\"compile\"") && strstr(json, "\"run\"") && strstr(json, "\"kernel\"") &&
          strstr(json, "api test"));
    CHECK(!strstr(json, ":nan") && !strstr(json, ":-nan") && !strstr(json, ":inf") && !strstr(json, "\"nan\""));
    /* a file that cannot be written: REDFOX_IO, the record names it */
    snprintf(path, sizeof path, "%s/no/such/t.json", dir);
    CHECK(rf_trace_write(t, path, NULL) == REDFOX_IO && rf_trace_diag_count(t) >= 1 &&
          strstr(rf_trace_diag(t, 0)->file, "no/such"));
    CHECK(rf_trace_write(t, "", NULL) == REDFOX_MISUSE && !strcmp(rf_trace_errmsg(t), "rf_trace_write: no file"));
    CHECK(rf_trace_write(t, path, "proc\xfe") == REDFOX_MISUSE && strstr(rf_trace_errmsg(t), "not valid UTF-8"));
    snprintf(path, sizeof path, "%s/t.json", dir);
    unlink(path);
    rmdir(dir);
    rf_trace_free(t);
    rf_result_free(res);
    rf_program_free(p);
    rf_close(db);
}

/* The text of res's profile (owned), "" when none. */
static char *profile_text(rf_result *res)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        rf_result_profile_write(res, f);
        fclose(f);
    }
    return text;
}

/* --device auto and the runs ahead (rf_run_options.runs, later): a model
** of this program (in a cache folder of the test's) where a run costs the
** CPU 0.15 s and a started GPU 0.001 s after a fresh start of 0.3 s. One
** run stays on the CPU without loading the GPU's driver; three runs, or
** one with a later program run three times, choose the GPU (here, where
** there may be none: tried, then the CPU). */
static void test_runs(void)
{
    char dir[] = "/tmp/rf_api2r_XXXXXX", path[256], model[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/e.csv", dir);
    FILE *e = fopen(path, "w");
    CHECK(e != NULL);
    if (!e) return;
    fputs("1|2\n2|3\n1|3\n", e);
    fclose(e);
    snprintf(model, sizeof model, "%s/cache/place/model.txt", dir);
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    rf_database *db = NULL;
    CHECK(rf_open(dir, &db) == REDFOX_OK && rf_database_keep_inputs(db, 1) == REDFOX_OK);
    rf_program *p = compile_with(NULL);
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = REDFOX_DEVICE_CPU;
    o.cache_dir = cache;
    rf_result *res = NULL;
    int rc0 = rf_run(db, p, &o, &res); /* its run record: the program's hash and inputs */
    if (rc0) fprintf(stderr, "run: %s\n", rf_errmsg(db));
    CHECK(rc0 == REDFOX_OK);
    rf_result_free(res);
    char line[512] = "", prog[32] = "";
    double rows = 0, bytes = 0;
    int kernels = 0;
    FILE *m = fopen(model, "r");
    while (m && fgets(line, sizeof line, m))
        if (sscanf(line, "r %31s cpu 0 %lf %lf %d", prog, &rows, &bytes, &kernels) == 4) break;
    if (m) fclose(m);
    CHECK(prog[0] && rows > 0);
    const char *want[3] = {"chose cpu (model: 2 records); the GPU's driver not loaded",
                           "auto: expected 3 runs: cpu 0.450000 s, gpu 0.30", "gain on a started GPU 0.44"};
    for (int c = 0; c < 3; c++) {
        m = fopen(model, "w"); /* anew each time: the runs add their own records */
        if (m) {
            fprintf(m, "redfox placement model 2\nr %s cpu 0 %.17g %.17g %d 0 0 0.15\nr %s gpu 1 %.17g %.17g %d 0.3 0 0.001\n",
                    prog, rows, bytes, kernels, prog, rows, bytes, kernels);
            fclose(m);
        }
        o.device = REDFOX_DEVICE_AUTO;
        o.profile = 1;
        o.runs = c == 1 ? 3 : 1;
        const rf_program *later[1] = {p};
        o.later = c == 2 ? later : NULL;
        o.nlater = c == 2;
        o.later_runs = 3;
        res = NULL;
        CHECK(rf_run(db, p, &o, &res) == REDFOX_OK);
        char *text = profile_text(res);
        if (!text || !strstr(text, want[c])) fprintf(stderr, "case %d: no '%s' in:\n%s", c, want[c], text ? text : "");
        CHECK(text && strstr(text, want[c]));
        /* the GPU chosen: where there is none the CPU runs, saying so */
        if (c > 0) CHECK(text && (strstr(text, "-> chose gpu") || strstr(text, "gpu - (no usable GPU) -> chose cpu")));
        free(text);
        CHECK(res && rf_result_rows(res, 0) == 1);
        rf_result_free(res);
    }
    rf_program_free(p);
    rf_close(db);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    int all = !strcmp(what, "all");
    if (all || !strcmp(what, "options")) test_options();
    if (all || !strcmp(what, "progress")) test_progress();
    if (all || !strcmp(what, "profile")) test_profile();
    if (all || !strcmp(what, "runs")) test_runs();
    if (failures) fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
