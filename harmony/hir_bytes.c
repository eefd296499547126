/*
** harmony/hir_bytes.c: the bytes a kernel has to move at least, for
** `--profile` and the floors of `redfox tpch bench` (docs/BENCHMARKS.md).
**
** Owns the traffic model: a kernel is charged the columns it actually reads
** and writes, at their stored widths (int, decimal, float 8 bytes; date and
** string code 4; boolean 1), each once per row it touches, plus 8 bytes per
** entry of the row-index vectors it reads or writes. Hash tables, scans,
** scratch space and the string dictionary's bytes are not counted: they are
** the algorithm's, not the query's, so the floor stays an honest lower bound
** that any implementation must pay. Both devices use it, so their byte counts
** agree.
*/
#include "rf_harmony.h"

#include <string.h>

static int64_t width(rf_type t)
{
    switch (t) {
    case RF_TYPE_STRING:
    case RF_TYPE_DATE: return 4;
    case RF_TYPE_BOOL: return 1;
    default: return 8;
    }
}

/* Marks the columns of side that e reads (mark[c] |= bit). */
static void mark_cols(const rf_qp_expr *e, int32_t side, uint8_t *mark, int32_t ncols, uint8_t bit)
{
    if (!e) return;
    if (e->kind == RF_QP_E_COL && e->side == side && e->col >= 0 && e->col < ncols) mark[e->col] |= bit;
    for (int32_t i = 0; i < e->nargs; i++) mark_cols(e->args[i], side, mark, ncols, bit);
}

static int64_t all_cols(const rf_hir_var *v)
{
    int64_t w = 0;
    for (int32_t c = 0; c < v->ncols; c++) w += width(v->types[c]);
    return w;
}

static int64_t some_cols(const rf_hir_var *v, const int32_t *cols, int32_t n)
{
    int64_t w = 0;
    for (int32_t i = 0; i < n; i++)
        if (cols[i] >= 0 && cols[i] < v->ncols) w += width(v->types[cols[i]]);
    return w;
}

/* A map-like kernel over side s of var v: the filter's columns for every row
** it considers (n), the columns only the outputs read for the rows kept. */
static int64_t map_side(const rf_hir_kernel *k, const rf_hir_var *v, int32_t s, int64_t n, int64_t kept)
{
    uint8_t small[64], *mark = small;
    if (v->ncols > 64) return all_cols(v) * n; /* (wider relations: the whole rows) */
    memset(small, 0, sizeof small);
    mark_cols(k->filter, s, mark, v->ncols, 1);
    for (int32_t i = 0; i < k->nouts; i++) mark_cols(k->outs[i], s, mark, v->ncols, 2);
    int64_t b = 0;
    for (int32_t c = 0; c < v->ncols; c++) {
        if (mark[c] & 1)
            b += width(v->types[c]) * n;
        else if (mark[c] & 2)
            b += width(v->types[c]) * kept;
    }
    return b;
}

void rf_hir_kernel_bytes(const rf_hir_program *p, const rf_hir_kernel *k, const int64_t *in_rows, int64_t out_before,
                         int64_t out_rows, int64_t *bytes_in, int64_t *bytes_out)
{
    const rf_hir_var *out = p->vars[k->out];
    const rf_hir_var *in0 = k->nin > 0 ? p->vars[k->in[0]] : NULL;
    const rf_hir_var *in1 = k->nin > 1 ? p->vars[k->in[1]] : NULL;
    int64_t n0 = k->nin > 0 ? in_rows[0] : 0, n1 = k->nin > 1 ? in_rows[1] : 0;
    int64_t bi = 0, bo = 0;
    switch (k->kind) {
    case RF_HIR_MAP:
        bi = map_side(k, in0, 0, n0, out_rows);
        bo = all_cols(out) * out_rows;
        break;
    case RF_HIR_JOIN_MAP: {
        int64_t m = in_rows[k->nin - 1]; /* the pairs */
        bi = 16 * m + map_side(k, in0, 0, m, out_rows) + map_side(k, in1, 1, m, out_rows);
        bo = all_cols(out) * out_rows;
        break;
    }
    case RF_HIR_GATHER_MAP: {
        int64_t m = in_rows[k->nin - 1];
        bi = 8 * m + map_side(k, in0, 0, m, out_rows);
        bo = all_cols(out) * out_rows;
        break;
    }
    case RF_HIR_JOIN_INDEX:
        bi = some_cols(in0, k->lkeys, k->nkeys) * n0 + (in1 ? some_cols(in1, k->rkeys, k->nkeys) * n1 : 0);
        bo = 16 * out_rows;
        break;
    case RF_HIR_ANTI_INDEX:
        bi = some_cols(in0, k->lkeys, k->nkeys) * n0 + (in1 ? some_cols(in1, k->rkeys, k->nkeys) * n1 : 0);
        bo = 8 * out_rows;
        break;
    case RF_HIR_GROUP:
        bi = some_cols(in0, k->group, k->ngroup) * n0;
        bo = 8 * n0; /* a group id per row */
        break;
    case RF_HIR_REDUCE: {
        /* the group ids, the aggregated columns per row, the group columns
        ** once per group */
        int64_t n = k->nin > 1 ? in_rows[k->nin - 1] : n0;
        bi = 8 * n + some_cols(in0, k->group, k->ngroup) * out_rows;
        for (int32_t a = 0; a < k->naggs; a++)
            if (k->aggs[a].col >= 0 && k->aggs[a].col < in0->ncols) bi += width(in0->types[k->aggs[a].col]) * n;
        bo = all_cols(out) * out_rows;
        break;
    }
    case RF_HIR_SORT:
        for (int32_t i = 0; i < k->norder; i++)
            if (k->order[i].col >= 0 && k->order[i].col < in0->ncols) bi += width(in0->types[k->order[i].col]) * n0;
        bo = 8 * out_rows;
        break;
    case RF_HIR_GATHER:
        bi = 8 * out_rows + all_cols(in0) * out_rows;
        bo = all_cols(out) * out_rows;
        break;
    case RF_HIR_INSERT:
        /* the new relations' rows; only the rows added are written */
        for (int32_t i = 1; i < k->nin; i++)
            if (p->vars[k->in[i]]->kind == RF_HIR_V_REL) bi += all_cols(p->vars[k->in[i]]) * in_rows[i];
        bo = all_cols(out) * (out_rows > out_before ? out_rows - out_before : 0);
        break;
    case RF_HIR_FACTS: bo = all_cols(out) * out_rows; break;
    case RF_HIR_CLEAR: break;
    default: /* CONCAT, UNIQUE, DIFFERENCE, COPY: whole rows in and out */
        for (int32_t i = 0; i < k->nin; i++)
            if (p->vars[k->in[i]]->kind == RF_HIR_V_REL) bi += all_cols(p->vars[k->in[i]]) * in_rows[i];
        bo = all_cols(out) * out_rows;
        break;
    }
    *bytes_in = bi;
    *bytes_out = bo;
}

int32_t rf_hir_max_inputs(const rf_hir_program *p)
{
    int32_t m = 1;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->nin > m) m = p->blocks[b]->kernels[j]->nin;
    return m;
}
