// skeletons/cuda/test_decimal_ops.cpp: the GPU's decimal and integer
// arithmetic (rf_base.cuh, compiled as host C++ the way the emulator does)
// against the plain 128-bit definitions: the 64-bit fast paths of mul_d,
// add_d and sub_d must give the same value and the same overflow as
// dec_res(div_round((i128)a * b, 10^6)), dec_res((i128)a + b) and
// dec_res((i128)a - b), at the edges (0, +-1, +-10^6, halves, 2^31, 2^32,
// 2^62, INT64_MIN/MAX and their neighbours, pairwise) and for 20 million
// random pairs of random magnitudes (seeded: the same pairs every run).
// Likewise mod_i (%), shl_i and shr_i (int:shl, int:shr) against 128-bit
// definitions that use neither C's % on int64 nor >> on a negative value,
// shift counts from -2 to 66 included.
// The wide decimal's helpers (add_w .. w_int_avg, w_to_float) against
// common/rf_value.c's rf_val_dec128_* themselves (linked in): the same value
// and the same failure, at the edges (0, +-1, halves, 2^63, 2^64, 2^106,
// 2^126, the range's ends and their neighbours, pairwise) and for 2 million
// random pairs of random magnitudes.
// Built and run by test_decimal_ops.sh; exit 0 when all agree.
#include <cstdio>
#include <random>
#include "rf_emu_prelude.cuh"
#include "rf_gpu_args.h"
#include "rf_base.cuh"
extern "C" {
#include "rf_value.h"
}
using namespace rf;

static bool ref_mul(i64 a, i64 b, i64 *o) { return dec_res(div_round((i128)a * (i128)b, (i128)RF_DEC_ONE), o); }
static bool ref_add(i64 a, i64 b, i64 *o) { return dec_res((i128)a + b, o); }
static bool ref_sub(i64 a, i64 b, i64 *o) { return dec_res((i128)a - b, o); }

// the remainder of truncated division; INT64_MIN % -1 is 0
static bool ref_mod(i64 a, i64 b, i64 *o)
{
    if (b == 0) return false;
    i128 q = (i128)a / (i128)b;
    *o = (i64)((i128)a - q * (i128)b);
    return true;
}
// the low 64 bits of a * 2^n; floor(a / 2^n)
static bool ref_shl(i64 a, i64 n, i64 *o)
{
    if (n < 0 || n > 63) return false;
    *o = (i64)(u64)(((unsigned __int128)(u64)a * ((unsigned __int128)1 << n)));
    return true;
}
static bool ref_shr(i64 a, i64 n, i64 *o)
{
    if (n < 0 || n > 63) return false;
    i128 d = (i128)1 << n, q = (i128)a / d;
    if ((i128)a % d != 0 && a < 0) q -= 1;
    *o = (i64)q;
    return true;
}

static long bad = 0, cases = 0;

static void check(const char *op, bool (*f)(i64, i64, i64 *), bool (*ref)(i64, i64, i64 *), i64 a, i64 b)
{
    i64 x = 7, y = 7;
    bool p = f(a, b, &x), q = ref(a, b, &y);
    if (p != q || (p && x != y)) {
        if (bad < 10)
            printf("%s(%lld, %lld): %s %lld, expected %s %lld\n", op, (long long)a, (long long)b, p ? "ok" : "overflow",
                   (long long)x, q ? "ok" : "overflow", (long long)y);
        bad++;
    }
    cases++;
}

static void all(i64 a, i64 b)
{
    check("mul_d", mul_d, ref_mul, a, b);
    check("add_d", add_d, ref_add, a, b);
    check("sub_d", sub_d, ref_sub, a, b);
    check("mod_i", mod_i, ref_mod, a, b);
}

static void shifts(i64 a)
{
    for (i64 n = -2; n <= 66; n++) {
        check("shl_i", shl_i, ref_shl, a, n);
        check("shr_i", shr_i, ref_shr, a, n);
    }
}

