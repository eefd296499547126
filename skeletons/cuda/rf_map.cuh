// skeletons/cuda/rf_map.cuh: the skeleton of MAP, JOIN_MAP and GATHER_MAP:
// filter, then computed output columns, rows kept in input order.
//
// Owns the two passes. K is the kernel's expression class made by the code
// generator, with
//   static bool filter(const Args &a, i64 r, bool &ok);       // row r passes?
//   static void outs(const Args &a, i64 r, i64 w, bool &ok);   // writes row w
//   static bool repeat(const Args &a, i64 r, bool f);         // row r repeats an earlier row
// (repeat: runs_repeat over the output's columns, for a map whose output
// only a unique reads, fuse.c rf_gpu_dedupe_cols; false for other maps).
// where ok turns false on a run-time error (overflow, division by zero, a
// date out of range); the pass then records r in the error word, and the
// host re-evaluates that one row on the CPU for the exact message.
//   map_flags  n rows; p[0] u8 flags out; p[1] error word; x[5] > 0: a row
//              that repeats an earlier one gets flag 0 (the walk's limit;
//              p[3] its status word, as for runs_first)
//   map_write  n rows; p[0] flags (NULL: every row passes); p[2] i64 write
//              positions (the exclusive scan of the flags; NULL: w = r);
//              p[1] error word; o[] output columns
//   map_onepass (the default for maps; RF_GPU_ONEPASS: rf_gpu_codegen.h) both
//              passes in one kernel, named *_smem (it synchronizes its
//              block): a block takes tiles of 4 x TILE rows in order from a
//              counter, scans its rows' flags in shared memory, and finds the
//              rows before its tile by a decoupled look-back (rf_base.cuh:
//              each tile publishes its count, then its inclusive prefix; a
//              tile adds up its predecessors' words until one holds a
//              prefix), so rows keep the input's order without a flags array
//              or a scan.
//              p[0] u64 tile words (one a tile, zero), p[2] u64 [0] the tile
//              counter, [1] rows written (both zero), p[1] error word,
//              p[3]/x[5] the walk as for map_flags; o[] output columns with
//              room for n rows
//   fused_onepass (RF_GPU_ONEPASS=1 only: slower for p2's join; *_smem) a fused
//              kernel's (codegen.c) flags or count pass, scans and write pass
//              in one: each thread counts its four consecutive rows' rows per
//              written output (G::count1; a fused join walks each left row's
//              matches), the block scans them, the tile finds the rows before
//              it by the look-back, and the thread looks at its rows again,
//              from cache, to write them (G::emit1). Outputs have room for n
//              rows each: a row whose rows would go beyond is not written,
//              and the host, seeing more than n rows (a join), runs the
//              passes instead. p[8] u64 tile words (NM a tile: output s's at
//              s * tiles + t), p[9] u64 [0] the tile counter, [1 + s] the rows
//              of output s (all zero); the rest as the flags pass has them
// Sides: c0/r0 (and c1/r1 for joins) as in rf::Args. TILE is the block size.
#ifndef RF_MAP_CUH
#define RF_MAP_CUH

