/*
** runtime/rt_agg_expr.c: the group a run-time error in an aggregated
** expression names (`total(a / b)` with b zero).
**
** Owns: following a map kernel's rows to the REDUCE that aggregates them
** (the error path only: the plan and the .rfx stay as they are), the
** choice of the failing row an error names there (the least group key,
** then the least message: the same whatever the rows' order, so that the
** CPU, the GPU, its fused kernels and any split over ranks name one) and
** the error's text. Every device calls it on its map's error, over the
** map's rows on the host.
*/
#include "rf_rt_agg_expr.h"

#include <stdlib.h>
#include <string.h>

/* The kernel of p that reads v (other than a GROUP: the REDUCE reads what
** it groups), or NULL where none or more than one do. */
static const rf_hir_kernel *sole_reader(const rf_hir_program *p, int32_t v)
{
    const rf_hir_kernel *found = NULL;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bl = p->blocks[b];
        for (int32_t t = 0; t < bl->ntest; t++)
            if (bl->test[t] == v) return NULL;
        for (int32_t j = 0; j < bl->nkernels; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            int reads = k->idx == v;
            for (int32_t i = 0; i < k->nin; i++) reads |= k->in[i] == v;
            if (!reads || k->kind == RF_HIR_GROUP) continue;
            if (found && found != k) return NULL;
            found = k;
        }
    }
    return found;
}

/* The REDUCE map k's rows reach with their columns in place, or NULL. */
static const rf_hir_kernel *reduce_of(const rf_hir_program *p, const rf_hir_kernel *k)
{
    int32_t v = k->out;
    for (int32_t steps = 0; steps <= p->nvars; steps++) {
        if (v < 0 || v >= p->nvars || p->vars[v]->kind != RF_HIR_V_REL || p->vars[v]->role != RF_HIR_ROLE_TEMP ||
            p->vars[v]->ncols != k->nouts)
            return NULL;
        const rf_hir_kernel *r = sole_reader(p, v);
        if (!r) return NULL;
        if (r->kind == RF_HIR_REDUCE) return r->nin > 0 && r->in[0] == v ? r : NULL;
        if (r->kind != RF_HIR_UNIQUE && r->kind != RF_HIR_CONCAT && r->kind != RF_HIR_COPY) return NULL;
        v = r->out;
    }
    return NULL;
}

/* By row, then where (the filter first, then the outputs in order). */
static int by_row(const void *a, const void *b)
{
    const rf_rt_eval_failure *x = a, *y = b;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return (x->expr > y->expr) - (x->expr < y->expr);
}

