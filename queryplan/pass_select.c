/*
** queryplan/pass_select.c: the "select" pass, selection push-down.
**
** Owns: moving filter conjuncts as close to the data as they can go. A
** conjunct of a join that reads one side only moves below the join: into
** the command that produced that side when the join is its only reader
** (through anti-joins, dedupes, copies and, on group columns, aggregates),
** otherwise into a new MapFilter scanning that side. A map's conjuncts move
** into the command that produced its input when the map is its only reader.
** An equality between a column of each side of a join becomes a join key,
** so that a filtered cross product becomes an equi-join. A conjunct that
** may fail at run time, and those after it, never move below a join or an
** anti-join (qp_e_safe_prefix), so that whether a rule raises an error does
** not depend on the plan.
*/
#include "qp_internal.h"

/* The pass's state in a block: reads and writers (qp_index.c, kept exact
** as commands are inserted and inputs change), and the command whose
** filter is being pushed, at position at (what is pushed lands in it or in
** producers before it, so insertions move it, and a producer is found
** searching back from it rather than through the whole block). */
typedef struct sel {
    qp_index ix;
    int32_t at;
} sel;

static int32_t index_of(const rf_qp_block *bl, const sel *sx, const rf_qp_cmd *c)
{
    for (int32_t i = sx->at; i >= 0; i--)
        if (bl->cmds[i] == c) return i;
    return -1;
}

/* c->in[k] = x, in the index too. */
static void set_input(sel *sx, rf_qp_cmd *c, int32_t k, rf_qp_rel *x)
{
    if (c->in[k] == x) return;
    if (c->in[k]->id < sx->ix.cap) sx->ix.reads[c->in[k]->id]--;
    c->in[k] = x;
    if (x->id < sx->ix.cap) sx->ix.reads[x->id]++;
}

/* The conjunction of conj[0..n) over the columns of r (as side 0) is moved
** below the command `consumer`, which reads r. Returns the relation the
** consumer must read instead of r (r itself when the filter went into r's
** producer), or NULL when the conjuncts should stay (only when !make_scan). */
static rf_qp_rel *push_down(rf_qp_program *p, rf_qp_block *bl, sel *sx, rf_qp_cmd *consumer, rf_qp_rel *r,
                            rf_qp_expr **conj, int32_t n, int make_scan)
{
    if (p->oom) return NULL;
    rf_qp_cmd *P = qp_index_writer(&sx->ix, bl, r);
    if (P && qp_index_reads(&sx->ix, r) == 1) {
        /* the producer's expressions go into the filter: not past the plan's bounds */
        int fits = 1;
        if (P->op == RF_QP_MAPFILTER || P->op == RF_QP_MAPJOIN || P->op == RF_QP_ANTIJOIN)
            for (int32_t k = 0; k < n && fits > 0; k++) fits = qp_e_subst_fits(p, conj[k], 0, P->outs, P->nouts);
        if (fits < 0) return NULL;
        switch (fits ? P->op : RF_QP_FACTS) { /* FACTS: none of the cases, so a new scan */
        case RF_QP_MAPFILTER:
        case RF_QP_MAPJOIN:
        {
            rf_qp_expr **m = qp_alloc(p, (size_t)(n + 1) * sizeof *m);
            if (!m) return NULL;
            for (int32_t k = 0; k < n; k++)
                if (!(m[k] = qp_e_subst(p, conj[k], 0, P->outs))) return NULL;
            P->filter = qp_e_and_n(p, P->filter, m, n);
            return r;
        }
        case RF_QP_ANTIJOIN: {
            /* below the anti-join only what cannot fail, and what precedes
            ** all that may: the rest is evaluated on the rows it keeps */
            int32_t safe = qp_e_safe_prefix(conj, n);
            if (safe < n && !make_scan) break;
            rf_qp_expr **m = qp_alloc(p, (size_t)(n + 1) * sizeof *m);
            if (!m) return NULL;
            for (int32_t k = 0; k < safe; k++) m[k] = qp_e_subst(p, conj[k], 0, P->outs);
            if (safe) {
                rf_qp_rel *x = push_down(p, bl, sx, P, P->in[0], m, safe, 1);
                if (x) set_input(sx, P, 0, x);
            }
            if (safe == n) return r;
            conj += safe;
            n -= safe;
            break; /* the rest: a new scan of r */
        }
        case RF_QP_UNIQUE:
        case RF_QP_COPY: {
            if (P->check_fd) break; /* the check must see every row */
            rf_qp_rel *x = push_down(p, bl, sx, P, P->in[0], conj, n, 1);
            if (x) set_input(sx, P, 0, x);
            return r;
        }
        case RF_QP_AGGREGATE: {
            /* a filter on group columns commutes with the grouping */
            uint8_t *mark = qp_alloc(p, (size_t)r->ncols + 1);
            if (!mark) return NULL;
            for (int32_t k = 0; k < n; k++) qp_e_mark_cols(conj[k], 0, mark);
            int ok = 1;
            for (int32_t c = P->ngroup; c < r->ncols; c++) ok &= !mark[c];
            if (!ok) break;
            rf_qp_expr **m = qp_alloc(p, (size_t)(n + 1) * sizeof *m);
            if (!m) return NULL;
            for (int32_t k = 0; k < n; k++) {
                m[k] = qp_e_copy(p, conj[k]);
                qp_e_remap(m[k], 0, P->group);
            }
            rf_qp_rel *x = push_down(p, bl, sx, P, P->in[0], m, n, 1);
            if (x) set_input(sx, P, 0, x);
            return r;
        }
        default: break;
        }
    }
    if (!make_scan) return NULL;
    /* a new scan of r that applies the filter */
    rf_qp_rel *t = qp_temp_new(p, r->ncols);
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_MAPFILTER, t, 1);
    if (!t || !c) return NULL;
    for (int32_t i = 0; i < r->ncols; i++) {
        t->types[i] = r->types[i];
        t->colnames[i] = r->colnames[i];
    }
    c->in[0] = r;
    c->filter = qp_e_and_n(p, c->filter, conj, n);
    if (qp_cmd_identity_outs(p, c)) return NULL;
    c->loc = consumer->loc;
    int32_t at = index_of(bl, sx, consumer);
    qp_block_insert(p, bl, at, c);
    if (p->oom || qp_index_add(p, &sx->ix, bl->id, c)) return NULL;
    if (at <= sx->at) sx->at++;
    return t;
}

