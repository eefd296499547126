/*
** runtime/cpu/rt_cpu_sort.c: SORT on the CPU, and strings in byte order.
**
** Owns: string ranks (codes are not in byte order: a sort or a min of
** strings goes through each code's rank among the codes present), the
** pruning of a sort with a limit to the rows that can be among the first
** (selection on the first key), and the permutation a sort leaves.
*/
#include "rt_cpu_internal.h"

/* ---- strings in order: byte order via ranks ------------------------- */

/* qsort_r's comparator: the dictionary comes as the context, so that two
** runs in one process never share state. */
static int code_cmp(const void *a, const void *b, void *dict)
{
    return rf_rt_dict_cmp(dict, *(const uint32_t *)a, *(const uint32_t *)b);
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The index of code in the ascending array u[0..m) (it is there). */
static int64_t u32_find(const uint32_t *u, int64_t m, uint32_t code)
{
    int64_t lo = 0, hi = m - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (u[mid] < code) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* rank_strings for few rows against a large dictionary: time in the rows,
** not in the dictionary's size. */
static rf_status rank_strings_few(exec *x, const uint32_t *codes, int64_t n, uint32_t **ranks,
                                  uint32_t **codes_of_rank)
{
    uint32_t *u = rf_malloc((size_t)(n + 1) * sizeof *u), *byname = NULL, *rank_of_u = NULL;
    uint32_t *r = rf_malloc((size_t)(n + 1) * sizeof *r);
    if (!u || !r) goto oom;
    if (n) memcpy(u, codes, (size_t)n * sizeof *u); /* a rank's share may be empty: codes NULL */
    qsort(u, (size_t)n, sizeof *u, u32_cmp);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || u[m - 1] != u[i]) u[m++] = u[i];
    byname = rf_malloc((size_t)(m + 1) * sizeof *byname);
    rank_of_u = rf_malloc((size_t)(m + 1) * sizeof *rank_of_u);
    if (!byname || !rank_of_u) goto oom;
    memcpy(byname, u, (size_t)m * sizeof *u);
    qsort_r(byname, (size_t)m, sizeof *byname, code_cmp, x->dict);
    for (int64_t i = 0; i < m; i++) rank_of_u[u32_find(u, m, byname[i])] = (uint32_t)i;
    for (int64_t i = 0; i < n; i++) r[i] = rank_of_u[u32_find(u, m, codes[i])];
    free(u);
    free(rank_of_u);
    *ranks = r;
    if (codes_of_rank) *codes_of_rank = byname;
    else free(byname);
    return RF_OK;
oom:
    free(u);
    free(r);
    free(byname);
    free(rank_of_u);
    return RF_ENOMEM;
}

/* ranks[i]: the byte-order rank of codes[i] among the codes present, so that
** sorting by rank sorts by string; codes_of_rank maps back. */
rf_status rf_cx_rank_strings(exec *x, const uint32_t *codes, int64_t n, uint32_t **ranks, uint32_t **codes_of_rank)
{
    *ranks = NULL;
    if (codes_of_rank) *codes_of_rank = NULL;
    int64_t dn = rf_rt_dict_count(x->dict);
    if (n * 8 < dn) return rank_strings_few(x, codes, n, ranks, codes_of_rank);
    uint32_t *map = rf_malloc((size_t)(dn + 1) * sizeof *map);
    uint32_t *r = rf_malloc((size_t)(n + 1) * sizeof *r);
    uint32_t *present = NULL;
    if (!map || !r) goto oom;
    memset(map, 0xff, (size_t)(dn + 1) * sizeof *map);
    int64_t np = 0;
    for (int64_t i = 0; i < n; i++)
        if (map[codes[i]] == UINT32_MAX) {
            map[codes[i]] = 0;
            np++;
        }
    present = rf_malloc((size_t)(np + 1) * sizeof *present);
    if (!present) goto oom;
    np = 0;
    for (int64_t c = 0; c < dn; c++)
        if (map[c] != UINT32_MAX) present[np++] = (uint32_t)c;
    qsort_r(present, (size_t)np, sizeof *present, code_cmp, x->dict);
    for (int64_t i = 0; i < np; i++) map[present[i]] = (uint32_t)i;
    for (int64_t i = 0; i < n; i++) r[i] = map[codes[i]];
    free(map);
    *ranks = r;
    if (codes_of_rank) *codes_of_rank = present;
    else free(present);
    return RF_OK;
oom:
    free(map);
    free(r);
    free(present);
    return RF_ENOMEM;
}

/* A key whose unsigned order is the column's order (ascending), for the
** numeric and date types: floats in the total order of rf_val_cmp_float. */
static uint64_t order_key(const rf_rt_rel *r, int32_t col, int64_t row)
{
    switch (r->types[col]) {
    case RF_TYPE_FLOAT: return rf_val_float_key(((const double *)r->cols[col])[row]);
    case RF_TYPE_DATE: return (uint64_t)(int64_t)((const int32_t *)r->cols[col])[row] ^ (UINT64_C(1) << 63);
    case RF_TYPE_BOOL: return ((const uint8_t *)r->cols[col])[row];
    case RF_TYPE_DEC128: {
        /* saturated to 64 bits: monotone (a larger value never gets a
        ** smaller key), one to one within int64's range, where totals
        ** nearly always lie; the rows limit_candidates keeps by it are
        ** then a superset of the first ones, which the full sort orders */
        rf_dec128 v = ((const rf_dec128 *)r->cols[col])[row];
        int64_t c = v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
        return (uint64_t)c ^ (UINT64_C(1) << 63);
    }
    default: return (uint64_t)((const int64_t *)r->cols[col])[row] ^ (UINT64_C(1) << 63);
    }
}

/* The k-th smallest of v[0..n) (v is reordered): quickselect. */
static uint64_t kth_smallest(uint64_t *v, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = v[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) {
                uint64_t t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return v[k];
    }
    return v[k];
}

/* With a limit, only the rows whose first key is at least as good as the
** limit-th best first key can be among the first `limit` rows: selecting
** them is linear, and the full sort (string ranks included) then runs on
** them alone. The key may be coarser than the value (a wide decimal's is
** saturated) as long as it is monotone: ties only keep more rows. NULL
** rows: no pruning applies. */
static rf_status limit_candidates(const rf_hir_kernel *k, const rf_rt_rel *in, int64_t **rows, int64_t *n)
{
    *rows = NULL;
    *n = in->nrows;
    int64_t limit = k->limit;
    if (limit < 0 || k->norder < 1 || in->nrows < 4 * limit + 4096) return RF_OK;
    int32_t col = k->order[0].col;
    if (in->types[col] == RF_TYPE_STRING) return RF_OK; /* no 64-bit key */
    int64_t nr = in->nrows;
    uint64_t *keys = rf_malloc((size_t)nr * sizeof *keys);
    if (!keys) return RF_ENOMEM;
    uint64_t flip = k->order[0].desc ? UINT64_MAX : 0;
    for (int64_t i = 0; i < nr; i++) keys[i] = order_key(in, col, i) ^ flip;
    uint64_t t = limit ? kth_smallest(keys, nr, limit - 1) : 0;
    int64_t m = 0;
    for (int64_t i = 0; i < nr && limit; i++) m += (order_key(in, col, i) ^ flip) <= t;
    int64_t *r = rf_malloc((size_t)(m + 1) * sizeof *r);
    if (!r) {
        free(keys);
        return RF_ENOMEM;
    }
    m = 0;
    for (int64_t i = 0; i < nr && limit; i++)
        if ((order_key(in, col, i) ^ flip) <= t) r[m++] = i;
    free(keys);
    *rows = r;
    *n = m;
    return RF_OK;
}

rf_status rf_cx_k_sort(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *all = &x->vals[k->in[0]].rel;
    int64_t *cand = NULL, ncand = 0;
    rf_status st = limit_candidates(k, all, &cand, &ncand);
    if (st) return st;
    /* sort the candidates only (all rows when nothing could be pruned) */
    rf_rt_rel sub;
    memset(&sub, 0, sizeof sub);
    const rf_rt_rel *in = all;
    if (cand) {
        if ((st = rf_cx_gather_rel(x, all, cand, ncand, all->types, &sub))) {
            free(cand);
            return st;
        }
        in = &sub;
    }
    rf_cpu_table v;
    if ((st = rf_cx_view_of(in, &v))) {
        rf_rt_rel_free(&sub);
        free(cand);
        return st;
    }
    int32_t keys[4096];
    uint8_t desc[4096];
    uint32_t *ranks[4096];
    int32_t nk = k->norder < 4096 ? k->norder : 4096;
    memset(ranks, 0, sizeof(ranks[0]) * (size_t)(nk + 1));
    for (int32_t i = 0; i < nk && !st; i++) {
        keys[i] = k->order[i].col;
        desc[i] = (uint8_t)k->order[i].desc;
        if (in->types[keys[i]] == RF_TYPE_STRING && in->nrows) {
            /* strings sort by bytes, not by code: sort by rank instead */
            st = rf_cx_rank_strings(x, in->cols[keys[i]], in->nrows, &ranks[i], NULL);
            if (!st) v.cols[keys[i]].data = ranks[i];
        }
    }
    int64_t *perm = NULL;
    if (!st) st = rf_cpu_sort_perm(x->pool, &v, keys, desc, nk, &perm);
    for (int32_t i = 0; i < nk; i++) free(ranks[i]);
    free(v.cols);
    rf_rt_rel_free(&sub);
    if (!st && cand)
        for (int64_t i = 0; i < ncand; i++) perm[i] = cand[perm[i]];
    free(cand);
    if (st) return st;
    rf_cx_val_clear(&x->vals[k->out]);
    x->vals[k->out].idx.a = perm;
    /* the candidates sorted: the first `limit` of them are the output's
    ** (more when a coarse first key tied, as a wide decimal's saturated one) */
    x->vals[k->out].idx.n = in == all ? all->nrows : ncand > k->limit ? k->limit : ncand;
    return RF_OK;
}
