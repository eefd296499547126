/*
** db/db_read.c: reading one column or dictionary of a database.
**
** Owns: mapping a file the manifest lists, the checks that make it safe to
** hand to the runtime (its size, its CRC-32C, and every value one its type
** allows), and the zero-page stand-in for columns a program never reads.
** A file is verified when it is mapped, every time: the manifest's checksum
** covers only the manifest, so this is where a damaged column is caught, and
** only the columns a program reads are paid for.
*/
#include "db_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
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

/* Maps dir/file, which must be `size` bytes with CRC-32C crc. */
static rf_status map_file(const rf_db *db, const char *file, uint64_t size, uint32_t crc, rf_db_map *m, rf_diags *d)
{
    m->addr = NULL;
    m->len = 0;
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
    if (size > 0) {
        void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
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
    if (rf_db_crc32c(0, m->addr, (int64_t)size) != crc) {
        rf_error(d, loc, "the file is corrupted (checksum mismatch)");
        rf_db_unmap(m);
        st = RF_EUSER;
    }
done:
    free(path);
    return st;
}

/* The first row whose value the type does not allow, or -1. */
static int64_t bad_value(rf_type t, const void *data, int64_t n, uint64_t dict_count)
{
    switch (t) {
    case RF_TYPE_INT: return -1;
    case RF_TYPE_DECIMAL: {
        const int64_t *v = data;
        int any = 0;
        for (int64_t i = 0; i < n; i++) any |= v[i] == INT64_MIN;
        if (any)
            for (int64_t i = 0; i < n; i++)
                if (v[i] == INT64_MIN) return i;
        return -1;
    }
    case RF_TYPE_FLOAT: {
        const double *v = data;
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(v[i])) return i;
        return -1;
    }
    case RF_TYPE_DATE: {
        const int32_t *v = data;
        int any = 0;
        for (int64_t i = 0; i < n; i++) any |= (v[i] < RF_DATE_MIN) | (v[i] > RF_DATE_MAX);
        if (any)
            for (int64_t i = 0; i < n; i++)
                if (v[i] < RF_DATE_MIN || v[i] > RF_DATE_MAX) return i;
        return -1;
    }
    case RF_TYPE_BOOL: {
        const uint8_t *v = data;
        uint8_t any = 0;
        for (int64_t i = 0; i < n; i++) any |= v[i];
        if (any > 1)
            for (int64_t i = 0; i < n; i++)
                if (v[i] > 1) return i;
        return -1;
    }
    case RF_TYPE_STRING: {
        const uint32_t *v = data;
        uint32_t mx = 0;
        for (int64_t i = 0; i < n; i++) mx = v[i] > mx ? v[i] : mx;
        if (n > 0 && mx >= dict_count)
            for (int64_t i = 0; i < n; i++)
                if (v[i] >= dict_count) return i;
        return -1;
    }
    }
    return 0;
}

rf_status rf_db_map_column(const rf_db *db, const rf_db_table *t, int32_t c, rf_db_map *m, const void **data,
                           rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    *data = NULL;
    rf_status st = map_file(db, col->file, col->size, col->crc, m, d);
    if (st) return st;
    int64_t row = bad_value(col->type, m->addr, t->nrows, col->dict_count);
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
    rf_status st = map_file(db, col->dict_file, col->dict_size, col->dict_crc, m, d);
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
