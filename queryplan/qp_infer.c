/*
** queryplan/qp_infer.c: the properties of relations, inferred from the
** commands that write them.
**
** Owns: estimated cardinalities (inputs unknown -> RF_QP_DEFAULT_INPUT_CARD,
** facts exact, joins and filters by simple selectivities), uniqueness (which
** lets the "unique" pass drop needless dedupes), keys and known sort order.
** Estimates only steer join ordering, so they are simple and deterministic
** rather than clever.
*/
#include "qp_internal.h"

#include <stdlib.h>

#define CARD_MAX 4.0e18 /* below INT64_MAX, so products saturate safely */

static double selectivity(const rf_qp_expr *e)
{
    if (!e) return 1.0;
    switch (e->kind) {
    case RF_QP_E_AND: {
        double s = 1.0;
        for (int32_t i = 0; i < e->nargs; i++) s *= selectivity(e->args[i]);
        return s;
    }
    case RF_QP_E_CMP:
        switch (e->cmp) {
        case RF_CMP_EQ: return 0.1;
        case RF_CMP_NE: return 0.9;
        default: return 1.0 / 3.0;
        }
    case RF_QP_E_LIKE: return 0.25;
    case RF_QP_E_NOT: {
        double s = 1.0 - selectivity(e->args[0]);
        return s < 0.1 ? 0.1 : s;
    }
    case RF_QP_E_CONST: return e->c.i ? 1.0 : 0.0;
    default: return 0.5;
    }
}

/* The output column that reproduces column k of side s as a plain column,
** directly or through a join key equal to an output column of the other
** side; -1 when none does. */
static int32_t out_of(const rf_qp_cmd *c, int32_t s, int32_t k)
{
    for (int32_t o = 0; o < c->nouts; o++) {
        if (qp_e_is_col(c->outs[o], s, k)) return o;
        for (int32_t j = 0; j < c->nkeys && c->op == RF_QP_MAPJOIN; j++) {
            int32_t mine = s == 0 ? c->lkeys[j] : c->rkeys[j], other = s == 0 ? c->rkeys[j] : c->lkeys[j];
            if (mine == k && qp_e_is_col(c->outs[o], 1 - s, other)) return o;
        }
    }
    return -1;
}

/* The output columns that reproduce the columns `cols` of side s, as a
** column set; 0 when one of them is not reproduced (or lies past 64). */
static uint64_t map_keyset(const rf_qp_cmd *c, int32_t s, uint64_t cols)
{
    uint64_t r = 0;
    for (int32_t k = 0; k < 64; k++) {
        if (!(cols >> k & 1)) continue;
        int32_t o = out_of(c, s, k);
        if (o < 0 || o >= 64) return 0;
        r |= UINT64_C(1) << o;
    }
    return r;
}

/* Whether every column of side s (or its leading key columns, or its row
** key, when the relation has one) is reproduced by the outputs: then
** distinct rows of s give distinct output rows. */
static int covers(const rf_qp_cmd *c, int32_t s)
{
    const rf_qp_rel *in = c->in[s];
    if (in->keyset && map_keyset(c, s, in->keyset)) return 1;
    int32_t need = in->nkeys >= 0 ? in->nkeys : in->ncols;
    for (int32_t k = 0; k < need; k++)
        if (out_of(c, s, k) < 0) return 0;
    return 1;
}

/* Whether the join keys of side s include all the columns of cols. */
static int joined_on(const rf_qp_cmd *c, int32_t s, uint64_t cols)
{
    for (int32_t k = 0; k < 64; k++) {
        if (!(cols >> k & 1)) continue;
        int found = 0;
        for (int32_t j = 0; j < c->nkeys && !found; j++) found = (s == 0 ? c->lkeys[j] : c->rkeys[j]) == k;
        if (!found) return 0;
    }
    return 1;
}

/* Whether the join matches each row of side 1-s with at most one row of
** side s: the join keys include all of side s's key columns (its leading
** key or its row key). */
static int key_joined(const rf_qp_cmd *c, int32_t s)
{
    const rf_qp_rel *in = c->in[s];
    if (in->keyset && joined_on(c, s, in->keyset)) return 1;
    if (in->nkeys < 0) return 0;
    for (int32_t k = 0; k < in->nkeys; k++) {
        int found = 0;
        for (int32_t j = 0; j < c->nkeys && !found; j++) found = (s == 0 ? c->lkeys[j] : c->rkeys[j]) == k;
        if (!found) return 0;
    }
    return 1;
}

