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
** line says why), made once per process: the world keeps the choice and
** NCCL's communicator for every later run, and closes it at its end; the
** counts' exchange, carried by the failure vote every collective starts
** with; an exchange with nothing to move skipped; the bytes and seconds of
** each move for --profile; and what a planned move asks of the device.
*/
#include "dist_internal.h"
#include "dist_nccl.h"
#include "rf_sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct xport {
    rf_rt_xport xp; /* first: the device is handed &xp */
    rf_rt_dist *x;
    dist_nccl *nccl; /* NULL: MPI over host memory */
} xport;

/* What the ranks chose, kept by the world for every later run of the
** process (a communicator's start costs 100s of ms; the facts voted on, a
** rank's GPU and libraries, do not change while it lives). */
typedef struct xport_cache {
    int host_memory;
    int64_t gpu;
    int use;         /* 1: moves on the device (nccl, or the emulator's MPI); 0: through host memory */
    dist_nccl *nccl;
    char note[256];
} xport_cache;

void dist_xport_world_end(void *cached)
{
    xport_cache *c = cached;
    if (!c) return;
    dist_nccl_close(c->nccl);
    free(c);
}

static rf_status xp_counts(void *ctx, int failed, const int64_t *send, int64_t *recv, const char *what, rf_diags *d)
{
    xport *t = ctx;
    int silent = 0, big = 0;
    /* the failure vote carries the counts: one collective */
    return dist_vote_counts(t->x, failed, send, 0, recv, &silent, &big, what, d);
}

static rf_status xp_exchange(void *ctx, const rf_rt_xbuf *sends, int nsend, const rf_rt_xbuf *recvs, int nrecv,
                             void *stream, const char *what, rf_diags *d)
{
    xport *t = ctx;
    rf_rt_dist *x = t->x;
    if (!nsend && !nrecv) return RF_OK; /* nothing to or from another rank: no call, no wait on the stream */
    double t0 = rf_now();
    rf_status st = t->nccl ? dist_nccl_sendrecv(t->nccl, x->w, x->timeout_s, what, sends, nsend, recvs, nrecv, stream, d)
                           : rf_rt_dist_sendrecv(x->w, x->timeout_s, what, sends, nsend, recvs, nrecv, d);
    x->stat.xport_seconds += rf_now() - t0;
    x->stat.exchanges++;
    x->stat.move_trips++;
    if (st) x->stopped = 1; /* the world is broken: no more collectives */
    return st;
}

/* Every rank's numbers v (RF_RT_DIST_VOTE_N each) into all (size entries). */
static rf_status gather(rf_rt_dist *x, const int64_t *v, rf_rt_dist_vote *all, const char *what, rf_diags *d)
{
    return dist_vote(x, 0, v, all, what, d);
}

/* This host, as a number every rank of it computes alike. */
static int64_t host_id(void)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    return (int64_t)(rf_rt_hash_bytes(name, (int64_t)strlen(name)) >> 1);
}

/* Whether every rank can use NCCL, given all's votes (v[0] host memory,
** v[1] NCCL loads, v[2] the GPU's PCI address + 1, v[3] the host): else
** why, for the profile. */
static int nccl_for_all(const rf_rt_dist *x, const rf_rt_dist_vote *all, char *why, size_t n)
{
    for (int r = 0; r < x->size; r++) {
        if (all[r].v[0]) return 0; /* an emulated GPU */
        if (!all[r].v[1]) {
            if (!why[0]) snprintf(why, n, "rank %d of %d cannot use NCCL", r, x->size);
            return 0;
        }
        for (int s = 0; s < r; s++)
            if (all[s].v[3] == all[r].v[3] && all[s].v[2] == all[r].v[2]) {
                /* NCCL refuses two ranks on one GPU */
                snprintf(why, n, "ranks %d and %d share a GPU (NCCL needs a GPU per rank)", s, r);
                return 0;
            }
    }
    return 1;
}

