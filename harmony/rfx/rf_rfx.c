/*
** harmony/rfx/rf_rfx.c: the .rfx container: writer, validating loader and
** the bounds-checked section stream (rf_rfx.h; format in docs/RFX.md).
**
** Owns the byte layout. Every multi-byte value is assembled byte by byte, so
** the code neither depends on the host's byte order nor makes unaligned loads.
** The loader trusts nothing in the file until its checksum has been verified,
** and even then checks every offset and size with overflow-safe arithmetic,
** because a checksum guards against accidents, not against a crafted file.
*/
#include "rf_rfx.h"
#include "rf_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Header field offsets (docs/RFX.md, "Header"). */
enum {
    H_MAGIC = 0,
    H_MAJOR = 8,
    H_MINOR = 10,
    H_FLAGS = 12,
    H_FILE_SIZE = 16,
    H_TABLE_OFF = 24,
    H_COUNT = 32,
    H_TABLE_CRC = 36,
    H_WRITER = 40,
    H_HEADER_CRC = 92
};
/* Section table entry field offsets. */
enum { E_TAG = 0, E_CRC = 4, E_OFF = 8, E_SIZE = 16 };

_Static_assert(H_WRITER + RF_RFX_WRITER_FIELD_SIZE == H_HEADER_CRC, "header layout");
_Static_assert(H_HEADER_CRC + 4 == RF_RFX_HEADER_SIZE, "header layout");
_Static_assert(RF_RFX_HEADER_SIZE % RF_RFX_ALIGN == 0, "the table must be able to follow aligned");
_Static_assert(RF_RFX_ENTRY_SIZE % RF_RFX_ALIGN == 0, "sections must be able to follow aligned");
_Static_assert(sizeof(RF_RFX_MAGIC) - 1 == RF_RFX_MAGIC_SIZE, "magic size");

/* ---- little-endian helpers ------------------------------------------- */

static void st16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void st32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void st64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint16_t ld16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t ld32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const unsigned char *p)
{
    return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32;
}

static uint64_t align_up(uint64_t x) { return (x + (RF_RFX_ALIGN - 1)) & ~(uint64_t)(RF_RFX_ALIGN - 1); }

uint32_t rf_rfx_crc32(const void *data, uint64_t size)
{
    /* zlib's crc32() takes a uInt length; feed it in chunks for large sections. */
    const unsigned char *p = data;
    uLong crc = crc32(0L, Z_NULL, 0);
    while (size > 0) {
        uInt n = size > (1u << 30) ? (1u << 30) : (uInt)size;
        crc = crc32(crc, p, n);
        p += n;
        size -= n;
    }
    return (uint32_t)crc;
}

/* Printable ASCII other than space, so that a tag always prints readably. */
static int tag_valid(const unsigned char *t)
{
    for (int i = 0; i < 4; i++)
        if (t[i] < 0x21 || t[i] > 0x7e) return 0;
    return 1;
}

/* ---- writer ----------------------------------------------------------- */

typedef struct wsec {
    char tag[4];
    uint32_t crc;
    unsigned char *data;
    uint64_t size;
    uint64_t off; /* set by layout() */
} wsec;

struct rf_rfx_writer {
    wsec *secs;
    uint64_t n, cap;
    rf_status err;   /* sticky failure of an add */
    const char *why; /* static text for err */
};

rf_rfx_writer *rf_rfx_writer_new(void) { return rf_calloc(1, sizeof(rf_rfx_writer)); }

void rf_rfx_writer_free(rf_rfx_writer *w)
{
    if (!w) return;
    for (uint64_t i = 0; i < w->n; i++) free(w->secs[i].data);
    free(w->secs);
    free(w);
}

static rf_status writer_fail(rf_rfx_writer *w, rf_status s, const char *why)
{
    if (w->err == RF_OK) {
        w->err = s;
        w->why = why;
    }
    return s;
}

rf_status rf_rfx_writer_add(rf_rfx_writer *w, const char tag[4], const void *data, uint64_t size)
{
    if (!w) return RF_EINTERNAL;
    if (!tag || !tag_valid((const unsigned char *)tag))
        return writer_fail(w, RF_EINTERNAL, "a section tag is not 4 printable characters");
    if (size > 0 && !data) return writer_fail(w, RF_EINTERNAL, "a section has no data");
    for (uint64_t i = 0; i < w->n; i++)
        if (memcmp(w->secs[i].tag, tag, 4) == 0)
            return writer_fail(w, RF_EINTERNAL, "a section tag was added twice");
    if (size > (uint64_t)INT64_MAX / 2 || size > SIZE_MAX)
        return writer_fail(w, RF_ENOMEM, "a section is too large");
    if (w->n == w->cap) {
        uint64_t ncap = w->cap ? w->cap * 2 : 8;
        wsec *ns = rf_realloc(w->secs, (size_t)ncap * sizeof *ns);
        if (!ns) return writer_fail(w, RF_ENOMEM, "out of memory");
        w->secs = ns;
        w->cap = ncap;
    }
    unsigned char *copy = rf_malloc((size_t)size);
    if (!copy) return writer_fail(w, RF_ENOMEM, "out of memory");
    if (size) memcpy(copy, data, (size_t)size);
    wsec *s = &w->secs[w->n++];
    memcpy(s->tag, tag, 4);
    s->data = copy;
    s->size = size;
    s->crc = rf_rfx_crc32(copy, size);
    s->off = 0;
    return RF_OK;
}

