/*
** txn/txn_gen.c: the LogiQL programs a transaction of `redfox exec` runs,
** generated from the user's checked program.
**
** Owns: which programs can be maintained by delta rules, and the text of
** the three programs: the materialization (the user's program plus an
** output of every derived predicate), the delta program (the semi-naive
** delta rules of every rule, over the stored relations and the batch's
** inserted rows: the fixpoint continues from the stored state), and the
** output program (the user's outputs, ordered and limited as declared, from
** the relations after the batch). Generated predicates live in the
** `redfox_txn_*` namespaces; their inputs are handed to the runs from memory.
** Also the comments that tie generated text to the user's program (`// from
** rule N`, `// the functional dependency of predicate N`), by which a run-time
** error names the user's rule or predicate.
**
** The delta rules: for a rule h <- b1, ..., bn whose body atoms over
** predicates the batch changes are at positions A, each non-empty subset S
** of A gives one rule, the atoms in S reading the new facts (a base
** predicate's inserted rows, a derived predicate's `redfox_txn_d`) and every
** other atom the relation before the batch. With new = old + delta (disjoint),
** these rules derive exactly the facts with a derivation that uses something
** new; `!redfox_txn_old:h(...)` keeps the old ones out, so `redfox_txn_d:h`
** holds only new facts and the recursion runs over them alone.
*/
#include "rf_txn.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DELTA_ATOMS 8 /* changed atoms in one rule: 2^8 - 1 delta rules at most */

static int derived(const rf_fe_pred *p) { return !p->input_file && p->nrules > 0; }

/* RECURSION: the words for a program with recursion, which only the delta
** rules keep (the diffs keep none), so that what stops them is named as
** being beside the recursion. */
#define BESIDE_RECURSION " (the delta rules maintain recursion only in programs without negation, aggregation or " \
                         "derived functional predicates; the diffs keep none)"
static const char *why_not(const rf_fe_program *p, int recursion)
{
    for (int32_t i = 0; i < p->npreds; i++) {
        const rf_fe_pred *q = p->preds[i];
        if (!derived(q)) continue;
        if (q->aux) return "the program negates a conjunction or shares a rule body (a predicate the compiler made)";
        if (q->lattice) return "the program has a recursive min or max";
        /* (beside a recursion, an aggregate or a negation in a functional
        ** predicate's rules is named, below, before its being functional) */
        if (q->functional && !recursion) return "a derived predicate is functional";
        if (q->arity == 0) return "a derived predicate has no columns";
        for (int32_t r = 0; r < q->nrules; r++) {
            const rf_fe_rule *ru = q->rules[r];
            if (ru->naggs)
                return recursion ? "a recursive predicate beside aggregation" BESIDE_RECURSION : "the program aggregates";
            int32_t atoms = 0;
            for (int32_t l = 0; l < ru->nbody; l++) {
                const rf_fe_lit *x = ru->body[l];
                if (x->negated)
                    return recursion ? "a recursive predicate beside negation" BESIDE_RECURSION
                                     : "the program has negation";
                if (x->kind == RF_FE_ATOM) atoms++;
                else if (x->kind != RF_FE_CMP && x->kind != RF_FE_ASSIGN) return "a rule uses a built-in predicate or a disjunction";
            }
            if (atoms > MAX_DELTA_ATOMS)
                return recursion ? "a rule has more than 8 atoms, in a program with recursion (which the diffs do not keep)"
                                 : "a rule has more than 8 atoms";
        }
        if (q->functional) return "a recursive predicate beside a derived functional predicate" BESIDE_RECURSION;
    }
    return NULL;
}

const char *rf_txn_gen_incremental_why_not(const rf_fe_program *p) { return why_not(p, 0); }

const char *rf_txn_gen_recursion_why_not(const rf_fe_program *p) { return why_not(p, 1); }

/* ---- printing ------------------------------------------------------------ */

void rf_txn_gen_pred_name(const char *ns, const rf_fe_pred *p, rf_buf *b)
{
    if (ns) rf_buf_printf(b, "%s:", ns);
    rf_buf_puts(b, p->name);
}

char *rf_txn_gen_input_file(const char *ns, const rf_fe_pred *p)
{
    rf_buf b;
    rf_buf_init(&b);
    rf_buf_printf(&b, "%s.%s", ns, p->name);
    char *s = b.oom ? NULL : rf_strdup(rf_buf_cstr(&b));
    rf_buf_free(&b);
    return s;
}

