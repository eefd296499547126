/*
** runtime/dist/dist_pack.c: rows to ranks, rows to bytes and back.
**
** Owns: the hash that decides a row's rank (the same on every rank: a
** string by its code where the code is below the dictionary's shared count,
** rf_rt_dict_shared, which means the same string on every rank, else by its
** bytes: a string is either among the shared ones on every rank or on none,
** so equal strings always hash alike), and the wire format of a relation's
** rows. A part (the rows for one rank) is: int64 nrows, then per column
** either nrows values at the column's width, or for a string column a
** uint32 tag, then either (tag 1) nrows uint32 codes, all below the shared
** count, which the receiver keeps as they are, or (tag 0) nrows uint32
** lengths followed by the bytes, which the receiver interns. The sender
** chooses per part and column: codes where every code is shared. Rows'
** ranks, packing and the interning of strings received as bytes run on the
** run's threads, with the same results on any number of them.
*/
#include "rf_rt_dist.h"
#include "rf_mix.h"

#include <stdlib.h>
#include <string.h>

/* One value's hash; equal values (as the kernels compare them) hash equal. */
static uint64_t value_hash(const rf_rt_rel *r, const rf_rt_dict *dict, int32_t c, int64_t i)
{
    switch (r->types[c]) {
    case RF_TYPE_STRING: {
        uint32_t code = ((const uint32_t *)r->cols[c])[i];
        /* a shared code as a date's value is hashed (the GPU's part_flags
        ** reads a string column so); another string by its bytes */
        if ((int64_t)code < rf_rt_dict_shared(dict)) return rf_mix64((uint64_t)(int64_t)(int32_t)code);
        int64_t len = 0;
        const char *s = rf_rt_dict_str(dict, code, &len);
        return rf_rt_hash_bytes(s, len);
    }
    case RF_TYPE_FLOAT: {
        /* every NaN is one value (docs/LANGUAGE.md, Types): x86's 0.0 / 0.0
        ** has the sign bit set, a parsed `nan` has not */
        return rf_mix64(rf_val_float_hash_bits(((const double *)r->cols[c])[i]));
    }
    case RF_TYPE_DATE: return rf_mix64((uint64_t)(int64_t)((const int32_t *)r->cols[c])[i]);
    case RF_TYPE_BOOL: return rf_mix64(((const uint8_t *)r->cols[c])[i]);
    /* a wide decimal by its low 64 bits: equal values agree there, and the
    ** GPU's part_flags reads the same word of its 16 bytes */
    case RF_TYPE_DEC128: return rf_mix64((uint64_t)((const rf_dec128 *)r->cols[c])[i]);
    default: return rf_mix64((uint64_t)((const int64_t *)r->cols[c])[i]);
    }
}

/* Rows to ranks, a range of rows per thread. */
typedef struct ranker {
    const rf_rt_rel *r;
    const rf_rt_dict *dict;
    const int32_t *cols;
    int32_t ncols;
    int nranks, nchunks;
    int32_t *out;
} ranker;

static void rank_task(void *arg, int t)
{
    const ranker *k = arg;
    int64_t lo = k->r->nrows * t / k->nchunks, hi = k->r->nrows * (t + 1) / k->nchunks;
    for (int64_t i = lo; i < hi; i++) {
        uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
        for (int32_t j = 0; j < k->ncols; j++) h = rf_mix64(h ^ value_hash(k->r, k->dict, k->cols[j], i)) + (uint64_t)j;
        k->out[i] = (int32_t)(h % (uint64_t)k->nranks);
    }
}

/* Rows a thread takes at least, so that its start pays for itself. */
#define CHUNK_ROWS (INT64_C(1) << 16)

/* How many threads (at most threads) for n rows. */
static int chunks_for(int64_t n, int threads)
{
    int64_t want = n / CHUNK_ROWS;
    int t = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    return want < t ? (want < 1 ? 1 : (int)want) : t;
}

