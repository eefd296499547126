/*
** api/tests/test_api.c: libredfox through its public header only:
** compile diagnostics, runs over relations given in memory, the typed
** getters of every type, errors of each kind, results outliving their
** database and program, and the Arrow C Data Interface both ways (every
** type, offsets, narrow and wide Arrow types, nulls and malformed arrays
** refused), and threads
** using distinct objects at once, and inputs kept between runs
** (rf_database_keep_inputs) with outputs written to a FILE (rf_result_write),
** on the GPU too (the device keeps the columns it copied), and the run's
** settings string honoured for the whole run, and rows given for a
** predicate read by it alone.
**
** Owns: the library's unit tests; `test_api basic|types|errors|arrow|arrowbad|stream|threads|trace|keep|settings|readers|devices|keepgpu|buffers FILE|rfx FILE`.
*/
#include "redfox.h"
#include "test_check.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK_OK(call, obj_msg)                                                                      \
    do {                                                                                             \
        int rc_ = (call);                                                                            \
        if (rc_ != REDFOX_OK) {                                                                      \
            fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, rc_, obj_msg); \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

static const char *tc_src =
    "edge(a, b) -> int(a), int(b).\n"
    "lang:input[`edge] = \"edge.csv\".\n"
    "lang:input:delimiter[`edge] = \",\".\n"
    "reach(a, b) <- edge(a, b).\n"
    "reach(a, c) <- reach(a, b), edge(b, c).\n"
    "lang:output[`reach] = \"reach\".\n";

static rf_program *compile_ok(const char *src)
{
    rf_program *p = NULL;
    CHECK_OK(rf_compile(src, -1, "test.logic", &p), rf_program_errmsg(p));
    return p;
}

/* Transitive closure over a graph given in memory, checked against a closure
** computed here by repeated squaring of a reachability matrix. */
static void test_basic(void)
{
    CHECK(!strcmp(rf_libversion(), REDFOX_VERSION));
    CHECK(rf_libversion_number() == REDFOX_VERSION_NUMBER);
    CHECK(!strcmp(rf_type_name(REDFOX_DATE), "date") && rf_type_name(99) == NULL);

    /* a compile error: a structured diagnostic with file, line and column */
    rf_program *bad = NULL;
    CHECK(rf_compile("p(x) -> int(x).\nq(x) <- p(x), r(x).\n", -1, "bad.logic", &bad) == REDFOX_ERROR);
    CHECK(bad && rf_program_diag_count(bad) >= 1);
    const rf_diagnostic *g = rf_program_diag(bad, 0);
    CHECK(g && g->severity == REDFOX_SEV_ERROR && !strcmp(g->file, "bad.logic") && g->line == 2 && g->column > 0);
    CHECK(strstr(rf_program_errmsg(bad), "bad.logic:2:") == rf_program_errmsg(bad));
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    rf_result *res = NULL;
    CHECK(rf_run(db, bad, NULL, &res) == REDFOX_MISUSE && res == NULL && *rf_errmsg(db));
    rf_program_free(bad);

    enum { N = 12 };
    int64_t a[N + 2], b[N + 2];
    int n = 0;
    for (int i = 0; i < N - 1; i++, n++) a[n] = i, b[n] = i + 1; /* a chain */
    a[n] = N - 1, b[n++] = 4;                                     /* a cycle back */
    a[n] = 20, b[n++] = 21;                                       /* a separate pair */
    int types[2] = {REDFOX_INT, REDFOX_INT};
    const void *cols[2] = {a, b};
    CHECK_OK(rf_database_put_rows(db, "edge.csv", 2, types, n, cols), rf_errmsg(db));

    rf_program *p = compile_ok(tc_src);
    CHECK(rf_program_input_count(p) == 1 && !strcmp(rf_program_input_file(p, 0), "edge.csv"));
    CHECK(rf_program_output_count(p) == 1 && !strcmp(rf_program_output_name(p, 0), "reach"));
    rf_run_options o;
    rf_run_options_init(&o);
    o.device = REDFOX_DEVICE_CPU;
    o.threads = 2;
    CHECK_OK(rf_run(db, p, &o, &res), rf_errmsg(db));
    /* the result outlives the database and the program */
    rf_close(db);
    rf_program_free(p);
    static unsigned char m[32][32];
    memset(m, 0, sizeof m);
    for (int i = 0; i < n; i++) m[a[i]][b[i]] = 1;
    for (int k = 0; k < 32; k++)
        for (int i = 0; i < 32; i++)
            for (int j = 0; j < 32; j++) m[i][j] |= m[i][k] & m[k][j];
    int64_t want = 0;
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < 32; j++) want += m[i][j];
    CHECK(rf_result_count(res) == 1 && rf_result_find(res, "reach") == 0 && rf_result_find(res, "nope") == -1);
    CHECK(rf_result_rows(res, 0) == want);
    CHECK(rf_result_columns(res, 0) == 2 && rf_result_column_type(res, 0, 1) == REDFOX_INT);
    CHECK(!strcmp(rf_result_column_name(res, 0, 0), "a"));
    for (int64_t r = 0; r < rf_result_rows(res, 0); r++) {
        int64_t x = rf_result_int(res, 0, 0, r), y = rf_result_int(res, 0, 1, r);
        CHECK(x >= 0 && x < 32 && y >= 0 && y < 32 && m[x][y]);
    }
    const int64_t *col = rf_result_column_data(res, 0, 0);
    CHECK(col && col[0] == rf_result_int(res, 0, 0, 0));
    /* out of range and wrong type: zeros, never a crash */
    CHECK(rf_result_int(res, 0, 2, 0) == 0 && rf_result_int(res, 1, 0, 0) == 0 && rf_result_float(res, 0, 0, 0) == 0);
    CHECK(rf_result_string(res, 0, 0, 0, NULL) == NULL && rf_result_column_name(res, 0, 5) == NULL);
    char *text = NULL;
    int64_t len = 0;
    CHECK_OK(rf_result_text(res, 0, REDFOX_FORMAT_CSV, &text, &len), "rf_result_text");
    CHECK(text && !strncmp(text, "a,b\n", 4) && (int64_t)strlen(text) == len);
    rf_free(text);
    CHECK(rf_result_text(res, 3, REDFOX_FORMAT_CSV, &text, NULL) == REDFOX_NOTFOUND && text == NULL);
    CHECK(!strcmp(rf_result_device(res), "cpu"));
    rf_result_free(res);
    rf_result_free(NULL);
    rf_close(NULL);
    rf_program_free(NULL);
}

static const char *types_src =
    "t(i, f, d, s, b, dt) -> int(i), float(f), decimal(d), string(s), boolean(b), date(dt).\n"
    "lang:input[`t] = \"t.csv\".\n"
    "lang:input:delimiter[`t] = \",\".\n"
    "out(i, f, d, s, b, dt) <- t(i, f, d, s, b, dt).\n"
    "lang:output[`out] = \"out\".\n";

enum { NT = 5 };
static int64_t t_i[NT] = {3, -7, 0, INT64_MAX, INT64_MIN};
static double t_f[NT] = {1.5, -0.25, 1e300, 0, 3.0};
static int64_t t_d[NT] = {1234567, -1, 0, 999999999999, -5000000}; /* 1.234567, -0.000001, ... */
static const char *t_s[NT] = {"a", "", "γράμμα", "a,b\"c", "zz"};
static uint8_t t_b[NT] = {1, 0, 1, 0, 0};
static int32_t t_dt[NT] = {0, 9131, -719162, 2932896, 19000};
static const int t_types[6] = {REDFOX_INT, REDFOX_FLOAT, REDFOX_DECIMAL, REDFOX_STRING, REDFOX_BOOL, REDFOX_DATE};

/* Output 0 of res holds exactly the NT rows above (in any order). */
static void check_typed_rows(const rf_result *res)
{
    CHECK(rf_result_rows(res, 0) == NT && rf_result_columns(res, 0) == 6);
    for (int c = 0; c < 6; c++) CHECK(rf_result_column_type(res, 0, c) == t_types[c]);
    int seen[NT] = {0};
    for (int64_t r = 0; r < rf_result_rows(res, 0); r++) {
        int64_t i = rf_result_int(res, 0, 0, r);
        int k = -1;
        for (int j = 0; j < NT; j++)
            if (t_i[j] == i) k = j;
        CHECK(k >= 0);
        if (k < 0) continue;
        seen[k]++;
        int64_t len = -1;
        const char *s = rf_result_string(res, 0, 3, r, &len);
        CHECK(rf_result_float(res, 0, 1, r) == t_f[k]);
        CHECK(rf_result_decimal(res, 0, 2, r) == t_d[k]);
        CHECK(s && !strcmp(s, t_s[k]) && len == (int64_t)strlen(t_s[k]));
        CHECK(rf_result_bool(res, 0, 4, r) == t_b[k]);
        CHECK(rf_result_date(res, 0, 5, r) == t_dt[k]);
    }
    for (int k = 0; k < NT; k++) CHECK(seen[k] == 1);
}

static void test_types(void)
{
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    const void *cols[6] = {t_i, t_f, t_d, t_s, t_b, t_dt};
    CHECK_OK(rf_database_put_rows(db, "t", 6, t_types, NT, cols), rf_errmsg(db)); /* by predicate name */
    rf_program *p = compile_ok(types_src);
    rf_result *res = NULL;
    CHECK_OK(rf_run(db, p, NULL, &res), rf_errmsg(db));
    check_typed_rows(res);
    char *v = rf_result_value_text(res, 0, 5, 0);
    CHECK(v && strlen(v) == 10 && v[4] == '-');
    rf_free(v);
    rf_result_free(res);
    rf_program_free(p);
    rf_close(db);
}

