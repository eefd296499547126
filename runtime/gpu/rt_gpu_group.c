/*
** runtime/gpu/rt_gpu_group.c: groups, distinct rows and sets on the GPU
** (GROUP, UNIQUE, DIFFERENCE, INSERT).
**
** Owns: first occurrences by hash table (slots keep the lowest equal row)
** or by the walk over runs of an ordered first column, groups numbered by
** first occurrence, the hash index of a set that grows in place, and the
** functional-dependency check with the CPU's message.
*/
#include "rt_gpu_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void rf_gx_keys_of(const gval *v, const rf_type *types, const int32_t *cols, int32_t n, keycols *kc)
{
    kc->n = n;
    for (int32_t i = 0; i < n; i++) kc->cols[i] = colp(v, cols ? cols[i] : i);
    rf_gpu_sig(types, cols, n, kc->sig);
}

/* flags[i] (n + 1 bytes) = 1 where row i is the first of its key among the
** rows with want[i] != 0 (want 0: all rows); slot and tab as left by the
** insert, for grp_finish. */
static rf_status first_flags(gx *x, const keycols *kc, int64_t n, gptr want, int64_t nwant, gbuf *tab, gbuf *slot,
                             gbuf *flags)
{
    /* the table holds the wanted rows only: sized for them when their count is known */
    uint64_t cap = pow2_at_least((uint64_t)(want && nwant >= 0 && nwant < n ? nwant : n) * 2);
    rf_status st = galloc(x, cap * 8, tab);
    if (!st) st = x->g.ops->memset8(&x->g, tab->p, 0xff, cap * 8);
    if (!st) st = galloc(x, (uint64_t)n * 8, slot);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    for (int32_t i = 0; i < kc->n; i++) a.c0[i] = kc->cols[i];
    RF_A_GRP_TABLE(a) = tab->p;
    RF_A_GRP_SLOTS(a) = slot->p;
    RF_A_GRP_WANT(a) = want;
    RF_A_GRP_MASK(a) = (int64_t)(cap - 1);
    if (!st) st = rf_gx_hlaunch(x, kc->sig, "grp_insert", n, &a);
    if (!st) st = galloc(x, (uint64_t)n + 1, flags);
    memset(&a, 0, sizeof a);
    a.n = n;
    RF_A_GRP_TABLE(a) = tab->p;
    RF_A_GRP_SLOTS(a) = slot->p;
    RF_A_GRP_FLAGS(a) = flags->p;
    if (!st) st = rf_gx_launch(x, "rf_grp_flag", n, &a);
    return st;
}

/* The groups of n rows (rf_grp_finish): each row's group and each group's
** first row, from the first-row flags, their scan and, per row, its slot in
** the hash table tab or (tab 0) the lowest equal row the walk over runs found. */
static rf_status finish_groups(gx *x, gptr tab, gptr slot, gptr flags, gptr pos, int64_t n, int64_t ng, gval *g)
{
    rf_status st = galloc(x, (uint64_t)n * 8, &g->gid);
    if (!st) st = galloc(x, (uint64_t)ng * 8, &g->first);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    RF_A_GRP_TABLE(a) = tab;
    RF_A_GRP_SLOTS(a) = slot;
    RF_A_GRP_FLAGS(a) = flags;
    RF_A_GRP_SCAN(a) = pos;
    RF_A_GRP_GROUP_OUT(a) = g->gid.p;
    RF_A_GRP_FIRST_OUT(a) = g->first.p;
    if (!st) st = rf_gx_launch(x, "rf_grp_finish", n, &a);
    g->has_groups = 1;
    g->nrows = n;
    g->ngroups = ng;
    return st;
}

/* group_rows by the walk over runs (each row's lowest equal row, then the
** scan of the first occurrences numbers the groups); *ok = 0 (nothing made)
** when the rows are not ordered by their first key or a run is too long.
** The status word rides back with the scan's total: no extra wait. */
static rf_status runs_group(gx *x, const keycols *kc, int64_t n, gval *g, int *ok)
{
    *ok = 0;
    gbuf flags = {0, 0}, rep = {0, 0}, pos = {0, 0};
    rf_status st = galloc(x, (uint64_t)n + 1, &flags);
    if (!st) st = galloc(x, (uint64_t)n * 8, &rep);
    if (!st) st = galloc(x, (uint64_t)(n + 2) * 8, &pos); /* the scan, the status word */
    if (!st) st = x->g.ops->memset8(&x->g, pos.p + (uint64_t)(n + 1) * 8, 0, 8);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    for (int32_t i = 0; i < kc->n; i++) a.c0[i] = kc->cols[i];
    RF_A_RUNS_FLAGS_OUT(a) = flags.p;
    RF_A_RUNS_STATUS(a) = pos.p + (uint64_t)(n + 1) * 8;
    RF_A_RUNS_FIRST_OUT(a) = rep.p;
    RF_A_RUNS_LIMIT(a) = RUNS_LIMIT;
    if (!st) st = rf_gx_hlaunch(x, kc->sig, "runs_first", n, &a);
    int64_t w[2] = {0, 0};
    if (!st) st = rf_gx_scan_into(x, 0, flags.p, n, pos.p, w, 2);
    if (!st && w[1] == 0) {
        st = finish_groups(x, 0, rep.p, flags.p, pos.p, n, w[0], g);
        *ok = 1;
    }
    gfree(x, &flags);
    gfree(x, &rep);
    gfree(x, &pos);
    return st;
}

