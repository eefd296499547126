/*
** tools/progress.c: what long work shows on a terminal while it runs: a
** fixpoint's round and its predicates' sizes, an input file's load.
**
** Owns: the one-line display on stderr (only where stderr is a terminal:
** nothing otherwise, so nothing of it reaches a test's output), redrawn in
** place, never wrapped (a wrapped line could not be redrawn), cleared when
** the work ends; drawn from the library's progress record (rf_progress,
** redfox.h), which `run` gets through rf_run_options.progress, and `tpch
** run` and `tpch bench` through the runtime's callbacks
** (rf_rt_options.progress and .load_progress), relayed as the same record.
*/
#include "redfox.h"
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
static void draw_fixpoint(const rf_progress *p)
{
    if (p->done) {
        rf_tool_progress_clear();
        return;
    }
    int width = term_width();
    char line[512];
    int n = snprintf(line, sizeof line, "redfox: fixpoint round %lld (%.0f s):", (long long)p->round, p->seconds);
    for (int32_t i = 0; i < p->npreds && n > 0 && n < (int)sizeof line; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, " %s %lld%s", p->preds[i], (long long)p->rows[i],
                      i + 1 < p->npreds ? "," : "");
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
static void draw_load(const rf_progress *p)
{
    if (p->done) {
        rf_tool_progress_clear();
        return;
    }
    char line[1024];
    const char *path = p->path;
    while (path[0] == '.' && path[1] == '/') path += 2; /* the default data folder */
    int n = snprintf(line, sizeof line, "redfox: loading `%s` from %s: %s", p->input, path, p->phase);
    int64_t scale = p->bytes_total > 0 ? p->bytes_total : p->bytes_done;
    if (p->bytes_done > 0 && n > 0 && n < (int)sizeof line) {
        line[n++] = ' ';
        n += put_bytes(line + n, sizeof line - (size_t)n, p->bytes_done, scale);
        if (p->bytes_total > 0 && n > 0 && n < (int)sizeof line) {
            n += snprintf(line + n, sizeof line - (size_t)n, " of ");
            if (n > 0 && n < (int)sizeof line) n += put_bytes(line + n, sizeof line - (size_t)n, p->bytes_total, scale);
        }
        if (n > 0 && n < (int)sizeof line) n += snprintf(line + n, sizeof line - (size_t)n, " %s", unit_of(scale));
    }
    if (n > 0 && n < (int)sizeof line) snprintf(line + n, sizeof line - (size_t)n, " (%.0f s)", p->seconds);
    rf_tool_progress_line(line);
}

void rf_tool_draw_progress(void *user, const rf_progress *p)
{
    (void)user;
    if (p->kind == REDFOX_PROGRESS_FIXPOINT) draw_fixpoint(p);
    else draw_load(p);
}

/* The runtime's reports as the library's record (the commands that run
** without the library: tpch run, tpch bench). */
static void relay_fixpoint(void *ctx, const rf_rt_progress *p)
{
    (void)ctx;
    rf_progress g = {.size = sizeof g, .kind = REDFOX_PROGRESS_FIXPOINT, .done = p->done, .seconds = p->seconds,
                     .round = p->round, .npreds = p->n, .more = p->more, .preds = p->names, .rows = p->rows};
    draw_fixpoint(&g);
}

static void relay_load(void *ctx, const rf_rt_load_progress *p)
{
    (void)ctx;
    rf_progress g = {.size = sizeof g, .kind = REDFOX_PROGRESS_LOAD, .done = p->done_all, .seconds = p->seconds,
                     .input = p->pred, .path = p->path, .phase = p->phase, .bytes_done = p->done,
                     .bytes_total = p->total};
    draw_load(&g);
}

void rf_tool_show_progress(struct rf_rt_options *o)
{
    if (!isatty(STDERR_FILENO)) return;
    o->progress = relay_fixpoint;
    o->load_progress = relay_load;
    o->progress_ctx = NULL;
}
