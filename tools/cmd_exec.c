/*
** tools/cmd_exec.c: `redfox exec`: one transaction over a redfox database.
**
** Owns: the command line, and the order of a transaction: the program
** compiled, the database's tables read, the batches applied (txn_batch.c),
** the derived predicates brought up to date (by the delta rules of
** txn_gen.c where the program and the batch allow, else recomputed from
** scratch, which --profile says), the new state committed (txn_store.c),
** then the outputs printed as `redfox run` prints them. Every run goes
** through the runtime's one driver, on the device --device chooses. Also
** the GPU started beside the reading, the next transactions' GPU code
** compiled ahead after a recomputation on the GPU, and --profile's lines.
*/
#include "pipeline.h"
#include "rf_rt_gpu.h"
#include "rf_file.h"
#include "rf_sys.h"
#include "tools.h"
#include "rf_txn.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: redfox exec DB PROG.logic... [--batch FILE]... [--init] [--recompute]\n"
    "                   [--device auto|cpu|gpu] [--threads N] [--format table|csv|tbl]\n"
    "                   [--profile] [--set NAME=VALUE]\n"
    "\n"
    "Runs one transaction over the redfox database DB (`redfox import`): the\n"
    "transaction files' inserts and deletes are applied to the program's base\n"
    "predicates (those with lang:input), in order, all or none; the program's\n"
    "derived predicates are kept in DB, brought up to date incrementally; then\n"
    "the program's outputs are printed as `redfox run` prints them. The first\n"
    "exec of a program on DB computes and stores its derived predicates.\n"
    "A transaction file holds one update a line (// comments, blank lines):\n"
    "  +edge(1, 2).          insert a fact\n"
    "  -edge(3, 4).          delete a fact\n"
    "  +price[\"apple\"] = 1.5.  a functional predicate's form\n"
    "Strings in double quotes (\\\" \\\\ \\n \\t), other values as in input files.\n"
    "A fact given twice, or deleting one that is not there, changes nothing; an\n"
    "insert whose key (lang:input:key, or a functional predicate's keys) another\n"
    "row holds aborts the transaction (delete that row first, earlier in the batch).\n"
    "\n"
    "options:\n"
    "  --batch FILE         a transaction file (repeatable: applied in order)\n"
    "  --init               recompute and store every derived predicate\n"
    "  --recompute          recompute the derived predicates from scratch instead\n"
    "                       of incrementally (to compare)\n"
    "  --device D           auto (default), cpu or gpu: where the program runs\n"
    "  --threads N          CPU threads (default: all cores)\n"
    "  --format F           table (default), csv or tbl, as `redfox run`\n"
    "  --profile            how the derived predicates were maintained and where\n"
    "                       the time went, on stderr\n"
    "  --profile-kernels    also each run's kernels, as `redfox run --profile`\n"
    "  --show-programs      print the programs exec generates (the delta rules,\n"
    "                       DRed's, the outputs') on stderr\n"
    "  --set NAME=VALUE     a tuning setting (see `redfox run --help`)\n"
    "  -h, --help           this text\n";

typedef struct exec_ctx {
    rf_txn t;
    rf_rt_options o;
    rf_rt_cache *cache;
    char pseudo_dir[64];    /* the data folder the generated programs' inputs stand in (one per run: the
                               cache keeps every run's inputs, and one name may mean other rows later) */
    int32_t nruns;
    const char *device;     /* where the last run ran */
    int kernels;            /* --profile-kernels: each run's kernels */
    int show;               /* --show-programs: the generated programs' text */
    int profile;
    double t_runs;
    double t_concat;        /* host copies of stored relations and new facts into one (--profile) */
    rf_buf runs;            /* --profile: a line per run */
} exec_ctx;

/* ---- runs of generated programs ------------------------------------------ */

/* Compiles the sources (the user's, plus generated text) as one program. */
static int show_programs; /* --show-programs */

static rf_status compile(const rf_tool_sources *user, const char *gen_name, rf_buf *gen, rf_arena *arena,
                         rf_hir_program **hir, rf_diags *d)
{
    if (show_programs && !gen->oom) fprintf(stderr, "exec: %s\n%s\n", gen_name, rf_buf_cstr(gen));
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
        rf_tool_opts to = {0};
        rf_qp_program *qp = NULL;
        st = rf_tool_compile_sources(names, texts, lens, n, &to, arena, NULL, &qp, hir, d);
        rf_qp_free(qp);
    }
    free(names);
    free(texts);
    free(lens);
    return st;
}

