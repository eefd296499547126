/*
** frontend/desugar_rule.c: the builder of one checked rule from one
** conjunction of a body.
**
** Owns: variables (named, wildcard, fresh) and literals of a rule, name
** resolution of atoms and applications (with "did you mean" errors),
** flattening of nested expressions and functional applications (fresh
** variables and atoms), comparisons and negated comparisons, filter-only
** disjunctions as OR literals and the filters they imply per atom, head
** arguments, aggregate arguments, and the hand-off to safety.
*/
#include "desugar_internal.h"

#include <string.h>

/* The first occurrence of variable `name` in e (NULL where none). */
static const rf_ast_expr *find_var(const rf_ast_expr *e, const char *name)
{
    if (!e) return NULL;
    if (e->kind == RF_AST_VAR && strcmp(e->name, name) == 0) return e;
    const rf_ast_expr *f = find_var(e->lhs, name);
    for (int32_t i = 0; i < e->nargs && !f; i++) f = find_var(e->args[i], name);
    return f;
}
static int32_t new_var(rule_builder *b, const char *name, rf_loc loc, int wildcard, int temp)
{
    if (b->nvars == b->capvars) {
        int32_t ncap = b->capvars ? b->capvars * 2 : 8;
        rf_fe_var *n = rf_arena_alloc(b->c->a, (size_t)ncap * sizeof *n);
        if (!n) {
            b->c->oom = 1;
            b->bad = 1;
            return 0;
        }
        if (b->nvars) memcpy(n, b->vars, (size_t)b->nvars * sizeof *n);
        b->vars = n;
        b->capvars = ncap;
    }
    rf_fe_var *v = &b->vars[b->nvars];
    v->name = name ? name : rf_arena_sprintf(b->c->a, "_%d", b->nvars);
    if (!v->name) {
        b->c->oom = 1;
        b->bad = 1;
        return 0;
    }
    v->loc = loc;
    v->type = RF_TYPE_UNKNOWN;
    v->wildcard = wildcard;
    v->temp = temp;
    return b->nvars++;
}

static int32_t named_var(rule_builder *b, const char *name, rf_loc loc)
{
    for (int32_t i = 0; i < b->nvars; i++)
        if (!b->vars[i].wildcard && !b->vars[i].temp && strcmp(b->vars[i].name, name) == 0) return i;
    return new_var(b, name, loc, 0, 0);
}

static void push_lit(rule_builder *b, rf_fe_lit *l)
{
    if (!l) {
        b->bad = 1;
        return;
    }
    if (b->nlits == b->caplits) {
        int32_t ncap = b->caplits ? b->caplits * 2 : 8;
        rf_fe_lit **n = rf_arena_alloc(b->c->a, (size_t)ncap * sizeof *n);
        if (!n) {
            b->c->oom = 1;
            b->bad = 1;
            return;
        }
        if (b->nlits) memcpy(n, b->lits, (size_t)b->nlits * sizeof *n);
        b->lits = n;
        b->caplits = ncap;
    }
    b->lits[b->nlits++] = l;
}

static rf_fe_lit *lit_new(rule_builder *b, rf_fe_lit_kind k, rf_loc loc)
{
    rf_fe_lit *l = rf_arena_alloc(b->c->a, sizeof *l);
    if (!l) {
        b->c->oom = 1;
        return NULL;
    }
    l->kind = k;
    l->loc = loc;
    l->var = -1;
    return l;
}

static rf_fe_expr *var_expr(rule_builder *b, int32_t v, rf_loc loc)
{
    rf_fe_expr *e = rf_chk_expr_new(b->c, RF_FE_VAR, loc);
    if (e) e->var = v;
    else b->bad = 1;
    return e;
}

static rf_fe_expr **args_new(rule_builder *b, int32_t n)
{
    rf_fe_expr **a = rf_arena_alloc(b->c->a, (size_t)(n + 1) * sizeof *a);
    if (!a) {
        b->c->oom = 1;
        b->bad = 1;
    }
    return a;
}

static rf_fe_expr *flat_expr(rule_builder *b, const rf_ast_expr *e);
static rf_fe_expr *flat_term(rule_builder *b, const rf_ast_expr *e, int allow_wildcard);

