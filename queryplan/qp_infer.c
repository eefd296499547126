/*
** queryplan/qp_infer.c: the properties of relations, inferred from the
** commands that write them.
**
** Owns: estimated cardinalities (inputs unknown -> RF_QP_DEFAULT_INPUT_CARD,
** facts exact, joins and filters by simple selectivities), uniqueness (which
** lets the "unique" pass drop needless dedupes), keys, functional
** dependencies and known sort order. Estimates only steer join ordering, so
** they are simple and deterministic rather than clever; uniqueness, keys and
** dependencies decide which dedupes run, so they are only ever claimed when
** they provably hold (a wrong one keeps duplicates in a result).
**
** Functional dependencies start at declared keys (a key determines every
** column of its relation) and are carried through maps and joins by the
** columns that reproduce them: in a join, a row of one side is paired with
** rows of the other, and each output column copied from a side (or from the
** other side's column it is joined with) keeps its values, so every
** dependency of a side holds of the output when its left-hand columns are
** reproduced. After a dedupe, the whole row is a key, which the dependencies
** shrink (a column the rest determine adds nothing to a key).
*/
#include "qp_internal.h"

#include <stdlib.h>

#define CARD_MAX 4.0e18 /* below INT64_MAX, so products saturate safely */

static double selectivity(const rf_qp_expr *e)
{
    if (!e) return 1.0;
    switch (e->kind) {
    case RF_QP_E_AND: {
        double s = 1.0;
        for (int32_t i = 0; i < e->nargs; i++) s *= selectivity(e->args[i]);
        return s;
    }
    case RF_QP_E_CMP:
        switch (e->cmp) {
        case RF_CMP_EQ: return 0.1;
        case RF_CMP_NE: return 0.9;
        default: return 1.0 / 3.0;
        }
    case RF_QP_E_LIKE: return 0.25;
    case RF_QP_E_NOT: {
        double s = 1.0 - selectivity(e->args[0]);
        return s < 0.1 ? 0.1 : s;
    }
    case RF_QP_E_CONST: return e->c.i ? 1.0 : 0.0;
    default: return 0.5;
    }
}

/* The columns 0..ncols-1 that lie below 64, as a column set. */
static uint64_t low_cols(int32_t ncols)
{
    return ncols <= 0 ? 0 : ncols >= 64 ? UINT64_MAX : (UINT64_C(1) << ncols) - 1;
}

/* Whether output o reproduces column k of side s as a plain column, directly
** or through a join key equal to a column of the other side (a join only
** pairs rows whose keys are equal). */
static int copies(const rf_qp_cmd *c, int32_t o, int32_t s, int32_t k)
{
    if (qp_e_is_col(c->outs[o], s, k)) return 1;
    for (int32_t j = 0; j < c->nkeys && c->op == RF_QP_MAPJOIN; j++) {
        int32_t mine = s == 0 ? c->lkeys[j] : c->rkeys[j], other = s == 0 ? c->rkeys[j] : c->lkeys[j];
        if (mine == k && qp_e_is_col(c->outs[o], 1 - s, other)) return 1;
    }
    return 0;
}

/* The output column that reproduces column k of side s; -1 when none does. */
static int32_t out_of(const rf_qp_cmd *c, int32_t s, int32_t k)
{
    for (int32_t o = 0; o < c->nouts; o++)
        if (copies(c, o, s, k)) return o;
    return -1;
}

/* Every output column (below 64) that reproduces one of the columns cols of
** side s. */
static uint64_t copies_of(const rf_qp_cmd *c, int32_t s, uint64_t cols)
{
    uint64_t r = 0;
    for (int32_t o = 0; o < c->nouts && o < 64; o++)
        for (int32_t k = 0; k < 64 && !(r >> o & 1); k++)
            if ((cols >> k & 1) && copies(c, o, s, k)) r |= UINT64_C(1) << o;
    return r;
}

