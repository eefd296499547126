/*
** common/test_value.c: unit tests of rf_value (parsing, arithmetic, dates,
** formatting, comparison). Exits non-zero on the first summary with failures.
*/
#include "rf_value.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_STR(got, want)                                                                       \
    do {                                                                                           \
        checks++;                                                                                  \
        const char *g_ = (got), *w_ = (want);                                                      \
        if (strcmp(g_, w_)) {                                                                      \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: got \"%s\", want \"%s\"\n", __FILE__, __LINE__, g_, w_);       \
        }                                                                                          \
    } while (0)

/* deterministic xorshift so failures reproduce */
static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- helpers that parse a C string and report ok/value/why/offset ---- */

static rf_val_err E;

static int pint(const char *s, int64_t *v)
{
    E.why = NULL;
    E.off = -1;
    return rf_val_parse_int(s, (int64_t)strlen(s), v, &E) == RF_OK;
}
static int pdec(const char *s, int64_t *v)
{
    E.why = NULL;
    E.off = -1;
    return rf_val_parse_decimal(s, (int64_t)strlen(s), v, &E) == RF_OK;
}
static int pflt(const char *s, double *v)
{
    E.why = NULL;
    E.off = -1;
    return rf_val_parse_float(s, (int64_t)strlen(s), v, &E) == RF_OK;
}
static int pdate(const char *s, int32_t *v)
{
    E.why = NULL;
    E.off = -1;
    return rf_val_parse_date(s, (int64_t)strlen(s), v, &E) == RF_OK;
}
static int why_is(const char *why, int64_t off) { return E.why && !strcmp(E.why, why) && E.off == off; }

static void test_parse_int(void)
{
    int64_t v = 0;
    CHECK(pint("0", &v) && v == 0);
    CHECK(pint("-12", &v) && v == -12);
    CHECK(pint("+7", &v) && v == 7);
    CHECK(pint("007", &v) && v == 7);
    CHECK(pint("9223372036854775807", &v) && v == INT64_MAX);
    CHECK(pint("-9223372036854775808", &v) && v == INT64_MIN);
    CHECK(pint("0000000000000000000000000000000042", &v) && v == 42);
    CHECK(!pint("9223372036854775808", &v) && why_is("integer out of range", 0));
    CHECK(!pint("-9223372036854775809", &v) && why_is("integer out of range", 0));
    CHECK(!pint("123456789012345678901234567890", &v) && why_is("integer out of range", 0));
    CHECK(!pint("", &v) && why_is("empty field", 0));
    CHECK(!pint("-", &v) && why_is("missing digits", 1));
    CHECK(!pint("12a", &v) && why_is("unexpected character", 2));
    CHECK(!pint(" 1", &v) && why_is("unexpected character", 0));
    CHECK(!pint("1 ", &v) && why_is("unexpected character", 1));
    CHECK(!pint("1.0", &v) && why_is("unexpected character", 1));
    CHECK(!pint("--1", &v) && why_is("unexpected character", 1));
    /* a field is (ptr, len): bytes past len are not looked at */
    CHECK(rf_val_parse_int("123|456", 3, &v, NULL) == RF_OK && v == 123);
}

static void test_parse_decimal(void)
{
    int64_t v = 0;
    CHECK(pdec("-12.50", &v) && v == -12500000);
    CHECK(pdec("3", &v) && v == 3000000);
    CHECK(pdec(".5", &v) && v == 500000);
    CHECK(pdec("-.5", &v) && v == -500000);
    CHECK(pdec("5.", &v) && v == 5000000);
    CHECK(pdec("+1.25", &v) && v == 1250000);
    CHECK(pdec("0.000001", &v) && v == 1);
    CHECK(pdec("24710.35", &v) && v == 24710350000);
    CHECK(pdec("-0", &v) && v == 0);
    CHECK(pdec("9223372036854.775807", &v) && v == INT64_MAX);
    CHECK(pdec("-9223372036854.775807", &v) && v == -INT64_MAX);
    CHECK(pdec("0009223372036854", &v) && v == 9223372036854000000);
    CHECK(!pdec("9223372036854.775808", &v) && why_is("decimal out of range", 0));
    CHECK(!pdec("-9223372036854.775808", &v) && why_is("decimal out of range", 0));
    CHECK(!pdec("9223372036855", &v) && why_is("decimal out of range", 0));
    CHECK(!pdec("99999999999999999999999", &v) && why_is("decimal out of range", 0));
    CHECK(!pdec("1.1234567", &v) && why_is("too many fraction digits (at most 6)", 8));
    CHECK(!pdec("1.5000000", &v) && why_is("too many fraction digits (at most 6)", 8));
    CHECK(!pdec("12.3x4", &v) && why_is("unexpected character", 4));
    CHECK(!pdec(".", &v) && why_is("missing digits", 1));
    CHECK(!pdec("-", &v) && why_is("missing digits", 1));
    CHECK(!pdec("", &v) && why_is("empty field", 0));
    CHECK(!pdec("1e5", &v) && why_is("unexpected character", 1));
    CHECK(!pdec("1.2.3", &v) && why_is("unexpected character", 3));
    CHECK(!pdec("abc", &v) && why_is("unexpected character", 0));
    /* random round trip through the formatter */
    for (int i = 0; i < 200000; i++) {
        int64_t x = (int64_t)(next_rand() >> (next_rand() % 64));
        if (next_rand() & 1) x = -x;
        if (x == INT64_MIN) continue;
        char buf[RF_VAL_FMT_MAX];
        int n = rf_val_write_dec(buf, x);
        int64_t y = 0;
        if (rf_val_parse_decimal(buf, n, &y, NULL) != RF_OK || y != x) {
            CHECK(!"decimal round trip");
            fprintf(stderr, "  %lld -> %s -> %lld\n", (long long)x, buf, (long long)y);
            break;
        }
    }
}

