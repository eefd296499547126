/*
** queryplan/qp_lattice.c: the commands of a recursive min or max.
**
** Owns: the semi-naive steps of a lattice predicate (frontend/monotone.c),
** built from the plan's ordinary commands so that every backend runs them:
** the best value per key of a set of candidates (Aggregate), the candidates
** that improve on the full relation (a MapJoin keeping the better values and
** an AntiJoin keeping the new keys: the round's delta), and the full
** relation with the delta's rows replacing those of their keys. A lattice
** predicate's relations hold one row per key; the key is every column but
** the last, the value.
*/
#include "qp_internal.h"

static rf_qp_rel *like(rf_qp_program *p, const rf_qp_rel *shape)
{
    rf_qp_rel *t = qp_temp_new(p, shape->ncols);
    if (!t) return NULL;
    for (int32_t j = 0; j < shape->ncols; j++) {
        t->types[j] = shape->types[j];
        t->colnames[j] = shape->colnames[j];
    }
    return t;
}

/* Key columns 0 .. nk-1 on both sides. */
static int key_pairs(rf_qp_program *p, rf_qp_cmd *c, int32_t nk)
{
    c->lkeys = qp_ints(p, nk);
    c->rkeys = qp_ints(p, nk);
    if (!c->lkeys || !c->rkeys) return -1;
    for (int32_t k = 0; k < nk; k++) c->lkeys[k] = c->rkeys[k] = k;
    c->nkeys = nk;
    return 0;
}

rf_qp_rel *qp_lattice_best(rf_qp_program *p, rf_qp_block *b, const rf_fe_pred *q, rf_qp_rel *src, rf_qp_rel *dst)
{
    int32_t nk = src->ncols - 1;
    if (!dst) dst = like(p, src);
    rf_qp_cmd *c = dst ? qp_cmd_new(p, RF_QP_AGGREGATE, dst, 1) : NULL;
    if (!c) return NULL;
    c->in[0] = src;
    c->group = qp_ints(p, nk);
    c->aggs = qp_alloc(p, sizeof *c->aggs);
    if (!c->group || !c->aggs) return NULL;
    for (int32_t k = 0; k < nk; k++) c->group[k] = k;
    c->ngroup = nk;
    c->aggs[0] = (rf_qp_agg){q->lattice_fn, nk, src->types[nk]};
    c->naggs = 1;
    c->loc = q->loc;
    c->note = qp_sprintf(p, "%s: the %s per key", q->name, rf_agg_fn_name(q->lattice_fn));
    qp_block_append(p, b, c);
    return p->oom ? NULL : dst;
}

int qp_lattice_improve(rf_qp_program *p, rf_qp_block *b, const rf_fe_pred *q, rf_qp_rel *best, rf_qp_rel *full,
                       rf_qp_rel *newr)
{
    int32_t nk = best->ncols - 1;
    rf_qp_rel *better = like(p, best), *fresh = like(p, best);
    rf_qp_cmd *j = better ? qp_cmd_new(p, RF_QP_MAPJOIN, better, 2) : NULL;
    rf_qp_cmd *a = fresh ? qp_cmd_new(p, RF_QP_ANTIJOIN, fresh, 2) : NULL;
    rf_qp_cmd *u = qp_cmd_new(p, RF_QP_UNION, newr, 2);
    if (!j || !a || !u || key_pairs(p, j, nk) || key_pairs(p, a, nk)) return -1;
    j->in[0] = a->in[0] = best;
    j->in[1] = a->in[1] = full;
    rf_type t = best->types[nk];
    j->filter = qp_e_cmp(p, q->lattice_fn == RF_AGG_MIN ? RF_CMP_LT : RF_CMP_GT, qp_e_col(p, 0, nk, t),
                         qp_e_col(p, 1, nk, t));
    j->outs = qp_alloc(p, (size_t)best->ncols * sizeof *j->outs);
    if (!j->filter || !j->outs || qp_cmd_identity_outs(p, a)) return -1;
    for (int32_t k = 0; k < best->ncols; k++) j->outs[k] = qp_e_col(p, 0, k, best->types[k]);
    j->nouts = best->ncols;
    j->loc = a->loc = u->loc = q->loc;
    j->note = qp_sprintf(p, "%s: keys whose %s improved", q->name, rf_agg_fn_name(q->lattice_fn));
    a->note = qp_sprintf(p, "%s: new keys", q->name);
    u->in[0] = better;
    u->in[1] = fresh;
    qp_block_append(p, b, j);
    qp_block_append(p, b, a);
    qp_block_append(p, b, u);
    return p->oom ? -1 : 0;
}

/* In place (full = antijoin full, delta; full = union full, delta), so that
** the backends see the usual insertion into a recursive relation. */
int qp_lattice_replace(rf_qp_program *p, rf_qp_block *b, const rf_fe_pred *q, rf_qp_rel *full, rf_qp_rel *delta)
{
    int32_t nk = full->ncols - 1;
    rf_qp_rel *keep = full;
    rf_qp_cmd *a = qp_cmd_new(p, RF_QP_ANTIJOIN, keep, 2);
    rf_qp_cmd *u = qp_cmd_new(p, RF_QP_UNION, full, 2);
    if (!a || !u || key_pairs(p, a, nk)) return -1;
    a->in[0] = full;
    a->in[1] = delta;
    if (qp_cmd_identity_outs(p, a)) return -1;
    a->loc = u->loc = q->loc;
    a->note = qp_sprintf(p, "%s: the keys the round did not improve", q->name);
    u->in[0] = keep;
    u->in[1] = delta;
    qp_block_append(p, b, a);
    qp_block_append(p, b, u);
    return p->oom ? -1 : 0;
}
