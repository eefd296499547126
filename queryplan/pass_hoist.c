/*
** queryplan/pass_hoist.c: the "hoist" pass, loop-invariant code motion.
**
** Owns: finding, in a semi-naive loop (a block that branches back to
** itself), the commands writing a temporary whose inputs the loop never
** writes (relations computed before the loop, constants, temporaries hoisted
** just before), and moving them into a new block that runs once, between the
** loop's other predecessors and the loop. Without it such a command (a
** filter of an earlier stratum's relation that a recursive rule joins with)
** recomputes the same rows every round, and the join reading them gets a new
** relation each round, so the runtime's kept join index (runtime/cpu) never
** pays off.
**
** The new block is entered exactly where the loop was, so a hoisted command
** runs exactly when its loop's first round would have run it, on the same
** rows: a run-time error it raises (a division by zero in its filter) is
** raised all the same, only before the loop's other commands of that round. Its
** result is a temporary read in a later block (the verifier allows a block
** its writer's block dominates); Harmony keeps such a temporary alive
** across blocks and releases it after the loop (harmony/hir_schedule.c).
** The program option no_hoist (`--no-hoist`) turns the pass off.
*/
#include "qp_internal.h"

#include <stdlib.h>

/* Whether block b is a loop: its branch goes back to it. */
static int is_loop(const rf_qp_block *bl)
{
    const rf_qp_term *t = &bl->term;
    return t->kind == RF_QP_T_BRANCH && (t->target == bl->id || t->else_target == bl->id);
}

/* Moves the loop-invariant commands of loop block b into a new block placed
** before it; returns 1 when some moved (the blocks from b on are renumbered),
** 0 when none, -1 when out of memory. written: scratch per relation id,
** all zero on entry and on return. */
static int hoist_loop(rf_qp_program *p, int32_t b, uint8_t *written)
{
    rf_qp_block *loop = p->blocks[b];
    for (int32_t i = 0; i < loop->ncmds; i++) written[loop->cmds[i]->dst->id] = 1;
    for (int32_t j = 0; j < loop->term.nrels; j++) written[loop->term.rels[j]->id] = 1;
    rf_qp_cmd **moved = qp_alloc(p, (size_t)(loop->ncmds + 1) * sizeof *moved);
    int32_t nmoved = 0;
    for (int32_t i = 0; moved && i < loop->ncmds; i++) {
        rf_qp_cmd *c = loop->cmds[i];
        int invariant = c->dst->kind == RF_QP_REL_TEMP;
        for (int32_t j = 0; j < c->nin && invariant; j++) invariant = !written[c->in[j]->id];
        if (!invariant) continue;
        /* a temporary has one writer: once it moves, the loop no longer writes it */
        written[c->dst->id] = 0;
        moved[nmoved++] = c;
        qp_block_remove(loop, i);
        /* the rule's note stays on what remains of its pipeline */
        if (c->note && i < loop->ncmds && !loop->cmds[i]->note) loop->cmds[i]->note = c->note;
        i--;
    }
    for (int32_t i = 0; i < loop->ncmds; i++) written[loop->cmds[i]->dst->id] = 0;
    for (int32_t j = 0; j < loop->term.nrels; j++) written[loop->term.rels[j]->id] = 0;
    if (!moved) return -1;
    if (nmoved == 0) return 0;

    /* the new block takes the loop's place in the order; every edge into
    ** the loop from elsewhere now enters it, and it enters the loop */
    rf_qp_block *pre = qp_block_new(p, "loop-invariant commands of the loop below, run once");
    if (!pre) return -1;
    memmove(p->blocks + b + 1, p->blocks + b, (size_t)(p->nblocks - 1 - b) * sizeof *p->blocks);
    p->blocks[b] = pre;
    for (int32_t i = 0; i < p->nblocks; i++) {
        rf_qp_block *bl = p->blocks[i];
        bl->id = i;
        rf_qp_term *t = &bl->term;
        if (t->kind == RF_QP_T_HALT || bl == pre) continue;
        /* old ids: b.. moved up by one; edges into the loop from outside go to pre */
        int self = bl == loop;
        if (t->target >= b) t->target += !(t->target == b && !self);
        if (t->kind == RF_QP_T_BRANCH && t->else_target >= b) t->else_target += !(t->else_target == b && !self);
    }
    for (int32_t i = 0; i < nmoved; i++) qp_block_append(p, pre, moved[i]);
    pre->term.kind = RF_QP_T_GOTO;
    pre->term.target = b + 1;
    return p->oom ? -1 : 1;
}

rf_status rf_qp_pass_hoist(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    if (p->no_hoist) return RF_OK;
    uint8_t *written = rf_calloc((size_t)p->nrels + 1, 1);
    if (!written) return RF_ENOMEM;
    /* block 0 is the entry: a loop there has no block before it to take the commands */
    for (int32_t b = 1; b < p->nblocks && !p->oom; b++) {
        if (!is_loop(p->blocks[b])) continue;
        int r = hoist_loop(p, b, written);
        if (r < 0) p->oom = 1;
        b += r > 0; /* past the new block: the loop is at b + 1 now */
    }
    free(written);
    return p->oom ? RF_ENOMEM : RF_OK;
}
