/*
** runtime/io/rf_load.c: parallel parsing of delimited text into columns.
** See rf_load.h for the format and the ownership of the results.
**
** The file is mapped (or read when it cannot be mapped) and split at line
** boundaries into one chunk per thread. Three parallel phases:
**   1. count the lines of each chunk, so that every chunk knows its first
**      output row and its first line number before parsing;
**   2. parse each chunk straight into the final column arrays (strings go
**      to a per-chunk byte buffer, their offsets are chunk-relative);
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
*/
#include "rf_load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ERRS 5              /* errors kept per chunk and reported in all */
#define MAX_THREADS 256
#define AUTO_CHUNK (8LL << 20)  /* automatic thread count: bytes per thread at least */
#define QUOTE_MAX 40            /* characters of a bad field shown in a message */

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
    int fast; /* the delimiter cannot occur inside a number or a date */
    rf_rt_textcol *cols;
    int64_t nrows;
};

/* ---- errors --------------------------------------------------------- */

static void chunk_err(chunk *c, int64_t line, int64_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void chunk_err(chunk *c, int64_t line, int64_t col, const char *fmt, ...)
{
    if (c->nerr >= MAX_ERRS) return;
    va_list ap;
    va_start(ap, fmt);
    char *msg = rf_vsprintf(fmt, ap);
    va_end(ap);
    if (!msg) {
        c->oom = 1;
        return;
    }
    c->errs[c->nerr].line = line;
    c->errs[c->nerr].col = col;
    c->errs[c->nerr].msg = msg;
    c->nerr++;
}

/* Writes f as a C-like quoted string: long fields are cut, non-printable
** bytes and invalid UTF-8 are escaped, valid UTF-8 is kept. */
static void quote_field(char *dst, const char *f, int64_t n)
{
    static const char hex[] = "0123456789abcdef";
    int64_t i = 0, o = 0;
    int shown = 0;
    dst[o++] = '"';
    while (i < n) {
        if (shown++ == QUOTE_MAX) {
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
/* quote_field output bound: 2 quotes, QUOTE_MAX items of at most 4 bytes, "..." */
#define QUOTE_BUF (2 + 4 * QUOTE_MAX + 3 + 1)

static const char *type_article(rf_type t)
{
    switch (t) {
    case RF_TYPE_INT: return "an int";
    case RF_TYPE_FLOAT: return "a float";
    case RF_TYPE_DECIMAL: return "a decimal";
    case RF_TYPE_STRING: return "a string (UTF-8)";
    case RF_TYPE_BOOL: return "a boolean";
    case RF_TYPE_DATE: return "a date";
    }
    return "a value";
}

static void field_err(chunk *c, int64_t line, const char *ls, const char *f, int64_t n, rf_type t,
                      const rf_val_err *e)
{
    char q[QUOTE_BUF];
    quote_field(q, f, n);
    chunk_err(c, line, (f - ls) + e->off + 1, "expected %s, found %s: %s", type_article(t), q, e->why);
}

/* ---- growable string bytes ------------------------------------------ */

static int sbuf_append(sbuf *s, const char *p, int64_t n)
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

/* ---- parsing one line ----------------------------------------------- */

static inline const char *field_end(const char *p, const char *le, char delim)
{
    const char *e = memchr(p, delim, (size_t)(le - p));
    return e ? e : le;
}

/* Finds the end of a string field and whether it holds any byte >= 0x80, in
** one pass, 8 bytes at a time: most fields are short, where memchr's call
** overhead dominates, and pure ASCII needs no UTF-8 check. */
static inline const char *scan_string(const char *p, const char *le, char delim, int *nonascii)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
    uint64_t acc = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t dm = ones * (unsigned char)delim;
    while (le - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t x = w ^ dm;
        /* the lowest flagged byte is exactly the first delimiter */
        uint64_t z = (x - ones) & ~x & highs;
        if (z) {
            int i = __builtin_ctzll(z) >> 3;
            if (i) acc |= w & (~UINT64_C(0) >> (64 - 8 * i));
            *nonascii = (acc & highs) != 0;
            return p + i;
        }
        acc |= w;
        p += 8;
    }
#else
    (void)ones;
#endif
    while (p < le && *p != delim) acc |= (unsigned char)*p++;
    *nonascii = (acc & highs) != 0;
    return p;
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

/* Parses the record [ls, le) into output row 'row'. Returns 0, or -1 after
** recording an error (or on exhausted memory, with c->oom set). */
static int parse_line(chunk *c, const char *ls, const char *le, int64_t row, int64_t line)
{
    const job *j = c->job;
    const char delim = j->delim;
    const int32_t ncols = j->ncols;
    const char *p = ls;
    rf_val_err e;

    if (ls == le && !(ncols == 1 && j->types[0] == RF_TYPE_STRING)) {
        chunk_err(c, line, 1, "missing fields: the line is empty (expected %d field%s)", (int)ncols,
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
                int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
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
        case RF_TYPE_STRING: {
            int nonascii;
            const char *fe = scan_string(f, le, delim, &nonascii);
            if (nonascii && rf_val_check_utf8(f, fe - f, &e) != RF_OK) goto bad;
            sbuf *s = &c->sb[k];
            col->str_off[row] = s->len;
            if (sbuf_append(s, f, fe - f)) {
                c->oom = 1;
                return -1;
            }
            p = fe;
            break;
        }
        default:
            chunk_err(c, line, 1, "internal error: unknown column type %d", (int)t);
            return -1;
        bad:
            field_err(c, line, ls, f, field_end(f, le, delim) - f, t, &e);
            return -1;
        missing:
            chunk_err(c, line, (le - ls) + 1, "missing field %d (expected %d field%s)", (int)k + 1,
                      (int)ncols, ncols == 1 ? "" : "s");
            return -1;
        }
    }
    /* p is at le or at a delimiter; one delimiter right before le is dbgen's */
    if (p != le && p + 1 != le) {
        const char *r = p + 1, *re = le;
        if (re[-1] == delim) re--;
        int64_t extra = 1;
        for (const char *q = r; (q = memchr(q, delim, (size_t)(re - q))) != NULL; q++) extra++;
        chunk_err(c, line, (r - ls) + 1, "extra field(s): found %lld fields, expected %d",
                  (long long)(ncols + extra), (int)ncols);
        return -1;
    }
    return 0;
}

/* ---- the phases ----------------------------------------------------- */

static void *phase_count(void *arg)
{
    chunk *c = arg;
    const job *j = c->job;
    int64_t nl = 0;
    const char *p = c->beg;
    while (p < c->end && (p = memchr(p, '\n', (size_t)(c->end - p))) != NULL) {
        nl++;
        p++;
    }
    c->nl = nl;
    c->rows = nl;
    if (c->end == j->data + j->size && c->end > c->beg && c->end[-1] != '\n') c->rows++;
    if (c->skip_first && c->rows > 0) c->rows--;
    return NULL;
}

static void *phase_parse(void *arg)
{
    chunk *c = arg;
    const char *p = c->beg, *end = c->end;
    int64_t line = c->line0, row = c->row0, last = c->row0 + c->rows;
    if (c->skip_first && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
        line++;
    }
    while (p < end && row < last) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        if (le > p && le[-1] == '\r') le--;
        if (parse_line(c, p, le, row, line)) {
            if (c->oom || c->nerr >= MAX_ERRS) break;
        }
        row++;
        line++;
        p = next;
    }
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

/* ---- the file ------------------------------------------------------- */

typedef struct mapped {
    char *data;
    int64_t size;
    int is_mmap;
} mapped;

static const char *os_reason(int err, char *buf, size_t n)
{
    /* the GNU strerror_r (we build with _GNU_SOURCE) may return a static string */
    return strerror_r(err, buf, n);
}

static rf_status map_file(const char *path, mapped *m, rf_diags *d)
{
    char eb[256];
    memset(m, 0, sizeof *m);
    rf_loc loc = {path, 0, 0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        rf_error(d, loc, "cannot open file: %s", os_reason(err, eb, sizeof eb));
        return err == ENOMEM ? RF_ENOMEM : RF_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rf_error(d, loc, "cannot read file: %s", os_reason(errno, eb, sizeof eb));
        close(fd);
        return RF_EIO;
    }
    if (S_ISDIR(st.st_mode)) {
        rf_error(d, loc, "cannot read file: %s", os_reason(EISDIR, eb, sizeof eb));
        close(fd);
        return RF_EIO;
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            m->data = p;
            m->size = (int64_t)st.st_size;
            m->is_mmap = 1;
            return RF_OK;
        }
    }
    /* pipes, special files, or no mmap: read it all */
    int64_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (int64_t)st.st_size + 1 : 1 << 20, len = 0;
    char *buf = rf_malloc((size_t)cap);
    for (;;) {
        if (!buf) {
            close(fd);
            rf_error(d, loc, "out of memory reading the file");
            return RF_ENOMEM;
        }
        if (len == cap) {
            char *nb = rf_realloc(buf, (size_t)cap * 2);
            if (!nb) free(buf);
            buf = nb;
            cap *= 2;
            continue;
        }
        size_t want = (size_t)(cap - len) > (1u << 30) ? (1u << 30) : (size_t)(cap - len);
        ssize_t r = read(fd, buf + len, want);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rf_error(d, loc, "cannot read file: %s", os_reason(errno, eb, sizeof eb));
            free(buf);
            close(fd);
            return RF_EIO;
        }
        if (r == 0) break;
        len += r;
    }
    close(fd);
    m->data = buf;
    m->size = len;
    return RF_OK;
}

static void unmap_file(mapped *m)
{
    if (m->is_mmap < 0) return; /* the caller's memory */
    if (m->is_mmap)
        munmap(m->data, (size_t)m->size);
    else
        free(m->data);
    memset(m, 0, sizeof *m);
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
        rf_error(d, floc, "internal error: a table needs at least one column");
        st = RF_EUSAGE;
        goto done_nofile;
    }
    if (delim == '\n' || delim == '\r') {
        rf_error(d, floc, "the delimiter cannot be a line end");
        st = RF_EUSAGE;
        goto done_nofile;
    }
    for (int32_t k = 0; k < ncols; k++) {
        if ((unsigned)types[k] > RF_TYPE_DATE) {
            rf_error(d, floc, "internal error: unknown type of column %d", (int)k + 1);
            st = RF_EUSAGE;
            goto done_nofile;
        }
    }

    pthread_once(&year_days_once, year_days_init);
    mapped m;
    if (mem) {
        m.data = (char *)mem; /* only read */
        m.size = memsize;
        m.is_mmap = -1;       /* not ours to release */
    } else {
        st = map_file(path, &m, d);
        if (st != RF_OK) goto done_nofile;
    }

    job j = {.data = m.data, .size = m.size, .types = types, .ncols = ncols, .delim = delim};
    j.fast = !memchr("0123456789+-.", delim, 13);

    int n;
    if (threads > 0) {
        n = threads > MAX_THREADS ? MAX_THREADS : threads;
    } else {
        int64_t by_size = m.size / AUTO_CHUNK + 1;
        n = online_cpus();
        if (by_size < n) n = (int)by_size;
    }
    chunk *cs = rf_calloc((size_t)n, sizeof *cs);
    j.cols = rf_calloc((size_t)ncols, sizeof *j.cols);
    if (!cs || !j.cols) goto oom;

    /* chunk boundaries: the first line start at or after i * size / n */
    {
        const char *prev = m.data;
        for (int i = 0; i < n; i++) {
            const char *b = prev;
            if (i > 0) {
                int64_t nominal = (int64_t)((rf_dec128)m.size * i / n);
                const char *s = m.data + (nominal > 0 ? nominal - 1 : 0);
                if (s < prev) s = prev;
                const char *nl = s < m.data + m.size ? memchr(s, '\n', (size_t)(m.data + m.size - s)) : NULL;
                b = nl ? nl + 1 : m.data + m.size;
            }
            cs[i].beg = b;
            if (i > 0) cs[i - 1].end = b;
            prev = b;
        }
        cs[n - 1].end = m.data + m.size;
        for (int i = 0; i < n; i++) cs[i].job = &j;
        cs[0].skip_first = header != 0;
    }

    run_all(cs, n, phase_count);
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
    for (int i = 0; i < n; i++) {
        cs[i].sb = rf_calloc((size_t)ncols, sizeof(sbuf));
        cs[i].sbase = rf_calloc((size_t)ncols, sizeof(int64_t));
        if (!cs[i].sb || !cs[i].sbase) goto oom;
    }

    run_all(cs, n, phase_parse);

    {
        int any_oom = 0, nerr = 0;
        for (int i = 0; i < n; i++) any_oom |= cs[i].oom;
        /* a chunk that ran out of memory stopped early, so its errors would
        ** depend on the thread count: report only the exhausted memory */
        if (any_oom) goto oom;
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
        if (nerr) {
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
    out->cols = j.cols;
    j.cols = NULL;
    st = RF_OK;
    goto done;

oom:
    rf_error(d, floc, "out of memory loading the file");
    st = RF_ENOMEM;
fail:
    if (j.cols) {
        rf_rt_texttable t = {0, ncols, j.cols};
        rf_rt_texttable_free(&t);
        j.cols = NULL;
    }
done:
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
    unmap_file(&m);
done_nofile:
    rf_diags_free(&scratch);
    return st;
}
