/*
** include/redfox.h: the public interface of libredfox, the redfox LogiQL
** (Datalog) compiler and runtime as a library. This is the one header an
** application includes; link with `pkg-config --cflags --libs redfox` or
** CMake's find_package(redfox) (target redfox::redfox).
**
** Owns: the library's public contract: every type, function, ownership and
** threading rule an application may rely on. docs/API.md is the guide.
**
** THE OBJECTS
**   rf_database  where a run's inputs come from: a text data folder or a
**                redfox database (`redfox import`), plus relations given in
**                memory (rf_database_put_rows, rf_database_put_arrow).
**   rf_program   a compiled program (from LogiQL text, a .logic file or a
**                .rfx file), with its diagnostics. Immutable once compiled.
**   rf_result    the outputs of one run: every lang:output relation with
**                its typed columns (of rf_exec: also what the transaction did).
**   rf_batch     a batch of inserts and deletes for rf_exec (level 4).
**
** ERRORS. Every function that can fail returns an int: REDFOX_OK (0) or one
** of the REDFOX_E* codes below. The message of the last failed call on an
** object is read with rf_errmsg (database) or rf_program_errmsg (compile);
** the structured diagnostics (file, line,
** column, severity, message) with rf_database_diag / rf_program_diag. A
** failed call leaves its out-parameters NULL unless stated. Functions that
** return a value (counts, getters) return 0 / NULL on a bad argument (a NULL
** handle, an index out of range, a type mismatch) and set no message; check
** indexes against the counts.
**
** OWNERSHIP. Handles are created by rf_open, rf_compile*, rf_run (and
** rf_exec), rf_batch_new and freed by rf_close, rf_program_free,
** rf_result_free, rf_batch_free; each free function accepts NULL. A result owns its data outright: it stays valid after the database
** and the program it came from are closed. Strings returned by getters
** (names, messages, string values) are owned by the object they came from
** and stay valid until it is freed (messages: until the next call on that
** object). Memory the caller passes in is copied before the call returns,
** except an ArrowArray given to rf_database_put_arrow, which is moved (see
** there). Memory handed out with "free with rf_free" is the caller's.
**
** THREADS. The library keeps no global state of its own: distinct objects
** may be used from distinct threads at once. One rf_database must not be
** used by two threads at once (a run reads and changes it). An rf_program
** and an rf_result are read-only after creation and may be read from any
** number of threads at once (but for rf_program_write_rfx and
** rf_program_dump, which record their diagnostics on the program). An
** rf_world is made and ended on one thread. An rf_batch is used by one
** thread at a time; rf_exec uses its database as rf_run does. A run uses
** `threads` worker threads of its own and returns when they are done.
** Shared underneath, each safe for concurrent runs: the host's pool of
** large column buffers, and on the GPU the process's one CUDA context
** (opened by the first GPU run).
**
** VALUES. Column types and their in-memory layouts (rf_result_column_data,
** rf_database_put_rows):
**   REDFOX_INT      int64_t
**   REDFOX_FLOAT    double
**   REDFOX_DECIMAL  int64_t, the value times 10^REDFOX_DECIMAL_SCALE (10^6)
**   REDFOX_STRING   UTF-8 text (results: uint32_t codes, see rf_result_string)
**   REDFOX_BOOL     uint8_t, 0 or 1
**   REDFOX_DATE     int32_t, days since 1970-01-01 (years 1..9999)
**   REDFOX_DECIMAL128  16 bytes: a two's complement 128-bit integer,
**                   little-endian, the value times 10^6: a decimal the
**                   compiler keeps in 128 bits (a total of decimals, exact
**                   to 38 digits; results only, see rf_result_decimal128)
** There are no nulls.
*/
#ifndef REDFOX_H
#define REDFOX_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define REDFOX_API __attribute__((visibility("default")))
#else
#define REDFOX_API
#endif

/* ---- version -------------------------------------------------------- */

#define REDFOX_VERSION "0.1.0"
#define REDFOX_VERSION_NUMBER 1000 /* major * 1000000 + minor * 1000 + patch */

/* The library's version, "0.1.0": may differ from REDFOX_VERSION when an
** application runs against a newer library than it was compiled with. */
REDFOX_API const char *rf_libversion(void);
REDFOX_API int rf_libversion_number(void);
/* The interface's level: 1 the first release; 2 adds compile options
** (rf_compile_*_v2), progress reports, timelines (rf_trace), the run
** options after trace_file and the profile's text ("level 2" below); 3
** adds the compile options after no_opt, writing .rfx files
** (rf_program_write_rfx), the compiler's intermediate forms
** (rf_program_dump) and runs on several MPI ranks (rf_world_mpi,
** rf_run_options.world); 4 adds transactions over a redfox database
** (rf_batch_*, rf_exec, rf_result_exec_*), a run's figures
** (rf_result_stats), the GPU's copies of kept inputs forgotten
** (rf_database_forget_device) and the devices described
** (rf_device_info); 5 adds totals of decimals exact to 38 digits
** (REDFOX_DECIMAL128, rf_result_decimal128, rf_run_options.decimal128) and
** a barrier of the ranks (rf_world_barrier); 6 adds a batch's files read
** ahead (rf_batch_read_ahead); 7 adds them parsed ahead too, for a program
** (rf_batch_parse_ahead). A program compiled against
** level N checks rf_api_level() >= N before using them with an older
** library. */
#define REDFOX_API_LEVEL 7
REDFOX_API int rf_api_level(void);

/* ---- result codes ---------------------------------------------------- */

#define REDFOX_OK 0
#define REDFOX_ERROR 1     /* an error in the program or the data: see the diagnostics */
#define REDFOX_MISUSE 2    /* a bad argument (NULL handle, unknown option, wrong type) */
#define REDFOX_INTERNAL 3  /* a bug or an unexpected system failure */
#define REDFOX_NOMEM 4     /* out of memory */
#define REDFOX_IO 5        /* a file could not be read or written */
#define REDFOX_NOTFOUND 6  /* no such output relation or column */

/* ---- types ----------------------------------------------------------- */

#define REDFOX_INT 0
#define REDFOX_FLOAT 1
#define REDFOX_DECIMAL 2
#define REDFOX_STRING 3
#define REDFOX_BOOL 4
#define REDFOX_DATE 5
#define REDFOX_DECIMAL128 6
#define REDFOX_DECIMAL_SCALE 6

/* "int", "float", "decimal", "string", "boolean", "date" (LogiQL's names),
** "decimal128"; NULL for an unknown type. Static storage. */
REDFOX_API const char *rf_type_name(int type);

/* ---- diagnostics ------------------------------------------------------ */

#define REDFOX_SEV_ERROR 0
#define REDFOX_SEV_WARNING 1
#define REDFOX_SEV_NOTE 2

/* One message of the compiler or the runtime. file is "" when unknown (a
** run-time error about no file), line and column 1-based, 0 when unknown.
** Owned by the object that holds it. */
typedef struct rf_diagnostic {
    int severity;       /* REDFOX_SEV_* */
    const char *file;
    int32_t line;
    int32_t column;
    const char *message;
} rf_diagnostic;

/* ---- memory ---------------------------------------------------------- */

