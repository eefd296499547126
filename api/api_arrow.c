/*
** api/api_arrow.c: relations in and out through the Apache Arrow C Data
** Interface (the ArrowSchema / ArrowArray / ArrowArrayStream structs that
** redfox.h defines from Arrow's specification; no Arrow library is used).
**
** Owns: reading a struct array into a relation given in memory (columns of
** int64, double and date32 used where they lie; the rest converted), and
** exporting an output relation as a struct array or a one-batch stream
** (copies, released by the consumer through the release callbacks).
*/
#include "api_internal.h"
#include "rf_rt_data.h"
#include "rf_value.h"

#include <stdlib.h>
#include <string.h>

/* ---- in --------------------------------------------------------------- */

static int bit(const void *bits, int64_t i) { return (((const uint8_t *)bits)[i >> 3] >> (i & 7)) & 1; }

/* The most rows an array's offset and length may reach: at 16 bytes a
** value (decimal128) their byte offsets still fit an int64. Larger ones
** are malformed (no memory holds them), and their sums would overflow. */
#define MAX_ROWS (INT64_MAX / 16)

/* Do an array's offset and length name rows its buffers can hold (both
** non-negative, their sum at most MAX_ROWS)? Compared without overflow. */
static int extent_ok(int64_t offset, int64_t length)
{
    return offset >= 0 && length >= 0 && length <= MAX_ROWS && offset <= MAX_ROWS - length;
}

/* Does an array of len logical rows hold rows [off, off + n)? The signs
** checked first, then compared without overflow. */
static int holds_rows(int64_t len, int64_t off, int64_t n)
{
    return len >= 0 && off >= 0 && n >= 0 && off <= len && n <= len - off;
}

/* The first row (0-based) in [off, off + n) that the validity bitmap marks
** null, or -1. */
static int64_t first_null(const struct ArrowArray *a, int64_t off, int64_t n)
{
    if (a->null_count == 0 || a->n_buffers < 1 || !a->buffers || !a->buffers[0]) return -1;
    for (int64_t i = 0; i < n; i++)
        if (!bit(a->buffers[0], off + i)) return i;
    return -1;
}

/* Decimal "d:P,S[,128]": the scale, or -1 for another width or a bad string. */
static int decimal_scale(const char *f)
{
    int p = 0, s = 0, w = 128, used = 0;
    if (sscanf(f, "d:%d,%d%n", &p, &s, &used) < 2) return -1;
    if (f[used] == ',' && sscanf(f + used, ",%d", &w) != 1) return -1;
    if (w != 128 || s < 0 || s > 38 || p < 1 || p > 38) return -1;
    return s;
}

__extension__ typedef __int128 i128;

/* One decimal128 at scale s as redfox's int64 at scale 6; -1 when it does not fit exactly. */
static int decimal_to_dec(const uint8_t *p, int s, int64_t *out)
{
    uint64_t lo, hi;
    memcpy(&lo, p, 8);
    memcpy(&hi, p + 8, 8);
    i128 v = (i128)(((unsigned __int128)hi << 64) | lo);
    i128 lim = (i128)INT64_MAX;
    for (int k = s; k < RF_DEC_SCALE; k++) {
        if (v > lim || v < -lim) return -1;
        v *= 10;
    }
    for (int k = RF_DEC_SCALE; k < s; k++) {
        if (v % 10) return -1;
        v /= 10;
    }
    if (v > lim || v < -lim) return -1;
    *out = (int64_t)v;
    return 0;
}

