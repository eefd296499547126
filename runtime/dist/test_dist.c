/*
** runtime/dist/test_dist.c: unit tests of the rank-independent parts of
** runtime/dist: a row's rank does not depend on the dictionary's codes (two
** ranks that interned strings in other orders agree), and rows packed for
** each rank unpack to the same values on a rank with another dictionary,
** in order; a malformed part is refused. With a shared prefix of codes
** (rf_rt_dict_set_shared): rows hash alike on ranks whose other codes
** differ, parts of shared codes travel as codes, a part with a rank's own
** string as bytes, and a code past the receiver's prefix is refused. A
** big relation packs to the bytes the wire format (dist_pack.c's header)
** says, written here row by row, on 1 and several threads alike, and its
** rows' ranks are the same on any number of threads.
*/
#include "rf_rt_dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #c);                                              \
            fails++;                                                                                                   \
        }                                                                                                              \
    } while (0)

enum { N = 200 };
static const rf_type types[4] = {RF_TYPE_INT, RF_TYPE_STRING, RF_TYPE_DATE, RF_TYPE_FLOAT};

/* Rows i: (i % 37, "s<i % 23>", i, i / 4.0 with -0 for 0), strings interned
** into d after `noise` other strings (so that codes differ between dicts). */
static void make(rf_rt_rel *r, rf_rt_dict *d, int noise)
{
    for (int i = 0; i < noise; i++) {
        char b[16];
        uint32_t c;
        snprintf(b, sizeof b, "noise%d", i);
        rf_rt_dict_intern(d, b, (int64_t)strlen(b), &c);
    }
    CHECK(!rf_rt_rel_alloc(r, 4, types, N));
    for (int i = 0; i < N; i++) {
        char b[16];
        snprintf(b, sizeof b, "s%d", i % 23);
        ((int64_t *)r->cols[0])[i] = i % 37;
        rf_rt_dict_intern(d, b, (int64_t)strlen(b), &((uint32_t *)r->cols[1])[i]);
        ((int32_t *)r->cols[2])[i] = i;
        ((double *)r->cols[3])[i] = i ? i / 4.0 : -0.0;
    }
}

/* Two ranks' dictionaries: the same prefix ("p0".."p9"), then other own
** strings; a relation of one string column per rank. */
static void shared_codes(void)
{
    rf_rt_dict *da = rf_rt_dict_new(), *db = rf_rt_dict_new();
    static const rf_type st[1] = {RF_TYPE_STRING};
    uint32_t c;
    char b[16];
    for (int i = 0; i < 10; i++) {
        snprintf(b, sizeof b, "p%d", i);
        rf_rt_dict_intern(da, b, (int64_t)strlen(b), &c);
        rf_rt_dict_intern(db, b, (int64_t)strlen(b), &c);
    }
    CHECK(rf_rt_dict_prefix_hash(da, 10) == rf_rt_dict_prefix_hash(db, 10));
    CHECK(rf_rt_dict_prefix_hash(da, 10) != rf_rt_dict_prefix_hash(da, 9));
    rf_rt_dict_intern(da, "own-a", 5, &c);
    rf_rt_dict_intern(db, "own-b", 5, &c);
    rf_rt_dict_intern(db, "own-c", 5, &c);
    rf_rt_dict_intern(db, "x", 1, &c);
    rf_rt_dict_intern(da, "x", 1, &c); /* a rank's own string on both, at other codes */
    CHECK(rf_rt_dict_prefix_hash(da, 12) != rf_rt_dict_prefix_hash(db, 12));
    rf_rt_dict_set_shared(da, 10);
    rf_rt_dict_set_shared(db, 10);
    /* rows: p0..p9 and then "x", on both ranks */
    rf_rt_rel ra, rb;
    CHECK(!rf_rt_rel_alloc(&ra, 1, st, 11));
    CHECK(!rf_rt_rel_alloc(&rb, 1, st, 11));
    for (int i = 0; i < 11; i++) {
        if (i < 10) snprintf(b, sizeof b, "p%d", i);
        else snprintf(b, sizeof b, "x");
        rf_rt_dict_intern(da, b, (int64_t)strlen(b), &((uint32_t *)ra.cols[0])[i]);
        rf_rt_dict_intern(db, b, (int64_t)strlen(b), &((uint32_t *)rb.cols[0])[i]);
    }
    CHECK(((uint32_t *)ra.cols[0])[10] != ((uint32_t *)rb.cols[0])[10]);
    int32_t col = 0, ka[11], kb[11];
    rf_rt_dist_row_ranks(&ra, da, &col, 1, 3, 1, ka);
    rf_rt_dist_row_ranks(&rb, db, &col, 1, 3, 1, kb);
    for (int i = 0; i < 11; i++) CHECK(ka[i] == kb[i]);
    /* the first ten rows (shared codes) as codes; all rows: bytes */
    int64_t size[3], displ[3], coded = 0, uncoded = 0;
    char *buf = NULL;
    ra.nrows = 10;
    CHECK(!rf_rt_dist_pack(&ra, da, NULL, 3, 1, &buf, size, displ, &coded, &uncoded));
    CHECK(coded == 1 && uncoded == 0);
    CHECK(size[0] == 8 + 4 + 10 * 4); /* count, tag, codes: no bytes */
    rf_rt_rel out;
    CHECK(!rf_rt_dist_unpack(buf, size, 1, 1, st, db, 1, &out, NULL));
    for (int i = 0; i < 10 && out.nrows == 10; i++) CHECK(((uint32_t *)out.cols[0])[i] == ((uint32_t *)ra.cols[0])[i]);
    rf_rt_rel_free(&out);
    /* a receiver sharing fewer codes refuses them */
    rf_rt_dict_set_shared(db, 5);
    CHECK(rf_rt_dist_unpack(buf, size, 1, 1, st, db, 1, &out, NULL) == RF_EINTERNAL);
    rf_rt_dict_set_shared(db, 10);
    free(buf);
    ra.nrows = 11;
    coded = uncoded = 0;
    CHECK(!rf_rt_dist_pack(&ra, da, NULL, 3, 1, &buf, size, displ, &coded, &uncoded));
    CHECK(coded == 0 && uncoded == 1);
    CHECK(!rf_rt_dist_unpack(buf, size, 1, 1, st, db, 1, &out, NULL));
    CHECK(out.nrows == 11 && ((uint32_t *)out.cols[0])[10] == ((uint32_t *)rb.cols[0])[10]); /* "x" as db codes it */
    CHECK(out.nrows == 11 && ((uint32_t *)out.cols[0])[3] == ((uint32_t *)rb.cols[0])[3]);
    rf_rt_rel_free(&out);
    free(buf);
    rf_rt_rel_free(&ra);
    rf_rt_rel_free(&rb);
    rf_rt_dict_free(da);
    rf_rt_dict_free(db);
}

