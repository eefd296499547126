/*
** runtime/rt_tuning.c: the table of tuning settings and its parser.
**
** Owns: each setting's name, kind, default and meaning (the one place a
** setting is defined: rf_rt_tuning's fields are reached through it), the
** parser of `name=value` and the --help text. See rf_rt_tuning.h.
*/
#include "rf_rt_tuning.h"

#include <stdlib.h>
#include <string.h>

typedef enum { ROWS, SWITCH } kind;

typedef struct setting {
    const char *name;
    kind k;
    size_t off;
    int64_t dflt;
    const char *help;
} setting;

/* Rows thresholds: a count, or "off" (never). Measurements behind the
** defaults: runtime/gpu/README.md and docs/BENCHMARKS.md. */
static const setting settings[] = {
    {"gpu_runs_min", ROWS, offsetof(rf_rt_tuning, gpu_runs_min), 65536,
     "rows from which unique, difference and group-by on the GPU first walk the runs of an "
     "ordered first column instead of hashing (a count, or off)"},
    {"gpu_ordered_min", ROWS, offsetof(rf_rt_tuning, gpu_ordered_min), 65536,
     "right rows from which a GPU join whose build side has one key column checks whether "
     "it ascends and then skips the sort (a count, or off)"},
    {"hugepages", SWITCH, offsetof(rf_rt_tuning, hugepages), 1,
     "advise transparent huge pages for big host columns (on or off; off where huge-page "
     "compaction stalls the system)"},
    {"block_skip", SWITCH, offsetof(rf_rt_tuning, block_skip), 1,
     "from a database, read only the blocks whose min/max a constant range filter can accept "
     "(on or off; off reads every block, for comparison)"},
};

void rf_rt_tuning_init(rf_rt_tuning *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        char *at = (char *)t + settings[i].off;
        if (settings[i].k == ROWS) *(int64_t *)at = settings[i].dflt;
        else *(int *)at = (int)settings[i].dflt;
    }
}

const rf_rt_tuning *rf_rt_tuning_default(void)
{
    static rf_rt_tuning d;
    static int made;
    if (!made) {
        rf_rt_tuning_init(&d);
        made = 1;
    }
    return &d;
}

rf_status rf_rt_tuning_set(rf_rt_tuning *t, const char *assign, char *why, size_t n)
{
    const char *eq = strchr(assign, '=');
    if (!eq || eq == assign) {
        snprintf(why, n, "'%s': name=value expected", assign);
        return RF_EUSAGE;
    }
    size_t len = (size_t)(eq - assign);
    const char *v = eq + 1;
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        const setting *s = &settings[i];
        if (strlen(s->name) != len || strncmp(s->name, assign, len)) continue;
        char *at = (char *)t + s->off;
        if (s->k == SWITCH) {
            if (!strcmp(v, "on") || !strcmp(v, "1")) *(int *)at = 1;
            else if (!strcmp(v, "off") || !strcmp(v, "0")) *(int *)at = 0;
            else {
                snprintf(why, n, "%s takes on or off, not '%s'", s->name, v);
                return RF_EUSAGE;
            }
            return RF_OK;
        }
        if (!strcmp(v, "off")) {
            *(int64_t *)at = INT64_MAX;
            return RF_OK;
        }
        char *end;
        long long x = *v >= '0' && *v <= '9' ? strtoll(v, &end, 10) : -1;
        if (x < 0 || *end) {
            snprintf(why, n, "%s takes a count of rows or off, not '%s'", s->name, v);
            return RF_EUSAGE;
        }
        *(int64_t *)at = (int64_t)x;
        return RF_OK;
    }
    snprintf(why, n, "unknown setting '%.*s' (see --help)", (int)len, assign);
    return RF_EUSAGE;
}

void rf_rt_tuning_help(rf_buf *out, const char *indent)
{
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        const setting *s = &settings[i];
        char d[32];
        if (s->k == SWITCH) snprintf(d, sizeof d, "%s", s->dflt ? "on" : "off");
        else snprintf(d, sizeof d, "%lld", (long long)s->dflt);
        rf_buf_printf(out, "%s%s (default %s): ", indent, s->name, d);
        /* the meaning, wrapped at 78 columns, continued under the name */
        const char *h = s->help;
        int col = (int)(strlen(indent) + strlen(s->name) + strlen(d) + 12), first = 1;
        while (*h) {
            const char *sp = strchr(h, ' ');
            int w = sp ? (int)(sp - h) : (int)strlen(h);
            if (!first && col + 1 + w > 78) {
                rf_buf_printf(out, "\n%s    ", indent);
                col = (int)strlen(indent) + 4;
            } else if (!first) {
                rf_buf_putc(out, ' ');
                col++;
            }
            rf_buf_append(out, h, w);
            col += w;
            first = 0;
            h += w;
            while (*h == ' ') h++;
        }
        rf_buf_putc(out, '\n');
    }
}
