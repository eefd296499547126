/*
** runtime/gpu/test_gpu_wire.c: unit test of narrow copies' encoder and
** decoder (rt_gpu_wire.c, skeletons/cuda/rf_wire.h): columns of each kind
** encoded round by round, by one thread and by a pool of four, decoded into
** a fresh column that must equal the source bit for bit; edge values (the
** int64 extremes, negatives, a value whose two's complement is a multiple
** of ten but which is not), blocks that do not narrow, every divisor from
** 10^0 to 10^6, partial last blocks and rounds; and the forms chosen where
** they are known (TPC-H-like decimals: one byte, divisor 10^4), so that a
** narrowing that stopped narrowing fails too. Then a column through the
** emulated device's h2d_narrow (rf_gx_h2d_col's device half). Exit 0 on
** success, 1 with a message.
*/
#include "rt_gpu_internal.h"

#include "rf_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(c, ...)                                                                                                \
    do {                                                                                                           \
        if (!(c)) {                                                                                                \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                   \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fputc('\n', stderr);                                                                                   \
            failures++;                                                                                            \
        }                                                                                                          \
    } while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Column col (n values of kind) through rounds of cap bytes and blocks of
** block values, encoded on cpu and decoded: equal to col. *wire: the bytes
** the rounds took. Returns the first block's header in *first. */
static void round_trip(const char *what, rf_cpu_pool *cpu, int kind, const void *col, int64_t n, int64_t block,
                       uint64_t cap, uint64_t *wire, rf_wire_blk *first)
{
    int w = rf_wire_elem(kind);
    int64_t per = rf_gpu_wire_round_values(kind, block, cap);
    EXPECT(per >= block && per % block == 0, "%s: %lld values a round", what, (long long)per);
    EXPECT(rf_gpu_wire_round_bytes(kind, block, per) <= cap || per == block, "%s: a round's worst case passes the cap",
           what);
    unsigned char *round = malloc(rf_gpu_wire_round_bytes(kind, block, per < n ? per : n) + 1);
    char *out = malloc((size_t)(n * w) + 1);
    memset(out, 0xa5, (size_t)(n * w) + 1);
    *wire = 0;
    for (int64_t r0 = 0; r0 < n; r0 += per) {
        int64_t m = n - r0 < per ? n - r0 : per;
        int32_t nb = 0;
        uint64_t len = rf_gpu_wire_encode(cpu, kind, col, r0, m, block, round, &nb);
        EXPECT(len <= rf_gpu_wire_round_bytes(kind, block, m), "%s: round at %lld took %llu bytes, more than its worst case",
               what, (long long)r0, (unsigned long long)len);
        EXPECT(nb == (m + block - 1) / block, "%s: %d blocks", what, (int)nb);
        if (r0 == 0) memcpy(first, round, sizeof *first);
        rf_gpu_wire_decode(round, nb, kind, out);
        *wire += len;
    }
    EXPECT(!memcmp(out, col, (size_t)(n * w)), "%s: decoded values differ from the source", what);
    EXPECT((unsigned char)out[n * w] == 0xa5, "%s: a value written past the column", what);
    for (int64_t i = 0; i < n && memcmp(out, col, (size_t)(n * w)); i++)
        if (memcmp(out + i * w, (const char *)col + i * w, (size_t)w)) {
            fprintf(stderr, "  first difference at value %lld\n", (long long)i);
            break;
        }
    free(round);
    free(out);
}

static void case_i64(rf_cpu_pool *cpu, const char *what, const int64_t *v, int64_t n, int width, int exp)
{
    uint64_t wire = 0;
    rf_wire_blk h;
    memset(&h, 0, sizeof h);
    round_trip(what, cpu, RF_WIRE_I64, v, n, 512, 64 << 10, &wire, &h);
    if (width) EXPECT(h.width == width, "%s: width %d, not %d", what, h.width, width);
    if (width) EXPECT(h.exp == exp, "%s: divisor 10^%d, not 10^%d", what, h.exp, exp);
}

