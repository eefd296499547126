/*
** runtime/rt_output.c: rf_rt_write_rel, the writer of a relation as text:
** an aligned table for people, RFC 4180 CSV or '|'-separated text for tools.
**
** Owns: the output text formats. Values print as rf_value.h formats them
** (written with its rf_val_write_* functions into a stack buffer, so no
** allocation per value), through one 1 MiB buffer per call into a write
** callback (a FILE, or a file written aside: common/rf_file.h).
**
** CSV (RFC 4180): a header row of the column names, then one row per line,
** fields separated by ','. A field that contains a comma, a double quote, a
** carriage return or a line feed is quoted, a quote inside doubled
** ("O""Brien"); nothing else is escaped, so strings come back byte for
** byte. In a one-column relation an empty string is written "" so that its
** row is not a blank line (which readers skip). Lines end in LF, as text
** on Unix does; RFC 4180 readers accept it.
** TBL: the header row, then one row per line, fields separated by '|', no
** trailing '|' (the format of TPC-H's .tbl answers). A string that holds a
** '|', a carriage return or a line feed, or starts with a double quote, is
** quoted as in RFC 4180 (quotes doubled), which TPC-H text never needs; so
** the file reads back as the same rows through lang:input with
** lang:input:header (the loader's quoting, runtime/io/rf_load.h). Nothing
** else is escaped: a '"' inside an unquoted field is an ordinary byte.
** TABLE: the names, a line of dashes under each, then the rows; columns are
** as wide as their widest cell in a terminal's columns (a code point one,
** an East Asian wide or fullwidth character or emoji two, a combining mark
** none: cp_width) and separated by two spaces; int, decimal and float cells
** are right-aligned, the others left-aligned; lines carry no trailing
** blanks. A string's '|', newline, carriage return and tab are written as
** the two characters \|, \n, \r and \t, so that one row stays one line with
** its fields intact and aligned. A
** backslash itself is not escaped, so a string that contains the two
** characters \| prints like one that contains |. A column without a name is
** called colN (N counts from 1).
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rf_rt_data.h"

#define OUTBUF ((size_t)1 << 20)

typedef struct wbuf {
    char *p;
    size_t len, cap;
    rf_rt_write_fn fn;
    void *ctx;
    int err;
} wbuf;

static void wsend(wbuf *b, const char *s, size_t n)
{
    if (!b->err && n && b->fn(b->ctx, s, (int64_t)n) != 0) b->err = 1;
}

static void wflush(wbuf *b)
{
    wsend(b, b->p, b->len);
    b->len = 0;
}

static inline void wput(wbuf *b, const char *s, size_t n)
{
    if (n > b->cap - b->len) {
        wflush(b);
        if (n > b->cap) {
            wsend(b, s, n);
            return;
        }
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static inline void wputc(wbuf *b, char c)
{
    if (b->len == b->cap) wflush(b);
    b->p[b->len++] = c;
}

static void wpad(wbuf *b, int64_t n)
{
    static const char sp[64] = "                                                               ";
    while (n > 0) {
        int64_t k = n < 63 ? n : 63;
        wput(b, sp, (size_t)k);
        n -= k;
    }
}

/* A TBL field's bytes that call for quoting (its delimiter, line ends). */
static inline int special(unsigned char c) { return c == '|' || c == '\n' || c == '\r'; }

/* A TABLE cell's bytes written as two characters: those, and a tab, which a
** terminal would widen to its next stop. */
static inline int escaped(unsigned char c) { return special(c) || c == '\t'; }

static void wstr(wbuf *b, const char *s, int64_t n)
{
    int64_t start = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!escaped((unsigned char)s[i])) continue;
        wput(b, s + start, (size_t)(i - start));
        wputc(b, '\\');
        wputc(b, s[i] == '|' ? '|' : s[i] == '\n' ? 'n' : s[i] == '\t' ? 't' : 'r');
        start = i + 1;
    }
    wput(b, s + start, (size_t)(n - start));
}

