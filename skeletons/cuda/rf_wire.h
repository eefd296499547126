/*
** skeletons/cuda/rf_wire.h: a column's values narrow on the wire, from the
** host to the device: the format of a round and the decoding of one value,
** shared by the host (runtime/gpu/rt_gpu_wire.c encodes; the emulator and
** the tests decode) and the device (skeletons/cub/rf_wire.cu widens).
**
** Owns: the round's layout and the block header. A round is what one
** pinned staging buffer carries: nblk headers (rf_wire_blk, 32 bytes each,
** block b's at b * 32), then each block's packed values at its header's
** `at` (16-byte aligned, in any order: the host's threads place blocks as
** they finish). A block stands for n values of the destination column from
** row `row` on; value i is
**
**     base + packed[i] * 10^exp     (unsigned 64-bit arithmetic, wrapping)
**
** with packed[i] an unsigned integer of `width` bytes (1, 2, 4 or 8),
** stored into the column's own width (8: int and decimal; 4: date, string
** code) by truncation. base is the block's minimum and 10^exp a power of
** ten that divides every value (decimals are integers times 10^6, so
** l_discount's 0.04 is 40000: exp 4); a block that does not narrow goes
** as it is (base 0, exp 0, width the column's). Exact by construction: the
** encoder checks every value (rt_gpu_wire.c).
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

/* The element kinds that narrow (others are copied as they are). */
enum { RF_WIRE_I64 = 1, /* int, decimal: 8 bytes, signed */
       RF_WIRE_I32 = 2, /* date: 4 bytes, signed */
       RF_WIRE_U32 = 3  /* string code: 4 bytes, unsigned */ };

#define RF_WIRE_EXP_MAX 6    /* the largest divisor tried: 10^6 (the decimals' scale) */
#define RF_WIRE_ALIGN 16     /* a block's packed values start at a multiple of this */
#define RF_WIRE_BLOCK 65536  /* values per block on the real device */

typedef struct rf_wire_blk {
    int64_t base;   /* the block's minimum (0 for a block as it is) */
    uint64_t at;    /* byte offset of its packed values in the round */
    int64_t row;    /* its first value's row in the destination column */
    uint32_t n;     /* values */
    uint8_t width;  /* bytes per packed value: 1, 2, 4 or 8 */
    uint8_t exp;    /* the divisor's power of ten, 0..RF_WIRE_EXP_MAX */
    uint8_t pad[2];
} rf_wire_blk;

/* Bytes per value of kind k in its column. */
RF_WIRE_FN int rf_wire_elem(int k) { return k == RF_WIRE_I64 ? 8 : 4; }

RF_WIRE_FN uint64_t rf_wire_pow10(int e)
{
    uint64_t p = 1;
    for (int i = 0; i < e; i++) p *= 10;
    return p;
}

/* Value i of block h (its packed values at p), as the column's 64-bit
** pattern (a 4-byte column keeps the low 32 bits); mul: 10^h->exp. */
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

/* Stores v into row of a column of kind k at dst. */
RF_WIRE_FN void rf_wire_put(void *dst, int k, int64_t row, uint64_t v)
{
    if (k == RF_WIRE_I64) ((uint64_t *)dst)[row] = v;
    else ((uint32_t *)dst)[row] = (uint32_t)v;
}

#endif
