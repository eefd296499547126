/*
** runtime/rf_rt_place.h: learned placement: which device runs a program
** faster (--device auto), after HyPE (a cost model per operator kind and
** device, learned from measured run times).
**
** Owns: the placement model's records and their file (<cache>/place/
** model.txt, docs/LANGUAGE.md "Choosing the device"), the fits, the
** prediction of a program's time on each device and the choice
** (rt_place.c), over the runs a process will make; a program's features,
** the records a run leaves, the choice for one run and for a tool's list
** of programs (rt_place_run.c, for rt_run.c and tools/); the parsed
** records' cache (model.bin, rt_place_bin.c).
*/
#ifndef RF_RT_PLACE_H
#define RF_RT_PLACE_H

#include "rf_common.h"
#include "rf_harmony.h"

#define RF_RT_PLACE_VERSION 2 /* 2: a run record's start state may be 2 (held); files of 1 are read */
#define RF_RT_PLACE_MAX_RECORDS 4096 /* the file keeps the newest this many */
#define RF_RT_PLACE_COMPACT_BYTES ((int64_t)RF_RT_PLACE_MAX_RECORDS * 2 * 80) /* appended past it: rewritten */
/* The most a model file can hold: the compaction bound and what runs that
** met it at once appended (each at most RF_RT_PLACE_MAX_RECORDS lines of
** some 100 bytes). A larger file is no model of ours: it is ignored with a
** warning and written anew, never read into memory. */
#define RF_RT_PLACE_MAX_FILE_BYTES ((int64_t)4 << 20)

/* One measurement. A run record: one run of a program, its times on a
** device: the reading of its inputs (not the same on both devices: the CPU
** widens a database's narrow columns as it reads them, the GPU copies them
** narrow and widens them on the device), on the GPU its start and copies,
** then the run. A kernel record (from --profile): one kernel.
** A host record: what a run that looked for the GPU found on a host (its
** kind, or none), so that auto need not load the driver to know. */
typedef struct rf_rt_place_rec {
    char type;         /* 'r' run, 'k' kernel, 'h' host */
    int gpu;           /* the device: 1 the GPU, 0 the CPU; host: 1 a usable GPU, 0 none */
    char host[64];     /* host: its name */
    uint64_t prog;     /* run: the program's hash (rf_rt_place_prog_hash) */
    int fresh;         /* run, GPU: where the driver started: 0 in an earlier run of this process,
                          1 in this run (a fresh process), 2 in this run while a `redfox hold`
                          held it on the host (rf_rt_hold.h: the short start) */
    char kind[24];     /* kernel: its kind ("join_index"); host: the GPU's ("NVIDIA_H100_80GB_HBM3", "-") */
    double rows, bytes; /* run: the inputs' rows and the bytes of the columns read, as
                           rf_rt_place_inputs estimates them before a run; kernel: rows and bytes in */
    int32_t kernels;   /* run: the program's kernels */
    double read_s;     /* run: the inputs' reading on the host (database or text files), where this
                          run read them all itself (no inputs kept from an earlier run of its process:
                          rf_rt_options.cache NULL); -1 not known (and in records of version 1) */
    double start_s;    /* run, GPU: the start the reading did not hide (driver, context, module) */
    double copy_s;     /* run, GPU: the inputs' copies to the device */
    double seconds;    /* run: the run and its outputs back; kernel: its time */
} rf_rt_place_rec;

/* Whether r's numbers can be measurements: times at most
** RF_RT_PLACE_MAX_SECONDS (31 years), rows and bytes at most 2^64 (what a
** 64-bit count holds). Past them a record is damage, not a run: a record
** that a run of a few rows took 1e308 s was trusted, and its program's
** every later run was predicted at that (and sent to the GPU). A parse and
** model.bin's check (rt_place_bin.c) both ask it. */
#define RF_RT_PLACE_MAX_SECONDS 1e9
#define RF_RT_PLACE_MAX_COUNT 18446744073709551616.0
int rf_rt_place_rec_plausible(const rf_rt_place_rec *r);

typedef struct rf_rt_place_model {
    rf_rt_place_rec *recs;
    int64_t n, cap;
} rf_rt_place_model;

void rf_rt_place_model_free(rf_rt_place_model *m);
rf_status rf_rt_place_add(rf_rt_place_model *m, const rf_rt_place_rec *r);