/* Places the table after the header and the sections after it in the order
** added, each 8-aligned, and fills in the header and the table. The layout is
** a function of the sections alone (no time stamps), so builds reproduce. */
static rf_status layout(rf_rfx_writer *w, unsigned char hdr[RF_RFX_HEADER_SIZE],
                        unsigned char **table, uint64_t *total)
{
    *table = NULL;
    if (w->n > UINT32_MAX) return RF_ENOMEM;
    uint64_t table_size = w->n * RF_RFX_ENTRY_SIZE;
    uint64_t pos = RF_RFX_HEADER_SIZE + table_size;
    for (uint64_t i = 0; i < w->n; i++) {
        w->secs[i].off = align_up(pos);
        /* keep the image's size within int64 (rf_buf, off_t) */
        uint64_t lim = (uint64_t)INT64_MAX - RF_RFX_ALIGN;
        if (w->secs[i].off > lim || w->secs[i].size > lim - w->secs[i].off) return RF_ENOMEM;
        pos = w->secs[i].off + w->secs[i].size;
    }
    *total = align_up(pos);

    unsigned char *t = rf_malloc((size_t)table_size);
    if (!t) return RF_ENOMEM;
    for (uint64_t i = 0; i < w->n; i++) {
        unsigned char *e = t + i * RF_RFX_ENTRY_SIZE;
        memcpy(e + E_TAG, w->secs[i].tag, 4);
        st32(e + E_CRC, w->secs[i].crc);
        st64(e + E_OFF, w->secs[i].off);
        st64(e + E_SIZE, w->secs[i].size);
    }

    memset(hdr, 0, RF_RFX_HEADER_SIZE);
    memcpy(hdr + H_MAGIC, RF_RFX_MAGIC, RF_RFX_MAGIC_SIZE);
    st16(hdr + H_MAJOR, RF_RFX_FORMAT_MAJOR);
    st16(hdr + H_MINOR, RF_RFX_FORMAT_MINOR);
    st32(hdr + H_FLAGS, 0);
    st64(hdr + H_FILE_SIZE, *total);
    st64(hdr + H_TABLE_OFF, RF_RFX_HEADER_SIZE);
    st32(hdr + H_COUNT, (uint32_t)w->n);
    st32(hdr + H_TABLE_CRC, rf_rfx_crc32(t, table_size));
    _Static_assert(sizeof(RF_VERSION_STRING) <= RF_RFX_WRITER_FIELD_SIZE, "version string too long");
    memcpy(hdr + H_WRITER, RF_VERSION_STRING, sizeof(RF_VERSION_STRING) - 1);
    st32(hdr + H_HEADER_CRC, rf_rfx_crc32(hdr, H_HEADER_CRC));
    *table = t;
    return RF_OK;
}

/* Where the image goes: a buffer, or a file descriptor. */
typedef struct sink {
    rf_buf *buf;
    int fd;
    int err_no; /* the first write error */
} sink;

static void emit(sink *s, const void *p, uint64_t n)
{
    if (n == 0 || s->err_no) return;
    if (s->buf) {
        rf_buf_append(s->buf, p, (int64_t)n); /* n <= INT64_MAX: see layout() */
        if (s->buf->oom) s->err_no = ENOMEM;
        return;
    }
    const unsigned char *c = p;
    while (n > 0) {
        size_t chunk = n > (1u << 30) ? (1u << 30) : (size_t)n;
        ssize_t k = write(s->fd, c, chunk);
        if (k < 0) {
            if (errno == EINTR) continue;
            s->err_no = errno;
            return;
        }
        if (k == 0) {
            s->err_no = EIO;
            return;
        }
        c += k;
        n -= (uint64_t)k;
    }
}

static void emit_zeros(sink *s, uint64_t n)
{
    static const unsigned char zeros[RF_RFX_ALIGN];
    emit(s, zeros, n); /* only alignment padding, n < RF_RFX_ALIGN */
}

