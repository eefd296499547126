/*
** runtime/dist/dist_xport.c: the transport of the moves a device makes
** itself (rf_rt_xport.h): GPU ranks exchanging rows without copying them to
** the host.
**
** Owns: the choice of transport, which every rank votes on so that all
** choose alike (NCCL where every rank has a real GPU of its own and NCCL
** loads and starts; MPI over the emulator's memory, which is host memory,
** where every rank runs the emulator, so that CI tests the device's side of
** the moves; else none: rows move through host memory, and the profile's
** line says why); the counts' exchange, which opens with the failure vote
** every collective starts with; the bytes each move sent for --profile;
** and what a planned move asks of the device.
*/
#include "dist_internal.h"
#include "dist_nccl.h"
#include "rf_sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct xport {
    rf_rt_xport xp; /* first: the device is handed &xp */
    rf_rt_dist *x;
    dist_nccl *nccl; /* NULL: MPI over host memory */
} xport;

static rf_status xp_counts(void *ctx, int failed, const int64_t *send, int64_t *recv, const char *what, rf_diags *d)
{
    xport *t = ctx;
    rf_rt_dist *x = t->x;
    rf_rt_dist_vote *all = rf_calloc((size_t)x->size, sizeof *all);
    if (!all) return RF_ENOMEM;
    rf_status st = dist_vote(x, failed, NULL, all, what, d);
    free(all);
    if (st) return st;
    double t0 = rf_now();
    st = rf_rt_dist_alltoall_i64(x->w, x->timeout_s, what, send, recv, d);
    x->stat.wait_seconds += rf_now() - t0;
    if (st) x->stopped = 1;
    return st;
}

static rf_status xp_exchange(void *ctx, const rf_rt_xbuf *sends, int nsend, const rf_rt_xbuf *recvs, int nrecv,
                             void *stream, const char *what, rf_diags *d)
{
    xport *t = ctx;
    rf_rt_dist *x = t->x;
    double t0 = rf_now();
    rf_status st = t->nccl ? dist_nccl_sendrecv(t->nccl, x->w, x->timeout_s, what, sends, nsend, recvs, nrecv, stream, d)
                           : rf_rt_dist_sendrecv(x->w, x->timeout_s, what, sends, nsend, recvs, nrecv, d);
    x->stat.wait_seconds += rf_now() - t0;
    if (st) x->stopped = 1; /* the world is broken: no more collectives */
    return st;
}

/* Every rank's two flags; *all_a, *all_b whether every rank set them,
** *first_not_b the lowest rank without b (-1: none). */
static rf_status agree(rf_rt_dist *x, int a, int b, const char *what, int *all_a, int *all_b, int *first_not_b,
                       rf_diags *d)
{
    rf_rt_dist_vote *all = rf_calloc((size_t)x->size, sizeof *all);
    if (!all) return RF_ENOMEM;
    int64_t v[RF_RT_DIST_VOTE_N] = {a, b};
    rf_status st = dist_vote(x, 0, v, all, what, d);
    *all_a = *all_b = 1;
    *first_not_b = -1;
    for (int r = 0; r < x->size && !st; r++) {
        *all_a &= all[r].v[0] != 0;
        *all_b &= all[r].v[1] != 0;
        if (!all[r].v[1] && *first_not_b < 0) *first_not_b = r;
    }
    free(all);
    return st;
}

rf_status rf_rt_dist_xport_open(rf_rt_dist *x, int host_memory, int gpus, rf_rt_xport **out, char *note, size_t nnote,
                                rf_diags *d)
{
    *out = NULL;
    snprintf(note, nnote, "through host memory (MPI)");
    char why[200] = "";
    int nccl_ok = 0;
    if (!host_memory) {
        int local = rf_rt_dist_world_local_size(x->w);
        if (gpus < local)
            snprintf(why, sizeof why, "%d ranks share this host's %d GPU%s (NCCL needs a GPU per rank)", local, gpus,
                     gpus == 1 ? "" : "s");
        else
            nccl_ok = dist_nccl_loadable(why, sizeof why);
    }
    int all_host, all_nccl, first_bad;
    rf_status st = agree(x, host_memory, nccl_ok, "the choice of the ranks' exchange", &all_host, &all_nccl, &first_bad, d);
    if (st) return st;
    dist_nccl *nccl = NULL;
    if (!all_host && all_nccl) {
        st = dist_nccl_open(x->w, x->timeout_s, &nccl, why, sizeof why, d);
        if (st) {
            x->stopped = 1;
            return st;
        }
        int dummy;
        st = agree(x, 1, nccl != NULL, "NCCL's start", &dummy, &all_nccl, &first_bad, d);
        if (st || !all_nccl) {
            dist_nccl_close(nccl);
            nccl = NULL;
            if (st) return st;
        }
    }
    if (!all_host && !nccl) {
        /* rank 0 writes the profile: its own reason, or the rank that had one */
        if (why[0]) snprintf(note, nnote, "through host memory (MPI): %s", why);
        else if (first_bad >= 0)
            snprintf(note, nnote, "through host memory (MPI): rank %d of %d cannot use NCCL", first_bad, x->size);
        return RF_OK;
    }
    xport *t = rf_calloc(1, sizeof *t);
    if (!t) {
        dist_nccl_close(nccl);
        return RF_ENOMEM;
    }
    t->x = x;
    t->nccl = nccl;
    t->xp.ctx = t;
    t->xp.rank = x->rank;
    t->xp.size = x->size;
    t->xp.counts = xp_counts;
    t->xp.exchange = xp_exchange;
    if (nccl) {
        char ver[32];
        dist_nccl_version(ver, sizeof ver);
        snprintf(note, nnote, "GPU to GPU with NCCL %s (relations with strings through host memory)", ver);
    } else {
        snprintf(note, nnote, "in the emulated GPUs' memory over MPI (relations with strings through host memory)");
    }
    *out = &t->xp;
    return RF_OK;
}

void rf_rt_dist_xport_close(rf_rt_xport *xp)
{
    if (!xp) return;
    xport *t = xp->ctx;
    dist_nccl_close(t->nccl);
    free(t);
}

int rf_rt_dist_move_talks(const rf_rt_dist *x, const rf_rt_dist_move *m, rf_rt_xmove *mv, char *what, size_t nwhat)
{
    rf_rt_place_kind from = x->vars[m->var].place.kind;
    if (from == RF_RT_PLACE_REPL || from == RF_RT_PLACE_EMPTY || m->to.kind == RF_RT_PLACE_ANY) return 0;
    memset(mv, 0, sizeof *mv);
    mv->kind = m->to.kind == RF_RT_PLACE_HASH   ? RF_RT_XMOVE_HASH
               : m->to.kind == RF_RT_PLACE_ROOT ? RF_RT_XMOVE_ROOT
                                                : RF_RT_XMOVE_ALL;
    mv->ncols = m->to.kind == RF_RT_PLACE_HASH ? m->to.ncols : 0;
    mv->cols = m->to.cols;
    dist_move_what(x, m, what, nwhat);
    mv->what = what;
    return 1;
}

void rf_rt_dist_moved_on_device(rf_rt_dist *x, const rf_rt_dist_move *m, rf_status st, const rf_rt_xstat *xs)
{
    x->stat.moves++;
    if (st) return;
    dist_var *v = &x->vars[m->var];
    v->place = m->to;
    v->gen++;
    x->stat.dev_bytes_sent += xs->bytes_sent;
    x->stat.dev_bytes_received += xs->bytes_received;
}
