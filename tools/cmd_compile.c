/*
** tools/cmd_compile.c: `redfox compile`: check a program completely and
** build its query plan.
*/
#include "tools.h"
#include "rf_frontend.h"
#include "rf_queryplan.h"

#include <string.h>

static const char *usage =
    "usage: redfox compile PROG.logic [-o PROG.rfx]\n"
    "\n"
    "Checks the program (syntax, names, types, safety, stratification) and\n"
    "builds and optimizes its query plan. Errors are printed as\n"
    "file:line:col: error: message.\n"
    "\n"
    "options:\n"
    "  -o FILE     where to write the compiled program (default: PROG.rfx)\n"
    "  -h, --help  this text\n";

int rf_tool_compile(int argc, char **argv)
{
    const char *prog = NULL, *outp = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return RF_EXIT_OK;
        }
        if ((m = rf_tool_opt_value("compile", argc, argv, &i, "-o", &outp)) != 0) {
            if (m < 0) return RF_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            return rf_tool_usage_error("compile", "unknown option '%s'", a);
        } else if (prog) {
            return rf_tool_usage_error("compile", "give one program, not '%s' and '%s'", prog, a);
        } else {
            prog = a;
        }
    }
    if (!prog) return rf_tool_usage_error("compile", "no program given");
    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_ast_program *ast;
    rf_fe_program *fe;
    rf_status st = rf_fe_load_file(prog, &arena, &ast, &fe, &d);
    rf_qp_program *qp = NULL;
    if (!st) st = rf_qp_build(fe, &qp, &d);
    if (!st) st = rf_qp_optimize(qp, &d);
    if (!st && outp) {
        rf_error(&d, rf_mkloc(outp, 0, 0),
                 "code generation (.rfx output) is not available in this version; the program was checked");
        st = RF_EUSAGE;
    }
    rf_qp_free(qp);
    int rc = rf_tool_finish(st, &d);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    return rc;
}
