/*
** txn/rf_txn.h: one transaction over a redfox database: a
** batch of inserts and deletes applied to base predicates, and the
** program's derived predicates kept materialized in the database, brought
** up to date incrementally where the program allows it.
**
** Owns: the shared state of a transaction (rf_txn, one rf_txn_pred per
** predicate of the user's program that has rows: base or derived) and the
** interfaces of its parts: txn_batch.c (the batches applied, in batch
** order), txn_parse.c (a transaction file parsed in parallel into columns),
** txn_parse_ahead.c (one parsed ahead of its transaction),
** txn_kset.c (a predicate's updates resolved in bulk by key), txn_gen.c (the LogiQL programs a transaction runs: the
** materialization, the delta rules, the outputs), txn_store.c (the
** database's tables in and out), txn_publish.c (a commit's end on a thread). txn_exec.c drives them (rf_txn_exec, the
** stage's entry: `redfox exec` and rf_exec of the public API call it).
*/
#ifndef RF_TXN_H
#define RF_TXN_H

#include "rf_common.h"
#include "rf_db.h"
#include "rf_frontend.h"
#include "rf_runtime.h"

/* The namespace of the predicates a transaction's generated programs use
** (docs/LANGUAGE.md reserves it: the front end refuses it in any other
** source, rf_fe_options.txn_source). */
#define RF_TXN_NS RF_FE_TXN_NS

typedef struct rf_txn_pred {
    const rf_fe_pred *fe; /* the user's predicate */
    int32_t ncols;        /* its relations' and its table's columns: fe's arity; a predicate of no
                             columns (derived: `cyclic() <- ...`) has one, a boolean, true in the row
                             it holds when it is true (a table has at least one column) */
    rf_type *types;       /* its columns as its relations here and its table hold them: fe's types, a
                             total of decimals (a wide decimal) as a decimal, the database's 64 bits
                             (txn_store.c narrows a run's wide values into them; docs/TRANSACTIONS.md) */
    int base;             /* read from a file (lang:input): the batch changes it */
    char *table;          /* its table in the database (base: the input file name) */
    int stored;           /* derived: the database held it before this transaction, computed from the
                             base data it holds now (a table of other base data is not read: below) */
    int unread;           /* derived: its table is in the database but was not read (--init or
                             --recompute, or computed from other base data); rows_before is its rows */
    rf_rt_rel cur;        /* before the batch (owned columns, or the database's mapped column files:
                             maps; free it with rf_txn_cur_free) */
    rf_db_map *maps;      /* by column of cur, read from the database: its mapping (addr NULL: none) */
    rf_rt_rel next;       /* after it (owned; empty until computed) */
    rf_rt_rel ins, del;   /* base: the rows the batch really added and removed (owned) */
    int64_t replaced;     /* base: the keys (lang:input:key, a functional predicate's) whose stored row
                             the batch replaced: a row of del and one of ins each, one change of a
                             row (the switch to recomputing counts it once; txn_kset.c) */
    rf_rt_rel mid;        /* base: cur without the deleted rows (DRed's state between its phases) */
    int64_t rows_before;  /* rows of cur as read (for --profile) */
    int64_t prefix;       /* the first rows of the new state (next, else cur) that are the stored
                             table's, in its order: the commit appends only the rest (0: none) */
    const char *stored_how; /* after the commit: "kept", "appended" or "written" (--profile) */
    int has_next;
    int tail;             /* the new state is cur followed by ins, not copied into next (a base
                             predicate after an insert-only batch; a derived one after the delta
                             rules' new facts): the commit appends ins; a run that reads the whole
                             state copies it into next then (txn_exec.c) */
    int changed;          /* ins or del non-empty (derived: may change) */
    const char *how;      /* derived, maintained by diffs: how (--profile; static) */
    struct rf_txn_ops *ops; /* base: the batches' updates of it (txn_parse.c), NULL until named */
    /* kept between transactions (txn_resident.c): cur's columns are the
    ** kept relation's (borrowed: rf_txn_cur_free frees only cur.cols), named
    ** for the devices' copies by stamps (rf_rt_cache_put_stamped; NULL:
    ** none); view: where the new state is cur then ins, the kept columns
    ** holding ins in their room past cur's rows (has_view), never copied */
    int borrowed;
    const uint64_t *stamps;
    rf_rt_rel view;
    int has_view;
    /* cur's first inc_rows rows are strictly increasing on column inc_col
    ** (txn_kset.c checked them; kept between transactions, so that a
    ** history's ids are checked once, not every transaction); 0: none known */
    int32_t inc_col;
    int64_t inc_rows;
} rf_txn_pred;

