/*
** tools/cmd_compile.c: `redfox compile`: check a program completely and
** write it as a .rfx file.
**
** Owns: the command's options and messages. The program is compiled and
** written through the library (include/redfox.h: rf_compile_buffers_v2,
** rf_program_write_rfx); reading the program files ("-", pipes: tools/
** pipeline.c) and refusing a compiled one are the command's own.
*/
#include "pipeline.h"
#include "redfox.h"
#include "tools.h"

#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: redfox compile PROG.logic [MORE.logic ...] [-o PROG.rfx] [--no-opt] [--no-exists]\n"
    "                      [--no-fuse] [--no-lftj] [--no-partagg] [--no-hoist]\n"
    "                      [--no-keyjoin] [--gpu-arch A] [--cache-dir DIR | --no-cache]\n"
    "       redfox compile - -o PROG.rfx     (the program from standard input)\n"
    "\n"
    "Checks the program (syntax, names, types, safety, stratification),\n"
    "builds and optimizes its query plan, lowers it to Harmony kernels and\n"
    "writes the result as a .rfx file for `redfox run`. Several files are\n"
    "compiled as one program (a shared schema and a query, say). '-' reads\n"
    "the program from standard input (named <stdin> in messages); so do\n"
    "/dev/stdin, pipes and FIFOs. Errors are printed as\n"
    "file:line:col: error: message, every independent error of the program\n"
    "at once (the first 20, then how many more). An empty program, or one\n"
    "without a lang:output, compiles with a warning.\n"
    "\n"
    "options:\n"
    "  -o FILE     the output file (default: the last PROG.logic with .rfx;\n"
    "              needed when the program is read from standard input),\n"
    "              written aside and renamed into place: a failed compile\n"
    "              leaves the old file; a symbolic link there is refused,\n"
    "              never written through; a device (/dev/null) is written;\n"
    "              one of the program's own files is refused (exit 2),\n"
    "              and so is '-': not standard output (./- names a file)\n"
    "  --no-opt    skip the query-plan optimization passes (so every\n"
    "              predicate is computed, even one no output needs, and\n"
    "              reports its errors)\n"
    "  --no-lftj   join cyclic bodies (triangles, cliques) with binary joins,\n"
    "              not with the worst-case-optimal leapfrog triejoin\n"
    "  --no-exists keep joins that only test that another row exists (a\n"
    "              self-join with !=, a negated one, an atom of wildcards\n"
    "              beside its keys) as joins, instead of per-key least and\n"
    "              greatest or distinct keys; results are identical\n"
    "  --no-partagg keep aggregates whole: by default an aggregate of counts,\n"
    "              exact totals, averages, minima or maxima is split into a\n"
    "              partial aggregate and a combining one, so that several\n"
    "              ranks (mpirun) group their own rows first and move only\n"
    "              their partial groups; results are identical\n"
    "  --no-hoist  leave loop-invariant commands inside their recursion's loop:\n"
    "              by default a command there that reads only relations the\n"
    "              loop never writes (a filter of an earlier stratum's\n"
    "              relation) runs once, before the loop, instead of every\n"
    "              round; results are identical\n"
    "  --no-keyjoin keep a join whose sides meet on a computed value\n"
    "              (node(x), y = x + 1, node(y)) a cross product and a\n"
    "              filter: by default the value is computed first, as a\n"
    "              column of its side (only for the rows the other side\n"
    "              meets when it may fail), and the join is an equi-join\n"
    "              on it; results and run-time errors are identical\n"
    "  --no-fuse   GPU code without Kernel Weaver's fused kernels: the PTX\n"
    "              that `redfox run --no-fuse` uses (a run with fusion then\n"
    "              compiles the fused kernels with NVRTC when it starts)\n"
    "  --gpu-arch A  the GPU code's target: compute_80 (default: JIT-compiled\n"
    "              for any newer GPU), compute_90, sm_90, ...\n"
    "  --cache-dir DIR  where NVRTC's output is cached (default\n"
    "              $XDG_CACHE_HOME/redfox, else ~/.cache/redfox); --no-cache: none.\n"
    "              On a machine with a GPU the PTX is also linked for that GPU\n"
    "              into this cache, so that the file's first run there loads\n"
    "              it at once instead of waiting for the driver's JIT\n"
    "  -h, --help  this text\n";

