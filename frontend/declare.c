/*
** frontend/declare.c: the first two checking passes, before any rule is
** desugared.
**
** Owns: declarations (pass 1: `p(x, y) -> int(x), string(y).`, column names
** and types) and the predicates rule heads define (pass 2: every head names a
** predicate, declared or not, before any body is resolved).
*/
#include "desugar_internal.h"

#include <string.h>

/* ---- pass 1: declarations ------------------------------------------- */

static int is_plain_var(const rf_ast_expr *e) { return e->kind == RF_AST_VAR; }

/* The first literal of a declaration's right side that is not type(var):
** what LogicBlox writes as an integrity constraint (p(x) -> x > 0., p(x) ->
** q(x).); NULL when every literal gives a type. */
static const rf_ast_formula *first_non_type(const rf_ast_clause *cl)
{
    const rf_ast_formula *b = cl->body;
    if (!b) return NULL;
    const rf_ast_formula *one[1] = {b};
    rf_ast_formula *const *items = b->kind == RF_FORM_AND ? b->items : (rf_ast_formula *const *)one;
    int32_t n = b->kind == RF_FORM_AND ? b->nitems : 1;
    rf_type t;
    for (int32_t k = 0; k < n; k++) {
        const rf_ast_formula *f = items[k];
        if (f->kind != RF_FORM_ATOM || f->atom.functional || f->atom.nargs != 1 || !is_plain_var(f->atom.args[0]) ||
            !rf_fe_type_from_name(f->atom.name, &t))
            return f;
    }
    return NULL;
}

/* 1 when atom a's predicate is in a namespace the program may not use: a
** built-in's (int:, string:, ...), or one reserved for the programs `redfox
** exec` generates (redfox_txn_*:, outside the one source allowed them):
** refused at a with how it was used (declared, defined), and its name kept
** so that later uses of it give no second error. */
static int in_refused_namespace(rf_checker *c, const rf_ast_atom *a, const char *how)
{
    int ns = rf_chk_refused_namespace(c, a);
    if (!ns) return 0;
    if (rf_chk_builtin_namespace(a->name))
        rf_error(c->d, a->loc,
                 "`%s` is in the built-in namespace `%.*s`, which holds only the language's built-ins: a predicate of "
                 "the program cannot be %s there (choose another name)",
                 a->name, ns, a->name, how);
    else
        rf_error(c->d, a->loc,
                 "`%s` is in the namespace `%.*s`, reserved for the programs `redfox exec` generates (`"
                 RF_FE_TXN_NS "_*:`): a predicate of the program cannot be %s there (choose another name)",
                 a->name, ns, a->name, how);
    if (rf_ptrvec_push(&c->refused, (void *)a->name)) c->oom = 1;
    return 1;
}

