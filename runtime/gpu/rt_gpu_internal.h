/*
** runtime/gpu/rt_gpu_internal.h: the GPU executor's inside: the device
** layer under it, and what the executor's files share.
**
** Owns the interface between the executor (rt_gpu_exec.c and the files it is
** split into, last section), which knows Harmony, and a device: the real one (rt_gpu_cuda.c: the CUDA driver opened
** with dlopen, CUB through skeletons/cub) or the emulator (rt_gpu_emu.c: the
** same generated kernels compiled as host C++, for tests on machines without
** a GPU). Also the memory pool (rt_gpu_pool.c): big device allocations,
** sub-allocated, so that no operator allocates device memory itself. And the
** executor's shared types (gx: a run; gval: a device value) and functions.
**
** Device addresses are gptr (CUdeviceptr on the real device, a host address
** in the emulator). Every operation returns an rf_status and, on failure,
** has added an error to the device's diagnostics naming the CUDA error.
*/
#ifndef RT_GPU_INTERNAL_H
#define RT_GPU_INTERNAL_H

#include "rf_common.h"
#include "rf_gpu_codegen.h"

#include <pthread.h>

typedef uint64_t gptr;

typedef struct gpool gpool;
typedef struct gdev gdev;
typedef struct gcache gcache; /* an input cache's device part (rt_gpu_cache.c) */
struct rf_rt_stored;          /* a database's narrow column as stored (runtime/rf_rt_stored.h) */

/* Makes bytes [begin, end) of a source that h2d_fill copies, at out. */
typedef void (*rf_gpu_fill_fn)(void *ctx, uint64_t begin, uint64_t end, char *out);

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
    /* n bytes to dst that fill makes, piece by piece: fill(ctx, begin, end,
    ** out) writes bytes [begin, end) of the source to out, called from
    ** several threads at once for disjoint pieces (the real device fills its
    ** pinned staging buffers so, and a gathered source costs no copy of its
    ** own). Returns when every piece has been made. */
    rf_status (*h2d_fill)(gdev *g, gptr dst, uint64_t n, rf_gpu_fill_fn fill, void *ctx);
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
    /* A database's narrow column s (runtime/rf_rt_stored.h) to the device
    ** column dst (s->nrows values of its type), as stored (rt_gpu_wire.c):
    ** round by round, its pieces packed into a staging buffer, copied into
    ** scratch (device memory of rf_gpu_wire_round_room bytes), widened from
    ** there into dst on the device. Adds the bytes that crossed to
    ** g->wire_bytes. Rows no piece covers are left as they are. */
    rf_status (*h2d_stored)(gdev *g, gptr dst, const struct rf_rt_stored *s, gptr scratch);
} gdev_ops;

/* Host time per class of device operation (rt_gpu_acct.c). */
enum { RF_GPU_ACCT_LAUNCH, RF_GPU_ACCT_WAIT, RF_GPU_ACCT_CUB, RF_GPU_ACCT_OTHER, RF_GPU_ACCT_N };
typedef struct gdev_acct {
    uint64_t calls[RF_GPU_ACCT_N];
    double seconds[RF_GPU_ACCT_N];
    int trace;      /* the gpu_trace setting: every operation of the run, as text in trace_text */
    rf_buf trace_text;
    double start;   /* the run's start, for the trace's times */
    /* rf_rt_options.trace (--trace): every operation, as rf_rt_trace_fn takes it */
    void (*fn)(void *ctx, const char *cat, const char *name, double t0, double t1, int64_t n);
    void *fn_ctx;
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
    uint64_t mem_cap;   /* the most the pool may hold (the gpu_memory setting); 0: no cap */
    uint64_t pool_first; /* the size of the pool's first arena (0: 1 GiB) */
    int pool_exact;     /* one device allocation per buffer (the gpu_pool_exact setting) */
    const char *cache_dir; /* the JIT and emulator caches' root (rf_gpu_cache_dir; the cache_dir setting) */
    uint64_t h2d_bytes, d2h_bytes; /* copied each way, the whole run (the accounting layer counts) */
    uint64_t wire_bytes; /* of h2d_bytes, the bytes that crossed (columns copied as stored cross in fewer) */
    int64_t wire_piece;  /* copies as stored: rows per piece at most (0: the device has none) */
    uint64_t wire_round; /* copies as stored: the bytes a round may take (a staging buffer's) */
    double pinned_gbs; /* the measured pinned host-to-device bandwidth (--profile); 0: not measured */
    /* host-to-device copies through the staging buffers, the whole run
    ** (--profile): seconds filling them on the host (copying, packing), and
    ** waiting for a buffer's earlier copy to leave it (the GPU's side) */
    double copy_fill_s, copy_wait_s;
    /* the start's parts, seconds (--profile): the stream and events (the
    ** pinned buffers too when kept from the last run); the pinned buffers,
    ** allocated on a thread beside the program's load, and how long their
    ** first use waited for them (0: kept from the last run) */
    double start_stream, start_pinned, start_pinned_wait;
    double start_arena; /* the pool's first arena, allocated on a thread of its own (0: not there) */
    double start_arena_wait; /* how long the pool's first allocation waited for that thread */
    double alloc_seconds;    /* in the driver's allocations (the pool's arenas), the whole run */
    int module_kept; /* the program's module was kept loaded from an earlier run of this process */
    struct rf_cpu_pool *cpu; /* the run's host threads: they fill the staging buffers of big copies */
    void *stream; /* the real device's stream (CUstream), for NCCL; NULL in the emulator */
};

/* Wraps g's operations in the accounting layer (once); reset zeroes the
** counts and, with trace, records every operation from then on. */
void rf_gpu_acct_install(gdev *g);
void rf_gpu_acct_reset(gdev *g, int trace);

