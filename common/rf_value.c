/*
** common/rf_value.c: parsing, arithmetic, calendar and formatting of scalar
** values. See rf_value.h for the representation and the accepted syntax;
** every rule that the loader, the constant folder and the output writer must
** agree on lives here and nowhere else.
*/
#include "rf_value.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char WHY_EMPTY[] = "empty field";
static const char WHY_DIGITS[] = "missing digits";
static const char WHY_CHAR[] = "unexpected character";
static const char WHY_INT_RANGE[] = "integer out of range";
static const char WHY_DEC_RANGE[] = "decimal out of range";
static const char WHY_DEC_FRAC[] = "too many fraction digits (at most 6)";
static const char WHY_FLOAT_RANGE[] = "float out of range";
static const char WHY_DATE_FORM[] = "expected YYYY-MM-DD";
static const char WHY_DATE[] = "invalid date";
static const char WHY_DATE_RANGE[] = "date out of range";
static const char WHY_BOOL[] = "expected true or false";
static const char WHY_UTF8[] = "invalid UTF-8";
static const char WHY_DIV0[] = "division by zero";
static const char WHY_SHIFT[] = "shift count out of range (0 to 63)";
static const char WHY_NOMEM[] = "out of memory";

static rf_status fail(rf_val_err *e, const char *why, int64_t off)
{
    if (e) {
        e->why = why;
        e->off = off;
    }
    return RF_EUSER;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

const char *rf_val_type_name(rf_type t)
{
    switch (t) {
    case RF_TYPE_INT: return "int";
    case RF_TYPE_FLOAT: return "float";
    case RF_TYPE_DECIMAL: return "decimal";
    case RF_TYPE_STRING: return "string";
    case RF_TYPE_BOOL: return "boolean";
    case RF_TYPE_DATE: return "date";
    case RF_TYPE_DEC128: return "decimal128";
    }
    return "?";
}

const char *rf_val_type_user_name(rf_type t)
{
    return rf_val_type_name(t == RF_TYPE_DEC128 ? RF_TYPE_DECIMAL : t);
}

int rf_val_type_size(rf_type t)
{
    switch (t) {
    case RF_TYPE_INT:
    case RF_TYPE_FLOAT:
    case RF_TYPE_DECIMAL: return 8;
    case RF_TYPE_STRING: return 0;
    case RF_TYPE_BOOL: return 1;
    case RF_TYPE_DATE: return 4;
    case RF_TYPE_DEC128: return 16;
    }
    return 0;
}

/* ---- parsing -------------------------------------------------------- */

/* Parses the digits [s, e) (all digits, possibly with leading zeros) into
** *v; returns -1 when the value exceeds 'limit'. */
static int digits_value(const char *s, const char *e, uint64_t limit, uint64_t *v)
{
    while (s < e && *s == '0') s++;
    if (e - s > 20) return -1;
    uint64_t x = 0;
    for (; s < e; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (limit - d) / 10) return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

rf_status rf_val_parse_int(const char *p, int64_t len, int64_t *out, rf_val_err *e)
{
    if (len <= 0) return fail(e, WHY_EMPTY, 0);
    int64_t i = 0;
    int neg = 0;
    if (p[0] == '-' || p[0] == '+') {
        neg = p[0] == '-';
        i = 1;
    }
    int64_t ds = i;
    while (i < len && is_digit(p[i])) i++;
    if (i == ds) return fail(e, i < len ? WHY_CHAR : WHY_DIGITS, i);
    if (i < len) return fail(e, WHY_CHAR, i);
    uint64_t v;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (digits_value(p + ds, p + len, limit, &v)) return fail(e, WHY_INT_RANGE, 0);
    /* two's complement negation in unsigned arithmetic avoids UB at INT64_MIN */
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return RF_OK;
}

static const int64_t POW10[19] = {1,
                                  10,
                                  100,
                                  1000,
                                  10000,
                                  100000,
                                  1000000,
                                  10000000,
                                  100000000,
                                  1000000000,
                                  10000000000,
                                  100000000000,
                                  1000000000000,
                                  10000000000000,
                                  100000000000000,
                                  1000000000000000,
                                  10000000000000000,
                                  100000000000000000,
                                  1000000000000000000};

/* A decimal's text split: its sign, the integer digits [is, ie) and the
** fraction digits [fs, fe) (at most RF_DEC_SCALE); the syntax errors of
** both widths' parsers. */
typedef struct dec_text {
    int neg;
    int64_t is, ie, fs, fe;
} dec_text;

static rf_status dec_lex(const char *p, int64_t len, dec_text *t, rf_val_err *e)
{
    if (len <= 0) return fail(e, WHY_EMPTY, 0);
    int64_t i = 0;
    t->neg = 0;
    if (p[0] == '-' || p[0] == '+') {
        t->neg = p[0] == '-';
        i = 1;
    }
    t->is = i;
    while (i < len && is_digit(p[i])) i++;
    t->ie = t->fs = t->fe = i;
    if (i < len && p[i] == '.') {
        t->fs = ++i;
        while (i < len && is_digit(p[i])) i++;
        t->fe = i;
    }
    if (t->ie == t->is && t->fe == t->fs) return fail(e, i < len ? WHY_CHAR : WHY_DIGITS, i);
    if (i < len) return fail(e, WHY_CHAR, i);
    if (t->fe - t->fs > RF_DEC_SCALE) return fail(e, WHY_DEC_FRAC, t->fs + RF_DEC_SCALE);
    return RF_OK;
}

rf_status rf_val_parse_decimal(const char *p, int64_t len, int64_t *out, rf_val_err *e)
{
    dec_text t;
    rf_status st = dec_lex(p, len, &t, e);
    if (st) return st;
    int neg = t.neg;
    int64_t is = t.is, ie = t.ie, fs = t.fs, fe = t.fe;
    uint64_t ip, fp = 0;
    if (digits_value(p + is, p + ie, (uint64_t)(RF_DEC_MAX / RF_DEC_ONE), &ip))
        return fail(e, WHY_DEC_RANGE, 0);
    for (int64_t k = fs; k < fe; k++) fp = fp * 10 + (uint64_t)(p[k] - '0');
    fp *= (uint64_t)POW10[RF_DEC_SCALE - (fe - fs)];
    uint64_t v = ip * (uint64_t)RF_DEC_ONE + fp; /* < 2^64: ip <= 9223372036854 */
    if (v > (uint64_t)RF_DEC_MAX) return fail(e, WHY_DEC_RANGE, 0);
    *out = neg ? -(int64_t)v : (int64_t)v;
    return RF_OK;
}

__extension__ typedef unsigned __int128 rf_u128;

rf_status rf_val_parse_dec128(const char *p, int64_t len, rf_dec128 *out, rf_val_err *e)
{
    dec_text t;
    rf_status st = dec_lex(p, len, &t, e);
    if (st) return st;
    int neg = t.neg;
    int64_t is = t.is, ie = t.ie, fs = t.fs, fe = t.fe;
    /* the units, digit by digit (the integer part, then the fraction padded
    ** to 6 digits), each step checked against the range */
    const rf_u128 max = (rf_u128)RF_DEC128_MAX;
    rf_u128 v = 0;
    for (int64_t k = is; k < fe; k++) {
        if (k == ie) continue; /* the '.' */
        unsigned d = (unsigned)(p[k] - '0');
        if (v > (max - d) / 10) return fail(e, WHY_DEC_RANGE, 0);
        v = v * 10 + d;
    }
    for (int64_t k = fe - fs; k < RF_DEC_SCALE; k++) {
        if (v > max / 10) return fail(e, WHY_DEC_RANGE, 0);
        v *= 10;
    }
    *out = neg ? -(rf_dec128)v : (rf_dec128)v;
    return RF_OK;
}

/* Exact powers of ten representable in a double, for the fast path. */
static const double DPOW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

rf_status rf_val_parse_float(const char *p, int64_t len, double *out, rf_val_err *e)
{
    if (len <= 0) return fail(e, WHY_EMPTY, 0);
    /* The three values that are not numbers, spelled exactly as
    ** rf_val_write_float prints them (so that every printed float reads
    ** back): "inf", "-inf", "nan", the NaN the positive quiet one. */
    if (len == 3 && !memcmp(p, "inf", 3)) return (*out = INFINITY), RF_OK;
    if (len == 4 && !memcmp(p, "-inf", 4)) return (*out = -INFINITY), RF_OK;
    if (len == 3 && !memcmp(p, "nan", 3)) return (*out = NAN), RF_OK;
    /* Validate the syntax by hand: strtod alone would accept blanks, hex,
    ** other spellings of inf and nan, and stop early instead of failing. */
    int64_t i = 0;
    int neg = 0;
    if (p[0] == '-' || p[0] == '+') {
        neg = p[0] == '-';
        i = 1;
    }
    int64_t is = i;
    while (i < len && is_digit(p[i])) i++;
    int64_t ie = i, fs = i, fe = i;
    if (i < len && p[i] == '.') {
        fs = ++i;
        while (i < len && is_digit(p[i])) i++;
        fe = i;
    }
    if (ie == is && fe == fs) return fail(e, i < len ? WHY_CHAR : WHY_DIGITS, i);
    int64_t xs = -1, xe = -1;
    int xneg = 0;
    if (i < len && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < len && (p[i] == '-' || p[i] == '+')) xneg = p[i++] == '-';
        xs = i;
        while (i < len && is_digit(p[i])) i++;
        xe = i;
        if (xe == xs) return fail(e, i < len ? WHY_CHAR : WHY_DIGITS, i);
    }
    if (i < len) return fail(e, WHY_CHAR, i);

    /* Fast path (Clinger): at most 15 significant digits and a small power of
    ** ten give a correctly rounded result with one IEEE operation. */
    {
        uint64_t m = 0;
        int nd = 0, ok = 1;
        int64_t scale = 0;
        for (int64_t k = is; k < ie && ok; k++) {
            if (nd == 0 && p[k] == '0') continue;
            if (++nd > 15) ok = 0;
            m = m * 10 + (uint64_t)(p[k] - '0');
        }
        for (int64_t k = fs; k < fe && ok; k++) {
            scale--;
            if (nd == 0 && p[k] == '0') continue;
            if (++nd > 15) ok = 0;
            m = m * 10 + (uint64_t)(p[k] - '0');
        }
        if (ok && xs >= 0) {
            int64_t x = 0;
            for (int64_t k = xs; k < xe && ok; k++) {
                x = x * 10 + (p[k] - '0');
                if (x > 1000) ok = 0;
            }
            scale += xneg ? -x : x;
        }
        if (ok && (m == 0 || (scale >= -22 && scale <= 22))) {
            double v = (double)m;
            if (m != 0) v = scale < 0 ? v / DPOW10[-scale] : v * DPOW10[scale];
            *out = rf_val_float_canon(neg ? -v : v); /* "-0.0" is 0.0 */
            return RF_OK;
        }
    }

    char local[128];
    char *buf = local;
    if (len >= (int64_t)sizeof local) {
        buf = malloc((size_t)len + 1);
        if (!buf) {
            if (e) {
                e->why = WHY_NOMEM;
                e->off = 0;
            }
            return RF_ENOMEM;
        }
    }
    memcpy(buf, p, (size_t)len);
    buf[len] = 0;
    errno = 0;
    char *end;
    double v = strtod(buf, &end);
    int range = errno == ERANGE && isinf(v);
    int whole = end == buf + len;
    if (buf != local) free(buf);
    if (!whole) return fail(e, WHY_CHAR, 0); /* not reached: syntax checked above */
    if (range) return fail(e, WHY_FLOAT_RANGE, 0);
    *out = rf_val_float_canon(v); /* "-1e-400" underflows to -0.0: 0.0 */
    return RF_OK;
}

int rf_val_is_leap(int32_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int rf_val_days_in_month(int32_t y, int32_t m)
{
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12) return 0;
    return m == 2 && rf_val_is_leap(y) ? 29 : dim[m - 1];
}

int rf_val_date_valid(int32_t y, int32_t m, int32_t d)
{
    return y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= rf_val_days_in_month(y, m);
}

rf_status rf_val_parse_date(const char *p, int64_t len, int32_t *out, rf_val_err *e)
{
    if (len <= 0) return fail(e, WHY_EMPTY, 0);
    for (int64_t i = 0; i < 10; i++) {
        if (i >= len) return fail(e, WHY_DATE_FORM, i);
        int ok = (i == 4 || i == 7) ? p[i] == '-' : is_digit(p[i]);
        if (!ok) return fail(e, WHY_DATE_FORM, i);
    }
    if (len > 10) return fail(e, WHY_CHAR, 10);
    int32_t y = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0');
    int32_t m = (p[5] - '0') * 10 + (p[6] - '0');
    int32_t d = (p[8] - '0') * 10 + (p[9] - '0');
    if (y < 1) return fail(e, WHY_DATE, 0);
    if (m < 1 || m > 12) return fail(e, WHY_DATE, 5);
    if (d < 1 || d > rf_val_days_in_month(y, m)) return fail(e, WHY_DATE, 8);
    *out = rf_val_days_from_civil(y, m, d);
    return RF_OK;
}

rf_status rf_val_parse_bool(const char *p, int64_t len, uint8_t *out, rf_val_err *e)
{
    if (len == 4 && memcmp(p, "true", 4) == 0) {
        *out = 1;
        return RF_OK;
    }
    if (len == 5 && memcmp(p, "false", 5) == 0) {
        *out = 0;
        return RF_OK;
    }
    return fail(e, len <= 0 ? WHY_EMPTY : WHY_BOOL, 0);
}

int rf_val_utf8_len(const char *s, int64_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    if (n <= 0) return 0;
    unsigned c = p[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0; /* continuation byte or overlong 2-byte lead */
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

rf_status rf_val_check_utf8(const char *p, int64_t len, rf_val_err *e)
{
    int64_t i = 0;
    while (i < len) {
        /* ASCII runs dominate real data: test 8 bytes at a time */
        if (len - i >= 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (!(w & UINT64_C(0x8080808080808080))) {
                i += 8;
                continue;
            }
        }
        if (!((unsigned char)p[i] & 0x80)) {
            i++;
            continue;
        }
        int n = rf_val_utf8_len(p + i, len - i);
        if (!n) return fail(e, WHY_UTF8, i);
        i += n;
    }
    return RF_OK;
}

/* ---- int arithmetic ------------------------------------------------- */

rf_status rf_val_int_add(int64_t a, int64_t b, int64_t *out, rf_val_err *e)
{
    if (__builtin_add_overflow(a, b, out)) return fail(e, WHY_INT_RANGE, 0);
    return RF_OK;
}

rf_status rf_val_int_sub(int64_t a, int64_t b, int64_t *out, rf_val_err *e)
{
    if (__builtin_sub_overflow(a, b, out)) return fail(e, WHY_INT_RANGE, 0);
    return RF_OK;
}

rf_status rf_val_int_mul(int64_t a, int64_t b, int64_t *out, rf_val_err *e)
{
    if (__builtin_mul_overflow(a, b, out)) return fail(e, WHY_INT_RANGE, 0);
    return RF_OK;
}

rf_status rf_val_int_div(int64_t a, int64_t b, int64_t *out, rf_val_err *e)
{
    if (b == 0) return fail(e, WHY_DIV0, 0);
    if (a == INT64_MIN && b == -1) return fail(e, WHY_INT_RANGE, 0);
    *out = a / b;
    return RF_OK;
}

rf_status rf_val_int_mod(int64_t a, int64_t b, int64_t *out, rf_val_err *e)
{
    if (b == 0) return fail(e, WHY_DIV0, 0);
    *out = b == -1 ? 0 : a % b; /* INT64_MIN % -1 is UB in C although it is 0 */
    return RF_OK;
}

rf_status rf_val_int_shl(int64_t a, int64_t n, int64_t *out, rf_val_err *e)
{
    if (n < 0 || n > 63) return fail(e, WHY_SHIFT, 0);
    *out = (int64_t)((uint64_t)a << n);
    return RF_OK;
}

rf_status rf_val_int_shr(int64_t a, int64_t n, int64_t *out, rf_val_err *e)
{
    if (n < 0 || n > 63) return fail(e, WHY_SHIFT, 0);
    /* written without >> on a negative value, whose result C leaves to the implementation */
    *out = a < 0 ? ~(~a >> n) : a >> n;
    return RF_OK;
}

/* ---- decimal arithmetic --------------------------------------------- */

static rf_status dec_result(rf_dec128 v, int64_t *out, rf_val_err *e)
{
    if (v > RF_DEC_MAX || v < RF_DEC_MIN) return fail(e, WHY_DEC_RANGE, 0);
    *out = (int64_t)v;
    return RF_OK;
}

/* n / d rounded half away from zero; d is nonzero and within int64 range.
** Comparing ar with ad - ar instead of 2 * ar with ad cannot overflow. */
static rf_dec128 div_round(rf_dec128 n, rf_dec128 d)
{
    rf_dec128 q = n / d, r = n % d;
    rf_dec128 ar = r < 0 ? -r : r, ad = d < 0 ? -d : d;
    if (ar >= ad - ar) q += ((n < 0) != (d < 0)) ? -1 : 1;
    return q;
}

rf_status rf_val_dec_add(int64_t a, int64_t b, int64_t *out, rf_val_err *e)
{
    return dec_result((rf_dec128)a + b, out, e);
}

rf_status rf_val_dec_sub(int64_t a, int64_t b, int64_t *out, rf_val_err *e)
{
    return dec_result((rf_dec128)a - b, out, e);
}

rf_status rf_val_dec_neg(int64_t a, int64_t *out, rf_val_err *e)
{
    return dec_result(-(rf_dec128)a, out, e);
}

rf_status rf_val_dec_mul(int64_t a, int64_t b, int64_t *out, rf_val_err *e)
{
    return dec_result(div_round((rf_dec128)a * b, RF_DEC_ONE), out, e);
}

rf_status rf_val_dec_div(int64_t a, int64_t b, int64_t *out, rf_val_err *e)
{
    if (b == 0) return fail(e, WHY_DIV0, 0);
    return dec_result(div_round((rf_dec128)a * RF_DEC_ONE, b), out, e);
}

rf_status rf_val_dec_from_int(int64_t i, int64_t *out, rf_val_err *e)
{
    return dec_result((rf_dec128)i * RF_DEC_ONE, out, e);
}

int64_t rf_val_dec_to_int(int64_t d) { return d / RF_DEC_ONE; }

/* Beyond 2^53 millionths (double)d would round before the division does, so
** the whole millionths and the fraction are converted apart: the whole part
** is exact, and the fraction's own rounding (some 1e-16) cannot cross a
** halfway point of the sum, which lies at least 3e-11 from any multiple of
** 10^-6 or on one that the fraction then holds exactly. */
double rf_val_dec_to_float(int64_t d)
{
    const int64_t exact = (int64_t)1 << 53;
    if (d > -exact && d < exact) return (double)d / 1e6;
    return (double)(d / RF_DEC_ONE) + (double)(d % RF_DEC_ONE) / 1e6;
}

/* |x| is m * 2^ex with an integer m below 2^53, so |x| * 10^6 is m * 10^6
** (below 2^73) shifted by ex: the rounding half away from zero is done on
** that exact product. (round(x * 1e6) rounded the product to a double
** first: off by up to 512 millionths above 2^53 of them, and refusing values
** just inside the range.) */
rf_status rf_val_dec_from_float(double x, int64_t *out, rf_val_err *e)
{
    if (!isfinite(x)) return fail(e, WHY_DEC_RANGE, 0);
    int ex;
    double f = frexp(fabs(x), &ex);
    rf_u128 p = (rf_u128)(uint64_t)ldexp(f, 53) * (rf_u128)RF_DEC_ONE, q;
    ex -= 53;
    if (ex >= 0) {
        if (p != 0 && (ex > 63 || p > ((rf_u128)RF_DEC_MAX >> ex))) return fail(e, WHY_DEC_RANGE, 0);
        q = p << ex;
    } else if (ex <= -128) {
        q = 0; /* p < 2^73, far below half of 2^-ex */
    } else {
        q = (p + ((rf_u128)1 << (-ex - 1))) >> -ex;
    }
    if (q > (rf_u128)RF_DEC_MAX) return fail(e, WHY_DEC_RANGE, 0);
    *out = x < 0 ? -(int64_t)q : (int64_t)q;
    return RF_OK;
}

/* ---- wide decimal arithmetic ------------------------------------------- */

static rf_status dec128_result(rf_dec128 v, rf_dec128 *out, rf_val_err *e)
{
    if (v < RF_DEC128_MIN) return fail(e, WHY_DEC_RANGE, 0); /* only -2^127 */
    *out = v;
    return RF_OK;
}

rf_status rf_val_dec128_add(rf_dec128 a, rf_dec128 b, rf_dec128 *out, rf_val_err *e)
{
    rf_dec128 s;
    if (__builtin_add_overflow(a, b, &s)) return fail(e, WHY_DEC_RANGE, 0);
    return dec128_result(s, out, e);
}

rf_status rf_val_dec128_sub(rf_dec128 a, rf_dec128 b, rf_dec128 *out, rf_val_err *e)
{
    rf_dec128 s;
    if (__builtin_sub_overflow(a, b, &s)) return fail(e, WHY_DEC_RANGE, 0);
    return dec128_result(s, out, e);
}

rf_status rf_val_dec128_neg(rf_dec128 a, rf_dec128 *out, rf_val_err *e)
{
    (void)e; /* the range is symmetric: never fails */
    *out = -a;
    return RF_OK;
}

/* A 256-bit magnitude as four 64-bit limbs, least significant first. */
typedef struct u256 {
    uint64_t w[4];
} u256;

static rf_u128 mag(rf_dec128 v) { return v < 0 ? 0 - (rf_u128)v : (rf_u128)v; }

static u256 mul_u128(rf_u128 a, rf_u128 b)
{
    uint64_t x[2] = {(uint64_t)a, (uint64_t)(a >> 64)}, y[2] = {(uint64_t)b, (uint64_t)(b >> 64)};
    u256 r = {{0, 0, 0, 0}};
    for (int i = 0; i < 2; i++) {
        rf_u128 carry = 0;
        for (int j = 0; j < 2; j++) {
            rf_u128 t = (rf_u128)x[i] * y[j] + r.w[i + j] + carry;
            r.w[i + j] = (uint64_t)t;
            carry = t >> 64;
        }
        r.w[i + 2] = (uint64_t)carry;
    }
    return r;
}

/* n / d rounded half away from zero (d > 0); the quotient's magnitude into
** *q, or -1 when it exceeds RF_DEC128_MAX. Bit by bit (256 steps): the
** remainder stays below d <= 2^128 - 1, so it and its doubling fit 129 bits,
** which the carry out of the shift holds. Only values beyond the fast paths
** come here. */
static int div_u256(u256 n, rf_u128 d, rf_u128 *q)
{
    rf_u128 rem = 0;
    u256 quo = {{0, 0, 0, 0}};
    for (int bit = 255; bit >= 0; bit--) {
        int top = (int)(rem >> 127);
        rem = (rem << 1) | ((n.w[bit / 64] >> (bit % 64)) & 1);
        if (top || rem >= d) {
            rem -= d;
            quo.w[bit / 64] |= (uint64_t)1 << (bit % 64);
        }
    }
    if (quo.w[3] || quo.w[2]) return -1;
    rf_u128 r = ((rf_u128)quo.w[1] << 64) | quo.w[0];
    if (rem >= d - rem) r++; /* half away from zero: magnitudes round up */
    if (r > (rf_u128)RF_DEC128_MAX) return -1;
    *q = r;
    return 0;
}

/* n / d rounded half away from zero, both signed, d nonzero, no overflow. */
static rf_dec128 div_round128(rf_dec128 n, rf_dec128 d)
{
    rf_dec128 q = n / d, r = n % d;
    rf_u128 ar = mag(r), ad = mag(d);
    if (ar >= ad - ar) q += ((n < 0) != (d < 0)) ? -1 : 1;
    return q;
}

static const rf_dec128 FAST_MUL = (rf_dec128)1 << 63; /* |a|, |b| below: |a * b| < 2^126 */
static const rf_dec128 FAST_DIV = (rf_dec128)1 << 106; /* |a| below: |a * 10^6| < 2^126 */

rf_status rf_val_dec128_mul(rf_dec128 a, rf_dec128 b, rf_dec128 *out, rf_val_err *e)
{
    int neg = (a < 0) != (b < 0);
    if (a > -FAST_MUL && a < FAST_MUL && b > -FAST_MUL && b < FAST_MUL)
        return dec128_result(div_round128(a * b, RF_DEC_ONE), out, e);
    rf_u128 q;
    if (div_u256(mul_u128(mag(a), mag(b)), RF_DEC_ONE, &q)) return fail(e, WHY_DEC_RANGE, 0);
    *out = neg ? -(rf_dec128)q : (rf_dec128)q;
    return RF_OK;
}

rf_status rf_val_dec128_div(rf_dec128 a, rf_dec128 b, rf_dec128 *out, rf_val_err *e)
{
    if (b == 0) return fail(e, WHY_DIV0, 0);
    int neg = (a < 0) != (b < 0);
    if (a > -FAST_DIV && a < FAST_DIV) {
        rf_dec128 n = a * RF_DEC_ONE;
        /* b == -1 units with n's quotient beyond the range cannot happen: |n| < 2^126 */
        return dec128_result(div_round128(n, b), out, e);
    }
    rf_u128 q;
    if (div_u256(mul_u128(mag(a), RF_DEC_ONE), mag(b), &q)) return fail(e, WHY_DEC_RANGE, 0);
    *out = neg ? -(rf_dec128)q : (rf_dec128)q;
    return RF_OK;
}

/* As rf_val_dec_to_float, and exactly it within decimal's range. Where the
** whole millionths pass 2^53 the fraction only decides a tie: it becomes a
** sticky bit below the integer's last one (2q + 1 halved). */
double rf_val_dec128_to_float(rf_dec128 s)
{
    const rf_dec128 exact = (rf_dec128)1 << 53;
    if (s >= -(rf_dec128)INT64_MAX && s <= (rf_dec128)INT64_MAX) return rf_val_dec_to_float((int64_t)s);
    rf_dec128 q = s / RF_DEC_ONE, r = s % RF_DEC_ONE;
    if (q > -exact && q < exact) return (double)q + (double)r / 1e6;
    double m = (double)(2 * mag(q) + (r != 0)) * 0.5;
    return s < 0 ? -m : m;
}

rf_status rf_val_dec128_to_dec(rf_dec128 s, int64_t *out, rf_val_err *e)
{
    return dec_result(s, out, e);
}

rf_status rf_val_dec128_avg(rf_dec128 sum, int64_t count, int64_t *out, rf_val_err *e)
{
    if (count <= 0) return fail(e, WHY_DIV0, 0);
    return dec_result(div_round(sum, count), out, e);
}

rf_status rf_val_int128_avg(rf_dec128 sum, int64_t count, int64_t *out, rf_val_err *e)
{
    if (count <= 0) return fail(e, WHY_DIV0, 0);
    rf_dec128 scaled;
    if (__builtin_mul_overflow(sum, (rf_dec128)RF_DEC_ONE, &scaled)) return fail(e, WHY_DEC_RANGE, 0);
    return rf_val_dec128_avg(scaled, count, out, e);
}

/* ---- dates ---------------------------------------------------------- */
/* Howard Hinnant's civil-calendar algorithms, in 64-bit so that no int32
** input can overflow. */

int32_t rf_val_days_from_civil(int32_t y32, int32_t m, int32_t d)
{
    int64_t y = (int64_t)y32 - (m <= 2);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int32_t)(era * 146097 + doe - 719468);
}

void rf_val_civil_from_days(int32_t days, int32_t *y, int32_t *m, int32_t *d)
{
    int64_t z = (int64_t)days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t dd = doy - (153 * mp + 2) / 5 + 1;
    int64_t mm = mp < 10 ? mp + 3 : mp - 9;
    *y = (int32_t)(yoe + era * 400 + (mm <= 2));
    *m = (int32_t)mm;
    *d = (int32_t)dd;
}

int32_t rf_val_date_year(int32_t days)
{
    int32_t y, m, d;
    rf_val_civil_from_days(days, &y, &m, &d);
    return y;
}

int32_t rf_val_date_month(int32_t days)
{
    int32_t y, m, d;
    rf_val_civil_from_days(days, &y, &m, &d);
    return m;
}

int32_t rf_val_date_day(int32_t days)
{
    int32_t y, m, d;
    rf_val_civil_from_days(days, &y, &m, &d);
    return d;
}

rf_status rf_val_date_add_days(int32_t d, int64_t n, int32_t *out, rf_val_err *e)
{
    int64_t r;
    if (__builtin_add_overflow((int64_t)d, n, &r) || r < RF_DATE_MIN || r > RF_DATE_MAX)
        return fail(e, WHY_DATE_RANGE, 0);
    *out = (int32_t)r;
    return RF_OK;
}

rf_status rf_val_date_add_months(int32_t days, int64_t n, int32_t *out, rf_val_err *e)
{
    /* 9999 years are under 120000 months: larger steps cannot land in range */
    if (n > 200000 || n < -200000) return fail(e, WHY_DATE_RANGE, 0);
    int32_t y, m, d;
    rf_val_civil_from_days(days, &y, &m, &d);
    int64_t t = (int64_t)y * 12 + (m - 1) + n;
    int64_t ny = t >= 0 ? t / 12 : -((-t + 11) / 12);
    int32_t nm = (int32_t)(t - ny * 12) + 1;
    if (ny < 1 || ny > 9999) return fail(e, WHY_DATE_RANGE, 0);
    int dim = rf_val_days_in_month((int32_t)ny, nm);
    *out = rf_val_days_from_civil((int32_t)ny, nm, d > dim ? dim : d);
    return RF_OK;
}

rf_status rf_val_date_add_years(int32_t d, int64_t n, int32_t *out, rf_val_err *e)
{
    if (n > 20000 || n < -20000) return fail(e, WHY_DATE_RANGE, 0);
    return rf_val_date_add_months(d, n * 12, out, e);
}

/* ---- formatting ----------------------------------------------------- */

/* Writes the decimal digits of u at dst (no sign); returns the length. */
static int write_u64(char *dst, uint64_t u)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (int i = 0; i < n; i++) dst[i] = tmp[n - 1 - i];
    return n;
}

static int write_u128(char *dst, rf_u128 u)
{
    char tmp[48];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    for (int i = 0; i < n; i++) dst[i] = tmp[n - 1 - i];
    return n;
}

int rf_val_write_int(char *dst, int64_t v)
{
    int n = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        dst[n++] = '-';
        u = 0 - u;
    }
    n += write_u64(dst + n, u);
    dst[n] = 0;
    return n;
}

