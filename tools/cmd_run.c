/*
** tools/cmd_run.c: `redfox run`: run a program on input files and print or
** write its outputs.
*/
#include "pipeline.h"
#include "rf_file.h"
#include "rf_runtime.h"
#include "rf_rt_dist.h"
#include "rf_rt_trace.h"
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
    "                  [--max-iterations N] [--no-fuse] [--no-lftj] [--no-exists] [--repeat N]\n"
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
    "                       row, a string's |, newline and CR written \\|, \\n, \\r\n"
    "                       With several outputs on standard output, each comes\n"
    "                       under a line \"NAME (N rows)\", a blank line between\n"
    "                       them (with one csv or tbl output, only its rows);\n"
    "                       use --out for one clean file per output\n"
    "  --out DIR            write DIR/NAME.csv (csv), DIR/NAME.tbl (tbl) or\n"
    "                       DIR/NAME.txt (table) for every output instead of\n"
    "                       printing; DIR is created if missing. Files are written\n"
    "                       aside and renamed into place only when all were\n"
    "                       written and synced, so a failed or killed run leaves\n"
    "                       the folder's files as they were (a crash during the\n"
    "                       final renames may leave some new, some old). A second\n"
    "                       run writing the same DIR waits for the first to finish\n"
    "                       (a lock on DIR/.redfox.lock). An output file that is a\n"
    "                       symbolic link is refused, never written through\n"
    "  --profile            print per-kernel device, time and rows to stderr (GPU:\n"
    "                       kernels fused by the Kernel Weaver show device\n"
    "                       \"fused\", the first one the whole fused kernel's time;\n"
    "                       \"-\" rows: a result kept in registers, never written)\n"
    "  --no-fuse            GPU: run every kernel separately, without the Kernel\n"
    "                       Weaver's fused kernels (default: fused; `redfox dump\n"
    "                       --fused` lists them). Results are identical either way\n"
    "  --no-lftj            compiling .logic files: join cyclic bodies (triangles,\n"
    "                       cliques) with binary joins, not the leapfrog triejoin\n"
    "  --no-exists          compiling PROG.logic: keep joins that only test that\n"
    "                       another row exists as joins (see `redfox compile`)\n"
    "  --threads N          CPU threads (default: all cores; with several ranks on\n"
    "                       a host, its cores divided among them)\n"
    "  --max-iterations N   stop with an error when a recursive stratum has run\n"
    "                       N rounds without reaching its fixpoint; the error\n"
    "                       names its predicates and their sizes (default: no\n"
    "                       limit)\n"
    "  --repeat N           run the program N times in this process and print each\n"
    "                       run's load and run time to stderr; outputs and\n"
    "                       --profile are the last run's. The input files are read\n"
    "                       once (the first run's load); each run copies them to\n"
    "                       its device again. The first run also pays for starting\n"
    "                       the GPU's kernels\n"
    "  --set NAME=VALUE     a tuning setting (below; repeatable)\n"
    "  --gpu-memory N       cap the GPU memory the run uses (bytes, K/M/G/T;\n"
    "                       the same as --set gpu_memory=N)\n"
    "  --cache-dir DIR      where the GPU's compiled code is cached (NVRTC, JIT,\n"
    "                       emulator; default $XDG_CACHE_HOME/redfox, else\n"
    "                       ~/.cache/redfox); --no-cache: none\n"
    "  --trace FILE         write the run's timeline to FILE as Chrome trace-event\n"
    "                       JSON (open it in https://ui.perfetto.dev): compile,\n"
    "                       each input's load, each kernel, and on the GPU each\n"
    "                       launch, copy and wait as the host saw it\n"
    "\n"
    "Started by mpirun (mpirun -np N redfox run ... --device cpu|gpu), the N\n"
    "processes run the program together, each on its share of the rows:\n"
    "relations are hash-partitioned by the keys of the joins, groups and\n"
    "dedupes that need them and exchanged over MPI; rank 0 writes the outputs,\n"
    "identical to one process's. --profile adds each rank's time and bytes\n"
    "sent. A rank that fails stops all of them (see rank_timeout_s below).\n"
    "  --gpus N             run on N GPUs of this host, one rank per GPU (rank r\n"
    "                       on GPU r mod the GPUs visible): redfox starts the N\n"
    "                       ranks itself under Open MPI's mpirun (implies --device\n"
    "                       gpu). Ranks exchange rows GPU to GPU with NCCL where\n"
    "                       every rank has a GPU of its own and libnccl.so.2 loads,\n"
    "                       else through host memory (--profile says which)\n"
    "  -h, --help           this text\n";

