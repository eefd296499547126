/*
** db/db_narrow.c: narrow blocks (docs/DATABASE.md "Narrow columns").
**
** Owns: the encoding of one block of an int, decimal, date or string-code
** column at the width its values need: its plan (base the block's minimum,
** the largest power of ten up to 10^6 that every value is a multiple of,
** the width that holds the largest value less the base divided by it), the
** packing of its values, and the decoding that widens them again, checking
** that no stored value lies past the block's maximum (so a damaged or
** crafted block cannot produce a value outside [min, max], and the manifest
** has already checked that range against the type).
**
** Why: TPC-H's numbers need few bytes once a block's minimum and a power of
** ten are taken out (l_quantity 1-50 is 1,000,000-50,000,000 as a decimal:
** one byte a value; a date within a few thousand days of its block's least:
** two), so a database is about half the bytes to write, sync and read.
** Exact by construction: the divisor is checked value by value, and a block
** that would not be smaller, or holds a value its type does not allow (left
** for the reader to name by its row), is stored as it is.
*/
#include "db_internal.h"

#include <string.h>

int rf_db_narrowable(rf_type t)
{
    return t == RF_TYPE_INT || t == RF_TYPE_DECIMAL || t == RF_TYPE_DATE || t == RF_TYPE_STRING;
}

uint64_t rf_db_pow10(int e)
{
    uint64_t p = 1;
    for (int i = 0; i < e; i++) p *= 10;
    return p;
}

/* Tests of divisibility by 10^e = 2^e 5^e without a division: the low e
** bits clear, and Granlund and Montgomery's test for the odd part (n times
** the inverse of 5^e modulo 2^64, plus lim, is at most 2 lim exactly when
** the signed n is a multiple of 5^e). */
typedef struct div10 {
    uint64_t mask2, inv5, lim, lim2;
} div10;

/* d's inverse modulo 2^64 (d odd): Newton's iteration, each step doubling the bits right. */
static uint64_t inverse(uint64_t d)
{
    uint64_t x = d; /* right in 3 bits: d * d = 1 modulo 8 */
    for (int i = 0; i < 5; i++) x *= 2 - d * x;
    return x;
}

static div10 div_of(int e)
{
    uint64_t p5 = 1;
    for (int i = 0; i < e; i++) p5 *= 5;
    uint64_t lim = (uint64_t)INT64_MAX / p5;
    return (div10){(UINT64_C(1) << e) - 1, inverse(p5), lim, 2 * lim};
}

static inline int multiple(uint64_t u, const div10 *d) { return !(u & d->mask2) && u * d->inv5 + d->lim <= d->lim2; }

/* The block's minimum, maximum and the largest e <= *e with every value a
** multiple of 10^e (a value that fails e is tried again at e - 1: the
** values before it passed e and so every smaller one). */
static void scan_i64(const int64_t *v, int64_t n, int64_t *mn, int64_t *mx, int *e)
{
    int64_t lo = v[0], hi = lo;
    int ex = *e;
    int64_t i = 0;
    while (ex > 0 && i < n) {
        div10 d = div_of(ex);
        for (; i < n; i++) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
            if (!multiple((uint64_t)v[i], &d)) break;
        }
        if (i < n) ex--;
    }
    for (; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    *mn = lo;
    *mx = hi;
    *e = ex;
}

/* 4-byte values in their own width (the loop then vectorizes), widened once. */
#define SCAN32(name, T)                                                                                              \
    static void name(const T *v, int64_t n, int64_t *mn, int64_t *mx)                                                \
    {                                                                                                                \
        T lo = v[0], hi = v[0];                                                                                      \
        for (int64_t i = 1; i < n; i++) {                                                                            \
            lo = v[i] < lo ? v[i] : lo;                                                                              \
            hi = v[i] > hi ? v[i] : hi;                                                                              \
        }                                                                                                            \
        *mn = (int64_t)lo;                                                                                           \
        *mx = (int64_t)hi;                                                                                           \
    }
SCAN32(scan_i32, int32_t)
SCAN32(scan_u32, uint32_t)

void rf_db_narrow_plan(rf_type t, const void *v, int64_t n, rf_db_block *bl)
{
    int tw = rf_db_type_width(t);
    int64_t mn = 0, mx = 0;
    int e = 0;
    if (n > 0) {
        if (tw == 8) {
            e = RF_DB_NARROW_EXP_TRY;
            scan_i64(v, n, &mn, &mx, &e);
        } else if (t == RF_TYPE_DATE) {
            scan_i32(v, n, &mn, &mx);
        } else {
            scan_u32(v, n, &mn, &mx);
        }
    }
    bl->min = n > 0 ? mn : INT64_MAX;
    bl->max = n > 0 ? mx : INT64_MIN;
    bl->width = (uint8_t)tw;
    bl->exp = 0;
    /* values the type does not allow stay as they are: the reader names them by row */
    if (n <= 0 || (t == RF_TYPE_DECIMAL && mn == INT64_MIN) ||
        (t == RF_TYPE_DATE && (mn < RF_DATE_MIN || mx > RF_DATE_MAX)))
        return;
    /* the largest value less the minimum, divided (exactly) by 10^e */
    uint64_t q = (((uint64_t)mx - (uint64_t)mn) >> e) * div_of(e).inv5;
    int w = q <= 0xff ? 1 : q <= 0xffff ? 2 : q <= 0xffffffffu ? 4 : 8;
    if (w >= tw) return; /* no fewer bytes: as it is */
    bl->width = (uint8_t)w;
    bl->exp = (uint8_t)e;
}