/* Appends ".ffffff" with trailing zeros trimmed to at least two digits. */
static int write_frac(char *dst, uint32_t f)
{
    dst[0] = '.';
    for (int i = RF_DEC_SCALE; i >= 1; i--) {
        dst[i] = (char)('0' + f % 10);
        f /= 10;
    }
    int n = 1 + RF_DEC_SCALE;
    while (n > 3 && dst[n - 1] == '0') n--;
    return n;
}

int rf_val_write_dec(char *dst, int64_t v)
{
    int n = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        dst[n++] = '-';
        u = 0 - u;
    }
    n += write_u64(dst + n, u / (uint64_t)RF_DEC_ONE);
    n += write_frac(dst + n, (uint32_t)(u % (uint64_t)RF_DEC_ONE));
    dst[n] = 0;
    return n;
}

int rf_val_write_dec128(char *dst, rf_dec128 v)
{
    int n = 0;
    rf_u128 u = (rf_u128)v;
    if (v < 0) {
        dst[n++] = '-';
        u = 0 - u;
    }
    n += write_u128(dst + n, u / (unsigned)RF_DEC_ONE);
    n += write_frac(dst + n, (uint32_t)(u % (unsigned)RF_DEC_ONE));
    dst[n] = 0;
    return n;
}

static int roundtrips(const char *s, double v) { return strtod(s, NULL) == v; }

