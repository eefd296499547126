// skeletons/cuda/rf_reduce.cuh: the skeleton of REDUCE: per-group count,
// exact 128-bit sums, min and max, and the final conversion with the CPU's
// overflow rules (rf_value.h: total of ints must fit an int, decimals stay
// in [-INT64_MAX, INT64_MAX], avg rounds half away from zero).
//
// Owns the accumulation protocols. Every accumulator is an integer updated by
// atomics, so results never depend on the order rows arrive in: counts in
// u64, sums as two u64 words (a carry from the low word goes to the high
// one; the high word also takes the sign extension), min and max as the
// normalized u64 image of the value. With few groups (m <= RF_SMALLG) the
// *_smem variants accumulate per block in shared memory first, and each
// thread sums its own rows of the first RF_TINYG groups in registers before
// that (a thread sees hundreds of rows: with a handful of groups, as in a
// report by two flags, atomics on a few words would otherwise serialize). Float
// aggregates run on the host (their result depends on the order of adds).
//   red_count   n rows; m groups; p[0] i64 group of each row (NULL: one group,
//               0, holding every row: no array of n zeros); p[1] u64 counts
//   red_sum     ...; c0[0] i64 values; p[1] u64[2m] sums (low, high per group)
//   red_min/max ...; c0[0] values; x[0] kind (0 i64, 2 i32, 3 u32 via ranks
//               t[0] from x[2], 4 u8); p[1] u64 keys (set to ~0 / 0 first)
//   red_final   m groups; x[0] op (0 count, 1 int total, 2 decimal total,
//               3 int avg, 4 decimal avg, 5 min, 6 max); x[1] kind; p[1] the
//               accumulator; p[2] counts; o[0] out; p[3] error word (the
//               lowest failing group); t[1] u32 code of each rank (strings)
#ifndef RF_REDUCE_CUH
#define RF_REDUCE_CUH