namespace rf {

template <class K, int TILE> __device__ __forceinline__ void map_flags(const Args &a)
{
    u8 *flags = (u8 *)a.p[0];
    RF_FOR(r, a.n)
    {
        bool ok = true;
        bool f = K::filter(a, r, ok);
        if (!ok) {
            fail(a.p[1], r);
            f = false;
        }
        if (a.x[5] > 0 && K::repeat(a, r, f)) f = false;
        flags[r] = f ? 1 : 0;
    }
}

template <class K, int TILE> __device__ __forceinline__ void map_write(const Args &a)
{
    const u8 *flags = (const u8 *)a.p[0];
    const i64 *pos = (const i64 *)a.p[2];
    RF_FOR(r, a.n)
    {
        if (flags && !flags[r]) continue;
        bool ok = true;
        K::outs(a, r, pos ? pos[r] : r, ok);
        if (!ok) fail(a.p[1], r);
    }
}

template <class K, int TILE> __device__ __forceinline__ void map_onepass(const Args &a)
{
    // four 16-bit counts a thread (rows q * TILE + thread, q < 4): one scan
    // numbers all four rounds of the tile
    __shared__ u64 s[TILE];
    __shared__ u64 tile_s, base_s;
    u64 *tiles = (u64 *)a.p[0];
    u64 *ctl = (u64 *)a.p[2];
    const i64 T4 = 4 * (i64)TILE, ntiles = tiles_of<TILE>(a.n);
    const int me = (int)threadIdx.x;
    for (i64 t; (t = next_tile(&ctl[0], &tile_s, ntiles)) >= 0;) {
        const i64 r0 = t * T4 + me;
        bool f[4];
        u64 mine = 0;
        for (int q = 0; q < 4; q++) {
            const i64 r = r0 + q * TILE;
            f[q] = false;
            if (r < a.n) {
                bool ok = true;
                f[q] = K::filter(a, r, ok);
                if (!ok) {
                    fail(a.p[1], r);
                    f[q] = false;
                }
                if (a.x[5] > 0 && K::repeat(a, r, f[q])) f[q] = false;
            }
            mine |= (u64)(f[q] ? 1 : 0) << (16 * q);
        }
        u64 all = 0;
        const u64 before = block_scan<TILE>(s, mine, &all) - mine;
        if (me == 0) {
            u64 agg = 0;
            for (int q = 0; q < 4; q++) agg += (all >> (16 * q)) & 0xffff;
            const u64 base = tile_prefix(tiles, t, agg);
            if (t == ntiles - 1) ctl[1] = base + agg;
            base_s = base;
        }
        __syncthreads();
        i64 w = (i64)base_s;
        for (int q = 0; q < 4; q++) {
            if (f[q]) {
                const i64 r = r0 + q * TILE;
                bool ok = true;
                K::outs(a, r, w + (i64)((before >> (16 * q)) & 0xffff), ok);
                if (!ok) fail(a.p[1], r);
            }
            w += (i64)((all >> (16 * q)) & 0xffff);
        }
        __syncthreads(); // s, tile_s and base_s serve the next tile
    }
}

template <class G, int NM, int TILE> __device__ __forceinline__ void fused_onepass(const Args &a)
{
    __shared__ u64 s[TILE];
    __shared__ u64 tile_s;
    __shared__ u64 base_s[NM];
    u64 *tiles = (u64 *)a.p[8];
    u64 *ctl = (u64 *)a.p[9];
    const i64 T4 = 4 * (i64)TILE, ntiles = tiles_of<TILE>(a.n);
    const int me = (int)threadIdx.x;
    for (i64 t; (t = next_tile(&ctl[0], &tile_s, ntiles)) >= 0;) {
        // four consecutive rows a thread: one scan a written output numbers them
        const i64 r0 = t * T4 + 4 * (i64)me;
        i64 c[4][NM], w[NM];
        for (int k = 0; k < NM; k++) w[k] = 0;
        for (int q = 0; q < 4; q++) {
            if (r0 + q < a.n)
                G::count1(a, r0 + q, c[q]);
            else
                for (int k = 0; k < NM; k++) c[q][k] = 0;
            for (int k = 0; k < NM; k++) w[k] += c[q][k];
        }
        for (int k = 0; k < NM; k++) {
            u64 all = 0;
            w[k] = (i64)(block_scan<TILE>(s, (u64)w[k], &all) - (u64)w[k]);
            if (me == 0) {
                const u64 base = tile_prefix(tiles + k * ntiles, t, all);
                if (t == ntiles - 1) ctl[1 + k] = base + all;
                base_s[k] = base;
            }
        }
        __syncthreads();
        for (int k = 0; k < NM; k++) w[k] += (i64)base_s[k];
        for (int q = 0; q < 4; q++) {
            bool any = false, fits = true;
            for (int k = 0; k < NM; k++) {
                any |= c[q][k] > 0;
                fits &= w[k] + c[q][k] <= a.n;
            }
            if (any && fits) G::emit1(a, r0 + q, w);
            for (int k = 0; k < NM; k++) w[k] += c[q][k];
        }
        __syncthreads(); // tile_s and base_s serve the next tile
    }
}

} // namespace rf

#endif
