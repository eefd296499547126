/*
** common/rf_file.c: write aside, then rename into place (rf_file.h).
**
** Owns: temporaries' names, the signal-cleanup registry and its handler
** (and the signals it holds while commits are under way, for the caller
** to end the process by once they ended),
** the output folder's lock, the lock of a folder replaced as a whole (a
** database) or rewritten file by file (a text folder that `tpch gen` writes),
** and the tidy form of an input's relative file name (rf_file_name_tidy).
**
** The registry is a fixed array of atomic pointers to temporaries' names,
** so that the handler (which may run on any thread, at any moment) only
** loads pointers and calls unlink(), both async-signal-safe. A name is
** freed only after its slot was cleared and no handler has started: once
** one has, the process is about to end and nothing is freed any more (a
** thread that would free spins until the signal ends it). More pending
** temporaries than slots are still written aside and renamed; only their
** removal on a signal is lost.
*/
#include "rf_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NSLOTS 1024

static _Atomic(char *) slots[NSLOTS];
static atomic_int handler_started;
static atomic_uint name_counter;

static int slot_take(char *name)
{
    for (int i = 0; i < NSLOTS; i++) {
        char *expect = NULL;
        if (atomic_compare_exchange_strong(&slots[i], &expect, name)) return i;
    }
    return -1;
}

/* Clears a slot; returns only when the name it held may be freed. */
static void slot_release(int i)
{
    if (i < 0) return;
    atomic_store(&slots[i], NULL);
    while (atomic_load(&handler_started)) sched_yield(); /* the process is ending */
}

/* Commits under way that a signal waits for (rf_file_commit_begin,
** rf_file_hold_signals: on any thread, several at once), and the signal
** that came during one (kept until the process ends by it). */
static atomic_int holds, held_signal;

static void install(int sig);

static void on_signal(int sig)
{
    /* held first, then the holds read: a commit whose hold ends between
    ** the two finds the signal (rf_file_commit_end, rf_file_signal_held) */
    atomic_store(&held_signal, sig);
    if (atomic_load(&holds) > 0) {
        install(sig); /* (SA_RESETHAND reset it: a second one is held too) */
        return;
    }
    atomic_store(&handler_started, 1);
    for (int i = 0; i < NSLOTS; i++) {
        char *p = atomic_load(&slots[i]);
        if (p) unlink(p);
    }
    /* The default action, the signal unblocked, then the signal again: the
    ** process ends here with the usual status. Not left to SA_RESETHAND and
    ** the handler's return: a library's own handlers (NVRTC's, while it
    ** compiles) put this one back, and the signal then came back to it at
    ** the same instruction for ever (a SIGTERM during `redfox compile` spun
    ** at 100 % CPU until SIGKILL). */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig); /* (not reached: the default action of these signals ends the process) */
}

/* SA_RESTART: a signal held while a commit ends interrupts no system call
** of the threads that go on (a write to standard output, a lock awaited) */
static void install(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

void rf_file_cleanup_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue; /* nohup */
        install(sigs[i]);
    }
    signal(SIGXFSZ, SIG_IGN);
}

void rf_file_commit_begin(void) { atomic_fetch_add(&holds, 1); }

void rf_file_commit_end(void)
{
    if (atomic_fetch_sub(&holds, 1) != 1) return;
    int sig = atomic_exchange(&held_signal, 0);
    if (sig) on_signal(sig); /* (no hold now: this ends the process) */
}

void rf_file_hold_signals(void) { atomic_fetch_add(&holds, 1); }
void rf_file_release_signals(void) { atomic_fetch_sub(&holds, 1); }
int rf_file_signal_held(void) { return atomic_load(&held_signal); }

void rf_file_end_by_signal(void)
{
    int sig = atomic_load(&held_signal);
    if (sig && atomic_load(&holds) == 0) on_signal(sig);
}

const char *rf_file_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* ---- the protocol --------------------------------------------------- */

void rf_file_out_init(rf_file_out *f)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->slot = -1;
}

char *rf_file_dirname(const char *path)
{
    const char *s = strrchr(path, '/');
    if (!s) return rf_strdup(".");
    if (s == path) return rf_strdup("/");
    return rf_strndup(path, (size_t)(s - path));
}

void rf_file_name_tidy(char *name)
{
    char *w = name;
    const char *r = name;
    while (*r) {
        const char *e = strchr(r, '/');
        size_t n = e ? (size_t)(e - r) : strlen(r);
        if (n && !(n == 1 && r[0] == '.')) {
            if (w > name) *w++ = '/';
            memmove(w, r, n);
            w += n;
        }
        r += n + (e != NULL);
    }
    if (w > name) *w = 0; /* else ("." or "/"): as it was */
}

