/*
** frontend/monotone.c: recursive min and max (monotone aggregates).
**
** Owns: the check that lets a cycle of the predicate graph go through an
** aggregate: every aggregate in it is one min, or one max (not both in one
** cycle), giving the value of a functional predicate, and the values it
** aggregates flow only through operations that keep their order (+, - of
** another value, int:min, int:max, widening conversions, comparisons that
** keep the better values), never through a join, a key, a negation or a
** built-in predicate. Such a predicate is a lattice predicate: each key
** keeps its best value, a better one replaces it, and the least fixpoint
** equals the plain min (max) over every derivable value when that is finite.
** The marks the query plan reads (rf_fe_pred.lattice, rf_fe_stratum.lattice)
** are set here. Predicates of the cycle that are not aggregates but carry
** such values (a disjunction's shared body, say) hold values of the rounds
** in between, so nothing outside the cycle may read them.
*/
#include "check_internal.h"

#include <stdlib.h>
#include <string.h>

const char *rf_chk_lattice_rule_why(const rf_fe_rule *r)
{
    if (r->naggs != 1)
        return "a recursive aggregate computes one value, a min or a max";
    if (r->aggs[0].fn != RF_AGG_MIN && r->aggs[0].fn != RF_AGG_MAX)
        return "only min and max may aggregate through recursion (a better value replaces a worse one; "
               "count, total and avg change as the relation grows)";
    const rf_fe_pred *h = r->head;
    const rf_fe_expr *v = h->arity ? r->head_args[h->arity - 1] : NULL;
    if (!h->functional || !v || v->kind != RF_FE_VAR || v->var != r->aggs[0].out_var)
        return "a recursive min or max gives the value of a functional predicate "
               "(p[k] = v <- agg<<v = min(x)>> ...)";
    for (int32_t i = 0; i + 1 < h->arity; i++)
        if (r->head_args[i]->kind == RF_FE_VAR && r->head_args[i]->var == v->var)
            return "a recursive min or max gives the value of a functional predicate, not a key";
    return NULL;
}

typedef struct lat {
    rf_checker *c;
    rf_fe_program *prog;
    int32_t s;
    rf_agg_fn fn;
    uint8_t **taint; /* by predicate id (stratum s only): the columns carrying values */
} lat;

static int in_s(const lat *L, const rf_fe_pred *p) { return p->stratum == L->s; }

static const char *fn_name(rf_agg_fn fn) { return fn == RF_AGG_MIN ? "min" : "max"; }

static int reads_taint(const rf_fe_expr *e, const uint8_t *tv)
{
    if (e->kind == RF_FE_VAR) return tv[e->var];
    for (int32_t i = 0; i < e->nargs; i++)
        if (reads_taint(e->args[i], tv)) return 1;
    return 0;
}

/* Non-decreasing in every tainted variable it reads (or reads none). */
static int monotone(const rf_fe_expr *e, const uint8_t *tv)
{
    if (!reads_taint(e, tv)) return 1;
    switch (e->kind) {
    case RF_FE_VAR: return 1;
    case RF_FE_CAST: return monotone(e->args[0], tv);
    case RF_FE_BINOP:
        if (!rf_type_is_numeric(e->type)) return 0; /* string concatenation is not */
        /* a chain: a + b + ... with every operand monotone; a - b - ...
        ** monotone in a, the operands subtracted free of the value */
        if (e->op != '+' && e->op != '-') return 0;
        if (!monotone(e->args[0], tv)) return 0;
        for (int32_t i = 1; i < e->nargs; i++)
            if (e->op == '+' ? !monotone(e->args[i], tv) : reads_taint(e->args[i], tv)) return 0;
        return 1;
    case RF_FE_CALL:
        if (e->fn != RF_BI_INT_MIN && e->fn != RF_BI_INT_MAX) return 0;
        for (int32_t i = 0; i < e->nargs; i++)
            if (!monotone(e->args[i], tv)) return 0;
        return 1;
    default: return 0;
    }
}

