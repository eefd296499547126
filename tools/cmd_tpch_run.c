/*
** tools/cmd_tpch_run.c: `redfox tpch run`: the 22 TPC-H queries, built into
** the binary (tpch/queries, embedded at build time), compiled from memory
** and run on a folder of dbgen .tbl files; optionally checked against
** answer files (tpch/check) and timed over several repetitions.
**
** Owns: the command line, the per-query loop and the reports it prints; the
** comparison rules belong to rf_tpch_check.
*/
#include "pipeline.h"
#include "rf_file.h"
#include "rf_runtime.h"
#include "rf_tpch_check.h"
#include "rf_tpch_queries.h"
#include "tools.h"
#include "tpch_tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define NQUERIES RF_TPCH_NQUERIES
#define MAX_REPEAT 1000

static const char *usage =
    "usage: redfox tpch run --data DIR [--queries LIST] [--device auto|cpu|gpu]\n"
    "                       [--format table|csv|tbl] [--out DIR] [--repeat N]\n"
    "                       [--check ANSWERS_DIR] [--threads N] [--profile]\n"
    "                       [--no-fuse] [--set NAME=VALUE] [--gpu-memory N]\n"
    "\n"
    "Runs the TPC-H queries built into redfox (tpch/queries/q01.logic ..\n"
    "q22.logic, with the validation parameters) on the dbgen .tbl files in\n"
    "DIR, then prints a table of per-query times.\n"
    "\n"
    "options:\n"
    "  --data DIR          where customer.tbl .. supplier.tbl are (required), or a\n"
    "                      redfox database of them (`tpch gen --format db`)\n"
    "  --queries LIST      which queries, e.g. 1,3,5-7 (default: all 22)\n"
    "  --device D          auto (default), cpu or gpu\n"
    "  --format F          how results are printed: table (default), csv (RFC\n"
    "                      4180, comma-separated) or tbl ('|'-separated)\n"
    "  --out DIR           write DIR/qNN.csv instead of printing the results, in\n"
    "                      the answers' format ('|'-separated, header row, as\n"
    "                      --check reads). Written aside and renamed into place\n"
    "                      at the end, all or none: only when every query ran and\n"
    "                      its file was written. A second run writing the same DIR\n"
    "                      waits (a lock on DIR/.redfox.lock); a file there that\n"
    "                      is a symbolic link is refused, never written through\n"
    "  --repeat N          run each query N times; times are the median\n"
    "  --check DIR         compare each result with DIR/qNN.csv: PASS or FAIL\n"
    "                      with the first difference; exit 1 on any failure\n"
    "  --threads N         CPU threads (default: all cores)\n"
    "  --profile           per-kernel device, time and rows of each query's\n"
    "                      last run, on stderr\n"
    "  --no-fuse           every kernel separately (GPU: no Kernel Weaver fusion;\n"
    "                      CPU: no grouped totals)\n"
    "                      same results; for comparing times\n"
    "  --set NAME=VALUE    a tuning setting (below; repeatable)\n"
    "  --gpu-memory N      cap the GPU memory the run uses (bytes, K/M/G/T;\n"
    "                      the same as --set gpu_memory=N)\n"
    "  --cache-dir DIR     where the GPU's compiled code is cached (default\n"
    "                      $XDG_CACHE_HOME/redfox, else ~/.cache/redfox); --no-cache: none\n"
    "  -h, --help          this text\n";

typedef struct qstat {
    int ran;              /* compiled and ran at least once */
    int64_t rows;
    double compile_s, load_s, run_s;
    char device[16];      /* copied: the result that names it is freed */
    const char *check;    /* "PASS", "FAIL", "ERROR" or "-" */
    int write_failed;     /* its --out file could not be written */
    int usage;            /* the run refused the options: no query would run */
} qstat;

/* The program's one lang:output predicate (the query's result). */
static const rf_fe_pred *output_pred(const rf_fe_program *fe)
{
    for (int32_t i = 0; i < fe->npreds; i++)
        if (fe->preds[i]->output_name) return fe->preds[i];
    return NULL;
}

/* The result as '|'-separated text under a header row (the answers'
** format), in memory. */
static rf_status result_csv(const rf_rt_result *res, const rf_rt_output *o, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *f = open_memstream(text, len);
    if (!f) return RF_ENOMEM;
    rf_status st = rf_rt_write_rel(&o->rel, o->var->colnames, res->dict, RF_RT_FORMAT_TBL, f);
    if (fclose(f) != 0 && !st) st = RF_ENOMEM;
    return st;
}