int rf_file_same_name(const char *a, const char *b)
{
    if (!strcmp(a, b)) return 1;
    char *ta = rf_strdup(a), *tb = rf_strdup(b);
    int same = ta && tb;
    if (same) {
        rf_file_name_tidy(ta);
        rf_file_name_tidy(tb);
        same = !strcmp(ta, tb);
    }
    free(ta);
    free(tb);
    return same;
}

static rf_status fail(rf_file_out *f, rf_diags *d, const char *what, int e)
{
    if (!f->err_no) f->err_no = e ? e : EIO;
    if (!f->reported) {
        rf_error(d, rf_mkloc(f->path, 0, 0), "cannot %s: %s", what, strerror(f->err_no));
        f->reported = 1;
    }
    return f->err_no == ENOMEM ? RF_ENOMEM : RF_EIO;
}

/* DIR/.BASE.redfox-PID-N.tmp, the base cut so that the name fits NAME_MAX. */
static char *temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path + 1) : 0;
    const char *base = path + dlen;
    int blen = (int)strlen(base);
    if (blen > 180) blen = 180;
    return rf_sprintf("%.*s.%.*s.redfox-%ld-%u.tmp", (int)dlen, path, blen, base, (long)getpid(),
                      atomic_fetch_add(&name_counter, 1));
}

rf_status rf_file_out_open(rf_file_out *f, const char *path, rf_diags *d)
{
    rf_file_out_init(f);
    if (!(f->path = rf_strdup(path))) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "out of memory");
        return RF_ENOMEM;
    }
    rf_loc loc = rf_mkloc(path, 0, 0);
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (S_ISLNK(sb.st_mode)) {
            rf_error(d, loc,
                     "cannot write: it is a symbolic link, and redfox does not write through links "
                     "(remove it or choose another name)");
            f->reported = 1;
            f->err_no = ELOOP;
            return RF_EIO;
        }
        if (S_ISDIR(sb.st_mode)) return fail(f, d, "write", EISDIR);
        if (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)) {
            f->direct = 1;
            f->fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
            if (f->fd < 0) return fail(f, d, "write", errno);
            return RF_OK;
        }
    } else if (errno != ENOENT) {
        return fail(f, d, "write", errno);
    }
    for (int tries = 0; tries < 100 && f->fd < 0; tries++) {
        free(f->tmp);
        if (!(f->tmp = temp_name(path))) return fail(f, d, "write", ENOMEM);
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (f->fd < 0 && errno != EEXIST) break;
    }
    if (f->fd < 0) {
        int e = errno;
        free(f->tmp);
        f->tmp = NULL;
        return fail(f, d, "write", e);
    }
    f->slot = slot_take(f->tmp);
    return RF_OK;
}

rf_status rf_file_out_write(rf_file_out *f, const void *p, int64_t n)
{
    if (f->err_no || f->fd < 0) {
        if (!f->err_no) f->err_no = EBADF;
        return RF_EIO;
    }
    const char *s = p;
    while (n > 0) {
        size_t part = n > ((int64_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
        ssize_t w = write(f->fd, s, part);
        if (w < 0) {
            if (errno == EINTR) continue;
            f->err_no = errno;
            return RF_EIO;
        }
        if (w == 0) { /* should not happen for files; avoid spinning */
            f->err_no = ENOSPC;
            return RF_EIO;
        }
        s += w;
        n -= w;
    }
    return RF_OK;
}

int rf_file_out_write_cb(void *ctx, const void *p, int64_t n) { return rf_file_out_write(ctx, p, n) ? -1 : 0; }

rf_status rf_file_out_close(rf_file_out *f, rf_diags *d)
{
    if (f->err_no) {
        if (f->fd >= 0) close(f->fd);
        f->fd = -1;
        return fail(f, d, "write", f->err_no);
    }
    if (f->fd < 0) return f->closed ? RF_OK : fail(f, d, "write", EBADF);
    int e = 0;
    /* fsync before the rename: otherwise a crash may leave the new name on
    ** an empty file. Devices and pipes may refuse it; they keep nothing. */
    if (fsync(f->fd) != 0 && !(f->direct && (errno == EINVAL || errno == EROFS || errno == ENOTSUP))) e = errno;
    if (close(f->fd) != 0 && !e && errno != EINTR) e = errno;
    f->fd = -1;
    if (e) return fail(f, d, "write", e);
    f->closed = 1;
    return RF_OK;
}

rf_status rf_file_out_rename(rf_file_out *f, rf_diags *d)
{
    if (!f->closed) return fail(f, d, "write", f->err_no ? f->err_no : EBADF);
    if (f->direct || !f->tmp) return RF_OK;
    if (rename(f->tmp, f->path) != 0) return fail(f, d, "replace it", errno);
    slot_release(f->slot);
    f->slot = -1;
    free(f->tmp);
    f->tmp = NULL;
    return RF_OK;
}

rf_status rf_file_sync_dir(const char *path, rf_diags *d)
{
    char *dir = rf_file_dirname(path);
    if (!dir) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "out of memory");
        return RF_ENOMEM;
    }
    int e = 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) e = errno;
    else {
        /* some file systems cannot sync a folder; their renames are as
        ** durable as they get */
        if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP) e = errno;
        close(fd);
    }
    if (e) rf_error(d, rf_mkloc(dir, 0, 0), "cannot sync the folder: %s", strerror(e));
    free(dir);
    return e ? RF_EIO : RF_OK;
}

