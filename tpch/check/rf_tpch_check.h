/*
** tpch/check/rf_tpch_check.h: comparing a query's output with a TPC-H
** answer file, for `redfox tpch run --check` and the tests.
**
** Owns: the rules of the comparison, nothing else: it reads and prints
** nothing but the answer file it is asked to read, and says what it found in
** a result struct. Both sides are '|'-separated text under a header row.
**
** The rules:
**  - Headers: the same column names in the same order. An answer's name that
**    is no identifier (SQL's unnamed `sum(l_quantity)`) cannot be a LogiQL
**    column name; it matches the identifier made by turning each run of
**    other characters into '_' and trimming '_' at both ends
**    (`sum_l_quantity`).
**  - Rows: the same number, in the same order. Rows that tie on the ORDER BY
**    columns may come in any order (SQL leaves it open), so each run of tied
**    answer rows is compared as a multiset with the same positions of the
**    output. Without ORDER BY the whole answer is one such run. When a LIMIT
**    cut the answer inside a run of ties, which of the tied rows made it is
**    open too: that last run only has to tie on the ORDER BY columns.
**  - Fields: equal as text, or both numbers (plain decimal notation) whose
**    difference is at most the tolerance.
**  - An answer of a single row of empty fields is SQL's NULL result of an
**    aggregate over no rows; LogiQL has no NULLs and derives no tuple, so an
**    empty output matches it.
*/
#ifndef RF_TPCH_CHECK_H
#define RF_TPCH_CHECK_H

#include <stddef.h>
#include <stdint.h>

typedef struct rf_tpch_check_opts {
    const int32_t *order_cols; /* 0-based ORDER BY columns, most significant first */
    int32_t norder;            /* 0: no ORDER BY, all rows tie */
    int64_t limit;             /* the query's LIMIT; -1 for none */
    double tolerance;          /* absolute, for numeric fields */
} rf_tpch_check_opts;

typedef struct rf_tpch_check_result {
    int ok;                  /* 1 when the output matches the answer */
    int64_t expected_rows;   /* data rows in the answer */
    int64_t actual_rows;     /* data rows in the output */
    char message[1024];      /* the first difference, or a one-line summary */
} rf_tpch_check_result;

/* No ORDER BY, no LIMIT, tolerance 0.01. */
void rf_tpch_check_opts_init(rf_tpch_check_opts *o);

/* Compares the output text with the answer text (neither needs a NUL). */
void rf_tpch_check_text(const char *actual, size_t actual_len, const char *expected, size_t expected_len,
                        const rf_tpch_check_opts *o, rf_tpch_check_result *r);

/* The same with the answer read from a file; an unreadable file is a
** failure whose message names it. Returns r->ok. */
int rf_tpch_check_file(const char *actual, size_t actual_len, const char *expected_path,
                       const rf_tpch_check_opts *o, rf_tpch_check_result *r);

/* 1 when both fields match under the field rule above. */
int rf_tpch_check_fields_equal(const char *a, size_t alen, const char *b, size_t blen, double tolerance);

#endif
