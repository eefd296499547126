/*
** tools/cmd_dump.c: `redfox dump`: print any intermediate form of a program.
*/
#include "pipeline.h"
#include "rf_gpu_codegen.h"
#include "rf_weaver.h"
#include "tools.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *usage =
    "usage: redfox dump WHAT PROG.logic|PROG.rfx|- [--format text|yaml|dot|svg] [--no-opt] [--no-exists]\n"
    "                  [--no-fuse] [--no-lftj]\n"
    "\n"
    "The program may be several .logic files (one program), or '-' to read\n"
    "it from standard input (so may /dev/stdin, a pipe or a FIFO).\n"
    "\n"
    "WHAT is one of:\n"
    "  --ast     the syntax tree, as parsed\n"
    "  --rules   the checked program: desugared rules, types and strata\n"
    "  --plan    the query plan: relations and a CFG of relational commands\n"
    "  --harmony the Harmony IR: kernels over managed variables, scheduled\n"
    "            (of a .logic file, or of a compiled .rfx file)\n"
    "  --fused   Kernel Weaver's fusion groups, and why each boundary between\n"
    "            kernels is left unfused; then the fused GPU kernels the code\n"
    "            generator makes of the groups (rfg<N>: which kernels, which\n"
    "            outputs stay in registers) and why each other kernel of a\n"
    "            group runs as its own kernel. This is what `redfox run\n"
    "            --device gpu` runs (unless --no-fuse)\n"
    "  --cuda    the CUDA C++ source generated for the GPU kernels\n"
    "  --ptx     the PTX of the GPU kernels: the PTX0 section of a .rfx file,\n"
    "            or compiled by NVRTC from a .logic file\n"
    "\n"
    "options:\n"
    "  --format F  text (default), yaml (--ast, --plan), dot (--plan: a\n"
    "              Graphviz graph) or svg (--plan: that graph drawn by\n"
    "              Graphviz's `dot -Tsvg`, which must be on PATH)\n"
    "  --no-opt    show the plan before the optimization passes\n"
    "  --no-lftj   cyclic bodies as binary joins, not a leapfrog triejoin (lftj)\n"
    "  --no-exists the plan with another-row tests kept as joins (see compile)\n"
    "  --no-fuse   --cuda, --ptx, --fused: without fused kernels (as `redfox\n"
    "              run --no-fuse` runs)\n"
    "  -h, --help  this text\n";

/* Finds an executable named name on PATH; 1 when there is one. */
static int on_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !*path) return 0;
    char dir[4096];
    while (*path) {
        size_t n = strcspn(path, ":");
        if (n > 0 && n + strlen(name) + 2 < sizeof dir) {
            memcpy(dir, path, n);
            dir[n] = '/';
            strcpy(dir + n + 1, name);
            if (access(dir, X_OK) == 0) return 1;
        }
        path += n;
        if (*path == ':') path++;
    }
    return 0;
}

/* Draws the Graphviz text g as SVG on standard output with `dot -Tsvg`
** (Graphviz writes straight to our stdout); 0, or an exit code after a
** message naming what failed. */
static int render_svg(const rf_buf *g)
{
    if (!on_path("dot")) {
        fprintf(stderr, "redfox dump: --format svg needs Graphviz's `dot` on PATH (Debian: apt-get install graphviz); "
                        "--format dot prints the graph without it\n");
        return RF_EXIT_USER;
    }
    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "redfox dump: cannot make a pipe to dot: %s\n", strerror(errno));
        return RF_EXIT_USER;
    }
    fflush(stdout);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *args[] = {"dot", "-Tsvg", NULL};
    pid_t pid;
    int e = posix_spawnp(&pid, "dot", &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[0]);
    if (e != 0) {
        close(fds[1]);
        fprintf(stderr, "redfox dump: cannot start dot: %s\n", strerror(e));
        return RF_EXIT_USER;
    }
    /* dot may exit early (a bad graph): a write to its closed pipe then
    ** fails with EPIPE instead of killing us */
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    const char *p = g->data ? g->data : "";
    int64_t left = g->len;
    int werr = 0;
    while (left > 0) {
        ssize_t w = write(fds[1], p, (size_t)left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            werr = errno;
            break;
        }
        p += w;
        left -= w;
    }
    close(fds[1]);
    sigaction(SIGPIPE, &old, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || werr) {
        fprintf(stderr, "redfox dump: dot -Tsvg failed (%s)\n",
                werr ? strerror(werr) : WIFEXITED(status) ? "a non-zero exit" : "killed by a signal");
        return RF_EXIT_USER;
    }
    return RF_EXIT_OK;
}

