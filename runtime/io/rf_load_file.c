/*
** runtime/io/rf_load_file.c: an input file brought into memory for the
** loader (runtime/io/rf_load.c).
**
** Owns: opening the file, mapping a regular file or reading any other
** (a pipe, a FIFO, a special file) whole, with the progress of that read,
** releasing it, or handing the bytes read whole to the caller (rf_rt_read_whole), and the error for a file that cannot be opened (the input
** predicate, the full path looked for, the reason, a missing folder named);
** the SIGBUS guard of mapped files that shrink while read (rf_rt_map_guard_add).
*/
#include "rf_load_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the SIGBUS guard (rf_load.h) ------------------------------------ */

/* Slots of guarded mappings: the handler only loads them (atomics) and
** maps zero pages, both safe in a signal handler. */
enum { GUARD_SLOTS = 64 };
static struct {
    _Atomic uintptr_t base, len;
    atomic_int shrunk;
} guard[GUARD_SLOTS];
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static uintptr_t guard_page = 4096;
static struct sigaction guard_prev; /* SIGBUS's disposition before the guard */

static void guard_handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < GUARD_SLOTS; i++) {
        uintptr_t b = atomic_load(&guard[i].base), n = atomic_load(&guard[i].len);
        if (!b || a < b || a >= b + n) continue;
        /* past the file's new end: zero pages from here to the mapping's
        ** end, so the faulting read, run again, reads NUL bytes */
        uintptr_t page = a & ~(guard_page - 1);
        if (mmap((void *)page, (size_t)(b + n - page), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
            MAP_FAILED) {
            atomic_store(&guard[i].shrunk, 1);
            return;
        }
        break;
    }
    /* not a guarded mapping's: the disposition before the guard (the
    ** default, or a rank's crash line, tools/world_start.c), which the
    ** read, run again, meets as it would have without the guard */
    sigaction(sig, &guard_prev, NULL);
}

static void guard_install(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    if (ps > 0) guard_page = (uintptr_t)ps;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = guard_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    /* an ignored SIGBUS stays so; any other disposition is kept for the
    ** faults that are not the guard's */
    if (sigaction(SIGBUS, NULL, &guard_prev) == 0 &&
        ((guard_prev.sa_flags & SA_SIGINFO) || guard_prev.sa_handler != SIG_IGN))
        sigaction(SIGBUS, &sa, NULL);
}

int rf_rt_map_guard_add(const void *base, int64_t len)
{
    if (!base || len <= 0) return 0;
    pthread_once(&guard_once, guard_install);
    for (int i = 0; i < GUARD_SLOTS; i++) {
        uintptr_t none = 0;
        if (atomic_compare_exchange_strong(&guard[i].base, &none, (uintptr_t)1)) {
            /* claimed (base 1 matches no address): the length, then the base */
            atomic_store(&guard[i].shrunk, 0);
            atomic_store(&guard[i].len, (uintptr_t)len);
            atomic_store(&guard[i].base, (uintptr_t)base);
            return i + 1;
        }
    }
    return 0;
}

void rf_rt_map_guard_remove(int slot)
{
    if (slot < 1 || slot > GUARD_SLOTS) return;
    atomic_store(&guard[slot - 1].len, 0);
    atomic_store(&guard[slot - 1].base, 0);
}

int rf_rt_map_guard_shrunk(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < GUARD_SLOTS; i++) {
        uintptr_t b = atomic_load(&guard[i].base), n = atomic_load(&guard[i].len);
        if (b > 1 && a >= b && a < b + n) return atomic_load(&guard[i].shrunk);
    }
    return 0;
}

static const char *os_reason(int err, char *buf, size_t n)
{
    /* the GNU strerror_r (we build with _GNU_SOURCE) may return a static string */
    return strerror_r(err, buf, n);
}

