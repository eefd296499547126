/*
** tpch/check/rf_tpch_check.c: the comparison of a query's output with a
** TPC-H answer file (the rules are in rf_tpch_check.h).
**
** Owns: splitting '|'-separated text into rows and fields, exact numeric
** comparison of decimal text, and the tie-group matching. It prints nothing.
*/
#include "rf_tpch_check.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Beyond this many rows a tie group is only compared after sorting both
** sides; the quadratic matching that forgives tolerance-induced reordering
** would be too slow. */
#define GREEDY_MAX 4096

typedef struct field {
    const char *p;
    size_t n;
} field;

typedef struct table {
    field *f;        /* all fields, row after row */
    int64_t *start;  /* first field of each row; start[nrows] is the end */
    int64_t nrows;   /* rows, the header included */
} table;

static void table_free(table *t)
{
    free(t->f);
    free(t->start);
    memset(t, 0, sizeof *t);
}

/* Splits text into lines and lines into fields. Every line is a row, an
** empty one included (SQL's NULL row is an empty line); only the text after
** the last newline is dropped when it is empty. A '\r' before '\n' is not
** data. Returns 0 when out of memory. */
static int table_parse(const char *s, size_t n, table *t)
{
    memset(t, 0, sizeof *t);
    int64_t nlines = 0, nfields = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') nlines++;
        if (s[i] == '|') nfields++;
    }
    nlines++; /* the last line, maybe without a newline */
    nfields += nlines;
    t->f = malloc((size_t)nfields * sizeof *t->f);
    t->start = malloc((size_t)(nlines + 1) * sizeof *t->start);
    if (!t->f || !t->start) {
        table_free(t);
        return 0;
    }
    int64_t nf = 0;
    size_t pos = 0;
    while (pos < n) {
        size_t end = pos;
        while (end < n && s[end] != '\n') end++;
        size_t lend = end;
        if (lend > pos && s[lend - 1] == '\r') lend--;
        t->start[t->nrows++] = nf;
        size_t fs = pos;
        for (size_t i = pos; i <= lend; i++)
            if (i == lend || s[i] == '|') {
                t->f[nf].p = s + fs;
                t->f[nf].n = i - fs;
                nf++;
                fs = i + 1;
            }
        pos = end + 1;
    }
    t->start[t->nrows] = nf;
    return 1;
}

static int64_t row_nfields(const table *t, int64_t r) { return t->start[r + 1] - t->start[r]; }
static const field *row_field(const table *t, int64_t r, int64_t c) { return &t->f[t->start[r] + c]; }

/* ---- numbers ----------------------------------------------------------- */

/* A number in plain decimal notation, as mant * 10^-scale. digits counts
** mant's significant digits; too many for 128 bits leaves exact = 0 and only
** approx set. */
typedef struct number {
    int neg;
    unsigned __int128 mant;
    int32_t scale;
    int32_t digits;
    int exact;
    long double approx;
} number;

static int parse_number(const char *s, size_t n, number *out)
{
    size_t i = 0;
    memset(out, 0, sizeof *out);
    if (i < n && (s[i] == '-' || s[i] == '+')) out->neg = s[i++] == '-';
    size_t int_digits = 0, frac_digits = 0;
    int exact = 1;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (out->digits || s[i] != '0') {
            if (++out->digits > 36) exact = 0;
            else out->mant = out->mant * 10 + (unsigned)(s[i] - '0');
        }
        i++;
        int_digits++;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (out->digits || s[i] != '0') {
                if (++out->digits > 36) exact = 0;
                else out->mant = out->mant * 10 + (unsigned)(s[i] - '0');
            }
            if (exact) out->scale++;
            i++;
            frac_digits++;
        }
    }
    if (!int_digits && !frac_digits) return 0;
    long exp10 = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < n && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
        if (i >= n || s[i] < '0' || s[i] > '9') return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (exp10 < 100000) exp10 = exp10 * 10 + (s[i] - '0');
            i++;
        }
        if (eneg) exp10 = -exp10;
    }
    if (i != n) return 0;
    char buf[128];
    if (n >= sizeof buf) {
        exact = 0;
        out->approx = HUGE_VALL;
    } else {
        memcpy(buf, s, n);
        buf[n] = 0;
        out->approx = strtold(buf, NULL);
    }
    if (exact && (exp10 > 36 || exp10 < -36)) exact = 0;
    if (exact) {
        /* fold the exponent into the scale; positive scales only */
        long sc = (long)out->scale - exp10;
        while (sc < 0 && exact) {
            if (++out->digits > 36) exact = 0;
            out->mant *= 10;
            sc++;
        }
        out->scale = (int32_t)sc;
    }
    out->exact = exact;
    return 1;
}

