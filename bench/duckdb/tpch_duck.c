/*
** bench/duckdb/tpch_duck.c: the 22 TPC-H validation queries in DuckDB, through
** its C API, on machines without node (the GPU machine): the DuckDB side of the
** comparisons in docs/BENCHMARKS.md. libduckdb.so is loaded with dlopen (the
** one that @duckdb/node-bindings-linux-x64 1.5.6 ships works), so no DuckDB
** headers are needed to build it:
**   cc -O2 -o tpch_duck bench/duckdb/tpch_duck.c -ldl
**   ./tpch_duck LIBDUCKDB.so DATA_DIR SQL_DIR [THREADS] [REPEATS] [DBFILE] [QUERIES] [ANSWERS_DIR]
** Loads the eight dbgen .tbl files into an in-memory database, then prints
** the best of REPEATS runs per query ("q01 197.3 ms") and the total and
** geometric mean, like bench/duckdb/tpch.mjs.
** DBFILE (other than "-") is a DuckDB database file: loaded from DATA_DIR
** when it does not exist, opened as it is when it does (the fresh-process
** comparisons with `redfox run --data DB` in bench/fresh/run.py). With
** QUERIES "load", each table whose DATA_DIR/<table>.tbl exists and that
** DBFILE lacks is added and no query runs: a large scale factor loads one
** table at a time, its text removed before the next is generated.
** QUERIES is a comma-separated list of query numbers ("1,6,18"; default all).
** ANSWERS_DIR, when given, receives each query's result as DuckDB writes it
** (ANSWERS_DIR/qNN.csv: a header line, '|' between fields), the form that
** `redfox tpch run --check ANSWERS_DIR` compares with: the SF 50 answers
** of the out-of-core comparison come from here.
*/
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "duck_api.h" /* the parts of duckdb.h used here */

static int (*d_open)(const char *, duckdb_database *);
static int (*d_connect)(duckdb_database, duckdb_connection *);
static int (*d_query)(duckdb_connection, const char *, duckdb_result *);
static void (*d_destroy)(duckdb_result *);
static const char *(*d_error)(duckdb_result *);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int run(duckdb_connection c, const char *sql)
{
    duckdb_result r;
    memset(&r, 0, sizeof r);
    int st = d_query(c, sql, &r);
    if (st != 0) fprintf(stderr, "duckdb: %s\n", d_error(&r) ? d_error(&r) : "error");
    d_destroy(&r);
    return st == 0;
}

