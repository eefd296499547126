/*
** runtime/test_rt_profile.c: --profile's hint about a slow cuInit
** (rt_profile.c). A GPU result whose driver was started by the run with a
** cuInit of 107 ms gets the hint naming `redfox hold`; one of 11 ms (the
** driver held by another process), one whose driver started earlier in the
** process, and the emulator's get none.
*/
#include "rf_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hinted(int driver, double init_s)
{
    rf_rt_result res;
    memset(&res, 0, sizeof res);
    res.device = "gpu";
    res.gpu_start_driver = driver;
    res.gpu_start_init_s = init_s;
    res.gpu_start_context_s = 0.06;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) exit(2);
    rf_rt_profile_write(&res, f);
    fclose(f);
    int found = strstr(text, "gpu start hint: cuInit took") && strstr(text, "redfox hold");
    free(text);
    return found;
}

int main(void)
{
    int fail = 0;
    if (!hinted(1, 0.107)) fail = printf("FAIL: no hint after a cuInit of 107 ms\n") > 0;
    if (hinted(1, 0.011)) fail = printf("FAIL: a hint after a cuInit of 11 ms\n") > 0;
    if (hinted(2, 0.107)) fail = printf("FAIL: a hint where the driver started earlier in the process\n") > 0;
    if (hinted(3, 0.107)) fail = printf("FAIL: a hint for the emulator\n") > 0;
    if (!fail) printf("rt_profile_hint: ok\n");
    return fail;
}
