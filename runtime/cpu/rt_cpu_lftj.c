/*
** runtime/cpu/rt_cpu_lftj.c: the LFTJ kernel on the CPU.
**
** Owns: running the leapfrog triejoin (rf_rt_lftj.h) over the executor's
** threads: work items (distinct driver prefixes) are taken in chunks from a
** shared counter, so a skewed graph's heavy items spread over the threads;
** a count pass per item, offsets by a prefix sum, then a write pass, so
** the output is in item order whatever the thread count (as on the GPU).
*/
#include "rt_cpu_internal.h"
#include "rf_rt_lftj.h"

#define LFTJ_CHUNK 256

typedef struct lftj_job {
    const rf_rt_lftj *j;
    const int64_t *const *cols;
    const int64_t *nrows;
    int64_t items;      /* driver rows */
    int64_t *counts;    /* per item; then its output offset */
    int64_t *const *out; /* NULL: the count pass */
    int64_t next;       /* the next chunk (atomic) */
} lftj_job;

static void lftj_task(void *arg, int tid)
{
    (void)tid;
    lftj_job *b = arg;
    for (;;) {
        int64_t s = __atomic_fetch_add(&b->next, LFTJ_CHUNK, __ATOMIC_RELAXED);
        if (s >= b->items) break;
        int64_t e = s + LFTJ_CHUNK < b->items ? s + LFTJ_CHUNK : b->items;
        for (int64_t r = s; r < e; r++) {
            if (!rf_rt_lftj_item_starts(b->j, b->cols, r)) {
                if (!b->out) b->counts[r] = 0;
                continue;
            }
            if (!b->out) b->counts[r] = rf_rt_lftj_item(b->j, b->cols, b->nrows, r, NULL, 0);
            else if (b->counts[r + 1] > b->counts[r]) rf_rt_lftj_item(b->j, b->cols, b->nrows, r, b->out, b->counts[r]);
        }
    }
}

rf_status rf_cx_k_lftj(exec *x, const rf_hir_kernel *k)
{
    const rf_hir_var *ov = x->p->vars[k->out];
    rf_rt_lftj j;
    rf_status st = rf_rt_lftj_plan(ov->ncols, k->nin, k->lkeys, k->rkeys, k->nkeys, k->filter, &j);
    if (st) {
        rf_internal_error(x->d, kloc(x, k), "a malformed leapfrog triejoin (kernel k%d)", (int)k->id);
        return st;
    }
    const int64_t *cols[64];
    int64_t nrows[RF_RT_LFTJ_MAX_INPUTS];
    int empty = 0;
    for (int32_t i = 0; i < k->nin; i++) {
        const rf_rt_rel *in = &x->vals[k->in[i]].rel;
        nrows[i] = in->nrows;
        empty |= in->nrows == 0;
        for (int32_t c = 0; c < j.ncols[i]; c++) cols[j.coloff[i] + c] = in->nrows ? in->cols[c] : NULL;
    }
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    int64_t items = empty ? 0 : nrows[j.driver];
    int64_t *counts = items ? rf_rt_alloc_big((size_t)(items + 1) * sizeof *counts) : NULL;
    if (items && !counts) return RF_ENOMEM;
    lftj_job b = {&j, cols, nrows, items, counts, NULL, 0};
    int threads = x->threads > 0 ? x->threads : 1;
    if (items) rf_rt_parallel(threads, lftj_task, &b);
    /* offsets: counts[r] becomes the first output row of item r */
    int64_t total = 0;
    for (int64_t i = 0; i < items; i++) {
        int64_t c = counts[i];
        counts[i] = total;
        total += c;
    }
    if (items) counts[items] = total;
    st = rf_rt_rel_alloc(&r, ov->ncols, ov->types, total);
    if (st) {
        free(counts);
        return st;
    }
    if (total) {
        b.out = (int64_t *const *)r.cols;
        b.next = 0;
        rf_rt_parallel(threads, lftj_task, &b);
    }
    free(counts);
    rf_cx_val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}
