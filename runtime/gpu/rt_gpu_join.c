/*
** runtime/gpu/rt_gpu_join.c: joins on the GPU (JOIN_INDEX, ANTI_INDEX).
**
** Owns: the build side (rows sorted by their key hash's bucket, or the
** ordered build that skips the sort), probes that emit (left, right) pairs
** by left row, then right row, the skewed join that builds on its small
** left side and sorts the pairs back, anti-joins and cross products; and
** builds kept across a loop's rounds: a join (or anti-join) inside a
** fixpoint loop whose build side the loop never writes (an input, a
** relation of an earlier stratum: TC's `edge`, the stored closure that an
** incremental exec's new facts are checked against) builds once a run, not
** once a round; the build lives on the relation's value (gval.jidx) until
** the value changes or is freed, the loop is left, or the pool needs room.
** An input's build that several joins share (the same key columns: the
** anti-joins with the stored closure before and inside the delta rules'
** loop) is kept for the whole run.
*/
#include "rt_gpu_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void rf_gx_jtab_free(gx *x, jtab *t)
{
    gfree(x, &t->hs);
    gfree(x, &t->js);
    gfree(x, &t->start);
}

/* The hash's parameters of t's builds and probes (rf_join.cuh struct jh). */
void rf_gx_jtab_args(const jtab *t, rf_gpu_args *a)
{
    RF_A_JH_MASK(*a) = (int64_t)t->mask;
    RF_A_JH_BASE(*a) = (int64_t)t->base;
    RF_A_JH_ROT1(*a) = t->rot1;
}

/* A build whose right side has one key column, in ascending order, skips
** the sort (rf_join.cuh: the ordered build) from the tuning's
** gpu_ordered_min right rows on (65536: below, the sort costs about what
** join_range's read back does; tests set 0: small builds that way).
** ORDERED_MAX_ROT: the most key bits the ordered hash drops from a bucket
** (at most 16 distinct keys share one; TPC-H's order keys, 8 of every 32
** values, take 1 bit at SF 1 and 2 at SF 7 and 10). */
enum { ORDERED_MAX_ROT = 4 };

/* Sets t's base and rot1 for an ordered build where the nr rows of keys
** (one column) ascend and span few enough values for t's buckets; leaves
** them 0 (the mixing hash) otherwise. */
static rf_status join_order(gx *x, const char *sig, const rf_gpu_args *keys, int64_t nr, jtab *t)
{
    /* (a wide decimal's normalized value is its high word alone: no ordered build) */
    if (strlen(sig) != 1 || sig[0] == 'W' || nr < x->tune.gpu_ordered_min) return RF_OK;
    const uint64_t init[3] = {UINT64_MAX, 0, 0};
    uint64_t w[3];
    gbuf b = {0, 0};
    rf_gpu_args a = *keys;
    a.n = nr;
    rf_status st = galloc(x, sizeof w, &b);
    RF_A_JOIN_RANGE_OUT(a) = b.p;
    if (!st) st = x->g.ops->h2d(&x->g, b.p, init, sizeof init);
    if (!st) st = rf_gx_hlaunch(x, sig, "join_range_smem", nr, &a);
    if (!st) st = x->g.ops->d2h(&x->g, w, b.p, sizeof w);
    gfree(x, &b);
    if (st || w[2] || w[0] > w[1]) return st;
    int64_t rot = 0;
    while (rot < 64 && ((w[1] - w[0]) >> rot) > t->mask) rot++;
    if (rot > ORDERED_MAX_ROT) return RF_OK;
    t->base = w[0];
    t->rot1 = rot + 1;
    return RF_OK;
}