static int print_outputs(const rf_rt_result *res, rf_rt_format fmt)
{
    for (int32_t i = 0; i < res->noutputs; i++) {
        const rf_rt_output *o = &res->outputs[i];
        if (res->noutputs > 1 || fmt == RF_RT_FORMAT_TABLE)
            printf("%s%s (%lld row%s)\n", i ? "\n" : "", o->name, (long long)o->rel.nrows, o->rel.nrows == 1 ? "" : "s");
        rf_status st = rf_rt_write_rel(&o->rel, o->var->colnames, res->dict, fmt, stdout);
        if (st == RF_EIO) {
            fprintf(stderr, "redfox run: cannot write the output: %s\n", strerror(errno));
            return RF_EXIT_USER;
        }
        if (st) {
            fprintf(stderr, "redfox run: cannot write %s: %s\n", o->name,
                    st == RF_ENOMEM ? "out of memory" : "internal error");
            return rf_tool_exit_code(st);
        }
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "redfox run: cannot write the output: %s\n", strerror(errno));
        return RF_EXIT_USER;
    }
    return RF_EXIT_OK;
}

static const char *format_ext(rf_rt_format fmt)
{
    return fmt == RF_RT_FORMAT_CSV ? "csv" : fmt == RF_RT_FORMAT_TBL ? "tbl" : "txt";
}

/* Every output into DIR/NAME.EXT under the folder's lock: all written aside
** and synced, then all renamed, or none. */
static int write_outputs(const rf_rt_result *res, const char *outdir, rf_rt_format fmt)
{
    struct stat sb;
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "redfox run: cannot create %s: %s\n", outdir, strerror(errno));
        return RF_EXIT_USER;
    }
    if (stat(outdir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "redfox run: --out %s: not a folder\n", outdir);
        return RF_EXIT_USER;
    }
    rf_diags d;
    rf_diags_init(&d);
    int lock = -1, busy = -1;
    rf_status st = rf_file_lock_try(outdir, &lock, &busy, &d);
    if (!st && lock < 0) {
        fprintf(stderr, "redfox run: waiting for another run writing to %s (it holds %s/%s)\n", outdir, outdir,
                RF_FILE_LOCK_NAME);
        st = rf_file_lock_wait(outdir, busy, &d);
        lock = busy;
    }
    rf_file_out *files = st ? NULL : rf_calloc((size_t)res->noutputs + 1, sizeof *files);
    if (!st && !files) {
        rf_error(&d, rf_mkloc(NULL, 0, 0), "out of memory");
        st = RF_ENOMEM;
    }
    for (int32_t i = 0; files && i < res->noutputs; i++) rf_file_out_init(&files[i]);
    for (int32_t i = 0; !st && i < res->noutputs; i++) {
        const rf_rt_output *o = &res->outputs[i];
        if (strchr(o->name, '/')) {
            rf_error(&d, rf_mkloc(NULL, 0, 0), "the output name '%s' cannot be a file name", o->name);
            st = RF_EUSER;
            break;
        }
        char *path = rf_sprintf("%s/%s.%s", outdir, o->name, format_ext(fmt));
        if (!path) {
            rf_error(&d, rf_mkloc(NULL, 0, 0), "out of memory");
            st = RF_ENOMEM;
            break;
        }
        rf_file_remove_stale(path);
        st = rf_file_out_open(&files[i], path, &d);
        free(path);
        if (st) break;
        st = rf_rt_write_rel_to(&o->rel, o->var->colnames, res->dict, fmt, rf_file_out_write_cb, &files[i]);
        if (st && st != RF_EIO)
            rf_error(&d, rf_mkloc(files[i].path, 0, 0), "cannot write: %s",
                     st == RF_ENOMEM ? "out of memory" : "internal error");
        rf_status cst = rf_file_out_close(&files[i], &d);
        if (!st) st = cst;
    }
    /* the only window: a crash between two renames leaves some new, some old */
    for (int32_t i = 0; !st && i < res->noutputs; i++) st = rf_file_out_rename(&files[i], &d);
    if (!st && res->noutputs) st = rf_file_sync_dir(files[0].path, &d);
    for (int32_t i = 0; files && i < res->noutputs; i++) rf_file_out_abort(&files[i]);
    free(files);
    rf_file_unlock(lock);
    int rc = rf_tool_finish(st, &d);
    rf_diags_free(&d);
    return rc;
}