typedef struct props {
    double card;
    int exact, unique;
    uint64_t keyset;
    int32_t nkeys;
    int32_t nsort;
    rf_fe_order *sort;
} props;

static props cmd_props(const rf_qp_cmd *c)
{
    props r = {0, 0, 1, 0, -1, 0, NULL};
    const rf_qp_rel *a = c->nin > 0 ? c->in[0] : NULL, *b = c->nin > 1 ? c->in[1] : NULL;
    double ca = a ? (double)a->card : 0, cb = b ? (double)b->card : 0;
    switch (c->op) {
    case RF_QP_MAPFILTER:
        r.card = ca * selectivity(c->filter);
        if (r.card < 1 && ca >= 1 && c->filter) r.card = 1;
        r.unique = a->unique && covers(c, 0);
        r.keyset = map_keyset(c, 0, a->keyset);
        if (a->nkeys >= 0 && c->nouts >= a->nkeys) {
            int prefix = 1;
            for (int32_t k = 0; k < a->nkeys && prefix; k++) prefix = qp_e_is_col(c->outs[k], 0, k);
            if (prefix) r.nkeys = a->nkeys;
        }
        r.exact = a->card_exact && !c->filter;
        break;
    case RF_QP_MAPJOIN:
        if (c->nkeys == 0) r.card = ca * cb;
        else if (key_joined(c, 1)) r.card = ca;
        else if (key_joined(c, 0)) r.card = cb;
        else r.card = ca > cb ? ca : cb;
        r.card *= selectivity(c->filter);
        if (r.card < 1 && ca >= 1 && cb >= 1) r.card = 1;
        r.unique = (a->unique && b->unique && covers(c, 0) && covers(c, 1)) ||
                   (a->unique && key_joined(c, 1) && covers(c, 0)) ||
                   (b->unique && key_joined(c, 0) && covers(c, 1));
        /* a row key of one side stays one when each of its rows meets at
        ** most one row of the other; the two together always are one */
        if (key_joined(c, 1)) r.keyset = map_keyset(c, 0, a->keyset);
        if (!r.keyset && key_joined(c, 0)) r.keyset = map_keyset(c, 1, b->keyset);
        if (!r.keyset && a->keyset && b->keyset) {
            uint64_t ka = map_keyset(c, 0, a->keyset), kb = map_keyset(c, 1, b->keyset);
            if (ka && kb) r.keyset = ka | kb;
        }
        break;
    case RF_QP_ANTIJOIN:
        r.card = ca;
        r.unique = a->unique && covers(c, 0);
        r.keyset = map_keyset(c, 0, a->keyset);
        break;
    case RF_QP_AGGREGATE:
        r.card = c->ngroup == 0 ? 1 : ca / 10 < 1 ? (ca > 0 ? 1 : 0) : ca / 10;
        r.nkeys = c->ngroup;
        if (c->ngroup > 0 && c->ngroup <= 64) r.keyset = c->ngroup == 64 ? UINT64_MAX : (UINT64_C(1) << c->ngroup) - 1;
        break;
    case RF_QP_UNION:
        for (int32_t i = 0; i < c->nin; i++) r.card += (double)c->in[i]->card;
        break;
    case RF_QP_DIFFERENCE:
        r.card = ca;
        r.keyset = a->keyset;
        break;
    case RF_QP_UNIQUE:
        /* no order promised: a hash-based dedupe is as valid as a sort */
        r.card = ca;
        r.exact = a->card_exact && a->unique;
        r.keyset = a->keyset;
        break;
    case RF_QP_COPY:
        r.card = ca;
        r.exact = a->card_exact;
        r.unique = a->unique;
        r.keyset = a->keyset;
        r.nkeys = a->nkeys;
        r.nsort = a->nsort;
        r.sort = a->sort;
        break;
    case RF_QP_FACTS:
        r.card = (double)c->nrows;
        r.exact = 1;
        r.nsort = c->dst->ncols;
        r.sort = NULL; /* all columns ascending: filled by the caller */
        break;
    case RF_QP_CLEAR:
        r.card = 0;
        r.exact = 1;
        break;
    case RF_QP_ORDERLIMIT:
        r.card = c->limit >= 0 && (double)c->limit < ca ? (double)c->limit : ca;
        r.exact = a->card_exact;
        r.unique = a->unique;
        r.keyset = a->keyset;
        r.nsort = c->norder;
        r.sort = c->order;
        break;
    }
    if (r.card > CARD_MAX) r.card = CARD_MAX;
    if (r.card < 0) r.card = 0;
    return r;
}