/* The columns that the columns x determine in a relation of ncols columns
** with the row key keyset (0: none), the leading key nkeys (-1: none) and the
** dependencies fds: x closed under them (a key determines every column). */
static uint64_t closure(uint64_t keyset, int32_t nkeys, const rf_qp_fd *fds, int32_t nfds, int32_t ncols, uint64_t x)
{
    uint64_t all = low_cols(ncols), prefix = nkeys >= 0 ? low_cols(nkeys) : 0;
    for (;;) {
        uint64_t y = x;
        if (keyset && !(keyset & ~y)) y |= all;
        if (nkeys >= 0 && nkeys <= 64 && !(prefix & ~y)) y |= all;
        for (int32_t i = 0; i < nfds; i++)
            if (!(fds[i].lhs & ~y)) y |= fds[i].rhs;
        if (y == x) return x;
        x = y;
    }
}

static uint64_t rel_closure(const rf_qp_rel *r, uint64_t x)
{
    return closure(r->keyset, r->nkeys, r->fds, r->nfds, r->ncols, x);
}

/* The output columns that reproduce the columns `cols` of side s, as a
** column set; 0 when one of them is not reproduced (or lies past 64). */
static uint64_t map_keyset(const rf_qp_cmd *c, int32_t s, uint64_t cols)
{
    uint64_t r = 0;
    for (int32_t k = 0; k < 64; k++) {
        if (!(cols >> k & 1)) continue;
        int32_t o = out_of(c, s, k);
        if (o < 0 || o >= 64) return 0;
        r |= UINT64_C(1) << o;
    }
    return r;
}

/* Whether column k of side s is known from the output row: reproduced by
** an output, or (fixed, a set of side-s columns) already known. */
static int known_col(const rf_qp_cmd *c, int32_t s, int32_t k, uint64_t fixed)
{
    if (k < 64 && (fixed >> k & 1)) return 1;
    return k < c->in[s]->ncols && out_of(c, s, k) >= 0;
}

/* The columns of side s below 64 that every row passing c's filter has
** known from its output row: those reproduced, those a top-level conjunct
** equates with a constant (`p(1, x)`) and those it equates with a known
** column (a repeated variable, `p(x, x)`). Rows that give one output row
** agree on all of them. Floats are left out: -0.0 and 0.0 are equal but
** distinct values, as are two NaNs that no comparison equates. */
static uint64_t known_cols(const rf_qp_cmd *c, int32_t s)
{
    const rf_qp_rel *in = c->in[s];
    uint64_t fixed = 0;
    for (int32_t k = 0; k < in->ncols && k < 64; k++)
        if (out_of(c, s, k) >= 0) fixed |= UINT64_C(1) << k;
    const rf_qp_expr *f = c->filter;
    if (!f || c->op == RF_QP_AGGREGATE) return fixed;
    const rf_qp_expr *const *conj = f->kind == RF_QP_E_AND ? (const rf_qp_expr *const *)f->args : &f;
    int32_t n = f->kind == RF_QP_E_AND ? f->nargs : 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t i = 0; i < n; i++) {
            const rf_qp_expr *e = conj[i];
            if (e->kind != RF_QP_E_CMP || e->cmp != RF_CMP_EQ || e->nargs != 2) continue;
            for (int32_t a = 0; a < 2; a++) {
                const rf_qp_expr *x = e->args[a], *y = e->args[1 - a];
                if (x->kind != RF_QP_E_COL || x->side != s || x->col >= 64 || (fixed >> x->col & 1) ||
                    x->type == RF_TYPE_FLOAT)
                    continue;
                int known = y->kind == RF_QP_E_CONST ||
                            (y->kind == RF_QP_E_COL && y->side >= 0 && y->side < c->nin &&
                             known_col(c, y->side, y->col, y->side == s ? fixed : 0));
                if (known) {
                    fixed |= UINT64_C(1) << x->col;
                    changed = 1;
                }
            }
        }
    }
    return fixed;
}

/* Whether every column of side s (or its leading key columns, or its row
** key, when the relation has one) is known from the outputs: then
** distinct rows of s give distinct output rows. */
static int covers(const rf_qp_cmd *c, int32_t s)
{
    const rf_qp_rel *in = c->in[s];
    if (in->keyset && map_keyset(c, s, in->keyset)) return 1;
    if (in->ncols <= 64) {
        /* the known columns determine the rest: two rows that give one
        ** output row agree on every column */
        uint64_t seen = known_cols(c, s);
        if (rel_closure(in, seen) == low_cols(in->ncols)) return 1;
    }
    int32_t need = in->nkeys >= 0 ? in->nkeys : in->ncols;
    for (int32_t k = 0; k < need; k++)
        if (out_of(c, s, k) < 0) return 0;
    return 1;
}

