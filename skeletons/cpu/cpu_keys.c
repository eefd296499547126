/*
** skeletons/cpu/cpu_keys.c: normalized, range-compressed key encoding.
**
** Owns: column range scans, the layout of key columns into 64-bit words and
** the encoding loops. Everything that hashes, compares or sorts keys goes
** through here, so one definition of value equality and order (floats:
** -0.0 == 0.0, NaNs equal and last) serves every primitive.
*/
#include "cpu_internal.h"

rf_status cpu_table_keys(const rf_cpu_table *t, const int32_t *cols, int32_t nk, const uint8_t *desc,
                         rf_cpu_kind *kinds, const void **data, uint8_t *pdesc, int32_t *np)
{
    *np = 0;
    if (!t || t->nrows < 0 || nk < 0 || (nk > 0 && !cols)) return RF_EINTERNAL;
    int32_t p = 0;
    for (int32_t i = 0; i < nk; i++) {
        if (cols[i] < 0 || cols[i] >= t->ncols) return RF_EINTERNAL;
        rf_cpu_kind k = t->cols[cols[i]].kind;
        if ((unsigned)k > RF_CPU_I128) return RF_EINTERNAL;
        const void *d = t->cols[cols[i]].data;
        int parts = k == RF_CPU_I128 ? 2 : 1;
        for (int j = 0; j < parts; j++, p++) {
            kinds[p] = k == RF_CPU_I128 ? (j ? RF_CPU_I128_LO : RF_CPU_I128_HI) : k;
            data[p] = d;
            if (desc && pdesc) pdesc[p] = desc[i];
        }
    }
    *np = p;
    return RF_OK;
}

int32_t cpu_kinds_parts(const rf_cpu_kind *kinds, const void *const *data, int32_t nk, rf_cpu_kind *pkinds,
                        const void **pdata)
{
    int32_t p = 0;
    for (int32_t i = 0; i < nk; i++) {
        int parts = kinds[i] == RF_CPU_I128 ? 2 : 1;
        for (int j = 0; j < parts; j++, p++) {
            pkinds[p] = parts == 2 ? (j ? RF_CPU_I128_LO : RF_CPU_I128_HI) : kinds[i];
            if (pdata) pdata[p] = data[i];
        }
    }
    return p;
}

/* ---- ranges --------------------------------------------------------- */

typedef struct range_ctx {
    int32_t nk;
    const rf_cpu_kind *kinds;
    const void *const *data;
    int64_t grain;
    uint64_t *lo, *hi; /* [nchunks * nk] */
} range_ctx;

#define RANGE_LOOP(T, NORM)                                                                                    \
    do {                                                                                                       \
        const T *x = d;                                                                                        \
        for (int64_t i = b; i < e; i++) {                                                                      \
            uint64_t v = NORM(x[i]);                                                                           \
            mn = v < mn ? v : mn;                                                                              \
            mx = v > mx ? v : mx;                                                                              \
        }                                                                                                      \
    } while (0)
#define NORM_U(x) ((uint64_t)(x))

static void range_chunk(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    range_ctx *c = vp;
    int64_t ch = b / c->grain;
    for (int32_t k = 0; k < c->nk; k++) {
        uint64_t mn = UINT64_MAX, mx = 0;
        const void *d = c->data[k];
        switch (c->kinds[k]) {
        case RF_CPU_I64: RANGE_LOOP(int64_t, cpu_norm_i64); break;
        case RF_CPU_F64: RANGE_LOOP(double, cpu_norm_f64); break;
        case RF_CPU_I32: RANGE_LOOP(int32_t, cpu_norm_i32); break;
        case RF_CPU_U32: RANGE_LOOP(uint32_t, NORM_U); break;
        case RF_CPU_I128_HI: RANGE_LOOP(rf_dec128, cpu_norm_i128_hi); break;
        case RF_CPU_I128_LO: RANGE_LOOP(rf_dec128, cpu_norm_i128_lo); break;
        default: RANGE_LOOP(uint8_t, NORM_U); break;
        }
        c->lo[ch * c->nk + k] = mn;
        c->hi[ch * c->nk + k] = mx;
    }
}

