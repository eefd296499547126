/*
** bench/txn/tpcb/tpcb_duck.c: the TPC-B-style batch applied by DuckDB, the
** comparison beside `redfox exec` in bench/txn/tpcb/run.sh.
**
** Owns: the DuckDB side of the benchmark: the bank of tpcb_gen's OUTDIR
** loaded into a DuckDB database file, the batch applied in one transaction,
** and the end state printed as tpcb.logic's outputs print with
** `redfox exec --format tbl` (so that run.sh compares the two with cmp),
** every account's balance in OUTDIR/duck_accounts.tbl (`a|v`).
** libduckdb.so is loaded with dlopen, as bench/duckdb/tpch_duck.c does, so
** no DuckDB header or library is needed to build it:
**   cc -O2 -o tpcb_duck bench/txn/tpcb/tpcb_duck.c -ldl
**   tpcb_duck LIBDUCKDB.so OUTDIR bulk|prepared [THREADS [BATCHES]]
**   (THREADS 0 or none: DuckDB's default)
** bulk: the batch read into a temporary table, then one UPDATE ... FROM of
**   the per-key sums of its deltas for each of account, teller and branch,
**   and one INSERT into the history (TPC-B's updates only add, so they
**   commute: summing per key first gives the state of applying them one by
**   one; DuckDB's fastest honest way).
** prepared: each transaction as TPC-B states it, three UPDATEs and an INSERT
**   through prepared statements, all in one transaction (the classic way).
** BATCHES K > 1 (tpcb_gen's K successive batches, batch_1.tbl to
**   batch_K.tbl): each batch its own transaction, one after another on the
**   one open database, a timing line each ("duckdb: batch K of N ...").
** Timings go to stderr: "duckdb: ... batch X ms" (BEGIN to COMMIT, the batch
** file's reading included) and the whole process's (open to close), each
** with the CPU time of all its threads.
*/
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../duckdb/duck_api.h" /* the parts of duckdb.h used here */

static int (*d_open)(const char *, duckdb_database *);
static void (*d_close)(duckdb_database *);
static int (*d_connect)(duckdb_database, duckdb_connection *);
static void (*d_disconnect)(duckdb_connection *);
static int (*d_query)(duckdb_connection, const char *, duckdb_result *);
static void (*d_destroy)(duckdb_result *);
static const char *(*d_error)(duckdb_result *);
static uint64_t (*d_row_count)(duckdb_result *);
static int64_t (*d_value_int64)(duckdb_result *, uint64_t, uint64_t);
static int (*d_prepare)(duckdb_connection, const char *, duckdb_prepared_statement *);
static const char *(*d_prepare_error)(duckdb_prepared_statement);
static int (*d_bind_int64)(duckdb_prepared_statement, uint64_t, int64_t);
static int (*d_execute_prepared)(duckdb_prepared_statement, duckdb_result *);
static void (*d_destroy_prepare)(duckdb_prepared_statement *);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* CPU seconds of this process so far, every thread (the machine may be
** shared: wall time then overstates the work). */
static double cpu_now(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "tpcb_duck: %s: %s\n", what, why ? why : "error");
    exit(1);
}

static void run(duckdb_connection c, const char *sql)
{
    duckdb_result r;
    memset(&r, 0, sizeof r);
    if (d_query(c, sql, &r) != 0) die(sql, d_error(&r));
    d_destroy(&r);
}

/* Prints a query's rows (every column a BIGINT) as `|`-separated lines
** under "NAME (N rows)" and the column names, as redfox prints an output. */
static void print_query(duckdb_connection c, const char *name, const char *cols, const char *sql, int first)
{
    duckdb_result r;
    memset(&r, 0, sizeof r);
    if (d_query(c, sql, &r) != 0) die(sql, d_error(&r));
    uint64_t n = d_row_count(&r);
    printf("%s%s (%" PRIu64 " row%s)\n%s\n", first ? "" : "\n", name, n, n == 1 ? "" : "s", cols);
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t k = 0; k < r.column_count; k++)
            printf("%" PRId64 "%s", d_value_int64(&r, k, i), k + 1 < r.column_count ? "|" : "\n");
    d_destroy(&r);
}

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) die("dlsym", name);
    return p;
}

