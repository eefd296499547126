/*
** weaver/weaver.c: dependence classification, fusion candidates and greedy
** grouping (thesis 4.3: Algorithms 1 and 2) for each block of a Harmony
** program. See rf_weaver.h.
*/
#include "rf_weaver.h"

#include <stdlib.h>
#include <string.h>

const char *rf_wv_dep_name(rf_wv_dep d)
{
    static const char *n[] = {"thread", "CTA", "kernel", "input"};
    return (unsigned)d < 4 ? n[d] : "?";
}

/* A total over all rows: a GROUP or REDUCE without group columns. A group
** of no columns puts every row in group 0 (nothing global about it); a
** reduce of no columns is a sum over all rows, which CTAs compute as
** partial sums combined by atomic adds (thesis 4.3.1: a CTA dependence). */
static int is_total(const rf_hir_kernel *k)
{
    return (k->kind == RF_HIR_GROUP || k->kind == RF_HIR_REDUCE) && k->ngroup == 0;
}

/* A GROUP or REDUCE by 1 to 4 columns that are not floats, a reduce's
** aggregates counts, totals and averages of ints and decimals: each CTA
** keeps a small table of its rows' groups with exact sums, merged by
** atomics (skeletons/cuda: a grouped total), so its rows need not be
** written first. Too many groups is found when it runs (the kernels then
** run one by one). */
static int is_grouped_total(const rf_hir_program *p, const rf_hir_kernel *k)
{
    if ((k->kind != RF_HIR_GROUP && k->kind != RF_HIR_REDUCE) || k->ngroup < 1 || k->ngroup > 4 || k->nin < 1)
        return 0;
    const rf_hir_var *in = p->vars[k->in[0]];
    for (int32_t i = 0; i < k->ngroup; i++)
        if (k->group[i] < 0 || k->group[i] >= in->ncols || in->types[k->group[i]] == RF_TYPE_FLOAT) return 0;
    if (k->kind == RF_HIR_REDUCE && (k->naggs < 1 || k->naggs > 8)) return 0;
    for (int32_t i = 0; k->kind == RF_HIR_REDUCE && i < k->naggs; i++) {
        const rf_qp_agg *ag = &k->aggs[i];
        if (ag->fn == RF_AGG_COUNT) continue;
        if ((ag->fn != RF_AGG_TOTAL && ag->fn != RF_AGG_AVG) || ag->col < 0 || ag->col >= in->ncols) return 0;
        if (in->types[ag->col] != RF_TYPE_INT && in->types[ag->col] != RF_TYPE_DECIMAL &&
            in->types[ag->col] != RF_TYPE_DEC128)
            return 0;
    }
    return 1;
}

static int is_map_stage(rf_hir_kind k) { return k == RF_HIR_MAP || k == RF_HIR_JOIN_MAP || k == RF_HIR_GATHER_MAP; }

/* The shared memory of a grouped total's table (a REDUCE's: the GROUP's
** index is the same table): its count, 256 heads and 128 records of the
** keys, first row, count and a 128-bit sum per distinct summed column
** (rf_gpu_ftotal). */
static int32_t grouped_smem(const rf_hir_kernel *k)
{
    if (k->kind != RF_HIR_REDUCE) return 0;
    int32_t nsum = 0;
    for (int32_t i = 0; i < k->naggs; i++) {
        int seen = k->aggs[i].fn == RF_AGG_COUNT;
        for (int32_t j = 0; j < i && !seen; j++) seen = k->aggs[j].fn != RF_AGG_COUNT && k->aggs[j].col == k->aggs[i].col;
        nsum += !seen;
    }
    return (1 + 256 + 128 * (k->ngroup + 2 + 2 * nsum)) * 8;
}

/* Kernels that must see all of their input before producing anything. */
static int is_global(rf_hir_kind k)
{
    switch (k) {
    case RF_HIR_GROUP:
    case RF_HIR_REDUCE:
    case RF_HIR_UNIQUE:
    case RF_HIR_DIFFERENCE:
    case RF_HIR_SORT:
    case RF_HIR_GATHER:
    case RF_HIR_INSERT:
    case RF_HIR_FACTS:
    case RF_HIR_CLEAR:
    case RF_HIR_LFTJ: return 1; /* the tries whole; a count pass, then the writes */
    default: return 0;
    }
}

