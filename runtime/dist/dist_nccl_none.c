/*
** runtime/dist/dist_nccl_none.c: the NCCL transport of a build without the
** NCCL header (a CUDA toolkit without NCCL, or none) or without MPI: NCCL
** is never available, and the ranks move rows through host memory.
*/
#include "dist_nccl.h"

#include <stdio.h>

int dist_nccl_loadable(char *why, size_t n)
{
    if (why && n) snprintf(why, n, "this redfox was built without NCCL's header (nccl.h) or MPI");
    return 0;
}

void dist_nccl_version(char *buf, size_t n) { snprintf(buf, n, "none"); }

rf_status dist_nccl_open(rf_rt_dist_world *w, double timeout_s, dist_nccl **out, char *why, size_t nwhy, rf_diags *d)
{
    (void)w, (void)timeout_s, (void)d;
    *out = NULL;
    dist_nccl_loadable(why, nwhy);
    return RF_OK;
}

rf_status dist_nccl_sendrecv(dist_nccl *c, rf_rt_dist_world *w, double timeout_s, const char *what,
                             const rf_rt_xbuf *sends, int nsend, const rf_rt_xbuf *recvs, int nrecv, void *stream,
                             rf_diags *d)
{
    (void)c, (void)w, (void)timeout_s, (void)what, (void)sends, (void)nsend, (void)recvs, (void)nrecv, (void)stream,
        (void)d;
    return RF_EINTERNAL;
}

void dist_nccl_close(dist_nccl *c) { (void)c; }
