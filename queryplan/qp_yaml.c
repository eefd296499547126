/*
** queryplan/qp_yaml.c: the plan as YAML, written with libyaml's emitter (so
** quoting and escaping are libyaml's business, never hand-built).
**
** Owns: the YAML schema of a plan: relations (with columns and properties)
** and blocks (commands with their fields, terminator). Expressions are
** given as their text form, the same as the text dump; everything else is
** structured. Strings that would read back as numbers or booleans are
** double-quoted.
*/
#include "qp_internal.h"

#include <yaml.h>

typedef struct ye {
    yaml_emitter_t em;
    int bad;
} ye;

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
    rf_buf *out = data;
    rf_buf_append(out, buffer, (int64_t)size);
    return !out->oom;
}

static void ev(ye *y, yaml_event_t *e, int ok)
{
    if (y->bad) {
        if (ok) yaml_event_delete(e);
        return;
    }
    if (!ok || !yaml_emitter_emit(&y->em, e)) y->bad = 1; /* emit frees the event, even on failure */
}

/* Strings a YAML 1.1/1.2 reader would not take as strings when plain. */
static int ambiguous(const char *s)
{
    static const char *words[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
    if (!*s) return 1;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        const char *w = words[i];
        size_t k = 0;
        while (w[k] && s[k] && (s[k] | 0x20) == w[k]) k++;
        if (!w[k] && !s[k]) return 1;
    }
    const char *t = s;
    if (*t == '-' || *t == '+' || *t == '.') t++;
    return (*t >= '0' && *t <= '9') || *t == '.';
}

static void scalar(ye *y, const char *s, int plain)
{
    yaml_event_t e;
    if (!s) s = "";
    /* libyaml takes UTF-8 only: a byte that is not (a string constant may
    ** hold any bytes) is written as the text \xHH */
    int64_t n = (int64_t)strlen(s);
    rf_buf clean;
    rf_buf_init(&clean);
    for (int64_t i = 0; i < n;) {
        int k = rf_val_utf8_len(s + i, n - i);
        if (k > 0) {
            rf_buf_append(&clean, s + i, k);
            i += k;
        } else {
            rf_buf_printf(&clean, "\\x%02X", (unsigned char)s[i]);
            i++;
        }
    }
    const char *t = rf_buf_cstr(&clean);
    if (!t) t = "";
    yaml_scalar_style_t st = plain || !ambiguous(t) ? YAML_ANY_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    if (clean.oom) y->bad = 1;
    ev(y, &e, yaml_scalar_event_initialize(&e, NULL, NULL, (yaml_char_t *)t, (int)strlen(t), 1, 1, st));
    rf_buf_free(&clean);
}

static void str(ye *y, const char *s) { scalar(y, s, 0); }

static void num(ye *y, int64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)v);
    scalar(y, b, 1);
}

static void boolean(ye *y, int v) { scalar(y, v ? "true" : "false", 1); }

static void map_start(ye *y, int flow)
{
    yaml_event_t e;
    ev(y, &e, yaml_mapping_start_event_initialize(&e, NULL, NULL, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE));
}

static void map_end(ye *y)
{
    yaml_event_t e;
    ev(y, &e, yaml_mapping_end_event_initialize(&e));
}

static void seq_start(ye *y, int flow)
{
    yaml_event_t e;
    ev(y, &e, yaml_sequence_start_event_initialize(&e, NULL, NULL, 1, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE));
}

static void seq_end(ye *y)
{
    yaml_event_t e;
    ev(y, &e, yaml_sequence_end_event_initialize(&e));
}

static void kv_str(ye *y, const char *k, const char *v)
{
    str(y, k);
    str(y, v);
}

static void kv_num(ye *y, const char *k, int64_t v)
{
    str(y, k);
    num(y, v);
}

static void kv_bool(ye *y, const char *k, int v)
{
    str(y, k);
    boolean(y, v);
}

static void order_list(ye *y, const rf_fe_order *o, int32_t n)
{
    seq_start(y, 1);
    for (int32_t i = 0; i < n; i++) {
        map_start(y, 1);
        kv_num(y, "col", o[i].col);
        kv_bool(y, "desc", o[i].desc);
        map_end(y);
    }
    seq_end(y);
}