typedef struct rf_txn {
    const rf_fe_program *fe;
    const rf_hir_program *user; /* fe lowered: its inputs' keys and dependencies, checked over the stored rows */
    const char *source_hash; /* 16 hex digits of the program's text: names its derived tables */
    rf_txn_pred *preds;
    int32_t npreds;
    rf_rt_dict *dict;        /* every string of every relation above */
    int threads;
    int fresh;               /* --init or --recompute: the derived tables are not read (written anew) */
    int stale;               /* the derived tables in the database were computed from other base data
                                (another program, or another version of this one, changed it since) */
    int all_changed;         /* txn_gen.c: generate as if the batch changed every base predicate
                                (the programs prepared ahead: rf_txn_gen_delta, rf_txn_gen_dred) */
    int32_t ahead_base;      /* txn_gen_diff.c: > 0: generate as if the batch only inserted into base
                                pred ahead_base - 1 (the diff programs prepared ahead) */
    /* for --profile: the tables read (column bytes; seconds mapping and
    ** checking their CRC-32Cs, seconds copying them out), and the commit's
    ** rows and column bytes written (carried-over rows not counted) */
    int64_t read_bytes, commit_rows, commit_bytes;
    int commit_in_place;             /* the commit appended to the database's files in place */
    char *commit_manifest;           /* the manifest the commit wrote (rf_db_writer_manifest; owned) */
    int64_t commit_manifest_len;
    int64_t commit_in_place_bytes;   /* ... this many bytes */
    int64_t commit_linked_bytes;     /* copy on write: the old rows of tables that only gained rows, in their old files */
    int64_t commit_copied_bytes;     /* ... in copies of them (another folder shares a file, no links) */
    int commit_threads;              /* the threads that wrote the commit's columns */
    double read_check_seconds, read_copy_seconds;
    void *batches;           /* txn_batch.c's state while batches are applied */
    double t_read, t_parse, t_resolve; /* the batches' files read, parsed, resolved (s, --profile) */
    int32_t read_ahead_files, read_ahead_stale; /* files used as read ahead (rf_txn_read_ahead), and those read
                                         again since they changed after (--profile) */
    int64_t read_ahead_bytes;         /* ... the bytes of those used */
    double read_ahead_seconds;        /* ... their reads' time on the reading thread (s) */
    int32_t parse_ahead_files;        /* files parsed ahead (rf_txn_parse_ahead) and taken */
    double parse_ahead_seconds;       /* ... their parses' time on that thread (s) */
} rf_txn;

/* Frees p's cur: its own columns, or the mappings of the database's. */
void rf_txn_cur_free(rf_txn_pred *p);
/* The rows of p's state after the transaction (next, else cur, and the tail). */
int64_t rf_txn_pred_rows(const rf_txn_pred *p);

/* The pred of that fe predicate, or NULL. */
rf_txn_pred *rf_txn_find(rf_txn *t, const rf_fe_pred *p);

/* ---- txn_batch.c ------------------------------------------------------- */

typedef struct rf_txn_parsed rf_txn_parsed; /* (txn_parse_ahead.c) */

/* Reads the transaction file path (docs/LANGUAGE.md "Transactions": one
** `+pred(v, ...)` or `-pred(v, ...)` a line) and applies it, in order after
** the batches before it, to the base predicates' next relations (set from
** cur on first use). Errors name path:line:col: an unknown or derived
** predicate, a wrong number of values, a value not of its column's type, a
** key (lang:input:key, or a functional predicate's keys) held by another
** row. text: the batch's text (len bytes), named path in messages; NULL:
** the file at path is read. borrowed: text is NUL-terminated and stays
** until the transaction ends, so it is parsed in place; else it is copied.
** parsed (NULL: none): text parsed ahead (rf_txn_parse_ahead), taken where
** it is usable (else text is parsed now); borrowed then. */
rf_status rf_txn_batch_apply(rf_txn *t, const char *path, const char *text, int64_t len, int borrowed,
                             rf_txn_parsed *parsed, rf_diags *d);
