/*
** tests/fakecuda/fake_libcuda.c: a library named libcuda.so.1 without the
** driver's entry points, for tests of --device auto (run_place_near_tie.sh)
** and of the environment the driver would start in (run_gpu_queues.sh).
**
** Owns: a stand-in driver that any run can load (LD_LIBRARY_PATH) and
** none can start: loading it proves that a run looked for the GPU, and its
** absence from the process (--profile: "libcuda.so.1 not loaded") that a
** run did not, on any host, with or without a GPU. Where
** RF_TEST_FAKECUDA_ENV names a file, loading it writes there the
** CUDA_DEVICE_MAX_CONNECTIONS the driver would have read.
*/
#include <stdio.h>
#include <stdlib.h>

int rf_test_fake_libcuda = 1; /* not cuInit: the driver "lacks cuInit", usable by no run */

__attribute__((constructor)) static void record_environment(void)
{
    const char *out = getenv("RF_TEST_FAKECUDA_ENV");
    if (!out) return;
    FILE *f = fopen(out, "w");
    if (!f) return;
    const char *v = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    fprintf(f, "CUDA_DEVICE_MAX_CONNECTIONS=%s\n", v ? v : "(unset)");
    fclose(f);
}
