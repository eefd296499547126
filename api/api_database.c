/*
** api/api_database.c: the source of a run's inputs (a data folder or a
** redfox database, and relations given in memory) and the run itself.
**
** Owns: rf_database (rf_open, rf_close, rf_errmsg, rf_database_*), the
** relations given in memory as rows (rf_database_put_rows), and rf_run:
** the run options, and handing the memory relations to the runtime through
** a cache of one run (rf_rt_cache_put), so that both devices read them as
** they read a file; or, with rf_database_keep_inputs, through the cache the
** database keeps between runs; progress reports and timelines relayed to
** the caller; a database's shared lock for the length of a run.
*/
#include "api_internal.h"
#include "rf_db.h"
#include "rf_file.h"
#include "rf_txn.h"
#include "rf_rt_trace.h"
#include "rf_rt_data.h"
#include "rf_sys.h"
#include "rf_value.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int rf_open(const char *path, rf_database **out)
{
    if (!out) return REDFOX_MISUSE;
    rf_database *db = *out = rf_calloc(1, sizeof *db);
    if (!db) return REDFOX_NOMEM;
    if (!(db->dir = rf_strdup(path ? path : "."))) return REDFOX_NOMEM;
    if (!*db->dir) { /* (it said ": cannot open the data folder: No such file or directory") */
        api_diags_error(&db->diags, "rf_open: an empty path (NULL: the current folder)");
        return REDFOX_MISUSE;
    }
    /* a database that a writer killed mid-commit left aside (DIR.old.PID.N,
    ** where the system has no exchange): put back first, its note kept in
    ** the database's diagnostics (rf_database_diag) */
    rf_diags rd;
    rf_diags_init(&rd);
    rf_status rst = rf_db_restore_missing(db->dir, &rd);
    rf_status sst = rd.count ? api_diags_set(&db->diags, &rd) : RF_OK;
    rf_diags_free(&rd);
    if (rst || sst) return rst == RF_ENOMEM || sst ? REDFOX_NOMEM : REDFOX_IO;
    struct stat sb;
    if (stat(db->dir, &sb) != 0) {
        api_diags_error(&db->diags, "%s: cannot open the data folder: %s", db->dir, strerror(errno));
        return REDFOX_IO;
    }
    if (!S_ISDIR(sb.st_mode)) {
        api_diags_error(&db->diags, "%s: not a folder (a data folder or a redfox database)", db->dir);
        return REDFOX_ERROR;
    }
    return REDFOX_OK;
}

void api_table_free(api_table *t)
{
    for (int32_t c = 0; t->cols && c < t->ncols; c++) {
        if (t->cols[c].owned_data) free(t->cols[c].data);
        if (t->cols[c].owned_bytes) free((char *)t->cols[c].bytes);
        free(t->cols[c].off);
    }
    free(t->cols);
    free(t->name);
    if (t->arrow.release) t->arrow.release(&t->arrow);
    memset(t, 0, sizeof *t);
}

/* The kept inputs borrow the relations' columns, and hold the database's
** files as they were read: forgotten before any change to either. */
void api_forget_kept(rf_database *db)
{
    rf_rt_cache_free(db->kept);
    db->kept = NULL;
}

int rf_database_keep_inputs(rf_database *db, int on)
{
    if (!db) return REDFOX_MISUSE;
    api_diags_clear(&db->diags);
    db->keep_inputs = on != 0;
    if (!on) api_forget_kept(db);
    return REDFOX_OK;
}

int rf_database_forget_device(rf_database *db)
{
    if (!db) return REDFOX_MISUSE;
    api_diags_clear(&db->diags);
    rf_rt_cache_forget_device(db->kept);
    return REDFOX_OK;
}

void rf_close(rf_database *db)
{
    if (!db) return;
    api_forget_kept(db);
    rf_txn_resident_free(db->resident);
    for (int32_t i = 0; i < db->ntables; i++) api_table_free(&db->tables[i]);
    free(db->tables);
    api_diags_clear(&db->diags);
    free(db->dir);
    free(db->exec_dir);
    free(db);
}