/* The tainted variables of r: those at a carrying column of an atom of the
** stratum, and those assigned from them. */
static void taint_vars(const lat *L, const rf_fe_rule *r, uint8_t *tv)
{
    memset(tv, 0, (size_t)r->nvars + 1);
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *l = r->body[i];
        if (l->kind != RF_FE_ATOM || !in_s(L, l->pred)) continue;
        for (int32_t j = 0; j < l->nargs; j++)
            if (L->taint[l->pred->id][j] && l->args[j]->kind == RF_FE_VAR) tv[l->args[j]->var] = 1;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t i = 0; i < r->nbody; i++) {
            const rf_fe_lit *l = r->body[i];
            if (l->kind == RF_FE_ASSIGN && !tv[l->var] && reads_taint(l->rhs, tv)) {
                tv[l->var] = 1;
                changed = 1;
            }
        }
    }
}

static void expr_text(const rf_fe_rule *r, const rf_fe_expr *e, rf_buf *b)
{
    /* without the outer parentheses of a binary operation */
    if (e->kind == RF_FE_BINOP) {
        for (int32_t i = 0; i < e->nargs; i++) {
            if (i) rf_buf_printf(b, " %c ", e->op);
            rf_fe_expr_print(r, e->args[i], b);
        }
    } else {
        rf_fe_expr_print(r, e, b);
    }
}

/* A comparison keeps the better values: an upper bound for min, a lower
** bound for max, with the value on one side only. */
static void check_cmp(const lat *L, const rf_fe_rule *r, const rf_fe_lit *l, const uint8_t *tv, const char *who)
{
    int tl = reads_taint(l->lhs, tv), tr = reads_taint(l->rhs, tv);
    if (!tl && !tr) return;
    int upper = (tl && (l->op == RF_CMP_LT || l->op == RF_CMP_LE)) || (tr && (l->op == RF_CMP_GT || l->op == RF_CMP_GE));
    int lower = (tl && (l->op == RF_CMP_GT || l->op == RF_CMP_GE)) || (tr && (l->op == RF_CMP_LT || l->op == RF_CMP_LE));
    int ok = !(tl && tr) && monotone(tl ? l->lhs : l->rhs, tv) && (L->fn == RF_AGG_MIN ? upper : lower);
    if (ok) return;
    rf_buf b;
    rf_buf_init(&b);
    expr_text(r, l->lhs, &b);
    rf_buf_printf(&b, " %s ", rf_cmp_op_name(l->op));
    expr_text(r, l->rhs, &b);
    rf_error(L->c->d, l->loc,
             "`%s` compares a value of the recursive %s `%s` in a way a better value can fail: "
             "only %s bounds on it keep the recursion monotone",
             rf_buf_cstr(&b), fn_name(L->fn), who, L->fn == RF_AGG_MIN ? "upper (v < x, v <= x)" : "lower (v > x, v >= x)");
    rf_buf_free(&b);
}

/* The lattice predicate whose value reaches r (for messages). */
static const char *source_of(const lat *L, const rf_fe_rule *r)
{
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *l = r->body[i];
        if (l->kind == RF_FE_ATOM && in_s(L, l->pred)) return l->pred->aux == 2 && l->pred->shown ? l->pred->shown : l->pred->name;
    }
    return r->head->name;
}

