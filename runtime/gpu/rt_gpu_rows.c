/*
** runtime/gpu/rt_gpu_rows.c: kernels that move rows on the GPU.
**
** Owns: CONCAT, SORT (stable LSD radix sorts, one per key, strings by rank;
** a limited sort that fully sorts only the rows that can reach the first
** places; few rows sorted on the host), GATHER, COPY and FACTS.
*/
#include "rf_rt_data.h"
#include "rf_value.h"
#include "rt_gpu_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

rf_status rf_gx_k_concat(gx *x, const rf_hir_kernel *k)
{
    const rf_hir_var *ov = x->p->vars[k->out];
    int64_t total = 0;
    for (int32_t i = 0; i < k->nin; i++) total += x->vals[k->in[i]].nrows;
    gval r;
    rf_status st = rf_gx_rel_alloc(x, &r, ov->types, ov->ncols, total, total);
    for (int32_t c = 0; c < ov->ncols && !st; c++) {
        uint64_t w = (uint64_t)wid(ov->types[c]), at = 0;
        for (int32_t i = 0; i < k->nin && !st; i++) {
            const gval *in = &x->vals[k->in[i]];
            if (in->nrows) st = rf_gx_dcopy(x, colp(&r, c) + at * w, colp(in, c), (uint64_t)in->nrows * w);
            at += (uint64_t)in->nrows;
        }
    }
    if (st) {
        rf_gx_val_clear(x, &r, ov->ncols);
        return st;
    }
    rf_gx_var_set(x, k->out, &r);
    return RF_OK;
}

/* The stable permutation of the n rows of in by order[0..norder): one radix
** sort per key, least significant first. */
static rf_status sort_rows(gx *x, const gval *in, const rf_type *types, const rf_fe_order *order, int32_t norder,
                           int64_t n, gval *out)
{
    memset(out, 0, sizeof *out);
    rf_status st = rf_gx_iota(x, n, &out->a);
    out->nrows = n;
    /* a wide decimal's key is two passes: its low word (unsigned), then its
    ** high word (signed), the more significant last */
    int wide_hi = 0;
    for (int32_t i = norder - 1; i >= 0 && !st && n > 1; wide_hi ? (void)0 : (void)i--) {
        int32_t col = order[i].col;
        rf_type t = types[col];
        int kind = t == RF_TYPE_FLOAT ? 1 : t == RF_TYPE_DATE ? 2 : t == RF_TYPE_STRING ? 3 : t == RF_TYPE_BOOL ? 4 : 0;
        if (t == RF_TYPE_DEC128) {
            kind = wide_hi ? 6 : 5;
            wide_hi = !wide_hi;
        }
        int bits = kind <= 1 || kind >= 5 ? 64 : kind == 4 ? 8 : 32;
        if (order[i].desc) bits = 64;
        gbuf ranks = {0, 0}, keys = {0, 0}, ks = {0, 0}, perm = {0, 0};
        int64_t lo = 0;
        rf_gpu_args a;
        memset(&a, 0, sizeof a);
        if (kind == 3) {
            /* strings sort by bytes, not by code: sort by rank instead */
            st = string_ranks(x, colp(in, col), n, &ranks, &lo, NULL);
            RF_A_RANKS(a) = ranks.p;
            RF_A_RANK_LO(a) = lo;
        }
        if (!st) st = galloc(x, (uint64_t)n * 8, &keys);
        a.n = n;
        a.c0[0] = colp(in, col);
        a.r0 = out->a.p;
        RF_A_SORT_KIND(a) = kind;
        RF_A_SORT_DESC(a) = order[i].desc != 0;
        RF_A_SORT_KEYS_OUT(a) = keys.p;
        if (!st) st = rf_gx_launch(x, "rf_sort_key", n, &a);
        if (!st) st = rf_gx_sort_pairs(x, keys.p, out->a.p, n, bits, &ks, &perm);
        if (!st) {
            gfree(x, &out->a);
            out->a = perm;
            memset(&perm, 0, sizeof perm);
        }
        gfree(x, &ranks);
        gfree(x, &keys);
        gfree(x, &ks);
        gfree(x, &perm);
    }
    if (st) rf_gx_val_clear(x, out, 0);
    return st;
}

