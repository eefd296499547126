/*
** common/rf_mix.h: 64-bit hash mixing, one definition for the tree.
**
** Owns: rf_mix64, Murmur3's 64-bit finalizer (fmix64): every bit of its
** input reaches every bit of its result, for hash tables and partitions
** over values whose low bits alone are poor (codes, pointers, keys); and
** rf_mix64_combine, boost's hash_combine widened to 64 bits, for a running
** hash over several values. Their results are fixed: the CPU's and the
** GPU's partitions must agree (skeletons/cuda's rf_base.cuh and
** rf_gather.cuh carry the device's copy of rf_mix64, which NVRTC compiles
** without this header), and no stored hash may move.
*/
#ifndef RF_MIX_H
#define RF_MIX_H

#include <stdint.h>

static inline uint64_t rf_mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

/* h with x folded in (the golden ratio's bits keep a run of zeros from
** hashing alike); not a finalizer: mix the result where its low bits are
** used alone. */
static inline uint64_t rf_mix64_combine(uint64_t h, uint64_t x)
{
    return h ^ (x + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2));
}

#endif
