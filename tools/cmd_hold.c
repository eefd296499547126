/*
** tools/cmd_hold.c: `redfox hold`: keeps the NVIDIA driver's start warm for
** the redfox processes that follow it, while it lives.
**
** Owns: the command (its options, its wait, its messages).
**
** Why: a process's cuInit registers each GPU with the driver's unified-
** memory module (nvidia-uvm). When no other process has the GPU registered,
** that module builds the GPU's state anew, and throws it away again when
** the last process ends. On the lent H200 host that one call
** (UVM_REGISTER_GPU, timed by an LD_PRELOAD shim around ioctl) took 98-100
** ms of a cuInit of 104-192 ms, in every fresh process, persistence mode on;
** with a process that had called cuInit still alive, cuInit took 10-16 ms.
** Persistence mode keeps the kernel driver's state, not this module's (the
** daemon's --uvm-persistence-mode is for confidential computing only, by its
** own --help). Any process that has called cuInit keeps it while it lives;
** this command is such a process and nothing more: cuInit, then a wait. It
** makes no context: it holds about 4 MiB of the GPU's memory and no CPU.
*/
#include "rf_rt_gpu.h"
#include "rf_rt_hold.h"
#include "rf_sys.h"
#include "tools.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *usage =
    "usage: redfox hold [--seconds N]\n"
    "\n"
    "Keeps the NVIDIA driver started for the redfox processes that follow,\n"
    "until it is stopped (Ctrl-C, kill, or --seconds). A process's GPU start\n"
    "registers the GPU with the driver's unified-memory module (nvidia-uvm),\n"
    "which builds the GPU's state anew whenever no other process has it\n"
    "registered: about 0.1 s of every fresh `redfox run --device gpu` (an\n"
    "H200: cuInit 104-192 ms alone, 10-16 ms while `redfox hold` runs). It\n"
    "calls cuInit and waits: no context, about 4 MiB of GPU memory, no CPU.\n"
    "The driver's persistence mode does not keep this registration; any\n"
    "process that started the driver and still runs does. While it runs,\n"
    "--device auto weighs the short start (it holds a lock on\n"
    "redfox-hold.lock in $TMPDIR, else /tmp, that auto asks for).\n"
    "\n"
    "  --seconds N   hold for N seconds (1 to 31536000), then exit\n"
    "  -h, --help    this text\n"
    "\n"
    "It prints one line on stderr once the driver is held (a script can wait\n"
    "for it) and exits 0 when stopped by SIGINT, SIGTERM or SIGHUP or after\n"
    "--seconds (a signal ignored where it started, as nohup's SIGHUP, stays\n"
    "ignored). Exit 1 where there is no GPU to hold (no driver, no device,\n"
    "or RF_GPU_EMULATE set), 2 on bad usage.\n";

int rf_tool_hold(int argc, char **argv)
{
    const char *seconds = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return RF_EXIT_OK;
        }
        int m = rf_tool_opt_value("hold", argc, argv, &i, "--seconds", &seconds);
        if (m < 0) return RF_EXIT_USAGE;
        if (m) continue;
        if (argv[i][0] == '-' && argv[i][1]) return rf_tool_unknown_option("hold", argv[i], usage);
        return rf_tool_usage_error("hold", "unknown argument '%s'", argv[i]);
    }
    int64_t secs = 0;
    if (seconds && !rf_tool_parse_int(seconds, 1, 31536000, &secs))
        return rf_tool_usage_error("hold", "--seconds takes a whole number of seconds from 1 to 31536000, not '%s'",
                                   seconds);
    if (rf_rt_gpu_emulated()) {
        fprintf(stderr, "redfox hold: error: RF_GPU_EMULATE is set: the emulated GPU has no driver to hold\n");
        return RF_EXIT_USER;
    }
    /* the signals that stop it, taken by sigtimedwait below, not by the
    ** handlers that remove a writer's temporaries (this command writes
    ** none); one ignored where it started (nohup's SIGHUP, SIGINT in a
    ** background job of a script) stays ignored */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    sigset_t stop;
    sigemptyset(&stop);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaddset(&stop, sigs[i]);
    }
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    char why[256] = "";
    double t0 = rf_now();
    int n = rf_rt_gpu_count(why, sizeof why);
    if (n <= 0) {
        fprintf(stderr, "redfox hold: error: no GPU to hold: %s\n", why[0] ? why : "none found");
        return RF_EXIT_USER;
    }
    /* the mark that tells --device auto the start is short (rf_rt_hold.h);
    ** without it the hold still shortens starts: a warning, not an error */
    rf_diags md;
    rf_diags_init(&md);
    if (rf_rt_hold_mark(&md) != RF_OK) rf_diags_print(&md, stderr);
    rf_diags_free(&md);
    fprintf(stderr,
            "redfox hold: the NVIDIA driver is held for %d GPU%s (its start here took %.0f ms); process %ld, "
            "stop it with Ctrl-C or kill %ld\n",
            n, n == 1 ? "" : "s", (rf_now() - t0) * 1e3, (long)getpid(), (long)getpid());
    fflush(stderr);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += secs;
    for (;;) {
        struct timespec left = {secs ? 0 : 3600, 0};
        if (secs) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec > until.tv_sec || (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec)) break;
            left.tv_sec = until.tv_sec - now.tv_sec;
            left.tv_nsec = until.tv_nsec - now.tv_nsec;
            if (left.tv_nsec < 0) {
                left.tv_sec--;
                left.tv_nsec += 1000000000L;
            }
        }
        int sig = sigtimedwait(&stop, NULL, &left);
        if (sig > 0) break;
        if (sig < 0 && errno != EAGAIN && errno != EINTR) {
            fprintf(stderr, "redfox hold: error: waiting for a signal: %s\n", strerror(errno));
            return RF_EXIT_INTERNAL;
        }
    }
    /* the driver's teardown is the system's, as for every redfox process */
    return RF_EXIT_OK;
}