static void var_name(const rf_fe_rule *r, int32_t v, rf_buf *b)
{
    if (r->vars[v].wildcard) rf_buf_putc(b, '_');
    else rf_buf_printf(b, "V%d", (int)v);
}

void rf_txn_gen_expr(const rf_fe_rule *r, const rf_fe_expr *e, rf_buf *b)
{
    switch (e->kind) {
    case RF_FE_VAR: var_name(r, e->var, b); break;
    case RF_FE_CONST: rf_fe_const_print(&e->c, b); break;
    case RF_FE_NEG:
        rf_buf_puts(b, "-(");
        rf_txn_gen_expr(r, e->args[0], b);
        rf_buf_putc(b, ')');
        break;
    case RF_FE_BINOP:
        rf_buf_putc(b, '(');
        for (int32_t i = 0; i < e->nargs; i++) {
            if (i) rf_buf_printf(b, " %c ", e->op);
            rf_txn_gen_expr(r, e->args[i], b);
        }
        rf_buf_putc(b, ')');
        break;
    case RF_FE_CALL:
    case RF_FE_CAST:
        if (e->kind == RF_FE_CAST && e->type != RF_TYPE_FLOAT &&
            (e->type == RF_TYPE_DEC128 || e->args[0]->type == RF_TYPE_DEC128) && e->args[0]->type != RF_TYPE_INT) {
            /* between decimal and the wide decimal: the compiler's choice, not source text */
            rf_txn_gen_expr(r, e->args[0], b);
            break;
        }
        if (e->kind == RF_FE_CALL) rf_buf_printf(b, "%s[", rf_fe_builtin_info(e->fn)->name);
        else rf_buf_printf(b, "%s[", e->type == RF_TYPE_DECIMAL || e->type == RF_TYPE_DEC128 ? "int:decimal"
                                     : e->args[0]->type == RF_TYPE_INT ? "int:float" : "decimal:float");
        for (int32_t i = 0; i < e->nargs; i++) {
            if (i) rf_buf_puts(b, ", ");
            rf_txn_gen_expr(r, e->args[i], b);
        }
        rf_buf_putc(b, ']');
        break;
    }
}

static void args(const rf_fe_rule *r, rf_fe_expr **a, int32_t n, rf_buf *b)
{
    rf_buf_putc(b, '(');
    for (int32_t i = 0; i < n; i++) {
        if (i) rf_buf_puts(b, ", ");
        rf_txn_gen_expr(r, a[i], b);
    }
    rf_buf_putc(b, ')');
}

/* `NS:P(c0, c1) -> int(c0), string(c1).` */
void rf_txn_gen_declare(const char *ns, const rf_fe_pred *p, rf_buf *b)
{
    rf_txn_gen_pred_name(ns, p, b);
    rf_buf_putc(b, '(');
    for (int32_t c = 0; c < p->arity; c++) rf_buf_printf(b, "%sc%d", c ? ", " : "", (int)c);
    rf_buf_puts(b, ") -> ");
    for (int32_t c = 0; c < p->arity; c++) rf_buf_printf(b, "%s%s(c%d)", c ? ", " : "", rf_fe_type_name(p->types[c]), (int)c);
    rf_buf_puts(b, ".\n");
}

/* ---- where a generated rule comes from ------------------------------------ */

#define ORIGIN "// from rule "
#define NO_ORIGIN "// not from a rule\n"

void rf_txn_gen_origin(const rf_txn *t, const rf_fe_rule *r, rf_buf *b)
{
    int32_t n = -1;
    for (int32_t i = 0; r && i < t->fe->nrules && n < 0; i++)
        if (t->fe->rules[i] == r) n = i;
    if (n < 0) {
        rf_buf_puts(b, NO_ORIGIN);
        return;
    }
    rf_buf_printf(b, ORIGIN "%d", (int)n);
    if (r->loc.file && !strpbrk(r->loc.file, "\n\r"))
        rf_buf_printf(b, " (%s:%d:%d)", r->loc.file, (int)r->loc.line, (int)r->loc.col);
    rf_buf_putc(b, '\n');
}

#define PRED_ORIGIN "// the functional dependency of predicate "