/* Whether the join keys of side s include all the columns of cols. */
static int joined_on(const rf_qp_cmd *c, int32_t s, uint64_t cols)
{
    for (int32_t k = 0; k < 64; k++) {
        if (!(cols >> k & 1)) continue;
        int found = 0;
        for (int32_t j = 0; j < c->nkeys && !found; j++) found = (s == 0 ? c->lkeys[j] : c->rkeys[j]) == k;
        if (!found) return 0;
    }
    return 1;
}

/* Whether the join matches each row of side 1-s with at most one row of
** side s: the join keys include all of side s's key columns (its leading
** key or its row key). */
static int key_joined(const rf_qp_cmd *c, int32_t s)
{
    const rf_qp_rel *in = c->in[s];
    if (in->keyset && joined_on(c, s, in->keyset)) return 1;
    if (in->unique && in->ncols <= 64) {
        /* the joined columns determine the rest, and rows are distinct: no two
        ** rows agree on the joined columns */
        uint64_t joined = 0;
        for (int32_t j = 0; j < c->nkeys; j++) {
            int32_t k = s == 0 ? c->lkeys[j] : c->rkeys[j];
            if (k < 64) joined |= UINT64_C(1) << k;
        }
        if (rel_closure(in, joined) == low_cols(in->ncols)) return 1;
    }
    if (in->nkeys < 0) return 0;
    for (int32_t k = 0; k < in->nkeys; k++) {
        int found = 0;
        for (int32_t j = 0; j < c->nkeys && !found; j++) found = (s == 0 ? c->lkeys[j] : c->rkeys[j]) == k;
        if (!found) return 0;
    }
    return 1;
}

int qp_key_joined(const rf_qp_cmd *c, int32_t s) { return key_joined(c, s); }

typedef struct props {
    double card;
    int exact, unique;
    uint64_t keyset;
    int32_t nkeys;
    int32_t nsort;
    rf_fe_order *sort;
    int32_t nfds;
    rf_qp_fd fds[RF_QP_MAX_FDS];
} props;

/* Records lhs -> rhs (output columns); trivial parts are left out, and a
** dependency past the room is forgotten (that only loses precision). */
static void add_fd(props *r, uint64_t lhs, uint64_t rhs)
{
    rhs &= ~lhs;
    if (!lhs || !rhs) return;
    for (int32_t i = 0; i < r->nfds; i++)
        if (r->fds[i].lhs == lhs) {
            r->fds[i].rhs |= rhs;
            return;
        }
    if (r->nfds < RF_QP_MAX_FDS) r->fds[r->nfds++] = (rf_qp_fd){lhs, rhs};
}

/* lhs -> rhs of side s, as output columns: it holds of the output when every
** column of lhs is reproduced (two output rows that agree there come from
** side-s rows that agree on lhs, hence on rhs); what of rhs is reproduced is
** determined. */
static void carry_fd(const rf_qp_cmd *c, int32_t s, uint64_t lhs, uint64_t rhs, props *r)
{
    uint64_t l = lhs ? map_keyset(c, s, lhs) : 0;
    if (l) add_fd(r, l, copies_of(c, s, rhs));
}

/* The dependencies of side s (its own, and its keys, which determine all of
** its columns) carried to the outputs. */
static void carry_fds(const rf_qp_cmd *c, int32_t s, props *r)
{
    const rf_qp_rel *in = c->in[s];
    for (int32_t i = 0; i < in->nfds; i++) carry_fd(c, s, in->fds[i].lhs, in->fds[i].rhs, r);
    if (in->keyset) carry_fd(c, s, in->keyset, low_cols(in->ncols), r);
    if (in->nkeys > 0 && in->nkeys <= 64) carry_fd(c, s, low_cols(in->nkeys), low_cols(in->ncols), r);
}