/* Opens the real device (RF_OK) or says why not (RF_EUSER, why filled). */
rf_status rf_gpu_cuda_open(gdev *g, rf_diags *d, char *why, size_t nwhy);
/* 1 when the real device can be opened (opened once per process to find out). */
int rf_gpu_cuda_probe(char *why, size_t n);
/* The calling thread works in the device's context from now on (after a
** device opened on another thread); nothing where the probe failed. */
void rf_gpu_cuda_bind_thread(void);
/* The pinned host-to-device bandwidth in GB/s (10^9 bytes): timed copies of
** the staging buffer, made once per process, at the first call (--profile
** asks, at device open); 0 when not measured. */
double rf_gpu_cuda_pinned_gbs(gdev *g);
/* 1 once the driver started in this process (the probe succeeded). */
int rf_gpu_cuda_started(void);
/* The driver started (once in the process) without waiting for cudart's
** start on its thread (the device's first CUB call or load's end does): 1
** when the driver and the context are up. */
int rf_gpu_cuda_start(void);
/* The driver's start, seconds, for the profile of the run that claims them
** (the first to ask once cudart's thread is done; 1 then, else 0 and
** zeros): loading the driver and cuInit, the primary context, cudart's
** start (CUB's module) on its thread of its own, and how long the first
** that needed cudart waited for it. */
int rf_gpu_cuda_start_parts(double *init, double *context, double *cudart, double *cudart_wait);
/* Cheap, no driver start: 0 when the probe ran and failed or when the
** NVIDIA driver library cannot be loaded (why says so); else 1. */
int rf_gpu_cuda_maybe(char *why, size_t n);
/* Cheaper still, nothing loaded: 0 when there is surely no usable GPU, the
** driver's library installed nowhere the dynamic loader looks (or the probe
** ran and failed; a build without CUDA), why saying why; else 1
** (rt_gpu_driver_find.c has the search). */
int rf_gpu_cuda_absent(char *why, size_t n);
int rf_gpu_driver_installed(char *why, size_t n);
/* The CUDA devices this process sees, by the driver's library and cuInit
** alone (no context, no GPU memory taken): 0 when there is none or no
** driver, why saying why. */
int rf_gpu_cuda_count(char *why, size_t n);
/* Puts ptx's cubin into the JIT cache under cache_dir (the driver's linker,
** on the calling thread, as a run's module load would make it), unless it
** is there: 1 when it is there now. 0 without a started GPU; no messages
** (the run that loads the module reports any failure). */
int rf_gpu_cuda_jit_cache(const rf_gpu_ptx *ptx, const char *cache_dir);
/* The opened GPU's PCI address plus 1 (0 when none, or unknown). */
int64_t rf_gpu_cuda_pci(void);
rf_status rf_gpu_emu_open(gdev *g, rf_diags *d);
/* RF_GPU_EMULATE=1 in the environment selects the emulator. */
int rf_gpu_emulated(void);

/* ---- the pool ----------------------------------------------------------- */

typedef struct gbuf {
    gptr p;      /* 0 when nothing is allocated */
    uint64_t n;  /* bytes reserved (all of them allocated: a value moved to host memory copies n) */
} gbuf;

rf_status rf_gpool_new(gdev *g, gpool **out);
void rf_gpool_free(gpool *pl);
/* Room for bytes (256-aligned; 0 bytes gives an empty gbuf). RF_ENOMEM with a
** diagnostic when the device is full. */
rf_status rf_gpool_alloc(gpool *pl, uint64_t bytes, gbuf *b);
/* The size the pool's first arena takes on g when no request needs more
** (add_arena's first; 0 with gpu_pool_exact): what the real device
** allocates ahead, on its pinned buffers' thread (rt_gpu_cuda.c). */
uint64_t rf_gpool_first_bytes(const gdev *g);
/* As rf_gpool_alloc, but without freeing room (no value moves to host
** memory) and without a message: RF_EDEVMEM where the room is not free. */
rf_status rf_gpool_alloc_quiet(gpool *pl, uint64_t bytes, gbuf *b);
/* the same, placed at the top of the arenas: for buffers that outlive the run */
rf_status rf_gpool_alloc_kept(gpool *pl, uint64_t bytes, gbuf *b);
void rf_gpool_release(gpool *pl, gbuf *b); /* empties b */
/* fn(ctx) is asked to free room before a request fails (under a cap: a value
** moved to host memory); it returns 1 when it freed something, then the
** request is tried again. */
void rf_gpool_on_full(gpool *pl, int (*fn)(void *ctx), void *ctx);
/* A request that fails under a cap: fn(ctx, in_use, buf, n) writes what
** holds the bytes in use into the message (buf empty: nothing said). */
void rf_gpool_on_describe(gpool *pl, void (*fn)(void *ctx, uint64_t in_use, char *buf, size_t n), void *ctx);
uint64_t rf_gpool_in_use(const gpool *pl);
uint64_t rf_gpool_peak(const gpool *pl);
/* Across runs (rt_gpu_cache.c): keeps(ctx, p) says 1 for a buffer the
** keeper owns: rf_gpool_release then only empties the caller's gbuf, and
** the keeper frees it with rf_gpool_release_kept; *idle: the keeper's bytes
** that no value of the running program holds (not counted in its peak).
** rebind hands the pool (its arenas, the keeper's buffers) to the run of
** device g: no on_full, its peak from what the run holds now. */
void rf_gpool_keeper(gpool *pl, int (*keeps)(void *ctx, gptr p), void *ctx, const uint64_t *idle);
void rf_gpool_release_kept(gpool *pl, gbuf *b);
void rf_gpool_rebind(gpool *pl, gdev *g);
uint64_t rf_gpool_reserved(const gpool *pl); /* the arenas' bytes */
uint64_t rf_gpool_cap(const gpool *pl);
int rf_gpool_exact(const gpool *pl);

/* Hash table sizes: the least power of two >= n, at least 16. */
static inline uint64_t pow2_at_least(uint64_t n)
{
    uint64_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

/* The bits that hold every value below n (at least 1): a radix sort's width. */
static inline int bits_below(uint64_t n)
{
    int b = 1;
    while (b < 64 && (UINT64_C(1) << b) < n) b++;
    return b;
}

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
    int synced;      /* a kernel of this run asked for the device copy (it stays until the run ends) */
    uint64_t *idle;  /* with an input cache: its idle bytes, which hold the copy's (idle_dd) */
    uint64_t idle_dd; /* until a kernel of the run asks for it (rt_gpu_cache.c) */
} gstr;

