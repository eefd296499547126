/*
** txn/txn_merge.c: a derived predicate's state after a transaction
** maintained by diffs, put together on the host.
**
** Owns: the new state of a derived predicate from its stored rows and the
** diff program's two outputs for it (txn_gen_diff.c): the keys the batch
** reached and its rows for those keys. The stored rows of the other keys
** stay, in their order, and the recomputed rows follow. Done here rather
** than in the run, where the union of the two would be deduplicated, a sort
** of the whole predicate: here it is one pass over the stored rows probing
** a hash set of the keys reached, so the work follows the batch.
*/
#include "rf_txn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Value c of row as bytes (w of them, at most 16), a float's -0.0 as 0.0
** and every NaN as one: keys compare as values do in a run. */
static const unsigned char *value(const rf_rt_rel *r, int32_t c, int64_t row, int64_t *w, unsigned char *tmp)
{
    *w = rf_rt_type_width(r->types[c]);
    const unsigned char *v = (const unsigned char *)r->cols[c] + row * *w;
    if (r->types[c] == RF_TYPE_FLOAT) {
        double x;
        memcpy(&x, v, sizeof x);
        if (x == 0) x = 0;
        if (x != x) x = NAN;
        memcpy(tmp, &x, sizeof x);
        return tmp;
    }
    return v;
}

/* A key: its first nkey columns, hashed. */
static uint64_t key_hash(const rf_rt_rel *r, int32_t nkey, int64_t row)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    unsigned char tmp[8];
    for (int32_t c = 0; c < nkey; c++) {
        int64_t w;
        const unsigned char *v = value(r, c, row, &w, tmp);
        if (w == 8) {
            uint64_t x;
            memcpy(&x, v, sizeof x);
            h = (h ^ x) * 0xff51afd7ed558ccdu;
        } else
            for (int64_t i = 0; i < w; i++) h = (h ^ v[i]) * 0x100000001b3u;
        h ^= h >> 32;
    }
    return h | 1; /* 0 marks an empty slot */
}

static int key_equal(const rf_rt_rel *a, int64_t ra, const rf_rt_rel *b, int64_t rb, int32_t nkey)
{
    unsigned char ta[8], tb[8];
    for (int32_t c = 0; c < nkey; c++) {
        int64_t w;
        const unsigned char *x = value(a, c, ra, &w, ta), *y = value(b, c, rb, &w, tb);
        if (memcmp(x, y, (size_t)w)) return 0;
    }
    return 1;
}

rf_status rf_txn_merge_keys(const rf_rt_rel *old, int32_t nkey, const rf_rt_rel *keys, const rf_rt_rel *part,
                            rf_rt_rel *out)
{
    memset(out, 0, sizeof *out);
    int64_t cap = 16;
    while (cap < keys->nrows * 2) cap *= 2;
    uint64_t *hash = rf_calloc((size_t)cap, sizeof *hash);
    int64_t *row = rf_malloc((size_t)cap * sizeof *row);
    uint8_t *keep = rf_malloc((size_t)old->nrows + 1);
    rf_status st = hash && row && keep ? RF_OK : RF_ENOMEM;
    /* no key columns: the one key (0) reached or not */
    int all = !nkey && keys->nrows > 0;
    for (int64_t k = 0; !st && nkey && k < keys->nrows; k++) {
        uint64_t h = key_hash(keys, nkey, k);
        int64_t s = (int64_t)(h & (uint64_t)(cap - 1));
        while (hash[s]) s = (s + 1) & (cap - 1);
        hash[s] = h;
        row[s] = k;
    }
    int64_t kept = 0;
    for (int64_t i = 0; !st && i < old->nrows; i++) {
        int reached = all;
        if (nkey) {
            uint64_t h = key_hash(old, nkey, i);
            for (int64_t s = (int64_t)(h & (uint64_t)(cap - 1)); hash[s] && !reached; s = (s + 1) & (cap - 1))
                reached = hash[s] == h && key_equal(keys, row[s], old, i, nkey);
        }
        keep[i] = !reached;
        kept += !reached;
    }
    if (!st) st = rf_rt_rel_alloc(out, old->ncols, old->types, kept + part->nrows);
    for (int32_t c = 0; !st && c < old->ncols; c++) {
        int64_t w = rf_rt_type_width(old->types[c]);
        char *dst = out->cols[c];
        const char *src = old->cols[c];
        if (kept == old->nrows) {
            if (kept) memcpy(dst, src, (size_t)(kept * w));
            dst += kept * w;
        } else if (w == 8) {
            uint64_t *d8 = (uint64_t *)(void *)dst;
            const uint64_t *s8 = (const uint64_t *)(const void *)src;
            for (int64_t i = 0; i < old->nrows; i++)
                if (keep[i]) *d8++ = s8[i];
            dst = (char *)d8;
        } else
            for (int64_t i = 0; i < old->nrows; i++)
                if (keep[i]) {
                    memcpy(dst, src + i * w, (size_t)w);
                    dst += w;
                }
        if (part->nrows) memcpy(dst, part->cols[c], (size_t)(part->nrows * w));
    }
    free(hash);
    free(row);
    free(keep);
    return st;
}