/* Child c (schema sc, array a) of length n from logical row off into col. */
static int import_column(rf_database *db, const char *name, int32_t c, const struct ArrowSchema *sc,
                         const struct ArrowArray *a, int64_t off, int64_t n, api_column *col)
{
    const char *f = sc->format ? sc->format : "";
    const char *cname = sc->name && *sc->name ? sc->name : "";
#define FAIL(code, ...)                                                                                   \
    do {                                                                                                  \
        api_diags_error(&db->diags, __VA_ARGS__);                                                         \
        return code;                                                                                      \
    } while (0)
    if (sc->dictionary || a->dictionary || a->n_children)
        FAIL(REDFOX_MISUSE, "%s: column %d (%s): dictionary and nested Arrow types are not taken", name, (int)c + 1, cname);
    if (!extent_ok(a->offset, a->length))
        FAIL(REDFOX_MISUSE, "%s: column %d (%s): offset %lld and length %lld out of range", name, (int)c + 1, cname,
             (long long)a->offset, (long long)a->length);
    if (!holds_rows(a->length, off, n))
        FAIL(REDFOX_MISUSE, "%s: column %d (%s): shorter than the relation", name, (int)c + 1, cname);
    int64_t at = a->offset + off; /* physical index of the first row */
    int nbuf = !strcmp(f, "u") || !strcmp(f, "U") ? 3 : 2;
    if (a->n_buffers != nbuf)
        FAIL(REDFOX_MISUSE, "%s: column %d (%s): %lld buffers where the format '%s' has %d", name, (int)c + 1, cname,
             (long long)a->n_buffers, f, nbuf);
    if (!a->buffers)
        FAIL(REDFOX_MISUSE, "%s: column %d (%s): no buffers (a NULL buffers array) where the format '%s' has %d", name,
             (int)c + 1, cname, f, nbuf);
    /* (the validity bitmap is read once the buffers array is known to be there) */
    int64_t fn = first_null(a, a->offset + off, n);
    if (fn >= 0) FAIL(REDFOX_ERROR, "%s: column %d (%s), row %lld: a null (redfox has no nulls)", name, (int)c + 1,
                      cname, (long long)fn + 1);
    /* (a string's bytes may be NULL where they are none: the C Data
    ** Interface lets a buffer of 0 bytes be NULL; checked below) */
    for (int k = 1; k < (nbuf == 3 ? 2 : nbuf) && n; k++)
        if (!a->buffers[k])
            FAIL(REDFOX_MISUSE, "%s: column %d (%s): buffer %d of the format '%s' is NULL", name, (int)c + 1, cname, k,
                 f);
    const void *buf = a->buffers[nbuf - 1];
    int width = 0, is_signed = 1;
    int s;
    if (!strcmp(f, "l") || !strcmp(f, "g") || !strcmp(f, "tdD")) {
        col->type = f[0] == 'l' ? REDFOX_INT : f[0] == 'g' ? REDFOX_FLOAT : REDFOX_DATE;
        int w = col->type == REDFOX_DATE ? 4 : 8;
        const char *p = (const char *)buf + at * w;
        int64_t bad = n ? api_check_values(col->type, p, n) : 0;
        if (bad) FAIL(REDFOX_ERROR, "%s: column %d (%s), row %lld: not a valid %s", name, (int)c + 1, cname,
                      (long long)bad, rf_type_name(col->type));
        /* a float column holding -0.0 is copied, its -0.0s made 0.0 (a float zero has no sign) */
        int aligned = ((uintptr_t)p % (uintptr_t)w) == 0;
        if (aligned && !(col->type == REDFOX_FLOAT && api_float_has_negzero((const double *)p, n))) {
            col->data = n ? (void *)p : NULL; /* zero-copy: the array stays alive with the table */
            return REDFOX_OK;
        }
        if (!(col->data = rf_malloc((size_t)(n * w) + 1))) return REDFOX_NOMEM;
        col->owned_data = 1;
        if (n) memcpy(col->data, p, (size_t)(n * w));
        if (col->type == REDFOX_FLOAT) api_float_canon(col->data, n);
        return REDFOX_OK;
    }
    if (!strcmp(f, "c") || !strcmp(f, "C")) width = 1;
    else if (!strcmp(f, "s") || !strcmp(f, "S")) width = 2;
    else if (!strcmp(f, "i") || !strcmp(f, "I")) width = 4;
    else if (!strcmp(f, "L")) width = 8;
    if (width) {
        is_signed = f[0] >= 'a';
        col->type = REDFOX_INT;
        int64_t *v = rf_malloc((size_t)n * 8 + 1);
        if (!v) return REDFOX_NOMEM;
        col->data = v;
        col->owned_data = 1;
        const uint8_t *p = (const uint8_t *)buf + at * width;
        for (int64_t i = 0; i < n; i++) {
            uint64_t u = 0;
            memcpy(&u, p + i * width, (size_t)width); /* little-endian, as Arrow's buffers on this machine */
            if (is_signed && width < 8 && (u >> (width * 8 - 1)) & 1) u |= ~UINT64_C(0) << (width * 8);
            if (!is_signed && width == 8 && u > (uint64_t)INT64_MAX)
                FAIL(REDFOX_ERROR, "%s: column %d (%s), row %lld: %llu does not fit an int", name, (int)c + 1, cname,
                     (long long)i + 1, (unsigned long long)u);
            v[i] = (int64_t)u;
        }
        return REDFOX_OK;
    }
    if (!strcmp(f, "f")) {
        col->type = REDFOX_FLOAT;
        double *v = rf_malloc((size_t)n * 8 + 1);
        if (!v) return REDFOX_NOMEM;
        col->data = v;
        col->owned_data = 1;
        for (int64_t i = 0; i < n; i++) {
            float x;
            memcpy(&x, (const char *)buf + (at + i) * 4, 4);
            v[i] = rf_val_float_canon(x); /* -0.0f is 0.0 */
        }
        return REDFOX_OK;
    }
    if (!strcmp(f, "b")) {
        col->type = REDFOX_BOOL;
        uint8_t *v = rf_malloc((size_t)n + 1);
        if (!v) return REDFOX_NOMEM;
        col->data = v;
        col->owned_data = 1;
        for (int64_t i = 0; i < n; i++) v[i] = (uint8_t)bit(buf, at + i);
        return REDFOX_OK;
    }
    if (f[0] == 'd' && (s = decimal_scale(f)) >= 0) {
        col->type = REDFOX_DECIMAL;
        int64_t *v = rf_malloc((size_t)n * 8 + 1);
        if (!v) return REDFOX_NOMEM;
        col->data = v;
        col->owned_data = 1;
        for (int64_t i = 0; i < n; i++)
            if (decimal_to_dec((const uint8_t *)buf + (at + i) * 16, s, &v[i]))
                FAIL(REDFOX_ERROR,
                     "%s: column %d (%s), row %lld: the decimal does not fit redfox's (18 digits, 6 after the point)",
                     name, (int)c + 1, cname, (long long)i + 1);
        return REDFOX_OK;
    }
    if (!strcmp(f, "u") || !strcmp(f, "U")) {
        col->type = REDFOX_STRING;
        int64_t *o = rf_malloc((size_t)(n + 1) * sizeof *o);
        if (!o) return REDFOX_NOMEM;
        col->off = o;
        o[0] = 0;
        if (n == 0) { /* no offsets need be there */
            col->bytes = "";
            return REDFOX_OK;
        }
        int64_t base = 0;
        for (int64_t i = 0; i <= n; i++) {
            int64_t x;
            if (f[0] == 'u') {
                int32_t y;
                memcpy(&y, (const char *)a->buffers[1] + (at + i) * 4, 4);
                x = y;
            } else {
                memcpy(&x, (const char *)a->buffers[1] + (at + i) * 8, 8);
            }
            if (i == 0) base = x;
            o[i] = x - base;
            if (x < 0 || (i && o[i] < o[i - 1]))
                FAIL(REDFOX_MISUSE, "%s: column %d (%s), row %lld: string offsets out of order", name, (int)c + 1,
                     cname, (long long)i);
        }
        if (!buf && o[n] > 0)
            FAIL(REDFOX_MISUSE, "%s: column %d (%s): buffer 2 of the format '%s' is NULL (the strings hold %lld bytes)",
                 name, (int)c + 1, cname, f, (long long)o[n]);
        col->bytes = buf ? (const char *)buf + base : ""; /* zero-copy: the bytes stay in the array */
        for (int64_t i = 0; i < n; i++) {
            rf_val_err e;
            if (rf_val_check_utf8(col->bytes + o[i], o[i + 1] - o[i], &e))
                FAIL(REDFOX_ERROR, "%s: column %d (%s), row %lld: not valid UTF-8", name, (int)c + 1, cname,
                     (long long)i + 1);
            /* refused as a file's are: redfox's strings end at their first NUL */
            if (o[i + 1] > o[i] && memchr(col->bytes + o[i], 0, (size_t)(o[i + 1] - o[i])))
                FAIL(REDFOX_ERROR,
                     "%s: column %d (%s), row %lld: a NUL byte in a string: strings may not contain NUL bytes", name,
                     (int)c + 1, cname, (long long)i + 1);
        }
        return REDFOX_OK;
    }
    FAIL(REDFOX_MISUSE, "%s: column %d (%s): the Arrow format '%s' is not taken (int64 l, double g, decimal128 d:P,S, "
         "utf8 u, boolean b, date32 tdD)", name, (int)c + 1, cname, f);
#undef FAIL
}

