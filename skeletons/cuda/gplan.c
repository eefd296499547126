/*
** skeletons/cuda/gplan.c: a program's GPU plans, made once and stored.
**
** Owns: rf_gpu_plan (every kernel's rf_gpu_kplan, the fused kernels of
** rf_gpu_fplan, and the hashes of the source generated from them), made by
** `redfox compile` (or in process, for a program compiled by the run that
** runs it), and the GPLN section of .rfx files that carries it to
** `redfox run`, which follows it instead of planning again. docs/RFX.md
** specifies the layout. The decoder checks every index, count and slot
** against the program (HIRS) and the argument block's limits, so that a
** damaged or crafted section is an error naming the file, never a read or
** write out of bounds on the host or the GPU. That a valid section is the
** plan this redfox would make is what its generator tag (rf_gpu_abi_tag)
** and the file's checksums stand for: a plan of another generator is
** refused as stale.
**
** Expressions are referred to by their position in a preorder walk of the
** kernel's filter, then its outputs in order (the walk codegen_plan.c plans
** in), so the section holds no pointers.
*/
#include "rf_gpu_codegen.h"
#include "rf_rfx.h"

#include <stdlib.h>
#include <string.h>

#define GPLN_VERSION 1

static int is_map(rf_hir_kind k) { return k == RF_HIR_MAP || k == RF_HIR_JOIN_MAP || k == RF_HIR_GATHER_MAP; }

static int32_t kernel_count(const rf_hir_program *p)
{
    int32_t nk = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->id >= nk) nk = p->blocks[b]->kernels[j]->id + 1;
    return nk;
}

void rf_gpu_plan_free(rf_gpu_plan *pl)
{
    if (!pl) return;
    free(pl->k);
    rf_gpu_fplan_free(pl->f);
    rf_arena_free(&pl->arena);
    free(pl);
}

static rf_gpu_plan *plan_new(int32_t nk)
{
    rf_gpu_plan *pl = rf_calloc(1, sizeof *pl);
    if (!pl) return NULL;
    rf_arena_init(&pl->arena);
    pl->nkernels = nk;
    pl->k = rf_calloc((size_t)nk + 1, sizeof *pl->k);
    if (!pl->k) {
        rf_gpu_plan_free(pl);
        return NULL;
    }
    for (int32_t i = 0; i < nk; i++) pl->k[i].gpu = 1;
    return pl;
}

static rf_loc kernel_loc(const rf_hir_program *p, const rf_hir_kernel *k)
{
    return rf_mkloc(k->loc.file ? k->loc.file : p->source, k->loc.line, k->loc.col);
}

/* The first kernel that writes v and names a rule; a writer that names none
** (a predicate's unique of its rules' rows) points through its inputs'
** writers, depth levels deep at most. NULL: none. */
static const rf_hir_kernel *rule_writing(const rf_hir_program *p, int32_t v, int depth)
{
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->out != v) continue;
            if (k->loc.line) return k;
            for (int32_t i = 0; i < k->nin && depth > 0; i++) {
                const rf_hir_kernel *w = k->in[i] != v ? rule_writing(p, k->in[i], depth - 1) : NULL;
                if (w) return w;
            }
        }
    return NULL;
}

/* Where an error about variable v points: the rule that derives it (the
** first writer that names one, rule_writing), else the first kernel with a
** rule that reads it (an input: the first rule that reads it), else the
** program. */
static rf_loc var_loc(const rf_hir_program *p, int32_t v)
{
    const rf_hir_kernel *w = rule_writing(p, v, 8);
    if (w) return kernel_loc(p, w);
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            for (int32_t i = 0; i < k->nin && k->loc.line; i++)
                if (k->in[i] == v) return kernel_loc(p, k);
        }
    return rf_mkloc(p->source, 0, 0);
}

