/*
** runtime/io/rf_load.c: parallel parsing of delimited text into columns.
** See rf_load.h for the format and the ownership of the results.
**
** The file is mapped (or read when it cannot be mapped: rf_load_file.c) and
** split at line boundaries into one chunk per thread. Three parallel phases:
**   1. count the lines of each chunk, so that every chunk knows its first
**      output row and its first line number before parsing;
**   2. parse each chunk straight into the final column arrays (strings go
**      to a per-chunk byte buffer, their offsets are chunk-relative);
** (the caller's thread takes chunk 0, and reports the progress of the
** first two from its own: chunks are equal parts of the file), then
**   3. gather the string bytes of every chunk into one array per column
**      (chunk 0's buffer is grown in place) and rebase the offsets.
** Two passes over the text cost less than growing and concatenating every
** fixed-width column, and keep peak memory at the size of the result.
** Every chunk stops after a few errors; the earliest ones of all chunks are
** reported, so the diagnostics, like the data, do not depend on the thread
** count. The hot paths parse ints, decimals and dates by hand and fall back
** to rf_value's parsers for anything unusual, which keeps one definition of
** what is valid: the fast path only ever accepts text that the rf_value
** parser accepts with the same value.
**
** Quotes (RFC 4180): phase 1 also looks for a '"' (block by block, while the
** text is in the cache). A file without one (dbgen's) is split at every '\n'
** and parsed by code that never looks for quotes, exactly as above. A file
** with one is split into records by a sequential quote-aware pass instead (a
** '\n' inside quotes does not end a record), which also picks the chunk
** boundaries; its parse stays parallel, by the quote-aware instance of the
** same parser.
*/
#include "rf_load.h"
#include "rf_load_file.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_ERRS 5              /* errors kept per chunk and reported in all */
#define MAX_THREADS 256
#define AUTO_CHUNK (8LL << 20)  /* automatic thread count: bytes per thread at least */
#define HINT_LINE_MAX (1 << 16) /* a first line longer than this gets no hints */

typedef struct load_err {
    int64_t line, col;
    char *msg;
} load_err;

typedef struct sbuf {
    char *p;
    int64_t len, cap;
} sbuf;

typedef struct job job;

typedef struct chunk {
    const job *job;
    const char *beg, *end; /* [beg, end): whole lines */
    int skip_first;        /* the header line is in this chunk */
    int64_t nl;            /* phase 1: '\n' count */
    int64_t rows;          /* phase 1: records */
    int has_quote;         /* phase 1: a '"' in [beg, end) */
    int64_t row0;          /* first output row */
    int64_t line0;         /* file line number of beg */
    sbuf *sb;              /* per column; used for string columns */
    int64_t *sbase;        /* per column: where sb lands in str_bytes */
    load_err errs[MAX_ERRS];
    int nerr;
    int oom;
} chunk;

struct job {
    const char *data;
    int64_t size;
    const rf_type *types;
    int32_t ncols;
    char delim;
    int fast;   /* the delimiter cannot occur inside a number or a date */
    int quoted; /* the file holds a '"': records may span lines, fields may be quoted */
    rf_rt_textcol *cols;
    int64_t *lines; /* quoted files: each row's first line */
    int64_t nrows;
    const rf_rt_load_opts *o; /* its progress callback, heard from chunk 0 */
    int nchunks;
};

/* Chunk 0's progress through a phase, as the whole file's (every chunk is
** about as large and runs at once); only the caller's thread reports. */
static void report(const chunk *c, const char *phase, const char *at)
{
    const job *j = c->job;
    if (c->beg != j->data || !j->o || !j->o->progress) return;
    int64_t done = (int64_t)(at - c->beg) * j->nchunks;
    j->o->progress(j->o->progress_ctx, phase, done < j->size ? done : j->size, j->size);
}

/* ---- errors --------------------------------------------------------- */

