/*
** tpch/check/test_tpch_check.c: unit tests of the answer checker
** (rf_tpch_check): ties, tolerance, headers, missing and extra rows, the
** NULL row, LIMIT cuts, answer files that are no regular file. Run with a
** case name to run that case only.
*/
#include "rf_tpch_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

/* Checks that comparing actual with expected gives want_ok, and, when
** want_msg is not NULL, that the message contains it. */
static void expect(const char *name, const char *actual, const char *expected, const int32_t *order, int32_t norder,
                   int64_t limit, int want_ok, const char *want_msg)
{
    rf_tpch_check_opts o;
    rf_tpch_check_opts_init(&o);
    o.order_cols = order;
    o.norder = norder;
    o.limit = limit;
    rf_tpch_check_result r;
    rf_tpch_check_text(actual, strlen(actual), expected, strlen(expected), &o, &r);
    int bad = r.ok != want_ok || (want_msg && !strstr(r.message, want_msg));
    if (bad) {
        failures++;
        fprintf(stderr, "FAIL %s: ok=%d (wanted %d), message: %s\n", name, r.ok, want_ok, r.message);
    } else {
        printf("ok   %s: %s\n", name, r.message);
    }
}

static void test_equal(void)
{
    static const int32_t ord[] = {0};
    expect("identical", "a|b\n1|x\n2|y\n", "a|b\n1|x\n2|y\n", ord, 1, -1, 1, "2 rows match");
    expect("no trailing newline", "a|b\n1|x\n2|y", "a|b\n1|x\n2|y\n", ord, 1, -1, 1, NULL);
    expect("crlf answer", "a|b\n1|x\n", "a|b\r\n1|x\r\n", ord, 1, -1, 1, NULL);
    expect("wrong order", "a|b\n2|y\n1|x\n", "a|b\n1|x\n2|y\n", ord, 1, -1, 0, "row 1, column 1 (a)");
}

static void test_tolerance(void)
{
    expect("within 0.01", "v\n1.005\n", "v\n1.0\n", NULL, 0, -1, 1, NULL);
    expect("exactly 0.01", "v\n100.01\n", "v\n100\n", NULL, 0, -1, 1, NULL);
    expect("beyond 0.01", "v\n100.0101\n", "v\n100\n", NULL, 0, -1, 0, "expected '100', got '100.0101'");
    expect("formatting", "v|w\n0.50|12\n", "v|w\n.5|12.000\n", NULL, 0, -1, 1, NULL);
    expect("6 vs 17 digits", "v\n25.575155\n", "v\n25.575154611454693\n", NULL, 0, -1, 1, NULL);
    /* beyond double precision: 0.02 apart at 10^15 must still be seen */
    expect("large exact", "v\n1000000000000000.02\n", "v\n1000000000000000.00\n", NULL, 0, -1, 0, NULL);
    expect("large equal", "v\n1000000000000000.01\n", "v\n1000000000000000.00\n", NULL, 0, -1, 1, NULL);
    expect("negative", "v\n-0.005\n", "v\n0.004\n", NULL, 0, -1, 1, NULL);
    expect("text is text", "v\n1995-03-11\n", "v\n1995-03-12\n", NULL, 0, -1, 0, NULL);
    expect("not a number", "v\n1e\n", "v\n1\n", NULL, 0, -1, 0, NULL);
    expect("exponent", "v\n1.5e2\n", "v\n150\n", NULL, 0, -1, 1, NULL);
    if (!rf_tpch_check_fields_equal("0", 1, "0.00", 4, 0.01)) {
        failures++;
        fprintf(stderr, "FAIL fields_equal 0 / 0.00\n");
    }
}

static void test_ties(void)
{
    /* ORDER BY the first column: rows with k = 2 tie and may come in any order */
    static const int32_t ord[] = {0};
    const char *exp = "k|name\n1|a\n2|b\n2|c\n2|d\n3|e\n";
    expect("ties any order", "k|name\n1|a\n2|d\n2|b\n2|c\n3|e\n", exp, ord, 1, -1, 1, NULL);
    expect("ties differ", "k|name\n1|a\n2|d\n2|b\n2|x\n3|e\n", exp, ord, 1, -1, 0, "tie on the ORDER BY columns");
    expect("no tie across groups", "k|name\n1|a\n2|b\n2|c\n3|e\n2|d\n", exp, ord, 1, -1, 0, NULL);
    /* ORDER BY a descending number compared within the tolerance */
    static const int32_t ord2[] = {1};
    expect("numeric ties", "n|v\nx|10.00\ny|10.001\nz|5\n", "n|v\ny|10.0\nx|10\nz|5\n", ord2, 1, -1, 1, NULL);
    /* two ORDER BY columns: a tie needs both */
    static const int32_t ord3[] = {0, 1};
    expect("two keys", "a|b|c\n1|1|p\n1|2|q\n", "a|b|c\n1|2|q\n1|1|p\n", ord3, 2, -1, 0, NULL);
    /* no ORDER BY: the whole result is one multiset */
    expect("no order by", "a\n3\n1\n2\n", "a\n1\n2\n3\n", NULL, 0, -1, 1, NULL);
    /* tolerance forgives reordering that sorting alone would not */
    expect("greedy match", "a|b\n1|0.006\n1|0.000\n", "a|b\n1|0.001\n1|0.010\n", ord, 1, -1, 1, NULL);
}

