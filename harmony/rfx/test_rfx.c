/*
** harmony/rfx/test_rfx.c: unit tests of the .rfx container and its stream
** (ctest entries rfx_*). Usage: test_rfx GROUP [SCRATCH_DIR]; GROUP "all"
** runs every group; "seeds" writes seed files for tests/fuzz/fuzz_rfx.
**
** Besides round trips, the tests damage valid files every way a file gets
** damaged (each truncation, each single bit flip, crafted table entries) and
** demand a clean error for each. Damaged bytes are handed over in buffers of
** their exact size, so that under -DRF_SANITIZE=ON any read past the end is
** an AddressSanitizer report, not luck.
*/
#include "rf_rfx.h"
#include "rf_test_check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *scratch = ".";

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void wr64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void wr16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

/* Recomputes the table and header checksums after a test patched fields
** (offsets as in docs/RFX.md), so that the loader's later checks are reached. */
static void reseal(unsigned char *img, uint64_t size)
{
    uint64_t toff = rd64(img + 24);
    uint64_t count = rd32(img + 32);
    if (toff <= size && count <= (size - toff) / 24)
        wr32(img + 36, rf_rfx_crc32(img + toff, count * 24));
    wr32(img + 92, rf_rfx_crc32(img, 92));
}

/* A valid file with a few sections of awkward sizes. */
static unsigned char *sample(uint64_t *size)
{
    rf_rfx_writer *w = rf_rfx_writer_new();
    CHECK(w != NULL);
    static const char schm[] = "schema: 2 relations";
    unsigned char hirs[37];
    for (int i = 0; i < 37; i++) hirs[i] = (unsigned char)(i * 7);
    CHECK(rf_rfx_writer_add(w, "SCHM", schm, sizeof schm - 1) == RF_OK);
    CHECK(rf_rfx_writer_add(w, "HIRS", hirs, sizeof hirs) == RF_OK);
    CHECK(rf_rfx_writer_add(w, "STRS", "", 0) == RF_OK);
    CHECK(rf_rfx_writer_add(w, "PTX0", ".version 8.0\n.target sm_90\n", 27) == RF_OK);
    rf_buf b;
    rf_buf_init(&b);
    CHECK(rf_rfx_writer_write_to_buf(w, &b) == RF_OK);
    rf_rfx_writer_free(w);
    *size = (uint64_t)b.len;
    return (unsigned char *)rf_buf_take(&b);
}

/* Opens bytes from an exactly sized copy; returns the status and, when it
** failed, checks that exactly one error names the file and copies its text. */
static rf_status try_open(const unsigned char *img, uint64_t size, char *msg, size_t msgsize)
{
    unsigned char *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, img, size);
    rf_diags d;
    rf_diags_init(&d);
    rf_rfx_file *f = (rf_rfx_file *)1;
    rf_status st = rf_rfx_open_bytes("t.rfx", copy, size, &f, &d);
    free(copy);
    if (msg) msg[0] = 0;
    if (st == RF_OK) {
        CHECK(f != NULL && d.count == 0);
        rf_rfx_close(f);
    } else {
        CHECK(f == NULL);
        CHECK(d.count == 1 && d.nerrors == 1);
        if (d.count >= 1) {
            CHECK(d.items[0].loc.file && strcmp(d.items[0].loc.file, "t.rfx") == 0);
            CHECK(d.items[0].loc.line == 0);
            CHECK(strlen(d.items[0].msg) > 10);
            if (msg) snprintf(msg, msgsize, "%s", d.items[0].msg);
        }
    }
    rf_diags_free(&d);
    return st;
}

/* Expects a rejection whose message contains want. */
static void expect_error(const unsigned char *img, uint64_t size, const char *want, int line)
{
    char msg[512];
    rf_status st = try_open(img, size, msg, sizeof msg);
    if (st != RF_EUSER || !strstr(msg, want)) {
        fprintf(stderr, "%s:%d: expected an error containing \"%s\", got status %d \"%s\"\n",
                __FILE__, line, want, (int)st, msg);
        failures++;
    }
}
#define EXPECT_ERROR(img, size, want) expect_error((img), (size), (want), __LINE__)

/* ---- round trip --------------------------------------------------------- */

