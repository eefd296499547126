/*
** api/tests/test_api_level3.c: what API level 3 added to libredfox, through
** its public header only: a program written as a .rfx file
** (rf_program_write_rfx) that compiles back and runs to the same answer,
** and its intermediate forms (rf_program_dump) with compile stop_after.
**
** Owns: `test_api3 rfx|dump DIR`.
*/
#include "redfox.h"
#include "test_check.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *tc_src = "edge(x, y) -> int(x), int(y).\n"
                            "lang:input[`edge] = \"edge.csv\".\n"
                            "path(x, y) -> int(x), int(y).\n"
                            "path(x, y) <- edge(x, y).\n"
                            "path(x, z) <- path(x, y), edge(y, z).\n"
                            "lang:output[`path] = \"path\".\n";

static rf_program *compile_with(const char *src, const rf_compile_options *o, int want)
{
    const char *names[] = {"tc.logic"}, *texts[] = {src};
    rf_program *p = NULL;
    int rc = rf_compile_buffers_v2(names, texts, NULL, 1, o, &p);
    if (rc != want) fprintf(stderr, "compile: %d %s\n", rc, rf_program_errmsg(p));
    CHECK(rc == want && p);
    return p;
}

/* The paths of a run of p on edges 1->2->3->4, as "x>y " pairs. */
static void run_tc(const rf_program *p, char *out, size_t n)
{
    rf_database *db = NULL;
    CHECK(rf_open(NULL, &db) == REDFOX_OK);
    int64_t a[] = {1, 2, 3}, b[] = {2, 3, 4};
    const void *cols[] = {a, b};
    int types[] = {REDFOX_INT, REDFOX_INT};
    CHECK(rf_database_put_rows(db, "edge", 2, types, 3, cols) == REDFOX_OK);
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = REDFOX_DEVICE_CPU;
    rf_result *res = NULL;
    int rc = rf_run(db, p, &o, &res);
    if (rc) fprintf(stderr, "run: %s\n", rf_errmsg(db));
    CHECK(rc == REDFOX_OK);
    out[0] = 0;
    int32_t i = rf_result_find(res, "path");
    for (int64_t r = 0; res && r < rf_result_rows(res, i); r++) {
        size_t k = strlen(out);
        snprintf(out + k, n - k, "%lld>%lld ", (long long)rf_result_int(res, i, 0, r),
                 (long long)rf_result_int(res, i, 1, r));
    }
    rf_result_free(res);
    rf_close(db);
}

