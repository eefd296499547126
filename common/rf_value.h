/*
** common/rf_value.h: the scalar value model of redfox, shared by the front
** end (constant folding), the runtime (loading text data) and the output
** writer, so that every stage agrees on what a value is and how it prints.
**
** Owns: the column type enum, parsing of text fields, UTF-8 validation,
** the float value rule (a zero has no sign: rf_val_float_canon) and the
** float order key and hash image every host sort, top-k and hash shares,
** exact decimal arithmetic, calendar arithmetic on dates, and formatting.
** Everything here is pure: no allocation except through a caller's rf_buf,
** no global state, safe to call from any thread.
**
** Representation (see docs/ARCHITECTURE.md "Data model"):
**   int      int64_t
**   float    double (IEEE 754 binary64)
**   decimal  int64_t scaled by 10^6 (RF_DEC_SCALE); the range is symmetric,
**            [-INT64_MAX, INT64_MAX] units, so negation never overflows;
**            sums are rf_dec128 at the same scale
**   decimal128  (RF_TYPE_DEC128, "wide decimal") rf_dec128 (__int128) at the
**            same scale, range [-(2^127-1), 2^127-1] units (38 significant
**            digits): the type of totals of decimals, so that they stay exact
**            beyond decimal's 9.2e12. To users it is a decimal (messages,
**            declarations); dumps name it decimal128.
**   boolean  uint8_t, 0 or 1
**   date     int32_t days since 1970-01-01, proleptic Gregorian calendar,
**            years 0001..9999
**   string   UTF-8 bytes
**
** Text syntax accepted by the parsers (a field is exactly the value: no
** surrounding blanks, no quotes):
**   int      [+-]digits                        "-12", "+7", "007"
**   decimal  [+-]digits[.digits] or [+-].digits "-12.50", "3", ".5", "5."
**            at most 6 fraction digits (even if they are zeros), since a
**            silently rounded input value is worse than a clear error
**   float    [+-](digits[.digits]|.digits)[(e|E)[+-]digits]; inf, nan and
**            hex floats are rejected; values that overflow are an error,
**            values that underflow become subnormals or zero, and a
**            zero has no sign: "-0.0" reads as 0.0 (rf_val_float_canon)
**   date     YYYY-MM-DD exactly, year 0001..9999, day valid for the month
**   boolean  true | false (lower case)
**
** Fallible functions return RF_OK or RF_EUSER and, when given a non-NULL
** rf_val_err, fill it with a short static reason and the 0-based byte offset
** of the problem within the field (0 for errors about the whole value).
*/
#ifndef RF_VALUE_H
#define RF_VALUE_H

#include <stdint.h>
#include <string.h>

#include "rf_common.h"

/* The column types of the whole project. */
typedef enum rf_type {
    RF_TYPE_INT,
    RF_TYPE_FLOAT,
    RF_TYPE_DECIMAL,
    RF_TYPE_STRING,
    RF_TYPE_BOOL,
    RF_TYPE_DATE,
    RF_TYPE_DEC128 /* last: the .rfx encoding of the others is unchanged */
} rf_type;

/* "int", "float", "decimal", "string", "boolean", "date", "decimal128": the
** LogiQL names, and the wide decimal's name in dumps (plans, Harmony IR). */
const char *rf_val_type_name(rf_type t);
/* The name a user reads in a message: as rf_val_type_name, but a wide
** decimal is a "decimal" (its width is the compiler's choice). */
const char *rf_val_type_user_name(rf_type t);
/* Bytes per value in a column: 8, 8, 8, 0 (strings are not fixed width), 1, 4, 16. */
int rf_val_type_size(rf_type t);

#define RF_DEC_SCALE 6
#define RF_DEC_ONE INT64_C(1000000)
#define RF_DEC_MAX INT64_MAX
#define RF_DEC_MIN (-INT64_MAX)

/* 128-bit accumulator for sums of decimals (scale 6) and of ints, and the
** wide decimal's value (RF_TYPE_DEC128). The wide decimal's range is
** symmetric like decimal's, so that negation never overflows. */
__extension__ typedef __int128 rf_dec128;
#define RF_DEC128_MAX ((((rf_dec128)INT64_MAX) << 64) | (rf_dec128)UINT64_MAX)
#define RF_DEC128_MIN (-RF_DEC128_MAX)