/* Makes the device copy hold codes 0..need-1 (need 0: every code the
** dictionary has now), copying only the codes it lacks: a copy kept from
** earlier runs (rt_gpu_cache.c) grows by the codes interned since. */
rf_status rf_gpu_dict_sync(gstr *s, int64_t need);
void rf_gpu_dict_free(gstr *s);
/* Island j of map kernel kid on the device: its table over the codes that
** column col holds at rows (NULL: 0..n-1), indexed by code - *base (u8
** booleans, i64 ints, u32 string codes). */
rf_status rf_gpu_str_island(gstr *s, int32_t kid, int32_t j, const rf_gpu_island *is, gptr col, gptr rows, int64_t n,
                            gbuf *table, int64_t *base);
/* The range [*lo, *hi] of the codes column col holds at rows (NULL: 0..n-1;
** n > 0). */
rf_status rf_gpu_code_range(gstr *s, gptr col, gptr rows, int64_t n, int64_t *lo, int64_t *hi);
/* The codes column col holds at rows (NULL: 0..n-1): their range [*lo, *hi]
** and a device bitmap over it (*bm, a byte per code), 1 where present. */
rf_status rf_gpu_code_set(gstr *s, gptr col, gptr rows, int64_t n, int64_t *lo, int64_t *hi, gbuf *bm);
/* Byte-order ranks of the codes present in col (n rows): u32 per code from
** *lo; back (if not NULL): the code of each rank. */
rf_status rf_gpu_str_ranks(gstr *s, gptr col, int64_t n, gbuf *ranks, int64_t *lo, gbuf *back);

/* ==== the executor (rt_gpu_exec.c and the files it is split into) =========
** As SQLite splits where.c behind whereInt.h, the executor is split by role,
** each file naming what it owns:
**   rt_gpu_exec.c    the device's operations (rt_device.h); one kernel
**                    dispatched by kind
**   rt_gpu_stage.c   one kernel of the driver's walk: fused stages, the
**                    profile's GPU figures
**   rt_gpu_dev.c     launches, scans, selects, sorts; device values
**   rt_gpu_map.c     MAP, JOIN_MAP, GATHER_MAP
**   rt_gpu_join.c    JOIN_INDEX, ANTI_INDEX (builds, probes)
**   rt_gpu_group.c   GROUP, UNIQUE, DIFFERENCE, INSERT (first occurrences, sets)
**   rt_gpu_reduce.c  REDUCE
**   rt_gpu_rows.c    CONCAT, SORT, GATHER, COPY, FACTS
**   rt_gpu_fused.c   Kernel Weaver's fused kernels
**   rt_gpu_host.c    host fallbacks: string tables by code, error messages,
**                    maps and float aggregates on the host
**   rt_gpu_spill.c   values in host memory while the pool is full
**   rt_gpu_part.c    kernels in row ranges when their own data does not fit
**   rt_gpu_radix.c   group-bys and sorts in key partitions when theirs does not
**   rt_gpu_live.c    liveness across blocks: values freed at their last use
** Functions shared between them carry rf_gx_ ("GPU executor"). */

#include "rf_cpu.h"
#include "rf_rt_gpu.h"
#include "rf_runtime.h"
#include "rf_rt_agg_expr.h"
#include "rt_device.h"

#define TILE RF_GPU_TILE

/* ---- hash tables of first occurrences --------------------------------------------------- */

typedef struct keycols {
    int32_t n;
    gptr cols[RF_GPU_MAXC];
    char sig[RF_GPU_MAXC + 1];
} keycols;

typedef struct gset {
    gbuf tab;     /* u64 slots: row numbers, RF_EMPTY when free */
    uint64_t cap; /* slots, a power of two */
} gset;

typedef struct gval {
    int64_t nrows; /* REL rows; index entries; groups: rows grouped */
    int64_t cap;   /* REL: rows the columns have room for */
    gbuf *cols;    /* REL: ncols buffers, NULL when nothing is allocated */
    gbuf a, b;     /* index vectors */
    int has_groups;
    int64_t ngroups;
    gbuf gid, first;
    gset *set;
    struct gjidx *jidx; /* a join's build on it, kept while a loop reads it unchanged (rt_gpu_join.c) */
    int distinct; /* REL: its maker dropped repeated rows (rf_gpu_dedupe_cols) */
    /* a set's int columns stored in 32 bits (bit c: column c; rt_gpu_narrow.c),
    ** and keep_wide: it widened, or held a value outside 32 bits, for good */
    uint64_t narrow;
    int keep_wide;
    /* under a memory cap (rt_gpu_spill.c): the kernel that last used it (gx.epoch)
    ** and, while it lives in host memory, its buffers there */
    uint64_t used;
    struct gheld *held;
    /* a recursive set too big for the device, in host partitions by row
    ** hash (rt_gpu_recpart.c): its rows are there, nrows counts them */
    struct grecpart *rp;
} gval;

enum { WCHECK_WORDS = 256 }; /* deferred error words (gx.wcheck) */

