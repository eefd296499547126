/*
** db/db_manifest.c: the database's manifest: its encoding (the header, then
** the tables in the stream encoding of docs/RFX.md), and its decoding and
** validation (docs/DATABASE.md "Validation").
**
** Owns: rf_db_open / rf_db_open_bytes / rf_db_close, and the encoder the
** writer uses (db_internal.h). Every field read is checked before it is
** used; nothing is allocated from a count the manifest's size does not
** bound, so a damaged or crafted manifest is refused with the file named,
** never read out of bounds.
*/
#include "db_internal.h"
#include "rf_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const unsigned char rf_db_magic[8] = {0x89, 'R', 'F', 'D', '\r', '\n', 0x1a, '\n'};

int rf_db_type_width(rf_type t)
{
    switch (t) {
    case RF_TYPE_INT:
    case RF_TYPE_FLOAT:
    case RF_TYPE_DECIMAL: return 8;
    case RF_TYPE_STRING:
    case RF_TYPE_DATE: return 4;
    case RF_TYPE_BOOL: return 1;
    case RF_TYPE_DEC128: return 0; /* not stored in a database (docs/DATABASE.md) */
    }
    return 0;
}

int rf_db_col_width(rf_type t, rf_db_encoding enc) { return enc == RF_DB_ENC_PLAIN ? 8 : rf_db_type_width(t); }

/* lstat, not stat: a manifest.rfdb that is a symbolic link naming nothing
** still makes the folder a database (a broken one, which its readers and
** writers refuse, naming it: rf_db_check_manifest), never a folder of text
** files read without a word, nor an ordinary folder written into */
int rf_db_is_database(const char *dir)
{
    char *p = rf_sprintf("%s/%s", dir, RF_DB_MANIFEST);
    struct stat sb;
    int yes = p && lstat(p, &sb) == 0;
    free(p);
    return yes;
}

/* The target of the symbolic link at path, for a message ("?" where it
** cannot be read); the caller frees it. */
static char *link_target(const char *path)
{
    char buf[4096];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n < 0) return rf_strdup("?");
    buf[n] = 0;
    return rf_strdup(buf);
}

rf_status rf_db_check_manifest(const char *dir, rf_diags *d)
{
    char *p = rf_sprintf("%s/%s", dir, RF_DB_MANIFEST);
    if (!p) return RF_ENOMEM;
    struct stat sb;
    rf_status st = RF_OK;
    if (lstat(p, &sb) == 0 && S_ISLNK(sb.st_mode) && stat(p, &sb) != 0) {
        int err = errno;
        char *to = link_target(p);
        rf_error(d, rf_mkloc(p, 0, 0),
                 "a symbolic link whose target cannot be reached (%s: %s): the folder is a redfox database "
                 "without its manifest, which is neither read nor replaced nor written into (put back the file the "
                 "link names, or remove the link)",
                 to ? to : "?", strerror(err));
        free(to);
        st = RF_EUSER;
    }
    free(p);
    return st;
}