/* A copy (NUL-terminated, *len bytes; free it) of the text of t's batch
** file (the file-th rf_txn_batch_apply), before rf_txn_batch_finish: what a
** transaction done again applies, where the file (standard input, a FIFO)
** cannot be read twice. */
rf_status rf_txn_batch_copy_text(const rf_txn *t, int32_t file, char **text, int64_t *len);
/* After every batch: each base predicate's next, ins and del. */
rf_status rf_txn_batch_finish(rf_txn *t, rf_diags *d);
/* Frees what the batches left (after an error; finish frees it too). */
void rf_txn_batch_free(rf_txn *t);

/* A transaction file read ahead of its transaction, on another thread
** while the transaction before it runs (`exec --each`), and what named its
** bytes then: it stands for the file only while the file is still that one. */
typedef struct rf_txn_read_ahead {
    char *text;     /* owned, NUL-terminated; NULL: not read (not a regular file, or it could not be
                       read: the transaction reads it in order, and reports its error) */
    int64_t len;
    double seconds; /* the read's time on its thread */
    uint64_t dev, ino;
    int64_t size, mtime_ns, ctime_ns;
} rf_txn_read_ahead;
/* Reads the file at path into ra when it is a regular file that does not
** change while it is read (else ra->text stays NULL); never opens another
** kind (a FIFO is read by its transaction, in order). */
void rf_txn_batch_read_ahead(const char *path, rf_txn_read_ahead *ra);
/* Whether the file at path is still the one ra read (device, inode, size,
** modification and change times): else it changed since, to be read again. */
int rf_txn_batch_read_ahead_current(const char *path, const rf_txn_read_ahead *ra);
void rf_txn_read_ahead_free(rf_txn_read_ahead *ra);

/* ---- txn_parse_ahead.c ------------------------------------------------- */

/* rf_txn_parsed: a transaction file parsed ahead of its transaction, for one program. */
/* Whether the transaction keeps an rf_txn_pred for q (one that has rows:
** base, or derived by rules of its own); the order of t->preds is fe's. */
int rf_txn_pred_has_rows(const rf_fe_pred *q);
/* Parses text (len bytes, NUL-terminated; the file-th part of its batch)
** into each base predicate's updates for program fe, on threads threads
** (<= 0: every core), touching nothing but the text and fe: no dictionary,
** no database. NULL where it could not (out of memory): the transaction
** then parses the file itself. text must stay while the result is used. */
rf_txn_parsed *rf_txn_parse_ahead(const rf_fe_program *fe, int threads, int32_t file, const char *text, int64_t len);
void rf_txn_parsed_free(rf_txn_parsed *pp);
/* The parse's time on its thread (s). */
double rf_txn_parsed_seconds(const rf_txn_parsed *pp);
/* Whether t (its program, its preds) may take pp as its file-th batch, and
** pp was not taken yet. */
int rf_txn_parsed_usable(const rf_txn_parsed *pp, const rf_txn *t, int32_t file);
/* Appends pp's updates to t's (after those of the batches before it) and
** interns its strings into t->dict, in file order; *bad: the byte offset
** of its first bad line (its updates before it taken), -1 none. Once. */
rf_status rf_txn_parsed_take(rf_txn *t, rf_txn_parsed *pp, int64_t *bad);

/* ---- txn_parse.c ------------------------------------------------------ */

/* One base predicate's updates, over every batch, in batch order (the
** order of their index): the facts as typed columns (strings as codes of
** t->dict), insert (1) or delete (0), and where each stands (the batch's
** index, the byte offset of its '+' or '-' in that file). */
typedef struct rf_txn_ops {
    int64_t n, cap;
    int32_t ncols;
    int32_t width;          /* bytes of a fact as a packed record (the parser's) */
    int32_t off[RF_DB_MAX_COLS];
    void **cols;            /* ncols arrays of cap values */
    uint8_t *insert;
    int32_t *file;
    int64_t *at;
} rf_txn_ops;

void rf_txn_ops_free(rf_txn_ops *o);