// ---- wide decimals against rf_value.c ----
typedef rf_status (*ref_w2)(rf_dec128, rf_dec128, rf_dec128 *, rf_val_err *);

static void check_w(const char *op, bool (*f)(i128, i128, i128 *), ref_w2 ref, i128 a, i128 b)
{
    i128 x = 7, y = 7;
    rf_val_err e;
    bool p = f(a, b, &x), q = ref(a, b, &y, &e) == RF_OK;
    if (p != q || (p && x != y)) {
        if (bad < 10)
            printf("%s(%016llx%016llx, %016llx%016llx): %s, expected %s\n", op, (unsigned long long)w_hi(a),
                   (unsigned long long)w_lo(a), (unsigned long long)w_hi(b), (unsigned long long)w_lo(b),
                   p ? "ok" : "overflow", q ? "ok" : "overflow");
        bad++;
    }
    cases++;
}

static void check_w1(const char *what, bool ok, bool rok, i64 x, i64 y, i128 a)
{
    if (ok != rok || (ok && x != y)) {
        if (bad < 10)
            printf("%s(%016llx%016llx): %s %lld, expected %s %lld\n", what, (unsigned long long)w_hi(a),
                   (unsigned long long)w_lo(a), ok ? "ok" : "overflow", (long long)x, rok ? "ok" : "overflow", (long long)y);
        bad++;
    }
    cases++;
}

static void all_w(i128 a, i128 b)
{
    check_w("add_w", add_w, rf_val_dec128_add, a, b);
    check_w("sub_w", sub_w, rf_val_dec128_sub, a, b);
    check_w("mul_w", mul_w, rf_val_dec128_mul, a, b);
    check_w("div_w", div_w, rf_val_dec128_div, a, b);
}

static void one_w(i128 a, i64 count)
{
    rf_val_err e;
    i64 x = 7;
    int64_t y = 7;
    i128 n = 7, rn = 7;
    bool ok = neg_w(a, &n), rok = rf_val_dec128_neg(a, &rn, &e) == RF_OK;
    check_w1("neg_w", ok, rok, ok ? (i64)(n != rn) : 0, 0, a);
    ok = w_to_dec(a, &x), rok = rf_val_dec128_to_dec(a, &y, &e) == RF_OK;
    check_w1("w_to_dec", ok, rok, x, y, a);
    double f = w_to_float(a), rf = rf_val_dec128_to_float(a);
    check_w1("w_to_float", true, true, (i64)dbits(f), (i64)dbits(rf), a);
    x = y = 7;
    ok = w_avg(a, count, &x), rok = rf_val_dec128_avg(a, count, &y, &e) == RF_OK;
    check_w1("w_avg", ok, rok, x, y, a);
    x = y = 7;
    ok = w_int_avg(a, count, &x), rok = rf_val_int128_avg(a, count, &y, &e) == RF_OK;
    check_w1("w_int_avg", ok, rok, x, y, a);
}

static void wide_cases()
{
    const u128 one = 1;
    const i128 edges[] = {0, 1, 2, RF_DEC_ONE, 500000, 499999, 500001, 1500000, (i128)RF_I64_MAX, (i128)(one << 63),
                          (i128)(one << 64), (i128)(one << 106), (i128)(one << 107), (i128)(one << 126),
                          RF_W_MAX / RF_DEC_ONE, RF_W_MAX / 2, RF_W_MAX - 2, (i128)3037000499LL * 1000000007LL};
    for (i128 a0 : edges)
        for (i128 b0 : edges)
            for (int sa = -1; sa <= 1; sa += 2)
                for (int sb = -1; sb <= 1; sb += 2)
                    for (int da = -2; da <= 2; da++)
                        for (int db = -2; db <= 2; db++) all_w(sa * a0 + da, sb * b0 + db);
    for (i128 a0 : edges)
        for (int sa = -1; sa <= 1; sa += 2)
            for (int da = -2; da <= 2; da++)
                for (i64 c : {(i64)-1, (i64)0, (i64)1, (i64)3, (i64)RF_DEC_ONE, RF_I64_MAX}) one_w(sa * a0 + da, c);
    all_w(RF_W_MAX, RF_W_MAX);
    all_w(-RF_W_MAX, RF_W_MAX);
    all_w(-RF_W_MAX, -1);
    all_w(-RF_W_MAX, 1);
    std::mt19937_64 g(20261127);
    for (int i = 0; i < 2000000; i++) {
        int sa = (int)(g() % 127), sb = (int)(g() % 127);
        i128 a = (i128)((((u128)g() << 64) | g()) >> (sa + 1)), b = (i128)((((u128)g() << 64) | g()) >> (sb + 1));
        if (g() & 1) a = -a;
        if (g() & 1) b = -b;
        all_w(a, b);
        if (i % 16 == 0) one_w(a, (i64)(g() >> (g() % 64)));
    }
}

