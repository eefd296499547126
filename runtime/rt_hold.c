/*
** runtime/rt_hold.c: the mark of a running `redfox hold` (rf_rt_hold.h).
**
** Owns: the mark's file and lock: where it is, how a holder takes it, how
** a run asks for it.
**
** Why a lock and not a file of pids: the system drops a process's locks
** when it ends, also by SIGKILL, so a mark is never stale; and F_GETLK asks
** whether another process holds one without taking it, so asking never
** keeps a holder from marking. Why $TMPDIR or /tmp, not the cache folder:
** the driver's start is short for every process on the host while any
** process holds it, whatever cache folder a run uses.
*/
#include "rf_rt_hold.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *rf_rt_hold_path(void)
{
    const char *td = getenv("TMPDIR");
    return rf_sprintf("%s/%s", td && td[0] == '/' ? td : "/tmp", RF_RT_HOLD_FILE);
}

/* The mark's file opened to read, never through a link nor blocking on a
** named pipe in its place; made (0644) where create is set and there is
** none. -1 with errno when it cannot be. A regular file only. */
static int open_mark(const char *path, int create)
{
    int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    int fd = open(path, flags);
    /* made new where absent (O_EXCL: a folder others can write in, as /tmp,
    ** refuses O_CREAT on another user's file there); another holder making
    ** it at once: open what it made */
    if (fd < 0 && errno == ENOENT && create) {
        fd = open(path, flags | O_CREAT | O_EXCL, 0644);
        if (fd < 0 && errno == EEXIST) fd = open(path, flags);
    }
    if (fd < 0) return -1;
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

rf_status rf_rt_hold_mark(rf_diags *d)
{
    char *path = rf_rt_hold_path();
    if (!path) return RF_ENOMEM;
    int fd = open_mark(path, 1);
    struct flock l;
    memset(&l, 0, sizeof l);
    l.l_type = F_RDLCK;
    l.l_whence = SEEK_SET;
    /* kept open (and so locked) until the process ends: never closed */
    if (fd < 0 || fcntl(fd, F_SETLK, &l) < 0) {
        int e = errno;
        rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(path, 0, 0),
                    "cannot mark the driver as held (--device auto will not know): %s",
                 fd < 0 && e == EINVAL ? "not a regular file" : strerror(e));
        if (fd >= 0) close(fd);
        free(path);
        return RF_EIO;
    }
    free(path);
    return RF_OK;
}

int rf_rt_hold_present(void)
{
    char *path = rf_rt_hold_path();
    if (!path) return 0;
    int fd = open_mark(path, 0);
    free(path);
    if (fd < 0) return 0;
    struct flock l;
    memset(&l, 0, sizeof l);
    l.l_type = F_WRLCK; /* would a writer wait? then some process holds a read lock */
    l.l_whence = SEEK_SET;
    int held = fcntl(fd, F_GETLK, &l) == 0 && l.l_type != F_UNLCK;
    close(fd);
    return held;
}