void rf_txn_gen_pred_origin(const rf_txn *t, const rf_fe_pred *p, rf_buf *b)
{
    int32_t n = -1;
    for (int32_t i = 0; i < t->fe->npreds && n < 0; i++)
        if (t->fe->preds[i] == p) n = i;
    if (n < 0) return;
    rf_buf_printf(b, PRED_ORIGIN "%d", (int)n);
    if (p->loc.file && !strpbrk(p->loc.file, "\n\r"))
        rf_buf_printf(b, " (%s:%d:%d)", p->loc.file, (int)p->loc.line, (int)p->loc.col);
    rf_buf_putc(b, '\n');
}

const rf_fe_pred *rf_txn_gen_pred_origin_at(const rf_txn *t, const char *text, int64_t len, int32_t line)
{
    const rf_fe_pred *p = NULL;
    int32_t at = 1;
    for (int64_t i = 0; i < len && at <= line; at++) {
        const char *s = text + i, *nl = memchr(s, '\n', (size_t)(len - i));
        int64_t n = nl ? nl - s : len - i;
        size_t k = sizeof PRED_ORIGIN - 1;
        if (n > (int64_t)k && !memcmp(s, PRED_ORIGIN, k)) {
            long v = strtol(s + k, NULL, 10);
            p = v >= 0 && v < t->fe->npreds ? t->fe->preds[v] : NULL;
        } else if (n >= 2 && s[0] == '/' && s[1] == '/') {
            p = NULL; /* another origin comment: the rules after it are not P's check */
        }
        i += n + 1;
    }
    return p;
}

const rf_fe_rule *rf_txn_gen_origin_at(const rf_txn *t, const char *text, int64_t len, int32_t line)
{
    const rf_fe_rule *r = NULL;
    int32_t at = 1;
    for (int64_t i = 0; i < len && at <= line; at++) {
        const char *s = text + i, *nl = memchr(s, '\n', (size_t)(len - i));
        int64_t n = nl ? nl - s : len - i;
        size_t k = sizeof ORIGIN - 1;
        if (n > (int64_t)k && !memcmp(s, ORIGIN, k)) {
            long v = strtol(s + k, NULL, 10);
            r = v >= 0 && v < t->fe->nrules ? t->fe->rules[v] : NULL;
        } else if (n == (int64_t)sizeof NO_ORIGIN - 2 && !memcmp(s, NO_ORIGIN, (size_t)n)) {
            r = NULL;
        }
        i += n + 1;
    }
    return r;
}

/* A generated input NS:P, handed to the run from memory. */
void rf_txn_gen_input(const char *ns, const rf_fe_pred *p, rf_buf *b)
{
    rf_txn_gen_declare(ns, p, b);
    char *f = rf_txn_gen_input_file(ns, p);
    rf_buf_puts(b, "lang:input[`");
    rf_txn_gen_pred_name(ns, p, b);
    rf_buf_printf(b, "] = \"%s\".\n", f ? f : "?");
    free(f);
}

void rf_txn_gen_empty_inputs(const rf_txn *t, rf_buf *out)
{
    const rf_fe_program *fe = t->fe;
    uint8_t *seen = rf_calloc((size_t)fe->npreds + 1, 1);
    if (!seen) {
        out->oom = 1;
        return;
    }
    for (int32_t i = 0; i < t->npreds; i++)
        for (int32_t ri = 0; ri < t->preds[i].fe->nrules; ri++) {
            const rf_fe_rule *r = t->preds[i].fe->rules[ri];
            for (int32_t l = 0; l < r->nbody; l++) {
                const rf_fe_pred *q = r->body[l]->kind == RF_FE_ATOM ? r->body[l]->pred : NULL;
                if (!q || seen[q->id] || rf_txn_pred_has_rows(q)) continue;
                seen[q->id] = 1;
                rf_txn_gen_input(RF_TXN_NS "_old", q, out);
            }
        }
    free(seen);
}

/* `P(V0, V1)` or, for a functional P, `P[V0] = V1`, with plain variables. */
static void plain_atom(const char *ns, const rf_fe_pred *p, int functional, rf_buf *b)
{
    rf_txn_gen_pred_name(ns, p, b);
    int32_t n = p->arity - (functional ? 1 : 0);
    rf_buf_putc(b, functional ? '[' : '(');
    for (int32_t c = 0; c < n; c++) rf_buf_printf(b, "%sV%d", c ? ", " : "", (int)c);
    rf_buf_putc(b, functional ? ']' : ')');
    if (functional) rf_buf_printf(b, " = V%d", (int)n);
}

/* ---- the materialization -------------------------------------------------- */

