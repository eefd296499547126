/*
** common/rf_file_renames.c: a set of renames into one folder made all or
** nothing, as redfox's readers and writers of the folder see it (rf_file.h).
**
** Owns: the journal DIR/.redfox-renames (its format, its writing before the
** first rename, its removal after the last) and the finishing of a journal
** that a writer killed between two renames left (rf_file_renames_finish).
**
** POSIX has no rename of several files at once: a writer killed (SIGKILL, a
** crash) between two of its renames leaves some files new and some old. So
** before the first rename the writer lists the renames in the journal,
** written aside, synced and renamed into place (rf_file_out_commit), and
** removes it once the last rename is synced. Every temporary it lists is
** already complete and synced, so a journal found later is finished by
** going forward: each temporary still there renamed over its final name.
** That is idempotent (a temporary gone was renamed), so several processes
** may finish one journal at once: each reads no file of the folder before
** its own pass ends, and after it every listed rename is made; the journal
** is removed only after every rename, so a process that finds none reads a
** finished folder. A live writer writes its journal only while it holds the
** folder's lock exclusively (the renames' lock, rf_file_lock_folder), which
** the readers hold shared: a journal a reader or a writer finds is always a
** dead writer's.
**
** The format, text: "redfox renames 1\n", a line "TEMPORARY/FINAL" per
** rename (names in DIR, neither holding '/' or a line break; the temporary
** one rf_file_out_open names for FINAL), then "end\n".
*/
#include "rf_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEAD "redfox renames 1\n"
#define TAIL "end\n"
#define MAX_JOURNAL ((int64_t)64 << 20)

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void sync_folder(const char *dir)
{
    /* (a folder some file systems cannot sync: its renames are as durable
    ** as they get there; rf_file_sync_dir reports the others) */
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

rf_status rf_file_renames_begin(const char *dir, const rf_file_out *files, int64_t n, rf_diags *d)
{
    char *jpath = rf_sprintf("%s/%s", dir, RF_FILE_RENAMES_NAME);
    if (!jpath) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "out of memory");
        return RF_ENOMEM;
    }
    rf_buf b;
    rf_buf_init(&b);
    rf_buf_puts(&b, HEAD);
    int64_t listed = 0;
    rf_status st = RF_OK;
    for (int64_t i = 0; i < n && !st; i++) {
        const rf_file_out *f = &files[i];
        if (!f->tmp || f->direct) continue; /* nothing to rename (a device written in place) */
        const char *t = base_of(f->tmp), *p = base_of(f->path);
        if (strchr(t, '\n') || strchr(p, '\n')) {
            rf_error(d, rf_mkloc(f->path, 0, 0), "cannot write: a file name holding a line break");
            st = RF_EUSER;
        }
        rf_buf_printf(&b, "%s/%s\n", t, p);
        listed++;
    }
    rf_buf_puts(&b, TAIL);
    if (!st && b.oom) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "out of memory");
        st = RF_ENOMEM;
    }
    /* a single rename needs no journal: it is atomic by itself */
    if (!st && listed > 1) {
        rf_file_remove_stale(jpath); /* a killed writer's half-written journal (the caller holds DIR's lock) */
        rf_file_out j;
        rf_file_out_init(&j);
        st = rf_file_out_open(&j, jpath, d);
        if (!st) st = rf_file_out_write(&j, b.data, (int64_t)b.len);
        if (!st) st = rf_file_out_commit(&j, d);
        else (void)rf_file_out_close(&j, d); /* (reports the write's failure) */
        rf_file_out_abort(&j);
    }
    rf_buf_free(&b);
    free(jpath);
    return st;
}

rf_status rf_file_renames_end(const char *dir, rf_diags *d)
{
    char *jpath = rf_sprintf("%s/%s", dir, RF_FILE_RENAMES_NAME);
    if (!jpath) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "out of memory");
        return RF_ENOMEM;
    }
    rf_status st = RF_OK;
    if (unlink(jpath) != 0 && errno != ENOENT) {
        rf_error(d, rf_mkloc(jpath, 0, 0),
                 "cannot remove this list of the renames just made: %s (the files are all in place; it may be "
                 "removed)",
                 strerror(errno));
        st = RF_EIO;
    } else {
        sync_folder(dir);
    }
    free(jpath);
    return st;
}

/* Is t the temporary rf_file_out_open names for final (".FINAL.redfox-PID-N.tmp",
** FINAL cut at 180 bytes), both plain names in the folder? */
static int names_ok(const char *t, size_t tl, const char *p, size_t pl)
{
    if (!pl || !tl || memchr(t, '/', tl) || memchr(p, '/', pl)) return 0;
    if ((pl == 1 && p[0] == '.') || (pl == 2 && p[0] == '.' && p[1] == '.')) return 0;
    /* (never over the journal itself or the folder's lock file) */
    if ((pl == strlen(RF_FILE_RENAMES_NAME) && !memcmp(p, RF_FILE_RENAMES_NAME, pl)) ||
        (pl == strlen(RF_FILE_LOCK_NAME) && !memcmp(p, RF_FILE_LOCK_NAME, pl)))
        return 0;
    size_t cut = pl > 180 ? 180 : pl;
    const char *mid = ".redfox-", *end = ".tmp";
    return tl > 1 + cut + strlen(mid) + strlen(end) && t[0] == '.' && !memcmp(t + 1, p, cut) &&
           !memcmp(t + 1 + cut, mid, strlen(mid)) && !memcmp(t + tl - strlen(end), end, strlen(end));
}

