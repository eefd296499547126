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
#include "rf_mix.h"

#include <stdlib.h>

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

/* ---- hashes agreeing with same(): equal commands hash alike ---------- */

static uint64_t mix(uint64_t h, uint64_t x) { return rf_mix64_combine(h, x); }

static uint64_t const_hash(const rf_fe_const *c)
{
    uint64_t h = mix(0, (uint64_t)c->type);
    switch (c->type) {
    case RF_TYPE_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &c->f, sizeof bits);
        return mix(h, bits);
    }
    case RF_TYPE_STRING:
        for (int64_t i = 0; i < c->slen; i++) h = mix(h, (unsigned char)c->s[i]);
        return mix(h, (uint64_t)c->slen);
    default: return mix(h, (uint64_t)c->i);
    }
}

static uint64_t expr_hash(const rf_qp_expr *e)
{
    if (!e) return 1;
    uint64_t h = mix(mix(mix(2, (uint64_t)e->kind), (uint64_t)e->type), (uint64_t)e->nargs);
    switch (e->kind) {
    case RF_QP_E_COL: h = mix(mix(h, (uint64_t)e->side), (uint64_t)e->col); break;
    case RF_QP_E_CONST: h = mix(h, const_hash(&e->c)); break;
    case RF_QP_E_BINOP: h = mix(h, (uint64_t)(unsigned char)e->op); break;
    case RF_QP_E_CMP: h = mix(h, (uint64_t)e->cmp); break;
    case RF_QP_E_CALL: h = mix(h, (uint64_t)e->fn); break;
    default: break;
    }
    for (int32_t i = 0; i < e->nargs; i++) h = mix(h, expr_hash(e->args[i]));
    return h;
}

static uint64_t cmd_hash(const rf_qp_cmd *c)
{
    uint64_t h = mix(mix(mix(3, (uint64_t)c->op), (uint64_t)c->nin), (uint64_t)c->dst->ncols);
    for (int32_t i = 0; i < c->nin; i++) h = mix(h, (uint64_t)c->in[i]->id);
    h = mix(mix(h, expr_hash(c->filter)), (uint64_t)c->nouts);
    for (int32_t i = 0; i < c->nouts; i++) h = mix(h, expr_hash(c->outs[i]));
    h = mix(h, (uint64_t)c->nkeys);
    for (int32_t i = 0; i < c->nkeys; i++) h = mix(mix(h, (uint64_t)c->lkeys[i]), (uint64_t)c->rkeys[i]);
    h = mix(mix(h, (uint64_t)c->ngroup), (uint64_t)c->naggs);
    for (int32_t i = 0; i < c->ngroup; i++) h = mix(h, (uint64_t)c->group[i]);
    h = mix(h, (uint64_t)c->nrows);
    for (int64_t i = 0; i < c->nrows * c->dst->ncols; i++) h = mix(h, const_hash(&c->rows[i]));
    return mix(mix(h, (uint64_t)c->norder), (uint64_t)c->limit);
}

/* A command that a later one may repeat: its hash and original position. */
typedef struct entry {
    rf_qp_cmd *cmd;
    uint64_t hash;
    int32_t ord;
    int32_t next; /* the next entry of its bucket, in block order; -1 */
    int dead;     /* an input was rewritten after it: it matches nothing later */
} entry;

/* One block, in order. A command repeating an earlier one (same() and no
** input rewritten between them) is dropped and its destination recorded in
** repl[], which rewrites the reads of every command as it is reached (the
** later commands of this block, and of later blocks; the rest at the end).
** Candidates come from a hash table in block order, so the first match is
** the one a scan of the earlier commands would find; lastw[r] is the
** position of the latest kept command writing r, so "written between" is
** one comparison. An earlier command found rewritten-between for one
** command is so for every later one equal to it (the same inputs, and the
** writer stays between them): it is marked dead. */
static int cse_block(rf_qp_block *bl, rf_qp_rel **repl, int32_t *lastw)
{
    int32_t n = bl->ncmds;
    if (n == 0) return 0;
    size_t nb = 16;
    while ((int64_t)nb < (int64_t)n * 2) nb *= 2;
    int32_t *head = rf_malloc(nb * sizeof *head), *tail = rf_malloc(nb * sizeof *tail);
    entry *ent = rf_malloc((size_t)n * sizeof *ent);
    if (!head || !tail || !ent) {
        free(head);
        free(tail);
        free(ent);
        return -1;
    }
    for (size_t k = 0; k < nb; k++) head[k] = tail[k] = -1;
    int32_t nent = 0, w = 0;
    for (int32_t r = 0; r < n; r++) {
        rf_qp_cmd *c = bl->cmds[r];
        for (int32_t k = 0; k < c->nin; k++)
            if (repl[c->in[k]->id]) c->in[k] = repl[c->in[k]->id];
        uint64_t h = 0;
        rf_qp_cmd *found = NULL;
        if (c->dst->kind == RF_QP_REL_TEMP) {
            h = cmd_hash(c);
            for (int32_t x = head[h & (nb - 1)]; x >= 0 && !found; x = ent[x].next) {
                entry *e = &ent[x];
                if (e->dead || e->hash != h || !same(e->cmd, c)) continue;
                int clobbered = 0;
                for (int32_t k = 0; k < e->cmd->nin && !clobbered; k++) clobbered = lastw[e->cmd->in[k]->id] > e->ord;
                if (clobbered) e->dead = 1;
                else found = e->cmd;
            }
        }
        if (found) {
            repl[c->dst->id] = found->dst;
            /* keep the rule's note on its pipeline */
            if (c->note && r + 1 < n && !bl->cmds[r + 1]->note) bl->cmds[r + 1]->note = c->note;
            continue;
        }
        bl->cmds[w++] = c;
        lastw[c->dst->id] = r;
        if (c->dst->kind != RF_QP_REL_TEMP) continue;
        size_t bkt = h & (nb - 1);
        ent[nent] = (entry){c, h, r, -1, 0};
        if (tail[bkt] < 0) head[bkt] = nent;
        else ent[tail[bkt]].next = nent;
        tail[bkt] = nent++;
    }
    bl->ncmds = w;
    free(head);
    free(tail);
    free(ent);
    return 0;
}

rf_status rf_qp_pass_cse(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    rf_qp_rel **repl = rf_calloc((size_t)p->nrels + 1, sizeof *repl);
    int32_t *lastw = rf_malloc(((size_t)p->nrels + 1) * sizeof *lastw);
    if (!repl || !lastw) {
        free(repl);
        free(lastw);
        return RF_ENOMEM;
    }
    for (int32_t i = 0; i < p->nrels; i++) lastw[i] = -1;
    for (int32_t b = 0; b < p->nblocks; b++) {
        rf_qp_block *bl = p->blocks[b];
        if (cse_block(bl, repl, lastw)) {
            free(repl);
            free(lastw);
            return RF_ENOMEM;
        }
        for (int32_t i = 0; i < bl->ncmds; i++) lastw[bl->cmds[i]->dst->id] = -1;
    }
    /* the reads not yet rewritten: earlier blocks', terminators' */
    for (int32_t b = 0; b < p->nblocks; b++) {
        rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++)
            for (int32_t k = 0; k < bl->cmds[i]->nin; k++)
                if (repl[bl->cmds[i]->in[k]->id]) bl->cmds[i]->in[k] = repl[bl->cmds[i]->in[k]->id];
        for (int32_t k = 0; k < bl->term.nrels; k++)
            if (repl[bl->term.rels[k]->id]) bl->term.rels[k] = repl[bl->term.rels[k]->id];
    }
    free(repl);
    free(lastw);
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