/* Rows up to this many are sorted on the host: the sort keys' columns
** read back, the permutation copied to the device. On the device each key
** is a radix sort (CUB) behind a key kernel, and a string key its ranks
** first: 0.305 ms on an H100 for TPC-H q01's 4 rows by two strings, most of
** the run after its fused kernel; the copies here are a few microseconds. */
#define HOST_SORT_ROWS 1024

/* The sort key of value i of a column as sort_key (rf_gather.cuh) makes it:
** unsigned order is the value order (strings are compared apart). */
static uint64_t host_sort_key(const uint8_t *col, rf_type t, int64_t i)
{
    switch (t) {
    case RF_TYPE_FLOAT: {
        double v;
        memcpy(&v, col + i * 8, 8);
        return rf_val_float_key(v);
    }
    case RF_TYPE_DATE: {
        int32_t v;
        memcpy(&v, col + i * 4, 4);
        return (uint64_t)((uint32_t)v ^ 0x80000000u);
    }
    case RF_TYPE_BOOL: return col[i];
    default: {
        int64_t v;
        memcpy(&v, col + i * 8, 8);
        return (uint64_t)v ^ (UINT64_C(1) << 63);
    }
    }
}

typedef struct host_sort {
    const rf_rt_dict *dict;
    const rf_type *types;
    const rf_fe_order *order;
    int32_t norder;
    uint8_t **cols; /* the order's columns, read back (cols[i] for order[i]) */
} host_sort;

/* <0, 0, >0 as row a sorts before, with or after row b */
static int host_sort_cmp(const host_sort *h, int64_t a, int64_t b)
{
    for (int32_t i = 0; i < h->norder; i++) {
        rf_type t = h->types[h->order[i].col];
        int c;
        if (t == RF_TYPE_STRING) {
            uint32_t ca, cb;
            memcpy(&ca, h->cols[i] + a * 4, 4);
            memcpy(&cb, h->cols[i] + b * 4, 4);
            int64_t la = 0, lb = 0;
            const char *sa = ca == cb ? NULL : rf_rt_dict_str(h->dict, ca, &la);
            const char *sb = ca == cb ? NULL : rf_rt_dict_str(h->dict, cb, &lb);
            c = ca == cb ? 0 : rf_val_cmp_str(sa, la, sb, lb);
        } else if (t == RF_TYPE_DEC128) {
            rf_dec128 va, vb;
            memcpy(&va, h->cols[i] + a * 16, 16);
            memcpy(&vb, h->cols[i] + b * 16, 16);
            c = rf_val_cmp_dec128(va, vb);
        } else {
            uint64_t ka = host_sort_key(h->cols[i], t, a), kb = host_sort_key(h->cols[i], t, b);
            c = (ka > kb) - (ka < kb);
        }
        if (c) return h->order[i].desc ? -c : c;
    }
    return 0;
}

/* sort_rows for n <= HOST_SORT_ROWS rows, on the host: the same stable
** order (a merge sort of row numbers, ties in row order). */
static rf_status sort_rows_host(gx *x, const gval *in, const rf_type *types, const rf_fe_order *order, int32_t norder,
                                int64_t n, gval *out)
{
    memset(out, 0, sizeof *out);
    uint8_t *cols[RF_GPU_MAXC + 1];
    int64_t *perm = rf_malloc((size_t)n * 16 + 16), *tmp = perm ? perm + n + 1 : NULL;
    rf_status st = perm ? RF_OK : RF_ENOMEM;
    int32_t got = 0;
    for (; got < norder && got <= RF_GPU_MAXC && !st; got++) {
        int w = wid(types[order[got].col]);
        cols[got] = rf_malloc((size_t)n * (size_t)w + 8);
        if (!cols[got]) st = RF_ENOMEM;
        else st = x->g.ops->d2h(&x->g, cols[got], colp(in, order[got].col), (uint64_t)n * (uint64_t)w);
        if (!cols[got]) break;
    }
    if (!st && got < norder) st = RF_EINTERNAL;
    host_sort h = {x->str.dict, types, order, norder, cols};
    for (int64_t i = 0; i < n && !st; i++) perm[i] = i;
    for (int64_t w = 1; w < n && !st; w *= 2) {
        for (int64_t i = 0; i < n; i += 2 * w) {
            int64_t m = i + w < n ? i + w : n, e = i + 2 * w < n ? i + 2 * w : n, p = i, q = m, o = i;
            while (p < m && q < e) tmp[o++] = host_sort_cmp(&h, perm[p], perm[q]) <= 0 ? perm[p++] : perm[q++];
            while (p < m) tmp[o++] = perm[p++];
            while (q < e) tmp[o++] = perm[q++];
        }
        memcpy(perm, tmp, (size_t)n * 8);
    }
    if (!st) st = galloc(x, (uint64_t)n * 8, &out->a);
    /* (h2d has read perm when it returns: no wait for the GPU here) */
    if (!st) st = x->g.ops->h2d(&x->g, out->a.p, perm, (uint64_t)n * 8);
    out->nrows = n;
    for (int32_t i = 0; i < got; i++) free(cols[i]);
    free(perm);
    if (st) rf_gx_val_clear(x, out, 0);
    return st;
}