/* A constant from a literal node; NULL when e is not a literal. */
static rf_fe_expr *const_expr(rule_builder *b, const rf_ast_expr *e)
{
    rf_fe_const k;
    memset(&k, 0, sizeof k);
    switch (e->kind) {
    case RF_AST_INT:
        if (e->ival == INT64_MIN && e->op != '~') {
            rf_error(b->c->d, e->loc, "integer literal 9223372036854775808 is out of range for int (64-bit)");
            b->bad = 1;
        }
        k.type = RF_TYPE_INT;
        k.i = e->ival;
        break;
    case RF_AST_DECIMAL: k.type = RF_TYPE_DECIMAL; k.i = e->ival; break;
    case RF_AST_FLOAT: k.type = RF_TYPE_FLOAT; k.f = e->fval; break;
    case RF_AST_BOOL: k.type = RF_TYPE_BOOL; k.i = e->ival; break;
    case RF_AST_DATE: k.type = RF_TYPE_DATE; k.i = e->ival; break;
    case RF_AST_STRING: k.type = RF_TYPE_STRING; k.s = e->sval; k.slen = e->slen; break;
    default: return NULL;
    }
    rf_fe_expr *x = rf_chk_expr_new(b->c, RF_FE_CONST, e->loc);
    if (!x) {
        b->bad = 1;
        return NULL;
    }
    x->c = k;
    x->type = k.type;
    return x;
}

/* An unknown name, with the nearest known one when it looks like a typo. */
static void undefined(rf_checker *c, const char *name, rf_loc loc)
{
    /* (a name in a built-in's namespace that is no built-in is most likely
    ** a misspelt one) */
    int bns = rf_chk_builtin_namespace(name) > 0;
    const char *near = rf_chk_suggest_name(c, name, 1);
    if (bns)
        rf_error(c->d, loc, "unknown built-in `%s`%s%s%s", name, near ? "; did you mean `" : "", near ? near : "",
                 near ? "`?" : "");
    else if (near)
        rf_error(c->d, loc, "undefined predicate `%s`: it is not declared and no rule defines it; did you mean `%s`?",
                 name, near);
    else
        rf_error(c->d, loc, "undefined predicate `%s`: it is not declared and no rule defines it", name);
}

/* Resolves a user predicate used in an atom or an application. */
static rf_fe_pred *resolve(rule_builder *b, const char *name, rf_loc loc, int32_t nargs, int functional)
{
    rf_fe_pred *p = rf_chk_find(b->c, name);
    if (!p) {
        rf_type t;
        if (rf_fe_type_from_name(name, &t))
            rf_error(b->c->d, loc, "type `%s` may appear only in a declaration, after '->'", name);
        else if (strncmp(name, "lang:", 5) == 0)
            rf_error(b->c->d, loc, "`%s` is a directive; directives are facts of their own, like lang:output[`p] = \"p\".", name);
        else if (!rf_chk_in_broken_clause(b->c, name))
            undefined(b->c, name, loc);
        b->bad = 1;
        return NULL;
    }
    if (p->functional && !functional) {
        rf_error(b->c->d, loc, "`%s` is functional: write %s[...] = value, not %s(...)", name, name, name);
        b->bad = 1;
        return NULL;
    }
    if (!p->functional && functional) {
        rf_error(b->c->d, loc, "`%s` is not functional: write %s(...), not %s[...]", name, name, name);
        b->bad = 1;
        return NULL;
    }
    if (p->arity != nargs) {
        if (functional)
            rf_error(b->c->d, loc, "`%s` takes %d key argument%s, but %d %s given", name, p->arity - 1,
                     p->arity - 1 == 1 ? "" : "s", nargs - 1, nargs - 1 == 1 ? "is" : "are");
        else
            rf_error(b->c->d, loc, "`%s` takes %d argument%s, but %d %s given", name, p->arity,
                     p->arity == 1 ? "" : "s", nargs, nargs == 1 ? "is" : "are");
        b->bad = 1;
        return NULL;
    }
    return p;
}

/* Emits pred(args..., value) for f[args] = value; value may be NULL (fresh). */
static int32_t apply_atom(rule_builder *b, const rf_ast_expr *app, const rf_ast_expr *value, int negated,
                          rf_loc loc)
{
    rf_fe_pred *p = resolve(b, app->name, app->loc, app->nargs + 1, 1);
    if (!p) return -1;
    rf_fe_lit *l = lit_new(b, RF_FE_ATOM, loc);
    rf_fe_expr **args = args_new(b, p->arity);
    if (!l || !args) return -1;
    l->pred = p;
    l->negated = negated;
    l->args = args;
    l->nargs = p->arity;
    for (int32_t i = 0; i < app->nargs; i++) args[i] = flat_term(b, app->args[i], negated);
    int32_t out = -1;
    if (value) {
        args[app->nargs] = flat_term(b, value, 1);
        if (args[app->nargs] && args[app->nargs]->kind == RF_FE_VAR) out = args[app->nargs]->var;
    } else {
        out = new_var(b, NULL, app->loc, 0, 1);
        args[app->nargs] = var_expr(b, out, app->loc);
    }
    for (int32_t i = 0; i < p->arity; i++)
        if (!args[i]) b->bad = 1;
    push_lit(b, l);
    return out;
}

