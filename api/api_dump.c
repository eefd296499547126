/*
** api/api_dump.c: a program's intermediate forms as text through the
** library (`redfox dump`): the syntax tree, the checked rules, the query
** plan, Harmony, the Kernel Weaver's fusion, the CUDA source and the PTX.
**
** Owns: rf_program_dump. The printers are the stages' own; this file picks
** one, checks that the program holds its form, and hands the text over.
*/
#include "api_internal.h"
#include "rf_frontend.h"
#include "rf_gpu_codegen.h"
#include "rf_queryplan.h"
#include "rf_weaver.h"

#include <string.h>

static const char *const dump_names[] = {"ast", "rules", "plan", "harmony", "fused", "cuda", "ptx"};

/* The formats each form has: text always; yaml of the tree and the plan; dot of the plan. */
static int format_ok(int what, int format)
{
    if (format == REDFOX_DUMP_TEXT) return 1;
    if (format == REDFOX_DUMP_YAML) return what == REDFOX_DUMP_AST || what == REDFOX_DUMP_PLAN;
    if (format == REDFOX_DUMP_DOT) return what == REDFOX_DUMP_PLAN;
    return 0;
}

/* The fusion groups (Kernel Weaver), then the GPU code generator's fused kernels. */
static rf_status dump_fused(const rf_hir_program *h, const rf_gpu_plan *plan, int fuse, rf_buf *out, rf_diags *d)
{
    rf_wv_plan *w = NULL;
    rf_status st = rf_wv_analyze(h, NULL, &w, d);
    if (!st) rf_wv_print(h, w, out);
    rf_wv_plan_free(w);
    rf_gpu_fplan *f = NULL;
    if (!st && !plan) st = rf_gpu_fplan_build(h, fuse, &f, d);
    if (!st && !fuse) rf_buf_puts(out, "GPU code generator: no fused kernels (--no-fuse)\n");
    else if (!st) rf_gpu_fplan_print(h, plan ? plan->f : f, out);
    rf_gpu_fplan_free(f);
    return st;
}

/* The PTX: a .rfx program's own (unless without fusion), else NVRTC's. */
static rf_status dump_ptx(const rf_program *p, const rf_gpu_plan *plan, int fuse, rf_buf *out, rf_diags *d)
{
    rf_gpu_ptx x;
    memset(&x, 0, sizeof x);
    rf_status st;
    if (p->ptx0.len && fuse) {
        st = rf_gpu_ptx0_decode(p->rfx_name, p->ptx0.data, (uint64_t)p->ptx0.len, &x, d);
    } else if (p->rfx_name && fuse) {
        rf_error(d, rf_mkloc(p->rfx_name, 0, 0), "this .rfx file has no PTX (it was compiled where NVRTC was missing)");
        st = RF_EUSER;
    } else {
        rf_gpu_nvrtc_opts no = {NULL, NULL, !fuse, 0};
        st = rf_gpu_compile_program(p->hir, plan, &no, &x, d);
    }
    if (!st) rf_buf_append(out, x.ptx, (int64_t)x.len);
    rf_gpu_ptx_free(&x);
    return st;
}

/* The forms made of Harmony; the GPU plans a .rfx program's own (GPLN), else made now. */
static rf_status dump_hir(const rf_program *p, int what, int fuse, rf_buf *out, rf_diags *d)
{
    const rf_hir_program *h = p->hir;
    rf_gpu_plan *plan = NULL;
    int need_plan = what == REDFOX_DUMP_CUDA || (what == REDFOX_DUMP_PTX && !(p->ptx0.len && fuse)) ||
                    (what == REDFOX_DUMP_FUSED && p->gpln.len);
    rf_status st = RF_OK;
    if (need_plan && p->gpln.len)
        st = rf_gpu_plan_decode(p->rfx_name, h, p->gpln.data, (uint64_t)p->gpln.len, &plan, d);
    else if (need_plan)
        st = rf_gpu_plan_build(h, 0, &plan, d);
    if (!st && what == REDFOX_DUMP_HARMONY) rf_hir_print_text(h, out);
    if (!st && what == REDFOX_DUMP_FUSED) st = dump_fused(h, plan, fuse, out, d);
    if (!st && what == REDFOX_DUMP_CUDA) st = rf_gpu_codegen(h, plan, fuse, out, d);
    if (!st && what == REDFOX_DUMP_PTX) st = dump_ptx(p, plan, fuse, out, d);
    rf_gpu_plan_free(plan);
    return st;
}

