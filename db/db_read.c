/*
** db/db_read.c: reading one column or dictionary of a database.
**
** Owns: mapping a file the manifest lists, the checks that make it safe to
** hand to the runtime (its size, its CRC-32C, and every value one its type
** allows), and the zero-page stand-in for columns a program never reads.
** A file is verified when it is mapped, every time: the manifest's checksum
** covers only the manifest, so this is where a damaged column is caught, and
** only the columns a program reads are paid for. A big file is verified by
** several threads, each its piece's CRC-32C and values in one pass (the
** pieces' CRCs combined), which also brings its pages in.
*/
#include "db_internal.h"

#define VERIFY_MAX 64 /* threads checking one file */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void rf_db_unmap(rf_db_map *m)
{
    if (m->addr && m->len) munmap(m->addr, (size_t)m->len);
    m->addr = NULL;
    m->len = 0;
}

rf_status rf_db_map_zeros(uint64_t nbytes, rf_db_map *m)
{
    m->addr = NULL;
    m->len = 0;
    if (nbytes == 0) return RF_OK;
    void *p = mmap(NULL, (size_t)nbytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return RF_ENOMEM;
    m->addr = p;
    m->len = nbytes;
    return RF_OK;
}

/* Whether a value of v[0..n) is not allowed, 64 values a step: a loop of a
** fixed trip count, which the compiler turns into vector instructions at
** -O2 (an open-ended one stays scalar and made this check cost as much as
** the CRC), then the rest one by one. */
#define ANY_NOT_ALLOWED(T, v, n, BAD)                                                                             \
    do {                                                                                                       \
        int64_t i_ = 0;                                                                                        \
        for (; i_ + 64 <= (n); i_ += 64) {                                                                     \
            T acc_ = 0; /* of the values' own width: no narrowing in the vector loop */                        \
            for (int j_ = 0; j_ < 64; j_++) {                                                                  \
                T x = (v)[i_ + j_];                                                                            \
                acc_ |= (T)(BAD);                                                                              \
            }                                                                                                  \
            if (acc_) return 1;                                                                                \
        }                                                                                                      \
        for (; i_ < (n); i_++) {                                                                               \
            T x = (v)[i_];                                                                                     \
            if (BAD) return 1;                                                                                 \
        }                                                                                                      \
        return 0;                                                                                              \
    } while (0)

/* x == INT64_MIN, in operations SSE2 has for 64-bit lanes (no compare):
** y = x ^ 2^63 is 0 exactly then, and only 0 has y | -y below 2^63 */
static int any_bad_decimal(const int64_t *v, int64_t n)
{
    ANY_NOT_ALLOWED(uint64_t, (const uint64_t *)v, n,
                    (((x ^ (UINT64_C(1) << 63)) | (0 - (x ^ (UINT64_C(1) << 63)))) >> 63) ^ 1);
}
static int any_bad_float(const uint64_t *v, int64_t n) { ANY_NOT_ALLOWED(uint64_t, v, n, (~x & (UINT64_C(0x7ff) << 52)) == 0); }
static int any_bad_date(const int32_t *v, int64_t n)
{
    ANY_NOT_ALLOWED(uint32_t, (const uint32_t *)v, n, x - (uint32_t)RF_DATE_MIN > (uint32_t)(RF_DATE_MAX - RF_DATE_MIN));
}
static int any_bad_bool(const uint8_t *v, int64_t n) { ANY_NOT_ALLOWED(uint8_t, v, n, x > 1); }
static int any_bad_code(const uint32_t *v, int64_t n, uint64_t count)
{
    uint32_t lim = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count; /* codes are u32: at most 2^31 - 1 entries */
    ANY_NOT_ALLOWED(uint32_t, v, n, x >= lim);
}

/* The first row whose value the type does not allow, or -1. */
static int64_t bad_value(rf_type t, const void *data, int64_t n, uint64_t dict_count)
{
    switch (t) {
    case RF_TYPE_INT: return -1;
    case RF_TYPE_DECIMAL: {
        const int64_t *v = data;
        if (any_bad_decimal(v, n))
            for (int64_t i = 0; i < n; i++)
                if (v[i] == INT64_MIN) return i;
        return -1;
    }
    case RF_TYPE_FLOAT: {
        const double *v = data;
        if (any_bad_float(data, n))
            for (int64_t i = 0; i < n; i++)
                if (!isfinite(v[i])) return i;
        return -1;
    }
    case RF_TYPE_DATE: {
        const int32_t *v = data;
        if (any_bad_date(v, n))
            for (int64_t i = 0; i < n; i++)
                if (v[i] < RF_DATE_MIN || v[i] > RF_DATE_MAX) return i;
        return -1;
    }
    case RF_TYPE_BOOL: {
        const uint8_t *v = data;
        if (any_bad_bool(v, n))
            for (int64_t i = 0; i < n; i++)
                if (v[i] > 1) return i;
        return -1;
    }
    case RF_TYPE_STRING: {
        const uint32_t *v = data;
        if (any_bad_code(v, n, dict_count))
            for (int64_t i = 0; i < n; i++)
                if (v[i] >= dict_count) return i;
        return -1;
    }
    }
    return 0;
}

/* One thread's piece of a file's check. */
typedef struct vpart {
    const unsigned char *p;
    int64_t n, row0;     /* its bytes; its first row (columns) */
    int width;           /* bytes a value; 0: a dictionary, no values to check */
    rf_type type;
    uint64_t dict_count;
    uint32_t crc;
    int64_t bad;         /* the first row of the piece not allowed, -1: none */
} vpart;

/* The CRC and the values in steps that stay in the cache between the two. */
#define VSTEP ((int64_t)1 << 18)

static void *verify_part(void *arg)
{
    vpart *v = arg;
    uint32_t crc = 0;
    v->bad = -1;
    for (int64_t at = 0; at < v->n; at += VSTEP) {
        int64_t len = v->n - at < VSTEP ? v->n - at : VSTEP;
        crc = rf_db_crc32c(crc, v->p + at, len);
        if (v->width && v->bad < 0) {
            int64_t r = bad_value(v->type, v->p + at, len / v->width, v->dict_count);
            if (r >= 0) v->bad = v->row0 + at / v->width + r;
        }
    }
    v->crc = crc;
    return NULL;
}

/* Threads for checking a file of size bytes: one per 16 MiB, at most the
** processors (the pages are in memory or the disk is the limit anyway). */
static int verify_threads(uint64_t size)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t n = size >> 24;
    if (cpus < 1) cpus = 1;
    if (n > (uint64_t)cpus) n = (uint64_t)cpus;
    if (n > VERIFY_MAX) n = VERIFY_MAX;
    return n < 1 ? 1 : (int)n;
}