static rf_fe_expr *flat_expr(rule_builder *b, const rf_ast_expr *e)
{
    rf_checker *c = b->c;
    if (c->oom) {
        b->bad = 1;
        return NULL;
    }
    rf_fe_expr *k = const_expr(b, e);
    if (k) return k;
    switch (e->kind) {
    case RF_AST_VAR: return var_expr(b, named_var(b, e->name, e->loc), e->loc);
    case RF_AST_WILDCARD:
        rf_error(c->d, e->loc, "a wildcard '_' cannot be used in an expression or a comparison");
        b->bad = 1;
        return NULL;
    case RF_AST_PREDREF:
        rf_error(c->d, e->loc, "a predicate reference (`%s) may appear only in a lang: directive", e->sval);
        b->bad = 1;
        return NULL;
    case RF_AST_BINOP:
    case RF_AST_NEG: {
        /* a chain stays one node of n operands (types.c splits it where the
        ** type its partial result has widens) */
        rf_fe_expr *x = rf_chk_expr_new(c, e->kind == RF_AST_BINOP ? RF_FE_BINOP : RF_FE_NEG, e->loc);
        int32_t n = e->kind == RF_AST_BINOP ? e->nargs : 1;
        rf_fe_expr **args = args_new(b, n);
        if (!x || !args) return NULL;
        x->op = e->op;
        x->args = args;
        x->nargs = n;
        x->oplocs = e->oplocs;
        if (n == 1) args[0] = flat_expr(b, e->lhs);
        for (int32_t i = 0; i < n && e->kind == RF_AST_BINOP; i++) args[i] = flat_expr(b, e->args[i]);
        for (int32_t i = 0; i < n; i++)
            if (!args[i]) return NULL;
        return x;
    }
    case RF_AST_APPLY: {
        const rf_builtin_info *bi = rf_fe_builtin_lookup(e->name);
        if (bi) {
            if (bi->is_predicate) {
                rf_error(c->d, e->loc, "`%s` is a predicate: write %s(...), not %s[...]", e->name, e->name, e->name);
                b->bad = 1;
                return NULL;
            }
            if (e->nargs != bi->nargs) {
                rf_error(c->d, e->loc, "`%s` takes %d argument%s, but %d %s given", e->name, bi->nargs,
                         bi->nargs == 1 ? "" : "s", e->nargs, e->nargs == 1 ? "is" : "are");
                b->bad = 1;
                return NULL;
            }
            if (bi->id == RF_BI_DATE_PARSE && e->args[0]->kind == RF_AST_STRING) {
                /* folded here so that a bad date is a compile-time error */
                int32_t d;
                rf_val_err ve;
                if (rf_val_parse_date(e->args[0]->sval, e->args[0]->slen, &d, &ve)) {
                    rf_error(c->d, e->args[0]->loc, "date:parse of \"%s\": %s (expected YYYY-MM-DD)",
                             e->args[0]->sval, ve.why);
                    b->bad = 1;
                    return NULL;
                }
                rf_fe_expr *x = rf_chk_expr_new(c, RF_FE_CONST, e->loc);
                if (!x) return NULL;
                x->c.type = x->type = RF_TYPE_DATE;
                x->c.i = d;
                return x;
            }
            rf_fe_expr *x = rf_chk_expr_new(c, RF_FE_CALL, e->loc);
            rf_fe_expr **args = args_new(b, e->nargs);
            if (!x || !args) return NULL;
            x->fn = bi->id;
            x->args = args;
            x->nargs = e->nargs;
            for (int32_t i = 0; i < e->nargs; i++)
                if (!(args[i] = flat_expr(b, e->args[i]))) return NULL;
            return x;
        }
        int32_t v = apply_atom(b, e, NULL, 0, e->loc);
        if (v < 0) return NULL;
        return var_expr(b, v, e->loc);
    }
    default: break;
    }
    b->bad = 1;
    return NULL;
}

/* A fresh variable t and the literal t = e (an assignment once safety sees
** that e's variables are bound). */
static rf_fe_expr *bind_fresh(rule_builder *b, const rf_ast_expr *e)
{
    rf_fe_expr *x = flat_expr(b, e);
    if (!x) return NULL;
    int32_t t = new_var(b, NULL, e->loc, 0, 1);
    rf_fe_lit *l = lit_new(b, RF_FE_CMP, e->loc);
    if (!l) return NULL;
    l->op = RF_CMP_EQ;
    l->lhs = var_expr(b, t, e->loc);
    l->rhs = x;
    push_lit(b, l);
    return var_expr(b, t, e->loc);
}