/* The forms of the source: the tree, the checked rules, the plan. */
static rf_status dump_source(const rf_program *p, int what, int format, rf_buf *out)
{
    if (what == REDFOX_DUMP_AST) {
        if (format == REDFOX_DUMP_YAML) return rf_ast_print_yaml(p->ast, out);
        rf_ast_print_text(p->ast, out);
    } else if (what == REDFOX_DUMP_RULES) {
        rf_fe_print_program(p->fe, out);
    } else if (format == REDFOX_DUMP_YAML) {
        return rf_qp_print_yaml(p->qp, out);
    } else if (format == REDFOX_DUMP_DOT) {
        rf_qp_print_dot(p->qp, out);
    } else {
        rf_qp_print_text(p->qp, out);
    }
    return RF_OK;
}

/* Why p cannot show form what (NULL: it can); *st the status to report. */
static const char *missing_form(const rf_program *p, int what, rf_status *st)
{
    *st = RF_EUSAGE;
    if (what >= REDFOX_DUMP_HARMONY) {
        if (p->hir) return NULL;
        return p->stage != REDFOX_STAGE_ALL ? "the program was compiled with stop_after: no Harmony"
                                            : "the program did not compile";
    }
    if (p->rfx_name) return NULL; /* an error naming the file, below */
    int have = what == REDFOX_DUMP_AST ? p->ast != NULL : what == REDFOX_DUMP_RULES ? p->fe != NULL : p->qp != NULL;
    if (have) return NULL;
    /* REDFOX_STAGE_AST, _RULES, _PLAN are REDFOX_DUMP_AST, _RULES, _PLAN + 1 */
    if (p->stage != REDFOX_STAGE_ALL && p->stage < what + 1) return "the program was compiled with an earlier stop_after";
    return "the program did not compile";
}

int rf_program_dump(rf_program *prog, int what, int format, const rf_compile_options *opt, rf_write_fn write,
                    void *user)
{
    if (!prog) return REDFOX_MISUSE;
    rf_compile_options o;
    int opts_ok = api_compile_options(opt, &o);
    api_diags_clear(&prog->diags);
    if (!opts_ok || !write || what < REDFOX_DUMP_AST || what > REDFOX_DUMP_PTX) {
        api_diags_error(&prog->diags, "rf_program_dump: %s",
                        !opts_ok ? "the options were not set up with rf_compile_options_init"
                        : !write ? "no writer"
                                 : "unknown form");
        return REDFOX_MISUSE;
    }
    if (!format_ok(what, format)) {
        /* the format by name, and those the form has (a Python caller gave 'dot', not 2) */
        static const char *const format_names[] = {"text", "YAML", "dot"};
        api_diags_error(&prog->diags, "rf_program_dump: %s has no format %s (it has text%s)", dump_names[what],
                        format >= 0 && format <= 2 ? format_names[format] : "of that number",
                        what == REDFOX_DUMP_PLAN ? ", YAML and dot" : what == REDFOX_DUMP_AST ? " and YAML" : "");
        return REDFOX_MISUSE;
    }
    rf_status st;
    const char *why = missing_form(prog, what, &st);
    if (why) {
        api_diags_error(&prog->diags, "rf_program_dump: %s", why);
        return api_code(st);
    }
    rf_diags d;
    rf_diags_init(&d);
    rf_buf out;
    rf_buf_init(&out);
    if (what >= REDFOX_DUMP_HARMONY) {
        st = dump_hir(prog, what, !o.no_fuse, &out, &d);
    } else if (prog->rfx_name) {
        rf_error(&d, rf_mkloc(prog->rfx_name, 0, 0),
                 "a compiled program (.rfx) holds Harmony and PTX only: use --harmony, --fused, --cuda or --ptx");
        st = RF_EUSAGE;
    } else {
        st = dump_source(prog, what, format, &out);
    }
    if (!st && out.oom) st = RF_ENOMEM;
    st = rf_diags_status(&d, st); /* a bug exits 3 */
    rf_status dst = api_diags_set(&prog->diags, &d);
    rf_diags_free(&d);
    if (!st && dst) st = dst;
    if (!st && write(user, out.data ? out.data : "", out.len)) st = RF_EIO;
    rf_buf_free(&out);
    if (st && !prog->diags.errmsg)
        api_diags_error(&prog->diags, "%s",
                        st == RF_ENOMEM ? "out of memory" : st == RF_EIO ? "rf_program_dump: the writer stopped"
                                                                         : "the dump failed");
    return api_code(st);
}
