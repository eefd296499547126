/*
** db/test_db_narrow.c: unit tests of narrow columns (docs/DATABASE.md
** "Narrow columns"), ctest db_narrow.
**
** Owns: the block encoding's round trips (int64 extremes, negatives, every
** divisor, blocks that do not narrow, one-row blocks, dates, codes), a
** narrow database written in odd pieces and read back whole and by blocks,
** damaged narrow blocks and block records refused with the file named, and
** rows appended to narrow columns (a partial last block stored again copy
** on write; whole blocks in place) giving the bytes of writing them at once.
*/
#include "db_internal.h"
#include "rf_db.h"
#include "test_db_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>



/* ---- one block -------------------------------------------------------- */

/* v[0..n) of type t through plan, pack and decode: the same values back;
** the plan's width and exp returned. */
static void block_trip(rf_type t, const void *v, int64_t n, int *width, int *exp)
{
    int tw = rf_db_type_width(t);
    rf_db_block bl;
    memset(&bl, 0, sizeof bl);
    rf_db_narrow_plan(t, v, n, &bl);
    unsigned char *packed = malloc((size_t)n * 8 + 1), *back = malloc((size_t)n * 8 + 1);
    rf_db_narrow_pack(t, v, n, &bl, packed);
    CHECK(rf_db_narrow_decode(t, &bl, packed, n, back) == -1);
    CHECK(!memcmp(back, v, (size_t)(n * tw)));
    /* the block's min and max are the values' */
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = tw == 8 ? ((const int64_t *)v)[i]
                            : t == RF_TYPE_DATE ? ((const int32_t *)v)[i] : (int64_t)((const uint32_t *)v)[i];
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    CHECK(bl.min == mn && bl.max == mx);
    *width = bl.width;
    *exp = bl.exp;
    free(packed);
    free(back);
}

