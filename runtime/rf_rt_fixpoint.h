/*
** runtime/rf_rt_fixpoint.h: the watch over the block graph that the
** driver's walk keeps (runtime/rt_run.c), whatever the device.
**
** Owns: the rounds of every block, the --max-iterations bound (none by
** default: a recursion runs until it derives nothing new, as in Soufflé),
** the error that names a stopped stratum's predicates and their sizes (over
** every rank where there are several), and
** the progress reports of a long fixpoint (rf_rt_options.progress).
*/
#ifndef RF_RT_FIXPOINT_H
#define RF_RT_FIXPOINT_H

#include "rf_runtime.h"

/* The rows a device holds for a variable now (its own bookkeeping). */
typedef int64_t (*rf_rt_rows_fn)(const void *ctx, int32_t var);
/* With several ranks: turns n variables' rows on this rank (rows, in place)
** into the run's, over every rank; a collective, which every rank makes at
** the same step of the walk (the --max-iterations error, reached by all in
** the same round). */
typedef rf_status (*rf_rt_totals_fn)(void *ctx, int32_t n, const int32_t *vars, int64_t *rows, rf_diags *d);

typedef struct rf_rt_fixpoint {
    const rf_hir_program *p;
    const rf_rt_options *o;
    rf_rt_rows_fn rows;
    const void *ctx;
    /* NULL in one process; with several ranks, what makes a rank's sizes the
    ** run's, so that the error names the sizes one process would */
    rf_rt_totals_fn totals;
    void *totals_ctx;
    int64_t *visits;   /* entries of each block */
    int32_t cur;       /* the block entered last (-1: none) */
    double t0;         /* when the current loop was entered from another block */
    double last;       /* the last progress report */
    int shown;         /* a report is on display */
} rf_rt_fixpoint;

rf_status rf_rt_fixpoint_init(rf_rt_fixpoint *f, const rf_hir_program *p, const rf_rt_options *o, rf_rt_rows_fn rows,
                              const void *ctx);
/* Counts one entry into block b; reports progress when due; RF_EUSER (with
** the error in d) once a loop has run o->max_iterations rounds. */
rf_status rf_rt_fixpoint_enter(rf_rt_fixpoint *f, int32_t b, rf_diags *d);
/* Clears a progress display and frees the watch. */
void rf_rt_fixpoint_end(rf_rt_fixpoint *f);

#endif