static int same_sort(const rf_qp_rel *r, const props *x)
{
    if (r->nsort != x->nsort) return 0;
    for (int32_t i = 0; i < r->nsort; i++)
        if (r->sort[i].col != x->sort[i].col || r->sort[i].desc != x->sort[i].desc) return 0;
    return 1;
}

void rf_qp_infer(rf_qp_program *p)
{
    if (p->oom) return;
    uint8_t *seen = rf_calloc((size_t)p->nrels + 1, 1);
    if (!seen) {
        p->oom = 1;
        return;
    }
    for (int32_t i = 0; i < p->nrels; i++) {
        rf_qp_rel *r = p->rels[i];
        r->nsort = 0;
        r->sort = NULL;
        r->card_exact = 0;
        r->keyset = 0;
        if (r->kind == RF_QP_REL_INPUT) {
            r->card = RF_QP_DEFAULT_INPUT_CARD;
            r->unique = p->inputs_are_sets;
            /* a declared key (the loader rejects a file that breaks it) */
            if (r->ninput_key > 0) {
                r->unique = 1;
                for (int32_t k = 0; k < r->ninput_key; k++)
                    r->keyset |= r->input_key[k] < 64 ? UINT64_C(1) << r->input_key[k] : 0;
                for (int32_t k = 0; k < r->ninput_key; k++)
                    if (r->input_key[k] >= 64) r->keyset = 0; /* not expressible: no row key */
            }
        } else {
            r->card = 0;
            r->unique = 1; /* optimistic; writers lower it */
        }
        if (!r->fd_checked) r->nkeys = -1;
    }
    /* a few rounds, so that reads inside loops see the loop's writes;
    ** estimates of recursive relations stay rough on purpose */
    for (int round = 0; round < 3; round++) {
        memset(seen, 0, (size_t)p->nrels);
        for (int32_t b = 0; b < p->nblocks; b++) {
            const rf_qp_block *bl = p->blocks[b];
            for (int32_t i = 0; i < bl->ncmds; i++) {
                const rf_qp_cmd *c = bl->cmds[i];
                rf_qp_rel *d = c->dst;
                props x = cmd_props(c);
                if (c->op == RF_QP_FACTS && d->ncols) {
                    rf_fe_order *o = qp_alloc(p, (size_t)d->ncols * sizeof *o);
                    if (o)
                        for (int32_t j = 0; j < d->ncols; j++) o[j] = (rf_fe_order){j, 0};
                    x.sort = o;
                    if (!o) x.nsort = 0;
                } else if (c->op == RF_QP_FACTS) {
                    x.nsort = 0;
                }
                int64_t card = (int64_t)x.card;
                if (!seen[d->id]) {
                    seen[d->id] = 1;
                    d->card = card;
                    d->card_exact = x.exact;
                    if (round == 0 || d->kind == RF_QP_REL_TEMP) d->unique = x.unique;
                    else d->unique = d->unique && x.unique;
                    d->nsort = x.nsort;
                    d->sort = x.sort;
                    if (round == 0 || d->kind == RF_QP_REL_TEMP || d->keyset == x.keyset) d->keyset = x.keyset;
                    else d->keyset = 0;
                    if (!d->fd_checked) d->nkeys = x.nkeys;
                } else {
                    /* another write of the same relation (loops, FD checks) */
                    if (c->op == RF_QP_UNIQUE && c->in[0] == d) {
                        d->unique = 1;
                        continue;
                    }
                    /* a recursive relation keeps the estimate of its first write: the
                    ** loop's rounds would only inflate it, and its deltas should look
                    ** as small as they usually are next to the full relations */
                    int recursive = d->pred && d->pred->recursive && d->kind != RF_QP_REL_OUTPUT;
                    if (card > d->card && !recursive) d->card = card;
                    d->card_exact = 0;
                    d->unique = d->unique && x.unique;
                    if (d->keyset != x.keyset) d->keyset = 0;
                    if (!same_sort(d, &x)) {
                        d->nsort = 0;
                        d->sort = NULL;
                    }
                    if (!d->fd_checked && d->nkeys != x.nkeys) d->nkeys = -1;
                }
            }
        }
    }
    free(seen);
}
