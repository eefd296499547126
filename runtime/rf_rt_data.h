/*
** runtime/rf_rt_data.h: the run-time data model shared by the runtime's
** modules: the string dictionary, relations (columns in memory) and index
** vectors, expression evaluation over them, and the output writer.
**
** Owns: the layout of values in memory. A relation is ncols columns of
** nrows values each; element layout by type:
**   int, decimal  int64_t (decimal scaled by 10^6)    float  double
**   wide decimal  rf_dec128 (16 bytes, scaled by 10^6: totals of decimals)
**   date          int32_t (days since 1970-01-01)     boolean uint8_t
**   string        uint32_t code into the run's rf_rt_dict
** Equal strings have equal codes (the dictionary interns), so equality,
** joins and grouping on strings are integer work; ordering compares bytes
** through the dictionary. Counts and offsets are 64-bit.
*/
#ifndef RF_RT_DATA_H
#define RF_RT_DATA_H

#include <stdio.h>

#include "rf_common.h"
#include "rf_queryplan.h"
#include "rf_value.h"

/* ---- string dictionary ---------------------------------------------- */

typedef struct rf_rt_dict rf_rt_dict;

rf_rt_dict *rf_rt_dict_new(void);
void rf_rt_dict_free(rf_rt_dict *d);
/* The code of s (added when new). Safe to call from several threads at once. */
rf_status rf_rt_dict_intern(rf_rt_dict *d, const char *s, int64_t len, uint32_t *code);
/* The bytes of a code; safe while other threads intern (storage never moves). */
const char *rf_rt_dict_str(const rf_rt_dict *d, uint32_t code, int64_t *len);
int64_t rf_rt_dict_count(const rf_rt_dict *d);
/* The running ends of codes [c0, c1) (codes a caller was given): ends[i] =
** at + the lengths of codes c0 .. c0 + i; returns ends' last (at if none). */
uint64_t rf_rt_dict_ends(const rf_rt_dict *d, int64_t c0, int64_t c1, uint64_t at, uint64_t *ends);
/* n bytes of the strings of codes c, c + 1, ... (below c1; codes a caller
** was given) one after another, from byte skip of code c's, at out. */
void rf_rt_dict_gather(const rf_rt_dict *d, int64_t c, int64_t c1, uint64_t skip, char *out, uint64_t n);
/* A new dictionary holding d's strings under the same codes (NULL: out of
** memory), for a result that outlives d's owner's next changes. */
rf_rt_dict *rf_rt_dict_copy(const rf_rt_dict *d);
/* Several ranks (runtime/dist): codes below n stand for the same strings on
** every rank (the ranks interned the same strings first, in one order, and
** compared them), so that such codes may travel as they are; 0 (the
** default): none. rf_rt_dict_prefix_hash: a hash of the first n strings in
** code order, which the ranks compare. */
void rf_rt_dict_set_shared(rf_rt_dict *d, int64_t n);
int64_t rf_rt_dict_shared(const rf_rt_dict *d);
uint64_t rf_rt_dict_prefix_hash(const rf_rt_dict *d, int64_t n);
/* -1, 0, 1: byte order of the strings behind two codes. */
int rf_rt_dict_cmp(const rf_rt_dict *d, uint32_t a, uint32_t b);
/* (added by the runtime data stage)
** 1 with *code when s is interned, else 0; never adds. Thread-safe. */
int rf_rt_dict_find(const rf_rt_dict *d, const char *s, int64_t len, uint32_t *code);
/* Interns n strings laid out as the loader stores them (string i is
** bytes[off[i] .. off[i+1]), off has n+1 entries), on up to threads threads.
** codes[i] is exactly what interning them one at a time in row order gives,
** whatever the thread count. Other threads' interns wait while it runs. */
rf_status rf_rt_dict_intern_many(rf_rt_dict *d, const int64_t *off, const char *bytes, int64_t n,
                                 uint32_t *codes, int threads);
/* Room in the hash tables for about `more` further strings, so that a
** caller about to intern many (a big column, a batch at a time) grows them
** once; best effort (where memory is short they grow as they fill). */
void rf_rt_dict_reserve(rf_rt_dict *d, int64_t more);
/* string:like(s, p) as the CPU evaluator computes it for a pattern that
** rf_rt_like_fast_ok accepts (no '_', valid UTF-8: literal pieces between
** '%' signs, found by memchr and memcmp): rf_val_like's answer, faster. */
int rf_rt_like_fast_ok(const char *p, int64_t m);
int rf_rt_like_fast(const char *s, int64_t n, const char *p, int64_t m);
/* Codes are below 2^31 (the top bit is free for evaluators' temporary
** codes); interning past this many strings, or one string of 4 GiB or more,
** fails with RF_ENOMEM. */
#define RF_RT_DICT_MAX_CODES INT64_C(0x7fffffff)

/* ---- relations and index vectors -------------------------------------- */