/* With a limit, only the rows whose first key ties with or beats the
** limit-th place can reach the first places: sort by the first key alone,
** find where its ties end, and sort just those rows by the whole order (no
** string ranks of the rest). The result is shorter than in: GATHER reads
** only its first `limit` places. 1 in *done when it applied. */
static rf_status sort_limited(gx *x, const rf_hir_kernel *k, const gval *in, const rf_hir_var *iv, gval *out, int *done)
{
    *done = 0;
    int64_t n = in->nrows, limit = k->limit;
    if (limit < 1 || k->norder < 2 || n < 4 * limit + 4096 || iv->types[k->order[0].col] == RF_TYPE_STRING)
        return RF_OK;
    gval first;
    rf_status st = sort_rows(x, in, iv->types, k->order, 1, n, &first);
    if (st) return st;
    /* the first key of the rows in sorted order, then where the ties with
    ** the limit-th row end (read back in chunks from there) */
    gval byfirst;
    st = rf_gx_rel_gather(x, in, iv->types, iv->ncols, first.a.p, n, &byfirst);
    int32_t col = k->order[0].col;
    int w = wid(iv->types[col]);
    int64_t m = limit;
    char ref[16], buf[16 * 4096]; /* (up to a wide decimal's 16 bytes a value) */
    if (!st) st = x->g.ops->d2h(&x->g, ref, colp(&byfirst, col) + (gptr)((limit - 1) * w), (uint64_t)w);
    for (int64_t at = limit; !st && at < n;) {
        int64_t c = n - at < 4096 ? n - at : 4096;
        st = x->g.ops->d2h(&x->g, buf, colp(&byfirst, col) + (gptr)(at * w), (uint64_t)(c * w));
        int64_t j = 0;
        while (!st && j < c && memcmp(buf + j * w, ref, (size_t)w) == 0) j++;
        m = at + j;
        if (j < c) break;
        at += c;
    }
    gval part;
    memset(&part, 0, sizeof part);
    /* the candidates are the first m rows of byfirst: sort them fully */
    if (!st) {
        gval cand = byfirst;
        cand.nrows = m;
        st = sort_rows(x, &cand, iv->types, k->order, k->norder, m, &part);
    }
    /* compose: out[i] = first[part[i]], on the host (m is small) */
    int64_t *pa = NULL, *fa = NULL;
    if (!st) {
        pa = rf_malloc((size_t)m * 8);
        fa = rf_malloc((size_t)m * 8);
        if (!pa || !fa) st = RF_ENOMEM;
    }
    if (!st) st = x->g.ops->d2h(&x->g, pa, part.a.p, (uint64_t)m * 8);
    if (!st) st = x->g.ops->d2h(&x->g, fa, first.a.p, (uint64_t)m * 8);
    if (!st) {
        for (int64_t i = 0; i < m; i++) pa[i] = fa[pa[i]];
        memset(out, 0, sizeof *out);
        st = galloc(x, (uint64_t)m * 8, &out->a);
        if (!st) st = x->g.ops->h2d(&x->g, out->a.p, pa, (uint64_t)m * 8);
        out->nrows = m;
        if (st) rf_gx_val_clear(x, out, 0);
    }
    free(pa);
    free(fa);
    rf_gx_val_clear(x, &part, 0);
    rf_gx_val_clear(x, &byfirst, iv->ncols);
    rf_gx_val_clear(x, &first, 0);
    if (!st) *done = 1;
    return st;
}

