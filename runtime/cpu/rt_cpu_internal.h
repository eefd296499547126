/*
** runtime/cpu/rt_cpu_internal.h: the CPU executor's inside: what its files
** share.
**
** Owns: the executor's types (exec: a run on the CPU; val: one variable's
** value) and the functions its files share (rf_cx_: "CPU executor"). The
** executor is split by role, as the GPU's is behind rt_gpu_internal.h:
**   rt_cpu_exec.c    values, the device's operations (rt_device.h), one
**                    kernel dispatched by kind; maps, joins, groups, concat,
**                    gather, copy, facts
**   rt_cpu_reduce.c  REDUCE: counts, exact sums, averages, min and max
**   rt_cpu_sets.c    UNIQUE, DIFFERENCE, INSERT on hash sets; the
**                    functional-dependency check
**   rt_cpu_sort.c    SORT (with a limit: candidates first); strings in byte
**                    order through ranks
**   rt_cpu_lftj.c    LFTJ: the leapfrog triejoin over the threads
**   rt_cpu_gtotals.c a MAP read only by a GROUP and its REDUCE, run with
**                    them as one pass (grouped totals)
**   rt_cpu_cands.c   a recursion's joins (with their negations and later
**                    joins), union, unique and difference run as one pass
**                    over the join pairs in parts
*/
#ifndef RT_CPU_INTERNAL_H
#define RT_CPU_INTERNAL_H

#include "rf_cpu.h"
#include "rf_rt_input.h"
#include "rf_rt_agg_expr.h"
#include "rt_device.h"

#include <stdlib.h>
#include <string.h>

/* join indexes kept per borrowed relation (one per set of key columns) */
enum { RF_CX_JSIDES = 4 };

typedef struct val {
    rf_rt_rel rel;        /* with set: rel.cols points into the set's storage */
    rf_rt_index idx;
    rf_cpu_groups groups;
    int has_groups;
    rf_cpu_set *set;      /* a hash index on rel's rows, kept while rel only grows */
    int borrowed;         /* rel's columns belong to the input cache */
    /* a relation's rows in a hash set, built by the first anti-join that
    ** negates all of its columns (the second, for a relation not borrowed,
    ** unchanged since the first) and kept for the next ones (a negated input
    ** inside a loop is probed every round; building its index every round
    ** cost as much as the round) */
    rf_cpu_set *probe;
    /* a borrowed relation's join index on some key columns, built by the
    ** first join that probes it with a much smaller left side and kept for
    ** the next ones (an input joined every round of a recursion: building
    ** on the round's few new rows and scanning the whole input made every
    ** round cost the input's size) */
    rf_cpu_join_side *jside[RF_CX_JSIDES];
    int64_t jside_uses; /* joins that would have built one since the rows last changed */
    int64_t probe_uses; /* the same for probe (a relation not borrowed) */
} val;

/* Drops a variable's kept indexes (probe, jside): its rows change. */
void rf_cx_jsides_free(val *v);

typedef struct rf_cx_gtplan rf_cx_gtplan;
typedef struct rf_cx_cdplan rf_cx_cdplan;

typedef struct exec {
    const rf_hir_program *p;
    rf_rt_options o;
    rf_diags *d;
    rf_rt_dict *dict;
    rf_cpu_pool *pool;
    int threads;
    val *vals;
    rf_rt_result *res;
    rf_buf *fd_clash; /* env's: a failed functional dependency's clash, for the ranks */
    /* kernels run together (not with --no-fuse), by kernel id */
    int32_t nkernels;
    /* grouped totals (rt_cpu_gtotals.c) */
    rf_cx_gtplan **gt;   /* at a span's MAP: its plan */
    uint8_t *gt_skip;    /* the GROUP and REDUCE of a span that ran at its MAP */
    uint8_t *gt_unfused; /* the span at this MAP runs as three kernels this time */
    /* a recursion's candidates in parts (rt_cpu_cands.c) */
    rf_cx_cdplan **cd;   /* at a span's first JOIN_INDEX: its plan */
    uint8_t *cd_skip;    /* the span's later kernels, when it ran at its first */
    uint8_t *cd_unfused; /* the span at this kernel runs kernel by kernel this time */
    int64_t *fused_rows; /* by variable: the rows a span made but never stored (a
                            grouped total's map and groups; a recursion's pairs,
                            mapped rows, concatenation, distinct rows); -1 for the
                            others. For the profile's counts, which equal the
                            kernels' apart */
} exec;

