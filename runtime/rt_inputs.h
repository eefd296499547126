/*
** runtime/rt_inputs.h: the driver's reading of a run's inputs (rt_inputs.c),
** for rt_run.c.
**
** Owns: the interface between the driver and the input cache: every device
** receives the same host rows and string codes (read once per cache), so a
** device never reads files itself.
*/
#ifndef RF_RT_INPUTS_H
#define RF_RT_INPUTS_H

#include "rf_rt_dist.h"
#include "rf_rt_input.h"
#include "rt_device.h"

/* One run's reading of its inputs. */
typedef struct rf_rt_inputs {
    const rf_hir_program *p;
    const rf_rt_options *o;
    rf_rt_dict *dict;
    rf_cpu_pool *pool;
    int threads;
    rf_diags *d;
    rf_db *db;     /* --data names a database (opened at the first input) */
    int db_looked;
    rf_rt_dbskip skip; /* block skipping's columns (kept until close) and counts (rt_db_blocks.c) */
    rf_rt_dist *dist;  /* several ranks: each reads its share (rt_share.c); NULL: one process */
    int takes_stored;  /* the device widens narrow columns itself (rf_rt_device_ops.takes_stored; ranks too) */
    /* the bytes of the input files that are not regular (pipes, FIFOs),
    ** read once each by the run, by device and inode, until close */
    struct rf_rt_read_once *once;
    int32_t nonce;
} rf_rt_inputs;

void rf_rt_inputs_init(rf_rt_inputs *in, const rf_rt_env *env);
/* Input variable v's rows into *out (ncols and types set by the caller),
** strings interned in the run's dictionary; *borrowed = 1 when the columns
** belong to the cache (then only out->cols itself is the caller's). With
** several ranks (in->dist), *share = 1 when *out is this rank's share
** (else it is the whole input, of which the caller keeps a share). stamps
** (NULL, or v->ncols numbers the caller zeroed): per column handed out
** exactly as the cache holds it (every row), or as a selection of a
** database table's blocks (a rank's share, block skipping's), the number
** that names those bytes for the cache's life (rf_rt_device_ops.load); 0
** for the others (a text file's share, a share the caller cuts). */
/* (*share = 2: every rank read the whole input, a database table of one
** block: it is replicated.) */
/* stored (NULL, or v->ncols entries the caller zeroed): where the device
** takes stored columns (in->takes_stored; a rank too, its share's blocks), per column of a
** database's narrow int, decimal or date column the program reads, the
** column as stored (rf_rt_stored.h; the cache's, or the run's selection of
** its blocks) and out's column NULL; elsewhere every column comes widened
** (a stored one widened here, once, for the cache's life). */
rf_status rf_rt_inputs_read(rf_rt_inputs *in, const rf_hir_var *v, rf_rt_rel *out, int *borrowed, int *share,
                            uint64_t *stamps, rf_rt_stored **stored);

/* Several ranks, before any input is read: the dictionaries of the
** database's string columns the program reads, interned whole (the part of
** the prefix of codes every rank shares that the data gives,
** runtime/dist/dist_codes.c); *top grows past their codes. */
rf_status rf_rt_inputs_shared_strings(rf_rt_inputs *in, int64_t *top);
/* Several ranks: scan[c] = 1 for the string columns of input v whose codes
** may lie past that prefix (a rank's own strings), which the run must look
** at: those the program reads, but for a database's dictionary columns,
** interned whole by rf_rt_inputs_shared_strings (their codes are shared). */
void rf_rt_inputs_codes_to_scan(const rf_rt_inputs *in, const rf_hir_var *v, uint8_t *scan);
/* ---- a rank's share (rt_share.c) ---------------------------------------- */

/* Blocks [*b0, *b1) of a table of nblocks blocks are this rank's. */
void rf_rt_share_blocks(const rf_rt_dist *x, int64_t nblocks, int64_t *b0, int64_t *b1);
/* This rank's share of text input v (path): *out its rows, read from its
** part of the file alone, keys and dependencies checked over all ranks;
** or, when a part of the file holds a '"' (*whole = 1), the whole file
** (checked) of which the caller keeps a share. A collective. */
rf_status rf_rt_share_text(rf_rt_dist *x, const char *path, const rf_hir_var *v, rf_rt_dict *dict, rf_cpu_pool *pool,
                           int threads, rf_rt_rel *out, int *whole, rf_diags *d);
/* 1 when path is a pipe, a FIFO or a device: read once, by one reader
** (on several ranks, rank 0 reads it whole and the others hold none of
** its rows). */
int rf_rt_share_is_stream(const char *path);
/* Rank 0's part of rf_rt_share_text's collective for a stream input whose
** rows (nrows of them, read whole and checked) it already holds: an
** earlier run of this process read it into the input cache (--repeat),
** since the stream cannot be read again. */
rf_status rf_rt_share_text_given(rf_rt_dist *x, const char *path, const rf_hir_var *v, int64_t nrows, rf_diags *d);
/* After the shares' vote (v[2]: 1 from a rank that found a stream at path;
** rt_inputs.c's vote on kept shares has the same layout): streams of n ranks
** did; RF_EUSER with rank 0's message unless none or all did. */
rf_status rf_rt_share_streams_alike(const char *path, const rf_hir_var *v, int streams, int n, rf_diags *d);
/* checks (rf_rt_input_checks' bits) of v over every rank's share r, row i
** of r being on line line0 + i of path (db: row line0 + i of a database's
** table, path its manifest). A collective; errors as one process gives
** them, from the rank that holds the offending row. */
rf_status rf_rt_share_check(rf_rt_dist *x, const char *path, int db, const rf_hir_var *v, rf_rt_dict *dict,
                            rf_cpu_pool *pool, const rf_rt_rel *r, int64_t line0, int checks, rf_diags *d);
void rf_rt_inputs_close(rf_rt_inputs *in);

/* The cache's slot for a device's part (rt_device.h): released first by
** rf_rt_cache_free. */
rf_rt_devcache *rf_rt_cache_device(rf_rt_cache *c);

/* The cache's dictionary; take_dict leaves it to a result (the cache no
** longer frees it). */
rf_rt_dict *rf_rt_cache_dict(rf_rt_cache *c);
void rf_rt_cache_take_dict(rf_rt_cache *c);

#endif
