/*
** api/tests/test_api_exec.c: transactions through the library (API level
** 4), through redfox.h only: rf_exec applies batches given as rows in
** memory, as text and as a file to a redfox database (made by `redfox
** import`, api/tests/run_exec_api.sh), and after each one the outputs it
** returns equal a from-scratch rf_run of the same program over the
** database's new state; the report says what was maintained; a failed batch
** (a key violation, a derived predicate, wrong types) changes nothing, on
** disk and in the relations a handle keeps between its transactions; a
** run after a transaction on a handle that keeps its inputs sees it; a
** batch's file parsed ahead for the program (level 7) is taken by rf_exec,
** its errors reported there.
**
** Owns: the checks of rf_batch_*, rf_exec and rf_result_exec_*.
** Usage: test_api_exec DB PROG.logic cpu|gpu WORKDIR
*/
#include "redfox.h"
#include "test_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Output name of res as its CSV rows, sorted, one string (free it). */
static char *sorted_rows(const rf_result *res, const char *name)
{
    int32_t i = rf_result_find(res, name);
    if (i < 0) return NULL;
    char *text = NULL;
    if (rf_result_text(res, i, REDFOX_FORMAT_CSV, &text, NULL)) return NULL;
    int64_t n = 0, cap = 16;
    char **lines = malloc((size_t)cap * sizeof *lines);
    for (char *s = strtok(text, "\n"); s; s = strtok(NULL, "\n")) {
        if (n == cap) lines = realloc(lines, (size_t)(cap *= 2) * sizeof *lines);
        lines[n++] = s;
    }
    qsort(lines, (size_t)n, sizeof *lines, cmp_str);
    size_t len = 1;
    for (int64_t k = 0; k < n; k++) len += strlen(lines[k]) + 1;
    char *out = malloc(len), *p = out;
    for (int64_t k = 0; k < n; k++) p += sprintf(p, "%s\n", lines[k]);
    *p = 0;
    free(lines);
    rf_free(text);
    return out;
}

/* The outputs of a from-scratch run over the database now equal res's. */
static void check_against_run(rf_database *db, const rf_program *prog, const rf_result *res, int device, const char *what)
{
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = device;
    rf_result *fresh = NULL;
    int rc = rf_run(db, prog, &o, &fresh);
    if (rc) fprintf(stderr, "%s: run: %s\n", what, rf_errmsg(db));
    CHECK(rc == REDFOX_OK);
    if (rc) return;
    CHECK(rf_result_count(fresh) == rf_result_count(res));
    CHECK(rf_result_exec_derived_count(fresh) == 0); /* a run reports no transaction */
    for (int32_t i = 0; i < rf_result_count(fresh); i++) {
        const char *name = rf_result_name(fresh, i);
        char *a = sorted_rows(fresh, name), *b = sorted_rows(res, name);
        CHECK(a && b && !strcmp(a, b));
        if (a && b && strcmp(a, b)) fprintf(stderr, "%s: output %s differs:\nrun:\n%sexec:\n%s", what, name, a, b);
        CHECK(rf_result_columns(fresh, i) == rf_result_columns(res, i));
        for (int32_t c = 0; c < rf_result_columns(res, i); c++)
            CHECK(!strcmp(rf_result_column_name(fresh, i, c), rf_result_column_name(res, i, c)));
        free(a);
        free(b);
    }
    rf_result_free(fresh);
}

static int64_t rows_of(const rf_result *res, const char *name)
{
    int32_t i = rf_result_find(res, name);
    return i < 0 ? -1 : rf_result_rows(res, i);
}

