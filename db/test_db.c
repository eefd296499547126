/*
** db/test_db.c: unit tests of the database format: CRC-32C, a database
** written and read back, the same bytes written by one thread or several,
** damaged files refused with the file named, and rows appended in place.
*/
#include "db_internal.h"
#include "rf_db.h"
#include "test_db_util.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint32_t rf_db_crc32c_soft(uint32_t crc, const void *p, int64_t n);


static void test_crc(void)
{
    CHECK(rf_db_crc32c(0, "123456789", 9) == 0xE3069283u);
    CHECK(rf_db_crc32c_soft(0, "123456789", 9) == 0xE3069283u);
    CHECK(rf_db_crc32c(0, "", 0) == 0);
    /* the three-lane version (from 12 KiB) and its continuation */
    enum { BIG = 100000 };
    unsigned char *big = malloc(BIG);
    for (int i = 0; big && i < BIG; i++) big[i] = (unsigned char)(i * 131 + (i >> 9));
    for (int n = 12280; big && n < BIG; n += 9973) {
        CHECK(rf_db_crc32c(0, big, n) == rf_db_crc32c_soft(0, big, n));
        CHECK(rf_db_crc32c(rf_db_crc32c(0, big, 77), big + 77, n - 77) == rf_db_crc32c_soft(0, big, n));
    }
    free(big);
    unsigned char buf[1000];
    for (int i = 0; i < 1000; i++) buf[i] = (unsigned char)(i * 7 + 3);
    for (int n = 0; n < 1000; n += 37) {
        CHECK(rf_db_crc32c(0, buf, n) == rf_db_crc32c_soft(0, buf, n));
        /* continuing a CRC equals one pass */
        CHECK(rf_db_crc32c(rf_db_crc32c(0, buf, n / 3), buf + n / 3, n - n / 3) == rf_db_crc32c(0, buf, n));
        CHECK(rf_db_crc32c_combine(rf_db_crc32c(0, buf, n / 3), rf_db_crc32c(0, buf + n / 3, n - n / 3),
                                   n - n / 3) == rf_db_crc32c(0, buf, n));
        CHECK(rf_db_crc32c_combine(rf_db_crc32c(0, buf, n), 0, 0) == rf_db_crc32c(0, buf, n));
    }
}



/* The CRC-32C of a whole file (-1 as all ones when it cannot be read). */
static uint32_t file_crc(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0xffffffffu;
    unsigned char buf[65536];
    uint32_t crc = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) crc = rf_db_crc32c(crc, buf, (int64_t)n);
    fclose(f);
    return crc;
}

static void test_roundtrip(const char *base)
{
    char *dir = rf_sprintf("%s/db", base);
    rf_diags d;
    rf_diags_init(&d);
    rf_db_writer *w = NULL;
    CHECK(rf_db_writer_new(dir, "test", &w, &d) == RF_OK);
    rf_type ty[3] = {RF_TYPE_INT, RF_TYPE_STRING, RF_TYPE_DATE};
    const char *names[3] = {"k", "s", NULL};
    int32_t key[1] = {0}, tid = -1;
    CHECK(rf_db_writer_table(w, "t.tbl", 3, ty, names, 1, key, &tid, &d) == RF_OK);
    enum { N = 70000 }; /* two blocks */
    int64_t *k = malloc(N * sizeof *k);
    int32_t *dt = malloc(N * sizeof *dt);
    int64_t *off = malloc((N + 1) * sizeof *off);
    char *bytes = malloc(N * 2);
    off[0] = 0;
    for (int i = 0; i < N; i++) {
        k[i] = i * 3 - 5;
        dt[i] = i % 1000;
        bytes[2 * i] = (char)('a' + i % 3);
        bytes[2 * i + 1] = 'x';
        off[i + 1] = 2 * (i + 1);
    }
    /* in two appends, as a streaming writer does */
    CHECK(rf_db_writer_append(w, tid, 0, 1000, k, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 0, N - 1000, k + 1000, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 1, N, NULL, off, bytes, &d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 2, N, dt, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_commit(w, &d) == RF_OK);
    rf_db_writer_free(w);
    CHECK(rf_db_is_database(dir));

    rf_db *db = NULL;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK);
    if (!db) return;
    const rf_db_table *t = rf_db_find_table(db, "t.tbl");
    CHECK(t && t->nrows == N && t->ncols == 3 && t->nkey == 1);
    CHECK(t && t->cols[0].nblocks == 2 && t->cols[0].blocks[0].min == -5 &&
          t->cols[0].blocks[1].max == (int64_t)(N - 1) * 3 - 5);
    CHECK(t && t->cols[1].dict_count == 3 && !strcmp(t->cols[1].name, "s") && !strcmp(t->cols[2].name, ""));
    for (int c = 0; t && c < 3; c++) {
        char *p = rf_sprintf("%s/%s", dir, t->cols[c].file);
        CHECK(p && file_crc(p) == t->cols[c].crc); /* combined from the blocks', two appends in block 0 */
        free(p);
    }
    rf_db_map m, dm;
    const void *data;
    const uint64_t *doff;
    const char *db_bytes;
    CHECK(rf_db_map_column(db, t, 0, &m, &data, &d) == RF_OK);
    CHECK(data && !memcmp(data, k, N * sizeof *k));
    rf_db_unmap(&m);
    CHECK(rf_db_map_column(db, t, 1, &m, &data, &d) == RF_OK);
    CHECK(rf_db_map_dict(db, t, 1, &dm, &doff, &db_bytes, &d) == RF_OK);
    if (data && doff) {
        const uint32_t *codes = data;
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= doff[codes[i] + 1] - doff[codes[i]] == 2 && !memcmp(db_bytes + doff[codes[i]], bytes + 2 * i, 2);
        CHECK(ok);
        CHECK(codes[0] == 0 && codes[1] == 1 && codes[2] == 2); /* first appearance */
    }
    rf_db_unmap(&m);
    rf_db_unmap(&dm);

    /* damage: a flipped byte in a column, a dictionary, the manifest; a truncated column */
    char *col = rf_sprintf("%s/%s", dir, t->cols[2].file);
    char *dict = rf_sprintf("%s/%s", dir, t->cols[1].dict_file);
    char *man = rf_sprintf("%s/%s", dir, RF_DB_MANIFEST);
    flip_byte(col, 4000);
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(rf_db_map_column(db, t, 2, &m, &data, &d) == RF_EUSER && has_error_naming(&d, t->cols[2].file, NULL));
    flip_byte(col, 4000);
    CHECK(rf_db_map_column(db, t, 2, &m, &data, &d) == RF_OK);
    rf_db_unmap(&m);
    CHECK(truncate(col, 1000) == 0);
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(rf_db_map_column(db, t, 2, &m, &data, &d) == RF_EUSER && has_error_naming(&d, t->cols[2].file, NULL));
    flip_byte(dict, 9);
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(rf_db_map_dict(db, t, 1, &dm, &doff, &db_bytes, &d) == RF_EUSER &&
          has_error_naming(&d, t->cols[1].dict_file, NULL));
    rf_db_close(db);
    struct stat sb;
    CHECK(stat(man, &sb) == 0);
    for (long at = 0; at < (long)sb.st_size; at += 7) {
        flip_byte(man, at);
        rf_diags_free(&d);
        rf_diags_init(&d);
        db = NULL;
        CHECK(rf_db_open(dir, &db, &d) == RF_EUSER && has_error_naming(&d, RF_DB_MANIFEST, NULL));
        rf_db_close(db);
        flip_byte(man, at);
    }
    CHECK(truncate(man, sb.st_size - 1) == 0);
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(rf_db_open(dir, &db, &d) == RF_EUSER && has_error_naming(&d, RF_DB_MANIFEST, NULL));

    /* a second writer replaces the database; a failed one leaves nothing */
    CHECK(rf_db_writer_new(dir, "test", &w, &d) == RF_OK);
    CHECK(rf_db_writer_table(w, "u", 1, ty, NULL, 0, NULL, &tid, &d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 0, 3, k, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_commit(w, &d) == RF_OK);
    rf_db_writer_free(w);
    db = NULL;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK && db && db->ntables == 1 && db->tables[0].nrows == 3);
    rf_db_close(db);
    char *dir2 = rf_sprintf("%s/never", base);
    CHECK(rf_db_writer_new(dir2, "test", &w, &d) == RF_OK);
    CHECK(rf_db_writer_table(w, "u", 1, ty, NULL, 0, NULL, &tid, &d) == RF_OK);
    rf_db_writer_free(w); /* not committed */
    CHECK(stat(dir2, &sb) != 0);
    free(dir2);
    free(col);
    free(dict);
    free(man);
    free(k);
    free(dt);
    free(off);
    free(bytes);
    free(dir);
    rf_diags_free(&d);
}