typedef struct gx {
    const rf_hir_program *p;
    rf_rt_options o;
    rf_diags *d;
    rf_rt_dict *dict;
    rf_cpu_pool *cpool;  /* the driver's host threads */
    int threads;
    gdev g;
    int g_open;
    /* the program's module, loaded on a thread of its own (gpu_load_begin)
    ** beside the inputs' copies, through mod_g (a copy of the device taken
    ** before: its own operations, mod_d for messages); joined once by the
    ** load's end, the first launch or the close (rf_gx_module_wait) */
    pthread_t mod_th;
    int mod_running, mod_aside;
    rf_status mod_st;
    gdev mod_g;
    rf_diags mod_d;
    double mod_secs, mod_wait; /* its time on its thread; how long its join waited */
    gpool *pool;
    gval *vals;
    rf_rt_result *res;   /* the driver's result: the GPU's figures go there */
    rf_buf *fd_clash;    /* env's: a failed functional dependency's clash, for the ranks */
    rf_gpu_plan *plan;   /* the program's GPU plans (GPLN), owned */
    rf_gpu_fplan *nofuse; /* with --no-fuse: no fused kernels (owned) */
    rf_gpu_kplan *plans; /* by kernel id: plan->k */
    rf_rt_tuning tune; /* o.tuning, or the defaults */
    int32_t nkernels;
    int on_host; /* the current kernel ran (partly) on the host */
    rf_gpu_fplan *fplan; /* the fused kernels (none with --no-fuse) */
    uint8_t *fdone;      /* by unit: it ran fused in this visit of its block */
    uint8_t *fsplit;     /* by unit: its next run is stage by stage (ranks: a move falls in its span) */
    /* by variable, in a program of one block (each kernel runs once): the
    ** last kernel reading it; NULL in programs of several blocks */
    const rf_hir_kernel **last_reader;
    /* liveness across blocks (rt_gpu_live.c); NULL: not analysed. By kernel
    ** id: live_dead[live_start[id] .. live_start[id + 1]) die after it; by
    ** block: live_entry[live_bstart[b] .. live_bstart[b + 1]) are dead where
    ** it begins; live_first: 1 + the block a kernel begins, 0 */
    int64_t *live_start, *live_bstart;
    int32_t *live_dead, *live_entry, *live_first;
    int32_t live_pending; /* the kernel whose dead values are still to free, -1 */
    gstr str;    /* the dictionary on the device, string tables (rt_gpu_str.c) */
    /* error words of fused write passes, read once at the end (rf_gx_wcheck_flush;
    ** earlier where they fill, or the pool needs their room: rf_gx_wcheck_drop):
    ** their stages already passed the flags pass, so an error there is an
    ** internal one, not worth a wait per kernel */
    gbuf wcheck;
    int64_t wcheck_used;
    /* by variable: host copies the view operation made (several ranks move
    ** rows through host memory where no device exchange serves); NULL: none */
    rf_rt_rel *views;
    const rf_hir_kernel *wcheck_of[WCHECK_WORDS];
    /* values moved to host memory under the cap (rt_gpu_spill.c): the
    ** current kernel's number (its values have used == epoch and stay),
    ** values moved out, bytes out and back */
    uint64_t epoch;
    int64_t spills;
    uint64_t spill_out, spill_in;
    /* kernels run in row ranges (rt_gpu_part.c) and their ranges; fused
    ** kernels of totals so run (rt_gpu_fusedpart.c) and theirs */
    int64_t parted, parts;
    int64_t fparted, fparts;
    struct gfrange *frange; /* the fused kernel running in row ranges, NULL */
    /* kernels run in key partitions (rt_gpu_radix.c) and their partitions */
    int64_t radixed, radix_parts;
    /* the last part (row range, key partition, range of groups) that did not
    ** fit: its rows, and what it was when it cannot split (RF_GX_UNIT_*) */
    int64_t unfit_rows;
    int unfit_unit;
    /* a part's kernel found no room for the strings' copy it reads
    ** (rf_gx_args_rowstr): then that copy, not the part, does not fit */
    int dict_unfit;
    /* a kernel in row ranges whose output is one of its own inputs (a
    ** map's side, `dist = gather_map(dist, dist.sel)`): each range's output
    ** goes to *range_out, not to variable range_out_var, which the next
    ** range still reads (NULL: none) */
    gval *range_out;
    int32_t range_out_var;
    /* kernels run on recursive sets in partitions (rt_gpu_recpart.c), the
    ** most partitions, inserts so run, bytes to the device and back */
    int64_t recparted, recpart_max, recpart_rounds, recpart_hits;
    uint64_t recpart_in, recpart_out, recpart_clock;
    int32_t recpart_var; /* the set a kernel in partitions runs on (with recpart_cur, its partitions) */
    struct grecpart *recpart_cur;
    /* join builds kept across a loop's rounds (rt_gpu_join.c): by kernel id,
    ** 1 + the block of a join whose build side that block's loop never
    ** writes (0: built every time); the block whose builds are kept, how
    ** many are kept; builds made and reused, for --profile */
    int32_t *jkeep, *kblock; /* kblock: by kernel id, its block; jkeep -1: an input's, kept for the run */
    int32_t jidx_block;
    int64_t jidx_live, jidx_loop, jbuilds, jreuses; /* jidx_loop: those kept for a loop */
    /* the input cache's device part (rt_gpu_cache.c; NULL: the run keeps
    ** nothing): input columns found there and copied into it, columns
    ** evicted for room (bytes: their buffers) */
    gcache *gc;
    int64_t gc_hits, gc_misses, gc_evicted;
    int64_t gc_grown; /* cached columns grown by their new rows alone (rt_gpu_cache.c) */
    uint64_t gc_hit_bytes, gc_miss_bytes, gc_evicted_bytes;
} gx;

/* ---- joins ---------------------------------------------------------------------------- */

typedef struct jtab {
    gbuf hs, js, start; /* hashes sorted by bucket, their rows (none: ordered), each bucket's start */
    uint64_t mask, base;
    int64_t rot1; /* 0: the mixing hash; else an ordered build's rotation + 1 */
    int64_t n;
} jtab;

/* A fused kernel of totals running in row ranges (rt_gpu_fusedpart.c):
** its whole input's rows (a join source's skew is judged on them, not on a
** range's), and a join source's build, made for the first range and kept
** for the others (kept: as rf_gx_join_table gave it). */
typedef struct gfrange {
    int64_t rows;
    jtab jt;
    int made, kept;
} gfrange;

/* A build kept on its relation's value (gval.jidx): its key columns and
** signature, the block whose loop reads it (-1: an input's, kept for the
** run), and whether a kernel holds it. */
typedef struct gjidx {
    jtab t;
    int32_t nkeys, block, busy;
    int32_t keys[RF_GPU_MAXC];
    char sig[RF_GPU_MAXC + 1];
} gjidx;

/* Rows ordered by their first column (data files written in key order, and
** the filters, maps, joins and uniques that keep their left input's order)
** are deduplicated (grouped by keys whose first column orders them) without
** a hash table: runs_first compares each row with the earlier rows of its
** run of equal first columns, at most RUNS_LIMIT of them (a longer search is
** reported and the caller hashes). From the tuning's gpu_runs_min rows on
** (65536: below, one hashing pass costs about as little as the attempt;
** tests set 1: small inputs through the walk, and its fallbacks). */
enum { RUNS_LIMIT = 32 };

static inline rf_loc kloc(const gx *x, const rf_hir_kernel *k)
{
    /* the rule's own file (of a program of several sources), else the program's */
    return rf_mkloc(k->loc.file ? k->loc.file : x->p->source, k->loc.line, k->loc.line ? k->loc.col : 0);
}

