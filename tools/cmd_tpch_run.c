/*
** tools/cmd_tpch_run.c: `redfox tpch run`: the 22 TPC-H queries, built into
** the binary (tpch/queries, embedded at build time), compiled from memory
** and run on a folder of dbgen .tbl files; optionally checked against
** answer files (tpch/check) and timed over several repetitions.
**
** Owns: the command line, the per-query loop and the reports it prints; the
** comparison rules belong to rf_tpch_check. Each query is compiled, run and
** written through the library (include/redfox.h): rf_compile_buffers_v2,
** rf_run on one database that keeps its inputs (the eight tables load once
** per process), rf_result_text and rf_result_write; only compiling the
** queries' GPU code together before the first runs (rf_tpch_prepare_gpu) is
** the stages' own. With --gpus N (or under a user's mpirun) every rank runs
** the same queries in the same order over its share of the tables, which
** keeps between the runs of a query (--repeat; each query opens the
** database anew, so that the ranks' string codes agree); rank 0 prints,
** writes and checks.
*/
#include "pipeline.h"
#include "redfox.h"
#include "rf_db.h"
#include "rf_file.h"
#include "rf_rt_dist.h"
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
#include <unistd.h>

#define NQUERIES RF_TPCH_NQUERIES
#define MAX_REPEAT 1000

static const char *usage =
    "usage: redfox tpch run --data DIR [--queries LIST] [--device auto|cpu|gpu]\n"
    "                       [--format table|csv|tbl] [--out DIR] [--repeat N]\n"
    "                       [--check ANSWERS_DIR] [--threads N] [--profile]\n"
    "                       [--no-fuse] [--set NAME=VALUE] [--gpu-memory N]\n"
    "                       [--gpus N] [--cache-dir DIR | --no-cache]\n"
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
    "                      4180, comma-separated) or tbl ('|'-separated); not\n"
    "                      with --out\n"
    "  --out DIR           write DIR/qNN.csv instead of printing the results, in\n"
    "                      the answers' format ('|'-separated, header row, as\n"
    "                      --check reads). Written aside and renamed into place\n"
    "                      at the end, all or none: only when every query ran and\n"
    "                      its file was written (a crash or SIGKILL during the\n"
    "                      renames leaves DIR/.redfox-renames, and the next\n"
    "                      redfox reader or writer of DIR makes the rest; a SIGINT,\n"
    "                      SIGTERM or SIGHUP lets them end, says so, and ends\n"
    "                      the run by the signal). A second run writing the same DIR\n"
    "                      waits (a lock on DIR/.redfox.lock), and the renames\n"
    "                      wait for the runs reading DIR (a lock on DIR); a file there that\n"
    "                      is a symbolic link is refused, never written through\n"
    "  --repeat N          run each query N times; times are the median\n"
    "  --check DIR         compare each result with DIR/qNN.csv: PASS or FAIL\n"
    "                      with the first difference; exit 1 on any failure.\n"
    "                      --out cannot be this folder (exit 2)\n"
    "  --threads N         CPU threads, 1 to 1024 (default: all cores; over four\n"
    "                      times the cores and 64: a note, they take turns)\n"
    "  --profile           per-kernel device, time and rows of each query's\n"
    "                      last run, on stderr; with --repeat, what each run\n"
    "                      read and copied (phases, input cache, ranks)\n"
    "  --no-fuse           every kernel separately (GPU: no Kernel Weaver fusion;\n"
    "                      CPU: no grouped totals)\n"
    "                      same results; for comparing times\n"
    "  --set NAME=VALUE    a tuning setting (below; repeatable)\n"
    "  --gpu-memory N      cap the GPU memory the run uses (bytes, K/M/G/T;\n"
    "                      the same as --set gpu_memory=N)\n"
    "  --gpus N            run on N GPUs of this host, one rank per GPU, as\n"
    "                      `redfox run --gpus N` does (implies --device gpu;\n"
    "                      started under Open MPI's mpirun, or the ranks of a\n"
    "                      user's `mpirun -np N redfox tpch run ...`): each rank\n"
    "                      reads its share of the tables for each query (and\n"
    "                      keeps it across --repeat), the queries run one after\n"
    "                      another on all ranks, rank 0 prints,\n"
    "                      writes --out and checks; the times are rank 0's.\n"
    "                      N is at most 8 per GPU of the host (the emulator\n"
    "                      counts as one); a host without a usable GPU is an\n"
    "                      error before any rank starts\n"
    "  --cache-dir DIR     where the GPU's compiled code is cached and --device\n"
    "                      auto's placement model kept (default $XDG_CACHE_HOME/\n"
    "                      redfox, else ~/.cache/redfox); --no-cache: neither\n"
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
    rf_database *db;     /* --data, keeping the inputs the first runs read */
    int rank;            /* this process's rank (0 alone): only rank 0 prints */
    rf_run_options run;
    int fmt;             /* REDFOX_FORMAT_* */
    const char *outdir, *check;
    int repeat;
    int profile;
    /* --device auto: the queries compiled ahead (each handed to its run),
    ** so that each query's choice knows the queries after it */
    rf_program *progs[NQUERIES + 1];
    double compile_s[NQUERIES + 1];
} run_opts;