static void test_roundtrip(void)
{
    /* the documented checksum (docs/RFX.md, "Checksums") */
    CHECK(rf_rfx_crc32("123456789", 9) == 0xCBF43926u);
    CHECK(rf_rfx_crc32(NULL, 0) == 0);

    enum { BIG = 100003 };
    unsigned char *big = malloc(BIG);
    for (int i = 0; i < BIG; i++) big[i] = (unsigned char)(i * 2654435761u >> 13);
    static const unsigned char bin[] = {0, 1, 0, 0xff, 0, 0x89, 'R', 'F', 'X', 0};
    rf_rfx_writer *w = rf_rfx_writer_new();
    CHECK(rf_rfx_writer_add(w, "SCHM", "ab", 2) == RF_OK);
    CHECK(rf_rfx_writer_add(w, "HIRS", bin, sizeof bin) == RF_OK);
    CHECK(rf_rfx_writer_add(w, "STRS", NULL, 0) == RF_OK);
    CHECK(rf_rfx_writer_add(w, "PTX0", big, BIG) == RF_OK);
    CHECK(rf_rfx_writer_add(w, "X~!9", "12345678", 8) == RF_OK);
    rf_buf b1, b2;
    rf_buf_init(&b1);
    rf_buf_init(&b2);
    CHECK(rf_rfx_writer_write_to_buf(w, &b1) == RF_OK);
    CHECK(rf_rfx_writer_write_to_buf(w, &b2) == RF_OK);
    /* reproducible: same sections, same bytes */
    CHECK(b1.len == b2.len && memcmp(b1.data, b2.data, (size_t)b1.len) == 0);
    CHECK(b1.len % 8 == 0);
    CHECK(memcmp(b1.data, "\x89RFX\r\n\x1a\n", 8) == 0);
    rf_rfx_writer_free(w);

    rf_diags d;
    rf_diags_init(&d);
    rf_rfx_file *f = NULL;
    CHECK(rf_rfx_open_bytes("rt.rfx", b1.data, (uint64_t)b1.len, &f, &d) == RF_OK);
    CHECK(d.count == 0);
    if (f) {
        const void *p;
        uint64_t n;
        CHECK(rf_rfx_section(f, "SCHM", &p, &n) == 1 && n == 2 && memcmp(p, "ab", 2) == 0);
        CHECK((uintptr_t)p % 8 == 0);
        CHECK(rf_rfx_section(f, "HIRS", &p, &n) == 1 && n == sizeof bin &&
              memcmp(p, bin, sizeof bin) == 0);
        CHECK((uintptr_t)p % 8 == 0);
        CHECK(rf_rfx_section(f, "STRS", &p, &n) == 1 && n == 0);
        CHECK(rf_rfx_section(f, "PTX0", &p, &n) == 1 && n == BIG && memcmp(p, big, BIG) == 0);
        CHECK((uintptr_t)p % 8 == 0);
        CHECK(rf_rfx_section(f, "X~!9", &p, &n) == 1 && n == 8);
        CHECK(rf_rfx_section(f, "NONE", &p, &n) == 0 && p == NULL && n == 0);
        CHECK(rf_rfx_format_major(f) == RF_RFX_FORMAT_MAJOR);
        CHECK(rf_rfx_format_minor(f) == RF_RFX_FORMAT_MINOR);
        CHECK(rf_rfx_flags(f) == 0);
        CHECK(strcmp(rf_rfx_writer_version(f), RF_VERSION_STRING) == 0);
        CHECK(rf_rfx_file_size(f) == (uint64_t)b1.len);
        CHECK(rf_rfx_section_count(f) == 5);
        static const char *order[] = {"SCHM", "HIRS", "STRS", "PTX0", "X~!9"};
        for (uint64_t i = 0; i < 5; i++) {
            char tag[4];
            rf_rfx_section_at(f, i, tag, &p, &n);
            CHECK(memcmp(tag, order[i], 4) == 0);
        }
        rf_rfx_close(f);
    }
    rf_diags_free(&d);
    rf_buf_free(&b1);
    rf_buf_free(&b2);
    free(big);

    /* no sections at all is a valid (if useless) file */
    w = rf_rfx_writer_new();
    rf_buf_init(&b1);
    CHECK(rf_rfx_writer_write_to_buf(w, &b1) == RF_OK);
    CHECK(b1.len == RF_RFX_HEADER_SIZE);
    CHECK(try_open((unsigned char *)b1.data, (uint64_t)b1.len, NULL, 0) == RF_OK);
    rf_buf_free(&b1);
    rf_rfx_writer_free(w);

    /* writer misuse: the failure sticks, so no file lacking a section is written */
    w = rf_rfx_writer_new();
    CHECK(rf_rfx_writer_add(w, "SCHM", "a", 1) == RF_OK);
    CHECK(rf_rfx_writer_add(w, "SCHM", "b", 1) == RF_EINTERNAL);
    rf_buf_init(&b1);
    CHECK(rf_rfx_writer_write_to_buf(w, &b1) == RF_EINTERNAL);
    CHECK(b1.len == 0);
    rf_buf_free(&b1);
    rf_rfx_writer_free(w);
    w = rf_rfx_writer_new();
    CHECK(rf_rfx_writer_add(w, "AB C", "a", 1) == RF_EINTERNAL);
    CHECK(rf_rfx_writer_add(w, "AB\0C", "a", 1) == RF_EINTERNAL);
    CHECK(rf_rfx_writer_add(w, "\x89" "ABC", "a", 1) == RF_EINTERNAL);
    CHECK(rf_rfx_writer_add(w, "ABCD", NULL, 1) == RF_EINTERNAL);
    rf_rfx_writer_free(w);
    rf_rfx_writer_free(NULL);
    rf_rfx_close(NULL);
}

/* ---- damage ------------------------------------------------------------- */