/* The data folder is needed only by a program that reads input files: then
** a missing one is an error naming the folder and the first input that
** reads it. */
static rf_status check_data_folder(const rf_hir_program *p, const char *data, rf_diags *d)
{
    const rf_hir_var *first = NULL;
    for (int32_t i = 0; i < p->nvars && !first; i++)
        if (p->vars[i]->input_file) first = p->vars[i];
    struct stat sb;
    if (!first || (stat(data, &sb) == 0 && S_ISDIR(sb.st_mode))) return RF_OK;
    int exists = stat(data, &sb) == 0;
    const char *pred = first->pred_name ? first->pred_name : first->name;
    rf_error(d, rf_mkloc(NULL, 0, 0), "the data folder %s %s: input `%s` reads %s/%s", data,
             exists ? "is not a folder" : "does not exist", pred, data, first->input_file);
    return RF_EUSER;
}

int rf_tool_run(int argc, char **argv)
{
    const char *progs[256];
    int32_t nprogs = 0;
    const char *prog = NULL, *data = ".", *device = "auto", *format = NULL, *outdir = NULL, *threads = NULL,
               *maxit = NULL, *repeat_s = NULL, *trace_path = NULL, *gpus_s = NULL;
    int profile = 0, no_fuse = 0, no_lftj = 0, no_exists = 0;
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
        if (!strcmp(a, "--no-lftj")) {
            no_lftj = 1;
            continue;
        }
        if (!strcmp(a, "--no-exists")) {
            no_exists = 1;
            continue;
        }
        if ((m = rf_tool_opt_set("run", argc, argv, &i, &tune)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--data", &data)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--device", &device)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--format", &format)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--out", &outdir)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--threads", &threads)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--max-iterations", &maxit)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--repeat", &repeat_s)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--trace", &trace_path)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--gpus", &gpus_s))) {
            if (m < 0) return RF_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            return rf_tool_usage_error("run", "unknown option '%s'", a);
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
            return rf_tool_run_ranks(argc, argv, gpus);
        }
    }
    rf_rt_options o;
    memset(&o, 0, sizeof o);
    o.data_dir = data;
    o.profile = profile;
    o.no_fuse = no_fuse;
    rf_tool_show_progress(&o);
    o.tuning = &tune;
    rf_tool_apply_tuning(&tune);
    rf_rt_format fmt;
    if (!format) format = outdir ? "csv" : "table";
    if (!rf_tool_run_options("run", device, threads, format, &o, &fmt)) return RF_EXIT_USAGE;
    int64_t v;
    if (maxit) {
        if (!rf_tool_parse_int(maxit, 1, INT64_MAX, &v)) return rf_tool_usage_error("run", "--max-iterations takes a positive number");
        o.max_iterations = v;
    }
    int64_t repeat = 1;
    if (repeat_s && !rf_tool_parse_int(repeat_s, 1, 1000000, &repeat))
        return rf_tool_usage_error("run", "--repeat takes a number from 1 to 1000000");
    rf_rt_trace_log trace;
    rf_rt_trace_log_init(&trace);
    if (trace_path) {
        o.trace = rf_rt_trace_log_fn;
        o.trace_ctx = &trace;
    }
    rf_diags d;
    rf_diags_init(&d);
    /* several ranks when mpirun started this process (runtime/dist) */
    rf_rt_dist_world *world = NULL;
    rf_status wst = rf_rt_dist_world_start(&argc, &argv, &world, &d);
    if (wst) return rf_tool_finish(wst, &d);
    int rank = rf_rt_dist_world_rank(world), nranks = rf_rt_dist_world_size(world);
    if (gpus && gpus != nranks) {
        rf_rt_dist_world_end(world, RF_EXIT_USAGE);
        return rank ? RF_EXIT_USAGE
                    : rf_tool_usage_error("run", "--gpus %lld, but mpirun started %d ranks", (long long)gpus, nranks);
    }
    if (nranks > 1 && repeat > 1) {
        rf_rt_dist_world_end(world, RF_EXIT_USAGE);
        return rank ? RF_EXIT_USAGE : rf_tool_usage_error("run", "--repeat runs one process only");
    }
    o.world = world;
    /* GPU ranks run every kernel separately: a fused group whose later
    ** stage reads a relation that moves between ranks before that stage
    ** lost rows (tests/e2e/strings_two.logic at -np 2), so until the moves
    ** are made before the whole group, no fused kernels on several ranks */
    if (nranks > 1) o.no_fuse = 1;
    if (!threads && rf_rt_dist_world_local_size(world) > 1) {
        /* ranks on one host share its cores */
        int t = rf_online_cpus() / rf_rt_dist_world_local_size(world);
        o.threads = t > 1 ? t : 1;
    }
    rf_arena arena;
    rf_arena_init(&arena);
    rf_hir_program *hir = NULL;
    rf_tool_opts to = {0};
    to.no_lftj = no_lftj;
    to.no_exists = no_exists;
    rf_buf ptx0, gpln;
    rf_buf_init(&ptx0);
    rf_buf_init(&gpln);
    int is_rfx = 0;
    double c0 = rf_now();
    rf_status st = rf_tool_load_program(progs, nprogs, &to, &arena, &hir, &ptx0, &gpln, &is_rfx, &d);
    double t_loaded = rf_now();
    rf_rt_trace_log_event(&trace, "phase", "compile", c0, t_loaded, -1);
    rf_rt_result *res = NULL;
    if (!st) st = check_data_folder(hir, data, &d);
    int ran = 0; /* the run started (several ranks: it may have failed on this one) */
    /* repeated runs share the parsed inputs, as `tpch run` does */
    if (!st && repeat > 1 && !(o.cache = rf_rt_cache_new())) st = RF_ENOMEM;
    if (!st) {
        o.ptx0 = ptx0.len ? ptx0.data : NULL;
        o.ptx0_size = (uint64_t)ptx0.len;
        o.gpu_plan = gpln.len ? gpln.data : NULL;
        o.gpu_plan_size = (uint64_t)gpln.len;
        o.rfx_file = !is_rfx ? NULL : strcmp(progs[0], "-") ? progs[0] : "<stdin>"; /* (as messages name it) */
        for (int64_t r = 0; r < repeat && !st; r++) {
            rf_rt_result_free(res);
            res = NULL;
            double r0 = rf_now();
            ran = 1;
            /* the last run's teardown is left to the process's end (rf_tool_exit_now below) */
            o.process_exits = r == repeat - 1 && rf_tool_exits_early();
            st = rf_rt_run(hir, &o, &res, &d);
            rf_rt_trace_log_event(&trace, "phase", "run", r0, rf_now(), -1);
            if (!st && res->gpu_trace) fputs(res->gpu_trace, stderr);
            if (!st && repeat > 1)
                fprintf(stderr, "run %lld of %lld (device %s): load %.6f s, run %.6f s\n", (long long)(r + 1),
                        (long long)repeat, res->device, res->load_seconds, res->run_seconds);
        }
    }
    if (rank != 0 && (!st || !ran)) {
        /* what every rank found alike (the compiler's messages) rank 0 prints;
        ** a failed run's messages come from the rank that failed (runtime/dist) */
        rf_diags_free(&d);
        rf_diags_init(&d);
    }
    double t_ran = rf_now();
    int rc = rf_tool_finish(st, &d);
    if (!st && rank == 0) { /* with several ranks, rank 0 holds and writes the outputs */
        if (profile) rf_tool_print_profile(res, stderr);
        double t_out = rf_now();
        rc = outdir ? write_outputs(res, outdir, fmt) : print_outputs(res, fmt);
        rf_rt_trace_log_event(&trace, "phase", "output", t_out, rf_now(), -1);
        if (profile) {
            double t_end = rf_now();
            fflush(stdout);
            fprintf(stderr,
                    "process: %.3f ms from its start to the program loaded, %.3f ms in the run%s, %.3f ms writing "
                    "the outputs, %.3f ms in all\n",
                    (t_loaded - rf_tool_start) * 1e3, (t_ran - t_loaded) * 1e3, repeat > 1 ? "s" : "",
                    (t_end - t_out) * 1e3, (t_end - rf_tool_start) * 1e3);
        }
    }
    /* written after a failed run too: the timeline up to the error */
    if (trace_path && rank == 0) {
        rf_diags td;
        rf_diags_init(&td);
        rf_status tst = rf_rt_trace_log_write(&trace, trace_path, "redfox run", &td);
        int trc = tst ? rf_tool_finish(tst, &td) : RF_EXIT_OK;
        if (rc == RF_EXIT_OK) rc = trc;
        rf_diags_free(&td);
    }
    if (rf_tool_exits_early()) {
        /* outputs written and renamed, the trace written: nothing left but
        ** freeing, which the process's end does at once */
        rf_rt_dist_world_end(world, rc);
        return rf_tool_exit_now(rc);
    }
    rf_rt_trace_log_free(&trace);
    rf_rt_result_free(res); /* before the cache: it borrows the cache's dictionary */
    rf_rt_cache_free(o.cache);
    rf_buf_free(&ptx0);
    rf_buf_free(&gpln);
    rf_hir_free(hir);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    rf_rt_dist_world_end(world, rc);
    return rc;
}