/* A column of more than 32 MiB is checked in pieces by several threads: the
** same verdicts as one pass (a good file passes, a flipped byte in the last
** piece is caught, a bad value is reported at its row); the first damaged
** block in row order is the one reported. */
static void test_big_column(const char *base)
{
    char *dir = rf_sprintf("%s/big", base);
    rf_diags d;
    rf_diags_init(&d);
    rf_db_writer *w = NULL;
    rf_type ty[1] = {RF_TYPE_DATE};
    int32_t tid = -1;
    enum { N = 9000000, BAD = 8765432 }; /* 36 MB: two pieces or more */
    int32_t *dt = malloc(N * sizeof *dt);
    for (int i = 0; i < N; i++) dt[i] = i % 20000;
    dt[BAD] = RF_DATE_MAX + 1;
    CHECK(rf_db_writer_new(dir, "test", &w, &d) == RF_OK);
    rf_db_writer_narrow(w, 0); /* the damage below is at the wide layout's offsets */
    CHECK(rf_db_writer_table(w, "b.tbl", 1, ty, NULL, 0, NULL, &tid, &d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 0, N, dt, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_commit(w, &d) == RF_OK);
    rf_db_writer_free(w);
    rf_db *db = NULL;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK);
    const rf_db_table *t = db ? rf_db_find_table(db, "b.tbl") : NULL;
    CHECK(t != NULL);
    if (t) {
        rf_db_map m;
        const void *data;
        rf_diags_free(&d);
        rf_diags_init(&d);
        /* the bad value, named by its row (1-based) */
        CHECK(rf_db_map_column(db, t, 0, &m, &data, &d) == RF_EUSER && d.count == 1 &&
              strstr(d.items[0].msg, "row 8765433 ") != NULL);
        char *col = rf_sprintf("%s/%s", dir, t->cols[0].file);
        flip_byte(col, (long)N * 4 - 3); /* the last block: after the bad value's */
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_db_map_column(db, t, 0, &m, &data, &d) == RF_EUSER && d.count == 1 &&
              strstr(d.items[0].msg, "row 8765433 ") != NULL);
        flip_byte(col, 8000000L * 4 + 1); /* block 123, in the last piece, before the bad value */
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_db_map_column(db, t, 0, &m, &data, &d) == RF_EUSER && d.count == 1 &&
              strstr(d.items[0].msg, "checksum mismatch in block 123,") != NULL);
        free(col);
    }
    rf_db_close(db);
    free(dt);
    free(dir);
    rf_diags_free(&d);
}

/* fn(arg, t) for t in [0, n) on threads of their own (as rf_rt_parallel). */
typedef struct par_task {
    rf_db_task_fn fn;
    void *arg;
    int t;
} par_task;

static void *par_main(void *p)
{
    par_task *k = p;
    k->fn(k->arg, k->t);
    return NULL;
}

static void run_parallel(int n, rf_db_task_fn fn, void *arg)
{
    pthread_t th[64];
    par_task ks[64];
    int ok[64];
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++) {
        ks[i] = (par_task){fn, arg, i};
        ok[i] = pthread_create(&th[i], NULL, par_main, &ks[i]) == 0;
        if (!ok[i]) fn(arg, i);
    }
    for (int i = 0; i < n; i++)
        if (ok[i]) pthread_join(th[i], NULL);
}