/* A struct array as table *t (its columns pointing into array where they can). */
static int import_table(rf_database *db, const char *name, const struct ArrowSchema *schema,
                        const struct ArrowArray *array, api_table *t)
{
    if (!name || !*name || !schema || !array || !array->release || !schema->format) {
        api_diags_error(&db->diags, "rf_database_put_arrow: a name, a schema and an unreleased array are needed");
        return REDFOX_MISUSE;
    }
    if (strcmp(schema->format, "+s") || schema->n_children < 1 || schema->n_children != array->n_children ||
        schema->n_children > INT32_MAX) {
        api_diags_error(&db->diags, "%s: an Arrow struct array (format +s) with one child per column is needed", name);
        return REDFOX_MISUSE;
    }
    if (!extent_ok(array->offset, array->length)) {
        api_diags_error(&db->diags, "%s: the struct array's offset %lld and length %lld are out of range", name,
                        (long long)array->offset, (long long)array->length);
        return REDFOX_MISUSE;
    }
    if (!schema->children || !array->children) {
        api_diags_error(&db->diags, "%s: column 1: no child: the struct %s's children array is NULL", name,
                        !schema->children ? "schema" : "array");
        return REDFOX_MISUSE;
    }
    if (array->n_buffers >= 1 && array->buffers && array->buffers[0] && array->null_count != 0 &&
        first_null(array, array->offset, array->length) >= 0) {
        api_diags_error(&db->diags, "%s: a null row (redfox has no nulls)", name);
        return REDFOX_ERROR;
    }
    t->ncols = (int32_t)schema->n_children;
    t->nrows = array->length;
    t->name = rf_strdup(name);
    t->cols = rf_calloc((size_t)t->ncols, sizeof *t->cols);
    int rc = t->name && t->cols ? REDFOX_OK : REDFOX_NOMEM;
    for (int32_t c = 0; c < t->ncols && !rc; c++) {
        const struct ArrowSchema *sc = schema->children[c];
        const struct ArrowArray *a = array->children[c];
        if (!sc || !a) {
            api_diags_error(&db->diags, "%s: column %d: missing (a NULL child)", name, (int)c + 1);
            rc = REDFOX_MISUSE;
            break;
        }
        if (!holds_rows(a->length, array->offset, array->length)) {
            api_diags_error(&db->diags, "%s: column %d (%s): shorter than the relation", name, (int)c + 1,
                            sc->name && *sc->name ? sc->name : "");
            rc = REDFOX_MISUSE;
            break;
        }
        rc = import_column(db, name, c, sc, a, array->offset, array->length, &t->cols[c]);
    }
    return rc;
}