rf_status rf_gpu_plan_check(const rf_hir_program *p, rf_diags *d)
{
    for (int32_t v = 0; v < p->nvars; v++)
        if (p->vars[v]->kind == RF_HIR_V_REL && p->vars[v]->ncols > RF_GPU_MAXC) {
            rf_error(d, var_loc(p, v),
                     "the GPU backend takes relations of at most %d columns; `%s` has %d (use --device cpu)",
                     RF_GPU_MAXC, p->vars[v]->name, p->vars[v]->ncols);
            return RF_EUSER;
        }
    return RF_OK;
}

rf_status rf_gpu_plan_build(const rf_hir_program *p, int hash, rf_gpu_plan **out, rf_diags *d)
{
    *out = NULL;
    rf_status st = rf_gpu_plan_check(p, d);
    if (st) return st;
    rf_gpu_plan *pl = plan_new(kernel_count(p));
    if (!pl) return RF_ENOMEM;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->id >= 0 && k->id < pl->nkernels) rf_gpu_kplan_build(p, k, &pl->k[k->id]);
        }
    st = rf_gpu_fplan_build(p, 1, &pl->f, d);
    /* the sources these plans make, with and without the fused kernels:
    ** what a PTX0 section must have been compiled from to serve a run */
    for (int fuse = 0; fuse < 2 && !st && hash; fuse++) {
        rf_buf src;
        rf_buf_init(&src);
        st = rf_gpu_codegen(p, pl, fuse, &src, d);
        if (!st) rf_gpu_hash128(src.data ? src.data : "", (uint64_t)src.len, pl->src_hash[fuse]);
        rf_buf_free(&src);
    }
    if (st) {
        rf_gpu_plan_free(pl);
        return st;
    }
    pl->hashed = hash;
    *out = pl;
    return RF_OK;
}

/* ---- expressions by position ------------------------------------------------ */

typedef struct walk {
    const rf_qp_expr **e;
    int32_t n, cap;
    int oom;
} walk;

static void walk_add(walk *w, const rf_qp_expr *e)
{
    if (!e || w->oom) return;
    if (w->n == w->cap) {
        int32_t nc = w->cap ? w->cap * 2 : 32;
        const rf_qp_expr **ne = rf_realloc(w->e, (size_t)nc * sizeof *ne);
        if (!ne) {
            w->oom = 1;
            return;
        }
        w->e = ne;
        w->cap = nc;
    }
    w->e[w->n++] = e;
    for (int32_t i = 0; i < e->nargs; i++) walk_add(w, e->args[i]);
}

static void walk_kernel(walk *w, const rf_hir_kernel *k)
{
    w->n = 0;
    walk_add(w, k->filter);
    for (int32_t i = 0; i < k->nouts; i++) walk_add(w, k->outs[i]);
}

static uint32_t pos_of(const walk *w, const rf_qp_expr *e)
{
    for (int32_t i = 0; i < w->n; i++)
        if (w->e[i] == e) return (uint32_t)i;
    return UINT32_MAX; /* not the kernel's: the decoder refuses it */
}

/* ---- encoding ------------------------------------------------------------------- */

static void put_opt(rf_buf *b, const char *s)
{
    rf_rfx_put_u8(b, s ? 1 : 0);
    if (s) rf_rfx_put_cstr(b, s);
}

