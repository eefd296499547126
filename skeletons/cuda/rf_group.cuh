// skeletons/cuda/rf_group.cuh: the skeletons of GROUP, UNIQUE, DIFFERENCE and
// INSERT: open-addressing hash tables whose slots hold row numbers, and the
// walk over runs that deduplicates rows ordered by their first column.
//
// Owns the table protocols. A slot is RF_EMPTY or the number of a row that
// represents every equal row; for a table over one input, atomicMin keeps
// the lowest equal row there, so "row i is the first of its kind" is
// "table[slot of i] == i" whatever the thread schedule: groups are numbered
// by first occurrence and distinct rows keep their first occurrence, in row
// order, exactly as the CPU backend does. KS is a key class (rf_join.cuh).
//   grp_insert  n rows; c0 keys; p[0] u64 table; x[0] mask; p[1] i64 slot of
//               each row out (-1: skipped); p[2] u8 rows to take (NULL: all)
//   grp_flag    n rows; p[0] table; p[1] slots; p[2] u8 out: 1 where row i is the
//               first of its kind; x[1] id offset (row i is id x[1] + i)
//   grp_finish  n rows; p[0] table; p[1] slots; p[2] flags; p[3] i64 scan of
//               the flags; p[4] i64 group of each row out; p[5] i64 first
//               row of each group out. p[0] NULL: p[1] holds each row's
//               first equal row itself (runs_first's p[3])
// A set (the growing relation of INSERT, the right side of DIFFERENCE) is a
// table over its own distinct rows 0..N-1, whose columns are c0. Its slots
// are u32 (RF_EMPTY32 when free): a set lives as long as its relation, so
// its table is half the size of one of u64 slots; the host keeps every id
// (N + candidates) below RF_EMPTY32.
// A narrow set stores its int columns in 32 bits (key letter N, rf::ldn)
// while every value fits: its key class KN hashes a value as the 64-bit
// class KW of the same columns does, and KN::xeq compares a set row with a
// row of KW's (64-bit) columns. A set of 64-bit columns has KN = KW.
//   set_build   n distinct rows; c0; p[0] u32 table; x[0] mask (no comparisons)
//   set_insert  n candidate rows c1; m = N set rows c0; p[0] table; x[0] mask;
//               p[1] i64 slot out (-1: already in the set, or not wanted);
//               p[2] u8 candidates to take (NULL: all). A candidate
//               enters as id N + i, and atomicMin keeps the first of equal
//               candidates; set_flag with x[1] = N then finds the new rows
//               (with N = 0 and no set rows: the first occurrences of the
//               wanted rows, a difference's rows absent from its set)
//   set_dedupe  set_insert with u32 slots (a table of at most 2^31 slots)
//   set_flag32  set_flag over u32 slots
//   set_flag    grp_flag over a set's u32 table; a narrow set's new rows
//               checked too: x[2] the candidate columns c1 (bits) stored in
//               32 bits, p[4] u64 raised to 1 where a value does not fit
//   set_append  n candidates; c1 their columns; o set columns; x[0] ncols;
//               x[1] N; k[c] byte width of column c (RF_W_NARROW: an i64
//               candidate into a 32-bit column); p[0] table; p[1] slots;
//               p[2] flags; p[3] scan of the flags: appends the new rows and
//               points their slots at their final row numbers
//   set_probe   n rows c1; m = N set rows c0; p[0] table; x[0] mask; p[2] u8
//               out: 1 where the row is NOT in the set
//   col_narrow  n values: i64 c0[0] into i32 o[0]; p[0] u64 raised to 1
//               when one does not fit in 32 bits
//   col_widen   n values: i32 c0[0] into i64 o[0]
// Rows that arrive ordered by their first column need no table: equal rows
// share that column's value, so they lie in one run of equal values, and a
// row is the first of its kind when no earlier row of its run equals it.
// KS::k0 is the first column's normalized value (unsigned order = value
// order, equal images = equal values, as KS::eq sees them):
//   runs_first  n rows; c0 columns; p[0] u8 out: 1 where row i is the first
//               of its kind among the rows with want != 0 (what grp_insert
//               and grp_flag give); p[1] u8 rows to take (NULL: all);
//               p[2] u64 status word, 0 before the launch: raised (atomicMax)
//               to RF_RUNS_LONG when a row found no equal row within x[0]
//               rows back but its run goes on, to RF_RUNS_UNORDERED when the
//               first column decreases somewhere; the flags are then
//               meaningless and the caller hashes instead. p[3] (groups;
//               NULL: unique) i64 out: the first row equal to row i (-1
//               where want is 0): the walk then goes on to the lowest equal
//               row of the run, rather than stopping at the nearest
// The same walk inside a kernel that makes the rows (a map or a join's count
// pass, fuse.c rf_gpu_dedupe_cols), over columns it reads rather than writes:
//   runs_repeat(c, r, lim, status, walk, same): is row r a repeat of an
//               earlier row of its run of equal KS::k0(c, .)? Every row must
//               make the call (each checks the order against the row before
//               it); walk false: that check only (row r is no row of the
//               output). same(j) says whether row j, equal to r in the
//               columns c, makes the same output as r; it may raise the
//               status itself. Status and limit as for runs_first.
#ifndef RF_GROUP_CUH
#define RF_GROUP_CUH