static int log_count(void *user, const void *bytes, int64_t n)
{
    (void)bytes;
    *(int64_t *)user += n;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: test_api_exec DB PROG.logic cpu|gpu WORKDIR\n");
        return 2;
    }
    const char *dbdir = argv[1], *path = argv[2], *work = argv[4];
    int device = !strcmp(argv[3], "gpu") ? REDFOX_DEVICE_GPU : REDFOX_DEVICE_CPU;
    CHECK(rf_api_level() >= 4);
    rf_program *prog = NULL;
    int rc = rf_compile_files(&path, 1, &prog);
    if (rc) {
        fprintf(stderr, "compile: %s\n", rf_program_errmsg(prog));
        return 1;
    }
    rf_database *db = NULL;
    CHECK(rf_open(dbdir, &db) == REDFOX_OK);
    rf_exec_options o;
    rf_exec_options_init(&o, sizeof o);
    o.device = device;
    o.threads = 2;

    /* 1. no batch: the first exec computes and stores the derived predicates;
    ** the settings' cache_dir holds for the whole transaction: the run's
    ** placement record (the CPU) or the emulator's code lands there (its
    ** path once pointed into a copy freed before the run, and went astray) */
    char cache[4096], settings[4200];
    snprintf(cache, sizeof cache, "%s/cache", work);
    snprintf(settings, sizeof settings, "cache_dir=%s,gpu_trace=off,hugepages=on", cache);
    o.settings = settings;
    rf_result *res = NULL;
    rc = rf_exec(db, prog, NULL, &o, &res);
    o.settings = NULL;
    struct stat sb;
    CHECK(stat(cache, &sb) == 0 && S_ISDIR(sb.st_mode));
    if (rc) fprintf(stderr, "exec 1: %s\n", rf_errmsg(db));
    CHECK(rc == REDFOX_OK && res);
    CHECK(rf_result_exec_incremental(res) == 0);
    CHECK(rf_result_exec_why(res) && strstr(rf_result_exec_why(res), "first exec"));
    CHECK(rf_result_exec_inserted(res) == 0 && rf_result_exec_deleted(res) == 0);
    CHECK(rf_result_exec_derived_count(res) == 2);
    int64_t before = -1, after = -1;
    const char *stored = NULL;
    const char *dname = rf_result_exec_derived(res, 0, &before, &after, &stored);
    CHECK(dname && !strcmp(dname, "path") && after == rows_of(res, "path") && stored && !strcmp(stored, "written"));
    CHECK(rf_result_exec_derived(res, 2, NULL, NULL, NULL) == NULL);
    CHECK(rf_result_exec_profile(res) == NULL); /* not asked for */
    int64_t paths0 = rows_of(res, "path");
    CHECK(paths0 > 0);
    if (res) check_against_run(db, prog, res, device, "exec 1");
    rf_result_free(res);

    /* 2. rows inserted from memory (strings, a functional predicate's values):
    ** maintained incrementally, the profile and the log asked for */
    rf_batch *b = rf_batch_new();
    CHECK(b != NULL);
    const char *src[] = {"d", "e", "x\"q"}, *dst[] = {"e", "a", "d"};
    int st2[] = {REDFOX_STRING, REDFOX_STRING};
    const void *ecols[] = {src, dst};
    CHECK(rf_batch_insert(b, "edge", 2, st2, 3, ecols) == REDFOX_OK);
    const char *wk[] = {"x\"q"};
    int64_t wv[] = {42};
    int wt[] = {REDFOX_STRING, REDFOX_INT};
    const void *wcols[] = {wk, wv};
    CHECK(rf_batch_insert(b, "weight", 2, wt, 1, wcols) == REDFOX_OK);
    int64_t logged = 0;
    o.profile = 1;
    o.show_programs = 1;
    o.log = log_count;
    o.log_user = &logged;
    res = NULL;
    rc = rf_exec(db, prog, b, &o, &res);
    if (rc) fprintf(stderr, "exec 2: %s\n", rf_errmsg(db));
    CHECK(rc == REDFOX_OK && res);
    CHECK(rf_result_exec_incremental(res) == 1 && rf_result_exec_why(res) == NULL);
    CHECK(rf_result_exec_inserted(res) == 4 && rf_result_exec_deleted(res) == 0);
    CHECK(rf_result_exec_profile(res) && strstr(rf_result_exec_profile(res), "maintained incrementally"));
    CHECK(logged > 0); /* the delta rules' and the outputs' programs */
    CHECK(rows_of(res, "path") > paths0);
    if (res) check_against_run(db, prog, res, device, "exec 2");
    rf_result_free(res);
    rf_batch_free(b);
    o.profile = o.show_programs = 0;
    o.log = NULL;

    /* 3. deletions from memory and a text: DRed, then inserts */
    b = rf_batch_new();
    const char *ds[] = {"d"}, *dd[] = {"e"};
    const void *dcols[] = {ds, dd};
    CHECK(rf_batch_delete(b, "edge", 2, st2, 1, dcols) == REDFOX_OK);
    const char *text = "// a text batch\n+edge(\"q\", \"r\").\n-weight[\"x\\\"q\"] = 42.\n+weight[\"x\\\"q\"] = 7.\n";
    CHECK(rf_batch_add_text(b, "t3", text, -1) == REDFOX_OK);
    res = NULL;
    rc = rf_exec(db, prog, b, &o, &res);
    if (rc) fprintf(stderr, "exec 3: %s\n", rf_errmsg(db));
    CHECK(rc == REDFOX_OK && res);
    CHECK(rf_result_exec_incremental(res) == 1);
    CHECK(rf_result_exec_inserted(res) == 2 && rf_result_exec_deleted(res) == 2);
    if (res) check_against_run(db, prog, res, device, "exec 3");
    rf_result_free(res);
    rf_batch_free(b);

    /* 4. a transaction file, and --recompute's way */
    char fpath[4096];
    snprintf(fpath, sizeof fpath, "%s/b4.txn", work);
    FILE *f = fopen(fpath, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("+edge(\"r\", \"s\").\n+edge(\"s\", \"q\").\n", f);
        fclose(f);
    }
    b = rf_batch_new();
    CHECK(rf_batch_add_file(b, fpath) == REDFOX_OK);
    o.recompute = 1;
    res = NULL;
    rc = rf_exec(db, prog, b, &o, &res);
    if (rc) fprintf(stderr, "exec 4: %s\n", rf_errmsg(db));
    CHECK(rc == REDFOX_OK && res);
    CHECK(rf_result_exec_incremental(res) == 0 && rf_result_exec_why(res) && !strcmp(rf_result_exec_why(res), "--recompute"));
    if (res) check_against_run(db, prog, res, device, "exec 4");
    int64_t paths4 = res ? rows_of(res, "path") : -1;
    rf_result_free(res);
    rf_batch_free(b);
    o.recompute = 0;

    /* 5. failures change nothing: a key violation (weight of "a" is held),
    ** a derived predicate, wrong types, an unknown predicate, a bad file */
    const char *ka[] = {"a"};
    int64_t kv[] = {99};
    const void *kcols[] = {ka, kv};
    const void *pcols[] = {ds, dd};
    int64_t ints[] = {1};
    const void *icols[] = {ints, ints};
    int it[] = {REDFOX_INT, REDFOX_INT};
    struct {
        const char *what, *expect;
    } bad[] = {{"key", "<rows inserted into weight>:1:1: key violation"},
               {"derived", "is derived by the program's rules"},
               {"types", "column 1 (src) of `edge` is string; the rows give int"},
               {"unknown", "unknown predicate `nosuch`"},
               {"file", "cannot read the transaction file"}};
    for (int k = 0; k < 5; k++) {
        b = rf_batch_new();
        CHECK(rf_batch_insert(b, "edge", 2, st2, 1, ecols) == REDFOX_OK); /* applied only with the rest */
        if (k == 0) CHECK(rf_batch_insert(b, "weight", 2, wt, 1, kcols) == REDFOX_OK);
        if (k == 1) CHECK(rf_batch_insert(b, "path", 2, st2, 1, pcols) == REDFOX_OK);
        if (k == 2) CHECK(rf_batch_insert(b, "edge", 2, it, 1, icols) == REDFOX_OK);
        if (k == 3) CHECK(rf_batch_delete(b, "nosuch", 2, st2, 1, pcols) == REDFOX_OK);
        if (k == 4) CHECK(rf_batch_add_file(b, "/nonexistent/b.txn") == REDFOX_OK);
        res = NULL;
        rc = rf_exec(db, prog, b, &o, &res);
        CHECK(rc == REDFOX_ERROR && res == NULL);
        CHECK(strstr(rf_errmsg(db), bad[k].expect) != NULL);
        if (!strstr(rf_errmsg(db), bad[k].expect)) fprintf(stderr, "%s: got \"%s\"\n", bad[k].what, rf_errmsg(db));
        rf_batch_free(b);
    }
    res = NULL; /* the state is exec 4's */
    rc = rf_exec(db, prog, NULL, &o, &res);
    CHECK(rc == REDFOX_OK && res && rows_of(res, "path") == paths4 && rf_result_exec_incremental(res) == 1);
    if (res) check_against_run(db, prog, res, device, "after the failures");
    rf_result_free(res);

    /* 8. inputs kept between runs (rf_database_keep_inputs) on the handle
    ** that commits: the next run sees the commit (it answered from the rows
    ** kept before the transaction), a failed transaction keeps them */
    {
        CHECK(rf_database_keep_inputs(db, 1) == REDFOX_OK);
        rf_run_options ro;
        rf_run_options_init_v2(&ro, sizeof ro);
        ro.device = device;
        rf_result *kept = NULL;
        CHECK(rf_run(db, prog, &ro, &kept) == REDFOX_OK); /* keeps the state before */
        int64_t paths_before = kept ? rows_of(kept, "path") : -1;
        rf_result_free(kept);
        b = rf_batch_new();
        const char *ks[] = {"k1", "k2"}, *kd[] = {"k2", "k3"};
        const void *kcols8[] = {ks, kd};
        CHECK(rf_batch_insert(b, "edge", 2, st2, 2, kcols8) == REDFOX_OK);
        res = NULL;
        rc = rf_exec(db, prog, b, &o, &res);
        if (rc) fprintf(stderr, "exec 8: %s\n", rf_errmsg(db));
        CHECK(rc == REDFOX_OK && res && rows_of(res, "path") > paths_before);
        if (res) check_against_run(db, prog, res, device, "exec 8, kept inputs");
        rf_result_free(res);
        rf_batch_free(b);
        CHECK(rf_database_keep_inputs(db, 0) == REDFOX_OK);
    }

    /* 7. the relations kept in memory between the transactions of one
    ** handle: a transaction starts from them (the profile says so), a
    ** failure after the batch's rows were staged past their ends leaves
    ** them at the last commit, and a commit through another handle (as by
    ** another process) makes the next one read the tables again; each
    ** transaction's outputs equal a from-scratch run */
    {
        const char *ftext = "edge(src, dst) -> string(src), string(dst).\n"
                            "lang:input[`edge] = \"edge.csv\".\n"
                            "lang:input:delimiter[`edge] = \",\".\n"
                            "next[x] = y <- edge(x, y).\n"
                            "lang:output[`next] = \"next\".\n";
        rf_program *fp = NULL;
        rc = rf_compile(ftext, -1, "next.logic", &fp);
        if (rc) fprintf(stderr, "compile next.logic: %s\n", rf_program_errmsg(fp));
        CHECK(rc == REDFOX_OK);
        rf_database *other = NULL;
        CHECK(rf_open(dbdir, &other) == REDFOX_OK);
        o.profile = 1;
        /* the edges so far give next[] one value each; "m" has none */
        const char *steps[] = {"+edge(\"m\", \"n\").\n",      /* kept from here on */
                               "+edge(\"n\", \"o\").\n",      /* from the kept relations */
                               "+edge(\"m\", \"p\").\n",      /* two values for next[m]: fails in the run */
                               "+edge(\"o\", \"w\").\n",      /* the failed rows are not there */
                               "+edge(\"w\", \"z\").\n",      /* (through the other handle) */
                               "+edge(\"z\", \"y\").\n"};     /* the tables read again */
        for (int k = 0; fp && k < 6; k++) {
            rf_database *h = k == 4 ? other : db;
            b = rf_batch_new();
            CHECK(rf_batch_add_text(b, "step", steps[k], -1) == REDFOX_OK);
            res = NULL;
            rc = rf_exec(h, fp, b, &o, &res);
            rf_batch_free(b);
            if (k == 2) {
                CHECK(rc == REDFOX_ERROR && res == NULL && strstr(rf_errmsg(h), "functional dependency"));
                continue;
            }
            if (rc) fprintf(stderr, "exec 7.%d: %s\n", k, rf_errmsg(h));
            CHECK(rc == REDFOX_OK && res);
            if (!res) continue;
            const char *prof = rf_result_exec_profile(res);
            int kept = prof && strstr(prof, "started from the relations the last transaction of this process kept");
            CHECK(kept == (k == 1 || k == 3));
            if (kept != (k == 1 || k == 3)) fprintf(stderr, "exec 7.%d: kept %d:\n%s", k, kept, prof ? prof : "");
            char what[32];
            snprintf(what, sizeof what, "exec 7.%d", k);
            check_against_run(h, fp, res, device, what);
            rf_result_free(res);
        }
        o.profile = 0;
        rf_close(other);
        rf_program_free(fp);
    }

    /* 9. a batch's file parsed ahead for the program (level 7): rf_exec takes
    ** the parse (its strings interned then: the outputs equal a run's); with
    ** another program, or applied again, the file is parsed by rf_exec; a bad
    ** line is reported by rf_exec, naming it, and nothing changes */
    {
        CHECK(rf_api_level() >= 7);
        char p9[4200], bad9[4200];
        snprintf(p9, sizeof p9, "%s/b9.txn", work);
        snprintf(bad9, sizeof bad9, "%s/bad9.txn", work);
        FILE *f9 = fopen(p9, "w");
        CHECK(f9 != NULL);
        if (f9) {
            fputs("+edge(\"p9\", \"q9\").\n+edge(\"q9\", \"a\").\n-edge(\"nowhere\", \"b\").\n", f9);
            fclose(f9);
        }
        f9 = fopen(bad9, "w");
        CHECK(f9 != NULL);
        if (f9) {
            fputs("+edge(\"r9\", \"s9\").\n+edge(\"s9\").\n", f9);
            fclose(f9);
        }
        rf_program *other = NULL;
        CHECK(rf_compile_files(&path, 1, &other) == REDFOX_OK);
        o.profile = 1;
        for (int k = 0; k < 4; k++) {
            /* 0: parsed ahead and taken; 1: parsed for another program; 2:
            ** bad; 3: the same batch as 0 applied again (nothing new) */
            b = rf_batch_new();
            CHECK(rf_batch_add_file(b, k == 2 ? bad9 : p9) == REDFOX_OK);
            CHECK(rf_batch_parse_ahead(b, k == 1 ? other : prog, 2) == REDFOX_OK);
            res = NULL;
            rc = rf_exec(db, prog, b, &o, &res);
            if (k == 3 && !rc) { /* (once more: the parse served the first rf_exec) */
                const char *prof = rf_result_exec_profile(res);
                CHECK(prof && strstr(prof, "parsed ahead on that thread"));
                rf_result_free(res);
                res = NULL;
                rc = rf_exec(db, prog, b, &o, &res);
            }
            rf_batch_free(b);
            if (k == 2) {
                CHECK(rc == REDFOX_ERROR && res == NULL && strstr(rf_errmsg(db), "bad9.txn:2:"));
                if (!rc || !strstr(rf_errmsg(db), "bad9.txn:2:")) fprintf(stderr, "exec 9.2: %s\n", rf_errmsg(db));
                continue;
            }
            if (rc) fprintf(stderr, "exec 9.%d: %s\n", k, rf_errmsg(db));
            CHECK(rc == REDFOX_OK && res);
            if (!res) continue;
            const char *prof = rf_result_exec_profile(res);
            int ahead = prof && strstr(prof, "parsed ahead on that thread, once read: 1 file");
            CHECK(ahead == (k == 0));
            if (ahead != (k == 0)) fprintf(stderr, "exec 9.%d: parsed ahead %d:\n%s", k, ahead, prof ? prof : "");
            char what[32];
            snprintf(what, sizeof what, "exec 9.%d", k);
            check_against_run(db, prog, res, device, what);
            int32_t pi = rf_result_find(res, "path");
            char *rows = pi >= 0 ? sorted_rows(res, "path") : NULL;
            CHECK(rows && strstr(rows, "p9,a") && !strstr(rows, "r9")); /* (the bad batch changed nothing) */
            free(rows);
            rf_result_free(res);
        }
        o.profile = 0;
        rf_program_free(other);
    }

    /* 6. misuse: bad arguments of the batch and of rf_exec */
    b = rf_batch_new();
    CHECK(rf_batch_insert(b, NULL, 2, st2, 1, ecols) == REDFOX_MISUSE && *rf_batch_errmsg(b));
    int badt[] = {REDFOX_STRING, 99};
    CHECK(rf_batch_insert(b, "edge", 2, badt, 1, ecols) == REDFOX_MISUSE);
    const char *badutf[] = {"\xff"};
    const void *ucols[] = {badutf, dst};
    /* bad values as rf_database_put_rows reports them: bad data REDFOX_ERROR,
    ** a NULL string REDFOX_MISUSE, rows counted from 1 (they were from 0,
    ** all MISUSE, a NULL "not a valid UTF-8 string") */
    CHECK(rf_batch_insert(b, "edge", 2, st2, 1, ucols) == REDFOX_ERROR &&
          !strcmp(rf_batch_errmsg(b), "rf_batch_insert: edge: column 1, row 1: not valid UTF-8"));
    const char *nulls[] = {"a", NULL}, *twos[] = {"b", "c"};
    const void *ncols[] = {twos, nulls};
    CHECK(rf_batch_insert(b, "edge", 2, st2, 2, ncols) == REDFOX_MISUSE &&
          !strcmp(rf_batch_errmsg(b), "rf_batch_insert: edge: column 2, row 2: a NULL string"));
    int32_t dates[] = {0, 99999999};
    int dt[] = {REDFOX_DATE};
    const void *dcols8[] = {dates};
    CHECK(rf_batch_delete(b, "day", 1, dt, 2, dcols8) == REDFOX_ERROR &&
          !strcmp(rf_batch_errmsg(b), "rf_batch_delete: day: column 1, row 2: not a valid date"));
    CHECK(rf_database_put_rows(db, "day", 1, dt, 2, dcols8) == REDFOX_ERROR &&
          !strcmp(rf_errmsg(db), "day: column 1, row 2: not a valid date")); /* the same words */
    CHECK(rf_batch_add_file(b, NULL) == REDFOX_MISUSE);
    CHECK(rf_batch_add_text(b, NULL, "", 0) == REDFOX_OK && *rf_batch_errmsg(b) == 0);
    CHECK(rf_exec(db, NULL, b, &o, &res) == REDFOX_MISUSE && res == NULL);
    CHECK(rf_exec(NULL, prog, b, &o, &res) == REDFOX_MISUSE);
    rf_exec_options bado;
    memset(&bado, 0, sizeof bado);
    CHECK(rf_exec(db, prog, b, &bado, &res) == REDFOX_MISUSE && *rf_errmsg(db));
    /* rf_exec_wait with no commit ending: REDFOX_OK, the failed call's
    ** message kept (as redfox.h says; `redfox exec --each` reads it after) */
    CHECK(rf_exec_wait(db) == REDFOX_OK && strstr(rf_errmsg(db), "rf_exec_options_init"));
    /* threads beyond 1024 (the tools' bound): REDFOX_MISUSE naming them (it
    ** was REDFOX_NOMEM, "out of memory", for 100000) */
    rf_exec_options many = o;
    many.threads = 100000;
    CHECK(rf_exec(db, prog, NULL, &many, &res) == REDFOX_MISUSE && res == NULL &&
          strstr(rf_errmsg(db), "threads 100000: at most 1024"));
    CHECK(rf_batch_parse_ahead(b, prog, 100000) == REDFOX_MISUSE && strstr(rf_batch_errmsg(b), "at most 1024"));
    /* a start later than the call (another clock's, 1e18) or NaN: refused
    ** (the profile said "compile -999999999999924371456.000 ms") */
    rf_exec_options late = o;
    late.start = 1e18;
    CHECK(rf_exec(db, prog, NULL, &late, &res) == REDFOX_MISUSE && res == NULL &&
          strstr(rf_errmsg(db), "is not a time of rf_trace_clock() before the call"));
    late.start = NAN;
    CHECK(rf_exec(db, prog, NULL, &late, &res) == REDFOX_MISUSE && res == NULL);
    rf_batch_free(b);
    rf_batch_free(NULL);
    CHECK(rf_result_exec_incremental(NULL) == 0 && rf_result_exec_profile(NULL) == NULL);
    /* a folder that is no database */
    rf_database *notdb = NULL;
    rf_open(work, &notdb);
    CHECK(rf_exec(notdb, prog, NULL, &o, &res) == REDFOX_ERROR && strstr(rf_errmsg(notdb), "not a redfox database"));
    rf_close(notdb);

    rf_close(db);
    rf_program_free(prog);
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    else printf("ok\n");
    return failures ? 1 : 0;
}
