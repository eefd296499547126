/*
** queryplan/pass_partagg.c: the "partagg" pass, aggregates split into a
** partial aggregate and a combining one.
**
** Owns: the decision which aggregates decompose, and the rewrite
**
**     dst = aggregate in group (g) -> (aggs)
** into
**     P   = aggregate in group (g) -> (parts) partial
**     C   = aggregate P group (0 .. |g| - 1) -> (combined parts)
**     dst = map C -> (group columns, each aggregate from its parts)
**
** (the map only where an avg or a shared part needs one). Why: with several
** ranks (runtime/dist) an aggregate whose input is not hashed by its group
** columns moved every input row to the rank of its group first; a partial
** aggregate groups each rank's own rows where they are (runtime/dist/
** dist_place.c moves nothing before it), so only one row per group and rank
** moves, to be combined. TPC-H q01 groups 6 M lines into 4 groups; q18 and
** q21 group lineitem, which each rank reads in order of orderkey, by it.
**
** Parts: count() is a count, combined by a total; total(x) of decimals a
** total (of ints: left whole, an int part could overflow where the exact
** whole does not); min and max themselves; avg(x) a total of x and a count, divided after combining
** (in wide decimals: div_round(sum * 10^6, count * 10^6) is avg's
** div_round(sum, count), the same digits, and the sum is exact; the mean is
** then narrowed to decimal, as avg's own is). A total of decimals is a wide
** decimal (rf_value.h), so partial totals combine exactly. Only exact
** aggregates decompose: a total or avg of floats would add in another order.
** Left whole: aggregates in a loop's blocks (each round would pay the
** combining), and inputs whose key lies within the group columns (every
** group one row: nothing to save). The program option no_partagg
** (`--no-partagg`) turns the pass off. On one process the combining
** aggregate reads the partial one's rows, one per group.
*/
#include "qp_internal.h"

/* A part of the partial aggregate: fn over column col of the input. */
typedef struct part {
    rf_agg_fn fn; /* COUNT (col -1), TOTAL, MIN, MAX */
    int32_t col;
} part;

static int decomposes(const rf_qp_cmd *c)
{
    const rf_qp_rel *in = c->in[0];
    if (c->ngroup > 16) return 0; /* a rank's hash placement holds 16 columns */
    for (int32_t i = 0; i < c->naggs; i++) {
        const rf_qp_agg *a = &c->aggs[i];
        switch (a->fn) {
        case RF_AGG_COUNT: break;
        case RF_AGG_MIN:
        case RF_AGG_MAX:
            if (a->col < 0) return 0;
            break;
        case RF_AGG_TOTAL:
        case RF_AGG_AVG:
            /* (not of wide decimals: each part's total is checked against
            ** the wide range, so a part beyond it would stop a total within
            ** it; a decimal's parts, 128 bits, cannot leave it. Not of ints
            ** either: a part is an int, so a rank's part could overflow where
            ** the whole, added exactly, does not (rows of 2^63 - 1 and
            ** -(2^63 - 1) on 2 ranks stopped a total of 5 with an overflow) */
            if (a->col < 0 || in->types[a->col] != RF_TYPE_DECIMAL) return 0;
            if (a->fn == RF_AGG_AVG && a->type != RF_TYPE_DECIMAL) return 0;
            break;
        default: return 0;
        }
    }
    return 1;
}

/* Whether in's rows are one per group already: a key within the groups. */
static int keyed_by_groups(const rf_qp_cmd *c)
{
    const rf_qp_rel *in = c->in[0];
    uint64_t g = 0;
    for (int32_t i = 0; i < c->ngroup; i++)
        if (c->group[i] < 64) g |= UINT64_C(1) << c->group[i];
    if (in->nkeys == 0) return 1;
    if (in->nkeys > 0 && in->nkeys <= 64) {
        uint64_t k = in->nkeys == 64 ? UINT64_MAX : (UINT64_C(1) << in->nkeys) - 1;
        if (!(k & ~g)) return 1;
    }
    return in->keyset && !(in->keyset & ~g);
}