const char *rf_errmsg(const rf_database *db) { return db ? api_diags_errmsg(&db->diags) : "no database"; }

int64_t rf_database_diag_count(const rf_database *db) { return db ? db->diags.n : 0; }

const rf_diagnostic *rf_database_diag(const rf_database *db, int64_t i)
{
    return db && i >= 0 && i < db->diags.n ? &db->diags.items[i] : NULL;
}

static api_table *find_table(rf_database *db, const char *name)
{
    for (int32_t i = 0; i < db->ntables; i++)
        if (!strcmp(db->tables[i].name, name)) return &db->tables[i];
    return NULL;
}

rf_status api_database_add(rf_database *db, api_table *t)
{
    api_forget_kept(db);
    api_table *old = find_table(db, t->name);
    if (old) {
        api_table_free(old);
        *old = *t;
        memset(t, 0, sizeof *t);
        return RF_OK;
    }
    if (db->ntables == db->cap) {
        int32_t ncap = db->cap ? db->cap * 2 : 8;
        api_table *n = rf_realloc(db->tables, (size_t)ncap * sizeof *n);
        if (!n) return RF_ENOMEM;
        db->tables = n;
        db->cap = ncap;
    }
    db->tables[db->ntables++] = *t;
    memset(t, 0, sizeof *t);
    return RF_OK;
}

int rf_database_drop(rf_database *db, const char *name)
{
    if (!db) return REDFOX_MISUSE;
    api_diags_clear(&db->diags); /* (before any return: rf_errmsg is this call's) */
    if (!name) {
        api_diags_error(&db->diags, "rf_database_drop: no name");
        return REDFOX_MISUSE;
    }
    api_table *t = find_table(db, name);
    if (!t) {
        api_diags_error(&db->diags, "no relation named '%s' was given", name);
        return REDFOX_NOTFOUND;
    }
    api_forget_kept(db);
    api_table_free(t);
    *t = db->tables[--db->ntables];
    return REDFOX_OK;
}

/* Strings (NUL-terminated) into offsets and bytes, checked to be UTF-8:
** a NULL pointer is a bad argument, a string not UTF-8 bad data; rows
** counted from 1, as everywhere. */
static int put_strings(rf_database *db, const char *name, api_column *col, const char *const *s, int64_t n,
                       int32_t c)
{
    col->off = rf_malloc((size_t)(n + 1) * sizeof *col->off);
    if (!col->off) return REDFOX_NOMEM;
    col->off[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!s[i]) {
            api_diags_error(&db->diags, "%s: column %d, row %lld: a NULL string", name, (int)c + 1, (long long)i + 1);
            return REDFOX_MISUSE;
        }
        int64_t len = (int64_t)strlen(s[i]);
        rf_val_err e;
        if (rf_val_check_utf8(s[i], len, &e)) {
            api_diags_error(&db->diags, "%s: column %d, row %lld: not valid UTF-8", name, (int)c + 1, (long long)i + 1);
            return REDFOX_ERROR;
        }
        col->off[i + 1] = col->off[i] + len;
    }
    char *bytes = rf_malloc((size_t)col->off[n] + 1);
    if (!bytes) return REDFOX_NOMEM;
    for (int64_t i = 0; i < n; i++) memcpy(bytes + col->off[i], s[i], (size_t)(col->off[i + 1] - col->off[i]));
    col->bytes = bytes;
    col->owned_bytes = 1;
    return REDFOX_OK;
}

