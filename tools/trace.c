/*
** tools/trace.c: the Chrome trace-event file of `redfox run --trace FILE`.
**
** Owns: the file's layout: one "complete" event ("ph": "X", microseconds)
** per span, on one track per kind: phases (compile, run, output), the
** interpreter (input loads, kernels as the host ran or issued them) and the
** GPU's operations as the host saw them (launches, copies, waits, CUB
** calls; a launch returns before its kernel ends, so the kernel's own time
** lies in the waits after it).
*/
#include "trace.h"
#include "rf_sys.h"

#include <errno.h>
#include <string.h>

enum { TRACK_PHASE = 1, TRACK_HOST = 2, TRACK_GPU = 3 };

void rf_tool_trace_init(rf_tool_trace *t)
{
    rf_buf_init(&t->json);
    t->origin = rf_now();
    t->n = 0;
}

void rf_tool_trace_free(rf_tool_trace *t) { rf_buf_free(&t->json); }

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

void rf_tool_trace_event(rf_tool_trace *t, const char *cat, const char *name, double t0, double t1, int64_t n)
{
    int track = !strcmp(cat, "phase") ? TRACK_PHASE : !strcmp(cat, "gpu") ? TRACK_GPU : TRACK_HOST;
    double ts = (t0 - t->origin) * 1e6, dur = (t1 - t0) * 1e6;
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

void rf_tool_trace_fn(void *ctx, const char *cat, const char *name, double t0, double t1, int64_t n)
{
    rf_tool_trace_event(ctx, cat, name, t0, t1, n);
}

int rf_tool_trace_write(const rf_tool_trace *t, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    static const char *tracks[] = {NULL, "phases", "interpreter (loads, kernels)", "GPU operations (host side)"};
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
    fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"redfox run\"}}", f);
    for (int i = 1; i <= 3; i++)
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"%s\"}}", i,
                tracks[i]);
    if (t->n) fputs(",\n", f);
    if (t->json.len) fwrite(t->json.data, 1, (size_t)t->json.len, f);
    fputs("\n]}\n", f);
    int bad = ferror(f) || t->json.oom;
    int err = errno;
    if (fclose(f) != 0 && !bad) return -1;
    if (bad) errno = t->json.oom ? ENOMEM : err;
    return bad ? -1 : 0;
}
