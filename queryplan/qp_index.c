/*
** queryplan/qp_index.c: read counts and writers per relation, built once
** by a pass and kept exact by it as it edits commands.
**
** Owns: qp_index (qp_internal.h). Why: a pass that asks, for every join of
** every chain, how often a temporary is read and which command writes it
** (qp_count_reads, qp_find_writer) scans the whole program per question,
** and is quadratic in a block's commands: a clause of 4,096 disjuncts is
** 4,096 rules in one block. The index answers in constant time; the pass
** tells it of every command it removes (qp_index_drop, before the command
** changes) and adds or rewrites (qp_index_add, after), so the answers stay
** those of the scans. Also qp_ptrset, a set of pointers, for a pass's
** "already seen" (a list scanned per question is quadratic too).
*/
#include "qp_internal.h"
#include "rf_mix.h"

#include <stdlib.h>

/* Room for relation id `id` (relations made during the pass). */
static int reserve(rf_qp_program *p, qp_index *ix, int32_t id)
{
    if (id < ix->cap) return 0;
    int32_t ncap = ix->cap ? ix->cap : 16;
    while (ncap <= id) ncap *= 2;
    int64_t *reads = realloc(ix->reads, (size_t)ncap * sizeof *reads);
    if (reads) ix->reads = reads;
    rf_qp_cmd **writer = realloc(ix->writer, (size_t)ncap * sizeof *writer);
    if (writer) ix->writer = writer;
    int32_t *wblock = realloc(ix->wblock, (size_t)ncap * sizeof *wblock);
    if (wblock) ix->wblock = wblock;
    if (!reads || !writer || !wblock) {
        p->oom = 1;
        return -1;
    }
    for (int32_t i = ix->cap; i < ncap; i++) {
        ix->reads[i] = 0;
        ix->writer[i] = NULL;
        ix->wblock[i] = -1;
    }
    ix->cap = ncap;
    return 0;
}

int qp_index_build(rf_qp_program *p, qp_index *ix)
{
    memset(ix, 0, sizeof *ix);
    if (reserve(p, ix, p->nrels)) return -1;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++)
            if (qp_index_add(p, ix, b, bl->cmds[i])) return -1;
        for (int32_t j = 0; j < bl->term.nrels; j++) ix->reads[bl->term.rels[j]->id]++;
    }
    return 0;
}

void qp_index_free(qp_index *ix)
{
    free(ix->reads);
    free(ix->writer);
    free(ix->wblock);
    memset(ix, 0, sizeof *ix);
}

int64_t qp_index_reads(const qp_index *ix, const rf_qp_rel *r) { return r->id < ix->cap ? ix->reads[r->id] : 0; }

rf_qp_cmd *qp_index_writer(const qp_index *ix, const rf_qp_block *b, const rf_qp_rel *r)
{
    if (r->kind != RF_QP_REL_TEMP || r->id >= ix->cap || ix->wblock[r->id] != b->id) return NULL;
    return ix->writer[r->id];
}

int qp_index_add(rf_qp_program *p, qp_index *ix, int32_t block, rf_qp_cmd *c)
{
    int32_t top = c->dst->id;
    for (int32_t j = 0; j < c->nin; j++)
        if (c->in[j]->id > top) top = c->in[j]->id;
    if (reserve(p, ix, top)) return -1;
    for (int32_t j = 0; j < c->nin; j++) ix->reads[c->in[j]->id]++;
    /* a temporary is written once (qp_verify.c) */
    if (c->dst->kind == RF_QP_REL_TEMP) {
        ix->writer[c->dst->id] = c;
        ix->wblock[c->dst->id] = block;
    }
    return 0;
}

void qp_index_drop(qp_index *ix, const rf_qp_cmd *c)
{
    for (int32_t j = 0; j < c->nin; j++)
        if (c->in[j]->id < ix->cap) ix->reads[c->in[j]->id]--;
    if (c->dst->id < ix->cap && ix->writer[c->dst->id] == c) {
        ix->writer[c->dst->id] = NULL;
        ix->wblock[c->dst->id] = -1;
    }
}

/* ---- a set of pointers ----------------------------------------------- */

static size_t ptr_slot(const void *x, size_t mask)
{
    /* (a set only asked what it holds: the slot decides no order) */
    return (size_t)rf_mix64((uint64_t)(uintptr_t)x) & mask;
}

int qp_ptrset_init(qp_ptrset *s, int64_t hint)
{
    size_t cap = 16;
    while ((int64_t)cap < hint * 2) cap *= 2;
    s->n = 0;
    s->cap = cap;
    s->slot = rf_calloc(cap, sizeof *s->slot);
    return s->slot ? 0 : -1;
}

void qp_ptrset_free(qp_ptrset *s)
{
    free(s->slot);
    s->slot = NULL;
    s->n = s->cap = 0;
}

int qp_ptrset_has(const qp_ptrset *s, const void *x)
{
    for (size_t i = ptr_slot(x, s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->slot[i] == x) return 1;
        if (!s->slot[i]) return 0;
    }
}

int qp_ptrset_add(qp_ptrset *s, const void *x)
{
    if ((s->n + 1) * 2 > s->cap) {
        qp_ptrset big;
        if (qp_ptrset_init(&big, (int64_t)s->cap)) return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i]) qp_ptrset_add(&big, s->slot[i]);
        free(s->slot);
        *s = big;
    }
    size_t i = ptr_slot(x, s->cap - 1);
    while (s->slot[i] && s->slot[i] != x) i = (i + 1) & (s->cap - 1);
    if (!s->slot[i]) {
        s->slot[i] = x;
        s->n++;
    }
    return 0;
}
