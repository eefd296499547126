/*
** queryplan/pass_joinorder.c: the "joinorder" pass, greedy join ordering.
**
** Owns: finding left-deep chains of MapJoins (each join the only reader of
** the one below it, the lower ones projecting plain columns), and
** rebuilding a chain of three or more inputs in a better order: start from
** the input with the smallest estimated cardinality among those sharing a
** join-key class with another input (or without columns: an existence
** test), so that an input that meets the others only through a filter
** that may fail, such as `z = x + 1` (pass keyjoin), is not crossed first;
** then repeatedly join the connected input (one sharing a join-key class
** with those joined so far) with the smallest estimate. Of equal
** estimates a recursion's delta, or a filter of it, is the smaller (see
** smaller). An equality that
** cannot fail between a computed value of one input and a value of another
** (`b = a * 2.0f`, before any conjunct that may fail) connects them too,
** since keyjoin makes it a key (not with no_keyjoin); an unconnected input is taken only when
** no connected one is left, so cross products come last. Keys follow from
** the classes of equal columns, each filter is applied at the first join
** that sees all its inputs (but one that may fail at run time, and those
** after it, at the top join, in order), and the top join keeps its destination and
** outputs, so nothing outside the chain changes.
*/
#include "qp_internal.h"

#include <stdlib.h>

typedef struct chain {
    rf_qp_cmd **node; /* bottom to top; node[i] joins leaf i+1 */
    int32_t nnode;
    rf_qp_rel **leaf; /* nnode + 1 */
    int32_t *off;     /* first global column id of each leaf */
    int32_t ncol;     /* global columns */
    int32_t *uf;      /* union-find over global columns */
    int32_t *gleaf, *gcol; /* global column -> (leaf, col) */
    qp_index *ix;     /* the pass's read counts and writers */
} chain;

/* Whether r holds a recursion's new rows: its delta, or a filter or dedupe
** of them made in bl (a condition on the recursive atom's variables, which
** pass select moved into a scan of the delta). */
static int of_delta(const qp_index *ix, const rf_qp_block *bl, const rf_qp_rel *r, int depth)
{
    if (r->kind == RF_QP_REL_DELTA) return 1;
    if (r->kind != RF_QP_REL_TEMP || depth > 8) return 0;
    const rf_qp_cmd *c = qp_index_writer(ix, bl, r);
    return c && (c->op == RF_QP_MAPFILTER || c->op == RF_QP_UNIQUE) && c->nin == 1 &&
           of_delta(ix, bl, c->in[0], depth + 1);
}

/* Whether a is estimated smaller than b. Of equal estimates (inputs of
** unknown size, a predicate and its delta, filters of them) a recursion's
** new rows are: a round's new rows are a part of the relation they join,
** and a rule that starts at them joins every atom per round with them,
** whatever order its atoms are written in. Started at an input instead, the
** join of the inputs is invariant and pass hoist makes it once before the
** loop, but every round then joins the new rows with all of that join's
** rows, which can be the inputs' product (7 layers of 40 nodes: 320,000
** rows, a round's pairs 15 M for 9,600 new rows; runtime/cpu/README.md). */
static int smaller(const qp_index *ix, const rf_qp_block *bl, const rf_qp_rel *a, const rf_qp_rel *b)
{
    if (a->card != b->card) return a->card < b->card;
    return of_delta(ix, bl, a, 0) && !of_delta(ix, bl, b, 0);
}

/* The global form of an expression of node i: COL(side = leaf, col = leaf
** column). map[c] is the global column of output c of node i-1. */
static rf_qp_expr *to_global(rf_qp_program *p, const chain *ch, const rf_qp_expr *e, int32_t i, const int32_t *below)
{
    rf_qp_expr *x = qp_e_copy(p, e);
    if (!x) return NULL;
    rf_qp_expr *stack[256];
    int32_t sp = 0;
    stack[sp++] = x;
    while (sp) {
        rf_qp_expr *y = stack[--sp];
        if (y->kind == RF_QP_E_COL) {
            int32_t g = y->side == 1 ? ch->off[i + 1] + y->col : i == 0 ? ch->off[0] + y->col : below[y->col];
            y->side = ch->gleaf[g];
            y->col = ch->gcol[g];
        }
        for (int32_t k = 0; k < y->nargs; k++) {
            if (sp == 256) return NULL; /* absurdly deep: leave the chain alone */
            stack[sp++] = y->args[k];
        }
    }
    return x;
}

