/*
** common/rf_common.c: diagnostics, allocation, arena, buffers.
** See rf_common.h for the ownership rules.
*/
#include "rf_common.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- allocation ---------------------------------------------------- */

void *rf_malloc(size_t n) { return malloc(n ? n : 1); }
void *rf_calloc(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }
void *rf_realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }

char *rf_strndup(const char *s, size_t n)
{
    char *r = rf_malloc(n + 1);
    if (!r) return NULL;
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

char *rf_strdup(const char *s) { return rf_strndup(s, strlen(s)); }

char *rf_vsprintf(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return NULL;
    char *r = rf_malloc((size_t)n + 1);
    if (!r) return NULL;
    vsnprintf(r, (size_t)n + 1, fmt, ap);
    return r;
}

char *rf_sprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *r = rf_vsprintf(fmt, ap);
    va_end(ap);
    return r;
}

/* ---- diagnostics --------------------------------------------------- */

void rf_diags_init(rf_diags *d) { memset(d, 0, sizeof *d); }

void rf_diags_free(rf_diags *d)
{
    for (int64_t i = 0; i < d->count; i++) {
        free(d->items[i].msg);
        free((char *)d->items[i].loc.file);
    }
    free(d->items);
    memset(d, 0, sizeof *d);
}

void rf_diags_truncate(rf_diags *d, int64_t count, int64_t nerrors)
{
    while (d->count > count) {
        rf_diag *it = &d->items[--d->count];
        free(it->msg);
        free((char *)it->loc.file);
    }
    d->nerrors = nerrors;
}

rf_status rf_diags_status(const rf_diags *d, rf_status st)
{
    if (st != RF_EUSER) return st;
    size_t n = strlen(RF_INTERNAL_PREFIX);
    for (int64_t i = 0; i < d->count; i++)
        if (d->items[i].sev == RF_SEV_ERROR && d->items[i].msg && !strncmp(d->items[i].msg, RF_INTERNAL_PREFIX, n))
            return RF_EINTERNAL;
    return st;
}

int rf_diags_full(const rf_diags *d)
{
    int64_t max = d->max_errors ? d->max_errors : 1000;
    return d->nerrors >= max;
}

void rf_diag_addv(rf_diags *d, rf_severity sev, rf_loc loc, const char *fmt, va_list ap)
{
    if (sev == RF_SEV_ERROR) d->nerrors++;
    /* Keep counting errors past the limit, but store only the first ones. */
    int64_t max = d->max_errors ? d->max_errors : 1000;
    if (sev == RF_SEV_ERROR && d->nerrors > max) return;
    if (d->count == d->cap) {
        int64_t ncap = d->cap ? d->cap * 2 : 8;
        rf_diag *n = rf_realloc(d->items, (size_t)ncap * sizeof *n);
        if (!n) return;
        d->items = n;
        d->cap = ncap;
    }
    char *msg = rf_vsprintf(fmt, ap);
    if (!msg) return;
    /* a note or warning said again (a program run several times) is said once */
    for (int64_t i = 0; i < d->count && sev != RF_SEV_ERROR; i++) {
        const rf_diag *o = &d->items[i];
        if (o->sev == sev && o->loc.line == loc.line && o->loc.col == loc.col && !strcmp(o->msg, msg) &&
            !strcmp(o->loc.file ? o->loc.file : "", loc.file ? loc.file : "")) {
            free(msg);
            return;
        }
    }
    /* own a copy of the file name: callers may free theirs before printing */
    if (loc.file) {
        char *f = rf_strdup(loc.file);
        if (!f) {
            free(msg);
            return;
        }
        loc.file = f;
    }
    d->items[d->count].sev = sev;
    d->items[d->count].loc = loc;
    d->items[d->count].msg = msg;
    d->count++;
}

void rf_diag_add(rf_diags *d, rf_severity sev, rf_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rf_diag_addv(d, sev, loc, fmt, ap);
    va_end(ap);
}

static int loc_cmp(const rf_loc *a, const rf_loc *b)
{
    const char *fa = a->file ? a->file : "", *fb = b->file ? b->file : "";
    int c = strcmp(fa, fb);
    if (c) return c;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    if (a->col != b->col) return a->col < b->col ? -1 : 1;
    return 0;
}

void rf_diags_sort(rf_diags *d)
{
    /* insertion sort: stable, and lists are short */
    for (int64_t i = 1; i < d->count; i++) {
        rf_diag x = d->items[i];
        int64_t j = i;
        while (j > 0 && loc_cmp(&d->items[j - 1].loc, &x.loc) > 0) {
            d->items[j] = d->items[j - 1];
            j--;
        }
        d->items[j] = x;
    }
}

