/*
** runtime/rf_rt_trace.h: a run's timeline as a Chrome trace-event JSON file
** (https://ui.perfetto.dev and chrome://tracing open it): `redfox run
** --trace FILE` and the library's rf_run_options.trace_file.
*/
#ifndef RF_RT_TRACE_H
#define RF_RT_TRACE_H

#include "rf_common.h"
#include "rf_runtime.h"

typedef struct rf_rt_trace_log {
    rf_buf json;   /* the events so far, comma-separated */
    double origin; /* rf_now() at the start: time 0 of the file */
    int64_t n;
} rf_rt_trace_log;

void rf_rt_trace_log_init(rf_rt_trace_log *t);
void rf_rt_trace_log_free(rf_rt_trace_log *t);
/* One span: cat "phase" (compile, run, output), "load", "kernel" or "gpu"
** (rf_rt_trace_fn's categories), from t0 to t1 (rf_now() seconds). */
void rf_rt_trace_log_event(rf_rt_trace_log *t, const char *cat, const char *name, double t0, double t1, int64_t n);
/* rf_rt_options.trace's callback; ctx is an rf_rt_trace_log. */
void rf_rt_trace_log_fn(void *ctx, const char *cat, const char *name, double t0, double t1, int64_t n);
/* Writes the file aside and renames it into place (rf_file.h), so a failed
** write leaves no partial file; errors name the file. process names the
** track group ("redfox run", or the library's caller). */
rf_status rf_rt_trace_log_write(const rf_rt_trace_log *t, const char *path, const char *process, rf_diags *d);

#endif