/* Records an error at the byte pos of the record that starts at ls on line
** 'line'; a quoted field may have carried the record over several lines. */
static void chunk_err_at(chunk *c, const char *ls, int64_t line, const char *pos, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void chunk_err_at(chunk *c, const char *ls, int64_t line, const char *pos, const char *fmt, ...)
{
    if (c->nerr >= MAX_ERRS) return;
    const char *bol = ls;
    for (const char *q = ls; q < pos && (q = memchr(q, '\n', (size_t)(pos - q))) != NULL; q++) {
        line++;
        bol = q + 1;
    }
    va_list ap;
    va_start(ap, fmt);
    char *msg = rf_vsprintf(fmt, ap);
    va_end(ap);
    if (!msg) {
        c->oom = 1;
        return;
    }
    c->errs[c->nerr].line = line;
    c->errs[c->nerr].col = (pos - bol) + 1;
    c->errs[c->nerr].msg = msg;
    c->nerr++;
}


static const char *type_article(rf_type t)
{
    switch (t) {
    case RF_TYPE_INT: return "an int";
    case RF_TYPE_FLOAT: return "a float";
    case RF_TYPE_DECIMAL:
    case RF_TYPE_DEC128: return "a decimal";
    case RF_TYPE_STRING: return "a string (UTF-8)";
    case RF_TYPE_BOOL: return "a boolean";
    case RF_TYPE_DATE: return "a date";
    }
    return "a value";
}

static void field_err(chunk *c, int64_t line, const char *ls, const char *f, int64_t n, rf_type t,
                      const rf_val_err *e)
{
    char q[RF_VAL_QUOTE_BUF];
    rf_val_quote(q, f, n);
    chunk_err_at(c, ls, line, f + e->off, "expected %s, found %s: %s", type_article(t), q, e->why);
}

/* ---- growable string bytes ------------------------------------------ */

static inline __attribute__((always_inline)) int sbuf_append(sbuf *s, const char *p, int64_t n)
{
    if (n == 0) return 0;
    if (s->len + n > s->cap) {
        int64_t ncap = s->cap ? s->cap : 65536;
        while (ncap < s->len + n) ncap *= 2;
        char *np = rf_realloc(s->p, (size_t)ncap);
        if (!np) return -1;
        s->p = np;
        s->cap = ncap;
    }
    memcpy(s->p + s->len, p, (size_t)n);
    s->len += n;
    return 0;
}

/* sbuf_append of a field of the text, which ends at limit: a short one (most
** are: names, flags, modes) is moved as 16 or 32 bytes at once, where the
** buffer has room and the text that many bytes, with no call. */
static inline __attribute__((always_inline)) int sbuf_append_field(sbuf *s, const char *p, int64_t n,
                                                                    const char *limit)
{
    if (n <= 32 && s->cap - s->len >= 32 && limit - p >= 32) {
        char *d = s->p + s->len;
        memcpy(d, p, 16);
        if (n > 16) memcpy(d + 16, p + 16, 16);
        s->len += n;
        return 0;
    }
    return sbuf_append(s, p, n);
}

/* ---- parsing one line ----------------------------------------------- */

static inline const char *field_end(const char *p, const char *le, char delim)
{
    const char *e = memchr(p, delim, (size_t)(le - p));
    return e ? e : le;
}

/* Finds the end of a string field and whether it holds any byte >= 0x80 or
** any NUL byte (then it needs a closer look), in one pass, 8 bytes at a time:
** most fields are short, where memchr's call overhead dominates, and pure
** ASCII without NULs needs no check. */
static inline const char *scan_string(const char *p, const char *le, char delim, int *suspect)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
    /* acc's high bits: a byte >= 0x80, or a zero byte ((w - ones) & ~w flags
    ** the lowest exactly, and one above only over a true one below it) */
    uint64_t acc = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t dm = ones * (unsigned char)delim;
    while (le - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t x = w ^ dm;
        /* the lowest flagged byte is exactly the first delimiter */
        uint64_t z = (x - ones) & ~x & highs;
        uint64_t sus = w | ((w - ones) & ~w);
        if (z) {
            int i = __builtin_ctzll(z) >> 3;
            if (i) acc |= sus & (~UINT64_C(0) >> (64 - 8 * i));
            *suspect = (acc & highs) != 0;
            return p + i;
        }
        acc |= sus;
        p += 8;
    }
#else
    (void)ones;
#endif
    while (p < le && *p != delim) {
        acc |= (unsigned char)*p | (*p ? 0 : 0x80);
        p++;
    }
    *suspect = (acc & highs) != 0;
    return p;
}

/* The closer look at a string field [f, f + n) that scan_string flagged:
** NUL bytes and invalid UTF-8 are errors. Returns 0, or -1 after recording one. */
__attribute__((noinline)) static int check_text(chunk *c, const char *ls, int64_t line, const char *f, int64_t n)
{
    const char *z = memchr(f, 0, (size_t)n);
    if (z) {
        chunk_err_at(c, ls, line, z, "a NUL byte in a string field: strings may not contain NUL bytes");
        return -1;
    }
    rf_val_err e;
    if (rf_val_check_utf8(f, n, &e) == RF_OK) return 0;
    char q[RF_VAL_QUOTE_BUF];
    rf_val_quote(q, f, n);
    chunk_err_at(c, ls, line, f + e.off, "expected %s, found %s: %s", type_article(RF_TYPE_STRING), q, e.why);
    return -1;
}

/* The end of the record that starts at p: its '\n' (or end), skipping quoted
** fields, in which '\n' is data; *inner counts those '\n'. A quote that is
** never closed runs to the end (*unclosed, when not NULL: that quote, else
** NULL). */
static const char *record_end(const char *p, const char *end, char delim, int64_t *inner, const char **unclosed)
{
    int at_start = 1;
    *inner = 0;
    if (unclosed) *unclosed = NULL;
    while (p < end) {
        char ch = *p;
        if (ch == '"' && at_start) {
            const char *q = p + 1;
            for (;;) {
                const char *cq = memchr(q, '"', (size_t)(end - q));
                if (!cq) cq = end;
                for (const char *n = q; (n = memchr(n, '\n', (size_t)(cq - n))) != NULL; n++) (*inner)++;
                if (cq == end) {
                    if (unclosed) *unclosed = p;
                    return end;
                }
                q = cq + 1;
                if (q < end && *q == '"') {
                    q++;
                    continue;
                }
                break;
            }
            p = q;
            at_start = 0;
            continue;
        }
        if (ch == '\n') return p;
        at_start = ch == delim;
        p++;
    }
    return end;
}

/* Days since 1970-01-01 of January 1st of each year 0..9999 and of the first
** of each month: a date is then two loads and two adds. */
static int32_t year_days[10000];
static pthread_once_t year_days_once = PTHREAD_ONCE_INIT;
static void year_days_init(void)
{
    for (int32_t y = 1; y < 10000; y++) year_days[y] = rf_val_days_from_civil(y, 1, 1);
}
static const int16_t month_days[2][13] = {
    {0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334},
    {0, 0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335}};