static void test_truncation(void)
{
    uint64_t size;
    unsigned char *img = sample(&size);
    CHECK(try_open(img, size, NULL, 0) == RF_OK);
    for (uint64_t len = 0; len < size; len++) {
        char msg[512];
        rf_status st = try_open(img, len, msg, sizeof msg);
        CHECK(st == RF_EUSER);
        if (len == 0)
            CHECK(strstr(msg, "empty file") != NULL);
        else if (!strstr(msg, "truncated")) {
            fprintf(stderr, "length %llu: %s\n", (unsigned long long)len, msg);
            failures++;
        }
        if (len >= 24 && len < size) {
            char want[128];
            snprintf(want, sizeof want, "truncated: the file is %llu bytes, the header says %llu",
                     (unsigned long long)len, (unsigned long long)size);
            if (!strstr(msg, want)) {
                fprintf(stderr, "length %llu: want \"%s\", got \"%s\"\n", (unsigned long long)len,
                        want, msg);
                failures++;
            }
        }
    }
    /* bytes appended are as wrong as bytes missing */
    unsigned char *longer = calloc(1, size + 9);
    memcpy(longer, img, size);
    EXPECT_ERROR(longer, size + 1, "1 unexpected byte after the end");
    EXPECT_ERROR(longer, size + 9, "9 unexpected bytes after the end");
    free(longer);
    free(img);
    printf("truncation: %llu lengths rejected\n", (unsigned long long)size);
}