rf_status rf_gx_k_sort(gx *x, const rf_hir_kernel *k)
{
    const gval *in = &x->vals[k->in[0]];
    const rf_hir_var *iv = x->p->vars[k->in[0]];
    gval out;
    if (in->nrows <= 1) {
        /* no index: the identity order (rel_gather reads row i itself), no launch */
        memset(&out, 0, sizeof out);
        out.nrows = in->nrows;
        rf_gx_var_set(x, k->out, &out);
        return RF_OK;
    }
    int done = 0;
    rf_status st = sort_limited(x, k, in, iv, &out, &done);
    if (!st && !done && in->nrows <= HOST_SORT_ROWS && k->norder <= RF_GPU_MAXC)
        st = sort_rows_host(x, in, iv->types, k->order, k->norder, in->nrows, &out);
    else if (!st && !done)
        st = sort_rows(x, in, iv->types, k->order, k->norder, in->nrows, &out);
    if (st) return st;
    rf_gx_var_set(x, k->out, &out);
    return RF_OK;
}

rf_status rf_gx_k_gather(gx *x, const rf_hir_kernel *k)
{
    const gval *idx = &x->vals[k->idx];
    const rf_hir_var *ov = x->p->vars[k->out];
    int64_t n = idx->nrows;
    if (k->limit >= 0 && k->limit < n) n = k->limit;
    gval r;
    /* the identity order (a sort of at most one row) over every row */
    if (!idx->a.p && n == x->vals[k->in[0]].nrows && rf_gx_take_columns(x, k, &r)) {
        rf_gx_var_set(x, k->out, &r);
        return RF_OK;
    }
    rf_status st = rf_gx_rel_gather(x, &x->vals[k->in[0]], ov->types, ov->ncols, idx->a.p, n, &r);
    if (st) return st;
    rf_gx_var_set(x, k->out, &r);
    return RF_OK;
}

rf_status rf_gx_k_copy(gx *x, const rf_hir_kernel *k)
{
    const gval *in = &x->vals[k->in[0]];
    const rf_hir_var *ov = x->p->vars[k->out];
    gval r;
    if (rf_gx_take_columns(x, k, &r)) { /* the input dies here: its columns move */
        rf_gx_var_set(x, k->out, &r);
        return RF_OK;
    }
    rf_status st = rf_gx_rel_alloc(x, &r, ov->types, ov->ncols, in->nrows, in->nrows);
    for (int32_t c = 0; c < ov->ncols && !st && in->nrows; c++)
        st = rf_gx_dcopy(x, colp(&r, c), colp(in, c), (uint64_t)in->nrows * (uint64_t)wid(ov->types[c]));
    if (st) {
        rf_gx_val_clear(x, &r, ov->ncols);
        return st;
    }
    rf_gx_var_set(x, k->out, &r);
    return RF_OK;
}

rf_status rf_gx_k_facts(gx *x, const rf_hir_kernel *k)
{
    const rf_hir_var *out = x->p->vars[k->out];
    rf_rt_rel r;
    rf_status st = rf_rt_facts(k, out, x->dict, &r);
    if (st) return st;
    gval g;
    memset(&g, 0, sizeof g);
    int64_t ndiag = x->d->count, nerr = x->d->nerrors;
    st = rf_gx_upload_rel(x, &r, out->types, out->ncols, NULL, NULL, &g);
    if (st == RF_EDEVMEM && r.nrows > 0 && out->ncols > 0) {
        /* no room on the device (a cap, or a full GPU): the rows wait in
        ** host memory, as an input's do, and the kernel that reads them
        ** brings them over, in ranges where it can (a cap is no reason to
        ** leave the GPU for rows that can wait: docs/LANGUAGE.md) */
        rf_gx_held_drop_diags(x, ndiag, nerr);
        st = rf_gx_held_rel(x, &r, out->types, out->ncols, NULL, 0, &g);
    }
    rf_rt_rel_free(&r);
    if (st) return st;
    rf_gx_var_set(x, k->out, &g);
    return RF_OK;
}