static void test_rfx(const char *dir)
{
    char path[4096], want[512], got[512];
    snprintf(path, sizeof path, "%s/api3_tc.rfx", dir);
    rf_compile_options o;
    rf_compile_options_init(&o, sizeof o);
    o.cache_dir = ""; /* no NVRTC cache written by a test */
    rf_program *p = compile_with(tc_src, &o, REDFOX_OK);
    run_tc(p, want, sizeof want);
    CHECK(!strcmp(want, "1>2 1>3 1>4 2>3 2>4 3>4 "));
    remove(path);
    int rc = rf_program_write_rfx(p, path, &o);
    if (rc) fprintf(stderr, "write: %s\n", rf_program_errmsg(p));
    CHECK(rc == REDFOX_OK);
    /* written whole and renamed: no file left aside */
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && sb.st_size > 16);
    const char *paths[] = {path};
    rf_program *q = NULL;
    CHECK(rf_compile_files(paths, 1, &q) == REDFOX_OK);
    CHECK(rf_program_is_compiled(q) == 1);
    CHECK(rf_program_output_count(q) == 1 && !strcmp(rf_program_output_name(q, 0), "path"));
    run_tc(q, got, sizeof got);
    CHECK(!strcmp(want, got));
    /* the declared order and limit: known from LogiQL, not from a .rfx file */
    const char *ord_src = "e(x, y) -> int(x), int(y).\n"
                          "lang:input[`e] = \"e.csv\".\n"
                          "lang:output[`e] = \"out\".\n"
                          "lang:output:orderBy[`e] = \"2 desc, 1\".\n"
                          "lang:output:limit[`e] = 3.\n";
    rf_program *op = compile_with(ord_src, NULL, REDFOX_OK);
    int32_t cols[4] = {-1, -1, -1, -1};
    int desc[4] = {-1, -1, -1, -1};
    int64_t limit = 0;
    CHECK(rf_program_output_order(op, 0, cols, desc, 4, &limit) == 2);
    CHECK(cols[0] == 1 && desc[0] == 1 && cols[1] == 0 && desc[1] == 0 && limit == 3);
    CHECK(rf_program_output_order(op, 1, cols, desc, 4, &limit) == -1 && limit == -1);
    rf_program_free(op);
    CHECK(rf_program_output_order(p, 0, cols, NULL, 4, &limit) == 0 && limit == -1);
    CHECK(rf_program_output_order(q, 0, cols, NULL, 4, &limit) == -1);
    /* a .rfx program writes again (its Harmony) */
    char again[4096];
    snprintf(again, sizeof again, "%s/api3_tc2.rfx", dir);
    CHECK(rf_program_write_rfx(q, again, NULL) == REDFOX_OK);
    rf_program_free(q);
    /* a folder that does not exist: REDFOX_IO naming the path, the old file kept */
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.rfx", dir);
    CHECK(rf_program_write_rfx(p, bad, &o) == REDFOX_IO);
    CHECK(strstr(rf_program_errmsg(p), "no/such/dir") != NULL);
    CHECK(rf_program_write_rfx(p, NULL, &o) == REDFOX_MISUSE);
    /* an empty path is no path (it was REDFOX_IO, "cannot replace it: No such file or directory") */
    CHECK(rf_program_write_rfx(p, "", &o) == REDFOX_MISUSE && strstr(rf_program_errmsg(p), "no path"));
    CHECK(rf_program_write_rfx(NULL, path, &o) == REDFOX_MISUSE);
    rf_compile_options junk;
    memset(&junk, 0, sizeof junk);
    CHECK(rf_program_write_rfx(p, path, &junk) == REDFOX_MISUSE);
    rf_program_free(p);
    /* a program that did not compile is not written */
    rf_program *e = compile_with("p(x) -> int(x).\np(x) <- q(x).\n", NULL, REDFOX_ERROR);
    CHECK(rf_program_write_rfx(e, path, NULL) == REDFOX_MISUSE);
    rf_program_free(e);
    /* nor one compiled only as far as its plan, and rf_run refuses it */
    rf_compile_options s;
    rf_compile_options_init(&s, sizeof s);
    s.stop_after = REDFOX_STAGE_PLAN;
    rf_program *sp = compile_with(tc_src, &s, REDFOX_OK);
    CHECK(rf_program_write_rfx(sp, path, NULL) == REDFOX_MISUSE);
    CHECK(strstr(rf_program_errmsg(sp), "stop_after") != NULL);
    rf_database *db = NULL;
    rf_result *res = NULL;
    CHECK(rf_open(NULL, &db) == REDFOX_OK);
    CHECK(rf_run(db, sp, NULL, &res) == REDFOX_MISUSE && !res);
    CHECK(strstr(rf_errmsg(db), "stop_after") != NULL);
    rf_close(db);
    rf_program_free(sp);
    s.stop_after = 9;
    rf_program *bs = NULL;
    const char *names[] = {"x"}, *texts[] = {tc_src};
    CHECK(rf_compile_buffers_v2(names, texts, NULL, 1, &s, &bs) == REDFOX_MISUSE);
    rf_program_free(bs);
    remove(path);
    remove(again);
}

typedef struct text {
    char *s;
    size_t n;
    int stop_at; /* a writer that says stop at its call number (0: never) */
    int calls;
} text;

static int gather(void *user, const void *bytes, int64_t n)
{
    text *t = user;
    if (t->stop_at && ++t->calls >= t->stop_at) return 1;
    char *g = realloc(t->s, t->n + (size_t)n + 1);
    if (!g) return 1;
    memcpy(g + t->n, bytes, (size_t)n);
    t->n += (size_t)n;
    g[t->n] = 0;
    t->s = g;
    return 0;
}

/* The form what of p in format: its code; *out the text (free it). */
static int dump(rf_program *p, int what, int format, const rf_compile_options *o, char **out)
{
    text t = {0};
    int rc = rf_program_dump(p, what, format, o, gather, &t);
    *out = t.s ? t.s : calloc(1, 1);
    return rc;
}

