/*
** txn/txn_gen_diff.c: the diff program of `redfox exec`: derived predicates
** with aggregates, negation or functional heads maintained in proportion to
** the batch, not recomputed from the whole history.
**
** Owns: which programs can be maintained by diffs, and the text of their
** diff program. Each derived P that the batch may change gets, from the
** state before the batch (`redfox_txn_old:Q`), a changed base predicate's
** rows after it, added and removed (`redfox_txn_new:B`, `_ins:B`, `_del:B`)
** and what it computes for the changed derived predicates it reads:
**
**   redfox_txn_k:P     the keys whose rows may change (a functional P's keys,
**                      else the whole row): the keys reached from a changed
**                      row of any literal of P's rules (positive, negated,
**                      inside an aggregate), a superset of those that change;
**   redfox_txn_part:P  P's rows after the batch for those keys: a total or
**                      count as the old value plus the aggregate of the
**                      bindings the batch adds, minus that of those it
**                      removes (new bindings: the first changed atom of
**                      the body in the added rows, the atoms before it in
**                      the rows kept, those after it in the new state);
**                      every other rule evaluated over the new state with
**                      its head restricted to the keys (min and max: only
**                      the touched groups recomputed).
**
** Both are the run's outputs; P's new state (its old rows of the other
** keys, then part) is put together on the host (txn_merge.c). Readers of a
** changed derived Q take its added rows as part:Q and its removed ones as
** its old rows of k:Q (unchanged rows are both, and cancel in a sum), and
** its new state in two disjoint parts, one rule each: part:Q, or its old
** rows of the keys not reached (redfox_txn_new:Q is built whole only under
** an aggregate, whose body cannot be split).
**
** Every predicate is non-recursive here (recursion goes to the delta rules
** of txn_gen.c, or a recomputation), so one stratified program holds all.
*/
#include "rf_txn.h"

#include <stdlib.h>
#include <string.h>

#define NS_OLD RF_TXN_NS "_old"
#define NS_NEW RF_TXN_NS "_new"
#define NS_INS RF_TXN_NS "_ins"
#define NS_DEL RF_TXN_NS "_del"

static int derived(const rf_fe_pred *p) { return !p->input_file && p->nrules > 0; }

/* Float sums and means round by the order of their rows: maintained, they
** would differ from a recomputation in the last bits. */
static int exact_agg(const rf_fe_rule *r)
{
    const rf_fe_agg *a = &r->aggs[0];
    if (a->fn != RF_AGG_TOTAL && a->fn != RF_AGG_AVG) return 1;
    return r->vars[a->arg_var].type != RF_TYPE_FLOAT;
}

const char *rf_txn_gen_diff_why_not(const rf_fe_program *p)
{
    for (int32_t i = 0; i < p->npreds; i++) {
        const rf_fe_pred *q = p->preds[i];
        if (!derived(q)) continue;
        if (q->aux) return "the program negates a conjunction or shares a rule body (a predicate the compiler made)";
        if (q->lattice) return "the program has a recursive min or max";
        /* (what keeps the delta rules from the recursion is the reason: it
        ** was "beside negation or aggregation" for a shared rule body too) */
        if (q->recursive) {
            const char *why = rf_txn_gen_recursion_why_not(p);
            return why ? why : "a recursive predicate (the diffs keep no recursion; the delta rules do)";
        }
        if (q->arity == 0) return "a derived predicate has no columns";
        for (int32_t ri = 0; ri < q->nrules; ri++) {
            const rf_fe_rule *r = q->rules[ri];
            for (int32_t l = 0; l < r->nbody; l++) {
                rf_fe_lit_kind k = r->body[l]->kind;
                if (k != RF_FE_ATOM && k != RF_FE_CMP && k != RF_FE_ASSIGN) return "a rule uses a built-in predicate or a disjunction";
            }
            if (!r->naggs) continue;
            const rf_fe_expr *out = r->head_args[q->arity - 1];
            if (!q->functional || r->naggs != 1 || q->nrules != 1 || out->kind != RF_FE_VAR || out->var != r->aggs[0].out_var)
                return "an aggregate into a non-functional head, with several outputs, or beside other rules";
            if (!exact_agg(r)) return "a float total or avg (its rounding depends on the order of the rows)";
        }
        for (int32_t ri = 0; ri < q->nrules; ri++) {
            const rf_fe_rule *r = q->rules[ri];
            for (int32_t l = 0; l < r->nbody; l++) {
                const rf_fe_lit *x = r->body[l];
                if (x->kind != RF_FE_ATOM || !x->negated || !derived(x->pred)) continue;
                /* (the diffs read a derived predicate's state before the
                ** batch as an input, stored at 64 bits: a negation cannot
                ** look a wide value up there, frontend/types.c) */
                for (int32_t j = 0; j < x->nargs; j++)
                    if (x->args[j]->kind == RF_FE_VAR && r->vars[x->args[j]->var].type == RF_TYPE_DEC128)
                        return "a rule negates a derived predicate at a total of decimals (exact beyond 64 bits), "
                               "which the diffs cannot look up in its stored 64-bit state";
            }
        }
    }
    return NULL;
}

/* ---- the generator's state ---------------------------------------------- */

enum { S_SKIP, S_OLD, S_NEW, S_MID, S_INS, S_DEL };
enum { NEED_OLD = 1, NEED_NEW = 2, NEED_INS = 4, NEED_DEL = 8 };

