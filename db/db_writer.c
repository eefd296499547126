/*
** db/db_writer.c: writing a database.
**
** Owns: the temporary directory (DIR.tmp.PID.N beside DIR), one column file
** per column written as rows arrive (buffered, its CRC-32C and per-block
** min/max kept on the way; a big append in pieces of whole blocks, each
** piece's CRC-32Cs, min/max and bytes by a thread of its own, written at
** their places with pwrite), each string column's dictionary (the distinct
** strings in order of first appearance, built with a hash table and written
** when the column ends), the manifest (written last; its bytes kept for the
** caller, rf_db_writer_manifest), and the rename that
** puts the directory in place, the user's files in a database folder it
** replaces carried into the new one (carry_links, carry_moves: only the
** database's own files are ever removed) and the user's subfolders a writer
** killed between its exchange and carry_moves left in the old state's
** folder moved back (rf_db_recover_subfolders); where the system has no
** exchange, the old state a writer killed between its two renames left
** aside (DIR.old.PID.N) put back at DIR, which it left missing
** (rf_db_restore_missing), and those of commits that ended removed
** (remove_stale_olds). Until that rename nothing
** at DIR changes, and
** the temporary directory has no manifest until every column is on disk: a
** failed or killed writer leaves nothing that reads as a database.
** In place (rf_db_writer_in_place): no temporary directory; a table's new
** rows go past the old ends of its files, and a new manifest, written aside
** and renamed over the old one, makes them part of the database. Copy on
** write over the database it replaces, a table that only gains rows keeps
** its old files where no other folder shares them (adopt_file: linked into
** the temporary folder, appended to past the old manifest's sizes). Also
** the count of bytes written and of the time spent writing them, and of
** the old rows carried over, kept in their files or copied (--profile).
** Different columns may be appended to and finished on different threads
** at once.
**
** Memory: a write buffer per column, the min/max of its blocks, and for a
** string column its distinct strings with a hash table (about 24 bytes an
** entry besides the bytes): bounded by the distinct values, not the rows.
*/
#include "db_internal.h"

#include "rf_file.h"
#include "rf_sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/fs.h> /* FICLONE */
#endif

#define WBUF (1 << 20)

typedef struct wcol {
    int fd;
    unsigned char *buf;
    int64_t buflen;
    int64_t rows, in_block;
    int64_t capblocks;
    int finished;
    rf_db_dict *dict;   /* strings: the dictionary (db_dict.c) */
    int sfd;            /* plain strings: the strings file, its buffer, its bytes so far */
    unsigned char *sbuf;
    int64_t sbuflen;
    uint64_t *offs;     /* plain strings: scratch for one append's offsets */
    int64_t capoffs;
    uint32_t *codes;    /* scratch for one append */
    int64_t capcodes;
    int in_place;       /* appended in place: synced when it ends */
    uint64_t size0, ssize0; /* in place: the files' sizes before (--profile's bytes) */
    unsigned char *pend; /* narrow: the rows of the block not yet whole, at the runtime's width */
    int64_t npend;
    unsigned char *enc; /* narrow: one block's stored bytes */
    int64_t raw_tail;   /* narrow, in place: rows that complete the last block, stored as they are */
} wcol;

struct rf_db_writer {
    char *final_dir, *tmp_dir;
    rf_db db;           /* tables and columns so far; db.dir is tmp_dir */
    wcol **w;           /* per table: ncols states */
    int32_t captables;
    int committed;
    rf_buf manifest;    /* the manifest the commit wrote (rf_db_writer_manifest) */
    int in_place;       /* the database at tmp_dir (= final_dir) is appended to in place */
    int64_t in_place_bytes; /* bytes appended in place so far */
    int64_t adopted_bytes, copied_bytes; /* old rows carried over: in the old files (linked), in clones or copies */
    uint32_t block_rows; /* of tables added from now on */
    int wide;           /* rf_db_writer_narrow(w, 0): tables added from now on not narrow */
    char **copies;      /* the user's files carry_links copied (not linked) into the new folder */
    int32_t ncopies;
    /* rf_db_writer_stats (atomic: columns are written from several threads) */
    int64_t io_bytes;
    int64_t io_ns[4]; /* write calls' wall and CPU, the writeback's start's wall and CPU */
};

void rf_db_writer_narrow(rf_db_writer *w, int on) { w->wide = !on; }

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

static int remove_dir(const char *dir, const char *other);
static void remove_stale_olds(const char *final, rf_diags *d);

/* Is tmp (a folder's entry) a temporary folder of final's writer that
** no one writes any more: DIR.tmp.PID.N of a process that is gone (a writer
** stopped by a signal leaves its folder: nothing that reads as a database,
** but as big as one), none of its files changed for STALE_S (a writer on
** another host, whose PID means nothing here, writes its files as it goes)? */
#define STALE_S 600
/* Is name (a folder's entry beside final) DIR.KIND.PID.N (kind ".tmp." or
** ".old.") of final's writer of another process that is gone? */
static int gone_writers(const char *final, const char *name, const char *kind)
{
    const char *base = strrchr(final, '/');
    base = base ? base + 1 : final;
    size_t n = strlen(base);
    if (strncmp(name, base, n) != 0 || strncmp(name + n, kind, 5) != 0) return 0;
    char *end;
    errno = 0;
    long pid = strtol(name + n + 5, &end, 10);
    if (errno || end == name + n + 5 || *end != '.' || pid <= 0 || pid == (long)getpid()) return 0;
    const char *k = end + 1;
    if (!*k) return 0;
    for (const char *c = k; *c; c++)
        if (*c < '0' || *c > '9') return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static int stale_tmp(const char *final, const char *parent, const char *name)
{
    if (!gone_writers(final, name, ".tmp.")) return 0;
    char *path = rf_sprintf("%s/%s", parent, name);
    if (!path) return 0;
    struct stat sb;
    time_t now = time(NULL);
    int stale = lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && now - sb.st_mtime > STALE_S;
    DIR *dh = stale ? opendir(path) : NULL;
    struct dirent *e;
    while (dh && stale && (e = readdir(dh)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *p = rf_sprintf("%s/%s", path, e->d_name);
        /* (only files: a database has no subfolders) */
        stale = p && lstat(p, &sb) == 0 && S_ISREG(sb.st_mode) && now - sb.st_mtime > STALE_S;
        free(p);
    }
    if (dh) closedir(dh);
    free(path);
    return stale;
}

/* Removes the temporary folders earlier writers of final left (stale_tmp),
** each with a note. */
static void remove_stale_tmps(const char *final, rf_diags *d)
{
    rf_db_recover_subfolders(final, d);
    remove_stale_olds(final, d);
    const char *slash = strrchr(final, '/');
    char *parent = slash ? rf_strndup(final, slash == final ? 1 : (size_t)(slash - final)) : rf_strdup(".");
    DIR *dh = parent ? opendir(parent) : NULL;
    struct dirent *e;
    while (dh && (e = readdir(dh)) != NULL) {
        if (!stale_tmp(final, parent, e->d_name)) continue;
        char *path = slash ? rf_sprintf("%s/%s", parent, e->d_name) : rf_strdup(e->d_name);
        if (!path) break;
        if (remove_dir(path, final) == 0)
            rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(path, 0, 0),
                        "removed this temporary folder: a writer of the database that stopped before its end left it");
        else if (errno == ENOTEMPTY || errno == EEXIST)
            rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(path, 0, 0),
                        "a writer of the database that stopped before its end left this temporary folder; its "
                        "database files are removed, the files that are not the database's are kept (move or "
                        "remove them)");
        free(path);
    }
    if (dh) closedir(dh);
    free(parent);
}

