/*
** runtime/rt_place.c: the placement model: its records and file, the
** fits and the prediction (rf_rt_place.h).
**
** The file is text, one record a line, after a version line:
**     redfox placement model 1
**     r PROG DEVICE FRESH ROWS BYTES KERNELS START_S COPY_S SECONDS
**     k DEVICE KIND ROWS BYTES SECONDS
**     h HOST gpu GPU-KIND    or    h HOST none -
** (PROG 16 hex digits, DEVICE cpu or gpu, FRESH 0 or 1; a host record says
** what the last look for a GPU found on HOST, its kind's spaces as _). Any other first
** line, or a line that does not parse, a number not finite or negative or
** past what a measurement can be (rf_rt_place_rec_plausible), and the
** whole file is ignored (a warning says which line): a model is a cache,
** made anew from the next runs. A last line without its newline is not
** read, and is no damage: it may be another run's append still being
** written (a write of more than a page shows its first page to a reader
** before the rest), and all the records before it were thrown away with a
** warning when several runs ran at once; the next append writes the file
** anew without it (a file cut short by a crash).
**
** A run adds its records by appending their lines (O_APPEND, one write):
** reading, formatting and renaming the whole file after every run cost
** tens of ms, as much as a small program's run. The file is written anew
** (aside, then renamed) only when it is missing or damaged, or past
** RF_RT_PLACE_COMPACT_BYTES: then with the newest RF_RT_PLACE_MAX_RECORDS,
** which is also all a read keeps. Before a write aside, the temporaries
** that killed writers left (model.txt.<pid>.<n>.tmp, model.bin.<pid>.<n>.tmp)
** are removed (rf_rt_place_sweep): they would pile up, one per killed
** process.
*/
#include "rf_rt_place.h"

#include "rf_gpu_codegen.h" /* rf_gpu_cache_dir, rf_gpu_cache_write */
#include "rf_sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER "redfox placement model"

void rf_rt_place_model_free(rf_rt_place_model *m)
{
    free(m->recs);
    memset(m, 0, sizeof *m);
}

rf_status rf_rt_place_add(rf_rt_place_model *m, const rf_rt_place_rec *r)
{
    if (m->n == m->cap) {
        int64_t nc = m->cap ? m->cap * 2 : 64;
        rf_rt_place_rec *n = rf_realloc(m->recs, (size_t)nc * sizeof *n);
        if (!n) return RF_ENOMEM;
        m->recs = n;
        m->cap = nc;
    }
    m->recs[m->n++] = *r;
    return RF_OK;
}

char *rf_rt_place_path(const char *cache_dir)
{
    char *dir = rf_gpu_cache_dir(cache_dir, "place");
    char *path = dir ? rf_sprintf("%s/model.txt", dir) : NULL;
    free(dir);
    return path;
}

static int ok_num(double v) { return isfinite(v) && v >= 0; }

static int dev_of(const char *s) { return !strcmp(s, "gpu") ? 1 : !strcmp(s, "cpu") ? 0 : -1; }

/* Splits s (NUL-terminated, no newline) at blanks into at most max
** tokens, in place: their count, or max + 1 when there are more. Not
** sscanf: a full model is some 4,000 lines, read before every choice, and
** sscanf took about 2.5 ms of them; this a fraction. */
static int split(char *s, char **tok, int max)
{
    int n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t') *s++ = 0;
        if (!*s) return n;
        if (n == max) return max + 1;
        tok[n++] = s;
        while (*s && *s != ' ' && *s != '\t') s++;
    }
}