/* The part of r's rows whose dest is part (every row when dest is NULL),
** written row by row from the wire format; its size into *n. */
static char *reference_part(const rf_rt_rel *r, const rf_rt_dict *d, const int32_t *dest, int part, int64_t *n)
{
    int64_t rows = 0, shared = rf_rt_dict_shared(d), cap = 8;
    for (int64_t i = 0; i < r->nrows; i++) rows += !dest || dest[i] == part;
    for (int32_t c = 0; c < r->ncols; c++) {
        cap += r->types[c] == RF_TYPE_STRING ? 4 + rows * 4 : rows * rf_rt_type_width(r->types[c]);
        for (int64_t i = 0; i < r->nrows && r->types[c] == RF_TYPE_STRING; i++) {
            int64_t len = 0;
            rf_rt_dict_str(d, ((const uint32_t *)r->cols[c])[i], &len);
            cap += len;
        }
    }
    char *b = rf_malloc((size_t)cap), *p = b;
    memcpy(p, &rows, 8);
    p += 8;
    for (int32_t c = 0; c < r->ncols; c++) {
        int w = rf_rt_type_width(r->types[c]);
        const uint32_t *codes = r->cols[c];
        uint32_t tag = shared > 0;
        if (r->types[c] == RF_TYPE_STRING) {
            for (int64_t i = 0; i < r->nrows; i++)
                if ((!dest || dest[i] == part) && (int64_t)codes[i] >= shared) tag = 0;
            memcpy(p, &tag, 4);
            p += 4;
        }
        if (r->types[c] != RF_TYPE_STRING || tag) {
            for (int64_t i = 0; i < r->nrows; i++)
                if (!dest || dest[i] == part) memcpy(p, (const char *)r->cols[c] + i * w, (size_t)w), p += w;
            continue;
        }
        for (int64_t i = 0; i < r->nrows; i++)
            if (!dest || dest[i] == part) {
                int64_t len = 0;
                rf_rt_dict_str(d, codes[i], &len);
                uint32_t l = (uint32_t)len;
                memcpy(p, &l, 4), p += 4;
            }
        for (int64_t i = 0; i < r->nrows; i++)
            if (!dest || dest[i] == part) {
                int64_t len = 0;
                const char *s = rf_rt_dict_str(d, codes[i], &len);
                memcpy(p, s, (size_t)len), p += len;
            }
    }
    *n = p - b;
    return b;
}

