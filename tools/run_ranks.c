/*
** tools/run_ranks.c: `redfox run --gpus N` and `redfox tpch run --gpus N`
** started outside mpirun: the command starts its N ranks itself.
**
** Owns: the re-execution of this very command under Open MPI's mpirun
** (`mpirun -np N --oversubscribe --quiet [--allow-run-as-root] REDFOX CMD ARGS`),
** which then starts N copies that find their ranks as under a user's own
** mpirun (runtime/dist). mpirun rather than forked children: the ranks need
** MPI for their exchanges anyway, and mpirun already does the bootstrap,
** the forwarding of output and signals, and stops every rank when one dies.
** Before it, the check that the host has a GPU (or the emulator) and that N
** is at most RF_TOOL_RANKS_PER_GPU ranks per GPU: one message, no ranks.
** mpirun runs as a child whose standard output and error this process
** copies to its own: mpirun forwards the ranks' output and ignores a failed
** write (a full disk, /dev/full), so the command checks its writes itself,
** as one process's run does, and once its reader is gone (| head) it stops
** mpirun and no longer passes on what mpirun says as it stops; the first SIGINT, SIGTERM or SIGHUP goes on to
** mpirun, which has a process group of its own (and no terminal input).
** The ranks get the user's environment: the one work queue redfox chose
** for itself at its start (tools/redfox.c) is taken back.
** This process is the ranks' subreaper: a rank that outlives mpirun (mpirun
** stopped while it was starting them, or a rank slow to die after mpirun's
** kill) becomes its child, and is stopped and reaped before the command
** ends, so that no rank runs on once it has returned.
*/
#include "tools.h"

#include "rf_rt_gpu.h"
#include "rf_sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

static volatile sig_atomic_t forwarded; /* the signal passed on to mpirun, 0 none */

/* SIGINT, SIGTERM, SIGHUP to this process (a terminal's ^C, kill, timeout):
** the first on to mpirun, which stops the ranks. Only the first, and mpirun
** has a process group of its own, so that it gets one however the signal
** came (timeout sends its child one and its group another): a second one,
** mpirun quit at once and left the ranks running. */
static void forward_signal(int sig)
{
    if (child_pid > 0 && !forwarded) {
        forwarded = sig;
        kill((pid_t)child_pid, sig);
    }
}

/* Writes p[0..n) to fd whole: 0, or the errno of the failed write. */
static int write_all(int fd, const char *p, ssize_t n)
{
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(fd, p + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : EIO;
        off += w;
    }
    return 0;
}

