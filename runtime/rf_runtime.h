/*
** runtime/rf_runtime.h: the public interface of the runtime: run a Harmony
** program on input files and hand back its outputs.
**
** Owns: the run's results (outputs, the string dictionary, the per-kernel
** profile) until rf_rt_result_free. One driver (rt_run.c) walks the block
** graph on a device behind rt_device.h: the CPU executor (always) or the
** GPU executor, chosen by `device` (runtime/README.md shows the design).
*/
#ifndef RF_RUNTIME_H
#define RF_RUNTIME_H

#include "rf_common.h"
#include "rf_harmony.h"
#include "rf_rt_data.h"
#include "rf_rt_tuning.h"

#include <stdio.h>

/* runtime/dist/rf_rt_dist.h (several MPI ranks) */
typedef struct rf_rt_dist_world rf_rt_dist_world;
typedef struct rf_rt_rankstat rf_rt_rankstat;

typedef enum rf_rt_device { RF_RT_DEVICE_AUTO, RF_RT_DEVICE_CPU, RF_RT_DEVICE_GPU } rf_rt_device;

/* Input tables loaded once and shared by several runs (the TPC-H driver runs
** 22 programs over the same eight files), with the string dictionary they
** are coded in. A result of a run that used a cache borrows its dictionary:
** free the results before the cache. Not for concurrent runs. */
typedef struct rf_rt_cache rf_rt_cache;
rf_rt_cache *rf_rt_cache_new(void);
void rf_rt_cache_free(rf_rt_cache *c);
/* The dictionary the cache's strings are coded in (rf_rt_cache_put's rows
** must be coded in it). */
rf_rt_dict *rf_rt_cache_dict(rf_rt_cache *c);
/* Rows from memory standing for input v's file at path (data_dir/input_file,
** as a run looks it up): a run with this cache reads them instead of the
** file; reader not NULL: only the input of predicate reader does (rows
** given for a predicate, not for its file), and other inputs on the same
** file read the file. where: the rows' name in errors (a key or a
** functional dependency they break: "<rows given for PRED>:ROW:1"), as no
** file was read; NULL: path. Takes rel's columns (rel is zeroed), except
** those with foreign[c] = 1 (NULL: none), which the caller keeps alive
** until rf_rt_cache_free. The declared key and functional dependency are
** checked by the first run that reads them. Used by libredfox (api/) for
** inputs given in memory. */
rf_status rf_rt_cache_put(rf_rt_cache *c, const char *path, const char *reader, const char *where,
                          const rf_hir_var *v, rf_rt_rel *rel, const uint8_t *foreign);

/* rf_rt_cache_put with the caller's stamps: stamps NULL (the cache names
** the columns), or per column 0 (no device keeps it after the run) or a number from rf_rt_cache_new_stamp that names
** the column's rows for the cache's life, under which a device keeps its
** copy across runs (rf_rt_device_ops.load). Such a column's rows may only
** grow: the same stamp on more rows means the rows it named before,
** unchanged, then new ones (a device copies only the new ones), and on
** fewer rows the first of them. A caller whose rows change otherwise takes
** a new stamp. holds 1: the caller vouches that the rows keep input v's
** declared key and functional dependency (a transaction's states, which its
** resolution by key and its check of the stored rows keep), so no run reads
** them checked again; 0: the first run that reads them checks them. */
rf_status rf_rt_cache_put_stamped(rf_rt_cache *c, const char *path, const rf_hir_var *v, rf_rt_rel *rel,
                                  const uint8_t *foreign, const uint64_t *stamps, int holds);
/* A stamp no column of c has had yet. */
uint64_t rf_rt_cache_new_stamp(rf_rt_cache *c);
/* The caller's column named stamp is gone: a device's copy of it is freed
** now, not left until the device needs the room. Between runs. */
void rf_rt_cache_drop_stamp(rf_rt_cache *c, uint64_t stamp);
/* Forgets every relation given by rf_rt_cache_put (their non-foreign
** columns freed); the rows read from files stay, and so do a device's
** copies, under their stamps. */
void rf_rt_cache_drop_puts(rf_rt_cache *c);

/* Frees what a device keeps in c across runs (the GPU: the input columns
** and the strings it copied, its memory pool): the next run copies its
** inputs to the device again, as a first run does (tpch bench's cold run). */
void rf_rt_cache_forget_device(rf_rt_cache *c);

