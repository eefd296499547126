/*
** harmony/rf_harmony.h: the Harmony IR, the program form that devices run.
**
** Owns: a control-flow graph of basic blocks whose instructions are
** side-effect-free kernels over managed variables, the lowering from the
** query plan (each plan command becomes one to three kernels, in the
** partition / compute / gather shape of the Red Fox thesis), the schedule
** of each block (list scheduling for a small footprint) with the liveness
** that tells the runtime when to allocate and release each variable, the
** text printer (`redfox dump --harmony`), and (de)serialization into the
** HIRS section of a .rfx file.
**
** A Harmony program is self-contained: it does not point into the front
** end or the query plan, so that a loaded .rfx needs neither. Everything
** lives in the program's arena.
*/
#ifndef RF_HARMONY_H
#define RF_HARMONY_H

#include "rf_common.h"
#include "rf_queryplan.h"
#include "rf_value.h"

/* ---- variables -------------------------------------------------------- */

typedef enum rf_hir_var_kind {
    RF_HIR_V_REL,   /* a relation: ncols typed columns of one length */
    RF_HIR_V_INDEX  /* row indices into other variables: a selection, a permutation,
                       join pairs (two index columns) or group ids */
} rf_hir_var_kind;

typedef enum rf_hir_role {
    RF_HIR_ROLE_TEMP,   /* lives inside one block, or, read in another (a loop-invariant
                           result computed before its loop), until the block liveness of
                           hir_schedule.c finds it dead (after the loop) */
    RF_HIR_ROLE_INPUT,  /* loaded from a file before block 0 */
    RF_HIR_ROLE_PRED,   /* a predicate's relation: lives across blocks */
    RF_HIR_ROLE_OUTPUT  /* written out after Halt */
} rf_hir_role;

typedef struct rf_hir_var {
    int32_t id;
    const char *name;
    rf_hir_var_kind kind;
    rf_hir_role role;
    int32_t ncols;
    rf_type *types;
    const char **colnames;
    int64_t card;           /* estimated rows, for scheduling and memory planning */
    /* INPUT */
    const char *input_file;
    char delimiter;
    int header;
    int32_t *input_key;     /* lang:input:key: columns no two rows may share (the loader checks) */
    int32_t ninput_key;
    /* OUTPUT */
    const char *output_name;
    /* a functional dependency on the first nkeys columns, where pred_name is
    ** set (nkeys 0 then: a function without key columns, p[] = v, holds at
    ** most one row): the predicate's name is reported with the key when a
    ** Unique kernel finds a violation (an INPUT's is checked by the loader: a
    ** functional predicate's file) */
    int32_t nkeys;
    const char *pred_name;
} rf_hir_var;

/* ---- kernels ---------------------------------------------------------- */

typedef enum rf_hir_kind {
    RF_HIR_MAP,         /* out = [outs(r) for r in in0 if filter(r)]                        */
    RF_HIR_JOIN_INDEX,  /* idx = pairs (i, j) with in0[i].lkeys == in1[j].rkeys            */
    RF_HIR_JOIN_MAP,    /* out = [outs(in0[i], in1[j]) for (i, j) in idx if filter(...)]    */
    RF_HIR_ANTI_INDEX,  /* idx = rows of in0 with no match in in1 on the key pairs          */
    RF_HIR_GATHER_MAP,  /* out = [outs(in0[i]) for i in idx]                                 */
    RF_HIR_GROUP,       /* idx = group id of each row of in0 by the group columns           */
    RF_HIR_REDUCE,      /* out = group columns, then aggs per group (idx from GROUP)        */
    RF_HIR_CONCAT,      /* out = in0 ++ in1 ++ ... (bag)                                     */
    RF_HIR_UNIQUE,      /* out = distinct rows of in0; check_fd: report an FD violation    */
    RF_HIR_DIFFERENCE,  /* out = distinct rows of in0 not in in1                            */
    RF_HIR_SORT,        /* idx = the stable permutation of in0 by order; with a limit only
                           its first `limit` places must be right (and it may be shorter
                           than in0, but not than the limit)                                */
    RF_HIR_GATHER,      /* out = in0 rows in idx order, at most limit of them               */
    RF_HIR_COPY,        /* out = in0                                                         */
    RF_HIR_FACTS,       /* out = constant rows                                               */
    RF_HIR_CLEAR,       /* out = empty                                                       */
    RF_HIR_INSERT,      /* out = out ∪ in1 ∪ ... in place (in0 is out): the set a recursive
                           predicate accumulates; devices keep a hash index on it           */
    RF_HIR_LFTJ         /* out = the distinct bindings of out's (int) variables that every in[i]
                           holds and filter accepts: a leapfrog triejoin. Each in[i] is sorted
                           ascending by all its columns (a trie), its columns binding the
                           variables lkeys[off_i ..] in increasing order (off_i: the columns of
                           the inputs before it); rkeys[j]: the input of flat column j; filter
                           over out (side 0): comparisons of a variable with a variable or a
                           constant, which narrow the searches                               */
} rf_hir_kind;

