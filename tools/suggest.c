/*
** tools/suggest.c: "did you mean" for a mistyped name on the command line
** (an option, a command, a --set setting).
**
** Owns: the distance between two names (optimal string alignment: an
** insertion, a deletion, a substitution or a swap of two neighbouring
** characters each cost one, so `--devcie` is one from `--device`), the
** bound below which a name is offered (a third of the typed name's length,
** at least one, at most three: `rnu` gets `run`, `frobnicate` gets
** nothing), and the options a command's usage text names (the synopsis
** before its first blank line, and every line that starts "  --NAME").
*/
#include "tools.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The optimal string alignment distance of a[0, na) and b[0, nb), or a
** value above limit as soon as it is known to be (names are short: rows of
** at most 64 + 1 cells; longer names are never close). */
static int64_t distance(const char *a, size_t na, const char *b, size_t nb, int64_t limit)
{
    enum { MAX = 64 };
    if (na > MAX || nb > MAX) return limit + 1;
    if ((int64_t)(na > nb ? na - nb : nb - na) > limit) return limit + 1;
    int64_t rows[3][MAX + 1]; /* rows i-2, i-1 and i, by i % 3 */
    for (size_t j = 0; j <= nb; j++) rows[0][j] = (int64_t)j;
    for (size_t i = 1; i <= na; i++) {
        int64_t *cur = rows[i % 3], *up = rows[(i - 1) % 3], *up2 = rows[(i + 1) % 3];
        cur[0] = (int64_t)i;
        for (size_t j = 1; j <= nb; j++) {
            int64_t cost = a[i - 1] != b[j - 1];
            int64_t v = up[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (up[j - 1] + cost < v) v = up[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && up2[j - 2] + 1 < v) v = up2[j - 2] + 1;
            cur[j] = v;
        }
    }
    return rows[na % 3][nb];
}

int64_t rf_tool_name_distance(const char *a, size_t na, const char *b, size_t nb)
{
    return distance(a, na, b, nb, INT64_MAX - 1);
}

const char *rf_tool_suggest(const char *word, size_t len, const char *const *names, int64_t n)
{
    size_t core = len; /* (an option's dashes are not what was mistyped) */
    for (size_t i = 0; i < len && word[i] == '-'; i++) core--;
    int64_t bound = (int64_t)core / 3;
    if (bound < 1) bound = 1;
    if (bound > 3) bound = 3;
    const char *best = NULL;
    int64_t best_d = bound + 1;
    for (int64_t i = 0; i < n; i++) {
        size_t nl = strlen(names[i]);
        if (nl == len && !strncmp(names[i], word, len)) return NULL; /* (the name is known: nothing to suggest) */
        int64_t d = distance(word, len, names[i], nl, bound);
        if (d < best_d) best = names[i], best_d = d;
    }
    return best;
}

/* The options usage names: the synopsis's (before the first blank line)
** and those that start a line of its list ("  --NAME"), each once, as
** NUL-terminated copies in buf (n bytes) pointed to by names[0, max). */
static int64_t usage_options(const char *usage, char *buf, size_t n, const char **names, int64_t max)
{
    const char *end = strstr(usage, "\n\n");
    int64_t k = 0;
    size_t used = 0;
    for (const char *p = usage; *p && k < max; p++) {
        if (p[0] != '-' || p[1] != '-' || (p > usage && (p[-1] == '-' || (p[-1] >= 'a' && p[-1] <= 'z')))) continue;
        int listed = p - usage >= 3 && p[-1] == ' ' && p[-2] == ' ' && p[-3] == '\n';
        if (end && p > end && !listed) continue;
        size_t len = 2;
        while ((p[len] >= 'a' && p[len] <= 'z') || (p[len] >= '0' && p[len] <= '9') || p[len] == '-') len++;
        if (len == 2 || used + len + 1 > n) continue;
        int seen = 0;
        for (int64_t i = 0; i < k && !seen; i++) seen = strlen(names[i]) == len && !strncmp(names[i], p, len);
        if (seen) continue;
        memcpy(buf + used, p, len);
        buf[used + len] = 0;
        names[k++] = buf + used;
        used += len + 1;
    }
    if (k < max && used + 7 <= n) { /* every command takes --help */
        memcpy(buf + used, "--help", 7);
        names[k++] = buf + used;
    }
    return k;
}

int rf_tool_unknown_option(const char *cmd, const char *arg, const char *usage)
{
    char buf[4096];
    const char *names[256];
    int64_t n = usage ? usage_options(usage, buf, sizeof buf, names, 256) : 0;
    const char *eq = strchr(arg, '='); /* --devcie=gpu: the name before its value */
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const char *s = rf_tool_suggest(arg, len, names, n);
    if (s) return rf_tool_usage_error(cmd, "unknown option '%s'; did you mean '%s'?", arg, s);
    return rf_tool_usage_error(cmd, "unknown option '%s'", arg);
}
