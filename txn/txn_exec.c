/*
** txn/txn_exec.c: one transaction over a redfox database, from the
** program's sources to the committed state and the outputs after it.
**
** Owns: the order of a transaction: the database locked and its tables read
** (txn_store.c), the batches applied (txn_batch.c), the derived predicates
** brought up to date (by the delta rules of txn_gen.c where the program and
** the batch allow, else recomputed from scratch, which the report says),
** the outputs computed, the new state committed (txn_store.c). Every run
** goes through the runtime's one driver, on the device the options choose.
** Also the GPU started beside the reading, the next transactions' GPU code
** compiled ahead after a recomputation on the GPU, the overlap with the end
** of the last transaction's commit (run from the state it kept, without the
** lock; that end waited for before this commit, the manifest checked, the
** transaction done again from the files where another process committed
** between) and this commit's end left on a thread (async_commit), a
** SIGINT, SIGTERM or SIGHUP held while the commit is under way (it ends;
** rf_file_hold_signals) and one held while the last one's ended stopping
** this transaction at its next step, and the profile's text.
** `redfox exec` and rf_exec (api/api_exec.c) are its clients: nothing here
** prints; the generated programs and each run's kernels go to the caller's
** log, the profile into the report.
*/
#include "rf_file.h"
#include "rf_queryplan.h"
#include "rf_rt_gpu.h"
#include "rf_sys.h"
#include "rf_txn.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

typedef struct exec_ctx {
    rf_txn t;
    rf_rt_options o;
    const rf_txn_exec_options *opt;
    rf_rt_cache *cache;
    char pseudo_dir[64];    /* the data folder the generated programs' inputs stand in (one per run: the
                               cache keeps every run's inputs, and one name may mean other rows later) */
    int32_t nruns;
    const char *device;     /* where the last run ran */
    int show;               /* the generated programs' text to the log (off while compiling ahead) */
    double t_runs;
    double t_compile;       /* the generated programs compiled (front end, plan, Harmony; profile) */
    double t_compile_maint; /* ... of them, those of the maintenance */
    double t_concat;        /* host copies of stored relations and new facts into one (profile) */
    double t_merge;         /* diffs: the new states put together on the host (rf_txn_merge_keys; profile) */
    rf_buf runs;            /* profile: a line per run */
    int diffs;              /* maintained by diffs (txn_gen_diff.c), not by delta rules */
    int adding_overflowed;  /* diffs: a total kept by adding overflowed (total_by_adding) */
    rf_txn_resident *resident; /* the relations kept between transactions (NULL: none); x->cache is its */
    int kept;               /* this transaction started from them, not from the files */
    int overlapped;         /* ... while the last one's commit ended on a thread (rf_txn_publish), unlocked */
    double publish_wait;    /* overlapped: the time waited for that commit's end, before this one's */
    double publish_took;    /* ... its time on its thread */
    int publishing;         /* this one's commit ends on a thread after rf_txn_exec returns */
    int previous_failed;    /* the last transaction's commit, ending on a thread, failed */
} exec_ctx;

static void log_text(const exec_ctx *x, const char *text, int64_t len)
{
    if (x->opt->log && len > 0) x->opt->log(x->opt->log_user, text, len);
}

/* ---- runs of generated programs ------------------------------------------ */

/* Compiles the sources (the user's, plus generated text) as one program,
** with the default plan switches. */
static rf_status compile(exec_ctx *x, const rf_txn_sources *user, const char *gen_name, rf_buf *gen, rf_arena *arena,
                         rf_hir_program **hir, rf_diags *d)
{
    *hir = NULL;
    double t0 = rf_now();
    if (x->show && !gen->oom) {
        rf_buf b;
        rf_buf_init(&b);
        rf_buf_printf(&b, "exec: %s\n%s\n", gen_name, rf_buf_cstr(gen));
        if (!b.oom) log_text(x, (const char *)b.data, b.len);
        rf_buf_free(&b);
    }
    /* between transactions: a program compiled before from the same text
    ** (the materialization, the outputs' program, the diffs of a batch like
    ** the last one) is taken as it is, not parsed and planned again */
    if (x->resident && !gen->oom &&
        (*hir = rf_txn_resident_program(x->resident, x->t.source_hash, gen_name, rf_buf_cstr(gen), user != NULL))) {
        x->t_compile += rf_now() - t0;
        return RF_OK;
    }
    int32_t n = (user ? user->n : 0) + 1;
    const char **names = rf_calloc((size_t)n + 1, sizeof *names), **texts = rf_calloc((size_t)n + 1, sizeof *texts);
    int64_t *lens = rf_calloc((size_t)n + 1, sizeof *lens);
    rf_status st = names && texts && lens && !gen->oom ? RF_OK : RF_ENOMEM;
    for (int32_t i = 0; !st && user && i < user->n; i++) {
        names[i] = user->names[i];
        texts[i] = user->texts[i];
        lens[i] = user->lens[i];
    }
    if (!st) {
        names[n - 1] = gen_name;
        texts[n - 1] = rf_buf_cstr(gen);
        lens[n - 1] = gen->len;
        rf_ast_program *ast = NULL;
        rf_fe_program *fe = NULL;
        rf_qp_program *qp = NULL;
        rf_qp_options qo = {.no_lftj = 0, .no_exists = 0};
        rf_diags cd;
        rf_diags_init(&cd);
        /* (the generated text alone declares and defines the reserved
        ** redfox_txn_* predicates; the user's files were checked as any) */
        rf_fe_options fo = {.txn_source = gen_name};
        st = rf_fe_load_sources_opts(names, texts, lens, n, &fo, arena, &ast, &fe, &cd);
        if (!st) st = rf_qp_build_opts(fe, &qo, &qp, &cd);
        if (!st) st = rf_qp_optimize(qp, &cd);
        if (!st) st = rf_hir_lower(qp, hir, &cd);
        rf_qp_free(qp);
        /* the warnings about the user's own files were the caller's compile's */
        for (int64_t i = 0; i < cd.count; i++) {
            const rf_diag *g = &cd.items[i];
            int users = 0;
            for (int32_t k = 0; !st && user && k < user->n && g->loc.file; k++) users |= !strcmp(g->loc.file, user->names[k]);
            if (!users) rf_diag_add(d, g->sev, g->loc, "%s", g->msg);
        }
        rf_diags_free(&cd);
    }
    free(names);
    free(texts);
    free(lens);
    /* (kept for the next transactions where there is room: the arena goes with it) */
    if (!st && x->resident)
        rf_txn_resident_keep_program(x->resident, x->t.source_hash, gen_name, rf_buf_cstr(gen), user != NULL, arena,
                                     *hir);
    x->t_compile += rf_now() - t0;
    return st;
}

/* Frees a compiled program, unless it is kept between transactions. */
static void free_hir(exec_ctx *x, rf_hir_program *hir)
{
    if (!x->resident || !rf_txn_resident_owns_program(x->resident, hir)) rf_hir_free(hir);
}

/* The stamps of rel's columns where they are a kept relation's (cur, or
** its view with the staged rows), for the devices' copies; else NULL. */
static const uint64_t *stamps_for(const exec_ctx *x, const rf_rt_rel *rel)
{
    for (int32_t i = 0; i < x->t.npreds; i++) {
        const rf_txn_pred *p = &x->t.preds[i];
        if (p->stamps && p->borrowed && (rel == &p->cur || (p->has_view && rel == &p->view))) return p->stamps;
    }
    return NULL;
}