/* An argument of an atom: a variable, a constant, or a fresh variable equal
** to the expression. */
static rf_fe_expr *flat_term(rule_builder *b, const rf_ast_expr *e, int allow_wildcard)
{
    if (e->kind == RF_AST_WILDCARD) {
        if (!allow_wildcard) {
            /* a wildcard inside f[_] used as a value is fine too: it is existential */
        }
        for (int32_t i = 0; i < b->c->nwild; i++)
            if (b->c->wild_nodes[i] == e) return var_expr(b, named_var(b, b->c->wild_names[i], e->loc), e->loc);
        return var_expr(b, new_var(b, NULL, e->loc, 1, 0), e->loc);
    }
    if (e->kind == RF_AST_VAR) return var_expr(b, named_var(b, e->name, e->loc), e->loc);
    rf_fe_expr *k = const_expr(b, e);
    if (k) return k;
    if (e->kind == RF_AST_APPLY && !rf_fe_builtin_lookup(e->name)) {
        int32_t v = apply_atom(b, e, NULL, 0, e->loc);
        return v < 0 ? NULL : var_expr(b, v, e->loc);
    }
    return bind_fresh(b, e);
}


static rf_cmp_op invert(rf_cmp_op op)
{
    switch (op) {
    case RF_CMP_EQ: return RF_CMP_NE;
    case RF_CMP_NE: return RF_CMP_EQ;
    case RF_CMP_LT: return RF_CMP_GE;
    case RF_CMP_LE: return RF_CMP_GT;
    case RF_CMP_GT: return RF_CMP_LE;
    case RF_CMP_GE: return RF_CMP_LT;
    }
    return op;
}

/* Undeclared columns take the first rule's variable names (output headers
** use them); a column without one (a constant, a repeated variable) is
** colN, or colN_2, ... where a variable of another column has that name, so
** that no two columns share one. */
static int column_name_taken(const rf_fe_pred *p, int32_t col, const char *name)
{
    for (int32_t j = 0; j < p->arity; j++)
        if (j != col && p->cols[j] && strcmp(p->cols[j], name) == 0) return 1;
    return 0;
}

static void undeclared_column_names(rf_checker *c, rf_fe_pred *p, const rf_ast_atom *h)
{
    uint8_t *named = rf_arena_alloc(c->a, (size_t)p->arity + 1);
    if (!named) {
        c->oom = 1;
        return;
    }
    for (int32_t i = 0; i < p->arity; i++) {
        named[i] = 0;
        if (p->cols[i] || h->args[i]->kind != RF_AST_VAR) continue;
        if (column_name_taken(p, i, h->args[i]->name)) continue;
        p->cols[i] = h->args[i]->name;
        named[i] = 1;
    }
    for (int32_t i = 0; i < p->arity; i++) {
        if (p->cols[i]) continue;
        const char *name = rf_arena_sprintf(c->a, "col%d", i + 1);
        for (int32_t k = 2; name && column_name_taken(p, i, name); k++)
            name = rf_arena_sprintf(c->a, "col%d_%d", i + 1, k);
        if (!name) {
            c->oom = 1;
            return;
        }
        p->cols[i] = name;
    }
}

/* A functional application used as a value in a negated atom would be
** bound outside the negation (!e(x, f[x]) holding only where f[x] has a
** value), while inside a negated conjunction it is existential, as in
** !(e(x, f[x]), x > 0): the two meanings differ where f[x] has no value, as
** for a negated comparison, so the program says which it means. */
static int negated_apply(rule_builder *b, const rf_ast_expr *const *args, int32_t nargs, const rf_ast_expr *value,
                         int negated, rf_loc loc)
{
    if (!negated) return 0;
    int found = value && rf_dsg_has_user_apply(value);
    for (int32_t i = 0; i < nargs && !found; i++) found = rf_dsg_has_user_apply(args[i]);
    if (!found) return 0;
    rf_error(b->c->d, loc,
             "a negated atom may not use functional predicates as values; bind the value first (f[x] = v, !e(x, v)) "
             "or negate the conjunction (!(f[x] = v, e(x, v)))");
    b->bad = 1;
    return 1;
}