static void rel_yaml(ye *y, const rf_qp_rel *r)
{
    map_start(y, 0);
    kv_str(y, "name", r->name);
    kv_num(y, "id", r->id);
    kv_str(y, "kind", rf_qp_rel_kind_name(r->kind));
    if (r->pred) kv_str(y, "predicate", r->pred->name);
    if (r->stratum >= 0) kv_num(y, "stratum", r->stratum);
    str(y, "columns");
    seq_start(y, 0);
    for (int32_t i = 0; i < r->ncols; i++) {
        map_start(y, 1);
        if (r->colnames[i]) kv_str(y, "name", r->colnames[i]);
        kv_str(y, "type", rf_val_type_name(r->types[i]));
        map_end(y);
    }
    seq_end(y);
    kv_num(y, "keys", r->nkeys);
    kv_bool(y, "fd_checked", r->fd_checked);
    kv_bool(y, "unique", r->unique);
    if (r->keyset) {
        str(y, "rowkey");
        seq_start(y, 1);
        for (int32_t i = 0; i < 64; i++)
            if (r->keyset >> i & 1) num(y, i);
        seq_end(y);
    }
    if (r->nfds > 0) {
        str(y, "fds");
        seq_start(y, 0);
        for (int32_t f = 0; f < r->nfds; f++) {
            map_start(y, 1);
            str(y, "lhs");
            seq_start(y, 1);
            for (int32_t i = 0; i < 64; i++)
                if (r->fds[f].lhs >> i & 1) num(y, i);
            seq_end(y);
            str(y, "rhs");
            seq_start(y, 1);
            for (int32_t i = 0; i < 64; i++)
                if (r->fds[f].rhs >> i & 1) num(y, i);
            seq_end(y);
            map_end(y);
        }
        seq_end(y);
    }
    if (r->nsort > 0) {
        str(y, "sorted");
        order_list(y, r->sort, r->nsort);
    }
    kv_num(y, "card", r->card);
    kv_bool(y, "card_exact", r->card_exact);
    if (r->kind == RF_QP_REL_INPUT) {
        char delim[2] = {r->delimiter, 0};
        str(y, "input");
        map_start(y, 0);
        kv_str(y, "file", r->input_file);
        kv_str(y, "delimiter", delim);
        kv_bool(y, "header", r->header);
        if (r->ninput_key) {
            str(y, "key");
            seq_start(y, 1);
            for (int32_t i = 0; i < r->ninput_key; i++) num(y, r->input_key[i]);
            seq_end(y);
        }
        map_end(y);
    }
    if (r->kind == RF_QP_REL_OUTPUT) {
        str(y, "output");
        map_start(y, 0);
        kv_str(y, "name", r->output_name);
        str(y, "order");
        order_list(y, r->order, r->norder);
        kv_num(y, "limit", r->limit);
        map_end(y);
    }
    map_end(y);
}

static void expr_yaml(ye *y, const rf_qp_expr *e, const char *a, const char *b, rf_buf *tmp)
{
    tmp->len = 0;
    rf_qp_print_expr(e, a, b, tmp);
    str(y, rf_buf_cstr(tmp));
}