void rf_diags_print(const rf_diags *d, FILE *out)
{
    static const char *names[] = {"error", "warning", "note"};
    int64_t shown = 0;
    for (int64_t i = 0; i < d->count; i++) {
        const rf_diag *g = &d->items[i];
        if (g->sev == RF_SEV_ERROR && shown++ >= RF_DIAGS_SHOWN) continue;
        if (g->loc.file && g->loc.line > 0)
            fprintf(out, "%s:%d:%d: %s: %s\n", g->loc.file, g->loc.line, g->loc.col,
                    names[g->sev], g->msg);
        else if (g->loc.file)
            fprintf(out, "%s: %s: %s\n", g->loc.file, names[g->sev], g->msg);
        else
            fprintf(out, "redfox: %s: %s\n", names[g->sev], g->msg);
    }
    if (d->nerrors > RF_DIAGS_SHOWN)
        fprintf(out, "redfox: %lld more error%s\n", (long long)(d->nerrors - RF_DIAGS_SHOWN),
                d->nerrors - RF_DIAGS_SHOWN == 1 ? "" : "s");
}

/* ---- arena --------------------------------------------------------- */

struct rf_arena_block {
    rf_arena_block *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

void rf_arena_init(rf_arena *a) { memset(a, 0, sizeof *a); }

void rf_arena_free(rf_arena *a)
{
    rf_arena_block *b = a->head;
    while (b) {
        rf_arena_block *n = b->next;
        free(b);
        b = n;
    }
    memset(a, 0, sizeof *a);
}

void *rf_arena_alloc(rf_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    rf_arena_block *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t size = n > 65536 ? n : 65536;
        b = malloc(sizeof *b + size);
        if (!b) return NULL;
        b->next = a->head;
        b->used = 0;
        b->size = size;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    a->bytes += (int64_t)n;
    memset(p, 0, n);
    return p;
}

char *rf_arena_strndup(rf_arena *a, const char *s, size_t n)
{
    char *r = rf_arena_alloc(a, n + 1);
    if (!r) return NULL;
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

char *rf_arena_strdup(rf_arena *a, const char *s) { return rf_arena_strndup(a, s, strlen(s)); }

char *rf_arena_sprintf(rf_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *t = rf_vsprintf(fmt, ap);
    va_end(ap);
    if (!t) return NULL;
    char *r = rf_arena_strdup(a, t);
    free(t);
    return r;
}

/* ---- buffers ------------------------------------------------------- */

void rf_buf_init(rf_buf *b) { memset(b, 0, sizeof *b); }
void rf_buf_free(rf_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int buf_reserve(rf_buf *b, int64_t extra)
{
    if (b->oom) return -1;
    if (b->len + extra + 1 <= b->cap) return 0;
    int64_t ncap = b->cap ? b->cap : 256;
    while (ncap < b->len + extra + 1) ncap *= 2;
    char *n = rf_realloc(b->data, (size_t)ncap);
    if (!n) {
        b->oom = 1;
        return -1;
    }
    b->data = n;
    b->cap = ncap;
    return 0;
}

void rf_buf_append(rf_buf *b, const void *p, int64_t n)
{
    if (n <= 0 || buf_reserve(b, n)) return;
    memcpy(b->data + b->len, p, (size_t)n);
    b->len += n;
    b->data[b->len] = 0;
}

void rf_buf_puts(rf_buf *b, const char *s) { rf_buf_append(b, s, (int64_t)strlen(s)); }
void rf_buf_putc(rf_buf *b, char c) { rf_buf_append(b, &c, 1); }

void rf_buf_printf(rf_buf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n > 0 && !buf_reserve(b, n)) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += n;
    }
    va_end(ap2);
}

const char *rf_buf_cstr(rf_buf *b)
{
    if (!b->data && buf_reserve(b, 0)) return "";
    b->data[b->len] = 0;
    return b->data;
}

char *rf_buf_take(rf_buf *b)
{
    rf_buf_cstr(b);
    char *r = b->data;
    memset(b, 0, sizeof *b);
    return r;
}

/* ---- vectors ------------------------------------------------------- */

int rf_ptrvec_push(rf_ptrvec *v, void *p)
{
    if (v->count == v->cap) {
        int64_t ncap = v->cap ? v->cap * 2 : 8;
        void **n = rf_realloc(v->items, (size_t)ncap * sizeof *n);
        if (!n) return -1;
        v->items = n;
        v->cap = ncap;
    }
    v->items[v->count++] = p;
    return 0;
}

void rf_ptrvec_free(rf_ptrvec *v)
{
    free(v->items);
    memset(v, 0, sizeof *v);
}

/* ---- files and hashing --------------------------------------------- */

int rf_parse_bytes(const char *s, int64_t *out)
{
    int64_t x = 0;
    const char *c = s;
    for (; *c >= '0' && *c <= '9'; c++) {
        if (x > (INT64_C(1) << 62) / 10) return 0;
        x = x * 10 + (*c - '0');
    }
    int shift = 0;
    switch (*c) {
    case 'K': case 'k': shift = 10; c++; break;
    case 'M': case 'm': shift = 20; c++; break;
    case 'G': case 'g': shift = 30; c++; break;
    case 'T': case 't': shift = 40; c++; break;
    default: break;
    }
    if (shift && (*c == 'B' || *c == 'b')) c++;
    if (!(s[0] >= '0' && s[0] <= '9') || *c || x <= 0 || x > (INT64_C(1) << (62 - shift))) return 0;
    *out = x << shift;
    return 1;
}

int rf_parse_decimal(const char *s, double *out)
{
    const char *p = s;
    int digits = 0;
    if (*p == '+' || *p == '-') p++;
    for (; *p >= '0' && *p <= '9'; p++) digits++;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++) digits++;
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        int ed = 0;
        if (*++p == '+' || *p == '-') p++;
        for (; *p >= '0' && *p <= '9'; p++) ed++;
        if (!ed) return 0;
    }
    if (*p) return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

