/*
** skeletons/cuda/fuse.c: which kernels of each Kernel Weaver group the GPU
** code generator fuses into one kernel (rf_gpu_fplan), and why the others
** stay separate. See rf_gpu_codegen.h, "fusion".
**
** Owns the rules that make a fused kernel correct to run at the position of
** its first stage: every stage is a map stage the GPU runs (no host
** fallback), stages read either the fused kernel's one input or an earlier
** stage's output, and no kernel scheduled in between reads or writes what a
** later stage reads or writes. The code generator (codegen.c) and the GPU
** executor (runtime/gpu) both follow the plan made here, so they agree on
** every slot of the argument block.
*/
#include "rf_gpu_codegen.h"
#include "rf_weaver.h"

#include <stdlib.h>
#include <string.h>

static int is_map(rf_hir_kind k) { return k == RF_HIR_MAP || k == RF_HIR_JOIN_MAP || k == RF_HIR_GATHER_MAP; }

/* Same input: the same kind reading the same relations through the same index. */
static int same_input(const rf_hir_kernel *a, const rf_hir_kernel *b)
{
    if (a->kind != b->kind || a->idx != b->idx || a->in[0] != b->in[0]) return 0;
    return a->kind != RF_HIR_JOIN_MAP || a->in[1] == b->in[1];
}

static int reads(const rf_hir_kernel *k, int32_t var)
{
    for (int32_t i = 0; i < k->nin; i++)
        if (k->in[i] == var) return 1;
    return k->idx == var;
}

/* Position of kernel k in its block. */
static int32_t pos_of(const rf_hir_block *bl, const rf_hir_kernel *k)
{
    for (int32_t j = 0; j < bl->nkernels; j++)
        if (bl->kernels[j] == k) return j;
    return -1;
}

static int in_unit(const rf_gpu_funit *u, const rf_hir_kernel *k)
{
    if (u->src == k) return 1;
    for (int32_t t = 0; k && t < u->ntot; t++)
        if (u->tot[t].group == k || u->tot[t].reduce == k) return 1;
    for (int32_t i = 0; i < u->n; i++)
        if (u->m[i].k == k) return 1;
    return 0;
}

/* Can k, scheduled at position pk, run at the position of u's first stage? */
static int movable(const rf_hir_block *bl, const rf_gpu_funit *u, const rf_hir_kernel *k, int32_t pk)
{
    int32_t first = pos_of(bl, u->src ? u->src : u->m[0].k);
    for (int32_t q = first + 1; q < pk; q++) {
        const rf_hir_kernel *m = bl->kernels[q];
        if (in_unit(u, m)) continue;
        if (reads(k, m->out) || m->out == k->out || reads(m, k->out)) return 0;
    }
    return 1;
}

/* Is var read or written outside unit u (or visible outside its block)? */
static int needed_outside(const rf_hir_program *p, const rf_gpu_funit *u, int32_t var, const rf_hir_kernel *writer)
{
    /* a predicate's relation that nothing else reads needs no rows (only
    ** inputs and outputs are seen outside the program) */
    if (p->vars[var]->role == RF_HIR_ROLE_INPUT || p->vars[var]->role == RF_HIR_ROLE_OUTPUT) return 1;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bl = p->blocks[b];
        for (int32_t t = 0; t < bl->ntest; t++)
            if (bl->test[t] == var) return 1;
        for (int32_t j = 0; j < bl->nkernels; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            if (k == writer) continue;
            if (k->out == var) return 1; /* another definition: keep this one real */
            if (!in_unit(u, k) && reads(k, var)) return 1;
            if (in_unit(u, k) && reads(k, var)) {
                /* a stage reading var other than as its parent's output */
                for (int32_t i = 0; i < u->n; i++)
                    if (u->m[i].k == k && (u->m[i].parent < 0 || u->m[u->m[i].parent].k != writer)) return 1;
            }
        }
    }
    return 0;
}

/* Does stage k consume what probe src makes: a join_map of the join's pairs
** and its two relations, or a gather_map of an anti-join's left rows? */
static int consumes(const rf_hir_kernel *src, const rf_hir_kernel *k)
{
    if (!src || k->idx != src->out || k->in[0] != src->in[0]) return 0;
    if (src->kind == RF_HIR_JOIN_INDEX) return k->kind == RF_HIR_JOIN_MAP && k->in[1] == src->in[1];
    return k->kind == RF_HIR_GATHER_MAP;
}

