/*
** runtime/gpu/rt_gpu_wire.c: columns narrow on the wire: the host's half of
** copying an input column to the device in fewer bytes.
**
** Owns: which columns narrow (int, decimal, date, string codes; the
** narrow_copy setting, `redfox run --no-narrow-copy`), the encoder that
** fills a staging buffer with a round of blocks (skeletons/cuda/rf_wire.h:
** frame of reference, a power-of-ten divisor, 1, 2, 4 or 8 bytes a value),
** the host's decoder (the emulator's widening, the tests'), and the
** executor's copy of a column through the device's h2d_narrow with its
** scratch from the pool.
**
** Why: a fresh GPU process's copies already run near PCIe's speed (q06 at
** SF 10: 1.68 GB at 37.7 GB/s, 44.5 ms), so only fewer bytes make them
** shorter, and TPC-H's values need few: a decimal is an integer times 10^6
** (l_discount 0.00-0.10: one byte once divided by 10^4 and less its
** minimum), a date within a few thousand days of its block's first, a
** string code one of a handful. The encoder runs on the threads that fill
** the staging buffers (each takes whole blocks: one pass for the minimum,
** maximum and divisor, one to pack, the block still in its cache), and a
** small kernel widens each round on the device.
**
** Exact by construction: the divisor is one that every value of the block
** is a multiple of (checked value by value), the width one that holds the
** block's largest value less its minimum; a block that would not be smaller
** goes as it is.
*/
#include "rt_gpu_internal.h"

#include "rf_wire.h"

#include <stdatomic.h>
#include <string.h>

int rf_gpu_wire_kind(rf_type t)
{
    switch (t) {
    case RF_TYPE_INT:
    case RF_TYPE_DECIMAL: return RF_WIRE_I64;
    case RF_TYPE_DATE: return RF_WIRE_I32;
    case RF_TYPE_STRING: return RF_WIRE_U32;
    default: return 0; /* floats (their bits are no integers to narrow) and booleans (one byte already) */
    }
}

static uint64_t align16(uint64_t n) { return (n + RF_WIRE_ALIGN - 1) / RF_WIRE_ALIGN * RF_WIRE_ALIGN; }

/* A block's worst case: its header and its values as they are. */
static uint64_t block_room(int kind, int64_t values)
{
    return sizeof(rf_wire_blk) + align16((uint64_t)values * (uint64_t)rf_wire_elem(kind));
}

int64_t rf_gpu_wire_round_values(int kind, int64_t block, uint64_t cap)
{
    int64_t nb = (int64_t)(cap / block_room(kind, block));
    return (nb > 0 ? nb : 1) * block;
}

uint64_t rf_gpu_wire_round_bytes(int kind, int64_t block, int64_t n)
{
    int64_t whole = n / block, rest = n % block;
    return (uint64_t)whole * block_room(kind, block) + (rest ? block_room(kind, rest) : 0);
}

/* ---- one block ------------------------------------------------------------------ */

/* Tests of divisibility by 10^e = 2^e 5^e without a division: the low e bits
** clear, and Granlund and Montgomery's test for the odd part (n times the
** inverse of 5^e modulo 2^64, shifted by lim, is at most 2 lim exactly when
** the signed n is a multiple of 5^e). */
typedef struct div10 {
    uint64_t mask2, inv5, lim, lim2;
} div10;

/* d's inverse modulo 2^64 (d odd): Newton's iteration, each step doubling the bits right. */
static uint64_t inverse(uint64_t d)
{
    uint64_t x = d; /* right in 3 bits: d * d = 1 modulo 8 */
    for (int i = 0; i < 5; i++) x *= 2 - d * x;
    return x;
}

static div10 div_of(int e)
{
    uint64_t p5 = 1;
    for (int i = 0; i < e; i++) p5 *= 5;
    uint64_t lim = (uint64_t)INT64_MAX / p5;
    return (div10){(UINT64_C(1) << e) - 1, inverse(p5), lim, 2 * lim};
}

static inline int multiple(uint64_t u, const div10 *d) { return !(u & d->mask2) && u * d->inv5 + d->lim <= d->lim2; }