void rf_rt_dist_row_ranks(const rf_rt_rel *r, const rf_rt_dict *dict, const int32_t *cols, int32_t ncols,
                          int nranks, int threads, int32_t *rank_of_row)
{
    ranker k = {r, dict, cols, ncols, nranks, chunks_for(r->nrows, threads), rank_of_row};
    rf_rt_parallel(k.nchunks, rank_task, &k);
}

/* The packing of one relation into parts: its rows cut into chunks that
** threads pack side by side (each chunk's rows keep their order, and a
** part's rows are its chunks' in chunk order: the rows' order), each row
** read once per pass: a pass that counts each part's rows and its string
** columns' largest codes, one that sums the bytes of the string columns
** sent as bytes, and one that writes every column. (A pass per part, as
** before, read every row once per rank, and a string column's codes twice
** more.) */
typedef struct packer {
    const rf_rt_rel *r;
    const rf_rt_dict *dict;
    const int32_t *dest;   /* NULL: every row in part 0 */
    int nparts, nchunks, phase;
    int64_t shared;
    /* [t * nparts + j]: chunk t's rows in part j; then where they start there */
    int64_t *rows;
    /* [(t * ncols + c) * nparts + j], string columns: chunk t's largest code
    ** in part j, then its bytes (string column sent as bytes), then where
    ** they start among the part's bytes */
    uint32_t *maxcode;
    int64_t *bytes;
    uint8_t *coded;        /* [c * nparts + j]: column c of part j goes as codes */
    int64_t *colbytes;     /* [c * nparts + j]: the bytes of column c of part j, sent as bytes */
    char **col;            /* [j * ncols + c]: where column c of part j starts (after its tag) */
    int64_t *partrows;     /* [j] */
    int64_t *cur;          /* [t * nparts * 2 + ...]: chunk t's cursors (rows, bytes) */
} packer;

static void chunk_range(const packer *pk, int t, int64_t *lo, int64_t *hi)
{
    int64_t n = pk->r->nrows;
    *lo = n * t / pk->nchunks;
    *hi = n * (t + 1) / pk->nchunks;
}

/* Row i's part, or -1 when it stays out. */
static inline int row_part(const packer *pk, int64_t i)
{
    if (!pk->dest) return 0;
    int j = pk->dest[i];
    return j >= 0 && j < pk->nparts ? j : -1;
}

static void pack_count(packer *pk, int t, int64_t lo, int64_t hi)
{
    const rf_rt_rel *r = pk->r;
    int N = pk->nparts;
    int64_t *rows = pk->rows + (size_t)t * N;
    for (int64_t i = lo; i < hi; i++) {
        int j = row_part(pk, i);
        if (j >= 0) rows[j]++;
    }
    for (int32_t c = 0; c < r->ncols; c++) {
        if (r->types[c] != RF_TYPE_STRING) continue;
        uint32_t *m = pk->maxcode + ((size_t)t * r->ncols + c) * N;
        const uint32_t *codes = r->cols[c];
        if (!pk->dest) {
            uint32_t mx = 0;
            for (int64_t i = lo; i < hi; i++) mx = codes[i] > mx ? codes[i] : mx;
            m[0] = mx;
            continue;
        }
        for (int64_t i = lo; i < hi; i++) {
            int j = row_part(pk, i);
            if (j >= 0 && codes[i] > m[j]) m[j] = codes[i];
        }
    }
}

static void pack_sum_bytes(packer *pk, int t, int64_t lo, int64_t hi)
{
    const rf_rt_rel *r = pk->r;
    int N = pk->nparts;
    for (int32_t c = 0; c < r->ncols; c++) {
        if (r->types[c] != RF_TYPE_STRING) continue;
        const uint8_t *coded = pk->coded + (size_t)c * N;
        int64_t *b = pk->bytes + ((size_t)t * r->ncols + c) * N;
        const uint32_t *codes = r->cols[c];
        for (int64_t i = lo; i < hi; i++) {
            int j = row_part(pk, i);
            if (j < 0 || coded[j]) continue;
            int64_t len = 0;
            rf_rt_dict_str(pk->dict, codes[i], &len);
            b[j] += len;
        }
    }
}