/* Frees memory the library handed out "to free with rf_free" (NULL: nothing). */
REDFOX_API void rf_free(void *p);

/* ---- databases -------------------------------------------------------- */

typedef struct rf_database rf_database;

/* Opens path as the source of a program's lang:input files: a folder of text
** files (CSV, TBL: the program's directives say how to read them) or a
** redfox database (a folder `redfox import` wrote: only the columns a
** program reads are read). NULL: the current folder ("": REDFOX_MISUSE).
** Nothing is read here beyond checking that the folder exists: each run
** reads the files it needs, when it runs. Where path is missing because a
** writer of the database was killed during its commit on a system without
** an atomic exchange (docs/DATABASE.md, Writing), the database it left
** aside is put back first, with a note (rf_database_diag). On failure *db
** is still set (unless out of memory)
** and rf_errmsg(*db) says why; close it with rf_close. */
REDFOX_API int rf_open(const char *path, rf_database **db);
/* Frees db and every relation given to it (Arrow arrays moved in are
** released). Results of its runs stay valid. NULL: nothing. */
REDFOX_API void rf_close(rf_database *db);

/* The last failed call on db: its first error as "file:line:col: message"
** (the location parts only when known), or "" when the last call succeeded.
** Valid until the next call on db. */
REDFOX_API const char *rf_errmsg(const rf_database *db);
/* The last call's diagnostics (errors, warnings, notes) in order; i in
** [0, rf_database_diag_count(db)). Valid until the next call on db. */
REDFOX_API int64_t rf_database_diag_count(const rf_database *db);
REDFOX_API const rf_diagnostic *rf_database_diag(const rf_database *db, int64_t i);

/* Gives an input relation's rows from memory: a run then reads them instead
** of the file. name is the input's file name as the program's lang:input
** directive gives it ("flights.csv"): the rows stand for the file to every
** predicate reading it; or its predicate's name ("flight"): to that
** predicate alone (another one reading the same file reads the file, or
** the rows given under the file's name: a predicate reads rows given
** under its own name before those given for its file). A run that reads
** none of a relation given (no input of the program has that name: a
** typo) says so with a warning among its diagnostics, and reads the file.
** ncols columns of the types in types[] (REDFOX_*); columns[c] points at
** nrows values in the layout of the type (see VALUES above), strings as
** const char *const * (NUL-terminated UTF-8). The rows are copied (and
** checked: dates in range, strings valid UTF-8) before the call returns.
** A second put under the same name replaces the first. A run checks the
** types against the program's declaration (an error names the column) and
** checks a declared key (lang:input:key) and a functional predicate's
** dependency as for a file; their errors are located at
** "<rows given for NAME>:ROW:1" (ROW counted from 1), not at the file,
** which is not read. REDFOX_ERROR for a bad value ("NAME: column C, row
** R: not a valid date", rows counted from 1); REDFOX_MISUSE for bad
** arguments (a NULL string among them: "... row R: a NULL string"). */
REDFOX_API int rf_database_put_rows(rf_database *db, const char *name, int32_t ncols, const int *types,
                                    int64_t nrows, const void *const *columns);
/* Keeps the inputs runs read (on = 1) for the runs after them: the first
** run reads its input files (of a database: the columns it needs) as
** usual, and later runs on db, of this program or another reading the same
** files with the same types, take them from memory without reading the
** files again, so that a program run repeatedly pays for reading once. A
** file changed on disk after it was read (by another process, or through
** another handle) is therefore not seen: call with on = 0 (forgets what was
** kept, frees its memory) and on = 1 again to read afresh. Relations given
** in memory are kept the same way, and whatever was kept is forgotten
** whenever one is put or dropped, and whenever rf_exec on db commits a
** transaction (the next run reads the state it committed). Each result
** still owns its data (its strings are copied out of the kept ones).
** Default: off (each run reads its files). REDFOX_MISUSE for a NULL db. */
REDFOX_API int rf_database_keep_inputs(rf_database *db, int on);
/* Forgets the relation given under name: runs read the file again.
** REDFOX_NOTFOUND when there was none. */
REDFOX_API int rf_database_drop(rf_database *db, const char *name);

/* Frees what a GPU holds of db's kept inputs (rf_database_keep_inputs)
** between runs: the columns and strings earlier runs copied to the device,
** and its memory pool. The host's copies stay: the next run copies its
** inputs to the device again, as a first run does, without reading the
** files (a benchmark's cold run). Nothing when nothing is kept or no GPU
** ran. REDFOX_MISUSE for a NULL db. Level 4. */
REDFOX_API int rf_database_forget_device(rf_database *db);

/* ---- programs ---------------------------------------------------------- */

typedef struct rf_program rf_program;
typedef struct rf_result rf_result;

/* Compiles LogiQL source text (len bytes; -1: NUL-terminated) named name in
** diagnostics (NULL: "<string>"). On success and on a compile error *prog
** is set (NULL only when out of memory): on REDFOX_ERROR its diagnostics say
** why and it cannot be run. Free it with rf_program_free either way. */
REDFOX_API int rf_compile(const char *text, int64_t len, const char *name, rf_program **prog);
/* The same for n files compiled together as one program, or one compiled
** program file (.rfx, `redfox compile` writes them). */
REDFOX_API int rf_compile_files(const char *const *paths, int32_t n, rf_program **prog);
/* The same for n programs already in memory: texts[i] of lens[i] bytes
** (lens NULL, or lens[i] < 0: NUL-terminated), named names[i] in
** diagnostics (names NULL, or names[i] NULL: "<string>"). One of them may be a compiled program
** (.rfx bytes, told by a name ending in .rfx or by the file's magic bytes),
** then alone: for a program read from a pipe or standard input, whichever
** it is. The texts are read during the call only. */
REDFOX_API int rf_compile_buffers(const char *const *names, const char *const *texts, const int64_t *lens, int32_t n,
                                  rf_program **prog);