/* Enough rows for several threads' chunks: packed alike on 1, 3 and 8
** threads, as the reference writes them, with rows that stay out (dest
** -1); a string column of shared codes in one part and own strings in the
** others, another of shared codes only. */
static void big_parts(void)
{
    enum { BIG = 300000, NR = 3 };
    static const rf_type bt[5] = {RF_TYPE_INT, RF_TYPE_STRING, RF_TYPE_DATE, RF_TYPE_STRING, RF_TYPE_BOOL};
    rf_rt_dict *d = rf_rt_dict_new();
    char b[32];
    uint32_t c;
    for (int i = 0; i < 50; i++) {
        snprintf(b, sizeof b, "shared%d", i);
        rf_rt_dict_intern(d, b, (int64_t)strlen(b), &c);
    }
    rf_rt_dict_set_shared(d, 50);
    rf_rt_rel r;
    CHECK(!rf_rt_rel_alloc(&r, 5, bt, BIG));
    int32_t *dest = rf_malloc(BIG * sizeof *dest), *r1 = rf_malloc(BIG * sizeof *r1), *r8 = rf_malloc(BIG * sizeof *r8);
    int32_t hcols[2] = {1, 0};
    for (int64_t i = 0; i < BIG; i++) {
        ((int64_t *)r.cols[0])[i] = i * 7919 % 1000003;
        ((int32_t *)r.cols[2])[i] = (int32_t)(i % 4000);
        ((uint8_t *)r.cols[4])[i] = (uint8_t)(i & 1);
        dest[i] = i % 11 == 5 ? -1 : (int32_t)(i * 2654435761u % NR);
        if (dest[i] == 1 || i % 97) {
            ((uint32_t *)r.cols[1])[i] = (uint32_t)(i % 50);
        } else {
            snprintf(b, sizeof b, "own%lld", (long long)(i % 1000));
            rf_rt_dict_intern(d, b, (int64_t)strlen(b), &((uint32_t *)r.cols[1])[i]);
        }
        ((uint32_t *)r.cols[3])[i] = (uint32_t)(i % 13);
    }
    /* a rank's own string in part 0 and 2 only */
    for (int64_t i = 0; i < BIG; i++) CHECK(dest[i] != 1 || ((uint32_t *)r.cols[1])[i] < 50);
    rf_rt_dist_row_ranks(&r, d, hcols, 2, NR, 1, r1);
    rf_rt_dist_row_ranks(&r, d, hcols, 2, NR, 8, r8);
    CHECK(!memcmp(r1, r8, BIG * sizeof *r1));
    for (int t = 0; t < 3; t++) {
        static const int threads[3] = {1, 3, 8};
        for (int bc = 0; bc < 2; bc++) {
            const int32_t *dd = bc ? NULL : dest;
            int64_t size[NR], displ[NR], coded = 0, uncoded = 0;
            char *buf = NULL;
            CHECK(!rf_rt_dist_pack(&r, d, dd, NR, threads[t], &buf, size, displ, &coded, &uncoded));
            CHECK(bc ? coded == 1 && uncoded == 1 : coded == 4 && uncoded == 2);
            for (int part = 0; part < (bc ? 1 : NR) && buf; part++) {
                int64_t n = 0;
                char *want = reference_part(&r, d, dd, part, &n);
                CHECK(size[part] == n && !memcmp(buf + displ[part], want, (size_t)n));
                free(want);
            }
            free(buf);
        }
    }
    free(dest);
    free(r1);
    free(r8);
    rf_rt_rel_free(&r);
    rf_rt_dict_free(d);
}