static void cmd_yaml(ye *y, const rf_qp_cmd *c, rf_buf *tmp)
{
    const char *a = c->nin > 0 ? c->in[0]->name : NULL;
    const char *b = c->nin > 1 ? c->in[1]->name : NULL;
    char *bp = NULL;
    if (c->nin > 1 && c->in[1] == c->in[0]) b = bp = rf_sprintf("%s'", c->in[1]->name);
    map_start(y, 0);
    kv_str(y, "op", rf_qp_op_name(c->op));
    kv_str(y, "dst", c->dst->name);
    str(y, "inputs");
    seq_start(y, 1);
    for (int32_t i = 0; i < c->nin; i++) str(y, c->in[i]->name);
    seq_end(y);
    if (c->op == RF_QP_MAPJOIN || c->op == RF_QP_ANTIJOIN) {
        str(y, "keys");
        seq_start(y, 1);
        for (int32_t k = 0; k < c->nkeys; k++) {
            seq_start(y, 1);
            num(y, c->lkeys[k]);
            num(y, c->rkeys[k]);
            seq_end(y);
        }
        seq_end(y);
    }
    if (c->op == RF_QP_LFTJ) {
        /* per input, the variable each column binds (-1: projected away) */
        str(y, "vars");
        seq_start(y, 1);
        for (int32_t i = 0, off = 0; i < c->nin; off += c->in[i]->ncols, i++) {
            seq_start(y, 1);
            for (int32_t col = 0; col < c->in[i]->ncols; col++) num(y, c->colvar[off + col]);
            seq_end(y);
        }
        seq_end(y);
        a = b = c->dst->name; /* the filter reads the variables */
    }
    if (c->filter) {
        str(y, "filter");
        expr_yaml(y, c->filter, a, b, tmp);
    }
    if (c->op == RF_QP_MAPFILTER || c->op == RF_QP_MAPJOIN || c->op == RF_QP_ANTIJOIN) {
        str(y, "outs");
        seq_start(y, 1);
        for (int32_t i = 0; i < c->nouts; i++) expr_yaml(y, c->outs[i], a, b, tmp);
        seq_end(y);
    }
    if (c->op == RF_QP_AGGREGATE) {
        str(y, "group");
        seq_start(y, 1);
        for (int32_t i = 0; i < c->ngroup; i++) num(y, c->group[i]);
        seq_end(y);
        str(y, "aggregates");
        seq_start(y, 0);
        for (int32_t i = 0; i < c->naggs; i++) {
            map_start(y, 1);
            kv_str(y, "fn", rf_agg_fn_name(c->aggs[i].fn));
            if (c->aggs[i].col >= 0) kv_num(y, "col", c->aggs[i].col);
            kv_str(y, "type", rf_val_type_name(c->aggs[i].type));
            map_end(y);
        }
        seq_end(y);
        if (c->partial) kv_bool(y, "partial", 1);
    }
    if (c->op == RF_QP_FACTS) {
        int32_t w = c->dst->ncols;
        str(y, "rows");
        seq_start(y, 0);
        for (int64_t i = 0; i < c->nrows; i++) {
            seq_start(y, 1);
            for (int32_t j = 0; j < w; j++) {
                tmp->len = 0;
                rf_fe_const_print(&c->rows[i * w + j], tmp);
                str(y, rf_buf_cstr(tmp));
            }
            seq_end(y);
        }
        seq_end(y);
    }
    if (c->op == RF_QP_ORDERLIMIT) {
        str(y, "order");
        order_list(y, c->order, c->norder);
        kv_num(y, "limit", c->limit);
    }
    if (c->op == RF_QP_UNIQUE) kv_bool(y, "check_fd", c->check_fd);
    if (c->loc.line) kv_num(y, "line", c->loc.line);
    if (c->note) kv_str(y, "note", c->note);
    tmp->len = 0;
    rf_qp_print_cmd(c, tmp);
    kv_str(y, "text", rf_buf_cstr(tmp));
    map_end(y);
    free(bp);
}

rf_status rf_qp_print_yaml(const rf_qp_program *p, rf_buf *out)
{
    ye y;
    memset(&y, 0, sizeof y);
    if (!yaml_emitter_initialize(&y.em)) return RF_ENOMEM;
    yaml_emitter_set_output(&y.em, write_handler, out);
    yaml_emitter_set_unicode(&y.em, 1);
    yaml_emitter_set_width(&y.em, -1);
    rf_buf tmp;
    rf_buf_init(&tmp);
    yaml_event_t e;
    ev(&y, &e, yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING));
    ev(&y, &e, yaml_document_start_event_initialize(&e, NULL, NULL, NULL, 1));
    map_start(&y, 0);
    str(&y, "relations");
    seq_start(&y, 0);
    for (int32_t i = 0; i < p->nrels; i++) rel_yaml(&y, p->rels[i]);
    seq_end(&y);
    str(&y, "blocks");
    seq_start(&y, 0);
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_block *bl = p->blocks[b];
        map_start(&y, 0);
        kv_num(&y, "id", bl->id);
        if (bl->comment) kv_str(&y, "comment", bl->comment);
        str(&y, "commands");
        seq_start(&y, 0);
        for (int32_t i = 0; i < bl->ncmds; i++) cmd_yaml(&y, bl->cmds[i], &tmp);
        seq_end(&y);
        str(&y, "terminator");
        map_start(&y, 0);
        const rf_qp_term *t = &bl->term;
        kv_str(&y, "kind", t->kind == RF_QP_T_GOTO ? "goto" : t->kind == RF_QP_T_BRANCH ? "branch" : "halt");
        if (t->kind == RF_QP_T_BRANCH) {
            str(&y, "nonempty");
            seq_start(&y, 1);
            for (int32_t j = 0; j < t->nrels; j++) str(&y, t->rels[j]->name);
            seq_end(&y);
        }
        if (t->kind != RF_QP_T_HALT) kv_num(&y, "target", t->target);
        if (t->kind == RF_QP_T_BRANCH) kv_num(&y, "else", t->else_target);
        map_end(&y);
        map_end(&y);
    }
    seq_end(&y);
    map_end(&y);
    ev(&y, &e, yaml_document_end_event_initialize(&e, 1));
    ev(&y, &e, yaml_stream_end_event_initialize(&e));
    if (!y.bad && !yaml_emitter_flush(&y.em)) y.bad = 1;
    yaml_emitter_delete(&y.em);
    int oom = tmp.oom || out->oom;
    rf_buf_free(&tmp);
    if (oom) return RF_ENOMEM;
    return y.bad ? RF_EINTERNAL : RF_OK;
}