static void load_api(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW);
    if (!lib) die(path, dlerror());
    *(void **)&d_open = sym(lib, "duckdb_open");
    *(void **)&d_close = sym(lib, "duckdb_close");
    *(void **)&d_connect = sym(lib, "duckdb_connect");
    *(void **)&d_disconnect = sym(lib, "duckdb_disconnect");
    *(void **)&d_query = sym(lib, "duckdb_query");
    *(void **)&d_destroy = sym(lib, "duckdb_destroy_result");
    *(void **)&d_error = sym(lib, "duckdb_result_error");
    *(void **)&d_row_count = sym(lib, "duckdb_row_count");
    *(void **)&d_value_int64 = sym(lib, "duckdb_value_int64");
    *(void **)&d_prepare = sym(lib, "duckdb_prepare");
    *(void **)&d_prepare_error = sym(lib, "duckdb_prepare_error");
    *(void **)&d_bind_int64 = sym(lib, "duckdb_bind_int64");
    *(void **)&d_execute_prepared = sym(lib, "duckdb_execute_prepared");
    *(void **)&d_destroy_prepare = sym(lib, "duckdb_destroy_prepare");
}

static duckdb_prepared_statement prepare(duckdb_connection c, const char *sql)
{
    duckdb_prepared_statement p = NULL;
    if (d_prepare(c, sql, &p) != 0) die(sql, d_prepare_error(p));
    return p;
}