/* Packing: less the base, divided by 10^e (exactly: by 2^e with a shift, by
** 5^e with its inverse); without a divisor, less the base alone, in the
** values' own width where they are 4 bytes (the loops then vectorize). */
#define PACK_DIV(T)                                                                                                  \
    for (int64_t i = 0; i < n; i++) ((T *)out)[i] = (T)((((uint64_t)((const int64_t *)v)[i] - base) >> e) * inv)
#define PACK_SUB(T, S)                                                                                               \
    for (int64_t i = 0; i < n; i++) ((T *)out)[i] = (T)((S)((const S *)v)[i] - (S)base)

void rf_db_narrow_pack(rf_type t, const void *v, int64_t n, const rf_db_block *bl, void *out)
{
    int tw = rf_db_type_width(t);
    if (bl->width >= tw) {
        memcpy(out, v, (size_t)(n * tw));
        return;
    }
    uint64_t base = (uint64_t)bl->min, inv = div_of(bl->exp).inv5;
    int e = bl->exp;
    if (tw == 8 && e) {
        if (bl->width == 1) PACK_DIV(uint8_t);
        else if (bl->width == 2) PACK_DIV(uint16_t);
        else PACK_DIV(uint32_t);
    } else if (tw == 8) {
        if (bl->width == 1) PACK_SUB(uint8_t, uint64_t);
        else if (bl->width == 2) PACK_SUB(uint16_t, uint64_t);
        else PACK_SUB(uint32_t, uint64_t);
    } else {
        /* (a date's difference from its minimum, modulo 2^32, is the same) */
        if (bl->width == 1) PACK_SUB(uint8_t, uint32_t);
        else PACK_SUB(uint16_t, uint32_t);
    }
}

/* Returns the first of the n stored values at src past qmax (one is). */
#define FIRST_OVER(QT)                                                                                               \
    for (int64_t i = 0; i < n; i++) {                                                                                \
        QT q;                                                                                                        \
        memcpy(&q, src + i * (int64_t)sizeof(QT), sizeof q);                                                         \
        if (q > (QT)qmax) return i;                                                                                  \
    }

/* Widening: stored values as unsigned integers of their width (loaded with
** memcpy: a block of a file of small blocks need not be aligned), each at
** most qmax, the value base + q x mul in the column's width. The loop has
** no early exit so that it vectorizes; a bad value is looked for after. */
#define DECODE(QT, OT)                                                                                               \
    do {                                                                                                             \
        for (int64_t i = 0; i < n; i++) {                                                                            \
            QT q;                                                                                                    \
            memcpy(&q, src + i * (int64_t)sizeof(QT), sizeof q);                                                     \
            over |= q > (QT)qmax;                                                                                    \
            ((OT *)dst)[i] = (OT)(base + (uint64_t)q * mul);                                                         \
        }                                                                                                            \
        if (over) FIRST_OVER(QT);                                                                                    \
        return -1;                                                                                                   \
    } while (0)

/* The check alone: the largest stored value against qmax, without widening. */
#define CHECK_ONLY(QT)                                                                                               \
    do {                                                                                                             \
        QT hi = 0;                                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                                            \
            QT q;                                                                                                    \
            memcpy(&q, src + i * (int64_t)sizeof(QT), sizeof q);                                                     \
            hi = q > hi ? q : hi;                                                                                    \
        }                                                                                                            \
        if (hi > (QT)qmax) FIRST_OVER(QT);                                                                           \
        return -1;                                                                                                   \
    } while (0)

int64_t rf_db_narrow_check(const rf_db_block *bl, const unsigned char *src, int64_t n)
{
    uint64_t qmax = ((uint64_t)bl->max - (uint64_t)bl->min) / rf_db_pow10(bl->exp);
    /* past the width's own largest value every stored value is in range,
    ** as rf_db_narrow_decode has it: (uint8_t)qmax of a range of 1000
    ** would have been 232, and a stored 240 refused here but not there */
    uint64_t wmax = bl->width == 1 ? 0xff : bl->width == 2 ? 0xffff : 0xffffffffu;
    if (qmax >= wmax) return -1;
    if (bl->width == 1) CHECK_ONLY(uint8_t);
    if (bl->width == 2) CHECK_ONLY(uint16_t);
    CHECK_ONLY(uint32_t);
}

int64_t rf_db_narrow_decode(rf_type t, const rf_db_block *bl, const unsigned char *src, int64_t n, void *dst)
{
    int tw = rf_db_type_width(t);
    if (bl->width >= tw) {
        memcpy(dst, src, (size_t)(n * tw));
        return -1;
    }
    /* the manifest checked min <= max: the range fits in 64 bits unsigned */
    uint64_t base = (uint64_t)bl->min, mul = rf_db_pow10(bl->exp);
    uint64_t qmax = ((uint64_t)bl->max - (uint64_t)bl->min) / mul;
    /* past the width's own largest value, every stored value is in range */
    uint64_t wmax = bl->width == 1 ? 0xff : bl->width == 2 ? 0xffff : 0xffffffffu;
    if (qmax > wmax) qmax = wmax;
    int over = 0;
    if (tw == 8) {
        if (bl->width == 1) DECODE(uint8_t, uint64_t);
        if (bl->width == 2) DECODE(uint16_t, uint64_t);
        DECODE(uint32_t, uint64_t);
    }
    if (bl->width == 1) DECODE(uint8_t, uint32_t);
    DECODE(uint16_t, uint32_t);
}
