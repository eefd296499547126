/*
** runtime/rt_place_run.c: learned placement for one run (rf_rt_place.h),
** for the driver (rt_run.c): a program's features, the choice before the
** run, the records the run leaves in the model file.
**
** Owns: the program's hash (its variables and kernels: the same program
** from a .logic or its .rfx hashes alike), the estimate of its inputs' rows
** and bytes before reading them (a database's manifest: the rows and the
** bytes of the columns the program reads; text files: their size, a row
** taken as 8 bytes a column), the workload a choice weighs (this program's
** runs and the later programs' gain on a started GPU, their copies only of
** the columns not read before where inputs are kept), this host's name and
** GPU kind as host records hold them, and the records of a finished run.
*/
#include "rf_rt_place.h"
#include "rf_rt_hold.h"

#include "rf_db.h"
#include "rf_gpu_codegen.h"
#include "rf_rt_input.h"
#include "rf_runtime.h"
#include "rf_sys.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) { return fnv(h, s ? s : "", s ? strlen(s) + 1 : 1); }

static uint64_t fnv_i64(uint64_t h, int64_t v) { return fnv(h, &v, sizeof v); }

uint64_t rf_rt_place_prog_hash(const rf_hir_program *p)
{
    uint64_t h = 1469598103934665603ULL;
    for (int32_t v = 0; v < p->nvars; v++) {
        const rf_hir_var *x = p->vars[v];
        h = fnv_str(h, x->name);
        h = fnv_i64(h, x->role);
        h = fnv_i64(h, x->ncols);
        for (int32_t c = 0; c < x->ncols; c++) h = fnv_i64(h, x->types[c]);
        h = fnv_str(h, x->input_file);
        h = fnv_str(h, x->output_name);
    }
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            h = fnv_i64(h, k->kind);
            h = fnv_i64(h, k->out);
            for (int32_t i = 0; i < k->nin; i++) h = fnv_i64(h, k->in[i]);
        }
    return h;
}

/* The columns counted so far (a hash of the input's file and the column's
** number): of programs over kept inputs, a column read by an earlier one is
** on the GPU already and not copied again. */
typedef struct seen_cols {
    uint64_t *h;
    int64_t n, cap;
} seen_cols;

/* 1 when column (file, c) was counted before; else counts it now (and 0). */
static int seen_before(seen_cols *s, const char *file, int32_t c)
{
    if (!s) return 0;
    uint64_t h = fnv_i64(fnv_str(1469598103934665603ULL, file), c);
    for (int64_t i = 0; i < s->n; i++)
        if (s->h[i] == h) return 1;
    if (s->n == s->cap) {
        int64_t nc = s->cap ? s->cap * 2 : 64;
        uint64_t *nh = rf_realloc(s->h, (size_t)nc * sizeof *nh);
        if (!nh) return 0; /* counted again: a copy too many in the estimate */
        s->h = nh;
        s->cap = nc;
    }
    s->h[s->n++] = h;
    return 0;
}

/* The rows of input x that cache holds in memory where no file or table
** stands for it (a transaction's states in `redfox exec`, a library
** caller's rows): their count, the bytes of the columns read; 0 when none.
** Without it such a program was estimated at no rows at all, its every
** run predicted at 0 s on the CPU whatever the model had measured. */
static double rows_in_memory(const rf_hir_var *x, const char *dir, const rf_rt_cache *cache, const uint8_t *read,
                             seen_cols *seen, double *bytes)
{
    char *path = cache ? rf_sprintf("%s/%s", dir, x->input_file) : NULL;
    int64_t n = path ? rf_rt_cache_input_rows(cache, path, x) : -1;
    free(path);
    if (n <= 0) return 0;
    for (int32_t c = 0; c < x->ncols; c++)
        if (read[c] && !seen_before(seen, x->input_file, c)) *bytes += (double)n * rf_rt_type_width(x->types[c]);
    return (double)n;
}

