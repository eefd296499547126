/*
** runtime/gpu/rt_gpu_acct.c: where the host's time goes during a GPU run.
**
** Owns a gdev_ops table that wraps a device's own (real or emulated) and
** counts, per class of operation, the calls and the host time spent in them:
** kernel launches, waits for the GPU (transfers to the host and
** synchronizations, which wait for all queued work), CUB primitives, and the
** rest (copies to the GPU, clears, copies on the GPU). `--profile` prints
** them: a run whose time is mostly waiting with little work per wait is
** bound by synchronizations, not by the GPU's memory bandwidth.
**
** The wrapper is installed for every run (two clock reads per operation);
** nothing here changes what the device does.
*/
#include "rt_gpu_internal.h"

#include <string.h>
#include <time.h>

static double acct_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define TIMED(g, cls, call)                                                                                        \
    do {                                                                                                           \
        double t0_ = acct_now();                                                                                   \
        rf_status st_ = (call);                                                                                    \
        (g)->acct.calls[cls]++;                                                                                    \
        (g)->acct.seconds[cls] += acct_now() - t0_;                                                                \
        return st_;                                                                                                \
    } while (0)

static rf_status a_load(gdev *g, const rf_gpu_ptx *ptx, const char *src, uint64_t srclen)
{
    return g->inner->load(g, ptx, src, srclen);
}

static rf_status a_func(gdev *g, const char *name, void **fn) { return g->inner->func(g, name, fn); }

static rf_status a_launch(gdev *g, void *fn, const char *name, uint64_t grid, const rf_gpu_args *a)
{
    TIMED(g, RF_GPU_ACCT_LAUNCH, g->inner->launch(g, fn, name, grid, a));
}

static rf_status a_mem_alloc(gdev *g, uint64_t bytes, gptr *out) { return g->inner->mem_alloc(g, bytes, out); }
static void a_mem_free(gdev *g, gptr p) { g->inner->mem_free(g, p); }

static rf_status a_h2d(gdev *g, gptr dst, const void *src, uint64_t n)
{
    TIMED(g, RF_GPU_ACCT_OTHER, g->inner->h2d(g, dst, src, n));
}

static rf_status a_d2h(gdev *g, void *dst, gptr src, uint64_t n)
{
    TIMED(g, RF_GPU_ACCT_WAIT, g->inner->d2h(g, dst, src, n));
}

static rf_status a_d2d(gdev *g, gptr dst, gptr src, uint64_t n)
{
    TIMED(g, RF_GPU_ACCT_OTHER, g->inner->d2d(g, dst, src, n));
}

static rf_status a_memset8(gdev *g, gptr dst, uint8_t v, uint64_t n)
{
    TIMED(g, RF_GPU_ACCT_OTHER, g->inner->memset8(g, dst, v, n));
}

static rf_status a_sync(gdev *g) { TIMED(g, RF_GPU_ACCT_WAIT, g->inner->sync(g)); }

static rf_status a_sort_pairs(gdev *g, gptr temp, uint64_t *tbytes, gptr kin, gptr kout, gptr vin, gptr vout,
                              int64_t n, int b0, int b1)
{
    if (!temp) return g->inner->sort_pairs(g, temp, tbytes, kin, kout, vin, vout, n, b0, b1);
    TIMED(g, RF_GPU_ACCT_CUB, g->inner->sort_pairs(g, temp, tbytes, kin, kout, vin, vout, n, b0, b1));
}

static rf_status a_scan_i64(gdev *g, gptr temp, uint64_t *tbytes, gptr in, gptr out, int64_t n)
{
    if (!temp) return g->inner->scan_i64(g, temp, tbytes, in, out, n);
    TIMED(g, RF_GPU_ACCT_CUB, g->inner->scan_i64(g, temp, tbytes, in, out, n));
}

static rf_status a_scan_u8(gdev *g, gptr temp, uint64_t *tbytes, gptr in, gptr out, int64_t n)
{
    if (!temp) return g->inner->scan_u8(g, temp, tbytes, in, out, n);
    TIMED(g, RF_GPU_ACCT_CUB, g->inner->scan_u8(g, temp, tbytes, in, out, n));
}

static rf_status a_select(gdev *g, gptr temp, uint64_t *tbytes, gptr flags, gptr out, gptr nsel, int64_t n)
{
    if (!temp) return g->inner->select(g, temp, tbytes, flags, out, nsel, n);
    TIMED(g, RF_GPU_ACCT_CUB, g->inner->select(g, temp, tbytes, flags, out, nsel, n));
}

static rf_status a_mark(gdev *g, int which) { return g->inner->mark(g, which); }

/* the profile's own waits (one per kernel) are not the run's */
static rf_status a_elapsed(gdev *g, double *seconds) { return g->inner->elapsed(g, seconds); }

static void a_close(gdev *g) { g->inner->close(g); }

static const gdev_ops acct_ops = {a_load,       a_func,    a_launch,   a_mem_alloc, a_mem_free, a_h2d,
                                  a_d2h,        a_d2d,     a_memset8,  a_sync,      a_sort_pairs, a_scan_i64,
                                  a_scan_u8,    a_select,  a_mark,     a_elapsed,   a_close};

void rf_gpu_acct_install(gdev *g)
{
    if (g->ops == &acct_ops) return;
    g->inner = g->ops;
    g->ops = &acct_ops;
}

void rf_gpu_acct_reset(gdev *g) { memset(&g->acct, 0, sizeof g->acct); }
