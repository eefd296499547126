/*
** frontend/safety.c: range restriction and body order of one rule.
**
** Owns: deciding which `x = e` comparisons bind x (assignments), checking
** that every variable read in a head, a negation, a comparison, an
** expression or an aggregate is bound by a positive atom or an assignment
** (naming the root only: not a variable an unbound one keeps unassigned),
** and ordering the body: positive atoms, then assignments and filters in an
** order where each reads only bound variables, then negations.
*/
#include "check_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct safe_ctx {
    rf_checker *c;
    rf_fe_rule *r;
    uint8_t *bound;
    uint8_t *reported;
    uint8_t *derivable; /* unbound, but only for want of another variable */
    int all_bound;
    int ok;
} safe_ctx;

static void check_bound(void *ctx, int32_t v, rf_loc loc)
{
    (void)loc;
    safe_ctx *s = ctx;
    if (s->bound[v]) return;
    s->all_bound = 0;
}

/* For the derivable variables: v known, or a root (no assignment binds it). */
typedef struct derive_ctx {
    safe_ctx *s;
    const uint8_t *target;
} derive_ctx;

static void check_derivable(void *ctx, int32_t v, rf_loc loc)
{
    (void)loc;
    derive_ctx *d = ctx;
    if (d->s->bound[v] || d->s->derivable[v] || !d->target[v]) return;
    d->s->all_bound = 0;
}

static int expr_bound(safe_ctx *s, const rf_fe_expr *e)
{
    s->all_bound = 1;
    rf_chk_expr_vars(e, check_bound, s);
    return s->all_bound;
}

static void report_unbound(void *ctx, int32_t v, rf_loc loc)
{
    safe_ctx *s = ctx;
    if (s->bound[v] || s->reported[v] || s->derivable[v]) return;
    s->reported[v] = 1;
    s->ok = 0;
    const rf_fe_var *var = &s->r->vars[v];
    if (var->temp)
        rf_error(s->c->d, loc, "an expression here reads a value that is not bound by a positive atom or an assignment");
    else
        rf_error(s->c->d, loc,
                 "variable `%s` is unsafe: it is not bound by a positive atom or an assignment in the body",
                 var->name);
}