/* Parses batch number file (path, its text) on the pool's threads, in
** chunks cut at line starts, appending its updates to the base predicates'
** ops. A bad line: the updates before it are appended, *bad is the byte
** offset of its start and RF_EUSER is returned with no message yet
** (rf_txn_parse_report gives it). Other failures: RF_ENOMEM. */
struct rf_cpu_pool;
rf_status rf_txn_parse(rf_txn *t, struct rf_cpu_pool *pool, int32_t file, const char *path, const char *text,
                       int64_t len, int64_t *bad, rf_diags *d);
/* A parse's strings waiting for their codes (rf_txn_parse_pending). */
typedef struct rf_txn_strings rf_txn_strings;
/* rf_txn_parse, its strings left uninterned (*strings, the caller's to
** intern and free; set also with RF_EUSER, for the lines before the bad
** one): what a parse ahead of its transaction does, which may not touch
** the dictionary while the transaction before it runs. */
rf_status rf_txn_parse_pending(rf_txn *t, struct rf_cpu_pool *pool, int32_t file, const char *text, int64_t len,
                               int64_t *bad, rf_txn_strings **strings);
/* Interns s's strings into t->dict in file order (the codes a line-by-line
** reading gives) and writes them into t's ops: a string of predicate p's
** op i goes to op first[p] + i (first NULL: i). */
rf_status rf_txn_strings_intern(rf_txn *t, const rf_txn_strings *s, const int64_t *first);
void rf_txn_strings_free(rf_txn_strings *s);
/* Appends *from (another parse's ops of p's predicate) to p's ops: moved,
** *from set to NULL, where p has none yet; else copied. */
rf_status rf_txn_ops_take(rf_txn_pred *p, rf_txn_ops **from);
/* The message of the bad line at byte offset bad (path:line:col). */
rf_status rf_txn_parse_report(rf_txn *t, const char *path, const char *text, int64_t len, int64_t bad, rf_diags *d);
/* The line and column (from 1) of byte offset at of text (line 1's
** columns counted after a byte order mark). */
void rf_txn_text_pos(const char *text, int64_t at, int64_t *line, int32_t *col);
/* 3 where text (len bytes) starts with a UTF-8 byte order mark, which a
** transaction file may (an editor's), else 0: skipped by the parse. */
int64_t rf_txn_bom_len(const char *text, int64_t len);

/* ---- txn_kset.c ------------------------------------------------------- */

/* An insert that found its key held by another row. */
typedef struct rf_txn_violation {
    int64_t op;      /* its index among the predicate's ops; -1: none */
    int32_t key;     /* 0: lang:input:key, 1: the functional predicate's keys */
    int holder_old;  /* the holder is a row of the database (else an earlier insert) */
} rf_txn_violation;

/* Resolves p's ops against p->cur in bulk (GPUTx's k-sets): the updates
** grouped by key, each key's in batch order, the keys in parallel. Sets
** p's next, ins, del, has_next, tail, changed and prefix (where no stored
** row is deleted or repeated: tail, the new state cur then ins, next left
** empty); or, when an insert
** finds its key held, *v (the earliest such insert) and RF_EUSER, p
** unchanged. */
rf_status rf_txn_kset_resolve(rf_txn_pred *p, struct rf_cpu_pool *pool, rf_txn_violation *v);

/* ---- txn_gen.c -------------------------------------------------------- */

