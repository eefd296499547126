/*
** tools/run_ranks.c: `redfox run --gpus N` and `redfox tpch run --gpus N`
** started outside mpirun: the command starts its N ranks itself.
**
** Owns: the re-execution of this very command under Open MPI's mpirun
** (`mpirun -np N --oversubscribe [--allow-run-as-root] REDFOX CMD ARGS`),
** which then starts N copies that find their ranks as under a user's own
** mpirun (runtime/dist). mpirun rather than forked children: the ranks need
** MPI for their exchanges anyway, and mpirun already does the bootstrap,
** the forwarding of output and signals, and stops every rank when one dies.
** Before it, the check that the host has a GPU (or the emulator) and that N
** is at most RF_TOOL_RANKS_PER_GPU ranks per GPU: one message, no ranks.
** The ranks get the user's environment: the one work queue redfox chose
** for itself at its start (tools/redfox.c) is taken back.
*/
#include "tools.h"

#include "rf_rt_gpu.h"
#include "rf_sys.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    /* mpirun -np N --oversubscribe [--allow-run-as-root] SELF CMD ARGS... NULL */
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
    /* Open MPI refuses root unless told: the user already runs redfox as root */
    if (geteuid() == 0) av[k++] = "--allow-run-as-root";
    av[k++] = self;
    for (int w = 0; w < nwords; w++) av[k++] = (char *)words[w];
    for (int i = 1; i < argc; i++) av[k++] = argv[i];
    av[k] = NULL;
    /* one work queue was this process's choice for its own single stream;
    ** ranks keep the driver's default (or the user's value) */
    if (rf_tool_gpu_queues_set) unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
    fflush(NULL);
    execvp("mpirun", av);
    fprintf(stderr,
            "redfox %s: --gpus %lld starts its ranks with Open MPI's mpirun, which cannot be run: %s (install "
            "openmpi-bin, or start the ranks yourself: mpirun -np %lld redfox %s ... --device gpu)\n",
            cmd, (long long)n, strerror(errno), (long long)n, cmd);
    free(av);
    return RF_EXIT_USER;
}