static void test_blocks(void)
{
    enum { N = 1000 };
    int64_t v[N];
    int32_t dt[N];
    uint32_t codes[N];
    int w, e;
    /* decimals of every divisor: multiples of 10^k around a negative base */
    for (int k = 0; k <= 6; k++) {
        int64_t p = (int64_t)rf_db_pow10(k);
        for (int i = 0; i < N; i++) v[i] = -5000000000LL + (int64_t)(i % 200) * p * 7 + (k == 0 ? 3 : 0);
        block_trip(RF_TYPE_DECIMAL, v, N, &w, &e);
        /* 199 * 7 = 1393 steps of 10^k: 2 bytes; divided by 10^k exactly (a
        ** base of -5e9 is a multiple of 10^6, so e is k, or more when 7 p is) */
        CHECK(w == 2 && e == k);
    }
    /* TPC-H's l_quantity 1-50 as a decimal: one byte, divided by 10^6 */
    for (int i = 0; i < N; i++) v[i] = (int64_t)(1 + i % 50) * 1000000;
    block_trip(RF_TYPE_DECIMAL, v, N, &w, &e);
    CHECK(w == 1 && e == 6);
    /* int64 extremes: no narrowing (stored as they are) */
    for (int i = 0; i < N; i++) v[i] = i % 2 ? INT64_MAX - i : INT64_MIN + i;
    block_trip(RF_TYPE_INT, v, N, &w, &e);
    CHECK(w == 8 && e == 0);
    /* a range of just under 2^32: 4 bytes; of 2^32: 8 (as it is) */
    for (int i = 0; i < N; i++) v[i] = INT64_MIN + (i == 7 ? INT64_C(0xffffffff) : i);
    block_trip(RF_TYPE_INT, v, N, &w, &e);
    CHECK(w == 4 && e == 0);
    v[7] = INT64_MIN + INT64_C(0x100000000);
    block_trip(RF_TYPE_INT, v, N, &w, &e);
    CHECK(w == 8);
    /* negatives near INT64_MAX's far end, a range of 255: one byte */
    for (int i = 0; i < N; i++) v[i] = -(int64_t)(i % 256) - 1;
    block_trip(RF_TYPE_INT, v, N, &w, &e);
    CHECK(w == 1 && e == 0);
    /* one row: one byte, whatever the value */
    v[0] = INT64_MIN;
    block_trip(RF_TYPE_INT, v, 1, &w, &e);
    CHECK(w == 1);
    v[0] = -123456789000000LL;
    block_trip(RF_TYPE_DECIMAL, v, 1, &w, &e);
    CHECK(w == 1);
    /* a decimal block holding INT64_MIN (not allowed) stays as it is */
    for (int i = 0; i < N; i++) v[i] = i;
    v[3] = INT64_MIN;
    block_trip(RF_TYPE_DECIMAL, v, N, &w, &e);
    CHECK(w == 8);
    /* dates: two bytes for 1992-1998; one for a week; out of range: as they are */
    for (int i = 0; i < N; i++) dt[i] = 8035 + (i * 37) % 2557;
    block_trip(RF_TYPE_DATE, dt, N, &w, &e);
    CHECK(w == 2 && e == 0);
    for (int i = 0; i < N; i++) dt[i] = RF_DATE_MIN + i % 7;
    block_trip(RF_TYPE_DATE, dt, N, &w, &e);
    CHECK(w == 1);
    dt[9] = RF_DATE_MAX + 1;
    block_trip(RF_TYPE_DATE, dt, N, &w, &e);
    CHECK(w == 4);
    /* codes: one byte below 256 distinct, as they are past 65,535 apart */
    for (int i = 0; i < N; i++) codes[i] = (uint32_t)(i % 25) + 4000000000u;
    block_trip(RF_TYPE_STRING, codes, N, &w, &e);
    CHECK(w == 1);
    codes[5] = 0;
    block_trip(RF_TYPE_STRING, codes, N, &w, &e);
    CHECK(w == 4);
    /* a stored value past the block's max is refused at its place */
    for (int i = 0; i < N; i++) v[i] = (int64_t)(i % 100) * 10000;
    rf_db_block bl;
    memset(&bl, 0, sizeof bl);
    rf_db_narrow_plan(RF_TYPE_DECIMAL, v, N, &bl);
    CHECK(bl.width == 1 && bl.exp == 4 && bl.max == 990000);
    unsigned char packed[N];
    int64_t back[N];
    rf_db_narrow_pack(RF_TYPE_DECIMAL, v, N, &bl, packed);
    packed[517] = 100;
    CHECK(rf_db_narrow_decode(RF_TYPE_DECIMAL, &bl, packed, N, back) == 517);
    packed[517] = 99;
    bl.exp = 5; /* a divisor that makes the values overflow the block's range */
    CHECK(rf_db_narrow_decode(RF_TYPE_DECIMAL, &bl, packed, N, back) >= 0);
    /* a range wider than the width holds (well formed: every stored value
    ** decodes within it): the check alone (the GPU's) and the widening
    ** (the CPU's) agree, for each width; the check once compared with the
    ** range cut to the width (1000 as a byte: 232) and refused 240 */
    static const uint64_t wider[3] = {1000, 70000, UINT64_C(5000000000)};
    for (int k = 0; k < 3; k++) {
        int width = k == 0 ? 1 : k == 1 ? 2 : 4;
        memset(&bl, 0, sizeof bl);
        bl.width = (uint8_t)width;
        bl.min = -7;
        bl.max = bl.min + (int64_t)wider[k];
        unsigned char stored[4 * 8];
        memset(stored, 0, sizeof stored);
        for (int i = 0; i < 8; i++) {
            uint32_t q = (width == 1 ? 240u : width == 2 ? 65530u : 0xfffffff0u) + (uint32_t)i;
            memcpy(stored + i * width, &q, (size_t)width);
        }
        int64_t wide[8];
        CHECK(rf_db_narrow_decode(RF_TYPE_INT, &bl, stored, 8, wide) == -1);
        CHECK(rf_db_narrow_check(&bl, stored, 8) == -1);
        CHECK(wide[0] == bl.min + (width == 1 ? 240 : width == 2 ? 65530 : (int64_t)0xfffffff0u));
    }
}

/* ---- a narrow database -------------------------------------------------- */

enum { NR = 5000, BR = 1024 }; /* four whole blocks and a partial one */
static int64_t k_int[NR], k_dec[NR];
static int32_t k_date[NR];
static double k_fl[NR];
static int64_t k_off[NR + 1];
static char k_bytes[NR * 4];
static int k_ncols = 5; /* 4: the table without its string column (appendable) */

static void rows_init(void)
{
    for (int i = 0; i < NR; i++) {
        k_int[i] = (int64_t)i * 3 - 7000;
        k_dec[i] = (int64_t)(i % 11) * 10000 + (i >= 3 * BR && i < 4 * BR && i % 2 ? INT64_C(1) << 40 : 0);
        k_date[i] = 9000 + (i * 13) % 2500;
        k_fl[i] = i * 0.25;
        k_off[i + 1] = k_off[i] + sprintf(k_bytes + k_off[i], "%c", 'a' + i % 20);
    }
}