/* Why the program's derived predicates cannot be maintained by delta rules
** (negation, aggregation, ...; a static string), or NULL when they can. */
const char *rf_txn_gen_incremental_why_not(const rf_fe_program *p);
/* The same reason in the words for a program with recursion, which only the
** delta rules maintain ("a recursive predicate beside negation ..."), or
** NULL where they can. */
const char *rf_txn_gen_recursion_why_not(const rf_fe_program *p);
/* Appends to out a program text that, added to the user's program, outputs
** every derived predicate P as `redfox_txn_mat:P`. */
void rf_txn_gen_materialize(const rf_txn *t, rf_buf *out);
/* A program computing `redfox_txn_d:P`, the new facts of each derived P,
** from `redfox_txn_old:Q` (every predicate before the batch) and
** `redfox_txn_ins:B` (the rows the batch added to base B): the semi-naive
** delta rules, the stored relation as the full one. Insertions only. */
void rf_txn_gen_delta(const rf_txn *t, rf_buf *out);
/* Deletions by DRed: a program computing `redfox_txn_cur:P`, each derived
** P after the batch's deletes, from `redfox_txn_old:Q`, `redfox_txn_del:B`
** (the rows deleted from base B) and `redfox_txn_mid:B` (B without them):
** the facts with a derivation reading a deleted fact are over-deleted
** (`redfox_txn_od:P`, through the delta rules), then those the remaining
** facts still derive are derived again. Sets each derived pred's changed. */
void rf_txn_gen_dred(const rf_txn *t, rf_buf *out);
/* A program that reads `redfox_txn_out:Q` (each output predicate's rows
** after the batch) and outputs it as the user's program does (name, order,
** limit). */
void rf_txn_gen_outputs(const rf_txn *t, rf_buf *out);
/* The file name under which generated input `NS:P` is handed to a run. */
char *rf_txn_gen_input_file(const char *ns, const rf_fe_pred *p);
/* The printing shared by the generators: `NS:P` (ns NULL: P); an
** expression of rule r; `NS:P(c0, ...) -> type(c0), ...` (non-functional);
** that declaration as an input handed from memory. */
void rf_txn_gen_pred_name(const char *ns, const rf_fe_pred *p, rf_buf *b);
void rf_txn_gen_expr(const rf_fe_rule *r, const rf_fe_expr *e, rf_buf *b);
void rf_txn_gen_declare(const char *ns, const rf_fe_pred *p, rf_buf *b);
void rf_txn_gen_input(const char *ns, const rf_fe_pred *p, rf_buf *b);
/* `redfox_txn_old:Q` declared as an input for each predicate Q that a rule
** of the program reads and that has no rows (declared, with no rules, facts
** or lang:input: always empty; the transaction keeps no rf_txn_pred for it),
** so that the generated rules can read it; the run is handed it empty
** (txn_exec.c). */
void rf_txn_gen_empty_inputs(const rf_txn *t, rf_buf *out);
/* A comment saying that the generated rules after it come from the user's
** rule r (`// from rule N (FILE:LINE:COL)`, N its index in t->fe's rules),
** or (r NULL) from none: so that a run-time error in them names r
** (rf_txn_gen_origin_at), as a run of the user's program does. */
void rf_txn_gen_origin(const rf_txn *t, const rf_fe_rule *r, rf_buf *b);
/* The user's rule that line `line` (from 1) of generated text comes from,
** by the comments above it; NULL: none. */
const rf_fe_rule *rf_txn_gen_origin_at(const rf_txn *t, const char *text, int64_t len, int32_t line);
/* A comment saying that the declaration after it checks the functional
** dependency of the user's predicate p (`// the functional dependency of
** predicate N (FILE:LINE:COL)`, N its index in t->fe's predicates), so that
** a violation names p where a run of the user's program names it (p's
** declaration, or its first appearance), not the generated text; and the
** predicate that line `line` of generated text checks so, or NULL. */
void rf_txn_gen_pred_origin(const rf_txn *t, const rf_fe_pred *p, rf_buf *b);
const rf_fe_pred *rf_txn_gen_pred_origin_at(const rf_txn *t, const char *text, int64_t len, int32_t line);

/* ---- txn_gen_diff.c ---------------------------------------------------- */

/* Why the program's derived predicates cannot be maintained by diffs
** (a recursive predicate, a float total, ...; a static string), or NULL. */
const char *rf_txn_gen_diff_why_not(const rf_fe_program *p);
/* The diff program: from `redfox_txn_old:Q` (every predicate before the
** batch), `redfox_txn_new:B`, `redfox_txn_ins:B` and `redfox_txn_del:B`
** (each changed base B after the batch, its added and removed rows), it
** outputs, for each derived P the batch may change, `redfox_txn_k.P`, the
** keys its changes reach, and `redfox_txn_part.P`, its rows after the batch
** for those keys (a total or count from the old value and the batch's rows
** alone); P's rows of other keys stay (rf_txn_merge_keys). Sets each
** derived pred's changed and how. */
void rf_txn_gen_diff(rf_txn *t, rf_buf *out);

/* ---- txn_merge.c ------------------------------------------------------ */

/* *out (owned) = the rows of old whose key (first nkey columns; none: the
** one key, reached when keys has a row) is not a row of keys, in order,
** then part's rows. */
rf_status rf_txn_merge_keys(const rf_rt_rel *old, int32_t nkey, const rf_rt_rel *keys, const rf_rt_rel *part,
                            rf_rt_rel *out);

