/*
** runtime/gpu/rt_gpu_wire.c: a database's narrow column copied to the
** device as it is stored, and widened there.
**
** Owns: packing a stored column's blocks (runtime/rf_rt_stored.h) into
** rounds (skeletons/cuda/rf_wire.h: piece headers, then each piece's stored
** bytes, aligned), the host's widening of a round (the emulator's; the same
** rf_wire_get as the device's kernel, skeletons/cub/rf_wire.cu), and the
** executor's copy of a stored column through the device's h2d_stored with
** its scratch from the pool.
**
** Why: the database stores TPC-H's int, decimal and date columns in 1, 2 or
** 4 bytes a value (a block's minimum plus a multiple of a power of ten), so
** copying the stored bytes moves about a third of the widened ones (q06 at
** SF 10: 0.48 GB against 1.68 GB), and the host widens nothing: no fresh
** memory for the widened column, no pass over it. The database reader
** checked the stored values when it mapped the column (CRC-32C, each within
** its block's range), so packing is a copy and the widening is exact.
*/
#include "rt_gpu_internal.h"

#include "rf_rt_stored.h"
#include "rf_wire.h"

#include <stdlib.h>
#include <string.h>

static uint64_t align16(uint64_t n) { return (n + RF_WIRE_ALIGN - 1) / RF_WIRE_ALIGN * RF_WIRE_ALIGN; }

/* Bytes a piece of n values of width w takes in a round, its header too. */
static uint64_t piece_room(int64_t n, int w) { return sizeof(rf_wire_blk) + align16((uint64_t)n * (uint64_t)w); }

/* The bytes a block's values go in: as stored, or (a block at the column's
** width) as they are. */
static int piece_width(const rf_db_block *bl, int elem) { return bl->width < elem ? bl->width : elem; }

uint64_t rf_gpu_wire_round_room(const rf_rt_stored *s, int64_t piece, uint64_t cap)
{
    int elem = rf_db_type_width(s->type);
    uint64_t total = 0;
    for (int64_t b = 0; b < s->nblocks && total < cap; b++) {
        const rf_rt_stored_block *sb = &s->blocks[b];
        int w = piece_width(&sb->bl, elem);
        for (int64_t r = 0; r < sb->n && total < cap; r += piece)
            total += piece_room(sb->n - r < piece ? sb->n - r : piece, w);
    }
    /* (at least one whole piece: cap holds one of `piece` values) */
    return total < cap ? total : cap;
}

typedef struct pack_job {
    const rf_rt_stored *s;
    unsigned char *out;
    const int64_t *src; /* per piece: its first stored byte's offset in the mapping */
} pack_job;

static void pack_pieces(void *ctx, int64_t p0, int64_t p1, int worker)
{
    const pack_job *j = ctx;
    (void)worker;
    for (int64_t p = p0; p < p1; p++) {
        rf_wire_blk h;
        memcpy(&h, j->out + (uint64_t)p * sizeof h, sizeof h);
        memcpy(j->out + h.at, j->s->base + j->src[p], (size_t)h.n * h.width);
    }
}