/* Can the commit put a database at dir? Not where something it will not
** replace stands (the commit says the same, and checks again): asked
** first, so that an import refuses before its work, not after it. */
static rf_status check_replaceable(const char *dir, rf_diags *d)
{
    struct stat sb;
    if (lstat(dir, &sb) != 0) return RF_OK; /* nothing there (or the commit says why) */
    if (!S_ISDIR(sb.st_mode)) {
        rf_error(d, rf_mkloc(dir, 0, 0), "exists and is %s: not replacing it",
                 S_ISLNK(sb.st_mode) ? "a symbolic link (give the folder it names)" : "not a folder");
        return RF_EUSER;
    }
    if (rf_db_is_database(dir)) return rf_db_check_manifest(dir, d);
    DIR *dp = opendir(dir);
    int empty = dp != NULL;
    for (struct dirent *e; dp && empty && (e = readdir(dp)) != NULL;)
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    if (dp) closedir(dp);
    if (!empty) {
        rf_error(d, rf_mkloc(dir, 0, 0),
                 "exists and is neither a redfox database nor an empty folder: not replacing it");
        return RF_EUSER;
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
    /* DB given as "." or ".." (an import run inside the database): named
    ** by its absolute path, so that its temporary folder goes beside it and
    ** the commit can exchange it (no rename moves "."): the commit failed,
    ** after all the work, with "cannot move the old database aside: Device
    ** or resource busy" */
    const char *slash = strrchr(w->final_dir, '/'), *last = slash ? slash + 1 : w->final_dir;
    if (!strcmp(last, ".") || !strcmp(last, "..")) {
        char *real = realpath(w->final_dir, NULL);
        if (real) {
            free(w->final_dir);
            w->final_dir = real;
        }
    }
    /* a database a killed writer left aside (no exchange) is put back
    ** first: then replaced as the database it is, never written over as
    ** a folder that was missing */
    rf_status cst = rf_db_restore_missing(w->final_dir, d);
    if (!cst) cst = check_replaceable(w->final_dir, d);
    if (cst) {
        rf_db_writer_free(w);
        return cst;
    }
    remove_stale_tmps(w->final_dir, d);
    for (int k = 0;; k++) {
        free(w->tmp_dir);
        w->tmp_dir = rf_sprintf("%s.tmp.%ld.%d", w->final_dir, (long)getpid(), k);
        if (!w->tmp_dir) {
            rf_db_writer_free(w);
            return RF_ENOMEM;
        }
        if (mkdir(w->tmp_dir, 0777) == 0) break;
        if (errno != EEXIST || k > 1000) {
            rf_status st;
            int err = errno;
            char *parent = err == ENOENT || err == ENOTDIR ? rf_file_dirname(w->final_dir) : NULL;
            struct stat psb;
            int there = parent && stat(parent, &psb) == 0;
            if (there && S_ISDIR(psb.st_mode)) { /* there (a file system refusing): the system's words */
                free(parent);
                parent = NULL;
            }
            errno = err;
            if (parent) {
                /* the folder it would be in is missing, or a file: name
                ** that, not DB.tmp.PID.N */
                if (there)
                    rf_error(d, rf_mkloc(w->final_dir, 0, 0), "cannot create the database: %s is not a folder",
                             parent);
                else
                    rf_error(d, rf_mkloc(w->final_dir, 0, 0),
                             "cannot create the database: the folder %s does not exist", parent);
                st = RF_EIO;
                free(parent);
            } else {
                st = io_error(d, w->tmp_dir, "create the database's temporary folder");
            }
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
    w->db.block_crcs = 1;
    *out = w;
    return RF_OK;
}

rf_status rf_db_writer_in_place(const rf_db *db, const char *writer_version, rf_db_writer **out, rf_diags *d)
{
    *out = NULL;
    if (!db->block_crcs) return RF_EINTERNAL;
    rf_db_writer *w = rf_calloc(1, sizeof *w);
    if (!w) return RF_ENOMEM;
    rf_arena_init(&w->db.arena);
    w->in_place = 1;
    w->final_dir = rf_strdup(db->dir);
    w->tmp_dir = rf_strdup(db->dir);
    w->db.writer = rf_arena_strdup(&w->db.arena, writer_version ? writer_version : "");
    if (!w->final_dir || !w->tmp_dir || !w->db.writer) {
        rf_db_writer_free(w);
        return RF_ENOMEM;
    }
    w->db.dir = w->tmp_dir;
    w->db.major = RF_DB_MAJOR;
    w->db.minor = RF_DB_MINOR;
    w->db.block_crcs = 1;
    /* a writer of the database as a copy-on-write one is (docs/DATABASE.md) */
    remove_stale_tmps(w->final_dir, d);
    *out = w;
    return RF_OK;
}

int rf_db_writer_is_in_place(const rf_db_writer *w) { return w->in_place; }

void rf_db_writer_carried_bytes(const rf_db_writer *w, int64_t *linked, int64_t *copied)
{
    *linked = w->adopted_bytes;
    *copied = w->copied_bytes;
}
int64_t rf_db_writer_in_place_bytes(const rf_db_writer *w) { return w->in_place_bytes; }

/* Whether the file dir/name (at least size bytes by the manifest) can be
** appended to in place: a regular file of at least size bytes that no other
** folder shares (one link: a copy-on-write commit's links are gone, a
** copy's files are its own). */
static int file_appendable(const char *dir, const char *name, uint64_t size)
{
    char *path = rf_sprintf("%s/%s", dir, name);
    struct stat sb;
    int ok = path && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_nlink == 1 && (uint64_t)sb.st_size >= size;
    free(path);
    return ok;
}

int rf_db_table_appendable_in_place(const rf_db *db, const rf_db_table *tb)
{
    if (!db->block_crcs) return 0;
    for (int32_t c = 0; c < tb->ncols; c++) {
        const rf_db_column *col = &tb->cols[c];
        if (col->type == RF_TYPE_STRING && col->enc != RF_DB_ENC_PLAIN) return 0; /* a dictionary */
        /* a narrow column's partial last block is continued only as it is
        ** (raw: this writer stores it so); a narrow one would have to be
        ** stored again, and its bytes are the old manifest's */
        if (col->narrow && tb->nrows % tb->block_rows &&
            col->blocks[col->nblocks - 1].width != rf_db_type_width(col->type))
            return 0;
        if (!file_appendable(db->dir, col->file, col->size)) return 0;
        if (col->str_file && !file_appendable(db->dir, col->str_file, col->str_size)) return 0;
    }
    return 1;
}

/* Opens dir/name to append at byte size, where its manifest's data ends:
** any tail past it (left by a writer that stopped before its manifest) is
** cut off first. 1 when open (*fd), 0 when the file cannot be appended to
** in place (shared, or shorter than the manifest says), -1 on a failure
** (errno). */
static int open_in_place(const char *dir, const char *name, uint64_t size, int *fd)
{
    char *path = rf_sprintf("%s/%s", dir, name);
    *fd = path ? open(path, O_WRONLY | O_CLOEXEC) : -1;
    int e = path ? errno : ENOMEM, r = -1;
    free(path);
    struct stat sb;
    if (*fd >= 0 && fstat(*fd, &sb) != 0) e = errno;
    else if (*fd >= 0) r = S_ISREG(sb.st_mode) && sb.st_nlink == 1 && (uint64_t)sb.st_size >= size;
    if (r > 0 && (uint64_t)sb.st_size > size && ftruncate(*fd, (off_t)size) != 0) r = -1, e = errno;
    if (r > 0 && lseek(*fd, (off_t)size, SEEK_SET) != (off_t)size) r = -1, e = errno;
    if (r <= 0 && *fd >= 0) close(*fd), *fd = -1;
    errno = e;
    return r;
}

const rf_db *rf_db_writer_db(const rf_db_writer *w) { return &w->db; }

rf_status rf_db_writer_table_key(rf_db_writer *w, int32_t tid, int32_t nkey, const int32_t *key)
{
    if (tid < 0 || tid >= w->db.ntables) return RF_EINTERNAL;
    rf_db_table *t = &w->db.tables[tid];
    if (nkey < 0 || nkey > t->ncols) return RF_EINTERNAL;
    for (int32_t k = 0; k < nkey; k++)
        if (key[k] < 0 || key[k] >= t->ncols) return RF_EINTERNAL;
    int32_t *nk = rf_arena_alloc(&w->db.arena, ((size_t)nkey + 1) * sizeof *nk);
    if (!nk) return RF_ENOMEM;
    if (nkey) memcpy(nk, key, (size_t)nkey * sizeof *key);
    t->key = nk;
    t->nkey = nkey;
    return RF_OK;
}

/* A table's entry and its columns' names and states, no file yet. */
static rf_status table_add(rf_db_writer *w, const char *name, int32_t ncols, const rf_type *types,
                           const char *const *colnames, int32_t nkey, const int32_t *key, int32_t *tid, rf_diags *d)
{
    /* the format's limits (docs/DATABASE.md, The manifest): a program may
    ** declare more, which a text run reads, so they are the user's to hear */
    if (ncols > RF_DB_MAX_COLS) {
        rf_error(d, rf_mkloc(name, 0, 0), "a table of %d columns: a table of a redfox database holds at most %d",
                 (int)ncols, RF_DB_MAX_COLS);
        return RF_EUSER;
    }
    if (w->db.ntables >= RF_DB_MAX_TABLES) {
        rf_error(d, rf_mkloc(name, 0, 0), "more than %d tables: a redfox database holds at most %d", RF_DB_MAX_TABLES,
                 RF_DB_MAX_TABLES);
        return RF_EUSER;
    }
    if (ncols < 1 || nkey < 0 || nkey > ncols) return RF_EINTERNAL;
    if (rf_db_find_table(&w->db, name)) {
        rf_error(d, rf_mkloc(name, 0, 0), "two inputs read this file with different columns");
        return RF_EUSER;
    }
    for (int32_t c = 0; c < ncols; c++)
        if (types[c] == RF_TYPE_DEC128) {
            /* a total's 128-bit decimal has no column encoding in a database yet (docs/DATABASE.md) */
            rf_error(d, rf_mkloc(name, 0, 0),
                     "column %d (`%s`) of `%s` is a total beyond 64 bits (a wide decimal), which a database "
                     "cannot store yet",
                     (int)c + 1, colnames && colnames[c] ? colnames[c] : "", name);
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
    for (int32_t c = 0; c < ncols; c++) wc[c].fd = wc[c].sfd = -1;
    for (int32_t c = 0; c < ncols; c++) {
        rf_db_column *col = &t->cols[c];
        col->name = rf_arena_strdup(a, colnames && colnames[c] ? colnames[c] : "");
        col->type = types[c];
        col->file = rf_arena_sprintf(a, "t%05d.c%05d.col", (int)ti, (int)c);
        if (types[c] == RF_TYPE_STRING) col->dict_file = rf_arena_sprintf(a, "t%05d.c%05d.dict", (int)ti, (int)c);
        if (!col->name || !col->file || (types[c] == RF_TYPE_STRING && !col->dict_file)) return RF_ENOMEM;
    }
    *tid = ti;
    return RF_OK;
}

rf_status rf_db_writer_table(rf_db_writer *w, const char *name, int32_t ncols, const rf_type *types,
                             const char *const *colnames, int32_t nkey, const int32_t *key, int32_t *tid, rf_diags *d)
{
    int32_t ti = -1;
    if (w->in_place) return RF_EINTERNAL; /* in place, tables only continue */
    rf_status st = table_add(w, name, ncols, types, colnames, nkey, key, &ti, d);
    if (st) return st;
    rf_db_table *t = &w->db.tables[ti];
    wcol *wc = w->w[ti];
    for (int32_t c = 0; c < ncols; c++) {
        rf_db_column *col = &t->cols[c];
        col->narrow = !w->wide && rf_db_narrowable(col->type);
        wc[c].buf = rf_malloc(WBUF);
        if (!wc[c].buf) return RF_ENOMEM;
        char *path = rf_sprintf("%s/%s", w->tmp_dir, col->file);
        if (!path) return RF_ENOMEM;
        wc[c].fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (wc[c].fd < 0) {
            st = io_error(d, path, "create a column file");
            free(path);
            return st;
        }
        free(path);
    }
    *tid = ti;
    return RF_OK;
}

/* ---- tables continued from the database being replaced ------------------ */

/* A file of the old database linked into the new one under the name the
** new table gives it (nothing changes a database's files in place, so the
** two may share it): 1 when linked, 0 when the file system refuses (the
** caller writes the table instead), -1 on another failure (errno). */
static int link_file(const rf_db_writer *w, const char *olddir, const char *oldname, const char *newname)
{
    char *from = rf_sprintf("%s/%s", olddir, oldname), *to = rf_sprintf("%s/%s", w->tmp_dir, newname);
    int r = from && to ? link(from, to) : -1;
    int e = from && to ? errno : ENOMEM;
    free(from);
    free(to);
    if (r == 0) return 1;
    errno = e;
    return e == EXDEV || e == EPERM || e == ENOTSUP || e == EMLINK || e == ENOSYS ? 0 : -1;
}

/* The first size bytes of the old database's file oldname as the new
** file newname, open for appending (*fd): a clone sharing the blocks where
** the file system can (FICLONE: Btrfs, XFS), else a copy inside the kernel
** (copy_file_range), never through this process's memory. 1 when made, 0
** when the system cannot (the caller writes the table instead), -1 on
** another failure (errno). */
static int clone_file(const rf_db_writer *w, const char *olddir, const char *oldname, const char *newname, uint64_t size,
                      int *fd)
{
    *fd = -1;
    char *from = rf_sprintf("%s/%s", olddir, oldname), *to = rf_sprintf("%s/%s", w->tmp_dir, newname);
    int in = from ? open(from, O_RDONLY | O_CLOEXEC) : -1;
    int out = to && in >= 0 ? open(to, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666) : -1;
    int r = in >= 0 && out >= 0 ? 1 : -1, e = r < 0 ? errno : 0;
#ifdef FICLONE
    int cloned = r > 0 && ioctl(out, FICLONE, in) == 0 && ftruncate(out, (off_t)size) == 0;
#else
    int cloned = 0;
#endif
#ifdef __linux__
    for (uint64_t at = 0; r > 0 && !cloned && at < size;) {
        ssize_t k = copy_file_range(in, NULL, out, NULL, (size_t)(size - at < (1u << 30) ? size - at : (1u << 30)), 0);
        if (k <= 0) {
            e = k < 0 ? errno : EIO;
            r = e == EXDEV || e == ENOSYS || e == EOPNOTSUPP || e == EINVAL ? 0 : -1;
        }
        at += k > 0 ? (uint64_t)k : 0;
    }
#else
    if (!cloned && size) r = 0;
#endif
    if (r > 0 && lseek(out, (off_t)size, SEEK_SET) != (off_t)size) r = -1, e = errno;
    if (in >= 0) close(in);
    if (r > 0) *fd = out;
    else if (out >= 0) close(out), unlink(to);
    free(from);
    free(to);
    errno = e;
    return r;
}

/* The old database's file oldname (of the database this writer replaces),
** which no other folder shares, linked
** into the new one as newname and opened there to append at byte size
** (*fd), any tail past size cut off first: the history that a table only
** adds to is then carried over without a byte of it copied, on any file
** system with links. The old manifest names only the first size bytes,
** which nothing changes, so until the commit's exchange the old database
** reads exactly as before (a kill leaves at most a tail past them, as an
** in-place append does); after it, the old folder's link is removed with
** that folder. 1 when open, 0 when the file cannot be taken so (shared
** with another folder, shorter than its manifest says, a file system
** without links: the caller clones or copies it), -1 on another failure
** (errno). */
static int adopt_file(const rf_db_writer *w, const char *olddir, const char *oldname, const char *newname,
                      uint64_t size, int *fd)
{
    *fd = -1;
    if (!file_appendable(olddir, oldname, size)) return 0;
    int r = link_file(w, olddir, oldname, newname);
    if (r <= 0) return r;
    char *to = rf_sprintf("%s/%s", w->tmp_dir, newname);
    int e = 0;
    *fd = to ? open(to, O_WRONLY | O_CLOEXEC) : -1;
    if (*fd < 0) e = to ? errno : ENOMEM;
    struct stat sb;
    if (*fd >= 0 && fstat(*fd, &sb) != 0) r = -1, e = errno;
    /* two links, the old folder's and this one: nothing else took it */
    else if (*fd >= 0 && (!S_ISREG(sb.st_mode) || sb.st_nlink != 2 || (uint64_t)sb.st_size < size)) r = 0;
    else if (*fd < 0) r = -1;
    if (r > 0 && (uint64_t)sb.st_size > size && ftruncate(*fd, (off_t)size) != 0) r = -1, e = errno;
    if (r > 0 && lseek(*fd, (off_t)size, SEEK_SET) != (off_t)size) r = -1, e = errno;
    if (r <= 0) {
        if (*fd >= 0) close(*fd);
        *fd = -1;
        if (to) unlink(to);
    }
    free(to);
    errno = e;
    return r;
}

/* Whether w's commit puts the new database where db is (the same folder,
** however named): only then may it take db's files over (adopt_file), since
** db is replaced, not kept beside the new one. */
static int replaces(const rf_db_writer *w, const rf_db *db)
{
    struct stat a, b;
    return stat(w->final_dir, &a) == 0 && stat(db->dir, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static rf_status narrow_reopen(const rf_db *db, const rf_db_table *tb, const rf_db_column *oc, wcol *wc, rf_diags *d);

rf_status rf_db_writer_table_from(rf_db_writer *w, const rf_db *db, const rf_db_table *tb, int append, int32_t *tid,
                                  rf_diags *d)
{
    *tid = -1;
    /* appends: numeric and plain string columns, blocks with their CRC-32Cs
    ** (the file's is combined from them, the old bytes never read) */
    if (append && !db->block_crcs) return RF_OK;
    for (int32_t c = 0; append && c < tb->ncols; c++)
        if (tb->cols[c].type == RF_TYPE_STRING && tb->cols[c].enc != RF_DB_ENC_PLAIN) return RF_OK;
    if (w->in_place && strcmp(db->dir, w->tmp_dir)) return RF_EINTERNAL;
    rf_type types[RF_DB_MAX_COLS];
    const char *names[RF_DB_MAX_COLS];
    if (tb->ncols < 1 || tb->ncols > RF_DB_MAX_COLS) return RF_EINTERNAL;
    for (int32_t c = 0; c < tb->ncols; c++) {
        types[c] = tb->cols[c].type;
        names[c] = tb->cols[c].name;
    }
    int32_t ti = -1;
    int may_adopt = append && !w->in_place && db->block_crcs && replaces(w, db);
    rf_status st = table_add(w, tb->name, tb->ncols, types, names, tb->nkey, tb->key, &ti, d);
    if (st) return st;
    rf_db_table *t = &w->db.tables[ti];
    t->block_rows = tb->block_rows;
    t->nrows = tb->nrows;
    wcol *wc = w->w[ti];
    int linked = 1;
    for (int32_t c = 0; c < tb->ncols && !st && linked > 0; c++) {
        const rf_db_column *oc = &tb->cols[c];
        rf_db_column *col = &t->cols[c];
        char *name = col->name, *file = col->file, *dict = col->dict_file;
        *col = *oc;
        col->name = name;
        col->file = file;
        col->dict_file = oc->dict_file ? dict : NULL;
        col->str_file = oc->str_file ? rf_arena_sprintf(&w->db.arena, "t%05d.c%05d.str", (int)ti, (int)c) : NULL;
        if (w->in_place) { /* the files keep their names */
            col->file = rf_arena_strdup(&w->db.arena, oc->file);
            col->dict_file = oc->dict_file ? rf_arena_strdup(&w->db.arena, oc->dict_file) : NULL;
            col->str_file = oc->str_file ? rf_arena_strdup(&w->db.arena, oc->str_file) : NULL;
        }
        col->blocks = rf_malloc(((size_t)oc->nblocks + 1) * sizeof *col->blocks);
        if (!col->blocks || !col->file || (oc->str_file && !col->str_file) || (oc->dict_file && !col->dict_file)) {
            st = RF_ENOMEM;
            break;
        }
        if (oc->nblocks) memcpy(col->blocks, oc->blocks, (size_t)oc->nblocks * sizeof *col->blocks);
        wc[c].capblocks = oc->nblocks + 1;
        wc[c].rows = tb->nrows;
        /* a narrow column's partial last block: copy on write, stored again
        ** with the new rows (the copy ends where it starts); in place,
        ** continued as it is where it is raw, else not in place */
        uint64_t keep = oc->size;
        int partial = append && oc->narrow && tb->nrows % tb->block_rows;
        int raw = partial && oc->blocks[oc->nblocks - 1].width == rf_db_type_width(oc->type);
        /* copy on write, the old files are taken over (adopt_file) where
        ** they can be continued as in place: a partial last block only as
        ** it is (raw), since its bytes are the old manifest's */
        int adopt = may_adopt && (!partial || raw);
        int taken = 0;
        if (adopt) {
            taken = adopt_file(w, db->dir, oc->file, col->file, oc->size, &wc[c].fd);
            if (taken > 0 && oc->str_file) {
                taken = adopt_file(w, db->dir, oc->str_file, col->str_file, oc->str_size, &wc[c].sfd);
                if (taken <= 0) { /* the column goes one way: its file given back */
                    int e = errno;
                    char *path = rf_sprintf("%s/%s", w->tmp_dir, col->file);
                    close(wc[c].fd);
                    wc[c].fd = -1;
                    if (path) unlink(path);
                    free(path);
                    errno = e;
                }
            }
        }
        int taken_errno = errno;
        int reopen = partial && !w->in_place && !taken;
        if (partial && w->in_place && !raw) linked = 0;
        if (partial && (w->in_place || taken > 0) && raw) wc[c].raw_tail = tb->block_rows - tb->nrows % tb->block_rows;
        if (reopen) {
            keep = oc->blocks[oc->nblocks - 1].at;
            col->size = keep;
            col->nblocks = oc->nblocks - 1;
        }
        if (!linked) break;
        if (append) {
            wc[c].buf = rf_malloc(WBUF);
            wc[c].sbuf = oc->str_file ? rf_malloc(WBUF) : NULL;
            wc[c].in_place = w->in_place;
            wc[c].size0 = oc->size;
            wc[c].ssize0 = oc->str_file ? oc->str_size : 0;
            if (!wc[c].buf || (oc->str_file && !wc[c].sbuf)) linked = (errno = ENOMEM, -1);
            else if (taken) linked = (errno = taken_errno, taken);
            else if (w->in_place) linked = open_in_place(db->dir, oc->file, oc->size, &wc[c].fd);
            else linked = clone_file(w, db->dir, oc->file, col->file, keep, &wc[c].fd);
            if (linked > 0 && reopen && (st = narrow_reopen(db, tb, oc, &wc[c], d)) != RF_OK) break;
            if (linked > 0 && oc->str_file && !taken)
                linked = w->in_place ? open_in_place(db->dir, oc->str_file, oc->str_size, &wc[c].sfd)
                                     : clone_file(w, db->dir, oc->str_file, col->str_file, oc->str_size, &wc[c].sfd);
            if (linked > 0 && !w->in_place) {
                int64_t carried = (int64_t)(keep + (oc->str_file ? oc->str_size : 0));
                if (taken > 0) w->adopted_bytes += carried;
                else w->copied_bytes += carried;
            }
        } else if (w->in_place) {
            wc[c].finished = 1; /* nothing to do: the files stay as they are */
        } else {
            linked = link_file(w, db->dir, oc->file, col->file);
            if (linked > 0 && oc->dict_file) linked = link_file(w, db->dir, oc->dict_file, col->dict_file);
            if (linked > 0 && oc->str_file) linked = link_file(w, db->dir, oc->str_file, col->str_file);
            wc[c].finished = 1;
        }
        if (linked < 0) {
            char *path = rf_sprintf("%s/%s", db->dir, oc->file);
            st = io_error(d, path ? path : oc->file, "carry a file of the database into its next state");
            free(path);
        }
    }
    if (!st && linked > 0) {
        *tid = ti;
        return RF_OK;
    }
    /* not this way: the table is taken back (the caller writes it whole; in
    ** place, the database's own files stay) */
    for (int32_t c = 0; c < tb->ncols; c++) {
        const rf_db_column *col = &t->cols[c];
        for (int k = 0; k < 3 && !w->in_place; k++) {
            const char *f = k == 2 ? col->str_file : k ? col->dict_file : col->file;
            char *path = f ? rf_sprintf("%s/%s", w->tmp_dir, f) : NULL;
            if (path) unlink(path);
            free(path);
        }
        if (wc[c].fd >= 0) close(wc[c].fd);
        if (wc[c].sfd >= 0) close(wc[c].sfd);
        free(wc[c].buf);
        free(wc[c].sbuf);
        free(wc[c].pend);
        free(col->blocks);
    }
    free(wc);
    w->db.ntables--;
    return st;
}

/* Seconds of CPU the calling thread has used. */
static double thread_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Where a write of the database's files is: its wall clock and the
** thread's CPU, at its start, after the write call, after the writeback's
** start. */
typedef struct io_clock {
    double wall[3], cpu[3];
} io_clock;

static void io_tick(io_clock *c, int k)
{
    c->wall[k] = rf_now();
    c->cpu[k] = thread_cpu();
}

/* n bytes written as c's ticks say. */
static void io_count(rf_db_writer *w, int64_t n, const io_clock *c)
{
    __atomic_fetch_add(&w->io_bytes, n, __ATOMIC_RELAXED);
    __atomic_fetch_add(&w->io_ns[0], (int64_t)((c->wall[1] - c->wall[0]) * 1e9), __ATOMIC_RELAXED);
    __atomic_fetch_add(&w->io_ns[1], (int64_t)((c->cpu[1] - c->cpu[0]) * 1e9), __ATOMIC_RELAXED);
    __atomic_fetch_add(&w->io_ns[2], (int64_t)((c->wall[2] - c->wall[1]) * 1e9), __ATOMIC_RELAXED);
    __atomic_fetch_add(&w->io_ns[3], (int64_t)((c->cpu[2] - c->cpu[1]) * 1e9), __ATOMIC_RELAXED);
}

void rf_db_writer_stats(const rf_db_writer *w, rf_db_write_stats *out)
{
    double s[4];
    for (int k = 0; k < 4; k++) s[k] = (double)__atomic_load_n(&w->io_ns[k], __ATOMIC_RELAXED) * 1e-9;
    out->bytes = __atomic_load_n(&w->io_bytes, __ATOMIC_RELAXED);
    out->write = (rf_db_io_time){s[0], s[1]};
    out->writeback = (rf_db_io_time){s[2], s[3]};
}

/* Writes p[0..n) at the end of one of the database's files (*size its
** bytes so far) and starts writing it to disk (best effort: an error shows
** at commit's sync), so that commit finds little left to do. */
static rf_status write_out(rf_db_writer *w, int fd, const char *file, uint64_t *size, const void *p, int64_t n,
                           rf_diags *d)
{
    if (n <= 0) return RF_OK;
    io_clock ck;
    io_tick(&ck, 0);
    if (write_all(fd, p, n)) {
        char *path = rf_sprintf("%s/%s", w->tmp_dir, file);
        rf_status st = io_error(d, path ? path : file, "write a file of the database");
        free(path);
        return st;
    }
    io_tick(&ck, 1);
#ifdef SYNC_FILE_RANGE_WRITE
    sync_file_range(fd, (off64_t)*size, (off64_t)n, SYNC_FILE_RANGE_WRITE);
#endif
    io_tick(&ck, 2);
    io_count(w, n, &ck);
    *size += (uint64_t)n;
    return RF_OK;
}

static rf_status flush(rf_db_writer *w, rf_db_column *col, wcol *wc, rf_diags *d)
{
    rf_status st = write_out(w, wc->fd, col->file, &col->size, wc->buf, wc->buflen, d);
    wc->buflen = 0;
    return st;
}

/* The strings file's buffer to disk (plain string columns). */
static rf_status flush_strings(rf_db_writer *w, rf_db_column *col, wcol *wc, rf_diags *d)
{
    rf_status st = write_out(w, wc->sfd, col->str_file, &col->str_size, wc->sbuf, wc->sbuflen, d);
    wc->sbuflen = 0;
    return st;
}

/* Appends p[0..n) to a file through its buffer (*buflen bytes of WBUF in
** use); a piece of a buffer or more goes to the file straight from p, not
** copied twice. */
static rf_status append_bytes(rf_db_writer *w, int fd, const char *file, uint64_t *size, unsigned char *buf,
                              int64_t *buflen, const void *p, int64_t n, rf_diags *d)
{
    const char *c = p;
    while (n > 0) {
        if (*buflen == 0 && n >= WBUF) return write_out(w, fd, file, size, c, n, d);
        int64_t k = WBUF - *buflen < n ? WBUF - *buflen : n;
        memcpy(buf + *buflen, c, (size_t)k);
        *buflen += k;
        c += k;
        n -= k;
        if (*buflen == WBUF) {
            rf_status st = write_out(w, fd, file, size, buf, *buflen, d);
            *buflen = 0;
            if (st) return st;
        }
    }
    return RF_OK;
}

static rf_status put_strings(rf_db_writer *w, rf_db_column *col, wcol *wc, const char *c, int64_t n, rf_diags *d)
{
    return append_bytes(w, wc->sfd, col->str_file, &col->str_size, wc->sbuf, &wc->sbuflen, c, n, d);
}

static rf_status put(rf_db_writer *w, rf_db_column *col, wcol *wc, const void *p, int64_t n, rf_diags *d)
{
    return append_bytes(w, wc->fd, col->file, &col->size, wc->buf, &wc->buflen, p, n, d);
}

/* ---- appending -------------------------------------------------------- */

/* Narrows block b's min and max by the k values at p: one loop per type,
** which the compiler turns into vector instructions. */
static void block_range(rf_db_column *col, int64_t b, const void *p, int64_t k)
{
    rf_db_block *bl = &col->blocks[b];
    int64_t lo = bl->min, hi = bl->max;
    switch (col->type) {
    case RF_TYPE_INT:
    case RF_TYPE_DECIMAL: {
        const int64_t *v = p;
        for (int64_t i = 0; i < k; i++) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
        break;
    }
    case RF_TYPE_DATE: {
        /* a block's first piece starts from INT64_MAX / INT64_MIN: clamp into the type */
        int32_t mn = lo > INT32_MAX ? INT32_MAX : (int32_t)lo, mx = hi < INT32_MIN ? INT32_MIN : (int32_t)hi;
        const int32_t *v = p;
        for (int64_t i = 0; i < k; i++) {
            mn = v[i] < mn ? v[i] : mn;
            mx = v[i] > mx ? v[i] : mx;
        }
        lo = mn;
        hi = mx;
        break;
    }
    case RF_TYPE_DEC128: break; /* never stored: table_add refuses it */
    case RF_TYPE_BOOL:
    case RF_TYPE_STRING: {
        /* unsigned values: start from the widest range of the type */
        uint32_t mn = lo > UINT32_MAX ? UINT32_MAX : (uint32_t)lo, mx = hi < 0 ? 0 : (uint32_t)hi;
        if (col->type == RF_TYPE_BOOL) {
            const uint8_t *v = p;
            for (int64_t i = 0; i < k; i++) {
                mn = v[i] < mn ? v[i] : mn;
                mx = v[i] > mx ? v[i] : mx;
            }
        } else {
            const uint32_t *v = p;
            for (int64_t i = 0; i < k; i++) {
                mn = v[i] < mn ? v[i] : mn;
                mx = v[i] > mx ? v[i] : mx;
            }
        }
        lo = mn;
        hi = mx;
        break;
    }
    case RF_TYPE_FLOAT: {
        double mn, mx;
        memcpy(&mn, &bl->min, 8);
        memcpy(&mx, &bl->max, 8);
        const double *v = p;
        for (int64_t i = 0; i < k; i++) {
            if (v[i] != v[i]) continue; /* NaN takes no part */
            mn = v[i] < mn ? v[i] : mn;
            mx = v[i] > mx ? v[i] : mx;
        }
        memcpy(&lo, &mn, 8);
        memcpy(&hi, &mx, 8);
        break;
    }
    }
    bl->min = lo;
    bl->max = hi;
}

/* Room in col->blocks for the blocks of rows [0, rows). */
static rf_status blocks_reserve(rf_db_column *col, wcol *wc, uint32_t block_rows, int64_t rows)
{
    int64_t need = (rows + block_rows - 1) / block_rows;
    if (need > wc->capblocks) {
        int64_t nc = wc->capblocks ? wc->capblocks * 2 : 16;
        while (nc < need) nc *= 2;
        rf_db_block *nb = rf_realloc(col->blocks, (size_t)nc * sizeof *nb);
        if (!nb) return RF_ENOMEM;
        col->blocks = nb;
        wc->capblocks = nc;
    }
    return RF_OK;
}

/* Min/max of rows [r0, r0 + n) of the column, values[0, n), and their
** blocks' CRC-32Cs (a block begun before r0 continued). A plain string
** column's values are its offsets (u64, absolute in the strings file), and
** strings[0, slen) the bytes they point into, at byte sbase of the strings
** file: a block's min and max are its byte range. The blocks must be
** reserved; pieces of different blocks may be filled at once. */
static void blocks_fill(rf_db_column *col, uint32_t block_rows, int64_t r0, const void *values, int64_t n,
                        const char *strings, int64_t slen, uint64_t sbase)
{
    /* a block's piece of these rows at a time: its CRC, its range */
    int width = rf_db_col_width(col->type, col->enc);
    for (int64_t i = 0; i < n;) {
        int64_t r = r0 + i, b = r / block_rows;
        int64_t k = (b + 1) * (int64_t)block_rows - r;
        if (k > n - i) k = n - i;
        rf_db_block *bl = &col->blocks[b];
        const char *p = (const char *)values + i * width;
        if (r % block_rows == 0) {
            bl->crc = bl->str_crc = 0;
            bl->at = (uint64_t)r * (uint64_t)width;
            bl->width = (uint8_t)width;
            bl->exp = 0;
            if (col->type == RF_TYPE_FLOAT) {
                double inf = 1.0 / 0.0, ninf = -1.0 / 0.0;
                memcpy(&bl->min, &inf, 8);
                memcpy(&bl->max, &ninf, 8);
            } else {
                bl->min = INT64_MAX;
                bl->max = INT64_MIN;
            }
        }
        bl->crc = rf_db_crc32c(bl->crc, p, k * width);
        if (col->enc == RF_DB_ENC_PLAIN) {
            const uint64_t *o = values;
            uint64_t s0 = o[i], s1 = i + k < n ? o[i + k] : sbase + (uint64_t)slen;
            bl->str_crc = rf_db_crc32c(bl->str_crc, strings + (s0 - sbase), (int64_t)(s1 - s0));
            if (r % block_rows == 0) bl->min = (int64_t)s0;
            bl->max = (int64_t)s1;
        } else {
            block_range(col, b, p, k);
        }
        i += k;
    }
}

/* blocks_fill of n rows that continue the column. */
static rf_status blocks_add(rf_db_column *col, wcol *wc, uint32_t block_rows, const void *values, int64_t n,
                            const char *strings, int64_t slen, uint64_t sbase)
{
    rf_status st = blocks_reserve(col, wc, block_rows, wc->rows + n);
    if (st) return st;
    blocks_fill(col, block_rows, wc->rows, values, n, strings, slen, sbase);
    if (n > 0) col->nblocks = (wc->rows + n + block_rows - 1) / block_rows;
    return RF_OK;
}

/* ---- narrow columns ----------------------------------------------------- */

/* One whole block of a narrow column (k rows at v, the runtime's width;
** k < block_rows only for the column's last, which goes as it is, raw, so
** that an append in place can continue it): planned, packed and put after
** the blocks before it, its CRC-32C over the bytes stored. */
static rf_status narrow_block(rf_db_writer *w, const rf_db_table *t, rf_db_column *col, wcol *wc, const void *v,
                              int64_t k, int raw, rf_diags *d)
{
    int tw = rf_db_type_width(col->type);
    rf_status st = blocks_reserve(col, wc, t->block_rows, (col->nblocks + 1) * (int64_t)t->block_rows);
    if (st) return st;
    if (!wc->enc && !(wc->enc = rf_malloc((size_t)t->block_rows * (size_t)tw))) return RF_ENOMEM;
    rf_db_block *bl = &col->blocks[col->nblocks];
    memset(bl, 0, sizeof *bl);
    rf_db_narrow_plan(col->type, v, k, bl);
    if (raw) {
        bl->width = (uint8_t)tw;
        bl->exp = 0;
    }
    const void *bytes = v;
    if (bl->width < tw) {
        rf_db_narrow_pack(col->type, v, k, bl, wc->enc);
        bytes = wc->enc;
    }
    int64_t n = k * bl->width;
    bl->crc = rf_db_crc32c(0, bytes, n);
    bl->at = col->size + (uint64_t)wc->buflen;
    col->nblocks++;
    return put(w, col, wc, bytes, n, d);
}

/* n rows of a narrow column: whole blocks encoded straight from values,
** the rest kept (wc->pend) until its block is whole or the column ends. */
static rf_status narrow_append(rf_db_writer *w, const rf_db_table *t, rf_db_column *col, wcol *wc, const void *values,
                               int64_t n, rf_diags *d)
{
    int tw = rf_db_type_width(col->type);
    int64_t br = t->block_rows;
    const unsigned char *v = values;
    rf_status st = RF_OK;
    int64_t i = 0;
    if (wc->raw_tail > 0 && n > 0) {
        /* in place: the last block, stored as it is, continued so */
        int64_t k = wc->raw_tail < n ? wc->raw_tail : n, b = col->nblocks - 1;
        col->blocks[b].crc = rf_db_crc32c(col->blocks[b].crc, v, k * tw);
        block_range(col, b, v, k);
        st = put(w, col, wc, v, k * tw, d);
        wc->raw_tail -= k;
        i = k;
    }
    while (i < n && !st) {
        if (wc->npend == 0 && n - i >= br) {
            st = narrow_block(w, t, col, wc, v + i * tw, br, 0, d);
            i += br;
            continue;
        }
        if (!wc->pend && !(wc->pend = rf_malloc((size_t)br * (size_t)tw))) return RF_ENOMEM;
        int64_t k = br - wc->npend < n - i ? br - wc->npend : n - i;
        memcpy(wc->pend + wc->npend * tw, v + i * tw, (size_t)(k * tw));
        wc->npend += k;
        i += k;
        if (wc->npend == br) {
            st = narrow_block(w, t, col, wc, wc->pend, br, 0, d);
            wc->npend = 0;
        }
    }
    return st;
}

/* A narrow column continued copy on write whose last block is partial
** (rows r0 on of old table tb's column oc): that block's stored bytes read
** back from the old file, checked against its CRC-32C and widened into
** wc->pend, to be stored again with the rows that follow. */
static rf_status narrow_reopen(const rf_db *db, const rf_db_table *tb, const rf_db_column *oc, wcol *wc, rf_diags *d)
{
    const rf_db_block *bl = &oc->blocks[oc->nblocks - 1];
    int64_t r0 = (oc->nblocks - 1) * (int64_t)tb->block_rows, k = tb->nrows - r0;
    int tw = rf_db_type_width(oc->type);
    wc->pend = rf_malloc((size_t)tb->block_rows * (size_t)tw);
    unsigned char *raw = rf_malloc((size_t)(k * bl->width) + 1);
    char *path = rf_sprintf("%s/%s", db->dir, oc->file);
    rf_status st = wc->pend && raw && path ? RF_OK : RF_ENOMEM;
    int fd = st ? -1 : open(path, O_RDONLY | O_CLOEXEC);
    if (!st && (fd < 0 || pread(fd, raw, (size_t)(k * bl->width), (off_t)bl->at) != (ssize_t)(k * bl->width)))
        st = io_error(d, path, "read a block of the database");
    else if (!st && (rf_db_crc32c(0, raw, k * bl->width) != bl->crc ||
                     rf_db_narrow_decode(oc->type, bl, raw, k, wc->pend) >= 0)) {
        rf_error(d, rf_mkloc(path, 0, 0), "the file is corrupted (checksum mismatch in block %lld, rows %lld to %lld)",
                 (long long)oc->nblocks, (long long)r0 + 1, (long long)tb->nrows);
        st = RF_EUSER;
    }
    if (fd >= 0) close(fd);
    wc->npend = st ? 0 : k;
    free(raw);
    free(path);
    return st;
}

rf_status rf_db_writer_encode(rf_db_writer *w, int32_t tid, int32_t c, int64_t n, const int64_t *off,
                              const char *bytes, uint32_t *codes, int nthreads, rf_db_parallel_fn par,
                              rf_diags *d)
{
    rf_db_table *t = &w->db.tables[tid];
    wcol *wc = &w->w[tid][c];
    if (wc->finished || t->cols[c].type != RF_TYPE_STRING || t->cols[c].enc != RF_DB_ENC_VALUES) return RF_EINTERNAL;
    /* (a dictionary string column, narrow or not) */
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
    if (col->enc == RF_DB_ENC_PLAIN) {
        if (!off) return RF_EINTERNAL;
        if (n > wc->capoffs) {
            free(wc->offs);
            wc->offs = rf_malloc((size_t)n * sizeof *wc->offs);
            if (!wc->offs) return RF_ENOMEM;
            wc->capoffs = n;
        }
        /* each row's start in the strings file: where the file is now, plus
        ** its start within this piece */
        uint64_t base = col->str_size + (uint64_t)wc->sbuflen;
        for (int64_t i = 0; i < n; i++) wc->offs[i] = base + (uint64_t)(off[i] - off[0]);
        int64_t slen = off[n] - off[0];
        rf_status st = blocks_add(col, wc, t->block_rows, wc->offs, n, bytes + off[0], slen, base);
        if (!st) st = put(w, col, wc, wc->offs, n * 8, d);
        if (!st) st = put_strings(w, col, wc, bytes + off[0], slen, d);
        wc->rows += n;
        return st;
    }
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
    rf_status st = col->narrow ? narrow_append(w, t, col, wc, values, n, d)
                               : blocks_add(col, wc, t->block_rows, values, n, NULL, 0, 0);
    if (!st && !col->narrow) st = put(w, col, wc, values, n * rf_db_type_width(col->type), d);
    wc->rows += n;
    return st;
}

/* ---- appending by several threads --------------------------------------- */

/* One append split into pieces of whole blocks (the first may continue a
** block begun before), each piece's offsets, min/max, CRC-32Cs and bytes
** done by its own thread, its bytes written at their place in the files. */
typedef struct par_append {
    rf_db_writer *w;
    rf_db_column *col;
    wcol *wc;
    uint32_t block_rows;
    const unsigned char *values; /* NULL for plain strings: wc->offs */
    int width;
    int64_t n, rows0;
    const int64_t *off;          /* plain strings */
    const char *bytes;
    uint64_t fbase, sbase;       /* the files' sizes before */
    int64_t cut[65];             /* piece p: rows [cut[p], cut[p + 1]) */
    int err[64];                 /* errno of a failed write (-1: short), per piece */
    int sfailed[64];             /* 1: the strings file's write failed */
} par_append;

static int pwrite_all(int fd, const void *p, int64_t n, uint64_t at)
{
    const char *c = p;
    while (n > 0) {
        ssize_t r = pwrite(fd, c, (size_t)(n > (1 << 30) ? (1 << 30) : n), (off_t)at);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return r < 0 ? errno : EIO;
        c += r;
        n -= r;
        at += (uint64_t)r;
    }
    return 0;
}

static void par_append_piece(void *arg, int p)
{
    par_append *a = arg;
    rf_db_column *col = a->col;
    int64_t r0 = a->cut[p], r1 = a->cut[p + 1], k = r1 - r0;
    if (k <= 0) return;
    const unsigned char *v = a->values;
    const char *strings = NULL;
    int64_t slen = 0;
    uint64_t sat = 0;
    if (col->enc == RF_DB_ENC_PLAIN) {
        uint64_t *o = a->wc->offs;
        for (int64_t i = r0; i < r1; i++) o[i] = a->sbase + (uint64_t)(a->off[i] - a->off[0]);
        v = (const unsigned char *)o;
        strings = a->bytes + a->off[r0];
        slen = a->off[r1] - a->off[r0];
        sat = o[r0];
    }
    blocks_fill(col, a->block_rows, a->rows0 + r0, v + r0 * a->width, k, strings, slen, sat);
    uint64_t at = a->fbase + (uint64_t)(r0 * a->width);
    io_clock ck;
    io_tick(&ck, 0);
    a->err[p] = pwrite_all(a->wc->fd, v + r0 * a->width, k * a->width, at);
    io_tick(&ck, 1);
#ifdef SYNC_FILE_RANGE_WRITE
    if (!a->err[p]) sync_file_range(a->wc->fd, (off64_t)at, (off64_t)(k * a->width), SYNC_FILE_RANGE_WRITE);
#endif
    io_tick(&ck, 2);
    if (!a->err[p]) io_count(a->w, k * a->width, &ck);
    if (!a->err[p] && slen > 0) {
        io_tick(&ck, 0);
        a->err[p] = pwrite_all(a->wc->sfd, strings, slen, sat);
        a->sfailed[p] = a->err[p] != 0;
        io_tick(&ck, 1);
#ifdef SYNC_FILE_RANGE_WRITE
        if (!a->err[p]) sync_file_range(a->wc->sfd, (off64_t)sat, (off64_t)slen, SYNC_FILE_RANGE_WRITE);
#endif
        io_tick(&ck, 2);
        if (!a->err[p]) io_count(a->w, slen, &ck);
    }
}

rf_status rf_db_writer_append_par(rf_db_writer *w, int32_t tid, int32_t c, int64_t n, const void *values,
                                  const int64_t *off, const char *bytes, int nthreads, rf_db_parallel_fn par,
                                  rf_diags *d)
{
    rf_db_table *t = &w->db.tables[tid];
    rf_db_column *col = &t->cols[c];
    wcol *wc = &w->w[tid][c];
    int64_t br = t->block_rows;
    if (nthreads > 64) nthreads = 64;
    /* a piece of at least two blocks each, else one thread does it all;
    ** and a string column encoded on the way is appended as it always is */
    if (!par || nthreads < 2 || n < 4 * br || wc->finished || col->narrow ||
        (col->type == RF_TYPE_STRING && col->enc == RF_DB_ENC_VALUES && off))
        return rf_db_writer_append(w, tid, c, n, values, off, bytes, d);
    if (col->enc == RF_DB_ENC_PLAIN && !off) return RF_EINTERNAL;
    /* the buffered bytes first: each piece then writes at its own place */
    rf_status st = flush(w, col, wc, d);
    if (!st && col->enc == RF_DB_ENC_PLAIN) st = flush_strings(w, col, wc, d);
    if (!st) st = blocks_reserve(col, wc, t->block_rows, wc->rows + n);
    if (st) return st;
    if (col->enc == RF_DB_ENC_PLAIN && n > wc->capoffs) {
        free(wc->offs);
        wc->offs = rf_malloc((size_t)n * sizeof *wc->offs);
        wc->capoffs = wc->offs ? n : 0;
        if (!wc->offs) return RF_ENOMEM;
    }
    par_append *a = rf_calloc(1, sizeof *a);
    if (!a) return RF_ENOMEM;
    *a = (par_append){w, col, wc, t->block_rows, values, rf_db_col_width(col->type, col->enc), n, wc->rows, off, bytes,
                      col->size, col->str_size, {0}, {0}, {0}};
    /* cuts on block boundaries: the first piece ends the block begun before */
    int64_t first = (br - wc->rows % br) % br, rest = n - first;
    int64_t per = (rest / nthreads + br - 1) / br * br;
    if (per < br) per = br;
    int np = 0;
    a->cut[0] = 0;
    for (int64_t r = first + per; np < nthreads - 1 && r < n; r += per) a->cut[++np] = r;
    a->cut[++np] = n;
    par(np, par_append_piece, a);
    for (int p = 0; p < np && !st; p++) {
        if (!a->err[p]) continue;
        errno = a->err[p];
        char *path = rf_sprintf("%s/%s", w->tmp_dir, a->sfailed[p] ? col->str_file : col->file);
        st = io_error(d, path ? path : col->file, "write a file of the database");
        free(path);
    }
    if (!st) {
        int64_t slen = col->enc == RF_DB_ENC_PLAIN ? off[n] - off[0] : 0;
        col->size += (uint64_t)(n * a->width);
        col->str_size += (uint64_t)slen;
        wc->rows += n;
        col->nblocks = (wc->rows + br - 1) / br;
        /* write() goes on at the files' ends */
        if (lseek(wc->fd, (off_t)col->size, SEEK_SET) < 0 ||
            (col->enc == RF_DB_ENC_PLAIN && lseek(wc->sfd, (off_t)col->str_size, SEEK_SET) < 0))
            st = io_error(d, col->file, "write a file of the database");
    }
    free(a);
    return st;
}

rf_status rf_db_writer_plain(rf_db_writer *w, int32_t tid, int32_t c, rf_diags *d)
{
    rf_db_table *t = &w->db.tables[tid];
    rf_db_column *col = &t->cols[c];
    wcol *wc = &w->w[tid][c];
    if (col->type != RF_TYPE_STRING || wc->rows || wc->finished || wc->dict) return RF_EINTERNAL;
    if (col->enc == RF_DB_ENC_PLAIN) return RF_OK;
    col->str_file = rf_arena_sprintf(&w->db.arena, "t%05d.c%05d.str", (int)tid, (int)c);
    wc->sbuf = rf_malloc(WBUF);
    char *path = col->str_file ? rf_sprintf("%s/%s", w->tmp_dir, col->str_file) : NULL;
    if (!path || !wc->sbuf) {
        free(path);
        return RF_ENOMEM;
    }
    wc->sfd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (wc->sfd < 0) {
        rf_status st = io_error(d, path, "create a strings file");
        free(path);
        return st;
    }
    free(path);
    /* the dictionary's file is not written: nothing else names it */
    col->dict_file = NULL;
    col->enc = RF_DB_ENC_PLAIN;
    col->narrow = 0;
    return RF_OK;
}

rf_status rf_db_writer_finish_column(rf_db_writer *w, int32_t tid, int32_t c, rf_diags *d)
{
    rf_db_table *t = &w->db.tables[tid];
    rf_db_column *col = &t->cols[c];
    wcol *wc = &w->w[tid][c];
    if (wc->finished) return RF_OK;
    rf_status st = RF_OK;
    /* a narrow column's last block, not whole */
    if (col->narrow && wc->npend > 0) st = narrow_block(w, t, col, wc, wc->pend, wc->npend, 1, d);
    wc->npend = 0;
    if (!st) st = flush(w, col, wc, d);
    if (st) return st;
    /* the whole files' CRC-32Cs, from their blocks' (which tile them) */
    col->crc = col->str_crc = 0;
    int width = rf_db_col_width(col->type, col->enc), wide = 1;
    for (int64_t b = 0; b < col->nblocks; b++) {
        int64_t rows = wc->rows - b * (int64_t)t->block_rows;
        if (rows > (int64_t)t->block_rows) rows = t->block_rows;
        wide &= col->blocks[b].width == width;
        col->crc = rf_db_crc32c_combine(col->crc, col->blocks[b].crc, rows * (col->narrow ? col->blocks[b].width : width));
        if (col->enc == RF_DB_ENC_PLAIN)
            col->str_crc = rf_db_crc32c_combine(col->str_crc, col->blocks[b].str_crc,
                                                col->blocks[b].max - col->blocks[b].min);
    }
    /* a narrow column none of whose blocks narrowed is the same bytes as a
    ** plain one: written as one, which readers map in place */
    if (col->narrow && wide) col->narrow = 0;
    free(wc->pend);
    free(wc->enc);
    wc->pend = wc->enc = NULL;
    /* in place: the new bytes on disk before the manifest that names them */
    if (wc->in_place && fsync(wc->fd) != 0) return io_error(d, col->file, "sync a column file");
    if (col->enc == RF_DB_ENC_PLAIN) {
        st = flush_strings(w, col, wc, d);
        if (!st && wc->in_place && fsync(wc->sfd) != 0) st = io_error(d, col->str_file, "sync a strings file");
        if (!st && close(wc->sfd) != 0) st = io_error(d, col->str_file, "write a strings file");
        wc->sfd = -1;
        free(wc->sbuf);
        wc->sbuf = NULL;
        free(wc->offs);
        wc->offs = NULL;
        if (st) return st;
    } else if (col->type == RF_TYPE_STRING) {
        char *path = rf_sprintf("%s/%s", w->tmp_dir, col->dict_file);
        if (!path) return RF_ENOMEM;
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (!wc->dict && !(wc->dict = rf_db_dict_new())) st = RF_ENOMEM;
        uint64_t size = 0;
        if (!st && (fd < 0 || rf_db_dict_write(wc->dict, fd, &col->dict_crc, &size)))
            st = io_error(d, path, "write a dictionary");
        col->dict_count = (uint64_t)rf_db_dict_count(wc->dict);
        col->dict_size = size;
        __atomic_fetch_add(&w->io_bytes, (int64_t)size, __ATOMIC_RELAXED);
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
    if (wc->in_place) /* columns end on several threads at once */
        __atomic_fetch_add(&w->in_place_bytes, (int64_t)(col->size - wc->size0 + col->str_size - wc->ssize0),
                           __ATOMIC_RELAXED);
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

/* A folder synced once the commit is done (its manifest renamed, or the
** folder exchanged: readers see the new state). A failure cannot undo that,
** so it is a warning, not an error of a commit that succeeded: the state is
** committed, but a crash of the system (not of the process) may lose it. */
static void sync_committed(const char *dir, rf_diags *d)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int r = fd < 0 ? -1 : fsync(fd);
    int err = errno;
    if (fd >= 0) close(fd);
    if (r != 0 && !(fd >= 0 && err == EINVAL))
        rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(dir, 0, 0),
                    "cannot sync the folder after the commit: %s; the commit is done (it reads as committed), but a "
                    "crash of the system before the disk wrote it may lose it",
                    strerror(err));
}

/* The manifest of the database in dir, for the names of its files (NULL
** where there is none or it does not read: then only own_file's names). */
static rf_db *manifest_of(const char *dir)
{
    rf_diags dd;
    rf_diags_init(&dd);
    rf_db *m = NULL;
    if (rf_db_is_database(dir) && rf_db_open(dir, &m, &dd) != RF_OK) m = NULL;
    rf_diags_free(&dd);
    return m;
}

/* Is name one of a database folder's own files: its manifest (or the one
** an in-place commit writes aside), a file its manifest m (or NULL) names
** (another writer may name them otherwise), or one named as redfox names
** them (tNNNNN.cNNNNN.col|dict|str)? Anything else in the folder (a run's
** outputs written there, a user's notes, a lock file) is the user's: a
** writer that replaces the folder carries it over and never removes it. */
static int own_file(const rf_db *m, const char *name)
{
    if (!strcmp(name, RF_DB_MANIFEST)) return 1;
    for (int32_t i = 0; m && i < m->ntables; i++)
        for (int32_t c = 0; c < m->tables[i].ncols; c++) {
            const rf_db_column *col = &m->tables[i].cols[c];
            if ((col->file && !strcmp(col->file, name)) || (col->dict_file && !strcmp(col->dict_file, name)) ||
                (col->str_file && !strcmp(col->str_file, name)))
                return 1;
        }
    size_t ml = strlen(RF_DB_MANIFEST);
    if (!strncmp(name, RF_DB_MANIFEST, ml) && !strcmp(name + ml, ".new")) return 1;
    const char *p = name;
    if (*p++ != 't') return 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (!digits || *p++ != '.' || *p++ != 'c') return 0;
    digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    return digits && (!strcmp(p, ".col") || !strcmp(p, ".dict") || !strcmp(p, ".str"));
}

/* Are dir/name and other/name one file (hard links of one inode)? */
static int same_file(const char *dir, const char *other, const char *name)
{
    char *a = rf_sprintf("%s/%s", dir, name), *b = rf_sprintf("%s/%s", other, name);
    struct stat sa, sb;
    int same = a && b && lstat(a, &sa) == 0 && lstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    free(a);
    free(b);
    return same;
}

/* Removes a database folder's own files (own_file; a database has no
** subfolders) and the folder; -1 (errno set) where the folder stays. The
** user's files in it are removed only where other (a folder, or NULL) holds
** the same file under the same name (carried over: carry_links), so that
** no file but the database's is ever lost; where one stays, so does the
** folder (errno ENOTEMPTY). */
static int remove_dir(const char *dir, const char *other)
{
    rf_db *m = manifest_of(dir);
    /* the manifest first: a removal stopped part way (a kill) leaves a
    ** folder that no one takes for a whole database (rf_db_restore_missing) */
    char *mp = rf_sprintf("%s/%s", dir, RF_DB_MANIFEST);
    if (mp) (void)unlink(mp);
    free(mp);
    DIR *dh = opendir(dir);
    int err = dh ? 0 : errno; /* (the cause, rather than the rmdir's "not empty" it leads to) */
    if (dh) {
        struct dirent *e;
        while ((e = readdir(dh)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            if (!own_file(m, e->d_name) && !(other && same_file(dir, other, e->d_name))) continue;
            char *p = rf_sprintf("%s/%s", dir, e->d_name);
            if (p) unlink(p);
            free(p);
        }
        closedir(dh);
    }
    rf_db_close(m);
    if (rmdir(dir) == 0) return 0;
    if (err) errno = err;
    return -1;
}

/* A copy of the user's file (or symbolic link) a, whose lstat is sb, as b
** in the new folder, which no one reads until the exchange (so written in
** place, not aside): the bytes (a clone where the file system shares
** blocks, else copied in the kernel, else read and written), the mode, the
** times and (where allowed) the owner, synced. 0, or -1 with nothing left
** at b. */
static int copy_user_file(const char *a, const char *b, const struct stat *sb)
{
    if (S_ISLNK(sb->st_mode)) {
        char to[4096];
        ssize_t n = readlink(a, to, sizeof to - 1);
        if (n < 0 || n >= (ssize_t)sizeof to - 1) return -1;
        to[n] = 0;
        if (symlink(to, b) != 0) return -1;
        (void)lchown(b, sb->st_uid, sb->st_gid);
        return 0;
    }
    int in = open(a, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int out = in >= 0 ? open(b, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
    int ok = in >= 0 && out >= 0;
#ifdef FICLONE
    int cloned = ok && ioctl(out, FICLONE, in) == 0;
#else
    int cloned = 0;
#endif
    int kernel = 1; /* copy_file_range, until it says it cannot */
    char *buf = NULL; /* (read and write: 64 KiB at a time) */
    for (; ok && !cloned;) {
        ssize_t k = -1;
#ifdef __linux__
        if (kernel) {
            k = copy_file_range(in, NULL, out, NULL, 1u << 30, 0);
            if (k < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
                kernel = 0;
                continue;
            }
        }
#else
        kernel = 0;
#endif
        if (!kernel && !buf && !(buf = rf_malloc(1 << 16))) {
            ok = 0;
            break;
        }
        if (!kernel) {
            k = read(in, buf, 1 << 16);
            if (k > 0 && write_all(out, buf, k) != RF_OK) k = -1;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            ok = k == 0;
            break;
        }
    }
    if (ok) {
        (void)fchown(out, sb->st_uid, sb->st_gid); /* (root's copy keeps the owner; another's cannot) */
        struct timespec ts[2] = {sb->st_atim, sb->st_mtim};
        ok = fchmod(out, sb->st_mode & 07777) == 0 && futimens(out, ts) == 0 && fsync(out) == 0;
    }
    free(buf);
    if (in >= 0) close(in);
    if (out >= 0 && close(out) != 0) ok = 0;
    if (!ok && out >= 0) unlink(b);
    return ok ? 0 : -1;
}

/* Before a copy-on-write commit replaces the database at old with the
** folder at new: the user's files in old (not own_file: a run's outputs
** written into the database's folder, notes) hard-linked into new under
** their names, so that they are in the folder at DIR before and after the
** exchange, never lost with the old state. A file that cannot be linked
** (too many links already, EMLINK; another owner's under
** protected_hardlinks, EPERM) is copied there instead, and its name kept in
** w->copies: after the exchange remove_old_state renames the file itself
** over its copy, so that DIR holds it (or, killed before, its copy) at
** every moment, never nothing. A subfolder (or a file that can be neither
** linked nor copied) is left for carry_moves. Returns how many it linked
** or copied. */
static int carry_links(rf_db_writer *w, const char *old, const char *new)
{
    int linked = 0;
    rf_db *m = manifest_of(old);
    DIR *dh = opendir(old);
    struct dirent *e;
    while (dh && (e = readdir(dh)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || own_file(m, e->d_name)) continue;
        char *a = rf_sprintf("%s/%s", old, e->d_name), *b = rf_sprintf("%s/%s", new, e->d_name);
        struct stat sb;
        /* (linkat without AT_SYMLINK_FOLLOW links a symbolic link itself) */
        if (a && b && lstat(a, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
            if (linkat(AT_FDCWD, a, AT_FDCWD, b, 0) == 0) linked++;
            else if (errno != EEXIST && (S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode))) {
                char **more = rf_realloc(w->copies, ((size_t)w->ncopies + 1) * sizeof *more);
                char *name = more ? rf_strdup(e->d_name) : NULL;
                if (more) w->copies = more;
                if (name && copy_user_file(a, b, &sb) == 0) {
                    w->copies[w->ncopies++] = name;
                    linked++;
                } else
                    free(name);
            }
        }
        free(a);
        free(b);
    }
    if (dh) closedir(dh);
    rf_db_close(m);
    return linked;
}

/* Once the commit replaced the database: the user's entries of the old
** state's folder that carry_links could not link (subfolders) moved into
** the new database's folder, where it has nothing of that name. */
static void carry_moves(const char *oldstate, const char *final)
{
    rf_db *m = manifest_of(oldstate);
    DIR *dh = opendir(oldstate);
    struct dirent *e;
    while (dh && (e = readdir(dh)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || own_file(m, e->d_name)) continue;
        char *a = rf_sprintf("%s/%s", oldstate, e->d_name), *b = rf_sprintf("%s/%s", final, e->d_name);
        struct stat sb;
        if (a && b && lstat(b, &sb) != 0 && errno == ENOENT) (void)rename(a, b);
        free(a);
        free(b);
    }
    if (dh) closedir(dh);
    rf_db_close(m);
}

/* A user's subfolder of DB sits in DB.tmp.PID.N (DB.old.PID.N without an
** exchange), the old state's folder, from the exchange until carry_moves:
** a writer killed between them (SIGKILL, a crash) leaves it there. Only an old state holds subfolders (a new state
** is written file by file, and carry_links links no folder), and no one
** writes into it, so moving them now is what the killed writer's
** carry_moves would have done, at whatever age. */
static void recover_from(const char *tmp, const char *final, rf_diags *d)
{
    DIR *dh = opendir(tmp);
    struct dirent *e;
    int moved = 0;
    while (dh && (e = readdir(dh)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *a = rf_sprintf("%s/%s", tmp, e->d_name), *b = rf_sprintf("%s/%s", final, e->d_name);
        struct stat sa, sb;
        if (a && b && lstat(a, &sa) == 0 && S_ISDIR(sa.st_mode)) {
            if (lstat(b, &sb) == 0)
                rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(a, 0, 0),
                            "a folder that was in %s, left here by a writer of the database killed during its commit; "
                            "%s now holds another %s: not moved back (move or merge it yourself)",
                            final, final, e->d_name);
            else if (rename(a, b) == 0) {
                moved++;
                rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(b, 0, 0),
                            "moved this folder back from %s, where a writer of the database killed during its commit "
                            "left it",
                            tmp);
            } else
                rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(a, 0, 0),
                            "a folder that was in %s, left here by a writer of the database killed during its commit; "
                            "cannot move it back: %s (move it back into %s)",
                            final, strerror(errno), final);
        }
        free(a);
        free(b);
    }
    if (dh) closedir(dh);
    /* the moves, durable; a failure is not reported: a move a system crash
    ** loses leaves the folder where it was, and the next reader moves it */
    for (int k = 0; moved && k < 2; k++) {
        int fd = open(k ? tmp : final, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
            (void)fsync(fd);
            close(fd);
        }
    }
}

void rf_db_recover_subfolders(const char *dir, rf_diags *d)
{
    /* the folder the database is (a symbolic link's, "."'s): its
    ** temporary folders are beside that one */
    char *final = realpath(dir, NULL);
    if (!final) return; /* (no database there: the caller says so) */
    char *slash = strrchr(final, '/');
    char *parent = slash == final ? rf_strdup("/") : slash ? rf_strndup(final, (size_t)(slash - final)) : NULL;
    DIR *dh = parent ? opendir(parent) : NULL;
    struct dirent *e;
    while (dh && (e = readdir(dh)) != NULL) {
        /* (DIR.old.PID.N: the old state where the system has no exchange,
        ** renamed aside before the new folder is renamed into place) */
        if (!gone_writers(final, e->d_name, ".tmp.") && !gone_writers(final, e->d_name, ".old.")) continue;
        char *tmp = rf_sprintf("%s/%s", parent, e->d_name);
        struct stat sb;
        if (tmp && lstat(tmp, &sb) == 0 && S_ISDIR(sb.st_mode)) recover_from(tmp, final, d);
        free(tmp);
    }
    if (dh) closedir(dh);
    free(parent);
    free(final);
}

/* ---- a commit killed between its two renames (no exchange) ------------- */

/* The path of the entry name beside final (as final is given: relative,
** "db", names it "db.old.1.0", not "./db.old.1.0"). */
static char *beside(const char *final, const char *parent, const char *name)
{
    return strchr(final, '/') ? rf_sprintf("%s/%s", parent, name) : rf_strdup(name);
}

static char *parent_of(const char *final)
{
    const char *slash = strrchr(final, '/');
    return slash == final ? rf_strdup("/") : slash ? rf_strndup(final, (size_t)(slash - final)) : rf_strdup(".");
}

/* Is name DIR.tmp.PID.N, of the writer PID (as text) and any N? */
static int tmp_of_pid(const char *base, const char *pid, const char *name)
{
    size_t b = strlen(base), p = strlen(pid);
    if (strncmp(name, base, b) || strncmp(name + b, ".tmp.", 5) || strncmp(name + b + 5, pid, p) ||
        name[b + 5 + p] != '.')
        return 0;
    const char *k = name + b + 5 + p + 1;
    if (!*k) return 0;
    for (; *k; k++)
        if (*k < '0' || *k > '9') return 0;
    return 1;
}

/* The PID of DIR.old.PID.N (name) as text, for tmp_of_pid; NULL when none. */
static char *pid_of_old(const char *base, const char *name)
{
    const char *p = name + strlen(base) + 5, *dot = strchr(p, '.');
    return dot ? rf_strndup(p, (size_t)(dot - p)) : NULL;
}

/* Does a DIR.tmp.PID.N of old's writer (old: DIR.old.PID.M) beside final
** hold a manifest: a new state complete and synced, that the writer had
** not yet renamed into place when it was killed? Its path (to free) in
** *tmp where it does. */
static int complete_new_state(const char *final, const char *parent, const char *base, const char *old, char **tmp)
{
    *tmp = NULL;
    char *pid = pid_of_old(base, old);
    DIR *dh = pid ? opendir(parent) : NULL;
    struct dirent *e;
    while (dh && !*tmp && (e = readdir(dh)) != NULL) {
        if (!tmp_of_pid(base, pid, e->d_name)) continue;
        char *path = beside(final, parent, e->d_name);
        struct stat sb;
        if (path && lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && rf_db_is_database(path)) *tmp = path;
        else free(path);
    }
    if (dh) closedir(dh);
    free(pid);
    return *tmp != NULL;
}

/* The lock of the folder at path (a writer holds its database's lock from
** before its commit to after it, rf_file_lock_folder, and a rename keeps
** it on the folder): taken exclusively, waiting (wait) or not; the
** descriptor to close, -1 where it is not taken (held elsewhere: a writer
** of another host, whose PID means nothing here, still at work), -2 where
** the file system has no such locks (then the PID alone says). */
static int lock_aside(const char *path, int wait)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int r;
    while ((r = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) != 0 && errno == EINTR) {}
    if (r == 0) return fd;
    int e = errno;
    close(fd);
    return e == ENOLCK || e == EOPNOTSUPP || e == ENOTSUP || e == ENOSYS || e == EINVAL ? -2 : -1;
}

/* rename(from, to) where nothing is at to (an empty folder created there
** meanwhile is not replaced): renameat2's RENAME_NOREPLACE where the
** system has it, else a check first. */
static int rename_noreplace(const char *from, const char *to)
{
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
#endif
    struct stat sb;
    if (lstat(to, &sb) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(from, to);
}

static void sync_folder(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

static rf_status restore_missing(const char *dir, int depth, rf_diags *d);

/* final is a symbolic link: where the folder it names is missing, that
** one (a writer reached the database through the link and renamed the
** folder it names: `redfox exec` does), a link to a link followed so a few
** times. */
static rf_status restore_through_link(const char *final, int depth, rf_diags *d)
{
    struct stat sb;
    char to[4096];
    ssize_t n;
    if (depth >= 8 || stat(final, &sb) == 0 || errno != ENOENT || (n = readlink(final, to, sizeof to - 1)) <= 0 ||
        n >= (ssize_t)sizeof to - 1)
        return RF_OK;
    to[n] = 0;
    char *parent = to[0] == '/' ? NULL : parent_of(final);
    char *target = to[0] == '/' ? rf_strdup(to) : parent ? rf_sprintf("%s/%s", parent, to) : NULL;
    rf_status st = target ? restore_missing(target, depth + 1, d) : RF_ENOMEM;
    free(target);
    free(parent);
    return st;
}

rf_status rf_db_restore_missing(const char *dir, rf_diags *d) { return restore_missing(dir, 0, d); }

static rf_status restore_missing(const char *dir, int depth, rf_diags *d)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    char *final = rf_strndup(dir, n);
    if (!final) return RF_ENOMEM;
    struct stat sb;
    if (lstat(final, &sb) == 0 || errno != ENOENT) { /* there (or not to be known here: the caller says) */
        rf_status lst = lstat(final, &sb) == 0 && S_ISLNK(sb.st_mode) ? restore_through_link(final, depth, d) : RF_OK;
        free(final);
        return lst;
    }
    const char *slash = strrchr(final, '/'), *base = slash ? slash + 1 : final;
    char *parent = parent_of(final);
    /* the old states that dead writers of final moved aside: whole (a
    ** commit renames a database aside, then removes it only once the new
    ** one is in place, which it is not) */
    char *found = NULL, *other = NULL;
    DIR *dh = parent ? opendir(parent) : NULL;
    struct dirent *e;
    while (dh && (e = readdir(dh)) != NULL) {
        if (!gone_writers(final, e->d_name, ".old.")) continue;
        char *path = beside(final, parent, e->d_name);
        if (path && lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && rf_db_is_database(path)) {
            if (!found) {
                found = path;
                path = NULL;
            } else if (!other) {
                other = path;
                path = NULL;
            }
        }
        free(path);
    }
    if (dh) closedir(dh);
    rf_status st = RF_OK;
    if (found && other) {
        /* two commits killed so (a database made at final in between, then
        ** lost again): which is the later is not to be guessed */
        rf_error(d, rf_mkloc(final, 0, 0),
                 "does not exist; writers of this database killed during their commits left more than one state of "
                 "it beside it (%s, %s): rename the one to keep to %s",
                 found, other, final);
        st = RF_EUSER;
    } else if (found) {
        /* the lock its writer held (waited for: a writer of another host
        ** still between its two renames ends first, and finds final there) */
        int lk = lock_aside(found, 1);
        if (lk != -1 && rename_noreplace(found, final) == 0) {
            sync_folder(parent);
            rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(final, 0, 0),
                        "put the database back from %s: a writer of it killed during its commit, between moving "
                        "the old state aside and the new one into place (the system has no atomic exchange), left "
                        "none here; this is the state before that commit, which had not ended",
                        found);
            /* that commit's new state, never put in place nor promised */
            char *tmp = NULL;
            if (complete_new_state(final, parent, base, strrchr(found, '/') ? strrchr(found, '/') + 1 : found, &tmp) && remove_dir(tmp, final) == 0)
                rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(tmp, 0, 0),
                            "removed this folder: the new state of that commit, which it had not put in place");
            free(tmp);
        } else if (lk != -1 && errno != ENOENT && errno != EEXIST && errno != ENOTEMPTY) {
            /* (ENOENT, EEXIST: another process put it back, or made final, first) */
            rf_error(d, rf_mkloc(final, 0, 0),
                     "does not exist: %s is the database, as it was before a commit whose writer was killed during "
                     "it, and cannot be put back: %s (rename it to %s)",
                     found, strerror(errno), final);
            st = RF_EIO;
        }
        if (lk >= 0) close(lk);
    }
    free(found);
    free(other);
    free(parent);
    free(final);
    return st;
}

/* The old states (DIR.old.PID.N) of writers of final that are gone and
** whose commits ended (final is a database, and no new state of theirs
** waits beside it: the rename that put it in place was made), not locked
** by anyone: what remove_old_state would have done, each with a note. A
** user's entries in one (carry_moves had not run) are moved into final
** first; one that cannot be stays, and so does the folder. */
static void remove_stale_olds(const char *final, rf_diags *d)
{
    if (!rf_db_is_database(final)) return;
    const char *slash = strrchr(final, '/'), *base = slash ? slash + 1 : final;
    char *parent = parent_of(final);
    DIR *dh = parent ? opendir(parent) : NULL;
    struct dirent *e;
    while (dh && (e = readdir(dh)) != NULL) {
        if (!gone_writers(final, e->d_name, ".old.")) continue;
        char *path = beside(final, parent, e->d_name), *tmp = NULL;
        struct stat sb;
        if (!path || lstat(path, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
            complete_new_state(final, parent, base, e->d_name, &tmp)) {
            free(tmp);
            free(path);
            continue;
        }
        int lk = lock_aside(path, 0);
        if (lk != -1) {
            recover_from(path, final, d); /* (its subfolders, each with a note) */
            carry_moves(path, final);
            if (remove_dir(path, final) == 0)
                rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(path, 0, 0),
                            "removed this folder, the database's state before a commit that ended: its writer was "
                            "killed before it removed it");
            else if (errno == ENOTEMPTY || errno == EEXIST)
                rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(path, 0, 0),
                            "this folder is the database's state before a commit that ended (its writer was killed "
                            "before it removed it); its database files are removed, the files that are not the "
                            "database's are kept (move or remove them)");
        }
        if (lk >= 0) close(lk);
        free(path);
    }
    if (dh) closedir(dh);
    free(parent);
}

/* The old state's folder, removed once the commit is done; where it stays
** (the system refused), a warning names it: it may be removed (the next
** writer of the database removes it once this process is gone,
** remove_stale_tmps). */
static void remove_old_state(const rf_db_writer *w, const char *dir, const char *final, rf_diags *d)
{
    /* the files carry_links copied: the file itself over its copy (one
    ** rename: final holds the one or the other at every moment), so that
    ** it keeps its owner, its links and its inode */
    for (int32_t i = 0; i < w->ncopies; i++) {
        char *a = rf_sprintf("%s/%s", dir, w->copies[i]), *b = rf_sprintf("%s/%s", final, w->copies[i]);
        if (a && b) (void)rename(a, b);
        free(a);
        free(b);
    }
    carry_moves(dir, final);
    int r = remove_dir(dir, final);
    if (r != 0 && (errno == ENOTEMPTY || errno == EEXIST))
        /* (a user's file that could be neither linked nor moved into the
        ** new folder: the disk full, say; it is not to be removed) */
        rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(dir, 0, 0),
                    "this folder, the database's state before the commit, keeps files that were in the database's "
                    "folder and are not the database's, which could not be carried into the new one (the commit is "
                    "done; move them back)");
    else if (r != 0 && errno != ENOENT)
        rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(dir, 0, 0),
                    "cannot remove this folder, the database's state before the commit: %s (the commit is done; the "
                    "folder may be removed)",
                    strerror(errno));
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

/* The in-place commit: every appended file is synced (rf_db_writer_finish_column);
** the new manifest is written aside (manifest.rfdb.new), synced, and renamed
** over the old one, and the rename made durable. Until that rename the old
** manifest names exactly the old bytes of every file, which nothing
** changed; after it the new one names the new. */
static rf_status commit_in_place(rf_db_writer *w, rf_diags *d)
{
    rf_buf m;
    rf_buf_init(&m);
    rf_db_encode(&w->db, &m);
    char *npath = rf_sprintf("%s/%s.new", w->tmp_dir, RF_DB_MANIFEST);
    char *mpath = rf_sprintf("%s/%s", w->tmp_dir, RF_DB_MANIFEST);
    rf_status st = m.oom || !npath || !mpath ? RF_ENOMEM : RF_OK;
    int fd = st ? -1 : open(npath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (!st && (fd < 0 || write_all(fd, m.data, m.len) || fsync(fd) != 0))
        st = io_error(d, npath, "write the manifest");
    if (fd >= 0 && close(fd) != 0 && !st) st = io_error(d, npath, "write the manifest");
    if (!st && rename(npath, mpath) != 0) st = io_error(d, mpath, "replace the manifest");
    if (!st) {
        w->committed = 1;
        sync_committed(w->tmp_dir, d);
        rf_buf_free(&w->manifest);
        w->manifest = m; /* (the caller's record of what it committed) */
        rf_buf_init(&m);
    }
    rf_buf_free(&m);
    free(npath);
    free(mpath);
    return st;
}

rf_status rf_db_writer_commit(rf_db_writer *w, rf_diags *d)
{
    rf_status st = RF_OK;
    for (int32_t i = 0; i < w->db.ntables && !st; i++) st = rf_db_writer_end_table(w, i, d);
    if (st) return st;
    if (w->in_place) return commit_in_place(w, d);
    /* the data on disk before the manifest that vouches for it: one syncfs
    ** of the folder's file system (one journal commit, where an fsync per
    ** file may cost one each), else an fsync per file */
    int synced = 0;
#ifdef __linux__
    int dfd = open(w->tmp_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        synced = syncfs(dfd) == 0;
        close(dfd);
    }
#endif
    for (int32_t i = 0; i < w->db.ntables && !st && !synced; i++)
        for (int32_t c = 0; c < w->db.tables[i].ncols && !st; c++) {
            const rf_db_column *col = &w->db.tables[i].cols[c];
            for (int k = 0; k < 3 && !st; k++) {
                const char *f = k == 2 ? col->str_file : k ? col->dict_file : col->file;
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
    /* kept: once the folder is exchanged, another writer may lock the new
    ** folder and commit before this one's caller looks, so the caller's
    ** record of what it committed is these bytes, never DIR's manifest */
    rf_buf_free(&w->manifest);
    if (!st) w->manifest = m;
    else rf_buf_free(&m);
    free(mpath);
    if (!st) st = sync_path(w->tmp_dir, 1, d);
    if (st) return st;

    /* into place: an existing database is moved aside first, then removed */
    struct stat sb;
    char *old = NULL;
    if (lstat(w->final_dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) {
            rf_error(d, rf_mkloc(w->final_dir, 0, 0), "exists and is %s: not replacing it",
                     S_ISLNK(sb.st_mode) ? "a symbolic link (give the folder it names)" : "not a folder");
            return RF_EUSER;
        }
        if (rf_db_is_database(w->final_dir)) {
            /* (a manifest that is a link to nothing: refused, as at the start) */
            if ((st = rf_db_check_manifest(w->final_dir, d)) != RF_OK) return st;
            /* the user's files there stay at DIR: linked into the new
            ** folder first (and that made durable with it) */
            if (carry_links(w, w->final_dir, w->tmp_dir) && (st = sync_path(w->tmp_dir, 1, d)) != RF_OK) return st;
#ifdef SYS_renameat2
            /* one atomic exchange (Linux 3.15): DIR is the old database or
            ** the new one at every moment, never missing (`redfox exec`
            ** commits a transaction this way); the old one, now at the
            ** temporary name, is removed after */
            if (syscall(SYS_renameat2, AT_FDCWD, w->tmp_dir, AT_FDCWD, w->final_dir, 2 /* RENAME_EXCHANGE */) == 0) {
                w->committed = 1;
                remove_old_state(w, w->tmp_dir, w->final_dir, d);
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
    if (old) remove_old_state(w, old, w->final_dir, d);
    free(old);
#ifdef SYS_renameat2
durable:; /* (a statement: C11 allows no declaration right after a label, and clang refuses one) */
#endif
    /* the rename itself, durable */
    char *parent = rf_strdup(w->final_dir);
    if (parent) {
        char *sl = strrchr(parent, '/');
        if (sl == parent) sl[1] = 0;
        else if (sl) *sl = 0;
        else strcpy(parent, ".");
        sync_committed(parent, d);
    }
    free(parent);
    return RF_OK;
}

const char *rf_db_writer_manifest(const rf_db_writer *w, int64_t *len)
{
    *len = w->committed ? (int64_t)w->manifest.len : 0;
    return w->committed ? w->manifest.data : NULL;
}

void rf_db_writer_free(rf_db_writer *w)
{
    if (!w) return;
    rf_buf_free(&w->manifest);
    for (int32_t i = 0; i < w->ncopies; i++) free(w->copies[i]);
    free(w->copies);
    for (int32_t i = 0; i < w->db.ntables; i++) {
        for (int32_t c = 0; c < w->db.tables[i].ncols; c++) {
            wcol *wc = &w->w[i][c];
            if (wc->fd >= 0) close(wc->fd);
            if (wc->sfd >= 0) close(wc->sfd);
            free(wc->buf);
            free(wc->sbuf);
            free(wc->offs);
            rf_db_dict_free(wc->dict);
            free(wc->codes);
            free(wc->pend);
            free(wc->enc);
            free(w->db.tables[i].cols[c].blocks);
        }
        free(w->w[i]);
    }
    if (!w->committed && w->tmp_dir && !w->in_place) (void)remove_dir(w->tmp_dir, w->final_dir);
    free(w->w);
    free(w->db.tables);
    rf_arena_free(&w->db.arena);
    free(w->final_dir);
    free(w->tmp_dir);
    free(w);
}
