/*
** db/db_writer.c: writing a database.
**
** Owns: the temporary directory (DIR.tmp.PID.N beside DIR), one column file
** per column written as rows arrive (buffered, its CRC-32C and per-block
** min/max kept on the way), each string column's dictionary (the distinct
** strings in order of first appearance, built with a hash table and written
** when the column ends), the manifest (written last), and the rename that
** puts the directory in place. Until that rename nothing at DIR changes, and
** the temporary directory has no manifest until every column is on disk: a
** failed or killed writer leaves nothing that reads as a database.
**
** Memory: a write buffer per column, the min/max of its blocks, and for a
** string column its distinct strings with a hash table (about 24 bytes an
** entry besides the bytes): bounded by the distinct values, not the rows.
*/
#include "db_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WBUF (1 << 20)

typedef struct wcol {
    int fd;
    unsigned char *buf;
    int64_t buflen;
    int64_t rows, in_block;
    int64_t capblocks;
    int finished;
    rf_db_dict *dict;   /* strings: the dictionary (db_dict.c) */
    uint32_t *codes;    /* scratch for one append */
    int64_t capcodes;
} wcol;

struct rf_db_writer {
    char *final_dir, *tmp_dir;
    rf_db db;           /* tables and columns so far; db.dir is tmp_dir */
    wcol **w;           /* per table: ncols states */
    int32_t captables;
    int committed;
    uint32_t block_rows; /* of tables added from now on */
};

void rf_db_writer_block_rows(rf_db_writer *w, uint32_t rows)
{
    if (rows && !(rows & (rows - 1))) w->block_rows = rows;
}

static rf_status io_error(rf_diags *d, const char *path, const char *what)
{
    rf_error(d, rf_mkloc(path, 0, 0), "cannot %s: %s", what, strerror(errno));
    return errno == ENOMEM ? RF_ENOMEM : RF_EIO;
}

static rf_status write_all(int fd, const void *p, int64_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t r = write(fd, c, (size_t)(n > (1 << 30) ? (1 << 30) : n));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return RF_EIO;
        c += r;
        n -= r;
    }
    return RF_OK;
}

rf_status rf_db_writer_new(const char *dir, const char *writer_version, rf_db_writer **out, rf_diags *d)
{
    *out = NULL;
    rf_db_writer *w = rf_calloc(1, sizeof *w);
    if (!w) return RF_ENOMEM;
    rf_arena_init(&w->db.arena);
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    w->final_dir = rf_strndup(dir, n);
    if (!w->final_dir) {
        rf_db_writer_free(w);
        return RF_ENOMEM;
    }
    for (int k = 0;; k++) {
        free(w->tmp_dir);
        w->tmp_dir = rf_sprintf("%s.tmp.%ld.%d", w->final_dir, (long)getpid(), k);
        if (!w->tmp_dir) {
            rf_db_writer_free(w);
            return RF_ENOMEM;
        }
        if (mkdir(w->tmp_dir, 0777) == 0) break;
        if (errno != EEXIST || k > 1000) {
            rf_status st = io_error(d, w->tmp_dir, "create the database's temporary folder");
            free(w->tmp_dir);
            w->tmp_dir = NULL;
            rf_db_writer_free(w);
            return st;
        }
    }
    w->db.dir = w->tmp_dir;
    w->db.writer = rf_arena_strdup(&w->db.arena, writer_version ? writer_version : "");
    w->db.major = RF_DB_MAJOR;
    w->db.minor = RF_DB_MINOR;
    *out = w;
    return RF_OK;
}

const rf_db *rf_db_writer_db(const rf_db_writer *w) { return &w->db; }