rf_status rf_file_out_commit(rf_file_out *f, rf_diags *d)
{
    rf_status st = rf_file_out_close(f, d);
    if (!st) st = rf_file_out_rename(f, d);
    if (!st && !f->direct) st = rf_file_sync_dir(f->path, d);
    return st;
}

void rf_file_out_abort(rf_file_out *f)
{
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    if (f->tmp) unlink(f->tmp);
    slot_release(f->slot);
    f->slot = -1;
    free(f->tmp);
    free(f->path);
    f->tmp = f->path = NULL;
}

static int64_t remove_stale(const char *path, int64_t min_age_s);

int64_t rf_file_remove_stale(const char *path) { return remove_stale(path, 0); }
int64_t rf_file_remove_stale_unlocked(const char *path) { return remove_stale(path, RF_FILE_STALE_S); }

static int64_t remove_stale(const char *path, int64_t min_age_s)
{
    char *dir = rf_file_dirname(path);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *prefix = rf_sprintf(".%.180s.redfox-", base);
    DIR *dd = dir && prefix ? opendir(dir) : NULL;
    int64_t n = 0;
    struct dirent *e;
    size_t pl = prefix ? strlen(prefix) : 0;
    while (dd && (e = readdir(dd))) {
        if (strncmp(e->d_name, prefix, pl) != 0) continue;
        char *end;
        long pid = strtol(e->d_name + pl, &end, 10);
        unsigned counter;
        int used = 0;
        if (pid <= 0 || *end != '-' || sscanf(end + 1, "%u.tmp%n", &counter, &used) != 1 || end[1 + used]) continue;
        if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive */
        struct stat sb;
        if (min_age_s > 0 && (fstatat(dirfd(dd), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) ||
                              (int64_t)(time(NULL) - sb.st_mtime) < min_age_s))
            continue;
        if (unlinkat(dirfd(dd), e->d_name, 0) == 0) n++;
    }
    if (dd) closedir(dd);
    free(prefix);
    free(dir);
    return n;
}

/* ---- the folder's lock ---------------------------------------------- */

