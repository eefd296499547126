/*
** queryplan/qp_keychain.c: chains of joins on computed keys (pass keyjoin).
**
** Owns: splitting a cross product of three or more inputs, whose filter
** begins with equalities that each tie one input to the next through a
** computed value (`node(x), node(z), node(w), z = x + 1, w = z + 1`), into
** one join per such equality, in the order written, so that the pass
** keyjoin makes each a hash join; the inputs the chained equalities do not
** read are crossed after them, the other conjuncts staying at the top.
**
** Which rows each equality is evaluated on (docs/LANGUAGE.md, "Where such
** an error is raised"). Let L1..Lm be the inputs and c1..cn the filter's
** conjuncts, evaluated in order on each combination (l1, ..., lm) of their
** rows. Before the split, ck is evaluated on the combinations where c1..ck-1
** hold; it reads only the inputs joined by the first k steps (J_k), so the
** values it reads are those of the rows of J_k's inputs that satisfy
** c1..ck-1 (that is, the rows of step k-1's result), and only when every
** input not yet joined (R_k) has a row: a combination needs one row of
** each. After the split, step k joins step k-1's result, crossed with the
** existence test of each input of R_k (projected to no column and deduped:
** one empty row or none) where ck may fail, with the input ck adds, on ck:
** keyjoin computes each of ck's operands only for the rows of its side that
** the other side meets (the other side has a row), so on the rows of step
** k-1's result when R_k and the new input have rows, and on the rows of the
** new input when step k-1's result and R_k have rows: the same values as
** before. A conjunct that cannot fail needs no guard (computed on more
** rows, it raises nothing, and the rows it keeps are crossed with R_k
** later). So the rule raises an error exactly when it did; when several
** rows fail, which one the message names may differ, as the rule allows.
*/
#include "qp_internal.h"

#define KC_MAX_LEAVES 64

typedef struct kc_frame {
    int32_t *leaf, *col; /* per column of the accumulated side: its input and column */
    int32_t n;
} kc_frame;

static uint64_t leaves_of(const rf_qp_expr *e)
{
    uint64_t m = e->kind == RF_QP_E_COL ? UINT64_C(1) << e->side : 0;
    for (int32_t k = 0; k < e->nargs; k++) m |= leaves_of(e->args[k]);
    return m;
}

static int single(uint64_t m)
{
    return m && !(m & (m - 1));
}

static int32_t bit_index(uint64_t m)
{
    int32_t i = 0;
    while (!(m & 1)) {
        m >>= 1;
        i++;
    }
    return i;
}

/* In place: COL of node i of the chain becomes COL(input, column); below
** maps side 0's columns (node i > 0) to inputs and columns. */
static void to_global(rf_qp_expr *e, int32_t i, const kc_frame *below)
{
    if (e->kind == RF_QP_E_COL) {
        if (e->side == 1) {
            e->side = i + 1;
        } else if (i > 0) {
            e->side = below->leaf[e->col];
            e->col = below->col[e->col];
        }
    }
    for (int32_t k = 0; k < e->nargs; k++) to_global(e->args[k], i, below);
}

/* In place: global form -> a join of acc (side 0, frame f) and input b
** (side 1). -1 when a column is in neither. */
static int to_frame(rf_qp_expr *e, const kc_frame *f, int32_t b)
{
    if (e->kind == RF_QP_E_COL) {
        if (e->side == b) {
            e->side = 1;
        } else {
            int32_t k = 0;
            while (k < f->n && !(f->leaf[k] == e->side && f->col[k] == e->col)) k++;
            if (k == f->n) return -1;
            e->side = 0;
            e->col = k;
        }
    }
    for (int32_t k = 0; k < e->nargs; k++)
        if (to_frame(e->args[k], f, b)) return -1;
    return 0;
}

/* Global conjuncts g[0..n) framed for acc and input b, as one filter. */
static rf_qp_expr *framed(rf_qp_program *p, rf_qp_expr *const *g, int32_t n, const kc_frame *f, int32_t b)
{
    rf_qp_expr **x = qp_alloc(p, (size_t)(n + 1) * sizeof *x);
    if (!x) return NULL;
    for (int32_t k = 0; k < n; k++)
        if (!(x[k] = qp_e_copy(p, g[k])) || to_frame(x[k], f, b)) return NULL;
    return n ? qp_e_and_n(p, NULL, x, n) : NULL;
}

