/*
** runtime/gpu/rt_gpu_nocuda.c: the real-GPU entry points of a build made
** without the CUDA toolkit (no CUB library): there is never a usable GPU.
** The emulator (rt_gpu_emu.c) still works, for tests.
*/
#include "rt_gpu_internal.h"

#include <string.h>

int rf_gpu_cuda_probe(char *why, size_t n)
{
    if (why && n) snprintf(why, n, "this redfox was built without the CUDA toolkit (CPU only)");
    return 0;
}

rf_status rf_gpu_cuda_open(gdev *g, rf_diags *d, char *why, size_t nwhy)
{
    memset(g, 0, sizeof *g);
    g->d = d;
    rf_gpu_cuda_probe(why, nwhy);
    return RF_EUSER;
}

void rf_gpu_cuda_bind_thread(void) {}

int rf_gpu_cuda_maybe(char *why, size_t n) { return rf_gpu_cuda_probe(why, n); }
int rf_gpu_cuda_absent(char *why, size_t n) { return !rf_gpu_cuda_probe(why, n); }
int rf_gpu_cuda_count(char *why, size_t n) { return rf_gpu_cuda_probe(why, n); }

int rf_gpu_cuda_jit_cache(const rf_gpu_ptx *ptx, const char *cache_dir)
{
    (void)ptx;
    (void)cache_dir;
    return 0;
}

int rf_gpu_cuda_started(void) { return 0; }
int rf_gpu_cuda_start(void) { return 0; }
int rf_gpu_cuda_start_parts(double *init, double *context, double *cudart, double *cudart_wait)
{
    *init = *context = *cudart = *cudart_wait = 0;
    return 0;
}
double rf_gpu_cuda_pinned_gbs(gdev *g)
{
    (void)g;
    return 0;
}
void rf_rt_gpu_choose(int index) { (void)index; }
int64_t rf_gpu_cuda_pci(void) { return 0; }
