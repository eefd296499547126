/*
** db/db_read.c: reading one column or dictionary of a database.
**
** Owns: mapping a file the manifest lists, the checks that make it safe to
** hand to the runtime (its size, its CRC-32C, and every value one its type
** allows), a float column's -0.0s (an older build's) read as 0.0 in the
** private mapping, and the zero-page stand-in for columns a program never
** reads.
** A file is verified when it is mapped, every time: the manifest's checksum
** covers only the manifest, so this is where a damaged column is caught, and
** only the columns a program reads are paid for. A big file is verified by
** several threads, each its piece's CRC-32C and values in one pass (the
** pieces' CRCs combined), which also brings its pages in. A narrow
** column's blocks are widened (db_narrow.c) in the same pass, into memory
** the mapping owns.
*/
#include "db_internal.h"

#define VERIFY_MAX 64 /* threads checking one file */

#include <errno.h>
#include <fcntl.h>
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
    case RF_TYPE_DEC128: return n ? 0 : -1; /* never in a database: the manifest's check refuses the type */
    case RF_TYPE_DECIMAL: {
        const int64_t *v = data;
        if (any_bad_decimal(v, n))
            for (int64_t i = 0; i < n; i++)
                if (v[i] == INT64_MIN) return i;
        return -1;
    }
    case RF_TYPE_FLOAT: return -1; /* every bit pattern is a float: inf, -inf and NaN are values */
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

