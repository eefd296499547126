/*
** frontend/desugar_aux.c: the desugarings that introduce auxiliary
** predicates.
**
** Owns: negated conjunctions (`!(a, b)` with atoms: a predicate _notLINE_COL
** over the shared variables, with the context that binds them), multi-atom
** heads (a predicate _bodyLINE_COL holding the body, computed once), and
** aggregates over a disjunction (an auxiliary predicate over the variables
** and shared wildcards every disjunct binds).
*/
#include "desugar_internal.h"

#include <string.h>

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

/* The variable names of f; under_not: those under negations too (else a
** variable only under a negation is not bound there). */
static void names_in(namelist *nl, const rf_ast_formula *f, int under_not, int depth)
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
    case RF_FORM_NOT:
        if (under_not) names_in(nl, f->sub, under_not, depth + 1);
        break;
    default:
        for (int32_t i = 0; i < f->nitems; i++) names_in(nl, f->items[i], under_not, depth + 1);
    }
}

static void names_of_formula(namelist *nl, const rf_ast_formula *f, int depth) { names_in(nl, f, 0, depth); }

/* Every variable name of f, under negations too. */
static void names_all(namelist *nl, const rf_ast_formula *f, int depth) { names_in(nl, f, 1, depth); }

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

/* Records on aux (the predicate of !sub over the variables `shared`) the
** shape !(q(...), c != v) when sub has it: one positive atom of a user
** predicate whose arguments are variables and wildcards, c a variable that
** it names once and the rest of the rule does not use, v a variable of the
** rest of the rule; the atom's other variables are shared (keys, each named
** once) or its own (existential, named once). The rule for aux is built as
** always; the planner may use the shape instead (queryplan/qp_exists.c). */
static void record_neq_shape(rf_checker *c, const rf_ast_formula *sub, const namelist *shared, rf_fe_pred *aux)
{
    if (sub->kind != RF_FORM_AND || sub->nitems != 2) return;
    int ai = sub->items[0]->kind == RF_FORM_ATOM ? 0 : 1;
    const rf_ast_formula *af = sub->items[ai], *cf = sub->items[1 - ai];
    if (af->kind != RF_FORM_ATOM || cf->kind != RF_FORM_CMP || cf->op != RF_CMP_NE) return;
    if (cf->lhs->kind != RF_AST_VAR || cf->rhs->kind != RF_AST_VAR || !strcmp(cf->lhs->name, cf->rhs->name)) return;
    const rf_ast_atom *a = &af->atom;
    if (a->functional || rf_fe_builtin_lookup(a->name)) return;
    const rf_fe_pred *q = rf_chk_find(c, a->name);
    if (!q || q->functional || q->arity != a->nargs) return;
    /* c is the side the atom names and the rest of the rule does not */
    const char *cname = NULL, *vname = NULL;
    for (int side = 0; side < 2 && !cname; side++) {
        const char *x = side ? cf->rhs->name : cf->lhs->name, *y = side ? cf->lhs->name : cf->rhs->name;
        if (nl_has(shared, x) || !nl_has(shared, y)) continue;
        for (int32_t j = 0; j < a->nargs; j++)
            if (a->args[j]->kind == RF_AST_VAR && !strcmp(a->args[j]->name, x)) cname = x, vname = y;
    }
    if (!cname) return;
    int32_t *map = rf_arena_alloc(c->a, (size_t)a->nargs * sizeof *map + 1);
    if (!map) {
        c->oom = 1;
        return;
    }
    int32_t vcol = -1;
    for (int32_t i = 0; i < shared->n; i++)
        if (!strcmp(shared->names[i], vname)) vcol = i;
    for (int32_t j = 0; j < a->nargs; j++) {
        const rf_ast_expr *e = a->args[j];
        if (e->kind == RF_AST_WILDCARD) {
            map[j] = -1;
            continue;
        }
        if (e->kind != RF_AST_VAR) return; /* constants, expressions: another shape */
        for (int32_t i = 0; i < j; i++)
            if (a->args[i]->kind == RF_AST_VAR && !strcmp(a->args[i]->name, e->name)) return; /* repeated */
        map[j] = -1;
        if (!strcmp(e->name, cname)) map[j] = -2;
        for (int32_t i = 0; i < shared->n; i++)
            if (!strcmp(shared->names[i], e->name)) map[j] = i;
    }
    if (vcol < 0) return;
    aux->neq_pred = q;
    aux->neq_map = map;
    aux->neq_v = vcol;
}

