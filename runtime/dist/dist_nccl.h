/*
** runtime/dist/dist_nccl.h: NCCL between the ranks' GPUs (dist_nccl.c;
** dist_nccl_none.c where the build has no NCCL header or no MPI).
**
** Owns: the interface of the NCCL transport that dist_xport.c uses.
*/
#ifndef RF_DIST_NCCL_H
#define RF_DIST_NCCL_H

#include "rf_rt_dist.h"

typedef struct dist_nccl dist_nccl;

/* 1 when libnccl.so.2 loads with what redfox calls; else 0, why saying so. */
int dist_nccl_loadable(char *why, size_t n);
/* The loaded library's version ("2.28.9"). */
void dist_nccl_version(char *buf, size_t n);
/* A communicator of every rank (a collective; every rank's NCCL loadable):
** *out NULL with why when NCCL does not start (RF_OK: rows then move through
** host memory); an error when the others do not answer by the deadline. */
rf_status dist_nccl_open(rf_rt_dist_world *w, double timeout_s, dist_nccl **out, char *why, size_t nwhy, rf_diags *d);
/* One grouped exchange of device buffers on stream, waited for until the
** deadline (then the communicator is aborted and the world broken). */
rf_status dist_nccl_sendrecv(dist_nccl *c, rf_rt_dist_world *w, double timeout_s, const char *what,
                             const rf_rt_xbuf *sends, int nsend, const rf_rt_xbuf *recvs, int nrecv, void *stream,
                             rf_diags *d);
void dist_nccl_close(dist_nccl *c);

#endif