/* Options of a compile (API level 2): the plan switches of `redfox run` and
** `redfox compile`. Fill with rf_compile_options_init (which sets size and
** the defaults: every switch off), then change fields; a later version may
** add fields at the end and reads only the first `size` bytes. They change
** how the program computes, never what it computes. */
typedef struct rf_compile_options {
    size_t size;   /* set by rf_compile_options_init */
    int no_lftj;   /* cyclic bodies (triangles, cliques) joined with binary joins,
                   ** not the leapfrog triejoin (`--no-lftj`) */
    int no_exists; /* joins that only test that another row exists stay joins
                   ** (`--no-exists`) */
    int no_opt;    /* none of the query-plan passes (implies no_exists; `redfox
                   ** dump --no-opt`) */
    /* ---- level 3 (read only when size covers them) ---- */
    int stop_after;        /* REDFOX_STAGE_*: how far rf_compile_*_v2 goes; ALL
                           ** (default): a program that runs; AST, RULES, PLAN: a
                           ** program for rf_program_dump only (rf_run refuses it),
                           ** checked no further than that stage (`redfox dump`) */
    int no_fuse;           /* GPU code without the Kernel Weaver's fused kernels, as
                           ** `redfox compile --no-fuse` (rf_program_write_rfx,
                           ** rf_program_dump of --fused, --cuda, --ptx); default 0 */
    const char *gpu_arch;  /* the GPU code's NVRTC target (rf_program_write_rfx):
                           ** "compute_80" (NULL, the default), "compute_90",
                           ** "sm_90", ... (`redfox compile --gpu-arch`) */
    const char *cache_dir; /* where NVRTC's output and the local GPU's linked code
                           ** are cached (rf_program_write_rfx); NULL (default):
                           ** $XDG_CACHE_HOME/redfox, else ~/.cache/redfox; "": none */
    /* ---- read only when size covers it ---- */
    int no_partagg;        /* aggregates stay whole: with several ranks every row moves to
                           ** its group's rank before grouping, instead of each rank's
                           ** partial groups (`--no-partagg`); default 0 */
    int no_hoist;          /* commands inside a recursion's loop that read only what the
                           ** loop never writes stay there, recomputed every round,
                           ** instead of running once before it (`--no-hoist`); default 0 */
    int no_keyjoin;        /* a join whose sides meet on a computed value (`node(x), y = x + 1,
                           ** node(y)`) stays a cross product and a filter, instead of an
                           ** equi-join on the value computed before it (`--no-keyjoin`);
                           ** default 0 */
} rf_compile_options;
/* rf_compile_options.stop_after (level 3) */
#define REDFOX_STAGE_ALL 0   /* parsed, checked, planned, lowered to Harmony: runs */
#define REDFOX_STAGE_AST 1   /* parsed only (names and types not checked) */
#define REDFOX_STAGE_RULES 2 /* parsed and checked */
#define REDFOX_STAGE_PLAN 3  /* checked and its query plan built (and optimized unless no_opt) */
/* size: the caller's sizeof(rf_compile_options) (a later version's init
** sets up only what the caller's struct holds). */
REDFOX_API void rf_compile_options_init(rf_compile_options *o, size_t size);
/* rf_compile_files and rf_compile_buffers with options o (NULL: the
** defaults, the same as the functions without _v2). Options not set up by
** rf_compile_options_init: REDFOX_MISUSE, with *prog set to say so. A .rfx
** program was planned when it was compiled: o does not change it. */
REDFOX_API int rf_compile_files_v2(const char *const *paths, int32_t n, const rf_compile_options *o,
                                   rf_program **prog);
REDFOX_API int rf_compile_buffers_v2(const char *const *names, const char *const *texts, const int64_t *lens,
                                     int32_t n, const rf_compile_options *o, rf_program **prog);
/* 1 when prog came from a .rfx file (its plans and GPU code were made when
** it was compiled), 0 otherwise. */
REDFOX_API int rf_program_is_compiled(const rf_program *prog);
/* Input i's predicate as the program names it in messages (a predicate of
** a module with its module's prefix; the same as rf_program_input_name for
** most programs). NULL when out of range. Level 2. */
REDFOX_API const char *rf_program_input_predicate(const rf_program *prog, int32_t i);
REDFOX_API void rf_program_free(rf_program *prog);
/* The compile's first error as "file:line:col: message", "" when none. */
REDFOX_API const char *rf_program_errmsg(const rf_program *prog);
REDFOX_API int64_t rf_program_diag_count(const rf_program *prog);
REDFOX_API const rf_diagnostic *rf_program_diag(const rf_program *prog, int64_t i);
/* The program's inputs and outputs: count, then per index the predicate's
** name, its file (inputs: the lang:input file; outputs: the lang:output
** name) and its columns. NULL / 0 when out of range or not compiled. */
REDFOX_API int32_t rf_program_input_count(const rf_program *prog);
REDFOX_API const char *rf_program_input_name(const rf_program *prog, int32_t i);
REDFOX_API const char *rf_program_input_file(const rf_program *prog, int32_t i);
REDFOX_API int32_t rf_program_output_count(const rf_program *prog);
REDFOX_API const char *rf_program_output_name(const rf_program *prog, int32_t i);
/* Output i's declared order and limit (level 3): lang:output:orderBy's
** columns (0-based) into cols[k] and, when desc is not NULL, 1 for a
** descending one into desc[k], for k < max; *limit (may be NULL) its
** lang:output:limit, -1 when none. Returns how many order columns there
** are (0: none), or -1 when not known: out of range, or a program compiled
** from a .rfx file (which keeps no source). */
REDFOX_API int32_t rf_program_output_order(const rf_program *prog, int32_t i, int32_t *cols, int *desc, int32_t max,
                                           int64_t *limit);

/* ---- runs -------------------------------------------------------------- */

#define REDFOX_DEVICE_AUTO 0 /* the GPU when there is a usable one, else the CPU */
#define REDFOX_DEVICE_CPU 1
#define REDFOX_DEVICE_GPU 2  /* an error when there is no usable GPU */

/* A long run's progress, for a display (API level 2): reported to
** rf_run_options.progress once a recursive stratum's loop or an input's
** load has run a second, then about ten times a second, and once with done
** set when it ends (clear the display). Called on the run's thread; the
** struct and what it points at are valid during the call only. */
#define REDFOX_PROGRESS_FIXPOINT 0 /* a recursive stratum's rounds */
#define REDFOX_PROGRESS_LOAD 1     /* an input file's load */
typedef struct rf_progress {
    size_t size;        /* sizeof(rf_progress) of the library: fields past it are absent */
    int kind;           /* REDFOX_PROGRESS_* */
    int done;           /* the work ended: clear the display */
    double seconds;     /* since the work began */
    /* FIXPOINT: the loop's round, its predicates (the first npreds, and how
    ** many more) and each one's tuples so far */
    int64_t round;
    int32_t npreds, more;
    const char *const *preds;
    const int64_t *rows;
    /* LOAD: the input predicate, its file, the phase ("reading", "parsing",
    ** "interning strings", "checking") and bytes of the file so far, of
    ** bytes_total (0: not known) */
    const char *input, *path, *phase;
    int64_t bytes_done, bytes_total;
} rf_progress;
typedef void (*rf_progress_fn)(void *user, const rf_progress *p);

/* A run's timeline (API level 2), for a caller that adds its own phases
** around runs (its compile, its output) and writes one file: runs append
** to it through rf_run_options.trace. Times are seconds of rf_trace_clock.
** One rf_trace is used by one thread at a time. */
typedef struct rf_trace rf_trace;
/* The ranks this process runs with (level 3): see rf_world_mpi below. */
typedef struct rf_world rf_world;
/* A new, empty timeline (NULL when out of memory); free with rf_trace_free. */
REDFOX_API rf_trace *rf_trace_new(void);
REDFOX_API void rf_trace_free(rf_trace *t);
/* The clock of the events: seconds from an arbitrary start, monotonic. */
REDFOX_API double rf_trace_clock(void);
/* One event: category cat ("phase", "load", "kernel", "gpu"), its name, its
** start and end (rf_trace_clock) and rows or bytes n (-1: none). cat and
** name are copied. REDFOX_MISUSE for a time that is not finite (NaN,
** infinity: no JSON number) or a cat or name that is not UTF-8 (JSON's
** text is), rf_trace_errmsg saying so. */
REDFOX_API int rf_trace_event(rf_trace *t, const char *cat, const char *name, double t0, double t1, int64_t n);
/* Writes the timeline to path as Chrome trace-event JSON, the process named
** process (NULL: "redfox library"; not UTF-8: REDFOX_MISUSE): written
** aside and renamed into place.
** REDFOX_IO when it cannot be written: rf_trace_errmsg says why (and
** rf_trace_diag_count / rf_trace_diag give the record). */
REDFOX_API int rf_trace_write(rf_trace *t, const char *path, const char *process);
REDFOX_API const char *rf_trace_errmsg(const rf_trace *t);
REDFOX_API int64_t rf_trace_diag_count(const rf_trace *t);
REDFOX_API const rf_diagnostic *rf_trace_diag(const rf_trace *t, int64_t i);