rf_status rf_gpu_plan_encode(const rf_hir_program *p, const rf_gpu_plan *pl, rf_buf *b)
{
    if (!pl->hashed) return RF_EINTERNAL; /* a stored plan names its sources */
    const rf_hir_kernel **by_id = rf_calloc((size_t)pl->nkernels + 1, sizeof *by_id);
    if (!by_id) return RF_ENOMEM;
    for (int32_t bi = 0; bi < p->nblocks; bi++)
        for (int32_t j = 0; j < p->blocks[bi]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[bi]->kernels[j];
            if (k->id >= 0 && k->id < pl->nkernels) by_id[k->id] = k;
        }
    walk w = {0};
    rf_rfx_put_u32(b, GPLN_VERSION);
    rf_rfx_put_cstr(b, rf_gpu_abi_tag());
    for (int f = 0; f < 2; f++) {
        rf_rfx_put_u64(b, pl->src_hash[f][0]);
        rf_rfx_put_u64(b, pl->src_hash[f][1]);
    }
    rf_rfx_put_u64(b, (uint64_t)pl->nkernels);
    for (int32_t id = 0; id < pl->nkernels; id++) {
        const rf_gpu_kplan *kp = &pl->k[id];
        if (by_id[id]) walk_kernel(&w, by_id[id]);
        else w.n = 0;
        rf_rfx_put_u8(b, (uint8_t)kp->gpu);
        put_opt(b, kp->gpu ? NULL : kp->why);
        rf_rfx_put_u64(b, (uint64_t)kp->nconst);
        for (int32_t i = 0; i < kp->nconst; i++) rf_rfx_put_u32(b, pos_of(&w, kp->consts[i]));
        rf_rfx_put_u64(b, (uint64_t)kp->nisland);
        for (int32_t i = 0; i < kp->nisland; i++) {
            rf_rfx_put_u32(b, pos_of(&w, kp->islands[i].e));
            rf_rfx_put_i32(b, kp->islands[i].side);
            rf_rfx_put_i32(b, kp->islands[i].col);
            rf_rfx_put_u8(b, (uint8_t)kp->islands[i].dev);
        }
        rf_rfx_put_u64(b, (uint64_t)kp->nrowstr);
        for (int32_t i = 0; i < kp->nrowstr; i++) rf_rfx_put_u32(b, pos_of(&w, kp->rowstr[i]));
        rf_rfx_put_u64(b, (uint64_t)kp->ndedupe);
        for (int32_t i = 0; i < kp->ndedupe; i++) rf_rfx_put_i32(b, kp->dedupe[i]);
    }
    free(w.e);
    free(by_id);
    const rf_gpu_fplan *f = pl->f;
    rf_rfx_put_u64(b, (uint64_t)f->nunits);
    for (int32_t u = 0; u < f->nunits; u++) {
        const rf_gpu_funit *U = &f->units[u];
        rf_rfx_put_i32(b, U->block);
        rf_rfx_put_i32(b, U->wgroup);
        rf_rfx_put_i32(b, U->src ? U->src->id : -1);
        rf_rfx_put_u8(b, (uint8_t)U->dedupe);
        rf_rfx_put_u64(b, (uint64_t)U->n);
        for (int32_t m = 0; m < U->n; m++) {
            const rf_gpu_fmember *mb = &U->m[m];
            rf_rfx_put_i32(b, mb->k->id);
            rf_rfx_put_i32(b, mb->parent);
            rf_rfx_put_i32(b, mb->mat);
            rf_rfx_put_i32(b, mb->ocol);
            rf_rfx_put_i32(b, mb->kconst);
            rf_rfx_put_i32(b, mb->kisland);
            rf_rfx_put_u8(b, (uint8_t)mb->has_children);
        }
        rf_rfx_put_i32(b, U->nmat);
        rf_rfx_put_u64(b, (uint64_t)U->ntot);
        for (int32_t t = 0; t < U->ntot; t++) {
            rf_rfx_put_i32(b, U->tot[t].group->id);
            rf_rfx_put_i32(b, U->tot[t].reduce->id);
            rf_rfx_put_i32(b, U->tot[t].stage);
            rf_rfx_put_i32(b, U->tot[t].acc);
        }
        rf_rfx_put_i32(b, U->nacc);
    }
    for (int32_t id = 0; id < pl->nkernels; id++) {
        rf_rfx_put_i32(b, id < f->nkernels ? f->group_of[id] : -1);
        put_opt(b, id < f->nkernels ? f->why[id] : NULL);
    }
    return b->oom ? RF_ENOMEM : RF_OK;
}

/* ---- decoding ------------------------------------------------------------------- */

typedef struct dec {
    rf_rfx_rd rd;
    const rf_hir_program *p;
    rf_gpu_plan *pl;
    const rf_hir_kernel **by_id;
    int32_t *block_of; /* by kernel id */
    walk w;
} dec;