/* One table (a dictionary string column, a plain one, an int, a date) of
** 300,000 rows in blocks of 1,000 written twice, in pieces of different
** sizes: by one thread (rf_db_writer_append, encodings on one thread), and
** by several (encodings by 5 threads, rf_db_writer_append_par by 7, pieces
** that start inside a block): every file and the manifest are the same,
** byte for byte, and the database reads back. */
static void test_parallel_write(const char *base)
{
    enum { N = 300000 };
    int64_t *ks = malloc(N * sizeof *ks), *off = malloc((N + 1) * sizeof *off), *poff = malloc((N + 1) * sizeof *poff);
    int32_t *dt = malloc(N * sizeof *dt);
    char *bytes = malloc((size_t)N * 12), *pbytes = malloc((size_t)N * 40);
    uint32_t *codes = malloc(N * sizeof *codes);
    off[0] = poff[0] = 0;
    for (int i = 0; i < N; i++) {
        ks[i] = (int64_t)i * 7919 % 1000003;
        dt[i] = i % 3650;
        off[i + 1] = off[i] + sprintf(bytes + off[i], "s%d", (int)(i * 31 % 5003));
        poff[i + 1] = poff[i] + sprintf(pbytes + poff[i], "a comment of row %d", i);
    }
    rf_type ty[4] = {RF_TYPE_STRING, RF_TYPE_STRING, RF_TYPE_INT, RF_TYPE_DATE};
    const int64_t cuts[2][4] = {{0, 12345, 200000, N}, {0, 70001, 70002, N}};
    char *dirs[2];
    for (int v = 0; v < 2; v++) {
        rf_diags d;
        rf_diags_init(&d);
        dirs[v] = rf_sprintf("%s/par%d", base, v);
        rf_db_writer *w = NULL;
        int32_t tid = -1;
        CHECK(rf_db_writer_new(dirs[v], "test", &w, &d) == RF_OK);
        rf_db_writer_block_rows(w, 1024);
        CHECK(rf_db_writer_table(w, "p.tbl", 4, ty, NULL, 0, NULL, &tid, &d) == RF_OK);
        CHECK(rf_db_writer_plain(w, tid, 1, &d) == RF_OK);
        for (int k = 0; k < 3; k++) {
            int64_t r0 = cuts[v][k], n = cuts[v][k + 1] - r0;
            int th = v ? 5 : 1;
            CHECK(rf_db_writer_encode(w, tid, 0, n, off + r0, bytes, codes, th, v ? run_parallel : NULL, &d) == RF_OK);
            if (v) {
                CHECK(rf_db_writer_append_par(w, tid, 0, n, codes, NULL, NULL, 7, run_parallel, &d) == RF_OK);
                CHECK(rf_db_writer_append_par(w, tid, 1, n, NULL, poff + r0, pbytes, 7, run_parallel, &d) == RF_OK);
                CHECK(rf_db_writer_append_par(w, tid, 2, n, ks + r0, NULL, NULL, 7, run_parallel, &d) == RF_OK);
                CHECK(rf_db_writer_append_par(w, tid, 3, n, dt + r0, NULL, NULL, 3, run_parallel, &d) == RF_OK);
            } else {
                CHECK(rf_db_writer_append(w, tid, 0, n, codes, NULL, NULL, &d) == RF_OK);
                CHECK(rf_db_writer_append(w, tid, 1, n, NULL, poff + r0, pbytes, &d) == RF_OK);
                CHECK(rf_db_writer_append(w, tid, 2, n, ks + r0, NULL, NULL, &d) == RF_OK);
                CHECK(rf_db_writer_append(w, tid, 3, n, dt + r0, NULL, NULL, &d) == RF_OK);
            }
        }
        CHECK(rf_db_writer_commit(w, &d) == RF_OK);
        rf_db_writer_free(w);
        CHECK(d.count == 0);
        rf_diags_free(&d);
    }
    rf_diags d;
    rf_diags_init(&d);
    rf_db *db = NULL;
    CHECK(rf_db_open(dirs[1], &db, &d) == RF_OK);
    const rf_db_table *t = db ? rf_db_find_table(db, "p.tbl") : NULL;
    CHECK(t && t->nrows == N && t->cols[0].dict_count == 5003);
    for (int32_t c = 0; t && c < 4; c++) {
        const char *names[4] = {t->cols[c].file, t->cols[c].dict_file, t->cols[c].str_file, RF_DB_MANIFEST};
        for (int k = 0; k < 4; k++) {
            if (!names[k]) continue;
            long n0, n1;
            char *a = slurp(dirs[0], names[k], &n0), *b = slurp(dirs[1], names[k], &n1);
            CHECK(a && b && n0 == n1 && !memcmp(a, b, (size_t)n0));
            free(a);
            free(b);
        }
        rf_db_map m;
        const void *data;
        if (t->cols[c].enc == RF_DB_ENC_PLAIN) {
            rf_db_map sm;
            const uint64_t *o;
            const char *sb;
            CHECK(rf_db_map_strings(db, t, c, NULL, &m, &sm, &o, &sb, &d) == RF_OK);
            if (!d.count) CHECK(!memcmp(sb + o[N - 1], "a comment of row 299999", 23));
            rf_db_unmap(&sm);
        } else {
            CHECK(rf_db_map_column(db, t, c, &m, &data, &d) == RF_OK);
            if (c == 2 && !d.count) CHECK(((const int64_t *)data)[N - 1] == ks[N - 1]);
        }
        rf_db_unmap(&m);
    }
    CHECK(d.count == 0);
    rf_db_close(db);
    rf_diags_free(&d);
    for (int v = 0; v < 2; v++) free(dirs[v]);
    free(ks);
    free(off);
    free(poff);
    free(dt);
    free(bytes);
    free(pbytes);
    free(codes);
}

/* A dictionary's codes over batches, against first appearance counted
** here: batches of strings all known already (whose codes the lookup pass
** writes alone), batches with new strings among known ones, by one thread
** and by five, small and large (5,000 rows: several threads). */
static void test_dict_batches(void)
{
    enum { N = 5000, NB = 6 };
    /* batch b's row i: "v" (i * 3 + b) % m[b]: batches 1, 2 and 4 add nothing */
    const int m[NB] = {7, 7, 7, 9, 9, 40};
    const int rows[NB] = {N, N, 2, N, 3, N};
    char *bytes = malloc((size_t)N * 8);
    int64_t *off = malloc((N + 1) * sizeof *off);
    uint32_t *codes = malloc(N * sizeof *codes);
    for (int th = 1; th <= 5; th += 4) {
        rf_db_dict *dc = rf_db_dict_new();
        int seen[64], nseen = 0; /* value -> code, by first appearance */
        for (int k = 0; k < 64; k++) seen[k] = -1;
        for (int b = 0; b < NB; b++) {
            off[0] = 0;
            for (int i = 0; i < rows[b]; i++) off[i + 1] = off[i] + sprintf(bytes + off[i], "v%d", (i * 3 + b) % m[b]);
            CHECK(rf_db_dict_encode(dc, rows[b], off, bytes, codes, th, th > 1 ? run_parallel : NULL) == 0);
            for (int i = 0; i < rows[b]; i++) {
                int v = (i * 3 + b) % m[b];
                if (seen[v] < 0) seen[v] = nseen++;
                if (codes[i] != (uint32_t)seen[v]) {
                    CHECK(codes[i] == (uint32_t)seen[v]);
                    break;
                }
            }
            CHECK(rf_db_dict_count(dc) == nseen);
        }
        rf_db_dict_free(dc);
    }
    free(bytes);
    free(off);
    free(codes);
}