/* Hands rel (the caller keeps its columns) to the next run as input v.
** Between transactions (x->resident): a kept relation under its stamps, so
** that the GPU keeps its columns across runs and transactions and copies
** only rows appended under a stamp; any other, under none (no device keeps
** it after the run). Every relation handed is a state of a predicate or a
** part of one (its inserted, deleted or kept rows), whose declared key and
** functional dependency the transaction keeps (resolution by key; the
** stored rows checked at the load, rf_txn_store_load): the run does not
** check them again (a key check of a history of millions of rows cost 5-11
** ms a transaction, growing with the history). */
static rf_status put(exec_ctx *x, const rf_hir_var *v, const rf_rt_rel *rel)
{
    char *path = rf_sprintf("%s/%s", x->pseudo_dir, v->input_file);
    uint8_t *foreign = rf_malloc((size_t)v->ncols + 1);
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    r.nrows = rel->nrows;
    r.ncols = v->ncols;
    r.types = v->types;
    r.cols = rf_calloc((size_t)v->ncols + 1, sizeof *r.cols);
    rf_status st = path && foreign && r.cols ? RF_OK : RF_ENOMEM;
    if (!st) {
        memset(foreign, 1, (size_t)v->ncols);
        for (int32_t c = 0; c < v->ncols; c++) r.cols[c] = rel->cols ? rel->cols[c] : NULL;
        const uint64_t *kept = x->resident ? stamps_for(x, rel) : NULL;
        uint64_t *none = x->resident && !kept ? rf_calloc((size_t)v->ncols + 1, sizeof *none) : NULL;
        if (x->resident && !kept && !none) st = RF_ENOMEM;
        if (!st) st = rf_rt_cache_put_stamped(x->cache, path, v, &r, foreign, kept ? kept : none, 1);
        free(none);
    }
    if (st) free(r.cols);
    free(path);
    free(foreign);
    return st;
}

/* p's whole state after the transaction as one relation: next, or cur
** where nothing changed; where the new state was left as cur followed by
** the new rows (p->tail: an insert-only batch of a base predicate, the delta
** rules' new facts), the two copied into next now, for the run that reads
** it (the commit appends the new rows without). NULL: out of memory. */
static const rf_rt_rel *state_after(exec_ctx *x, rf_txn_pred *p)
{
    if (!p->has_next && p->tail && p->has_view) return &p->view; /* (kept: the new rows staged after the old) */
    if (!p->has_next && p->tail) {
        double t0 = rf_now();
        if (rf_txn_rel_concat(&p->cur, &p->ins, &p->next)) return NULL;
        p->has_next = 1;
        p->tail = 0;
        x->t_concat += rf_now() - t0;
    }
    return p->has_next ? &p->next : &p->cur;
}

/* The relation standing for input variable v of a generated program (NULL:
** none, or out of memory copying a new state into one). */
static const rf_rt_rel *rel_for(exec_ctx *x, const rf_hir_var *v)
{
    const char *name = v->pred_name ? v->pred_name : v->name;
    const char *colon = strchr(name, ':');
    const char *ns = colon ? name : "";
    size_t nslen = colon ? (size_t)(colon - name) : 0;
    const char *pname = colon ? colon + 1 : name;
    for (int32_t i = 0; i < x->t.npreds; i++) {
        rf_txn_pred *p = &x->t.preds[i];
        if (strcmp(p->fe->name, pname)) continue;
        if (!strncmp(ns, RF_TXN_NS "_ins", nslen) && nslen == strlen(RF_TXN_NS "_ins")) return &p->ins;
        if (!strncmp(ns, RF_TXN_NS "_old", nslen) && nslen == strlen(RF_TXN_NS "_old")) return &p->cur;
        if (!strncmp(ns, RF_TXN_NS "_del", nslen) && nslen == strlen(RF_TXN_NS "_del")) return &p->del;
        if (!strncmp(ns, RF_TXN_NS "_mid", nslen) && nslen == strlen(RF_TXN_NS "_mid")) return &p->mid;
        return state_after(x, p); /* _out, or the user's own inputs */
    }
    /* a predicate of no rows (declared only: rf_txn_gen_empty_inputs, an
    ** output of the outputs' program) */
    static const rf_rt_rel empty;
    for (int32_t i = 0; colon && i < x->t.fe->npreds; i++)
        if (!strcmp(x->t.fe->preds[i]->name, pname) && !rf_txn_pred_has_rows(x->t.fe->preds[i])) return &empty;
    return NULL;
}

/* The profile's line for one run: where its time went (the device's start,
** its kernels loaded: NVRTC and the JIT on a cold cache; the inputs copied
** to the GPU; the run; the outputs back) and, on the GPU, its join builds
** (a build kept across the rounds is made once a run). */
static void profile_run(exec_ctx *x, const char *what, const rf_rt_result *r, double wall)
{
    rf_buf *b = &x->runs;
    rf_buf_printf(b, "exec:   run of %s on %s: %.3f ms: ", what, r->device ? r->device : "?", wall * 1e3);
    if (r->device && !strcmp(r->device, "gpu"))
        rf_buf_printf(b, "device start %.3f ms, kernels loaded %.3f ms, inputs copied %.3f ms (%.1f MB), ",
                      r->device_seconds * 1e3, r->program_seconds * 1e3, r->copy_seconds * 1e3, (double)r->h2d_bytes / 1e6);
    rf_buf_printf(b, "inputs %.0f rows (%.1f MB), run %.3f ms", r->input_rows, r->input_bytes / 1e6, r->run_seconds * 1e3);
    if (r->device && !strcmp(r->device, "gpu"))
        rf_buf_printf(b, ", outputs back %.3f ms (%.1f MB); join builds %lld made, %lld reused", r->output_seconds * 1e3,
                      (double)r->d2h_bytes / 1e6, (long long)r->gpu_join_builds, (long long)r->gpu_join_reuses);
    rf_buf_putc(b, '\n');
}

/* A run's kernel table, as `redfox run --profile` prints it, to the log. */
static void log_kernels(exec_ctx *x, const char *what, const rf_rt_result *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return;
    fprintf(f, "exec: the run of %s\n", what);
    rf_rt_profile_write(r, f);
    if (fclose(f) == 0) log_text(x, text, (int64_t)len);
    free(text);
}

/* Whether error g, at a line of the generated text gen, is a total kept by
** adding (txn_gen_diff.c: a touched group's old value plus the batch's,
** `S = O + X`) that overflows: the batch is then recomputed, whose total
** fails as a run of the user's rule does, in its words and naming the
** group ("aggregate: integer overflow in total() for the group (...)"),
** which the addition's row cannot name. */
static int total_by_adding(const rf_fe_rule *r, const rf_buf *gen, const rf_diag *g)
{
    static const char over[] = "integer overflow in ", add[] = "S = O + X.";
    if (!r || r->naggs != 1 || r->aggs[0].fn != RF_AGG_TOTAL || strncmp(g->msg, over, sizeof over - 1)) return 0;
    const char *t = (const char *)gen->data, *end = t + gen->len;
    for (int32_t line = 1; t < end && line < g->loc.line; line++) {
        const char *nl = memchr(t, '\n', (size_t)(end - t));
        t = nl ? nl + 1 : end;
    }
    const char *nl = t < end ? memchr(t, '\n', (size_t)(end - t)) : NULL;
    size_t n = (size_t)((nl ? nl : end) - t), k = sizeof add - 1;
    return n >= k && !memcmp(t + n - k, add, k);
}

