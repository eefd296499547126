/*
** runtime/test_rt_hold.c: the mark of a running `redfox hold` (rt_hold.c):
** seen while its process lives, gone when it ends (also by SIGKILL); a
** link, a named pipe or a folder in its place neither followed, blocked on
** nor taken for a mark.
**
** usage: test_rt_hold TMPDIR
*/
#include "rf_rt_hold.h"
#include "rf_test_check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A child that marks and waits; its pid once it has marked (-1: none). */
static pid_t holder(void)
{
    int p[2];
    if (pipe(p)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        rf_diags d;
        rf_diags_init(&d);
        char ok = rf_rt_hold_mark(&d) == RF_OK ? 'y' : 'n';
        if (write(p[1], &ok, 1) != 1) _exit(2);
        for (;;) pause();
    }
    close(p[1]);
    char ok = 0;
    ssize_t r = pid > 0 ? read(p[0], &ok, 1) : -1;
    close(p[0]);
    if (r != 1 || ok != 'y') {
        if (pid > 0) kill(pid, SIGKILL), waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

static void reap(pid_t pid, int sig)
{
    kill(pid, sig);
    waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_rt_hold TMPDIR\n");
        return 2;
    }
    char *dir = rf_sprintf("%s/rt_hold.%ld", argv[1], (long)getpid());
    mkdir(dir, 0700);
    setenv("TMPDIR", dir, 1);
    char *path = rf_rt_hold_path();
    char *want = rf_sprintf("%s/%s", dir, RF_RT_HOLD_FILE);
    CHECK(path && !strcmp(path, want));
    /* none: no mark, and asking makes no file */
    CHECK(!rf_rt_hold_present());
    CHECK(access(path, F_OK) != 0);
    /* a holder: seen while it lives, not after, however it ends */
    int sigs[2] = {SIGTERM, SIGKILL};
    for (int i = 0; i < 2; i++) {
        pid_t h = holder();
        CHECK(h > 0);
        CHECK(rf_rt_hold_present());
        /* two holders at once; one gone, the other still seen */
        pid_t h2 = holder();
        CHECK(h2 > 0);
        if (h2 > 0) reap(h2, sigs[i]);
        CHECK(rf_rt_hold_present());
        if (h > 0) reap(h, sigs[i]);
        CHECK(!rf_rt_hold_present());
    }
    /* the file left behind is no mark */
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 0777) == 0644);
    CHECK(!rf_rt_hold_present());
    /* a link in its place: not followed (the file it names not made), no mark */
    unlink(path);
    char *target = rf_sprintf("%s/elsewhere", dir);
    CHECK(symlink(target, path) == 0);
    rf_diags d;
    rf_diags_init(&d);
    CHECK(rf_rt_hold_mark(&d) == RF_EIO && d.count == 1 && d.items[0].sev == RF_SEV_WARNING &&
          d.items[0].loc.file && strstr(d.items[0].loc.file, RF_RT_HOLD_FILE));
    CHECK(access(target, F_OK) != 0 && !rf_rt_hold_present());
    rf_diags_free(&d);
    unlink(path);
    /* a named pipe: neither blocked on nor a mark */
    CHECK(mkfifo(path, 0644) == 0);
    alarm(20);
    CHECK(!rf_rt_hold_present());
    rf_diags_init(&d);
    CHECK(rf_rt_hold_mark(&d) == RF_EIO && d.count == 1);
    rf_diags_free(&d);
    alarm(0);
    unlink(path);
    /* a folder */
    CHECK(mkdir(path, 0700) == 0);
    rf_diags_init(&d);
    CHECK(rf_rt_hold_mark(&d) == RF_EIO && !rf_rt_hold_present());
    rf_diags_free(&d);
    rmdir(path);
    /* $TMPDIR not an absolute path: /tmp */
    setenv("TMPDIR", "relative", 1);
    char *tp = rf_rt_hold_path();
    CHECK(tp && !strcmp(tp, "/tmp/" RF_RT_HOLD_FILE));
    free(tp);
    rmdir(dir);
    free(target);
    free(want);
    free(path);
    free(dir);
    if (failures) return 1;
    printf("hold mark: seen while its holder lives, not after; links, pipes and folders refused\n");
    return 0;
}