/* Hands rel (the caller keeps its columns) to the next run as input v. */
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
        st = rf_rt_cache_put(x->cache, path, v, &r, foreign);
    }
    if (st) free(r.cols);
    free(path);
    free(foreign);
    return st;
}

/* The relation standing for input variable v of a generated program. */
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
        return p->has_next ? &p->next : &p->cur; /* _out, or the user's own inputs */
    }
    return NULL;
}

/* --profile's line for one run: where its time went (the device's start,
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

/* Runs a compiled generated program with every input from memory. */
static rf_status run_generated(exec_ctx *x, const char *what, const rf_hir_program *hir, rf_rt_result **res,
                               rf_diags *d)
{
    rf_status st = RF_OK;
    snprintf(x->pseudo_dir, sizeof x->pseudo_dir, "<redfox exec, run %d>", (int)++x->nruns);
    for (int32_t v = 0; v < hir->nvars && !st; v++) {
        const rf_hir_var *hv = hir->vars[v];
        if (hv->role != RF_HIR_ROLE_INPUT) continue;
        /* a user's input: its name is the predicate's */
        const rf_rt_rel *r = NULL;
        for (int32_t i = 0; i < x->t.npreds && !r; i++)
            if (x->t.preds[i].base && !strcmp(x->t.preds[i].fe->input_file, hv->input_file))
                r = x->t.preds[i].has_next ? &x->t.preds[i].next : &x->t.preds[i].cur;
        if (!r) r = rel_for(x, hv);
        if (!r) {
            rf_error(d, rf_mkloc(NULL, 0, 0), "internal error: no relation for the generated input `%s`", hv->name);
            return RF_EINTERNAL;
        }
        st = put(x, hv, r);
    }
    rf_rt_options o = x->o;
    o.cache = x->cache;
    o.data_dir = x->pseudo_dir;
    double t0 = rf_now();
    o.profile = x->kernels;
    if (!st) st = rf_rt_run(hir, &o, res, d);
    if (!st) x->device = (*res)->device;
    if (!st && x->profile) profile_run(x, what, *res, rf_now() - t0);
    if (!st && x->kernels) {
        fprintf(stderr, "exec: the run of %s\n", what);
        rf_tool_print_profile(*res, stderr);
    }
    x->t_runs += rf_now() - t0;
    return st;
}

/* Moves the columns of the output named name out of res into *dst. */
static int take_output(rf_rt_result *res, const char *name, rf_rt_rel *dst, const rf_type *types)
{
    for (int32_t i = 0; i < res->noutputs; i++)
        if (!strcmp(res->outputs[i].name, name)) {
            *dst = res->outputs[i].rel;
            dst->types = types;
            memset(&res->outputs[i].rel, 0, sizeof res->outputs[i].rel);
            return 1;
        }
    return 0;
}

/* ---- the two ways of maintenance ------------------------------------------- */

