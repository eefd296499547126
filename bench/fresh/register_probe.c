/*
** bench/fresh/register_probe.c: can a mapped column file be page-locked in
** place (cuMemHostRegister), on several threads, faster than the GPU's copy
** path packs it into pinned staging buffers? Owns: that measurement of
** docs/BENCHMARKS.md ("Tried for the copy's share"). Times the pinned copy,
** then for 1, 4, 8 and 16 threads the registration of a private writable and
** of a shared read-only mapping (CU_MEMHOSTREGISTER_READ_ONLY), the copy
** from it and the unregistration.
**   cc -O2 -o register_probe bench/fresh/register_probe.c -I$CUDA/include \
**      -L$CUDA/lib64/stubs -lcuda -lpthread
**   head -c 480M /dev/urandom > F; cat F > /dev/null; ./register_probe F 480
*/
#define _GNU_SOURCE
#include <cuda.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        CUresult r_ = (call);                                                                                          \
        if (r_) {                                                                                                      \
            const char *s_;                                                                                            \
            cuGetErrorString(r_, &s_);                                                                                 \
            fprintf(stderr, "%s: %s\n", #call, s_);                                                                    \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static char *base;
static size_t total, per;
static CUcontext ctx;
static unsigned reg_flags;

/* thread i's share of the mapping: [i * per, min(total, (i + 1) * per)) */
static void *register_share(void *arg)
{
    size_t at = (size_t)(long)arg * per;
    cuCtxSetCurrent(ctx);
    if (at >= total) return NULL;
    CUresult r = cuMemHostRegister(base + at, at + per > total ? total - at : per, reg_flags);
    if (r) {
        const char *s;
        cuGetErrorString(r, &s);
        fprintf(stderr, "cuMemHostRegister: %s\n", s);
    }
    return NULL;
}

static void *unregister_share(void *arg)
{
    size_t at = (size_t)(long)arg * per;
    cuCtxSetCurrent(ctx);
    if (at < total) cuMemHostUnregister(base + at);
    return NULL;
}

static void on_threads(int n, void *(*fn)(void *))
{
    pthread_t th[16];
    for (long i = 0; i < n; i++) pthread_create(&th[i], NULL, fn, (void *)i);
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: register_probe FILE MEGABYTES\n");
        return 2;
    }
    total = (size_t)atoll(argv[2]) << 20;
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    if ((size_t)st.st_size < total) total = (size_t)st.st_size;
    CUdevice dev;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    int ro = 0;
    cuDeviceGetAttribute(&ro, CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, dev);
    printf("read-only registration supported: %d\n", ro);
    CUdeviceptr d;
    CUstream s;
    void *pinned;
    CHECK(cuMemAlloc(&d, total));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAllocHost(&pinned, total));
    memset(pinned, 1, total);
    for (int k = 0; k < 3; k++) {
        double t = now();
        CHECK(cuMemcpyHtoDAsync(d, pinned, total, s));
        CHECK(cuStreamSynchronize(s));
        printf("pinned copy: %.2f ms (%.1f GB/s)\n", (now() - t) * 1e3, total / (now() - t) * 1e-9);
    }
    static const int threads[] = {1, 4, 8, 16};
    for (int ti = 0; ti < 4; ti++)
        for (int ro_shared = 0; ro_shared < 2; ro_shared++) {
            int n = threads[ti];
            per = (total / (size_t)n + 4095) & ~(size_t)4095;
            reg_flags = ro_shared ? CU_MEMHOSTREGISTER_READ_ONLY : 0;
            base = mmap(NULL, total, ro_shared ? PROT_READ : PROT_READ | PROT_WRITE,
                        ro_shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
            if (base == MAP_FAILED) {
                perror("mmap");
                return 1;
            }
            double t0 = now();
            on_threads(n, register_share);
            double t1 = now();
            for (size_t at = 0; at < total; at += per)
                CHECK(cuMemcpyHtoDAsync(d + at, base + at, at + per > total ? total - at : per, s));
            CHECK(cuStreamSynchronize(s));
            double t2 = now();
            on_threads(n, unregister_share);
            double t3 = now();
            printf("threads %2d, %s: register %.2f ms (%.1f GB/s), copy %.2f ms (%.1f GB/s), unregister %.2f ms\n", n,
                   ro_shared ? "read-only shared mapping" : "writable private mapping", (t1 - t0) * 1e3,
                   total / (t1 - t0) * 1e-9, (t2 - t1) * 1e3, total / (t2 - t1) * 1e-9, (t3 - t2) * 1e3);
            munmap(base, total);
        }
    return 0;
}
