/*
** tools/cmd_tpch_gen_db.c: `redfox tpch gen --format db`: the TPC-H tables
** straight into a redfox database, with the schema of tpch/queries/schema.logic.
**
** Owns: the generator's sink (rf_tpch_gen_opts.sink): each chunk of rows the
** generator makes, in file order, is parsed in memory by the text loader's
** parsers and appended to the database's columns (tools/db_import.c), so no
** .tbl file is ever written; the keys schema.logic declares are checked
** before the database is put in place; with --tables, the tables of the
** database already there that are not generated are kept (linked over).
** A SIGINT, SIGTERM or SIGHUP is held while the temporary folder exists
** (tools/db_import.h); the command (tools/cmd_tpch_gen.c) ends by it.
*/
#include "db_import.h"
#include "pipeline.h"
#include "rf_file.h"
#include "rf_tpch_gen.h"
#include "tpch_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct sink_ctx {
    rf_importer *imp;
    const rf_import_table *tabs;
    int32_t ntabs;
    int32_t tid[16];   /* per schema table: the importer's, -1 when not generated */
    char *names[16];   /* "DB/lineitem.tbl", for messages */
    const char *out;
    rf_diags *d;
} sink_ctx;

static rf_status sink(void *ctx, const char *table, const char *data, int64_t len)
{
    sink_ctx *s = ctx;
    size_t tl = strlen(table);
    for (int32_t i = 0; i < s->ntabs; i++) {
        const char *f = s->tabs[i].file;
        if (strncmp(f, table, tl) || strcmp(f + tl, ".tbl")) continue;
        if (s->tid[i] < 0) break;
        return rf_import_text(s->imp, s->tid[i], s->names[i], data, len, s->d);
    }
    rf_internal_error(s->d, rf_mkloc(table, 0, 0), "schema.logic has no table %s.tbl", table);
    return RF_EINTERNAL;
}

/* 1 when file ("lineitem.tbl") is in the --tables list (NULL or "all": every one). */
static int wanted(const char *list, const char *file)
{
    if (!list || !strcmp(list, "all")) return 1;
    size_t fl = strlen(file) - 4; /* without ".tbl" */
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == fl && !strncasecmp(p, file, n)) return 1;
        p += n + (e ? 1 : 0);
    }
    return 0;
}

rf_status rf_tool_tpch_gen_db(rf_tpch_gen_opts *o, rf_diags *d)
{
    const rf_tpch_source *schema = rf_tpch_find_source("schema.logic");
    if (!schema) {
        rf_error(d, rf_mkloc("schema.logic", 0, 0), "not built into this redfox");
        return RF_EINTERNAL;
    }
    rf_arena arena;
    rf_arena_init(&arena);
    rf_fe_program *fe = NULL;
    rf_qp_program *qp = NULL;
    rf_tool_opts to = {0};
    const char *names[1] = {schema->path}, *texts[1] = {schema->text};
    int64_t lens[1] = {schema->len};
    /* the built-in schema's warnings (it has no lang:output: it is read for
    ** its inputs) say nothing a user can act on: only errors and their notes go on */
    rf_diags cd;
    rf_diags_init(&cd);
    rf_status st = rf_tool_compile_sources(names, texts, lens, 1, &to, &arena, &fe, &qp, NULL, &cd);
    for (int64_t i = 0; i < cd.count; i++)
        if (cd.items[i].sev != RF_SEV_WARNING) rf_diag_add(d, cd.items[i].sev, cd.items[i].loc, "%s", cd.items[i].msg);
    rf_diags_free(&cd);
    sink_ctx s;
    memset(&s, 0, sizeof s);
    rf_import_table *tabs = NULL;
    if (!st) st = rf_import_tables_of(fe, NULL, &arena, &tabs, &s.ntabs);
    if (!st && s.ntabs > 16) st = RF_EINTERNAL;
    for (int32_t i = 0; i < 16; i++) s.tid[i] = -1;
    s.tabs = tabs;
    s.out = o->out_dir;
    s.d = d;
    /* held from the temporary folder's creation to its removal or rename
    ** (tools/db_import.h): the caller ends the process by a signal held */
    rf_file_hold_signals();
    if (!st) st = rf_import_new(o->out_dir, o->jobs, 0, &s.imp, d);
    /* the tables in schema order, as `redfox import` of the .tbl files adds
    ** them: the two give the same database, byte for byte; with --tables over
    ** a database, those not generated are kept, as their .tbl files are in
    ** text (the new database replaces the old one whole) */
    for (int32_t i = 0; i < s.ntabs && !st; i++) {
        if (!wanted(o->tables, tabs[i].file)) {
            st = rf_import_carry(s.imp, tabs[i].file, d);
            continue;
        }
        st = rf_import_add(s.imp, &tabs[i], &s.tid[i], d);
        if (!st && !(s.names[i] = rf_sprintf("%s/%s", s.out, tabs[i].file))) st = RF_ENOMEM;
    }
    if (!st) {
        o->sink = sink;
        o->sink_ctx = &s;
        st = rf_tpch_gen(o, d);
    }
    if (!st) st = rf_import_commit(s.imp, d);
    rf_import_free(s.imp); /* (the temporary folder removed, unless committed) */
    rf_file_release_signals();
    for (int32_t i = 0; i < 16; i++) free(s.names[i]);
    rf_qp_free(qp);
    rf_arena_free(&arena);
    return st;
}
