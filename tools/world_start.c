/*
** tools/world_start.c: a command joining the ranks' world under mpirun,
** within the ranks' time limit.
**
** Owns: the deadline around MPI's start (rf_world_mpi). Every exchange
** between ranks waits at most rank_timeout_s (runtime/dist), but MPI_Init
** itself cannot be given a limit or interrupted: a rank stopped or lost
** while the world starts (SIGSTOP, a node gone) left the others waiting in
** it forever. A watchdog thread waits beside the start; if the start has
** not ended within the limit, the rank says so on stderr, naming itself
** and the setting, and ends the process (status 1, as the exchanges'
** timeout); mpirun then stops the other ranks. Also each rank's own line
** when it ends by a fatal signal (a crash): `--gpus N` runs mpirun
** quietly, without its boilerplate, so the rank names itself. Only tools/
** exits.
*/
#include "tools.h"

#include "redfox.h"
#include "rf_rt_dist.h"
#include "rf_rt_tuning.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct watchdog {
    int fds[2];          /* the start writes to fds[1] once it has ended */
    int64_t limit_s;
} watchdog;

/* The rank's number and the world's size as mpirun gave them, before MPI
** tells (Open MPI's names, then PMIx's and PMI's). */
static const char *launch_env(const char *const *names)
{
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return v;
    }
    return "?";
}

static const char *const rank_names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", NULL};
static const char *const size_names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};

static void *watch(void *arg)
{
    watchdog *w = arg;
    struct pollfd p = {.fd = w->fds[0], .events = POLLIN};
    double left_ms = (double)w->limit_s * 1000.0;
    int r;
    /* (poll's limit is an int of milliseconds: a long limit waits in steps) */
    do {
        int step = left_ms > 3600000.0 ? 3600000 : (int)left_ms;
        r = poll(&p, 1, step);
        if (r == 0) left_ms -= step;
    } while ((r == 0 && left_ms > 0) || (r < 0 && errno == EINTR));
    if (r != 0) return NULL; /* the start ended (or poll failed: no watch, never a false alarm) */
    fprintf(stderr,
            "redfox: error: rank %s of %s: MPI did not start within %lld s: another rank died, is stopped or "
            "cannot be reached (--set rank_timeout_s=N changes the limit)\n",
            launch_env(rank_names), launch_env(size_names), (long long)w->limit_s);
    fflush(stderr);
    _exit(RF_EXIT_USER);
    return NULL;
}

/* The line a crashing rank writes, made before any crash ("redfox: error:
** rank R of N: ended by "), then the signal's name: only write(2) in the
** handler. */
static char crash_prefix[128];
static size_t crash_prefix_len;

static void crash_line(int sig)
{
    const char *what = sig == SIGSEGV   ? "SIGSEGV (a crash: an invalid memory access)\n"
                       : sig == SIGBUS  ? "SIGBUS (a crash: a bad memory access, or a mapped file cut short)\n"
                       : sig == SIGFPE  ? "SIGFPE (a crash: an arithmetic fault)\n"
                       : sig == SIGILL  ? "SIGILL (a crash: an illegal instruction)\n"
                                        : "SIGABRT (an abort)\n";
    ssize_t w = write(STDERR_FILENO, crash_prefix, crash_prefix_len);
    if (w >= 0) w = write(STDERR_FILENO, what, strlen(what));
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Under mpirun, in builds without sanitizers (theirs report a crash): a
** fatal signal first writes the rank's line. */
static void crash_lines_on(void)
{
    if (!rf_tool_exits_early()) return; /* (a sanitizer build: its own report) */
    int n = snprintf(crash_prefix, sizeof crash_prefix, "redfox: error: rank %s of %s: ended by ",
                     launch_env(rank_names), launch_env(size_names));
    if (n <= 0 || (size_t)n >= sizeof crash_prefix) return;
    crash_prefix_len = (size_t)n;
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = crash_line;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigaction(sigs[i], &sa, NULL);
    }
}

int rf_tool_world_start(int *argc, char ***argv, const char *const *sets, int nsets, struct rf_world **world)
{
    if (!rf_rt_dist_launched()) return rf_world_mpi(argc, argv, world);
    crash_lines_on();
    /* the limit the exchanges will have (a bad setting is reported later,
    ** where the run parses them: here it leaves the default) */
    rf_rt_tuning t;
    rf_rt_tuning_init(&t);
    char why[256];
    for (int k = 0; k < nsets; k++) {
        rf_rt_tuning probe = t;
        if (!strncmp(sets[k], "rank_timeout_s=", 15) && !rf_rt_tuning_set(&probe, sets[k], why, sizeof why))
            t.rank_timeout_s = probe.rank_timeout_s;
    }
    watchdog w = {{-1, -1}, t.rank_timeout_s};
    pthread_t th;
    int watching = t.rank_timeout_s > 0 && t.rank_timeout_s != INT64_MAX && pipe(w.fds) == 0;
    if (watching && pthread_create(&th, NULL, watch, &w) != 0) {
        close(w.fds[0]);
        close(w.fds[1]);
        watching = 0;
    }
    int code = rf_world_mpi(argc, argv, world);
    if (watching) {
        char one = 1;
        ssize_t n;
        do n = write(w.fds[1], &one, 1); /* (an empty pipe has room) */
        while (n < 0 && errno == EINTR);
        pthread_join(th, NULL);
        close(w.fds[0]);
        close(w.fds[1]);
    }
    return code;
}
