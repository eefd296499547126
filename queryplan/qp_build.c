/*
** queryplan/qp_build.c: lowering of the checked program to the query plan.
**
** Owns: the relations of the predicates (full, delta, new, output), the
** pipeline of one rule (scan, joins, assignments and filters, negations,
** aggregation, head projection), the union of a predicate's rules with its
** functional-dependency check, the semi-naive loop of recursive strata and
** the final OrderLimit of every output. Optimization is left to the passes:
** the lowering is deliberately plain, so that `dump --plan --no-opt` shows
** what each pass changed.
*/
#include "qp_internal.h"

#include <stdlib.h>

typedef struct lw {
    rf_qp_program *p;
    const rf_fe_program *fe;
    rf_diags *d;
    rf_qp_rel **full, **delta, **newr; /* by predicate id */
    rf_qp_block *cur;
    int exists; /* another-row tests as per-key aggregates (qp_exists.c) */
    int user_error; /* reported an error of the program (an expression past the plan's bounds, facts
                    ** that break a functional dependency), not ours */
} lw;

/* The intermediate result of a rule: a relation whose column i holds rule
** variable var[i]. last is the command that produced rel when it is a
** temporary nobody reads yet, so that the next projection can be merged in. */
typedef struct pipe {
    rf_qp_rel *rel;
    int32_t *var;
    int32_t n;
    rf_qp_cmd *last;
} pipe;

static int32_t col_of(const pipe *pp, int32_t v)
{
    for (int32_t i = 0; i < pp->n; i++)
        if (pp->var[i] == v) return i;
    return -1;
}

static void emit(lw *L, rf_qp_cmd *c)
{
    if (c) qp_block_append(L->p, L->cur, c);
}

/* Names a temporary's columns after the rule variables they hold. */
static void name_cols(const rf_fe_rule *r, rf_qp_rel *t, const int32_t *vars)
{
    for (int32_t i = 0; i < t->ncols; i++)
        t->colnames[i] = vars && vars[i] >= 0 && !r->vars[vars[i]].temp ? r->vars[vars[i]].name : NULL;
}

/* A front-end expression over the pipe's columns; assigned[v] is the
** expression computing variable v when v is not a column yet. */
/* The expressions of a rule's assigned variables, substituted where the
** variables are used, with each one's height and node count: a use costs
** what its definition costs, so the bounds hold before anything is copied. */
typedef struct inlined {
    rf_qp_expr **e;
    int32_t *height;
    int64_t *nodes;
} inlined;

/* e over the pipe's columns and the assigned variables; *h gets its height
** and *n grows by its nodes. NULL (reported) past the plan's bounds. */
static rf_qp_expr *lower_expr_h(lw *L, const rf_fe_rule *r, const pipe *pp, const inlined *in, const rf_fe_expr *e,
                                int32_t *h, int64_t *n)
{
    rf_qp_program *p = L->p;
    *h = 1;
    switch (e->kind) {
    case RF_FE_VAR: {
        int32_t c = col_of(pp, e->var);
        *n += 1;
        if (c >= 0) return qp_e_col(p, 0, c, pp->rel->types[c]);
        if (in && in->e[e->var]) {
            *h = in->height[e->var];
            *n += in->nodes[e->var] - 1;
            if (*n > RF_QP_MAX_EXPR_NODES) return NULL; /* reported by the caller */
            return qp_e_copy(p, in->e[e->var]);
        }
        rf_internal_error(L->d, e->loc, "variable `%s` is not bound in the plan", r->vars[e->var].name);
        return NULL;
    }
    case RF_FE_CONST: *n += 1; return qp_e_const(p, &e->c);
    case RF_FE_BINOP:
    case RF_FE_NEG:
    case RF_FE_CALL:
    case RF_FE_CAST: {
        rf_qp_expr_kind k = e->kind == RF_FE_BINOP ? RF_QP_E_BINOP
                            : e->kind == RF_FE_NEG ? RF_QP_E_NEG
                            : e->kind == RF_FE_CALL ? RF_QP_E_CALL
                                                    : RF_QP_E_CAST;
        rf_qp_expr *x = qp_e_new(p, k, e->type, e->nargs);
        if (!x) return NULL;
        x->op = e->op;
        x->fn = e->fn;
        *n += 1;
        int32_t best = 0;
        for (int32_t i = 0; i < e->nargs; i++) {
            int32_t hi = 0;
            if (!(x->args[i] = lower_expr_h(L, r, pp, in, e->args[i], &hi, n))) return NULL;
            if (hi > best) best = hi;
        }
        *h = best + 1;
        return x;
    }
    }
    return NULL;
}

/* lower_expr_h for one literal's expression, with the bounds checked: an
** error at the literal when substituting its assigned variables makes it too
** deep or too large. */
static rf_qp_expr *lower_expr_in(lw *L, const rf_fe_rule *r, const pipe *pp, const inlined *in, const rf_fe_expr *e,
                                 rf_loc loc, int32_t *hout, int64_t *nout)
{
    int32_t h = 0;
    int64_t n = 0;
    rf_qp_expr *x = lower_expr_h(L, r, pp, in, e, &h, &n);
    if (hout) *hout = h;
    if (nout) *nout = n;
    if (L->p->oom) return NULL;
    if (n > RF_QP_MAX_EXPR_NODES) {
        rf_error(L->d, loc,
                 "expression too large (more than %d operations, counting the definitions of the variables it uses): compute part of it in a rule of its own",
                 RF_QP_MAX_EXPR_NODES);
        L->user_error = 1;
        return NULL;
    }
    if (x && h > RF_QP_MAX_EXPR_HEIGHT) {
        rf_error(L->d, loc,
                 "expression nested too deeply once the variables it uses are replaced by their definitions (more than %d levels): compute part of it in a rule of its own",
                 RF_QP_MAX_EXPR_HEIGHT);
        L->user_error = 1;
        return NULL;
    }
    return x;
}

static rf_qp_expr *lower_expr(lw *L, const rf_fe_rule *r, const pipe *pp, const inlined *in, const rf_fe_expr *e)
{
    return lower_expr_in(L, r, pp, in, e, e->loc, NULL, NULL);
}

