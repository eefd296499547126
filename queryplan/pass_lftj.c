/*
** queryplan/pass_lftj.c: the "lftj" pass, worst-case-optimal joins for
** cyclic bodies (the multi-predicate join of the Red Fox thesis, chapter 5).
**
** Owns: the rule that chooses a leapfrog triejoin (RF_QP_LFTJ) over a chain
** of binary joins, the variable order, and the rewrite. A left-deep chain
** of MapJoins (found as the joinorder pass finds them: each join the only
** reader of the one below it, the lower ones projecting plain columns) is
** rewritten into one LFTJ over its leaves and a map of the top join's
** filter and outputs when
**   - it joins three or more inputs, every join on at least one key, and
**     at least one join can multiply rows (neither side is joined on one of
**     its keys): key-to-key chains (a star of foreign keys closed into a
**     cycle, as in TPC-H) never grow past their largest input, and keep
**     their binary joins;
**   - the join graph is cyclic: the GYO reduction (drop a variable that one
**     input alone holds, drop an input whose variables another input holds
**     too) leaves two or more inputs. An acyclic body is joined well by
**     binary joins; a cyclic one (triangles, cliques) makes them build the
**     open paths first (every wedge of a triangle query), which can be far
**     more than the answer;
**   - every column it joins, compares or outputs is an int (the executors
**     intersect sorted int columns), at most 8 inputs and 16 variables, no
**     input with two columns on one variable;
**   - the filters' conjuncts taken into the LFTJ (the lower joins', and the
**     top one's leading ones) are comparisons of two int columns or of a
**     column and a constant, which cannot fail at run time: the LFTJ uses
**     them to narrow its searches (a < b < c starts each search after the
**     last). Other conjuncts of the lower joins go after the LFTJ when they
**     cannot fail either (comparisons, and, not, like); one that may (an
**     overflow, a division) keeps the chain binary, since evaluating it on
**     other rows could change the error a run reports.
** Variables are the classes of columns the keys make equal; each input
** column nobody reads is projected away. Order: variables held by more
** inputs first, ties in the order the chain first reads them (the written
** order). The program option no_lftj (`--no-lftj`) turns the pass off.
*/
#include "qp_internal.h"

#include <stdlib.h>

#define LFTJ_MAX_INPUTS 8
#define LFTJ_MAX_VARS 16
#define LFTJ_MAX_BOUNDS 16 /* the executors' (rf_rt_lftj.h); more stay after the join */

/* A comparison of two int columns or an int column and an int constant. */
static int simple_bound(const rf_qp_expr *e)
{
    if (e->kind != RF_QP_E_CMP || e->nargs != 2) return 0;
    int cols = 0;
    for (int32_t k = 0; k < 2; k++) {
        const rf_qp_expr *a = e->args[k];
        if (a->type != RF_TYPE_INT) return 0;
        if (a->kind == RF_QP_E_COL) cols++;
        else if (a->kind != RF_QP_E_CONST) return 0;
    }
    return cols >= 1;
}

typedef struct lchain {
    rf_qp_cmd **node; /* bottom to top; node[i] joins leaf i+1 */
    int32_t nnode;
    rf_qp_rel *leaf[LFTJ_MAX_INPUTS];
    int32_t off[LFTJ_MAX_INPUTS + 1];
    int32_t ncol;
    int32_t *uf;
    int32_t *below; /* global column of each output of the node below */
    rf_qp_cmd *made[2]; /* after a rewrite: the LFTJ and the map after it */
} lchain;

/* A copy of e of node i with COL(side, col) made global: side 0, col = the
** global column (resolved to a variable later). */
static rf_qp_expr *to_global(rf_qp_program *p, const lchain *ch, const rf_qp_expr *e, int32_t i)
{
    rf_qp_expr *x = qp_e_copy(p, e);
    if (!x) return NULL;
    rf_qp_expr *stack[256];
    int32_t sp = 0;
    stack[sp++] = x;
    while (sp) {
        rf_qp_expr *y = stack[--sp];
        if (y->kind == RF_QP_E_COL) {
            y->col = y->side == 1 ? ch->off[i + 1] + y->col : i == 0 ? ch->off[0] + y->col : ch->below[y->col];
            y->side = 0;
        }
        for (int32_t k = 0; k < y->nargs; k++) {
            if (sp == 256) return NULL;
            stack[sp++] = y->args[k];
        }
    }
    return x;
}