/* 10^e for 0 <= e <= 300: exact from a table up to 10^22 (pow() was a
** third of a model's read: 4,096 records, 1.39 ms before, see the commit) */
static double pow10_of(int e)
{
    static const double p[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    double v = 1;
    for (; e > 22; e -= 22) v *= 1e22;
    return v * p[e];
}

/* A number that is the whole token, finite and not negative. Decimal
** digits with a fraction and an exponent, as the file is written, are read
** here (strtod, exact to the last bit, was most of a read's time; a cost
** model needs no last bit); anything else goes to strtod. */
static int num(const char *t, double *v)
{
    const char *c = t;
    uint64_t mant = 0;
    int exp10 = 0, digits = 0, ok = 1;
    for (; *c >= '0' && *c <= '9'; c++, digits++) {
        if (mant < 100000000000000000ULL) mant = mant * 10 + (uint64_t)(*c - '0');
        else exp10++;
    }
    if (*c == '.')
        for (c++; *c >= '0' && *c <= '9'; c++, digits++)
            if (mant < 100000000000000000ULL) mant = mant * 10 + (uint64_t)(*c - '0'), exp10--;
    if (digits && (*c == 'e' || *c == 'E')) {
        int sign = 1, e = 0, ed = 0;
        c++;
        if (*c == '+' || *c == '-') sign = *c++ == '-' ? -1 : 1;
        for (; *c >= '0' && *c <= '9' && e < 10000; c++, ed++) e = e * 10 + (*c - '0');
        ok = ed > 0;
        exp10 += sign * e;
    }
    if (!digits || !ok || *c || exp10 < -300 || exp10 > 300) {
        char *end;
        *v = strtod(t, &end);
        return end != t && !*end && ok_num(*v);
    }
    *v = exp10 >= 0 ? (double)mant * pow10_of(exp10) : (double)mant / pow10_of(-exp10);
    return ok_num(*v);
}

/* A copy of token t into out (of size n): 0 when it does not fit. */
static int word(const char *t, char *out, size_t n)
{
    size_t l = strlen(t);
    if (l >= n) return 0;
    memcpy(out, t, l + 1);
    return 1;
}

int rf_rt_place_rec_plausible(const rf_rt_place_rec *r)
{
    return r->rows <= RF_RT_PLACE_MAX_COUNT && r->bytes <= RF_RT_PLACE_MAX_COUNT &&
           (r->read_s == -1 || (r->read_s >= 0 && r->read_s <= RF_RT_PLACE_MAX_SECONDS)) &&
           r->start_s <= RF_RT_PLACE_MAX_SECONDS && r->copy_s <= RF_RT_PLACE_MAX_SECONDS &&
           r->seconds <= RF_RT_PLACE_MAX_SECONDS;
}

/* One record line (NUL-terminated, no newline; cut into tokens in place):
** 1 when it parses, its numbers measurements (rf_rt_place_rec_plausible). */
static int parse_line(char *s, rf_rt_place_rec *r)
{
    memset(r, 0, sizeof *r);
    char *t[12];
    int n = split(s, t, 11);
    if (n < 1 || t[0][1]) return 0;
    switch (t[0][0]) {
    case 'r': {
        double kernels;
        char *end;
        /* 10 tokens: no reading (version 1's records); 11: the reading 8th, "-" not known */
        if ((n != 10 && n != 11) || strlen(t[1]) != 16) return 0;
        r->prog = strtoull(t[1], &end, 16);
        if (*end || t[1][0] == '-' || t[1][0] == '+') return 0;
        r->type = 'r';
        if ((r->gpu = dev_of(t[2])) < 0 || t[3][0] < '0' || t[3][0] > '2' || t[3][1]) return 0;
        r->fresh = t[3][0] - '0';
        if (!num(t[4], &r->rows) || !num(t[5], &r->bytes) || !num(t[6], &kernels) || kernels > INT32_MAX ||
            kernels != (double)(int32_t)kernels)
            return 0;
        r->kernels = (int32_t)kernels;
        r->read_s = -1;
        int o = n - 10; /* past the reading */
        if (o && strcmp(t[7], "-") && !num(t[7], &r->read_s)) return 0;
        return num(t[7 + o], &r->start_s) && num(t[8 + o], &r->copy_s) && num(t[9 + o], &r->seconds) &&
               rf_rt_place_rec_plausible(r);
    }
    case 'k':
        r->type = 'k';
        return n == 6 && (r->gpu = dev_of(t[1])) >= 0 && word(t[2], r->kind, sizeof r->kind) && num(t[3], &r->rows) &&
               num(t[4], &r->bytes) && num(t[5], &r->seconds) && rf_rt_place_rec_plausible(r);
    case 'h':
        r->type = 'h';
        r->gpu = !strcmp(t[2 < n ? 2 : 0], "gpu") ? 1 : !strcmp(t[2 < n ? 2 : 0], "none") ? 0 : -1;
        return n == 4 && r->gpu >= 0 && word(t[1], r->host, sizeof r->host) && word(t[3], r->kind, sizeof r->kind);
    default:
        return 0;
    }
}

int64_t rf_rt_place_whole_lines(const char *text, int64_t len)
{
    while (len > 0 && text[len - 1] != '\n') len--;
    return len;
}

int64_t rf_rt_place_parse(char *text, int64_t len, int64_t line0, rf_rt_place_model *m, int64_t *lines,
                          rf_status *st)
{
    int64_t line = line0, bad = 0;
    char *p = text, *end = text + len;
    *st = RF_OK;
    while (p < end && !bad && !*st) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) { /* a last line without its newline: cut short */
            bad = line + 1;
            break;
        }
        *nl = 0;
        line++;
        if (line == 1) {
            char want[64];
            /* version 1's records are version 2's without a held start or a reading */
            snprintf(want, sizeof want, HEADER " %d", RF_RT_PLACE_VERSION);
            if (strcmp(p, want) && strcmp(p, HEADER " 1")) bad = 1;
        } else {
            rf_rt_place_rec r;
            if (memchr(p, 0, (size_t)(nl - p)) || !parse_line(p, &r)) bad = line;
            else *st = rf_rt_place_add(m, &r);
        }
        p = nl + 1;
    }
    *lines = line;
    return bad;
}