/* dst = map(cur) filter -> outs, merged into the command that produced cur
** when that one is ours alone. Returns the new pipe in *cur. */
static int emit_map(lw *L, const rf_fe_rule *r, pipe *cur, rf_qp_expr *filter, rf_qp_expr **outs, int32_t nouts,
                    int32_t *vars)
{
    rf_qp_program *p = L->p;
    if (p->oom) return -1;
    int identity = !filter && nouts == cur->rel->ncols;
    for (int32_t i = 0; identity && i < nouts; i++) identity = qp_e_is_col(outs[i], 0, i);
    if (identity) {
        cur->var = vars;
        return 0;
    }
    rf_qp_cmd *last = cur->last;
    /* composing puts the producer's expressions into ours: not past the bounds */
    int fits = 1;
    if (last && (last->op == RF_QP_MAPFILTER || last->op == RF_QP_MAPJOIN || last->op == RF_QP_ANTIJOIN)) {
        if (filter) fits = qp_e_subst_fits(p, filter, 0, last->outs, last->nouts);
        for (int32_t i = 0; i < nouts && fits > 0; i++) fits = qp_e_subst_fits(p, outs[i], 0, last->outs, last->nouts);
        if (fits < 0) return -1;
    }
    if (last && fits && (last->op == RF_QP_MAPFILTER || last->op == RF_QP_MAPJOIN ||
                 (last->op == RF_QP_ANTIJOIN && !filter))) {
        /* compose: the producer computes the projection directly */
        rf_qp_expr *f = filter ? qp_e_subst(p, filter, 0, last->outs) : NULL;
        rf_qp_expr **o = qp_alloc(p, (size_t)(nouts + 1) * sizeof *o);
        if (!o) return -1;
        for (int32_t i = 0; i < nouts; i++)
            if (!(o[i] = qp_e_subst(p, outs[i], 0, last->outs))) return -1;
        last->filter = qp_e_and(p, last->filter, f);
        last->outs = o;
        last->nouts = nouts;
        rf_qp_rel *t = last->dst;
        t->ncols = nouts;
        t->types = qp_alloc(p, (size_t)(nouts + 1) * sizeof *t->types);
        t->colnames = qp_alloc(p, (size_t)(nouts + 1) * sizeof *t->colnames);
        if (!t->types || !t->colnames) return -1;
        for (int32_t i = 0; i < nouts; i++) t->types[i] = o[i]->type;
        name_cols(r, t, vars);
        cur->var = vars;
        cur->n = nouts;
        return 0;
    }
    rf_qp_rel *t = qp_temp_new(p, nouts);
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_MAPFILTER, t, 1);
    if (!t || !c) return -1;
    for (int32_t i = 0; i < nouts; i++) t->types[i] = outs[i]->type;
    name_cols(r, t, vars);
    c->in[0] = cur->rel;
    c->filter = filter;
    c->outs = outs;
    c->nouts = nouts;
    emit(L, c);
    cur->rel = t;
    cur->var = vars;
    cur->n = nouts;
    cur->last = c;
    return 0;
}

/* Whether the wildcards of a positive atom of r are kept as columns: in an
** aggregation they are anonymous variables, and the aggregate ranges over
** the distinct bindings of every variable, theirs included (a wildcard
** never changes the result); elsewhere they are existential. */
static int keeps_wildcards(const rf_fe_rule *r) { return r->naggs > 0; }

/* Whether positive atom l of a rule without aggregation names no variable
** (only wildcards and constants): it is then an existence test, evaluated
** once and crossed with the rest of the body as zero or one empty row,
** instead of a cross product with every matching tuple. */
static int existence_atom(const rf_fe_rule *r, const rf_fe_lit *l)
{
    if (l->kind != RF_FE_ATOM || l->negated || keeps_wildcards(r)) return 0;
    for (int32_t j = 0; j < l->nargs; j++)
        if (l->args[j]->kind == RF_FE_VAR && !r->vars[l->args[j]->var].wildcard) return 0;
    return 1;
}

/* Reads atom `l` of relation `rel`: constant arguments and repeated
** variables become a filter, the result holds each variable once. For a
** negated atom only the variables bound in `bound` are kept (wildcards and
** the rest are existential). */
static int scan_atom(lw *L, const rf_fe_rule *r, const rf_fe_lit *l, rf_qp_rel *rel, const pipe *bound, pipe *out)
{
    rf_qp_program *p = L->p;
    rf_qp_expr *filter = NULL;
    int32_t *vars = qp_ints(p, l->nargs);
    rf_qp_expr **outs = qp_alloc(p, (size_t)(l->nargs + 1) * sizeof *outs);
    if (!vars || !outs) return -1;
    int32_t n = 0;
    for (int32_t j = 0; j < l->nargs; j++) {
        const rf_fe_expr *a = l->args[j];
        if (a->kind == RF_FE_CONST) {
            rf_qp_expr *k = qp_e_const(p, &a->c);
            filter = qp_e_and(p, filter, qp_e_cmp(p, RF_CMP_EQ, qp_e_col(p, 0, j, rel->types[j]), k));
            continue;
        }
        int32_t v = a->var, first = -1;
        for (int32_t i = 0; i < j && first < 0; i++)
            if (l->args[i]->kind == RF_FE_VAR && l->args[i]->var == v) first = i;
        if (first >= 0) {
            filter = qp_e_and(p, filter, qp_e_cmp(p, RF_CMP_EQ, qp_e_col(p, 0, first, rel->types[first]),
                                                  qp_e_col(p, 0, j, rel->types[j])));
            continue;
        }
        if (r->vars[v].wildcard && (bound || !keeps_wildcards(r))) continue;
        if (bound && col_of(bound, v) < 0) continue;
        vars[n] = v;
        outs[n++] = qp_e_col(p, 0, j, rel->types[j]);
    }
    out->rel = rel;
    out->var = vars;
    out->n = rel->ncols;
    out->last = NULL;
    if (p->oom) return -1;
    return emit_map(L, r, out, filter, outs, n, vars);
}

/* cur = cur join atom l (reading rel) on the variables they share. The
** atom's own selections go into the join's filter; the selection push-down
** pass moves them into a scan of rel. */
static int join_atom(lw *L, const rf_fe_rule *r, pipe *cur, const rf_fe_lit *l, rf_qp_rel *rel)
{
    rf_qp_program *p = L->p;
    int32_t *lk = qp_ints(p, l->nargs), *rk = qp_ints(p, l->nargs);
    int32_t *vars = qp_ints(p, cur->n + l->nargs);
    rf_qp_expr **outs = qp_alloc(p, (size_t)(cur->n + l->nargs + 1) * sizeof *outs);
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_MAPJOIN, NULL, 2);
    if (!lk || !rk || !vars || !outs || !c) return -1;
    int32_t nk = 0, n = 0;
    rf_qp_expr *filter = NULL;
    for (int32_t i = 0; i < cur->n; i++) {
        vars[n] = cur->var[i];
        outs[n++] = qp_e_col(p, 0, i, cur->rel->types[i]);
    }
    for (int32_t j = 0; j < l->nargs; j++) {
        const rf_fe_expr *a = l->args[j];
        if (a->kind == RF_FE_CONST) {
            filter = qp_e_and(p, filter, qp_e_cmp(p, RF_CMP_EQ, qp_e_col(p, 1, j, rel->types[j]),
                                                  qp_e_const(p, &a->c)));
            continue;
        }
        int32_t v = a->var, lc = col_of(cur, v);
        if (lc >= 0) {
            lk[nk] = lc;
            rk[nk++] = j;
            continue;
        }
        int32_t first = -1;
        for (int32_t i = 0; i < j && first < 0; i++)
            if (l->args[i]->kind == RF_FE_VAR && l->args[i]->var == v) first = i;
        if (first >= 0) {
            filter = qp_e_and(p, filter, qp_e_cmp(p, RF_CMP_EQ, qp_e_col(p, 1, first, rel->types[first]),
                                                  qp_e_col(p, 1, j, rel->types[j])));
            continue;
        }
        if (r->vars[v].wildcard && !keeps_wildcards(r)) continue;
        vars[n] = v;
        outs[n++] = qp_e_col(p, 1, j, rel->types[j]);
    }
    rf_qp_rel *t = qp_temp_new(p, n);
    if (!t || p->oom) return -1;
    for (int32_t i = 0; i < n; i++) t->types[i] = outs[i]->type;
    name_cols(r, t, vars);
    c->dst = t;
    c->in[0] = cur->rel;
    c->in[1] = rel;
    c->lkeys = lk;
    c->rkeys = rk;
    c->nkeys = nk;
    c->filter = filter;
    c->outs = outs;
    c->nouts = n;
    emit(L, c);
    cur->rel = t;
    cur->var = vars;
    cur->n = n;
    cur->last = c;
    return 0;
}

