/*
** db/rf_db.h: the redfox database, a directory of typed column files with a
** checksummed manifest (docs/DATABASE.md specifies it), written by `redfox
** import` and `redfox tpch gen --format db` and read by `--data DB`.
**
** Owns: the format (the manifest's encoding and validation, CRC-32C), the
** writer (a temporary directory renamed into place on commit, or rows
** appended to a database in place under a new manifest) and the reader
** (the manifest decoded and checked; columns and dictionaries memory-mapped
** and verified on demand). Value layouts are those of the runtime
** (runtime/rf_rt_data.h): int and decimal int64 (decimal scaled by 10^6),
** float IEEE binary64, date int32 days since 1970-01-01, boolean one byte
** 0/1, string a uint32 code into the column's own dictionary, or (a "plain"
** string column, for mostly distinct strings) a uint64 byte offset per row
** into the column's strings file. Every block of rows carries its own
** CRC-32C (format 2), so a reader verifies only the blocks it reads. A
** narrow column (format 3) stores each block of an int, decimal, date or
** string-code column at the width its values need (its minimum, a power of
** ten and 1, 2 or 4 bytes a value); readers get it back at the runtime's
** widths, decoded into memory of their own. Errors name the
** file they are about and return RF_EUSER (a damaged or foreign database),
** RF_EIO (a file that cannot be read or written) or RF_ENOMEM.
*/
#ifndef RF_DB_H
#define RF_DB_H

#include <stdint.h>

#include "rf_common.h"
#include "rf_value.h"

#define RF_DB_MANIFEST "manifest.rfdb"
#define RF_DB_MAJOR 3 /* 3.0: narrow columns (encoding 2) */
#define RF_DB_MINOR 0
#define RF_DB_MAJOR_OLDEST 1 /* 1.x: no encodings, no block checksums; still read */
#define RF_DB_BLOCK_ROWS 65536 /* rows per min/max block, as written */
#define RF_DB_MAX_COLS 4096
#define RF_DB_MAX_TABLES 65536
#define RF_DB_MAX_DICT INT64_C(0x7fffffff) /* entries of one column's dictionary */

/* CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, init and final XOR
** 0xFFFFFFFF; crc32c("123456789") = 0xE3069283. Continue a running CRC by
** passing the previous result as crc (0 to start). */
uint32_t rf_db_crc32c(uint32_t crc, const void *p, int64_t n);
/* The CRC-32C of A followed by B from crc1 = CRC(A), crc2 = CRC(B) and the
** length of B. */
uint32_t rf_db_crc32c_combine(uint32_t crc1, uint32_t crc2, int64_t len2);

/* Bytes per value of a column of type t in a column file: 8, 8, 8, 4, 1, 4. */
int rf_db_type_width(rf_type t);

/* How a column's values are stored: as the type says (a string column: codes
** into its dictionary), or a string column's strings themselves (a u64
** offset per row into its strings file). */
typedef enum rf_db_encoding { RF_DB_ENC_VALUES = 0, RF_DB_ENC_PLAIN = 1 } rf_db_encoding;
/* Bytes per row of a column in its column file (plain strings: 8); a
** narrow column's rows as readers get them. */
int rf_db_col_width(rf_type t, rf_db_encoding enc);
/* Whether a column of type t may be stored narrow: int, decimal, date, and
** a string column's dictionary codes. */
int rf_db_narrowable(rf_type t);

/* 1 when dir holds a manifest (a database, perhaps a damaged one): an
** entry of that name of any kind, a symbolic link naming nothing included. */
int rf_db_is_database(const char *dir);
/* RF_OK unless dir's manifest.rfdb is a symbolic link whose target cannot
** be reached (names nothing, a loop): then an error naming DIR/manifest.rfdb
** and the target. Such a folder is a database (rf_db_is_database) that no
** reader can read and that no writer may replace or write into: readers
** (rf_db_open) and writers (rf_db_writer_new, `run --out`) refuse it. */
rf_status rf_db_check_manifest(const char *dir, rf_diags *d);