static void test_limit(void)
{
    /* LIMIT 3 cut the tie group k = 2: which of its rows made it is open */
    static const int32_t ord[] = {0};
    const char *exp = "k|name\n1|a\n2|b\n2|c\n";
    expect("limit cut", "k|name\n1|a\n2|z\n2|b\n", exp, ord, 1, 3, 1, NULL);
    expect("limit cut wrong key", "k|name\n1|a\n2|z\n3|b\n", exp, ord, 1, 3, 0, "tied with");
    expect("no limit: exact set", "k|name\n1|a\n2|z\n2|b\n", exp, ord, 1, -1, 0, NULL);
}

static void test_headers(void)
{
    expect("header name", "a|c\n1|2\n", "a|b\n1|2\n", NULL, 0, -1, 0, "header, column 2: expected 'b', got 'c'");
    expect("header count", "a|b|c\n1|2|3\n", "a|b\n1|2\n", NULL, 0, -1, 0, "expected 2 columns, got 3");
    expect("sql expression name", "c_name|sum_l_quantity\nx|305.00\n", "c_name|sum(l_quantity)\nx|305.00\n", NULL, 0,
           -1, 1, NULL);
    expect("expression name wrong", "c_name|sum_quantity\nx|1\n", "c_name|sum(l_quantity)\nx|1\n", NULL, 0, -1, 0,
           "header");
    expect("row width", "a|b\n1|2|3\n", "a|b\n1|2\n", NULL, 0, -1, 0, "output row 1 has 3 fields");
    expect("empty output", "", "a\n1\n", NULL, 0, -1, 0, "no header row");
}

static void test_rows(void)
{
    static const int32_t ord[] = {0};
    expect("missing row", "a\n1\n2\n", "a\n1\n2\n3\n", ord, 1, -1, 0, "expected 3 rows, got 2; the first missing row is '3'");
    expect("extra row", "a\n1\n2\n3\n", "a\n1\n2\n", ord, 1, -1, 0, "the first extra row is '3'");
    expect("missing and different", "a\n1\n5\n", "a\n1\n2\n3\n", ord, 1, -1, 0, "first difference: row 2");
    expect("no rows both", "a|b\n", "a|b\n", ord, 1, -1, 1, "0 rows match");
    /* SQL's aggregate over no rows is one NULL row; LogiQL derives nothing */
    expect("null row", "avg_yearly\n", "avg_yearly\n\n", NULL, 0, -1, 1, "NULL row");
    expect("null row vs value", "avg_yearly\n1.00\n", "avg_yearly\n\n", NULL, 0, -1, 0, NULL);
}

/* An answer that is a named pipe or /dev/zero: a failure naming why, at
** once (the pipe blocked the check for ever, /dev/zero never ended). */
static void test_files(void)
{
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/rf_tpch_check_%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    if (mkdir(dir, 0777) != 0) {
        failures++;
        return;
    }
    rf_tpch_check_opts o;
    rf_tpch_check_opts_init(&o);
    rf_tpch_check_result r;
    const char *out = "a\n1\n";
    snprintf(path, sizeof path, "%s/fifo.csv", dir);
    if (mkfifo(path, 0666) == 0) {
        int ok = rf_tpch_check_file(out, strlen(out), path, &o, &r);
        if (ok || !strstr(r.message, "not a regular file")) {
            failures++;
            fprintf(stderr, "FAIL named pipe: ok=%d, message: %s\n", ok, r.message);
        }
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/zero.csv", dir);
    if (symlink("/dev/zero", path) == 0) {
        int ok = rf_tpch_check_file(out, strlen(out), path, &o, &r);
        if (ok || !strstr(r.message, "not a regular file")) {
            failures++;
            fprintf(stderr, "FAIL /dev/zero: ok=%d, message: %s\n", ok, r.message);
        }
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/good.csv", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(out, f);
        fclose(f);
        if (!rf_tpch_check_file(out, strlen(out), path, &o, &r)) {
            failures++;
            fprintf(stderr, "FAIL a regular answer: %s\n", r.message);
        }
        unlink(path);
    }
    rmdir(dir);
    printf("ok   answer files\n");
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {{"equal", test_equal},   {"tolerance", test_tolerance}, {"ties", test_ties},
                 {"limit", test_limit},   {"headers", test_headers},     {"rows", test_rows},
                 {"files", test_files}};
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (argc < 2 || !strcmp(argv[1], cases[i].name)) {
            cases[i].fn();
            ran++;
        }
    if (!ran) {
        fprintf(stderr, "unknown case %s\n", argv[1]);
        return 2;
    }
    return failures ? 1 : 0;
}
