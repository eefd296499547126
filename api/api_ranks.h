/*
** api/api_ranks.h: a run on one of several MPI ranks through the library,
** for `redfox run` under mpirun. Not public: libredfox does not export it
** (no rf_ name, not in redfox.map), and redfox.h has no world of ranks yet;
** the command links the library's objects statically and calls it.
**
** Owns: nothing but this declaration (api_database.c defines it).
*/
#ifndef RF_API_RANKS_H
#define RF_API_RANKS_H

#include "redfox.h"

typedef struct rf_rt_dist_world rf_rt_dist_world;

/* rf_run with world, the ranks this process is one of (runtime/dist; NULL:
** one process, the same as rf_run). */
int api_run_world(rf_database *db, const rf_program *prog, const rf_run_options *o, rf_rt_dist_world *world,
                  rf_result **res);

#endif
