/*
** frontend/desugar_dnf.c: rule bodies to disjunctive normal form.
**
** Owns: the DNF of a body (one conjunction per disjunct, bounded by
** RF_DSG_MAX_DISJUNCTS; negations pushed inwards where that stays exact),
** filter-only disjunctions kept as one item (an OR literal), the names a
** body or a conjunction binds, and the AST tests for functional
** applications (f[x] used as a value).
*/
#include "desugar_internal.h"

#include <string.h>

static dnf dnf_single(rf_checker *c, const rf_ast_formula *f)
{
    dnf r = {0, 0, 0};
    r.c = rf_arena_alloc(c->a, sizeof *r.c);
    const rf_ast_formula **it = rf_arena_alloc(c->a, sizeof *it);
    if (!r.c || !it) {
        c->oom = 1;
        return r;
    }
    it[0] = f;
    r.c[0].items = it;
    r.c[0].n = 1;
    r.n = 1;
    return r;
}

static dnf dnf_and(rf_checker *c, dnf x, dnf y)
{
    dnf r = {0, 0, x.too_big || y.too_big};
    if (r.too_big || (int64_t)x.n * y.n > RF_DSG_MAX_DISJUNCTS) {
        r.too_big = 1;
        return r;
    }
    r.c = rf_arena_alloc(c->a, (size_t)(x.n * y.n + 1) * sizeof *r.c);
    if (!r.c) {
        c->oom = 1;
        return r;
    }
    for (int32_t i = 0; i < x.n; i++)
        for (int32_t j = 0; j < y.n; j++) {
            conj *k = &r.c[r.n++];
            k->n = x.c[i].n + y.c[j].n;
            k->items = rf_arena_alloc(c->a, (size_t)k->n * sizeof *k->items);
            if (!k->items) {
                c->oom = 1;
                return r;
            }
            memcpy(k->items, x.c[i].items, (size_t)x.c[i].n * sizeof *k->items);
            memcpy(k->items + x.c[i].n, y.c[j].items, (size_t)y.c[j].n * sizeof *k->items);
        }
    return r;
}

static dnf dnf_or(rf_checker *c, dnf x, dnf y)
{
    dnf r = {0, 0, x.too_big || y.too_big};
    if (r.too_big || x.n + y.n > RF_DSG_MAX_DISJUNCTS) {
        r.too_big = 1;
        return r;
    }
    r.c = rf_arena_alloc(c->a, (size_t)(x.n + y.n + 1) * sizeof *r.c);
    if (!r.c) {
        c->oom = 1;
        return r;
    }
    memcpy(r.c, x.c, (size_t)x.n * sizeof *r.c);
    memcpy(r.c + x.n, y.c, (size_t)y.n * sizeof *r.c);
    r.n = x.n + y.n;
    return r;
}

/* The DNF of a conjunction f of n items: the product of the items' DNFs,
** each conjunction of it built once (pairwise products would copy the
** growing prefix once per item: quadratic in a body of many literals). */
static dnf dnf_and_all(rf_checker *c, const rf_ast_formula *f, const bound_names *bn)
{
    dnf r = {0, 0, 0};
    dnf *parts = rf_arena_alloc(c->a, (size_t)f->nitems * sizeof *parts);
    int32_t *pick = rf_arena_alloc(c->a, (size_t)f->nitems * sizeof *pick);
    if (!parts || !pick) {
        c->oom = 1;
        return r;
    }
    int64_t count = 1;
    for (int32_t i = 0; i < f->nitems; i++) {
        parts[i] = rf_dsg_dnf_of(c, f->items[i], bn);
        if (c->oom) return r;
        if (parts[i].too_big || count * parts[i].n > RF_DSG_MAX_DISJUNCTS) {
            r.too_big = 1;
            return r;
        }
        count *= parts[i].n;
        pick[i] = 0;
    }
    if (count == 0) return r;
    r.c = rf_arena_alloc(c->a, (size_t)count * sizeof *r.c);
    if (!r.c) {
        c->oom = 1;
        return r;
    }
    /* every choice of one conjunction per item, the last item's varying fastest */
    for (int64_t q = 0; q < count; q++) {
        conj *k = &r.c[r.n++];
        k->n = 0;
        for (int32_t i = 0; i < f->nitems; i++) k->n += parts[i].c[pick[i]].n;
        k->items = rf_arena_alloc(c->a, (size_t)k->n * sizeof *k->items + 1);
        if (!k->items) {
            c->oom = 1;
            return r;
        }
        int32_t at = 0;
        for (int32_t i = 0; i < f->nitems; i++) {
            const conj *pc = &parts[i].c[pick[i]];
            memcpy(k->items + at, pc->items, (size_t)pc->n * sizeof *k->items);
            at += pc->n;
        }
        for (int32_t i = f->nitems - 1; i >= 0; i--) {
            if (++pick[i] < parts[i].n) break;
            pick[i] = 0;
        }
    }
    return r;
}