/* path made absolute (from the working folder), for messages; NULL on
** exhausted memory. */
static char *full_path(const char *path)
{
    if (path[0] == '/') return rf_strdup(path);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return rf_strdup(path);
    while (path[0] == '.' && path[1] == '/') path += 2;
    return rf_sprintf("%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path);
}

/* The error for a file that cannot be opened: the input predicate, the full
** path looked for, the system's reason, and a missing folder named as such. */
void rf_rt_load_open_error(const char *path, const char *pred, int err, rf_diags *d)
{
    char eb[256];
    rf_loc loc = {path, 0, 0};
    char *full = full_path(path);
    const char *fp = full ? full : path;
    const char *slash = strrchr(fp, '/');
    char *dir = slash && slash > fp ? rf_strndup(fp, (size_t)(slash - fp)) : NULL;
    struct stat ds;
    int no_dir = err == ENOENT && dir && stat(dir, &ds) != 0;
    rf_buf b;
    rf_buf_init(&b);
    if (pred)
        rf_buf_printf(&b, "cannot open the file of input `%s`, %s: %s", pred, fp, os_reason(err, eb, sizeof eb));
    else
        rf_buf_printf(&b, "cannot open file %s: %s", fp, os_reason(err, eb, sizeof eb));
    if (no_dir) rf_buf_printf(&b, " (the folder %s does not exist)", dir);
    /* a redfox database that lost its manifest reads as a folder of text
    ** files (the manifest alone makes a database): say what it looks like */
    char *col = !no_dir && err == ENOENT && dir ? rf_sprintf("%s/t00000.c00000.col", dir) : NULL;
    char *man = col ? rf_sprintf("%s/manifest.rfdb", dir) : NULL;
    if (col && stat(col, &ds) == 0 && man && stat(man, &ds) != 0)
        rf_buf_printf(&b, " (the folder holds a redfox database's column files but no manifest.rfdb, so it is read "
                          "as a folder of text files)");
    free(man);
    free(col);
    rf_error(d, loc, "%s", b.data ? b.data : "cannot open file");
    rf_buf_free(&b);
    free(dir);
    free(full);
}

rf_status rf_rt_file_map(const char *path, const rf_rt_load_opts *o, rf_rt_mapped *m, rf_diags *d)
{
    const char *pred = o ? o->pred : NULL;
    char eb[256];
    memset(m, 0, sizeof *m);
    rf_loc loc = {path, 0, 0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        rf_rt_load_open_error(path, pred, err, d);
        return err == ENOMEM ? RF_ENOMEM : RF_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rf_error(d, loc, "cannot read file: %s", os_reason(errno, eb, sizeof eb));
        close(fd);
        return RF_EIO;
    }
    if (S_ISDIR(st.st_mode)) {
        rf_error(d, loc, "cannot read file: %s", os_reason(EISDIR, eb, sizeof eb));
        close(fd);
        return RF_EIO;
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            m->data = p;
            m->size = (int64_t)st.st_size;
            m->is_mmap = 1;
            m->guard = rf_rt_map_guard_add(p, m->size);
            return RF_OK;
        }
    }
    /* pipes, special files, or no mmap: read it all. A NUL byte is an error
    ** wherever it stands in a text input (rf_load.c), so the read stops at
    ** the first: a special file of NULs (a link to /dev/zero) would else be
    ** read until memory runs out. */
    int64_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (int64_t)st.st_size + 1 : 1 << 20, len = 0;
    int64_t lines = 0, line_at = 0; /* newlines before len, and where the last line starts */
    char *buf = rf_malloc((size_t)cap);
    for (;;) {
        if (!buf) {
            close(fd);
            rf_error(d, loc, "out of memory reading the file");
            return RF_ENOMEM;
        }
        if (len == cap) {
            char *nb = rf_realloc(buf, (size_t)cap * 2);
            if (!nb) free(buf);
            buf = nb;
            cap *= 2;
            continue;
        }
        size_t want = (size_t)(cap - len) > (1u << 30) ? (1u << 30) : (size_t)(cap - len);
        ssize_t r = read(fd, buf + len, want);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rf_error(d, loc, "cannot read file: %s", os_reason(errno, eb, sizeof eb));
            free(buf);
            close(fd);
            return RF_EIO;
        }
        if (r == 0) break;
        const char *z = memchr(buf + len, 0, (size_t)r);
        const char *end = z ? z : buf + len + r;
        for (const char *q = buf + len; q < end && (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++) {
            lines++;
            line_at = q + 1 - buf;
        }
        if (z) {
            rf_error(d, rf_mkloc(path, (int)(lines + 1), (int)(z - buf - line_at + 1)),
                     "a NUL byte: a text input may not contain NUL bytes (is it a special file, such as /dev/zero?)");
            free(buf);
            close(fd);
            return RF_EUSER;
        }
        len += r;
        if (o && o->progress) o->progress(o->progress_ctx, "reading", len, S_ISREG(st.st_mode) ? (int64_t)st.st_size : 0);
    }
    close(fd);
    m->data = buf;
    m->size = len;
    return RF_OK;
}

rf_status rf_rt_read_whole(const char *path, const rf_rt_load_opts *o, char **data, int64_t *size, rf_diags *d)
{
    *data = NULL;
    *size = 0;
    rf_rt_mapped m;
    rf_status st = rf_rt_file_map(path, o, &m, d);
    if (st) return st;
    if (m.is_mmap) {
        /* a regular file after all (it changed since the caller looked): a copy */
        char *copy = rf_malloc((size_t)m.size + 1);
        if (copy) memcpy(copy, m.data, (size_t)m.size);
        int shrunk = rf_rt_map_guard_shrunk(m.data);
        rf_rt_file_unmap(&m);
        if (copy && shrunk) {
            free(copy);
            rf_error(d, rf_mkloc(path, 0, 0),
                     "the file was cut short while it was read: another process truncated or rewrote it");
            return RF_EUSER;
        }
        if (!copy) {
            rf_error(d, rf_mkloc(path, 0, 0), "out of memory reading the file");
            return RF_ENOMEM;
        }
        m.data = copy;
    }
    *data = m.data;
    *size = m.size;
    return RF_OK;
}

void rf_rt_file_unmap(rf_rt_mapped *m)
{
    if (m->is_mmap < 0) return; /* the caller's memory */
    rf_rt_map_guard_remove(m->guard);
    if (m->is_mmap)
        munmap(m->data, (size_t)m->size);
    else
        free(m->data);
    memset(m, 0, sizeof *m);
}
