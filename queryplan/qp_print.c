/*
** queryplan/qp_print.c: the text and Graphviz views of a plan.
**
** Owns: the textual form of expressions, commands, relation properties and
** terminators (the YAML printer reuses them for its one-line fields), the
** text dump (the main debugging view: deterministic, one command per line)
** and the dot dump (one node per block). Column references print as
** relation.column with 0-based columns; in a self-join the right input is
** primed (edge') so the two sides stay apart.
*/
#include "qp_internal.h"

const char *qp_cmp_text(rf_cmp_op op) { return rf_cmp_op_name(op); }

static void expr_text(const rf_qp_expr *e, const char *in0, const char *in1, rf_buf *out, int top)
{
    if (!e) {
        rf_buf_puts(out, "true");
        return;
    }
    switch (e->kind) {
    case RF_QP_E_COL: rf_buf_printf(out, "%s.%d", e->side ? in1 : in0, e->col); break;
    case RF_QP_E_CONST: rf_fe_const_print(&e->c, out); break;
    case RF_QP_E_BINOP: /* a chain: (a + b + c) */
        rf_buf_putc(out, '(');
        for (int32_t i = 0; i < e->nargs; i++) {
            if (i) rf_buf_printf(out, " %c ", e->op);
            expr_text(e->args[i], in0, in1, out, 0);
        }
        rf_buf_putc(out, ')');
        break;
    case RF_QP_E_NEG:
        rf_buf_putc(out, '-');
        expr_text(e->args[0], in0, in1, out, 0);
        break;
    case RF_QP_E_CALL:
    case RF_QP_E_CAST:
    case RF_QP_E_LIKE: {
        const char *name;
        char cast[48];
        if (e->kind == RF_QP_E_CAST) {
            /* FROM:TO, as the builtins are named (int:decimal, decimal:float);
            ** the wide decimal as the dump types it (decimal128: the compiler's
            ** widening and narrowing, never source text) */
            snprintf(cast, sizeof cast, "%s:%s", rf_val_type_name(e->args[0]->type), rf_val_type_name(e->type));
            name = cast;
        } else {
            const rf_builtin_info *bi = rf_fe_builtin_info(e->kind == RF_QP_E_LIKE ? RF_BI_LIKE : e->fn);
            name = bi ? bi->name : "?";
        }
        int pred = e->kind == RF_QP_E_LIKE;
        rf_buf_printf(out, "%s%c", name, pred ? '(' : '[');
        for (int32_t i = 0; i < e->nargs; i++) {
            if (i) rf_buf_puts(out, ", ");
            expr_text(e->args[i], in0, in1, out, 0);
        }
        rf_buf_putc(out, pred ? ')' : ']');
        break;
    }
    case RF_QP_E_CMP:
        if (!top) rf_buf_putc(out, '(');
        expr_text(e->args[0], in0, in1, out, 0);
        rf_buf_printf(out, " %s ", qp_cmp_text(e->cmp));
        expr_text(e->args[1], in0, in1, out, 0);
        if (!top) rf_buf_putc(out, ')');
        break;
    case RF_QP_E_AND:
        if (!top) rf_buf_putc(out, '(');
        for (int32_t i = 0; i < e->nargs; i++) {
            if (i) rf_buf_puts(out, " and ");
            expr_text(e->args[i], in0, in1, out, 1);
        }
        if (!top) rf_buf_putc(out, ')');
        break;
    case RF_QP_E_NOT:
        rf_buf_puts(out, "!(");
        expr_text(e->args[0], in0, in1, out, 1);
        rf_buf_putc(out, ')');
        break;
    }
}

void rf_qp_print_expr(const rf_qp_expr *e, const char *in0, const char *in1, rf_buf *out)
{
    expr_text(e, in0, in1 ? in1 : "?", out, 1);
}

static void outs_text(const rf_qp_cmd *c, const char *a, const char *b, rf_buf *out)
{
    rf_buf_puts(out, " -> (");
    for (int32_t i = 0; i < c->nouts; i++) {
        if (i) rf_buf_puts(out, ", ");
        expr_text(c->outs[i], a, b, out, 0);
    }
    rf_buf_putc(out, ')');
}

