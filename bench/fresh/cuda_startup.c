/*
** bench/fresh/cuda_startup.c: what the CUDA driver costs a fresh process
** before any data moves: cuInit, the primary context, one device allocation
** of a given share of free memory (redfox's pool), pinned host buffers, a
** host-to-device copy from pageable, pinned and registered memory, and the
** frees. Owns: the fixed-cost measurements behind bench/fresh/run.py.
** No CUDA headers needed (the driver is loaded with dlopen):
**   cc -O2 -o cuda_startup bench/fresh/cuda_startup.c -ldl
**   ./cuda_startup [POOL_PERCENT] [COPY_MB]
**   ./cuda_startup hold SECONDS
** "hold" calls cuInit and sleeps: while a process holds the driver open, the
** kernel module keeps the GPU initialized, as the driver's persistence mode
** (nvidia-smi -pm 1, nvidia-persistenced) does on a server. A fresh process
** beside it then pays only its own cuInit and context: the comparison of
** docs/BENCHMARKS.md's fresh-process section with and without it.
*/
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
#define STEP(label, call)                                                                                   \
    do {                                                                                                    \
        double t0_ = now();                                                                                 \
        CUresult r_ = (call);                                                                               \
        printf("%-44s %9.3f ms%s\n", label, (now() - t0_) * 1e3, r_ ? "  (failed)" : "");                   \
        if (r_) return 1;                                                                                   \
    } while (0)

int main(int argc, char **argv)
{
    int pct = argc > 1 && strcmp(argv[1], "hold") ? atoi(argv[1]) : 85;
    size_t copy = (size_t)(argc > 2 ? atoi(argv[2]) : 1024) << 20;
    double t0 = now();
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) return fprintf(stderr, "no libcuda.so.1\n"), 1;
    printf("%-44s %9.3f ms\n", "dlopen libcuda.so.1", (now() - t0) * 1e3);
    CUresult (*Init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
    if (argc > 2 && !strcmp(argv[1], "hold")) {
        STEP("cuInit", Init(0));
        fflush(stdout);
        sleep((unsigned)atoi(argv[2]));
        return 0;
    }
    CUresult (*DeviceGet)(int *, int) = (CUresult(*)(int *, int))dlsym(h, "cuDeviceGet");
    CUresult (*Retain)(void **, int) = (CUresult(*)(void **, int))dlsym(h, "cuDevicePrimaryCtxRetain");
    CUresult (*SetCur)(void *) = (CUresult(*)(void *))dlsym(h, "cuCtxSetCurrent");
    CUresult (*MemGetInfo)(size_t *, size_t *) = (CUresult(*)(size_t *, size_t *))dlsym(h, "cuMemGetInfo_v2");
    CUresult (*MemAlloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))dlsym(h, "cuMemAlloc_v2");
    CUresult (*MemFree)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))dlsym(h, "cuMemFree_v2");
    CUresult (*AllocHost)(void **, size_t) = (CUresult(*)(void **, size_t))dlsym(h, "cuMemAllocHost_v2");
    CUresult (*FreeHost)(void *) = (CUresult(*)(void *))dlsym(h, "cuMemFreeHost");
    CUresult (*HostRegister)(void *, size_t, unsigned) = (CUresult(*)(void *, size_t, unsigned))dlsym(h, "cuMemHostRegister_v2");
    CUresult (*HostUnregister)(void *) = (CUresult(*)(void *))dlsym(h, "cuMemHostUnregister");
    CUresult (*HtoD)(CUdeviceptr, const void *, size_t) = (CUresult(*)(CUdeviceptr, const void *, size_t))dlsym(h, "cuMemcpyHtoD_v2");
    CUresult (*Release)(int) = (CUresult(*)(int))dlsym(h, "cuDevicePrimaryCtxRelease_v2");
    int dev = 0;
    void *ctx = NULL;
    STEP("cuInit", Init(0));
    STEP("cuDeviceGet", DeviceGet(&dev, 0));
    STEP("cuDevicePrimaryCtxRetain", Retain(&ctx, dev));
    STEP("cuCtxSetCurrent", SetCur(ctx));
    size_t fr = 0, tot = 0;
    STEP("cuMemGetInfo", MemGetInfo(&fr, &tot));
    size_t pool = fr / 100 * (size_t)pct;
    char label[64];
    CUdeviceptr big = 0, small = 0;
    snprintf(label, sizeof label, "cuMemAlloc %d%% of free (%.1f GB)", pct, pool / 1e9);
    STEP(label, MemAlloc(&big, pool));
    STEP("cuMemAlloc 1 GB (second allocation)", MemAlloc(&small, (size_t)1 << 30));
    void *pin = NULL;
    STEP("cuMemAllocHost 2 x 16 MB", AllocHost(&pin, (size_t)32 << 20));
    char *pageable = malloc(copy), *pinned = NULL;
    memset(pageable, 1, copy);
    snprintf(label, sizeof label, "copy %zu MB from pageable memory", copy >> 20);
    STEP(label, HtoD(big, pageable, copy));
    STEP(label, HtoD(big, pageable, copy));
    snprintf(label, sizeof label, "cuMemHostRegister %zu MB", copy >> 20);
    STEP(label, HostRegister(pageable, copy, 0));
    snprintf(label, sizeof label, "copy %zu MB from registered memory", copy >> 20);
    STEP(label, HtoD(big, pageable, copy));
    STEP("cuMemHostUnregister", HostUnregister(pageable));
    snprintf(label, sizeof label, "cuMemAllocHost %zu MB", copy >> 20);
    STEP(label, AllocHost((void **)&pinned, copy));
    memset(pinned, 1, copy);
    snprintf(label, sizeof label, "copy %zu MB from pinned memory", copy >> 20);
    STEP(label, HtoD(big, pinned, copy));
    STEP("cuMemFreeHost (big)", FreeHost(pinned));
    STEP("cuMemFreeHost (stage)", FreeHost(pin));
    STEP("cuMemFree 1 GB", MemFree(small));
    STEP("cuMemFree pool", MemFree(big));
    STEP("cuDevicePrimaryCtxRelease", Release(dev));
    printf("%-44s %9.3f ms\n", "total", (now() - t0) * 1e3);
    free(pageable);
    return 0;
}
