/*
** runtime/gpu/test_gpu_wire.c: unit test of copies as stored
** (rt_gpu_wire.c, runtime/rt_stored.c): stored columns made by hand, block
** by block (every width 1, 2, 4 and the column's, exp 0 to 6, negative
** minimums, int64's extremes, a partial last block), for int64 and date
** columns. Their rounds, packed with pieces and caps of several sizes (a
** piece a block, pieces that cut blocks, a round a piece, rounds past
** 2 MiB packed by four threads), widened by the host decoding the device
** kernel shares (rf_wire.h), must equal rf_db_narrow_decode's block by
** block; so must the emulated device's h2d_stored, the host's
** rf_rt_stored_widen (1 and 3 threads) and a selection of blocks
** (rf_rt_stored_select, block skipping's). Exit 0 on success, 1 with a
** message.
*/
#include "rf_rt_stored.h"
#include "rt_gpu_internal.h"
#include "rf_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A stored column of nrows rows of type t in blocks of br rows: its bytes
** in *file (blocks side by side, unaligned, as the writer puts them). Block
** b's form cycles through widths and exps; minimums are negative, zero,
** positive and at int64's ends. */
static rf_rt_stored *make(rf_type t, int64_t nrows, int64_t br, unsigned char **file)
{
    int elem = rf_db_type_width(t);
    int64_t nb = (nrows + br - 1) / br;
    rf_rt_stored *s = calloc(1, sizeof *s);
    s->blocks = calloc((size_t)nb + 1, sizeof *s->blocks);
    unsigned char *f = malloc((size_t)nrows * 8 + 16);
    s->type = t;
    s->nrows = nrows;
    uint64_t at = 1; /* (unaligned from the start) */
    for (int64_t b = 0; b < nb; b++) {
        int64_t n = nrows - b * br < br ? nrows - b * br : br;
        static const int widths[] = {1, 2, 4, 8};
        int w = widths[b % 4];
        if (w >= elem) w = elem; /* as it is */
        int e = w < elem ? (int)(b / 4 % 7) : 0;
        uint64_t mul = rf_db_pow10(e);
        uint64_t qcap = w == 1 ? 0xff : w == 2 ? 0xffff : w == 4 ? 0xffffffffu : UINT64_MAX;
        rf_db_block bl;
        memset(&bl, 0, sizeof bl);
        bl.width = (uint8_t)w;
        bl.exp = (uint8_t)e;
        bl.at = at;
        if (w == elem) {
            /* as it is: any values of the type, its extremes too */
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            for (int64_t i = 0; i < n; i++) {
                int64_t v = (int64_t)next();
                if (elem == 4) v = (int32_t)v;
                if (i == 0) v = elem == 8 ? INT64_MIN : INT32_MIN;
                if (i == 1) v = elem == 8 ? INT64_MAX : INT32_MAX;
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
                if (elem == 8) memcpy(f + at + (uint64_t)i * 8, &v, 8);
                else {
                    int32_t v32 = (int32_t)v;
                    memcpy(f + at + (uint64_t)i * 4, &v32, 4);
                }
            }
            bl.min = lo;
            bl.max = hi;
        } else {
            /* base + q * 10^e, q in [0, qmax]: the largest value at the type's end for some blocks */
            int64_t tmax = elem == 8 ? INT64_MAX : INT32_MAX, tmin = elem == 8 ? INT64_MIN : INT32_MIN;
            int64_t base;
            switch (b % 5) {
            case 0: base = tmin; break;                              /* the type's least */
            case 1: base = tmax; break;                              /* moved down below: up to the type's largest */
            case 2: base = -(int64_t)(next() % 1000000) * 7; break; /* negative */
            case 3: base = 0; break;
            default: base = (int64_t)(next() % 100000); break;
            }
            uint64_t qmax = ((uint64_t)tmax - (uint64_t)base) / mul;
            if (b % 5 == 1) qmax = (uint64_t)tmax / mul;
            if (qmax > qcap) qmax = qcap;
            uint64_t span = qmax * mul;
            if (b % 5 == 1) base = (int64_t)((uint64_t)tmax - span);
            for (int64_t i = 0; i < n; i++) {
                uint64_t q = i == 0 ? qmax : i == 1 ? 0 : next() % (qmax + 1);
                if (w == 1) f[at + (uint64_t)i] = (unsigned char)q;
                else if (w == 2) {
                    uint16_t v = (uint16_t)q;
                    memcpy(f + at + (uint64_t)i * 2, &v, 2);
                } else {
                    uint32_t v = (uint32_t)q;
                    memcpy(f + at + (uint64_t)i * 4, &v, 4);
                }
            }
            bl.min = base;
            bl.max = (int64_t)((uint64_t)base + span);
        }
        at += (uint64_t)n * (uint64_t)w;
        s->blocks[s->nblocks++] = (rf_rt_stored_block){bl, b * br, n};
        s->stored_bytes += (uint64_t)n * (uint64_t)w;
    }
    s->base = f;
    *file = f;
    return s;
}