/* Rows [r0, r1) appended to table tid (int, decimal, date, float, string). */
static void rows_append(rf_db_writer *w, int32_t tid, int64_t r0, int64_t r1, rf_diags *d)
{
    int64_t n = r1 - r0, *po = malloc((size_t)(n + 1) * sizeof *po);
    for (int64_t i = 0; i <= n; i++) po[i] = k_off[r0 + i] - k_off[r0];
    CHECK(rf_db_writer_append(w, tid, 0, n, k_int + r0, NULL, NULL, d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 1, n, k_dec + r0, NULL, NULL, d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 2, n, k_date + r0, NULL, NULL, d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 3, n, k_fl + r0, NULL, NULL, d) == RF_OK);
    if (k_ncols > 4) CHECK(rf_db_writer_append(w, tid, 4, n, NULL, po, k_bytes + k_off[r0], d) == RF_OK);
    free(po);
}

static const rf_type k_types[5] = {RF_TYPE_INT, RF_TYPE_DECIMAL, RF_TYPE_DATE, RF_TYPE_FLOAT, RF_TYPE_STRING};

/* A database of rows [0, n) at dir, appended in pieces of `piece` rows. */
static void db_write(const char *dir, int64_t n, int64_t piece, uint32_t br, rf_diags *d)
{
    rf_db_writer *w = NULL;
    int32_t tid = -1;
    CHECK(rf_db_writer_new(dir, "test", &w, d) == RF_OK);
    if (!w) return;
    rf_db_writer_block_rows(w, br);
    CHECK(rf_db_writer_table(w, "n.tbl", k_ncols, k_types, NULL, 0, NULL, &tid, d) == RF_OK);
    for (int64_t r = 0; r < n; r += piece) rows_append(w, tid, r, r + piece < n ? r + piece : n, d);
    CHECK(rf_db_writer_commit(w, d) == RF_OK);
    rf_db_writer_free(w);
}

/* Every column of the database at dir reads back as rows [0, n). */
/* Column c as stored, widened a block at a time, is the widened column. */
static void check_stored(const rf_db *db, const rf_db_table *t, int32_t c, const void *widened, rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    int w = rf_db_col_width(col->type, col->enc);
    rf_db_map m;
    CHECK(rf_db_map_column_stored(db, t, c, NULL, &m, d) == RF_OK);
    unsigned char *back = malloc((size_t)t->block_rows * 8);
    for (int64_t b = 0; back && m.addr && b < col->nblocks; b++) {
        int64_t r0 = b * (int64_t)t->block_rows, k = t->nrows - r0 < t->block_rows ? t->nrows - r0 : t->block_rows;
        const rf_db_block *bl = &col->blocks[b];
        CHECK(rf_db_narrow_decode(col->type, bl, (const unsigned char *)m.addr + bl->at, k, back) == -1);
        CHECK(!memcmp(back, (const unsigned char *)widened + r0 * w, (size_t)(k * w)));
    }
    free(back);
    rf_db_unmap(&m);
}

static void db_check(const char *dir, int64_t n, rf_diags *d)
{
    rf_db *db = NULL;
    CHECK(rf_db_open(dir, &db, d) == RF_OK);
    const rf_db_table *t = db ? rf_db_find_table(db, "n.tbl") : NULL;
    CHECK(t && t->nrows == n);
    if (!t) {
        rf_db_close(db);
        return;
    }
    const void *want[4] = {k_int, k_dec, k_date, k_fl};
    for (int c = 0; c < k_ncols; c++) {
        rf_db_map m;
        const void *data = NULL;
        CHECK(rf_db_map_column(db, t, c, &m, &data, d) == RF_OK);
        if (c < 4) CHECK(data && !memcmp(data, want[c], (size_t)n * (size_t)rf_db_type_width(k_types[c])));
        if (c == 4 && data)
            for (int64_t i = 0; i < n; i++) CHECK(((const uint32_t *)data)[i] == (uint32_t)(i % 20));
        if (t->cols[c].narrow && data) check_stored(db, t, c, data, d);
        rf_db_unmap(&m);
    }
    rf_db_close(db);
}


