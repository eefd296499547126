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

/* The tuning's hugepages (process-wide: columns are allocated far from any
** run's options). */
static int hugepages = 1;

void rf_rt_hugepages(int on) { hugepages = on != 0; }

void *rf_rt_alloc_big(size_t n)
{
    if (n < 2 * HUGE_PAGE) return malloc(n ? n : 1);
    size_t sz = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = aligned_alloc(HUGE_PAGE, sz);
    if (!p) return malloc(n);
#ifdef MADV_HUGEPAGE
    /* advice only: failure changes nothing. The setting hugepages=off
    ** turns it off, for systems where huge-page compaction stalls. */
    if (hugepages) madvise(p, sz, MADV_HUGEPAGE);
#endif
    return p;
}

/* ---- the column pool ------------------------------------------------------
** Fresh memory costs a page fault and the zeroing of every page on first
** touch, which for the large columns of a plan is a third of a kernel's
** time. Large relation columns therefore come from a process-wide pool:
** rf_rt_rel_free (and truncation) hands a pooled block back, idle, for the
** next column of about its size, with its pages already mapped. The pool
** keeps at most POOL_IDLE_MAX idle bytes (beyond that, blocks are freed) and
** tracks at most POOL_SLOTS blocks (beyond that, columns are plain
** allocations). A column's contents never depend on the pool: every
** allocation's rows are written before they are read. */

#ifndef RF_RT_POOL_MIN
#define RF_RT_POOL_MIN ((size_t)4 << 20)
#endif
#define POOL_MIN RF_RT_POOL_MIN
#define POOL_IDLE_MAX ((size_t)1 << 30)
#define POOL_SLOTS 512

typedef struct pblock {
    void *p;
    size_t cap;
    int idle;
} pblock;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pblock pool[POOL_SLOTS];
static int pool_n;
static size_t pool_idle;

static void *col_alloc(size_t n)
{
    if (n < POOL_MIN) return malloc(n ? n : 1);
    pthread_mutex_lock(&pool_mu);
    int best = -1;
    for (int i = 0; i < pool_n; i++)
        if (pool[i].idle && pool[i].cap >= n && pool[i].cap - n <= n / 2 &&
            (best < 0 || pool[i].cap < pool[best].cap))
            best = i;
    if (best >= 0) {
        pool[best].idle = 0;
        pool_idle -= pool[best].cap;
        void *p = pool[best].p;
        pthread_mutex_unlock(&pool_mu);
        return p;
    }
    /* no idle block fits: a new one, rounded up so that it fits more sizes */
    size_t cap = n + n / 8;
    cap = (cap + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = rf_rt_alloc_big(cap);
    if (p && pool_n < POOL_SLOTS) {
        pool[pool_n].p = p;
        pool[pool_n].cap = cap;
        pool[pool_n].idle = 0;
        pool_n++;
    }
    pthread_mutex_unlock(&pool_mu);
    return p;
}

/* The pool slot of p, or -1 (the caller holds pool_mu). */
static int pool_find(const void *p)
{
    for (int i = 0; i < pool_n; i++)
        if (pool[i].p == p) return i;
    return -1;
}

static void col_free(void *p)
{
    if (!p) return;
    pthread_mutex_lock(&pool_mu);
    int i = pool_find(p);
    if (i >= 0 && !pool[i].idle) {
        if (pool_idle + pool[i].cap <= POOL_IDLE_MAX) {
            pool[i].idle = 1;
            pool_idle += pool[i].cap;
            p = NULL;
        } else {
            pool[i] = pool[--pool_n];
        }
    }
    pthread_mutex_unlock(&pool_mu);
    free(p);
}

void rf_rt_col_free(void *col) { col_free(col); }

/* The capacity of a pooled block, 0 for any other. */
static size_t col_cap(const void *p)
{
    pthread_mutex_lock(&pool_mu);
    int i = pool_find(p);
    size_t cap = i >= 0 ? pool[i].cap : 0;
    pthread_mutex_unlock(&pool_mu);
    return cap;
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
    case RF_TYPE_DEC128: return 16;
    }
    return 8;
}

rf_status rf_rt_rel_alloc(rf_rt_rel *r, int32_t ncols, const rf_type *types, int64_t nrows)
{
    r->nrows = 0;
    r->ncols = 0;
    r->types = types;
    r->cols = NULL;
    if (ncols < 0 || nrows < 0 || nrows > INT64_MAX / 16) return RF_EINTERNAL;
    if (ncols > 0) {
        r->cols = rf_calloc((size_t)ncols, sizeof *r->cols);
        if (!r->cols) return RF_ENOMEM;
    }
    r->ncols = ncols;
    if (nrows > 0) {
        for (int32_t c = 0; c < ncols; c++) {
            if (!(r->cols[c] = col_alloc((size_t)nrows * (size_t)rf_rt_type_width(types[c])))) {
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
        size_t need = (size_t)nrows * (size_t)rf_rt_type_width(r->types[c]), cap;
        if (nrows == 0) {
            col_free(r->cols[c]);
            r->cols[c] = NULL;
        } else if ((cap = col_cap(r->cols[c])) > 0) {
            /* a pooled block: much too large, it goes back for the next
            ** kernel and the rows move to a block of their size */
            if (need < cap / 2) {
                void *p = col_alloc(need);
                if (p) {
                    memcpy(p, r->cols[c], need);
                    col_free(r->cols[c]);
                    r->cols[c] = p;
                }
            }
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
    for (int32_t c = 0; r->cols && c < r->ncols; c++) col_free(r->cols[c]);
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

void rf_rt_format_value(const rf_rt_dict *dict, const rf_rt_rel *r, int32_t c, int64_t row, rf_buf *b)
{
    const void *col = r->cols[c];
    switch (r->types[c]) {
    case RF_TYPE_INT: rf_val_fmt_int(b, ((const int64_t *)col)[row]); break;
    case RF_TYPE_DECIMAL: rf_val_fmt_dec(b, ((const int64_t *)col)[row]); break;
    case RF_TYPE_DEC128: rf_val_fmt_dec128(b, ((const rf_dec128 *)col)[row]); break;
    case RF_TYPE_FLOAT: rf_val_fmt_float(b, ((const double *)col)[row]); break;
    case RF_TYPE_DATE: rf_val_fmt_date(b, ((const int32_t *)col)[row]); break;
    case RF_TYPE_BOOL: rf_val_fmt_bool(b, ((const uint8_t *)col)[row]); break;
    case RF_TYPE_STRING: {
        int64_t len;
        const char *s = rf_rt_dict_str(dict, ((const uint32_t *)col)[row], &len);
        rf_buf_putc(b, '"');
        rf_buf_append(b, s, len > 60 ? 60 : len);
        rf_buf_puts(b, len > 60 ? "...\"" : "\"");
        break;
    }
    }
}