static void pack_write(packer *pk, int t, int64_t lo, int64_t hi)
{
    const rf_rt_rel *r = pk->r;
    int N = pk->nparts;
    int64_t *at = pk->cur + (size_t)t * N * 2, *bat = at + N;
    for (int32_t c = 0; c < r->ncols; c++) {
        int w = rf_rt_type_width(r->types[c]);
        const char *src = r->cols[c];
        for (int j = 0; j < N; j++) at[j] = pk->rows[(size_t)t * N + j];
        int str = r->types[c] == RF_TYPE_STRING;
        if (str)
            for (int j = 0; j < N; j++) bat[j] = pk->bytes[((size_t)t * r->ncols + c) * N + j];
        if (!pk->dest && (!str || pk->coded[c])) {
            /* every row, in order: the chunk's rows as they lie */
            if (hi > lo) memcpy(pk->col[c] + at[0] * w, src + lo * w, (size_t)((hi - lo) * w));
            continue;
        }
        for (int64_t i = lo; i < hi; i++) {
            int j = row_part(pk, i);
            if (j < 0) continue;
            char *dst = pk->col[(size_t)j * r->ncols + c];
            if (str && !pk->coded[(size_t)c * N + j]) {
                /* lengths, then bytes (past the part's lengths) */
                int64_t len = 0;
                const char *sv = rf_rt_dict_str(pk->dict, ((const uint32_t *)src)[i], &len);
                uint32_t l32 = (uint32_t)len;
                memcpy(dst + at[j] * 4, &l32, 4);
                if (len) memcpy(dst + pk->partrows[j] * 4 + bat[j], sv, (size_t)len);
                bat[j] += len;
            } else if (w == 8) {
                memcpy(dst + at[j] * 8, src + i * 8, 8);
            } else if (w == 4) {
                memcpy(dst + at[j] * 4, src + i * 4, 4);
            } else {
                memcpy(dst + at[j] * w, src + i * w, (size_t)w);
            }
            at[j]++;
        }
    }
}

static void pack_task(void *arg, int t)
{
    packer *pk = arg;
    int64_t lo, hi;
    chunk_range(pk, t, &lo, &hi);
    if (pk->phase == 0) pack_count(pk, t, lo, hi);
    else if (pk->phase == 1) pack_sum_bytes(pk, t, lo, hi);
    else pack_write(pk, t, lo, hi);
}