/* Equalities between the two sides of a join become keys. */
static void keys_from_filter(rf_qp_program *p, rf_qp_cmd *c, rf_qp_expr **conj, int32_t *n)
{
    int32_t m = 0;
    for (int32_t k = 0; k < *n; k++) {
        rf_qp_expr *x = conj[k];
        if (x->kind == RF_QP_E_CMP && x->cmp == RF_CMP_EQ && x->args[0]->kind == RF_QP_E_COL &&
            x->args[1]->kind == RF_QP_E_COL && x->args[0]->side != x->args[1]->side) {
            const rf_qp_expr *l = x->args[0]->side == 0 ? x->args[0] : x->args[1];
            const rf_qp_expr *r = x->args[0]->side == 0 ? x->args[1] : x->args[0];
            int32_t *lk = qp_ints(p, c->nkeys + 1), *rk = qp_ints(p, c->nkeys + 1);
            if (!lk || !rk) return;
            if (c->nkeys) {
                memcpy(lk, c->lkeys, (size_t)c->nkeys * sizeof *lk);
                memcpy(rk, c->rkeys, (size_t)c->nkeys * sizeof *rk);
            }
            lk[c->nkeys] = l->col;
            rk[c->nkeys] = r->col;
            c->lkeys = lk;
            c->rkeys = rk;
            c->nkeys++;
            continue;
        }
        conj[m++] = x;
    }
    *n = m;
}

/* Rewrites the references to side `from` of a two-sided conjunct into
** references to the other side through the join keys (x = y in the keys
** means a filter on x is a filter on y). 0 when some column of `from` read
** by e is not a key. */
static int transfer(const rf_qp_cmd *c, rf_qp_expr *e, int32_t from, int dry)
{
    if (e->kind == RF_QP_E_COL && e->side == from) {
        for (int32_t k = 0; k < c->nkeys; k++) {
            int32_t mine = from == 0 ? c->lkeys[k] : c->rkeys[k], other = from == 0 ? c->rkeys[k] : c->lkeys[k];
            if (mine != e->col) continue;
            if (!dry) {
                e->side = 1 - from;
                e->col = other;
            }
            return 1;
        }
        return 0;
    }
    for (int32_t i = 0; i < e->nargs; i++)
        if (!transfer(c, e->args[i], from, dry)) return 0;
    return 1;
}

