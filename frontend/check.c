/*
** frontend/check.c: the driver of the checking passes, the predicate table,
** and rf_fe_load_file. Owns the order of the passes.
*/
#include "check_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rf_type_is_numeric(rf_type t)
{
    return t == RF_TYPE_INT || t == RF_TYPE_DECIMAL || t == RF_TYPE_DEC128 || t == RF_TYPE_FLOAT;
}

int rf_chk_builtin_namespace(const char *name)
{
    const char *colon = strchr(name, ':');
    if (!colon) return 0;
    int n = (int)(colon - name + 1);
    for (int64_t i = 0;; i++) {
        const rf_builtin_info *bi = rf_fe_builtin_at(i);
        if (!bi) return 0;
        if (!strncmp(bi->name, name, (size_t)n)) return n;
    }
}

int rf_chk_txn_namespace(const char *name)
{
    const char *colon = strchr(name, ':');
    size_t k = strlen(RF_FE_TXN_NS);
    if (!colon || strncmp(name, RF_FE_TXN_NS, k) || (name[k] != ':' && name[k] != '_')) return 0;
    return (int)(colon - name + 1);
}

int rf_chk_refused_namespace(const rf_checker *c, const rf_ast_atom *a)
{
    int ns = rf_chk_builtin_namespace(a->name);
    if (ns) return ns;
    ns = rf_chk_txn_namespace(a->name);
    if (ns && c->txn_source && a->loc.file && !strcmp(a->loc.file, c->txn_source)) return 0;
    return ns;
}

int rf_chk_is_reserved(const char *name)
{
    rf_type t;
    return rf_fe_type_from_name(name, &t) || rf_fe_builtin_lookup(name) ||
           strncmp(name, "lang:", 5) == 0;
}

static uint64_t name_hash(const char *s) { return rf_hash64(s, strlen(s), 0); }

static int broken_init(rf_checker *c, const rf_ast_program *ast)
{
    if (!ast->nbroken_names) return 0;
    int64_t cap = 16;
    while (cap < ast->nbroken_names * 2) cap *= 2;
    c->broken = rf_calloc((size_t)cap, sizeof *c->broken);
    if (!c->broken) return -1;
    c->brokencap = cap;
    for (int64_t i = 0; i < ast->nbroken_names; i++) {
        const char *n = ast->broken_names[i];
        uint64_t j = name_hash(n) & (uint64_t)(cap - 1);
        while (c->broken[j] && strcmp(c->broken[j], n)) j = (j + 1) & (uint64_t)(cap - 1);
        c->broken[j] = n;
    }
    return 0;
}

int rf_chk_in_broken_clause(const rf_checker *c, const char *name)
{
    for (int64_t i = 0; i < c->refused.count; i++)
        if (!strcmp(c->refused.items[i], name)) return 1;
    if (!c->brokencap) return 0;
    for (uint64_t j = name_hash(name) & (uint64_t)(c->brokencap - 1);; j = (j + 1) & (uint64_t)(c->brokencap - 1)) {
        if (!c->broken[j]) return 0;
        if (!strcmp(c->broken[j], name)) return 1;
    }
}

const char *rf_chk_where(rf_loc there, rf_loc here, char *buf, size_t n)
{
    int same = there.file == here.file || (there.file && here.file && !strcmp(there.file, here.file));
    if (same || !there.file) snprintf(buf, n, "line %d", there.line);
    else snprintf(buf, n, "%s:%d", there.file, there.line);
    return buf;
}

rf_fe_pred *rf_chk_find(rf_checker *c, const char *name)
{
    if (!c->tabcap) return NULL;
    uint64_t m = (uint64_t)c->tabcap - 1;
    for (uint64_t i = name_hash(name) & m;; i = (i + 1) & m) {
        rf_fe_pred *p = c->tab[i];
        if (!p) return NULL;
        if (strcmp(p->name, name) == 0) return p;
    }
}