/* Inserts before bl->cmds[*at] a cross product of acc (frame f) and in (input
** b, or -1: an existence test, no column), filter (over both) when not
** NULL, keeping every column; f then describes the result. */
static rf_qp_cmd *cross(rf_qp_program *p, rf_qp_block *bl, int32_t *at, rf_qp_rel *acc, kc_frame *f,
                        rf_qp_rel *in, int32_t b, rf_qp_expr *filter, rf_loc loc)
{
    int32_t n = acc->ncols + in->ncols;
    rf_qp_rel *t = qp_temp_new(p, n);
    rf_qp_cmd *c = qp_cmd_new(p, RF_QP_MAPJOIN, t, 2);
    if (!t || !c || !(c->outs = qp_alloc(p, (size_t)(n + 1) * sizeof *c->outs))) return NULL;
    c->in[0] = acc;
    c->in[1] = in;
    c->filter = filter;
    c->nouts = n;
    c->loc = loc;
    for (int32_t k = 0; k < n; k++) {
        int32_t s = k < acc->ncols ? 0 : 1, col = s ? k - acc->ncols : k;
        const rf_qp_rel *r = s ? in : acc;
        t->types[k] = r->types[col];
        t->colnames[k] = r->colnames[col];
        if (!(c->outs[k] = qp_e_col(p, s, col, r->types[col]))) return NULL;
    }
    for (int32_t col = 0; col < in->ncols; col++) {
        f->leaf[f->n] = b;
        f->col[f->n++] = col;
    }
    qp_block_insert(p, bl, (*at)++, c);
    return p->oom ? NULL : c;
}

