/*
** runtime/rt_rel.c: relations (columns in memory), index vectors, and the
** small thread runner that the runtime's data-parallel loops share.
**
** Owns: the allocation of relation columns (rf_rt_rel_alloc / _truncate /
** _free), rf_rt_index_free, rf_rt_type_width, rf_rt_alloc_big and
** rf_rt_parallel.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rf_rt_data.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *rf_rt_alloc_big(size_t n)
{
    if (n < 2 * HUGE_PAGE) return malloc(n ? n : 1);
    size_t sz = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = aligned_alloc(HUGE_PAGE, sz);
    if (!p) return malloc(n);
#ifdef MADV_HUGEPAGE
    /* advice only: failure changes nothing. RF_NOHUGE in the environment
    ** turns it off, for systems where huge-page compaction stalls. */
    if (!getenv("RF_NOHUGE")) madvise(p, sz, MADV_HUGEPAGE);
#endif
    return p;
}

int rf_rt_type_width(rf_type t)
{
    switch (t) {
    case RF_TYPE_INT:
    case RF_TYPE_FLOAT:
    case RF_TYPE_DECIMAL: return 8;
    case RF_TYPE_STRING:
    case RF_TYPE_DATE: return 4;
    case RF_TYPE_BOOL: return 1;
    }
    return 8;
}

rf_status rf_rt_rel_alloc(rf_rt_rel *r, int32_t ncols, const rf_type *types, int64_t nrows)
{
    r->nrows = 0;
    r->ncols = 0;
    r->types = types;
    r->cols = NULL;
    if (ncols < 0 || nrows < 0 || nrows > INT64_MAX / 8) return RF_EINTERNAL;
    if (ncols > 0) {
        r->cols = rf_calloc((size_t)ncols, sizeof *r->cols);
        if (!r->cols) return RF_ENOMEM;
    }
    r->ncols = ncols;
    if (nrows > 0) {
        for (int32_t c = 0; c < ncols; c++) {
            if (!(r->cols[c] = rf_rt_alloc_big((size_t)nrows * (size_t)rf_rt_type_width(types[c])))) {
                rf_rt_rel_free(r);
                r->ncols = 0;
                return RF_ENOMEM;
            }
        }
    }
    r->nrows = nrows;
    return RF_OK;
}

rf_status rf_rt_rel_truncate(rf_rt_rel *r, int64_t nrows)
{
    if (nrows < 0 || nrows > r->nrows) return RF_EINTERNAL;
    if (nrows == r->nrows) return RF_OK;
    for (int32_t c = 0; c < r->ncols; c++) {
        if (nrows == 0) {
            free(r->cols[c]);
            r->cols[c] = NULL;
        } else {
            /* shrinking reallocs split or remap in place; a failed shrink
            ** keeps the larger block, which is still correct */
            void *p = realloc(r->cols[c], (size_t)nrows * (size_t)rf_rt_type_width(r->types[c]));
            if (p) r->cols[c] = p;
        }
    }
    r->nrows = nrows;
    return RF_OK;
}

void rf_rt_rel_free(rf_rt_rel *r)
{
    if (!r) return;
    for (int32_t c = 0; r->cols && c < r->ncols; c++) free(r->cols[c]);
    free(r->cols);
    r->cols = NULL;
    r->nrows = 0;
}

void rf_rt_index_free(rf_rt_index *x)
{
    if (!x) return;
    free(x->a);
    free(x->b);
    free(x->first);
    memset(x, 0, sizeof *x);
}

/* ---- thread runner ------------------------------------------------------ */

#define MAX_TASKS 256

typedef struct task {
    rf_rt_task_fn fn;
    void *arg;
    int tid;
} task;

static void *task_main(void *p)
{
    task *t = p;
    t->fn(t->arg, t->tid);
    return NULL;
}

void rf_rt_parallel(int nthreads, rf_rt_task_fn fn, void *arg)
{
    if (nthreads > MAX_TASKS) nthreads = MAX_TASKS;
    if (nthreads <= 1) {
        fn(arg, 0);
        return;
    }
    pthread_t th[MAX_TASKS];
    task ts[MAX_TASKS];
    char started[MAX_TASKS];
    for (int i = 1; i < nthreads; i++) {
        ts[i].fn = fn;
        ts[i].arg = arg;
        ts[i].tid = i;
        started[i] = pthread_create(&th[i], NULL, task_main, &ts[i]) == 0;
    }
    fn(arg, 0);
    for (int i = 1; i < nthreads; i++)
        if (!started[i]) fn(arg, i);
    for (int i = 1; i < nthreads; i++)
        if (started[i]) pthread_join(th[i], NULL);
}