/* Are u->src's pairs read only by u's stages that consume them? */
static int pairs_private(const rf_hir_program *p, const rf_gpu_funit *u)
{
    int32_t var = u->src->out;
    if (p->vars[var]->role != RF_HIR_ROLE_TEMP) return 0;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bl = p->blocks[b];
        for (int32_t t = 0; t < bl->ntest; t++)
            if (bl->test[t] == var) return 0;
        for (int32_t j = 0; j < bl->nkernels; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            if (k == u->src) continue;
            if (k->out == var) return 0;
            if (!reads(k, var)) continue;
            int ok = 0;
            for (int32_t m = 0; m < u->n; m++)
                if (u->m[m].k == k && u->m[m].parent < 0 && consumes(u->src, k)) ok = 1;
            if (!ok) return 0;
        }
    }
    return 1;
}

int32_t rf_gpu_dedupe_cols(const rf_hir_program *p, const rf_hir_kernel *k, int32_t cols[RF_GPU_MAXC])
{
    if (k->kind == RF_HIR_MAP) {
        if (k->idx >= 0 || k->nin != 1) return 0;
    } else if (k->kind != RF_HIR_JOIN_MAP || k->filter) {
        return 0;
    }
    int32_t var = k->out, n = 0;
    if (p->vars[var]->role != RF_HIR_ROLE_TEMP || k->nouts != p->vars[var]->ncols || k->nouts < 1 ||
        k->nouts > RF_GPU_MAXC)
        return 0;
    for (int32_t i = 0; i < k->nouts; i++) {
        const rf_qp_expr *e = k->outs[i];
        if (e->kind != RF_QP_E_COL || e->side < 0 || e->side >= k->nin || (i == 0 && e->side != 0) || e->col < 0 ||
            e->col >= p->vars[k->in[e->side]]->ncols)
            return 0;
        if (e->side == 0) cols[n++] = e->col;
    }
    /* its one reader: a unique of the whole row, and nothing else writes it */
    int32_t readers = 0;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bl = p->blocks[b];
        for (int32_t t = 0; t < bl->ntest; t++)
            if (bl->test[t] == var) return 0;
        for (int32_t j = 0; j < bl->nkernels; j++) {
            const rf_hir_kernel *o = bl->kernels[j];
            if (o == k) continue;
            if (o->out == var) return 0;
            if (!reads(o, var)) continue;
            if (o->kind != RF_HIR_UNIQUE || o->nin != 1 || o->in[0] != var || o->idx >= 0) return 0;
            readers++;
        }
    }
    return readers == 1 ? n : 0;
}

/* Is aggregate ag of reduce r one a fused total computes (exact integer sums)? */
static int total_agg(const rf_hir_program *p, const rf_hir_kernel *r, const rf_qp_agg *ag)
{
    if (ag->fn == RF_AGG_COUNT) return 1;
    if (ag->fn != RF_AGG_TOTAL && ag->fn != RF_AGG_AVG) return 0;
    if (ag->col < 0 || ag->col >= p->vars[r->in[0]]->ncols) return 0;
    rf_type t = p->vars[r->in[0]]->types[ag->col];
    /* (a total of wide decimals, a total of totals, runs in the reduce: few rows) */
    return t == RF_TYPE_INT || t == RF_TYPE_DECIMAL;
}

void rf_gpu_ftotal_layout(rf_gpu_ftotal *t)
{
    const rf_hir_kernel *r = t->reduce;
    t->ngroup = r->ngroup;
    t->nsum = 0;
    for (int32_t i = 0; i < r->naggs && i < RF_GPU_FUSE_AGGS; i++) {
        t->agg_sum[i] = -1;
        if (r->aggs[i].fn == RF_AGG_COUNT) continue;
        /* a total and an average of one column share its sum */
        for (int32_t s = 0; s < t->nsum && t->agg_sum[i] < 0; s++)
            if (t->sum_col[s] == r->aggs[i].col) t->agg_sum[i] = s;
        if (t->agg_sum[i] < 0) {
            t->sum_col[t->nsum] = r->aggs[i].col;
            t->agg_sum[i] = t->nsum++;
        }
    }
}

int32_t rf_gpu_ftotal_rec_words(const rf_gpu_ftotal *t) { return t->ngroup + 2 + 2 * t->nsum; }