int rf_database_put_arrow(rf_database *db, const char *name, const struct ArrowSchema *schema,
                          struct ArrowArray *array)
{
    if (!db) return REDFOX_MISUSE;
    api_diags_clear(&db->diags);
    api_table t;
    memset(&t, 0, sizeof t);
    int rc = import_table(db, name, schema, array, &t);
    if (!rc) {
        t.arrow = *array; /* moved: the table releases it */
        if (api_database_add(db, &t)) {
            t.arrow.release = NULL; /* still the caller's */
            rc = REDFOX_NOMEM;
        } else {
            array->release = NULL;
        }
    }
    if (rc == REDFOX_NOMEM && !db->diags.n) api_diags_error(&db->diags, "out of memory");
    api_table_free(&t);
    return rc;
}

/* Appends table b's rows to a (same column types), copying. */
static int append_rows(api_table *a, const api_table *b)
{
    for (int32_t c = 0; c < a->ncols; c++) {
        api_column *x = &a->cols[c];
        const api_column *y = &b->cols[c];
        if (x->type == REDFOX_STRING) {
            int64_t have = a->nrows ? x->off[a->nrows] : 0, add = b->nrows ? y->off[b->nrows] : 0;
            int64_t *off = rf_realloc(x->off, (size_t)(a->nrows + b->nrows + 1) * sizeof *off);
            if (!off) return REDFOX_NOMEM;
            x->off = off;
            off[0] = 0;
            for (int64_t i = 1; i <= b->nrows; i++) off[a->nrows + i] = have + y->off[i];
            char *bytes = rf_realloc(x->owned_bytes ? (char *)x->bytes : NULL, (size_t)(have + add) + 1);
            if (!bytes) return REDFOX_NOMEM;
            if (add) memcpy(bytes + have, y->bytes, (size_t)add);
            x->bytes = bytes;
            x->owned_bytes = 1;
            continue;
        }
        rf_type it;
        api_type_internal(x->type, &it);
        size_t w = (size_t)rf_rt_type_width(it);
        char *d = rf_realloc(x->owned_data ? x->data : NULL, (size_t)(a->nrows + b->nrows) * w + 1);
        if (!d) return REDFOX_NOMEM;
        if (b->nrows) memcpy(d + (size_t)a->nrows * w, y->data, (size_t)b->nrows * w);
        x->data = d;
        x->owned_data = 1;
    }
    a->nrows += b->nrows;
    return REDFOX_OK;
}

