/*
** queryplan/qp_exists.c: another-row tests as per-key aggregates, so that a
** plan does not depend on whether a query was written with a self-join or
** with the aggregate by hand.
**
** Owns: the recognition, in one rule without aggregation, of body atoms whose
** only role is a test per key, and the relations that replace them (computed
** in the rule's block, before its pipeline):
** - `q(k, c, _), c != v`, c and q's other variables used nowhere else in the
**   rule ("another row of q with key k has a value other than v"): the atom
**   reads G = q's least and greatest c per k instead, and the comparison
**   becomes `least != v ; greatest != v` (some value differs from v exactly
**   when not all of them equal v);
** - `q(k, _, y)`, its other variables used nowhere else (a semi-join): the atom
**   reads q's distinct k, so that a row of the rule meets one row, not one per
**   match;
** - `!(q(k, c, _), c != v)` (the front end's neq shape of a negated
**   conjunction, rf_fe_pred.neq_pred): the rule's rows whose k has a value
**   other than v in G are removed by an anti-join on (k, v), instead of
**   reading the conjunction's auxiliary predicate, which repeats the rest of
**   the body (qp_build.c lowers that part).
** Exact: a key with no row of q has no row in G (no other row exists; for the
** negation, the row stays); duplicates in q change neither least nor greatest;
** the rule is a set (no aggregation), so meeting one row instead of several
** changes nothing. Not done: compared columns of type float (NaN is neither
** less, greater nor equal), atoms whose keys cover a declared key of q (they
** meet one row already), atoms of the rule's own stratum (recursion).
*/
#include "qp_internal.h"

/* How often each variable of r occurs (head, every literal, alternatives). */
static void count_expr(const rf_fe_expr *e, int32_t *uses)
{
    if (!e) return;
    if (e->kind == RF_FE_VAR) uses[e->var]++;
    for (int32_t i = 0; i < e->nargs; i++) count_expr(e->args[i], uses);
}

static void count_lit(const rf_fe_lit *l, int32_t *uses)
{
    for (int32_t j = 0; j < l->nargs; j++) count_expr(l->args[j], uses);
    count_expr(l->lhs, uses);
    count_expr(l->rhs, uses);
    if (l->kind == RF_FE_ASSIGN) uses[l->var]++;
    for (int32_t a = 0; a < l->nalts; a++)
        for (int32_t j = 0; j < l->altn[a]; j++) count_lit(l->alts[a][j], uses);
}

/* Whether the key arguments (mark[j]) cover q's declared key: an input key
** (lang:input:key) or a functional predicate's key columns. */
static int covers_key(const rf_fe_pred *q, const uint8_t *mark)
{
    if (q->ninput_key > 0) {
        int all = 1;
        for (int32_t i = 0; i < q->ninput_key; i++) all &= mark[q->input_key[i]];
        if (all) return 1;
    }
    if (q->functional) {
        int all = 1;
        for (int32_t j = 0; j < q->arity - 1; j++) all &= mark[j];
        return all;
    }
    return 0;
}

static rf_fe_expr *var_expr(rf_qp_program *p, int32_t v, rf_type t, rf_loc loc)
{
    rf_fe_expr *e = qp_alloc(p, sizeof *e);
    if (!e) return NULL;
    e->kind = RF_FE_VAR;
    e->var = v;
    e->type = t;
    e->loc = loc;
    return e;
}

