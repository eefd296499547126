/*
** runtime/cpu/rt_cpu_cands.c: a recursion's candidates on the CPU in parts:
** the joins that derive a round's rows, their union, its distinct rows and
** their difference with the known relation run as one pass whose memory
** holds one part of the join pairs at a time.
**
** Owns: finding such spans (rf_cx_cd_plan) and running one. A span is a
** block's consecutive kernels
**     ((JOIN_INDEX, JOIN_MAP stage*) | MAP)* [CONCAT] [UNIQUE] DIFFERENCE(c, known)
** with two joins or more, where a join's stage is a negation of its rows so
** far (ANTI_INDEX, GATHER_MAP against a relation the span does not write), a
** join of them, on its left side, with another atom (JOIN_INDEX, JOIN_MAP: a
** rule of three atoms or more) or a MAP of them (a condition that may fail,
** left after the negations), and
** every join's pairs and stages' rows, the concatenation and the distinct
** rows are temporaries only the span reads (a map on its own, a rule of one
** atom or a condition the planner moved before a join, runs whole in its
** place; its rows are stored as its kernel's): the semi-naive loop of a
** recursive predicate (queryplan/README.md, "Lowering"), its new rows the
** distinct candidates not yet known. A round of one join (a linear
** recursion's of two atoms) runs so only where the run finds that its pairs
** repeat rows (worth_parts); else as the kernels apart.
** Run at the span's first kernel: each
** join's pairs come in parts of at most cpu_part_pairs pairs
** (rf_cpu_join_parts), each part is mapped (rf_rt_eval_map), goes through
** the join's stages (an anti-join: rf_cx_anti_index, which probes the negated
** relation's kept index; a later join: its pairs in parts again) and its rows are
** inserted into a set of the round's distinct candidates; at the end the
** candidates the known relation holds are dropped. Concatenation inputs
** made before the span join that set as they are.
**
** Why: a non-linear closure (p(x, z) <- p(x, y), p(y, z)) derives each new
** row many times; a 400-node chain's rounds made 6.2 M pairs per join, then
** 6.2 M mapped rows, then a 12.4 M-row concatenation, for 155,722 distinct
** candidates: the round's memory was its pairs, 2.8 GB at 800 nodes.
**
** The result is DIFFERENCE's relation exactly as the kernels one by one make
** it: the distinct candidates in the order of their first occurrence in the
** concatenation, without the known rows; a map's error is its first failing
** row's, as the parts come in row order, and of a join's stages the first
** stage's that fails (struct flow). The profile's counts of the span's
** never stored values (pairs, mapped rows, concatenation, distinct rows) are
** the kernels' own (fused_rows).
*/
#include "rt_cpu_internal.h"

/* A stage of a join's rows, in block order: the join itself or a later join
** of its rows with another atom (ix JOIN_INDEX, mp JOIN_MAP), an anti-join of
** the rows before it (ix ANTI_INDEX, mp GATHER_MAP: a negation), or a map of
** them (mp: a condition the planner left after the negations). */
typedef struct cd_stage {
    const rf_hir_kernel *ix, *mp;
} cd_stage;

/* A step of the span, in block order: a join whose rows go through its
** stages (stages[st0 .. st0 + nst), the first the join) part by part into
** the candidates, or a map run whole (mp: a rule of one atom, or a condition
** the planner moved before a join, which then reads its rows). src: its rows
** are a concatenation input. */
typedef struct cd_item {
    const rf_hir_kernel *mp;
    int32_t st0, nst;
    int src;
} cd_item;

struct rf_cx_cdplan {
    const rf_hir_kernel *first, *concat, *unique, *diff;
    int32_t *pre; /* concatenation inputs made before the span, in its order (all before the span's) */
    int32_t npre;
    cd_item *items;
    int32_t nitems;
    cd_stage *stages;
    int32_t nstages;
    const rf_hir_kernel **ks; /* the span's kernels after the first, skipped when it ran */
    int32_t nks;
    const cd_stage *sole; /* a round of one join (a linear recursion): that join, run in parts
                             only where its pairs repeat rows (worth_parts); NULL: two joins or more */
    /* the most rows of sole's right side that one key matches, for the right
    ** side it was counted on (its first column and rows): an input, the same
    ** every round */
    const void *most_of;
    int64_t most_rows, most;
};

/* ---- which spans run in parts ------------------------------------------------ */

static int in_span(const rf_hir_block *bl, int32_t j0, int32_t j1, const rf_hir_kernel *k)
{
    for (int32_t j = j0; j <= j1; j++)
        if (bl->kernels[j] == k) return 1;
    return 0;
}

static int reads(const rf_hir_kernel *k, int32_t v)
{
    for (int32_t i = 0; i < k->nin; i++)
        if (k->in[i] == v) return 1;
    return k->idx == v;
}

/* A temporary that only the kernels j0..j1 of bl read, no branch tests. */
static int span_private(const rf_hir_program *p, const rf_hir_block *bl, int32_t j0, int32_t j1, int32_t v)
{
    if (v < 0 || v >= p->nvars || p->vars[v]->role != RF_HIR_ROLE_TEMP) return 0;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bb = p->blocks[b];
        for (int32_t t = 0; t < bb->ntest; t++)
            if (bb->test[t] == v) return 0;
        for (int32_t j = 0; j < bb->nkernels; j++)
            if (reads(bb->kernels[j], v) && (bb != bl || !in_span(bl, j0, j1, bb->kernels[j]))) return 0;
    }
    return 1;
}