static void check_rule(const lat *L, const rf_fe_rule *r, uint8_t *tv, uint8_t *seen)
{
    rf_diags *d = L->c->d;
    taint_vars(L, r, tv);
    const char *who = source_of(L, r);
    memset(seen, 0, (size_t)r->nvars + 1);
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *l = r->body[i];
        switch (l->kind) {
        case RF_FE_ATOM:
            for (int32_t j = 0; j < l->nargs; j++) {
                const rf_fe_expr *a = l->args[j];
                int carries = in_s(L, l->pred) && L->taint[l->pred->id][j] && !l->negated;
                if (a->kind == RF_FE_CONST && carries) {
                    rf_error(d, a->loc,
                             "`%s` is matched with a constant here: a value of the recursive %s `%s` may only be "
                             "bounded (a better value would no longer match)",
                             l->pred->name, fn_name(L->fn), who);
                    continue;
                }
                if (a->kind != RF_FE_VAR || !tv[a->var]) continue;
                if (carries && !seen[a->var]) {
                    seen[a->var] = 1;
                    continue;
                }
                rf_error(d, a->loc,
                         "`%s` %s on `%s`, a value of the recursive %s `%s`: the recursion is not monotone "
                         "(a better value would match other rows)",
                         l->pred->aux == 2 && l->pred->shown ? l->pred->shown : l->pred->name, l->negated ? "is negated" : "joins", r->vars[a->var].name, fn_name(L->fn),
                         who);
                seen[a->var] = 1;
            }
            break;
        case RF_FE_BUILTIN:
            for (int32_t j = 0; j < l->nargs; j++)
                if (reads_taint(l->args[j], tv)) {
                    rf_error(d, l->loc, "`%s` reads a value of the recursive %s `%s`: the recursion is not monotone",
                             rf_fe_builtin_info(l->fn)->name, fn_name(L->fn), who);
                    break;
                }
            break;
        case RF_FE_ASSIGN:
            if (!monotone(l->rhs, tv)) {
                rf_buf b;
                rf_buf_init(&b);
                rf_buf_printf(&b, "%s = ", r->vars[l->var].name);
                expr_text(r, l->rhs, &b);
                rf_error(d, l->loc,
                         "`%s` is not monotone in a value of the recursive %s `%s` (a better value could give a "
                         "worse result): only +, - of another value, int:min, int:max and conversions may combine it",
                         rf_buf_cstr(&b), fn_name(L->fn), who);
                rf_buf_free(&b);
            }
            break;
        case RF_FE_CMP: check_cmp(L, r, l, tv, who); break;
        case RF_FE_OR:
            for (int32_t a = 0; a < l->nalts; a++)
                for (int32_t k = 0; k < l->altn[a]; k++) check_cmp(L, r, l->alts[a][k], tv, who);
            break;
        }
    }
    const rf_fe_pred *h = r->head;
    if (!h->lattice) return;
    for (int32_t i = 0; i + 1 < h->arity; i++) {
        const rf_fe_expr *a = r->head_args[i];
        if (a->kind == RF_FE_VAR && tv[a->var])
            rf_error(d, a->loc, "`%s`, a value of the recursive %s `%s`, becomes a key of `%s`: the recursion is not monotone",
                     r->vars[a->var].name, fn_name(L->fn), who, h->name);
    }
}

static int32_t stratum_atoms(const lat *L, const rf_fe_rule *r, const rf_fe_pred *only_lattice_ok)
{
    int32_t n = 0;
    for (int32_t j = 0; j < r->nbody; j++) {
        const rf_fe_lit *l = r->body[j];
        if (l->kind != RF_FE_ATOM || l->negated || !in_s(L, l->pred)) continue;
        if (only_lattice_ok && !l->pred->lattice) return -1;
        n++;
    }
    return n;
}

/* A carrier (a predicate of the cycle with value columns, which only the
** cycle reads) whose rules read only lattice predicates of the cycle, and
** whose readers read no other predicate of the cycle, need not remember
** earlier rounds: each of its rows comes from an improvement, and the
** aggregates reading it see each row in the round it is derived. */
static void mark_transient(const lat *L, rf_fe_stratum *st)
{
    for (int32_t i = 0; i < st->npreds; i++) {
        rf_fe_pred *q = st->preds[i];
        int carrier = 0;
        for (int32_t j = 0; j < q->arity && !q->lattice; j++) carrier |= L->taint[q->id][j];
        /* a functional carrier keeps every round's rows: its dependency is
        ** checked over all the values its rules derive, as for any
        ** functional predicate, and not only over one round's */
        if (!carrier || q->output_name || q->functional) continue;
        int ok = 1;
        for (int32_t k = 0; k < q->nrules && ok; k++) ok = stratum_atoms(L, q->rules[k], q) >= 0;
        for (int32_t a = 0; a < st->npreds && ok; a++)
            for (int32_t k = 0; k < st->preds[a]->nrules && ok; k++) {
                const rf_fe_rule *r = st->preds[a]->rules[k];
                int reads = 0;
                for (int32_t j = 0; j < r->nbody; j++)
                    reads |= r->body[j]->kind == RF_FE_ATOM && r->body[j]->pred == q;
                if (reads && stratum_atoms(L, r, NULL) != 1) ok = 0;
            }
        q->lattice_transient = ok;
    }
}

