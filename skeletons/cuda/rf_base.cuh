// skeletons/cuda/rf_base.cuh: what every GPU skeleton shares: the kernel
// argument block, grid-stride loops, value normalization, hashing, error
// recording and the scalar semantics of rt_eval.c / rf_value.h (exact int and
// decimal arithmetic with overflow detection, dates, the float total order).
//
// The argument block, rf::Args, comes from rf_gpu_args.h, which the code
// generator pastes before this file into every program (one definition for
// the host's C and the device's C++, checked on both sides). This file is
// also compiled as host C++ by the emulator, so it uses only what
// rf_emu_prelude.cuh provides: no warp intrinsics.
#ifndef RF_BASE_CUH
#define RF_BASE_CUH

namespace rf {

typedef long long i64;
typedef unsigned long long u64;
typedef int i32;
typedef unsigned int u32;
typedef unsigned char u8;
typedef signed char i8;
typedef __int128 i128;
typedef unsigned __int128 u128;

#define RF_MAXC RF_ARGS_MAXC
#define RF_NK RF_ARGS_NK
#define RF_NT RF_ARGS_NT
#define RF_EMPTY (~0ull)
#define RF_EMPTY32 (~0u) // a free slot of a set's table (u32 row numbers)
#define RF_I64_MAX 9223372036854775807LL
#define RF_I64_MIN (-9223372036854775807LL - 1)
#define RF_DEC_ONE 1000000LL

// One argument block for every kernel, passed by value (rf_gpu_args.h). Which
// fields a kernel reads is documented at the kernel; unused fields are zero.

__device__ __forceinline__ i64 tid() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 nthreads() { return (i64)blockDim.x * gridDim.x; }
#define RF_FOR(i, n) for (rf::i64 i = rf::tid(); i < (rf::i64)(n); i += rf::nthreads())

// The lowest failing item wins, as on the CPU (which reports the lowest row).
__device__ __forceinline__ void fail(void *err, i64 row) { atomicMin((u64 *)err, (u64)row); }

__device__ __forceinline__ u64 dbits(double x) { return (u64)__double_as_longlong(x); }
__device__ __forceinline__ double bitsd(u64 b) { return __longlong_as_double((long long)b); }

// A float zero has no sign: every float operation's result passes through
// fz, so that -0.0 never exists as a value (0.0 * -1.0 is 0.0 and 1.0 / it
// inf). x + 0.0 is +0.0 for either zero in round-to-nearest and x otherwise;
// one add, kept because NVRTC runs without fast-math and without -ftz (the
// device copy of common/rf_value.h's rf_val_float_canon).
__device__ __forceinline__ double fz(double x) { return x + 0.0; }

template <class T> __device__ __forceinline__ T ld(const void *c, i64 r) { return ((const T *)c)[r]; }
template <class T> __device__ __forceinline__ void st(void *c, i64 r, T v) { ((T *)c)[r] = v; }
// An int column stored in 32 bits (a narrow set, rf_group.cuh): its value.
__device__ __forceinline__ i64 ldn(const void *c, i64 r) { return (i64)((const i32 *)c)[r]; }

// Keeps a load where the generator put it (no code of its own): the compiler
// sinks a load into the branch that first needs it, so a filter's conjuncts,
// evaluated in order and stopping at the first false one, would each wait for
// their own load in turn. Pinned, a row's loads are all in flight at once (and
// the conjuncts usually become predicated instructions, no branches).
#ifdef __CUDA_ARCH__
__device__ __forceinline__ void pin(i64 v) { asm volatile("" ::"l"(v)); }
__device__ __forceinline__ void pin(u32 v) { asm volatile("" ::"r"(v)); }
__device__ __forceinline__ void pin(i32 v) { asm volatile("" ::"r"(v)); }
__device__ __forceinline__ void pin(double v) { asm volatile("" ::"d"(v)); }
__device__ __forceinline__ void pin(bool v) { asm volatile("" ::"r"((u32)v)); }
__device__ __forceinline__ void pin(i128 v) { asm volatile("" ::"l"((u64)v), "l"((u64)((u128)v >> 64))); }
#else
template <class T> inline void pin(T) {}
#endif

// ---- normalized values: unsigned order is the value order, equal images are
// equal values (floats: -0.0 == 0.0, every NaN one image above +inf), exactly
// as skeletons/cpu's cpu_norm_* (norm(double) is the device copy of
// common/rf_value.h's rf_val_float_key, which host code shares).
__device__ __forceinline__ u64 norm(i64 x) { return (u64)x ^ (1ull << 63); }
__device__ __forceinline__ u64 norm(i32 x) { return (u64)((u32)x ^ 0x80000000u); }
__device__ __forceinline__ u64 norm(u32 x) { return (u64)x; }
__device__ __forceinline__ u64 norm(u8 x) { return (u64)x; }
__device__ __forceinline__ u64 norm(double x)
{
    if (x != x) return ~0ull;
    if (x == 0) return 1ull << 63;
    u64 b = dbits(x);
    return (b >> 63) ? ~b : (b | (1ull << 63));
}
// Inverses (floats never need one: their aggregates run on the host).
__device__ __forceinline__ i64 denorm_i64(u64 v) { return (i64)(v ^ (1ull << 63)); }
__device__ __forceinline__ i32 denorm_i32(u64 v) { return (i32)((u32)v ^ 0x80000000u); }

// ---- hashing: a multiply-xorshift mix per value and murmur's finalizer; the
// result is never RF_EMPTY, which marks free slots of hash tables.
__device__ __forceinline__ u64 hmix(u64 h, u64 v)
{
    h ^= v * 0x9e3779b97f4a7c15ull;
    h = (h << 27) | (h >> 37);
    return h * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
}
__device__ __forceinline__ u64 hfin(u64 h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h == RF_EMPTY ? RF_EMPTY - 1 : h;
}
#define RF_HSEED 0x243f6a8885a308d3ull

#ifdef __CUDA_ARCH__
__device__ __forceinline__ int clz64(u64 x) { return __clzll((long long)x); }
#else
inline int clz64(u64 x) { return x ? __builtin_clzll(x) : 64; }
#endif

// ---- int arithmetic: false on overflow or division by zero ----------------
__device__ __forceinline__ bool add_i(i64 a, i64 b, i64 *o)
{
    i64 s = (i64)((u64)a + (u64)b);
    if (((a ^ s) & (b ^ s)) < 0) return false;
    *o = s;
    return true;
}
__device__ __forceinline__ bool sub_i(i64 a, i64 b, i64 *o)
{
    i64 s = (i64)((u64)a - (u64)b);
    if (((a ^ b) & (a ^ s)) < 0) return false;
    *o = s;
    return true;
}
__device__ __forceinline__ bool mul_i(i64 a, i64 b, i64 *o)
{
    i128 p = (i128)a * (i128)b;
    if (p > (i128)RF_I64_MAX || p < (i128)RF_I64_MIN) return false;
    *o = (i64)p;
    return true;
}
__device__ __forceinline__ bool div_i(i64 a, i64 b, i64 *o)
{
    if (b == 0 || (a == RF_I64_MIN && b == -1)) return false;
    *o = a / b;
    return true;
}
// the remainder of truncated division (rt_eval.c's, bit for bit):
// INT64_MIN % -1 is 0, never the trap of the hardware division
__device__ __forceinline__ bool mod_i(i64 a, i64 b, i64 *o)
{
    if (b == 0) return false;
    *o = b == -1 ? 0 : a % b;
    return true;
}
// int:shl and int:shr (rf_value.c's, bit for bit): a count outside 0..63 is
// an error, never the hardware's own idea of it
__device__ __forceinline__ bool shl_i(i64 a, i64 n, i64 *o)
{
    if (n < 0 || n > 63) return false;
    *o = (i64)((u64)a << n);
    return true;
}
__device__ __forceinline__ bool shr_i(i64 a, i64 n, i64 *o)
{
    if (n < 0 || n > 63) return false;
    *o = a < 0 ? ~(~a >> n) : a >> n;
    return true;
}
__device__ __forceinline__ bool neg_i(i64 a, i64 *o)
{
    if (a == RF_I64_MIN) return false;
    *o = -a;
    return true;
}

// ---- decimals: int64 scaled by 10^6, range [-INT64_MAX, INT64_MAX]; * and /
// round half away from zero (rf_value.c's div_round, bit for bit).
__device__ __forceinline__ bool dec_res(i128 v, i64 *o)
{
    if (v > (i128)RF_I64_MAX || v < -(i128)RF_I64_MAX) return false;
    *o = (i64)v;
    return true;
}
__device__ __forceinline__ i128 div_round(i128 n, i128 d)
{
    i128 q = n / d, r = n % d;
    i128 ar = r < 0 ? -r : r, ad = d < 0 ? -d : d;
    if (ar >= ad - ar) q += ((n < 0) != (d < 0)) ? -1 : 1;
    return q;
}
// (as dec_res((i128)a + b): no 64-bit overflow and not INT64_MIN, without
// 128-bit arithmetic)
__device__ __forceinline__ bool add_d(i64 a, i64 b, i64 *o)
{
    i64 s = (i64)((u64)a + (u64)b);
    if (((a ^ s) & (b ^ s)) < 0 || s == RF_I64_MIN) return false;
    *o = s;
    return true;
}
__device__ __forceinline__ bool sub_d(i64 a, i64 b, i64 *o)
{
    i64 s = (i64)((u64)a - (u64)b);
    if (((a ^ b) & (a ^ s)) < 0 || s == RF_I64_MIN) return false;
    *o = s;
    return true;
}
__device__ __forceinline__ bool mul_d(i64 a, i64 b, i64 *o)
{
    // the usual case first, on magnitudes: both below 2^62 together, so the
    // product is one 64-bit multiplication and the unsigned division by the
    // constant scale a multiplication (p5 of bench/weaver: 8% less time on
    // an H100); rounding half away from zero on the magnitude is the same.
    // Half the scale added first rounds it: floor((m + 10^6 / 2) / 10^6) is
    // m / 10^6 plus one exactly where the remainder is at least half (no
    // remainder, compare and increment; m + 10^6 / 2 < 2^63 cannot wrap)
    u64 ua = a < 0 ? 0 - (u64)a : (u64)a, ub = b < 0 ? 0 - (u64)b : (u64)b;
    if (clz64(ua) + clz64(ub) >= 66) {
        u64 q = (ua * ub + (u64)(RF_DEC_ONE / 2)) / (u64)RF_DEC_ONE;
        *o = (a < 0) != (b < 0) ? -(i64)q : (i64)q;
        return true;
    }
    i128 p = (i128)a * (i128)b;
    if (p >= (i128)RF_I64_MIN && p <= (i128)RF_I64_MAX) {
        // the usual case: the product fits 64 bits, where dividing by the
        // constant scale is a multiplication (a 128-bit division is a long
        // call); the quotient is then well inside the decimal range
        i64 n = (i64)p, q = n / RF_DEC_ONE, r = n % RF_DEC_ONE, ar = r < 0 ? -r : r;
        if (ar >= RF_DEC_ONE - ar) q += n < 0 ? -1 : 1;
        *o = q;
        return true;
    }
    return dec_res(div_round(p, (i128)RF_DEC_ONE), o);
}
__device__ __forceinline__ bool div_d(i64 a, i64 b, i64 *o)
{
    if (b == 0) return false;
    return dec_res(div_round((i128)a * (i128)RF_DEC_ONE, (i128)b), o);
}
__device__ __forceinline__ bool neg_d(i64 a, i64 *o)
{
    if (a == RF_I64_MIN) return false; /* not a decimal; kept as the CPU does */
    *o = -a;
    return true;
}

// ---- wide decimals: i128 scaled by 10^6, range [-RF_W_MAX, RF_W_MAX]
// (rf_value.c's rf_val_dec128_*, bit for bit). On the device a wide column
// is 16 bytes a row, the host's own __int128 bytes (low word first).
#define RF_W_MAX ((i128)(((u128)RF_I64_MAX << 64) | (u128)~0ull))
__device__ __forceinline__ u64 w_lo(i128 v) { return (u64)(u128)v; }
__device__ __forceinline__ i64 w_hi(i128 v) { return (i64)((u128)v >> 64); }
__device__ __forceinline__ i128 w_make(i64 hi, u64 lo) { return (i128)(((u128)(u64)hi << 64) | (u128)lo); }
__device__ __forceinline__ u128 w_mag(i128 v) { return v < 0 ? (u128)0 - (u128)v : (u128)v; }
__device__ __forceinline__ bool w_res(i128 v, i128 *o)
{
    if (v < -RF_W_MAX) return false; /* only -2^127 */
    *o = v;
    return true;
}
__device__ __forceinline__ bool add_w(i128 a, i128 b, i128 *o)
{
    i128 s = (i128)((u128)a + (u128)b);
    if (((a ^ s) & (b ^ s)) < 0) return false;
    return w_res(s, o);
}
__device__ __forceinline__ bool sub_w(i128 a, i128 b, i128 *o)
{
    i128 s = (i128)((u128)a - (u128)b);
    if (((a ^ b) & (a ^ s)) < 0) return false;
    return w_res(s, o);
}
__device__ __forceinline__ bool neg_w(i128 a, i128 *o)
{
    *o = (i128)((u128)0 - (u128)a); /* the range is symmetric: never fails */
    return true;
}
// n / d rounded half away from zero, both signed, d nonzero, no overflow
__device__ __forceinline__ i128 w_div_round(i128 n, i128 d)
{
    i128 q = n / d, r = n % d;
    u128 ar = w_mag(r), ad = w_mag(d);
    if (ar >= ad - ar) q += ((n < 0) != (d < 0)) ? -1 : 1;
    return q;
}
// a * b as a 256-bit magnitude, four words, least significant first
__device__ __forceinline__ void w_mul256(u128 a, u128 b, u64 *w)
{
    u64 x[2] = {(u64)a, (u64)(a >> 64)}, y[2] = {(u64)b, (u64)(b >> 64)};
    w[0] = w[1] = w[2] = w[3] = 0;
    for (int i = 0; i < 2; i++) {
        u128 carry = 0;
        for (int j = 0; j < 2; j++) {
            u128 t = (u128)x[i] * y[j] + w[i + j] + carry;
            w[i + j] = (u64)t;
            carry = t >> 64;
        }
        w[i + 2] = (u64)carry;
    }
}
// the 256-bit n over d (> 0), rounded half away from zero, into *q; false
// when it exceeds RF_W_MAX (bit by bit: only values past the fast paths)
__device__ __forceinline__ bool w_div256(const u64 *n, u128 d, u128 *q)
{
    u128 rem = 0;
    u64 quo[4] = {0, 0, 0, 0};
    for (int bit = 255; bit >= 0; bit--) {
        int top = (int)(rem >> 127);
        rem = (rem << 1) | ((n[bit / 64] >> (bit % 64)) & 1);
        if (top || rem >= d) {
            rem -= d;
            quo[bit / 64] |= 1ull << (bit % 64);
        }
    }
    if (quo[3] || quo[2]) return false;
    u128 r = ((u128)quo[1] << 64) | quo[0];
    if (rem >= d - rem) r++;
    if (r > (u128)RF_W_MAX) return false;
    *q = r;
    return true;
}
#define RF_W_FAST_MUL ((i128)1 << 63) /* |a|, |b| below: |a * b| < 2^126 */
#define RF_W_FAST_DIV ((i128)1 << 106) /* |a| below: |a * 10^6| < 2^126 */
__device__ __forceinline__ bool mul_w(i128 a, i128 b, i128 *o)
{
    bool neg = (a < 0) != (b < 0);
    if (a > -RF_W_FAST_MUL && a < RF_W_FAST_MUL && b > -RF_W_FAST_MUL && b < RF_W_FAST_MUL)
        return w_res(w_div_round(a * b, (i128)RF_DEC_ONE), o);
    u64 n[4];
    u128 q;
    w_mul256(w_mag(a), w_mag(b), n);
    if (!w_div256(n, (u128)RF_DEC_ONE, &q)) return false;
    *o = neg ? -(i128)q : (i128)q;
    return true;
}
__device__ __forceinline__ bool div_w(i128 a, i128 b, i128 *o)
{
    if (b == 0) return false;
    bool neg = (a < 0) != (b < 0);
    if (a > -RF_W_FAST_DIV && a < RF_W_FAST_DIV) return w_res(w_div_round(a * (i128)RF_DEC_ONE, b), o);
    u64 n[4];
    u128 q;
    w_mul256(w_mag(a), (u128)RF_DEC_ONE, n);
    if (!w_div256(n, w_mag(b), &q)) return false;
    *o = neg ? -(i128)q : (i128)q;
    return true;
}
__device__ __forceinline__ i128 dec_to_w(i64 a) { return (i128)a; }
__device__ __forceinline__ i128 int_to_w(i64 a) { return (i128)a * (i128)RF_DEC_ONE; }
__device__ __forceinline__ bool w_to_dec(i128 v, i64 *o) { return dec_res(v, o); }
// (double)v rounded to nearest even without a 128-bit conversion routine:
// the top 64 bits with a sticky bit for the rest round exactly as the whole
__device__ __forceinline__ double w_to_double(i128 v)
{
    u128 m = w_mag(v);
    double d;
    if ((m >> 64) == 0) {
        d = (double)(u64)m;
    } else {
        int sh = 64 - clz64((u64)(m >> 64));
        u64 t = (u64)(m >> sh) | (u64)((m & (((u128)1 << sh) - 1)) != 0);
        d = ldexp((double)t, sh);
    }
    return v < 0 ? -d : d;
}
// rf_val_dec_to_float: beyond 2^53 millionths the whole part and the
// fraction are converted apart, so that the sum rounds once
__device__ __forceinline__ double dec_to_float(i64 a)
{
    const i64 exact = (i64)1 << 53;
    if (a > -exact && a < exact) return (double)a / 1e6;
    return (double)(a / (i64)RF_DEC_ONE) + (double)(a % (i64)RF_DEC_ONE) / 1e6;
}
// the double nearest to v / 10^6 (rf_val_dec128_to_float, bit for bit)
__device__ __forceinline__ double w_to_float(i128 v)
{
    const i128 exact = (i128)1 << 53;
    if (v >= -(i128)RF_I64_MAX && v <= (i128)RF_I64_MAX) return dec_to_float((i64)v);
    i128 q = v / (i128)RF_DEC_ONE, r = v % (i128)RF_DEC_ONE;
    if (q > -exact && q < exact) return (double)(i64)q + (double)(i64)r / 1e6;
    double m = w_to_double((i128)(2 * w_mag(q) + (u128)(r != 0))) * 0.5;
    return v < 0 ? -m : m;
}
// avg of a wide total of decimals over count rows (rf_val_dec128_avg)
__device__ __forceinline__ bool w_avg(i128 sum, i64 count, i64 *o)
{
    if (count <= 0) return false;
    return dec_res(div_round(sum, (i128)count), o);
}
// avg of a 128-bit total of ints (rf_val_int128_avg): scaled first
__device__ __forceinline__ bool w_int_avg(i128 sum, i64 count, i64 *o)
{
    const i128 lim = (i128)(((u128)1 << 127) - 1) / (i128)RF_DEC_ONE;
    if (sum > lim || sum < -lim) return false;
    return w_avg(sum * (i128)RF_DEC_ONE, count, o);
}
// normalized words: unsigned order of (hi, lo) is the value order
__device__ __forceinline__ u64 norm_hi(i128 v) { return (u64)w_hi(v) ^ (1ull << 63); }

// ---- conversions (rf_value.h's formulas) ----------------------------------
__device__ __forceinline__ bool int_to_dec(i64 a, i64 *o) { return dec_res((i128)a * (i128)RF_DEC_ONE, o); }
__device__ __forceinline__ double int_to_float(i64 a) { return (double)a; }
// rf_val_dec_from_float: |x| = m * 2^ex exactly, m * 10^6 below 2^73, rounded
// half away from zero by a shift (never x * 1e6 rounded to a double first)
__device__ __forceinline__ bool float_to_dec(double x, i64 *o)
{
    if (!(fabs(x) <= 1.7976931348623157e308)) return false; // NaN, inf
    int ex;
    double f = frexp(fabs(x), &ex);
    u128 p = (u128)(u64)ldexp(f, 53) * (u128)RF_DEC_ONE, q;
    ex -= 53;
    if (ex >= 0) {
        if (p != 0 && (ex > 63 || p > ((u128)RF_I64_MAX >> ex))) return false;
        q = p << ex;
    } else if (ex <= -128) {
        q = 0;
    } else {
        q = (p + ((u128)1 << (-ex - 1))) >> -ex;
    }
    if (q > (u128)RF_I64_MAX) return false;
    *o = x < 0 ? -(i64)q : (i64)q;
    return true;
}

// ---- the float total order: -0 == 0, NaNs equal and above everything ------
__device__ __forceinline__ int fcmp(double a, double b)
{
    if (a < b) return -1;
    if (a > b) return 1;
    if (a == b) return 0;
    return (a != a) - (b != b);
}
template <class T> __device__ __forceinline__ int icmp(T a, T b) { return (a > b) - (a < b); }

// ---- dates: days since 1970-01-01, years 1..9999 (Hinnant's algorithms) -----
#define RF_DATE_MIN (-719162)
#define RF_DATE_MAX 2932896
__device__ __forceinline__ void civil(i32 days, i32 *y, i32 *m, i32 *d)
{
    i64 z = (i64)days + 719468;
    i64 era = (z >= 0 ? z : z - 146096) / 146097;
    i64 doe = z - era * 146097;
    i64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    i64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    i64 mp = (5 * doy + 2) / 153;
    i64 dd = doy - (153 * mp + 2) / 5 + 1;
    i64 mm = mp < 10 ? mp + 3 : mp - 9;
    *y = (i32)(yoe + era * 400 + (mm <= 2));
    *m = (i32)mm;
    *d = (i32)dd;
}
__device__ __forceinline__ i32 days_from_civil(i32 y32, i32 m, i32 d)
{
    i64 y = (i64)y32 - (m <= 2);
    i64 era = (y >= 0 ? y : y - 399) / 400;
    i64 yoe = y - era * 400;
    i64 doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    i64 doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (i32)(era * 146097 + doe - 719468);
}
__device__ __forceinline__ int days_in_month(i32 y, i32 m)
{
    const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12) return 0;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}