/* The same relation's dependencies, for commands whose rows are rows of
** their input (dedupes, copies, differences, order-and-limit). */
static void keep_fds(const rf_qp_rel *a, props *r)
{
    r->nfds = a->nfds;
    for (int32_t i = 0; i < a->nfds; i++) r->fds[i] = a->fds[i];
}

/* A key of a duplicate-free relation of ncols columns within the columns
** key, made minimal: a column goes when the others still determine it. The
** last columns go first, so that leading ones stay. */
static uint64_t shrink_key(const props *r, int32_t ncols, uint64_t key)
{
    for (int32_t k = 63; k >= 0; k--) {
        uint64_t rest = key & ~(UINT64_C(1) << k);
        if ((key >> k & 1) && (closure(r->keyset, r->nkeys, r->fds, r->nfds, ncols, rest) >> k & 1)) key = rest;
    }
    return key;
}

static props cmd_props(const rf_qp_cmd *c)
{
    props r = {.unique = 1, .nkeys = -1};
    const rf_qp_rel *a = c->nin > 0 ? c->in[0] : NULL, *b = c->nin > 1 ? c->in[1] : NULL;
    double ca = a ? (double)a->card : 0, cb = b ? (double)b->card : 0;
    switch (c->op) {
    case RF_QP_MAPFILTER:
        r.card = ca * selectivity(c->filter);
        if (r.card < 1 && ca >= 1 && c->filter) r.card = 1;
        r.unique = a->unique && covers(c, 0);
        r.keyset = map_keyset(c, 0, a->keyset);
        if (a->nkeys >= 0 && c->nouts >= a->nkeys) {
            int prefix = 1;
            for (int32_t k = 0; k < a->nkeys && prefix; k++) prefix = qp_e_is_col(c->outs[k], 0, k);
            if (prefix) r.nkeys = a->nkeys;
        }
        r.exact = a->card_exact && !c->filter;
        carry_fds(c, 0, &r);
        break;
    case RF_QP_MAPJOIN:
        if (c->nkeys == 0) r.card = ca * cb;
        else if (key_joined(c, 1)) r.card = ca;
        else if (key_joined(c, 0)) r.card = cb;
        else r.card = ca > cb ? ca : cb;
        r.card *= selectivity(c->filter);
        if (r.card < 1 && ca >= 1 && cb >= 1) r.card = 1;
        r.unique = (a->unique && b->unique && covers(c, 0) && covers(c, 1)) ||
                   (a->unique && key_joined(c, 1) && covers(c, 0)) ||
                   (b->unique && key_joined(c, 0) && covers(c, 1));
        /* a row key of one side stays one when each of its rows meets at
        ** most one row of the other; the two together always are one */
        if (key_joined(c, 1)) r.keyset = map_keyset(c, 0, a->keyset);
        if (!r.keyset && key_joined(c, 0)) r.keyset = map_keyset(c, 1, b->keyset);
        if (!r.keyset && a->keyset && b->keyset) {
            uint64_t ka = map_keyset(c, 0, a->keyset), kb = map_keyset(c, 1, b->keyset);
            if (ka && kb) r.keyset = ka | kb;
        }
        carry_fds(c, 0, &r);
        carry_fds(c, 1, &r);
        break;
    case RF_QP_ANTIJOIN:
        r.card = ca;
        r.unique = a->unique && covers(c, 0);
        r.keyset = map_keyset(c, 0, a->keyset);
        carry_fds(c, 0, &r);
        break;
    case RF_QP_AGGREGATE:
        r.card = c->ngroup == 0 ? 1 : ca / 10 < 1 ? (ca > 0 ? 1 : 0) : ca / 10;
        if (c->ngroup > 0 && a->nkeys == c->ngroup) {
            /* grouped by its input's key, as the partial aggregate before it
            ** (pass partagg) leaves it: a group per row */
            int by_key = 1;
            for (int32_t i = 0; i < c->ngroup && by_key; i++) by_key = c->group[i] == i;
            if (by_key) r.card = ca;
        }
        r.nkeys = c->ngroup;
        if (c->ngroup > 0 && c->ngroup <= 64) r.keyset = c->ngroup == 64 ? UINT64_MAX : (UINT64_C(1) << c->ngroup) - 1;
        break;
    case RF_QP_UNION:
        for (int32_t i = 0; i < c->nin; i++) r.card += (double)c->in[i]->card;
        break;
    case RF_QP_DIFFERENCE:
        r.card = ca;
        r.keyset = a->keyset;
        keep_fds(a, &r);
        break;
    case RF_QP_UNIQUE:
        /* no order promised: a hash-based dedupe is as valid as a sort */
        r.card = ca;
        r.exact = a->card_exact && a->unique;
        r.keyset = a->keyset;
        r.nkeys = a->nkeys;
        keep_fds(a, &r);
        /* the whole row is a key now; the dependencies may make it smaller */
        if (a->ncols <= 64) {
            uint64_t all = low_cols(a->ncols), k = shrink_key(&r, a->ncols, r.keyset ? r.keyset : all);
            if (k != all && k) r.keyset = k;
        }
        break;
    case RF_QP_COPY:
        r.card = ca;
        r.exact = a->card_exact;
        r.unique = a->unique;
        r.keyset = a->keyset;
        r.nkeys = a->nkeys;
        r.nsort = a->nsort;
        r.sort = a->sort;
        keep_fds(a, &r);
        break;
    case RF_QP_FACTS:
        r.card = (double)c->nrows;
        r.exact = 1;
        r.nsort = c->dst->ncols;
        r.sort = NULL; /* all columns ascending: filled by the caller */
        break;
    case RF_QP_CLEAR:
        r.card = 0;
        r.exact = 1;
        break;
    case RF_QP_ORDERLIMIT:
        r.card = c->limit >= 0 && (double)c->limit < ca ? (double)c->limit : ca;
        r.exact = a->card_exact;
        r.unique = a->unique;
        r.keyset = a->keyset;
        r.nsort = c->norder;
        r.sort = c->order;
        keep_fds(a, &r);
        break;
    case RF_QP_LFTJ:
        /* distinct bindings; a guess: as many as the largest input has rows */
        for (int32_t i = 0; i < c->nin; i++)
            if ((double)c->in[i]->card > r.card) r.card = (double)c->in[i]->card;
        r.card *= selectivity(c->filter);
        if (r.card < 1 && c->nin) r.card = 1;
        break;
    }
    /* a set without columns holds the empty row or nothing (existence tests) */
    if (r.unique && c->dst->ncols == 0 && r.card > 1) r.card = 1;
    /* a dependency whose left-hand side holds the row key says nothing more */
    int32_t nfds = 0;
    for (int32_t i = 0; i < r.nfds; i++)
        if (!r.keyset || (r.keyset & ~r.fds[i].lhs)) r.fds[nfds++] = r.fds[i];
    r.nfds = nfds;
    if (r.card > CARD_MAX) r.card = CARD_MAX;
    if (r.card < 0) r.card = 0;
    return r;
}