/* Why a parse or an operation failed. why is a static string. */
typedef struct rf_val_err {
    const char *why;
    int64_t off; /* 0-based byte offset within the field */
} rf_val_err;

/* ---- parsing text fields ------------------------------------------- */

rf_status rf_val_parse_int(const char *p, int64_t len, int64_t *out, rf_val_err *e);
rf_status rf_val_parse_decimal(const char *p, int64_t len, int64_t *out, rf_val_err *e);
/* The decimal syntax, into the wide decimal's range. */
rf_status rf_val_parse_dec128(const char *p, int64_t len, rf_dec128 *out, rf_val_err *e);
/* Plain decimal notation or an exponent; also "inf", "-inf" and "nan",
** exactly as rf_val_write_float prints them (no other spelling). */
rf_status rf_val_parse_float(const char *p, int64_t len, double *out, rf_val_err *e);
rf_status rf_val_parse_date(const char *p, int64_t len, int32_t *out, rf_val_err *e);
rf_status rf_val_parse_bool(const char *p, int64_t len, uint8_t *out, rf_val_err *e);
/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, at most U+10FFFF. */
rf_status rf_val_check_utf8(const char *p, int64_t len, rf_val_err *e);
/* Length (1..4) of the valid UTF-8 sequence starting at p, 0 if invalid or n == 0. */
int rf_val_utf8_len(const char *p, int64_t n);

/* A field of n bytes at f as a message shows it, into dst (RF_VAL_QUOTE_BUF
** bytes): quoted C-like, cut after RF_VAL_QUOTE_MAX characters ("..."),
** non-printable bytes and invalid UTF-8 escaped (\xff), valid UTF-8 kept,
** so that a message never carries the raw bytes of bad data. */
#define RF_VAL_QUOTE_MAX 40
#define RF_VAL_QUOTE_BUF (2 + 4 * RF_VAL_QUOTE_MAX + 3 + 1)
void rf_val_quote(char *dst, const char *f, int64_t n);

/* ---- string functions (LogiQL semantics, shared by the constant folder
** and the evaluators) --------------------------------------------------- */
/* Characters are UTF-8 code points; an invalid byte counts as one. */
int64_t rf_val_utf8_chars(const char *s, int64_t n);
/* string:substring[s, start, len]: the characters [start, start + len)
** (0-based) clipped to s, so a negative start shortens the result and
** len <= 0 gives "". Sets the byte range [*from, *to) of s. */
void rf_val_substring(const char *s, int64_t n, int64_t start, int64_t len, int64_t *from, int64_t *to);
/* SQL LIKE: % any run, _ one character; case-sensitive, no escape character. */
int rf_val_like(const char *s, int64_t n, const char *pat, int64_t m);

/* ---- int arithmetic (for constant folding) -------------------------- */
/* Overflow and division by zero are errors; / and % truncate toward zero (C). */

rf_status rf_val_int_add(int64_t a, int64_t b, int64_t *out, rf_val_err *e);
rf_status rf_val_int_sub(int64_t a, int64_t b, int64_t *out, rf_val_err *e);
rf_status rf_val_int_mul(int64_t a, int64_t b, int64_t *out, rf_val_err *e);
rf_status rf_val_int_div(int64_t a, int64_t b, int64_t *out, rf_val_err *e);
rf_status rf_val_int_mod(int64_t a, int64_t b, int64_t *out, rf_val_err *e);
/* int:shl[a, n] and int:shr[a, n]: the 64 bits of a shifted by n (0 to 63;
** any other count is an error, never C's undefined behaviour). shl drops
** the bits shifted out (no overflow error: a bit operation); shr is
** arithmetic (copies of the sign bit come in). */
rf_status rf_val_int_shl(int64_t a, int64_t n, int64_t *out, rf_val_err *e);
rf_status rf_val_int_shr(int64_t a, int64_t n, int64_t *out, rf_val_err *e);

/* ---- decimal arithmetic --------------------------------------------- */
/* Arguments and results are scaled by 10^6. mul and div round half away from
** zero to 6 fraction digits. Results outside [RF_DEC_MIN, RF_DEC_MAX] are
** "decimal out of range"; div by 0 is "division by zero". */

rf_status rf_val_dec_add(int64_t a, int64_t b, int64_t *out, rf_val_err *e);
rf_status rf_val_dec_sub(int64_t a, int64_t b, int64_t *out, rf_val_err *e);
rf_status rf_val_dec_mul(int64_t a, int64_t b, int64_t *out, rf_val_err *e);
rf_status rf_val_dec_div(int64_t a, int64_t b, int64_t *out, rf_val_err *e);
rf_status rf_val_dec_neg(int64_t a, int64_t *out, rf_val_err *e);

