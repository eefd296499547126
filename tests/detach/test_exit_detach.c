/*
** tests/detach/test_exit_detach.c: rf_tool_detach_teardown (tools/exit_detach.c),
** the child that takes a GPU process's driver teardown past its exit.
**
** Owns: a process T that holds a "device" file (the kept prefix), a lock on
** another file and a pipe as stdout, detaches and exits with status 3. This
** test is T's parent and a subreaper, so the detached child, orphaned by T,
** becomes ours: it must exist and outlive T (we reap it after T), exit 0,
** have closed the pipe (our read ends) and the lock (we take it), and it
** must have kept the device file open past T's exit (a FIFO whose end of
** file comes only after T is gone).
*/
#include "tools.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails;
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); fails++; } } while (0)

/* reads fd until its end or timeout_ms; returns bytes read, -1 on timeout */
static int read_to_end(int fd, int timeout_ms)
{
    int total = 0;
    char buf[64];
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, timeout_ms);
        if (r <= 0) return -1;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) return total;
        total += (int)n;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_exit_detach WORKDIR\n");
        return 2;
    }
    char dev[512], lock[512];
    snprintf(dev, sizeof dev, "%s/nvidia-fifo", argv[1]);
    snprintf(lock, sizeof lock, "%s/db.lock", argv[1]);
    unlink(dev);
    if (mkfifo(dev, 0600) != 0) { perror("mkfifo"); return 1; }
    int lfd = open(lock, O_RDWR | O_CREAT, 0600);
    if (lfd < 0) { perror(lock); return 1; }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) { perror("prctl"); return 1; }
    int out[2];
    if (pipe(out) != 0) { perror("pipe"); return 1; }
    /* the FIFO's reader, opened non-blocking so that T's writer open succeeds */
    int dev_r = open(dev, O_RDONLY | O_NONBLOCK);
    if (dev_r < 0) { perror(dev); return 1; }
    pid_t t = fork();
    if (t == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        close(dev_r);
        int d = open(dev, O_WRONLY);
        int l = open(lock, O_RDWR);
        if (d < 0 || l < 0 || flock(l, LOCK_EX) != 0) _exit(9);
        if (write(1, "out", 3) != 3) _exit(9);
        rf_tool_detach_teardown(dev);
        _exit(3);
    }
    close(out[1]);
    int st = 0;
    CHECK(waitpid(t, &st, 0) == t && WIFEXITED(st) && WEXITSTATUS(st) == 3, "T's exit status is kept");
    /* our stdout pipe ends: the child closed its copy of it */
    CHECK(read_to_end(out[0], 5000) == 3, "the pipe of T's stdout reaches its end");
    /* the device file is still open somewhere, or its end came already:
    ** with the child alive it is open; the end must come once it exits */
    int fl = fcntl(dev_r, F_GETFL);
    fcntl(dev_r, F_SETFL, fl & ~O_NONBLOCK);
    /* the orphan: ours to reap, so it outlived T */
    int cst = 0;
    pid_t c = waitpid(-1, &cst, 0);
    CHECK(c > 0 && c != t, "a detached child outlived T (reaped by its subreaper): %s", c < 0 ? strerror(errno) : "ok");
    CHECK(c > 0 && WIFEXITED(cst) && WEXITSTATUS(cst) == 0, "the child exits 0");
    CHECK(read_to_end(dev_r, 5000) == 0, "the device file's last writer is gone");
    CHECK(flock(lfd, LOCK_EX | LOCK_NB) == 0, "the lock T held is free");
    unlink(dev);
    unlink(lock);
    if (fails) return 1;
    printf("ok\n");
    return 0;
}