/* A failed query: "qNN failed:" (but for options that every query
** refuses: said once), then its messages. */
static void report_failure(const char *qname, int code, const void *obj, int64_t n, rf_tool_diag_at_fn at)
{
    if (code != REDFOX_MISUSE) fprintf(stderr, "redfox tpch run: %s failed:\n", qname);
    rf_tool_finish_api(code, obj, n, at, 1);
}

static const rf_diagnostic *program_diag(const void *p, int64_t i) { return rf_program_diag(p, i); }
static const rf_diagnostic *database_diag(const void *db, int64_t i) { return rf_database_diag(db, i); }

/* Compiles (or takes ro->progs[q], compiled ahead), runs (repeat times),
** writes or prints, and checks query q. Returns 1 when all went well. */
static int run_query(int q, run_opts *ro, qstat *qs, rf_file_out *file)
{
    char qname[16];
    snprintf(qname, sizeof qname, "q%02d", q);
    qs->check = "-";

    rf_diags d;
    rf_diags_init(&d);
    rf_program *p = NULL;
    rf_result *res = NULL;
    char *text = NULL;
    int64_t len = 0;
    double *loads = NULL, *runs = NULL;
    int ok = 0;
    const char *qpath = NULL;

    double t0 = rf_now();
    int code;
    if (ro->progs[q]) { /* compiled ahead (without errors): that compile's time */
        p = ro->progs[q];
        ro->progs[q] = NULL;
        code = REDFOX_OK;
        qs->compile_s = ro->compile_s[q];
    } else {
        code = rf_tpch_compile_program(q, &p, &qpath, &d);
        qs->compile_s = rf_now() - t0;
    }
    const char *outname = code || !rf_program_output_count(p) ? NULL : rf_program_output_name(p, 0);
    if (!code && !outname) {
        rf_error(&d, rf_mkloc(qpath, 0, 0), "the query has no lang:output predicate");
        code = REDFOX_ERROR;
    }
    if (code) {
        if (d.count) report_failure(qname, code, &d, d.count, rf_tpch_local_diag);
        else report_failure(qname, code, p, rf_program_diag_count(p), program_diag);
        qs->usage = code == REDFOX_MISUSE;
        qs->check = "ERROR";
        goto done;
    }
    loads = malloc((size_t)ro->repeat * sizeof *loads);
    runs = malloc((size_t)ro->repeat * sizeof *runs);
    if (!loads || !runs) code = REDFOX_NOMEM;
    /* auto: this query's runs and the queries after it weighed against the GPU's start */
    rf_run_options o = ro->run;
    const rf_program *later[NQUERIES];
    o.nlater = 0;
    for (int k = q + 1; k <= NQUERIES; k++)
        if (ro->progs[k]) later[o.nlater++] = ro->progs[k];
    o.later = later;
    o.later_runs = ro->repeat;
    for (int r = 0; !code && r < ro->repeat; r++) {
        rf_result_free(res);
        res = NULL;
        o.runs = ro->repeat - r;
        code = rf_run(ro->db, p, &o, &res);
        if (!code) {
            loads[r] = rf_result_load_seconds(res);
            runs[r] = rf_result_run_seconds(res);
        }
        if (!code && ro->profile && ro->repeat > 1 && !ro->rank) {
            /* what each run read and copied (kept inputs: only the first copies) */
            char prefix[48];
            snprintf(prefix, sizeof prefix, "%s run %d of %d: ", qname, r + 1, ro->repeat);
            rf_tool_profile_lines(res, prefix, rf_tool_pick_load);
        }
    }
    int32_t out = code ? -1 : rf_result_find(res, outname);
    if (code) {
        qs->usage = code == REDFOX_MISUSE;
        /* rank 0 and the rank whose error stopped the ranks (runtime/dist) */
        if (rf_tool_run_reports(ro->rank))
            report_failure(qname, code, ro->db, rf_database_diag_count(ro->db), database_diag);
        qs->check = "ERROR";
        goto done;
    }
    if (ro->rank) { /* rank 0 holds the outputs; the others ran their share */
        qs->ran = 1;
        ok = 1;
        goto done;
    }
    if (out < 0) {
        rf_error(&d, rf_mkloc(qpath, 0, 0), "the run produced no output '%s'", outname);
        report_failure(qname, REDFOX_INTERNAL, &d, d.count, rf_tpch_local_diag);
        qs->check = "ERROR";
        goto done;
    }
    if (ro->profile) {
        fprintf(stderr, "%s ", qname);
        rf_result_profile_write(res, stderr);
    }
    qs->ran = 1;
    qs->rows = rf_result_rows(res, out);
    snprintf(qs->device, sizeof qs->device, "%s", rf_result_device(res));
    qs->load_s = rf_tpch_median(loads, ro->repeat);
    qs->run_s = rf_tpch_median(runs, ro->repeat);
    static int noted;
    rf_tpch_print_notes(p, ro->db, &noted);
    ok = 1;

    /* the answers' format: '|'-separated under a header row */
    if ((ro->outdir || ro->check) && rf_result_text(res, out, REDFOX_FORMAT_TBL, &text, &len)) {
        fprintf(stderr, "redfox tpch run: %s: cannot format the result\n", qname);
        qs->check = "ERROR";
        ok = 0;
        goto done;
    }
    if (ro->outdir) {
        char *path = rf_sprintf("%s/%s.csv", ro->outdir, outname);
        if (!path) fprintf(stderr, "redfox tpch run: out of memory\n");
        if (!path || !write_file(file, path, text, (size_t)len)) {
            qs->write_failed = 1;
            ok = 0;
        }
        free(path);
    } else {
        printf("%s (%lld row%s)\n", outname, (long long)qs->rows, qs->rows == 1 ? "" : "s");
        if (rf_result_write(res, out, ro->fmt, stdout)) ok = 0;
        printf("\n");
    }
    if (ro->check) {
        int32_t order[64];
        int64_t limit = -1;
        rf_tpch_check_opts co;
        rf_tpch_check_opts_init(&co);
        int32_t norder = rf_program_output_order(p, 0, order, NULL, 64, &limit);
        co.norder = norder < 0 ? 0 : norder < 64 ? norder : 64;
        co.order_cols = order;
        co.limit = limit;
        char *path = rf_sprintf("%s/%s.csv", ro->check, qname);
        rf_tpch_check_result cr;
        if (!path) {
            memset(&cr, 0, sizeof cr);
            snprintf(cr.message, sizeof cr.message, "out of memory");
        } else {
            rf_tpch_check_file(text, (size_t)len, path, &co, &cr);
        }
        free(path);
        qs->check = cr.ok ? "PASS" : "FAIL";
        printf("%s %s: %s\n", qname, qs->check, cr.message);
        if (!cr.ok) ok = 0;
    }
    fflush(stdout);
done:
    rf_free(text);
    free(loads);
    free(runs);
    rf_result_free(res);
    rf_program_free(p);
    rf_diags_free(&d);
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

static const rf_diagnostic *world_diag(const void *w, int64_t i) { return rf_world_diag(w, i); }
static int tpch_run_ranks(run_opts *pro, rf_rt_options *prt, rf_world *world, const char *data, const char *outdir,
                          const char *check, const int want[NQUERIES + 1], const char *const *sets, int nsets);

int rf_tool_tpch_run(int argc, char **argv)
{
    const char *data = NULL, *queries = NULL, *device = "auto", *format = NULL, *outdir = NULL, *repeat = NULL,
               *check = NULL, *threads = NULL, *gpus_s = NULL;
    int profile = 0;
    int no_fuse = 0;
    rf_rt_tuning tune; /* the settings checked here as --set gives them, applied by rf_run */
    rf_rt_tuning_init(&tune);
    const char *sets[RF_TOOL_MAX_SETS];
    int nsets = 0;
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
        if ((m = rf_tool_opt_set("tpch run", argc, argv, &i, &tune, sets, &nsets)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--data", &data)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--queries", &queries)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--device", &device)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--format", &format)) ||
            (m = rf_tool_opt_out("tpch run", argc, argv, &i, "--out", &outdir)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--repeat", &repeat)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--check", &check)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--threads", &threads)) ||
            (m = rf_tool_opt_value("tpch run", argc, argv, &i, "--gpus", &gpus_s))) {
            if (m < 0) return RF_EXIT_USAGE;
        } else {
            if (a[0] == '-' && a[1]) return rf_tool_unknown_option("tpch run", a, usage);
            return rf_tool_usage_error("tpch run", "unknown argument '%s'", a);
        }
    }
    if (!data) return rf_tool_usage_error("tpch run", "--data DIR is required");
    /* --out writes the answers' format whatever --format says: asked for
    ** another, the files would not be what was asked */
    if (outdir && format)
        return rf_tool_usage_error("tpch run", "--format %s: with --out the results are written in the answers' "
                                   "format ('|'-separated, as --check reads), not printed; leave --format out", format);
    if (!format) format = "table";
    struct stat sc, so;
    if (check && outdir && stat(check, &sc) == 0 && stat(outdir, &so) == 0 && sc.st_dev == so.st_dev &&
        sc.st_ino == so.st_ino) /* the answers would be replaced by what was checked against them */
        return rf_tool_usage_error("tpch run", "--out %s is the answers folder of --check %s: the run's results would "
                                   "replace the answers (give another --out)", outdir, check);
    int64_t gpus = 0;
    if (gpus_s) {
        if (!rf_tool_parse_int(gpus_s, 1, 4096, &gpus))
            return rf_tool_usage_error("tpch run", "--gpus takes a number from 1 to 4096");
        int given = 0; /* --device cpu or auto beside --gpus contradicts it */
        for (int i = 1; i < argc; i++) given |= !strncmp(argv[i], "--device", 8);
        if (given && strcmp(device, "gpu"))
            return rf_tool_usage_error("tpch run", "--gpus runs on GPUs: it takes no --device %s", device);
        device = "gpu";
        if (gpus > 1 && !rf_rt_dist_launched()) {
            if (!rf_rt_dist_have_mpi())
                return rf_tool_usage_error("tpch run", "--gpus %lld needs several ranks, but this redfox was built "
                                           "without MPI (install libopenmpi-dev and rebuild)", (long long)gpus);
            return rf_tool_run_ranks("tpch run", argc, argv, gpus);
        }
    }
    int want[NQUERIES + 1];
    if (queries) {
        const char *why = NULL;
        if (!rf_tpch_parse_queries(queries, want, &why)) return rf_tool_usage_error("tpch run", "--queries %s: %s", queries, why);
    } else {
        for (int q = 0; q <= NQUERIES; q++) want[q] = q > 0;
    }
    run_opts ro;
    memset(&ro, 0, sizeof ro);
    /* rt: the flags as the runtime takes them, for compiling the GPU code
    ** ahead (rf_tpch_prepare_gpu); the runs take ro.run */
    rf_rt_options rt;
    memset(&rt, 0, sizeof rt);
    rt.data_dir = data;
    rt.no_fuse = no_fuse;
    rt.tuning = &tune;
    rf_tool_apply_tuning(&tune);
    ro.outdir = outdir;
    ro.check = check;
    ro.repeat = 1;
    ro.profile = profile;
    rt.profile = profile;
    rf_rt_format rfmt;
    if (!rf_tool_run_options("tpch run", device, threads, format, &rt, &rfmt)) return RF_EXIT_USAGE;
    ro.fmt = rfmt == RF_RT_FORMAT_CSV ? REDFOX_FORMAT_CSV : rfmt == RF_RT_FORMAT_TBL ? REDFOX_FORMAT_TBL : REDFOX_FORMAT_TABLE;
    rf_run_options_init_v2(&ro.run, sizeof ro.run);
    ro.run.device = rt.device == RF_RT_DEVICE_CPU ? REDFOX_DEVICE_CPU
                    : rt.device == RF_RT_DEVICE_GPU ? REDFOX_DEVICE_GPU
                                                    : REDFOX_DEVICE_AUTO;
    ro.run.threads = rt.threads;
    ro.run.no_fuse = no_fuse;
    ro.run.profile = profile;
    ro.run.cache_dir = tune.cache_dir;
    ro.run.gpu_memory = tune.gpu_memory > 0 ? (uint64_t)tune.gpu_memory : 0;
    if (isatty(STDERR_FILENO)) ro.run.progress = rf_tool_draw_progress; /* the inputs' loads, on a terminal */
    int64_t v;
    if (repeat) {
        if (!rf_tool_parse_int(repeat, 1, MAX_REPEAT, &v))
            return rf_tool_usage_error("tpch run", "--repeat takes a number from 1 to %d", MAX_REPEAT);
        ro.repeat = (int)v;
    }
    /* several ranks when mpirun started this process (--gpus N, or a user's mpirun) */
    rf_world *world = NULL;
    int wcode = rf_tool_world_start(&argc, &argv, sets, nsets, &world);
    if (wcode) {
        int wrc = rf_tool_finish_api(wcode, world, rf_world_diag_count(world), world_diag, 1);
        rf_world_end(world, 0);
        return wrc;
    }
    int rank = rf_world_rank(world), nranks = rf_world_size(world);
    if (gpus && gpus != nranks) {
        int rc = rank ? RF_EXIT_USAGE
                      : rf_tool_usage_error("tpch run", "--gpus %lld, but mpirun started %d ranks", (long long)gpus, nranks);
        rf_world_end(world, rc);
        return rc;
    }
    int rc = tpch_run_ranks(&ro, &rt, world, data, outdir, check, want, sets, nsets);
    if (rf_tool_exits_early()) {
        rf_world_end(world, rc);
        return rf_tool_exit_now(rc, nranks);
    }
    rf_world_end(world, rc);
    return rc;
}