/* Short strings found through the lookup pass's memo, against first
** appearance counted here: every length from 0 to 30 (each side of the
** memo's 8- and 24-byte limits), the same string after different bytes (the
** word that ends a short string holds bytes before it), strings at the
** start of the bytes, and more distinct strings than the memo has entries
** (its slots shared); several batches, by one thread and by five. */
static void test_dict_short(void)
{
    enum { V = 1500, N = 12000, NB = 4, L = 31 };
    char(*vocab)[L + 1] = malloc(sizeof *vocab * V);
    int vlen[V];
    for (int k = 0; k < V; k++) {
        /* length k % L; the rest of k spelt in its bytes (a short one repeats) */
        vlen[k] = k % L;
        for (int j = 0, x = k / L; j < vlen[k]; j++, x = x / 7 + j) vocab[k][j] = (char)('a' + x % 7 + (j & 1) * 7);
    }
    char *bytes = malloc((size_t)N * (L + 2));
    int64_t *off = malloc((N + 1) * sizeof *off);
    uint32_t *codes = malloc(N * sizeof *codes);
    int *seen = malloc(V * sizeof *seen); /* a first appearance's vocabulary index, by code */
    for (int th = 1; th <= 5; th += 4) {
        rf_db_dict *dc = rf_db_dict_new();
        int nseen = 0;
        for (int b = 0; b < NB; b++) {
            int rows = b == 2 ? 3 : N;
            off[0] = 0;
            for (int i = 0; i < rows; i++) {
                int k = (int)(((int64_t)i * 7919 + b * 13) % (b == 0 ? 40 : V));
                memcpy(bytes + off[i], vocab[k], (size_t)vlen[k]);
                off[i + 1] = off[i] + vlen[k];
            }
            CHECK(rf_db_dict_encode(dc, rows, off, bytes, codes, th, th > 1 ? run_parallel : NULL) == 0);
            for (int i = 0; i < rows; i++) {
                int k = (int)(((int64_t)i * 7919 + b * 13) % (b == 0 ? 40 : V)), c = 0;
                for (; c < nseen; c++)
                    if (vlen[seen[c]] == vlen[k] && !memcmp(vocab[seen[c]], vocab[k], (size_t)vlen[k])) break;
                if (c == nseen) seen[nseen++] = k;
                if (codes[i] != (uint32_t)c) {
                    CHECK(codes[i] == (uint32_t)c);
                    break;
                }
            }
            CHECK(rf_db_dict_count(dc) == nseen);
        }
        rf_db_dict_free(dc);
    }
    free(vocab);
    free(bytes);
    free(off);
    free(codes);
    free(seen);
}

/* Values a type does not allow are found at their row, past the first
** 64-value steps of the check and in the rest after them. */
static void test_bad_values(const char *base)
{
    char *dir = rf_sprintf("%s/vals", base);
    rf_diags d;
    rf_diags_init(&d);
    rf_db_writer *w = NULL;
    rf_type ty[4] = {RF_TYPE_DECIMAL, RF_TYPE_FLOAT, RF_TYPE_BOOL, RF_TYPE_DATE};
    int32_t tid = -1;
    enum { N = 1000 };
    int64_t dec[N];
    double fl[N];
    uint8_t bo[N];
    int32_t dt[N];
    for (int i = 0; i < N; i++) {
        dec[i] = INT64_MIN + 1 + i; /* the least allowed, and near it */
        fl[i] = i * 0.5;
        bo[i] = (uint8_t)(i & 1);
        dt[i] = RF_DATE_MIN + i;
    }
    dec[700] = INT64_MIN;
    fl[998] = INFINITY; /* inf, -inf and NaN are floats, not damage */
    fl[3] = -INFINITY;
    fl[500] = NAN;
    bo[130] = 2;
    dt[5] = RF_DATE_MIN - 1;
    CHECK(rf_db_writer_new(dir, "test", &w, &d) == RF_OK);
    CHECK(rf_db_writer_table(w, "v.tbl", 4, ty, NULL, 0, NULL, &tid, &d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 0, N, dec, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 1, N, fl, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 2, N, bo, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 3, N, dt, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_commit(w, &d) == RF_OK);
    rf_db_writer_free(w);
    rf_db *db = NULL;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK);
    const rf_db_table *t = db ? rf_db_find_table(db, "v.tbl") : NULL;
    const char *want[4] = {"row 701 ", NULL, "row 131 ", "row 6 "};
    for (int c = 0; t && c < 4; c++) {
        rf_db_map m;
        const void *data;
        rf_diags_free(&d);
        rf_diags_init(&d);
        if (!want[c]) {
            CHECK(rf_db_map_column(db, t, c, &m, &data, &d) == RF_OK && d.count == 0 && !memcmp(data, fl, sizeof fl));
            /* the block's range: -inf to inf, the NaN taking no part */
            double lo, hi;
            memcpy(&lo, &t->cols[c].blocks[0].min, 8);
            memcpy(&hi, &t->cols[c].blocks[0].max, 8);
            CHECK(isinf(lo) && lo < 0 && isinf(hi) && hi > 0);
            rf_db_unmap(&m);
            continue;
        }
        CHECK(rf_db_map_column(db, t, c, &m, &data, &d) == RF_EUSER && d.count == 1 &&
              strstr(d.items[0].msg, want[c]) != NULL);
    }
    rf_db_close(db);
    free(dir);
    rf_diags_free(&d);
}

