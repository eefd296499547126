/*
** harmony/rfx/rf_rfx.h: the .rfx container, the file that `redfox compile`
** writes and `redfox run` loads (specification: docs/RFX.md).
**
** Owns: the byte layout of the header and the section table, the writer
** (which assembles sections into a file image), the loader (which validates
** every size, offset and checksum before handing out a section), and the
** bounds-checked stream used to encode and decode the contents of sections.
** It does not know what the sections mean: SCHM, HIRS, STRS, GPLN and PTX0 are
** encoded by their owners with the stream functions below.
**
** Errors go to an rf_diags list with rf_loc{path, 0, 0}; nothing here prints.
** Sizes and offsets are 64-bit; every length read from a file is checked
** against the bytes actually present before it is used, so a corrupt length
** can neither read out of bounds nor trigger a huge allocation.
*/
#ifndef RF_RFX_H
#define RF_RFX_H

#include "rf_common.h"

#include <stdint.h>

/* The format version this redfox writes. A reader accepts files of the same
** major version and any minor version (newer minors only add sections that
** older readers may skip); see docs/RFX.md for what bumps which. */
#define RF_RFX_FORMAT_MAJOR 1
#define RF_RFX_FORMAT_MINOR 1 /* 1: the GPLN section (the GPU plans) */

/* "\x89RFX\r\n\x1a\n": the high byte catches 7-bit transfers, the CR LF and
** LF catch line-ending conversion, ^Z stops a DOS `type`. */
#define RF_RFX_MAGIC "\x89RFX\r\n\x1a\n"
#define RF_RFX_MAGIC_SIZE 8

#define RF_RFX_HEADER_SIZE 96       /* fixed; see docs/RFX.md for the layout */
#define RF_RFX_ENTRY_SIZE 24        /* one section table entry */
#define RF_RFX_WRITER_FIELD_SIZE 52 /* writer version string, NUL-padded */
#define RF_RFX_ALIGN 8              /* the table and every section start 8-aligned */

/* Header flags. The low 16 bits are compatible flags (a reader ignores those
** it does not know); the high 16 bits are incompatible flags (a reader refuses
** a file that sets one it does not know). None are defined yet. */
#define RF_RFX_FLAGS_INCOMPAT_MASK 0xFFFF0000u
#define RF_RFX_FLAGS_KNOWN 0u

/* Section tags. Others are reserved; a reader skips tags it does not know. */
#define RF_RFX_TAG_SCHEMA "SCHM"  /* schema of input and output relations */
#define RF_RFX_TAG_HARMONY "HIRS" /* Harmony IR: kernels and control flow */
#define RF_RFX_TAG_STRINGS "STRS" /* string constants */
#define RF_RFX_TAG_PTX "PTX0"     /* PTX of the GPU kernels */
#define RF_RFX_TAG_GPU_PLAN "GPLN" /* the GPU kernel and fusion plans */

/* CRC-32 (zlib's, the ISO-HDLC / PNG polynomial) of any length, also > 4 GiB. */
uint32_t rf_rfx_crc32(const void *data, uint64_t size);

/* ---- writer ---------------------------------------------------------- */

typedef struct rf_rfx_writer rf_rfx_writer;

/* NULL on exhausted memory. */
rf_rfx_writer *rf_rfx_writer_new(void);
void rf_rfx_writer_free(rf_rfx_writer *w);

/* Adds a section; the bytes are copied, so the caller may free them at once.
** A tag is 4 printable ASCII characters other than space. A bad or duplicate
** tag returns RF_EINTERNAL, exhausted memory RF_ENOMEM; either failure also
** sticks, so a later rf_rfx_writer_write_* fails too instead of writing a
** file that lacks the section. Sections are written in the order added. */
rf_status rf_rfx_writer_add(rf_rfx_writer *w, const char tag[4], const void *data, uint64_t size);

/* Writes the file through a temporary file in the same folder, synced and
** then renamed over path, so that a failed or interrupted write never leaves
** a partial file at path. Errors name path. */
rf_status rf_rfx_writer_write_file(rf_rfx_writer *w, const char *path, rf_diags *d);

/* Appends the file image to out (offsets inside are relative to the image's
** first byte). RF_ENOMEM if out ran out of memory. */
rf_status rf_rfx_writer_write_to_buf(rf_rfx_writer *w, rf_buf *out);

/* ---- reader ---------------------------------------------------------- */

typedef struct rf_rfx_file rf_rfx_file;

/* Reads and validates a whole file (docs/RFX.md, "Validation"). On success
** *out owns a copy of the bytes; on failure *out is NULL and d holds one
** error naming path, which must outlive d. RF_EIO when the file cannot be
** read, RF_EUSER when it is not a valid .rfx, RF_ENOMEM. */
rf_status rf_rfx_open_file(const char *path, rf_rfx_file **out, rf_diags *d);

/* The same for bytes already in memory; they are copied, so the caller keeps
** its own. name is used in messages and must outlive d. */
rf_status rf_rfx_open_bytes(const char *name, const void *data, uint64_t size, rf_rfx_file **out,
                            rf_diags *d);

void rf_rfx_close(rf_rfx_file *f);

/* 1 and the section's bytes (8-byte aligned, valid until rf_rfx_close) if
** the file has a section with this tag, else 0 with *data = NULL, *size = 0. */
int rf_rfx_section(const rf_rfx_file *f, const char tag[4], const void **data, uint64_t *size);

