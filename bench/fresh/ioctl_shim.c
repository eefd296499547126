/*
** bench/fresh/ioctl_shim.c: an LD_PRELOAD library that times every ioctl a
** process makes and prints those longer than half a millisecond (the device
** file, the request, the ms and when), with the totals at exit. Owns: the
** measurement behind docs/BENCHMARKS.md's "Why a fresh GPU process pays 0.1 s
** more": of a fresh cuInit's 104-192 ms on an H200, UVM_REGISTER_GPU (request
** 37 on /dev/nvidia-uvm) took 98-100 ms.
**   cc -O2 -shared -fPIC -o ioctl_shim.so bench/fresh/ioctl_shim.c -ldl
**   LD_PRELOAD=$PWD/ioctl_shim.so ./cuda_startup
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double ms_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static double started, total_ms;
static long calls;

__attribute__((constructor)) static void shim_start(void) { started = ms_now(); }

int ioctl(int fd, unsigned long request, ...)
{
    static int (*real)(int, unsigned long, ...);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "ioctl");
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    double t0 = ms_now();
    int r = real(fd, request, arg);
    double took = ms_now() - t0;
    total_ms += took;
    calls++;
    if (took > 0.5) {
        char link[64], file[256] = "";
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, file, sizeof file - 1);
        if (n > 0) file[n] = 0;
        fprintf(stderr, "ioctl %8.3f ms at %8.3f ms: %s request 0x%lx (nr %lu)\n", took, t0 - started, file, request,
                request & 0xff);
    }
    return r;
}

__attribute__((destructor)) static void shim_end(void)
{
    fprintf(stderr, "ioctl: %ld calls, %.3f ms in all, of a process of %.3f ms\n", calls, total_ms, ms_now() - started);
}