/* ---- txn_store.c ------------------------------------------------------ */

/* The type a database's column holds for a predicate's column of type t: t,
** or decimal for the wide decimal. */
rf_type rf_txn_store_type(rf_type t);
/* r (a run's output, to become p's rows, or its keys; owned), whose first
** ncols columns are p's, in p's stored types: a wide decimal column
** narrowed in place to decimal; a value beyond decimal's range is "decimal
** out of range", naming p and the column, never a wrong value (a float's
** inf, -inf and NaN are stored as they are). Any other difference of types
** is an internal error. */
rf_status rf_txn_store_narrow(const rf_txn_pred *p, rf_rt_rel *r, int32_t ncols, rf_diags *d);
/* r (an output of a generated program: stored types; owned) in the user's
** types: a decimal column the user's program has wide is widened. */
rf_status rf_txn_store_widen(rf_rt_rel *r, const rf_type *user_types, rf_diags *d);

/* The derived table name of p in t ("derived.HASH.NAME"). */
char *rf_txn_store_table_name(const rf_txn *t, const rf_fe_pred *p);
/* Reads every base table and every stored derived table of t's program
** from db into cur (strings into t->dict; numeric columns mapped, not
** copied: db's files must stay until the transaction ends). A base table missing or of
** other columns is an error naming the manifest. The derived tables are
** read only where the program's stamp (the table "derived.HASH": the base
** tables' state its last commit left, its derived tables computed from it,
** its keys and dependencies checked over it; its last row) matches the base
** tables db holds, and t->fresh is not set; else they are left unread
** (p->stored 0, p->unread where one exists; t->stale where the stamp did
** not match), to be computed again, and the keys and functional
** dependencies the program declares on its base predicates are checked
** over their stored rows (an error naming the manifest and the rows, as a
** run's). */
rf_status rf_txn_store_load(rf_txn *t, const rf_db *db, rf_diags *d);
/* Writes the database anew at dir: every table of db that t does not own
** copied as it is, t's base tables and derived tables from next (or cur),
** committed by an atomic exchange with the old folder. pending: NULL, or
** where a copy-on-write commit's last step (rf_db_writer_commit: the syncs,
** the manifest, the exchange; it reads nothing of t) is left, undone, for
** the caller (rf_txn_publish); NULL there when the commit went in place
** (done). */
rf_status rf_txn_store_commit(rf_txn *t, const rf_db *db, const char *dir, rf_db_writer **pending, rf_diags *d);

/* ---- txn_publish.c ----------------------------------------------------- */

/* A copy-on-write commit's last step on a thread of its own: w committed,
** the manifest it wrote kept (rf_db_writer_manifest), then w freed, db closed and
** lockfd released (all now its). */
typedef struct rf_txn_publish rf_txn_publish;
rf_status rf_txn_publish_start(rf_db_writer *w, rf_db *db, int lockfd, const char *dir, rf_txn_publish **out);
/* Waits for p's thread and frees p: its status, its errors added to d, the
** manifest it wrote (owned; NULL where it failed or memory ran out), the time waited and the step's own time (s; NULL: not wanted). */
rf_status rf_txn_publish_wait(rf_txn_publish *p, double *waited, double *seconds, char **manifest,
                              int64_t *manifest_len, rf_diags *d);

/* ---- txn_resident.c ---------------------------------------------------- */

/* The relations of one database kept between the transactions of one
** process (docs/TRANSACTIONS.md, "Between the transactions of one
** process"): after a commit, every base and derived relation of the
** program as committed, in host memory, and the input cache of the runs
** (its dictionary codes their strings; on the GPU its device part keeps
** their columns, under stamps, and the memory pool). The next transaction
** starts from them, not from the files, when the database's manifest is
** byte for byte the one that commit wrote. */
typedef struct rf_txn_resident rf_txn_resident;
rf_txn_resident *rf_txn_resident_new(void);
void rf_txn_resident_free(rf_txn_resident *r);
/* Its input cache (made on first use; NULL: out of memory). */
rf_rt_cache *rf_txn_resident_cache(rf_txn_resident *r);
/* Whether the GPU code of later transactions was compiled ahead for r's
** program in this process (set: it was, now); forgotten with the relations. */
int rf_txn_resident_prepared(rf_txn_resident *r, int set);
/* The generated program name/text (with the user's sources: with_user)
** compiled by an earlier transaction of the program of that hash, or NULL. */
rf_hir_program *rf_txn_resident_program(rf_txn_resident *r, const char *hash, const char *name, const char *text,
                                        int with_user);