static void tests(rf_cpu_pool *cpu)
{
    enum { N = 5000 }; /* 9 blocks of 512, the last partial; several rounds of 64 KiB */
    int64_t *v = malloc(N * 8);
    /* TPC-H-like decimals: l_discount 0.00 .. 0.10 (times 10^6) */
    for (int64_t i = 0; i < N; i++) v[i] = (int64_t)(next() % 11) * 10000;
    case_i64(cpu, "discounts", v, N, 1, 4);
    /* quantities 1 .. 50: one byte, divisor 10^6 */
    for (int64_t i = 0; i < N; i++) v[i] = (int64_t)(1 + next() % 50) * 1000000;
    case_i64(cpu, "quantities", v, N, 1, 6);
    /* prices in cents up to 104,949.50: 4 bytes, divisor 10^4 */
    for (int64_t i = 0; i < N; i++) v[i] = (int64_t)(90000 + next() % 10404950) * 10000;
    case_i64(cpu, "prices", v, N, 4, 4);
    /* every divisor: values multiples of 10^e and not all of 10^(e+1) */
    for (int e = 0; e <= RF_WIRE_EXP_MAX; e++) {
        int64_t p = 1;
        for (int i = 0; i < e; i++) p *= 10;
        for (int64_t i = 0; i < N; i++) v[i] = -(int64_t)(next() % 200) * p + 7 * p;
        v[1] = p; /* (7p - p is a multiple of 10p only where 6 is of 10: never) */
        char what[32];
        snprintf(what, sizeof what, "divisor 10^%d", e);
        case_i64(cpu, what, v, N, 1, e);
    }
    /* the int64 extremes: a block spanning them goes as it is */
    for (int64_t i = 0; i < N; i++) v[i] = (int64_t)next();
    v[0] = INT64_MIN;
    v[1] = INT64_MAX;
    case_i64(cpu, "random 64-bit", v, N, 8, 0);
    /* the extremes alone, and one value (no range) */
    for (int64_t i = 0; i < N; i++) v[i] = i % 2 ? INT64_MAX : INT64_MAX - 255;
    case_i64(cpu, "near INT64_MAX", v, N, 1, 0);
    for (int64_t i = 0; i < N; i++) v[i] = INT64_MIN + (int64_t)(i % 3);
    case_i64(cpu, "near INT64_MIN", v, N, 1, 0);
    for (int64_t i = 0; i < N; i++) v[i] = -42000000;
    case_i64(cpu, "one value", v, N, 1, 6);
    /* -6 is 2^64 - 6 in two's complement, a multiple of ten: not a divisor */
    for (int64_t i = 0; i < N; i++) v[i] = i % 2 ? -6 : 0;
    case_i64(cpu, "-6 and 0", v, N, 1, 0);
    /* a multiple of 10^6 near INT64_MIN */
    for (int64_t i = 0; i < N; i++) v[i] = -9223372036000000000 + (int64_t)(next() % 100) * 1000000;
    case_i64(cpu, "10^6 near INT64_MIN", v, N, 1, 6);
    /* one block narrow, the next not: each its own form */
    for (int64_t i = 0; i < N; i++) v[i] = i < 512 ? (int64_t)(i % 7) : (int64_t)next();
    case_i64(cpu, "mixed blocks", v, N, 1, 0);
    /* short columns: one value, one block, a block and one */
    for (int64_t n = 1; n <= 513; n += 256) {
        for (int64_t i = 0; i < n; i++) v[i] = -(int64_t)i * 1000;
        case_i64(cpu, "short", v, n, n == 1 ? 0 : 2, 3); /* (one 0: any divisor) */
    }
    free(v);

    /* dates (signed 32-bit days) and string codes (unsigned 32-bit) */
    int32_t *d = malloc(N * 4);
    uint32_t *s = malloc(N * 4);
    for (int64_t i = 0; i < N; i++) {
        d[i] = -1000 + (int32_t)(next() % 2600);
        s[i] = (uint32_t)(next() % 3) + 4000000000u;
    }
    uint64_t wire = 0;
    rf_wire_blk h;
    round_trip("dates", cpu, RF_WIRE_I32, d, N, 512, 64 << 10, &wire, &h);
    EXPECT(h.width == 2 && wire < (uint64_t)N * 4 * 6 / 10, "dates: width %d, %llu bytes on the wire", h.width,
           (unsigned long long)wire);
    round_trip("codes", cpu, RF_WIRE_U32, s, N, 512, 64 << 10, &wire, &h);
    EXPECT(h.width == 1 && wire < (uint64_t)N * 4 * 3 / 10, "codes: width %d, %llu bytes on the wire", h.width,
           (unsigned long long)wire);
    for (int64_t i = 0; i < N; i++) {
        d[i] = i % 2 ? INT32_MIN : INT32_MAX;
        s[i] = i % 2 ? 0 : UINT32_MAX;
    }
    round_trip("date extremes", cpu, RF_WIRE_I32, d, N, 512, 64 << 10, &wire, &h);
    EXPECT(h.width == 4 && h.base == 0, "date extremes: as they are, width %d", h.width);
    round_trip("code extremes", cpu, RF_WIRE_U32, s, N, 512, 64 << 10, &wire, &h);
    EXPECT(h.width == 4 && h.base == 0, "code extremes: as they are, width %d", h.width);
    /* the real device's shape: blocks of 64 Ki values, a 16 MiB round */
    int32_t *big = malloc((size_t)300000 * 4);
    for (int64_t i = 0; i < 300000; i++) big[i] = 9000 + (int32_t)(i % 2557);
    round_trip("device shape", cpu, RF_WIRE_I32, big, 300000, RF_WIRE_BLOCK, (uint64_t)16 << 20, &wire, &h);
    EXPECT(wire < (uint64_t)300000 * 4 / 2 + 4096, "device shape: %llu bytes on the wire", (unsigned long long)wire);
    free(big);
    free(d);
    free(s);
}