/* Options of a run. Fill with rf_run_options_init_v2(&o, sizeof o) (or
** level 1's rf_run_options_init), which sets size and the defaults, then
** change fields: a later library version may add fields at the end, and
** reads only the first `size` bytes (options not set up by an init are
** REDFOX_MISUSE). */
typedef struct rf_run_options {
    size_t size;            /* the bytes set up, set by rf_run_options_init(_v2) */
    int device;             /* REDFOX_DEVICE_*; default AUTO */
    int threads;            /* CPU threads; <= 0 (default): one per core; at most 1024
                            ** (more: REDFOX_MISUSE, as `redfox run --threads`) */
    int64_t max_iterations; /* rounds of one recursive stratum before an error; <= 0 (default): no bound */
    int no_fuse;            /* GPU: every kernel separately, no Kernel Weaver fusion (default 0) */
    int profile;            /* collect per-kernel statistics (rf_result_profile); default 0 */
    const char *settings;   /* tuning settings "NAME=VALUE,NAME=VALUE" as `redfox run --set`
                            ** takes them; NULL (default): none. They change how a run
                            ** computes, never what */
    const char *trace_file; /* write the run's timeline to this file as Chrome trace-event
                            ** JSON (https://ui.perfetto.dev opens it): each input's load,
                            ** each kernel, on the GPU each launch, copy and wait as the
                            ** host saw them, as `redfox run --trace` does. Written aside and
                            ** renamed into place, also after a failed run (the timeline up
                            ** to the error); NULL (default): none; "" REDFOX_MISUSE */
    /* ---- level 2 (read only when size covers them) ---- */
    rf_progress_fn progress; /* reports of a long fixpoint or load; NULL (default): none */
    void *progress_user;     /* handed to progress as is */
    const char *cache_dir;   /* where --device auto's placement model (<cache_dir>/place/
                             ** model.txt) and the GPU's compiled code are kept, as
                             ** `redfox run --cache-dir`; "": none (`--no-cache`); NULL
                             ** (default): $XDG_CACHE_HOME/redfox, else ~/.cache/redfox.
                             ** The same as settings "cache_dir=DIR" */
    uint64_t gpu_memory;     /* GPU: cap the device memory the run uses, in bytes
                             ** (`--gpu-memory`); 0 (default): the settings' gpu_memory,
                             ** else none */
    rf_trace *trace;         /* append the run's events (each load, kernel, GPU
                             ** operation, and a "run" phase) to this timeline, the
                             ** caller's to write; NULL (default): none. Besides
                             ** trace_file, which is written as before */
    int process_exits;       /* 1: the caller ends its process right after this run
                             ** and its outputs (a command-line tool): the run then
                             ** leaves closing the GPU and unmapping its inputs to the
                             ** process's end, which does them at once. The result is
                             ** still complete and must still be freed. Default 0 */
    /* ---- level 3 (read only when size covers them) ---- */
    rf_world *world;         /* run as one of the world's ranks, together with the
                             ** others (rf_world_mpi): every rank calls rf_run with
                             ** the same program, options and inputs; each reads and
                             ** works on its share of the rows, exchanged over MPI,
                             ** and rank 0's result holds every output's rows (the
                             ** other ranks' results list the same outputs with no
                             ** rows). A rank that fails stops
                             ** all of them; each reports the failure. NULL
                             ** (default) or a world of one rank: this process alone */
    /* ---- the runs ahead (read only when size covers them: a library older
    ** than them ignores them and weighs one run) ---- */
    int64_t runs;            /* REDFOX_DEVICE_AUTO: the runs of this program the caller
                             ** will make from this one on, this one included (a loop
                             ** over rf_run: N, N-1, ... 1); with rf_database_keep_inputs
                             ** the GPU copies the inputs once for all of them. The GPU's
                             ** start is then weighed against all the runs, not one.
                             ** <= 1 (default): this run alone */
    const rf_program *const *later; /* REDFOX_DEVICE_AUTO: the programs the caller will */
    int32_t nlater;          /* run after these runs over the same database (e.g. the rest
                             ** of a query list), each later_runs times (<= 1: once): a
                             ** GPU started now serves them too. NULL/0 (default): none */
    int64_t later_runs;
    /* ---- level 5 (read only when size covers them) ---- */
    int decimal128;          /* 1 (rf_run_options_init_v2's default, and NULL options):
                             ** a total of decimals, and every value computed from
                             ** one, is exact to 38 digits and comes as
                             ** REDFOX_DECIMAL128 (rf_result_decimal128). 0: such
                             ** columns come as REDFOX_DECIMAL, as before level 5, and
                             ** a value beyond decimal's range fails the run
                             ** ("decimal out of range", naming the output), never a
                             ** wrong number. A caller compiled against level 4 or
                             ** older (its size does not cover this field) gets 0 */
} rf_run_options;
/* Level 1's init: sets up only the fields up to trace_file (size says so),
** as a program compiled against level 1 allocated them; the level-2 fields
** are then not read. */
REDFOX_API void rf_run_options_init(rf_run_options *o);
/* Level 2's init: size is the caller's sizeof(rf_run_options); every field
** the library knows within it is set to its default and o->size to what was
** set up. Use it to set a level-2 field. */
REDFOX_API void rf_run_options_init_v2(rf_run_options *o, size_t size);