static void test_bitflip(void)
{
    uint64_t size;
    unsigned char *img = sample(&size);
    uint64_t rejected = 0;
    /* The format has no unchecked bits: every flip anywhere must be caught
    ** (the header and table by their checksums, sections by theirs, padding
    ** by the zero check). */
    for (uint64_t bit = 0; bit < size * 8; bit++) {
        img[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        char msg[512];
        rf_status st = try_open(img, size, msg, sizeof msg);
        img[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        if (st == RF_EUSER)
            rejected++;
        else {
            fprintf(stderr, "bit %llu (byte %llu) flipped: accepted\n", (unsigned long long)bit,
                    (unsigned long long)(bit / 8));
            failures++;
        }
    }
    CHECK(try_open(img, size, NULL, 0) == RF_OK);
    /* a few specific ones say what was hit */
    img[200] ^= 4; /* inside a section (the first section starts at 96 + 4 * 24 = 192) */
    EXPECT_ERROR(img, size, "section SCHM is corrupted (checksum mismatch)");
    img[200] ^= 4;
    img[100] ^= 1; /* the section table */
    EXPECT_ERROR(img, size, "the section table is corrupted (checksum mismatch)");
    img[100] ^= 1;
    img[50] ^= 1; /* the writer version string */
    EXPECT_ERROR(img, size, "the header is corrupted (checksum mismatch)");
    img[50] ^= 1;
    free(img);
    printf("bitflip: %llu of %llu single-bit flips rejected\n", (unsigned long long)rejected,
           (unsigned long long)size * 8);
}

/* ---- header ------------------------------------------------------------- */

static void test_header(void)
{
    uint64_t size;
    unsigned char *img = sample(&size);
    unsigned char *t = malloc(size);

    /* foreign files */
    EXPECT_ERROR((const unsigned char *)"hello, world\n", 13, "not a redfox program (.rfx) file");
    EXPECT_ERROR((const unsigned char *)"\x7f" "ELF\2\1\1\0\0\0\0\0\0\0\0\0", 16,
                 "not a redfox program (.rfx) file");
    EXPECT_ERROR((const unsigned char *)"\x89PNG\r\n\x1a\n", 8, "not a redfox program (.rfx) file");
    EXPECT_ERROR((const unsigned char *)"x", 1, "not a redfox program (.rfx) file");
    memcpy(t, img, size);
    memcpy(t, "RFX\r\n\x1a\n\n", 8);
    EXPECT_ERROR(t, size, "not a redfox program (.rfx) file");

    /* line endings converted by a text-mode transfer: CR LF -> LF */
    unsigned char *m = malloc(size);
    memcpy(m, img, 4);
    memcpy(m + 4, img + 5, size - 5);
    EXPECT_ERROR(m, size - 1, "text-mode transfer");
    free(m);

    /* newer major: refused before the checksum, whose layout it may change */
    memcpy(t, img, size);
    wr16(t + 8, RF_RFX_FORMAT_MAJOR + 1);
    wr16(t + 10, 3);
    char want[160];
    snprintf(want, sizeof want,
             "written by a newer redfox (format %d.3, this redfox reads up to %d.%d)",
             RF_RFX_FORMAT_MAJOR + 1, RF_RFX_FORMAT_MAJOR, RF_RFX_FORMAT_MINOR);
    EXPECT_ERROR(t, size, want);
    EXPECT_ERROR(t, 12, want); /* even when all that remains is the version */
    wr16(t + 8, 0xffff);
    EXPECT_ERROR(t, size, "written by a newer redfox (format 65535.3");
    /* older major */
    wr16(t + 8, RF_RFX_FORMAT_MAJOR - 1);
    EXPECT_ERROR(t, size, "written by an older redfox");

    /* newer minor: accepted, unknown tags skipped */
    {
        rf_rfx_writer *w = rf_rfx_writer_new();
        CHECK(rf_rfx_writer_add(w, "SCHM", "s", 1) == RF_OK);
        CHECK(rf_rfx_writer_add(w, "ZNEW", "future", 6) == RF_OK);
        rf_buf b;
        rf_buf_init(&b);
        CHECK(rf_rfx_writer_write_to_buf(w, &b) == RF_OK);
        rf_rfx_writer_free(w);
        unsigned char *u = (unsigned char *)b.data;
        wr16(u + 10, RF_RFX_FORMAT_MINOR + 7);
        wr32(u + 12, 0x00008001u); /* compatible flags: ignored if unknown */
        reseal(u, (uint64_t)b.len);
        rf_diags d;
        rf_diags_init(&d);
        rf_rfx_file *f = NULL;
        CHECK(rf_rfx_open_bytes("t.rfx", u, (uint64_t)b.len, &f, &d) == RF_OK);
        if (f) {
            const void *p;
            uint64_t n;
            CHECK(rf_rfx_format_minor(f) == RF_RFX_FORMAT_MINOR + 7);
            CHECK(rf_rfx_flags(f) == 0x00008001u);
            CHECK(rf_rfx_section(f, "SCHM", &p, &n) == 1 && n == 1);
            rf_rfx_close(f);
        }
        rf_diags_free(&d);
        /* an incompatible flag it does not know: refused */
        wr32(u + 12, 0x00010000u);
        reseal(u, (uint64_t)b.len);
        EXPECT_ERROR(u, (uint64_t)b.len, "uses features this redfox does not support");
        rf_buf_free(&b);
    }

    /* header fields that only a crafted file (valid checksum) can get wrong */
    memcpy(t, img, size);
    memset(t + 40, 'x', 52); /* writer string without a NUL */
    reseal(t, size);
    EXPECT_ERROR(t, size, "invalid writer version");
    memcpy(t, img, size);
    t[41] = 0;
    t[43] = 'z'; /* junk after the terminating NUL */
    reseal(t, size);
    EXPECT_ERROR(t, size, "invalid writer version");
    memcpy(t, img, size);
    t[40] = '\n';
    reseal(t, size);
    EXPECT_ERROR(t, size, "invalid writer version");
    memcpy(t, img, size);
    wr64(t + 16, UINT64_MAX); /* file size */
    reseal(t, size);
    EXPECT_ERROR(t, size, "truncated: the file is");
    memcpy(t, img, size);
    wr32(t + 92, rd32(t + 92) ^ 0x80000000u);
    EXPECT_ERROR(t, size, "the header is corrupted (checksum mismatch)");

    free(t);
    free(img);
}

/* ---- section table and layout ------------------------------------------ */

/* Entry i's fields in the sample (table at 96, 24 bytes an entry). */
#define ENTRY(img, i) ((img) + 96 + 24 * (i))

static void test_layout(void)
{
    uint64_t size;
    unsigned char *img = sample(&size);
    unsigned char *t = malloc(size);
    /* sample: SCHM(19 bytes) HIRS(37) STRS(0) PTX0(27) */
    uint64_t off0 = rd64(ENTRY(img, 0) + 8), off1 = rd64(ENTRY(img, 1) + 8);
    CHECK(off0 == 192 && off1 == 216);

    memcpy(t, img, size);
    memcpy(ENTRY(t, 1), "SCHM", 4);
    reseal(t, size);
    EXPECT_ERROR(t, size, "section SCHM appears more than once");

    memcpy(t, img, size);
    wr64(ENTRY(t, 1) + 8, off0 + 8); /* HIRS starts inside SCHM */
    reseal(t, size);
    EXPECT_ERROR(t, size, "section SCHM (bytes 192 to 211) and section HIRS (bytes 200 to 237) overlap");

    memcpy(t, img, size);
    wr64(ENTRY(t, 0) + 8, 8); /* inside the header */
    reseal(t, size);
    EXPECT_ERROR(t, size, "the header (bytes 0 to 96) and section SCHM (bytes 8 to 27) overlap");

    memcpy(t, img, size);
    wr64(ENTRY(t, 0) + 8, 112); /* inside the table */
    reseal(t, size);
    EXPECT_ERROR(t, size, "overlap");

    memcpy(t, img, size);
    wr64(ENTRY(t, 3) + 16, 4096); /* past the end */
    reseal(t, size);
    EXPECT_ERROR(t, size, "section PTX0 (bytes");
    EXPECT_ERROR(t, size, "extends past the end of the file");

    memcpy(t, img, size);
    wr64(ENTRY(t, 1) + 16, UINT64_MAX); /* offset + size overflows */
    reseal(t, size);
    EXPECT_ERROR(t, size, "section HIRS is invalid: offset 216 + size 18446744073709551615 overflows");

    memcpy(t, img, size);
    wr64(ENTRY(t, 1) + 8, UINT64_MAX);
    wr64(ENTRY(t, 1) + 16, 1);
    reseal(t, size);
    EXPECT_ERROR(t, size, "overflows");

    memcpy(t, img, size);
    wr64(ENTRY(t, 1) + 8, UINT64_MAX - 7);
    wr64(ENTRY(t, 1) + 16, 0);
    reseal(t, size);
    EXPECT_ERROR(t, size, "extends past the end of the file");

    memcpy(t, img, size);
    wr64(ENTRY(t, 1) + 8, off1 + 1);
    wr64(ENTRY(t, 1) + 16, 1);
    reseal(t, size);
    EXPECT_ERROR(t, size, "section HIRS is misaligned");

    memcpy(t, img, size);
    memcpy(ENTRY(t, 2), "S R\0", 4);
    reseal(t, size);
    EXPECT_ERROR(t, size, "section table entry 2 has an invalid tag (bytes 53 20 52 00)");

    /* a section shortened: the bytes it gave up are unaccounted for */
    memcpy(t, img, size);
    wr64(ENTRY(t, 1) + 16, 8);
    reseal(t, size);
    EXPECT_ERROR(t, size, "lie outside every section");
    /* nonzero padding after SCHM (19 bytes at 192: padding 211..215) */
    memcpy(t, img, size);
    t[213] = 1;
    EXPECT_ERROR(t, size, "unexpected bytes 211 to 216 lie outside every section");

    /* section count and table offset */
    memcpy(t, img, size);
    wr32(t + 32, UINT32_MAX);
    reseal(t, size);
    EXPECT_ERROR(t, size, "the section table (4294967295 entries at offset 96) extends past the end");
    memcpy(t, img, size);
    wr64(t + 24, UINT64_MAX - 7);
    reseal(t, size);
    EXPECT_ERROR(t, size, "section table offset");
    memcpy(t, img, size);
    wr64(t + 24, 100);
    reseal(t, size);
    EXPECT_ERROR(t, size, "section table offset 100");
    memcpy(t, img, size);
    wr64(t + 24, 48);
    reseal(t, size);
    EXPECT_ERROR(t, size, "section table offset 48");
    memcpy(t, img, size);
    wr32(t + 32, 3); /* drops PTX0 from the table: its bytes are then stray */
    reseal(t, size);
    EXPECT_ERROR(t, size, "lie outside every section");

    /* the table may sit after the sections: header, SCHM at 96, table at 112 */
    {
        unsigned char h[136];
        memset(h, 0, sizeof h);
        memcpy(h, img, 96);
        wr64(h + 16, sizeof h);
        wr64(h + 24, 112);
        wr32(h + 32, 1);
        memcpy(h + 96, "0123456789abcdef", 16);
        memcpy(h + 112, "SCHM", 4);
        wr32(h + 116, rf_rfx_crc32(h + 96, 16));
        wr64(h + 120, 96);
        wr64(h + 128, 16);
        reseal(h, sizeof h);
        rf_diags d;
        rf_diags_init(&d);
        rf_rfx_file *f = NULL;
        CHECK(rf_rfx_open_bytes("t.rfx", h, sizeof h, &f, &d) == RF_OK);
        const void *p;
        uint64_t n;
        CHECK(f && rf_rfx_section(f, "SCHM", &p, &n) == 1 && n == 16 &&
              memcmp(p, "0123456789abcdef", 16) == 0);
        rf_rfx_close(f);
        rf_diags_free(&d);
        /* and overlapping it is caught there too */
        wr64(h + 128, 24);
        wr32(h + 116, rf_rfx_crc32(h + 96, 24));
        reseal(h, sizeof h);
        EXPECT_ERROR(h, sizeof h, "section SCHM (bytes 96 to 120) and the section table (bytes 112 to 136) overlap");
    }
    free(t);
    free(img);
}

/* ---- stream ------------------------------------------------------------- */

static void test_stream(void)
{
    rf_buf b;
    rf_buf_init(&b);
    rf_rfx_put_u8(&b, 0xab);
    rf_rfx_put_u16(&b, 0xbeef);
    rf_rfx_put_u32(&b, 0xdeadbeefu);
    rf_rfx_put_u64(&b, 0x0123456789abcdefull);
    rf_rfx_put_i32(&b, INT32_MIN);
    rf_rfx_put_i64(&b, -2);
    rf_rfx_put_f64(&b, -0.0);
    rf_rfx_put_f64(&b, NAN);
    rf_rfx_put_f64(&b, 1e300);
    rf_rfx_put_str(&b, "a\0b", 3);
    rf_rfx_put_cstr(&b, "");
    rf_rfx_put_cstr(&b, "name");
    rf_rfx_put_bytes(&b, "RAW", 3);
    rf_rfx_put_u64(&b, 3); /* a count */
    rf_rfx_put_u16(&b, 1);
    rf_rfx_put_u16(&b, 2);
    rf_rfx_put_u16(&b, 3);
    CHECK(!b.oom);
    /* the encoding is the documented one: little-endian, fixed width */
    const unsigned char *e = (const unsigned char *)b.data;
    CHECK(e[0] == 0xab && e[1] == 0xef && e[2] == 0xbe);
    CHECK(e[3] == 0xef && e[6] == 0xde);
    CHECK(e[7] == 0xef && e[14] == 0x01);
    CHECK(e[15] == 0 && e[18] == 0x80);
    CHECK(e[19] == 0xfe && e[26] == 0xff);
    CHECK(b.len == 1 + 2 + 4 + 8 + 4 + 8 + 24 + 11 + 8 + 12 + 3 + 8 + 6);

    uint64_t total = (uint64_t)b.len;
    /* Decode from every prefix (exactly sized copies): only the whole succeeds,
    ** and no prefix makes it read past its end. */
    for (uint64_t len = 0; len <= total; len++) {
        unsigned char *copy = malloc(len ? len : 1);
        memcpy(copy, b.data, len);
        rf_rfx_rd rd;
        rf_rfx_rd_init(&rd, copy, len);
        rf_arena a;
        rf_arena_init(&a);
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64, n, sl;
        int32_t i32;
        int64_t i64;
        double f1, f2, f3;
        const char *s;
        char *c1, *c2;
        unsigned char raw[3];
        rf_rfx_get_u8(&rd, &u8);
        rf_rfx_get_u16(&rd, &u16);
        rf_rfx_get_u32(&rd, &u32);
        rf_rfx_get_u64(&rd, &u64);
        rf_rfx_get_i32(&rd, &i32);
        rf_rfx_get_i64(&rd, &i64);
        rf_rfx_get_f64(&rd, &f1);
        rf_rfx_get_f64(&rd, &f2);
        rf_rfx_get_f64(&rd, &f3);
        rf_rfx_get_str(&rd, &s, &sl);
        rf_rfx_get_cstr(&rd, &a, &c1);
        rf_rfx_get_cstr(&rd, &a, &c2);
        rf_rfx_get_bytes(&rd, raw, 3);
        uint16_t el[3] = {0, 0, 0};
        if (rf_rfx_get_count(&rd, 10, 2, &n))
            for (uint64_t i = 0; i < n; i++) rf_rfx_get_u16(&rd, &el[i]);
        if (len < total) {
            CHECK(!rf_rfx_rd_ok(&rd));
            CHECK(!rf_rfx_rd_at_end(&rd));
            CHECK(rd.err_pos <= len);
            CHECK(rf_rfx_rd_remaining(&rd) == 0);
        } else {
            CHECK(rf_rfx_rd_at_end(&rd));
            CHECK(u8 == 0xab && u16 == 0xbeef && u32 == 0xdeadbeefu &&
                  u64 == 0x0123456789abcdefull);
            CHECK(i32 == INT32_MIN && i64 == -2);
            CHECK(f1 == 0.0 && signbit(f1) && isnan(f2) && f3 == 1e300);
            CHECK(sl == 3 && memcmp(s, "a\0b", 3) == 0);
            CHECK(c1 && c1[0] == 0 && c2 && strcmp(c2, "name") == 0);
            CHECK(memcmp(raw, "RAW", 3) == 0);
            CHECK(n == 3 && el[0] == 1 && el[1] == 2 && el[2] == 3);
        }
        rf_arena_free(&a);
        free(copy);
    }

    /* the error is sticky: once failed, even reads that would fit fail */
    {
        unsigned char two[2] = {1, 2};
        rf_rfx_rd rd;
        rf_rfx_rd_init(&rd, two, 2);
        uint32_t v32 = 7;
        uint8_t v8 = 7;
        CHECK(rf_rfx_get_u32(&rd, &v32) == 0 && v32 == 0);
        CHECK(rd.err && rd.err_pos == 0);
        CHECK(rf_rfx_get_u8(&rd, &v8) == 0 && v8 == 0);
        rf_rfx_rd_init(&rd, two, 2);
        CHECK(rf_rfx_get_u8(&rd, &v8) == 1 && v8 == 1);
        rf_rfx_rd_fail(&rd);
        CHECK(rd.err_pos == 1 && rf_rfx_get_u8(&rd, &v8) == 0);
        /* NULL reads as empty */
        rf_rfx_rd_init(&rd, NULL, 5);
        const void *p;
        CHECK(rf_rfx_get_view(&rd, 0, &p) == 1 && rf_rfx_rd_at_end(&rd));
        CHECK(rf_rfx_get_u8(&rd, &v8) == 0);
    }

    /* Length and count fields larger than the data: refused, nothing allocated. */
    {
        rf_buf h;
        rf_buf_init(&h);
        rf_rfx_put_u64(&h, UINT64_MAX);
        rf_rfx_put_u64(&h, 0);
        rf_rfx_rd rd;
        rf_arena a;
        rf_arena_init(&a);
        const char *s = "x";
        uint64_t n = 9;
        char *c = (char *)"x";

        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_str(&rd, &s, &n) == 0 && s == NULL && n == 0 && rd.err_pos == 0);
        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_cstr(&rd, &a, &c) == 0 && c == NULL && !rd.oom);
        CHECK(a.bytes == 0);
        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_count(&rd, UINT64_MAX, 1, &n) == 0 && n == 0);
        /* elem_min_size large enough that count * size would overflow */
        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_count(&rd, UINT64_MAX, UINT64_MAX, &n) == 0);
        /* elem_min_size 0: only max bounds it */
        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_count(&rd, 1000, 0, &n) == 0);
        rf_rfx_rd_init(&rd, h.data + 8, 8);
        CHECK(rf_rfx_get_count(&rd, 1000, 0, &n) == 1 && n == 0);

        /* a length one larger than what remains */
        rf_buf_free(&h);
        rf_buf_init(&h);
        rf_rfx_put_u64(&h, 4);
        rf_rfx_put_bytes(&h, "abc", 3);
        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_str(&rd, &s, &n) == 0);
        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_count(&rd, 100, 1, &n) == 0);
        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_count(&rd, 3, 0, &n) == 0);
        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_count(&rd, 4, 0, &n) == 1 && n == 4);

        /* a str with a NUL cannot become a C string */
        rf_buf_free(&h);
        rf_buf_init(&h);
        rf_rfx_put_str(&h, "a\0", 2);
        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_cstr(&rd, &a, &c) == 0 && c == NULL);
        rf_rfx_rd_init(&rd, h.data, (uint64_t)h.len);
        CHECK(rf_rfx_get_str(&rd, &s, &n) == 1 && n == 2);
        rf_buf_free(&h);
        rf_arena_free(&a);
    }
    rf_buf_free(&b);
}

