/*
** runtime/dist/dist_place.c: where each variable's rows are, and which moves
** a kernel needs before it runs.
**
** Owns: the placement of every variable (rf_rt_place: empty, spread, hashed
** by columns, on rank 0, replicated), the rules that make a kernel's inputs
** co-located (a join's sides hashed by their keys, a group by a subset of
** its columns, nothing for a partial aggregate's group, a dedupe, difference or insert by the whole tuple; a cross
** product or a negation broadcasts its right side; sorts and global
** aggregates gather on rank 0; a join's broadcast weighed by bytes, with
** the moves the rest of the block needs after it), and the placement of
** each kernel's output, followed through projections so that a relation
** hashed once stays so.
** Every rank computes the same placements from the same program: the plan
** needs no communication. Moves are done by dist_run.c.
*/
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

static rf_rt_place place_of(rf_rt_place_kind k)
{
    rf_rt_place p;
    memset(&p, 0, sizeof p);
    p.kind = k;
    return p;
}

static rf_rt_place hash_of(const int32_t *cols, int32_t n)
{
    rf_rt_place p = place_of(RF_RT_PLACE_HASH);
    if (n > RF_RT_PLACE_MAXCOLS) n = RF_RT_PLACE_MAXCOLS; /* hashed by a prefix: still co-located */
    p.ncols = n;
    for (int32_t i = 0; i < n; i++) p.cols[i] = cols[i];
    return p;
}

static rf_rt_place hash_all(int32_t ncols)
{
    int32_t cols[RF_RT_PLACE_MAXCOLS];
    int32_t n = ncols < RF_RT_PLACE_MAXCOLS ? ncols : RF_RT_PLACE_MAXCOLS;
    for (int32_t i = 0; i < n; i++) cols[i] = i;
    return hash_of(cols, n);
}

static int place_eq(const rf_rt_place *a, const rf_rt_place *b)
{
    if (a->kind != b->kind) return 0;
    if (a->kind != RF_RT_PLACE_HASH) return 1;
    if (a->ncols != b->ncols) return 0;
    for (int32_t i = 0; i < a->ncols; i++)
        if (a->cols[i] != b->cols[i]) return 0;
    return 1;
}

/* Whether hashed rows are co-located for a kernel that needs rows equal on
** cols to meet: the hash columns are a subset of cols. */
static int hash_within(const rf_rt_place *p, const int32_t *cols, int32_t n)
{
    if (p->kind != RF_RT_PLACE_HASH || p->ncols == 0) return 0;
    for (int32_t i = 0; i < p->ncols; i++) {
        int in = 0;
        for (int32_t j = 0; j < n && !in; j++) in = cols[j] == p->cols[i];
        if (!in) return 0;
    }
    return 1;
}

static void add_move(rf_rt_dist_move *moves, int32_t *n, int32_t var, rf_rt_place to)
{
    for (int32_t i = 0; i < *n; i++)
        if (moves[i].var == var) {
            moves[i].to = to;
            return;
        }
    moves[*n].var = var;
    moves[*n].to = to;
    moves[*n].cut = NULL;
    (*n)++;
}

/* var hashed exactly by cols (a join key: both sides must agree on order). */
static void need_hash(rf_rt_dist *x, int32_t var, const int32_t *cols, int32_t n, rf_rt_dist_move *moves, int32_t *nm)
{
    rf_rt_place want = hash_of(cols, n);
    const rf_rt_place *p = &x->vars[var].place;
    if (p->kind == RF_RT_PLACE_EMPTY || place_eq(p, &want)) return;
    add_move(moves, nm, var, want);
}

/* var's rows that agree on cols on one rank: any hash within cols will do. */
static void need_within(rf_rt_dist *x, int32_t var, const int32_t *cols, int32_t n, rf_rt_dist_move *moves,
                        int32_t *nm)
{
    const rf_rt_place *p = &x->vars[var].place;
    if (p->kind == RF_RT_PLACE_EMPTY || p->kind == RF_RT_PLACE_ROOT || p->kind == RF_RT_PLACE_REPL ||
        hash_within(p, cols, n))
        return;
    add_move(moves, nm, var, hash_of(cols, n));
}

/* Where rows co-located by their whole tuple go for set: its preferred hash
** (a recursive set's, dist_place_prepare), else all of its columns. */
static rf_rt_place tuple_place(const rf_rt_dist *x, int32_t set)
{
    if (x->vars[set].pref.kind == RF_RT_PLACE_HASH) return x->vars[set].pref;
    return hash_all(x->p->vars[set]->ncols);
}

/* var's equal tuples on one rank, to become set's rows. */
static void need_tuple(rf_rt_dist *x, int32_t var, int32_t set, rf_rt_dist_move *moves, int32_t *nm)
{
    const rf_rt_place *p = &x->vars[var].place;
    if (p->kind == RF_RT_PLACE_HASH || p->kind == RF_RT_PLACE_EMPTY || p->kind == RF_RT_PLACE_ROOT ||
        p->kind == RF_RT_PLACE_REPL)
        return;
    add_move(moves, nm, var, tuple_place(x, set));
}