/* The errors of a run of generated program hir (its text gen, with the
** user's sources before it: with_user), d's from index `from` on, that
** name a line of it: moved to the user's rule they come from, as a run of
** the user's program names it (the comments of rf_txn_gen_origin; with
** the user's sources, the runtime names their rules' lines under the
** generated program's name: the user's rule at that line and column). */
static void own_errors(exec_ctx *x, const rf_hir_program *hir, const rf_buf *gen, int with_user, rf_diags *d,
                       int64_t from)
{
    for (int64_t i = from; gen && !gen->oom && i < d->count; i++) {
        rf_diag *g = &d->items[i];
        if (!g->loc.file || !hir->source || strcmp(g->loc.file, hir->source) || g->loc.line <= 0) continue;
        const rf_fe_rule *r = NULL;
        /* a functional dependency violated is named at the predicate (its
        ** declaration, or where it first appears), as a run names it */
        const rf_fe_pred *p = NULL;
        if (with_user) {
            /* the rule, else the predicate, at that line and column; of
            ** several sources, only where one file has it */
            const char *in = NULL;
            int ambiguous = 0;
            for (int32_t k = 0; k < x->t.fe->nrules; k++) {
                const rf_fe_rule *u = x->t.fe->rules[k];
                if (!u->loc.file || u->loc.line != g->loc.line || u->loc.col != g->loc.col) continue;
                if (r) ambiguous = 1;
                r = u, in = u->loc.file;
            }
            for (int32_t k = 0; k < x->t.fe->npreds; k++) {
                const rf_fe_pred *u = x->t.fe->preds[k];
                if (!u->loc.file || u->loc.line != g->loc.line || u->loc.col != g->loc.col) continue;
                if ((in && strcmp(in, u->loc.file)) || (!r && p)) ambiguous = 1;
                if (!r) p = u, in = u->loc.file;
            }
            if (ambiguous) r = NULL, p = NULL;
        } else {
            r = rf_txn_gen_origin_at(&x->t, (const char *)gen->data, gen->len, g->loc.line);
            if (!r) p = rf_txn_gen_pred_origin_at(&x->t, (const char *)gen->data, gen->len, g->loc.line);
        }
        const rf_loc *at = r ? &r->loc : p ? &p->loc : NULL;
        char *file = at && at->file ? rf_strdup(at->file) : NULL;
        if (!file) continue;
        if (!with_user && r && total_by_adding(r, gen, g)) x->adding_overflowed = 1;
        free((char *)g->loc.file);
        g->loc = *at;
        g->loc.file = file;
    }
}

/* Runs a compiled generated program with every input from memory; its
** run-time errors name the user's rules (own_errors; gen: its text, NULL:
** as they are). */
static rf_status run_generated(exec_ctx *x, const char *what, const rf_hir_program *hir, const rf_buf *gen,
                               int with_user, rf_rt_result **res, rf_diags *d)
{
    int64_t from = d->count;
    rf_status st = RF_OK;
    /* (between transactions the cache stays: a run's name is unique in its life) */
    int64_t run = x->resident ? rf_txn_resident_next_run(x->resident) : ++x->nruns;
    snprintf(x->pseudo_dir, sizeof x->pseudo_dir, "<redfox exec, run %lld>", (long long)run);
    for (int32_t v = 0; v < hir->nvars && !st; v++) {
        const rf_hir_var *hv = hir->vars[v];
        if (hv->role != RF_HIR_ROLE_INPUT) continue;
        /* a user's input: its name is the predicate's */
        const rf_rt_rel *r = NULL;
        int found = 0;
        for (int32_t i = 0; i < x->t.npreds && !found; i++)
            if (x->t.preds[i].base && !strcmp(x->t.preds[i].fe->input_file, hv->input_file)) {
                found = 1;
                if (!(r = state_after(x, &x->t.preds[i]))) return RF_ENOMEM;
            }
        if (!r) r = rel_for(x, hv);
        if (!r) {
            rf_internal_error(d, rf_mkloc(NULL, 0, 0), "no relation for the generated input `%s`", hv->name);
            return RF_EINTERNAL;
        }
        st = put(x, hv, r);
    }
    rf_rt_options o = x->o;
    o.cache = x->cache;
    o.data_dir = x->pseudo_dir;
    double t0 = rf_now();
    o.profile = x->opt->profile_kernels;
    if (!st) st = rf_rt_run(hir, &o, res, d);
    if (st) own_errors(x, hir, gen, with_user, d, from);
    /* the rows put stand for this run alone (the devices keep the stamped ones) */
    if (x->resident) rf_rt_cache_drop_puts(x->cache);
    if (!st) x->device = (*res)->device;
    if (!st && x->opt->profile) profile_run(x, what, *res, rf_now() - t0);
    if (!st && x->opt->profile_kernels) log_kernels(x, what, *res);
    x->t_runs += rf_now() - t0;
    return st;
}

/* Moves the columns of the output named name out of res into *dst, as p's
** rows (ncols: p's columns), or its keys (the first ncols columns: its keys'
** columns, none where it has one key: a placeholder column): in its stored
** types (a wide total narrowed, txn_store.c). */
static rf_status take_output(rf_rt_result *res, const char *name, const rf_txn_pred *p, int32_t ncols, rf_rt_rel *dst,
                             rf_diags *d)
{
    for (int32_t i = 0; i < res->noutputs; i++)
        if (!strcmp(res->outputs[i].name, name)) {
            *dst = res->outputs[i].rel;
            memset(&res->outputs[i].rel, 0, sizeof res->outputs[i].rel);
            return rf_txn_store_narrow(p, dst, ncols, d);
        }
    rf_internal_error(d, rf_mkloc(NULL, 0, 0), "the generated program has no output `%s`", name);
    return RF_EINTERNAL;
}

/* ---- the two ways of maintenance ------------------------------------------- */

static rf_status recompute(exec_ctx *x, const rf_txn_sources *src, rf_diags *d)
{
    rf_buf gen;
    rf_buf_init(&gen);
    rf_txn_gen_materialize(&x->t, &gen);
    rf_arena arena;
    rf_arena_init(&arena);
    rf_hir_program *hir = NULL;
    rf_rt_result *res = NULL;
    rf_status st = compile(x, src, "<redfox exec: materialization>", &gen, &arena, &hir, d);
    if (!st) st = run_generated(x, "the program (materialization)", hir, &gen, 1, &res, d);
    for (int32_t i = 0; !st && i < x->t.npreds; i++) {
        rf_txn_pred *p = &x->t.preds[i];
        if (p->base) continue;
        char *name = rf_sprintf(RF_TXN_NS "_mat.%s", p->fe->name);
        if (!name) st = RF_ENOMEM;
        else st = take_output(res, name, p, p->ncols, &p->next, d);
        free(name);
        p->has_next = !st;
        p->prefix = 0; /* (recomputed: written whole) */
    }
    rf_rt_result_free(res);
    free_hir(x, hir);
    rf_arena_free(&arena);
    rf_buf_free(&gen);
    return st;
}

static rf_status incremental(exec_ctx *x, rf_diags *d)
{
    rf_buf gen;
    rf_buf_init(&gen);
    rf_txn_gen_delta(&x->t, &gen);
    int any = 0;
    for (int32_t i = 0; i < x->t.npreds; i++) any |= !x->t.preds[i].base && x->t.preds[i].changed;
    if (!any) {
        rf_buf_free(&gen);
        return RF_OK;
    }
    rf_arena arena;
    rf_arena_init(&arena);
    rf_hir_program *hir = NULL;
    rf_rt_result *res = NULL;
    rf_status st = compile(x, NULL, "<redfox exec: delta rules>", &gen, &arena, &hir, d);
    if (!st) st = run_generated(x, "the delta rules (insertions)", hir, &gen, 0, &res, d);
    for (int32_t i = 0; !st && i < x->t.npreds; i++) {
        rf_txn_pred *p = &x->t.preds[i];
        if (p->base || !p->changed) continue;
        char *name = rf_sprintf(RF_TXN_NS "_d.%s", p->fe->name);
        rf_rt_rel delta;
        memset(&delta, 0, sizeof delta);
        if (!name) st = RF_ENOMEM;
        else st = take_output(res, name, p, p->ncols, &delta, d);
        free(name);
        /* the new state is cur, then the new facts (prefix stays): copied
        ** into one relation only for the outputs' run; the commit appends
        ** the new facts to the stored table */
        double t0 = rf_now();
        if (!st && p->fe->output_name) st = rf_txn_rel_concat(&p->cur, &delta, &p->next);
        x->t_merge += rf_now() - t0;
        p->has_next = !st && p->fe->output_name;
        p->tail = !st && !p->has_next;
        p->ins = delta;
    }
    rf_rt_result_free(res);
    free_hir(x, hir);
    rf_arena_free(&arena);
    rf_buf_free(&gen);
    return st;
}

