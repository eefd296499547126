/*
** tests/fuzz/fuzz_db.c: libFuzzer target for the database reader (db/). The
** input is a small archive of a database's files: a flags byte, then
** records of (u8 name length, name, u32 little-endian size, bytes). The
** files are written into a scratch folder; with flag bit 0 set the target
** first recomputes the manifest's two CRC-32C fields (so that mutations
** reach the decoder behind the checksums). Then the database is opened and
** every column and dictionary of every table is mapped and checked: each
** must be read or refused with an error naming a file, never crash, leak or
** read out of bounds. Columns are checked whole and then a block at a time
** (only the blocks that flag bit 1 and the block number pick: a reader of
** some blocks); plain string columns (format 2) through their offsets and
** strings, every row's string read; every value of a column read whole one
** its type allows (narrow columns widened within their blocks' ranges).
*/
#include "rf_db.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void clear_dir(void)
{
    DIR *dh = opendir(dir);
    if (!dh) return;
    struct dirent *e;
    char p[400];
    while ((e = readdir(dh)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(dh);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        strcpy(dir, "/tmp/rf_fuzz_db.XXXXXX");
        if (!mkdtemp(dir)) abort();
    }
    clear_dir();
    if (size < 1) return 0;
    int fix = data[0] & 1;
    size_t pos = 1;
    while (pos + 1 <= size) {
        size_t nl = data[pos++];
        if (nl == 0 || pos + nl + 4 > size) break;
        char name[256];
        memcpy(name, data + pos, nl);
        name[nl] = 0;
        pos += nl;
        uint32_t len = (uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8 | (uint32_t)data[pos + 2] << 16 |
                       (uint32_t)data[pos + 3] << 24;
        pos += 4;
        if (len > size - pos) len = (uint32_t)(size - pos);
        int ok = name[0] != '.';
        for (size_t i = 0; i < nl; i++) ok &= (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '.';
        if (ok) {
            uint8_t *buf = malloc(len + 1);
            if (!buf) abort();
            memcpy(buf, data + pos, len);
            if (fix && !strcmp(name, RF_DB_MANIFEST) && len >= 64) {
                put32(buf + 24, rf_db_crc32c(0, buf + 64, (int64_t)len - 64));
                put32(buf + 60, rf_db_crc32c(0, buf, 60));
            }
            char p[400];
            snprintf(p, sizeof p, "%s/%s", dir, name);
            int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                if (write(fd, buf, len) != (ssize_t)len) abort();
                close(fd);
            }
            free(buf);
        }
        pos += len;
    }
    rf_diags d;
    rf_diags_init(&d);
    rf_db *db = NULL;
    rf_status st = rf_db_open(dir, &db, &d);
    if (st == RF_OK) {
        for (int32_t i = 0; i < db->ntables; i++) {
            const rf_db_table *t = &db->tables[i];
            for (int32_t c = 0; c < t->ncols; c++) {
                rf_db_map m, dm;
                const void *col;
                int64_t before = d.count;
                if (t->cols[c].enc == RF_DB_ENC_PLAIN) {
                    const uint64_t *off;
                    const char *bytes;
                    uint8_t *keep = calloc((size_t)t->cols[c].nblocks + 1, 1);
                    if (!keep) abort();
                    for (int64_t b = 0; b < t->cols[c].nblocks; b++) keep[b] = (uint8_t)(!(data[0] & 2) || (b & 1));
                    if (rf_db_map_strings(db, t, c, keep, &m, &dm, &off, &bytes, &d) == RF_OK) {
                        /* every kept row's string is within the strings file */
                        uint64_t sum = 0;
                        int64_t br = t->block_rows;
                        for (int64_t r = 0; r < t->nrows; r++) {
                            if (!keep[r / br]) continue;
                            uint64_t end = (r + 1) % br && r + 1 < t->nrows ? off[r + 1] : (uint64_t)t->cols[c].blocks[r / br].max;
                            if (end > off[r]) sum += (unsigned char)bytes[end - 1] + (unsigned char)bytes[off[r]];
                        }
                        (void)sum;
                        rf_db_unmap(&m);
                        rf_db_unmap(&dm);
                    } else if (d.count == before || !d.items[d.count - 1].loc.file) {
                        abort();
                    }
                    free(keep);
                    continue;
                }
                if (data[0] & 2) {
                    /* a reader of the odd blocks only */
                    uint8_t *keep = calloc((size_t)t->cols[c].nblocks + 1, 1);
                    if (!keep) abort();
                    for (int64_t b = 0; b < t->cols[c].nblocks; b++) keep[b] = (uint8_t)(b & 1);
                    if (rf_db_map_column_blocks(db, t, c, keep, &m, &col, &d) == RF_OK) rf_db_unmap(&m);
                    else if (d.count == before || !d.items[d.count - 1].loc.file) abort();
                    free(keep);
                    before = d.count;
                }
                if (rf_db_map_column(db, t, c, &m, &col, &d) == RF_OK) {
                    /* every value is readable, and one its type allows (a
                    ** narrow column's too: widened within its blocks' ranges) */
                    volatile uint8_t sink = 0;
                    for (uint64_t b = 0; b < m.len; b += 97) sink ^= ((const uint8_t *)m.addr)[b];
                    (void)sink;
                    for (int64_t r = 0; r < t->nrows; r++) {
                        rf_type ty = t->cols[c].type;
                        if ((ty == RF_TYPE_DATE && (((const int32_t *)col)[r] < RF_DATE_MIN || ((const int32_t *)col)[r] > RF_DATE_MAX)) ||
                            (ty == RF_TYPE_DECIMAL && ((const int64_t *)col)[r] == INT64_MIN) ||
                            (ty == RF_TYPE_STRING && ((const uint32_t *)col)[r] >= t->cols[c].dict_count))
                            abort();
                    }
                    rf_db_unmap(&m);
                } else if (d.count == before || !d.items[d.count - 1].loc.file) {
                    abort(); /* a refusal must say which file */
                }
                if (t->cols[c].type == RF_TYPE_STRING && t->cols[c].enc == RF_DB_ENC_VALUES) {
                    const uint64_t *off;
                    const char *bytes;
                    if (rf_db_map_dict(db, t, c, &dm, &off, &bytes, &d) == RF_OK) {
                        uint64_t sum = 0;
                        for (uint64_t k = 0; k < t->cols[c].dict_count; k++)
                            if (off[k + 1] > off[k]) sum += (unsigned char)bytes[off[k + 1] - 1];
                        (void)sum;
                        rf_db_unmap(&dm);
                    }
                }
            }
        }
        rf_db_close(db);
    } else if (d.count == 0 || !d.items[0].loc.file) {
        abort();
    }
    rf_diags_free(&d);
    return 0;
}