static void need_kind(rf_rt_dist *x, int32_t var, rf_rt_place_kind k, rf_rt_dist_move *moves, int32_t *nm)
{
    const rf_rt_place *p = &x->vars[var].place;
    if (p->kind == RF_RT_PLACE_EMPTY || p->kind == k) return;
    add_move(moves, nm, var, place_of(k));
}

static rf_rt_place_kind kind_of(const rf_rt_dist *x, int32_t var) { return x->vars[var].place.kind; }

/* The bytes a row of var takes in a move: its columns' widths, a string
** column at its code's (4) when var holds codes every rank shares, else at
** its length and bytes (own_len: the rank's own strings' mean length). */
static int64_t row_bytes(const rf_rt_dist *x, int32_t var, int64_t own_len)
{
    const rf_hir_var *v = x->p->vars[var];
    int64_t b = 0;
    for (int32_t c = 0; c < v->ncols; c++)
        b += v->types[c] != RF_TYPE_STRING        ? rf_rt_type_width(v->types[c])
             : rf_rt_dist_codes_shared(x, var) ? 4
                                                 : 4 + own_len;
    return b;
}

/* ---- a join's broadcast, weighed with what follows ------------------------ */

/* Later moves of relations that exist already (at most LATER_MAX). */
#define LATER_MAX 32
typedef struct later {
    int32_t var[LATER_MAX];
    rf_rt_place_kind to[LATER_MAX];
    int32_t n;
    int full; /* more: not weighed */
} later;

/* The moves the rest of the walk's block needs once kernel k has run with
** its moves mv[0..nmv) made: planned ahead on a copy of the placements, as
** rf_rt_dist_span_still plans (no messages; a join there hashes its sides).
** Into *out go those that send rows (not out of a replicated relation, not
** a spread one left spread) of a variable that no kernel on the way writes:
** its rows exist now, so the ranks can vote their bytes. A later join that
** would weigh a broadcast itself is planned as hashing its sides, but its
** moves are not counted: it may broadcast a side made later instead (TPC-H
** q14: the non-promotion parts, against the month's lines hashed). */
static void plan_later(rf_rt_dist *x, const rf_hir_kernel *k, const rf_rt_dist_move *mv, int32_t nmv, later *out)
{
    memset(out, 0, sizeof *out);
    const rf_hir_block *bl = x->at_block;
    int32_t nvars = x->p->nvars;
    size_t size = ((size_t)nvars + 1) * sizeof *x->vars;
    int32_t maxin = 0;
    for (int32_t j = x->at_j + 1; j < bl->nkernels; j++)
        if (bl->kernels[j]->nin > maxin) maxin = bl->kernels[j]->nin;
    dist_var *saved = rf_malloc(size);
    uint8_t *written = rf_calloc((size_t)nvars + 1, 1);
    rf_rt_dist_move *moves = rf_calloc((size_t)maxin * 2 + 3, sizeof *moves);
    if (!saved || !written || !moves) {
        out->full = 1;
        free(saved);
        free(written);
        free(moves);
        return;
    }
    memcpy(saved, x->vars, size);
    x->dry = 1;
    for (int32_t i = 0; i < nmv; i++) {
        x->vars[mv[i].var].place = mv[i].to;
        x->vars[mv[i].var].gen++;
    }
    rf_rt_dist_ran(x, k);
    if (k->out >= 0 && k->out < nvars) written[k->out] = 1;
    for (int32_t j = x->at_j + 1; j < bl->nkernels; j++) {
        const rf_hir_kernel *kk = bl->kernels[j];
        int32_t n = 0;
        x->dry_weighed = 0;
        if (rf_rt_dist_plan(x, kk, NULL, moves, &n, NULL)) break;
        for (int32_t i = 0; i < n; i++) {
            const rf_rt_dist_move *m = &moves[i];
            rf_rt_place_kind from = x->vars[m->var].place.kind;
            if (!written[m->var] && !x->dry_weighed && from != RF_RT_PLACE_REPL && from != RF_RT_PLACE_EMPTY &&
                m->to.kind != RF_RT_PLACE_ANY) {
                if (out->n == LATER_MAX) out->full = 1;
                else {
                    out->var[out->n] = m->var;
                    out->to[out->n++] = m->to.kind;
                }
            }
            x->vars[m->var].place = m->to;
            x->vars[m->var].gen++;
        }
        rf_rt_dist_ran(x, kk);
        if (kk->out >= 0 && kk->out < nvars) written[kk->out] = 1;
    }
    x->dry = 0;
    memcpy(x->vars, saved, size);
    free(saved);
    free(written);
    free(moves);
}

/* What a move of B bytes (all ranks') to a placement of kind `to` sends,
** times N: a broadcast B * (N - 1) (each rank its rows to every other),
** a hash or a gather about B * (N - 1) / N. */
static int64_t sent_n(int64_t bytes, rf_rt_place_kind to, int64_t n)
{
    return to == RF_RT_PLACE_REPL ? bytes * n * (n - 1) : bytes * (n - 1);
}