/* ---- ranks (level 3) ---------------------------------------------------
** Several processes started by MPI's launcher (mpirun -np N app ...) run
** one program together, as `mpirun -np N redfox run` does: relations are
** hash-partitioned by the keys of the joins, groups and dedupes that need
** them and exchanged between the ranks (over NCCL between GPU ranks where
** it loads, else over MPI). One world per process. */
/* Joins the world of ranks mpirun started this process as one of: starts
** MPI (argc and argv are handed to it, may be NULL). A process that mpirun
** did not start gets a world of one rank (this process alone) and MPI is
** not started. On success *w is set; free it with rf_world_end. On failure
** (MPI cannot start; REDFOX_MISUSE for a redfox built without MPI started
** by mpirun, and for a second world while one is open or after one ended:
** MPI starts once a process) *w is still set (unless out of memory) and
** rf_world_errmsg says why; end it with rf_world_end too. Call it from the thread that
** will end it, before any run with it; not thread-safe. */
REDFOX_API int rf_world_mpi(int *argc, char ***argv, rf_world **w);
/* This process's rank in [0, rf_world_size), and the ranks' count; 0 and 1
** for NULL or a failed world. */
REDFOX_API int rf_world_rank(const rf_world *w);
REDFOX_API int rf_world_size(const rf_world *w);
/* The ranks on this rank's host (they share its cores and GPUs: divide
** rf_run_options.threads among them); 1 for NULL. */
REDFOX_API int rf_world_local_size(const rf_world *w);
/* This rank's number among those of its host, in [0, rf_world_local_size):
** a run with several ranks takes that GPU of the host (modulo the GPUs it
** shows); 0 for NULL. */
REDFOX_API int rf_world_local_rank(const rf_world *w);
/* Why rf_world_mpi failed ("" when it did not), and its diagnostics. */
REDFOX_API const char *rf_world_errmsg(const rf_world *w);
REDFOX_API int64_t rf_world_diag_count(const rf_world *w);
REDFOX_API const rf_diagnostic *rf_world_diag(const rf_world *w, int64_t i);
/* Ends the world and frees w: every rank calls it once its runs are over.
** exit_code 0: MPI is finalized normally. When a run's exchange timed out
** (a rank stopped answering) the others may be stuck in it: then every
** rank is aborted with exit_code (this call does not return). NULL:
** nothing. */
REDFOX_API void rf_world_end(rf_world *w, int exit_code);
/* Level 5: returns once every rank of w has called it (a barrier), e.g.
** after rank r wrote a shared cache the others read. timeout_s: the most
** seconds to wait for the others (<= 0: no limit); past it REDFOX_ERROR,
** rf_world_errmsg says that the others did not come, and the world is
** broken: a later rf_run or rf_world_barrier with it is REDFOX_MISUSE, and
** rf_world_end aborts every rank. NULL or a world of one rank: REDFOX_OK at
** once. */
REDFOX_API int rf_world_barrier(rf_world *w, double timeout_s);

/* Runs prog on db's inputs (relations given in memory first, else files
** under db's folder) with options o (NULL: the defaults). On success *res
** holds every lang:output relation; free it with rf_result_free. On failure
** *res is NULL and rf_errmsg(db) / rf_database_diag say why (data errors
** name file:line:col, run-time errors the rule). Diagnostics of a
** successful run (notes, such as which device ran it) are kept too. */
REDFOX_API int rf_run(rf_database *db, const rf_program *prog, const rf_run_options *o, rf_result **res);

/* ---- results ----------------------------------------------------------- */

REDFOX_API void rf_result_free(rf_result *res);
/* "cpu" or "gpu": where the run ran. Static storage. */
REDFOX_API const char *rf_result_device(const rf_result *res);
/* Seconds spent reading inputs and running the program. */
REDFOX_API double rf_result_load_seconds(const rf_result *res);
REDFOX_API double rf_result_run_seconds(const rf_result *res);

/* Output relations, in the program's order. */
REDFOX_API int32_t rf_result_count(const rf_result *res);
/* Output i's lang:output name. */
REDFOX_API const char *rf_result_name(const rf_result *res, int32_t i);
/* The index of the output named name, or -1. */
REDFOX_API int32_t rf_result_find(const rf_result *res, const char *name);
REDFOX_API int64_t rf_result_rows(const rf_result *res, int32_t i);
REDFOX_API int32_t rf_result_columns(const rf_result *res, int32_t i);
/* Column c's name ("" when the program gives none) and type (REDFOX_*;
** -1 when out of range). */
REDFOX_API const char *rf_result_column_name(const rf_result *res, int32_t i, int32_t c);
REDFOX_API int rf_result_column_type(const rf_result *res, int32_t i, int32_t c);
/* Column c of output i as one array of rf_result_rows values in the layout
** of its type (strings: uint32_t codes for rf_result_string_code); NULL
** when the relation is empty. Read-only, owned by res. */
REDFOX_API const void *rf_result_column_data(const rf_result *res, int32_t i, int32_t c);

/* One value. Each getter returns 0 (NULL) when the index is out of range or
** the column has another type. */
REDFOX_API int64_t rf_result_int(const rf_result *res, int32_t i, int32_t c, int64_t row);
REDFOX_API double rf_result_float(const rf_result *res, int32_t i, int32_t c, int64_t row);
/* The decimal times 10^6 (REDFOX_DECIMAL_SCALE). */
REDFOX_API int64_t rf_result_decimal(const rf_result *res, int32_t i, int32_t c, int64_t row);
/* A REDFOX_DECIMAL128 value times 10^6 as its high (signed) and low 64
** bits: the value is hi * 2^64 + lo. REDFOX_OK, or REDFOX_NOTFOUND (out of
** range, or another type: *hi and *lo 0). */
REDFOX_API int rf_result_decimal128(const rf_result *res, int32_t i, int32_t c, int64_t row, int64_t *hi,
                                    uint64_t *lo);
/* Days since 1970-01-01. */
REDFOX_API int32_t rf_result_date(const rf_result *res, int32_t i, int32_t c, int64_t row);
REDFOX_API int rf_result_bool(const rf_result *res, int32_t i, int32_t c, int64_t row);
/* The UTF-8 bytes of a string value (NUL-terminated; *len, when not NULL,
** its length in bytes), owned by res. */
REDFOX_API const char *rf_result_string(const rf_result *res, int32_t i, int32_t c, int64_t row, int64_t *len);
/* The string a code of rf_result_column_data stands for (codes are the same
** for equal strings within one result). */
REDFOX_API const char *rf_result_string_code(const rf_result *res, uint32_t code, int64_t *len);

#define REDFOX_FORMAT_TABLE 0 /* aligned columns under a header, as `redfox run` prints */
#define REDFOX_FORMAT_TBL 1   /* '|'-separated under a header row */
#define REDFOX_FORMAT_CSV 2   /* RFC 4180 under a header row */
/* Output i as text in format (REDFOX_FORMAT_*), as `redfox run --format`
** writes it: *text is NUL-terminated, *len its length (may be NULL); free
** it with rf_free. REDFOX_NOTFOUND (no output i), REDFOX_MISUSE (an unknown
** format), REDFOX_NOMEM. */
REDFOX_API int rf_result_text(const rf_result *res, int32_t i, int format, char **text, int64_t *len);
/* Output i written to f in format, byte for byte as rf_result_text gives
** it and `redfox run --format` prints it (without the "NAME (N rows)" line
** above each output). f is the caller's and is not flushed or closed.
** REDFOX_IO when f reports a write error, REDFOX_NOTFOUND (no output i),
** REDFOX_MISUSE (an unknown format, no f), REDFOX_NOMEM. */
REDFOX_API int rf_result_write(const rf_result *res, int32_t i, int format, FILE *f);
/* One value as text, as the output writer formats it (decimals with their
** digits, dates YYYY-MM-DD, booleans true/false); free with rf_free. NULL
** when out of range or out of memory. */
REDFOX_API char *rf_result_value_text(const rf_result *res, int32_t i, int32_t c, int64_t row);

