/*
** tools/cmd_tpch_gen.c: `redfox tpch gen`, the command line of the TPC-H
** data generator (tpch/gen/).
**
** Owns: argument parsing, the usage text, the progress bar (on stderr, and
** only when stderr is a terminal) and mapping results to exit statuses
** (tools.h): 0 success, 2 bad usage, 1 a file that cannot be written or
** memory running out, 3 an internal error.
*/
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rf_file.h"
#include "rf_tpch_gen.h"
#include "tools.h"

static const char usage[] =
    "usage: redfox tpch gen --sf X --out DIR [--jobs N] [--tables LIST] [--format tbl|db]\n"
    "\n"
    "Writes the TPC-H tables as dbgen 2.14 does, byte for byte, into\n"
    "DIR/<table>.tbl ('|'-separated, one row per line).\n"
    "\n"
    "  --sf X         scale factor, 0.01 to 1000: whole numbers from 1 up,\n"
    "                 multiples of 0.001 below 1 (SF 1 is about 1 GB)\n"
    "  --out DIR      output folder, created if missing (not a redfox\n"
    "                 database, whose readers ignore .tbl files: --format db\n"
    "                 replaces one). The files are written\n"
    "                 aside and renamed into place once all are complete, so a\n"
    "                 failed or killed run leaves the old ones (a SIGINT, SIGTERM\n"
    "                 or SIGHUP during the renames lets them all end, then ends\n"
    "                 the process; a crash or SIGKILL during the renames\n"
    "                 leaves DIR/.redfox-renames listing them, and the next\n"
    "                 redfox reader or writer of DIR makes the rest before\n"
    "                 it reads: never some tables new and some old); a\n"
    "                 second run on the same folder waits (a lock on\n"
    "                 DIR/.redfox.lock); the\n"
    "                 renames wait for the runs reading DIR (run, tpch run,\n"
    "                 tpch bench, import: they hold the folder's lock shared),\n"
    "                 so none reads tables of two generations; a symbolic link\n"
    "                 at DIR/<table>.tbl is refused\n"
    "  --jobs N       worker threads (default: the number of online CPUs);\n"
    "                 the output does not depend on it\n"
    "  --tables LIST  comma-separated tables to write (default: all):\n"
    "                 customer,lineitem,nation,orders,part,partsupp,region,supplier;\n"
    "                 the others already in DIR are kept (--format db: the\n"
    "                 database's other TPC-H tables, linked into the new one;\n"
    "                 tables of other programs are not)\n"
    "  --format F     tbl (default): the .tbl files; db: a redfox database\n"
    "                 (docs/DATABASE.md) with the schema of the TPC-H queries,\n"
    "                 written directly (no text files), for `tpch run --data DIR`,\n"
    "                 in a temporary folder DIR.tmp.PID.N renamed into place when\n"
    "                 complete: a SIGINT, SIGTERM or SIGHUP before that rename\n"
    "                 removes the folder and leaves DIR as it was, one during it\n"
    "                 lets it end; either way the process ends by the signal\n"
    "                 (only SIGKILL or a crash leaves the folder, which the next\n"
    "                 writer of DIR removes once its process is gone and none\n"
    "                 of its files changed for ten minutes)\n"
    "  -h, --help     show this help\n";

/* --format db (tools/cmd_tpch_gen_db.c; the stand-alone test driver has a stub). */
rf_status rf_tool_tpch_gen_db(rf_tpch_gen_opts *o, rf_diags *d);

/* The command prints its messages itself, in the form rf_tool_usage_error
** and rf_tool_finish use, so that it links without redfox.c: the tests run
** it through a stand-alone driver (tpch/gen/tpch_gen_cli_main.c). */
static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "redfox tpch gen: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see `redfox tpch gen --help`)\n");
    return RF_EXIT_USAGE;
}

typedef struct bar {
    int last; /* last percentage drawn, -1 before the first */
} bar;

static void draw_bar(void *ctx, int64_t done, int64_t total)
{
    bar *b = ctx;
    int pct = total > 0 ? (int)(done * 100 / total) : 100;
    if (pct == b->last) return;
    b->last = pct;
    char line[64];
    int fill = pct * 40 / 100;
    memset(line, '#', (size_t)fill);
    memset(line + fill, '.', (size_t)(40 - fill));
    line[40] = 0;
    fprintf(stderr, "\rgenerating [%s] %3d%%", line, pct);
    fflush(stderr);
}

static void say_wait(void *ctx, const char *lock_path)
{
    (void)ctx;
    fprintf(stderr, "redfox tpch gen: waiting for another process writing the folder (it holds %s)\n", lock_path);
}