/* A file name the manifest may give: [A-Za-z0-9._-], 1 to 255 bytes, not
** starting with a dot (so never "." or ".." and never a path). */
int rf_db_file_name_ok(const char *s, uint64_t n)
{
    if (n < 1 || n > 255 || s[0] == '.') return 0;
    for (uint64_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return 0;
    }
    return 1;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* ---- encoding ------------------------------------------------------- */

void rf_db_encode(const rf_db *db, rf_buf *out)
{
    rf_buf body;
    rf_buf_init(&body);
    rf_rfx_put_u32(&body, (uint32_t)db->ntables);
    for (int32_t i = 0; i < db->ntables; i++) {
        const rf_db_table *t = &db->tables[i];
        rf_rfx_put_cstr(&body, t->name);
        rf_rfx_put_u64(&body, (uint64_t)t->nrows);
        rf_rfx_put_u32(&body, t->block_rows);
        rf_rfx_put_u32(&body, (uint32_t)t->ncols);
        rf_rfx_put_u32(&body, (uint32_t)t->nkey);
        for (int32_t k = 0; k < t->nkey; k++) rf_rfx_put_u32(&body, (uint32_t)t->key[k]);
        for (int32_t c = 0; c < t->ncols; c++) {
            const rf_db_column *col = &t->cols[c];
            rf_rfx_put_cstr(&body, col->name ? col->name : "");
            rf_rfx_put_u8(&body, (uint8_t)col->type);
            rf_rfx_put_u8(&body, (uint8_t)(col->narrow ? 2 : col->enc));
            rf_rfx_put_cstr(&body, col->file);
            rf_rfx_put_u64(&body, col->size);
            rf_rfx_put_u32(&body, col->crc);
            if (col->enc == RF_DB_ENC_PLAIN) {
                rf_rfx_put_cstr(&body, col->str_file);
                rf_rfx_put_u64(&body, col->str_size);
                rf_rfx_put_u32(&body, col->str_crc);
            } else if (col->type == RF_TYPE_STRING) {
                rf_rfx_put_cstr(&body, col->dict_file);
                rf_rfx_put_u64(&body, col->dict_count);
                rf_rfx_put_u64(&body, col->dict_size);
                rf_rfx_put_u32(&body, col->dict_crc);
            }
            rf_rfx_put_u64(&body, (uint64_t)col->nblocks);
            for (int64_t b = 0; b < col->nblocks; b++) {
                rf_rfx_put_i64(&body, col->blocks[b].min);
                rf_rfx_put_i64(&body, col->blocks[b].max);
                rf_rfx_put_u32(&body, col->blocks[b].crc);
                if (col->enc == RF_DB_ENC_PLAIN) rf_rfx_put_u32(&body, col->blocks[b].str_crc);
                if (col->narrow) {
                    rf_rfx_put_u8(&body, col->blocks[b].width);
                    rf_rfx_put_u8(&body, col->blocks[b].exp);
                }
            }
        }
    }
    unsigned char h[RF_DB_HEADER];
    memset(h, 0, sizeof h);
    memcpy(h, rf_db_magic, 8);
    h[8] = RF_DB_MAJOR & 0xff;
    h[9] = RF_DB_MAJOR >> 8;
    h[10] = RF_DB_MINOR & 0xff;
    h[11] = RF_DB_MINOR >> 8;
    put_le32(h + 12, 0);                                   /* flags */
    put_le64(h + 16, (uint64_t)(RF_DB_HEADER + body.len)); /* file size */
    put_le32(h + 24, rf_db_crc32c(0, body.data, body.len));
    size_t wl = db->writer ? strlen(db->writer) : 0;
    if (wl > 27) wl = 27;
    if (wl) memcpy(h + 32, db->writer, wl);
    put_le32(h + 60, rf_db_crc32c(0, h, 60));
    rf_buf_append(out, h, sizeof h);
    rf_buf_append(out, body.data, body.len);
    if (body.oom) out->oom = 1;
    rf_buf_free(&body);
}

/* ---- decoding ------------------------------------------------------- */

static rf_status bad(rf_diags *d, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static rf_status bad(rf_diags *d, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rf_diag_addv(d, RF_SEV_ERROR, rf_mkloc(path, 0, 0), fmt, ap);
    va_end(ap);
    return RF_EUSER;
}

static int get_name(rf_rfx_rd *rd, rf_arena *a, char **s, int file)
{
    const char *p;
    uint64_t n;
    if (!rf_rfx_get_str(rd, &p, &n)) return 0;
    if (file ? !rf_db_file_name_ok(p, n) : (n > 4096 || memchr(p, 0, (size_t)n) != NULL)) {
        rf_rfx_rd_fail(rd);
        return 0;
    }
    *s = rf_arena_strndup(a, p, (size_t)n);
    if (!*s) {
        rd->err = rd->oom = 1;
        return 0;
    }
    return 1;
}

/* What is wrong with a narrow column's block record (NULL: nothing): its
** width one of 1, 2, 4 or the type's own (then exp 0: the values as they
** are), exp at most RF_DB_NARROW_EXP_MAX, min <= max, and for a block that
** is narrow, [min, max] within what the type allows (every decoded value
** lies in it: rf_db_narrow_decode checks that). The string columns'
** dictionary count is known: it precedes the blocks. */
static const char *narrow_block_bad(const rf_db_column *col, const rf_db_block *bl)
{
    int tw = rf_db_type_width(col->type);
    if (bl->width == tw) return bl->exp ? "a divisor for values stored as they are" : NULL;
    if ((bl->width != 1 && bl->width != 2 && bl->width != 4) || bl->width > tw) return "a width out of range";
    if (bl->exp > RF_DB_NARROW_EXP_MAX) return "a divisor out of range";
    if (bl->min > bl->max) return "its minimum is above its maximum";
    int ok = 1;
    switch (col->type) {
    case RF_TYPE_DECIMAL: ok = bl->min != INT64_MIN; break;
    case RF_TYPE_DATE: ok = bl->min >= RF_DATE_MIN && bl->max <= RF_DATE_MAX; break;
    case RF_TYPE_STRING: ok = bl->min >= 0 && (uint64_t)bl->max < col->dict_count; break;
    default: break;
    }
    return ok ? NULL : "its range holds values the type does not allow";
}

static rf_status decode_body(rf_db *db, const unsigned char *p, uint64_t n, const char *path, rf_diags *d)
{
    rf_rfx_rd rd;
    rf_rfx_rd_init(&rd, p, n);
    uint32_t nt = 0;
    rf_rfx_get_u32(&rd, &nt);
    /* a table takes at least 28 bytes: the count bounds the allocation */
    if (!rd.err && (nt > RF_DB_MAX_TABLES || (uint64_t)nt * 28 > rf_rfx_rd_remaining(&rd))) rf_rfx_rd_fail(&rd);
    if (!rd.err) {
        db->ntables = (int32_t)nt;
        db->tables = rf_arena_alloc(&db->arena, ((size_t)nt + 1) * sizeof *db->tables);
        if (!db->tables) return RF_ENOMEM;
    }
    for (uint32_t i = 0; i < nt && !rd.err; i++) {
        rf_db_table *t = &db->tables[i];
        uint64_t nrows = 0;
        uint32_t br = 0, nc = 0, nk = 0;
        get_name(&rd, &db->arena, &t->name, 0);
        rf_rfx_get_u64(&rd, &nrows);
        rf_rfx_get_u32(&rd, &br);
        rf_rfx_get_u32(&rd, &nc);
        rf_rfx_get_u32(&rd, &nk);
        if (rd.err) break;
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(db->tables[j].name, t->name))
                return bad(d, path, "the table '%s' appears twice", t->name);
        if (nrows > (uint64_t)INT64_MAX / 8) return bad(d, path, "table '%s': %llu rows is too many", t->name,
                                                        (unsigned long long)nrows);
        if (br == 0 || (br & (br - 1)) != 0)
            return bad(d, path, "table '%s': the block size %u is not a power of two", t->name, br);
        if (nc < 1 || nc > RF_DB_MAX_COLS) return bad(d, path, "table '%s': %u columns", t->name, nc);
        if (nk > nc) return bad(d, path, "table '%s': a key of %u columns in a table of %u", t->name, nk, nc);
        t->nrows = (int64_t)nrows;
        t->block_rows = br;
        t->ncols = (int32_t)nc;
        t->nkey = (int32_t)nk;
        t->key = rf_arena_alloc(&db->arena, ((size_t)nk + 1) * sizeof *t->key);
        t->cols = rf_arena_alloc(&db->arena, (size_t)nc * sizeof *t->cols);
        if (!t->key || !t->cols) return RF_ENOMEM;
        for (uint32_t k = 0; k < nk && !rd.err; k++) {
            uint32_t kc = 0;
            rf_rfx_get_u32(&rd, &kc);
            if (rd.err) break;
            if (kc >= nc) return bad(d, path, "table '%s': key column %u of %u", t->name, kc + 1, nc);
            for (uint32_t m = 0; m < k; m++)
                if ((uint32_t)t->key[m] == kc) return bad(d, path, "table '%s': key column %u twice", t->name, kc + 1);
            t->key[k] = (int32_t)kc;
        }
        uint64_t nblocks = (nrows + br - 1) / br;
        for (uint32_t c = 0; c < nc && !rd.err; c++) {
            rf_db_column *col = &t->cols[c];
            uint8_t ty = 0, enc = 0;
            get_name(&rd, &db->arena, &col->name, 0);
            rf_rfx_get_u8(&rd, &ty);
            if (db->block_crcs) rf_rfx_get_u8(&rd, &enc);
            get_name(&rd, &db->arena, &col->file, 1);
            rf_rfx_get_u64(&rd, &col->size);
            rf_rfx_get_u32(&rd, &col->crc);
            if (rd.err) break;
            if (ty > RF_TYPE_DATE) return bad(d, path, "table '%s' column %u: unknown type %u", t->name, c + 1, ty);
            col->type = (rf_type)ty;
            /* encoding 2, narrow values: format 3 on, numbers and codes */
            int narrow = enc == 2 && db->major >= 3 && rf_db_narrowable(col->type);
            if ((enc > RF_DB_ENC_PLAIN && !narrow) || (enc == RF_DB_ENC_PLAIN && ty != RF_TYPE_STRING))
                return bad(d, path, "table '%s' column %u: unknown encoding %u for a %s column", t->name, c + 1, enc,
                           rf_val_type_name(col->type));
            col->narrow = narrow;
            col->enc = narrow ? RF_DB_ENC_VALUES : (rf_db_encoding)enc;
            if (!narrow && col->size != nrows * (uint64_t)rf_db_col_width(col->type, col->enc))
                return bad(d, path, "table '%s' column %u: %llu bytes for %llu rows of %s", t->name, c + 1,
                           (unsigned long long)col->size, (unsigned long long)nrows, rf_val_type_name(col->type));
            if (enc == RF_DB_ENC_PLAIN) {
                get_name(&rd, &db->arena, &col->str_file, 1);
                rf_rfx_get_u64(&rd, &col->str_size);
                rf_rfx_get_u32(&rd, &col->str_crc);
                if (rd.err) break;
                if (col->str_size > (uint64_t)INT64_MAX)
                    return bad(d, path, "table '%s' column %u: strings of %llu bytes", t->name, c + 1,
                               (unsigned long long)col->str_size);
            } else if (ty == RF_TYPE_STRING) {
                get_name(&rd, &db->arena, &col->dict_file, 1);
                rf_rfx_get_u64(&rd, &col->dict_count);
                rf_rfx_get_u64(&rd, &col->dict_size);
                rf_rfx_get_u32(&rd, &col->dict_crc);
                if (rd.err) break;
                if (col->dict_count > (uint64_t)RF_DB_MAX_DICT || col->dict_count > nrows ||
                    col->dict_size < 8 * (col->dict_count + 1) || col->dict_size > (uint64_t)INT64_MAX)
                    return bad(d, path, "table '%s' column %u: a dictionary of %llu entries in %llu bytes", t->name,
                               c + 1, (unsigned long long)col->dict_count, (unsigned long long)col->dict_size);
            }
            uint64_t nb = 0;
            int brec = 16 + (db->block_crcs ? 4 : 0) + (enc == RF_DB_ENC_PLAIN ? 4 : 0) + (narrow ? 2 : 0);
            if (!rf_rfx_get_count(&rd, nblocks, brec, &nb)) break;
            if (nb != nblocks)
                return bad(d, path, "table '%s' column %u: %llu blocks of min/max for %llu rows", t->name, c + 1,
                           (unsigned long long)nb, (unsigned long long)nrows);
            col->nblocks = (int64_t)nb;
            col->blocks = rf_arena_alloc(&db->arena, ((size_t)nb + 1) * sizeof *col->blocks);
            if (!col->blocks) return RF_ENOMEM;
            int cw = rf_db_col_width(col->type, col->enc);
            uint64_t at = 0;
            for (uint64_t b = 0; b < nb; b++) {
                rf_db_block *bl = &col->blocks[b];
                rf_rfx_get_i64(&rd, &bl->min);
                rf_rfx_get_i64(&rd, &bl->max);
                bl->crc = bl->str_crc = 0;
                bl->width = (uint8_t)cw;
                bl->exp = 0;
                if (db->block_crcs) rf_rfx_get_u32(&rd, &bl->crc);
                if (enc == RF_DB_ENC_PLAIN) rf_rfx_get_u32(&rd, &bl->str_crc);
                if (narrow) {
                    rf_rfx_get_u8(&rd, &bl->width);
                    rf_rfx_get_u8(&rd, &bl->exp);
                    if (rd.err) break;
                    const char *why = narrow_block_bad(col, bl);
                    if (why)
                        return bad(d, path, "table '%s' column %u block %llu: %s", t->name, c + 1,
                                   (unsigned long long)b + 1, why);
                }
                bl->at = at;
                uint64_t rows = b + 1 < nb ? br : nrows - b * br;
                at += rows * bl->width;
            }
            if (rd.err) break;
            if (narrow && col->size != at)
                return bad(d, path, "table '%s' column %u: %llu bytes for blocks of %llu", t->name, c + 1,
                           (unsigned long long)col->size, (unsigned long long)at);
            /* a plain string column's blocks tile its strings file in order */
            for (uint64_t b = 0; enc == RF_DB_ENC_PLAIN && b < nb; b++) {
                int64_t start = b ? col->blocks[b - 1].max : 0;
                if (col->blocks[b].min != start || col->blocks[b].max < start ||
                    (uint64_t)col->blocks[b].max > col->str_size || (b + 1 == nb && (uint64_t)col->blocks[b].max != col->str_size))
                    return bad(d, path, "table '%s' column %u: block %llu's strings are not where the previous block's end",
                               t->name, c + 1, (unsigned long long)b + 1);
            }
            if (enc == RF_DB_ENC_PLAIN && nb == 0 && col->str_size != 0)
                return bad(d, path, "table '%s' column %u: strings of %llu bytes in a table of no rows", t->name, c + 1,
                           (unsigned long long)col->str_size);
        }
    }
    if (rd.oom) return RF_ENOMEM;
    if (!rf_rfx_rd_at_end(&rd))
        return bad(d, path, "the manifest is malformed (byte %llu of its tables)",
                   (unsigned long long)(rd.err ? rd.err_pos : rd.pos));
    /* no file serves twice */
    for (int32_t i = 0; i < db->ntables; i++)
        for (int32_t c = 0; c < db->tables[i].ncols; c++) {
            const rf_db_column *a = &db->tables[i].cols[c];
            if (a->dict_file && !strcmp(a->dict_file, a->file)) return bad(d, path, "the file %s serves twice", a->file);
            if (a->str_file && !strcmp(a->str_file, a->file)) return bad(d, path, "the file %s serves twice", a->file);
        }
    return RF_OK;
}

rf_status rf_db_open_bytes(const char *dir, const uint8_t *p, int64_t size, rf_db **out, rf_diags *d)
{
    *out = NULL;
    char *path = rf_sprintf("%s/%s", dir, RF_DB_MANIFEST);
    if (!path) return RF_ENOMEM;
    rf_status st = RF_OK;
    if (size == 0) {
        st = bad(d, path, "empty file: not a redfox database manifest");
        goto done;
    }
    if (memcmp(p, rf_db_magic, (size_t)(size < 8 ? size : 8)) != 0 || size < 8) {
        st = bad(d, path, "not a redfox database manifest");
        goto done;
    }
    if (size < RF_DB_HEADER) {
        st = bad(d, path, "truncated: the file is %lld bytes, shorter than the %d-byte header", (long long)size,
                 RF_DB_HEADER);
        goto done;
    }
    uint16_t major = (uint16_t)(p[8] | p[9] << 8), minor = (uint16_t)(p[10] | p[11] << 8);
    if (major < RF_DB_MAJOR_OLDEST || major > RF_DB_MAJOR) {
        st = bad(d, path, "written by %s redfox (database format %u.%u, this redfox reads %d.%d): import the data again",
                 major > RF_DB_MAJOR ? "a newer" : "an older", major, minor, RF_DB_MAJOR, RF_DB_MINOR);
        goto done;
    }
    if (le32(p + 60) != rf_db_crc32c(0, p, 60)) {
        st = bad(d, path, "the header is corrupted (checksum mismatch)");
        goto done;
    }
    uint64_t fsize = le64(p + 16);
    if (fsize != (uint64_t)size) {
        st = bad(d, path, "truncated or damaged: the file is %lld bytes, its header says %llu", (long long)size,
                 (unsigned long long)fsize);
        goto done;
    }
    if (le32(p + 12) & 0xffff0000u) {
        st = bad(d, path, "uses features this redfox does not support (flags 0x%08x)", le32(p + 12));
        goto done;
    }
    if (le32(p + 28) != 0 || p[59] != 0) {
        st = bad(d, path, "the header is malformed (reserved bytes not zero)");
        goto done;
    }
    int ended = 0;
    for (int i = 32; i < 60; i++) {
        if (!p[i]) ended = 1;
        else if (ended || p[i] < 0x20 || p[i] > 0x7e) {
            st = bad(d, path, "the header is malformed (writer field)");
            goto done;
        }
    }
    if (le32(p + 24) != rf_db_crc32c(0, p + RF_DB_HEADER, size - RF_DB_HEADER)) {
        st = bad(d, path, "the manifest is corrupted (checksum mismatch)");
        goto done;
    }
    rf_db *db = rf_calloc(1, sizeof *db);
    if (!db) {
        st = RF_ENOMEM;
        goto done;
    }
    rf_arena_init(&db->arena);
    db->major = major;
    db->minor = minor;
    db->block_crcs = major >= 2;
    db->manifest_size = size;
    db->manifest_crc = le32(p + 24);
    db->dir = rf_arena_strdup(&db->arena, dir);
    db->writer = rf_arena_strndup(&db->arena, (const char *)p + 32, 28);
    if (!db->dir || !db->writer) st = RF_ENOMEM;
    if (!st) st = decode_body(db, p + RF_DB_HEADER, (uint64_t)(size - RF_DB_HEADER), path, d);
    if (st) rf_db_close(db);
    else *out = db;
done:
    if (st == RF_ENOMEM) rf_error(d, rf_mkloc(path, 0, 0), "out of memory reading the manifest");
    free(path);
    return st;
}

rf_status rf_db_open(const char *dir, rf_db **out, rf_diags *d)
{
    *out = NULL;
    char *path = rf_sprintf("%s/%s", dir, RF_DB_MANIFEST);
    if (!path) return RF_ENOMEM;
    char *data = NULL;
    int64_t len = 0;
    const char *why = "";
    /* a regular file (rf_read_file reads pipes too: a named pipe in the
    ** manifest's place would block every reader) */
    struct stat sb;
    rf_status cst = rf_db_check_manifest(dir, d); /* (a link to nothing: said as such, not "No such file") */
    if (cst) {
        free(path);
        return cst;
    }
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        rf_error(d, rf_mkloc(path, 0, 0), "cannot read the database manifest: not a regular file (%s)",
                 S_ISDIR(sb.st_mode) ? "a folder" : S_ISFIFO(sb.st_mode) ? "a named pipe" : "a device or socket");
        free(path);
        return RF_EUSER;
    }
    rf_status st = rf_read_file(path, &data, &len, &why);
    if (st) {
        rf_error(d, rf_mkloc(path, 0, 0), "cannot read the database manifest: %s", why);
        free(path);
        return st == RF_ENOMEM ? RF_ENOMEM : RF_EIO;
    }
    free(path);
    st = rf_db_open_bytes(dir, (const uint8_t *)data, len, out, d);
    free(data);
    return st;
}

void rf_db_close(rf_db *db)
{
    if (!db) return;
    rf_arena_free(&db->arena);
    free(db);
}

const rf_db_table *rf_db_find_table(const rf_db *db, const char *name)
{
    for (int32_t i = 0; i < db->ntables; i++)
        if (!strcmp(db->tables[i].name, name)) return &db->tables[i];
    /* an older import kept the program's spelling ("./t.txt"): the same file */
    for (int32_t i = 0; i < db->ntables; i++)
        if (rf_file_same_name(db->tables[i].name, name)) return &db->tables[i];
    return NULL;
}