/* The build side (rf_join.cuh): rows sorted by their key hash's bucket, and
** where each bucket starts. */
rf_status rf_gx_join_build(gx *x, const char *sig, const rf_gpu_args *keys, int64_t nr, jtab *t)
{
    memset(t, 0, sizeof *t);
    t->n = nr;
    uint64_t cap = pow2_at_least((uint64_t)nr * 2);
    /* the radix sort takes 8 bits a pass: where two buckets per row would
    ** leave one bit to a last pass, one per row saves the pass (orders at
    ** SF 7 and 10: 25 -> 24 bits, 4 -> 3 passes) */
    if (bits_below(cap) % 8 == 1 && cap >= 512 && cap / 2 >= (uint64_t)nr) cap /= 2;
    t->mask = cap - 1;
    x->jbuilds++;
    rf_status st = join_order(x, sig, keys, nr, t);
    gbuf h = {0, 0}, r = {0, 0};
    rf_gpu_args a = *keys;
    a.n = nr;
    rf_gx_jtab_args(t, &a);
    if (!st) st = galloc(x, (uint64_t)nr * 8, &h);
    if (!st && !t->rot1) st = galloc(x, (uint64_t)nr * 8, &r);
    RF_A_JOIN_HASH_OUT(a) = h.p;
    RF_A_JOIN_ROW_OUT(a) = r.p;
    if (!st) st = rf_gx_hlaunch(x, sig, "join_hash", nr, &a);
    if (t->rot1) {
        /* in bucket order already: entry q is right row q */
        t->hs = h;
    } else {
        if (!st) st = rf_gx_sort_pairs(x, h.p, r.p, nr, bits_below(cap), &t->hs, &t->js);
        gfree(x, &h);
        gfree(x, &r);
    }
    if (!st) st = galloc(x, cap * 8, &t->start);
    if (!st) st = x->g.ops->memset8(&x->g, t->start.p, 0xff, cap * 8);
    memset(&a, 0, sizeof a);
    a.n = nr;
    RF_A_JOIN_RUNS_HASHES(a) = t->hs.p;
    RF_A_JOIN_RUNS_STARTS(a) = t->start.p;
    RF_A_JH_MASK(a) = (int64_t)t->mask;
    if (!st) st = rf_gx_launch(x, "rf_join_runs", nr, &a);
    if (st) rf_gx_jtab_free(x, t);
    return st;
}

/* ---- builds kept across a loop's rounds -------------------------------------------- */

static int is_self_loop(const rf_hir_block *bl)
{
    return bl->term == RF_HIR_T_BRANCH && (bl->target == bl->id || bl->else_target == bl->id);
}

/* A join whose build side (in[1]) could be kept. */
static int keepable(const gx *x, const rf_hir_kernel *k)
{
    return (k->kind == RF_HIR_JOIN_INDEX || k->kind == RF_HIR_ANTI_INDEX) && k->nin == 2 && k->in[1] >= 0 &&
           k->nkeys > 0 && k->nkeys <= RF_GPU_MAXC && k->id >= 0 && k->id < x->nkernels;
}

rf_status rf_gx_jkeep_init(gx *x)
{
    const rf_hir_program *p = x->p;
    x->jidx_block = -1;
    x->jkeep = rf_calloc((size_t)x->nkernels + 1, sizeof *x->jkeep);
    x->kblock = rf_calloc((size_t)x->nkernels + 1, sizeof *x->kblock);
    uint8_t *written = rf_calloc((size_t)p->nvars + 1, 1);
    if (!x->jkeep || !x->kblock || !written) {
        free(written);
        return RF_ENOMEM;
    }
    /* an input's build shared by several joins with the same keys (an
    ** incremental exec's anti-joins with the stored closure before and
    ** inside the loop): kept for the run (-1) */
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->out >= 0) written[p->blocks[b]->kernels[j]->out] = 1;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (!keepable(x, k) || written[k->in[1]] || p->vars[k->in[1]]->role != RF_HIR_ROLE_INPUT) continue;
            for (int32_t b2 = 0; b2 < p->nblocks && !x->jkeep[k->id]; b2++)
                for (int32_t j2 = 0; j2 < p->blocks[b2]->nkernels; j2++) {
                    const rf_hir_kernel *o = p->blocks[b2]->kernels[j2];
                    if (o != k && keepable(x, o) && o->in[1] == k->in[1] && o->nkeys == k->nkeys &&
                        !memcmp(o->rkeys, k->rkeys, (size_t)k->nkeys * sizeof *k->rkeys))
                        x->jkeep[k->id] = -1;
                }
        }
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bl = p->blocks[b];
        for (int32_t j = 0; j < bl->nkernels; j++)
            if (bl->kernels[j]->id >= 0 && bl->kernels[j]->id < x->nkernels) x->kblock[bl->kernels[j]->id] = b;
        if (!is_self_loop(bl)) continue;
        memset(written, 0, (size_t)p->nvars);
        for (int32_t j = 0; j < bl->nkernels; j++)
            if (bl->kernels[j]->out >= 0) written[bl->kernels[j]->out] = 1;
        for (int32_t j = 0; j < bl->nkernels; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            if (keepable(x, k) && !written[k->in[1]] && !x->jkeep[k->id]) x->jkeep[k->id] = b + 1;
        }
    }
    free(written);
    return RF_OK;
}

