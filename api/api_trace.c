/*
** api/api_trace.c: a timeline the caller holds across runs (rf_trace), for
** a program that adds its own phases around them (`redfox run`: compile,
** run, output) and writes one Chrome trace-event file.
**
** Owns: rf_trace_* (the events through the runtime's trace log,
** runtime/rf_rt_trace.h, their names checked to be UTF-8 as JSON's text
** is, and the diagnostics of a failed write).
*/
#include "api_internal.h"
#include "rf_sys.h"
#include "rf_value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Is s valid UTF-8? JSON text is UTF-8: other bytes copied into the file
** made one no JSON parser reads. */
static int utf8_ok(const char *s)
{
    rf_val_err e;
    return rf_val_check_utf8(s, (int64_t)strlen(s), &e) == RF_OK;
}

rf_trace *rf_trace_new(void)
{
    rf_trace *t = rf_calloc(1, sizeof *t);
    if (t) rf_rt_trace_log_init(&t->log);
    return t;
}

void rf_trace_free(rf_trace *t)
{
    if (!t) return;
    rf_rt_trace_log_free(&t->log);
    api_diags_clear(&t->diags);
    free(t);
}

double rf_trace_clock(void) { return rf_now(); }

int rf_trace_event(rf_trace *t, const char *cat, const char *name, double t0, double t1, int64_t n)
{
    if (!t) return REDFOX_MISUSE;
    api_diags_clear(&t->diags);
    if (!cat || !name) {
        api_diags_error(&t->diags, "rf_trace_event: no %s", !cat ? "category" : "name");
        return REDFOX_MISUSE;
    }
    if (!utf8_ok(cat) || !utf8_ok(name)) {
        api_diags_error(&t->diags, "rf_trace_event: the %s is not valid UTF-8 (JSON's text is)",
                        !utf8_ok(cat) ? "category" : "name");
        return REDFOX_MISUSE;
    }
    /* a time that is no number writes no JSON number (the file was not JSON) */
    if (!isfinite(t0) || !isfinite(t1)) {
        api_diags_error(&t->diags,
                        "rf_trace_event: %s: the start and end must be finite times (rf_trace_clock), not %g and %g",
                        name, t0, t1);
        return REDFOX_MISUSE;
    }
    rf_rt_trace_log_event(&t->log, cat, name, t0, t1, n);
    return t->log.json.oom ? REDFOX_NOMEM : REDFOX_OK;
}

int rf_trace_write(rf_trace *t, const char *path, const char *process)
{
    if (!t) return REDFOX_MISUSE;
    api_diags_clear(&t->diags);
    if (!path || !*path) {
        api_diags_error(&t->diags, "rf_trace_write: no file");
        return REDFOX_MISUSE;
    }
    if (process && !utf8_ok(process)) {
        api_diags_error(&t->diags, "rf_trace_write: the process name is not valid UTF-8 (JSON's text is)");
        return REDFOX_MISUSE;
    }
    rf_diags d;
    rf_diags_init(&d);
    rf_status st = rf_rt_trace_log_write(&t->log, path, process ? process : "redfox library", &d);
    st = rf_diags_status(&d, st); /* a bug exits 3 */
    rf_status dst = api_diags_set(&t->diags, &d);
    rf_diags_free(&d);
    if (!st) st = dst;
    return api_code(st);
}

const char *rf_trace_errmsg(const rf_trace *t) { return t ? api_diags_errmsg(&t->diags) : ""; }
int64_t rf_trace_diag_count(const rf_trace *t) { return t ? t->diags.n : 0; }

const rf_diagnostic *rf_trace_diag(const rf_trace *t, int64_t i)
{
    return t && i >= 0 && i < t->diags.n ? &t->diags.items[i] : NULL;
}