/* The derived predicates by diffs (txn_gen_diff.c): inserts and deletes
** together, in one run; each changed derived predicate's new state into
** next (written whole by the commit). */
static rf_status by_diffs(exec_ctx *x, rf_diags *d)
{
    rf_buf gen;
    rf_buf_init(&gen);
    rf_txn_gen_diff(&x->t, &gen);
    int any = 0;
    for (int32_t i = 0; i < x->t.npreds; i++) any |= !x->t.preds[i].base && x->t.preds[i].changed;
    if (!any || gen.oom) {
        rf_status st = gen.oom ? RF_ENOMEM : RF_OK;
        rf_buf_free(&gen);
        return st;
    }
    rf_arena arena;
    rf_arena_init(&arena);
    rf_hir_program *hir = NULL;
    rf_rt_result *res = NULL;
    rf_status st = compile(x, NULL, "<redfox exec: diffs>", &gen, &arena, &hir, d);
    if (!st) st = run_generated(x, "the diffs (changed keys and groups)", hir, &gen, 0, &res, d);
    double t0 = rf_now();
    for (int32_t i = 0; !st && i < x->t.npreds; i++) {
        rf_txn_pred *p = &x->t.preds[i];
        if (p->base || !p->changed) continue;
        /* the stored rows of the keys not reached, then those recomputed */
        char *kname = rf_sprintf(RF_TXN_NS "_k.%s", p->fe->name), *pname = rf_sprintf(RF_TXN_NS "_part.%s", p->fe->name);
        int32_t nkey = p->fe->functional ? p->fe->arity - 1 : p->fe->arity;
        rf_rt_rel keys, part;
        memset(&keys, 0, sizeof keys);
        memset(&part, 0, sizeof part);
        if (!kname || !pname) st = RF_ENOMEM;
        else if (!(st = take_output(res, kname, p, nkey, &keys, d))) st = take_output(res, pname, p, p->ncols, &part, d);
        if (!st) st = rf_txn_merge_keys(&p->cur, nkey, &keys, &part, &p->next);
        rf_rt_rel_free(&keys);
        rf_rt_rel_free(&part);
        free(kname);
        free(pname);
        p->has_next = !st;
        p->prefix = 0; /* (rows replaced: written whole) */
    }
    x->t_merge += rf_now() - t0;
    rf_rt_result_free(res);
    free_hir(x, hir);
    rf_arena_free(&arena);
    rf_buf_free(&gen);
    return st;
}

/* Deletions by DRed; afterwards cur is the state between the deletes and
** the inserts (base: without the deleted rows; derived: DRed's result), the
** "old" state of the insert phase. */
static rf_status dred(exec_ctx *x, rf_diags *d)
{
    rf_status st = RF_OK;
    for (int32_t i = 0; i < x->t.npreds && !st; i++) {
        rf_txn_pred *p = &x->t.preds[i];
        if (!p->base) continue;
        /* next holds the rows kept, in order, then the inserted ones */
        const rf_rt_rel *from = p->has_next ? &p->next : &p->cur;
        rf_rt_rel kept = *from;
        kept.nrows = from->nrows - (p->has_next ? p->ins.nrows : 0);
        st = rf_txn_rel_copy(&kept, &p->mid);
    }
    /* (no derived predicate: nothing to run, the base ones' kept rows are all) */
    int derived = 0;
    for (int32_t i = 0; i < x->t.npreds; i++) derived |= !x->t.preds[i].base;
    rf_buf gen;
    rf_buf_init(&gen);
    if (!st && derived) rf_txn_gen_dred(&x->t, &gen);
    rf_arena arena;
    rf_arena_init(&arena);
    rf_hir_program *hir = NULL;
    rf_rt_result *res = NULL;
    if (!st && derived) st = compile(x, NULL, "<redfox exec: deletions (DRed)>", &gen, &arena, &hir, d);
    if (!st && derived) st = run_generated(x, "DRed (deletions)", hir, &gen, 0, &res, d);
    for (int32_t i = 0; !st && i < x->t.npreds; i++) {
        rf_txn_pred *p = &x->t.preds[i];
        if (p->base) {
            rf_txn_cur_free(p);
            p->cur = p->mid;
            memset(&p->mid, 0, sizeof p->mid);
            continue;
        }
        if (!p->changed) continue;
        char *name = rf_sprintf(RF_TXN_NS "_cur.%s", p->fe->name);
        rf_rt_rel now;
        memset(&now, 0, sizeof now);
        if (!name) st = RF_ENOMEM;
        else st = take_output(res, name, p, p->ncols, &now, d);
        free(name);
        if (st) {
            rf_rt_rel_free(&now);
            break;
        }
        rf_txn_cur_free(p);
        p->cur = now;
        p->prefix = 0;
        p->changed = 0;
    }
    rf_rt_result_free(res);
    free_hir(x, hir);
    rf_arena_free(&arena);
    rf_buf_free(&gen);
    return st;
}

/* ---- the GPU code of the next transactions, compiled ahead ------------------ */

/* After a recomputation on the GPU: the programs a later transaction runs
** (the delta rules and DRed, as if the batch changed every base predicate)
** compiled into the GPU caches now (NVRTC, the driver's JIT; together on
** the host threads), so that the first incremental exec does not spend
** seconds compiling them: the delta rules' run of a 24 M-tuple closure is
** about 0.1 s of GPU work behind 2-4 s of NVRTC on a cold cache. Nothing
** on the emulator or without NVRTC; a cache hit costs the code generation
** alone. Failures stay silent: the run compiles and reports again. */
static void prepare_ahead(exec_ctx *x, rf_rt_gpu_prepared *pr)
{
    enum { MAX_AHEAD = 8 };
    memset(pr, 0, sizeof *pr);
    if (!x->device || strcmp(x->device, "gpu")) return;
    int delta = !rf_txn_gen_incremental_why_not(x->t.fe);
    if (!delta && rf_txn_gen_diff_why_not(x->t.fe)) return;
    int32_t *changed = rf_calloc((size_t)x->t.npreds + 1, sizeof *changed);
    if (!changed) return;
    for (int32_t i = 0; i < x->t.npreds; i++) changed[i] = x->t.preds[i].changed;
    x->t.all_changed = 1;
    rf_buf gen[MAX_AHEAD];
    rf_arena arena[MAX_AHEAD];
    rf_diags d;
    rf_diags_init(&d);
    const rf_hir_program *ps[MAX_AHEAD];
    rf_hir_program *hir[MAX_AHEAD];
    int32_t n = 0, ngen = 0;
    int show = x->show;
    x->show = 0;
    /* delta rules: the delta rules and DRed; diffs: the diff program of a
    ** batch inserting into one base predicate, for each (a batch touching
    ** several compiles its own when it runs, into the caches) */
    int32_t variants = delta ? 2 : 0;
    for (int32_t i = 0; !delta && i < x->t.npreds && variants < MAX_AHEAD; i++) variants += x->t.preds[i].base;
    for (int32_t k = 0, b = 0; k < variants; k++) {
        rf_buf_init(&gen[k]);
        rf_arena_init(&arena[k]);
        hir[k] = NULL;
        ngen++;
        const char *name = "<redfox exec: diffs>";
        if (delta && k == 0) rf_txn_gen_delta(&x->t, &gen[k]), name = "<redfox exec: delta rules>";
        else if (delta) rf_txn_gen_dred(&x->t, &gen[k]), name = "<redfox exec: deletions (DRed)>";
        else {
            while (!x->t.preds[b].base) b++;
            x->t.ahead_base = b + 1;
            rf_txn_gen_diff(&x->t, &gen[k]);
            b++;
        }
        if (!compile(x, NULL, name, &gen[k], &arena[k], &hir[k], &d)) ps[n++] = hir[k];
    }
    x->show = show;
    x->t.all_changed = 0;
    x->t.ahead_base = 0;
    for (int32_t i = 0; i < x->t.npreds; i++) x->t.preds[i].changed = changed[i];
    free(changed);
    rf_rt_options o = x->o;
    o.cache = x->cache;
    if (n) rf_rt_gpu_prepare(ps, n, &o, pr);
    for (int32_t k = 0; k < ngen; k++) {
        free_hir(x, hir[k]);
        rf_arena_free(&arena[k]);
        rf_buf_free(&gen[k]);
    }
    rf_diags_free(&d);
}