/* rf_rt_place_inputs with the database open already (db: NULL for text
** files) and the columns seen (NULL: none): rows count every input, bytes
** the columns not seen; an input neither file nor table, from cache's
** memory (NULL: none). */
static void inputs_of(const rf_hir_program *p, const char *dir, rf_db *db, const rf_rt_cache *cache, seen_cols *seen,
                      double *rows, double *bytes)
{
    *rows = *bytes = 0;
    for (int32_t v = 0; v < p->nvars; v++) {
        const rf_hir_var *x = p->vars[v];
        if (x->role != RF_HIR_ROLE_INPUT || !x->input_file) continue;
        uint8_t *read = rf_malloc((size_t)x->ncols + 1);
        if (!read) continue;
        rf_rt_input_cols_read(p, v, read);
        const rf_db_table *t = db ? rf_db_find_table(db, x->input_file) : NULL;
        if (t) {
            *rows += (double)t->nrows;
            for (int32_t c = 0; c < t->ncols && c < x->ncols; c++)
                if (read[c] && !seen_before(seen, x->input_file, c)) *bytes += (double)t->cols[c].size;
        } else if (!db) {
            char *path = rf_sprintf("%s/%s", dir, x->input_file);
            struct stat sb;
            if (path && stat(path, &sb) == 0) {
                double n = (double)sb.st_size / (8.0 * (x->ncols > 0 ? x->ncols : 1));
                *rows += n;
                for (int32_t c = 0; c < x->ncols; c++)
                    if (read[c] && !seen_before(seen, x->input_file, c)) *bytes += n * rf_rt_type_width(x->types[c]);
            } else {
                *rows += rows_in_memory(x, dir, cache, read, seen, bytes);
            }
            free(path);
        } else {
            *rows += rows_in_memory(x, dir, cache, read, seen, bytes);
        }
        free(read);
    }
}

static rf_db *open_db(const char *dir)
{
    rf_db *db = NULL;
    if (rf_db_is_database(dir)) {
        rf_diags d;
        rf_diags_init(&d);
        if (rf_db_open(dir, &db, &d)) db = NULL; /* the run says what is wrong */
        rf_diags_free(&d);
    }
    return db;
}

void rf_rt_place_inputs(const rf_hir_program *p, const char *data_dir, const rf_rt_cache *cache, double *rows,
                        double *bytes)
{
    const char *dir = data_dir ? data_dir : ".";
    rf_db *db = open_db(dir);
    inputs_of(p, dir, db, cache, NULL, rows, bytes);
    if (db) rf_db_close(db);
}