int rf_database_put_arrow_stream(rf_database *db, const char *name, struct ArrowArrayStream *stream)
{
    if (!db) return REDFOX_MISUSE;
    api_diags_clear(&db->diags);
    if (!stream || !stream->release) {
        api_diags_error(&db->diags, "rf_database_put_arrow_stream: an unreleased stream is needed");
        return REDFOX_MISUSE;
    }
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    api_table all;
    memset(&all, 0, sizeof all);
    int rc = REDFOX_OK;
    if (stream->get_schema(stream, &schema)) {
        const char *e = stream->get_last_error(stream);
        api_diags_error(&db->diags, "%s: the Arrow stream gave no schema: %s", name ? name : "", e ? e : "error");
        rc = REDFOX_ERROR;
    }
    int64_t batches = 0;
    while (!rc) {
        struct ArrowArray a;
        memset(&a, 0, sizeof a);
        if (stream->get_next(stream, &a)) {
            const char *e = stream->get_last_error(stream);
            api_diags_error(&db->diags, "%s: the Arrow stream failed: %s", name ? name : "", e ? e : "error");
            rc = REDFOX_ERROR;
            break;
        }
        if (!a.release) break; /* the end */
        batches++;
        api_table t;
        memset(&t, 0, sizeof t);
        rc = import_table(db, name, &schema, &a, &t);
        if (!rc && !all.cols) { /* the first batch: an empty table of its columns to append to */
            all.ncols = t.ncols;
            all.name = rf_strdup(name);
            all.cols = rf_calloc((size_t)t.ncols, sizeof *all.cols);
            if (!all.name || !all.cols) rc = REDFOX_NOMEM;
            for (int32_t c = 0; !rc && c < t.ncols; c++) all.cols[c].type = t.cols[c].type;
        }
        if (!rc) rc = append_rows(&all, &t); /* copies: the batch is released next */
        api_table_free(&t);
        a.release(&a);
    }
    if (!rc && !batches) {
        api_diags_error(&db->diags, "%s: the Arrow stream has no batch (its columns' types are unknown)",
                        name ? name : "");
        rc = REDFOX_MISUSE;
    }
    if (!rc && api_database_add(db, &all)) rc = REDFOX_NOMEM;
    if (rc == REDFOX_NOMEM && !db->diags.n) api_diags_error(&db->diags, "out of memory");
    api_table_free(&all);
    if (schema.release) schema.release(&schema);
    stream->release(stream);
    return rc;
}

/* ---- out -------------------------------------------------------------- */

typedef struct schema_priv {
    char *format, *name;
    struct ArrowSchema **kids;
    int64_t nkids;
} schema_priv;

static void release_schema(struct ArrowSchema *s)
{
    schema_priv *p = s->private_data;
    for (int64_t i = 0; i < p->nkids; i++) {
        if (p->kids[i] && p->kids[i]->release) p->kids[i]->release(p->kids[i]);
        free(p->kids[i]);
    }
    free(p->kids);
    free(p->format);
    free(p->name);
    free(p);
    s->release = NULL;
}