void rf_txn_gen_materialize(const rf_txn *t, rf_buf *out)
{
    rf_buf_puts(out, "\n// redfox exec: every derived predicate, to keep in the database\n");
    for (int32_t i = 0; i < t->npreds; i++) {
        const rf_txn_pred *p = &t->preds[i];
        if (p->base) continue;
        /* (a predicate of no columns as its stored column: true where it holds) */
        if (p->fe->arity) plain_atom(RF_TXN_NS "_mat", p->fe, 0, out);
        else rf_buf_printf(out, RF_TXN_NS "_mat:%s(true)", p->fe->name);
        rf_buf_puts(out, " <- ");
        plain_atom(NULL, p->fe, p->fe->functional, out);
        rf_buf_puts(out, ".\nlang:output[`");
        rf_txn_gen_pred_name(RF_TXN_NS "_mat", p->fe, out);
        rf_buf_printf(out, "] = \"" RF_TXN_NS "_mat.%s\".\n", p->fe->name);
    }
}

/* ---- the delta rules ------------------------------------------------------ */

static void delta_rules(const rf_txn *t, const rf_txn_pred *h, const uint8_t *changed, rf_buf *out)
{
    for (int32_t ri = 0; ri < h->fe->nrules; ri++) {
        const rf_fe_rule *r = h->fe->rules[ri];
        if (!r->nbody) continue; /* a fact: already stored */
        int32_t pos[MAX_DELTA_ATOMS], m = 0;
        for (int32_t l = 0; l < r->nbody; l++)
            if (r->body[l]->kind == RF_FE_ATOM && changed[r->body[l]->pred->id] && m < MAX_DELTA_ATOMS) pos[m++] = l;
        if (m) rf_txn_gen_origin(t, r, out);
        for (uint32_t mask = 1; m && mask < (1u << m); mask++) {
            rf_txn_gen_pred_name(RF_TXN_NS "_d", h->fe, out);
            args(r, r->head_args, h->fe->arity, out);
            rf_buf_puts(out, " <-\n    ");
            for (int32_t l = 0; l < r->nbody; l++) {
                const rf_fe_lit *x = r->body[l];
                if (l) rf_buf_puts(out, ", ");
                if (x->kind == RF_FE_CMP) {
                    rf_txn_gen_expr(r, x->lhs, out);
                    rf_buf_printf(out, " %s ", rf_cmp_op_name(x->op));
                    rf_txn_gen_expr(r, x->rhs, out);
                    continue;
                }
                if (x->kind == RF_FE_ASSIGN) {
                    var_name(r, x->var, out);
                    rf_buf_puts(out, " = ");
                    rf_txn_gen_expr(r, x->rhs, out);
                    continue;
                }
                int delta = 0;
                for (int32_t k = 0; k < m; k++) delta |= pos[k] == l && (mask >> k & 1);
                const rf_txn_pred *q = rf_txn_find((rf_txn *)t, x->pred);
                const char *ns = !delta ? RF_TXN_NS "_old" : q && q->base ? RF_TXN_NS "_ins" : RF_TXN_NS "_d";
                rf_txn_gen_pred_name(ns, x->pred, out);
                args(r, x->args, x->nargs, out);
            }
            rf_buf_puts(out, ",\n    !");
            rf_txn_gen_pred_name(RF_TXN_NS "_old", h->fe, out);
            args(r, r->head_args, h->fe->arity, out);
            rf_buf_puts(out, ".\n");
        }
    }
}

/* changed[pred id]: base predicates the batch changes (by ins or del
** rows; every one under t->all_changed), and the derived predicates whose
** rules read one that changes. */
static uint8_t *changed_preds(const rf_txn *t, int by_del)
{
    const rf_fe_program *fe = t->fe;
    uint8_t *changed = rf_calloc((size_t)fe->npreds + 1, 1);
    if (!changed) return NULL;
    for (int32_t i = 0; i < t->npreds; i++)
        if (t->preds[i].base && (t->all_changed || (by_del ? t->preds[i].del.nrows : t->preds[i].ins.nrows) > 0))
            changed[t->preds[i].fe->id] = 1;
    for (int grew = 1; grew;) {
        grew = 0;
        for (int32_t i = 0; i < t->npreds; i++) {
            const rf_txn_pred *p = &t->preds[i];
            if (p->base || changed[p->fe->id]) continue;
            for (int32_t r = 0; r < p->fe->nrules && !changed[p->fe->id]; r++)
                for (int32_t l = 0; l < p->fe->rules[r]->nbody; l++) {
                    const rf_fe_lit *x = p->fe->rules[r]->body[l];
                    if (x->kind == RF_FE_ATOM && changed[x->pred->id]) {
                        changed[p->fe->id] = grew = 1;
                        break;
                    }
                }
        }
    }
    return changed;
}