/* q's program-dependent part for p: its hash and kernels' kinds (kinds:
** room for every kernel; NULL when short of memory: no kernels). */
static const char **query_of(const rf_hir_program *p, rf_rt_place_query *q)
{
    int32_t nk = 0;
    for (int32_t b = 0; b < p->nblocks; b++) nk += p->blocks[b]->nkernels;
    const char **kinds = rf_calloc((size_t)nk + 1, sizeof *kinds);
    q->prog = rf_rt_place_prog_hash(p);
    q->nkernels = 0;
    for (int32_t b = 0; kinds && b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            kinds[q->nkernels++] = rf_hir_kind_name(p->blocks[b]->kernels[j]->kind);
    q->kinds = kinds;
    return kinds;
}

int rf_rt_place_driver_loaded(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    dlclose(h); /* the reference NOLOAD took */
    return 1;
}

void rf_rt_place_host(char out[64])
{
    char name[256] = "";
    if (gethostname(name, sizeof name - 1) != 0 || !name[0]) snprintf(name, sizeof name, "?");
    int n = 0;
    for (const char *c = name; *c && n < 63; c++) out[n++] = (*c == ' ' || *c == '\t' || *c == '\n') ? '_' : *c;
    out[n] = 0;
}

void rf_rt_place_gpu_kind(const char *why, char out[24])
{
    int n = 0;
    for (const char *c = why ? why : ""; *c && n < 23 && strncmp(c, " (", 2); c++)
        out[n++] = (*c == ' ' || *c == '\t' || *c == '\n') ? '_' : *c;
    if (!n) out[n++] = '-';
    out[n] = 0;
}

/* The model's last host record of host: its gpu (1, 0) and kind; -1 none. */
static int host_known(const rf_rt_place_model *m, const char *host, char kind[24])
{
    for (int64_t i = m->n - 1; i >= 0; i--)
        if (m->recs[i].type == 'h' && !strcmp(m->recs[i].host, host)) {
            memcpy(kind, m->recs[i].kind, 24);
            return m->recs[i].gpu;
        }
    kind[0] = 0;
    return -1;
}

/* The model at path into m; a damaged file (a warning in d) is written
** anew at once, so that this run's records start it again. */
static void read_model(const char *path, rf_rt_place_model *m, rf_diags *d)
{
    memset(m, 0, sizeof *m);
    if (!path) return;
    int64_t warned = d->count;
    if (rf_rt_place_load(path, m, d)) rf_rt_place_model_free(m);
    else if (d->count > warned && rf_rt_place_reset(path) == RF_EIO) rf_rt_place_unwritable(path, d);
}

void rf_rt_place_choose(const rf_hir_program *p, const rf_rt_options *o, int threads, int gpu_started,
                        rf_rt_place_choice *out, rf_diags *d)
{
    double t0 = rf_now();
    rf_rt_place_model m = {NULL, 0, 0};
    const rf_rt_tuning *tu = o->tuning ? o->tuning : rf_rt_tuning_default();
    char *path = rf_rt_place_path(tu->cache_dir);
    read_model(path, &m, d);
    free(path);
    double t1 = rf_now();
    const char *dir = o->data_dir ? o->data_dir : ".";
    rf_db *db = open_db(dir);
    seen_cols seen = {NULL, 0, 0};
    seen_cols *sp = o->cache ? &seen : NULL; /* kept inputs: each column copied once */
    rf_rt_place_query q;
    memset(&q, 0, sizeof q);
    q.threads = threads;
    q.kept = o->cache != NULL;
    /* the later programs' gain on a started GPU: their share of its start
    ** (only while it is not started: a started GPU costs them nothing) */
    double later = 0;
    double rows, bytes;
    inputs_of(p, dir, db, o->cache, sp, &rows, &bytes);
    for (int32_t i = 0; i < o->nlater && !gpu_started; i++) {
        if (!o->later || !o->later[i]) continue;
        const char **kinds = query_of(o->later[i], &q);
        inputs_of(o->later[i], dir, db, o->cache, sp, &q.rows, &q.bytes);
        q.runs = o->later_runs;
        later += rf_rt_place_gain(&m, &q);
        free(kinds);
    }
    const char **kinds = query_of(p, &q);
    q.rows = rows;
    q.bytes = bytes;
    q.runs = o->runs;
    q.gpu_started = gpu_started;
    q.gpu_held = !gpu_started && rf_rt_hold_present();
    q.later_gain_s = later;
    double t2 = rf_now();
    rf_rt_place_predict(&m, &q, out);
    char host[64];
    rf_rt_place_host(host);
    out->host_gpu = host_known(&m, host, out->host_kind);
    out->gpu_started = gpu_started;
    free(kinds);
    free(seen.h);
    if (db) rf_db_close(db);
    rf_rt_place_model_free(&m);
    double t3 = rf_now();
    out->model_s = t1 - t0;
    out->inputs_s = t2 - t1;
    out->predict_s = t3 - t2;
    out->choose_s = t3 - t0;
}

int rf_rt_place_workload_gpu(const rf_hir_program *const *ps, int32_t n, int64_t runs, int kept,
                             const rf_rt_options *o, int threads, rf_diags *d)
{
    rf_rt_place_model m = {NULL, 0, 0};
    const rf_rt_tuning *tu = o->tuning ? o->tuning : rf_rt_tuning_default();
    char *path = rf_rt_place_path(tu->cache_dir);
    read_model(path, &m, d);
    free(path);
    const char *dir = o->data_dir ? o->data_dir : ".";
    rf_db *db = open_db(dir);
    seen_cols seen = {NULL, 0, 0};
    rf_rt_place_query q;
    memset(&q, 0, sizeof q);
    q.threads = threads;
    q.kept = kept;
    q.runs = runs;
    q.gpu_held = rf_rt_hold_present();
    double gain = 0, start = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!ps[i]) continue;
        const char **kinds = query_of(ps[i], &q);
        inputs_of(ps[i], dir, db, o->cache, kept ? &seen : NULL, &q.rows, &q.bytes);
        gain += rf_rt_place_gain(&m, &q);
        if (i == 0) { /* the start of a fresh process, as the model knows it */
            rf_rt_place_choice ch;
            rf_rt_place_predict(&m, &q, &ch);
            start = ch.gpu_start_s;
        }
        free(kinds);
    }
    free(seen.h);
    if (db) rf_db_close(db);
    rf_rt_place_model_free(&m);
    return gain > start;
}

