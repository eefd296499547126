/*
** tools/cmd_run.c: `redfox run`: run a program on input files and print or
** write its outputs.
**
** Owns: the command's options and messages. The program is compiled, run
** and its outputs written through the library (include/redfox.h: rf_compile_
** buffers_v2, rf_open, rf_run, rf_result_write*, rf_result_profile_write,
** rf_trace_*), as any application would; only reading the program files
** (tools/pipeline.c: "-", pipes), the settings' checks and starting the
** ranks of --gpus N under mpirun (tools/run_ranks.c) are the command's own;
** under mpirun it joins the ranks' world through the library (rf_world_mpi).
*/
#include "pipeline.h"
#include "redfox.h"
#include "rf_db.h"
#include "rf_file.h"
#include "rf_rt_dist.h"
#include "rf_sys.h"
#include "tools.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *usage =
    "usage: redfox run PROG.rfx|PROG.logic|- [--data DIR] [--device auto|cpu|gpu]\n"
    "                  [--format table|csv|tbl] [--out DIR] [--profile] [--threads N]\n"
    "                  [--max-iterations N] [--no-fuse] [--no-lftj] [--no-exists] [--no-partagg]\n"
    "                  [--no-hoist] [--no-keyjoin] [--repeat N]\n"
    "                  [--set NAME=VALUE] [--cache-dir DIR | --no-cache] [--trace FILE]\n"
    "                  [--gpu-memory N] [--gpus N]\n"
    "\n"
    "Runs a compiled program (or compiles .logic files first) on the\n"
    "lang:input files found in DIR, and prints every lang:output relation.\n"
    "'-' reads the program (LogiQL or .rfx) from standard input, named\n"
    "<stdin> in messages; so do /dev/stdin, pipes and FIFOs. A recursive\n"
    "stratum runs until it derives nothing new, however many rounds that\n"
    "takes; on a terminal, one that runs over a second shows its round and\n"
    "its predicates' sizes on stderr as it goes, and so does the load of an\n"
    "input file that takes over a second (the input, its phase and bytes).\n"
    "\n"
    "options:\n"
    "  --data DIR           where the input files are (default: .), or a redfox\n"
    "                       database (`redfox import`): then only the columns the\n"
    "                       program reads are read\n"
    "  --device D           auto (default), cpu or gpu. auto runs on the device\n"
    "                       its placement model predicts faster (learned from\n"
    "                       earlier runs, kept in the cache folder: <cache>/\n"
    "                       place/model.txt; --profile prints the prediction)\n"
    "  --format F           table: aligned columns for people (the default on\n"
    "                       standard output); csv: RFC 4180, comma-separated\n"
    "                       with a header row, fields quoted when they hold a\n"
    "                       comma, quote or line break, quotes doubled (the\n"
    "                       default with --out); tbl: '|'-separated with a header\n"
    "                       row, a string quoted as in csv when it holds a |, CR\n"
    "                       or LF or starts with a quote (csv and tbl files read\n"
    "                       back as the same rows: lang:input:header)\n"
    "                       With several outputs on standard output, each comes\n"
    "                       under a line \"NAME (N rows)\", a blank line between\n"
    "                       them (with one csv or tbl output, only its rows);\n"
    "                       use --out for one clean file per output\n"
    "  --out DIR            write DIR/NAME.csv (csv), DIR/NAME.tbl (tbl) or\n"
    "                       DIR/NAME.txt (table) for every output instead of\n"
    "                       printing; DIR is created if missing. Files are written\n"
    "                       aside and renamed into place only when all were\n"
    "                       written and synced, so a failed or killed run leaves\n"
    "                       the folder's files as they were (a crash or SIGKILL\n"
    "                       during the final renames leaves DIR/.redfox-renames\n"
    "                       listing them, and the next redfox reader or writer of\n"
    "                       DIR makes the rest before it reads: never some new,\n"
    "                       some old; a SIGINT, SIGTERM or SIGHUP lets them end, says\n"
    "                       so, and ends the run by the signal). A second\n"
    "                       run writing the same DIR waits for the first to finish\n"
    "                       (a lock on DIR/.redfox.lock), and the renames wait for\n"
    "                       the runs reading DIR as their data (a lock on DIR), so\n"
    "                       none reads outputs of two runs. An output file that is a\n"
    "                       symbolic link is refused, never written through,\n"
    "                       and one that is an input file of the run (DIR the\n"
    "                       data folder, an output named like an input) is\n"
    "                       refused before the run (exit 2)\n"
    "  --profile            print per-kernel device, time and rows to stderr (GPU:\n"
    "                       kernels fused by the Kernel Weaver show device\n"
    "                       \"fused\", the first one the whole fused kernel's time;\n"
    "                       \"-\" rows: a result kept in registers, never written)\n"
    "  --no-fuse            run every kernel separately: on the GPU without the\n"
    "                       Kernel Weaver's fused kernels (`redfox dump --fused`\n"
    "                       lists them), on the CPU without grouped totals (a map\n"
    "                       read only by its group and reduce, in one pass) and\n"
    "                       with a recursion's join pairs whole (not mapped,\n"
    "                       deduplicated and subtracted part by part: see the\n"
    "                       setting cpu_part_pairs). Results are identical either way\n"
    "  --no-lftj            compiling .logic files: join cyclic bodies (triangles,\n"
    "                       cliques) with binary joins, not the leapfrog triejoin\n"
    "  --no-exists          compiling PROG.logic: keep joins that only test that\n"
    "                       another row exists as joins (see `redfox compile`)\n"
    "  --no-partagg         compiling PROG.logic: keep aggregates whole (see\n"
    "                       `redfox compile`)\n"
    "  --no-hoist           compiling PROG.logic: leave loop-invariant commands\n"
    "                       inside their loop, run every round (see `redfox compile`)\n"
    "  --no-keyjoin         compiling PROG.logic: keep a join on a computed value a\n"
    "                       cross product and a filter (see `redfox compile`).\n"
    "                       A .rfx file runs the plan it was compiled with: these\n"
    "                       five switches then only print a note saying so\n"
    "  --threads N          CPU threads (default: all cores; with several ranks on\n"
    "                       a host, its cores divided among them), 1 to 1024;\n"
    "                       over four times the cores and 64, a note says that\n"
    "                       they take turns on them (slower than one a core)\n"
    "  --max-iterations N   stop with an error when a recursive stratum has run\n"
    "                       N rounds without reaching its fixpoint; the error\n"
    "                       names its predicates and their sizes (default: no\n"
    "                       limit)\n"
    "  --repeat N           run the program N times in this process and print each\n"
    "                       run's load and run time to stderr; outputs and\n"
    "                       --profile are the last run's (--profile adds what\n"
    "                       each run read and copied). The input files are read\n"
    "                       once (the first run's load; on several ranks each\n"
    "                       rank's share of a text file, or of a database's\n"
    "                       columns, once), and the GPU keeps the\n"
    "                       columns it copied (on ranks, each its share's) for\n"
    "                       the later runs. The first run also pays for starting\n"
    "                       the GPU's kernels, and with ranks for starting their\n"
    "                       transport (NCCL), which later runs reuse\n"
    "  --set NAME=VALUE     a tuning setting (below; repeatable)\n"
    "  --gpu-memory N       cap the GPU memory the run uses (bytes, K/M/G/T;\n"
    "                       the same as --set gpu_memory=N)\n"
    "  --cache-dir DIR      where the GPU's compiled code is cached (NVRTC, JIT,\n"
    "                       emulator) and --device auto's placement model kept\n"
    "                       (default $XDG_CACHE_HOME/redfox, else\n"
    "                       ~/.cache/redfox); --no-cache: neither\n"
    "  --trace FILE         write the run's timeline to FILE as Chrome trace-event\n"
    "                       JSON (open it in https://ui.perfetto.dev): compile,\n"
    "                       each input's load, each kernel, and on the GPU each\n"
    "                       launch, copy and wait as the host saw it. FILE\n"
    "                       cannot be a program or input file of the run.\n"
    "                       On several ranks, rank 0 writes its own timeline\n"
    "\n"
    "Started by mpirun (mpirun -np N redfox run ... --device cpu|gpu), the N\n"
    "processes run the program together, each on its share of the rows:\n"
    "relations are hash-partitioned by the keys of the joins, groups and\n"
    "dedupes that need them and exchanged over MPI; rank 0 writes the outputs,\n"
    "identical to one process's. --profile adds each rank's time and bytes\n"
    "sent. A rank that fails stops all of them (see rank_timeout_s below).\n"
    "Every rank reads the program from its files: ranks whose programs differ\n"
    "(a program from standard input reaches rank 0 only) stop with an error.\n"
    "  --gpus N             run on N GPUs of this host, one rank per GPU (rank r\n"
    "                       on GPU r mod the GPUs visible): redfox starts the N\n"
    "                       ranks itself under Open MPI's mpirun (implies --device\n"
    "                       gpu). Ranks exchange rows GPU to GPU with NCCL where\n"
    "                       every rank has a GPU of its own and libnccl.so.2 loads,\n"
    "                       else through host memory (--profile says which).\n"
    "                       N is at most 8 per GPU of the host (the emulator,\n"
    "                       RF_GPU_EMULATE=1, counts as one); a host without a\n"
    "                       usable GPU is an error before any rank starts\n"
    "  -h, --help           this text\n";

