/*
** tests/fakecuda/fake_libcuda_init.c: a libcuda.so.1 whose cuInit succeeds
** and counts one device, and nothing more, for the tests of `redfox hold`
** (run_hold.sh) on hosts without a GPU.
**
** Owns: that stand-in. Where RF_TEST_FAKECUDA_INIT names a file, cuInit
** writes "cuInit\n" there, so a test sees that the driver was started.
*/
#include <stdio.h>
#include <stdlib.h>

int cuInit(unsigned flags);
int cuDeviceGetCount(int *count);

int cuInit(unsigned flags)
{
    (void)flags;
    const char *out = getenv("RF_TEST_FAKECUDA_INIT");
    FILE *f = out ? fopen(out, "w") : NULL;
    if (f) {
        fputs("cuInit\n", f);
        fclose(f);
    }
    return 0;
}

int cuDeviceGetCount(int *count)
{
    *count = 1;
    return 0;
}
