/*
** runtime/rt_fixpoint.c: the fixpoint watch of the devices' interpreters
** (rf_rt_fixpoint.h).
**
** Owns: rounds per block, the optional --max-iterations bound and its error,
** and when progress is reported. A semi-naive loop is a block that branches
** back to itself; its predicates are the relations its INSERT kernels grow
** (the stratum's predicates), else the deltas it tests.
*/
#include "rf_rt_fixpoint.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A loop reports its progress once it has run this long, then this often. */
#define PROGRESS_AFTER_S 1.0
#define PROGRESS_EVERY_S 0.1
/* Predicates named in the error and in a report, at most. */
#define MAX_NAMED 16

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int is_loop(const rf_hir_block *bl)
{
    return bl->term == RF_HIR_T_BRANCH && (bl->target == bl->id || bl->else_target == bl->id);
}

/* The predicates of loop block bl (at most MAX_NAMED, *more counts the
** rest): the outputs of its INSERT kernels, or else its tested deltas. */
/* A predicate the front end made (frontend/desugar_aux.c: `_not<line>_<col>` for
** a negated conjunction, `_body<line>_<col>` for a shared body), which means
** nothing to the user. */
static int compiler_made(const char *name)
{
    if (!name) return 0;
    if (!strncmp(name, "_not", 4)) name += 4;
    else if (!strncmp(name, "_body", 5)) name += 5;
    else return 0;
    return *name >= '0' && *name <= '9';
}

static int32_t loop_preds(const rf_hir_program *p, const rf_hir_block *bl, int32_t *vars, int32_t *more)
{
    int32_t n = 0;
    *more = 0;
    /* the user's predicates; the compiler's helpers only when the loop has
    ** nothing else */
    for (int pass = 0; pass < 2 && !n && !*more; pass++)
        for (int32_t j = 0; j < bl->nkernels; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            if (k->kind != RF_HIR_INSERT) continue;
            if (!pass && compiler_made(p->vars[k->out]->name)) continue;
            int dup = 0;
            for (int32_t i = 0; i < n; i++) dup |= vars[i] == k->out;
            if (dup) continue;
            if (n < MAX_NAMED) vars[n++] = k->out;
            else ++*more;
        }
    if (!n && !*more)
        for (int32_t t = 0; t < bl->ntest; t++) {
            if (n < MAX_NAMED) vars[n++] = bl->test[t];
            else ++*more;
        }
    /* in the program's order (variables are numbered in source order), not the schedule's */
    for (int32_t i = 1; i < n; i++)
        for (int32_t j = i; j > 0 && vars[j - 1] > vars[j]; j--) {
            int32_t t = vars[j];
            vars[j] = vars[j - 1];
            vars[j - 1] = t;
        }
    return n;
}

rf_status rf_rt_fixpoint_init(rf_rt_fixpoint *f, const rf_hir_program *p, const rf_rt_options *o, rf_rt_rows_fn rows,
                              const void *ctx)
{
    memset(f, 0, sizeof *f);
    f->p = p;
    f->o = o;
    f->rows = rows;
    f->ctx = ctx;
    f->cur = -1;
    f->visits = rf_calloc((size_t)p->nblocks + 1, sizeof *f->visits);
    return f->visits ? RF_OK : RF_ENOMEM;
}

static void clear_display(rf_rt_fixpoint *f)
{
    if (!f->shown) return;
    f->shown = 0;
    rf_rt_progress pr;
    memset(&pr, 0, sizeof pr);
    pr.done = 1;
    f->o->progress(f->o->progress_ctx, &pr);
}

static void report(rf_rt_fixpoint *f, const rf_hir_block *bl, int64_t round, double t)
{
    int32_t vars[MAX_NAMED], more;
    const char *names[MAX_NAMED];
    int64_t rows[MAX_NAMED];
    int32_t n = loop_preds(f->p, bl, vars, &more);
    for (int32_t i = 0; i < n; i++) {
        names[i] = f->p->vars[vars[i]]->name;
        rows[i] = f->rows(f->ctx, vars[i]);
    }
    rf_rt_progress pr = {round, t - f->t0, n, more, names, rows, 0};
    f->o->progress(f->o->progress_ctx, &pr);
    f->shown = 1;
    f->last = t;
}

rf_status rf_rt_fixpoint_enter(rf_rt_fixpoint *f, int32_t b, rf_diags *d)
{
    const rf_hir_block *bl = f->p->blocks[b];
    int64_t round = ++f->visits[b];
    int entered = f->cur != b;
    f->cur = b;
    if (f->o->progress) {
        if (!is_loop(bl)) {
            clear_display(f);
        } else {
            double t = now();
            if (entered) f->t0 = t;
            if (t - f->t0 >= PROGRESS_AFTER_S && t - f->last >= PROGRESS_EVERY_S) report(f, bl, round, t);
        }
    }
    int64_t max_iter = f->o->max_iterations;
    if (max_iter <= 0 || round <= max_iter) return RF_OK;
    clear_display(f);
    /* the predicates and their sizes say what diverges better than the block */
    int32_t vars[MAX_NAMED], more;
    int32_t n = loop_preds(f->p, bl, vars, &more);
    int64_t rows[MAX_NAMED];
    for (int32_t i = 0; i < n; i++) rows[i] = f->rows(f->ctx, vars[i]);
    /* the tested deltas' rows: the last round's new tuples */
    int64_t *tested = rf_calloc((size_t)bl->ntest + 1, sizeof *tested);
    if (!tested) return RF_ENOMEM;
    for (int32_t t = 0; t < bl->ntest; t++) tested[t] = f->rows(f->ctx, bl->test[t]);
    /* several ranks: each holds its share of a relation (or all of it,
    ** replicated), so the sizes are made the run's, not this rank's */
    rf_status st = RF_OK;
    if (f->totals) st = f->totals(f->totals_ctx, n, vars, rows, d);
    if (f->totals && !st) st = f->totals(f->totals_ctx, bl->ntest, bl->test, tested, d);
    int64_t added = 0;
    for (int32_t t = 0; t < bl->ntest; t++) added += tested[t];
    free(tested);
    if (st) return st;
    rf_buf b2;
    rf_buf_init(&b2);
    for (int32_t i = 0; i < n; i++)
        rf_buf_printf(&b2, "%s`%s` (%lld tuple%s)", i ? ", " : "", f->p->vars[vars[i]]->name, (long long)rows[i],
                      rows[i] == 1 ? "" : "s");
    if (more) rf_buf_printf(&b2, " and %d more", (int)more);
    if (!n) rf_buf_puts(&b2, bl->comment ? bl->comment : "a recursive stratum");
    rf_error(d, rf_mkloc(f->p->source, 0, 0),
             "the recursion of %s did not converge within %lld iterations: its last round derived %lld new "
             "tuple%s (raise --max-iterations, or look for a rule that derives ever new values)",
             b2.oom ? "a recursive stratum" : rf_buf_cstr(&b2), (long long)max_iter, (long long)added,
             added == 1 ? "" : "s");
    rf_buf_free(&b2);
    return RF_EUSER;
}

void rf_rt_fixpoint_end(rf_rt_fixpoint *f)
{
    if (f->o && f->o->progress) clear_display(f);
    free(f->visits);
    f->visits = NULL;
}