void rf_dsg_body_atom(rule_builder *b, const rf_ast_atom *a, int negated, rf_loc loc)
{
    if (negated_apply(b, (const rf_ast_expr *const *)a->args, a->nargs, NULL, negated, loc)) return;
    const rf_builtin_info *bi = rf_fe_builtin_lookup(a->name);
    if (bi) {
        if (!bi->is_predicate || a->functional) {
            if (!bi->is_predicate)
                rf_error(b->c->d, a->loc, "`%s` is a function: write %s[...] = value", a->name, a->name);
            else
                rf_error(b->c->d, a->loc, "`%s` is a predicate: write %s(...)", a->name, a->name);
            b->bad = 1;
            return;
        }
        if (a->nargs != bi->nargs) {
            rf_error(b->c->d, a->loc, "`%s` takes %d arguments, but %d %s given", a->name, bi->nargs,
                     a->nargs, a->nargs == 1 ? "is" : "are");
            b->bad = 1;
            return;
        }
        rf_fe_lit *l = lit_new(b, RF_FE_BUILTIN, loc);
        rf_fe_expr **args = args_new(b, a->nargs);
        if (!l || !args) return;
        l->fn = bi->id;
        l->negated = negated;
        l->args = args;
        l->nargs = a->nargs;
        for (int32_t i = 0; i < a->nargs; i++)
            if (!(args[i] = flat_expr(b, a->args[i]))) return;
        push_lit(b, l);
        return;
    }
    rf_fe_pred *p = resolve(b, a->name, a->loc, a->nargs, a->functional);
    if (!p) return;
    rf_fe_lit *l = lit_new(b, RF_FE_ATOM, loc);
    rf_fe_expr **args = args_new(b, a->nargs);
    if (!l || !args) return;
    l->pred = p;
    l->negated = negated;
    l->args = args;
    l->nargs = a->nargs;
    for (int32_t i = 0; i < a->nargs; i++)
        if (!(args[i] = flat_term(b, a->args[i], 1))) {
            b->bad = 1;
            return;
        }
    push_lit(b, l);
}

static void body_cmp(rule_builder *b, const rf_ast_formula *f, int negated)
{
    /* f[x] = v (either way round) is an atom */
    if (f->op == RF_CMP_EQ && (rf_dsg_is_user_apply(f->lhs) || rf_dsg_is_user_apply(f->rhs))) {
        const rf_ast_expr *app = rf_dsg_is_user_apply(f->lhs) ? f->lhs : f->rhs;
        const rf_ast_expr *val = app == f->lhs ? f->rhs : f->lhs;
        if (negated_apply(b, (const rf_ast_expr *const *)app->args, app->nargs, val, negated, f->loc)) return;
        apply_atom(b, app, val, negated, f->loc);
        return;
    }
    if (negated && (rf_dsg_has_user_apply(f->lhs) || rf_dsg_has_user_apply(f->rhs))) {
        rf_error(b->c->d, f->loc,
                 "a negated comparison may not use functional predicates as values; bind the value first (f[x] = v, !(v > 3))");
        b->bad = 1;
        return;
    }
    if (f->lhs->kind == RF_AST_WILDCARD || f->rhs->kind == RF_AST_WILDCARD) {
        rf_error(b->c->d, f->lhs->kind == RF_AST_WILDCARD ? f->lhs->loc : f->rhs->loc,
                 "a wildcard '_' cannot be used in a comparison");
        b->bad = 1;
        return;
    }
    rf_fe_expr *l = flat_expr(b, f->lhs), *r = flat_expr(b, f->rhs);
    if (!l || !r) return;
    rf_fe_lit *lit = lit_new(b, RF_FE_CMP, f->loc);
    if (!lit) return;
    lit->op = negated ? invert(f->op) : f->op;
    lit->lhs = l;
    lit->rhs = r;
    push_lit(b, lit);
}

/* Whether every variable expression e reads is marked in in_group, and
** whether it reads one at all (*any). */
static int vars_within(const rf_fe_expr *e, const uint8_t *in_group, int *any)
{
    if (e->kind == RF_FE_VAR) {
        *any = 1;
        return in_group[e->var];
    }
    for (int32_t i = 0; i < e->nargs; i++)
        if (!vars_within(e->args[i], in_group, any)) return 0;
    return 1;
}

static int cmp_within(const rf_fe_lit *x, const uint8_t *in_group)
{
    int any = 0;
    return vars_within(x->lhs, in_group, &any) && vars_within(x->rhs, in_group, &any) && any;
}

