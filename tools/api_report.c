/*
** tools/api_report.c: the library's outcomes (include/redfox.h) as the
** commands report them: diagnostics printed as rf_diags_print prints the
** stages' own, REDFOX_* codes mapped to exit codes.
**
** Owns: rf_tool_finish_api and its forms for programs, databases and
** timelines; which rank reports a failed run (rf_tool_run_reports); and lines picked from a run's profile (--repeat's per-run
** report); the warnings of --repeat's runs before the last
** (rf_tool_print_new_warnings).
*/
#include "redfox.h"
#include "rf_rt_dist.h"
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rf_tool_profile_lines(const rf_result *res, const char *prefix, int (*pick)(const char *line, size_t len))
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return;
    rf_result_profile_write(res, f);
    if (fclose(f) != 0 || !text) {
        free(text);
        return;
    }
    for (char *line = text, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) break;
        if (pick(line, (size_t)(nl - line))) fprintf(stderr, "%s%.*s\n", prefix, (int)(nl - line), line);
    }
    free(text);
}

/* A line that begins with s. */
static int begins(const char *line, size_t len, const char *s)
{
    size_t n = strlen(s);
    return len >= n && !memcmp(line, s, n);
}

int rf_tool_pick_load(const char *line, size_t len)
{
    if (begins(line, len, "phases: ") || begins(line, len, "gpu input cache: ")) return 1;
    /* a rank's first line: its run, its moves and what it read and copied */
    if (!begins(line, len, "rank ")) return 0;
    for (size_t i = 0; i + 11 <= len; i++)
        if (!memcmp(line + i, " input rows", 11)) return 1;
    return 0;
}

/* A warning as printed, between newlines ("\nLINE\n": so that one line is
** never found inside another in a list of them); NULL without memory. */
static char *warning_line(const rf_diagnostic *g)
{
    return g->file[0] && g->line > 0
               ? rf_sprintf("\n%s:%d:%d: warning: %s\n", g->file, (int)g->line, (int)g->column, g->message)
           : g->file[0] ? rf_sprintf("\n%s: warning: %s\n", g->file, g->message)
                        : rf_sprintf("\nredfox: warning: %s\n", g->message);
}

/* Diagnostics records as rf_diags_print prints them: the first
** RF_DIAGS_SHOWN errors (every warning and note, but the warnings seen
** holds: printed already), then how many more. */
static int64_t print_diags(const void *obj, int64_t n, rf_tool_diag_at_fn at, const char *seen)
{
    static const char *names[] = {"error", "warning", "note"};
    int64_t shown = 0, nerrors = 0;
    for (int64_t i = 0; i < n; i++) {
        const rf_diagnostic *g = at(obj, i);
        int sev = g->severity >= 0 && g->severity <= 2 ? g->severity : 0;
        if (sev == REDFOX_SEV_ERROR) nerrors++;
        if (sev == REDFOX_SEV_ERROR && shown++ >= RF_DIAGS_SHOWN) continue;
        if (sev == REDFOX_SEV_WARNING && seen) {
            char *line = warning_line(g);
            int dup = line && strstr(seen, line);
            free(line);
            if (dup) continue;
        }
        if (g->file[0] && g->line > 0)
            fprintf(stderr, "%s:%d:%d: %s: %s\n", g->file, (int)g->line, (int)g->column, names[sev], g->message);
        else if (g->file[0])
            fprintf(stderr, "%s: %s: %s\n", g->file, names[sev], g->message);
        else
            fprintf(stderr, "redfox: %s: %s\n", names[sev], g->message);
    }
    if (nerrors > RF_DIAGS_SHOWN)
        fprintf(stderr, "redfox: %lld more error%s\n", (long long)(nerrors - RF_DIAGS_SHOWN),
                nerrors - RF_DIAGS_SHOWN == 1 ? "" : "s");
    return nerrors;
}

static int finish_api(int code, const void *obj, int64_t n, rf_tool_diag_at_fn at, int print, const char *seen)
{
    int64_t nerrors = print ? print_diags(obj, n, at, seen) : 0;
    switch (code) {
    case REDFOX_OK: return RF_EXIT_OK;
    case REDFOX_ERROR:
    case REDFOX_IO:
    case REDFOX_NOTFOUND: return RF_EXIT_USER;
    case REDFOX_NOMEM:
        /* once: where the error says so already (with its location), not again */
        if (print && !nerrors) fprintf(stderr, "redfox: error: out of memory\n");
        return RF_EXIT_USER;
    case REDFOX_MISUSE: return RF_EXIT_USAGE;
    default:
        if (print && !nerrors) fprintf(stderr, "redfox: internal error\n");
        return RF_EXIT_INTERNAL;
    }
}

int rf_tool_finish_api(int code, const void *obj, int64_t n, rf_tool_diag_at_fn at, int print)
{
    return finish_api(code, obj, n, at, print, NULL);
}

static const rf_diagnostic *database_diag(const void *db, int64_t i);

void rf_tool_print_new_warnings(const rf_database *db, char **seen)
{
    int64_t n = rf_database_diag_count(db);
    for (int64_t i = 0; i < n; i++) {
        const rf_diagnostic *g = database_diag(db, i);
        if (g->severity != REDFOX_SEV_WARNING) continue;
        char *line = warning_line(g); /* (*seen holds "\nLINE\n" for each) */
        if (!line) continue;
        /* (each line once: a warning every run gives is not printed a thousand times) */
        if (!*seen || !strstr(*seen, line)) {
            fputs(line + 1, stderr);
            char *more = rf_sprintf("%s%s", *seen ? *seen : "", line);
            if (more) {
                free(*seen);
                *seen = more;
            }
        }
        free(line);
    }
}

static const rf_diagnostic *program_diag(const void *p, int64_t i) { return rf_program_diag(p, i); }
static const rf_diagnostic *database_diag(const void *db, int64_t i) { return rf_database_diag(db, i); }
static const rf_diagnostic *trace_diag(const void *t, int64_t i) { return rf_trace_diag(t, i); }

int rf_tool_finish_program(int code, const rf_program *p, int print)
{
    return rf_tool_finish_api(code, p, rf_program_diag_count(p), program_diag, print);
}

int rf_tool_finish_database(int code, const rf_database *db, int print)
{
    return rf_tool_finish_api(code, db, rf_database_diag_count(db), database_diag, print);
}

int rf_tool_finish_database_seen(int code, const rf_database *db, int print, const char *seen)
{
    return finish_api(code, db, rf_database_diag_count(db), database_diag, print, seen);
}

int rf_tool_finish_trace(int code, const rf_trace *t, int print)
{
    return rf_tool_finish_api(code, t, rf_trace_diag_count(t), trace_diag, print);
}

int rf_tool_run_reports(int rank)
{
    int by = rf_rt_dist_stopped_by();
    return rank == 0 || by < 0 || by == rank;
}
