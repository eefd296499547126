/*
** api/tests/test_api_world.c: a run on several MPI ranks through the public
** header only (rf_world_mpi, rf_run_options.world), as an application
** started by `mpirun -np N` does it.
**
** Owns: `test_api_world RANKS PROG DATA`: joins the world, checks it has
** RANKS ranks, runs PROG on DATA on the CPU with every rank, and rank 0
** prints each output as CSV (api/tests/run_world.sh compares that with one
** process's); on several ranks, a second world, and one after the first
** ended, are refused. Exit 0 when every check held.
*/
#include "redfox.h"
#include "test_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank = -1;
    if (argc != 4) {
        fprintf(stderr, "usage: test_api_world RANKS PROG DATA\n");
        return 2;
    }
    int want = atoi(argv[1]);
    rf_world *w = NULL;
    int rc = rf_world_mpi(&argc, &argv, &w);
    if (rc) fprintf(stderr, "rf_world_mpi: %s\n", rf_world_errmsg(w));
    rank = rf_world_rank(w);
    check_rank = rank;
    CHECK(rc == REDFOX_OK && w);
    CHECK(rf_world_size(w) == want);
    CHECK(rank >= 0 && rank < want);
    CHECK(rf_world_local_size(w) >= 1 && rf_world_local_size(w) <= want);
    CHECK(rf_world_local_rank(w) >= 0 && rf_world_local_rank(w) < rf_world_local_size(w));
    CHECK(rf_world_errmsg(w)[0] == 0 && rf_world_diag(w, 0) == NULL);
    /* one world per process: a second one is refused while this one is
    ** open (it aborted every rank: MPI_Init twice) */
    if (want > 1) {
        rf_world *w2 = NULL;
        rc = rf_world_mpi(&argc, &argv, &w2);
        CHECK(rc == REDFOX_MISUSE && w2 && strstr(rf_world_errmsg(w2), "already started"));
        rf_world_end(w2, 0);
    }
    /* the getters of no world: one process */
    CHECK(rf_world_size(NULL) == 1 && rf_world_rank(NULL) == 0);
    const char *paths[] = {argv[2]};
    rf_program *p = NULL;
    rc = rf_compile_files(paths, 1, &p);
    if (rc) fprintf(stderr, "compile: %s\n", rf_program_errmsg(p));
    CHECK(rc == REDFOX_OK);
    rf_database *db = NULL;
    CHECK(rf_open(argv[3], &db) == REDFOX_OK);
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = REDFOX_DEVICE_CPU;
    o.threads = 1;
    o.world = w;
    o.profile = 1; /* its text names every rank: the run was shared */
    rf_result *res = NULL;
    rc = rf_run(db, p, &o, &res);
    if (rc) fprintf(stderr, "rank %d: run: %s\n", rank, rf_errmsg(db));
    CHECK(rc == REDFOX_OK && res);
    if (rank == 0 && res && want > 1) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        CHECK(f && rf_result_profile_write(res, f) == REDFOX_OK);
        if (f) fclose(f);
        char last[64];
        snprintf(last, sizeof last, "rank %d of %d:", want - 1, want);
        CHECK(text && strstr(text, last));
        free(text);
    }
    /* rank 0 holds the outputs */
    for (int32_t i = 0; rank == 0 && res && i < rf_result_count(res); i++) {
        printf("%s\n", rf_result_name(res, i));
        CHECK(rf_result_write(res, i, REDFOX_FORMAT_CSV, stdout) == REDFOX_OK);
    }
    fflush(stdout);
    rf_result_free(res);
    rf_close(db);
    rf_program_free(p);
    if (failures) fprintf(stderr, "rank %d: %d checks failed\n", rank, failures);
    rf_world_end(w, failures ? 1 : 0);
    /* and after it ended (MPI_Init after MPI_Finalize aborted every rank) */
    if (want > 1) {
        rf_world *w3 = NULL;
        rc = rf_world_mpi(&argc, &argv, &w3);
        CHECK(rc == REDFOX_MISUSE && w3 && strstr(rf_world_errmsg(w3), "was ended"));
        rf_world_end(w3, 0);
        if (failures) fprintf(stderr, "rank %d: %d checks failed after the world ended\n", rank, failures);
    }
    return failures ? 1 : 0;
}