int rf_database_put_rows(rf_database *db, const char *name, int32_t ncols, const int *types, int64_t nrows,
                         const void *const *columns)
{
    if (!db) return REDFOX_MISUSE;
    api_diags_clear(&db->diags);
    if (!name || !*name || ncols <= 0 || !types || nrows < 0 || (nrows > 0 && !columns)) {
        api_diags_error(&db->diags, "rf_database_put_rows: %s",
                        !name || !*name ? "no name" : ncols <= 0 || !types ? "no columns or no types"
                                                    : nrows < 0 ? "a negative count of rows" : "no columns' values");
        return REDFOX_MISUSE;
    }
    api_table t;
    memset(&t, 0, sizeof t);
    t.ncols = ncols;
    t.nrows = nrows;
    t.name = rf_strdup(name);
    t.cols = rf_calloc((size_t)ncols, sizeof *t.cols);
    int rc = t.name && t.cols ? REDFOX_OK : REDFOX_NOMEM;
    for (int32_t c = 0; c < ncols && !rc; c++) {
        rf_type it;
        api_column *col = &t.cols[c];
        col->type = types[c];
        const char *why = api_type_input(types[c], &it);
        if (why) {
            api_diags_error(&db->diags, "%s: column %d: %s (%d)", name, (int)c + 1, why, types[c]);
            rc = REDFOX_MISUSE;
        } else if (nrows && !columns[c]) {
            api_diags_error(&db->diags, "%s: column %d: no values", name, (int)c + 1);
            rc = REDFOX_MISUSE;
        } else if (it == RF_TYPE_STRING) {
            rc = put_strings(db, name, col, nrows ? columns[c] : NULL, nrows, c);
        } else {
            size_t bytes = (size_t)nrows * (size_t)rf_rt_type_width(it);
            int64_t bad = nrows ? api_check_values(types[c], columns[c], nrows) : 0;
            if (bad) {
                api_diags_error(&db->diags, "%s: column %d, row %lld: not a valid %s", name, (int)c + 1,
                                (long long)bad, rf_val_type_name(it));
                rc = REDFOX_ERROR;
            } else if (!(col->data = rf_malloc(bytes + 1))) {
                rc = REDFOX_NOMEM;
            } else {
                col->owned_data = 1;
                if (bytes) memcpy(col->data, columns[c], bytes);
                if (it == RF_TYPE_FLOAT) api_float_canon(col->data, nrows); /* -0.0 is 0.0 */
            }
        }
    }
    if (!rc && api_database_add(db, &t)) rc = REDFOX_NOMEM;
    if (rc == REDFOX_NOMEM && !db->diags.n) api_diags_error(&db->diags, "out of memory");
    api_table_free(&t);
    return rc;
}

/* ---- runs ------------------------------------------------------------- */

void rf_run_options_init_v2(rf_run_options *o, size_t size)
{
    if (!o || size < offsetof(rf_run_options, threads)) return;
    rf_run_options d;
    memset(&d, 0, sizeof d);
    d.device = REDFOX_DEVICE_AUTO;
    d.decimal128 = 1;
    d.size = size < sizeof d ? size : sizeof d;
    memcpy(o, &d, d.size);
}

/* Level 1's struct ended with trace_file: a caller compiled then allocated no more. */
void rf_run_options_init(rf_run_options *o)
{
    rf_run_options_init_v2(o, offsetof(rf_run_options, trace_file) + sizeof o->trace_file);
}

/* The table standing for input v (by predicate name, then file name), or
** NULL; *for_pred: 1 when it was given under the predicate's name, so that
** it stands for this predicate only, not for the other readers of its file.
** (The predicate's own rows come first: rows given for its file as well
** stand for the file's other readers.) */
static api_table *table_for(rf_database *db, const rf_hir_var *v, int *for_pred)
{
    api_table *t = v->name ? find_table(db, v->name) : NULL;
    if (!t && v->pred_name) t = find_table(db, v->pred_name);
    *for_pred = t != NULL;
    if (!t && v->input_file) t = find_table(db, v->input_file);
    return t;
}