/* cur = cur x (does atom l hold?): the atom projected onto no column and
** deduped is one empty row or none, so the rest of the body is kept or
** emptied without ever pairing its rows with the atom's tuples. With no
** pipe yet (have == 0), that row starts it. */
static int exists_atom(lw *L, const rf_fe_rule *r, const rf_fe_lit *l, rf_qp_rel *rel, pipe *cur, int have)
{
    rf_qp_program *p = L->p;
    pipe e;
    if (scan_atom(L, r, l, rel, NULL, &e)) return -1;
    rf_qp_rel *u = qp_temp_new(p, 0);
    rf_qp_cmd *uc = qp_cmd_new(p, RF_QP_UNIQUE, u, 1);
    if (!u || !uc) return -1;
    uc->in[0] = e.rel;
    emit(L, uc);
    if (!have) {
        *cur = (pipe){u, NULL, 0, NULL};
        return 0;
    }
    int32_t *vars = qp_ints(p, cur->n);
    rf_qp_expr **outs = qp_alloc(p, (size_t)(cur->n + 1) * sizeof *outs);
    rf_qp_rel *t = qp_temp_new(p, cur->n);
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_MAPJOIN, t, 2);
    if (!vars || !outs || !t || !c || p->oom) return -1;
    for (int32_t i = 0; i < cur->n; i++) {
        vars[i] = cur->var[i];
        outs[i] = qp_e_col(p, 0, i, cur->rel->types[i]);
        t->types[i] = cur->rel->types[i];
    }
    name_cols(r, t, vars);
    c->in[0] = cur->rel;
    c->in[1] = u;
    c->lkeys = qp_ints(p, 0);
    c->rkeys = qp_ints(p, 0);
    c->nkeys = 0;
    c->outs = outs;
    c->nouts = cur->n;
    emit(L, c);
    *cur = (pipe){t, vars, cur->n, c};
    return p->oom ? -1 : 0;
}

/* The relation that atom number `i` of rule r reads (over: what another-row
** tests read instead, may be NULL). */
static rf_qp_rel *atom_rel(lw *L, const rf_fe_lit *l, int32_t i, int32_t delta_lit, rf_qp_rel *const *over)
{
    if (over && over[i]) return over[i];
    return i == delta_lit ? L->delta[l->pred->id] : L->full[l->pred->id];
}

/* The constant of head argument i of a fact, or NULL. Desugaring turns a
** head argument like date:parse["..."] into a variable assigned a constant
** in the body, so such rules are facts too. */
static const rf_fe_const *fact_value(const rf_fe_rule *r, int32_t i)
{
    const rf_fe_expr *a = r->head_args[i];
    if (a->kind == RF_FE_CONST) return &a->c;
    for (int32_t j = 0; j < r->nbody; j++) {
        const rf_fe_lit *l = r->body[j];
        if (l->kind == RF_FE_ASSIGN && l->var == a->var && l->rhs->kind == RF_FE_CONST) return &l->rhs->c;
    }
    return NULL;
}

static int is_fact(const rf_fe_rule *r)
{
    if (r->naggs) return 0;
    for (int32_t j = 0; j < r->nbody; j++)
        if (r->body[j]->kind != RF_FE_ASSIGN || r->body[j]->rhs->kind != RF_FE_CONST) return 0;
    for (int32_t i = 0; i < r->head->arity; i++) {
        const rf_fe_const *k = fact_value(r, i);
        if (!k || k->type != r->head->types[i]) return 0;
    }
    return 1;
}

/* cur = the rows of cur for which negated literal l, an another-row test
** (qp_exists.c), holds: t = the keys and values v of cur's rows that meet a
** row of n->g (keys, least, greatest) with least != v or greatest != v, then
** cur anti-joined with t on them. */
static int negated_test(lw *L, const rf_fe_rule *r, const rf_fe_lit *l, const qp_exists_neg *n, pipe *cur)
{
    rf_qp_program *p = L->p;
    int32_t nk = n->nkeys, vc = col_of(cur, l->args[n->varg]->var);
    rf_qp_rel *t = qp_temp_new(p, nk + 1), *a = qp_temp_new(p, cur->n);
    rf_qp_cmd *jc = qp_cmd_new(p, RF_QP_MAPJOIN, t, 2), *ac = qp_cmd_new(p, RF_QP_ANTIJOIN, a, 2);
    int32_t *lk = qp_ints(p, nk + 1), *rk = qp_ints(p, nk + 1), *alk = qp_ints(p, nk + 1), *ark = qp_ints(p, nk + 1);
    rf_qp_expr **outs = qp_alloc(p, (size_t)(nk + 2) * sizeof *outs);
    if (!t || !a || !jc || !ac || !lk || !rk || !alk || !ark || !outs || vc < 0) return -1;
    for (int32_t k = 0; k < nk; k++) {
        lk[k] = col_of(cur, l->args[n->keyarg[k]]->var);
        rk[k] = k;
        if (lk[k] < 0) return -1;
    }
    for (int32_t k = 0; k <= nk; k++) {
        int32_t c = k < nk ? lk[k] : vc;
        outs[k] = qp_e_col(p, 0, c, cur->rel->types[c]);
        t->types[k] = cur->rel->types[c];
        t->colnames[k] = cur->rel->colnames[c];
        alk[k] = c;
        ark[k] = k;
    }
    rf_type vt = cur->rel->types[vc];
    rf_qp_expr *same = qp_e_and(p, qp_e_cmp(p, RF_CMP_EQ, qp_e_col(p, 1, nk, vt), qp_e_col(p, 0, vc, vt)),
                                qp_e_cmp(p, RF_CMP_EQ, qp_e_col(p, 1, nk + 1, vt), qp_e_col(p, 0, vc, vt)));
    jc->in[0] = cur->rel;
    jc->in[1] = n->g;
    jc->lkeys = lk;
    jc->rkeys = rk;
    jc->nkeys = nk;
    jc->filter = qp_e_not(p, same);
    jc->outs = outs;
    jc->nouts = nk + 1;
    emit(L, jc);
    for (int32_t k = 0; k < cur->n; k++) a->types[k] = cur->rel->types[k];
    name_cols(r, a, cur->var);
    ac->in[0] = cur->rel;
    ac->in[1] = t;
    ac->lkeys = alk;
    ac->rkeys = ark;
    ac->nkeys = nk + 1;
    if (qp_cmd_identity_outs(p, ac)) return -1;
    emit(L, ac);
    cur->rel = a;
    cur->last = ac;
    return p->oom ? -1 : 0;
}

/* One rule as a pipeline; returns the relation with the head's rows (a
** temporary, or a base relation when the rule copies one). delta_lit is the
** body literal that reads the delta relation (-1: none). */
/* Marks the variables e reads. */
static void mark_expr_vars(const rf_fe_expr *e, uint8_t *used)
{
    if (!e) return;
    if (e->kind == RF_FE_VAR) used[e->var] = 1;
    for (int32_t i = 0; i < e->nargs; i++) mark_expr_vars(e->args[i], used);
}

/* used[v]: variable v is read somewhere in rule r other than as the target
** of its own assignment (the head, an aggregate's argument, any literal). */
static void mark_used_vars(const rf_fe_rule *r, uint8_t *used)
{
    for (int32_t i = 0; i < r->head->arity; i++) mark_expr_vars(r->head_args[i], used);
    for (int32_t g = 0; g < r->naggs; g++)
        if (r->aggs[g].arg_var >= 0) used[r->aggs[g].arg_var] = 1;
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *l = r->body[i];
        for (int32_t j = 0; j < l->nargs; j++) mark_expr_vars(l->args[j], used);
        if (l->kind != RF_FE_ASSIGN) mark_expr_vars(l->lhs, used); /* an assignment's lhs is its own variable */
        mark_expr_vars(l->rhs, used);
        for (int32_t a = 0; a < l->nalts; a++)
            for (int32_t j = 0; j < l->altn[a]; j++) {
                mark_expr_vars(l->alts[a][j]->lhs, used);
                mark_expr_vars(l->alts[a][j]->rhs, used);
            }
    }
}