void rf_rt_place_trim(rf_rt_place_model *m)
{
    if (m->n <= RF_RT_PLACE_MAX_RECORDS) return;
    int64_t drop = m->n - RF_RT_PLACE_MAX_RECORDS;
    memmove(m->recs, m->recs + drop, (size_t)RF_RT_PLACE_MAX_RECORDS * sizeof *m->recs);
    m->n = RF_RT_PLACE_MAX_RECORDS;
}

void rf_rt_place_damaged(const char *path, int64_t line, rf_rt_place_model *m, rf_diags *d)
{
    rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(path, (int32_t)line, 1),
                "the placement model is damaged or of another version: ignored (it is written anew)");
    rf_rt_place_model_free(m);
}

int rf_rt_place_file_ok(int fd, struct stat *sb)
{
    return fstat(fd, sb) == 0 && S_ISREG(sb->st_mode) && sb->st_size <= RF_RT_PLACE_MAX_FILE_BYTES;
}

rf_status rf_rt_place_read(const char *path, rf_rt_place_model *m, rf_diags *d)
{
    memset(m, 0, sizeof *m);
    char *text = NULL;
    int64_t len = 0, lines = 0;
    const char *why = "";
    rf_status rst = rf_read_file_bounded(path, RF_RT_PLACE_MAX_FILE_BYTES, &text, &len, &why);
    if (rst == RF_ENOMEM) return RF_ENOMEM;
    struct stat sb;
    if (rst && (why == RF_READ_TOO_LARGE || (why == RF_READ_NOT_REGULAR && !(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))))) {
        rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(path, 0, 0),
                    why == RF_READ_TOO_LARGE ? "the placement model is larger than a model can be (%lld bytes at "
                                               "most): ignored (it is written anew)"
                                             : "the placement model is not a regular file (a named pipe or a device): "
                                               "ignored (it is written anew)",
                    (long long)RF_RT_PLACE_MAX_FILE_BYTES);
        return RF_OK;
    }
    if (rst) return RF_OK; /* none yet (or a folder, or unreadable: nothing to learn from) */
    rf_status st;
    int64_t bad = rf_rt_place_parse(text, rf_rt_place_whole_lines(text, len), 0, m, &lines, &st);
    if (!bad && lines == 0 && len > 0) bad = 1;
    free(text);
    if (!bad) rf_rt_place_trim(m); /* appended past the bound since the last rewrite: the newest count */
    if (bad) rf_rt_place_damaged(path, bad, m, d);
    return st;
}