/* Table t as input v's relation in cache c: its columns borrowed, strings
** coded in the cache's dictionary; for_pred: given under v's predicate's
** name, it stands for the file to that predicate's input alone. */
static rf_status put_input(rf_database *db, api_table *t, const rf_hir_var *v, int for_pred, rf_rt_cache *c,
                           int threads, rf_diags *d)
{
    if (t->ncols != v->ncols) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "the relation given for '%s' has %d columns; the program's %s has %d",
                 t->name, (int)t->ncols, v->name, (int)v->ncols);
        return RF_EUSER;
    }
    for (int32_t k = 0; k < v->ncols; k++) {
        rf_type it;
        api_type_internal(t->cols[k].type, &it);
        if (it != v->types[k]) {
            rf_error(d, rf_mkloc(NULL, 0, 0), "the relation given for '%s': column %d is %s; the program's %s says %s",
                     t->name, (int)k + 1, rf_val_type_name(it), v->name, rf_val_type_name(v->types[k]));
            return RF_EUSER;
        }
    }
    char *path = rf_sprintf("%s/%s", db->dir, v->input_file);
    if (!path) return RF_ENOMEM;
    const char *reader = for_pred ? t->name : NULL;
    if (rf_rt_cache_holds_put(c, path, reader, v)) { /* kept from an earlier run */
        free(path);
        return RF_OK;
    }
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    r.nrows = t->nrows;
    r.ncols = v->ncols;
    r.types = v->types;
    uint8_t *foreign = rf_calloc((size_t)v->ncols + 1, 1);
    r.cols = rf_calloc((size_t)v->ncols + 1, sizeof *r.cols);
    rf_status st = foreign && r.cols ? RF_OK : RF_ENOMEM;
    for (int32_t k = 0; k < v->ncols && !st && t->nrows; k++) {
        if (v->types[k] != RF_TYPE_STRING) {
            r.cols[k] = t->cols[k].data;
            foreign[k] = 1;
            continue;
        }
        uint32_t *codes = rf_rt_alloc_big((size_t)t->nrows * sizeof *codes);
        if (!codes) {
            st = RF_ENOMEM;
            break;
        }
        r.cols[k] = codes;
        st = rf_rt_dict_intern_many(rf_rt_cache_dict(c), t->cols[k].off, t->cols[k].bytes, t->nrows, codes, threads);
    }
    char *where = st ? NULL : rf_sprintf("<rows given for %s>", t->name);
    if (!st && !where) st = RF_ENOMEM;
    if (!st) st = rf_rt_cache_put(c, path, reader, where, v, &r, foreign);
    free(where);
    free(path);
    if (st) {
        for (int32_t k = 0; r.cols && k < v->ncols; k++)
            if (!foreign || !foreign[k]) free(r.cols[k]);
        free(r.cols);
    }
    free(foreign);
    return st;
}

/* The settings "NAME=VALUE,NAME=VALUE" into t. A path setting (cache_dir)
** points into the copy the settings are cut from, so that copy is the
** caller's (*keep) to free after the run, not before. */
rf_status api_apply_settings(const char *s, rf_rt_tuning *t, char **keep, rf_diags *d)
{
    *keep = NULL;
    if (!s || !*s) return RF_OK;
    char *copy = *keep = rf_strdup(s);
    if (!copy) return RF_ENOMEM;
    for (char *one = copy; one;) {
        char *end = strchr(one, ',');
        if (end) *end = 0;
        char why[200];
        rf_status st = *one ? rf_rt_tuning_set(t, one, why, sizeof why) : RF_OK;
        if (st) {
            rf_error(d, rf_mkloc(NULL, 0, 0), "settings: %s", why);
            return RF_EUSAGE;
        }
        one = end ? end + 1 : NULL;
    }
    return RF_OK;
}

/* The run's events to the trace_file's log and the caller's rf_trace, each where set. */
typedef struct trace_pair {
    rf_rt_trace_log *file, *caller;
} trace_pair;

static void trace_both(void *ctx, const char *cat, const char *name, double t0, double t1, int64_t n)
{
    const trace_pair *p = ctx;
    if (p->file) rf_rt_trace_log_event(p->file, cat, name, t0, t1, n);
    if (p->caller) rf_rt_trace_log_event(p->caller, cat, name, t0, t1, n);
}