rf_status rf_gpu_wire_pack(rf_cpu_pool *cpu, const rf_rt_stored *s, int64_t piece, uint64_t cap, int64_t *blk,
                           int64_t *row, void *out, uint64_t *bytes, int32_t *npieces)
{
    int elem = rf_db_type_width(s->type);
    unsigned char *o = out;
    /* the pieces that fit: headers first, so their count fixes where the values start */
    int64_t b = *blk, r = *row, np = 0;
    uint64_t used = 0;
    while (b < s->nblocks) {
        const rf_rt_stored_block *sb = &s->blocks[b];
        int64_t n = sb->n - r < piece ? sb->n - r : piece;
        uint64_t room = piece_room(n, piece_width(&sb->bl, elem));
        if (np > 0 && used + room > cap) break;
        used += room;
        np++;
        r += n;
        if (r >= sb->n) {
            b++;
            r = 0;
        }
    }
    int64_t *src = rf_malloc((size_t)np * sizeof *src + 1);
    if (!src) return RF_ENOMEM;
    uint64_t at = (uint64_t)np * sizeof(rf_wire_blk);
    b = *blk;
    r = *row;
    for (int64_t p = 0; p < np; p++) {
        const rf_rt_stored_block *sb = &s->blocks[b];
        int64_t n = sb->n - r < piece ? sb->n - r : piece;
        int w = piece_width(&sb->bl, elem);
        rf_wire_blk h;
        memset(&h, 0, sizeof h);
        h.base = w < elem ? sb->bl.min : 0;
        h.exp = w < elem ? sb->bl.exp : 0;
        h.width = (uint8_t)w;
        h.at = at;
        h.row = sb->row + r;
        h.n = (uint32_t)n;
        memcpy(o + (uint64_t)p * sizeof h, &h, sizeof h);
        src[p] = (int64_t)sb->bl.at + r * sb->bl.width;
        at += align16((uint64_t)n * (uint64_t)w);
        r += n;
        if (r >= sb->n) {
            b++;
            r = 0;
        }
    }
    /* the values: a copy of the mapped file's bytes, by the run's threads
    ** together where the round is big (one thread's copy is below PCIe's) */
    pack_job j = {s, o, src};
    if (at >= ((uint64_t)2 << 20) && cpu && rf_cpu_pool_threads(cpu) > 1)
        rf_cpu_parallel_for(cpu, np, 1, pack_pieces, &j);
    else
        pack_pieces(&j, 0, np, 0);
    free(src);
    *blk = b;
    *row = r;
    *bytes = at;
    *npieces = (int32_t)np;
    return RF_OK;
}

void rf_gpu_wire_widen_host(const void *round, int32_t npieces, int elem, void *dst)
{
    const unsigned char *r = round;
    for (int32_t p = 0; p < npieces; p++) {
        rf_wire_blk h;
        memcpy(&h, r + (uint64_t)p * sizeof h, sizeof h);
        uint64_t mul = rf_wire_pow10(h.exp);
        for (uint32_t i = 0; i < h.n; i++) rf_wire_put(dst, elem, h.row + i, rf_wire_get(&h, r + h.at, mul, i));
    }
}

/* ---- the executor's copy ---------------------------------------------------------- */

rf_status rf_gx_h2d_stored(gx *x, gptr dst, rf_rt_stored *s)
{
    uint64_t wide = rf_rt_stored_wide_bytes(s);
    if (!wide) return RF_OK;
    int64_t covered = 0;
    for (int64_t b = 0; b < s->nblocks; b++) covered += s->blocks[b].n;
    /* rows no block covers are zeros, as on the host (never read) */
    rf_status st = covered < s->nrows ? x->g.ops->memset8(&x->g, dst, 0, wide) : RF_OK;
    if (st || !s->nblocks) return st;
    gbuf sc = {0, 0};
    /* room on the device for one round (a short column's whole): where the
    ** pool has none to spare (under a cap), the column goes widened */
    if (!x->g.wire_piece ||
        rf_gpool_alloc_quiet(x->pool, rf_gpu_wire_round_room(s, x->g.wire_piece, x->g.wire_round), &sc)) {
        const void *w = rf_rt_stored_widen(s, x->threads);
        if (!w) {
            rf_error(x->d, rf_mkloc(NULL, 0, 0), "out of memory widening a column of %llu bytes",
                     (unsigned long long)wide);
            return RF_ENOMEM;
        }
        return x->g.ops->h2d(&x->g, dst, w, wide);
    }
    st = x->g.ops->h2d_stored(&x->g, dst, s, sc.p);
    /* (the widening reads it in stream order: what takes the room next comes after) */
    gfree(x, &sc);
    return st;
}