/* Bytes per value on the device: the host's, a wide decimal's 16 included
** (the host's __int128 bytes), so that host and device copies are plain
** byte copies. */
static inline int wid(rf_type t) { return rf_rt_type_width(t); }

static inline rf_status galloc(gx *x, uint64_t bytes, gbuf *b) { return rf_gpool_alloc(x->pool, bytes, b); }
static inline void gfree(gx *x, gbuf *b) { rf_gpool_release(x->pool, b); }

static inline rf_status get_i64(gx *x, gptr src, int64_t *v) { return x->g.ops->d2h(&x->g, v, src, 8); }

static inline rf_status put_u64(gx *x, gptr dst, uint64_t v) { return x->g.ops->h2d(&x->g, dst, &v, 8); }

static inline int64_t var_rows(const gx *x, int32_t var) { return x->vals[var].nrows; }

static inline gptr colp(const gval *v, int32_t c) { return v->cols ? v->cols[c].p : 0; }

static inline rf_dec128 sum_of(const uint64_t *w) { return (rf_dec128)(((unsigned __int128)w[1] << 64) | w[0]); }

/* A join whose left side is far smaller than its right: a probe walks all
** of its matches alone, so few left rows with many matches each leave the GPU
** idle (q11: one nation row, 4,000 suppliers of it, in one thread). Then the
** build is on the left and the right rows probe, one thread each; the pairs
** are sorted back into left-then-right order (a stable radix sort on the
** left row, log2(left rows) bits), the order the CPU gives. */
static inline int join_skewed(int64_t nl, int64_t nr) { return nl > 0 && nr / 32 > nl; }

/* Byte-order ranks of the codes present in col (all n rows), as on the CPU:
** ranks (u32 per code from *lo) and, if back is not NULL, the code of each
** rank. Empty when n == 0. Computed on the device (rt_gpu_str.c). */
static inline rf_status string_ranks(gx *x, gptr col, int64_t n, gbuf *ranks, int64_t *lo, gbuf *back)
{
    return rf_gpu_str_ranks(&x->str, col, n, ranks, lo, back);
}

/* rt_gpu_dev.c: device primitives and values */
rf_status rf_gx_launch_max(gx *x, const char *name, int64_t work, const rf_gpu_args *a, uint64_t max_grid);
rf_status rf_gx_launch(gx *x, const char *name, int64_t work, const rf_gpu_args *a);
rf_status rf_gx_hlaunch(gx *x, const char *sig, const char *op, int64_t work, const rf_gpu_args *a);
rf_status rf_gx_dcopy(gx *x, gptr dst, gptr src, uint64_t n);
rf_status rf_gx_err_word(gx *x, gbuf *e);
rf_status rf_gx_wcheck_flush(gx *x);
rf_status rf_gx_wcheck_take(gx *x, const rf_gpu_funit *u, gptr *at);
/* The pool is full: the deferred error words read back (rf_gx_wcheck_flush)
** and their buffer freed; the next fused write pass takes a new one. 1: it
** freed room. */
int rf_gx_wcheck_drop(gx *x);
rf_status rf_gx_scan_into(gx *x, int wide, gptr in, int64_t n, gptr pos, int64_t *w, int nw);
/* The scratch a scan_into of n items needs, allocated ahead (*t), and the
** scan with it (temp NULL or empty: its own): a kernel that must not fail
** for room once it has begun changing its output (an insert) takes all its
** room first. */
rf_status rf_gx_scan_temp(gx *x, int wide, int64_t n, gbuf *t);
rf_status rf_gx_scan_into_temp(gx *x, int wide, gptr in, int64_t n, gptr pos, int64_t *w, int nw, const gbuf *temp);
rf_status rf_gx_scan_flags(gx *x, gptr flags, int64_t n, gbuf *pos, int64_t *total);
rf_status rf_gx_scan_counts(gx *x, gptr counts, int64_t n, gbuf *pos, int64_t *total);
rf_status rf_gx_select_into(gx *x, gptr flags, int64_t n, gbuf *out, gptr cnt, int64_t *w, int nw);
rf_status rf_gx_select_flags(gx *x, gptr flags, int64_t n, gbuf *out, int64_t *m);
rf_status rf_gx_select_room(gx *x, gptr flags, int64_t n, int64_t room, gbuf *out, int64_t *m);
rf_status rf_gx_sort_pairs(gx *x, gptr keys, gptr vals, int64_t n, int bits, gbuf *kout, gbuf *vout);
rf_status rf_gx_iota(gx *x, int64_t n, gbuf *out);
void rf_gx_set_free(gx *x, gset **s);
void rf_gx_val_clear(gx *x, gval *v, int32_t ncols);
void rf_gx_var_clear(gx *x, int32_t var);
void rf_gx_var_set(gx *x, int32_t var, gval *v);
rf_status rf_gx_rel_alloc(gx *x, gval *v, const rf_type *types, int32_t ncols, int64_t rows, int64_t cap);
rf_status rf_gx_rel_gather(gx *x, const gval *in, const rf_type *types, int32_t ncols, gptr idx, int64_t n,
                            gval *out);
/* Variable var's value as a host relation (its columns' bytes as they are). */
rf_status rf_gx_host_rel(gx *x, int32_t var, rf_rt_rel *r);
rf_status rf_gx_host_i64(gx *x, gptr src, int64_t n, int64_t **out);
/* r on the device; read (NULL: all) marks the columns to copy, the others
** get no memory; stored (NULL: none) gives per column a database's narrow
** column as stored where r's column is NULL (copied as stored: rt_gpu_wire.c) */
rf_status rf_gx_upload_rel(gx *x, const rf_rt_rel *r, const rf_type *types, int32_t ncols, const uint8_t *read,
                           struct rf_rt_stored *const *stored, gval *out);

/* rt_gpu_host.c: on the host */
rf_status rf_gx_build_island(gx *x, const rf_hir_kernel *k, const rf_gpu_island *is, const gval *side, gptr rows,
                              int64_t n, gbuf *table, int64_t *base);
/* The message of map k's failing row (of n; the CPU evaluator on it, or its
** group: rf_rt_agg_expr_fail). */
rf_status rf_gx_map_error(gx *x, const rf_hir_kernel *k, const int32_t vars[2], const gptr rows[2], int64_t n,
                          int64_t row);