static rf_status write_image(rf_rfx_writer *w, sink *s)
{
    unsigned char hdr[RF_RFX_HEADER_SIZE];
    unsigned char *table;
    uint64_t total;
    rf_status st = layout(w, hdr, &table, &total);
    if (st != RF_OK) return st;
    emit(s, hdr, sizeof hdr);
    emit(s, table, w->n * RF_RFX_ENTRY_SIZE);
    uint64_t pos = RF_RFX_HEADER_SIZE + w->n * RF_RFX_ENTRY_SIZE;
    for (uint64_t i = 0; i < w->n; i++) {
        emit_zeros(s, w->secs[i].off - pos);
        emit(s, w->secs[i].data, w->secs[i].size);
        pos = w->secs[i].off + w->secs[i].size;
    }
    emit_zeros(s, total - pos);
    free(table);
    return RF_OK;
}

rf_status rf_rfx_writer_write_to_buf(rf_rfx_writer *w, rf_buf *out)
{
    if (!w || !out) return RF_EINTERNAL;
    if (w->err != RF_OK) return w->err;
    if (out->oom) return RF_ENOMEM;
    sink s = {out, -1, 0};
    rf_status st = write_image(w, &s);
    if (st != RF_OK) return st;
    return s.err_no ? RF_ENOMEM : RF_OK;
}

rf_status rf_rfx_writer_write_file(rf_rfx_writer *w, const char *path, rf_diags *d)
{
    rf_loc loc = rf_mkloc(path, 0, 0);
    if (!w || !path) return RF_EINTERNAL;
    if (w->err != RF_OK) {
        rf_error(d, loc, "cannot write the program: %s", w->why);
        return w->err;
    }
    /* Written aside and renamed into place (common/rf_file.h): a reader
    ** never sees a part, a failure leaves the old file, a link is not
    ** followed, a device (/dev/null) is written in place. */
    rf_file_out f;
    rf_file_remove_stale_unlocked(path); /* (a killed compile's temporary) */
    rf_status st = rf_file_out_open(&f, path, d);
    if (st == RF_OK) {
        sink s = {NULL, f.fd, 0};
        st = write_image(w, &s);
        if (st != RF_OK) rf_error(d, loc, "cannot write: out of memory (or the program is too large)");
        else if (s.err_no) f.err_no = s.err_no; /* reported by the commit */
        if (st == RF_OK) st = rf_file_out_commit(&f, d);
    }
    rf_file_out_abort(&f);
    return st;
}

/* ---- reader ----------------------------------------------------------- */

typedef struct rsec {
    char tag[4];
    uint64_t off, size;
} rsec;

struct rf_rfx_file {
    unsigned char *data; /* owned */
    uint64_t size;
    uint16_t major, minor;
    uint32_t flags;
    char writer[RF_RFX_WRITER_FIELD_SIZE];
    uint64_t nsec;
    rsec *secs;
};

#define NOT_RFX "not a redfox program (.rfx) file"

static void truncated_msg(rf_diags *d, rf_loc loc, uint64_t actual, uint64_t expected)
{
    if (expected > actual)
        rf_error(d, loc, "truncated: the file is %" PRIu64 " bytes, the header says %" PRIu64, actual,
                 expected);
    else
        rf_error(d, loc,
                 "%" PRIu64 " unexpected byte%s after the end of the program (the file is %" PRIu64
                 " bytes, the header says %" PRIu64 ")",
                 actual - expected, actual - expected == 1 ? "" : "s", actual, expected);
}