/* 1 when c holds input v's rows for path (read or put), as a run would
** find them. */
int rf_rt_cache_holds(const rf_rt_cache *c, const char *path, const rf_hir_var *v);
/* The rows of input v at path that a run with c reads from memory (put,
** or read before), as find_cached finds them; -1 when c holds none (for
** --device auto's estimate of inputs given in memory: rt_place_run.c). */
int64_t rf_rt_cache_input_rows(const rf_rt_cache *c, const char *path, const rf_hir_var *v);
/* 1 when c holds rows put for path and input v's types by rf_rt_cache_put
** with this reader (NULL: those for every reader). */
int rf_rt_cache_holds_put(const rf_rt_cache *c, const char *path, const char *reader, const rf_hir_var *v);

/* A long fixpoint's progress, for a display (tools/ draws it on a terminal):
** reported once a semi-naive loop has run a second, then about ten times a
** second, and once with done set when it ends (clear the display). */
typedef struct rf_rt_progress {
    int64_t round;             /* rounds of the loop so far */
    double seconds;            /* since the loop began */
    int32_t n;                 /* its predicates (the first 16) */
    int32_t more;              /* and how many besides */
    const char *const *names;
    const int64_t *rows;       /* the tuples of each so far */
    int done;
} rf_rt_progress;
typedef void (*rf_rt_progress_fn)(void *ctx, const rf_rt_progress *p);

/* The load of an input file, for a display (tools/ draws it on a terminal):
** reported once a load has run a second, then about ten times a second, and
** once with done set when it ends (clear the display). */
typedef struct rf_rt_load_progress {
    const char *pred;          /* the input predicate */
    const char *path;          /* its file */
    const char *phase;         /* "reading", "parsing", "interning strings", "checking" */
    int64_t done, total;       /* bytes of the file so far, of total (0: not known, or no bytes to count) */
    double seconds;            /* since the load began */
    int done_all;              /* the load has ended: clear the display */
} rf_rt_load_progress;
typedef void (*rf_rt_load_progress_fn)(void *ctx, const rf_rt_load_progress *p);

/* A run's timeline (--trace): one call per input load ("load", the
** predicate), kernel run ("kernel", "k12 join_index"; on the GPU as the
** host issued it: rt_run.c times both devices alike) and GPU device
** operation as the host sees it ("gpu", "launch NAME", "h2d", "d2h", "sync",
** "cub sort", ...), with its start and end (rf_now() seconds) and its rows or
** bytes (n; -1: none). Called on the run's thread, in order. */
typedef void (*rf_rt_trace_fn)(void *ctx, const char *cat, const char *name, double t0, double t1, int64_t n);

typedef struct rf_rt_options {
    const char *data_dir;    /* where lang:input files are; NULL: "." */
    int threads;             /* <= 0: one per online CPU */
    rf_rt_device device;
    int profile;             /* collect per-kernel statistics */
    int64_t max_iterations;  /* rounds of any one loop, then an error; <= 0: no bound */
    rf_rt_cache *cache;      /* NULL: load inputs for this run only */
    const void *ptx0;        /* the .rfx file's PTX0 section (GPU code); NULL: the */
    uint64_t ptx0_size;      /* GPU backend compiles the program when it runs */
    const void *gpu_plan;    /* the .rfx file's GPLN section (the GPU plans); NULL: */
    uint64_t gpu_plan_size;  /* the GPU backend plans the program when it runs */
    const char *rfx_file;    /* the .rfx file the program came from, for messages: a GPU
                                run then needs its GPLN; NULL: compiled in this process */
    int no_fuse;             /* GPU: run every kernel separately (no Kernel Weaver fusion) */
    rf_rt_progress_fn progress; /* NULL: no progress reports */
    rf_rt_load_progress_fn load_progress; /* NULL: none for the input files' loads */
    void *progress_ctx;         /* for both */
    const rf_rt_tuning *tuning; /* thresholds and switches (--set); NULL: the defaults */
    rf_rt_trace_fn trace;    /* NULL: no timeline */
    void *trace_ctx;
    rf_rt_dist_world *world; /* the MPI ranks this process is one of (runtime/dist); NULL: one process */
    int process_exits;       /* the caller's process ends right after this run (a fresh `redfox run`):
                                the device is not closed (GPU: its memory, pinned buffers, module and
                                context go with the process) nor the inputs' mappings undone; only
                                for a caller that then exits without freeing (tools/redfox.c,
                                rf_tool_exit_now) */
    /* --device auto: the workload this run is part of (rt_place_run.c). runs:
    ** the runs of this program the process will make from this one on, this
    ** one included (<= 1: this one; `run --repeat N`); later: the programs it
    ** will run after those over the same inputs (`tpch run`'s later queries),
    ** which share the GPU's start, each run later_runs times (<= 1: once) */
    int64_t runs;
    const rf_hir_program *const *later;
    int32_t nlater;
    int64_t later_runs;
} rf_rt_options;

