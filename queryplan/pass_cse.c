/*
** queryplan/pass_cse.c: the "cse" pass, common subexpression elimination.
**
** Owns: finding, within one block, two commands that compute the same thing
** (same op, the same input relations, equal parameters) where the later one
** writes a temporary and no command between them rewrites an input or the
** earlier result; the later one is dropped and its readers read the earlier
** result. Semi-naive loops produce many of these (every variant of a rule
** scans the same full relations the same way).
*/
#include "qp_internal.h"

static int ints_equal(const int32_t *a, const int32_t *b, int32_t n)
{
    return n == 0 || memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

static int same(const rf_qp_cmd *a, const rf_qp_cmd *b)
{
    if (a->op != b->op || a->nin != b->nin || a->dst->ncols != b->dst->ncols) return 0;
    for (int32_t i = 0; i < a->nin; i++)
        if (a->in[i] != b->in[i]) return 0;
    for (int32_t i = 0; i < a->dst->ncols; i++)
        if (a->dst->types[i] != b->dst->types[i]) return 0;
    if (!qp_e_equal(a->filter, b->filter) || a->nouts != b->nouts) return 0;
    for (int32_t i = 0; i < a->nouts; i++)
        if (!qp_e_equal(a->outs[i], b->outs[i])) return 0;
    if (a->nkeys != b->nkeys || !ints_equal(a->lkeys, b->lkeys, a->nkeys) || !ints_equal(a->rkeys, b->rkeys, a->nkeys))
        return 0;
    if (a->ngroup != b->ngroup || !ints_equal(a->group, b->group, a->ngroup) || a->naggs != b->naggs) return 0;
    for (int32_t i = 0; i < a->naggs; i++)
        if (a->aggs[i].fn != b->aggs[i].fn || a->aggs[i].col != b->aggs[i].col || a->aggs[i].type != b->aggs[i].type)
            return 0;
    if (a->op == RF_QP_LFTJ) {
        int32_t n = 0;
        for (int32_t i = 0; i < a->nin; i++) n += a->in[i]->ncols;
        if (!ints_equal(a->colvar, b->colvar, n)) return 0;
    }
    if (a->nrows != b->nrows) return 0;
    for (int64_t i = 0; i < a->nrows * a->dst->ncols; i++)
        if (!qp_const_equal(&a->rows[i], &b->rows[i])) return 0;
    if (a->norder != b->norder || a->limit != b->limit || a->check_fd != b->check_fd ||
        a->partial != b->partial)
        return 0;
    for (int32_t i = 0; i < a->norder; i++)
        if (a->order[i].col != b->order[i].col || a->order[i].desc != b->order[i].desc) return 0;
    return 1;
}

rf_status rf_qp_pass_cse(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    for (int32_t b = 0; b < p->nblocks; b++) {
        rf_qp_block *bl = p->blocks[b];
        for (int32_t j = 1; j < bl->ncmds; j++) {
            rf_qp_cmd *c = bl->cmds[j];
            if (c->dst->kind != RF_QP_REL_TEMP) continue;
            for (int32_t i = 0; i < j; i++) {
                rf_qp_cmd *e = bl->cmds[i];
                /* the earlier result must stay put until the later one's readers ran:
                ** a temporary is written once, so only temporaries qualify */
                if (e->dst->kind != RF_QP_REL_TEMP || !same(e, c)) continue;
                int clobbered = 0;
                for (int32_t k = 0; k < e->nin && !clobbered; k++) clobbered = qp_written_between(bl, i + 1, j, e->in[k]);
                if (clobbered) continue;
                qp_replace_reads(p, c->dst, e->dst);
                qp_block_remove(bl, j);
                /* keep the rule's note on its pipeline */
                if (c->note && j < bl->ncmds && !bl->cmds[j]->note) bl->cmds[j]->note = c->note;
                j--;
                break;
            }
        }
    }
    /* a union reading one input twice reads it once */
    for (int32_t b = 0; b < p->nblocks; b++) {
        rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++) {
            rf_qp_cmd *c = bl->cmds[i];
            if (c->op != RF_QP_UNION) continue;
            int32_t n = 0;
            for (int32_t j = 0; j < c->nin; j++) {
                int dup = 0;
                for (int32_t k = 0; k < n && !dup; k++) dup = c->in[k] == c->in[j];
                if (!dup) c->in[n++] = c->in[j];
            }
            c->nin = n;
        }
    }
    return p->oom ? RF_ENOMEM : RF_OK;
}
