/*
** tools/pipeline.h: what the commands share around the compiler (pipeline.c).
*/
#ifndef RF_TOOLS_PIPELINE_H
#define RF_TOOLS_PIPELINE_H

#include "rf_frontend.h"
#include "rf_harmony.h"
#include "rf_queryplan.h"
#include "rf_runtime.h"

#include <stdio.h>

typedef struct rf_tool_opts {
    int no_opt;           /* skip the query-plan passes (and the another-row rewrite) */
    int no_lftj;          /* cyclic joins stay binary joins (no leapfrog triejoin) */
    int no_exists;        /* keep another-row tests as joins (rf_qp_options.no_exists) */
    int no_partagg;       /* aggregates stay whole (rf_qp_options.no_partagg) */
    int no_hoist;         /* loop-invariant commands stay in their loop (rf_qp_options.no_hoist) */
    int no_keyjoin;       /* equalities of computed values stay filters (rf_qp_options.no_keyjoin) */
    int inputs_only;      /* read for its lang:input declarations (import): no warning that it outputs nothing */
} rf_tool_opts;

/* 1 when path ends in .rfx (nothing is read: the path may be a pipe). */
int rf_tool_is_rfx(const char *path);
/* 1 for "-" (standard input) and any path that is not a regular file (a
** pipe, a FIFO, /dev/stdin, process substitution). */
int rf_tool_is_stream(const char *path);

/* Program files as given on the command line, each read once and whole:
** "-" is standard input (named "<stdin>" in messages); other paths are
** opened, so /dev/stdin, pipes and FIFOs work too. names live in the arena;
** texts are the caller's until rf_tool_sources_free. A file that cannot be
** read is an error naming it (RF_EUSER), "-" given twice RF_EUSAGE. */
typedef struct rf_tool_sources {
    int32_t n;
    const char **names;
    const char **texts;
    int64_t *lens;
} rf_tool_sources;
rf_status rf_tool_read_sources(const char *const *paths, int32_t n, rf_arena *arena, rf_tool_sources *s, rf_diags *d);
void rf_tool_sources_free(rf_tool_sources *s);
/* 1 when source i is a .rfx file (by its name's suffix or its magic bytes). */
int rf_tool_source_is_rfx(const rf_tool_sources *s, int32_t i);
/* Source -> checked program -> plan (optimized unless o->no_opt) -> Harmony
** (when hir is not NULL). The front end's data lives in arena; *qp is the
** caller's to free. */
rf_status rf_tool_compile_logic(const char *const *paths, int32_t npaths, const rf_tool_opts *o, rf_arena *arena,
                                rf_fe_program **fe, rf_qp_program **qp, rf_hir_program **hir, rf_diags *d);
/* The same for sources in memory (texts[i] of lens[i] bytes, named names[i]
** in messages; names must outlive the program), e.g. the embedded TPC-H
** queries. */
rf_status rf_tool_compile_sources(const char *const *names, const char *const *texts, const int64_t *lens, int32_t n,
                                  const rf_tool_opts *o, rf_arena *arena, rf_fe_program **fe, rf_qp_program **qp,
                                  rf_hir_program **hir, rf_diags *d);
/* ptx0 and gpln (may be NULL) receive the PTX0 and GPLN sections' bytes;
** empty when there is none. */
rf_status rf_tool_read_rfx(const char *path, rf_hir_program **hir, rf_buf *ptx0, rf_buf *gpln, rf_diags *d);
/* --device (auto, cpu, gpu), --threads (1..1024; NULL: all cores) into o and,
** when fmt is not NULL, --format (table, csv, tbl) into *fmt. Returns 1, or 0
** after printing cmd's usage error. */
int rf_tool_run_options(const char *cmd, const char *device, const char *threads, const char *format, rf_rt_options *o,
                        rf_rt_format *fmt);

/* `--set NAME=VALUE` at argv[*i] (repeatable): the tuning setting applied to
** t and, where sets is not NULL, its text appended to sets[*nsets] (at most
** RF_TOOL_MAX_SETS; rf_tool_settings_text makes them the run's settings).
** --cache-dir, --no-cache and --gpu-memory are named settings (--cache-dir
** and --no-cache both on one command line: a usage error). Returns 1
** when matched, 0 when argv[*i] is another option, -1 after printing cmd's
** usage error (an unknown name, a value of the wrong kind, too many). */
#define RF_TOOL_MAX_SETS 512
int rf_tool_opt_set(const char *cmd, int argc, char **argv, int *i, rf_rt_tuning *t, const char **sets, int *nsets);
/* The --set assignments as rf_run_options.settings ("A=1,B=2"), but for
** cache_dir (a folder's name may hold a comma), given as
** rf_run_options.cache_dir. NULL when out of memory; free it. */
char *rf_tool_settings_text(const char *const *sets, int n);
/* For --help: the settings --set takes, with their defaults and meanings. */
void rf_tool_print_settings(FILE *f);
/* Applies the process-wide part of a tuning (huge pages for host columns). */
void rf_tool_apply_tuning(const rf_rt_tuning *t);

/* `--profile`: the run's load and run time, then one line per kernel that ran. */
void rf_tool_print_profile(const rf_rt_result *res, FILE *f);
/* When main started (rf_now()), for the phases of a fresh process. */
extern double rf_tool_start;

#endif