void rf_rt_place_record(const rf_hir_program *p, const rf_rt_options *o, rf_rt_result *res, rf_diags *d)
{
    const rf_rt_tuning *tu = o->tuning ? o->tuning : rf_rt_tuning_default();
    char *path = rf_rt_place_path(tu->cache_dir);
    res->place_unkept[0] = 0;
    if (!path && !tu->cache_dir) /* the user's cache folder, but none: --profile says so (--no-cache: none asked for) */
        snprintf(res->place_unkept, sizeof res->place_unkept,
                 "no cache folder: $HOME is not set, nor $XDG_CACHE_HOME to an absolute path (--cache-dir DIR "
                 "names one)");
    if (!path || !res->device) {
        free(path);
        return;
    }
    int gpu = !strcmp(res->device, "gpu");
    rf_rt_place_rec *recs = rf_calloc((size_t)res->nstats + 2, sizeof *recs);
    int64_t n = 0;
    if (recs) {
        rf_rt_place_rec *r = &recs[n++];
        r->type = 'r';
        r->gpu = gpu;
        r->prog = rf_rt_place_prog_hash(p);
        r->fresh = !gpu || !res->gpu_fresh ? 0 : res->gpu_held ? 2 : 1;
        /* the features as a choice sees them before a run (the estimate,
        ** not the rows read after block skipping), so that this program's
        ** records predict its next run; inputs from memory: what was read */
        rf_rt_place_inputs(p, o->data_dir, o->cache, &r->rows, &r->bytes);
        if (r->rows <= 0) {
            r->rows = res->input_rows;
            r->bytes = res->input_bytes;
        }
        for (int32_t b = 0; b < p->nblocks; b++) r->kernels += p->blocks[b]->nkernels;
        /* the reading, where this run did it all (no inputs kept from an
        ** earlier run of the process: those are not read again) */
        r->read_s = o->cache ? -1 : res->read_seconds;
        r->start_s = !gpu ? 0 : res->start_aside ? res->start_wait_seconds : res->device_seconds + res->program_seconds;
        r->copy_s = gpu ? res->copy_seconds : 0;
        r->seconds = res->run_seconds + res->output_seconds;
        for (int32_t i = 0; i < res->nstats; i++) {
            const rf_rt_kstat *s = &res->stats[i];
            if (!s->calls || s->rows_in < 0 || !s->what) continue;
            rf_rt_place_rec *k = &recs[n++];
            k->type = 'k';
            k->gpu = gpu;
            snprintf(k->kind, sizeof k->kind, "%s", s->what);
            k->rows = (double)s->rows_in;
            k->bytes = (double)s->bytes_in;
            k->seconds = s->seconds;
        }
        /* what the run found of the GPU, where the model says otherwise */
        if (res->host_gpu_found >= 0) {
            rf_rt_place_rec *h = &recs[n];
            memset(h, 0, sizeof *h);
            h->type = 'h';
            h->gpu = res->host_gpu_found;
            rf_rt_place_host(h->host);
            snprintf(h->kind, sizeof h->kind, "%s", res->host_gpu_found && res->host_gpu_kind[0] ? res->host_gpu_kind : "-");
            char kind[24];
            int known = res->place_auto ? res->place_host_gpu : -1;
            if (!res->place_auto) { /* not read for a choice: read now */
                rf_rt_place_model m;
                rf_diags quiet;
                rf_diags_init(&quiet);
                if (!rf_rt_place_load(path, &m, &quiet)) known = host_known(&m, h->host, kind);
                rf_rt_place_model_free(&m);
                rf_diags_free(&quiet);
            }
            if (known != h->gpu) n++;
        }
        /* a model that cannot be written: auto learns nothing, which
        ** --profile says (not a warning: a read-only cache is the user's
        ** choice, and would be one on every run) */
        if (rf_rt_place_append(path, recs, n, d) == RF_EIO)
            snprintf(res->place_unkept, sizeof res->place_unkept, "%s: %s", path, strerror(errno));
    }
    free(recs);
    free(path);
}
