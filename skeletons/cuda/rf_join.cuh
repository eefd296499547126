// skeletons/cuda/rf_join.cuh: the skeletons of JOIN_INDEX and ANTI_INDEX:
// a hash join that builds on the right input and probes with the left one.
//
// Owns the build and probe passes. KS is a key class made by the code
// generator for one tuple of key types, with
//   static u64 jhash(const void *const *cols, i64 r, u64 base, i64 rot1);
//   static bool eq(const void *const *a, i64 i, const void *const *b, i64 j);
//   static u64 k0(const void *const *cols, i64 r);  (the first key, in order)
// Build: join_hash gives each right row its hash; the host radix-sorts the
// (hash, row) pairs on the hash's low bits (its bucket: hash & mask, about
// two buckets per row), which keeps the rows of one bucket in ascending
// order; join_runs writes where each bucket starts (-1: empty). A probe reads
// its bucket's start and walks the bucket: one random read to find it, and
// the sort needs only log2(buckets) bits, not 64. Probe: join_count counts each left
// row's matches, the host scans the counts into write positions, join_write
// writes the pairs. So the pairs come out ordered by left row, then right
// row, exactly as on the CPU, whatever the thread schedule.
// An ordered build skips the sort: where the right side has one key column,
// already in ascending order (orders, customer, part, supplier as loaded,
// and what filters keep of them), and the keys span few enough values
// (join_range tells), the hash is the key less the smallest key, rotated
// right by rot bits: h & mask is (k - base) >> rot, which grows with the
// row, so the rows are already in bucket order and each row is its own
// entry (no row array: the entry's index is the right row). Every bucket
// holds at most 2^rot distinct keys (the host keeps rot <= 4: rt_gpu_exec.c
// ORDERED_MAX_ROT). The rotation keeps every bit of the key, so equal
// hashes mean equal keys (a probe compares the hashes only, and loads no
// right key), and a probe's key outside the build's range finds no equal
// hash (only, at worst, a bucket to look in). The host
// passes the hash's parameters to every build and probe launch in x[0..2]
// (struct jh); x[2] == 0 is the mixing hash.
//   join_range_smem  n right rows; c1 right keys; p[0] u64[3]: the least and
//               greatest first key (k0), and 1 if a row's is below the row
//               before's (set to ~0, 0, 0 by the host)
//   join_hash   n right rows; c1 right keys; x[0..2] jh; p[0] u64 hashes
//               out; p[1] i64 rows out (null for an ordered build)
//   join_runs   n right rows; p[0] hashes sorted by bucket; p[1] i64 bucket
//               starts (cleared to -1 by the host); x[0] bucket mask
//   join_count  n left rows; m right rows; c0/c1 keys; p[0] sorted hashes;
//               p[1] sorted rows (null: entry q is row q); p[2] bucket
//               starts; x[0..2] jh; p[4] i64 counts out
//   join_write  as join_count, plus p[5] i64 positions; p[6], p[7] i64 pairs out
//   anti_flags  as join_count, but p[4] u8 out: 1 where the left row has no match
// A fused kernel (codegen.c) probes with join_matches_k and consumes each
// pair at once instead of writing it.
// The mixing hash (KS::jhash, x[2] == 0) keeps some locality: it is a mix of
// the key without the first column's low RF_JOIN_RUN_BITS bits, plus those
// bits. Keys that differ only there (an aligned run of 256 values) get
// consecutive buckets, so the probes of left rows ordered by the key read
// neighbouring bucket starts and build entries, not one random sector each;
// runs of values are still scattered over the table as a whole.
#ifndef RF_JOIN_CUH
#define RF_JOIN_CUH

// the key bits that keep their order in the join's hash (KS::jhash)
#define RF_JOIN_RUN_BITS 8