static void format_rec(const rf_rt_place_rec *r, rf_buf *out)
{
    const char *dev = r->gpu ? "gpu" : "cpu";
    if (r->type == 'h')
        rf_buf_printf(out, "h %s %s %s\n", r->host[0] ? r->host : "?", r->gpu ? "gpu" : "none",
                      r->kind[0] ? r->kind : "-");
    else if (r->type == 'r') {
        char rd[32] = "-";
        if (r->read_s >= 0) snprintf(rd, sizeof rd, "%.9g", r->read_s);
        rf_buf_printf(out, "r %016" PRIx64 " %s %d %.17g %.17g %d %s %.9g %.9g %.9g\n", r->prog, dev, r->fresh,
                      r->rows, r->bytes, (int)r->kernels, rd, r->start_s, r->copy_s, r->seconds);
    }
    else
        rf_buf_printf(out, "k %s %s %.17g %.17g %.9g\n", dev, r->kind[0] ? r->kind : "?", r->rows, r->bytes,
                      r->seconds);
}

rf_status rf_rt_place_format(const rf_rt_place_model *m, rf_buf *out)
{
    rf_buf_printf(out, HEADER " %d\n", RF_RT_PLACE_VERSION);
    int64_t from = m->n > RF_RT_PLACE_MAX_RECORDS ? m->n - RF_RT_PLACE_MAX_RECORDS : 0;
    for (int64_t i = from; i < m->n; i++) format_rec(&m->recs[i], out);
    return out->oom ? RF_ENOMEM : RF_OK;
}

/* Appends the records' lines to a model file below the bound that looks
** sound: 1 when it did. Looks sound: its version line, and a newline at its
** end (no append was cut short). Not parsed: parsing a full model costs
** about 2 ms, as much again as the choice's own read; a line damaged in
** the middle is found by the next read for a choice, which writes the file
** anew (rf_rt_place_reset). */
static int append_lines(const char *path, const rf_rt_place_rec *recs, int64_t n)
{
    if (n > RF_RT_PLACE_MAX_RECORDS) return 0;
    struct stat sb;
    char want[64], head[64];
    int hl = snprintf(want, sizeof want, HEADER " %d\n", RF_RT_PLACE_VERSION);
    /* not through a link, not blocking on a named pipe: such a file is read
    ** (with a warning) and written anew */
    int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return 0;
    char last = 0;
    int ok = rf_rt_place_file_ok(fd, &sb) && sb.st_size < RF_RT_PLACE_COMPACT_BYTES && sb.st_size > hl &&
             pread(fd, head, (size_t)hl, 0) == hl && !memcmp(head, want, (size_t)hl) &&
             pread(fd, &last, 1, sb.st_size - 1) == 1 && last == '\n';
    rf_buf b;
    rf_buf_init(&b);
    for (int64_t i = 0; ok && i < n; i++) format_rec(&recs[i], &b);
    ok = ok && !b.oom;
    if (ok) {
        ssize_t w = write(fd, b.data, (size_t)b.len);
        ok = w == (ssize_t)b.len;
        /* a write cut short (the disk full, the file's size limit) left half
        ** a line at the end, and the next read would ignore every record
        ** for it: cut back to where this write began (the file offset is
        ** its end, O_APPEND) */
        if (w > 0 && !ok) {
            off_t end = lseek(fd, 0, SEEK_CUR);
            if (end >= (off_t)w && ftruncate(fd, end - (off_t)w) != 0)
                ok = 0; /* (left cut short: the next read warns and writes it anew) */
        }
    }
    rf_buf_free(&b);
    close(fd);
    return ok;
}

/* The pid in name when it is base.<pid>.<n>.tmp, the name a write aside
** takes (rf_gpu_cache_tmp_name), or base.<pid>.tmp (older builds'), else 0. */
static long tmp_pid(const char *name, const char *base)
{
    size_t bl = strlen(base);
    if (strncmp(name, base, bl) || name[bl] != '.') return 0;
    const char *p = name + bl + 1;
    long pid = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++) pid = pid * 10 + (*p - '0');
    if (!digits) return 0;
    if (*p == '.' && p[1] >= '0' && p[1] <= '9') { /* the count within the process */
        int n = 0;
        for (p++; *p >= '0' && *p <= '9' && n < 20; p++) n++;
    }
    return !strcmp(p, ".tmp") ? pid : 0;
}

