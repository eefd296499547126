// skeletons/cuda/rf_reduce.cuh: the skeleton of REDUCE: per-group count,
// exact 128-bit sums, min and max, and the final conversion with the CPU's
// overflow rules (rf_value.h: total of ints must fit an int, decimals stay
// in [-INT64_MAX, INT64_MAX], avg rounds half away from zero).
//
// Owns the accumulation protocols (and the grouped totals' tables of a fused
// kernel, gt_*, below). Every accumulator is an integer updated by
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
//   red_mm_w    min/max of wide values: ...; c0[0] wide values; x[1] the pass
//               (0 high words, 1 low words); p[1] u64[2m] (see the kernel)
//   red_sum_w   ...; c0[0] wide values (16 bytes); p[1] u64[3m] sums (low,
//               middle, top per group: 192 bits, exact for any number of rows)
//   red_min/max ...; c0[0] values; x[0] kind (0 i64, 2 i32, 3 u32 via ranks
//               t[0] from x[2], 4 u8); p[1] u64 keys (set to ~0 / 0 first)
//   red_final   m groups; x[0] op (0 count, 1 int total, 2 decimal total,
//               3 int avg, 4 decimal avg, 5 min, 6 max, 7 a total of decimals
//               as a wide decimal: the sum whole, 16 bytes; over wide values, from
//               red_sum_w's 192 bits: 8 the total, wide, 9 avg, 10 the total as
//               a decimal, each checked against its range; 11 red_mm_w's min or
//               max, wide); x[1] kind; p[1] the
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

// A wide value added to a 192-bit accumulator (low, middle, top words), the
// value sign-extended: each word's atomic add carries into the next exactly
// as add128 does, so the sum of any number of wide values is exact whatever
// the order of the adds, and red_final checks it against the wide range once.
__device__ __forceinline__ void add192(u64 *w, u64 vlo, u64 vhi)
{
    u64 old = atomicAdd(&w[0], vlo);
    u64 c = old + vlo < old ? 1ull : 0ull;
    u64 mid = vhi + c;
    u64 c2 = mid < vhi ? 1ull : 0ull; /* vhi all ones and a carry: the middle word is unchanged, the top takes it */
    if (mid) {
        u64 o2 = atomicAdd(&w[1], mid);
        c2 += o2 + mid < o2 ? 1ull : 0ull;
    }
    u64 t = ((i64)vhi < 0 ? ~0ull : 0ull) + c2;
    if (t) atomicAdd(&w[2], t);
}

template <int TILE> __device__ __forceinline__ void red_sum_w(const Args &a)
{
    const i64 *gid = (const i64 *)a.p[0];
    const u64 *v = (const u64 *)a.c0[0]; /* (low, high) words of each wide value */
    u64 *acc = (u64 *)a.p[1];
    RF_FOR(i, a.n)
    {
        i64 g = gid ? gid[i] : 0;
        add192(&acc[3 * g], v[2 * i], v[2 * i + 1]);
    }
}

