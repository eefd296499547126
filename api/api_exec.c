/*
** api/api_exec.c: transactions over a redfox database through the library
** (API level 4): the batch built by the caller, rf_exec, and the report
** of what the transaction did.
**
** Owns: rf_batch (its parts: transaction files, texts, rows given in
** memory, which are written as transaction text so that they meet exactly
** the checks and messages of a file; its files read ahead on a thread of
** its own, rf_batch_read_ahead, and parsed there for a program,
** rf_batch_parse_ahead), rf_exec_options, rf_exec (the public
** options and handles turned into the txn/ stage's, rf_txn_exec) and the
** rf_result_exec_* getters. `redfox exec` (tools/cmd_exec.c) is built on
** these.
*/
#include "api_internal.h"
#include "rf_frontend.h"
#include "rf_sys.h"
#include "rf_txn.h"
#include "rf_value.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* One part of a batch. rows: pred is set and text holds the rows as
** transaction lines, name their name in messages; a file: text is NULL. */
typedef struct batch_part {
    char *name;
    char *text;
    int64_t len;
    char *pred;     /* rows: the predicate, their types and count */
    int32_t ncols;
    int *types;
    int64_t nrows;
} batch_part;

struct rf_batch {
    batch_part *parts;
    int32_t n, cap;
    api_diags diags;
    /* rf_batch_read_ahead: parts [0, nahead) read (their files) by reader;
    ** rf_batch_parse_ahead: also parsed for parse_fe there, on parse_threads */
    rf_txn_read_ahead *ahead;
    rf_txn_parsed **parsed; /* [nahead]; NULL: read only */
    const rf_fe_program *parse_fe;
    int parse_threads;
    int32_t nahead;
    int reading;      /* reader runs, or ran and is not joined yet */
    pthread_t reader;
};

rf_batch *rf_batch_new(void) { return rf_calloc(1, sizeof(rf_batch)); }

static int nomem_early(rf_batch *b)
{
    api_diags_error(&b->diags, "out of memory");
    return REDFOX_NOMEM;
}