static const char *get_opt(dec *x)
{
    uint8_t has = 0;
    char *s = NULL;
    if (!rf_rfx_get_u8(&x->rd, &has)) return NULL;
    if (has > 1) rf_rfx_rd_fail(&x->rd);
    if (has == 1 && !rf_rfx_get_cstr(&x->rd, &x->pl->arena, &s)) return NULL;
    return s;
}

static int32_t get_count(dec *x, int32_t max, uint64_t elem)
{
    uint64_t n = 0;
    if (!rf_rfx_get_count(&x->rd, (uint64_t)max, elem, &n)) return 0;
    return (int32_t)n;
}

static const rf_qp_expr *get_expr(dec *x)
{
    uint32_t i = 0;
    if (!rf_rfx_get_u32(&x->rd, &i)) return NULL;
    if (i >= (uint32_t)x->w.n) {
        rf_rfx_rd_fail(&x->rd);
        return NULL;
    }
    return x->w.e[i];
}

static int32_t side_cols(const dec *x, const rf_hir_kernel *k, int32_t side)
{
    if (side < 0 || side >= k->nin || side > 1 || k->in[side] < 0 || k->in[side] >= x->p->nvars) return -1;
    return x->p->vars[k->in[side]]->ncols;
}

static void get_kplan(dec *x, int32_t id)
{
    rf_gpu_kplan *kp = &x->pl->k[id];
    const rf_hir_kernel *k = x->by_id[id];
    if (k) walk_kernel(&x->w, k);
    else x->w.n = 0;
    if (x->w.oom) {
        x->rd.oom = 1;
        rf_rfx_rd_fail(&x->rd);
        return;
    }
    uint8_t u8 = 0;
    rf_rfx_get_u8(&x->rd, &u8);
    kp->gpu = u8;
    if (u8 > 1) rf_rfx_rd_fail(&x->rd);
    kp->why = get_opt(x);
    if ((kp->why == NULL) != (kp->gpu == 1)) rf_rfx_rd_fail(&x->rd); /* a reason exactly for a kernel on the host */
    int map = k && is_map(k->kind);
    /* a kernel the GPU runs reads and writes at most RF_GPU_MAXC columns a side */
    if (map && kp->gpu) {
        for (int32_t s = 0; s < (k->kind == RF_HIR_JOIN_MAP ? 2 : 1); s++)
            if (side_cols(x, k, s) < 0 || side_cols(x, k, s) > RF_GPU_MAXC) rf_rfx_rd_fail(&x->rd);
        if (x->p->vars[k->out]->ncols > RF_GPU_MAXC) rf_rfx_rd_fail(&x->rd);
    }
    kp->nconst = get_count(x, map ? RF_GPU_MAX_CONSTS : 0, 4);
    for (int32_t i = 0; i < kp->nconst; i++) {
        const rf_qp_expr *e = get_expr(x);
        if (e && (e->kind != RF_QP_E_CONST || e->type != RF_TYPE_STRING)) rf_rfx_rd_fail(&x->rd);
        kp->consts[i] = e;
    }
    kp->nisland = get_count(x, map ? RF_GPU_MAX_ISLANDS : 0, 13);
    for (int32_t i = 0; i < kp->nisland; i++) {
        rf_gpu_island *is = &kp->islands[i];
        is->e = get_expr(x);
        rf_rfx_get_i32(&x->rd, &is->side);
        rf_rfx_get_i32(&x->rd, &is->col);
        rf_rfx_get_u8(&x->rd, &u8);
        is->dev = u8;
        if (!rf_rfx_rd_ok(&x->rd)) return;
        /* a table is indexed by the codes of one string column, or has one entry */
        if (is->side == -1 ? is->col != -1
                           : side_cols(x, k, is->side) < 0 || is->col < 0 || is->col >= side_cols(x, k, is->side) ||
                                 x->p->vars[k->in[is->side]]->types[is->col] != RF_TYPE_STRING)
            rf_rfx_rd_fail(&x->rd);
        if (u8 > 1 || (is->dev && !rf_gpu_island_on_device(is))) rf_rfx_rd_fail(&x->rd);
    }
    kp->nrowstr = get_count(x, map ? RF_GPU_MAX_ISLANDS : 0, 4);
    for (int32_t i = 0; i < kp->nrowstr; i++) {
        const rf_qp_expr *e = get_expr(x);
        if (e && !rf_gpu_row_on_device(e)) rf_rfx_rd_fail(&x->rd);
        kp->rowstr[i] = e;
    }
    kp->ndedupe = get_count(x, map ? RF_GPU_MAXC : 0, 4);
    for (int32_t i = 0; i < kp->ndedupe; i++) {
        rf_rfx_get_i32(&x->rd, &kp->dedupe[i]);
        if (kp->dedupe[i] < 0 || kp->dedupe[i] >= side_cols(x, k, 0)) rf_rfx_rd_fail(&x->rd);
    }
}

