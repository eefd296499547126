// skeletons/cuda/rf_map.cuh: the skeleton of MAP, JOIN_MAP and GATHER_MAP:
// filter, then computed output columns, rows kept in input order.
//
// Owns its two kernels. K is the kernel's expression class made by the code
// generator, with
//   static bool filter(const Args &a, i64 r, bool &ok);       // row r passes?
//   static void outs(const Args &a, i64 r, i64 w, bool &ok);   // writes row w
//   static bool repeat(const Args &a, i64 r, bool f);         // row r repeats an earlier row
// (repeat: runs_repeat over the output's columns, for a map whose output
// only a unique reads, fuse.c rf_gpu_dedupe_cols; false for other maps).
// where ok turns false on a run-time error (overflow, division by zero, a
// date out of range); the pass then records r in the error word, and the
// host re-evaluates that one row on the CPU for the exact message.
//   map_write  (a map without a filter) n rows; p[0] flags (NULL: every row
//              passes); p[2] i64 write positions (NULL: w = r); p[1] error
//              word; o[] output columns
//   map_onepass (a map with a filter or a walk: it beat the two passes) both
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
//              p[3]/x[5] the walk (x[5] > 0: a row that repeats an earlier one is
//              dropped; the walk's limit, p[3] its status word, as for
//              runs_first); o[] output columns with
//              room for n rows
// Sides: c0/r0 (and c1/r1 for joins) as in rf::Args. TILE is the block size.
#ifndef RF_MAP_CUH
#define RF_MAP_CUH

namespace rf {

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

} // namespace rf

#endif