/* The files of b read ahead, on b's reader thread (and parsed, once read,
** for rf_batch_parse_ahead). The parse runs at the lowest CPU priority
** (this thread and the pool it starts, which inherits it): it is work for
** later, and the transaction under way, whose threads it would otherwise
** contend with for the cores (its resolution by key, on the host, at the
** same moment), comes first; it takes the cores that transaction leaves
** idle (its GPU runs, its commit's syncs). (Linux: a thread's own nice
** value; elsewhere it runs as the caller's.) */
static void *read_ahead_files(void *arg)
{
    rf_batch *b = arg;
#ifdef __linux__
    if (b->parsed) (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
#endif
    for (int32_t i = 0; i < b->nahead; i++) {
        if (b->parts[i].text || b->parts[i].pred) continue;
        rf_txn_batch_read_ahead(b->parts[i].name, &b->ahead[i]);
        if (b->parsed && b->ahead[i].text)
            b->parsed[i] = rf_txn_parse_ahead(b->parse_fe, b->parse_threads, i, b->ahead[i].text, b->ahead[i].len);
    }
    return NULL;
}

/* What was read (and parsed) ahead, freed. */
static void ahead_free(rf_batch *b)
{
    for (int32_t i = 0; i < b->nahead; i++) {
        rf_txn_read_ahead_free(&b->ahead[i]);
        if (b->parsed) rf_txn_parsed_free(b->parsed[i]);
    }
    free(b->ahead);
    free(b->parsed);
    b->ahead = NULL;
    b->parsed = NULL;
    b->parse_fe = NULL;
    b->nahead = 0;
}

/* Waits for b's reader, if one runs; the seconds waited. Every use of b
** other than starting it comes after this. */
static double read_ahead_wait(rf_batch *b)
{
    if (!b->reading) return 0;
    double t0 = rf_now();
    pthread_join(b->reader, NULL);
    b->reading = 0;
    return rf_now() - t0;
}

/* b's files read ahead on its thread, and parsed for fe (NULL: read only). */
static int start_ahead(rf_batch *b, const rf_fe_program *fe, int threads)
{
    (void)read_ahead_wait(b);
    api_diags_clear(&b->diags);
    ahead_free(b);
    if (!b->n) return REDFOX_OK;
    if (!(b->ahead = rf_calloc((size_t)b->n, sizeof *b->ahead))) return nomem_early(b);
    if (fe && !(b->parsed = rf_calloc((size_t)b->n, sizeof *b->parsed))) {
        free(b->ahead);
        b->ahead = NULL;
        return nomem_early(b);
    }
    b->parse_fe = fe;
    b->parse_threads = threads;
    b->nahead = b->n;
    /* a thread the system cannot start now (EAGAIN) reads nothing ahead:
    ** rf_exec reads the files in order, as it reads a FIFO (the read ahead
    ** only overlaps that reading with other work) */
    if (pthread_create(&b->reader, NULL, read_ahead_files, b)) {
        ahead_free(b);
        return REDFOX_OK;
    }
    b->reading = 1;
    return REDFOX_OK;
}

int rf_batch_read_ahead(rf_batch *b)
{
    if (!b) return REDFOX_MISUSE;
    return start_ahead(b, NULL, 0);
}

int rf_batch_parse_ahead(rf_batch *b, const rf_program *prog, int threads)
{
    if (!b) return REDFOX_MISUSE;
    if (threads > API_MAX_THREADS) {
        (void)read_ahead_wait(b);
        api_diags_clear(&b->diags);
        api_diags_error(&b->diags, "rf_batch_parse_ahead: threads %d: at most %d (<= 0: every core)", threads,
                        API_MAX_THREADS);
        return REDFOX_MISUSE;
    }
    /* (a program without its LogiQL source, or not compiled: read only) */
    const rf_fe_program *fe = prog && prog->fe && prog->hir && prog->nsrc ? prog->fe : NULL;
    return start_ahead(b, fe, threads);
}

void rf_batch_free(rf_batch *b)
{
    if (!b) return;
    (void)read_ahead_wait(b);
    ahead_free(b);
    for (int32_t i = 0; i < b->n; i++) {
        free(b->parts[i].name);
        free(b->parts[i].text);
        free(b->parts[i].pred);
        free(b->parts[i].types);
    }
    free(b->parts);
    api_diags_clear(&b->diags);
    free(b);
}

const char *rf_batch_errmsg(const rf_batch *b) { return b ? api_diags_errmsg(&b->diags) : ""; }

/* A new part at the end of b (zeroed); NULL when out of memory. */
static batch_part *add_part(rf_batch *b)
{
    (void)read_ahead_wait(b); /* (the reader reads the parts array) */
    if (b->n == b->cap) {
        int32_t nc = b->cap ? b->cap * 2 : 4;
        batch_part *np = rf_realloc(b->parts, (size_t)nc * sizeof *np);
        if (!np) return NULL;
        b->parts = np;
        b->cap = nc;
    }
    batch_part *p = &b->parts[b->n];
    memset(p, 0, sizeof *p);
    return p;
}

static int nomem(rf_batch *b)
{
    api_diags_error(&b->diags, "out of memory");
    return REDFOX_NOMEM;
}

int rf_batch_add_file(rf_batch *b, const char *path)
{
    if (!b) return REDFOX_MISUSE;
    api_diags_clear(&b->diags);
    if (!path || !*path) {
        api_diags_error(&b->diags, "rf_batch_add_file: no path");
        return REDFOX_MISUSE;
    }
    batch_part *p = add_part(b);
    if (!p || !(p->name = rf_strdup(path))) return nomem(b);
    b->n++;
    return REDFOX_OK;
}

int rf_batch_add_text(rf_batch *b, const char *name, const char *text, int64_t len)
{
    if (!b) return REDFOX_MISUSE;
    api_diags_clear(&b->diags);
    if (!text) {
        api_diags_error(&b->diags, "rf_batch_add_text: no text");
        return REDFOX_MISUSE;
    }
    if (len < 0) len = (int64_t)strlen(text);
    batch_part *p = add_part(b);
    if (!p || !(p->name = rf_strdup(name ? name : "<batch>")) || !(p->text = rf_malloc((size_t)len + 1))) {
        if (p) free(p->name);
        return nomem(b);
    }
    memcpy(p->text, text, (size_t)len);
    p->text[len] = 0;
    p->len = len;
    b->n++;
    return REDFOX_OK;
}

/* A string value as the transaction syntax quotes it. */
static void put_string(rf_buf *t, const char *s)
{
    rf_buf_putc(t, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') rf_buf_putc(t, '\\'), rf_buf_putc(t, *s);
        else if (*s == '\n') rf_buf_puts(t, "\\n");
        else if (*s == '\t') rf_buf_puts(t, "\\t");
        else rf_buf_putc(t, *s);
    }
    rf_buf_putc(t, '"');
}

static int add_rows(rf_batch *b, int insert, const char *pred, int32_t ncols, const int *types, int64_t nrows,
                    const void *const *columns)
{
    const char *fn = insert ? "rf_batch_insert" : "rf_batch_delete";
    if (!b) return REDFOX_MISUSE;
    api_diags_clear(&b->diags);
    if (!pred || !*pred || ncols <= 0 || !types || nrows < 0 || (nrows > 0 && !columns)) {
        api_diags_error(&b->diags, "%s: %s", fn,
                        !pred || !*pred ? "no predicate" : ncols <= 0 || !types ? "no columns" : "no rows");
        return REDFOX_MISUSE;
    }
    for (int32_t c = 0; c < ncols; c++) {
        rf_type ty;
        const char *why = api_type_input(types[c], &ty);
        if (why) {
            api_diags_error(&b->diags, "%s: column %d: %s (%d)", fn, (int)c + 1, why, types[c]);
            return REDFOX_MISUSE;
        }
        if (nrows > 0 && !columns[c]) {
            api_diags_error(&b->diags, "%s: column %d has no values", fn, (int)c + 1);
            return REDFOX_MISUSE;
        }
        /* as rf_database_put_rows: rows counted from 1; a NULL string is a
        ** bad argument, a bad value (a string not UTF-8) bad data */
        int64_t bad = 0, null = 0;
        if (types[c] != REDFOX_STRING) bad = nrows > 0 ? api_check_values(types[c], columns[c], nrows) : 0;
        for (int64_t r = 0; types[c] == REDFOX_STRING && r < nrows && !bad && !null; r++) {
            const char *s = ((const char *const *)columns[c])[r];
            rf_val_err ve = {NULL, 0};
            if (!s) null = r + 1;
            else if (rf_val_check_utf8(s, (int64_t)strlen(s), &ve)) bad = r + 1;
        }
        if (null) {
            api_diags_error(&b->diags, "%s: %s: column %d, row %lld: a NULL string", fn, pred, (int)c + 1,
                            (long long)null);
            return REDFOX_MISUSE;
        }
        if (bad) {
            if (types[c] == REDFOX_STRING)
                api_diags_error(&b->diags, "%s: %s: column %d, row %lld: not valid UTF-8", fn, pred, (int)c + 1,
                                (long long)bad);
            else
                api_diags_error(&b->diags, "%s: %s: column %d, row %lld: not a valid %s", fn, pred, (int)c + 1,
                                (long long)bad, rf_type_name(types[c]));
            return REDFOX_ERROR;
        }
    }
    rf_buf t;
    rf_buf_init(&t);
    for (int64_t r = 0; r < nrows && !t.oom; r++) {
        rf_buf_printf(&t, "%c%s(", insert ? '+' : '-', pred);
        for (int32_t c = 0; c < ncols; c++) {
            const void *col = columns[c];
            if (c) rf_buf_puts(&t, ", ");
            switch (types[c]) {
            case REDFOX_INT: rf_val_fmt_int(&t, ((const int64_t *)col)[r]); break;
            case REDFOX_FLOAT: rf_val_fmt_float(&t, ((const double *)col)[r]); break;
            case REDFOX_DECIMAL: rf_val_fmt_dec(&t, ((const int64_t *)col)[r]); break;
            case REDFOX_DATE: rf_val_fmt_date(&t, ((const int32_t *)col)[r]); break;
            case REDFOX_BOOL: rf_val_fmt_bool(&t, ((const uint8_t *)col)[r]); break;
            default: put_string(&t, ((const char *const *)col)[r]); break;
            }
        }
        rf_buf_puts(&t, ").\n");
    }
    batch_part *p = t.oom ? NULL : add_part(b);
    int64_t len = t.len;
    if (p) {
        p->name = rf_sprintf("<rows %s %s>", insert ? "inserted into" : "deleted from", pred);
        p->pred = rf_strdup(pred);
        p->types = rf_calloc((size_t)ncols, sizeof *p->types);
        rf_buf_putc(&t, 0);
        p->text = t.oom ? NULL : rf_buf_take(&t);
    }
    if (!p || !p->name || !p->pred || !p->types || !p->text) {
        if (p) {
            free(p->name);
            free(p->pred);
            free(p->types);
            free(p->text);
        }
        rf_buf_free(&t);
        return nomem(b);
    }
    memcpy(p->types, types, (size_t)ncols * sizeof *types);
    p->len = len;
    p->ncols = ncols;
    p->nrows = nrows;
    b->n++;
    return REDFOX_OK;
}

int rf_batch_insert(rf_batch *b, const char *pred, int32_t ncols, const int *types, int64_t nrows,
                    const void *const *columns)
{
    return add_rows(b, 1, pred, ncols, types, nrows, columns);
}

int rf_batch_delete(rf_batch *b, const char *pred, int32_t ncols, const int *types, int64_t nrows,
                    const void *const *columns)
{
    return add_rows(b, 0, pred, ncols, types, nrows, columns);
}

/* ---- rf_exec ---------------------------------------------------------------- */

void rf_exec_options_init(rf_exec_options *o, size_t size)
{
    if (!o || size < offsetof(rf_exec_options, threads)) return;
    rf_exec_options d;
    memset(&d, 0, sizeof d);
    d.size = size < sizeof d ? size : sizeof d;
    d.device = REDFOX_DEVICE_AUTO;
    d.decimal128 = 1;
    memcpy(o, &d, d.size);
}

/* Rows given in memory against the program: a base predicate, its columns'
** count and types. The error names the rows' part. */
static rf_status check_rows(const rf_fe_program *fe, const batch_part *p, rf_diags *d)
{
    const rf_fe_pred *f = NULL;
    for (int32_t i = 0; i < fe->npreds && !f; i++)
        if (!strcmp(fe->preds[i]->name, p->pred)) f = fe->preds[i];
    rf_loc loc = rf_mkloc(p->name, 0, 0);
    if (!f) {
        rf_error(d, loc, "unknown predicate `%s`: the program has no such predicate", p->pred);
        return RF_EUSER;
    }
    if (!f->input_file) {
        rf_error(d, loc, "`%s` is derived by the program's rules: a transaction changes only base predicates (those with lang:input)",
                 p->pred);
        return RF_EUSER;
    }
    if (f->arity != p->ncols) {
        rf_error(d, loc, "`%s` has %d columns; the rows give %d", p->pred, (int)f->arity, (int)p->ncols);
        return RF_EUSER;
    }
    for (int32_t c = 0; c < p->ncols; c++)
        if (api_type_public(f->types[c]) != p->types[c]) {
            rf_error(d, loc, "column %d%s%s%s of `%s` is %s; the rows give %s", (int)c + 1, f->cols && f->cols[c] ? " (" : "",
                     f->cols && f->cols[c] ? f->cols[c] : "", f->cols && f->cols[c] ? ")" : "", p->pred,
                     rf_type_name(api_type_public(f->types[c])), rf_type_name(p->types[c]));
            return RF_EUSER;
        }
    return RF_OK;
}

/* The log's pieces to the caller's writer. */
typedef struct log_relay {
    rf_write_fn fn;
    void *user;
} log_relay;

static void relay_log(void *user, const char *text, int64_t len)
{
    const log_relay *r = user;
    (void)r->fn(r->user, text, len);
}

int rf_exec(rf_database *db, const rf_program *prog, const rf_batch *batch, const rf_exec_options *opt, rf_result **out)
{
    if (out) *out = NULL;
    if (!db) return REDFOX_MISUSE;
    api_diags_clear(&db->diags);
    if (!prog || !out) {
        api_diags_error(&db->diags, "rf_exec: %s", !prog ? "no program" : "no place for the result");
        return REDFOX_MISUSE;
    }
    if (!prog->hir || !prog->fe || !prog->nsrc) {
        api_diags_error(&db->diags, "rf_exec: %s",
                        prog->rfx_name ? "the program is a .rfx file: rf_exec takes the program's LogiQL source (it derives "
                                         "the delta rules from its rules)"
                                       : "the program did not compile completely");
        return REDFOX_MISUSE;
    }
    rf_exec_options o;
    rf_exec_options_init(&o, sizeof o);
    if (opt && opt->size < offsetof(rf_exec_options, threads)) {
        api_diags_error(&db->diags, "rf_exec: the options were not set up with rf_exec_options_init");
        return REDFOX_MISUSE;
    }
    if (opt) memcpy(&o, opt, opt->size < sizeof o ? opt->size : sizeof o);
    /* a caller older than level 5 reads totals of decimals as decimals */
    if (opt && opt->size < offsetof(rf_exec_options, decimal128) + sizeof o.decimal128) o.decimal128 = 0;
    if (opt && opt->size < offsetof(rf_exec_options, async_commit) + sizeof o.async_commit) o.async_commit = 0;
    o.size = sizeof o;
    if (o.device != REDFOX_DEVICE_AUTO && o.device != REDFOX_DEVICE_CPU && o.device != REDFOX_DEVICE_GPU) {
        api_diags_error(&db->diags, "rf_exec: unknown device %d", o.device);
        return REDFOX_MISUSE;
    }
    if (o.threads > API_MAX_THREADS) {
        api_diags_error(&db->diags, "rf_exec: threads %d: at most %d (<= 0: one per core)", o.threads, API_MAX_THREADS);
        return REDFOX_MISUSE;
    }
    /* (as `redfox exec` refuses them: the recomputation won, silently) */
    if (o.incremental && (o.recompute || o.init)) {
        api_diags_error(&db->diags, "rf_exec: incremental and %s ask for opposite things", o.init ? "init" : "recompute");
        return REDFOX_MISUSE;
    }
    /* a start after the call (another clock's time: time(), an epoch) or no
    ** number made the profile's times negative or NaN */
    if (!(o.start <= 0) && !(o.start <= rf_now())) {
        api_diags_error(&db->diags,
                        "rf_exec: start %g is not a time of rf_trace_clock() before the call (now %g; <= 0: from the call)",
                        o.start, rf_now());
        return REDFOX_MISUSE;
    }
    rf_diags d;
    rf_diags_init(&d);
    rf_rt_tuning tune;
    rf_rt_tuning_init(&tune);
    rf_txn_exec_options xo;
    memset(&xo, 0, sizeof xo);
    xo.rt.threads = o.threads;
    xo.rt.device = o.device == REDFOX_DEVICE_CPU ? RF_RT_DEVICE_CPU
                   : o.device == REDFOX_DEVICE_GPU ? RF_RT_DEVICE_GPU
                                                   : RF_RT_DEVICE_AUTO;
    xo.rt.tuning = &tune;
    xo.init = o.init;
    xo.recompute = o.recompute;
    xo.incremental = o.incremental;
    xo.profile = o.profile;
    xo.profile_kernels = o.profile_kernels;
    xo.show_programs = o.show_programs;
    xo.start = o.start;
    xo.async_commit = o.async_commit != 0;
    log_relay relay = {o.log, o.log_user};
    if (o.log) {
        xo.log = relay_log;
        xo.log_user = &relay;
    }
    char *settings = NULL; /* tune's paths point into it: freed after the transaction */
    rf_status st = api_apply_settings(o.settings, &tune, &settings, &d);
    if (o.cache_dir) tune.cache_dir = o.cache_dir;
    /* the files read ahead (rf_batch_read_ahead): waited for (joining its
    ** thread changes none of the batch's content), then each used where
    ** the file is still the one read, else read again in order */
    rf_batch *ahead_of = (rf_batch *)batch;
    xo.read_ahead_wait = ahead_of ? read_ahead_wait(ahead_of) : 0;
    int32_t nparts = batch ? batch->n : 0;
    rf_txn_batch_src *parts = rf_calloc((size_t)nparts + 1, sizeof *parts);
    if (!st && !parts) st = RF_ENOMEM;
    for (int32_t i = 0; !st && i < nparts; i++) {
        const batch_part *p = &batch->parts[i];
        if (p->pred) st = check_rows(prog->fe, p, &d);
        /* (the batch's texts are NUL-terminated and stay while it runs) */
        parts[i] = (rf_txn_batch_src){p->name, p->text, p->len, 1, NULL, 0, NULL};
        const rf_txn_read_ahead *ra = i < batch->nahead ? &batch->ahead[i] : NULL;
        if (!p->text && ra && ra->text) {
            if (rf_txn_batch_read_ahead_current(p->name, ra)) {
                parts[i].text = ra->text;
                parts[i].len = ra->len;
                parts[i].ahead = ra;
                /* (taken where it was parsed for this program: rf_txn_parsed_usable) */
                parts[i].parsed = batch->parsed ? batch->parsed[i] : NULL;
            } else {
                parts[i].ahead_stale = 1;
            }
        }
    }
    rf_txn_sources src = {prog->src_names, prog->src_texts, prog->src_lens, prog->nsrc};
    rf_rt_result *rr = NULL;
    rf_txn_report *rep = rf_calloc(1, sizeof *rep);
    if (!st && !rep) st = RF_ENOMEM;
    if (rep) rf_buf_init(&rep->profile);
    /* the next transaction on this handle starts from what this one commits */
    if (!st && !db->resident && !(db->resident = rf_txn_resident_new())) st = RF_ENOMEM;
    if (!st && !db->exec_dir) {
        const char *slash = strrchr(db->dir, '/'), *last = slash ? slash + 1 : db->dir;
        int dots = !strcmp(last, ".") || !strcmp(last, "..");
        db->exec_dir = dots ? realpath(db->dir, NULL) : rf_strdup(db->dir);
        if (dots && !db->exec_dir) db->exec_dir = rf_strdup(db->dir); /* (rf_txn_exec names why it cannot be read) */
        if (!db->exec_dir) st = RF_ENOMEM;
    }
    if (!st) st = rf_txn_exec(&src, prog->fe, prog->hir, db->exec_dir, parts, nparts, &xo, db->resident, &rr, rep, &d);
    /* a parse ahead serves one transaction: applied again, the batch's
    ** texts are parsed then */
    for (int32_t i = 0; ahead_of && ahead_of->parsed && i < ahead_of->nahead; i++) {
        rf_txn_parsed_free(ahead_of->parsed[i]);
        ahead_of->parsed[i] = NULL;
    }
    /* the last commit left ending: known now (waited for by this one) */
    if (rep && db->resident && !rf_txn_resident_publishing(db->resident))
        db->async_status = rep->previous_failed ? REDFOX_ERROR : REDFOX_OK;
    /* committed: what rf_run kept of the database (rf_database_keep_inputs)
    ** is its state before; a failed transaction changed nothing */
    if (!st) api_forget_kept(db);
    free(parts);
    free(settings);
    /* a program without outputs: a result of none, which still reports */
    if (!st && !rr && !(rr = rf_calloc(1, sizeof *rr))) st = RF_ENOMEM;
    if (!st && !rr->device) rr->device = rep->device ? rep->device : o.device == REDFOX_DEVICE_GPU ? "gpu" : "cpu";
    rf_result *res = NULL;
    if (!st) st = api_result_new(rr, &res);
    else rf_rt_result_free(rr);
    if (!st && !o.decimal128) st = api_result_narrow_wide(res, &d);
    if (!st) res->exec = rep;
    else if (rep) {
        rf_txn_report_free(rep);
        free(rep);
    }
    st = rf_diags_status(&d, st); /* a bug exits 3 */
    rf_status dst = api_diags_set(&db->diags, &d);
    rf_diags_free(&d);
    if (!st && dst) st = dst;
    if (st) {
        rf_result_free(res);
        if (!db->diags.errmsg) api_diags_error(&db->diags, "%s", st == RF_ENOMEM ? "out of memory" : "the transaction failed");
        return api_code(st);
    }
    *out = res;
    return REDFOX_OK;
}

int rf_exec_wait(rf_database *db)
{
    if (!db) return REDFOX_MISUSE;
    /* nothing to wait for: the diagnostics stay those of the call before (a
    ** failed rf_exec's, read after this call asks about the commit before it) */
    if (!db->resident || !rf_txn_resident_publishing(db->resident)) return db->async_status;
    api_diags_clear(&db->diags);
    rf_diags d;
    rf_diags_init(&d);
    rf_status st = rf_txn_resident_wait_publish(db->resident, db->exec_dir ? db->exec_dir : db->dir, NULL, NULL, &d);
    if (st) api_forget_kept(db);
    rf_status dst = api_diags_set(&db->diags, &d);
    rf_diags_free(&d);
    if (!st && dst) st = dst;
    if (st && !db->diags.errmsg) api_diags_error(&db->diags, "%s", st == RF_ENOMEM ? "out of memory" : "the commit failed");
    db->async_status = st ? api_code(st) : REDFOX_OK;
    return db->async_status;
}

/* ---- the report ------------------------------------------------------------- */

int rf_result_exec_incremental(const rf_result *r) { return r && r->exec && !r->exec->why; }
const char *rf_result_exec_why(const rf_result *r) { return r && r->exec ? r->exec->why : NULL; }
int64_t rf_result_exec_inserted(const rf_result *r) { return r && r->exec ? r->exec->inserted : 0; }
int64_t rf_result_exec_deleted(const rf_result *r) { return r && r->exec ? r->exec->deleted : 0; }
int32_t rf_result_exec_derived_count(const rf_result *r) { return r && r->exec ? r->exec->nderived : 0; }

const char *rf_result_exec_derived(const rf_result *r, int32_t i, int64_t *before, int64_t *after, const char **stored)
{
    if (!r || !r->exec || i < 0 || i >= r->exec->nderived) return NULL;
    const rf_txn_derived *p = &r->exec->derived[i];
    if (before) *before = p->before;
    if (after) *after = p->after;
    if (stored) *stored = p->stored;
    return p->name;
}

const char *rf_result_exec_profile(const rf_result *r)
{
    if (!r || !r->exec || !r->exec->profile.len || r->exec->profile.oom) return NULL;
    return rf_buf_cstr(&r->exec->profile);
}