static void declare(rf_checker *c, const rf_ast_clause *cl)
{
    if (cl->nheads != 1) {
        rf_error(c->d, cl->heads[1]->loc, "a declaration has one predicate on the left of '->'");
        return;
    }
    const rf_ast_atom *h = cl->heads[0];
    if (rf_chk_is_reserved(h->name)) {
        rf_error(c->d, h->loc, "`%s` is a built-in name and cannot be declared", h->name);
        return;
    }
    if (in_refused_namespace(c, h, "declared")) return;
    rf_fe_pred *old = rf_chk_find(c, h->name);
    const rf_ast_formula *constraint = first_non_type(cl);
    char where[320];
    if (old && constraint) {
        /* not a second declaration: a constraint on the declared predicate */
        rf_error(c->d, constraint->loc,
                 "integrity constraints are not supported: after '->' a declaration gives only column types, as type(variable) (`%s` is declared at %s; check the condition with a rule)",
                 h->name, rf_chk_where(old->loc, constraint->loc, where, sizeof where));
        return;
    }
    if (old) {
        rf_error(c->d, h->loc, "`%s` is declared twice (first at %s)", h->name,
                 rf_chk_where(old->loc, h->loc, where, sizeof where));
        return;
    }
    int bad = 0;
    for (int32_t i = 0; i < h->nargs; i++) {
        if (!is_plain_var(h->args[i])) {
            rf_error(c->d, h->args[i]->loc,
                     "a declaration names its columns with variables; argument %d of `%s` is not a variable",
                     i + 1, h->name);
            bad = 1;
            continue;
        }
        for (int32_t j = 0; j < i; j++)
            if (is_plain_var(h->args[j]) && strcmp(h->args[j]->name, h->args[i]->name) == 0) {
                rf_error(c->d, h->args[i]->loc, "column name `%s` is used twice in the declaration of `%s`",
                         h->args[i]->name, h->name);
                bad = 1;
            }
    }
    if (bad) return;
    if (!cl->body && h->nargs > 0) {
        rf_error(c->d, h->loc, "the declaration of `%s` gives no column types (write %s(x) -> int(x).)",
                 h->name, h->name);
        return;
    }
    rf_fe_pred *p = rf_chk_add_pred(c, h->name, h->loc, h->nargs, h->functional);
    if (!p) return;
    p->declared = 1;
    for (int32_t i = 0; i < h->nargs; i++) p->cols[i] = h->args[i]->name;
    if (!cl->body) return; /* a() -> . declares a nullary predicate: it holds or not */
    /* the right side: a conjunction of type(var) atoms */
    const rf_ast_formula *b = cl->body;
    const rf_ast_formula *one[1] = {b};
    rf_ast_formula *const *items = b->kind == RF_FORM_AND ? b->items : (rf_ast_formula *const *)one;
    int32_t n = b->kind == RF_FORM_AND ? b->nitems : 1;
    int rhs_bad = 0; /* a column left untyped by a refused item has its error already */
    for (int32_t k = 0; k < n; k++) {
        const rf_ast_formula *f = items[k];
        rf_type t;
        if (f->kind != RF_FORM_ATOM || f->atom.functional || f->atom.nargs != 1 ||
            !is_plain_var(f->atom.args[0]) || !rf_fe_type_from_name(f->atom.name, &t)) {
            if (f->kind == RF_FORM_CMP)
                rf_error(c->d, f->loc,
                         "integrity constraints are not supported: after '->' a declaration gives only column types, as type(variable) (check the condition with a rule)");
            else
                rf_error(c->d, f->loc,
                         "a declaration may only give column types, as type(variable) with a type among int, float, decimal, string, boolean, date");
            rhs_bad = 1;
            continue;
        }
        int32_t col = -1;
        for (int32_t i = 0; i < h->nargs; i++)
            if (strcmp(h->args[i]->name, f->atom.args[0]->name) == 0) col = i;
        if (col < 0) {
            rf_error(c->d, f->atom.args[0]->loc, "`%s` is not a column of `%s`", f->atom.args[0]->name,
                     h->name);
            rhs_bad = 1;
            continue;
        }
        if (p->types[col] != RF_TYPE_UNKNOWN) {
            rf_error(c->d, f->loc, "column `%s` of `%s` is given a type twice", p->cols[col], h->name);
            continue;
        }
        p->types[col] = t;
    }
    for (int32_t i = 0; i < h->nargs; i++)
        if (p->types[i] == RF_TYPE_UNKNOWN) {
            if (!rhs_bad)
                rf_error(c->d, h->args[i]->loc, "column `%s` of `%s` has no type in its declaration",
                         p->cols[i], h->name);
            p->types[i] = RF_TYPE_INT; /* keep going without cascading errors */
        }
}

void rf_chk_declarations(rf_checker *c, const rf_ast_program *ast)
{
    for (int64_t i = 0; i < ast->nclauses && !c->oom; i++)
        if (ast->clauses[i]->kind == RF_CLAUSE_DECL) declare(c, ast->clauses[i]);
}

/* ---- pass 2: predicates defined by rule heads ----------------------- */

int rf_dsg_is_directive(const rf_ast_atom *h) { return strncmp(h->name, "lang:", 5) == 0; }

void rf_chk_define_heads(rf_checker *c, const rf_ast_program *ast)
{
    for (int64_t i = 0; i < ast->nclauses && !c->oom; i++) {
        const rf_ast_clause *cl = ast->clauses[i];
        if (cl->kind != RF_CLAUSE_RULE) continue;
        for (int32_t h = 0; h < cl->nheads; h++) {
            const rf_ast_atom *a = cl->heads[h];
            if (rf_dsg_is_directive(a)) continue;
            if (rf_chk_is_reserved(a->name)) {
                rf_error(c->d, a->loc, "`%s` is a built-in and cannot be defined by a rule", a->name);
                continue;
            }
            if (in_refused_namespace(c, a, "defined")) continue;
            rf_fe_pred *p = rf_chk_find(c, a->name);
            if (!p) rf_chk_add_pred(c, a->name, a->loc, a->nargs, a->functional);
        }
    }
}