/* Whether e cannot fail at run time (comparisons, and, not, like over
** columns and constants: no arithmetic that may overflow or divide by zero). */
static int cannot_fail(const rf_qp_expr *e)
{
    switch (e->kind) {
    case RF_QP_E_COL:
    case RF_QP_E_CONST: return 1;
    case RF_QP_E_CMP:
    case RF_QP_E_AND:
    case RF_QP_E_NOT:
    case RF_QP_E_LIKE:
        for (int32_t k = 0; k < e->nargs; k++)
            if (!cannot_fail(e->args[k])) return 0;
        return 1;
    default: return 0;
    }
}

static void mark_used(const rf_qp_expr *e, uint8_t *used)
{
    if (e->kind == RF_QP_E_COL) used[e->col] = 1;
    for (int32_t k = 0; k < e->nargs; k++) mark_used(e->args[k], used);
}

static void to_vars(rf_qp_expr *e, const int32_t *var)
{
    if (e->kind == RF_QP_E_COL) e->col = var[e->col];
    for (int32_t k = 0; k < e->nargs; k++) to_vars(e->args[k], var);
}

/* GYO: 1 when the inputs' variable sets (bit masks) form a cyclic hypergraph. */
static int cyclic(const uint32_t *in, int32_t n)
{
    uint32_t s[LFTJ_MAX_INPUTS];
    uint8_t gone[LFTJ_MAX_INPUTS] = {0};
    memcpy(s, in, (size_t)n * sizeof *s);
    int32_t left = n;
    for (int changed = 1; changed && left > 1;) {
        changed = 0;
        for (int32_t v = 0; v < 32; v++) {
            int32_t holders = 0, who = -1;
            for (int32_t i = 0; i < n; i++)
                if (!gone[i] && (s[i] >> v & 1)) holders++, who = i;
            if (holders == 1) {
                s[who] &= ~(UINT32_C(1) << v);
                changed = 1;
            }
        }
        for (int32_t i = 0; i < n && left > 1; i++) {
            if (gone[i]) continue;
            for (int32_t j = 0; j < n; j++)
                if (j != i && !gone[j] && (s[i] & ~s[j]) == 0) {
                    gone[i] = 1;
                    left--;
                    changed = 1;
                    break;
                }
        }
    }
    return left > 1;
}

