/*
** runtime/rt_fd_clash.c: which clash a failed functional-dependency check
** names, and how it reads.
**
** Owns: the order of values by value (ints, decimals, dates and floats as
** numbers, a float's -0.0 equal to 0.0 and every NaN one value after every
** number, as LANGUAGE.md's floats compare everywhere else; strings
** by their bytes), the choice of the clash a derived functional predicate's
** check reports (the least key, in that order, among those with two
** values, and its two least values: the same whatever the rows' order, so
** that one process, a GPU and any split of the rows over ranks name one
** pair), the byte string of a key that compares (memcmp, the shorter
** first) as that order does (the ranks vote the least clash with it:
** runtime/dist), and the error's text; by the same order, the group an
** aggregate's run-time error names (rf_rt_agg_fail: the least failing
** group, whose key the ranks vote as a clash's) and that error's text.
*/
#include <stdlib.h>
#include <string.h>

#include "rf_rt_data.h"

/* A float's bits, in an order that compares as the numbers do, with
** -0.0 equal to 0.0 and every NaN (whatever its bits) one value above inf:
** the check groups keys so, and keys it grouped must compare equal here. */
static uint64_t float_order(const void *col, int64_t row)
{
    uint64_t u;
    memcpy(&u, (const char *)col + row * 8, 8);
    if ((u & ~(UINT64_C(1) << 63)) == 0) return UINT64_C(1) << 63;                 /* -0.0, 0.0 */
    if ((u & ~(UINT64_C(1) << 63)) > UINT64_C(0x7ff0000000000000)) return UINT64_MAX; /* NaN */
    return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

/* Column c of rows i and j by value: <0, 0, >0. A column no kernel reads
** (NULL: the GPU's held rows leave it out) is all alike. */
static int value_cmp(const rf_rt_dict *dict, const rf_rt_rel *r, int32_t c, int64_t i, int64_t j)
{
    const void *col = r->cols[c];
    if (!col || i == j) return 0;
    switch (r->types[c]) {
    case RF_TYPE_INT:
    case RF_TYPE_DECIMAL: {
        int64_t a = ((const int64_t *)col)[i], b = ((const int64_t *)col)[j];
        return (a > b) - (a < b);
    }
    case RF_TYPE_DEC128: {
        rf_dec128 a = ((const rf_dec128 *)col)[i], b = ((const rf_dec128 *)col)[j];
        return (a > b) - (a < b);
    }
    case RF_TYPE_FLOAT: {
        uint64_t a = float_order(col, i), b = float_order(col, j);
        return (a > b) - (a < b);
    }
    case RF_TYPE_DATE: {
        int32_t a = ((const int32_t *)col)[i], b = ((const int32_t *)col)[j];
        return (a > b) - (a < b);
    }
    case RF_TYPE_BOOL: {
        uint8_t a = ((const uint8_t *)col)[i], b = ((const uint8_t *)col)[j];
        return (a > b) - (a < b);
    }
    case RF_TYPE_STRING: {
        uint32_t ca = ((const uint32_t *)col)[i], cb = ((const uint32_t *)col)[j];
        if (ca == cb) return 0;
        int64_t la = 0, lb = 0;
        const char *a = rf_rt_dict_str(dict, ca, &la), *b = rf_rt_dict_str(dict, cb, &lb);
        int m = memcmp(a, b, (size_t)(la < lb ? la : lb));
        return m ? (m > 0) - (m < 0) : (la > lb) - (la < lb);
    }
    }
    return 0;
}

static int cols_cmp(const rf_rt_dict *dict, const rf_rt_rel *r, int32_t c0, int32_t c1, int64_t i, int64_t j)
{
    for (int32_t c = c0; c < c1; c++) {
        int s = value_cmp(dict, r, c, i, j);
        if (s) return s;
    }
    return 0;
}

/* Sorts idx[0..n) by every column of r (the key's first), stably. */
static void sort_rows(const rf_rt_dict *dict, const rf_rt_rel *r, int64_t *idx, int64_t *tmp, int64_t n)
{
    if (n < 2) return;
    int64_t h = n / 2;
    sort_rows(dict, r, idx, tmp, h);
    sort_rows(dict, r, idx + h, tmp, n - h);
    int64_t a = 0, b = h, o = 0;
    while (a < h && b < n) tmp[o++] = cols_cmp(dict, r, 0, r->ncols, idx[b], idx[a]) < 0 ? idx[b++] : idx[a++];
    while (a < h) tmp[o++] = idx[a++];
    while (b < n) tmp[o++] = idx[b++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

rf_status rf_rt_fd_least_clash(const rf_rt_dict *dict, const rf_rt_rel *r, int32_t nk, const int64_t *rows, int64_t n,
                               int64_t *first, int64_t *second)
{
    *first = *second = -1;
    if (!rows) n = r->nrows;
    if (n < 2) return RF_OK;
    int64_t *idx = rf_malloc((size_t)n * 2 * sizeof *idx);
    if (!idx) return RF_ENOMEM;
    for (int64_t i = 0; i < n; i++) idx[i] = rows ? rows[i] : i;
    sort_rows(dict, r, idx, idx + n, n);
    /* the first neighbours with one key and two values: the least such key,
    ** its two least values (rows repeated whole, if any, are not a clash) */
    for (int64_t i = 0; i + 1 < n && *first < 0; i++)
        if (!cols_cmp(dict, r, 0, nk, idx[i], idx[i + 1]) && cols_cmp(dict, r, nk, r->ncols, idx[i], idx[i + 1])) {
            *first = idx[i];
            *second = idx[i + 1];
        }
    free(idx);
    return RF_OK;
}

/* n bytes of u, most significant first. */
static void put_be(rf_buf *b, uint64_t u, int n)
{
    char s[8];
    for (int i = 0; i < n; i++) s[i] = (char)(u >> (8 * (n - 1 - i)));
    rf_buf_append(b, s, n);
}

void rf_rt_fd_clash_key(const rf_rt_dict *dict, const rf_rt_rel *r, int32_t nk, int64_t row, rf_buf *b)
{
    for (int32_t c = 0; c < nk; c++) {
        const void *col = r->cols[c];
        if (!col) continue;
        switch (r->types[c]) {
        case RF_TYPE_INT:
        case RF_TYPE_DECIMAL: put_be(b, (uint64_t)((const int64_t *)col)[row] ^ (UINT64_C(1) << 63), 8); break;
        case RF_TYPE_DEC128: {
            unsigned __int128 u = (unsigned __int128)((const rf_dec128 *)col)[row];
            put_be(b, (uint64_t)(u >> 64) ^ (UINT64_C(1) << 63), 8);
            put_be(b, (uint64_t)u, 8);
            break;
        }
        case RF_TYPE_FLOAT: put_be(b, float_order(col, row), 8); break;
        case RF_TYPE_DATE: put_be(b, (uint32_t)((const int32_t *)col)[row] ^ UINT32_C(0x80000000), 4); break;
        case RF_TYPE_BOOL: put_be(b, ((const uint8_t *)col)[row], 1); break;
        case RF_TYPE_STRING: {
            /* its bytes, a 0 byte as 0 1, then 0 0: a prefix sorts first */
            int64_t len = 0;
            const char *s = rf_rt_dict_str(dict, ((const uint32_t *)col)[row], &len);
            for (int64_t i = 0; i < len; i++) {
                rf_buf_putc(b, s[i]);
                if (!s[i]) rf_buf_putc(b, 1);
            }
            rf_buf_append(b, "\0\0", 2);
            break;
        }
        }
    }
}

int rf_rt_fd_clash_key_cmp(const char *a, int64_t na, const char *b, int64_t nb)
{
    int m = memcmp(a, b, (size_t)(na < nb ? na : nb));
    return m ? (m > 0) - (m < 0) : (na > nb) - (na < nb);
}

void rf_rt_fd_message(const rf_rt_dict *dict, const char *pred, const rf_rt_rel *r, int32_t nk, int64_t first,
                      int64_t row, rf_buf *b)
{
    if (nk == 0) {
        /* a function without key columns (p[] = v): at most one value */
        rf_buf_printf(b, "functional dependency violated: `%s` (without key columns) has two values: (", pred);
        for (int32_t c = 0; c < r->ncols; c++) {
            if (c) rf_buf_puts(b, ", ");
            rf_rt_format_value(dict, r, c, first, b);
        }
        rf_buf_puts(b, ") and (");
        for (int32_t c = 0; c < r->ncols; c++) {
            if (c) rf_buf_puts(b, ", ");
            rf_rt_format_value(dict, r, c, row, b);
        }
        rf_buf_putc(b, ')');
        return;
    }
    rf_buf_printf(b, "functional dependency violated: `%s` has two values for the key (", pred);
    for (int32_t c = 0; c < nk; c++) {
        if (c) rf_buf_puts(b, ", ");
        rf_rt_format_value(dict, r, c, row, b);
    }
    rf_buf_puts(b, "): (");
    for (int32_t c = nk; c < r->ncols; c++) {
        if (c > nk) rf_buf_puts(b, ", ");
        rf_rt_format_value(dict, r, c, first, b);
    }
    rf_buf_puts(b, ") and (");
    for (int32_t c = nk; c < r->ncols; c++) {
        if (c > nk) rf_buf_puts(b, ", ");
        rf_rt_format_value(dict, r, c, row, b);
    }
    rf_buf_putc(b, ')');
}

rf_status rf_rt_fd_fail(const rf_rt_dict *dict, const char *pred, const rf_rt_rel *r, int32_t nk, int64_t first,
                        int64_t second, rf_loc loc, rf_diags *d, rf_buf *clash)
{
    rf_buf b;
    rf_buf_init(&b);
    rf_rt_fd_message(dict, pred, r, nk, first, second, &b);
    rf_error(d, loc, "%s", rf_buf_cstr(&b));
    rf_buf_free(&b);
    if (clash) {
        clash->len = 0;
        rf_rt_fd_clash_key(dict, r, nk, first, clash);
        /* a key of no bytes (no key columns) still names a clash */
        rf_buf_putc(clash, 0);
    }
    return RF_EUSER;
}

void rf_rt_agg_fail_note(rf_rt_agg_fail *f, const rf_rt_dict *dict, const rf_rt_rel *r, int32_t nk, int64_t row,
                         const char *what)
{
    /* (a tie keeps the first noted: the earlier aggregate of one group) */
    if (f->row < 0 || cols_cmp(dict, r, 0, nk, row, f->row) < 0) {
        f->row = row;
        f->what = what;
    }
}

rf_status rf_rt_agg_fail_report(const rf_rt_agg_fail *f, const rf_rt_dict *dict, const rf_rt_rel *r, int32_t nk,
                                rf_loc loc, rf_diags *d, rf_buf *key)
{
    if (f->row < 0) return RF_EINTERNAL;
    rf_buf b;
    rf_buf_init(&b);
    rf_buf_printf(&b, "aggregate: %s", f->what);
    if (nk > 0) {
        rf_buf_puts(&b, " for the group (");
        for (int32_t c = 0; c < nk; c++) {
            if (c) rf_buf_puts(&b, ", ");
            rf_rt_format_value(dict, r, c, f->row, &b);
        }
        rf_buf_putc(&b, ')');
    }
    rf_error(d, loc, "%s", rf_buf_cstr(&b));
    rf_buf_free(&b);
    if (key) {
        key->len = 0;
        rf_rt_fd_clash_key(dict, r, nk, f->row, key);
        rf_buf_putc(key, 0);
    }
    return RF_EUSER;
}
