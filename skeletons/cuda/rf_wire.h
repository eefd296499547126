/*
** skeletons/cuda/rf_wire.h: a database's narrow column on its way to the
** device as it is stored: the layout of a round (what one pinned staging
** buffer carries) and the widening of one value, shared by the host
** (runtime/gpu/rt_gpu_wire.c packs rounds; the emulator and the tests widen
** them) and the device (skeletons/cub/rf_wire.cu widens).
**
** Owns: the round's layout and the piece header. A round is nblk headers
** (rf_wire_blk, 32 bytes each, piece b's at b * 32), then each piece's
** stored values at its header's `at` (16-byte aligned). A piece is up to a
** database block's rows (docs/DATABASE.md "Narrow columns"), n values of the
** destination column from row `row` on; value i is
**
**     base + stored[i] * 10^exp     (unsigned 64-bit arithmetic, wrapping)
**
** with stored[i] an unsigned integer of `width` bytes (1, 2, 4 or 8), kept
** in the column's own width (8: int and decimal; 4: date) by truncation.
** base is the block's minimum and exp its power of ten; a block stored at
** the column's width goes as it is (base 0, exp 0, width the column's).
** The database reader checked every stored value against its block's
** range when it mapped the column, so the widening checks nothing.
**
** C11 and CUDA C++ alike: no tables (the device would need its own copy).
*/
#ifndef RF_WIRE_H
#define RF_WIRE_H

#include <stdint.h>

#ifdef __CUDACC__
#define RF_WIRE_FN static __host__ __device__ __forceinline__
#else
#define RF_WIRE_FN static inline
#endif

#define RF_WIRE_ALIGN 16       /* a piece's values start at a multiple of this */
#define RF_WIRE_PIECE 65536    /* rows per piece at most on the real device (a block's, as written) */

typedef struct rf_wire_blk {
    int64_t base;  /* the block's minimum (0 for a block as it is) */
    uint64_t at;   /* byte offset of its stored values in the round */
    int64_t row;   /* its first value's row in the destination column */
    uint32_t n;    /* values */
    uint8_t width; /* bytes per stored value: 1, 2, 4 or 8 */
    uint8_t exp;   /* the multiplier's power of ten, 0..18 */
    uint8_t pad[2];
} rf_wire_blk;

RF_WIRE_FN uint64_t rf_wire_pow10(int e)
{
    uint64_t p = 1;
    for (int i = 0; i < e; i++) p *= 10;
    return p;
}

/* Value i of piece h (its stored values at p, aligned), as the column's
** 64-bit pattern (a 4-byte column keeps the low 32 bits); mul: 10^h->exp. */
RF_WIRE_FN uint64_t rf_wire_get(const rf_wire_blk *h, const unsigned char *p, uint64_t mul, uint32_t i)
{
    uint64_t q;
    switch (h->width) {
    case 1: q = p[i]; break;
    case 2: q = ((const uint16_t *)p)[i]; break;
    case 4: q = ((const uint32_t *)p)[i]; break;
    default: q = ((const uint64_t *)p)[i]; break;
    }
    return (uint64_t)h->base + q * mul;
}

/* Stores v into row of a column of elem bytes a value (4 or 8) at dst. */
RF_WIRE_FN void rf_wire_put(void *dst, int elem, int64_t row, uint64_t v)
{
    if (elem == 8) ((uint64_t *)dst)[row] = v;
    else ((uint32_t *)dst)[row] = (uint32_t)v;
}

#endif