/* acc and conditions that evaluate every part of e that may fail, each as
** `x = x`, which holds wherever x has a value: a float part (where NaN is not
** equal to itself) is never compared, its operands are. NULL: nothing to
** check. */
static rf_qp_expr *failure_checks(rf_qp_program *p, rf_qp_expr *e, rf_qp_expr *acc)
{
    if (!qp_e_may_fail(e)) return acc;
    if (e->type != RF_TYPE_FLOAT) return qp_e_and(p, acc, qp_e_cmp(p, RF_CMP_EQ, e, qp_e_copy(p, e)));
    for (int32_t i = 0; i < e->nargs; i++) acc = failure_checks(p, e->args[i], acc);
    return acc;
}

/* The anti-join of one negated atom (body literal i) against the pipe. */
static int lower_negation(lw *L, const rf_fe_rule *r, const qp_exists_plan *ex, int32_t i, pipe *pcur)
{
    rf_qp_program *p = L->p;
    const rf_fe_lit *l = r->body[i];
    if (ex->neg && ex->neg[i]) return negated_test(L, r, l, ex->neg[i], pcur) ? -1 : 0;
    pipe cur = *pcur;
    pipe neg;
    if (scan_atom(L, r, l, L->full[l->pred->id], &cur, &neg)) return -1;
    rf_qp_rel *t = qp_temp_new(p, cur.n);
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_ANTIJOIN, t, 2);
    int32_t *lk = qp_ints(p, neg.n), *rk = qp_ints(p, neg.n);
    if (!t || !c || !lk || !rk) return -1;
    for (int32_t k = 0; k < neg.n; k++) {
        lk[k] = col_of(&cur, neg.var[k]);
        rk[k] = k;
    }
    for (int32_t k = 0; k < cur.n; k++) t->types[k] = cur.rel->types[k];
    name_cols(r, t, cur.var);
    c->in[0] = cur.rel;
    c->in[1] = neg.rel;
    c->lkeys = lk;
    c->rkeys = rk;
    c->nkeys = neg.n;
    if (qp_cmd_identity_outs(p, c)) return -1;
    emit(L, c);
    cur.rel = t;
    cur.last = c;
    *pcur = cur;
    return 0;
}

/* Whether the negated atom reads a variable that the rule assigns
** (v = expr): its anti-join then comes after the assignments. */
static int negation_reads_assigned(const rf_fe_lit *l, const uint8_t *assigns)
{
    for (int32_t j = 0; j < l->nargs; j++)
        if (l->args[j]->kind == RF_FE_VAR && assigns[l->args[j]->var]) return 1;
    return 0;
}