/* Copies mpirun's standard output (out) and error (err) to ours until
** mpirun ends; 0, or the errno of the first failed write to standard
** output (what follows is read and dropped, so that mpirun and the ranks
** are never blocked on a full pipe). A reader gone (EPIPE) is the decision
** to stop: mpirun gets SIGTERM, and from then on its standard error is
** read and dropped too, since what it prints as it stops is no word of the
** run's (Open MPI 4.1's mpirun may then crash in PMIx_server_finalize and
** print its own report). Until then each pipe reaches its stream as it
** came, in order. *status: mpirun's wait status. */
static int relay(pid_t pid, int out, int err, int *status)
{
    char buf[65536];
    int werr = 0, eerr = 0, stopping = 0, exited = 0;
    struct pollfd p[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
    while (p[0].fd >= 0 || p[1].fd >= 0) {
        /* once stopping, mpirun's end is watched too: something it started
        ** may hold the pipes open after it */
        int r = poll(p, 2, stopping ? 100 : -1);
        if (r < 0 && errno != EINTR) break;
        for (int i = 0; i < 2 && r > 0; i++) {
            if (p[i].fd < 0 || !p[i].revents) continue;
            ssize_t n = read(p[i].fd, buf, sizeof buf);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (n <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
                continue;
            }
            if (stopping) continue;
            if (i == 0 && !werr) werr = write_all(STDOUT_FILENO, buf, n);
            else if (i == 1 && !eerr) eerr = write_all(STDERR_FILENO, buf, n);
            if (werr == EPIPE) {
                stopping = 1;
                kill(pid, SIGTERM);
            }
        }
        if (stopping && waitpid(pid, status, WNOHANG) == pid) {
            exited = 1;
            break;
        }
    }
    for (int i = 0; i < 2; i++)
        if (p[i].fd >= 0) close(p[i].fd);
    while (!exited && waitpid(pid, status, 0) < 0 && errno == EINTR) continue;
    return werr;
}

/* Sends sig to every child of this process still running (the ranks that
** outlived mpirun, reparented here): the number signalled. */
static int signal_children(int sig)
{
    DIR *d = opendir("/proc");
    if (!d) return 0;
    pid_t self = getpid();
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0) continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        /* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
        char *close_paren = strrchr(buf, ')');
        char state;
        long ppid;
        if (!close_paren || sscanf(close_paren + 1, " %c %ld", &state, &ppid) != 2) continue;
        if (ppid != (long)self || state == 'Z') continue;
        if (kill((pid_t)pid, sig) == 0) n++;
    }
    closedir(d);
    return n;
}

/* Reaps what is left once mpirun has ended: ranks (and their children)
** that outlived it get SIGTERM, and SIGKILL after a grace of 2 s; returns
** once this process has no child left. The number stopped that way. */
static int reap_orphans(void)
{
    int stopped = 0, termed = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int st;
        pid_t r = waitpid(-1, &st, WNOHANG);
        if (r > 0) continue;
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break; /* ECHILD: none left */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
        if (!termed) {
            termed = 1;
            stopped = signal_children(SIGTERM);
        } else if (waited >= 2.0) {
            /* (again each round: a killed rank's own children are reparented here) */
            signal_children(SIGKILL);
        }
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return stopped;
}

/* Runs av (mpirun) with its standard output and error copied to ours
** (relay): mpirun's exit status, or 1 when our standard output could not be
** written. */
static int run_mpirun(const char *cmd, char **av)
{
    int fds[2], efds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "redfox %s: --gpus: cannot start mpirun: %s\n", cmd, strerror(errno));
        return RF_EXIT_USER;
    }
    if (pipe(efds) != 0) {
        fprintf(stderr, "redfox %s: --gpus: cannot start mpirun: %s\n", cmd, strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return RF_EXIT_USER;
    }
    signal(SIGPIPE, SIG_IGN); /* a closed standard output is a write error here */
    fflush(NULL);
    pid_t parent = getpid();
    /* the ranks that outlive mpirun become children of this process
    ** (reap_orphans), not of init, where they would run on unseen */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "redfox %s: --gpus: cannot start mpirun: %s\n", cmd, strerror(errno));
        close(fds[0]);
        close(fds[1]);
        close(efds[0]);
        close(efds[1]);
        return RF_EXIT_USER;
    }
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        setpgid(0, 0);
        /* out of this process's group, mpirun would outlive a SIGKILL of it
        ** and run on: it gets SIGTERM then, as it would have got the kill */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(RF_EXIT_USER);
        /* out of the terminal's foreground group, mpirun would stop
        ** (SIGTTIN) reading a terminal to forward it to rank 0 */
        if (isatty(STDIN_FILENO)) {
            int null = open("/dev/null", O_RDONLY);
            if (null >= 0 && null != STDIN_FILENO) {
                dup2(null, STDIN_FILENO);
                close(null);
            }
        }
        close(fds[0]);
        close(efds[0]);
        if (dup2(fds[1], STDOUT_FILENO) < 0 || dup2(efds[1], STDERR_FILENO) < 0) _exit(RF_EXIT_USER);
        close(fds[1]);
        close(efds[1]);
        execvp("mpirun", av);
        /* (av: mpirun -np N ...) */
        fprintf(stderr, "redfox %s: --gpus %s starts its ranks with Open MPI's mpirun, which cannot be run: %s "
                "(install openmpi-bin, or start the ranks yourself: mpirun -np %s redfox %s ... --device gpu)\n",
                cmd, av[2], strerror(errno), av[2], cmd);
        _exit(RF_EXIT_USER);
    }
    close(fds[1]);
    close(efds[1]);
    child_pid = pid;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue; /* nohup */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = forward_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    /* the reader of the output gone (| head): the ranks are stopped and
    ** this process ends as one process's run does, by SIGPIPE, silently */
    int status = 0;
    int err = relay(pid, fds[0], efds[0], &status);
    child_pid = 0;
    int orphans = reap_orphans();
    if (err == EPIPE) {
        signal(SIGPIPE, SIG_DFL);
        raise(SIGPIPE);
        return 128 + SIGPIPE;
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    /* stopped by the signal passed on: its status, as one process's run
    ** ends (mpirun exits 1 then, which says an error of the program) */
    if (forwarded && rc != RF_EXIT_OK) rc = 128 + forwarded;
    /* (after a rank's error or a crash, a rank still dying is no news) */
    else if (orphans && rc == RF_EXIT_OK) {
        fprintf(stderr, "redfox %s: mpirun ended and left %d rank process%s running: stopped\n", cmd, orphans,
                orphans == 1 ? "" : "es");
        rc = RF_EXIT_INTERNAL;
    } else if (rc > 128 && rc < 128 + NSIG)
        fprintf(stderr, "redfox %s: a rank ended by signal %d (%s); mpirun stopped the others\n", cmd, rc - 128,
                strsignal(rc - 128));
    if (err) {
        fprintf(stderr, "redfox %s: cannot write the output: %s\n", cmd, strerror(err));
        if (rc == RF_EXIT_OK) rc = RF_EXIT_USER;
    }
    return rc;
}

