/*
** tools/db_import.h: turning rows of text into a redfox database (db/),
** shared by `redfox import` and `redfox tpch gen --format db`.
*/
#ifndef RF_TOOLS_DB_IMPORT_H
#define RF_TOOLS_DB_IMPORT_H

#include "rf_common.h"
#include "rf_frontend.h"
#include "rf_harmony.h"

/* One table: what a lang:input declaration says about its file. */
typedef struct rf_import_table {
    const char *file;   /* the input file name, the table's name in the database */
    const char *pred;   /* the predicate, for messages */
    int32_t ncols;
    const rf_type *types;
    const char *const *colnames;
    char delimiter;
    int header;
    int32_t nkey;       /* lang:input:key, checked before commit */
    const int32_t *key;
    int32_t nfd;        /* a functional predicate: its first nfd columns determine the rest (checked;
                        ** 0: p[] = v, at most one row); -1: not functional */
} rf_import_table;

typedef struct rf_importer rf_importer;

/* A database to be written at out; threads <= 0: one per online CPU;
** progress: a line on stderr as files are read (callers pass isatty).
** Its temporary folder (DB.tmp.PID.N) is created here and removed by
** rf_import_free unless committed; a signal handler cannot remove a folder,
** so a caller holds the signals (rf_file_hold_signals) from before this call
** to after rf_import_free, then ends by one held (rf_file_end_by_signal): a
** SIGINT, SIGTERM or SIGHUP held stops the import where its next block,
** table end or commit starts, or ends a wait for --out's lock (an error at
** out: nothing written), and one that comes during the commit lets it end. */
rf_status rf_import_new(const char *out, int threads, int progress, rf_importer **imp, rf_diags *d);
/* Rows per min/max block of the tables added from now on (a power of two). */
void rf_import_block_rows(rf_importer *imp, uint32_t rows);
/* Whether int, decimal, date and string-code columns are written narrow
** (the default; rf_db_writer_narrow). */
void rf_import_narrow(rf_importer *imp, int on);
/* How string columns are stored: RF_IMPORT_STRINGS_AUTO (the default: plain
** when a column's first rows are mostly distinct, rf_db_strings_mostly_distinct,
** else a dictionary), _DICT (always a dictionary) or _PLAIN (never one). */
enum { RF_IMPORT_STRINGS_AUTO, RF_IMPORT_STRINGS_DICT, RF_IMPORT_STRINGS_PLAIN };
void rf_import_strings(rf_importer *imp, int mode);
/* Bytes of text parsed at a time by rf_import_file (whole records: more
** where one record is longer); <= 0: the default. Memory holds about three
** blocks' columns; smaller blocks cost a pass of thread starts each. */
#define RF_IMPORT_TEXT_BLOCK (64LL << 20)
void rf_import_text_block(rf_importer *imp, int64_t bytes);
/* Adds a table; *tid numbers it. A second table of the same file must have
** the same columns (then *tid is the first's). */
rf_status rf_import_add(rf_importer *imp, const rf_import_table *t, int32_t *tid, rf_diags *d);
/* Keeps the table of that name (an input file's, "lineitem.tbl") of the
** database at the importer's out, the one the commit replaces, in the new
** database as it is (its files linked, never written again:
** rf_db_writer_table_from), in the place among the tables that this call
** takes: `tpch gen --format db --tables` keeps the tables it does not
** generate, as text keeps their .tbl files. Nothing where out is no database
** or has no such table. The commit fails, writing nothing, where another
** process changed that database meanwhile. An error where the files cannot
** be linked or the database has no block CRC-32Cs (format 1.0). */
rf_status rf_import_carry(rf_importer *imp, const char *table, rf_diags *d);
/* Whole lines of table tid's text, continuing what came before (errors name
** path with the line numbers of the whole file). The text is parsed before
** this returns; its rows are written to the database on a thread of their
** own while the caller goes on (data may be reused at once). */
rf_status rf_import_text(rf_importer *imp, int32_t tid, const char *path, const char *data, int64_t size,
                         rf_diags *d);