/* All sections in table order, unknown tags included (for `redfox dump`).
** tag receives 4 characters and no NUL. */
uint64_t rf_rfx_section_count(const rf_rfx_file *f);
void rf_rfx_section_at(const rf_rfx_file *f, uint64_t i, char tag[4], const void **data,
                       uint64_t *size);

uint16_t rf_rfx_format_major(const rf_rfx_file *f);
uint16_t rf_rfx_format_minor(const rf_rfx_file *f);
uint32_t rf_rfx_flags(const rf_rfx_file *f);
/* The version of the redfox that wrote the file, e.g. "0.1.0". */
const char *rf_rfx_writer_version(const rf_rfx_file *f);
uint64_t rf_rfx_file_size(const rf_rfx_file *f);

/* ---- stream encoding for section contents --------------------------------
** Little-endian, fixed width, no alignment or padding between values:
**   u8 u16 u32 u64   1, 2, 4, 8 bytes
**   i32 i64          two's complement, 4 and 8 bytes
**   f64              the IEEE 754 binary64 bit pattern as a u64
**   str              u64 byte length, then the bytes (no NUL; may hold any byte)
**   bytes            raw bytes whose length the reader knows from context
**   count            a u64 element count, checked on reading (rf_rfx_get_count)
** Writers append to an rf_buf; check rf_buf.oom once at the end. */

void rf_rfx_put_u8(rf_buf *b, uint8_t v);
void rf_rfx_put_u16(rf_buf *b, uint16_t v);
void rf_rfx_put_u32(rf_buf *b, uint32_t v);
void rf_rfx_put_u64(rf_buf *b, uint64_t v);
void rf_rfx_put_i32(rf_buf *b, int32_t v);
void rf_rfx_put_i64(rf_buf *b, int64_t v);
void rf_rfx_put_f64(rf_buf *b, double v);
void rf_rfx_put_str(rf_buf *b, const void *s, uint64_t len);
void rf_rfx_put_cstr(rf_buf *b, const char *s); /* str of strlen(s) bytes */
void rf_rfx_put_bytes(rf_buf *b, const void *p, uint64_t n);

/* A read cursor over a section. Every get returns 1 on success; on an overrun
** (or once any earlier get failed) it returns 0, stores zero / NULL in the
** outputs and leaves err set, so a decoder may read a whole record and test
** rf_rfx_rd_ok once. Nothing reads outside [data, data + size). */
typedef struct rf_rfx_rd {
    const unsigned char *data;
    uint64_t size;
    uint64_t pos;
    int err;          /* sticky */
    int oom;          /* the failure was exhausted memory (rf_rfx_get_cstr) */
    uint64_t err_pos; /* position of the first failure, for messages */
} rf_rfx_rd;

void rf_rfx_rd_init(rf_rfx_rd *rd, const void *data, uint64_t size);
static inline int rf_rfx_rd_ok(const rf_rfx_rd *rd) { return !rd->err; }
static inline uint64_t rf_rfx_rd_remaining(const rf_rfx_rd *rd)
{
    return rd->err ? 0 : rd->size - rd->pos;
}
/* 1 if no error and every byte was consumed (decoders should demand this, so
** that trailing garbage is not silently accepted). */
static inline int rf_rfx_rd_at_end(const rf_rfx_rd *rd) { return !rd->err && rd->pos == rd->size; }
/* Marks a semantic error (say, an enum value out of range) the same sticky way. */
void rf_rfx_rd_fail(rf_rfx_rd *rd);

int rf_rfx_get_u8(rf_rfx_rd *rd, uint8_t *v);
int rf_rfx_get_u16(rf_rfx_rd *rd, uint16_t *v);
int rf_rfx_get_u32(rf_rfx_rd *rd, uint32_t *v);
int rf_rfx_get_u64(rf_rfx_rd *rd, uint64_t *v);
int rf_rfx_get_i32(rf_rfx_rd *rd, int32_t *v);
int rf_rfx_get_i64(rf_rfx_rd *rd, int64_t *v);
int rf_rfx_get_f64(rf_rfx_rd *rd, double *v);
/* A str, without copying: *s points into the section, is NOT NUL-terminated,
** and stays valid as long as the section does. A length larger than the bytes
** remaining is an overrun. */
int rf_rfx_get_str(rf_rfx_rd *rd, const char **s, uint64_t *len);
/* A str copied into the arena with a NUL added; a str holding a NUL byte is an
** error (it could not round-trip as a C string). The allocation is at most the
** bytes remaining in the section; if it fails, err and oom are both set. */
int rf_rfx_get_cstr(rf_rfx_rd *rd, rf_arena *a, char **s);
/* n raw bytes: copied to dst (which must have room for n bytes, and is zeroed
** on failure), or viewed in place (valid as long as the section). */
int rf_rfx_get_bytes(rf_rfx_rd *rd, void *dst, uint64_t n);
int rf_rfx_get_view(rf_rfx_rd *rd, uint64_t n, const void **p);
/* A count of elements that follow, each encoded in at least elem_min_size
** bytes: fails unless count <= max and count * elem_min_size <= the bytes
** remaining. So allocating count elements is bounded by the caller's max and
** by the section's size. elem_min_size 0 (elements that may be empty) leaves
** only max as the bound: then choose max as a safe allocation limit. */
int rf_rfx_get_count(rf_rfx_rd *rd, uint64_t max, uint64_t elem_min_size, uint64_t *n);

#endif