int rf_val_write_float(char *dst, double v)
{
    /* -0.0 equals 0.0 (rf_val_cmp_float), and a set or a group keeps
    ** whichever of the two it met first, which ranks meet in another order
    ** than one process: a zero prints as 0.0 whatever its sign, so the
    ** same value prints the same bytes everywhere */
    if (v == 0) v = 0.0;
    const char *special = isnan(v) ? "nan" : isinf(v) ? (v < 0 ? "-inf" : "inf") : NULL;
    if (special) {
        strcpy(dst, special);
        return (int)strlen(special);
    }
    int n = 0;
    if (fabs(v) >= DBL_MIN || v == 0) {
        /* For normal doubles every decimal of at most DBL_DIG digits that reads
        ** back as v is what %.15g prints once %g strips trailing zeros, so
        ** only 15, 16 and 17 digits need trying. */
        for (int prec = DBL_DIG; prec <= 17; prec++) {
            n = snprintf(dst, RF_VAL_FMT_MAX, "%.*g", prec, v);
            if (roundtrips(dst, v)) break;
        }
    } else {
        for (int prec = 1; prec <= 17; prec++) {
            n = snprintf(dst, RF_VAL_FMT_MAX, "%.*g", prec, v);
            if (roundtrips(dst, v)) break;
        }
    }
    if (!strpbrk(dst, ".e")) {
        dst[n++] = '.';
        dst[n++] = '0';
        dst[n] = 0;
    }
    return n;
}