/* Groups of n rows by keys: group of each row, first row of each group. */
static rf_status group_rows(gx *x, const keycols *kc, int64_t n, gval *g)
{
    if (kc->n > 0 && n > 0 && n >= x->tune.gpu_runs_min) {
        int ok = 0;
        rf_status st = runs_group(x, kc, n, g, &ok);
        if (st || ok) return st;
    }
    gbuf tab = {0, 0}, slot = {0, 0}, flags = {0, 0}, pos = {0, 0};
    int64_t ng = 0;
    rf_status st = first_flags(x, kc, n, 0, -1, &tab, &slot, &flags);
    if (!st) st = rf_gx_scan_flags(x, flags.p, n, &pos, &ng);
    if (!st) st = finish_groups(x, tab.p, slot.p, flags.p, pos.p, n, ng, g);
    gfree(x, &tab);
    gfree(x, &slot);
    gfree(x, &flags);
    gfree(x, &pos);
    return st;
}

/* rf_gx_distinct_rows by the walk over runs; *ok = 0 (and nothing kept) when the
** rows are not ordered by their first column or a run is too long. The
** status word rides back with the select's count: no extra wait. */
static rf_status runs_distinct(gx *x, const keycols *kc, int64_t n, gptr want, gbuf *keep, int64_t *m, int *ok)
{
    *ok = 0;
    gbuf flags = {0, 0}, cs = {0, 0};
    rf_status st = galloc(x, (uint64_t)n + 1, &flags);
    if (!st) st = galloc(x, 16, &cs); /* the select's count, the status word */
    if (!st) st = x->g.ops->memset8(&x->g, cs.p + 8, 0, 8);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    for (int32_t i = 0; i < kc->n; i++) a.c0[i] = kc->cols[i];
    RF_A_RUNS_FLAGS_OUT(a) = flags.p;
    RF_A_RUNS_WANT(a) = want;
    RF_A_RUNS_STATUS(a) = cs.p + 8;
    RF_A_RUNS_LIMIT(a) = RUNS_LIMIT;
    if (!st) st = rf_gx_hlaunch(x, kc->sig, "runs_first", n, &a);
    int64_t w[2] = {0, 0};
    if (!st) st = rf_gx_select_into(x, flags.p, n, keep, cs.p, w, 2);
    gfree(x, &flags);
    gfree(x, &cs);
    if (!st && w[1] != 0) gfree(x, keep); /* not ordered, or a run too long */
    else if (!st) {
        *m = w[0];
        *ok = 1;
    }
    return st;
}

/* The first occurrence of every distinct row of v (rows with want != 0;
** nwant of them, -1: not counted), ascending. */
rf_status rf_gx_distinct_rows(gx *x, const gval *v, const rf_hir_var *hv, gptr want, int64_t nwant, gbuf *keep,
                               int64_t *m)
{
    keycols kc;
    rf_gx_keys_of(v, hv->types, NULL, hv->ncols, &kc);
    if (kc.n > 0 && v->nrows > 0 && v->nrows >= x->tune.gpu_runs_min) {
        int ok = 0;
        rf_status st = runs_distinct(x, &kc, v->nrows, want, keep, m, &ok);
        if (st || ok) return st;
    }
    gbuf tab = {0, 0}, slot = {0, 0}, flags = {0, 0};
    rf_status st = first_flags(x, &kc, v->nrows, want, nwant, &tab, &slot, &flags);
    gfree(x, &tab);
    gfree(x, &slot);
    if (!st) st = rf_gx_select_flags(x, flags.p, v->nrows, keep, m);
    gfree(x, &flags);
    return st;
}

static uint64_t set_cap_for(int64_t rows);