/* G over src: with cc >= 0, the groups of columns kc[0..nk) with the least
** and greatest of column cc; else the distinct rows of columns kc
** (qp_distinct_cols, as keyjoin's guards). Rows of src failing `filter`
** (over src, may be NULL) do not count. */
static rf_qp_rel *per_key(rf_qp_program *p, rf_qp_block *b, rf_qp_rel *src, rf_qp_expr *filter, const int32_t *kc,
                          int32_t nk, int32_t cc)
{
    if (cc < 0) {
        int32_t end = b->ncmds;
        return qp_distinct_cols(p, b, &end, src, filter, kc, nk, (rf_loc){0});
    }
    int32_t ncols = nk + 1;
    rf_qp_rel *in = src;
    int32_t *cols = qp_ints(p, ncols);
    if (!cols) return NULL;
    for (int32_t i = 0; i < nk; i++) cols[i] = kc[i];
    cols[nk] = cc;
    if (filter) {
        /* the columns needed, filtered: what the aggregate reads */
        rf_qp_rel *m = qp_temp_new(p, ncols);
        rf_qp_cmd *mc = qp_cmd_new(p, RF_QP_MAPFILTER, m, 1);
        rf_qp_expr **outs = qp_alloc(p, (size_t)(ncols + 1) * sizeof *outs);
        if (!m || !mc || !outs) return NULL;
        for (int32_t i = 0; i < ncols; i++) {
            outs[i] = qp_e_col(p, 0, cols[i], src->types[cols[i]]);
            m->types[i] = src->types[cols[i]];
            m->colnames[i] = src->colnames[cols[i]];
            cols[i] = i;
        }
        mc->in[0] = src;
        mc->filter = filter;
        mc->outs = outs;
        mc->nouts = ncols;
        qp_block_append(p, b, mc);
        in = m;
    }
    rf_qp_rel *g = qp_temp_new(p, nk + 2);
    rf_qp_cmd *gc = qp_cmd_new(p, RF_QP_AGGREGATE, g, 1);
    if (!g || !gc || p->oom) return NULL;
    gc->in[0] = in;
    for (int32_t i = 0; i < nk; i++) {
        g->types[i] = in->types[cols[i]];
        g->colnames[i] = in->colnames[cols[i]];
    }
    gc->group = qp_ints(p, nk);
    gc->aggs = qp_alloc(p, 2 * sizeof *gc->aggs);
    if (!gc->group || !gc->aggs) return NULL;
    for (int32_t i = 0; i < nk; i++) gc->group[i] = cols[i];
    gc->ngroup = nk;
    gc->naggs = 2;
    rf_type t = in->types[cols[nk]];
    gc->aggs[0] = (rf_qp_agg){RF_AGG_MIN, cols[nk], t};
    gc->aggs[1] = (rf_qp_agg){RF_AGG_MAX, cols[nk], t};
    g->types[nk] = g->types[nk + 1] = t;
    g->colnames[nk] = qp_sprintf(p, "least_%s", in->colnames[cols[nk]] ? in->colnames[cols[nk]] : "value");
    g->colnames[nk + 1] = qp_sprintf(p, "greatest_%s", in->colnames[cols[nk]] ? in->colnames[cols[nk]] : "value");
    qp_block_append(p, b, gc);
    return p->oom ? NULL : g;
}

/* Appends "name.col" of q's column j to buf. */
static void col_text(rf_buf *buf, const rf_fe_pred *q, int32_t j)
{
    if (q->cols[j]) rf_buf_printf(buf, "%s.%s", q->name, q->cols[j]);
    else rf_buf_printf(buf, "%s.col%d", q->name, (int)j + 1);
}

