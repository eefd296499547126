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
** A temporary's readers come from per-block lists (readers), not a scan of
** the block per temporary.
*/
#include "qp_internal.h"

#include <stdlib.h>

/* The commands of one block reading each relation, each command once per
** relation, in lists threaded through node[] from head[relation id] (valid
** where stamp[id] is the block's): a temporary's readers without a scan of
** the block per temporary, which is quadratic in a block's commands. A
** dropped map's readers join its input's list (those already reading the
** input are in it). Dropped commands stay in the lists, marked in gone. */
typedef struct readers {
    rf_qp_cmd **cmd;
    int32_t *next;
    int32_t n, cap;
    int32_t *head, *tail, *stamp;
    int32_t block;
    qp_ptrset gone;
} readers;

static int32_t first_reader(const readers *rd, const rf_qp_rel *r)
{
    return rd->stamp[r->id] == rd->block ? rd->head[r->id] : -1;
}

static int add_reader(readers *rd, const rf_qp_rel *r, rf_qp_cmd *c)
{
    if (rd->n == rd->cap) {
        int32_t ncap = rd->cap ? rd->cap * 2 : 64;
        rf_qp_cmd **cmd = realloc(rd->cmd, (size_t)ncap * sizeof *cmd);
        if (cmd) rd->cmd = cmd;
        int32_t *next = realloc(rd->next, (size_t)ncap * sizeof *next);
        if (next) rd->next = next;
        if (!cmd || !next) return -1;
        rd->cap = ncap;
    }
    int32_t x = rd->n++;
    rd->cmd[x] = c;
    rd->next[x] = -1;
    if (rd->stamp[r->id] != rd->block) {
        rd->stamp[r->id] = rd->block;
        rd->head[r->id] = x;
    } else {
        rd->next[rd->tail[r->id]] = x;
    }
    rd->tail[r->id] = x;
    return 0;
}

/* Renumbers the columns of temporary t in every reader (all come after its
** writer, in its block: project leaves a temporary read elsewhere whole). */
static void remap_readers(readers *rd, const rf_qp_rel *t, const int32_t *map)
{
    for (int32_t x = first_reader(rd, t); x >= 0; x = rd->next[x]) {
        rf_qp_cmd *c = rd->cmd[x];
        if (qp_ptrset_has(&rd->gone, c)) continue;
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

/* Whether the pure projection c (plain columns only) can be dropped: every
** reader addresses columns one by one, or c is the identity. */
static int fusable(const readers *rd, const rf_qp_cmd *c)
{
    int identity = c->nouts == c->in[0]->ncols;
    for (int32_t o = 0; o < c->nouts; o++) {
        if (c->outs[o]->kind != RF_QP_E_COL) return 0;
        identity &= c->outs[o]->col == o;
    }
    if (identity) return 1;
    for (int32_t x = first_reader(rd, c->dst); x >= 0; x = rd->next[x]) {
        const rf_qp_cmd *r = rd->cmd[x];
        if (qp_ptrset_has(&rd->gone, r)) continue;
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
    readers rd;
    memset(&rd, 0, sizeof rd);
    rd.head = rf_malloc(((size_t)p->nrels + 1) * sizeof *rd.head);
    rd.tail = rf_malloc(((size_t)p->nrels + 1) * sizeof *rd.tail);
    rd.stamp = rf_malloc(((size_t)p->nrels + 1) * sizeof *rd.stamp);
    /* per relation: the last position of this block writing it */
    int32_t *lastw = rf_malloc(((size_t)p->nrels + 1) * sizeof *lastw);
    if (!rd.head || !rd.tail || !rd.stamp || !lastw) p->oom = 1;
    for (int32_t i = 0; i < p->nrels && !p->oom; i++) rd.stamp[i] = lastw[i] = -1;
    for (int32_t b = 0; b < p->nblocks && !p->oom; b++) {
        rf_qp_block *bl = p->blocks[b];
        /* the block's readers; dropped maps leave it at the end (positions
        ** stay those of the walk) */
        rd.n = 0;
        rd.block = b;
        qp_ptrset_free(&rd.gone);
        if (qp_ptrset_init(&rd.gone, 16)) p->oom = 1;
        for (int32_t i = 0; i < bl->ncmds && !p->oom; i++) {
            rf_qp_cmd *c = bl->cmds[i];
            lastw[c->dst->id] = i;
            for (int32_t s = 0; s < c->nin; s++) {
                int seen = 0;
                for (int32_t s2 = 0; s2 < s && !seen; s2++) seen = c->in[s2] == c->in[s];
                if (!seen && add_reader(&rd, c->in[s], c)) p->oom = 1;
            }
        }
        int32_t after = -1; /* the next command kept after the walk's position */
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
                    remap_readers(&rd, t, map);
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
                !(lastw[c->in[0]->id] > i) && fusable(&rd, c)) {
                int32_t *cols = qp_ints(p, c->nouts);
                if (!cols) break;
                for (int32_t o = 0; o < c->nouts; o++) cols[o] = c->outs[o]->col;
                remap_readers(&rd, t, cols);
                /* t's readers (all in this block: it crosses no block) read the input */
                rf_qp_rel *in = c->in[0];
                for (int32_t x = first_reader(&rd, t); x >= 0; x = rd.next[x]) {
                    rf_qp_cmd *r = rd.cmd[x];
                    if (qp_ptrset_has(&rd.gone, r)) continue;
                    int had = qp_cmd_reads(r, in);
                    for (int32_t s = 0; s < r->nin; s++)
                        if (r->in[s] == t) r->in[s] = in;
                    if (!had && add_reader(&rd, in, r)) p->oom = 1;
                }
                if (qp_ptrset_add(&rd.gone, c)) p->oom = 1;
                if (c->note && after >= 0 && !bl->cmds[after]->note) bl->cmds[after]->note = c->note;
                continue;
            }
            after = i;
        }
        /* the block without its dropped maps */
        int32_t w = 0;
        for (int32_t i = 0; i < bl->ncmds; i++) {
            lastw[bl->cmds[i]->dst->id] = -1;
            if (!qp_ptrset_has(&rd.gone, bl->cmds[i])) bl->cmds[w++] = bl->cmds[i];
        }
        bl->ncmds = w;
    }
    qp_ptrset_free(&rd.gone);
    free(rd.cmd);
    free(rd.next);
    free(rd.head);
    free(rd.tail);
    free(rd.stamp);
    free(lastw);
    free(need);
    free(home);
    free(crosses);
    return p->oom ? RF_ENOMEM : RF_OK;
}