static const rf_diagnostic *world_diag(const void *w, int64_t i) { return rf_world_diag(w, i); }

static int print_outputs(const rf_result *res, int fmt)
{
    int32_t n = rf_result_count(res);
    for (int32_t i = 0; i < n; i++) {
        int64_t rows = rf_result_rows(res, i);
        if (n > 1 || fmt == REDFOX_FORMAT_TABLE)
            printf("%s%s (%lld row%s)\n", i ? "\n" : "", rf_result_name(res, i), (long long)rows, rows == 1 ? "" : "s");
        int rc = rf_result_write(res, i, fmt, stdout);
        if (rc == REDFOX_IO) {
            fprintf(stderr, "redfox run: cannot write the output: %s\n", strerror(errno));
            return RF_EXIT_USER;
        }
        if (rc) {
            fprintf(stderr, "redfox run: cannot write %s: %s\n", rf_result_name(res, i),
                    rc == REDFOX_NOMEM ? "out of memory" : "internal error");
            return rc == REDFOX_NOMEM ? RF_EXIT_USER : RF_EXIT_INTERNAL;
        }
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "redfox run: cannot write the output: %s\n", strerror(errno));
        return RF_EXIT_USER;
    }
    return RF_EXIT_OK;
}

static const char *format_ext(int fmt)
{
    return fmt == REDFOX_FORMAT_CSV ? "csv" : fmt == REDFOX_FORMAT_TBL ? "tbl" : "txt";
}

