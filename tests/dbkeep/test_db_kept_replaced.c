/*
** tests/dbkeep/test_db_kept_replaced.c REDFOX: a database handle that keeps
** its inputs (rf_database_keep_inputs) while another process replaces the
** database (`redfox import` over it).
**
** Owns: two cases of the library reading a database another process writes.
** 1. A first run keeps one column of a 5000-row table; the table is then
** imported again with 3 rows; a second run on the same handle reading
** another column of it read that column from the new database under the kept
** rows' count (5000 rows of a 3-row column: a crash, or rows of two states
** mixed). It must be an error naming the change instead, and after the kept
** inputs are forgotten the new rows must be read.
** 2. rf_run reads a database under its shared lock, as `redfox run` does:
** while another process holds the folder's exclusive lock (a commit or an
** import replacing it), the run waits (it read files of a database being
** replaced: "checksum mismatch").
*/
#include "redfox.h"
#include "test_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *schema = "t(a, b) -> int(a), int(b).\n"
                            "lang:input[`t] = \"t.tbl\".\n";

static rf_program *compile(const char *body)
{
    char src[1024];
    snprintf(src, sizeof src, "%s%s", schema, body);
    rf_program *p = NULL;
    if (rf_compile(src, -1, "t.logic", &p) != REDFOX_OK) {
        fprintf(stderr, "compile: %s\n", rf_program_errmsg(p));
        failures++;
    }
    return p;
}

/* t.tbl of n rows (i, 10 i) in dir/data, imported into dir/db by REDFOX. */
static int import_rows(const char *redfox, const char *dir, int n)
{
    char path[600], cmd[2400];
    snprintf(path, sizeof path, "%s/data/t.tbl", dir);
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    for (int i = 1; i <= n; i++) fprintf(f, "%d|%d|\n", i, 10 * i);
    if (fclose(f) != 0) return 0;
    snprintf(path, sizeof path, "%s/t.logic", dir);
    if (!(f = fopen(path, "w"))) return 0;
    fputs(schema, f);
    if (fclose(f) != 0) return 0;
    snprintf(cmd, sizeof cmd, "'%s' import '%s/t.logic' --data '%s/data' --out '%s/db' 2>/dev/null", redfox, dir, dir,
             dir);
    return system(cmd) == 0;
}

/* The single int of output 0 of a run of p on db; -1 when it failed. */
static long long run_one(rf_database *db, rf_program *p)
{
    rf_run_options o;
    rf_run_options_init(&o);
    o.device = REDFOX_DEVICE_CPU;
    rf_result *res = NULL;
    long long v = -1;
    if (rf_run(db, p, &o, &res) == REDFOX_OK && rf_result_rows(res, 0) == 1)
        v = *(const int64_t *)rf_result_column_data(res, 0, 0);
    rf_result_free(res);
    return v;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Case 2: a child holds dbdir's exclusive lock for a second; a run started
** meanwhile ends after it, with the rows. */
static void run_waits_for_writer(const char *dbdir, rf_program *p, long long want)
{
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(dbdir, O_RDONLY);
        int ok = fd >= 0 && flock(fd, LOCK_EX) == 0;
        if (write(ready[1], ok ? "1" : "0", 1) != 1) _exit(1);
        usleep(1000 * 1000);
        _exit(ok ? 0 : 1);
    }
    char c = 0;
    CHECK(pid > 0 && read(ready[0], &c, 1) == 1 && c == '1');
    rf_database *db = NULL;
    CHECK(rf_open(dbdir, &db) == REDFOX_OK);
    double t0 = now();
    CHECK(run_one(db, p) == want);
    CHECK(now() - t0 >= 0.7); /* it waited for the writer */
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    rf_close(db);
    close(ready[0]);
    close(ready[1]);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    char dir[256], data[300];
    snprintf(dir, sizeof dir, "%s/rf_db_kept_%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    snprintf(data, sizeof data, "%s/data", dir);
    CHECK(mkdir(dir, 0777) == 0 && mkdir(data, 0777) == 0);
    CHECK(import_rows(argv[1], dir, 5000));
    rf_program *count_a = compile("o(n) <- agg<<n = count()>> t(a, _).\nlang:output[`o] = \"o\".\n");
    rf_program *total_b = compile("o(s) <- agg<<s = total(b)>> t(_, b).\nlang:output[`o] = \"o\".\n");
    char dbdir[300];
    snprintf(dbdir, sizeof dbdir, "%s/db", dir);
    rf_database *db = NULL;
    CHECK(rf_open(dbdir, &db) == REDFOX_OK);
    CHECK(rf_database_keep_inputs(db, 1) == REDFOX_OK);
    CHECK(run_one(db, count_a) == 5000);
    CHECK(import_rows(argv[1], dir, 3)); /* another process replaces the database */
    CHECK(run_one(db, total_b) == -1);
    CHECK(strstr(rf_errmsg(db), "the database changed") != NULL);
    /* forgotten: the new rows (10 + 20 + 30) */
    CHECK(rf_database_keep_inputs(db, 0) == REDFOX_OK && rf_database_keep_inputs(db, 1) == REDFOX_OK);
    CHECK(run_one(db, total_b) == 60);
    CHECK(run_one(db, count_a) == 3);
    rf_close(db);
    run_waits_for_writer(dbdir, count_a, 3);
    rf_program_free(count_a);
    rf_program_free(total_b);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) failures++;
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    else printf("ok\n");
    return failures ? 1 : 0;
}
