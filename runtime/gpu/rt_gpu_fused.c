/*
** runtime/gpu/rt_gpu_fused.c: Kernel Weaver's fused kernels on the GPU.
**
** Owns: the run of one fused kernel (rf_gpu_funit) at its first stage: its
** operands, the build side of a join source, the flags (or count) pass,
** one scan per written output, the write pass, and the totals pass that
** sums in registers (or, grouped, in tables of groups) and writes no rows,
** its results made from its accumulator words (or the words handed back
** for one range of rows, rt_gpu_fusedpart.c). A stage's run-time error keeps
** nothing: the stages then run one by one for the CPU's message.
*/
#include "rt_gpu_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A total of decimals, a wide decimal: written whole (a sum of at most 2^63
** decimals is within its range). */
static int wide_total(const rf_qp_agg *ag) { return ag->fn == RF_AGG_TOTAL && ag->type == RF_TYPE_DEC128; }

/* The relation of fused total t's reduce from its sums, read back to the
** host (acc: the count, then each aggregate's two words; gen_total_rows):
** one row when rows were counted, none otherwise, as rf_gx_k_group and rf_gx_k_reduce
** give it. The host has the sums already, so it finishes them itself by the
** CPU's rules (a copy from the host is 4 us on an H100, a launch of
** rf_red_final and the read of its error word twice that). */
static rf_status fused_total_result(gx *x, const rf_gpu_ftotal *t, const uint64_t *acc, int64_t rows)
{
    const rf_hir_kernel *k = t->reduce;
    const rf_hir_var *iv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
    int64_t ng = rows > 0;
    gval r;
    rf_status st = rf_gx_rel_alloc(x, &r, ov->types, ov->ncols, ng, ng);
    for (int32_t i = 0; i < k->naggs && !st && ng; i++) {
        const rf_qp_agg *ag = &k->aggs[i];
        int64_t v = rows;
        if (wide_total(ag)) { /* a total of decimals: the sum whole, as the CPU writes it */
            rf_dec128 s = sum_of(&acc[1 + 2 * i]);
            st = x->g.ops->h2d(&x->g, colp(&r, i), &s, 16);
            continue;
        }
        const char *why = NULL;
        if (ag->fn != RF_AGG_COUNT) why = rf_gx_sum_value(ag, iv->types[ag->col], sum_of(&acc[1 + 2 * i]), rows, &v);
        if (why) {
            /* (no group columns: the one group, its first failure) */
            rf_rt_agg_fail f = {0, why};
            rf_rt_rel none;
            memset(&none, 0, sizeof none);
            st = rf_gx_agg_fail(x, k, &f, &none);
        }
        if (!st) st = put_u64(x, colp(&r, i), (uint64_t)v);
    }
    if (st) {
        rf_gx_val_clear(x, &r, ov->ncols);
        return st;
    }
    rf_gx_var_set(x, k->out, &r);
    return RF_OK;
}

