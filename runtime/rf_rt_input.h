/*
** runtime/rf_rt_input.h: reading an input predicate's file (lang:input)
** into a relation, the same way for the CPU and the GPU backends.
*/
#ifndef RF_RT_INPUT_H
#define RF_RT_INPUT_H

#include "rf_cpu.h"
#include "rf_db.h"
#include "rf_harmony.h"
#include "rf_load.h"
#include "rf_rt_data.h"
#include "rf_rt_stored.h"
#include "rf_runtime.h"
#include "rf_rt_tuning.h"

/* The CPU primitives' kind of a column of type t (rf_rt_data.h's layout). */
rf_cpu_kind rf_rt_cpu_kind(rf_type t);

/* Loads path as input variable v into *out (zeroed first; empty on
** failure), interning its strings into dict, on `threads` threads; checks
** v's declared key and, for a functional predicate, its functional
** dependency (pool may be NULL: one thread). Errors name the file and
** line: bad data (the loader's), two lines with one key, or two lines with
** one key of a functional predicate and different values. Diagnostics copy
** path. */
rf_status rf_rt_load_input(const char *path, const rf_hir_var *v, rf_rt_dict *dict, rf_cpu_pool *pool, int threads,
                           rf_rt_rel *out, rf_diags *d);

/* The same, telling fn (when not NULL) how far the load is once it has
** run a second (rf_rt_load_progress). */
rf_status rf_rt_load_input_shown(const char *path, const rf_hir_var *v, rf_rt_dict *dict, rf_cpu_pool *pool,
                                 int threads, rf_rt_load_progress_fn fn, void *ctx, rf_rt_rel *out, rf_diags *d);

/* The same for a file that can be read only once (a pipe, a FIFO): its
** bytes are read into *text (*size bytes, malloc'd, the caller's to free)
** where *text is NULL, else parsed from *text as they were read, so that
** several inputs of one run reading it (other predicates, other types)
** share one reading; opening it again would wait for a writer. */
rf_status rf_rt_load_input_once(const char *path, char **text, int64_t *size, const rf_hir_var *v, rf_rt_dict *dict,
                                rf_cpu_pool *pool, int threads, rf_rt_load_progress_fn fn, void *ctx, rf_rt_rel *out,
                                rf_diags *d);

/* Where the rows a check's errors name came from (the checks' db argument):
** path's lines; a table of the database whose manifest is path (no line of
** path: the message numbers the rows); rows given from memory, path their
** name ("<rows given for PRED>"), located at their row numbers (from 1). */
#define RF_RT_ROWS_OF_FILE 0
#define RF_RT_ROWS_OF_DB 1
#define RF_RT_ROWS_GIVEN 2

/* The check of v's declared key alone, on relation r already loaded from
** path (a cached input read by a program that declares a key its first
** reader did not). db: RF_RT_ROWS_* (RF_RT_ROWS_OF_DB: path is a database's
** manifest and r a table of it, whose rows the errors number); else rows
** are path's lines. */
rf_status rf_rt_check_input_key(const char *path, int db, const rf_hir_var *v, const rf_rt_dict *dict,
                                rf_cpu_pool *pool, const rf_rt_rel *r, rf_diags *d);

/* Is v a functional predicate's input (f[keys] = value: its first nkeys
** columns determine the rest)? */
int rf_rt_input_is_functional(const rf_hir_var *v);

/* The check of v's functional dependency alone (a cached input read by a
** program whose predicate is functional where its first reader's was not). */
rf_status rf_rt_check_input_fd(const char *path, int db, const rf_hir_var *v, const rf_rt_dict *dict,
                               rf_cpu_pool *pool, const rf_rt_rel *r, rf_diags *d);

/* The loader's columns t (emptied and freed here) as input variable v's
** relation *out, strings interned into dict; *lines (when not NULL) takes
** the loader's line of each row (NULL when rows map to lines one to one). */
rf_status rf_rt_text_to_rel(const rf_hir_var *v, rf_rt_texttable *t, rf_rt_dict *dict, int threads, rf_rt_rel *out,
                            int64_t **lines);

/* The checks an input's rows need: its declared key, and its functional
** dependency when the key does not imply it. */
#define RF_RT_CHECK_KEY 1
#define RF_RT_CHECK_FD 2
int rf_rt_input_checks(const rf_hir_var *v);
/* One check (which: RF_RT_CHECK_KEY or RF_RT_CHECK_FD) of the rows of r,
** which has v's columns first (more may follow): the first row *dup that
** breaks it and the row *first it repeats (-1 when none), in r's order. */
rf_status rf_rt_input_dup(rf_cpu_pool *pool, const rf_hir_var *v, const rf_rt_rel *r, int which, int64_t *first,
                          int64_t *dup);
