/*
** runtime/dist/dist_comm_none.c: the ranks of a binary built without MPI.
**
** Owns: the answers of rf_rt_dist_world_* and the collectives when CMake
** found no MPI: one process, always; a launch by mpirun is an error that
** says ranks are not available in this build (instead of several ranks
** each silently running the whole program).
*/
#include "dist_internal.h"
#include "rf_rt_xport.h"

int rf_rt_dist_have_mpi(void) { return 0; }

int rf_rt_dist_mpi_started(void) { return 0; }

rf_status rf_rt_dist_world_start(int *argc, char ***argv, rf_rt_dist_world **w, rf_diags *d)
{
    (void)argc;
    (void)argv;
    *w = NULL;
    if (rf_rt_dist_launched()) {
        rf_error(d, rf_mkloc(NULL, 0, 0),
                 "started by mpirun, but this redfox was built without MPI: ranks are not available "
                 "(install Open MPI's development files, e.g. libopenmpi-dev, and rebuild)");
        return RF_EUSAGE;
    }
    return RF_OK;
}

int rf_rt_dist_world_rank(const rf_rt_dist_world *w) { return (void)w, 0; }
int rf_rt_dist_world_size(const rf_rt_dist_world *w) { return (void)w, 1; }
int rf_rt_dist_world_local_size(const rf_rt_dist_world *w) { return (void)w, 1; }
int rf_rt_dist_world_local_rank(const rf_rt_dist_world *w) { return (void)w, 0; }
void rf_rt_dist_world_end(rf_rt_dist_world *w, int exit_code) { (void)w, (void)exit_code; }

rf_status rf_rt_dist_allgather_votes(rf_rt_dist_world *w, double timeout_s, const char *what,
                                     const rf_rt_dist_vote *mine, rf_rt_dist_vote *out, rf_diags *d)
{
    (void)w, (void)timeout_s, (void)what, (void)d;
    out[0] = *mine;
    return RF_OK;
}

void **dist_world_xport(rf_rt_dist_world *w) { return (void)w, NULL; }

rf_status rf_rt_dist_allgather_i64(rf_rt_dist_world *w, double timeout_s, const char *what, const int64_t *mine,
                                   int k, int64_t *all, rf_diags *d)
{
    (void)w, (void)timeout_s, (void)what, (void)d;
    for (int i = 0; i < k; i++) all[i] = mine[i];
    return RF_OK;
}

rf_status rf_rt_dist_alltoallv(rf_rt_dist_world *w, double timeout_s, const char *what, const char *sendbuf,
                               const int64_t *send, const int64_t *sdispl, char **recvbuf, const int64_t *recv,
                               int pieces, rf_diags *d)
{
    (void)w, (void)timeout_s, (void)what, (void)sendbuf, (void)send, (void)sdispl, (void)recv, (void)pieces, (void)d;
    *recvbuf = NULL;
    return RF_EINTERNAL; /* never called: without MPI there is one rank */
}

void rf_rt_dist_world_break(rf_rt_dist_world *w) { (void)w; }

/* never called: without MPI there is one rank */
rf_status rf_rt_dist_alltoall_i64(rf_rt_dist_world *w, double timeout_s, const char *what, const int64_t *send,
                                  int64_t *recv, rf_diags *d)
{
    (void)w, (void)timeout_s, (void)what, (void)send, (void)recv, (void)d;
    return RF_EINTERNAL;
}

rf_status rf_rt_dist_bcast(rf_rt_dist_world *w, double timeout_s, const char *what, void *buf, int n, int root,
                           rf_diags *d)
{
    (void)w, (void)timeout_s, (void)what, (void)buf, (void)n, (void)root, (void)d;
    return RF_EINTERNAL;
}

rf_status rf_rt_dist_sendrecv(rf_rt_dist_world *w, double timeout_s, const char *what, const rf_rt_xbuf *sends,
                              int nsend, const rf_rt_xbuf *recvs, int nrecv, rf_diags *d)
{
    (void)w, (void)timeout_s, (void)what, (void)sends, (void)nsend, (void)recvs, (void)nrecv, (void)d;
    return RF_EINTERNAL;
}
