/*
** frontend/print.c: the checked program as LogiQL-like text, for
** `redfox dump --rules` and for golden tests of the desugaring.
*/
#include "check_internal.h"

/* A cast as a dump shows it: the conversion built-in, or for the wide
** decimal decimal128[x] (widening) and decimal[x] (narrowing, range-checked). */
const char *rf_fe_cast_name(rf_type from, rf_type to)
{
    if (to == RF_TYPE_DEC128) return "decimal128";
    if (to == RF_TYPE_DECIMAL) return from == RF_TYPE_INT ? "int:decimal" : "decimal";
    return from == RF_TYPE_INT ? "int:float" : "decimal:float";
}

void rf_fe_const_print(const rf_fe_const *k, rf_buf *out)
{
    switch (k->type) {
    case RF_TYPE_INT: rf_val_fmt_int(out, k->i); break;
    case RF_TYPE_DECIMAL:
    case RF_TYPE_DEC128: rf_val_fmt_dec(out, k->i); break; /* a wide constant holds a decimal's value */
    case RF_TYPE_FLOAT: rf_val_fmt_float(out, k->f); rf_buf_putc(out, 'f'); break;
    case RF_TYPE_BOOL: rf_buf_puts(out, k->i ? "true" : "false"); break;
    case RF_TYPE_DATE:
        rf_buf_puts(out, "date:parse[\"");
        rf_val_fmt_date(out, (int32_t)k->i);
        rf_buf_puts(out, "\"]");
        break;
    case RF_TYPE_STRING:
        rf_buf_putc(out, '"');
        for (int64_t i = 0; i < k->slen; i++) {
            char ch = k->s[i];
            if (ch == '"' || ch == '\\') rf_buf_putc(out, '\\');
            if (ch == '\n') rf_buf_puts(out, "\\n");
            else if (ch == '\t') rf_buf_puts(out, "\\t");
            else rf_buf_putc(out, ch);
        }
        rf_buf_putc(out, '"');
        break;
    }
}

void rf_fe_expr_print(const rf_fe_rule *r, const rf_fe_expr *e, rf_buf *out)
{
    switch (e->kind) {
    case RF_FE_VAR: rf_buf_puts(out, r->vars[e->var].name); break;
    case RF_FE_CONST: rf_fe_const_print(&e->c, out); break;
    case RF_FE_NEG:
        rf_buf_putc(out, '-');
        rf_fe_expr_print(r, e->args[0], out);
        break;
    case RF_FE_BINOP: /* a chain: (a + b + c) */
        rf_buf_putc(out, '(');
        for (int32_t i = 0; i < e->nargs; i++) {
            if (i) rf_buf_printf(out, " %c ", e->op);
            rf_fe_expr_print(r, e->args[i], out);
        }
        rf_buf_putc(out, ')');
        break;
    case RF_FE_CALL:
    case RF_FE_CAST:
        if (e->kind == RF_FE_CALL) rf_buf_printf(out, "%s[", rf_fe_builtin_info(e->fn)->name);
        else rf_buf_printf(out, "%s[", rf_fe_cast_name(e->args[0]->type, e->type));
        for (int32_t i = 0; i < e->nargs; i++) {
            if (i) rf_buf_puts(out, ", ");
            rf_fe_expr_print(r, e->args[i], out);
        }
        rf_buf_putc(out, ']');
        break;
    }
}

static void print_args(const rf_fe_rule *r, rf_fe_expr **args, int32_t n, int functional, rf_buf *out)
{
    rf_buf_putc(out, functional ? '[' : '(');
    for (int32_t i = 0; i < n - (functional ? 1 : 0); i++) {
        if (i) rf_buf_puts(out, ", ");
        rf_fe_expr_print(r, args[i], out);
    }
    rf_buf_putc(out, functional ? ']' : ')');
    if (functional) {
        rf_buf_puts(out, " = ");
        rf_fe_expr_print(r, args[n - 1], out);
    }
}

