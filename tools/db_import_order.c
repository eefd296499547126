/*
** tools/db_import_order.c: a table's key checked by the order of its rows,
** block by block as the rows arrive.
**
** Owns: the order check of an import. Data files are often written in key
** order (dbgen's are: lineitem by (l_orderkey, l_linenumber), orders by
** o_orderkey), and rows whose keys strictly increase, each row's key above
** the one before it, hold no key twice. So every parsed block's rows are
** compared each with the row before (the first with the previous block's
** last row, kept here), on one of the workers that write the block's
** columns (tools/db_import_jobs.c), while the next block parses. A table
** whose rows all increase needs no other check: no column is read back and
** no rows are grouped when it ends. The first row that does not increase
** stops the comparing, and the table gets the full check when it ends (its
** key columns read back and grouped, tools/db_import_jobs.c check_key),
** which names the first repeated key by file line as it always has, or
** finds none where rows were merely out of order. The same for the key
** columns of a functional dependency.
**
** The order is the key columns' in the declared order, each compared as
** its type orders values (strings by their bytes; floats by the language's
** total order, docs/LANGUAGE.md "Types": every NaN one value above inf,
** -0.0 equal to 0.0). Equal values are never "above", so they send the
** table to the full check: the order check only ever concludes that keys
** are distinct where they are. The order must be total: had a NaN been
** "unordered" and the comparison gone on to the next key column, as for an
** equal value, rows (1.0, 5), (2.0, 1), (nan, 2), (1.0, 5) would each seem
** above the one before, and the repeated key (1.0, 5) would pass.
*/
#include "db_import_internal.h"

#include "rf_sys.h"

#include <stdlib.h>
#include <string.h>

void rf_import_order_init(rf_import_order *o, const rf_type *types, int32_t n, const int32_t *cols)
{
    memset(o, 0, sizeof *o);
    o->types = types;
    o->ncols = n;
    o->cols = cols;
    o->rising = n > 0;
}

void rf_import_order_free(rf_import_order *o)
{
    for (int32_t k = 0; k < o->ncols && o->str; k++) free(o->str[k]);
    free(o->str);
    free(o->slen);
    free(o->num);
    memset(o, 0, sizeof *o);
}

/* Floats in the language's total order: 1 when x is above y, 0 when they
** are equal (two NaNs, -0.0 and 0.0), -1 when x is below y. */
static inline int cmp_f64(double x, double y)
{
    if (x != x || y != y) return (x != x) - (y != y);
    return (x > y) - (x < y);
}

/* Compares value a with value b of one column: 1 when a is above b, 0 when
** they are equal, -1 when a is below b. */
static inline int cmp_num(rf_type t, const void *data, int64_t a, int64_t b)
{
    switch (t) {
    case RF_TYPE_FLOAT: return cmp_f64(((const double *)data)[a], ((const double *)data)[b]);
    case RF_TYPE_DATE: {
        int32_t x = ((const int32_t *)data)[a], y = ((const int32_t *)data)[b];
        return (x > y) - (x < y);
    }
    case RF_TYPE_BOOL: {
        uint8_t x = ((const uint8_t *)data)[a], y = ((const uint8_t *)data)[b];
        return (x > y) - (x < y);
    }
    default: { /* int, decimal */
        int64_t x = ((const int64_t *)data)[a], y = ((const int64_t *)data)[b];
        return (x > y) - (x < y);
    }
    }
}

static inline int cmp_bytes(const char *a, int64_t na, const char *b, int64_t nb)
{
    int r = memcmp(a, b, (size_t)(na < nb ? na : nb));
    if (r) return r > 0 ? 1 : -1;
    return (na > nb) - (na < nb);
}

/* Row r of the block against the row before it (r >= 1). */
static int row_above(const rf_import_order *o, const rf_rt_texttable *tt, int64_t r)
{
    for (int32_t k = 0; k < o->ncols; k++) {
        int32_t c = o->cols[k];
        const rf_rt_textcol *col = &tt->cols[c];
        int s;
        if (o->types[c] == RF_TYPE_STRING) {
            const int64_t *off = col->str_off;
            s = cmp_bytes(col->str_bytes + off[r], off[r + 1] - off[r], col->str_bytes + off[r - 1], off[r] - off[r - 1]);
        } else {
            s = cmp_num(o->types[c], col->data, r, r - 1);
        }
        if (s) return s > 0;
    }
    return 0;
}

