/*
** examples/api/example.c: redfox as a C library (include/redfox.h).
** Transitive closure over edges given from memory, then, when given a
** TPC-H data folder and query files, a TPC-H query over that folder.
**
**   cc example.c $(pkg-config --cflags --libs redfox) -o example
**   ./example examples/api [DATA_DIR SCHEMA.logic QUERY.logic]
**
** Prints each output as CSV, as `redfox run --format csv` does.
*/
#include <redfox.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, const char *msg)
{
    fprintf(stderr, "example: %s: %s\n", what, msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 5) return fail("usage", "example API_DIR [DATA_DIR SCHEMA.logic QUERY.logic]");

    /* 1. Transitive closure: the rows of edge.csv, given from memory. */
    char path[4096];
    snprintf(path, sizeof path, "%s/tc.logic", argv[1]);
    const char *files[1] = {path};
    rf_program *tc = NULL;
    if (rf_compile_files(files, 1, &tc) != REDFOX_OK) return fail("compile", rf_program_errmsg(tc));
    static const int64_t from[] = {1, 2, 3, 4, 5}, to[] = {2, 3, 4, 2, 6};
    const void *cols[2] = {from, to};
    const int types[2] = {REDFOX_INT, REDFOX_INT};
    rf_database *mem = NULL;
    if (rf_open(NULL, &mem) != REDFOX_OK) return fail("open", rf_errmsg(mem));
    if (rf_database_put_rows(mem, "edge", 2, types, 5, cols) != REDFOX_OK) return fail("put", rf_errmsg(mem));
    rf_run_options opt;
    rf_run_options_init(&opt);
    opt.device = REDFOX_DEVICE_CPU;
    rf_result *res = NULL;
    if (rf_run(mem, tc, &opt, &res) != REDFOX_OK) return fail("run", rf_errmsg(mem));
    int32_t out = rf_result_find(res, "reach");
    printf("%s,%s\n", rf_result_column_name(res, out, 0), rf_result_column_name(res, out, 1));
    for (int64_t r = 0; r < rf_result_rows(res, out); r++)
        printf("%lld,%lld\n", (long long)rf_result_int(res, out, 0, r), (long long)rf_result_int(res, out, 1, r));
    rf_result_free(res);
    rf_program_free(tc);
    rf_close(mem);
    if (argc == 2) return 0;

    /* 2. A TPC-H query over a folder of .tbl files: the schema and the query
    ** compile as one program; each output printed as CSV text. */
    rf_database *db = NULL;
    if (rf_open(argv[2], &db) != REDFOX_OK) return fail("open", rf_errmsg(db));
    const char *query[2] = {argv[3], argv[4]};
    rf_program *q = NULL;
    if (rf_compile_files(query, 2, &q) != REDFOX_OK) return fail("compile", rf_program_errmsg(q));
    if (rf_run(db, q, &opt, &res) != REDFOX_OK) return fail("run", rf_errmsg(db));
    for (int32_t i = 0; i < rf_result_count(res); i++) {
        char *text = NULL;
        if (rf_result_text(res, i, REDFOX_FORMAT_CSV, &text, NULL) != REDFOX_OK) return fail("text", "out of memory");
        printf("\n%s", text);
        rf_free(text);
    }
    rf_result_free(res);
    rf_program_free(q);
    rf_close(db);
    return 0;
}