rf_status rf_gx_map_on_host(gx *x, const rf_hir_kernel *k, const int32_t vars[2], const gval *idx, int64_t n);
/* Map k failed in one of its row ranges (rt_gpu_part.c) with a run-time
** error: where it is an aggregated expression's, the group over all its
** rows (rf_rt_agg_expr_fail, its inputs moved to host memory), replacing
** d's diagnostics after keep; RF_EUSER otherwise, d as it was. */
rf_status rf_gx_map_error_whole(gx *x, const rf_hir_kernel *k, int64_t keep, int64_t keep_errors);
/* A map, join map or gather map that runs on the host (its plan is not the
** GPU's) whose values do not fit on the device: its sides and index read from
** host memory, its output left there (rt_gpu_spill.c) until a kernel reads it. */
rf_status rf_gx_map_held(gx *x, const rf_hir_kernel *k);
rf_status rf_gx_float_agg(gx *x, const rf_qp_agg *ag, const gval *in, int32_t col, const rf_cpu_groups *hg,
                           const int64_t *counts, gptr dst);

/* rt_gpu_map.c: maps */
void rf_gx_args_sides(gx *x, rf_gpu_args *a, const int32_t vars[2], const gptr rows[2]);
rf_status rf_gx_args_consts(gx *x, const rf_gpu_kplan *pl, rf_gpu_args *a, int32_t at);
/* The dictionary's device copy in a's arguments where pl has string work over
** two columns (rf_gpu_kplan.nrowstr), for a map or a fused stage; once per args. */
rf_status rf_gx_args_rowstr(gx *x, const rf_gpu_kplan *pl, rf_gpu_args *a);
rf_status rf_gx_args_islands(gx *x, const rf_hir_kernel *k, const int32_t vars[2], const gptr rows[2], int64_t n,
                             int32_t slot0, gbuf *tabs, rf_gpu_args *a);
int rf_gx_repeats_dropped(gx *x, const rf_hir_kernel *k, int64_t n);
rf_status rf_gx_k_map(gx *x, const rf_hir_kernel *k);

/* rt_gpu_join.c: joins */
void rf_gx_jtab_free(gx *x, jtab *t);
void rf_gx_jtab_args(const jtab *t, rf_gpu_args *a);
rf_status rf_gx_join_build(gx *x, const char *sig, const rf_gpu_args *keys, int64_t nr, jtab *t);
rf_status rf_gx_join_table(gx *x, const rf_hir_kernel *k, int32_t bvar, const int32_t *bk, int32_t nkeys,
                           const char *sig, const rf_gpu_args *keys, jtab *t, int *kept);
void rf_gx_jtab_done(gx *x, jtab *t, int kept);
rf_status rf_gx_jkeep_init(gx *x);
void rf_gx_jidx_free(gx *x, gval *v);
void rf_gx_jidx_before(gx *x, const rf_hir_kernel *k);
int rf_gx_jidx_drop_one(gx *x);
rf_status rf_gx_k_join_index(gx *x, const rf_hir_kernel *k);

/* rt_gpu_group.c: groups, distinct rows, sets */
void rf_gx_keys_of(const gval *v, const rf_type *types, const int32_t *cols, int32_t n, keycols *kc);
rf_status rf_gx_k_group(gx *x, const rf_hir_kernel *k);
rf_status rf_gx_k_insert(gx *x, const rf_hir_kernel *k);
int rf_gx_take_columns(gx *x, const rf_hir_kernel *k, gval *r);
rf_status rf_gx_k_unique(gx *x, const rf_hir_kernel *k);
/* The row numbers of the first occurrence of every distinct row of v (rows
** with want != 0, nwant of them, -1: not counted), ascending, into a fresh
** *keep (*m of them): what a unique keeps, without its rows gathered. */
rf_status rf_gx_distinct_rows(gx *x, const gval *v, const rf_hir_var *hv, gptr want, int64_t nwant, gbuf *keep,
                              int64_t *m);

/* rt_gpu_reduce.c: reductions */
/* Agg ag's value from a group's exact sum s of n rows, by the CPU's rules,
** into *v: NULL, or the CPU's words for why it fails (rf_rt_agg_fail). */
const char *rf_gx_sum_value(const rf_qp_agg *ag, rf_type at, rf_dec128 s, int64_t n, int64_t *v);
/* Reports reduce k's least failing group f, of keys (its group columns on
** the host), as the CPU does: RF_EUSER. */
rf_status rf_gx_agg_fail(gx *x, const rf_hir_kernel *k, const rf_rt_agg_fail *f, const rf_rt_rel *keys);
rf_status rf_gx_k_reduce(gx *x, const rf_hir_kernel *k);

/* rt_gpu_rows.c: kernels that move rows */
rf_status rf_gx_k_concat(gx *x, const rf_hir_kernel *k);
rf_status rf_gx_k_sort(gx *x, const rf_hir_kernel *k);
rf_status rf_gx_k_gather(gx *x, const rf_hir_kernel *k);
rf_status rf_gx_k_copy(gx *x, const rf_hir_kernel *k);
rf_status rf_gx_k_facts(gx *x, const rf_hir_kernel *k);

/* rt_gpu_lftj.c: the leapfrog triejoin */
rf_status rf_gx_k_lftj(gx *x, const rf_hir_kernel *k);
/* rt_gpu_fused.c: fused kernels */
rf_status rf_gx_k_fused(gx *x, const rf_gpu_funit *u, int *ran);
/* A fused kernel of totals over the rows its input holds now, its totals'
** accumulator words (u->nacc, rf_gpu_ftotal's layout) into out instead of
** results; *ran 0 as rf_gx_k_fused gives it (a stage's error, a table of
** groups too small). */
rf_status rf_gx_k_fused_words(gx *x, const rf_gpu_funit *u, int *ran, uint64_t *out);
/* The totals' results (the reduces' relations) from their words acc. */
rf_status rf_gx_fused_finish(gx *x, const rf_gpu_funit *u, const uint64_t *acc);