/* The GPU's driver and context started on a thread while the database is
** read (the runs read their inputs from memory, so the driver's own start
** beside the reading hides nothing): hundreds of milliseconds, against
** tens for the delta rules' GPU work. */
static void *start_gpu(void *arg)
{
    (void)arg;
    (void)rf_rt_gpu_available(NULL, 0);
    return NULL;
}

/* ---- the transaction ------------------------------------------------------- */

/* 16 hex digits identifying the program's text. */
static void source_hash(const rf_txn_sources *s, char out[17])
{
    uint32_t a = 0, b = 0x9e3779b9u;
    for (int32_t i = 0; i < s->n; i++) {
        a = rf_db_crc32c(a, s->texts[i], (size_t)s->lens[i]);
        b = rf_db_crc32c(b ^ (uint32_t)s->lens[i], s->texts[i], (size_t)s->lens[i]);
    }
    snprintf(out, 17, "%08x%08x", (unsigned)a, (unsigned)b);
}

static void free_txn(rf_txn *t)
{
    rf_txn_batch_free(t);
    free(t->commit_manifest);
    for (int32_t i = 0; i < t->npreds; i++) {
        rf_txn_pred *p = &t->preds[i];
        rf_txn_cur_free(p);
        rf_rt_rel_free(&p->next);
        rf_rt_rel_free(&p->ins);
        rf_rt_rel_free(&p->del);
        rf_rt_rel_free(&p->mid);
        free(p->view.cols); /* (the kept relation's columns) */
        free(p->table);
        free(p->types);
    }
    free(t->preds);
}

void rf_txn_report_free(rf_txn_report *r)
{
    for (int32_t i = 0; r->derived && i < r->nderived; i++) free(r->derived[i].name);
    free(r->derived);
    rf_buf_free(&r->profile);
    memset(r, 0, sizeof *r);
    rf_buf_init(&r->profile);
}

/* Waits for the end of the last transaction's commit (on a thread since
** it returned: rf_txn_publish), in order before this one's; where it
** failed, so does this transaction, which was built on its state. */
static rf_status previous_commit(exec_ctx *x, const char *db_dir, rf_diags *d)
{
    double waited = 0, took = 0;
    rf_status st = rf_txn_resident_wait_publish(x->resident, db_dir, &waited, &took, d);
    x->publish_wait += waited;
    x->publish_took += took;
    if (st) {
        x->previous_failed = 1;
        rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(db_dir, 0, 0),
                    "the commit of the transaction before this one failed: the database is at the one before it, "
                    "and this transaction, which started from that state, is not applied");
    }
    return st;
}

/* A SIGINT, SIGTERM or SIGHUP came while a commit was under way (the last
** transaction's, ending on a thread; rf_file_hold_signals): this
** transaction stops at its next step, before its commit, not applied; the
** caller ends the process by it once that commit ended. */
static rf_status stop_if_signalled(const char *db_dir, rf_diags *d)
{
    int sig = rf_file_signal_held();
    if (!sig) return RF_OK;
    rf_error(d, rf_mkloc(db_dir, 0, 0), "stopped by %s before its commit: this transaction is not applied",
             rf_file_signal_name(sig));
    return RF_EUSER;
}

/* The report's record of the derived predicates, and the profile's text. */
static rf_status report(exec_ctx *x, rf_txn_report *rep, const char *db_dir, int waited, int gpu_starting,
                        const rf_rt_gpu_prepared *prepared, const double *tm)
{
    enum { T0, T_LOADED, T_READ, T_BATCH, T_STARTED, T_MAINT, T_OUT, T_PREVIOUS, T_COMMIT };
    int32_t n = 0;
    for (int32_t i = 0; i < x->t.npreds; i++) n += !x->t.preds[i].base;
    rep->derived = rf_calloc((size_t)n + 1, sizeof *rep->derived);
    if (!rep->derived) return RF_ENOMEM;
    for (int32_t i = 0; i < x->t.npreds; i++) {
        const rf_txn_pred *p = &x->t.preds[i];
        if (p->base) continue;
        rf_txn_derived *r = &rep->derived[rep->nderived++];
        if (!(r->name = rf_strdup(p->fe->name))) return RF_ENOMEM;
        r->before = p->rows_before;
        r->after = rf_txn_pred_rows(p);
        r->stored = p->stored_how;
        r->how = x->diffs && p->changed ? p->how : NULL;
    }
    if (!x->opt->profile) return RF_OK;
    rf_buf *b = &rep->profile;
    const char *why = rep->why;
    int64_t nins = rep->inserted, ndel = rep->deleted;
    /* (flock says no more than that the lock was held: by another writer,
    ** an exec or an import, or shared by runs reading the database) */
    if (waited)
        rf_buf_printf(b, "exec: waited for the lock on %s (another exec or import committing, or runs reading it)\n",
                      db_dir);
    if (x->overlapped)
        rf_buf_printf(b, "exec: ran while the last transaction's commit ended on a thread (its syncs, manifest and "
                         "exchange: %.3f ms there); waited %.3f ms for that end before this one's commit\n",
                      x->publish_took * 1e3, x->publish_wait * 1e3);
    if (x->kept)
        rf_buf_printf(b, "exec: started from the relations the last transaction of this process kept in memory (the "
                         "database's tables not read)\n");
    if (gpu_starting)
        rf_buf_printf(b, "exec: the GPU started beside the reading; then waited %.3f ms for it\n",
                      (tm[T_STARTED] - tm[T_BATCH]) * 1e3);
    /* a key's row replaced is a row deleted and one inserted, one row
    ** changed toward the switch to recomputing: said where there are any */
    char replaced[160] = "";
    if (rep->replaced)
        snprintf(replaced, sizeof replaced, "; %lld update%s of a key's row (a delete and an insert, one change "
                 "each): %lld row%s changed", (long long)rep->replaced, rep->replaced == 1 ? "" : "s",
                 (long long)(nins + ndel - rep->replaced), nins + ndel - rep->replaced == 1 ? "" : "s");
    rf_buf_printf(b, "exec: batch: %lld row%s inserted, %lld deleted%s (%.3f ms: files read %.3f ms, parsed %.3f ms, "
                  "resolved by key %.3f ms, %d threads)\n", (long long)nins, nins == 1 ? "" : "s", (long long)ndel,
                  replaced, (tm[T_BATCH] - tm[T_READ]) * 1e3, x->t.t_read * 1e3, x->t.t_parse * 1e3, x->t.t_resolve * 1e3,
                  x->t.threads);
    /* (exec --each: the file read on a thread while the transaction before
    ** this one ran; "files read" above counts only what was read now) */
    if (x->t.read_ahead_files)
        rf_buf_printf(b, "exec:   read ahead on a thread, while the compile or the transaction before this one ran: %d "
                         "file%s, %.1f MB, %.3f ms; waited %.3f ms for it\n",
                      (int)x->t.read_ahead_files, x->t.read_ahead_files == 1 ? "" : "s",
                      (double)x->t.read_ahead_bytes / 1e6, x->t.read_ahead_seconds * 1e3, x->opt->read_ahead_wait * 1e3);
    if (x->t.parse_ahead_files)
        rf_buf_printf(b, "exec:   parsed ahead on that thread, once read: %d file%s, %.3f ms (its strings interned, and "
                         "its errors reported, now)\n",
                      (int)x->t.parse_ahead_files, x->t.parse_ahead_files == 1 ? "" : "s", x->t.parse_ahead_seconds * 1e3);
    if (x->t.read_ahead_stale)
        rf_buf_printf(b, "exec:   read ahead, but changed since: %d file%s read again now\n", (int)x->t.read_ahead_stale,
                      x->t.read_ahead_stale == 1 ? "" : "s");
    rf_buf_printf(b, "exec: derived predicates %s%s%s (%.3f ms, runs on device %s %.3f ms, generated programs "
                  "compiled %.3f ms)\n",
                  why ? "recomputed from scratch: " : "maintained incrementally", why ? why : "",
                  why ? "" : x->diffs ? " by diffs (the keys and groups the batch reaches)"
                             : ndel && nins ? " (deletions by DRed, then insertions by delta rules)"
                             : ndel ? " (deletions by DRed)" : " by delta rules",
                  (tm[T_MAINT] - tm[T_STARTED]) * 1e3, x->device ? x->device : "none", x->t_runs * 1e3,
                  x->t_compile_maint * 1e3);
    if (!x->runs.oom && x->runs.len) rf_buf_append(b, x->runs.data, x->runs.len);
    if (prepared->programs)
        rf_buf_printf(b,
                      "exec:   the GPU code of later transactions (delta rules and DRed, or diffs) compiled ahead: %d program%s, "
                      "%d compiled now (NVRTC %.3f ms), %d in the JIT cache (%.3f ms in all)\n",
                      (int)prepared->programs, prepared->programs == 1 ? "" : "s", (int)prepared->compiled,
                      prepared->nvrtc_seconds * 1e3, (int)prepared->jitted, prepared->seconds * 1e3);
    if (x->t_merge > 0)
        rf_buf_printf(b, "exec:   the new states put together (stored rows of the keys not reached, then the recomputed "
                         "ones) %.3f ms\n", x->t_merge * 1e3);
    if (x->t_concat > 0) rf_buf_printf(b, "exec:   the new facts copied after the stored rows %.3f ms\n", x->t_concat * 1e3);
    for (int32_t i = 0; i < rep->nderived; i++) {
        const rf_txn_derived *r = &rep->derived[i];
        rf_buf_printf(b, "exec:   %s: %lld -> %lld tuples (table %s%s%s)\n", r->name, (long long)r->before,
                      (long long)r->after, r->stored ? r->stored : "-", r->how ? "; " : "", r->how ? r->how : "");
    }
    if (x->t.commit_in_place)
        rf_buf_printf(b, "exec: commit: appended %lld bytes in place\n", (long long)x->t.commit_in_place_bytes);
    if (x->publishing)
        rf_buf_printf(b, "exec: commit: the columns written; its syncs, manifest and exchange end on a thread while "
                         "the next transaction runs (its outputs come once they ended)\n");
    if (x->t.commit_linked_bytes || x->t.commit_copied_bytes)
        rf_buf_printf(b,
                      "exec: commit: copy on write; the old rows of the tables that only gained rows: %lld bytes kept "
                      "in their files (linked into the new folder, not copied), %lld bytes copied\n",
                      (long long)x->t.commit_linked_bytes, (long long)x->t.commit_copied_bytes);
    rf_buf_printf(b,
                  "exec: compile %.3f ms, read the database %.3f ms (%.1f MB of columns: mapped and CRC-32C checked "
                  "%.3f ms, copied out %.3f ms), outputs %.3f ms, commit %.3f ms (%lld rows, %.1f MB written, %d thread%s), "
                  "in all %.3f ms\n",
                  (tm[T_LOADED] - tm[T0]) * 1e3, (tm[T_READ] - tm[T_LOADED]) * 1e3, (double)x->t.read_bytes / 1e6,
                  x->t.read_check_seconds * 1e3, x->t.read_copy_seconds * 1e3, (tm[T_OUT] - tm[T_MAINT]) * 1e3,
                  (tm[T_COMMIT] - tm[T_PREVIOUS]) * 1e3, (long long)x->t.commit_rows, (double)x->t.commit_bytes / 1e6,
                  x->t.commit_threads, x->t.commit_threads == 1 ? "" : "s",
                  (tm[T_COMMIT] - tm[T0]) * 1e3);
    return b->oom ? RF_ENOMEM : RF_OK;
}