static int tab_insert(rf_checker *c, rf_fe_pred *p)
{
    if ((c->preds.count + 1) * 2 > c->tabcap) {
        int64_t ncap = c->tabcap ? c->tabcap * 2 : 64;
        rf_fe_pred **nt = rf_calloc((size_t)ncap, sizeof *nt);
        if (!nt) return -1;
        for (int64_t i = 0; i < c->tabcap; i++) {
            rf_fe_pred *q = c->tab[i];
            if (!q) continue;
            uint64_t j = name_hash(q->name) & (uint64_t)(ncap - 1);
            while (nt[j]) j = (j + 1) & (uint64_t)(ncap - 1);
            nt[j] = q;
        }
        free(c->tab);
        c->tab = nt;
        c->tabcap = ncap;
    }
    uint64_t j = name_hash(p->name) & (uint64_t)(c->tabcap - 1);
    while (c->tab[j]) j = (j + 1) & (uint64_t)(c->tabcap - 1);
    c->tab[j] = p;
    return 0;
}

rf_fe_pred *rf_chk_add_pred(rf_checker *c, const char *name, rf_loc loc, int32_t arity,
                            int functional)
{
    rf_fe_pred *p = rf_arena_alloc(c->a, sizeof *p);
    if (!p) goto oom;
    p->id = (int32_t)c->preds.count;
    p->name = name;
    p->loc = loc;
    p->arity = arity;
    p->functional = functional;
    p->limit = -1;
    p->delimiter = '|';
    p->types = rf_arena_alloc(c->a, (size_t)(arity + 1) * sizeof *p->types);
    p->cols = rf_arena_alloc(c->a, (size_t)(arity + 1) * sizeof *p->cols);
    if (!p->types || !p->cols) goto oom;
    for (int32_t i = 0; i < arity; i++) p->types[i] = RF_TYPE_UNKNOWN;
    if (tab_insert(c, p) || rf_ptrvec_push(&c->preds, p)) goto oom;
    return p;
oom:
    c->oom = 1;
    return NULL;
}

int rf_chk_add_rule_to_pred(rf_checker *c, rf_fe_pred *p, rf_fe_rule *r)
{
    if (p->nrules == p->caprules) {
        int32_t ncap = p->caprules ? p->caprules * 2 : 4;
        rf_fe_rule **n = rf_arena_alloc(c->a, (size_t)ncap * sizeof *n);
        if (!n) {
            c->oom = 1;
            return -1;
        }
        if (p->nrules) memcpy(n, p->rules, (size_t)p->nrules * sizeof *n);
        p->rules = n;
        p->caprules = ncap;
    }
    p->rules[p->nrules++] = r;
    r->head = p;
    r->id = (int32_t)c->rules.count;
    if (rf_ptrvec_push(&c->rules, r)) {
        c->oom = 1;
        return -1;
    }
    return 0;
}

rf_fe_expr *rf_chk_expr_new(rf_checker *c, rf_fe_expr_kind k, rf_loc loc)
{
    rf_fe_expr *e = rf_arena_alloc(c->a, sizeof *e);
    if (!e) {
        c->oom = 1;
        return NULL;
    }
    e->kind = k;
    e->loc = loc;
    e->type = RF_TYPE_UNKNOWN;
    e->var = -1;
    return e;
}

void rf_chk_expr_vars(const rf_fe_expr *e, void (*fn)(void *ctx, int32_t var, rf_loc loc), void *ctx)
{
    if (!e) return;
    if (e->kind == RF_FE_VAR) fn(ctx, e->var, e->loc);
    for (int32_t i = 0; i < e->nargs; i++) rf_chk_expr_vars(e->args[i], fn, ctx);
}

static const char NO_OUTPUT[] = "the program has no lang:output, so it prints and writes nothing";

int rf_fe_diag_is_no_output(const rf_diag *d)
{
    return d->sev == RF_SEV_WARNING && d->msg && !strncmp(d->msg, NO_OUTPUT, sizeof NO_OUTPUT - 1);
}

/* A program that shows nothing is almost always a mistake (an empty pipe,
** a forgotten directive): say so rather than run in silence. */
static void warn_no_output(const rf_ast_program *ast, const rf_fe_program *p, rf_diags *d)
{
    if (!ast->nclauses) {
        rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(ast->file, 0, 0), "the program is empty: it has no clauses");
        return;
    }
    for (int32_t i = 0; i < p->npreds; i++)
        if (p->preds[i]->output_name) return;
    rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(ast->file, 0, 0),
                "%s (add lang:output[`p] = \"p\". for each predicate p to show)", NO_OUTPUT);
}