int64_t rf_rt_place_sweep(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? rf_sprintf("%.*s", (int)(slash - path), path) : rf_strdup(".");
    const char *base = slash ? slash + 1 : path;
    DIR *dh = dir && base[0] ? opendir(dir[0] ? dir : "/") : NULL;
    int64_t removed = 0;
    time_t now = time(NULL);
    struct dirent *e;
    while (dh && (e = readdir(dh))) {
        long pid = tmp_pid(e->d_name, base);
        /* (kill with signal 0 only asks: ESRCH, no such process; EPERM, one of another user's) */
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char *full = rf_sprintf("%s/%s", dir, e->d_name);
        struct stat sb;
        if (full && !lstat(full, &sb) && S_ISREG(sb.st_mode) && now - sb.st_mtime > RF_RT_PLACE_STALE_TMP_S &&
            !unlink(full))
            removed++;
        free(full);
    }
    if (dh) closedir(dh);
    free(dir);
    return removed;
}

/* The model and recs written as the file at path (aside, then renamed):
** RF_EIO, errno saying why, when it could not be. */
static rf_status rewrite(const char *path, rf_rt_place_model *m, const rf_rt_place_rec *recs, int64_t n)
{
    rf_status st = RF_OK;
    for (int64_t i = 0; i < n && !st; i++) st = rf_rt_place_add(m, &recs[i]);
    rf_buf b;
    rf_buf_init(&b);
    if (!st) st = rf_rt_place_format(m, &b);
    char *dir = st ? NULL : rf_strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    int e = 0;
    if (slash) {
        *slash = 0;
        rf_rt_place_sweep(path);
        if (!rf_gpu_cache_write(dir, path, b.data, (uint64_t)b.len)) {
            st = RF_EIO;
            e = errno;
        }
    } else if (!st) {
        st = dir ? RF_EIO : RF_ENOMEM;
        e = ENOENT;
    }
    free(dir);
    rf_buf_free(&b);
    errno = e;
    return st;
}

void rf_rt_place_unwritable(const char *path, rf_diags *d)
{
    rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(path, 0, 0),
                "the placement model cannot be written anew (%s): until its folder can be written, --device auto "
                "learns from no run (--cache-dir DIR puts the cache elsewhere, --no-cache keeps none)",
                strerror(errno));
}

rf_status rf_rt_place_reset(const char *path)
{
    rf_rt_place_model m = {NULL, 0, 0};
    rf_status st = rewrite(path, &m, NULL, 0);
    int e = errno; /* (why it could not be written, for the caller) */
    rf_rt_place_model_free(&m);
    errno = e;
    return st;
}

rf_status rf_rt_place_append(const char *path, const rf_rt_place_rec *recs, int64_t n, rf_diags *d)
{
    if (append_lines(path, recs, n)) return RF_OK;
    rf_rt_place_model m;
    /* a file damaged when a choice read it was written anew then (and the
    ** warning given): one damaged here was not read for a choice (--device
    ** cpu or gpu), so the warning is given here, and where it cannot be
    ** written anew, a second one saying so (the first says it will be) */
    int64_t warned = d->count;
    rf_status st = rf_rt_place_read(path, &m, d);
    if (!st) st = rewrite(path, &m, recs, n);
    int e = errno;
    if (st == RF_EIO && d->count > warned) rf_rt_place_unwritable(path, d);
    rf_rt_place_model_free(&m);
    errno = e;
    return st;
}

/* ---- fits ------------------------------------------------------------------ */