static rf_qp_rel *lower_rule(lw *L, const rf_fe_rule *rule, int32_t delta_lit)
{
    rf_qp_program *p = L->p;
    pipe cur = {NULL, NULL, 0, NULL};
    int32_t start = L->cur->ncmds;
    int have = 0;
    /* 0. another-row tests: the per-key relations they read, and the rule
    ** with its atoms reading them */
    qp_exists_plan ex = {rule, NULL, NULL, NULL};
    if (L->exists && qp_exists_rewrite(p, L->cur, rule, L->full, &ex)) return NULL;
    const rf_fe_rule *r = ex.r;
    /* 1. positive atoms: scan the first, join the others */
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *l = r->body[i];
        if (l->kind != RF_FE_ATOM || l->negated) continue;
        if (existence_atom(r, l)) continue;
        rf_qp_rel *rel = atom_rel(L, l, i, delta_lit, ex.over);
        if (!have) {
            if (scan_atom(L, r, l, rel, NULL, &cur)) return NULL;
            have = 1;
        } else if (join_atom(L, r, &cur, l, rel)) {
            return NULL;
        }
    }
    /* existence tests: after the joins, so that join ordering sees the chain */
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *l = r->body[i];
        if (!existence_atom(r, l)) continue;
        if (exists_atom(L, r, l, atom_rel(L, l, i, delta_lit, ex.over), &cur, have)) return NULL;
        have = 1;
    }
    if (!have) {
        /* no atom (p(x) <- x = 3.): start from the relation with one empty row */
        rf_qp_rel *t = qp_temp_new(p, 0);
        rf_qp_cmd *c = qp_cmd_new(p, RF_QP_FACTS, t, 0);
        if (!t || !c) return NULL;
        c->nrows = 1;
        emit(L, c);
        cur.rel = t;
        cur.var = NULL;
        cur.n = 0;
        cur.last = NULL;
    }
    /* 2. assignments and filters, in body order, as one map */
    rf_qp_expr **assigned = qp_alloc(p, (size_t)(r->nvars + 1) * sizeof *assigned);
    int32_t *avars = qp_ints(p, r->nvars);
    inlined in = {assigned, qp_ints(p, r->nvars), qp_alloc(p, (size_t)(r->nvars + 1) * sizeof(int64_t))};
    if (!assigned || !avars || !in.height || !in.nodes) return NULL;
    int32_t nassigned = 0;
    /* the filter's conjuncts, in body order, joined at the end in one node */
    rf_qp_expr **conjs = qp_alloc(p, (size_t)(r->nbody + 1) * sizeof *conjs);
    int32_t nconj = 0;
    if (!conjs) return NULL;
    int any = 0;
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *l = r->body[i];
        if (l->kind == RF_FE_ASSIGN) {
            if (!(assigned[l->var] = lower_expr_in(L, r, &cur, &in, l->rhs, l->loc, &in.height[l->var], &in.nodes[l->var])))
                return NULL;
            avars[nassigned++] = l->var;
            any = 1;
        } else if (l->kind == RF_FE_CMP) {
            rf_qp_expr *a = lower_expr(L, r, &cur, &in, l->lhs), *b = lower_expr(L, r, &cur, &in, l->rhs);
            conjs[nconj++] = qp_e_cmp(p, l->op, a, b);
            any = 1;
        } else if (l->kind == RF_FE_OR) {
            /* a ; b ; ... as not (not a and not b and ...): the plan's
            ** expressions have and and not only */
            rf_qp_expr *all = NULL;
            for (int32_t a = 0; a < l->nalts; a++) {
                rf_qp_expr *conj = NULL;
                for (int32_t j = 0; j < l->altn[a]; j++) {
                    const rf_fe_lit *x = l->alts[a][j];
                    rf_qp_expr *lhs = lower_expr(L, r, &cur, &in, x->lhs), *rhs = lower_expr(L, r, &cur, &in, x->rhs);
                    conj = qp_e_and(p, conj, qp_e_cmp(p, x->op, lhs, rhs));
                }
                all = qp_e_and(p, all, qp_e_not(p, conj));
            }
            conjs[nconj++] = qp_e_not(p, all);
            any = 1;
        } else if (l->kind == RF_FE_BUILTIN) {
            rf_qp_expr *x = qp_e_new(p, l->fn == RF_BI_LIKE ? RF_QP_E_LIKE : RF_QP_E_CALL, RF_TYPE_BOOL, l->nargs);
            if (!x) return NULL;
            x->fn = l->fn;
            for (int32_t j = 0; j < l->nargs; j++)
                if (!(x->args[j] = lower_expr(L, r, &cur, &in, l->args[j]))) return NULL;
            if (l->negated && !(x = qp_e_not(p, x))) return NULL;
            conjs[nconj++] = x;
            any = 1;
        }
    }
    if (p->oom) return NULL;
    rf_qp_expr *filter = qp_e_and_n(p, NULL, conjs, nconj);
    /* An assignment that nothing else reads is still the rule's: its
    ** overflow or division by zero is an error, as where its variable is
    ** used. The projections keep only the columns that later steps read, so
    ** such an assignment is evaluated in the filter, after the rule's
    ** comparisons (as a column is computed for the rows that pass them). */
    if (nassigned) {
        uint8_t *used = qp_alloc(p, (size_t)r->nvars + 1);
        if (!used) return NULL;
        mark_used_vars(r, used);
        for (int32_t i = 0; i < nassigned; i++)
            if (!used[avars[i]]) filter = failure_checks(p, assigned[avars[i]], filter);
        if (p->oom) return NULL;
    }
    /* Where a condition or assignment may fail at run time, the negations
    ** come first (those that read no assigned variable): it must not be
    ** evaluated for rows a negation drops (docs/LANGUAGE.md, "Where such an
    ** error is raised"). Otherwise they come after the map, which then
    ** merges into the join before it and filters the rows they test. The
    ** map's expressions read columns that an anti-join keeps in place. */
    uint8_t *assigns = qp_alloc(p, (size_t)r->nvars + 1), *negdone = qp_alloc(p, (size_t)r->nbody + 1);
    if (!assigns || !negdone) return NULL;
    int neg_first = filter && qp_e_may_fail(filter);
    for (int32_t i = 0; i < nassigned; i++) {
        assigns[avars[i]] = 1;
        neg_first |= qp_e_may_fail(assigned[avars[i]]);
    }
    for (int32_t i = 0; i < r->nbody && neg_first; i++) {
        const rf_fe_lit *l = r->body[i];
        if (l->kind != RF_FE_ATOM || !l->negated || negation_reads_assigned(l, assigns)) continue;
        if (lower_negation(L, r, &ex, i, &cur)) return NULL;
        negdone[i] = 1;
    }
    if (any) {
        int32_t n = cur.n + nassigned;
        int32_t *vars = qp_ints(p, n);
        rf_qp_expr **outs = qp_alloc(p, (size_t)(n + 1) * sizeof *outs);
        if (!vars || !outs) return NULL;
        for (int32_t i = 0; i < cur.n; i++) {
            vars[i] = cur.var[i];
            outs[i] = qp_e_col(p, 0, i, cur.rel->types[i]);
        }
        for (int32_t i = 0; i < nassigned; i++) {
            vars[cur.n + i] = avars[i];
            outs[cur.n + i] = assigned[avars[i]];
        }
        if (emit_map(L, r, &cur, filter, outs, n, vars)) return NULL;
    }
    /* 3. the other negations: anti-join with the projection of the negated
    ** atom */
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *l = r->body[i];
        if (l->kind != RF_FE_ATOM || !l->negated || negdone[i]) continue;
        if (lower_negation(L, r, &ex, i, &cur)) return NULL;
    }
    /* 4. aggregation over the body's solutions: the distinct bindings of
    ** every variable of its positive atoms, wildcards included */
    if (r->naggs) {
        uint8_t *isout = qp_alloc(p, (size_t)r->nvars + 1), *keep = qp_alloc(p, (size_t)r->nvars + 1);
        int32_t *gvars = qp_ints(p, r->head->arity);
        if (!isout || !keep || !gvars) return NULL;
        for (int32_t g = 0; g < r->naggs; g++) isout[r->aggs[g].out_var] = 1;
        int32_t ng = 0;
        for (int32_t i = 0; i < r->head->arity; i++) {
            const rf_fe_expr *a = r->head_args[i];
            if (a->kind != RF_FE_VAR || isout[a->var] || keep[a->var]) continue;
            keep[a->var] = 1;
            gvars[ng++] = a->var;
        }
        /* the variables of the positive atoms, wildcards included, decide
        ** distinctness: one binding of them is one combination of body
        ** tuples (a constant or repeated variable adds nothing); assigned
        ** variables are functions of them. A recursive min or max does not
        ** depend on how often a value comes, and needs no dedupe. */
        int lattice = r->head->lattice;
        for (int32_t i = 0; i < r->nbody && !lattice; i++) {
            const rf_fe_lit *l = r->body[i];
            if (l->kind != RF_FE_ATOM || l->negated) continue;
            for (int32_t j = 0; j < l->nargs; j++)
                if (l->args[j]->kind == RF_FE_VAR) keep[l->args[j]->var] = 1;
        }
        for (int32_t g = 0; g < r->naggs; g++)
            if (r->aggs[g].arg_var >= 0) keep[r->aggs[g].arg_var] = 1;
        int32_t nb = 0;
        int32_t *bvars = qp_ints(p, cur.n);
        rf_qp_expr **bouts = qp_alloc(p, (size_t)(cur.n + 1) * sizeof *bouts);
        if (!bvars || !bouts) return NULL;
        for (int32_t i = 0; i < cur.n; i++)
            if (keep[cur.var[i]]) {
                bvars[nb] = cur.var[i];
                bouts[nb++] = qp_e_col(p, 0, i, cur.rel->types[i]);
            }
        if (emit_map(L, r, &cur, NULL, bouts, nb, bvars)) return NULL;
        rf_qp_rel *u = cur.rel;
        if (!lattice) {
            u = qp_temp_new(p, cur.n);
            rf_qp_cmd *uc = qp_cmd_new(p, RF_QP_UNIQUE, u, 1);
            if (!u || !uc) return NULL;
            for (int32_t i = 0; i < cur.n; i++) u->types[i] = cur.rel->types[i];
            name_cols(r, u, cur.var);
            uc->in[0] = cur.rel;
            emit(L, uc);
        }
        rf_qp_rel *a = qp_temp_new(p, ng + r->naggs);
        rf_qp_cmd *ac = qp_cmd_new(p, RF_QP_AGGREGATE, a, 1);
        int32_t *avs = qp_ints(p, ng + r->naggs);
        if (!a || !ac || !avs) return NULL;
        ac->in[0] = u;
        ac->group = qp_ints(p, ng);
        ac->ngroup = ng;
        ac->aggs = qp_alloc(p, (size_t)(r->naggs + 1) * sizeof *ac->aggs);
        ac->naggs = r->naggs;
        if (!ac->group || !ac->aggs) return NULL;
        for (int32_t i = 0; i < ng; i++) {
            ac->group[i] = col_of(&cur, gvars[i]);
            a->types[i] = r->vars[gvars[i]].type;
            avs[i] = gvars[i];
        }
        for (int32_t g = 0; g < r->naggs; g++) {
            ac->aggs[g].fn = r->aggs[g].fn;
            ac->aggs[g].col = r->aggs[g].arg_var >= 0 ? col_of(&cur, r->aggs[g].arg_var) : -1;
            ac->aggs[g].type = r->vars[r->aggs[g].out_var].type;
            a->types[ng + g] = ac->aggs[g].type;
            avs[ng + g] = r->aggs[g].out_var;
        }
        name_cols(r, a, avs);
        emit(L, ac);
        cur.rel = a;
        cur.var = avs;
        cur.n = ng + r->naggs;
        cur.last = NULL;
    }
    /* 5. the head */
    int32_t arity = r->head->arity;
    rf_qp_expr **hout = qp_alloc(p, (size_t)(arity + 1) * sizeof *hout);
    int32_t *hvars = qp_ints(p, arity);
    if (!hout || !hvars) return NULL;
    for (int32_t i = 0; i < arity; i++) {
        const rf_fe_expr *a = r->head_args[i];
        hvars[i] = a->kind == RF_FE_VAR ? a->var : -1;
        if (!(hout[i] = lower_expr(L, r, &cur, NULL, a))) return NULL;
    }
    if (emit_map(L, r, &cur, NULL, hout, arity, hvars)) return NULL;
    if (cur.rel->kind == RF_QP_REL_TEMP)
        for (int32_t i = 0; i < arity; i++) cur.rel->colnames[i] = r->head->cols[i];
    /* remember where it came from, for the printers */
    for (int32_t i = start; i < L->cur->ncmds; i++) L->cur->cmds[i]->loc = r->loc;
    if (start < L->cur->ncmds) {
        const char *note = delta_lit >= 0
                               ? qp_sprintf(p, "%s, line %d: %s reads %s", r->head->name, r->loc.line,
                                            r->body[delta_lit]->pred->name, L->delta[r->body[delta_lit]->pred->id]->name)
                               : qp_sprintf(p, "%s, line %d", r->head->name, r->loc.line);
        if (ex.note) note = qp_sprintf(p, "%s; %s", note, ex.note);
        L->cur->cmds[start]->note = note;
    }
    return p->oom ? NULL : cur.rel;
}

