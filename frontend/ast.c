/*
** frontend/ast.c: AST node constructors and the `dump --ast` printer.
*/
#include "rf_frontend.h"

#include <string.h>

rf_ast_expr *rf_ast_expr_new(rf_arena *a, rf_ast_expr_kind kind, rf_loc loc)
{
    rf_ast_expr *e = rf_arena_alloc(a, sizeof *e);
    if (e) {
        e->kind = kind;
        e->loc = loc;
        e->height = 0;
    }
    return e;
}

rf_ast_formula *rf_ast_formula_new(rf_arena *a, rf_ast_formula_kind kind, rf_loc loc)
{
    rf_ast_formula *f = rf_arena_alloc(a, sizeof *f);
    if (f) {
        f->kind = kind;
        f->loc = loc;
    }
    return f;
}

const char *rf_cmp_op_name(rf_cmp_op op)
{
    static const char *n[] = {"=", "!=", "<", "<=", ">", ">="};
    return (unsigned)op < 6 ? n[op] : "?";
}

/* Strings are printed with the escapes the lexer accepts, so output re-parses. */
static void print_string(const char *s, int64_t n, rf_buf *out)
{
    rf_buf_putc(out, '"');
    for (int64_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '"') rf_buf_puts(out, "\\\"");
        else if (c == '\\') rf_buf_puts(out, "\\\\");
        else if (c == '\n') rf_buf_puts(out, "\\n");
        else if (c == '\t') rf_buf_puts(out, "\\t");
        else rf_buf_putc(out, c);
    }
    rf_buf_putc(out, '"');
}

void rf_ast_expr_print(const rf_ast_expr *e, rf_buf *out)
{
    switch (e->kind) {
    case RF_AST_VAR: rf_buf_puts(out, e->name); break;
    case RF_AST_WILDCARD: rf_buf_putc(out, '_'); break;
    case RF_AST_INT: rf_buf_printf(out, "%lld", (long long)e->ival); break;
    case RF_AST_DECIMAL: rf_val_fmt_dec(out, e->ival); break;
    case RF_AST_FLOAT: rf_val_fmt_float(out, e->fval); rf_buf_putc(out, 'f'); break;
    case RF_AST_STRING: print_string(e->sval, e->slen, out); break;
    case RF_AST_BOOL: rf_buf_puts(out, e->ival ? "true" : "false"); break;
    case RF_AST_DATE:
        rf_buf_puts(out, "date:parse[\"");
        rf_val_fmt_date(out, (int32_t)e->ival);
        rf_buf_puts(out, "\"]");
        break;
    case RF_AST_PREDREF: rf_buf_printf(out, "`%s", e->sval); break;
    case RF_AST_BINOP: /* a chain: (a + b + c) */
        rf_buf_putc(out, '(');
        for (int32_t i = 0; i < e->nargs; i++) {
            if (i) rf_buf_printf(out, " %c ", e->op);
            rf_ast_expr_print(e->args[i], out);
        }
        rf_buf_putc(out, ')');
        break;
    case RF_AST_NEG:
        rf_buf_puts(out, "-");
        rf_ast_expr_print(e->lhs, out);
        break;
    case RF_AST_APPLY:
        rf_buf_printf(out, "%s[", e->name);
        for (int32_t i = 0; i < e->nargs; i++) {
            if (i) rf_buf_puts(out, ", ");
            rf_ast_expr_print(e->args[i], out);
        }
        rf_buf_putc(out, ']');
        break;
    }
}

static void print_atom(const rf_ast_atom *a, rf_buf *out)
{
    int32_t nkeys = a->functional ? a->nargs - 1 : a->nargs;
    rf_buf_printf(out, "%s%c", a->name, a->functional ? '[' : '(');
    for (int32_t i = 0; i < nkeys; i++) {
        if (i) rf_buf_puts(out, ", ");
        rf_ast_expr_print(a->args[i], out);
    }
    rf_buf_putc(out, a->functional ? ']' : ')');
    if (a->functional) {
        rf_buf_puts(out, " = ");
        rf_ast_expr_print(a->args[a->nargs - 1], out);
    }
}

static void indent(rf_buf *out, int depth)
{
    for (int i = 0; i < depth; i++) rf_buf_puts(out, "  ");
}

static void print_formula(const rf_ast_formula *f, rf_buf *out, int depth)
{
    indent(out, depth);
    switch (f->kind) {
    case RF_FORM_ATOM:
        rf_buf_printf(out, "atom %d:%d ", f->loc.line, f->loc.col);
        print_atom(&f->atom, out);
        rf_buf_putc(out, '\n');
        break;
    case RF_FORM_CMP:
        rf_buf_printf(out, "compare %d:%d ", f->loc.line, f->loc.col);
        rf_ast_expr_print(f->lhs, out);
        rf_buf_printf(out, " %s ", rf_cmp_op_name(f->op));
        rf_ast_expr_print(f->rhs, out);
        rf_buf_putc(out, '\n');
        break;
    case RF_FORM_NOT:
        rf_buf_printf(out, "not %d:%d\n", f->loc.line, f->loc.col);
        print_formula(f->sub, out, depth + 1);
        break;
    case RF_FORM_AND:
    case RF_FORM_OR:
        rf_buf_printf(out, "%s\n", f->kind == RF_FORM_AND ? "and" : "or");
        for (int32_t i = 0; i < f->nitems; i++) print_formula(f->items[i], out, depth + 1);
        break;
    }
}

void rf_ast_print_text(const rf_ast_program *p, rf_buf *out)
{
    rf_buf_printf(out, "program %s (%lld clauses)\n", p->file, (long long)p->nclauses);
    for (int64_t i = 0; i < p->nclauses; i++) {
        const rf_ast_clause *c = p->clauses[i];
        const char *what = c->kind == RF_CLAUSE_DECL ? "declaration" : c->body ? "rule" : "fact";
        rf_buf_printf(out, "%s %d:%d\n", what, c->loc.line, c->loc.col);
        for (int32_t h = 0; h < c->nheads; h++) {
            rf_buf_puts(out, "  head ");
            print_atom(c->heads[h], out);
            rf_buf_putc(out, '\n');
        }
        for (int32_t g = 0; g < c->naggs; g++) {
            rf_buf_printf(out, "  aggregate %s = %s(", c->aggs[g].var, c->aggs[g].func);
            if (c->aggs[g].arg) rf_ast_expr_print(c->aggs[g].arg, out);
            rf_buf_puts(out, ")\n");
        }
        if (c->body) {
            rf_buf_puts(out, c->kind == RF_CLAUSE_DECL ? "  types\n" : "  body\n");
            print_formula(c->body, out, 2);
        }
    }
}