/* The error for that row, naming path and the rows' lines (lines[i]: row
** i's line; NULL: row i is on line i + 1, + 1 after a header); db: the
** rows of a database's table (path its manifest), lines[i] row i's number. */
void rf_rt_input_dup_error(const char *path, int db, const rf_hir_var *v, const rf_rt_dict *dict, const rf_rt_rel *r,
                           const int64_t *lines, int which, int64_t first, int64_t dup, rf_diags *d);

/* ---- from a database (rt_db_input.c) ---------------------------------- */

/* read[c] = 1 for each column c of input variable var that a kernel of p
** reads (p->vars[var]->ncols entries). */
void rf_rt_input_cols_read(const rf_hir_program *p, int32_t var, uint8_t *read);

/* The memory behind a relation read from a database: per column a mapping
** (a column file, or zero pages) or an owned array (string codes), and
** whether it holds the data (1), stands in for it (2, zero pages) or holds
** the data of some blocks only (3: blocks[c] flags them; the other rows are
** unchecked or zero and no kernel reads them, block skipping gathers only
** the flagged blocks). */
/* With keep_stored set (by the reader, for a device that widens columns
** itself: rt_inputs.c), a narrow column (int, decimal, date) is held as it
** is stored (stored[c], rf_rt_stored.h) and its relation column is NULL
** until someone widens it; columns a key or dependency check here reads
** are widened. A stored column replaced by a later read (more blocks) is
** kept until the relation is freed (retired): a selection of its blocks
** handed out earlier in the run reads its mapping. */
typedef struct rf_rt_dbcols {
    int32_t ncols;
    rf_db_map *maps;
    void **owned;
    uint8_t *loaded;
    uint8_t **blocks;
    char **like_key; /* a column read as LIKE classes (loaded 4): its patterns, as like_key() spells them */
    int keep_stored;
    rf_rt_stored **stored;
    rf_rt_stored **retired;
    int32_t nretired;
} rf_rt_dbcols;
void rf_rt_dbcols_free(rf_rt_dbcols *c);

/* Whether the codes of string column c of t (input var of p) are the same
** on every rank (rf_rt_db_intern_dicts interns them first): a
** dictionary-coded column, or a plain column whose strings take at most
** plain_bytes (the tuning's rank_plain_bytes) and that p does not read as
** LIKE classes. Moving rows of such a column sends codes, not bytes that
** each receiver interns again (q21's 1 M supplier names cost rank 0 about
** 220 ms that way at SF 100). */
int rf_rt_db_codes_shared(const rf_hir_program *p, int32_t var, const rf_db_table *t, int32_t c, int64_t plain_bytes);
/* The plain columns a dictionary already holds whole (a process's input
** cache keeps it beside its dictionary): each by "DIR/TABLE/COLUMN/CRC/SIZE"
** of its strings file, with the code past its strings. A later run's
** rf_rt_db_intern_dicts takes the code from here instead of looking its
** rows up again (4 M of them cost q02's ranks about 1 s a run at SF 100). */
typedef struct rf_rt_whole_cols {
    char **keys;
    int64_t *tops;
    int32_t n;
} rf_rt_whole_cols;
void rf_rt_whole_cols_free(rf_rt_whole_cols *w);
/* Several ranks (runtime/dist/dist_codes.c): the whole dictionary of every
** dictionary-coded string column of db that p's inputs read, interned in
** dict in code order, and every row of a plain string column no bigger than
** plain_bytes (rf_rt_db_codes_shared) in row order, input by input in p's
** order: the same strings in the same order on every rank, whatever share of
** the rows each reads. *top grows past every code they have. whole (NULL:
** none) records the plain columns interned whole into dict and serves them
** to later calls on the same dict. */
rf_status rf_rt_db_intern_dicts(const rf_db *db, const rf_hir_program *p, rf_rt_dict *dict, int threads,
                                int64_t plain_bytes, rf_rt_whole_cols *whole, int64_t *top, rf_diags *d);
