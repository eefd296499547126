/*
** queryplan/pass_keyjoin.c: the "keyjoin" pass, joins on computed keys.
**
** Owns: turning an equality between expressions of the two sides of a join
** (`node'.0 = node.0 + 1`, `a.0 * 2 = b.0 - 1`) into a join key, so that a
** filtered cross product becomes an equi-join. Each side whose operand is
** not a plain column gets it as a new last column, computed by a command
** inserted before the join (a map, or a join with the other side's keys
** below; no new operator for the backends), and
** the join gets the key pair. The select pass has already made keys of the
** equalities between plain columns.
**
** Run-time errors stay those of the rule (docs/LANGUAGE.md, "Where such an
** error is raised"). The join evaluated the conjunct for every pair its keys
** matched, after the conjuncts before it. So only a conjunct that no
** conjunct that may fail precedes is taken, and one that may fail itself
** only as the first conjunct; an operand that may fail (int `x + 1` can
** overflow) is computed only for the rows of its side that some row of the
** other side meets on the join's keys so far: a semi-join with the distinct
** keys of the other side (with no keys yet, its existence test: the other
** side projected to no column and deduped, one empty row or none), so an
** empty other side raises nothing, as the cross product raised nothing.
** Where the other side is known to hold a row (the delta of a recursion of
** one predicate, inside its loop) and no keys come first, every row meets
** it: the value is computed for all, loop-invariant when its side is, so a
** recursion counting down (`d(x) <- d(y), e(x), y = x + 1.`) computes
** `x + 1` over e once, not once per round.
** The comparison's operands have one type (the front end inserts the
** casts), and a join key matches as `=` does (floats: -0.0 = 0.0, NaN =
** NaN, on every device). The pass runs after joinorder: a conjunct that may
** fail sits at the top join of its chain (it may not be evaluated before
** every atom has joined), and joinorder puts the chain's cross products
** last, so the top join is where the other inputs are already joined; keys
** made before it would split the chain with the maps, and joinorder could
** not reorder it. A chain of such keys through inputs that share nothing
** else is first split into one join per key (qp_keychain.c), each then
** rewritten here. The program option no_keyjoin (`--no-keyjoin`) turns it off.
*/
#include "qp_internal.h"

static int32_t index_of(const rf_qp_block *bl, const rf_qp_cmd *c)
{
    for (int32_t i = 0; i < bl->ncmds; i++)
        if (bl->cmds[i] == c) return i;
    return -1;
}

/* in with e (over side 0 of in) as a new last column, computed before
** command `at`; guard (the other side's distinct keys, matched on in's
** columns mine[0..nkeys)), when not NULL, keeps only the rows it meets.
** *at moves past the inserted commands. */
static rf_qp_rel *with_column(rf_qp_program *p, rf_qp_block *bl, int32_t *at, rf_qp_rel *in, rf_qp_expr *e,
                              rf_qp_rel *guard, const int32_t *mine, int32_t nkeys, rf_loc loc)
{
    int32_t n = in->ncols;
    rf_qp_rel *t = qp_temp_new(p, n + 1);
    rf_qp_cmd *c = qp_cmd_new(p, guard ? RF_QP_MAPJOIN : RF_QP_MAPFILTER, t, guard ? 2 : 1);
    if (!t || !c) return NULL;
    c->in[0] = in;
    if (guard) {
        c->in[1] = guard;
        c->nkeys = nkeys;
        c->lkeys = qp_ints(p, nkeys + 1);
        c->rkeys = qp_ints(p, nkeys + 1);
        if (!c->lkeys || !c->rkeys) return NULL;
        for (int32_t k = 0; k < nkeys; k++) {
            c->lkeys[k] = mine[k];
            c->rkeys[k] = k;
        }
    }
    c->outs = qp_alloc(p, (size_t)(n + 2) * sizeof *c->outs);
    if (!c->outs) return NULL;
    c->nouts = n + 1;
    for (int32_t i = 0; i < n; i++) {
        t->types[i] = in->types[i];
        t->colnames[i] = in->colnames[i];
        if (!(c->outs[i] = qp_e_col(p, 0, i, in->types[i]))) return NULL;
    }
    t->types[n] = e->type;
    c->outs[n] = e;
    c->loc = loc;
    qp_block_insert(p, bl, (*at)++, c);
    return p->oom ? NULL : t;
}

/* Whether r is known to hold a row before command `at` of bl: every edge into
** bl is a branch taken because r alone is non-empty (a recursion's loop over
** one predicate, entered and repeated while its delta has rows), and bl does
** not write r before `at`. */
static int known_nonempty(const rf_qp_program *p, const rf_qp_block *bl, int32_t at, const rf_qp_rel *r)
{
    int32_t edges = 0;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_term *t = &p->blocks[b]->term;
        int into = t->kind != RF_QP_T_HALT && t->target == bl->id;
        int other = t->kind == RF_QP_T_BRANCH && t->else_target == bl->id;
        if (!into && !other) continue;
        if (other || t->kind != RF_QP_T_BRANCH || t->nrels != 1 || t->rels[0] != r) return 0;
        edges++;
    }
    return edges > 0 && bl->id != 0 && !qp_written_between(bl, 0, at, r);
}

/* The side an operand reads (0 or 1), or -1 when it reads none or both. */
static int32_t only_side(const rf_qp_expr *e)
{
    unsigned s = qp_e_sides(e);
    return s == 1u ? 0 : s == 2u ? 1 : -1;
}

