/*
** runtime/rt_device.h: the device executor interface: what a device (the
** CPU, the GPU, tomorrow partitions of a relation out of core or the ranks
** of an MPI job) does for the one driver, runtime/rt_run.c.
**
** Owns: the table of operations a device implements (rf_rt_device_ops, in
** the manner of SQLite's sqlite3_vfs and of the GPU's own gdev_ops one layer
** down), the run's shared state a device receives (rf_rt_env), and what one
** kernel's run tells the profile (rf_rt_kprof).
**
** Who calls whom. The driver (rt_run.c) chooses the device, loads the
** inputs on the host (rt_inputs.c: files, databases, the input cache),
** walks the block graph (fixpoints through rf_rt_fixpoint, the
** --max-iterations bound, releases of dead values), keeps the profile and
** collects the outputs. It calls a device only through this table; a device
** calls nothing of the driver's nor of another device. The CPU executor
** (runtime/cpu, rf_rt_cpu_device) and the GPU executor (runtime/gpu,
** rf_rt_gpu_device) both implement it.
**
** Values. A device holds one value per program variable (a relation, an
** index vector or a group table) in its own memory, named by the variable's
** number; the driver never sees them except through rows and to_host.
*/
#ifndef RF_RT_DEVICE_H
#define RF_RT_DEVICE_H

#include "rf_cpu.h"
#include "rf_rt_xport.h"
#include "rf_runtime.h"

struct rf_rt_stored; /* rf_rt_stored.h */

/* A device's part of an input cache (rf_rt_cache, rt_inputs.c): what the
** device keeps across the runs that share the cache (the GPU: the input
** columns it copied and the dictionary's device copy, rt_gpu_cache.c). The
** cache holds the slot and calls release(part) first when it is freed; the
** device fills the slot and owns what part points to. */
typedef struct rf_rt_devcache {
    void *part;
    void (*release)(void *part);
    /* Optional: the copy kept under stamp goes (its host rows will never be
    ** handed out again under it); called between runs. */
    void (*drop)(void *part, uint64_t stamp);
} rf_rt_devcache;

/* One run as the driver sets it up for the device. */
typedef struct rf_rt_env {
    const rf_hir_program *p;
    const rf_rt_options *o;
    rf_rt_dict *dict;    /* the run's strings (the driver owns it) */
    rf_cpu_pool *pool;   /* host threads (the driver owns them) */
    int threads;         /* their number */
    rf_rt_result *res;   /* the result being made: a device adds its own figures */
    rf_diags *d;         /* errors, worded as the CPU words them */
    rf_buf *fd_clash;    /* NULL, or where a derived functional predicate's failed check
                            leaves its clash's key (rf_rt_fd_fail), and an aggregate its
                            least failing group's (rf_rt_agg_fail_report): ranks vote the least */
    int aside;           /* open and load_begin run on a thread of their own, beside the
                            host's reading of the inputs: no trace calls from them, and
                            attach follows before any other operation */
    rf_rt_devcache *devcache; /* the input cache's device slot (the run has a cache; on
                                 ranks the rank's own, its share's columns under
                                 stamps of their own); NULL: keep nothing after the run */
} rf_rt_env;

/* What one profiled kernel's run tells the driver's profile (rf_rt_kstat):
** the driver counts calls, wall time, rows and bytes; a device may refine. */
typedef struct rf_rt_kprof {
    rf_rt_kstat *s;        /* the kernel's statistics (read-write for a device that charges itself) */
    int charged;           /* set: the device charged this call itself (a stage of a fused kernel) */
    double device_seconds; /* >= 0: the time measured on the device (else the wall time counts) */
    int on_host;           /* set: host work (fallbacks) took part: the wall time counts */
    int rows_in_unknown;   /* set: the rows read are not the CPU's (repeats dropped earlier) */
    int rows_out_unknown;  /* set: likewise the rows written */
    const char *device;    /* not NULL: where this call ran ("gpu+cpu") */
} rf_rt_kprof;