/* rf_gx_distinct_rows of the rows with want != 0 (nwant of them, -1: not counted)
** through a set's table kind: u32 entries at most two thirds full and u32
** slots, set_dedupe into an empty set, the kept rows' room for nwant (the
** u64 entries at most half full, i64 slots and room for every row of
** grp_insert took 2 to 4 times the bytes: they were a difference's part of
** the transitive closure's peak). */
static rf_status wanted_distinct(gx *x, const gval *v, const rf_hir_var *hv, gptr want, int64_t nwant, gbuf *keep,
                                 int64_t *m)
{
    int64_t n = v->nrows;
    if (set_cap_for(nwant >= 0 && nwant < n ? nwant : n) > (UINT64_C(1) << 31))
        return rf_gx_distinct_rows(x, v, hv, want, nwant, keep, m);
    keycols kc;
    rf_gx_keys_of(v, hv->types, NULL, hv->ncols, &kc);
    if (kc.n > 0 && n > 0 && n >= x->tune.gpu_runs_min) {
        int ok = 0;
        rf_status st = runs_distinct(x, &kc, n, want, keep, m, &ok);
        if (st || ok) return st;
    }
    uint64_t cap = set_cap_for(nwant >= 0 && nwant < n ? nwant : n);
    gbuf tab = {0, 0}, slot = {0, 0}, flags = {0, 0};
    rf_status st = galloc(x, cap * 4, &tab);
    if (!st) st = x->g.ops->memset8(&x->g, tab.p, 0xff, cap * 4);
    if (!st) st = galloc(x, (uint64_t)n * 4, &slot);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    for (int32_t c = 0; c < kc.n; c++) a.c0[c] = a.c1[c] = kc.cols[c];
    RF_A_GRP_TABLE(a) = tab.p;
    RF_A_GRP_MASK(a) = (int64_t)(cap - 1);
    RF_A_GRP_SLOTS(a) = slot.p;
    RF_A_GRP_WANT(a) = want;
    if (!st) st = rf_gx_hlaunch(x, kc.sig, "set_dedupe", n, &a);
    if (!st) st = galloc(x, (uint64_t)n + 1, &flags);
    memset(&a, 0, sizeof a);
    a.n = n;
    RF_A_GRP_TABLE(a) = tab.p;
    RF_A_GRP_SLOTS(a) = slot.p;
    RF_A_GRP_FLAGS(a) = flags.p;
    if (!st) st = rf_gx_launch(x, "rf_set_flag32", n, &a);
    gfree(x, &tab);
    gfree(x, &slot);
    if (!st) st = rf_gx_select_room(x, flags.p, n, nwant >= 0 ? nwant : n, keep, m);
    gfree(x, &flags);
    return st;
}

rf_status rf_gx_k_group(gx *x, const rf_hir_kernel *k)
{
    const gval *in = &x->vals[k->in[0]];
    int64_t n = in->nrows;
    gval g;
    memset(&g, 0, sizeof g);
    rf_status st = RF_OK;
    if (k->ngroup == 0 || n == 0) {
        /* one group holding every row (none when there are no rows): no
        ** group array (gid.p 0; rf_reduce.cuh reads group 0), where n zeros
        ** took 8 bytes a row (a fifth of TC's peak, counting its paths) */
        g.has_groups = 1;
        g.nrows = n;
        g.ngroups = n ? 1 : 0;
        if (n) st = galloc(x, 8, &g.first);
        if (!st && n) st = put_u64(x, g.first.p, 0);
    } else {
        keycols kc;
        rf_gx_keys_of(in, x->p->vars[k->in[0]]->types, k->group, k->ngroup, &kc);
        st = group_rows(x, &kc, n, &g);
    }
    if (st) {
        rf_gx_val_clear(x, &g, 0);
        return st;
    }
    rf_gx_var_set(x, k->out, &g);
    return RF_OK;
}

/* ---- sets: the hash index of a relation that only grows ------------------------------------ */

/* A set's table: u32 slots (rf_group.cuh), at most two thirds full, so a
** tuple costs 6 to 12 bytes of index on top of its columns (u64 slots at
** most half full cost 16 to 32: the transitive closure's path held more
** index than pairs). Linear probing at two thirds still finds a row in a
** few slots. */
static uint64_t set_cap_for(int64_t rows) { return pow2_at_least((uint64_t)rows + (uint64_t)rows / 2); }