/* The CRC-32C of p[0..size) and, for a column, its first bad row (*bad). */
static uint32_t verify(const void *p, uint64_t size, int width, rf_type type, uint64_t dict_count, int nthreads,
                       int64_t *bad)
{
    vpart parts[VERIFY_MAX];
    pthread_t tid[VERIFY_MAX];
    int started[VERIFY_MAX];
    int unit = width > 0 ? width : 1;
    int64_t units = (int64_t)size / unit;
    for (int i = 0; i < nthreads; i++) {
        int64_t u0 = units * i / nthreads, u1 = units * (i + 1) / nthreads;
        parts[i] = (vpart){(const unsigned char *)p + u0 * unit, (u1 - u0) * unit, u0, width, type, dict_count, 0, -1};
        /* the caller takes the first piece; a thread that does not start
        ** leaves its piece to the caller too */
        started[i] = i > 0 && pthread_create(&tid[i], NULL, verify_part, &parts[i]) == 0;
    }
    verify_part(&parts[0]);
    for (int i = 1; i < nthreads; i++) {
        if (started[i]) pthread_join(tid[i], NULL);
        else verify_part(&parts[i]);
    }
    uint32_t crc = parts[0].crc;
    *bad = parts[0].bad;
    for (int i = 1; i < nthreads; i++) {
        crc = rf_db_crc32c_combine(crc, parts[i].crc, parts[i].n);
        if (*bad < 0) *bad = parts[i].bad;
    }
    return crc;
}