int rf_val_write_date(char *dst, int32_t days)
{
    int32_t y, m, d;
    rf_val_civil_from_days(days, &y, &m, &d);
    if (y >= 0 && y <= 9999) {
        dst[0] = (char)('0' + y / 1000);
        dst[1] = (char)('0' + y / 100 % 10);
        dst[2] = (char)('0' + y / 10 % 10);
        dst[3] = (char)('0' + y % 10);
        dst[4] = '-';
        dst[5] = (char)('0' + m / 10);
        dst[6] = (char)('0' + m % 10);
        dst[7] = '-';
        dst[8] = (char)('0' + d / 10);
        dst[9] = (char)('0' + d % 10);
        dst[10] = 0;
        return 10;
    }
    /* outside the supported range: still print something unambiguous */
    return snprintf(dst, RF_VAL_FMT_MAX, "%05d-%02d-%02d", (int)y, (int)m, (int)d);
}

int rf_val_write_bool(char *dst, uint8_t v)
{
    const char *s = v ? "true" : "false";
    strcpy(dst, s);
    return (int)strlen(s);
}

void rf_val_fmt_int(rf_buf *b, int64_t v)
{
    char t[RF_VAL_FMT_MAX];
    rf_buf_append(b, t, rf_val_write_int(t, v));
}