/* Reads path whole, a block of lines at a time, as table tid. */
rf_status rf_import_file(rf_importer *imp, int32_t tid, const char *path, rf_diags *d);
/* Ends table tid: its files are closed and its dictionaries' memory freed,
** then its key and functional dependency are checked, on a thread of its
** own while the caller goes on with the next table: a failure is returned
** by a later call (the next rf_import_text/file/end/add or the commit),
** before any of that call's own. No more rows after. */
rf_status rf_import_end(rf_importer *imp, int32_t tid, rf_diags *d);
/* Ends every table not yet ended, checks the declared keys and functional dependencies,
** and puts the database in place. */
rf_status rf_import_commit(rf_importer *imp, rf_diags *d);
/* Frees imp; without a commit, nothing is left behind. */
void rf_import_free(rf_importer *imp);
/* Where an import's time went (`import --profile`): per phase, seconds of
** wall clock and of CPU summed over its threads. The phases overlap (a
** block is parsed while the previous block's columns are written and the
** previous table's keys checked), so their walls add up to more than the
** import's. */
typedef struct rf_import_phase {
    double wall, cpu;
} rf_import_phase;
typedef struct rf_import_times {
    rf_import_phase read;    /* mapping or reading the files (wall only) */
    rf_import_phase parse;   /* the text loader; its cpu: the process's CPU that no other phase counts */
    rf_import_phase columns; /* a block's columns to the database: wall of the writing, cpu = encode + append */
    rf_import_phase encode;  /* string dictionaries (cpu only) */
    rf_import_phase append;  /* column values to their files (cpu only) */
    rf_import_phase end;     /* ending the columns: dictionaries written */
    rf_import_phase keys;    /* key and functional-dependency checks (cpu: the checking thread's alone) */
    rf_import_phase order;   /* keys compared row by row as the blocks are written (cpu only) */
    rf_import_phase cuts;    /* finding the last whole record of each block of text (the reading thread's) */
    int32_t keys_ordered;    /* keys and dependencies that held by the rows' order (nothing read back) */
    int32_t keys_grouped;    /* keys and dependencies checked by reading the columns back and grouping */
    /* the reading thread's waits (wall): for a block's columns before the
    ** next block's could start (the writing is the slower stage where this
    ** is large), and for a table's end before the next one's */
    double wait_columns, wait_end;
    rf_import_phase commit;  /* syncing every file, the manifest, the rename */
    /* the database's files: bytes written, and wall and CPU seconds (summed
    ** over the writing threads) in write calls and in starting the disk's
    ** writeback: wall well above CPU where the disk sets the pace */
    int64_t written;
    rf_import_phase write, writeback;
    double wall, cpu;        /* the whole import so far, from rf_import_new; the process's CPU */
    int64_t bytes;           /* text read */
} rf_import_times;
void rf_import_get_times(const rf_importer *imp, rf_import_times *out);

/* After an import failed with st (its diagnostics d's from count of them,
** nerrors errors, on): the error a text run over the same folder gives,
** which reads the inputs in the program's order (tabs[0..n), as
** rf_import_tables_of lists them) and stops at the first bad one. Each
** table not known good (good[i] 0: its file not yet read, or read while
** the failure came) is read again as the run reads it, in that order; the
** first that fails replaces the import's diagnostics with its own, and its
** status is returned. A stream (pipe, FIFO) that the import opened
** (opened[i] 1) was read once and is not read again; one it never reached
** is read now, as the run would. None failing: the import's stands, and
** st is returned. (tools/db_import_first.c) */
rf_status rf_import_first_error(const rf_import_table *tabs, int32_t n, const char *data, const uint8_t *good,
                                const uint8_t *opened, int threads, rf_diags *d, int64_t count, int64_t nerrors,
                                rf_status st);

/* The input tables a checked program declares (all of them, used or not),
** or, for a compiled program, those its Harmony program reads. *out is
** allocated in arena. */
rf_status rf_import_tables_of(const rf_fe_program *fe, const rf_hir_program *hir, rf_arena *arena,
                              rf_import_table **out, int32_t *n);

#endif