static int same_fds(const rf_qp_rel *r, const props *x)
{
    if (r->nfds != x->nfds) return 0;
    for (int32_t i = 0; i < r->nfds; i++)
        if (r->fds[i].lhs != x->fds[i].lhs || r->fds[i].rhs != x->fds[i].rhs) return 0;
    return 1;
}

static void set_fds(rf_qp_rel *r, const props *x)
{
    r->nfds = x->nfds;
    for (int32_t i = 0; i < x->nfds; i++) r->fds[i] = x->fds[i];
}

static int same_sort(const rf_qp_rel *r, const props *x)
{
    if (r->nsort != x->nsort) return 0;
    for (int32_t i = 0; i < r->nsort; i++)
        if (r->sort[i].col != x->sort[i].col || r->sort[i].desc != x->sort[i].desc) return 0;
    return 1;
}

void rf_qp_infer(rf_qp_program *p)
{
    if (p->oom) return;
    uint8_t *seen = rf_calloc((size_t)p->nrels + 1, 1);
    if (!seen) {
        p->oom = 1;
        return;
    }
    for (int32_t i = 0; i < p->nrels; i++) {
        rf_qp_rel *r = p->rels[i];
        r->nsort = 0;
        r->sort = NULL;
        r->card_exact = 0;
        r->keyset = 0;
        r->nfds = 0;
        if (r->kind == RF_QP_REL_INPUT) {
            r->card = RF_QP_DEFAULT_INPUT_CARD;
            r->unique = p->inputs_are_sets;
            /* a declared key (the loader rejects a file that breaks it) */
            if (r->ninput_key > 0) {
                r->unique = 1;
                for (int32_t k = 0; k < r->ninput_key; k++)
                    r->keyset |= r->input_key[k] < 64 ? UINT64_C(1) << r->input_key[k] : 0;
                for (int32_t k = 0; k < r->ninput_key; k++)
                    if (r->input_key[k] >= 64) r->keyset = 0; /* not expressible: no row key */
            }
        } else {
            r->card = 0;
            r->unique = 1; /* optimistic; writers lower it */
        }
        if (!r->fd_checked) r->nkeys = -1;
    }
    /* a few rounds, so that reads inside loops see the loop's writes;
    ** estimates of recursive relations stay rough on purpose */
    for (int round = 0; round < 3; round++) {
        memset(seen, 0, (size_t)p->nrels);
        for (int32_t b = 0; b < p->nblocks; b++) {
            const rf_qp_block *bl = p->blocks[b];
            for (int32_t i = 0; i < bl->ncmds; i++) {
                const rf_qp_cmd *c = bl->cmds[i];
                rf_qp_rel *d = c->dst;
                props x = cmd_props(c);
                if (c->op == RF_QP_FACTS && d->ncols) {
                    rf_fe_order *o = qp_alloc(p, (size_t)d->ncols * sizeof *o);
                    if (o)
                        for (int32_t j = 0; j < d->ncols; j++) o[j] = (rf_fe_order){j, 0};
                    x.sort = o;
                    if (!o) x.nsort = 0;
                } else if (c->op == RF_QP_FACTS) {
                    x.nsort = 0;
                }
                /* a recursive relation grows round by round from rows of several
                ** rules: no dependency is claimed for it, nor a key made from one */
                if (d->pred && d->pred->recursive) {
                    x.nfds = 0;
                    if (c->op == RF_QP_UNIQUE) x.keyset = c->in[0]->keyset;
                }
                int64_t card = (int64_t)x.card;
                if (!seen[d->id]) {
                    seen[d->id] = 1;
                    d->card = card;
                    d->card_exact = x.exact;
                    if (round == 0 || d->kind == RF_QP_REL_TEMP) d->unique = x.unique;
                    else d->unique = d->unique && x.unique;
                    d->nsort = x.nsort;
                    d->sort = x.sort;
                    if (round == 0 || d->kind == RF_QP_REL_TEMP || d->keyset == x.keyset) d->keyset = x.keyset;
                    else d->keyset = 0;
                    if (round == 0 || d->kind == RF_QP_REL_TEMP || same_fds(d, &x)) set_fds(d, &x);
                    else d->nfds = 0;
                    if (!d->fd_checked) d->nkeys = x.nkeys;
                } else {
                    /* another write of the same relation (loops, FD checks) */
                    if (c->op == RF_QP_UNIQUE && c->in[0] == d) {
                        d->unique = 1;
                        continue;
                    }
                    /* a recursive relation keeps the estimate of its first write: the
                    ** loop's rounds would only inflate it, and its deltas should look
                    ** as small as they usually are next to the full relations */
                    int recursive = d->pred && d->pred->recursive && d->kind != RF_QP_REL_OUTPUT;
                    if (card > d->card && !recursive) d->card = card;
                    d->card_exact = 0;
                    d->unique = d->unique && x.unique;
                    if (d->keyset != x.keyset) d->keyset = 0;
                    if (!same_fds(d, &x)) d->nfds = 0;
                    if (!same_sort(d, &x)) {
                        d->nsort = 0;
                        d->sort = NULL;
                    }
                    if (!d->fd_checked && d->nkeys != x.nkeys) d->nkeys = -1;
                }
            }
        }
    }
    free(seen);
}
