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

} // namespace rf

#endif
