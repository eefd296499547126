/*
** runtime/rt_facts.c: a FACTS kernel's rows as a host relation.
**
** Owns: rf_rt_facts (rf_runtime.h), the constants a program states
** (`p(1, "a").`) laid out as columns, strings interned, which both
** executors run the same way (the GPU executor then copies the relation to
** the device). Facts are the inputs a program states itself: this file is
** part of rf_rt_input, which both executors link.
*/
#include "rf_runtime.h"

#include <string.h>

rf_status rf_rt_facts(const rf_hir_kernel *k, const rf_hir_var *out, rf_rt_dict *dict, rf_rt_rel *r)
{
    memset(r, 0, sizeof *r);
    rf_status st = rf_rt_rel_alloc(r, out->ncols, out->types, k->nrows);
    if (st) return st;
    for (int64_t i = 0; i < k->nrows && !st; i++)
        for (int32_t c = 0; c < out->ncols && !st; c++) {
            const rf_fe_const *v = &k->rows[i * out->ncols + c];
            switch (out->types[c]) {
            case RF_TYPE_FLOAT: ((double *)r->cols[c])[i] = rf_val_float_canon(v->f); break; /* an older .rfx: -0.0 */
            case RF_TYPE_DATE: ((int32_t *)r->cols[c])[i] = (int32_t)v->i; break;
            case RF_TYPE_BOOL: ((uint8_t *)r->cols[c])[i] = (uint8_t)v->i; break;
            case RF_TYPE_DEC128: ((rf_dec128 *)r->cols[c])[i] = v->i; break; /* a decimal's value */
            case RF_TYPE_STRING: st = rf_rt_dict_intern(dict, v->s, v->slen, &((uint32_t *)r->cols[c])[i]); break;
            default: ((int64_t *)r->cols[c])[i] = v->i; break;
            }
        }
    if (st) rf_rt_rel_free(r);
    return st;
}
