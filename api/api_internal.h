/*
** api/api_internal.h: what the files of libredfox (api/) share: the
** objects behind the public handles of include/redfox.h.
**
** Owns: the layout of rf_database, rf_program and rf_result, the relations
** given in memory (api_table) and the diagnostics copied out of a call
** (api_diags). Nothing here is public: libredfox exports only the functions
** redfox.h declares (api/redfox.map).
*/
#ifndef RF_API_INTERNAL_H
#define RF_API_INTERNAL_H

#include "redfox.h"
#include "rf_common.h"
#include "rf_harmony.h"
#include "rf_runtime.h"
#include "rf_rt_trace.h"

/* A call's diagnostics as the public records, strings owned. */
typedef struct api_diags {
    rf_diagnostic *items;
    int64_t n;
    char *errmsg; /* the first error, "file:line:col: message"; NULL: "" */
} api_diags;
/* Replaces *a with copies of d's diagnostics; RF_ENOMEM when they do not fit. */
rf_status api_diags_set(api_diags *a, const rf_diags *d);
/* One error without a location (a misuse, no memory). */
void api_diags_error(api_diags *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void api_diags_clear(api_diags *a);
const char *api_diags_errmsg(const api_diags *a);
/* rf_status -> REDFOX_* */
int api_code(rf_status st);

/* The most CPU threads a run, a transaction or a parse ahead takes, as the
** tools' --threads: more is a bad argument (REDFOX_MISUSE), not a run that
** fails starting them ("out of memory"). */
#define API_MAX_THREADS 1024

/* One column of a relation given in memory: values at the runtime's layout
** (rf_rt_data.h), or strings as offsets into bytes (string i is
** bytes[off[i] .. off[i+1])). owned: data, off and bytes are the table's to
** free; else they point into the table's Arrow array. */
typedef struct api_column {
    int type; /* REDFOX_* */
    void *data;
    int64_t *off;
    const char *bytes;
    int owned_data, owned_bytes;
} api_column;

typedef struct api_table {
    char *name;
    int32_t ncols;
    int64_t nrows;
    api_column *cols;
    struct ArrowArray arrow; /* moved in by rf_database_put_arrow; release NULL: none */
} api_table;
void api_table_free(api_table *t);
/* Adds t to db under its name (replacing one of that name); takes t's contents. */
rf_status api_database_add(rf_database *db, api_table *t);
/* Forgets db's kept inputs (rf_database_keep_inputs): a relation was given
** or dropped, or a transaction through db committed a new state. */
void api_forget_kept(rf_database *db);

struct rf_database {
    char *dir;
    /* rf_exec: dir as its transactions name the database: where dir's last
    ** component is "." or "..", the folder's absolute path, found once (a
    ** copy-on-write commit cannot exchange "." away, and the process's
    ** working folder is the old state after it); else dir. NULL: not yet */
    char *exec_dir;
    api_diags diags;
    api_table *tables;
    int32_t ntables, cap;
    /* rf_database_keep_inputs: the inputs runs read (files, and the
    ** relations above coded in its dictionary), kept for the next runs;
    ** forgotten whenever a relation is given or dropped (it borrows their
    ** columns), and whenever a transaction through this handle commits
    ** (rf_exec: the files it read change) */
    int keep_inputs;
    rf_rt_cache *kept;
    /* rf_exec: the relations the last transaction committed, kept in memory
    ** for the next one on this handle (txn/txn_resident.c; NULL: none yet) */
    struct rf_txn_resident *resident;
    /* rf_exec with async_commit: the outcome of the last commit left ending
    ** (rf_exec_wait) once known: REDFOX_OK, or its error */
    int async_status;
};

struct rf_program {
    rf_arena arena;        /* the front end's data */
    /* the compiler's forms, for rf_program_dump: ast and fe live in arena
    ** (NULL when not made: a .rfx program, a compile stopped before) */
    struct rf_ast_program *ast;
    struct rf_fe_program *fe;
    struct rf_qp_program *qp; /* owned; NULL when not made */
    int stage;             /* REDFOX_STAGE_* the compile stopped after */
    rf_hir_program *hir;   /* NULL when the compile failed or stopped before Harmony */
    rf_buf ptx0;           /* a .rfx file's GPU code, else empty */
    rf_buf gpln;           /* a .rfx file's GPU kernel and fusion plans, else empty */
    const char *rfx_name;  /* the .rfx file's name (in arena), else NULL */
    api_diags diags;
    /* the LogiQL texts compiled (in arena; names: the names given), for
    ** rf_exec; nsrc 0: none (a .rfx program) */
    const char *const *src_names;
    const char **src_texts;
    int64_t *src_lens;
    int32_t nsrc;
    int32_t *inputs, *outputs; /* variable ids */
    int32_t ninputs, noutputs;
};

typedef struct api_output {
    char *name;
    int32_t ncols;
    rf_type *types;
    char **colnames;
} api_output;

struct rf_txn_report;
struct rf_result {
    rf_rt_result *rr;      /* its outputs' rel.types point into outs[i].types */
    api_output *outs;
    struct rf_txn_report *exec; /* a result of rf_exec: what its transaction did; NULL: of rf_run */
};
/* Takes rr: a result of its outputs (names, types, column names copied). */
rf_status api_result_new(rf_rt_result *rr, rf_result **out);
/* Wide decimal columns (RF_TYPE_DEC128) narrowed to decimal for a caller
** older than level 5; RF_EUSER with an error in d for a value beyond
** decimal's range. */
rf_status api_result_narrow_wide(rf_result *r, rf_diags *d);
/* The settings "NAME=VALUE,NAME=VALUE" (rf_run_options.settings) into t;
** RF_EUSAGE with an error in d for a bad one. t's path settings point into
** *keep (a copy of s, or NULL), which the caller frees once t is done with. */
rf_status api_apply_settings(const char *s, rf_rt_tuning *t, char **keep, rf_diags *d);

/* The ranks of this process (rf_world_*): runtime/dist's world (NULL: one
** process alone) and the diagnostics of its start. */
typedef struct rf_rt_dist_world rf_rt_dist_world;
struct rf_world {
    rf_rt_dist_world *dist;
    int failed; /* rf_world_mpi failed, or a barrier timed out: no run with it */
    api_diags diags;
};

/* A timeline (rf_trace_*): the runtime's event log and the diagnostics
** of its last write. */
struct rf_trace {
    rf_rt_trace_log log;
    api_diags diags;
};

/* The caller's compile options, as many fields as its size covers, over
** the defaults; 0 when they were not set up by rf_compile_options_init. */
int api_compile_options(const rf_compile_options *in, rf_compile_options *o);

/* The public type of a runtime type and back (-1: none). */
int api_type_public(rf_type t);
int api_type_internal(int t, rf_type *out);
/* The same for rows a caller gives (rf_database_put_rows, rf_batch_insert,
** rf_batch_delete): NULL, or why t is not an input's type (unknown, or
** REDFOX_DECIMAL128, a type of results only), for the caller's message. */
const char *api_type_input(int t, rf_type *out);

/* Checks the values of a non-string column of type (dates in range, booleans
** 0/1, decimals not INT64_MIN; every float is a value, inf and
** NaN included, as in text inputs): 0, or the first bad row + 1. */
int64_t api_check_values(int type, const void *data, int64_t n);
/* Does a float column hold -0.0 (which reads as 0.0: a float zero has no
** sign, rf_val_float_canon)? And the copy's -0.0s made 0.0. */
int api_float_has_negzero(const double *v, int64_t n);
void api_float_canon(double *v, int64_t n);

#endif