typedef struct gen {
    rf_txn *t;
    uint8_t *changed; /* by pred id: a base predicate the batch changed, a derived one it may change */
    uint8_t *need;    /* by pred id: the inputs the program reads (NEED_*) */
    rf_buf *b;        /* the rules */
    int split;        /* body(): the new state of changed derived predicates in parts (finish_rule) */
    uint32_t variant; /* ... which part each one reads, a bit each */
    int nsplit;       /* ... the ones printed so far */
} gen;

static const rf_txn_pred *pred_of(gen *g, const rf_fe_pred *q) { return rf_txn_find(g->t, q); }

static int is_base(gen *g, const rf_fe_pred *q)
{
    const rf_txn_pred *p = pred_of(g, q);
    return p && p->base;
}

/* Whether q has added (ins) or removed (!ins) rows to read. */
static int has_change(gen *g, const rf_fe_pred *q, int ins)
{
    const rf_txn_pred *p = pred_of(g, q);
    if (!p || !g->changed[q->id]) return 0;
    if (!p->base) return 1;
    if (g->t->ahead_base) return ins;
    return ins ? p->ins.nrows > 0 : p->del.nrows > 0;
}

/* The namespace of q's atom in state s (S_MID prints its old one), the
** inputs it needs noted. */
static const char *ns_of(gen *g, const rf_fe_pred *q, int s)
{
    int ch = g->changed[q->id];
    const char *ns = NS_OLD;
    uint8_t need = NEED_OLD;
    if (s == S_INS) ns = NS_INS, need = NEED_INS;
    else if (s == S_DEL) ns = NS_DEL, need = NEED_DEL;
    else if (s == S_NEW && ch) ns = NS_NEW, need = NEED_NEW;
    g->need[q->id] |= need;
    if (s == S_MID && has_change(g, q, 0)) g->need[q->id] |= NEED_DEL;
    return ns;
}

static void var(const rf_fe_rule *r, int32_t v, int name_wild, rf_buf *b)
{
    if (r->vars[v].wildcard && !name_wild) rf_buf_putc(b, '_');
    else rf_buf_printf(b, "V%d", (int)v);
}

static void atom_args(const rf_fe_rule *r, const rf_fe_lit *x, int name_wild, rf_buf *b)
{
    rf_buf_putc(b, '(');
    for (int32_t i = 0; i < x->nargs; i++) {
        if (i) rf_buf_puts(b, ", ");
        if (x->args[i]->kind == RF_FE_VAR) var(r, x->args[i]->var, name_wild, b);
        else rf_txn_gen_expr(r, x->args[i], b);
    }
    rf_buf_putc(b, ')');
}

/* The key arguments of literal x over q: `(a0, ...)`, or `(0)` for none. */
static void key_args(const rf_fe_rule *r, const rf_fe_lit *x, rf_buf *b)
{
    const rf_fe_pred *q = x->pred;
    int32_t qkey = q->functional ? q->arity - 1 : q->arity;
    rf_buf_putc(b, '(');
    for (int32_t i = 0; i < qkey; i++) {
        if (i) rf_buf_puts(b, ", ");
        if (x->args[i]->kind == RF_FE_VAR) var(r, x->args[i]->var, 1, b);
        else rf_txn_gen_expr(r, x->args[i], b);
    }
    if (!qkey) rf_buf_putc(b, '0');
    rf_buf_putc(b, ')');
}

/* A changed derived q's rows in state s, by its keys: added (S_INS) its
** new rows of the keys the batch reaches (redfox_txn_part:q), removed
** (S_DEL) its old rows of those keys, kept (S_MID) its old rows of the
** others. Rows that did not change are then both added and removed, which
** a sum of the added minus the removed cancels, and a superset of the keys
** reached is as correct; the exact changes would cost anti-joins over
** whole rows. */
static void changed_rows(gen *g, const rf_fe_rule *r, const rf_fe_lit *x, int s, int name_wild)
{
    rf_buf *b = g->b;
    const rf_fe_pred *q = x->pred;
    if (s == S_INS) {
        rf_txn_gen_pred_name(RF_TXN_NS "_part", q, b);
        atom_args(r, x, name_wild, b);
        return;
    }
    if (s == S_DEL) {
        rf_txn_gen_pred_name(RF_TXN_NS "_k", q, b);
        key_args(r, x, b);
        rf_buf_puts(b, ", ");
    }
    rf_txn_gen_pred_name(ns_of(g, q, S_OLD), q, b);
    atom_args(r, x, 1, b);
    if (s == S_MID) {
        rf_buf_puts(b, ", !");
        rf_txn_gen_pred_name(RF_TXN_NS "_k", q, b);
        key_args(r, x, b);
    }
}

/* Whether literal x in state s reads a changed derived predicate's new
** state that can be read in parts: positive, or negated with its keys
** bound (then "no row" is decided per key). */
static int splittable(gen *g, const rf_fe_rule *r, const rf_fe_lit *x, int s)
{
    if (s != S_NEW || x->kind != RF_FE_ATOM || is_base(g, x->pred) || !g->changed[x->pred->id]) return 0;
    if (!x->negated) return 1;
    int32_t qkey = x->pred->functional ? x->pred->arity - 1 : x->pred->arity;
    for (int32_t i = 0; i < qkey; i++)
        if (x->args[i]->kind == RF_FE_VAR && r->vars[x->args[i]->var].wildcard) return 0;
    return 1;
}