int main(void)
{
    rf_rt_dict *d1 = rf_rt_dict_new(), *d2 = rf_rt_dict_new(), *d3 = rf_rt_dict_new();
    rf_rt_rel a, b;
    make(&a, d1, 0);
    make(&b, d2, 50);
    CHECK(((uint32_t *)a.cols[1])[0] != ((uint32_t *)b.cols[1])[0]); /* the codes do differ */
    int32_t cols[2] = {1, 0}, ra[N], rb[N];
    rf_rt_dist_row_ranks(&a, d1, cols, 2, 3, 1, ra);
    rf_rt_dist_row_ranks(&b, d2, cols, 2, 3, 1, rb);
    int used[3] = {0, 0, 0};
    for (int i = 0; i < N; i++) {
        CHECK(ra[i] == rb[i]);
        CHECK(ra[i] >= 0 && ra[i] < 3);
        used[ra[i]]++;
    }
    CHECK(used[0] && used[1] && used[2]);
    /* -0.0 and 0.0 meet on one rank */
    int32_t fcol = 3, r0[N];
    ((double *)b.cols[3])[0] = 0.0;
    rf_rt_dist_row_ranks(&a, d1, &fcol, 1, 3, 1, ra);
    rf_rt_dist_row_ranks(&b, d2, &fcol, 1, 3, 1, r0);
    CHECK(ra[0] == r0[0]);
    /* so do NaNs of other bits (every NaN is one value) */
    uint64_t nan_bits[2] = {UINT64_C(0xfff8000000000000), UINT64_C(0x7ff8000000000001)};
    double kept_a = ((double *)a.cols[3])[0], kept_b = ((double *)b.cols[3])[0];
    memcpy(&((double *)a.cols[3])[0], &nan_bits[0], 8);
    memcpy(&((double *)b.cols[3])[0], &nan_bits[1], 8);
    for (int nr = 2; nr <= 9; nr++) {
        rf_rt_dist_row_ranks(&a, d1, &fcol, 1, nr, 1, ra);
        rf_rt_dist_row_ranks(&b, d2, &fcol, 1, nr, 1, r0);
        CHECK(ra[0] == r0[0]);
    }
    ((double *)a.cols[3])[0] = kept_a;
    ((double *)b.cols[3])[0] = kept_b;

    /* pack per rank, unpack on a third dictionary: the same values, in order */
    int64_t size[3], displ[3];
    char *buf = NULL;
    rf_rt_dist_row_ranks(&a, d1, cols, 2, 3, 1, ra);
    CHECK(!rf_rt_dist_pack(&a, d1, ra, 3, 1, &buf, size, displ, NULL, NULL));
    for (int part = 0; part < 3; part++) {
        rf_rt_rel out;
        CHECK(!rf_rt_dist_unpack(buf + displ[part], &size[part], 1, 4, types, d3, 1, &out, NULL));
        int64_t k = 0;
        for (int i = 0; i < N; i++) {
            if (ra[i] != part) continue;
            CHECK(k < out.nrows);
            if (k >= out.nrows) break;
            int64_t l1, l2;
            const char *s1 = rf_rt_dict_str(d1, ((uint32_t *)a.cols[1])[i], &l1);
            const char *s2 = rf_rt_dict_str(d3, ((uint32_t *)out.cols[1])[k], &l2);
            CHECK(((int64_t *)out.cols[0])[k] == ((int64_t *)a.cols[0])[i]);
            CHECK(l1 == l2 && !memcmp(s1, s2, (size_t)l1));
            CHECK(((int32_t *)out.cols[2])[k] == i);
            k++;
        }
        CHECK(k == out.nrows);
        rf_rt_rel_free(&out);
    }
    /* all parts at once: every row, by part */
    {
        rf_rt_rel all;
        char *packed = rf_malloc((size_t)(size[0] + size[1] + size[2]));
        int64_t at = 0;
        for (int part = 0; part < 3; part++) memcpy(packed + at, buf + displ[part], (size_t)size[part]), at += size[part];
        CHECK(!rf_rt_dist_unpack(packed, size, 3, 4, types, d3, 1, &all, NULL));
        CHECK(all.nrows == N);
        rf_rt_rel_free(&all);
        /* damaged: a part one byte short, a row count past the end */
        int64_t shrt[1] = {size[0] - 1};
        CHECK(rf_rt_dist_unpack(packed, shrt, 1, 4, types, d3, 1, &all, NULL) == RF_EINTERNAL);
        int64_t huge = INT64_MAX / 2;
        memcpy(packed, &huge, 8);
        CHECK(rf_rt_dist_unpack(packed, size, 1, 4, types, d3, 1, &all, NULL) == RF_EINTERNAL);
        free(packed);
    }
    free(buf);
    /* a broadcast: one part for all, every row */
    CHECK(!rf_rt_dist_pack(&a, d1, NULL, 3, 1, &buf, size, displ, NULL, NULL));
    CHECK(displ[0] == 0 && displ[1] == 0 && displ[2] == 0 && size[1] == size[0]);
    {
        rf_rt_rel all;
        CHECK(!rf_rt_dist_unpack(buf, size, 1, 4, types, d3, 1, &all, NULL));
        CHECK(all.nrows == N);
        rf_rt_rel_free(&all);
    }
    free(buf);
    shared_codes();
    big_parts();
    rf_rt_rel_free(&a);
    rf_rt_rel_free(&b);
    rf_rt_dict_free(d1);
    rf_rt_dict_free(d2);
    rf_rt_dict_free(d3);
    if (fails) return 1;
    printf("dist: ok\n");
    return 0;
}
