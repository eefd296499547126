/*
** tools/tpch_tool.h: helpers shared by `redfox tpch run` and `redfox tpch bench`.
*/
#ifndef RF_TPCH_TOOL_H
#define RF_TPCH_TOOL_H

#include "rf_tpch_queries.h"

#define RF_TPCH_NQUERIES 22

/* Seconds on a monotonic clock. */
double rf_tpch_now(void);
/* "1,3,5-7" (a 'q' before a number is allowed: q1, Q05) into want[1..22].
** Returns 0 with a message in why on a bad list. */
int rf_tpch_parse_queries(const char *s, int want[RF_TPCH_NQUERIES + 1], const char **why);
/* The embedded source named name ("q01.logic", "schema.logic"), or NULL. */
const rf_tpch_source *rf_tpch_find_source(const char *name);
/* The median of v[0..n) (v is sorted in place). */
double rf_tpch_median(double *v, int n);

#endif