int rf_chk_safety(rf_checker *c, rf_fe_rule *r, rf_fe_lit **lits, int32_t nlits)
{
    safe_ctx s = {c, r, NULL, NULL, NULL, 0, 1};
    s.bound = rf_calloc((size_t)r->nvars + 1, 1);
    s.reported = rf_calloc((size_t)r->nvars + 1, 1);
    s.derivable = rf_calloc((size_t)r->nvars + 1, 1);
    uint8_t *target = rf_calloc((size_t)r->nvars + 1, 1);
    uint8_t *placed = rf_calloc((size_t)nlits + 1, 1);
    rf_fe_lit **order = rf_arena_alloc(c->a, (size_t)(nlits + 1) * sizeof *order);
    if (!s.bound || !s.reported || !s.derivable || !target || !placed || !order) {
        c->oom = 1;
        free(s.bound);
        free(s.reported);
        free(s.derivable);
        free(target);
        free(placed);
        return 0;
    }
    int32_t n = 0;
    /* positive atoms bind their variables */
    for (int32_t i = 0; i < nlits; i++) {
        rf_fe_lit *l = lits[i];
        if (l->kind != RF_FE_ATOM || l->negated) continue;
        for (int32_t j = 0; j < l->nargs; j++)
            if (l->args[j]->kind == RF_FE_VAR) s.bound[l->args[j]->var] = 1;
        order[n++] = l;
        placed[i] = 1;
    }
    /* then assignments and filters, as their inputs become bound */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t i = 0; i < nlits; i++) {
            rf_fe_lit *l = lits[i];
            if (placed[i] || l->negated) continue;
            if (l->kind == RF_FE_CMP) {
                int lb = expr_bound(&s, l->lhs), rb = expr_bound(&s, l->rhs);
                if (lb && rb) {
                    order[n++] = l;
                    placed[i] = changed = 1;
                } else if (l->op == RF_CMP_EQ && l->lhs->kind == RF_FE_VAR && !lb && rb) {
                    l->kind = RF_FE_ASSIGN;
                    l->var = l->lhs->var;
                    s.bound[l->var] = 1;
                    order[n++] = l;
                    placed[i] = changed = 1;
                } else if (l->op == RF_CMP_EQ && l->rhs->kind == RF_FE_VAR && lb && !rb) {
                    l->kind = RF_FE_ASSIGN;
                    l->var = l->rhs->var;
                    l->rhs = l->lhs;
                    l->lhs = NULL;
                    s.bound[l->var] = 1;
                    order[n++] = l;
                    placed[i] = changed = 1;
                }
            } else if (l->kind == RF_FE_BUILTIN) {
                int all = 1;
                for (int32_t j = 0; j < l->nargs; j++) all &= expr_bound(&s, l->args[j]);
                if (all) {
                    order[n++] = l;
                    placed[i] = changed = 1;
                }
            } else if (l->kind == RF_FE_OR) {
                int all = 1;
                for (int32_t a = 0; a < l->nalts; a++)
                    for (int32_t j = 0; j < l->altn[a]; j++)
                        all &= expr_bound(&s, l->alts[a][j]->lhs) && expr_bound(&s, l->alts[a][j]->rhs);
                if (all) {
                    order[n++] = l;
                    placed[i] = changed = 1;
                }
            }
        }
    }
    /* negations last */
    for (int32_t i = 0; i < nlits; i++)
        if (!placed[i] && lits[i]->negated) {
            order[n++] = lits[i];
            placed[i] = 1;
        }
    /* An assignment left unplaced (x = string:length[s], s unbound) would
    ** bind x were its other side bound: x is then unbound only for want of
    ** s, and naming it too would echo the root. x is derivable when its
    ** other side reads only bound variables, derivable ones, or roots (an
    ** unbound variable no such assignment could bind); derivable ones are
    ** not named. Variables that only bind each other (x = y, y = x) never
    ** become derivable, so each error still names something. */
    for (int32_t i = 0; i < nlits; i++) {
        rf_fe_lit *l = lits[i];
        if (placed[i] || l->negated || l->kind != RF_FE_CMP || l->op != RF_CMP_EQ) continue;
        if (l->lhs->kind == RF_FE_VAR && !s.bound[l->lhs->var]) target[l->lhs->var] = 1;
        if (l->rhs->kind == RF_FE_VAR && !s.bound[l->rhs->var]) target[l->rhs->var] = 1;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t i = 0; i < nlits; i++) {
            rf_fe_lit *l = lits[i];
            if (placed[i] || l->negated || l->kind != RF_FE_CMP || l->op != RF_CMP_EQ) continue;
            for (int side = 0; side < 2; side++) {
                const rf_fe_expr *to = side ? l->rhs : l->lhs, *from = side ? l->lhs : l->rhs;
                if (to->kind != RF_FE_VAR || s.bound[to->var] || s.derivable[to->var]) continue;
                s.all_bound = 1;
                rf_chk_expr_vars(from, check_derivable, &(derive_ctx){&s, target});
                if (s.all_bound) s.derivable[to->var] = 1, changed = 1;
            }
        }
    }
    /* anything not placed reads an unbound variable: name it */
    for (int32_t i = 0; i < nlits; i++) {
        rf_fe_lit *l = lits[i];
        if (l->kind == RF_FE_CMP || l->kind == RF_FE_ASSIGN) {
            rf_chk_expr_vars(l->lhs, report_unbound, &s);
            rf_chk_expr_vars(l->rhs, report_unbound, &s);
        } else if (l->kind == RF_FE_BUILTIN) {
            for (int32_t j = 0; j < l->nargs; j++) rf_chk_expr_vars(l->args[j], report_unbound, &s);
        } else if (l->kind == RF_FE_OR) {
            for (int32_t a = 0; a < l->nalts; a++)
                for (int32_t j = 0; j < l->altn[a]; j++) {
                    rf_chk_expr_vars(l->alts[a][j]->lhs, report_unbound, &s);
                    rf_chk_expr_vars(l->alts[a][j]->rhs, report_unbound, &s);
                }
        } else if (l->negated) {
            for (int32_t j = 0; j < l->nargs; j++)
                if (l->args[j]->kind == RF_FE_VAR && !r->vars[l->args[j]->var].wildcard)
                    report_unbound(&s, l->args[j]->var, l->args[j]->loc);
        }
        if (!placed[i]) {
            order[n++] = l; /* keep it, for completeness; the rule is dropped */
            s.ok = 0;
        }
    }
    /* aggregates read their arguments; their results are bound by the aggregation */
    for (int32_t g = 0; g < r->naggs; g++) {
        if (r->aggs[g].arg_var >= 0) report_unbound(&s, r->aggs[g].arg_var, r->aggs[g].loc);
    }
    for (int32_t g = 0; g < r->naggs; g++) s.bound[r->aggs[g].out_var] = 1;
    for (int32_t i = 0; i < r->head->arity; i++) {
        const rf_fe_expr *e = r->head_args[i];
        if (e->kind == RF_FE_VAR) report_unbound(&s, e->var, e->loc);
    }
    r->body = order;
    r->nbody = n;
    free(s.bound);
    free(s.reported);
    free(s.derivable);
    free(target);
    free(placed);
    return s.ok;
}