int32_t rf_gpu_ftotal_words(const rf_gpu_ftotal *t)
{
    return 2 + RF_GPU_FUSE_GHEADS + RF_GPU_FUSE_GROUPS * rf_gpu_ftotal_rec_words(t);
}

int32_t rf_gpu_ftotal_smem_words(const rf_gpu_ftotal *t) { return rf_gpu_ftotal_words(t) - 1; }

/* Makes reduce r (and the group it reads) a total of a unit's stage when
** that is all that reads the stage's rows (rf_gpu_ftotal): over all rows,
** or grouped by up to RF_GPU_FUSE_GKEYS columns that are not floats. */
static void attach_total(const rf_hir_program *p, const rf_hir_block *bl, rf_gpu_fplan *f, int32_t first_unit,
                         const rf_hir_kernel *r)
{
    if (r->naggs < 1 || r->naggs > RF_GPU_FUSE_AGGS || r->nin < 1 || r->idx < 0) return;
    if (r->ngroup > RF_GPU_FUSE_GKEYS) {
        f->why[r->id] = "more group columns than a fused kernel's table of groups takes (4)";
        return;
    }
    for (int32_t i = 0; i < r->naggs; i++)
        if (!total_agg(p, r, &r->aggs[i])) {
            f->why[r->id] = "a total of floats or of wide decimals, or a min or max, is not summed in a fused kernel";
            return;
        }
    for (int32_t i = 0; i < r->ngroup; i++)
        if (r->group[i] < 0 || r->group[i] >= p->vars[r->in[0]]->ncols ||
            p->vars[r->in[0]]->types[r->group[i]] == RF_TYPE_FLOAT ||
            p->vars[r->in[0]]->types[r->group[i]] == RF_TYPE_DEC128) {
            f->why[r->id] = "a group column of floats or wide decimals is not grouped in a fused kernel";
            return;
        }
    const rf_hir_kernel *g = NULL;
    for (int32_t j = 0; j < bl->nkernels && !g; j++)
        if (bl->kernels[j]->out == r->idx) g = bl->kernels[j];
    if (!g || g->kind != RF_HIR_GROUP || g->ngroup != r->ngroup || g->in[0] != r->in[0]) return;
    for (int32_t i = 0; i < r->ngroup; i++)
        if (g->group[i] != r->group[i]) return;
    for (int32_t ui = first_unit; ui < f->nunits; ui++) {
        rf_gpu_funit *u = &f->units[ui];
        int32_t s = -1;
        for (int32_t m = 0; m < u->n; m++)
            if (u->m[m].k->out == r->in[0]) s = m;
        if (s < 0) continue;
        if (u->ntot == RF_GPU_FUSE_TOTALS) {
            f->why[r->id] = "its fused kernel has as many totals as one kernel takes";
            return;
        }
        /* a grouped total's table is in the kernel's shared memory, a total
        ** over all rows in its registers: a kernel has totals of one kind */
        if (u->ntot > 0 && (u->tot[0].ngroup > 0) != (r->ngroup > 0)) {
            f->why[r->id] = "its fused kernel has a total of the other kind (grouped, or over all rows)";
            return;
        }
        if (r->ngroup > 0) {
            rf_gpu_ftotal probe;
            memset(&probe, 0, sizeof probe);
            probe.reduce = r;
            rf_gpu_ftotal_layout(&probe);
            int64_t words = rf_gpu_ftotal_smem_words(&probe);
            for (int32_t t = 0; t < u->ntot; t++) words += rf_gpu_ftotal_smem_words(&u->tot[t]);
            if (words * 8 > RF_GPU_FUSE_GSMEM) {
                f->why[r->id] = "its fused kernel's tables of groups would fill its shared memory";
                return;
            }
        }
        if (r->ngroup > 0 && u->src) {
            f->why[r->id] = "its rows come from a join's probe (a grouped total takes a map's rows)";
            return;
        }
        /* tried as part of the unit: then nothing outside it may need the
        ** stage's rows or the group's index, and both must move up */
        rf_gpu_ftotal *t = &u->tot[u->ntot++];
        memset(t, 0, sizeof *t);
        t->group = g;
        t->reduce = r;
        t->stage = s;
        t->acc = u->nacc;
        rf_gpu_ftotal_layout(t);
        const char *why = NULL;
        if (needed_outside(p, u, r->in[0], u->m[s].k) || needed_outside(p, u, g->out, g))
            why = "the rows it totals are also read elsewhere";
        else if (!movable(bl, u, g, pos_of(bl, g)) || !movable(bl, u, r, pos_of(bl, r)))
            why = "a kernel scheduled in between depends on the total";
        if (why) {
            u->ntot--;
            f->why[r->id] = why;
            return;
        }
        u->nacc += t->ngroup ? rf_gpu_ftotal_words(t) : 1 + 2 * r->naggs;
        u->m[s].has_children = 1; /* its values stay in registers for the sums */
        return;
    }
}