void rf_gx_jidx_free(gx *x, gval *v)
{
    if (!v->jidx) return;
    rf_gx_jtab_free(x, &v->jidx->t);
    x->jidx_loop -= v->jidx->block >= 0;
    free(v->jidx);
    v->jidx = NULL;
    x->jidx_live--;
}

/* Before kernel k runs: the builds kept for another block's loop are freed
** (the loop was left), and k's output's (k changes it, maybe in place). */
void rf_gx_jidx_before(gx *x, const rf_hir_kernel *k)
{
    if (!x->jidx_live) return;
    if (k->out >= 0) rf_gx_jidx_free(x, &x->vals[k->out]);
    int32_t b = k->id >= 0 && k->id < x->nkernels && x->kblock ? x->kblock[k->id] : -1;
    if (b == x->jidx_block || b < 0 || !x->jidx_loop) return;
    for (int32_t v = 0; v < x->p->nvars && x->jidx_loop; v++)
        if (x->vals[v].jidx && x->vals[v].jidx->block >= 0) rf_gx_jidx_free(x, &x->vals[v]);
    x->jidx_block = -1;
}

/* The pool is full: one kept build that no kernel holds is freed (1), or none is kept (0). */
int rf_gx_jidx_drop_one(gx *x)
{
    for (int32_t v = 0; v < x->p->nvars && x->jidx_live; v++)
        if (x->vals[v].jidx && !x->vals[v].jidx->busy) {
            rf_gx_jidx_free(x, &x->vals[v]);
            return 1;
        }
    return 0;
}

/* The build for join kernel k on variable bvar (key columns bk; keys: the
** build's key columns in c1): kept on bvar's value where k's loop never
** writes bvar (*kept = 1: release it with rf_gx_jtab_done, which keeps it),
** else built for this probe alone. */
rf_status rf_gx_join_table(gx *x, const rf_hir_kernel *k, int32_t bvar, const int32_t *bk, int32_t nkeys,
                           const char *sig, const rf_gpu_args *keys, jtab *t, int *kept)
{
    *kept = 0;
    gval *bv = bvar >= 0 ? &x->vals[bvar] : NULL;
    int keep = bv && k && k->id >= 0 && k->id < x->nkernels && x->jkeep && x->jkeep[k->id] && bvar == k->in[1];
    if (!keep) return rf_gx_join_build(x, sig, keys, bv ? bv->nrows : 0, t);
    gjidx *j = bv->jidx;
    int same = j && j->nkeys == nkeys && !strcmp(j->sig, sig) && j->t.n == bv->nrows;
    for (int32_t i = 0; same && i < nkeys; i++) same = j->keys[i] == bk[i];
    if (same) {
        x->jreuses++;
        *t = j->t;
        j->busy = 1;
        *kept = 1;
        return RF_OK;
    }
    rf_gx_jidx_free(x, bv);
    int32_t block = x->jkeep[k->id] > 0 ? x->jkeep[k->id] - 1 : -1;
    if (block >= 0 && x->jidx_loop && x->jidx_block != block) {
        for (int32_t v = 0; v < x->p->nvars && x->jidx_loop; v++)
            if (x->vals[v].jidx && x->vals[v].jidx->block >= 0) rf_gx_jidx_free(x, &x->vals[v]);
    }
    rf_status st = rf_gx_join_build(x, sig, keys, bv->nrows, t);
    if (st) return st;
    if (!(j = rf_calloc(1, sizeof *j))) return RF_OK; /* (no room to keep it: built for this probe) */
    j->t = *t;
    j->nkeys = nkeys;
    for (int32_t i = 0; i < nkeys; i++) j->keys[i] = bk[i];
    memcpy(j->sig, sig, strlen(sig) + 1);
    j->block = block;
    j->busy = 1;
    bv->jidx = j;
    if (block >= 0) x->jidx_block = block;
    x->jidx_loop += block >= 0;
    x->jidx_live++;
    *kept = 1;
    return RF_OK;
}