rf_status rf_rt_dist_pack(const rf_rt_rel *r, const rf_rt_dict *dict, const int32_t *dest, int nranks, int threads,
                          char **buf, int64_t *size, int64_t *displ, int64_t *coded, int64_t *uncoded)
{
    *buf = NULL;
    int64_t ignored[2] = {0, 0};
    if (!coded) coded = &ignored[0];
    if (!uncoded) uncoded = &ignored[1];
    packer pk;
    memset(&pk, 0, sizeof pk);
    pk.r = r;
    pk.dict = dict;
    pk.dest = dest;
    pk.nparts = dest ? nranks : 1;
    pk.shared = rf_rt_dict_shared(dict);
    pk.nchunks = chunks_for(r->nrows, threads);
    int N = pk.nparts, T = pk.nchunks;
    size_t per = (size_t)T * (size_t)(r->ncols + 1) * (size_t)N;
    pk.rows = rf_calloc((size_t)T * N * 3 + (size_t)N + 1, sizeof *pk.rows);
    pk.maxcode = rf_calloc(per + 1, sizeof *pk.maxcode);
    pk.bytes = rf_calloc(per + 1, sizeof *pk.bytes);
    pk.coded = rf_calloc((size_t)(r->ncols + 1) * N + 1, 1);
    pk.col = rf_calloc((size_t)N * (size_t)(r->ncols + 1) + 1, sizeof *pk.col);
    pk.colbytes = rf_calloc((size_t)N * (size_t)(r->ncols + 1) + 1, sizeof *pk.colbytes);
    rf_status st = pk.rows && pk.maxcode && pk.bytes && pk.coded && pk.col && pk.colbytes ? RF_OK : RF_ENOMEM;
    if (!st) {
        pk.cur = pk.rows + (size_t)T * N;
        pk.partrows = pk.cur + (size_t)T * N * 2;
        pk.phase = 0;
        rf_rt_parallel(T, pack_task, &pk);
    }
    /* each part's rows; its string columns as codes where every code is shared */
    int any_bytes = 0;
    for (int j = 0; j < N && !st; j++) {
        for (int t = 0; t < T; t++) pk.partrows[j] += pk.rows[(size_t)t * N + j];
        for (int32_t c = 0; c < r->ncols; c++) {
            if (r->types[c] != RF_TYPE_STRING) continue;
            uint32_t mx = 0;
            for (int t = 0; t < T; t++) {
                uint32_t m = pk.maxcode[((size_t)t * r->ncols + c) * N + j];
                mx = m > mx ? m : mx;
            }
            pk.coded[(size_t)c * N + j] = (uint8_t)(pk.shared > 0 && (int64_t)mx < pk.shared);
            if (pk.coded[(size_t)c * N + j]) ++*coded;
            else ++*uncoded, any_bytes = 1;
        }
    }
    if (!st && any_bytes) {
        pk.phase = 1;
        rf_rt_parallel(T, pack_task, &pk);
    }
    /* the parts' layout: each part's size, and where each chunk's rows and
    ** string bytes start in it */
    int64_t total = 0;
    for (int j = 0; j < N && !st; j++) {
        int64_t n = pk.partrows[j], b = 8, acc = 0;
        for (int t = 0; t < T; t++) {
            int64_t k = pk.rows[(size_t)t * N + j];
            pk.rows[(size_t)t * N + j] = acc;
            acc += k;
        }
        for (int32_t c = 0; c < r->ncols; c++) {
            if (r->types[c] != RF_TYPE_STRING) {
                b += n * rf_rt_type_width(r->types[c]);
                continue;
            }
            b += 4 + n * 4;
            if (pk.coded[(size_t)c * N + j]) continue;
            acc = 0;
            for (int t = 0; t < T; t++) {
                int64_t *bt = &pk.bytes[((size_t)t * r->ncols + c) * N + j], k = *bt;
                *bt = acc;
                acc += k;
            }
            pk.colbytes[(size_t)c * N + j] = acc;
            b += acc;
        }
        size[j] = b;
        displ[j] = total;
        total += b;
    }
    for (int j = N; j < nranks && !st; j++) size[j] = size[0], displ[j] = 0; /* one part for all */
    char *out = st ? NULL : rf_rt_alloc_big((size_t)total + 1);
    if (!st && !out) st = RF_ENOMEM;
    /* each part's count and tags; where its columns start */
    for (int j = 0; j < N && !st; j++) {
        char *p = out + displ[j];
        int64_t n = pk.partrows[j];
        memcpy(p, &n, 8);
        p += 8;
        for (int32_t c = 0; c < r->ncols; c++) {
            if (r->types[c] == RF_TYPE_STRING) {
                uint32_t tag = pk.coded[(size_t)c * N + j];
                memcpy(p, &tag, 4);
                p += 4;
            }
            pk.col[(size_t)j * r->ncols + c] = p;
            if (r->types[c] != RF_TYPE_STRING || pk.coded[(size_t)c * N + j]) {
                p += n * rf_rt_type_width(r->types[c]);
                continue;
            }
            p += n * 4 + pk.colbytes[(size_t)c * N + j]; /* lengths, then the bytes */
        }
    }
    if (!st) {
        pk.phase = 2;
        rf_rt_parallel(T, pack_task, &pk);
        *buf = out;
    }
    free(pk.rows);
    free(pk.maxcode);
    free(pk.bytes);
    free(pk.coded);
    free(pk.col);
    free(pk.colbytes);
    return st;
}

