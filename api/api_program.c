/*
** api/api_program.c: compiling a program through the library: LogiQL text
** or files -> checked program -> optimized plan -> Harmony, or a .rfx file
** -> Harmony (and its GPU code), with the diagnostics kept as records.
**
** Owns: rf_program (rf_compile, rf_compile_buffers, rf_compile_files and
** their _v2 forms with rf_compile_options, rf_program_*). The stages are the command line's (tools/pipeline.c does
** the same steps).
*/
#include "api_internal.h"
#include "rf_frontend.h"
#include "rf_queryplan.h"
#include "rf_rfx.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static rf_program *program_new(void)
{
    rf_program *p = rf_calloc(1, sizeof *p);
    if (!p) return NULL;
    rf_arena_init(&p->arena);
    rf_buf_init(&p->ptx0);
    rf_buf_init(&p->gpln);
    return p;
}

void rf_program_free(rf_program *p)
{
    if (!p) return;
    rf_hir_free(p->hir);
    rf_qp_free(p->qp);
    rf_buf_free(&p->ptx0);
    rf_buf_free(&p->gpln);
    api_diags_clear(&p->diags);
    free(p->inputs);
    free(p->outputs);
    rf_arena_free(&p->arena);
    free(p);
}

/* The input and output variables, in the program's order. */
static rf_status index_vars(rf_program *p)
{
    const rf_hir_program *h = p->hir;
    p->inputs = rf_calloc((size_t)h->nvars + 1, sizeof *p->inputs);
    p->outputs = rf_calloc((size_t)h->nvars + 1, sizeof *p->outputs);
    if (!p->inputs || !p->outputs) return RF_ENOMEM;
    for (int32_t v = 0; v < h->nvars; v++) {
        if (h->vars[v]->role == RF_HIR_ROLE_INPUT) p->inputs[p->ninputs++] = v;
        if (h->vars[v]->role == RF_HIR_ROLE_OUTPUT) p->outputs[p->noutputs++] = v;
    }
    return RF_OK;
}

/* Ends a compile: the diagnostics copied, the code of the outcome. */
static int finish(rf_program *p, rf_status st, rf_diags *d)
{
    if (!st && p->hir) st = index_vars(p);
    if (st) {
        rf_hir_free(p->hir);
        p->hir = NULL;
    }
    st = rf_diags_status(d, st); /* a bug exits 3 */
    /* in the order the stages reported them, as `redfox` prints them */
    rf_status dst = api_diags_set(&p->diags, d);
    rf_diags_free(d);
    if (!st && dst) st = dst;
    if (st && !p->diags.errmsg)
        api_diags_error(&p->diags, "%s", st == RF_ENOMEM ? "out of memory" : "the program could not be compiled");
    return api_code(st);
}

void rf_compile_options_init(rf_compile_options *o, size_t size)
{
    if (!o || size < offsetof(rf_compile_options, no_exists)) return;
    rf_compile_options d;
    memset(&d, 0, sizeof d);
    d.size = size < sizeof d ? size : sizeof d;
    memcpy(o, &d, d.size);
}

int api_compile_options(const rf_compile_options *in, rf_compile_options *o)
{
    rf_compile_options_init(o, sizeof *o);
    if (!in) return 1;
    if (in->size < offsetof(rf_compile_options, no_exists)) return 0;
    memcpy(o, in, in->size < sizeof *o ? in->size : sizeof *o);
    o->size = sizeof *o;
    return 1;
}