/* The implied filter of OR literal `or` on one group of variables (those of
** one atom, or one variable no atom binds): per alternative, its
** comparisons that read only the group. When every alternative has some, their
** disjunction follows from `or`, and is added as a literal of its own: it
** changes no result, but the planner can apply it where the group enters the
** plan (TPC-H Q19's part classes on part, Q7's two nations on each nation
** scan) instead of after the joins. Nothing is added when it would be `or`
** itself. */
static void implied_on(rule_builder *b, const rf_fe_lit *or, const uint8_t *in_group)
{
    int32_t picked = 0, total = 0;
    for (int32_t a = 0; a < or->nalts; a++) {
        int32_t k = 0;
        for (int32_t j = 0; j < or->altn[a]; j++) k += cmp_within(or->alts[a][j], in_group);
        if (!k) return;
        picked += k;
        total += or->altn[a];
    }
    if (picked == total) return;
    rf_fe_lit *l = lit_new(b, RF_FE_OR, or->loc);
    rf_fe_lit ***alts = rf_arena_alloc(b->c->a, (size_t)or->nalts * sizeof *alts);
    int32_t *altn = rf_arena_alloc(b->c->a, (size_t)or->nalts * sizeof *altn);
    if (!l || !alts || !altn) {
        b->c->oom = 1;
        b->bad = 1;
        return;
    }
    for (int32_t a = 0; a < or->nalts; a++) {
        alts[a] = rf_arena_alloc(b->c->a, (size_t)or->altn[a] * sizeof **alts);
        if (!alts[a]) {
            b->c->oom = 1;
            b->bad = 1;
            return;
        }
        altn[a] = 0;
        for (int32_t j = 0; j < or->altn[a]; j++)
            if (cmp_within(or->alts[a][j], in_group)) alts[a][altn[a]++] = or->alts[a][j];
    }
    l->alts = alts;
    l->altn = altn;
    l->nalts = or->nalts;
    push_lit(b, l);
}

/* implied_on for every OR literal of the body, over the variables of each
** positive atom and over each variable that no atom binds. */
static void implied_filters(rule_builder *b)
{
    int32_t n0 = b->nlits, nors = 0;
    for (int32_t i = 0; i < n0; i++) nors += b->lits[i]->kind == RF_FE_OR;
    if (!nors) return;
    uint8_t *in_group = rf_arena_alloc(b->c->a, (size_t)b->nvars + 1), *in_atom = rf_arena_alloc(b->c->a, (size_t)b->nvars + 1);
    if (!in_group || !in_atom) {
        b->c->oom = 1;
        b->bad = 1;
        return;
    }
    memset(in_atom, 0, (size_t)b->nvars + 1);
    for (int32_t i = 0; i < n0; i++) {
        const rf_fe_lit *a = b->lits[i];
        if (a->kind != RF_FE_ATOM || a->negated) continue;
        for (int32_t j = 0; j < a->nargs; j++)
            if (a->args[j]->kind == RF_FE_VAR) in_atom[a->args[j]->var] = 1;
    }
    for (int32_t o = 0; o < n0 && !b->bad; o++) {
        const rf_fe_lit *or = b->lits[o];
        if (or->kind != RF_FE_OR) continue;
        for (int32_t i = 0; i < n0 && !b->bad; i++) {
            const rf_fe_lit *a = b->lits[i];
            if (a->kind != RF_FE_ATOM || a->negated) continue;
            memset(in_group, 0, (size_t)b->nvars + 1);
            for (int32_t j = 0; j < a->nargs; j++)
                if (a->args[j]->kind == RF_FE_VAR) in_group[a->args[j]->var] = 1;
            implied_on(b, or, in_group);
        }
        for (int32_t v = 0; v < b->nvars && !b->bad; v++) {
            if (in_atom[v]) continue;
            memset(in_group, 0, (size_t)b->nvars + 1);
            in_group[v] = 1;
            implied_on(b, or, in_group);
        }
    }
}

static void body_basic(rule_builder *b, const rf_ast_formula *f);

/* A filter-only disjunction (filter_only): its own DNF, each conjunction
** translated into CMP literals of its own, kept together as one literal. */
static void body_or(rule_builder *b, const rf_ast_formula *f)
{
    dnf d = rf_dsg_dnf_of(b->c, f, NULL);
    if (b->c->oom || d.too_big) {
        if (d.too_big)
            rf_error(b->c->d, f->loc, "this disjunction expands to more than %d alternatives; split it into several rules",
                     RF_DSG_MAX_DISJUNCTS);
        b->bad = 1;
        return;
    }
    rf_fe_lit *l = lit_new(b, RF_FE_OR, f->loc);
    rf_fe_lit ***alts = rf_arena_alloc(b->c->a, (size_t)(d.n + 1) * sizeof *alts);
    int32_t *altn = rf_arena_alloc(b->c->a, (size_t)(d.n + 1) * sizeof *altn);
    if (!l || !alts || !altn) {
        b->c->oom = 1;
        b->bad = 1;
        return;
    }
    rf_fe_lit **saved = b->lits;
    int32_t nsaved = b->nlits, capsaved = b->caplits;
    for (int32_t i = 0; i < d.n && !b->bad; i++) {
        b->lits = NULL;
        b->nlits = b->caplits = 0;
        for (int32_t j = 0; j < d.c[i].n && !b->bad; j++) body_basic(b, d.c[i].items[j]);
        for (int32_t j = 0; j < b->nlits && !b->bad; j++)
            if (b->lits[j]->kind != RF_FE_CMP) {
                /* filter_only admits comparisons only: never drop a rule unsaid */
                rf_internal_error(b->c->d, f->loc, "a disjunction taken for a filter produced a literal of kind %d",
                         (int)b->lits[j]->kind);
                b->bad = 1;
            }
        alts[i] = b->lits;
        altn[i] = b->nlits;
    }
    b->lits = saved;
    b->nlits = nsaved;
    b->caplits = capsaved;
    if (b->bad) return;
    l->alts = alts;
    l->altn = altn;
    l->nalts = d.n;
    push_lit(b, l);
}

