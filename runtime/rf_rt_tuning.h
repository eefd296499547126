/*
** runtime/rf_rt_tuning.h: the run's tuning, one typed struct.
**
** Owns: the settings that change how a run computes, never what (row
** thresholds of the GPU's algorithms, huge pages for big host columns, the
** GPU memory pool and its cap, the device trace, where the GPU caches live):
** their names, types, defaults and meanings in one table (rt_tuning.c),
** the parser of `name=value` (the command line's `--set`), and the text that
** lists them for --help. A setting that lost its measurement is deleted,
** not kept here.
*/
#ifndef RF_RT_TUNING_H
#define RF_RT_TUNING_H

#include "rf_common.h"

typedef struct rf_rt_tuning {
    /* gpu_runs_min: rows from which unique, difference and group-by first
    ** try the walk over runs of an ordered first column (INT64_MAX: never) */
    int64_t gpu_runs_min;
    /* gpu_ordered_min: right rows from which a join whose build side has one
    ** key column checks whether it ascends and then skips the sort
    ** (INT64_MAX: never) */
    int64_t gpu_ordered_min;
    /* cpu_part_pairs: the most join pairs a recursion's round of two joins or
    ** more holds at once on the CPU, its candidates made part by part
    ** (runtime/cpu/rt_cpu_cands.c); 0: auto (rf_rt_tuning_part_pairs) */
    int64_t cpu_part_pairs;
    /* cpu_part_linear: join pairs from which a recursion's round of one join
    ** (a linear recursion) also runs in parts, where its pairs repeat rows
    ** (INT64_MAX: never) */
    int64_t cpu_part_linear;
    /* hugepages: 1, advise transparent huge pages for big host columns */
    int hugepages;
    /* gpu_pool_mb: the GPU memory pool's first arena in MiB (0: a quarter of the
    ** memory free when the run starts, at least 1 GiB) */
    int64_t gpu_pool_mb;
    /* gpu_memory: the most bytes of device memory a GPU run may hold at once
    ** (its pool, CUB's scratch, every value); 0: no cap, what the GPU has.
    ** Under it, values the current kernel does not use move to host memory
    ** and back (rt_gpu_spill.c) */
    int64_t gpu_memory;
    /* gpu_pool_exact: 1, one device allocation per buffer instead of the
    ** pool's arenas, so that memory checkers (compute-sanitizer, or ASan in
    ** the emulator) see every buffer's bounds; for debugging */
    int gpu_pool_exact;
    /* gpu_trace: 1, the run's result carries one line per device operation
    ** (rf_rt_result.gpu_trace; `redfox run` prints it on stderr) */
    int gpu_trace;
    /* cache_dir: where the NVRTC, JIT and emulator caches live (borrowed
    ** from the string it was set from); NULL: $XDG_CACHE_HOME/redfox, else
    ** ~/.cache/redfox; "": no cache */
    const char *cache_dir;
    /* block_skip: 1, inputs read from a database skip the blocks whose
    ** min/max no reader's constant range filter can accept */
    int block_skip;
    /* rank_timeout_s: seconds a rank waits in a collective for the others
    ** before it stops all ranks with an error (INT64_MAX: no limit) */
    int64_t rank_timeout_s;
    /* rank_broadcast_bytes: the most bytes (all ranks' rows, strings that
    ** cannot move as shared codes at their bytes) of a join's side that is
    ** broadcast to every rank instead of the join hashing its sides (0: never) */
    int64_t rank_broadcast_bytes;
    /* rank_plain_bytes: a database's plain string column whose strings take
    ** at most this many bytes is interned whole on every rank before the
    ** run, so that its strings move as codes the ranks share (0: never) */
    int64_t rank_plain_bytes;
} rf_rt_tuning;

/* The defaults. */
void rf_rt_tuning_init(rf_rt_tuning *t);
/* The defaults, shared (for options that name no tuning). */
const rf_rt_tuning *rf_rt_tuning_default(void);
/* Applies one "name=value": RF_EUSAGE with the reason in why (n bytes) for
** an unknown name or a value of the wrong kind. A path setting keeps a
** pointer into assign, which must outlive t. */
rf_status rf_rt_tuning_set(rf_rt_tuning *t, const char *assign, char *why, size_t n);
/* cpu_part_pairs as a run of `threads` threads uses it: the setting, or for
** auto RF_RT_PART_PAIRS_PER_THREAD a thread (each part's pairs are shared
** among the threads; smaller parts cost a 16-thread round more in the
** threads' meetings than they save in memory). */
#define RF_RT_PART_PAIRS_PER_THREAD INT64_C(65536)
int64_t rf_rt_tuning_part_pairs(const rf_rt_tuning *t, int threads);
/* The name of setting i (0, 1, ...), or NULL past the last: the names an
** unknown one is compared with (tools/suggest.c's "did you mean"). */
const char *rf_rt_tuning_name(int64_t i);
/* One line per setting (name, default, meaning) for --help, indented. */
void rf_rt_tuning_help(rf_buf *out, const char *indent);

#endif
