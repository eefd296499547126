/*
** common/rf_sys.h: what the stages ask of the machine they run on.
**
** Owns: the monotonic clock every timing reads (profiles, load and run
** times, benchmarks) and the count of online CPUs that sizes thread pools,
** so that there is one of each instead of a copy per file.
*/
#ifndef RF_SYS_H
#define RF_SYS_H

/* Seconds on the monotonic clock (CLOCK_MONOTONIC): only differences mean
** anything. */
double rf_now(void);

/* CPUs online now, at least 1 and at most 256 (a thread per CPU is the
** default of every pool). */
int rf_online_cpus(void);

#endif
