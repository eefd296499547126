// skeletons/cuda/rf_str.cuh: string work on the GPU, once per dictionary
// code: the bytes of the run's string dictionary live on the device (u64
// offsets, one more than codes, and the bytes), so LIKE, substring, length
// and string comparisons of a kernel's string subexpressions (its "islands",
// see rf_gpu_codegen.h) are computed here into per-code tables (or per row,
// for string work over two columns), and string ranks for sorting come from
// radix sorts of 8-byte chunks.
//
// Owns the device twins of common/rf_value.c's string functions (UTF-8
// sequence length, characters, substring, SQL LIKE, byte-order comparison,
// date parsing):
// they must give exactly the CPU's results, so they are line-by-line ports;
// and the generic kernels of the string tables:
//   island tables (generated per island as rfk<id>_isl<j>, rf::isl_tab<K>):
//     n codes of the span lo = x[0] ..; p[0] u8 bitmap of the codes present
//     (NULL: all); p[1] the table (u8 bool, i64 int, u64 string view:
//     from << 32 | to, byte offsets into the code's own string)
//   every kernel that reads string bytes (these and the map kernels with
//   string work over two columns): t[RF_TDICT] u64 dictionary offsets,
//   t[RF_TDICT + 1] the dictionary bytes
//   str_dedup   n, x[0], p[0] as above; p[1] u64 views; p[4] u64
//               hash slots (RF_EMPTY when free), x[1] slot mask: every
//               distinct view's slot keeps the lowest span index holding it
//   str_rep     same; p[5] u8 flags out: 1 at the lowest index of each view
//   str_resolve same; p[6] u32 result codes by span index, set at the
//               representatives (the host interned them): filled in for the
//               others
//   str_scatter n representatives p[7] (i64 span indices) with their codes
//               p[8] (u32) into p[6]
//   str_chunk   n; c0[0] i64 span indices (the sort's values), codes from
//               x[1]; x[0] chunk (8 bytes from byte 8 * x[0], zero-padded,
//               big-endian) or -1: the length, whose maximum also goes to
//               p[1] (u64, atomicMax); p[0] u64 keys out
//   rank_scatter n; c0[0] i64 span indices in rank order, codes from x[0];
//               p[0] u32 ranks by span index; p[1] (if set) u32 code by rank
#ifndef RF_STR_CUH
#define RF_STR_CUH

namespace rf {

#define RF_TDICT RF_ARGS_TDICT // rf_gpu_args.h

struct sv {
    const u8 *p;
    i64 n;
};

__device__ __forceinline__ sv dict_str(const Args &a, u64 code)
{
    const u64 *off = (const u64 *)a.t[RF_TDICT];
    sv s;
    s.p = (const u8 *)a.t[RF_TDICT + 1] + off[code];
    s.n = (i64)(off[code + 1] - off[code]);
    return s;
}

// rf_val_utf8_len: the length (1..4) of the valid sequence at p, 0 if invalid
__device__ __forceinline__ int utf8_len(const u8 *p, i64 n)
{
    if (n <= 0) return 0;
    unsigned c = p[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3) return 0;
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80) return 0;
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4) return 0;
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        return 4;
    }
    return 0;
}

// an invalid byte counts as one character
__device__ __forceinline__ i64 cp_len(const u8 *s, i64 n, i64 i)
{
    if (!(s[i] & 0x80)) return 1;
    int k = utf8_len(s + i, n - i);
    return k > 0 ? k : 1;
}

__device__ __forceinline__ i64 str_chars(sv s)
{
    i64 i = 0, c = 0;
    while (i < s.n) {
        i += cp_len(s.p, s.n, i);
        c++;
    }
    return c;
}

// rf_val_substring: characters [start, start + len) clipped to s
__device__ __forceinline__ sv str_sub(sv s, i64 start, i64 len)
{
    i64 end = len <= 0 ? start : start > RF_I64_MAX - len ? RF_I64_MAX : start + len;
    if (start < 0) start = 0;
    sv r;
    r.p = s.p;
    r.n = 0;
    if (end <= start) return r;
    i64 i = 0, k = 0;
    while (i < s.n && k < start) {
        i += cp_len(s.p, s.n, i);
        k++;
    }
    i64 b = i;
    while (i < s.n && k < end) {
        i += cp_len(s.p, s.n, i);
        k++;
    }
    r.p = s.p + b;
    r.n = i - b;
    return r;
}

