/*
** runtime/io/test_load.c: tests of the text loader (rf_rt_load_text).
**   test_load                 unit tests on small files in a fresh temp dir
**   test_load --tpch FILE     loads TPC-H lineitem.tbl (SF 0.01): 60175 rows;
**                             exits 77 (skipped) when FILE is absent
**   test_load --bench FILE [THREADS [REPEATS]]
**                             times loading a lineitem.tbl (not a test)
*/
#include "rf_load.h"
#include "rf_sys.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures, checks;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

static char tmpdir[512];
static char *made[256];
static int nmade;

/* Writes a file in the temp dir; returns its path (owned by the test). */
static const char *write_file(const char *name, const char *text, int64_t len)
{
    char *path = rf_sprintf("%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (len > 0 && fwrite(text, 1, (size_t)len, f) != (size_t)len) || fclose(f)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    if (nmade < (int)RF_ARRAY_LEN(made)) made[nmade++] = path;
    return path;
}
#define WRITE(name, lit) write_file(name, lit, (int64_t)sizeof(lit) - 1)

static rf_status load(const char *path, const rf_type *types, int32_t ncols, char delim, int header,
                      int threads, rf_rt_texttable *t, rf_diags *d)
{
    rf_rt_load_opts o = {.delimiter = delim, .header = header, .threads = threads};
    rf_diags_init(d);
    return rf_rt_load_text(path, types, ncols, &o, t, d);
}

/* Is diagnostic i at line:col with a message containing 'text'? Prints it if not. */
static int diag_is(const rf_diags *d, int64_t i, int line, int col, const char *text)
{
    if (i >= d->count) {
        fprintf(stderr, "  no diagnostic %lld (have %lld)\n", (long long)i, (long long)d->count);
        return 0;
    }
    const rf_diag *g = &d->items[i];
    int ok = g->sev == RF_SEV_ERROR && g->loc.line == line && g->loc.col == col && strstr(g->msg, text);
    if (!ok)
        fprintf(stderr, "  got %d:%d: %s\n  want %d:%d: ...%s...\n", (int)g->loc.line, (int)g->loc.col,
                g->msg, line, col, text);
    return ok;
}

static const char *str_at(const rf_rt_textcol *c, int64_t r, int64_t *len)
{
    *len = c->str_off[r + 1] - c->str_off[r];
    return c->str_bytes + c->str_off[r];
}

static int str_is(const rf_rt_textcol *c, int64_t r, const char *want)
{
    int64_t n;
    const char *s = str_at(c, r, &n);
    return n == (int64_t)strlen(want) && memcmp(s, want, (size_t)n) == 0;
}

static int64_t I64(const rf_rt_texttable *t, int k, int64_t r) { return ((int64_t *)t->cols[k].data)[r]; }
static double F64(const rf_rt_texttable *t, int k, int64_t r) { return ((double *)t->cols[k].data)[r]; }
static int32_t D32(const rf_rt_texttable *t, int k, int64_t r) { return ((int32_t *)t->cols[k].data)[r]; }
static uint8_t B8(const rf_rt_texttable *t, int k, int64_t r) { return ((uint8_t *)t->cols[k].data)[r]; }

static int32_t date_of(const char *s)
{
    int32_t v = 0;
    if (rf_val_parse_date(s, (int64_t)strlen(s), &v, NULL) != RF_OK) abort();
    return v;
}

static int tables_equal(const rf_rt_texttable *a, const rf_rt_texttable *b)
{
    if (a->nrows != b->nrows || a->ncols != b->ncols) return 0;
    for (int32_t k = 0; k < a->ncols; k++) {
        const rf_rt_textcol *x = &a->cols[k], *y = &b->cols[k];
        if (x->type != y->type) return 0;
        if (x->type == RF_TYPE_STRING) {
            if (memcmp(x->str_off, y->str_off, (size_t)(a->nrows + 1) * sizeof(int64_t))) return 0;
            if (memcmp(x->str_bytes, y->str_bytes, (size_t)x->str_off[a->nrows] + 1)) return 0;
        } else if (a->nrows &&
                   memcmp(x->data, y->data, (size_t)a->nrows * (size_t)rf_val_type_size(x->type))) {
            return 0;
        }
    }
    return 1;
}

static const rf_type ALL6[] = {RF_TYPE_INT,    RF_TYPE_DECIMAL, RF_TYPE_FLOAT,
                               RF_TYPE_STRING, RF_TYPE_BOOL,    RF_TYPE_DATE};

static void check_all6(const char *path, int header, int threads)
{
    rf_rt_texttable t;
    rf_diags d;
    CHECK(load(path, ALL6, 6, '|', header, threads, &t, &d) == RF_OK);
    CHECK(d.count == 0);
    CHECK(t.nrows == 3 && t.ncols == 6);
    if (t.nrows == 3) {
        CHECK(I64(&t, 0, 0) == 1 && I64(&t, 0, 1) == -7 && I64(&t, 0, 2) == 9223372036854775807LL);
        CHECK(I64(&t, 1, 0) == 2500000 && I64(&t, 1, 1) == -500000 && I64(&t, 1, 2) == 1);
        CHECK(F64(&t, 2, 0) == 1.5 && F64(&t, 2, 1) == -2000.0 && F64(&t, 2, 2) == 0.1);
        CHECK(str_is(&t.cols[3], 0, "abc") && str_is(&t.cols[3], 1, "h\xc3\xa9llo") &&
              str_is(&t.cols[3], 2, ""));
        CHECK(B8(&t, 4, 0) == 1 && B8(&t, 4, 1) == 0 && B8(&t, 4, 2) == 1);
        CHECK(D32(&t, 5, 0) == date_of("1995-03-15") && D32(&t, 5, 1) == date_of("2000-02-29") &&
              D32(&t, 5, 2) == date_of("1970-01-01"));
        CHECK(t.cols[3].data == NULL && t.cols[0].str_off == NULL);
        CHECK(t.cols[3].str_bytes[t.cols[3].str_off[3]] == 0);
    }
    rf_rt_texttable_free(&t);
    rf_diags_free(&d);
}

static void test_types_and_line_ends(void)
{
    /* dbgen style: trailing delimiter */
    const char *p = WRITE("all6.tbl", "1|2.50|1.5|abc|true|1995-03-15|\n"
                                      "-7|-0.5|-2e3|h\xc3\xa9llo|false|2000-02-29|\n"
                                      "9223372036854775807|0.000001|0.1||true|1970-01-01|\n");
    for (int th = 1; th <= 4; th++) check_all6(p, 0, th);
    /* no trailing delimiter, no final newline */
    p = WRITE("all6b.tbl", "1|2.50|1.5|abc|true|1995-03-15\n"
                           "-7|-0.5|-2e3|h\xc3\xa9llo|false|2000-02-29\n"
                           "9223372036854775807|0.000001|0.1||true|1970-01-01");
    for (int th = 1; th <= 4; th++) check_all6(p, 0, th);
    /* CRLF, header, mixed trailing delimiters, last line without line end */
    p = WRITE("all6c.tbl", "a|b|c|d|e|f|\r\n"
                           "1|2.50|1.5|abc|true|1995-03-15|\r\n"
                           "-7|-0.5|-2e3|h\xc3\xa9llo|false|2000-02-29\r\n"
                           "9223372036854775807|0.000001|0.1||true|1970-01-01|");
    for (int th = 1; th <= 4; th++) check_all6(p, 1, th);
    /* other delimiters, and slow-path number forms */
    p = WRITE("all6d.csv", "+1,2.5,1.5,abc,true,1995-03-15\n"
                           "-0007,-.5,-2E+3,h\xc3\xa9llo,false,2000-02-29\n"
                           "00000000000000000009223372036854775807,.000001,1e-1,,true,1970-01-01,\n");
    for (int th = 1; th <= 4; th++) {
        rf_rt_texttable t;
        rf_diags d;
        CHECK(load(p, ALL6, 6, ',', 0, th, &t, &d) == RF_OK);
        CHECK(t.nrows == 3 && I64(&t, 0, 0) == 1 && I64(&t, 0, 1) == -7 && I64(&t, 0, 2) == INT64_MAX);
        CHECK(t.nrows == 3 && I64(&t, 1, 1) == -500000 && I64(&t, 1, 2) == 1 && F64(&t, 2, 2) == 0.1);
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
    /* a delimiter that can occur in numbers disables the fast paths */
    p = WRITE("plus.txt", "12+-5+9.25+abc+\n-9223372036854775808+7+.5+x\n");
    {
        static const rf_type ty[] = {RF_TYPE_INT, RF_TYPE_INT, RF_TYPE_DECIMAL, RF_TYPE_STRING};
        rf_rt_texttable t;
        rf_diags d;
        CHECK(load(p, ty, 4, '+', 0, 2, &t, &d) == RF_OK);
        CHECK(t.nrows == 2 && I64(&t, 0, 0) == 12 && I64(&t, 1, 0) == -5 && I64(&t, 2, 0) == 9250000);
        CHECK(t.nrows == 2 && I64(&t, 0, 1) == INT64_MIN && I64(&t, 2, 1) == 500000 && str_is(&t.cols[3], 1, "x"));
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
    /* tab delimiter, default options (o == NULL means '|', no header) */
    p = WRITE("tab.txt", "1\t2\n3\t4\n");
    {
        static const rf_type ty[] = {RF_TYPE_INT, RF_TYPE_INT};
        rf_rt_texttable t;
        rf_diags d;
        CHECK(load(p, ty, 2, '\t', 0, 1, &t, &d) == RF_OK && t.nrows == 2 && I64(&t, 1, 1) == 4);
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_rt_load_text(p, ty, 2, NULL, &t, &d) == RF_EUSER);
        CHECK(diag_is(&d, 0, 1, 2, "expected an int, found \"1\\x092\": unexpected character"));
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
}

static void test_empty_and_header(void)
{
    static const rf_type ty[] = {RF_TYPE_INT, RF_TYPE_STRING};
    struct {
        const char *name, *text;
        int header;
        int64_t rows;
    } cases[] = {{"empty.tbl", "", 0, 0},        {"empty_h.tbl", "", 1, 0},
                 {"hdr_only.tbl", "k|s\n", 1, 0}, {"hdr_only2.tbl", "k|s", 1, 0},
                 {"one.tbl", "5|x", 0, 1},        {"one_h.tbl", "k|s\n5|x|\n", 1, 1},
                 {"hdr_bad.tbl", "not|an|int|header\n5|x\n", 1, 1}};
    for (int i = 0; i < (int)RF_ARRAY_LEN(cases); i++) {
        const char *p = write_file(cases[i].name, cases[i].text, (int64_t)strlen(cases[i].text));
        for (int th = 0; th <= 3; th++) {
            rf_rt_texttable t;
            rf_diags d;
            CHECK(load(p, ty, 2, '|', cases[i].header, th, &t, &d) == RF_OK);
            CHECK(t.nrows == cases[i].rows && t.ncols == 2 && d.count == 0);
            CHECK(t.cols && t.cols[0].data && t.cols[1].str_off && t.cols[1].str_bytes);
            if (t.cols && t.cols[1].str_off) CHECK(t.cols[1].str_off[t.nrows] == t.nrows);
            if (t.nrows == 1) CHECK(I64(&t, 0, 0) == 5 && str_is(&t.cols[1], 0, "x"));
            rf_rt_texttable_free(&t);
            rf_rt_texttable_free(&t); /* twice is harmless */
            rf_diags_free(&d);
        }
    }
    /* one string column: an empty line is the empty string */
    const char *p = WRITE("strings.txt", "a\n\nb\n\n");
    static const rf_type s1[] = {RF_TYPE_STRING};
    rf_rt_texttable t;
    rf_diags d;
    CHECK(load(p, s1, 1, '|', 0, 2, &t, &d) == RF_OK && t.nrows == 4);
    CHECK(t.nrows == 4 && str_is(&t.cols[0], 0, "a") && str_is(&t.cols[0], 1, "") &&
          str_is(&t.cols[0], 2, "b") && str_is(&t.cols[0], 3, ""));
    rf_rt_texttable_free(&t);
    rf_diags_free(&d);
}

/* Loads text as one file and expects one error at line:col containing msg. */
static void expect_error(const char *name, const char *text, const rf_type *ty, int32_t ncols, int line,
                         int col, const char *msg)
{
    const char *p = write_file(name, text, (int64_t)strlen(text));
    for (int th = 1; th <= 4; th += 3) {
        rf_rt_texttable t;
        rf_diags d;
        rf_status st = load(p, ty, ncols, '|', 0, th, &t, &d);
        CHECK(st == RF_EUSER);
        CHECK(t.nrows == 0 && t.cols == NULL);
        CHECK(d.count == 1 && d.nerrors == 1);
        if (!diag_is(&d, 0, line, col, msg)) {
            CHECK(!"expected diagnostic");
            fprintf(stderr, "  in %s, threads %d\n", name, th);
        }
        if (d.count) CHECK(strcmp(d.items[0].loc.file, p) == 0);
        rf_diags_free(&d);
    }
}

static void test_bad_data(void)
{
    static const rf_type I3[] = {RF_TYPE_INT, RF_TYPE_INT, RF_TYPE_INT};
    static const rf_type IDS[] = {RF_TYPE_INT, RF_TYPE_DECIMAL, RF_TYPE_STRING};
    static const rf_type IDT[] = {RF_TYPE_INT, RF_TYPE_DATE};
    static const rf_type IFB[] = {RF_TYPE_INT, RF_TYPE_FLOAT, RF_TYPE_BOOL};

    expect_error("e1.tbl", "1|2|3|\nx|2|3|\n", I3, 3, 2, 1, "expected an int, found \"x\": unexpected character");
    expect_error("e2.tbl", "1|2|3|\n1|2|3|\n1|22a|3|\n", I3, 3, 3, 5,
                 "expected an int, found \"22a\": unexpected character");
    expect_error("e3.tbl", "1|9223372036854775808|3\n", I3, 3, 1, 3,
                 "expected an int, found \"9223372036854775808\": integer out of range");
    expect_error("e4.tbl", "1|-99999999999999999999|3\n", I3, 3, 1, 3, "integer out of range");
    expect_error("e5.tbl", "1|2||\n", I3, 3, 1, 5, "expected an int, found \"\": empty field");
    expect_error("e6.tbl", "1|2|3\n4|5\n", I3, 3, 2, 4, "missing field 3 (expected 3 fields)");
    expect_error("e7.tbl", "1|2|\n", I3, 3, 1, 5, "missing field 3 (expected 3 fields)");
    expect_error("e8.tbl", "1\n", I3, 3, 1, 2, "missing field 2 (expected 3 fields)");
    expect_error("e9.tbl", "1|2|3|4|\n", I3, 3, 1, 7, "extra field(s): found 4 fields, expected 3");
    expect_error("e10.tbl", "1|2|3|4|5\n", I3, 3, 1, 7, "extra field(s): found 5 fields, expected 3");
    expect_error("e11.tbl", "1|2|3||\n", I3, 3, 1, 7, "extra field(s): found 4 fields, expected 3");
    expect_error("e12.tbl", "1|2|3|\n\n4|5|6|\n", I3, 3, 2, 1, "missing fields: the line is empty (expected 3 fields)");
    expect_error("e13.tbl", "1|2|3|\r\n\r\n4|5|6|\r\n", I3, 3, 2, 1, "the line is empty");
    expect_error("e14.tbl", "1|2.5|a|\n2|12.3x4|b|\n", IDS, 3, 2, 7,
                 "expected a decimal, found \"12.3x4\": unexpected character");
    expect_error("e15.tbl", "1|1.1234567|a|\n", IDS, 3, 1, 11,
                 "expected a decimal, found \"1.1234567\": too many fraction digits (at most 6)");
    expect_error("e16.tbl", "1|99999999999999.5|a|\n", IDS, 3, 1, 3, "decimal out of range");
    expect_error("e17.tbl", "1|1e5|a|\n", IDS, 3, 1, 4, "expected a decimal, found \"1e5\": unexpected character");
    expect_error("e18.tbl", "1|1.5|ok|\n2|2.5|bad\xff|\n", IDS, 3, 2, 10,
                 "expected a string (UTF-8), found \"bad\\xff\": invalid UTF-8");
    expect_error("e19.tbl", "1|1.5|\xc3\xa9\xc3|\n", IDS, 3, 1, 9, "found \"\xc3\xa9\\xc3\": invalid UTF-8");
    expect_error("e20.tbl", "1|1995-02-28|\n2|1995-02-30|\n", IDT, 2, 2, 11,
                 "expected a date, found \"1995-02-30\": invalid date");
    /* February 29th: every 4th year, not every 100th, every 400th */
    expect_error("e20b.tbl", "1|1996-02-29|\n2|1900-02-29|\n", IDT, 2, 2, 11, "expected a date, found \"1900-02-29\": invalid date");
    expect_error("e20c.tbl", "1|2100-02-29|\n", IDT, 2, 1, 11, "invalid date");
    expect_error("e20d.tbl", "1|1997-02-29|\n", IDT, 2, 1, 11, "invalid date");
    {
        const char *path = WRITE("leap.tbl", "1|1996-02-29|\n2|2000-02-29|\n3|2400-02-29|\n4|1900-02-28|\n");
        rf_rt_texttable t;
        rf_diags d;
        CHECK(load(path, IDT, 2, '|', 0, 1, &t, &d) == RF_OK && d.count == 0 && t.nrows == 4);
        if (t.nrows == 4)
            CHECK(D32(&t, 1, 0) == date_of("1996-02-29") && D32(&t, 1, 1) == date_of("2000-02-29") &&
                  D32(&t, 1, 2) == date_of("2400-02-29") && D32(&t, 1, 3) == date_of("1900-02-28"));
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
    expect_error("e21.tbl", "1|1995-2-28|\n", IDT, 2, 1, 9, "expected a date, found \"1995-2-28\": expected YYYY-MM-DD");
    expect_error("e22.tbl", "1|1995-02-28x|\n", IDT, 2, 1, 13, "unexpected character");
    expect_error("e23.tbl", "1|1995-13-01|\n", IDT, 2, 1, 8, "invalid date");
    expect_error("e24.tbl", "1|Inf|true|\n", IFB, 3, 1, 3, "expected a float, found \"Inf\"");
    expect_error("e24b.tbl", "1|-nan|true|\n", IFB, 3, 1, 4, "expected a float, found \"-nan\"");
    expect_error("e24c.tbl", "1|infinity|true|\n", IFB, 3, 1, 3, "expected a float, found \"infinity\"");
    expect_error("e25.tbl", "1|1e999|true|\n", IFB, 3, 1, 3, "float out of range");
    expect_error("e26.tbl", "1|1.0|yes|\n", IFB, 3, 1, 7, "expected a boolean, found \"yes\": expected true or false");
    expect_error("e27.tbl", "1|1.0|\n", IFB, 3, 1, 7, "missing field 3");
    /* long fields are cut, quotes and control bytes escaped */
    expect_error("e28.tbl",
                 "1|0123456789012345678901234567890123456789012345678901234567890123456789|\n", I3, 3, 1,
                 3, "found \"0123456789012345678901234567890123456789...\": integer out of range");
    expect_error("e29.tbl", "1|q\"\\\x01|3|\n", I3, 3, 1, 3, "found \"q\\\"\\\\\\x01\"");
    expect_error("e29q.tbl", "1|\"q\"\\\x01|3|\n", I3, 3, 1, 6, "unexpected character after the closing '\"' of a quoted field");
    /* no final newline, error on the last line */
    expect_error("e30.tbl", "1|2|3|\n4|5|z", I3, 3, 2, 5, "found \"z\"");
}

static void test_files(void)
{
    static const rf_type ty[] = {RF_TYPE_INT};
    rf_rt_texttable t;
    rf_diags d;
    char *missing = rf_sprintf("%s/no_such_file.tbl", tmpdir);
    CHECK(load(missing, ty, 1, '|', 0, 1, &t, &d) == RF_EIO);
    CHECK(d.count == 1 && strcmp(d.items[0].loc.file, missing) == 0 && strstr(d.items[0].msg, "No such file or directory"));
    rf_diags_free(&d);
    CHECK(load(tmpdir, ty, 1, '|', 0, 1, &t, &d) == RF_EIO);
    CHECK(d.count == 1 && strstr(d.items[0].msg, "Is a directory"));
    rf_diags_free(&d);
    /* a pipe-like file that cannot be mapped is read instead */
    if (access("/dev/null", R_OK) == 0) {
        CHECK(load("/dev/null", ty, 1, '|', 0, 2, &t, &d) == RF_OK && t.nrows == 0);
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
    CHECK(load(missing, ty, 1, '\n', 0, 1, &t, &d) == RF_EUSAGE);
    rf_diags_free(&d);
    /* no columns: a bug of the caller (redfox's own code), reported as internal */
    CHECK(load(missing, ty, 0, '|', 0, 1, &t, &d) == RF_EINTERNAL);
    rf_diags_free(&d);
    /* a NULL rf_diags is allowed */
    CHECK(rf_rt_load_text(missing, ty, 1, NULL, &t, NULL) == RF_EIO);
    free(missing);
}

/* Loads text with delimiter delim, header, threads, NULL-named predicate. */
static rf_status load_text(const char *name, const char *text, int64_t len, const rf_type *ty, int32_t ncols,
                           char delim, int header, int threads, rf_rt_texttable *t, rf_diags *d)
{
    const char *p = write_file(name, text, len);
    return load(p, ty, ncols, delim, header, threads, t, d);
}
#define LOADT(name, lit, ty, n, delim, header, threads, t, d)                                      \
    load_text(name, lit, (int64_t)sizeof(lit) - 1, ty, n, delim, header, threads, t, d)

/* A float field reads inf, -inf and nan, as floats print them, and -0.0 as
** 0.0 (a float zero has no sign: docs/LANGUAGE.md), by the plain parser and
** the quote-aware one (a '"' anywhere in the file), with any number of
** threads. */
static void test_float_specials(void)
{
    static const rf_type ty[] = {RF_TYPE_INT, RF_TYPE_FLOAT};
    static const char plain[] = "1|inf|\n2|-inf|\n3|nan|\n4|-0.0|\n5|2.5|\n";
    static const char quoted[] = "1,inf\n2,\"-inf\"\n3,nan\n4,-0.0\n5,\"2.5\"\n";
    for (int q = 0; q < 2; q++)
        for (int th = 1; th <= 3; th++) {
            rf_rt_texttable t;
            rf_diags d;
            rf_status st = q ? LOADT("fsq.csv", quoted, ty, 2, ',', 0, th, &t, &d)
                             : LOADT("fsp.tbl", plain, ty, 2, '|', 0, th, &t, &d);
            CHECK(st == RF_OK && d.count == 0 && t.nrows == 5);
            if (st == RF_OK && t.nrows == 5) {
                const double *v = t.cols[1].data;
                CHECK(isinf(v[0]) && v[0] > 0);
                CHECK(isinf(v[1]) && v[1] < 0);
                CHECK(isnan(v[2]));
                CHECK(v[3] == 0 && !signbit(v[3]) && v[4] == 2.5);
            }
            rf_rt_texttable_free(&t);
            rf_diags_free(&d);
        }
}

/* RFC 4180: quotes, doubled quotes, delimiters and line ends inside quotes,
** CRLF, a header with quoted names; the same with every thread count. */
static void test_csv(void)
{
    static const rf_type ty[] = {RF_TYPE_INT, RF_TYPE_STRING, RF_TYPE_DECIMAL, RF_TYPE_STRING};
    static const char text[] = "\"id\",\"name\",\"price\",note\r\n"
                               "1,\"O\"\"Brien\",\"2.50\",plain\r\n"
                               "2,\"a, b\",3,\"two\nlines\"\r\n"
                               "3,\"\",4.5,\"crlf\r\ninside\"\r\n"
                               "4,x\"y,5,\"\"\"\"\r\n"
                               "5,\"\",6,\n";
    for (int th = 1; th <= 8; th++) {
        rf_rt_texttable t;
        rf_diags d;
        CHECK(LOADT("q.csv", text, ty, 4, ',', 1, th, &t, &d) == RF_OK);
        CHECK(d.count == 0);
        CHECK(t.nrows == 5);
        if (t.nrows == 5) {
            CHECK(I64(&t, 0, 0) == 1 && I64(&t, 0, 4) == 5);
            CHECK(str_is(&t.cols[1], 0, "O\"Brien") && str_is(&t.cols[1], 1, "a, b") && str_is(&t.cols[1], 2, "") &&
                  str_is(&t.cols[1], 3, "x\"y") && str_is(&t.cols[1], 4, ""));
            CHECK(I64(&t, 2, 0) == 2500000 && I64(&t, 2, 1) == 3000000 && I64(&t, 2, 2) == 4500000);
            CHECK(str_is(&t.cols[3], 0, "plain") && str_is(&t.cols[3], 1, "two\nlines") &&
                  str_is(&t.cols[3], 2, "crlf\r\ninside") && str_is(&t.cols[3], 3, "\"") && str_is(&t.cols[3], 4, ""));
            /* rows 2 and 3 span two lines each */
            CHECK(t.lines && t.lines[0] == 2 && t.lines[1] == 3 && t.lines[2] == 5 && t.lines[3] == 7 && t.lines[4] == 8);
        }
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
    /* a file without quotes has no line table: rows are lines */
    {
        rf_rt_texttable t;
        rf_diags d;
        CHECK(LOADT("plain.csv", "1,a,2,b\r\n2,c,3,d\r\n", ty, 4, ',', 0, 2, &t, &d) == RF_OK && t.nrows == 2 &&
              t.lines == NULL);
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
    /* a quoted header with a line end in it is one record */
    {
        static const rf_type s2[] = {RF_TYPE_STRING, RF_TYPE_INT};
        rf_rt_texttable t;
        rf_diags d;
        CHECK(LOADT("qh.csv", "\"a\nb\";c\nx;1\n", s2, 2, ';', 1, 3, &t, &d) == RF_OK && t.nrows == 1);
        if (t.nrows == 1) CHECK(str_is(&t.cols[0], 0, "x") && I64(&t, 1, 0) == 1 && t.lines[0] == 3);
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
    /* a tab delimiter, dbgen's trailing delimiter after a quoted field */
    {
        static const rf_type s2[] = {RF_TYPE_STRING, RF_TYPE_STRING};
        rf_rt_texttable t;
        rf_diags d;
        CHECK(LOADT("t.tsv", "\"a\tb\"\tc\t\n", s2, 2, '\t', 0, 1, &t, &d) == RF_OK && t.nrows == 1);
        if (t.nrows == 1) CHECK(str_is(&t.cols[0], 0, "a\tb") && str_is(&t.cols[1], 0, "c"));
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
}

/* Loads text and expects exactly one error at line:col containing msg, for
** 1 and 3 threads. */
static void expect_error_with(const char *name, const char *text, int64_t len, const rf_type *ty, int32_t ncols,
                              char delim, int header, int line, int col, const char *msg)
{
    for (int th = 1; th <= 3; th += 2) {
        rf_rt_texttable t;
        rf_diags d;
        CHECK(load_text(name, text, len, ty, ncols, delim, header, th, &t, &d) == RF_EUSER);
        CHECK(d.count == 1);
        if (!diag_is(&d, 0, line, col, msg)) {
            CHECK(!"expected diagnostic");
            fprintf(stderr, "  in %s, threads %d\n", name, th);
        }
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
}
#define EXPECT_ERR(name, lit, ty, n, delim, header, line, col, msg)                                \
    expect_error_with(name, lit, (int64_t)sizeof(lit) - 1, ty, n, delim, header, line, col, msg)

static void test_csv_errors(void)
{
    static const rf_type is[] = {RF_TYPE_INT, RF_TYPE_STRING};
    static const rf_type ii[] = {RF_TYPE_INT, RF_TYPE_INT};
    EXPECT_ERR("u1.csv", "1,a\n2,\"never closed\n3,c\n", is, 2, ',', 0, 2, 3,
               "unterminated quoted field: the '\"' opened here is never closed");
    EXPECT_ERR("u2.csv", "1,\"ab\"c\n", is, 2, ',', 0, 1, 7, "unexpected character after the closing '\"'");
    /* a header's quote that never closes: an error, not a header of the whole file */
    EXPECT_ERR("u5.csv", "\"id,name\n1,a\n2,b\n", is, 2, ',', 1, 1, 1,
               "unterminated quoted field: the '\"' opened here is never closed");
    EXPECT_ERR("u6.csv", "id,\"na\"\"me\n1,a\n", is, 2, ',', 1, 1, 4,
               "unterminated quoted field: the '\"' opened here is never closed");
    /* the error of a quoted delimiter blames the right field, on the right line */
    EXPECT_ERR("u3.csv", "1,\"a\nb\"\n\"2,x\",c\n", is, 2, ',', 0, 3, 3, "expected an int, found \"2,x\"");
    EXPECT_ERR("u4.csv", "1,\"a\"\n2,b\n3,\"c\nd\",e\n", is, 2, ',', 0, 4, 4, "extra field(s): found 3 fields, expected 2");
    /* NUL bytes in strings, quoted or not; 8-byte words and the tail */
    EXPECT_ERR("n1.csv", "1,abcdefghij\0klmnop\n", is, 2, ',', 0, 1, 13, "a NUL byte in a string field");
    EXPECT_ERR("n2.csv", "1,ok\n2,a\0\n", is, 2, ',', 0, 2, 4, "a NUL byte in a string field");
    EXPECT_ERR("n3.csv", "1,\"x\n\0\"\n", is, 2, ',', 0, 2, 1, "a NUL byte in a string field");
    EXPECT_ERR("n4.csv", "1,abcdefg\0\n", is, 2, ',', 0, 1, 10, "a NUL byte in a string field");
    /* hints: one error for a first line that a header or another delimiter explains */
    EXPECT_ERR("h1.csv", "src,dst\n1,2\n2,3\n3,4\n4,5\n5,6\n", ii, 2, '|', 0, 1, 1,
               "expected an int, found \"src,dst\": unexpected character\n"
               "hint: the file looks comma-separated; add lang:input:delimiter[`PREDICATE] = \",\".\n"
               "hint: the first line looks like a header; add lang:input:header[`PREDICATE] = true.");
    EXPECT_ERR("h2.csv", "1;2\n2;3\n3;4\n4;5\n5;6\n6;7\n", ii, 2, ',', 0, 1, 2,
               "hint: the file looks semicolon-separated; add lang:input:delimiter[`PREDICATE] = \";\".");
    EXPECT_ERR("h3.tsv", "1\t2\n", ii, 2, '|', 0, 1, 2,
               "hint: the file looks tab-separated; add lang:input:delimiter[`PREDICATE] = \"\\t\".");
    EXPECT_ERR("h4.tbl", "src|dst\n1|2\n", ii, 2, '|', 0, 1, 1,
               "found \"src\": unexpected character\n"
               "hint: the first line looks like a header; add lang:input:header[`PREDICATE] = true.");
    EXPECT_ERR("h5.csv", "\"src\",\"dst\"\r\n1,2\r\n", ii, 2, '|', 0, 1, 6,
               "hint: the file looks comma-separated; add lang:input:delimiter[`PREDICATE] = \",\".\n"
               "hint: the first line looks like a header; add lang:input:header[`PREDICATE] = true.");
    /* with a header already skipped, the first data line gets the delimiter hint */
    EXPECT_ERR("h6.csv", "a|b\n1,2\n3,4\n", ii, 2, '|', 1, 2, 2, "hint: the file looks comma-separated");
    /* no hint: plain bad data keeps its errors (several), a header whose next line is bad too */
    {
        static const char bad[] = "1,x\n2,y\n3,z\n";
        static const char hdr[] = "a,b\n1,x\n";
        rf_rt_texttable t;
        rf_diags d;
        CHECK(load_text("nh1.csv", bad, (int64_t)sizeof bad - 1, ii, 2, ',', 0, 1, &t, &d) == RF_EUSER);
        CHECK(d.count == 3 && !strstr(d.items[0].msg, "hint"));
        rf_diags_free(&d);
        CHECK(load_text("nh2.csv", hdr, (int64_t)sizeof hdr - 1, ii, 2, ',', 0, 1, &t, &d) == RF_EUSER);
        CHECK(d.count == 2 && !strstr(d.items[0].msg, "hint"));
        rf_diags_free(&d);
    }
    /* no header hint for a line of words that spell values elsewhere (inf,
    ** nan, TRUE, null): a value this loader does not take, not a name */
    {
        static const rf_type f1[] = {RF_TYPE_FLOAT}, b1[] = {RF_TYPE_BOOL};
        static const char *const lines[] = {"INF\n", "NaN\n2.5\n", "Infinity\n"};
        for (int i = 0; i < 3; i++) {
            rf_rt_texttable t;
            rf_diags d;
            CHECK(load_text("vw.csv", lines[i], (int64_t)strlen(lines[i]), f1, 1, ',', 0, 1, &t, &d) == RF_EUSER);
            CHECK(d.count >= 1 && !strstr(d.items[0].msg, "hint"));
            rf_diags_free(&d);
        }
        static const char tru[] = "TRUE\n";
        rf_rt_texttable t;
        rf_diags d;
        CHECK(load_text("vb.csv", tru, (int64_t)sizeof tru - 1, b1, 1, ',', 0, 1, &t, &d) == RF_EUSER);
        CHECK(d.count >= 1 && !strstr(d.items[0].msg, "hint"));
        rf_diags_free(&d);
        /* a name that is no such word still gets it */
        static const char name[] = "weight\n2.5\n";
        CHECK(load_text("vn.csv", name, (int64_t)sizeof name - 1, f1, 1, ',', 0, 1, &t, &d) == RF_EUSER);
        CHECK(d.count >= 1 && strstr(d.items[0].msg, "looks like a header"));
        rf_diags_free(&d);
    }
    /* the hint names the predicate */
    {
        static const char text[] = "src,dst\n1,2\n";
        const char *p = write_file("hp.csv", text, (int64_t)sizeof text - 1);
        rf_rt_load_opts o = {.delimiter = '|', .threads = 1, .pred = "edge"};
        rf_rt_texttable t;
        rf_diags d;
        rf_diags_init(&d);
        CHECK(rf_rt_load_text(p, ii, 2, &o, &t, &d) == RF_EUSER);
        CHECK(d.count == 1 && strstr(d.items[0].msg, "lang:input:delimiter[`edge] = \",\".") &&
              strstr(d.items[0].msg, "lang:input:header[`edge] = true."));
        rf_diags_free(&d);
    }
    /* '"' cannot be the delimiter */
    {
        rf_rt_texttable t;
        rf_diags d;
        CHECK(LOADT("dq.csv", "1\"2\n", ii, 2, '"', 0, 1, &t, &d) == RF_EUSAGE);
        rf_diags_free(&d);
    }
}

/* A missing file: the message names the input predicate and the full path. */
static void test_missing_named(void)
{
    static const rf_type ty[] = {RF_TYPE_INT};
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    rf_rt_load_opts o = {.delimiter = '|', .threads = 1, .pred = "edge"};
    rf_rt_texttable t;
    rf_diags d;
    rf_diags_init(&d);
    CHECK(rf_rt_load_text("./no_such_dir_rf/edge.csv", ty, 1, &o, &t, &d) == RF_EIO);
    char *want = rf_sprintf("cannot open the file of input `edge`, %s%sno_such_dir_rf/edge.csv: No such file or "
                            "directory (the folder %s%sno_such_dir_rf does not exist)",
                            cwd, strcmp(cwd, "/") ? "/" : "", cwd, strcmp(cwd, "/") ? "/" : "");
    CHECK(d.count == 1 && strcmp(d.items[0].msg, want) == 0);
    free(want);
    rf_diags_free(&d);
}

/* Quoted files split into chunks: every thread count gives the same table. */
static void test_csv_threads(void)
{
    static const rf_type ty[] = {RF_TYPE_INT, RF_TYPE_STRING, RF_TYPE_DECIMAL};
    rf_buf b;
    rf_buf_init(&b);
    for (int64_t i = 0; i < 4000; i++) {
        switch (i % 5) {
        case 0: rf_buf_printf(&b, "%lld,plain%lld,%lld.5\n", (long long)i, (long long)i, (long long)i); break;
        case 1: rf_buf_printf(&b, "%lld,\"q,%lld\n\"\"x\"\"\",\"%lld\"\r\n", (long long)i, (long long)i, (long long)i); break;
        case 2: rf_buf_printf(&b, "\"%lld\",\"\",1\n", (long long)i); break;
        case 3: rf_buf_printf(&b, "%lld,\"\n\n\n\",2\n", (long long)i); break;
        default: rf_buf_printf(&b, "%lld,a\"b,3", (long long)i); rf_buf_puts(&b, i == 3999 ? "" : "\n"); break;
        }
    }
    int64_t len = b.len;
    char *text = rf_buf_take(&b);
    const char *p = write_file("gen.csv", text, len);
    free(text);
    rf_rt_texttable ref, t;
    rf_diags d;
    CHECK(load(p, ty, 3, ',', 0, 1, &ref, &d) == RF_OK && ref.nrows == 4000);
    rf_diags_free(&d);
    if (ref.nrows == 4000) {
        CHECK(str_is(&ref.cols[1], 1, "q,1\n\"x\"") && str_is(&ref.cols[1], 3, "\n\n\n") && str_is(&ref.cols[1], 4, "a\"b"));
        CHECK(I64(&ref, 0, 2) == 2 && I64(&ref, 2, 1) == 1000000);
        CHECK(ref.lines[0] == 1 && ref.lines[1] == 2 && ref.lines[2] == 4 && ref.lines[3] == 5 && ref.lines[4] == 9);
    }
    for (int th = 2; th <= 13; th += 11) {
        CHECK(load(p, ty, 3, ',', 0, th, &t, &d) == RF_OK);
        CHECK(tables_equal(&ref, &t));
        CHECK(t.lines && ref.lines && memcmp(t.lines, ref.lines, (size_t)ref.nrows * sizeof *t.lines) == 0);
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
    rf_rt_texttable_free(&ref);
}

/* A generated file of n rows of every type; row i is a function of i. */
static char *gen_rows(int64_t n, int crlf, int64_t *len)
{
    rf_buf b;
    rf_buf_init(&b);
    for (int64_t i = 0; i < n; i++) {
        char date[RF_VAL_FMT_MAX], dec[RF_VAL_FMT_MAX];
        rf_val_write_date(date, (int32_t)(i % 20000) - 5000);
        rf_val_write_dec(dec, (i * 7919) % 100000000 - 50000000);
        rf_buf_printf(&b, "%lld|%s|%.17g|str%lld%s|%s|%s%s", (long long)(i * 1000003 - 77),
                      dec, (double)i / 7.0, (long long)i, i % 3 ? "" : "\xe2\x82\xac", i % 2 ? "true" : "false",
                      date, i % 5 ? "|" : "");
        rf_buf_puts(&b, crlf ? "\r\n" : "\n");
    }
    *len = b.len;
    return rf_buf_take(&b);
}

static void test_threads(void)
{
    int64_t len;
    char *text = gen_rows(5000, 0, &len);
    const char *p = write_file("gen.tbl", text, len);
    rf_rt_texttable ref, t;
    rf_diags d;
    CHECK(load(p, ALL6, 6, '|', 0, 1, &ref, &d) == RF_OK && ref.nrows == 5000);
    rf_diags_free(&d);
    for (int64_t i = 0; i < ref.nrows; i += 997) {
        char want[64];
        snprintf(want, sizeof want, "str%lld%s", (long long)i, i % 3 ? "" : "\xe2\x82\xac");
        CHECK(I64(&ref, 0, i) == i * 1000003 - 77);
        CHECK(I64(&ref, 1, i) == (i * 7919) % 100000000 - 50000000);
        CHECK(F64(&ref, 2, i) == (double)i / 7.0);
        CHECK(str_is(&ref.cols[3], i, want));
        CHECK(B8(&ref, 4, i) == (i % 2 ? 1 : 0));
        CHECK(D32(&ref, 5, i) == (int32_t)(i % 20000) - 5000);
    }
    static const int ths[] = {2, 3, 4, 7, 16, 64, 256, 1000, 0};
    for (int k = 0; k < (int)RF_ARRAY_LEN(ths); k++) {
        CHECK(load(p, ALL6, 6, '|', 0, ths[k], &t, &d) == RF_OK);
        if (!tables_equal(&ref, &t)) {
            CHECK(!"same table whatever the thread count");
            fprintf(stderr, "  threads %d\n", ths[k]);
        }
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
    /* CRLF and a header give the same rows */
    free(text);
    text = gen_rows(5000, 1, &len);
    char *with_header = rf_sprintf("h|e|a|d|e|r|\r\n%s", text);
    p = write_file("gen_crlf.tbl", with_header, (int64_t)strlen(with_header));
    for (int th = 1; th <= 5; th += 2) {
        CHECK(load(p, ALL6, 6, '|', 1, th, &t, &d) == RF_OK && tables_equal(&ref, &t));
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
    }
    free(with_header);

    /* errors deep in a multi-chunk file name the right lines, in order,
    ** and the same ones whatever the thread count */
    char *bad = strdup(text);
    int64_t lines_at[6] = {0}, nl = 0;
    static const int64_t bad_lines[] = {1234, 2500, 2501, 3777, 4100, 4999}; /* 1-based */
    for (int64_t i = 0, b = 0; i < len && b < 6; i++) {
        if (i == 0 || bad[i - 1] == '\n') {
            nl++;
            if (nl == bad_lines[b]) lines_at[b++] = i;
        }
    }
    /* corrupt the decimal field (second) of each chosen line: col of the field is after "int|" */
    for (int b = 0; b < 6; b++) {
        char *l = bad + lines_at[b];
        char *f = strchr(l, '|') + 1;
        f[0] = 'X';
    }
    p = write_file("gen_bad.tbl", bad, len);
    for (int th = 1; th <= 8; th++) {
        CHECK(load(p, ALL6, 6, '|', 0, th, &t, &d) == RF_EUSER);
        CHECK(d.count == 5 && d.nerrors == 5);
        for (int b = 0; b < 5 && b < d.count; b++) {
            char *l = bad + lines_at[b];
            int col = (int)(strchr(l, '|') - l) + 2;
            if (!diag_is(&d, b, (int)bad_lines[b], col, "expected a decimal, found \"X")) {
                CHECK(!"error line");
                fprintf(stderr, "  threads %d\n", th);
            }
        }
        rf_diags_free(&d);
    }
    /* only one error, near the end, with a header: the line counts the header */
    char *one = rf_sprintf("header\n%s1|2|3|4|true|1999-99-99|\n", text);
    p = write_file("gen_one.tbl", one, (int64_t)strlen(one));
    for (int th = 1; th <= 4; th += 3) {
        CHECK(load(p, ALL6, 6, '|', 1, th, &t, &d) == RF_EUSER);
        CHECK(d.count == 1 && diag_is(&d, 0, 5002, 19, "expected a date, found \"1999-99-99\": invalid date"));
        rf_diags_free(&d);
    }
    free(one);
    free(bad);
    free(text);
    rf_rt_texttable_free(&ref);
}

static const rf_type LINEITEM[16] = {
    RF_TYPE_INT,     RF_TYPE_INT,     RF_TYPE_INT,    RF_TYPE_INT,    RF_TYPE_DECIMAL, RF_TYPE_DECIMAL,
    RF_TYPE_DECIMAL, RF_TYPE_DECIMAL, RF_TYPE_STRING, RF_TYPE_STRING, RF_TYPE_DATE,    RF_TYPE_DATE,
    RF_TYPE_DATE,    RF_TYPE_STRING,  RF_TYPE_STRING, RF_TYPE_STRING};

static int run_tpch(const char *path)
{
    if (access(path, R_OK) != 0) {
        printf("test_load: %s not found; skipped\n", path);
        return 77;
    }
    rf_rt_texttable t, t4;
    rf_diags d;
    rf_status st = load(path, LINEITEM, 16, '|', 0, 1, &t, &d);
    rf_diags_print(&d, stderr);
    CHECK(st == RF_OK);
    rf_diags_free(&d);
    CHECK(t.nrows == 60175);
    CHECK(load(path, LINEITEM, 16, '|', 0, 4, &t4, &d) == RF_OK && tables_equal(&t, &t4));
    rf_diags_free(&d);
    rf_rt_texttable_free(&t4);
    /* compare against an independent reading with the C library */
    FILE *f = fopen(path, "r");
    char line[1024];
    int64_t r = 0, bad = 0;
    while (f && fgets(line, sizeof line, f) && r < t.nrows) {
        char *fld[17];
        int n = 0;
        for (char *s = line; n < 17; n++) {
            fld[n] = s;
            char *e = strchr(s, '|');
            if (!e) break;
            *e = 0;
            s = e + 1;
        }
        int y, m, dd;
        int ok = n >= 16 && strtoll(fld[0], NULL, 10) == I64(&t, 0, r) &&
                 strtoll(fld[3], NULL, 10) == I64(&t, 3, r) &&
                 llround(strtod(fld[5], NULL) * 100) * 10000 == I64(&t, 5, r) &&
                 llround(strtod(fld[6], NULL) * 100) * 10000 == I64(&t, 6, r) &&
                 sscanf(fld[10], "%d-%d-%d", &y, &m, &dd) == 3 &&
                 rf_val_days_from_civil(y, m, dd) == D32(&t, 10, r) && str_is(&t.cols[8], r, fld[8]) &&
                 str_is(&t.cols[15], r, fld[15]);
        if (!ok && bad++ < 3) fprintf(stderr, "  row %lld differs\n", (long long)r);
        r++;
    }
    if (f) fclose(f);
    CHECK(f && r == t.nrows && bad == 0);
    if (t.nrows > 0) {
        CHECK(I64(&t, 0, 0) == 1 && I64(&t, 1, 0) == 1552 && I64(&t, 4, 0) == 17000000 &&
              I64(&t, 5, 0) == 24710350000 && I64(&t, 6, 0) == 40000);
        CHECK(D32(&t, 10, 0) == date_of("1996-03-13") && str_is(&t.cols[13], 0, "DELIVER IN PERSON") &&
              str_is(&t.cols[15], 0, "egular courts above the"));
    }
    rf_rt_texttable_free(&t);
    printf("test_load --tpch: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}

static int run_bench(const char *path, int threads, int reps)
{
    for (int i = 0; i < reps; i++) {
        rf_rt_texttable t;
        rf_diags d;
        double t0 = rf_now();
        rf_status st = load(path, LINEITEM, 16, '|', 0, threads, &t, &d);
        double t1 = rf_now();
        rf_diags_print(&d, stderr);
        struct stat sb;
        double mb = stat(path, &sb) == 0 ? (double)sb.st_size / 1e6 : 0;
        printf("load %s: status %d, %lld rows, %.1f MB, threads %d: %.3f s (%.0f MB/s)\n", path, (int)st,
               (long long)t.nrows, mb, threads, t1 - t0, mb / (t1 - t0));
        rf_rt_texttable_free(&t);
        rf_diags_free(&d);
        if (st != RF_OK) return 1;
    }
    return 0;
}

/* A file cut into n parts (rf_rt_text_range): the parts tile it at line
** starts, the first line is part 0's, the newline counts add up, and parsing
** each part at the line its counts give yields every row once, with errors
** on the file's own lines. */
static void test_ranges(void)
{
    static const char good[] = "h\n1\n22\n333\n4444\n55555\n6", bad[] = "h\n1\n22\n333\n4444\nx\n55555\n6";
    rf_type ty[1] = {RF_TYPE_INT};
    for (int f = 0; f < 2; f++) {
        const char *text = f ? bad : good;
        int64_t size = (int64_t)strlen(text);
        const char *p = write_file(f ? "ranges_bad.tbl" : "ranges.tbl", text, size);
        for (int n = 1; n <= 30; n++) { /* more parts than bytes too */
            int64_t at = 0, line = 1, rows = 0, sum = 0, errline = 0;
            for (int part = 0; part < n; part++) {
                rf_rt_textrange r;
                rf_diags d;
                rf_diags_init(&d);
                CHECK(rf_rt_text_range(p, NULL, part, n, &r, &d) == RF_OK);
                CHECK(r.lo == at && r.hi >= r.lo && r.size == size);
                CHECK(r.lo == 0 || text[r.lo - 1] == '\n');
                CHECK(part > 0 || r.hi >= 2); /* the header line is part 0's */
                CHECK(r.quote == 0);
                rf_rt_load_opts o = {.delimiter = '|', .header = part == 0, .threads = 1};
                rf_rt_texttable t;
                rf_status st = rf_rt_load_mem(p, r.data + r.lo, r.hi - r.lo, line, ty, 1, &o, &t, &d);
                if (st == RF_EUSER && d.count) errline = d.items[0].loc.line;
                for (int64_t i = 0; st == RF_OK && i < t.nrows; i++) sum += I64(&t, 0, i);
                if (st == RF_OK) rows += t.nrows;
                rf_rt_texttable_free(&t);
                rf_diags_free(&d);
                at = r.hi;
                line += r.newlines;
                rf_rt_text_range_free(&r);
            }
            CHECK(at == size && line == (f ? 8 : 7));
            if (f) CHECK(errline == 6); /* "x", on the file's line 6 whichever part holds it */
            else CHECK(rows == 6 && sum == 1 + 22 + 333 + 4444 + 55555 + 6);
        }
    }
}

/* A mapped file cut short by another process while it is read: the pages
** past its new end read as NUL bytes instead of raising SIGBUS (which
** killed the process, exit 135), and the parse names the cause. */
static void test_shrunk(void)
{
    enum { LINES = 4096 }; /* "12345\n" each: 24 KiB, six pages */
    char *text = malloc(LINES * 6 + 1);
    CHECK(text != NULL);
    if (!text) return;
    for (int i = 0; i < LINES; i++) memcpy(text + i * 6, "12345\n", 6);
    const char *p = write_file("shrunk.tbl", text, LINES * 6);
    free(text);
    rf_rt_textrange r;
    rf_diags d;
    rf_diags_init(&d);
    CHECK(rf_rt_text_range(p, NULL, 0, 1, &r, &d) == RF_OK);
    CHECK(r.is_mmap == 1 && r.size == LINES * 6);
    CHECK(truncate(p, 100) == 0);
    CHECK(!rf_rt_map_guard_shrunk(r.data));
    CHECK(r.data[LINES * 6 - 1] == 0); /* past the end: a NUL, not SIGBUS */
    CHECK(rf_rt_map_guard_shrunk(r.data));
    rf_type ty[1] = {RF_TYPE_INT};
    rf_rt_load_opts o = {.delimiter = '|', .threads = 2};
    rf_rt_texttable t;
    CHECK(rf_rt_load_mem(p, r.data, r.size, 1, ty, 1, &o, &t, &d) == RF_EUSER);
    CHECK(d.count >= 1 && strstr(d.items[0].msg, "cut short while it was read") != NULL);
    rf_rt_text_range_free(&r);
    rf_diags_free(&d);
    /* a new mapping of the file, whole again, is not marked */
    rf_diags_init(&d);
    CHECK(rf_rt_text_range(p, NULL, 0, 1, &r, &d) == RF_OK);
    CHECK(r.size == 100 && !rf_rt_map_guard_shrunk(r.data));
    rf_rt_text_range_free(&r);
    rf_diags_free(&d);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "--tpch")) return run_tpch(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "--bench"))
        return run_bench(argv[2], argc > 3 ? atoi(argv[3]) : 0, argc > 4 ? atoi(argv[4]) : 3);

    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/rf_load_test_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "mkdtemp %s: %s\n", tmpdir, strerror(errno));
        return 2;
    }
    test_types_and_line_ends();
    test_empty_and_header();
    test_bad_data();
    test_files();
    test_threads();
    test_csv();
    test_float_specials();
    test_csv_errors();
    test_missing_named();
    test_csv_threads();
    test_ranges();
    test_shrunk();
    for (int i = 0; i < nmade; i++) {
        unlink(made[i]);
        free(made[i]);
    }
    rmdir(tmpdir);
    printf("test_load: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