static void keys_text(const rf_qp_cmd *c, const char *a, const char *b, rf_buf *out)
{
    if (c->op == RF_QP_MAPJOIN && c->nkeys == 0) {
        rf_buf_puts(out, " cross");
        return;
    }
    rf_buf_puts(out, " on (");
    for (int32_t k = 0; k < c->nkeys; k++)
        rf_buf_printf(out, "%s%s.%d = %s.%d", k ? ", " : "", a, c->lkeys[k], b, c->rkeys[k]);
    rf_buf_putc(out, ')');
}

#define FACT_ROWS_SHOWN 8

void rf_qp_print_cmd(const rf_qp_cmd *c, rf_buf *out)
{
    const char *a = c->nin > 0 ? c->in[0]->name : "?";
    char bname[512];
    const char *b = "?";
    if (c->nin > 1) {
        if (c->in[1] == c->in[0]) {
            snprintf(bname, sizeof bname, "%s'", c->in[1]->name);
            b = bname;
        } else {
            b = c->in[1]->name;
        }
    }
    rf_buf_printf(out, "%s = %s", c->dst->name, rf_qp_op_name(c->op));
    switch (c->op) {
    case RF_QP_MAPFILTER:
        rf_buf_printf(out, " %s", a);
        if (c->filter) {
            rf_buf_puts(out, " filter ");
            expr_text(c->filter, a, b, out, 1);
        }
        outs_text(c, a, b, out);
        break;
    case RF_QP_MAPJOIN:
    case RF_QP_ANTIJOIN:
        rf_buf_printf(out, " %s, %s", a, b);
        keys_text(c, a, b, out);
        if (c->filter) {
            rf_buf_puts(out, " filter ");
            expr_text(c->filter, a, b, out, 1);
        }
        outs_text(c, a, b, out);
        break;
    case RF_QP_AGGREGATE:
        rf_buf_printf(out, " %s group (", a);
        for (int32_t i = 0; i < c->ngroup; i++) rf_buf_printf(out, "%s%s.%d", i ? ", " : "", a, c->group[i]);
        rf_buf_puts(out, ") -> (");
        for (int32_t i = 0; i < c->naggs; i++) {
            rf_buf_printf(out, "%s%s(", i ? ", " : "", rf_agg_fn_name(c->aggs[i].fn));
            if (c->aggs[i].col >= 0) rf_buf_printf(out, "%s.%d", a, c->aggs[i].col);
            rf_buf_putc(out, ')');
        }
        rf_buf_putc(out, ')');
        if (c->partial) rf_buf_puts(out, " partial");
        break;
    case RF_QP_UNION:
    case RF_QP_DIFFERENCE:
    case RF_QP_UNIQUE:
    case RF_QP_COPY:
        for (int32_t i = 0; i < c->nin; i++) rf_buf_printf(out, "%s%s", i ? ", " : " ", c->in[i]->name);
        if (c->check_fd) rf_buf_printf(out, " check-fd(key %d)", c->dst->nkeys);
        break;
    case RF_QP_FACTS: {
        int32_t w = c->dst->ncols;
        rf_buf_printf(out, " %lld row%s", (long long)c->nrows, c->nrows == 1 ? "" : "s");
        for (int64_t i = 0; i < c->nrows && i < FACT_ROWS_SHOWN; i++) {
            rf_buf_puts(out, i ? ", (" : " (");
            for (int32_t j = 0; j < w; j++) {
                if (j) rf_buf_puts(out, ", ");
                rf_fe_const_print(&c->rows[i * w + j], out);
            }
            rf_buf_putc(out, ')');
        }
        if (c->nrows > FACT_ROWS_SHOWN) rf_buf_printf(out, ", ... %lld more", (long long)(c->nrows - FACT_ROWS_SHOWN));
        break;
    }
    case RF_QP_CLEAR: break;
    case RF_QP_ORDERLIMIT:
        rf_buf_printf(out, " %s by (", a);
        for (int32_t i = 0; i < c->norder; i++)
            rf_buf_printf(out, "%s%d %s", i ? ", " : "", c->order[i].col, c->order[i].desc ? "desc" : "asc");
        rf_buf_putc(out, ')');
        if (c->limit >= 0) rf_buf_printf(out, " limit %lld", (long long)c->limit);
        break;
    case RF_QP_LFTJ: {
        /* each input with the variables its columns bind (_: projected away) */
        int32_t off = 0;
        for (int32_t i = 0; i < c->nin; i++) {
            int twice = 0;
            for (int32_t k = 0; k < i; k++) twice |= c->in[k] == c->in[i];
            rf_buf_printf(out, "%s%s%s(", i ? ", " : " ", c->in[i]->name, twice ? "'" : "");
            for (int32_t col = 0; col < c->in[i]->ncols; col++) {
                int32_t v = c->colvar[off + col];
                if (v >= 0) rf_buf_printf(out, "%s%s.%d", col ? ", " : "", c->dst->name, v);
                else rf_buf_printf(out, "%s_", col ? ", " : "");
            }
            rf_buf_putc(out, ')');
            off += c->in[i]->ncols;
        }
        if (c->filter) {
            rf_buf_puts(out, " filter ");
            expr_text(c->filter, c->dst->name, c->dst->name, out, 1);
        }
        break;
    }
    }
}