/* Whether e holds a chain or conjunction longer than RF_GPU_CHAIN_CHUNK. */
static int long_chain(const rf_qp_expr *e)
{
    if (!e) return 0;
    if ((e->kind == RF_QP_E_BINOP || e->kind == RF_QP_E_AND) && e->nargs > RF_GPU_CHAIN_CHUNK) return 1;
    for (int32_t i = 0; i < e->nargs; i++)
        if (long_chain(e->args[i])) return 1;
    return 0;
}

int rf_gpu_kernel_long_chain(const rf_hir_kernel *k)
{
    if (long_chain(k->filter)) return 1;
    for (int32_t i = 0; i < k->nouts; i++)
        if (long_chain(k->outs[i])) return 1;
    return 0;
}

/* A kernel of grouped totals whose other stages must write rows: those
** stages (that no total's stage reads through) leave it and run as kernels
** of their own, where the totals' stages then write nothing. (Several
** grouped aggregates over one input: the maps the tables do not hold take
** their rows apart.) Unchanged where a stage the totals keep must write. */
static void split_grouped(const rf_hir_program *p, rf_gpu_fplan *f, rf_gpu_funit *u)
{
    uint8_t keep[RF_GPU_FUSE_MAX] = {0};
    for (int32_t t = 0; t < u->ntot; t++)
        for (int32_t m = u->tot[t].stage; m >= 0; m = u->m[m].parent) keep[m] = 1;
    rf_gpu_funit v = *u;
    int32_t to[RF_GPU_FUSE_MAX];
    for (int32_t m = 0; m < RF_GPU_FUSE_MAX; m++) to[m] = -1; /* (-O3 cannot see every stage is set below) */
    v.n = 0;
    for (int32_t m = 0; m < u->n; m++) {
        to[m] = -1;
        if (!keep[m]) continue;
        to[m] = v.n;
        v.m[v.n] = u->m[m];
        v.m[v.n].parent = u->m[m].parent >= 0 ? to[u->m[m].parent] : -1;
        v.n++;
    }
    if (v.n == u->n) return;
    for (int32_t t = 0; t < v.ntot; t++) v.tot[t].stage = to[u->tot[t].stage];
    for (int32_t m = 0; m < v.n; m++)
        if (needed_outside(p, &v, v.m[m].k->out, v.m[m].k)) return;
    for (int32_t m = 0; m < u->n; m++)
        if (!keep[m]) f->why[u->m[m].k->id] = "its rows are written, and its kernel of grouped totals writes none";
    *u = v;
}

static const char *const WHY_KIND =
    "not a map stage (the generator fuses map, join_map and gather_map stages, and totals over their rows)";
static const char *const WHY_ALONE = "no other map stage of its group reads its input or its output";