/* ---- files -------------------------------------------------------------- */

static char *spath(const char *name) { return rf_sprintf("%s/%s", scratch, name); }

static rf_status open_path(const char *path, char *msg, size_t msgsize)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_rfx_file *f = NULL;
    rf_status st = rf_rfx_open_file(path, &f, &d);
    msg[0] = 0;
    if (st == RF_OK) {
        CHECK(f != NULL && d.count == 0);
        rf_rfx_close(f);
    } else {
        CHECK(f == NULL && d.count == 1);
        if (d.count) {
            CHECK(strcmp(d.items[0].loc.file, path) == 0);
            snprintf(msg, msgsize, "%s", d.items[0].msg);
        }
    }
    rf_diags_free(&d);
    return st;
}

/* Files named path.tmp.* left in the folder: a failed write must leave none. */
static int leftover_tmp(const char *path)
{
    char *pat = rf_sprintf("ls %s.tmp.* >/dev/null 2>&1", path);
    int r = system(pat);
    free(pat);
    return r == 0;
}

static void test_file(void)
{
    char msg[512];
    mkdir(scratch, 0777);
    char *p = spath("test_rfx_prog.rfx");
    unlink(p);
    rf_rfx_writer *w = rf_rfx_writer_new();
    CHECK(rf_rfx_writer_add(w, "HIRS", "kernels", 7) == RF_OK);
    rf_diags d;
    rf_diags_init(&d);
    CHECK(rf_rfx_writer_write_file(w, p, &d) == RF_OK && d.count == 0);
    CHECK(open_path(p, msg, sizeof msg) == RF_OK);
    CHECK(!leftover_tmp(p));
    /* writing again replaces it */
    CHECK(rf_rfx_writer_add(w, "SCHM", "schema", 6) == RF_OK);
    CHECK(rf_rfx_writer_write_file(w, p, &d) == RF_OK && d.count == 0);
    {
        rf_rfx_file *f = NULL;
        CHECK(rf_rfx_open_file(p, &f, &d) == RF_OK);
        const void *s;
        uint64_t n;
        CHECK(f && rf_rfx_section(f, "SCHM", &s, &n) == 1 && n == 6);
        CHECK(f && rf_rfx_section(f, "HIRS", &s, &n) == 1 && n == 7 && memcmp(s, "kernels", 7) == 0);
        rf_rfx_close(f);
    }
    struct stat sb;
    CHECK(stat(p, &sb) == 0);
    uint64_t size = (uint64_t)sb.st_size;

    /* a failed write leaves the old file as it was, and no temporary */
    rf_rfx_writer *bad = rf_rfx_writer_new();
    CHECK(rf_rfx_writer_add(bad, "HIRS", "x", 1) == RF_OK);
    CHECK(rf_rfx_writer_add(bad, "HIRS", "y", 1) == RF_EINTERNAL);
    CHECK(rf_rfx_writer_write_file(bad, p, &d) == RF_EINTERNAL);
    CHECK(d.count == 1 && strcmp(d.items[0].loc.file, p) == 0);
    rf_diags_free(&d);
    rf_rfx_writer_free(bad);
    CHECK(open_path(p, msg, sizeof msg) == RF_OK);
    CHECK(!leftover_tmp(p));

    /* unwritable destinations */
    char *nodir = spath("no/such/folder/x.rfx");
    CHECK(rf_rfx_writer_write_file(w, nodir, &d) == RF_EIO);
    CHECK(d.count == 1 && strstr(d.items[0].msg, "cannot write") &&
          strcmp(d.items[0].loc.file, nodir) == 0);
    rf_diags_free(&d);
    char *dirp = spath("test_rfx_dir.rfx");
    mkdir(dirp, 0777);
    CHECK(rf_rfx_writer_write_file(w, dirp, &d) == RF_EIO);
    CHECK(d.count == 1 && strstr(d.items[0].msg, "cannot write"));
    rf_diags_free(&d);
    CHECK(!leftover_tmp(dirp));
    rf_rfx_writer_free(w);

    /* reading */
    CHECK(open_path(nodir, msg, sizeof msg) == RF_EIO && strstr(msg, "cannot read"));
    CHECK(open_path(dirp, msg, sizeof msg) == RF_EIO && strstr(msg, "directory"));
    rmdir(dirp);
    CHECK(truncate(p, (off_t)size + 5) == 0);
    CHECK(open_path(p, msg, sizeof msg) == RF_EUSER && strstr(msg, "5 unexpected bytes after the end"));
    CHECK(truncate(p, (off_t)size - 3) == 0);
    char want[160];
    snprintf(want, sizeof want, "truncated: the file is %llu bytes, the header says %llu",
             (unsigned long long)size - 3, (unsigned long long)size);
    CHECK(open_path(p, msg, sizeof msg) == RF_EUSER && strstr(msg, want));
    CHECK(truncate(p, 50) == 0);
    CHECK(open_path(p, msg, sizeof msg) == RF_EUSER && strstr(msg, "truncated: the file is 50 bytes"));
    CHECK(truncate(p, 0) == 0);
    CHECK(open_path(p, msg, sizeof msg) == RF_EUSER && strstr(msg, "empty file"));
    FILE *fp = fopen(p, "w");
    fputs("person(x) -> string(x).\n", fp);
    fclose(fp);
    CHECK(open_path(p, msg, sizeof msg) == RF_EUSER && strstr(msg, "not a redfox program"));
    unlink(p);
    /* devices: read as streams, refused after the first bytes */
    if (access("/dev/null", R_OK) == 0)
        CHECK(open_path("/dev/null", msg, sizeof msg) == RF_EUSER && strstr(msg, "empty file"));
    if (access("/dev/zero", R_OK) == 0)
        CHECK(open_path("/dev/zero", msg, sizeof msg) == RF_EUSER &&
              strstr(msg, "not a redfox program"));
    free(p);
    free(nodir);
    free(dirp);
}