/* A float column holding -0.0 (as a build before the rule "a float zero has
** no sign" wrote them) reads as 0.0, in every block read or in the blocks
** kept; the file itself keeps its bytes (the mapping is private). */
static void test_float_zeros(const char *base)
{
    char *dir = rf_sprintf("%s/zeros", base);
    rf_diags d;
    rf_diags_init(&d);
    rf_db_writer *w = NULL;
    rf_type ty[1] = {RF_TYPE_FLOAT};
    int32_t tid = -1;
    enum { N = 3000 };
    static double fl[N];
    for (int i = 0; i < N; i++) fl[i] = i % 3 ? (double)i : -0.0;
    CHECK(rf_db_writer_new(dir, "test", &w, &d) == RF_OK);
    rf_db_writer_block_rows(w, 1024);
    CHECK(rf_db_writer_table(w, "z.tbl", 1, ty, NULL, 0, NULL, &tid, &d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 0, N, fl, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_commit(w, &d) == RF_OK);
    rf_db_writer_free(w);
    rf_db *db = NULL;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK);
    const rf_db_table *t = db ? rf_db_find_table(db, "z.tbl") : NULL;
    CHECK(t && t->cols[0].nblocks == 3);
    for (int pass = 0; t && pass < 2; pass++) {
        const uint8_t keep[3] = {0, 1, 0}; /* pass 1: only the second block's rows are read */
        rf_db_map m;
        const void *data = NULL;
        CHECK(rf_db_map_column_blocks(db, t, 0, pass ? keep : NULL, &m, &data, &d) == RF_OK && data);
        const double *v = data;
        int bad = 0;
        for (int i = pass ? 1024 : 0; data && i < (pass ? 2048 : N); i++)
            bad += i % 3 ? v[i] != (double)i : (v[i] != 0 || signbit(v[i]));
        CHECK(bad == 0);
        rf_db_unmap(&m);
    }
    /* the file still holds -0.0 where it did */
    char *path = t ? rf_sprintf("%s/%s", dir, t->cols[0].file) : NULL;
    FILE *f = path ? fopen(path, "rb") : NULL;
    double first = 1;
    CHECK(f && fread(&first, 8, 1, f) == 1 && first == 0 && signbit(first));
    if (f) fclose(f);
    free(path);
    rf_db_close(db);
    free(dir);
    rf_diags_free(&d);
}

/* Plain strings (no dictionary): written in pieces that cross blocks, read
** back row for row; per-block checksums: a damaged block is refused naming
** the file and the block, and a reader that checks only other blocks does
** not see it; damaged offsets and strings are refused. */
static void test_plain(const char *base)
{
    char *dir = rf_sprintf("%s/plain", base);
    rf_diags d;
    rf_diags_init(&d);
    rf_db_writer *w = NULL;
    rf_type ty[2] = {RF_TYPE_STRING, RF_TYPE_INT};
    int32_t tid = -1;
    enum { N = 200000, BR = 65536 };
    int64_t *off = malloc((N + 1) * sizeof *off), *iv = malloc(N * sizeof *iv);
    char *bytes = malloc((size_t)N * 12 + 1);
    off[0] = 0;
    for (int i = 0; i < N; i++) {
        /* every 50th row empty; some rows two-byte characters */
        int len = i % 50 ? sprintf(bytes + off[i], i % 5 ? "s%d" : "\xc3\xa9%d", i) : 0;
        off[i + 1] = off[i] + len;
        iv[i] = i;
    }
    CHECK(rf_db_strings_mostly_distinct(N, off, bytes) == 1);
    CHECK(rf_db_writer_new(dir, "test", &w, &d) == RF_OK);
    CHECK(rf_db_writer_table(w, "p.tbl", 2, ty, NULL, 0, NULL, &tid, &d) == RF_OK);
    CHECK(rf_db_writer_plain(w, tid, 0, &d) == RF_OK);
    int64_t cuts[4] = {0, 1000, 100000, N};
    for (int k = 0; k < 3; k++) {
        /* each piece's offsets start at its first string, as the text loader gives them */
        int64_t n = cuts[k + 1] - cuts[k];
        int64_t *po = malloc((size_t)(n + 1) * sizeof *po);
        for (int64_t i = 0; i <= n; i++) po[i] = off[cuts[k] + i] - off[cuts[k]];
        CHECK(rf_db_writer_append(w, tid, 0, n, NULL, po, bytes + off[cuts[k]], &d) == RF_OK);
        free(po);
    }
    CHECK(rf_db_writer_append(w, tid, 1, N, iv, NULL, NULL, &d) == RF_OK);
    CHECK(rf_db_writer_commit(w, &d) == RF_OK);
    rf_db_writer_free(w);
    rf_db *db = NULL;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK);
    const rf_db_table *t = db ? rf_db_find_table(db, "p.tbl") : NULL;
    CHECK(t && t->cols[0].enc == RF_DB_ENC_PLAIN && t->cols[0].str_file && !t->cols[0].dict_file &&
          t->cols[0].nblocks == 4 && t->cols[0].str_size == (uint64_t)off[N] && t->cols[1].enc == RF_DB_ENC_VALUES);
    if (t) {
        rf_db_map m, sm;
        const uint64_t *so;
        const char *sb;
        CHECK(rf_db_map_strings(db, t, 0, NULL, &m, &sm, &so, &sb, &d) == RF_OK);
        int ok = so != NULL;
        for (int64_t i = 0; ok && i < N; i++) {
            uint64_t end = (i + 1) % BR && i + 1 < N ? so[i + 1] : (uint64_t)t->cols[0].blocks[i / BR].max;
            ok = end - so[i] == (uint64_t)(off[i + 1] - off[i]) && !memcmp(sb + so[i], bytes + off[i], end - so[i]);
        }
        CHECK(ok);
        rf_db_unmap(&m);
        rf_db_unmap(&sm);
        /* a string column without a dictionary has none to map */
        const uint64_t *doff;
        const char *db_bytes;
        CHECK(rf_db_map_dict(db, t, 0, &m, &doff, &db_bytes, &d) == RF_EINTERNAL);

        char *col = rf_sprintf("%s/%s", dir, t->cols[1].file);
        char *ocol = rf_sprintf("%s/%s", dir, t->cols[0].file);
        char *str = rf_sprintf("%s/%s", dir, t->cols[0].str_file);
        /* the manifest's whole-file CRC-32Cs (combined from the blocks') */
        CHECK(file_crc(col) == t->cols[1].crc && file_crc(ocol) == t->cols[0].crc && file_crc(str) == t->cols[0].str_crc);
        const void *data;
        /* a flipped byte in block 3 of a column: refused naming block 3; a
        ** reader of blocks 1, 2 and 4 only does not read it */
        flip_byte(col, (long)t->cols[1].blocks[2].at + 5); /* (narrow: block 3 starts there) */
        uint8_t keep[4] = {1, 1, 0, 1};
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_db_map_column(db, t, 1, &m, &data, &d) == RF_EUSER && d.count == 1 &&
              strstr(d.items[0].msg, "checksum mismatch in block 3,") && has_error_naming(&d, t->cols[1].file, NULL));
        CHECK(rf_db_map_column_blocks(db, t, 1, keep, &m, &data, &d) == RF_OK);
        rf_db_unmap(&m);
        flip_byte(col, (long)t->cols[1].blocks[2].at + 5); /* (narrow: block 3 starts there) */
        /* the strings file: a flipped byte in block 2, refused naming that file */
        flip_byte(str, (long)t->cols[0].blocks[1].min + 3);
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_db_map_strings(db, t, 0, NULL, &m, &sm, &so, &sb, &d) == RF_EUSER && d.count == 1 &&
              strstr(d.items[0].msg, "block 2,") && has_error_naming(&d, t->cols[0].str_file, NULL));
        uint8_t keep2[4] = {1, 0, 1, 1};
        CHECK(rf_db_map_strings(db, t, 0, keep2, &m, &sm, &so, &sb, &d) == RF_OK);
        rf_db_unmap(&m);
        rf_db_unmap(&sm);
        flip_byte(str, (long)t->cols[0].blocks[1].min + 3);
        /* the offsets file: refused naming it */
        flip_byte(ocol, 8L * 70000 + 2);
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_db_map_strings(db, t, 0, NULL, &m, &sm, &so, &sb, &d) == RF_EUSER && d.count == 1 &&
              strstr(d.items[0].msg, "block 2,") && has_error_naming(&d, t->cols[0].file, NULL));
        flip_byte(ocol, 8L * 70000 + 2);
        CHECK(rf_db_map_strings(db, t, 0, NULL, &m, &sm, &so, &sb, &d) == RF_OK);
        rf_db_unmap(&m);
        rf_db_unmap(&sm);
        /* truncated strings file */
        struct stat st;
        CHECK(stat(str, &st) == 0 && truncate(str, st.st_size - 1) == 0);
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_db_map_strings(db, t, 0, NULL, &m, &sm, &so, &sb, &d) == RF_EUSER &&
              has_error_naming(&d, t->cols[0].str_file, "truncated"));
        free(col);
        free(ocol);
        free(str);
    }
    rf_db_close(db);
    /* few distinct strings: a dictionary pays */
    for (int i = 0; i < N; i++) off[i + 1] = off[i] + sprintf(bytes + off[i], "v%d", i % 100);
    CHECK(rf_db_strings_mostly_distinct(N, off, bytes) == 0);
    CHECK(rf_db_strings_mostly_distinct(100, off, bytes) == 0); /* too few rows to tell */
    free(off);
    free(iv);
    free(bytes);
    free(dir);
    rf_diags_free(&d);
}

