/*
** skeletons/cuda/rf_gpu_codegen.h: the GPU code generator: a Harmony program
** becomes one CUDA C++ source (the skeleton templates, skeletons/cuda/rf_*.cuh,
** embedded at build time, instantiated once per kernel with its expressions
** compiled to device functions), which NVRTC compiles to PTX.
**
** Owns: the per-kernel plan that the code generator and the GPU runtime
** both follow (which string subexpressions are computed once per
** dictionary code, on the GPU or the host, which string work runs per row
** from the device dictionary, which string constants a kernel needs,
** whether a kernel can run on the GPU at all), the kernel naming scheme,
** NVRTC (loaded with dlopen, so redfox runs where it is absent) with its
** on-disk cache of PTX keyed by a hash of the source, and the encoding of
** the PTX0 section of .rfx files. The kernel argument block is
** rf_gpu_args.h's. Nothing here prints; diagnostics go to rf_diags.
**
** Kernel names (extern "C", so PTX keeps them):
**   rf_<name>               type-agnostic helpers (rf_gather, rf_red_sum, ...)
**   rfh_<sig>_<op>          hash-table kernels for one tuple of key types;
**                           <sig> has one letter per key column (rf_gpu_sig)
**   rfk<id>_flags, _write   the filter and output passes of map kernel <id>
**   rfk<id>_isl<j>          the per-code table of island j of kernel <id>
**   rfg<u>_flags, _write    the same two passes of fused kernel <u>: several
**                           map stages of one Kernel Weaver group in one
**                           kernel (rf_gpu_fplan)
** Kernels whose name ends in "_smem" synchronize threads of a block.
*/
#ifndef RF_GPU_CODEGEN_H
#define RF_GPU_CODEGEN_H

#include "rf_common.h"
#include "rf_gpu_args.h"
#include "rf_harmony.h"

/* ---- the argument block: rf_gpu_args.h --------------------------------- */

#define RF_GPU_MAXC RF_ARGS_MAXC /* columns per side of a kernel (wider relations stay on the host) */
#define RF_GPU_TILE 256 /* threads per block of every kernel */
#define RF_GPU_SMALLG 1024 /* groups up to which reductions pre-aggregate in shared memory */
#define RF_GPU_TDICT RF_ARGS_TDICT /* t[14]: u64 offsets, t[15]: bytes of the device dictionary (rf_str.cuh) */

/* ---- the per-kernel plan ------------------------------------------------ */

#define RF_GPU_MAX_CONSTS RF_ARGS_MAX_CONSTS /* string constants one kernel reads (a filter of 3 brands and 12 containers: 15) */
#define RF_GPU_KISLAND RF_ARGS_KISLAND       /* k[RF_GPU_KISLAND + i]: the base code of island i */
#define RF_GPU_MAX_ISLANDS 8
/* A chain (a + b + ...) or conjunction of more operands than this is code of
** its own: loops over tables of its columns and constants, and calls of
** noinline helpers of this many operands each, so that NVRTC's time grows
** linearly with it (in one function it grows much faster: 1,000 chained
** additions 1.4 s, 2,000: 8 s, 3,600: 48 s). Kernels holding one are not
** fused (a fused stage's registers are not in a helper's scope). */
#define RF_GPU_CHAIN_CHUNK 64
/* Whether kernel k's filter or outputs hold such a chain or conjunction
** (such a kernel is never a fused stage; the GPLN decoder checks it). */
int rf_gpu_kernel_long_chain(const rf_hir_kernel *k);

/* A string subexpression evaluated once per dictionary code (on the GPU when
** dev, else on the host) of
** its one column (side, col), or once when it has no column (side -1); the
** GPU reads the result from a table indexed by code - base:
**   boolean -> u8, int -> i64, string -> u32 code,
**   date -> i64 (INT64_MIN: the string is no valid date, a run-time error). */
typedef struct rf_gpu_island {
    const rf_qp_expr *e;
    int32_t side, col;
    int dev; /* 1: the GPU computes the table itself (kernel rfk<id>_isl<j>,
                rf_gpu_island_on_device); a string result then comes as byte
                ranges (from << 32 | to) whose distinct pieces the host interns */
} rf_gpu_island;