/* The manifest and column files of a and b are the same, byte for byte. */
static void same_files(const char *a, const char *b)
{
    const char *files[] = {RF_DB_MANIFEST,      "t00000.c00000.col", "t00000.c00001.col", "t00000.c00002.col",
                           "t00000.c00003.col", "t00000.c00004.col", "t00000.c00004.dict"};
    for (int f = 0; f < 7; f++) {
        if (k_ncols == 4 && f >= 5) continue;
        long na = 0, nb = 0;
        char *x = slurp(a, files[f], &na), *y = slurp(b, files[f], &nb);
        int same = x && y && na == nb && !memcmp(x, y, (size_t)na);
        CHECK(same);
        if (!same) fprintf(stderr, "  %s of %s and %s differ\n", files[f], a, b);
        free(x);
        free(y);
    }
}


/* The manifest of db, with its block b of column c changed by fn, written
** over dir's; then opened (expect_open: RF_OK or RF_EUSER naming the
** manifest) and, when it opens, column c mapped (expect_map). */
static void damaged_record(const char *dir, int c, int64_t b, void (*fn)(rf_db_block *), rf_status expect_open,
                           rf_status expect_map, const char *text)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_db *db = NULL;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK);
    if (!db) return;
    rf_db_block saved = db->tables[0].cols[c].blocks[b];
    fn(&db->tables[0].cols[c].blocks[b]);
    rf_buf m;
    rf_buf_init(&m);
    rf_db_encode(db, &m);
    rf_db *bad = NULL;
    rf_status st = rf_db_open_bytes(dir, (const uint8_t *)m.data, (int64_t)m.len, &bad, &d);
    CHECK(st == expect_open);
    if (st) CHECK(has_error_naming(&d, RF_DB_MANIFEST, text));
    if (!st && bad) {
        rf_db_map mp;
        const void *data;
        CHECK(rf_db_map_column(bad, &bad->tables[0], c, &mp, &data, &d) == expect_map);
        if (expect_map) CHECK(has_error_naming(&d, bad->tables[0].cols[c].file, text));
        else rf_db_unmap(&mp);
        /* read as stored (nothing widened): the same verdict */
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_db_map_column_stored(bad, &bad->tables[0], c, NULL, &mp, &d) == expect_map);
        if (expect_map) CHECK(has_error_naming(&d, bad->tables[0].cols[c].file, text));
        else rf_db_unmap(&mp);
    }
    db->tables[0].cols[c].blocks[b] = saved;
    rf_db_close(bad);
    rf_db_close(db);
    rf_buf_free(&m);
    rf_diags_free(&d);
}

static void width3(rf_db_block *bl) { bl->width = 3; }
static void width8(rf_db_block *bl) { bl->width = 8; } /* wider than a date's 4 bytes */
static void exp19(rf_db_block *bl) { bl->exp = 19; }
static void exp_over(rf_db_block *bl) { bl->exp = (uint8_t)(bl->exp + 1); }
static void date_past(rf_db_block *bl) { bl->max = RF_DATE_MAX + 1; }
static void min_above(rf_db_block *bl) { bl->min = bl->max + 1; }
static void code_past(rf_db_block *bl) { bl->max = 20; } /* the dictionary has 20 entries */

