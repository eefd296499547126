/*
** tools/cmd_run.c: `redfox run`: run a program on input files and print or
** write its outputs.
*/
#include "pipeline.h"
#include "rf_runtime.h"
#include "tools.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *usage =
    "usage: redfox run PROG.rfx|PROG.logic [--data DIR] [--device auto|cpu|gpu]\n"
    "                  [--format table|csv] [--out DIR] [--profile] [--threads N]\n"
    "                  [--max-iterations N] [--no-fuse] [--repeat N]\n"
    "\n"
    "Runs a compiled program (or compiles a .logic file first) on the\n"
    "lang:input files found in DIR, and prints every lang:output relation.\n"
    "\n"
    "options:\n"
    "  --data DIR           where the input files are (default: .), or a redfox\n"
    "                       database (`redfox import`): then only the columns the\n"
    "                       program reads are read\n"
    "  --device D           auto (default: the GPU when there is one), cpu or gpu\n"
    "  --format F           table (default) or csv ('|'-separated, header row)\n"
    "  --out DIR            write DIR/NAME.csv for every output instead of printing\n"
    "  --profile            print per-kernel device, time and rows to stderr (GPU:\n"
    "                       kernels fused by the Kernel Weaver show device\n"
    "                       \"fused\", the first one the whole fused kernel's time;\n"
    "                       \"-\" rows: a result kept in registers, never written)\n"
    "  --no-fuse            GPU: run every kernel separately, without the Kernel\n"
    "                       Weaver's fused kernels (default: fused; `redfox dump\n"
    "                       --fused` lists them). Results are identical either way\n"
    "  --threads N          CPU threads (default: all cores)\n"
    "  --max-iterations N   stop a recursive stratum after N rounds (default 1000000)\n"
    "  --repeat N           run the program N times in this process and print each\n"
    "                       run's load and run time to stderr; outputs and\n"
    "                       --profile are the last run's. The input files are read\n"
    "                       once (the first run's load); each run copies them to\n"
    "                       its device again. The first run also pays for starting\n"
    "                       the GPU's kernels\n"
    "  -h, --help           this text\n";

static int write_outputs(const rf_rt_result *res, const char *outdir, rf_rt_format fmt)
{
    int rc = RF_EXIT_OK;
    if (outdir && mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "redfox run: cannot create %s: %s\n", outdir, strerror(errno));
        return RF_EXIT_USER;
    }
    for (int32_t i = 0; i < res->noutputs; i++) {
        const rf_rt_output *o = &res->outputs[i];
        FILE *f = stdout;
        char *path = NULL;
        if (outdir) {
            path = rf_sprintf("%s/%s.csv", outdir, o->name);
            f = path ? fopen(path, "w") : NULL;
            if (!f) {
                fprintf(stderr, "redfox run: cannot write %s: %s\n", path ? path : o->name, strerror(errno));
                free(path);
                rc = RF_EXIT_USER;
                continue;
            }
        } else if (res->noutputs > 1 || fmt == RF_RT_FORMAT_TABLE) {
            printf("%s%s (%lld rows)\n", i ? "\n" : "", o->name, (long long)o->rel.nrows);
        }
        rf_status st = rf_rt_write_rel(&o->rel, o->var->colnames, res->dict, outdir ? RF_RT_FORMAT_CSV : fmt, f);
        if (outdir) {
            if (fclose(f) != 0 && !st) st = RF_EIO;
        }
        if (st) {
            fprintf(stderr, "redfox run: error writing %s\n", path ? path : "the output");
            rc = RF_EXIT_USER;
        }
        free(path);
    }
    if (!outdir && fflush(stdout) != 0) rc = RF_EXIT_USER;
    return rc;
}

int rf_tool_run(int argc, char **argv)
{
    const char *progs[256];
    int32_t nprogs = 0;
    const char *prog = NULL, *data = ".", *device = "auto", *format = "table", *outdir = NULL, *threads = NULL,
               *maxit = NULL, *repeat_s = NULL;
    int profile = 0, no_fuse = 0;
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
        if (!strcmp(a, "--no-fuse")) {
            no_fuse = 1;
            continue;
        }
        if ((m = rf_tool_opt_value("run", argc, argv, &i, "--data", &data)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--device", &device)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--format", &format)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--out", &outdir)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--threads", &threads)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--max-iterations", &maxit)) ||
            (m = rf_tool_opt_value("run", argc, argv, &i, "--repeat", &repeat_s))) {
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
    rf_rt_options o;
    memset(&o, 0, sizeof o);
    o.data_dir = data;
    o.profile = profile;
    o.no_fuse = no_fuse;
    rf_rt_format fmt;
    if (!rf_tool_run_options("run", device, threads, format, &o, &fmt)) return RF_EXIT_USAGE;
    int64_t v;
    if (maxit) {
        if (!rf_tool_parse_int(maxit, 1, INT64_MAX, &v)) return rf_tool_usage_error("run", "--max-iterations takes a positive number");
        o.max_iterations = v;
    }
    int64_t repeat = 1;
    if (repeat_s && !rf_tool_parse_int(repeat_s, 1, 1000000, &repeat))
        return rf_tool_usage_error("run", "--repeat takes a number from 1 to 1000000");
    struct stat sb;
    if (stat(data, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "redfox run: the data folder '%s' does not exist\n", data);
        return RF_EXIT_USER;
    }
    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_hir_program *hir = NULL;
    rf_tool_opts to = {0};
    rf_buf ptx0;
    rf_buf_init(&ptx0);
    rf_status st = rf_tool_load_program(progs, nprogs, &to, &arena, &hir, &ptx0, &d);
    rf_rt_result *res = NULL;
    /* repeated runs share the parsed inputs, as `tpch run` does */
    if (!st && repeat > 1 && !(o.cache = rf_rt_cache_new())) st = RF_ENOMEM;
    if (!st) {
        o.ptx0 = ptx0.len ? ptx0.data : NULL;
        o.ptx0_size = (uint64_t)ptx0.len;
        for (int64_t r = 0; r < repeat && !st; r++) {
            rf_rt_result_free(res);
            res = NULL;
            st = rf_rt_run(hir, &o, &res, &d);
            if (!st && res->gpu_trace) fputs(res->gpu_trace, stderr);
            if (!st && repeat > 1)
                fprintf(stderr, "run %lld of %lld (device %s): load %.6f s, run %.6f s\n", (long long)(r + 1),
                        (long long)repeat, res->device, res->load_seconds, res->run_seconds);
        }
    }
    int rc = rf_tool_finish(st, &d);
    if (!st) {
        if (profile) rf_tool_print_profile(res, stderr);
        rc = write_outputs(res, outdir, fmt);
    }
    rf_rt_result_free(res); /* before the cache: it borrows the cache's dictionary */
    rf_rt_cache_free(o.cache);
    rf_buf_free(&ptx0);
    rf_hir_free(hir);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    return rc;
}