typedef struct rf_rt_device_ops {
    const char *name; /* "cpu", "gpu": rf_rt_result.device */
    /* Opens the device for a run of env->p (env stays valid until close); *dev: its state. */
    rf_status (*open)(const rf_rt_env *env, void **dev);
    /* Where kernel k runs, for the profile ("cpu", "gpu"). */
    const char *(*where)(void *dev, const rf_hir_kernel *k);
    /* The load begins: the device readies its code (the GPU loads the
    ** program's kernels, on a thread of its own beside the loads; load_end
    ** waits for it). */
    rf_status (*load_begin)(void *dev);
    /* Takes input variable var's rows: rel's columns become the device's, or
    ** with borrowed only rel->cols itself (the columns belong to a cache).
    ** stamps (NULL: none): per column, 0 or a number that names the column's
    ** rows for the cache's whole life (the same number, the same bytes), under
    ** which a device may keep its copy in env->devcache for later runs.
    ** stored (NULL: none; only for a device that takes_stored): per column,
    ** NULL or the column as a database stores it (rf_rt_stored.h), rel's
    ** column being NULL; it belongs to the input reader and lives until the
    ** device is closed. */
    rf_status (*load)(void *dev, int32_t var, rf_rt_rel *rel, int borrowed, const uint64_t *stamps,
                      struct rf_rt_stored *const *stored);
    /* Every input is loaded: the device is ready to run (copies done). */
    rf_status (*load_end)(void *dev);
    /* Runs kernel k on the values it holds; prof: NULL unless k is profiled. */
    rf_status (*run)(void *dev, const rf_hir_kernel *k, rf_rt_kprof *prof);
    /* The rows (index entries, rows grouped) variable var holds now. */
    int64_t (*rows)(const void *dev, int32_t var);
    /* The walk is over: waits for the device's work, adds its figures to env->res. */
    rf_status (*finish)(void *dev);
    /* Output variable var as a host relation, owned by the caller from now on. */
    rf_status (*to_host)(void *dev, int32_t var, rf_rt_rel *out);
    /* Releases variable var's value (it is dead, or cleared). */
    void (*free)(void *dev, int32_t var);
    /* Frees every value and the device itself (also after a failure). */
    void (*close)(void *dev);
    /* Relation var's rows in host memory, read-only until the value changes;
    ** NULL (the op or its answer) where values live elsewhere. Several MPI
    ** ranks (runtime/dist) move rows between ranks through it: a move reads
    ** the view, frees the value and loads the rows the rank gets. */
    const rf_rt_rel *(*view)(void *dev, int32_t var);
    /* Optional (NULL: the device opens on the run's thread): after open and
    ** load_begin ran on another thread (env->aside), the device moves to
    ** the run's thread: its messages go to d from now on. A device whose
    ** start is slow (the GPU: driver, context, module) offers it, so that
    ** the driver starts it while the host reads the inputs (rt_run.c). */
    void (*attach)(void *dev, rf_diags *d);
    /* Moves relation var's rows between the ranks on the device (NULL: the
    ** device cannot); the rank's new rows replace the value. Relations
    ** with string columns only where every code is one the ranks share
    ** (a rank's own strings travel as bytes through host memory). A
    ** collective through xp. */
    rf_status (*exchange)(void *dev, int32_t var, const rf_rt_xmove *mv, const rf_rt_xport *xp, rf_rt_xstat *xs);
    /* Optional: adds the figures of the whole run that close would (the
    ** GPU's copies, peak memory, spills) to env->res, for a run whose
    ** process ends without closing the device (rf_rt_options.process_exits). */
    void (*report)(void *dev);
    /* Optional (NULL: the device runs each kernel at its place): the id of
    ** the last kernel of a fused kernel that runs at k, all of its stages at
    ** once, or -1. Several ranks check that no move falls in that span. */
    int32_t (*fused_until)(void *dev, const rf_hir_kernel *k);
    /* The fused kernel that runs at k runs its stages one by one this time
    ** (a move falls in its span). */
    void (*unfuse)(void *dev, const rf_hir_kernel *k);
    /* Set: the device takes narrow database columns as they are stored and
    ** widens them itself (the GPU, on the device: its copy carries the
    ** stored bytes); load then gets them in stored. */
    int takes_stored;
    /* Optional (with exchange): *below 1 when every string code of var's
    ** rows is below limit (the codes every rank shares), so that a relation
    ** that may hold a rank's own strings moves on the device when, this
    ** time, no rank's rows hold any (runtime/dist/dist_codes.c). */
    rf_status (*codes_below)(void *dev, int32_t var, int64_t limit, int *below);
    /* Optional: kernel k of a loop is not run, its driving input being
    ** empty (rt_run.c): its output becomes empty (an insert's set stays as
    ** it is) without a launch, and the device keeps the bookkeeping a run
    ** would (the GPU: the values that died before k are freed). NULL: the
    ** driver frees the output (free) where it holds rows. */
    void (*skip)(void *dev, const rf_hir_kernel *k);
} rf_rt_device_ops;

/* The two devices (runtime/cpu/rt_cpu_exec.c, runtime/gpu/rt_gpu_exec.c). */
extern const rf_rt_device_ops rf_rt_cpu_device;
extern const rf_rt_device_ops rf_rt_gpu_device;

/* Runs p on one device, no fallback (rt_run.c; rf_rt_run chooses the
** device and falls back to the CPU when GPU memory runs out). */
rf_status rf_rt_run_on(const rf_rt_device_ops *dev, const rf_hir_program *p, const rf_rt_options *o,
                       rf_rt_result **out, rf_diags *d);

#endif