rf_status rf_db_writer_table(rf_db_writer *w, const char *name, int32_t ncols, const rf_type *types,
                             const char *const *colnames, int32_t nkey, const int32_t *key, int32_t *tid, rf_diags *d)
{
    if (ncols < 1 || ncols > RF_DB_MAX_COLS || nkey < 0 || nkey > ncols || w->db.ntables >= RF_DB_MAX_TABLES)
        return RF_EINTERNAL;
    if (rf_db_find_table(&w->db, name)) {
        rf_error(d, rf_mkloc(name, 0, 0), "two inputs read this file with different columns");
        return RF_EUSER;
    }
    if (w->db.ntables == w->captables) {
        int32_t nc = w->captables ? w->captables * 2 : 16;
        rf_db_table *nt = rf_realloc(w->db.tables, (size_t)nc * sizeof *nt);
        if (!nt) return RF_ENOMEM;
        w->db.tables = nt;
        wcol **nw = rf_realloc(w->w, (size_t)nc * sizeof *nw);
        if (!nw) return RF_ENOMEM;
        w->w = nw;
        w->captables = nc;
    }
    int32_t ti = w->db.ntables;
    rf_db_table *t = &w->db.tables[ti];
    memset(t, 0, sizeof *t);
    rf_arena *a = &w->db.arena;
    t->name = rf_arena_strdup(a, name);
    t->block_rows = w->block_rows ? w->block_rows : RF_DB_BLOCK_ROWS;
    t->ncols = ncols;
    t->nkey = nkey;
    t->key = rf_arena_alloc(a, ((size_t)nkey + 1) * sizeof *t->key);
    t->cols = rf_arena_alloc(a, (size_t)ncols * sizeof *t->cols);
    wcol *wc = rf_calloc((size_t)ncols, sizeof *wc);
    if (!t->name || !t->key || !t->cols || !wc) {
        free(wc);
        return RF_ENOMEM;
    }
    if (nkey) memcpy(t->key, key, (size_t)nkey * sizeof *key);
    w->w[ti] = wc;
    w->db.ntables++;
    for (int32_t c = 0; c < ncols; c++) wc[c].fd = -1;
    for (int32_t c = 0; c < ncols; c++) {
        rf_db_column *col = &t->cols[c];
        col->name = rf_arena_strdup(a, colnames && colnames[c] ? colnames[c] : "");
        col->type = types[c];
        col->file = rf_arena_sprintf(a, "t%05d.c%05d.col", (int)ti, (int)c);
        if (types[c] == RF_TYPE_STRING) col->dict_file = rf_arena_sprintf(a, "t%05d.c%05d.dict", (int)ti, (int)c);
        wc[c].buf = rf_malloc(WBUF);
        if (!col->name || !col->file || (types[c] == RF_TYPE_STRING && !col->dict_file) || !wc[c].buf) return RF_ENOMEM;
        char *path = rf_sprintf("%s/%s", w->tmp_dir, col->file);
        if (!path) return RF_ENOMEM;
        wc[c].fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (wc[c].fd < 0) {
            rf_status st = io_error(d, path, "create a column file");
            free(path);
            return st;
        }
        free(path);
    }
    *tid = ti;
    return RF_OK;
}

static rf_status flush(const rf_db_writer *w, rf_db_column *col, wcol *wc, rf_diags *d)
{
    if (!wc->buflen) return RF_OK;
    col->crc = rf_db_crc32c(col->crc, wc->buf, wc->buflen);
    if (write_all(wc->fd, wc->buf, wc->buflen)) {
        char *path = rf_sprintf("%s/%s", w->tmp_dir, col->file);
        rf_status st = io_error(d, path ? path : col->file, "write a column file");
        free(path);
        return st;
    }
#ifdef SYNC_FILE_RANGE_WRITE
    /* start writing it to disk now, so that commit's fsync finds little left
    ** to do (best effort: an error shows at that fsync) */
    sync_file_range(wc->fd, (off64_t)col->size, (off64_t)wc->buflen, SYNC_FILE_RANGE_WRITE);
#endif
    col->size += (uint64_t)wc->buflen;
    wc->buflen = 0;
    return RF_OK;
}

static rf_status put(const rf_db_writer *w, rf_db_column *col, wcol *wc, const void *p, int64_t n, rf_diags *d)
{
    const char *c = p;
    while (n > 0) {
        int64_t k = WBUF - wc->buflen < n ? WBUF - wc->buflen : n;
        memcpy(wc->buf + wc->buflen, c, (size_t)k);
        wc->buflen += k;
        c += k;
        n -= k;
        if (wc->buflen == WBUF) {
            rf_status st = flush(w, col, wc, d);
            if (st) return st;
        }
    }
    return RF_OK;
}

