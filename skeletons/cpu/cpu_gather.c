/*
** skeletons/cpu/cpu_gather.c: moving rows by index, and table bookkeeping.
**
** Owns: gather of one column or a whole table, and allocation / release of
** tables the library returns. Gathers copy by element width (8, 4 or 1
** bytes), since a gather does not need to know what the bits mean.
*/
#include "cpu_internal.h"

int rf_cpu_kind_size(rf_cpu_kind k)
{
    switch (k) {
    case RF_CPU_I64:
    case RF_CPU_F64: return 8;
    case RF_CPU_I32:
    case RF_CPU_U32: return 4;
    case RF_CPU_I128:
    case RF_CPU_I128_HI:
    case RF_CPU_I128_LO: return 16;
    default: return 1;
    }
}

void rf_cpu_table_free(rf_cpu_table *t)
{
    if (!t) return;
    if (t->cols)
        for (int32_t i = 0; i < t->ncols; i++) free(t->cols[i].data);
    free(t->cols);
    memset(t, 0, sizeof *t);
}

rf_status rf_cpu_table_alloc(int32_t ncols, const rf_cpu_kind *kinds, int64_t nrows, rf_cpu_table *t)
{
    memset(t, 0, sizeof *t);
    if (ncols < 0 || nrows < 0) return RF_EINTERNAL;
    t->cols = cpu_zalloc(ncols, sizeof *t->cols);
    if (!t->cols) return RF_ENOMEM;
    t->ncols = ncols;
    for (int32_t i = 0; i < ncols; i++) {
        t->cols[i].kind = kinds[i];
        t->cols[i].data = cpu_alloc(nrows, (size_t)rf_cpu_kind_size(kinds[i]));
        if (!t->cols[i].data) {
            rf_cpu_table_free(t);
            return RF_ENOMEM;
        }
    }
    t->nrows = nrows;
    return RF_OK;
}

typedef struct gather_ctx {
    const void *src;
    void *dst;
    const int64_t *idx;
    int size;
} gather_ctx;

static void gather_chunk(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    gather_ctx *c = vp;
    const int64_t *idx = c->idx;
    switch (c->size) {
    case 16: {
        const rf_dec128 *s = c->src;
        rf_dec128 *d = c->dst;
        for (int64_t i = b; i < e; i++) d[i] = s[idx[i]];
        break;
    }
    case 8: {
        const uint64_t *s = c->src;
        uint64_t *d = c->dst;
        for (int64_t i = b; i < e; i++) d[i] = s[idx[i]];
        break;
    }
    case 4: {
        const uint32_t *s = c->src;
        uint32_t *d = c->dst;
        for (int64_t i = b; i < e; i++) d[i] = s[idx[i]];
        break;
    }
    default: {
        const uint8_t *s = c->src;
        uint8_t *d = c->dst;
        for (int64_t i = b; i < e; i++) d[i] = s[idx[i]];
        break;
    }
    }
}

void cpu_gather_into(rf_cpu_pool *pool, rf_cpu_kind kind, const void *src, const int64_t *idx, int64_t n, void *dst)
{
    gather_ctx c = {src, dst, idx, rf_cpu_kind_size(kind)};
    rf_cpu_parallel_for(pool, n, cpu_grain(n, 8192), gather_chunk, &c);
}

rf_status rf_cpu_gather(rf_cpu_pool *pool, const rf_cpu_col *col, const int64_t *idx, int64_t n, rf_cpu_col *out)
{
    out->data = NULL;
    out->kind = col->kind;
    if (n < 0 || (unsigned)col->kind > RF_CPU_I128) return RF_EINTERNAL;
    out->data = cpu_alloc(n, (size_t)rf_cpu_kind_size(col->kind));
    if (!out->data) return RF_ENOMEM;
    cpu_gather_into(pool, col->kind, col->data, idx, n, out->data);
    return RF_OK;
}

rf_status rf_cpu_gather_table(rf_cpu_pool *pool, const rf_cpu_table *t, const int64_t *idx, int64_t n,
                              rf_cpu_table *out)
{
    memset(out, 0, sizeof *out);
    if (n < 0 || t->ncols < 0) return RF_EINTERNAL;
    out->cols = cpu_zalloc(t->ncols, sizeof *out->cols);
    if (!out->cols) return RF_ENOMEM;
    out->ncols = t->ncols;
    for (int32_t i = 0; i < t->ncols; i++) {
        rf_status st = rf_cpu_gather(pool, &t->cols[i], idx, n, &out->cols[i]);
        if (st) {
            rf_cpu_table_free(out);
            return st;
        }
    }
    out->nrows = n;
    return RF_OK;
}