/* The reference: every block by rf_db_narrow_decode (which also checks it). */
static unsigned char *reference(const rf_rt_stored *s, int *bad)
{
    int elem = rf_db_type_width(s->type);
    unsigned char *ref = calloc((size_t)s->nrows + 1, (size_t)elem);
    for (int64_t b = 0; b < s->nblocks; b++) {
        const rf_rt_stored_block *sb = &s->blocks[b];
        if (rf_db_narrow_decode(s->type, &sb->bl, s->base + sb->bl.at, sb->n, ref + sb->row * elem) >= 0) {
            fprintf(stderr, "block %lld: the test made a value past its max\n", (long long)b);
            *bad = 1;
        }
    }
    return ref;
}

static int same(const char *what, const void *got, const void *want, int64_t n, int elem)
{
    if (!memcmp(got, want, (size_t)n * (size_t)elem)) return 0;
    for (int64_t i = 0; i < n; i++)
        if (memcmp((const char *)got + i * elem, (const char *)want + i * elem, (size_t)elem)) {
            int64_t g = 0, w = 0;
            memcpy(&g, (const char *)got + i * elem, (size_t)elem);
            memcpy(&w, (const char *)want + i * elem, (size_t)elem);
            fprintf(stderr, "%s: row %lld is %lld, not %lld\n", what, (long long)i, (long long)g, (long long)w);
            break;
        }
    return 1;
}

/* s's rounds of pieces of at most piece rows in cap bytes, widened on the host. */
static int rounds(rf_cpu_pool *cpu, const rf_rt_stored *s, int64_t piece, uint64_t cap, const void *ref)
{
    int elem = rf_db_type_width(s->type);
    unsigned char *round = aligned_alloc(16, (size_t)(cap + 15) / 16 * 16); /* (C11: a multiple of the alignment) */
    unsigned char *out = calloc((size_t)s->nrows + 1, (size_t)elem);
    uint64_t room = rf_gpu_wire_round_room(s, piece, cap);
    int64_t b = 0, r = 0, nrounds = 0, covered = 0;
    int bad = !round || !out;
    while (!bad && b < s->nblocks) {
        uint64_t len = 0;
        int32_t np = 0;
        bad |= rf_gpu_wire_pack(cpu, s, piece, cap, &b, &r, round, &len, &np) != RF_OK;
        if (!bad && (len > cap || len > room || np < 1)) {
            fprintf(stderr, "piece %lld, cap %llu: a round of %llu bytes, %d pieces (room %llu)\n", (long long)piece,
                    (unsigned long long)cap, (unsigned long long)len, np, (unsigned long long)room);
            bad = 1;
        }
        for (int32_t p = 0; p < np && !bad; p++) {
            rf_wire_blk h;
            memcpy(&h, round + (uint64_t)p * sizeof h, sizeof h);
            covered += h.n;
            bad |= h.n > piece || h.at % 16 != 0;
        }
        if (!bad) rf_gpu_wire_widen_host(round, np, elem, out);
        nrounds++;
    }
    char what[96];
    snprintf(what, sizeof what, "%s, piece %lld, cap %llu (%lld rounds)", s->type == RF_TYPE_DATE ? "date" : "int",
             (long long)piece, (unsigned long long)cap, (long long)nrounds);
    if (!bad && covered != s->nrows) {
        fprintf(stderr, "%s: pieces cover %lld rows of %lld\n", what, (long long)covered, (long long)s->nrows);
        bad = 1;
    }
    if (!bad) bad = same(what, out, ref, s->nrows, elem);
    free(round);
    free(out);
    return bad;
}

/* Through a device (the emulated one, or with --cuda the real one):
** h2d_stored into device memory, back by d2h. */
static int device(gdev *g, gpool *pool, rf_rt_stored *s, const void *ref)
{
    int elem = rf_db_type_width(s->type);
    gbuf col = {0, 0}, sc = {0, 0};
    unsigned char *out = calloc((size_t)s->nrows + 1, (size_t)elem);
    uint64_t h2d0 = g->h2d_bytes, wire0 = g->wire_bytes;
    int bad = !out || rf_gpool_alloc(pool, (uint64_t)s->nrows * (uint64_t)elem, &col) ||
              rf_gpool_alloc(pool, rf_gpu_wire_round_room(s, g->wire_piece, g->wire_round), &sc) ||
              g->ops->h2d_stored(g, col.p, s, sc.p) || g->ops->d2h(g, out, col.p, (uint64_t)s->nrows * (uint64_t)elem);
    if (!bad) bad = same(g->desc, out, ref, s->nrows, elem);
    /* what crossed: the stored bytes and the headers, far below the widened column's for narrow blocks */
    if (!bad && (g->h2d_bytes - h2d0 != (uint64_t)s->nrows * (uint64_t)elem || g->wire_bytes - wire0 < s->stored_bytes)) {
        fprintf(stderr, "%s counted %llu bytes, %llu sent (stored: %llu)\n", g->desc,
                (unsigned long long)(g->h2d_bytes - h2d0), (unsigned long long)(g->wire_bytes - wire0),
                (unsigned long long)s->stored_bytes);
        bad = 1;
    }
    rf_gpool_release(pool, &sc);
    rf_gpool_release(pool, &col);
    free(out);
    return bad;
}