/* Checks the header. p holds the first avail bytes of a file of actual_size
** bytes; avail >= min(actual_size, RF_RFX_HEADER_SIZE). Order matters: the
** magic and the version come before the checksum because a newer major
** version may lay the rest of the header out differently. */
static rf_status check_header(rf_loc loc, const unsigned char *p, uint64_t avail,
                              uint64_t actual_size, rf_diags *d)
{
    if (avail == 0) {
        rf_error(d, loc, "empty file: " NOT_RFX);
        return RF_EUSER;
    }
    uint64_t m = avail < RF_RFX_MAGIC_SIZE ? avail : RF_RFX_MAGIC_SIZE;
    if (memcmp(p, RF_RFX_MAGIC, (size_t)m) != 0) {
        /* The magic's CR LF and LF turn into something else under a text-mode
        ** transfer; say so rather than "not a program" for a real program. */
        if (avail >= 4 && memcmp(p, RF_RFX_MAGIC, 4) == 0)
            rf_error(d, loc,
                     NOT_RFX ", or one damaged by a text-mode transfer (its line-ending bytes "
                             "were converted): copy it in binary mode");
        else
            rf_error(d, loc, NOT_RFX);
        return RF_EUSER;
    }
    if (actual_size < H_MINOR + 2) {
        rf_error(d, loc,
                 "truncated: the file is %" PRIu64 " bytes, shorter than the %d-byte header",
                 actual_size, RF_RFX_HEADER_SIZE);
        return RF_EUSER;
    }
    uint16_t major = ld16(p + H_MAJOR), minor = ld16(p + H_MINOR);
    if (major > RF_RFX_FORMAT_MAJOR) {
        rf_error(d, loc,
                 "written by a newer redfox (format %u.%u, this redfox reads up to %d.%d): "
                 "use a newer redfox or recompile the program",
                 major, minor, RF_RFX_FORMAT_MAJOR, RF_RFX_FORMAT_MINOR);
        return RF_EUSER;
    }
    if (major < RF_RFX_FORMAT_MAJOR) {
        rf_error(d, loc,
                 "written by an older redfox (format %u.%u, this redfox reads %d.0 to %d.%d): "
                 "recompile the program",
                 major, minor, RF_RFX_FORMAT_MAJOR, RF_RFX_FORMAT_MAJOR, RF_RFX_FORMAT_MINOR);
        return RF_EUSER;
    }
    if (actual_size < RF_RFX_HEADER_SIZE) {
        if (actual_size >= H_FILE_SIZE + 8 && ld64(p + H_FILE_SIZE) > actual_size)
            truncated_msg(d, loc, actual_size, ld64(p + H_FILE_SIZE));
        else
            rf_error(d, loc,
                     "truncated: the file is %" PRIu64 " bytes, shorter than the %d-byte header",
                     actual_size, RF_RFX_HEADER_SIZE);
        return RF_EUSER;
    }
    if (rf_rfx_crc32(p, H_HEADER_CRC) != ld32(p + H_HEADER_CRC)) {
        rf_error(d, loc, "the header is corrupted (checksum mismatch)");
        return RF_EUSER;
    }
    uint64_t file_size = ld64(p + H_FILE_SIZE);
    if (file_size != actual_size) {
        truncated_msg(d, loc, actual_size, file_size);
        return RF_EUSER;
    }
    const unsigned char *wr = p + H_WRITER;
    const unsigned char *nul = memchr(wr, 0, RF_RFX_WRITER_FIELD_SIZE);
    int ok = nul != NULL;
    for (const unsigned char *c = wr; ok && c < nul; c++) ok = *c >= 0x20 && *c <= 0x7e;
    for (const unsigned char *c = nul; ok && c < wr + RF_RFX_WRITER_FIELD_SIZE; c++) ok = *c == 0;
    if (!ok) {
        rf_error(d, loc, "the header is corrupted (invalid writer version)");
        return RF_EUSER;
    }
    uint32_t flags = ld32(p + H_FLAGS);
    uint32_t unknown = flags & RF_RFX_FLAGS_INCOMPAT_MASK & ~RF_RFX_FLAGS_KNOWN;
    if (unknown) {
        rf_error(d, loc,
                 "uses features this redfox does not support (header flags 0x%08" PRIx32
                 "; written by redfox %s): use a newer redfox",
                 unknown, (const char *)wr);
        return RF_EUSER;
    }
    return RF_OK;
}

/* A byte range of the file that something owns: the header, the table or a
** section (index >= 0). */
typedef struct region {
    uint64_t off, end;
    int64_t sec; /* -2 header, -1 table, else a section index */
} region;