/* Maps dir/file, which must be `size` bytes with CRC-32C crc; for a column
** (width > 0) also finds the first row whose value its type does not allow
** (*bad, -1: none). Big files are checked by several threads at once, each
** a piece (faulting its pages in as it goes), their CRCs then combined. */
static rf_status map_file(const rf_db *db, const char *file, uint64_t size, uint32_t crc, int width, rf_type type,
                          uint64_t dict_count, rf_db_map *m, int64_t *bad, rf_diags *d)
{
    m->addr = NULL;
    m->len = 0;
    *bad = -1;
    char *path = rf_sprintf("%s/%s", db->dir, file);
    if (!path) return RF_ENOMEM;
    rf_loc loc = rf_mkloc(path, 0, 0);
    rf_status st = RF_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        rf_error(d, loc, "cannot read this file of the database: %s", strerror(errno));
        st = errno == ENOENT ? RF_EUSER : RF_EIO;
        if (fd >= 0) close(fd);
        goto done;
    }
    if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != size) {
        rf_error(d, loc, "truncated or damaged: the file is %lld bytes, the manifest says %llu", (long long)sb.st_size,
                 (unsigned long long)size);
        close(fd);
        st = RF_EUSER;
        goto done;
    }
    int nthreads = verify_threads(size);
    if (size > 0) {
        /* one thread: the kernel maps every page at once; several: each
        ** faults its own piece in, in parallel */
        void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE | (nthreads > 1 ? 0 : MAP_POPULATE), fd, 0);
        if (p == MAP_FAILED) {
            rf_error(d, loc, "cannot map this file of the database: %s", strerror(errno));
            close(fd);
            st = errno == ENOMEM ? RF_ENOMEM : RF_EIO;
            goto done;
        }
        m->addr = p;
        m->len = size;
    }
    close(fd);
    if (verify(m->addr, size, width, type, dict_count, nthreads, bad) != crc) {
        rf_error(d, loc, "the file is corrupted (checksum mismatch)");
        rf_db_unmap(m);
        st = RF_EUSER;
    }
done:
    free(path);
    return st;
}

rf_status rf_db_map_column(const rf_db *db, const rf_db_table *t, int32_t c, rf_db_map *m, const void **data,
                           rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    *data = NULL;
    int64_t row = -1;
    rf_status st = map_file(db, col->file, col->size, col->crc, rf_db_type_width(col->type), col->type,
                            col->dict_count, m, &row, d);
    if (st) return st;
    if (row >= 0) {
        char *path = rf_sprintf("%s/%s", db->dir, col->file);
        rf_error(d, rf_mkloc(path ? path : col->file, 0, 0), "damaged: row %lld holds a value no %s can have",
                 (long long)row + 1, col->type == RF_TYPE_STRING ? "dictionary code" : rf_val_type_name(col->type));
        free(path);
        rf_db_unmap(m);
        return RF_EUSER;
    }
    *data = m->addr;
    return RF_OK;
}

rf_status rf_db_map_dict(const rf_db *db, const rf_db_table *t, int32_t c, rf_db_map *m, const uint64_t **off,
                         const char **bytes, rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    *off = NULL;
    *bytes = NULL;
    if (col->type != RF_TYPE_STRING) return RF_EINTERNAL;
    int64_t unused;
    rf_status st = map_file(db, col->dict_file, col->dict_size, col->dict_crc, 0, RF_TYPE_INT, 0, m, &unused, d);
    if (st) return st;
    uint64_t n = col->dict_count, head = 8 * (n + 1), avail = col->dict_size - head;
    /* the offsets are 8-aligned: the mapping starts on a page */
    const uint64_t *o = m->addr;
    const char *b = (const char *)m->addr + head;
    const char *why = NULL;
    uint64_t at = 0;
    if (o[0] != 0) why = "the first offset is not 0";
    for (uint64_t i = 0; i < n && !why; i++) {
        if (o[i + 1] < o[i] || o[i + 1] > avail) {
            why = "offsets out of order or past the end";
            at = i;
        } else if (o[i] < avail && ((unsigned char)b[o[i]] & 0xc0) == 0x80) {
            /* with the whole being UTF-8, no entry may start inside a character */
            why = "an entry is not valid UTF-8";
            at = i;
        }
    }
    if (!why && o[n] != avail) why = "bytes after the last entry";
    if (!why && rf_val_check_utf8(b, (int64_t)avail, NULL) != RF_OK) why = "an entry is not valid UTF-8";
    if (why) {
        char *path = rf_sprintf("%s/%s", db->dir, col->dict_file);
        rf_error(d, rf_mkloc(path ? path : col->dict_file, 0, 0), "damaged dictionary: %s (entry %llu)", why,
                 (unsigned long long)at);
        free(path);
        rf_db_unmap(m);
        return RF_EUSER;
    }
    *off = o;
    *bytes = b;
    return RF_OK;
}