/* Floats that are not finite are values, as in text inputs (docs/LANGUAGE.md):
** -inf < finite < inf < nan, nan = nan whatever its bits, -0 = 0. */
static void test_float_specials(void)
{
    static const char *src = "y(i, f) -> int(i), float(f).\n"
                             "lang:input[`y] = \"y.csv\".\n"
                             "g(f, n) <- agg<<n = count()>> y(_, f).\n"
                             "lang:output[`g] = \"g\".\n";
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    uint64_t payload_bits = UINT64_C(0x7ff8000000000123); /* a quiet NaN of other bits */
    double other_nan;
    memcpy(&other_nan, &payload_bits, sizeof other_nan);
    int64_t ids[6] = {1, 2, 3, 4, 5, 6};
    double fs[6] = {INFINITY, -INFINITY, NAN, other_nan, -0.0, 0.0};
    const void *cols[2] = {ids, fs};
    int types[2] = {REDFOX_INT, REDFOX_FLOAT};
    CHECK_OK(rf_database_put_rows(db, "y", 2, types, 6, cols), rf_errmsg(db));
    rf_program *p = compile_ok(src);
    rf_result *res = NULL;
    CHECK_OK(rf_run(db, p, NULL, &res), rf_errmsg(db));
    CHECK(rf_result_rows(res, 0) == 4);
    int seen_minf = 0, seen_zero = 0, seen_inf = 0, seen_nan = 0;
    for (int64_t r = 0; r < rf_result_rows(res, 0); r++) {
        double f = rf_result_float(res, 0, 0, r);
        int64_t n = rf_result_int(res, 0, 1, r);
        if (isnan(f)) seen_nan += n == 2;
        else if (isinf(f) && f < 0) seen_minf += n == 1;
        else if (isinf(f)) seen_inf += n == 1;
        else if (f == 0) seen_zero += n == 2;
    }
    CHECK(seen_minf == 1 && seen_zero == 1 && seen_inf == 1 && seen_nan == 1);
    rf_result_free(res);
    rf_program_free(p);
    rf_close(db);
}

/* The first error among db's diagnostics (notes may come before it), or NULL. */
static const rf_diagnostic *first_error(const rf_database *db)
{
    for (int64_t i = 0; i < rf_database_diag_count(db); i++)
        if (rf_database_diag(db, i)->severity == REDFOX_SEV_ERROR) return rf_database_diag(db, i);
    return NULL;
}

static void test_errors(void)
{
    rf_database *db = NULL;
    CHECK(rf_open("/nonexistent/folder", &db) == REDFOX_IO && strstr(rf_errmsg(db), "/nonexistent/folder"));
    rf_close(db);
    /* an empty path names no folder: a bad argument, said so (it was ": cannot open the data folder") */
    CHECK(rf_open("", &db) == REDFOX_MISUSE && !strcmp(rf_errmsg(db), "rf_open: an empty path (NULL: the current folder)"));
    rf_close(db);
    /* a folder given as a program says so (it said "read error") */
    const char *folder[1] = {"/"};
    rf_program *fp = NULL;
    CHECK(rf_compile_files(folder, 1, &fp) == REDFOX_ERROR &&
          !strcmp(rf_program_errmsg(fp), "/: cannot read the program: Is a directory"));
    rf_program_free(fp);
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    /* bad values are refused when given, naming the column and row */
    int32_t bad_date[2] = {0, 4000000};
    int dtype = REDFOX_DATE;
    const void *c1[1] = {bad_date};
    CHECK(rf_database_put_rows(db, "x", 1, &dtype, 2, c1) == REDFOX_ERROR && strstr(rf_errmsg(db), "row 2"));
    const char *bad_utf8[1] = {"\xff"};
    int stype = REDFOX_STRING;
    const void *c2[1] = {bad_utf8};
    CHECK(rf_database_put_rows(db, "x", 1, &stype, 1, c2) == REDFOX_ERROR &&
          !strcmp(rf_errmsg(db), "x: column 1, row 1: not valid UTF-8"));
    const char *null_str[2] = {"a", NULL};
    const void *c2n[1] = {null_str};
    CHECK(rf_database_put_rows(db, "x", 1, &stype, 2, c2n) == REDFOX_MISUSE &&
          !strcmp(rf_errmsg(db), "x: column 1, row 2: a NULL string"));
    int unknown = 42;
    CHECK(rf_database_put_rows(db, "x", 1, &unknown, 1, c2) == REDFOX_MISUSE);
    CHECK(rf_database_drop(db, "x") == REDFOX_NOTFOUND);
    /* a misuse's message is its own call's, saying what is missing (drop
    ** returned before clearing: the last call's message stayed) */
    CHECK(rf_database_put_rows(db, "", 1, &stype, 0, NULL) == REDFOX_MISUSE &&
          !strcmp(rf_errmsg(db), "rf_database_put_rows: no name"));
    CHECK(rf_database_drop(db, NULL) == REDFOX_MISUSE && !strcmp(rf_errmsg(db), "rf_database_drop: no name"));
    /* the program's types decide: a mismatch names the column */
    int64_t ints[2] = {1, 2};
    const void *c3[2] = {ints, ints};
    int two_ints[2] = {REDFOX_INT, REDFOX_DECIMAL};
    CHECK_OK(rf_database_put_rows(db, "edge", 2, two_ints, 2, c3), rf_errmsg(db));
    rf_program *p = compile_ok(tc_src);
    rf_result *res = NULL;
    CHECK(rf_run(db, p, NULL, &res) == REDFOX_ERROR && res == NULL && strstr(rf_errmsg(db), "column 2"));
    /* a declared key is checked as for a file */
    rf_program *pk = compile_ok("e(a, b) -> int(a), int(b).\nlang:input[`e] = \"e.csv\".\n"
                                "lang:input:key[`e] = \"a\".\nout(a) <- e(a, _).\nlang:output[`out] = \"out\".\n");
    int64_t ka[3] = {1, 2, 1}, kb[3] = {5, 6, 7};
    const void *c4[2] = {ka, kb};
    int ii[2] = {REDFOX_INT, REDFOX_INT};
    CHECK_OK(rf_database_put_rows(db, "e.csv", 2, ii, 3, c4), rf_errmsg(db));
    CHECK(rf_run(db, pk, NULL, &res) == REDFOX_ERROR && res == NULL);
    int errors = 0;
    for (int64_t i = 0; i < rf_database_diag_count(db); i++) errors += rf_database_diag(db, i)->severity == REDFOX_SEV_ERROR;
    CHECK(errors >= 1 && strstr(rf_errmsg(db), "e.csv"));
    /* located at the rows given, by row number, not at a line of e.csv (never read) */
    const rf_diagnostic *kd = first_error(db);
    CHECK(kd && !strcmp(kd->file, "<rows given for e.csv>") && kd->line == 3 && kd->column == 1);
    CHECK(strstr(rf_errmsg(db), "<rows given for e.csv>:3:1: ") == rf_errmsg(db));
    CHECK(strstr(rf_errmsg(db), "of row 3 is already in row 1") && !strstr(rf_errmsg(db), "line"));
    /* so is a functional predicate's dependency, the rows given under its name */
    rf_program *pf2 = compile_ok("price[k] = v -> int(k), decimal(v).\nlang:input[`price] = \"price.csv\".\n"
                                 "o(k, v) <- price[k] = v.\nlang:output[`o] = \"o\".\n");
    int64_t fk[3] = {1, 2, 1}, fv[3] = {2000000, 5000000, 3000000};
    const void *c5[2] = {fk, fv};
    int idec[2] = {REDFOX_INT, REDFOX_DECIMAL};
    CHECK_OK(rf_database_put_rows(db, "price", 2, idec, 3, c5), rf_errmsg(db));
    CHECK(rf_run(db, pf2, NULL, &res) == REDFOX_ERROR && res == NULL);
    const rf_diagnostic *fd = first_error(db);
    CHECK(fd && !strcmp(fd->file, "<rows given for price>") && fd->line == 3 && fd->column == 1);
    CHECK(strstr(rf_errmsg(db), "functional dependency violated") && strstr(rf_errmsg(db), "in row 3, but") &&
          strstr(rf_errmsg(db), "already in row 1") && !strstr(rf_errmsg(db), "price.csv"));
    if (!fd || strcmp(fd->file, "<rows given for price>")) fprintf(stderr, "fd: %s\n", rf_errmsg(db));
    CHECK_OK(rf_database_drop(db, "price"), rf_errmsg(db));
    rf_program_free(pf2);
    /* without the relation, the file is read: its absence is an error naming it */
    CHECK_OK(rf_database_drop(db, "edge"), rf_errmsg(db));
    CHECK(rf_run(db, p, NULL, &res) == REDFOX_IO && strstr(rf_errmsg(db), "edge.csv"));
    /* bad options */
    rf_run_options o;
    rf_run_options_init(&o);
    o.settings = "no_such_setting=1";
    CHECK(rf_run(db, p, &o, &res) == REDFOX_MISUSE && strstr(rf_errmsg(db), "no_such_setting"));
    o.settings = NULL;
    o.device = 17;
    CHECK(rf_run(db, p, &o, &res) == REDFOX_MISUSE);
    rf_run_options raw;
    memset(&raw, 0, sizeof raw); /* not through rf_run_options_init */
    CHECK(rf_run(db, p, &raw, &res) == REDFOX_MISUSE && strstr(rf_errmsg(db), "rf_run_options_init"));
    /* a file that cannot be read */
    rf_program *pf = NULL;
    const char *missing = "/nonexistent/x.logic";
    CHECK(rf_compile_files(&missing, 1, &pf) == REDFOX_ERROR && strstr(rf_program_errmsg(pf), "/nonexistent/x.logic"));
    rf_program_free(pf);
    CHECK(rf_compile(NULL, 0, NULL, &pf) == REDFOX_MISUSE);
    rf_program_free(pf);
    /* a NULL among the paths is named (it was "the program could not be compiled") */
    const char *two[2] = {"/nonexistent/x.logic", NULL};
    CHECK(rf_compile_files(two, 2, &pf) == REDFOX_MISUSE && strstr(rf_program_errmsg(pf), "path 2 is NULL"));
    rf_program_free(pf);
    /* an empty trace_file is refused naming the option (it said "cannot
    ** replace it: No such file or directory", naming neither) */
    rf_run_options_init_v2(&o, sizeof o);
    o.trace_file = "";
    CHECK(rf_run(db, p, &o, &res) == REDFOX_MISUSE && res == NULL && strstr(rf_errmsg(db), "trace_file is empty"));
    rf_program_free(pk);
    rf_program_free(p);
    rf_close(db);
}

