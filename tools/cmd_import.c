/*
** tools/cmd_import.c: `redfox import`: a program's input files into a redfox
** database (docs/DATABASE.md), which `--data` then reads instead of text.
**
** Owns: the command line, its usage text and its exit statuses; the work is
** tools/db_import.c's.
*/
#include "db_import.h"
#include "pipeline.h"
#include "rf_db.h"
#include "rf_file.h"
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *usage =
    "usage: redfox import PROG.logic|PROG.rfx [--data DIR] --out DB [--threads N] [--block-rows N]\n"
    "                     [--strings auto|dict|plain] [--narrow on|off] [--text-block BYTES]\n"
    "                     [--profile]\n"
    "\n"
    "Reads the input files that the program's lang:input declarations name\n"
    "(from DIR, as `redfox run` would) and writes them as a redfox database\n"
    "DB: typed column files, one string dictionary per column (or the plain\n"
    "strings, for a column of mostly distinct strings), per-block min/max and\n"
    "checksums (docs/DATABASE.md). `redfox run --data DB` then reads\n"
    "only the columns a program uses. Declared keys (lang:input:key) are\n"
    "checked here, once. A .logic program contributes every input it declares;\n"
    "a .rfx program the inputs it reads. DB is written under a temporary name\n"
    "and renamed into place when complete: an existing database there is\n"
    "replaced, anything else is left alone. A SIGINT, SIGTERM or SIGHUP\n"
    "before that rename stops the import at its next block, table or commit\n"
    "(or its wait for DB's lock): the temporary folder is removed and DB is\n"
    "left as it was; one during the rename lets it end (DB complete); either\n"
    "way that is said and the process ends by the signal (status 130, 143,\n"
    "129). Only SIGKILL or a crash leaves the temporary folder DB.tmp.PID.N,\n"
    "which the next import or exec of DB removes once its process is gone\n"
    "and none of its files changed for ten minutes.\n"
    "\n"
    "options:\n"
    "  --data DIR    where the input files are (default: .): text, not a\n"
    "                database\n"
    "  --out DB      the database to write\n"
    "  --threads N   threads for each stage: parsing, writing the columns,\n"
    "                checking keys, which overlap (default: all cores); the\n"
    "                database is the same, byte for byte, for any N (1 to\n"
    "                1024; over four times the cores and 64: a note)\n"
    "  --profile     print where the time went to stderr, wall clock and CPU\n"
    "                summed over threads: reading the files, parsing, string\n"
    "                dictionaries and column files, ending the columns, key\n"
    "                checks, syncing and renaming (the phases overlap); how\n"
    "                many keys held by the rows' order; what the reading\n"
    "                thread waited for; the bytes written to the database's\n"
    "                files, and the time in write calls and in starting the\n"
    "                disk's writeback\n"
    "  --block-rows N  rows per min/max block, a power of two (default 65536;\n"
    "                smaller blocks let range filters skip finer)\n"
    "  --strings M   how string columns are stored: auto (default: plain when\n"
    "                at least 90% of a column's first 4096 rows are distinct,\n"
    "                else a dictionary; chosen on the first --text-block of a\n"
    "                file, so on its rows where it holds fewer, and a\n"
    "                dictionary under 256), dict (always a dictionary) or plain\n"
    "                (never one); answers are the same either way\n"
    "  --narrow on|off  on (default): int, decimal, date and string-code\n"
    "                columns stored per block at the width their values need\n"
    "                (the block's minimum, a power of ten, 1, 2 or 4 bytes a\n"
    "                value; about half the bytes to write and read), widened\n"
    "                when read; off: every value at its type's width, which\n"
    "                readers map as it is (format 3 either way)\n"
    "  --text-block BYTES  text parsed at a time, whole records (default 64M):\n"
    "                bytes with an optional K, M, G or T suffix (powers of 1024,\n"
    "                as --gpu-memory); memory grows with it, and much smaller\n"
    "                blocks cost time; the database's rows are the same (a\n"
    "                string column's storage may not: see --strings)\n"
    "  -h, --help    this text\n";