/* Ids in a set's table are u32 and RF_EMPTY32 (~0u) marks a free slot:
** a set and its candidates together stay below it. */
static rf_status set_ids_fit(gx *x, int32_t var, int64_t rows)
{
    if (rows < (int64_t)UINT32_MAX) return RF_OK;
    rf_error(x->d, rf_mkloc(NULL, 0, 0), "out of GPU memory: %s would hold %" PRId64 " rows, more than a GPU set indexes (%" PRIu32 ")",
             x->p->vars[var]->name, rows, UINT32_MAX - 1);
    return RF_EDEVMEM;
}

static rf_status set_table(gx *x, int32_t var, uint64_t cap)
{
    gval *v = &x->vals[var];
    rf_status st = set_ids_fit(x, var, v->nrows);
    if (st) return st;
    /* the table is made from the columns alone: the old one goes first, so
    ** that the two are never held at once */
    rf_gx_set_free(x, &v->set);
    gset *s = rf_calloc(1, sizeof *s);
    if (!s) return RF_ENOMEM;
    s->cap = cap;
    st = galloc(x, cap * 4, &s->tab);
    if (!st) st = x->g.ops->memset8(&x->g, s->tab.p, 0xff, cap * 4);
    keycols kc;
    rf_gx_set_keys(x, var, &kc);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = v->nrows;
    for (int32_t c = 0; c < kc.n; c++) a.c0[c] = kc.cols[c];
    RF_A_GRP_TABLE(a) = s->tab.p;
    RF_A_GRP_MASK(a) = (int64_t)(cap - 1);
    if (!st) st = rf_gx_hlaunch(x, kc.sig, "set_build", v->nrows, &a);
    if (st) {
        rf_gx_set_free(x, &s);
        return st;
    }
    v->set = s;
    return RF_OK;
}

/* Gives a relation a hash index on its rows, deduplicating it (first
** occurrences in order) as the CPU's ensure_set does. */
static rf_status ensure_set(gx *x, int32_t var)
{
    gval *v = &x->vals[var];
    if (v->set) return RF_OK;
    const rf_hir_var *hv = x->p->vars[var];
    rf_status st = RF_OK;
    if (v->nrows > 1) {
        gbuf keep = {0, 0};
        int64_t m = 0;
        st = rf_gx_distinct_rows(x, v, hv, 0, -1, &keep, &m);
        if (!st && m < v->nrows) {
            gval nv;
            st = rf_gx_rel_gather(x, v, hv->types, hv->ncols, keep.p, m, &nv);
            if (!st) {
                rf_gx_val_clear(x, v, hv->ncols);
                *v = nv;
            }
        }
        gfree(x, &keep);
    }
    /* its int columns in 32 bits where every value fits (rt_gpu_narrow.c) */
    if (!st) st = rf_gx_narrow_try(x, var);
    if (!st) st = set_table(x, var, set_cap_for(v->nrows));
    return st;
}

/* Room for rows more rows in a set's columns and table. */
static rf_status set_reserve(gx *x, int32_t var, int64_t more)
{
    gval *v = &x->vals[var];
    const rf_hir_var *hv = x->p->vars[var];
    int64_t need = v->nrows + more;
    rf_status sst = set_ids_fit(x, var, need);
    if (sst) return sst;
    if (set_cap_for(need) > v->set->cap) {
        rf_status st = set_table(x, var, set_cap_for(need));
        if (st) return st;
    }
    if (need > v->cap) {
        /* a quarter more than needed: few moves as the set grows, and at
        ** most a quarter of its columns' room unused (doubling left up to
        ** half of it) */
        int64_t cap = need + need / 4;
        if (!v->cols && !(v->cols = rf_calloc((size_t)hv->ncols + 1, sizeof *v->cols))) return RF_ENOMEM;
        /* one column at a time: the old and new room of one column are held
        ** at once, never of all of them */
        for (int32_t c = 0; c < hv->ncols; c++) {
            uint64_t w = rf_gx_set_width(x, var, c);
            gbuf nb;
            rf_status st = galloc(x, (uint64_t)cap * w, &nb);
            if (!st && v->nrows) st = rf_gx_dcopy(x, nb.p, v->cols[c].p, (uint64_t)v->nrows * w);
            if (st) {
                gfree(x, &nb);
                return st;
            }
            gfree(x, &v->cols[c]);
            v->cols[c] = nb;
        }
        v->cap = cap;
    }
    return RF_OK;
}

