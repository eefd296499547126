/*
** skeletons/cpu/cpu_pool.c: the thread pool of the CPU backend and the
** small parallel helpers every primitive uses (checked allocation, chunk
** sizes, ordered compaction).
**
** Owns: worker threads and their job hand-off. A job is a range split into
** chunks that the caller and the workers claim from an atomic counter;
** workers spin briefly before sleeping because query plans issue many short
** jobs back to back, and a condition-variable wake-up costs more than a
** small job.
*/
#include <pthread.h>

#include "cpu_internal.h"

struct rf_cpu_pool {
    int nthreads;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    atomic_int_fast64_t gen; /* job generation; bumped under mu */
    atomic_int stop;
    /* the current job: written before gen is bumped, read after */
    void (*fn)(void *, int64_t, int64_t, int);
    void *ctx;
    int64_t n, grain, nchunks;
    atomic_int_fast64_t next;
    atomic_int pending; /* workers not yet done with the current job */
    atomic_int busy;    /* a job is running: later calls run inline */
};

typedef struct worker_arg {
    rf_cpu_pool *pool;
    int id;
} worker_arg;

#define SPIN_ROUNDS 4000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void run_chunks(rf_cpu_pool *p, int id)
{
    for (;;) {
        int64_t c = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (c >= p->nchunks) break;
        int64_t b = c * p->grain, e = b + p->grain;
        p->fn(p->ctx, b, e < p->n ? e : p->n, id);
    }
}

static void *worker_main(void *argp)
{
    worker_arg *a = argp;
    rf_cpu_pool *p = a->pool;
    int id = a->id;
    free(a);
    int_fast64_t seen = 0;
    for (;;) {
        int_fast64_t g = seen;
        for (int i = 0; i < SPIN_ROUNDS; i++) {
            g = atomic_load_explicit(&p->gen, memory_order_acquire);
            if (g != seen || atomic_load_explicit(&p->stop, memory_order_relaxed)) break;
            cpu_relax();
        }
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            while ((g = atomic_load(&p->gen)) == seen && !atomic_load(&p->stop)) pthread_cond_wait(&p->wake, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop)) break;
        seen = g;
        run_chunks(p, id);
        if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

rf_status rf_cpu_pool_new(int threads, rf_cpu_pool **out)
{
    *out = NULL;
    if (threads < 1) return RF_EINTERNAL;
    rf_cpu_pool *p = calloc(1, sizeof *p);
    if (!p) return RF_ENOMEM;
    p->nthreads = 1;
    atomic_init(&p->gen, 0);
    atomic_init(&p->stop, 0);
    atomic_init(&p->next, 0);
    atomic_init(&p->pending, 0);
    atomic_init(&p->busy, 0);
    if (pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        return RF_ENOMEM;
    }
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (threads > 1) {
        p->threads = calloc((size_t)threads, sizeof *p->threads);
        if (!p->threads) {
            rf_cpu_pool_free(p);
            return RF_ENOMEM;
        }
        for (int i = 1; i < threads; i++) {
            worker_arg *a = malloc(sizeof *a);
            if (!a) {
                rf_cpu_pool_free(p);
                return RF_ENOMEM;
            }
            /* a thread the system cannot start now (EAGAIN: its limit of
            ** threads or processes reached) is not an error: the pool works
            ** with those it has (rf_cpu_pool_threads), and no result depends
            ** on their number */
            if (pthread_create(&p->threads[i], NULL, worker_main, (a->pool = p, a->id = i, a))) {
                free(a);
                break;
            }
            p->nthreads = i + 1;
        }
    }
    *out = p;
    return RF_OK;
}

void rf_cpu_pool_free(rf_cpu_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}

int rf_cpu_pool_threads(const rf_cpu_pool *p) { return p ? p->nthreads : 1; }

void rf_cpu_parallel_for(rf_cpu_pool *p, int64_t n, int64_t grain,
                         void (*fn)(void *ctx, int64_t begin, int64_t end, int worker), void *ctx)
{
    if (n <= 0) return;
    if (grain <= 0) grain = cpu_grain(n, 1024);
    if (!p || p->nthreads == 1 || n <= grain || atomic_exchange(&p->busy, 1)) {
        for (int64_t b = 0; b < n; b += grain) fn(ctx, b, n - b > grain ? b + grain : n, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->grain = grain;
    p->nchunks = (n + grain - 1) / grain;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_store_explicit(&p->pending, p->nthreads - 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    run_chunks(p, 0);
    for (int i = 0; i < SPIN_ROUNDS && atomic_load_explicit(&p->pending, memory_order_acquire); i++) cpu_relax();
    if (atomic_load_explicit(&p->pending, memory_order_acquire)) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->pending)) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    atomic_store(&p->busy, 0);
}

/* ---- helpers -------------------------------------------------------- */

void *cpu_alloc(int64_t n, size_t sz)
{
    if (n < 0 || (sz && (uint64_t)n > (uint64_t)(SIZE_MAX / 2) / sz)) return NULL;
    size_t b = (size_t)n * sz;
    return malloc(b ? b : 1);
}

void *cpu_zalloc(int64_t n, size_t sz)
{
    if (n < 0 || (sz && (uint64_t)n > (uint64_t)(SIZE_MAX / 2) / sz)) return NULL;
    return calloc(n ? (size_t)n : 1, sz ? sz : 1);
}

int64_t cpu_grain(int64_t n, int64_t min_grain)
{
    int64_t g = (n + 127) / 128;
    return g > min_grain ? g : min_grain;
}

typedef struct compact_ctx {
    const uint8_t *flags;
    uint8_t want;
    int64_t grain;
    int64_t *counts; /* per chunk, then exclusive prefix */
    int64_t *out;
} compact_ctx;

static void compact_count(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    compact_ctx *c = vp;
    int64_t k = 0;
    for (int64_t i = b; i < e; i++) k += c->flags[i] == c->want;
    c->counts[b / c->grain] = k;
}

static void compact_fill(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    compact_ctx *c = vp;
    int64_t k = c->counts[b / c->grain];
    for (int64_t i = b; i < e; i++)
        if (c->flags[i] == c->want) c->out[k++] = i;
}

rf_status cpu_compact_flags(rf_cpu_pool *pool, const uint8_t *flags, uint8_t want, int64_t n, int64_t **out,
                            int64_t *m)
{
    *out = NULL;
    *m = 0;
    compact_ctx c = {flags, want, cpu_grain(n, 16384), NULL, NULL};
    int64_t nch = (n + c.grain - 1) / c.grain;
    c.counts = cpu_alloc(nch, sizeof(int64_t));
    if (!c.counts) return RF_ENOMEM;
    rf_cpu_parallel_for(pool, n, c.grain, compact_count, &c);
    int64_t tot = 0;
    for (int64_t i = 0; i < nch; i++) {
        int64_t k = c.counts[i];
        c.counts[i] = tot;
        tot += k;
    }
    c.out = cpu_alloc(tot, sizeof(int64_t));
    if (!c.out) {
        free(c.counts);
        return RF_ENOMEM;
    }
    rf_cpu_parallel_for(pool, n, c.grain, compact_fill, &c);
    free(c.counts);
    *out = c.out;
    *m = tot;
    return RF_OK;
}
