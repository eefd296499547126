/*
** skeletons/cuda/codegen_plan.c: the per-kernel plan (rf_gpu_kplan).
**
** Owns: which string subexpressions of a map kernel become per-code tables
** (computed on the GPU or on the host, as codegen_str.c decides) or run per
** row from the device dictionary, which string constants a kernel reads,
** and whether a kernel can run on the GPU at all (and why not). Made once
** per program, at compile time (rf_gpu_plan, gplan.c); the code generator
** and the GPU runtime both follow it, so they agree on every slot.
*/
#include "rf_gpu_codegen.h"

#include <string.h>


/* Operations the GPU cannot do on codes alone. */
static int host_op(const rf_qp_expr *e)
{
    switch (e->kind) {
    case RF_QP_E_LIKE: return 1;
    case RF_QP_E_CALL:
        return e->fn == RF_BI_LIKE || e->fn == RF_BI_SUBSTRING || e->fn == RF_BI_LENGTH || e->fn == RF_BI_DATE_PARSE;
    case RF_QP_E_BINOP: return e->type == RF_TYPE_STRING;
    case RF_QP_E_CMP:
        return e->nargs == 2 && e->args[0] && e->args[0]->type == RF_TYPE_STRING && e->cmp != RF_CMP_EQ &&
               e->cmp != RF_CMP_NE;
    default: return 0;
    }
}

static int has_host_op(const rf_qp_expr *e)
{
    if (!e) return 0;
    if (host_op(e)) return 1;
    for (int32_t i = 0; i < e->nargs; i++)
        if (has_host_op(e->args[i])) return 1;
    return 0;
}

/* Can the host compute e once per code of its one string column? Only string
** work that cannot fail (date:parse only directly on a column or constant,
** with failures marked per code), at most one distinct column. */
static int island_ok(const rf_qp_expr *e, int32_t *side, int32_t *col)
{
    if (!e) return 0;
    switch (e->kind) {
    case RF_QP_E_COL:
        if (e->type != RF_TYPE_STRING) return 0;
        if (*side >= 0 && (*side != e->side || *col != e->col)) return 0;
        *side = e->side;
        *col = e->col;
        return 1;
    case RF_QP_E_CONST: return 1;
    case RF_QP_E_LIKE: break;
    case RF_QP_E_CALL:
        if (e->fn == RF_BI_DATE_PARSE)
            return e->nargs == 1 && e->args[0] &&
                   (e->args[0]->kind == RF_QP_E_CONST || e->args[0]->kind == RF_QP_E_COL) &&
                   island_ok(e->args[0], side, col);
        if (e->fn == RF_BI_SUBSTRING) {
            if (e->nargs != 3 || !e->args[1] || !e->args[2] || e->args[1]->kind != RF_QP_E_CONST ||
                e->args[2]->kind != RF_QP_E_CONST)
                return 0;
            return island_ok(e->args[0], side, col);
        }
        if (e->fn != RF_BI_LIKE && e->fn != RF_BI_LENGTH) return 0;
        break;
    case RF_QP_E_BINOP:
        if (e->type != RF_TYPE_STRING) return 0;
        break;
    case RF_QP_E_CMP:
        if (e->nargs != 2 || !e->args[0] || e->args[0]->type != RF_TYPE_STRING) return 0;
        break;
    default: return 0;
    }
    for (int32_t i = 0; i < e->nargs; i++)
        if (!island_ok(e->args[i], side, col)) return 0;
    return 1;
}

static void plan_expr(rf_gpu_kplan *pl, const rf_qp_expr *e)
{
    if (!e || !pl->gpu) return;
    if (e->kind == RF_QP_E_CONST) {
        if (e->type != RF_TYPE_STRING) return;
        if (pl->nconst == RF_GPU_MAX_CONSTS) {
            pl->gpu = 0;
            pl->why = "more string constants than a GPU kernel takes";
            return;
        }
        pl->consts[pl->nconst++] = e;
        return;
    }
    if (e->kind != RF_QP_E_COL && has_host_op(e)) {
        int32_t side = -1, col = -1;
        if (island_ok(e, &side, &col)) {
            if (pl->nisland == RF_GPU_MAX_ISLANDS) {
                pl->gpu = 0;
                pl->why = "more string operations than a GPU kernel takes";
                return;
            }
            rf_gpu_island *is = &pl->islands[pl->nisland++];
            is->e = e;
            is->side = side;
            is->col = col;
            is->dev = rf_gpu_island_on_device(is);
            return;
        }
        if (host_op(e)) {
            if (rf_gpu_row_on_device(e) && pl->nrowstr < RF_GPU_MAX_ISLANDS) {
                pl->rowstr[pl->nrowstr++] = e;
                return;
            }
            pl->gpu = 0;
            pl->why = "a string operation over two columns (computed on the host)";
            return;
        }
    }
    for (int32_t i = 0; i < e->nargs; i++) plan_expr(pl, e->args[i]);
}

void rf_gpu_kplan_build(const rf_hir_program *p, const rf_hir_kernel *k, rf_gpu_kplan *out)
{
    memset(out, 0, sizeof *out);
    out->gpu = 1;
    if (k->kind != RF_HIR_MAP && k->kind != RF_HIR_JOIN_MAP && k->kind != RF_HIR_GATHER_MAP) return;
    int nsides = k->kind == RF_HIR_JOIN_MAP ? 2 : 1;
    for (int s = 0; s < nsides; s++)
        if (p->vars[k->in[s]]->ncols > RF_GPU_MAXC) {
            out->gpu = 0;
            out->why = "an input wider than the GPU kernels take";
            return;
        }
    if (p->vars[k->out]->ncols > RF_GPU_MAXC) {
        out->gpu = 0;
        out->why = "an output wider than the GPU kernels take";
        return;
    }
    plan_expr(out, k->filter);
    for (int32_t i = 0; i < k->nouts; i++) plan_expr(out, k->outs[i]);
    out->ndedupe = rf_gpu_dedupe_cols(p, k, out->dedupe);
}