/* The host's widening, and a selection of every third block's rows. */
static int host(rf_rt_stored *s, int64_t br, const unsigned char *ref)
{
    int elem = rf_db_type_width(s->type);
    int bad = 0;
    for (int threads = 1; threads <= 3 && !bad; threads += 2) {
        rf_db_unmap(&s->wide);
        const void *w = rf_rt_stored_widen(s, threads);
        bad = !w || same("rf_rt_stored_widen", w, ref, s->nrows, elem);
    }
    int64_t nb = (s->nrows + br - 1) / br;
    uint8_t *keep = calloc((size_t)nb + 1, 1);
    unsigned char *want = calloc((size_t)s->nrows + 1, (size_t)elem);
    int64_t rows = 0;
    for (int64_t b = 0; b < nb; b++) {
        keep[b] = b % 3 != 1 || b == nb - 1;
        if (!keep[b]) continue;
        int64_t n = s->nrows - b * br < br ? s->nrows - b * br : br;
        memcpy(want + rows * elem, ref + b * br * elem, (size_t)(n * elem));
        rows += n;
    }
    rf_rt_stored *v = NULL;
    if (!bad && rf_rt_stored_select(s, keep, br, &v)) bad = 1;
    if (!bad && v->nrows != rows) {
        fprintf(stderr, "a selection of %lld rows, not %lld\n", (long long)v->nrows, (long long)rows);
        bad = 1;
    }
    const void *vw = bad ? NULL : rf_rt_stored_widen(v, 2);
    if (!bad) bad = !vw || same("a selection of blocks", vw, want, rows, elem);
    rf_rt_stored_free(v);
    free(keep);
    free(want);
    return bad;
}

int main(int argc, char **argv)
{
    /* --cuda: the real device (77, skipped, where there is none), with
    ** rounds of 64 KiB and pieces of 512 rows, so that a column takes many
    ** rounds; the first copy packs its first round while the pinned buffers
    ** are being registered */
    int cuda = argc > 1 && !strcmp(argv[1], "--cuda");
    rf_diags d;
    rf_diags_init(&d);
    gdev g;
    gpool *pool = NULL;
    rf_cpu_pool *cpu = NULL;
    char why[256] = "";
    if (cuda && rf_gpu_cuda_open(&g, &d, why, sizeof why)) {
        printf("SKIP: no GPU: %s\n", why[0] ? why : "the device did not open");
        rf_diags_free(&d);
        return 77;
    }
    if (cuda) { /* (a round holds a piece at least: pieces of 512 rows, as the emulator's) */
        g.wire_round = (uint64_t)64 << 10;
        g.wire_piece = 512;
    }
    if ((!cuda && rf_gpu_emu_open(&g, &d)) || rf_gpool_new(&g, &pool) || rf_cpu_pool_new(4, &cpu)) {
        fprintf(stderr, "cannot open the %s device\n", cuda ? "GPU" : "emulated");
        return 1;
    }
    g.pool = pool;
    g.cpu = cpu;
    rf_gpu_acct_install(&g);
    int bad = 0;
    /* (rows, block rows): several blocks and a partial last one; one short
    ** block; blocks of the writer's size, enough rows for rounds past 2 MiB */
    static const int64_t shapes[][2] = {{10007, 1000}, {5, 8}, {1000, 1}, {1000003, 65536}};
    for (int ti = 0; ti < 2; ti++) {
        rf_type t = ti ? RF_TYPE_DATE : RF_TYPE_DECIMAL;
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            unsigned char *file = NULL;
            rf_rt_stored *s = make(t, shapes[k][0], shapes[k][1], &file);
            unsigned char *ref = reference(s, &bad);
            bad |= rounds(NULL, s, 512, (uint64_t)64 << 10, ref);     /* the emulator's sizes */
            bad |= rounds(NULL, s, 7, 200, ref);                       /* pieces cutting blocks, small rounds */
            bad |= rounds(NULL, s, 1, 48, ref);                        /* a round a row */
            bad |= rounds(cpu, s, 65536, (uint64_t)16 << 20, ref);     /* the device's sizes, four threads */
            bad |= rounds(cpu, s, 65536, (uint64_t)1 << 20, ref);      /* rounds of a few blocks */
            bad |= device(&g, pool, s, ref);
            bad |= host(s, shapes[k][1], ref);
            s->base = NULL; /* (file is the test's, not a mapping) */
            rf_rt_stored_free(s);
            free(file);
            free(ref);
        }
    }
    rf_gpool_free(pool);
    g.ops->close(&g);
    rf_cpu_pool_free(cpu);
    rf_diags_free(&d);
    if (bad) return 1;
    printf("copies as stored: rounds, %s, the host's widening and selections agree with rf_db_narrow_decode\n",
           g.desc);
    return 0;
}