/* ---- facts ----------------------------------------------------------- */

static int row_cmp(const rf_fe_const *rows, int32_t ncols, int64_t a, int64_t b)
{
    for (int32_t j = 0; j < ncols; j++) {
        int c = qp_const_cmp(&rows[a * ncols + j], &rows[b * ncols + j]);
        if (c) return c;
    }
    return 0;
}

/* Merge sort of row indices: qsort has no context argument in C11. */
static void sort_rows(const rf_fe_const *rows, int32_t ncols, int64_t *idx, int64_t *tmp, int64_t n)
{
    if (n < 2) return;
    int64_t h = n / 2;
    sort_rows(rows, ncols, idx, tmp, h);
    sort_rows(rows, ncols, idx + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = row_cmp(rows, ncols, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

/* The facts of predicate q, sorted and without duplicates, as one command
** writing dst (NULL: a new temporary). NULL command when q has no facts. */
static rf_qp_cmd *facts_cmd(lw *L, const rf_fe_pred *q, rf_qp_rel *dst)
{
    rf_qp_program *p = L->p;
    int64_t n = 0;
    for (int32_t i = 0; i < q->nrules; i++) n += is_fact(q->rules[i]);
    if (!n) return NULL;
    int32_t w = q->arity;
    rf_fe_const *raw = rf_calloc((size_t)(n * w + 1), sizeof *raw);
    int64_t *idx = rf_calloc((size_t)n + 1, sizeof *idx), *tmp = rf_calloc((size_t)n + 1, sizeof *tmp);
    rf_loc *locs = rf_calloc((size_t)n + 1, sizeof *locs);
    rf_qp_cmd *c = NULL;
    if (!raw || !idx || !tmp || !locs) {
        p->oom = 1;
        goto done;
    }
    int64_t k = 0;
    for (int32_t i = 0; i < q->nrules; i++) {
        if (!is_fact(q->rules[i])) continue;
        for (int32_t j = 0; j < w; j++) raw[k * w + j] = *fact_value(q->rules[i], j);
        idx[k] = k;
        locs[k] = q->rules[i]->loc;
        k++;
    }
    sort_rows(raw, w, idx, tmp, n);
    /* facts that give a functional predicate's key two values: the
    ** program's error, at the fact (no run could pass the check); the
    ** lowering goes on, to report the other predicates' too */
    if (L->full[q->id]->fd_checked) {
        int clash = qp_facts_fd_check(L->d, q, raw, idx, n, locs);
        if (clash < 0) {
            p->oom = 1;
            goto done;
        }
        if (clash) L->user_error = 1;
    }
    if (!dst) dst = qp_temp_new(p, w);
    c = qp_cmd_new(p, RF_QP_FACTS, dst, 0);
    if (!dst || !c) goto done;
    if (dst->kind == RF_QP_REL_TEMP)
        for (int32_t j = 0; j < w; j++) {
            dst->types[j] = q->types[j];
            dst->colnames[j] = q->cols[j];
        }
    c->rows = qp_alloc(p, (size_t)(n * w + 1) * sizeof *c->rows);
    if (!c->rows) goto done;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (m && row_cmp(raw, w, idx[i], idx[i - 1]) == 0) continue;
        memcpy(&c->rows[m * w], &raw[idx[i] * w], (size_t)w * sizeof *raw);
        m++;
    }
    c->nrows = m;
    c->loc = q->loc;
    c->note = qp_sprintf(p, "%s: %lld fact%s", q->name, (long long)m, m == 1 ? "" : "s");
done:
    free(raw);
    free(idx);
    free(tmp);
    free(locs);
    return p->oom ? NULL : c;
}

/* ---- predicates ------------------------------------------------------ */

static int in_stratum(const rf_fe_pred *q, int32_t s) { return q->stratum == s; }

/* dst = the set of rows of srcs[]: a union, then the check of the
** functional dependency when dst is functional (at decl, the predicate's
** declaration: a violation names it, as its rules may be several). */
static int define(lw *L, rf_qp_rel *dst, rf_qp_rel **srcs, int32_t n, rf_loc decl)
{
    rf_qp_program *p = L->p;
    int fd = dst->fd_checked;
    if (n == 0) {
        emit(L, qp_cmd_new(p, RF_QP_CLEAR, dst, 0));
        return p->oom ? -1 : 0;
    }
    rf_qp_rel *src = srcs[0];
    if (n > 1) {
        rf_qp_rel *u = fd ? qp_temp_new(p, dst->ncols) : dst;
        rf_qp_cmd *c = qp_cmd_new(p, RF_QP_UNION, u, n);
        if (!u || !c) return -1;
        if (fd)
            for (int32_t j = 0; j < dst->ncols; j++) {
                u->types[j] = dst->types[j];
                u->colnames[j] = dst->colnames[j];
            }
        memcpy(c->in, srcs, (size_t)n * sizeof *srcs);
        emit(L, c);
        if (!fd) return 0;
        src = u;
    }
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_UNIQUE, dst, 1);
    if (!c) return -1;
    c->in[0] = src;
    c->check_fd = fd;
    if (fd) c->loc = decl;
    emit(L, c);
    return 0;
}

/* The rules of q that read no predicate of stratum rec_stratum (-1: all
** rules), lowered into srcs; the facts first, as one command. Returns 1
** when the facts were written straight into q (nothing left to union). */
static int lower_sources(lw *L, const rf_fe_pred *q, int32_t rec_stratum, rf_qp_rel ***srcs, int32_t *n)
{
    rf_qp_program *p = L->p;
    *srcs = qp_alloc(p, (size_t)(q->nrules + 1) * sizeof **srcs);
    *n = 0;
    if (!*srcs) return -1;
    rf_qp_rel *full = L->full[q->id];
    int nfact = 0;
    for (int32_t i = 0; i < q->nrules; i++) nfact += is_fact(q->rules[i]);
    if (nfact) {
        /* facts alone need no dedupe: write them straight into the predicate */
        int direct = nfact == q->nrules && !full->fd_checked;
        rf_qp_cmd *c = facts_cmd(L, q, direct ? full : NULL);
        if (!c) return -1;
        emit(L, c);
        if (direct) return 1;
        (*srcs)[(*n)++] = c->dst;
    }
    for (int32_t i = 0; i < q->nrules; i++) {
        const rf_fe_rule *r = q->rules[i];
        if (is_fact(r)) continue;
        int rec = 0;
        for (int32_t j = 0; j < r->nbody && rec_stratum >= 0; j++)
            if (r->body[j]->kind == RF_FE_ATOM && !r->body[j]->negated && in_stratum(r->body[j]->pred, rec_stratum))
                rec = 1;
        if (rec) continue;
        rf_qp_rel *t = lower_rule(L, r, -1);
        if (!t) return -1;
        (*srcs)[(*n)++] = t;
    }
    return 0;
}

/* A recursive min or max starts from the best of its candidates per key. */
static int define_best(lw *L, const rf_fe_pred *q, rf_qp_rel **srcs, int32_t n)
{
    rf_qp_program *p = L->p;
    rf_qp_rel *full = L->full[q->id];
    if (n == 0) {
        emit(L, qp_cmd_new(p, RF_QP_CLEAR, full, 0));
        return p->oom ? -1 : 0;
    }
    rf_qp_rel *src = srcs[0];
    if (n > 1) {
        src = qp_temp_new(p, full->ncols);
        rf_qp_cmd *c = src ? qp_cmd_new(p, RF_QP_UNION, src, n) : NULL;
        if (!c) return -1;
        for (int32_t j = 0; j < full->ncols; j++) {
            src->types[j] = full->types[j];
            src->colnames[j] = full->colnames[j];
        }
        memcpy(c->in, srcs, (size_t)n * sizeof *srcs);
        emit(L, c);
    }
    return qp_lattice_best(p, L->cur, q, src, full) ? 0 : -1;
}

static int lower_nonrec(lw *L, const rf_fe_pred *q)
{
    rf_qp_rel **srcs;
    int32_t n;
    int rc = lower_sources(L, q, -1, &srcs, &n);
    if (rc) return rc < 0 ? -1 : 0;
    return define(L, L->full[q->id], srcs, n, q->loc);
}

static rf_qp_cmd *copy_cmd(lw *L, rf_qp_rel *dst, rf_qp_rel *src)
{
    rf_qp_cmd *c = qp_cmd_new(L->p, RF_QP_COPY, dst, 1);
    if (c) c->in[0] = src;
    return c;
}

/* One round of q's recursive rules: each once per body atom of stratum s,
** that atom reading the delta and the others the full relations; q.new =
** what they derive that q does not hold yet. */
static int lower_round(lw *L, int32_t s, const rf_fe_pred *q)
{
    rf_qp_program *p = L->p;
    rf_qp_rel **srcs = qp_alloc(p, (size_t)(q->nrules * 4 + 1) * sizeof *srcs);
    int32_t n = 0, cap = q->nrules * 4;
    int all_agg = 1; /* every source is an aggregate: one row per key */
    if (!srcs) return -1;
    for (int32_t k = 0; k < q->nrules; k++) {
        const rf_fe_rule *r = q->rules[k];
        for (int32_t j = 0; j < r->nbody; j++) {
            const rf_fe_lit *l = r->body[j];
            if (l->kind != RF_FE_ATOM || l->negated || !in_stratum(l->pred, s)) continue;
            rf_qp_rel *t = lower_rule(L, r, j);
            if (!t) return -1;
            all_agg &= r->naggs > 0;
            if (n == cap) {
                rf_qp_rel **m = qp_alloc(p, (size_t)(cap * 2 + 1) * sizeof *m);
                if (!m) return -1;
                memcpy(m, srcs, (size_t)n * sizeof *m);
                srcs = m;
                cap *= 2;
            }
            srcs[n++] = t;
        }
    }
    rf_qp_rel *nw = L->newr[q->id];
    if (!n) {
        emit(L, qp_cmd_new(p, RF_QP_CLEAR, nw, 0));
        return p->oom ? -1 : 0;
    }
    if (q->lattice_transient) {
        /* the round's candidates, without those of earlier rounds (frontend/monotone.c) */
        rf_qp_cmd *c = qp_cmd_new(p, RF_QP_UNION, nw, n);
        if (!c) return -1;
        memcpy(c->in, srcs, (size_t)n * sizeof *srcs);
        emit(L, c);
        return 0;
    }
    rf_qp_rel *src = srcs[0];
    if (n > 1) {
        rf_qp_rel *u = qp_temp_new(p, nw->ncols);
        rf_qp_cmd *c = qp_cmd_new(p, RF_QP_UNION, u, n);
        if (!u || !c) return -1;
        for (int32_t j = 0; j < nw->ncols; j++) {
            u->types[j] = nw->types[j];
            u->colnames[j] = nw->colnames[j];
        }
        memcpy(c->in, srcs, (size_t)n * sizeof *srcs);
        emit(L, c);
        src = u;
    }
    if (q->lattice) {
        /* the best candidate per key, where it improves on the full relation */
        rf_qp_rel *best = n == 1 && all_agg ? src : qp_lattice_best(p, L->cur, q, src, NULL);
        return !best || qp_lattice_improve(p, L->cur, q, best, L->full[q->id], nw) ? -1 : 0;
    }
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_DIFFERENCE, nw, 2);
    if (!c) return -1;
    c->in[0] = src;
    c->in[1] = L->full[q->id];
    emit(L, c);
    return 0;
}

