/*
** tools/cmd_dump.c: `redfox dump`: print any intermediate form of a program.
**
** Owns: the command's options and messages, and drawing the plan as SVG
** with Graphviz. The program is compiled (as far as the form needs) and
** its form made through the library (include/redfox.h: rf_compile_buffers_
** v2, rf_program_dump); reading the program files is tools/pipeline.c's.
*/
#include "pipeline.h"
#include "redfox.h"
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
    "                  [--no-fuse] [--no-lftj] [--no-partagg] [--no-hoist] [--no-keyjoin]\n"
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
    "  --no-partagg the plan with aggregates kept whole (see compile)\n"
    "  --no-hoist  the plan with loop-invariant commands left in their loop\n"
    "              (see compile)\n"
    "  --no-keyjoin the plan with joins on computed values kept cross products\n"
    "              and filters (see compile)\n"
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

/* rf_program_dump's writer: the text gathered in an rf_buf (an SVG is drawn of all of it). */
static int buf_write(void *user, const void *bytes, int64_t n)
{
    rf_buf_append(user, bytes, n);
    return 0;
}

int rf_tool_dump(int argc, char **argv)
{
    const char *progs[256];
    int32_t nprogs = 0;
    const char *what = NULL, *prog = NULL, *format = "text";
    int opt = 1, fuse = 1, no_lftj = 0, exists = 1, no_partagg = 0, no_hoist = 0, no_keyjoin = 0;
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
        } else if (!strcmp(a, "--no-partagg")) {
            no_partagg = 1;
        } else if (!strcmp(a, "--no-hoist")) {
            no_hoist = 1;
        } else if (!strcmp(a, "--no-keyjoin")) {
            no_keyjoin = 1;
        } else if (!strcmp(a, "--no-fuse")) {
            fuse = 0;
        } else if (!strcmp(a, "--no-exists")) {
            exists = 0;
        } else if ((m = rf_tool_opt_value("dump", argc, argv, &i, "--format", &format)) != 0) {
            if (m < 0) return RF_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            return rf_tool_unknown_option("dump", a, usage);
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

    static const char *const forms[] = {"ast", "rules", "plan", "harmony", "fused", "cuda", "ptx"};
    int form = 0;
    while (strcmp(forms[form], what)) form++;
    rf_compile_options o;
    rf_compile_options_init(&o, sizeof o);
    o.no_opt = !opt;
    o.no_lftj = no_lftj;
    o.no_exists = !exists;
    o.no_partagg = no_partagg;
    o.no_hoist = no_hoist;
    o.no_keyjoin = no_keyjoin;
    o.no_fuse = !fuse;
    /* no further than the form needs: --ast of a program with type errors prints */
    o.stop_after = form == REDFOX_DUMP_AST ? REDFOX_STAGE_AST : form == REDFOX_DUMP_RULES ? REDFOX_STAGE_RULES
                   : form == REDFOX_DUMP_PLAN                 ? REDFOX_STAGE_PLAN
                                                              : REDFOX_STAGE_ALL;
    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_tool_sources src;
    rf_status st = rf_tool_read_sources(progs, nprogs, &arena, &src, &d);
    int rc = rf_tool_finish(st, &d);
    rf_program *p = NULL;
    if (!rc) {
        int code = rf_compile_buffers_v2(src.names, src.texts, src.lens, src.n, &o, &p);
        rc = rf_tool_finish_program(code, p, 1);
    }
    rf_tool_sources_free(&src);
    rf_buf out;
    rf_buf_init(&out);
    if (!rc) {
        int code = rf_program_dump(p, form, fmt_yaml ? REDFOX_DUMP_YAML : fmt_dot ? REDFOX_DUMP_DOT : REDFOX_DUMP_TEXT,
                                   &o, buf_write, &out);
        if (!code && out.oom) code = REDFOX_NOMEM;
        rc = rf_tool_finish_program(code, p, 1); /* warnings first */
    }
    if (!rc && fmt_svg) rc = render_svg(&out);
    else if (!rc) fwrite(out.data ? out.data : "", 1, (size_t)out.len, stdout);
    rf_buf_free(&out);
    rf_program_free(p);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    return rc;
}