void rf_chk_lattice(rf_checker *c, rf_fe_program *prog, int32_t s)
{
    rf_fe_stratum *st = &prog->strata[s];
    lat L = {c, prog, s, RF_AGG_MIN, NULL};
    int64_t errors = c->d->nerrors;
    const rf_fe_pred *first = NULL;
    /* 1. the lattice predicates: those with aggregate rules */
    for (int32_t i = 0; i < st->npreds; i++) {
        rf_fe_pred *q = st->preds[i];
        for (int32_t k = 0; k < q->nrules; k++) {
            const rf_fe_rule *r = q->rules[k];
            if (!r->naggs) continue;
            const char *why = rf_chk_lattice_rule_why(r);
            if (why) {
                rf_error(c->d, r->loc, "`%s` is a recursive aggregate: %s", q->name, why);
                continue;
            }
            rf_agg_fn fn = r->aggs[0].fn;
            if (first && fn != L.fn) {
                if (first == q)
                    rf_error(c->d, r->aggs[0].loc,
                             "`%s` takes both a min and a max in its recursion: a value cannot improve in both directions",
                             q->name);
                else
                    rf_error(c->d, r->aggs[0].loc,
                             "`%s` takes the %s and `%s` the %s in one recursion: a value cannot improve in both directions",
                             first->name, fn_name(L.fn), q->name, fn_name(fn));
                continue;
            }
            if (!first) {
                first = q;
                L.fn = fn;
            }
            q->lattice = 1;
            q->lattice_fn = fn;
        }
    }
    if (c->d->nerrors > errors || !first) return;
    /* 2. the columns that carry values: the lattice values, and what the
    ** other rules of the cycle copy them into */
    int32_t n = prog->npreds, maxv = 1;
    L.taint = rf_calloc((size_t)n + 1, sizeof *L.taint);
    if (!L.taint) goto oom;
    for (int32_t i = 0; i < st->npreds; i++) {
        rf_fe_pred *q = st->preds[i];
        if (!(L.taint[q->id] = rf_calloc((size_t)q->arity + 1, 1))) goto oom;
        if (q->lattice) L.taint[q->id][q->arity - 1] = 1;
        for (int32_t k = 0; k < q->nrules; k++)
            if (q->rules[k]->nvars > maxv) maxv = q->rules[k]->nvars;
    }
    uint8_t *tv = rf_calloc((size_t)maxv + 1, 1), *seen = rf_calloc((size_t)maxv + 1, 1);
    if (!tv || !seen) {
        free(tv);
        free(seen);
        goto oom;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t i = 0; i < st->npreds; i++) {
            rf_fe_pred *q = st->preds[i];
            if (q->lattice) continue;
            for (int32_t k = 0; k < q->nrules; k++) {
                const rf_fe_rule *r = q->rules[k];
                taint_vars(&L, r, tv);
                for (int32_t j = 0; j < q->arity; j++) {
                    const rf_fe_expr *a = r->head_args[j];
                    if (a->kind == RF_FE_VAR && tv[a->var] && !L.taint[q->id][j]) {
                        L.taint[q->id][j] = 1;
                        changed = 1;
                    }
                }
            }
        }
    }
    /* 3. every rule of the cycle */
    for (int32_t i = 0; i < st->npreds; i++)
        for (int32_t k = 0; k < st->preds[i]->nrules; k++) check_rule(&L, st->preds[i]->rules[k], tv, seen);
    free(tv);
    free(seen);
    /* 4. carriers are read only inside the cycle */
    for (int32_t i = 0; i < st->npreds; i++) {
        rf_fe_pred *q = st->preds[i];
        int carrier = 0;
        for (int32_t j = 0; j < q->arity && !q->lattice; j++) carrier |= L.taint[q->id][j];
        if (!carrier) continue;
        if (q->output_name)
            rf_error(c->d, q->loc,
                     "`%s` carries values of the recursive %s `%s` from the rounds in between: it cannot be an output "
                     "(output `%s` instead)",
                     q->name, fn_name(L.fn), first->name, first->name);
        for (int32_t k = 0; k < prog->nrules; k++) {
            const rf_fe_rule *r = prog->rules[k];
            if (in_s(&L, r->head)) continue;
            for (int32_t j = 0; j < r->nbody; j++)
                if (r->body[j]->kind == RF_FE_ATOM && r->body[j]->pred == q)
                    rf_error(c->d, r->body[j]->loc,
                             "`%s` carries values of the recursive %s `%s` from the rounds in between: only its cycle "
                             "may read it (read `%s` instead)",
                             q->name, fn_name(L.fn), first->name, first->name);
        }
    }
    if (c->d->nerrors == errors) {
        st->lattice = 1;
        mark_transient(&L, st);
    }
    goto done;
oom:
    c->oom = 1;
done:
    if (L.taint)
        for (int32_t i = 0; i < st->npreds; i++) free(L.taint[st->preds[i]->id]);
    free(L.taint);
}