void rf_val_fmt_dec(rf_buf *b, int64_t v)
{
    char t[RF_VAL_FMT_MAX];
    rf_buf_append(b, t, rf_val_write_dec(t, v));
}

void rf_val_fmt_dec128(rf_buf *b, rf_dec128 v)
{
    char t[RF_VAL_FMT_MAX];
    rf_buf_append(b, t, rf_val_write_dec128(t, v));
}

void rf_val_fmt_float(rf_buf *b, double v)
{
    char t[RF_VAL_FMT_MAX];
    rf_buf_append(b, t, rf_val_write_float(t, v));
}

void rf_val_fmt_date(rf_buf *b, int32_t days)
{
    char t[RF_VAL_FMT_MAX];
    rf_buf_append(b, t, rf_val_write_date(t, days));
}

void rf_val_fmt_bool(rf_buf *b, uint8_t v)
{
    char t[RF_VAL_FMT_MAX];
    rf_buf_append(b, t, rf_val_write_bool(t, v));
}

/* ---- comparison ----------------------------------------------------- */

int rf_val_cmp_int(int64_t a, int64_t b) { return (a > b) - (a < b); }
int rf_val_cmp_dec128(rf_dec128 a, rf_dec128 b) { return (a > b) - (a < b); }

int rf_val_cmp_float(double a, double b)
{
    int na = isnan(a), nb = isnan(b);
    if (na || nb) return na - nb;
    return (a > b) - (a < b);
}

