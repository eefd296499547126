/*
** runtime/dist/dist_topk.c: an ordered, limited output's first rows on each
** rank before they gather on rank 0.
**
** Owns: which sorts with a limit may cut their input on each rank first
** (nothing but the sort and the gathers by its order read that input), and
** the cut itself: a rank's first `limit` rows in the sort's order. The sort
** orders by every column (harmony/hir_lower.c appends the columns it was
** not given, ascending), a total order: a row among the first `limit` of all
** ranks' rows is among the first `limit` of its own rank's, so rank 0,
** sorting the N * limit rows it gathers, keeps the rows one process keeps,
** ties included (TPC-H q10 at SF 10: 20 rows per rank gathered instead of
** 380 K with their strings).
*/
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether some kernel other than sort (and the gathers by its order) reads var. */
static int read_elsewhere(const rf_hir_program *p, int32_t var, const rf_hir_kernel *sort)
{
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k == sort || (k->kind == RF_HIR_GATHER && k->idx == sort->out)) continue;
            for (int32_t i = 0; i < k->nin; i++)
                if (k->in[i] == var) return 1;
        }
    return 0;
}

rf_status dist_topk_prepare(rf_rt_dist *x)
{
    const rf_hir_program *p = x->p;
    x->cut = rf_calloc((size_t)x->nkernel_ids + 1, 1);
    if (!x->cut) return RF_ENOMEM;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->kind != RF_HIR_SORT || k->limit < 0 || k->nin < 1 || k->id < 0 || k->id >= x->nkernel_ids)
                continue;
            int32_t in = k->in[0];
            /* the order must cover every column (a total order), and the
            ** input be the program's own, read by nothing else */
            if (k->norder < p->vars[in]->ncols || p->vars[in]->role == RF_HIR_ROLE_OUTPUT ||
                p->vars[in]->role == RF_HIR_ROLE_INPUT || read_elsewhere(p, in, k))
                continue;
            x->cut[k->id] = 1;
        }
    return RF_OK;
}

int dist_topk_cuts(const rf_rt_dist *x, const rf_hir_kernel *k)
{
    return k->kind == RF_HIR_SORT && k->id >= 0 && k->id < x->nkernel_ids && x->cut && x->cut[k->id];
}

/* A key whose unsigned order is a number's, date's or boolean's order: the
** CPU sort's (runtime/cpu/rt_cpu_sort.c), floats in the total order of
** rf_val_cmp_float (-0 == 0, NaN after +inf). */
static uint64_t order_key(const rf_rt_rel *r, int32_t col, int64_t row)
{
    switch (r->types[col]) {
    case RF_TYPE_FLOAT: return rf_val_float_key(((const double *)r->cols[col])[row]);
    case RF_TYPE_DATE: return (uint64_t)(int64_t)((const int32_t *)r->cols[col])[row] ^ (UINT64_C(1) << 63);
    case RF_TYPE_BOOL: return ((const uint8_t *)r->cols[col])[row];
    default: return (uint64_t)((const int64_t *)r->cols[col])[row] ^ (UINT64_C(1) << 63);
    }
}

typedef struct topk_ctx {
    const rf_rt_rel *r;
    const rf_rt_dict *dict;
    const rf_hir_kernel *k;
} topk_ctx;

/* Rows i and j in k's order: negative when i comes first. */
static int row_cmp(const topk_ctx *c, int64_t i, int64_t j)
{
    for (int32_t t = 0; t < c->k->norder; t++) {
        int32_t col = c->k->order[t].col;
        int v;
        if (c->r->types[col] == RF_TYPE_STRING) {
            uint32_t a = ((const uint32_t *)c->r->cols[col])[i], b = ((const uint32_t *)c->r->cols[col])[j];
            v = a == b ? 0 : rf_rt_dict_cmp(c->dict, a, b);
            v = (v > 0) - (v < 0);
        } else if (c->r->types[col] == RF_TYPE_DEC128) {
            v = rf_val_cmp_dec128(((const rf_dec128 *)c->r->cols[col])[i], ((const rf_dec128 *)c->r->cols[col])[j]);
        } else {
            uint64_t a = order_key(c->r, col, i), b = order_key(c->r, col, j);
            v = (a > b) - (a < b);
        }
        if (v) return c->k->order[t].desc ? -v : v;
    }
    return 0;
}

/* heap[0..n): a max-heap in the order (the worst kept row on top). */
static void sift_down(const topk_ctx *c, int64_t *heap, int64_t n, int64_t at)
{
    for (;;) {
        int64_t l = 2 * at + 1, worst = at;
        if (l < n && row_cmp(c, heap[l], heap[worst]) > 0) worst = l;
        if (l + 1 < n && row_cmp(c, heap[l + 1], heap[worst]) > 0) worst = l + 1;
        if (worst == at) return;
        int64_t t = heap[at];
        heap[at] = heap[worst];
        heap[worst] = t;
        at = worst;
    }
}

static int i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

rf_status rf_rt_dist_topk(const rf_hir_kernel *k, const rf_rt_rel *rel, const rf_rt_dict *dict, rf_rt_rel *out)
{
    memset(out, 0, sizeof *out);
    int64_t limit = k->limit < rel->nrows ? k->limit : rel->nrows;
    if (limit < 0) limit = rel->nrows;
    topk_ctx c = {rel, dict, k};
    int64_t *heap = rf_malloc((size_t)(limit + 1) * sizeof *heap);
    if (!heap) return RF_ENOMEM;
    /* the first `limit` rows, then each later row that comes before the
    ** worst kept one replaces it: n log(limit) comparisons */
    int64_t n = 0;
    for (int64_t i = 0; i < rel->nrows && limit; i++) {
        if (n < limit) {
            heap[n++] = i;
            if (n == limit)
                for (int64_t a = n / 2; a-- > 0;) sift_down(&c, heap, n, a);
        } else if (row_cmp(&c, i, heap[0]) < 0) {
            heap[0] = i;
            sift_down(&c, heap, n, 0);
        }
    }
    /* kept in the rank's row order */
    qsort(heap, (size_t)n, sizeof *heap, i64_cmp);
    rf_status st = rf_rt_rel_alloc(out, rel->ncols, rel->types, n);
    for (int32_t col = 0; col < rel->ncols && !st; col++) {
        int w = rf_rt_type_width(rel->types[col]);
        for (int64_t i = 0; i < n; i++)
            memcpy((char *)out->cols[col] + i * w, (const char *)rel->cols[col] + heap[i] * w, (size_t)w);
    }
    free(heap);
    return st;
}
