/*
** frontend/ast_yaml.c: the syntax tree as YAML (`redfox dump --ast --format
** yaml`), written with libyaml's emitter so that quoting is always right.
*/
#include "rf_frontend.h"

#include <string.h>
#include <yaml.h>

typedef struct em {
    yaml_emitter_t e;
    int ok;
} em;

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
    rf_buf_append(data, buffer, (int64_t)size);
    return 1;
}

static void emit(em *m, yaml_event_t *ev)
{
    if (m->ok && !yaml_emitter_emit(&m->e, ev)) m->ok = 0;
}

static void scalar(em *m, const char *s)
{
    yaml_event_t ev;
    if (!m->ok) return;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                      YAML_ANY_SCALAR_STYLE)) {
        m->ok = 0;
        return;
    }
    emit(m, &ev);
}

static void map_start(em *m)
{
    yaml_event_t ev;
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
    emit(m, &ev);
}
static void map_end(em *m)
{
    yaml_event_t ev;
    yaml_mapping_end_event_initialize(&ev);
    emit(m, &ev);
}
static void seq_start(em *m)
{
    yaml_event_t ev;
    yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
    emit(m, &ev);
}
static void seq_end(em *m)
{
    yaml_event_t ev;
    yaml_sequence_end_event_initialize(&ev);
    emit(m, &ev);
}

static void kv(em *m, const char *k, const char *v)
{
    scalar(m, k);
    scalar(m, v);
}

static void kloc(em *m, rf_loc loc)
{
    char t[48];
    snprintf(t, sizeof t, "%d:%d", loc.line, loc.col);
    kv(m, "at", t);
}

static void expr_text(em *m, const char *k, const rf_ast_expr *e)
{
    rf_buf b;
    rf_buf_init(&b);
    rf_ast_expr_print(e, &b);
    kv(m, k, rf_buf_cstr(&b));
    if (b.oom) m->ok = 0;
    rf_buf_free(&b);
}

static void atom(em *m, const rf_ast_atom *a)
{
    map_start(m);
    kv(m, "predicate", a->name);
    kloc(m, a->loc);
    if (a->functional) kv(m, "functional", "true");
    scalar(m, "args");
    seq_start(m);
    for (int32_t i = 0; i < a->nargs; i++) {
        rf_buf b;
        rf_buf_init(&b);
        rf_ast_expr_print(a->args[i], &b);
        scalar(m, rf_buf_cstr(&b));
        rf_buf_free(&b);
    }
    seq_end(m);
    map_end(m);
}

static void formula(em *m, const rf_ast_formula *f, int depth)
{
    if (depth > 200) {
        scalar(m, "...");
        return;
    }
    map_start(m);
    switch (f->kind) {
    case RF_FORM_ATOM:
        scalar(m, "atom");
        atom(m, &f->atom);
        break;
    case RF_FORM_CMP:
        scalar(m, "compare");
        map_start(m);
        kloc(m, f->loc);
        kv(m, "op", rf_cmp_op_name(f->op));
        expr_text(m, "left", f->lhs);
        expr_text(m, "right", f->rhs);
        map_end(m);
        break;
    case RF_FORM_NOT:
        scalar(m, "not");
        formula(m, f->sub, depth + 1);
        break;
    case RF_FORM_AND:
    case RF_FORM_OR:
        scalar(m, f->kind == RF_FORM_AND ? "and" : "or");
        seq_start(m);
        for (int32_t i = 0; i < f->nitems; i++) formula(m, f->items[i], depth + 1);
        seq_end(m);
        break;
    }
    map_end(m);
}

rf_status rf_ast_print_yaml(const rf_ast_program *p, rf_buf *out)
{
    em m;
    m.ok = 1;
    if (!yaml_emitter_initialize(&m.e)) return RF_ENOMEM;
    yaml_emitter_set_output(&m.e, write_handler, out);
    yaml_emitter_set_unicode(&m.e, 1);
    yaml_event_t ev;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    emit(&m, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    emit(&m, &ev);
    map_start(&m);
    kv(&m, "file", p->file);
    scalar(&m, "clauses");
    seq_start(&m);
    for (int64_t i = 0; i < p->nclauses; i++) {
        const rf_ast_clause *c = p->clauses[i];
        map_start(&m);
        kv(&m, "kind", c->kind == RF_CLAUSE_DECL ? "declaration" : c->body ? "rule" : "fact");
        kloc(&m, c->loc);
        scalar(&m, "heads");
        seq_start(&m);
        for (int32_t h = 0; h < c->nheads; h++) atom(&m, c->heads[h]);
        seq_end(&m);
        if (c->naggs) {
            scalar(&m, "aggregates");
            seq_start(&m);
            for (int32_t g = 0; g < c->naggs; g++) {
                map_start(&m);
                kv(&m, "var", c->aggs[g].var);
                kv(&m, "function", c->aggs[g].func);
                if (c->aggs[g].arg) expr_text(&m, "arg", c->aggs[g].arg);
                map_end(&m);
            }
            seq_end(&m);
        }
        if (c->body) {
            scalar(&m, c->kind == RF_CLAUSE_DECL ? "types" : "body");
            formula(&m, c->body, 0);
        }
        map_end(&m);
    }
    seq_end(&m);
    map_end(&m);
    yaml_document_end_event_initialize(&ev, 1);
    emit(&m, &ev);
    yaml_stream_end_event_initialize(&ev);
    emit(&m, &ev);
    yaml_emitter_delete(&m.e);
    if (out->oom) return RF_ENOMEM;
    return m.ok ? RF_OK : RF_EINTERNAL;
}