void rf_txn_gen_delta(const rf_txn *t, rf_buf *out)
{
    uint8_t *changed = changed_preds(t, 0);
    if (!changed) {
        out->oom = 1;
        return;
    }
    rf_buf_puts(out, "// redfox exec: the delta rules of the program's rules\n");
    for (int32_t i = 0; i < t->npreds; i++) {
        const rf_txn_pred *p = &t->preds[i];
        rf_txn_gen_input(RF_TXN_NS "_old", p->fe, out);
        if (p->base && changed[p->fe->id]) rf_txn_gen_input(RF_TXN_NS "_ins", p->fe, out);
    }
    rf_txn_gen_empty_inputs(t, out);
    for (int32_t i = 0; i < t->npreds; i++) {
        rf_txn_pred *p = &t->preds[i];
        if (p->base) continue;
        p->changed = changed[p->fe->id];
        if (!p->changed) continue;
        rf_txn_gen_declare(RF_TXN_NS "_d", p->fe, out);
        delta_rules(t, p, changed, out);
        rf_txn_gen_origin(t, NULL, out);
        rf_buf_puts(out, "lang:output[`");
        rf_txn_gen_pred_name(RF_TXN_NS "_d", p->fe, out);
        rf_buf_printf(out, "] = \"" RF_TXN_NS "_d.%s\".\n", p->fe->name);
    }
    free(changed);
}

/* ---- deletions: DRed ------------------------------------------------------ */

/* The body of rule r with atom l0 (-1: none) as `del` and every other atom
** in namespace ns_of(atom) ("old", "mid", "cur"); comparisons as they are. */
static void body(const rf_txn *t, const rf_fe_rule *r, int32_t l0, const char *delta_ns_base,
                 const char *delta_ns_derived, int rederive, const uint8_t *changed, int first, rf_buf *out)
{
    for (int32_t l = 0; l < r->nbody; l++) {
        const rf_fe_lit *x = r->body[l];
        if (!first || l) rf_buf_puts(out, ", ");
        if (x->kind == RF_FE_CMP) {
            rf_txn_gen_expr(r, x->lhs, out);
            rf_buf_printf(out, " %s ", rf_cmp_op_name(x->op));
            rf_txn_gen_expr(r, x->rhs, out);
            continue;
        }
        if (x->kind == RF_FE_ASSIGN) {
            var_name(r, x->var, out);
            rf_buf_puts(out, " = ");
            rf_txn_gen_expr(r, x->rhs, out);
            continue;
        }
        const rf_txn_pred *q = rf_txn_find((rf_txn *)t, x->pred);
        int base = q && q->base;
        const char *ns = RF_TXN_NS "_old";
        if (l == l0) ns = base ? delta_ns_base : delta_ns_derived;
        else if (rederive && base) ns = RF_TXN_NS "_mid";
        else if (rederive && changed[x->pred->id]) ns = RF_TXN_NS "_cur";
        rf_txn_gen_pred_name(ns, x->pred, out);
        args(r, x->args, x->nargs, out);
    }
}