static int region_cmp(const void *a, const void *b)
{
    const region *x = a, *y = b;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

static int tag_cmp(const void *a, const void *b)
{
    const rsec *x = a, *y = b;
    return memcmp(x->tag, y->tag, 4);
}

static void region_name(const rsec *secs, const region *r, char out[32])
{
    if (r->sec == -2)
        snprintf(out, 32, "the header");
    else if (r->sec == -1)
        snprintf(out, 32, "the section table");
    else
        snprintf(out, 32, "section %.4s", secs[r->sec].tag);
}

/* Validates the table and the sections of a file whose header passed
** check_header(), and fills f->secs. */
static rf_status check_body(rf_loc loc, rf_rfx_file *f, rf_diags *d)
{
    const unsigned char *p = f->data;
    uint64_t size = f->size;
    uint64_t toff = ld64(p + H_TABLE_OFF);
    uint64_t count = ld32(p + H_COUNT);
    if (toff < RF_RFX_HEADER_SIZE || toff % RF_RFX_ALIGN != 0 || toff > size) {
        rf_error(d, loc,
                 "the header is corrupted (section table offset %" PRIu64
                 " is not an aligned offset after the header in a %" PRIu64 "-byte file)",
                 toff, size);
        return RF_EUSER;
    }
    if (count > (size - toff) / RF_RFX_ENTRY_SIZE) {
        rf_error(d, loc,
                 "the section table (%" PRIu64 " entries at offset %" PRIu64
                 ") extends past the end of the file (%" PRIu64 " bytes)",
                 count, toff, size);
        return RF_EUSER;
    }
    uint64_t tend = toff + count * RF_RFX_ENTRY_SIZE;
    if (rf_rfx_crc32(p + toff, count * RF_RFX_ENTRY_SIZE) != ld32(p + H_TABLE_CRC)) {
        rf_error(d, loc, "the section table is corrupted (checksum mismatch)");
        return RF_EUSER;
    }

    /* count <= size / 24, so these allocations are bounded by the file. */
    f->secs = rf_calloc((size_t)count, sizeof *f->secs);
    region *regs = rf_calloc((size_t)count + 2, sizeof *regs);
    rsec *sorted = rf_calloc((size_t)count, sizeof *sorted);
    rf_status st = RF_EUSER;
    if (!f->secs || !regs || !sorted) {
        rf_error(d, loc, "cannot load: out of memory");
        st = RF_ENOMEM;
        goto done;
    }
    f->nsec = count;
    for (uint64_t i = 0; i < count; i++) {
        const unsigned char *e = p + toff + i * RF_RFX_ENTRY_SIZE;
        rsec *s = &f->secs[i];
        if (!tag_valid(e + E_TAG)) {
            rf_error(d, loc,
                     "section table entry %" PRIu64 " has an invalid tag (bytes %02x %02x %02x %02x)",
                     i, e[0], e[1], e[2], e[3]);
            goto done;
        }
        memcpy(s->tag, e + E_TAG, 4);
        s->off = ld64(e + E_OFF);
        s->size = ld64(e + E_SIZE);
        if (s->size > UINT64_MAX - s->off) {
            rf_error(d, loc,
                     "section %.4s is invalid: offset %" PRIu64 " + size %" PRIu64 " overflows",
                     s->tag, s->off, s->size);
            goto done;
        }
        if (s->off + s->size > size) {
            rf_error(d, loc,
                     "section %.4s (bytes %" PRIu64 " to %" PRIu64
                     ") extends past the end of the file (%" PRIu64 " bytes)",
                     s->tag, s->off, s->off + s->size, size);
            goto done;
        }
        if (s->off % RF_RFX_ALIGN != 0) {
            rf_error(d, loc, "section %.4s is misaligned (offset %" PRIu64 " is not a multiple of %d)",
                     s->tag, s->off, RF_RFX_ALIGN);
            goto done;
        }
        regs[i] = (region){s->off, s->off + s->size, (int64_t)i};
        sorted[i] = *s;
    }

    qsort(sorted, (size_t)count, sizeof *sorted, tag_cmp);
    for (uint64_t i = 1; i < count; i++)
        if (memcmp(sorted[i - 1].tag, sorted[i].tag, 4) == 0) {
            rf_error(d, loc, "section %.4s appears more than once in the section table",
                     sorted[i].tag);
            goto done;
        }

    /* The header, the table and the sections must tile the file, apart from
    ** zero padding up to the next 8-byte boundary. Then every byte is either
    ** under a checksum or checked to be zero, so no bit of the file can be
    ** flipped unnoticed. */
    regs[count] = (region){0, RF_RFX_HEADER_SIZE, -2};
    regs[count + 1] = (region){toff, tend, -1};
    qsort(regs, (size_t)count + 2, sizeof *regs, region_cmp);
    uint64_t prev_end = 0;
    for (uint64_t i = 0; i < count + 2; i++) {
        const region *r = &regs[i];
        if (i > 0 && r->off < prev_end) {
            char a[32], b[32];
            region_name(f->secs, &regs[i - 1], a);
            region_name(f->secs, r, b);
            rf_error(d, loc,
                     "%s (bytes %" PRIu64 " to %" PRIu64 ") and %s (bytes %" PRIu64 " to %" PRIu64
                     ") overlap",
                     a, regs[i - 1].off, regs[i - 1].end, b, r->off, r->end);
            goto done;
        }
        uint64_t gap_end = r->off;
        for (uint64_t k = prev_end; k < gap_end; k++)
            if (p[k] != 0 || gap_end - prev_end >= RF_RFX_ALIGN) {
                rf_error(d, loc,
                         "the file is corrupted: unexpected bytes %" PRIu64 " to %" PRIu64
                         " lie outside every section",
                         prev_end, gap_end);
                goto done;
            }
        if (r->end > prev_end) prev_end = r->end;
    }
    if (size - prev_end >= RF_RFX_ALIGN) {
        rf_error(d, loc,
                 "the file is corrupted: unexpected bytes %" PRIu64 " to %" PRIu64
                 " lie outside every section",
                 prev_end, size);
        goto done;
    }
    for (uint64_t k = prev_end; k < size; k++)
        if (p[k] != 0) {
            rf_error(d, loc,
                     "the file is corrupted: unexpected bytes %" PRIu64 " to %" PRIu64
                     " lie outside every section",
                     prev_end, size);
            goto done;
        }

    for (uint64_t i = 0; i < count; i++) {
        const unsigned char *e = p + toff + i * RF_RFX_ENTRY_SIZE;
        const rsec *s = &f->secs[i];
        if (rf_rfx_crc32(p + s->off, s->size) != ld32(e + E_CRC)) {
            rf_error(d, loc, "section %.4s is corrupted (checksum mismatch)", s->tag);
            goto done;
        }
    }
    st = RF_OK;
done:
    free(regs);
    free(sorted);
    return st;
}

/* Takes ownership of data (malloc'd, size bytes) whatever the outcome. */
static rf_status open_owned(const char *name, unsigned char *data, uint64_t size,
                            rf_rfx_file **out, rf_diags *d)
{
    rf_loc loc = rf_mkloc(name, 0, 0);
    rf_status st = check_header(loc, data, size, size, d);
    if (st != RF_OK) {
        free(data);
        return st;
    }
    rf_rfx_file *f = rf_calloc(1, sizeof *f);
    if (!f) {
        free(data);
        rf_error(d, loc, "cannot load: out of memory");
        return RF_ENOMEM;
    }
    f->data = data;
    f->size = size;
    f->major = ld16(data + H_MAJOR);
    f->minor = ld16(data + H_MINOR);
    f->flags = ld32(data + H_FLAGS);
    memcpy(f->writer, data + H_WRITER, RF_RFX_WRITER_FIELD_SIZE); /* NUL checked */
    st = check_body(loc, f, d);
    if (st != RF_OK) {
        rf_rfx_close(f);
        return st;
    }
    *out = f;
    return RF_OK;
}

rf_status rf_rfx_open_bytes(const char *name, const void *data, uint64_t size, rf_rfx_file **out,
                            rf_diags *d)
{
    if (!out) return RF_EINTERNAL;
    *out = NULL;
    if (!data && size > 0) return RF_EINTERNAL;
    if (size > SIZE_MAX - 1) {
        rf_error(d, rf_mkloc(name, 0, 0), "cannot load: out of memory");
        return RF_ENOMEM;
    }
    /* A private copy: malloc's alignment makes every section 8-aligned in
    ** memory, and the caller's buffer may go away. */
    unsigned char *copy = rf_malloc((size_t)size);
    if (!copy) {
        rf_error(d, rf_mkloc(name, 0, 0), "cannot load: out of memory");
        return RF_ENOMEM;
    }
    if (size) memcpy(copy, data, (size_t)size);
    return open_owned(name, copy, size, out, d);
}

/* Reads up to n bytes; fewer only at end of file. -1 with errno on error. */
static int64_t read_full(int fd, unsigned char *p, uint64_t n)
{
    uint64_t got = 0;
    while (got < n) {
        uint64_t want = n - got > (1u << 30) ? (1u << 30) : n - got;
        ssize_t k = read(fd, p + got, (size_t)want);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (k == 0) break;
        got += (uint64_t)k;
    }
    return (int64_t)got;
}

rf_status rf_rfx_open_file(const char *path, rf_rfx_file **out, rf_diags *d)
{
    if (!out || !path) return RF_EINTERNAL;
    *out = NULL;
    rf_loc loc = rf_mkloc(path, 0, 0);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rf_error(d, loc, "cannot read: %s", strerror(errno));
        return RF_EIO;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        rf_error(d, loc, "cannot read: %s", strerror(errno));
        close(fd);
        return RF_EIO;
    }
    if (S_ISDIR(sb.st_mode)) {
        rf_error(d, loc, "cannot read: %s", strerror(EISDIR));
        close(fd);
        return RF_EIO;
    }
    /* Read the header alone first, so that a foreign or damaged file is
    ** refused before anything the size of the file is allocated, and the rest
    ** is allocated only as far as the checksummed header and the file agree. */
    unsigned char head[RF_RFX_HEADER_SIZE];
    int64_t hn = read_full(fd, head, sizeof head);
    if (hn < 0) {
        rf_error(d, loc, "cannot read: %s", strerror(errno));
        close(fd);
        return RF_EIO;
    }
    if ((uint64_t)hn < sizeof head) { /* the whole file is shorter than a header */
        close(fd);
        return rf_rfx_open_bytes(path, head, (uint64_t)hn, out, d);
    }
    /* A pipe's size is known only at its end: trust the header's (checksummed)
    ** size for now, but allocate only as data actually arrives. */
    int regular = S_ISREG(sb.st_mode);
    uint64_t claimed = ld64(head + H_FILE_SIZE);
    uint64_t actual = regular ? (uint64_t)sb.st_size : claimed < sizeof head ? sizeof head : claimed;
    rf_status st = check_header(loc, head, sizeof head, actual, d);
    if (st != RF_OK) {
        close(fd);
        return st;
    }
    /* One byte more than the header says, to notice a file that grew. */
    if (claimed > SIZE_MAX - 1) {
        close(fd);
        rf_error(d, loc, "cannot load: out of memory");
        return RF_ENOMEM;
    }
    uint64_t want = claimed + 1;
    uint64_t cap = regular ? want : (want < (1u << 20) ? want : (1u << 20));
    unsigned char *data = rf_malloc((size_t)cap);
    if (!data) {
        close(fd);
        rf_error(d, loc, "cannot load: out of memory");
        return RF_ENOMEM;
    }
    memcpy(data, head, sizeof head);
    uint64_t size = sizeof head;
    for (;;) {
        if (size == cap) {
            if (cap == want) break;
            uint64_t ncap = cap > want / 2 ? want : cap * 2;
            unsigned char *nd = rf_realloc(data, (size_t)ncap);
            if (!nd) {
                free(data);
                close(fd);
                rf_error(d, loc, "cannot load: out of memory");
                return RF_ENOMEM;
            }
            data = nd;
            cap = ncap;
        }
        int64_t rn = read_full(fd, data + size, cap - size);
        if (rn < 0) {
            int e = errno;
            free(data);
            close(fd);
            rf_error(d, loc, "cannot read: %s", strerror(e));
            return RF_EIO;
        }
        size += (uint64_t)rn;
        if (size < cap) break; /* end of file */
    }
    close(fd);
    if (size != claimed) {
        free(data);
        truncated_msg(d, loc, size, claimed);
        return RF_EUSER;
    }
    return open_owned(path, data, size, out, d);
}