typedef struct rf_gpu_kplan {
    int gpu;          /* 1: the kernel runs on the GPU; 0: on the host (why) */
    const char *why;
    int32_t nconst;   /* string constants read by GPU code, codes in k[i] */
    const rf_qp_expr *consts[RF_GPU_MAX_CONSTS];
    int32_t nisland;  /* tables t[i], base code k[8 + i] */
    rf_gpu_island islands[RF_GPU_MAX_ISLANDS];
    int32_t nrowstr;  /* string work over two columns, evaluated per row on the
                         GPU from the dictionary (t[RF_GPU_TDICT], t[RF_GPU_TDICT + 1]) */
    const rf_qp_expr *rowstr[RF_GPU_MAX_ISLANDS];
    int32_t ndedupe;  /* rf_gpu_dedupe_cols: the left columns its repeats are judged by (0: none) */
    int32_t dedupe[RF_GPU_MAXC];
} rf_gpu_kplan;

/* Plans a MAP, JOIN_MAP or GATHER_MAP kernel (filter first, then the outputs,
** in a fixed walk, so the generator and the runtime agree on slots). Other
** kinds get gpu = 1 and nothing else. */
void rf_gpu_kplan_build(const rf_hir_program *p, const rf_hir_kernel *k, rf_gpu_kplan *out);

/* 1 when the GPU can compute island is's table per dictionary code from the
** device-resident dictionary (codegen_str.c says which islands). */
int rf_gpu_island_on_device(const rf_gpu_island *is);
/* 1 when string work over two columns (e) can run per row in a map kernel:
** the island operations, a boolean or int result. */
int rf_gpu_row_on_device(const rf_qp_expr *e);
/* Emits e per row (columns read from the dictionary by their codes) into a
** map kernel's code: returns its variable (numbered from *nv); *bad set if e
** is not one rf_gpu_row_on_device accepts. */
int rf_gpu_emit_rowstr(rf_buf *b, const rf_qp_expr *e, int *nv, int depth, int *bad);
/* Appends the per-code kernels of plan pl's device islands (kernel kid);
** nonzero if an expression could not be translated (a bug). */
int rf_gpu_gen_islands(rf_buf *b, int32_t kid, const rf_gpu_kplan *pl);

/* The storage letter of a type: L int64 (int, decimal), D double, I int32
** (date), U uint32 (string code), B byte (boolean). */
char rf_gpu_type_letter(rf_type t);
/* The signature of columns cols[0..n) of types (all columns if cols is NULL)
** into buf (n + 1 bytes). */
void rf_gpu_sig(const rf_type *types, const int32_t *cols, int32_t n, char *buf);
/* The signature of a narrow set of n columns of types (its int columns
** stored in 32 bits: letter N, rf_group.cuh) into buf (n + 1 bytes); 0 when
** no column is an int (no narrow form). */
int rf_gpu_sig_narrow(const rf_type *types, int32_t n, char *buf);
/* 1 when an insert of program p grows variable var (a recursive relation:
** only such a set may store its int columns in 32 bits). */
int rf_gpu_grown_set(const rf_hir_program *p, int32_t var);

/* ---- fusion: Kernel Weaver groups made one kernel ----------------------- */

/* The code generator fuses the map stages (MAP, JOIN_MAP, GATHER_MAP with
** their filters) of one Kernel Weaver group into one kernel when they form a
** tree over one input: thread dependences (a MAP reading the output of an
** earlier stage: its values stay in registers) and input dependences (stages
** reading the same relation, or the same join or gather index, in one
** pass). Every row of the input runs the whole tree; a stage's output is
** written only when something outside the fused kernel reads it (one flags
** pass, one scan per written output, one write pass: one stream compaction
** however long the chain). The fused kernel runs where its first stage was
** scheduled. A hash join's probe (JOIN_INDEX with keys) fuses with the
** join_map stages that read its pairs when nothing else does (the thesis's
** partition / compute / gather kernel): the build side's table is made as
** before, then each left row's matches are consumed as they are found, so
** the pairs are never written (a count pass, a scan per written output, a
** write pass; rows stay ordered by left row, then right row). Likewise an
** anti-join's probe (ANTI_INDEX with keys) with the gather_map stages
** reading the left rows it keeps. Everything else in a group (global
** operations, cross products) stays its own kernel, and why is recorded for
** `redfox dump --fused`. */