/* The units of one Kernel Weaver group. */
static rf_status plan_group(const rf_hir_program *p, const rf_wv_group *g, int32_t gi, rf_gpu_fplan *f,
                            int32_t *cap, const rf_hir_kernel *const *by_id)
{
    const rf_hir_block *bl = p->blocks[g->block];
    int32_t first_unit = f->nunits;
    for (int32_t i = 0; i < g->nkernels; i++) {
        int32_t id = g->kernels[i];
        if (id < 0 || id >= f->nkernels) continue;
        const rf_hir_kernel *k = by_id[id];
        if (!k) continue; /* ids are unique in a program: the one kernel of that id */
        f->group_of[id] = gi;
        if (g->nkernels < 2) continue;
        if ((k->kind == RF_HIR_JOIN_INDEX || k->kind == RF_HIR_ANTI_INDEX) && k->nkeys > 0 &&
            k->nkeys <= RF_GPU_MAXC) {
            /* a probe whose pairs (or, for an anti-join, whose selected left
            ** rows) the join_map (gather_map) stages after it may consume */
            if (f->nunits == *cap) {
                int32_t nc = *cap ? *cap * 2 : 8;
                rf_gpu_funit *nu = rf_realloc(f->units, (size_t)nc * sizeof *nu);
                if (!nu) return RF_ENOMEM;
                f->units = nu;
                *cap = nc;
            }
            rf_gpu_funit *u = &f->units[f->nunits++];
            memset(u, 0, sizeof *u);
            u->block = g->block;
            u->wgroup = gi;
            u->src = k;
            continue;
        }
        if (!is_map(k->kind)) {
            f->why[id] = k->kind == RF_HIR_JOIN_INDEX   ? "a cross product (no keys)"
                         : k->kind == RF_HIR_ANTI_INDEX ? "an anti-join without keys"
                                                        : WHY_KIND;
            continue;
        }
        if (rf_gpu_kernel_long_chain(k)) {
            f->why[id] = "a chain or conjunction of more than 64 operands (compiled as loops and helpers of its own)";
            continue;
        }
        rf_gpu_kplan pl;
        rf_gpu_kplan_build(p, k, &pl);
        if (!pl.gpu) {
            f->why[id] = pl.why ? pl.why : "it runs on the host";
            continue;
        }
        int32_t pk = pos_of(bl, k);
        /* a thread dependence on a stage already placed, else an input dependence */
        int32_t unit = -1, parent = -1;
        if (k->kind == RF_HIR_MAP && pl.nisland == 0)
            for (int32_t u = first_unit; u < f->nunits && unit < 0; u++)
                for (int32_t m = 0; m < f->units[u].n; m++)
                    if (f->units[u].m[m].k->out == k->in[0]) unit = u, parent = m;
        /* (a string table is built for the codes a stage's rows hold: with a
        ** probe those rows are not known before the kernel runs) */
        if (unit < 0 && (k->kind == RF_HIR_JOIN_MAP || k->kind == RF_HIR_GATHER_MAP) && pl.nisland == 0)
            for (int32_t u = first_unit; u < f->nunits && unit < 0; u++)
                if (consumes(f->units[u].src, k)) unit = u;
        if (unit < 0)
            for (int32_t u = first_unit; u < f->nunits && unit < 0; u++)
                for (int32_t m = 0; m < f->units[u].n && unit < 0; m++)
                    if (f->units[u].m[m].parent < 0 && same_input(f->units[u].m[m].k, k) &&
                        !(f->units[u].src && pl.nisland))
                        unit = u;
        if (unit >= 0) {
            rf_gpu_funit *u = &f->units[unit];
            int32_t nconst = 0, nisland = 0;
            for (int32_t m = 0; m < u->n; m++) {
                rf_gpu_kplan q;
                rf_gpu_kplan_build(p, u->m[m].k, &q);
                nconst += q.nconst;
                nisland += q.nisland;
            }
            if (u->n == RF_GPU_FUSE_MAX || nconst + pl.nconst > RF_GPU_MAX_CONSTS ||
                nisland + pl.nisland > RF_GPU_MAX_ISLANDS || !movable(bl, u, k, pk)) {
                unit = -1;
                parent = -1;
            }
        }
        if (unit < 0) {
            if (f->nunits == *cap) {
                int32_t nc = *cap ? *cap * 2 : 8;
                rf_gpu_funit *nu = rf_realloc(f->units, (size_t)nc * sizeof *nu);
                if (!nu) return RF_ENOMEM;
                f->units = nu;
                *cap = nc;
            }
            unit = f->nunits++;
            memset(&f->units[unit], 0, sizeof f->units[unit]);
            f->units[unit].block = g->block;
            f->units[unit].wgroup = gi;
        }
        rf_gpu_funit *u = &f->units[unit];
        rf_gpu_fmember *mb = &u->m[u->n++];
        memset(mb, 0, sizeof *mb);
        mb->k = k;
        mb->parent = parent;
        mb->mat = -1;
        if (parent >= 0) u->m[parent].has_children = 1;
    }
    /* totals over a stage's rows */
    for (int32_t i = 0; i < g->nkernels; i++)
        for (int32_t j = 0; j < bl->nkernels; j++)
            if (bl->kernels[j]->id == g->kernels[i] && bl->kernels[j]->kind == RF_HIR_REDUCE)
                attach_total(p, bl, f, first_unit, bl->kernels[j]);
    /* drop single stages; decide what is written; assign slots */
    int32_t w = first_unit;
    for (int32_t ui = first_unit; ui < f->nunits; ui++) {
        rf_gpu_funit *u = &f->units[ui];
        if (u->src && !pairs_private(p, u)) {
            /* the pairs are needed as such: the probe stays its own kernel
            ** and its join_map stages read the pairs */
            f->why[u->src->id] = u->n ? "its pairs are read outside the fused kernel" : WHY_ALONE;
            u->src = NULL;
        }
        if (u->ntot && u->tot[0].ngroup) split_grouped(p, f, u);
        if (u->ntot) {
            /* a total's kernel writes no rows: a unit that must also write some keeps its totals apart */
            int writes = 0;
            for (int32_t m = 0; m < u->n && !writes; m++) writes = needed_outside(p, u, u->m[m].k->out, u->m[m].k);
            if (writes) {
                for (int32_t t = 0; t < u->ntot; t++)
                    f->why[u->tot[t].reduce->id] = "its fused kernel also writes rows, and a total's kernel writes none";
                u->ntot = u->nacc = 0;
            }
        }
        const char *why = u->n < (u->src || u->ntot ? 1 : 2) ? WHY_ALONE : NULL;
        int32_t ocol = 0, kc = 0, ki = 0;
        u->nmat = 0;
        for (int32_t m = 0; m < u->n && !why; m++) {
            rf_gpu_fmember *mb = &u->m[m];
            rf_gpu_kplan q;
            rf_gpu_kplan_build(p, mb->k, &q);
            mb->kconst = kc;
            mb->kisland = ki;
            kc += q.nconst;
            ki += q.nisland;
            if (needed_outside(p, u, mb->k->out, mb->k)) {
                mb->mat = u->nmat++;
                mb->ocol = ocol;
                ocol += p->vars[mb->k->out]->ncols;
            }
        }
        if (!why && ocol > RF_GPU_MAXC) why = "its stages write more columns than one GPU kernel takes";
        if (why) {
            for (int32_t m = 0; m < u->n; m++) f->why[u->m[m].k->id] = why;
            continue;
        }
        if (w != ui) f->units[w] = *u;
        f->units[w].id = w;
        {
            rf_gpu_funit *U = &f->units[w];
            int32_t dc[RF_GPU_MAXC];
            int32_t nd = U->src && U->src->kind == RF_HIR_JOIN_INDEX && U->n == 1 && !U->ntot && U->m[0].mat == 0 &&
                                 U->m[0].parent < 0
                             ? rf_gpu_dedupe_cols(p, U->m[0].k, dc)
                             : 0;
            /* left rows equal in the compared columns must have the same
            ** matches: the join's left keys are among those columns */
            for (int32_t i = 0; nd > 0 && i < U->src->nkeys; i++) {
                int in = 0;
                for (int32_t c = 0; c < nd && !in; c++) in = dc[c] == U->src->lkeys[i];
                if (!in) nd = 0;
            }
            U->dedupe = nd > 0;
        }
        if (f->units[w].src) {
            f->unit_of[f->units[w].src->id] = w;
            f->member_of[f->units[w].src->id] = -1;
            f->why[f->units[w].src->id] = NULL;
        }
        for (int32_t m = 0; m < f->units[w].n; m++) {
            f->unit_of[f->units[w].m[m].k->id] = w;
            f->member_of[f->units[w].m[m].k->id] = m;
            f->why[f->units[w].m[m].k->id] = NULL;
        }
        for (int32_t t = 0; t < f->units[w].ntot; t++) {
            const rf_hir_kernel *gr[2] = {f->units[w].tot[t].group, f->units[w].tot[t].reduce};
            for (int32_t i = 0; i < 2; i++) {
                f->unit_of[gr[i]->id] = w;
                f->member_of[gr[i]->id] = RF_GPU_MEMBER_TOTAL;
                f->why[gr[i]->id] = NULL;
            }
        }
        w++;
    }
    f->nunits = w;
    return RF_OK;
}

