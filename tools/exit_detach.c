/*
** tools/exit_detach.c: a GPU process's driver teardown left to a child, so
** that `redfox run` and `tpch run` end when their outputs are written.
**
** Owns: rf_tool_detach_teardown. The CUDA driver frees a process's context,
** device memory pool and pinned buffers when the last descriptor of its
** device files is closed and its address space goes, and the process's exit
** (exit or _exit alike) waits for it: on the lent H100, 100-140 ms after the
** outputs were written (cuDevicePrimaryCtxRelease alone 93-133 ms in
** bench/fresh/cuda_startup.c), a third of a fresh q06's wall. A child made
** by clone(CLONE_VM) shares the address space and holds copies of the
** descriptors; once it closes everything else (stdin, stdout and stderr
** included, so a pipe reading our output ends with our exit, and a
** database's lock file, so the next writer does not wait) and outlives the
** parent, the last close and the address space's end, and with them the
** teardown, happen in the child, which nobody waits for.
**
** Why clone and not fork: fork copies the page tables of a process that
** maps gigabytes of columns and runs the driver's fork handlers; on the
** lent H200 that took 17.5-25.7 ms of a fresh q06's 220 ms, after its
** outputs. A CLONE_VM child copies nothing but the descriptor table. It
** runs on a stack of its own in the shared address space and calls nothing
** but system calls through their wrappers (it shares the parent's thread
** pointer, so only errno is written, which the exiting parent no longer
** reads).
*/
#include "tools.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
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

struct detach_args {
    pid_t parent;
    const char *keep;
};

static int detached_child(void *p)
{
    const struct detach_args *a = p;
    setsid(); /* no signal meant for the user's job reaches it */
    close_all_but(a->keep);
    /* the parent's last thread reparents us after its descriptors are gone */
    while (getppid() == a->parent) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    _exit(0);
    return 0;
}

enum { DETACH_STACK = 64 * 1024 };

void rf_tool_detach_teardown(const char *keep)
{
    /* (static: the child reads them after this frame is gone, in the shared
    ** address space; the process calls this once, on its way out) */
    static struct detach_args args;
    args.parent = getpid();
    args.keep = keep;
    char *stack = mmap(NULL, DETACH_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return; /* no child: the teardown stays ours */
    /* SIGCHLD: whoever adopts it reaps it as any child */
    if (clone(detached_child, stack + DETACH_STACK, CLONE_VM | SIGCHLD, &args) < 0) munmap(stack, DETACH_STACK);
}
