/*
** frontend/suggest.c: "did you mean" for names the checker does not know.
**
** Owns: the edit distance between names (insertions, deletions,
** substitutions and swaps of neighbours, case ignored) and how near a
** candidate must be to be offered: at most a third of the longer name's
** letters changed, so `custmer` finds `customer` and `x` does not find `y`;
** the hint added to a bad character's error inside a predicate's name.
*/
#include "check_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Names longer than this are not compared (no one mistypes them alike). */
#define MAX_LEN 64

/* The optimal-string-alignment distance between a and b, or a number above
** limit as soon as it must exceed limit. */
static int32_t distance(const char *a, const char *b, int32_t limit)
{
    int32_t n = (int32_t)strlen(a), m = (int32_t)strlen(b);
    if (n > MAX_LEN || m > MAX_LEN) return limit + 1;
    if (abs(n - m) > limit) return limit + 1;
    int32_t rows[3][MAX_LEN + 1];
    int32_t *pp = rows[0], *p = rows[1], *cur = rows[2];
    for (int32_t j = 0; j <= m; j++) p[j] = j;
    for (int32_t i = 1; i <= n; i++) {
        cur[0] = i;
        int32_t best = cur[0];
        for (int32_t j = 1; j <= m; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int32_t v = p[j - 1] + (ca != cb);
            if (p[j] + 1 < v) v = p[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            cur[j] = v;
            if (v < best) best = v;
        }
        if (best > limit) return limit + 1;
        int32_t *t = pp;
        pp = p;
        p = cur;
        cur = t;
    }
    return p[m];
}

const char *rf_chk_suggest(const char *name, const char *const *cands, int64_t n)
{
    const char *best = NULL;
    int32_t bestd = 0, len = (int32_t)strlen(name);
    for (int64_t i = 0; i < n; i++) {
        const char *s = cands[i];
        if (!s || !strcmp(s, name)) continue;
        int32_t longer = len > (int32_t)strlen(s) ? len : (int32_t)strlen(s);
        int32_t limit = longer / 3;
        if (best && bestd - 1 < limit) limit = bestd - 1;
        if (limit < 1) continue;
        int32_t d = distance(name, s, limit);
        if (d <= limit) {
            best = s;
            bestd = d;
        }
    }
    return best;
}

const char *rf_chk_suggest_name(const rf_checker *c, const char *name, int builtins)
{
    const char *best = NULL;
    int64_t n = c->preds.count;
    const char **cands = rf_calloc((size_t)n + 64, sizeof *cands);
    if (!cands) return NULL;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        const rf_fe_pred *p = c->preds.items[i];
        if (!p->aux) cands[k++] = p->name;
    }
    for (int64_t i = 0; builtins && k < n + 64; i++) {
        const rf_builtin_info *bi = rf_fe_builtin_at(i);
        if (!bi) break;
        cands[k++] = bi->name;
    }
    best = rf_chk_suggest(name, cands, k);
    free(cands);
    return best;
}

/* The known name a cut name most likely meant: itself where it is one (the
** bad character was inserted), else the nearest (one replaced or cut off). */
static const char *cut_meant(const rf_checker *c, const char *name)
{
    for (int64_t i = 0; i < c->preds.count; i++) {
        const rf_fe_pred *p = c->preds.items[i];
        if (!p->aux && !strcmp(p->name, name)) return p->name;
    }
    for (int64_t i = 0;; i++) {
        const rf_builtin_info *bi = rf_fe_builtin_at(i);
        if (!bi) break;
        if (!strcmp(bi->name, name)) return bi->name;
    }
    return rf_chk_suggest_name(c, name, 1);
}

void rf_chk_cut_names(rf_checker *c, const rf_ast_program *ast)
{
    for (int64_t i = 0; i < ast->ncut_names; i++) {
        const rf_ast_cut_name *cn = ast->cut_names[i];
        if (!cn->pred || !cn->name[0]) continue;
        const char *near = cut_meant(c, cn->name);
        if (!near) continue;
        /* the lexer's error for the character, said at its place */
        for (int64_t j = 0; j < c->d->count; j++) {
            rf_diag *g = &c->d->items[j];
            if (g->sev != RF_SEV_ERROR || g->loc.line != cn->loc.line || g->loc.col != cn->loc.col || !g->loc.file ||
                !cn->loc.file || strcmp(g->loc.file, cn->loc.file))
                continue;
            char *m = rf_sprintf("%s; did you mean `%s`?", g->msg, near);
            if (!m) {
                c->oom = 1;
                return;
            }
            free(g->msg);
            g->msg = m;
            break;
        }
    }
}