__device__ __forceinline__ i64 date_part(i32 days, int which)
{
    i32 y, m, d;
    civil(days, &y, &m, &d);
    return which == 0 ? y : which == 1 ? m : d;
}
__device__ __forceinline__ bool add_days(i32 d, i64 n, i32 *o)
{
    i64 r;
    if (!add_i((i64)d, n, &r) || r < RF_DATE_MIN || r > RF_DATE_MAX) return false;
    *o = (i32)r;
    return true;
}
__device__ __forceinline__ bool add_months(i32 days, i64 n, i32 *o)
{
    if (n > 200000 || n < -200000) return false;
    i32 y, m, d;
    civil(days, &y, &m, &d);
    i64 t = (i64)y * 12 + (m - 1) + n;
    i64 ny = t >= 0 ? t / 12 : -((-t + 11) / 12);
    i32 nm = (i32)(t - ny * 12) + 1;
    if (ny < 1 || ny > 9999) return false;
    int dim = days_in_month((i32)ny, nm);
    *o = days_from_civil((i32)ny, nm, d > dim ? dim : d);
    return true;
}
__device__ __forceinline__ bool add_years(i32 d, i64 n, i32 *o)
{
    if (n > 20000 || n < -20000) return false;
    return add_months(d, n * 12, o);
}

