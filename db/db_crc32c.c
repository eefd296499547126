/*
** db/db_crc32c.c: CRC-32C (Castagnoli), the database's checksum.
**
** Owns: rf_db_crc32c. On x86-64 processors with SSE4.2 the crc32
** instruction does 8 bytes a step (several GB/s, so verifying the columns a
** query reads costs little next to reading them); elsewhere a table-driven
** version does 8 bytes a step with eight 256-entry tables ("slicing by 8").
** Both give the same values; test_db checks them against each other and
** against the standard check value. rf_db_crc32c_combine joins the CRCs of
** two pieces (polynomial arithmetic mod the generator), so that pieces of
** one file can be checked by several threads at once.
*/
#include "rf_db.h"

#include <pthread.h>
#include <string.h>

#define POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int s = 1; s < 8; s++) table[s][i] = (table[s - 1][i] >> 8) ^ table[0][table[s - 1][i] & 0xff];
}

static uint32_t crc_soft(uint32_t c, const unsigned char *p, int64_t n)
{
    pthread_once(&table_once, table_init);
    while (n >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        lo = __builtin_bswap32(lo);
        hi = __builtin_bswap32(hi);
#endif
        lo ^= c;
        c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
            table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^ table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
    return c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_HW 1
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const unsigned char *p, int64_t n)
{
    uint64_t c64 = c;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c64 = __builtin_ia32_crc32di(c64, w);
        p += 8;
        n -= 8;
    }
    c = (uint32_t)c64;
    while (n-- > 0) c = __builtin_ia32_crc32qi(c, *p++);
    return c;
}

static uint32_t crc_combine_raw(uint32_t c1, uint32_t c2, int64_t len2);

/* Three lanes at once: the instruction takes 3 cycles but starts one a
** cycle, so three independent CRCs (thirds of the buffer) run at about the
** cost of one; their finished values are then combined. */
__attribute__((target("sse4.2"))) static uint32_t crc_hw3(uint32_t c, const unsigned char *p, int64_t n)
{
    int64_t lane = n / 3 / 8 * 8;
    const unsigned char *p1 = p + lane, *p2 = p + 2 * lane;
    uint64_t a = c, b = 0xffffffffu, d = 0xffffffffu;
    for (int64_t i = 0; i < lane; i += 8) {
        uint64_t wa, wb, wd;
        memcpy(&wa, p + i, 8);
        memcpy(&wb, p1 + i, 8);
        memcpy(&wd, p2 + i, 8);
        a = __builtin_ia32_crc32di(a, wa);
        b = __builtin_ia32_crc32di(b, wb);
        d = __builtin_ia32_crc32di(d, wd);
    }
    /* each lane's register inverted is the finished CRC of what it read
    ** (lane a: of everything before it too); b and d started as a new CRC
    ** starts */
    uint32_t f = crc_combine_raw(~(uint32_t)a, ~(uint32_t)b, lane);
    f = crc_combine_raw(f, ~(uint32_t)d, lane);
    return crc_hw(~f, p + 3 * lane, n - 3 * lane);
}
#endif

/* Exposed for the unit test: the table version whatever the processor. */
uint32_t rf_db_crc32c_soft(uint32_t crc, const void *p, int64_t n);
uint32_t rf_db_crc32c_soft(uint32_t crc, const void *p, int64_t n)
{
    return ~crc_soft(~crc, p, n);
}

uint32_t rf_db_crc32c(uint32_t crc, const void *p, int64_t n)
{
#ifdef HAVE_HW
    static int hw = -1;
    int h = __atomic_load_n(&hw, __ATOMIC_RELAXED);
    if (h < 0) {
        h = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        __atomic_store_n(&hw, h, __ATOMIC_RELAXED);
    }
    if (h) return ~(n >= 3 * 4096 ? crc_hw3(~crc, p, n) : crc_hw(~crc, p, n));
#endif
    return ~crc_soft(~crc, p, n);
}

/* a * b mod the generator, both in the reflected order (bit 31 is x^0). */
static uint32_t gf_mul(uint32_t a, uint32_t b)
{
    uint32_t m = UINT32_C(1) << 31, p = 0;
    while (m && a) {
        if (a & m) {
            p ^= b;
            a ^= m;
        }
        m >>= 1;
        b = b & 1 ? (b >> 1) ^ POLY : b >> 1; /* b * x */
    }
    return p;
}

uint32_t rf_db_crc32c_combine(uint32_t crc1, uint32_t crc2, int64_t len2) { return crc_combine_raw(crc1, crc2, len2); }

static uint32_t crc_combine_raw(uint32_t crc1, uint32_t crc2, int64_t len2)
{
    /* crc(A B) = crc(A) x^(8 len(B)) + crc(B) mod P: the initial and final
    ** inversions cancel out between the two pieces */
    uint32_t xn = UINT32_C(1) << 31, base = UINT32_C(1) << 23; /* x^0, x^8 */
    for (uint64_t n = (uint64_t)(len2 > 0 ? len2 : 0); n; n >>= 1) {
        if (n & 1) xn = gf_mul(xn, base);
        base = gf_mul(base, base);
    }
    return gf_mul(xn, crc1) ^ crc2;
}