/* Solves the k x k system a x = y (Gaussian elimination, partial pivoting): 0 if singular. */
static int solve(double a[3][3], double y[3], int k, double x[3])
{
    for (int c = 0; c < k; c++) {
        int piv = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
        if (fabs(a[piv][c]) < 1e-12) return 0;
        for (int j = 0; j < k; j++) {
            double t = a[c][j];
            a[c][j] = a[piv][j];
            a[piv][j] = t;
        }
        double t = y[c];
        y[c] = y[piv];
        y[piv] = t;
        for (int r = c + 1; r < k; r++) {
            double f = a[r][c] / a[c][c];
            for (int j = c; j < k; j++) a[r][j] -= f * a[c][j];
            y[r] -= f * y[c];
        }
    }
    for (int c = k - 1; c >= 0; c--) {
        double s = y[c];
        for (int j = c + 1; j < k; j++) s -= a[c][j] * x[j];
        x[c] = s / a[c][c];
    }
    return 1;
}

int rf_rt_place_fit_lsq(const double *x1, const double *x2, const double *y, int64_t n, rf_rt_place_fit *out)
{
    memset(out, 0, sizeof *out);
    if (n <= 0) return 0;
    out->n = n;
    /* features scaled to at most 1, for the normal equations' sake */
    double sc[3] = {1, 0, 0};
    for (int64_t i = 0; i < n; i++) {
        if (fabs(x1[i]) > sc[1]) sc[1] = fabs(x1[i]);
        if (x2 && fabs(x2[i]) > sc[2]) sc[2] = fabs(x2[i]);
    }
    static const int subsets[7][3] = {{1, -1, -1}, {2, -1, -1}, {1, 2, -1}, {0, 1, -1},
                                      {0, 2, -1},  {0, 1, 2},   {0, -1, -1}};
    double best = INFINITY;
    for (int s = 0; s < 7; s++) {
        int cols[3], k = 0;
        for (int j = 0; j < 3 && subsets[s][j] >= 0; j++) cols[k++] = subsets[s][j];
        int usable = 1;
        for (int j = 0; j < k; j++) usable &= sc[cols[j]] > 0 && (cols[j] != 2 || x2);
        if (!usable) continue;
        double a[3][3] = {{0}}, b[3] = {0}, c[3] = {0};
        for (int64_t i = 0; i < n; i++) {
            double f[3] = {1, x1[i] / (sc[1] > 0 ? sc[1] : 1), x2 && sc[2] > 0 ? x2[i] / sc[2] : 0};
            for (int r = 0; r < k; r++) {
                b[r] += f[cols[r]] * y[i];
                for (int q = 0; q < k; q++) a[r][q] += f[cols[r]] * f[cols[q]];
            }
        }
        if (!solve(a, b, k, c)) continue;
        int neg = 0;
        for (int j = 0; j < k; j++) neg |= !(c[j] >= 0);
        if (neg) continue;
        double full[3] = {0, 0, 0};
        for (int j = 0; j < k; j++) full[cols[j]] = c[j] / (cols[j] ? sc[cols[j]] : 1);
        double sse = 0;
        for (int64_t i = 0; i < n; i++) {
            double e = y[i] - (full[0] + full[1] * x1[i] + (x2 ? full[2] * x2[i] : 0));
            sse += e * e;
        }
        if (sse < best * (1 - 1e-9) - 1e-300) {
            best = sse;
            memcpy(out->c, full, sizeof full);
        }
    }
    return isfinite(best);
}

double rf_rt_place_fit_eval(const rf_rt_place_fit *f, double x1, double x2)
{
    return f->c[0] + f->c[1] * x1 + f->c[2] * x2;
}

/* ---- prediction -------------------------------------------------------------- */

/* The records of type on device gpu (and of program prog, kind kind where
** given) as the fit's arrays: x1 rows, x2 bytes, y seconds. */
static int64_t pick(const rf_rt_place_model *m, char type, int gpu, const uint64_t *prog, const char *kind, double *x1,
                    double *x2, double *y)
{
    int64_t n = 0;
    for (int64_t i = 0; i < m->n; i++) {
        const rf_rt_place_rec *r = &m->recs[i];
        if (r->type != type || r->gpu != gpu || (prog && r->prog != *prog) || (kind && strcmp(r->kind, kind))) continue;
        x1[n] = r->rows;
        x2[n] = r->bytes;
        y[n++] = r->seconds;
    }
    return n;
}