static void body_basic(rule_builder *b, const rf_ast_formula *f)
{
    switch (f->kind) {
    case RF_FORM_ATOM: rf_dsg_body_atom(b, &f->atom, 0, f->loc); break;
    case RF_FORM_CMP: body_cmp(b, f, 0); break;
    case RF_FORM_OR: body_or(b, f); break;
    case RF_FORM_NOT:
        if (f->sub->kind == RF_FORM_ATOM) rf_dsg_body_atom(b, &f->sub->atom, 1, f->loc);
        else if (f->sub->kind == RF_FORM_CMP) body_cmp(b, f->sub, 1);
        else if (rf_dsg_not_conj_is_plain(b, f)) {
            const rf_ast_formula *it = f->sub->items[0];
            if (it->kind == RF_FORM_ATOM) rf_dsg_body_atom(b, &it->atom, 1, f->loc);
            else body_cmp(b, it, 1);
        } else if (f->sub->kind == RF_FORM_AND) rf_dsg_body_not_conj(b, f);
        else b->bad = 1; /* reported by rf_dsg_dnf_of */
        break;
    default: b->bad = 1; break;
    }
}

static rf_fe_rule *rule_new(rule_builder *b, rf_loc loc)
{
    rf_fe_rule *r = rf_arena_alloc(b->c->a, sizeof *r);
    if (!r) b->c->oom = 1;
    else r->loc = loc;
    return r;
}

/* Head arguments: variables and constants; an expression gets a fresh
** variable bound by an assignment in the body. */
static rf_fe_expr **head_args(rule_builder *b, const rf_ast_atom *h)
{
    rf_fe_expr **args = args_new(b, h->nargs);
    if (!args) return NULL;
    for (int32_t i = 0; i < h->nargs; i++) {
        const rf_ast_expr *e = h->args[i];
        if (e->kind == RF_AST_WILDCARD) {
            rf_error(b->c->d, e->loc, "a wildcard '_' cannot appear in a rule head");
            b->bad = 1;
            return NULL;
        }
        if (e->kind == RF_AST_PREDREF) {
            rf_error(b->c->d, e->loc, "a predicate reference (`%s) may appear only in a lang: directive", e->sval);
            b->bad = 1;
            return NULL;
        }
        if (e->kind == RF_AST_VAR) args[i] = var_expr(b, named_var(b, e->name, e->loc), e->loc);
        else if (!(args[i] = const_expr(b, e)))
            args[i] = bind_fresh(b, e);
        if (!args[i]) return NULL;
    }
    return args;
}

static int agg_fn_from_name(const char *s, rf_agg_fn *fn)
{
    static const char *n[] = {"total", "count", "min", "max", "avg"};
    for (int i = 0; i < 5; i++)
        if (strcmp(s, n[i]) == 0) {
            *fn = (rf_agg_fn)i;
            return 1;
        }
    return 0;
}