/* How consumer c reads what producer p wrote (thesis 4.3.1). */
static rf_wv_dep classify(const rf_hir_program *prog, const rf_hir_kernel *p, const rf_hir_kernel *c, int map_fed,
                          int reduced, const char **why)
{
    /* (reduced: a GROUP c's index is read by a reduce that is a grouped total) */
    map_fed = map_fed && (c->kind != RF_HIR_GROUP || reduced);
    /* a map's rows into a grouped total, and its group's index into its
    ** reduce where a map in the block makes their rows (map_fed; a join's
    ** or anti-join's rows, made by a probe in the same kernel, come several
    ** to a row: the table takes a map's) */
    if (is_grouped_total(prog, c) && map_fed &&
        (p->kind == RF_HIR_MAP || (p->kind == RF_HIR_GROUP && c->kind == RF_HIR_REDUCE && is_grouped_total(prog, p) &&
                                   p->ngroup == c->ngroup && p->in[0] == c->in[0]))) {
        *why = NULL;
        return RF_WV_CTA; /* per-CTA tables of groups */
    }
    if (is_grouped_total(prog, c) && is_map_stage(p->kind) && p->kind != RF_HIR_MAP &&
        (c->kind != RF_HIR_GROUP || reduced)) {
        *why = "a grouped total takes a map's rows, not a join's (several rows to a probe)";
        return RF_WV_KERNEL;
    }
    if (is_total(c) && !is_global(p->kind)) {
        *why = NULL;
        return RF_WV_CTA; /* per-CTA partial totals */
    }
    if (is_total(c) && p->kind == RF_HIR_GROUP && p->ngroup == 0) {
        *why = NULL;
        return RF_WV_THREAD; /* every row's group is 0 */
    }
    if (is_global(c->kind)) {
        *why = "the consumer needs all of its input (a global sort, hash or set operation)";
        return RF_WV_KERNEL;
    }
    if (is_global(p->kind)) {
        *why = "the producer finishes only when all of its input is done";
        return RF_WV_KERNEL;
    }
    switch (c->kind) {
    case RF_HIR_MAP:
    case RF_HIR_COPY:
    case RF_HIR_CONCAT: *why = NULL; return RF_WV_THREAD;
    default: *why = NULL; return RF_WV_CTA; /* joins partition their inputs per CTA */
    }
}

static int32_t tuple_bytes(const rf_hir_var *v)
{
    int32_t b = 0;
    for (int32_t c = 0; c < v->ncols; c++)
        b += v->kind == RF_HIR_V_INDEX ? 8 : rf_val_type_size(v->types[c]) ? rf_val_type_size(v->types[c]) : 4;
    return b;
}

/* Registers an expression tree needs at once (its Sethi-Ullman number):
** children evaluated one after the other, each result held while the next
** is computed. */
static int32_t expr_regs(const rf_qp_expr *e)
{
    if (!e) return 0;
    if (e->nargs == 0) return 1;
    int32_t best = 0;
    for (int32_t i = 0; i < e->nargs; i++) {
        int32_t r = expr_regs(e->args[i]) + i; /* i earlier results still held */
        if (r > best) best = r;
    }
    return best;
}

/* Registers: the columns a thread loads and stores (4 bytes a register; the
** columns the generated code touches, as harmony/hir_bytes.c counts them),
** the expression temporaries live at once, a fixed cost for indexing, and
** for a total its accumulators (a 128-bit sum per aggregate). */
static int32_t kernel_regs(const rf_hir_program *p, const rf_hir_kernel *k)
{
    int64_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1}, bi = 0, bo = 0;
    if (k->nin <= 8) {
        rf_hir_kernel_bytes(p, k, ones, 0, 1, &bi, &bo);
    } else {
        bo = tuple_bytes(p->vars[k->out]);
        for (int32_t i = 0; i < k->nin; i++) bi += tuple_bytes(p->vars[k->in[i]]);
    }
    /* the filter first, then each output while the earlier ones are held */
    int32_t nodes = expr_regs(k->filter);
    for (int32_t i = 0; i < k->nouts; i++)
        if (expr_regs(k->outs[i]) + i > nodes) nodes = expr_regs(k->outs[i]) + i;
    int32_t acc = is_total(k) && k->kind == RF_HIR_REDUCE ? 4 * k->naggs : 0;
    return 8 + (int32_t)((bi + bo) / 4) + nodes + acc;
}

