/*
** tools/exit_detach.c: a GPU process's driver teardown left to a child, so
** that `redfox run` and `tpch run` end when their outputs are written.
**
** Owns: rf_tool_detach_teardown. The CUDA driver frees a process's context,
** device memory pool and pinned buffers when the last descriptor of its
** device files is closed, and the process's exit (exit or _exit alike)
** waits for it: on the lent H100, 100-140 ms after the outputs were
** written (cuDevicePrimaryCtxRelease alone 93-133 ms in
** bench/fresh/cuda_startup.c), a third of a fresh q06's wall. A forked child
** shares those open files; once it closes everything else (stdin, stdout
** and stderr included, so a pipe reading our output ends with our exit, and
** a database's lock file, so the next writer does not wait) and outlives the
** parent, the last close, and with it the teardown, happens in the child,
** which nobody waits for. The child calls nothing but system calls: it is
** the fork of a process with other threads, where only async-signal-safe
** calls are allowed.
*/
#include "tools.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct linux_dirent64_head {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* the descriptor's number as a decimal string, into buf (no printf: see above) */
static void fd_path(char *buf, int fd)
{
    static const char head[] = "/proc/self/fd/";
    char digits[16];
    int n = 0;
    do {
        digits[n++] = (char)('0' + fd % 10);
        fd /= 10;
    } while (fd && n < (int)sizeof digits);
    memcpy(buf, head, sizeof head - 1);
    char *p = buf + sizeof head - 1;
    while (n) *p++ = digits[--n];
    *p = 0;
}

static int parse_fd(const char *s)
{
    int v = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000) return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

/* Closes every descriptor whose file's path does not begin with keep. */
static void close_all_but(const char *keep)
{
    size_t kn = strlen(keep);
    int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;
    char buf[4096];
    for (;;) {
        long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
        if (n <= 0) break;
        for (long off = 0; off < n;) {
            struct linux_dirent64_head *e = (struct linux_dirent64_head *)(buf + off);
            off += e->d_reclen;
            int fd = parse_fd(e->d_name);
            if (fd < 0 || fd == dir) continue;
            char path[32], target[256];
            fd_path(path, fd);
            ssize_t t = readlink(path, target, sizeof target - 1);
            if (t >= 0 && (size_t)t >= kn && memcmp(target, keep, kn) == 0) continue;
            close(fd);
        }
    }
    close(dir);
}

void rf_tool_detach_teardown(const char *keep)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) return; /* the parent, or no child: the teardown stays ours */
    setsid();             /* no signal meant for the user's job reaches it */
    close_all_but(keep);
    /* the parent's last thread reparents us after its descriptors are gone */
    while (getppid() == parent) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    _exit(0);
}