/* Whether conjunct x of join c can become a key: an equality of an operand
** of each side, not both plain columns (select's case). */
static int computed_key(const rf_qp_expr *x)
{
    if (x->kind != RF_QP_E_CMP || x->cmp != RF_CMP_EQ || x->nargs != 2) return 0;
    int32_t s0 = only_side(x->args[0]), s1 = only_side(x->args[1]);
    if (s0 < 0 || s1 < 0 || s0 == s1) return 0;
    return x->args[0]->kind != RF_QP_E_COL || x->args[1]->kind != RF_QP_E_COL;
}

/* Rewrites join bl->cmds[i] for its first conjunct that can become a key.
** 1: rewritten (try again), 0: nothing to do, -1: out of memory. */
static int rewrite_join(rf_qp_program *p, rf_qp_block *bl, int32_t i)
{
    rf_qp_cmd *c = bl->cmds[i];
    int32_t n;
    rf_qp_expr **conj = qp_e_conjuncts(p, c->filter, &n);
    if (!conj) return -1;
    int32_t safe = qp_e_safe_prefix(conj, n), k = -1;
    /* a conjunct that may fail only first; one that cannot, after none that may */
    for (int32_t j = 0; j < n && j <= safe && k < 0; j++)
        if (computed_key(conj[j]) && (j < safe || j == 0)) k = j;
    if (k < 0) return 0;
    rf_qp_expr *x = conj[k];
    rf_qp_expr *opd[2];
    opd[only_side(x->args[0])] = x->args[0];
    opd[only_side(x->args[1])] = x->args[1];
    /* the guards: each side's distinct keys so far, before either side changes */
    rf_qp_rel *guard[2] = {NULL, NULL};
    int32_t at = i;
    /* the rule's note goes to its first command */
    const char *note = c->note;
    c->note = NULL;
    for (int32_t s = 0; s < 2; s++) {
        if (opd[s]->kind == RF_QP_E_COL || !qp_e_may_fail(opd[s])) continue;
        /* the other side has a row (a loop's delta, with no keys yet): every
        ** row of this side meets one, and the value, computed for all, is
        ** loop-invariant when this side is (hoist then moves it out) */
        if (c->nkeys == 0 && known_nonempty(p, bl, i, c->in[1 - s])) continue;
        const int32_t *other = s == 0 ? c->rkeys : c->lkeys;
        if (!(guard[s] = qp_distinct_cols(p, bl, &at, c->in[1 - s], NULL, other, c->nkeys, c->loc))) return -1;
    }
    int32_t key[2];
    for (int32_t s = 0; s < 2; s++) {
        if (opd[s]->kind == RF_QP_E_COL) {
            key[s] = opd[s]->col;
            continue;
        }
        rf_qp_expr *e = qp_e_copy(p, opd[s]);
        if (!e) return -1;
        qp_e_set_side(e, s, 0);
        const int32_t *mine = s == 0 ? c->lkeys : c->rkeys;
        rf_qp_rel *t = with_column(p, bl, &at, c->in[s], e, guard[s], mine, c->nkeys, c->loc);
        if (!t) return -1;
        key[s] = t->ncols - 1;
        c->in[s] = t;
    }
    int32_t *lk = qp_ints(p, c->nkeys + 1), *rk = qp_ints(p, c->nkeys + 1);
    if (!lk || !rk) return -1;
    if (c->nkeys) {
        memcpy(lk, c->lkeys, (size_t)c->nkeys * sizeof *lk);
        memcpy(rk, c->rkeys, (size_t)c->nkeys * sizeof *rk);
    }
    if (bl->cmds[i] != c) bl->cmds[i]->note = note;
    else c->note = note;
    lk[c->nkeys] = key[0];
    rk[c->nkeys] = key[1];
    c->lkeys = lk;
    c->rkeys = rk;
    c->nkeys++;
    for (int32_t j = k; j + 1 < n; j++) conj[j] = conj[j + 1];
    c->filter = qp_e_and_n(p, NULL, conj, n - 1);
    return p->oom ? -1 : 1;
}

rf_status rf_qp_pass_keyjoin(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    if (p->no_keyjoin) return RF_OK;
    for (int32_t b = 0; b < p->nblocks && !p->oom; b++) {
        rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds && !p->oom; i++) {
            rf_qp_cmd *c = bl->cmds[i];
            if (c->op != RF_QP_MAPJOIN || !c->filter) continue;
            /* a chain of computed keys first becomes one join per key,
            ** each then rewritten below like any join; c may be one */
            rf_qp_cmd **steps = NULL;
            int32_t nsteps = 0;
            int r = qp_keychain_split(p, bl, i, &steps, &nsteps);
            for (int32_t s = 0; s < nsteps && r > 0; s++)
                if (steps[s] != c) r = rewrite_join(p, bl, index_of(bl, steps[s])) < 0 ? -1 : 1;
            if (r < 0) {
                p->oom = 1;
                break;
            }
            if (r > 0) {
                i = index_of(bl, c) - 1; /* c again: another chain may follow */
                continue;
            }
            while ((r = rewrite_join(p, bl, index_of(bl, c))) > 0 && c->filter) {
            }
            if (r < 0) p->oom = 1;
            i = index_of(bl, c); /* past the commands inserted before it */
        }
    }
    return p->oom ? RF_ENOMEM : RF_OK;
}