int rf_tool_tpch_gen(int argc, char **argv)
{
    rf_file_cleanup_on_signals(); /* also when run without the redfox dispatcher */
    const char *sf_arg = NULL, *out = NULL, *jobs_arg = NULL, *tables = NULL, *format = "tbl";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return RF_EXIT_OK;
        }
        /* (through the tools' one option parser: a value given twice alike) */
        int matched = 0;
        if ((matched = rf_tool_opt_value("tpch gen", argc, argv, &i, "--sf", &sf_arg)) ||
            (matched = rf_tool_opt_out("tpch gen", argc, argv, &i, "--out", &out)) ||
            (matched = rf_tool_opt_value("tpch gen", argc, argv, &i, "--jobs", &jobs_arg)) ||
            (matched = rf_tool_opt_value("tpch gen", argc, argv, &i, "--tables", &tables)) ||
            (matched = rf_tool_opt_value("tpch gen", argc, argv, &i, "--format", &format))) {
            if (matched < 0) return RF_EXIT_USAGE;
        }
        if (!matched) {
            if (a[0] == '-') return rf_tool_unknown_option("tpch gen", a, usage);
            return bad_usage("unexpected argument '%s'", a);
        }
    }
    if (!sf_arg) return bad_usage("%s", "missing --sf (the scale factor)");
    if (!out || !out[0]) return bad_usage("%s", "missing --out (the output folder)");
    if (!strcmp(out, "-"))
        return bad_usage("%s", "--out -: the tables are written aside and renamed into place, not to standard output "
                               "(give a folder; ./- for one called '-')");
    if (strcmp(format, "tbl") && strcmp(format, "db")) return bad_usage("--format '%s' must be tbl or db", format);

    rf_tpch_gen_opts o;
    memset(&o, 0, sizeof o);
    char *end;
    if (!rf_parse_decimal(sf_arg, &o.sf)) /* (strtod also reads 0x10, inf, blanks before) */
        return bad_usage("scale factor '%s' is not a decimal number", sf_arg);
    if (jobs_arg) {
        errno = 0;
        long j = strtol(jobs_arg, &end, 10);
        if (end == jobs_arg || *end || errno || j < 1 || j > 256)
            return bad_usage("--jobs '%s' must be a whole number from 1 to 256", jobs_arg);
        o.jobs = (int)j;
    }
    /* text .tbl files in a database's folder are never read: a folder with
    ** a manifest is read as the database (docs/DATABASE.md), so a run of the
    ** new scale factor would read the old one's tables, silently */
    /* (lstat, as rf_db_is_database: this tool does not link db/) */
    char *manifest = rf_sprintf("%s/manifest.rfdb", out); /* (rf_db.h's RF_DB_MANIFEST) */
    struct stat msb;
    int is_db = manifest && lstat(manifest, &msb) == 0;
    if (is_db && S_ISLNK(msb.st_mode) && stat(manifest, &msb) != 0) {
        /* a manifest that links to nothing: a broken database, neither
        ** replaced nor written into (rf_db_check_manifest says the same) */
        fprintf(stderr,
                "%s: error: a symbolic link whose target cannot be reached (%s): the folder is a redfox database "
                "without its manifest, which is neither read nor replaced nor written into (put back the file the "
                "link names, or remove the link)\n",
                manifest, strerror(errno));
        free(manifest);
        return RF_EXIT_USER;
    }
    free(manifest);
    if (strcmp(format, "db") && is_db) {
        fprintf(stderr,
                "redfox tpch gen: %s: error: is a redfox database (it holds manifest.rfdb), which readers take "
                "before any .tbl file there: write the text elsewhere, or give --format db to replace the database\n",
                out);
        return RF_EXIT_USER;
    }
    o.out_dir = out;
    o.tables = tables;
    o.on_wait = say_wait;
    bar b = {-1};
    int tty = isatty(STDERR_FILENO);
    if (tty) {
        o.progress = draw_bar;
        o.progress_ctx = &b;
    }

    rf_diags d;
    rf_diags_init(&d);
    rf_status st = !strcmp(format, "db") ? rf_tool_tpch_gen_db(&o, &d) : rf_tpch_gen(&o, &d);
    if (tty && b.last >= 0) fputc('\n', stderr);
    /* a SIGINT, SIGTERM or SIGHUP held while the output was being put in
    ** place (the renames of the tables, the database's temporary folder
    ** from its creation): what it stopped, or that it came once the
    ** output was complete, is said, then the process ends by it */
    int sig = rf_file_signal_held();
    if (sig && st == RF_OK)
        rf_diag_add(&d, RF_SEV_NOTE, rf_mkloc(out, 0, 0), "%s came while the %s put in place, which ended: %s complete",
                    rf_file_signal_name(sig), strcmp(format, "db") ? "tables were" : "database was",
                    strcmp(format, "db") ? "they are" : "it is");
    if (st == RF_EUSAGE) { /* bad usage the generator found (the scale's range, a table's name) as the command's own */
        for (int64_t i = 0; i < d.count; i++)
            fprintf(stderr, "redfox tpch gen: %s%s%s\n", d.items[i].loc.file ? d.items[i].loc.file : "",
                    d.items[i].loc.file ? ": " : "", d.items[i].msg);
    } else {
        rf_diags_print(&d, stderr);
    }
    rf_diags_free(&d);
    if (sig) {
        fflush(stderr);
        rf_file_end_by_signal(); /* (status 128 + the signal in a shell) */
    }
    switch (st) {
    case RF_OK: return RF_EXIT_OK;
    case RF_EUSAGE:
        fprintf(stderr, "(see `redfox tpch gen --help`)\n");
        return RF_EXIT_USAGE;
    case RF_EUSER:
    case RF_EIO:
    case RF_ENOMEM: return RF_EXIT_USER;
    default: return RF_EXIT_INTERNAL;
    }
}