/* Writes the text aside as path (renamed at the end of the run); prints why not. */
static int write_file(rf_file_out *f, const char *path, const char *text, size_t len)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_file_remove_stale(path);
    rf_status st = rf_file_out_open(f, path, &d);
    if (!st) {
        rf_file_out_write(f, text, (int64_t)len);
        st = rf_file_out_close(f, &d);
    }
    rf_diags_print(&d, stderr);
    rf_diags_free(&d);
    return st == RF_OK;
}

typedef struct run_opts {
    rf_rt_options rt;
    rf_rt_format fmt;
    const char *outdir, *check;
    int repeat;
    int profile;
} run_opts;

/* Compiles, runs (repeat times), writes or prints, and checks query q.
** Returns 1 when all went well. */
static int run_query(int q, const run_opts *ro, qstat *qs, rf_file_out *file)
{
    char qname[16];
    snprintf(qname, sizeof qname, "q%02d", q);
    qs->check = "-";

    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_fe_program *fe = NULL;
    rf_hir_program *hir = NULL;
    rf_rt_result *res = NULL;
    char *text = NULL;
    size_t len = 0;
    double *loads = NULL, *runs = NULL;
    int ok = 0;
    const char *qpath = NULL;

    double t0 = rf_now();
    rf_status st = rf_tpch_compile_query(q, &arena, &fe, &hir, &qpath, &d);
    qs->compile_s = rf_now() - t0;
    const rf_fe_pred *outp = st ? NULL : output_pred(fe);
    if (!st && !outp) {
        rf_error(&d, rf_mkloc(qpath, 0, 0), "the query has no lang:output predicate");
        st = RF_EUSER;
    }
    loads = malloc((size_t)ro->repeat * sizeof *loads);
    runs = malloc((size_t)ro->repeat * sizeof *runs);
    if (!st && (!loads || !runs)) st = RF_ENOMEM;
    for (int r = 0; !st && r < ro->repeat; r++) {
        rf_rt_result_free(res);
        res = NULL;
        st = rf_rt_run(hir, &ro->rt, &res, &d);
        if (!st) {
            loads[r] = res->load_seconds;
            runs[r] = res->run_seconds;
        }
    }
    const rf_rt_output *out = NULL;
    if (!st) {
        for (int32_t i = 0; i < res->noutputs && !out; i++)
            if (!strcmp(res->outputs[i].name, outp->output_name)) out = &res->outputs[i];
        if (!out) {
            rf_error(&d, rf_mkloc(qpath, 0, 0), "the run produced no output '%s'", outp->output_name);
            st = RF_EINTERNAL;
        }
    }
    if (st) {
        if (st == RF_EUSAGE) qs->usage = 1;
        else fprintf(stderr, "redfox tpch run: %s failed:\n", qname);
        rf_tool_finish(st, &d);
        qs->check = "ERROR";
        goto done;
    }
    if (ro->profile) {
        fprintf(stderr, "%s ", qname);
        rf_tool_print_profile(res, stderr);
    }
    qs->ran = 1;
    qs->rows = out->rel.nrows;
    snprintf(qs->device, sizeof qs->device, "%s", res->device ? res->device : "?");
    qs->load_s = rf_tpch_median(loads, ro->repeat);
    qs->run_s = rf_tpch_median(runs, ro->repeat);
    {
        static int noted;
        rf_tpch_print_diags(&d, &noted);
    }
    ok = 1;

    if (ro->outdir || ro->check) {
        st = result_csv(res, out, &text, &len);
        if (st) {
            fprintf(stderr, "redfox tpch run: %s: cannot format the result\n", qname);
            qs->check = "ERROR";
            ok = 0;
            goto done;
        }
    }
    if (ro->outdir) {
        char *path = rf_sprintf("%s/%s.csv", ro->outdir, out->name);
        if (!path) fprintf(stderr, "redfox tpch run: out of memory\n");
        if (!path || !write_file(file, path, text, len)) {
            qs->write_failed = 1;
            ok = 0;
        }
        free(path);
    } else {
        printf("%s (%lld row%s)\n", out->name, (long long)out->rel.nrows, out->rel.nrows == 1 ? "" : "s");
        if (rf_rt_write_rel(&out->rel, out->var->colnames, res->dict, ro->fmt, stdout)) ok = 0;
        printf("\n");
    }
    if (ro->check) {
        int32_t order[64];
        rf_tpch_check_opts co;
        rf_tpch_check_opts_init(&co);
        co.norder = outp->norder < 64 ? outp->norder : 64;
        for (int32_t i = 0; i < co.norder; i++) order[i] = outp->order[i].col;
        co.order_cols = order;
        co.limit = outp->limit;
        char *path = rf_sprintf("%s/%s.csv", ro->check, qname);
        rf_tpch_check_result cr;
        if (!path) {
            memset(&cr, 0, sizeof cr);
            snprintf(cr.message, sizeof cr.message, "out of memory");
        } else {
            rf_tpch_check_file(text, len, path, &co, &cr);
        }
        free(path);
        qs->check = cr.ok ? "PASS" : "FAIL";
        printf("%s %s: %s\n", qname, qs->check, cr.message);
        if (!cr.ok) ok = 0;
    }
    fflush(stdout);
done:
    free(text);
    free(loads);
    free(runs);
    rf_rt_result_free(res);
    rf_hir_free(hir);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    return ok;
}