static void test_parse_float(void)
{
    double v = 0;
    CHECK(pflt("1.5", &v) && v == 1.5);
    CHECK(pflt("-2e3", &v) && v == -2000.0);
    CHECK(pflt("1E-2", &v) && v == 0.01);
    CHECK(pflt(".5", &v) && v == 0.5);
    CHECK(pflt("5.", &v) && v == 5.0);
    CHECK(pflt("+3", &v) && v == 3.0);
    CHECK(pflt("0.1", &v) && v == 0.1);
    /* a float zero has no sign: every -0.0 reads as 0.0 (the fast path, strtod's underflow) */
    CHECK(pflt("-0", &v) && v == 0 && !signbit(v));
    CHECK(pflt("-0.0", &v) && v == 0 && !signbit(v));
    CHECK(pflt("-0e5", &v) && v == 0 && !signbit(v));
    CHECK(pflt("-1e-400", &v) && v == 0 && !signbit(v));
    CHECK(pflt("-0.00000000000000000000000000000000000000000000001e-300", &v) && v == 0 && !signbit(v));
    CHECK(pflt("1e-400", &v) && v == 0);
    CHECK(pflt("4.9406564584124654e-324", &v) && v == 4.9406564584124654e-324);
    CHECK(pflt("1.7976931348623157e308", &v) && v == DBL_MAX);
    CHECK(pflt("123456789012345678901234567890", &v) && v == 123456789012345678901234567890.0);
    CHECK(pflt("0.30000000000000004", &v) && v == 0.30000000000000004);
    CHECK(!pflt("1e400", &v) && why_is("float out of range", 0));
    CHECK(!pflt("-1e400", &v) && why_is("float out of range", 0));
    /* the values rf_val_write_float prints for infinities and NaN read back */
    CHECK(pflt("inf", &v) && isinf(v) && v > 0);
    CHECK(pflt("-inf", &v) && isinf(v) && v < 0);
    CHECK(pflt("nan", &v) && isnan(v) && !signbit(v));
    /* no other spelling */
    CHECK(!pflt("+inf", &v) && why_is("unexpected character", 1));
    CHECK(!pflt("Inf", &v) && why_is("unexpected character", 0));
    CHECK(!pflt("infinity", &v) && why_is("unexpected character", 0));
    CHECK(!pflt("NaN", &v) && why_is("unexpected character", 0));
    CHECK(!pflt("-nan", &v) && why_is("unexpected character", 1));
    CHECK(!pflt("nan1", &v) && why_is("unexpected character", 0));
    CHECK(!pflt("infx", &v) && why_is("unexpected character", 0));
    CHECK(!pflt("0x1p3", &v) && why_is("unexpected character", 1));
    CHECK(!pflt("1e", &v) && why_is("missing digits", 2));
    CHECK(!pflt("1e+", &v) && why_is("missing digits", 3));
    CHECK(!pflt("1.5f", &v) && why_is("unexpected character", 3));
    CHECK(!pflt(" 1", &v) && why_is("unexpected character", 0));
    CHECK(!pflt("", &v) && why_is("empty field", 0));
    CHECK(!pflt(".", &v) && why_is("missing digits", 1));
    /* long field (heap copy for strtod) */
    {
        char big[400];
        memset(big, '0', sizeof big);
        big[1] = '.';
        memcpy(big + 390, "125", 3);
        big[393] = 0;
        CHECK(pflt(big, &v) && v == strtod(big, NULL));
    }
    /* the fast path must agree with strtod on random decimal text (bit for bit, a zero's sign aside) */
    for (int i = 0; i < 200000; i++) {
        char s[64];
        int nd = 1 + (int)(next_rand() % 18), dot = (int)(next_rand() % (nd + 1)), n = 0;
        if (next_rand() & 1) s[n++] = '-';
        for (int k = 0; k < nd; k++) {
            if (k == dot) s[n++] = '.';
            s[n++] = (char)('0' + next_rand() % 10);
        }
        if (next_rand() & 1) n += snprintf(s + n, sizeof s - (size_t)n, "e%d", (int)(next_rand() % 61) - 30);
        s[n] = 0;
        double want = rf_val_float_canon(strtod(s, NULL)), got = 0; /* but -0.0: 0.0 */
        if (!pflt(s, &got) || memcmp(&got, &want, sizeof got)) {
            CHECK(!"float parse agrees with strtod");
            fprintf(stderr, "  %s: got %.17g want %.17g\n", s, got, want);
            break;
        }
    }
}

/* rf_val_float_canon: -0.0 becomes 0.0; every other value, NaN and the
** infinities included, is itself. */
static void test_float_canon(void)
{
    volatile double z = 0.0, m = -1.0; /* computed at run time, not folded */
    CHECK(!signbit(rf_val_float_canon(-0.0)) && rf_val_float_canon(-0.0) == 0);
    CHECK(!signbit(rf_val_float_canon(z * m)) && !signbit(rf_val_float_canon(-z)));
    CHECK(!signbit(rf_val_float_canon(z / -5.0)) && !signbit(rf_val_float_canon(-1e-300 * 1e-300)));
    CHECK(1.0 / rf_val_float_canon(z * m) == INFINITY);
    CHECK(!signbit(rf_val_float_canon(0.0)));
    CHECK(rf_val_float_canon(-2.5) == -2.5 && rf_val_float_canon(4.9406564584124654e-324) == 4.9406564584124654e-324);
    CHECK(rf_val_float_canon(-4.9406564584124654e-324) == -4.9406564584124654e-324);
    CHECK(rf_val_float_canon(INFINITY) == INFINITY && rf_val_float_canon(-INFINITY) == -INFINITY);
    CHECK(isnan(rf_val_float_canon(NAN)) && isnan(rf_val_float_canon(z / z)));
}

/* rf_val_float_key orders as rf_val_cmp_float, one image per value;
** rf_val_float_hash_bits: equal bits exactly for equal values. */
static void test_float_key(void)
{
    uint64_t nan_bits[3] = {UINT64_C(0xfff8000000000000), UINT64_C(0x7ff8000000000123), UINT64_C(0x7ff0000000000001)};
    double v[16] = {-INFINITY, -DBL_MAX, -1.5, -DBL_MIN, -4.9406564584124654e-324, -0.0, 0.0,
                    4.9406564584124654e-324, DBL_MIN, 1.0, 1.5, DBL_MAX, INFINITY, NAN, 0, 0};
    for (int i = 0; i < 3; i++) memcpy(&v[13 + i], &nan_bits[i], 8);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            int c = rf_val_cmp_float(v[i], v[j]);
            uint64_t a = rf_val_float_key(v[i]), b = rf_val_float_key(v[j]);
            CHECK((a < b ? -1 : a > b) == c);
            CHECK((rf_val_float_hash_bits(v[i]) == rf_val_float_hash_bits(v[j])) == (c == 0));
        }
    CHECK(rf_val_float_key(NAN) == UINT64_MAX && rf_val_float_hash_bits(-0.0) == 0);
}