static inline rf_loc kloc(const exec *x, const rf_hir_kernel *k)
{
    /* the rule's own file (of a program of several sources), else the program's */
    return rf_mkloc(k->loc.file ? k->loc.file : x->p->source, k->loc.line, k->loc.line ? k->loc.col : 0);
}

/* rt_cpu_exec.c: values */
/* A borrowed view of a relation for the rf_cpu primitives (free t->cols). */
rf_status rf_cx_view_of(const rf_rt_rel *r, rf_cpu_table *t);
/* Both sides of a join as views (free both cols); on failure, neither. */
rf_status rf_cx_views_of(const rf_rt_rel *l, const rf_rt_rel *r, rf_cpu_table *lv, rf_cpu_table *rv);
void rf_cx_val_clear(val *v);
/* Rows of in at idx (all columns) into out. */
rf_status rf_cx_gather_rel(exec *x, const rf_rt_rel *in, const int64_t *idx, int64_t n, const rf_type *types,
                           rf_rt_rel *out);
/* out = all rows of variable var: its columns themselves when k is var's last
** reader and var owns them (no copy), a copy otherwise. */
rf_status rf_cx_take_or_copy(exec *x, const rf_hir_kernel *k, int32_t var, const rf_type *types, rf_rt_rel *out);

/* rt_cpu_sort.c */
/* ranks[i]: the byte-order rank of codes[i] among the codes present, so that
** sorting by rank sorts by string; codes_of_rank (if not NULL) maps back. */
rf_status rf_cx_rank_strings(exec *x, const uint32_t *codes, int64_t n, uint32_t **ranks, uint32_t **codes_of_rank);
rf_status rf_cx_k_sort(exec *x, const rf_hir_kernel *k);

/* rt_cpu_reduce.c */
rf_status rf_cx_k_reduce(exec *x, const rf_hir_kernel *k);

/* rt_cpu_lftj.c */
rf_status rf_cx_k_lftj(exec *x, const rf_hir_kernel *k);

/* rt_cpu_gtotals.c */
/* Finds the spans of the program that run as grouped totals. */
rf_status rf_cx_gt_plan(exec *x);
void rf_cx_gt_plan_free(rf_cx_gtplan *pl);
/* Runs k as part of a span: 1 when it did (*st its status), 0 when k runs
** on its own (not a span's, or the span's groups were too many). */
int rf_cx_gt_run(exec *x, const rf_hir_kernel *k, rf_status *st);
/* The last kernel of the span that runs at k, or -1; and its unfusing. */
int32_t rf_cx_gt_until(exec *x, const rf_hir_kernel *k);
void rf_cx_gt_unfuse(exec *x, const rf_hir_kernel *k);

/* rt_cpu_cands.c */
/* Finds the spans of the program whose candidates run in parts (after rf_cx_gt_plan). */
rf_status rf_cx_cd_plan(exec *x);
void rf_cx_cd_plan_free(rf_cx_cdplan *pl);
/* Runs k as part of a span: 1 when it did (*st its status), 0 when k runs on its own. */
int rf_cx_cd_run(exec *x, const rf_hir_kernel *k, rf_status *st);
/* The last kernel of the span that runs at k, or -1; and its unfusing. */
int32_t rf_cx_cd_until(exec *x, const rf_hir_kernel *k);
void rf_cx_cd_unfuse(exec *x, const rf_hir_kernel *k);

/* rt_cpu_exec.c: a MAP kernel run as run_kernel runs it (a span's maps). */
rf_status rf_cx_k_map_kernel(exec *x, const rf_hir_kernel *k);
/* rt_cpu_exec.c: a join's right side indexed once and kept (see join_kept_side):
** 1 when k may probe *side (*st RF_OK) or building it failed (*st), 0 when
** k's right side is not one to keep. */
int rf_cx_kept_side(exec *x, const rf_hir_kernel *k, const rf_cpu_table *lv, const rf_cpu_table *rv,
                    rf_cpu_join_side **side, rf_status *st);

/* rt_cpu_exec.c: an ANTI_INDEX kernel's rows of l (its left side, or a part
** of it) without a match in its right side, ascending, as the kernel finds
** them (through the right side's kept index where it has one). */
rf_status rf_cx_anti_index(exec *x, const rf_hir_kernel *k, const rf_rt_rel *l, rf_rt_index *idx);

/* rt_cpu_sets.c */
/* Gives a relation a hash index on its rows (its set), deduplicating it. */
rf_status rf_cx_ensure_set(exec *x, int32_t var);
rf_status rf_cx_k_insert(exec *x, const rf_hir_kernel *k);
rf_status rf_cx_k_unique(exec *x, const rf_hir_kernel *k);

#endif