/* A join with a side to move (moved: 0 or 1; -1 both): the ranks vote
** their sides' bytes (rows times row_bytes: a string that cannot move as a
** shared code counts at its bytes; summed, every rank decides alike), and
** a small side is broadcast instead when that sends fewer bytes. A
** broadcast of S bytes sends S * (N - 1), hashing M bytes about M * (N -
** 1) / N:
** - a side that later rounds of a loop read unchanged (a recursive rule's
**   edges), when the other side would move: once, instead of the other
**   side moving every round;
** - both sides would move: either one instead (the large side stays where
**   it is), one side would move: the other, staying one (TPC-H q18's 4
**   orders of large quantities broadcast instead of every order hashed;
**   q10's 16-byte revenues per customer instead of the customers with
**   their names, addresses and comments, plain strings that move as
**   bytes). Each choice is weighed with the moves the rest of the block
**   then needs of relations that exist already (plan_later; their bytes
**   ride in the same vote): a broadcast leaves the join's output spread
**   where hashing the sides leaves it hashed by the key, and what follows
**   may have to move again (TPC-H q13: customer broadcast to count its
**   orders made the antijoin of customers without orders broadcast every
**   counted order, the counts hashed and the union hashed again: 6 moves
**   where hashing customer and the orders once takes 3).
** At most rank_broadcast_bytes either way. */
static rf_status broadcast_small(rf_rt_dist *x, const rf_hir_kernel *k, const int64_t *rows, rf_rt_dist_move *moves,
                                 int32_t *nm, int moved, rf_diags *d)
{
    if (x->broadcast_bytes <= 0) return RF_OK; /* never broadcast: nothing to vote on */
    int64_t own_len = dist_codes_own_len(x), N = x->size;
    int right_only = k->kind == RF_HIR_ANTI_INDEX; /* a negation's left rows must stay */
    /* the choices: 0 the moves planned (hashes), 1 + s side s broadcast */
    int can[3] = {1, moved < 0 ? !right_only : moved == 1 && !right_only, moved < 0 || moved == 0};
    later lt[3];
    memset(lt, 0, sizeof lt);
    int ahead = x->at_block && x->rows_of && x->at_j >= 0 &&
                x->at_j < x->at_block->nkernels && x->at_block->kernels[x->at_j] == k;
    /* the variables whose bytes the vote carries: the sides, then the
    ** later moves' (when they fit) */
    int32_t slot_var[RF_RT_DIST_VOTE_N] = {k->in[0], k->in[1]};
    int nslot = 2;
    for (int c = 0; c < 3 && ahead; c++) {
        if (!can[c]) continue;
        rf_rt_dist_move bm;
        memset(&bm, 0, sizeof bm);
        bm.var = c ? k->in[c - 1] : -1;
        bm.to = place_of(RF_RT_PLACE_REPL);
        plan_later(x, k, c ? &bm : moves, c ? 1 : *nm, &lt[c]);
        ahead = !lt[c].full;
        for (int32_t i = 0; i < lt[c].n && ahead; i++) {
            int s = 0;
            while (s < nslot && slot_var[s] != lt[c].var[i]) s++;
            if (s == nslot && nslot == RF_RT_DIST_VOTE_N) ahead = 0;
            else if (s == nslot) slot_var[nslot++] = lt[c].var[i];
        }
    }
    if (!ahead) nslot = 2;
    int64_t local[RF_RT_DIST_VOTE_N], all[RF_RT_DIST_VOTE_N];
    for (int s = 0; s < nslot; s++) {
        int64_t r = s < 2 ? rows[s] : x->rows_of(x->rows_dev, slot_var[s]);
        local[s] = r * row_bytes(x, slot_var[s], own_len);
    }
    rf_status st = dist_sum_votes(x, nslot, local, all, "a join's sizes", d);
    if (st) return st;
    uint8_t reused = k->id >= 0 && k->id < x->nkernel_ids ? x->reused[k->id] : 0;
    if (right_only) reused &= 2;
    if (moved >= 0) reused &= (uint8_t)(1u << (1 - moved));
    for (int s = 1; s >= 0; s--)
        if ((reused >> s & 1) && all[s] <= x->broadcast_bytes) {
            *nm = 0;
            add_move(moves, nm, k->in[s], place_of(RF_RT_PLACE_REPL));
            return RF_OK;
        }
    /* each choice's bytes sent (times N), now and later */
    int64_t cost[3] = {0, 0, 0};
    for (int32_t i = 0; i < *nm; i++) cost[0] += sent_n(all[moves[i].var == k->in[0] ? 0 : 1], moves[i].to.kind, N);
    for (int s = 0; s < 2; s++) cost[1 + s] = sent_n(all[s], RF_RT_PLACE_REPL, N);
    for (int c = 0; c < 3 && ahead; c++)
        for (int32_t i = 0; i < lt[c].n; i++) {
            int s = 0;
            while (slot_var[s] != lt[c].var[i]) s++;
            cost[c] += sent_n(all[s], lt[c].to[i], N);
        }
    int best = 0;
    for (int s = all[0] <= all[1] ? 0 : 1, t = 0; t < 2; t++, s = 1 - s)
        if (can[1 + s] && all[s] <= x->broadcast_bytes && cost[1 + s] < cost[best]) best = 1 + s;
    if (!best) return RF_OK;
    *nm = 0;
    add_move(moves, nm, k->in[best - 1], place_of(RF_RT_PLACE_REPL));
    return RF_OK;
}