static void test_parse_date_bool_utf8(void)
{
    int32_t d = 0;
    CHECK(pdate("1970-01-01", &d) && d == 0);
    CHECK(pdate("1970-01-02", &d) && d == 1);
    CHECK(pdate("1969-12-31", &d) && d == -1);
    CHECK(pdate("1995-03-15", &d) && d == 9204);
    CHECK(pdate("2000-02-29", &d) && d == 11016);
    CHECK(pdate("0001-01-01", &d) && d == RF_DATE_MIN);
    CHECK(pdate("9999-12-31", &d) && d == RF_DATE_MAX);
    CHECK(!pdate("1995-02-30", &d) && why_is("invalid date", 8));
    CHECK(!pdate("1900-02-29", &d) && why_is("invalid date", 8));
    CHECK(!pdate("1995-04-31", &d) && why_is("invalid date", 8));
    CHECK(!pdate("1995-00-10", &d) && why_is("invalid date", 5));
    CHECK(!pdate("1995-13-01", &d) && why_is("invalid date", 5));
    CHECK(!pdate("1995-01-00", &d) && why_is("invalid date", 8));
    CHECK(!pdate("0000-01-01", &d) && why_is("invalid date", 0));
    CHECK(!pdate("1995-2-03", &d) && why_is("expected YYYY-MM-DD", 6));
    CHECK(!pdate("19950203", &d) && why_is("expected YYYY-MM-DD", 4));
    CHECK(!pdate("1995-02-0", &d) && why_is("expected YYYY-MM-DD", 9));
    CHECK(!pdate("1995-02-031", &d) && why_is("unexpected character", 10));
    CHECK(!pdate("", &d) && why_is("empty field", 0));

    uint8_t b = 9;
    CHECK(rf_val_parse_bool("true", 4, &b, &E) == RF_OK && b == 1);
    CHECK(rf_val_parse_bool("false", 5, &b, &E) == RF_OK && b == 0);
    CHECK(rf_val_parse_bool("TRUE", 4, &b, &E) == RF_EUSER && why_is("expected true or false", 0));
    CHECK(rf_val_parse_bool("1", 1, &b, &E) == RF_EUSER);
    CHECK(rf_val_parse_bool("", 0, &b, &E) == RF_EUSER && why_is("empty field", 0));

#define U8(s, ok_, off_)                                                                             \
    do {                                                                                           \
        E.why = NULL;                                                                              \
        E.off = -1;                                                                                \
        rf_status st_ = rf_val_check_utf8(s, (int64_t)sizeof(s) - 1, &E);                          \
        CHECK(ok_ ? st_ == RF_OK : (st_ == RF_EUSER && why_is("invalid UTF-8", off_)));              \
    } while (0)
    U8("", 1, 0);
    U8("plain ascii text, longer than eight bytes", 1, 0);
    U8("h\xc3\xa9llo", 1, 0);                    /* é */
    U8("\xe6\x97\xa5\xe6\x9c\xac", 1, 0);        /* 日本 */
    U8("\xf0\x9f\x98\x80", 1, 0);                /* U+1F600 */
    U8("\xf4\x8f\xbf\xbf", 1, 0);                /* U+10FFFF */
    U8("\xef\xbf\xbf", 1, 0);                    /* U+FFFF */
    U8("\xff", 0, 0);
    U8("a\xc0\x80", 0, 1);                       /* overlong NUL */
    U8("ab\xe0\x80\xaf", 0, 2);                  /* overlong / */
    U8("\xed\xa0\x80", 0, 0);                    /* surrogate */
    U8("\xf4\x90\x80\x80", 0, 0);                /* beyond U+10FFFF */
    U8("\xf0\x80\x80\x80", 0, 0);                /* overlong 4-byte */
    U8("xyz\xe6\x97", 0, 3);                     /* truncated */
    U8("\x80", 0, 0);                            /* lone continuation */
    U8("twenty bytes of text\xc3", 0, 20);       /* after the 8-byte fast path */
    U8("twenty bytes of text\xc3\xa9 and more", 1, 0);
    CHECK(rf_val_utf8_len("\xe6\x97\xa5", 3) == 3);
    CHECK(rf_val_utf8_len("\xe6\x97\xa5", 2) == 0);
    CHECK(rf_val_utf8_len("a", 0) == 0);
}