/* An insert's new rows appended in host memory. Under a cap, widening the
** set for a value outside 32 bits may find no room for a column in both
** widths and move the set to host memory whole (rt_gpu_narrow.c,
** widen_held), its table holding this insert's candidates as pending ids
** N + i: set_append's work is then done there, so that the table and the
** rows agree again; the set's next reader brings it back (it read device
** buffers that were gone, and crashed). */
static rf_status append_held(gx *x, int32_t var, const gval *t, const gbuf *slot, const gbuf *flags, const gbuf *pos,
                             int64_t tn, int64_t N)
{
    gval *v = &x->vals[var];
    const rf_hir_var *hv = x->p->vars[var];
    int32_t nc = hv->ncols;
    if (!v->held) return RF_EINTERNAL;
    int64_t *hs = rf_calloc((size_t)tn, 8), *hp = rf_calloc((size_t)tn + 2, 8);
    uint8_t *hf = rf_calloc((size_t)tn + 1, 1);
    char **tc = rf_calloc((size_t)nc + 1, sizeof *tc);
    rf_status st = hs && hp && hf && tc ? RF_OK : RF_ENOMEM;
    if (!st) st = x->g.ops->d2h(&x->g, hs, slot->p, (uint64_t)tn * 8);
    if (!st) st = x->g.ops->d2h(&x->g, hp, pos->p, (uint64_t)(tn + 1) * 8);
    if (!st) st = x->g.ops->d2h(&x->g, hf, flags->p, (uint64_t)tn);
    for (int32_t c = 0; c < nc && !st; c++) {
        uint64_t tw = rf_gx_narrow_bit(t, c) ? 4 : (uint64_t)wid(hv->types[c]);
        if (!colp(t, c) || rf_gx_narrow_bit(v, c)) st = RF_EINTERNAL; /* (the set is wide now) */
        else if (!(tc[c] = rf_calloc((size_t)tn, (size_t)tw))) st = RF_ENOMEM;
        else st = x->g.ops->d2h(&x->g, tc[c], colp(t, c), (uint64_t)tn * tw);
    }
    uint32_t *tab = (uint32_t *)(uintptr_t)rf_gx_held_col(v, nc + 4);
    for (int64_t i = 0; i < tn && !st; i++) {
        if (!hf[i]) continue;
        int64_t w = N + hp[i];
        for (int32_t c = 0; c < nc && !st; c++) {
            uint64_t wd = (uint64_t)wid(hv->types[c]);
            char *dst = (char *)(uintptr_t)rf_gx_held_col(v, c);
            if (!dst || (uint64_t)(w + 1) * wd > rf_gx_held_len(v, c)) {
                st = RF_EINTERNAL;
            } else if (rf_gx_narrow_bit(t, c)) {
                int64_t val = ((const int32_t *)(const void *)tc[c])[i];
                memcpy(dst + (uint64_t)w * wd, &val, 8);
            } else {
                memcpy(dst + (uint64_t)w * wd, tc[c] + (uint64_t)i * wd, (size_t)wd);
            }
        }
        if (!st && tab) {
            if (hs[i] < 0 || (uint64_t)(hs[i] + 1) * 4 > rf_gx_held_len(v, nc + 4)) st = RF_EINTERNAL;
            else tab[hs[i]] = (uint32_t)w;
        }
    }
    for (int32_t c = 0; tc && c < nc; c++) free(tc[c]);
    free(tc);
    free(hs);
    free(hp);
    free(hf);
    return st;
}

