/*
** runtime/rf_rt_lftj.h: the leapfrog triejoin (Harmony's LFTJ kernel) as
** both devices read it, and its search on the CPU.
**
** Owns: the kernel's parameters decoded into a plan both executors share
** (rf_rt_lftj: which input holds which variable at which depth, the bounds
** normalized to "variable op earlier variable or constant", the work items),
** and the search itself over sorted int64 columns (rf_rt_lftj_item): per
** work item, the variables are bound in order; each variable's candidates
** are the values every input holding it has in its current range, found by
** leapfrogging (each input's cursor jumps, by galloping search, to the
** largest candidate so far until all agree), narrowed by the bounds. The
** GPU runs the same search (skeletons/cuda/rf_lftj.cuh), one thread per item.
**
** A work item is a distinct prefix of the driver input (the input holding
** variables 0 and 1 when one does, else 0): prefix length `fixed`, so a hub
** of a skewed graph is split into one item per edge rather than one per node.
*/
#ifndef RF_RT_LFTJ_H
#define RF_RT_LFTJ_H

#include "rf_common.h"
#include "rf_queryplan.h"

#define RF_RT_LFTJ_MAX_INPUTS 8
#define RF_RT_LFTJ_MAX_VARS 16
#define RF_RT_LFTJ_MAX_BOUNDS 16

typedef struct rf_rt_lftj_bound {
    int32_t v;   /* the variable checked */
    int32_t op;  /* rf_cmp_op: v op x */
    int32_t x;   /* an earlier variable (or v itself), or -1: the constant c */
    int64_t c;
} rf_rt_lftj_bound;

typedef struct rf_rt_lftj {
    int32_t nvars, nin;
    int32_t ncols[RF_RT_LFTJ_MAX_INPUTS];  /* columns of each sorted input */
    int32_t coloff[RF_RT_LFTJ_MAX_INPUTS]; /* its first flat column */
    uint64_t mask[RF_RT_LFTJ_MAX_INPUTS];  /* the variables it binds */
    int32_t driver, fixed;                 /* work items: distinct prefixes of driver */
    int32_t nbounds;
    rf_rt_lftj_bound bounds[RF_RT_LFTJ_MAX_BOUNDS];
} rf_rt_lftj;

/* The plan of an LFTJ kernel: vars = lkeys (variable of each flat column),
** ins = rkeys (input of each flat column), n of them; filter over the
** variables. RF_EINTERNAL when the parameters do not describe a valid LFTJ
** (the .rfx decoder checks them first). */
rf_status rf_rt_lftj_plan(int32_t nvars, int32_t nin, const int32_t *vars, const int32_t *ins, int32_t n,
                          const rf_qp_expr *filter, rf_rt_lftj *out);

/* Whether row r of the driver starts a work item (a new prefix). */
int rf_rt_lftj_item_starts(const rf_rt_lftj *j, const int64_t *const *cols, int64_t r);

/* The bindings of work item r (a row of the driver), in order: with out NULL
** only counted; else written to out[v][at + i] (int64 columns). cols: the
** flat columns of the sorted inputs, nrows: their rows. Returns the count. */
int64_t rf_rt_lftj_item(const rf_rt_lftj *j, const int64_t *const *cols, const int64_t *nrows, int64_t r,
                        int64_t *const *out, int64_t at);

#endif