static void test_arith(void)
{
    int64_t r = 0;
    rf_val_err e;
    CHECK(rf_val_int_add(INT64_MAX, 1, &r, &e) == RF_EUSER && !strcmp(e.why, "integer out of range"));
    CHECK(rf_val_int_add(2, 3, &r, &e) == RF_OK && r == 5);
    CHECK(rf_val_int_sub(INT64_MIN, 1, &r, &e) == RF_EUSER);
    CHECK(rf_val_int_mul(INT64_MAX / 2 + 1, 2, &r, &e) == RF_EUSER);
    CHECK(rf_val_int_mul(-4, 5, &r, &e) == RF_OK && r == -20);
    CHECK(rf_val_int_div(7, -2, &r, &e) == RF_OK && r == -3);
    CHECK(rf_val_int_div(1, 0, &r, &e) == RF_EUSER && !strcmp(e.why, "division by zero"));
    CHECK(rf_val_int_div(INT64_MIN, -1, &r, &e) == RF_EUSER);
    CHECK(rf_val_int_mod(-7, 2, &r, &e) == RF_OK && r == -1);
    CHECK(rf_val_int_mod(INT64_MIN, -1, &r, &e) == RF_OK && r == 0);
    CHECK(rf_val_int_mod(1, 0, &r, &e) == RF_EUSER);

    const int64_t ONE = RF_DEC_ONE;
    CHECK(rf_val_dec_add(ONE, ONE / 2, &r, &e) == RF_OK && r == 1500000);
    CHECK(rf_val_dec_add(RF_DEC_MAX, 1, &r, &e) == RF_EUSER && !strcmp(e.why, "decimal out of range"));
    CHECK(rf_val_dec_sub(RF_DEC_MIN, 1, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec_sub(RF_DEC_MIN + 1, 1, &r, &e) == RF_OK && r == RF_DEC_MIN);
    CHECK(rf_val_dec_neg(RF_DEC_MIN, &r, &e) == RF_OK && r == RF_DEC_MAX);
    /* mul: 1.5 * 0.000001 = 0.0000015, rounds away from zero to 0.000002 */
    CHECK(rf_val_dec_mul(1500000, 1, &r, &e) == RF_OK && r == 2);
    CHECK(rf_val_dec_mul(-1500000, 1, &r, &e) == RF_OK && r == -2);
    CHECK(rf_val_dec_mul(1400000, 1, &r, &e) == RF_OK && r == 1);
    CHECK(rf_val_dec_mul(24710350000, 960000, &r, &e) == RF_OK && r == 23721936000); /* 24710.35*0.96 */
    CHECK(rf_val_dec_mul(2 * ONE, -3 * ONE, &r, &e) == RF_OK && r == -6 * ONE);
    CHECK(rf_val_dec_mul(RF_DEC_MAX, 2 * ONE, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec_mul(RF_DEC_MAX, RF_DEC_MAX, &r, &e) == RF_EUSER); /* product needs ~126 bits */
    CHECK(rf_val_dec_mul(RF_DEC_MIN, RF_DEC_MIN, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec_div(ONE, 3 * ONE, &r, &e) == RF_OK && r == 333333);
    CHECK(rf_val_dec_div(2 * ONE, 3 * ONE, &r, &e) == RF_OK && r == 666667);
    CHECK(rf_val_dec_div(-2 * ONE, 3 * ONE, &r, &e) == RF_OK && r == -666667);
    CHECK(rf_val_dec_div(2 * ONE, -3 * ONE, &r, &e) == RF_OK && r == -666667);
    CHECK(rf_val_dec_div(1, 2 * ONE, &r, &e) == RF_OK && r == 1);  /* 0.0000005 -> 0.000001 */
    CHECK(rf_val_dec_div(-1, 2 * ONE, &r, &e) == RF_OK && r == -1);
    CHECK(rf_val_dec_div(ONE, 0, &r, &e) == RF_EUSER && !strcmp(e.why, "division by zero"));
    CHECK(rf_val_dec_div(RF_DEC_MAX, 1, &r, &e) == RF_EUSER); /* / 0.000001 */
    CHECK(rf_val_dec_div(RF_DEC_MIN, -ONE, &r, &e) == RF_OK && r == RF_DEC_MAX);

    CHECK(rf_val_dec_from_int(-7, &r, &e) == RF_OK && r == -7 * ONE);
    CHECK(rf_val_dec_from_int(INT64_MAX / ONE + 1, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec_to_int(-7900000) == -7);
    CHECK(rf_val_dec_to_int(7900000) == 7);
    CHECK(rf_val_dec_to_float(1500000) == 1.5);
    CHECK(rf_val_dec_to_float(-1) == -1e-6);
    CHECK(rf_val_dec_from_float(1.5, &r, &e) == RF_OK && r == 1500000);
    CHECK(rf_val_dec_from_float(0.0078125, &r, &e) == RF_OK && r == 7813);   /* exact tie */
    CHECK(rf_val_dec_from_float(-0.0078125, &r, &e) == RF_OK && r == -7813);
    CHECK(rf_val_dec_from_float(0.1, &r, &e) == RF_OK && r == 100000);
    CHECK(rf_val_dec_from_float(9.2e12, &r, &e) == RF_OK && r == 9200000000000000000);
    CHECK(rf_val_dec_from_float(1e13, &r, &e) == RF_EUSER && !strcmp(e.why, "decimal out of range"));
    CHECK(rf_val_dec_from_float(-1e13, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec_from_float(NAN, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec_from_float(INFINITY, &r, &e) == RF_EUSER);
    /* the float's exact value is rounded, never x * 1e6 as a double (values by Python's Decimal) */
    CHECK(rf_val_dec_from_float(8000000000000.123, &r, &e) == RF_OK && r == 8000000000000123047);
    CHECK(rf_val_dec_from_float(-8000000000000.123, &r, &e) == RF_OK && r == -8000000000000123047);
    CHECK(rf_val_dec_from_float(123.4567895, &r, &e) == RF_OK && r == 123456789); /* just below the tie */
    CHECK(rf_val_dec_from_float(5e-7, &r, &e) == RF_OK && r == 0);
    CHECK(rf_val_dec_from_float(4e-320, &r, &e) == RF_OK && r == 0);
    CHECK(rf_val_dec_from_float(9223372036854.775807, &r, &e) == RF_OK && r == 9223372036854775391);
    CHECK(rf_val_dec_from_float(-9223372036854.775807, &r, &e) == RF_OK && r == -9223372036854775391);
    CHECK(rf_val_dec_from_float(nextafter(9223372036854.775807, 1e13), &r, &e) == RF_EUSER);
    CHECK(rf_val_dec_from_float(0x1p40, &r, &e) == RF_OK && r == 1099511627776000000);
    CHECK(rf_val_dec_from_float(0x1p43, &r, &e) == RF_OK && r == 8796093022208000000);
    CHECK(rf_val_dec_from_float(0x1p44, &r, &e) == RF_EUSER);
    /* the nearest double to the millionths, never (double)d rounded first */
    CHECK(rf_val_dec_to_float(5258986265376043509) == 5258986265376.044);
    CHECK(rf_val_dec_to_float(-7408596316092197599) == -7408596316092.197);
    CHECK(rf_val_dec_to_float(RF_DEC_MAX) == 9223372036854.775);

    rf_dec128 s = 0;
    for (int i = 0; i < 1000; i++) CHECK(rf_val_dec128_add(s, RF_DEC_MAX, &s, &e) == RF_OK);
    CHECK(s == (rf_dec128)RF_DEC_MAX * 1000);
    CHECK(rf_val_dec128_to_dec(s, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec128_avg(s, 1000, &r, &e) == RF_OK && r == RF_DEC_MAX);
    rf_dec128 big = ((rf_dec128)INT64_MAX << 64) | (rf_dec128)UINT64_MAX; /* INT128_MAX */
    rf_dec128 t;
    CHECK(rf_val_dec128_add(big, 1, &t, &e) == RF_EUSER);
    CHECK(rf_val_dec128_avg(3000000, 2, &r, &e) == RF_OK && r == 1500000);
    CHECK(rf_val_dec128_avg(10, 4, &r, &e) == RF_OK && r == 3);   /* 2.5 units -> 3 */
    CHECK(rf_val_dec128_avg(-10, 4, &r, &e) == RF_OK && r == -3);
    CHECK(rf_val_dec128_avg(big, 1, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec128_avg(-big, 3, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec128_avg(1, 0, &r, &e) == RF_EUSER && !strcmp(e.why, "division by zero"));
    CHECK(rf_val_int128_avg(7, 2, &r, &e) == RF_OK && r == 3500000);
    CHECK(rf_val_int128_avg(1, 3, &r, &e) == RF_OK && r == 333333);
    CHECK(rf_val_int128_avg(2, 3, &r, &e) == RF_OK && r == 666667);
    CHECK(rf_val_int128_avg(-2, 3, &r, &e) == RF_OK && r == -666667);
    CHECK(rf_val_int128_avg(big, 3, &r, &e) == RF_EUSER);
}

static void test_dates(void)
{
    /* every day of the supported range against a plain calendar walk */
    int32_t y = 1, m = 1, d = 1, bad = 0;
    for (int32_t z = RF_DATE_MIN; z <= RF_DATE_MAX && bad < 5; z++) {
        int32_t yy, mm, dd;
        rf_val_civil_from_days(z, &yy, &mm, &dd);
        if (yy != y || mm != m || dd != d || rf_val_days_from_civil(y, m, d) != z) {
            bad++;
            fprintf(stderr, "  day %d: %d-%d-%d vs %d-%d-%d\n", (int)z, (int)yy, (int)mm, (int)dd,
                    (int)y, (int)m, (int)d);
        }
        if (++d > rf_val_days_in_month(y, m)) {
            d = 1;
            if (++m > 12) {
                m = 1;
                y++;
            }
        }
    }
    CHECK(bad == 0);
    CHECK(y == 10000 && m == 1 && d == 1);
    CHECK(rf_val_days_from_civil(1970, 1, 1) == 0);
    CHECK(rf_val_date_year(9204) == 1995 && rf_val_date_month(9204) == 3 && rf_val_date_day(9204) == 15);
    CHECK(rf_val_is_leap(2000) && rf_val_is_leap(1996) && !rf_val_is_leap(1900) && !rf_val_is_leap(1995));
    CHECK(rf_val_days_in_month(1995, 13) == 0);
    CHECK(rf_val_date_valid(1996, 2, 29) && !rf_val_date_valid(1995, 2, 29) && !rf_val_date_valid(10000, 1, 1));

    int32_t a, r;
    rf_val_err e;
    char buf[RF_VAL_FMT_MAX];
#define DATE(s) (pdate(s, &a), a)
#define ADD(fn, s, n, want)                                                                        \
    do {                                                                                           \
        CHECK(fn(DATE(s), n, &r, &e) == RF_OK);                                                    \
        rf_val_write_date(buf, r);                                                                 \
        CHECK_STR(buf, want);                                                                      \
    } while (0)
    ADD(rf_val_date_add_months, "1995-01-31", 1, "1995-02-28");
    ADD(rf_val_date_add_months, "1996-01-31", 1, "1996-02-29");
    ADD(rf_val_date_add_months, "1995-03-31", -1, "1995-02-28");
    ADD(rf_val_date_add_months, "1995-01-15", -1, "1994-12-15");
    ADD(rf_val_date_add_months, "1995-01-15", -13, "1993-12-15");
    ADD(rf_val_date_add_months, "1995-01-15", 12, "1996-01-15");
    ADD(rf_val_date_add_months, "1995-12-31", 2, "1996-02-29");
    ADD(rf_val_date_add_months, "1995-05-31", 0, "1995-05-31");
    ADD(rf_val_date_add_years, "1996-02-29", 1, "1997-02-28");
    ADD(rf_val_date_add_years, "1996-02-29", 4, "2000-02-29");
    ADD(rf_val_date_add_years, "1996-02-29", -99, "1897-02-28");
    ADD(rf_val_date_add_years, "1996-02-29", -100, "1896-02-29");
    ADD(rf_val_date_add_years, "1994-01-01", 1, "1995-01-01");
    ADD(rf_val_date_add_days, "1995-02-28", 1, "1995-03-01");
    ADD(rf_val_date_add_days, "1996-02-28", 1, "1996-02-29");
    ADD(rf_val_date_add_days, "1998-12-01", -90, "1998-09-02");
    ADD(rf_val_date_add_days, "1970-01-01", -1, "1969-12-31");
    CHECK(rf_val_date_add_days(RF_DATE_MAX, 1, &r, &e) == RF_EUSER && !strcmp(e.why, "date out of range"));
    CHECK(rf_val_date_add_days(RF_DATE_MIN, -1, &r, &e) == RF_EUSER);
    CHECK(rf_val_date_add_days(0, INT64_MAX, &r, &e) == RF_EUSER);
    CHECK(rf_val_date_add_days(0, INT64_MIN, &r, &e) == RF_EUSER);
    CHECK(rf_val_date_add_months(RF_DATE_MAX, 1, &r, &e) == RF_EUSER);
    CHECK(rf_val_date_add_months(RF_DATE_MIN, -1, &r, &e) == RF_EUSER);
    CHECK(rf_val_date_add_months(0, INT64_MIN, &r, &e) == RF_EUSER);
    CHECK(rf_val_date_add_years(0, 8030, &r, &e) == RF_EUSER);
    CHECK(rf_val_date_add_years(0, 8029, &r, &e) == RF_OK);
    CHECK(rf_val_date_add_years(0, INT64_MAX, &r, &e) == RF_EUSER);
    CHECK(rf_val_date_add_years(0, -1969, &r, &e) == RF_OK && r == RF_DATE_MIN);
    CHECK(rf_val_date_add_years(0, -1970, &r, &e) == RF_EUSER);
    /* parse/format round trip over random days */
    for (int i = 0; i < 100000; i++) {
        int32_t z = RF_DATE_MIN + (int32_t)(next_rand() % (uint64_t)(RF_DATE_MAX - RF_DATE_MIN + 1)), w = 0;
        int n = rf_val_write_date(buf, z);
        if (n != 10 || rf_val_parse_date(buf, n, &w, NULL) != RF_OK || w != z) {
            CHECK(!"date round trip");
            break;
        }
    }
}

/* The obvious definition of the shortest round-trip float text: the fewest
** significant digits. rf_val_write_float may choose positional notation
** where %g at that precision would not ("480" rather than "4.8e+02"), so
** the test compares significant digits, not text. */
static void ref_float(char *dst, double v)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(dst, 64, "%.*g", p, v);
        if (strtod(dst, NULL) == v) break;
    }
}

static int sig_digits(const char *s)
{
    char d[64];
    int n = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9') d[n++] = *s;
    int a = 0;
    while (a < n && d[a] == '0') a++;
    while (n > a && d[n - 1] == '0') n--;
    return n - a;
}

static void test_format(void)
{
    char buf[RF_VAL_FMT_MAX];
    rf_val_write_int(buf, 0);
    CHECK_STR(buf, "0");
    rf_val_write_int(buf, INT64_MIN);
    CHECK_STR(buf, "-9223372036854775808");
    rf_val_write_int(buf, INT64_MAX);
    CHECK_STR(buf, "9223372036854775807");

    static const struct {
        int64_t v;
        const char *s;
    } decs[] = {{1500000, "1.50"},
                {2000000, "2.00"},
                {123400, "0.1234"},
                {-500000, "-0.50"},
                {0, "0.00"},
                {1, "0.000001"},
                {-1, "-0.000001"},
                {24710350000, "24710.35"},
                {10000000, "10.00"},
                {1234567, "1.234567"},
                {RF_DEC_MAX, "9223372036854.775807"},
                {RF_DEC_MIN, "-9223372036854.775807"}};
    for (int i = 0; i < (int)RF_ARRAY_LEN(decs); i++) {
        int n = rf_val_write_dec(buf, decs[i].v);
        CHECK_STR(buf, decs[i].s);
        CHECK(n == (int)strlen(decs[i].s));
    }
    rf_val_write_dec128(buf, (rf_dec128)RF_DEC_MAX * 1000);
    CHECK_STR(buf, "9223372036854775.807");
    rf_val_write_dec128(buf, -(rf_dec128)1500000);
    CHECK_STR(buf, "-1.50");
    rf_val_write_dec128(buf, 0);
    CHECK_STR(buf, "0.00");
    rf_dec128 min128 = -(((rf_dec128)INT64_MAX << 64) | (rf_dec128)UINT64_MAX) - 1;
    rf_val_write_dec128(buf, min128);
    CHECK_STR(buf, "-170141183460469231731687303715884.105728");
    rf_val_write_dec128(buf, -min128 - 1);
    CHECK_STR(buf, "170141183460469231731687303715884.105727");

    rf_val_write_date(buf, 0);
    CHECK_STR(buf, "1970-01-01");
    rf_val_write_date(buf, RF_DATE_MIN);
    CHECK_STR(buf, "0001-01-01");
    rf_val_write_date(buf, RF_DATE_MAX);
    CHECK_STR(buf, "9999-12-31");
    rf_val_write_bool(buf, 1);
    CHECK_STR(buf, "true");
    rf_val_write_bool(buf, 0);
    CHECK_STR(buf, "false");

    static const struct {
        double v;
        const char *s;
    } flts[] = {{2.0, "2.0"},
                {0.1, "0.1"},
                {1.5, "1.5"},
                {-0.0, "0.0"}, /* one value, one spelling */
                {0.0, "0.0"},
                {1e20, "1e+20"},
                {123456.0, "123456.0"},
                {480.0, "480.0"},
                {100.0, "100.0"},
                {-7.0, "-7.0"},
                {1e15, "1e+15"},
                {123456789012345.0, "123456789012345.0"},
                {0.0001, "0.0001"},
                {0.00001, "1e-05"},
                {1.0 / 3, "0.3333333333333333"},
                {0.30000000000000004, "0.30000000000000004"},
                {5e-324, "5e-324"},
                {DBL_MAX, "1.7976931348623157e+308"},
                {DBL_MIN, "2.2250738585072014e-308"},
                {-2.5e-5, "-2.5e-05"},
                {INFINITY, "inf"},
                {-INFINITY, "-inf"},
                {NAN, "nan"}};
    for (int i = 0; i < (int)RF_ARRAY_LEN(flts); i++) {
        int n = rf_val_write_float(buf, flts[i].v);
        CHECK_STR(buf, flts[i].s);
        CHECK(n == (int)strlen(flts[i].s));
        double back; /* what is printed reads back as the same value */
        CHECK(pflt(buf, &back) && rf_val_cmp_float(back, flts[i].v) == 0 && (flts[i].v == 0 || !signbit(back) == !signbit(flts[i].v)));
    }
    /* shortest round trip, against the plain definition, on random bit patterns */
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = next_rand();
        double v;
        memcpy(&v, &bits, sizeof v);
        if (i % 3 == 0) v = (double)(int64_t)(next_rand() % 2000000 - 1000000) / 1000.0;
        if (!isfinite(v)) continue;
        char ref[64];
        ref_float(ref, v);
        rf_val_write_float(buf, v);
        if (sig_digits(buf) != sig_digits(ref) || strtod(buf, NULL) != v || !strpbrk(buf, ".e")) {
            CHECK_STR(buf, ref);
            break;
        }
    }

    rf_buf b;
    rf_buf_init(&b);
    rf_val_fmt_int(&b, -5);
    rf_buf_putc(&b, '|');
    rf_val_fmt_dec(&b, 1500000);
    rf_buf_putc(&b, '|');
    rf_val_fmt_dec128(&b, 123400);
    rf_buf_putc(&b, '|');
    rf_val_fmt_float(&b, 2.0);
    rf_buf_putc(&b, '|');
    rf_val_fmt_date(&b, 9204);
    rf_buf_putc(&b, '|');
    rf_val_fmt_bool(&b, 1);
    CHECK_STR(rf_buf_cstr(&b), "-5|1.50|0.1234|2.0|1995-03-15|true");
    rf_buf_free(&b);
}

static void test_misc(void)
{
    CHECK(rf_val_cmp_int(1, 2) == -1 && rf_val_cmp_int(2, 2) == 0 && rf_val_cmp_int(INT64_MAX, INT64_MIN) == 1);
    CHECK(rf_val_cmp_dec128((rf_dec128)1 << 100, 1) == 1);
    CHECK(rf_val_cmp_float(-INFINITY, -1e300) == -1);
    CHECK(rf_val_cmp_float(INFINITY, NAN) == -1);
    CHECK(rf_val_cmp_float(NAN, NAN) == 0);
    CHECK(rf_val_cmp_float(NAN, 1.0) == 1);
    CHECK(rf_val_cmp_float(-0.0, 0.0) == 0);
    CHECK(rf_val_cmp_float(1.0, 2.0) == -1);
    CHECK(rf_val_cmp_str("abc", 3, "abd", 3) == -1);
    CHECK(rf_val_cmp_str("ab", 2, "abc", 3) == -1);
    CHECK(rf_val_cmp_str("abc", 3, "ab", 2) == 1);
    CHECK(rf_val_cmp_str("", 0, "", 0) == 0);
    CHECK(rf_val_cmp_str("\xc3\xa9", 2, "z", 1) == 1); /* bytes compare unsigned */
    CHECK_STR(rf_val_type_name(RF_TYPE_BOOL), "boolean");
    CHECK_STR(rf_val_type_name(RF_TYPE_DECIMAL), "decimal");
    CHECK(rf_val_type_size(RF_TYPE_DATE) == 4 && rf_val_type_size(RF_TYPE_STRING) == 0);
}

/* ---- the wide decimal (RF_TYPE_DEC128) ----------------------------------- */

static int pwide(const char *s, rf_dec128 *v)
{
    E.why = NULL;
    E.off = -1;
    return rf_val_parse_dec128(s, (int64_t)strlen(s), v, &E) == RF_OK;
}

static const char *wtext(rf_dec128 v)
{
    static char buf[RF_VAL_FMT_MAX];
    rf_val_write_dec128(buf, v);
    return buf;
}

/* x * k exactly, or -1 when it overflows the wide range (an independent
** reference for multiplying by a whole number k). */
static int times(rf_dec128 x, int64_t k, rf_dec128 *out)
{
    if (__builtin_mul_overflow(x, (rf_dec128)k, out)) return -1;
    return *out < RF_DEC128_MIN ? -1 : 0;
}

static void test_wide(void)
{
    rf_dec128 v, r;
    rf_val_err e;
    const rf_dec128 max = RF_DEC128_MAX, min = RF_DEC128_MIN;
    /* names and sizes */
    CHECK_STR(rf_val_type_name(RF_TYPE_DEC128), "decimal128");
    CHECK_STR(rf_val_type_user_name(RF_TYPE_DEC128), "decimal");
    CHECK_STR(rf_val_type_user_name(RF_TYPE_INT), "int");
    CHECK(rf_val_type_size(RF_TYPE_DEC128) == 16);
    /* the range: 2^127 - 1 units, symmetric */
    CHECK(max > 0 && max + min == 0 && (max >> 126) == 1);
    /* parsing and printing, edge cases */
    CHECK(pwide("170141183460469231731687303715884.105727", &v) && v == max);
    CHECK(pwide("-170141183460469231731687303715884.105727", &v) && v == min);
    CHECK(!pwide("170141183460469231731687303715884.105728", &v) && why_is("decimal out of range", 0));
    CHECK(!pwide("1701411834604692317316873037158840", &v) && why_is("decimal out of range", 0));
    CHECK(pwide("0000000000000000000000000000000000000000001.5", &v) && v == 1500000);
    CHECK(pwide("+.5", &v) && v == 500000);
    CHECK(pwide("5.", &v) && v == 5000000);
    CHECK(pwide("-0", &v) && v == 0);
    CHECK(!pwide("1.0000000", &v) && why_is("too many fraction digits (at most 6)", 8));
    CHECK(!pwide("", &v) && why_is("empty field", 0));
    CHECK(!pwide("-", &v) && why_is("missing digits", 1));
    CHECK(!pwide("1x", &v) && why_is("unexpected character", 1));
    CHECK_STR(wtext(max), "170141183460469231731687303715884.105727");
    CHECK_STR(wtext(min), "-170141183460469231731687303715884.105727");
    CHECK_STR(wtext(0), "0.00");
    CHECK_STR(wtext(-1), "-0.000001");
    /* the same text as decimal's for every decimal, and read back exactly */
    for (int i = 0; i < 2000; i++) {
        int64_t d = (int64_t)next_rand();
        if (d == INT64_MIN) continue;
        char a[RF_VAL_FMT_MAX];
        rf_val_write_dec(a, d);
        CHECK_STR(wtext(d), a);
        rf_dec128 w = (rf_dec128)d * ((rf_dec128)1 << 64) / 3;
        CHECK(pwide(wtext(w), &v) && v == w);
    }
    /* add, sub, neg: exact to the edges */
    CHECK(rf_val_dec128_add(max - 1, 1, &r, &e) == RF_OK && r == max);
    CHECK(rf_val_dec128_add(max, 1, &r, &e) == RF_EUSER && !strcmp(e.why, "decimal out of range"));
    CHECK(rf_val_dec128_add(min, -1, &r, &e) == RF_EUSER); /* -2^127 is outside */
    CHECK(rf_val_dec128_sub(min, 1, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec128_sub(0, max, &r, &e) == RF_OK && r == min);
    CHECK(rf_val_dec128_sub(-2, max, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec128_neg(min, &r, &e) == RF_OK && r == max);
    /* mul: rounding half away from zero at 6 digits */
    CHECK(rf_val_dec128_mul(1, 500000, &r, &e) == RF_OK && r == 1);    /* 0.000001 * 0.5 */
    CHECK(rf_val_dec128_mul(-1, 500000, &r, &e) == RF_OK && r == -1);
    CHECK(rf_val_dec128_mul(1, 499999, &r, &e) == RF_OK && r == 0);
    CHECK(rf_val_dec128_mul(max, RF_DEC_ONE, &r, &e) == RF_OK && r == max);
    CHECK(rf_val_dec128_mul(min, RF_DEC_ONE, &r, &e) == RF_OK && r == min);
    CHECK(rf_val_dec128_mul(max, -RF_DEC_ONE, &r, &e) == RF_OK && r == min);
    CHECK(rf_val_dec128_mul(max, 2 * RF_DEC_ONE, &r, &e) == RF_EUSER && !strcmp(e.why, "decimal out of range"));
    CHECK(rf_val_dec128_mul(max, max, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec128_mul(min, max, &r, &e) == RF_EUSER);
    /* 10^20 units squared: 10^40 / 10^6 = 10^34 units */
    rf_dec128 e20 = (rf_dec128)10000000000 * 10000000000;
    rf_dec128 e17 = (rf_dec128)100000000000000000;
    CHECK(rf_val_dec128_mul(e20, e20, &r, &e) == RF_OK && r == e17 * e17);
    /* (2^110 + 1) units * 0.5 = 2^109 + 0.5 units: rounds away from zero */
    rf_dec128 p110 = (rf_dec128)1 << 110;
    CHECK(rf_val_dec128_mul(p110 + 1, 500000, &r, &e) == RF_OK && r == ((rf_dec128)1 << 109) + 1);
    CHECK(rf_val_dec128_mul(-(p110 + 1), 500000, &r, &e) == RF_OK && r == -((rf_dec128)1 << 109) - 1);
    CHECK(rf_val_dec128_mul(p110 + 1, -500000, &r, &e) == RF_OK && r == -((rf_dec128)1 << 109) - 1);
    /* a whole multiplier k (k * 10^6 units) gives x * k exactly, on the fast and the 256-bit path */
    for (int i = 0; i < 4000; i++) {
        rf_dec128 x = (rf_dec128)(((unsigned __int128)next_rand() << 64 | next_rand()) >> (next_rand() % 127));
        if (next_rand() & 1) x = -x;
        int64_t k = (int64_t)(next_rand() % 2000000) - 1000000;
        rf_dec128 want;
        int ok = times(x, k, &want) == 0;
        rf_status st = rf_val_dec128_mul(x, (rf_dec128)k * RF_DEC_ONE, &r, &e);
        CHECK(ok ? st == RF_OK && r == want : st == RF_EUSER);
        st = rf_val_dec128_mul((rf_dec128)k * RF_DEC_ONE, x, &r, &e);
        CHECK(ok ? st == RF_OK && r == want : st == RF_EUSER);
        /* and dividing by k is C's division, rounded half away from zero */
        if (k) {
            rf_dec128 q = x / k, rem = x % k;
            rf_dec128 arem = rem < 0 ? -rem : rem, ak = k < 0 ? -k : k;
            if (2 * arem >= ak) q += (x < 0) != (k < 0) ? -1 : 1;
            CHECK(rf_val_dec128_div(x, (rf_dec128)k * RF_DEC_ONE, &r, &e) == RF_OK && r == q);
        }
    }
    /* div: rounding, range, zero */
    CHECK(rf_val_dec128_div(RF_DEC_ONE, 3 * RF_DEC_ONE, &r, &e) == RF_OK && r == 333333);
    CHECK(rf_val_dec128_div(2 * RF_DEC_ONE, 3 * RF_DEC_ONE, &r, &e) == RF_OK && r == 666667);
    CHECK(rf_val_dec128_div(-2 * RF_DEC_ONE, 3 * RF_DEC_ONE, &r, &e) == RF_OK && r == -666667);
    CHECK(rf_val_dec128_div(max, RF_DEC_ONE, &r, &e) == RF_OK && r == max);
    CHECK(rf_val_dec128_div(max, -RF_DEC_ONE, &r, &e) == RF_OK && r == min);
    CHECK(rf_val_dec128_div(max, 1, &r, &e) == RF_EUSER && !strcmp(e.why, "decimal out of range"));
    CHECK(rf_val_dec128_div(max, 500000, &r, &e) == RF_EUSER);
    CHECK(rf_val_dec128_div(max, max, &r, &e) == RF_OK && r == RF_DEC_ONE);
    CHECK(rf_val_dec128_div(min, max, &r, &e) == RF_OK && r == -RF_DEC_ONE);
    CHECK(rf_val_dec128_div(1, max, &r, &e) == RF_OK && r == 0);
    CHECK(rf_val_dec128_div(max, 0, &r, &e) == RF_EUSER && !strcmp(e.why, "division by zero"));
    /* (2^120 units) / (2^60 units) = 2^60 * 10^6 units (the 256-bit path) */
    CHECK(rf_val_dec128_div((rf_dec128)1 << 120, (rf_dec128)1 << 60, &r, &e) == RF_OK &&
          r == ((rf_dec128)1 << 60) * RF_DEC_ONE);
    /* 2^107 units / 2e6 units... with a remainder of exactly a half: (2^107 + 1) / 2 */
    CHECK(rf_val_dec128_div(((rf_dec128)1 << 107) + 1, 2 * RF_DEC_ONE, &r, &e) == RF_OK &&
          r == ((rf_dec128)1 << 106) + 1);
    CHECK(rf_val_dec128_div(-((rf_dec128)1 << 107) - 1, 2 * RF_DEC_ONE, &r, &e) == RF_OK &&
          r == -((rf_dec128)1 << 106) - 1);
    /* widening, narrowing, float */
    CHECK(rf_val_dec128_from_dec(RF_DEC_MIN) == RF_DEC_MIN);
    CHECK(rf_val_dec128_from_int(INT64_MIN) == (rf_dec128)INT64_MIN * RF_DEC_ONE);
    int64_t d;
    CHECK(rf_val_dec128_to_dec(RF_DEC_MAX, &d, &e) == RF_OK && d == RF_DEC_MAX);
    CHECK(rf_val_dec128_to_dec((rf_dec128)RF_DEC_MAX + 1, &d, &e) == RF_EUSER && !strcmp(e.why, "decimal out of range"));
    CHECK(rf_val_dec128_to_dec(RF_DEC_MIN, &d, &e) == RF_OK && d == RF_DEC_MIN);
    CHECK(rf_val_dec128_to_dec((rf_dec128)RF_DEC_MIN - 1, &d, &e) == RF_EUSER);
    for (int i = 0; i < 1000; i++) {
        int64_t x = (int64_t)(next_rand() >> 1);
        CHECK(rf_val_dec128_to_float(x) == rf_val_dec_to_float(x));
    }
    CHECK(rf_val_dec128_to_float(max) == 1.7014118346046923e32);
    /* whole millionths past 2^53: the fraction decides a tie (2^53 + 1 is halfway) */
    const rf_dec128 odd = ((rf_dec128)1 << 53) + 1;
    CHECK(rf_val_dec128_to_float(odd * RF_DEC_ONE) == 0x1p53);
    CHECK(rf_val_dec128_to_float(odd * RF_DEC_ONE + 1) == 0x1p53 + 2);
    CHECK(rf_val_dec128_to_float(-odd * RF_DEC_ONE - 1) == -0x1p53 - 2);
    CHECK(rf_val_dec128_to_float((rf_dec128)5258986265376043509 + 0) == 5258986265376.044);
    CHECK(rf_val_dec128_to_float((rf_dec128)RF_DEC_MAX * 3) == 27670116110564.33);
    /* comparison is exact where doubles are not */
    CHECK(rf_val_cmp_dec128(max, max - 1) == 1 && rf_val_cmp_dec128(min, min + 1) == -1);
}

int main(void)
{
    test_parse_int();
    test_parse_decimal();
    test_parse_float();
    test_float_canon();
    test_float_key();
    test_parse_date_bool_utf8();
    test_arith();
    test_dates();
    test_format();
    test_misc();
    test_wide();
    printf("test_value: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