/* Global expression -> the frame of a join of acc (side 0, columns accg[])
** and leaf b (side 1). */
static int to_frame(const chain *ch, rf_qp_expr *e, const int32_t *accg, int32_t nacc, int32_t b)
{
    if (e->kind == RF_QP_E_COL) {
        int32_t g = ch->off[e->side] + e->col;
        if (e->side == b) {
            e->side = 1;
        } else {
            int32_t k = 0;
            while (k < nacc && accg[k] != g) k++;
            if (k == nacc) return -1;
            e->side = 0;
            e->col = k;
        }
    }
    for (int32_t k = 0; k < e->nargs; k++)
        if (to_frame(ch, e->args[k], accg, nacc, b)) return -1;
    return 0;
}

static uint64_t leaves_of(const rf_qp_expr *e)
{
    uint64_t m = e->kind == RF_QP_E_COL ? UINT64_C(1) << e->side : 0;
    for (int32_t k = 0; k < e->nargs; k++) m |= leaves_of(e->args[k]);
    return m;
}

static void mark_used(const chain *ch, const rf_qp_expr *e, uint8_t *used)
{
    if (e->kind == RF_QP_E_COL) used[ch->off[e->side] + e->col] = 1;
    for (int32_t k = 0; k < e->nargs; k++) mark_used(ch, e->args[k], used);
}