/* ---- fuzzer seeds (not a ctest entry) ----------------------------------- */

static void write_seed(rf_rfx_writer *w, const char *name)
{
    char *p = spath(name);
    rf_diags d;
    rf_diags_init(&d);
    CHECK(rf_rfx_writer_write_file(w, p, &d) == RF_OK);
    rf_diags_free(&d);
    rf_rfx_writer_free(w);
    free(p);
}

/* Writes valid files for tests/fuzz/fuzz_rfx to start from: its sections are
** stream-encoded, so that the fuzzer's stream walk starts from real records. */
static void test_seeds(void)
{
    mkdir(scratch, 0777);
    write_seed(rf_rfx_writer_new(), "seed-empty.rfx");

    uint64_t size;
    unsigned char *img = sample(&size);
    rf_rfx_writer *w = rf_rfx_writer_new();
    rf_diags d;
    rf_diags_init(&d);
    rf_rfx_file *f = NULL;
    CHECK(rf_rfx_open_bytes("sample", img, size, &f, &d) == RF_OK);
    for (uint64_t i = 0; f && i < rf_rfx_section_count(f); i++) {
        char tag[4];
        const void *p;
        uint64_t n;
        rf_rfx_section_at(f, i, tag, &p, &n);
        rf_rfx_writer_add(w, tag, p, n);
    }
    rf_rfx_close(f);
    rf_diags_free(&d);
    free(img);
    write_seed(w, "seed-sample.rfx");

    rf_buf b;
    rf_buf_init(&b);
    /* records as the walker reads them: an op byte, then its operand */
    for (int op = 0; op < 12; op++) {
        rf_rfx_put_u8(&b, (uint8_t)op);
        switch (op) {
        case 0: rf_rfx_put_u8(&b, 7); break;
        case 1: rf_rfx_put_u16(&b, 700); break;
        case 2: rf_rfx_put_u32(&b, 70000); break;
        case 3: rf_rfx_put_u64(&b, 7000000000ull); break;
        case 4: rf_rfx_put_i32(&b, -7); break;
        case 5: rf_rfx_put_i64(&b, -7000000000ll); break;
        case 6: rf_rfx_put_f64(&b, 3.25); break;
        case 7: rf_rfx_put_cstr(&b, "lineitem"); break;
        case 8: rf_rfx_put_cstr(&b, "l_orderkey"); break;
        case 9: rf_rfx_put_u64(&b, 3); rf_rfx_put_bytes(&b, "abc", 3); break;
        case 10: rf_rfx_put_u8(&b, 4); rf_rfx_put_bytes(&b, "wxyz", 4); break;
        default: rf_rfx_put_u8(&b, 2); rf_rfx_put_bytes(&b, "pq", 2); break;
        }
    }
    w = rf_rfx_writer_new();
    rf_rfx_writer_add(w, "SCHM", b.data, (uint64_t)b.len);
    rf_rfx_writer_add(w, "HIRS", b.data, (uint64_t)b.len / 2);
    rf_rfx_writer_add(w, "STRS", b.data + 5, (uint64_t)b.len - 5);
    rf_rfx_writer_add(w, "PTX0", ".version 8.0\n.target sm_90\n.address_size 64\n", 44);
    write_seed(w, "seed-stream.rfx");
    rf_buf_free(&b);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } groups[] = {{"roundtrip", test_roundtrip}, {"truncation", test_truncation},
                  {"bitflip", test_bitflip},     {"header", test_header},
                  {"layout", test_layout},       {"stream", test_stream},
                  {"file", test_file},           {"seeds", test_seeds}};
    const char *which = argc > 1 ? argv[1] : "all";
    if (argc > 2) scratch = argv[2];
    int ran = 0;
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if ((strcmp(which, "all") == 0 && groups[i].fn != test_seeds) ||
            strcmp(which, groups[i].name) == 0) {
            groups[i].fn();
            ran++;
        }
    if (!ran) {
        fprintf(stderr, "test_rfx: unknown group %s\n", which);
        return 2;
    }
    if (failures) {
        fprintf(stderr, "test_rfx %s: %d failures\n", which, failures);
        return 1;
    }
    printf("test_rfx %s: ok\n", which);
    return 0;
}
