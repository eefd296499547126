// skeletons/cuda/rf_gather.cuh: the data-movement skeletons of GATHER,
// GATHER_MAP's index work, CONCAT and the helpers the other kernels need
// (index vectors, cross products, the code range and code set of a string
// column, whose per-code results the host computes once per dictionary entry).
//
// Owns nothing but the loops; every kernel is type-agnostic (byte widths in
// k[]), so one instantiation serves every program.
//   gather      n rows out; x[0] ncols; k[c] width; c0[c] source; o[c]
//               destination; r0 rows to take (NULL: row i itself)
//   iota        n; p[0] i64 out: x[0] + i
//   cross       n = left * right pairs; x[0] right rows; p[0], p[1] i64 out
//   code_range  n; c0[0] u32 codes; r0 rows (NULL: all); p[0] u64[2]: min, max
//               (the host sets them to RF_EMPTY and 0 first)
//   code_mark   n; c0[0] codes; r0; p[0] u8 bitmap over codes x[0]..: set 1
//   sort_key    n; c0[0] column; r0 the current permutation; x[0] storage kind
//               (0 i64, 1 f64, 2 i32, 3 u32 rank, 4 u8, 5 a wide decimal's
//               low word, 6 its high word: two passes, low first); x[1] descending;
//               t[0] u32 ranks of string codes from x[2]; p[0] u64 keys out
//   part_flags  n rows; x[0] key columns; x[1] ranks; x[2] the rank wanted;
//               k[c] key c's kind (0 8-byte integer, 1 f64, 2 i32, 3 u8,
//               4 a wide decimal, by its low word as dist_pack.c hashes it);
//               c0[c] key columns (NULL: a column never copied, zeros);
//               p[0] u8 out: 1 where the row's rank is x[2] (several ranks,
//               runtime/dist: the hash of dist_pack.c bit for bit, so rows
//               moved here meet rows moved through host memory)
#ifndef RF_GATHER_CUH
#define RF_GATHER_CUH

namespace rf {

template <int TILE> __device__ __forceinline__ void gather(const Args &a)
{
    int nc = (int)a.x[0];
    RF_FOR(i, a.n)
    {
        i64 r = a.r0 ? a.r0[i] : i;
        for (int c = 0; c < nc; c++) {
            switch (a.k[c]) {
            case 8: ((u64 *)a.o[c])[i] = ((const u64 *)a.c0[c])[r]; break;
            case 4: ((u32 *)a.o[c])[i] = ((const u32 *)a.c0[c])[r]; break;
            case 16: ((i128 *)a.o[c])[i] = ((const i128 *)a.c0[c])[r]; break;
            default: ((u8 *)a.o[c])[i] = ((const u8 *)a.c0[c])[r]; break;
            }
        }
    }
}

template <int TILE> __device__ __forceinline__ void iota(const Args &a)
{
    i64 *o = (i64 *)a.p[0];
    RF_FOR(i, a.n) o[i] = a.x[0] + i;
}

template <int TILE> __device__ __forceinline__ void cross(const Args &a)
{
    i64 *l = (i64 *)a.p[0], *r = (i64 *)a.p[1];
    i64 nr = a.x[0];
    RF_FOR(i, a.n)
    {
        l[i] = i / nr;
        r[i] = i % nr;
    }
}

template <int TILE> __device__ __forceinline__ void code_range(const Args &a)
{
    const u32 *c = (const u32 *)a.c0[0];
    u64 *mm = (u64 *)a.p[0];
    u64 lo = RF_EMPTY, hi = 0;
    RF_FOR(i, a.n)
    {
        u64 v = c[a.r0 ? a.r0[i] : i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (lo != RF_EMPTY) {
        atomicMin(&mm[0], lo);
        atomicMax(&mm[1], hi);
    }
}

template <int TILE> __device__ __forceinline__ void code_mark(const Args &a)
{
    const u32 *c = (const u32 *)a.c0[0];
    u8 *bits = (u8 *)a.p[0];
    RF_FOR(i, a.n) bits[(i64)c[a.r0 ? a.r0[i] : i] - a.x[0]] = 1;
}

template <int TILE> __device__ __forceinline__ void sort_key(const Args &a)
{
    u64 *out = (u64 *)a.p[0];
    u64 flip = a.x[1] ? ~0ull : 0ull;
    RF_FOR(i, a.n)
    {
        i64 r = a.r0 ? a.r0[i] : i;
        u64 v;
        switch (a.x[0]) {
        case 0: v = norm(ld<i64>(a.c0[0], r)); break;
        case 1: v = norm(ld<double>(a.c0[0], r)); break;
        case 2: v = norm(ld<i32>(a.c0[0], r)); break;
        case 3: v = ((const u32 *)a.t[0])[(i64)ld<u32>(a.c0[0], r) - a.x[2]]; break;
        case 5: v = w_lo(ld<i128>(a.c0[0], r)); break;
        case 6: v = norm_hi(ld<i128>(a.c0[0], r)); break;
        default: v = ld<u8>(a.c0[0], r); break;
        }
        out[i] = v ^ flip;
    }
}

__device__ __forceinline__ u64 part_mix(u64 h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

template <int TILE> __device__ __forceinline__ void part_flags(const Args &a)
{
    int nc = (int)a.x[0];
    u64 nranks = (u64)a.x[1], want = (u64)a.x[2];
    u8 *out = (u8 *)a.p[0];
    RF_FOR(i, a.n)
    {
        u64 h = 0x9e3779b97f4a7c15ull;
        for (int j = 0; j < nc; j++) {
            u64 v = 0;
            if (a.c0[j]) {
                switch (a.k[j]) {
                case 1: {
                    double d = ((const double *)a.c0[j])[i];
                    /* -0 is 0, and every NaN one value (0.0 / 0.0's sign bit is set): the
                    ** device copy of common/rf_value.h's rf_val_float_hash_bits */
                    v = d == 0 ? 0 : d != d ? 0x7ff8000000000000ull : dbits(d);
                    break;
                }
                case 2: v = (u64)(i64)((const i32 *)a.c0[j])[i]; break;
                case 3: v = ((const u8 *)a.c0[j])[i]; break;
                case 4: v = ((const u64 *)a.c0[j])[2 * i]; break;
                default: v = ((const u64 *)a.c0[j])[i]; break;
                }
            }
            h = part_mix(h ^ part_mix(v)) + (u64)j;
        }
        out[i] = h % nranks == want;
    }
}

} // namespace rf

#endif