static void test_database(const char *base)
{
    rf_diags d;
    rf_diags_init(&d);
    rows_init();
    char *dir = rf_sprintf("%s/narrow", base), *one = rf_sprintf("%s/onerow", base);
    /* in pieces that start inside blocks */
    db_write(dir, NR, 777, BR, &d);
    db_check(dir, NR, &d);
    /* blocks of one row */
    db_write(one, 300, 7, 1, &d);
    db_check(one, 300, &d);
    rf_db *db = NULL;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK);
    const rf_db_table *t = db ? &db->tables[0] : NULL;
    if (t) {
        /* int (range 3 x 1023: 2 bytes), decimal (/10^4, 1 byte; block 4 as it
        ** is, 2^40 apart), date (2 bytes), string codes (1 byte): narrow;
        ** floats never */
        CHECK(t->cols[0].narrow && t->cols[0].blocks[0].width == 2 && t->cols[0].size < (uint64_t)NR * 8);
        CHECK(t->cols[1].narrow && t->cols[1].blocks[0].width == 1 && t->cols[1].blocks[0].exp == 4 &&
              t->cols[1].blocks[3].width == 8);
        CHECK(t->cols[2].narrow && t->cols[2].blocks[3].width == 2 && t->cols[3].narrow == 0);
        CHECK(t->cols[4].narrow && t->cols[4].blocks[1].width == 1 && t->cols[4].size == 4 * BR + (NR - 4 * BR) * 4);
        /* the partial last block as it is (an append in place continues it) */
        for (int c = 0; c < 5; c++) CHECK(t->cols[c].blocks[4].width == rf_db_type_width(k_types[c]));
        /* a reader of some blocks: those decoded, the others not read */
        uint8_t keep[5] = {0, 1, 0, 0, 1};
        rf_db_map m;
        const void *data = NULL;
        CHECK(rf_db_map_column_blocks(db, t, 1, keep, &m, &data, &d) == RF_OK);
        CHECK(data && !memcmp((const int64_t *)data + BR, k_dec + BR, BR * 8) &&
              !memcmp((const int64_t *)data + 4 * BR, k_dec + 4 * BR, (NR - 4 * BR) * 8));
        rf_db_unmap(&m);
        /* a flipped byte in block 3 of the date column: refused naming the
        ** file and block 3; a reader of other blocks is not stopped */
        char *col = rf_sprintf("%s/%s", dir, t->cols[2].file);
        flip_byte(col, (long)t->cols[2].blocks[2].at + 11);
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_db_map_column(db, t, 2, &m, &data, &d) == RF_EUSER &&
              has_error_naming(&d, t->cols[2].file, "checksum mismatch in block 3,"));
        CHECK(rf_db_map_column_blocks(db, t, 2, keep, &m, &data, &d) == RF_OK);
        rf_db_unmap(&m);
        CHECK(rf_db_map_column_stored(db, t, 2, NULL, &m, &d) == RF_EUSER &&
              has_error_naming(&d, t->cols[2].file, "checksum mismatch in block 3,"));
        CHECK(rf_db_map_column_stored(db, t, 2, keep, &m, &d) == RF_OK);
        rf_db_unmap(&m);
        flip_byte(col, (long)t->cols[2].blocks[2].at + 11);
        /* a truncated narrow column: its last block short */
        CHECK(truncate(col, (off_t)t->cols[2].size - 1) == 0);
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_db_map_column(db, t, 2, &m, &data, &d) == RF_EUSER && has_error_naming(&d, t->cols[2].file, "truncated"));
        free(col);
        rf_db_close(db);
        db_write(dir, NR, 777, BR, &d);
        /* damaged block records: refused naming the manifest, or the column
        ** file where the values are stored past the block's range */
        damaged_record(dir, 0, 1, width3, RF_EUSER, RF_OK, "width");
        damaged_record(dir, 2, 1, width8, RF_EUSER, RF_OK, "width");
        damaged_record(dir, 1, 0, exp19, RF_EUSER, RF_OK, "divisor");
        damaged_record(dir, 2, 0, date_past, RF_EUSER, RF_OK, "the type does not allow");
        damaged_record(dir, 0, 2, min_above, RF_EUSER, RF_OK, "minimum");
        damaged_record(dir, 4, 0, code_past, RF_EUSER, RF_OK, "the type does not allow");
        damaged_record(dir, 1, 0, exp_over, RF_OK, RF_EUSER, "past block 1's maximum");
        damaged_record(dir, 0, 3, exp_over, RF_OK, RF_EUSER, "past block 4's maximum");
        damaged_record(dir, 0, 4, exp_over, RF_EUSER, RF_OK, "a divisor for values stored as they are");
    }
    /* written wide (rf_db_writer_narrow(w, 0)): no narrow column, the same rows */
    char *wide = rf_sprintf("%s/wide", base);
    rf_db_writer *w = NULL;
    int32_t tid = -1;
    CHECK(rf_db_writer_new(wide, "test", &w, &d) == RF_OK);
    rf_db_writer_narrow(w, 0);
    rf_db_writer_block_rows(w, BR);
    CHECK(rf_db_writer_table(w, "n.tbl", 5, k_types, NULL, 0, NULL, &tid, &d) == RF_OK);
    rows_append(w, tid, 0, NR, &d);
    CHECK(rf_db_writer_commit(w, &d) == RF_OK);
    rf_db_writer_free(w);
    db_check(wide, NR, &d);
    CHECK(rf_db_open(wide, &db, &d) == RF_OK);
    for (int c = 0; db && c < 5; c++) CHECK(!db->tables[0].cols[c].narrow && db->tables[0].cols[c].size == (uint64_t)NR * (uint64_t)rf_db_type_width(k_types[c]));
    rf_db_close(db);
    free(wide);
    free(dir);
    free(one);
    rf_diags_free(&d);
}