static rf_status plan_join(rf_rt_dist *x, const rf_hir_kernel *k, const int64_t *rows, rf_rt_dist_move *moves,
                           int32_t *nm, rf_diags *d)
{
    int32_t a = k->in[0], b = k->in[1];
    rf_rt_place_kind pa = kind_of(x, a), pb = kind_of(x, b);
    if (pa == RF_RT_PLACE_EMPTY || pb == RF_RT_PLACE_EMPTY || pb == RF_RT_PLACE_REPL) return RF_OK;
    if (k->kind == RF_HIR_JOIN_INDEX && pa == RF_RT_PLACE_REPL) return RF_OK;
    if (pa == RF_RT_PLACE_ROOT && pb == RF_RT_PLACE_ROOT) return RF_OK;
    int same_keys = k->nkeys > 0 && k->nkeys <= RF_RT_PLACE_MAXCOLS && !memcmp(k->lkeys, k->rkeys, (size_t)k->nkeys * 4);
    if (k->nkeys == 0 || k->nkeys > RF_RT_PLACE_MAXCOLS || pa == RF_RT_PLACE_REPL || (a == b && !same_keys)) {
        /* no key to hash by, the left side everywhere (a negation needs all
        ** of its right side), or a self-join on other columns: broadcast */
        add_move(moves, nm, b, place_of(RF_RT_PLACE_REPL));
        return RF_OK;
    }
    need_hash(x, a, k->lkeys, k->nkeys, moves, nm);
    if (a != b) need_hash(x, b, k->rkeys, k->nkeys, moves, nm);
    if (x->dry) x->dry_weighed = *nm > 0 && a != b; /* (the run would weigh a broadcast here) */
    if (x->dry || !*nm || a == b) return RF_OK;
    return broadcast_small(x, k, rows, moves, nm, *nm == 2 ? -1 : moves[0].var == a ? 0 : 1, d);
}

static void plan_insert(rf_rt_dist *x, const rf_hir_kernel *k, rf_rt_dist_move *moves, int32_t *nm)
{
    int32_t out = k->out;
    rf_rt_place po = x->vars[out].place;
    x->vars[out].insert_place = place_of(RF_RT_PLACE_EMPTY);
    /* the inputs' common placement, if they have one */
    rf_rt_place common = place_of(RF_RT_PLACE_EMPTY);
    int agree = 1;
    for (int32_t i = 1; i < k->nin; i++) {
        const rf_rt_place *p = &x->vars[k->in[i]].place;
        if (p->kind == RF_RT_PLACE_EMPTY) continue;
        if (common.kind == RF_RT_PLACE_EMPTY) common = *p;
        else if (!place_eq(&common, p)) agree = 0;
    }
    rf_rt_place target = po;
    if (po.kind == RF_RT_PLACE_EMPTY) {
        if (common.kind == RF_RT_PLACE_EMPTY) return;
        target = agree && common.kind != RF_RT_PLACE_ANY ? common : tuple_place(x, out);
    } else if (po.kind == RF_RT_PLACE_ANY ||
               ((po.kind == RF_RT_PLACE_ROOT || po.kind == RF_RT_PLACE_REPL) &&
                !(common.kind == RF_RT_PLACE_EMPTY || (agree && place_eq(&common, &po))))) {
        target = tuple_place(x, out);
        add_move(moves, nm, out, target);
    }
    for (int32_t i = 1; i < k->nin; i++) {
        const rf_rt_place *p = &x->vars[k->in[i]].place;
        if (p->kind != RF_RT_PLACE_EMPTY && !place_eq(p, &target) && k->in[i] != out)
            add_move(moves, nm, k->in[i], target);
    }
    x->vars[out].insert_place = target;
}

static void plan_concat(rf_rt_dist *x, const rf_hir_kernel *k, rf_rt_dist_move *moves, int32_t *nm)
{
    int repl = 0, other = 0;
    for (int32_t i = 0; i < k->nin; i++) {
        rf_rt_place_kind pk = kind_of(x, k->in[i]);
        repl |= pk == RF_RT_PLACE_REPL;
        other |= pk != RF_RT_PLACE_REPL && pk != RF_RT_PLACE_EMPTY;
    }
    /* replicated rows beside spread ones would count several times */
    if (repl && other)
        for (int32_t i = 0; i < k->nin; i++)
            if (kind_of(x, k->in[i]) == RF_RT_PLACE_REPL) add_move(moves, nm, k->in[i], place_of(RF_RT_PLACE_ANY));
}

/* An index's inputs must still hold the rows it was made of. */
static rf_status check_index(rf_rt_dist *x, const rf_hir_kernel *k, rf_diags *d)
{
    if (k->idx < 0) return RF_OK;
    const dist_var *iv = &x->vars[k->idx];
    for (int32_t i = 0; i < 2 && i < k->nin; i++) {
        int32_t v = k->in[i];
        if (v == k->idx) continue;
        for (int32_t j = 0; j < 2; j++)
            if (iv->idx_in[j] == v && iv->idx_gen[j] != x->vars[v].gen) {
                if (x->dry) return RF_EINTERNAL;
                rf_error(d, rf_mkloc(NULL, 0, 0), "ranks: kernel k%d reads an index over rows moved since it was made",
                         (int)k->id);
                return RF_EINTERNAL;
            }
    }
    return RF_OK;
}

