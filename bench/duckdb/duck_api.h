/*
** bench/duckdb/duck_api.h: the parts of DuckDB's C API (duckdb.h, stable
** since 1.0) that the benchmark drivers use, declared here so that they
** build without DuckDB's headers and load libduckdb.so with dlopen at run
** time (tpch_duck.c, ../datalog/duck_dl.c, ../txn/tpcb/tpcb_duck.c).
**
** Owns: the handle types and the layout of duckdb_result.
*/
#ifndef RF_BENCH_DUCK_API_H
#define RF_BENCH_DUCK_API_H

#include <stdint.h>

typedef void *duckdb_database, *duckdb_connection, *duckdb_prepared_statement;
typedef struct {
    uint64_t column_count, row_count, rows_changed;
    void *columns;
    char *error_message;
    void *internal_data;
} duckdb_result;

#endif