/* rf_db_check_manifest's error (printed where print), as an exit status. */
static int check_manifest(const char *dir, int print)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_status st = rf_db_check_manifest(dir, &d);
    int rc = st ? print ? rf_tool_finish(st, &d) : RF_EXIT_USER : RF_EXIT_OK;
    rf_diags_free(&d);
    return rc;
}

/* Every output into DIR/NAME.EXT under the folder's lock: all written aside
** and synced, then all renamed, or none. */
static int write_outputs(const rf_result *res, const char *outdir, int fmt)
{
    struct stat sb;
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "redfox run: cannot create %s: %s\n", outdir, strerror(errno));
        return RF_EXIT_USER;
    }
    int mrc = check_manifest(outdir, 1);
    if (mrc) return mrc;
    if (stat(outdir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "redfox run: --out %s: not a folder\n", outdir);
        return RF_EXIT_USER;
    }
    int32_t nout = rf_result_count(res);
    rf_diags d;
    rf_diags_init(&d);
    int lock = -1, busy = -1;
    rf_status st = rf_file_lock_try(outdir, &lock, &busy, &d);
    if (!st && lock < 0) {
        fprintf(stderr, "redfox run: waiting for another process writing to %s (it holds %s/%s)\n", outdir, outdir,
                RF_FILE_LOCK_NAME);
        st = rf_file_lock_wait(outdir, busy, &d);
        lock = busy;
    }
    rf_file_out *files = st ? NULL : rf_calloc((size_t)nout + 1, sizeof *files);
    if (!st && !files) {
        rf_error(&d, rf_mkloc(NULL, 0, 0), "out of memory");
        st = RF_ENOMEM;
    }
    for (int32_t i = 0; files && i < nout; i++) rf_file_out_init(&files[i]);
    for (int32_t i = 0; !st && i < nout; i++) {
        const char *name = rf_result_name(res, i);
        if (strchr(name, '/')) {
            rf_error(&d, rf_mkloc(NULL, 0, 0), "the output name '%s' cannot be a file name", name);
            st = RF_EUSER;
            break;
        }
        char *path = rf_sprintf("%s/%s.%s", outdir, name, format_ext(fmt));
        if (!path) {
            rf_error(&d, rf_mkloc(NULL, 0, 0), "out of memory");
            st = RF_ENOMEM;
            break;
        }
        rf_file_remove_stale(path);
        st = rf_file_out_open(&files[i], path, &d);
        free(path);
        if (st) break;
        int rc = rf_result_write_to(res, i, fmt, rf_file_out_write_cb, &files[i]);
        st = rc == REDFOX_OK ? RF_OK : rc == REDFOX_IO ? RF_EIO : rc == REDFOX_NOMEM ? RF_ENOMEM : RF_EINTERNAL;
        if (st && st != RF_EIO)
            rf_error(&d, rf_mkloc(files[i].path, 0, 0), "cannot write: %s",
                     st == RF_ENOMEM ? "out of memory" : "internal error");
        rf_status cst = rf_file_out_close(&files[i], &d);
        if (!st) st = cst;
    }
    /* the renames under the folder's own lock held exclusively, which the
    ** runs reading DIR as a text folder hold shared from their first file to
    ** their last (as tpch gen renames its tables): a run reading the outputs
    ** never reads some of this run and some of another (it did). Not in a
    ** database's folder: that lock is the database's, and no one reads the
    ** outputs there as a text folder (this run may hold it shared) */
    int dirlock = -1, waited = 0;
    if (!st && nout && !rf_db_is_database(outdir)) st = rf_file_lock_folder(outdir, &dirlock, &waited, &d);
    if (!st && waited)
        rf_diag_add(&d, RF_SEV_NOTE, rf_mkloc(outdir, 0, 0),
                    "waited for the runs reading this folder before putting the outputs in place");
    /* SIGINT, SIGTERM and SIGHUP wait for the renames (and their sync), and
    ** then the process ends by the signal, saying that the outputs are in
    ** place (it said nothing, and status 130 read as "not written"); a crash
    ** (SIGKILL) between two renames leaves the journal listing them, which
    ** the next reader or writer of DIR finishes (rf_file_renames_begin) */
    rf_file_commit_begin();
    if (!st && nout) st = rf_file_renames_begin(outdir, files, nout, &d);
    for (int32_t i = 0; !st && i < nout; i++) st = rf_file_out_rename(&files[i], &d);
    if (!st && nout) st = rf_file_sync_dir(files[0].path, &d);
    if (!st && nout) st = rf_file_renames_end(outdir, &d);
    if (!st && rf_file_signal_held())
        fprintf(stderr, "redfox run: stopped by %s once the outputs were in place: all %d are written to %s\n",
                rf_file_signal_name(rf_file_signal_held()), (int)nout, outdir);
    rf_file_commit_end();
    rf_file_unlock(dirlock);
    for (int32_t i = 0; files && i < nout; i++) rf_file_out_abort(&files[i]);
    free(files);
    rf_file_unlock(lock);
    int rc = rf_tool_finish(st, &d);
    rf_diags_free(&d);
    return rc;
}

