/*
** queryplan/pass_unique.c: the "unique" pass, dropping needless dedupes.
**
** Owns: removing Unique commands whose input is already known to be
** duplicate-free (rf_qp_infer: facts, aggregates, unions, joins that keep
** every column of set inputs or look up a functional predicate by its whole
** key), and with them the functional-dependency check when the input
** provably satisfies it (its key is a prefix of the checked key, as for an
** aggregate grouped by the key). The producer then writes the destination
** directly when it can; otherwise the Unique becomes a Copy. A dropped
** dedupe read every column of its input; the columns only it read (an
** aggregate's wildcards, which made its input's rows distinct) are then
** dropped by projection push-down, run again here.
*/
#include "qp_internal.h"

/* Facts are sorted and distinct, so two rows with one key are neighbours. */
static int facts_satisfy_fd(const rf_qp_cmd *f, int32_t nkeys)
{
    int32_t w = f->dst->ncols;
    for (int64_t i = 1; i < f->nrows; i++) {
        int same = 1;
        for (int32_t j = 0; j < nkeys && same; j++) same = qp_const_equal(&f->rows[(i - 1) * w + j], &f->rows[i * w + j]);
        if (same) return 0;
    }
    return 1;
}

rf_status rf_qp_pass_unique(rf_qp_program *p, rf_diags *d)
{
    rf_qp_infer(p);
    int dropped = 0;
    /* reads and writers without a scan per dedupe (qp_index.c) */
    qp_index ix;
    if (qp_index_build(p, &ix)) {
        qp_index_free(&ix);
        return RF_ENOMEM;
    }
    for (int32_t b = 0; b < p->nblocks && !p->oom; b++) {
        rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++) {
            rf_qp_cmd *c = bl->cmds[i];
            if (c->op != RF_QP_UNIQUE) continue;
            rf_qp_rel *in = c->in[0], *dst = c->dst;
            if (!in->unique || in == dst) continue;
            /* the writer of a temporary this command reads comes before it */
            rf_qp_cmd *wc = qp_index_writer(&ix, bl, in);
            int32_t w = -1;
            for (int32_t k = i - 1; k >= 0 && wc && w < 0; k--)
                if (bl->cmds[k] == wc) w = k;
            if (c->check_fd) {
                /* a key of the input no longer than the checked one implies the
                ** dependency (an input that is itself checked was checked by its
                ** writers); facts are checked right here. A violation is left for
                ** the run time, which reports it with the predicate and the key. */
                int holds = in->nkeys >= 0 && in->nkeys <= dst->nkeys;
                if (!holds && w >= 0 && bl->cmds[w]->op == RF_QP_FACTS) holds = facts_satisfy_fd(bl->cmds[w], dst->nkeys);
                if (!holds) continue;
            }
            dropped = 1;
            int direct = w >= 0 && w < i && qp_index_reads(&ix, in) == 1;
            for (int32_t k = w + 1; k < i && direct; k++)
                direct = !qp_cmd_reads(bl->cmds[k], dst) && bl->cmds[k]->dst != dst;
            if (direct) {
                /* the producer writes the destination itself */
                rf_qp_cmd *pc = bl->cmds[w];
                qp_index_drop(&ix, c);
                qp_index_drop(&ix, pc);
                pc->dst = dst;
                qp_index_add(p, &ix, b, pc);
                if (pc->op == RF_QP_FACTS && !pc->note) pc->note = c->note;
                qp_block_remove(bl, i);
                i--;
                continue;
            }
            c->op = RF_QP_COPY;
            c->check_fd = 0;
            /* a copy into a temporary is no copy at all: its readers read the input */
            if (dst->kind == RF_QP_REL_TEMP && !qp_written_between(bl, i + 1, bl->ncmds, in)) {
                qp_replace_reads(p, dst, in);
                ix.reads[in->id] += ix.reads[dst->id];
                ix.reads[dst->id] = 0;
                qp_index_drop(&ix, c);
                if (c->note && i + 1 < bl->ncmds && !bl->cmds[i + 1]->note) bl->cmds[i + 1]->note = c->note;
                qp_block_remove(bl, i);
                i--;
            }
        }
    }
    qp_index_free(&ix);
    if (p->oom) return RF_ENOMEM;
    return dropped ? rf_qp_pass_project(p, d) : RF_OK;
}