int rf_tool_compile(int argc, char **argv)
{
    const char *progs[256];
    int32_t nprogs = 0;
    const char *prog = NULL, *outp = NULL;
    int cache_opts = 0; /* 1: --cache-dir given, 2: --no-cache given */
    rf_compile_options o;
    rf_compile_options_init(&o, sizeof o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return RF_EXIT_OK;
        }
        if ((m = rf_tool_opt_out("compile", argc, argv, &i, "-o", &outp)) != 0) {
            if (m < 0) return RF_EXIT_USAGE;
        } else if ((m = rf_tool_opt_value("compile", argc, argv, &i, "--gpu-arch", &o.gpu_arch)) != 0) {
            if (m < 0) return RF_EXIT_USAGE;
        } else if ((m = rf_tool_opt_value("compile", argc, argv, &i, "--cache-dir", &o.cache_dir)) != 0) {
            if (m < 0) return RF_EXIT_USAGE;
            cache_opts |= 1;
        } else if (!strcmp(a, "--no-cache")) {
            o.cache_dir = "";
            cache_opts |= 2;
        } else if (!strcmp(a, "--no-opt")) {
            o.no_opt = 1;
        } else if (!strcmp(a, "--no-lftj")) {
            o.no_lftj = 1;
        } else if (!strcmp(a, "--no-exists")) {
            o.no_exists = 1;
        } else if (!strcmp(a, "--no-partagg")) {
            o.no_partagg = 1;
        } else if (!strcmp(a, "--no-hoist")) {
            o.no_hoist = 1;
        } else if (!strcmp(a, "--no-keyjoin")) {
            o.no_keyjoin = 1;
        } else if (!strcmp(a, "--no-fuse")) {
            o.no_fuse = 1;
        } else if (a[0] == '-' && a[1]) {
            return rf_tool_unknown_option("compile", a, usage);
        } else if (nprogs == 256) {
            return rf_tool_usage_error("compile", "too many files (at most 256)");
        } else {
            progs[nprogs++] = prog = a;
        }
    }
    if (cache_opts == 3) return rf_tool_usage_error("compile", "--cache-dir and --no-cache are alternatives: give one of them");
    if (!prog) return rf_tool_usage_error("compile", "no program given");
    for (int32_t i = 0; i < nprogs; i++)
        if (rf_tool_is_rfx(progs[i]))
            return rf_tool_usage_error("compile", "'%s' is already compiled (.rfx)", progs[i]);
    char *defout = NULL;
    if (!outp && rf_tool_is_stream(prog))
        return rf_tool_usage_error("compile", "give -o FILE for a program read from '%s' (not a regular file)", prog);
    if (!outp) {
        size_t n = strlen(prog);
        const char *dot = strrchr(prog, '.');
        const char *slash = strrchr(prog, '/');
        if (dot && (!slash || dot > slash)) n = (size_t)(dot - prog);
        defout = rf_sprintf("%.*s.rfx", (int)n, prog);
        if (!defout) return RF_EXIT_USER;
        outp = defout;
    }
    /* -o PROG.logic is a slip of one letter from PROG.rfx: the source is kept */
    for (int32_t i = 0; i < nprogs; i++)
        if (rf_tool_same_file(outp, progs[i])) {
            int urc = rf_tool_usage_error("compile", "-o %s is the program file '%s': compiling would replace it "
                                          "(give another -o)", outp, progs[i]);
            free(defout);
            return urc;
        }
    /* the program's files read here ("-", pipes), compiled and written by the library */
    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_tool_sources src;
    rf_status st = rf_tool_read_sources(progs, nprogs, &arena, &src, &d);
    for (int32_t i = 0; i < src.n && !st; i++)
        if (rf_tool_source_is_rfx(&src, i)) {
            rf_error(&d, rf_mkloc(src.names[i], 0, 0), "this is a compiled program (.rfx), not LogiQL source");
            st = RF_EUSAGE;
        }
    int rc = rf_tool_finish(st, &d);
    rf_program *p = NULL;
    if (!rc) {
        int code = rf_compile_buffers_v2(src.names, src.texts, src.lens, src.n, &o, &p);
        rc = rf_tool_finish_program(code, p, 1);
    }
    rf_tool_sources_free(&src);
    if (!rc) rc = rf_tool_finish_program(rf_program_write_rfx(p, outp, &o), p, 1);
    rf_program_free(p);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    free(defout);
    return rc;
}