/* Opens and maps the first `size` bytes of dir/file, which must have at
** least that many (a column or strings file may run on: the tail of an
** in-place append that was stopped before its manifest, no part of the
** database) or, exact, exactly that many (a dictionary); populate: fault
** every page in now (the whole file will be read by one thread). */
static rf_status map_only_ex(const rf_db *db, const char *file, uint64_t size, int exact, int populate, rf_db_map *m,
                             rf_diags *d)
{
    m->addr = NULL;
    m->len = 0;
    char *path = rf_sprintf("%s/%s", db->dir, file);
    if (!path) return RF_ENOMEM;
    rf_loc loc = rf_mkloc(path, 0, 0);
    rf_status st = RF_OK;
    /* (non-blocking: a named pipe put in a column's place would block the open) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        rf_error(d, loc, "cannot read this file of the database: %s", strerror(errno));
        st = errno == ENOENT ? RF_EUSER : RF_EIO;
        if (fd >= 0) close(fd);
    } else if (!S_ISREG(sb.st_mode)) {
        rf_error(d, loc, "damaged: not a regular file (%s), where the manifest names a file of %llu bytes",
                 S_ISDIR(sb.st_mode) ? "a folder" : S_ISFIFO(sb.st_mode) ? "a named pipe" : "a device or socket",
                 (unsigned long long)size);
        close(fd);
        st = RF_EUSER;
    } else if ((uint64_t)sb.st_size < size || (exact && (uint64_t)sb.st_size != size)) {
        rf_error(d, loc, "truncated or damaged: the file is %lld bytes, the manifest says %llu", (long long)sb.st_size,
                 (unsigned long long)size);
        close(fd);
        st = RF_EUSER;
    } else {
        if (size > 0) {
            void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
            if (p == MAP_FAILED) {
                rf_error(d, loc, "cannot map this file of the database: %s", strerror(errno));
                st = errno == ENOMEM ? RF_ENOMEM : RF_EIO;
            } else {
                m->addr = p;
                m->len = size;
            }
        }
        close(fd);
    }
    free(path);
    return st;
}

static rf_status map_only(const rf_db *db, const char *file, uint64_t size, int populate, rf_db_map *m, rf_diags *d)
{
    return map_only_ex(db, file, size, 0, populate, m, d);
}

/* Maps dir/file, which must be `size` bytes with CRC-32C crc; for a column
** (width > 0) also finds the first row whose value its type does not allow
** (*bad, -1: none). Big files are checked by several threads at once, each
** a piece (faulting its pages in as it goes), their CRCs then combined. */
static rf_status map_file(const rf_db *db, const char *file, uint64_t size, uint32_t crc, int width, rf_type type,
                          uint64_t dict_count, rf_db_map *m, int64_t *bad, rf_diags *d)
{
    *bad = -1;
    int nthreads = verify_threads(size);
    /* one thread: the kernel maps every page at once; several: each faults
    ** its own piece in, in parallel */
    rf_status st = map_only_ex(db, file, size, width == 0 /* a dictionary: exact */, nthreads <= 1, m, d);
    if (st) return st;
    if (verify(m->addr, size, width, type, dict_count, nthreads, bad) != crc) {
        char *path = rf_sprintf("%s/%s", db->dir, file);
        rf_error(d, rf_mkloc(path ? path : file, 0, 0), "the file is corrupted (checksum mismatch)");
        free(path);
        rf_db_unmap(m);
        st = RF_EUSER;
    }
    return st;
}

/* bad_value of values that may not be aligned (a narrow column's block
** stored at the column's width follows blocks of other widths): checked a
** piece at a time in aligned memory. */
static int64_t bad_value_unaligned(rf_type t, const unsigned char *p, int64_t n, int width, uint64_t dict_count)
{
    enum { PIECE = 4096 };
    int64_t piece[PIECE]; /* 32 KiB: room for PIECE values of 8 bytes */
    for (int64_t i = 0; i < n; i += PIECE) {
        int64_t k = n - i < PIECE ? n - i : PIECE;
        memcpy(piece, p + i * width, (size_t)(k * width));
        int64_t r = bad_value(t, piece, k, dict_count);
        if (r >= 0) return i + r;
    }
    return -1;
}

/* ---- format 2: a block at a time ------------------------------------- */

enum { BLOCK_OK, BLOCK_CRC, BLOCK_STR_CRC, BLOCK_VALUE, BLOCK_OFFSETS, BLOCK_UTF8, BLOCK_NARROW };

/* The check of the kept blocks of one column, blocks [b0, b1) per thread. */
typedef struct bcheck {
    const rf_db_table *t;
    const rf_db_column *col;
    const unsigned char *p; /* the column file */
    const char *s;          /* plain strings: the strings file */
    unsigned char *out;     /* a narrow column: its rows decoded, at the runtime's width */
    const uint8_t *keep;
    int nthreads;
    /* per thread: its first failing block, what failed, the row */
    int64_t bad_block[VERIFY_MAX], bad_row[VERIFY_MAX];
    int why[VERIFY_MAX];
} bcheck;

/* What is wrong with block b (BLOCK_OK: nothing); *row the first bad row. */
static int check_block(const bcheck *j, int64_t b, int64_t *row)
{
    const rf_db_table *t = j->t;
    const rf_db_column *col = j->col;
    const rf_db_block *bl = &col->blocks[b];
    int64_t r0 = b * (int64_t)t->block_rows, r1 = r0 + t->block_rows;
    if (r1 > t->nrows) r1 = t->nrows;
    int width = rf_db_col_width(col->type, col->enc);
    const unsigned char *v = j->p + r0 * width;
    *row = r0;
    if (col->narrow) {
        /* its stored bytes checked, then widened into the caller's rows
        ** (still in the cache); values stored as they are, checked there */
        v = j->p + bl->at;
        if (rf_db_crc32c(0, v, (r1 - r0) * bl->width) != bl->crc) return BLOCK_CRC;
        if (!j->out) {
            /* checked as stored (rf_db_map_column_stored): nothing widened */
            int64_t r = bl->width < width ? rf_db_narrow_check(bl, v, r1 - r0)
                                          : bad_value_unaligned(col->type, v, r1 - r0, width, col->dict_count);
            if (r >= 0) *row = r0 + r;
            return r < 0 ? BLOCK_OK : bl->width < width ? BLOCK_NARROW : BLOCK_VALUE;
        }
        unsigned char *o = j->out + r0 * width;
        int64_t r = rf_db_narrow_decode(col->type, bl, v, r1 - r0, o);
        if (r >= 0) *row = r0 + r;
        if (r >= 0) return BLOCK_NARROW;
        if (bl->width < width) return BLOCK_OK; /* within [min, max], which the manifest checked */
        r = bad_value(col->type, o, r1 - r0, col->dict_count);
        if (r >= 0) *row = r0 + r;
        return r >= 0 ? BLOCK_VALUE : BLOCK_OK;
    }
    if (rf_db_crc32c(0, v, (r1 - r0) * width) != bl->crc) return BLOCK_CRC;
    if (col->enc != RF_DB_ENC_PLAIN) {
        int64_t r = bad_value(col->type, v, r1 - r0, col->dict_count);
        if (r >= 0) *row = r0 + r;
        return r >= 0 ? BLOCK_VALUE : BLOCK_OK;
    }
    uint64_t lo = (uint64_t)bl->min, hi = (uint64_t)bl->max; /* the manifest checked lo <= hi <= size */
    if ((hi > lo ? rf_db_crc32c(0, j->s + lo, (int64_t)(hi - lo)) : 0) != bl->str_crc) return BLOCK_STR_CRC;
    const uint64_t *o = (const uint64_t *)v; /* 8-aligned: the mapping starts on a page */
    if (r1 > r0 && o[0] != lo) return BLOCK_OFFSETS;
    for (int64_t i = 0; i < r1 - r0; i++) {
        uint64_t end = i + 1 < r1 - r0 ? o[i + 1] : hi;
        if (end < o[i] || end > hi) {
            *row = r0 + i;
            return BLOCK_OFFSETS;
        }
        /* with the whole valid UTF-8, no string may start inside a character */
        if (o[i] < end && ((unsigned char)j->s[o[i]] & 0xc0) == 0x80) {
            *row = r0 + i;
            return BLOCK_UTF8;
        }
    }
    if (hi > lo && rf_val_check_utf8(j->s + lo, (int64_t)(hi - lo), NULL) != RF_OK) return BLOCK_UTF8;
    return BLOCK_OK;
}

static void check_part(bcheck *j, int tid)
{
    int64_t nb = j->col->nblocks;
    int64_t b0 = nb * tid / j->nthreads, b1 = nb * (tid + 1) / j->nthreads;
    j->bad_block[tid] = -1;
    j->why[tid] = BLOCK_OK;
    for (int64_t b = b0; b < b1; b++) {
        if (j->keep && !j->keep[b]) continue;
        int64_t row;
        int why = check_block(j, b, &row);
        if (why != BLOCK_OK) {
            j->bad_block[tid] = b;
            j->bad_row[tid] = row;
            j->why[tid] = why;
            return;
        }
    }
}

typedef struct bthread {
    bcheck *j;
    int tid;
} bthread;

static void *check_thread(void *arg)
{
    bthread *b = arg;
    check_part(b->j, b->tid);
    return NULL;
}

/* Checks the kept blocks of column c (its file mapped at p, a plain string
** column's strings at s); an error names the file at fault and the block. */
static rf_status check_blocks(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep,
                              const void *p, const char *s, unsigned char *out, rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    bcheck *j = rf_calloc(1, sizeof *j);
    if (!j) return RF_ENOMEM;
    *j = (bcheck){.t = t, .col = col, .p = p, .s = s, .out = out, .keep = keep};
    /* a narrow column: threads by the bytes it widens into */
    uint64_t bytes = col->narrow ? (uint64_t)t->nrows * (uint64_t)rf_db_type_width(col->type)
                                 : col->size + (col->enc == RF_DB_ENC_PLAIN ? col->str_size : 0);
    j->nthreads = verify_threads(bytes);
    if (j->nthreads > col->nblocks) j->nthreads = col->nblocks < 1 ? 1 : (int)col->nblocks;
    pthread_t tid[VERIFY_MAX];
    bthread args[VERIFY_MAX];
    int started[VERIFY_MAX];
    for (int i = 1; i < j->nthreads; i++) {
        args[i] = (bthread){j, i};
        started[i] = pthread_create(&tid[i], NULL, check_thread, &args[i]) == 0;
    }
    check_part(j, 0);
    for (int i = 1; i < j->nthreads; i++) {
        if (started[i]) pthread_join(tid[i], NULL);
        else check_part(j, i);
    }
    rf_status st = RF_OK;
    for (int i = 0; i < j->nthreads && !st; i++) {
        if (j->why[i] == BLOCK_OK) continue;
        int64_t b = j->bad_block[i], row = j->bad_row[i];
        const char *file = j->why[i] == BLOCK_STR_CRC || j->why[i] == BLOCK_UTF8 ? col->str_file : col->file;
        char *path = rf_sprintf("%s/%s", db->dir, file);
        rf_loc loc = rf_mkloc(path ? path : file, 0, 0);
        switch (j->why[i]) {
        case BLOCK_CRC:
        case BLOCK_STR_CRC:
            rf_error(d, loc, "the file is corrupted (checksum mismatch in block %lld, rows %lld to %lld)",
                     (long long)b + 1, (long long)row + 1,
                     (long long)((b + 1) * (int64_t)t->block_rows < t->nrows ? (b + 1) * (int64_t)t->block_rows : t->nrows));
            break;
        case BLOCK_VALUE:
            rf_error(d, loc, "damaged: row %lld holds a value no %s can have", (long long)row + 1,
                     col->type == RF_TYPE_STRING ? "dictionary code" : rf_val_type_name(col->type));
            break;
        case BLOCK_NARROW:
            rf_error(d, loc, "damaged: row %lld's stored value is past block %lld's maximum", (long long)row + 1,
                     (long long)b + 1);
            break;
        case BLOCK_OFFSETS:
            rf_error(d, loc, "damaged: row %lld's string is not within block %lld's strings", (long long)row + 1,
                     (long long)b + 1);
            break;
        default:
            rf_error(d, loc, "damaged: block %lld's strings are not valid UTF-8 (from row %lld)", (long long)b + 1,
                     (long long)row + 1);
            break;
        }
        free(path);
        st = RF_EUSER;
    }
    free(j);
    return st;
}

/* len bytes of zeroed, writable anonymous memory starting on a 2 MiB
** boundary and asked to be huge pages (NULL: none): the threads that widen a
** column into it then fault a page per 2 MiB, not per 4 KiB. On a virtual
** machine each first touch of a page may cost an exit to the hypervisor:
** on the 2-core development VM, 48 MB of 4 KiB pages took 330-430 ms to
** write the first time, of huge pages 8-13 ms. (Where the kernel gives no
** huge pages it is ordinary memory.) The slack before and after is given
** back, so rf_db_unmap of (p, len) frees it all. */
static void *huge_zeros(uint64_t len)
{
    const uint64_t huge = UINT64_C(1) << 21;
    uint64_t span = len + huge;
    void *p = mmap(NULL, (size_t)span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return NULL;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1);
    uintptr_t end = (uintptr_t)p + span, used = a + ((len + 4095) & ~UINT64_C(4095));
    if (a > (uintptr_t)p) munmap(p, a - (uintptr_t)p);
    if (end > used) munmap((void *)used, end - used);
#ifdef MADV_HUGEPAGE
    madvise((void *)a, (size_t)len, MADV_HUGEPAGE);
#endif
    return (void *)a;
}

/* A narrow column: its file mapped, its kept blocks checked and widened
** into anonymous memory of nrows values (m then owns that; the file is
** unmapped; rows of other blocks are zero pages, never touched). */
static rf_status map_narrow(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep, rf_db_map *m,
                            const void **data, rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    rf_db_map fm = {0, 0};
    m->addr = NULL;
    m->len = 0;
    rf_status st = map_only(db, col->file, col->size, 0, &fm, d);
    if (st) return st;
    uint64_t len = (uint64_t)t->nrows * (uint64_t)rf_db_type_width(col->type);
    if (len > 0) {
        void *p = huge_zeros(len);
        if (!p) {
            char *path = rf_sprintf("%s/%s", db->dir, col->file);
            rf_error(d, rf_mkloc(path ? path : col->file, 0, 0), "out of memory widening this column (%llu bytes)",
                     (unsigned long long)len);
            free(path);
            rf_db_unmap(&fm);
            return RF_ENOMEM;
        }
        m->addr = p;
        m->len = len;
    }
    st = check_blocks(db, t, c, keep, fm.addr, NULL, m->addr, d);
    rf_db_unmap(&fm);
    if (st) {
        rf_db_unmap(m);
        return st;
    }
    *data = m->addr;
    return RF_OK;
}

rf_status rf_db_map_huge(uint64_t len, rf_db_map *m)
{
    m->addr = NULL;
    m->len = 0;
    if (len == 0) return RF_OK;
    void *p = huge_zeros(len);
    if (!p) return RF_ENOMEM;
    m->addr = p;
    m->len = len;
    return RF_OK;
}

rf_status rf_db_map_column_stored(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep,
                                  rf_db_map *m, rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    m->addr = NULL;
    m->len = 0;
    if (!col->narrow) return RF_EINTERNAL;
    rf_status st = map_only(db, col->file, col->size, 0, m, d);
    if (!st) st = check_blocks(db, t, c, keep, m->addr, NULL, NULL, d);
    if (st) rf_db_unmap(m);
    return st;
}

/* A float column's -0.0s read as 0.0 (a float zero has no sign,
** docs/LANGUAGE.md): redfox never writes -0.0, but a database written by a
** build before that may hold it. The rows of the blocks keep flags (NULL:
** all) are scanned after their check; where one is -0.0 the mapping (private:
** the file never changes) becomes writable while those values are
** rewritten, copying only the pages they are on. */
static rf_status float_zeros(const rf_db *db, const rf_db_table *t, const rf_db_column *col, const uint8_t *keep,
                             rf_db_map *m, rf_diags *d)
{
    uint64_t *v = m->addr;
    const uint64_t negzero = UINT64_C(1) << 63;
    int writable = 0;
    int64_t br = t->block_rows ? (int64_t)t->block_rows : t->nrows + 1; /* format 1: no blocks, one piece */
    for (int64_t b = 0, nb = (t->nrows + br - 1) / br; b < nb; b++) {
        if (keep && db->block_crcs && !keep[b]) continue;
        int64_t r0 = b * br, r1 = r0 + br < t->nrows ? r0 + br : t->nrows;
        for (int64_t r = r0; r < r1; r++) {
            if (v[r] != negzero) continue;
            if (!writable && mprotect(m->addr, (size_t)m->len, PROT_READ | PROT_WRITE)) {
                char *path = rf_sprintf("%s/%s", db->dir, col->file);
                rf_error(d, rf_mkloc(path ? path : col->file, 0, 0), "cannot rewrite -0.0 as 0.0 in memory: %s",
                         strerror(errno));
                free(path);
                return errno == ENOMEM ? RF_ENOMEM : RF_EIO;
            }
            writable = 1;
            v[r] = 0;
        }
    }
    if (writable) mprotect(m->addr, (size_t)m->len, PROT_READ); /* as it was; nothing fails for want of it */
    return RF_OK;
}

rf_status rf_db_map_column_blocks(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep,
                                  rf_db_map *m, const void **data, rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    *data = NULL;
    if (col->enc == RF_DB_ENC_PLAIN) return RF_EINTERNAL;
    if (!db->block_crcs) {
        /* format 1: one checksum for the whole file */
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
        if (col->type == RF_TYPE_FLOAT && (st = float_zeros(db, t, col, keep, m, d))) {
            rf_db_unmap(m);
            return st;
        }
        *data = m->addr;
        return RF_OK;
    }
    if (col->narrow) return map_narrow(db, t, c, keep, m, data, d);
    rf_status st = map_only(db, col->file, col->size, !keep && verify_threads(col->size) == 1, m, d);
    if (!st) st = check_blocks(db, t, c, keep, m->addr, NULL, NULL, d);
    if (!st && col->type == RF_TYPE_FLOAT) st = float_zeros(db, t, col, keep, m, d);
    if (st) {
        rf_db_unmap(m);
        return st;
    }
    *data = m->addr;
    return RF_OK;
}

rf_status rf_db_map_column(const rf_db *db, const rf_db_table *t, int32_t c, rf_db_map *m, const void **data,
                           rf_diags *d)
{
    return rf_db_map_column_blocks(db, t, c, NULL, m, data, d);
}

rf_status rf_db_map_strings(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep, rf_db_map *m,
                            rf_db_map *sm, const uint64_t **off, const char **bytes, rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    *off = NULL;
    *bytes = NULL;
    sm->addr = NULL;
    sm->len = 0;
    if (col->enc != RF_DB_ENC_PLAIN || !db->block_crcs) return RF_EINTERNAL;
    int pop = !keep && verify_threads(col->size + col->str_size) == 1;
    rf_status st = map_only(db, col->file, col->size, pop, m, d);
    if (!st) st = map_only(db, col->str_file, col->str_size, pop, sm, d);
    if (!st) st = check_blocks(db, t, c, keep, m->addr, sm->addr, NULL, d);
    if (st) {
        rf_db_unmap(m);
        rf_db_unmap(sm);
        return st;
    }
    *off = m->addr;
    *bytes = sm->addr;
    return RF_OK;
}

rf_status rf_db_map_dict(const rf_db *db, const rf_db_table *t, int32_t c, rf_db_map *m, const uint64_t **off,
                         const char **bytes, rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    *off = NULL;
    *bytes = NULL;
    if (col->type != RF_TYPE_STRING || col->enc != RF_DB_ENC_VALUES) return RF_EINTERNAL;
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