static const int8_t month_len[2][13] = {{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
                                        {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}};

static inline int is_dig(char c) { return (unsigned)(c - '0') < 10; }

static const int64_t SCALE[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};

/* Parses the quoted field at f (its opening '"') of the record [ls, le)
** as column k of output row 'row'. Returns the delimiter or le after it, or
** NULL after recording an error (or with c->oom set). Returning the position
** (not writing through a pointer) keeps parse_line's cursor in a register. */
__attribute__((noinline)) static const char *parse_quoted(chunk *c, int32_t k, int64_t row, const char *ls,
                                                          const char *le, int64_t line, const char *f)
{
    const job *j = c->job;
    const char *cs = f + 1, *q = cs;
    int doubled = 0;
    for (;;) {
        q = memchr(q, '"', (size_t)(le - q));
        if (!q) {
            chunk_err_at(c, ls, line, f, "unterminated quoted field: the '\"' opened here is never closed");
            return NULL;
        }
        if (q + 1 < le && q[1] == '"') {
            doubled = 1;
            q += 2;
            continue;
        }
        break;
    }
    const char *ce = q, *after = q + 1;
    if (after != le && *after != j->delim) {
        chunk_err_at(c, ls, line, after,
                     "unexpected character after the closing '\"' of a quoted field (a '\"' inside one is written '\"\"')");
        return NULL;
    }
    rf_rt_textcol *col = &j->cols[k];
    rf_type t = j->types[k];
    int64_t n = ce - cs;
    rf_val_err e;
    rf_status st = RF_OK;
    switch (t) {
    case RF_TYPE_STRING: {
        if (check_text(c, ls, line, cs, n)) return NULL;
        sbuf *s = &c->sb[k];
        col->str_off[row] = s->len;
        int fail = 0;
        if (!doubled) {
            fail = sbuf_append(s, cs, n);
        } else {
            /* each '""' is one '"': copy up to and including its first quote */
            for (const char *p = cs; p < ce && !fail;) {
                const char *dq = memchr(p, '"', (size_t)(ce - p));
                const char *stop = dq ? dq + 1 : ce;
                fail = sbuf_append(s, p, stop - p);
                p = dq ? dq + 2 : ce;
            }
        }
        if (fail) {
            c->oom = 1;
            return NULL;
        }
        return after;
    }
    case RF_TYPE_INT: st = rf_val_parse_int(cs, n, &((int64_t *)col->data)[row], &e); break;
    case RF_TYPE_DECIMAL: st = rf_val_parse_decimal(cs, n, &((int64_t *)col->data)[row], &e); break;
    case RF_TYPE_DEC128: st = rf_val_parse_dec128(cs, n, &((rf_dec128 *)col->data)[row], &e); break;
    case RF_TYPE_DATE: st = rf_val_parse_date(cs, n, &((int32_t *)col->data)[row], &e); break;
    case RF_TYPE_BOOL: st = rf_val_parse_bool(cs, n, &((uint8_t *)col->data)[row], &e); break;
    case RF_TYPE_FLOAT:
        st = rf_val_parse_float(cs, n, &((double *)col->data)[row], &e);
        if (st == RF_ENOMEM) {
            c->oom = 1;
            return NULL;
        }
        break;
    }
    if (st == RF_OK) return after;
    field_err(c, line, ls, cs, n, t, &e);
    return NULL;
}

/* Parses the record [ls, le) into output row 'row'. Returns 0, or -1 after
** recording an error (or on exhausted memory, with c->oom set). */
static inline __attribute__((always_inline)) int parse_line(chunk *c, const char *ls, const char *le, int64_t row,
                                                            int64_t line, const int quoted)
{
    const job *j = c->job;
    const char delim = j->delim;
    const int32_t ncols = j->ncols;
    const char *p = ls;
    rf_val_err e;

    if (ls == le && !(ncols == 1 && j->types[0] == RF_TYPE_STRING)) {
        chunk_err_at(c, ls, line, ls, "missing fields: the line is empty (expected %d field%s)", (int)ncols,
                  ncols == 1 ? "" : "s");
        return -1;
    }
    for (int32_t k = 0; k < ncols; k++) {
        rf_rt_textcol *col = &j->cols[k];
        rf_type t = j->types[k];
        if (k > 0) {
            if (p == le) goto missing;
            p++; /* the delimiter: every field parser below stops at one or at le */
        }
        const char *f = p;
        if (f == le && k > 0 && t != RF_TYPE_STRING) goto missing;
        if (quoted && f < le && *f == '"') {
            if (!(p = parse_quoted(c, k, row, ls, le, line, f))) return -1;
            continue;
        }
        switch (t) {
        case RF_TYPE_INT: {
            if (j->fast) {
                const char *q = p;
                int neg = q < le && *q == '-';
                q += neg;
                const char *ds = q;
                uint64_t v = 0;
                /* 18 digits cannot overflow; longer numbers take the slow path */
                while (q < le && is_dig(*q) && q - ds < 18) v = v * 10 + (uint64_t)(*q++ - '0');
                if (q > ds && (q == le || *q == delim)) {
                    ((int64_t *)col->data)[row] = neg ? -(int64_t)v : (int64_t)v;
                    p = q;
                    break;
                }
            }
            const char *fe = field_end(f, le, delim);
            int64_t v;
            if (rf_val_parse_int(f, fe - f, &v, &e) != RF_OK) goto bad;
            ((int64_t *)col->data)[row] = v;
            p = fe;
            break;
        }
        case RF_TYPE_DECIMAL: {
            if (j->fast) {
                const char *q = p;
                int neg = q < le && *q == '-';
                q += neg;
                const char *ds = q;
                int64_t ip = 0, fp = 0;
                /* 12 integer digits keep ip * 10^6 + fp below 2^63 */
                while (q < le && is_dig(*q) && q - ds < 12) ip = ip * 10 + (*q++ - '0');
                if (q > ds) {
                    if (q < le && *q == '.') {
                        const char *fs = ++q;
                        while (q < le && is_dig(*q) && q - fs < 6) fp = fp * 10 + (*q++ - '0');
                        fp *= SCALE[q - fs];
                    }
                    if (q == le || *q == delim) {
                        int64_t v = ip * RF_DEC_ONE + fp;
                        ((int64_t *)col->data)[row] = neg ? -v : v;
                        p = q;
                        break;
                    }
                }
            }
            const char *fe = field_end(f, le, delim);
            int64_t v;
            if (rf_val_parse_decimal(f, fe - f, &v, &e) != RF_OK) goto bad;
            ((int64_t *)col->data)[row] = v;
            p = fe;
            break;
        }
        case RF_TYPE_DATE: {
            if (j->fast && le - p >= 10 && (le - p == 10 || p[10] == delim) && p[4] == '-' &&
                p[7] == '-' && is_dig(p[0]) && is_dig(p[1]) && is_dig(p[2]) && is_dig(p[3]) &&
                is_dig(p[5]) && is_dig(p[6]) && is_dig(p[8]) && is_dig(p[9])) {
                int32_t y = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0');
                int32_t m = (p[5] - '0') * 10 + (p[6] - '0');
                int32_t d = (p[8] - '0') * 10 + (p[9] - '0');
                /* unsigned (y is 0..9999): the compiler's multiply, not a
                ** division per date; and the centuries only every 4th year */
                uint32_t uy = (uint32_t)y;
                int leap = (uy & 3) == 0 && (uy % 100 != 0 || uy % 400 == 0);
                if (y >= 1 && m >= 1 && m <= 12 && d >= 1 && d <= month_len[leap][m]) {
                    ((int32_t *)col->data)[row] = year_days[y] + month_days[leap][m] + d - 1;
                    p += 10;
                    break;
                }
            }
            const char *fe = field_end(f, le, delim);
            int32_t v;
            if (rf_val_parse_date(f, fe - f, &v, &e) != RF_OK) goto bad;
            ((int32_t *)col->data)[row] = v;
            p = fe;
            break;
        }
        case RF_TYPE_FLOAT: {
            const char *fe = field_end(f, le, delim);
            double v;
            rf_status st = rf_val_parse_float(f, fe - f, &v, &e);
            if (st == RF_ENOMEM) {
                c->oom = 1;
                return -1;
            }
            if (st != RF_OK) goto bad;
            ((double *)col->data)[row] = v;
            p = fe;
            break;
        }
        case RF_TYPE_BOOL: {
            const char *fe = field_end(f, le, delim);
            uint8_t v;
            if (rf_val_parse_bool(f, fe - f, &v, &e) != RF_OK) goto bad;
            ((uint8_t *)col->data)[row] = v;
            p = fe;
            break;
        }
        case RF_TYPE_DEC128: {
            const char *fe = field_end(f, le, delim);
            rf_dec128 v;
            if (rf_val_parse_dec128(f, fe - f, &v, &e) != RF_OK) goto bad;
            memcpy((char *)col->data + row * 16, &v, sizeof v);
            p = fe;
            break;
        }
        case RF_TYPE_STRING: {
            int suspect;
            const char *fe = scan_string(f, le, delim, &suspect);
            if (suspect && check_text(c, ls, line, f, fe - f)) return -1;
            sbuf *s = &c->sb[k];
            col->str_off[row] = s->len;
            if (sbuf_append_field(s, f, fe - f, j->data + j->size)) {
                c->oom = 1;
                return -1;
            }
            p = fe;
            break;
        }
        default:
            chunk_err_at(c, ls, line, ls, "internal error: unknown column type %d", (int)t);
            return -1;
        bad:
            field_err(c, line, ls, f, field_end(f, le, delim) - f, t, &e);
            return -1;
        missing:
            chunk_err_at(c, ls, line, le, "missing field %d (expected %d field%s)", (int)k + 1,
                      (int)ncols, ncols == 1 ? "" : "s");
            return -1;
        }
    }
    /* p is at le or at a delimiter; one delimiter right before le is dbgen's */
    if (p != le && p + 1 != le) {
        const char *r = p + 1;
        int64_t extra = 1; /* the field at r */
        for (const char *q = r;;) {
            if (quoted && *q == '"') {
                /* a quoted field: its delimiters are data */
                for (q++; q < le; q++) {
                    if (*q != '"') continue;
                    if (q + 1 < le && q[1] == '"') {
                        q++;
                        continue;
                    }
                    q++;
                    break;
                }
            }
            const char *dq = memchr(q, delim, (size_t)(le - q));
            if (!dq || dq + 1 == le) break; /* the last field, or dbgen's trailing delimiter */
            q = dq + 1;
            extra++;
        }
        chunk_err_at(c, ls, line, r, "extra field(s): found %lld fields, expected %d",
                     (long long)(ncols + extra), (int)ncols);
        return -1;
    }
    return 0;
}

/* ---- hints for a first line that does not parse -------------------- */

/* From the record start p: sets *le to its end (without a '\r' before the
** '\n') and returns the next record's start (end if none). */
static const char *next_record(const char *p, const char *end, char delim, int quoted, const char **le)
{
    int64_t inner;
    const char *nl = quoted ? record_end(p, end, delim, &inner, NULL) : memchr(p, '\n', (size_t)(end - p));
    if (!nl) nl = end;
    const char *e = nl;
    if (e > p && e[-1] == '\r') e--;
    *le = e;
    return nl < end ? nl + 1 : end;
}

/* Does the record [ls, le) parse as a row of j's types with delimiter d? */
static int parses_with(const job *j, char d, const char *ls, const char *le)
{
    job sj = *j;
    sj.delim = d;
    sj.quoted = 1; /* quote-aware parsing of one record is right for every file */
    sj.lines = NULL;
    sj.fast = !memchr("0123456789+-.", d, 13);
    sj.cols = rf_calloc((size_t)j->ncols, sizeof *sj.cols);
    int64_t *slots = rf_calloc((size_t)j->ncols + 1, sizeof *slots);
    chunk sc;
    memset(&sc, 0, sizeof sc);
    sc.job = &sj;
    sc.sb = rf_calloc((size_t)j->ncols, sizeof *sc.sb);
    int ok = 0;
    if (sj.cols && slots && sc.sb) {
        for (int32_t k = 0; k < j->ncols; k++) {
            sj.cols[k].type = j->types[k];
            sj.cols[k].data = &slots[k];
            sj.cols[k].str_off = &slots[k];
        }
        ok = parse_line(&sc, ls, le, 0, 1, 1) == 0 && !sc.oom;
    }
    for (int k = 0; k < sc.nerr; k++) free(sc.errs[k].msg);
    for (int32_t k = 0; sc.sb && k < j->ncols; k++) free(sc.sb[k].p);
    free(sc.sb);
    free(slots);
    free(sj.cols);
    return ok;
}

static int name_like(const char *s, const char *e)
{
    if (s == e || !(*s == '_' || (unsigned)((*s | 0x20) - 'a') < 26u)) return 0;
    for (; s < e; s++) {
        unsigned char ch = (unsigned char)*s;
        if (!(ch == '_' || ch == ' ' || ch == '-' || ch == '.' || ch == ':' || (unsigned)((ch | 0x20) - 'a') < 26u || is_dig((char)ch)))
            return 0;
    }
    return 1;
}

/* A word that spells a value in other systems' text (inf, nan, TRUE,
** null): a field holding one is a value this loader does not take, not a
** column's name, so it makes no header of a line. */
static int value_word(const char *s, const char *e)
{
    static const char *const words[] = {"inf", "infinity", "nan", "true", "false", "null"};
    size_t n = (size_t)(e - s);
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
        if (strlen(words[w]) == n && !strncasecmp(s, words[w], n)) return 1;
    return 0;
}

static int value_parses(rf_type t, const char *s, int64_t n)
{
    int64_t i;
    int32_t dt;
    double f;
    uint8_t b;
    switch (t) {
    case RF_TYPE_INT: return rf_val_parse_int(s, n, &i, NULL) == RF_OK;
    case RF_TYPE_DECIMAL: return rf_val_parse_decimal(s, n, &i, NULL) == RF_OK;
    case RF_TYPE_DEC128: {
        rf_dec128 w;
        return rf_val_parse_dec128(s, n, &w, NULL) == RF_OK;
    }
    case RF_TYPE_DATE: return rf_val_parse_date(s, n, &dt, NULL) == RF_OK;
    case RF_TYPE_FLOAT: return rf_val_parse_float(s, n, &f, NULL) == RF_OK;
    case RF_TYPE_BOOL: return rf_val_parse_bool(s, n, &b, NULL) == RF_OK;
    case RF_TYPE_STRING: return 1;
    }
    return 0;
}

/* Is [ls, le) split by d a header: one name per column, where at least one
** column that is not a string cannot read its name? */
static int header_like(const job *j, char d, const char *ls, const char *le)
{
    int32_t k = 0;
    int names_fail = 0;
    for (const char *p = ls;;) {
        const char *fs, *fe;
        if (k == j->ncols) return 0;
        if (p < le && *p == '"') {
            fs = p + 1;
            fe = memchr(fs, '"', (size_t)(le - fs));
            if (!fe) return 0;
            p = fe + 1;
        } else {
            int64_t left = le - p;
            if (left < 0) return 0;
            fs = p;
            fe = memchr(p, d, (size_t)left);
            if (!fe) fe = le;
            p = fe;
        }
        if (!name_like(fs, fe) || value_word(fs, fe)) return 0;
        if (!value_parses(j->types[k], fs, fe - fs)) names_fail = 1;
        k++;
        if (p == le) break;
        if (*p != d || ++p == le) break; /* something after a quoted name, or a trailing delimiter */
    }
    return k == j->ncols && names_fail;
}

static const char *delim_word(char d)
{
    switch (d) {
    case ',': return "comma";
    case '\t': return "tab";
    case ';': return "semicolon";
    default: return "'|'";
    }
}

/* "hint: ..." lines for the first record when it failed to parse on line
** err_line with j's delimiter, or NULL: it parses with another common
** delimiter, or it looks like a header (and the record after it parses). */
static char *first_line_hint(const job *j, int header, const char *pred, int64_t err_line)
{
    const char *end = j->data + j->size;
    const char cands[5] = {j->delim, ',', '|', '\t', ';'};
    const char *pn = pred ? pred : "PREDICATE";
    for (int ci = 0; ci < 5; ci++) {
        char d = cands[ci];
        if (ci > 0 && d == j->delim) continue;
        const char *p = j->data, *ls, *le, *le2 = NULL;
        if (header) {
            if (p >= end) return NULL;
            p = next_record(p, end, d, 1, &le);
        }
        if (p >= end) return NULL;
        ls = p;
        p = next_record(p, end, d, 1, &le);
        if (ci == 0) {
            /* the error must be on the first record's (first) line */
            int64_t line = 1;
            for (const char *q = j->data; q < ls && (q = memchr(q, '\n', (size_t)(ls - q))) != NULL; q++) line++;
            if (line != err_line) return NULL;
        }
        if (le - ls > HINT_LINE_MAX) return NULL;
        const char *ls2 = p;
        if (ls2 < end) next_record(ls2, end, d, 1, &le2);
        char lit[3] = {d, 0, 0};
        if (d == '\t') memcpy(lit, "\\t", 3);
        if (ci > 0 && parses_with(j, d, ls, le))
            return rf_sprintf("hint: the file looks %s-separated; add lang:input:delimiter[`%s] = \"%s\".",
                              delim_word(d), pn, lit);
        if (!header && header_like(j, d, ls, le) && (ls2 >= end || parses_with(j, d, ls2, le2))) {
            if (ci == 0) return rf_sprintf("hint: the first line looks like a header; add lang:input:header[`%s] = true.", pn);
            return rf_sprintf("hint: the file looks %s-separated; add lang:input:delimiter[`%s] = \"%s\".\n"
                              "hint: the first line looks like a header; add lang:input:header[`%s] = true.",
                              delim_word(d), pn, lit, pn);
        }
    }
    return NULL;
}

/* ---- the phases ----------------------------------------------------- */

static void *phase_count(void *arg)
{
    chunk *c = arg;
    const job *j = c->job;
    int64_t nl = 0;
    int quote = 0;
    /* blocks of 64 KiB: the search for '"' reads what the count just read */
    for (const char *b = c->beg; b < c->end;) {
        const char *be = c->end - b > 65536 ? b + 65536 : c->end;
        const char *p = b;
        while (p < be && (p = memchr(p, '\n', (size_t)(be - p))) != NULL) {
            nl++;
            p++;
        }
        if (!quote) quote = memchr(b, '"', (size_t)(be - b)) != NULL;
        b = be;
        if (((b - c->beg) & ((1 << 20) - 1)) == 0) report(c, "reading", b);
    }
    c->has_quote = quote;
    c->nl = nl;
    c->rows = nl;
    if (c->end == j->data + j->size && c->end > c->beg && c->end[-1] != '\n') c->rows++;
    if (c->skip_first && c->rows > 0) c->rows--;
    return NULL;
}

/* Quoted files, after split_records: the '\n' count of each chunk. */
static void *phase_newlines(void *arg)
{
    chunk *c = arg;
    int64_t nl = 0;
    for (const char *p = c->beg; p < c->end && (p = memchr(p, '\n', (size_t)(c->end - p))) != NULL; p++) nl++;
    c->nl = nl;
    return NULL;
}

/* Quoted files: chunk boundaries at record starts (the first at or after
** i * size / n, chunk 0 holding at least the first record) and each chunk's
** record count, in one sequential quote-aware pass. */
static void split_records(const job *j, chunk *cs, int n)
{
    const char *p = j->data, *end = j->data + j->size;
    for (int i = 0; i < n; i++) {
        const char *target = i == n - 1 ? end : j->data + (int64_t)((rf_dec128)j->size * (i + 1) / n);
        int64_t rows = 0, inner;
        cs[i].beg = p;
        while (p < end && (p < target || (i == 0 && rows == 0))) {
            const char *re = record_end(p, end, j->delim, &inner, NULL);
            rows++;
            p = re < end ? re + 1 : end;
        }
        cs[i].end = p;
        cs[i].rows = rows;
        if (cs[i].skip_first && cs[i].rows > 0) cs[i].rows--;
    }
}

/* The parse of one chunk; quoted is a constant in each caller, so that the
** loop over dbgen's lines carries nothing of the quoted one. */
static inline __attribute__((always_inline)) void parse_chunk(chunk *c, const int quoted)
{
    const char *p = c->beg, *end = c->end;
    const char delim = c->job->delim;
    int64_t line = c->line0, row = c->row0, last = c->row0 + c->rows, inner = 0;
    if (c->skip_first && p < end) {
        const char *open = NULL;
        const char *nl = quoted ? record_end(p, end, delim, &inner, &open) : memchr(p, '\n', (size_t)(end - p));
        /* a header whose quote never closes would take the whole file
        ** with it: an error, as in any other line */
        if (open) {
            chunk_err_at(c, p, line, open, "unterminated quoted field: the '\"' opened here is never closed");
            return;
        }
        p = nl && nl < end ? nl + 1 : end;
        line += 1 + inner;
    }
    while (p < end && row < last) {
        const char *nl = quoted ? record_end(p, end, delim, &inner, NULL) : memchr(p, '\n', (size_t)(end - p));
        if (nl == end) nl = NULL;
        const char *le = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        if (le > p && le[-1] == '\r') le--;
        if (quoted) c->job->lines[row] = line;
        if (parse_line(c, p, le, row, line, quoted)) {
            if (c->oom || c->nerr >= MAX_ERRS) break;
        }
        row++;
        line += 1 + inner;
        p = next;
        if ((row & 0xffff) == 0) report(c, "parsing", p);
    }
}

static void *phase_parse(void *arg)
{
    chunk *c = arg;
    if (c->job->quoted)
        parse_chunk(c, 1);
    else
        parse_chunk(c, 0);
    return NULL;
}

static void *phase_strings(void *arg)
{
    chunk *c = arg;
    const job *j = c->job;
    for (int32_t k = 0; k < j->ncols; k++) {
        if (j->types[k] != RF_TYPE_STRING) continue;
        rf_rt_textcol *col = &j->cols[k];
        int64_t base = c->sbase[k];
        if (c->sb[k].len) memcpy(col->str_bytes + base, c->sb[k].p, (size_t)c->sb[k].len);
        if (base == 0) continue;
        int64_t *off = col->str_off + c->row0;
        for (int64_t r = 0; r < c->rows; r++) off[r] += base;
    }
    return NULL;
}

/* Runs fn on every chunk, one thread each; the caller's thread takes chunk 0,
** and any chunk whose thread cannot be started. */
static void run_all(chunk *cs, int n, void *(*fn)(void *))
{
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS];
    for (int i = 1; i < n; i++) started[i] = pthread_create(&tid[i], NULL, fn, &cs[i]) == 0;
    fn(&cs[0]);
    for (int i = 1; i < n; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else
            fn(&cs[i]);
    }
}