/* Keeps hir, compiled from that text, for the next transactions (it and
** the arena it lives in become r's: *arena is left empty), where r has
** room; else nothing. */
void rf_txn_resident_keep_program(rf_txn_resident *r, const char *hash, const char *name, const char *text,
                                  int with_user, rf_arena *arena, rf_hir_program *hir);
/* Whether hir is one r keeps (its caller does not free it). */
int rf_txn_resident_owns_program(const rf_txn_resident *r, const rf_hir_program *hir);
/* A number for a run's pseudo data folder, unique in r's life. */
int64_t rf_txn_resident_next_run(rf_txn_resident *r);
/* When r holds the state of the database at db_dir for t's program: every
** pred's cur set to its kept relation (borrowed, with stamps, prefix, stored)
** and 1. Else 0, and r forgets what it kept (its device copies too). */
rf_status rf_txn_resident_take(rf_txn_resident *r, rf_txn *t, const char *db_dir, int *taken);
/* After the batches: each base pred whose new state is cur then ins (tail)
** gets ins written into the room past its kept rows (grown where short)
** and view set: no copy of the stored rows. */
rf_status rf_txn_resident_stage(rf_txn_resident *r, rf_txn *t);
/* After t's commit: r keeps t's new state (next moved out of t's preds) and
** the manifest that commit wrote (t->commit_manifest, taken: not the
** database's, which another exec may have replaced already). On failure r
** forgets all.
** With publishing (the commit's last step to run on a thread: handed over
** by rf_txn_resident_publish, before t's database closes), r keeps the
** state, and the manifest once that step is waited for
** (rf_txn_resident_wait_publish); meanwhile a transaction takes the state
** without the manifest's check (rf_txn_resident_take). */
rf_status rf_txn_resident_commit(rf_txn_resident *r, rf_txn *t, int publishing);
/* The thread of that step (NULL: it could not start: r forgets all). */
void rf_txn_resident_publish(rf_txn_resident *r, rf_txn_publish *p);
/* Whether the last commit's step is under way (rf_txn_resident_commit). */
int rf_txn_resident_publishing(const rf_txn_resident *r);
/* Whether r holds the state of the database at db_dir: the manifest there is
** the one its last commit wrote (waited for). */
int rf_txn_resident_current(const rf_txn_resident *r, const char *db_dir);
/* Waits for it (none: RF_OK at once): on success r reads the manifest
** it wrote, at db_dir; on failure r forgets all, and d has the error. The
** time waited and the step's own (s; NULL: not wanted). */
rf_status rf_txn_resident_wait_publish(rf_txn_resident *r, const char *db_dir, double *waited, double *seconds,
                                       rf_diags *d);
/* After a failed transaction: r stays at the last commit; rows staged past
** a kept relation's end get new stamps (a device may have copied them). */
void rf_txn_resident_abort(rf_txn_resident *r, rf_txn *t);

/* ---- shared helpers ---------------------------------------------------- */

/* Copies rows [0, n) of src's columns (widths by type) into a new owned rel. */
rf_status rf_txn_rel_copy(const rf_rt_rel *src, rf_rt_rel *dst);
/* dst = a followed by b (same types), owned. */
rf_status rf_txn_rel_concat(const rf_rt_rel *a, const rf_rt_rel *b, rf_rt_rel *dst);

/* ---- txn_exec.c --------------------------------------------------------- */

/* The user's program as its LogiQL texts (they name its derived tables,
** and a recomputation compiles them with the materialization). */
typedef struct rf_txn_sources {
    const char *const *names;
    const char *const *texts;
    const int64_t *lens;
    int32_t n;
} rf_txn_sources;

/* One part of a batch: a transaction file (text NULL: read from the file at
** name), or a text given in memory (len bytes), named name in messages. */
typedef struct rf_txn_batch_src {
    const char *name;
    const char *text;
    int64_t len;
    int borrowed;         /* text is NUL-terminated and stays until rf_txn_exec returns: parsed in place */
    const rf_txn_read_ahead *ahead; /* text is the file at name read ahead (the profile counts it) */
    int ahead_stale;      /* the file was read ahead but changed since: text is NULL, read again */
    rf_txn_parsed *parsed; /* text parsed ahead (rf_txn_parse_ahead; NULL: none): taken by the
                              transaction where usable (a transaction done again parses the text) */
} rf_txn_batch_src;