void rf_rfx_close(rf_rfx_file *f)
{
    if (!f) return;
    free(f->data);
    free(f->secs);
    free(f);
}

int rf_rfx_section(const rf_rfx_file *f, const char tag[4], const void **data, uint64_t *size)
{
    for (uint64_t i = 0; f && i < f->nsec; i++)
        if (memcmp(f->secs[i].tag, tag, 4) == 0) {
            *data = f->data + f->secs[i].off;
            *size = f->secs[i].size;
            return 1;
        }
    *data = NULL;
    *size = 0;
    return 0;
}

uint64_t rf_rfx_section_count(const rf_rfx_file *f) { return f->nsec; }

void rf_rfx_section_at(const rf_rfx_file *f, uint64_t i, char tag[4], const void **data,
                       uint64_t *size)
{
    if (i >= f->nsec) {
        memset(tag, 0, 4);
        *data = NULL;
        *size = 0;
        return;
    }
    memcpy(tag, f->secs[i].tag, 4);
    *data = f->data + f->secs[i].off;
    *size = f->secs[i].size;
}

uint16_t rf_rfx_format_major(const rf_rfx_file *f) { return f->major; }
uint16_t rf_rfx_format_minor(const rf_rfx_file *f) { return f->minor; }
uint32_t rf_rfx_flags(const rf_rfx_file *f) { return f->flags; }
const char *rf_rfx_writer_version(const rf_rfx_file *f) { return f->writer; }
uint64_t rf_rfx_file_size(const rf_rfx_file *f) { return f->size; }