/* The runs of rf_tool_tpch_run once the options are checked and the
** world joined: every rank runs; rank 0 prints, writes and checks. */
static int tpch_run_ranks(run_opts *pro, rf_rt_options *prt, rf_world *world, const char *data, const char *outdir,
                          const char *check, const int want[NQUERIES + 1], const char *const *sets, int nsets)
{
    run_opts ro = *pro;
    rf_rt_options rt = *prt;
    int rank = rf_world_rank(world);
    ro.rank = rank;
    ro.run.world = world;
    if (rank) { /* rank 0 writes, checks and prints */
        outdir = NULL;
        check = NULL;
        ro.outdir = NULL;
        ro.check = NULL;
        ro.run.progress = NULL;
    }
    if (!ro.run.threads && rf_world_local_size(world) > 1) {
        /* ranks on one host share its cores */
        int t = rf_online_cpus() / rf_world_local_size(world);
        ro.run.threads = t > 1 ? t : 1;
        rt.threads = ro.run.threads;
    }
    int mrc = rf_tpch_restore_missing(data);
    if (!mrc && outdir) mrc = rf_tpch_restore_missing(outdir);
    if (mrc) return mrc;
    struct stat sb;
    if (stat(data, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "redfox tpch run: the data folder '%s' %s\n", data,
                stat(data, &sb) != 0 ? "does not exist" : "is not a folder");
        return RF_EXIT_USER;
    }
    if (check && (stat(check, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        fprintf(stderr, "redfox tpch run: the answers folder '%s' %s\n", check,
                stat(check, &sb) != 0 ? "does not exist" : "is not a folder");
        return RF_EXIT_USER;
    }
    if (outdir && mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "redfox tpch run: cannot create %s: %s\n", outdir, strerror(errno));
        return RF_EXIT_USER;
    }
    if (outdir) { /* a folder whose manifest.rfdb links to nothing: a broken database, not one to write into */
        rf_diags md;
        rf_diags_init(&md);
        rf_status mst = rf_db_check_manifest(outdir, &md);
        mrc = mst ? rf_tool_finish(mst, &md) : 0;
        rf_diags_free(&md);
        if (mrc) return mrc;
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
            fprintf(stderr, "redfox tpch run: waiting for another process writing to %s (it holds %s/%s)\n", outdir,
                    outdir, RF_FILE_LOCK_NAME);
            st = rf_file_lock_wait(outdir, busy, &d);
            lock = busy;
        }
        if (st) {
            rf_file_unlock(lock);
            return rf_tool_finish(st, &d);
        }
        if (d.count) rf_tool_finish(st, &d); /* (a note: a killed writer's renames finished, rf_file.h) */
        rf_diags_free(&d);
    }

    qstat qs[NQUERIES + 1];
    memset(qs, 0, sizeof qs);
    int failed = 0, npass = 0, nwant = 0, unwritten = 0;
    /* a database read under its shared lock, from its manifest to the last query */
    int dblock = -1, lrc = rf_tpch_lock_data(data, &dblock);
    if (lrc) {
        rf_file_unlock(lock);
        return lrc;
    }
    /* the eight tables are loaded once and shared by the queries */
    char *settings = rf_tool_settings_text(sets, nsets);
    int ocode = settings ? rf_open(data, &ro.db) : REDFOX_NOMEM;
    if (!ocode) ocode = rf_database_keep_inputs(ro.db, 1);
    if (ocode) {
        rf_tool_finish_database(ocode, ro.db, 1);
        rf_close(ro.db);
        free(settings);
        rf_file_unlock(dblock);
        rf_file_unlock(lock);
        return RF_EXIT_USER;
    }
    ro.run.settings = settings;
    /* the queries' GPU code compiled together, not one query after another */
    if (rf_tpch_prepare_gpu(want, &rt, ro.repeat, ro.profile && !rank, world)) {
        rf_close(ro.db);
        free(settings);
        rf_file_unlock(dblock);
        rf_file_unlock(lock);
        return RF_EXIT_USER;
    }
    /* auto: every query compiled ahead, so that each one's choice weighs
    ** the GPU's start against the queries after it too (a query that does
    ** not compile is compiled again in its turn, which reports it) */
    for (int q = 1; q <= NQUERIES && rt.device == RF_RT_DEVICE_AUTO; q++) {
        if (!want[q]) continue;
        rf_diags cd;
        rf_diags_init(&cd);
        const char *qpath = NULL;
        double c0 = rf_now();
        rf_program *p = NULL;
        if (rf_tpch_compile_program(q, &p, &qpath, &cd) == REDFOX_OK && rf_program_output_count(p) > 0) {
            ro.progs[q] = p;
            ro.compile_s[q] = rf_now() - c0;
        } else {
            rf_program_free(p);
        }
        rf_diags_free(&cd);
    }
    for (int q = 1; q <= NQUERIES; q++) {
        if (!want[q]) continue;
        if (nwant && rf_world_size(world) > 1) {
            /* several ranks: each query starts from a fresh dictionary, so
            ** that its constants and the database's dictionaries get the same
            ** codes on every rank (runtime/dist/dist_codes.c); a kept one
            ** holds the rank's own strings of the queries before (plain
            ** columns' rows), and every code after them differs by rank */
            rf_close(ro.db);
            ro.db = NULL;
            int rcode = rf_open(data, &ro.db);
            if (!rcode) rcode = rf_database_keep_inputs(ro.db, 1);
            if (rcode) {
                rf_tool_finish_database(rcode, ro.db, 1);
                failed++;
                break;
            }
        }
        nwant++;
        if (!run_query(q, &ro, &qs[q], &files[q])) failed++;
        if (qs[q].usage) { /* the same for every query: say it once */
            for (int k = 0; k <= NQUERIES; k++) rf_program_free(ro.progs[k]);
            rf_close(ro.db);
            free(settings);
            for (int k = 0; k <= NQUERIES; k++) rf_file_out_abort(&files[k]);
            rf_file_unlock(dblock);
            rf_file_unlock(lock);
            return RF_EXIT_USAGE;
        }
        npass += !strcmp(qs[q].check, "PASS");
        unwritten += !qs[q].ran || qs[q].write_failed;
    }
    if (!rank) printf("\n");
    /* the tables go with the process where it ends at once (rf_tool_exit_now) */
    if (!rf_tool_exits_early()) {
        rf_close(ro.db);
        free(settings);
    }
    rf_file_unlock(dblock); /* read: a writer may replace the database now */
    if (outdir) {
        /* all or none: the files of a run that lost a query would pass for a whole one */
        rf_diags d;
        rf_diags_init(&d);
        rf_status st = RF_OK;
        if (unwritten) {
            fprintf(stderr, "redfox tpch run: nothing written to %s: %d quer%s did not run or could not be written\n",
                    outdir, unwritten, unwritten == 1 ? "y" : "ies");
        } else {
            /* all or none: a SIGINT, SIGTERM or SIGHUP waits for the
            ** renames (it came between two, and the handler removed the
            ** files not yet renamed: the folder held some results of this
            ** run and some of the one before), then ends the process, which
            ** says that the files are in place */
            int any = 0, dirlock = -1, waited = 0;
            /* (under the folder's exclusive lock, as run --out: a reader of
            ** DIR as a text folder never reads results of two runs) */
            if (!rf_db_is_database(outdir)) st = rf_file_lock_folder(outdir, &dirlock, &waited, &d);
            if (!st && waited)
                rf_diag_add(&d, RF_SEV_NOTE, rf_mkloc(outdir, 0, 0),
                            "waited for the runs reading this folder before putting the results in place");
            rf_file_commit_begin();
            /* (a SIGKILL between two renames: the journal's, rf_file.h) */
            if (!st) st = rf_file_renames_begin(outdir, files, NQUERIES + 1, &d);
            for (int q = 1; q <= NQUERIES && !st; q++)
                if (want[q]) {
                    st = rf_file_out_rename(&files[q], &d);
                    any = q;
                }
            if (!st && any) st = rf_file_sync_dir(files[any].path, &d);
            if (!st) st = rf_file_renames_end(outdir, &d);
            if (!st && rf_file_signal_held())
                fprintf(stderr, "redfox tpch run: stopped by %s once the results were in place: all %d are written "
                        "to %s\n", rf_file_signal_name(rf_file_signal_held()), nwant, outdir);
            rf_file_commit_end();
            rf_file_unlock(dirlock);
        }
        for (int q = 0; q <= NQUERIES; q++) rf_file_out_abort(&files[q]);
        rf_file_unlock(lock);
        if (st) {
            rf_tool_finish(st, &d);
            failed++;
        }
        rf_diags_free(&d);
    }
    if (!rank) print_times(qs, want, ro.repeat, check != NULL);
    if (check) printf("%d of %d queries pass\n", npass, nwant);
    if (!rf_tool_stdout_ok("tpch run")) return RF_EXIT_USER;
    return failed ? RF_EXIT_USER : RF_EXIT_OK;
}