rf_status rf_fe_check(const rf_ast_program *ast, rf_arena *arena, rf_fe_program **out,
                      rf_diags *diags)
{
    return rf_fe_check_opts(ast, NULL, arena, out, diags);
}

rf_status rf_fe_check_opts(const rf_ast_program *ast, const rf_fe_options *o, rf_arena *arena, rf_fe_program **out,
                           rf_diags *diags)
{
    *out = NULL;
    rf_checker c;
    memset(&c, 0, sizeof c);
    c.a = arena;
    c.d = diags;
    c.file = ast->file;
    c.txn_source = o ? o->txn_source : NULL;
    if (broken_init(&c, ast)) c.oom = 1;

    /* Every pass runs on what the passes before it kept (a wrong rule is
    ** left out), so that one compile reports every independent error. */
    rf_chk_declarations(&c, ast);
    rf_chk_define_heads(&c, ast);
    rf_chk_desugar(&c, ast);
    rf_chk_directives(&c, ast);
    rf_chk_cut_names(&c, ast);
    c.errors_before_types = diags->nerrors;
    if (!c.oom) rf_chk_types(&c);

    rf_fe_program *p = rf_arena_alloc(arena, sizeof *p);
    if (!p) c.oom = 1;
    if (p && !c.oom) {
        p->file = ast->file;
        p->npreds = (int32_t)c.preds.count;
        p->preds = rf_arena_alloc(arena, (size_t)(c.preds.count + 1) * sizeof *p->preds);
        p->nrules = (int32_t)c.rules.count;
        p->rules = rf_arena_alloc(arena, (size_t)(c.rules.count + 1) * sizeof *p->rules);
        if (!p->preds || !p->rules) c.oom = 1;
        else {
            for (int64_t i = 0; i < c.preds.count; i++) p->preds[i] = c.preds.items[i];
            for (int64_t i = 0; i < c.rules.count; i++) p->rules[i] = c.rules.items[i];
        }
    }
    if (!c.oom) rf_chk_stratify(&c, p);
    if (!c.oom && !diags->nerrors) warn_no_output(ast, p, diags);

    free(c.tab);
    free(c.broken);
    rf_ptrvec_free(&c.preds);
    rf_ptrvec_free(&c.refused);
    rf_ptrvec_free(&c.rules);
    if (c.oom) return RF_ENOMEM;
    rf_diags_sort(diags);
    if (diags->nerrors) return RF_EUSER;
    *out = p;
    return RF_OK;
}

/* Checks what parsed, also after syntax errors (error recovery dropped the
** broken clauses), so that one compile reports every independent error;
** the program is handed out only when there were none. */
static rf_status check_parsed(rf_status parsed, const rf_ast_program *ast, const rf_fe_options *o, rf_arena *arena,
                              rf_fe_program **prog, rf_diags *diags)
{
    if (parsed == RF_ENOMEM || !ast || !prog) {
        rf_diags_sort(diags);
        return parsed;
    }
    rf_status st = rf_fe_check_opts(ast, o, arena, prog, diags);
    if (parsed && st != RF_ENOMEM) {
        *prog = NULL;
        return parsed;
    }
    return st;
}

rf_status rf_fe_load_file(const char *path, rf_arena *arena, rf_ast_program **ast,
                          rf_fe_program **prog, rf_diags *diags)
{
    char *src;
    int64_t len;
    const char *why = "";
    *ast = NULL;
    if (prog) *prog = NULL;
    rf_status st = rf_read_file(path, &src, &len, &why);
    if (st) {
        rf_error(diags, rf_mkloc(path, 0, 0), "cannot read the program: %s", why);
        return st == RF_ENOMEM ? RF_ENOMEM : RF_EUSER;
    }
    const char *file = rf_arena_strdup(arena, path);
    if (!file) {
        free(src);
        return RF_ENOMEM;
    }
    st = rf_fe_parse(file, src, len, arena, ast, diags);
    free(src);
    return check_parsed(st, *ast, NULL, arena, prog, diags);
}