rf_status rf_gpu_fplan_build(const rf_hir_program *p, int fuse, rf_gpu_fplan **out, rf_diags *d)
{
    *out = NULL;
    rf_gpu_fplan *f = rf_calloc(1, sizeof *f);
    if (!f) return RF_ENOMEM;
    int32_t nk = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->id >= nk) nk = p->blocks[b]->kernels[j]->id + 1;
    f->nkernels = nk;
    f->unit_of = rf_malloc((size_t)(nk + 1) * sizeof *f->unit_of);
    f->member_of = rf_calloc((size_t)nk + 1, sizeof *f->member_of);
    f->group_of = rf_malloc((size_t)(nk + 1) * sizeof *f->group_of);
    f->why = rf_calloc((size_t)nk + 1, sizeof *f->why);
    if (!f->unit_of || !f->member_of || !f->group_of || !f->why) {
        rf_gpu_fplan_free(f);
        return RF_ENOMEM;
    }
    for (int32_t i = 0; i < nk; i++) f->unit_of[i] = f->group_of[i] = -1;
    rf_status st = RF_OK;
    if (fuse) {
        rf_wv_plan *w = NULL;
        st = rf_wv_analyze(p, NULL, &w, d);
        int32_t cap = 0;
        /* kernels by id, where the groups name them (a lookup, not a scan of the block per member) */
        const rf_hir_kernel **by_id = st ? NULL : rf_calloc((size_t)nk + 1, sizeof *by_id);
        if (!st && !by_id) st = RF_ENOMEM;
        for (int32_t b = 0; !st && b < p->nblocks; b++)
            for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
                const rf_hir_kernel *k = p->blocks[b]->kernels[j];
                if (k->id >= 0 && k->id < nk) by_id[k->id] = k;
            }
        for (int32_t g = 0; !st && g < w->ngroups; g++) st = plan_group(p, &w->groups[g], g, f, &cap, by_id);
        free(by_id);
        rf_wv_plan_free(w);
    }
    if (st) {
        rf_gpu_fplan_free(f);
        return st;
    }
    *out = f;
    return RF_OK;
}