/* Part `part` of literal x over a changed derived q's new state: 0 its
** rows recomputed for the keys reached, 1 its old rows of the other keys
** (negated: no row there, per key). name_wild: as body()'s (a positive
** atom's wildcards named where the head takes every variable: a
** solution's). */
static void new_part(gen *g, const rf_fe_rule *r, const rf_fe_lit *x, int part, int name_wild)
{
    rf_buf *b = g->b;
    const rf_fe_pred *q = x->pred;
    if (!x->negated) {
        if (!part) {
            rf_txn_gen_pred_name(RF_TXN_NS "_part", q, b);
            atom_args(r, x, name_wild, b);
            return;
        }
        rf_txn_gen_pred_name(ns_of(g, q, S_OLD), q, b);
        atom_args(r, x, 1, b);
        rf_buf_puts(b, ", !");
        rf_txn_gen_pred_name(RF_TXN_NS "_k", q, b);
        key_args(r, x, b);
        return;
    }
    if (part) rf_buf_putc(b, '!');
    rf_txn_gen_pred_name(RF_TXN_NS "_k", q, b);
    key_args(r, x, b);
    rf_buf_puts(b, ", !");
    rf_txn_gen_pred_name(part ? ns_of(g, q, S_OLD) : RF_TXN_NS "_part", q, b);
    atom_args(r, x, 0, b);
}

/* The literals of r in the states st[l] (S_SKIP: left out), joined by ", ";
** *first: nothing printed yet. An atom in S_INS or S_DEL reads those rows
** (positively, whatever its sign); in S_MID the rows kept (old, not deleted). */
static void body(gen *g, const rf_fe_rule *r, const uint8_t *st, int name_wild, int *first)
{
    rf_buf *b = g->b;
    for (int32_t l = 0; l < r->nbody; l++) {
        const rf_fe_lit *x = r->body[l];
        if (st[l] == S_SKIP) continue;
        if (!*first) rf_buf_puts(b, ", ");
        *first = 0;
        if (x->kind == RF_FE_CMP) {
            rf_txn_gen_expr(r, x->lhs, b);
            rf_buf_printf(b, " %s ", rf_cmp_op_name(x->op));
            rf_txn_gen_expr(r, x->rhs, b);
            continue;
        }
        if (x->kind == RF_FE_ASSIGN) {
            var(r, x->var, name_wild, b);
            rf_buf_puts(b, " = ");
            rf_txn_gen_expr(r, x->rhs, b);
            continue;
        }
        if (g->split && splittable(g, r, x, st[l])) {
            new_part(g, r, x, (int)(g->variant >> g->nsplit++ & 1), name_wild);
            continue;
        }
        if (!is_base(g, x->pred) && g->changed[x->pred->id] && (st[l] == S_INS || st[l] == S_DEL || st[l] == S_MID)) {
            changed_rows(g, r, x, st[l], name_wild);
            continue;
        }
        int neg = x->negated && st[l] != S_INS && st[l] != S_DEL;
        if (neg) rf_buf_putc(b, '!');
        rf_txn_gen_pred_name(ns_of(g, x->pred, st[l]), x->pred, b);
        atom_args(r, x, name_wild || st[l] == S_MID, b);
        if (st[l] == S_MID && has_change(g, x->pred, 0)) {
            rf_buf_puts(b, ", !");
            rf_txn_gen_pred_name(NS_DEL, x->pred, b);
            atom_args(r, x, 1, b);
        }
    }
}

/* Ends the rule whose text from byte start of g->b on is its head (and
** what precedes the body): r's body in the states st. With split, once for
** each choice of the parts of the changed derived predicates it reads in
** the new state (their rows recomputed, or their old rows of the keys not
** reached: the parts are disjoint, so the rules' union is the rule), which
** spares the run the whole new state; else reading that whole state. */
static void finish_rule(gen *g, size_t start, const rf_fe_rule *r, const uint8_t *st, int name_wild, int first, int split)
{
    rf_buf *b = g->b;
    int m = 0;
    for (int32_t l = 0; split && l < r->nbody; l++) m += splittable(g, r, r->body[l], st[l]);
    if (m > 4) m = 0;
    size_t plen = b->len - start;
    char *prefix = m ? rf_malloc(plen + 1) : NULL;
    if (m && !prefix) {
        b->oom = 1;
        return;
    }
    if (m) memcpy(prefix, (const char *)b->data + start, plen);
    for (uint32_t v = 0; v < (1u << m); v++) {
        if (v) rf_buf_append(b, prefix, (int64_t)plen);
        g->split = m > 0;
        g->variant = v;
        g->nsplit = 0;
        int f = first;
        body(g, r, st, name_wild, &f);
        rf_buf_puts(b, ".\n");
    }
    g->split = 0;
    free(prefix);
}

/* The head's key of rule r: its first nkey arguments (none: the constant 0). */
static void head_key(const rf_fe_rule *r, int32_t nkey, rf_buf *b)
{
    rf_buf_putc(b, '(');
    for (int32_t c = 0; c < nkey; c++) {
        if (c) rf_buf_puts(b, ", ");
        rf_txn_gen_expr(r, r->head_args[c], b);
    }
    if (!nkey) rf_buf_putc(b, '0');
    rf_buf_putc(b, ')');
}

/* Generic columns A0..: `(A0, A1, A2)`; from column c0 to c1. */
static void cols(int32_t c0, int32_t c1, const char *prefix, rf_buf *b)
{
    for (int32_t c = c0; c < c1; c++) rf_buf_printf(b, "%s%s%d", c > c0 ? ", " : "", prefix, (int)c);
}

static void key_atom(const char *ns, const rf_fe_pred *p, int32_t nkey, rf_buf *b)
{
    rf_txn_gen_pred_name(ns, p, b);
    rf_buf_putc(b, '(');
    cols(0, nkey, "A", b);
    if (!nkey) rf_buf_putc(b, '0');
    rf_buf_putc(b, ')');
}

