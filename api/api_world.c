/*
** api/api_world.c: the MPI ranks of a process through the library: the
** world runtime/dist starts, behind the public rf_world.
**
** Owns: rf_world (rf_world_mpi, its getters, rf_world_barrier,
** rf_world_end). Runs with a
** world are api_database.c's (rf_run_options.world).
*/
#include "api_internal.h"
#include "rf_rt_dist.h"

#include <stdlib.h>

int rf_world_mpi(int *argc, char ***argv, rf_world **out)
{
    if (!out) return REDFOX_MISUSE;
    rf_world *w = *out = rf_calloc(1, sizeof *w);
    if (!w) return REDFOX_NOMEM;
    rf_diags d;
    rf_diags_init(&d);
    rf_status st = rf_rt_dist_world_start(argc, argv, &w->dist, &d);
    st = rf_diags_status(&d, st); /* a bug exits 3 */
    rf_status dst = api_diags_set(&w->diags, &d);
    rf_diags_free(&d);
    if (!st && dst) st = dst;
    if (st && !w->diags.errmsg) api_diags_error(&w->diags, "%s", st == RF_ENOMEM ? "out of memory" : "MPI did not start");
    if (st) w->failed = 1;
    return api_code(st);
}

int rf_world_rank(const rf_world *w) { return w ? rf_rt_dist_world_rank(w->dist) : 0; }

int rf_world_size(const rf_world *w) { return w ? rf_rt_dist_world_size(w->dist) : 1; }

int rf_world_local_size(const rf_world *w) { return w ? rf_rt_dist_world_local_size(w->dist) : 1; }

int rf_world_local_rank(const rf_world *w) { return w ? rf_rt_dist_world_local_rank(w->dist) : 0; }

const char *rf_world_errmsg(const rf_world *w) { return w ? api_diags_errmsg(&w->diags) : ""; }

int64_t rf_world_diag_count(const rf_world *w) { return w ? w->diags.n : 0; }

const rf_diagnostic *rf_world_diag(const rf_world *w, int64_t i)
{
    return w && i >= 0 && i < w->diags.n ? &w->diags.items[i] : NULL;
}

int rf_world_barrier(rf_world *w, double timeout_s)
{
    if (!w || rf_rt_dist_world_size(w->dist) <= 1) return REDFOX_OK;
    if (w->failed) return REDFOX_MISUSE;
    /* an allgather of one number: every rank waits for all, under the
    ** collectives' deadline (a rank that died breaks the world). all[0] is
    ** this rank's, the others' come after it. */
    int n = rf_rt_dist_world_size(w->dist);
    int64_t *all = rf_calloc((size_t)n + 1, sizeof *all);
    if (!all) return REDFOX_NOMEM;
    all[0] = rf_rt_dist_world_rank(w->dist);
    rf_diags d;
    rf_diags_init(&d);
    rf_status st = rf_rt_dist_allgather_i64(w->dist, timeout_s, RF_RT_DIST_BARRIER_WHAT, all, 1, all + 1, &d);
    if (st) {
        /* the allgather may still be under way (a rank that comes late
        ** writes into it): its buffers stay, and the world takes no run or
        ** barrier again; rf_world_end aborts the ranks */
        w->failed = 1;
        st = rf_diags_status(&d, st); /* a bug exits 3 */
        rf_status dst = api_diags_set(&w->diags, &d);
        if (dst) st = dst;
    } else {
        free(all);
    }
    rf_diags_free(&d);
    return api_code(st);
}

void rf_world_end(rf_world *w, int exit_code)
{
    if (!w) return;
    rf_rt_dist_world *dist = w->dist;
    api_diags_clear(&w->diags);
    free(w);
    if (dist) rf_rt_dist_world_end(dist, exit_code);
}