#define RF_GPU_FUSE_MAX 16 /* stages per fused kernel */

typedef struct rf_gpu_fmember {
    const rf_hir_kernel *k;
    int32_t parent;      /* the stage whose output this one reads; -1: reads the kernel's input */
    int32_t mat;         /* which written output it is (flags, positions); -1: not written */
    int32_t ocol;        /* its first output column in a.o[] when written */
    int32_t kconst;      /* its string constants' first slot in a.k[] */
    int32_t kisland;     /* its string tables' first slot in a.t[] (bases in a.k[8 + ...]) */
    int has_children;    /* a later stage reads its values */
} rf_gpu_fmember;

#define RF_GPU_FUSE_AGGS 8   /* aggregates of one fused total */
#define RF_GPU_FUSE_TOTALS 8 /* totals per fused kernel */
#define RF_GPU_MEMBER_TOTAL (-2) /* member_of: the GROUP or REDUCE of a fused total */

/* A total (thesis 4.3.1, a CTA dependence): the GROUP and REDUCE without
** group columns that read a stage's output, whose rows are then never
** written: each thread sums the rows it passes in registers, each CTA
** combines its threads' sums in shared memory, and CTAs add theirs to the
** result by atomics (counts, and totals and averages of ints and decimals:
** the exact, order-free 128-bit sums of rf_reduce.cuh). */
/* A grouped total (reduce->ngroup > 0; a kernel's totals are all grouped or
** none, their tables together at most RF_GPU_FUSE_GSMEM bytes): each
** CTA keeps a table of at most RF_GPU_FUSE_GROUPS groups in shared memory
** (open addressing over RF_GPU_FUSE_GHEADS heads on the group columns'
** values; per group its keys, its first row, its row count and one exact
** 128-bit sum per distinct summed column), and merges it into one such table
** in global memory by atomics; the host orders the groups by first row (the
** group ids of GROUP: first occurrence) and finishes each aggregate by the
** CPU's rules. More groups than the table holds raise a status word: the
** stages then run one by one. Layout (words of u64, rf_reduce.cuh gt_*):
** the accumulator region is [status, count, heads[GHEADS], records], a
** record [keys[ngroup], first row, count, (low, high) per sum]. */
#define RF_GPU_FUSE_GKEYS 4     /* group columns of a grouped total */
#define RF_GPU_FUSE_GROUPS 128  /* groups one grouped total holds */
#define RF_GPU_FUSE_GHEADS 256  /* its hash heads (a power of two) */
#define RF_GPU_FUSE_GSMEM 40960 /* bytes of shared memory for a kernel's tables of groups */

typedef struct rf_gpu_ftotal {
    const rf_hir_kernel *group, *reduce;
    int32_t stage; /* the stage whose rows it sums */
    int32_t acc;   /* its first accumulator word: the row count, then (low, high) per aggregate */
    /* derived from reduce (rf_gpu_ftotal_layout), for a grouped total: */
    int32_t ngroup;                      /* reduce->ngroup: 0 for a total over all rows */
    int32_t nsum;                        /* distinct summed columns */
    int32_t sum_col[RF_GPU_FUSE_AGGS];   /* each sum's column of the stage */
    int32_t agg_sum[RF_GPU_FUSE_AGGS];   /* per aggregate its sum, -1 for a count */
} rf_gpu_ftotal;

