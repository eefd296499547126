/*
** queryplan/qp_internal.h: helpers shared by the lowering, the passes and
** the printers of the query plan; not part of the public interface.
**
** Owns: allocation in the plan's arena (a failed allocation sets p->oom, so
** callers may test once at the end), constructors for relations, blocks,
** commands and expressions, expression utilities (copy, compare,
** substitute, remap columns, split conjunctions) and use counts.
*/
#ifndef QP_INTERNAL_H
#define QP_INTERNAL_H

#include "rf_queryplan.h"

#include <string.h>

void *qp_alloc(rf_qp_program *p, size_t n);
char *qp_sprintf(rf_qp_program *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Relations: ids are always the index in p->rels. */
rf_qp_rel *qp_rel_new(rf_qp_program *p, rf_qp_rel_kind kind, const char *name, int32_t ncols);
rf_qp_rel *qp_temp_new(rf_qp_program *p, int32_t ncols);
/* Drops relations that no command or terminator references; renumbers ids. */
void qp_compact_rels(rf_qp_program *p);
/* Canonical order: predicates (source order), outputs, temporaries by definition. */
void qp_sort_rels(rf_qp_program *p);
/* Gives temporaries the names t0, t1, ... in order of definition. */
void qp_rename_temps(rf_qp_program *p);

rf_qp_block *qp_block_new(rf_qp_program *p, const char *comment);
rf_qp_cmd *qp_cmd_new(rf_qp_program *p, rf_qp_op op, rf_qp_rel *dst, int32_t nin);
void qp_block_insert(rf_qp_program *p, rf_qp_block *b, int32_t at, rf_qp_cmd *c);
static inline void qp_block_append(rf_qp_program *p, rf_qp_block *b, rf_qp_cmd *c)
{
    qp_block_insert(p, b, b->ncmds, c);
}
void qp_block_remove(rf_qp_block *b, int32_t at);
/* The command's outs become the identity over in[0]. */
int qp_cmd_identity_outs(rf_qp_program *p, rf_qp_cmd *c);
int32_t *qp_ints(rf_qp_program *p, int32_t n);
/* The distinct rows of in's columns cols[0..n) among those filter (NULL:
** every row) keeps: `map in filter -> (cols)` and `unique` of it, inserted
** before b->cmds[*at] (*at moves past them; b->ncmds appends). With no
** column, in's existence test: one empty row when a row passes, none
** otherwise. NULL when an allocation failed. */
rf_qp_rel *qp_distinct_cols(rf_qp_program *p, rf_qp_block *b, int32_t *at, rf_qp_rel *in, rf_qp_expr *filter,
                            const int32_t *cols, int32_t n, rf_loc loc);

/* Expressions. Every constructor returns NULL once an allocation failed. */
rf_qp_expr *qp_e_new(rf_qp_program *p, rf_qp_expr_kind k, rf_type t, int32_t nargs);
rf_qp_expr *qp_e_col(rf_qp_program *p, int32_t side, int32_t col, rf_type t);
rf_qp_expr *qp_e_const(rf_qp_program *p, const rf_fe_const *c);
rf_qp_expr *qp_e_bool(rf_qp_program *p, int v);
rf_qp_expr *qp_e_cmp(rf_qp_program *p, rf_cmp_op op, rf_qp_expr *a, rf_qp_expr *b);
/* a and b, flattened; NULL stands for true on either side. */
rf_qp_expr *qp_e_and(rf_qp_program *p, rf_qp_expr *a, rf_qp_expr *b);
/* a and conj[0] and ... and conj[n - 1] (NULLs skipped, ANDs flattened) in
** one node: building a long conjunction with qp_e_and, one operand at a
** time, copies it once per operand. */
rf_qp_expr *qp_e_and_n(rf_qp_program *p, rf_qp_expr *a, rf_qp_expr *const *conj, int32_t n);
/* not a (not not a is a); NULL stays NULL (an allocation failed: p->oom). */
rf_qp_expr *qp_e_not(rf_qp_program *p, rf_qp_expr *a);
rf_qp_expr *qp_e_copy(rf_qp_program *p, const rf_qp_expr *e);
int qp_e_equal(const rf_qp_expr *a, const rf_qp_expr *b);
int qp_const_equal(const rf_fe_const *a, const rf_fe_const *b);
int qp_const_cmp(const rf_fe_const *a, const rf_fe_const *b);
/* Reports (rf_error, at the later fact) each key that the facts of the
** functional predicate q give two values (qp_facts_fd.c). rows: n facts of
** q->arity columns in source order; sorted: their indices, sorted by every
** column (stably); locs: each fact's place. 1: errors reported; 0: none;
** -1: out of memory. */
int qp_facts_fd_check(rf_diags *d, const rf_fe_pred *q, const rf_fe_const *rows, const int64_t *sorted, int64_t n,
                      const rf_loc *locs);
/* A copy of e where COL(side, c) is a copy of outs[c]. */
rf_qp_expr *qp_e_subst(rf_qp_program *p, const rf_qp_expr *e, int32_t side, rf_qp_expr *const *outs);
/* An expression's height (0 for NULL) and node count. */
int32_t qp_e_height(const rf_qp_expr *e);
int64_t qp_e_nodes(const rf_qp_expr *e);
/* Whether qp_e_subst(e, side, outs) stays within RF_QP_MAX_EXPR_HEIGHT and
** RF_QP_MAX_EXPR_NODES (-1: no room to tell, p->oom set). */
int qp_e_subst_fits(rf_qp_program *p, const rf_qp_expr *e, int32_t side, rf_qp_expr *const *outs, int32_t nouts);
/* In place: COL(side, c) becomes COL(side, map[c]). */
void qp_e_remap(rf_qp_expr *e, int32_t side, const int32_t *map);
/* In place: COL(from, c) becomes COL(to, c). */
void qp_e_set_side(rf_qp_expr *e, int32_t from, int32_t to);
/* Bit s set when e reads side s. */
unsigned qp_e_sides(const rf_qp_expr *e);
/* mark[c] = 1 for every column of side read by e. */
void qp_e_mark_cols(const rf_qp_expr *e, int32_t side, uint8_t *mark);
int qp_e_is_const(const rf_qp_expr *e);
int qp_e_is_col(const rf_qp_expr *e, int32_t side, int32_t col);
/* The conjuncts of e (e itself when not an AND); *n of them, in the arena. */
rf_qp_expr **qp_e_conjuncts(rf_qp_program *p, rf_qp_expr *e, int32_t *n);
/* Whether evaluating e can raise a run-time error: integer and decimal
** arithmetic (overflow, division by zero), conversions to decimal, shifts,
** date arithmetic and date:parse. Float arithmetic never raises. */
int qp_e_may_fail(const rf_qp_expr *e);
/* The number of conjuncts conj[0..n) before the first that may fail (n when
** none may). A rule's conditions are evaluated in the order written, and a
** row must not be dropped before a condition that fails for it is reached:
** only these may move below a join, an anti-join or an existence test, or
** ahead of a condition that may fail (docs/LANGUAGE.md, "Where such an
** error is raised"). */
int32_t qp_e_safe_prefix(rf_qp_expr *const *conj, int32_t n);

/* Reads and writes per relation id (reads count inputs of commands and
** terminator operands; one command reading a relation twice counts twice). */
typedef struct qp_uses {
    int64_t *reads, *writes;
    int32_t n;
} qp_uses;
int qp_uses_compute(rf_qp_program *p, qp_uses *u);
void qp_uses_free(qp_uses *u);

/* Reads per relation (as qp_count_reads counts them) and the writer of each
** temporary (qp_find_writer's answer), built once by a pass (qp_index.c)
** and kept exact by it: qp_index_drop(c) before c leaves its block or
** changes its inputs or destination, qp_index_add(c) once it is in its
** block as it now is. Relations made after the build count as unread. */
typedef struct qp_index {
    int64_t *reads;     /* per relation id */
    rf_qp_cmd **writer; /* per relation id: the command writing a temporary, or NULL */
    int32_t *wblock;    /* per relation id: writer's block, or -1 */
    int32_t cap;
} qp_index;
int qp_index_build(rf_qp_program *p, qp_index *ix); /* -1: out of memory (p->oom) */
void qp_index_free(qp_index *ix);
int64_t qp_index_reads(const qp_index *ix, const rf_qp_rel *r);
/* The command of b writing temporary r, or NULL (r no temporary, or written elsewhere). */
rf_qp_cmd *qp_index_writer(const qp_index *ix, const rf_qp_block *b, const rf_qp_rel *r);
int qp_index_add(rf_qp_program *p, qp_index *ix, int32_t block, rf_qp_cmd *c); /* -1: out of memory */
void qp_index_drop(qp_index *ix, const rf_qp_cmd *c);

/* A set of pointers (qp_index.c): a pass's "already seen" without a scan. */
typedef struct qp_ptrset {
    const void **slot;
    size_t n, cap;
} qp_ptrset;
int qp_ptrset_init(qp_ptrset *s, int64_t hint); /* -1: out of memory */
void qp_ptrset_free(qp_ptrset *s);
int qp_ptrset_has(const qp_ptrset *s, const void *x);
int qp_ptrset_add(qp_ptrset *s, const void *x); /* -1: out of memory */

/* How many commands qp_count_reads, qp_replace_reads, qp_find_writer and
** qp_written_between have visited so far, all plans together: the unit
** tests check with it that a pass's work grows linearly with a block's
** commands (a pass asking them per join is quadratic; qp_index.c). Only
** counts: nothing reads it to decide anything. */
int64_t qp_scan_steps(void);
/* Replaces every read of `from` (command inputs, terminator operands) by `to`. */
void qp_replace_reads(rf_qp_program *p, rf_qp_rel *from, rf_qp_rel *to);
/* Index of the command in b writing r, or -1. */
int32_t qp_find_writer(const rf_qp_block *b, const rf_qp_rel *r);
/* Whether a command in b[from, to) writes r. */
int qp_written_between(const rf_qp_block *b, int32_t from, int32_t to, const rf_qp_rel *r);
/* Whether command c reads relation r. */
int qp_cmd_reads(const rf_qp_cmd *c, const rf_qp_rel *r);

/* A recursive min or max (qp_lattice.c; q->lattice): relations of q's
** shape, the key every column but the last. qp_lattice_best appends to b
** the best value per key of src into dst (NULL: a new temporary) and
** returns it; qp_lattice_improve writes newr = the rows of best that are
** better than full's for their key or whose key full lacks;
** qp_lattice_replace writes full = full with delta's rows replacing those
** of their keys. -1 (or NULL) when an allocation failed. */
rf_qp_rel *qp_lattice_best(rf_qp_program *p, rf_qp_block *b, const rf_fe_pred *q, rf_qp_rel *src, rf_qp_rel *dst);
int qp_lattice_improve(rf_qp_program *p, rf_qp_block *b, const rf_fe_pred *q, rf_qp_rel *best, rf_qp_rel *full,
                       rf_qp_rel *newr);
int qp_lattice_replace(rf_qp_program *p, rf_qp_block *b, const rf_fe_pred *q, rf_qp_rel *full, rf_qp_rel *delta);

/* Whether join c meets at most one row of side s per row of the other side
** (its keys on s hold a key of s: qp_infer.c). */
int qp_key_joined(const rf_qp_cmd *c, int32_t s);
/* Another-row tests (qp_exists.c), applied while a rule is lowered: atoms
** and negated conjunctions whose only role is a test per key read per-key
** aggregates instead. A negated literal so lowered: its rows of cur whose
** keys (arguments keyarg[0..nkeys)) have, in g (keys, least, greatest), a
** value other than argument varg are removed. */
typedef struct qp_exists_neg {
    rf_qp_rel *g;
    int32_t nkeys;
    int32_t *keyarg;
    int32_t varg;
} qp_exists_neg;
typedef struct qp_exists_plan {
    const rf_fe_rule *r;  /* the rule to lower: the original, or a copy with the tests replaced */
    rf_qp_rel **over;     /* per body literal: the relation a positive atom reads instead, or NULL */
    qp_exists_neg **neg;  /* per body literal: the test of a negated literal, or NULL */
    const char *note;     /* what was rewritten (for the plan's note), or NULL */
} qp_exists_plan;
/* Appends to b the per-key relations rule r needs and describes its
** lowering in *out (out->r = r when nothing applies). -1: out of memory. */
int qp_exists_rewrite(rf_qp_program *p, rf_qp_block *b, const rf_fe_rule *r, rf_qp_rel *const *full,
                      qp_exists_plan *out);

/* Chains of joins on computed keys (qp_keychain.c, for the pass keyjoin):
** when join bl->cmds[top] crosses three or more inputs (a left spine of
** cross products) and its filter begins with equalities each tying the
** inputs joined so far to a new one through a computed value, rebuilds the
** spine as one join per such equality, in order (each with that equality
** as its filter, its side guarded by the existence tests of the inputs not
** yet joined where the equality may fail), then crosses the other inputs;
** the top keeps its destination, outputs and the other conjuncts.
** *steps (*nsteps of them, in order) are the joins to rewrite, the top
** among them when it is the last step. 1: rebuilt, 0: nothing to do,
** -1: out of memory. */
int qp_keychain_split(rf_qp_program *p, rf_qp_block *bl, int32_t top, rf_qp_cmd ***steps, int32_t *nsteps);

/* The passes (one file each). */
rf_status rf_qp_pass_fold(rf_qp_program *p, rf_diags *d);
rf_status rf_qp_pass_select(rf_qp_program *p, rf_diags *d);
rf_status rf_qp_pass_keyjoin(rf_qp_program *p, rf_diags *d);
rf_status rf_qp_pass_joinorder(rf_qp_program *p, rf_diags *d);
rf_status rf_qp_pass_cse(rf_qp_program *p, rf_diags *d);
rf_status rf_qp_pass_project(rf_qp_program *p, rf_diags *d);
rf_status rf_qp_pass_lftj(rf_qp_program *p, rf_diags *d);
rf_status rf_qp_pass_unique(rf_qp_program *p, rf_diags *d);
rf_status rf_qp_pass_hoist(rf_qp_program *p, rf_diags *d);
rf_status rf_qp_pass_partagg(rf_qp_program *p, rf_diags *d);
rf_status rf_qp_pass_dead(rf_qp_program *p, rf_diags *d);

/* Text helpers shared by the printers. */
const char *qp_cmp_text(rf_cmp_op op);
void qp_rel_text(const rf_qp_rel *r, rf_buf *out);   /* the relation line without its name */
void qp_term_text(const rf_qp_term *t, rf_buf *out);

/* Helpers the passes share (qp_ir.c). How many commands and terminators
** of p read r. */
int64_t qp_count_reads(const rf_qp_program *p, const rf_qp_rel *r);
/* Whether every output of c is a plain column (no computed value). */
int qp_plain_cols(const rf_qp_cmd *c);
/* The representative of x in union-find array uf (with path halving). */
int32_t qp_uf_find(int32_t *uf, int32_t x);
/* reach[b] = 1 for each block b reachable from the entry without passing
** block avoid (-1: none); reach (zeroed here) and stack hold nblocks each. */
void qp_blocks_reachable(const rf_qp_program *p, int32_t avoid, uint8_t *reach, int32_t *stack);

#endif