/* ns's atom of p by its keys and value: NS(A0, .., value), value a variable or _ */
static void value_atom(const char *ns, const rf_fe_pred *p, int32_t nkey, const char *value, rf_buf *b)
{
    rf_txn_gen_pred_name(ns, p, b);
    rf_buf_putc(b, '(');
    cols(0, nkey, "A", b);
    rf_buf_printf(b, "%s%s)", nkey ? ", " : "", value);
}

static void row_atom(const char *ns, const rf_fe_pred *p, rf_buf *b)
{
    rf_txn_gen_pred_name(ns, p, b);
    rf_buf_putc(b, '(');
    cols(0, p->arity, "A", b);
    rf_buf_putc(b, ')');
}

/* `NS:P(c0, ...) -> ...` with the given column types. */
static void declare_types(const char *ns, const rf_fe_pred *p, const rf_type *types, int32_t n, rf_buf *b)
{
    rf_txn_gen_pred_name(ns, p, b);
    rf_buf_putc(b, '(');
    cols(0, n, "c", b);
    rf_buf_puts(b, ") -> ");
    for (int32_t c = 0; c < n; c++) rf_buf_printf(b, "%s%s(c%d)", c ? ", " : "", rf_fe_type_name(types[c]), (int)c);
    rf_buf_puts(b, ".\n");
}

/* ---- the keys a change reaches ----------------------------------------------- */

/* Appends the rule text one to the rules unless seen (P's key rules so
** far, each after a newline) holds it already. */
static void emit_once(gen *g, rf_buf *one, rf_buf *seen)
{
    if (one->oom || seen->oom) {
        g->b->oom = 1;
        return;
    }
    if (!seen->len) rf_buf_putc(seen, '\n');
    rf_buf line;
    rf_buf_init(&line);
    rf_buf_putc(&line, '\n');
    rf_buf_append(&line, one->data, one->len);
    if (line.oom) g->b->oom = 1;
    else if (!strstr(rf_buf_cstr(seen), rf_buf_cstr(&line))) {
        rf_buf_append(g->b, one->data, one->len);
        rf_buf_append(seen, one->data, one->len);
    }
    rf_buf_free(&line);
}

/* Whether every variable of r's head key is one of the first n arguments
** of literal x. */
static int key_in(const rf_fe_rule *r, int32_t nkey, const rf_fe_lit *x, int32_t n)
{
    for (int32_t c = 0; c < nkey; c++) {
        const rf_fe_expr *h = r->head_args[c];
        if (h->kind != RF_FE_VAR) continue;
        int found = 0;
        for (int32_t i = 0; i < n && !found; i++) found = x->args[i]->kind == RF_FE_VAR && x->args[i]->var == h->var;
        if (!found) return 0;
    }
    return 1;
}

/* `redfox_txn_k:P(key) <- ...` for each changed literal of r: its added
** and removed rows, with the rest of the body in the state where that row
** is (added rows and a negation's removed ones: the new state), or alone
** where it binds the whole key (a superset of the keys is as correct). */
static void key_rules(gen *g, const rf_fe_pred *p, const rf_fe_rule *r, int32_t nkey, uint8_t *st, rf_buf *seen)
{
    rf_buf *b = g->b;
    for (int32_t l = 0; l < r->nbody; l++) {
        const rf_fe_lit *x = r->body[l];
        if (x->kind != RF_FE_ATOM || !g->changed[x->pred->id]) continue;
        const rf_fe_pred *q = x->pred;
        int32_t qkey = q->functional ? q->arity - 1 : q->arity;
        if (!is_base(g, q) && key_in(r, nkey, x, qkey)) {
            /* every changed row of q has a key of redfox_txn_k:q: the keys
            ** of P it reaches, without q's exact changes */
            rf_buf one;
            rf_buf_init(&one);
            rf_txn_gen_pred_name(RF_TXN_NS "_k", p, &one);
            head_key(r, nkey, &one);
            rf_buf_puts(&one, " <- ");
            rf_txn_gen_pred_name(RF_TXN_NS "_k", q, &one);
            rf_buf_putc(&one, '(');
            for (int32_t i = 0; i < qkey; i++) {
                if (i) rf_buf_puts(&one, ", ");
                if (x->args[i]->kind == RF_FE_VAR) var(r, x->args[i]->var, 0, &one);
                else rf_txn_gen_expr(r, x->args[i], &one);
            }
            rf_buf_puts(&one, qkey ? ").\n" : "0).\n");
            emit_once(g, &one, seen);
            rf_buf_free(&one);
            continue;
        }
        int alone = key_in(r, nkey, x, x->nargs);
        for (int ins = 1; ins >= 0; ins--) {
            if (!has_change(g, x->pred, ins)) continue;
            /* a positive literal's added row is true in the new state; a
            ** negated literal's removed row makes it true there */
            int rest = alone ? S_SKIP : (ins != x->negated) ? S_NEW : S_OLD;
            for (int32_t k = 0; k < r->nbody; k++) st[k] = (uint8_t)rest;
            st[l] = ins ? S_INS : S_DEL;
            rf_buf one;
            rf_buf_init(&one);
            g->b = &one;
            rf_txn_gen_pred_name(RF_TXN_NS "_k", p, &one);
            head_key(r, nkey, &one);
            rf_buf_puts(&one, " <- ");
            finish_rule(g, 0, r, st, 0, 1, 1);
            g->b = b;
            emit_once(g, &one, seen);
            rf_buf_free(&one);
        }
    }
}

/* ---- totals and counts from the old value ----------------------------------- */

static const char *agg_name(rf_agg_fn f)
{
    switch (f) {
    case RF_AGG_TOTAL: return "total";
    case RF_AGG_COUNT: return "count";
    case RF_AGG_MIN: return "min";
    case RF_AGG_MAX: return "max";
    case RF_AGG_AVG: return "avg";
    }
    return "?";
}