/* Reorders the chain whose top is bl->cmds[top]; 1 when it changed. */
static int reorder(rf_qp_program *p, rf_qp_block *bl, chain *ch, int32_t top)
{
    int32_t nl = ch->nnode + 1;
    ch->off = qp_ints(p, nl + 1);
    if (!ch->off) return 0;
    ch->ncol = 0;
    for (int32_t l = 0; l < nl; l++) {
        ch->off[l] = ch->ncol;
        ch->ncol += ch->leaf[l]->ncols;
    }
    ch->uf = qp_ints(p, ch->ncol);
    ch->gleaf = qp_ints(p, ch->ncol);
    ch->gcol = qp_ints(p, ch->ncol);
    uint8_t *used = qp_alloc(p, (size_t)ch->ncol + 1);
    rf_qp_expr **conj = NULL;
    int32_t nconj = 0, capconj = 0;
    if (!ch->uf || !ch->gleaf || !ch->gcol || !used) return 0;
    for (int32_t l = 0; l < nl; l++)
        for (int32_t c = 0; c < ch->leaf[l]->ncols; c++) {
            int32_t g = ch->off[l] + c;
            ch->uf[g] = g;
            ch->gleaf[g] = l;
            ch->gcol[g] = c;
        }
    /* translate the chain: keys into classes, filters into global conjuncts */
    int32_t *below = NULL;
    rf_qp_expr **topouts = NULL;
    for (int32_t i = 0; i < ch->nnode; i++) {
        const rf_qp_cmd *n = ch->node[i];
        for (int32_t k = 0; k < n->nkeys; k++) {
            int32_t a = i == 0 ? ch->off[0] + n->lkeys[k] : below[n->lkeys[k]];
            int32_t b = ch->off[i + 1] + n->rkeys[k];
            used[a] = used[b] = 1;
            ch->uf[qp_uf_find(ch->uf, a)] = qp_uf_find(ch->uf, b);
        }
        int32_t nc;
        rf_qp_expr **cs = qp_e_conjuncts(p, n->filter, &nc);
        for (int32_t k = 0; k < nc; k++) {
            if (nconj == capconj) {
                capconj = capconj ? capconj * 2 : 8;
                rf_qp_expr **m = qp_alloc(p, (size_t)capconj * sizeof *m);
                if (!m) return 0;
                if (nconj) memcpy(m, conj, (size_t)nconj * sizeof *m);
                conj = m;
            }
            if (!(conj[nconj] = to_global(p, ch, cs[k], i, below))) return 0;
            mark_used(ch, conj[nconj], used);
            nconj++;
        }
        if (i < ch->nnode - 1) {
            int32_t *m = qp_ints(p, n->nouts);
            if (!m) return 0;
            for (int32_t o = 0; o < n->nouts; o++) {
                const rf_qp_expr *e = n->outs[o];
                m[o] = e->side == 1 ? ch->off[i + 1] + e->col : i == 0 ? ch->off[0] + e->col : below[e->col];
            }
            below = m;
        } else {
            topouts = qp_alloc(p, (size_t)(n->nouts + 1) * sizeof *topouts);
            if (!topouts) return 0;
            for (int32_t o = 0; o < n->nouts; o++) {
                if (!(topouts[o] = to_global(p, ch, n->outs[o], i, below))) return 0;
                mark_used(ch, topouts[o], used);
            }
        }
    }
    /* an equality that cannot fail between a computed value of one input and
    ** a value of another (`b = a * 2.0f`) connects them as a key would: the
    ** pass keyjoin makes it one at the join this pass applies it to (only
    ** those before the first conjunct that may fail: the others wait for the
    ** top join); without keyjoin it would stay a filtered cross product */
    int32_t nsafe = qp_e_safe_prefix(conj, nconj);
    uint64_t *edge = qp_alloc(p, (size_t)(nl + 1) * sizeof *edge);
    if (!edge) return 0;
    for (int32_t k = 0; k < nsafe && !p->no_keyjoin; k++) {
        const rf_qp_expr *x = conj[k];
        if (x->kind != RF_QP_E_CMP || x->cmp != RF_CMP_EQ || x->nargs != 2) continue;
        if (x->args[0]->kind == RF_QP_E_COL && x->args[1]->kind == RF_QP_E_COL) continue;
        uint64_t m0 = leaves_of(x->args[0]), m1 = leaves_of(x->args[1]);
        if (!m0 || !m1 || (m0 & (m0 - 1)) || (m1 & (m1 - 1)) || m0 == m1) continue;
        for (int32_t l = 0; l < nl; l++) {
            if (m0 >> l & 1) edge[l] |= m1;
            if (m1 >> l & 1) edge[l] |= m0;
        }
    }
    /* greedy order */
    int32_t *order = qp_ints(p, nl);
    uint8_t *placed = qp_alloc(p, (size_t)nl + 1);
    if (!order || !placed) return 0;
    uint64_t placedmask = 0;
    for (int32_t s = 0; s < nl; s++) {
        int32_t best = -1, bestconn = 0;
        for (int32_t l = 0; l < nl; l++) {
            if (placed[l]) continue;
            /* first: connected to any other input; then: to those placed */
            int conn = (s == 0 && ch->leaf[l]->ncols == 0) || (edge[l] & (s == 0 ? ~UINT64_C(0) : placedmask)) != 0;
            for (int32_t c = 0; c < ch->leaf[l]->ncols && !conn; c++) {
                int32_t r = qp_uf_find(ch->uf, ch->off[l] + c);
                for (int32_t g = 0; g < ch->ncol && !conn; g++)
                    conn = (s == 0 ? ch->gleaf[g] != l : placed[ch->gleaf[g]]) && qp_uf_find(ch->uf, g) == r;
            }
            if (best < 0 || conn > bestconn || (conn == bestconn && smaller(ch->ix, bl, ch->leaf[l], ch->leaf[best]))) {
                best = l;
                bestconn = conn;
            }
        }
        order[s] = best;
        placed[best] = 1;
        placedmask |= UINT64_C(1) << best;
    }
    /* the first two may be swapped freely: only a different sequence counts */
    int same = (order[0] == 0 && order[1] == 1) || (order[0] == 1 && order[1] == 0);
    for (int32_t s = 2; s < nl && same; s++) same = order[s] == s;
    if (same) return 0;

    /* a conjunct that may fail, and those after it, stay at the top join in
    ** order: see qp_e_safe_prefix (nsafe) */
    /* rebuild: acc holds global columns accg[0..nacc) */
    int32_t *accg = qp_ints(p, ch->ncol), nacc = 0;
    uint8_t *applied = qp_alloc(p, (size_t)nconj + 1);
    rf_qp_cmd **fresh = qp_alloc(p, (size_t)nl * sizeof *fresh);
    if (!accg || !applied || !fresh) return 0;
    memset(placed, 0, (size_t)nl);
    rf_qp_rel *acc = ch->leaf[order[0]];
    for (int32_t c = 0; c < acc->ncols; c++) accg[nacc++] = ch->off[order[0]] + c;
    placed[order[0]] = 1;
    rf_qp_cmd *topc = bl->cmds[top];
    for (int32_t s = 1; s < nl; s++) {
        int32_t b = order[s];
        rf_qp_rel *rb = ch->leaf[b];
        int last = s == nl - 1;
        rf_qp_cmd *c = last ? topc : qp_cmd_new(p, RF_QP_MAPJOIN, NULL, 2);
        int32_t *lk = qp_ints(p, rb->ncols + nacc), *rk = qp_ints(p, rb->ncols + nacc), nk = 0;
        if (!c || !lk || !rk) return 0;
        rf_qp_expr *filter = NULL;
        /* keys: every column of b joins a column of acc in its class; two
        ** columns of one class on the same side are tied by a filter */
        for (int32_t col = 0; col < rb->ncols; col++) {
            int32_t r = qp_uf_find(ch->uf, ch->off[b] + col), a = -1;
            for (int32_t k = 0; k < nacc && a < 0; k++)
                if (qp_uf_find(ch->uf, accg[k]) == r) a = k;
            if (a >= 0) {
                lk[nk] = a;
                rk[nk++] = col;
                continue;
            }
            for (int32_t c2 = 0; c2 < col; c2++)
                if (qp_uf_find(ch->uf, ch->off[b] + c2) == r) {
                    filter = qp_e_and(p, filter, qp_e_cmp(p, RF_CMP_EQ, qp_e_col(p, 1, c2, rb->types[c2]),
                                                          qp_e_col(p, 1, col, rb->types[col])));
                    break;
                }
        }
        if (s == 1)
            for (int32_t k = 0; k < nacc; k++)
                for (int32_t k2 = 0; k2 < k; k2++)
                    if (qp_uf_find(ch->uf, accg[k2]) == qp_uf_find(ch->uf, accg[k])) {
                        filter = qp_e_and(p, filter, qp_e_cmp(p, RF_CMP_EQ, qp_e_col(p, 0, k2, acc->types[k2]),
                                                              qp_e_col(p, 0, k, acc->types[k])));
                        break;
                    }
        placed[b] = 1;
        uint64_t have = 0;
        for (int32_t l = 0; l < nl; l++)
            if (placed[l]) have |= UINT64_C(1) << l;
        for (int32_t k = 0; k < nconj; k++) {
            if (applied[k] || (leaves_of(conj[k]) & ~have) || (k >= nsafe && !last)) continue;
            rf_qp_expr *x = qp_e_copy(p, conj[k]);
            if (!x || to_frame(ch, x, accg, nacc, b)) return 0;
            filter = qp_e_and(p, filter, x);
            applied[k] = 1;
        }
        rf_qp_expr **outs;
        int32_t nouts, *ng = NULL;
        if (last) {
            outs = qp_alloc(p, (size_t)(topc->nouts + 1) * sizeof *outs);
            if (!outs) return 0;
            nouts = topc->nouts;
            for (int32_t o = 0; o < nouts; o++) {
                if (!(outs[o] = qp_e_copy(p, topouts[o])) || to_frame(ch, outs[o], accg, nacc, b)) return 0;
            }
        } else {
            /* keep what anything above may read; projection push-down trims the rest */
            outs = qp_alloc(p, (size_t)(nacc + rb->ncols + 1) * sizeof *outs);
            ng = qp_ints(p, nacc + rb->ncols);
            if (!outs || !ng) return 0;
            nouts = 0;
            for (int32_t k = 0; k < nacc; k++)
                if (used[accg[k]]) {
                    ng[nouts] = accg[k];
                    outs[nouts++] = qp_e_col(p, 0, k, acc->types[k]);
                }
            for (int32_t col = 0; col < rb->ncols; col++)
                if (used[ch->off[b] + col]) {
                    ng[nouts] = ch->off[b] + col;
                    outs[nouts++] = qp_e_col(p, 1, col, rb->types[col]);
                }
            rf_qp_rel *t = qp_temp_new(p, nouts);
            if (!t) return 0;
            for (int32_t o = 0; o < nouts; o++) {
                int32_t l = ch->gleaf[ng[o]], col = ch->gcol[ng[o]];
                t->types[o] = ch->leaf[l]->types[col];
                t->colnames[o] = ch->leaf[l]->colnames[col];
            }
            c->dst = t;
            c->loc = topc->loc;
        }
        if (last) qp_index_drop(ch->ix, topc); /* its inputs change */
        c->in[0] = acc;
        c->in[1] = rb;
        c->lkeys = lk;
        c->rkeys = rk;
        c->nkeys = nk;
        c->filter = filter;
        c->outs = outs;
        c->nouts = nouts;
        if (!last) {
            fresh[s - 1] = c;
            acc = c->dst;
            memcpy(accg, ng, (size_t)nouts * sizeof *accg);
            nacc = nouts;
        }
    }
    if (p->oom) return 0;
    /* swap the old lower joins for the new ones, just above the top: the
    ** old ones write temporaries read after them in this block, so they lie
    ** in a window ending at the top, which is rebuilt in place (not a
    ** removal and an insertion per join, each moving the block's tail) */
    const char *note = ch->node[0]->note;
    for (int32_t i = 0; i < ch->nnode - 1; i++) qp_index_drop(ch->ix, ch->node[i]);
    int32_t lo = top, left = ch->nnode - 1;
    while (left > 0 && lo > 0) {
        lo--;
        for (int32_t i = 0; i < ch->nnode - 1; i++)
            if (bl->cmds[lo] == ch->node[i]) left--;
    }
    if (left > 0) return p->oom = 1, 0; /* a broken chain: no plan */
    int32_t w = lo;
    for (int32_t k = lo; k < top; k++) {
        int old = 0;
        for (int32_t i = 0; i < ch->nnode - 1 && !old; i++) old = bl->cmds[k] == ch->node[i];
        if (!old) bl->cmds[w++] = bl->cmds[k];
    }
    for (int32_t s = 0; s < nl - 2; s++) {
        bl->cmds[w++] = fresh[s];
        qp_index_add(p, ch->ix, bl->id, fresh[s]);
    }
    qp_index_add(p, ch->ix, bl->id, topc);
    if (note) fresh[0]->note = note;
    return 1;
}