typedef struct rf_rt_rel {
    int64_t nrows;
    int32_t ncols;
    const rf_type *types; /* borrowed from the program */
    void **cols;          /* owned: ncols malloc'ed arrays (NULL when nrows == 0) */
} rf_rt_rel;

int rf_rt_type_width(rf_type t); /* bytes per value in memory: 8, 8, 8, 4, 1, 4, 16 */
/* Allocates columns for nrows rows (contents undefined). */
rf_status rf_rt_rel_alloc(rf_rt_rel *r, int32_t ncols, const rf_type *types, int64_t nrows);
/* Shrinks or keeps the columns at nrows rows (after a filter). */
rf_status rf_rt_rel_truncate(rf_rt_rel *r, int64_t nrows);
void rf_rt_rel_free(rf_rt_rel *r); /* frees the columns, keeps types */
/* Frees one column taken out of a relation (its slot then set to NULL by the taker). */
void rf_rt_col_free(void *col);

/* Row indices: a selection or permutation (a), join pairs (a, b), or group
** ids (a: group of each row, ngroups, first: first row of each group). */
typedef struct rf_rt_index {
    int64_t n;
    int64_t *a, *b;
    int64_t ngroups;
    int64_t *first;
} rf_rt_index;
void rf_rt_index_free(rf_rt_index *x);

/* ---- expression evaluation -------------------------------------------- */

/* One input of an expression: the relation and, optionally, which of its
** rows the r-th evaluation reads (NULL: row r itself). */
typedef struct rf_rt_side {
    const rf_rt_rel *rel;
    const int64_t *rows;
} rf_rt_side;

typedef struct rf_rt_eval_ctx {
    rf_rt_dict *dict;
    int threads;
    rf_loc loc;          /* where the expressions come from, for run-time errors */
    const char *what;    /* the kernel, for messages */
} rf_rt_eval_ctx;

/* For r in [0, n): if filter (NULL: true) holds on (side0 row, side1 row),
** appends the row of outs to *out, which is allocated here with nouts
** columns of out_types. Rows keep their order. Run-time errors (integer or
** decimal overflow, division by zero, a date out of range) go to d with
** ctx->loc and return RF_EUSER. */
rf_status rf_rt_eval_map(const rf_rt_eval_ctx *ctx, const rf_qp_expr *filter, rf_qp_expr *const *outs,
                         int32_t nouts, const rf_type *out_types, const rf_rt_side sides[2], int64_t n,
                         rf_rt_rel *out, rf_diags *d);

/* A run-time error an error pass found (rf_rt_eval_map_all). */
typedef struct rf_rt_eval_failure {
    int64_t row;  /* the evaluation (0 .. n) that failed */
    int64_t pos;  /* its row in *out; -1 where the filter failed */
    int32_t expr; /* where: -1 the filter, else the output column's expression */
    char *msg;    /* owned: what rf_rt_eval_map would say, "division by zero in 3 / 0" */
} rf_rt_eval_failure;
/* rf_rt_eval_map for an error's path: a run-time error stops nothing. Every
** row is evaluated, and each expression's first failure in a row (the
** filter's, each output's) is listed in *fails (*nfails of them, in no
** order; free with rf_rt_eval_failures_free); *out holds every row the
** filter kept, a failed output's value unspecified. RF_OK unless out of
** memory or an internal error. */
rf_status rf_rt_eval_map_all(const rf_rt_eval_ctx *ctx, const rf_qp_expr *filter, rf_qp_expr *const *outs,
                             int32_t nouts, const rf_type *out_types, const rf_rt_side sides[2], int64_t n,
                             rf_rt_rel *out, rf_rt_eval_failure **fails, int64_t *nfails, rf_diags *d);
void rf_rt_eval_failures_free(rf_rt_eval_failure *f, int64_t n);

/* ---- helpers for the runtime's modules (added by the runtime data stage) -- */


/* A fast 64-bit hash of bytes (not FNV: 8 bytes a step); the dictionary's. */
uint64_t rf_rt_hash_bytes(const char *p, int64_t n);
/* malloc for large arrays (columns, hash tables): from 4 MiB on, 2 MiB
** aligned and advised to use huge pages (unless the tuning says
** hugepages=off), which saves most of the page faults of the first touch.
** Release with free(); realloc works on it. */
void *rf_rt_alloc_big(size_t n);
/* Whether rf_rt_alloc_big advises huge pages (the tuning's hugepages; on by
** default), for the whole process. */
void rf_rt_hugepages(int on);
/* Runs fn(arg, tid) for tid in [0, nthreads) on nthreads threads, the
** calling thread being tid 0, and returns when all are done. Where a thread
** cannot be created its tid runs on the calling thread afterwards, so fn
** must not wait for other tids. nthreads is clamped to [1, 256]. */
typedef void (*rf_rt_task_fn)(void *arg, int tid);
void rf_rt_parallel(int nthreads, rf_rt_task_fn fn, void *arg);