static rf_ast_formula *mk_not(rf_checker *c, const rf_ast_formula *sub)
{
    rf_ast_formula *f = rf_ast_formula_new(c->a, RF_FORM_NOT, sub->loc);
    if (!f) c->oom = 1;
    else f->sub = (rf_ast_formula *)sub;
    return f;
}

/* An expression of variables, constants and arithmetic only. */
static int pure_expr(const rf_ast_expr *e)
{
    switch (e->kind) {
    case RF_AST_VAR:
    case RF_AST_INT:
    case RF_AST_DECIMAL:
    case RF_AST_FLOAT:
    case RF_AST_STRING:
    case RF_AST_BOOL:
    case RF_AST_DATE: return 1;
    case RF_AST_NEG: return pure_expr(e->lhs);
    case RF_AST_BINOP:
    case RF_AST_APPLY: /* a built-in function (not a predicate: that would be a join) */
        if (e->kind == RF_AST_APPLY && !rf_fe_builtin_lookup(e->name)) return 0;
        for (int32_t i = 0; i < e->nargs; i++)
            if (!pure_expr(e->args[i])) return 0;
        return 1;
    default: return 0;
    }
}

/* A formula of comparisons of pure expressions only, under and, or, not:
** no atom (f[x] = v is one), so De Morgan's laws hold for it as written. */
static int pure_filter(const rf_ast_formula *f)
{
    switch (f->kind) {
    case RF_FORM_CMP: return pure_expr(f->lhs) && pure_expr(f->rhs);
    case RF_FORM_NOT: return pure_filter(f->sub);
    case RF_FORM_AND:
    case RF_FORM_OR:
        for (int32_t i = 0; i < f->nitems; i++)
            if (!pure_filter(f->items[i])) return 0;
        return 1;
    default: return 0;
    }
}

int rf_dsg_name_bound(const bound_names *bn, const char *name)
{
    for (int32_t i = 0; i < bn->n; i++)
        if (!strcmp(bn->names[i], name)) return 1;
    return 0;
}

static int expr_names_bound(const rf_ast_expr *e, const bound_names *bn)
{
    switch (e->kind) {
    case RF_AST_VAR: return rf_dsg_name_bound(bn, e->name);
    case RF_AST_NEG: return expr_names_bound(e->lhs, bn);
    case RF_AST_BINOP:
    case RF_AST_APPLY:
        for (int32_t i = 0; i < e->nargs; i++)
            if (!expr_names_bound(e->args[i], bn)) return 0;
        return 1;
    default: return 1;
    }
}

/* A disjunction that is only a filter: comparisons of pure expressions
** (under and, or, not) over variables the rest of the body binds. It
** becomes one OR literal, evaluated as one condition, instead of one rule
** per disjunct that would repeat every join of the body. */
static int filter_only(const rf_ast_formula *f, const bound_names *bn)
{
    switch (f->kind) {
    case RF_FORM_CMP:
        return pure_expr(f->lhs) && pure_expr(f->rhs) && expr_names_bound(f->lhs, bn) && expr_names_bound(f->rhs, bn);
    case RF_FORM_NOT: return filter_only(f->sub, bn);
    case RF_FORM_AND:
    case RF_FORM_OR:
        for (int32_t i = 0; i < f->nitems; i++)
            if (!filter_only(f->items[i], bn)) return 0;
        return 1;
    default: return 0;
    }
}