/* ---- appending -------------------------------------------------------- */

static void block_update(rf_db_column *col, wcol *wc, int64_t i, int64_t v)
{
    (void)wc;
    rf_db_block *b = &col->blocks[i];
    if (v < b->min) b->min = v;
    if (v > b->max) b->max = v;
}

static void fblock_update(rf_db_column *col, int64_t i, double v)
{
    rf_db_block *b = &col->blocks[i];
    double lo, hi;
    memcpy(&lo, &b->min, 8);
    memcpy(&hi, &b->max, 8);
    if (v != v) return; /* NaN takes no part */
    if (v < lo) memcpy(&b->min, &v, 8);
    if (v > hi) memcpy(&b->max, &v, 8);
}

static int64_t value_at(rf_type t, const void *p, int64_t i)
{
    switch (t) {
    case RF_TYPE_INT:
    case RF_TYPE_DECIMAL: return ((const int64_t *)p)[i];
    case RF_TYPE_DATE: return ((const int32_t *)p)[i];
    case RF_TYPE_BOOL: return ((const uint8_t *)p)[i];
    case RF_TYPE_STRING: return ((const uint32_t *)p)[i];
    case RF_TYPE_FLOAT: break;
    }
    return 0;
}

/* Min/max of rows [0, n) of values, which continue the column. */
static rf_status blocks_add(rf_db_column *col, wcol *wc, uint32_t block_rows, const void *values, int64_t n)
{
    int64_t need = (wc->rows + n + block_rows - 1) / block_rows;
    if (need > wc->capblocks) {
        int64_t nc = wc->capblocks ? wc->capblocks * 2 : 16;
        while (nc < need) nc *= 2;
        rf_db_block *nb = rf_realloc(col->blocks, (size_t)nc * sizeof *nb);
        if (!nb) return RF_ENOMEM;
        col->blocks = nb;
        wc->capblocks = nc;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t r = wc->rows + i, b = r / block_rows;
        if (r % block_rows == 0) {
            col->nblocks = b + 1;
            if (col->type == RF_TYPE_FLOAT) {
                double inf = 1.0 / 0.0, ninf = -1.0 / 0.0;
                memcpy(&col->blocks[b].min, &inf, 8);
                memcpy(&col->blocks[b].max, &ninf, 8);
            } else {
                col->blocks[b].min = INT64_MAX;
                col->blocks[b].max = INT64_MIN;
            }
        }
        if (col->type == RF_TYPE_FLOAT) fblock_update(col, b, ((const double *)values)[i]);
        else block_update(col, wc, b, value_at(col->type, values, i));
    }
    return RF_OK;
}

rf_status rf_db_writer_encode(rf_db_writer *w, int32_t tid, int32_t c, int64_t n, const int64_t *off,
                              const char *bytes, uint32_t *codes, int nthreads, rf_db_parallel_fn par,
                              rf_diags *d)
{
    rf_db_table *t = &w->db.tables[tid];
    wcol *wc = &w->w[tid][c];
    if (wc->finished || t->cols[c].type != RF_TYPE_STRING) return RF_EINTERNAL;
    if (!wc->dict && !(wc->dict = rf_db_dict_new())) return RF_ENOMEM;
    int r = rf_db_dict_encode(wc->dict, n, off, bytes, codes, nthreads, par);
    if (r == -1) return RF_ENOMEM;
    if (r == -2) {
        rf_error(d, rf_mkloc(t->name, 0, 0), "column %d has more than %lld distinct strings", (int)c + 1,
                 (long long)RF_DB_MAX_DICT);
        return RF_EUSER;
    }
    return RF_OK;
}

