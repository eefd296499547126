/*
** harmony/hir_internal.h: construction helpers shared by the lowering and
** the deserializer (private to harmony/).
*/
#ifndef RF_HIR_INTERNAL_H
#define RF_HIR_INTERNAL_H

#include "rf_harmony.h"

#include <stdlib.h>

const char *rf_hir_strdup(rf_hir_program *p, const char *s);
void rf_hir_copy_const(rf_hir_program *p, rf_fe_const *dst, const rf_fe_const *src);
rf_qp_expr *rf_hir_copy_expr(rf_hir_program *p, const rf_qp_expr *e);
rf_hir_var *rf_hir_add_var(rf_hir_program *p, const char *name, rf_hir_var_kind kind, rf_hir_role role,
                           int32_t ncols);
rf_hir_block *rf_hir_add_block(rf_hir_program *p, const char *comment);
rf_hir_kernel *rf_hir_add_kernel(rf_hir_program *p, rf_hir_block *b, rf_hir_kind kind, int32_t out,
                                 int32_t nin);

#endif