/* The outputs' variables of the user's program in place of the generated
** program's (freed before the outputs are read): the same names and types,
** and the columns' names the user gave; a total of decimals the database
** stores in 64 bits widened again where the user's program has it wide.
** In the user's program's order (its run's): the generated program's may
** differ (an output of no columns is derived there, the others read). */
static rf_status own_outputs(rf_rt_result *res, const rf_hir_program *user, rf_diags *d)
{
    int32_t *at = rf_calloc((size_t)res->noutputs + 1, sizeof *at);
    if (!at) return RF_ENOMEM;
    for (int32_t i = 0; i < res->noutputs; i++) {
        const rf_hir_var *uv = NULL;
        for (int32_t v = 0; v < user->nvars && !uv; v++)
            if (user->vars[v]->role == RF_HIR_ROLE_OUTPUT && !strcmp(user->vars[v]->output_name, res->outputs[i].name))
                uv = user->vars[v], at[i] = v;
        if (!uv || uv->ncols != res->outputs[i].var->ncols) {
            free(at);
            return RF_EINTERNAL;
        }
        res->outputs[i].name = uv->output_name;
        res->outputs[i].var = uv;
        rf_status st = rf_txn_store_widen(&res->outputs[i].rel, uv->types, d);
        if (st) {
            free(at);
            return st;
        }
    }
    for (int32_t i = 1; i < res->noutputs; i++) { /* insertion sort: a few outputs */
        rf_rt_output o = res->outputs[i];
        int32_t a = at[i], k = i;
        for (; k > 0 && at[k - 1] > a; k--) {
            res->outputs[k] = res->outputs[k - 1];
            at[k] = at[k - 1];
        }
        res->outputs[k] = o;
        at[k] = a;
    }
    free(at);
    return RF_OK;
}