/* Expression nodes a kernel's code holds: a fused kernel is one function for
** NVRTC, whose time grows faster than the function (1,000 chained additions
** take 1.4 s of CPU, 2,000 take 8 s), so a group holds at most
** MAX_GROUP_NODES of them (one kernel may hold more: it has no choice). */
#define MAX_GROUP_NODES 1200

static int64_t expr_nodes(const rf_qp_expr *e)
{
    if (!e) return 0;
    int64_t n = 1;
    for (int32_t i = 0; i < e->nargs; i++) n += expr_nodes(e->args[i]);
    return n;
}

static int64_t kernel_nodes(const rf_hir_kernel *k)
{
    int64_t n = expr_nodes(k->filter);
    for (int32_t i = 0; i < k->nouts; i++) n += expr_nodes(k->outs[i]);
    return n;
}

typedef struct vec {
    void *items;
    int32_t n, cap;
} vec;

static void *vpush(vec *v, size_t size)
{
    if (v->n == v->cap) {
        int32_t ncap = v->cap ? v->cap * 2 : 16;
        void *m = rf_realloc(v->items, (size_t)ncap * size);
        if (!m) return NULL;
        v->items = m;
        v->cap = ncap;
    }
    void *slot = (char *)v->items + (size_t)v->n++ * size;
    memset(slot, 0, size);
    return slot;
}