static void print_delim(char ch, rf_buf *out)
{
    if (ch == '\t') rf_buf_puts(out, "\"\\t\"");
    else if (ch == '"' || ch == '\\') rf_buf_printf(out, "\"\\%c\"", ch);
    else rf_buf_printf(out, "\"%c\"", ch);
}

void qp_rel_text(const rf_qp_rel *r, rf_buf *out)
{
    rf_buf_putc(out, '(');
    for (int32_t i = 0; i < r->ncols; i++)
        rf_buf_printf(out, "%s%s %s", i ? ", " : "", r->colnames[i] ? r->colnames[i] : "_",
                      rf_val_type_name(r->types[i]));
    rf_buf_printf(out, ") %s", rf_qp_rel_kind_name(r->kind));
    if (r->stratum >= 0) rf_buf_printf(out, " stratum=%d", r->stratum);
    if (r->nkeys >= 0) rf_buf_printf(out, " key=%d%s", r->nkeys, r->fd_checked ? " fd-checked" : "");
    if (r->unique) rf_buf_puts(out, " unique");
    if (r->keyset) {
        rf_buf_puts(out, " rowkey(");
        for (int32_t i = 0, n = 0; i < 64; i++)
            if (r->keyset >> i & 1) rf_buf_printf(out, "%s%d", n++ ? ", " : "", i);
        rf_buf_putc(out, ')');
    }
    for (int32_t f = 0; f < r->nfds; f++) {
        rf_buf_puts(out, " fd(");
        for (int32_t i = 0, n = 0; i < 64; i++)
            if (r->fds[f].lhs >> i & 1) rf_buf_printf(out, "%s%d", n++ ? ", " : "", i);
        rf_buf_puts(out, " ->");
        for (int32_t i = 0, n = 0; i < 64; i++)
            if (r->fds[f].rhs >> i & 1) rf_buf_printf(out, "%s%d", n++ ? ", " : " ", i);
        rf_buf_putc(out, ')');
    }
    if (r->nsort > 0) {
        rf_buf_puts(out, " sorted(");
        for (int32_t i = 0; i < r->nsort; i++)
            rf_buf_printf(out, "%s%d%s", i ? ", " : "", r->sort[i].col, r->sort[i].desc ? " desc" : "");
        rf_buf_putc(out, ')');
    }
    rf_buf_printf(out, " card%s%lld", r->card_exact ? "=" : "~", (long long)r->card);
    if (r->kind == RF_QP_REL_INPUT) {
        rf_buf_puts(out, " file=\"");
        rf_buf_puts(out, r->input_file ? r->input_file : "");
        rf_buf_puts(out, "\" delimiter=");
        print_delim(r->delimiter, out);
        if (r->header) rf_buf_puts(out, " header");
        if (r->ninput_key) {
            rf_buf_puts(out, " key(");
            for (int32_t i = 0; i < r->ninput_key; i++) rf_buf_printf(out, "%s%d", i ? ", " : "", r->input_key[i]);
            rf_buf_putc(out, ')');
        }
    }
    if (r->kind == RF_QP_REL_OUTPUT) {
        rf_buf_printf(out, " name=\"%s\" order(", r->output_name ? r->output_name : "");
        for (int32_t i = 0; i < r->norder; i++)
            rf_buf_printf(out, "%s%d %s", i ? ", " : "", r->order[i].col, r->order[i].desc ? "desc" : "asc");
        rf_buf_putc(out, ')');
        if (r->limit >= 0) rf_buf_printf(out, " limit=%lld", (long long)r->limit);
    }
}