typedef struct rf_rt_output {
    const char *name;          /* the lang:output name */
    const rf_hir_var *var;     /* its columns: types and names */
    rf_rt_rel rel;
} rf_rt_output;

typedef struct rf_rt_kstat {
    int32_t kernel;            /* kernel id */
    const char *what;          /* "k12 join_index" */
    const char *device;        /* "cpu" */
    int64_t calls;             /* runs (work done) */
    int64_t skipped;           /* in a loop, not run: its driving input was empty (rt_run.c) */
    double seconds;
    int64_t rows_in, rows_out;
    int64_t bytes_in, bytes_out; /* the columns the kernel uses (rf_hir_kernel_bytes) */
} rf_rt_kstat;

typedef struct rf_rt_result {
    rf_rt_dict *dict;          /* borrowed from the cache when the run used one */
    int dict_borrowed;
    rf_rt_output *outputs;     /* in variable order */
    int32_t noutputs;
    rf_rt_kstat *stats;        /* one per kernel, by id (profile only) */
    int32_t nstats;
    double load_seconds, run_seconds;
    const char *device;        /* where it ran */
    int gpu_fell_back;         /* the GPU ran out of memory for the run's data: it ran on the CPU (device "cpu") */
    uint64_t gpu_peak_bytes;   /* GPU: the most device memory the run's values held at once */
    int32_t gpu_fused;         /* GPU: fused kernels run (each run of one counts) */
    int64_t cpu_fused;         /* CPU: grouped totals run (a map, its group and reduce in one pass) */
    int64_t cpu_parted;        /* CPU: recursion rounds whose candidates were made in parts (rt_cpu_cands.c) */
    /* GPU, the run (not the load): calls and host seconds of kernel
    ** launches, waits for the GPU (results read back, synchronizations),
    ** CUB primitives and the rest (copies to and on the GPU, clears, kernel
    ** lookups) */
    int64_t gpu_launches, gpu_waits, gpu_cub_calls, gpu_other_calls;
    double gpu_launch_seconds, gpu_wait_seconds, gpu_cub_seconds, gpu_other_seconds;
    /* where the time went, in seconds (--profile's phases): the device
    ** opened (GPU: driver, context, pinned buffers), the program's kernels
    ** loaded (GPU: PTX from the .rfx or NVRTC, the driver's JIT or its cubin
    ** cache), inputs read on the host (the database opened, columns mapped
    ** and verified, strings through their dictionaries; or text parsed),
    ** inputs copied to the device, outputs brought back to the host. The CPU
    ** backend fills read only. load_seconds covers device to copy. */
    double device_seconds, program_seconds, read_seconds, copy_seconds, output_seconds;
    /* GPU: the device opened and the program loaded on a thread beside the
    ** reading (start_aside set); start_wait_seconds: how long the reading,
    ** done, then waited for that start (the rest of the start was hidden) */
    int start_aside;
    double start_wait_seconds;
    int gpu_fresh;             /* GPU: the driver started in this run (a fresh process) */
    int gpu_held;              /* ... while a `redfox hold` held it on the host (rf_rt_hold.h) */
    /* GPU, the start's parts (--profile), seconds. gpu_start_driver: 1 the
    ** driver's start is this run's (the parts below it filled), 2 it started
    ** earlier in the process, 3 the emulator (no driver). The driver loaded
    ** and cuInit, the primary context; cudart's start (CUB's module) on a
    ** thread of its own, and how long the first that needed it waited; the
    ** stream and events; the pinned staging buffers, on a thread beside the
    ** program's load (0: kept from an earlier run of the process), and how
    ** long their first use waited for them */
    int gpu_start_driver;
    double gpu_start_init_s, gpu_start_context_s, gpu_start_cudart_s, gpu_start_cudart_wait_s;
    double gpu_start_stream_s, gpu_start_pinned_s, gpu_start_pinned_wait_s;
    double gpu_start_arena_s; /* the pool's first arena on the pinned buffers' thread (0: not there) */
    /* GPU: the program's module loaded on a thread of its own beside the
    ** inputs' copies (program_seconds is then its time there), and how long
    ** the load's end waited for it (part of copy_seconds, not of its rate) */
    int gpu_module_aside;
    double gpu_module_wait_s;
    int gpu_module_kept; /* GPU: the program's module kept loaded from an earlier run of this process */
    double input_rows, input_bytes; /* the inputs read: rows, bytes of the columns the program reads */
    /* --device auto (rt_place_run.c): the predicted times (the run, and on
    ** the GPU its start and copies; reading is the same on both and left
    ** out), the model's records; place_gpu_s < 0: no usable GPU */
    int place_auto;
    double place_cpu_s, place_gpu_s;
    double place_cpu_read_s, place_gpu_read_s; /* of those: the inputs' reading */
    int64_t place_records;
    int64_t place_runs;        /* the runs weighed; their predicted totals and the later */
    double place_cpu_total_s, place_gpu_total_s, place_later_gain_s; /* programs' gain */
    int place_probed;          /* the GPU's driver was loaded for the choice (not when the CPU
                                  was predicted faster from the model alone) */
    int place_host_gpu;        /* what the model said of this host's GPU: 1 one, 0 none, -1 nothing */
    double place_choose_s, place_model_s, place_inputs_s, place_predict_s; /* the choice's own cost */
    int place_driver_loaded;   /* libcuda.so.1 was loaded in this process when the run ended */
    int place_emulated;        /* the GPU weighed was the emulator (RF_GPU_EMULATE), predicted as a real one */
    int place_gpu_started;     /* the GPU weighed as started in this process (no start to pay) */
    int place_gpu_held;        /* its start weighed as a held driver's (`redfox hold` runs) */
    int place_held_guessed;    /* ... a share of a fresh start: no held start measured yet */
    int place_tie;             /* the GPU predicted faster by less than the tie margin: the CPU,
                                  which needs no start (RF_RT_PLACE_TIE) */
    int host_gpu_found;        /* this run looked for the GPU: 1 found one (host_gpu_kind), 0 none;
                                  -1 did not look (or the emulator) */
    char host_gpu_kind[24];
    /* the placement model could not keep this run's records (rt_place_run.c):
    ** why ("PATH: reason", or no cache folder at all); "" when kept or when
    ** none was asked for (--no-cache) */
    char place_unkept[512];
    uint64_t h2d_bytes, d2h_bytes; /* GPU: bytes copied host to device and back, the whole run */
    uint64_t load_h2d_bytes;       /* GPU: the part of h2d_bytes copied by the load (the copy phase):
                                      under a memory cap, ranges of inputs left in host memory are
                                      copied later, in the run */
    /* GPU: of h2d_bytes and load_h2d_bytes, the bytes that crossed (a
    ** database's narrow columns cross as stored, widened on the device:
    ** runtime/gpu/rt_gpu_wire.c) */
    uint64_t wire_bytes, load_wire_bytes;
    /* GPU: the load's input bytes found on the device, kept there by an
    ** earlier run of the same input cache (not copied) */
    uint64_t load_found_bytes;
    /* GPU: the machine's pinned host-to-device bandwidth, GB/s, measured
    ** once per process with --profile; 0: not measured (the emulator) */
    double gpu_pinned_gbs;
    /* GPU, the copy phase through the pinned staging buffers: seconds the
    ** host spent filling them (copying, packing narrow columns), and
    ** waiting for a buffer's earlier copy to leave it */
    double gpu_copy_fill_s, gpu_copy_wait_s;
    /* GPU: how long the copy phase waited for the pool's first arena (its
    ** thread, beside the start): like the wait for the module, part of
    ** copy_seconds, not of its rate */
    double gpu_copy_arena_wait_s;
    double gpu_alloc_seconds;  /* GPU: in the driver's allocations of device memory (the pool's arenas) */
    /* GPU: the memory cap (0: none) and, under it, values moved to host
    ** memory for lack of room, their bytes moved out and back (part of
    ** h2d_bytes and d2h_bytes) */
    uint64_t gpu_memory_cap;
    int64_t gpu_spills;
    uint64_t gpu_spill_out_bytes, gpu_spill_in_bytes;
    /* GPU: kernels run in row ranges for lack of room, and their ranges;
    ** fused kernels of totals run in row ranges of their input, and theirs */
    int64_t gpu_parted, gpu_parts;
    int64_t gpu_fused_ranged, gpu_fused_ranges;
    /* GPU: join builds made, and reused where a loop's join read a relation
    ** the loop never writes (built once a run, not once a round) */
    int64_t gpu_join_builds, gpu_join_reuses;
    /* GPU: group-bys and sorts run in key partitions for lack of room, and their partitions */
    int64_t gpu_radixed, gpu_radix_parts;
    /* GPU with an input cache (gpu_cache set; runtime/gpu/rt_gpu_cache.c):
    ** input columns found on the device from earlier runs (no copy) and
    ** copied there now, with their bytes; cached columns (and a dictionary
    ** copy) evicted for room, their bytes; what the cache holds after the
    ** run. Any GPU run: the dictionary's bytes copied to the device (offsets
    ** and strings) and the codes the device copy holds */
    int gpu_cache;
    int64_t gpu_cache_hits, gpu_cache_misses, gpu_cache_evictions, gpu_cache_columns;
    int64_t gpu_cache_grown; /* cached columns found with fewer rows: only the new rows copied (in miss_bytes) */
    uint64_t gpu_cache_hit_bytes, gpu_cache_miss_bytes, gpu_cache_evicted_bytes, gpu_cache_bytes;
    uint64_t gpu_dict_bytes;
    int64_t gpu_dict_codes;
    /* GPU: kernels run on recursive sets kept in partitions for lack of
    ** room, the most partitions, the inserts (rounds) so run, the uses of a
    ** partition kept on the device, and the bytes moved to the device and back */
    int64_t gpu_recparted, gpu_recpart_parts, gpu_recpart_rounds, gpu_recpart_kept;
    uint64_t gpu_recpart_in_bytes, gpu_recpart_out_bytes;
    /* inputs from a database: min/max blocks of the tables read, and those
    ** skipped because no reader's constant range filter could accept them */
    int64_t db_blocks, db_blocks_skipped;
    char *gpu_trace;           /* GPU with the gpu_trace setting: one line per device operation of the run (owned) */
    /* several ranks: this one and their number; outputs are complete on rank
    ** 0 only; ranks (rank 0 with --profile): each rank's time and bytes */
    int32_t rank, nranks;
    rf_rt_rankstat *ranks;
    /* GPU ranks: how they exchanged rows ("GPU to GPU with NCCL 2.28.9",
    ** "through host memory (MPI): NCCL is missing ..."); empty otherwise */
    char rank_exchange[256];
    /* several ranks: how their strings moved (codes every rank shares, or
    ** bytes, and why), runtime/dist/dist_codes.c */
    char rank_strings[320];
} rf_rt_result;

/* Runs p. On success *out holds the outputs; on failure d says why (data
** errors name file:line:col, run-time errors the rule). */
rf_status rf_rt_run(const rf_hir_program *p, const rf_rt_options *o, rf_rt_result **out, rf_diags *d);
void rf_rt_result_free(rf_rt_result *r);
/* The profile as `redfox run --profile` prints it: the load and run time,
** one line per kernel that ran, then the phases and device figures
** (rt_profile.c). */
void rf_rt_profile_write(const rf_rt_result *r, FILE *f);
/* Hands the cache's dictionary to r, a result of a run with cache c, which
** then owns it (and the cache has none: free the cache next). */
void rf_rt_cache_give_dict(rf_rt_cache *c, rf_rt_result *r);

/* A FACTS kernel's rows (the constants the program states) as a host
** relation of variable out's columns, strings interned in dict (rt_facts.c,
** library rf_rt_input, which both executors link). */
rf_status rf_rt_facts(const rf_hir_kernel *k, const rf_hir_var *out, rf_rt_dict *dict, rf_rt_rel *r);

#endif
