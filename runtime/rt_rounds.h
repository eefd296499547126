/*
** runtime/rt_rounds.h: which kernels a semi-naive loop's round runs, for the
** walk of the one driver (runtime/rt_run.c).
**
** Owns: the interface of rt_rounds.c (see there: a loop's kernels of empty
** input are not run, and a round looks only at the kernels whose inputs
** changed).
*/
#ifndef RF_RT_ROUNDS_H
#define RF_RT_ROUNDS_H

#include "rf_rt_dist.h"
#include "rt_device.h"

typedef struct rf_rt_rounds rf_rt_rounds;

/* For a walk of env->p on device dv (dist: NULL, or the run's ranks). */
rf_status rf_rt_rounds_new(const rf_rt_env *env, const rf_rt_device_ops *dv, void *dev, rf_rt_dist *dist,
                           rf_rt_rounds **out);
void rf_rt_rounds_free(rf_rt_rounds *r);
/* The walk enters block b (from another block, or from itself: a round). */
rf_status rf_rt_rounds_enter(rf_rt_rounds *r, int32_t b);
/* The block's next kernel the walk looks at after the j-th (j = -1: the
** first), or the block's kernel count when there is none. */
int32_t rf_rt_rounds_next(rf_rt_rounds *r, int32_t j);
/* How many kernels from the block's j-th on the walk does not run (0: it
** runs the j-th); their results, empty, are made (an insert of nothing
** leaves its set). */
int32_t rf_rt_rounds_skip(rf_rt_rounds *r, int32_t j);
/* The block's j-th kernel ran (the device had it: run, or a stage of a
** fused kernel that ran). */
void rf_rt_rounds_ran(rf_rt_rounds *r, int32_t j);
/* Variable var was released (dead: empty now). */
void rf_rt_rounds_freed(rf_rt_rounds *r, int32_t var);
/* One process, a loop block: *any becomes whether a test of its branch
** holds rows (1), kept as kernels write them; 0: the walk asks the device. */
int rf_rt_rounds_any(const rf_rt_rounds *r, int *any);
/* Several ranks: a branch's test var holds rows on some rank (1) or none (0). */
void rf_rt_rounds_tested(rf_rt_rounds *r, int32_t var, int some);
/* --profile: each loop kernel's rounds it did not run, into res->stats. */
void rf_rt_rounds_profile(const rf_rt_rounds *r, rf_rt_result *res);

#endif