static rf_status recompute(exec_ctx *x, const rf_tool_sources *src, rf_diags *d)
{
    rf_buf gen;
    rf_buf_init(&gen);
    rf_txn_gen_materialize(&x->t, &gen);
    rf_arena arena;
    rf_arena_init(&arena);
    rf_hir_program *hir = NULL;
    rf_rt_result *res = NULL;
    rf_status st = compile(src, "<redfox exec: materialization>", &gen, &arena, &hir, d);
    if (!st) st = run_generated(x, "the program (materialization)", hir, &res, d);
    for (int32_t i = 0; !st && i < x->t.npreds; i++) {
        rf_txn_pred *p = &x->t.preds[i];
        if (p->base) continue;
        char *name = rf_sprintf(RF_TXN_NS "_mat.%s", p->fe->name);
        if (!name) st = RF_ENOMEM;
        else if (!take_output(res, name, &p->next, p->fe->types)) st = RF_EINTERNAL;
        free(name);
        p->has_next = !st;
        p->prefix = 0; /* (recomputed: written whole) */
    }
    rf_rt_result_free(res);
    rf_hir_free(hir);
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
    rf_status st = compile(NULL, "<redfox exec: delta rules>", &gen, &arena, &hir, d);
    if (!st) st = run_generated(x, "the delta rules (insertions)", hir, &res, d);
    for (int32_t i = 0; !st && i < x->t.npreds; i++) {
        rf_txn_pred *p = &x->t.preds[i];
        if (p->base || !p->changed) continue;
        char *name = rf_sprintf(RF_TXN_NS "_d.%s", p->fe->name);
        rf_rt_rel delta;
        memset(&delta, 0, sizeof delta);
        if (!name) st = RF_ENOMEM;
        else if (!take_output(res, name, &delta, p->fe->types)) st = RF_EINTERNAL;
        free(name);
        /* the new state is cur, then the new facts (prefix stays): copied
        ** into one relation only for the outputs' run; the commit appends
        ** the new facts to the stored table */
        double t0 = rf_now();
        if (!st && p->fe->output_name) st = rf_txn_rel_concat(&p->cur, &delta, &p->next);
        x->t_concat += rf_now() - t0;
        p->has_next = !st && p->fe->output_name;
        p->tail = !st && !p->has_next;
        p->ins = delta;
    }
    rf_rt_result_free(res);
    rf_hir_free(hir);
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
    rf_buf gen;
    rf_buf_init(&gen);
    if (!st) rf_txn_gen_dred(&x->t, &gen);
    rf_arena arena;
    rf_arena_init(&arena);
    rf_hir_program *hir = NULL;
    rf_rt_result *res = NULL;
    if (!st) st = compile(NULL, "<redfox exec: deletions (DRed)>", &gen, &arena, &hir, d);
    if (!st) st = run_generated(x, "DRed (deletions)", hir, &res, d);
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
        else if (!take_output(res, name, &now, p->fe->types)) st = RF_EINTERNAL;
        free(name);
        if (st) break;
        rf_txn_cur_free(p);
        p->cur = now;
        p->prefix = 0;
        p->changed = 0;
    }
    rf_rt_result_free(res);
    rf_hir_free(hir);
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
    memset(pr, 0, sizeof *pr);
    if (!x->device || strcmp(x->device, "gpu") || rf_txn_gen_incremental_why_not(x->t.fe)) return;
    int32_t *changed = rf_calloc((size_t)x->t.npreds + 1, sizeof *changed);
    if (!changed) return;
    for (int32_t i = 0; i < x->t.npreds; i++) changed[i] = x->t.preds[i].changed;
    x->t.all_changed = 1;
    rf_buf gen[2];
    rf_arena arena[2];
    rf_diags d;
    rf_diags_init(&d);
    const rf_hir_program *ps[2];
    rf_hir_program *hir[2] = {NULL, NULL};
    int32_t n = 0;
    int show = show_programs;
    show_programs = 0;
    for (int k = 0; k < 2; k++) {
        rf_buf_init(&gen[k]);
        rf_arena_init(&arena[k]);
        if (k == 0) rf_txn_gen_delta(&x->t, &gen[k]);
        else rf_txn_gen_dred(&x->t, &gen[k]);
        if (!compile(NULL, k ? "<redfox exec: deletions (DRed)>" : "<redfox exec: delta rules>", &gen[k], &arena[k],
                     &hir[k], &d))
            ps[n++] = hir[k];
    }
    show_programs = show;
    x->t.all_changed = 0;
    for (int32_t i = 0; i < x->t.npreds; i++) x->t.preds[i].changed = changed[i];
    free(changed);
    rf_rt_options o = x->o;
    o.cache = x->cache;
    if (n) rf_rt_gpu_prepare(ps, n, &o, pr);
    for (int k = 0; k < 2; k++) {
        rf_hir_free(hir[k]);
        rf_arena_free(&arena[k]);
        rf_buf_free(&gen[k]);
    }
    rf_diags_free(&d);
}

/* The GPU's driver and context started on a thread while the program is
** compiled and the database read (the runs read their inputs from memory,
** so the driver's own start beside the reading hides nothing): hundreds of
** milliseconds, against tens for the delta rules' GPU work. */
static void *start_gpu(void *arg)
{
    (void)arg;
    (void)rf_rt_gpu_available(NULL, 0);
    return NULL;
}

/* ---- outputs ---------------------------------------------------------------- */

static int print_outputs(const rf_rt_result *res, const rf_hir_program *user, rf_rt_format fmt)
{
    for (int32_t i = 0; i < res->noutputs; i++) {
        const rf_rt_output *o = &res->outputs[i];
        const char *const *colnames = o->var->colnames;
        for (int32_t v = 0; v < user->nvars; v++) /* the user's column names, as `run` prints them */
            if (user->vars[v]->role == RF_HIR_ROLE_OUTPUT && !strcmp(user->vars[v]->output_name, o->name))
                colnames = user->vars[v]->colnames;
        if (res->noutputs > 1 || fmt == RF_RT_FORMAT_TABLE)
            printf("%s%s (%lld row%s)\n", i ? "\n" : "", o->name, (long long)o->rel.nrows, o->rel.nrows == 1 ? "" : "s");
        rf_status st = rf_rt_write_rel(&o->rel, colnames, res->dict, fmt, stdout);
        if (st) {
            fprintf(stderr, "redfox exec: cannot write the output: %s\n", st == RF_EIO ? strerror(errno) : "out of memory");
            return RF_EXIT_USER;
        }
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "redfox exec: cannot write the output: %s\n", strerror(errno));
        return RF_EXIT_USER;
    }
    return RF_EXIT_OK;
}