static int32_t find(int32_t *parent, int32_t x)
{
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

/* Per variable, where it was last written and read so far in the block
** (positions), with each position's previous one for the same variable:
** the scans below look only at the accesses they need, so a block of n
** kernels costs about n, not n * n. Reset after each block where touched. */
typedef struct access_index {
    int32_t *last_write; /* per variable: position of its latest writer, -1 */
    int32_t *last_read;  /* per variable: latest reader occurrence, -1 */
    uint8_t *reduced;    /* per variable: a group index that a grouped total's reduce reads, 0 */
} access_index;

static rf_status analyze_block(const rf_hir_program *p, const rf_wv_budget *b, int32_t bi, vec *groups, vec *edges,
                               access_index *ax)
{
    const rf_hir_block *bl = p->blocks[bi];
    int32_t n = bl->nkernels;
    if (!n) return RF_OK;
    int64_t nocc = 0;
    for (int32_t j = 0; j < n; j++) nocc += bl->kernels[j]->nin;
    int32_t *parent = rf_malloc((size_t)n * sizeof *parent);
    int32_t *group_of = rf_malloc((size_t)n * sizeof *group_of);
    int32_t *wprev = rf_malloc((size_t)n * sizeof *wprev);          /* previous writer of the same variable */
    int32_t *rprev = rf_malloc((size_t)(nocc + 1) * sizeof *rprev); /* previous reader occurrence */
    int32_t *rpos = rf_malloc((size_t)(nocc + 1) * sizeof *rpos);   /* occurrence -> position */
    int32_t *ebegin = rf_malloc((size_t)(n + 1) * sizeof *ebegin);  /* edges into j: [ebegin[j], ebegin[j+1]) */
    int32_t *gfirst = rf_malloc((size_t)n * sizeof *gfirst);        /* per group opened here: its first position */
    int32_t *open = rf_malloc((size_t)n * sizeof *open);            /* per candidate root: the open group */
    int64_t *gnodes = rf_malloc((size_t)n * sizeof *gnodes);        /* per group opened here: its expression nodes */
    int32_t first_edge = edges->n, first_group = groups->n;
    rf_status st = RF_OK;
    if (!parent || !group_of || !wprev || !rprev || !rpos || !ebegin || !gfirst || !open || !gnodes) goto oom;
    for (int32_t i = 0; i < n; i++) parent[i] = i;
    for (int32_t j = 0; j < n; j++) {
        const rf_hir_kernel *c = bl->kernels[j];
        if (c->kind == RF_HIR_REDUCE && c->idx >= 0 && is_grouped_total(p, c)) ax->reduced[c->idx] = 1;
    }
    /* producer-consumer edges, and input dependences between readers of a
    ** variable not produced before them in this block */
    int64_t occ = 0;
    for (int32_t j = 0; j < n; j++) {
        const rf_hir_kernel *c = bl->kernels[j];
        ebegin[j] = edges->n;
        for (int32_t a = 0; a < c->nin; a++) {
            int32_t v = c->in[a], prod = ax->last_write[v];
            rf_wv_edge *e = vpush(edges, sizeof *e);
            if (!e) goto oom;
            e->block = bi;
            e->consumer = j;
            e->var = v;
            if (prod >= 0) {
                e->producer = prod;
                int32_t made = ax->last_write[c->in[0]]; /* what made c's rows, in this block */
                e->dep = classify(p, bl->kernels[prod], c, made >= 0 && bl->kernels[made]->kind == RF_HIR_MAP,
                                  c->kind == RF_HIR_GROUP && ax->reduced[c->out], &e->why);
            } else {
                /* the previous reader of the same outside input, if any */
                int32_t prev = ax->last_read[v] >= 0 ? rpos[ax->last_read[v]] : -1;
                if (prev < 0) {
                    edges->n--; /* first reader of an outside input: no edge */
                    continue;
                }
                e->producer = prev;
                e->dep = RF_WV_INPUT;
                e->why = is_global(c->kind) || is_global(bl->kernels[prev]->kind)
                             ? "a reader is a global operation: reading the input once saves nothing"
                             : NULL;
                if (e->why) e->dep = RF_WV_KERNEL;
            }
            if (e->dep != RF_WV_KERNEL) parent[find(parent, e->producer)] = find(parent, j);
        }
        /* j's accesses become visible to the kernels after it */
        for (int32_t a = 0; a < c->nin; a++, occ++) {
            int32_t v = c->in[a];
            rpos[occ] = j;
            rprev[occ] = ax->last_read[v];
            ax->last_read[v] = (int32_t)occ;
        }
        wprev[j] = ax->last_write[c->out];
        ax->last_write[c->out] = j;
    }
    ebegin[n] = edges->n;
    /* Algorithm 2: walk the schedule; a kernel joins the open group of its
    ** candidate set while the budget holds and nothing scheduled in between
    ** depends on the group or is depended on by the kernel. */
    for (int32_t i = 0; i < n; i++) group_of[i] = -1;
    for (int32_t i = 0; i < n; i++) open[i] = -1;
    for (int32_t j = 0; j < n; j++) {
        const rf_hir_kernel *k = bl->kernels[j];
        int32_t root = find(parent, j);
        int32_t regs = kernel_regs(p, k);
        int64_t nodes = kernel_nodes(k);
        /* shared memory: a probe stages a tile of its left keys per CTA;
        ** map stages (join_map, gather_map included: they read rows through
        ** their index) stage nothing, as the GPU code generator makes them */
        int32_t smem = 0;
        if (k->kind == RF_HIR_JOIN_INDEX || k->kind == RF_HIR_ANTI_INDEX)
            for (int32_t c = 0; c < k->nkeys; c++) {
                rf_type t = p->vars[k->in[0]]->types[k->lkeys[c]];
                smem += b->cta_threads * (rf_val_type_size(t) ? rf_val_type_size(t) : 4);
            }
        /* a grouped total where a map's rows feed it (an edge into it fuses) */
        int grouped = 0;
        for (int32_t e = ebegin[j]; e < ebegin[j + 1] && is_grouped_total(p, k); e++)
            if (((rf_wv_edge *)edges->items)[e].dep != RF_WV_KERNEL) grouped = 1;
        if (grouped) smem += grouped_smem(k);
        int32_t g = open[root];
        int ok = 0;
        const char *why = NULL;
        if (g >= 0) {
            rf_wv_group *G = &((rf_wv_group *)groups->items)[g];
            int32_t first = gfirst[g - first_group];
            ok = 1;
            /* the fused kernel runs where the group's first kernel was
            ** scheduled: j moves up past the kernels in between, so none of
            ** them may write what j reads, or read or write what j writes.
            ** The accesses before j of each variable, newest first, down to
            ** the group's first position. */
            for (int32_t q = ax->last_write[k->out]; q > first && ok; q = wprev[q])
                if (q < j && group_of[q] != g) ok = 0; /* writes what j writes */
            for (int32_t o = ax->last_read[k->out]; o >= 0 && rpos[o] > first && ok; o = rprev[o])
                if (rpos[o] < j && group_of[rpos[o]] != g) ok = 0; /* reads what j writes */
            for (int32_t a = 0; a < k->nin && ok; a++)
                for (int32_t q = ax->last_write[k->in[a]]; q > first && ok; q = wprev[q])
                    if (q < j && group_of[q] != g) ok = 0; /* writes what j reads */
            if (!ok) why = "a kernel scheduled in between depends on the group";
            /* stages run one after the other in a fused kernel: registers are
            ** reused, and a thread keeps the values it passes on (about 4) */
            /* a total adds only its accumulators to the stage whose rows it sums */
            /* (a grouped total adds its keys: its sums are in shared memory) */
            int32_t after = is_total(k)  ? G->regs + (k->kind == RF_HIR_REDUCE ? 2 + 4 * k->naggs : 0)
                            : grouped    ? G->regs + (k->kind == RF_HIR_REDUCE ? 4 + 2 * k->ngroup : 0)
                                         : (G->regs > regs ? G->regs : regs) + 4;
            if (ok && after > b->regs) ok = 0, why = "over the register budget";
            else if (ok && G->smem + smem > b->smem) ok = 0, why = "over the shared-memory budget";
            else if (ok && gnodes[g - first_group] + nodes > MAX_GROUP_NODES)
                ok = 0, why = "over the code-size budget (NVRTC's time grows faster than a kernel's code)";
            if (ok) {
                int32_t *nk = rf_realloc(G->kernels, (size_t)(G->nkernels + 1) * sizeof *nk);
                if (!nk) goto oom;
                G->kernels = nk;
                G->kernels[G->nkernels++] = k->id;
                G->regs = after;
                G->smem += smem;
                gnodes[g - first_group] += nodes;
                group_of[j] = g;
            }
        }
        if (!ok) {
            rf_wv_group *G = vpush(groups, sizeof *G);
            if (!G) goto oom;
            G->block = bi;
            G->kernels = rf_malloc(sizeof *G->kernels);
            if (!G->kernels) goto oom;
            G->kernels[0] = k->id;
            G->nkernels = 1;
            G->regs = regs;
            G->smem = smem;
            group_of[j] = groups->n - 1;
            gfirst[groups->n - 1 - first_group] = j;
            gnodes[groups->n - 1 - first_group] = nodes;
            open[root] = groups->n - 1;
            /* the budget reasons name the edges into this kernel */
            for (int32_t e = ebegin[j]; e < ebegin[j + 1] && why; e++) {
                rf_wv_edge *E = &((rf_wv_edge *)edges->items)[e];
                if (E->consumer == j && E->dep != RF_WV_KERNEL && !E->why) E->why = why;
            }
        }
    }
    /* mark fused edges; convert positions to kernel ids */
    for (int32_t e = first_edge; e < edges->n; e++) {
        rf_wv_edge *E = &((rf_wv_edge *)edges->items)[e];
        E->fused = group_of[E->producer] == group_of[E->consumer];
        if (E->fused) E->why = NULL;
        else if (!E->why) E->why = "not in one group";
        E->producer = bl->kernels[E->producer]->id;
        E->consumer = bl->kernels[E->consumer]->id;
    }
    goto done;
oom:
    st = RF_ENOMEM;
done:
    for (int32_t j = 0; j < n; j++) {
        const rf_hir_kernel *c = bl->kernels[j];
        if (c->idx >= 0) ax->reduced[c->idx] = 0;
        ax->last_write[c->out] = -1;
        for (int32_t a = 0; a < c->nin; a++) ax->last_read[c->in[a]] = -1;
    }
    free(open);
    free(gnodes);
    free(gfirst);
    free(ebegin);
    free(rpos);
    free(rprev);
    free(wprev);
    free(parent);
    free(group_of);
    return st;
}

rf_status rf_wv_analyze(const rf_hir_program *p, const rf_wv_budget *bud, rf_wv_plan **out, rf_diags *d)
{
    (void)d;
    *out = NULL;
    /* 96 registers: the thesis's 64 was its GPU's limit per thread (63);
    ** sm_80 and later allow 255, and at 96 an SM (64 K registers) still
    ** holds two CTAs of 256 threads */
    rf_wv_budget b = {96, 48 * 1024, 256};
    if (bud) b = *bud;
    vec groups = {0}, edges = {0};
    access_index ax;
    ax.last_write = rf_malloc(((size_t)p->nvars + 1) * sizeof *ax.last_write);
    ax.last_read = rf_malloc(((size_t)p->nvars + 1) * sizeof *ax.last_read);
    ax.reduced = rf_calloc((size_t)p->nvars + 1, sizeof *ax.reduced);
    rf_status st = ax.last_write && ax.last_read && ax.reduced ? RF_OK : RF_ENOMEM;
    for (int32_t v = 0; !st && v < p->nvars; v++) ax.last_write[v] = ax.last_read[v] = -1;
    for (int32_t bi = 0; bi < p->nblocks && !st; bi++) st = analyze_block(p, &b, bi, &groups, &edges, &ax);
    free(ax.last_write);
    free(ax.last_read);
    free(ax.reduced);
    rf_wv_plan *w = st ? NULL : rf_calloc(1, sizeof *w);
    if (!w) {
        for (int32_t i = 0; i < groups.n; i++) free(((rf_wv_group *)groups.items)[i].kernels);
        free(groups.items);
        free(edges.items);
        return st ? st : RF_ENOMEM;
    }
    w->groups = groups.items;
    w->ngroups = groups.n;
    w->edges = edges.items;
    w->nedges = edges.n;
    *out = w;
    return RF_OK;
}

void rf_wv_plan_free(rf_wv_plan *w)
{
    if (!w) return;
    for (int32_t i = 0; i < w->ngroups; i++) free(w->groups[i].kernels);
    free(w->groups);
    free(w->edges);
    free(w);
}

static const rf_hir_kernel *kernel_by_id(const rf_hir_program *p, int32_t id)
{
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->id == id) return p->blocks[b]->kernels[j];
    return NULL;
}