/* ---- Arrow ---------------------------------------------------------------- */

/* A hand-made producer: one struct array whose children point at static
** buffers; release frees only the malloc'ed structs. */
typedef struct producer {
    struct ArrowArray top, kids[8];
    struct ArrowArray *kidp[8];
    const void *topbuf[1];
    const void *bufs[8][3];
    int released;
} producer;

static void release_kid(struct ArrowArray *a) { a->release = NULL; }
static void release_top(struct ArrowArray *a)
{
    producer *p = a->private_data;
    for (int i = 0; i < 8; i++)
        if (p->kids[i].release) p->kids[i].release(&p->kids[i]);
    p->released++;
    a->release = NULL;
}

static void schema_noop(struct ArrowSchema *s) { s->release = NULL; }

/* A struct schema top of n children sk[0..n) (formats and names given),
** skp pointing at them. */
static void schemas_init(struct ArrowSchema *top, struct ArrowSchema *sk, struct ArrowSchema **skp, int n,
                         const char *const *fmts, const char *const *names)
{
    for (int c = 0; c < n; c++) {
        memset(&sk[c], 0, sizeof sk[c]);
        sk[c].format = fmts[c];
        sk[c].name = names[c];
        sk[c].release = schema_noop;
        skp[c] = &sk[c];
    }
    memset(top, 0, sizeof *top);
    top->format = "+s";
    top->name = "";
    top->n_children = n;
    top->children = skp;
    top->release = schema_noop;
}

/* pr's struct array of rows rows from offset on, child c's buffers b1[c]
** (values or offsets) and, where b2 has one, b2[c] (a string's bytes). */
static void producer_init(producer *pr, int n, int64_t rows, int64_t offset, const void *const *b1,
                          const void *const *b2)
{
    memset(pr, 0, sizeof *pr);
    for (int c = 0; c < n; c++) {
        struct ArrowArray *a = &pr->kids[c];
        a->length = rows + offset;
        a->n_buffers = b2 && b2[c] ? 3 : 2;
        pr->bufs[c][1] = b1[c];
        pr->bufs[c][2] = b2 ? b2[c] : NULL;
        a->buffers = pr->bufs[c];
        a->release = release_kid;
        pr->kidp[c] = a;
    }
    pr->top.length = rows;
    pr->top.offset = offset;
    pr->top.n_buffers = 1;
    pr->top.buffers = pr->topbuf;
    pr->top.n_children = n;
    pr->top.children = pr->kidp;
    pr->top.release = release_top;
    pr->top.private_data = pr;
}

/* A float zero has no sign (docs/LANGUAGE.md): -0.0 given through
** rf_database_put_rows or Arrow (double "g", used where it lies, and float
** "f", widened) is 0.0, so 1.0f / x is inf and never -inf; the caller's
** buffers keep their bits. */
static int no_minus_inf(const rf_result *res, int64_t want_rows)
{
    int ok = rf_result_rows(res, 0) == want_rows;
    for (int64_t r = 0; r < rf_result_rows(res, 0); r++) {
        double y = rf_result_float(res, 0, 0, r);
        ok &= !(isinf(y) && y < 0);
    }
    return ok;
}

static void test_float_zero(void)
{
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    double xs[3] = {-0.0, 0.0, 2.0};
    const void *cols[1] = {xs};
    int types[1] = {REDFOX_FLOAT};
    CHECK_OK(rf_database_put_rows(db, "v", 1, types, 3, cols), rf_errmsg(db));
    rf_program *p = compile_ok("v(x) -> float(x).\nlang:input[`v] = \"v.csv\".\n"
                               "r(y) <- v(x), y = 1.0f / x.\nlang:output[`r] = \"r\".\n");
    rf_result *res = NULL;
    CHECK_OK(rf_run(db, p, NULL, &res), rf_errmsg(db));
    CHECK(no_minus_inf(res, 2)); /* inf and 0.5 */
    CHECK(signbit(xs[0]));
    rf_result_free(res);
    rf_program_free(p);
    rf_close(db);

    static double g[3] = {-0.0, 0.0, 4.0};
    static float f[3] = {-0.0f, 1.0f, 0.0f};
    struct ArrowSchema sk[2], *skp[2], top_s;
    static const char *fmts[2] = {"g", "f"}, *names[2] = {"x", "y"};
    schemas_init(&top_s, sk, skp, 2, fmts, names);
    producer pr;
    const void *data[2] = {g, f};
    producer_init(&pr, 2, 3, 0, data, NULL);
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    CHECK_OK(rf_database_put_arrow(db, "a", &top_s, &pr.top), rf_errmsg(db));
    p = compile_ok("a(x, y) -> float(x), float(y).\nlang:input[`a] = \"a.csv\".\n"
                   "s(z) <- a(x, _), z = 1.0f / x.\ns(z) <- a(_, y), z = 1.0f / y.\nlang:output[`s] = \"s\".\n");
    CHECK_OK(rf_run(db, p, NULL, &res), rf_errmsg(db));
    CHECK(no_minus_inf(res, 3)); /* inf, 0.25 and 1.0 */
    CHECK(signbit(g[0]) && signbit(f[0]));
    rf_result_free(res);
    rf_program_free(p);
    rf_close(db);
}