/* A schema node; 0, or -1 when out of memory (nothing to release then). */
static int make_schema(struct ArrowSchema *s, const char *format, const char *name, int64_t nkids)
{
    memset(s, 0, sizeof *s);
    schema_priv *p = rf_calloc(1, sizeof *p);
    if (!p) return -1;
    p->format = rf_strdup(format);
    p->name = rf_strdup(name);
    p->kids = rf_calloc((size_t)nkids + 1, sizeof *p->kids);
    for (int64_t i = 0; p->kids && i < nkids; i++)
        if ((p->kids[i] = rf_calloc(1, sizeof **p->kids))) p->nkids = i + 1;
    s->format = p->format;
    s->name = p->name;
    s->n_children = nkids;
    s->children = p->kids;
    s->private_data = p;
    s->release = release_schema;
    if (!p->format || !p->name || !p->kids || p->nkids != nkids) {
        release_schema(s);
        return -1;
    }
    return 0;
}

/* Bytes of all the strings of a column. */
static int64_t string_bytes(const rf_rt_rel *r, int32_t c, const rf_rt_dict *dict)
{
    int64_t total = 0, len;
    for (int64_t i = 0; i < r->nrows; i++) {
        rf_rt_dict_str(dict, ((const uint32_t *)r->cols[c])[i], &len);
        total += len;
    }
    return total;
}

/* Whether wide column c of r holds a value of 39 digits (beyond 10^38 - 1
** units): Arrow's decimal128 has a precision of at most 38, so such a column
** goes as decimal256. */
static int beyond_38_digits(const rf_rt_rel *r, int32_t c)
{
    const rf_dec128 lim = (rf_dec128)10000000000000000000ULL * (rf_dec128)10000000000000000000ULL - 1;
    for (int64_t i = 0; i < r->nrows; i++) {
        rf_dec128 v;
        memcpy(&v, (const char *)r->cols[c] + 16 * i, sizeof v);
        if (v > lim || v < -lim) return 1;
    }
    return 0;
}

/* str_bytes: a string column's bytes; for a wide decimal, 1 where it holds
** a value of 39 digits. */
static const char *format_of(rf_type t, int64_t str_bytes)
{
    switch (t) {
    case RF_TYPE_INT: return "l";
    case RF_TYPE_FLOAT: return "g";
    case RF_TYPE_DECIMAL: return "d:38,6";
    case RF_TYPE_DEC128: return str_bytes ? "d:76,6,256" : "d:38,6";
    case RF_TYPE_STRING: return str_bytes > INT32_MAX ? "U" : "u";
    case RF_TYPE_BOOL: return "b";
    case RF_TYPE_DATE: return "tdD";
    }
    return "n";
}

/* The formats and names of an output, for its schema (once or per stream call). */
static int output_schema(const rf_result *r, int32_t i, const char *const *formats, struct ArrowSchema *s)
{
    const api_output *o = &r->outs[i];
    if (make_schema(s, "+s", o->name, o->ncols)) return -1;
    for (int32_t c = 0; c < o->ncols; c++) {
        char tmp[32];
        const char *cn = o->colnames[c];
        if (!*cn) snprintf(tmp, sizeof tmp, "c%d", (int)c);
        if (make_schema(s->children[c], formats[c], *cn ? cn : tmp, 0)) {
            s->release(s);
            return -1;
        }
    }
    return 0;
}

typedef struct array_priv {
    const void *bufs[3];
    void *mem[3];
    struct ArrowArray **kids;
    int64_t nkids;
} array_priv;

static void release_array(struct ArrowArray *a)
{
    array_priv *p = a->private_data;
    for (int64_t i = 0; i < p->nkids; i++) {
        if (p->kids[i] && p->kids[i]->release) p->kids[i]->release(p->kids[i]);
        free(p->kids[i]);
    }
    free(p->kids);
    for (int k = 0; k < 3; k++) free(p->mem[k]);
    free(p);
    a->release = NULL;
}