/* A result of a run on the kept inputs borrows their dictionary: it gets one
** of its own holding only the strings its outputs hold (recoded: equal
** strings keep equal codes), so that it outlives the database and costs
** its outputs' size, not the inputs' (every string of a kept TPC-H table). */
static rf_status own_dict(rf_rt_result *rr)
{
    if (!rr->dict_borrowed) return RF_OK;
    rf_rt_dict *own = rf_rt_dict_new();
    if (!own) return RF_ENOMEM;
    for (int32_t i = 0; i < rr->noutputs; i++) {
        rf_rt_rel *rel = &rr->outputs[i].rel;
        for (int32_t c = 0; c < rel->ncols; c++) {
            if (rel->types[c] != RF_TYPE_STRING || !rel->cols || !rel->cols[c]) continue;
            uint32_t *codes = rel->cols[c];
            for (int64_t r = 0; r < rel->nrows; r++) {
                int64_t len = 0;
                const char *str = rf_rt_dict_str(rr->dict, codes[r], &len);
                rf_status st = str ? rf_rt_dict_intern(own, str, len, &codes[r]) : RF_EINTERNAL;
                if (st) {
                    /* the columns are half recoded: the result is not handed out */
                    rf_rt_dict_free(own);
                    return st;
                }
            }
        }
    }
    rr->dict = own;
    rr->dict_borrowed = 0;
    return RF_OK;
}

/* The runtime's progress reports as the public record, to the caller's callback. */
typedef struct progress_relay {
    rf_progress_fn fn;
    void *user;
} progress_relay;

static void relay_fixpoint(void *ctx, const rf_rt_progress *p)
{
    const progress_relay *r = ctx;
    rf_progress g;
    memset(&g, 0, sizeof g);
    g.size = sizeof g;
    g.kind = REDFOX_PROGRESS_FIXPOINT;
    g.done = p->done;
    g.seconds = p->seconds;
    g.round = p->round;
    g.npreds = p->n;
    g.more = p->more;
    g.preds = p->names;
    g.rows = p->rows;
    r->fn(r->user, &g);
}

static void relay_load(void *ctx, const rf_rt_load_progress *p)
{
    const progress_relay *r = ctx;
    rf_progress g;
    memset(&g, 0, sizeof g);
    g.size = sizeof g;
    g.kind = REDFOX_PROGRESS_LOAD;
    g.done = p->done_all;
    g.seconds = p->seconds;
    g.input = p->pred;
    g.path = p->path;
    g.phase = p->phase;
    g.bytes_done = p->done;
    g.bytes_total = p->total;
    r->fn(r->user, &g);
}