/* q = q + q.delta (checked again when q is functional). */
static int add_delta(lw *L, const rf_fe_pred *q, rf_qp_rel *delta)
{
    rf_qp_program *p = L->p;
    rf_qp_rel *full = L->full[q->id];
    if (q->lattice) return qp_lattice_replace(p, L->cur, q, full, delta);
    if (q->lattice_transient) return 0;
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_UNION, full, 2);
    if (!c) return -1;
    c->in[0] = full;
    c->in[1] = delta;
    emit(L, c);
    if (full->fd_checked) {
        rf_qp_cmd *u = qp_cmd_new(p, RF_QP_UNIQUE, full, 1);
        if (!u) return -1;
        u->in[0] = full;
        u->check_fd = 1;
        u->loc = q->loc;
        emit(L, u);
    }
    return p->oom ? -1 : 0;
}

static int lower_recursive(lw *L, int32_t s)
{
    rf_qp_program *p = L->p;
    const rf_fe_stratum *st = &L->fe->strata[s];
    /* init: the rules that read no predicate of this stratum */
    for (int32_t i = 0; i < st->npreds; i++) {
        const rf_fe_pred *q = st->preds[i];
        rf_qp_rel **srcs;
        int32_t n;
        int rc = lower_sources(L, q, s, &srcs, &n);
        if (rc < 0) return -1;
        if (rc == 0 && (q->lattice ? define_best(L, q, srcs, n) : define(L, L->full[q->id], srcs, n, q->loc))) return -1;
    }
    rf_qp_rel **deltas = qp_alloc(p, (size_t)(st->npreds + 1) * sizeof *deltas);
    if (!deltas) return -1;
    for (int32_t i = 0; i < st->npreds; i++) {
        deltas[i] = L->delta[st->preds[i]->id];
        emit(L, copy_cmd(L, deltas[i], L->full[st->preds[i]->id]));
    }
    rf_qp_block *loop = qp_block_new(p, qp_sprintf(p, "stratum %d: semi-naive loop", s));
    rf_qp_block *next = qp_block_new(p, qp_sprintf(p, "after stratum %d", s));
    if (!loop || !next) return -1;
    L->cur->term = (rf_qp_term){RF_QP_T_BRANCH, loop->id, next->id, deltas, st->npreds};
    L->cur = loop;
    /* A negated conjunction's predicate whose context reads this stratum
    ** (frontend/stratify.c) is brought up to date first in each round, so
    ** that the rules negating it see it complete for the round's relations;
    ** nested ones (created later: higher ids) before those around them. */
    for (int32_t i = st->npreds - 1; i >= 0; i--) {
        if (st->preds[i]->aux != 2) continue;
        if (lower_round(L, s, st->preds[i])) return -1;
        emit(L, copy_cmd(L, deltas[i], L->newr[st->preds[i]->id]));
        if (add_delta(L, st->preds[i], deltas[i])) return -1;
    }
    for (int32_t i = 0; i < st->npreds; i++)
        if (st->preds[i]->aux != 2 && lower_round(L, s, st->preds[i])) return -1;
    /* only now, so that every rule above saw the same round */
    for (int32_t i = 0; i < st->npreds; i++)
        if (st->preds[i]->aux != 2) emit(L, copy_cmd(L, deltas[i], L->newr[st->preds[i]->id]));
    for (int32_t i = 0; i < st->npreds; i++)
        if (st->preds[i]->aux != 2 && add_delta(L, st->preds[i], deltas[i])) return -1;
    loop->term = (rf_qp_term){RF_QP_T_BRANCH, loop->id, next->id, deltas, st->npreds};
    L->cur = next;
    return p->oom ? -1 : 0;
}

