/*
** runtime/cpu/rt_cpu_reduce.c: REDUCE on the CPU.
**
** Owns: the aggregates of each group: counts, exact sums (128-bit) shared
** by total() and avg() of one column and summed in one pass, min and max of
** one integer column in one pass, strings by byte order through ranks, and
** the overflow errors of the language's rules (rf_value.h), naming the
** least group that fails (rf_rt_agg_fail). A total of
** decimals whose result type is the wide decimal is written as it is summed
** (128 bits, exact); totals of wide decimals are summed with range checks,
** a group beyond the range named as any other that fails.
*/
#include "rt_cpu_internal.h"

rf_status rf_cx_k_reduce(exec *x, const rf_hir_kernel *k)
{
    const rf_rt_rel *in = &x->vals[k->in[0]].rel;
    val *gv = &x->vals[k->idx];
    rf_cpu_groups *g = &gv->groups;
    const rf_hir_var *out = x->p->vars[k->out];
    if (!gv->has_groups) return RF_EINTERNAL;
    int64_t ng = g->ngroups;
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    rf_status st = rf_rt_rel_alloc(&r, out->ncols, out->types, ng);
    if (st) return st;
    if (ng == 0) {
        /* no rows, no groups: nothing of the input is read (an input never
        ** written, as a recursive predicate with no rule outside its loop,
        ** has no columns at all) */
        rf_cx_val_clear(&x->vals[k->out]);
        x->vals[k->out].rel = r;
        return RF_OK;
    }
    /* group columns: the values of each group's first row */
    for (int32_t i = 0; i < k->ngroup; i++) {
        int w = rf_rt_type_width(out->types[i]);
        const char *src = in->cols[k->group[i]];
        char *dst = r.cols[i];
        const int64_t *fr = g->first_row;
        /* typed copies: a memcpy call per group costs more than the copy */
        if (w == 8)
            for (int64_t gi = 0; gi < ng; gi++) ((int64_t *)dst)[gi] = ((const int64_t *)src)[fr[gi]];
        else if (w == 4)
            for (int64_t gi = 0; gi < ng; gi++) ((uint32_t *)dst)[gi] = ((const uint32_t *)src)[fr[gi]];
        else
            for (int64_t gi = 0; gi < ng; gi++) memcpy(dst + gi * w, src + fr[gi] * w, (size_t)w);
    }
    int64_t *counts = NULL;
    /* the failing groups of every aggregate: the least is named */
    rf_rt_agg_fail fail = RF_RT_AGG_FAIL_NONE;
    /* exact sums by input column, shared by total() and avg() of one column */
    rf_dec128 **sums = rf_calloc((size_t)in->ncols + 1, sizeof *sums);
    if (!sums) st = RF_ENOMEM;
    {
        /* the integer and decimal columns summed, all in one pass */
        int32_t cols[16], nc = 0;
        const int64_t *vals[16];
        rf_dec128 *outs[16];
        for (int32_t a = 0; a < k->naggs && !st && nc < 16; a++) {
            const rf_qp_agg *ag = &k->aggs[a];
            if ((ag->fn != RF_AGG_TOTAL && ag->fn != RF_AGG_AVG) || ag->col < 0 || in->types[ag->col] == RF_TYPE_FLOAT ||
                in->types[ag->col] == RF_TYPE_DEC128)
                continue;
            int dup = 0;
            for (int32_t j = 0; j < nc; j++) dup |= cols[j] == ag->col;
            if (!dup) cols[nc] = ag->col, vals[nc++] = in->cols[ag->col];
        }
        if (nc > 1 && !st && !(st = rf_cpu_agg_sums_i64(x->pool, g, nc, vals, outs)))
            for (int32_t j = 0; j < nc; j++) sums[cols[j]] = outs[j];
    }
    /* min and max of one integer column: one pass for both */
    uint8_t done[256] = {0};
    for (int32_t a = 0; a < k->naggs && a < 256 && !st; a++) {
        const rf_qp_agg *ag = &k->aggs[a];
        if ((ag->fn != RF_AGG_MIN && ag->fn != RF_AGG_MAX) || ag->col < 0 || done[a] ||
            rf_rt_cpu_kind(in->types[ag->col]) != RF_CPU_I64 || in->types[ag->col] == RF_TYPE_FLOAT)
            continue;
        for (int32_t b = a + 1; b < k->naggs && b < 256; b++) {
            const rf_qp_agg *bg = &k->aggs[b];
            if (bg->col != ag->col || done[b] || bg->fn != (ag->fn == RF_AGG_MIN ? RF_AGG_MAX : RF_AGG_MIN)) continue;
            int32_t amin = ag->fn == RF_AGG_MIN ? a : b, amax = amin == a ? b : a;
            st = rf_cpu_agg_minmax_i64(x->pool, g, in->cols[ag->col], r.cols[k->ngroup + amin], r.cols[k->ngroup + amax]);
            done[a] = done[b] = 1;
            break;
        }
    }
    for (int32_t a = 0; a < k->naggs && !st; a++) {
        const rf_qp_agg *ag = &k->aggs[a];
        void *dst = r.cols[k->ngroup + a];
        if (a < 256 && done[a]) continue;
        rf_type at = ag->col >= 0 ? in->types[ag->col] : RF_TYPE_INT;
        const void *src = ag->col >= 0 ? in->cols[ag->col] : NULL;
        if ((ag->fn == RF_AGG_COUNT || ag->fn == RF_AGG_AVG) && !counts)
            if ((st = rf_cpu_agg_count(x->pool, g, &counts))) break;
        switch (ag->fn) {
        case RF_AGG_COUNT:
            if (ng) memcpy(dst, counts, (size_t)ng * sizeof *counts); /* no groups: dst may be NULL */
            break;
        case RF_AGG_TOTAL:
        case RF_AGG_AVG:
            if (at == RF_TYPE_FLOAT) {
                double *s = NULL;
                if ((st = rf_cpu_agg_sum_f64(x->pool, g, src, &s))) break;
                for (int64_t i = 0; i < ng; i++)
                    ((double *)dst)[i] = ag->fn == RF_AGG_AVG ? rf_val_float_canon(s[i] / (double)counts[i]) : s[i];
                free(s);
            } else {
                if (!sums[ag->col] && at == RF_TYPE_DEC128) {
                    /* a total of wide decimals (of totals): exact in the wide
                    ** range, or RF_CPU_I128_OUT, that group's error below */
                    int64_t bad;
                    if ((st = rf_cpu_agg_sum_i128(x->pool, g, src, &sums[ag->col], &bad))) break;
                } else if (!sums[ag->col] && (st = rf_cpu_agg_sum_i64(x->pool, g, src, &sums[ag->col]))) {
                    break;
                }
                const rf_dec128 *s = sums[ag->col];
                /* a wide sum beyond the wide range: each such group noted (an
                ** avg's sum, or its mean beyond decimal: the same words, as
                ** the GPU's) */
                const char *wide_out = ag->fn == RF_AGG_AVG ? "decimal out of range" : "decimal out of range in total()";
                if (ag->fn == RF_AGG_TOTAL && ag->type == RF_TYPE_DEC128) {
                    /* the total of decimals is a wide decimal: exact, no narrowing */
                    for (int64_t i = 0; at == RF_TYPE_DEC128 && i < ng; i++)
                        if (s[i] == RF_CPU_I128_OUT) rf_rt_agg_fail_note(&fail, x->dict, &r, k->ngroup, i, wide_out);
                    if (ng) memcpy(dst, s, (size_t)ng * sizeof *s);
                    break;
                }
                for (int64_t i = 0; i < ng && !st; i++) {
                    int64_t v = 0;
                    if (at == RF_TYPE_DEC128 && s[i] == RF_CPU_I128_OUT) {
                        rf_rt_agg_fail_note(&fail, x->dict, &r, k->ngroup, i, wide_out);
                        ((int64_t *)dst)[i] = 0;
                        continue;
                    }
                    rf_val_err e = {0, 0};
                    rf_status vs;
                    if (ag->fn == RF_AGG_AVG)
                        vs = at == RF_TYPE_INT ? rf_val_int128_avg(s[i], counts[i], &v, &e)
                                               : rf_val_dec128_avg(s[i], counts[i], &v, &e);
                    else if (at == RF_TYPE_INT)
                        vs = (s[i] > INT64_MAX || s[i] < INT64_MIN) ? RF_EUSER : (v = (int64_t)s[i], RF_OK);
                    else
                        vs = rf_val_dec128_to_dec(s[i], &v, &e);
                    if (vs)
                        rf_rt_agg_fail_note(&fail, x->dict, &r, k->ngroup, i,
                                            at == RF_TYPE_INT && ag->fn == RF_AGG_TOTAL ? "integer overflow in total()"
                                            : e.why                                     ? e.why
                                                                                        : "overflow");
                    ((int64_t *)dst)[i] = v;
                }
            }
            break;
        case RF_AGG_MIN:
        case RF_AGG_MAX: {
            rf_cpu_col vc = {rf_rt_cpu_kind(at), (void *)src}, oc = {rf_rt_cpu_kind(at), NULL};
            uint32_t *ranks = NULL, *back = NULL;
            if (at == RF_TYPE_STRING) {
                if ((st = rf_cx_rank_strings(x, src, in->nrows, &ranks, &back))) break;
                vc.data = ranks;
            }
            st = ag->fn == RF_AGG_MIN ? rf_cpu_agg_min(x->pool, g, &vc, &oc) : rf_cpu_agg_max(x->pool, g, &vc, &oc);
            if (!st) {
                if (at == RF_TYPE_STRING)
                    for (int64_t i = 0; i < ng; i++) ((uint32_t *)dst)[i] = back[((uint32_t *)oc.data)[i]];
                else
                    if (ng) memcpy(dst, oc.data, (size_t)ng * (size_t)rf_rt_type_width(at));
            }
            free(oc.data);
            free(ranks);
            free(back);
            break;
        }
        }
    }
    if (!st && fail.row >= 0) st = rf_rt_agg_fail_report(&fail, x->dict, &r, k->ngroup, kloc(x, k), x->d, x->fd_clash);
    free(counts);
    for (int32_t c = 0; sums && c < in->ncols; c++) free(sums[c]);
    free(sums);
    if (st) {
        rf_rt_rel_free(&r);
        return st;
    }
    rf_cx_val_clear(&x->vals[k->out]);
    x->vals[k->out].rel = r;
    return RF_OK;
}
