/*
** queryplan/qp_lattice.c: the commands of a recursive min or max.
**
** Owns: the semi-naive steps of a lattice predicate (frontend/monotone.c),
** the best value per key of a set of candidates (Aggregate), the candidates
** that improve on the full relation (lattice_improve: the round's delta),
** and the full relation with the delta's rows replacing those of their keys
** (lattice_update, in place). A lattice predicate's relations hold one row
** per key; the key is every column but the last, the value.
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

/* The lattice op c over q's value (the last column of shape). */
static int lattice_agg(rf_qp_program *p, rf_qp_cmd *c, const rf_fe_pred *q, const rf_qp_rel *shape)
{
    int32_t nk = shape->ncols - 1;
    c->aggs = qp_alloc(p, sizeof *c->aggs);
    if (!c->aggs) return -1;
    c->aggs[0] = (rf_qp_agg){q->lattice_fn, nk, shape->types[nk]};
    c->naggs = 1;
    c->loc = q->loc;
    return 0;
}

int qp_lattice_improve(rf_qp_program *p, rf_qp_block *b, const rf_fe_pred *q, rf_qp_rel *best, rf_qp_rel *full,
                       rf_qp_rel *newr)
{
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_LATTICE_IMPROVE, newr, 2);
    if (!c || lattice_agg(p, c, q, best)) return -1;
    c->in[0] = best;
    c->in[1] = full;
    c->note = qp_sprintf(p, "%s: keys whose %s improved, and new keys", q->name, rf_agg_fn_name(q->lattice_fn));
    qp_block_append(p, b, c);
    return p->oom ? -1 : 0;
}

/* In place: each key of the delta gets its new value (a per-key table on the
** backends, so that a round costs time in its delta, not in the relation). */
int qp_lattice_replace(rf_qp_program *p, rf_qp_block *b, const rf_fe_pred *q, rf_qp_rel *full, rf_qp_rel *delta)
{
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_LATTICE_UPDATE, full, 2);
    if (!c || lattice_agg(p, c, q, full)) return -1;
    c->in[0] = full;
    c->in[1] = delta;
    c->note = qp_sprintf(p, "%s: the improved keys' values replaced in place", q->name);
    qp_block_append(p, b, c);
    return p->oom ? -1 : 0;
}