/* Rewrites the chain whose top is bl->cmds[top]; 1 when it did. */
static int rewrite(rf_qp_program *p, rf_qp_block *bl, lchain *ch, int32_t top)
{
    int32_t nl = ch->nnode + 1;
    if (nl < 3 || nl > LFTJ_MAX_INPUTS) return 0;
    ch->ncol = 0;
    for (int32_t l = 0; l < nl; l++) {
        ch->off[l] = ch->ncol;
        ch->ncol += ch->leaf[l]->ncols;
    }
    ch->off[nl] = ch->ncol;
    int32_t ng = ch->ncol;
    ch->uf = qp_ints(p, ng);
    uint8_t *used = qp_alloc(p, (size_t)ng + 1);
    int32_t *var = qp_ints(p, ng);
    rf_qp_expr **bounds = qp_alloc(p, (size_t)(ng + 64) * sizeof *bounds);
    if (!ch->uf || !used || !var || !bounds) return 0;
    for (int32_t g = 0; g < ng; g++) ch->uf[g] = g;
    int32_t nb = 0, capb = ng + 64;
    rf_qp_expr *rest = NULL, *lower_rest = NULL, **topouts = NULL;
    int grows = 0;
    for (int32_t i = 0; i < ch->nnode; i++) {
        const rf_qp_cmd *n = ch->node[i];
        if (n->nkeys < 1) return 0;
        grows |= !qp_key_joined(n, 0) && !qp_key_joined(n, 1);
        for (int32_t k = 0; k < n->nkeys; k++) {
            int32_t a = i == 0 ? ch->off[0] + n->lkeys[k] : ch->below[n->lkeys[k]];
            int32_t b = ch->off[i + 1] + n->rkeys[k];
            used[a] = used[b] = 1;
            ch->uf[qp_uf_find(ch->uf, a)] = qp_uf_find(ch->uf, b);
        }
        int32_t nc;
        rf_qp_expr **cs = qp_e_conjuncts(p, n->filter, &nc);
        int top_rest = 0;
        for (int32_t k = 0; k < nc; k++) {
            rf_qp_expr *g = to_global(p, ch, cs[k], i);
            if (!g) return 0;
            mark_used(g, used);
            if (!top_rest && simple_bound(cs[k]) && nb < capb && nb < LFTJ_MAX_BOUNDS) {
                bounds[nb++] = g;
            } else if (i < ch->nnode - 1) {
                /* a lower join's condition that is no bound: after the join, if
                ** evaluating it on fewer rows cannot change which error a run
                ** reports; else the chain stays binary */
                if (!cannot_fail(cs[k])) return 0;
                lower_rest = qp_e_and(p, lower_rest, g);
            } else {
                top_rest = 1; /* what follows stays in order, after the join */
                rest = qp_e_and(p, rest, g);
            }
        }
        if (i < ch->nnode - 1) {
            int32_t *m = qp_ints(p, n->nouts);
            if (!m) return 0;
            for (int32_t o = 0; o < n->nouts; o++) {
                const rf_qp_expr *e = n->outs[o];
                m[o] = e->side == 1 ? ch->off[i + 1] + e->col : i == 0 ? ch->off[0] + e->col : ch->below[e->col];
            }
            ch->below = m;
        } else {
            topouts = qp_alloc(p, (size_t)(n->nouts + 1) * sizeof *topouts);
            if (!topouts) return 0;
            for (int32_t o = 0; o < n->nouts; o++) {
                if (!(topouts[o] = to_global(p, ch, n->outs[o], i))) return 0;
                mark_used(topouts[o], used);
            }
        }
    }
    if (!grows) return 0;
    /* ints only; one column per variable and input */
    for (int32_t l = 0; l < nl; l++)
        for (int32_t c = 0; c < ch->leaf[l]->ncols; c++) {
            int32_t g = ch->off[l] + c;
            if (!used[g]) continue;
            if (ch->leaf[l]->types[c] != RF_TYPE_INT) return 0;
            for (int32_t c2 = 0; c2 < c; c2++)
                if (used[ch->off[l] + c2] && qp_uf_find(ch->uf, ch->off[l] + c2) == qp_uf_find(ch->uf, g)) return 0;
        }
    /* classes, in the order first read */
    int32_t cls[LFTJ_MAX_VARS], ncls = 0, holders[LFTJ_MAX_VARS] = {0};
    for (int32_t g = 0; g < ng; g++) {
        var[g] = -1;
        if (!used[g]) continue;
        int32_t r = qp_uf_find(ch->uf, g), k = 0;
        while (k < ncls && cls[k] != r) k++;
        if (k == ncls) {
            if (ncls == LFTJ_MAX_VARS) return 0;
            cls[ncls++] = r;
        }
        var[g] = k;
    }
    uint32_t mask[LFTJ_MAX_INPUTS] = {0};
    for (int32_t l = 0; l < nl; l++)
        for (int32_t c = 0; c < ch->leaf[l]->ncols; c++)
            if (var[ch->off[l] + c] >= 0) mask[l] |= UINT32_C(1) << var[ch->off[l] + c];
    if (!cyclic(mask, nl)) return 0;
    for (int32_t l = 0; l < nl; l++)
        for (int32_t k = 0; k < ncls; k++) holders[k] += (int32_t)(mask[l] >> k & 1);
    /* the order: more holders first, then first read (a stable selection) */
    int32_t rank[LFTJ_MAX_VARS];
    uint8_t taken[LFTJ_MAX_VARS] = {0};
    for (int32_t s = 0; s < ncls; s++) {
        int32_t best = -1;
        for (int32_t k = 0; k < ncls; k++)
            if (!taken[k] && (best < 0 || holders[k] > holders[best])) best = k;
        taken[best] = 1;
        rank[best] = s;
    }
    for (int32_t g = 0; g < ng; g++)
        if (var[g] >= 0) var[g] = rank[var[g]];

    /* the LFTJ: dst = the variables */
    rf_qp_cmd *topc = bl->cmds[top];
    rf_qp_rel *vt = qp_temp_new(p, ncls);
    rf_qp_cmd *j = qp_cmd_new(p, RF_QP_LFTJ, vt, nl);
    rf_qp_cmd *m = qp_cmd_new(p, RF_QP_MAPFILTER, topc->dst, 1);
    int32_t *colvar = qp_ints(p, ng);
    if (!vt || !j || !m || !colvar) return 0;
    for (int32_t g = ng - 1; g >= 0; g--)
        if (var[g] >= 0) {
            int32_t l = 0;
            while (g >= ch->off[l + 1]) l++;
            vt->types[var[g]] = RF_TYPE_INT;
            vt->colnames[var[g]] = ch->leaf[l]->colnames[g - ch->off[l]];
        }
    memcpy(colvar, var, (size_t)ng * sizeof *colvar);
    for (int32_t l = 0; l < nl; l++) j->in[l] = ch->leaf[l];
    j->colvar = colvar;
    rf_qp_expr *bf = NULL;
    for (int32_t k = 0; k < nb; k++) {
        to_vars(bounds[k], var);
        bf = qp_e_and(p, bf, bounds[k]);
    }
    j->filter = bf;
    j->loc = topc->loc;
    j->note = ch->node[0]->note ? ch->node[0]->note : topc->note;
    m->in[0] = vt;
    /* the lower joins' conditions first, as the chain evaluated them */
    rest = lower_rest ? qp_e_and(p, lower_rest, rest) : rest;
    if (rest) to_vars(rest, var);
    m->filter = rest;
    m->outs = topouts;
    m->nouts = topc->nouts;
    for (int32_t o = 0; o < m->nouts; o++) to_vars(topouts[o], var);
    m->loc = topc->loc;
    if (p->oom) return 0;
    for (int32_t i = 0; i < ch->nnode - 1; i++) {
        int32_t at = -1;
        for (int32_t k = 0; k < bl->ncmds; k++)
            if (bl->cmds[k] == ch->node[i]) at = k;
        if (at >= 0) qp_block_remove(bl, at);
    }
    int32_t at = 0;
    while (bl->cmds[at] != topc) at++;
    bl->cmds[at] = m;
    qp_block_insert(p, bl, at, j);
    ch->made[0] = j;
    ch->made[1] = m;
    return 1;
}

