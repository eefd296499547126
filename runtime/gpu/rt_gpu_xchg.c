/*
** runtime/gpu/rt_gpu_xchg.c: several ranks (runtime/dist): a relation's rows
** moved between the ranks without leaving the device (the exchange
** operation of rt_device.h).
**
** Owns: cutting a relation into one part per rank on the GPU (part_flags:
** each row's rank by the hash of its key columns, dist_pack.c's hash bit for
** bit; then a stable select and a gather per rank, so that every part keeps
** its rows' order), the exchange of the parts' columns through the transport
** runtime/dist hands over (NCCL between GPUs; MPI over the emulator's
** memory, which is host memory), and the rank's new value: the parts
** received laid out by source rank, each in its order, exactly as the move
** through host memory lays them out; this rank's own part is copied on the
** device. A rank without room on its device for the move (under a cap)
** says so in the counts, or in a second vote on the room for the rows
** received, before any rows move: every rank then leaves the move to the
** host path (xs->host_instead). Relations with string columns come here only when every code
** they hold is one all ranks share (runtime/dist/dist_codes.c): a code
** moves as any 4-byte column and is hashed as a date's value, as
** dist_pack.c hashes a shared code; the rest move through host memory.
** Also whether a relation that may hold a rank's own codes holds none
** (codes_below: its string columns' largest code, on the device), so that
** the ranks can move it here after all.
*/
#include "rt_gpu_internal.h"

#include "rf_rt_input.h"

#include <stdlib.h>
#include <string.h>

/* The kind part_flags reads a key column as (rf_gather.cuh). */
static uint64_t part_kind(rf_type t)
{
    switch (t) {
    case RF_TYPE_FLOAT: return 1;
    case RF_TYPE_DATE:
    case RF_TYPE_STRING: return 2; /* a shared code (below 2^31) */
    case RF_TYPE_BOOL: return 3;
    case RF_TYPE_DEC128: return 4; /* by its low word, as dist_pack.c hashes it */
    default: return 0;
    }
}

/* part: the rows of v whose rank (the hash of mv's columns) is want. */
static rf_status hash_part(gx *x, const gval *v, const rf_hir_var *hv, const rf_rt_xmove *mv, int nranks, int want,
                           gval *part)
{
    memset(part, 0, sizeof *part);
    if (v->nrows == 0) return RF_OK;
    gbuf flags = {0, 0}, idx = {0, 0};
    rf_status st = galloc(x, (uint64_t)v->nrows, &flags);
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = v->nrows;
    RF_A_PART_NKEYS(a) = mv->ncols;
    RF_A_PART_RANKS(a) = nranks;
    RF_A_PART_WANT(a) = want;
    RF_A_PART_FLAGS_OUT(a) = flags.p;
    for (int32_t j = 0; j < mv->ncols; j++) {
        a.c0[j] = colp(v, mv->cols[j]); /* 0: a column never copied, hashed as zeros (as on the host) */
        RF_A_PART_KIND(a, j) = part_kind(hv->types[mv->cols[j]]);
    }
    int64_t m = 0;
    if (!st) st = rf_gx_launch(x, "rf_part_flags", v->nrows, &a);
    if (!st) st = rf_gx_select_flags(x, flags.p, v->nrows, &idx, &m);
    if (!st) st = rf_gx_rel_gather(x, v, hv->types, hv->ncols, idx.p, m, part);
    gfree(x, &flags);
    gfree(x, &idx);
    return st;
}