static array_priv *make_array(struct ArrowArray *a, int64_t length, int64_t nbufs, int64_t nkids)
{
    memset(a, 0, sizeof *a);
    array_priv *p = rf_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->kids = rf_calloc((size_t)nkids + 1, sizeof *p->kids);
    for (int64_t i = 0; p->kids && i < nkids; i++)
        if ((p->kids[i] = rf_calloc(1, sizeof **p->kids))) p->nkids = i + 1;
    a->length = length;
    a->n_buffers = nbufs;
    a->buffers = p->bufs;
    a->n_children = nkids;
    a->children = p->kids;
    a->private_data = p;
    a->release = release_array;
    if (!p->kids || p->nkids != nkids) {
        release_array(a);
        return NULL;
    }
    return p;
}

/* Column c of r as an Arrow array of format f (copies). 0, or -1 when out of memory. */
static int export_column(const rf_rt_rel *r, int32_t c, const rf_rt_dict *dict, const char *f, struct ArrowArray *a)
{
    int64_t n = r->nrows;
    rf_type t = r->types[c];
    array_priv *p = make_array(a, n, t == RF_TYPE_STRING ? 3 : 2, 0);
    if (!p) return -1;
    const void *src = n ? r->cols[c] : NULL;
    switch (t) {
    case RF_TYPE_INT:
    case RF_TYPE_FLOAT:
    case RF_TYPE_DATE: {
        size_t bytes = (size_t)n * (size_t)rf_rt_type_width(t);
        if (!(p->mem[1] = rf_malloc(bytes + 8))) break;
        if (bytes) memcpy(p->mem[1], src, bytes);
        break;
    }
    case RF_TYPE_DECIMAL: {
        uint8_t *d = p->mem[1] = rf_malloc((size_t)n * 16 + 16);
        for (int64_t i = 0; d && i < n; i++) {
            int64_t v = ((const int64_t *)src)[i];
            uint64_t lo = (uint64_t)v, hi = v < 0 ? ~UINT64_C(0) : 0;
            memcpy(d + i * 16, &lo, 8);
            memcpy(d + i * 16 + 8, &hi, 8);
        }
        break;
    }
    case RF_TYPE_DEC128: {
        /* already Arrow's decimal128 at scale 6: 16 bytes, two's complement,
        ** little-endian; as decimal256 (format_of), sign-extended to 32 */
        if (!strcmp(f, "d:76,6,256")) {
            uint8_t *d = p->mem[1] = rf_malloc((size_t)n * 32 + 32);
            for (int64_t i = 0; d && i < n; i++) {
                memcpy(d + i * 32, (const char *)src + i * 16, 16);
                memset(d + i * 32 + 16, (d[i * 32 + 15] & 0x80) ? 0xff : 0, 16);
            }
            break;
        }
        size_t bytes = (size_t)n * 16;
        if (!(p->mem[1] = rf_malloc(bytes + 16))) break;
        if (bytes) memcpy(p->mem[1], src, bytes);
        break;
    }
    case RF_TYPE_BOOL: {
        uint8_t *d = p->mem[1] = rf_calloc((size_t)(n + 7) / 8 + 8, 1);
        for (int64_t i = 0; d && i < n; i++)
            if (((const uint8_t *)src)[i]) d[i >> 3] |= (uint8_t)(1u << (i & 7));
        break;
    }
    case RF_TYPE_STRING: {
        int large = f[0] == 'U';
        int64_t total = string_bytes(r, c, dict), at = 0, len;
        p->mem[1] = rf_malloc((size_t)(n + 1) * (large ? 8 : 4));
        char *bytes = p->mem[2] = rf_malloc((size_t)total + 1);
        if (!p->mem[1] || !bytes) break;
        for (int64_t i = 0; i <= n; i++) {
            if (large) ((int64_t *)p->mem[1])[i] = at;
            else ((int32_t *)p->mem[1])[i] = (int32_t)at;
            if (i == n) break;
            const char *s = rf_rt_dict_str(dict, ((const uint32_t *)src)[i], &len);
            memcpy(bytes + at, s, (size_t)len);
            at += len;
        }
        p->bufs[2] = bytes;
        break;
    }
    }
    p->bufs[1] = p->mem[1];
    if (!p->mem[1] || (t == RF_TYPE_STRING && !p->mem[2])) {
        release_array(a);
        return -1;
    }
    return 0;
}