/* The model file under the cache root cache_dir (NULL: the user's cache
** folder; "": none, then NULL): owned. */
char *rf_rt_place_path(const char *cache_dir);
/* Reads the model file at path into m (empty when there is none). A file
** that is not a model of this version, or has a damaged line, is ignored
** with a warning naming it and the line (m stays empty: it is written anew);
** a last line without its newline is left out (rf_rt_place_whole_lines).
** So is one that is not a regular file (a named pipe, a device: never
** opened so as to block, never read without end) or is larger than
** RF_RT_PLACE_MAX_FILE_BYTES; a folder is passed over without a warning.
** Only exhausted memory fails. */
rf_status rf_rt_place_read(const char *path, rf_rt_place_model *m, rf_diags *d);
/* The model file's text[0, len) parsed into m (cut into lines in place),
** its lines numbered from line0 + 1 (line 1 is the version line): the
** number of the first line that does not parse (a last one without its
** newline included), else 0; *lines: the last line's number; *st: RF_ENOMEM
** when memory ran out. The records are added to m's. */
int64_t rf_rt_place_parse(char *text, int64_t len, int64_t line0, rf_rt_place_model *m, int64_t *lines,
                          rf_status *st);
/* The length of text[0, len) up to and with its last newline (0: none):
** what a read parses. A last line without its newline may be an append
** still being written (rt_place.c): it is left out, not damage. */
int64_t rf_rt_place_whole_lines(const char *text, int64_t len);
/* m cut to its newest RF_RT_PLACE_MAX_RECORDS records. */
void rf_rt_place_trim(rf_rt_place_model *m);
/* The warning for the model file at path damaged at line; m emptied. */
void rf_rt_place_damaged(const char *path, int64_t line, rf_rt_place_model *m, rf_diags *d);
/* 1 when the file open at fd can be a model: a regular file of at most
** RF_RT_PLACE_MAX_FILE_BYTES (*sb: its fstat). */
struct stat;
int rf_rt_place_file_ok(int fd, struct stat *sb);
/* rf_rt_place_read for a choice, through a cache of the parsed records
** beside the file (model.bin, rt_place_bin.c): the records of the bytes
** it covers from it, only the lines after them parsed; made again when
** there is none, the file was written anew or many lines came after it.
** The same model and warnings as rf_rt_place_read. */
rf_status rf_rt_place_load(const char *path, rf_rt_place_model *m, rf_diags *d);
/* The file's text: the version line, then the newest RF_RT_PLACE_MAX_RECORDS records. */
rf_status rf_rt_place_format(const rf_rt_place_model *m, rf_buf *out);
/* Appends recs to the model file at path: their lines added at its end
** (one write) where the file has its version line, ends with a newline and
** is below RF_RT_PLACE_COMPACT_BYTES (a regular file, not a link); else
** read (a damaged file, or none of a model's kind: rf_rt_place_read's
** warning in d), added, trimmed, written aside and renamed into place (a
** reader never sees half a file; of two processes rewriting at once, one's
** records may be lost). A line damaged in the middle is not looked for by
** an append (rf_rt_place_reset). Failures to write are not errors (the
** model is a cache). */
rf_status rf_rt_place_append(const char *path, const rf_rt_place_rec *recs, int64_t n, rf_diags *d);
/* (rf_rt_place_append and rf_rt_place_reset return RF_EIO, errno saying
** why, when the file could not be written: a folder without the right to
** write, a full disk.) The warning that a model found damaged cannot be
** written anew, naming path and errno's reason: the damage warning said it
** would be, and every later run finds it damaged again. */
void rf_rt_place_unwritable(const char *path, rf_diags *d);
/* The model file at path written anew, empty: after a read found it
** damaged (the warning said it is written anew). */
rf_status rf_rt_place_reset(const char *path);
/* Removes what killed writers of the file at path left beside it: its
** temporaries path.<pid>.<n>.tmp (rf_gpu_cache_tmp_name: written aside,
** then renamed; also path.<pid>.tmp, older builds' names) of a process
** that no longer exists, older than RF_RT_PLACE_STALE_TMP_S. A live
** writer's temporary is never removed (its process exists; one of another
** pid namespace sharing the folder, unknown here, renames its file within
** milliseconds, long before that age). Called before every write aside
** (model.txt, model.bin); failures are ignored. Returns the files removed. */
int64_t rf_rt_place_sweep(const char *path);
#define RF_RT_PLACE_STALE_TMP_S 60