typedef struct rf_txn_exec_options {
    rf_rt_options rt;    /* device, threads, tuning of every run (cache, data_dir and profile: the transaction's) */
    int init;            /* recompute and store every derived predicate */
    int recompute;       /* recompute the derived predicates instead of maintaining them (to compare) */
    int incremental;     /* maintain them incrementally whatever the batch's size (else a batch
                            of more than an eighth of the base predicates' stored rows
                            recomputes what diffs would maintain: cheaper, measured) */
    int profile;         /* the profile's text into the report */
    int profile_kernels; /* each run's kernel table to log */
    int show_programs;   /* the generated programs' text to log */
    double read_ahead_wait; /* the time the caller waited for the batch's files read ahead (s; profile) */
    int async_commit;    /* with a resident: a copy-on-write commit's last step (its syncs, manifest and
                            exchange) left under way on a thread when rf_txn_exec returns
                            (rf_txn_resident_wait_publish); the next transaction runs from the state
                            kept meanwhile and waits for it before its own commit */
    double start;        /* rf_now() when the caller's work began (its compile): the profile's
                            "compile" and "in all" count from it; <= 0: when rf_txn_exec starts */
    void (*log)(void *user, const char *text, int64_t len); /* show_programs' and profile_kernels' text
                                                              as it is made; NULL: none */
    void *log_user;
} rf_txn_exec_options;

/* A derived predicate after the transaction. */
typedef struct rf_txn_derived {
    char *name;
    int64_t before, after; /* its rows before and after */
    const char *stored;    /* how its table was committed: "kept", "appended", "written" (static); NULL: none */
    const char *how;       /* maintained by diffs: how (a total or count kept, or recomputed for the keys the
                              batch reaches; static); NULL: otherwise */
} rf_txn_derived;

/* What a transaction did. */
typedef struct rf_txn_report {
    const char *why;        /* why the derived predicates were recomputed (static); NULL: maintained incrementally */
    int64_t inserted, deleted; /* base rows the batch really added and removed */
    int64_t replaced;       /* ... of which a key's row replaced (one row of each; rf_txn_pred.replaced) */
    const char *device;     /* where the last run ran (static); NULL: no run */
    rf_txn_derived *derived;
    int32_t nderived;
    rf_buf profile;         /* with the profile option: its lines, as `redfox exec --profile` prints them */
    int previous_failed;    /* (also on failure) the transaction failed because the last one's commit,
                               ending on a thread (async_commit), failed: neither is committed */
} rf_txn_report;
void rf_txn_report_free(rf_txn_report *r);

/* One transaction: the database at db_dir (locked meanwhile; not one: an
** error naming it) read, the batches applied in order, the derived
** predicates maintained, the outputs computed, the new state committed;
** all or nothing. fe and user are the user's program compiled from src
** (checked, and lowered: its output variables name *out's columns). On
** success *out holds the outputs after the transaction (NULL when the
** program has none; it owns its dictionary, free with rf_rt_result_free)
** and *rep (initialized by the caller, rf_buf_init of profile) what was
** done. Errors: in d, with their locations (a batch's file:line:col, the
** database's folder). */
/* resident: NULL, or the relations kept from the last transaction on
** db_dir in this process (rf_txn_resident): the transaction starts from
** them where they are still the database's, and leaves its own there.
** Where the last one's commit still ends on a thread (o->async_commit), this
** one runs from its state meanwhile, waits for that end before its own
** commit (its failure fails this one too: rep->previous_failed), and is done
** again from the files where another process committed between. With
** o->async_commit, this one's copy-on-write commit may end on a thread in
** turn (rf_txn_resident_wait_publish). */
rf_status rf_txn_exec(const rf_txn_sources *src, const rf_fe_program *fe, const rf_hir_program *user,
                      const char *db_dir, const rf_txn_batch_src *batches, int32_t nbatches,
                      const rf_txn_exec_options *o, rf_txn_resident *resident, rf_rt_result **out,
                      rf_txn_report *rep, rf_diags *d);

#endif