/* One transaction (rf_txn_exec); *redo: it ran while the last commit
** ended, and another process committed between: not applied, to be done
** again from the files. texts (NULL: not wanted): where it runs so, the
** text of each batch read from its file here (not given), for that redo
** (standard input, a FIFO: read once). */
static rf_status exec_once(const rf_txn_sources *src, const rf_fe_program *fe, const rf_hir_program *user,
                           const char *db_dir, const rf_txn_batch_src *batches, int32_t nbatches,
                           const rf_txn_exec_options *opt, rf_txn_resident *resident, rf_rt_result **out,
                           rf_txn_report *rep, int *redo, rf_txn_batch_src *texts, rf_diags *d)
{
    *out = NULL;
    *redo = 0;
    exec_ctx x;
    memset(&x, 0, sizeof x);
    rf_buf_init(&x.runs);
    x.opt = opt;
    x.o = opt->rt;
    x.o.profile = 0;
    x.o.cache = NULL;
    x.show = opt->show_programs;
    x.resident = resident;
    enum { T0, T_LOADED, T_READ, T_BATCH, T_STARTED, T_MAINT, T_OUT, T_PREVIOUS, T_COMMIT, T_N };
    double tm[T_N];
    memset(tm, 0, sizeof tm);
    tm[T0] = opt->start > 0 ? opt->start : rf_now();
    pthread_t gpu_starter;
    int gpu_starting = x.o.device != RF_RT_DEVICE_CPU && rf_rt_gpu_maybe(NULL, 0) &&
                       !pthread_create(&gpu_starter, NULL, start_gpu, NULL);
    rf_db *db = NULL;
    rf_rt_result *res = NULL;
    rf_hir_program *outhir = NULL;
    rf_arena outarena;
    rf_arena_init(&outarena);
    char hash[17];
    rf_status st = RF_OK;
    /* a database reached through a symbolic link: the folder it names is
    ** the database (read, locked, and exchanged by a copy-on-write commit;
    ** the link stays and names the new state) */
    char *real = NULL;
    struct stat lst;
    /* a database a killed commit left aside (no exchange): put back first */
    st = rf_db_restore_missing(db_dir, d);
    if (lstat(db_dir, &lst) == 0 && S_ISLNK(lst.st_mode) && (real = realpath(db_dir, NULL))) db_dir = real;
    if (!st && !rf_db_is_database(db_dir)) {
        rf_error(d, rf_mkloc(db_dir, 0, 0), "not a redfox database (no %s): create it with `redfox import`", RF_DB_MANIFEST);
        st = RF_EUSER;
    }
    /* a base predicate's table is its input's: a batch updates it as that
    ** predicate's rows (its key, its functional dependency), which another
    ** predicate reading the same table would see without its own check */
    for (int32_t i = 0; !st && i < fe->npreds; i++)
        for (int32_t k = 0; !st && k < i && fe->preds[i]->input_file; k++)
            if (fe->preds[k]->input_file && !strcmp(fe->preds[k]->input_file, fe->preds[i]->input_file)) {
                rf_error(d, fe->preds[i]->loc,
                         "`%s` reads the input \"%s\", as `%s` does: exec updates a base predicate's rows in its "
                         "input's table, which two base predicates cannot share (give each its own lang:input)",
                         fe->preds[i]->name, fe->preds[i]->input_file, fe->preds[k]->name);
                st = RF_EUSER;
            }
    int lockfd = -1, waited = 0;
    if (!st) {
        source_hash(src, hash);
        x.t.fe = fe;
        x.t.user = user;
        x.t.source_hash = hash;
        x.t.threads = x.o.threads > 0 ? x.o.threads : rf_online_cpus();
        x.t.fresh = opt->init || opt->recompute;
        x.t.preds = rf_calloc((size_t)fe->npreds + 1, sizeof *x.t.preds);
        x.cache = resident ? rf_txn_resident_cache(resident) : rf_rt_cache_new();
        if (!x.t.preds || !x.cache) st = RF_ENOMEM;
    }
    for (int32_t i = 0; !st && i < fe->npreds; i++) {
        const rf_fe_pred *q = fe->preds[i];
        if (!rf_txn_pred_has_rows(q)) continue; /* (the order rf_txn_parse_ahead gives too) */
        rf_txn_pred *p = &x.t.preds[x.t.npreds++];
        p->fe = q;
        p->base = q->input_file != NULL;
        p->table = p->base ? rf_strdup(q->input_file) : rf_txn_store_table_name(&x.t, q);
        /* (a total of decimals stored in the database's 64 bits: txn_store.c) */
        p->ncols = q->arity ? q->arity : 1;
        p->types = rf_malloc(((size_t)p->ncols + 1) * sizeof *p->types);
        for (int32_t c = 0; p->types && c < q->arity; c++) p->types[c] = rf_txn_store_type(q->types[c]);
        if (p->types && !q->arity) p->types[0] = RF_TYPE_BOOL;
        if (!p->table || !p->types) st = RF_ENOMEM;
    }
    if (!st) x.t.dict = rf_rt_cache_dict(x.cache);
    /* the last transaction's commit still ending on a thread (exec --each):
    ** this one starts from the state it kept, without the lock, and waits
    ** for that end before its own commit; where it cannot start from it (an
    ** other program), that end is waited for now */
    if (!st && resident && rf_txn_resident_publishing(resident)) {
        st = rf_txn_resident_take(resident, &x.t, db_dir, &x.kept);
        x.overlapped = !st && x.kept;
        if (!st && !x.kept) st = previous_commit(&x, db_dir, d);
    }
    if (!st) st = stop_if_signalled(db_dir, d);
    /* one transaction at a time per database: a second exec waits, then
    ** reads what the first committed (no update is lost) */
    if (!st && !x.overlapped) st = rf_file_lock_folder(db_dir, &lockfd, &waited, d);
    /* a user's subfolders an earlier exec killed mid-commit left aside */
    if (!st && !x.overlapped) rf_db_recover_subfolders(db_dir, d);
    if (!st && !x.overlapped) st = rf_db_open(db_dir, &db, d);
    tm[T_LOADED] = rf_now();
    if (!st && resident && !x.overlapped) st = rf_txn_resident_take(resident, &x.t, db_dir, &x.kept);
    if (!st && !x.kept) st = rf_txn_store_load(&x.t, db, d);
    tm[T_READ] = rf_now();
    for (int32_t i = 0; !st && i < nbatches; i++) {
        const rf_txn_batch_src *s = &batches[i];
        st = rf_txn_batch_apply(&x.t, s->name, s->text, s->len, s->borrowed, s->parsed, d);
        if (!st && x.overlapped && texts && !s->text) {
            char *copy = NULL;
            st = rf_txn_batch_copy_text(&x.t, i, &copy, &texts[i].len);
            texts[i].text = copy;
        }
        x.t.read_ahead_stale += s->ahead_stale;
        if (s->ahead && s->text) {
            x.t.read_ahead_files++;
            x.t.read_ahead_bytes += s->len;
            x.t.read_ahead_seconds += s->ahead->seconds;
        }
    }
    if (!st && nbatches) st = rf_txn_batch_finish(&x.t, d);
    if (!st && x.kept) st = rf_txn_resident_stage(resident, &x.t);
    if (!st) st = stop_if_signalled(db_dir, d);
    tm[T_BATCH] = rf_now();
    if (gpu_starting) pthread_join(gpu_starter, NULL);
    tm[T_STARTED] = rf_now();
    /* how: incremental where every derived predicate is stored, the batch
    ** only inserts and the rules allow it */
    const char *why = NULL;
    int64_t nins = 0, ndel = 0, nrep = 0;
    rf_rt_gpu_prepared prepared;
    memset(&prepared, 0, sizeof prepared);
    for (int32_t i = 0; !st && i < x.t.npreds; i++) {
        rf_txn_pred *p = &x.t.preds[i];
        nins += p->ins.nrows;
        ndel += p->del.nrows;
        nrep += p->replaced;
        if (!p->base && !p->stored && !why) why = "the first exec of this program on the database: its derived predicates are computed and stored";
    }
    if (!st && x.t.stale)
        why = "the derived predicates the database holds for this program were not computed from its base data as "
              "it is now (another program, or another version of this one, changed it since, or a redfox that "
              "did not record it stored them): computed and stored again";
    if (!st) {
        if (opt->init) why = "--init";
        else if (opt->recompute) why = "--recompute";
        /* the delta rules where the program allows them (recursion kept
        ** incrementally); else diffs where it allows those */
        if (!why && rf_txn_gen_incremental_why_not(fe)) {
            why = rf_txn_gen_diff_why_not(fe);
            x.diffs = !why;
            /* asked for, and not possible: said, not done silently */
            if (why && opt->incremental)
                rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(db_dir, 0, 0),
                            "--incremental: this program's derived predicates are recomputed from scratch, which "
                            "incremental maintenance cannot keep: %s",
                            why);
        }
        /* Diffs cost about the batch, a recompute about the stored rows:
        ** TPC-B on an H100 host (10^6 transactions a batch over 1-3 M
        ** history rows) took 1.0-1.15 s by diffs against 0.3-0.64 s
        ** recomputed, on both devices; on dev the two met near a batch of an
        ** eighth of the stored rows. (The delta rules of recursion are not
        ** weighed: they stay incremental.) A key's row replaced (a
        ** functional update: its old row deleted, its new one inserted) is
        ** one row changed, as a user updating an eighth of the keys
        ** changes an eighth of the rows. */
        if (!why && x.diffs && !opt->incremental) {
            int64_t stored = 0;
            for (int32_t i = 0; i < x.t.npreds; i++)
                if (x.t.preds[i].base) stored += x.t.preds[i].cur.nrows;
            if (nins + ndel - nrep > stored / 8) {
                why = "the batch changes more than an eighth of the base predicates' stored rows (a key's row "
                      "replaced counts once), where recomputing costs less than diffs (--incremental maintains it "
                      "anyway)";
                x.diffs = 0;
            }
        }
        for (int32_t i = 0; i < x.t.npreds; i++)
            if (!x.t.preds[i].unread) x.t.preds[i].rows_before = x.t.preds[i].cur.nrows;
        if (why) st = recompute(&x, src, d);
        /* (once a process: the GPU caches keep what it compiled) */
        if (why && !st && !(resident && rf_txn_resident_prepared(resident, 0))) {
            prepare_ahead(&x, &prepared);
            if (resident && prepared.programs) (void)rf_txn_resident_prepared(resident, 1);
        }
        if (!why && x.diffs && (nins || ndel)) {
            int64_t count = d->count, nerrors = d->nerrors;
            st = by_diffs(&x, d);
            /* a total kept by adding that overflowed: recomputed, for the
            ** run's words (the group), the addition's error dropped */
            if (st == RF_EUSER && x.adding_overflowed) {
                rf_diags_truncate(d, count, nerrors);
                st = recompute(&x, src, d);
            }
        }
        if (!why && !x.diffs && ndel) st = dred(&x, d);
        if (!why && !x.diffs && !st && nins) st = incremental(&x, d);
    }
    if (!st) st = stop_if_signalled(db_dir, d);
    tm[T_MAINT] = rf_now();
    x.t_compile_maint = x.t_compile;
    int32_t nout = 0;
    for (int32_t i = 0; !st && i < fe->npreds; i++) nout += fe->preds[i]->output_name != NULL;
    if (!st && nout) {
        rf_buf gen;
        rf_buf_init(&gen);
        rf_txn_gen_outputs(&x.t, &gen);
        st = compile(&x, NULL, "<redfox exec: outputs>", &gen, &outarena, &outhir, d);
        rf_buf_free(&gen);
        double tr = x.t_runs;
        if (!st) st = run_generated(&x, "the outputs", outhir, NULL, 0, &res, d);
        x.t_runs = tr;
        if (!st) st = own_outputs(res, user, d);
    }
    tm[T_OUT] = rf_now();
    /* overlapped: the last commit ended first (commits in order), then the
    ** lock; the database must be what that commit left, else another
    ** process committed between and this transaction is done again from
    ** the files (*redo) */
    if (!st && x.overlapped) st = previous_commit(&x, db_dir, d);
    if (!st) st = stop_if_signalled(db_dir, d);
    if (!st && x.overlapped) st = rf_file_lock_folder(db_dir, &lockfd, &waited, d);
    if (!st && x.overlapped) rf_db_recover_subfolders(db_dir, d);
    if (!st && x.overlapped) st = rf_db_open(db_dir, &db, d);
    if (!st && x.overlapped && !rf_txn_resident_current(resident, db_dir)) {
        *redo = 1;
        st = RF_EUSER;
    }
    tm[T_PREVIOUS] = rf_now();
    /* with async_commit, a copy-on-write commit's last step (its syncs,
    ** manifest and exchange, which read nothing of the state) ends on a
    ** thread, holding the lock and the database until then */
    rf_db_writer *left = NULL;
    /* the commit, from its temporary folder's creation to its exchange
    ** (ending on a thread: to that thread's end, rf_txn_publish), is not
    ** cut short by a SIGINT, SIGTERM or SIGHUP: it ends, its folder gone,
    ** and then the caller ends the process by the signal */
    rf_file_hold_signals();
    /* (a signal whose handler ran, on another thread, between the check
    ** above and the hold: no folder made for a process about to end) */
    if (!st) st = stop_if_signalled(db_dir, d);
    if (!st) st = rf_txn_store_commit(&x.t, db, db_dir, resident && opt->async_commit ? &left : NULL, d);
    /* the relations kept for the next transaction: the state committed (and
    ** its manifest, read under the lock, here or on the thread); where they
    ** cannot be kept, the next one reads the tables. A failed transaction
    ** leaves them as they were. (Kept before the thread starts: they may be
    ** copied from db's mapped files, which the thread closes.) */
    if (resident && !st) (void)rf_txn_resident_commit(resident, &x.t, left != NULL);
    else if (resident) rf_txn_resident_abort(resident, &x.t);
    if (!st && left) {
        rf_txn_publish *pub = NULL;
        st = rf_txn_publish_start(left, db, lockfd, db_dir, &pub);
        if (st) rf_db_writer_free(left); /* (nothing committed: the new folder removed) */
        if (resident) rf_txn_resident_publish(resident, pub);
        if (pub) {
            db = NULL;
            lockfd = -1;
            x.publishing = 1;
        }
    }
    rf_file_release_signals();
    /* failed while the last commit was still ending: its end waited for
    ** (the caller says which transactions are committed) */
    if (st && resident && rf_txn_resident_publishing(resident)) (void)previous_commit(&x, db_dir, d);
    tm[T_COMMIT] = rf_now();
    rf_file_unlock(lockfd);
    if (!st) {
        rep->why = why;
        rep->inserted = nins;
        rep->deleted = ndel;
        rep->replaced = nrep;
        rep->device = x.device;
        st = report(&x, rep, db_dir, waited, gpu_starting, &prepared, tm);
    }
    /* the result keeps the strings its outputs are coded in (a copy where
    ** the cache's dictionary stays for the next transaction) */
    if (!st && res && !resident) rf_rt_cache_give_dict(x.cache, res);
    if (!st && res && resident && res->dict_borrowed) {
        rf_rt_dict *copy = rf_rt_dict_copy(res->dict);
        if (!copy) st = RF_ENOMEM;
        else {
            res->dict = copy;
            res->dict_borrowed = 0;
        }
    }
    if (!st) *out = res;
    else rf_rt_result_free(res);
    rf_buf_free(&x.runs);
    free_txn(&x.t);
    if (!resident) rf_rt_cache_free(x.cache);
    rf_db_close(db);
    free_hir(&x, outhir);
    rf_arena_free(&outarena);
    free(real);
    rep->previous_failed = x.previous_failed;
    return st;
}

