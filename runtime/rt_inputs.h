/*
** runtime/rt_inputs.h: the driver's reading of a run's inputs (rt_inputs.c),
** for rt_run.c.
**
** Owns: the interface between the driver and the input cache: every device
** receives the same host rows and string codes (read once per cache), so a
** device never reads files itself.
*/
#ifndef RF_RT_INPUTS_H
#define RF_RT_INPUTS_H

#include "rf_rt_input.h"
#include "rt_device.h"

/* One run's reading of its inputs. */
typedef struct rf_rt_inputs {
    const rf_hir_program *p;
    const rf_rt_options *o;
    rf_rt_dict *dict;
    rf_cpu_pool *pool;
    int threads;
    rf_diags *d;
    rf_db *db;     /* --data names a database (opened at the first input) */
    int db_looked;
    rf_rt_dbskip skip; /* block skipping's columns (kept until close) and counts (rt_db_blocks.c) */
} rf_rt_inputs;

void rf_rt_inputs_init(rf_rt_inputs *in, const rf_rt_env *env);
/* Input variable v's rows into *out (ncols and types set by the caller),
** strings interned in the run's dictionary; *borrowed = 1 when the columns
** belong to the cache (then only out->cols itself is the caller's). */
rf_status rf_rt_inputs_read(rf_rt_inputs *in, const rf_hir_var *v, rf_rt_rel *out, int *borrowed);
void rf_rt_inputs_close(rf_rt_inputs *in);

/* The cache's dictionary; take_dict leaves it to a result (the cache no
** longer frees it). */
rf_rt_dict *rf_rt_cache_dict(rf_rt_cache *c);
void rf_rt_cache_take_dict(rf_rt_cache *c);

#endif