/* rt_gpu_fusedpart.c: a fused kernel of totals in row ranges of its input */
/* Whether u can run in ranges: it has totals, and its input (the relation
** its first stage maps, the index it reads, a probe's left rows) splits into
** plain ranges of rows; with held, the input waits in host memory now. */
int rf_gx_fused_ranges_can(const gx *x, const rf_gpu_funit *u, int held);
/* Whether u goes to ranges at once: it can, and the columns it reads of
** its input fill more than a range may (bringing them back would only
** move them out again). */
int rf_gx_fused_ranges_first(const gx *x, const rf_gpu_funit *u);
/* u run range by range, the ranges' totals combined exactly; *ran 0 where
** it did not run (a stage's error, more groups than a table holds): its
** stages then run one by one. RF_EDEVMEM where a range of one row does not fit. */
rf_status rf_gx_k_fused_ranges(gx *x, const rf_gpu_funit *u, int *ran);

/* rt_gpu_narrow.c: a set's int columns in 32 bits while every value fits */
int rf_gx_narrow_bit(const gval *v, int32_t c);
/* Column c's bytes per row in set var. */
uint64_t rf_gx_set_width(const gx *x, int32_t var, int32_t c);
/* The keys of set var's own kernels: its columns and (narrow) N letters. */
void rf_gx_set_keys(gx *x, int32_t var, keycols *kc);
/* Set var narrowed when it has int columns and every value fits (one wait). */
rf_status rf_gx_narrow_try(gx *x, int32_t var);
/* Set var's columns back to 64 bits; for_reader: for good, its table freed. */
rf_status rf_gx_widen(gx *x, int32_t var, int for_reader);
/* The narrow sets kernel k (and fused kernel u's stages) read other than as
** their own kernels widened first. */
rf_status rf_gx_widen_for(gx *x, const rf_hir_kernel *k, const rf_gpu_funit *u);

/* rt_gpu_spill.c: values in host memory while the cap leaves no room */
void rf_gx_spill_init(gx *x);
/* Kernel k (with the stages of fused kernel u, when not NULL) is about to
** run: its values are marked in use and those in host memory come back. */
rf_status rf_gx_hold_kernel(gx *x, const rf_hir_kernel *k, const rf_gpu_funit *u);
/* Every value's buffers to host memory, those in use too (between kernels:
** the free room in one piece again, but for what is not a value). */
rf_status rf_gx_compact(gx *x);
/* Variable var's buffers moved to host memory now, and back. */
rf_status rf_gx_spill_var(gx *x, int32_t var);
rf_status rf_gx_unspill_var(gx *x, int32_t var);
/* Column c of a value in host memory (NULL: none there). */
const void *rf_gx_held_col(const gval *v, int32_t c);
/* The bytes of held buffer c (0: none in host memory). */
uint64_t rf_gx_held_len(const gval *v, int32_t c);
/* Over v's rows in host memory (those keep marks; NULL: all), in order, the
** first whose first nk columns (of the given types) an earlier row has
** (*row, -1: none) and that earlier row (*frow): a functional
** dependency's violation, found on the host (rt_gpu_radix.c). */
rf_status rf_gx_held_first_repeat(const rf_type *types, const gval *v, int32_t nk, const uint8_t *keep, int64_t *frow,
                                  int64_t *row);
/* Host rows r (the columns read marks; NULL: all) as a value in host
** memory, without a copy: with borrowed (r's columns belong to an input
** cache and outlive the run) r's columns read in place and never freed
** here; else taken from r (their slots in r set to NULL), freed with the value. */
rf_status rf_gx_held_rel(gx *x, rf_rt_rel *r, const rf_type *types, int32_t ncols, const uint8_t *read, int borrowed,
                         gval *out);
/* host (len bytes, malloc'd, taken over) becomes column c of v in host memory. */
rf_status rf_gx_held_adopt(gval *v, int32_t ncols, int32_t c, void *host, uint64_t len);
/* Drops the diagnostics added since there were count (nerrors errors): a
** request that failed for lack of room, then met another way. */
void rf_gx_held_drop_diags(gx *x, int64_t count, int64_t nerrors);
/* Variable var alone is in use (an input loading, an output going to the host). */
rf_status rf_gx_hold_var(gx *x, int32_t var);
/* Frees v's host copies (part of rf_gx_val_clear). */
void rf_gx_held_free(gval *v);

/* rt_gpu_part.c: a kernel in row ranges when its values and results do not fit at once */
int rf_gx_part_can(const gx *x, const rf_hir_kernel *k);
rf_status rf_gx_run_parts(gx *x, const rf_hir_kernel *k);
/* What a part that did not fit was, when nothing smaller can be made of it:
** a run that fails for it leaves the GPU (the driver's warning says "does
** not split"); any other part splits further. */
enum { RF_GX_UNIT_NONE, RF_GX_UNIT_ROW, RF_GX_UNIT_KEY, RF_GX_UNIT_GROUP };
/* A part of rows rows that did not fit (unit: RF_GX_UNIT_*), noted for the message. */
void rf_gx_unfit(gx *x, int64_t rows, int unit);
/* The error of a kernel whose smallest part did not fit (the one noted),
** in place of the pool's since diagnostic ndiag: RF_EDEVMEM. */
rf_status rf_gx_unfit_error(gx *x, int64_t ndiag, int64_t nerr);
/* "under the cap (--gpu-memory) of N bytes" or "in the N MiB the device had
** free": the room a part did not fit in, for a message. */
void rf_gx_cap_text(const gx *x, char *cap, size_t n);
/* The last "out of GPU memory" error since diagnostic from, what put before
** its message (which part of the run it was); NULL where there is none. */
rf_diag *rf_gx_oom_prefix(gx *x, int64_t from, const char *what);
/* A leapfrog triejoin whose sorted inputs (read whole) cannot all be on the
** device: the message, in place of the pool's since diagnostic ndiag. */
rf_status rf_gx_lftj_unfit(gx *x, const rf_hir_kernel *k, int64_t ndiag, int64_t nerr);
/* a kernel's output in host memory, growing part by part */
typedef struct gacc {
    char **col;
    uint64_t *cap; /* bytes each column has room for */
    uint8_t *has;  /* a part had the column on the device */
    int64_t rows;
} gacc;
/* The pairs (l[i], r[i]) of a join made in parts, ordered by left row as the
** whole join orders them: a stable counting sort, so each left row's right
** rows keep the order the parts gave them (r NULL: the left rows alone).
** RF_EINTERNAL for a left row outside [0, nleft) (rt_gpu_part.c). */
rf_status rf_gx_pairs_by_left(int64_t *l, int64_t *r, int64_t n, int64_t nleft);
void rf_gx_acc_free(gacc *a, int32_t ncols);
rf_status rf_gx_acc_take(gx *x, gacc *a, const rf_hir_var *ov, int index, int side, int64_t lo, const gval *out);
rf_status rf_gx_acc_to_value(gx *x, gacc *a, int32_t var, int index);
/* Rows [lo, hi) of value v (of variable type hv), whose buffers wait in host
** memory, on the device as *r: a relation's columns (those cols marks; NULL:
** every column v holds), or with index set the index's entries (a, b). */
rf_status rf_gx_range_of(gx *x, const gval *v, const rf_hir_var *hv, int index, const uint8_t *cols, int64_t lo,
                         int64_t hi, gval *r);

