/*
** harmony/hir_print.c: `redfox dump --harmony`: variables, then each block's
** kernels in scheduled order with their skeleton, parameters and the
** variables released after them.
*/
#include "hir_internal.h"

static const char *kind_names[] = {"map",    "join_index", "join_map", "anti_index", "gather_map",
                                   "group",  "reduce",     "concat",   "unique",     "difference",
                                   "sort",   "gather",     "copy",     "facts",      "clear",
                                   "insert", "lftj"};
static const char *skeletons[] = {"rf_map_filter", "rf_join_partition", "rf_join_gather", "rf_antijoin",
                                  "rf_gather_map", "rf_group",          "rf_reduce",      "rf_concat",
                                  "rf_unique",     "rf_difference",     "rf_sort",        "rf_gather",
                                  "rf_copy",       "rf_facts",          "rf_clear",       "rf_set_insert",
                                  "rf_lftj"};

const char *rf_hir_kind_name(rf_hir_kind k)
{
    return (unsigned)k < sizeof kind_names / sizeof *kind_names ? kind_names[k] : "?";
}

const char *rf_hir_skeleton_name(rf_hir_kind k)
{
    return (unsigned)k < sizeof skeletons / sizeof *skeletons ? skeletons[k] : "?";
}

static const char *role_name(rf_hir_role r)
{
    static const char *n[] = {"temp", "input", "pred", "output"};
    return (unsigned)r < 4 ? n[r] : "?";
}

static void print_kernel(const rf_hir_program *p, const rf_hir_kernel *k, rf_buf *out)
{
    const char *in0 = k->nin > 0 ? p->vars[k->in[0]]->name : "-";
    const char *in1 = k->nin > 1 && k->kind == RF_HIR_JOIN_MAP ? p->vars[k->in[1]]->name : "-";
    rf_buf_printf(out, "    k%d: %s = %s(", k->id, p->vars[k->out]->name, kind_names[k->kind]);
    for (int32_t i = 0; i < k->nin; i++) rf_buf_printf(out, "%s%s", i ? ", " : "", p->vars[k->in[i]]->name);
    rf_buf_putc(out, ')');
    if (k->kind == RF_HIR_LFTJ) {
        /* the variables each input binds; the filter reads the variables */
        in0 = in1 = p->vars[k->out]->name;
        rf_buf_puts(out, " vars");
        for (int32_t i = 0; i < k->nkeys; i++)
            rf_buf_printf(out, "%s%d", i == 0 || k->rkeys[i] != k->rkeys[i - 1] ? (i ? ") (" : " (") : " ", k->lkeys[i]);
        if (k->nkeys) rf_buf_putc(out, ')');
    } else if (k->nkeys) {
        rf_buf_puts(out, " on");
        for (int32_t i = 0; i < k->nkeys; i++) rf_buf_printf(out, "%s %d=%d", i ? "," : "", k->lkeys[i], k->rkeys[i]);
    }
    if (k->ngroup) {
        rf_buf_puts(out, " by");
        for (int32_t i = 0; i < k->ngroup; i++) rf_buf_printf(out, " %d", k->group[i]);
    }
    for (int32_t i = 0; i < k->naggs; i++)
        rf_buf_printf(out, "%s%s(%d)", i ? ", " : " aggs ", rf_agg_fn_name(k->aggs[i].fn), k->aggs[i].col);
    if (k->norder) {
        rf_buf_puts(out, " order");
        for (int32_t i = 0; i < k->norder; i++)
            rf_buf_printf(out, " %d%s", k->order[i].col, k->order[i].desc ? " desc" : "");
    }
    if (k->limit >= 0) rf_buf_printf(out, " limit %lld", (long long)k->limit);
    if (k->check_fd) rf_buf_puts(out, " check_fd");
    if (k->partial) rf_buf_puts(out, " partial");
    if (k->kind == RF_HIR_FACTS) rf_buf_printf(out, " rows %lld", (long long)k->nrows);
    if (k->filter) {
        rf_buf_puts(out, " filter ");
        rf_qp_print_expr(k->filter, in0, in1, out);
    }
    if (k->nouts) {
        rf_buf_puts(out, " -> (");
        for (int32_t i = 0; i < k->nouts; i++) {
            if (i) rf_buf_puts(out, ", ");
            rf_qp_print_expr(k->outs[i], in0, in1, out);
        }
        rf_buf_putc(out, ')');
    }
    rf_buf_printf(out, "  [%s]", skeletons[k->kind]);
    if (k->nrelease) {
        rf_buf_puts(out, " release");
        for (int32_t i = 0; i < k->nrelease; i++) rf_buf_printf(out, " %s", p->vars[k->release[i]]->name);
    }
    rf_buf_putc(out, '\n');
}

void rf_hir_print_text(const rf_hir_program *p, rf_buf *out)
{
    rf_buf_printf(out, "harmony %s: %d variables, %d blocks\n", p->source, p->nvars, p->nblocks);
    for (int32_t i = 0; i < p->nvars; i++) {
        const rf_hir_var *v = p->vars[i];
        rf_buf_printf(out, "  %s %s %s(", v->kind == RF_HIR_V_INDEX ? "index" : "rel", role_name(v->role), v->name);
        for (int32_t c = 0; c < v->ncols; c++)
            rf_buf_printf(out, "%s%s %s", c ? ", " : "", v->colnames[c] ? v->colnames[c] : "_",
                          v->kind == RF_HIR_V_INDEX ? "index" : rf_val_type_name(v->types[c]));
        rf_buf_printf(out, ") ~%lld rows", (long long)v->card);
        if (v->input_file) rf_buf_printf(out, " input \"%s\"", v->input_file);
        for (int32_t k = 0; k < v->ninput_key; k++)
            rf_buf_printf(out, "%s%s%s", k ? ", " : " key (", v->colnames[v->input_key[k]] ? v->colnames[v->input_key[k]] : "_",
                          k == v->ninput_key - 1 ? ")" : "");
        if (v->output_name) rf_buf_printf(out, " output \"%s\"", v->output_name);
        if (v->pred_name) rf_buf_printf(out, " key %d of %s", v->nkeys, v->pred_name);
        rf_buf_putc(out, '\n');
    }
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bl = p->blocks[b];
        rf_buf_printf(out, "block %d%s%s:\n", bl->id, bl->comment ? " // " : "", bl->comment ? bl->comment : "");
        for (int32_t j = 0; j < bl->nkernels; j++) print_kernel(p, bl->kernels[j], out);
        switch (bl->term) {
        case RF_HIR_T_GOTO: rf_buf_printf(out, "    goto block %d\n", bl->target); break;
        case RF_HIR_T_HALT: rf_buf_puts(out, "    halt\n"); break;
        case RF_HIR_T_BRANCH:
            rf_buf_puts(out, "    if nonempty(");
            for (int32_t t = 0; t < bl->ntest; t++) rf_buf_printf(out, "%s%s", t ? ", " : "", p->vars[bl->test[t]]->name);
            rf_buf_printf(out, ") goto block %d else block %d\n", bl->target, bl->else_target);
            break;
        }
    }
}