rf_status rf_gx_k_insert(gx *x, const rf_hir_kernel *k)
{
    int32_t var = k->out;
    rf_status st = ensure_set(x, var);
    const rf_hir_var *hv = x->p->vars[var];
    for (int32_t i = 1; i < k->nin && !st; i++) {
        const gval *t = &x->vals[k->in[i]];
        int64_t tn = t->nrows;
        if (tn == 0) continue;
        if ((st = set_reserve(x, var, tn))) break;
        gval *v = &x->vals[var];
        int64_t N = v->nrows, M = 0;
        keycols kc;
        rf_gx_set_keys(x, var, &kc);
        gbuf slot = {0, 0}, flags = {0, 0}, pos = {0, 0};
        rf_gpu_args a;
        memset(&a, 0, sizeof a);
        a.n = tn;
        a.m = N;
        for (int32_t c = 0; c < hv->ncols; c++) {
            a.c0[c] = colp(v, c);
            a.c1[c] = colp(t, c);
        }
        RF_A_GRP_TABLE(a) = v->set->tab.p;
        RF_A_GRP_MASK(a) = (int64_t)(v->set->cap - 1);
        /* all the room first: once set_insert has written its candidates'
        ** pending ids into the table, a failure for room would leave the
        ** table naming rows the set does not have (the scan's scratch was
        ** the last allocation, and failed on a GPU under a cap) */
        gbuf scratch = {0, 0};
        st = galloc(x, (uint64_t)tn * 8, &slot);
        if (!st) st = galloc(x, (uint64_t)tn + 1, &flags);
        if (!st) st = galloc(x, (uint64_t)(tn + 2) * 8, &pos);
        if (!st) st = rf_gx_scan_temp(x, 0, tn, &scratch);
        RF_A_GRP_SLOTS(a) = slot.p;
        if (!st) st = rf_gx_hlaunch(x, kc.sig, "set_insert", tn, &a);
        rf_gpu_args f;
        memset(&f, 0, sizeof f);
        f.n = tn;
        RF_A_GRP_TABLE(f) = v->set->tab.p;
        RF_A_GRP_SLOTS(f) = slot.p;
        RF_A_GRP_FLAGS(f) = flags.p;
        RF_A_GRP_ID_BASE(f) = N;
        /* a narrow set: the new rows' values checked too, the word riding
        ** back with the scan's total (pos[tn + 1]); one outside 32 bits
        ** widens the set before it is appended */
        if (!st && v->narrow) {
            for (int32_t c = 0; c < hv->ncols; c++) f.c1[c] = colp(t, c);
            RF_A_SET_FIT_COLS(f) = (int64_t)v->narrow;
            RF_A_SET_FIT_STATUS(f) = pos.p + (uint64_t)(tn + 1) * 8;
            st = x->g.ops->memset8(&x->g, pos.p + (uint64_t)(tn + 1) * 8, 0, 8);
        }
        if (!st) st = rf_gx_launch(x, "rf_set_flag", tn, &f);
        int64_t w[2] = {0, 0};
        if (!st) st = rf_gx_scan_into_temp(x, 0, flags.p, tn, pos.p, w, v->narrow ? 2 : 1, &scratch);
        gfree(x, &scratch);
        M = w[0];
        if (!st && M > 0 && w[1]) st = rf_gx_widen(x, var, 0);
        v = &x->vals[var];
        if (!st && M > 0 && v->held && (!v->set || !v->set->tab.p)) {
            st = append_held(x, var, t, &slot, &flags, &pos, tn, N);
        } else if (!st && M > 0) {
            memset(&a, 0, sizeof a);
            a.n = tn;
            RF_A_NCOLS(a) = hv->ncols;
            RF_A_GRP_ID_BASE(a) = N;
            for (int32_t c = 0; c < hv->ncols; c++) {
                RF_A_WIDTH(a, c) = rf_gx_narrow_bit(v, c) ? RF_W_NARROW : (uint64_t)wid(hv->types[c]);
                a.c1[c] = colp(t, c);
                a.o[c] = colp(v, c);
            }
            RF_A_GRP_TABLE(a) = v->set->tab.p;
            RF_A_GRP_SLOTS(a) = slot.p;
            RF_A_GRP_FLAGS(a) = flags.p;
            RF_A_GRP_SCAN(a) = pos.p;
            st = rf_gx_launch(x, "rf_set_append", tn, &a);
        }
        if (!st) v->nrows = N + M;
        gfree(x, &slot);
        gfree(x, &flags);
        gfree(x, &pos);
    }
    return st;
}

/* ---- unique, difference ------------------------------------------------------------------------ */

/* Whether two of r's rows have one key (its nk columns: *any), found in
** host memory: where a cap leaves no room for grouping the keys on the
** device. */
static rf_status fd_repeat_on_host(gx *x, const rf_type *types, const gval *r, int32_t nk, int *any)
{
    gval h;
    memset(&h, 0, sizeof h);
    h.nrows = r->nrows;
    rf_status st = RF_OK;
    for (int32_t c = 0; c < nk && !st; c++) {
        uint64_t bytes = (uint64_t)r->nrows * (uint64_t)wid(types[c]);
        char *m = rf_malloc((size_t)bytes);
        st = m ? x->g.ops->d2h(&x->g, m, colp(r, c), bytes) : RF_ENOMEM;
        if (!st) st = rf_gx_held_adopt(&h, nk, c, m, bytes);
        if (st) free(m);
    }
    int64_t frow = -1, row = -1;
    if (!st) st = rf_gx_held_first_repeat(types, &h, nk, NULL, &frow, &row);
    rf_gx_held_free(&h);
    *any = row >= 0;
    return st;
}

