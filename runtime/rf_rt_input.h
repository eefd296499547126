/*
** runtime/rf_rt_input.h: reading an input predicate's file (lang:input)
** into a relation, the same way for the CPU and the GPU backends.
*/
#ifndef RF_RT_INPUT_H
#define RF_RT_INPUT_H

#include "rf_cpu.h"
#include "rf_harmony.h"
#include "rf_load.h"
#include "rf_rt_data.h"

/* The CPU primitives' kind of a column of type t (rf_rt_data.h's layout). */
rf_cpu_kind rf_rt_cpu_kind(rf_type t);

/* Loads path as input variable v into *out (zeroed first; empty on
** failure), interning its strings into dict, on `threads` threads; checks
** v's declared key and, for a functional predicate, its functional
** dependency (pool may be NULL: one thread). Errors name the file and
** line: bad data (the loader's), two lines with one key, or two lines with
** one key of a functional predicate and different values. Diagnostics copy
** path. */
rf_status rf_rt_load_input(const char *path, const rf_hir_var *v, rf_rt_dict *dict, rf_cpu_pool *pool, int threads,
                           rf_rt_rel *out, rf_diags *d);

/* The check of v's declared key alone, on relation r already loaded from
** path (a cached input read by a program that declares a key its first
** reader did not). */
rf_status rf_rt_check_input_key(const char *path, const rf_hir_var *v, const rf_rt_dict *dict, rf_cpu_pool *pool,
                                const rf_rt_rel *r, rf_diags *d);

/* Is v a functional predicate's input (f[keys] = value: its first nkeys
** columns determine the rest)? */
int rf_rt_input_is_functional(const rf_hir_var *v);

/* The check of v's functional dependency alone (a cached input read by a
** program whose predicate is functional where its first reader's was not). */
rf_status rf_rt_check_input_fd(const char *path, const rf_hir_var *v, const rf_rt_dict *dict, rf_cpu_pool *pool,
                               const rf_rt_rel *r, rf_diags *d);

#endif
