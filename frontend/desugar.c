/*
** frontend/desugar.c: the desugaring of rules into the checked form of
** rf_frontend.h (pass 3).
**
** Owns: the walk over a program's rule clauses and the choice, per clause,
** of how it is desugared: directives left to directives.c, facts, bodies to
** disjunctive normal form (desugar_dnf.c) and one rule per disjunct
** (desugar_rule.c), multi-atom heads and aggregates over a disjunction
** through an auxiliary predicate (desugar_aux.c). declare.c holds passes 1
** and 2; desugar_internal.h the types these files share.
*/
#include "desugar_internal.h"

static void desugar_clause(rf_checker *c, const rf_ast_clause *cl)
{
    int ndirectives = 0;
    for (int32_t h = 0; h < cl->nheads; h++) ndirectives += rf_dsg_is_directive(cl->heads[h]);
    if (ndirectives) {
        if (cl->body || ndirectives != cl->nheads) {
            rf_error(c->d, cl->loc, "lang: directives must be facts on their own, like lang:output[`p] = \"p\".");
        }
        return; /* handled by rf_chk_directives */
    }
    for (int32_t h = 0; h < cl->nheads; h++)
        if (rf_chk_is_reserved(cl->heads[h]->name) || rf_chk_refused_namespace(c, cl->heads[h]))
            return; /* reported by pass 2 */
    if (!cl->body) {
        if (cl->naggs) return;
        for (int32_t h = 0; h < cl->nheads; h++) rf_dsg_build_rule(c, cl, cl->heads[h], NULL);
        return;
    }
    bound_names bn = {0, 0, 0};
    if (cl->nheads == 1) rf_dsg_collect_bound(c, cl->body, &bn);
    dnf d = rf_dsg_dnf_of(c, cl->body, cl->nheads == 1 && !c->oom ? &bn : NULL);
    if (c->oom) return;
    if (d.too_big) {
        rf_error(c->d, cl->body->loc, "this body expands to more than %d alternatives; split it into several rules",
                 RF_DSG_MAX_DISJUNCTS);
        return;
    }
    if (cl->nheads > 1) {
        if (cl->naggs) {
            rf_error(c->d, cl->heads[1]->loc, "an aggregation rule may have only one head atom");
            return;
        }
        rf_dsg_multi_head(c, cl, &d);
        return;
    }
    if (cl->naggs && d.n > 1) {
        rf_dsg_agg_over_disjunction(c, cl, &d);
        return;
    }
    for (int32_t i = 0; i < d.n && !c->oom; i++) rf_dsg_build_rule(c, cl, cl->heads[0], &d.c[i]);
}

void rf_chk_desugar(rf_checker *c, const rf_ast_program *ast)
{
    for (int64_t i = 0; i < ast->nclauses && !c->oom && !rf_diags_full(c->d); i++)
        if (ast->clauses[i]->kind == RF_CLAUSE_RULE) desugar_clause(c, ast->clauses[i]);
}
