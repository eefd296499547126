/*
** weaver/rf_weaver.h: Kernel Weaver, the fusion pass of the Red Fox thesis
** (chapter 4), over the Harmony IR.
**
** Owns: the classification of each producer-consumer edge of a block as a
** thread, CTA or kernel dependence (thesis 4.3.1), the fusion candidates
** between kernel dependences (Algorithm 1), the greedy grouping of each
** candidate under a register and shared-memory budget estimated from the
** tuple types (Algorithm 2), input dependences (kernels reading one input),
** and the reason every unfused boundary stays a boundary.
**
** The GPU code generator consumes the groups (skeletons/cuda/fuse.c): within
** a group it fuses map stages (thread and input dependences) and join and
** anti-join probes with the stages reading their results into one kernel that
** runs where the group's first such kernel was scheduled; so a kernel joins
** a group only if nothing scheduled in between writes what it reads, or
** reads or writes what it writes. The budgets model that generated code: a
** probe stages a tile of its keys in shared memory, map stages none.
** `redfox dump --fused` prints both this analysis and the fused kernels.
*/
#ifndef RF_WEAVER_H
#define RF_WEAVER_H

#include "rf_common.h"
#include "rf_harmony.h"

typedef enum rf_wv_dep {
    RF_WV_THREAD, /* the consumer reads the element its own thread produced */
    RF_WV_CTA,    /* the consumer reads elements of its own CTA's partition */
    RF_WV_KERNEL, /* the consumer needs all of the producer's output */
    RF_WV_INPUT   /* no producer-consumer relation: both read the same input */
} rf_wv_dep;

const char *rf_wv_dep_name(rf_wv_dep d);

typedef struct rf_wv_edge {
    int32_t block;
    int32_t producer, consumer; /* kernel ids; producer is -1 for an input dependence's first reader */
    int32_t var;                /* the variable passed (or read by both) */
    rf_wv_dep dep;
    int fused;                  /* both ends ended up in one group */
    const char *why;            /* when not fused: why */
} rf_wv_edge;

typedef struct rf_wv_group {
    int32_t block;
    int32_t *kernels; /* kernel ids in scheduled order */
    int32_t nkernels;
    int32_t regs;     /* estimated registers per thread */
    int32_t smem;     /* estimated shared memory per CTA, bytes */
} rf_wv_group;

/* What one fused kernel may use (defaults: 96 registers, 48 KiB). */
typedef struct rf_wv_budget {
    int32_t regs;
    int32_t smem;
    int32_t cta_threads; /* tuples per CTA tile, for the shared-memory estimate (default 256) */
} rf_wv_budget;

typedef struct rf_wv_plan {
    rf_wv_group *groups;
    int32_t ngroups;
    rf_wv_edge *edges;
    int32_t nedges;
} rf_wv_plan;

/* b may be NULL for the defaults. */
rf_status rf_wv_analyze(const rf_hir_program *p, const rf_wv_budget *b, rf_wv_plan **out, rf_diags *d);
void rf_wv_plan_free(rf_wv_plan *w);
/* `redfox dump --fused`: the groups, then every edge and why it is not fused. */
void rf_wv_print(const rf_hir_program *p, const rf_wv_plan *w, rf_buf *out);

#endif