/* ---- the decoded manifest --------------------------------------------- */

typedef struct rf_db_block {
    int64_t min, max; /* float columns: the bit patterns of doubles; plain
                      ** strings: the byte range [min, max) of the block's
                      ** strings in the strings file */
    uint32_t crc;     /* format 2: CRC-32C of the block's bytes of the column file */
    uint32_t str_crc; /* plain strings: CRC-32C of its bytes of the strings file */
    uint64_t at;      /* where its bytes start in the column file */
    uint8_t width;    /* bytes a row in the column file: the column's width, or
                      ** (a narrow column's block) 1, 2 or 4 */
    uint8_t exp;      /* narrow: value = min + stored x 10^exp (0 when width
                      ** is the column's: the values as they are) */
} rf_db_block;

typedef struct rf_db_column {
    char *name;          /* "" when the program gave none */
    rf_type type;
    rf_db_encoding enc;
    int narrow;          /* format 3, encoding byte 2: values in narrow blocks
                         ** (enc is RF_DB_ENC_VALUES) */
    char *file;          /* the column file, relative to the database */
    uint64_t size;       /* nrows * width; narrow: the blocks' bytes */
    uint32_t crc;
    char *dict_file;     /* strings only, else NULL */
    uint64_t dict_count, dict_size;
    uint32_t dict_crc;
    char *str_file;      /* plain strings only, else NULL: the strings' bytes */
    uint64_t str_size;
    uint32_t str_crc;
    int64_t nblocks;
    rf_db_block *blocks; /* per block of block_rows rows: min and max */
} rf_db_column;

typedef struct rf_db_table {
    char *name;          /* the input file name a lang:input declaration gives */
    int64_t nrows;
    uint32_t block_rows;
    int32_t ncols;
    int32_t nkey;        /* the key checked at import (lang:input:key), 0: none */
    int32_t *key;
    rf_db_column *cols;
} rf_db_table;

typedef struct rf_db {
    rf_arena arena;      /* every string and array below */
    char *dir;
    char *writer;        /* the redfox version that wrote it */
    uint16_t major, minor;
    int block_crcs;      /* format 2 on: each block has its CRC-32C */
    int32_t ntables;
    rf_db_table *tables;
    /* which state of the database this is: the manifest's size and its
    ** header's body CRC-32C (a writer that changes anything writes a new
    ** manifest; a reader that keeps columns between opens compares these) */
    int64_t manifest_size;
    uint32_t manifest_crc;
} rf_db;

/* Reads and checks dir/manifest.rfdb (header, checksums, every field; see
** docs/DATABASE.md "Validation"). Column files are not opened here. */
rf_status rf_db_open(const char *dir, rf_db **out, rf_diags *d);
/* The same for manifest bytes in memory (the fuzz target); dir names the
** database in messages and is where column files are looked for. */
rf_status rf_db_open_bytes(const char *dir, const uint8_t *data, int64_t size, rf_db **out, rf_diags *d);
void rf_db_close(rf_db *db);
/* The table of that name, or NULL. */
const rf_db_table *rf_db_find_table(const rf_db *db, const char *name);

/* ---- reading columns -------------------------------------------------- */

/* A read-only mapping of one file (or of zero pages, for an unread column). */
typedef struct rf_db_map {
    void *addr;
    uint64_t len;
} rf_db_map;
void rf_db_unmap(rf_db_map *m);

/* Maps table t's column c and checks it: the file's size, its CRC-32C, and
** that every value is one the type allows (dates 0001..9999, booleans 0/1,
** decimals not INT64_MIN, floats any bit pattern, a -0.0 read as 0.0; string codes below the
** dictionary's count). *data points at nrows values (NULL for an empty table), at the
** runtime's widths: a narrow column's blocks are decoded (by several
** threads, in the pass that checks them) into anonymous memory that m owns;
** any other column is the file itself, mapped. */
rf_status rf_db_map_column(const rf_db *db, const rf_db_table *t, int32_t c, rf_db_map *m, const void **data,
                           rf_diags *d);

