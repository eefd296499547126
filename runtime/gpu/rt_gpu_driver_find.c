/*
** runtime/gpu/rt_gpu_driver_find.c: whether the NVIDIA driver's library
** (libcuda.so.1) is installed anywhere the dynamic loader would find it,
** found without loading it.
**
** Owns: that search. `--device auto` decides before it loads the driver,
** and a CPU choice loads none (its load alone costs a small program more
** than its run); yet where no driver is installed at all there is no GPU to
** weigh, and the note should say so rather than a prediction against one.
** dlopen looks in the loader's search path (LD_LIBRARY_PATH, the program's
** run paths, the system's folders: RTLD_DI_SERINFO lists them) and in the
** names /etc/ld.so.cache holds: the library in none of them fails dlopen as
** surely, in microseconds. Found somewhere, already loaded, or the search
** itself failing: there may be a driver.
*/
#include "rt_gpu_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DRIVER_LIB "libcuda.so.1"

/* 1 when the loader's cache names the library (or cannot be read: maybe). */
static int in_cache(void)
{
    int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return errno != ENOENT; /* no cache: the loader uses none */
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return 1;
    }
    if (sb.st_size == 0) {
        close(fd);
        return 0;
    }
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return 1;
    /* the name with its NUL: a key of the cache, or the end of a path */
    int found = memmem(p, (size_t)sb.st_size, DRIVER_LIB, sizeof DRIVER_LIB) != NULL;
    munmap(p, (size_t)sb.st_size);
    return found;
}

/* 1 when a folder of the loader's search path holds the library (or the
** path cannot be had: maybe). */
static int in_search_path(void)
{
#if defined(__GLIBC__) /* (dlinfo and its RTLD_DI_SERINFO, an enum: no macro to test) */
    void *self = dlopen(NULL, RTLD_LAZY);
    if (!self) return 1;
    Dl_serinfo size;
    Dl_serinfo *info = NULL;
    int found = 1;
    if (dlinfo(self, RTLD_DI_SERINFOSIZE, &size) == 0 && (info = malloc(size.dls_size))) {
        info->dls_size = size.dls_size;
        info->dls_cnt = size.dls_cnt;
        if (dlinfo(self, RTLD_DI_SERINFO, info) == 0) {
            found = 0;
            for (unsigned i = 0; i < info->dls_cnt && !found; i++) {
                char path[4096];
                int n = snprintf(path, sizeof path, "%s/%s", info->dls_serpath[i].dls_name, DRIVER_LIB);
                found = n < 0 || (size_t)n >= sizeof path || access(path, F_OK) == 0;
            }
        }
    }
    free(info);
    dlclose(self);
    return found;
#else
    return 1;
#endif
}

int rf_gpu_driver_installed(char *why, size_t n)
{
    void *h = dlopen(DRIVER_LIB, RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
        dlclose(h); /* (the reference NOLOAD took) */
        return 1;
    }
    if (in_search_path() || in_cache()) return 1;
    if (why && n) snprintf(why, n, "no NVIDIA driver: " DRIVER_LIB " is installed nowhere the dynamic loader looks");
    return 0;
}
