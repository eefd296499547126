/*
** runtime/gpu/rt_gpu_reduce.c: REDUCE on the GPU.
**
** Owns: counts, exact 128-bit sums and averages of ints and decimals (a
** total of decimals written whole as a wide decimal), exact 192-bit sums
** and averages of wide decimals (partial totals combined), min and max (strings
** by byte-order rank), finished by the CPU's rules
** (rf_gx_sum_value also finishes a fused kernel's totals), and the CPU's message
** where a result is out of range.
*/
#include "rt_gpu_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Agg ag's value from a group's exact sum s of n rows, by the CPU's rules
** (rf_value.h), into *v: NULL, or the CPU's words for why it fails. */
const char *rf_gx_sum_value(const rf_qp_agg *ag, rf_type at, rf_dec128 s, int64_t n, int64_t *v)
{
    rf_val_err e = {0, 0};
    rf_status vs;
    *v = 0;
    if (ag->fn == RF_AGG_AVG) {
        vs = at == RF_TYPE_INT ? rf_val_int128_avg(s, n, v, &e) : rf_val_dec128_avg(s, n, v, &e);
    } else if (at == RF_TYPE_INT) {
        vs = (s > INT64_MAX || s < INT64_MIN) ? RF_EUSER : RF_OK;
        if (!vs) *v = (int64_t)s;
    } else {
        vs = rf_val_dec128_to_dec(s, v, &e);
    }
    if (!vs) return NULL;
    return at == RF_TYPE_INT && ag->fn == RF_AGG_TOTAL ? "integer overflow in total()" : e.why ? e.why : "overflow";
}

rf_status rf_gx_agg_fail(gx *x, const rf_hir_kernel *k, const rf_rt_agg_fail *f, const rf_rt_rel *keys)
{
    return rf_rt_agg_fail_report(f, x->dict, keys, k->ngroup, kloc(x, k), x->d, x->fd_clash);
}

/* The CPU's conversion of the sums of every group where the GPU found one
** that fails: each failing group noted in *fail (the group columns of r
** read back into *keys once, where keys->cols is NULL), the least reported
** once every aggregate is checked, as the CPU's. words: 2 (red_sum's 128
** bits a group) or 3 (red_sum_w's 192 bits over wide decimals: beyond the
** wide range is the CPU's RF_CPU_I128_OUT, rf_cpu_agg_sum_i128). */
static rf_status sum_error(gx *x, const rf_hir_kernel *k, const rf_qp_agg *ag, rf_type at, gptr acc, gptr counts,
                           int64_t ng, int words, const gval *r, rf_rt_rel *keys, rf_rt_agg_fail *fail)
{
    const rf_hir_var *ov = x->p->vars[k->out];
    uint64_t *s = rf_malloc((size_t)(words * ng + 1) * 8);
    int64_t *cnt = rf_malloc((size_t)(ng + 1) * 8);
    rf_status st = s && cnt ? RF_OK : RF_ENOMEM;
    if (!st) st = x->g.ops->d2h(&x->g, s, acc, (uint64_t)ng * 8 * (uint64_t)words);
    if (!st && counts) st = x->g.ops->d2h(&x->g, cnt, counts, (uint64_t)ng * 8);
    if (!st && !keys->cols) {
        st = rf_rt_rel_alloc(keys, k->ngroup, ov->types, ng);
        for (int32_t c = 0; c < k->ngroup && !st; c++)
            st = x->g.ops->d2h(&x->g, keys->cols[c], colp(r, c), (uint64_t)ng * (uint64_t)wid(ov->types[c]));
    }
    int any = 0;
    for (int64_t i = 0; i < ng && !st; i++) {
        int64_t v;
        const char *why;
        if (words == 3) {
            /* (red_final's check: the top word the sign of the low 128 bits,
            ** and not below the range) */
            const uint64_t *w = &s[3 * i];
            rf_dec128 sum = sum_of(w);
            if (w[2] != ((int64_t)w[1] < 0 ? ~UINT64_C(0) : 0) || sum < RF_DEC128_MIN)
                why = ag->fn == RF_AGG_AVG ? "decimal out of range" : "decimal out of range in total()";
            else
                why = ag->fn == RF_AGG_TOTAL && ag->type == RF_TYPE_DEC128 ? NULL
                                                                           : rf_gx_sum_value(ag, at, sum, cnt[i], &v);
        } else {
            why = rf_gx_sum_value(ag, at, sum_of(&s[2 * i]), cnt[i], &v);
        }
        if (why) rf_rt_agg_fail_note(fail, x->dict, keys, k->ngroup, i, why), any = 1;
    }
    free(s);
    free(cnt);
    if (!st && !any) {
        rf_internal_error(x->d, kloc(x, k), "k%d: the GPU reported an overflow the CPU does not see", k->id);
        st = RF_EINTERNAL;
    }
    return st;
}