/* The same, checking only the blocks keep flags (NULL: every block; format 1
** databases, without block checksums, are checked whole whatever keep says):
** rows of other blocks are mapped but unchecked, and must not be read.
** Errors name the file and the block. */
rf_status rf_db_map_column_blocks(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep,
                                  rf_db_map *m, const void **data, rf_diags *d);

/* A narrow column (col->narrow) as it is stored, for a reader that widens
** it itself (the GPU, on the device; a scan, a block at a time): maps its
** column file into m and checks the blocks keep flags (NULL: all): their
** CRC-32Cs, every stored value within its block's [min, max], and blocks
** stored at the column's width (exp 0) value by value as
** rf_db_map_column does. Nothing is widened. Block b's rows are
** bl->width bytes each (unaligned) at (const unsigned char *)m->addr +
** bl->at; row i's value is bl->min + stored_i x 10^bl->exp in the
** runtime's width, or, where bl->width is the column's (rf_db_col_width),
** the stored value itself. RF_EINTERNAL for a column that is not narrow. */
rf_status rf_db_map_column_stored(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep,
                                  rf_db_map *m, rf_diags *d);
/* 10^e (e <= 18). */
uint64_t rf_db_pow10(int e);
/* The n values of block bl (stored at src) widened into dst at the
** runtime's width: -1, or the first value stored past the block's max
** (dst then unusable). A block rf_db_map_column_stored checked widens
** with -1. */
int64_t rf_db_narrow_decode(rf_type t, const rf_db_block *bl, const unsigned char *src, int64_t n, void *dst);
/* The check of rf_db_narrow_decode without the widening, for a block
** narrower than its column (bl->width < the column's width). */
int64_t rf_db_narrow_check(const rf_db_block *bl, const unsigned char *src, int64_t n);

/* A plain string column (enc RF_DB_ENC_PLAIN): maps its column file (u64
** start offset per row, *off) and its strings file (*bytes) and checks the
** blocks keep flags (NULL: all): their CRC-32Cs, offsets in order within the
** block's byte range, the bytes valid UTF-8 with no string starting inside a
** character. Row i of block b is bytes[off[i] .. off[i + 1]), or up to the
** block's max for its last row. */
rf_status rf_db_map_strings(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep, rf_db_map *m,
                            rf_db_map *sm, const uint64_t **off, const char **bytes, rf_diags *d);

/* Maps a string column's dictionary and checks it (size, CRC-32C, offsets in
** order and within the file, each entry valid UTF-8). Entry i is
** bytes[off[i] .. off[i+1]); off has dict_count + 1 entries. */
rf_status rf_db_map_dict(const rf_db *db, const rf_db_table *t, int32_t c, rf_db_map *m, const uint64_t **off,
                         const char **bytes, rf_diags *d);

/* nbytes of zero pages, read-only, costing no memory until read: the stand-in
** for a column the program never reads. */
rf_status rf_db_map_zeros(uint64_t nbytes, rf_db_map *m);

/* len bytes of zeroed, writable anonymous memory on a 2 MiB boundary, asked
** to be huge pages (what a narrow column is widened into), owned by m
** (rf_db_unmap frees it); for a reader that widens rf_db_map_column_stored's
** blocks itself, later. RF_ENOMEM where there is none. */
rf_status rf_db_map_huge(uint64_t len, rf_db_map *m);

/* ---- writing ---------------------------------------------------------- */

typedef struct rf_db_writer rf_db_writer;

