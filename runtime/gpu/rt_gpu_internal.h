/*
** runtime/gpu/rt_gpu_internal.h: the device layer under the GPU executor.
**
** Owns the interface between the executor (rt_gpu_exec.c), which knows
** Harmony, and a device: the real one (rt_gpu_cuda.c: the CUDA driver opened
** with dlopen, CUB through skeletons/cub) or the emulator (rt_gpu_emu.c: the
** same generated kernels compiled as host C++, for tests on machines without
** a GPU). Also the memory pool (rt_gpu_pool.c): big device allocations,
** sub-allocated, so that no operator allocates device memory itself.
**
** Device addresses are gptr (CUdeviceptr on the real device, a host address
** in the emulator). Every operation returns an rf_status and, on failure,
** has added an error to the device's diagnostics naming the CUDA error.
*/
#ifndef RT_GPU_INTERNAL_H
#define RT_GPU_INTERNAL_H

#include "rf_common.h"
#include "rf_gpu_codegen.h"

typedef uint64_t gptr;

typedef struct gpool gpool;
typedef struct gdev gdev;

typedef struct gdev_ops {
    /* Loads the program's kernels: ptx (real device) or src (the emulator,
    ** which compiles the CUDA source itself). */
    rf_status (*load)(gdev *g, const rf_gpu_ptx *ptx, const char *src, uint64_t srclen);
    /* A kernel of the loaded program by name (cached by the device). */
    rf_status (*func)(gdev *g, const char *name, void **fn);
    rf_status (*launch)(gdev *g, void *fn, const char *name, uint64_t grid, const rf_gpu_args *a);
    /* Raw device memory for the pool's arenas. */
    rf_status (*mem_alloc)(gdev *g, uint64_t bytes, gptr *out);
    void (*mem_free)(gdev *g, gptr p);
    /* Transfers, in stream order; d2h returns when the bytes have arrived. */
    rf_status (*h2d)(gdev *g, gptr dst, const void *src, uint64_t n);
    rf_status (*d2h)(gdev *g, void *dst, gptr src, uint64_t n);
    rf_status (*d2d)(gdev *g, gptr dst, gptr src, uint64_t n);
    rf_status (*memset8)(gdev *g, gptr dst, uint8_t v, uint64_t n);
    rf_status (*sync)(gdev *g);
    /* Device-wide primitives (rf_cub.h semantics): temp NULL asks for the
    ** scratch size in *tbytes. */
    rf_status (*sort_pairs)(gdev *g, gptr temp, uint64_t *tbytes, gptr kin, gptr kout, gptr vin, gptr vout, int64_t n,
                            int b0, int b1);
    rf_status (*scan_i64)(gdev *g, gptr temp, uint64_t *tbytes, gptr in, gptr out, int64_t n);
    rf_status (*scan_u8)(gdev *g, gptr temp, uint64_t *tbytes, gptr in, gptr out, int64_t n);
    rf_status (*select)(gdev *g, gptr temp, uint64_t *tbytes, gptr flags, gptr out, gptr nsel, int64_t n);
    /* Timing of a stretch of stream work (profile): mark 0 before, 1 after;
    ** elapsed waits for mark 1. */
    rf_status (*mark)(gdev *g, int which);
    rf_status (*elapsed)(gdev *g, double *seconds);
    void (*close)(gdev *g);
} gdev_ops;

/* Host time per class of device operation (rt_gpu_acct.c). */
enum { RF_GPU_ACCT_LAUNCH, RF_GPU_ACCT_WAIT, RF_GPU_ACCT_CUB, RF_GPU_ACCT_OTHER, RF_GPU_ACCT_N };
typedef struct gdev_acct {
    uint64_t calls[RF_GPU_ACCT_N];
    double seconds[RF_GPU_ACCT_N];
    int trace;      /* RF_GPU_TRACE set: every operation of the run, as text in trace_text */
    rf_buf trace_text;
    double start;   /* the run's start, for the trace's times */
} gdev_acct;

struct gdev {
    const gdev_ops *ops;
    const gdev_ops *inner; /* the device's own operations under the accounting wrapper */
    gdev_acct acct;
    void *impl;
    rf_diags *d;
    gpool *pool;
    char desc[160];     /* "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)", "emulated GPU" */
    int sms;            /* multiprocessors, for grid sizes */
    uint64_t max_grid;  /* blocks per launch at most (grid-stride loops do the rest) */
    uint64_t mem_free;  /* bytes of device memory free at start */
    uint64_t pool_first; /* the size of the pool's first arena (0: 1 GiB) */
};

/* Wraps g's operations in the accounting layer (once); reset zeroes the counts. */
void rf_gpu_acct_install(gdev *g);
void rf_gpu_acct_reset(gdev *g);

/* Opens the real device (RF_OK) or says why not (RF_EUSER, why filled). */
rf_status rf_gpu_cuda_open(gdev *g, rf_diags *d, char *why, size_t nwhy);
/* 1 when the real device can be opened (opened once per process to find out). */
int rf_gpu_cuda_probe(char *why, size_t n);
rf_status rf_gpu_emu_open(gdev *g, rf_diags *d);
/* RF_GPU_EMULATE=1 in the environment selects the emulator. */
int rf_gpu_emulated(void);

/* ---- the pool ----------------------------------------------------------- */

typedef struct gbuf {
    gptr p;      /* 0 when nothing is allocated */
    uint64_t n;  /* bytes reserved */
} gbuf;

rf_status rf_gpool_new(gdev *g, gpool **out);
void rf_gpool_free(gpool *pl);
/* Room for bytes (256-aligned; 0 bytes gives an empty gbuf). RF_ENOMEM with a
** diagnostic when the device is full. */
rf_status rf_gpool_alloc(gpool *pl, uint64_t bytes, gbuf *b);
void rf_gpool_release(gpool *pl, gbuf *b); /* empties b */
uint64_t rf_gpool_in_use(const gpool *pl);
uint64_t rf_gpool_peak(const gpool *pl);

/* ---- strings on the device (rt_gpu_str.c) ------------------------------- */

typedef struct rf_rt_dict rf_rt_dict;

/* The device copy of the dictionary: codes 0..n-1, offsets off[0..n] (u64)
** into bytes (nbytes used); both buffers have room to grow. */
typedef struct gdict {
    gbuf off, bytes;
    int64_t n;
    uint64_t nbytes;
} gdict;

typedef struct gstr {
    gdev *g;
    gpool *pool;
    rf_rt_dict *dict;
    int threads; /* host threads for copying the dictionary */
    int64_t batch_codes; /* codes copied per batch (0: 8 M; tests set fewer) */
    gdict dd;
    uint64_t copied; /* bytes of dictionary copied to the device so far */
} gstr;

/* Copies the codes the device lacks (every code the dictionary has now) when
** need (a code count) or the dictionary outgrew the device copy. */
rf_status rf_gpu_dict_sync(gstr *s, int64_t need);
void rf_gpu_dict_free(gstr *s);
/* Island j of map kernel kid on the device: its table over the codes that
** column col holds at rows (NULL: 0..n-1), indexed by code - *base (u8
** booleans, i64 ints, u32 string codes). */
rf_status rf_gpu_str_island(gstr *s, int32_t kid, int32_t j, const rf_gpu_island *is, gptr col, gptr rows, int64_t n,
                            gbuf *table, int64_t *base);
/* Byte-order ranks of the codes present in col (n rows): u32 per code from
** *lo; back (if not NULL): the code of each rank. */
rf_status rf_gpu_str_ranks(gstr *s, gptr col, int64_t n, gbuf *ranks, int64_t *lo, gbuf *back);

#endif