/* The profile as text, exactly as `redfox run --profile` prints it to
** stderr (API level 2): the load and run time, one line per kernel that ran,
** the phases, --device auto's prediction, and the GPU's figures. Without
** rf_run_options.profile only the run's totals and phases are known: the
** kernel table is empty. REDFOX_IO when f reports a write error,
** REDFOX_MISUSE for NULL arguments. f is not flushed or closed. */
REDFOX_API int rf_result_profile_write(const rf_result *res, FILE *f);
/* The lines the gpu_trace setting collects (one per device operation of a
** GPU run; NULL when none), as `redfox run --set gpu_trace=1` prints them.
** Owned by res. Level 2. */
REDFOX_API const char *rf_result_device_log(const rf_result *res);
/* Output i in format to a writer: write(user, bytes, n) is called with
** consecutive pieces of the text rf_result_text gives, and returns 0, or
** non-zero to stop (the call then returns REDFOX_IO). Level 2. */
typedef int (*rf_write_fn)(void *user, const void *bytes, int64_t n);
REDFOX_API int rf_result_write_to(const rf_result *res, int32_t i, int format, rf_write_fn write, void *user);

/* ---- compiled programs and intermediate forms (level 3) ----------------- */

/* Writes prog as a compiled program file (.rfx, docs/RFX.md) at path, for
** rf_compile_files and `redfox run`: its schema, its Harmony program, its
** GPU plans (when the GPU backend takes the program) and its GPU code (PTX,
** made with NVRTC where libnvrtc loads, else a warning and no GPU code),
** as `redfox compile` writes it. The options' no_fuse, gpu_arch and
** cache_dir say how the GPU code is made (NULL: the defaults; the plan
** switches were read when prog was compiled). The file is written aside
** and renamed into place: a failed write leaves the old file; a symbolic
** link at path is refused, never written through; a device (/dev/null) is
** written. Where a GPU is present its code is also linked for that GPU
** into the cache, so that the file's first run there starts at once.
** The write's diagnostics (errors, and warnings such as no NVRTC) replace
** prog's (rf_program_errmsg, rf_program_diag): it must not run while
** another thread uses prog. REDFOX_MISUSE for a program that did not
** compile or was compiled with stop_after, REDFOX_IO when the file cannot
** be written, REDFOX_ERROR for a program the GPU backend rejects where
** NVRTC is present. */
REDFOX_API int rf_program_write_rfx(rf_program *prog, const char *path, const rf_compile_options *o);

/* What rf_program_dump prints (`redfox dump --WHAT`). */
#define REDFOX_DUMP_AST 0     /* the syntax tree, as parsed */
#define REDFOX_DUMP_RULES 1   /* the checked program: desugared rules, types, strata */
#define REDFOX_DUMP_PLAN 2    /* the query plan: relations and a CFG of relational commands */
#define REDFOX_DUMP_HARMONY 3 /* the Harmony IR: kernels over managed variables, scheduled */
#define REDFOX_DUMP_FUSED 4   /* the Kernel Weaver's fusion groups and the fused GPU kernels */
#define REDFOX_DUMP_CUDA 5    /* the CUDA C++ source of the GPU kernels */
#define REDFOX_DUMP_PTX 6     /* the PTX of the GPU kernels (a .rfx program's own, or NVRTC's) */
/* How: text (every WHAT), YAML (AST, PLAN), Graphviz dot (PLAN). */
#define REDFOX_DUMP_TEXT 0
#define REDFOX_DUMP_YAML 1
#define REDFOX_DUMP_DOT 2
/* An intermediate form of prog, byte for byte as `redfox dump` prints it,
** handed to write(user, bytes, n) (see rf_write_fn) only when all of it was
** made. AST, RULES and PLAN need a program compiled from LogiQL with
** stop_after at least that stage (ALL keeps them all; PLAN dumps the plan
** as compiled, so compile with no_opt for the plan before optimization);
** HARMONY, FUSED, CUDA and PTX need one compiled completely (from LogiQL or
** a .rfx file). o's no_fuse: the GPU code without fused kernels (NULL: the
** defaults). --ptx of LogiQL compiles the kernels with NVRTC (an error
** where it is missing). The dump's diagnostics replace prog's, as
** rf_program_write_rfx. REDFOX_MISUSE for a form prog does not hold or a
** format the form has not, REDFOX_IO when write returns non-zero. */
REDFOX_API int rf_program_dump(rf_program *prog, int what, int format, const rf_compile_options *o,
                               rf_write_fn write, void *user);

/* With rf_run_options.profile: kernel k's (k in [0, rf_result_profile_count))
** kind, device, calls, seconds and rows out. 0 / NULL otherwise. */
REDFOX_API int32_t rf_result_profile_count(const rf_result *res);
REDFOX_API const char *rf_result_profile_kernel(const rf_result *res, int32_t k, int64_t *calls, double *seconds,
                                                int64_t *rows_out);

/* ---- transactions (level 4) --------------------------------------------
** A redfox database (`redfox import`) kept up to date by a program, as
** `redfox exec` does (docs/TRANSACTIONS.md): rf_exec applies a batch of
** inserts and deletes to the program's base predicates (those with
** lang:input, whose tables the database holds), all or none; brings the
** program's derived predicates, which the database stores beside them, up
** to date (incrementally by delta rules and DRed where the program allows,
** else recomputed); commits the new state atomically; and returns the
** program's outputs after the batch. The first rf_exec of a program on a
** database computes and stores its derived predicates. */

/* A batch: its parts applied in the order they were added, as one
** transaction. Made with rf_batch_new, freed with rf_batch_free; used by
** one thread at a time; may be given to any number of rf_exec calls. */
typedef struct rf_batch rf_batch;
/* A new, empty batch (NULL when out of memory). */
REDFOX_API rf_batch *rf_batch_new(void);
/* Frees b and what was added to it. NULL: nothing. */
REDFOX_API void rf_batch_free(rf_batch *b);
/* A transaction file (one `+pred(v, ...).` or `-pred(v, ...).` a line,
** docs/TRANSACTIONS.md), read when rf_exec applies the batch; its errors
** name path:line:col. The path is copied. */
REDFOX_API int rf_batch_add_file(rf_batch *b, const char *path);
/* The same text given in memory (len bytes; -1: NUL-terminated), named
** name in messages (NULL: "<batch>"); copied before the call returns. */
REDFOX_API int rf_batch_add_text(rf_batch *b, const char *name, const char *text, int64_t len);
/* Starts reading b's transaction files that are regular files on a thread
** of b's own, and returns: the caller goes on (`redfox exec --each` reads
** the next transaction's file while the one before it runs). rf_exec with
** b then waits for the thread and uses the text read for each file that is
** still the one read (device, inode, size, modification and change times),
** and reads any other (it changed since, it could not be read: rf_exec
** reports the error) as without the read ahead. A FIFO or other file that
** is not regular is never opened ahead: its transaction reads it, in order.
** Adding to b, or freeing it, waits for the thread first. REDFOX_NOMEM:
** no memory (nothing read ahead); where the system cannot start a thread
** now, nothing is read ahead either, and REDFOX_OK: rf_exec reads the
** files. */
REDFOX_API int rf_batch_read_ahead(rf_batch *b);
/* rf_batch_read_ahead, and each file read is also parsed there for prog
** (into its base predicates' columns, on threads threads; <= 0: every
** core; at most 1024, more: REDFOX_MISUSE; at the lowest CPU priority, on Linux), so that rf_exec(db, prog, b, ...) starts with it parsed: only its
** strings are interned then, into the dictionary the transactions before
** left (the parse touches nothing of the database or the transaction
** under way), and an error of the file (a bad line: path:line:col) is
** reported by that rf_exec, as without the parse ahead. rf_exec with another
** program, or a file that changed since, parses the file itself. A parse
** serves one rf_exec. prog must stay until b is freed (or read ahead
** again); one that is not compiled from LogiQL source is read for only.
** Level 7. */
REDFOX_API int rf_batch_parse_ahead(rf_batch *b, const rf_program *prog, int threads);
/* nrows rows inserted into (deleted from) the base predicate pred, given as
** rf_database_put_rows takes them: ncols columns of types[] (REDFOX_*),
** columns[c] nrows values in its type's layout, strings as const char *
** (NUL-terminated UTF-8). Copied and checked (dates in range, strings
** valid UTF-8) before the call returns. rf_exec checks pred and the types
** against the program (an error names the column); its other errors (a key
** held by another row) are located at "<rows inserted into PRED>:R:1"
** ("deleted from"), R the row's index + 1. Inserting a row that is there,
** or deleting one that is not, changes nothing. A bad value is
** REDFOX_ERROR and a bad argument (a NULL string among them) REDFOX_MISUSE,
** as for rf_database_put_rows (rows counted from 1); rf_batch_errmsg says
** why. */
REDFOX_API int rf_batch_insert(rf_batch *b, const char *pred, int32_t ncols, const int *types, int64_t nrows,
                               const void *const *columns);
