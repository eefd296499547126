/*
** runtime/rf_rt_agg_expr.h: the group a run-time error in an aggregated
** expression names (rt_agg_expr.c).
*/
#ifndef RF_RT_AGG_EXPR_H
#define RF_RT_AGG_EXPR_H

#include "rf_harmony.h"
#include "rf_rt_data.h"

/* On the error path of map kernel k of p (a MAP, JOIN_MAP or GATHER_MAP
** whose evaluation over sides, n rows, met a run-time error), where k's
** rows reach a REDUCE (through UNIQUE, CONCAT and COPY kernels only), every
** failing row fails first in k's filter or in an output that is not one of
** the REDUCE's group columns (`total(a / b)`; `count()` over a body where
** `y = a / b`, a filter), and its group columns compute: replaces the
** caller's message (d's diagnostics after the first `keep` of them,
** keep_errors errors) by one at ctx->loc, "WHY for the group (KEY, ...)"
** (without the group where the REDUCE has no group columns). Of every
** failing row it names the least group key (rf_rt_fd_clash_key's order)
** and there the least message by its bytes, so that any row order, device
** and split over ranks name one; unless clash is NULL, it puts the key's
** bytes and the message's there (ranks vote the least). Returns RF_EUSER,
** also where that does not hold (d as it was: the caller's own first
** failing row, as for any other expression), or RF_ENOMEM with an error in
** d. Evaluates every row again: for the error path only. */
rf_status rf_rt_agg_expr_fail(const rf_rt_eval_ctx *ctx, const rf_hir_program *p, const rf_hir_kernel *k,
                              const rf_rt_side sides[2], int64_t n, rf_diags *d, int64_t keep,
                              int64_t keep_errors, rf_buf *clash);

#endif