/* LogiQL sources as far as o->stop_after says; each form made is kept for
** rf_program_dump (the plan owned by p, the rest in its arena). */
static rf_status compile_texts(rf_program *p, const char *const *names, const char *const *texts,
                               const int64_t *lens, int32_t n, const rf_compile_options *o, rf_diags *d)
{
    rf_ast_program *ast = NULL;
    rf_fe_program *fe = NULL;
    rf_qp_options qo = {.no_lftj = o->no_lftj, .no_exists = o->no_opt || o->no_exists, .no_partagg = o->no_partagg,
                        .no_hoist = o->no_hoist, .no_keyjoin = o->no_keyjoin};
    int stop = o->stop_after;
    /* the texts kept for rf_exec, which compiles them again with the
    ** programs it generates and names the derived tables by them */
    const char **keep_names = rf_arena_alloc(&p->arena, (size_t)n * sizeof *keep_names);
    p->src_texts = rf_arena_alloc(&p->arena, (size_t)n * sizeof *p->src_texts);
    p->src_lens = rf_arena_alloc(&p->arena, (size_t)n * sizeof *p->src_lens);
    if (!keep_names || !p->src_texts || !p->src_lens) return RF_ENOMEM;
    p->src_names = keep_names;
    for (int32_t i = 0; i < n; i++) {
        if (!(keep_names[i] = rf_arena_strdup(&p->arena, names[i]))) return RF_ENOMEM;
        char *t = rf_arena_alloc(&p->arena, (size_t)lens[i] + 1);
        if (!t) return RF_ENOMEM;
        memcpy(t, texts[i], (size_t)lens[i]);
        t[lens[i]] = 0;
        p->src_texts[i] = t;
        p->src_lens[i] = lens[i];
    }
    p->nsrc = n;
    rf_status st = rf_fe_load_sources(names, texts, lens, n, &p->arena, &ast, stop == REDFOX_STAGE_AST ? NULL : &fe, d);
    if (!st) p->ast = ast;
    if (!st) p->fe = fe;
    if (!st && stop != REDFOX_STAGE_AST && stop != REDFOX_STAGE_RULES) {
        st = rf_qp_build_opts(fe, &qo, &p->qp, d);
        if (!st && !o->no_opt) st = rf_qp_optimize(p->qp, d);
        if (!st && stop == REDFOX_STAGE_ALL) st = rf_hir_lower(p->qp, &p->hir, d);
    }
    p->stage = stop;
    return st;
}

int rf_compile(const char *text, int64_t len, const char *name, rf_program **out)
{
    if (!out) return REDFOX_MISUSE;
    rf_program *p = *out = program_new();
    if (!p) return REDFOX_NOMEM;
    rf_diags d;
    rf_diags_init(&d);
    if (!text) {
        api_diags_error(&p->diags, "rf_compile: no text");
        return REDFOX_MISUSE;
    }
    const char *nm = rf_arena_strdup(&p->arena, name ? name : "<string>");
    if (!nm) return finish(p, RF_ENOMEM, &d);
    int64_t n = len < 0 ? (int64_t)strlen(text) : len;
    rf_compile_options o;
    api_compile_options(NULL, &o);
    return finish(p, compile_texts(p, &nm, &text, &n, 1, &o, &d), &d);
}

static int is_rfx(const char *name, const char *text, int64_t len)
{
    size_t n = strlen(name);
    if (n >= 4 && !strcmp(name + n - 4, ".rfx")) return 1;
    return len >= RF_RFX_MAGIC_SIZE && !memcmp(text, RF_RFX_MAGIC, RF_RFX_MAGIC_SIZE);
}

static rf_status load_rfx(rf_program *p, const char *name, const char *bytes, int64_t len, rf_diags *d)
{
    rf_rfx_file *f = NULL;
    rf_status st = rf_rfx_open_bytes(name, bytes, (uint64_t)len, &f, d);
    if (st) return st;
    const void *data;
    uint64_t size;
    if (!rf_rfx_section(f, RF_RFX_TAG_HARMONY, &data, &size)) {
        rf_error(d, rf_mkloc(name, 0, 0), "this .rfx file holds no program (no HIRS section)");
        st = RF_EUSER;
    }
    if (!st) st = rf_hir_deserialize(name, data, size, &p->hir, d);
    if (!st && rf_rfx_section(f, RF_RFX_TAG_PTX, &data, &size)) {
        rf_buf_append(&p->ptx0, data, (int64_t)size);
        if (p->ptx0.oom) st = RF_ENOMEM;
    }
    /* the GPU plans made at compile time: a GPU run follows them and checks
    ** the PTX against them, as `redfox run` of the file does */
    if (!st && rf_rfx_section(f, RF_RFX_TAG_GPU_PLAN, &data, &size)) {
        rf_buf_append(&p->gpln, data, (int64_t)size);
        if (p->gpln.oom) st = RF_ENOMEM;
    }
    if (!st) p->rfx_name = name;
    rf_rfx_close(f);
    return st;
}

