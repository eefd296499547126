/*
** tools/tpch_tool.h: helpers shared by `redfox tpch run` and `redfox tpch bench`.
*/
#ifndef RF_TPCH_TOOL_H
#define RF_TPCH_TOOL_H

#include "rf_frontend.h"
#include "rf_harmony.h"
#include "rf_runtime.h"
#include "rf_sys.h"
#include "rf_tpch_queries.h"
#include "redfox.h"

#define RF_TPCH_NQUERIES 22

/* "1,3,5-7" (a 'q' before a number is allowed: q1, Q05) into want[1..22].
** Returns 0 with a message in why on a bad list. */
int rf_tpch_parse_queries(const char *s, int want[RF_TPCH_NQUERIES + 1], const char **why);
/* The embedded source named name ("q01.logic", "schema.logic"), or NULL. */
const rf_tpch_source *rf_tpch_find_source(const char *name);
/* Compiles the embedded schema.logic with query q's qNN.logic (the front
** end's data in arena; *query_path, when given, names the query's source).
** Errors, a query not built into this redfox included, go to d. */
rf_status rf_tpch_compile_query(int q, rf_arena *arena, rf_fe_program **fe, rf_hir_program **hir,
                                const char **query_path, rf_diags *d);
/* On the GPU (rt->device gpu, or auto where the placement model predicts
** that the GPU's start pays off over the wanted queries, each run runs
** times, and there may be a GPU): the GPU code of the wanted queries
** compiled together into the caches before they run one after another
** (rf_rt_gpu_prepare); a line on stderr says what it cost when NVRTC
** compiled any (a cold cache), or always with verbose. world: the ranks
** (NULL: this process alone); each takes its host's GPU of its local rank
** before the driver opens, and with several ranks each first compiles
** only its share of the queries (the i-th wanted where i modulo the ranks
** is its rank), waits for the others (rf_world_barrier, within the
** rank_timeout_s setting), then takes the rest from the caches they share
** on one host (on another host it compiles them). 0; -1 when the ranks did
** not meet (the error is printed). */
int rf_tpch_prepare_gpu(const int want[RF_TPCH_NQUERIES + 1], const rf_rt_options *rt, int64_t runs, int verbose,
                        rf_world *world);
/* A database that a writer killed mid-commit left aside (DIR.old.PID.N,
** where the system has no exchange) put back at dir before anything looks
** at it (rf_db_restore_missing), its note printed: 0, or the exit status
** of its error (printed). */
int rf_tpch_restore_missing(const char *dir);
/* data's folder's shared lock, held in *fd until rf_file_unlock (or the
** process's end), as `redfox run` holds it: a writer replacing a database
** (import, tpch gen --format db, exec's commit) waits for the queries, which
** open its column files one by one under the manifest they read first, and
** `tpch gen` rewriting a text folder waits before its renames, so the
** queries never load tables of two generations. *fd = -1 where nothing was
** locked (rf_file_lock_text_folder_shared). 0, or after the error on stderr
** the exit status. */
int rf_tpch_lock_data(const char *data, int *fd);
/* The median of v[0..n) (v is sorted in place). */
double rf_tpch_median(double *v, int n);

/* Through the library (include/redfox.h): */
struct rf_program;
struct rf_database;
struct rf_diagnostic;
/* Query q's program: the embedded schema.logic and qNN.logic compiled
** together by rf_compile_buffers_v2 (REDFOX_* code; *p set as that sets
** it); *qpath, when given, names the query's source. A query not built
** into this redfox is an error on d (REDFOX_INTERNAL, *p untouched). */
int rf_tpch_compile_program(int q, struct rf_program **p, const char **qpath, rf_diags *d);
/* The command's own messages (d, an rf_diags) as the library's records,
** for rf_tool_finish_api (one record, overwritten by the next call). */
const struct rf_diagnostic *rf_tpch_local_diag(const void *d, int64_t i);
/* A query's warnings (its compile's and its last run's), and its notes
** ("running on the GPU: ...") only while *noted is 0: 22 queries would
** say the same 22 times. Sets *noted. */
void rf_tpch_print_notes(const struct rf_program *p, const struct rf_database *db, int *noted);

#endif