/* Builds one rule for head h over one conjunction (or none for a fact). */
void rf_dsg_build_rule(rf_checker *c, const rf_ast_clause *cl, const rf_ast_atom *h, const conj *k)
{
    rule_builder b;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.cl = cl;
    b.head = h;
    b.k = k;
    rf_fe_pred *p = rf_chk_find(c, h->name);
    if (!p) return; /* reported by pass 2 */
    if (p->functional != h->functional || p->arity != h->nargs) {
        char where[320];
        rf_chk_where(p->loc, h->loc, where, sizeof where);
        if (p->functional != h->functional)
            rf_error(c->d, h->loc, "`%s` is %sfunctional (%s) but this rule defines it as %s", h->name,
                     p->functional ? "" : "not ", where, h->functional ? "functional" : "a plain relation");
        else
            rf_error(c->d, h->loc, "`%s` has %d column%s (%s) but this rule gives %d", h->name, p->arity,
                     p->arity == 1 ? "" : "s", where, h->nargs);
        return;
    }
    rf_fe_rule *r = rule_new(&b, cl->loc);
    if (!r) return;
    /* body first, so that variables get their locations from the body */
    if (k)
        for (int32_t i = 0; i < k->n && !b.bad; i++) body_basic(&b, k->items[i]);
    if (!b.bad) implied_filters(&b);
    /* aggregates */
    rf_fe_agg *aggs = NULL;
    if (cl->naggs) {
        aggs = rf_arena_alloc(c->a, (size_t)cl->naggs * sizeof *aggs);
        if (!aggs) {
            c->oom = 1;
            return;
        }
        for (int32_t g = 0; g < cl->naggs && !b.bad; g++) {
            const rf_ast_agg *ag = &cl->aggs[g];
            rf_agg_fn fn;
            if (!agg_fn_from_name(ag->func, &fn)) {
                rf_error(c->d, ag->loc, "unknown aggregate function `%s` (expected total, count, min, max or avg)",
                         ag->func);
                b.bad = 1;
                break;
            }
            if (fn == RF_AGG_COUNT && ag->arg) {
                rf_error(c->d, ag->loc, "count() takes no argument: it counts the solutions of the body");
                b.bad = 1;
                break;
            }
            if (fn != RF_AGG_COUNT && !ag->arg) {
                rf_error(c->d, ag->loc, "%s() needs an argument, as in %s(x)", ag->func, ag->func);
                b.bad = 1;
                break;
            }
            for (int32_t j = 0; j < b.nvars; j++)
                if (!b.vars[j].temp && !b.vars[j].wildcard && strcmp(b.vars[j].name, ag->var) == 0) {
                    rf_error(c->d, b.vars[j].loc,
                             "`%s` is the result of an aggregate and cannot also appear in its body", ag->var);
                    b.bad = 1;
                }
            for (int32_t j = 0; j < g; j++)
                if (strcmp(cl->aggs[j].var, ag->var) == 0) {
                    rf_error(c->d, ag->loc, "`%s` is the result of two aggregates", ag->var);
                    b.bad = 1;
                }
            /* an argument that reads a result would be computed from itself
            ** (the body would bind it as a variable of its own, and the head's
            ** result then looked unused) */
            for (int32_t j = 0; j < cl->naggs && ag->arg && !b.bad; j++) {
                const rf_ast_expr *self = find_var(ag->arg, cl->aggs[j].var);
                if (self) {
                    rf_error(c->d, self->loc,
                             "`%s` is the result of an aggregate and cannot also appear in an aggregate's argument",
                             cl->aggs[j].var);
                    b.bad = 1;
                }
            }
            if (b.bad) break;
            aggs[g].fn = fn;
            aggs[g].loc = ag->loc;
            aggs[g].arg_var = -1;
            if (ag->arg) {
                rf_fe_expr *t = flat_term(&b, ag->arg, 0);
                if (!t) break;
                if (t->kind != RF_FE_VAR) {
                    rf_error(c->d, ag->arg->loc, "the argument of %s() must depend on the body's variables", ag->func);
                    b.bad = 1;
                    break;
                }
                aggs[g].arg_var = t->var;
            }
        }
        if (!b.bad)
            for (int32_t g = 0; g < cl->naggs; g++)
                aggs[g].out_var = new_var(&b, cl->aggs[g].var, cl->aggs[g].loc, 0, 0);
    }
    if (b.bad || c->oom) return;
    r->head_args = head_args(&b, h);
    if (b.bad || !r->head_args || c->oom) return;
    if (cl->naggs) {
        for (int32_t g = 0; g < cl->naggs; g++) {
            int used = 0;
            for (int32_t i = 0; i < h->nargs; i++)
                if (r->head_args[i]->kind == RF_FE_VAR && r->head_args[i]->var == aggs[g].out_var) used = 1;
            const rf_ast_expr *inside = NULL;
            for (int32_t i = 0; i < h->nargs && !used && !inside; i++)
                if (h->args[i]->kind != RF_AST_VAR) inside = find_var(h->args[i], cl->aggs[g].var);
            if (inside) {
                /* the head's expressions are computed with the body, before the aggregate */
                rf_error(c->d, inside->loc,
                         "the aggregate result `%s` may appear in the head only as itself, not inside an "
                         "expression: compute the expression in a rule that reads this one",
                         cl->aggs[g].var);
                b.bad = 1;
            } else if (!used) {
                rf_error(c->d, cl->aggs[g].loc, "the aggregate result `%s` does not appear in the head",
                         cl->aggs[g].var);
                b.bad = 1;
            }
        }
        if (b.bad) return;
    }
    r->aggs = aggs;
    r->naggs = cl->naggs;
    r->vars = b.vars;
    r->nvars = b.nvars;
    r->head = p;
    if (!rf_chk_safety(c, r, b.lits, b.nlits)) return;
    if (!p->declared) undeclared_column_names(c, p, h);
    rf_chk_add_rule_to_pred(c, p, r);
}