/* A database that a writer killed mid-commit left aside (DIR.old.PID.N,
** where the system has no exchange) put back at dir before anything looks
** at it (rf_db_restore_missing; its note printed where print): 0, or the
** exit status of its error. */
static int restore_missing(const char *dir, int print)
{
    rf_diags rd;
    rf_diags_init(&rd);
    rf_status st = rf_db_restore_missing(dir, &rd);
    int rc = st || (print && rd.count) ? print ? rf_tool_finish(st, &rd) : RF_EXIT_USER : 0;
    rf_diags_free(&rd);
    return rc;
}

/* The data folder is needed only by a program that reads input files: then
** a missing one is an error naming the folder and the first input that
** reads it. 0 when it is there or not needed (*needed says which). */
static int check_data_folder(const rf_program *p, const char *data, int print, int *needed)
{
    int32_t first = -1;
    for (int32_t i = 0; i < rf_program_input_count(p) && first < 0; i++)
        if (rf_program_input_file(p, i)) first = i;
    struct stat sb;
    *needed = first >= 0;
    if (first >= 0 && restore_missing(data, print)) return 1;
    if (first < 0 || (stat(data, &sb) == 0 && S_ISDIR(sb.st_mode))) return 0;
    int exists = stat(data, &sb) == 0;
    if (print)
        fprintf(stderr, "redfox: error: the data folder %s %s: input `%s` reads %s/%s\n", data,
            exists ? "is not a folder" : "does not exist", rf_program_input_predicate(p, first), data,
            rf_program_input_file(p, first));
    return 1;
}