rf_status rf_db_writer_append(rf_db_writer *w, int32_t tid, int32_t c, int64_t n, const void *values,
                              const int64_t *off, const char *bytes, rf_diags *d)
{
    rf_db_table *t = &w->db.tables[tid];
    rf_db_column *col = &t->cols[c];
    wcol *wc = &w->w[tid][c];
    if (wc->finished) return RF_EINTERNAL;
    if (n <= 0) return RF_OK;
    if (col->type == RF_TYPE_STRING && off) {
        if (n > wc->capcodes) {
            free(wc->codes);
            wc->codes = rf_malloc((size_t)n * sizeof *wc->codes);
            if (!wc->codes) return RF_ENOMEM;
            wc->capcodes = n;
        }
        rf_status st = rf_db_writer_encode(w, tid, c, n, off, bytes, wc->codes, 1, NULL, d);
        if (st) return st;
        values = wc->codes;
    }
    rf_status st = blocks_add(col, wc, t->block_rows, values, n);
    if (!st) st = put(w, col, wc, values, n * rf_db_type_width(col->type), d);
    wc->rows += n;
    return st;
}

rf_status rf_db_writer_finish_column(rf_db_writer *w, int32_t tid, int32_t c, rf_diags *d)
{
    rf_db_table *t = &w->db.tables[tid];
    rf_db_column *col = &t->cols[c];
    wcol *wc = &w->w[tid][c];
    if (wc->finished) return RF_OK;
    rf_status st = flush(w, col, wc, d);
    if (st) return st;
    if (col->type == RF_TYPE_STRING) {
        char *path = rf_sprintf("%s/%s", w->tmp_dir, col->dict_file);
        if (!path) return RF_ENOMEM;
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (!wc->dict && !(wc->dict = rf_db_dict_new())) st = RF_ENOMEM;
        uint64_t size = 0;
        if (!st && (fd < 0 || rf_db_dict_write(wc->dict, fd, &col->dict_crc, &size)))
            st = io_error(d, path, "write a dictionary");
        col->dict_count = (uint64_t)rf_db_dict_count(wc->dict);
        col->dict_size = size;
        if (fd >= 0 && close(fd) != 0 && !st) st = io_error(d, path, "write a dictionary");
        free(path);
        rf_db_dict_free(wc->dict);
        wc->dict = NULL;
        free(wc->codes);
        wc->codes = NULL;
        if (st) return st;
    }
    if (close(wc->fd) != 0) {
        wc->fd = -1;
        return io_error(d, col->file, "write a column file");
    }
    wc->fd = -1;
    free(wc->buf);
    wc->buf = NULL;
    wc->finished = 1;
    return RF_OK;
}

/* ---- commit ----------------------------------------------------------- */

static rf_status sync_path(const char *path, int dir, rf_diags *d)
{
    int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) return io_error(d, path, "open for syncing");
    int r = fsync(fd);
    close(fd);
    if (r != 0 && errno != EINVAL) return io_error(d, path, "sync");
    return RF_OK;
}