static rf_status cannot_finish(const char *dir, const char *why, rf_diags *d)
{
    rf_error(d, rf_mkloc(dir, 0, 0),
             "a redfox writer killed while it put its files in place left them half done (some new, some old: "
             "%s/%s lists them); cannot finish that: %s (a redfox run, tpch run or tpch gen that may write this "
             "folder finishes it when it reads or writes it)",
             dir, RF_FILE_RENAMES_NAME, why);
    return RF_EIO;
}

rf_status rf_file_renames_finish(const char *dir, rf_diags *d)
{
    char *jpath = rf_sprintf("%s/%s", dir, RF_FILE_RENAMES_NAME);
    if (!jpath) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "out of memory");
        return RF_ENOMEM;
    }
    int fd = open(jpath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(jpath);
        /* none (or no folder: the caller says so) */
        if (e == ENOENT || e == ENOTDIR) return RF_OK;
        return cannot_finish(dir, strerror(e), d);
    }
    rf_buf b;
    rf_buf_init(&b);
    char chunk[65536];
    ssize_t r;
    int e = 0;
    while ((r = read(fd, chunk, sizeof chunk)) != 0) {
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            e = errno;
            break;
        }
        rf_buf_append(&b, chunk, (int64_t)r);
        if ((int64_t)b.len > MAX_JOURNAL) break;
    }
    close(fd);
    rf_status st = RF_OK;
    if (e) st = cannot_finish(dir, strerror(e), d);
    else if (b.oom) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "out of memory");
        st = RF_ENOMEM;
    }
    /* checked whole before any rename: a damaged journal renames nothing */
    size_t hl = strlen(HEAD), tl = strlen(TAIL);
    const char *s = b.data;
    size_t len = (size_t)b.len;
    /* (no NUL byte: the renames below read each line as a C string) */
    int well_formed = !st && (int64_t)len <= MAX_JOURNAL && len >= hl + tl && !memchr(s, 0, len) &&
                      !memcmp(s, HEAD, hl) && !memcmp(s + len - tl, TAIL, tl);
    int64_t pairs = 0;
    for (size_t at = hl; well_formed && at < len - tl;) {
        const char *nl = memchr(s + at, '\n', len - tl - at);
        const char *sl = nl ? memchr(s + at, '/', (size_t)(nl - s - at)) : NULL;
        well_formed = sl && names_ok(s + at, (size_t)(sl - s - at), sl + 1, (size_t)(nl - sl - 1));
        at = nl ? (size_t)(nl - s) + 1 : len;
        pairs++;
    }
    if (!st && !well_formed) {
        rf_error(d, rf_mkloc(jpath, 0, 0),
                 "not a list of renames as redfox writes them: not finished (its writer's files in %s may be "
                 "some new and some old; once they are as they should be, remove it)",
                 dir);
        st = RF_EUSER;
    }
    int64_t renamed = 0;
    for (size_t at = hl; !st && at < len - tl;) {
        char *line = rf_strndup(s + at, (size_t)((const char *)memchr(s + at, '\n', len - at) - (s + at)));
        at += strlen(line ? line : "") + 1;
        char *sl = line ? strchr(line, '/') : NULL;
        if (!sl) {
            rf_error(d, rf_mkloc(NULL, 0, 0), "out of memory");
            st = RF_ENOMEM;
            free(line);
            break;
        }
        *sl = 0;
        char *t = rf_sprintf("%s/%s", dir, line), *p = rf_sprintf("%s/%s", dir, sl + 1);
        struct stat sb;
        if (!t || !p) {
            rf_error(d, rf_mkloc(NULL, 0, 0), "out of memory");
            st = RF_ENOMEM;
        } else if (lstat(t, &sb) != 0) {
            /* (renamed before the kill, or by another process finishing it now) */
            if (errno != ENOENT) st = cannot_finish(dir, strerror(errno), d);
        } else if (rename(t, p) != 0) {
            if (errno != ENOENT) st = cannot_finish(dir, strerror(errno), d);
        } else {
            renamed++;
        }
        free(t);
        free(p);
        free(line);
    }
    if (!st) {
        sync_folder(dir);
        if (unlink(jpath) != 0 && errno != ENOENT) st = cannot_finish(dir, strerror(errno), d);
        else sync_folder(dir);
    }
    if (!st)
        rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(dir, 0, 0),
                    "finished putting in place the %lld files a redfox writer killed between its renames left "
                    "half done (%lld renamed now)",
                    (long long)pairs, (long long)renamed);
    rf_buf_free(&b);
    free(jpath);
    return st;
}