/* An output that would replace one of the run's own inputs, a program file
** or an input file in the data folder (--out . beside flights.csv, with an
** output named flights; --trace PROG.logic), is refused before the run:
** exit 2 naming the option (printed when print). 0 when none does. */
static int refuse_output_over_input(const rf_program *p, const char *const *progs, int32_t nprogs, const char *data,
                                    const char *outdir, int fmt, const char *trace_path, int print)
{
    int32_t nout = outdir ? rf_program_output_count(p) : 0;
    for (int32_t k = -1; k < nout; k++) {
        const char *name = k < 0 ? NULL : rf_program_output_name(p, k);
        if (k < 0 ? !trace_path : !name || strchr(name, '/')) continue;
        char *out = k < 0 ? rf_strdup(trace_path) : rf_sprintf("%s/%s.%s", outdir, name, format_ext(fmt));
        if (!out) return rf_tool_finish_api(REDFOX_NOMEM, NULL, 0, NULL, print);
        const char *victim = NULL, *what = "program";
        char *input = NULL;
        for (int32_t i = 0; i < nprogs && !victim; i++)
            if (rf_tool_same_file(out, progs[i])) victim = progs[i];
        if (!victim) what = "input";
        for (int32_t i = 0; data && i < rf_program_input_count(p) && !victim; i++) {
            const char *file = rf_program_input_file(p, i);
            if (!file) continue;
            free(input);
            input = rf_sprintf("%s/%s", data, file);
            if (input && rf_tool_same_file(out, input)) victim = input;
        }
        int rc = RF_EXIT_OK;
        if (victim && !print) rc = RF_EXIT_USAGE;
        else if (victim && k < 0)
            rc = rf_tool_usage_error("run", "--trace %s is the %s file '%s': the trace would replace it "
                                     "(give another --trace)", trace_path, what, victim);
        else if (victim)
            rc = rf_tool_usage_error("run", "--out %s would replace the %s file '%s' with the output %s "
                                     "(give another --out)", outdir, what, victim, name);
        free(input);
        free(out);
        if (rc) return rc;
    }
    return RF_EXIT_OK;
}

/* --repeat N --profile: the first run's --device auto lines (the profile
** printed at the end is the last run's, which weighs one run): where the
** process chose to run, and against how many runs. */
static int pick_auto(const char *line, size_t len) { return len >= 6 && !strncmp(line, "auto: ", 6); }