static void test_arrow(void)
{
    /* the columns, with a struct offset of 1 (row 0 is skipped) */
    static int64_t i64[NT + 1];
    static double f64[NT + 1];
    static uint8_t dec[(NT + 1) * 16];
    static int32_t str_off[NT + 2];
    static char str_data[64];
    static uint8_t bits[2];
    static int32_t d32[NT + 1];
    static int32_t i32[NT + 1] = {0, 10, 20, -30, 40, 50};
    int at = 0;
    str_off[0] = 0;
    memcpy(str_data, "skip", 4);
    at = 4;
    str_off[1] = at;
    for (int k = 0; k < NT; k++) {
        i64[k + 1] = t_i[k];
        f64[k + 1] = t_f[k];
        /* decimal128 at scale 2: t_d must be a multiple of 10^4 to be exact; use the int column */
        int64_t v = (int64_t)k * 125 - 250; /* -2.50, -1.25, 0.00, 1.25, 2.50 */
        uint64_t lo = (uint64_t)v, hi = v < 0 ? ~0ull : 0;
        memcpy(dec + (k + 1) * 16, &lo, 8);
        memcpy(dec + (k + 1) * 16 + 8, &hi, 8);
        memcpy(str_data + at, t_s[k], strlen(t_s[k]));
        at += (int)strlen(t_s[k]);
        str_off[k + 2] = at;
        if (t_b[k]) bits[(k + 1) / 8] |= (uint8_t)(1u << ((k + 1) % 8));
        d32[k + 1] = t_dt[k];
    }
    static const char *fmts[7] = {"l", "g", "d:10,2", "u", "b", "tdD", "i"};
    static const char *names[7] = {"i", "f", "d", "s", "b", "dt", "n"};
    struct ArrowSchema sk[7], *skp[7], top_s;
    schemas_init(&top_s, sk, skp, 7, fmts, names);
    producer pr;
    const void *data[7] = {i64, f64, dec, str_off, bits, d32, i32};
    const void *bytes[7] = {NULL, NULL, NULL, str_data, NULL, NULL, NULL};
    producer_init(&pr, 7, NT, 1, data, bytes);

    const char *src = "t(i, f, d, s, b, dt, n) -> int(i), float(f), decimal(d), string(s), boolean(b), date(dt), int(n).\n"
                      "lang:input[`t] = \"t.csv\".\n"
                      "out(i, f, d, s, b, dt, n) <- t(i, f, d, s, b, dt, n).\n"
                      "lang:output[`out] = \"out\".\n";
    rf_program *p = compile_ok(src);
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    /* a null is refused, and the array stays the caller's */
    pr.kids[6].null_count = 1;
    static uint8_t valid[1] = {0xfd}; /* row 1 (physical 1) null */
    pr.bufs[6][0] = valid;
    CHECK(rf_database_put_arrow(db, "t", &top_s, &pr.top) == REDFOX_ERROR && strstr(rf_errmsg(db), "null"));
    CHECK(pr.top.release != NULL);
    pr.kids[6].null_count = 0;
    pr.bufs[6][0] = NULL;
    CHECK_OK(rf_database_put_arrow(db, "t", &top_s, &pr.top), rf_errmsg(db));
    CHECK(pr.top.release == NULL && pr.released == 0); /* moved */
    rf_result *res = NULL;
    CHECK_OK(rf_run(db, p, NULL, &res), rf_errmsg(db));
    CHECK(rf_result_rows(res, 0) == NT);
    for (int64_t r = 0; r < rf_result_rows(res, 0); r++) {
        int64_t i = rf_result_int(res, 0, 0, r);
        int k = -1;
        for (int j = 0; j < NT; j++)
            if (t_i[j] == i) k = j;
        CHECK(k >= 0);
        if (k < 0) continue;
        CHECK(rf_result_float(res, 0, 1, r) == t_f[k]);
        CHECK(rf_result_decimal(res, 0, 2, r) == ((int64_t)k * 125 - 250) * 10000);
        CHECK(!strcmp(rf_result_string(res, 0, 3, r, NULL), t_s[k]));
        CHECK(rf_result_bool(res, 0, 4, r) == t_b[k]);
        CHECK(rf_result_date(res, 0, 5, r) == t_dt[k]);
        CHECK(rf_result_int(res, 0, 6, r) == i32[k + 1]);
    }
    rf_close(db); /* releases the moved array */
    CHECK(pr.released == 1);

    /* out through Arrow and back in: the same rows */
    struct ArrowSchema es;
    struct ArrowArray ea;
    CHECK_OK(rf_result_arrow(res, 0, &es, &ea), "");
    CHECK(!strcmp(es.format, "+s") && es.n_children == 7 && ea.length == NT && ea.n_children == 7);
    static const char *want[7] = {"l", "g", "d:38,6", "u", "b", "tdD", "l"};
    for (int c = 0; c < 7 && es.n_children == 7; c++) {
        CHECK(!strcmp(es.children[c]->format, want[c]));
        CHECK(!strcmp(es.children[c]->name, names[c]));
        CHECK(ea.children[c]->length == NT && ea.children[c]->null_count == 0);
    }
    rf_database *db2 = NULL;
    CHECK_OK(rf_open(NULL, &db2), rf_errmsg(db2));
    CHECK_OK(rf_database_put_arrow(db2, "t.csv", &es, &ea), rf_errmsg(db2));
    es.release(&es);
    rf_result *res2 = NULL;
    CHECK_OK(rf_run(db2, p, NULL, &res2), rf_errmsg(db2));
    CHECK(rf_result_rows(res2, 0) == NT);
    for (int c = 0; c < 7; c++) {
        char *t1 = NULL, *t2 = NULL;
        CHECK_OK(rf_result_text(res, 0, REDFOX_FORMAT_CSV, &t1, NULL), "");
        CHECK_OK(rf_result_text(res2, 0, REDFOX_FORMAT_CSV, &t2, NULL), "");
        CHECK(t1 && t2 && !strcmp(t1, t2));
        rf_free(t1);
        rf_free(t2);
    }
    /* the stream: a schema, one batch, then the end */
    struct ArrowArrayStream st;
    CHECK_OK(rf_result_arrow_stream(res2, 0, &st), "");
    struct ArrowSchema ss;
    struct ArrowArray b1, b2;
    CHECK(st.get_schema(&st, &ss) == 0 && ss.n_children == 7);
    CHECK(st.get_next(&st, &b1) == 0 && b1.release && b1.length == NT);
    CHECK(st.get_next(&st, &b2) == 0 && b2.release == NULL);
    CHECK(st.get_last_error(&st) == NULL);
    ss.release(&ss);
    b1.release(&b1);
    st.release(&st);
    CHECK(st.release == NULL);
    rf_result_free(res);
    rf_result_free(res2);
    rf_close(db2);
    rf_program_free(p);

    /* zero rows, a string column without buffers (empty arrays may omit them) */
    rf_program *ps = compile_ok("s(x) -> string(x).\nlang:input[`s] = \"s.csv\".\nout(x) <- s(x).\n"
                                "lang:output[`out] = \"out\".\n");
    static const void *nobufs[3] = {NULL, NULL, NULL};
    static const void *topnone[1] = {NULL};
    struct ArrowArray ek = {0, 0, 0, 3, 0, nobufs, NULL, NULL, release_kid, NULL}, *ekp[1] = {&ek};
    struct ArrowArray et = {0, 0, 0, 1, 1, topnone, ekp, NULL, release_kid, NULL};
    struct ArrowSchema esk = {"u", "x", NULL, 0, 0, NULL, NULL, schema_noop, NULL}, *eskp[1] = {&esk};
    struct ArrowSchema est = {"+s", "", NULL, 0, 1, eskp, NULL, schema_noop, NULL};
    rf_database *db3 = NULL;
    CHECK_OK(rf_open(NULL, &db3), rf_errmsg(db3));
    CHECK_OK(rf_database_put_arrow(db3, "s", &est, &et), rf_errmsg(db3));
    rf_result *res3 = NULL;
    CHECK_OK(rf_run(db3, ps, NULL, &res3), rf_errmsg(db3));
    CHECK(rf_result_rows(res3, 0) == 0 && rf_result_column_data(res3, 0, 0) == NULL);
    struct ArrowSchema os;
    struct ArrowArray oa;
    CHECK_OK(rf_result_arrow(res3, 0, &os, &oa), "");
    CHECK(oa.length == 0 && oa.n_children == 1 && !strcmp(os.children[0]->format, "u"));
    os.release(&os);
    oa.release(&oa);
    rf_result_free(res3);
    rf_close(db3);
    rf_program_free(ps);
}

/* Malformed struct arrays are refused with REDFOX_MISUSE naming the column,
** the array still the caller's: offsets and lengths whose sums overflow
** (they passed the length check, and the run read outside the buffers), a
** NULL children array of the schema or of the array (a crash); a string
** with a NUL byte with REDFOX_ERROR naming its column and row. */
static void test_arrow_bad(void)
{
    static const int64_t ints[4] = {1, 2, 3, 4};
    static const void *kb[2] = {NULL, ints}, *tb[1] = {NULL};
    for (int k = 0; k < 6; k++) {
        struct ArrowSchema kid = {"l", "x", NULL, 0, 0, NULL, NULL, schema_noop, NULL}, *kp = &kid;
        struct ArrowSchema top = {"+s", "", NULL, 0, 1, &kp, NULL, schema_noop, NULL};
        struct ArrowArray akid = {4, 0, 0, 2, 0, kb, NULL, NULL, release_kid, NULL}, *akp = &akid;
        struct ArrowArray atop = {4, 0, 0, 1, 1, tb, &akp, NULL, release_kid, NULL};
        const char *what = "";
        switch (k) {
        case 0: atop.offset = INT64_MAX, atop.length = 2, what = "out of range"; break; /* offset + length overflows */
        case 1: atop.offset = 3, atop.length = INT64_MAX - 1, what = "out of range"; break;
        case 2: akid.offset = INT64_MAX - 1, what = "column 1 (x): offset"; break; /* the child's: 4 rows on */
        case 3: akid.length = -1, what = "column 1 (x)"; break;
        case 4: top.children = NULL, what = "column 1: no child"; break;                  /* n_children 1 */
        default: atop.children = NULL, what = "column 1: no child"; break;
        }
        rf_database *db = NULL;
        CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
        int rc = rf_database_put_arrow(db, "t", &top, &atop);
        CHECK(rc == REDFOX_MISUSE && strstr(rf_errmsg(db), what) && atop.release != NULL);
        if (rc != REDFOX_MISUSE || !strstr(rf_errmsg(db), what)) fprintf(stderr, "arrow bad %d: %d %s\n", k, rc, rf_errmsg(db));
        rf_close(db);
    }
    /* a child's NULL buffers array, and a NULL buffer in it, said so (it said
    ** "2 buffers where the format 'l' has 2"); a NULL buffers array with a
    ** null count not 0 (-1: not known) too (its validity bitmap was looked
    ** for in it first: a crash) */
    for (int k = 0; k < 3; k++) {
        static const void *nullbuf[2] = {NULL, NULL};
        struct ArrowSchema kid = {"l", "x", NULL, 0, 0, NULL, NULL, schema_noop, NULL}, *kp = &kid;
        struct ArrowSchema top = {"+s", "", NULL, 0, 1, &kp, NULL, schema_noop, NULL};
        struct ArrowArray akid = {2, k == 2 ? -1 : 0, 0, 2, 0, k == 1 ? nullbuf : NULL, NULL, NULL, release_kid, NULL},
                          *akp = &akid;
        struct ArrowArray atop = {2, 0, 0, 1, 1, tb, &akp, NULL, release_kid, NULL};
        rf_database *db = NULL;
        CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
        CHECK(rf_database_put_arrow(db, "t", &top, &atop) == REDFOX_MISUSE);
        CHECK(strstr(rf_errmsg(db), k == 1 ? "column 1 (x): buffer 1 of the format 'l' is NULL"
                                           : "column 1 (x): no buffers (a NULL buffers array)"));
        rf_close(db);
    }
    /* a string with a NUL byte: refused as a file's is (it was taken, and
    ** read back cut at the NUL) */
    static const char bytes[] = "a" "b\0c" "d";
    static const int32_t offs[4] = {0, 1, 4, 5};
    static const void *sb[3] = {NULL, offs, bytes};
    struct ArrowSchema kid = {"u", "s", NULL, 0, 0, NULL, NULL, schema_noop, NULL}, *kp = &kid;
    struct ArrowSchema top = {"+s", "", NULL, 0, 1, &kp, NULL, schema_noop, NULL};
    struct ArrowArray akid = {3, 0, 0, 3, 0, sb, NULL, NULL, release_kid, NULL}, *akp = &akid;
    struct ArrowArray atop = {3, 0, 0, 1, 1, tb, &akp, NULL, release_kid, NULL};
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    CHECK(rf_database_put_arrow(db, "t", &top, &atop) == REDFOX_ERROR && atop.release != NULL);
    CHECK(strstr(rf_errmsg(db), "t: column 1 (s), row 2: a NUL byte in a string"));
    atop.offset = 2, atop.length = 1; /* the rows after it are fine */
    CHECK_OK(rf_database_put_arrow(db, "t", &top, &atop), rf_errmsg(db));
    rf_close(db);
    /* strings of 0 bytes in all with a NULL bytes buffer, as the C Data
    ** Interface allows a buffer of 0 bytes to be (they were refused: "buffer
    ** 2 of the format 'u' is NULL"); where they hold bytes it is refused */
    static const int32_t empties[4] = {0, 0, 0, 0}, two[4] = {0, 1, 1, 2};
    for (int k = 0; k < 2; k++) {
        static const void *eb[3];
        eb[0] = NULL, eb[1] = k ? two : empties, eb[2] = NULL;
        struct ArrowArray ekid = {3, 0, 0, 3, 0, eb, NULL, NULL, release_kid, NULL}, *ekp = &ekid;
        struct ArrowArray etop = {3, 0, 0, 1, 1, tb, &ekp, NULL, release_kid, NULL};
        CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
        int rc = rf_database_put_arrow(db, "t", &top, &etop);
        if (!k) {
            CHECK_OK(rc, rf_errmsg(db));
            rf_program *p = compile_ok("t(s) -> string(s).\nlang:input[`t] = \"t.csv\".\n"
                                       "n[] = c <- agg<<c = count()>> t(_).\nlang:output[`n] = \"n\".\n");
            rf_result *res = NULL;
            CHECK_OK(rf_run(db, p, NULL, &res), rf_errmsg(db));
            CHECK(rf_result_int(res, 0, 0, 0) == 1); /* "" three times: one row */
            rf_result_free(res);
            rf_program_free(p);
        } else {
            CHECK(rc == REDFOX_MISUSE && strstr(rf_errmsg(db), "column 1 (s): buffer 2 of the format 'u' is NULL"));
        }
        rf_close(db);
    }
}