/* The rows of r whose first nk columns another row has (*n of them in
** *rows, allocated here; *n 0: none; *n -1 and *rows NULL: some, not
** said which, every row is a candidate). */
static rf_status repeated_keys(gx *x, const gval *r, const rf_hir_var *out, int32_t nk, int64_t **rows, int64_t *n)
{
    *rows = NULL;
    *n = 0;
    keycols kc;
    rf_gx_keys_of(r, out->types, NULL, nk, &kc);
    gval g;
    memset(&g, 0, sizeof g);
    int64_t ndiag = x->d->count, nerr = x->d->nerrors;
    rf_status st = group_rows(x, &kc, r->nrows, &g);
    if (st == RF_EDEVMEM) {
        /* no room to group the keys beside the rows: looked for on the
        ** host (the unique's rows stay; the run stays on the GPU) */
        rf_gx_val_clear(x, &g, 0);
        rf_gx_held_drop_diags(x, ndiag, nerr);
        int any = 0;
        st = fd_repeat_on_host(x, out->types, r, nk, &any);
        if (!st && any) *n = -1;
        return st;
    }
    if (st || g.ngroups == r->nrows) {
        rf_gx_val_clear(x, &g, 0);
        return st;
    }
    int64_t *gid = NULL, *first = NULL;
    int64_t ng = g.ngroups;
    st = rf_gx_host_i64(x, g.gid.p, r->nrows, &gid);
    if (!st) st = rf_gx_host_i64(x, g.first.p, ng, &first);
    rf_gx_val_clear(x, &g, 0);
    uint8_t *rep = st ? NULL : rf_calloc((size_t)ng + 1, 1);
    if (!st && !(rep && (*rows = rf_malloc((size_t)r->nrows * sizeof **rows)))) st = RF_ENOMEM;
    for (int64_t i = 0; !st && i < r->nrows; i++)
        if (first[gid[i]] != i) rep[gid[i]] = 1;
    for (int64_t i = 0; !st && i < r->nrows; i++)
        if (rep[gid[i]]) (*rows)[(*n)++] = i;
    if (!st && *n == 0) st = RF_EINTERNAL;
    if (st) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    free(rep);
    free(gid);
    free(first);
    return st;
}

/* A functional predicate must not give two values for one key (the CPU
** executor's check_fd, runtime/cpu: same message, the same clash chosen,
** rt_fd_clash.c). */
static rf_status check_fd(gx *x, const rf_hir_kernel *k, const gval *r)
{
    const rf_hir_var *out = x->p->vars[k->out];
    int32_t nk = out->nkeys;
    if (nk < 0 || nk >= out->ncols || r->nrows < 2) return RF_OK;
    /* nk 0, a function without key columns (p[] = v): its distinct rows are
    ** one key's values, every one a candidate */
    int64_t *rows = NULL, n = -1;
    rf_status st = nk > 0 ? repeated_keys(x, r, out, nk, &rows, &n) : RF_OK;
    if (st || n == 0) return st;
    /* the rows on the host (an error's path), the clash chosen there */
    rf_rt_rel h;
    memset(&h, 0, sizeof h);
    st = rf_rt_rel_alloc(&h, out->ncols, out->types, r->nrows);
    for (int32_t c = 0; c < out->ncols && !st; c++)
        st = x->g.ops->d2h(&x->g, h.cols[c], colp(r, c), (uint64_t)r->nrows * (uint64_t)wid(out->types[c]));
    int64_t first = -1, second = -1;
    if (!st) st = rf_rt_fd_least_clash(x->dict, &h, nk, rows, n < 0 ? 0 : n, &first, &second);
    free(rows);
    if (!st && first < 0) st = RF_EINTERNAL; /* (rows are distinct: a repeated key has two values) */
    if (!st) st = rf_rt_fd_fail(x->dict, out->pred_name ? out->pred_name : out->name, &h, nk, first, second, kloc(x, k),
                                x->d, x->fd_clash);
    rf_rt_rel_free(&h);
    return st;
}

/* A kernel whose result is every row of its input (in[0]) in order (a
** unique that keeps all, a gather in identity order) needs no copy when it
** is the input's last reader (the scheduler then releases it right after:
** hir_schedule.c; each variable owns its buffers, so no one else sees them):
** the result takes the input's columns. 1 when it did. */
int rf_gx_take_columns(gx *x, const rf_hir_kernel *k, gval *r)
{
    const rf_hir_var *hv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
    gval *in = &x->vals[k->in[0]];
    int same = hv->ncols == ov->ncols && k->in[0] != k->out && in->cols;
    for (int32_t c = 0; c < ov->ncols && same; c++) same = wid(hv->types[c]) == wid(ov->types[c]);
    int last = 0;
    for (int32_t i = 0; i < k->nrelease && same; i++) last |= k->release[i] == k->in[0];
    /* a predicate's relation that no later kernel reads is as dead (only
    ** outputs are read after the run): the output's copy of a total, say */
    if (same && !last && x->last_reader && hv->role == RF_HIR_ROLE_PRED) last = x->last_reader[k->in[0]] == k;
    /* dead after k across the block graph (rt_gpu_live.c): a semi-naive
    ** loop's new rows, moved into its delta rather than copied */
    if (same && !last) last = rf_gx_live_dies(x, k, k->in[0]);
    if (!last) return 0;
    rf_gx_jidx_free(x, in); /* (its build reads these columns) */
    memset(r, 0, sizeof *r);
    r->nrows = in->nrows;
    r->cap = in->cap;
    r->cols = in->cols;
    in->cols = NULL;
    return 1;
}