namespace rf {

__device__ __forceinline__ u64 vload(const u64 *p) { return *(const volatile u64 *)p; }
__device__ __forceinline__ u32 vload(const u32 *p) { return *(const volatile u32 *)p; }

template <class KS, int TILE> __device__ __forceinline__ void grp_insert(const Args &a)
{
    u64 *tab = (u64 *)a.p[0];
    i64 *slot = (i64 *)a.p[1];
    const u8 *want = (const u8 *)a.p[2];
    u64 mask = (u64)a.x[0];
    RF_FOR(i, a.n)
    {
        if (want && !want[i]) {
            slot[i] = -1;
            continue;
        }
        for (u64 s = KS::hash(a.c0, i) & mask;; s = (s + 1) & mask) {
            u64 cur = vload(&tab[s]);
            if (cur == RF_EMPTY) {
                cur = atomicCAS(&tab[s], RF_EMPTY, (u64)i);
                if (cur == RF_EMPTY) {
                    slot[i] = (i64)s;
                    break;
                }
            }
            if (KS::eq(a.c0, (i64)cur, a.c0, i)) {
                // a slot only ever decreases: when it already holds a lower
                // row, the atomic would change nothing (with few groups,
                // nearly every row; skipping it avoids their contention)
                if (cur > (u64)i) atomicMin(&tab[s], (u64)i);
                slot[i] = (i64)s;
                break;
            }
        }
    }
}

template <int TILE> __device__ __forceinline__ void grp_flag(const Args &a)
{
    const u64 *tab = (const u64 *)a.p[0];
    const i64 *slot = (const i64 *)a.p[1];
    u8 *flags = (u8 *)a.p[2];
    RF_FOR(i, a.n)
    {
        i64 s = slot[i];
        flags[i] = s >= 0 && tab[s] == (u64)(a.x[1] + i) ? 1 : 0;
    }
}

__device__ __forceinline__ bool fits32(i64 v) { return v >= -2147483648ll && v <= 2147483647ll; }

template <int TILE, class SL = i64> __device__ __forceinline__ void set_flag(const Args &a)
{
    const u32 *tab = (const u32 *)a.p[0];
    const SL *slot = (const SL *)a.p[1];
    u8 *flags = (u8 *)a.p[2];
    u64 fit = (u64)a.x[2];
    u64 *status = (u64 *)a.p[4];
    RF_FOR(i, a.n)
    {
        SL s = slot[i];
        u8 f = s != (SL)-1 && (u64)tab[s] == (u64)(a.x[1] + i) ? 1 : 0;
        flags[i] = f;
        // the new rows' values that a narrow set would store in 32 bits
        bool wide = false;
        for (int c = 0; f && status && c < 64 && (fit >> c); c++)
            if ((fit >> c) & 1) wide |= !fits32(ld<i64>(a.c1[c], i));
        if (wide && vload(status) == 0) atomicMax(status, 1ull);
    }
}

template <int TILE> __device__ __forceinline__ void col_narrow(const Args &a)
{
    const i64 *in = (const i64 *)a.c0[0];
    i32 *out = (i32 *)a.o[0];
    u64 *status = (u64 *)a.p[0];
    RF_FOR(i, a.n)
    {
        i64 v = in[i];
        out[i] = (i32)v;
        if (!fits32(v) && vload(status) == 0) atomicMax(status, 1ull);
    }
}

template <int TILE> __device__ __forceinline__ void col_widen(const Args &a)
{
    RF_FOR(i, a.n) ((i64 *)a.o[0])[i] = ldn(a.c0[0], i);
}

template <int TILE> __device__ __forceinline__ void grp_finish(const Args &a)
{
    const u64 *tab = (const u64 *)a.p[0];
    const i64 *slot = (const i64 *)a.p[1];
    const u8 *flags = (const u8 *)a.p[2];
    const i64 *pos = (const i64 *)a.p[3];
    i64 *gid = (i64 *)a.p[4];
    i64 *first = (i64 *)a.p[5];
    RF_FOR(i, a.n)
    {
        i64 s = slot[i];
        if (s < 0) continue;
        gid[i] = pos[tab ? tab[s] : (u64)s];
        if (flags[i]) first[pos[i]] = i;
    }
}

template <class KS, int TILE> __device__ __forceinline__ void set_build(const Args &a)
{
    u32 *tab = (u32 *)a.p[0];
    u64 mask = (u64)a.x[0];
    RF_FOR(i, a.n)
    {
        for (u64 s = KS::hash(a.c0, i) & mask;; s = (s + 1) & mask)
            if (atomicCAS(&tab[s], RF_EMPTY32, (u32)i) == RF_EMPTY32) break;
    }
}

template <class KW, class KN, int TILE, class SL = i64> __device__ __forceinline__ void set_insert(const Args &a)
{
    u32 *tab = (u32 *)a.p[0];
    SL *slot = (SL *)a.p[1];
    const u8 *want = (const u8 *)a.p[2];
    u64 mask = (u64)a.x[0];
    u64 N = (u64)a.m;
    RF_FOR(i, a.n)
    {
        if (want && !want[i]) {
            slot[i] = (SL)-1;
            continue;
        }
        u32 me = (u32)(N + (u64)i);
        for (u64 s = KW::hash(a.c1, i) & mask;; s = (s + 1) & mask) {
            u64 cur = vload(&tab[s]);
            if (cur == RF_EMPTY32) {
                cur = atomicCAS(&tab[s], RF_EMPTY32, me);
                if (cur == RF_EMPTY32) {
                    slot[i] = (SL)s;
                    break;
                }
            }
            bool eq = cur < N ? KN::xeq(a.c0, (i64)cur, a.c1, i) : KW::eq(a.c1, (i64)(cur - N), a.c1, i);
            if (eq) {
                if (cur < N) {
                    slot[i] = (SL)-1;
                } else {
                    if (cur > me) atomicMin(&tab[s], me);
                    slot[i] = (SL)s;
                }
                break;
            }
        }
    }
}

template <int TILE> __device__ __forceinline__ void set_append(const Args &a)
{
    u32 *tab = (u32 *)a.p[0];
    const i64 *slot = (const i64 *)a.p[1];
    const u8 *flags = (const u8 *)a.p[2];
    const i64 *pos = (const i64 *)a.p[3];
    int nc = (int)a.x[0];
    i64 N = a.x[1];
    RF_FOR(i, a.n)
    {
        if (!flags[i]) continue;
        i64 w = N + pos[i];
        for (int c = 0; c < nc; c++) {
            switch (a.k[c]) {
            case 8: ((u64 *)a.o[c])[w] = ((const u64 *)a.c1[c])[i]; break;
            case RF_W_NARROW: ((i32 *)a.o[c])[w] = (i32)((const i64 *)a.c1[c])[i]; break;
            case 16: ((i128 *)a.o[c])[w] = ((const i128 *)a.c1[c])[i]; break;
            case 4: ((u32 *)a.o[c])[w] = ((const u32 *)a.c1[c])[i]; break;
            default: ((u8 *)a.o[c])[w] = ((const u8 *)a.c1[c])[i]; break;
            }
        }
        tab[slot[i]] = (u32)w;
    }
}

template <class KW, class KN, int TILE> __device__ __forceinline__ void set_probe(const Args &a)
{
    const u32 *tab = (const u32 *)a.p[0];
    u8 *flags = (u8 *)a.p[2];
    u64 mask = (u64)a.x[0];
    RF_FOR(i, a.n)
    {
        u8 absent = 1;
        for (u64 s = KW::hash(a.c1, i) & mask;; s = (s + 1) & mask) {
            u32 cur = tab[s];
            if (cur == RF_EMPTY32) break;
            if (KN::xeq(a.c0, (i64)cur, a.c1, i)) {
                absent = 0;
                break;
            }
        }
        flags[i] = absent;
    }
}

#define RF_RUNS_LONG 1ull
#define RF_RUNS_UNORDERED 2ull

__device__ __forceinline__ void runs_status(u64 *w, u64 v)
{
    // once one thread has reported, the others need not contend for the word
    if (vload(w) < v) atomicMax(w, v);
}

#define RF_RUNS_AMBIGUOUS 4ull

template <class KS, class S>
__device__ __forceinline__ bool runs_repeat(const void *const *c, i64 r, i64 lim, u64 *status, bool walk, S &same)
{
    u64 key = KS::k0(c, r);
    if (r > 0 && KS::k0(c, r - 1) > key) {
        runs_status(status, RF_RUNS_UNORDERED);
        return false;
    }
    if (!walk) return false;
    for (i64 j = r - 1; j >= 0 && KS::k0(c, j) == key; j--) {
        if (r - j > lim) {
            runs_status(status, RF_RUNS_LONG);
            return false;
        }
        if (KS::eq(c, j, c, r) && same(j)) return true;
    }
    return false;
}

template <class KS, int TILE> __device__ __forceinline__ void runs_first(const Args &a)
{
    u8 *flags = (u8 *)a.p[0];
    const u8 *want = (const u8 *)a.p[1];
    u64 *status = (u64 *)a.p[2];
    i64 *rep = (i64 *)a.p[3];
    i64 lim = a.x[0];
    RF_FOR(i, a.n)
    {
        i64 low = i; // the lowest equal row found
        u64 key = KS::k0(a.c0, i);
        if (i > 0 && KS::k0(a.c0, i - 1) > key) {
            runs_status(status, RF_RUNS_UNORDERED);
        } else if (!want || want[i]) {
            // the rows before i with its first column, nearest first
            for (i64 j = i - 1; j >= 0 && KS::k0(a.c0, j) == key; j--) {
                if (i - j > lim) {
                    runs_status(status, RF_RUNS_LONG);
                    break;
                }
                if ((!want || want[j]) && KS::eq(a.c0, j, a.c0, i)) {
                    low = j;
                    if (!rep) break;
                }
            }
        } else {
            low = -1;
        }
        flags[i] = low == i ? 1 : 0;
        if (rep) rep[i] = low;
    }
}

} // namespace rf

#endif