REDFOX_API int rf_batch_delete(rf_batch *b, const char *pred, int32_t ncols, const int *types, int64_t nrows,
                               const void *const *columns);
/* Why the last call on b failed ("" when it did not). Valid until the next call on b. */
REDFOX_API const char *rf_batch_errmsg(const rf_batch *b);

/* Options of rf_exec. Fill with rf_exec_options_init(&o, sizeof o), which
** sets size and the defaults, then change fields; a later version may add
** fields at the end and reads only the first `size` bytes. */
typedef struct rf_exec_options {
    size_t size;          /* set by rf_exec_options_init */
    int device;           /* REDFOX_DEVICE_* of every run; default AUTO */
    int threads;          /* CPU threads; <= 0 (default): one per core; at most 1024 (more:
                          ** REDFOX_MISUSE) */
    const char *settings; /* tuning settings "NAME=VALUE,..." as rf_run_options.settings; NULL: none */
    const char *cache_dir;/* as rf_run_options.cache_dir; NULL (default): the default folder */
    int init;             /* 1: recompute and store every derived predicate (`--init`) */
    int recompute;        /* 1: recompute the derived predicates from scratch instead of
                          ** maintaining them incrementally, to compare (`--recompute`) */
    int profile;          /* 1: rf_result_exec_profile holds how the derived predicates were
                          ** maintained and where the time went (`--profile`) */
    int profile_kernels;  /* 1: each run's kernel table, as `redfox run --profile` prints it,
                          ** to log (`--profile-kernels`) */
    int show_programs;    /* 1: the programs the transaction generates (delta rules, DRed's,
                          ** the outputs') to log (`--show-programs`) */
    rf_write_fn log;      /* where profile_kernels' and show_programs' text goes, piece by
                          ** piece as it is made (also when rf_exec then fails); its return
                          ** value is ignored. NULL (default): nowhere */
    void *log_user;       /* handed to log as is */
    double start;         /* rf_trace_clock() when the caller's work began (its compile): the
                          ** profile's "compile" and "in all" times count from it; <= 0
                          ** (default): from the call; later than the call, or NaN:
                          ** REDFOX_MISUSE */
    int incremental;      /* 1: maintain incrementally whatever the batch's size (`--incremental`);
                          ** 0 (default): a batch that changes more than an eighth of the base
                          ** predicates' stored rows recomputes what diffs would maintain (cheaper);
                          ** with init or recompute: REDFOX_MISUSE (they ask for opposite things) */
    int level4_end;       /* not read: level 4's struct ended here, padded to 8 bytes, so a
                          ** field of level 5 in that padding would be within the size a
                          ** level-4 caller passes */
    /* ---- level 5 (read only when size covers it) ---- */
    int decimal128;       /* as rf_run_options.decimal128: 1 (the init's default) totals of
                          ** decimals in the outputs come as REDFOX_DECIMAL128; 0, and a caller
                          ** compiled against level 4, as REDFOX_DECIMAL (beyond its range: an
                          ** error) */
    int level5_end;       /* not read: level 5's struct ended here (padded) */
    /* ---- level 6 (read only when size covers it) ---- */
    int async_commit;     /* 1: a commit written copy on write ends on a thread after rf_exec
                          ** returns (its files synced, its manifest written, the folder
                          ** exchanged): the transaction is committed only once rf_exec_wait(db),
                          ** or the next rf_exec on db, returns REDFOX_OK; show its outputs only
                          ** then. The next rf_exec on db starts from the state it left, in memory,
                          ** and waits for that end before its own commit; where it failed, that
                          ** rf_exec fails too, applying nothing (rf_exec_wait then says so). 0
                          ** (default): rf_exec returns once committed */
} rf_exec_options;
/* size: the caller's sizeof(rf_exec_options). */
REDFOX_API void rf_exec_options_init(rf_exec_options *o, size_t size);

/* One transaction: batch (NULL: no updates) applied to the redfox database
** db was opened on, by prog, which must be compiled from LogiQL source (a
** .rfx program keeps no rules to derive the delta rules from:
** REDFOX_MISUSE). Relations given to db in memory play no part. Another
** rf_exec or `redfox exec` on the same database, in this process or
** another, waits for this one to commit, then sees its state. On success
** *res holds the program's outputs after the transaction (with the column
** names the program gives) and what it did (rf_result_exec_*); free it
** with rf_result_free. On failure nothing was changed, *res is NULL and
** rf_errmsg(db) / rf_database_diag say why: a batch's error names its file
** (or text's name) and line and column; a folder that is not a redfox
** database is REDFOX_ERROR naming it. */
REDFOX_API int rf_exec(rf_database *db, const rf_program *prog, const rf_batch *batch, const rf_exec_options *o,
                       rf_result **res);
/* The outcome of the commit the last rf_exec on db with async_commit left
** ending on a thread (level 6), waited for where it has not ended:
** REDFOX_OK, it is committed (also when there is none); else its error
** (rf_errmsg(db) says why): the database is at the transaction before it,
** and an rf_exec after it on db failed without applying anything. Later
** rf_exec calls on db, rf_close, and any other process's transaction wait
** for that end too. With no end to wait for (none left, or a failed
** rf_exec waited for it) it changes no diagnostics: rf_errmsg(db) still
** says why the call before it failed. */
REDFOX_API int rf_exec_wait(rf_database *db);
/* What the transaction of an rf_exec result did; 0 / NULL for a result of
** rf_run. 1 when the derived predicates were maintained incrementally, 0
** when they were recomputed (rf_result_exec_why says why: a static string,
** such as the first exec of the program on the database, "--init",
** "--recompute", or what in the program prevents the delta rules). */
REDFOX_API int rf_result_exec_incremental(const rf_result *res);
REDFOX_API const char *rf_result_exec_why(const rf_result *res);
/* The base rows the batch really inserted and deleted. */
REDFOX_API int64_t rf_result_exec_inserted(const rf_result *res);
REDFOX_API int64_t rf_result_exec_deleted(const rf_result *res);
/* The program's derived predicates, in its order: i in [0,
** rf_result_exec_derived_count). rf_result_exec_derived returns predicate
** i's name and sets (each pointer may be NULL) its rows before and after
** the transaction and how its table was committed ("kept", "appended",
** "written"; static). Owned by res. */
REDFOX_API int32_t rf_result_exec_derived_count(const rf_result *res);
REDFOX_API const char *rf_result_exec_derived(const rf_result *res, int32_t i, int64_t *before, int64_t *after,
                                              const char **stored);