/* One value as a diagnostic shows it (strings quoted, cut at 60 bytes). */
void rf_rt_format_value(const rf_rt_dict *dict, const rf_rt_rel *r, int32_t col, int64_t row, rf_buf *b);

/* ---- a functional dependency's clash (rt_fd_clash.c) ------------------- */

/* The functional-dependency error both devices report: pred has two values
** for the key of rows `first` and `row` (the first nkeys columns). */
void rf_rt_fd_message(const rf_rt_dict *dict, const char *pred, const rf_rt_rel *r, int32_t nkeys, int64_t first,
                      int64_t row, rf_buf *b);
/* The clash a check names, whatever the rows' order: among rows[0..n) of r
** (rows NULL: all of r's), the least key (the first nkeys columns, by
** value: ints, decimals, dates, floats as numbers, strings by their bytes)
** that has two values, *first the row of its least value and *second of
** the next; both -1 when no key has two. Host rows; columns NULL are
** alike everywhere (the GPU's held rows leave out those no kernel reads). */
rf_status rf_rt_fd_least_clash(const rf_rt_dict *dict, const rf_rt_rel *r, int32_t nkeys, const int64_t *rows,
                               int64_t n, int64_t *first, int64_t *second);
/* Appends row's key (the first nkeys columns) as bytes that compare
** (rf_rt_fd_clash_key_cmp) as the keys do by value, whatever the
** dictionary's codes: how ranks compare their clashes. */
void rf_rt_fd_clash_key(const rf_rt_dict *dict, const rf_rt_rel *r, int32_t nkeys, int64_t row, rf_buf *b);
int rf_rt_fd_clash_key_cmp(const char *a, int64_t na, const char *b, int64_t nb);
/* Reports the clash of rows first and second (rf_rt_fd_message's error at
** loc) and, unless clash is NULL, puts its key there (rf_rt_fd_clash_key,
** then a 0 byte: never empty), for the ranks' vote. RF_EUSER. */
rf_status rf_rt_fd_fail(const rf_rt_dict *dict, const char *pred, const rf_rt_rel *r, int32_t nkeys, int64_t first,
                        int64_t second, rf_loc loc, rf_diags *d, rf_buf *clash);

/* ---- an aggregate's failing group (rt_fd_clash.c) --------------------- */

/* The group an aggregate's run-time error names (an int total past the
** int range, an average or a total beyond decimal's): of every group that
** fails, the least by its key (the order of the clashes above), so that
** the CPU, the GPU and any split over ranks name one group; within that
** group, the first failure noted (the kernel's first aggregate that fails
** there, as each device notes them aggregate by aggregate). row -1: none. */
typedef struct rf_rt_agg_fail {
    int64_t row;      /* the group's row in the relation noted with */
    const char *what; /* static: "integer overflow in total()", ... */
} rf_rt_agg_fail;
#define RF_RT_AGG_FAIL_NONE {-1, NULL}
/* Notes that group row of r (its key: the first nkeys columns) fails with
** what, keeping the least group. */
void rf_rt_agg_fail_note(rf_rt_agg_fail *f, const rf_rt_dict *dict, const rf_rt_rel *r, int32_t nkeys, int64_t row,
                         const char *what);
/* Reports f's failure at loc, "aggregate: WHAT for the group (KEY, ...)"
** (without the group where nkeys is 0: one group), and, unless key is
** NULL, puts the group's key there as a clash's (rf_rt_fd_fail), for the
** ranks' vote: the least group's rank prints. RF_EUSER. */
rf_status rf_rt_agg_fail_report(const rf_rt_agg_fail *f, const rf_rt_dict *dict, const rf_rt_rel *r, int32_t nkeys,
                                rf_loc loc, rf_diags *d, rf_buf *key);

/* ---- output ----------------------------------------------------------- */

typedef enum rf_rt_format { RF_RT_FORMAT_TABLE, RF_RT_FORMAT_TBL, RF_RT_FORMAT_CSV } rf_rt_format;

/* TABLE: a header row and aligned columns (numbers right-aligned);
** TBL: '|'-separated rows under a header row, no trailing '|', no quoting;
** CSV: RFC 4180, comma-separated under a header row, fields quoted when
** they hold a comma, quote, CR or LF (rt_output.c has the details).
** Values print as rf_value.h formats them. */
/* Receives the text: 0 when all n bytes were taken, -1 on failure (the
** callback keeps the reason). */
typedef int (*rf_rt_write_fn)(void *ctx, const void *p, int64_t n);
rf_status rf_rt_write_rel_to(const rf_rt_rel *r, const char *const *colnames, const rf_rt_dict *dict,
                             rf_rt_format format, rf_rt_write_fn fn, void *ctx);
/* The same into a stdio stream, flushed; on RF_EIO errno holds the reason. */
rf_status rf_rt_write_rel(const rf_rt_rel *r, const char *const *colnames, const rf_rt_dict *dict,
                          rf_rt_format format, FILE *out);

#endif