static unsigned __int128 pow10_u128(int32_t k)
{
    unsigned __int128 p = 1;
    while (k-- > 0) p *= 10;
    return p;
}

/* Brings both mantissas to a common scale; 0 when that overflows. */
static int common_scale(const number *a, const number *b, __int128 *va, __int128 *vb, int32_t *scale)
{
    if (!a->exact || !b->exact) return 0;
    int32_t s = a->scale > b->scale ? a->scale : b->scale;
    int32_t da = a->digits + (s - a->scale), db = b->digits + (s - b->scale);
    if (s > 36 || da > 37 || db > 37) return 0;
    *va = (__int128)(a->mant * pow10_u128(s - a->scale));
    *vb = (__int128)(b->mant * pow10_u128(s - b->scale));
    if (a->neg) *va = -*va;
    if (b->neg) *vb = -*vb;
    *scale = s;
    return 1;
}

static int numbers_close(const number *a, const number *b, double tolerance)
{
    __int128 va, vb;
    int32_t s;
    long double t = 0;
    if (common_scale(a, b, &va, &vb, &s) && s <= 18 &&
        (t = (long double)tolerance * powl(10.0L, (long double)s)) < 9e18L) {
        __int128 d = va - vb;
        if (d < 0) d = -d;
        /* the tolerance itself is a decimal (0.01): round it at this scale,
        ** so that a difference of exactly 0.01 is within it */
        __int128 ts = (__int128)llroundl(t);
        return d <= ts;
    }
    long double d = fabsl(a->approx - b->approx);
    return d <= (long double)tolerance * (1.0L + 1e-12L);
}

static int numbers_cmp(const number *a, const number *b)
{
    __int128 va, vb;
    int32_t s;
    if (common_scale(a, b, &va, &vb, &s)) return va < vb ? -1 : va > vb;
    return a->approx < b->approx ? -1 : a->approx > b->approx;
}

int rf_tpch_check_fields_equal(const char *a, size_t alen, const char *b, size_t blen, double tolerance)
{
    if (alen == blen && memcmp(a, b, alen) == 0) return 1;
    number na, nb;
    if (!parse_number(a, alen, &na) || !parse_number(b, blen, &nb)) return 0;
    return numbers_close(&na, &nb, tolerance);
}

/* Field order for sorting tie groups: numerically when both are numbers. */
static int field_cmp(const field *a, const field *b)
{
    number na, nb;
    if (parse_number(a->p, a->n, &na) && parse_number(b->p, b->n, &nb)) {
        int c = numbers_cmp(&na, &nb);
        if (c) return c;
    }
    size_t m = a->n < b->n ? a->n : b->n;
    int c = memcmp(a->p, b->p, m);
    if (c) return c < 0 ? -1 : 1;
    return a->n < b->n ? -1 : a->n > b->n;
}

/* ---- the comparison ---------------------------------------------------- */

typedef struct ctx {
    const table *act, *exp;
    int32_t ncols;
    const rf_tpch_check_opts *o;
    rf_tpch_check_result *r;
} ctx;