static void agg_head(const rf_fe_rule *r, rf_buf *b)
{
    const rf_fe_agg *a = &r->aggs[0];
    rf_buf_printf(b, "agg<<V%d = %s(", (int)a->out_var, agg_name(a->fn));
    if (a->arg_var >= 0) rf_buf_printf(b, "V%d", (int)a->arg_var);
    rf_buf_puts(b, ")>> ");
}

/* A total or count kept by adding: no negation in its body. */
static int additive(const rf_fe_rule *r)
{
    if (r->naggs != 1 || (r->aggs[0].fn != RF_AGG_TOTAL && r->aggs[0].fn != RF_AGG_COUNT)) return 0;
    for (int32_t l = 0; l < r->nbody; l++)
        if (r->body[l]->kind == RF_FE_ATOM && r->body[l]->negated) return 0;
    return 1;
}

/* The variables of r's solutions (those of its atoms, and assigned ones), marked. */
static int32_t solution_vars(const rf_fe_rule *r, uint8_t *mark)
{
    int32_t n = 0;
    memset(mark, 0, (size_t)r->nvars);
    for (int32_t l = 0; l < r->nbody; l++) {
        const rf_fe_lit *x = r->body[l];
        if (x->kind == RF_FE_ASSIGN && !mark[x->var]) mark[x->var] = 1, n++;
        if (x->kind != RF_FE_ATOM) continue;
        for (int32_t i = 0; i < x->nargs; i++)
            if (x->args[i]->kind == RF_FE_VAR && !mark[x->args[i]->var]) mark[x->args[i]->var] = 1, n++;
    }
    return n;
}

static void solution_atom(const char *ns, const rf_fe_pred *p, const rf_fe_rule *r, const uint8_t *mark, rf_buf *b)
{
    rf_txn_gen_pred_name(ns, p, b);
    rf_buf_putc(b, '(');
    int first = 1;
    for (int32_t v = 0; v < r->nvars; v++)
        if (mark[v]) {
            rf_buf_printf(b, "%sV%d", first ? "" : ", ", (int)v);
            first = 0;
        }
    rf_buf_putc(b, ')');
}

/* The head of an aggregate's rule into name: name(the head's arguments) <- agg<<...>> */
static void agg_rule_head(const char *name, const rf_fe_pred *p, const rf_fe_rule *r, rf_buf *b)
{
    rf_txn_gen_pred_name(name, p, b);
    rf_buf_putc(b, '(');
    for (int32_t c = 0; c < p->arity; c++) {
        if (c) rf_buf_puts(b, ", ");
        rf_txn_gen_expr(r, r->head_args[c], b);
    }
    rf_buf_puts(b, ") <- ");
    agg_head(r, b);
}

/* The solutions the batch adds (ins) or removes: for each changed atom i,
** those with atom i's row added (removed), the changed atoms before it in
** rows kept and those after it in the new (old) state: each solution once.
** Returns 0: none; 1: rules of redfox_txn_si:P (sd); 2: one way only,
** aggregated at once into redfox_txn_ai:P (ad), without the solutions'
** relation (and its duplicate elimination: a batch's rows are distinct). */
static int solution_rules(gen *g, const rf_fe_pred *p, const rf_fe_rule *r, const uint8_t *mark, int ins, uint8_t *st)
{
    rf_buf *b = g->b;
    const char *ns = ins ? RF_TXN_NS "_si" : RF_TXN_NS "_sd";
    int ways = 0;
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *x = r->body[i];
        ways += x->kind == RF_FE_ATOM && g->changed[x->pred->id] && has_change(g, x->pred, ins);
    }
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *x = r->body[i];
        if (x->kind != RF_FE_ATOM || !g->changed[x->pred->id]) continue;
        if (!has_change(g, x->pred, ins)) continue;
        for (int32_t l = 0; l < r->nbody; l++) {
            const rf_fe_lit *y = r->body[l];
            int ch = y->kind == RF_FE_ATOM && g->changed[y->pred->id];
            st[l] = !ch ? S_OLD : l < i ? S_MID : l == i ? (ins ? S_INS : S_DEL) : ins ? S_NEW : S_OLD;
        }
        size_t start = b->len;
        if (ways == 1) {
            agg_rule_head(ins ? RF_TXN_NS "_ai" : RF_TXN_NS "_ad", p, r, b);
        } else {
            solution_atom(ns, p, r, mark, b);
            rf_buf_puts(b, " <- ");
        }
        finish_rule(g, start, r, st, ways > 1, 1, ways > 1);
    }
    return ways == 1 ? 2 : ways > 1;
}