/* ---- appending in place ---------------------------------------------- */

enum { IP_N = 150000 };
static int64_t ip_iv[IP_N], ip_off[IP_N + 1];
static char ip_bytes[IP_N * 8];

/* Rows [r0, r1) of table t.tbl (an int column, a plain string column) as
** writer w's table tid takes them (string offsets from the piece's start). */
static void ip_append(rf_db_writer *w, int32_t tid, int64_t r0, int64_t r1, rf_diags *d)
{
    int64_t n = r1 - r0, *po = malloc((size_t)(n + 1) * sizeof *po);
    for (int64_t i = 0; i <= n; i++) po[i] = ip_off[r0 + i] - ip_off[r0];
    CHECK(rf_db_writer_append(w, tid, 0, n, ip_iv + r0, NULL, NULL, d) == RF_OK);
    CHECK(rf_db_writer_append(w, tid, 1, n, NULL, po, ip_bytes + ip_off[r0], d) == RF_OK);
    free(po);
}

/* A database of t.tbl's rows [0, n) and a table u.tbl of a dictionary
** string column. */
static void ip_write(const char *dir, int64_t n, rf_diags *d)
{
    rf_db_writer *w = NULL;
    rf_type ty[2] = {RF_TYPE_INT, RF_TYPE_STRING}, uty[1] = {RF_TYPE_STRING};
    int32_t tid = -1, uid = -1;
    CHECK(rf_db_writer_new(dir, "test", &w, d) == RF_OK);
    rf_db_writer_narrow(w, 0); /* wide: a partial last block appended in place (test_narrow_append: narrow) */
    CHECK(rf_db_writer_table(w, "t.tbl", 2, ty, NULL, 0, NULL, &tid, d) == RF_OK);
    CHECK(rf_db_writer_plain(w, tid, 1, d) == RF_OK);
    ip_append(w, tid, 0, n, d);
    CHECK(rf_db_writer_table(w, "u.tbl", 1, uty, NULL, 0, NULL, &uid, d) == RF_OK);
    int64_t uoff[3] = {0, 1, 3};
    CHECK(rf_db_writer_append(w, uid, 0, 2, NULL, uoff, "abc", d) == RF_OK);
    CHECK(rf_db_writer_commit(w, d) == RF_OK);
    rf_db_writer_free(w);
}

/* In place: rows [r0, r1) appended to t.tbl of the database at dir (u.tbl
** kept); commit or not. *tid_out: the table's number (-1: not in place). */
static void ip_grow(const char *dir, int64_t r0, int64_t r1, int commit, int32_t *tid_out, rf_diags *d)
{
    rf_db *db = NULL;
    rf_db_writer *w = NULL;
    int32_t tid = -1, uid = -1;
    CHECK(rf_db_open(dir, &db, d) == RF_OK);
    if (!db) return;
    CHECK(db->tables[0].nrows == r0);
    CHECK(rf_db_writer_in_place(db, "test", &w, d) == RF_OK);
    CHECK(rf_db_writer_table_from(w, db, &db->tables[0], 1, &tid, d) == RF_OK);
    *tid_out = tid;
    if (tid >= 0) {
        ip_append(w, tid, r0, r1, d);
        CHECK(rf_db_writer_table_from(w, db, &db->tables[1], 0, &uid, d) == RF_OK && uid == 1);
        CHECK(!commit || rf_db_writer_commit(w, d) == RF_OK);
        CHECK(!commit || rf_db_writer_in_place_bytes(w) == (r1 - r0) * 16 + ip_off[r1] - ip_off[r0]);
    }
    rf_db_writer_free(w);
    rf_db_close(db);
}

