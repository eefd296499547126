/*
** queryplan/tests/qp_interp.h: a reference interpreter of the plan IR, for
** tests only (see qp_interp.c): run a plan on small random inputs and read
** its outputs as text.
*/
#ifndef QP_INTERP_H
#define QP_INTERP_H

#include "rf_queryplan.h"

typedef struct qpi qpi;

qpi *qpi_new(const rf_qp_program *p);
void qpi_free(qpi *q);
/* Fills every input relation with `rows` random rows (plus one duplicate). */
void qpi_random_inputs(qpi *q, uint64_t seed, int64_t rows);
/* Runs from block 0 to halt; -1 on a run-time error (see qpi_error). */
int qpi_run(qpi *q, int64_t max_steps);
const char *qpi_error(const qpi *q);
/* The rows of the output named `name`, one per line; -1 when there is none. */
int qpi_output(const qpi *q, const char *name, rf_buf *out);

#endif