/* The columns a terminal gives code point u: 0 for combining marks and
** zero-width characters, 2 for East Asian wide and fullwidth characters and
** the emoji blocks (Unicode's East_Asian_Width W and F, in the ranges that
** matter), 1 for the rest. */
static int cp_width(uint32_t u)
{
    static const uint32_t zero[][2] = {{0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A},
                                       {0x064B, 0x065F}, {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E},
                                       {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x2028, 0x202E},
                                       {0x2060, 0x2064}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
                                       {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF}};
    static const uint32_t wide[][2] = {{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC},
                                       {0x23F0, 0x23F0}, {0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615},
                                       {0x2648, 0x2653}, {0x267F, 0x267F}, {0x2693, 0x2693}, {0x26A1, 0x26A1},
                                       {0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5}, {0x26CE, 0x26CE},
                                       {0x26D4, 0x26D4}, {0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5},
                                       {0x26FA, 0x26FA}, {0x26FD, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B},
                                       {0x2728, 0x2728}, {0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755},
                                       {0x2757, 0x2757}, {0x2795, 0x2797}, {0x27B0, 0x27B0}, {0x27BF, 0x27BF},
                                       {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55}, {0x2E80, 0x303E},
                                       {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},
                                       {0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19},
                                       {0xFE30, 0xFE6F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x16FE0, 0x16FE4},
                                       {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF},
                                       {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F320},
                                       {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C}, {0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA},
                                       {0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E},
                                       {0x1F440, 0x1F440}, {0x1F442, 0x1F4FC}, {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E},
                                       {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A}, {0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4},
                                       {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5}, {0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2},
                                       {0x1F6D5, 0x1F6D7}, {0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB},
                                       {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FAFF},
                                       {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD}};
    if (u < 0x300) return 1;
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
        if (u >= zero[i][0] && u <= zero[i][1]) return 0;
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        if (u >= wide[i][0] && u <= wide[i][1]) return 2;
    return 1;
}

/* Columns the escaped string takes on a terminal. */
static int64_t str_width(const char *s, int64_t n)
{
    int64_t w = 0;
    for (int64_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            w += 1 + escaped(c);
            i++;
            continue;
        }
        int len = rf_val_utf8_len(s + i, n - i);
        if (!len) { /* not UTF-8 (never from the loaders): a column a byte */
            w++;
            i++;
            continue;
        }
        uint32_t u = len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
        for (int k = 1; k < len; k++) u = (u << 6) | ((unsigned char)s[i + k] & 0x3Fu);
        w += cp_width(u);
        i += len;
    }
    return w;
}

/* A non-string cell as text in tmp (RF_VAL_FMT_MAX bytes); returns its length. */
static int cell(const rf_rt_rel *r, int32_t c, int64_t row, char *tmp)
{
    const void *col = r->cols[c];
    switch (r->types[c]) {
    case RF_TYPE_INT: return rf_val_write_int(tmp, ((const int64_t *)col)[row]);
    case RF_TYPE_DECIMAL: return rf_val_write_dec(tmp, ((const int64_t *)col)[row]);
    case RF_TYPE_DEC128: return rf_val_write_dec128(tmp, ((const rf_dec128 *)col)[row]);
    case RF_TYPE_FLOAT: return rf_val_write_float(tmp, ((const double *)col)[row]);
    case RF_TYPE_DATE: return rf_val_write_date(tmp, ((const int32_t *)col)[row]);
    case RF_TYPE_BOOL: return rf_val_write_bool(tmp, ((const uint8_t *)col)[row]);
    case RF_TYPE_STRING: break;
    }
    tmp[0] = 0;
    return 0;
}

static const char *cell_str(const rf_rt_rel *r, int32_t c, int64_t row, const rf_rt_dict *dict, int64_t *n, int *bad)
{
    const char *s = rf_rt_dict_str(dict, ((const uint32_t *)r->cols[c])[row], n);
    if (!s) {
        *bad = 1;
        *n = 0;
        return "";
    }
    return s;
}

static int right_aligned(rf_type t)
{
    return t == RF_TYPE_INT || t == RF_TYPE_DECIMAL || t == RF_TYPE_DEC128 || t == RF_TYPE_FLOAT;
}

static const char *colname(const char *const *names, int32_t c, char *tmp)
{
    if (names && names[c]) return names[c];
    snprintf(tmp, RF_VAL_FMT_MAX, "col%d", (int)c + 1);
    return tmp;
}

