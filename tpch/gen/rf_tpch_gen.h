/*
** tpch/gen/rf_tpch_gen.h: public API of the TPC-H data generator.
**
** Owns: the options and entry point of `redfox tpch gen`. The generator
** writes the eight TPC-H tables as dbgen 2.14 does, byte for byte, so that
** results can be checked against published answers. It never prints: every
** problem goes into an rf_diags list together with a result code.
*/
#ifndef RF_TPCH_GEN_H
#define RF_TPCH_GEN_H

#include <stdint.h>

#include "rf_common.h"

/* Scale factors accepted: dbgen only reproduces whole scale factors from 1
** up, and multiples of 0.001 below 1. */
#define RF_TPCH_SF_MIN 0.01
#define RF_TPCH_SF_MAX 1000.0

typedef struct rf_tpch_gen_opts {
    double sf;           /* scale factor, RF_TPCH_SF_MIN..RF_TPCH_SF_MAX */
    const char *out_dir; /* created, with its parents, when missing */
    int jobs;            /* worker threads; <= 0 means the number of online CPUs */
    /* Comma-separated table names (customer, lineitem, nation, orders, part,
    ** partsupp, region, supplier); NULL or "all" means every table. */
    const char *tables;
    /* Called from one thread at a time as work completes; done and total are
    ** abstract work units (about one per output byte), done ends equal to
    ** total on success. May be NULL. */
    void (*progress)(void *ctx, int64_t done, int64_t total);
    void *progress_ctx;
    /* Called before waiting for another process that holds out_dir's lock
    ** (common/rf_file.h); may be NULL. */
    void (*on_wait)(void *ctx, const char *lock_path);
    void *on_wait_ctx;
    /* When set, no files are written: each table's rows go to sink instead,
    ** as the text a .tbl file would hold, in file order (chunks of whole
    ** lines, one call at a time). table is "lineitem" etc. A status other
    ** than RF_OK stops the generator, which then returns it (the sink adds
    ** its own diagnostics). out_dir is then only checked to be given. */
    rf_status (*sink)(void *ctx, const char *table, const char *data, int64_t len);
    void *sink_ctx;
} rf_tpch_gen_opts;

/* Generates <out_dir>/<table>.tbl for the selected tables, replacing files
** of those names: written aside and renamed into place only once all were
** written and synced, under the folder's lock, so a failed or killed run
** leaves the old files (common/rf_file.h); a SIGINT, SIGTERM or SIGHUP that
** comes during the renames is held (rf_file_hold_signals) until all are
** done, for the caller to end the process by (rf_file_end_by_signal), so
** the folder never holds tables of two runs. Returns RF_OK, RF_EUSAGE for bad options, RF_EIO when a
** file cannot be created or written, RF_ENOMEM or RF_EINTERNAL; details are
** appended to d, and the files of a failed run are removed rather than left
** half written. Output is the same whatever the number of jobs. Uses about
** 300 MiB for dbgen's text pool plus a few chunks of rows per job. */
rf_status rf_tpch_gen(const rf_tpch_gen_opts *o, rf_diags *d);

#endif