/* Reads input v from db into *rel, whose columns *own holds: the columns
** want marks (NULL: all), and v's key columns when the import did not check
** v's key (which is then checked here); the others are zero pages. keep
** (NULL: all) flags the blocks of the table that will be read (block
** skipping, rf_rt_db_blocks_needed): only those are read and checked, unless
** a key or dependency must be checked here (then all). Called again on the
** same rel and own, it adds columns and blocks not yet read. Errors name
** the file: a table missing or of other types, a damaged file. defer (a
** rank's share, keep flagging its blocks): the key and dependency are not
** checked here but *defer says which need checking (rf_rt_input_checks'
** bits), and keep stands. */
/* p (NULL: none) is the program reading v: a plain string column that it
** reads only through string:like with constant patterns (rf_rt_like_only)
** is read as their classes (rf_rt_db_load_like_classes), unless a key or
** dependency is checked over it. */
rf_status rf_rt_load_input_db(const rf_db *db, const rf_hir_program *p, const rf_hir_var *v, const uint8_t *want,
                              const uint8_t *keep,
                              rf_rt_dict *dict, rf_cpu_pool *pool, int threads, rf_rt_rel *rel, rf_rt_dbcols *own,
                              int *defer, rf_diags *d);

/* Column c of t, a plain string column (no dictionary in the file), as
** codes of dict: each row of the kept blocks (keep NULL: all) interned in
** row order; the other rows' codes are 0. *out (nrows entries) is the
** caller's, released with free(). Errors name the damaged file. */
rf_status rf_rt_db_load_strings(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep, rf_rt_dict *dict,
                                int threads, uint32_t **out, rf_diags *d);

/* ---- string columns read only by LIKE (rt_db_like.c) ------------------ */

/* The most patterns a column read as LIKE classes may have (2^6 classes). */
#define RF_RT_LIKE_MAX 6

/* The distinct constant patterns (at most max, each once, pointing into p)
** of the string:like calls through which alone program p reads column c of
** input var; 0 when it reads the column any other way (an output, a key,
** a join, a group, an order, a comparison, another function, a whole row),
** not at all, or through more than max patterns. */
int32_t rf_rt_like_only(const rf_hir_program *p, int32_t var, int32_t c, const rf_fe_const **pats, int32_t max);

/* Column c of t, a plain string column that a program reads only through
** string:like with the npats patterns pats: each row of the kept blocks
** (keep NULL: all) as the code of the first row, in row order, whose string
** gives the same answer to every pattern (that row's string interned into
** dict, in the order of those first rows); the other rows' codes are 0.
** *out (nrows entries) is the caller's, released with free(). Errors name
** the damaged file. */
rf_status rf_rt_db_load_like_classes(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep,
                                     const rf_fe_const *const *pats, int32_t npats, rf_rt_dict *dict, int threads,
                                     uint32_t **out, rf_diags *d);

/* ---- block skipping (rt_db_blocks.c) ---------------------------------- */

/* The blocks of t (from table t of a database) that the program p can need
** through input variable var: *keep (t's nblocks flags, malloc'd) is NULL
** when skipping does not apply (some reader is not a map whose filter
** cannot fail and bounds an int, decimal or date column by a constant; a
** block test counts var's rows), else *nkeep blocks are flagged. */
rf_status rf_rt_db_blocks_needed(const rf_hir_program *p, int32_t var, const rf_db_table *t, uint8_t **keep,
                                 int64_t *nkeep);
/* A run's block skipping: the columns it made (freed by
** rf_rt_dbskip_free), the blocks of the database inputs it read, and how
** many of them it skipped (--profile). */
typedef struct rf_rt_dbskip {
    void **cols;
    int32_t n, cap;
    rf_rt_stored **views; /* selections of stored columns' blocks (rf_rt_stored_select) */
    int32_t nviews, capviews;
    int64_t blocks, skipped;
} rf_rt_dbskip;
void rf_rt_dbskip_free(rf_rt_dbskip *s);

/* rel holds input variable var of p, read from db (its whole table, or
** zero pages for columns no kernel reads): where the tuning's block_skip is
** on (NULL: the defaults) and blocks can go, its read columns are replaced
** by new ones of only the kept blocks' rows (owned by s) and its row count
** set to theirs. Only blocks [b0, b1) count (a rank's share; 0 and the
** table's blocks for all): rel becomes their rows (kept ones) either way.
** Counts those blocks in s. */
/* stored (NULL: none): per column, the stored column (rf_rt_stored.h) that
** stands for a NULL column of rel; a read one is replaced by a selection
** of the kept blocks (owned by s), no byte copied. */
/* kept (NULL: not wanted): the table's blocks rel holds now, one flag per
** block (malloc'd; the caller frees it), or NULL when rel is the whole
** table: what names rel's rows for a device's kept copies (rt_inputs.c). */
rf_status rf_rt_db_skip_blocks(const rf_hir_program *p, const rf_db *db, int32_t var, const rf_rt_tuning *tuning,
                               int64_t b0, int64_t b1, rf_rt_rel *rel, rf_rt_stored **stored, rf_rt_dbskip *s,
                               uint8_t **kept);

#endif
