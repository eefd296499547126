/*
** runtime/rt_trace.c: the Chrome trace-event file of a run's timeline
** (`redfox run --trace FILE`, rf_run_options.trace_file).
**
** Owns: the file's layout: one "complete" event ("ph": "X", microseconds)
** per span, on one track per kind: phases (compile, run, output), the
** interpreter (input loads, kernels as the host ran or issued them) and the
** GPU's operations as the host saw them (launches, copies, waits, CUB
** calls; a launch returns before its kernel ends, so the kernel's own time
** lies in the waits after it).
*/
#include "rf_rt_trace.h"
#include "rf_file.h"
#include "rf_sys.h"

#include <math.h>
#include <string.h>

enum { TRACK_PHASE = 1, TRACK_HOST = 2, TRACK_GPU = 3 };

void rf_rt_trace_log_init(rf_rt_trace_log *t)
{
    rf_buf_init(&t->json);
    t->origin = rf_now();
    t->n = 0;
}

void rf_rt_trace_log_free(rf_rt_trace_log *t) { rf_buf_free(&t->json); }

/* s as a JSON string's contents. */
static void put_escaped(rf_buf *b, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            rf_buf_putc(b, '\\');
            rf_buf_putc(b, (char)c);
        } else if (c < 0x20) {
            rf_buf_printf(b, "\\u%04x", c);
        } else {
            rf_buf_putc(b, (char)c);
        }
    }
}

void rf_rt_trace_log_event(rf_rt_trace_log *t, const char *cat, const char *name, double t0, double t1, int64_t n)
{
    int track = !strcmp(cat, "phase") ? TRACK_PHASE : !strcmp(cat, "gpu") ? TRACK_GPU : TRACK_HOST;
    double ts = (t0 - t->origin) * 1e6, dur = (t1 - t0) * 1e6;
    /* JSON has no NaN or infinity: such a time is written as 0 */
    if (!isfinite(ts)) ts = 0;
    if (!isfinite(dur)) dur = 0;
    rf_buf *b = &t->json;
    rf_buf_puts(b, t->n++ ? ",\n" : "");
    rf_buf_puts(b, "{\"name\":\"");
    put_escaped(b, name);
    rf_buf_puts(b, "\",\"cat\":\"");
    put_escaped(b, cat);
    rf_buf_printf(b, "\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f", track, ts < 0 ? 0 : ts,
                  dur < 0 ? 0 : dur);
    if (n >= 0) rf_buf_printf(b, ",\"args\":{\"%s\":%lld}", track == TRACK_GPU ? "n" : "rows", (long long)n);
    rf_buf_putc(b, '}');
}

void rf_rt_trace_log_fn(void *ctx, const char *cat, const char *name, double t0, double t1, int64_t n)
{
    rf_rt_trace_log_event(ctx, cat, name, t0, t1, n);
}

rf_status rf_rt_trace_log_write(const rf_rt_trace_log *t, const char *path, const char *process, rf_diags *d)
{
    if (t->json.oom) {
        rf_error(d, rf_mkloc(path, 0, 0), "cannot write the trace: out of memory");
        return RF_ENOMEM;
    }
    static const char *tracks[] = {NULL, "phases", "interpreter (loads, kernels)", "GPU operations (host side)"};
    rf_buf head;
    rf_buf_init(&head);
    rf_buf_puts(&head, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    rf_buf_puts(&head, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"");
    put_escaped(&head, process);
    rf_buf_puts(&head, "\"}}");
    for (int i = 1; i <= 3; i++)
        rf_buf_printf(&head, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
                      i, tracks[i]);
    if (t->n) rf_buf_puts(&head, ",\n");
    if (head.oom) {
        rf_buf_free(&head);
        return RF_ENOMEM;
    }
    rf_file_out f;
    rf_file_out_init(&f);
    rf_file_remove_stale_unlocked(path); /* (a killed run's temporary) */
    rf_status st = rf_file_out_open(&f, path, d);
    if (!st) {
        rf_file_out_write_cb(&f, head.data, head.len);
        if (t->json.len) rf_file_out_write_cb(&f, t->json.data, t->json.len);
        rf_file_out_write_cb(&f, "\n]}\n", 4);
        st = rf_file_out_close(&f, d);
    }
    if (!st) st = rf_file_out_rename(&f, d);
    rf_file_out_abort(&f);
    rf_buf_free(&head);
    return st;
}