/* Positive atom i of r: its rewrite into x (the copy of r), when it is a
** test per key. 1 rewritten, 0 not, -1 out of memory. */
static int rewrite_atom(rf_qp_program *p, rf_qp_block *b, const rf_fe_rule *r, int32_t i, rf_qp_rel *const *full,
                        const int32_t *uses, uint8_t *consumed, rf_fe_rule *x, int32_t *nvars, rf_qp_rel **over,
                        rf_buf *note)
{
    const rf_fe_lit *a = r->body[i];
    const rf_fe_pred *q = a->pred;
    if (!q || q->stratum == r->head->stratum) return 0;
    rf_qp_rel *src = full[q->id];
    uint8_t *key = qp_alloc(p, (size_t)a->nargs + 1);
    int32_t *kc = qp_ints(p, a->nargs), *kv = qp_ints(p, a->nargs);
    if (!key || !kc || !kv) return -1;
    int32_t nk = 0, cj = -1, cmp = -1, nexist = 0;
    rf_qp_expr *filter = NULL;
    for (int32_t j = 0; j < a->nargs; j++) {
        const rf_fe_expr *e = a->args[j];
        if (e->kind == RF_FE_CONST) {
            key[j] = 1; /* a constant selects, as a key would */
            filter = qp_e_and(p, filter, qp_e_cmp(p, RF_CMP_EQ, qp_e_col(p, 0, j, src->types[j]), qp_e_const(p, &e->c)));
            continue;
        }
        for (int32_t k = 0; k < j; k++)
            if (a->args[k]->kind == RF_FE_VAR && a->args[k]->var == e->var) return 0; /* repeated: a filter */
        if (uses[e->var] == 1) {
            nexist++; /* a wildcard, or a variable named nowhere else */
            continue;
        }
        if (cj < 0 && uses[e->var] == 2 && r->vars[e->var].type != RF_TYPE_FLOAT) {
            /* its one other use: `c != expr` (a disequality nobody took yet) */
            for (int32_t m = 0; m < r->nbody && cmp < 0; m++) {
                const rf_fe_lit *l = r->body[m];
                if (l->kind != RF_FE_CMP || l->op != RF_CMP_NE || consumed[m]) continue;
                if ((l->lhs->kind == RF_FE_VAR && l->lhs->var == e->var) ||
                    (l->rhs->kind == RF_FE_VAR && l->rhs->var == e->var))
                    cmp = m;
            }
            if (cmp >= 0) {
                cj = j;
                continue;
            }
        }
        key[j] = 1;
        kc[nk] = j;
        kv[nk++] = e->var;
    }
    /* nothing existential, or nothing named (the lowering's existence test already) */
    if ((cj < 0 && !nexist) || (cj < 0 && !nk) || covers_key(q, key)) return 0;
    /* a test of rows the rest of the body makes: every key is bound by another positive atom */
    for (int32_t k = 0; k < nk; k++) {
        int bound = 0;
        for (int32_t m = 0; m < r->nbody && !bound; m++) {
            const rf_fe_lit *l = r->body[m];
            if (m == i || l->kind != RF_FE_ATOM || l->negated) continue;
            for (int32_t j = 0; j < l->nargs; j++) bound |= l->args[j]->kind == RF_FE_VAR && l->args[j]->var == kv[k];
        }
        if (!bound) return 0;
    }
    rf_qp_rel *g = per_key(p, b, src, filter, kc, nk, cj);
    if (!g) return -1;
    /* the atom reads G: its keys, then least and greatest as fresh variables */
    rf_fe_lit *na = qp_alloc(p, sizeof *na);
    rf_fe_expr **args = qp_alloc(p, (size_t)(nk + 3) * sizeof *args);
    if (!na || !args) return -1;
    *na = *a;
    na->args = args;
    na->nargs = nk + (cj >= 0 ? 2 : 0);
    for (int32_t k = 0; k < nk; k++)
        if (!(args[k] = var_expr(p, kv[k], r->vars[kv[k]].type, a->loc))) return -1;
    rf_buf_puts(note, note->len ? "; " : "exists: ");
    if (cj >= 0) {
        rf_type t = src->types[cj];
        int32_t lo = (*nvars)++, hi = (*nvars)++;
        rf_fe_var *xv = (rf_fe_var *)x->vars;
        xv[lo] = (rf_fe_var){qp_sprintf(p, "_least%d", (int)lo), t, a->loc, 0, 1};
        xv[hi] = (rf_fe_var){qp_sprintf(p, "_greatest%d", (int)hi), t, a->loc, 0, 1};
        if (!(args[nk] = var_expr(p, lo, t, a->loc)) || !(args[nk + 1] = var_expr(p, hi, t, a->loc))) return -1;
        /* c != e becomes least != e ; greatest != e */
        const rf_fe_lit *c = r->body[cmp];
        const rf_fe_expr *other = c->lhs->kind == RF_FE_VAR && c->lhs->var == a->args[cj]->var ? c->rhs : c->lhs;
        rf_fe_lit *orl = qp_alloc(p, sizeof *orl);
        rf_fe_lit ***alts = qp_alloc(p, 2 * sizeof *alts);
        int32_t *altn = qp_ints(p, 2);
        if (!orl || !alts || !altn) return -1;
        for (int k = 0; k < 2; k++) {
            rf_fe_lit *ne = qp_alloc(p, sizeof *ne);
            alts[k] = qp_alloc(p, sizeof *alts[k]);
            if (!ne || !alts[k] || !(ne->lhs = var_expr(p, k ? hi : lo, t, c->loc))) return -1;
            ne->kind = RF_FE_CMP;
            ne->loc = c->loc;
            ne->op = RF_CMP_NE;
            ne->rhs = (rf_fe_expr *)other;
            ne->var = -1;
            alts[k][0] = ne;
            altn[k] = 1;
        }
        orl->kind = RF_FE_OR;
        orl->loc = c->loc;
        orl->var = -1;
        orl->alts = alts;
        orl->altn = altn;
        orl->nalts = 2;
        x->body[cmp] = orl;
        consumed[cmp] = 1;
        rf_buf_puts(note, "least and greatest of ");
        col_text(note, q, cj);
    } else {
        rf_buf_puts(note, "distinct");
    }
    rf_buf_puts(note, " per (");
    for (int32_t k = 0; k < nk; k++) {
        if (k) rf_buf_puts(note, ", ");
        col_text(note, q, kc[k]);
    }
    rf_buf_puts(note, ")");
    x->body[i] = na;
    over[i] = g;
    return 1;
}