/* The formats of output i's columns (caller frees the array, not the strings). */
static const char **output_formats(const rf_result *r, int32_t i)
{
    const api_output *o = &r->outs[i];
    const rf_rt_rel *rel = &r->rr->outputs[i].rel;
    const char **f = rf_calloc((size_t)o->ncols + 1, sizeof *f);
    for (int32_t c = 0; f && c < o->ncols; c++)
        f[c] = format_of(o->types[c], o->types[c] == RF_TYPE_STRING  ? string_bytes(rel, c, r->rr->dict)
                                      : o->types[c] == RF_TYPE_DEC128 ? beyond_38_digits(rel, c)
                                                                      : 0);
    return f;
}

static int export_array(const rf_result *r, int32_t i, const char *const *formats, struct ArrowArray *a)
{
    const rf_rt_rel *rel = &r->rr->outputs[i].rel;
    array_priv *p = make_array(a, rel->nrows, 1, rel->ncols);
    if (!p) return -1;
    for (int32_t c = 0; c < rel->ncols; c++)
        if (export_column(rel, c, r->rr->dict, formats[c], a->children[c])) {
            release_array(a);
            return -1;
        }
    return 0;
}

int rf_result_arrow(const rf_result *r, int32_t i, struct ArrowSchema *schema, struct ArrowArray *array)
{
    if (!r || !schema || !array) return REDFOX_MISUSE;
    if (i < 0 || i >= r->rr->noutputs) return REDFOX_NOTFOUND;
    const char **formats = output_formats(r, i);
    int rc = formats ? REDFOX_OK : REDFOX_NOMEM;
    if (!rc && output_schema(r, i, formats, schema)) rc = REDFOX_NOMEM;
    if (!rc && export_array(r, i, formats, array)) {
        schema->release(schema);
        rc = REDFOX_NOMEM;
    }
    free(formats);
    return rc;
}

/* A stream of one batch: the schema kept to copy from, the batch until taken. */
typedef struct stream_priv {
    struct ArrowSchema schema;
    struct ArrowArray batch;
    char error[64];
} stream_priv;

/* A deep copy of a schema made by make_schema (flat children). */
static int copy_schema(const struct ArrowSchema *src, struct ArrowSchema *dst)
{
    if (make_schema(dst, src->format, src->name ? src->name : "", src->n_children)) return -1;
    for (int64_t c = 0; c < src->n_children; c++)
        if (copy_schema(src->children[c], dst->children[c])) {
            dst->release(dst);
            return -1;
        }
    return 0;
}

static int stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    stream_priv *p = s->private_data;
    if (copy_schema(&p->schema, out)) {
        snprintf(p->error, sizeof p->error, "out of memory");
        return 12; /* ENOMEM */
    }
    return 0;
}

static int stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    stream_priv *p = s->private_data;
    *out = p->batch; /* moved; the second call finds it released: the end */
    p->batch.release = NULL;
    return 0;
}

static const char *stream_last_error(struct ArrowArrayStream *s)
{
    stream_priv *p = s->private_data;
    return p->error[0] ? p->error : NULL;
}

static void stream_release(struct ArrowArrayStream *s)
{
    stream_priv *p = s->private_data;
    if (p->schema.release) p->schema.release(&p->schema);
    if (p->batch.release) p->batch.release(&p->batch);
    free(p);
    s->release = NULL;
}

int rf_result_arrow_stream(const rf_result *r, int32_t i, struct ArrowArrayStream *stream)
{
    if (!r || !stream) return REDFOX_MISUSE;
    if (i < 0 || i >= r->rr->noutputs) return REDFOX_NOTFOUND;
    stream_priv *p = rf_calloc(1, sizeof *p);
    if (!p) return REDFOX_NOMEM;
    int rc = rf_result_arrow(r, i, &p->schema, &p->batch);
    if (rc) {
        free(p);
        return rc;
    }
    memset(stream, 0, sizeof *stream);
    stream->get_schema = stream_get_schema;
    stream->get_next = stream_get_next;
    stream->get_last_error = stream_last_error;
    stream->release = stream_release;
    stream->private_data = p;
    return REDFOX_OK;
}