static ino_t inode_of(const char *dir, const char *name, off_t *size)
{
    char *p = rf_sprintf("%s/%s", dir, name);
    struct stat sb;
    int ok = p && stat(p, &sb) == 0;
    free(p);
    *size = ok ? sb.st_size : -1;
    return ok ? sb.st_ino : 0;
}

/* Rows appended in place (rf_db_writer_in_place) give the manifest and files
** that writing every row at once gives, byte for byte, in the same files;
** an append stopped before its commit leaves the old state readable, its
** tail cut off by the next; a shared file or a dictionary is not appended
** to in place. */
static void test_in_place(const char *base)
{
    rf_diags d;
    rf_diags_init(&d);
    for (int i = 0; i < IP_N; i++) {
        ip_iv[i] = (int64_t)i * 7 - 1000;
        ip_off[i + 1] = ip_off[i] + sprintf(ip_bytes + ip_off[i], "s%d", i % 9000);
    }
    char *ref = rf_sprintf("%s/ipref", base), *dir = rf_sprintf("%s/ip", base);
    ip_write(ref, IP_N, &d);
    ip_write(dir, 70000, &d); /* a last block begun */
    off_t sz0, sz1;
    ino_t ino = inode_of(dir, "t00000.c00000.col", &sz0);
    int32_t tid = -1;
    /* stopped before its commit: the old state, a tail past it */
    ip_grow(dir, 70000, 100000, 0, &tid, &d);
    CHECK(tid == 0);
    for (int f = 0; f < 2; f++) { /* what a killed one may have written */
        char *p = rf_sprintf("%s/%s", dir, f ? "t00000.c00001.str" : "t00000.c00000.col");
        FILE *fp = p ? fopen(p, "ab") : NULL;
        CHECK(fp && fwrite("tail past the manifest", 1, 22, fp) == 22);
        if (fp) fclose(fp);
        free(p);
    }
    inode_of(dir, "t00000.c00000.col", &sz1);
    CHECK(sz0 == 70000 * 8 && sz1 == sz0 + 22);
    rf_db *db = NULL;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK);
    if (db) {
        rf_db_map m, sm;
        const void *data;
        const uint64_t *so;
        const char *sb;
        CHECK(db->tables[0].nrows == 70000 && rf_db_map_column(db, &db->tables[0], 0, &m, &data, &d) == RF_OK);
        rf_db_unmap(&m);
        CHECK(rf_db_map_strings(db, &db->tables[0], 1, NULL, &m, &sm, &so, &sb, &d) == RF_OK);
        rf_db_unmap(&m);
        rf_db_unmap(&sm);
        CHECK(rf_db_table_appendable_in_place(db, &db->tables[0]) == 1);
        CHECK(rf_db_table_appendable_in_place(db, &db->tables[1]) == 0); /* a dictionary */
    }
    rf_db_close(db);
    /* then committed in two appends: the tail cut off, the reference's bytes */
    ip_grow(dir, 70000, 140000, 1, &tid, &d);
    /* beside it, the same rows appended copy on write (the files cloned
    ** or copied into a new folder, plain strings too) */
    char *cow = rf_sprintf("%s/ipcow", base);
    rf_db_writer *w = NULL;
    int32_t uid = -1;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK && rf_db_writer_new(cow, "test", &w, &d) == RF_OK);
    CHECK(db && w && rf_db_writer_table_from(w, db, &db->tables[0], 1, &tid, &d) == RF_OK && tid == 0);
    if (db && w && tid == 0) {
        ip_append(w, tid, 140000, IP_N, &d);
        CHECK(rf_db_writer_table_from(w, db, &db->tables[1], 0, &uid, &d) == RF_OK && uid == 1);
        CHECK(rf_db_writer_commit(w, &d) == RF_OK);
    }
    rf_db_writer_free(w);
    rf_db_close(db);
    ip_grow(dir, 140000, IP_N, 1, &tid, &d);
    CHECK(inode_of(dir, "t00000.c00000.col", &sz1) == ino && sz1 == IP_N * 8);
    const char *files[] = {RF_DB_MANIFEST,      "t00000.c00000.col", "t00000.c00001.col",
                           "t00000.c00001.str", "t00001.c00000.col", "t00001.c00000.dict"};
    for (int k = 0; k < 2; k++)
        for (int f = 0; f < 6; f++) {
            long na = 0, nb = 0;
            char *a = slurp(k ? cow : dir, files[f], &na), *b = slurp(ref, files[f], &nb);
            int same = a && b && na == nb && !memcmp(a, b, (size_t)na);
            CHECK(same);
            if (!same) fprintf(stderr, "  %s of %s differs\n", files[f], k ? "ipcow" : "ip");
            free(a);
            free(b);
        }
    free(cow);
    /* a file another folder shares (a hard link): not in place */
    char *col = rf_sprintf("%s/t00000.c00000.col", dir), *other = rf_sprintf("%s/shared.col", base);
    CHECK(link(col, other) == 0);
    CHECK(rf_db_open(dir, &db, &d) == RF_OK);
    CHECK(db && rf_db_table_appendable_in_place(db, &db->tables[0]) == 0);
    rf_db_close(db);
    ip_grow(dir, IP_N, IP_N, 1, &tid, &d);
    CHECK(tid == -1);
    CHECK(unlink(other) == 0);
    CHECK(d.count == 0);
    free(col);
    free(other);
    free(ref);
    free(dir);
    rf_diags_free(&d);
}

/* A copy-on-write writer that replaces the database it continues (commit
** at the same folder) takes a table's old files over where no other folder
** shares them: linked into the new folder and appended to, any tail past
** the manifest cut off first, no old byte copied. Stopped before its
** commit it leaves the old state readable (a tail past it at most);
** committed, the manifest and files equal writing every row at once, byte
** for byte, in the old files (same inodes). A shared file is copied, the
** other folder's bytes unchanged. */
static void cow_grow(const char *dir, int64_t r0, int64_t r1, int commit, int64_t *linked, int64_t *copied, rf_diags *d)
{
    rf_db *db = NULL;
    rf_db_writer *w = NULL;
    int32_t tid = -1, uid = -1;
    *linked = *copied = -1;
    CHECK(rf_db_open(dir, &db, d) == RF_OK);
    if (!db) return;
    CHECK(db->tables[0].nrows == r0);
    CHECK(rf_db_writer_new(dir, "test", &w, d) == RF_OK);
    CHECK(w && rf_db_writer_table_from(w, db, &db->tables[0], 1, &tid, d) == RF_OK && tid == 0);
    if (w && tid == 0) {
        ip_append(w, tid, r0, r1, d);
        CHECK(rf_db_writer_table_from(w, db, &db->tables[1], 0, &uid, d) == RF_OK && uid == 1);
        rf_db_writer_carried_bytes(w, linked, copied);
        CHECK(!commit || rf_db_writer_commit(w, d) == RF_OK);
    }
    rf_db_writer_free(w);
    rf_db_close(db);
}