/* A probe's build released: freed, or left to its relation when kept. */
void rf_gx_jtab_done(gx *x, jtab *t, int kept)
{
    if (!kept) {
        rf_gx_jtab_free(x, t);
        return;
    }
    for (int32_t v = 0; v < x->p->nvars; v++)
        if (x->vals[v].jidx && x->vals[v].jidx->t.start.p == t->start.p) x->vals[v].jidx->busy = 0;
    memset(t, 0, sizeof *t);
}

/* The build on `build` (its key columns bk) and the probe arguments for the
** rows of `probe` (keys pk): a.n probe rows, a.m build rows, p[0..2] and
** x[0] the build (rf_join.cuh). */
static rf_status probe_setup(gx *x, const rf_hir_kernel *k, const char *sig, const gval *probe, const int32_t *pk,
                             int32_t bvar, const int32_t *bk, int32_t nkeys, jtab *t, int *kept, rf_gpu_args *a)
{
    const gval *build = &x->vals[bvar];
    memset(a, 0, sizeof *a);
    for (int32_t i = 0; i < nkeys; i++) {
        a->c0[i] = colp(probe, pk[i]);
        a->c1[i] = colp(build, bk[i]);
    }
    rf_status st = rf_gx_join_table(x, k, bvar, bk, nkeys, sig, a, t, kept);
    if (st) return st;
    a->n = probe->nrows;
    a->m = build->nrows;
    RF_A_JOIN_HASHES(*a) = t->hs.p;
    RF_A_JOIN_ROWS(*a) = t->js.p;
    RF_A_JOIN_STARTS(*a) = t->start.p;
    rf_gx_jtab_args(t, a);
    return RF_OK;
}

/* The matching (probe row, build row) pairs, by probe row, then build row. */
static rf_status join_pairs(gx *x, const rf_hir_kernel *k, const char *sig, const gval *probe, const int32_t *pk,
                            int32_t bvar, const int32_t *bk, int32_t nkeys, gbuf *pp, gbuf *pb, int64_t *total)
{
    jtab t;
    rf_gpu_args a;
    int kept = 0;
    rf_status st = probe_setup(x, k, sig, probe, pk, bvar, bk, nkeys, &t, &kept, &a);
    if (st) return st;
    int64_t n = probe->nrows;
    gbuf cnt = {0, 0}, pos = {0, 0};
    *total = 0;
    st = galloc(x, (uint64_t)(n + 1) * 8, &cnt);
    RF_A_JOIN_COUNTS_OUT(a) = cnt.p;
    if (!st) st = rf_gx_hlaunch(x, sig, "join_count", n, &a);
    if (!st) st = rf_gx_scan_counts(x, cnt.p, n, &pos, total);
    if (!st) st = galloc(x, (uint64_t)*total * 8, pp);
    if (!st) st = galloc(x, (uint64_t)*total * 8, pb);
    RF_A_JOIN_POS(a) = pos.p;
    RF_A_JOIN_LEFT_OUT(a) = pp->p;
    RF_A_JOIN_RIGHT_OUT(a) = pb->p;
    if (!st && *total > 0) st = rf_gx_hlaunch(x, sig, "join_write", n, &a);
    gfree(x, &cnt);
    gfree(x, &pos);
    rf_gx_jtab_done(x, &t, kept);
    return st;
}