static void print_rule(const rf_fe_rule *r, rf_buf *out)
{
    rf_buf_printf(out, "  %s", r->head->name);
    print_args(r, r->head_args, r->head->arity, r->head->functional, out);
    if (!r->nbody && !r->naggs) {
        rf_buf_puts(out, ".\n");
        return;
    }
    rf_buf_puts(out, " <-");
    if (r->naggs) {
        rf_buf_puts(out, " agg<<");
        for (int32_t g = 0; g < r->naggs; g++) {
            rf_buf_printf(out, "%s%s = %s(", g ? ", " : "", r->vars[r->aggs[g].out_var].name,
                          rf_agg_fn_name(r->aggs[g].fn));
            if (r->aggs[g].arg_var >= 0) rf_buf_puts(out, r->vars[r->aggs[g].arg_var].name);
            rf_buf_putc(out, ')');
        }
        rf_buf_puts(out, ">>");
    }
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *l = r->body[i];
        rf_buf_puts(out, i ? ",\n      " : "\n      ");
        if (l->negated) rf_buf_putc(out, '!');
        switch (l->kind) {
        case RF_FE_ATOM:
            rf_buf_puts(out, l->pred->name);
            print_args(r, l->args, l->nargs, l->pred->functional, out);
            break;
        case RF_FE_BUILTIN:
            rf_buf_puts(out, rf_fe_builtin_info(l->fn)->name);
            print_args(r, l->args, l->nargs, 0, out);
            break;
        case RF_FE_CMP:
            rf_fe_expr_print(r, l->lhs, out);
            rf_buf_printf(out, " %s ", rf_cmp_op_name(l->op));
            rf_fe_expr_print(r, l->rhs, out);
            break;
        case RF_FE_ASSIGN:
            rf_buf_printf(out, "%s := ", r->vars[l->var].name);
            rf_fe_expr_print(r, l->rhs, out);
            break;
        case RF_FE_OR:
            rf_buf_putc(out, '(');
            for (int32_t a = 0; a < l->nalts; a++) {
                if (a) rf_buf_puts(out, " ; ");
                for (int32_t j = 0; j < l->altn[a]; j++) {
                    const rf_fe_lit *x = l->alts[a][j];
                    if (j) rf_buf_puts(out, ", ");
                    rf_fe_expr_print(r, x->lhs, out);
                    rf_buf_printf(out, " %s ", rf_cmp_op_name(x->op));
                    rf_fe_expr_print(r, x->rhs, out);
                }
            }
            rf_buf_putc(out, ')');
            break;
        }
    }
    rf_buf_puts(out, ".\n");
}

void rf_fe_print_program(const rf_fe_program *p, rf_buf *out)
{
    for (int32_t s = 0; s < p->nstrata; s++) {
        const rf_fe_stratum *st = &p->strata[s];
        const char *kind = st->recursive ? " (recursive)" : "";
        for (int32_t i = 0; i < st->npreds && st->lattice; i++)
            if (st->preds[i]->lattice) kind = st->preds[i]->lattice_fn == RF_AGG_MAX ? " (recursive max)" : " (recursive min)";
        rf_buf_printf(out, "stratum %d%s:", s, kind);
        for (int32_t i = 0; i < st->npreds; i++) rf_buf_printf(out, " %s", st->preds[i]->name);
        rf_buf_putc(out, '\n');
        for (int32_t i = 0; i < st->npreds; i++) {
            const rf_fe_pred *q = st->preds[i];
            rf_buf_printf(out, "  // %s%c", q->name, q->functional ? '[' : '(');
            for (int32_t j = 0; j < q->arity; j++) {
                if (q->functional && j == q->arity - 1) rf_buf_puts(out, "] = ");
                else if (j) rf_buf_puts(out, ", ");
                rf_buf_printf(out, "%s %s", q->cols[j] ? q->cols[j] : "_",
                              q->types[j] == RF_TYPE_DEC128 ? "decimal128" : rf_fe_type_name(q->types[j]));
            }
            rf_buf_printf(out, "%s%s%s%s%s", q->functional ? "" : ")", q->declared ? " declared" : "",
                          q->input_file ? " input=" : "", q->input_file ? q->input_file : "",
                          q->output_name ? " output" : "");
            if (q->aux == 2 && q->shown) rf_buf_printf(out, " negated as %s", q->shown);
            rf_buf_putc(out, '\n');
            for (int32_t j = 0; j < q->nrules; j++) print_rule(q->rules[j], out);
        }
    }
}