/* Conversions. The float ones are exact roundings, computed alike by
** constant folding and the CPU/GPU kernels (bit for bit):
**   decimal -> float:  the double nearest to d / 10^6 (ties to even)
**   float -> decimal:  x's exact value rounded half away from zero to 6
**                      fraction digits (x * 10^6 is never rounded to a
**                      double first); NaN, inf and results outside the
**                      decimal range are errors
**   decimal -> int:    truncation toward zero */
rf_status rf_val_dec_from_int(int64_t i, int64_t *out, rf_val_err *e);
int64_t rf_val_dec_to_int(int64_t d);
double rf_val_dec_to_float(int64_t d);
rf_status rf_val_dec_from_float(double x, int64_t *out, rf_val_err *e);

/* ---- wide decimal arithmetic (RF_TYPE_DEC128) ------------------------ */
/* As decimal's, in the wide range [RF_DEC128_MIN, RF_DEC128_MAX]: mul and
** div round half away from zero to 6 fraction digits (exactly: products and
** scaled dividends beyond 128 bits are computed in 256), results outside
** the range are "decimal out of range", div by 0 is "division by zero".
** add also accumulates totals (of decimals and of ints). */
rf_status rf_val_dec128_add(rf_dec128 a, rf_dec128 b, rf_dec128 *out, rf_val_err *e);
rf_status rf_val_dec128_sub(rf_dec128 a, rf_dec128 b, rf_dec128 *out, rf_val_err *e);
rf_status rf_val_dec128_mul(rf_dec128 a, rf_dec128 b, rf_dec128 *out, rf_val_err *e);
rf_status rf_val_dec128_div(rf_dec128 a, rf_dec128 b, rf_dec128 *out, rf_val_err *e);
rf_status rf_val_dec128_neg(rf_dec128 a, rf_dec128 *out, rf_val_err *e);
/* Widening never fails: a decimal is a wide decimal, an int times 10^6 fits. */
static inline rf_dec128 rf_val_dec128_from_dec(int64_t d) { return d; }
static inline rf_dec128 rf_val_dec128_from_int(int64_t i) { return (rf_dec128)i * RF_DEC_ONE; }
/* Narrowing to decimal: "decimal out of range" outside decimal's range. */
rf_status rf_val_dec128_to_dec(rf_dec128 s, int64_t *out, rf_val_err *e);
/* The double nearest to s / 10^6: for a value within decimal's range exactly
** what rf_val_dec_to_float gives. */
double rf_val_dec128_to_float(rf_dec128 s);

/* avg divides a 128-bit sum and rounds half away from zero to 6 fraction
** digits (LogiQL: avg of int or decimal is a decimal); count must be > 0. */
rf_status rf_val_dec128_avg(rf_dec128 sum, int64_t count, int64_t *out, rf_val_err *e);
/* sum is a sum of ints (unscaled); the result is a decimal. */
rf_status rf_val_int128_avg(rf_dec128 sum, int64_t count, int64_t *out, rf_val_err *e);

/* ---- dates ---------------------------------------------------------- */

#define RF_DATE_MIN (-719162) /* 0001-01-01 */
#define RF_DATE_MAX 2932896   /* 9999-12-31 */

/* Exact for any year that fits; callers validate with rf_val_date_valid. */
int32_t rf_val_days_from_civil(int32_t y, int32_t m, int32_t d);
void rf_val_civil_from_days(int32_t days, int32_t *y, int32_t *m, int32_t *d);
int rf_val_is_leap(int32_t y);
int rf_val_days_in_month(int32_t y, int32_t m);           /* 0 for a bad month */
int rf_val_date_valid(int32_t y, int32_t m, int32_t d);   /* year 1..9999 */
int32_t rf_val_date_year(int32_t days);
int32_t rf_val_date_month(int32_t days);
int32_t rf_val_date_day(int32_t days);
/* Results outside 0001-01-01..9999-12-31 are "date out of range". Months and
** years clip the day to the end of the target month (01-31 + 1 month is
** 02-28 or 02-29; 02-29 + 1 year is 02-28). */
rf_status rf_val_date_add_days(int32_t d, int64_t n, int32_t *out, rf_val_err *e);
rf_status rf_val_date_add_months(int32_t d, int64_t n, int32_t *out, rf_val_err *e);
rf_status rf_val_date_add_years(int32_t d, int64_t n, int32_t *out, rf_val_err *e);