static void fail(rf_tpch_check_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(rf_tpch_check_result *r, const char *fmt, ...)
{
    if (!r->ok) return; /* keep the first difference */
    r->ok = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

/* A row as text for messages, shortened to fit. */
static const char *row_text(const table *t, int64_t row, char *buf, size_t cap)
{
    size_t len = 0;
    int64_t nf = row_nfields(t, row);
    for (int64_t c = 0; c < nf && len + 1 < cap; c++) {
        const field *f = row_field(t, row, c);
        if (c) buf[len++] = '|';
        size_t k = f->n;
        if (len + k + 1 > cap) k = cap - len - 1;
        memcpy(buf + len, f->p, k);
        len += k;
    }
    buf[len < cap ? len : cap - 1] = 0;
    if (len + 1 >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
    return buf;
}

static int rows_equal(const ctx *c, int64_t ar, int64_t er)
{
    for (int32_t k = 0; k < c->ncols; k++) {
        const field *a = row_field(c->act, ar, k), *e = row_field(c->exp, er, k);
        if (!rf_tpch_check_fields_equal(a->p, a->n, e->p, e->n, c->o->tolerance)) return 0;
    }
    return 1;
}

/* The first column where two rows differ, -1 if none. */
static int32_t first_diff_col(const ctx *c, int64_t ar, int64_t er)
{
    for (int32_t k = 0; k < c->ncols; k++) {
        const field *a = row_field(c->act, ar, k), *e = row_field(c->exp, er, k);
        if (!rf_tpch_check_fields_equal(a->p, a->n, e->p, e->n, c->o->tolerance)) return k;
    }
    return -1;
}

static int tie_on_order(const ctx *c, const table *ta, int64_t ra, const table *tb, int64_t rb)
{
    for (int32_t k = 0; k < c->o->norder; k++) {
        int32_t col = c->o->order_cols[k];
        const field *a = row_field(ta, ra, col), *b = row_field(tb, rb, col);
        if (!rf_tpch_check_fields_equal(a->p, a->n, b->p, b->n, c->o->tolerance)) return 0;
    }
    return 1;
}

static int row_cmp(const table *t, int64_t a, int64_t b, int32_t ncols)
{
    for (int32_t k = 0; k < ncols; k++) {
        int r = field_cmp(row_field(t, a, k), row_field(t, b, k));
        if (r) return r;
    }
    return 0;
}

/* Merge sort of row numbers (qsort has no context argument in C11). */
static void sort_rows(const table *t, int32_t ncols, int64_t *v, int64_t *tmp, int64_t n)
{
    if (n < 2) return;
    int64_t h = n / 2;
    sort_rows(t, ncols, v, tmp, h);
    sort_rows(t, ncols, v + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = row_cmp(t, v[j], v[i], ncols) < 0 ? v[j++] : v[i++];
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, (size_t)n * sizeof *v);
}

/* Rows [s, e) of both sides as multisets. Rows are table rows (1 = the
** first data row). */
static void compare_group(const ctx *c, int64_t s, int64_t e)
{
    char b1[300], b2[300];
    int64_t n = e - s;
    if (n == 1) {
        int32_t k = first_diff_col(c, s, s);
        if (k >= 0) {
            const field *a = row_field(c->act, s, k), *x = row_field(c->exp, s, k);
            const field *h = row_field(c->exp, 0, k);
            fail(c->r, "row %lld, column %d (%.*s): expected '%.*s', got '%.*s'", (long long)s, k + 1, (int)h->n,
                 h->p, (int)x->n, x->p, (int)a->n, a->p);
        }
        return;
    }
    int64_t *av = malloc((size_t)n * 3 * sizeof *av);
    if (!av) {
        fail(c->r, "out of memory comparing rows %lld to %lld", (long long)s, (long long)(e - 1));
        return;
    }
    int64_t *ev = av + n, *tmp = av + 2 * n;
    for (int64_t i = 0; i < n; i++) av[i] = ev[i] = s + i;
    sort_rows(c->act, c->ncols, av, tmp, n);
    sort_rows(c->exp, c->ncols, ev, tmp, n);
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++)
        if (!rows_equal(c, av[i], ev[i])) bad = i;
    if (bad < 0) {
        free(av);
        return;
    }
    /* Sorting can pair rows badly when numbers differ within the tolerance;
    ** match greedily before calling it a difference. */
    if (n <= GREEDY_MAX) {
        char *used = calloc((size_t)n, 1);
        if (!used) {
            fail(c->r, "out of memory comparing rows %lld to %lld", (long long)s, (long long)(e - 1));
            free(av);
            return;
        }
        int64_t missing = -1, extra = -1;
        for (int64_t i = 0; i < n; i++) {
            int64_t j = 0;
            while (j < n && (used[j] || !rows_equal(c, s + j, s + i))) j++;
            if (j < n) used[j] = 1;
            else if (missing < 0) missing = s + i;
        }
        for (int64_t j = 0; j < n && extra < 0; j++)
            if (!used[j]) extra = s + j;
        free(used);
        if (missing < 0) {
            free(av);
            return;
        }
        fail(c->r, "rows %lld to %lld tie on the ORDER BY columns; the expected row '%s' is not among them, "
                   "the output has '%s' instead",
             (long long)s, (long long)(e - 1), row_text(c->exp, missing, b1, sizeof b1),
             row_text(c->act, extra, b2, sizeof b2));
    } else {
        fail(c->r, "rows %lld to %lld tie on the ORDER BY columns and differ: expected '%s', got '%s'", (long long)s,
             (long long)(e - 1), row_text(c->exp, ev[bad], b1, sizeof b1), row_text(c->act, av[bad], b2, sizeof b2));
    }
    free(av);
}

/* Data rows 1 .. nrows-1 of both tables, in tie groups of the answer. */
static void compare_rows(const ctx *c, int64_t nrows, int cut_by_limit)
{
    int64_t s = 1;
    while (s < nrows && c->r->ok) {
        int64_t e = s + 1;
        if (c->o->norder == 0) e = nrows;
        else
            while (e < nrows && tie_on_order(c, c->exp, s, c->exp, e)) e++;
        if (e == nrows && cut_by_limit && e - s > 1) {
            /* the LIMIT chose among ties: any of them will do */
            for (int64_t i = s; i < e; i++)
                if (!tie_on_order(c, c->act, i, c->exp, s)) {
                    char b1[300], b2[300];
                    fail(c->r, "row %lld: expected a row tied with '%s' on the ORDER BY columns, got '%s'",
                         (long long)i, row_text(c->exp, s, b1, sizeof b1), row_text(c->act, i, b2, sizeof b2));
                    break;
                }
        } else {
            compare_group(c, s, e);
        }
        s = e;
    }
}

/* The identifier an answer's column name becomes (see the header). */
static int header_name_matches(const field *act, const field *exp)
{
    if (act->n == exp->n && memcmp(act->p, exp->p, act->n) == 0) return 1;
    char buf[256];
    size_t n = 0;
    int gap = 0;
    for (size_t i = 0; i < exp->n && n + 2 < sizeof buf; i++) {
        char ch = exp->p[i];
        int ident = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
        if (ident) {
            if (gap && n) buf[n++] = '_';
            gap = 0;
            buf[n++] = ch;
        } else {
            gap = 1;
        }
    }
    return n == act->n && memcmp(buf, act->p, n) == 0;
}

void rf_tpch_check_opts_init(rf_tpch_check_opts *o)
{
    memset(o, 0, sizeof *o);
    o->limit = -1;
    o->tolerance = 0.01;
}

static int all_empty(const table *t, int64_t row)
{
    for (int64_t k = 0; k < row_nfields(t, row); k++)
        if (row_field(t, row, k)->n) return 0;
    return 1;
}

void rf_tpch_check_text(const char *actual, size_t actual_len, const char *expected, size_t expected_len,
                        const rf_tpch_check_opts *o, rf_tpch_check_result *r)
{
    memset(r, 0, sizeof *r);
    r->ok = 1;
    table act, exp;
    if (!table_parse(actual, actual_len, &act)) {
        fail(r, "out of memory reading the output");
        return;
    }
    if (!table_parse(expected, expected_len, &exp)) {
        table_free(&act);
        fail(r, "out of memory reading the answer");
        return;
    }
    r->actual_rows = act.nrows ? act.nrows - 1 : 0;
    r->expected_rows = exp.nrows ? exp.nrows - 1 : 0;
    ctx c = {&act, &exp, 0, o, r};
    if (!exp.nrows) {
        fail(r, "the answer is empty: it has no header row");
        goto done;
    }
    if (!act.nrows) {
        fail(r, "the output is empty: it has no header row");
        goto done;
    }
    int64_t ne = row_nfields(&exp, 0), na = row_nfields(&act, 0);
    for (int64_t k = 0; k < ne && k < na; k++) {
        const field *a = row_field(&act, 0, k), *e = row_field(&exp, 0, k);
        if (!header_name_matches(a, e)) {
            fail(r, "header, column %lld: expected '%.*s', got '%.*s'", (long long)k + 1, (int)e->n, e->p, (int)a->n,
                 a->p);
            goto done;
        }
    }
    if (ne != na) {
        fail(r, "header: expected %lld columns, got %lld", (long long)ne, (long long)na);
        goto done;
    }
    c.ncols = (int32_t)ne;
    for (int32_t k = 0; k < o->norder; k++)
        if (o->order_cols[k] < 0 || o->order_cols[k] >= c.ncols) {
            fail(r, "ORDER BY column %d does not exist (%d columns)", o->order_cols[k] + 1, c.ncols);
            goto done;
        }
    for (int t = 0; t < 2; t++) {
        const table *tb = t ? &act : &exp;
        for (int64_t i = 1; i < tb->nrows; i++)
            if (row_nfields(tb, i) != ne) {
                fail(r, "%s row %lld has %lld fields, the header %lld", t ? "output" : "answer", (long long)i,
                     (long long)row_nfields(tb, i), (long long)ne);
                goto done;
            }
    }
    if (r->actual_rows == 0 && r->expected_rows == 1 && all_empty(&exp, 1)) {
        snprintf(r->message, sizeof r->message, "no rows, as the answer's NULL row says");
        goto done;
    }
    int64_t common = act.nrows < exp.nrows ? act.nrows : exp.nrows;
    int cut = o->limit >= 0 && r->expected_rows == o->limit;
    compare_rows(&c, common, cut && act.nrows == exp.nrows);
    if (act.nrows != exp.nrows) {
        char first[600], b[300];
        if (!r->ok) snprintf(first, sizeof first, "; first difference: %.560s", r->message);
        else if (act.nrows > exp.nrows)
            snprintf(first, sizeof first, "; the first extra row is '%s'", row_text(&act, exp.nrows, b, sizeof b));
        else
            snprintf(first, sizeof first, "; the first missing row is '%s'", row_text(&exp, act.nrows, b, sizeof b));
        r->ok = 1;
        fail(r, "expected %lld rows, got %lld%s", (long long)r->expected_rows, (long long)r->actual_rows, first);
        goto done;
    }
    if (r->ok) snprintf(r->message, sizeof r->message, "%lld %s", (long long)r->actual_rows,
                         r->actual_rows == 1 ? "row matches" : "rows match");
done:
    table_free(&act);
    table_free(&exp);
}

/* An answer file is read whole: a regular file of at most this many bytes
** (a named pipe there blocked the check for ever, /dev/zero never ended). */
#define ANSWER_MAX (1LL << 30)

int rf_tpch_check_file(const char *actual, size_t actual_len, const char *expected_path,
                       const rf_tpch_check_opts *o, rf_tpch_check_result *r)
{
    /* opened without blocking, so that a named pipe is refused, not waited on */
    int fd = open(expected_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    char *data = NULL;
    size_t len = 0;
    int err = fd < 0 ? errno : 0;
    const char *why = NULL;
    struct stat sb;
    if (!err && fstat(fd, &sb) != 0) err = errno;
    if (!err && !S_ISREG(sb.st_mode))
        why = S_ISDIR(sb.st_mode) ? "a folder, not a file" : "not a regular file (a named pipe, device or socket)";
    else if (!err && sb.st_size > ANSWER_MAX)
        why = "larger than 1 GiB, too large for an answer";
    if (!err && !why) {
        size_t cap = (size_t)sb.st_size + 1; /* it may grow while read: up to the bound */
        data = malloc(cap);
        if (!data) err = ENOMEM;
        for (;;) {
            if (err) break;
            if (len == cap) {
                if ((long long)cap > ANSWER_MAX) {
                    why = "larger than 1 GiB, too large for an answer";
                    break;
                }
                char *m = realloc(data, cap * 2);
                if (!m) {
                    err = ENOMEM;
                    break;
                }
                data = m;
                cap *= 2;
            }
            ssize_t k = read(fd, data + len, cap - len);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) err = errno;
            if (k <= 0) break;
            len += (size_t)k;
        }
    }
    if (fd >= 0) close(fd);
    if (err || why) {
        memset(r, 0, sizeof *r);
        snprintf(r->message, sizeof r->message, "cannot read the answer %s: %s", expected_path,
                 why ? why : strerror(err));
        free(data);
        return 0;
    }
    rf_tpch_check_text(actual, actual_len, data ? data : "", len, o, r);
    free(data);
    return r->ok;
}