int rf_tool_dump(int argc, char **argv)
{
    const char *progs[256];
    int32_t nprogs = 0;
    const char *what = NULL, *prog = NULL, *format = "text";
    int opt = 1, fuse = 1, no_lftj = 0, exists = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return RF_EXIT_OK;
        }
        if (!strcmp(a, "--ast") || !strcmp(a, "--rules") || !strcmp(a, "--plan") || !strcmp(a, "--harmony") ||
            !strcmp(a, "--fused") || !strcmp(a, "--cuda") || !strcmp(a, "--ptx")) {
            if (what)
                return rf_tool_usage_error("dump", "give one of --ast, --rules, --plan, --harmony, --fused, --cuda, --ptx");
            what = a + 2;
        } else if (!strcmp(a, "--no-opt")) {
            opt = 0;
        } else if (!strcmp(a, "--no-lftj")) {
            no_lftj = 1;
        } else if (!strcmp(a, "--no-fuse")) {
            fuse = 0;
        } else if (!strcmp(a, "--no-exists")) {
            exists = 0;
        } else if ((m = rf_tool_opt_value("dump", argc, argv, &i, "--format", &format)) != 0) {
            if (m < 0) return RF_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            return rf_tool_usage_error("dump", "unknown option '%s'", a);
        } else if (nprogs == 256) {
            return rf_tool_usage_error("dump", "too many files (at most 256)");
        } else {
            progs[nprogs++] = prog = a;
        }
    }
    if (!what) return rf_tool_usage_error("dump", "say what to dump: --ast, --rules, --plan, --harmony, --fused, --cuda or --ptx");
    if (!prog) return rf_tool_usage_error("dump", "no program given");
    int fmt_text = !strcmp(format, "text"), fmt_yaml = !strcmp(format, "yaml"), fmt_dot = !strcmp(format, "dot");
    int fmt_svg = !strcmp(format, "svg");
    if (!fmt_text && !fmt_yaml && !fmt_dot && !fmt_svg)
        return rf_tool_usage_error("dump", "unknown format '%s' (text, yaml, dot or svg)", format);
    if (fmt_svg && strcmp(what, "plan")) return rf_tool_usage_error("dump", "--format svg draws --plan only");
    fmt_dot = fmt_dot || fmt_svg;
    int hir_based = !strcmp(what, "harmony") || !strcmp(what, "fused") || !strcmp(what, "cuda") || !strcmp(what, "ptx");
    if ((!strcmp(what, "rules") || hir_based) && !fmt_text)
        return rf_tool_usage_error("dump", "--%s is printed as text only", what);
    if (!hir_based && rf_tool_is_rfx(prog))
        return rf_tool_usage_error("dump", "a .rfx file holds Harmony and PTX only: use --harmony, --fused, --cuda or --ptx");
    if (!strcmp(what, "ast") && fmt_dot) return rf_tool_usage_error("dump", "--ast is printed as text or yaml");

    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_buf out;
    rf_buf_init(&out);
    rf_ast_program *ast = NULL;
    rf_fe_program *fe = NULL;
    rf_status st;
    if (hir_based) {
        rf_tool_opts o;
        memset(&o, 0, sizeof o);
        o.no_opt = !opt;
        o.no_lftj = no_lftj;
        o.no_exists = !exists;
        rf_hir_program *hir = NULL;
        rf_buf ptx0, gpln;
        rf_buf_init(&ptx0);
        rf_buf_init(&gpln);
        int was_rfx = 0;
        st = rf_tool_load_program(progs, nprogs, &o, &arena, &hir, &ptx0, &gpln, &was_rfx, &d);
        /* the GPU plans: a .rfx file's own (GPLN), else made now */
        rf_gpu_plan *plan = NULL;
        int need_plan = !strcmp(what, "cuda") || (!strcmp(what, "ptx") && !(ptx0.len && fuse)) ||
                        (!strcmp(what, "fused") && gpln.len);
        if (!st && need_plan && gpln.len)
            st = rf_gpu_plan_decode(prog, hir, gpln.data, (uint64_t)gpln.len, &plan, &d);
        else if (!st && need_plan)
            st = rf_gpu_plan_build(hir, 0, &plan, &d);
        if (!st && !strcmp(what, "harmony")) rf_hir_print_text(hir, &out);
        if (!st && !strcmp(what, "fused")) {
            rf_wv_plan *w = NULL;
            st = rf_wv_analyze(hir, NULL, &w, &d);
            if (!st) rf_wv_print(hir, w, &out);
            rf_wv_plan_free(w);
            rf_gpu_fplan *f = NULL;
            if (!st && !plan) st = rf_gpu_fplan_build(hir, fuse, &f, &d);
            if (!st && !fuse) rf_buf_puts(&out, "GPU code generator: no fused kernels (--no-fuse)\n");
            else if (!st) rf_gpu_fplan_print(hir, plan ? plan->f : f, &out);
            rf_gpu_fplan_free(f);
        }
        if (!st && !strcmp(what, "cuda")) st = rf_gpu_codegen(hir, plan, fuse, &out, &d);
        if (!st && !strcmp(what, "ptx")) {
            rf_gpu_ptx x;
            memset(&x, 0, sizeof x);
            if (ptx0.len && fuse) st = rf_gpu_ptx0_decode(prog, ptx0.data, (uint64_t)ptx0.len, &x, &d);
            else if (was_rfx && fuse) {
                rf_error(&d, rf_mkloc(prog, 0, 0), "this .rfx file has no PTX (it was compiled where NVRTC was missing)");
                st = RF_EUSER;
            } else {
                rf_gpu_nvrtc_opts no = {NULL, NULL, !fuse};
                st = rf_gpu_compile_program(hir, plan, &no, &x, &d);
            }
            if (!st) rf_buf_append(&out, x.ptx, (int64_t)x.len);
            rf_gpu_ptx_free(&x);
        }
        rf_gpu_plan_free(plan);
        rf_buf_free(&gpln);
        rf_buf_free(&ptx0);
        rf_hir_free(hir);
    } else if (!strcmp(what, "ast")) {
        st = rf_tool_load_ast(progs, nprogs, &arena, &ast, NULL, &d);
        if (!st) {
            if (fmt_yaml) st = rf_ast_print_yaml(ast, &out);
            else rf_ast_print_text(ast, &out);
        }
    } else {
        st = rf_tool_load_ast(progs, nprogs, &arena, &ast, &fe, &d);
        if (!st && !strcmp(what, "rules")) {
            rf_fe_print_program(fe, &out);
        } else if (!st) {
            rf_qp_program *qp = NULL;
            rf_qp_options qo = {.no_lftj = no_lftj, .no_exists = !opt || !exists};
            st = rf_qp_build_opts(fe, &qo, &qp, &d);
            if (!st && opt) st = rf_qp_optimize(qp, &d);
            if (!st) {
                if (fmt_yaml) st = rf_qp_print_yaml(qp, &out);
                else if (fmt_dot) rf_qp_print_dot(qp, &out);
                else rf_qp_print_text(qp, &out);
            }
            rf_qp_free(qp);
        }
    }
    if (!st && out.oom) st = RF_ENOMEM;
    int rc;
    if (!st && fmt_svg) {
        rc = rf_tool_finish(st, &d); /* warnings first */
        if (rc == RF_EXIT_OK) rc = render_svg(&out);
    } else {
        if (!st) fwrite(out.data ? out.data : "", 1, (size_t)out.len, stdout);
        rc = rf_tool_finish(st, &d);
    }
    rf_buf_free(&out);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    return rc;
}
