/*
** api/tests/test_api_barrier.c: rf_world_barrier when a rank does not come
** in time, as an application started by `mpirun -np 2` meets it.
**
** Owns: `test_api_barrier`: rank 1 sleeps LATE seconds before the barrier
** while rank 0 waits at most 0.5 s: rank 0's call is REDFOX_ERROR with a
** message naming the barrier, its next barrier and run are REDFOX_MISUSE,
** and rf_world_end then aborts every rank (api/tests/run_barrier.sh checks
** that mpirun ends, non-zero, within its limit, and what rank 0 printed).
** Rank 1 (its barrier waits as long as it takes) meets the allgather rank 0
** left pending. A first barrier, every rank on time, is REDFOX_OK.
*/
#include "redfox.h"
#include "test_check.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static int rank = -1;

int main(int argc, char **argv)
{
    rf_world *w = NULL;
    int rc = rf_world_mpi(&argc, &argv, &w);
    if (rc) {
        fprintf(stderr, "rf_world_mpi: %s\n", rf_world_errmsg(w));
        return 2;
    }
    rank = rf_world_rank(w);
    check_rank = rank;
    CHECK(rf_world_size(w) == 2);
    CHECK(rf_world_barrier(w, 30) == REDFOX_OK); /* every rank on time */
    if (rank == 1) {
        struct timespec late = {2, 0};
        nanosleep(&late, NULL);
        rc = rf_world_barrier(w, 0); /* (no limit: rank 0's pending allgather completes it) */
        CHECK(rc == REDFOX_OK);
    } else {
        rc = rf_world_barrier(w, 0.5);
        CHECK(rc == REDFOX_ERROR);
        CHECK(strstr(rf_world_errmsg(w), "barrier") != NULL);
        printf("rank 0: barrier %d: %s\n", rc, rf_world_errmsg(w));
        CHECK(rf_world_barrier(w, 0.5) == REDFOX_MISUSE); /* the world is broken */
        rf_database *db = NULL;
        rf_program *p = NULL;
        const char *src = "e(x, y) -> int(x), int(y).\nlang:output[`e] = \"e\".\n";
        CHECK(rf_compile(src, (int64_t)strlen(src), "barrier.logic", &p) == REDFOX_OK);
        CHECK(rf_open(".", &db) == REDFOX_OK);
        rf_run_options o;
        rf_run_options_init_v2(&o, sizeof o);
        o.device = REDFOX_DEVICE_CPU;
        o.world = w;
        rf_result *res = NULL;
        CHECK(rf_run(db, p, &o, &res) == REDFOX_MISUSE && res == NULL);
        rf_close(db);
        rf_program_free(p);
        printf("rank 0: %d checks failed\n", failures);
        fflush(stdout);
    }
    if (failures) fprintf(stderr, "rank %d: %d checks failed\n", rank, failures);
    rf_world_end(w, 3); /* broken on rank 0: aborts every rank (exit code 3) */
    return failures ? 1 : 0;
}