/* Whether evaluating e may raise a run-time error, as far as the syntax
** tells (types are not known yet): arithmetic and built-in functions may. */
static int expr_may_fail(const rf_ast_expr *e, int depth)
{
    if (!e || depth > 10000) return 0;
    if (e->kind == RF_AST_BINOP || e->kind == RF_AST_NEG) return 1;
    if (e->kind == RF_AST_APPLY && rf_fe_builtin_lookup(e->name)) return 1;
    if (expr_may_fail(e->lhs, depth + 1)) return 1;
    for (int32_t i = 0; i < e->nargs; i++)
        if (expr_may_fail(e->args[i], depth + 1)) return 1;
    return 0;
}

/* Whether a literal of formula f (a conjunction's) may raise a run-time
** error: a comparison or an atom's argument with arithmetic or a built-in. */
static int formula_may_fail(const rf_ast_formula *f, int depth)
{
    if (!f || depth > 10000) return 0;
    switch (f->kind) {
    case RF_FORM_CMP: return expr_may_fail(f->lhs, 0) || expr_may_fail(f->rhs, 0);
    case RF_FORM_ATOM:
        for (int32_t i = 0; i < f->atom.nargs; i++)
            if (expr_may_fail(f->atom.args[i], 0)) return 1;
        return 0;
    case RF_FORM_NOT: return formula_may_fail(f->sub, depth + 1);
    default:
        for (int32_t i = 0; i < f->nitems; i++)
            if (formula_may_fail(f->items[i], depth + 1)) return 1;
        return 0;
    }
}

/* Whether f is a functional predicate's atom written `f[x] = v` (a
** comparison of its value with a variable or a constant). */
static int functional_atom(const rf_ast_formula *f)
{
    if (f->kind != RF_FORM_CMP || f->op != RF_CMP_EQ || !f->lhs || !f->rhs) return 0;
    for (int side = 0; side < 2; side++) {
        const rf_ast_expr *app = side ? f->rhs : f->lhs, *val = side ? f->lhs : f->rhs;
        if (app->kind == RF_AST_APPLY && !rf_fe_builtin_lookup(app->name) && val->kind != RF_AST_BINOP &&
            val->kind != RF_AST_NEG && val->kind != RF_AST_APPLY)
            return 1;
    }
    return 0;
}

/* The names the rule uses outside the negation f: its head's, its
** aggregates' arguments' and the rest of its body's. */
static void names_outside(rule_builder *b, const rf_ast_formula *f, namelist *outer)
{
    if (b->head)
        for (int32_t i = 0; i < b->head->nargs; i++) names_of_expr(outer, b->head->args[i], 0);
    if (b->cl)
        for (int32_t g = 0; g < b->cl->naggs; g++) names_of_expr(outer, b->cl->aggs[g].arg, 0);
    if (b->k)
        for (int32_t j = 0; j < b->k->n; j++)
            if (b->k->items[j] != f) names_all(outer, b->k->items[j], 0);
}

/* Whether `!(l)`, a negated conjunction of one atom or comparison, is the
** plain negation `!l`: every variable of l is used elsewhere in the rule
** (none is existential), so no auxiliary predicate is needed. */
int rf_dsg_not_conj_is_plain(rule_builder *b, const rf_ast_formula *f)
{
    const rf_ast_formula *sub = f->sub;
    if (sub->kind != RF_FORM_AND || sub->nitems != 1) return 0;
    const rf_ast_formula *it = sub->items[0];
    if (it->kind != RF_FORM_ATOM && it->kind != RF_FORM_CMP) return 0;
    namelist *nl = rf_arena_alloc(b->c->a, 2 * sizeof *nl);
    if (!nl) return 0; /* the auxiliary predicate's path reports it */
    namelist *inner = &nl[0], *outer = &nl[1];
    names_all(inner, sub, 0);
    names_outside(b, f, outer);
    if (inner->overflow || outer->overflow) return 0;
    for (int32_t i = 0; i < inner->n; i++)
        if (!nl_has(outer, inner->names[i])) return 0;
    return 1;
}