/* An RFC 4180 quoted field: s in quotes, each quote in it doubled. */
static void wquoted(wbuf *b, const char *s, int64_t n)
{
    wputc(b, '"');
    int64_t start = 0;
    for (int64_t i = 0; i < n; i++) {
        if (s[i] != '"') continue;
        wput(b, s + start, (size_t)(i + 1 - start)); /* through the quote, */
        start = i;                                    /* which is then written again */
    }
    wput(b, s + start, (size_t)(n - start));
    wputc(b, '"');
}

/* An RFC 4180 field: quoted when it holds a comma, quote, CR or LF (or
** must not vanish as an empty line), quotes doubled. */
static void wcsv(wbuf *b, const char *s, int64_t n, int quote_empty)
{
    int q = n == 0 && quote_empty;
    for (int64_t i = 0; i < n && !q; i++) {
        char c = s[i];
        q = c == ',' || c == '"' || c == '\r' || c == '\n';
    }
    if (q) wquoted(b, s, n);
    else wput(b, s, (size_t)n);
}

static void write_csv(const rf_rt_rel *r, const char *const *names, const rf_rt_dict *dict, wbuf *b, int *bad)
{
    char tmp[RF_VAL_FMT_MAX];
    int one = r->ncols == 1;
    for (int32_t c = 0; c < r->ncols; c++) {
        if (c) wputc(b, ',');
        const char *nm = colname(names, c, tmp);
        wcsv(b, nm, (int64_t)strlen(nm), one);
    }
    wputc(b, '\n');
    for (int64_t row = 0; row < r->nrows && !b->err; row++) {
        for (int32_t c = 0; c < r->ncols; c++) {
            if (c) wputc(b, ',');
            if (r->types[c] == RF_TYPE_STRING) {
                int64_t n;
                const char *s = cell_str(r, c, row, dict, &n, bad);
                wcsv(b, s, n, one);
            } else {
                /* numbers, dates and booleans never hold a comma or a quote */
                if (b->cap - b->len < RF_VAL_FMT_MAX) wflush(b);
                b->len += (size_t)cell(r, c, row, b->p + b->len);
            }
        }
        wputc(b, '\n');
    }
}

/* A TBL field: RFC 4180 quoted when it holds '|', CR or LF, or starts with
** a quote (which would open a quoted field when read back). */
static void wtbl(wbuf *b, const char *s, int64_t n)
{
    int q = n > 0 && s[0] == '"';
    for (int64_t i = 0; i < n && !q; i++) q = special((unsigned char)s[i]);
    if (q) wquoted(b, s, n);
    else wput(b, s, (size_t)n);
}

static void write_tbl(const rf_rt_rel *r, const char *const *names, const rf_rt_dict *dict, wbuf *b, int *bad)
{
    char tmp[RF_VAL_FMT_MAX];
    for (int32_t c = 0; c < r->ncols; c++) {
        if (c) wputc(b, '|');
        const char *nm = colname(names, c, tmp);
        wput(b, nm, strlen(nm));
    }
    wputc(b, '\n');
    for (int64_t row = 0; row < r->nrows && !b->err; row++) {
        for (int32_t c = 0; c < r->ncols; c++) {
            if (c) wputc(b, '|');
            if (r->types[c] == RF_TYPE_STRING) {
                int64_t n;
                const char *s = cell_str(r, c, row, dict, &n, bad);
                wtbl(b, s, n);
            } else {
                /* format straight into the buffer when it has room */
                if (b->cap - b->len < RF_VAL_FMT_MAX) wflush(b);
                b->len += (size_t)cell(r, c, row, b->p + b->len);
            }
        }
        wputc(b, '\n');
    }
}