rf_status rf_rt_dist_plan(rf_rt_dist *x, const rf_hir_kernel *k, const int64_t *rows, rf_rt_dist_move *moves,
                          int32_t *nmoves, rf_diags *d)
{
    *nmoves = 0;
    switch (k->kind) {
    case RF_HIR_JOIN_INDEX:
    case RF_HIR_ANTI_INDEX: return plan_join(x, k, rows, moves, nmoves, d);
    case RF_HIR_GROUP:
        /* a partial aggregate groups the rows each rank holds (the next
        ** aggregate combines the parts): nothing moves before it */
        if (k->partial) break;
        /* a total of partial totals (one row per rank): every rank gets
        ** them all and sums them alike (in rank order, as rank 0 would), so
        ** that what reads the total (q22's average balance, a cross join)
        ** finds it on its rank instead of it being broadcast after */
        if (k->ngroup == 0 && x->vars[k->in[0]].partial_total)
            need_kind(x, k->in[0], RF_RT_PLACE_REPL, moves, nmoves);
        else if (k->ngroup == 0 || x->vars[k->in[0]].gather_first)
            need_kind(x, k->in[0], RF_RT_PLACE_ROOT, moves, nmoves);
        else if (kind_of(x, k->in[0]) != RF_RT_PLACE_REPL) need_within(x, k->in[0], k->group, k->ngroup, moves, nmoves);
        if (kind_of(x, k->in[0]) == RF_RT_PLACE_REPL && k->ngroup == 0) *nmoves = 0; /* every rank has all */
        break;
    case RF_HIR_UNIQUE: {
        const rf_hir_var *ov = x->p->vars[k->out];
        if (k->check_fd && ov->nkeys == 0 && ov->ncols > 0) {
            /* a function without key columns (p[] = v): all its rows on one rank */
            need_kind(x, k->in[0], RF_RT_PLACE_ROOT, moves, nmoves);
        } else if (k->check_fd && ov->nkeys > 0 && ov->nkeys < ov->ncols) {
            int32_t cols[RF_RT_PLACE_MAXCOLS];
            int32_t n = ov->nkeys < RF_RT_PLACE_MAXCOLS ? ov->nkeys : RF_RT_PLACE_MAXCOLS;
            for (int32_t i = 0; i < n; i++) cols[i] = i;
            if (ov->nkeys <= RF_RT_PLACE_MAXCOLS) need_within(x, k->in[0], cols, n, moves, nmoves);
            else need_kind(x, k->in[0], RF_RT_PLACE_ROOT, moves, nmoves);
        } else {
            need_tuple(x, k->in[0], k->out, moves, nmoves);
        }
        break;
    }
    case RF_HIR_DIFFERENCE: {
        int32_t a = k->in[0], b = k->in[1];
        rf_rt_place pa = x->vars[a].place, pb = x->vars[b].place;
        if (a == b || pa.kind == RF_RT_PLACE_EMPTY || pb.kind == RF_RT_PLACE_EMPTY || pb.kind == RF_RT_PLACE_REPL)
            break;
        if (pa.kind == RF_RT_PLACE_ROOT && pb.kind == RF_RT_PLACE_ROOT) break;
        if (pb.kind == RF_RT_PLACE_HASH) {
            if (!place_eq(&pa, &pb)) add_move(moves, nmoves, a, pb);
            break;
        }
        rf_rt_place all = tuple_place(x, b);
        add_move(moves, nmoves, b, all);
        if (!place_eq(&pa, &all)) add_move(moves, nmoves, a, all);
        break;
    }
    case RF_HIR_INSERT: plan_insert(x, k, moves, nmoves); break;
    case RF_HIR_CONCAT: plan_concat(x, k, moves, nmoves); break;
    case RF_HIR_SORT:
        if (kind_of(x, k->in[0]) != RF_RT_PLACE_REPL) need_kind(x, k->in[0], RF_RT_PLACE_ROOT, moves, nmoves);
        /* an ordered, limited output: each rank's first rows only (dist_topk.c) */
        if (*nmoves && dist_topk_cuts(x, k)) moves[0].cut = k;
        break;
    case RF_HIR_LFTJ:
        /* the tries whole on rank 0 (replicated ones are there already) */
        for (int32_t i = 0; i < k->nin; i++)
            if (kind_of(x, k->in[i]) != RF_RT_PLACE_REPL && kind_of(x, k->in[i]) != RF_RT_PLACE_EMPTY)
                need_kind(x, k->in[i], RF_RT_PLACE_ROOT, moves, nmoves);
        break;
    case RF_HIR_JOIN_MAP:
    case RF_HIR_GATHER_MAP:
    case RF_HIR_REDUCE:
    case RF_HIR_GATHER: return check_index(x, k, d);
    default: break;
    }
    return RF_OK;
}

