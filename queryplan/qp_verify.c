/*
** queryplan/qp_verify.c: the structural invariants of a plan, checked after
** the lowering and after every pass, so that a pass that breaks the plan is
** named at once instead of producing a wrong program later.
**
** Owns: the list of invariants (below) and the internal-error diagnostics.
**   - every relation referenced by a command or terminator is p->rels[id];
**   - each command has the inputs its op needs, outs agree in number and
**     type with dst's columns, column references and keys are in range and
**     of matching types, filters are boolean;
**   - a temporary is written exactly once and read only after that, in the
**     same block or in a block that every path from the entry to it takes
**     through the writer's block (a loop reading a temporary the pass
**     `hoist` computed before it);
**   - terminators name existing blocks.
*/
#include "qp_internal.h"

#include <stdarg.h>
#include <stdlib.h>

typedef struct vctx {
    const rf_qp_program *p;
    rf_diags *d;
    int bad;
    const rf_qp_block *b;
    int32_t at;
} vctx;

static void fail(vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(vctx *v, const char *fmt, ...)
{
    if (v->bad) return; /* the first problem is the useful one */
    v->bad = 1;
    rf_buf b;
    rf_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    char *m = rf_vsprintf(fmt, ap);
    va_end(ap);
    if (v->b) {
        rf_buf_printf(&b, "B%d", v->b->id);
        if (v->at >= 0) {
            rf_buf_printf(&b, " command %d (", v->at);
            rf_qp_print_cmd(v->b->cmds[v->at], &b);
            rf_buf_putc(&b, ')');
        }
        rf_buf_puts(&b, ": ");
    }
    rf_internal_error(v->d, rf_mkloc(v->p->fe ? v->p->fe->file : NULL, 0, 0),
                      "invalid query plan: %s%s", rf_buf_cstr(&b), m ? m : "");
    free(m);
    rf_buf_free(&b);
}

static int rel_ok(vctx *v, const rf_qp_rel *r)
{
    if (!r) {
        fail(v, "a relation is missing");
        return 0;
    }
    if (r->id < 0 || r->id >= v->p->nrels || v->p->rels[r->id] != r) {
        fail(v, "relation %s is not in the relation table", r->name ? r->name : "?");
        return 0;
    }
    return 1;
}

static void expr_ok(vctx *v, const rf_qp_cmd *c, const rf_qp_expr *e, int32_t nsides)
{
    if (!e) {
        fail(v, "missing expression");
        return;
    }
    for (int32_t i = 0; i < e->nargs; i++) expr_ok(v, c, e->args[i], nsides);
    switch (e->kind) {
    case RF_QP_E_COL:
        if (e->side < 0 || e->side >= nsides) {
            fail(v, "column reference to side %d", e->side);
        } else if (e->col < 0 || e->col >= c->in[e->side]->ncols) {
            fail(v, "column %d of %s does not exist", e->col, c->in[e->side]->name);
        } else if (c->in[e->side]->types[e->col] != e->type) {
            fail(v, "column %d of %s is %s, not %s", e->col, c->in[e->side]->name,
                 rf_val_type_name(c->in[e->side]->types[e->col]), rf_val_type_name(e->type));
        }
        break;
    case RF_QP_E_CONST:
        if (e->c.type != e->type) fail(v, "constant of the wrong type");
        break;
    case RF_QP_E_BINOP:
        if (e->nargs < 2) fail(v, "an operator chain of fewer than two operands");
        for (int32_t i = 0; i < e->nargs; i++)
            if (e->args[i]->type != e->type) {
                fail(v, "operands of different types");
                break;
            }
        break;
    case RF_QP_E_CMP:
        if (e->nargs != 2 || e->args[0]->type != e->args[1]->type) fail(v, "operands of different types");
        if (e->kind == RF_QP_E_CMP && e->type != RF_TYPE_BOOL) fail(v, "comparison not boolean");
        break;
    case RF_QP_E_AND:
    case RF_QP_E_NOT:
    case RF_QP_E_LIKE:
        if (e->type != RF_TYPE_BOOL) fail(v, "predicate not boolean");
        for (int32_t i = 0; i < e->nargs && e->kind != RF_QP_E_LIKE; i++)
            if (e->args[i]->type != RF_TYPE_BOOL) fail(v, "operand of and/not not boolean");
        break;
    default: break;
    }
}

static void same_schema(vctx *v, const rf_qp_rel *a, const rf_qp_rel *b)
{
    if (a->ncols != b->ncols) {
        fail(v, "%s has %d columns, %s has %d", a->name, a->ncols, b->name, b->ncols);
        return;
    }
    for (int32_t i = 0; i < a->ncols; i++)
        if (a->types[i] != b->types[i]) fail(v, "column %d of %s and %s differ in type", i, a->name, b->name);
}

static void keys_ok(vctx *v, const rf_qp_cmd *c)
{
    for (int32_t k = 0; k < c->nkeys; k++) {
        int32_t l = c->lkeys[k], r = c->rkeys[k];
        if (l < 0 || l >= c->in[0]->ncols || r < 0 || r >= c->in[1]->ncols) fail(v, "join key out of range");
        else if (c->in[0]->types[l] != c->in[1]->types[r]) fail(v, "join key of different types");
    }
}

/* A comparison of two int variables or a variable and an int constant. */
static int lftj_bound_ok(const rf_qp_expr *e, int32_t nvars)
{
    if (e->kind != RF_QP_E_CMP || e->nargs != 2) return 0;
    for (int32_t k = 0; k < 2; k++) {
        const rf_qp_expr *a = e->args[k];
        if (a->type != RF_TYPE_INT) return 0;
        if (a->kind == RF_QP_E_COL) {
            if (a->side != 0 || a->col < 0 || a->col >= nvars) return 0;
        } else if (a->kind != RF_QP_E_CONST) {
            return 0;
        }
    }
    return 1;
}

/* LFTJ: int variables, each bound by some input column; an input's columns
** bind distinct variables; the filter a conjunction of bounds. */
static void lftj_ok(vctx *v, const rf_qp_cmd *c)
{
    const rf_qp_rel *d = c->dst;
    if (!c->colvar) {
        fail(v, "lftj without variables");
        return;
    }
    if (d->ncols < 1 || d->ncols > 64) fail(v, "lftj with %d variables", d->ncols);
    for (int32_t j = 0; j < d->ncols; j++)
        if (d->types[j] != RF_TYPE_INT) fail(v, "lftj variable %d is not an int", j);
    uint64_t seen = 0;
    int32_t off = 0;
    for (int32_t i = 0; i < c->nin && !v->bad; i++) {
        uint64_t mine = 0;
        for (int32_t col = 0; col < c->in[i]->ncols; col++) {
            int32_t x = c->colvar[off + col];
            if (x < -1 || x >= d->ncols) {
                fail(v, "lftj variable %d out of range", x);
                return;
            }
            if (x < 0) continue;
            if (c->in[i]->types[col] != RF_TYPE_INT) fail(v, "lftj input %d column %d is not an int", i, col);
            if (mine >> x & 1) fail(v, "lftj input %d binds variable %d twice", i, x);
            mine |= UINT64_C(1) << x;
        }
        seen |= mine;
        off += c->in[i]->ncols;
    }
    if (d->ncols <= 64 && seen != (d->ncols == 64 ? UINT64_MAX : (UINT64_C(1) << d->ncols) - 1))
        fail(v, "lftj variable bound by no input");
    if (c->filter) {
        const rf_qp_expr *one = c->filter;
        const rf_qp_expr *const *cs = c->filter->kind == RF_QP_E_AND ? (const rf_qp_expr *const *)c->filter->args : &one;
        int32_t n = c->filter->kind == RF_QP_E_AND ? c->filter->nargs : 1;
        for (int32_t k = 0; k < n; k++)
            if (!lftj_bound_ok(cs[k], d->ncols)) fail(v, "lftj filter %d is not a bound", k);
    }
}

static void cmd_ok(vctx *v, const rf_qp_cmd *c)
{
    static const int32_t nin[] = {1, 2, 2, 1, -1, 2, 1, 1, 0, 0, 1, -1};
    if ((unsigned)c->op > RF_QP_LFTJ) {
        fail(v, "unknown op");
        return;
    }
    if (!rel_ok(v, c->dst)) return;
    if (nin[c->op] >= 0 ? c->nin != nin[c->op] : c->nin < 1) {
        fail(v, "%d inputs", c->nin);
        return;
    }
    for (int32_t i = 0; i < c->nin; i++)
        if (!rel_ok(v, c->in[i])) return;
    const rf_qp_rel *d = c->dst;
    switch (c->op) {
    case RF_QP_MAPFILTER:
    case RF_QP_MAPJOIN:
    case RF_QP_ANTIJOIN: {
        int32_t sides = c->op == RF_QP_MAPJOIN ? 2 : 1;
        if (c->nouts != d->ncols) {
            fail(v, "%d outputs for %d columns", c->nouts, d->ncols);
            return;
        }
        for (int32_t i = 0; i < c->nouts; i++) {
            expr_ok(v, c, c->outs[i], sides);
            if (c->outs[i] && c->outs[i]->type != d->types[i]) fail(v, "output %d has the wrong type", i);
        }
        if (c->filter) {
            if (c->op == RF_QP_ANTIJOIN) fail(v, "antijoin with a filter");
            expr_ok(v, c, c->filter, sides);
            if (c->filter->type != RF_TYPE_BOOL) fail(v, "filter not boolean");
        }
        if (c->op != RF_QP_MAPFILTER) keys_ok(v, c);
        break;
    }
    case RF_QP_AGGREGATE:
        if (d->ncols != c->ngroup + c->naggs) {
            fail(v, "aggregate columns");
            return;
        }
        for (int32_t i = 0; i < c->ngroup; i++)
            if (c->group[i] < 0 || c->group[i] >= c->in[0]->ncols || c->in[0]->types[c->group[i]] != d->types[i])
                fail(v, "group column %d", i);
        for (int32_t i = 0; i < c->naggs; i++) {
            if (c->aggs[i].type != d->types[c->ngroup + i]) fail(v, "aggregate %d type", i);
            if (c->aggs[i].col < -1 || c->aggs[i].col >= c->in[0]->ncols) fail(v, "aggregate %d column", i);
            if ((c->aggs[i].col < 0) != (c->aggs[i].fn == RF_AGG_COUNT)) fail(v, "aggregate %d argument", i);
        }
        break;
    case RF_QP_UNION:
    case RF_QP_DIFFERENCE:
    case RF_QP_UNIQUE:
    case RF_QP_COPY:
    case RF_QP_ORDERLIMIT:
        for (int32_t i = 0; i < c->nin; i++) same_schema(v, d, c->in[i]);
        if (c->op == RF_QP_ORDERLIMIT) {
            if (c->norder < 1 && d->ncols > 0) fail(v, "orderlimit without order");
            for (int32_t i = 0; i < c->norder; i++)
                if (c->order[i].col < 0 || c->order[i].col >= d->ncols) fail(v, "order column out of range");
        }
        if (c->check_fd && (c->op != RF_QP_UNIQUE || d->nkeys < 0 || !d->fd_checked)) fail(v, "FD check without keys");
        break;
    case RF_QP_FACTS:
        if (c->nrows < 0 || (c->nrows && d->ncols && !c->rows)) fail(v, "facts without rows");
        for (int64_t i = 0; i < c->nrows && d->ncols; i++)
            for (int32_t j = 0; j < d->ncols; j++)
                if (c->rows[i * d->ncols + j].type != d->types[j]) fail(v, "fact of the wrong type");
        break;
    case RF_QP_CLEAR: break;
    case RF_QP_LFTJ: lftj_ok(v, c); break;
    }
}

/* Whether every path from the entry to block r passes block w (w
** dominates r). reach: scratch per block; *reach_of: the w whose blocks
** reachable without passing it reach holds (-1: none yet). */
static int dominates(const rf_qp_program *p, int32_t w, int32_t r, uint8_t *reach, int32_t *stack, int32_t *reach_of)
{
    if (w == 0 || w == r) return 1;
    if (*reach_of != w) {
        qp_blocks_reachable(p, w, reach, stack);
        *reach_of = w;
    }
    return !reach[r];
}

rf_status rf_qp_verify(const rf_qp_program *p, rf_diags *d)
{
    vctx v = {p, d, 0, NULL, -1};
    if (p->oom) return RF_ENOMEM;
    for (int32_t i = 0; i < p->nrels; i++)
        if (!p->rels[i] || p->rels[i]->id != i) fail(&v, "relation table out of order at %d", i);
    if (p->nblocks < 1) fail(&v, "no blocks");
    /* where each temporary is written: block, index; then the blocks
    ** reachable from the entry without passing a writer's block */
    int32_t *wb = rf_malloc((size_t)(p->nrels + 1) * sizeof *wb), *wi = rf_malloc((size_t)(p->nrels + 1) * sizeof *wi);
    uint8_t *reach = rf_malloc((size_t)p->nblocks + 1);
    int32_t *stack = rf_malloc(((size_t)p->nblocks + 1) * sizeof *stack), reach_of = -1;
    if (!wb || !wi || !reach || !stack) {
        free(wb);
        free(wi);
        free(reach);
        free(stack);
        return RF_ENOMEM;
    }
    for (int32_t i = 0; i < p->nrels; i++) wb[i] = -1;
    for (int32_t b = 0; b < p->nblocks && !v.bad; b++) {
        const rf_qp_block *bl = p->blocks[b];
        v.b = bl;
        v.at = -1;
        if (bl->id != b) fail(&v, "block id %d at %d", bl->id, b);
        for (int32_t i = 0; i < bl->ncmds && !v.bad; i++) {
            v.at = i;
            const rf_qp_cmd *c = bl->cmds[i];
            cmd_ok(&v, c);
            if (v.bad) break;
            if (c->dst->kind == RF_QP_REL_TEMP) {
                if (wb[c->dst->id] >= 0) fail(&v, "temporary %s is written twice", c->dst->name);
                wb[c->dst->id] = b;
                wi[c->dst->id] = i;
            }
        }
        v.at = -1;
        const rf_qp_term *t = &bl->term;
        if (t->kind == RF_QP_T_GOTO || t->kind == RF_QP_T_BRANCH) {
            if (t->target < 0 || t->target >= p->nblocks) fail(&v, "jump to block %d", t->target);
            if (t->kind == RF_QP_T_BRANCH && (t->else_target < 0 || t->else_target >= p->nblocks))
                fail(&v, "jump to block %d", t->else_target);
            if (t->kind == RF_QP_T_BRANCH && t->nrels < 1) fail(&v, "branch without relations");
            for (int32_t j = 0; j < t->nrels; j++) {
                if (!rel_ok(&v, t->rels[j])) break;
                if (t->rels[j]->kind == RF_QP_REL_TEMP) fail(&v, "branch on a temporary");
            }
        } else if (t->kind != RF_QP_T_HALT) {
            fail(&v, "unknown terminator");
        }
    }
    /* a temporary is read after its write in its block, or in a block its
    ** writer's block dominates (a loop reading what was hoisted before it) */
    for (int32_t b = 0; b < p->nblocks && !v.bad; b++) {
        const rf_qp_block *bl = p->blocks[b];
        v.b = bl;
        for (int32_t i = 0; i < bl->ncmds && !v.bad; i++) {
            v.at = i;
            const rf_qp_cmd *c = bl->cmds[i];
            for (int32_t j = 0; j < c->nin; j++) {
                const rf_qp_rel *r = c->in[j];
                if (r->kind != RF_QP_REL_TEMP) continue;
                int32_t w = wb[r->id];
                if (w < 0 || (w == b && wi[r->id] >= i) || !dominates(p, w, b, reach, stack, &reach_of))
                    fail(&v, "temporary %s is read before it is written", r->name);
            }
        }
    }
    free(wb);
    free(wi);
    free(reach);
    free(stack);
    return v.bad ? RF_EINTERNAL : RF_OK;
}