/* Reads a part's row count and checks that its columns fit its size (and
** that its codes are below shared); *n rows. */
static int part_check(const char *p, int64_t size, int32_t ncols, const rf_type *types, int64_t shared, int64_t *n)
{
    if (size < 8) return 0;
    memcpy(n, p, 8);
    if (*n < 0) return 0;
    int64_t at = 8;
    for (int32_t c = 0; c < ncols; c++) {
        if (types[c] != RF_TYPE_STRING) {
            int64_t w = rf_rt_type_width(types[c]);
            if (*n > (size - at) / w) return 0;
            at += *n * w;
            continue;
        }
        if (size - at < 4) return 0;
        uint32_t tag;
        memcpy(&tag, p + at, 4);
        at += 4;
        if (tag > 1 || *n > (size - at) / 4) return 0;
        if (tag) {
            for (int64_t i = 0; i < *n; i++) {
                uint32_t code;
                memcpy(&code, p + at + i * 4, 4);
                if ((int64_t)code >= shared) return 0;
            }
            at += *n * 4;
            continue;
        }
        int64_t sum = 0;
        for (int64_t i = 0; i < *n; i++) {
            uint32_t l;
            memcpy(&l, p + at + i * 4, 4);
            sum += l;
        }
        at += *n * 4;
        if (sum > size - at) return 0;
        at += sum;
    }
    return at == size;
}

rf_status rf_rt_dist_unpack(const char *buf, const int64_t *size, int nparts, int32_t ncols, const rf_type *types,
                            rf_rt_dict *dict, int threads, rf_rt_rel *out, int64_t *interned)
{
    memset(out, 0, sizeof *out);
    int64_t total = 0, at = 0, n;
    for (int j = 0; j < nparts; j++) {
        if (!part_check(buf + at, size[j], ncols, types, rf_rt_dict_shared(dict), &n)) return RF_EINTERNAL;
        total += n;
        at += size[j];
    }
    rf_status st = rf_rt_rel_alloc(out, ncols, types, total);
    if (st) return st;
    int64_t row = 0;
    int64_t *off = NULL;
    at = 0;
    for (int j = 0; j < nparts && !st; j++) {
        const char *p = buf + at;
        at += size[j];
        memcpy(&n, p, 8);
        p += 8;
        for (int32_t c = 0; c < ncols && !st; c++) {
            int w = rf_rt_type_width(types[c]);
            if (types[c] != RF_TYPE_STRING) {
                if (n) memcpy((char *)out->cols[c] + row * w, p, (size_t)(n * w));
                p += n * w;
                continue;
            }
            uint32_t tag;
            memcpy(&tag, p, 4);
            p += 4;
            if (tag) {
                /* shared codes: the same strings here */
                if (n) memcpy((uint32_t *)out->cols[c] + row, p, (size_t)n * 4);
                p += n * 4;
                continue;
            }
            /* lengths to offsets, then the dictionary interns them in order */
            free(off);
            off = rf_malloc((size_t)(n + 1) * sizeof *off);
            if (!off) {
                st = RF_ENOMEM;
                break;
            }
            off[0] = 0;
            for (int64_t i = 0; i < n; i++) {
                uint32_t l;
                memcpy(&l, p + i * 4, 4);
                off[i + 1] = off[i] + l;
            }
            if (n) st = rf_rt_dict_intern_many(dict, off, p + n * 4, n, (uint32_t *)out->cols[c] + row,
                                               n < CHUNK_ROWS ? 1 : threads);
            if (!st && interned) *interned += n;
            p += n * 4 + off[n];
        }
        row += n;
    }
    free(off);
    if (st) rf_rt_rel_free(out);
    return st;
}
