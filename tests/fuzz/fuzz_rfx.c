/*
** tests/fuzz/fuzz_rfx.c: libFuzzer target for the .rfx loader and the
** section stream reader (harmony/rfx/). Any crash, hang, leak, sanitizer
** report or abort() below is a bug.
**
** Random bytes almost never carry valid CRC-32s, so each input is tried
** twice: as it is (the checks in front of the checksums), and "resealed",
** with every checksum recomputed where the layout allows (the checks behind
** them: table entries, overlaps, padding). Every accepted file is walked
** with the stream reader, and rewritten and reloaded to check the round trip.
** Seeds: `test_rfx seeds DIR` writes valid files to start from.
*/
#include "rf_rfx.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t ld(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static void st32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Recomputes the section, table and header checksums (docs/RFX.md offsets). */
static void reseal(unsigned char *p, uint64_t size)
{
    if (size < RF_RFX_HEADER_SIZE) return;
    uint64_t toff = ld(p + 24, 8), count = ld(p + 32, 4);
    if (toff <= size && count <= (size - toff) / RF_RFX_ENTRY_SIZE) {
        for (uint64_t i = 0; i < count; i++) {
            unsigned char *e = p + toff + i * RF_RFX_ENTRY_SIZE;
            uint64_t off = ld(e + 8, 8), n = ld(e + 16, 8);
            /* the table may overlap a section in a crafted file; then the
            ** loader must reject it anyway, so any value will do */
            if (off <= size && n <= size - off) st32(e + 4, rf_rfx_crc32(p + off, n));
        }
        st32(p + 36, rf_rfx_crc32(p + toff, count * RF_RFX_ENTRY_SIZE));
    }
    st32(p + 92, rf_rfx_crc32(p, 92));
}

/* Views handed out are read byte by byte, so that ASan checks their bounds. */
static volatile unsigned touched;

/* Decodes a section as a little program of stream reads, choosing each read
** from the data itself; every read either succeeds within bounds or fails. */
static void walk(const void *data, uint64_t size)
{
    rf_rfx_rd rd;
    rf_rfx_rd_init(&rd, data, size);
    rf_arena a;
    rf_arena_init(&a);
    uint8_t op;
    while (rf_rfx_get_u8(&rd, &op)) {
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64, n;
        int32_t i32;
        int64_t i64;
        double f;
        const char *s;
        char *c;
        const void *v;
        unsigned char buf[256];
        switch (op % 12) {
        case 0: rf_rfx_get_u8(&rd, &u8); break;
        case 1: rf_rfx_get_u16(&rd, &u16); break;
        case 2: rf_rfx_get_u32(&rd, &u32); break;
        case 3: rf_rfx_get_u64(&rd, &u64); break;
        case 4: rf_rfx_get_i32(&rd, &i32); break;
        case 5: rf_rfx_get_i64(&rd, &i64); break;
        case 6: rf_rfx_get_f64(&rd, &f); break;
        case 7:
            if (rf_rfx_get_str(&rd, &s, &n)) {
                for (uint64_t i = 0; i < n; i++) touched += (unsigned char)s[i];
            }
            break;
        case 8:
            if (rf_rfx_get_cstr(&rd, &a, &c) && strlen(c) > size) abort();
            break;
        case 9:
            if (rf_rfx_get_count(&rd, 1u << 20, op / 12, &n)) {
                /* the count promises at least op/12 bytes an element */
                if (op / 12 && n > rf_rfx_rd_remaining(&rd) / (op / 12)) abort();
                for (uint64_t i = 0; i < n && rf_rfx_get_u8(&rd, &u8); i++)
                    ;
            }
            break;
        case 10:
            if (rf_rfx_get_u8(&rd, &u8)) rf_rfx_get_bytes(&rd, buf, u8);
            break;
        default:
            if (rf_rfx_get_u8(&rd, &u8) && rf_rfx_get_view(&rd, u8, &v)) {
                for (unsigned i = 0; i < u8; i++) touched += ((const unsigned char *)v)[i];
            }
            break;
        }
        if (rd.pos > rd.size) abort();
    }
    if (rf_rfx_rd_ok(&rd) || rd.err_pos > rd.size) abort(); /* the loop ends only on failure */
    rf_arena_free(&a);
}

/* Opens the bytes; on success walks every section and checks the round trip. */
static void try_bytes(const unsigned char *data, uint64_t size)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_rfx_file *f = NULL;
    rf_status st = rf_rfx_open_bytes("fuzz.rfx", data, size, &f, &d);
    if (st != RF_OK) {
        if (f || d.nerrors != 1) abort();
        rf_diags_free(&d);
        return;
    }
    rf_rfx_writer *w = rf_rfx_writer_new();
    if (!w) abort();
    uint64_t n = rf_rfx_section_count(f);
    for (uint64_t i = 0; i < n; i++) {
        char tag[4];
        const void *p;
        uint64_t len;
        rf_rfx_section_at(f, i, tag, &p, &len);
        if (len > size || ((uintptr_t)p % RF_RFX_ALIGN) != 0) abort();
        walk(p, len);
        if (rf_rfx_writer_add(w, tag, p, len) != RF_OK) abort();
    }
    rf_buf b;
    rf_buf_init(&b);
    if (rf_rfx_writer_write_to_buf(w, &b) != RF_OK) abort();
    rf_rfx_file *g = NULL;
    if (rf_rfx_open_bytes("rewritten.rfx", b.data, (uint64_t)b.len, &g, &d) != RF_OK) abort();
    if (rf_rfx_section_count(g) != n) abort();
    for (uint64_t i = 0; i < n; i++) {
        char t1[4], t2[4];
        const void *p1, *p2;
        uint64_t l1, l2;
        rf_rfx_section_at(f, i, t1, &p1, &l1);
        rf_rfx_section_at(g, i, t2, &p2, &l2);
        if (memcmp(t1, t2, 4) || l1 != l2 || (l1 && memcmp(p1, p2, l1))) abort();
    }
    rf_rfx_close(g);
    rf_buf_free(&b);
    rf_rfx_writer_free(w);
    rf_rfx_close(f);
    rf_diags_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_bytes(data, size);
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    reseal(copy, size);
    try_bytes(copy, size);
    free(copy);
    return 0;
}