// ---- the decoupled look-back of the one-pass kernels (rf_map.cuh's
// map_onepass and fused_onepass): blocks take tiles in order from a
// counter and number their rows by the rows of the tiles before.
// a tile's word: its count (RF_TILE_AGG) or the rows up to its end
// (RF_TILE_PRE); prefixes compare above counts, so both publish by atomicMax
#define RF_TILE_AGG (1ull << 62)
#define RF_TILE_PRE (2ull << 62)
#define RF_TILE_VAL ((1ull << 62) - 1)

// The rows before tile t: its predecessors' words, nearest first, until a
// prefix (a predecessor's block is running: it took its tile before t)
__device__ __forceinline__ u64 tile_lookback(u64 *tiles, i64 t)
{
    u64 base = 0;
    for (i64 j = t - 1; j >= 0;) {
        u64 w = atomicAdd(&tiles[j], 0ull);
        if (!w) continue;
        base += w & RF_TILE_VAL;
        if (w & RF_TILE_PRE) break;
        j--;
    }
    return base;
}

// The tiles of 4 x TILE rows of n rows
template <int TILE> __device__ __forceinline__ i64 tiles_of(i64 n) { return (n + 4 * (i64)TILE - 1) / (4 * (i64)TILE); }

// The block's next tile, taken by its thread 0 from the counter (tiles in
// order: a tile's predecessors were all taken by running blocks), or -1 past
// the last; every thread calls it, slot is shared memory
__device__ __forceinline__ i64 next_tile(u64 *counter, u64 *slot, i64 ntiles)
{
    if (threadIdx.x == 0) *slot = atomicAdd(counter, 1ull);
    __syncthreads();
    const i64 t = (i64)*slot;
    return t < ntiles ? t : -1;
}

// Publishes tile t's count agg and returns the rows before the tile (one
// thread of the block calls it)
__device__ __forceinline__ u64 tile_prefix(u64 *tiles, i64 t, u64 agg)
{
    u64 base = 0;
    if (t > 0) {
        atomicMax(&tiles[t], RF_TILE_AGG | agg);
        base = tile_lookback(tiles, t);
    }
    atomicMax(&tiles[t], RF_TILE_PRE | (base + agg));
    return base;
}

// The block's inclusive scan of v (every thread calls it; s: TILE words of
// shared memory, free again when it returns); *all gets the block's total
template <int TILE> __device__ __forceinline__ u64 block_scan(u64 *s, u64 v, u64 *all)
{
    const int me = (int)threadIdx.x;
    s[me] = v;
    __syncthreads();
    for (int d = 1; d < TILE; d <<= 1) {
        u64 o = me >= d ? s[me - d] : 0;
        __syncthreads();
        s[me] += o;
        __syncthreads();
    }
    const u64 r = s[me];
    *all = s[TILE - 1];
    __syncthreads();
    return r;
}

} // namespace rf

#endif
