/*
** tools/tpch_tool.c: what `redfox tpch run` and `redfox tpch bench` share:
** the query list option, the built-in query sources (compiled through the
** library, and by the stages for rf_tpch_prepare_gpu), a query's notes
** printed once, medians, and a database's shared lock while it is read.
*/
#include "tpch_tool.h"
#include "pipeline.h"
#include "redfox.h"
#include "rf_db.h"
#include "rf_file.h"
#include "rf_rt_gpu.h"
#include "rf_rt_place.h"
#include "tools.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* "1,3,5-7" (a 'q' before a number is allowed: q1, Q05) into want[1..22].
** Returns 0 with a message in why on a bad list. */
int rf_tpch_parse_queries(const char *s, int want[RF_TPCH_NQUERIES + 1], const char **why)
{
    memset(want, 0, (RF_TPCH_NQUERIES + 1) * sizeof want[0]);
    const char *p = s;
    for (;;) {
        long a, b;
        char *end;
        if (*p == 'q' || *p == 'Q') p++;
        if (*p < '0' || *p > '9') goto bad;
        a = strtol(p, &end, 10);
        p = end;
        b = a;
        if (*p == '-') {
            p++;
            if (*p == 'q' || *p == 'Q') p++;
            if (*p < '0' || *p > '9') goto bad;
            b = strtol(p, &end, 10);
            p = end;
        }
        if (a < 1 || b > RF_TPCH_NQUERIES || a > b) {
            *why = "query numbers go from 1 to 22, ranges low to high";
            return 0;
        }
        for (long q = a; q <= b; q++) want[q] = 1;
        if (!*p) return 1;
        if (*p != ',') goto bad;
        p++;
    }
bad:
    *why = "a query list is numbers and ranges separated by commas, e.g. 1,3,5-7";
    return 0;
}

const rf_tpch_source *rf_tpch_find_source(const char *name)
{
    for (int32_t i = 0; i < rf_tpch_nsources; i++)
        if (!strcmp(rf_tpch_sources[i].name, name)) return &rf_tpch_sources[i];
    return NULL;
}

rf_status rf_tpch_compile_query(int q, rf_arena *arena, rf_fe_program **fe, rf_hir_program **hir,
                                const char **query_path, rf_diags *d)
{
    char fname[32];
    snprintf(fname, sizeof fname, "q%02d.logic", q);
    const rf_tpch_source *schema = rf_tpch_find_source("schema.logic"), *query = rf_tpch_find_source(fname);
    if (query_path) *query_path = query ? query->path : fname;
    if (!schema || !query) {
        rf_error(d, rf_mkloc(fname, 0, 0), "%s is not built into this redfox", !schema ? "schema.logic" : fname);
        return RF_EINTERNAL;
    }
    const char *names[2] = {schema->path, query->path};
    const char *texts[2] = {schema->text, query->text};
    int64_t lens[2] = {schema->len, query->len};
    rf_tool_opts to = {0};
    rf_qp_program *qp = NULL;
    rf_status st = rf_tool_compile_sources(names, texts, lens, 2, &to, arena, fe, &qp, hir, d);
    rf_qp_free(qp);
    return st;
}

/* The line of what rf_rt_gpu_prepare did (share: "of this rank's share "). */
static void prepared_line(const rf_rt_gpu_prepared *pr, int verbose, const char *share)
{
    if ((verbose || pr->compiled) && pr->programs)
        fprintf(stderr,
                "GPU code of %s%d quer%s: %d compiled by NVRTC (%.3f s of compiling) on %d threads together in %.3f s, "
                "the rest from the cache; %d cubins in the JIT cache (%.3f s)\n",
                share, (int)pr->programs, pr->programs == 1 ? "y" : "ies", (int)pr->compiled, pr->nvrtc_seconds,
                pr->threads, pr->compile_seconds, (int)pr->jitted, pr->jit_seconds);
}