/* P[key] = old + aggregate(added solutions) - aggregate(removed ones),
** for the groups with either; a count reaching 0 and a total whose removed
** solutions were its last leave no row. */
static void additive_rules(gen *g, const rf_fe_pred *p, const rf_fe_rule *r, uint8_t *st)
{
    rf_buf *b = g->b;
    int32_t nkey = p->arity - 1;
    uint8_t *mark = rf_calloc((size_t)r->nvars + 1, 1);
    rf_type *types = rf_calloc((size_t)r->nvars + 2, sizeof *types);
    if (!mark || !types) {
        b->oom = 1;
        free(mark);
        free(types);
        return;
    }
    int32_t n = solution_vars(r, mark);
    for (int32_t v = 0, k = 0; v < r->nvars; v++)
        if (mark[v]) types[k++] = r->vars[v].type;
    int has[2];
    for (int ins = 1; ins >= 0; ins--) {
        const char *sol = ins ? RF_TXN_NS "_si" : RF_TXN_NS "_sd";
        const char *sum = ins ? RF_TXN_NS "_ai" : RF_TXN_NS "_ad";
        has[ins] = solution_rules(g, p, r, mark, ins, st);
        if (!has[ins]) continue;
        rf_txn_gen_declare(sum, p, b);
        if (has[ins] == 1) {
            /* the aggregate of the added (removed) solutions, per group */
            declare_types(sol, p, types, n, b);
            agg_rule_head(sum, p, r, b);
            solution_atom(sol, p, r, mark, b);
            rf_buf_puts(b, ".\n");
        }
        key_atom(RF_TXN_NS "_k", p, nkey, b);
        rf_buf_puts(b, " <- ");
        value_atom(sum, p, nkey, "_", b);
        rf_buf_puts(b, ".\n");
    }
    if (!has[0]) {
        /* nothing removed: a touched group's old value plus the added
        ** solutions' aggregate, or that alone for a new group */
        value_atom(RF_TXN_NS "_part", p, nkey, "S", b);
        rf_buf_puts(b, " <- ");
        value_atom(RF_TXN_NS "_ai", p, nkey, "X", b);
        rf_buf_puts(b, ", ");
        value_atom(ns_of(g, p, S_OLD), p, nkey, "O", b);
        rf_buf_puts(b, ", S = O + X.\n");
        value_atom(RF_TXN_NS "_part", p, nkey, "X", b);
        rf_buf_puts(b, " <- ");
        value_atom(RF_TXN_NS "_ai", p, nkey, "X", b);
        rf_buf_puts(b, ", !");
        value_atom(NS_OLD, p, nkey, "_", b);
        rf_buf_puts(b, ".\n");
        free(mark);
        free(types);
        return;
    }
    /* the parts of each touched group's new value: the old one (tag 0),
    ** the added (1), the removed negated (2) */
    rf_type ct[RF_DB_MAX_COLS + 2];
    for (int32_t c = 0; c < nkey && c < RF_DB_MAX_COLS; c++) ct[c] = p->types[c];
    ct[nkey] = RF_TYPE_INT;
    ct[nkey + 1] = p->types[nkey];
    declare_types(RF_TXN_NS "_c", p, ct, nkey + 2, b);
    rf_txn_gen_declare(RF_TXN_NS "_sum", p, b);
    const char *vcol = nkey ? ", " : "";
    rf_txn_gen_pred_name(RF_TXN_NS "_c", p, b);
    rf_buf_putc(b, '(');
    cols(0, nkey, "A", b);
    rf_buf_printf(b, "%s0, A%d) <- ", vcol, (int)nkey);
    key_atom(RF_TXN_NS "_k", p, nkey, b);
    rf_buf_puts(b, ", ");
    rf_txn_gen_pred_name(ns_of(g, p, S_OLD), p, b);
    rf_buf_putc(b, '(');
    cols(0, p->arity, "A", b);
    rf_buf_puts(b, ").\n");
    for (int ins = 1; ins >= 0; ins--) {
        if (!has[ins]) continue;
        rf_txn_gen_pred_name(RF_TXN_NS "_c", p, b);
        rf_buf_putc(b, '(');
        cols(0, nkey, "A", b);
        rf_buf_printf(b, "%s%d, %s) <- ", vcol, ins ? 1 : 2, ins ? "S" : "N");
        rf_txn_gen_pred_name(ins ? RF_TXN_NS "_ai" : RF_TXN_NS "_ad", p, b);
        rf_buf_putc(b, '(');
        cols(0, nkey, "A", b);
        rf_buf_printf(b, "%sS)%s.\n", vcol, ins ? "" : ", N = -(S)");
    }
    rf_txn_gen_pred_name(RF_TXN_NS "_sum", p, b);
    rf_buf_putc(b, '(');
    cols(0, nkey, "A", b);
    rf_buf_printf(b, "%sS) <- agg<<S = total(X)>> ", vcol);
    rf_txn_gen_pred_name(RF_TXN_NS "_c", p, b);
    rf_buf_putc(b, '(');
    cols(0, nkey, "A", b);
    rf_buf_printf(b, "%s_, X).\n", vcol);
    /* which touched groups still have a solution */
    if (r->aggs[0].fn == RF_AGG_COUNT) {
        row_atom(RF_TXN_NS "_part", p, b);
        rf_buf_puts(b, " <- ");
        row_atom(RF_TXN_NS "_sum", p, b);
        rf_buf_printf(b, ", A%d > 0.\n", (int)nkey);
    } else {
        if (has[1]) {
            row_atom(RF_TXN_NS "_part", p, b);
            rf_buf_puts(b, " <- ");
            row_atom(RF_TXN_NS "_sum", p, b);
            rf_buf_puts(b, ", ");
            rf_txn_gen_pred_name(RF_TXN_NS "_ai", p, b);
            rf_buf_putc(b, '(');
            cols(0, nkey, "A", b);
            rf_buf_printf(b, "%s_).\n", vcol);
        }
        if (has[0]) {
            /* a group that only lost solutions: does the new state hold one? */
            rf_type kt[RF_DB_MAX_COLS + 1];
            for (int32_t c = 0; c < nkey && c < RF_DB_MAX_COLS; c++) kt[c] = p->types[c];
            kt[0] = nkey ? kt[0] : RF_TYPE_INT;
            declare_types(RF_TXN_NS "_chk", p, kt, nkey ? nkey : 1, b);
            declare_types(RF_TXN_NS "_alive", p, kt, nkey ? nkey : 1, b);
            key_atom(RF_TXN_NS "_chk", p, nkey, b);
            rf_buf_puts(b, " <- ");
            rf_txn_gen_pred_name(RF_TXN_NS "_ad", p, b);
            rf_buf_putc(b, '(');
            cols(0, nkey, "A", b);
            rf_buf_printf(b, "%s_)", vcol);
            if (has[1]) {
                rf_buf_puts(b, ", !");
                rf_txn_gen_pred_name(RF_TXN_NS "_ai", p, b);
                rf_buf_putc(b, '(');
                cols(0, nkey, "A", b);
                rf_buf_printf(b, "%s_)", vcol);
            }
            rf_buf_puts(b, ".\n");
            size_t start = b->len;
            rf_txn_gen_pred_name(RF_TXN_NS "_alive", p, b);
            head_key(r, nkey, b);
            rf_buf_puts(b, " <- ");
            rf_txn_gen_pred_name(RF_TXN_NS "_chk", p, b);
            head_key(r, nkey, b);
            for (int32_t l = 0; l < r->nbody; l++) st[l] = S_NEW;
            finish_rule(g, start, r, st, 0, 0, 1);
            row_atom(RF_TXN_NS "_part", p, b);
            rf_buf_puts(b, " <- ");
            row_atom(RF_TXN_NS "_sum", p, b);
            rf_buf_puts(b, ", ");
            key_atom(RF_TXN_NS "_alive", p, nkey, b);
            rf_buf_puts(b, ".\n");
        }
    }
    free(mark);
    free(types);
}

