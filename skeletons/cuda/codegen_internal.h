/*
** skeletons/cuda/codegen_internal.h: what the code generator's files share.
**
** Owns: rf_cg_gen, the state of emitting one kernel's expressions (the
** plan it follows, the failure statement, variable numbering, the columns
** loaded up front, where long chains' helpers and operand tables go), and
** the functions codegen.c (programs, map kernels, key classes),
** codegen_expr.c (expressions) and codegen_fused.c (fused kernels) call
** across files. Not installed; rf_gpu_codegen.h is the
** generator's interface.
*/
#ifndef RF_GPU_CODEGEN_INTERNAL_H
#define RF_GPU_CODEGEN_INTERNAL_H

#include "rf_gpu_codegen.h"

#define RF_CG_SEEN 64 /* common subexpressions remembered per stage */

typedef struct rf_cg_gen {
    rf_buf *b;
    const rf_gpu_kplan *pl;
    const char *failstmt;
    int nv;
    int depth;
    int bad; /* something the plan should have excluded */
    /* long chains and conjunctions: CHUNK operands per function of their own
    ** (members of the kernel's struct, written to helpers; NULL: inline) */
    rf_buf *helpers;
    int nhelp;
    /* loops over operand tables (emit_table_loop): the tables, written
    ** before the kernel's struct, named rfk<kid>_t<n> */
    rf_buf *tables;
    int32_t kid;
    int ntab;
    /* fused stages: where side-0 columns live when a stage reads an earlier
    ** stage's registers ("m<stage>_<col>"; -1: the input's columns), and the
    ** stage's first string-constant and string-table slots */
    int32_t regs_of;
    int32_t kconst, kisland;
    /* columns loaded up front (hoist_loads): hset[side][col] says v<hv> holds it */
    uint8_t hset[2][RF_GPU_MAXC];
    int hv[2][RF_GPU_MAXC];
    rf_type ht[2][RF_GPU_MAXC];
    /* common subexpressions (a fused stage sets cse): the computed
    ** expressions emitted at depth 1, where every later one in the stage
    ** sees them, and the variable holding each; an equal expression there
    ** reads it instead of computing it again (q01's charge reuses its
    ** disc_price: one decimal product a row less) */
    int cse, nseen;
    const rf_qp_expr *seen[RF_CG_SEEN];
    int seen_v[RF_CG_SEEN];
} rf_cg_gen;

/* The C++ type of a value in registers, and of a column in memory. */
const char *rf_cg_ctype(rf_type t);
const char *rf_cg_stype(rf_type t);
/* Emits e (and its arguments first); returns the variable holding it. */
int rf_cg_emit(rf_cg_gen *g, const rf_qp_expr *e);
/* used[side] = 1 for each side e reads a column of. */
void rf_cg_uses_sides(const rf_qp_expr *e, int used[2]);
/* Loads every input column e reads before e is evaluated (hset records them). */
void rf_cg_hoist_loads(rf_cg_gen *g, const rf_qp_expr *e);
/* Pins the loads hoisted since `before` (rf::pin), guarded by guard. */
void rf_cg_pin_hoisted(rf_cg_gen *g, uint8_t before[2][RF_GPU_MAXC], const char *guard);
/* The row index q<side> of each side used. */
void rf_cg_row_indices(rf_buf *b, const int used[2]);
/* The fused kernel of unit u (struct G<id> and its rfg<id>_* kernels). */
rf_status rf_cg_gen_fused_kernel(const rf_hir_program *p, const rf_gpu_plan *plan, const rf_gpu_funit *u, rf_buf *b,
                                 rf_diags *d);

#endif