/* A kernel of the program by id, of kind a or b, in block blk (-1: any). */
static const rf_hir_kernel *get_kernel(dec *x, int32_t blk, rf_hir_kind a, rf_hir_kind b, rf_hir_kind c)
{
    int32_t id = -1;
    if (!rf_rfx_get_i32(&x->rd, &id)) return NULL;
    const rf_hir_kernel *k = id >= 0 && id < x->pl->nkernels ? x->by_id[id] : NULL;
    if (!k || (k->kind != a && k->kind != b && k->kind != c) || (blk >= 0 && x->block_of[id] != blk)) {
        rf_rfx_rd_fail(&x->rd);
        return NULL;
    }
    return k;
}

/* Marks kernel k as part of unit u (stage m); a kernel in two units is an error. */
static void claim(dec *x, const rf_hir_kernel *k, int32_t u, int32_t m)
{
    rf_gpu_fplan *f = x->pl->f;
    if (!k) return;
    if (f->unit_of[k->id] >= 0) rf_rfx_rd_fail(&x->rd);
    f->unit_of[k->id] = u;
    f->member_of[k->id] = m;
}

static void get_unit(dec *x, int32_t u)
{
    rf_gpu_fplan *f = x->pl->f;
    rf_gpu_funit *U = &f->units[u];
    memset(U, 0, sizeof *U);
    U->id = u;
    uint8_t u8 = 0;
    rf_rfx_get_i32(&x->rd, &U->block);
    rf_rfx_get_i32(&x->rd, &U->wgroup);
    if (U->block < 0 || U->block >= x->p->nblocks) {
        rf_rfx_rd_fail(&x->rd);
        return;
    }
    int32_t src = -1;
    uint64_t at = x->rd.pos;
    rf_rfx_get_i32(&x->rd, &src);
    if (src >= 0) {
        x->rd.pos = at; /* read again as a kernel */
        U->src = get_kernel(x, U->block, RF_HIR_JOIN_INDEX, RF_HIR_ANTI_INDEX, RF_HIR_ANTI_INDEX);
        claim(x, U->src, u, -1);
    } else if (src != -1) {
        rf_rfx_rd_fail(&x->rd);
    }
    rf_rfx_get_u8(&x->rd, &u8);
    U->dedupe = u8;
    if (u8 > 1 || (u8 && !U->src)) rf_rfx_rd_fail(&x->rd);
    U->n = get_count(x, RF_GPU_FUSE_MAX, 25);
    if (U->n < 1) rf_rfx_rd_fail(&x->rd);
    int32_t kc = 0, ki = 0, nmat = 0, ocol = 0;
    for (int32_t m = 0; m < U->n && rf_rfx_rd_ok(&x->rd); m++) {
        rf_gpu_fmember *mb = &U->m[m];
        mb->k = get_kernel(x, U->block, RF_HIR_MAP, RF_HIR_JOIN_MAP, RF_HIR_GATHER_MAP);
        rf_rfx_get_i32(&x->rd, &mb->parent);
        rf_rfx_get_i32(&x->rd, &mb->mat);
        rf_rfx_get_i32(&x->rd, &mb->ocol);
        rf_rfx_get_i32(&x->rd, &mb->kconst);
        rf_rfx_get_i32(&x->rd, &mb->kisland);
        rf_rfx_get_u8(&x->rd, &u8);
        mb->has_children = u8;
        if (!rf_rfx_rd_ok(&x->rd)) return;
        claim(x, mb->k, u, m);
        const rf_gpu_kplan *kp = &x->pl->k[mb->k->id];
        int32_t nout = x->p->vars[mb->k->out]->ncols;
        /* stages run on the GPU, read the input or an earlier stage, hold
        ** no chain the generator writes as code of its own, and their
        ** slots stay inside the argument block */
        if (!kp->gpu || u8 > 1 || mb->parent < -1 || mb->parent >= m || mb->kconst != kc || mb->kisland != ki ||
            (mb->mat != -1 && mb->mat != nmat) || (mb->mat >= 0 && (mb->ocol != ocol || ocol > RF_GPU_MAXC - nout)) ||
            (mb->parent >= 0 && (mb->k->kind != RF_HIR_MAP || kp->nisland)) || rf_gpu_kernel_long_chain(mb->k))
            rf_rfx_rd_fail(&x->rd);
        kc += kp->nconst;
        ki += kp->nisland;
        if (mb->mat >= 0) {
            nmat++;
            ocol += nout;
        }
    }
    /* the shapes the executor and the generator take: stages reading the
    ** input all read the same one (a join source's pairs or rows, or one
    ** relation through one index), a later stage reads its parent's rows */
    for (int32_t m = 0; m < U->n && rf_rfx_rd_ok(&x->rd); m++) {
        const rf_hir_kernel *k = U->m[m].k, *h = U->m[0].k;
        int ok;
        if (U->m[m].parent >= 0)
            ok = k->nin >= 1 && k->in[0] == U->m[U->m[m].parent].k->out;
        else if (U->src)
            ok = k->idx == U->src->out && k->in[0] == U->src->in[0] &&
                 (U->src->kind == RF_HIR_JOIN_INDEX ? k->kind == RF_HIR_JOIN_MAP && k->in[1] == U->src->in[1]
                                                    : k->kind == RF_HIR_GATHER_MAP);
        else
            ok = h->kind == k->kind && h->idx == k->idx && h->in[0] == k->in[0] &&
                 (k->kind != RF_HIR_JOIN_MAP || h->in[1] == k->in[1]) && U->m[0].parent < 0;
        if (!ok) rf_rfx_rd_fail(&x->rd);
    }
    /* a stage's registers are declared where a later stage (or a total) reads them */
    for (int32_t m = 0; m < U->n && rf_rfx_rd_ok(&x->rd); m++)
        if (U->m[m].parent >= 0 && !U->m[U->m[m].parent].has_children) rf_rfx_rd_fail(&x->rd);
    if (kc > RF_GPU_MAX_CONSTS || ki > RF_GPU_MAX_ISLANDS) rf_rfx_rd_fail(&x->rd);
    rf_rfx_get_i32(&x->rd, &U->nmat);
    if (U->nmat != nmat) rf_rfx_rd_fail(&x->rd);
    U->ntot = get_count(x, RF_GPU_FUSE_TOTALS, 16);
    for (int32_t t = 0; t < U->ntot && rf_rfx_rd_ok(&x->rd); t++) {
        rf_gpu_ftotal *T = &U->tot[t];
        T->group = get_kernel(x, U->block, RF_HIR_GROUP, RF_HIR_GROUP, RF_HIR_GROUP);
        T->reduce = get_kernel(x, U->block, RF_HIR_REDUCE, RF_HIR_REDUCE, RF_HIR_REDUCE);
        rf_rfx_get_i32(&x->rd, &T->stage);
        rf_rfx_get_i32(&x->rd, &T->acc);
        if (!rf_rfx_rd_ok(&x->rd)) return;
        claim(x, T->group, u, RF_GPU_MEMBER_TOTAL);
        claim(x, T->reduce, u, RF_GPU_MEMBER_TOTAL);
        if (T->stage < 0 || T->stage >= U->n || T->acc < 0 || T->reduce->naggs > RF_GPU_FUSE_AGGS ||
            !U->m[T->stage].has_children || T->reduce->ngroup > RF_GPU_FUSE_GKEYS ||
            T->group->ngroup != T->reduce->ngroup || (T->reduce->ngroup && U->src) ||
            (T->reduce->ngroup > 0) != (U->tot[0].reduce->ngroup > 0))
            rf_rfx_rd_fail(&x->rd);
        if (!rf_rfx_rd_ok(&x->rd)) return;
        rf_gpu_ftotal_layout(T);
        for (int32_t i = 0; i < T->reduce->ngroup && rf_rfx_rd_ok(&x->rd); i++)
            if (T->group->group[i] != T->reduce->group[i] || T->reduce->group[i] < 0 ||
                T->reduce->group[i] >= x->p->vars[T->reduce->in[0]]->ncols)
                rf_rfx_rd_fail(&x->rd);
        const rf_hir_kernel *sk = U->m[T->stage < 0 || T->stage >= U->n ? 0 : T->stage].k;
        /* the group and the reduce over the stage's rows, the reduce through the group's index */
        if (T->group->in[0] != sk->out || T->reduce->in[0] != sk->out || T->reduce->idx != T->group->out)
            rf_rfx_rd_fail(&x->rd);
        for (int32_t i = 0; i < T->reduce->naggs && rf_rfx_rd_ok(&x->rd); i++)
            if (T->reduce->aggs[i].col >= x->p->vars[sk->out]->ncols) rf_rfx_rd_fail(&x->rd);
    }
    rf_rfx_get_i32(&x->rd, &U->nacc);
    if (U->ntot > 0 && U->tot[0].ngroup) {
        /* grouped totals: their regions one after the other, their tables within the budget */
        int64_t pos = 0, smem = 0;
        for (int32_t t = 0; t < U->ntot; t++) {
            if (U->tot[t].acc != pos) rf_rfx_rd_fail(&x->rd);
            pos += rf_gpu_ftotal_words(&U->tot[t]);
            smem += rf_gpu_ftotal_smem_words(&U->tot[t]);
        }
        if (U->nacc != pos || smem * 8 > RF_GPU_FUSE_GSMEM) rf_rfx_rd_fail(&x->rd);
        return;
    }
    if (U->nacc < 0 || U->nacc > RF_GPU_FUSE_TOTALS * (1 + 2 * RF_GPU_FUSE_AGGS)) rf_rfx_rd_fail(&x->rd);
    for (int32_t t = 0; t < U->ntot && rf_rfx_rd_ok(&x->rd); t++)
        if (U->tot[t].acc > U->nacc - 1 - 2 * U->tot[t].reduce->naggs) rf_rfx_rd_fail(&x->rd);
}