/* ---- the loader ----------------------------------------------------- */

void rf_rt_texttable_free(rf_rt_texttable *t)
{
    if (!t) return;
    for (int32_t k = 0; t->cols && k < t->ncols; k++) {
        free(t->cols[k].data);
        free(t->cols[k].str_off);
        free(t->cols[k].str_bytes);
    }
    free(t->cols);
    free(t->lines);
    memset(t, 0, sizeof *t);
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

static rf_status load(const char *path, const char *mem, int64_t memsize, int64_t first_line, const rf_type *types,
                      int32_t ncols, const rf_rt_load_opts *o, rf_rt_texttable *out, rf_diags *d);

rf_status rf_rt_load_text(const char *path, const rf_type *types, int32_t ncols,
                          const rf_rt_load_opts *o, rf_rt_texttable *out, rf_diags *d)
{
    return load(path, NULL, 0, 1, types, ncols, o, out, d);
}

rf_status rf_rt_load_mem(const char *name, const char *data, int64_t size, int64_t first_line, const rf_type *types,
                         int32_t ncols, const rf_rt_load_opts *o, rf_rt_texttable *out, rf_diags *d)
{
    return load(name, data ? data : "", data ? size : 0, first_line, types, ncols, o, out, d);
}

static rf_status load(const char *path, const char *mem, int64_t memsize, int64_t first_line, const rf_type *types,
                      int32_t ncols, const rf_rt_load_opts *o, rf_rt_texttable *out, rf_diags *d)
{
    rf_diags scratch;
    rf_diags_init(&scratch);
    if (!d) d = &scratch; /* keeps the code below simple; freed at the end */
    memset(out, 0, sizeof *out);
    rf_loc floc = {path, 0, 0};
    char delim = o && o->delimiter ? o->delimiter : '|';
    int header = o ? o->header : 0;
    int threads = o ? o->threads : 0;
    rf_status st = RF_OK;

    if (ncols < 1 || !types) {
        rf_internal_error(d, floc, "a table needs at least one column");
        st = RF_EINTERNAL;
        goto done_nofile;
    }
    if (delim == '\n' || delim == '\r' || delim == '"') {
        rf_error(d, floc, "the delimiter cannot be a line end or '\"' (which quotes fields)");
        st = RF_EUSAGE;
        goto done_nofile;
    }
    for (int32_t k = 0; k < ncols; k++) {
        if ((unsigned)types[k] > RF_TYPE_DATE) {
            rf_internal_error(d, floc, "unknown type of column %d", (int)k + 1);
            st = RF_EINTERNAL;
            goto done_nofile;
        }
    }

    pthread_once(&year_days_once, year_days_init);
    rf_rt_mapped m;
    if (mem) {
        m.data = (char *)mem; /* only read */
        m.size = memsize;
        m.is_mmap = -1;       /* not ours to release */
    } else {
        st = rf_rt_file_map(path, o, &m, d);
        if (st != RF_OK) goto done_nofile;
    }

    job j = {.data = m.data, .size = m.size, .types = types, .ncols = ncols, .delim = delim, .o = o};
    /* a UTF-8 byte order mark (some editors and spreadsheets write one) at
    ** the file's start is no part of the first field */
    if (first_line == 1 && j.size >= 3 && memcmp(j.data, "\xEF\xBB\xBF", 3) == 0) {
        j.data += 3;
        j.size -= 3;
    }
    j.fast = !memchr("0123456789+-.", delim, 13);

    int n;
    if (threads > 0) {
        n = threads > MAX_THREADS ? MAX_THREADS : threads;
    } else {
        int64_t by_size = j.size / AUTO_CHUNK + 1;
        n = online_cpus();
        if (by_size < n) n = (int)by_size;
    }
    j.nchunks = n;
    chunk *cs = rf_calloc((size_t)n, sizeof *cs);
    j.cols = rf_calloc((size_t)ncols, sizeof *j.cols);
    if (!cs || !j.cols) goto oom;

    /* chunk boundaries: the first line start at or after i * size / n */
    {
        const char *prev = j.data;
        for (int i = 0; i < n; i++) {
            const char *b = prev;
            if (i > 0) {
                int64_t nominal = (int64_t)((rf_dec128)j.size * i / n);
                const char *s = j.data + (nominal > 0 ? nominal - 1 : 0);
                if (s < prev) s = prev;
                const char *nl = s < j.data + j.size ? memchr(s, '\n', (size_t)(j.data + j.size - s)) : NULL;
                b = nl ? nl + 1 : j.data + j.size;
            }
            cs[i].beg = b;
            if (i > 0) cs[i - 1].end = b;
            prev = b;
        }
        cs[n - 1].end = j.data + j.size;
        for (int i = 0; i < n; i++) cs[i].job = &j;
        cs[0].skip_first = header != 0;
    }

    run_all(cs, n, phase_count);
    for (int i = 0; i < n; i++) j.quoted |= cs[i].has_quote;
    if (j.quoted) {
        split_records(&j, cs, n);
        run_all(cs, n, phase_newlines);
    }
    {
        int64_t rows = 0, line = first_line;
        for (int i = 0; i < n; i++) {
            cs[i].row0 = rows;
            cs[i].line0 = line;
            rows += cs[i].rows;
            line += cs[i].nl;
        }
        j.nrows = rows;
    }

    for (int32_t k = 0; k < ncols; k++) {
        rf_rt_textcol *col = &j.cols[k];
        col->type = types[k];
        if (types[k] == RF_TYPE_STRING) {
            col->str_off = rf_malloc((size_t)(j.nrows + 1) * sizeof(int64_t));
            if (!col->str_off) goto oom;
        } else {
            col->data = rf_malloc((size_t)j.nrows * (size_t)rf_val_type_size(types[k]));
            if (!col->data) goto oom;
        }
    }
    if (j.quoted && !(j.lines = rf_malloc((size_t)(j.nrows + 1) * sizeof *j.lines))) goto oom;
    for (int i = 0; i < n; i++) {
        cs[i].sb = rf_calloc((size_t)ncols, sizeof(sbuf));
        cs[i].sbase = rf_calloc((size_t)ncols, sizeof(int64_t));
        if (!cs[i].sb || !cs[i].sbase) goto oom;
    }

    run_all(cs, n, phase_parse);

    /* a file cut short under its mapping reads as NUL bytes past its new
    ** end (rf_rt_map_guard_add): that, not a NUL byte, is the error */
    if (rf_rt_map_guard_shrunk(j.data)) {
        rf_error(d, rf_mkloc(path, 0, 0),
                 "the file was cut short while it was read: another process truncated or rewrote it");
        st = RF_EUSER;
        goto fail;
    }

    {
        int any_oom = 0, nerr = 0;
        for (int i = 0; i < n; i++) any_oom |= cs[i].oom;
        /* a chunk that ran out of memory stopped early, so its errors would
        ** depend on the thread count: report only the exhausted memory */
        if (any_oom) goto oom;
        /* a first line that would parse with another delimiter, or is a
        ** header: one error, with the hint, instead of one per line */
        const load_err *e0 = NULL;
        for (int i = 0; i < n && !e0; i++)
            if (cs[i].nerr) e0 = &cs[i].errs[0];
        char *hint = e0 ? first_line_hint(&j, header, o ? o->pred : NULL, e0->line) : NULL;
        if (hint) {
            rf_loc loc = {path, (int32_t)e0->line, (int32_t)e0->col};
            if (e0->col > INT32_MAX) loc.col = 0;
            rf_error(d, loc, "%s\n%s", e0->msg, hint);
            free(hint);
            nerr = MAX_ERRS;
        }
        /* chunks are in file order and each chunk's errors in line order */
        for (int i = 0; i < n && nerr < MAX_ERRS; i++) {
            for (int k = 0; k < cs[i].nerr && nerr < MAX_ERRS; k++, nerr++) {
                load_err *e = &cs[i].errs[k];
                rf_loc loc = {path, (int32_t)e->line, (int32_t)e->col};
                if (e->line > INT32_MAX || e->col > INT32_MAX) {
                    loc.line = loc.col = 0;
                    rf_error(d, loc, "line %lld, column %lld: %s", (long long)e->line, (long long)e->col, e->msg);
                } else {
                    rf_error(d, loc, "%s", e->msg);
                }
            }
        }
        if (nerr || e0) {
            st = RF_EUSER;
            goto fail;
        }
    }

    /* phase 3: one string array per column */
    for (int32_t k = 0; k < ncols; k++) {
        if (types[k] != RF_TYPE_STRING) continue;
        rf_rt_textcol *col = &j.cols[k];
        int64_t total = 0;
        for (int i = 0; i < n; i++) total += cs[i].sb[k].len;
        col->str_off[j.nrows] = total;
        /* Chunk 0's buffer grows into the column's array (realloc of a large
        ** block remaps pages instead of copying), so only the later chunks'
        ** bytes are copied. */
        char *sb0 = rf_realloc(cs[0].sb[k].p, (size_t)total + 1);
        if (!sb0) goto oom;
        col->str_bytes = sb0;
        col->str_bytes[total] = 0;
        cs[0].sb[k].p = NULL;
        int64_t base = cs[0].sb[k].len;
        cs[0].sb[k].len = 0; /* nothing left to copy; its offsets need no rebasing */
        for (int i = 1; i < n; i++) {
            cs[i].sbase[k] = base;
            base += cs[i].sb[k].len;
        }
    }
    run_all(cs, n, phase_strings);

    out->nrows = j.nrows;
    out->ncols = ncols;
    out->nlines = j.size > 0 && j.data[j.size - 1] != '\n';
    for (int i = 0; i < n; i++) out->nlines += cs[i].nl;
    out->cols = j.cols;
    out->lines = j.lines;
    j.cols = NULL;
    j.lines = NULL;
    st = RF_OK;
    goto done;

oom:
    rf_error(d, floc, "out of memory loading the file");
    st = RF_ENOMEM;
fail:
    if (j.cols) {
        rf_rt_texttable t = {0, ncols, j.cols, NULL, 0};
        rf_rt_texttable_free(&t);
        j.cols = NULL;
    }
done:
    free(j.lines);
    if (cs) {
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < cs[i].nerr; k++) free(cs[i].errs[k].msg);
            if (cs[i].sb)
                for (int32_t k = 0; k < ncols; k++) free(cs[i].sb[k].p);
            free(cs[i].sb);
            free(cs[i].sbase);
        }
        free(cs);
    }
    rf_rt_file_unmap(&m);
done_nofile:
    rf_diags_free(&scratch);
    return st;
}