int qp_keychain_split(rf_qp_program *p, rf_qp_block *bl, int32_t top, rf_qp_cmd ***steps, int32_t *nsteps)
{
    rf_qp_cmd *c = bl->cmds[top];
    *nsteps = 0;
    if (c->op != RF_QP_MAPJOIN || c->nkeys || !c->filter) return 0;
    /* the left spine of cross products below c, each the only reader of the one below */
    rf_qp_cmd *node[KC_MAX_LEAVES];
    int32_t nn = 0;
    node[nn++] = c;
    for (rf_qp_cmd *cur = c;;) {
        rf_qp_rel *l = cur->in[0];
        if (l->kind != RF_QP_REL_TEMP || qp_count_reads(p, l) != 1) break;
        int32_t w = qp_find_writer(bl, l);
        if (w < 0 || w >= top) break;
        rf_qp_cmd *x = bl->cmds[w];
        if (x->op != RF_QP_MAPJOIN || x->nkeys || x->filter || !qp_plain_cols(x)) break;
        if (nn == KC_MAX_LEAVES - 1) return 0;
        node[nn++] = cur = x;
    }
    if (nn < 2) return 0;
    for (int32_t k = 0; k < nn / 2; k++) {
        rf_qp_cmd *t = node[k];
        node[k] = node[nn - 1 - k];
        node[nn - 1 - k] = t;
    }
    int32_t nl = nn + 1;
    rf_qp_rel *leaf[KC_MAX_LEAVES];
    int32_t ncols = 0;
    leaf[0] = node[0]->in[0];
    for (int32_t k = 0; k < nn; k++) leaf[k + 1] = node[k]->in[1];
    for (int32_t l = 0; l < nl; l++) ncols += leaf[l]->ncols;
    /* the top's conjuncts and outputs over (input, column) */
    kc_frame below = {0};
    for (int32_t i = 0; i + 1 < nn; i++) {
        const rf_qp_cmd *n = node[i];
        kc_frame f = {qp_ints(p, n->nouts + 1), qp_ints(p, n->nouts + 1), n->nouts};
        if (!f.leaf || !f.col) return -1;
        for (int32_t o = 0; o < n->nouts; o++) {
            const rf_qp_expr *e = n->outs[o];
            f.leaf[o] = e->side == 1 ? i + 1 : i == 0 ? 0 : below.leaf[e->col];
            f.col[o] = e->side == 1 || i == 0 ? e->col : below.col[e->col];
        }
        below = f;
    }
    int32_t n;
    rf_qp_expr **conj = qp_e_conjuncts(p, c->filter, &n);
    rf_qp_expr **g = qp_alloc(p, (size_t)(n + 1) * sizeof *g);
    rf_qp_expr **gouts = qp_alloc(p, (size_t)(c->nouts + 1) * sizeof *gouts);
    if (!conj || !g || !gouts) return -1;
    for (int32_t k = 0; k < n; k++) {
        if (!(g[k] = qp_e_copy(p, conj[k]))) return -1;
        to_global(g[k], nn - 1, &below);
    }
    for (int32_t o = 0; o < c->nouts; o++) {
        if (!(gouts[o] = qp_e_copy(p, c->outs[o]))) return -1;
        to_global(gouts[o], nn - 1, &below);
    }
    /* the chained prefix: ck ties the inputs joined so far (for c1, one
    ** input) to one new input, an operand on each, not both plain columns */
    int32_t first = -1, add[KC_MAX_LEAVES], nch = 0;
    uint64_t have = 0, all = nl == 64 ? ~UINT64_C(0) : (UINT64_C(1) << nl) - 1;
    for (int32_t k = 0; k < n; k++) {
        const rf_qp_expr *x = g[k];
        if (x->kind != RF_QP_E_CMP || x->cmp != RF_CMP_EQ || x->nargs != 2) break;
        if (x->args[0]->kind == RF_QP_E_COL && x->args[1]->kind == RF_QP_E_COL) break;
        uint64_t m0 = leaves_of(x->args[0]), m1 = leaves_of(x->args[1]);
        if (!single(m0) && !single(m1)) break;
        if (k == 0) {
            if (!single(m0) || !single(m1) || m0 == m1) break;
            uint64_t lo = m0 < m1 ? m0 : m1;
            first = bit_index(lo);
            have = lo;
        }
        uint64_t mine = (m0 & ~have) ? m1 : m0, other = (m0 & ~have) ? m0 : m1;
        if (!mine || (mine & ~have) || !single(other) || (other & have)) break;
        add[nch++] = bit_index(other);
        have |= other;
    }
    if (!nch) return 0;
    rf_qp_cmd **made = qp_alloc(p, (size_t)(nch + 1) * sizeof *made);
    kc_frame f = {qp_ints(p, ncols + 1), qp_ints(p, ncols + 1), 0};
    if (!made || !f.leaf || !f.col) return -1;
    /* the old spine goes; the new one is built just before c */
    const char *note = node[0]->note;
    for (int32_t i = 0; i + 1 < nn; i++) {
        int32_t at = 0;
        while (bl->cmds[at] != node[i]) at++;
        qp_block_remove(bl, at);
    }
    int32_t at = 0;
    while (bl->cmds[at] != c) at++;
    int32_t at0 = at;
    rf_qp_rel *acc = leaf[first];
    for (int32_t col = 0; col < acc->ncols; col++) {
        f.leaf[f.n] = first;
        f.col[f.n++] = col;
    }
    uint64_t placed = UINT64_C(1) << first;
    rf_qp_rel *ex[KC_MAX_LEAVES] = {0};
    for (int32_t s = 0; s < nch; s++) {
        int32_t b = add[s];
        uint64_t rest = all & ~placed & ~(UINT64_C(1) << b);
        if (qp_e_may_fail(g[s]))
            for (int32_t l = 0; l < nl; l++) {
                if (!(rest >> l & 1)) continue;
                /* its existence test: one empty row or none */
                if (!ex[l] && !(ex[l] = qp_distinct_cols(p, bl, &at, leaf[l], NULL, NULL, 0, c->loc))) return -1;
                rf_qp_cmd *x = cross(p, bl, &at, acc, &f, ex[l], -1, NULL, c->loc);
                if (!x) return -1;
                acc = x->dst;
            }
        placed |= UINT64_C(1) << b;
        if (placed == all) break; /* the last step is c itself */
        rf_qp_expr *filter = framed(p, g + s, 1, &f, b);
        rf_qp_cmd *x = filter ? cross(p, bl, &at, acc, &f, leaf[b], b, filter, c->loc) : NULL;
        if (!x) return -1;
        made[(*nsteps)++] = x;
        acc = x->dst;
    }
    /* the inputs no chained equality reads, crossed in their order, c
    ** joining the last; or, when every input is chained, c is the last step */
    int32_t from, last = -1;
    if (placed == all) {
        from = nch - 1;
        last = add[nch - 1];
    } else {
        from = nch;
        for (int32_t l = 0; l < nl; l++)
            if (!(placed >> l & 1)) last = l;
        for (int32_t l = 0; l < last; l++) {
            if (placed >> l & 1) continue;
            rf_qp_cmd *x = cross(p, bl, &at, acc, &f, leaf[l], l, NULL, c->loc);
            if (!x) return -1;
            acc = x->dst;
        }
    }
    if (!(c->outs = qp_alloc(p, (size_t)(c->nouts + 1) * sizeof *c->outs))) return -1;
    for (int32_t o = 0; o < c->nouts; o++)
        if (!(c->outs[o] = qp_e_copy(p, gouts[o])) || to_frame(c->outs[o], &f, last)) return -1;
    c->filter = framed(p, g + from, n - from, &f, last);
    if (from < n && !c->filter) return -1;
    c->in[0] = acc;
    c->in[1] = leaf[last];
    if (placed == all) made[(*nsteps)++] = c;
    if (at > at0) {
        if (note) bl->cmds[at0]->note = note;
    } else {
        c->note = note ? note : c->note;
    }
    *steps = made;
    return p->oom ? -1 : 1;
}