static rf_status bad(const char *file, dec *x, rf_diags *d, const char *what)
{
    rf_error(d, rf_mkloc(file, 0, 0), "the GPU plans (section GPLN) are %s: recompile the program (redfox compile)",
             what);
    (void)x;
    return RF_EUSER;
}

rf_status rf_gpu_plan_decode(const char *file, const rf_hir_program *p, const void *data, uint64_t size,
                             rf_gpu_plan **out, rf_diags *d)
{
    *out = NULL;
    dec x;
    memset(&x, 0, sizeof x);
    x.p = p;
    rf_rfx_rd_init(&x.rd, data, size);
    uint32_t version = 0;
    const char *gen = NULL;
    uint64_t ngen = 0;
    rf_rfx_get_u32(&x.rd, &version);
    if (rf_rfx_rd_ok(&x.rd) && version != GPLN_VERSION) {
        rf_error(d, rf_mkloc(file, 0, 0),
                 "the GPU plans (section GPLN) are of format version %u, this redfox reads version %d: recompile "
                 "the program with this redfox (redfox compile)",
                 version, GPLN_VERSION);
        return RF_EUSER;
    }
    rf_rfx_get_str(&x.rd, &gen, &ngen);
    const char *tag = rf_gpu_abi_tag();
    if (rf_rfx_rd_ok(&x.rd) && (ngen != strlen(tag) || memcmp(gen, tag, (size_t)ngen))) {
        rf_error(d, rf_mkloc(file, 0, 0),
                 "the GPU plans (section GPLN) are stale: made by another version of the GPU code generator (%.*s; "
                 "this redfox's is %s): recompile the program with this redfox (redfox compile)",
                 (int)(ngen > 64 ? 64 : ngen), gen, tag);
        return RF_EUSER;
    }
    uint64_t hash[2][2];
    for (int f = 0; f < 2; f++) {
        rf_rfx_get_u64(&x.rd, &hash[f][0]);
        rf_rfx_get_u64(&x.rd, &hash[f][1]);
    }
    int32_t nk = kernel_count(p);
    uint64_t nkf = 0;
    rf_rfx_get_u64(&x.rd, &nkf);
    if (!rf_rfx_rd_ok(&x.rd)) return bad(file, &x, d, "truncated");
    if (nkf != (uint64_t)nk) return bad(file, &x, d, "not of this program (another count of kernels)");
    rf_status st = RF_OK;
    x.pl = plan_new(nk);
    x.by_id = rf_calloc((size_t)nk + 1, sizeof *x.by_id);
    x.block_of = rf_calloc((size_t)nk + 1, sizeof *x.block_of);
    if (!x.pl || !x.by_id || !x.block_of) st = RF_ENOMEM;
    if (!st) {
        memcpy(x.pl->src_hash, hash, sizeof hash);
        x.pl->hashed = 1;
        for (int32_t b = 0; b < p->nblocks; b++)
            for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
                const rf_hir_kernel *k = p->blocks[b]->kernels[j];
                if (k->id >= 0 && k->id < nk) {
                    x.by_id[k->id] = k;
                    x.block_of[k->id] = b;
                }
            }
        for (int32_t id = 0; id < nk && rf_rfx_rd_ok(&x.rd); id++) get_kplan(&x, id);
        /* the fused kernels */
        rf_gpu_fplan *f = rf_calloc(1, sizeof *f);
        x.pl->f = f;
        if (f) {
            f->nkernels = nk;
            f->unit_of = rf_malloc((size_t)(nk + 1) * sizeof *f->unit_of);
            f->member_of = rf_calloc((size_t)nk + 1, sizeof *f->member_of);
            f->group_of = rf_malloc((size_t)(nk + 1) * sizeof *f->group_of);
            f->why = rf_calloc((size_t)nk + 1, sizeof *f->why);
        }
        if (!f || !f->unit_of || !f->member_of || !f->group_of || !f->why) st = RF_ENOMEM;
        for (int32_t i = 0; !st && i < nk; i++) f->unit_of[i] = f->group_of[i] = -1;
        /* a unit holds at least one kernel, so no more units than kernels */
        int32_t nu = st ? 0 : get_count(&x, nk, 37);
        if (!st && nu > 0 && !(f->units = rf_calloc((size_t)nu, sizeof *f->units))) st = RF_ENOMEM;
        if (!st) f->nunits = nu;
        for (int32_t u = 0; !st && u < nu && rf_rfx_rd_ok(&x.rd); u++) get_unit(&x, u);
        for (int32_t id = 0; !st && id < nk && rf_rfx_rd_ok(&x.rd); id++) {
            rf_rfx_get_i32(&x.rd, &f->group_of[id]);
            f->why[id] = get_opt(&x);
            if (f->group_of[id] < -1) rf_rfx_rd_fail(&x.rd);
        }
    }
    free(x.w.e);
    free(x.by_id);
    free(x.block_of);
    if (!st && x.rd.oom) st = RF_ENOMEM;
    if (!st && !rf_rfx_rd_at_end(&x.rd)) {
        char what[96];
        snprintf(what, sizeof what, "malformed (at byte %llu of %llu)",
                 (unsigned long long)(x.rd.err ? x.rd.err_pos : x.rd.pos), (unsigned long long)size);
        st = bad(file, &x, d, what);
    }
    if (st) {
        rf_gpu_plan_free(x.pl);
        return st;
    }
    *out = x.pl;
    return RF_OK;
}