/* rt_gpu_radix.c: group-bys and sorts in key partitions when their values do not fit at once */
int rf_gx_radix_can(const gx *x, const rf_hir_kernel *k);
rf_status rf_gx_run_radix(gx *x, const rf_hir_kernel *k);
int rf_gx_radix_side_can(const gx *x, const rf_hir_kernel *k); /* joins, join maps: after row ranges failed */

/* Whether kernel k reads input var's columns: a count of all rows (one
** group, count() alone) reads none (rt_gpu_narrow.c). */
int rf_gx_reads_cols(const gx *x, const rf_hir_kernel *k, int32_t var);

/* rt_gpu_recpart.c: a recursive set that does not fit, in partitions by row hash */
int rf_gx_recpart_on(const gx *x, const rf_hir_kernel *k);  /* its set is in partitions */
int rf_gx_recpart_can(const gx *x, const rf_hir_kernel *k); /* an insert or difference on a grown set */
rf_status rf_gx_recpart_run(gx *x, const rf_hir_kernel *k);
/* The whole set back together, in host memory (a value the spill path brings back). */
rf_status rf_gx_recpart_join(gx *x, int32_t var);
void rf_gx_recpart_free(gx *x, gval *v, int32_t ncols);
/* The pool is full: one partition kept on the device leaves it (1), or none is there (0). */
int rf_gx_recpart_drop_one(gx *x);
/* An output's rows straight from host memory (a set in partitions, a value
** moved out): no room on the device needed. */
rf_status rf_gx_held_host_rel(gx *x, int32_t var, rf_rt_rel *r);

/* rt_gpu_stage.c: one kernel of the driver's walk (rf_rt_device_ops.run) */
rf_status rf_gx_run(gx *x, const rf_hir_kernel *k, rf_rt_kprof *prof);
/* The device's fused_until and unfuse (rt_device.h), rt_gpu_stage.c. */
int32_t rf_gx_fused_until(gx *x, const rf_hir_kernel *k);
void rf_gx_unfuse(gx *x, const rf_hir_kernel *k);

/* rt_gpu_xchg.c: several ranks: a relation's rows moved on the device (rt_device.h's exchange) */
rf_status rf_gx_exchange(void *dev, int32_t var, const rf_rt_xmove *mv, const rf_rt_xport *xp, rf_rt_xstat *xs);
/* rt_device.h's codes_below: every string code of var's rows below limit. */
rf_status rf_gx_codes_below(void *dev, int32_t var, int64_t limit, int *below);
/* rt_gpu_live.c: values freed at their last use across blocks */
rf_status rf_gx_live_init(gx *x);
void rf_gx_live_free(gx *x);
int rf_gx_live_dies(const gx *x, const rf_hir_kernel *k, int32_t var);
void rf_gx_live_before(gx *x, const rf_hir_kernel *k);

/* rt_gpu_cache.c: what the GPU keeps in an input cache across runs */
/* The run takes the cache's pool (made now if there is none) and its
** dictionary copy; close gives them back (the run's values freed first). */
rf_status rf_gx_cache_open(gx *x, rf_rt_devcache *slot);
void rf_gx_cache_close(gx *x);
/* As rf_gx_upload_rel, the columns with a stamp (stamps[c] != 0) through the
** cache: found there (no copy), or copied and kept. */
rf_status rf_gx_cache_upload_rel(gx *x, const rf_rt_rel *r, const rf_type *types, int32_t ncols, const uint8_t *read,
                                 const uint64_t *stamps, struct rf_rt_stored *const *stored, gval *out);
/* The pool is full: a cached column no value uses leaves (least recently
** used first), else the dictionary's copy this run has not read; 1 when
** something left. */
int rf_gx_cache_evict(gx *x);
/* The cache's figures of the run into res (--profile). */
void rf_gx_cache_report(gx *x, rf_rt_result *res);

/* rt_gpu_exec.c: the run */
rf_status rf_gx_run_kernel(gx *x, const rf_hir_kernel *k);

/* rt_gpu_wire.c: a database's narrow columns copied as stored (skeletons/cuda/rf_wire.h) */
/* The device memory a round of s's pieces (at most `piece` rows each) takes
** at most: cap, or less for a short column (its whole). */
uint64_t rf_gpu_wire_round_room(const struct rf_rt_stored *s, int64_t piece, uint64_t cap);
/* The pieces of s from block *blk, row *row of it on that fit cap bytes (at
** least one) packed as one round at out, their values copied by cpu's
** threads: *bytes the round's, *npieces its pieces; *blk, *row move past
** them. */
rf_status rf_gpu_wire_pack(rf_cpu_pool *cpu, const struct rf_rt_stored *s, int64_t piece, uint64_t cap, int64_t *blk,
                           int64_t *row, void *out, uint64_t *bytes, int32_t *npieces);
/* A round's values into the column dst of elem bytes a value (the host's widening). */
void rf_gpu_wire_widen_host(const void *round, int32_t npieces, int elem, void *dst);
/* Stored column s to the device column dst: as stored, widened on the
** device, where the device and room for a round allow; else widened on the
** host (once, rf_rt_stored_widen) and copied. */
rf_status rf_gx_h2d_stored(gx *x, gptr dst, struct rf_rt_stored *s);
/* Waits for the program's module on its thread (once; at once where none
** runs): its messages into x->d, its status. */
rf_status rf_gx_module_wait(gx *x);

#endif