static rf_qp_expr *rebuild(rf_qp_program *p, rf_qp_expr **conj, int32_t n)
{
    return qp_e_and_n(p, NULL, conj, n);
}

static void push_cmd(rf_qp_program *p, rf_qp_block *bl, sel *sx, rf_qp_cmd *c)
{
    int32_t n;
    rf_qp_expr **conj = qp_e_conjuncts(p, c->filter, &n);
    if (!n) return;
    if (c->op == RF_QP_MAPFILTER) {
        if (qp_e_sides(c->filter) & ~1u) return;
        if (push_down(p, bl, sx, c, c->in[0], conj, n, 0)) {
            c->filter = NULL;
            return;
        }
        /* the producer drops rows (an anti-join): what may fail stays here */
        int32_t safe = qp_e_safe_prefix(conj, n);
        if (safe > 0 && safe < n && push_down(p, bl, sx, c, c->in[0], conj, safe, 0))
            c->filter = rebuild(p, conj + safe, n - safe);
        return;
    }
    /* A conjunct that may fail, and every one after it, stays at the join
    ** in order: below it, it would be evaluated on rows the join drops (a
    ** run-time error the rule's solutions never reach), and a conjunct
    ** after it would drop rows before it is evaluated (hiding one they
    ** do reach). */
    int32_t safe = qp_e_safe_prefix(conj, n), ntail = n - safe;
    rf_qp_expr **tail = conj + safe;
    n = safe;
    keys_from_filter(p, c, conj, &n);
    rf_qp_expr **side[2];
    int32_t ns[2] = {0, 0}, keep = 0;
    side[0] = qp_alloc(p, (size_t)(n + 1) * sizeof *side[0]);
    side[1] = qp_alloc(p, (size_t)(n + 1) * sizeof *side[1]);
    if (!side[0] || !side[1]) return;
    for (int32_t k = 0; k < n; k++) {
        unsigned s = qp_e_sides(conj[k]);
        if (s == 1u) {
            side[0][ns[0]++] = conj[k];
        } else if (s == 2u) {
            qp_e_set_side(conj[k], 1, 0);
            side[1][ns[1]++] = conj[k];
        } else if (s == 3u && (transfer(c, conj[k], 0, 1) || transfer(c, conj[k], 1, 1))) {
            /* both sides, but one only through join keys: filter the bigger input */
            int to = transfer(c, conj[k], 0, 1) ? 1 : 0;
            if (to == 1 && transfer(c, conj[k], 1, 1) && c->in[0]->card > c->in[1]->card) to = 0;
            transfer(c, conj[k], 1 - to, 0);
            qp_e_set_side(conj[k], 1, 0);
            side[to][ns[to]++] = conj[k];
        } else {
            conj[keep++] = conj[k];
        }
    }
    for (int32_t k = 0; k < ntail; k++) conj[keep++] = tail[k];
    c->filter = rebuild(p, conj, keep);
    for (int32_t s = 0; s < 2; s++) {
        if (!ns[s]) continue;
        /* a self-join reads its input twice: each side gets its own scan */
        rf_qp_rel *x = push_down(p, bl, sx, c, c->in[s], side[s], ns[s], 1);
        if (x) set_input(sx, c, s, x);
    }
}

rf_status rf_qp_pass_select(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    sel sx;
    if (qp_index_build(p, &sx.ix)) {
        qp_index_free(&sx.ix);
        return RF_ENOMEM;
    }
    for (int32_t b = 0; b < p->nblocks; b++) {
        rf_qp_block *bl = p->blocks[b];
        /* consumers before producers, so that what is pushed into a
        ** producer is pushed on when the producer's turn comes */
        for (int32_t i = bl->ncmds - 1; i >= 0 && !p->oom; i--) {
            rf_qp_cmd *c = bl->cmds[i];
            sx.at = i;
            if ((c->op == RF_QP_MAPFILTER || c->op == RF_QP_MAPJOIN) && c->filter) push_cmd(p, bl, &sx, c);
            i = sx.at; /* insertions above moved it */
        }
    }
    qp_index_free(&sx.ix);
    return p->oom ? RF_ENOMEM : RF_OK;
}