void rf_txn_gen_dred(const rf_txn *t, rf_buf *out)
{
    uint8_t *changed = changed_preds(t, 1);
    if (!changed) {
        out->oom = 1;
        return;
    }
    rf_buf_puts(out, "// redfox exec: deletions by DRed (over-delete, then re-derive)\n");
    for (int32_t i = 0; i < t->npreds; i++) {
        const rf_txn_pred *p = &t->preds[i];
        rf_txn_gen_input(RF_TXN_NS "_old", p->fe, out);
        if (p->base) rf_txn_gen_input(RF_TXN_NS "_mid", p->fe, out);
        if (p->base && changed[p->fe->id]) rf_txn_gen_input(RF_TXN_NS "_del", p->fe, out);
    }
    rf_txn_gen_empty_inputs(t, out);
    for (int32_t i = 0; i < t->npreds; i++) {
        rf_txn_pred *p = &t->preds[i];
        if (p->base) continue;
        p->changed = changed[p->fe->id];
        if (!p->changed) continue;
        const rf_fe_pred *h = p->fe;
        rf_txn_gen_declare(RF_TXN_NS "_od", h, out);
        rf_txn_gen_declare(RF_TXN_NS "_cur", h, out);
        for (int32_t ri = 0; ri < h->nrules; ri++) {
            const rf_fe_rule *r = h->rules[ri];
            rf_txn_gen_origin(t, r, out);
            /* over-delete: every fact with a derivation that reads a deleted one */
            for (int32_t l = 0; l < r->nbody; l++) {
                if (r->body[l]->kind != RF_FE_ATOM || !changed[r->body[l]->pred->id]) continue;
                rf_txn_gen_pred_name(RF_TXN_NS "_od", h, out);
                args(r, r->head_args, h->arity, out);
                rf_buf_puts(out, " <- ");
                body(t, r, l, RF_TXN_NS "_del", RF_TXN_NS "_od", 0, changed, 1, out);
                rf_buf_puts(out, ".\n");
            }
            /* re-derive: the rule over the state after the deletes. No
            ** od(head) filter is needed: a deletion only shrinks the state,
            ** so what the rule derives was in the old relation, and what
            ** semi-naive evaluation adds (not yet in cur, a superset of old
            ** minus od) is over-deleted; probing od every round cost more
            ** than the round */
            /* a fact of the program is derived again as it is: another rule
            ** of its predicate may have over-deleted it */
            rf_txn_gen_pred_name(RF_TXN_NS "_cur", h, out);
            args(r, r->head_args, h->arity, out);
            if (r->nbody) {
                rf_buf_puts(out, " <- ");
                body(t, r, -1, NULL, NULL, 1, changed, 1, out);
            }
            rf_buf_puts(out, ".\n");
        }
        /* what no deleted fact touched stays */
        rf_txn_gen_origin(t, NULL, out);
        plain_atom(RF_TXN_NS "_cur", h, 0, out);
        rf_buf_puts(out, " <- ");
        plain_atom(RF_TXN_NS "_old", h, 0, out);
        rf_buf_puts(out, ", !");
        plain_atom(RF_TXN_NS "_od", h, 0, out);
        rf_buf_puts(out, ".\nlang:output[`");
        rf_txn_gen_pred_name(RF_TXN_NS "_cur", h, out);
        rf_buf_printf(out, "] = \"" RF_TXN_NS "_cur.%s\".\n", h->name);
    }
    free(changed);
}

/* ---- the outputs ----------------------------------------------------------- */

void rf_txn_gen_outputs(const rf_txn *t, rf_buf *out)
{
    rf_buf_puts(out, "// redfox exec: the program's outputs after the transaction\n");
    /* (every output in the program's order, one of no rows included: handed empty) */
    for (int32_t i = 0; i < t->fe->npreds; i++) {
        const rf_fe_pred *q = t->fe->preds[i];
        if (!q->output_name) continue;
        if (!q->arity) {
            /* no columns: handed as its stored column (true where it holds),
            ** an input needs one */
            rf_buf_printf(out,
                          RF_TXN_NS "_in:%s(c0) -> boolean(c0).\nlang:input[`" RF_TXN_NS "_in:%s] = \"" RF_TXN_NS
                                    "_in.%s\".\n" RF_TXN_NS "_out:%s() <- " RF_TXN_NS "_in:%s(_).\n",
                          q->name, q->name, q->name, q->name, q->name);
        } else {
            rf_txn_gen_input(RF_TXN_NS "_out", q, out);
        }
        rf_buf_puts(out, "lang:output[`");
        rf_txn_gen_pred_name(RF_TXN_NS "_out", q, out);
        rf_buf_printf(out, "] = \"%s\".\n", q->output_name);
        if (q->norder) {
            rf_buf_puts(out, "lang:output:orderBy[`");
            rf_txn_gen_pred_name(RF_TXN_NS "_out", q, out);
            rf_buf_puts(out, "] = \"");
            for (int32_t k = 0; k < q->norder; k++)
                rf_buf_printf(out, "%s%d%s", k ? ", " : "", (int)q->order[k].col + 1, q->order[k].desc ? " desc" : "");
            rf_buf_puts(out, "\".\n");
        }
        if (q->limit >= 0) {
            rf_buf_puts(out, "lang:output:limit[`");
            rf_txn_gen_pred_name(RF_TXN_NS "_out", q, out);
            rf_buf_printf(out, "] = %lld.\n", (long long)q->limit);
        }
    }
}