rf_status rf_gx_exchange(void *dev, int32_t var, const rf_rt_xmove *mv, const rf_rt_xport *xp, rf_rt_xstat *xs)
{
    gx *x = dev;
    const rf_hir_var *hv = x->p->vars[var];
    gval *v = &x->vals[var];
    int n = xp->size, me = xp->rank;
    /* a narrow set's columns in 64 bits, as they move (a failure here, as
    ** any before the counts, is this rank's vote in them: the others stop
    ** with it rather than wait for its rows) */
    rf_status wst = rf_gx_widen(x, var, 1);
    gval *parts = rf_calloc((size_t)n, sizeof *parts);
    int64_t *cnt = rf_calloc((size_t)n * 5 + 1, sizeof *cnt), *send = cnt, *recv = cnt ? cnt + n : NULL,
            *roff = cnt ? cnt + 2 * n : NULL, *room_vote = cnt ? cnt + 3 * n : NULL,
            *room_votes = cnt ? cnt + 4 * n : NULL;
    rf_rt_xbuf *bufs = rf_calloc((size_t)n * 2 * ((size_t)hv->ncols + 1), sizeof *bufs);
    /* the columns the value has: an input's columns no kernel reads were
    ** never copied, on any rank (the program decides, not the data) */
    uint8_t *has = rf_malloc((size_t)hv->ncols + 1);
    rf_status st = wst ? wst : parts && cnt && bufs && has ? RF_OK : RF_ENOMEM;
    int64_t ndiag = x->d->count, nerr = x->d->nerrors;
    /* under a memory cap the value may be in host memory: on the GPU first */
    if (!st) st = rf_gx_hold_var(x, var);
    if (has) rf_rt_input_cols_read(x->p, var, has);
    /* the part for each rank: hashed parts are fresh values; a gather on
    ** rank 0 or a broadcast sends the value itself */
    for (int j = 0; j < n && !st; j++) {
        if (mv->kind == RF_RT_XMOVE_HASH) st = hash_part(x, v, hv, mv, n, j, &parts[j]);
        send[j] = mv->kind == RF_RT_XMOVE_HASH ? parts[j].nrows
                  : mv->kind == RF_RT_XMOVE_ALL || j == 0 ? v->nrows
                  : 0;
    }
    /* no room on this device (under a cap): a count of -1 for every rank
    ** tells them all to move the rows through host memory instead, which
    ** needs no device room (xs->host_instead) */
    int noroom = st == RF_EDEVMEM && cnt;
    if (noroom) {
        rf_gx_held_drop_diags(x, ndiag, nerr);
        st = RF_OK;
        for (int j = 0; j < n; j++) send[j] = -1;
    }
    if (st && st != RF_ENOMEM) rf_error(x->d, rf_mkloc(NULL, 0, 0), "rank %d: GPU failure cutting %s into parts", me, mv->what);
    /* every rank's counts (and whether one failed) */
    rf_status cst = cnt ? xp->counts(xp->ctx, st != RF_OK, send, recv, mv->what, x->d) : RF_ENOMEM;
    if (!st) st = cst;
    for (int j = 0; j < n && !st; j++) noroom |= recv[j] < 0;
    gval nv;
    memset(&nv, 0, sizeof nv);
    if (!st && noroom) {
        xs->host_instead = 1;
        goto out;
    }
    int64_t total = 0;
    for (int j = 0; j < n && !st; j++) {
        roff[j] = total;
        total += recv[j];
    }
    if (!st) {
        /* the room for what this rank receives may not be there (under a
        ** cap: a gather on rank 0), which no other rank can know: every
        ** rank's room is voted on before any sends, else the others would
        ** wait in the exchange for a rank that left it (until
        ** rank_timeout_s); a failure other than room stops them all */
        int64_t nd = x->d->count, ne = x->d->nerrors;
        rf_status ast = rf_gx_rel_alloc(x, &nv, hv->types, hv->ncols, total, total);
        /* (no room: -1 for every rank, as above) */
        if (ast == RF_EDEVMEM) {
            rf_gx_held_drop_diags(x, nd, ne);
            ast = RF_OK;
            for (int j = 0; j < n; j++) room_vote[j] = -1;
        }
        rf_status vst = xp->counts(xp->ctx, ast != RF_OK, room_vote, room_votes, mv->what, x->d);
        st = ast ? ast : vst;
        for (int j = 0; j < n && !st; j++) xs->host_instead |= room_vote[j] < 0 || room_votes[j] < 0;
        if (!st && xs->host_instead) goto out;
    }
    int nsend = 0, nrecv = 0;
    rf_rt_xbuf *sends = bufs, *recvs = bufs ? bufs + (size_t)n * ((size_t)hv->ncols + 1) : NULL;
    int64_t row_bytes = 0;
    for (int32_t c = 0; c < hv->ncols && !st; c++) {
        uint64_t w = (uint64_t)wid(hv->types[c]);
        if (!has[c]) {
            if (nv.cols) gfree(x, &nv.cols[c]);
            continue;
        }
        row_bytes += (int64_t)w;
        for (int j = 0; j < n && !st; j++) {
            const gval *src = mv->kind == RF_RT_XMOVE_HASH ? &parts[j] : v;
            if (j == me) {
                st = rf_gx_dcopy(x, colp(&nv, c) + (uint64_t)roff[j] * w, colp(src, c), (uint64_t)send[j] * w);
                continue;
            }
            if (send[j]) sends[nsend++] = (rf_rt_xbuf){j, colp(src, c), send[j] * (int64_t)w};
            if (recv[j]) recvs[nrecv++] = (rf_rt_xbuf){j, colp(&nv, c) + (uint64_t)roff[j] * w, recv[j] * (int64_t)w};
        }
    }
    /* the emulator's kernels and copies are done before MPI reads its
    ** memory; on a GPU, NCCL's work follows them on the same stream */
    if (!st && !x->g.stream) st = x->g.ops->sync(&x->g);
    if (!st) st = xp->exchange(xp->ctx, sends, nsend, recvs, nrecv, x->g.stream, mv->what, x->d);
    if (!st) {
        for (int j = 0; j < n; j++)
            if (j != me) {
                xs->bytes_sent += send[j] * row_bytes;
                xs->bytes_received += recv[j] * row_bytes;
                xs->rows_sent += send[j];
                xs->rows_received += recv[j];
            }
        if (x->views) rf_rt_rel_free(&x->views[var]);
        rf_gx_var_set(x, var, &nv); /* (not distinct: rows of several ranks) */
    }
out: /* (the rows moving through host memory instead: xs->host_instead, st RF_OK) */
    rf_gx_val_clear(x, &nv, hv->ncols);
    for (int j = 0; parts && j < n; j++) rf_gx_val_clear(x, &parts[j], hv->ncols);
    free(parts);
    free(cnt);
    free(bufs);
    free(has);
    return st;
}

rf_status rf_gx_codes_below(void *dev, int32_t var, int64_t limit, int *below)
{
    gx *x = dev;
    const rf_hir_var *hv = x->p->vars[var];
    *below = 1;
    /* (as the exchange reads it: widened, on the GPU) */
    rf_status st = rf_gx_widen(x, var, 1);
    if (!st) st = rf_gx_hold_var(x, var);
    const gval *v = &x->vals[var];
    for (int32_t c = 0; c < hv->ncols && !st && *below && v->nrows > 0; c++) {
        if (hv->types[c] != RF_TYPE_STRING || !colp(v, c)) continue; /* (a column never copied: no codes) */
        int64_t lo = 0, hi = 0;
        st = rf_gpu_code_range(&x->str, colp(v, c), 0, v->nrows, &lo, &hi);
        if (!st && hi >= limit) *below = 0;
    }
    return st;
}
