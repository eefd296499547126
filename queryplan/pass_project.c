/*
** queryplan/pass_project.c: the "project" pass, projection push-down.
**
** Owns: dropping, from every command that computes a temporary, the output
** columns no later command reads (walking each block backwards, so that a
** dropped column can make the columns it was computed from unneeded in
** turn), renumbering the readers' column references, and removing maps that
** only pick columns of their input when their readers can address those
** columns themselves (a columnar reader needs no copy of them). Predicate, delta, output and input
** relations keep their schema: only temporaries change. Dropping a column
** keeps the number of rows, so bag-semantics temporaries stay correct. A
** temporary read in a later block (one the pass `hoist` moved before its
** loop) keeps its columns and its map: the walk sees one block at a time.
*/
#include "qp_internal.h"

#include <stdlib.h>

/* Renumbers the columns of temporary t in every reader after position `from`. */
static void remap_readers(rf_qp_block *bl, int32_t from, const rf_qp_rel *t, const int32_t *map)
{
    for (int32_t i = from; i < bl->ncmds; i++) {
        rf_qp_cmd *c = bl->cmds[i];
        for (int32_t s = 0; s < c->nin; s++) {
            if (c->in[s] != t) continue;
            switch (c->op) {
            case RF_QP_MAPFILTER:
            case RF_QP_MAPJOIN:
            case RF_QP_ANTIJOIN:
                if (c->op != RF_QP_ANTIJOIN || s == 0) {
                    qp_e_remap(c->filter, s, map);
                    for (int32_t o = 0; o < c->nouts; o++) qp_e_remap(c->outs[o], s, map);
                }
                for (int32_t k = 0; k < c->nkeys; k++) {
                    if (s == 0) c->lkeys[k] = map[c->lkeys[k]];
                    else c->rkeys[k] = map[c->rkeys[k]];
                }
                break;
            case RF_QP_AGGREGATE:
                for (int32_t g = 0; g < c->ngroup; g++) c->group[g] = map[c->group[g]];
                for (int32_t g = 0; g < c->naggs; g++)
                    if (c->aggs[g].col >= 0) c->aggs[g].col = map[c->aggs[g].col];
                break;
            default: break; /* these read every column, so nothing was dropped */
            }
        }
    }
}

/* Whether the pure projection c (plain columns only) at position i can be
** dropped: every reader addresses columns one by one, or c is the identity. */
static int fusable(const rf_qp_block *bl, int32_t i, const rf_qp_cmd *c)
{
    int identity = c->nouts == c->in[0]->ncols;
    for (int32_t o = 0; o < c->nouts; o++) {
        if (c->outs[o]->kind != RF_QP_E_COL) return 0;
        identity &= c->outs[o]->col == o;
    }
    if (identity) return 1;
    for (int32_t k = i + 1; k < bl->ncmds; k++) {
        const rf_qp_cmd *r = bl->cmds[k];
        if (!qp_cmd_reads(r, c->dst)) continue;
        if (r->op != RF_QP_MAPFILTER && r->op != RF_QP_MAPJOIN && r->op != RF_QP_ANTIJOIN && r->op != RF_QP_AGGREGATE)
            return 0;
    }
    return 1;
}

static void mark_all(uint8_t *m, const rf_qp_rel *r)
{
    if (m) memset(m, 1, (size_t)r->ncols);
}