/* ---- one derived predicate ------------------------------------------------- */

static void pred_rules(gen *g, rf_txn_pred *tp)
{
    const rf_fe_pred *p = tp->fe;
    rf_buf *b = g->b;
    int32_t nkey = p->functional ? p->arity - 1 : p->arity;
    int32_t maxbody = 1;
    for (int32_t ri = 0; ri < p->nrules; ri++) maxbody = p->rules[ri]->nbody > maxbody ? p->rules[ri]->nbody : maxbody;
    uint8_t *st = rf_calloc((size_t)maxbody + 1, 1);
    if (!st) {
        b->oom = 1;
        return;
    }
    rf_buf_printf(b, "// %s\n", p->name);
    rf_type kt[RF_DB_MAX_COLS + 1];
    for (int32_t c = 0; c < nkey && c < RF_DB_MAX_COLS; c++) kt[c] = p->types[c];
    if (!nkey) kt[0] = RF_TYPE_INT;
    declare_types(RF_TXN_NS "_k", p, kt, nkey ? nkey : 1, b);
    rf_txn_gen_declare(RF_TXN_NS "_part", p, b);
    rf_buf seen; /* the key rules so far */
    rf_buf_init(&seen);
    tp->how = "recomputed for the keys the batch reaches";
    int single_valued = 0; /* part has one row per key: an aggregate's */
    for (int32_t ri = 0; ri < p->nrules; ri++) {
        const rf_fe_rule *r = p->rules[ri];
        rf_txn_gen_origin(g->t, r, b);
        single_valued |= r->naggs > 0;
        if (r->naggs && additive(r)) {
            additive_rules(g, p, r, st);
            tp->how = r->aggs[0].fn == RF_AGG_COUNT ? "count maintained: the old value plus the batch's solutions"
                                                     : "total maintained: the old value plus the batch's solutions";
            continue;
        }
        key_rules(g, p, r, nkey, st, &seen);
        /* (not additive: a min, max or avg, or a total or count with negation in its body) */
        if (r->naggs)
            tp->how = r->aggs[0].fn == RF_AGG_MIN || r->aggs[0].fn == RF_AGG_MAX
                          ? "min or max recomputed over the touched groups (it cannot subtract)"
                      : r->aggs[0].fn == RF_AGG_AVG ? "avg recomputed over the touched groups (an average is not kept by adding)"
                                                    : "aggregate recomputed over the touched groups (negation in its body)";
        /* the rule over the new state, its head restricted to the keys */
        size_t start = b->len;
        rf_buf_puts(b, RF_TXN_NS "_part:");
        rf_buf_puts(b, p->name);
        rf_buf_putc(b, '(');
        for (int32_t c = 0; c < p->arity; c++) {
            if (c) rf_buf_puts(b, ", ");
            rf_txn_gen_expr(r, r->head_args[c], b);
        }
        rf_buf_puts(b, ") <- ");
        if (r->naggs) agg_head(r, b);
        rf_txn_gen_pred_name(RF_TXN_NS "_k", p, b);
        head_key(r, nkey, b);
        for (int32_t l = 0; l < r->nbody; l++) st[l] = S_NEW;
        /* (an aggregate's body is not split: its parts would be aggregated apart) */
        finish_rule(g, start, r, st, 0, 0, !r->naggs);
    }
    /* the outputs: the keys reached, and the rows for them; a functional
    ** P's pass through P itself, declared functional: two values for one
    ** key fail the transaction as a recomputation would, naming P and the
    ** key */
    rf_txn_gen_origin(g->t, NULL, b);
    rf_buf_puts(b, "lang:output[`");
    rf_txn_gen_pred_name(RF_TXN_NS "_k", p, b);
    rf_buf_printf(b, "] = \"" RF_TXN_NS "_k.%s\".\n", p->name);
    if (p->functional && !single_valued) {
        rf_txn_gen_pred_origin(g->t, p, b);
        rf_buf_printf(b, "%s[", p->name);
        for (int32_t c = 0; c < nkey; c++) rf_buf_printf(b, "%sc%d", c ? ", " : "", (int)c);
        rf_buf_printf(b, "] = c%d -> ", (int)nkey);
        for (int32_t c = 0; c <= nkey; c++) rf_buf_printf(b, "%s%s(c%d)", c ? ", " : "", rf_fe_type_name(p->types[c]), (int)c);
        rf_buf_printf(b, ".\n%s[", p->name);
        cols(0, nkey, "A", b);
        rf_buf_printf(b, "] = A%d <- ", (int)nkey);
        row_atom(RF_TXN_NS "_part", p, b);
        rf_buf_printf(b, ".\nlang:output[`%s] = \"" RF_TXN_NS "_part.%s\".\n", p->name, p->name);
    } else {
        rf_buf_puts(b, "lang:output[`");
        rf_txn_gen_pred_name(RF_TXN_NS "_part", p, b);
        rf_buf_printf(b, "] = \"" RF_TXN_NS "_part.%s\".\n", p->name);
    }
    rf_buf_free(&seen);
    free(st);
}