void rf_wv_print(const rf_hir_program *p, const rf_wv_plan *w, rf_buf *out)
{
    int32_t fused = 0;
    for (int32_t i = 0; i < w->ngroups; i++) fused += w->groups[i].nkernels > 1;
    rf_buf_printf(out, "kernel weaver: %d groups (%d fusing several kernels), %d edges\n", w->ngroups, fused, w->nedges);
    int32_t block = -1;
    for (int32_t i = 0; i < w->ngroups; i++) {
        const rf_wv_group *g = &w->groups[i];
        if (g->block != block) {
            block = g->block;
            rf_buf_printf(out, "block %d:\n", block);
        }
        rf_buf_printf(out, "  group %d (~%d registers, %d bytes shared):", i, g->regs, g->smem);
        for (int32_t k = 0; k < g->nkernels; k++) {
            const rf_hir_kernel *kk = kernel_by_id(p, g->kernels[k]);
            rf_buf_printf(out, " k%d %s", g->kernels[k], kk ? rf_hir_kind_name(kk->kind) : "?");
            if (k + 1 < g->nkernels) rf_buf_putc(out, ',');
        }
        rf_buf_putc(out, '\n');
    }
    rf_buf_puts(out, "edges:\n");
    for (int32_t e = 0; e < w->nedges; e++) {
        const rf_wv_edge *E = &w->edges[e];
        rf_buf_printf(out, "  k%d -> k%d via %s: %s dependence, %s", E->producer, E->consumer, p->vars[E->var]->name,
                      rf_wv_dep_name(E->dep), E->fused ? "fused" : "not fused: ");
        if (!E->fused) rf_buf_puts(out, E->why ? E->why : "");
        rf_buf_putc(out, '\n');
    }
}
