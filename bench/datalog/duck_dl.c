/*
** bench/datalog/duck_dl.c: the Datalog suite's recursive benchmarks that SQL
** can express (tc, sg, reach), in DuckDB as recursive CTEs with UNION (set
** semantics, as Datalog's), on the inputs dlgen writes; the DuckDB column of
** the suite's table (docs/BENCHMARKS.md, issue 26).
**
** Owns: the three queries and their answer in the suite's form: the tuple
** count and the sum of the same per-tuple hash the .logic programs' *_stats
** outputs total, so the answers compare with redfox's and Soufflé's.
**
** libduckdb.so is loaded with dlopen (as bench/duckdb/tpch_duck.c does), so
** no DuckDB header is needed:
**   cc -O2 -o duck_dl bench/datalog/duck_dl.c -ldl
**   ./duck_dl LIBDUCKDB.so tc|sg|reach DATA_DIR [THREADS]
** prints "BENCH tuples N hashsum S load L s query Q s".
*/
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../duckdb/duck_api.h" /* the parts of duckdb.h used here */

static int (*d_open)(const char *, duckdb_database *);
static int (*d_connect)(duckdb_database, duckdb_connection *);
static int (*d_query)(duckdb_connection, const char *, duckdb_result *);
static void (*d_destroy)(duckdb_result *);
static const char *(*d_error)(duckdb_result *);
static char *(*d_value_varchar)(duckdb_result *, uint64_t, uint64_t);
static void (*d_free)(void *);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Runs sql; with want, prints the first row's two columns. 1 when it ran. */
static int run(duckdb_connection c, const char *sql, char out[2][64])
{
    duckdb_result r;
    memset(&r, 0, sizeof r);
    int st = d_query(c, sql, &r);
    if (st != 0) fprintf(stderr, "duck_dl: %s\n", d_error(&r) ? d_error(&r) : "error");
    for (int i = 0; st == 0 && out && i < 2; i++) {
        char *v = d_value_varchar(&r, (uint64_t)i, 0);
        snprintf(out[i], 64, "%s", v ? v : "NULL");
        d_free(v);
    }
    d_destroy(&r);
    return st == 0;
}

/* The per-tuple hash of the .logic programs' stats, over columns a and b. */
#define HASH(a, b)                                                                                                   \
    "((xor(((xor(" a " * 1000003, " b ") & 2147483647) * 1640531527), "                                             \
    "(((xor(" a " * 1000003, " b ") & 2147483647) * 1640531527) >> 31))) & 2147483647)"

static const char *const query_tc =
    "WITH RECURSIVE path(x, y) AS (SELECT x, y FROM edge UNION SELECT p.x, e.y FROM path p JOIN edge e ON p.y = e.x) "
    "SELECT count(*), sum(" HASH("x", "y") ") FROM path";
static const char *const query_sg =
    "WITH RECURSIVE sg(x, y) AS (SELECT e1.y, e2.y FROM edge e1 JOIN edge e2 ON e1.x = e2.x WHERE e1.y <> e2.y "
    "UNION SELECT e1.y, e2.y FROM sg JOIN edge e1 ON e1.x = sg.x JOIN edge e2 ON e2.x = sg.y) "
    "SELECT count(*), sum(" HASH("x", "y") ") FROM sg";
static const char *const query_reach =
    "WITH RECURSIVE reach(s, y) AS (SELECT e.x, e.y FROM source JOIN edge e ON e.x = source.s "
    "UNION SELECT r.s, e.y FROM reach r JOIN edge e ON r.y = e.x) "
    "SELECT count(*), sum(" HASH("s", "y") ") FROM reach";

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: duck_dl LIBDUCKDB.so tc|sg|reach DATA_DIR [THREADS]\n");
        return 2;
    }
    const char *bench = argv[2], *dir = argv[3], *threads = argc > 4 ? argv[4] : "2";
    const char *query = !strcmp(bench, "tc") ? query_tc : !strcmp(bench, "sg") ? query_sg
                                                        : !strcmp(bench, "reach") ? query_reach
                                                                                  : NULL;
    if (!query) {
        fprintf(stderr, "duck_dl: unknown benchmark %s (tc, sg or reach)\n", bench);
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "duck_dl: %s\n", dlerror());
        return 1;
    }
    *(void **)&d_open = dlsym(h, "duckdb_open");
    *(void **)&d_connect = dlsym(h, "duckdb_connect");
    *(void **)&d_query = dlsym(h, "duckdb_query");
    *(void **)&d_destroy = dlsym(h, "duckdb_destroy_result");
    *(void **)&d_error = dlsym(h, "duckdb_result_error");
    *(void **)&d_value_varchar = dlsym(h, "duckdb_value_varchar");
    *(void **)&d_free = dlsym(h, "duckdb_free");
    if (!d_open || !d_connect || !d_query || !d_destroy || !d_error || !d_value_varchar || !d_free) {
        fprintf(stderr, "duck_dl: %s lacks the C API\n", argv[1]);
        return 1;
    }
    duckdb_database db;
    duckdb_connection c;
    if (d_open(NULL, &db) != 0 || d_connect(db, &c) != 0) {
        fprintf(stderr, "duck_dl: cannot open an in-memory database\n");
        return 1;
    }
    char sql[4096];
    snprintf(sql, sizeof sql, "SET threads = %s", threads);
    if (!run(c, sql, NULL)) return 1;
    double t0 = now();
    snprintf(sql, sizeof sql,
             "CREATE TABLE edge AS SELECT * FROM read_csv('%s/edge.facts', delim = '\t', header = false, "
             "columns = {'x': 'BIGINT', 'y': 'BIGINT'})",
             dir);
    if (!run(c, sql, NULL)) return 1;
    if (!strcmp(bench, "reach")) {
        snprintf(sql, sizeof sql,
                 "CREATE TABLE source AS SELECT * FROM read_csv('%s/source.facts', delim = '\t', header = false, "
                 "columns = {'s': 'BIGINT'})",
                 dir);
        if (!run(c, sql, NULL)) return 1;
    }
    double t1 = now();
    char out[2][64];
    if (!run(c, query, out)) return 1;
    double t2 = now();
    printf("%s tuples %s hashsum %s load %.3f s query %.3f s\n", bench, out[0], out[1], t1 - t0, t2 - t1);
    return 0;
}