#define LD_I64(s, i) (((const int64_t *)(s))[i])

/* The block's minimum, maximum and the largest e <= *e with every value a
** multiple of 10^e (a value that fails e is tried again at e - 1: the
** values before it passed e and so every smaller one). */
static void scan_i64(const void *s, uint32_t n, int64_t *mn, int64_t *mx, int *e)
{
    int64_t lo = LD_I64(s, 0), hi = lo;
    int ex = *e;
    uint32_t i = 0;
    while (ex > 0 && i < n) {
        div10 d = div_of(ex);
        for (; i < n; i++) {
            int64_t v = LD_I64(s, i);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            if (!multiple((uint64_t)v, &d)) break;
        }
        if (i < n) ex--;
    }
    for (; i < n; i++) {
        int64_t v = LD_I64(s, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    *mn = lo;
    *mx = hi;
    *e = ex;
}

/* 4-byte values in their own width (the loop then vectorizes), widened once. */
#define SCAN32(name, T)                                                                                              \
    static void name(const void *s, uint32_t n, int64_t *mn, int64_t *mx)                                            \
    {                                                                                                                \
        const T *v = s;                                                                                              \
        T lo = v[0], hi = v[0];                                                                                      \
        for (uint32_t i = 1; i < n; i++) {                                                                           \
            lo = v[i] < lo ? v[i] : lo;                                                                              \
            hi = v[i] > hi ? v[i] : hi;                                                                              \
        }                                                                                                            \
        *mn = (int64_t)lo;                                                                                           \
        *mx = (int64_t)hi;                                                                                           \
    }
SCAN32(scan_i32, int32_t)
SCAN32(scan_u32, uint32_t)

/* Block h's form for its n values at s: base, divisor, width. */
static void plan_block(int kind, const void *s, uint32_t n, rf_wire_blk *h)
{
    int64_t mn, mx;
    int e = 0;
    if (kind == RF_WIRE_I64) {
        e = RF_WIRE_EXP_MAX;
        scan_i64(s, n, &mn, &mx, &e);
    } else if (kind == RF_WIRE_I32) {
        scan_i32(s, n, &mn, &mx);
    } else {
        scan_u32(s, n, &mn, &mx);
    }
    /* the largest value less the minimum, divided (exactly) by 10^e */
    uint64_t q = (((uint64_t)mx - (uint64_t)mn) >> e) * div_of(e).inv5;
    int w = q <= 0xff ? 1 : q <= 0xffff ? 2 : q <= 0xffffffffu ? 4 : 8;
    h->n = n;
    h->pad[0] = h->pad[1] = 0;
    if (w >= rf_wire_elem(kind)) {
        /* no fewer bytes: as it is */
        h->base = 0;
        h->exp = 0;
        h->width = (uint8_t)rf_wire_elem(kind);
    } else {
        h->base = mn;
        h->exp = (uint8_t)e;
        h->width = (uint8_t)w;
    }
}

/* Packing: less the base, divided by 10^e (exactly: by 2^e with a shift,
** by 5^e with its inverse); without a divisor, less the base alone, in the
** values' own width where they are 4 bytes (the loops then vectorize). */
#define PACK_DIV(T, S)                                                                                               \
    for (uint32_t i = 0; i < n; i++) ((T *)out)[i] = (T)((((uint64_t)((const int64_t *)s)[i] - base) >> e) * inv)
#define PACK_SUB(T, S)                                                                                               \
    for (uint32_t i = 0; i < n; i++) ((T *)out)[i] = (T)((S)((const S *)s)[i] - (S)base)

#define PACK_WIDTHS(P, S)                                                                                            \
    do {                                                                                                             \
        if (h->width == 1) P(uint8_t, S);                                                                            \
        else if (h->width == 2) P(uint16_t, S);                                                                      \
        else P(uint32_t, S);                                                                                         \
    } while (0)

/* Block h's n values at s packed into out. */
static void pack_block(int kind, const void *s, const rf_wire_blk *h, unsigned char *out)
{
    uint32_t n = h->n;
    if (h->width == rf_wire_elem(kind)) {
        memcpy(out, s, (size_t)n * (size_t)h->width);
        return;
    }
    uint64_t base = (uint64_t)h->base, inv = div_of(h->exp).inv5;
    int e = h->exp;
    if (kind == RF_WIRE_I64 && e) PACK_WIDTHS(PACK_DIV, int64_t);
    else if (kind == RF_WIRE_I64) PACK_WIDTHS(PACK_SUB, uint64_t);
    else PACK_WIDTHS(PACK_SUB, uint32_t); /* (a date's difference from its minimum, modulo 2^32, is the same) */
}

/* ---- a round -------------------------------------------------------------------- */

typedef struct wire_job {
    int kind;
    const char *col; /* the column's row 0 */
    int64_t row0, n, block;
    unsigned char *out;
    _Atomic uint64_t at; /* the next free byte of the round (blocks take room as they finish) */
} wire_job;

static void encode_blocks(void *ctx, int64_t b0, int64_t b1, int worker)
{
    wire_job *j = ctx;
    (void)worker;
    int w = rf_wire_elem(j->kind);
    for (int64_t b = b0; b < b1; b++) {
        int64_t r = j->row0 + b * j->block, left = j->n - b * j->block;
        const char *s = j->col + r * w;
        rf_wire_blk h;
        plan_block(j->kind, s, (uint32_t)(left < j->block ? left : j->block), &h);
        h.row = r;
        h.at = atomic_fetch_add(&j->at, align16((uint64_t)h.n * h.width));
        pack_block(j->kind, s, &h, j->out + h.at);
        memcpy(j->out + (uint64_t)b * sizeof h, &h, sizeof h);
    }
}

uint64_t rf_gpu_wire_encode(rf_cpu_pool *cpu, int kind, const void *col, int64_t row0, int64_t n, int64_t block,
                            void *out, int32_t *nblk)
{
    wire_job j;
    j.kind = kind;
    j.col = col;
    j.row0 = row0;
    j.n = n;
    j.block = block;
    j.out = out;
    int64_t nb = (n + block - 1) / block;
    atomic_init(&j.at, (uint64_t)nb * sizeof(rf_wire_blk));
    rf_cpu_parallel_for(cpu, nb, 1, encode_blocks, &j);
    *nblk = (int32_t)nb;
    return atomic_load(&j.at);
}

void rf_gpu_wire_decode(const void *round, int32_t nblk, int kind, void *dst)
{
    const unsigned char *r = round;
    for (int32_t b = 0; b < nblk; b++) {
        rf_wire_blk h;
        memcpy(&h, r + (uint64_t)b * sizeof h, sizeof h);
        uint64_t mul = rf_wire_pow10(h.exp);
        for (uint32_t i = 0; i < h.n; i++) rf_wire_put(dst, kind, h.row + i, rf_wire_get(&h, r + h.at, mul, i));
    }
}

/* ---- the executor's copy --------------------------------------------------------- */

rf_status rf_gx_h2d_col(gx *x, gptr dst, const void *src, int64_t n, rf_type t)
{
    uint64_t bytes = (uint64_t)n * (uint64_t)wid(t);
    int kind = rf_gpu_wire_kind(t);
    if (!x->tune.narrow_copy || !kind || n <= 0 || !x->g.ops->h2d_narrow || !x->g.wire_block)
        return x->g.ops->h2d(&x->g, dst, src, bytes);
    /* room on the device for one round (a short column's own worst case):
    ** where the pool has none to spare (under a cap), the column goes as it is */
    int64_t per = rf_gpu_wire_round_values(kind, x->g.wire_block, x->g.wire_round);
    gbuf s = {0, 0};
    if (rf_gpool_alloc_quiet(x->pool, rf_gpu_wire_round_bytes(kind, x->g.wire_block, n < per ? n : per), &s))
        return x->g.ops->h2d(&x->g, dst, src, bytes);
    rf_status st = x->g.ops->h2d_narrow(&x->g, dst, src, n, kind, s.p);
    /* (the widening reads it in stream order: what takes the room next comes after) */
    gfree(x, &s);
    return st;
}