/* Concatenates the clauses of several parsed files into one program. */
static rf_status merge(rf_ast_program **parts, int32_t n, const char *name, rf_arena *arena, rf_ast_program **out)
{
    int64_t total = 0, nbroken = 0, ncut = 0;
    for (int32_t i = 0; i < n; i++) total += parts[i] ? parts[i]->nclauses : 0;
    for (int32_t i = 0; i < n; i++) nbroken += parts[i] ? parts[i]->nbroken_names : 0;
    for (int32_t i = 0; i < n; i++) ncut += parts[i] ? parts[i]->ncut_names : 0;
    rf_ast_program *p = rf_arena_alloc(arena, sizeof *p);
    rf_ast_clause **cl = rf_arena_alloc(arena, (size_t)(total + 1) * sizeof *cl);
    const char **bn = rf_arena_alloc(arena, (size_t)(nbroken + 1) * sizeof *bn);
    rf_ast_cut_name **cn = rf_arena_alloc(arena, (size_t)(ncut + 1) * sizeof *cn);
    if (!p || !cl || !bn || !cn) return RF_ENOMEM;
    int64_t k = 0, kb = 0, kc = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int64_t j = 0; parts[i] && j < parts[i]->nclauses; j++) cl[k++] = parts[i]->clauses[j];
        for (int64_t j = 0; parts[i] && j < parts[i]->nbroken_names; j++) bn[kb++] = parts[i]->broken_names[j];
        for (int64_t j = 0; parts[i] && j < parts[i]->ncut_names; j++) cn[kc++] = parts[i]->cut_names[j];
    }
    p->file = name;
    p->clauses = cl;
    p->nclauses = total;
    p->broken_names = bn;
    p->nbroken_names = nbroken;
    p->cut_names = cn;
    p->ncut_names = ncut;
    *out = p;
    return RF_OK;
}

rf_status rf_fe_load_sources(const char *const *names, const char *const *texts, const int64_t *lens, int32_t n,
                             rf_arena *arena, rf_ast_program **ast, rf_fe_program **prog, rf_diags *diags)
{
    return rf_fe_load_sources_opts(names, texts, lens, n, NULL, arena, ast, prog, diags);
}

rf_status rf_fe_load_sources_opts(const char *const *names, const char *const *texts, const int64_t *lens, int32_t n,
                                  const rf_fe_options *o, rf_arena *arena, rf_ast_program **ast, rf_fe_program **prog,
                                  rf_diags *diags)
{
    *ast = NULL;
    if (prog) *prog = NULL;
    rf_ast_program **parts = rf_arena_alloc(arena, (size_t)(n + 1) * sizeof *parts);
    if (!parts || n < 1) return parts ? RF_EUSAGE : RF_ENOMEM;
    rf_status worst = RF_OK;
    for (int32_t i = 0; i < n; i++) {
        rf_status st = rf_fe_parse(names[i], texts[i], lens[i], arena, &parts[i], diags);
        if (st == RF_ENOMEM) return st;
        if (st) worst = st;
    }
    rf_status st = merge(parts, n, names[n - 1], arena, ast);
    if (st) return st;
    return check_parsed(worst, *ast, o, arena, prog, diags);
}

rf_status rf_fe_load_files(const char *const *paths, int32_t n, rf_arena *arena, rf_ast_program **ast,
                           rf_fe_program **prog, rf_diags *diags)
{
    *ast = NULL;
    if (prog) *prog = NULL;
    if (n == 1) return rf_fe_load_file(paths[0], arena, ast, prog, diags);
    rf_ast_program **parts = rf_arena_alloc(arena, (size_t)(n + 1) * sizeof *parts);
    if (!parts || n < 1) return parts ? RF_EUSAGE : RF_ENOMEM;
    rf_status worst = RF_OK;
    for (int32_t i = 0; i < n; i++) {
        rf_status st = rf_fe_load_file(paths[i], arena, &parts[i], NULL, diags);
        if (st == RF_ENOMEM) return st;
        if (st) worst = st;
    }
    const char *name = rf_arena_strdup(arena, paths[n - 1]);
    if (!name) return RF_ENOMEM;
    rf_status st = merge(parts, n, name, arena, ast);
    if (st) return st;
    return check_parsed(worst, *ast, NULL, arena, prog, diags);
}