/* Fills t's derived fields from t->reduce (ngroup, the sums). */
void rf_gpu_ftotal_layout(rf_gpu_ftotal *t);
/* A grouped total's record width and accumulator region, in u64 words. */
int32_t rf_gpu_ftotal_rec_words(const rf_gpu_ftotal *t);
int32_t rf_gpu_ftotal_words(const rf_gpu_ftotal *t);
/* Its table in a block's shared memory, in u64 words: [count, heads, records]. */
int32_t rf_gpu_ftotal_smem_words(const rf_gpu_ftotal *t);

typedef struct rf_gpu_funit {
    int32_t id, block, wgroup; /* wgroup: the Kernel Weaver group it comes from */
    const rf_hir_kernel *src;  /* a JOIN_INDEX (ANTI_INDEX) whose pairs (rows) the stages consume, or NULL */
    int32_t n;
    rf_gpu_fmember m[RF_GPU_FUSE_MAX]; /* in schedule order */
    int32_t nmat;                      /* written outputs */
    rf_gpu_ftotal tot[RF_GPU_FUSE_TOTALS]; /* a fused kernel with totals writes no rows */
    int32_t ntot, nacc;                    /* totals; their accumulator words */
    int dedupe; /* a join source's one stage, read only by a unique, whose compared left columns
                   (rf_gpu_dedupe_cols) hold the join's left keys: the count pass drops the left
                   rows that runs_first over those columns did not flag first, when the runtime
                   asks it to, and the left rows' second matches (one where every right-side
                   output is a key column, else a second match raises the status word p[7]) */
} rf_gpu_funit;

typedef struct rf_gpu_fplan {
    rf_gpu_funit *units;
    int32_t nunits;
    int32_t nkernels;     /* kernel ids < nkernels */
    int32_t *unit_of;     /* by kernel id: its fused kernel, -1 */
    int32_t *member_of;   /* by kernel id: its stage in that kernel (-1: the unit's src) */
    const char **why;     /* by kernel id: why a kernel of a multi-kernel group is not in a fused kernel */
    int32_t *group_of;    /* by kernel id: its Kernel Weaver group */
} rf_gpu_fplan;

/* The fused kernels of p (none when fuse is 0: then every group runs as
** separate kernels). */
rf_status rf_gpu_fplan_build(const rf_hir_program *p, int fuse, rf_gpu_fplan **out, rf_diags *d);
void rf_gpu_fplan_free(rf_gpu_fplan *f);
/* The bytes a fused kernel without a join source must read at least: each
** input column some stage, written output or total needs, once per row
** (rows[i]: the rows of the first stage's in[i], or of its index). */
int64_t rf_gpu_funit_input_bytes(const rf_hir_program *p, const rf_gpu_funit *u, const int64_t *rows);
/* What of a fused kernel is used: need[m][c] whether stage m's output column
** c is (written, summed by a total, or read by a later stage), in[side][c]
** whether the input's column c is. */
void rf_gpu_funit_needs(const rf_hir_program *p, const rf_gpu_funit *u, uint8_t need[RF_GPU_FUSE_MAX][RF_GPU_MAXC],
                        uint8_t in[2][RF_GPU_MAXC]);
/* Repeated rows dropped where they are made. A MAP over a relation (no
** index) or a JOIN_MAP without a filter, whose outputs are plain columns (the
** first from the left side), and whose output is a temporary read only by a
** UNIQUE (which keeps each row's first occurrence, in order), may drop those
** rows itself when its input arrives ordered by that first column: a row
** goes where an earlier row of its run of equal first columns is equal
** (a map: runs_repeat in rf_group.cuh; a fused join: runs_first over its
** left rows, rf_gpu_funit.dedupe), and the unique takes the rows as they are.
** Returns how many output columns come from the left side (their input
** columns into cols, the output's first column first), 0 where k may not. */
int32_t rf_gpu_dedupe_cols(const rf_hir_program *p, const rf_hir_kernel *k, int32_t cols[RF_GPU_MAXC]);