/* ---- stream: writing -------------------------------------------------- */

void rf_rfx_put_u8(rf_buf *b, uint8_t v) { rf_buf_append(b, &v, 1); }
void rf_rfx_put_u16(rf_buf *b, uint16_t v)
{
    unsigned char t[2];
    st16(t, v);
    rf_buf_append(b, t, 2);
}
void rf_rfx_put_u32(rf_buf *b, uint32_t v)
{
    unsigned char t[4];
    st32(t, v);
    rf_buf_append(b, t, 4);
}
void rf_rfx_put_u64(rf_buf *b, uint64_t v)
{
    unsigned char t[8];
    st64(t, v);
    rf_buf_append(b, t, 8);
}
/* memcpy, not a cast: converting an out-of-range value to a signed type is
** implementation-defined, copying the representation is not. */
void rf_rfx_put_i32(rf_buf *b, int32_t v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    rf_rfx_put_u32(b, u);
}
void rf_rfx_put_i64(rf_buf *b, int64_t v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    rf_rfx_put_u64(b, u);
}
void rf_rfx_put_f64(rf_buf *b, double v)
{
    _Static_assert(sizeof(double) == 8, "binary64 doubles");
    uint64_t u;
    memcpy(&u, &v, 8);
    rf_rfx_put_u64(b, u);
}
void rf_rfx_put_bytes(rf_buf *b, const void *p, uint64_t n)
{
    if (n > (uint64_t)INT64_MAX) {
        b->oom = 1;
        return;
    }
    rf_buf_append(b, p, (int64_t)n);
}
void rf_rfx_put_str(rf_buf *b, const void *s, uint64_t len)
{
    rf_rfx_put_u64(b, len);
    rf_rfx_put_bytes(b, s, len);
}
void rf_rfx_put_cstr(rf_buf *b, const char *s) { rf_rfx_put_str(b, s, strlen(s)); }

/* ---- stream: reading -------------------------------------------------- */