/* The ranks' choice (a collective): into c. */
static rf_status choose(rf_rt_dist *x, int host_memory, int64_t gpu, xport_cache *c, rf_diags *d)
{
    c->host_memory = host_memory;
    c->gpu = gpu;
    char why[200] = "";
    int nccl_ok = 0;
    if (!host_memory && !gpu) snprintf(why, sizeof why, "the GPU's PCI address is unknown");
    else if (!host_memory) nccl_ok = dist_nccl_loadable(why, sizeof why);
    rf_rt_dist_vote *all = rf_calloc((size_t)x->size, sizeof *all);
    if (!all) return RF_ENOMEM;
    int64_t v[RF_RT_DIST_VOTE_N] = {host_memory, nccl_ok, gpu, host_id()};
    rf_status st = gather(x, v, all, "the choice of the ranks' exchange", d);
    int all_host = 1;
    for (int r = 0; r < x->size && !st; r++) all_host &= all[r].v[0] != 0;
    int all_nccl = !st && !all_host && nccl_for_all(x, all, why, sizeof why);
    dist_nccl *nccl = NULL;
    if (all_nccl) {
        st = dist_nccl_open(x->w, x->timeout_s, &nccl, why, sizeof why, d);
        if (st) x->stopped = 1;
        /* every rank's communicator started, or none is used */
        int64_t w[RF_RT_DIST_VOTE_N] = {nccl != NULL};
        if (!st) st = gather(x, w, all, "NCCL's start", d);
        for (int r = 0; r < x->size && !st; r++)
            if (!all[r].v[0] && nccl) {
                if (!why[0]) snprintf(why, sizeof why, "NCCL did not start on rank %d of %d", r, x->size);
                dist_nccl_close(nccl);
                nccl = NULL;
            }
    }
    free(all);
    if (st) {
        dist_nccl_close(nccl);
        return st;
    }
    c->nccl = nccl;
    c->use = all_host || nccl;
    if (!c->use) {
        /* rank 0 writes the profile: its own reason, or the rank that had one */
        snprintf(c->note, sizeof c->note, "through host memory (MPI): %s", why[0] ? why : "NCCL is not available");
    } else if (nccl) {
        char ver[32];
        dist_nccl_version(ver, sizeof ver);
        snprintf(c->note, sizeof c->note, "GPU to GPU with NCCL %s (relations with a rank's own strings through host memory)", ver);
    } else {
        snprintf(c->note, sizeof c->note,
                 "in the emulated GPUs' memory over MPI (relations with a rank's own strings through host memory)");
    }
    return RF_OK;
}

static rf_status xport_open(rf_rt_dist *x, int host_memory, int64_t gpu, rf_rt_xport **out, char *note, size_t nnote,
                            rf_diags *d)
{
    *out = NULL;
    void **slot = dist_world_xport(x->w);
    if (!slot) return RF_EINTERNAL; /* ranks always have a world (MPI) */
    xport_cache *c = *slot;
    if (c && (c->host_memory != host_memory || c->gpu != gpu)) {
        /* another device than the last run's (every rank runs alike) */
        dist_xport_world_end(c);
        *slot = c = NULL;
    }
    rf_status st = RF_OK;
    if (!c) {
        double t0 = rf_now();
        c = rf_calloc(1, sizeof *c);
        if (!c) return RF_ENOMEM;
        st = choose(x, host_memory, gpu, c, d);
        if (st) {
            free(c);
            return st;
        }
        x->stat.starts = 1;
        x->stat.start_seconds = rf_now() - t0;
        *slot = c;
    }
    snprintf(note, nnote, "%s", c->note);
    if (c->use) {
        xport *t = rf_calloc(1, sizeof *t);
        if (!t) st = RF_ENOMEM;
        else {
            t->x = x;
            t->nccl = c->nccl;
            t->xp.ctx = t;
            t->xp.rank = x->rank;
            t->xp.size = x->size;
            t->xp.counts = xp_counts;
            t->xp.exchange = xp_exchange;
            *out = &t->xp;
        }
    }
    return st;
}

rf_status rf_rt_dist_xport_open(rf_rt_dist *x, int host_memory, int64_t gpu, rf_rt_xport **out, char *note,
                                size_t nnote, rf_diags *d)
{
    /* the ranks' start, not their run: its waits stay out of the profile's */
    rf_rt_rankstat saved = x->stat;
    rf_status st = xport_open(x, host_memory, gpu, out, note, nnote, d);
    x->stat.wait_seconds = saved.wait_seconds;
    x->stat.collectives = saved.collectives;
    x->stat.collective_seconds = saved.collective_seconds;
    return st;
}

void rf_rt_dist_xport_close(rf_rt_xport *xp)
{
    /* the communicator stays the world's, for the process's next run */
    if (xp) free(xp->ctx);
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
    const rf_hir_var *hv = x->p->vars[m->var];
    for (int32_t c = 0; c < hv->ncols; c++)
        if (hv->types[c] == RF_TYPE_STRING) {
            x->stat.str_coded++; /* shared codes, moved as any column */
            break;
        }
    x->stat.dev_bytes_sent += xs->bytes_sent;
    x->stat.dev_bytes_received += xs->bytes_received;
    x->stat.rows_sent += xs->rows_sent;
    x->stat.rows_received += xs->rows_received;
}