/* Every row of in[0] as the result: its columns, or a copy of them. */
static rf_status rel_all(gx *x, const rf_hir_kernel *k, gval *r)
{
    if (rf_gx_take_columns(x, k, r)) return RF_OK;
    const rf_hir_var *ov = x->p->vars[k->out];
    const gval *in = &x->vals[k->in[0]];
    rf_status st = rf_gx_rel_alloc(x, r, ov->types, ov->ncols, in->nrows, in->nrows);
    for (int32_t c = 0; c < ov->ncols && !st; c++)
        st = rf_gx_dcopy(x, colp(r, c), colp(in, c), (uint64_t)in->nrows * (uint64_t)wid(ov->types[c]));
    if (st) rf_gx_val_clear(x, r, ov->ncols);
    return st;
}

/* Differences from this many rows on count their absent rows first: below,
** the table over all rows is under 2 MiB and not worth a wait. */
enum { DIFF_COUNT_MIN = 65536 };

rf_status rf_gx_k_unique(gx *x, const rf_hir_kernel *k)
{
    const rf_hir_var *hv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
    gbuf keep = {0, 0};
    int64_t m = 0;
    rf_status st = RF_OK;
    if (k->kind == RF_HIR_DIFFERENCE) {
        st = ensure_set(x, k->in[1]);
        const gval *a = &x->vals[k->in[0]], *b = &x->vals[k->in[1]];
        int64_t n = a->nrows;
        if (!st && n > 0) {
            keycols kc;
            rf_gx_set_keys(x, k->in[1], &kc);
            gbuf absent = {0, 0};
            rf_gpu_args p;
            memset(&p, 0, sizeof p);
            p.n = n;
            p.m = b->nrows;
            for (int32_t c = 0; c < hv->ncols; c++) {
                p.c0[c] = colp(b, c);
                p.c1[c] = colp(a, c);
            }
            RF_A_GRP_TABLE(p) = b->set->tab.p;
            RF_A_GRP_MASK(p) = (int64_t)(b->set->cap - 1);
            st = galloc(x, (uint64_t)n + 1, &absent); /* (+1: the scan that counts them clears flags[n]) */
            RF_A_SET_ABSENT_OUT(p) = absent.p;
            if (!st) st = rf_gx_hlaunch(x, kc.sig, "set_probe", n, &p);
            /* a may repeat rows: keep the first of each. From DIFF_COUNT_MIN
            ** rows on, the absent rows are counted first (one wait), so that
            ** the table is sized for them, not for all of a (a semi-naive
            ** loop's candidates are mostly known rows: TC's largest table
            ** 16.8 -> 4.2 MB in tc_graph 2000 4000), and none at all skips it */
            int64_t nabs = -1;
            if (!st && n >= DIFF_COUNT_MIN) {
                gbuf pos = {0, 0};
                st = rf_gx_scan_flags(x, absent.p, n, &pos, &nabs);
                gfree(x, &pos);
            }
            if (!st && nabs != 0) st = wanted_distinct(x, a, hv, absent.p, nabs, &keep, &m);
            gfree(x, &absent);
        }
    } else if (x->vals[k->in[0]].distinct) {
        m = x->vals[k->in[0]].nrows; /* its maker dropped the repeats */
    } else if (x->vals[k->in[0]].nrows > 0) {
        st = rf_gx_distinct_rows(x, &x->vals[k->in[0]], hv, 0, -1, &keep, &m);
    }
    gval r;
    memset(&r, 0, sizeof r);
    if (!st && m > 0 && m == x->vals[k->in[0]].nrows) st = rel_all(x, k, &r);
    else if (!st) st = rf_gx_rel_gather(x, &x->vals[k->in[0]], ov->types, ov->ncols, keep.p, m, &r);
    gfree(x, &keep);
    if (!st && k->check_fd) st = check_fd(x, k, &r);
    if (st) {
        rf_gx_val_clear(x, &r, ov->ncols);
        return st;
    }
    rf_gx_var_set(x, k->out, &r);
    return RF_OK;
}