/* A stream of several batches: the closures of two disjoint graphs, each
** exported from a result, streamed into one relation of both. */
typedef struct batches {
    struct ArrowSchema schema;
    struct ArrowArray arrays[2];
    int next, released;
} batches;

static int bs_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    batches *b = s->private_data;
    *out = b->schema; /* moved: the stream gives its schema once */
    b->schema.release = NULL;
    return 0;
}

static int bs_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    batches *b = s->private_data;
    if (b->next < 2) {
        *out = b->arrays[b->next];
        b->arrays[b->next++].release = NULL;
    } else {
        memset(out, 0, sizeof *out);
    }
    return 0;
}

static const char *bs_error(struct ArrowArrayStream *s)
{
    (void)s;
    return NULL;
}

static void bs_release(struct ArrowArrayStream *s)
{
    batches *b = s->private_data;
    if (b->schema.release) b->schema.release(&b->schema);
    for (int i = 0; i < 2; i++)
        if (b->arrays[i].release) b->arrays[i].release(&b->arrays[i]);
    b->released++;
    s->release = NULL;
}

static void test_stream(void)
{
    rf_program *p = compile_ok(tc_src);
    batches b;
    memset(&b, 0, sizeof b);
    int64_t rows = 0;
    for (int g = 0; g < 2; g++) {
        int64_t a[4] = {10 * g + 1, 10 * g + 2, 10 * g + 3, 10 * g + 4}, c[4] = {10 * g + 2, 10 * g + 3, 10 * g + 4, 10 * g + 1};
        int n = g ? 4 : 3; /* a chain, then a cycle */
        int ii[2] = {REDFOX_INT, REDFOX_INT};
        const void *cols[2] = {a, c};
        rf_database *db = NULL;
        rf_result *res = NULL;
        CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
        CHECK_OK(rf_database_put_rows(db, "edge.csv", 2, ii, n, cols), rf_errmsg(db));
        CHECK_OK(rf_run(db, p, NULL, &res), rf_errmsg(db));
        rows += rf_result_rows(res, 0);
        struct ArrowSchema sch;
        CHECK_OK(rf_result_arrow(res, 0, g ? &sch : &b.schema, &b.arrays[g]), "");
        if (g) sch.release(&sch);
        rf_result_free(res);
        rf_close(db);
    }
    CHECK(rows == 6 + 16);
    struct ArrowArrayStream st = {bs_schema, bs_next, bs_error, bs_release, &b};
    rf_database *db = NULL;
    rf_result *res = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    CHECK_OK(rf_database_put_arrow_stream(db, "edge", &st), rf_errmsg(db));
    CHECK(st.release == NULL && b.released == 1);
    CHECK_OK(rf_run(db, p, NULL, &res), rf_errmsg(db));
    CHECK(rf_result_rows(res, 0) == rows); /* closed already: the union of both closures */
    rf_result_free(res);
    /* a stream with no batch is refused, and released all the same */
    batches e;
    memset(&e, 0, sizeof e);
    e.next = 2;
    struct ArrowSchema es = {"+s", "", NULL, 0, 0, NULL, NULL, NULL, NULL};
    e.schema = es;
    struct ArrowArrayStream st2 = {bs_schema, bs_next, bs_error, bs_release, &e};
    CHECK(rf_database_put_arrow_stream(db, "edge", &st2) == REDFOX_MISUSE && e.released == 1);
    rf_close(db);
    rf_program_free(p);
}

/* The GPU (or its emulator, RF_GPU_EMULATE=1) reads relations given in
** memory as the CPU does: the same text for every output. 77 (skip)
** without a usable GPU. */
static int test_devices(void)
{
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    const void *cols[6] = {t_i, t_f, t_d, t_s, t_b, t_dt};
    CHECK_OK(rf_database_put_rows(db, "t.csv", 6, t_types, NT, cols), rf_errmsg(db));
    int64_t a[6] = {1, 2, 3, 4, 5, 9}, b[6] = {2, 3, 4, 2, 6, 9};
    int ii[2] = {REDFOX_INT, REDFOX_INT};
    const void *ec[2] = {a, b};
    CHECK_OK(rf_database_put_rows(db, "edge.csv", 2, ii, 6, ec), rf_errmsg(db));
    const char *srcs[2] = {tc_src, types_src};
    for (int k = 0; k < 2; k++) {
        rf_program *p = compile_ok(srcs[k]);
        rf_run_options o;
        rf_run_options_init(&o);
        o.device = REDFOX_DEVICE_GPU;
        rf_result *gpu = NULL, *cpu = NULL;
        int rc = rf_run(db, p, &o, &gpu);
        if (rc == REDFOX_ERROR && strstr(rf_errmsg(db), "no usable GPU")) {
            fprintf(stderr, "skipped: %s\n", rf_errmsg(db));
            rf_program_free(p);
            rf_close(db);
            return 77;
        }
        CHECK_OK(rc, rf_errmsg(db));
        o.device = REDFOX_DEVICE_CPU;
        CHECK_OK(rf_run(db, p, &o, &cpu), rf_errmsg(db));
        CHECK(gpu && cpu && !strcmp(rf_result_device(gpu), "gpu") && !strcmp(rf_result_device(cpu), "cpu"));
        for (int32_t i = 0; gpu && cpu && i < rf_result_count(cpu); i++) {
            char *tg = NULL, *tcpu = NULL;
            CHECK_OK(rf_result_text(gpu, i, REDFOX_FORMAT_CSV, &tg, NULL), "");
            CHECK_OK(rf_result_text(cpu, i, REDFOX_FORMAT_CSV, &tcpu, NULL), "");
            CHECK(tg && tcpu && !strcmp(tg, tcpu) && rf_result_rows(cpu, i) > 0);
            rf_free(tg);
            rf_free(tcpu);
        }
        if (k == 1 && gpu) check_typed_rows(gpu);
        rf_result_free(gpu);
        rf_result_free(cpu);
        rf_program_free(p);
    }
    rf_close(db);
    return 0;
}

/* The text of res's profile (rf_result_profile_write), owned. */
static char *profile_text(const rf_result *res)
{
    FILE *f = tmpfile();
    if (!f) return NULL;
    char *text = NULL;
    long n = rf_result_profile_write(res, f) == REDFOX_OK ? ftell(f) : -1;
    if (n >= 0 && (text = calloc(1, (size_t)n + 1)) != NULL) {
        rewind(f);
        if (fread(text, 1, (size_t)n, f) != (size_t)n) text[0] = 0;
    }
    fclose(f);
    return text;
}

static const char *short_src =
    "t(i, f, d, s, b, dt) -> int(i), float(f), decimal(d), string(s), boolean(b), date(dt).\n"
    "lang:input[`t] = \"t.csv\".\n"
    "lang:input:delimiter[`t] = \",\".\n"
    "short(i, s) <- t(i, _, _, s, _, _), string:length[s] < 3.\n"
    "lang:output[`short] = \"short\".\n";