// min and max of wide values in two passes over the rows: x[1] 0, the high
// words' normalized image (p[1] u64[2m]: word 2g); x[1] 1, the low words of
// the rows whose high word is the group's (word 2g + 1). The words start at
// 0 (max) or all ones (min).
template <int TILE, bool MAX> __device__ __forceinline__ void red_mm_w(const Args &a)
{
    const i64 *gid = (const i64 *)a.p[0];
    const u64 *v = (const u64 *)a.c0[0];
    u64 *acc = (u64 *)a.p[1];
    bool lo = a.x[1] != 0;
    RF_FOR(i, a.n)
    {
        i64 g = gid ? gid[i] : 0;
        u64 h = v[2 * i + 1] ^ (1ull << 63);
        if (lo && h != acc[2 * g]) continue;
        u64 k = lo ? v[2 * i] : h;
        if (MAX)
            atomicMax(&acc[2 * g + lo], k);
        else
            atomicMin(&acc[2 * g + lo], k);
    }
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
        if (op == 11) {
            // red_mm_w's words: the high word's image, then the low word
            ((i128 *)a.o[0])[g] = w_make(denorm_i64(acc[2 * g]), acc[2 * g + 1]);
        } else if (op >= 8) {
            // a sum of wide values, 192 bits: within the wide range, or the error
            const u64 *w = &acc[3 * g];
            i128 s = w_make((i64)w[1], w[0]);
            ok = w[2] == ((i64)w[1] < 0 ? ~0ull : 0ull) && s >= -RF_W_MAX;
            if (ok && op == 8) {
                ((i128 *)a.o[0])[g] = s;
                continue;
            }
            if (ok) ok = op == 9 ? w_avg(s, (i64)cnt[g], &out) : dec_res(s, &out);
            if (!ok) {
                fail(a.p[3], g);
                out = 0;
                if (op == 8) {
                    ((i128 *)a.o[0])[g] = 0;
                    continue;
                }
            }
            ((i64 *)a.o[0])[g] = out;
        } else if (op == 7) {
            // a sum of at most 2^63 decimals is within the wide range: no check
            ((i128 *)a.o[0])[g] = w_make((i64)acc[2 * g + 1], acc[2 * g]);
        } else if (op >= 1 && op <= 4) {
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

// Grouped totals of a fused kernel (rf_gpu_codegen.h, rf_gpu_ftotal): a
// table [count, heads[H], records[G * RW]] in shared memory per block, and
// one [status, count, heads, records] in global memory the blocks merge into.
// A head is 0 (free), GT_CLAIM while its record is written, GT_FULL when the
// table had no record left, else 1 + the record's number; a record is [keys
// (NK), first row, count, (low, high) per sum], numbered in order of
// creation. Everything is added by atomics, and the first row is a minimum:
// the merged table does not depend on the order rows arrive in. A table that
// runs out of records raises the status word, and the host then discards it.
#define RF_GT_CLAIM (~0ull)
#define RF_GT_FULL (~1ull)

template <int NK> __device__ __forceinline__ u64 gt_hash(const u64 *k)
{
    u64 h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < NK; i++) {
        h = (h ^ k[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    return h;
}

// The record of the group of keys k (created with first row `first` where
// new), or -1 when the table holds no more records.
template <int NK, int RW, int H, int G>
__device__ __forceinline__ int gt_find(u64 *cnt, u64 *heads, u64 *recs, const u64 *k, u64 first)
{
    u64 h = gt_hash<NK>(k);
    for (int probe = 0; probe < H; probe++) {
        u64 *hd = &heads[(h + (u64)probe) & (u64)(H - 1)];
        u64 v = *(volatile u64 *)hd;
        if (v == 0) {
            v = atomicCAS(hd, 0ull, RF_GT_CLAIM);
            if (v == 0) {
                u64 d = atomicAdd(cnt, 1ull);
                if (d >= (u64)G) {
                    *(volatile u64 *)hd = RF_GT_FULL;
                    return -1;
                }
                volatile u64 *rec = recs + d * RW;
                for (int i = 0; i < NK; i++) rec[i] = k[i];
                rec[NK] = first;
                __threadfence();
                *(volatile u64 *)hd = d + 1;
                return (int)d;
            }
        }
        while (v == RF_GT_CLAIM) v = *(volatile u64 *)hd;
        if (v == RF_GT_FULL) return -1;
        const volatile u64 *rec = recs + (v - 1) * RW;
        bool eq = true;
        for (int i = 0; i < NK; i++) eq = eq && rec[i] == k[i];
        if (eq) return (int)(v - 1);
    }
    return -1;
}

// A thread's sums of its rows of up to C groups, in registers: a cache in
// front of the block's table (with a handful of groups, as in a report by
// two flags, the table's atomics on a few words would serialize the warp).
// An entry holds its group's keys (as KT: u32 where every group column fits
// 32 bits), its record in the table, its rows and a 64-bit partial sum per
// summed column. A row whose keys an entry holds is plain adds, predicated
// per entry: no hash, no shared memory, no atomics, no branch. Every value
// added there is in [-2^(63 - SPAN), 2^(63 - SPAN)), and after 2^SPAN rows
// the entries spill to the table and are freed, so a partial sum stays in
// [-2^63, 2^63) and never wraps (q01's values are below 2^37, the bound is
// 2^51); freeing them lets the entries follow the groups the thread meets.
// A row with a larger value goes to the table's exact 128-bit sums by
// itself, and so does a row of a new group while every entry is taken;
// otherwise a new group finds (or makes) its record and takes the next free
// entry. A group's first row is a minimum over the rows that found its
// record: a thread's rows ascend, so those an entry took cannot lower it.
// SPAN is a parameter for the unit test's sake (test_gt_cache.cpp: spills
// every 8 rows); kernels use RF_GT_SPAN.
#define RF_GT_SPAN 12
template <int NK, int NS, int H, int G, int C, class KT, int SPAN = RF_GT_SPAN> struct gt_cache {
    static constexpr int RW = NK + 2 + 2 * NS;
    KT k[C][NK];
    int d[C]; // the record of entry i < used
    u32 n[C];
    i64 s[C][NS > 0 ? NS : 1];
    int used; // entries taken (the first ones)
    u32 rows; // rows added to the entries since they were last freed
    __device__ __forceinline__ void init()
    {
        used = 0;
        rows = 0;
        for (int i = 0; i < C; i++) {
            d[i] = 0;
            n[i] = 0;
            for (int j = 0; j < NK; j++) k[i][j] = 0;
            for (int j = 0; j < NS; j++) s[i][j] = 0;
        }
    }
    static __device__ __forceinline__ u64 *rec(u64 *tab, int e) { return tab + 1 + H + (i64)e * RW; }
    static __device__ __forceinline__ void add(u64 *r, int j, i64 x)
    {
        if (x) add128(&r[NK + 2 + 2 * j], &r[NK + 3 + 2 * j], (u64)x, x < 0 ? ~0ull : 0ull);
    }
    // the record of keys gk with r among its rows (made where new), or -1
    // when the table is full (then *status is raised)
    static __device__ __forceinline__ int find(u64 *tab, u64 *status, const u64 *gk, i64 r)
    {
        int e = gt_find<NK, RW, H, G>(tab, tab + 1, tab + 1 + H, gk, (u64)r);
        if (e < 0) {
            *(volatile u64 *)status = 1;
            return -1;
        }
        u64 *rc = rec(tab, e);
        if ((u64)r < rc[NK]) atomicMin(&rc[NK], (u64)r);
        return e;
    }
    // every entry into the table, zeroed and freed
    __device__ __forceinline__ void flush(u64 *tab)
    {
#pragma unroll
        for (int i = 0; i < C; i++) {
            if (i < used) {
                u64 *rc = rec(tab, d[i]);
                if (n[i]) atomicAdd(&rc[NK + 1], (u64)n[i]);
                for (int j = 0; j < NS; j++) add(rc, j, s[i][j]);
            }
            n[i] = 0;
            for (int j = 0; j < NS; j++) s[i][j] = 0;
        }
        used = 0;
        rows = 0;
    }
    // a row by itself into its record
    static __device__ __forceinline__ void direct(u64 *tab, u64 *status, const u64 *gk, i64 r, const i64 *v)
    {
        int e = find(tab, status, gk, r);
        if (e < 0) return;
        u64 *rc = rec(tab, e);
        atomicAdd(&rc[NK + 1], 1ull);
        for (int j = 0; j < NS; j++) add(rc, j, v[j]);
    }
    // row r of keys ck (gk: widened to u64, as the table holds them) and
    // summed values v
    __device__ __forceinline__ void row(u64 *tab, u64 *status, const KT *ck, const u64 *gk, i64 r, const i64 *v)
    {
        u64 wide = 0;
#pragma unroll
        for (int j = 0; j < NS; j++) wide |= (u64)(v[j] ^ (v[j] >> 63)) >> (63 - SPAN);
        int hit = -1;
#pragma unroll
        for (int i = 0; i < C; i++) {
            bool eq = i < used;
#pragma unroll
            for (int j = 0; j < NK; j++) eq = eq && k[i][j] == ck[j];
            if (eq) hit = i;
        }
        if (wide || (hit < 0 && used == C)) {
            direct(tab, status, gk, r, v);
            return;
        }
        if (hit < 0) {
            int e = find(tab, status, gk, r);
            if (e < 0) return;
            hit = used++;
#pragma unroll
            for (int i = 0; i < C; i++)
                if (i == hit) {
                    d[i] = e;
                    for (int j = 0; j < NK; j++) k[i][j] = ck[j];
                }
        }
#pragma unroll
        for (int i = 0; i < C; i++)
            if (i == hit) {
                n[i]++;
#pragma unroll
                for (int j = 0; j < NS; j++) s[i][j] = (i64)((u64)s[i][j] + (u64)v[j]);
            }
        if (++rows == (1u << SPAN)) flush(tab);
    }
};

// The block's table tab into the global one out (after a barrier).
template <int NK, int NS, int H, int G> __device__ __forceinline__ void gt_flush(const u64 *tab, u64 *out)
{
    constexpr int RW = NK + 2 + 2 * NS;
    if (tab[0] > (u64)G) return; /* it ran out of records: the status word says so */
    u64 n = tab[0];
    for (u64 d = threadIdx.x; d < n; d += blockDim.x) {
        const u64 *rec = tab + 1 + H + d * RW;
        int e = gt_find<NK, RW, H, G>(out + 1, out + 2, out + 2 + H, rec, rec[NK]);
        if (e < 0) {
            *(volatile u64 *)out = 1;
            continue;
        }
        u64 *o = out + 2 + H + (i64)e * RW;
        atomicMin(&o[NK], rec[NK]);
        atomicAdd(&o[NK + 1], rec[NK + 1]);
        for (int s = 0; s < NS; s++)
            if (rec[NK + 2 + 2 * s] || rec[NK + 3 + 2 * s])
                add128(&o[NK + 2 + 2 * s], &o[NK + 3 + 2 * s], rec[NK + 2 + 2 * s], rec[NK + 3 + 2 * s]);
    }
}

} // namespace rf

#endif