int rf_tool_import(int argc, char **argv)
{
    const char *progs[256];
    int32_t nprogs = 0;
    const char *data = ".", *out = NULL, *threads_s = NULL, *block_s = NULL, *strings_s = NULL, *text_s = NULL,
               *narrow_s = NULL;
    int profile = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return RF_EXIT_OK;
        }
        if (!strcmp(a, "--profile")) {
            profile = 1;
            continue;
        }
        if ((m = rf_tool_opt_value("import", argc, argv, &i, "--data", &data)) ||
            (m = rf_tool_opt_out("import", argc, argv, &i, "--out", &out)) ||
            (m = rf_tool_opt_value("import", argc, argv, &i, "--threads", &threads_s)) ||
            (m = rf_tool_opt_value("import", argc, argv, &i, "--block-rows", &block_s)) ||
            (m = rf_tool_opt_value("import", argc, argv, &i, "--strings", &strings_s)) ||
            (m = rf_tool_opt_value("import", argc, argv, &i, "--narrow", &narrow_s)) ||
            (m = rf_tool_opt_value("import", argc, argv, &i, "--text-block", &text_s))) {
            if (m < 0) return RF_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            return rf_tool_unknown_option("import", a, usage);
        } else if (nprogs == 256) {
            return rf_tool_usage_error("import", "too many files (at most 256)");
        } else {
            progs[nprogs++] = a;
        }
    }
    if (!nprogs) return rf_tool_usage_error("import", "no program given");
    if (!out || !out[0]) return rf_tool_usage_error("import", "--out DB is required");
    int threads = 0;
    if (threads_s && !rf_tool_threads("import", threads_s, &threads)) return RF_EXIT_USAGE;
    int64_t block_rows = 0;
    if (block_s && (!rf_tool_parse_int(block_s, 1, INT64_C(1) << 30, &block_rows) || (block_rows & (block_rows - 1))))
        return rf_tool_usage_error("import", "--block-rows takes a power of two from 1 to 2^30");
    int64_t text_block = 0;
    if (text_s && (!rf_parse_bytes(text_s, &text_block) || text_block > INT64_C(1) << 40))
        return rf_tool_usage_error("import", "--text-block takes a size in bytes from 1 to 1T with an optional K, M, G "
                                             "or T suffix (like 64M), not '%s'", text_s);
    int strings = RF_IMPORT_STRINGS_AUTO;
    if (strings_s) {
        if (!strcmp(strings_s, "dict")) strings = RF_IMPORT_STRINGS_DICT;
        else if (!strcmp(strings_s, "plain")) strings = RF_IMPORT_STRINGS_PLAIN;
        else if (strcmp(strings_s, "auto"))
            return rf_tool_usage_error("import", "--strings takes auto, dict or plain, not '%s'", strings_s);
    }
    if (narrow_s && strcmp(narrow_s, "on") && strcmp(narrow_s, "off"))
        return rf_tool_usage_error("import", "--narrow takes on or off, not '%s'", narrow_s);
    struct stat sb;
    if (stat(data, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "redfox import: the data folder '%s' %s\n", data,
                stat(data, &sb) == 0 ? "is not a folder" : "does not exist");
        return RF_EXIT_USER;
    }
    /* import reads text: a database given as --data was read as a folder of
    ** text files, whose error then said the folder had no manifest */
    if (rf_db_is_database(data)) {
        rf_diags md; /* (a manifest that links to nothing: said as such) */
        rf_diags_init(&md);
        rf_status mst = rf_db_check_manifest(data, &md);
        int mrc = mst ? rf_tool_finish(mst, &md) : 0;
        rf_diags_free(&md);
        if (mrc) return mrc;
        fprintf(stderr,
                "redfox import: the data folder '%s' is a redfox database (it holds manifest.rfdb): import reads the "
                "text files a program declares; run, tpch run and tpch bench read a database with --data\n",
                data);
        return RF_EXIT_USER;
    }
    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_fe_program *fe = NULL;
    rf_qp_program *qp = NULL;
    rf_hir_program *hir = NULL;
    rf_tool_opts to = {.inputs_only = 1};
    rf_status st;
    if (nprogs == 1 && rf_tool_is_rfx(progs[0])) st = rf_tool_read_rfx(progs[0], &hir, NULL, NULL, &d);
    else st = rf_tool_compile_logic(progs, nprogs, &to, &arena, &fe, &qp, NULL, &d);
    rf_import_table *tabs = NULL;
    int32_t ntabs = 0;
    if (!st) st = rf_import_tables_of(fe, hir, &arena, &tabs, &ntabs);
    if (!st && ntabs == 0) {
        rf_error(&d, rf_mkloc(progs[0], 0, 0), "the program declares no input (lang:input): nothing to import");
        st = RF_EUSER;
    }
    /* the text folder read under its shared lock, against `tpch gen`
    ** putting new tables in place between two files (rf_file.h); taken
    ** before the temporary folder exists (a signal during the wait ends the
    ** import at once), released before the commit, which may lock --out
    ** (the same folder, once) */
    int datalock = -1, waited = 0;
    if (!st) st = rf_file_lock_text_folder_shared(data, &datalock, &waited, &d);
    /* from the temporary folder's creation to its removal or rename, a
    ** SIGINT, SIGTERM or SIGHUP is held (its handler can remove files, not
    ** a folder): the import stops at its next block, table or commit, the
    ** folder goes, and the process ends by the signal below; one that comes
    ** during the commit lets it end */
    rf_file_hold_signals();
    rf_importer *imp = NULL;
    if (!st) st = rf_import_new(out, (int)threads, isatty(STDERR_FILENO), &imp, &d);
    if (!st && block_rows) rf_import_block_rows(imp, (uint32_t)block_rows);
    if (!st) rf_import_strings(imp, strings);
    if (!st && narrow_s) rf_import_narrow(imp, !strcmp(narrow_s, "on"));
    if (!st) rf_import_text_block(imp, text_block);
    /* every table first (the database lists them in the program's order),
    ** then the files, the largest first: a table's end and key check run
    ** beside the next file's parsing, so the last, least overlapped, is
    ** the smallest */
    int32_t *tids = st ? NULL : rf_calloc((size_t)ntabs, sizeof *tids);
    int64_t *sizes = st ? NULL : rf_calloc((size_t)ntabs, sizeof *sizes);
    int32_t *order = st ? NULL : rf_calloc((size_t)ntabs, sizeof *order);
    char **paths = st ? NULL : rf_calloc((size_t)ntabs, sizeof *paths);
    if (!st && (!tids || !sizes || !order || !paths)) st = RF_ENOMEM;
    /* per table, its file's place in the order read (for a failure's report) */
    int32_t *place = st ? NULL : rf_calloc((size_t)ntabs, sizeof *place);
    if (!st && !place) st = RF_ENOMEM;
    int32_t nfiles = 0;
    for (int32_t i = 0; i < ntabs && !st; i++) {
        st = rf_import_add(imp, &tabs[i], &tids[i], &d);
        if (st) break;
        int32_t first = -1;
        for (int32_t j = 0; j < i && first < 0; j++)
            if (!strcmp(tabs[j].file, tabs[i].file)) first = j;
        place[i] = first; /* (a second predicate of the same file: its first's, below) */
        if (first >= 0) continue;
        if (!(paths[i] = rf_sprintf("%s/%s", data, tabs[i].file))) st = RF_ENOMEM;
        sizes[i] = paths[i] && stat(paths[i], &sb) == 0 && S_ISREG(sb.st_mode) ? (int64_t)sb.st_size : 0;
        int32_t k = nfiles++;
        for (; k > 0 && sizes[order[k - 1]] < sizes[i]; k--) order[k] = order[k - 1];
        order[k] = i;
    }
    int64_t count0 = d.count, nerrors0 = d.nerrors;
    int32_t failed_at = -1; /* the file being read when the import failed; nfiles: the commit */
    for (int32_t k = 0; k < nfiles && !st; k++) {
        int32_t i = order[k];
        st = rf_import_file(imp, tids[i], paths[i], &d);
        if (!st) st = rf_import_end(imp, tids[i], &d); /* its dictionaries' memory back as the next file goes */
        if (st) failed_at = k;
    }
    rf_file_unlock(datalock);
    if (!st) {
        st = rf_import_commit(imp, &d);
        if (st) failed_at = nfiles;
    }
    /* the error a text run would give: the files went largest first, the
    ** run reads in the program's order. Known good: the files read before
    ** the one before the failure (a failure at file k is k's own, or the
    ** end of k - 1 still checking its keys beside it) */
    if (st && failed_at >= 0 && st != RF_ENOMEM && !rf_file_signal_held()) {
        uint8_t *good = rf_calloc((size_t)ntabs, 1);
        uint8_t *opened = rf_calloc((size_t)ntabs, 1);
        int32_t *at = rf_calloc((size_t)ntabs, sizeof *at);
        if (good && opened && at) {
            for (int32_t k = 0; k < nfiles; k++) at[order[k]] = k;
            for (int32_t i = 0; i < ntabs; i++) {
                int32_t k = at[place[i] >= 0 ? place[i] : i];
                good[i] = k < failed_at - 1;
                opened[i] = k <= failed_at; /* a FIFO's turn not reached: still unread */
            }
            st = rf_import_first_error(tabs, ntabs, data, good, opened, (int)threads, &d, count0, nerrors0, st);
        }
        free(good);
        free(opened);
        free(at);
    }
    for (int32_t i = 0; paths && i < ntabs; i++) free(paths[i]);
    free(paths);
    free(place);
    free(order);
    free(sizes);
    free(tids);
    if (profile && imp) {
        rf_import_times t;
        rf_import_get_times(imp, &t);
        fprintf(stderr,
                "import profile: %.1f MB of text in %.3f s wall, %.3f s CPU; phases overlap (a block parses while the one "
                "before is written, a table's keys are checked while the next parses), each: wall s / CPU s\n"
                "  read %.3f; parse %.3f / %.3f (CPU: all the rest); dictionaries and column files %.3f / %.3f "
                "(dictionaries %.3f, column files %.3f); ending columns %.3f / %.3f; key checks %.3f / %.3f (CPU: "
                "the checking thread); sync and rename %.3f / %.3f\n"
                "  keys: %d held by the rows' order (compared as blocks are written: %.3f s CPU), %d read back and "
                "grouped; finding record ends %.3f / %.3f (the reading thread)\n"
                "  the reading thread waited %.3f s for block columns being written, %.3f s for table ends\n"
                "  files: %.1f MB written (%.0f MB/s of the import's wall); write calls %.3f / %.3f, starting the "
                "disk's writeback %.3f / %.3f (summed over the writing threads; wall well above CPU: they waited, for "
                "the disk where it sets the pace, or for a core)\n",
                (double)t.bytes / 1e6, t.wall, t.cpu, t.read.wall, t.parse.wall, t.parse.cpu, t.columns.wall,
                t.columns.cpu, t.encode.cpu, t.append.cpu, t.end.wall, t.end.cpu, t.keys.wall, t.keys.cpu,
                t.commit.wall, t.commit.cpu, (int)t.keys_ordered, t.order.cpu, (int)t.keys_grouped, t.cuts.wall,
                t.cuts.cpu, t.wait_columns, t.wait_end, (double)t.written / 1e6,
                t.wall > 0 ? (double)t.written / 1e6 / t.wall : 0.0, t.write.wall, t.write.cpu, t.writeback.wall,
                t.writeback.cpu);
    }
    rf_import_free(imp); /* (the temporary folder removed, unless committed) */
    rf_file_release_signals();
    int sig = rf_file_signal_held();
    if (sig && !st)
        rf_diag_add(&d, RF_SEV_NOTE, rf_mkloc(out, 0, 0), "%s came during the commit, which ended: the database is complete",
                    rf_file_signal_name(sig));
    int rc = rf_tool_finish(st, &d);
    rf_qp_free(qp);
    rf_hir_free(hir);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    if (sig) {
        fflush(stderr);
        rf_file_end_by_signal(); /* (status 128 + the signal in a shell) */
    }
    return rc;
}