/* ---- formatting ----------------------------------------------------- */
/* The write functions fill dst (at least RF_VAL_FMT_MAX bytes), NUL-terminate
** it and return the length; they are the fast path for the output writer.
** The fmt functions append the same text to an rf_buf.
**   decimal  plain notation, trailing zeros trimmed but at least 2 fraction
**            digits: 1.5 -> "1.50", 2 -> "2.00", 0.1234 -> "0.1234"
**   float    the fewest significant digits that read back as the same
**            double, in %g style at precision 15..17 (so positional for
**            1e-4 <= |x| < 1e15: 480 prints "480.0", not "4.8e+02"), with
**            ".0" appended when it would look like an int: 2 -> "2.0",
**            0.1 -> "0.1", 1e+20 stays "1e+20"; -0.0 prints "0.0" (it equals
**            0.0); inf, -inf and nan print so
**   date     YYYY-MM-DD;  boolean  true / false
** Formatting and parsing of floats use the C library, which assumes the
** "C" locale (redfox never calls setlocale). */
#define RF_VAL_FMT_MAX 64

int rf_val_write_int(char *dst, int64_t v);
int rf_val_write_dec(char *dst, int64_t v);
int rf_val_write_dec128(char *dst, rf_dec128 v);
int rf_val_write_float(char *dst, double v);
int rf_val_write_date(char *dst, int32_t days);
int rf_val_write_bool(char *dst, uint8_t v);

void rf_val_fmt_int(rf_buf *b, int64_t v);
void rf_val_fmt_dec(rf_buf *b, int64_t v);
void rf_val_fmt_dec128(rf_buf *b, rf_dec128 v);
void rf_val_fmt_float(rf_buf *b, double v);
void rf_val_fmt_date(rf_buf *b, int32_t days);
void rf_val_fmt_bool(rf_buf *b, uint8_t v);

/* ---- the float value rule ------------------------------------------- */
/* A float zero has no sign: -0.0 is read and computed as 0.0, so that a
** function of a value cannot tell two equal representations apart
** (1.0 / x is inf for every zero x). Every float that enters redfox (text
** fields, literals, databases, the C API) and every float operation's result
** passes through this. x + 0.0 is +0.0 for either zero under IEEE 754's
** round-to-nearest and x itself for every other x (a NaN stays a NaN): one
** add, which the compiler keeps (it may not drop it without -ffast-math,
** which redfox never uses). The CUDA skeleton rf_base.cuh has its device
** copy, rf::fz. */
static inline double rf_val_float_canon(double x) { return x + 0.0; }

/* The float order key: an image whose unsigned order is rf_val_cmp_float's
** total order (-inf < finite < inf < nan), equal images for equal values
** (-0.0 and 0.0 one image, every NaN one image, above +inf's), for sorts,
** top-k and normalized keys. The CUDA skeleton keeps its device copy,
** rf_base.cuh's rf::norm(double). */
static inline uint64_t rf_val_float_key(double x)
{
    if (x != x) return UINT64_MAX;
    if (x == 0) return UINT64_C(1) << 63;
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (b >> 63) ? ~b : (b | (UINT64_C(1) << 63));
}

/* The float hash image: the bits of x where equal values have equal bits
** (either zero 0, every NaN the positive quiet one), what a float mixes into
** a hash. rf_gather.cuh's part_flags computes the same on the device (ranks
** of CPU and GPU agree on a row's rank). */
static inline uint64_t rf_val_float_hash_bits(double x)
{
    if (x == 0) return 0;
    if (x != x) return UINT64_C(0x7ff8000000000000);
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* ---- comparison (-1, 0, 1) ------------------------------------------ */

int rf_val_cmp_int(int64_t a, int64_t b); /* also decimals and dates */
int rf_val_cmp_dec128(rf_dec128 a, rf_dec128 b);
/* A total order for sorting and grouping: -inf < finite < inf < nan;
** -0.0 equals 0.0 and all NaNs are equal. */
int rf_val_cmp_float(double a, double b);
/* Byte-wise (memcmp) order, a proper prefix first: the UTF-8 code point order. */
int rf_val_cmp_str(const char *a, int64_t alen, const char *b, int64_t blen);

#endif