static int same_types(const rf_hir_program *p, int32_t a, int32_t b)
{
    const rf_hir_var *va = p->vars[a], *vb = p->vars[b];
    if (va->kind != RF_HIR_V_REL || vb->kind != RF_HIR_V_REL || va->ncols != vb->ncols) return 0;
    for (int32_t c = 0; c < va->ncols; c++)
        if (va->types[c] != vb->types[c]) return 0;
    return 1;
}

void rf_cx_cd_plan_free(rf_cx_cdplan *pl)
{
    if (!pl) return;
    free(pl->pre);
    free(pl->items);
    free(pl->stages);
    free(pl->ks);
    free(pl);
}

static int whole_map(const rf_hir_kernel *m)
{
    return m->kind == RF_HIR_MAP && m->nin == 1 && m->in[0] != m->out && !m->group && m->naggs == 0;
}

/* A join at ji (then m), its pairs read by its map only. */
static int join_at(const rf_hir_kernel *ji, const rf_hir_kernel *m)
{
    return ji->kind == RF_HIR_JOIN_INDEX && m->kind == RF_HIR_JOIN_MAP && ji->nin == 2 && m->nin == 3 &&
           m->idx == ji->out && m->in[0] == ji->in[0] && m->in[1] == ji->in[1] && m->in[2] == ji->out &&
           ji->in[0] != m->out && ji->in[1] != m->out;
}

/* The later stage at bl->kernels[j] (before end) of a join whose rows so far
** are cur: how many kernels it takes (0: none). */
static int32_t stage_at(const rf_hir_block *bl, int32_t j, int32_t end, int32_t cur, cd_stage *g)
{
    const rf_hir_kernel *a = bl->kernels[j], *b = j + 1 < end ? bl->kernels[j + 1] : NULL;
    memset(g, 0, sizeof *g);
    if (whole_map(a) && a->in[0] == cur) {
        g->mp = a;
        return 1;
    }
    if (b && a->kind == RF_HIR_JOIN_INDEX && a->in[0] == cur && a->in[1] != cur && join_at(a, b)) {
        /* a join of the rows with another atom (a rule of three atoms or
        ** more): the rows on the left, so that its pairs, part by part of
        ** the rows, come in the order of the whole join's */
        g->ix = a;
        g->mp = b;
        return 2;
    }
    if (b && a->kind == RF_HIR_ANTI_INDEX && a->nin == 2 && a->in[0] == cur && a->in[1] != cur && a->out != cur &&
        b->kind == RF_HIR_GATHER_MAP && b->nin == 2 && b->in[0] == cur && b->in[1] == a->out && b->idx == a->out &&
        b->out != cur && b->out != a->out) {
        g->ix = a;
        g->mp = b;
        return 2;
    }
    return 0;
}