/* Starts a database that commit puts at dir: files go to a new temporary
** directory beside it (DIR.tmp.PID.N). dir must not exist, or be a database
** (replaced on commit), or an empty directory. */
rf_status rf_db_writer_new(const char *dir, const char *writer_version, rf_db_writer **out, rf_diags *d);
/* A writer that appends to database db where it is (docs/DATABASE.md
** "Appending in place"): every table of the new state is one of db's, added
** with rf_db_writer_table_from (rf_db_writer_table is refused); the new
** rows go past the old ends of the column (and plain strings) files, and
** commit syncs them, writes the new manifest aside and renames it over the
** old one. Until that rename db reads exactly as before (its manifest names
** only the old bytes, which nothing changes); a failure or a kill leaves
** at most a tail past them, which readers ignore and the next writer cuts
** off. db must have block CRC-32Cs (format 2). The caller holds the
** database's lock: two in-place writers must not meet. As rf_db_writer_new,
** it removes the temporary folders earlier writers of db left (each with
** a note in d: a writer gone, none of its files changed for ten minutes). */
rf_status rf_db_writer_in_place(const rf_db *db, const char *writer_version, rf_db_writer **out, rf_diags *d);
/* The folders a user keeps in the database's folder dir (not the
** database's: a database has no subfolders) that a writer killed by SIGKILL
** or a crash between its commit's exchange and their move into the new
** folder left in the old state's folder (DIR.tmp.PID.N, or DIR.old.PID.N where
** the system has no exchange; its process gone),
** moved back into dir, each with a note in d; one that dir now holds
** another entry of the name of, or that the system refuses to move (a
** reader without write permission), stays, with a warning naming it and
** what to do. Writers (rf_db_writer_new, rf_db_writer_in_place) call it;
** readers and `redfox exec` call it under the database's lock. */
void rf_db_recover_subfolders(const char *dir, rf_diags *d);
/* Where dir does not exist and a writer of it that is gone left it aside
** (DIR.old.PID.N: killed between its commit's two renames where the system
** has no exchange, the old state renamed aside, the new one not yet in
** place): that folder renamed back to dir, with a note in d, and the
** writer's new state (DIR.tmp.PID.N, complete but never put in place, so
** never promised) removed. The old state is the committed one: the commit
** had not ended. dir a symbolic link naming a missing folder: that folder
** (a writer reaches the database through the link and renames the folder it
** names). Waits for the folder's lock (a writer of another host
** still at it ends first). RF_OK where dir exists or nothing is aside; an
** error naming dir where it cannot put it back (no write permission: what
** to do is said) or where two such folders are aside (which to keep is
** not guessed). Readers (`run`, `tpch run`, `tpch bench`, rf_open) and
** writers (rf_db_writer_new, `redfox exec`, `run --out`) call it before
** they look at dir; the writers also remove the DIR.old.PID.N of gone
** writers whose commits ended (the new state in place). */
rf_status rf_db_restore_missing(const char *dir, rf_diags *d);
int rf_db_writer_is_in_place(const rf_db_writer *w);
/* The old rows' bytes that the tables continued copy on write with
** rf_db_writer_table_from (append 1) carried over so far: *linked in the
** old files themselves (linked into the new folder and appended to past
** their manifest sizes: no byte of them copied), *copied in clones or
** in-kernel copies. */
void rf_db_writer_carried_bytes(const rf_db_writer *w, int64_t *linked, int64_t *copied);
/* Bytes appended in place by the columns ended so far (0 when not in place). */
int64_t rf_db_writer_in_place_bytes(const rf_db_writer *w);
/* Whether table tb of db can take rows in place: format 2, every column
** numeric or plain strings (a dictionary cannot grow in place), every
** file a regular one of at least its manifest size that no other folder
** shares (one link), and every narrow column's partial last block stored
** as it is (the writer stores it so; it is continued so). */
int rf_db_table_appendable_in_place(const rf_db *db, const rf_db_table *tb);
/* Whether the columns of tables added from now on that can be narrow
** (rf_db_narrowable) are written narrow (on unless set; off: every block
** at the type's width, as format 2 wrote them, mapped in place by readers).
** A column none of whose blocks narrows is written as a plain one either way. */
void rf_db_writer_narrow(rf_db_writer *w, int on);
/* Rows per min/max block of the tables added from now on: a power of two
** (RF_DB_BLOCK_ROWS unless set; smaller blocks skip finer, at 16 bytes of
** manifest per block and column). */
void rf_db_writer_block_rows(rf_db_writer *w, uint32_t rows);
/* Adds a table; *tid is its number. colnames[c] may be NULL. key: the
** columns the caller checks to be a key before commit (nkey 0: none). */
rf_status rf_db_writer_table(rf_db_writer *w, const char *name, int32_t ncols, const rf_type *types,
                             const char *const *colnames, int32_t nkey, const int32_t *key, int32_t *tid,
                             rf_diags *d);