static rf_status join_swapped(gx *x, const rf_hir_kernel *k, const char *sig, gval *out)
{
    const gval *l = &x->vals[k->in[0]], *r = &x->vals[k->in[1]];
    gbuf rr = {0, 0}, rl = {0, 0};
    int64_t total = 0;
    /* (right, left) pairs ordered by right row, then left row */
    rf_status st = join_pairs(x, k, sig, r, k->rkeys, k->in[0], k->lkeys, k->nkeys, &rr, &rl, &total);
    if (!st && total > 0) st = rf_gx_sort_pairs(x, rl.p, rr.p, total, bits_below((uint64_t)l->nrows), &out->a, &out->b);
    out->nrows = total;
    gfree(x, &rl);
    gfree(x, &rr);
    return st;
}

rf_status rf_gx_k_join_index(gx *x, const rf_hir_kernel *k)
{
    const gval *l = &x->vals[k->in[0]], *r = &x->vals[k->in[1]];
    int anti = k->kind == RF_HIR_ANTI_INDEX;
    int64_t nl = l->nrows, nr = r->nrows;
    gval out;
    memset(&out, 0, sizeof out);
    rf_status st = RF_OK;
    if (anti && (k->nkeys == 0 || nr == 0)) {
        /* no shared variables: every row survives when the negated relation is empty */
        int64_t n = nr ? 0 : nl;
        st = rf_gx_iota(x, n, &out.a);
        out.nrows = n;
    } else if (!anti && k->nkeys == 0) {
        if (nr && nl > INT64_MAX / nr) {
            rf_error(x->d, kloc(x, k), "a cross product of %" PRId64 " by %" PRId64 " rows is too large", nl, nr);
            return RF_EUSER;
        }
        int64_t n = nl * nr;
        st = galloc(x, (uint64_t)n * 8, &out.a);
        if (!st) st = galloc(x, (uint64_t)n * 8, &out.b);
        rf_gpu_args a;
        memset(&a, 0, sizeof a);
        a.n = n;
        RF_A_CROSS_RIGHT_ROWS(a) = nr;
        RF_A_CROSS_LEFT_OUT(a) = out.a.p;
        RF_A_CROSS_RIGHT_OUT(a) = out.b.p;
        if (!st) st = rf_gx_launch(x, "rf_cross", n, &a);
        out.nrows = n;
    } else if (nl == 0 || nr == 0) {
        out.nrows = 0;
    } else {
        char sig[RF_GPU_MAXC + 1];
        rf_gpu_sig(x->p->vars[k->in[0]]->types, k->lkeys, k->nkeys, sig);
        if (!anti && join_skewed(nl, nr)) {
            st = join_swapped(x, k, sig, &out);
        } else if (anti) {
            jtab t;
            rf_gpu_args a;
            int kept = 0;
            st = probe_setup(x, k, sig, l, k->lkeys, k->in[1], k->rkeys, k->nkeys, &t, &kept, &a);
            if (st) return st;
            gbuf flags = {0, 0};
            st = galloc(x, (uint64_t)nl, &flags);
            RF_A_ANTI_FLAGS_OUT(a) = flags.p;
            if (!st) st = rf_gx_hlaunch(x, sig, "anti_flags", nl, &a);
            if (!st) st = rf_gx_select_flags(x, flags.p, nl, &out.a, &out.nrows);
            gfree(x, &flags);
            rf_gx_jtab_done(x, &t, kept);
        } else {
            st = join_pairs(x, k, sig, l, k->lkeys, k->in[1], k->rkeys, k->nkeys, &out.a, &out.b, &out.nrows);
        }
    }
    if (st) {
        rf_gx_val_clear(x, &out, 0);
        return st;
    }
    rf_gx_var_set(x, k->out, &out);
    return RF_OK;
}