/* Whether block b runs more than once: a later block (or b) branches back to it. */
static int in_loop(const rf_qp_program *p, int32_t b)
{
    for (int32_t j = b; j < p->nblocks; j++) {
        const rf_qp_term *t = &p->blocks[j]->term;
        if (t->kind == RF_QP_T_HALT) continue;
        if (t->target <= b || (t->kind == RF_QP_T_BRANCH && t->else_target <= b)) return 1;
    }
    return 0;
}

static int32_t part_of(part *parts, int32_t *n, rf_agg_fn fn, int32_t col)
{
    for (int32_t i = 0; i < *n; i++)
        if (parts[i].fn == fn && parts[i].col == col) return i;
    parts[*n].fn = fn;
    parts[*n].col = col;
    return (*n)++;
}

/* Rewrites command i of block bl (an aggregate that decomposes). The
** commands it now takes (2 or 3), or -1 (out of memory). */
static int split(rf_qp_program *p, rf_qp_block *bl, int32_t i)
{
    rf_qp_cmd *c = bl->cmds[i];
    rf_qp_rel *in = c->in[0], *dst = c->dst;
    int32_t ng = c->ngroup;
    part *parts = qp_alloc(p, (size_t)(2 * c->naggs + 1) * sizeof *parts);
    int32_t *at = qp_ints(p, c->naggs + 1), *cnt_of = qp_ints(p, c->naggs + 1);
    if (!parts || !at || !cnt_of) return -1;
    int32_t np = 0;
    for (int32_t a = 0; a < c->naggs; a++) {
        const rf_qp_agg *g = &c->aggs[a];
        rf_agg_fn fn = g->fn == RF_AGG_AVG ? RF_AGG_TOTAL : g->fn;
        at[a] = part_of(parts, &np, fn, fn == RF_AGG_COUNT ? -1 : g->col);
        cnt_of[a] = g->fn == RF_AGG_AVG ? part_of(parts, &np, RF_AGG_COUNT, -1) : -1;
    }
    /* the combined parts are dst's columns as they are: no map after */
    int direct = np == c->naggs;
    for (int32_t a = 0; a < c->naggs && direct; a++) direct = at[a] == a && c->aggs[a].fn != RF_AGG_AVG;

    rf_qp_rel *pr = qp_temp_new(p, ng + np), *cr = direct ? dst : qp_temp_new(p, ng + np);
    if (!pr || !cr) return -1;
    for (int32_t j = 0; j < ng; j++) {
        pr->types[j] = in->types[c->group[j]];
        pr->colnames[j] = in->colnames[c->group[j]];
        if (!direct) cr->types[j] = pr->types[j], cr->colnames[j] = pr->colnames[j];
    }
    for (int32_t j = 0; j < np; j++) {
        rf_type it = parts[j].fn == RF_AGG_COUNT ? RF_TYPE_INT : in->types[parts[j].col];
        /* a total of decimals is wide (the frontend's rule), so that combining is exact */
        pr->types[ng + j] = parts[j].fn == RF_AGG_TOTAL && it == RF_TYPE_DECIMAL ? RF_TYPE_DEC128 : it;
        if (!direct) cr->types[ng + j] = pr->types[ng + j];
    }

    rf_qp_cmd *pc = qp_cmd_new(p, RF_QP_AGGREGATE, pr, 1), *cc = qp_cmd_new(p, RF_QP_AGGREGATE, cr, 1);
    if (!pc || !cc) return -1;
    pc->in[0] = in;
    pc->group = c->group;
    pc->ngroup = ng;
    pc->aggs = qp_alloc(p, (size_t)(np + 1) * sizeof *pc->aggs);
    pc->naggs = np;
    pc->partial = 1;
    pc->loc = c->loc;
    pc->note = c->note;
    cc->in[0] = pr;
    cc->group = qp_ints(p, ng + 1);
    cc->ngroup = ng;
    cc->aggs = qp_alloc(p, (size_t)(np + 1) * sizeof *cc->aggs);
    cc->naggs = np;
    cc->loc = c->loc;
    if (!pc->aggs || !cc->group || !cc->aggs) return -1;
    for (int32_t j = 0; j < ng; j++) cc->group[j] = j;
    for (int32_t j = 0; j < np; j++) {
        rf_type t = pr->types[ng + j];
        pc->aggs[j] = (rf_qp_agg){parts[j].fn, parts[j].col, t};
        /* counts add up; totals, minima and maxima are their own combination */
        cc->aggs[j] = (rf_qp_agg){parts[j].fn == RF_AGG_COUNT ? RF_AGG_TOTAL : parts[j].fn, ng + j, t};
    }
    qp_block_insert(p, bl, i, pc);
    qp_block_insert(p, bl, i + 1, cc);
    if (direct) {
        qp_block_remove(bl, i + 2);
        return p->oom ? -1 : 2;
    }
    /* c becomes the map from the combined parts to dst */
    rf_qp_expr **outs = qp_alloc(p, (size_t)(ng + c->naggs + 1) * sizeof *outs);
    if (!outs) return -1;
    for (int32_t j = 0; j < ng; j++) outs[j] = qp_e_col(p, 0, j, cr->types[j]);
    for (int32_t a = 0; a < c->naggs; a++) {
        const rf_qp_agg *g = &c->aggs[a];
        rf_qp_expr *v = qp_e_col(p, 0, ng + at[a], cr->types[ng + at[a]]);
        if (g->fn == RF_AGG_AVG && v) {
            /* sum / count in wide decimals: div_round(sum * 10^6, count *
            ** 10^6) is avg's div_round(sum, count), and an int sum is scaled
            ** first (never overflowing: 128 bits); the mean then narrows to
            ** decimal with avg's range check */
            rf_qp_expr *n = qp_e_col(p, 0, ng + cnt_of[a], RF_TYPE_INT);
            rf_qp_expr *dn = qp_e_new(p, RF_QP_E_CAST, RF_TYPE_DEC128, 1);
            rf_qp_expr *num = v;
            if (v->type != RF_TYPE_DEC128 && (num = qp_e_new(p, RF_QP_E_CAST, RF_TYPE_DEC128, 1))) num->args[0] = v;
            rf_qp_expr *q = qp_e_new(p, RF_QP_E_BINOP, RF_TYPE_DEC128, 2);
            rf_qp_expr *nar = qp_e_new(p, RF_QP_E_CAST, RF_TYPE_DECIMAL, 1);
            if (!n || !dn || !num || !q || !nar) return -1;
            dn->args[0] = n;
            q->op = '/';
            q->args[0] = num;
            q->args[1] = dn;
            nar->args[0] = q;
            v = nar;
        }
        outs[ng + a] = v;
    }
    if (p->oom) return -1;
    c->op = RF_QP_MAPFILTER;
    c->in[0] = cr;
    c->outs = outs;
    c->nouts = ng + c->naggs;
    c->filter = NULL;
    c->group = NULL;
    c->ngroup = 0;
    c->aggs = NULL;
    c->naggs = 0;
    c->note = NULL;
    return 3;
}

rf_status rf_qp_pass_partagg(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    if (p->no_partagg) return RF_OK;
    for (int32_t b = 0; b < p->nblocks && !p->oom; b++) {
        rf_qp_block *bl = p->blocks[b];
        if (in_loop(p, b)) continue;
        for (int32_t i = 0; i < bl->ncmds; i++) {
            rf_qp_cmd *c = bl->cmds[i];
            if (c->op != RF_QP_AGGREGATE || c->partial || c->in[0] == c->dst || !decomposes(c) || keyed_by_groups(c))
                continue;
            if (c->in[0]->card <= c->dst->card) continue; /* no fewer rows to move */
            int took = split(p, bl, i);
            if (took < 0) return RF_ENOMEM;
            i += took - 1; /* past the partial, the combining aggregate and the map, if any */
        }
    }
    return p->oom ? RF_ENOMEM : RF_OK;
}