static void test_adopt(const char *base)
{
    rf_diags d;
    rf_diags_init(&d);
    char *ref = rf_sprintf("%s/adref", base), *dir = rf_sprintf("%s/ad", base);
    ip_write(ref, IP_N, &d);
    ip_write(dir, 70000, &d); /* a last block begun (wide: continued as it is) */
    off_t sz0, sz1;
    ino_t ino = inode_of(dir, "t00000.c00000.col", &sz0), sino = inode_of(dir, "t00000.c00001.str", &sz1);
    int64_t old_bytes = 70000 * 16 + ip_off[70000], linked = 0, copied = 0;
    /* a tail a killed writer left */
    char *colp = rf_sprintf("%s/t00000.c00000.col", dir);
    FILE *fp = colp ? fopen(colp, "ab") : NULL;
    CHECK(fp && fwrite("tail past the manifest", 1, 22, fp) == 22);
    if (fp) fclose(fp);
    /* stopped before its commit: the old state, its files its own again */
    cow_grow(dir, 70000, 100000, 0, &linked, &copied, &d);
    CHECK(linked == old_bytes && copied == 0);
    struct stat sb;
    CHECK(stat(colp, &sb) == 0 && sb.st_nlink == 1 && sb.st_ino == ino && sb.st_size >= sz0);
    rf_db *db = NULL;
    CHECK(rf_db_open(dir, &db, &d) == RF_OK);
    if (db) {
        rf_db_map m;
        const void *data = NULL;
        CHECK(db->tables[0].nrows == 70000 && rf_db_map_column(db, &db->tables[0], 0, &m, &data, &d) == RF_OK);
        CHECK(data && !memcmp(data, ip_iv, 70000 * 8));
        rf_db_unmap(&m);
        CHECK(rf_db_table_appendable_in_place(db, &db->tables[0]) == 1);
    }
    rf_db_close(db);
    /* committed twice: the reference's bytes, in the old files */
    cow_grow(dir, 70000, 140000, 1, &linked, &copied, &d);
    CHECK(linked == old_bytes && copied == 0);
    cow_grow(dir, 140000, IP_N, 1, &linked, &copied, &d);
    CHECK(linked == 140000 * 16 + ip_off[140000] && copied == 0);
    CHECK(inode_of(dir, "t00000.c00000.col", &sz1) == ino && sz1 == IP_N * 8);
    CHECK(inode_of(dir, "t00000.c00001.str", &sz1) == sino && sz1 == ip_off[IP_N]);
    CHECK(stat(colp, &sb) == 0 && sb.st_nlink == 1);
    const char *files[] = {RF_DB_MANIFEST,      "t00000.c00000.col", "t00000.c00001.col",
                           "t00000.c00001.str", "t00001.c00000.col", "t00001.c00000.dict"};
    for (int f = 0; f < 6; f++) {
        long na = 0, nb = 0;
        char *a = slurp(dir, files[f], &na), *b = slurp(ref, files[f], &nb);
        int same = a && b && na == nb && !memcmp(a, b, (size_t)na);
        CHECK(same);
        if (!same) fprintf(stderr, "  %s of ad differs\n", files[f]);
        free(a);
        free(b);
    }
    /* a file another folder shares (a hard link): copied, the other's bytes kept */
    char *other = rf_sprintf("%s/shared_ad.col", base);
    CHECK(link(colp, other) == 0);
    ip_write(ref, IP_N, &d); /* (ref replaced by the same bytes) */
    rf_db *db2 = NULL;
    rf_db_writer *w = NULL;
    int32_t tid = -1, uid = -1;
    CHECK(rf_db_open(dir, &db2, &d) == RF_OK && rf_db_writer_new(dir, "test", &w, &d) == RF_OK);
    CHECK(db2 && w && rf_db_writer_table_from(w, db2, &db2->tables[0], 1, &tid, &d) == RF_OK && tid == 0);
    if (db2 && w && tid == 0) {
        int64_t one = 5, o[2] = {0, 1};
        CHECK(rf_db_writer_append(w, tid, 0, 1, &one, NULL, NULL, &d) == RF_OK);
        CHECK(rf_db_writer_append(w, tid, 1, 1, NULL, o, "x", &d) == RF_OK);
        CHECK(rf_db_writer_table_from(w, db2, &db2->tables[1], 0, &uid, &d) == RF_OK);
        rf_db_writer_carried_bytes(w, &linked, &copied);
        /* (per column: the strings column's files are its own) */
        CHECK(copied == (int64_t)IP_N * 8 && linked == (int64_t)IP_N * 8 + ip_off[IP_N]);
        CHECK(rf_db_writer_commit(w, &d) == RF_OK);
    }
    rf_db_writer_free(w);
    rf_db_close(db2);
    CHECK(stat(other, &sb) == 0 && sb.st_size == IP_N * 8 && sb.st_nlink == 1);
    CHECK(inode_of(dir, "t00000.c00000.col", &sz1) != ino && sz1 == (IP_N + 1) * 8);
    CHECK(unlink(other) == 0);
    CHECK(d.count == 0);
    free(other);
    free(colp);
    free(ref);
    free(dir);
    rf_diags_free(&d);
}

int main(void)
{
    test_crc();
    test_dict_batches();
    test_dict_short();
    char tmpl[] = "/tmp/rf_test_db.XXXXXX";
    char *base = mkdtemp(tmpl);
    if (!base) return 1;
    test_roundtrip(base);
    test_big_column(base);
    test_parallel_write(base);
    test_bad_values(base);
    test_float_zeros(base);
    test_plain(base);
    test_in_place(base);
    test_adopt(base);
    char *cmd = rf_sprintf("rm -rf '%s'", base);
    if (cmd && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    free(cmd);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("db: all tests passed\n");
    return 0;
}
