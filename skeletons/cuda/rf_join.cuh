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

// One left row's probe in three steps, so that a thread can have several
// rows' probes under way at once (the loads of each step depend on the
// step before; done row by row, a thread waits on each in turn):
//   start  the row's hash and where its bucket starts (k < 0: empty)
//   peek   the bucket's first entry: its hash e and right row j
//   walk   calls f(j) for every right row j matching left row i, in
//          ascending j (f returns false to stop)
// hs, js, start, mask, m: the build side (hashes sorted by bucket, their
// rows, the bucket starts, right rows); lk / rk the key columns.
template <class KS> struct probe {
    u64 h, e;
    i64 k, j;
    __device__ __forceinline__ void start(const void *const *lk, const i64 *starts, u64 mask, i64 i)
    {
        h = KS::jhash(lk, i);
        k = starts[h & mask];
    }
    __device__ __forceinline__ void none() { k = -1; }
    __device__ __forceinline__ void peek(const u64 *hs, const i64 *js, i64 m)
    {
        bool in = k >= 0 && k < m;
        e = in ? hs[k] : 0;
        j = in ? js[k] : 0;
    }
    template <class F>
    __device__ __forceinline__ void walk(const void *const *lk, const void *const *rk, const u64 *hs, const i64 *js,
                                         u64 mask, i64 m, i64 i, F &f)
    {
        if (k < 0 || k >= m) return;
        const u64 b = h & mask;
        if ((e & mask) != b) return;
        if (e == h && KS::eq(lk, i, rk, j) && !f(j)) return;
        for (i64 q = k + 1; q < m && (hs[q] & mask) == b; q++) {
            if (hs[q] != h) continue;
            i64 r = js[q];
            if (KS::eq(lk, i, rk, r) && !f(r)) return;
        }
    }
};

// Calls f(j) for every right row j matching left row i, in ascending j.
template <class KS, class F>
__device__ __forceinline__ void join_matches_k(const void *const *lk, const void *const *rk, const u64 *hs,
                                               const i64 *js, const i64 *start, u64 mask, i64 m, i64 i, F &f)
{
    probe<KS> p;
    p.start(lk, start, mask, i);
    p.peek(hs, js, m);
    p.walk(lk, rk, hs, js, mask, m, i, f);
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
