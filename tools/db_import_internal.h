/*
** tools/db_import_internal.h: what tools/db_import.c (reading and parsing
** the text) and tools/db_import_jobs.c (the work that runs beside the
** parsing: a block's columns written, a table ended and its keys checked)
** share, and no one else needs.
*/
#ifndef RF_TOOLS_DB_IMPORT_INTERNAL_H
#define RF_TOOLS_DB_IMPORT_INTERNAL_H

#include "db_import.h"

#include "rf_db.h"
#include "rf_load.h"

#include <pthread.h>

/* Blocks whose columns are written at once, beside the parse of the next
** (tools/db_import_jobs.c). */
#define RF_IMPORT_BLOCKS_IN_FLIGHT 2

/* Whether a table's rows rise in a key's order so far (tools/db_import_order.c). */
typedef struct rf_import_order {
    const rf_type *types; /* the table's column types */
    const int32_t *cols;  /* the key's columns, in the order compared */
    int32_t ncols;        /* 0: no key to check */
    int rising;           /* every row so far above the row before it */
    int64_t rows;         /* rows compared so far */
    int64_t *num;         /* the last row's key: a number's bytes, per key column */
    char **str;           /* the last row's key: a string's bytes */
    int64_t *slen;
} rf_import_order;

void rf_import_order_init(rf_import_order *o, const rf_type *types, int32_t n, const int32_t *cols);
/* The block's rows after those before: o->rising stays 1 while each row's
** key is above the previous row's. */
rf_status rf_import_order_block(rf_import_order *o, const rf_rt_texttable *tt);
void rf_import_order_free(rf_import_order *o);

typedef struct itable {
    rf_import_table t;
    int32_t tid;
    int ended;         /* its end is started (its columns closed and its checks done by an end job) */
    int encoded;       /* its string columns' encodings are chosen */
    int64_t lines;     /* lines of text taken so far */
    int64_t rows;      /* rows taken so far */
    int64_t last_line; /* the line on which the last row taken starts */
    /* (row, line) pairs, in row order: the rows that do not start on the
    ** line after the row before's (a record before spanning lines, a
    ** header spanning lines), so that a key error names the file's line
    ** (rf_import_lines) without a line kept per row */
    int64_t (*jumps)[2];
    int64_t njumps, capjumps;
    char *path;        /* the text file, for key errors */
    rf_import_order key_order; /* the declared key, checked by row order as blocks are written */
    rf_import_order fd_order;  /* a functional dependency's key columns, the same */
    int32_t *fd_cols;  /* 0 .. nfd - 1 */
    /* other predicates reading the same file (same columns and format)
    ** whose key or functional dependency is not t's: checked too when the
    ** table ends, by grouping (a run checks each predicate's), so that the
    ** import takes no file a text run of the program refuses */
    rf_import_table *also;
    int32_t nalso;
    int64_t blocks;    /* blocks handed to the column writing so far */
    int64_t *done;     /* [ncols + 1]: per column (and the key order, last),
                          the blocks written; a block's column waits for the
                          block before's (under the importer's turn lock) */
} itable;

typedef struct rf_import_block_job rf_import_block_job;
typedef struct rf_import_end_job rf_import_end_job;

struct rf_importer {
    rf_db_writer *w;
    char *out;         /* the database's folder (the commit locks it where it replaces one) */
    int threads;
    int progress;
    int strings;       /* RF_IMPORT_STRINGS_* */
    int64_t block;     /* bytes of text parsed at a time (rf_import_text_block) */
    rf_import_times times;
    double t0, cpu0;   /* when rf_import_new ran: wall clock, process CPU */
    itable *tabs;
    int32_t n, cap;
    /* in flight, beside the parsing of the next block or table: at most
    ** RF_IMPORT_BLOCKS_IN_FLIGHT blocks' columns and one table's end, so
    ** memory holds that many blocks' columns and one more being parsed */
    rf_import_end_job *ending;   /* the previous table's end */
    rf_import_block_job *writing[RF_IMPORT_BLOCKS_IN_FLIGHT]; /* the previous blocks' columns, oldest first */
    int nwriting;
    pthread_mutex_t turn_mu;     /* guards the tables' done counts and turn_abort */
    pthread_cond_t turn_cv;
    int turn_abort;              /* a block's column failed: no later one waits for it */
    rf_status failed;            /* the first failure: every later call returns it */
    /* rf_import_carry: the database at out as it was read (its manifest's
    ** bytes, which must be the same at the commit, under the folder's lock:
    ** else the tables carried over may not be those it holds then) */
    struct rf_db *kept;
    char *kept_manifest;
    int64_t kept_len;
};

/* The file line on which each of table it's first n rows starts (malloc'd),
** or NULL where every row takes one line (row + 1, + 1 after a header) or
** memory is short. */
int64_t *rf_import_lines(const itable *it, int64_t n);

/* Seconds of CPU this thread has used. */
double rf_import_thread_cpu(void);
/* Seconds of CPU the process has used. */
double rf_import_process_cpu(void);

/* Starts writing tt's rows (a block of table it, parsed) to the database
** on a thread of its own; takes tt over (*tt is emptied). There must be
** room for it (rf_import_settle_block). Each of its columns is written once
** the block before has written that column, so every column gets its rows
** in file order while different columns of two blocks are written at once. */
rf_status rf_import_start_block(rf_importer *imp, itable *it, rf_rt_texttable *tt);
/* Starts ending table it (closing its columns, writing its dictionaries,
** checking its key and functional dependency) on a thread of its own, after
** the previous table's end is done. Its block must be done. */
rf_status rf_import_start_end(rf_importer *imp, itable *it, rf_diags *d);
/* Makes room for one more block: waits for the oldest block in flight when
** RF_IMPORT_BLOCKS_IN_FLIGHT are; its failure (diagnostics into d) or RF_OK. */
rf_status rf_import_settle_block(rf_importer *imp, rf_diags *d);
/* Waits for everything in flight: the table end first (the earlier work),
** then the blocks, oldest first. Only the first failure's diagnostics go to
** d: the same error whatever the timing. Returns it (or imp->failed, or RF_OK). */
rf_status rf_import_settle(rf_importer *imp, rf_diags *d);
/* 1 when the table end in flight has finished and failed (without waiting). */
int rf_import_end_failed(const rf_importer *imp);
/* Waits for everything in flight and drops its results (rf_import_free). */
void rf_import_abandon(rf_importer *imp);

#endif