/* For `redfox dump --fused`: what the code generator made of each group. */
void rf_gpu_fplan_print(const rf_hir_program *p, const rf_gpu_fplan *f, rf_buf *out);

/* ---- the program's plans, made once (gplan.c) ---------------------------- */

/* Every kernel's plan and the fused kernels, with the hashes of the sources
** they generate. `redfox compile` makes it and stores it in the .rfx (section
** GPLN, docs/RFX.md); `redfox run` decodes it and follows it: neither the
** runtime nor the code generator plans again. */
typedef struct rf_gpu_plan {
    int32_t nkernels;
    rf_gpu_kplan *k;         /* by kernel id */
    rf_gpu_fplan *f;         /* the fused kernels (runs with --no-fuse launch none) */
    uint64_t src_hash[2][2]; /* rf_gpu_hash128 of rf_gpu_codegen's source: [0] without fused kernels, [1] with */
    int hashed;              /* src_hash is known (plans for a .rfx; a run planning its own program skips it) */
    rf_arena arena;          /* decoded strings */
} rf_gpu_plan;

/* RF_EUSER with an error for what the GPU backend cannot take (a relation
** wider than RF_GPU_MAXC columns), at the rule of the first kernel that
** writes the relation, else reads it (an input's first reader). */
rf_status rf_gpu_plan_check(const rf_hir_program *p, rf_diags *d);
/* Plans p (kernel plans, Kernel Weaver's groups made fused kernels) and,
** with hash, hashes the sources it generates (two code generations: for a
** plan to be stored). RF_EUSER as rf_gpu_plan_check. */
rf_status rf_gpu_plan_build(const rf_hir_program *p, int hash, rf_gpu_plan **out, rf_diags *d);
void rf_gpu_plan_free(rf_gpu_plan *pl);
/* The GPLN section's contents (appended to out) of hashed plans (else RF_EINTERNAL). */
rf_status rf_gpu_plan_encode(const rf_hir_program *p, const rf_gpu_plan *pl, rf_buf *out);
/* Decodes a GPLN section against p (the HIRS of the same file), checking
** every kernel, expression, slot and count. RF_EUSER with one error naming
** file for a stale (another format version or code generator), malformed or
** mismatched section; RF_ENOMEM. */
rf_status rf_gpu_plan_decode(const char *file, const rf_hir_program *p, const void *data, uint64_t size,
                             rf_gpu_plan **out, rf_diags *d);

/* ---- source and PTX ----------------------------------------------------- */

/* A version of the kernel ABI and the skeletons: PTX made by another
** version is not used (the runtime regenerates it). */
const char *rf_gpu_abi_tag(void);

/* The CUDA C++ source of the whole program (appended to src), as plan pl
** says: every kernel unfused, and with fuse also pl's fused kernels (the
** runtime falls back on the unfused ones where a fused kernel meets a
** run-time error, so that the message is the CPU's). RF_EUSER with a
** diagnostic for what the GPU backend cannot take (a relation wider than
** RF_GPU_MAXC columns). */
rf_status rf_gpu_codegen(const rf_hir_program *p, const rf_gpu_plan *pl, int fuse, rf_buf *src, rf_diags *d);

/* The skeleton prelude for compiling a generated source as host C++ (the
** emulator): prepend it. */
const char *rf_gpu_emu_prelude(void);

typedef struct rf_gpu_nvrtc_opts {
    const char *arch;      /* "compute_80" (default, NULL), "compute_90", "sm_90", ... */
    const char *cache_dir; /* NULL: $XDG_CACHE_HOME/redfox or ~/.cache/redfox;
                              "": no cache */
    int no_fuse;           /* the source without fused kernels (--no-fuse) */
    int threads;           /* NVRTC's units compiled at once (processes): 0 every core, 1 one after another */
} rf_gpu_nvrtc_opts;

/* A line of the generated source before each kernel: where NVRTC may cut
** the source into units compiled at once (nvrtc_units.c). The text before
** the first (the skeletons, the key classes' structs) is every unit's head. */
#define RF_GPU_UNIT_MARK "// ---- unit\n"