int rf_tool_run(int argc, char **argv)
{
    const char *progs[256];
    int32_t nprogs = 0;
    const char *prog = NULL, *data = ".", *device = "auto", *format = NULL, *outdir = NULL, *threads = NULL,
               *maxit = NULL, *repeat_s = NULL, *trace_path = NULL, *gpus_s = NULL;
    int profile = 0, no_fuse = 0, no_lftj = 0, no_exists = 0, no_partagg = 0, no_hoist = 0, no_keyjoin = 0;
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
        if (!strcmp(a, "--no-lftj")) {
            no_lftj = 1;
            continue;
        }
        if (!strcmp(a, "--no-exists")) {
            no_exists = 1;
            continue;
        }
        if (!strcmp(a, "--no-partagg")) {
            no_partagg = 1;
            continue;
        }
        if (!strcmp(a, "--no-hoist")) {
            no_hoist = 1;
            continue;
        }
        if (!strcmp(a, "--no-keyjoin")) {
            no_keyjoin = 1;
            continue;
        }
        if ((m = rf_tool_opt_set("run", argc, argv, &i, &tune, sets, &nsets)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--data", &data)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--device", &device)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--format", &format)) ||
            (m = rf_tool_opt_out("run", argc, argv, &i, "--out", &outdir)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--threads", &threads)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--max-iterations", &maxit)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--repeat", &repeat_s)) ||
            (m = rf_tool_opt_out("run", argc, argv, &i, "--trace", &trace_path)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--gpus", &gpus_s))) {
            if (m < 0) return RF_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            return rf_tool_unknown_option("run", a, usage);
        } else if (nprogs == 256) {
            return rf_tool_usage_error("run", "too many files (at most 256)");
        } else {
            progs[nprogs++] = prog = a;
        }
    }
    if (!prog) return rf_tool_usage_error("run", "no program given");
    int64_t gpus = 0;
    if (gpus_s) {
        if (!rf_tool_parse_int(gpus_s, 1, 4096, &gpus)) return rf_tool_usage_error("run", "--gpus takes a number from 1 to 4096");
        int given = 0; /* --device cpu or auto beside --gpus contradicts it */
        for (int i = 1; i < argc; i++) given |= !strncmp(argv[i], "--device", 8);
        if (given && strcmp(device, "gpu")) return rf_tool_usage_error("run", "--gpus runs on GPUs: it takes no --device %s", device);
        device = "gpu";
        if (gpus > 1 && !rf_rt_dist_launched()) {
            if (!rf_rt_dist_have_mpi())
                return rf_tool_usage_error("run", "--gpus %lld needs several ranks, but this redfox was built without MPI "
                                           "(install libopenmpi-dev and rebuild)", (long long)gpus);
            return rf_tool_run_ranks("run", argc, argv, gpus);
        }
    }
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.profile = profile;
    o.no_fuse = no_fuse;
    if (isatty(STDERR_FILENO)) o.progress = rf_tool_draw_progress;
    rf_tool_apply_tuning(&tune); /* huge pages: process-wide, the command's to set */
    o.cache_dir = tune.cache_dir;
    o.gpu_memory = tune.gpu_memory > 0 ? (uint64_t)tune.gpu_memory : 0;
    if (!format) format = outdir ? "csv" : "table";
    if (!strcmp(device, "auto")) o.device = REDFOX_DEVICE_AUTO;
    else if (!strcmp(device, "cpu")) o.device = REDFOX_DEVICE_CPU;
    else if (!strcmp(device, "gpu")) o.device = REDFOX_DEVICE_GPU;
    else return rf_tool_usage_error("run", "unknown device '%s' (auto, cpu or gpu)", device);
    int fmt;
    if (!strcmp(format, "table")) fmt = REDFOX_FORMAT_TABLE;
    else if (!strcmp(format, "csv")) fmt = REDFOX_FORMAT_CSV;
    else if (!strcmp(format, "tbl")) fmt = REDFOX_FORMAT_TBL;
    else return rf_tool_usage_error("run", "unknown format '%s' (table, csv or tbl)", format);
    int64_t v;
    if (threads && !rf_tool_threads("run", threads, &o.threads)) return RF_EXIT_USAGE;
    if (maxit) {
        if (!rf_tool_parse_int(maxit, 1, INT64_MAX, &v)) return rf_tool_usage_error("run", "--max-iterations takes a positive number");
        o.max_iterations = v;
    }
    int64_t repeat = 1;
    if (repeat_s && !rf_tool_parse_int(repeat_s, 1, 1000000, &repeat))
        return rf_tool_usage_error("run", "--repeat takes a number from 1 to 1000000");
    rf_trace *trace = NULL;
    if (trace_path && !(trace = rf_trace_new())) return rf_tool_finish_api(REDFOX_NOMEM, NULL, 0, NULL, 1);
    o.trace = trace;
    char *settings = rf_tool_settings_text(sets, nsets);
    if (!settings) {
        rf_trace_free(trace);
        return rf_tool_finish_api(REDFOX_NOMEM, NULL, 0, NULL, 1);
    }
    o.settings = settings;
    rf_diags d;
    rf_diags_init(&d);
    /* several ranks when mpirun started this process */
    rf_world *world = NULL;
    int wcode = rf_tool_world_start(&argc, &argv, sets, nsets, &world);
    if (wcode) {
        int wrc = rf_tool_finish_api(wcode, world, rf_world_diag_count(world), world_diag, 1);
        rf_world_end(world, 0);
        free(settings);
        rf_trace_free(trace);
        return wrc;
    }
    o.world = world;
    int rank = rf_world_rank(world), nranks = rf_world_size(world);
    int rc = RF_EXIT_OK;
    if (gpus && gpus != nranks)
        rc = rank ? RF_EXIT_USAGE : rf_tool_usage_error("run", "--gpus %lld, but mpirun started %d ranks", (long long)gpus, nranks);
    if (rc) {
        free(settings);
        rf_trace_free(trace);
        rf_world_end(world, rc);
        return rc;
    }
    /* GPU ranks run the Kernel Weaver's fused kernels where no move between
    ** ranks falls inside one's span (rt_run.c asks rf_rt_dist_span_still) */
    if (!threads && rf_world_local_size(world) > 1) {
        /* ranks on one host share its cores */
        int t = rf_online_cpus() / rf_world_local_size(world);
        o.threads = t > 1 ? t : 1;
    }
    /* the program: its files read here ("-" and pipes), compiled by the library */
    rf_arena arena;
    rf_arena_init(&arena);
    rf_tool_sources src;
    rf_compile_options co;
    rf_compile_options_init(&co, sizeof co);
    co.no_lftj = no_lftj;
    co.no_exists = no_exists;
    co.no_partagg = no_partagg;
    co.no_hoist = no_hoist;
    co.no_keyjoin = no_keyjoin;
    rf_program *p = NULL;
    rf_database *db = NULL;
    rf_result *res = NULL;
    double c0 = rf_trace_clock();
    /* what every rank finds alike (the compiler's messages) rank 0 prints */
    rf_status st = rf_tool_read_sources(progs, nprogs, &arena, &src, &d);
    if (st) rc = rank ? rf_tool_exit_code(st) : rf_tool_finish(st, &d);
    else {
        /* a .rfx file holds its plan: the plan's switches, which act while
        ** compiling LogiQL, cannot change it, and the user is told so */
        const char *plan_switches[5] = {no_lftj ? "--no-lftj" : NULL, no_exists ? "--no-exists" : NULL,
                                        no_partagg ? "--no-partagg" : NULL, no_hoist ? "--no-hoist" : NULL,
                                        no_keyjoin ? "--no-keyjoin" : NULL};
        int32_t rfx = -1;
        for (int32_t i = 0; rank == 0 && i < src.n && rfx < 0; i++)
            if (rf_tool_source_is_rfx(&src, i)) rfx = i;
        for (int k = 0; rfx >= 0 && k < 5; k++)
            if (plan_switches[k])
                fprintf(stderr,
                        "redfox run: note: %s acts when compiling LogiQL: %s runs the plan it was compiled with "
                        "(`redfox compile %s` makes one without)\n",
                        plan_switches[k], src.names[rfx], plan_switches[k]);
        int code = rf_compile_buffers_v2(src.names, src.texts, src.lens, src.n, &co, &p);
        rc = rf_tool_finish_program(code, p, rank == 0);
    }
    rf_tool_sources_free(&src);
    double t_loaded = rf_trace_clock();
    if (trace) rf_trace_event(trace, "phase", "compile", c0, t_loaded, -1);
    int needed = 0;
    if (!rc && check_data_folder(p, data, rank == 0, &needed)) rc = RF_EXIT_USER;
    /* --out naming a database a killed commit left aside: put back, not
    ** created anew as a folder of text files beside it */
    if (!rc && outdir) rc = restore_missing(outdir, rank == 0);
    /* --out naming a file fails now, not after a run whose outputs it would lose */
    struct stat ob;
    if (!rc && outdir && stat(outdir, &ob) == 0 && !S_ISDIR(ob.st_mode)) {
        if (rank == 0) fprintf(stderr, "redfox run: --out %s: not a folder\n", outdir);
        rc = RF_EXIT_USER;
    }
    /* a folder whose manifest.rfdb links to nothing: a broken database,
    ** not a folder to write the outputs into (write_outputs asks again) */
    if (!rc && outdir && rf_db_is_database(outdir)) rc = check_manifest(outdir, rank == 0);
    if (!rc && (rc = refuse_output_over_input(p, progs, nprogs, needed ? data : NULL, outdir, fmt, trace_path,
                                              rank == 0)) != 0 && trace) {
        rf_trace_free(trace); /* not written either: it would replace an input */
        trace = NULL;
        o.trace = NULL;
    }
    /* a database read under its shared lock: a `redfox exec` commit waits
    ** for the run, and a run for a commit under way (released at the end);
    ** a text folder likewise, against `tpch gen` putting new tables in place */
    int dblock = -1, data_is_db = needed && rf_db_is_database(data);
    if (!rc && needed) {
        rf_diags ld;
        rf_diags_init(&ld);
        int waited = 0;
        rf_status lst = data_is_db ? rf_file_lock_folder_shared(data, &dblock, &waited, &ld)
                                   : rf_file_lock_text_folder_shared(data, &dblock, &waited, &ld);
        /* (and a note: a killed writer's renames finished, rf_file.h) */
        if (lst || (rank == 0 && ld.count)) rc = rf_tool_finish(lst, &ld);
        rf_diags_free(&ld);
    }
    if (!rc) { /* a program without input files runs wherever its data folder is missing */
        int code = rf_open(needed ? data : NULL, &db);
        if (code) rc = rf_tool_finish_database(code, db, rank == 0);
    }
    if (!rc && repeat > 1) rf_database_keep_inputs(db, 1); /* repeated runs read the inputs once */
    int ran = 0; /* the run started (several ranks: it may have failed on this one) */
    int code = REDFOX_OK;
    char *warned = NULL; /* the earlier runs' warnings printed */
    for (int64_t r = 0; !rc && r < repeat && !code; r++) {
        rf_result_free(res);
        res = NULL;
        ran = 1;
        /* the last run's teardown is left to the process's end (rf_tool_exit_now below) */
        o.process_exits = r == repeat - 1 && rf_tool_exits_early();
        o.runs = repeat - r; /* auto weighs the GPU's start against the runs left */
        code = rf_run(db, p, &o, &res);
        if (!code && r < repeat - 1 && rank == 0) rf_tool_print_new_warnings(db, &warned);
        if (!code && rf_result_device_log(res)) fputs(rf_result_device_log(res), stderr);
        if (!code && repeat > 1 && rank == 0)
            fprintf(stderr, "run %lld of %lld (device %s): load %.6f s, run %.6f s\n", (long long)(r + 1),
                    (long long)repeat, rf_result_device(res), rf_result_load_seconds(res), rf_result_run_seconds(res));
        char prefix[64];
        snprintf(prefix, sizeof prefix, "run %lld of %lld: ", (long long)(r + 1), (long long)repeat);
        if (!code && repeat > 1 && rank == 0 && profile && r == 0) rf_tool_profile_lines(res, prefix, pick_auto);
        /* what each run read and copied (kept inputs: only the first copies) */
        if (!code && repeat > 1 && rank == 0 && profile) rf_tool_profile_lines(res, prefix, rf_tool_pick_load);
    }
    double t_ran = rf_trace_clock();
    /* a text folder's lock is let go once its files are read, before the
    ** outputs are written: --out DIR takes DIR/.redfox.lock, which `tpch
    ** gen` holds while it waits for this lock to put its tables in place
    ** (DIR the data folder: each would wait for the other for ever) */
    if (!data_is_db) {
        rf_file_unlock(dblock);
        dblock = -1;
    }
    /* a run's messages: rank 0's, or those of the rank that failed (runtime/dist) */
    /* (less the warnings an earlier run printed: each text once) */
    if (ran) rc = rf_tool_finish_database_seen(code, db, rank == 0 || (code && rf_tool_run_reports(rank)), warned);
    free(warned);
    if (!rc && rank == 0) { /* with several ranks, rank 0 holds and writes the outputs */
        if (profile) rf_result_profile_write(res, stderr);
        double t_out = rf_trace_clock();
        rc = outdir ? write_outputs(res, outdir, fmt) : print_outputs(res, fmt);
        if (trace) rf_trace_event(trace, "phase", "output", t_out, rf_trace_clock(), -1);
        if (profile) {
            double t_end = rf_trace_clock();
            fflush(stdout);
            fprintf(stderr,
                    "process: %.3f ms from its start to the program loaded, %.3f ms in the run%s, %.3f ms writing "
                    "the outputs, %.3f ms in all\n",
                    (t_loaded - rf_tool_start) * 1e3, (t_ran - t_loaded) * 1e3, repeat > 1 ? "s" : "",
                    (t_end - t_out) * 1e3, (t_end - rf_tool_start) * 1e3);
        }
    }
    /* written after a failed run too: the timeline up to the error */
    if (trace && rank == 0) {
        int tcode = rf_trace_write(trace, trace_path, "redfox run");
        int trc = tcode ? rf_tool_finish_trace(tcode, trace, 1) : RF_EXIT_OK;
        if (rc == RF_EXIT_OK) rc = trc;
    }
    if (rf_tool_exits_early()) {
        /* outputs written and renamed, the trace written: nothing left but
        ** freeing, which the process's end does at once */
        rf_world_end(world, rc);
        return rf_tool_exit_now(rc, nranks);
    }
    rf_trace_free(trace);
    rf_result_free(res);
    rf_close(db);
    rf_file_unlock(dblock);
    rf_program_free(p);
    free(settings);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    rf_world_end(world, rc);
    return rc;
}