/* The placement of a map's output whose input is placed p (side s of outs):
** a hash survives when the output copies every hashed column. */
static rf_rt_place through_map(const rf_rt_place *p, int side, rf_qp_expr *const *outs, int32_t nouts)
{
    if (p->kind != RF_RT_PLACE_HASH) return *p;
    rf_rt_place q = place_of(RF_RT_PLACE_HASH);
    q.ncols = p->ncols;
    for (int32_t i = 0; i < p->ncols; i++) {
        int32_t found = -1;
        for (int32_t o = 0; o < nouts && found < 0; o++) {
            const rf_qp_expr *e = outs[o];
            if (e && e->kind == RF_QP_E_COL && e->side == side && e->col == p->cols[i]) found = o;
        }
        if (found < 0) return place_of(RF_RT_PLACE_ANY);
        q.cols[i] = found;
    }
    return q;
}

static rf_rt_place join_out(const dist_var *iv, const rf_hir_kernel *k)
{
    rf_rt_place_kind a = iv->idx_place[0].kind, b = iv->idx_place[1].kind;
    if (a == RF_RT_PLACE_EMPTY || b == RF_RT_PLACE_EMPTY) return place_of(RF_RT_PLACE_EMPTY);
    if (a == RF_RT_PLACE_REPL && b == RF_RT_PLACE_REPL) return place_of(RF_RT_PLACE_REPL);
    if (a == RF_RT_PLACE_ROOT || b == RF_RT_PLACE_ROOT) return place_of(RF_RT_PLACE_ROOT);
    rf_rt_place q = place_of(RF_RT_PLACE_ANY);
    if (b == RF_RT_PLACE_REPL || iv->copart) q = through_map(&iv->idx_place[0], 0, k->outs, k->nouts);
    if (q.kind != RF_RT_PLACE_HASH && (a == RF_RT_PLACE_REPL || iv->copart))
        q = through_map(&iv->idx_place[1], 1, k->outs, k->nouts);
    return q.kind == RF_RT_PLACE_HASH ? q : place_of(RF_RT_PLACE_ANY);
}

void rf_rt_dist_ran(rf_rt_dist *x, const rf_hir_kernel *k)
{
    dist_var *o = &x->vars[k->out];
    rf_rt_place in0 = k->nin > 0 ? x->vars[k->in[0]].place : place_of(RF_RT_PLACE_EMPTY);
    switch (k->kind) {
    case RF_HIR_MAP: o->place = through_map(&in0, 0, k->outs, k->nouts); break;
    case RF_HIR_GATHER_MAP:
        o->place = through_map(&x->vars[k->idx].gather_place, 0, k->outs, k->nouts);
        break;
    case RF_HIR_JOIN_MAP: o->place = join_out(&x->vars[k->idx], k); break;
    case RF_HIR_JOIN_INDEX:
    case RF_HIR_ANTI_INDEX:
    case RF_HIR_GROUP:
    case RF_HIR_SORT:
        for (int32_t i = 0; i < 2; i++) {
            int32_t v = i < k->nin ? k->in[i] : -1;
            o->idx_in[i] = v;
            o->idx_gen[i] = v >= 0 ? x->vars[v].gen : 0;
            o->idx_place[i] = v >= 0 ? x->vars[v].place : place_of(RF_RT_PLACE_EMPTY);
        }
        o->copart = k->nin > 1 && o->idx_place[0].kind == RF_RT_PLACE_HASH &&
                    o->idx_place[1].kind == RF_RT_PLACE_HASH && k->nkeys > 0 && k->nkeys <= RF_RT_PLACE_MAXCOLS;
        /* a gather by the index's left rows: those rows of in0, on the ranks
        ** the join put them; a replicated left side joined with a spread
        ** right side is spread */
        o->gather_place = o->idx_place[0];
        if (k->kind == RF_HIR_JOIN_INDEX && o->idx_place[0].kind == RF_RT_PLACE_REPL &&
            o->idx_place[1].kind != RF_RT_PLACE_REPL && o->idx_place[1].kind != RF_RT_PLACE_EMPTY)
            o->gather_place = place_of(RF_RT_PLACE_ANY);
        break;
    case RF_HIR_REDUCE: {
        rf_rt_place g = x->vars[k->idx].idx_place[0];
        if (g.kind == RF_RT_PLACE_HASH) {
            rf_rt_place q = place_of(RF_RT_PLACE_HASH);
            q.ncols = g.ncols;
            for (int32_t i = 0; i < g.ncols && q.kind == RF_RT_PLACE_HASH; i++) {
                int32_t at = -1;
                for (int32_t j = 0; j < k->ngroup && at < 0; j++)
                    if (k->group[j] == g.cols[i]) at = j;
                if (at < 0) q = place_of(RF_RT_PLACE_ANY);
                else q.cols[i] = at;
            }
            g = q;
        }
        o->place = g;
        break;
    }
    case RF_HIR_GATHER: o->place = x->vars[k->idx].gather_place; break;
    case RF_HIR_CONCAT: {
        rf_rt_place c = place_of(RF_RT_PLACE_EMPTY);
        for (int32_t i = 0; i < k->nin; i++) {
            const rf_rt_place *p = &x->vars[k->in[i]].place;
            if (p->kind == RF_RT_PLACE_EMPTY) continue;
            if (c.kind == RF_RT_PLACE_EMPTY) c = *p;
            else if (!place_eq(&c, p)) c = place_of(RF_RT_PLACE_ANY);
        }
        o->place = c;
        break;
    }
    case RF_HIR_UNIQUE:
    case RF_HIR_DIFFERENCE:
    case RF_HIR_COPY: o->place = in0; break;
    case RF_HIR_FACTS: o->place = place_of(k->nrows ? RF_RT_PLACE_REPL : RF_RT_PLACE_EMPTY); break;
    case RF_HIR_CLEAR: o->place = place_of(RF_RT_PLACE_EMPTY); break;
    case RF_HIR_INSERT:
        if (o->place.kind == RF_RT_PLACE_EMPTY) o->place = o->insert_place;
        break;
    case RF_HIR_LFTJ: {
        /* all replicated: every rank has the whole answer; else rank 0 */
        int all_repl = 1, empty = 0;
        for (int32_t i = 0; i < k->nin; i++) {
            all_repl &= x->vars[k->in[i]].place.kind == RF_RT_PLACE_REPL;
            empty |= x->vars[k->in[i]].place.kind == RF_RT_PLACE_EMPTY;
        }
        o->place = place_of(empty ? RF_RT_PLACE_EMPTY : all_repl ? RF_RT_PLACE_REPL : RF_RT_PLACE_ROOT);
        break;
    }
    }
}