rf_status rf_qp_pass_lftj(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    if (p->no_lftj) return RF_OK;
    qp_index ix;
    if (qp_index_build(p, &ix)) {
        qp_index_free(&ix);
        return RF_ENOMEM;
    }
    for (int32_t b = 0; b < p->nblocks && !p->oom; b++) {
        rf_qp_block *bl = p->blocks[b];
        for (int32_t i = bl->ncmds - 1; i >= 0 && !p->oom; i--) {
            rf_qp_cmd *top = bl->cmds[i];
            if (top->op != RF_QP_MAPJOIN) continue;
            lchain ch;
            memset(&ch, 0, sizeof ch);
            rf_qp_cmd *nodes[LFTJ_MAX_INPUTS];
            int32_t nn = 0;
            nodes[nn++] = top;
            rf_qp_cmd *cur = top;
            for (;;) {
                rf_qp_rel *l = cur->in[0];
                if (l->kind != RF_QP_REL_TEMP || qp_index_reads(&ix, l) != 1) break;
                rf_qp_cmd *w = qp_index_writer(&ix, bl, l);
                if (!w || w->op != RF_QP_MAPJOIN || !qp_plain_cols(w)) break;
                if (nn == LFTJ_MAX_INPUTS) {
                    nn = LFTJ_MAX_INPUTS + 1;
                    break;
                }
                cur = w;
                nodes[nn++] = cur;
            }
            if (nn < 2 || nn >= LFTJ_MAX_INPUTS) continue;
            for (int32_t k = 0; k < nn / 2; k++) {
                rf_qp_cmd *t = nodes[k];
                nodes[k] = nodes[nn - 1 - k];
                nodes[nn - 1 - k] = t;
            }
            ch.node = nodes;
            ch.nnode = nn;
            ch.leaf[0] = nodes[0]->in[0];
            for (int32_t k = 0; k < nn; k++) ch.leaf[k + 1] = nodes[k]->in[1];
            if (rewrite(p, bl, &ch, i)) {
                /* the chain's joins leave the block (the top's command too: the
                ** map writes its destination) */
                for (int32_t k = 0; k < nn; k++) qp_index_drop(&ix, nodes[k]);
                qp_index_add(p, &ix, b, ch.made[0]);
                qp_index_add(p, &ix, b, ch.made[1]);
                i = bl->ncmds; /* the block changed: start over at its end */
            }
        }
    }
    qp_index_free(&ix);
    return p->oom ? RF_ENOMEM : RF_OK;
}