/* The least-squares fit y ~ c0 + c1 x1 + c2 x2 with every coefficient >= 0
** (each subset of the three terms tried, the smallest squared error kept;
** of equal errors the first of: c1; c2; c1 c2; c0 c1; c0 c2; c0 c1 c2; c0).
** x2 NULL: no second feature. One point gives y = c1 x1 (proportional).
** Returns 0 with no point. */
typedef struct rf_rt_place_fit {
    double c[3];
    int64_t n;
} rf_rt_place_fit;
int rf_rt_place_fit_lsq(const double *x1, const double *x2, const double *y, int64_t n, rf_rt_place_fit *out);
double rf_rt_place_fit_eval(const rf_rt_place_fit *f, double x1, double x2);

/* What the prediction needs of a program and its inputs. */
typedef struct rf_rt_place_query {
    uint64_t prog;
    int32_t nkernels;
    const char *const *kinds; /* each kernel's kind name */
    double rows, bytes;       /* the inputs' (estimated before reading) */
    int threads;              /* the CPU's */
    int gpu_started;          /* the GPU's driver runs in this process already */
    int gpu_held;             /* not started, but a `redfox hold` holds the driver on this host
                                 (rf_rt_hold_present): a fresh process's start is the short one */
    int64_t runs;             /* the runs of this program the process will make from this one on,
                                 this one included (<= 1: this one) */
    int kept;                 /* the inputs are kept between those runs (an input cache): on the
                                 GPU they are copied once, not once a run */
    double later_gain_s;      /* what the later programs of this process would save on a
                                 started GPU (rf_rt_place_gain): they share its start */
} rf_rt_place_query;

/* The defaults, with no record (docs/LANGUAGE.md): the CPU 24 ns per row
** per kernel over its threads; the GPU 0.05 ns per row per kernel and 20 us
** per kernel, a start of 0.3 s in a fresh process and copies at 10 GB/s. */
#define RF_RT_PLACE_CPU_NS_ROW 24.0
/* A kernel kind's fit is evaluated at the program's input rows only where
** its records saw at least 1/RF_RT_PLACE_REACH of them: one sort of 4 rows
** that took 4 ms (a cold page, a preemption) fitted through the origin and
** stretched to 76,675 rows predicted 77 s for a 2 ms query. Else the
** defaults stand for that kernel. */
#define RF_RT_PLACE_REACH 10.0
#define RF_RT_PLACE_GPU_NS_ROW 0.05
#define RF_RT_PLACE_GPU_KERNEL_S 20e-6
#define RF_RT_PLACE_GPU_START_S 0.3
#define RF_RT_PLACE_GPU_BW 10e9
/* A start while `redfox hold` runs, before any run has measured one: this
** share of a fresh process's start as measured (or of the default). On the
** H200 a fresh q06's start not hidden by its reading was about 150 ms
** alone and 75 ms beside the holder; a guess on the low side is corrected
** by the GPU run it leads to, one on the high side would never be (the CPU
** chosen, no held GPU start ever measured). */
#define RF_RT_PLACE_HELD_SHARE 0.5
/* A near tie: a GPU not started yet is chosen only when it is predicted
** faster than the CPU by this share of the CPU's time at least; within it
** the CPU, which needs no start, runs (the start's and the prediction's
** own errors are of this size, and either device is then within 10 % of
** the better one). */
#define RF_RT_PLACE_TIE 0.10

typedef struct rf_rt_place_choice {
    double cpu_s, gpu_s;     /* predicted for one run (the GPU: with its start and copies; both
                                with their reading) */
    double cpu_read_s, gpu_read_s; /* of those: the reading (this program's runs that read their
                                inputs; one device's stands for the other's where only it has any;
                                0 with none) */
    double gpu_start_s, gpu_copy_s; /* of gpu_s: the start (0 when started) and the copies */
    int64_t runs;            /* the runs weighed (q->runs, at least 1) */
    double cpu_total_s, gpu_total_s; /* predicted for all of them (the GPU's start once, kept
                                        inputs' copies once) */
    double later_gain_s;     /* q->later_gain_s */
    int gpu;                 /* chosen: the GPU */
    int tie;                 /* the GPU predicted faster, but by less than RF_RT_PLACE_TIE of the
                                CPU's time with its start still to pay: the CPU chosen */
    int64_t records;         /* the model's records */
    const char *cpu_basis, *gpu_basis; /* "this program's runs", "kernel kinds", "defaults" */
    int host_gpu;            /* rf_rt_place_choose: what the model's last host record of this
                                host says: 1 a usable GPU (host_kind), 0 none, -1 no record */
    char host_kind[24];
    int gpu_started;         /* rf_rt_place_choose: the GPU weighed as started (no start to pay) */
    int gpu_held;            /* the start weighed as a held driver's (q->gpu_held) */
    int held_guessed;        /* ... guessed (RF_RT_PLACE_HELD_SHARE): no held start measured yet */
    /* rf_rt_place_choose: what the choice itself cost (--profile): the
    ** model file read and parsed, the inputs' sizes (and the later
    ** programs'), the prediction; choose_s all of them */
    double choose_s, model_s, inputs_s, predict_s;
} rf_rt_place_choice;