/* The block's first row against the previous block's last (o->num, o->str). */
static int first_above(const rf_import_order *o, const rf_rt_texttable *tt)
{
    for (int32_t k = 0; k < o->ncols; k++) {
        int32_t c = o->cols[k];
        const rf_rt_textcol *col = &tt->cols[c];
        int s;
        if (o->types[c] == RF_TYPE_STRING) {
            s = cmp_bytes(col->str_bytes, col->str_off[1] - col->str_off[0], o->str[k] ? o->str[k] : "", o->slen[k]);
        } else {
            /* the last row's value, kept as a one-row column of its type */
            const void *last = &o->num[k];
            switch (o->types[c]) {
            case RF_TYPE_FLOAT: s = cmp_f64(((const double *)col->data)[0], *(const double *)last); break;
            case RF_TYPE_DATE: {
                int32_t x = ((const int32_t *)col->data)[0], y = *(const int32_t *)last;
                s = (x > y) - (x < y);
                break;
            }
            case RF_TYPE_BOOL: {
                uint8_t x = ((const uint8_t *)col->data)[0], y = *(const uint8_t *)last;
                s = (x > y) - (x < y);
                break;
            }
            default: {
                int64_t x = ((const int64_t *)col->data)[0], y = *(const int64_t *)last;
                s = (x > y) - (x < y);
                break;
            }
            }
        }
        if (s) return s > 0;
    }
    return 0;
}

/* Keys of one or two 64-bit integer columns (dbgen's keys): the rows
** compared without a switch per value. */
static int64_t rising_i64(const int64_t *a, const int64_t *b, int64_t n)
{
    int64_t r = 1;
    if (!b) {
        for (; r < n; r++)
            if (a[r] <= a[r - 1]) break;
        return r;
    }
    for (; r < n; r++)
        if (a[r] < a[r - 1] || (a[r] == a[r - 1] && b[r] <= b[r - 1])) break;
    return r;
}

static int is_i64(rf_type t) { return t == RF_TYPE_INT || t == RF_TYPE_DECIMAL; }

rf_status rf_import_order_block(rf_import_order *o, const rf_rt_texttable *tt)
{
    if (!o->rising || tt->nrows <= 0) return RF_OK;
    int64_t n = tt->nrows;
    if (!o->num) {
        o->num = rf_calloc((size_t)o->ncols, sizeof *o->num);
        o->str = rf_calloc((size_t)o->ncols, sizeof *o->str);
        o->slen = rf_calloc((size_t)o->ncols, sizeof *o->slen);
        if (!o->num || !o->str || !o->slen) return RF_ENOMEM;
    }
    if (o->rows > 0 && !first_above(o, tt)) {
        o->rising = 0;
        return RF_OK;
    }
    int64_t r;
    if (o->ncols <= 2 && is_i64(o->types[o->cols[0]]) && (o->ncols == 1 || is_i64(o->types[o->cols[1]]))) {
        r = rising_i64(tt->cols[o->cols[0]].data, o->ncols == 2 ? tt->cols[o->cols[1]].data : NULL, n);
    } else {
        for (r = 1; r < n; r++)
            if (!row_above(o, tt, r)) break;
    }
    if (r < n) {
        o->rising = 0;
        return RF_OK;
    }
    /* the last row's key, for the next block's first row */
    for (int32_t k = 0; k < o->ncols; k++) {
        int32_t c = o->cols[k];
        const rf_rt_textcol *col = &tt->cols[c];
        if (o->types[c] == RF_TYPE_STRING) {
            int64_t len = col->str_off[n] - col->str_off[n - 1];
            char *s = rf_malloc((size_t)len + 1);
            if (!s) return RF_ENOMEM;
            if (len) memcpy(s, col->str_bytes + col->str_off[n - 1], (size_t)len);
            free(o->str[k]);
            o->str[k] = s;
            o->slen[k] = len;
        } else {
            size_t w = (size_t)rf_val_type_size(o->types[c]);
            memcpy(&o->num[k], (const char *)col->data + (size_t)(n - 1) * w, w);
        }
    }
    o->rows += n;
    return RF_OK;
}
