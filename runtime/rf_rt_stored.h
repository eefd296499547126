/*
** runtime/rf_rt_stored.h: an input column held as the database stores it
** (docs/DATABASE.md "Narrow columns"): its blocks' stored bytes, mapped,
** with their records, not widened.
**
** Owns: the stored column (rf_rt_stored) and the one place where host code
** gets its values (rf_rt_stored_widen). The GPU copies the stored bytes and
** widens them on the device (runtime/gpu/rt_gpu_wire.c); everything on the
** host that reads the values (the CPU's kernels, a fallback, a column kept
** in host memory under a GPU memory cap) asks rf_rt_stored_widen, which
** widens once, into memory the stored column owns. The input reader
** (rt_inputs.c) hands a device stored columns only when the device takes
** them (rf_rt_device_ops.takes_stored): a relation's column is then NULL
** and its stored column stands beside it, so no path can read unwidened
** bytes for values.
*/
#ifndef RF_RT_STORED_H
#define RF_RT_STORED_H

#include "rf_db.h"

/* One block of a stored column: its record in the manifest (min, max,
** width, exp, where its bytes are) and where its rows go in the column. */
typedef struct rf_rt_stored_block {
    rf_db_block bl;
    int64_t row; /* its first row in the column */
    int64_t n;   /* its rows */
} rf_rt_stored_block;

typedef struct rf_rt_stored {
    rf_type type;
    int64_t nrows;       /* the column's rows (widened: nrows values of the runtime's width) */
    int64_t nblocks;     /* blocks listed, in row order; rows no block covers are zero */
    rf_rt_stored_block *blocks;
    const unsigned char *base; /* the column file, mapped: block b's bytes at base + blocks[b].bl.at */
    uint64_t stored_bytes;     /* the listed blocks' stored bytes */
    rf_db_map file;            /* the mapping (empty in a selection: its column's) */
    rf_db_map wide;            /* widened on demand (rf_rt_stored_widen); empty until then */
} rf_rt_stored;

/* Table t's narrow column c, mapped into *m and checked as stored for the
** kept blocks (rf_db_map_column_stored), as a stored column listing the
** kept blocks (keep NULL: all); takes *m (emptied). */
rf_status rf_rt_stored_new(const rf_db_table *t, int32_t c, const uint8_t *keep, rf_db_map *m, rf_rt_stored **out);
/* A stored column of the rows of s's blocks that keep flags (per block of
** the table, block_rows rows each), in order: block skipping's gather, no
** byte copied. It reads s's mapping: s must outlive it. */
rf_status rf_rt_stored_select(const rf_rt_stored *s, const uint8_t *keep, int64_t block_rows, rf_rt_stored **out);
/* s's values at the runtime's width (nrows of them; rows no block covers
** zero), widened by `threads` threads the first time, kept in s after.
** NULL where memory runs out. */
const void *rf_rt_stored_widen(rf_rt_stored *s, int threads);
/* The bytes of s widened (nrows values of its type). */
uint64_t rf_rt_stored_wide_bytes(const rf_rt_stored *s);
void rf_rt_stored_free(rf_rt_stored *s);

#endif