int rf_tool_run_ranks(const char *cmd, int argc, char **argv, int64_t n)
{
    /* the GPUs first, once, here: without one every rank would fail alike,
    ** each with its message, after mpirun started them all */
    char why[256];
    int gpus = rf_rt_gpu_count(why, sizeof why);
    if (gpus <= 0) {
        fprintf(stderr, "redfox: error: --gpus %lld: no usable GPU: %s\n", (long long)n, why);
        return RF_EXIT_USER;
    }
    if (n > (int64_t)RF_TOOL_RANKS_PER_GPU * gpus)
        return rf_tool_usage_error(cmd, "--gpus %lld: at most %d ranks per GPU, and this host has %d GPU%s: %lld ranks at "
                                   "most", (long long)n, RF_TOOL_RANKS_PER_GPU, gpus, gpus == 1 ? "" : "s",
                                   (long long)RF_TOOL_RANKS_PER_GPU * gpus);
    /* cmd: "run" or "tpch run", the words before ARGS */
    const char *words[2] = {cmd, NULL};
    int nwords = 1;
    if (!strcmp(cmd, "tpch run")) {
        words[0] = "tpch";
        words[1] = "run";
        nwords = 2;
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fprintf(stderr, "redfox %s: --gpus: cannot find this redfox's own path to start the ranks: %s\n", cmd,
                strerror(errno));
        return RF_EXIT_USER;
    }
    self[len] = 0;
    char np[32];
    snprintf(np, sizeof np, "%lld", (long long)n);
    /* mpirun -np N --oversubscribe --quiet [--allow-run-as-root] SELF CMD ARGS... NULL */
    char **av = rf_calloc((size_t)argc + 10, sizeof *av);
    if (!av) {
        fprintf(stderr, "redfox %s: out of memory\n", cmd);
        return RF_EXIT_INTERNAL;
    }
    int k = 0;
    av[k++] = "mpirun";
    av[k++] = "-np";
    av[k++] = np;
    /* more ranks than cores is the user's choice (a GPU each needs little CPU) */
    av[k++] = "--oversubscribe";
    /* without mpirun's boilerplate after a rank's error ("Primary job
    ** terminated normally, but..."): a rank names its own error, and its
    ** crash (tools/world_start.c); a rank ended by a signal it cannot
    ** catch is said below, from mpirun's status */
    av[k++] = "--quiet";
    /* Open MPI refuses root unless told: the user already runs redfox as root */
    if (geteuid() == 0) av[k++] = "--allow-run-as-root";
    av[k++] = self;
    for (int w = 0; w < nwords; w++) av[k++] = (char *)words[w];
    for (int i = 1; i < argc; i++) av[k++] = argv[i];
    av[k] = NULL;
    /* one work queue was this process's choice for its own single stream;
    ** ranks keep the driver's default (or the user's value) */
    if (rf_tool_gpu_queues_set) unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
    int rc = run_mpirun(cmd, av);
    free(av);
    return rc;
}
