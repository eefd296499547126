/*
** runtime/rt_start.c: a device's start on a thread of its own.
**
** Owns: the thread that opens a device and loads the program's kernels
** (open, load_begin) while the run's thread reads the inputs, and the join
** that hands the device and the start's messages back. On the GPU the start
** is the driver's (cuInit, the context: 0.2-0.25 s in a fresh process), the
** stream and the memory pool, all of which need nothing of the inputs;
** reading the columns needs nothing of the GPU. Run one after the other they
** add up; run side by side a fresh process pays the longer of the two. (The
** GPU starts cudart, its pinned buffers and the program's module on threads
** of their own from here: they finish beside the copies, runtime/gpu.)
*/
#include "rt_start.h"

#include "rf_sys.h"

#include <string.h>

static void *start_main(void *arg)
{
    rf_rt_start *s = arg;
    s->st = s->dv->open(&s->env, &s->dev);
    s->t_open = rf_now();
    if (!s->st) s->st = s->dv->load_begin(s->dev);
    s->t_end = rf_now();
    s->done = 1;
    return NULL;
}

int rf_rt_start_begin(rf_rt_start *s, const rf_rt_device_ops *dv, const rf_rt_env *env)
{
    memset(s, 0, sizeof *s);
    s->dv = dv;
    s->env = *env;
    rf_diags_init(&s->d);
    s->env.d = &s->d;
    s->env.aside = 1;
    s->t0 = rf_now();
    if (pthread_create(&s->th, NULL, start_main, s) != 0) {
        rf_diags_free(&s->d);
        return 0;
    }
    s->running = 1;
    return 1;
}

int rf_rt_start_ready(const rf_rt_start *s) { return !s->running || s->done; }

rf_status rf_rt_start_join(rf_rt_start *s, rf_diags *d, void **dev)
{
    if (!s->running) {
        *dev = NULL;
        return RF_EINTERNAL;
    }
    if (!s->joined) {
        pthread_join(s->th, NULL);
        s->joined = 1;
        for (int64_t i = 0; i < s->d.count; i++) rf_diag_add(d, s->d.items[i].sev, s->d.items[i].loc, "%s", s->d.items[i].msg);
        rf_diags_free(&s->d);
        if (s->dev && s->dv->attach) s->dv->attach(s->dev, d);
    }
    *dev = s->dev;
    return s->st;
}