void rf_gpu_fplan_free(rf_gpu_fplan *f)
{
    if (!f) return;
    free(f->units);
    free(f->unit_of);
    free(f->member_of);
    free(f->group_of);
    free(f->why);
    free(f);
}

/* ---- what a fused kernel reads ---------------------------------------------------- */

static int64_t col_width(rf_type t)
{
    return t == RF_TYPE_STRING || t == RF_TYPE_DATE ? 4 : t == RF_TYPE_BOOL ? 1 : t == RF_TYPE_DEC128 ? 16 : 8;
}

static void mark_side(const rf_qp_expr *e, int32_t side, uint8_t *mark, int32_t ncols)
{
    if (!e) return;
    if (e->kind == RF_QP_E_COL && e->side == side && e->col >= 0 && e->col < ncols) mark[e->col] = 1;
    for (int32_t i = 0; i < e->nargs; i++) mark_side(e->args[i], side, mark, ncols);
}

void rf_gpu_funit_needs(const rf_hir_program *p, const rf_gpu_funit *u, uint8_t need[RF_GPU_FUSE_MAX][RF_GPU_MAXC],
                        uint8_t in[2][RF_GPU_MAXC])
{
    /* which output columns of each stage something needs: a written output
    ** all of them, a total its arguments, a child stage what it reads */
    memset(need, 0, sizeof(uint8_t[RF_GPU_FUSE_MAX][RF_GPU_MAXC]));
    for (int32_t m = 0; m < u->n; m++) {
        int32_t nc = p->vars[u->m[m].k->out]->ncols;
        if (u->m[m].mat >= 0)
            for (int32_t c = 0; c < nc && c < RF_GPU_MAXC; c++) need[m][c] = 1;
    }
    for (int32_t t = 0; t < u->ntot; t++)
        for (int32_t i = 0; i < u->tot[t].reduce->naggs + u->tot[t].reduce->ngroup; i++) {
            const rf_hir_kernel *r = u->tot[t].reduce;
            int32_t c = i < r->naggs ? r->aggs[i].col : r->group[i - r->naggs]; /* its arguments, its group columns */
            if (c >= 0 && c < RF_GPU_MAXC) need[u->tot[t].stage][c] = 1;
        }
    memset(in, 0, sizeof(uint8_t[2][RF_GPU_MAXC]));
    for (int32_t m = u->n - 1; m >= 0; m--) {
        const rf_hir_kernel *k = u->m[m].k;
        int32_t par = u->m[m].parent;
        for (int32_t side = 0; side < 2; side++) {
            uint8_t *mark = par >= 0 ? (side ? NULL : need[par]) : in[side];
            if (!mark || (side && (par >= 0 || k->nin < 2))) continue;
            int32_t nc = p->vars[par >= 0 ? u->m[par].k->out : k->in[side]]->ncols;
            if (nc > RF_GPU_MAXC) nc = RF_GPU_MAXC;
            mark_side(k->filter, side, mark, nc);
            for (int32_t c = 0; c < k->nouts; c++)
                if (c < RF_GPU_MAXC && need[m][c]) mark_side(k->outs[c], side, mark, nc);
        }
    }
}