/* The steps of the kernels first..pos-1 of bl, in order: joins with their
** later stages, and maps run whole. 0 when they are not such steps. */
static int parse_steps(const rf_hir_block *bl, int32_t first, int32_t pos, cd_item *items, int32_t *nitems,
                       cd_stage *stages, int32_t *nstages)
{
    *nitems = *nstages = 0;
    for (int32_t j = first; j < pos;) {
        cd_item *it = &items[(*nitems)++];
        memset(it, 0, sizeof *it);
        const rf_hir_kernel *a = bl->kernels[j];
        if (j + 1 < pos && join_at(a, bl->kernels[j + 1])) {
            it->st0 = *nstages;
            stages[*nstages].ix = a;
            stages[(*nstages)++].mp = bl->kernels[j + 1];
            int32_t cur = bl->kernels[j + 1]->out, w;
            j += 2;
            while (j < pos && (w = stage_at(bl, j, pos, cur, &stages[*nstages])) > 0) {
                cur = stages[(*nstages)++].mp->out;
                j += w;
            }
            it->nst = *nstages - it->st0;
        } else if (whole_map(a)) {
            it->mp = a;
            j++;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Whether the values a join's stages make (never stored: they pass part by
** part) are read by none of the kernels first..last but their next stage
** (the last one's rows: by fin), and are temporaries nothing else reads. */
static int stages_private(const rf_hir_program *p, const rf_hir_block *bl, int32_t first, int32_t last,
                          const cd_stage *g, int32_t nst, const rf_hir_kernel *fin)
{
    for (int32_t s = 0; s < nst; s++) {
        const rf_hir_kernel *nx[2] = {fin, NULL};
        if (s + 1 < nst) {
            nx[0] = g[s + 1].mp;
            nx[1] = g[s + 1].ix;
        }
        int32_t vals[2] = {g[s].mp->out, g[s].ix ? g[s].ix->out : -1};
        for (int v = 0; v < 2; v++) {
            if (vals[v] < 0) continue;
            if (!span_private(p, bl, first, last, vals[v])) return 0;
            for (int32_t j = first; j <= last; j++) {
                const rf_hir_kernel *q = bl->kernels[j];
                /* the pairs and the anti-join's rows: read by the stage's map only */
                int ok = v == 1 ? q == g[s].mp : q == nx[0] || (nx[1] && q == nx[1]);
                if (reads(q, vals[v]) && !ok) return 0;
            }
        }
    }
    return 1;
}

/* The plan of the span ending at the DIFFERENCE bl->kernels[jd] whose steps
** are the kernels first..pos-1, or NULL. */
static rf_cx_cdplan *plan_from(const rf_hir_program *p, const rf_hir_block *bl, int32_t first, int32_t pos,
                               int32_t jd, const rf_hir_kernel *c, const rf_hir_kernel *u, const int32_t *vars,
                               int32_t nvars)
{
    const rf_hir_kernel *d = bl->kernels[jd];
    rf_cx_cdplan *pl = rf_calloc(1, sizeof *pl);
    uint8_t *claimed = rf_calloc((size_t)nvars + 1, 1);
    int ok = pl && claimed;
    if (ok) {
        pl->pre = rf_calloc((size_t)nvars + 1, sizeof *pl->pre);
        pl->items = rf_calloc((size_t)(pos - first) + 1, sizeof *pl->items);
        pl->stages = rf_calloc((size_t)(pos - first) + 1, sizeof *pl->stages);
        pl->ks = rf_calloc((size_t)(jd - first) + 1, sizeof *pl->ks);
        ok = pl->pre && pl->items && pl->stages && pl->ks;
    }
    ok = ok && parse_steps(bl, first, pos, pl->items, &pl->nitems, pl->stages, &pl->nstages);
    /* the last stage's rows of a join are read by the concatenation (or are
    ** the candidates themselves) */
    const rf_hir_kernel *fin = c ? c : u ? u : d;
    int32_t njoins = 0, last_at = -1;
    for (int32_t i = 0; ok && i < pl->nitems; i++) {
        cd_item *it = &pl->items[i];
        const cd_stage *g = &pl->stages[it->st0];
        int32_t out = it->mp ? it->mp->out : g[it->nst - 1].mp->out, at = -1, times = 0;
        for (int32_t v = 0; v < nvars; v++)
            if (vars[v] == out) at = v, times++;
        /* each concatenation input made once; a join's rows are one */
        ok = times <= 1 && !(times == 1 && claimed[at]) && (it->mp || times == 1);
        if (!ok) break;
        if (times == 1) claimed[at] = 1;
        it->src = times == 1;
        if (it->mp) {
            ok = span_private(p, bl, first, jd, out);
            /* no step reads a map's rows before the map ran */
            for (int32_t j = first; j < pos && ok && bl->kernels[j] != it->mp; j++) ok = !reads(bl->kernels[j], out);
            continue;
        }
        for (int32_t s = 0; s < it->nst; s++) njoins += g[s].ix && g[s].ix->kind == RF_HIR_JOIN_INDEX;
        ok = stages_private(p, bl, first, jd, g, it->nst, fin);
        /* a negated relation does not change in the round */
        for (int32_t s = 1; s < it->nst && ok; s++)
            for (int32_t j = first; j <= jd && ok && g[s].ix; j++) ok = bl->kernels[j]->out != g[s].ix->in[1];
    }
    /* A round whose candidates one join makes (a linear recursion) runs in
    ** parts only where the run finds its pairs repeating rows (worth_parts);
    ** a later join of a rule of three atoms counts: its pairs multiply the
    ** first's. */
    ok = ok && njoins >= 1 && same_types(p, d->out, d->in[1]) && same_types(p, d->out, d->in[0]);
    if (ok && njoins == 1)
        for (int32_t i = 0; i < pl->nitems; i++)
            if (!pl->items[i].mp) pl->sole = &pl->stages[pl->items[i].st0];
    /* every value between the joins and the difference lives and dies in the span */
    if (ok && u) ok = span_private(p, bl, first, jd, u->out) && same_types(p, d->out, u->in[0]);
    if (ok && c) ok = span_private(p, bl, first, jd, c->out);
    for (int32_t i = 0; i < nvars && ok; i++) ok = same_types(p, d->out, vars[i]);
    /* the concatenation's inputs made before the span come first, the span's
    ** in block order after them: rows then come in the concatenation's order,
    ** and the steps run (and fail) in the kernels' order */
    for (int32_t i = 0; i < nvars && ok; i++)
        if (!claimed[i]) ok = last_at < i, last_at = i;
    for (int32_t i = 0; ok && i < pl->nitems; i++) {
        const cd_item *it = &pl->items[i];
        int32_t out = it->mp ? it->mp->out : pl->stages[it->st0 + it->nst - 1].mp->out;
        for (int32_t v = 0; v < nvars && ok; v++)
            if (vars[v] == out) ok = last_at < v, last_at = v;
    }
    if (ok) {
        pl->first = bl->kernels[first];
        pl->concat = c;
        pl->unique = u;
        pl->diff = d;
        for (int32_t i = 0; i < nvars; i++)
            if (!claimed[i]) pl->pre[pl->npre++] = vars[i];
        for (int32_t j = first + 1; j <= jd; j++) pl->ks[pl->nks++] = bl->kernels[j];
    } else {
        rf_cx_cd_plan_free(pl);
        pl = NULL;
    }
    free(claimed);
    return pl;
}

/* The plan of the span ending at the DIFFERENCE bl->kernels[jd], or NULL:
** the longest run of steps before it that makes one. */
static rf_cx_cdplan *plan_at(const rf_hir_program *p, const rf_hir_block *bl, int32_t jd)
{
    const rf_hir_kernel *d = bl->kernels[jd], *u = NULL, *c = NULL;
    if (d->kind != RF_HIR_DIFFERENCE || d->nin != 2 || d->out == d->in[1] || d->out == d->in[0]) return NULL;
    int32_t pos = jd, cand = d->in[0];
    if (pos > 0 && bl->kernels[pos - 1]->kind == RF_HIR_UNIQUE && bl->kernels[pos - 1]->out == cand &&
        bl->kernels[pos - 1]->nin == 1 && !bl->kernels[pos - 1]->check_fd) {
        u = bl->kernels[--pos];
        cand = u->in[0];
    }
    const int32_t *vars = &cand;
    int32_t nvars = 1;
    if (pos > 0 && bl->kernels[pos - 1]->kind == RF_HIR_CONCAT && bl->kernels[pos - 1]->out == cand) {
        c = bl->kernels[--pos];
        vars = c->in;
        nvars = c->nin;
    }
    int32_t lo = pos;
    while (lo > 0) {
        rf_hir_kind kk = bl->kernels[lo - 1]->kind;
        if (kk != RF_HIR_MAP && kk != RF_HIR_JOIN_INDEX && kk != RF_HIR_JOIN_MAP && kk != RF_HIR_ANTI_INDEX &&
            kk != RF_HIR_GATHER_MAP)
            break;
        lo--;
    }
    for (int32_t first = lo; first + 2 <= pos; first++) {
        rf_cx_cdplan *pl = plan_from(p, bl, first, pos, jd, c, u, vars, nvars);
        if (pl) return pl;
    }
    return NULL;
}

rf_status rf_cx_cd_plan(exec *x)
{
    const rf_hir_program *p = x->p;
    if ((x->cd = rf_calloc((size_t)x->nkernels + 1, sizeof *x->cd)) == NULL) return RF_ENOMEM;
    if ((x->cd_skip = rf_calloc((size_t)x->nkernels + 1, 1)) == NULL) return RF_ENOMEM;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bl = p->blocks[b];
        for (int32_t j = 0; j < bl->nkernels; j++) {
            rf_cx_cdplan *pl = plan_at(p, bl, j);
            if (!pl) continue;
            int32_t id = pl->first->id;
            if (id < 0 || id >= x->nkernels || x->cd[id] || (x->gt && x->gt[id])) rf_cx_cd_plan_free(pl);
            else x->cd[id] = pl;
        }
    }
    return RF_OK;
}

/* ---- running one ------------------------------------------------------------ */

/* A round's candidates so far: their rows as they came while they fit in one
** part (a small round then costs what the kernels apart cost: a set made for
** a few rows every round of a long linear recursion cost more than the
** round), then a set of the distinct ones. */
typedef struct cands {
    int64_t bound;       /* cpu_part_pairs */
    rf_cpu_set *set;     /* NULL until the rows outgrow one part */
    rf_rt_rel *pend;     /* the rows so far, in order (owned, or borrowed where !own) */
    uint8_t *own;
    int32_t npend, cap;
    int64_t pend_rows;
} cands;

static void cands_free(cands *c)
{
    for (int32_t i = 0; i < c->npend; i++)
        if (c->own[i]) rf_rt_rel_free(&c->pend[i]);
    free(c->pend);
    free(c->own);
    rf_cpu_set_free(c->set);
    memset(c, 0, sizeof *c);
}

static rf_status set_insert_rel(exec *x, rf_cpu_set *set, const rf_rt_rel *rel)
{
    if (rel->nrows == 0) return RF_OK;
    rf_cpu_table t;
    rf_status st = rf_cx_view_of(rel, &t);
    if (st) return st;
    st = rf_cpu_set_insert(x->pool, set, &t, NULL, NULL);
    free(t.cols);
    return st;
}

/* Adds rel's rows (taken over when own, else borrowed until the end). */
static rf_status add_rows(exec *x, cands *c, const rf_hir_var *dv, rf_rt_rel *rel, int own)
{
    rf_status st = RF_OK;
    if (rel->nrows == 0) {
        if (own) rf_rt_rel_free(rel);
        return RF_OK;
    }
    if (!c->set && rel->nrows <= c->bound - c->pend_rows) {
        if (c->npend == c->cap) {
            int32_t cap = c->cap ? c->cap * 2 : 8;
            rf_rt_rel *pend = realloc(c->pend, (size_t)cap * sizeof *pend);
            if (pend) c->pend = pend;
            uint8_t *ow = pend ? realloc(c->own, (size_t)cap) : NULL;
            if (ow) c->own = ow;
            if (!pend || !ow) {
                if (own) rf_rt_rel_free(rel);
                return RF_ENOMEM;
            }
            c->cap = cap;
        }
        c->pend[c->npend] = *rel;
        c->own[c->npend++] = (uint8_t)own;
        c->pend_rows += rel->nrows;
        if (own) memset(rel, 0, sizeof *rel);
        return RF_OK;
    }
    if (!c->set) {
        /* more than one part: from now on a set of the distinct rows */
        rf_cpu_kind kinds[4096];
        int32_t nc = dv->ncols < 4096 ? dv->ncols : 4096;
        for (int32_t i = 0; i < nc; i++) kinds[i] = rf_rt_cpu_kind(dv->types[i]);
        st = rf_cpu_set_new(nc, kinds, &c->set);
        for (int32_t i = 0; i < c->npend && !st; i++) st = set_insert_rel(x, c->set, &c->pend[i]);
        for (int32_t i = 0; i < c->npend; i++)
            if (c->own[i]) rf_rt_rel_free(&c->pend[i]);
        c->npend = 0;
        c->pend_rows = 0;
    }
    if (!st) st = set_insert_rel(x, c->set, rel);
    if (own) rf_rt_rel_free(rel);
    return st;
}

/* A join's rows on their way through its stages, part by part. A map that
** fails holds its error and stops its stage and the later ones; the stages
** before it go on over the next parts, as the kernels apart would have run
** them over every row first: the error reported is then the first failing
** row of the first stage that fails, as the kernels one by one report it. */
typedef struct flow {
    exec *x;
    const cd_stage *g;
    int32_t nst;
    int32_t alive;   /* the stages that still run (a map of stage alive failed) */
    rf_diags held;   /* that map's error */
    rf_status held_st;
    cands *cd;
    const rf_hir_var *dv;
} flow;

static void diags_move(rf_diags *to, rf_diags *from)
{
    for (int64_t i = 0; i < from->count; i++)
        rf_diag_add(to, from->items[i].sev, from->items[i].loc, "%s", from->items[i].msg);
    rf_diags_free(from);
    rf_diags_init(from);
}

/* Stage s's map over n rows of sides into *out: RF_OK, the map's failure
** held (*stop set), or another failure to report at once. */
static rf_status stage_map(flow *f, int32_t s, const rf_rt_side sides[2], int64_t n, rf_rt_rel *out, int *stop)
{
    exec *x = f->x;
    const rf_hir_kernel *k = f->g[s].mp;
    rf_rt_eval_ctx ctx = {x->dict, x->threads, kloc(x, k), rf_hir_kind_name(k->kind)};
    rf_diags mine;
    rf_diags_init(&mine);
    mine.max_errors = x->d->max_errors;
    memset(out, 0, sizeof *out);
    rf_status st = rf_rt_eval_map(&ctx, k->filter, k->outs, k->nouts, x->p->vars[k->out]->types, sides, n, out, &mine);
    *stop = 0;
    if (st == RF_EUSER) {
        /* an earlier stage's failure, or none, was held: this one comes first */
        rf_diags_free(&f->held);
        f->held = mine;
        f->held_st = st;
        f->alive = s;
        *stop = 1;
        rf_rt_rel_free(out);
        return RF_OK;
    }
    diags_move(x->d, &mine);
    if (st) rf_rt_rel_free(out);
    else x->fused_rows[k->out] += out->nrows;
    return st;
}

static rf_status join_stage(flow *f, int32_t s, const rf_rt_rel *l);

/* rows (taken over) through stages s.. into the candidates. */
static rf_status flow_rows(flow *f, int32_t s, rf_rt_rel *rows)
{
    exec *x = f->x;
    if (s == f->nst) return add_rows(x, f->cd, f->dv, rows, 1);
    rf_status st = RF_OK;
    int stop = 0;
    rf_rt_rel next;
    memset(&next, 0, sizeof next);
    if (s >= f->alive) {
        /* a failed map's stage or a later one */
    } else if (f->g[s].ix && f->g[s].ix->kind == RF_HIR_JOIN_INDEX) {
        st = join_stage(f, s, rows);
    } else if (f->g[s].ix) {
        /* a negation: the rows without a match in the negated relation */
        rf_rt_index idx;
        if (!(st = rf_cx_anti_index(x, f->g[s].ix, rows, &idx))) {
            x->fused_rows[f->g[s].ix->out] += idx.n;
            rf_rt_side sides[2] = {{rows, idx.a}, {NULL, NULL}};
            st = stage_map(f, s, sides, idx.n, &next, &stop);
            rf_rt_index_free(&idx);
        }
    } else {
        rf_rt_side sides[2] = {{rows, NULL}, {NULL, NULL}};
        st = stage_map(f, s, sides, rows->nrows, &next, &stop);
    }
    rf_rt_rel_free(rows);
    if (st || stop || s >= f->alive || (f->g[s].ix && f->g[s].ix->kind == RF_HIR_JOIN_INDEX)) {
        rf_rt_rel_free(&next);
        return st;
    }
    return flow_rows(f, s + 1, &next);
}

/* Stage s, a join of l (the first stage: its left relation) with its right
** relation: its pairs part by part, mapped and on through the next stages. */
static rf_status join_stage(flow *f, int32_t s, const rf_rt_rel *l)
{
    exec *x = f->x;
    const rf_hir_kernel *ji = f->g[s].ix;
    const rf_rt_rel *r = &x->vals[ji->in[1]].rel;
    if (l->nrows == 0 || r->nrows == 0) return RF_OK; /* no pairs, without a pass over the other side */
    rf_cpu_table lv, rv;
    rf_status st = rf_cx_views_of(l, r, &lv, &rv);
    if (st) return st;
    rf_cpu_join_side *side = NULL;
    rf_cpu_join_parts *parts = NULL;
    if (!rf_cx_kept_side(x, ji, &lv, &rv, &side, &st)) side = NULL;
    if (!st) st = rf_cpu_join_parts_new(x->pool, &lv, ji->lkeys, &rv, ji->rkeys, ji->nkeys, side, &parts);
    while (!st && s < f->alive) {
        int64_t *li = NULL, *ri = NULL, n = 0;
        if ((st = rf_cpu_join_parts_next(x->pool, parts, f->cd->bound, &li, &ri, &n)) || n == 0) {
            free(li);
            free(ri);
            break;
        }
        x->fused_rows[ji->out] += n;
        rf_rt_side sides[2] = {{l, li}, {r, ri}};
        rf_rt_rel part;
        int stop = 0;
        st = stage_map(f, s, sides, n, &part, &stop);
        free(li);
        free(ri);
        if (!st && !stop) st = flow_rows(f, s + 1, &part);
        rf_rt_rel_free(&part);
    }
    rf_cpu_join_parts_free(parts);
    free(lv.cols);
    free(rv.cols);
    return st;
}

/* One join and its later stages, part by part into the candidates. */
static rf_status join_in_parts(exec *x, const rf_cx_cdplan *pl, const cd_item *it, cands *cd, const rf_hir_var *dv)
{
    flow f;
    memset(&f, 0, sizeof f);
    f.x = x;
    f.g = &pl->stages[it->st0];
    f.nst = f.alive = it->nst;
    f.cd = cd;
    f.dv = dv;
    rf_diags_init(&f.held);
    for (int32_t s = 0; s < it->nst; s++) {
        x->fused_rows[f.g[s].mp->out] = 0;
        if (f.g[s].ix) x->fused_rows[f.g[s].ix->out] = 0;
    }
    rf_status st = join_stage(&f, 0, &x->vals[f.g[0].ix->in[0]].rel);
    if (!st && f.alive < f.nst) st = f.held_st;
    diags_move(x->d, &f.held);
    return st;
}

/* The distinct candidates in the order they came (*all: owned when
** *owned), and how many: the set's rows, or the rows of the one part
** deduplicated as UNIQUE does. */
static rf_status distinct(exec *x, cands *c, const rf_hir_var *dv, rf_rt_rel *all, int *owned)
{
    memset(all, 0, sizeof *all);
    *owned = 0;
    all->ncols = dv->ncols;
    all->types = dv->types;
    if (c->set) {
        rf_cpu_table view;
        rf_cpu_set_view(c->set, &view);
        all->nrows = view.nrows;
        all->cols = rf_calloc((size_t)dv->ncols + 1, sizeof *all->cols);
        if (!all->cols) return RF_ENOMEM;
        for (int32_t i = 0; i < dv->ncols; i++) all->cols[i] = view.cols[i].data;
        return RF_OK;
    }
    rf_rt_rel bag;
    memset(&bag, 0, sizeof bag);
    rf_status st = RF_OK;
    if (c->npend == 1) {
        bag = c->pend[0];
    } else if (c->npend > 1) {
        if ((st = rf_rt_rel_alloc(&bag, dv->ncols, dv->types, c->pend_rows))) return st;
        for (int32_t col = 0; col < dv->ncols; col++) {
            int w = rf_rt_type_width(dv->types[col]);
            int64_t at = 0;
            for (int32_t i = 0; i < c->npend; i++) {
                memcpy((char *)bag.cols[col] + at * w, c->pend[i].cols[col], (size_t)(c->pend[i].nrows * w));
                at += c->pend[i].nrows;
            }
        }
    }
    if (bag.nrows > 0) {
        rf_cpu_table t;
        int64_t *keep = NULL, n = 0;
        if (!(st = rf_cx_view_of(&bag, &t))) {
            st = rf_cpu_unique(x->pool, &t, &keep, &n);
            free(t.cols);
        }
        if (!st) st = rf_cx_gather_rel(x, &bag, keep, n, dv->types, all);
        free(keep);
        *owned = 1;
    }
    if (c->npend > 1) rf_rt_rel_free(&bag);
    return st;
}

static rf_status run_span(exec *x, const rf_cx_cdplan *pl)
{
    const rf_hir_var *dv = x->p->vars[pl->diff->out];
    cands cd;
    memset(&cd, 0, sizeof cd);
    cd.bound = rf_rt_tuning_part_pairs(x->o.tuning, x->threads);
    rf_status st = RF_OK;
    int64_t all = 0;
    for (int32_t i = 0; i < pl->npre && !st; i++) {
        all += x->vals[pl->pre[i]].rel.nrows;
        st = add_rows(x, &cd, dv, &x->vals[pl->pre[i]].rel, 0);
    }
    for (int32_t i = 0; i < pl->nitems && !st; i++) {
        const cd_item *s = &pl->items[i];
        if (s->mp) {
            /* a map runs whole as its kernel would; its rows stay its variable's */
            if (!(st = rf_cx_k_map_kernel(x, s->mp)) && s->src) {
                all += x->vals[s->mp->out].rel.nrows;
                st = add_rows(x, &cd, dv, &x->vals[s->mp->out].rel, 0);
            }
            continue;
        }
        st = join_in_parts(x, pl, s, &cd, dv);
        all += x->fused_rows[pl->stages[s->st0 + s->nst - 1].mp->out];
    }
    if (pl->concat) x->fused_rows[pl->concat->out] = all;
    /* the new rows: the distinct candidates the known relation lacks, in their order */
    rf_rt_rel dist, r;
    int owned = 0;
    memset(&dist, 0, sizeof dist);
    memset(&r, 0, sizeof r);
    if (!st) st = distinct(x, &cd, dv, &dist, &owned);
    if (!st && pl->unique) x->fused_rows[pl->unique->out] = dist.nrows;
    int64_t *keep = NULL, n = 0;
    if (!st) st = rf_cx_ensure_set(x, pl->diff->in[1]);
    if (!st && dist.nrows > 0) {
        rf_cpu_table t;
        if (!(st = rf_cx_view_of(&dist, &t))) {
            st = rf_cpu_set_probe(x->pool, x->vals[pl->diff->in[1]].set, &t, 1, &keep, &n);
            free(t.cols);
        }
    }
    if (!st) st = rf_cx_gather_rel(x, &dist, keep, n, dv->types, &r);
    free(keep);
    if (owned) rf_rt_rel_free(&dist);
    else free(dist.cols);
    cands_free(&cd);
    if (st) {
        rf_rt_rel_free(&r);
        return st;
    }
    rf_cx_val_clear(&x->vals[pl->diff->out]);
    x->vals[pl->diff->out].rel = r;
    return RF_OK;
}

/* ---- a round of one join: in parts or as the kernels apart ---------------- */

/* Row i's value in column c of rel, folded into 64 bits (16-byte decimals
** folded: a collision only merges two counts, which errs toward the
** kernels apart). */
static uint64_t value_at(const rf_rt_rel *rel, int32_t c, int64_t i)
{
    int w = rf_rt_type_width(rel->types[c]);
    const char *at = (const char *)rel->cols[c] + i * w;
    uint64_t v = 0, hi = 0;
    memcpy(&v, at, (size_t)(w < 8 ? w : 8));
    if (w > 8) memcpy(&hi, at + 8, (size_t)(w - 8));
    return v ^ hi * 0x9e3779b97f4a7c15ull;
}

/* The slot of key v in a table of cap (a power of two) slots: its own, or
** the empty one where it goes. */
static int64_t slot_of(const uint64_t *slot, const uint8_t *used, int64_t cap, uint64_t v)
{
    int64_t at = (int64_t)((v * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
    while (used[at] && slot[at] != v) at = (at + 1) & (cap - 1);
    return at;
}

/* The most rows of rel that one value of its columns keys[0..nkeys) has. */
static int64_t most_per_key(const rf_rt_rel *rel, const int32_t *keys, int32_t nkeys, rf_status *st)
{
    int64_t n = rel->nrows, cap = 16, most = 0;
    while (cap < 2 * n) cap *= 2;
    uint64_t *slot = rf_calloc((size_t)cap, sizeof *slot);
    int64_t *count = rf_calloc((size_t)cap, sizeof *count);
    uint8_t *used = rf_calloc((size_t)cap, 1);
    if (!slot || !count || !used) {
        *st = RF_ENOMEM;
        most = 0;
    }
    for (int64_t i = 0; !*st && i < n; i++) {
        uint64_t v = 0;
        for (int32_t k = 0; k < nkeys; k++) v = (v ^ value_at(rel, keys[k], i)) * 0xff51afd7ed558ccdull + (uint64_t)k;
        int64_t at = slot_of(slot, used, cap, v);
        used[at] = 1;
        slot[at] = v;
        if (++count[at] > most) most = count[at];
    }
    free(slot);
    free(count);
    free(used);
    return most;
}

/* A bound on the distinct values of column c of rel: its rows, and for a
** column of integers (ints, decimals' units, dates, booleans, strings'
** codes) the width of the range from its least to its greatest value: one
** sequential pass, no table (a table of its values cost a long linear
** recursion's big rounds a tenth more time). */
static int64_t distinct_bound(const rf_rt_rel *rel, int32_t c)
{
    int64_t n = rel->nrows;
    rf_type t = rel->types[c];
    int w = rf_rt_type_width(t);
    if (n <= 1 || t == RF_TYPE_FLOAT || t == RF_TYPE_DEC128 || (w != 8 && w != 4 && w != 1)) return n;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    if (w == 8) {
        const int64_t *v = rel->cols[c];
        for (int64_t i = 0; i < n; i++) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
    } else if (w == 4) {
        const int32_t *v = rel->cols[c];
        for (int64_t i = 0; i < n; i++) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
    } else {
        return n < 256 ? n : 256;
    }
    /* (hi - lo + 1 past INT64_MAX: the rows bound it) */
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    return span < (uint64_t)n ? (int64_t)span + 1 : n;
}

/* A bound on the distinct rows the join map mp makes of the pairs of
** side[0] and side[1]: the product, over its output columns, of the
** distinct values of the column each copies (a constant: 1); INT64_MAX
** where a column is computed. */
static int64_t rows_bound(const rf_hir_kernel *mp, const rf_rt_rel *const side[2])
{
    int64_t rows = 1;
    for (int32_t o = 0; o < mp->nouts; o++) {
        const rf_qp_expr *e = mp->outs[o];
        if (e->kind == RF_QP_E_CONST) continue;
        if (e->kind != RF_QP_E_COL || e->side < 0 || e->side > 1) return INT64_MAX;
        int64_t d = distinct_bound(side[e->side], e->col);
        if (d > 0 && rows > INT64_MAX / d) return INT64_MAX;
        rows *= d > 0 ? d : 1;
    }
    return rows;
}

/* Whether a round of one join (pl->sole: the join and its stages) is better
** made in parts. In parts, its rows go into a set part by part; apart, all
** its pairs are made, mapped and deduplicated at once. Where its rows are
** all distinct, parts save little memory and cost time (a 3,000-node
** star's linear closure, 9 M pairs and rows: 1.44 s in parts against 0.47
** s apart); where they repeat, parts hold a part instead of all the pairs
** (a 600-node random graph of degree 30: 62 against 293 MB) but insert
** every pair into a set, about twice the CPU time of the pass apart. So:
** in parts when the pairs are more than cpu_part_linear (where holding
** them starts to matter) and than a part, and at least four times a bound
** on the distinct rows they can map to (rows_bound). A later map or
** negation of the rows only takes rows away or maps each to one. */
static int worth_parts(exec *x, rf_cx_cdplan *pl, rf_status *st)
{
    *st = RF_OK;
    /* (several ranks: each would choose by its own rows; they keep to the kernels apart) */
    if (x->o.world) return 0;
    const cd_stage *g = pl->sole;
    const rf_hir_kernel *ji = g[0].ix, *mp = g[0].mp;
    const rf_rt_rel *side[2] = {&x->vals[ji->in[0]].rel, &x->vals[ji->in[1]].rel};
    if (side[0]->nrows == 0 || side[1]->nrows == 0) return 0;
    const rf_rt_tuning *tu = x->o.tuning ? x->o.tuning : rf_rt_tuning_default();
    /* from cpu_part_linear pairs (and more than a part) */
    int64_t part = rf_rt_tuning_part_pairs(tu, x->threads);
    int64_t bound = tu->cpu_part_linear > part ? tu->cpu_part_linear : part;
    if (tu->cpu_part_linear == INT64_MAX) return 0;
    /* few pairs at most, without counting them: the new rows times the most
    ** right rows one key matches, from the right side's kept index, else
    ** counted once for an unchanging right side of at most a million rows
    ** (counting the pairs of a long linear recursion's every small round cost
    ** it a third more time) */
    rf_cpu_table lv, rv;
    if ((*st = rf_cx_views_of(side[0], side[1], &lv, &rv))) return 0;
    rf_cpu_join_side *js = NULL;
    if (!rf_cx_kept_side(x, ji, &lv, &rv, &js, st)) js = NULL;
    int64_t most = -1;
    if (*st || ji->nkeys < 1) {
    } else if (js) {
        most = rf_cpu_join_side_most(js);
    } else if (side[1]->nrows <= ((int64_t)1 << 20)) {
        if (pl->most_of != side[1]->cols[0] || pl->most_rows != side[1]->nrows) {
            pl->most = most_per_key(side[1], ji->rkeys, ji->nkeys, st);
            pl->most_of = *st ? NULL : side[1]->cols[0];
            pl->most_rows = side[1]->nrows;
        }
        most = pl->most;
    }
    int few = !*st && most >= 0 && side[0]->nrows <= bound / (most > 0 ? most : 1);
    /* nor where the most pairs it can make are under four times the rows they can map to */
    int64_t rows = !*st && !few ? rows_bound(mp, side) : 0;
    if (!*st && !few && most > 0 && side[0]->nrows <= INT64_MAX / most) few = side[0]->nrows * most / 4 < rows;
    /* the pairs, counted as the parts would give them */
    rf_cpu_join_parts *parts = NULL;
    if (!*st && !few) *st = rf_cpu_join_parts_new(x->pool, &lv, ji->lkeys, &rv, ji->rkeys, ji->nkeys, js, &parts);
    int64_t pairs = *st || few ? 0 : rf_cpu_join_parts_total(parts);
    rf_cpu_join_parts_free(parts);
    free(lv.cols);
    free(rv.cols);
    return !*st && pairs > bound && pairs / 4 >= rows;
}

int rf_cx_cd_run(exec *x, const rf_hir_kernel *k, rf_status *st)
{
    *st = RF_OK;
    if (k->id < 0 || k->id >= x->nkernels) return 0;
    if (x->cd_skip[k->id]) {
        /* a later kernel of a span that ran at its first */
        x->cd_skip[k->id] = 0;
        return 1;
    }
    rf_cx_cdplan *pl = x->cd[k->id];
    if (!pl || pl->first != k) return 0;
    if (x->cd_unfused && x->cd_unfused[k->id]) {
        x->cd_unfused[k->id] = 0;
        return 0;
    }
    if (pl->sole && !worth_parts(x, pl, st)) return *st != RF_OK;
    if ((*st = run_span(x, pl))) return 1;
    for (int32_t i = 0; i < pl->nks; i++)
        if (pl->ks[i]->id >= 0 && pl->ks[i]->id < x->nkernels) x->cd_skip[pl->ks[i]->id] = 1;
    if (x->res) x->res->cpu_parted++;
    return 1;
}

int32_t rf_cx_cd_until(exec *x, const rf_hir_kernel *k)
{
    if (!x->cd || k->id < 0 || k->id >= x->nkernels || !x->cd[k->id] || x->cd[k->id]->first != k) return -1;
    return x->cd[k->id]->diff->id;
}

void rf_cx_cd_unfuse(exec *x, const rf_hir_kernel *k)
{
    if (k->id < 0 || k->id >= x->nkernels) return;
    if (!x->cd_unfused) x->cd_unfused = rf_calloc((size_t)x->nkernels + 1, 1);
    if (x->cd_unfused) x->cd_unfused[k->id] = 1;
}