/* The relation of grouped total t's reduce from the merged table of groups
** (acc: status, count, heads, records; rf_gpu_ftotal): the groups ordered by
** their first row, as GROUP numbers them (first occurrence), with their
** group columns' values, and each aggregate finished by the CPU's rules,
** aggregate by aggregate as rf_gx_k_reduce checks them (the same error:
** the least group that fails, rf_rt_agg_fail). */
static rf_status fused_grouped_result(gx *x, const rf_gpu_ftotal *t, const uint64_t *acc)
{
    const rf_hir_kernel *k = t->reduce;
    const rf_hir_var *iv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
    int32_t nk = t->ngroup, rw = rf_gpu_ftotal_rec_words(t);
    int64_t ng = acc[1] < RF_GPU_FUSE_GROUPS ? (int64_t)acc[1] : RF_GPU_FUSE_GROUPS;
    const uint64_t *recs = acc + 2 + RF_GPU_FUSE_GHEADS;
    int64_t order[RF_GPU_FUSE_GROUPS];
    /* by first row: insertion sort (at most RF_GPU_FUSE_GROUPS groups) */
    for (int64_t i = 0; i < ng; i++) {
        int64_t j = i;
        while (j > 0 && recs[order[j - 1] * rw + nk] > recs[i * rw + nk]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    gval r;
    rf_status st = rf_gx_rel_alloc(x, &r, ov->types, ov->ncols, ng, ng);
    uint8_t *col = st ? NULL : rf_malloc((size_t)(ng + 1) * 16);
    if (!st && !col) st = RF_ENOMEM;
    /* the group columns on the host too, for the least failing group's name */
    rf_rt_rel keys;
    rf_rt_agg_fail fail = RF_RT_AGG_FAIL_NONE;
    if (!st) st = rf_rt_rel_alloc(&keys, nk, ov->types, ng);
    else memset(&keys, 0, sizeof keys);
    for (int32_t c = 0; c < nk && !st; c++)
        for (int64_t g = 0; g < ng; g++) memcpy((char *)keys.cols[c] + g * wid(ov->types[c]), &recs[order[g] * rw + c], (size_t)wid(ov->types[c]));
    for (int32_t c = 0; c < ov->ncols && !st && ng > 0; c++) {
        int w = wid(ov->types[c]);
        for (int64_t g = 0; g < ng && !st; g++) {
            const uint64_t *rec = recs + order[g] * rw;
            uint64_t v = 0;
            if (c < nk) {
                v = rec[c]; /* the value's low bytes (little-endian, as the columns hold it) */
            } else if (wide_total(&k->aggs[c - nk])) {
                rf_dec128 s = sum_of(&rec[nk + 2 + 2 * t->agg_sum[c - nk]]);
                memcpy(col + g * w, &s, 16);
                continue;
            } else {
                const rf_qp_agg *ag = &k->aggs[c - nk];
                int64_t cnt = (int64_t)rec[nk + 1], s = cnt;
                const char *why = NULL;
                if (ag->fn != RF_AGG_COUNT)
                    why = rf_gx_sum_value(ag, iv->types[ag->col], sum_of(&rec[nk + 2 + 2 * t->agg_sum[c - nk]]), cnt,
                                          &s);
                if (why) rf_rt_agg_fail_note(&fail, x->dict, &keys, nk, g, why);
                v = (uint64_t)s;
            }
            memcpy(col + g * w, &v, (size_t)w);
        }
        if (!st) st = x->g.ops->h2d(&x->g, colp(&r, c), col, (uint64_t)ng * (uint64_t)w);
    }
    free(col);
    if (!st && fail.row >= 0) st = rf_gx_agg_fail(x, k, &fail, &keys);
    rf_rt_rel_free(&keys);
    if (st) {
        rf_gx_val_clear(x, &r, ov->ncols);
        return st;
    }
    rf_gx_var_set(x, k->out, &r);
    return RF_OK;
}

rf_status rf_gx_fused_finish(gx *x, const rf_gpu_funit *u, const uint64_t *acc)
{
    rf_status st = RF_OK;
    for (int32_t t = 0; t < u->ntot && !st; t++) {
        const uint64_t *words_t = acc + u->tot[t].acc;
        if (u->tot[t].ngroup) st = fused_grouped_result(x, &u->tot[t], words_t);
        else st = fused_total_result(x, &u->tot[t], words_t, (int64_t)words_t[0]);
    }
    return st;
}

/* A fused kernel with totals (rf_gpu_ftotal): one pass that sums, no rows
** written. A stage's run-time error, or a grouped total with more groups
** than its table holds, leaves *ran 0: the stages then run one by one (and
** the groups and reduces after them), for the CPU's message or its groups.
** With out (a range of rows, rt_gpu_fusedpart.c): the totals' words are
** copied there (u->nacc) instead of made results. */
static rf_status fused_totals(gx *x, const rf_gpu_funit *u, rf_gpu_args *a, int64_t n, int *ran, uint64_t *out)
{
    /* the error words and the sums in one buffer: one read brings both */
    uint64_t words = (uint64_t)u->n + (uint64_t)u->nacc;
    int64_t *host = rf_malloc((size_t)words * 8);
    gbuf buf = {0, 0};
    char name[64];
    *ran = 0;
    if (!host) return RF_ENOMEM;
    rf_status st = galloc(x, words * 8, &buf);
    /* "no failure" and zero sums, in one copy rather than two clears */
    for (uint64_t w = 0; w < words; w++) host[w] = w < (uint64_t)u->n ? -1 : 0;
    if (!st) st = x->g.ops->h2d(&x->g, buf.p, host, words * 8);
    gptr acc = buf.p + (uint64_t)u->n * 8;
    RF_A_FUSED_ERR(*a) = buf.p;
    RF_A_FUSED_ACC(*a) = acc;
    snprintf(name, sizeof name, "rfg%d_total_smem", u->id);
    /* four rows per thread and round (codegen.c gen_total_kernel) and half
    ** the blocks: on an H200 15-25% faster than one row and all the blocks
    ** (docs/BENCHMARKS.md, fourth session) */
    if (!st) st = rf_gx_launch_max(x, name, n, a, x->g.max_grid >= 4 ? x->g.max_grid / 2 : x->g.max_grid);
    if (!st) st = x->g.ops->d2h(&x->g, host, buf.p, words * 8);
    *ran = 1;
    for (int32_t m = 0; m < u->n && !st; m++)
        if (host[m] != -1) *ran = 0;
    const uint64_t *accw = (const uint64_t *)&host[u->n];
    for (int32_t t = 0; t < u->ntot && !st && *ran; t++)
        if (u->tot[t].ngroup && accw[u->tot[t].acc]) *ran = 0; /* more groups than the table holds */
    if (!st && *ran && out) memcpy(out, accw, (size_t)u->nacc * 8);
    else if (!st && *ran) st = rf_gx_fused_finish(x, u, accw);
    gfree(x, &buf);
    free(host);
    return st;
}

/* Runs fused kernel u (all of its stages) at the position of its first
** stage. *ran = 0 when a stage met a run-time error: nothing is kept, and
** the stages then run one by one, so that the error and its message are
** exactly the CPU's (the first failing kernel in schedule order, its lowest
** failing row). */
static rf_status fused_run(gx *x, const rf_gpu_funit *u, int *ran, uint64_t *out)
{
    const rf_hir_kernel *h = u->m[0].k; /* every head reads what the first stage reads */
    int32_t vars[2] = {h->in[0], h->kind == RF_HIR_JOIN_MAP ? h->in[1] : -1};
    /* with a join source the rows are left rows, each with its matches */
    const gval *idx = h->kind == RF_HIR_MAP || u->src ? NULL : &x->vals[h->idx];
    gptr rows[2] = {idx ? idx->a.p : 0, idx && vars[1] >= 0 ? idx->b.p : 0};
    int64_t n = idx ? idx->nrows : x->vals[h->in[0]].nrows;
    int64_t nr = u->src ? x->vals[u->src->in[1]].nrows : 0;
    /* a join source counts each left row's rows per written output; an
    ** anti-join source flags left rows as a plain fused kernel does */
    int counts = u->src && u->src->kind == RF_HIR_JOIN_INDEX;
    /* a join source whose probes would each walk many matches alone runs
    ** unfused, with the build on its small side (join_skewed) */
    if (counts && join_skewed(x->frange ? x->frange->rows : n, nr)) {
        *ran = 0;
        return RF_OK;
    }
    *ran = 1;
    gval outs[RF_GPU_FUSE_MAX];
    memset(outs, 0, sizeof outs);
    if (n == 0 || (counts && nr == 0)) {
        for (int32_t m = 0; m < u->n; m++)
            if (u->m[m].mat >= 0) rf_gx_var_set(x, u->m[m].k->out, &outs[m]);
        rf_status st = RF_OK;
        if (out) memset(out, 0, (size_t)u->nacc * 8); /* (no rows: zero counts and sums, no groups) */
        for (int32_t t = 0; t < u->ntot && !st && !out; t++) st = fused_total_result(x, &u->tot[t], NULL, 0);
        return st;
    }
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    rf_gx_args_sides(x, &a, vars, rows);
    rf_status st = RF_OK;
    gbuf tabs[RF_GPU_MAX_ISLANDS];
    memset(tabs, 0, sizeof tabs);
    for (int32_t m = 0; m < u->n && !st; m++) {
        const rf_gpu_fmember *mb = &u->m[m];
        const rf_gpu_kplan *pl = &x->plans[mb->k->id];
        if (!st) st = rf_gx_args_consts(x, pl, &a, mb->kconst);
        /* string tables: only stages reading the input have them (fuse.c) */
        if (!st && pl->nisland > 0 && (mb->parent >= 0 || u->src)) {
            rf_internal_error(x->d, kloc(x, mb->k), "fused kernel rfg%d: a string table in a stage that "
                                           "does not read the kernel's input rows", u->id);
            st = RF_EINTERNAL;
        }
        if (!st) st = rf_gx_args_islands(x, mb->k, vars, rows, n, mb->kisland, tabs, &a);
        /* (a stage's string work over two columns: a join's `r < s` on strings) */
        if (!st) st = rf_gx_args_rowstr(x, pl, &a);
    }
    gbuf err = {0, 0}, flags = {0, 0}, pos = {0, 0};
    uint64_t n1 = (uint64_t)n + 1;
    int64_t count[RF_GPU_FUSE_MAX];
    char name[64];
    jtab jt;
    memset(&jt, 0, sizeof jt);
    int kept = 0;
    /* in row ranges: the build made for the first range serves them all */
    gfrange *fr = u->src ? x->frange : NULL;
    if (!st && u->src && nr > 0) {
        /* the build side, as rf_gx_k_join_index makes it */
        const rf_hir_kernel *j = u->src;
        char sig[RF_GPU_MAXC + 1];
        rf_gpu_sig(x->p->vars[j->in[0]]->types, j->lkeys, j->nkeys, sig);
        rf_gpu_args ka;
        memset(&ka, 0, sizeof ka);
        for (int32_t i = 0; i < j->nkeys; i++) {
            ka.c0[i] = colp(&x->vals[j->in[0]], j->lkeys[i]);
            ka.c1[i] = colp(&x->vals[j->in[1]], j->rkeys[i]);
        }
        if (fr && fr->made) {
            jt = fr->jt;
        } else {
            st = rf_gx_join_table(x, j, j->in[1], j->rkeys, j->nkeys, sig, &ka, &jt, &kept);
            if (!st && fr) {
                fr->jt = jt;
                fr->kept = kept;
                fr->made = 1;
            }
        }
        for (int32_t c = 0; c < x->p->vars[j->in[1]]->ncols; c++) a.c1[c] = colp(&x->vals[j->in[1]], c);
        a.m = nr;
        RF_A_FUSED_HASHES(a) = jt.hs.p;
        RF_A_FUSED_ROWS(a) = jt.js.p;
        RF_A_FUSED_STARTS(a) = jt.start.p;
        rf_gx_jtab_args(&jt, &a);
    }
    if (u->ntot) {
        if (!st) st = fused_totals(x, u, &a, n, ran, out);
        if (!fr) rf_gx_jtab_done(x, &jt, kept); /* (else the ranges' driver releases it) */
        for (int32_t j = 0; j < RF_GPU_MAX_ISLANDS; j++) gfree(x, &tabs[j]);
        return st;
    }
    /* per written output: a flag per row, or with a join source a count per left row */
    uint64_t fw = counts ? 8 : 1;
    /* the error words, then each written output's row count, then the status
    ** word of the walk that drops repeats (u->dedupe): one read brings all */
    int dedupe = counts && u->dedupe && rf_gx_repeats_dropped(x, u->m[0].k, n);
    int32_t nw = u->n + u->nmat + 1;
    if (!st) st = galloc(x, (uint64_t)nw * 8, &err);
    RF_A_FUSED_ERR(a) = err.p;
    RF_A_FUSED_RUNS_STATUS(a) = err.p + (uint64_t)(nw - 1) * 8;
    /* the left rows first of their kind in the compared columns (which
    ** hold the join's keys): runs_first over the left relation */
    gbuf first = {0, 0};
    rf_gpu_args ra;
    keycols dk;
    memset(&ra, 0, sizeof ra);
    if (!st && dedupe) {
        const rf_gpu_kplan *dp = &x->plans[u->m[0].k->id];
        rf_gx_keys_of(&x->vals[vars[0]], x->p->vars[vars[0]]->types, dp->dedupe, dp->ndedupe, &dk);
        st = galloc(x, (uint64_t)n + 1, &first);
        ra.n = n;
        for (int32_t i = 0; i < dk.n; i++) ra.c0[i] = dk.cols[i];
        RF_A_RUNS_FLAGS_OUT(ra) = first.p;
        RF_A_RUNS_STATUS(ra) = RF_A_FUSED_RUNS_STATUS(a);
        RF_A_RUNS_LIMIT(ra) = RUNS_LIMIT;
        RF_A_FUSED_FIRST(a) = first.p;
    }
    int64_t words[RF_GPU_FUSE_MAX * 2 + 1];
    if (!st && u->nmat) st = galloc(x, n1 * fw * (uint64_t)u->nmat, &flags);
    if (!st && u->nmat) st = galloc(x, n1 * 8 * (uint64_t)u->nmat, &pos);
    RF_A_FUSED_FLAGS(a) = flags.p;
    RF_A_FUSED_POS(a) = pos.p;
    snprintf(name, sizeof name, "rfg%d_flags", u->id);
    for (int pass = 0; pass < 2 && !st; pass++) {
        /* the second pass only where the walk gave way: every row kept */
        RF_A_RUNS_WALK(a) = dedupe ? RUNS_LIMIT : 0;
        st = x->g.ops->memset8(&x->g, err.p, 0xff, (uint64_t)u->n * 8);
        if (!st && dedupe) st = x->g.ops->memset8(&x->g, RF_A_FUSED_RUNS_STATUS(a), 0, 8);
        if (!st && dedupe) st = rf_gx_hlaunch(x, dk.sig, "runs_first", n, &ra);
        if (!st) st = rf_gx_launch(x, name, n, &a);
        /* one exclusive scan per written output, queued behind the flags pass
        ** (a stage error discards them) */
        for (int32_t s = 0; s < u->nmat && !st; s++) {
            gptr f = flags.p + (uint64_t)s * n1 * fw, q = pos.p + (uint64_t)s * n1 * 8;
            st = rf_gx_scan_into(x, counts, f, n, q, NULL, 0);
            if (!st) st = rf_gx_dcopy(x, err.p + (uint64_t)(u->n + s) * 8, q + (uint64_t)n * 8, 8);
        }
        if (!st) st = x->g.ops->d2h(&x->g, words, err.p, (uint64_t)nw * 8);
        if (st || !dedupe || words[nw - 1] == 0) break;
        dedupe = 0;
    }
    for (int32_t m = 0; m < u->n && !st; m++)
        if (words[m] != -1) *ran = 0;
    for (int32_t s = 0; s < u->nmat && !st; s++) count[s] = words[u->n + s];
    /* a join source's write pass reads the positions alone: its counts go
    ** before the outputs are allocated (8 bytes a left row less at the
    ** peak: the transitive closure's delta rows, bench/tc.logic) */
    if (counts) {
        gfree(x, &flags);
        RF_A_FUSED_FLAGS(a) = 0;
    }
    int64_t any = 0;
    for (int32_t m = 0; m < u->n && !st && *ran; m++) {
        const rf_gpu_fmember *mb = &u->m[m];
        if (mb->mat < 0) continue;
        const rf_hir_var *ov = x->p->vars[mb->k->out];
        int64_t c = count[mb->mat];
        any += c;
        st = rf_gx_rel_alloc(x, &outs[m], ov->types, ov->ncols, c, c);
        for (int32_t i = 0; i < ov->ncols && !st; i++) a.o[mb->ocol + i] = colp(&outs[m], i);
    }
    snprintf(name, sizeof name, "rfg%d_write", u->id);
    if (!st && *ran && any > 0) {
        st = rf_gx_wcheck_take(x, u, &RF_A_FUSED_ERR(a));
        if (!st) st = rf_gx_launch(x, name, n, &a);
    }
    gfree(x, &err);
    gfree(x, &flags);
    gfree(x, &pos);
    gfree(x, &first);
    if (!fr) rf_gx_jtab_done(x, &jt, kept);
    for (int32_t j = 0; j < RF_GPU_MAX_ISLANDS; j++) gfree(x, &tabs[j]);
    for (int32_t m = 0; m < u->n; m++) {
        const rf_gpu_fmember *mb = &u->m[m];
        if (mb->mat < 0) continue;
        if (st || !*ran) {
            rf_gx_val_clear(x, &outs[m], x->p->vars[mb->k->out]->ncols);
        } else {
            outs[m].distinct = dedupe;
            rf_gx_var_set(x, mb->k->out, &outs[m]);
        }
    }
    return st;
}

rf_status rf_gx_k_fused(gx *x, const rf_gpu_funit *u, int *ran) { return fused_run(x, u, ran, NULL); }

rf_status rf_gx_k_fused_words(gx *x, const rf_gpu_funit *u, int *ran, uint64_t *out)
{
    if (!u->ntot) return RF_EINTERNAL;
    return fused_run(x, u, ran, out);
}