int64_t rf_gpu_funit_input_bytes(const rf_hir_program *p, const rf_gpu_funit *u, const int64_t *rows)
{
    uint8_t need[RF_GPU_FUSE_MAX][RF_GPU_MAXC], in[2][RF_GPU_MAXC];
    rf_gpu_funit_needs(p, u, need, in);
    const rf_hir_kernel *h = u->m[0].k;
    int64_t b = 0;
    for (int32_t side = 0; side < 2 && side < h->nin; side++) {
        const rf_hir_var *v = p->vars[h->in[side]];
        for (int32_t c = 0; c < v->ncols && c < RF_GPU_MAXC; c++)
            if (in[side][c]) b += col_width(v->types[c]) * rows[side];
    }
    return b;
}

void rf_gpu_fplan_print(const rf_hir_program *p, const rf_gpu_fplan *f, rf_buf *out)
{
    int32_t stages = 0;
    for (int32_t u = 0; u < f->nunits; u++)
        stages += f->units[u].n + (f->units[u].src != NULL) + 2 * f->units[u].ntot;
    rf_buf_printf(out,
                  "GPU code generator: %d fused kernels (%d kernels in them); this is what runs: every other kernel "
                  "is a GPU kernel of its own\n",
                  f->nunits, stages);
    for (int32_t u = 0; u < f->nunits; u++) {
        const rf_gpu_funit *U = &f->units[u];
        rf_buf_printf(out, "  rfg%d (group %d): ", u, U->wgroup);
        if (U->src)
            rf_buf_printf(out, "k%d %s (probe; %s not written), ", U->src->id, rf_hir_kind_name(U->src->kind),
                          U->src->kind == RF_HIR_JOIN_INDEX ? "pairs" : "selected rows");
        for (int32_t m = 0; m < U->n; m++) {
            const rf_gpu_fmember *mb = &U->m[m];
            rf_buf_printf(out, "%sk%d %s", m ? ", " : "", mb->k->id, rf_hir_kind_name(mb->k->kind));
            if (mb->parent >= 0) rf_buf_printf(out, " <- k%d", U->m[mb->parent].k->id);
            rf_buf_puts(out, mb->mat >= 0 ? " (written)" : " (registers only)");
        }
        for (int32_t t = 0; t < U->ntot; t++)
            if (U->tot[t].ngroup)
                rf_buf_printf(out,
                              ", k%d group and k%d reduce <- k%d (grouped totals: a table of at most %d groups per "
                              "CTA, merged by atomics)",
                              U->tot[t].group->id, U->tot[t].reduce->id, U->m[U->tot[t].stage].k->id,
                              RF_GPU_FUSE_GROUPS);
            else
                rf_buf_printf(out, ", k%d group and k%d reduce <- k%d (a total: per-CTA partial sums, combined by atomics)",
                              U->tot[t].group->id, U->tot[t].reduce->id, U->m[U->tot[t].stage].k->id);
        rf_buf_putc(out, '\n');
    }
    for (int32_t id = 0; id < f->nkernels; id++)
        if (f->why[id]) {
            const rf_hir_kernel *k = NULL;
            for (int32_t b = 0; b < p->nblocks && !k; b++)
                for (int32_t j = 0; j < p->blocks[b]->nkernels && !k; j++)
                    if (p->blocks[b]->kernels[j]->id == id) k = p->blocks[b]->kernels[j];
            rf_buf_printf(out, "  k%d %s (group %d) runs as its own kernel: %s\n", id,
                          k ? rf_hir_kind_name(k->kind) : "?", f->group_of[id], f->why[id]);
        }
}