/* P's whole state after the batch, for the rules that read it: the old
** rows of the keys not reached, and part. */
static void new_state(gen *g, const rf_fe_pred *p)
{
    rf_buf *b = g->b;
    int32_t nkey = p->functional ? p->arity - 1 : p->arity;
    rf_txn_gen_declare(NS_NEW, p, b);
    row_atom(NS_NEW, p, b);
    rf_buf_puts(b, " <- ");
    rf_txn_gen_pred_name(ns_of(g, p, S_OLD), p, b);
    rf_buf_putc(b, '(');
    cols(0, p->arity, "A", b);
    rf_buf_puts(b, "), !");
    key_atom(RF_TXN_NS "_k", p, nkey, b);
    rf_buf_puts(b, ".\n");
    row_atom(NS_NEW, p, b);
    rf_buf_puts(b, " <- ");
    row_atom(RF_TXN_NS "_part", p, b);
    rf_buf_puts(b, ".\n");
}

/* The rows a batch added are distinct (txn_kset.c): their key, the base
** predicate's own or else every column, declared, so that an aggregate over
** them needs no duplicate elimination (the run checks the key instead). */
static void distinct_key(const char *ns, const rf_fe_pred *q, rf_buf *out)
{
    rf_buf_puts(out, "lang:input:key[`");
    rf_txn_gen_pred_name(ns, q, out);
    rf_buf_puts(out, "] = \"");
    int32_t n = q->ninput_key > 0 ? q->ninput_key : q->arity;
    for (int32_t k = 0; k < n; k++) rf_buf_printf(out, "%sc%d", k ? ", " : "", (int)(q->ninput_key > 0 ? q->input_key[k] : k));
    rf_buf_puts(out, "\".\n");
}

void rf_txn_gen_diff(rf_txn *t, rf_buf *out)
{
    const rf_fe_program *fe = t->fe;
    gen g;
    memset(&g, 0, sizeof g);
    g.t = t;
    g.changed = rf_calloc((size_t)fe->npreds + 1, 1);
    g.need = rf_calloc((size_t)fe->npreds + 1, 1);
    rf_buf rules;
    rf_buf_init(&rules);
    g.b = &rules;
    if (!g.changed || !g.need) {
        out->oom = 1;
        goto done;
    }
    for (int32_t i = 0; i < t->npreds; i++)
        if (t->preds[i].base && (t->ahead_base ? t->ahead_base == i + 1 : t->preds[i].ins.nrows || t->preds[i].del.nrows))
            g.changed[t->preds[i].fe->id] = 1;
    for (int grew = 1; grew;) {
        grew = 0;
        for (int32_t i = 0; i < t->npreds; i++) {
            const rf_fe_pred *q = t->preds[i].fe;
            if (t->preds[i].base || g.changed[q->id]) continue;
            for (int32_t r = 0; r < q->nrules && !g.changed[q->id]; r++)
                for (int32_t l = 0; l < q->rules[r]->nbody; l++) {
                    const rf_fe_lit *x = q->rules[r]->body[l];
                    if (x->kind == RF_FE_ATOM && g.changed[x->pred->id]) {
                        g.changed[q->id] = grew = 1;
                        break;
                    }
                }
        }
    }
    for (int32_t i = 0; i < t->npreds; i++) {
        rf_txn_pred *p = &t->preds[i];
        if (p->base) continue;
        p->changed = g.changed[p->fe->id];
        p->how = NULL;
        if (p->changed) pred_rules(&g, p);
    }
    for (int32_t i = 0; i < t->npreds; i++) {
        const rf_fe_pred *q = t->preds[i].fe;
        if (!t->preds[i].base && g.changed[q->id] && (g.need[q->id] & NEED_NEW)) new_state(&g, q);
    }
    rf_buf_puts(out, "// redfox exec: the derived predicates maintained by diffs\n");
    for (int32_t i = 0; i < t->npreds; i++) {
        const rf_fe_pred *q = t->preds[i].fe;
        uint8_t n = g.need[q->id];
        if (!t->preds[i].base) n &= NEED_OLD; /* the rest is computed */
        if (n & NEED_OLD) rf_txn_gen_input(NS_OLD, q, out);
        if (n & NEED_NEW) rf_txn_gen_input(NS_NEW, q, out);
        if (n & NEED_INS) {
            rf_txn_gen_input(NS_INS, q, out);
            distinct_key(NS_INS, q, out);
        }
        if (n & NEED_DEL) rf_txn_gen_input(NS_DEL, q, out);
    }
    rf_txn_gen_empty_inputs(t, out);
    if (rules.oom) out->oom = 1;
    else rf_buf_append(out, rules.data, rules.len);
done:
    rf_buf_free(&rules);
    free(g.changed);
    free(g.need);
}
