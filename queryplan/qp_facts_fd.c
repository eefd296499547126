/*
** queryplan/qp_facts_fd.c: facts of a functional predicate that give one
** key two values, reported where they are written.
**
** Owns: the compile-time error for two facts (f[1] = 2. f[1] = 3.) that
** break a functional dependency: at the later fact, naming the earlier, as
** a compiler reports a redefinition. Facts are constants, so no run can
** pass the check; a clash that needs a rule's row is left for the run
** time's check (runtime/rt_fd_clash.c), which names the predicate.
*/
#include "qp_internal.h"

#include <stdlib.h>

/* A constant as a run-time message prints a value of its column (rt_rel.c). */
static void format_const(rf_buf *b, const rf_fe_const *v)
{
    switch (v->type) {
    case RF_TYPE_INT: rf_val_fmt_int(b, v->i); break;
    case RF_TYPE_DECIMAL: rf_val_fmt_dec(b, v->i); break;
    case RF_TYPE_DEC128: rf_val_fmt_dec128(b, (rf_dec128)v->i); break; /* a decimal's value */
    case RF_TYPE_FLOAT: rf_val_fmt_float(b, v->f); break;
    case RF_TYPE_DATE: rf_val_fmt_date(b, (int32_t)v->i); break;
    case RF_TYPE_BOOL: rf_val_fmt_bool(b, (uint8_t)v->i); break;
    case RF_TYPE_STRING:
        rf_buf_putc(b, '"');
        rf_buf_append(b, v->s, v->slen > 60 ? 60 : v->slen);
        rf_buf_puts(b, v->slen > 60 ? "...\"" : "\"");
        break;
    }
}

static void format_cols(rf_buf *b, const rf_fe_const *row, int32_t c0, int32_t c1)
{
    rf_buf_putc(b, '(');
    for (int32_t c = c0; c < c1; c++) {
        if (c > c0) rf_buf_puts(b, ", ");
        format_const(b, &row[c]);
    }
    rf_buf_putc(b, ')');
}

static int cols_cmp(const rf_fe_const *rows, int32_t w, int64_t a, int64_t b, int32_t c0, int32_t c1)
{
    for (int32_t c = c0; c < c1; c++) {
        int s = qp_const_cmp(&rows[a * w + c], &rows[b * w + c]);
        if (s) return s;
    }
    return 0;
}

/* a clash: fact later (in source order) gives the key another value than earlier */
typedef struct clash {
    int64_t later, earlier;
} clash;

static int clash_cmp(const void *a, const void *b)
{
    int64_t x = ((const clash *)a)->later, y = ((const clash *)b)->later;
    return (x > y) - (x < y);
}

int qp_facts_fd_check(rf_diags *d, const rf_fe_pred *q, const rf_fe_const *rows, const int64_t *sorted, int64_t n,
                      const rf_loc *locs)
{
    int32_t w = q->arity, nk = q->arity - 1;
    clash *found = rf_malloc((size_t)(n + 1) * sizeof *found);
    if (!found) return -1;
    int64_t nfound = 0;
    /* sorted by every column, the key's first: a key's facts are one run */
    for (int64_t g0 = 0, g1; g0 < n; g0 = g1) {
        int64_t first = sorted[g0];
        for (g1 = g0 + 1; g1 < n && !cols_cmp(rows, w, sorted[g0], sorted[g1], 0, nk); g1++)
            if (sorted[g1] < first) first = sorted[g1];
        /* the first fact (in source order) whose value is not the key's
        ** first value: every fact before it agrees with the first */
        int64_t later = -1;
        for (int64_t i = g0; i < g1; i++)
            if (cols_cmp(rows, w, sorted[i], first, nk, w) && (later < 0 || sorted[i] < later)) later = sorted[i];
        if (later >= 0) found[nfound++] = (clash){later, first};
    }
    qsort(found, (size_t)nfound, sizeof *found, clash_cmp);
    for (int64_t i = 0; i < nfound; i++) {
        const rf_fe_const *a = &rows[found[i].later * w], *b0 = &rows[found[i].earlier * w];
        rf_loc there = locs[found[i].earlier];
        rf_buf b;
        rf_buf_init(&b);
        if (nk == 0)
            rf_buf_printf(&b, "functional dependency violated: `%s` (without key columns) has two values: ", q->name);
        else {
            rf_buf_printf(&b, "functional dependency violated: `%s` has two values for the key ", q->name);
            format_cols(&b, a, 0, nk);
            rf_buf_puts(&b, ": ");
        }
        format_cols(&b, a, nk, w);
        rf_buf_puts(&b, " here, ");
        format_cols(&b, b0, nk, w);
        rf_buf_printf(&b, " at %s:%d:%d", there.file ? there.file : "<unknown>", there.line, there.col);
        rf_error(d, locs[found[i].later], "%s", b.oom ? "functional dependency violated" : rf_buf_cstr(&b));
        rf_buf_free(&b);
    }
    free(found);
    return nfound > 0;
}