/* Negated literal i of r reading an auxiliary predicate of the neq shape. */
static int rewrite_negation(rf_qp_program *p, rf_qp_block *b, const rf_fe_rule *r, int32_t i, rf_qp_rel *const *full,
                            qp_exists_neg **neg, rf_buf *note)
{
    const rf_fe_lit *l = r->body[i];
    const rf_fe_pred *aux = l->pred, *q = aux ? aux->neq_pred : NULL;
    if (!q || aux->aux != 2 || q->stratum >= r->head->stratum) return 0;
    for (int32_t j = 0; j < l->nargs; j++)
        if (l->args[j]->kind != RF_FE_VAR) return 0;
    int32_t nk = 0, cj = -1;
    int32_t *kc = qp_ints(p, q->arity), *keyarg = qp_ints(p, q->arity);
    if (!kc || !keyarg) return -1;
    for (int32_t j = 0; j < q->arity; j++) {
        if (aux->neq_map[j] == -2) cj = j;
        if (aux->neq_map[j] >= 0) {
            kc[nk] = j;
            keyarg[nk++] = aux->neq_map[j];
        }
    }
    if (cj < 0 || q->types[cj] == RF_TYPE_FLOAT) return 0;
    rf_qp_rel *g = per_key(p, b, full[q->id], NULL, kc, nk, cj);
    qp_exists_neg *n = qp_alloc(p, sizeof *n);
    if (!g || !n) return -1;
    *n = (qp_exists_neg){g, nk, keyarg, aux->neq_v};
    neg[i] = n;
    rf_buf_puts(note, note->len ? "; " : "exists: ");
    rf_buf_printf(note, "%s by least and greatest of ", aux->shown ? aux->shown : aux->name);
    col_text(note, q, cj);
    rf_buf_puts(note, " per (");
    for (int32_t k = 0; k < nk; k++) {
        if (k) rf_buf_puts(note, ", ");
        col_text(note, q, kc[k]);
    }
    rf_buf_puts(note, ")");
    return 1;
}

int qp_exists_rewrite(rf_qp_program *p, rf_qp_block *b, const rf_fe_rule *r, rf_qp_rel *const *full,
                      qp_exists_plan *out)
{
    *out = (qp_exists_plan){r, NULL, NULL, NULL};
    if (r->naggs || r->head->recursive) return 0;
    int32_t *uses = qp_ints(p, r->nvars + 1);
    uint8_t *consumed = qp_alloc(p, (size_t)r->nbody + 1);
    rf_fe_rule *x = qp_alloc(p, sizeof *x);
    rf_qp_rel **over = qp_alloc(p, (size_t)(r->nbody + 1) * sizeof *over);
    qp_exists_neg **neg = qp_alloc(p, (size_t)(r->nbody + 1) * sizeof *neg);
    if (!uses || !consumed || !x || !over || !neg) return -1;
    for (int32_t i = 0; i < r->head->arity; i++) count_expr(r->head_args[i], uses);
    for (int32_t i = 0; i < r->nbody; i++) count_lit(r->body[i], uses);
    /* the copy: the same literals and variables, room for two more per atom */
    *x = *r;
    x->body = qp_alloc(p, (size_t)(r->nbody + 1) * sizeof *x->body);
    rf_fe_var *vars = qp_alloc(p, (size_t)(r->nvars + 2 * r->nbody + 1) * sizeof *vars);
    if (!x->body || !vars) return -1;
    memcpy(x->body, r->body, (size_t)r->nbody * sizeof *x->body);
    if (r->nvars) memcpy(vars, r->vars, (size_t)r->nvars * sizeof *vars);
    x->vars = vars;
    int32_t nvars = r->nvars, done = 0;
    rf_buf note;
    rf_buf_init(&note);
    int rc = 0;
    for (int32_t i = 0; i < r->nbody && rc >= 0; i++) {
        const rf_fe_lit *l = r->body[i];
        if (l->kind != RF_FE_ATOM) continue;
        rc = l->negated ? rewrite_negation(p, b, r, i, full, neg, &note)
                        : rewrite_atom(p, b, r, i, full, uses, consumed, x, &nvars, over, &note);
        done += rc > 0;
    }
    if (rc >= 0 && done) {
        x->nvars = nvars;
        out->r = x;
        out->over = over;
        out->neg = neg;
        out->note = qp_sprintf(p, "%s", rf_buf_cstr(&note));
    }
    rf_buf_free(&note);
    return rc < 0 || p->oom ? -1 : 0;
}