static rf_qp_rel *pred_rel(lw *L, const rf_fe_pred *q, rf_qp_rel_kind kind, const char *suffix)
{
    rf_qp_program *p = L->p;
    const char *name = suffix ? qp_sprintf(p, "%s.%s", q->name, suffix) : q->name;
    rf_qp_rel *r = name ? qp_rel_new(p, kind, name, q->arity) : NULL;
    if (!r) return NULL;
    for (int32_t j = 0; j < q->arity; j++) {
        r->types[j] = q->types[j];
        r->colnames[j] = q->cols[j];
    }
    r->pred = q;
    r->stratum = q->stratum;
    if (q->functional && kind != RF_QP_REL_INPUT && !q->lattice) {
        /* (a recursive min or max has one row per key by construction) */
        r->nkeys = q->arity - 1;
        r->fd_checked = 1;
    }
    return r;
}

rf_status rf_qp_build_opts(const rf_fe_program *fe, const rf_qp_options *opt, rf_qp_program **out, rf_diags *d)
{
    *out = NULL;
    rf_qp_program *p = rf_calloc(1, sizeof *p);
    if (!p) return RF_ENOMEM;
    rf_arena_init(&p->arena);
    p->fe = fe;
    p->inputs_are_sets = opt ? opt->inputs_are_sets : 0;
    p->no_lftj = opt ? opt->no_lftj : 0;
    p->no_partagg = opt ? opt->no_partagg : 0;
    p->no_hoist = opt ? opt->no_hoist : 0;
    p->no_keyjoin = opt ? opt->no_keyjoin : 0;
    lw L = {p, fe, d, NULL, NULL, NULL, NULL, !(opt && opt->no_exists), 0};
    int64_t errors = d->nerrors;
    L.full = qp_alloc(p, (size_t)(fe->npreds + 1) * sizeof *L.full);
    L.delta = qp_alloc(p, (size_t)(fe->npreds + 1) * sizeof *L.delta);
    L.newr = qp_alloc(p, (size_t)(fe->npreds + 1) * sizeof *L.newr);
    if (!L.full || !L.delta || !L.newr) goto fail;
    /* relations: in predicate order, so that the listing follows the source */
    for (int32_t i = 0; i < fe->npreds; i++) {
        const rf_fe_pred *q = fe->preds[i];
        rf_qp_rel *r = pred_rel(&L, q, q->input_file ? RF_QP_REL_INPUT : RF_QP_REL_PRED, NULL);
        if (!r) goto fail;
        if (q->input_file) {
            r->input_file = q->input_file;
            r->delimiter = q->delimiter;
            r->header = q->header;
            r->input_key = q->input_key;
            r->ninput_key = q->ninput_key;
        }
        L.full[q->id] = r;
    }
    for (int32_t i = 0; i < fe->npreds; i++) {
        const rf_fe_pred *q = fe->preds[i];
        if (!q->recursive || q->input_file) continue;
        if (!(L.delta[q->id] = pred_rel(&L, q, RF_QP_REL_DELTA, "delta"))) goto fail;
        if (!(L.newr[q->id] = pred_rel(&L, q, RF_QP_REL_NEW, "new"))) goto fail;
        L.delta[q->id]->nkeys = L.newr[q->id]->nkeys = -1; /* checked on the full relation */
        L.delta[q->id]->fd_checked = L.newr[q->id]->fd_checked = 0;
    }
    L.cur = qp_block_new(p, "entry");
    if (!L.cur) goto fail;
    for (int32_t s = 0; s < fe->nstrata; s++) {
        const rf_fe_stratum *st = &fe->strata[s];
        if (st->recursive) {
            if (lower_recursive(&L, s)) goto fail;
            continue;
        }
        for (int32_t i = 0; i < st->npreds; i++) {
            const rf_fe_pred *q = st->preds[i];
            if (q->input_file) continue;
            if (lower_nonrec(&L, q)) goto fail;
        }
    }
    /* outputs, in predicate order */
    for (int32_t i = 0; i < fe->npreds; i++) {
        const rf_fe_pred *q = fe->preds[i];
        if (!q->output_name) continue;
        rf_qp_rel *o = pred_rel(&L, q, RF_QP_REL_OUTPUT, "out");
        rf_qp_cmd *c = o ? qp_cmd_new(p, RF_QP_ORDERLIMIT, o, 1) : NULL;
        if (!c) goto fail;
        o->nkeys = -1;
        o->fd_checked = 0;
        o->output_name = q->output_name;
        o->limit = q->limit;
        c->in[0] = L.full[q->id];
        if (q->input_file && !p->inputs_are_sets) {
            /* a file may hold a row twice, and a predicate is a set: an
            ** input printed as it is needs the dedupe its readers get
            ** after a projection (pass_unique drops it where a key says
            ** the rows are distinct) */
            rf_qp_rel *u = qp_temp_new(p, q->arity);
            rf_qp_cmd *uc = u ? qp_cmd_new(p, RF_QP_UNIQUE, u, 1) : NULL;
            if (!uc) goto fail;
            for (int32_t j = 0; j < q->arity; j++) {
                u->types[j] = q->types[j];
                u->colnames[j] = q->cols[j];
            }
            uc->in[0] = L.full[q->id];
            emit(&L, uc);
            c->in[0] = u;
        }
        c->limit = q->limit;
        if (q->norder) {
            c->order = (rf_fe_order *)q->order;
            c->norder = q->norder;
        } else {
            c->order = qp_alloc(p, (size_t)(q->arity + 1) * sizeof *c->order);
            if (!c->order) goto fail;
            for (int32_t j = 0; j < q->arity; j++) c->order[j] = (rf_fe_order){j, 0};
            c->norder = q->arity;
        }
        o->order = c->order;
        o->norder = c->norder;
        emit(&L, c);
    }
    L.cur->term.kind = RF_QP_T_HALT;
    qp_sort_rels(p);
    if (p->oom) goto fail;
    if (d->nerrors > errors) {
        rf_qp_free(p);
        return L.user_error ? RF_EUSER : RF_EINTERNAL;
    }
    rf_qp_infer(p);
    rf_status st = rf_qp_verify(p, d);
    if (st) {
        rf_qp_free(p);
        return st;
    }
    *out = p;
    return RF_OK;
fail:
    rf_qp_free(p);
    if (d->nerrors > errors) return L.user_error ? RF_EUSER : RF_EINTERNAL;
    return RF_ENOMEM;
}

rf_status rf_qp_build(const rf_fe_program *fe, rf_qp_program **out, rf_diags *d)
{
    return rf_qp_build_opts(fe, NULL, out, d);
}
