// skeletons/cuda/rf_join.cuh: the skeletons of JOIN_INDEX and ANTI_INDEX:
// a hash join that builds on the right input and probes with the left one.
//
// Owns the build and probe passes. KS is a key class made by the code
// generator for one tuple of key types, with
//   static u64 jhash(const void *const *cols, i64 r);
//   static bool eq(const void *const *a, i64 i, const void *const *b, i64 j);
// Build: join_hash gives each right row its hash; the host radix-sorts the
// (hash, row) pairs on the hash's low bits (its bucket: hash & mask, about
// two buckets per row), which keeps the rows of one bucket in ascending
// order; join_runs writes where each bucket starts (-1: empty). A probe reads
// its bucket's start and walks the bucket: one random read to find it, and
// the sort needs only log2(buckets) bits, not 64. Probe: join_count counts each left
// row's matches, the host scans the counts into write positions, join_write
// writes the pairs. So the pairs come out ordered by left row, then right
// row, exactly as on the CPU, whatever the thread schedule.
//   join_hash   n right rows; c1 right keys; p[0] u64 hashes out; p[1] i64 rows out
//   join_runs   n right rows; p[0] hashes sorted by bucket; p[1] i64 bucket
//               starts (cleared to -1 by the host); x[0] bucket mask
//   join_count  n left rows; m right rows; c0/c1 keys; p[0] sorted hashes;
//               p[1] sorted rows; p[2] bucket starts; x[0] mask; p[4] i64 counts out
//   join_write  as join_count, plus p[5] i64 positions; p[6], p[7] i64 pairs out
//   anti_flags  as join_count, but p[4] u8 out: 1 where the left row has no match
// A fused kernel (codegen.c) probes with join_matches_k and consumes each
// pair at once instead of writing it.
// The hash (KS::jhash) keeps locality: it is a mix of the key without the
// first column's low RF_JOIN_RUN_BITS bits, plus those bits. Keys that differ
// only there (an aligned run of 256 values) get consecutive buckets, so the
// probes of left rows ordered by the key (lineitem by l_orderkey against
// orders) read neighbouring bucket starts and build entries, not one random
// sector each; runs of values are still scattered over the table as a whole.
#ifndef RF_JOIN_CUH
#define RF_JOIN_CUH

// the key bits that keep their order in the join's hash (KS::jhash)
#define RF_JOIN_RUN_BITS 8

namespace rf {

template <class KS, int TILE> __device__ __forceinline__ void join_hash(const Args &a)
{
    u64 *h = (u64 *)a.p[0];
    i64 *rows = (i64 *)a.p[1];
    RF_FOR(r, a.n)
    {
        h[r] = KS::jhash(a.c1, r);
        rows[r] = r;
    }
}

template <int TILE> __device__ __forceinline__ void join_runs(const Args &a)
{
    const u64 *hs = (const u64 *)a.p[0];
    i64 *start = (i64 *)a.p[1];
    u64 mask = (u64)a.x[0];
    RF_FOR(i, a.n)
    {
        u64 b = hs[i] & mask;
        if (i == 0 || (hs[i - 1] & mask) != b) start[b] = i;
    }
}

// Calls f(j) for every right row j matching left row i, in ascending j:
// lk / rk the key columns of the two sides; hs, js, start, mask, m the
// build side (hashes sorted by bucket, their rows, the bucket starts, right rows).
template <class KS, class F>
__device__ __forceinline__ void join_matches_k(const void *const *lk, const void *const *rk, const u64 *hs,
                                               const i64 *js, const i64 *start, u64 mask, i64 m, i64 i, F &f)
{
    u64 h = KS::jhash(lk, i), b = h & mask;
    i64 k = start[b];
    if (k < 0) return;
    for (; k < m && (hs[k] & mask) == b; k++) {
        if (hs[k] != h) continue;
        i64 j = js[k];
        if (KS::eq(lk, i, rk, j) && !f(j)) return;
    }
}

template <class KS, class F> __device__ __forceinline__ void join_matches(const Args &a, i64 i, F &f)
{
    join_matches_k<KS>(a.c0, a.c1, (const u64 *)a.p[0], (const i64 *)a.p[1], (const i64 *)a.p[2], (u64)a.x[0],
                       a.m, i, f);
}

struct count_f {
    i64 n;
    __device__ __forceinline__ bool operator()(i64) { n++; return true; }
};
struct any_f {
    bool any;
    __device__ __forceinline__ bool operator()(i64) { any = true; return false; }
};
struct write_f {
    i64 *a, *b, w, i;
    __device__ __forceinline__ bool operator()(i64 j)
    {
        a[w] = i;
        b[w] = j;
        w++;
        return true;
    }
};

template <class KS, int TILE> __device__ __forceinline__ void join_count(const Args &a)
{
    i64 *cnt = (i64 *)a.p[4];
    RF_FOR(i, a.n)
    {
        count_f f = {0};
        join_matches<KS>(a, i, f);
        cnt[i] = f.n;
    }
}

template <class KS, int TILE> __device__ __forceinline__ void join_write(const Args &a)
{
    const i64 *pos = (const i64 *)a.p[5];
    RF_FOR(i, a.n)
    {
        write_f f = {(i64 *)a.p[6], (i64 *)a.p[7], pos[i], i};
        join_matches<KS>(a, i, f);
    }
}

template <class KS, int TILE> __device__ __forceinline__ void anti_flags(const Args &a)
{
    u8 *flags = (u8 *)a.p[4];
    RF_FOR(i, a.n)
    {
        any_f f = {false};
        join_matches<KS>(a, i, f);
        flags[i] = f.any ? 0 : 1;
    }
}

} // namespace rf

#endif