/* A column through the emulated device's h2d_narrow: equal, fewer bytes. */
static void device_copy(rf_cpu_pool *cpu)
{
    rf_diags dg;
    rf_diags_init(&dg);
    gdev g;
    if (rf_gpu_emu_open(&g, &dg)) {
        EXPECT(0, "the emulated device does not open");
        return;
    }
    g.cpu = cpu;
    enum { N = 20000 };
    int64_t *v = malloc(N * 8), *out = malloc(N * 8);
    for (int64_t i = 0; i < N; i++) v[i] = (int64_t)(next() % 50) * 1000000 - 25000000;
    gptr dst = 0, scratch = 0;
    int64_t per = rf_gpu_wire_round_values(RF_WIRE_I64, g.wire_block, g.wire_round);
    EXPECT(g.wire_block > 0 && per < N, "the emulator's rounds: %lld values", (long long)per);
    rf_status st = g.ops->mem_alloc(&g, N * 8, &dst);
    if (!st) st = g.ops->mem_alloc(&g, rf_gpu_wire_round_bytes(RF_WIRE_I64, g.wire_block, per), &scratch);
    if (!st) st = g.ops->h2d_narrow(&g, dst, v, N, RF_WIRE_I64, scratch);
    if (!st) st = g.ops->d2h(&g, out, dst, N * 8);
    EXPECT(!st, "the device's narrow copy failed");
    EXPECT(!st && !memcmp(out, v, N * 8), "the device's column differs from the host's");
    EXPECT(g.wire_bytes > 0 && g.wire_bytes < (uint64_t)N * 8 / 6, "%llu bytes on the wire for %d values",
           (unsigned long long)g.wire_bytes, (int)N);
    g.ops->mem_free(&g, dst);
    g.ops->mem_free(&g, scratch);
    g.ops->close(&g);
    free(v);
    free(out);
    rf_diags_free(&dg);
}

int main(void)
{
    tests(NULL);
    rf_cpu_pool *pool = NULL;
    if (rf_cpu_pool_new(4, &pool)) {
        fprintf(stderr, "no thread pool\n");
        return 1;
    }
    tests(pool);
    device_copy(pool);
    rf_cpu_pool_free(pool);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("narrow copies: every round trip exact\n");
    return failures ? 1 : 0;
}