/* The batch, one transaction at a time through prepared statements. */
static int64_t apply_prepared(duckdb_connection c, const char *batch)
{
    static const char *sql[4] = {
        "UPDATE account SET abalance = abalance + $2 WHERE aid = $1",
        "UPDATE teller SET tbalance = tbalance + $2 WHERE tid = $1",
        "UPDATE branch SET bbalance = bbalance + $2 WHERE bid = $1",
        "INSERT INTO history VALUES ($1, $2, $3, $4, $5)",
    };
    duckdb_prepared_statement st[4];
    for (int k = 0; k < 4; k++) st[k] = prepare(c, sql[k]);
    FILE *f = fopen(batch, "r");
    if (!f) die(batch, "cannot read");
    int64_t v[5], n = 0;
    while (fscanf(f, "%" SCNd64 "|%" SCNd64 "|%" SCNd64 "|%" SCNd64 "|%" SCNd64 "\n", &v[0], &v[1], &v[2], &v[3], &v[4]) == 5) {
        for (int k = 0; k < 4; k++) {
            if (k < 3) {
                d_bind_int64(st[k], 1, v[k + 1]);
                d_bind_int64(st[k], 2, v[4]);
            } else {
                for (int j = 0; j < 5; j++) d_bind_int64(st[k], (uint64_t)j + 1, v[j]);
            }
            duckdb_result r;
            memset(&r, 0, sizeof r);
            if (d_execute_prepared(st[k], &r) != 0) die(sql[k], d_error(&r));
            d_destroy(&r);
        }
        n++;
    }
    fclose(f);
    for (int k = 0; k < 4; k++) d_destroy_prepare(&st[k]);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 6 || (strcmp(argv[3], "bulk") && strcmp(argv[3], "prepared"))) {
        fprintf(stderr, "usage: tpcb_duck LIBDUCKDB.so OUTDIR bulk|prepared [THREADS [BATCHES]]\n");
        return 2;
    }
    const char *dir = argv[2];
    int bulk = !strcmp(argv[3], "bulk");
    int nbatches = argc > 5 ? atoi(argv[5]) : 1;
    if (nbatches < 1 || nbatches > 10000) die(argv[5], "BATCHES must be in [1, 10000]");
    load_api(argv[1]);
    char dbfile[4096], sql[8192], batch[4096];
    snprintf(dbfile, sizeof dbfile, "%s/duck.db", dir);
    unlink(dbfile);
    snprintf(sql, sizeof sql, "%s.wal", dbfile);
    unlink(sql);

    /* The bank before the batch, loaded and checkpointed (not timed). */
    duckdb_database db = NULL;
    duckdb_connection c = NULL;
    double t0 = now();
    if (d_open(dbfile, &db) != 0 || d_connect(db, &c) != 0) die(dbfile, "cannot open");
    if (argc > 4 && atoi(argv[4]) > 0) {
        snprintf(sql, sizeof sql, "SET threads = %d", atoi(argv[4]));
        run(c, sql);
    }
    static const char *tables[][3] = {
        {"account", "aid BIGINT PRIMARY KEY, bid BIGINT, abalance BIGINT", "account.tbl"},
        {"teller", "tid BIGINT PRIMARY KEY, bid BIGINT, tbalance BIGINT", "teller.tbl"},
        {"branch", "bid BIGINT PRIMARY KEY, bbalance BIGINT", "branch.tbl"},
        {"history", "hid BIGINT PRIMARY KEY, aid BIGINT, tid BIGINT, bid BIGINT, delta BIGINT", "txn.tbl"},
    };
    for (int i = 0; i < 4; i++) {
        snprintf(sql, sizeof sql, "CREATE TABLE %s (%s)", tables[i][0], tables[i][1]);
        run(c, sql);
        snprintf(sql, sizeof sql, "%s/data/%s", dir, tables[i][2]);
        struct stat fs;
        if (stat(sql, &fs) == 0 && fs.st_size == 0) continue; /* the empty history: read_csv refuses it */
        snprintf(sql, sizeof sql,
                 "INSERT INTO %s SELECT * FROM read_csv('%s/data/%s', delim = '|', header = false, "
                 "columns = {%s})",
                 tables[i][0], dir, tables[i][2],
                 i == 0   ? "'aid': 'BIGINT', 'bid': 'BIGINT', 'abalance': 'BIGINT'"
                 : i == 1 ? "'tid': 'BIGINT', 'bid': 'BIGINT', 'tbalance': 'BIGINT'"
                 : i == 2 ? "'bid': 'BIGINT', 'bbalance': 'BIGINT'"
                          : "'hid': 'BIGINT', 'aid': 'BIGINT', 'tid': 'BIGINT', 'bid': 'BIGINT', 'delta': 'BIGINT'");
        run(c, sql);
    }
    run(c, "CHECKPOINT");
    d_disconnect(&c);
    d_close(&db);
    double t_load = now() - t0;

    /* The timed part: open, the batch in one transaction, close. */
    t0 = now();
    double c0 = cpu_now();
    if (d_open(dbfile, &db) != 0 || d_connect(db, &c) != 0) die(dbfile, "cannot open");
    if (argc > 4 && atoi(argv[4]) > 0) {
        snprintf(sql, sizeof sql, "SET threads = %d", atoi(argv[4]));
        run(c, sql);
    }
    double t1 = now(), c1 = cpu_now();
    int64_t n = 0;
    for (int k = 1; k <= nbatches; k++) {
        if (nbatches > 1) snprintf(batch, sizeof batch, "%s/batch_%d.tbl", dir, k);
        else snprintf(batch, sizeof batch, "%s/batch.tbl", dir);
        double tb = now(), cb = cpu_now();
        int64_t nb = 0;
        run(c, "BEGIN TRANSACTION");
        if (bulk) {
            snprintf(sql, sizeof sql,
                     "CREATE TEMP TABLE batch AS SELECT * FROM read_csv('%s', delim = '|', header = false, columns = "
                     "{'hid': 'BIGINT', 'aid': 'BIGINT', 'tid': 'BIGINT', 'bid': 'BIGINT', 'delta': 'BIGINT'})",
                     batch);
            run(c, sql);
            run(c, "UPDATE account SET abalance = abalance + s.d FROM (SELECT aid, sum(delta)::BIGINT AS d FROM batch "
                   "GROUP BY aid) s WHERE account.aid = s.aid");
            run(c, "UPDATE teller SET tbalance = tbalance + s.d FROM (SELECT tid, sum(delta)::BIGINT AS d FROM batch "
                   "GROUP BY tid) s WHERE teller.tid = s.tid");
            run(c, "UPDATE branch SET bbalance = bbalance + s.d FROM (SELECT bid, sum(delta)::BIGINT AS d FROM batch "
                   "GROUP BY bid) s WHERE branch.bid = s.bid");
            run(c, "INSERT INTO history SELECT * FROM batch");
            duckdb_result r;
            memset(&r, 0, sizeof r);
            if (d_query(c, "SELECT count(*) FROM batch", &r) != 0) die("count", d_error(&r));
            nb = d_value_int64(&r, 0, 0);
            d_destroy(&r);
            run(c, "DROP TABLE batch");
        } else {
            nb = apply_prepared(c, batch);
        }
        run(c, "COMMIT");
        n += nb;
        double tw = now() - tb, cw = cpu_now() - cb;
        if (nbatches > 1)
            fprintf(stderr, "duckdb: batch %d of %d: %" PRId64 " transactions (%s) %.1f ms (cpu %.1f ms), %.0f txn/s\n", k,
                    nbatches, nb, argv[3], tw * 1e3, cw * 1e3, nb / tw);
    }
    double t2 = now(), c2 = cpu_now();
    d_disconnect(&c);
    d_close(&db);
    double t3 = now(), c3 = cpu_now();
    fprintf(stderr,
            "duckdb: load %.1f ms; batch of %" PRId64 " (%s) %.1f ms (cpu %.1f ms), %.0f txn/s; "
            "whole (open, batch, close) %.1f ms (cpu %.1f ms), %.0f txn/s\n",
            t_load * 1e3, n, argv[3], (t2 - t1) * 1e3, (c2 - c1) * 1e3, n / (t2 - t1), (t3 - t0) * 1e3, (c3 - c0) * 1e3,
            n / (t3 - t0));

    /* The state after it, as tpcb.logic's outputs (not timed). */
    if (d_open(dbfile, &db) != 0 || d_connect(db, &c) != 0) die(dbfile, "cannot open");
    print_query(c, "teller_balance", "t|v", "SELECT tid, tbalance FROM teller ORDER BY 1", 1);
    print_query(c, "violation", "b|w|x",
                "SELECT * FROM (SELECT b.bid, b.bbalance AS w, sum(t.tbalance)::BIGINT AS x FROM branch b JOIN teller t "
                "USING (bid) GROUP BY b.bid, b.bbalance UNION ALL SELECT -1, (SELECT sum(bbalance) FROM branch)::BIGINT, "
                "(SELECT sum(abalance) FROM account)::BIGINT) WHERE w != x ORDER BY 1",
                0);
    print_query(c, "branch_state", "b|v|s",
                "SELECT b.bid, b.bbalance, sum(a.abalance)::BIGINT FROM branch b JOIN account a USING (bid) "
                "GROUP BY b.bid, b.bbalance ORDER BY 1",
                0);
    print_query(c, "account_checksum", "s", "SELECT sum((aid % 1000 + 1) * abalance)::BIGINT FROM account", 0);
    snprintf(sql, sizeof sql,
             "COPY (SELECT aid, abalance FROM account ORDER BY aid) TO '%s/duck_accounts.tbl' (HEADER false, DELIMITER '|')",
             dir);
    run(c, sql);
    d_disconnect(&c);
    d_close(&db);
    return 0;
}