void rf_rfx_rd_init(rf_rfx_rd *rd, const void *data, uint64_t size)
{
    /* A NULL section reads as empty; pointing at a real byte keeps
    ** zero-length takes from doing arithmetic on a null pointer. */
    static const unsigned char empty[1];
    memset(rd, 0, sizeof *rd);
    rd->data = data ? data : empty;
    rd->size = data ? size : 0;
}

static void rd_fail_at(rf_rfx_rd *rd, uint64_t pos)
{
    if (!rd->err) {
        rd->err = 1;
        rd->err_pos = pos;
    }
}

void rf_rfx_rd_fail(rf_rfx_rd *rd) { rd_fail_at(rd, rd->pos); }

/* The next n bytes, or NULL (and the sticky error) if fewer remain. The
** comparison is against what remains, so n itself can never overflow pos. */
static const unsigned char *take(rf_rfx_rd *rd, uint64_t n)
{
    if (rd->err) return NULL;
    if (n > rd->size - rd->pos) {
        rd_fail_at(rd, rd->pos);
        return NULL;
    }
    const unsigned char *p = rd->data + rd->pos;
    rd->pos += n;
    return p;
}

int rf_rfx_get_u8(rf_rfx_rd *rd, uint8_t *v)
{
    const unsigned char *p = take(rd, 1);
    *v = p ? p[0] : 0;
    return p != NULL;
}
int rf_rfx_get_u16(rf_rfx_rd *rd, uint16_t *v)
{
    const unsigned char *p = take(rd, 2);
    *v = p ? ld16(p) : 0;
    return p != NULL;
}
int rf_rfx_get_u32(rf_rfx_rd *rd, uint32_t *v)
{
    const unsigned char *p = take(rd, 4);
    *v = p ? ld32(p) : 0;
    return p != NULL;
}
int rf_rfx_get_u64(rf_rfx_rd *rd, uint64_t *v)
{
    const unsigned char *p = take(rd, 8);
    *v = p ? ld64(p) : 0;
    return p != NULL;
}
int rf_rfx_get_i32(rf_rfx_rd *rd, int32_t *v)
{
    uint32_t u;
    int ok = rf_rfx_get_u32(rd, &u);
    memcpy(v, &u, 4);
    return ok;
}
int rf_rfx_get_i64(rf_rfx_rd *rd, int64_t *v)
{
    uint64_t u;
    int ok = rf_rfx_get_u64(rd, &u);
    memcpy(v, &u, 8);
    return ok;
}
int rf_rfx_get_f64(rf_rfx_rd *rd, double *v)
{
    uint64_t u;
    int ok = rf_rfx_get_u64(rd, &u);
    memcpy(v, &u, 8);
    return ok;
}

int rf_rfx_get_bytes(rf_rfx_rd *rd, void *dst, uint64_t n)
{
    const unsigned char *p = take(rd, n);
    if (!p) {
        if (n <= SIZE_MAX && dst) memset(dst, 0, (size_t)n);
        return 0;
    }
    if (n) memcpy(dst, p, (size_t)n);
    return 1;
}

int rf_rfx_get_view(rf_rfx_rd *rd, uint64_t n, const void **p)
{
    *p = take(rd, n);
    return *p != NULL;
}

int rf_rfx_get_str(rf_rfx_rd *rd, const char **s, uint64_t *len)
{
    uint64_t at = rd->pos, n;
    const unsigned char *p = NULL;
    if (rf_rfx_get_u64(rd, &n)) {
        p = take(rd, n);
        if (!p && rd->err_pos == rd->pos) rd->err_pos = at; /* blame the length */
    }
    *s = (const char *)p;
    *len = p ? n : 0;
    return p != NULL;
}

int rf_rfx_get_cstr(rf_rfx_rd *rd, rf_arena *a, char **s)
{
    *s = NULL;
    uint64_t at = rd->pos, n;
    const char *p;
    if (!rf_rfx_get_str(rd, &p, &n)) return 0;
    if (memchr(p, 0, (size_t)n)) {
        rd_fail_at(rd, at);
        return 0;
    }
    char *c = rf_arena_strndup(a, p, (size_t)n);
    if (!c) {
        rd_fail_at(rd, at);
        rd->oom = 1;
        return 0;
    }
    *s = c;
    return 1;
}

int rf_rfx_get_count(rf_rfx_rd *rd, uint64_t max, uint64_t elem_min_size, uint64_t *n)
{
    uint64_t at = rd->pos, v;
    *n = 0;
    if (!rf_rfx_get_u64(rd, &v)) return 0;
    /* Divide rather than multiply: v * elem_min_size could overflow. */
    if (v > max || (elem_min_size > 0 && v > (rd->size - rd->pos) / elem_min_size)) {
        rd_fail_at(rd, at);
        return 0;
    }
    *n = v;
    return 1;
}