int rf_run(rf_database *db, const rf_program *prog, const rf_run_options *opt, rf_result **out)
{
    if (out) *out = NULL;
    if (!db) return REDFOX_MISUSE;
    api_diags_clear(&db->diags);
    if (!prog || !out) {
        api_diags_error(&db->diags, "rf_run: %s", !prog ? "no program" : "no place for the result");
        return REDFOX_MISUSE;
    }
    if (!prog->hir && prog->stage != REDFOX_STAGE_ALL) {
        api_diags_error(&db->diags, "rf_run: the program was compiled with stop_after (for rf_program_dump only)");
        return REDFOX_MISUSE;
    }
    if (!prog->hir) {
        api_diags_error(&db->diags, "rf_run: the program did not compile: %s", rf_program_errmsg(prog));
        return REDFOX_MISUSE;
    }
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    if (opt && opt->size < offsetof(rf_run_options, threads)) {
        api_diags_error(&db->diags, "rf_run: the options were not set up with rf_run_options_init");
        return REDFOX_MISUSE;
    }
    if (opt) memcpy(&o, opt, opt->size < sizeof o ? opt->size : sizeof o);
    /* a caller older than level 5 reads totals of decimals as decimals */
    if (opt && opt->size < offsetof(rf_run_options, decimal128) + sizeof o.decimal128) o.decimal128 = 0;
    o.size = sizeof o;
    if (o.device != REDFOX_DEVICE_AUTO && o.device != REDFOX_DEVICE_CPU && o.device != REDFOX_DEVICE_GPU) {
        api_diags_error(&db->diags, "rf_run: unknown device %d", o.device);
        return REDFOX_MISUSE;
    }
    if (o.threads > API_MAX_THREADS) {
        api_diags_error(&db->diags, "rf_run: threads %d: at most %d (<= 0: one per core)", o.threads, API_MAX_THREADS);
        return REDFOX_MISUSE;
    }
    if (o.trace_file && !*o.trace_file) {
        api_diags_error(&db->diags, "rf_run: trace_file is empty (a file's name, or NULL for no trace file)");
        return REDFOX_MISUSE;
    }
    if (o.world && o.world->failed) {
        api_diags_error(&db->diags, "rf_run: the world did not start or is broken: %s", rf_world_errmsg(o.world));
        return REDFOX_MISUSE;
    }
    rf_diags d;
    rf_diags_init(&d);
    rf_rt_tuning tune;
    rf_rt_tuning_init(&tune);
    rf_rt_options ro;
    memset(&ro, 0, sizeof ro);
    ro.data_dir = db->dir;
    ro.threads = o.threads;
    ro.device = o.device == REDFOX_DEVICE_CPU ? RF_RT_DEVICE_CPU
                : o.device == REDFOX_DEVICE_GPU ? RF_RT_DEVICE_GPU
                                                : RF_RT_DEVICE_AUTO;
    ro.profile = o.profile;
    ro.max_iterations = o.max_iterations;
    ro.no_fuse = o.no_fuse;
    ro.tuning = &tune;
    ro.ptx0 = prog->ptx0.len ? prog->ptx0.data : NULL;
    ro.ptx0_size = (uint64_t)prog->ptx0.len;
    ro.gpu_plan = prog->gpln.len ? prog->gpln.data : NULL;
    ro.gpu_plan_size = (uint64_t)prog->gpln.len;
    ro.rfx_file = prog->rfx_name;
    ro.world = o.world ? o.world->dist : NULL;
    ro.process_exits = o.process_exits;
    ro.runs = o.runs;
    ro.later_runs = o.later_runs;
    /* the later programs' plans (those that compiled) */
    const rf_hir_program **later = o.nlater > 0 && o.later ? rf_calloc((size_t)o.nlater, sizeof *later) : NULL;
    for (int32_t i = 0; later && i < o.nlater; i++)
        if (o.later[i] && o.later[i]->hir) later[ro.nlater++] = o.later[i]->hir;
    ro.later = later;
    progress_relay relay = {o.progress, o.progress_user};
    if (o.progress) {
        ro.progress = relay_fixpoint;
        ro.load_progress = relay_load;
        ro.progress_ctx = &relay;
    }
    char *settings = NULL; /* tune's paths point into it: freed after the run */
    rf_status st = api_apply_settings(o.settings, &tune, &settings, &d);
    if (o.cache_dir) tune.cache_dir = o.cache_dir;
    if (o.gpu_memory) tune.gpu_memory = (int64_t)o.gpu_memory;
    /* A cache of this run only: it holds the relations given in memory as
    ** if read from their files, and whatever files the run reads. None
    ** when there is nothing to hold: the run reads its files itself. */
    int need_cache = db->keep_inputs || db->ntables > 0;
    rf_rt_cache *cache = st || !need_cache ? NULL : db->keep_inputs && db->kept ? db->kept : rf_rt_cache_new();
    if (!st && need_cache && !cache) st = RF_ENOMEM;
    if (db->keep_inputs && cache) db->kept = cache;
    ro.cache = cache;
    /* a database is read under its shared lock, as `redfox run` reads it: a
    ** commit or an import replacing it waits for the run, and the run for
    ** one under way (which it then reads whole); so is a folder of text
    ** files, whose writers (tpch gen, run --out) rename their files under
    ** it held exclusively: the run never reads files of two of their
    ** generations (it took no lock and could) */
    int dblock = -1, waited = 0;
    if (!st && db->dir)
        st = rf_db_is_database(db->dir) ? rf_file_lock_folder_shared(db->dir, &dblock, &waited, &d)
                                        : rf_file_lock_text_folder_shared(db->dir, &dblock, &waited, &d);
    /* a user's subfolders a `redfox exec` killed mid-commit left aside */
    if (!st && db->dir && dblock >= 0 && rf_db_is_database(db->dir)) rf_db_recover_subfolders(db->dir, &d);
    int threads = o.threads > 0 ? o.threads : rf_online_cpus();
    const rf_hir_program *h = prog->hir;
    char *read = db->ntables ? rf_calloc((size_t)db->ntables, 1) : NULL; /* [table]: 1 when an input read it */
    for (int32_t i = 0; i < prog->ninputs && !st; i++) {
        const rf_hir_var *v = h->vars[prog->inputs[i]];
        int for_pred = 0;
        api_table *t = table_for(db, v, &for_pred);
        if (t) st = put_input(db, t, v, for_pred, cache, threads, &d);
        if (t && read) read[t - db->tables] = 1;
    }
    /* a relation given under a name no input of the program has (a typo:
    ** "edges", "./edge.csv") was left unread without a word, the run
    ** reading the file instead: said, as a warning (a database may hold
    ** relations of other programs) */
    for (int32_t k = 0; read && !st && k < db->ntables; k++) {
        if (read[k]) continue;
        int named = 0; /* an input of that file, each given its own rows under its predicate's name */
        for (int32_t i = 0; i < prog->ninputs && !named; i++) {
            const char *file = h->vars[prog->inputs[i]]->input_file;
            named = file && !strcmp(file, db->tables[k].name);
        }
        rf_diag_add(&d, RF_SEV_WARNING, rf_mkloc(NULL, 0, 0), "the relation given as '%s' was not read: %s",
                    db->tables[k].name,
                    named ? "each input of that file read the rows given under its predicate's name"
                          : "the program has no input of that file (as its lang:input names it) or predicate");
    }
    free(read);
    rf_rt_trace_log trace;
    rf_rt_trace_log_init(&trace);
    trace_pair tp = {o.trace_file ? &trace : NULL, o.trace ? &o.trace->log : NULL};
    if (tp.file || tp.caller) {
        ro.trace = trace_both;
        ro.trace_ctx = &tp;
    }
    rf_rt_result *rr = NULL;
    double t0 = rf_now();
    if (!st) st = rf_rt_run(h, &ro, &rr, &d);
    rf_file_unlock(dblock);
    trace_both(&tp, "phase", "run", t0, rf_now(), -1);
    if (o.trace_file) {
        rf_status tst = rf_rt_trace_log_write(&trace, o.trace_file, "redfox library", &d);
        if (!st) st = tst;
    }
    rf_rt_trace_log_free(&trace);
    free(later);
    free(settings);
    if (db->keep_inputs) { /* the cache stays the database's, also after a failed run */
        if (!st) st = own_dict(rr);
    } else if (cache) {
        if (!st) rf_rt_cache_give_dict(cache, rr);
        rf_rt_cache_free(cache);
    }
    rf_result *res = NULL;
    if (!st) st = api_result_new(rr, &res);
    else rf_rt_result_free(rr);
    if (!st && !o.decimal128) st = api_result_narrow_wide(res, &d);
    /* in the order the run reported them, as `redfox run` prints them */
    st = rf_diags_status(&d, st); /* a bug exits 3 */
    rf_status dst = api_diags_set(&db->diags, &d);
    rf_diags_free(&d);
    if (!st && dst) st = dst;
    if (st) {
        rf_result_free(res);
        if (!db->diags.errmsg) api_diags_error(&db->diags, "%s", st == RF_ENOMEM ? "out of memory" : "the run failed");
        return api_code(st);
    }
    *out = res;
    return REDFOX_OK;
}