/* One .rfx program, or LogiQL sources compiled as one program; names live in p's arena. */
static rf_status compile_buffers(rf_program *p, const char *const *names, const char *const *texts,
                                 const int64_t *lens, int32_t n, const rf_compile_options *o, rf_diags *d)
{
    int32_t rfx = -1;
    for (int32_t i = 0; i < n && rfx < 0; i++)
        if (is_rfx(names[i], texts[i], lens[i])) rfx = i;
    if (rfx >= 0 && n > 1) {
        rf_error(d, rf_mkloc(names[rfx], 0, 0), "a compiled program (.rfx) cannot be combined with other files");
        return RF_EUSAGE;
    }
    if (rfx >= 0) return load_rfx(p, names[0], texts[0], lens[0], d);
    return compile_texts(p, names, texts, lens, n, o, d);
}

int rf_compile_buffers(const char *const *names, const char *const *texts, const int64_t *lens, int32_t n,
                       rf_program **out)
{
    return rf_compile_buffers_v2(names, texts, lens, n, NULL, out);
}

int rf_compile_buffers_v2(const char *const *names, const char *const *texts, const int64_t *lens, int32_t n,
                          const rf_compile_options *opt, rf_program **out)
{
    if (!out) return REDFOX_MISUSE;
    rf_program *p = *out = program_new();
    if (!p) return REDFOX_NOMEM;
    rf_diags d;
    rf_diags_init(&d);
    rf_compile_options o;
    if (!api_compile_options(opt, &o)) {
        api_diags_error(&p->diags, "rf_compile_buffers_v2: the options were not set up with rf_compile_options_init");
        return REDFOX_MISUSE;
    }
    if (o.stop_after < REDFOX_STAGE_ALL || o.stop_after > REDFOX_STAGE_PLAN) {
        api_diags_error(&p->diags, "rf_compile_buffers_v2: unknown stop_after %d", o.stop_after);
        return REDFOX_MISUSE;
    }
    /* (names NULL, as lens NULL: every program "<string>"; it was refused
    ** as "no programs") */
    if (!texts || n <= 0) {
        api_diags_error(&p->diags, "rf_compile_buffers: no programs (%s)", !texts ? "texts is NULL" : "n is not 1 or more");
        return REDFOX_MISUSE;
    }
    const char **nm = rf_arena_alloc(&p->arena, (size_t)n * sizeof *nm);
    int64_t *ln = rf_calloc((size_t)n, sizeof *ln);
    rf_status st = nm && ln ? RF_OK : RF_ENOMEM;
    for (int32_t i = 0; i < n && !st; i++) {
        if (!texts[i]) {
            api_diags_error(&p->diags, "rf_compile_buffers: program %d has no text", (int)i + 1);
            free(ln);
            return REDFOX_MISUSE;
        }
        if (!(nm[i] = rf_arena_strdup(&p->arena, names && names[i] ? names[i] : "<string>"))) st = RF_ENOMEM;
        ln[i] = lens && lens[i] >= 0 ? lens[i] : (int64_t)strlen(texts[i]);
    }
    if (!st) st = compile_buffers(p, nm, texts, ln, n, &o, &d);
    free(ln);
    return finish(p, st, &d);
}

int rf_compile_files(const char *const *paths, int32_t n, rf_program **out)
{
    return rf_compile_files_v2(paths, n, NULL, out);
}