const char RF_READ_ABSENT[] = "no such file";
const char RF_READ_NOT_REGULAR[] = "not a regular file";
const char RF_READ_TOO_LARGE[] = "larger than a file of its kind can be";

rf_status rf_read_file_bounded(const char *path, int64_t max, char **data, int64_t *len, const char **why)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        *why = e == ENOENT ? RF_READ_ABSENT : strerror(e);
        errno = e;
        return RF_EIO;
    }
    struct stat sb;
    int ok = fstat(fd, &sb) == 0;
    if (!ok || !S_ISREG(sb.st_mode) || sb.st_size > max) {
        *why = !ok ? strerror(errno) : !S_ISREG(sb.st_mode) ? RF_READ_NOT_REGULAR : RF_READ_TOO_LARGE;
        close(fd);
        return RF_EIO;
    }
    /* the size as fstat saw it, plus room to see that it grew past max */
    int64_t cap = (int64_t)sb.st_size + 1, got = 0;
    char *b = rf_malloc((size_t)cap + 1);
    while (b) {
        if (got == cap) {
            if (got > max) break;
            int64_t nc = cap * 2 > max + 1 ? max + 1 : cap * 2; /* > cap: cap <= max here */
            char *nb = rf_realloc(b, (size_t)nc + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap = nc;
        }
        ssize_t r = read(fd, b + got, (size_t)(cap - got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            *why = strerror(errno);
            free(b);
            close(fd);
            return RF_EIO;
        }
        if (r == 0) break;
        got += r;
    }
    close(fd);
    if (!b) {
        *why = "out of memory";
        return RF_ENOMEM;
    }
    if (got > max) {
        free(b);
        *why = RF_READ_TOO_LARGE;
        return RF_EIO;
    }
    b[got] = 0;
    *data = b;
    *len = got;
    return RF_OK;
}

rf_status rf_read_file(const char *path, char **data, int64_t *len, const char **why)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *why = strerror(errno);
        return RF_EIO;
    }
    rf_buf b;
    rf_buf_init(&b);
    char tmp[65536];
    size_t n;
    errno = 0;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) rf_buf_append(&b, tmp, (int64_t)n);
    int err = ferror(f), e = errno; /* (a folder: EISDIR, said as such rather than "read error") */
    fclose(f);
    if (err) {
        rf_buf_free(&b);
        *why = e ? strerror(e) : "read error";
        return RF_EIO;
    }
    if (b.oom) {
        rf_buf_free(&b);
        *why = "out of memory";
        return RF_ENOMEM;
    }
    *len = b.len;
    *data = rf_buf_take(&b);
    return *data ? RF_OK : RF_ENOMEM;
}

uint64_t rf_hash64(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ULL;
    }
    return h;
}