/* !(a, b, ...) with atoms: an auxiliary predicate _notLINE_COL over the
** conjunction's variables that the rest of the rule also uses (the others
** are existential inside the negation), defined by the conjunction, and
** negated here. When the conjunction reads such a variable without binding
** it (a comparison with a variable of the rest of the body), the
** auxiliary rule repeats the literals of the body that bind it, and all the
** others when one of those may fail at run time. When the conjunction
** itself may fail (`!(e(w, q), 1 / q > 0)`), the auxiliary rule also
** repeats the body's atoms (`f[x] = v` too) and negations, so that it
** fails only for rows the rule reaches, not for every row of the conjunction's atoms. */
void rf_dsg_body_not_conj(rule_builder *b, const rf_ast_formula *f)
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
    names_outside(b, f, outer);
    for (int32_t i = 0; i < inner->n; i++)
        if (nl_has(outer, inner->names[i])) nl_add(shared, inner->names[i], inner->locs[i]);
    bound_names bn = {0, 0, 0};
    rf_dsg_binds_of(c, sub, &bn);
    for (int32_t i = 0; i < shared->n; i++)
        if (!rf_dsg_name_bound(&bn, shared->names[i])) nl_add(need, shared->names[i], shared->locs[i]);
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
    /* A condition of the context that may fail is evaluated there as in
    ** the rule, for the rows of every other literal of the body: the
    ** atoms, existence tests and negations that guard it in the rule
    ** (docs/LANGUAGE.md, "Where such an error is raised") */
    int guard = 0;
    for (int32_t j = 0; j < nk && !guard; j++)
        if (in[j] && b->k->items[j]->kind == RF_FORM_CMP)
            guard = expr_may_fail(b->k->items[j]->lhs, 0) || expr_may_fail(b->k->items[j]->rhs, 0);
    /* A condition of the conjunction that may fail is evaluated, as in the
    ** rule, only for the rows that the body's atoms and negations (which
    ** guard every condition) leave */
    int guard_atoms = !guard && formula_may_fail(sub, 0);
    namelist atomvars;
    memset(&atomvars, 0, sizeof atomvars);
    for (int32_t j = 0; guard_atoms && j < nk; j++) {
        const rf_ast_formula *it = b->k->items[j];
        if ((it->kind == RF_FORM_ATOM && !rf_fe_builtin_lookup(it->atom.name)) || functional_atom(it)) {
            in[j] = 1;
            names_all(&atomvars, it, 0);
        }
    }
    /* a negation only where the repeated atoms bind all its variables (one
    ** reading an assigned variable is tested after the conditions anyway) */
    for (int32_t j = 0; guard_atoms && !atomvars.overflow && j < nk; j++) {
        const rf_ast_formula *it = b->k->items[j];
        if (it == f || it->kind != RF_FORM_NOT) continue;
        namelist its;
        memset(&its, 0, sizeof its);
        names_all(&its, it, 0);
        int all = !its.overflow;
        for (int32_t x = 0; x < its.n && all; x++) all = nl_has(&atomvars, its.names[x]);
        if (all) in[j] = 1;
    }
    int32_t n = 0;
    for (int32_t j = 0; j < nk; j++)
        if (in[j] || (guard && b->k->items[j] != f)) items[n++] = b->k->items[j];
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
    record_neq_shape(c, sub, shared, aux);
    rf_ast_clause auxcl;
    memset(&auxcl, 0, sizeof auxcl);
    auxcl.kind = RF_CLAUSE_RULE;
    auxcl.loc = f->loc;
    auxcl.heads = &ah;
    auxcl.nheads = 1;
    auxcl.body = body;
    bound_names abn = {0, 0, 0};
    rf_dsg_collect_bound(c, body, &abn);
    dnf d = rf_dsg_dnf_of(c, body, c->oom ? NULL : &abn);
    if (c->oom || d.too_big) {
        if (d.too_big)
            rf_error(c->d, f->loc, "this negation expands to more than %d alternatives; split it into several rules",
                     RF_DSG_MAX_DISJUNCTS);
        b->bad = 1;
        return;
    }
    for (int32_t i = 0; i < d.n && !c->oom; i++) rf_dsg_build_rule(c, &auxcl, ah, &d.c[i]);
    rf_dsg_body_atom(b, ah, 1, f->loc);
}

/* Creates the auxiliary predicate name(vars) with one rule per disjunct and
** returns the one-atom conjunction that reads it. */
static int aux_body(rf_checker *c, const rf_ast_clause *cl, const dnf *d, const namelist *nl, conj *out)
{
    /* a name no predicate has: the program's own (a user may write
    ** _body4_1) and another file's clause at the same line and column */
    const char *auxname = rf_arena_sprintf(c->a, "_body%d_%d", cl->loc.line, cl->loc.col);
    for (int32_t t = 2; auxname && rf_chk_find(c, auxname); t++)
        auxname = rf_arena_sprintf(c->a, "_body%d_%d_%d", cl->loc.line, cl->loc.col, t);
    if (!auxname) {
        c->oom = 1;
        return -1;
    }
    rf_fe_pred *aux = rf_chk_add_pred(c, auxname, cl->loc, nl->n, 0);
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
    for (int32_t i = 0; i < d->n && !c->oom; i++) rf_dsg_build_rule(c, &body, ah, &d->c[i]);
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
void rf_dsg_multi_head(rf_checker *c, const rf_ast_clause *cl, const dnf *d)
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
    for (int32_t h = 0; h < cl->nheads && !c->oom; h++) rf_dsg_build_rule(c, &body, cl->heads[h], &k);
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
void rf_dsg_agg_over_disjunction(rf_checker *c, const rf_ast_clause *cl, const dnf *d)
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
    rf_dsg_build_rule(c, cl, cl->heads[0], &k);
}
