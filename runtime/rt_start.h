/*
** runtime/rt_start.h: a device's start on a thread of its own, beside the
** host's reading of the inputs (rt_start.c).
*/
#ifndef RF_RT_START_H
#define RF_RT_START_H

#include "rt_device.h"

#include <pthread.h>

typedef struct rf_rt_start {
    const rf_rt_device_ops *dv;
    rf_rt_env env;      /* the run's, with its own diags and aside set */
    rf_diags d;         /* the start's messages until the join */
    void *dev;          /* the device, once open (also after a failed load_begin: close it) */
    rf_status st;
    double t0, t_open, t_end; /* rf_now(): began, opened, program loaded */
    _Atomic int done;
    int running, joined;
    pthread_t th;
} rf_rt_start;

/* Starts dv's open and load_begin on a thread; 0 when no thread could be
** made (then nothing has started: open on the run's thread). */
int rf_rt_start_begin(rf_rt_start *s, const rf_rt_device_ops *dv, const rf_rt_env *env);
/* Has the start ended (a join would not wait)? */
int rf_rt_start_ready(const rf_rt_start *s);
/* Waits for the start; its messages go to d, the device to the run's
** thread (attach); *dev: the device (NULL if it did not open). Returns the
** start's status. Idempotent. */
rf_status rf_rt_start_join(rf_rt_start *s, rf_diags *d, void **dev);

#endif