/* rf_database_keep_inputs on the GPU (or the emulator): the device keeps
** the columns it copied between runs (runtime/gpu/rt_gpu_cache.c). Three
** programs over two relations given in memory, then the first again: each
** gives the CPU's text, and the last copies nothing to the device (its
** profile: every column found there, none copied, no dictionary bytes).
** 77 (skip) without a usable GPU. */
static int test_keep_gpu(void)
{
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    const void *cols[6] = {t_i, t_f, t_d, t_s, t_b, t_dt};
    CHECK_OK(rf_database_put_rows(db, "t.csv", 6, t_types, NT, cols), rf_errmsg(db));
    int64_t a[6] = {1, 2, 3, 4, 5, 9}, b[6] = {2, 3, 4, 2, 6, 9};
    int ii[2] = {REDFOX_INT, REDFOX_INT};
    const void *ec[2] = {a, b};
    CHECK_OK(rf_database_put_rows(db, "edge.csv", 2, ii, 6, ec), rf_errmsg(db));
    CHECK_OK(rf_database_keep_inputs(db, 1), rf_errmsg(db));
    const char *srcs[4] = {short_src, types_src, tc_src, short_src};
    for (int k = 0; k < 4; k++) {
        rf_program *p = compile_ok(srcs[k]);
        rf_run_options o;
        rf_run_options_init(&o);
        o.device = REDFOX_DEVICE_GPU;
        o.profile = 1;
        rf_result *gpu = NULL, *cpu = NULL;
        int rc = rf_run(db, p, &o, &gpu);
        if (rc == REDFOX_ERROR && strstr(rf_errmsg(db), "no usable GPU")) {
            fprintf(stderr, "skipped: %s\n", rf_errmsg(db));
            rf_program_free(p);
            rf_close(db);
            return 77;
        }
        CHECK_OK(rc, rf_errmsg(db));
        o.device = REDFOX_DEVICE_CPU;
        CHECK_OK(rf_run(db, p, &o, &cpu), rf_errmsg(db));
        CHECK(gpu && cpu && !strcmp(rf_result_device(gpu), "gpu"));
        for (int32_t i = 0; gpu && cpu && i < rf_result_count(cpu); i++) {
            char *tg = NULL, *tcpu = NULL;
            CHECK_OK(rf_result_text(gpu, i, REDFOX_FORMAT_CSV, &tg, NULL), "");
            CHECK_OK(rf_result_text(cpu, i, REDFOX_FORMAT_CSV, &tcpu, NULL), "");
            CHECK(tg && tcpu && !strcmp(tg, tcpu) && rf_result_rows(cpu, i) > 0);
            rf_free(tg);
            rf_free(tcpu);
        }
        char *prof = gpu ? profile_text(gpu) : NULL;
        CHECK(prof && strstr(prof, "gpu input cache: "));
        if (k == 3 && prof) { /* short_src again: t's two columns and the strings are on the device */
            int kept = strstr(prof, "gpu input cache: 2 columns found on the device") &&
                       strstr(prof, " 0 copied (0 bytes)") && strstr(prof, "gpu dictionary: 0 bytes copied");
            CHECK(kept);
            if (!kept) fprintf(stderr, "%s", prof);
        }
        free(prof);
        rf_result_free(gpu);
        rf_result_free(cpu);
        rf_program_free(p);
    }
    rf_close(db);
    return 0;
}

/* A compiled program (.rfx of api/tests/tc.logic, which is tc_src) on the
** GPU (or the emulator): the library follows the file's GPU plans (GPLN)
** and PTX as `redfox run` does, with the same answers as tc_src compiled
** from text and run on the CPU. 77 (skip) without a usable GPU. */
static int test_rfx(const char *path)
{
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    int64_t a[6] = {1, 2, 3, 4, 5, 9}, b[6] = {2, 3, 4, 2, 6, 9};
    int ii[2] = {REDFOX_INT, REDFOX_INT};
    const void *ec[2] = {a, b};
    CHECK_OK(rf_database_put_rows(db, "edge.csv", 2, ii, 6, ec), rf_errmsg(db));
    rf_program *rfx = NULL, *text = compile_ok(tc_src);
    CHECK_OK(rf_compile_files(&path, 1, &rfx), rf_program_errmsg(rfx));
    rf_run_options o;
    rf_run_options_init(&o);
    o.device = REDFOX_DEVICE_GPU;
    rf_result *gpu = NULL, *cpu = NULL;
    int rc = rf_run(db, rfx, &o, &gpu);
    if (rc == REDFOX_ERROR && strstr(rf_errmsg(db), "no usable GPU")) {
        fprintf(stderr, "skipped: %s\n", rf_errmsg(db));
        rf_program_free(rfx);
        rf_program_free(text);
        rf_close(db);
        return 77;
    }
    CHECK_OK(rc, rf_errmsg(db));
    o.device = REDFOX_DEVICE_CPU;
    CHECK_OK(rf_run(db, text, &o, &cpu), rf_errmsg(db));
    char *tg = NULL, *tcpu = NULL;
    if (gpu && cpu) {
        CHECK(!strcmp(rf_result_device(gpu), "gpu"));
        CHECK_OK(rf_result_text(gpu, 0, REDFOX_FORMAT_CSV, &tg, NULL), "");
        CHECK_OK(rf_result_text(cpu, 0, REDFOX_FORMAT_CSV, &tcpu, NULL), "");
        CHECK(tg && tcpu && !strcmp(tg, tcpu) && rf_result_rows(cpu, 0) == 14);
    }
    rf_free(tg);
    rf_free(tcpu);
    rf_result_free(gpu);
    rf_result_free(cpu);
    rf_program_free(rfx);
    rf_program_free(text);
    rf_close(db);
    return 0;
}

/* rf_run_options.trace_file: the run's timeline as Chrome trace-event JSON,
** with its loads and kernels; a file that cannot be written is an error
** naming it, and no partial file is left. */
static void test_trace(void)
{
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    int64_t a[3] = {1, 2, 3}, b[3] = {2, 3, 4};
    int ii[2] = {REDFOX_INT, REDFOX_INT};
    const void *ec[2] = {a, b};
    CHECK_OK(rf_database_put_rows(db, "edge.csv", 2, ii, 3, ec), rf_errmsg(db));
    rf_program *p = compile_ok(tc_src);
    char path[256], bad[300];
    snprintf(path, sizeof path, "%s/rf_api_trace_%d.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    snprintf(bad, sizeof bad, "%s.missing/trace.json", path);
    rf_run_options o;
    rf_run_options_init(&o);
    o.device = REDFOX_DEVICE_CPU;
    o.trace_file = path;
    rf_result *res = NULL;
    CHECK_OK(rf_run(db, p, &o, &res), rf_errmsg(db));
    CHECK(res && rf_result_rows(res, 0) == 6);
    rf_result_free(res);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char buf[65536];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f) fclose(f);
    CHECK(strstr(buf, "\"traceEvents\"") && strstr(buf, "\"cat\":\"kernel\"") && strstr(buf, "\"name\":\"run\"") &&
          strstr(buf, "redfox library") && buf[n - 2] == '}');
    remove(path);
    o.trace_file = bad;
    res = NULL;
    int rc = rf_run(db, p, &o, &res);
    if (!strstr(rf_errmsg(db), bad)) fprintf(stderr, "the trace error: %s\n", rf_errmsg(db));
    CHECK(rc == REDFOX_IO && res == NULL && strstr(rf_errmsg(db), bad));
    rf_program_free(p);
    rf_close(db);
}

static const char *stc_src =
    "edge(a, b) -> string(a), string(b).\n"
    "lang:input[`edge] = \"edge.csv\".\n"
    "lang:input:delimiter[`edge] = \",\".\n"
    "reach(a, b) <- edge(a, b).\n"
    "reach(a, c) <- reach(a, b), edge(b, c).\n"
    "lang:output[`reach] = \"reach\".\n";

/* rf_result_write gives what rf_result_text gives, byte for byte. */
static void check_write_matches_text(const rf_result *res, int format)
{
    char *text = NULL;
    int64_t len = 0;
    CHECK_OK(rf_result_text(res, 0, format, &text, &len), "rf_result_text");
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f || !text) {
        rf_free(text);
        return;
    }
    CHECK(rf_result_write(res, 0, format, f) == REDFOX_OK);
    char buf[4096];
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    CHECK((int64_t)n == len && !memcmp(buf, text, n));
    CHECK(rf_result_write(res, 0, 99, f) == REDFOX_MISUSE && rf_result_write(res, 5, format, f) == REDFOX_NOTFOUND &&
          rf_result_write(res, 0, format, NULL) == REDFOX_MISUSE);
    fclose(f);
    rf_free(text);
}