rf_status rf_qp_pass_project(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    uint8_t **need = rf_calloc((size_t)p->nrels + 1, sizeof *need);
    int32_t *home = rf_malloc(((size_t)p->nrels + 1) * sizeof *home);
    uint8_t *crosses = rf_calloc((size_t)p->nrels + 1, 1);
    if (!need || !home || !crosses) {
        free(need);
        free(home);
        free(crosses);
        return RF_ENOMEM;
    }
    /* temporaries read outside the block that writes them */
    for (int32_t i = 0; i < p->nrels; i++) home[i] = -1;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) home[p->blocks[b]->cmds[i]->dst->id] = b;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
            const rf_qp_cmd *c = p->blocks[b]->cmds[i];
            for (int32_t s = 0; s < c->nin; s++)
                if (home[c->in[s]->id] != b) crosses[c->in[s]->id] = 1;
        }
    for (int32_t i = 0; i < p->nrels; i++) {
        rf_qp_rel *r = p->rels[i];
        need[i] = qp_alloc(p, (size_t)r->ncols + 1);
        if (!need[i]) break;
        if (r->kind != RF_QP_REL_TEMP || crosses[i]) mark_all(need[i], r);
    }
    int32_t *map = NULL;
    for (int32_t b = 0; b < p->nblocks && !p->oom; b++) {
        rf_qp_block *bl = p->blocks[b];
        for (int32_t i = bl->ncmds - 1; i >= 0 && !p->oom; i--) {
            rf_qp_cmd *c = bl->cmds[i];
            rf_qp_rel *t = c->dst;
            uint8_t *nt = need[t->id];
            int outs = c->op == RF_QP_MAPFILTER || c->op == RF_QP_MAPJOIN || c->op == RF_QP_ANTIJOIN;
            if (t->kind == RF_QP_REL_TEMP && (outs || c->op == RF_QP_AGGREGATE)) {
                int32_t lo = outs ? 0 : c->ngroup, n = 0, dropped = 0;
                map = qp_ints(p, t->ncols);
                if (!map) break;
                for (int32_t k = 0; k < t->ncols; k++) {
                    if (k >= lo && !nt[k]) {
                        map[k] = -1;
                        dropped = 1;
                        continue;
                    }
                    map[k] = n;
                    if (outs) c->outs[n] = c->outs[k];
                    else if (k >= c->ngroup) c->aggs[n - c->ngroup] = c->aggs[k - c->ngroup];
                    t->types[n] = t->types[k];
                    t->colnames[n] = t->colnames[k];
                    nt[n] = nt[k];
                    n++;
                }
                if (dropped) {
                    t->ncols = n;
                    if (outs) c->nouts = n;
                    else c->naggs = n - c->ngroup;
                    remap_readers(bl, i + 1, t, map);
                }
            }
            /* what c reads */
            for (int32_t s = 0; s < c->nin; s++) {
                uint8_t *m = need[c->in[s]->id];
                if (!m) continue;
                switch (c->op) {
                case RF_QP_MAPFILTER:
                case RF_QP_MAPJOIN:
                case RF_QP_ANTIJOIN:
                    if (c->op != RF_QP_ANTIJOIN || s == 0) {
                        qp_e_mark_cols(c->filter, s, m);
                        for (int32_t o = 0; o < c->nouts; o++) qp_e_mark_cols(c->outs[o], s, m);
                    }
                    for (int32_t k = 0; k < c->nkeys; k++) m[s == 0 ? c->lkeys[k] : c->rkeys[k]] = 1;
                    break;
                case RF_QP_AGGREGATE:
                    for (int32_t g = 0; g < c->ngroup; g++) m[c->group[g]] = 1;
                    for (int32_t g = 0; g < c->naggs; g++)
                        if (c->aggs[g].col >= 0) m[c->aggs[g].col] = 1;
                    break;
                default: mark_all(m, c->in[s]); break;
                }
            }
            /* a map that only picks columns of its input goes when its readers
            ** can pick them themselves: they read the input instead */
            if (c->op == RF_QP_MAPFILTER && !c->filter && t->kind == RF_QP_REL_TEMP && !crosses[t->id] &&
                !qp_written_between(bl, i + 1, bl->ncmds, c->in[0]) && fusable(bl, i, c)) {
                int32_t *cols = qp_ints(p, c->nouts);
                if (!cols) break;
                for (int32_t o = 0; o < c->nouts; o++) cols[o] = c->outs[o]->col;
                remap_readers(bl, i + 1, t, cols);
                qp_replace_reads(p, t, c->in[0]);
                qp_block_remove(bl, i);
                if (c->note && i < bl->ncmds && !bl->cmds[i]->note) bl->cmds[i]->note = c->note;
            }
        }
    }
    free(need);
    free(home);
    free(crosses);
    return p->oom ? RF_ENOMEM : RF_OK;
}