/* Predicts q's time on both devices from m and chooses the faster (the CPU
** on a tie). For each device: this program's run records there (their time
** fitted against the input rows), else the kernel records of each kernel's
** kind there (against rows and bytes, every kernel taken to read all the
** input rows), else the defaults; the GPU adds its start (unless started)
** and the copies of the input bytes, at what its run records measured.
** Over q->runs runs the CPU takes runs x cpu_s, the GPU its start once, the
** copies once (kept inputs) or each run, and runs x its run. The GPU is
** chosen when the program itself is faster on a started GPU and its total
** with the start is below the CPU's total plus what later programs would
** save on the started GPU (q->later_gain_s): the start is paid once for
** all of them. A GPU not started yet must be below that by RF_RT_PLACE_TIE
** of it (else out->tie: the CPU). */
void rf_rt_place_predict(const rf_rt_place_model *m, const rf_rt_place_query *q, rf_rt_place_choice *out);
/* What q would save on a started GPU against the CPU over its runs (>= 0):
** the later programs' share of a GPU start (q->gpu_started is ignored). */
double rf_rt_place_gain(const rf_rt_place_model *m, const rf_rt_place_query *q);

/* ---- one run (rt_place_run.c) ---------------------------------------------- */

typedef struct rf_rt_options rf_rt_options;
typedef struct rf_rt_result rf_rt_result;

/* The program's hash: its variables (names, roles, types, files) and kernels. */
uint64_t rf_rt_place_prog_hash(const rf_hir_program *p);
/* The inputs' rows and the bytes of the columns p reads, before reading
** them: a database's manifest, or text files' sizes (8 bytes a column a
** row); an input that is neither, the rows cache holds for it in memory
** (NULL: none). */
typedef struct rf_rt_cache rf_rt_cache;
void rf_rt_place_inputs(const rf_hir_program *p, const char *data_dir, const rf_rt_cache *cache, double *rows,
                        double *bytes);
/* The model file under o's cache_dir read (a damaged one: a warning in d)
** and p's time on both devices predicted, over o->runs runs, with o->later's
** programs' gain on a started GPU (their copies: the columns p and the
** programs before them do not read, where the inputs are kept). Loads no
** GPU driver: the caller probes only when the GPU is chosen. */
void rf_rt_place_choose(const rf_hir_program *p, const rf_rt_options *o, int threads, int gpu_started,
                        rf_rt_place_choice *out, rf_diags *d);
/* Would --device auto start the GPU for programs ps[0..n), each run runs
** times (<= 1: once) over the same inputs, kept between them where kept is
** set: 1 when their predicted gain on a started GPU exceeds its start in a
** fresh process (a tool compiles the GPU code ahead only then). Loads no
** GPU driver; a damaged model: a warning in d. */
int rf_rt_place_workload_gpu(const rf_hir_program *const *ps, int32_t n, int64_t runs, int kept,
                             const rf_rt_options *o, int threads, rf_diags *d);
/* Is the GPU's driver (libcuda.so.1) loaded in this process? Asked of the
** dynamic loader without loading it (--profile says so: a CPU choice needs
** no driver). */
int rf_rt_place_driver_loaded(void);
/* This host's name as host records hold it (at most 63 characters, no
** blanks). */
void rf_rt_place_host(char out[64]);
/* The GPU's kind as host records hold it, from rf_rt_gpu_available's text
** ("NVIDIA H100 80GB HBM3 (sm_90, ...)": NVIDIA_H100_80GB_HBM3). */
void rf_rt_place_gpu_kind(const char *why, char out[24]);
/* The records of a finished run appended to the model file: one run record,
** with --profile one per kernel that ran, and a host record where the run
** looked for the GPU (res->host_gpu_found) and found other than the
** model's last host record says. */
void rf_rt_place_record(const rf_hir_program *p, const rf_rt_options *o, rf_rt_result *res, rf_diags *d);

#endif
