/*
** queryplan/pass_dead.c: the "dead" pass, dead relation elimination.
**
** Owns: liveness of relations from the outputs backwards (a relation is
** live when a live command reads it; outputs are live), removal of commands
** writing dead relations, semi-naive loops none of whose relations is live
** (the branch becomes a goto past the loop), unreachable blocks, merging a
** block into its only predecessor when that one just jumps to it, and the
** final renumbering of blocks and temporaries. A predicate that feeds a
** later stratum stays exactly as long as that stratum is needed: a program
** without outputs computes nothing.
*/
#include "qp_internal.h"

#include <stdlib.h>

static int propagate(rf_qp_program *p, uint8_t *live)
{
    int any = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        /* backwards, as liveness flows: a chain of n rules settles in one
        ** sweep rather than n */
        for (int32_t b = p->nblocks - 1; b >= 0; b--) {
            const rf_qp_block *bl = p->blocks[b];
            for (int32_t i = bl->ncmds - 1; i >= 0; i--) {
                const rf_qp_cmd *c = bl->cmds[i];
                if (!live[c->dst->id]) continue;
                for (int32_t j = 0; j < c->nin; j++)
                    if (!live[c->in[j]->id]) live[c->in[j]->id] = changed = any = 1;
            }
            /* a loop that is needed must keep testing all of its deltas */
            const rf_qp_term *t = &bl->term;
            if (t->kind != RF_QP_T_BRANCH) continue;
            int some = 0;
            for (int32_t j = 0; j < t->nrels; j++) some |= live[t->rels[j]->id];
            if (!some) continue;
            for (int32_t j = 0; j < t->nrels; j++)
                if (!live[t->rels[j]->id]) live[t->rels[j]->id] = changed = any = 1;
        }
    }
    return any;
}

static void renumber_blocks(rf_qp_program *p)
{
    int32_t *to = rf_malloc((size_t)(p->nblocks + 1) * sizeof *to);
    uint8_t *reach = rf_calloc((size_t)p->nblocks + 1, 1);
    int32_t *stack = rf_malloc((size_t)(p->nblocks + 1) * sizeof *stack);
    if (!to || !reach || !stack) {
        p->oom = 1;
        goto done;
    }
    qp_blocks_reachable(p, -1, reach, stack);
    int32_t n = 0;
    for (int32_t b = 0; b < p->nblocks; b++) {
        to[b] = reach[b] ? n : -1;
        if (reach[b]) p->blocks[n++] = p->blocks[b];
    }
    p->nblocks = n;
    for (int32_t b = 0; b < n; b++) {
        rf_qp_block *bl = p->blocks[b];
        bl->id = b;
        if (bl->term.kind != RF_QP_T_HALT) bl->term.target = to[bl->term.target];
        if (bl->term.kind == RF_QP_T_BRANCH) bl->term.else_target = to[bl->term.else_target];
    }
done:
    free(to);
    free(reach);
    free(stack);
}

/* A block reached only by a goto from one block is appended to that block;
** one pass: predecessor counts stay right as a block takes over the
** terminator of the one it absorbs, so chains merge without recounting. */
static void merge_blocks(rf_qp_program *p)
{
    int32_t *preds = rf_calloc((size_t)p->nblocks + 1, sizeof *preds);
    if (!preds) {
        p->oom = 1;
        return;
    }
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_term *t = &p->blocks[b]->term;
        if (t->kind != RF_QP_T_HALT) preds[t->target]++;
        if (t->kind == RF_QP_T_BRANCH) preds[t->else_target]++;
    }
    int merged = 0;
    for (int32_t b = 0; b < p->nblocks && !p->oom; b++) {
        rf_qp_block *a = p->blocks[b];
        while (a->term.kind == RF_QP_T_GOTO && !p->oom) {
            int32_t t = a->term.target;
            if (t == b || t == 0 || preds[t] != 1) break;
            rf_qp_block *c = p->blocks[t];
            for (int32_t i = 0; i < c->ncmds; i++) qp_block_append(p, a, c->cmds[i]);
            a->term = c->term;
            c->ncmds = 0;
            c->term.kind = RF_QP_T_HALT; /* unreachable now; renumbering drops it */
            preds[t] = 0;
            merged = 1;
        }
    }
    free(preds);
    if (merged) renumber_blocks(p);
}

rf_status rf_qp_pass_dead(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    uint8_t *live = rf_calloc((size_t)p->nrels + 1, 1);
    if (!live) return RF_ENOMEM;
    for (int32_t i = 0; i < p->nrels; i++)
        if (p->rels[i]->kind == RF_QP_REL_OUTPUT) live[i] = 1;
    propagate(p, live);
    for (int32_t b = 0; b < p->nblocks; b++) {
        rf_qp_block *bl = p->blocks[b];
        int32_t n = 0;
        for (int32_t i = 0; i < bl->ncmds; i++)
            if (live[bl->cmds[i]->dst->id]) bl->cmds[n++] = bl->cmds[i];
        bl->ncmds = n;
        rf_qp_term *t = &bl->term;
        if (t->kind == RF_QP_T_BRANCH) {
            int some = 0;
            for (int32_t j = 0; j < t->nrels; j++) some |= live[t->rels[j]->id];
            if (!some) {
                t->kind = RF_QP_T_GOTO;
                t->target = t->else_target;
                t->rels = NULL;
                t->nrels = 0;
            }
        }
    }
    free(live);
    renumber_blocks(p);
    merge_blocks(p);
    qp_compact_rels(p);
    qp_rename_temps(p);
    return p->oom ? RF_ENOMEM : RF_OK;
}
