/*
** frontend/desugar.c: declarations, head definitions and the desugaring of
** rules into the checked form of rf_frontend.h.
**
** Owns: disjunction (bodies to disjunctive normal form, one rule per
** disjunct), nested expressions and functional applications (fresh
** variables and atoms), wildcards (fresh variables), multi-atom heads (an
** auxiliary predicate holding the body, computed once), aggregate arguments.
*/
#include "check_internal.h"

#include <string.h>

#define MAX_DISJUNCTS 4096

/* ---- pass 1: declarations ------------------------------------------- */

static int is_plain_var(const rf_ast_expr *e) { return e->kind == RF_AST_VAR; }

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
    rf_fe_pred *old = rf_chk_find(c, h->name);
    if (old) {
        rf_error(c->d, h->loc, "`%s` is declared twice (first at line %d)", h->name, old->loc.line);
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
    for (int32_t k = 0; k < n; k++) {
        const rf_ast_formula *f = items[k];
        rf_type t;
        if (f->kind != RF_FORM_ATOM || f->atom.functional || f->atom.nargs != 1 ||
            !is_plain_var(f->atom.args[0]) || !rf_fe_type_from_name(f->atom.name, &t)) {
            rf_error(c->d, f->loc,
                     "a declaration may only give column types, as type(variable) with a type among int, float, decimal, string, boolean, date");
            continue;
        }
        int32_t col = -1;
        for (int32_t i = 0; i < h->nargs; i++)
            if (strcmp(h->args[i]->name, f->atom.args[0]->name) == 0) col = i;
        if (col < 0) {
            rf_error(c->d, f->atom.args[0]->loc, "`%s` is not a column of `%s`", f->atom.args[0]->name,
                     h->name);
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

static int is_directive(const rf_ast_atom *h) { return strncmp(h->name, "lang:", 5) == 0; }

void rf_chk_define_heads(rf_checker *c, const rf_ast_program *ast)
{
    for (int64_t i = 0; i < ast->nclauses && !c->oom; i++) {
        const rf_ast_clause *cl = ast->clauses[i];
        if (cl->kind != RF_CLAUSE_RULE) continue;
        for (int32_t h = 0; h < cl->nheads; h++) {
            const rf_ast_atom *a = cl->heads[h];
            if (is_directive(a)) continue;
            if (rf_chk_is_reserved(a->name)) {
                rf_error(c->d, a->loc, "`%s` is a built-in and cannot be defined by a rule", a->name);
                continue;
            }
            rf_fe_pred *p = rf_chk_find(c, a->name);
            if (!p) rf_chk_add_pred(c, a->name, a->loc, a->nargs, a->functional);
        }
    }
}

/* ---- pass 3: rules -------------------------------------------------- */

/* A conjunction of basic formulas (atoms, comparisons, negations of them). */
typedef struct conj {
    const rf_ast_formula **items;
    int32_t n;
} conj;
typedef struct dnf {
    conj *c;
    int32_t n;
    int too_big;
} dnf;

/* Variable names a body binds outside its disjunctions: those of its
** top-level positive atoms and of `v = expr` comparisons at top level. */
typedef struct bound_names {
    const char **names;
    int32_t n, cap;
} bound_names;

static dnf dnf_of(rf_checker *c, const rf_ast_formula *f, const bound_names *bn);
static dnf dnf_and_all(rf_checker *c, const rf_ast_formula *f, const bound_names *bn);
static int has_user_apply(const rf_ast_expr *e);

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
    if (r.too_big || (int64_t)x.n * y.n > MAX_DISJUNCTS) {
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
    if (r.too_big || x.n + y.n > MAX_DISJUNCTS) {
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
        parts[i] = dnf_of(c, f->items[i], bn);
        if (c->oom) return r;
        if (parts[i].too_big || count * parts[i].n > MAX_DISJUNCTS) {
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

static int name_bound(const bound_names *bn, const char *name)
{
    for (int32_t i = 0; i < bn->n; i++)
        if (!strcmp(bn->names[i], name)) return 1;
    return 0;
}

static int expr_names_bound(const rf_ast_expr *e, const bound_names *bn)
{
    switch (e->kind) {
    case RF_AST_VAR: return name_bound(bn, e->name);
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

static dnf dnf_of(rf_checker *c, const rf_ast_formula *f, const bound_names *bn)
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
        dnf r = dnf_of(c, f->items[0], sub);
        for (int32_t i = 1; i < f->nitems && !c->oom && !r.too_big; i++) {
            dnf s = dnf_of(c, f->items[i], sub);
            r = f->kind == RF_FORM_AND ? dnf_and(c, r, s) : dnf_or(c, r, s);
        }
        return r;
    }
    case RF_FORM_NOT: {
        const rf_ast_formula *s = f->sub;
        if (s->kind == RF_FORM_ATOM || s->kind == RF_FORM_CMP) return dnf_single(c, f);
        if (s->kind == RF_FORM_NOT) return dnf_of(c, s->sub, NULL);
        if (s->kind == RF_FORM_OR) {
            /* !(a ; b) is !a, !b */
            dnf r = {0, 0, 0};
            for (int32_t i = 0; i < s->nitems && !c->oom && !r.too_big; i++) {
                rf_ast_formula *n = mk_not(c, s->items[i]);
                if (!n) return none;
                dnf t = dnf_of(c, n, NULL);
                r = i ? dnf_and(c, r, t) : t;
            }
            return r;
        }
        /* !(a, b) of comparisons only is (!a ; !b); with atoms (or deeper
        ** negations) it stays one item, negating an auxiliary predicate
        ** (body_not_conj) */
        for (int32_t i = 0; i < s->nitems; i++)
            if (s->items[i]->kind != RF_FORM_CMP || has_user_apply(s->items[i]->lhs) ||
                has_user_apply(s->items[i]->rhs))
                return dnf_single(c, f); /* f[x] = v is an atom too */
        dnf r = {0, 0, 0};
        for (int32_t i = 0; i < s->nitems && !c->oom && !r.too_big; i++) {
            rf_ast_formula *n = mk_not(c, s->items[i]);
            if (!n) return none;
            dnf t = dnf_of(c, n, NULL);
            r = i ? dnf_or(c, r, t) : t;
        }
        return r;
    }
    }
    return none;
}

/* The builder of one rule. */
typedef struct rb {
    rf_checker *c;
    rf_fe_var *vars;
    int32_t nvars, capvars;
    rf_fe_lit **lits;
    int32_t nlits, caplits;
    int bad; /* an error was reported: drop the rule */
    /* the rule being built, for a negated conjunction (body_not_conj) */
    const rf_ast_clause *cl;
    const rf_ast_atom *head;
    const conj *k;
} rb;

static int32_t new_var(rb *b, const char *name, rf_loc loc, int wildcard, int temp)
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

static int32_t named_var(rb *b, const char *name, rf_loc loc)
{
    for (int32_t i = 0; i < b->nvars; i++)
        if (!b->vars[i].wildcard && !b->vars[i].temp && strcmp(b->vars[i].name, name) == 0) return i;
    return new_var(b, name, loc, 0, 0);
}

static void push_lit(rb *b, rf_fe_lit *l)
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

static rf_fe_lit *lit_new(rb *b, rf_fe_lit_kind k, rf_loc loc)
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

static rf_fe_expr *var_expr(rb *b, int32_t v, rf_loc loc)
{
    rf_fe_expr *e = rf_chk_expr_new(b->c, RF_FE_VAR, loc);
    if (e) e->var = v;
    else b->bad = 1;
    return e;
}

static rf_fe_expr **args_new(rb *b, int32_t n)
{
    rf_fe_expr **a = rf_arena_alloc(b->c->a, (size_t)(n + 1) * sizeof *a);
    if (!a) {
        b->c->oom = 1;
        b->bad = 1;
    }
    return a;
}

static rf_fe_expr *flat_expr(rb *b, const rf_ast_expr *e);
static rf_fe_expr *flat_term(rb *b, const rf_ast_expr *e, int allow_wildcard);

/* A constant from a literal node; NULL when e is not a literal. */
static rf_fe_expr *const_expr(rb *b, const rf_ast_expr *e)
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

/* A name in a built-in's namespace (string:, date:, int:, ...) that is no
** built-in is most likely a misspelt one. */
static int builtin_namespace(const char *name)
{
    const char *colon = strchr(name, ':');
    if (!colon) return 0;
    for (int64_t i = 0;; i++) {
        const rf_builtin_info *bi = rf_fe_builtin_at(i);
        if (!bi) return 0;
        if (!strncmp(bi->name, name, (size_t)(colon - name + 1))) return 1;
    }
}

/* An unknown name, with the nearest known one when it looks like a typo. */
static void undefined(rf_checker *c, const char *name, rf_loc loc)
{
    int bns = builtin_namespace(name);
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
static rf_fe_pred *resolve(rb *b, const char *name, rf_loc loc, int32_t nargs, int functional)
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
static int32_t apply_atom(rb *b, const rf_ast_expr *app, const rf_ast_expr *value, int negated,
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

static rf_fe_expr *flat_expr(rb *b, const rf_ast_expr *e)
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
static rf_fe_expr *bind_fresh(rb *b, const rf_ast_expr *e)
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
static rf_fe_expr *flat_term(rb *b, const rf_ast_expr *e, int allow_wildcard)
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

static int is_user_apply(const rf_ast_expr *e)
{
    return e->kind == RF_AST_APPLY && !rf_fe_builtin_lookup(e->name);
}

static int has_user_apply(const rf_ast_expr *e)
{
    if (!e) return 0;
    if (is_user_apply(e)) return 1;
    if (has_user_apply(e->lhs)) return 1;
    for (int32_t i = 0; i < e->nargs; i++)
        if (has_user_apply(e->args[i])) return 1;
    return 0;
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

static void body_atom(rb *b, const rf_ast_atom *a, int negated, rf_loc loc)
{
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

static void body_cmp(rb *b, const rf_ast_formula *f, int negated)
{
    /* f[x] = v (either way round) is an atom */
    if (f->op == RF_CMP_EQ && (is_user_apply(f->lhs) || is_user_apply(f->rhs))) {
        const rf_ast_expr *app = is_user_apply(f->lhs) ? f->lhs : f->rhs;
        const rf_ast_expr *val = app == f->lhs ? f->rhs : f->lhs;
        apply_atom(b, app, val, negated, f->loc);
        return;
    }
    if (negated && (has_user_apply(f->lhs) || has_user_apply(f->rhs))) {
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
static void implied_on(rb *b, const rf_fe_lit *or, const uint8_t *in_group)
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
static void implied_filters(rb *b)
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

static void body_basic(rb *b, const rf_ast_formula *f);
static void body_not_conj(rb *b, const rf_ast_formula *f);

/* A filter-only disjunction (filter_only): its own DNF, each conjunction
** translated into CMP literals of its own, kept together as one literal. */
static void body_or(rb *b, const rf_ast_formula *f)
{
    dnf d = dnf_of(b->c, f, NULL);
    if (b->c->oom || d.too_big) {
        if (d.too_big)
            rf_error(b->c->d, f->loc, "this disjunction expands to more than %d alternatives; split it into several rules",
                     MAX_DISJUNCTS);
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
                rf_error(b->c->d, f->loc, "internal error: a disjunction taken for a filter produced a literal of kind %d",
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

static void body_basic(rb *b, const rf_ast_formula *f)
{
    switch (f->kind) {
    case RF_FORM_ATOM: body_atom(b, &f->atom, 0, f->loc); break;
    case RF_FORM_CMP: body_cmp(b, f, 0); break;
    case RF_FORM_OR: body_or(b, f); break;
    case RF_FORM_NOT:
        if (f->sub->kind == RF_FORM_ATOM) body_atom(b, &f->sub->atom, 1, f->loc);
        else if (f->sub->kind == RF_FORM_CMP) body_cmp(b, f->sub, 1);
        else if (f->sub->kind == RF_FORM_AND) body_not_conj(b, f);
        else b->bad = 1; /* reported by dnf_of */
        break;
    default: b->bad = 1; break;
    }
}

static rf_fe_rule *rule_new(rb *b, rf_loc loc)
{
    rf_fe_rule *r = rf_arena_alloc(b->c->a, sizeof *r);
    if (!r) b->c->oom = 1;
    else r->loc = loc;
    return r;
}

/* Head arguments: variables and constants; an expression gets a fresh
** variable bound by an assignment in the body. */
static rf_fe_expr **head_args(rb *b, const rf_ast_atom *h)
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
static void build_rule(rf_checker *c, const rf_ast_clause *cl, const rf_ast_atom *h, const conj *k)
{
    rb b;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.cl = cl;
    b.head = h;
    b.k = k;
    rf_fe_pred *p = rf_chk_find(c, h->name);
    if (!p) return; /* reported by pass 2 */
    if (p->functional != h->functional || p->arity != h->nargs) {
        if (p->functional != h->functional)
            rf_error(c->d, h->loc, "`%s` is %sfunctional (line %d) but this rule defines it as %s", h->name,
                     p->functional ? "" : "not ", p->loc.line,
                     h->functional ? "functional" : "a plain relation");
        else
            rf_error(c->d, h->loc, "`%s` has %d column%s (line %d) but this rule gives %d", h->name, p->arity,
                     p->arity == 1 ? "" : "s", p->loc.line, h->nargs);
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
            if (!used) {
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
    if (!p->declared)
        for (int32_t i = 0; i < p->arity; i++) {
            if (p->cols[i]) continue;
            /* undeclared columns take the first rule's variable names (output headers use them) */
            const char *name = h->args[i]->kind == RF_AST_VAR ? h->args[i]->name : NULL;
            for (int32_t j = 0; j < i && name; j++)
                if (p->cols[j] && strcmp(p->cols[j], name) == 0) name = NULL;
            p->cols[i] = name ? name : rf_arena_sprintf(c->a, "col%d", i + 1);
        }
    rf_chk_add_rule_to_pred(c, p, r);
}

/* Variable names of an AST expression, appended to names[] once each. */
typedef struct namelist {
    const char *names[256];
    rf_loc locs[256];
    int32_t n;
    int overflow;
} namelist;

static void names_of_expr(namelist *nl, const rf_ast_expr *e, int depth)
{
    if (!e || depth > 10000) return;
    if (e->kind == RF_AST_VAR) {
        for (int32_t j = 0; j < nl->n; j++)
            if (strcmp(nl->names[j], e->name) == 0) return;
        if (nl->n == 256) {
            nl->overflow = 1;
            return;
        }
        nl->locs[nl->n] = e->loc;
        nl->names[nl->n++] = e->name;
        return;
    }
    names_of_expr(nl, e->lhs, depth + 1);
    for (int32_t i = 0; i < e->nargs; i++) names_of_expr(nl, e->args[i], depth + 1);
}

static void names_of_formula(namelist *nl, const rf_ast_formula *f, int depth)
{
    if (!f || depth > 10000) return;
    switch (f->kind) {
    case RF_FORM_ATOM:
        for (int32_t i = 0; i < f->atom.nargs; i++) names_of_expr(nl, f->atom.args[i], depth + 1);
        break;
    case RF_FORM_CMP:
        names_of_expr(nl, f->lhs, depth + 1);
        names_of_expr(nl, f->rhs, depth + 1);
        break;
    case RF_FORM_NOT: break; /* variables only under negation are not bound there */
    default:
        for (int32_t i = 0; i < f->nitems; i++) names_of_formula(nl, f->items[i], depth + 1);
    }
}

/* ---- negated conjunctions ---------------------------------------------- */

static void add_name(rf_checker *c, bound_names *bn, const char *name);
static void collect_bound(rf_checker *c, const rf_ast_formula *f, bound_names *bn);

/* Every variable name of f, under negations too. */
static void names_all(namelist *nl, const rf_ast_formula *f, int depth)
{
    if (!f || depth > 10000) return;
    switch (f->kind) {
    case RF_FORM_ATOM:
        for (int32_t i = 0; i < f->atom.nargs; i++) names_of_expr(nl, f->atom.args[i], depth + 1);
        break;
    case RF_FORM_CMP:
        names_of_expr(nl, f->lhs, depth + 1);
        names_of_expr(nl, f->rhs, depth + 1);
        break;
    case RF_FORM_NOT: names_all(nl, f->sub, depth + 1); break;
    default:
        for (int32_t i = 0; i < f->nitems; i++) names_all(nl, f->items[i], depth + 1);
    }
}

static int nl_has(const namelist *nl, const char *name)
{
    for (int32_t i = 0; i < nl->n; i++)
        if (strcmp(nl->names[i], name) == 0) return 1;
    return 0;
}

static void nl_add(namelist *nl, const char *name, rf_loc loc)
{
    if (nl_has(nl, name)) return;
    if (nl->n == 256) {
        nl->overflow = 1;
        return;
    }
    nl->locs[nl->n] = loc;
    nl->names[nl->n++] = name;
}

/* The names a conjunction binds by itself: the plain variables of its
** positive atoms (not built-in predicates), the variable sides of its
** top-level `=`, the plain keys of f[x] = v. A subset of what safety
** accepts: where it misses one, body_not_conj adds context it did not
** need, which costs time, never a wrong answer. */
static void binds_of(rf_checker *c, const rf_ast_formula *f, bound_names *bn)
{
    switch (f->kind) {
    case RF_FORM_AND:
        for (int32_t i = 0; i < f->nitems && !c->oom; i++) binds_of(c, f->items[i], bn);
        break;
    case RF_FORM_ATOM:
        if (rf_fe_builtin_lookup(f->atom.name)) break;
        for (int32_t i = 0; i < f->atom.nargs; i++)
            if (f->atom.args[i]->kind == RF_AST_VAR) add_name(c, bn, f->atom.args[i]->name);
        break;
    case RF_FORM_CMP: {
        if (f->op != RF_CMP_EQ) break;
        const rf_ast_expr *side[2] = {f->lhs, f->rhs};
        for (int i = 0; i < 2; i++) {
            if (side[i]->kind == RF_AST_VAR) add_name(c, bn, side[i]->name);
            if (is_user_apply(side[i]))
                for (int32_t j = 0; j < side[i]->nargs; j++)
                    if (side[i]->args[j]->kind == RF_AST_VAR) add_name(c, bn, side[i]->args[j]->name);
        }
        break;
    }
    default: break;
    }
}

/* A formula as written (roughly), for messages about the auxiliary
** predicate that stands for it. */
static void formula_text(const rf_ast_formula *f, rf_buf *out, int depth)
{
    if (depth > 50) {
        rf_buf_puts(out, "...");
        return;
    }
    switch (f->kind) {
    case RF_FORM_ATOM: {
        const rf_ast_atom *a = &f->atom;
        int32_t nkeys = a->functional ? a->nargs - 1 : a->nargs;
        rf_buf_printf(out, "%s%c", a->name, a->functional ? '[' : '(');
        for (int32_t i = 0; i < nkeys; i++) {
            if (i) rf_buf_puts(out, ", ");
            rf_ast_expr_print(a->args[i], out);
        }
        rf_buf_putc(out, a->functional ? ']' : ')');
        if (a->functional && a->nargs > 0) {
            rf_buf_puts(out, " = ");
            rf_ast_expr_print(a->args[a->nargs - 1], out);
        }
        break;
    }
    case RF_FORM_CMP:
        rf_ast_expr_print(f->lhs, out);
        rf_buf_printf(out, " %s ", rf_cmp_op_name(f->op));
        rf_ast_expr_print(f->rhs, out);
        break;
    case RF_FORM_NOT:
        rf_buf_putc(out, '!');
        formula_text(f->sub, out, depth + 1);
        break;
    default:
        rf_buf_putc(out, '(');
        for (int32_t i = 0; i < f->nitems; i++) {
            if (i) rf_buf_puts(out, f->kind == RF_FORM_AND ? ", " : "; ");
            formula_text(f->items[i], out, depth + 1);
        }
        rf_buf_putc(out, ')');
    }
}

/* !(a, b, ...) with atoms: an auxiliary predicate _notLINE_COL over the
** conjunction's variables that the rest of the rule also uses (the others
** are existential inside the negation), defined by the conjunction, and
** negated here. When the conjunction reads such a variable without binding
** it (a comparison with a variable of the rest of the body), the
** auxiliary rule repeats the literals of the body that bind it. */
static void body_not_conj(rb *b, const rf_ast_formula *f)
{
    rf_checker *c = b->c;
    const rf_ast_formula *sub = f->sub;
    namelist *nl = rf_arena_alloc(c->a, 4 * sizeof *nl);
    if (!nl) {
        c->oom = 1;
        b->bad = 1;
        return;
    }
    memset(nl, 0, 4 * sizeof *nl);
    namelist *inner = &nl[0], *outer = &nl[1], *shared = &nl[2], *need = &nl[3];
    names_all(inner, sub, 0);
    if (b->head)
        for (int32_t i = 0; i < b->head->nargs; i++) names_of_expr(outer, b->head->args[i], 0);
    if (b->cl)
        for (int32_t g = 0; g < b->cl->naggs; g++) names_of_expr(outer, b->cl->aggs[g].arg, 0);
    if (b->k)
        for (int32_t j = 0; j < b->k->n; j++)
            if (b->k->items[j] != f) names_all(outer, b->k->items[j], 0);
    for (int32_t i = 0; i < inner->n; i++)
        if (nl_has(outer, inner->names[i])) nl_add(shared, inner->names[i], inner->locs[i]);
    bound_names bn = {0, 0, 0};
    binds_of(c, sub, &bn);
    for (int32_t i = 0; i < shared->n; i++)
        if (!name_bound(&bn, shared->names[i])) nl_add(need, shared->names[i], shared->locs[i]);
    int32_t nk = b->k ? b->k->n : 0;
    const rf_ast_formula **items = rf_arena_alloc(c->a, (size_t)(nk + sub->nitems + 1) * sizeof *items);
    uint8_t *in = rf_arena_alloc(c->a, (size_t)nk + 1);
    if (!items || !in) {
        c->oom = 1;
        b->bad = 1;
        return;
    }
    memset(in, 0, (size_t)nk + 1);
    /* the context: positive literals of the rest of the body that mention a
    ** needed variable; a comparison or built-in needs its own variables in turn */
    for (int changed = need->n > 0; changed && !need->overflow;) {
        changed = 0;
        for (int32_t j = 0; j < nk; j++) {
            const rf_ast_formula *it = b->k->items[j];
            if (in[j] || it == f || (it->kind != RF_FORM_ATOM && it->kind != RF_FORM_CMP)) continue;
            namelist its;
            memset(&its, 0, sizeof its);
            names_all(&its, it, 0);
            int hit = 0;
            for (int32_t x = 0; x < its.n && !hit; x++) hit = nl_has(need, its.names[x]);
            if (!hit) continue;
            in[j] = 1;
            changed = 1;
            if (it->kind == RF_FORM_CMP || rf_fe_builtin_lookup(it->atom.name))
                for (int32_t x = 0; x < its.n; x++) nl_add(need, its.names[x], its.locs[x]);
        }
    }
    if (inner->overflow || outer->overflow || shared->overflow || need->overflow) {
        rf_error(c->d, f->loc, "too many variables around this negation (at most 256)");
        b->bad = 1;
        return;
    }
    int32_t n = 0;
    for (int32_t j = 0; j < nk; j++)
        if (in[j]) items[n++] = b->k->items[j];
    for (int32_t i = 0; i < sub->nitems; i++) items[n++] = sub->items[i];
    rf_ast_formula *body = rf_ast_formula_new(c->a, RF_FORM_AND, sub->loc);
    const char *name = rf_arena_sprintf(c->a, "_not%d_%d", f->loc.line, f->loc.col);
    for (int32_t t = 2; name && rf_chk_find(c, name); t++)
        name = rf_arena_sprintf(c->a, "_not%d_%d_%d", f->loc.line, f->loc.col, t);
    rf_ast_atom *ah = rf_arena_alloc(c->a, sizeof *ah);
    rf_ast_expr **aargs = rf_arena_alloc(c->a, (size_t)(shared->n + 1) * sizeof *aargs);
    rf_buf text;
    rf_buf_init(&text);
    rf_buf_putc(&text, '!');
    formula_text(sub, &text, 0);
    const char *shown = rf_arena_strdup(c->a, rf_buf_cstr(&text));
    rf_buf_free(&text);
    if (!body || !name || !ah || !aargs || !shown) {
        c->oom = 1;
        b->bad = 1;
        return;
    }
    body->items = (rf_ast_formula **)items;
    body->nitems = n;
    for (int32_t i = 0; i < shared->n; i++) {
        if (!(aargs[i] = rf_ast_expr_new(c->a, RF_AST_VAR, shared->locs[i]))) {
            c->oom = 1;
            b->bad = 1;
            return;
        }
        aargs[i]->name = shared->names[i];
    }
    ah->name = name;
    ah->loc = f->loc;
    ah->args = aargs;
    ah->nargs = shared->n;
    rf_fe_pred *aux = rf_chk_add_pred(c, name, f->loc, shared->n, 0);
    if (!aux) {
        b->bad = 1;
        return;
    }
    aux->aux = 2;
    aux->shown = shown;
    for (int32_t i = 0; i < shared->n; i++) aux->cols[i] = shared->names[i];
    rf_ast_clause auxcl;
    memset(&auxcl, 0, sizeof auxcl);
    auxcl.kind = RF_CLAUSE_RULE;
    auxcl.loc = f->loc;
    auxcl.heads = &ah;
    auxcl.nheads = 1;
    auxcl.body = body;
    bound_names abn = {0, 0, 0};
    collect_bound(c, body, &abn);
    dnf d = dnf_of(c, body, c->oom ? NULL : &abn);
    if (c->oom || d.too_big) {
        if (d.too_big)
            rf_error(c->d, f->loc, "this negation expands to more than %d alternatives; split it into several rules",
                     MAX_DISJUNCTS);
        b->bad = 1;
        return;
    }
    for (int32_t i = 0; i < d.n && !c->oom; i++) build_rule(c, &auxcl, ah, &d.c[i]);
    body_atom(b, ah, 1, f->loc);
}

/* Creates the auxiliary predicate name(vars) with one rule per disjunct and
** returns the one-atom conjunction that reads it. */
static int aux_body(rf_checker *c, const rf_ast_clause *cl, const dnf *d, const namelist *nl, conj *out)
{
    const char *auxname = rf_arena_sprintf(c->a, "_body%d_%d", cl->loc.line, cl->loc.col);
    if (!auxname) {
        c->oom = 1;
        return -1;
    }
    rf_fe_pred *aux = rf_chk_find(c, auxname);
    if (!aux) aux = rf_chk_add_pred(c, auxname, cl->loc, nl->n, 0);
    if (!aux) return -1;
    aux->aux = 1;
    for (int32_t i = 0; i < nl->n; i++) aux->cols[i] = nl->names[i];
    rf_ast_atom *ah = rf_arena_alloc(c->a, sizeof *ah);
    rf_ast_expr **aargs = rf_arena_alloc(c->a, (size_t)(nl->n + 1) * sizeof *aargs);
    if (!ah || !aargs) {
        c->oom = 1;
        return -1;
    }
    for (int32_t i = 0; i < nl->n; i++) {
        aargs[i] = rf_ast_expr_new(c->a, RF_AST_VAR, nl->locs[i]);
        if (!aargs[i]) {
            c->oom = 1;
            return -1;
        }
        aargs[i]->name = nl->names[i];
    }
    ah->name = auxname;
    ah->loc = cl->loc;
    ah->args = aargs;
    ah->nargs = nl->n;
    rf_ast_clause body = *cl;
    body.naggs = 0;
    for (int32_t i = 0; i < d->n && !c->oom; i++) build_rule(c, &body, ah, &d->c[i]);
    rf_ast_formula *f = rf_ast_formula_new(c->a, RF_FORM_ATOM, cl->loc);
    const rf_ast_formula **one = rf_arena_alloc(c->a, sizeof *one);
    if (!f || !one) {
        c->oom = 1;
        return -1;
    }
    f->atom = *ah;
    one[0] = f;
    out->items = one;
    out->n = 1;
    return 0;
}

/* h1(...), h2(...) <- body: the body is computed once into an auxiliary
** predicate over the variables the heads need. */
static void multi_head(rf_checker *c, const rf_ast_clause *cl, const dnf *d)
{
    namelist nl;
    memset(&nl, 0, sizeof nl);
    for (int32_t h = 0; h < cl->nheads; h++)
        for (int32_t i = 0; i < cl->heads[h]->nargs; i++) names_of_expr(&nl, cl->heads[h]->args[i], 0);
    if (nl.overflow) {
        rf_error(c->d, cl->loc, "too many variables in the heads of one rule (at most 256)");
        return;
    }
    conj k;
    if (aux_body(c, cl, d, &nl, &k)) return;
    rf_ast_clause body = *cl;
    body.naggs = 0;
    for (int32_t h = 0; h < cl->nheads && !c->oom; h++) build_rule(c, &body, cl->heads[h], &k);
}

/* The wildcards of the positive parts of formula f (atoms and f[x] = v),
** appended to w[] once each; *n counts them up to cap. */
static void wildcards_of_expr(const rf_ast_expr *e, const rf_ast_expr **w, int32_t *n, int32_t cap, int depth)
{
    if (!e || depth > 10000) return;
    if (e->kind == RF_AST_WILDCARD) {
        for (int32_t i = 0; i < *n; i++)
            if (w[i] == e) return;
        if (*n < cap) w[(*n)++] = e;
        return;
    }
    wildcards_of_expr(e->lhs, w, n, cap, depth + 1);
    for (int32_t i = 0; i < e->nargs; i++) wildcards_of_expr(e->args[i], w, n, cap, depth + 1);
}

static void wildcards_of_formula(const rf_ast_formula *f, const rf_ast_expr **w, int32_t *n, int32_t cap)
{
    if (f->kind == RF_FORM_ATOM)
        for (int32_t i = 0; i < f->atom.nargs; i++) wildcards_of_expr(f->atom.args[i], w, n, cap, 0);
    else if (f->kind == RF_FORM_CMP) {
        wildcards_of_expr(f->lhs, w, n, cap, 0);
        wildcards_of_expr(f->rhs, w, n, cap, 0);
    }
}

/* An aggregate over a disjunction ranges over the union of the disjuncts'
** bindings: the variables bound in every disjunct go into an auxiliary
** predicate, and the aggregate reads that. A wildcard is a variable of its
** own occurrence, so it is common to the disjuncts when the disjunctive
** normal form copied its atom into each of them (it stands outside the
** disjunction, as in p(x, _), (q(x) ; r(x))): it is then a column of the
** auxiliary predicate too and counts; a wildcard inside one disjunct is
** that disjunct's own, existential like its other private variables. */
static void agg_over_disjunction(rf_checker *c, const rf_ast_clause *cl, const dnf *d)
{
    namelist all[2];
    memset(all, 0, sizeof all);
    namelist *common = &all[0], *cur = &all[1];
    for (int32_t i = 0; i < d->n; i++) {
        memset(cur, 0, sizeof *cur);
        for (int32_t j = 0; j < d->c[i].n; j++) names_of_formula(cur, d->c[i].items[j], 0);
        if (cur->overflow) {
            rf_error(c->d, cl->loc, "too many variables in one rule (at most 256 in an aggregate over a disjunction)");
            return;
        }
        if (i == 0) {
            *common = *cur;
            continue;
        }
        namelist keep;
        memset(&keep, 0, sizeof keep);
        for (int32_t a = 0; a < common->n; a++)
            for (int32_t b = 0; b < cur->n; b++)
                if (strcmp(common->names[a], cur->names[b]) == 0) {
                    keep.locs[keep.n] = common->locs[a];
                    keep.names[keep.n++] = common->names[a];
                    break;
                }
        *common = keep;
    }
    /* the wildcards every disjunct shares, named "_#1", "_#2"... (no
    ** variable can be spelled so) for the time of the auxiliary rules */
    enum { MAXW = 256 };
    const rf_ast_expr *shared[MAXW], *mine[MAXW];
    int32_t nshared = 0;
    for (int32_t i = 0; i < d->n; i++) {
        int32_t nmine = 0;
        for (int32_t j = 0; j < d->c[i].n; j++) wildcards_of_formula(d->c[i].items[j], mine, &nmine, MAXW);
        if (i == 0) {
            memcpy(shared, mine, (size_t)nmine * sizeof *mine);
            nshared = nmine;
            continue;
        }
        int32_t m = 0;
        for (int32_t a = 0; a < nshared; a++)
            for (int32_t b = 0; b < nmine; b++)
                if (shared[a] == mine[b]) {
                    shared[m++] = shared[a];
                    break;
                }
        nshared = m;
    }
    const char **names = rf_arena_alloc(c->a, (size_t)(nshared + 1) * sizeof *names);
    if (!names) {
        c->oom = 1;
        return;
    }
    if (common->n + nshared > 256) {
        rf_error(c->d, cl->loc, "too many variables in one rule (at most 256 in an aggregate over a disjunction)");
        return;
    }
    for (int32_t i = 0; i < nshared; i++) {
        names[i] = rf_arena_sprintf(c->a, "_#%d", (int)i + 1);
        if (!names[i]) {
            c->oom = 1;
            return;
        }
        common->locs[common->n] = shared[i]->loc;
        common->names[common->n++] = names[i];
    }
    c->wild_nodes = shared;
    c->wild_names = names;
    c->nwild = nshared;
    conj k;
    int rc = aux_body(c, cl, d, common, &k);
    c->wild_nodes = NULL;
    c->wild_names = NULL;
    c->nwild = 0;
    if (rc) return;
    build_rule(c, cl, cl->heads[0], &k);
}

static void add_name(rf_checker *c, bound_names *bn, const char *name)
{
    if (name_bound(bn, name)) return;
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
static void collect_bound(rf_checker *c, const rf_ast_formula *f, bound_names *bn)
{
    switch (f->kind) {
    case RF_FORM_AND:
        for (int32_t i = 0; i < f->nitems && !c->oom; i++) collect_bound(c, f->items[i], bn);
        break;
    case RF_FORM_ATOM:
        for (int32_t i = 0; i < f->atom.nargs; i++)
            if (f->atom.args[i]->kind == RF_AST_VAR) add_name(c, bn, f->atom.args[i]->name);
        break;
    case RF_FORM_CMP:
        if (f->op != RF_CMP_EQ) break;
        if (f->lhs->kind == RF_AST_VAR) add_name(c, bn, f->lhs->name);
        if (f->rhs->kind == RF_AST_VAR) add_name(c, bn, f->rhs->name);
        break;
    default: break;
    }
}

static void desugar_clause(rf_checker *c, const rf_ast_clause *cl)
{
    int ndirectives = 0;
    for (int32_t h = 0; h < cl->nheads; h++) ndirectives += is_directive(cl->heads[h]);
    if (ndirectives) {
        if (cl->body || ndirectives != cl->nheads) {
            rf_error(c->d, cl->loc, "lang: directives must be facts on their own, like lang:output[`p] = \"p\".");
        }
        return; /* handled by rf_chk_directives */
    }
    for (int32_t h = 0; h < cl->nheads; h++)
        if (rf_chk_is_reserved(cl->heads[h]->name)) return; /* reported by pass 2 */
    if (!cl->body) {
        if (cl->naggs) return;
        for (int32_t h = 0; h < cl->nheads; h++) build_rule(c, cl, cl->heads[h], NULL);
        return;
    }
    bound_names bn = {0, 0, 0};
    if (cl->nheads == 1) collect_bound(c, cl->body, &bn);
    dnf d = dnf_of(c, cl->body, cl->nheads == 1 && !c->oom ? &bn : NULL);
    if (c->oom) return;
    if (d.too_big) {
        rf_error(c->d, cl->body->loc, "this body expands to more than %d alternatives; split it into several rules",
                 MAX_DISJUNCTS);
        return;
    }
    if (cl->nheads > 1) {
        if (cl->naggs) {
            rf_error(c->d, cl->heads[1]->loc, "an aggregation rule may have only one head atom");
            return;
        }
        multi_head(c, cl, &d);
        return;
    }
    if (cl->naggs && d.n > 1) {
        agg_over_disjunction(c, cl, &d);
        return;
    }
    for (int32_t i = 0; i < d.n && !c->oom; i++) build_rule(c, cl, cl->heads[0], &d.c[i]);
}

void rf_chk_desugar(rf_checker *c, const rf_ast_program *ast)
{
    for (int64_t i = 0; i < ast->nclauses && !c->oom && !rf_diags_full(c->d); i++)
        if (ast->clauses[i]->kind == RF_CLAUSE_RULE) desugar_clause(c, ast->clauses[i]);
}