rf_status rf_rt_agg_expr_fail(const rf_rt_eval_ctx *ctx, const rf_hir_program *p, const rf_hir_kernel *k,
                              const rf_rt_side sides[2], int64_t n, rf_diags *d, int64_t keep,
                              int64_t keep_errors, rf_buf *clash)
{
    const rf_hir_kernel *r = p && k ? reduce_of(p, k) : NULL;
    if (!r) return RF_EUSER;
    int32_t nk = r->ngroup;
    for (int32_t g = 0; g < nk; g++)
        if (r->group[g] < 0 || r->group[g] >= k->nouts) return RF_EUSER;
    const rf_hir_var *ov = p->vars[k->out];
    rf_rt_rel out, fk;
    memset(&out, 0, sizeof out);
    memset(&fk, 0, sizeof fk);
    rf_rt_eval_failure *f = NULL, *ff = NULL;
    int64_t nf = 0, nff = 0, *frows[2] = {NULL, NULL};
    rf_qp_expr **kx = rf_calloc((size_t)nk + 1, sizeof *kx);
    rf_type *kt = rf_calloc((size_t)nk + 1, sizeof *kt);
    void **kc = rf_calloc((size_t)nk + 1, sizeof *kc);
    rf_buf best, cur, msg;
    rf_buf_init(&best);
    rf_buf_init(&cur);
    rf_buf_init(&msg);
    rf_diags mine;
    rf_diags_init(&mine);
    int oom = !kx || !kt || !kc;
    rf_status st = RF_EUSER;
    if (oom) goto done;
    if ((st = rf_rt_eval_map_all(ctx, k->filter, k->outs, k->nouts, ov->types, sides, n, &out, &f, &nf, &mine))) {
        oom = st == RF_ENOMEM;
        st = RF_EUSER;
        goto done;
    }
    st = RF_EUSER;
    if (!nf) goto done;
    /* each row's first failure in the order of evaluation (the filter's, then
    ** the outputs' in order), as one pass over the rows stops at */
    qsort(f, (size_t)nf, sizeof *f, by_row);
    int64_t nr = 0, nfilter = 0;
    for (int64_t i = 0; i < nf; i++) {
        if (nr > 0 && f[i].row == f[nr - 1].row) {
            free(f[i].msg);
            continue;
        }
        f[nr++] = f[i];
    }
    nf = nr;
    for (int64_t i = 0; i < nf; i++) {
        for (int32_t g = 0; g < nk; g++)
            if (f[i].expr == r->group[g]) goto done; /* a group column's error: no group to name */
        nfilter += f[i].expr < 0;
    }
    for (int32_t g = 0; g < nk; g++) {
        kx[g] = k->outs[r->group[g]];
        kt[g] = ov->types[r->group[g]];
        kc[g] = out.cols[r->group[g]];
    }
    rf_rt_rel keys = {out.nrows, nk, kt, kc};
    if (nfilter > 0 && nk > 0) {
        /* rows the filter failed in: their groups, from the group columns' expressions alone */
        rf_rt_side fs[2] = {{NULL, NULL}, {NULL, NULL}};
        for (int s = 0; s < 2 && !oom; s++) {
            if (!sides[s].rel) continue;
            if (!(frows[s] = rf_malloc((size_t)nfilter * sizeof *frows[s]))) oom = 1;
            int64_t j = 0;
            for (int64_t i = 0; i < nf && !oom; i++)
                if (f[i].expr < 0) frows[s][j++] = sides[s].rows ? sides[s].rows[f[i].row] : f[i].row;
            fs[s].rel = sides[s].rel;
            fs[s].rows = frows[s];
        }
        if (oom) goto done;
        if (rf_rt_eval_map_all(ctx, NULL, kx, nk, kt, fs, nfilter, &fk, &ff, &nff, &mine)) {
            oom = 1;
            goto done;
        }
        if (nff > 0 || fk.nrows != nfilter) goto done; /* a group column fails there too */
    }
    /* the least (key, message): the key's bytes are self-delimiting */
    const rf_rt_rel *brel = &keys;
    int64_t bi = -1, brow = -1;
    for (int64_t i = 0, j = 0; i < nf; i++) {
        const rf_rt_rel *kr = f[i].expr < 0 ? &fk : &keys;
        int64_t at = f[i].expr < 0 ? j++ : f[i].pos;
        cur.len = 0;
        rf_rt_fd_clash_key(ctx->dict, kr, nk, at, &cur);
        rf_buf_puts(&cur, f[i].msg);
        if (bi < 0 || rf_rt_fd_clash_key_cmp(cur.data, cur.len, best.data, best.len) < 0) {
            bi = i;
            brel = kr;
            brow = at;
            best.len = 0;
            rf_buf_append(&best, cur.data, cur.len);
        }
    }
    rf_buf_puts(&msg, f[bi].msg);
    if (nk > 0) {
        rf_buf_puts(&msg, " for the group (");
        for (int32_t g = 0; g < nk; g++) {
            if (g) rf_buf_puts(&msg, ", ");
            rf_rt_format_value(ctx->dict, brel, g, brow, &msg);
        }
        rf_buf_putc(&msg, ')');
    }
    if (best.oom || cur.oom || msg.oom) {
        oom = 1;
        goto done;
    }
    rf_diags_truncate(d, keep, keep_errors);
    rf_error(d, ctx->loc, "%s", rf_buf_cstr(&msg));
    if (clash) {
        clash->len = 0;
        rf_buf_append(clash, best.data, best.len);
    }
done:
    if (oom) {
        rf_error(d, ctx->loc, "out of memory while finding the group of a run-time error");
        st = RF_ENOMEM;
    }
    rf_diags_free(&mine);
    rf_rt_eval_failures_free(f, nf);
    rf_rt_eval_failures_free(ff, nff);
    rf_rt_rel_free(&out);
    rf_rt_rel_free(&fk);
    free(frows[0]);
    free(frows[1]);
    free(kx);
    free(kt);
    free(kc);
    rf_buf_free(&best);
    rf_buf_free(&cur);
    rf_buf_free(&msg);
    return st;
}