/* Runs a query file's statements, its SELECT copied to path. */
static int answer(duckdb_connection c, const char *text, const char *path)
{
    char *t = strdup(text);
    int ok = t != NULL;
    for (char *st = t; ok && st && *st;) {
        char *end = strchr(st, ';');
        if (end) *end = 0;
        while (*st == ' ' || *st == '\n' || *st == '\t' || *st == '\r') st++;
        if (*st) {
            if (!strncasecmp(st, "select", 6)) {
                size_t n = strlen(st) + strlen(path) + 64;
                char *cp = malloc(n);
                ok = cp != NULL;
                if (ok) {
                    snprintf(cp, n, "COPY (%s) TO '%s' (HEADER, DELIMITER '|', QUOTE '')", st, path);
                    ok = run(c, cp);
                }
                free(cp);
            } else {
                ok = run(c, st);
            }
        }
        st = end ? end + 1 : NULL;
    }
    free(t);
    return ok;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

static const char *tables[][2] = {
    {"nation", "n_nationkey INT, n_name VARCHAR, n_regionkey INT, n_comment VARCHAR"},
    {"region", "r_regionkey INT, r_name VARCHAR, r_comment VARCHAR"},
    {"part", "p_partkey INT, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR, p_type VARCHAR, p_size INT, "
             "p_container VARCHAR, p_retailprice DECIMAL(15,2), p_comment VARCHAR"},
    {"supplier", "s_suppkey INT, s_name VARCHAR, s_address VARCHAR, s_nationkey INT, s_phone VARCHAR, "
                 "s_acctbal DECIMAL(15,2), s_comment VARCHAR"},
    {"partsupp", "ps_partkey INT, ps_suppkey INT, ps_availqty INT, ps_supplycost DECIMAL(15,2), ps_comment VARCHAR"},
    {"customer", "c_custkey INT, c_name VARCHAR, c_address VARCHAR, c_nationkey INT, c_phone VARCHAR, "
                 "c_acctbal DECIMAL(15,2), c_mktsegment VARCHAR, c_comment VARCHAR"},
    {"orders", "o_orderkey INT, o_custkey INT, o_orderstatus VARCHAR, o_totalprice DECIMAL(15,2), o_orderdate DATE, "
               "o_orderpriority VARCHAR, o_clerk VARCHAR, o_shippriority INT, o_comment VARCHAR"},
    {"lineitem", "l_orderkey INT, l_partkey INT, l_suppkey INT, l_linenumber INT, l_quantity DECIMAL(15,2), "
                 "l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2), l_tax DECIMAL(15,2), l_returnflag VARCHAR, "
                 "l_linestatus VARCHAR, l_shipdate DATE, l_commitdate DATE, l_receiptdate DATE, l_shipinstruct VARCHAR, "
                 "l_shipmode VARCHAR, l_comment VARCHAR"},
};

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: tpch_duck LIBDUCKDB.so DATA_DIR SQL_DIR [THREADS] [REPEATS] [DBFILE] [QUERIES] [ANSWERS_DIR]\n");
        return 2;
    }
    const char *threads = argc > 4 ? argv[4] : "2";
    int repeats = argc > 5 ? atoi(argv[5]) : 3;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "tpch_duck: %s\n", dlerror());
        return 1;
    }
    *(void **)&d_open = dlsym(h, "duckdb_open");
    *(void **)&d_connect = dlsym(h, "duckdb_connect");
    *(void **)&d_query = dlsym(h, "duckdb_query");
    *(void **)&d_destroy = dlsym(h, "duckdb_destroy_result");
    *(void **)&d_error = dlsym(h, "duckdb_result_error");
    if (!d_open || !d_connect || !d_query || !d_destroy || !d_error) {
        fprintf(stderr, "tpch_duck: %s lacks the C API\n", argv[1]);
        return 1;
    }
    const char *dbfile = argc > 6 && strcmp(argv[6], "-") != 0 ? argv[6] : NULL;
    int want[23] = {0};
    int add = argc > 7 && strcmp(argv[7], "load") == 0;
    if (!add && argc > 7 && strcmp(argv[7], "all") != 0) {
        for (const char *p = argv[7]; *p;) {
            int q = atoi(p);
            if (q >= 1 && q <= 22) want[q] = 1;
            while (*p && *p != ',') p++;
            if (*p == ',') p++;
        }
    } else if (!add) {
        for (int q = 1; q <= 22; q++) want[q] = 1;
    }
    FILE *probe = dbfile ? fopen(dbfile, "rb") : NULL;
    int load = probe == NULL || add;
    if (probe) fclose(probe);
    duckdb_database db;
    duckdb_connection con;
    double topen = now();
    if (d_open(dbfile, &db) != 0 || d_connect(db, &con) != 0) {
        fprintf(stderr, "tpch_duck: cannot open %s\n", dbfile ? dbfile : "an in-memory database");
        return 1;
    }
    if (!load) printf("open %.3f s\n", now() - topen);
    char sql[4096];
    snprintf(sql, sizeof sql, "SET threads = %s", threads);
    if (!run(con, sql)) return 1;
    double t0 = now();
    for (size_t i = 0; load && i < sizeof tables / sizeof tables[0]; i++) {
        if (add) {
            snprintf(sql, sizeof sql, "%s/%s.tbl", argv[2], tables[i][0]);
            FILE *tbl = fopen(sql, "rb");
            if (!tbl) continue;
            fclose(tbl);
            duckdb_result r;
            memset(&r, 0, sizeof r);
            snprintf(sql, sizeof sql, "SELECT 1 FROM %s LIMIT 0", tables[i][0]);
            int have = d_query(con, sql, &r) == 0;
            d_destroy(&r);
            if (have) continue;
        }
        snprintf(sql, sizeof sql, "CREATE TABLE %s (%s, dummy VARCHAR)", tables[i][0], tables[i][1]);
        if (!run(con, sql)) return 1;
        snprintf(sql, sizeof sql, "COPY %s FROM '%s/%s.tbl' (DELIMITER '|', HEADER false)", tables[i][0], argv[2],
                 tables[i][0]);
        if (!run(con, sql)) return 1;
    }
    if (load) {
        if (dbfile && !run(con, "CHECKPOINT")) return 1;
        printf("load %.2f s\n", now() - t0);
    }
    double total = 0, logsum = 0;
    int nq = 0;
    for (int q = 1; q <= 22; q++) {
        if (!want[q]) continue;
        nq++;
        char path[4096];
        snprintf(path, sizeof path, "%s/q%02d.sql", argv[3], q);
        char *text = slurp(path);
        if (!text) {
            fprintf(stderr, "tpch_duck: cannot read %s\n", path);
            return 1;
        }
        double best = 1e30;
        for (int r = 0; r < repeats; r++) {
            double a = now();
            if (!run(con, text)) return 1;
            double t = (now() - a) * 1e3;
            if (t < best) best = t;
        }
        if (argc > 8) {
            snprintf(path, sizeof path, "%s/q%02d.csv", argv[8], q);
            if (!answer(con, text, path)) return 1;
        }
        free(text);
        total += best;
        logsum += log(best);
        printf("q%02d %.1f ms\n", q, best);
        fflush(stdout);
    }
    if (nq) printf("total %.0f ms, geometric mean %.1f ms\n", total, exp(logsum / nq));
    return 0;
}