void cpu_ranges(rf_cpu_pool *pool, int32_t nk, const rf_cpu_kind *kinds, const void *const *data, int64_t n,
                uint64_t *lo, uint64_t *hi)
{
    /* At most 64 chunks and 16 columns at a time, so that the partial
    ** results fit on the stack and this function cannot fail. */
    enum { MAXCH = 64, MAXK = 16 };
    uint64_t plo[MAXCH * MAXK], phi[MAXCH * MAXK];
    for (int32_t k0 = 0; k0 < nk; k0 += MAXK) {
        int32_t kn = nk - k0 < MAXK ? nk - k0 : MAXK;
        range_ctx c = {kn, kinds + k0, data + k0, 0, plo, phi};
        c.grain = (n + MAXCH - 1) / MAXCH;
        if (c.grain < 8192) c.grain = 8192;
        int64_t nch = (n + c.grain - 1) / c.grain;
        rf_cpu_parallel_for(pool, n, c.grain, range_chunk, &c);
        for (int32_t k = 0; k < kn; k++) {
            uint64_t mn = UINT64_MAX, mx = 0;
            for (int64_t ch = 0; ch < nch; ch++) {
                if (plo[ch * kn + k] < mn) mn = plo[ch * kn + k];
                if (phi[ch * kn + k] > mx) mx = phi[ch * kn + k];
            }
            lo[k0 + k] = mn;
            hi[k0 + k] = mx;
        }
    }
}

/* ---- layout --------------------------------------------------------- */

void cpu_enc_free(cpu_enc *e)
{
    free(e->k);
    free(e->wbits);
    memset(e, 0, sizeof *e);
}

rf_status cpu_enc_init(cpu_enc *e, int32_t nk, const rf_cpu_kind *kinds, const uint8_t *desc, const uint64_t *lo,
                       const uint64_t *hi)
{
    memset(e, 0, sizeof *e);
    e->nk = nk;
    e->k = cpu_zalloc(nk, sizeof *e->k);
    e->wbits = cpu_zalloc((int64_t)nk + 1, sizeof *e->wbits);
    if (!e->k || !e->wbits) {
        cpu_enc_free(e);
        return RF_ENOMEM;
    }
    if (nk == 0 || hi[0] - lo[0] == UINT64_MAX) e->lead = 1;
    int32_t word = 0, used = 0;
    if (e->lead) {
        e->wbits[0] = 1;
        word = 1;
    }
    for (int32_t c = 0; c < nk; c++) {
        cpu_kcol *k = &e->k[c];
        k->kind = kinds[c];
        k->desc = desc ? desc[c] != 0 : 0;
        k->lo = lo[c];
        k->hi = hi[c];
        uint64_t span = hi[c] - lo[c];
        k->add = (c == 0 && !e->lead) ? 1 : 0;
        k->bits = cpu_bitlen(span + k->add);
        if (used + k->bits > 64) {
            word++;
            used = 0;
        }
        k->word = word;
        used += k->bits;
        k->shift = used; /* cumulative for now; turned into a shift below */
        e->wbits[word] = used;
    }
    e->nw = nk ? e->k[nk - 1].word + 1 : 1;
    for (int32_t c = 0; c < nk; c++) e->k[c].shift = e->wbits[e->k[c].word] - e->k[c].shift;
    return RF_OK;
}

/* ---- encoding ------------------------------------------------------- */

/* set: the column fills its word alone (assigned, not or-ed in) */
#define ENC_BODY(IDX, CHECK)                                                                                   \
    if (set) {                                                                                                 \
        for (int64_t i = 0; i < cnt; i++) {                                                                    \
            uint64_t v = NORM(x[IDX]);                                                                         \
            if (CHECK && (v < lo || v > hi)) ok[i] = 0;                                                        \
            out[i * stride] = (((v ^ flip) - fb) + add) << shift;                                              \
        }                                                                                                      \
    } else {                                                                                                   \
        for (int64_t i = 0; i < cnt; i++) {                                                                    \
            uint64_t v = NORM(x[IDX]);                                                                         \
            if (CHECK && (v < lo || v > hi)) ok[i] = 0;                                                        \
            out[i * stride] |= (((v ^ flip) - fb) + add) << shift;                                             \
        }                                                                                                      \
    }