// rf_val_like: % any run, _ one character, no escape; backtracking over the last %
__device__ __forceinline__ bool str_like(sv s, sv pt)
{
    const u8 *str = s.p, *pat = pt.p;
    i64 n = s.n, m = pt.n;
    i64 i = 0, j = 0, star = -1, mark = 0;
    while (i < n) {
        if (j < m && pat[j] == '%') {
            star = ++j;
            mark = i;
        } else if (j < m && pat[j] == '_') {
            i += cp_len(str, n, i);
            j++;
        } else if (j < m && pat[j] == str[i]) {
            i++;
            j++;
        } else if (star >= 0) {
            mark += cp_len(str, n, mark);
            i = mark;
            j = star;
        } else {
            return false;
        }
    }
    while (j < m && pat[j] == '%') j++;
    return j == m;
}

// rf_val_cmp_str: bytes (unsigned), then length
__device__ __forceinline__ int str_cmp(sv a, sv b)
{
    i64 n = a.n < b.n ? a.n : b.n;
    for (i64 i = 0; i < n; i++)
        if (a.p[i] != b.p[i]) return a.p[i] < b.p[i] ? -1 : 1;
    return (a.n > b.n) - (a.n < b.n);
}

__device__ __forceinline__ bool str_eq(sv a, sv b)
{
    if (a.n != b.n) return false;
    for (i64 i = 0; i < a.n; i++)
        if (a.p[i] != b.p[i]) return false;
    return true;
}

__device__ __forceinline__ u64 str_hash(sv s)
{
    u64 h = hmix(RF_HSEED, (u64)s.n);
    i64 i = 0;
    for (; i + 8 <= s.n; i += 8) {
        u64 w = 0;
        for (int b = 0; b < 8; b++) w |= (u64)s.p[i + b] << (8 * b);
        h = hmix(h, w);
    }
    u64 w = 0;
    for (int b = 0; i + b < s.n; b++) w |= (u64)s.p[i + b] << (8 * b);
    return hfin(hmix(h, w));
}

// rf_val_parse_date: "YYYY-MM-DD" exactly, year >= 1, a real day; the days
// since 1970-01-01, or RF_I64_MIN for a string that is no date (the island's
// table keeps that mark: the kernel that reads it reports a run-time error)
__device__ __forceinline__ i64 str_date(sv s)
{
    if (s.n != 10) return RF_I64_MIN;
    for (int i = 0; i < 10; i++) {
        bool ok = (i == 4 || i == 7) ? s.p[i] == '-' : (s.p[i] >= '0' && s.p[i] <= '9');
        if (!ok) return RF_I64_MIN;
    }
    i32 y = (s.p[0] - '0') * 1000 + (s.p[1] - '0') * 100 + (s.p[2] - '0') * 10 + (s.p[3] - '0');
    i32 m = (s.p[5] - '0') * 10 + (s.p[6] - '0');
    i32 d = (s.p[8] - '0') * 10 + (s.p[9] - '0');
    if (y < 1 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) return RF_I64_MIN;
    return (i64)days_from_civil(y, m, d);
}

// The per-code table of an island: K::eval(a, code) gives the value
template <class K, class T, int TILE> __device__ __forceinline__ void isl_tab(const Args &a)
{
    const u8 *bits = (const u8 *)a.p[0];
    T *out = (T *)a.p[1];
    RF_FOR(i, a.n)
    {
        if (bits && !bits[i]) continue;
        out[i] = K::eval(a, (u64)(a.x[0] + i));
    }
}

// A view (from << 32 | to within the code's string) back to bytes.
__device__ __forceinline__ sv view_str(const Args &a, u64 code, u64 v)
{
    sv s = dict_str(a, code);
    s.p += v >> 32;
    s.n = (i64)(v & 0xffffffffull) - (i64)(v >> 32);
    return s;
}