static rf_status write_table(const rf_rt_rel *r, const char *const *names, const rf_rt_dict *dict, wbuf *b, int *bad)
{
    char tmp[RF_VAL_FMT_MAX];
    int32_t nc = r->ncols;
    int64_t *wd = calloc((size_t)nc + 1, sizeof *wd);
    if (!wd) return RF_ENOMEM;
    for (int32_t c = 0; c < nc; c++) {
        const char *nm = colname(names, c, tmp);
        wd[c] = str_width(nm, (int64_t)strlen(nm));
        for (int64_t row = 0; row < r->nrows; row++) {
            int64_t w;
            if (r->types[c] == RF_TYPE_STRING) {
                int64_t n;
                const char *s = cell_str(r, c, row, dict, &n, bad);
                w = str_width(s, n);
            } else {
                w = cell(r, c, row, tmp);
            }
            if (w > wd[c]) wd[c] = w;
        }
    }
    /* header and dashes */
    for (int32_t c = 0; c < nc; c++) {
        const char *nm = colname(names, c, tmp);
        int64_t w = str_width(nm, (int64_t)strlen(nm));
        if (c) wpad(b, 2);
        if (right_aligned(r->types[c])) wpad(b, wd[c] - w);
        wstr(b, nm, (int64_t)strlen(nm));
        if (!right_aligned(r->types[c]) && c + 1 < nc) wpad(b, wd[c] - w);
    }
    wputc(b, '\n');
    for (int32_t c = 0; c < nc; c++) {
        if (c) wpad(b, 2);
        for (int64_t i = 0; i < wd[c]; i++) wputc(b, '-');
    }
    wputc(b, '\n');
    for (int64_t row = 0; row < r->nrows && !b->err; row++) {
        for (int32_t c = 0; c < nc; c++) {
            if (c) wpad(b, 2);
            const char *s;
            int64_t n, w;
            if (r->types[c] == RF_TYPE_STRING) {
                s = cell_str(r, c, row, dict, &n, bad);
                w = str_width(s, n);
            } else {
                n = w = cell(r, c, row, tmp);
                s = tmp;
            }
            if (right_aligned(r->types[c])) wpad(b, wd[c] - w);
            if (r->types[c] == RF_TYPE_STRING)
                wstr(b, s, n);
            else
                wput(b, s, (size_t)n);
            if (!right_aligned(r->types[c]) && c + 1 < nc) wpad(b, wd[c] - w);
        }
        wputc(b, '\n');
    }
    free(wd);
    return RF_OK;
}

rf_status rf_rt_write_rel_to(const rf_rt_rel *r, const char *const *colnames, const rf_rt_dict *dict,
                             rf_rt_format format, rf_rt_write_fn fn, void *ctx)
{
    for (int32_t c = 0; c < r->ncols; c++) {
        if (r->types[c] == RF_TYPE_STRING && !dict && r->nrows > 0) return RF_EINTERNAL;
        if (r->nrows > 0 && !r->cols[c]) return RF_EINTERNAL;
    }
    wbuf b;
    memset(&b, 0, sizeof b);
    b.cap = OUTBUF;
    b.fn = fn;
    b.ctx = ctx;
    if (!(b.p = malloc(b.cap))) return RF_ENOMEM;
    int bad = 0;
    rf_status st = RF_OK;
    if (format == RF_RT_FORMAT_CSV)
        write_csv(r, colnames, dict, &b, &bad);
    else if (format == RF_RT_FORMAT_TBL)
        write_tbl(r, colnames, dict, &b, &bad);
    else
        st = write_table(r, colnames, dict, &b, &bad);
    wflush(&b);
    free(b.p);
    if (st) return st;
    if (b.err) return RF_EIO;
    return bad ? RF_EINTERNAL : RF_OK;
}

typedef struct file_sink {
    FILE *f;
    int err_no;
} file_sink;

static int file_write(void *ctx, const void *p, int64_t n)
{
    file_sink *s = ctx;
    errno = 0;
    if (fwrite(p, 1, (size_t)n, s->f) == (size_t)n) return 0;
    s->err_no = errno ? errno : EIO;
    return -1;
}

rf_status rf_rt_write_rel(const rf_rt_rel *r, const char *const *colnames, const rf_rt_dict *dict, rf_rt_format format,
                          FILE *out)
{
    file_sink s = {out, 0};
    rf_status st = rf_rt_write_rel_to(r, colnames, dict, format, file_write, &s);
    if (!st || st == RF_EIO) {
        errno = 0;
        if (fflush(out) != 0 || ferror(out)) {
            if (!s.err_no) s.err_no = errno ? errno : EIO;
            st = RF_EIO;
        }
    }
    if (st == RF_EIO) errno = s.err_no;
    return st;
}