void qp_term_text(const rf_qp_term *t, rf_buf *out)
{
    switch (t->kind) {
    case RF_QP_T_GOTO: rf_buf_printf(out, "goto B%d", t->target); break;
    case RF_QP_T_HALT: rf_buf_puts(out, "halt"); break;
    case RF_QP_T_BRANCH:
        rf_buf_puts(out, "branch nonempty(");
        for (int32_t i = 0; i < t->nrels; i++) rf_buf_printf(out, "%s%s", i ? ", " : "", t->rels[i]->name);
        rf_buf_printf(out, ") B%d else B%d", t->target, t->else_target);
        break;
    }
}

void rf_qp_print_text(const rf_qp_program *p, rf_buf *out)
{
    rf_buf_printf(out, "relations (%d):\n", p->nrels);
    for (int32_t i = 0; i < p->nrels; i++) {
        rf_buf_printf(out, "  %s", p->rels[i]->name);
        qp_rel_text(p->rels[i], out);
        rf_buf_putc(out, '\n');
    }
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_block *bl = p->blocks[b];
        rf_buf_printf(out, "\nB%d:", bl->id);
        if (bl->comment) rf_buf_printf(out, "  # %s", bl->comment);
        rf_buf_putc(out, '\n');
        for (int32_t i = 0; i < bl->ncmds; i++) {
            const rf_qp_cmd *c = bl->cmds[i];
            if (c->note) rf_buf_printf(out, "  # %s\n", c->note);
            rf_buf_puts(out, "  ");
            rf_qp_print_cmd(c, out);
            rf_buf_putc(out, '\n');
        }
        rf_buf_puts(out, "  ");
        qp_term_text(&bl->term, out);
        rf_buf_putc(out, '\n');
    }
}

/* Graphviz double-quoted strings: escape quotes and backslashes; lines end
** in \l so that commands are left-aligned. */
static void dot_escape(const char *s, int64_t n, rf_buf *out)
{
    for (int64_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '"' || ch == '\\') rf_buf_putc(out, '\\');
        if (ch == '\n') rf_buf_puts(out, "\\l");
        else rf_buf_putc(out, ch);
    }
}

void rf_qp_print_dot(const rf_qp_program *p, rf_buf *out)
{
    rf_buf_puts(out, "digraph plan {\n  node [shape=box, fontname=\"monospace\"];\n");
    rf_buf line;
    rf_buf_init(&line);
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_block *bl = p->blocks[b];
        line.len = 0;
        rf_buf_printf(&line, "B%d", bl->id);
        if (bl->comment) rf_buf_printf(&line, ": %s", bl->comment);
        rf_buf_putc(&line, '\n');
        for (int32_t i = 0; i < bl->ncmds; i++) {
            rf_buf_puts(&line, "  ");
            rf_qp_print_cmd(bl->cmds[i], &line);
            rf_buf_putc(&line, '\n');
        }
        qp_term_text(&bl->term, &line);
        rf_buf_putc(&line, '\n');
        rf_buf_printf(out, "  B%d [label=\"", bl->id);
        dot_escape(line.data ? line.data : "", line.len, out);
        rf_buf_puts(out, "\"];\n");
    }
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_term *t = &p->blocks[b]->term;
        if (t->kind == RF_QP_T_GOTO) rf_buf_printf(out, "  B%d -> B%d;\n", b, t->target);
        if (t->kind == RF_QP_T_BRANCH) {
            rf_buf_printf(out, "  B%d -> B%d [label=\"nonempty\"];\n", b, t->target);
            rf_buf_printf(out, "  B%d -> B%d [label=\"else\"];\n", b, t->else_target);
        }
    }
    rf_buf_puts(out, "}\n");
    if (line.oom) out->oom = 1;
    rf_buf_free(&line);
}