int rf_rt_dist_output_move(rf_rt_dist *x, int32_t var, rf_rt_dist_move *m)
{
    rf_rt_place_kind pk = x->vars[var].place.kind;
    if (pk == RF_RT_PLACE_ROOT || pk == RF_RT_PLACE_REPL || pk == RF_RT_PLACE_EMPTY) return 0;
    m->var = var;
    m->to = place_of(RF_RT_PLACE_ROOT);
    m->cut = NULL;
    return 1;
}

int rf_rt_dist_span_still(rf_rt_dist *x, const rf_hir_block *bl, int32_t j0, int32_t last)
{
    size_t size = ((size_t)x->p->nvars + 1) * sizeof *x->vars;
    dist_var *saved = rf_malloc(size);
    int32_t maxin = 0;
    for (int32_t j = j0; j < bl->nkernels; j++)
        if (bl->kernels[j]->nin > maxin) maxin = bl->kernels[j]->nin;
    rf_rt_dist_move *moves = rf_calloc((size_t)maxin * 2 + 3, sizeof *moves);
    if (!saved || !moves) {
        free(saved);
        free(moves);
        return 0;
    }
    memcpy(saved, x->vars, size);
    x->dry = 1;
    rf_rt_dist_ran(x, bl->kernels[j0]);
    int still = 0;
    for (int32_t j = j0 + 1; j < bl->nkernels; j++) {
        const rf_hir_kernel *k = bl->kernels[j];
        int32_t n = 0;
        if (rf_rt_dist_plan(x, k, NULL, moves, &n, NULL) || n > 0) break;
        rf_rt_dist_ran(x, k);
        if (k->id == last) {
            still = 1;
            break;
        }
    }
    x->dry = 0;
    memcpy(x->vars, saved, size);
    free(saved);
    free(moves);
    return still;
}

/* ---- the program's shape ------------------------------------------------ */

static const rf_hir_kernel *writer(const rf_hir_program *p, int32_t var, rf_hir_kind kind)
{
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->out == var && k->kind == kind) return k;
        }
    return NULL;
}

/* Whether some kernel copies from into to. */
static int copies(const rf_hir_program *p, int32_t from, int32_t to)
{
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->kind == RF_HIR_COPY && k->out == to && k->nin > 0 && k->in[0] == from) return 1;
        }
    return 0;
}

/* Semi-naive recursion: t = join_map(delta, r, idx) with idx =
** join_index(delta, r), new = difference(t, set), delta = copy(new). When t
** copies some of delta's columns to the same places, hashing set (and so
** delta) by those keeps t where its rows' set rows are: with r broadcast,
** the loop moves nothing. */
static void prefer(rf_rt_dist *x, const rf_hir_kernel *jm)
{
    const rf_hir_program *p = x->p;
    const rf_hir_kernel *ji = writer(p, jm->idx, RF_HIR_JOIN_INDEX);
    if (!ji || ji->nin < 2) return;
    int32_t delta = ji->in[0];
    int32_t cols[RF_RT_PLACE_MAXCOLS], n = 0;
    for (int32_t o = 0; o < jm->nouts && n < RF_RT_PLACE_MAXCOLS; o++) {
        const rf_qp_expr *e = jm->outs[o];
        if (e && e->kind == RF_QP_E_COL && e->side == 0 && e->col == o) cols[n++] = o;
    }
    if (!n) return;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->kind != RF_HIR_DIFFERENCE || k->nin < 2 || k->in[0] != jm->out) continue;
            int32_t set = k->in[1];
            if (delta != set && !copies(p, k->out, delta)) continue;
            if (p->vars[set]->ncols != p->vars[delta]->ncols || x->vars[set].pref.kind == RF_RT_PLACE_HASH) continue;
            x->vars[set].pref = hash_of(cols, n);
        }
}