/* The run (not the start, not the copies) of q on device gpu. */
static double predict_run(const rf_rt_place_model *m, const rf_rt_place_query *q, int gpu, double *x1, double *x2,
                          double *y, const char **basis)
{
    rf_rt_place_fit f;
    int64_t n = pick(m, 'r', gpu, &q->prog, NULL, x1, x2, y);
    if (n > 0 && rf_rt_place_fit_lsq(x1, NULL, y, n, &f)) {
        *basis = "this program's runs";
        return rf_rt_place_fit_eval(&f, q->rows, 0);
    }
    double t = 0;
    int learned = 0;
    int threads = q->threads > 0 ? q->threads : 1;
    double *each = rf_calloc((size_t)q->nkernels + 1, sizeof *each);
    *basis = "defaults";
    if (!each) return 0;
    for (int32_t k = 0; k < q->nkernels; k++) {
        /* a kind met before: the same fit at the same point (the fits of a
        ** full model's thousands of records are what a choice costs) */
        int32_t same = -1;
        for (int32_t j = 0; j < k && same < 0; j++)
            if (q->kinds[j] && q->kinds[k] && !strcmp(q->kinds[j], q->kinds[k])) same = j;
        if (same >= 0) {
            t += each[same];
            each[k] = each[same];
            continue;
        }
        double before = t;
        n = pick(m, 'k', gpu, NULL, q->kinds[k], x1, x2, y);
        double reach = 0; /* the most rows a record of the kind saw */
        for (int64_t i = 0; i < n; i++) reach = x1[i] > reach ? x1[i] : reach;
        if (n > 0 && reach * RF_RT_PLACE_REACH >= q->rows && rf_rt_place_fit_lsq(x1, x2, y, n, &f)) {
            t += rf_rt_place_fit_eval(&f, q->rows, q->bytes);
            learned = 1;
        } else if (gpu) {
            t += q->rows * RF_RT_PLACE_GPU_NS_ROW * 1e-9 + RF_RT_PLACE_GPU_KERNEL_S;
        } else {
            t += q->rows * RF_RT_PLACE_CPU_NS_ROW * 1e-9 / threads;
        }
        each[k] = t - before;
    }
    free(each);
    *basis = learned ? "kernel kinds" : "defaults";
    return t;
}

/* The mean of one start state's starts, this program's where it has any
** (how much of the start its reading hides is its own), else every
** program's, else dflt. */
static double mean_start(const double sum[2], const int64_t n[2], double dflt)
{
    int w = n[1] ? 1 : 0;
    return n[w] ? sum[w] / (double)n[w] : dflt;
}

