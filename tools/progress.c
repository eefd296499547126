/*
** tools/progress.c: what long work shows on a terminal while it runs: a
** fixpoint's round and its predicates' sizes, an input file's load.
**
** Owns: the one-line display on stderr (only where stderr is a terminal:
** nothing otherwise, so nothing of it reaches a test's output), redrawn in
** place, never wrapped (a wrapped line could not be redrawn), cleared when
** the work ends; and the callbacks the runtime reports through
** (rf_rt_options.progress and .load_progress), which `run`, `tpch run` and
** `tpch bench` share.
*/
#include "rf_runtime.h"
#include "tools.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int term_width(void)
{
    struct winsize ws;
    return ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col : 80;
}

void rf_tool_progress_line(const char *text)
{
    fprintf(stderr, "\r%.*s\033[K", term_width() - 1, text);
    fflush(stderr);
}

void rf_tool_progress_clear(void)
{
    fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* A long fixpoint's round and its predicates' sizes. */
static void draw_fixpoint(void *ctx, const rf_rt_progress *p)
{
    (void)ctx;
    if (p->done) {
        rf_tool_progress_clear();
        return;
    }
    int width = term_width();
    char line[512];
    int n = snprintf(line, sizeof line, "redfox: fixpoint round %lld (%.0f s):", (long long)p->round, p->seconds);
    for (int32_t i = 0; i < p->n && n > 0 && n < (int)sizeof line; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, " %s %lld%s", p->names[i], (long long)p->rows[i],
                      i + 1 < p->n ? "," : "");
    if (p->more && n > 0 && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " and %d more", (int)p->more);
    if (n > 0 && n < (int)sizeof line && n < width - 1) snprintf(line + n, sizeof line - (size_t)n, " tuples");
    rf_tool_progress_line(line);
}

/* An amount of bytes in the unit that suits `scale` (the file's size). */
static int put_bytes(char *out, size_t n, int64_t v, int64_t scale)
{
    if (scale >= (10LL << 20)) return snprintf(out, n, "%lld", (long long)(v >> 20));
    if (scale >= (10LL << 10)) return snprintf(out, n, "%lld", (long long)(v >> 10));
    return snprintf(out, n, "%lld", (long long)v);
}

static const char *unit_of(int64_t scale)
{
    return scale >= (10LL << 20) ? "MB" : scale >= (10LL << 10) ? "KB" : "bytes";
}

/* An input file's load: which input, its phase, how many bytes of how many. */
static void draw_load(void *ctx, const rf_rt_load_progress *p)
{
    (void)ctx;
    if (p->done_all) {
        rf_tool_progress_clear();
        return;
    }
    char line[1024];
    const char *path = p->path;
    while (path[0] == '.' && path[1] == '/') path += 2; /* the default data folder */
    int n = snprintf(line, sizeof line, "redfox: loading `%s` from %s: %s", p->pred, path, p->phase);
    int64_t scale = p->total > 0 ? p->total : p->done;
    if (p->done > 0 && n > 0 && n < (int)sizeof line) {
        line[n++] = ' ';
        n += put_bytes(line + n, sizeof line - (size_t)n, p->done, scale);
        if (p->total > 0 && n > 0 && n < (int)sizeof line) {
            n += snprintf(line + n, sizeof line - (size_t)n, " of ");
            if (n > 0 && n < (int)sizeof line) n += put_bytes(line + n, sizeof line - (size_t)n, p->total, scale);
        }
        if (n > 0 && n < (int)sizeof line) n += snprintf(line + n, sizeof line - (size_t)n, " %s", unit_of(scale));
    }
    if (n > 0 && n < (int)sizeof line) snprintf(line + n, sizeof line - (size_t)n, " (%.0f s)", p->seconds);
    rf_tool_progress_line(line);
}

void rf_tool_show_progress(struct rf_rt_options *o)
{
    if (!isatty(STDERR_FILENO)) return;
    o->progress = draw_fixpoint;
    o->load_progress = draw_load;
    o->progress_ctx = NULL;
}