/* rf_database_keep_inputs: a second run reads nothing from the files (they
** are gone by then); its result outlives the database; off forgets them;
** giving or dropping a relation forgets them too. */
static void test_keep(void)
{
    char dir[256], file[300];
    snprintf(dir, sizeof dir, "%s/rf_api_keep_%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    snprintf(file, sizeof file, "%s/edge.csv", dir);
    CHECK(mkdir(dir, 0777) == 0);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("x,y\ny,z\nz,w\n", f);
    fclose(f);
    rf_program *p = compile_ok(stc_src);
    rf_database *db = NULL;
    CHECK_OK(rf_open(dir, &db), rf_errmsg(db));
    CHECK(rf_database_keep_inputs(NULL, 1) == REDFOX_MISUSE);
    CHECK_OK(rf_database_keep_inputs(db, 1), rf_errmsg(db));
    rf_run_options o;
    rf_run_options_init(&o);
    o.device = REDFOX_DEVICE_CPU;
    rf_result *first = NULL, *second = NULL, *res = NULL;
    CHECK_OK(rf_run(db, p, &o, &first), rf_errmsg(db));
    CHECK(first && rf_result_rows(first, 0) == 6);
    CHECK(remove(file) == 0);
    CHECK_OK(rf_run(db, p, &o, &second), rf_errmsg(db)); /* the file is gone: read from what was kept */
    CHECK(second && rf_result_rows(second, 0) == 6);
    check_write_matches_text(second, REDFOX_FORMAT_CSV);
    check_write_matches_text(second, REDFOX_FORMAT_TABLE);
    check_write_matches_text(second, REDFOX_FORMAT_TBL);
    /* off: forgotten, so the missing file is an error again */
    CHECK_OK(rf_database_keep_inputs(db, 0), rf_errmsg(db));
    CHECK(rf_run(db, p, &o, &res) != REDFOX_OK && res == NULL && strstr(rf_errmsg(db), "edge.csv"));
    /* relations given in memory are kept too, and a put forgets what was kept */
    CHECK_OK(rf_database_keep_inputs(db, 1), rf_errmsg(db));
    const char *a[2] = {"p", "q"}, *b[2] = {"q", "r"};
    int ss[2] = {REDFOX_STRING, REDFOX_STRING};
    const void *cols[2] = {a, b};
    CHECK_OK(rf_database_put_rows(db, "edge.csv", 2, ss, 2, cols), rf_errmsg(db));
    for (int round = 0; round < 2; round++) {
        res = NULL;
        CHECK_OK(rf_run(db, p, &o, &res), rf_errmsg(db));
        CHECK(res && rf_result_rows(res, 0) == 3);
        rf_result_free(res);
    }
    CHECK_OK(rf_database_drop(db, "edge.csv"), rf_errmsg(db));
    res = NULL;
    CHECK(rf_run(db, p, &o, &res) != REDFOX_OK && res == NULL);
    rf_close(db);
    rf_program_free(p);
    /* the kept runs' results own their strings */
    int64_t len = 0;
    CHECK(first && second && rf_result_rows(second, 0) == 6);
    for (int64_t r = 0; second && r < rf_result_rows(second, 0); r++) {
        const char *x = rf_result_string(second, 0, 0, r, &len), *y = rf_result_string(first, 0, 0, r, NULL);
        CHECK(x && y && len == 1 && !strcmp(x, y) && strchr("xyz", x[0]));
    }
    rf_result_free(first);
    rf_result_free(second);
    rmdir(dir);
}

/* rf_run_options.settings "cache_dir=DIR" is honoured for the whole run:
** the placement model a run on --device auto records lands in DIR. (The
** path once pointed into a copy of the setting freed before the run: the
** setting after it took the freed bytes, and the model went elsewhere.) */
static void test_settings(void)
{
    char dir[256], cache[300], model[340];
    snprintf(dir, sizeof dir, "%s/rf_api_settings_%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(model, sizeof model, "%s/place/model.txt", cache);
    CHECK(mkdir(dir, 0777) == 0);
    char settings[400];
    snprintf(settings, sizeof settings, "cache_dir=%s,gpu_trace=off,hugepages=on", cache);
    rf_program *p = compile_ok(tc_src);
    rf_database *db = NULL;
    CHECK_OK(rf_open(dir, &db), rf_errmsg(db));
    int64_t a[2] = {1, 2}, b[2] = {2, 3};
    int ii[2] = {REDFOX_INT, REDFOX_INT};
    const void *cols[2] = {a, b};
    CHECK_OK(rf_database_put_rows(db, "edge", 2, ii, 2, cols), rf_errmsg(db));
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = REDFOX_DEVICE_AUTO;
    o.settings = settings;
    rf_result *res = NULL;
    CHECK_OK(rf_run(db, p, &o, &res), rf_errmsg(db));
    CHECK(res && rf_result_rows(res, 0) == 3);
    rf_result_free(res);
    struct stat sb;
    CHECK(stat(model, &sb) == 0);
    /* threads beyond the tools' 1024: REDFOX_MISUSE naming them (100000 was
    ** REDFOX_NOMEM, "out of memory"); <= 0 is one per core */
    o.settings = NULL;
    o.device = REDFOX_DEVICE_CPU;
    o.threads = 100000;
    res = NULL;
    CHECK(rf_run(db, p, &o, &res) == REDFOX_MISUSE && !res && strstr(rf_errmsg(db), "threads 100000: at most 1024"));
    o.threads = -5;
    CHECK_OK(rf_run(db, p, &o, &res), rf_errmsg(db));
    CHECK(res && rf_result_rows(res, 0) == 3);
    rf_result_free(res);
    rf_close(db);
    rf_program_free(p);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The one output of res as CSV text (free it). */
static char *csv_of(const rf_result *res, int32_t i)
{
    char *text = NULL;
    CHECK_OK(rf_result_text(res, i, REDFOX_FORMAT_CSV, &text, NULL), "rf_result_text");
    return text;
}

/* Compiles src, runs it over db on the CPU and returns output name's CSV text (free it). */
static char *run_csv(rf_database *db, const char *src, const char *name)
{
    rf_program *p = compile_ok(src);
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = REDFOX_DEVICE_CPU;
    rf_result *res = NULL;
    CHECK_OK(rf_run(db, p, &o, &res), rf_errmsg(db));
    int32_t i = res ? rf_result_find(res, name) : -1;
    CHECK(i >= 0);
    char *text = i >= 0 ? csv_of(res, i) : NULL;
    rf_result_free(res);
    rf_program_free(p);
    return text;
}

/* Whether the last call on db left a warning holding what. */
static int has_warning(const rf_database *db, const char *what)
{
    for (int64_t i = 0; i < rf_database_diag_count(db); i++) {
        const rf_diagnostic *g = rf_database_diag(db, i);
        if (g->severity == REDFOX_SEV_WARNING && strstr(g->message, what)) return 1;
    }
    return 0;
}

/* Rows given under a predicate's name stand for that predicate only: an
** input of another predicate on the same file reads the file, in the same
** program and (with keep_inputs) in a later one, whichever runs first; rows
** given under the file's name stand for every reader of the file. (The
** rows given for one predicate were read by every reader of its file.) */
static void test_readers(void)
{
    char dir[256], file[300];
    snprintf(dir, sizeof dir, "%s/rf_api_readers_%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    snprintf(file, sizeof file, "%s/e.csv", dir);
    CHECK(mkdir(dir, 0777) == 0);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("1,2\n3,4\n", f);
    fclose(f);
    const char *file_rows = "a,b\n1,2\n3,4\n", *given_rows = "a,b\n100,200\n";
    const char *both = "edge(a, b) -> int(a), int(b).\nlang:input[`edge] = \"e.csv\".\n"
                       "lang:input:delimiter[`edge] = \",\".\n"
                       "other(a, b) -> int(a), int(b).\nlang:input[`other] = \"e.csv\".\n"
                       "lang:input:delimiter[`other] = \",\".\n"
                       "oe(a, b) <- edge(a, b).\nlang:output[`oe] = \"oe\".\n"
                       "oo(a, b) <- other(a, b).\nlang:output[`oo] = \"oo\".\n";
    const char *only_edge = "edge(a, b) -> int(a), int(b).\nlang:input[`edge] = \"e.csv\".\n"
                            "lang:input:delimiter[`edge] = \",\".\n"
                            "oe(a, b) <- edge(a, b).\nlang:output[`oe] = \"oe\".\n";
    const char *only_other = "other(a, b) -> int(a), int(b).\nlang:input[`other] = \"e.csv\".\n"
                             "lang:input:delimiter[`other] = \",\".\n"
                             "oo(a, b) <- other(a, b).\nlang:output[`oo] = \"oo\".\n";
    int64_t a[1] = {100}, b[1] = {200};
    int ii[2] = {REDFOX_INT, REDFOX_INT};
    const void *cols[2] = {a, b};
    for (int keep = 0; keep < 2; keep++) {
        rf_database *db = NULL;
        CHECK_OK(rf_open(dir, &db), rf_errmsg(db));
        CHECK_OK(rf_database_keep_inputs(db, keep), rf_errmsg(db));
        CHECK_OK(rf_database_put_rows(db, "edge", 2, ii, 1, cols), rf_errmsg(db));
        /* one program, two readers of e.csv */
        char *oe = run_csv(db, both, "oe"), *oo = run_csv(db, both, "oo");
        CHECK(oe && !strcmp(oe, given_rows));
        CHECK(oo && !strcmp(oo, file_rows));
        rf_free(oe);
        rf_free(oo);
        /* one program each, both orders */
        for (int order = 0; order < 2; order++) {
            CHECK_OK(rf_database_put_rows(db, "edge", 2, ii, 1, cols), rf_errmsg(db)); /* forgets what was kept */
            for (int k = 0; k < 2; k++) {
                int edge_now = (k == 0) == (order == 0);
                char *t = edge_now ? run_csv(db, only_edge, "oe") : run_csv(db, only_other, "oo");
                CHECK(t && !strcmp(t, edge_now ? given_rows : file_rows));
                if (t && strcmp(t, edge_now ? given_rows : file_rows))
                    fprintf(stderr, "keep %d order %d: %s got\n%s", keep, order, edge_now ? "edge" : "other", t);
                rf_free(t);
            }
        }
        /* under the file's name: every reader */
        CHECK_OK(rf_database_drop(db, "edge"), rf_errmsg(db));
        CHECK_OK(rf_database_put_rows(db, "e.csv", 2, ii, 1, cols), rf_errmsg(db));
        oe = run_csv(db, both, "oe");
        oo = run_csv(db, both, "oo");
        CHECK(oe && !strcmp(oe, given_rows) && oo && !strcmp(oo, given_rows));
        rf_free(oe);
        rf_free(oo);
        /* under both names: edge reads its own rows, other the file's (the
        ** file's rows were read by edge too, its own left unread) */
        int64_t a2[1] = {7}, b2[1] = {8};
        const void *cols2[2] = {a2, b2};
        CHECK_OK(rf_database_put_rows(db, "edge", 2, ii, 1, cols2), rf_errmsg(db));
        for (int twice = 0; twice < 2; twice++) { /* the second from what keep_inputs kept */
            oe = run_csv(db, both, "oe");
            oo = run_csv(db, both, "oo");
            CHECK(oe && !strcmp(oe, "a,b\n7,8\n") && oo && !strcmp(oo, given_rows));
            if (oe && oo && (strcmp(oe, "a,b\n7,8\n") || strcmp(oo, given_rows)))
                fprintf(stderr, "keep %d, both names: oe\n%soo\n%s", keep, oe, oo);
            rf_free(oe);
            rf_free(oo);
        }
        rf_close(db);
    }
    /* rows given under a name no input reads (a typo) are said to be unread,
    ** as a warning of the run (they were left unread without a word, the
    ** file read instead); so are the file's, where its one reader read its own */
    rf_database *db = NULL;
    CHECK_OK(rf_open(dir, &db), rf_errmsg(db));
    CHECK_OK(rf_database_put_rows(db, "edges", 2, ii, 1, cols), rf_errmsg(db));
    char *t = run_csv(db, only_edge, "oe");
    CHECK(t && !strcmp(t, file_rows));
    rf_free(t);
    CHECK(has_warning(db, "the relation given as 'edges' was not read: the program has no input of that file"));
    CHECK_OK(rf_database_drop(db, "edges"), rf_errmsg(db));
    CHECK_OK(rf_database_put_rows(db, "edge", 2, ii, 1, cols), rf_errmsg(db));
    CHECK_OK(rf_database_put_rows(db, "e.csv", 2, ii, 1, cols), rf_errmsg(db));
    t = run_csv(db, only_edge, "oe");
    CHECK(t && !strcmp(t, given_rows));
    rf_free(t);
    CHECK(has_warning(db, "the relation given as 'e.csv' was not read: each input of that file read the rows given"));
    CHECK(!has_warning(db, "'edge' was not read"));
    t = run_csv(db, both, "oo"); /* both read: no warning */
    rf_free(t);
    CHECK(!has_warning(db, "was not read"));
    rf_close(db);
    remove(file);
    rmdir(dir);
}

/* rf_compile_buffers: a .rfx file's bytes in memory under a name that does
** not say so (as from standard input) run as the LogiQL it was compiled
** from; two LogiQL texts compile as one program; an error names its text;
** a .rfx with another text is refused. */
static void test_buffers(const char *rfx_path)
{
    FILE *f = fopen(rfx_path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    static char bytes[1 << 20];
    int64_t n = (int64_t)fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    CHECK(n > 0 && n < (int64_t)sizeof bytes);
    rf_database *db = NULL;
    CHECK_OK(rf_open(NULL, &db), rf_errmsg(db));
    int64_t a[4] = {1, 2, 3, 7}, b[4] = {2, 3, 1, 8};
    int ii[2] = {REDFOX_INT, REDFOX_INT};
    const void *ec[2] = {a, b};
    CHECK_OK(rf_database_put_rows(db, "edge.csv", 2, ii, 4, ec), rf_errmsg(db));
    const char *names[2] = {"<stdin>", "rules.logic"};
    const char *texts[2] = {bytes, NULL};
    rf_program *rfx = NULL, *two = NULL, *bad = NULL, *mixed = NULL;
    CHECK_OK(rf_compile_buffers(names, texts, &n, 1, &rfx), rf_program_errmsg(rfx));
    /* the same program as two texts: declarations, then rules (NUL-terminated) */
    const char *split = strstr(tc_src, "reach(a, b) <-");
    char decls[512];
    snprintf(decls, sizeof decls, "%.*s", (int)(split - tc_src), tc_src);
    const char *ltexts[2] = {decls, split};
    const char *lnames[2] = {"decls.logic", "rules.logic"};
    CHECK_OK(rf_compile_buffers(lnames, ltexts, NULL, 2, &two), rf_program_errmsg(two));
    rf_run_options o;
    rf_run_options_init(&o);
    o.device = REDFOX_DEVICE_CPU;
    rf_result *r1 = NULL, *r2 = NULL;
    CHECK_OK(rf_run(db, rfx, &o, &r1), rf_errmsg(db));
    CHECK_OK(rf_run(db, two, &o, &r2), rf_errmsg(db));
    char *t1 = NULL, *t2 = NULL;
    if (r1 && r2) {
        CHECK_OK(rf_result_text(r1, 0, REDFOX_FORMAT_CSV, &t1, NULL), "");
        CHECK_OK(rf_result_text(r2, 0, REDFOX_FORMAT_CSV, &t2, NULL), "");
        CHECK(t1 && t2 && !strcmp(t1, t2) && rf_result_rows(r1, 0) == 10); /* a 3-cycle: 9, and 7 -> 8 */
    }
    /* an error in the second text names it, line 2 */
    const char *btexts[2] = {decls, "reach(a, b) <- edge(a, b).\nreach(a, c) <- nowhere(a, c).\n"};
    CHECK(rf_compile_buffers(lnames, btexts, NULL, 2, &bad) == REDFOX_ERROR);
    const rf_diagnostic *g = rf_program_diag(bad, 0);
    CHECK(g && !strcmp(g->file, "rules.logic") && g->line == 2);
    /* a .rfx with another text */
    texts[1] = decls;
    CHECK(rf_compile_buffers(names, texts, NULL, 2, &mixed) == REDFOX_MISUSE &&
          strstr(rf_program_errmsg(mixed), "cannot be combined"));
    rf_program_free(mixed);
    mixed = NULL;
    CHECK(rf_compile_buffers(names, NULL, NULL, 1, &mixed) == REDFOX_MISUSE &&
          strstr(rf_program_errmsg(mixed), "texts is NULL"));
    /* names NULL, as lens NULL: each "<string>" (it was refused: "no programs") */
    rf_program *unnamed = NULL;
    CHECK(rf_compile_buffers(NULL, btexts, NULL, 2, &unnamed) == REDFOX_ERROR); /* (nowhere is undefined) */
    CHECK(rf_program_diag_count(unnamed) >= 1 && !strcmp(rf_program_diag(unnamed, 0)->file, "<string>"));
    rf_program_free(unnamed);
    rf_free(t1);
    rf_free(t2);
    rf_result_free(r1);
    rf_result_free(r2);
    rf_program_free(rfx);
    rf_program_free(two);
    rf_program_free(bad);
    rf_program_free(mixed);
    rf_close(db);
}

/* Distinct objects on distinct threads at once: each thread compiles, opens,
** gives its own graph (a chain of 10 + t nodes) and checks its closure; one
** program shared by all threads besides (read-only). On the CPU, and on the
** GPU (threadsgpu: the emulator, or the device), where the threads' kernels
** share one compiled object and one context. */
typedef struct thread_job {
    const rf_program *shared;
    int t, bad, device, nogpu;
} thread_job;

static void *thread_main(void *arg)
{
    thread_job *j = arg;
    int n = 10 + j->t;
    int64_t a[32], b[32];
    for (int i = 0; i < n - 1; i++) a[i] = i, b[i] = i + 1;
    int ii[2] = {REDFOX_INT, REDFOX_INT};
    const void *cols[2] = {a, b};
    for (int round = 0; round < 3; round++) {
        rf_program *own = NULL;
        rf_database *db = NULL;
        rf_result *res = NULL;
        rf_run_options o;
        rf_run_options_init(&o);
        o.device = j->device;
        o.threads = 2;
        const rf_program *p = round == 1 ? j->shared : NULL;
        if (!p && rf_compile(tc_src, -1, NULL, &own) == REDFOX_OK) p = own;
        int rc = !p || rf_open(NULL, &db) || rf_database_put_rows(db, "edge.csv", 2, ii, n - 1, cols);
        if (!rc) rc = rf_run(db, p, &o, &res);
        if (rc && db && strstr(rf_errmsg(db), "no usable GPU")) j->nogpu = 1;
        else if (rc || rf_result_rows(res, 0) != (int64_t)n * (n - 1) / 2) j->bad++;
        rf_result_free(res);
        rf_close(db);
        rf_program_free(own);
    }
    return NULL;
}

/* 77 where the GPU was asked for and there is none */
static int test_threads(int device)
{
    enum { T = 4 };
    pthread_t th[T];
    thread_job jobs[T];
    rf_program *shared = compile_ok(tc_src);
    int nogpu = 0;
    for (int t = 0; t < T; t++) {
        jobs[t] = (thread_job){shared, t, 0, device, 0};
        CHECK(pthread_create(&th[t], NULL, thread_main, &jobs[t]) == 0);
    }
    for (int t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        CHECK(jobs[t].bad == 0);
        nogpu |= jobs[t].nogpu;
    }
    rf_program_free(shared);
    return nogpu ? 77 : 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    int all = !strcmp(what, "all");
    if (all || !strcmp(what, "basic")) test_basic();
    if (all || !strcmp(what, "types")) test_types();
    if (all || !strcmp(what, "floats")) test_float_specials();
    if (all || !strcmp(what, "floats")) test_float_zero();
    if (all || !strcmp(what, "errors")) test_errors();
    if (all || !strcmp(what, "arrow")) test_arrow();
    if (all || !strcmp(what, "arrowbad")) test_arrow_bad();
    if (all || !strcmp(what, "threads")) test_threads(REDFOX_DEVICE_CPU);
    if (!strcmp(what, "threadsgpu") && test_threads(REDFOX_DEVICE_GPU) == 77 && !failures) return 77;
    if (all || !strcmp(what, "stream")) test_stream();
    if (all || !strcmp(what, "trace")) test_trace();
    if (all || !strcmp(what, "keep")) test_keep();
    if (all || !strcmp(what, "settings")) test_settings();
    if (all || !strcmp(what, "readers")) test_readers();
    if (!strcmp(what, "devices") && test_devices() == 77 && !failures) return 77;
    if (!strcmp(what, "keepgpu") && test_keep_gpu() == 77 && !failures) return 77;
    if (!strcmp(what, "buffers") && argc > 2) test_buffers(argv[2]);
    if (!strcmp(what, "rfx") && argc > 2 && test_rfx(argv[2]) == 77 && !failures) return 77;
    if (failures) fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