rf_status rf_txn_exec(const rf_txn_sources *src, const rf_fe_program *fe, const rf_hir_program *user,
                      const char *db_dir, const rf_txn_batch_src *batches, int32_t nbatches,
                      const rf_txn_exec_options *opt, rf_txn_resident *resident, rf_rt_result **out,
                      rf_txn_report *rep, rf_diags *d)
{
    int64_t count = d->count, nerrors = d->nerrors;
    int redo = 0;
    /* the batches to do again where it comes to that: those read from their
    ** files the first time as they were read then (a second read of
    ** standard input or a FIFO finds nothing) */
    rf_txn_batch_src *again = rf_calloc((size_t)nbatches + 1, sizeof *again);
    char **copies = rf_calloc((size_t)nbatches + 1, sizeof *copies);
    if (!again || !copies) {
        free(again);
        free(copies);
        return RF_ENOMEM;
    }
    rf_status st = exec_once(src, fe, user, db_dir, batches, nbatches, opt, resident, out, rep, &redo, again, d);
    int redone = redo;
    if (redo) { /* (the last commit has ended: this time from the files, under the lock) */
        rf_diags_truncate(d, count, nerrors);
        for (int32_t i = 0; i < nbatches; i++) {
            copies[i] = (char *)again[i].text;
            int64_t len = again[i].len;
            again[i] = batches[i];
            if (copies[i]) {
                again[i].text = copies[i];
                again[i].len = len;
                again[i].borrowed = 1;
            }
        }
        st = exec_once(src, fe, user, db_dir, again, nbatches, opt, resident, out, rep, &redo, NULL, d);
        if (!st && opt->profile) {
            rf_buf b;
            rf_buf_init(&b);
            rf_buf_puts(&b, "exec: done again from the database's files: another process committed between the end of "
                            "the last transaction's commit and this one's\n");
            if (rep->profile.len) rf_buf_append(&b, rep->profile.data, rep->profile.len);
            if (b.oom) st = RF_ENOMEM;
            rf_buf_free(&rep->profile);
            rep->profile = b;
        }
    }
    /* the copies (in again until a redo, then in copies) */
    for (int32_t i = 0; i < nbatches; i++) free(redone ? copies[i] : (char *)again[i].text);
    free(copies);
    free(again);
    return st;
}