static void print_times(const qstat *qs, const int want[NQUERIES + 1], int repeat, int checked)
{
    printf("%-5s %10s %11s %11s %11s  %-6s%s\n", "query", "rows", "compile ms", "load ms", "run ms", "device",
           checked ? "  check" : "");
    double tl = 0, tr = 0, tc = 0;
    for (int q = 1; q <= NQUERIES; q++) {
        if (!want[q]) continue;
        const qstat *s = &qs[q];
        if (s->ran) {
            printf("q%02d   %10lld %11.1f %11.1f %11.1f  %-6s", q, (long long)s->rows, s->compile_s * 1e3,
                   s->load_s * 1e3, s->run_s * 1e3, s->device);
            tl += s->load_s;
            tr += s->run_s;
            tc += s->compile_s;
        } else {
            printf("q%02d   %10s %11s %11s %11s  %-6s", q, "-", "-", "-", "-", "-");
        }
        printf("%s%s\n", checked ? "  " : "", checked ? s->check : "");
    }
    printf("%-5s %10s %11.1f %11.1f %11.1f%s\n", "total", "", tc * 1e3, tl * 1e3, tr * 1e3,
           repeat > 1 ? "  (load and run: medians)" : "");
}

int rf_tool_tpch_run(int argc, char **argv)
{
    const char *data = NULL, *queries = NULL, *device = "auto", *format = "table", *outdir = NULL, *repeat = NULL,
               *check = NULL, *threads = NULL;
    int profile = 0;
    int no_fuse = 0;
    rf_rt_tuning tune;
    rf_rt_tuning_init(&tune);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            rf_tool_print_settings(stdout);
            return RF_EXIT_OK;
        }
        if (!strcmp(a, "--profile")) {
            profile = 1;
            continue;
        }
        if (!strcmp(a, "--no-fuse")) {
            no_fuse = 1;
            continue;
        }
        if ((m = rf_tool_opt_set("tpch run", argc, argv, &i, &tune)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--data", &data)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--queries", &queries)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--device", &device)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--format", &format)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--out", &outdir)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--repeat", &repeat)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--check", &check)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--threads", &threads))) {
            if (m < 0) return RF_EXIT_USAGE;
        } else {
            return rf_tool_usage_error("tpch run", "unknown argument '%s'", a);
        }
    }
    if (!data) return rf_tool_usage_error("tpch run", "--data DIR is required");
    int want[NQUERIES + 1];
    if (queries) {
        const char *why = NULL;
        if (!rf_tpch_parse_queries(queries, want, &why)) return rf_tool_usage_error("tpch run", "--queries %s: %s", queries, why);
    } else {
        for (int q = 0; q <= NQUERIES; q++) want[q] = q > 0;
    }
    run_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.rt.data_dir = data;
    ro.rt.no_fuse = no_fuse;
    ro.rt.tuning = &tune;
    rf_tool_show_progress(&ro.rt); /* the inputs' loads, on a terminal */
    rf_tool_apply_tuning(&tune);
    ro.outdir = outdir;
    ro.check = check;
    ro.repeat = 1;
    ro.profile = profile;
    ro.rt.profile = profile;
    if (!rf_tool_run_options("tpch run", device, threads, format, &ro.rt, &ro.fmt)) return RF_EXIT_USAGE;
    int64_t v;
    if (repeat) {
        if (!rf_tool_parse_int(repeat, 1, MAX_REPEAT, &v))
            return rf_tool_usage_error("tpch run", "--repeat takes a number from 1 to %d", MAX_REPEAT);
        ro.repeat = (int)v;
    }
    struct stat sb;
    if (stat(data, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "redfox tpch run: the data folder '%s' does not exist\n", data);
        return RF_EXIT_USER;
    }
    if (check && (stat(check, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        fprintf(stderr, "redfox tpch run: the answers folder '%s' does not exist\n", check);
        return RF_EXIT_USER;
    }
    if (outdir && mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "redfox tpch run: cannot create %s: %s\n", outdir, strerror(errno));
        return RF_EXIT_USER;
    }
    rf_file_out files[NQUERIES + 1];
    for (int q = 0; q <= NQUERIES; q++) rf_file_out_init(&files[q]);
    int lock = -1;
    if (outdir) {
        rf_diags d;
        rf_diags_init(&d);
        int busy = -1;
        rf_status st = rf_file_lock_try(outdir, &lock, &busy, &d);
        if (!st && lock < 0) {
            fprintf(stderr, "redfox tpch run: waiting for another run writing to %s (it holds %s/%s)\n", outdir,
                    outdir, RF_FILE_LOCK_NAME);
            st = rf_file_lock_wait(outdir, busy, &d);
            lock = busy;
        }
        if (st) {
            rf_file_unlock(lock);
            return rf_tool_finish(st, &d);
        }
        rf_diags_free(&d);
    }

    qstat qs[NQUERIES + 1];
    memset(qs, 0, sizeof qs);
    int failed = 0, npass = 0, nwant = 0, unwritten = 0;
    /* the eight tables are loaded once and shared by the queries */
    ro.rt.cache = rf_rt_cache_new();
    if (!ro.rt.cache) {
        fprintf(stderr, "redfox tpch run: out of memory\n");
        rf_file_unlock(lock);
        return RF_EXIT_USER;
    }
    /* the queries' GPU code compiled together, not one query after another */
    rf_tpch_prepare_gpu(want, &ro.rt, profile);
    for (int q = 1; q <= NQUERIES; q++) {
        if (!want[q]) continue;
        nwant++;
        if (!run_query(q, &ro, &qs[q], &files[q])) failed++;
        if (qs[q].usage) { /* the same for every query: say it once */
            rf_rt_cache_free(ro.rt.cache);
            for (int k = 0; k <= NQUERIES; k++) rf_file_out_abort(&files[k]);
            rf_file_unlock(lock);
            return RF_EXIT_USAGE;
        }
        npass += !strcmp(qs[q].check, "PASS");
        unwritten += !qs[q].ran || qs[q].write_failed;
    }
    printf("\n");
    /* the tables go with the process where it ends at once (rf_tool_exit_now) */
    if (!rf_tool_exits_early()) rf_rt_cache_free(ro.rt.cache);
    if (outdir) {
        /* all or none: the files of a run that lost a query would pass for a whole one */
        rf_diags d;
        rf_diags_init(&d);
        rf_status st = RF_OK;
        if (unwritten) {
            fprintf(stderr, "redfox tpch run: nothing written to %s: %d quer%s did not run or could not be written\n",
                    outdir, unwritten, unwritten == 1 ? "y" : "ies");
        } else {
            int any = 0;
            for (int q = 1; q <= NQUERIES && !st; q++)
                if (want[q]) {
                    st = rf_file_out_rename(&files[q], &d);
                    any = q;
                }
            if (!st && any) st = rf_file_sync_dir(files[any].path, &d);
        }
        for (int q = 0; q <= NQUERIES; q++) rf_file_out_abort(&files[q]);
        rf_file_unlock(lock);
        if (st) {
            rf_tool_finish(st, &d);
            failed++;
        }
        rf_diags_free(&d);
    }
    print_times(qs, want, ro.repeat, check != NULL);
    if (check) printf("%d of %d queries pass\n", npass, nwant);
    if (fflush(stdout) != 0) return RF_EXIT_USER;
    return rf_tool_exit_now(failed ? RF_EXIT_USER : RF_EXIT_OK);
}
