/*
** tools/trace.h: `--trace FILE`: a run's timeline as a Chrome trace-event
** JSON file (https://ui.perfetto.dev and chrome://tracing open it).
*/
#ifndef RF_TOOLS_TRACE_H
#define RF_TOOLS_TRACE_H

#include "rf_common.h"
#include "rf_runtime.h"

typedef struct rf_tool_trace {
    rf_buf json;   /* the events so far, comma-separated */
    double origin; /* rf_now() at the start: time 0 of the file */
    int64_t n;
} rf_tool_trace;

void rf_tool_trace_init(rf_tool_trace *t);
void rf_tool_trace_free(rf_tool_trace *t);
/* One span: cat "phase" (compile, run, output), "load", "kernel" or "gpu"
** (rf_rt_trace_fn's categories), from t0 to t1 (rf_now() seconds). */
void rf_tool_trace_event(rf_tool_trace *t, const char *cat, const char *name, double t0, double t1, int64_t n);
/* rf_rt_options.trace's callback; ctx is an rf_tool_trace. */
void rf_tool_trace_fn(void *ctx, const char *cat, const char *name, double t0, double t1, int64_t n);
/* Writes the file; 0, or -1 with errno set. */
int rf_tool_trace_write(const rf_tool_trace *t, const char *path);

#endif
