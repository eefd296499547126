/*
** runtime/gpu/rt_gpu_acct.c: where the host's time goes during a GPU run.
**
** Owns a gdev_ops table that wraps a device's own (real or emulated) and
** counts, per class of operation, the calls and the host time spent in them:
** kernel launches, waits for the GPU (transfers to the host and
** synchronizations, which wait for all queued work), CUB primitives, and the
** rest (copies to the GPU, clears, copies on the GPU, kernel lookups, which
** with the driver's lazy loading also put a kernel on the GPU). `--profile` prints
** them: a run whose time is mostly waiting with little work per wait is
** bound by synchronizations, not by the GPU's memory bandwidth.
**
** The wrapper is installed for every run (two clock reads per operation);
** nothing here changes what the device does. With the gpu_trace setting
** (`--set gpu_trace=on`), every operation of the run is also noted, one line each:
** when it started (ms since the run began), the host time it took, and what
** it was; the run hands the text over in rf_rt_result.gpu_trace (`redfox
** run` prints it). A debugging aid for finding host-side gaps; the lines are
** kept in memory so that writing them does not make gaps of its own.
*/
#include "rt_gpu_internal.h"
#include "rf_sys.h"
#include "rf_rt_stored.h"

#include <stdlib.h>
#include <string.h>

static void trace(gdev *g, double t0, double t1, const char *what, const char *name, uint64_t n)
{
    if (g->acct.fn) {
        char full[160];
        snprintf(full, sizeof full, "%s%s%s", what, name ? " " : "", name ? name : "");
        g->acct.fn(g->acct.fn_ctx, "gpu", full, t0, t1, (int64_t)n);
    }
    if (!g->acct.trace) return;
    rf_buf_printf(&g->acct.trace_text, "gpu trace: %9.3f ms %8.3f ms  %s%s%s n=%llu\n", (t0 - g->acct.start) * 1e3,
                  (t1 - t0) * 1e3, what, name ? " " : "", name ? name : "", (unsigned long long)n);
}

#define TIMED_AS(g, cls, what, name, n, call)                                                                      \
    do {                                                                                                           \
        double t0_ = rf_now();                                                                                   \
        rf_status st_ = (call);                                                                                    \
        double t1_ = rf_now();                                                                                   \
        (g)->acct.calls[cls]++;                                                                                    \
        (g)->acct.seconds[cls] += t1_ - t0_;                                                                       \
        if ((g)->acct.trace || (g)->acct.fn) trace((g), t0_, t1_, (what), (name), (uint64_t)(n));                                  \
        return st_;                                                                                                \
    } while (0)

static rf_status a_load(gdev *g, const rf_gpu_ptx *ptx, const char *src, uint64_t srclen)
{
    return g->inner->load(g, ptx, src, srclen);
}

static rf_status a_func(gdev *g, const char *name, void **fn)
{
    TIMED_AS(g, RF_GPU_ACCT_OTHER, "func", name, 0, g->inner->func(g, name, fn));
}

static rf_status a_launch(gdev *g, void *fn, const char *name, uint64_t grid, const rf_gpu_args *a)
{
    TIMED_AS(g, RF_GPU_ACCT_LAUNCH, "launch", name, a->n, g->inner->launch(g, fn, name, grid, a));
}

static rf_status a_mem_alloc(gdev *g, uint64_t bytes, gptr *out)
{
    double t0 = rf_now();
    rf_status st = g->inner->mem_alloc(g, bytes, out);
    g->alloc_seconds += rf_now() - t0; /* the pool's arenas: most of the device's memory at once */
    return st;
}
static void a_mem_free(gdev *g, gptr p) { g->inner->mem_free(g, p); }

static rf_status a_h2d(gdev *g, gptr dst, const void *src, uint64_t n)
{
    g->h2d_bytes += n;
    g->wire_bytes += n;
    TIMED_AS(g, RF_GPU_ACCT_OTHER, "h2d", NULL, n, g->inner->h2d(g, dst, src, n));
}

static rf_status a_h2d_fill(gdev *g, gptr dst, uint64_t n, rf_gpu_fill_fn fill, void *ctx)
{
    g->h2d_bytes += n;
    g->wire_bytes += n;
    TIMED_AS(g, RF_GPU_ACCT_OTHER, "h2d", NULL, n, g->inner->h2d_fill(g, dst, n, fill, ctx));
}