/* Adds table tb of db (the database this writer replaces) to the new one
** without writing its rows again. append 0: the table as it is, its files
** linked (a copy-on-write writer never changes a file in place). append 1:
** rows are then appended (rf_db_writer_append) after its old ones, which
** its new column files start with: where this writer replaces db (its
** commit puts the new database at db's folder), no other folder shares an
** old file (one link) and it can be continued as it is, the old file itself,
** linked into the new folder and appended to past its manifest size (which
** the old manifest does not name: the old database reads as before until
** the commit's exchange), any tail there cut off first; else cloned where
** the file system shares blocks (FICLONE), else copied inside the kernel;
** in place (a writer of rf_db_writer_in_place), the old files themselves,
** any tail past their manifest sizes cut off first. The blocks' min/max and CRC-32Cs carry
** over, the last one continued. *tid = -1 (and RF_OK) when the table
** cannot go this way (append with a dictionary string column or a format
** without block CRC-32Cs, a file system without links or in-kernel copies;
** in place, a file shared with another folder): the caller writes it with
** rf_db_writer_table (not in place: there it starts again copy on write). */
rf_status rf_db_writer_table_from(rf_db_writer *w, const rf_db *db, const rf_db_table *tb, int append, int32_t *tid,
                                  rf_diags *d);
/* Table tid's key as its manifest records it (the columns the caller
** checked to be a key before commit; nkey 0: none), in place of the one it
** was added with: for a table carried over by rf_db_writer_table_from whose
** old key its new rows were not checked against. */
rf_status rf_db_writer_table_key(rf_db_writer *w, int32_t tid, int32_t nkey, const int32_t *key);
/* Appends n rows to column c of table tid: values (non-strings) at the
** runtime's widths, or strings as the text loader gives them (string i is
** bytes[off[i] .. off[i+1])), or a string column's codes from
** rf_db_writer_encode in values with off NULL. Different columns may be appended from
** different threads at once; one column's appends must be in row order and
** from one thread at a time. Every column of a table must get the same
** number of rows. */
rf_status rf_db_writer_append(rf_db_writer *w, int32_t tid, int32_t c, int64_t n, const void *values,
                              const int64_t *off, const char *bytes, rf_diags *d);
/* Runs fn(arg, t) for t in [0, nthreads) on nthreads threads and returns
** when all are done (the runtime's rf_rt_parallel fits). */
typedef void (*rf_db_task_fn)(void *arg, int t);
typedef void (*rf_db_parallel_fn)(int nthreads, rf_db_task_fn fn, void *arg);
/* rf_db_writer_append with up to nthreads threads through par: the rows go
** in pieces of whole blocks, each piece's min/max, CRC-32Cs and bytes (a
** plain string column's offsets and strings too) done by its own thread and
** written at its place in the files. The files and the manifest are the
** same as rf_db_writer_append's, byte for byte. (Fewer than four blocks of
** rows, or a string column to be encoded on the way: as
** rf_db_writer_append.) Same threading rule as append. */
rf_status rf_db_writer_append_par(rf_db_writer *w, int32_t tid, int32_t c, int64_t n, const void *values,
                                  const int64_t *off, const char *bytes, int nthreads, rf_db_parallel_fn par,
                                  rf_diags *d);