typedef struct rf_gpu_ptx {
    char *ptx;            /* NUL-terminated PTX text (owned) */
    uint64_t len;         /* bytes, without the NUL */
    char *arch;           /* the architecture it targets (owned) */
    char *abi;            /* rf_gpu_abi_tag() of the generator (owned) */
    char *opts;           /* the options: "fused" or "unfused" (the source with or without the fused
                             kernels), then NVRTC's flags besides the architecture (owned) */
    uint64_t src_hash[2]; /* the hash of the source it was compiled from */
    uint64_t key[2];      /* rf_gpu_ptx_key: what it was compiled from, with what, for what */
    uint64_t ptx_hash[2]; /* rf_gpu_hash128 of ptx, where ptx_hashed (programs compiled in this process) */
    int ptx_hashed;
    int from_cache;       /* NVRTC's output came from the disk cache, or from this process's memory */
    double seconds;       /* time spent in NVRTC (0 from the cache) */
} rf_gpu_ptx;

void rf_gpu_ptx_free(rf_gpu_ptx *x);
/* The options text of a compilation (rf_gpu_ptx.opts), owned; NULL on exhausted memory. */
char *rf_gpu_ptx_opts(int no_fuse);
/* The hash that binds PTX to what it was made from: of the source's hash,
** the ABI tag, the options and the architecture (rf_gpu_ptx's fields). A
** runtime recomputes it from the plans' source hash (rf_gpu_plan) and its
** own ABI tag and options to accept stored PTX without generating the
** source. */
void rf_gpu_ptx_key(const rf_gpu_ptx *x, uint64_t out[2]);

/* 1 when NVRTC can be loaded; else 0 and why. */
int rf_gpu_nvrtc_available(char *why, size_t n);
/* 1 when arch names a GPU architecture as NVRTC takes it: compute_NN or
** sm_NN (two or three digits, an optional a or f after them: sm_90a). */
int rf_gpu_arch_valid(const char *arch);