static rf_status a_d2h(gdev *g, void *dst, gptr src, uint64_t n)
{
    g->d2h_bytes += n;
    TIMED_AS(g, RF_GPU_ACCT_WAIT, "d2h", NULL, n, g->inner->d2h(g, dst, src, n));
}

static rf_status a_d2d(gdev *g, gptr dst, gptr src, uint64_t n)
{
    TIMED_AS(g, RF_GPU_ACCT_OTHER, "d2d", NULL, n, g->inner->d2d(g, dst, src, n));
}

static rf_status a_memset8(gdev *g, gptr dst, uint8_t v, uint64_t n)
{
    TIMED_AS(g, RF_GPU_ACCT_OTHER, "memset", NULL, n, g->inner->memset8(g, dst, v, n));
}

static rf_status a_sync(gdev *g) { TIMED_AS(g, RF_GPU_ACCT_WAIT, "sync", NULL, 0, g->inner->sync(g)); }

static rf_status a_sort_pairs(gdev *g, gptr temp, uint64_t *tbytes, gptr kin, gptr kout, gptr vin, gptr vout,
                              int64_t n, int b0, int b1)
{
    if (!temp) return g->inner->sort_pairs(g, temp, tbytes, kin, kout, vin, vout, n, b0, b1);
    TIMED_AS(g, RF_GPU_ACCT_CUB, "cub sort", NULL, n, g->inner->sort_pairs(g, temp, tbytes, kin, kout, vin, vout, n, b0, b1));
}

static rf_status a_scan_i64(gdev *g, gptr temp, uint64_t *tbytes, gptr in, gptr out, int64_t n)
{
    if (!temp) return g->inner->scan_i64(g, temp, tbytes, in, out, n);
    TIMED_AS(g, RF_GPU_ACCT_CUB, "cub scan", NULL, n, g->inner->scan_i64(g, temp, tbytes, in, out, n));
}

static rf_status a_scan_u8(gdev *g, gptr temp, uint64_t *tbytes, gptr in, gptr out, int64_t n)
{
    if (!temp) return g->inner->scan_u8(g, temp, tbytes, in, out, n);
    TIMED_AS(g, RF_GPU_ACCT_CUB, "cub scan", NULL, n, g->inner->scan_u8(g, temp, tbytes, in, out, n));
}

static rf_status a_select(gdev *g, gptr temp, uint64_t *tbytes, gptr flags, gptr out, gptr nsel, int64_t n)
{
    if (!temp) return g->inner->select(g, temp, tbytes, flags, out, nsel, n);
    TIMED_AS(g, RF_GPU_ACCT_CUB, "cub select", NULL, n, g->inner->select(g, temp, tbytes, flags, out, nsel, n));
}

static rf_status a_mark(gdev *g, int which) { return g->inner->mark(g, which); }

/* the profile's own waits (one per kernel) are not the run's */
static rf_status a_elapsed(gdev *g, double *seconds) { return g->inner->elapsed(g, seconds); }

static void a_close(gdev *g) { g->inner->close(g); }

/* (h2d_bytes counts the widened column, as a plain copy would; the device
** adds the bytes that crossed to wire_bytes: it alone knows them) */
static rf_status a_h2d_stored(gdev *g, gptr dst, const struct rf_rt_stored *s, gptr scratch)
{
    if (!g->inner->h2d_stored) return RF_EINTERNAL;
    uint64_t wide = rf_rt_stored_wide_bytes(s);
    g->h2d_bytes += wide;
    TIMED_AS(g, RF_GPU_ACCT_OTHER, "h2d stored", NULL, wide, g->inner->h2d_stored(g, dst, s, scratch));
}

static const gdev_ops acct_ops = {a_load,       a_func,    a_launch,   a_mem_alloc, a_mem_free, a_h2d,
                                  a_h2d_fill,
                                  a_d2h,        a_d2d,     a_memset8,  a_sync,      a_sort_pairs, a_scan_i64,
                                  a_scan_u8,    a_select,  a_mark,     a_elapsed,   a_close,
                                  a_h2d_stored};

void rf_gpu_acct_install(gdev *g)
{
    if (g->ops == &acct_ops) return;
    g->inner = g->ops;
    g->ops = &acct_ops;
}

void rf_gpu_acct_reset(gdev *g, int trace)
{
    rf_buf_free(&g->acct.trace_text);
    memset(&g->acct, 0, sizeof g->acct);
    rf_buf_init(&g->acct.trace_text);
    g->acct.trace = trace;
    g->acct.start = rf_now();
}