rf_status rf_file_lock_try(const char *dir, int *fd, int *busy_fd, rf_diags *d)
{
    *fd = *busy_fd = -1;
    char *lp = rf_sprintf("%s/%s", dir, RF_FILE_LOCK_NAME);
    if (!lp) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "out of memory");
        return RF_ENOMEM;
    }
    int l = open(lp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (l < 0) {
        int e = errno;
        struct stat sb;
        /* (O_NOFOLLOW's ELOOP said "Too many levels of symbolic links" of a
        ** lock file that is one link: what the user must remove is named) */
        if (e == ELOOP && lstat(lp, &sb) == 0 && S_ISLNK(sb.st_mode))
            rf_error(d, rf_mkloc(lp, 0, 0),
                     "cannot lock the output folder: its lock file is a symbolic link, never followed (remove it)");
        else if (e == EISDIR)
            rf_error(d, rf_mkloc(lp, 0, 0), "cannot lock the output folder: its lock file is a folder (remove it)");
        else
            rf_error(d, rf_mkloc(lp, 0, 0), "cannot lock the output folder: %s", strerror(e));
        free(lp);
        return RF_EIO;
    }
    int r;
    while ((r = flock(l, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {}
    if (r == 0) {
        free(lp);
        rf_status st = rf_file_renames_finish(dir, d);
        if (st) close(l);
        else *fd = l;
        return st;
    }
    if (errno == EWOULDBLOCK) *busy_fd = l;
    else {
        int e = errno;
        close(l);
        rf_error(d, rf_mkloc(lp, 0, 0), "cannot lock the output folder: %s", strerror(e));
        free(lp);
        return RF_EIO;
    }
    free(lp);
    return RF_OK;
}

/* flock's answers for a file system that has no such locks (NFS without its
** lock service, some FUSE file systems), not for a lock held elsewhere. */
static int no_flock_here(int e)
{
    return e == ENOLCK || e == EOPNOTSUPP || e == ENOTSUP || e == ENOSYS || e == EINVAL;
}

/* A wait for a lock while this process holds the signals (a caller that
** must remove its temporary folder before it ends): a blocking flock would
** restart after the handler (SA_RESTART) and a ^C would wait for another
** process's run or transaction to end, so the lock is tried every few
** milliseconds instead, until it is taken (0) or a signal is held (-1,
** errno ECANCELED). */
static int flock_unless_signalled(int fd, int how)
{
    for (;;) {
        if (atomic_load(&held_signal)) {
            errno = ECANCELED;
            return -1;
        }
        if (flock(fd, how | LOCK_NB) == 0) return 0;
        if (errno != EWOULDBLOCK && errno != EINTR) return -1;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* unlocked_ok: where the file system has no flock, RF_OK with *fd = -1
** (a text folder's reader, which may read as it did before the lock). */
static rf_status lock_folder(const char *dir, int how, int unlocked_ok, int *fd, int *waited, rf_diags *d)
{
    *fd = -1;
    *waited = 0;
    for (;;) {
        int l = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (l < 0) {
            rf_error(d, rf_mkloc(dir, 0, 0), "cannot lock the folder: %s", strerror(errno));
            return RF_EIO;
        }
        int r;
        while ((r = flock(l, how | LOCK_NB)) != 0 && errno == EINTR) {}
        if (r != 0 && errno == EWOULDBLOCK) {
            *waited = 1;
            if (atomic_load(&holds) > 0) r = flock_unless_signalled(l, how);
            else
                while ((r = flock(l, how)) != 0 && errno == EINTR) {}
        }
        if (r != 0 && errno == ECANCELED) {
            close(l);
            rf_error(d, rf_mkloc(dir, 0, 0), "stopped by %s while waiting for another process's lock on this folder",
                     rf_file_signal_name(atomic_load(&held_signal)));
            return RF_EUSER;
        }
        if (r != 0) {
            int e = errno;
            close(l);
            if (unlocked_ok && no_flock_here(e)) return RF_OK;
            rf_error(d, rf_mkloc(dir, 0, 0), "cannot lock the folder: %s", strerror(e));
            return RF_EIO;
        }
        struct stat held, now;
        if (fstat(l, &held) == 0 && stat(dir, &now) == 0 && held.st_dev == now.st_dev && held.st_ino == now.st_ino) {
            *fd = l;
            return RF_OK;
        }
        close(l); /* replaced while we waited: lock the folder there now */
    }
}

rf_status rf_file_lock_folder(const char *dir, int *fd, int *waited, rf_diags *d)
{
    return lock_folder(dir, LOCK_EX, 0, fd, waited, d);
}

rf_status rf_file_lock_folder_shared(const char *dir, int *fd, int *waited, rf_diags *d)
{
    return lock_folder(dir, LOCK_SH, 0, fd, waited, d);
}

rf_status rf_file_lock_text_folder_shared(const char *dir, int *fd, int *waited, rf_diags *d)
{
    *fd = -1;
    *waited = 0;
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return RF_OK;
    int probe = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int unlockable = probe < 0 && errno == EACCES;
    if (probe >= 0) close(probe);
    rf_status st = unlockable ? RF_OK : lock_folder(dir, LOCK_SH, 1, fd, waited, d);
    /* a killed writer's renames made before anything is read (several
    ** readers may finish one journal at once: rf_file_renames.c) */
    if (!st) st = rf_file_renames_finish(dir, d);
    if (st && *fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return st;
}

rf_status rf_file_lock_wait(const char *dir, int busy_fd, rf_diags *d)
{
    int r;
    while ((r = flock(busy_fd, LOCK_EX)) != 0 && errno == EINTR) {}
    if (r == 0) return rf_file_renames_finish(dir, d); /* (on failure the caller releases busy_fd) */
    rf_error(d, rf_mkloc(dir, 0, 0), "cannot lock the output folder: %s", strerror(errno));
    return RF_EIO;
}

void rf_file_unlock(int fd)
{
    if (fd >= 0) close(fd); /* closing the last descriptor releases the flock */
}