namespace rf {

__device__ __forceinline__ u64 rotr(u64 x, i64 s) { return s ? (x >> s) | (x << (64 - s)) : x; }

// The join hash's parameters, from x[0..2] of a build's or probe's launch:
// the bucket mask; for an ordered build the smallest key and 1 + the
// rotation (rot1 == 0: the mixing hash).
struct jh {
    u64 mask, base;
    i64 rot1;
    static __device__ __forceinline__ jh of(const Args &a)
    {
        jh p;
        p.mask = (u64)a.x[0];
        p.base = (u64)a.x[1];
        p.rot1 = a.x[2];
        return p;
    }
};

template <class KS, int TILE> __device__ __forceinline__ void join_range_smem(const Args &a)
{
    __shared__ u64 s[3];
    u64 lo = ~0ull, hi = 0, down = 0;
    RF_FOR(r, a.n)
    {
        const u64 k = KS::k0(a.c1, r);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
        if (r > 0 && KS::k0(a.c1, r - 1) > k) down = 1;
    }
    if (threadIdx.x == 0) {
        s[0] = ~0ull;
        s[1] = 0;
        s[2] = 0;
    }
    __syncthreads();
    atomicMin(&s[0], lo);
    atomicMax(&s[1], hi);
    if (down) atomicMax(&s[2], down);
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 *w = (u64 *)a.p[0];
        atomicMin(&w[0], s[0]);
        atomicMax(&w[1], s[1]);
        if (s[2]) atomicMax(&w[2], s[2]);
    }
}

template <class KS, int TILE> __device__ __forceinline__ void join_hash(const Args &a)
{
    u64 *h = (u64 *)a.p[0];
    i64 *rows = (i64 *)a.p[1];
    const jh p = jh::of(a);
    RF_FOR(r, a.n)
    {
        h[r] = KS::jhash(a.c1, r, p.base, p.rot1);
        if (rows) rows[r] = r;
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
// hs, js, start, m: the build side (hashes sorted by bucket, their rows or
// null where entry q is row q, the bucket starts, right rows); p the hash's
// parameters (mask: p.mask); lk / rk the key columns.
template <class KS> struct probe {
    u64 h, e;
    i64 k, j;
    __device__ __forceinline__ void start(const void *const *lk, const i64 *starts, const jh &p, i64 i)
    {
        h = KS::jhash(lk, i, p.base, p.rot1);
        k = starts[h & p.mask];
    }
    __device__ __forceinline__ void none() { k = -1; }
    __device__ __forceinline__ void peek(const u64 *hs, const i64 *js, i64 m)
    {
        bool in = k >= 0 && k < m;
        e = in ? hs[k] : 0;
        j = in ? (js ? js[k] : k) : 0;
    }
    template <class F>
    __device__ __forceinline__ void walk(const void *const *lk, const void *const *rk, const u64 *hs, const i64 *js,
                                         u64 mask, i64 m, i64 i, F &f)
    {
        if (k < 0 || k >= m) return;
        const u64 b = h & mask;
        // an ordered build (no row array) keeps a bucket's entries in key
        // order, and so in hash order (the rotated bits are the key's low
        // bits, the rest is the bucket): past h, no entry can match. Its
        // hash is a rotation of its one key's image, so an equal hash is an
        // equal key: no load of the right key after the hash's
        const bool ord = !js;
        i64 q = k, r = j;
        u64 x = e;
        for (;;) {
            // find the next match, then call f outside this loop: f is the
            // fused kernel's whole stage code, and called inside, a warp ran
            // it once for every step at which one of its rows matched (the
            // H100's p2 write pass at SF 7, four keys a bucket: 1.69 -> 1.04 ms)
            for (;;) {
                if ((x & mask) != b || (ord && x > h)) return;
                if (x == h) {
                    if (q != k) r = js ? js[q] : q; // the peek loaded entry k's
                    if (ord || KS::eq(lk, i, rk, r)) break;
                }
                if (++q >= m) return;
                x = hs[q];
            }
            if (!f(r) || ++q >= m) return;
            x = hs[q];
        }
    }
};

// Calls f(j) for every right row j matching left row i, in ascending j.
template <class KS, class F>
__device__ __forceinline__ void join_matches_k(const void *const *lk, const void *const *rk, const u64 *hs,
                                               const i64 *js, const i64 *start, const jh &hp, i64 m, i64 i, F &f)
{
    probe<KS> p;
    p.start(lk, start, hp, i);
    p.peek(hs, js, m);
    p.walk(lk, rk, hs, js, hp.mask, m, i, f);
}

template <class KS, class F> __device__ __forceinline__ void join_matches(const Args &a, i64 i, F &f)
{
    join_matches_k<KS>(a.c0, a.c1, (const u64 *)a.p[0], (const i64 *)a.p[1], (const i64 *)a.p[2], jh::of(a), a.m,
                       i, f);
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