/* The cache folder <root>/<sub> (root: root_dir; NULL: $XDG_CACHE_HOME/redfox
** or ~/.cache/redfox; "": none): owned, NULL if none. */
char *rf_gpu_cache_dir(const char *root_dir, const char *sub);
/* Writes a cache file through a temporary file and a rename (creating dir):
** 1 when done. Failures leave no file and are not errors (a cache is
** optional): 0, errno saying why, for a caller that tells the user. */
int rf_gpu_cache_write(const char *dir, const char *path, const void *data, uint64_t len);
/* Cache entries that carry their own check (NVRTC's PTX, the driver's
** cubins): a head of RF_GPU_CACHE_HEAD bytes, "redfox cache entry 1 LEN
** CRC32" padded with blanks to a newline, then the LEN bytes. A hit is
** served only when the file is a regular file of at most
** RF_GPU_CACHE_MAX_BYTES whose head is whole and agrees with its bytes: an
** entry cut short, damaged, replaced by anything else (or written by an
** older build, without a head) is a miss, compiled again and written anew.
** rf_gpu_cache_read_checked returns the bytes (malloc'd, NUL-terminated,
** *len without the NUL) or NULL. */
#define RF_GPU_CACHE_HEAD 64
#define RF_GPU_CACHE_MAX_BYTES ((int64_t)256 << 20)
/* rf_gpu_cache_write_checked: an empty folder at path is removed first; a
** folder with files in it is left alone (not ours to delete) and, unless d
** is NULL, a warning there names it, as the entry cannot be written. */
void rf_gpu_cache_write_checked(const char *dir, const char *path, const void *data, uint64_t len, rf_diags *d);
/* rf_gpu_cache_clear_folder: that first step alone (an empty folder at path
** removed, one with files named in a warning unless d is NULL), for a cache
** whose entries are written otherwise (the emulator's objects). */
void rf_gpu_cache_clear_folder(const char *path, rf_diags *d);
char *rf_gpu_cache_read_checked(const char *path, uint64_t *len);
/* rf_gpu_cache_read_checked of a driver's cubin (<cache>/jit/HASH...cubin): NULL
** also where the checked bytes are not an ELF64 file (shorter than its
** 64-byte header, another magic or class). Both the run that loads it and
** `redfox compile`, which makes it ahead, take only such an entry. */
char *rf_gpu_cubin_read_checked(const char *path, uint64_t *len);
/* A cache entry that must stay as it was built (the emulator's shared
** object, which dlopen maps from the file): a seal of RF_GPU_CACHE_HEAD
** bytes appended at its end, "redfox cache seal 1 LEN CRC32", LEN the
** bytes before it (the loader reads only what the object's headers name,
** never the seal). rf_gpu_cache_seal appends it to the file at path (1 when
** done); rf_gpu_cache_sealed says whether the file at path is a regular
** file of at most RF_GPU_CACHE_MAX_BYTES whose seal agrees with its bytes:
** an object cut short (mapped past its end, it would end the process with
** SIGBUS), emptied or damaged is not. */
int rf_gpu_cache_seal(const char *path);
int rf_gpu_cache_sealed(const char *path);
/* Makes the cache folder dir (and its parents): 1 when it is then a folder
** this process can write in, 0 when not (a file in its way, no right to
** write): the caller then caches nothing, as with --no-cache. */
int rf_gpu_cache_dir_make(const char *dir);
/* A name to write path's new contents under before renaming them onto it:
** path.PID.N.tmp, N counted in the process, so that two threads writing one
** entry (two runs of one program at once) do not write one file together.
** Malloc'd; NULL when out of memory. */
char *rf_gpu_cache_tmp_name(const char *path, const char *ext);
/* Creates tmp (a name of rf_gpu_cache_tmp_name) as a new, empty regular
** file (O_CREAT | O_EXCL | O_NOFOLLOW): something already under the name
** (this process's own, so none of redfox's: a named pipe, a symbolic link)
** is removed, not a folder, and the name taken once more, so that what is
** written there never hangs nor goes through a link. Its descriptor, open
** for writing; -1 with errno set. */
int rf_gpu_cache_create_new(const char *tmp);

/* 128-bit hash of bytes (two 64-bit lanes), for cache keys. */
void rf_gpu_hash128(const void *data, uint64_t n, uint64_t out[2]);

/* Compiles a source to PTX, through the cache. RF_EUSER with a warning-free
** error when NVRTC cannot be loaded; RF_EINTERNAL with NVRTC's log when the
** source does not compile (a bug of the generator). */
rf_status rf_gpu_nvrtc_compile(const char *src, uint64_t len, const rf_gpu_nvrtc_opts *o, rf_gpu_ptx *out,
                               rf_diags *d);

/* Code generation and NVRTC in one call, for `redfox compile` and the runtime. */
rf_status rf_gpu_compile_program(const rf_hir_program *p, const rf_gpu_plan *pl, const rf_gpu_nvrtc_opts *o,
                                 rf_gpu_ptx *out, rf_diags *d);

/* For `redfox compile`: compiles p and, where that works, appends the PTX0
** section content to sec (sec->len stays 0 otherwise). When NVRTC cannot be
** loaded, compiling still succeeds: a warning goes to d and no section is
** made. Other failures are errors. */
rf_status rf_gpu_make_ptx0(const rf_hir_program *p, const rf_gpu_plan *pl, const rf_gpu_nvrtc_opts *o, rf_buf *sec,
                           rf_diags *d);

/* The PTX0 section: u32 version 2, str abi, str arch, str opts,
** u64 src_hash[2], u64 key[2], u64 PTX length, str the PTX compressed with
** zlib (docs/RFX.md). */
rf_status rf_gpu_ptx0_encode(const rf_gpu_ptx *x, rf_buf *out);
/* RF_EUSER with an error naming file for a malformed section. */
rf_status rf_gpu_ptx0_decode(const char *file, const void *data, uint64_t size, rf_gpu_ptx *out, rf_diags *d);

#endif