const char *rf_hir_kind_name(rf_hir_kind k);
/* The operator skeleton that implements a kernel kind (skeletons/). */
const char *rf_hir_skeleton_name(rf_hir_kind k);

typedef struct rf_hir_kernel {
    int32_t id;
    rf_hir_kind kind;
    int32_t out;           /* the variable it defines */
    int32_t *in;           /* variables it reads (relations first, then the index, if any) */
    int32_t nin;
    int32_t idx;           /* the index variable read (JOIN_MAP, GATHER_MAP, REDUCE, GATHER), -1 */
    /* parameters (which apply depends on kind) */
    rf_qp_expr *filter;    /* NULL: true */
    rf_qp_expr **outs;
    int32_t nouts;
    int32_t *lkeys, *rkeys;
    int32_t nkeys;
    int32_t *group;
    int32_t ngroup;
    rf_qp_agg *aggs;
    int32_t naggs;
    rf_fe_const *rows;     /* FACTS: nrows * ncols of out, row-major */
    int64_t nrows;
    rf_fe_order *order;    /* SORT */
    int32_t norder;
    int64_t limit;         /* GATHER: -1 none */
    int check_fd;          /* UNIQUE */
    int partial;           /* GROUP, REDUCE: a partial aggregate (queryplan/pass_partagg.c): with
                              several ranks each groups its own rows, none moving first */
    /* scheduling (filled by rf_hir_schedule) */
    int32_t *release;      /* variables dead after this kernel */
    int32_t nrelease;
    rf_loc loc;            /* source rule (file borrowed from the program's strings) */
} rf_hir_kernel;

typedef enum rf_hir_term_kind { RF_HIR_T_GOTO, RF_HIR_T_BRANCH, RF_HIR_T_HALT } rf_hir_term_kind;

typedef struct rf_hir_block {
    int32_t id;
    const char *comment;
    rf_hir_kernel **kernels; /* in scheduled order */
    int32_t nkernels, capkernels;
    rf_hir_term_kind term;
    int32_t target, else_target;
    int32_t *test;           /* BRANCH: go to target when any of these is non-empty */
    int32_t ntest;
} rf_hir_block;

typedef struct rf_hir_program {
    rf_arena arena;
    const char *source;      /* the program's file name, for messages */
    rf_hir_var **vars;
    int32_t nvars, capvars;
    rf_hir_block **blocks;
    int32_t nblocks, capblocks;
    int oom;
} rf_hir_program;

/* The most inputs any kernel of p has (at least 1): the size of a per-input scratch array. */
int32_t rf_hir_max_inputs(const rf_hir_program *p);

/* The bytes kernel k has to read and write at least (hir_bytes.c): the
** columns it uses, at their stored widths, once per row it touches, and 8
** bytes per row-index entry. in_rows: the rows (entries) of k->in[] before
** it ran; out_before, out_rows: its output's rows before and after. */
void rf_hir_kernel_bytes(const rf_hir_program *p, const rf_hir_kernel *k, const int64_t *in_rows, int64_t out_before,
                         int64_t out_rows, int64_t *bytes_in, int64_t *bytes_out);

/* Lowers an optimized plan, then schedules it. */
rf_status rf_hir_lower(const rf_qp_program *qp, rf_hir_program **out, rf_diags *d);
/* List-schedules each block (a kernel runs once its inputs exist, preferring
** the one that frees the most memory) and computes the release points. */
rf_status rf_hir_schedule(rf_hir_program *p, rf_diags *d);
void rf_hir_free(rf_hir_program *p);

void rf_hir_print_text(const rf_hir_program *p, rf_buf *out);

/* The HIRS section of a .rfx file. rf_hir_deserialize validates everything
** (RF_EUSER with a diagnostic naming the file for a malformed section). */
rf_status rf_hir_serialize(const rf_hir_program *p, rf_buf *out);
rf_status rf_hir_deserialize(const char *file, const void *data, uint64_t size, rf_hir_program **out,
                             rf_diags *d);

#endif