static void test_dump(void)
{
    char *s = NULL;
    rf_program *p = compile_with(tc_src, NULL, REDFOX_OK);
    /* every form of a compiled program, each non-empty and recognisably its own */
    CHECK(dump(p, REDFOX_DUMP_AST, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_OK && strstr(s, "path"));
    free(s);
    CHECK(dump(p, REDFOX_DUMP_AST, REDFOX_DUMP_YAML, NULL, &s) == REDFOX_OK && strstr(s, "path"));
    free(s);
    CHECK(dump(p, REDFOX_DUMP_RULES, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_OK && strstr(s, "path"));
    free(s);
    CHECK(dump(p, REDFOX_DUMP_PLAN, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_OK && strstr(s, "path"));
    free(s);
    CHECK(dump(p, REDFOX_DUMP_PLAN, REDFOX_DUMP_DOT, NULL, &s) == REDFOX_OK && !strncmp(s, "digraph", 7));
    free(s);
    CHECK(dump(p, REDFOX_DUMP_HARMONY, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_OK && strlen(s) > 20);
    free(s);
    CHECK(dump(p, REDFOX_DUMP_FUSED, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_OK && strlen(s) > 20);
    free(s);
    rf_compile_options nf;
    rf_compile_options_init(&nf, sizeof nf);
    nf.no_fuse = 1;
    CHECK(dump(p, REDFOX_DUMP_FUSED, REDFOX_DUMP_TEXT, &nf, &s) == REDFOX_OK && strstr(s, "no fused kernels (--no-fuse)"));
    free(s);
    CHECK(dump(p, REDFOX_DUMP_CUDA, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_OK && strstr(s, "__global__"));
    free(s);
    /* formats a form has not, unknown forms, a writer that stops */
    CHECK(dump(p, REDFOX_DUMP_RULES, REDFOX_DUMP_YAML, NULL, &s) == REDFOX_MISUSE && !*s);
    free(s);
    /* the format by name and the ones the form has (it said "rules has no format 1") */
    CHECK(!strcmp(rf_program_errmsg(p), "rf_program_dump: rules has no format YAML (it has text)"));
    CHECK(dump(p, REDFOX_DUMP_HARMONY, REDFOX_DUMP_DOT, NULL, &s) == REDFOX_MISUSE);
    free(s);
    CHECK(dump(p, REDFOX_DUMP_AST, REDFOX_DUMP_DOT, NULL, &s) == REDFOX_MISUSE && !*s);
    free(s);
    CHECK(!strcmp(rf_program_errmsg(p), "rf_program_dump: ast has no format dot (it has text and YAML)"));
    CHECK(dump(p, 42, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_MISUSE);
    free(s);
    CHECK(rf_program_dump(p, REDFOX_DUMP_AST, REDFOX_DUMP_TEXT, NULL, NULL, NULL) == REDFOX_MISUSE);
    text stop = {0, 0, 1, 0};
    CHECK(rf_program_dump(p, REDFOX_DUMP_PLAN, REDFOX_DUMP_TEXT, NULL, gather, &stop) == REDFOX_IO);
    free(stop.s);
    CHECK(rf_program_dump(NULL, REDFOX_DUMP_AST, REDFOX_DUMP_TEXT, NULL, gather, &stop) == REDFOX_MISUSE);
    /* the plan as compiled: no_opt changes it */
    char *opt = NULL, *raw = NULL;
    CHECK(dump(p, REDFOX_DUMP_PLAN, REDFOX_DUMP_TEXT, NULL, &opt) == REDFOX_OK);
    rf_program_free(p);
    rf_compile_options no;
    rf_compile_options_init(&no, sizeof no);
    no.no_opt = 1;
    no.stop_after = REDFOX_STAGE_PLAN;
    p = compile_with(tc_src, &no, REDFOX_OK);
    CHECK(dump(p, REDFOX_DUMP_PLAN, REDFOX_DUMP_TEXT, NULL, &raw) == REDFOX_OK && *raw);
    CHECK(dump(p, REDFOX_DUMP_HARMONY, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_MISUSE);
    free(s);
    CHECK(strstr(rf_program_errmsg(p), "stop_after") != NULL);
    CHECK(strcmp(opt, raw) != 0 || strlen(opt) > 0);
    free(opt);
    free(raw);
    rf_program_free(p);
    /* stop_after AST: a program with a type error still shows its tree, and
    ** RULES of it is an error with a location */
    const char *bad = "p(x) -> int(x).\np(x) <- q(x).\n";
    rf_compile_options a;
    rf_compile_options_init(&a, sizeof a);
    a.stop_after = REDFOX_STAGE_AST;
    p = compile_with(bad, &a, REDFOX_OK);
    CHECK(dump(p, REDFOX_DUMP_AST, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_OK && strstr(s, "q"));
    free(s);
    CHECK(dump(p, REDFOX_DUMP_RULES, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_MISUSE);
    free(s);
    rf_program_free(p);
    a.stop_after = REDFOX_STAGE_RULES;
    p = compile_with(bad, &a, REDFOX_ERROR);
    CHECK(rf_program_diag_count(p) >= 1 && rf_program_diag(p, 0)->line == 2);
    CHECK(dump(p, REDFOX_DUMP_RULES, REDFOX_DUMP_TEXT, NULL, &s) == REDFOX_MISUSE);
    free(s);
    CHECK(strstr(rf_program_errmsg(p), "did not compile") != NULL);
    rf_program_free(p);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    const char *dir = argc > 2 ? argv[2] : ".";
    int all = !strcmp(what, "all");
    if (all || !strcmp(what, "rfx")) test_rfx(dir);
    if (all || !strcmp(what, "dump")) test_dump();
    if (failures) fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