int rf_compile_files_v2(const char *const *paths, int32_t n, const rf_compile_options *opt, rf_program **out)
{
    if (!out) return REDFOX_MISUSE;
    rf_program *p = *out = program_new();
    if (!p) return REDFOX_NOMEM;
    rf_diags d;
    rf_diags_init(&d);
    rf_compile_options o;
    if (!api_compile_options(opt, &o)) {
        api_diags_error(&p->diags, "rf_compile_files_v2: the options were not set up with rf_compile_options_init");
        return REDFOX_MISUSE;
    }
    if (o.stop_after < REDFOX_STAGE_ALL || o.stop_after > REDFOX_STAGE_PLAN) {
        api_diags_error(&p->diags, "rf_compile_files_v2: unknown stop_after %d", o.stop_after);
        return REDFOX_MISUSE;
    }
    if (!paths || n <= 0) {
        api_diags_error(&p->diags, "rf_compile_files: no files");
        return REDFOX_MISUSE;
    }
    for (int32_t i = 0; i < n; i++)
        if (!paths[i]) { /* a bad argument, before any file is read */
            api_diags_error(&p->diags, "rf_compile_files: path %d is NULL", (int)i + 1);
            return REDFOX_MISUSE;
        }
    const char **names = rf_arena_alloc(&p->arena, (size_t)n * sizeof *names);
    char **texts = rf_calloc((size_t)n, sizeof *texts);
    int64_t *lens = rf_calloc((size_t)n, sizeof *lens);
    rf_status st = names && texts && lens ? RF_OK : RF_ENOMEM;
    for (int32_t i = 0; i < n && !st; i++) {
        const char *why = NULL;
        if (!(names[i] = rf_arena_strdup(&p->arena, paths[i]))) {
            st = RF_ENOMEM;
            break;
        }
        rf_status rst = rf_read_file(paths[i], &texts[i], &lens[i], &why);
        if (rst == RF_ENOMEM) st = rst;
        else if (rst) {
            rf_error(&d, rf_mkloc(names[i], 0, 0), "cannot read the program: %s", why ? why : "error");
            st = RF_EUSER;
        }
    }
    if (!st) st = compile_buffers(p, names, (const char *const *)texts, lens, n, &o, &d);
    for (int32_t i = 0; texts && i < n; i++) free(texts[i]);
    free(texts);
    free(lens);
    return finish(p, st, &d);
}

const char *rf_program_errmsg(const rf_program *p) { return p ? api_diags_errmsg(&p->diags) : ""; }

int64_t rf_program_diag_count(const rf_program *p) { return p ? p->diags.n : 0; }

const rf_diagnostic *rf_program_diag(const rf_program *p, int64_t i)
{
    return p && i >= 0 && i < p->diags.n ? &p->diags.items[i] : NULL;
}

int32_t rf_program_input_count(const rf_program *p) { return p ? p->ninputs : 0; }

static const rf_hir_var *input_var(const rf_program *p, int32_t i)
{
    return p && p->hir && i >= 0 && i < p->ninputs ? p->hir->vars[p->inputs[i]] : NULL;
}

const char *rf_program_input_name(const rf_program *p, int32_t i)
{
    const rf_hir_var *v = input_var(p, i);
    return v ? v->name : NULL;
}

const char *rf_program_input_predicate(const rf_program *p, int32_t i)
{
    const rf_hir_var *v = input_var(p, i);
    return !v ? NULL : v->pred_name ? v->pred_name : v->name;
}

int rf_program_is_compiled(const rf_program *p) { return p && p->rfx_name; }

const char *rf_program_input_file(const rf_program *p, int32_t i)
{
    const rf_hir_var *v = input_var(p, i);
    return v ? v->input_file : NULL;
}

int32_t rf_program_output_count(const rf_program *p) { return p ? p->noutputs : 0; }

const char *rf_program_output_name(const rf_program *p, int32_t i)
{
    return p && p->hir && i >= 0 && i < p->noutputs ? p->hir->vars[p->outputs[i]]->output_name : NULL;
}

int32_t rf_program_output_order(const rf_program *p, int32_t i, int32_t *cols, int *desc, int32_t max, int64_t *limit)
{
    if (limit) *limit = -1;
    const char *name = rf_program_output_name(p, i);
    if (!name || !p->fe) return -1;
    for (int32_t k = 0; k < p->fe->npreds; k++) {
        const rf_fe_pred *f = p->fe->preds[k];
        if (!f->output_name || strcmp(f->output_name, name)) continue;
        for (int32_t c = 0; c < f->norder && c < max; c++) {
            if (cols) cols[c] = f->order[c].col;
            if (desc) desc[c] = f->order[c].desc;
        }
        if (limit) *limit = f->limit;
        return f->norder;
    }
    return -1;
}