rf_status rf_gx_k_reduce(gx *x, const rf_hir_kernel *k)
{
    const gval *in = &x->vals[k->in[0]];
    const gval *gv = &x->vals[k->idx];
    const rf_hir_var *iv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
    if (!gv->has_groups) return RF_EINTERNAL;
    int64_t ng = gv->ngroups, n = in->nrows;
    gval r;
    rf_status st = rf_gx_rel_alloc(x, &r, ov->types, ov->ncols, ng, ng);
    if (st) return st;
    rf_gpu_args a;
    /* group columns: the values of each group's first row */
    if (k->ngroup > 0 && ng > 0) {
        memset(&a, 0, sizeof a);
        a.n = ng;
        RF_A_NCOLS(a) = k->ngroup;
        a.r0 = gv->first.p;
        for (int32_t i = 0; i < k->ngroup; i++) {
            RF_A_WIDTH(a, i) = (uint64_t)wid(ov->types[i]);
            a.c0[i] = colp(in, k->group[i]);
            a.o[i] = colp(&r, i);
        }
        st = rf_gx_launch(x, "rf_gather", ng, &a);
    }
    int small = ng <= RF_GPU_SMALLG;
    gbuf counts = {0, 0};
    int64_t *hcounts = NULL;
    rf_cpu_groups hg;
    memset(&hg, 0, sizeof hg);
    int have_hg = 0;
    rf_rt_rel keys; /* the group columns on the host, where a group fails */
    memset(&keys, 0, sizeof keys);
    rf_rt_agg_fail fail = RF_RT_AGG_FAIL_NONE;
    for (int32_t ai = 0; ai < k->naggs && !st && ng > 0; ai++) {
        const rf_qp_agg *ag = &k->aggs[ai];
        gptr dst = colp(&r, k->ngroup + ai);
        rf_type at = ag->col >= 0 ? iv->types[ag->col] : RF_TYPE_INT;
        if ((ag->fn == RF_AGG_COUNT || ag->fn == RF_AGG_AVG) && !counts.p) {
            st = galloc(x, (uint64_t)ng * 8, &counts);
            if (!st) st = x->g.ops->memset8(&x->g, counts.p, 0, (uint64_t)ng * 8);
            memset(&a, 0, sizeof a);
            a.n = n;
            a.m = ng;
            RF_A_RED_GROUPS(a) = gv->gid.p;
            RF_A_RED_ACC(a) = counts.p;
            if (!st) st = rf_gx_launch(x, small ? "rf_red_count_smem" : "rf_red_count", n, &a);
            if (st) break;
        }
        if (ag->fn == RF_AGG_COUNT) {
            st = rf_gx_dcopy(x, dst, counts.p, (uint64_t)ng * 8);
            continue;
        }
        /* floats on the host (their sum depends on the order of adds); wide
        ** decimals' totals and averages (partial totals combined) add on the
        ** GPU in 192 bits, their min and max go in two passes */
        if (at == RF_TYPE_FLOAT) {
            if (!have_hg) {
                hg.nrows = n;
                hg.ngroups = ng;
                /* (no group array: every row in group 0) */
                if (gv->gid.p) st = rf_gx_host_i64(x, gv->gid.p, n, &hg.group_of_row);
                else if (!(hg.group_of_row = rf_calloc((size_t)n + 1, sizeof *hg.group_of_row))) st = RF_ENOMEM;
                if (!st) st = rf_gx_host_i64(x, gv->first.p, ng, &hg.first_row);
                have_hg = 1;
            }
            if (!st && ag->fn == RF_AGG_AVG && !hcounts) st = rf_gx_host_i64(x, counts.p, ng, &hcounts);
            if (!st) st = rf_gx_float_agg(x, ag, in, ag->col, &hg, hcounts, dst);
            continue;
        }
        gbuf acc = {0, 0}, err = {0, 0}, ranks = {0, 0}, back = {0, 0};
        int op, kind = 0;
        memset(&a, 0, sizeof a);
        a.n = n;
        a.m = ng;
        RF_A_RED_GROUPS(a) = gv->gid.p;
        a.c0[0] = colp(in, ag->col);
        if ((ag->fn == RF_AGG_TOTAL || ag->fn == RF_AGG_AVG) && at == RF_TYPE_DEC128) {
            op = ag->fn == RF_AGG_AVG ? 9 : ag->type == RF_TYPE_DEC128 ? 8 : 10;
            st = galloc(x, (uint64_t)ng * 24, &acc);
            if (!st) st = x->g.ops->memset8(&x->g, acc.p, 0, (uint64_t)ng * 24);
            RF_A_RED_ACC(a) = acc.p;
            if (!st) st = rf_gx_launch(x, "rf_red_sum_w", n, &a);
        } else if (at == RF_TYPE_DEC128) {
            int is_max = ag->fn == RF_AGG_MAX;
            op = 11;
            st = galloc(x, (uint64_t)ng * 16, &acc);
            if (!st) st = x->g.ops->memset8(&x->g, acc.p, is_max ? 0 : 0xff, (uint64_t)ng * 16);
            RF_A_RED_ACC(a) = acc.p;
            for (int pass = 0; pass < 2 && !st; pass++) {
                a.x[1] = pass;
                st = rf_gx_launch(x, is_max ? "rf_red_max_w" : "rf_red_min_w", n, &a);
            }
        } else if (ag->fn == RF_AGG_TOTAL || ag->fn == RF_AGG_AVG) {
            op = (ag->fn == RF_AGG_TOTAL ? 1 : 3) + (at == RF_TYPE_DECIMAL);
            if (ag->fn == RF_AGG_TOTAL && ag->type == RF_TYPE_DEC128) op = 7; /* the sum whole, as the CPU writes it */
            st = galloc(x, (uint64_t)ng * 16, &acc);
            if (!st) st = x->g.ops->memset8(&x->g, acc.p, 0, (uint64_t)ng * 16);
            RF_A_RED_ACC(a) = acc.p;
            if (!st) st = rf_gx_launch(x, small ? "rf_red_sum_smem" : "rf_red_sum", n, &a);
        } else {
            int is_max = ag->fn == RF_AGG_MAX;
            op = is_max ? 6 : 5;
            kind = at == RF_TYPE_DATE ? 2 : at == RF_TYPE_STRING ? 3 : at == RF_TYPE_BOOL ? 4 : 0;
            RF_A_SORT_KIND(a) = kind;
            if (kind == 3) {
                int64_t lo = 0;
                st = string_ranks(x, colp(in, ag->col), n, &ranks, &lo, &back);
                RF_A_RANKS(a) = ranks.p;
                RF_A_RANK_LO(a) = lo;
            }
            if (!st) st = galloc(x, (uint64_t)ng * 8, &acc);
            if (!st) st = x->g.ops->memset8(&x->g, acc.p, is_max ? 0 : 0xff, (uint64_t)ng * 8);
            RF_A_RED_ACC(a) = acc.p;
            if (!st)
                st = rf_gx_launch(x, is_max ? (small ? "rf_red_max_smem" : "rf_red_max") : (small ? "rf_red_min_smem" : "rf_red_min"),
                                  n, &a);
        }
        if (!st) st = rf_gx_err_word(x, &err);
        memset(&a, 0, sizeof a);
        a.m = ng;
        RF_A_RED_OP(a) = op;
        RF_A_RED_KIND(a) = kind;
        RF_A_RED_ACC(a) = acc.p;
        RF_A_RED_COUNTS(a) = counts.p;
        RF_A_RED_ERR(a) = err.p;
        a.o[0] = dst;
        RF_A_RED_BACK(a) = back.p;
        if (!st) st = rf_gx_launch(x, "rf_red_final", ng, &a);
        int64_t bad = -1;
        if (!st && (op <= 4 || (op >= 8 && op <= 10))) st = get_i64(x, err.p, &bad);
        /* (the CPU's words: rf_cpu_agg_sum_i128, rf_val_dec128_avg) */
        if (!st && bad != -1) st = sum_error(x, k, ag, at, acc.p, counts.p, ng, op >= 8 ? 3 : 2, &r, &keys, &fail);
        gfree(x, &acc);
        gfree(x, &err);
        gfree(x, &ranks);
        gfree(x, &back);
    }
    if (!st && fail.row >= 0) st = rf_gx_agg_fail(x, k, &fail, &keys);
    rf_rt_rel_free(&keys);
    gfree(x, &counts);
    free(hcounts);
    free(hg.group_of_row);
    free(hg.first_row);
    if (st) {
        rf_gx_val_clear(x, &r, ov->ncols);
        return st;
    }
    rf_gx_var_set(x, k->out, &r);
    return RF_OK;
}