int rf_val_cmp_str(const char *a, int64_t alen, const char *b, int64_t blen)
{
    int64_t n = alen < blen ? alen : blen;
    int c = n > 0 ? memcmp(a, b, (size_t)n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return (alen > blen) - (alen < blen);
}

/* ---- string functions ---------------------------------------------- */

static inline int64_t cp_len(const char *s, int64_t n, int64_t i)
{
    if (!((unsigned char)s[i] & 0x80)) return 1;
    int k = rf_val_utf8_len(s + i, n - i);
    return k > 0 ? k : 1; /* an invalid byte counts as one character */
}

int64_t rf_val_utf8_chars(const char *s, int64_t n)
{
    int64_t i = 0;
    while (i < n && !((unsigned char)s[i] & 0x80)) i++;
    int64_t c = i;
    while (i < n) {
        i += cp_len(s, n, i);
        c++;
    }
    return c;
}

void rf_val_substring(const char *s, int64_t n, int64_t start, int64_t len, int64_t *from, int64_t *to)
{
    /* characters [start, start + len), clipped to [0, length of s) */
    int64_t end = len <= 0 ? start : start > INT64_MAX - len ? INT64_MAX : start + len;
    if (start < 0) start = 0;
    *from = *to = 0;
    if (end <= start) return;
    int64_t i = 0, k = 0;
    while (i < n && k < start) {
        i += cp_len(s, n, i);
        k++;
    }
    int64_t b = i;
    while (i < n && k < end) {
        i += cp_len(s, n, i);
        k++;
    }
    *from = b;
    *to = i;
}

/* The classic backtracking over the last %: linear in practice. */
int rf_val_like(const char *s, int64_t n, const char *pat, int64_t m)
{
    int64_t i = 0, j = 0, star = -1, mark = 0;
    while (i < n) {
        if (j < m && pat[j] == '%') {
            star = ++j;
            mark = i;
        } else if (j < m && pat[j] == '_') {
            i += cp_len(s, n, i);
            j++;
        } else if (j < m && pat[j] == s[i]) {
            i++;
            j++;
        } else if (star >= 0) {
            mark += cp_len(s, n, mark);
            i = mark;
            j = star;
        } else {
            return 0;
        }
    }
    while (j < m && pat[j] == '%') j++;
    return j == m;
}

void rf_val_quote(char *dst, const char *f, int64_t n)
{
    static const char hex[] = "0123456789abcdef";
    int64_t i = 0, o = 0;
    int shown = 0;
    dst[o++] = '"';
    while (i < n) {
        if (shown++ == RF_VAL_QUOTE_MAX) {
            memcpy(dst + o, "...", 3);
            o += 3;
            break;
        }
        unsigned char ch = (unsigned char)f[i];
        int l = ch >= 0x80 ? rf_val_utf8_len(f + i, n - i) : 0;
        if (ch == '"' || ch == '\\') {
            dst[o++] = '\\';
            dst[o++] = (char)ch;
            i++;
        } else if (ch >= 0x20 && ch < 0x7f) {
            dst[o++] = (char)ch;
            i++;
        } else if (l > 0) {
            memcpy(dst + o, f + i, (size_t)l);
            o += l;
            i += l;
        } else {
            dst[o++] = '\\';
            dst[o++] = 'x';
            dst[o++] = hex[ch >> 4];
            dst[o++] = hex[ch & 15];
            i++;
        }
    }
    dst[o++] = '"';
    dst[o] = 0;
}