#define ENC_FN(NAME, T)                                                                                        \
    static void NAME(const T *x, const int64_t *rows, int64_t begin, int64_t cnt, uint64_t *out,              \
                     int64_t stride, uint64_t flip, uint64_t fb, uint64_t add, int shift, uint64_t lo,         \
                     uint64_t hi, uint8_t *ok, int set)                                                        \
    {                                                                                                          \
        if (rows) {                                                                                            \
            rows += begin;                                                                                     \
            if (ok) {                                                                                          \
                ENC_BODY(rows[i], 1)                                                                           \
            } else {                                                                                           \
                ENC_BODY(rows[i], 0)                                                                           \
            }                                                                                                  \
        } else {                                                                                               \
            x += begin;                                                                                        \
            if (ok) {                                                                                          \
                ENC_BODY(i, 1)                                                                                 \
            } else {                                                                                           \
                ENC_BODY(i, 0)                                                                                 \
            }                                                                                                  \
        }                                                                                                      \
    }

#define NORM cpu_norm_i64
ENC_FN(enc_i64, int64_t)
#undef NORM
#define NORM cpu_norm_f64
ENC_FN(enc_f64, double)
#undef NORM
#define NORM cpu_norm_i32
ENC_FN(enc_i32, int32_t)
#undef NORM
#define NORM NORM_U
ENC_FN(enc_u32, uint32_t)
ENC_FN(enc_u8, uint8_t)
#undef NORM
#define NORM cpu_norm_i128_hi
ENC_FN(enc_i128_hi, rf_dec128)
#undef NORM
#define NORM cpu_norm_i128_lo
ENC_FN(enc_i128_lo, rf_dec128)
#undef NORM

void cpu_encode(const cpu_enc *e, const void *const *data, const int64_t *rows, int64_t begin, int64_t end,
                int32_t word, uint64_t *out, uint8_t *ok)
{
    int64_t cnt = end - begin;
    int64_t stride = word < 0 ? e->nw : 1;
    /* one column in one word (the usual join key): it is assigned */
    int set = e->nk == 1 && !e->lead && e->nw == 1;
    if (!set) memset(out, 0, (size_t)(cnt * stride) * sizeof *out);
    if (e->lead && word <= 0)
        for (int64_t i = 0; i < cnt; i++) out[i * stride] = 1;
    for (int32_t c = 0; c < e->nk; c++) {
        const cpu_kcol *k = &e->k[c];
        if (word >= 0 && k->word != word) continue;
        if (k->bits == 0 && !ok) continue; /* a constant column adds nothing */
        uint64_t *o = out + (word < 0 ? k->word : 0);
        uint64_t flip = k->desc ? UINT64_MAX : 0, fb = k->desc ? ~k->hi : k->lo;
        /* A 0-bit column still runs for its range check; shift 64 would be UB. */
        int shift = k->bits ? k->shift : 0;
        uint64_t add = k->bits ? k->add : 0;
        switch (k->kind) {
        case RF_CPU_I64: enc_i64(data[c], rows, begin, cnt, o, stride, flip, fb, add, shift, k->lo, k->hi, ok, set); break;
        case RF_CPU_F64: enc_f64(data[c], rows, begin, cnt, o, stride, flip, fb, add, shift, k->lo, k->hi, ok, set); break;
        case RF_CPU_I32: enc_i32(data[c], rows, begin, cnt, o, stride, flip, fb, add, shift, k->lo, k->hi, ok, set); break;
        case RF_CPU_U32: enc_u32(data[c], rows, begin, cnt, o, stride, flip, fb, add, shift, k->lo, k->hi, ok, set); break;
        case RF_CPU_I128_HI:
            enc_i128_hi(data[c], rows, begin, cnt, o, stride, flip, fb, add, shift, k->lo, k->hi, ok, set);
            break;
        case RF_CPU_I128_LO:
            enc_i128_lo(data[c], rows, begin, cnt, o, stride, flip, fb, add, shift, k->lo, k->hi, ok, set);
            break;
        default: enc_u8(data[c], rows, begin, cnt, o, stride, flip, fb, add, shift, k->lo, k->hi, ok, set); break;
        }
    }
}