/* Removes a database folder's files (only files: a database has no
** subfolders) and the folder. */
static void remove_dir(const char *dir)
{
    DIR *dh = opendir(dir);
    if (dh) {
        struct dirent *e;
        while ((e = readdir(dh)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char *p = rf_sprintf("%s/%s", dir, e->d_name);
            if (p) unlink(p);
            free(p);
        }
        closedir(dh);
    }
    rmdir(dir);
}

rf_status rf_db_writer_end_table(rf_db_writer *w, int32_t tid, rf_diags *d)
{
    rf_db_table *t = &w->db.tables[tid];
    rf_status st = RF_OK;
    for (int32_t c = 0; c < t->ncols && !st; c++) st = rf_db_writer_finish_column(w, tid, c, d);
    if (st) return st;
    for (int32_t c = 1; c < t->ncols; c++)
        if (w->w[tid][c].rows != w->w[tid][0].rows) return RF_EINTERNAL;
    t->nrows = w->w[tid][0].rows;
    return RF_OK;
}

rf_status rf_db_writer_commit(rf_db_writer *w, rf_diags *d)
{
    rf_status st = RF_OK;
    for (int32_t i = 0; i < w->db.ntables && !st; i++) st = rf_db_writer_end_table(w, i, d);
    if (st) return st;
    /* the data on disk before the manifest that vouches for it */
    for (int32_t i = 0; i < w->db.ntables && !st; i++)
        for (int32_t c = 0; c < w->db.tables[i].ncols && !st; c++) {
            const rf_db_column *col = &w->db.tables[i].cols[c];
            for (int k = 0; k < 2 && !st; k++) {
                const char *f = k ? col->dict_file : col->file;
                if (!f) continue;
                char *p = rf_sprintf("%s/%s", w->tmp_dir, f);
                st = p ? sync_path(p, 0, d) : RF_ENOMEM;
                free(p);
            }
        }
    if (st) return st;
    rf_buf m;
    rf_buf_init(&m);
    rf_db_encode(&w->db, &m);
    if (m.oom) {
        rf_buf_free(&m);
        return RF_ENOMEM;
    }
    char *mpath = rf_sprintf("%s/%s", w->tmp_dir, RF_DB_MANIFEST);
    if (!mpath) {
        rf_buf_free(&m);
        return RF_ENOMEM;
    }
    int fd = open(mpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || write_all(fd, m.data, m.len) || fsync(fd) != 0) st = io_error(d, mpath, "write the manifest");
    if (fd >= 0 && close(fd) != 0 && !st) st = io_error(d, mpath, "write the manifest");
    rf_buf_free(&m);
    free(mpath);
    if (!st) st = sync_path(w->tmp_dir, 1, d);
    if (st) return st;

    /* into place: an existing database is moved aside first, then removed */
    struct stat sb;
    char *old = NULL;
    if (lstat(w->final_dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) {
            rf_error(d, rf_mkloc(w->final_dir, 0, 0), "exists and is not a folder: not replacing it");
            return RF_EUSER;
        }
        if (rf_db_is_database(w->final_dir)) {
#ifdef SYS_renameat2
            /* one atomic exchange (Linux 3.15): DIR is the old database or
            ** the new one at every moment, never missing (`redfox exec`
            ** commits a transaction this way); the old one, now at the
            ** temporary name, is removed after */
            if (syscall(SYS_renameat2, AT_FDCWD, w->tmp_dir, AT_FDCWD, w->final_dir, 2 /* RENAME_EXCHANGE */) == 0) {
                w->committed = 1;
                remove_dir(w->tmp_dir);
                goto durable;
            }
#endif
            for (int k = 0; !old; k++) {
                old = rf_sprintf("%s.old.%ld.%d", w->final_dir, (long)getpid(), k);
                if (!old) return RF_ENOMEM;
                if (lstat(old, &sb) == 0 && k < 1000) {
                    free(old);
                    old = NULL;
                }
            }
            if (rename(w->final_dir, old) != 0) {
                st = io_error(d, w->final_dir, "move the old database aside");
                free(old);
                return st;
            }
        } else if (rmdir(w->final_dir) != 0) {
            rf_error(d, rf_mkloc(w->final_dir, 0, 0),
                     "exists and is neither a redfox database nor an empty folder: not replacing it");
            return RF_EUSER;
        }
    }
    if (rename(w->tmp_dir, w->final_dir) != 0) {
        st = io_error(d, w->final_dir, "rename the new database into place");
        if (old) rename(old, w->final_dir);
        free(old);
        return st;
    }
    w->committed = 1;
    if (old) remove_dir(old);
    free(old);
#ifdef SYS_renameat2
durable:
#endif
    /* the rename itself, durable */
    char *parent = rf_strdup(w->final_dir);
    if (parent) {
        char *sl = strrchr(parent, '/');
        if (sl == parent) sl[1] = 0;
        else if (sl) *sl = 0;
        else strcpy(parent, ".");
        sync_path(parent, 1, d);
    }
    free(parent);
    return RF_OK;
}

void rf_db_writer_free(rf_db_writer *w)
{
    if (!w) return;
    for (int32_t i = 0; i < w->db.ntables; i++) {
        for (int32_t c = 0; c < w->db.tables[i].ncols; c++) {
            wcol *wc = &w->w[i][c];
            if (wc->fd >= 0) close(wc->fd);
            free(wc->buf);
            rf_db_dict_free(wc->dict);
            free(wc->codes);
            free(w->db.tables[i].cols[c].blocks);
        }
        free(w->w[i]);
    }
    if (!w->committed && w->tmp_dir) remove_dir(w->tmp_dir);
    free(w->w);
    free(w->db.tables);
    rf_arena_free(&w->db.arena);
    free(w->final_dir);
    free(w->tmp_dir);
    free(w);
}