dnf rf_dsg_dnf_of(rf_checker *c, const rf_ast_formula *f, const bound_names *bn)
{
    dnf none = {0, 0, 0};
    if (c->oom) return none;
    switch (f->kind) {
    case RF_FORM_ATOM:
    case RF_FORM_CMP: return dnf_single(c, f);
    case RF_FORM_AND:
    case RF_FORM_OR: {
        if (f->kind == RF_FORM_OR && bn && filter_only(f, bn)) return dnf_single(c, f);
        const bound_names *sub = f->kind == RF_FORM_AND ? bn : NULL;
        if (f->kind == RF_FORM_AND) return dnf_and_all(c, f, sub);
        dnf r = rf_dsg_dnf_of(c, f->items[0], sub);
        for (int32_t i = 1; i < f->nitems && !c->oom && !r.too_big; i++) {
            dnf s = rf_dsg_dnf_of(c, f->items[i], sub);
            r = f->kind == RF_FORM_AND ? dnf_and(c, r, s) : dnf_or(c, r, s);
        }
        return r;
    }
    case RF_FORM_NOT: {
        const rf_ast_formula *s = f->sub;
        if (s->kind == RF_FORM_ATOM || s->kind == RF_FORM_CMP) return dnf_single(c, f);
        if (s->kind == RF_FORM_NOT) return rf_dsg_dnf_of(c, s->sub, NULL);
        if (s->kind == RF_FORM_OR) {
            /* !(a ; b) is !a, !b */
            dnf r = {0, 0, 0};
            for (int32_t i = 0; i < s->nitems && !c->oom && !r.too_big; i++) {
                rf_ast_formula *n = mk_not(c, s->items[i]);
                if (!n) return none;
                dnf t = rf_dsg_dnf_of(c, n, NULL);
                r = i ? dnf_and(c, r, t) : t;
            }
            return r;
        }
        /* !(a, b) of filters only (comparisons of pure expressions, under
        ** and, or, not) is (!a ; !b); with atoms it stays one item, negating
        ** an auxiliary predicate (rf_dsg_body_not_conj). (filter_only takes
        ** a negated conjunction of filters for a filter: its expansion here
        ** must give comparisons only, nested disjunctions and negations too) */
        for (int32_t i = 0; i < s->nitems; i++)
            if (!pure_filter(s->items[i])) return dnf_single(c, f); /* f[x] = v is an atom too */
        dnf r = {0, 0, 0};
        for (int32_t i = 0; i < s->nitems && !c->oom && !r.too_big; i++) {
            rf_ast_formula *n = mk_not(c, s->items[i]);
            if (!n) return none;
            dnf t = rf_dsg_dnf_of(c, n, NULL);
            r = i ? dnf_or(c, r, t) : t;
        }
        return r;
    }
    }
    return none;
}

int rf_dsg_is_user_apply(const rf_ast_expr *e)
{
    return e->kind == RF_AST_APPLY && !rf_fe_builtin_lookup(e->name);
}

int rf_dsg_has_user_apply(const rf_ast_expr *e)
{
    if (!e) return 0;
    if (rf_dsg_is_user_apply(e)) return 1;
    if (rf_dsg_has_user_apply(e->lhs)) return 1;
    for (int32_t i = 0; i < e->nargs; i++)
        if (rf_dsg_has_user_apply(e->args[i])) return 1;
    return 0;
}

void rf_dsg_add_name(rf_checker *c, bound_names *bn, const char *name)
{
    if (rf_dsg_name_bound(bn, name)) return;
    if (bn->n == bn->cap) {
        int32_t ncap = bn->cap ? bn->cap * 2 : 16;
        const char **n = rf_arena_alloc(c->a, (size_t)ncap * sizeof *n);
        if (!n) {
            c->oom = 1;
            return;
        }
        if (bn->n) memcpy(n, bn->names, (size_t)bn->n * sizeof *n);
        bn->names = n;
        bn->cap = ncap;
    }
    bn->names[bn->n++] = name;
}