/* With rf_exec_options.profile: the profile's lines, exactly as `redfox
** exec --profile` prints them; NULL otherwise. Owned by res. */
REDFOX_API const char *rf_result_exec_profile(const rf_result *res);
/* ---- a run's figures (level 4) ------------------------------------------ */

/* What one run did, for a benchmark or a monitor: where it ran, where its
** time went, what it copied. Set size to sizeof(rf_run_stats) and call
** rf_result_stats: the library fills as many fields as both it and the
** caller know (a later version adds fields at the end) and sets size to
** the bytes it filled; fields past that are not touched. Strings are
** static storage. Seconds are wall time on the host. */
typedef struct rf_run_stats {
    size_t size;               /* in: the caller's sizeof; out: the bytes filled */
    const char *device;        /* "cpu" or "gpu", as rf_result_device */
    int gpu_fell_back;         /* 1: the GPU could not hold the run's data and the
                               ** run went to the CPU (device "cpu"; a warning of
                               ** the run says so) */
    int32_t rank, nranks;      /* this rank and the ranks' count (1 alone) */
    double load_seconds;       /* as rf_result_load_seconds: inputs read, and
                               ** on the GPU the device opened, the program
                               ** loaded and the inputs copied */
    double run_seconds;        /* as rf_result_run_seconds: the program itself */
    /* the load's phases (`redfox run --profile`'s "phases" line): the
    ** device opened (GPU: driver, context, pinned buffers), the program's
    ** kernels loaded, the inputs read on the host, copied to the device;
    ** and the outputs brought back to the host (on the CPU all but read
    ** are its own small setup: microseconds) */
    double device_seconds, program_seconds, read_seconds, copy_seconds, output_seconds;
    int64_t input_rows;        /* the inputs' rows read */
    int64_t input_bytes;       /* the bytes of the input columns the program reads */
    /* with rf_run_options.profile: bytes the kernels read and wrote (the
    ** columns each uses, at their stored widths, once per row it touches,
    ** and 8 bytes per row-index entry), summed over the kernels; -1
    ** without profile */
    int64_t kernel_bytes_in, kernel_bytes_out;
    int64_t cpu_fused;         /* CPU: grouped totals run (a map, its group and
                               ** reduce in one pass) */
    /* the GPU (0 on the CPU): */
    int64_t h2d_bytes, d2h_bytes; /* bytes copied host to device and back */
    int64_t gpu_peak_bytes;    /* the most device memory the run's values held at once */
    int64_t gpu_fused;         /* fused kernels run (each run of one counts) */
    int64_t gpu_memory_cap;    /* the cap on device memory (rf_run_options.gpu_memory
                               ** or the settings); 0: none */
    int64_t gpu_values_moved;  /* values moved to host memory for room under it */
    int64_t gpu_kernels_in_ranges;     /* kernels (fused kernels too) run in row ranges for room */
    int64_t gpu_kernels_in_partitions; /* group-bys and sorts run in key partitions for room */
    /* inputs kept between runs (rf_database_keep_inputs): columns found on
    ** the device from earlier runs (not copied) and copied now, with bytes */
    int64_t gpu_cache_hits, gpu_cache_misses, gpu_cache_hit_bytes, gpu_cache_miss_bytes;
} rf_run_stats;
/* Fills *out (above) with res's figures. REDFOX_MISUSE for a NULL argument
** or a size too small for device (a size not set). */
REDFOX_API int rf_result_stats(const rf_result *res, rf_run_stats *out);

/* Describes device (REDFOX_DEVICE_CPU or REDFOX_DEVICE_GPU) into text (n
** bytes, NUL-terminated, cut to fit): the GPU's name and figures ("NVIDIA
** H100 80GB HBM3 (sm_90, 132 SMs, 79 GiB, driver 13.0)") or why there is
** no usable one; the CPU's model name ("CPU" where the system does not
** say). Returns 1 when a run can use the device, 0 when not (and for
** another device number). The first call for the GPU starts its driver
** (about 0.3 s, once per process). text may be NULL when n is 0. */
REDFOX_API int rf_device_info(int device, char *text, size_t n);

/* ---- Apache Arrow C Data Interface ----------------------------------------
** The structs below are the ABI that Apache Arrow specifies
** (https://arrow.apache.org/docs/format/CDataInterface.html); any Arrow
** implementation (pyarrow, arrow-rs, DuckDB, polars, cuDF) exchanges them.
** A relation travels as a struct array ("+s") with one child per column, no
** nulls. Types: int "l" (int64; "c", "s", "i", "C", "S", "I", "L" are taken
** too, widened), float "g" (double; "f" widened), decimal "d:P,S" (decimal128;
** results come as "d:38,6"; inputs of any scale are rescaled to 6 digits
** and must fit), string "u" (utf8; "U" large utf8 taken too), bool "b",
** date "tdD" (date32). */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);
    void (*release)(struct ArrowArrayStream *);
    void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* Gives input relation name (as rf_database_put_rows names it) as an Arrow
** struct array of the schema's type. schema is borrowed (read during the
** call only). array is MOVED: on success the library owns it (array->release
** is set to NULL in the caller's struct) and releases it when the relation
** is dropped, replaced or db closed; columns of int64, double and date32
** without an offset in bytes that breaks alignment are used where they lie
** (zero-copy), the others are converted now. On failure the caller still
** owns array. A column with nulls, a string that is not UTF-8 or holds a
** NUL byte (refused as in a file) is an error naming the column and row. */
REDFOX_API int rf_database_put_arrow(rf_database *db, const char *name, const struct ArrowSchema *schema,
                                     struct ArrowArray *array);

/* The same from an Arrow stream of struct arrays (a pyarrow Table of several
** chunks): the batches' rows are copied, one after another, into one
** relation. The stream is read to its end and released (stream->release)
** whether the call succeeds or not. A stream with no batch is an error. */
REDFOX_API int rf_database_put_arrow_stream(rf_database *db, const char *name, struct ArrowArrayStream *stream);

/* Exports output i as an Arrow struct array: fills *schema and *array (the
** caller's, released by calling their release callbacks). The exported
** buffers are copies independent of res. */
REDFOX_API int rf_result_arrow(const rf_result *res, int32_t i, struct ArrowSchema *schema, struct ArrowArray *array);
/* The same as a stream of one batch (then end of stream), for
** __arrow_c_stream__. */
REDFOX_API int rf_result_arrow_stream(const rf_result *res, int32_t i, struct ArrowArrayStream *stream);

#ifdef __cplusplus
}
#endif

#endif /* REDFOX_H */