// The slot of index i's view: inserting (str_dedup) or finding it.
__device__ __forceinline__ u64 *str_slot(const Args &a, i64 i, bool insert)
{
    const u64 *views = (const u64 *)a.p[1];
    u64 *slots = (u64 *)a.p[4];
    u64 mask = (u64)a.x[1];
    u64 lo = (u64)a.x[0];
    sv s = view_str(a, lo + (u64)i, views[i]);
    u64 h = str_hash(s) & mask;
    for (;;) {
        u64 cur = slots[h];
        if (cur == RF_EMPTY) {
            if (!insert) return 0; // not reached: every index was inserted
            cur = atomicCAS(&slots[h], RF_EMPTY, (u64)i);
            if (cur == RF_EMPTY) return &slots[h];
        }
        if (str_eq(view_str(a, lo + cur, views[cur]), s)) {
            // the lowest index represents the view (read first: many codes
            // may share a few pieces, and atomics on one word serialize)
            if (insert && (u64)i < cur) atomicMin(&slots[h], (u64)i);
            return &slots[h];
        }
        h = (h + 1) & mask;
    }
}

template <int TILE> __device__ __forceinline__ void str_dedup(const Args &a)
{
    const u8 *bits = (const u8 *)a.p[0];
    RF_FOR(i, a.n)
    {
        if (bits && !bits[i]) continue;
        str_slot(a, i, true);
    }
}

template <int TILE> __device__ __forceinline__ void str_rep(const Args &a)
{
    const u8 *bits = (const u8 *)a.p[0];
    u8 *flags = (u8 *)a.p[5];
    RF_FOR(i, a.n)
    {
        bool rep = false;
        if (!bits || bits[i]) {
            u64 *s = str_slot(a, i, false);
            rep = s && *s == (u64)i;
        }
        flags[i] = rep ? 1 : 0;
    }
}

template <int TILE> __device__ __forceinline__ void str_resolve(const Args &a)
{
    const u8 *bits = (const u8 *)a.p[0];
    u32 *codes = (u32 *)a.p[6];
    RF_FOR(i, a.n)
    {
        if (bits && !bits[i]) continue;
        u64 *s = str_slot(a, i, false);
        if (s && *s != (u64)i) codes[i] = codes[*s];
    }
}

template <int TILE> __device__ __forceinline__ void str_scatter(const Args &a)
{
    const i64 *reps = (const i64 *)a.p[7];
    const u32 *rc = (const u32 *)a.p[8];
    u32 *codes = (u32 *)a.p[6];
    RF_FOR(q, a.n) codes[reps[q]] = rc[q];
}

template <int TILE> __device__ __forceinline__ void str_chunk(const Args &a)
{
    const i64 *c = (const i64 *)a.c0[0];
    u64 *out = (u64 *)a.p[0];
    u64 mx = 0;
    RF_FOR(i, a.n)
    {
        sv s = dict_str(a, (u64)(a.x[1] + c[i]));
        if (a.x[0] < 0) {
            out[i] = (u64)s.n;
            mx = (u64)s.n > mx ? (u64)s.n : mx;
            continue;
        }
        i64 at = a.x[0] * 8;
        u64 k = 0;
        for (int b = 0; b < 8; b++) k = (k << 8) | (at + b < s.n ? (u64)s.p[at + b] : 0ull);
        out[i] = k;
    }
    if (a.x[0] < 0 && mx) atomicMax((u64 *)a.p[1], mx);
}

template <int TILE> __device__ __forceinline__ void rank_scatter(const Args &a)
{
    const i64 *c = (const i64 *)a.c0[0];
    u32 *ranks = (u32 *)a.p[0], *back = (u32 *)a.p[1];
    RF_FOR(i, a.n)
    {
        ranks[c[i]] = (u32)i;
        if (back) back[i] = (u32)(a.x[0] + c[i]);
    }
}

} // namespace rf

#endif