/* The names bound_names describes, from the conjunction at the top of a body. */
void rf_dsg_collect_bound(rf_checker *c, const rf_ast_formula *f, bound_names *bn)
{
    switch (f->kind) {
    case RF_FORM_AND:
        for (int32_t i = 0; i < f->nitems && !c->oom; i++) rf_dsg_collect_bound(c, f->items[i], bn);
        break;
    case RF_FORM_ATOM:
        for (int32_t i = 0; i < f->atom.nargs; i++)
            if (f->atom.args[i]->kind == RF_AST_VAR) rf_dsg_add_name(c, bn, f->atom.args[i]->name);
        break;
    case RF_FORM_CMP:
        if (f->op != RF_CMP_EQ) break;
        if (f->lhs->kind == RF_AST_VAR) rf_dsg_add_name(c, bn, f->lhs->name);
        if (f->rhs->kind == RF_AST_VAR) rf_dsg_add_name(c, bn, f->rhs->name);
        break;
    default: break;
    }
}

/* The first pass of rf_dsg_binds_of: positive atoms and f[x] = v. */
static void binds_atoms(rf_checker *c, const rf_ast_formula *f, bound_names *bn)
{
    switch (f->kind) {
    case RF_FORM_AND:
        for (int32_t i = 0; i < f->nitems && !c->oom; i++) binds_atoms(c, f->items[i], bn);
        break;
    case RF_FORM_ATOM:
        if (rf_fe_builtin_lookup(f->atom.name)) break;
        for (int32_t i = 0; i < f->atom.nargs; i++)
            if (f->atom.args[i]->kind == RF_AST_VAR) rf_dsg_add_name(c, bn, f->atom.args[i]->name);
        break;
    case RF_FORM_CMP: {
        if (f->op != RF_CMP_EQ) break;
        const rf_ast_expr *side[2] = {f->lhs, f->rhs};
        for (int i = 0; i < 2; i++)
            if (rf_dsg_is_user_apply(side[i])) {
                /* f[x] = v: a lookup binds its keys and its value */
                for (int32_t j = 0; j < side[i]->nargs; j++)
                    if (side[i]->args[j]->kind == RF_AST_VAR) rf_dsg_add_name(c, bn, side[i]->args[j]->name);
                if (side[1 - i]->kind == RF_AST_VAR) rf_dsg_add_name(c, bn, side[1 - i]->name);
            }
        break;
    }
    default: break;
    }
}

/* The later passes: x = e binds x once e's names are bound (1: one more). */
static int binds_eqs(rf_checker *c, const rf_ast_formula *f, bound_names *bn)
{
    int more = 0;
    if (f->kind == RF_FORM_AND) {
        for (int32_t i = 0; i < f->nitems && !c->oom; i++) more |= binds_eqs(c, f->items[i], bn);
    } else if (f->kind == RF_FORM_CMP && f->op == RF_CMP_EQ) {
        const rf_ast_expr *side[2] = {f->lhs, f->rhs};
        for (int i = 0; i < 2; i++)
            if (side[i]->kind == RF_AST_VAR && !rf_dsg_name_bound(bn, side[i]->name) && pure_expr(side[1 - i]) &&
                expr_names_bound(side[1 - i], bn)) {
                rf_dsg_add_name(c, bn, side[i]->name);
                more = 1;
            }
    }
    return more;
}

/* The names a conjunction binds by itself: the plain variables of its
** positive atoms (not built-in predicates), the plain keys and the value of
** f[x] = v, and the variable side of a top-level `=` whose other side those
** bind (y = x binds neither where nothing else binds one of them). A subset
** of what safety accepts: where it misses one, rf_dsg_body_not_conj adds
** context it did not need, which costs time, never a wrong answer. */
void rf_dsg_binds_of(rf_checker *c, const rf_ast_formula *f, bound_names *bn)
{
    binds_atoms(c, f, bn);
    while (!c->oom && binds_eqs(c, f, bn)) {
    }
}
