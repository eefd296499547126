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
** chooses per part and column: codes where every code is shared.
*/
#include "rf_rt_dist.h"

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
        if ((int64_t)code < rf_rt_dict_shared(dict)) return rf_rt_mix64((uint64_t)(int64_t)(int32_t)code);
        int64_t len = 0;
        const char *s = rf_rt_dict_str(dict, code, &len);
        return rf_rt_hash_bytes(s, len);
    }
    case RF_TYPE_FLOAT: {
        double v = ((const double *)r->cols[c])[i];
        if (v == 0) v = 0; /* -0 joins 0 */
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        return rf_rt_mix64(b);
    }
    case RF_TYPE_DATE: return rf_rt_mix64((uint64_t)(int64_t)((const int32_t *)r->cols[c])[i]);
    case RF_TYPE_BOOL: return rf_rt_mix64(((const uint8_t *)r->cols[c])[i]);
    /* a wide decimal by its low 64 bits: equal values agree there, and a
    ** value within decimal's range hashes as the GPU's 64-bit copy of it does */
    case RF_TYPE_DEC128: return rf_rt_mix64((uint64_t)((const rf_dec128 *)r->cols[c])[i]);
    default: return rf_rt_mix64((uint64_t)((const int64_t *)r->cols[c])[i]);
    }
}

void rf_rt_dist_row_ranks(const rf_rt_rel *r, const rf_rt_dict *dict, const int32_t *cols, int32_t ncols,
                          int nranks, int32_t *rank_of_row)
{
    for (int64_t i = 0; i < r->nrows; i++) {
        uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
        for (int32_t j = 0; j < ncols; j++) h = rf_rt_mix64(h ^ value_hash(r, dict, cols[j], i)) + (uint64_t)j;
        rank_of_row[i] = (int32_t)(h % (uint64_t)nranks);
    }
}

/* Whether string column c of the part's rows goes as codes: every code shared. */
static int part_coded(const rf_rt_rel *r, const rf_rt_dict *dict, const int32_t *dest, int part, int32_t c)
{
    int64_t shared = rf_rt_dict_shared(dict);
    if (!shared) return 0;
    const uint32_t *codes = r->cols[c];
    for (int64_t i = 0; i < r->nrows; i++)
        if ((!dest || dest[i] == part) && (int64_t)codes[i] >= shared) return 0;
    return 1;
}

/* The bytes of the part holding the rows of r whose dest is part (all rows
** when dest is NULL); *coded, *uncoded: its string columns sent as codes,
** as bytes. */
static int64_t part_bytes(const rf_rt_rel *r, const rf_rt_dict *dict, const int32_t *dest, int part, int64_t *rows,
                          int64_t *coded, int64_t *uncoded)
{
    int64_t n = 0;
    for (int64_t i = 0; i < r->nrows; i++) n += !dest || dest[i] == part;
    int64_t b = 8;
    for (int32_t c = 0; c < r->ncols; c++) {
        if (r->types[c] != RF_TYPE_STRING) {
            b += n * rf_rt_type_width(r->types[c]);
            continue;
        }
        b += 4 + n * 4;
        if (part_coded(r, dict, dest, part, c)) {
            ++*coded;
            continue;
        }
        ++*uncoded;
        for (int64_t i = 0; i < r->nrows; i++) {
            if (dest && dest[i] != part) continue;
            int64_t len = 0;
            rf_rt_dict_str(dict, ((const uint32_t *)r->cols[c])[i], &len);
            b += len;
        }
    }
    *rows = n;
    return b;
}

static void pack_part(const rf_rt_rel *r, const rf_rt_dict *dict, const int32_t *dest, int part, int64_t n, char *p)
{
    memcpy(p, &n, 8);
    p += 8;
    for (int32_t c = 0; c < r->ncols; c++) {
        int w = rf_rt_type_width(r->types[c]);
        const char *src = r->cols[c];
        if (r->types[c] != RF_TYPE_STRING) {
            if (!dest) {
                if (n) memcpy(p, src, (size_t)(n * w));
                p += n * w;
                continue;
            }
            for (int64_t i = 0; i < r->nrows; i++)
                if (dest[i] == part) {
                    memcpy(p, src + i * w, (size_t)w);
                    p += w;
                }
            continue;
        }
        uint32_t tag = (uint32_t)part_coded(r, dict, dest, part, c);
        memcpy(p, &tag, 4);
        p += 4;
        if (tag) {
            /* shared codes, as a 4-byte column */
            if (!dest) {
                if (n) memcpy(p, src, (size_t)n * 4);
                p += n * 4;
                continue;
            }
            for (int64_t i = 0; i < r->nrows; i++)
                if (dest[i] == part) {
                    memcpy(p, src + i * 4, 4);
                    p += 4;
                }
            continue;
        }
        char *lens = p, *bytes = p + n * 4;
        for (int64_t i = 0; i < r->nrows; i++) {
            if (dest && dest[i] != part) continue;
            int64_t len = 0;
            const char *s = rf_rt_dict_str(dict, ((const uint32_t *)src)[i], &len);
            uint32_t l32 = (uint32_t)len;
            memcpy(lens, &l32, 4);
            lens += 4;
            if (len) memcpy(bytes, s, (size_t)len);
            bytes += len;
        }
        p = bytes;
    }
}

rf_status rf_rt_dist_pack(const rf_rt_rel *r, const rf_rt_dict *dict, const int32_t *dest, int nranks, char **buf,
                          int64_t *size, int64_t *displ, int64_t *coded, int64_t *uncoded)
{
    *buf = NULL;
    int64_t ignored[2] = {0, 0};
    if (!coded) coded = &ignored[0];
    if (!uncoded) uncoded = &ignored[1];
    int64_t *rows = rf_calloc((size_t)nranks + 1, sizeof *rows);
    if (!rows) return RF_ENOMEM;
    int nparts = dest ? nranks : 1;
    int64_t total = 0;
    for (int j = 0; j < nparts; j++) {
        size[j] = part_bytes(r, dict, dest, j, &rows[j], coded, uncoded);
        displ[j] = total;
        total += size[j];
    }
    for (int j = nparts; j < nranks; j++) size[j] = size[0], displ[j] = 0; /* one part for all */
    char *b = rf_rt_alloc_big((size_t)total + 1);
    if (!b) {
        free(rows);
        return RF_ENOMEM;
    }
    for (int j = 0; j < nparts; j++) pack_part(r, dict, dest, j, rows[j], b + displ[j]);
    free(rows);
    *buf = b;
    return RF_OK;
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
                            rf_rt_dict *dict, rf_rt_rel *out)
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
            if (n) st = rf_rt_dict_intern_many(dict, off, p + n * 4, n, (uint32_t *)out->cols[c] + row, 1);
            p += n * 4 + off[n];
        }
        row += n;
    }
    free(off);
    if (st) rf_rt_rel_free(out);
    return st;
}