int rf_tpch_prepare_gpu(const int want[RF_TPCH_NQUERIES + 1], const rf_rt_options *rt, int64_t runs, int verbose,
                        rf_world *world)
{
    if (rt->device == RF_RT_DEVICE_CPU) return 0;
    /* a rank's GPU is chosen before the driver opens on it (the runs keep it) */
    rf_rt_gpu_choose(rf_world_local_rank(world));
    int rc = 0, size = rf_world_size(world), rank = rf_world_rank(world);
    /* --device gpu: the driver at once; auto: after the model's verdict.
    ** (Ranks all meet in the barrier below, whatever each one decided: a
    ** rank that skipped it would pair its next collective with it.) */
    int gpu = rt->device != RF_RT_DEVICE_GPU || rf_rt_gpu_maybe(NULL, 0);
    if (!gpu && size <= 1) return 0;
    rf_arena arena;
    rf_arena_init(&arena);
    const rf_hir_program *ps[RF_TPCH_NQUERIES];
    rf_hir_program *own[RF_TPCH_NQUERIES];
    int32_t n = 0;
    for (int q = 1; q <= RF_TPCH_NQUERIES; q++) {
        if (!want[q]) continue;
        rf_diags d;
        rf_diags_init(&d);
        rf_fe_program *fe = NULL;
        rf_hir_program *hir = NULL;
        /* a query that does not compile says so when it runs */
        if (!rf_tpch_compile_query(q, &arena, &fe, &hir, NULL, &d) && hir) ps[n] = own[n] = hir, n++;
        else rf_hir_free(hir);
        rf_diags_free(&d);
    }
    /* auto: no GPU code compiled (nor the GPU's driver loaded) where the
    ** model predicts the CPU for every query, the GPU's start included */
    int go = gpu && rt->device == RF_RT_DEVICE_GPU;
    if (gpu && !go) {
        rf_diags d;
        rf_diags_init(&d);
        int predicted = rf_rt_place_workload_gpu(ps, n, runs, 1, rt, rt->threads > 0 ? rt->threads : rf_online_cpus(), &d);
        /* no GPU at all (looked for without loading a driver where the CPU
        ** is predicted, as the runs' choice does): said, not a prediction */
        char why[256] = "";
        int none = predicted ? !rf_rt_gpu_maybe(why, sizeof why) : rf_rt_gpu_absent(why, sizeof why);
        go = predicted && !none;
        /* a damaged model, found here and written anew: said here (the
        ** first query's run then finds a sound, empty one and says nothing) */
        if (rank == 0) rf_diags_print(&d, stderr);
        rf_diags_free(&d);
        if (verbose && none)
            fprintf(stderr, "auto: no usable GPU (%s): no GPU code compiled ahead\n", why);
        else if (verbose && !go)
            fprintf(stderr, "auto: the CPU predicted faster for every query, the GPU's start included: no GPU code "
                            "compiled ahead\n");
    }
    rf_rt_gpu_prepared pr;
    memset(&pr, 0, sizeof pr);
    if (size > 1) {
        /* ranks on one host would each compile every query into the cache
        ** they share, on cores they share: each compiles its share first
        ** (NVRTC and the JIT), and the rest then come from the cache (a
        ** rank that compiles nothing leaves its share to the others) */
        if (go) {
            const rf_hir_program *mine[RF_TPCH_NQUERIES];
            int32_t nmine = 0;
            for (int32_t i = rank; i < n; i += size) mine[nmine++] = ps[i];
            rf_rt_gpu_prepare(mine, nmine, rt, &pr);
            prepared_line(&pr, verbose, "this rank's share, ");
            memset(&pr, 0, sizeof pr);
        }
        int64_t limit = rt->tuning ? rt->tuning->rank_timeout_s : 0;
        if (rf_world_barrier(world, limit == INT64_MAX ? 0 : (double)limit) != REDFOX_OK) {
            fprintf(stderr, "redfox: rank %d: %s\n", rank, rf_world_errmsg(world));
            go = 0;
            rc = -1;
        }
    }
    if (go) rf_rt_gpu_prepare(ps, n, rt, &pr);
    prepared_line(&pr, verbose, "");
    for (int32_t i = 0; i < n; i++) rf_hir_free(own[i]);
    rf_arena_free(&arena);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double rf_tpch_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int rf_tpch_compile_program(int q, rf_program **p, const char **qpath, rf_diags *d)
{
    char fname[32];
    snprintf(fname, sizeof fname, "q%02d.logic", q);
    const rf_tpch_source *schema = rf_tpch_find_source("schema.logic"), *query = rf_tpch_find_source(fname);
    if (qpath) *qpath = query ? query->path : fname;
    if (!schema || !query) {
        rf_error(d, rf_mkloc(fname, 0, 0), "%s is not built into this redfox", !schema ? "schema.logic" : fname);
        return REDFOX_INTERNAL;
    }
    const char *names[2] = {schema->path, query->path};
    const char *texts[2] = {schema->text, query->text};
    int64_t lens[2] = {schema->len, query->len};
    return rf_compile_buffers_v2(names, texts, lens, 2, NULL, p);
}

const rf_diagnostic *rf_tpch_local_diag(const void *obj, int64_t i)
{
    static rf_diagnostic g;
    const rf_diag *x = &((const rf_diags *)obj)->items[i];
    g.severity = x->sev == RF_SEV_ERROR ? REDFOX_SEV_ERROR : x->sev == RF_SEV_WARNING ? REDFOX_SEV_WARNING : REDFOX_SEV_NOTE;
    g.file = x->loc.file ? x->loc.file : "";
    g.line = x->loc.line;
    g.column = x->loc.col;
    g.message = x->msg;
    return &g;
}

void rf_tpch_print_notes(const rf_program *p, const rf_database *db, int *noted)
{
    rf_diags keep;
    rf_diags_init(&keep);
    int64_t np = rf_program_diag_count(p), n = np + rf_database_diag_count(db);
    for (int64_t i = 0; i < n; i++) {
        const rf_diagnostic *g = i < np ? rf_program_diag(p, i) : rf_database_diag(db, i - np);
        if (g->severity == REDFOX_SEV_NOTE && *noted) continue;
        rf_severity sev = g->severity == REDFOX_SEV_ERROR     ? RF_SEV_ERROR
                          : g->severity == REDFOX_SEV_WARNING ? RF_SEV_WARNING
                                                              : RF_SEV_NOTE;
        rf_diag_add(&keep, sev, rf_mkloc(g->file[0] ? g->file : NULL, g->line, g->column), "%s", g->message);
    }
    *noted = 1;
    rf_diags_print(&keep, stderr);
    rf_diags_free(&keep);
}

int rf_tpch_restore_missing(const char *dir)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_status st = rf_db_restore_missing(dir, &d);
    int rc = st || d.count ? rf_tool_finish(st, &d) : 0;
    rf_diags_free(&d);
    return rc;
}

int rf_tpch_lock_data(const char *data, int *fd)
{
    *fd = -1;
    rf_diags d;
    rf_diags_init(&d);
    int waited = 0;
    rf_status st = rf_db_is_database(data) ? rf_file_lock_folder_shared(data, fd, &waited, &d)
                                           : rf_file_lock_text_folder_shared(data, fd, &waited, &d);
    int rc = st || d.count ? rf_tool_finish(st, &d) : 0; /* (a note: rf_file.h's journal finished) */
    rf_diags_free(&d);
    return rc;
}