/* Rows [r0, r1) appended to the database at dir: in place when in_place
** (then the table must be appendable in place), else copy on write into
** out; *went: whether the table went that way. */
static void db_grow(const char *dir, const char *out, int64_t r0, int64_t r1, int in_place, int *went, rf_diags *d)
{
    rf_db *db = NULL;
    rf_db_writer *w = NULL;
    int32_t tid = -1;
    *went = 0;
    CHECK(rf_db_open(dir, &db, d) == RF_OK);
    if (!db) return;
    CHECK(db->tables[0].nrows == r0);
    if (in_place && !rf_db_table_appendable_in_place(db, &db->tables[0])) {
        rf_db_close(db);
        return;
    }
    CHECK((in_place ? rf_db_writer_in_place(db, "test", &w, d) : rf_db_writer_new(out, "test", &w, d)) == RF_OK);
    CHECK(w && rf_db_writer_table_from(w, db, &db->tables[0], 1, &tid, d) == RF_OK);
    if (tid >= 0) {
        *went = 1;
        rows_append(w, tid, r0, r1, d);
        CHECK(rf_db_writer_commit(w, d) == RF_OK);
    }
    rf_db_writer_free(w);
    rf_db_close(db);
}

/* Appends to narrow columns. Copy on write, a partial last block is stored
** again with the new rows: the bytes of writing every row at once. In place,
** a partial last block (stored as it is, raw) is continued as it is, and
** the blocks after it are narrow: the same rows. (A table with a
** dictionary string column takes no appends.) */
static void test_append(const char *base)
{
    rf_diags d;
    rf_diags_init(&d);
    k_ncols = 4;
    char *ref = rf_sprintf("%s/aref", base), *a = rf_sprintf("%s/a", base), *b = rf_sprintf("%s/b", base),
         *c = rf_sprintf("%s/c", base), *c2 = rf_sprintf("%s/c2", base);
    db_write(ref, NR, NR, BR, &d);
    db_write(a, 1500, 500, BR, &d); /* the last block begun */
    int went = 0;
    db_grow(a, b, 1500, 2048, 0, &went, &d);
    CHECK(went); /* copy on write, the last block stored again */
    db_check(b, 2048, &d);
    db_grow(b, NULL, 2048, 3000, 1, &went, &d);
    CHECK(went); /* in place: block 3 starts anew */
    db_check(b, 3000, &d);
    db_grow(b, c, 3000, NR, 0, &went, &d);
    CHECK(went);
    db_check(c, NR, &d);
    same_files(ref, c);
    /* in place from inside a block: block 2 completed as it is, then narrow ones */
    db_grow(a, NULL, 1500, 4500, 1, &went, &d);
    CHECK(went);
    db_check(a, 4500, &d);
    db_grow(a, c2, 4500, NR, 0, &went, &d);
    CHECK(went);
    db_check(c2, NR, &d);
    rf_db *db = NULL;
    CHECK(rf_db_open(c2, &db, &d) == RF_OK);
    if (db) {
        const rf_db_column *col = &db->tables[0].cols[0];
        CHECK(col->narrow && col->blocks[1].width == 8 && col->blocks[2].width == 2 && col->blocks[3].width == 2 &&
              col->blocks[4].width == 8);
    }
    rf_db_close(db);
    /* copy on write over the same folder from inside a block: the old
    ** files taken over (linked into the new folder, appended to), the
    ** partial block continued as it is: the bytes in place gives (a) */
    char *e = rf_sprintf("%s/e", base), *ecol = rf_sprintf("%s/e/t00000.c00000.col", base);
    db_write(e, 1500, 500, BR, &d);
    struct stat sb0, sb1;
    CHECK(stat(ecol, &sb0) == 0);
    db_grow(e, e, 1500, 4500, 0, &went, &d);
    CHECK(went);
    db_check(e, 4500, &d);
    CHECK(stat(ecol, &sb1) == 0 && sb1.st_ino == sb0.st_ino && sb1.st_nlink == 1);
    same_files(a, e);
    free(e);
    free(ecol);
    CHECK(d.count == 0);
    k_ncols = 5;
    free(ref);
    free(a);
    free(b);
    free(c);
    free(c2);
    rf_diags_free(&d);
}

int main(void)
{
    test_blocks();
    char tmpl[] = "/tmp/rf_test_db_narrow.XXXXXX";
    char *base = mkdtemp(tmpl);
    if (!base) return 1;
    test_database(base);
    test_append(base);
    char *cmd = rf_sprintf("rm -rf '%s'", base);
    if (cmd && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    free(cmd);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("db_narrow: all tests passed\n");
    return 0;
}