rf_status rf_qp_pass_joinorder(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    qp_index ix;
    if (qp_index_build(p, &ix)) {
        qp_index_free(&ix);
        return RF_ENOMEM;
    }
    for (int32_t b = 0; b < p->nblocks && !p->oom; b++) {
        rf_qp_block *bl = p->blocks[b];
        /* joins already part of a chain */
        qp_ptrset done;
        if (qp_ptrset_init(&done, bl->ncmds)) {
            qp_index_free(&ix);
            return RF_ENOMEM;
        }
        for (int32_t i = bl->ncmds - 1; i >= 0 && !p->oom; i--) {
            rf_qp_cmd *top = bl->cmds[i];
            if (top->op != RF_QP_MAPJOIN || qp_ptrset_has(&done, top)) continue;
            /* walk down the left spine */
            chain ch;
            memset(&ch, 0, sizeof ch);
            int32_t cap = 8;
            ch.node = qp_alloc(p, (size_t)cap * sizeof *ch.node);
            if (!ch.node) break;
            ch.node[ch.nnode++] = top;
            rf_qp_cmd *cur = top;
            for (;;) {
                rf_qp_rel *l = cur->in[0];
                if (l->kind != RF_QP_REL_TEMP || qp_index_reads(&ix, l) != 1) break;
                rf_qp_cmd *w = qp_index_writer(&ix, bl, l);
                if (!w || w->op != RF_QP_MAPJOIN || !qp_plain_cols(w)) break;
                if (ch.nnode == cap) {
                    rf_qp_cmd **m = qp_alloc(p, (size_t)cap * 2 * sizeof *m);
                    if (!m) break;
                    memcpy(m, ch.node, (size_t)cap * sizeof *m);
                    ch.node = m;
                    cap *= 2;
                }
                cur = w;
                ch.node[ch.nnode++] = cur;
            }
            /* bottom to top */
            for (int32_t k = 0; k < ch.nnode / 2; k++) {
                rf_qp_cmd *t = ch.node[k];
                ch.node[k] = ch.node[ch.nnode - 1 - k];
                ch.node[ch.nnode - 1 - k] = t;
            }
            /* inner joins are part of this chain: never tops of their own */
            for (int32_t k = 0; k < ch.nnode - 1; k++)
                if (qp_ptrset_add(&done, ch.node[k])) p->oom = 1;
            if (ch.nnode < 2 || ch.nnode + 1 > 64) continue;
            ch.leaf = qp_alloc(p, (size_t)(ch.nnode + 2) * sizeof *ch.leaf);
            if (!ch.leaf) break;
            ch.leaf[0] = ch.node[0]->in[0];
            for (int32_t k = 0; k < ch.nnode; k++) ch.leaf[k + 1] = ch.node[k]->in[1];
            ch.ix = &ix;
            /* a rebuilt chain keeps its top where it was (as many joins below it) */
            reorder(p, bl, &ch, i);
        }
        qp_ptrset_free(&done);
    }
    qp_index_free(&ix);
    return p->oom ? RF_ENOMEM : RF_OK;
}