int main()
{
    wide_cases();
    const i64 edges[] = {0, 1, RF_DEC_ONE, 500000, 499999, 500001, 1500000, 2500000, (1LL << 31), (1LL << 32),
                         3037000499LL, 3037000500LL, (1LL << 61), (1LL << 62), RF_I64_MAX / RF_DEC_ONE, RF_I64_MAX - 2};
    for (i64 a0 : edges)
        for (i64 b0 : edges)
            for (int sa = -1; sa <= 1; sa += 2)
                for (int sb = -1; sb <= 1; sb += 2)
                    for (int da = -2; da <= 2; da++)
                        for (int db = -2; db <= 2; db++) all(sa * a0 + da, sb * b0 + db);
    for (i64 a0 : edges)
        for (int sa = -1; sa <= 1; sa += 2)
            for (int da = -2; da <= 2; da++) shifts(sa * a0 + da);
    shifts(RF_I64_MIN);
    shifts(RF_I64_MAX);
    all(RF_I64_MIN, 1);
    all(RF_I64_MIN, -1);
    all(RF_I64_MIN, RF_DEC_ONE);
    all(RF_I64_MIN, 0);
    all(RF_I64_MAX, RF_I64_MIN);
    // mul_d's fast path rounds by adding half the scale before dividing:
    // products just below 2^62 (its bound) with remainders about half, and
    // q01's factors (a price times 1 - a discount, times 1 + a tax)
    const i64 small[] = {1, 2, 3, 7, 500000, 999983, RF_DEC_ONE - 1, RF_DEC_ONE, RF_DEC_ONE + 1, 1100000};
    for (i64 b0 : small)
        for (int d = 0; d < 2000000; d += 1 + d / 2) {
            i64 a0 = (i64)((1ULL << 62) / (u64)b0) - d, h = (a0 * b0) % RF_DEC_ONE;
            for (int sa = -1; sa <= 1; sa += 2)
                for (int sb = -1; sb <= 1; sb += 2) {
                    all(sa * a0, sb * b0);
                    all(sa * (a0 - h / b0), sb * b0); // the remainder moved by multiples of b
                }
        }
    for (i64 p = 90000000LL; p <= 104949500000LL; p += 7777777LL)
        for (i64 d = 0; d <= 100000; d += 10000) {
            i64 dp = 0;
            all(p, RF_DEC_ONE - d);
            if (mul_d(p, RF_DEC_ONE - d, &dp))
                for (i64 t = 0; t <= 80000; t += 10000) all(dp, RF_DEC_ONE + t);
        }
    std::mt19937_64 g(20261125);
    for (int i = 0; i < 20000000; i++) {
        int sa = (int)(g() % 64), sb = (int)(g() % 64);
        i64 a = (i64)(g() >> sa), b = (i64)(g() >> sb);
        if (g() & 1) a = -a;
        if (g() & 1) b = -b;
        all(a, b);
        if (i % 64 == 0) shifts(a);
    }
    printf("%ld cases, %ld disagree\n", cases, bad);
    return bad != 0;
}
