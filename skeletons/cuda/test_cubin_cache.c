/*
** skeletons/cuda/test_cubin_cache.c: which files the driver's JIT cache
** takes as a cubin: test_cubin_cache SCRATCH_DIR.
**
** Owns: the checks of rf_gpu_cubin_read_checked (nvrtc.c) without a GPU:
** a whole checked entry holding an ELF64 file is served byte for byte;
** one cut short, a byte changed, empty, a whole entry of other bytes (no
** ELF magic, an ELF32 class, shorter than an ELF header), the raw cubin
** without the cache's head, a folder and a named pipe are misses (never
** waited on: an alarm ends a test that blocks). `redfox compile` on a GPU
** host keeps an entry only where this takes it, so a damaged one is linked
** and written anew there instead of costing the first run the driver's JIT.
*/
#include "rf_gpu_codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fails;

#define CHECK(c, what)                                                                                                 \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "FAIL: %s\n", what);                                                                       \
            fails++;                                                                                                   \
        }                                                                                                              \
    } while (0)

static void put_raw(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n) fails++;
    if (f) fclose(f);
}

/* 1 when the entry at path is served (and equals want[0..n) where want is given) */
static int served(const char *path, const char *want, uint64_t n)
{
    uint64_t len = 7;
    char *got = rf_gpu_cubin_read_checked(path, &len);
    int ok = got != NULL;
    if (got && want) ok = len == n && !memcmp(got, want, (size_t)n);
    if (!got && len != 0) ok = -1; /* a miss says no bytes */
    free(got);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_cubin_cache SCRATCH_DIR\n");
        return 2;
    }
    alarm(60);
    char dir[4096], path[4200], raw[4200];
    snprintf(dir, sizeof dir, "%s/jit", argv[1]);
    snprintf(path, sizeof path, "%s/0123-sm90-drv13000.cubin", dir);
    snprintf(raw, sizeof raw, "%s/raw", argv[1]);
    /* an ELF64 file's bytes as the linker would give them (its content is
    ** the driver's business: only the header's magic and class are read) */
    char elf[300];
    for (size_t i = 0; i < sizeof elf; i++) elf[i] = (char)(i * 7 + 3);
    memcpy(elf, "\177ELF\002\001\001", 7);
    rf_gpu_cache_write_checked(dir, path, elf, sizeof elf, NULL);
    CHECK(served(path, elf, sizeof elf) == 1, "a sound entry is served as written");

    /* the whole entry as written, to damage */
    FILE *f = fopen(path, "rb");
    char whole[RF_GPU_CACHE_HEAD + sizeof elf + 1];
    size_t nw = f ? fread(whole, 1, sizeof whole, f) : 0;
    if (f) fclose(f);
    CHECK(nw == RF_GPU_CACHE_HEAD + sizeof elf, "the entry's size is the head and the cubin");

    put_raw(path, whole, nw - 1);
    CHECK(served(path, NULL, 0) == 0, "an entry cut by one byte is a miss");
    put_raw(path, whole, RF_GPU_CACHE_HEAD + 10);
    CHECK(served(path, NULL, 0) == 0, "an entry cut short is a miss");
    put_raw(path, whole, 0);
    CHECK(served(path, NULL, 0) == 0, "an empty entry is a miss");
    whole[RF_GPU_CACHE_HEAD + 100] ^= 1;
    put_raw(path, whole, nw);
    CHECK(served(path, NULL, 0) == 0, "an entry with a byte changed is a miss");
    whole[RF_GPU_CACHE_HEAD + 100] ^= 1;
    put_raw(path, elf, sizeof elf);
    CHECK(served(path, NULL, 0) == 0, "the cubin without the cache's head is a miss");

    /* whole, checked entries of bytes that are no cubin */
    char other[sizeof elf];
    memcpy(other, elf, sizeof other);
    memcpy(other, "junk", 4);
    rf_gpu_cache_write_checked(dir, path, other, sizeof other, NULL);
    CHECK(served(path, NULL, 0) == 0, "a checked entry without the ELF magic is a miss");
    other[0] = '\177';
    memcpy(other, "\177ELF\001", 5);
    rf_gpu_cache_write_checked(dir, path, other, sizeof other, NULL);
    CHECK(served(path, NULL, 0) == 0, "a checked ELF32 entry is a miss");
    rf_gpu_cache_write_checked(dir, path, elf, 40, NULL);
    CHECK(served(path, NULL, 0) == 0, "a checked entry shorter than an ELF header is a miss");
    rf_gpu_cache_write_checked(dir, path, elf, 0, NULL);
    CHECK(served(path, NULL, 0) == 0, "a checked entry of no bytes is a miss");

    /* not a regular file */
    unlink(path);
    CHECK(served(path, NULL, 0) == 0, "no entry is a miss");
    CHECK(mkdir(path, 0777) == 0, "mkdir");
    CHECK(served(path, NULL, 0) == 0, "a folder is a miss");
    rmdir(path);
    if (mkfifo(path, 0666) == 0) {
        CHECK(served(path, NULL, 0) == 0, "a named pipe is a miss, never waited on");
        unlink(path);
    }
    /* a miss is written anew over what was there: served again */
    put_raw(path, "damaged", 7);
    rf_gpu_cache_write_checked(dir, path, elf, sizeof elf, NULL);
    CHECK(served(path, elf, sizeof elf) == 1, "a damaged entry written anew is served");
    unlink(path);
    unlink(raw);
    rmdir(dir);
    if (fails) return 1;
    printf("PASS: the JIT cache takes whole, checked ELF64 cubins only\n");
    return 0;
}