/* The codes of n more rows of string column c (as rf_db_writer_append
** takes them), added to its dictionary with nthreads threads through par;
** then rf_db_writer_append(w, tid, c, n, codes, NULL, NULL, d) appends
** them. The codes do not depend on nthreads. Same threading rule as
** append: one column from one thread at a time (par's threads excepted). */
rf_status rf_db_writer_encode(rf_db_writer *w, int32_t tid, int32_t c, int64_t n, const int64_t *off,
                              const char *bytes, uint32_t *codes, int nthreads, rf_db_parallel_fn par,
                              rf_diags *d);
/* Stores string column c of table tid as plain strings (an offset per row
** into a strings file, no dictionary): for mostly distinct strings, where a
** dictionary costs more than it saves. Before the column's first append. */
rf_status rf_db_writer_plain(rf_db_writer *w, int32_t tid, int32_t c, rf_diags *d);
/* Whether a string column whose first rows are these (string i is
** bytes[off[i] .. off[i+1])) is better stored plain: at least
** RF_DB_PLAIN_MIN_ROWS rows, and of the first RF_DB_PLAIN_SAMPLE of them at
** least RF_DB_PLAIN_PERCENT % distinct (comments, names, addresses: a
** dictionary would hold nearly every row again, and building it costs more
** than interning the strings when a program reads them). */
#define RF_DB_PLAIN_SAMPLE 4096
#define RF_DB_PLAIN_MIN_ROWS 256
#define RF_DB_PLAIN_PERCENT 90
int rf_db_strings_mostly_distinct(int64_t n, const int64_t *off, const char *bytes);
/* What a writer has handed to the file system so far (`import --profile`):
** the bytes of its column, strings and dictionary files, and the seconds its
** threads spent, summed, wall clock and CPU, in write calls (the copy into
** the page cache) and in starting the disk's writeback of what they wrote
** (sync_file_range): wall well above CPU there is a writer waiting, for the
** disk where it takes bytes slower than they come (or for a core). */
typedef struct rf_db_io_time {
    double wall, cpu;
} rf_db_io_time;
typedef struct rf_db_write_stats {
    int64_t bytes;
    rf_db_io_time write, writeback;
} rf_db_write_stats;
void rf_db_writer_stats(const rf_db_writer *w, rf_db_write_stats *out);
/* Ends table tid's column c (writes its dictionary, closes its files). */
rf_status rf_db_writer_finish_column(rf_db_writer *w, int32_t tid, int32_t c, rf_diags *d);
/* Ends every column of table tid (those not yet ended, one after another)
** and sets its row count; every column must have the same number of rows. */
rf_status rf_db_writer_end_table(rf_db_writer *w, int32_t tid, rf_diags *d);
/* The database written so far, in the temporary directory: finished columns
** of ended tables can be read back with rf_db_map_column (to check keys
** before commit). */
const rf_db *rf_db_writer_db(const rf_db_writer *w);
/* Writes the manifest, syncs every file, and renames the directory into
** place (an existing database there is replaced). */
rf_status rf_db_writer_commit(rf_db_writer *w, rf_diags *d);
/* The bytes of the manifest rf_db_writer_commit wrote (*len of them), valid
** until rf_db_writer_free; NULL before a commit that wrote it. What the
** commit made, even where another writer has committed over it since: a
** copy-on-write commit's lock is on the folder it exchanged away, so DIR's
** manifest may already be another's when the commit returns. */
const char *rf_db_writer_manifest(const rf_db_writer *w, int64_t *len);
/* Removes the temporary directory (after a failure) and frees w; safe after
** commit and on NULL. */
void rf_db_writer_free(rf_db_writer *w);

#endif