/* ---- the command ----------------------------------------------------------- */

/* 16 hex digits identifying the program's text. */
static void source_hash(const rf_tool_sources *s, char out[17])
{
    uint32_t a = 0, b = 0x9e3779b9u;
    for (int32_t i = 0; i < s->n; i++) {
        a = rf_db_crc32c(a, s->texts[i], s->lens[i]);
        b = rf_db_crc32c(b ^ (uint32_t)s->lens[i], s->texts[i], s->lens[i]);
    }
    snprintf(out, 17, "%08x%08x", (unsigned)a, (unsigned)b);
}

static void free_txn(rf_txn *t)
{
    rf_txn_batch_free(t);
    for (int32_t i = 0; i < t->npreds; i++) {
        rf_txn_pred *p = &t->preds[i];
        rf_txn_cur_free(p);
        rf_rt_rel_free(&p->next);
        rf_rt_rel_free(&p->ins);
        rf_rt_rel_free(&p->del);
        rf_rt_rel_free(&p->mid);
        free(p->table);
    }
    free(t->preds);
}

int rf_tool_exec(int argc, char **argv)
{
    const char *progs[256], *batches[4096];
    int32_t nprogs = 0, nbatches = 0;
    const char *db_dir = NULL, *device = "auto", *format = NULL, *threads = NULL, *batch = NULL;
    int profile = 0, init = 0, force_recompute = 0;
    rf_rt_tuning tune;
    rf_rt_tuning_init(&tune);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    rf_buf_init(&x.runs);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return RF_EXIT_OK;
        }
        if (!strcmp(a, "--profile-kernels") || !strcmp(a, "--show-programs")) {
            x.kernels |= a[2] == 'p';
            x.show |= a[2] == 's';
            continue;
        }
        if (!strcmp(a, "--profile") || !strcmp(a, "--init") || !strcmp(a, "--recompute")) {
            profile |= a[2] == 'p';
            init |= a[2] == 'i';
            force_recompute |= a[2] == 'r';
            continue;
        }
        if ((m = rf_tool_opt_set("exec", argc, argv, &i, &tune)) ||
            (m = rf_tool_opt_value("exec", argc, argv, &i, "--device", &device)) ||
            (m = rf_tool_opt_value("exec", argc, argv, &i, "--format", &format)) ||
            (m = rf_tool_opt_value("exec", argc, argv, &i, "--threads", &threads))) {
            if (m < 0) return RF_EXIT_USAGE;
        } else if ((m = rf_tool_opt_value("exec", argc, argv, &i, "--batch", &batch))) {
            if (m < 0) return RF_EXIT_USAGE;
            if (nbatches == 4096) return rf_tool_usage_error("exec", "too many batches (at most 4096)");
            batches[nbatches++] = batch;
        } else if (a[0] == '-' && a[1]) {
            return rf_tool_usage_error("exec", "unknown option '%s'", a);
        } else if (!db_dir) {
            db_dir = a;
        } else if (nprogs == 256) {
            return rf_tool_usage_error("exec", "too many files (at most 256)");
        } else {
            progs[nprogs++] = a;
        }
    }
    if (!db_dir) return rf_tool_usage_error("exec", "no database given");
    if (!nprogs) return rf_tool_usage_error("exec", "no program given");
    x.profile = profile;
    show_programs = x.show;
    x.o.profile = 0;
    x.o.tuning = &tune;
    rf_tool_apply_tuning(&tune);
    rf_rt_format fmt;
    if (!format) format = "table";
    if (!rf_tool_run_options("exec", device, threads, format, &x.o, &fmt)) return RF_EXIT_USAGE;
    double t0 = rf_now();
    pthread_t gpu_starter;
    int gpu_starting = x.o.device != RF_RT_DEVICE_CPU && rf_rt_gpu_maybe(NULL, 0) &&
                       !pthread_create(&gpu_starter, NULL, start_gpu, NULL);
    rf_diags d;
    rf_diags_init(&d);
    rf_arena arena;
    rf_arena_init(&arena);
    rf_tool_sources src;
    memset(&src, 0, sizeof src);
    rf_fe_program *fe = NULL;
    rf_qp_program *qp = NULL;
    rf_hir_program *user = NULL;
    rf_db *db = NULL;
    rf_rt_result *res = NULL;
    rf_hir_program *outhir = NULL;
    rf_arena outarena;
    rf_arena_init(&outarena);
    char hash[17];
    rf_status st = rf_tool_read_sources(progs, nprogs, &arena, &src, &d);
    for (int32_t i = 0; !st && i < src.n; i++)
        if (rf_tool_source_is_rfx(&src, i)) {
            rf_error(&d, rf_mkloc(src.names[i], 0, 0),
                     "redfox exec takes the program's LogiQL source (it derives the delta rules from its rules), not a .rfx file");
            st = RF_EUSAGE;
        }
    rf_tool_opts to = {0};
    if (!st) st = rf_tool_compile_sources(src.names, src.texts, src.lens, src.n, &to, &arena, &fe, &qp, &user, &d);
    if (!st && !rf_db_is_database(db_dir)) {
        rf_error(&d, rf_mkloc(db_dir, 0, 0), "not a redfox database (no %s): create it with `redfox import`", RF_DB_MANIFEST);
        st = RF_EUSER;
    }
    /* one transaction at a time per database: a second exec waits, then
    ** reads what the first committed (no update is lost) */
    int lockfd = -1, waited = 0;
    if (!st) st = rf_file_lock_folder(db_dir, &lockfd, &waited, &d);
    if (!st) st = rf_db_open(db_dir, &db, &d);
    if (!st) {
        source_hash(&src, hash);
        x.t.fe = fe;
        x.t.source_hash = hash;
        x.t.threads = x.o.threads > 0 ? x.o.threads : rf_online_cpus();
        x.t.preds = rf_calloc((size_t)fe->npreds + 1, sizeof *x.t.preds);
        x.cache = rf_rt_cache_new();
        if (!x.t.preds || !x.cache) st = RF_ENOMEM;
    }
    for (int32_t i = 0; !st && i < fe->npreds; i++) {
        const rf_fe_pred *q = fe->preds[i];
        if (!q->input_file && (!q->nrules || q->aux)) continue;
        rf_txn_pred *p = &x.t.preds[x.t.npreds++];
        p->fe = q;
        p->base = q->input_file != NULL;
        p->table = p->base ? rf_strdup(q->input_file) : rf_txn_store_table_name(&x.t, q);
        if (!p->table) st = RF_ENOMEM;
    }
    if (!st) x.t.dict = rf_rt_cache_dict(x.cache);
    double t_loaded = rf_now();
    if (!st) st = rf_txn_store_load(&x.t, db, &d);
    double t_read = rf_now();
    for (int32_t i = 0; !st && i < nbatches; i++) st = rf_txn_batch_apply(&x.t, batches[i], NULL, 0, &d);
    if (!st && nbatches) st = rf_txn_batch_finish(&x.t, &d);
    double t_batch = rf_now();
    if (gpu_starting) pthread_join(gpu_starter, NULL);
    double t_started = rf_now(), t_gpu_wait = t_started - t_batch;
    /* how: incremental where every derived predicate is stored, the batch
    ** only inserts and the rules allow it */
    const char *why = NULL;
    int64_t nins = 0, ndel = 0;
    rf_rt_gpu_prepared prepared;
    memset(&prepared, 0, sizeof prepared);
    for (int32_t i = 0; !st && i < x.t.npreds; i++) {
        rf_txn_pred *p = &x.t.preds[i];
        nins += p->ins.nrows;
        ndel += p->del.nrows;
        if (!p->base && !p->stored && !why) why = "the first exec of this program on the database: its derived predicates are computed and stored";
    }
    if (!st) {
        if (init) why = "--init";
        else if (force_recompute) why = "--recompute";
        if (!why) why = rf_txn_gen_incremental_why_not(fe);
        for (int32_t i = 0; i < x.t.npreds; i++) x.t.preds[i].rows_before = x.t.preds[i].cur.nrows;
        if (why) st = recompute(&x, &src, &d);
        if (why && !st) prepare_ahead(&x, &prepared);
        if (!why && ndel) st = dred(&x, &d);
        if (!why && !st && nins) st = incremental(&x, &d);
    }
    double t_maint = rf_now();
    int32_t nout = 0;
    for (int32_t i = 0; !st && i < x.t.npreds; i++) nout += x.t.preds[i].fe->output_name != NULL;
    if (!st && nout) {
        rf_buf gen;
        rf_buf_init(&gen);
        rf_txn_gen_outputs(&x.t, &gen);
        st = compile(NULL, "<redfox exec: outputs>", &gen, &outarena, &outhir, &d);
        rf_buf_free(&gen);
        double tr = x.t_runs;
        if (!st) st = run_generated(&x, "the outputs", outhir, &res, &d);
        x.t_runs = tr;
    }
    double t_out = rf_now();
    if (!st) st = rf_txn_store_commit(&x.t, db, db_dir, &d);
    double t_commit = rf_now();
    rf_file_unlock(lockfd);
    int rc = rf_tool_finish(st, &d);
    if (!st) {
        if (profile) {
            if (waited) fprintf(stderr, "exec: waited for another exec on %s to commit\n", db_dir);
            if (gpu_starting)
                fprintf(stderr, "exec: the GPU started beside the reading; then waited %.3f ms for it\n", t_gpu_wait * 1e3);
            fprintf(stderr, "exec: batch: %lld row%s inserted, %lld deleted (%.3f ms: files read %.3f ms, parsed %.3f ms, "
                    "resolved by key %.3f ms, %d threads)\n", (long long)nins, nins == 1 ? "" : "s", (long long)ndel,
                    (t_batch - t_read) * 1e3, x.t.t_read * 1e3, x.t.t_parse * 1e3, x.t.t_resolve * 1e3, x.t.threads);
            fprintf(stderr, "exec: derived predicates %s%s%s (%.3f ms, runs on device %s %.3f ms)\n",
                    why ? "recomputed from scratch: " : "maintained incrementally", why ? why : "",
                    why ? "" : ndel && nins ? " (deletions by DRed, then insertions by delta rules)"
                               : ndel ? " (deletions by DRed)" : " by delta rules",
                    (t_maint - t_started) * 1e3, x.device ? x.device : "none", x.t_runs * 1e3);
            if (!x.runs.oom && x.runs.len) fputs(rf_buf_cstr(&x.runs), stderr);
            if (prepared.programs)
                fprintf(stderr,
                        "exec:   the GPU code of later transactions (delta rules, DRed) compiled ahead: %d program%s, "
                        "%d compiled now (NVRTC %.3f ms), %d in the JIT cache (%.3f ms in all)\n",
                        (int)prepared.programs, prepared.programs == 1 ? "" : "s", (int)prepared.compiled,
                        prepared.nvrtc_seconds * 1e3, (int)prepared.jitted, prepared.seconds * 1e3);
            if (x.t_concat > 0) fprintf(stderr, "exec:   the new facts copied after the stored rows %.3f ms\n", x.t_concat * 1e3);
            for (int32_t i = 0; i < x.t.npreds; i++) {
                const rf_txn_pred *p = &x.t.preds[i];
                if (p->base) continue;
                fprintf(stderr, "exec:   %s: %lld -> %lld tuples (table %s)\n", p->fe->name, (long long)p->rows_before,
                        (long long)rf_txn_pred_rows(p), p->stored_how ? p->stored_how : "-");
            }
            fprintf(stderr,
                    "exec: compile %.3f ms, read the database %.3f ms (%.1f MB of columns: mapped and CRC-32C checked "
                    "%.3f ms, copied out %.3f ms), outputs %.3f ms, commit %.3f ms (%lld rows, %.1f MB written), "
                    "in all %.3f ms\n",
                    (t_loaded - t0) * 1e3, (t_read - t_loaded) * 1e3, (double)x.t.read_bytes / 1e6,
                    x.t.read_check_seconds * 1e3, x.t.read_copy_seconds * 1e3, (t_out - t_maint) * 1e3,
                    (t_commit - t_out) * 1e3, (long long)x.t.commit_rows, (double)x.t.commit_bytes / 1e6,
                    (t_commit - t0) * 1e3);
        }
        if (res) rc = print_outputs(res, user, fmt);
    }
    rf_rt_result_free(res);
    rf_buf_free(&x.runs);
    free_txn(&x.t);
    rf_rt_cache_free(x.cache);
    rf_db_close(db);
    rf_hir_free(outhir);
    rf_arena_free(&outarena);
    rf_hir_free(user);
    rf_qp_free(qp);
    rf_tool_sources_free(&src);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    return rc;
}
