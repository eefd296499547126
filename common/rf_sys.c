/*
** common/rf_sys.c: the monotonic clock and the count of online CPUs.
** See rf_sys.h.
*/
#include "rf_sys.h"

#include <time.h>
#include <unistd.h>

double rf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int rf_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n > 256 ? 256 : n) : 1;
}
