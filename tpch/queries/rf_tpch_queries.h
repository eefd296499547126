/*
** tpch/queries/rf_tpch_queries.h: the TPC-H query texts built into the
** redfox binary (schema.logic and q01.logic .. q22.logic, embedded at build
** time by embed_queries.cmake), so that `redfox tpch run` needs no files but
** the data.
*/
#ifndef RF_TPCH_QUERIES_H
#define RF_TPCH_QUERIES_H

#include <stdint.h>

typedef struct rf_tpch_source {
    const char *name;  /* "q01.logic" */
    const char *path;  /* "tpch/queries/q01.logic": where it lives in the source tree, for messages */
    const char *text;  /* NUL-terminated */
    int64_t len;       /* bytes, without the NUL */
} rf_tpch_source;

/* In file name order: q01.logic .. q22.logic, then schema.logic. */
extern const rf_tpch_source rf_tpch_sources[];
extern const int32_t rf_tpch_nsources;

#endif