/* Whether var's rows go to rank 0 (its readers' would): what reads it is
** a sort (every output's sort runs there; and the gathers by its order),
** or a map whose output's rows do (depth: maps followed so far). */
static int all_to_root(const rf_hir_program *p, int32_t var, int depth)
{
    if (depth > 8 || p->vars[var]->role == RF_HIR_ROLE_INPUT) return 0;
    int read = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            int reads = 0;
            for (int32_t i = 0; i < k->nin; i++) reads |= k->in[i] == var;
            if (!reads) continue;
            read = 1;
            if (k->kind == RF_HIR_SORT) continue;
            if (k->kind == RF_HIR_GATHER && k->idx >= 0 && writer(p, k->idx, RF_HIR_SORT)) continue;
            if (k->kind == RF_HIR_MAP && k->out != var && all_to_root(p, k->out, depth + 1)) continue;
            return 0;
        }
    return read;
}

/* A combining group (its input a partial reduce's rows) whose groups all
** go to rank 0 anyway: its input gathers there at once (one move, not a
** hash by the groups and then the gather; the same rows reach rank 0 from
** the other ranks either way). */
static void gather_first(rf_rt_dist *x, const rf_hir_kernel *g)
{
    const rf_hir_program *p = x->p;
    if (g->kind != RF_HIR_GROUP || g->partial || g->ngroup == 0 || g->nin < 1) return;
    const rf_hir_kernel *pr = writer(p, g->in[0], RF_HIR_REDUCE);
    const rf_hir_kernel *pg = pr && pr->idx >= 0 ? writer(p, pr->idx, RF_HIR_GROUP) : NULL;
    if (!pg || !pg->partial) return;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *r = p->blocks[b]->kernels[j];
            if (r->kind == RF_HIR_REDUCE && r->idx == g->out && !all_to_root(p, r->out, 0)) return;
        }
    x->vars[g->in[0]].gather_first = 1;
}

rf_status dist_place_prepare(rf_rt_dist *x)
{
    const rf_hir_program *p = x->p;
    int32_t ids = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->id >= ids) ids = p->blocks[b]->kernels[j]->id + 1;
    x->reused = rf_calloc((size_t)ids + 1, 1);
    if (!x->reused) return RF_ENOMEM;
    x->nkernel_ids = ids;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bl = p->blocks[b];
        for (int32_t j = 0; j < bl->nkernels; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            if (k->kind == RF_HIR_JOIN_MAP) prefer(x, k);
            gather_first(x, k);
            /* the reduce of a partial group without group columns */
            const rf_hir_kernel *g = k->kind == RF_HIR_REDUCE ? writer(p, k->idx, RF_HIR_GROUP) : NULL;
            if (g && g->partial && g->ngroup == 0 && k->out >= 0 && k->out < p->nvars) x->vars[k->out].partial_total = 1;
        }
        /* a loop: blocks [first, b] when b branches back to first */
        int32_t first = -1;
        if (bl->term != RF_HIR_T_HALT) {
            if (bl->target >= 0 && bl->target <= b) first = bl->target;
            if (bl->term == RF_HIR_T_BRANCH && bl->else_target >= 0 && bl->else_target <= b &&
                (first < 0 || bl->else_target < first))
                first = bl->else_target;
        }
        for (int32_t lb = first; lb >= 0 && lb <= b; lb++)
            for (int32_t j = 0; j < p->blocks[lb]->nkernels; j++) {
                const rf_hir_kernel *k = p->blocks[lb]->kernels[j];
                if (k->kind != RF_HIR_JOIN_INDEX && k->kind != RF_HIR_ANTI_INDEX) continue;
                for (int32_t i = 0; i < 2 && i < k->nin; i++) {
                    int written = 0;
                    for (int32_t wb = first; wb <= b && !written; wb++)
                        for (int32_t w = 0; w < p->blocks[wb]->nkernels && !written; w++)
                            written = p->blocks[wb]->kernels[w]->out == k->in[i];
                    if (!written) x->reused[k->id] |= (uint8_t)(1u << i);
                }
            }
    }
    return RF_OK;
}

void rf_rt_dist_at(rf_rt_dist *x, const rf_hir_block *bl, int32_t j, int64_t (*rows)(const void *dev, int32_t var),
                   const void *dev)
{
    x->at_block = bl;
    x->at_j = j;
    x->rows_of = rows;
    x->rows_dev = dev;
    x->kernels++;
}

void rf_rt_dist_emptied(rf_rt_dist *x, int32_t var) { x->vars[var].place = place_of(RF_RT_PLACE_EMPTY); }

void rf_rt_dist_loaded(rf_rt_dist *x, int32_t var) { x->vars[var].place = place_of(RF_RT_PLACE_ANY); }

void rf_rt_dist_loaded_whole(rf_rt_dist *x, int32_t var) { x->vars[var].place = place_of(RF_RT_PLACE_REPL); }