namespace rf {

#define RF_SMALLG 1024
#define RF_TINYG 8

__device__ __forceinline__ void add128(u64 *lo, u64 *hi, u64 vlo, u64 vhi)
{
    u64 old = atomicAdd(lo, vlo);
    u64 h = vhi + (old + vlo < old ? 1ull : 0ull);
    if (h) atomicAdd(hi, h);
}

__device__ __forceinline__ u64 mm_key(const Args &a, i64 r)
{
    switch (a.x[0]) {
    case 0: return norm(ld<i64>(a.c0[0], r));
    case 2: return norm(ld<i32>(a.c0[0], r));
    case 3: return ((const u32 *)a.t[0])[(i64)ld<u32>(a.c0[0], r) - a.x[2]];
    default: return ld<u8>(a.c0[0], r);
    }
}

template <int TILE> __device__ __forceinline__ void red_count(const Args &a)
{
    const i64 *gid = (const i64 *)a.p[0];
    u64 *cnt = (u64 *)a.p[1];
    RF_FOR(i, a.n) atomicAdd(&cnt[gid ? gid[i] : 0], 1ull);
}

template <int TILE> __device__ __forceinline__ void red_count_smem(const Args &a)
{
    __shared__ u64 s[RF_SMALLG];
    const i64 *gid = (const i64 *)a.p[0];
    u64 *cnt = (u64 *)a.p[1];
    u64 mine[RF_TINYG];
    for (int g = 0; g < RF_TINYG; g++) mine[g] = 0;
    for (i64 g = threadIdx.x; g < a.m; g += blockDim.x) s[g] = 0;
    __syncthreads();
    RF_FOR(i, a.n)
    {
        i64 g = gid ? gid[i] : 0;
        if (g < RF_TINYG)
            mine[g]++;
        else
            atomicAdd(&s[g], 1ull);
    }
    for (int g = 0; g < RF_TINYG && g < a.m; g++)
        if (mine[g]) atomicAdd(&s[g], mine[g]);
    __syncthreads();
    for (i64 g = threadIdx.x; g < a.m; g += blockDim.x)
        if (s[g]) atomicAdd(&cnt[g], s[g]);
}

template <int TILE> __device__ __forceinline__ void red_sum(const Args &a)
{
    const i64 *gid = (const i64 *)a.p[0];
    const i64 *v = (const i64 *)a.c0[0];
    u64 *acc = (u64 *)a.p[1];
    RF_FOR(i, a.n)
    {
        i64 g = gid ? gid[i] : 0, x = v[i];
        add128(&acc[2 * g], &acc[2 * g + 1], (u64)x, x < 0 ? ~0ull : 0ull);
    }
}

template <int TILE> __device__ __forceinline__ void red_sum_smem(const Args &a)
{
    __shared__ u64 s[2 * RF_SMALLG];
    const i64 *gid = (const i64 *)a.p[0];
    const i64 *v = (const i64 *)a.c0[0];
    u64 *acc = (u64 *)a.p[1];
    u64 lo[RF_TINYG], hi[RF_TINYG];
    for (int g = 0; g < RF_TINYG; g++) lo[g] = hi[g] = 0;
    for (i64 g = threadIdx.x; g < 2 * a.m; g += blockDim.x) s[g] = 0;
    __syncthreads();
    RF_FOR(i, a.n)
    {
        i64 g = gid ? gid[i] : 0, x = v[i];
        u64 xl = (u64)x, xh = x < 0 ? ~0ull : 0ull;
        if (g < RF_TINYG) {
            u64 o = lo[g];
            lo[g] = o + xl;
            hi[g] += xh + (lo[g] < o ? 1ull : 0ull);
        } else {
            add128(&s[2 * g], &s[2 * g + 1], xl, xh);
        }
    }
    for (int g = 0; g < RF_TINYG && g < a.m; g++)
        if (lo[g] || hi[g]) add128(&s[2 * g], &s[2 * g + 1], lo[g], hi[g]);
    __syncthreads();
    for (i64 g = threadIdx.x; g < a.m; g += blockDim.x)
        if (s[2 * g] || s[2 * g + 1]) add128(&acc[2 * g], &acc[2 * g + 1], s[2 * g], s[2 * g + 1]);
}

template <int TILE, bool MAX> __device__ __forceinline__ void red_mm(const Args &a)
{
    const i64 *gid = (const i64 *)a.p[0];
    u64 *keys = (u64 *)a.p[1];
    RF_FOR(i, a.n)
    {
        u64 k = mm_key(a, i);
        if (MAX)
            atomicMax(&keys[gid ? gid[i] : 0], k);
        else
            atomicMin(&keys[gid ? gid[i] : 0], k);
    }
}

template <int TILE, bool MAX> __device__ __forceinline__ void red_mm_smem(const Args &a)
{
    __shared__ u64 s[RF_SMALLG];
    const i64 *gid = (const i64 *)a.p[0];
    u64 *keys = (u64 *)a.p[1];
    for (i64 g = threadIdx.x; g < a.m; g += blockDim.x) s[g] = MAX ? 0ull : RF_EMPTY;
    __syncthreads();
    RF_FOR(i, a.n)
    {
        u64 k = mm_key(a, i);
        if (MAX)
            atomicMax(&s[gid ? gid[i] : 0], k);
        else
            atomicMin(&s[gid ? gid[i] : 0], k);
    }
    __syncthreads();
    for (i64 g = threadIdx.x; g < a.m; g += blockDim.x) {
        if (MAX)
            atomicMax(&keys[g], s[g]);
        else
            atomicMin(&keys[g], s[g]);
    }
}

template <int TILE> __device__ __forceinline__ void red_final(const Args &a)
{
    const u64 *acc = (const u64 *)a.p[1];
    const u64 *cnt = (const u64 *)a.p[2];
    // (2^127 - 1) / 10^6: the largest sum of ints whose scaling to a decimal
    // does not overflow 128 bits (the bound is symmetric: 2^127 is no multiple of 10^6)
    const i128 lim = (i128)(((~(unsigned __int128)0) >> 1) / (unsigned __int128)RF_DEC_ONE);
    RF_FOR(g, a.m)
    {
        i64 out = 0;
        bool ok = true;
        int op = (int)a.x[0];
        if (op >= 1 && op <= 4) {
            i128 s = (i128)(((unsigned __int128)acc[2 * g + 1] << 64) | (unsigned __int128)acc[2 * g]);
            if (op == 1) {
                ok = s <= (i128)RF_I64_MAX && s >= (i128)RF_I64_MIN;
                out = (i64)s;
            } else if (op == 2) {
                ok = dec_res(s, &out);
            } else if (op == 3) {
                ok = s <= lim && s >= -lim && dec_res(div_round(s * (i128)RF_DEC_ONE, (i128)cnt[g]), &out);
            } else {
                ok = dec_res(div_round(s, (i128)cnt[g]), &out);
            }
            if (!ok) {
                fail(a.p[3], g);
                out = 0;
            }
            ((i64 *)a.o[0])[g] = out;
        } else if (op == 0) {
            ((i64 *)a.o[0])[g] = (i64)cnt[g];
        } else {
            u64 k = acc[g];
            switch (a.x[1]) {
            case 0: ((i64 *)a.o[0])[g] = denorm_i64(k); break;
            case 2: ((i32 *)a.o[0])[g] = denorm_i32(k); break;
            case 3: ((u32 *)a.o[0])[g] = ((const u32 *)a.t[1])[k]; break;
            default: ((u8 *)a.o[0])[g] = (u8)k; break;
            }
        }
    }
}

} // namespace rf

#endif