void rf_rt_place_predict(const rf_rt_place_model *m, const rf_rt_place_query *q, rf_rt_place_choice *out)
{
    memset(out, 0, sizeof *out);
    out->records = m->n;
    int64_t n = m->n > 0 ? m->n : 1;
    double *x1 = rf_malloc((size_t)n * sizeof *x1), *x2 = rf_malloc((size_t)n * sizeof *x2),
           *y = rf_malloc((size_t)n * sizeof *y);
    rf_rt_place_model none = {NULL, 0, 0};
    const rf_rt_place_model *mm = x1 && x2 && y ? m : &none; /* short of memory: the defaults */
    double cpu_run = predict_run(mm, q, 0, x1, x2, y, &out->cpu_basis);
    double gpu_run = predict_run(mm, q, 1, x1, x2, y, &out->gpu_basis);
    /* each device's reading of this program's inputs, from its runs that
    ** read them all: where only one device has any, it stands for both
    ** (no difference weighed); with none, 0 on both */
    double rd[2] = {0, 0};
    int64_t nrd[2] = {0, 0};
    for (int64_t i = 0; i < mm->n; i++) {
        const rf_rt_place_rec *r = &mm->recs[i];
        if (r->type == 'r' && r->prog == q->prog && r->read_s >= 0) rd[r->gpu != 0] += r->read_s, nrd[r->gpu != 0]++;
    }
    for (int w = 0; w < 2; w++) rd[w] = nrd[w] ? rd[w] / (double)nrd[w] : nrd[!w] ? rd[!w] / (double)nrd[!w] : 0;
    out->cpu_read_s = rd[0];
    out->gpu_read_s = rd[1];
    out->cpu_s = cpu_run + out->cpu_read_s;
    /* the GPU's fixed costs: its start as measured in runs that started the
    ** same way (alone in a fresh process, beside a holder, or in a process
    ** whose driver runs: start[state], the states of rf_rt_place_rec.fresh),
    ** copies at the measured rate; this program's own runs (start[.][1])
    ** where there are any: how much of the start its reading hides, and what
    ** its copies hold beyond the columns' bytes (the strings' dictionary:
    ** q13's comments), are its own */
    double start[3][2] = {{0, 0}, {0, 0}, {0, 0}}, copy_b[2] = {0, 0}, copy_s[2] = {0, 0};
    int64_t nstart[3][2] = {{0, 0}, {0, 0}, {0, 0}};
    for (int64_t i = 0; i < mm->n; i++) {
        const rf_rt_place_rec *r = &mm->recs[i];
        if (r->type != 'r' || !r->gpu || r->fresh < 0 || r->fresh > 2) continue;
        int own = r->prog == q->prog;
        for (int w = 0; w <= own; w++) {
            start[r->fresh][w] += r->start_s, nstart[r->fresh][w]++;
            if (r->copy_s > 0 && r->bytes > 0) copy_b[w] += r->bytes, copy_s[w] += r->copy_s;
        }
    }
    int want = q->gpu_started ? 0 : q->gpu_held ? 2 : 1, wc = copy_s[1] > 0 ? 1 : 0;
    out->gpu_held = want == 2;
    out->gpu_start_s = mean_start(start[want], nstart[want], want ? RF_RT_PLACE_GPU_START_S : 0);
    /* a held driver's start not measured yet: a share of a fresh one's */
    if (want == 2 && !nstart[2][0] && !nstart[2][1]) {
        out->gpu_start_s = RF_RT_PLACE_HELD_SHARE * mean_start(start[1], nstart[1], RF_RT_PLACE_GPU_START_S);
        out->held_guessed = 1;
    }
    out->gpu_copy_s = q->bytes / (copy_s[wc] > 0 ? copy_b[wc] / copy_s[wc] : RF_RT_PLACE_GPU_BW);
    out->gpu_s = out->gpu_read_s + gpu_run + out->gpu_start_s + out->gpu_copy_s;
    /* the runs ahead: the start once, kept inputs read and copied once */
    int64_t runs = q->runs > 1 ? q->runs : 1;
    double rn = (double)runs, once = q->kept ? 1 : rn;
    out->runs = runs;
    out->later_gain_s = q->later_gain_s > 0 ? q->later_gain_s : 0;
    out->cpu_total_s = rn * cpu_run + once * out->cpu_read_s;
    double started_total = rn * gpu_run + once * (out->gpu_copy_s + out->gpu_read_s);
    out->gpu_total_s = started_total + out->gpu_start_s;
    double cpu_side = out->cpu_total_s + out->later_gain_s;
    out->gpu = started_total < out->cpu_total_s && out->gpu_total_s < cpu_side;
    /* a near tie with the start still to pay: the CPU, which needs none */
    if (out->gpu && !q->gpu_started && out->gpu_total_s > cpu_side * (1 - RF_RT_PLACE_TIE)) {
        out->gpu = 0;
        out->tie = 1;
    }
    free(x1);
    free(x2);
    free(y);
}

double rf_rt_place_gain(const rf_rt_place_model *m, const rf_rt_place_query *q)
{
    rf_rt_place_query w = *q;
    w.gpu_started = 1;
    w.later_gain_s = 0;
    rf_rt_place_choice c;
    rf_rt_place_predict(m, &w, &c);
    double g = c.cpu_total_s - c.gpu_total_s;
    return g > 0 ? g : 0;
}
