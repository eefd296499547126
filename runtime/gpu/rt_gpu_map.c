/*
** runtime/gpu/rt_gpu_map.c: MAP, JOIN_MAP and GATHER_MAP kernels on the GPU.
**
** Owns: a map-like kernel's operands in the argument block (its sides'
** columns and row indices, string constants, string tables, the dictionary
** for string work over two columns), and the run of one such kernel: one
** pass (rf_map.cuh's map_onepass) where it filters or drops repeats, else
** the write pass alone; errors worded by the host.
*/
#include "rt_gpu_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A map-like kernel's operands: the columns of its (up to) two sides and
** their row indices (0: row r itself). */
void rf_gx_args_sides(gx *x, rf_gpu_args *a, const int32_t vars[2], const gptr rows[2])
{
    a->r0 = rows[0];
    a->r1 = rows[1];
    for (int s = 0; s < 2; s++) {
        if (vars[s] < 0) continue;
        const gval *v = &x->vals[vars[s]];
        for (int32_t c = 0; c < x->p->vars[vars[s]]->ncols; c++) {
            if (s == 0)
                a->c0[c] = colp(v, c);
            else
                a->c1[c] = colp(v, c);
        }
    }
}

/* The codes of a kernel plan's string constants, into RF_A_CONST(*a, at ...). */
rf_status rf_gx_args_consts(gx *x, const rf_gpu_kplan *pl, rf_gpu_args *a, int32_t at)
{
    rf_status st = RF_OK;
    for (int32_t i = 0; i < pl->nconst && !st; i++) {
        const rf_qp_expr *c = pl->consts[i];
        uint32_t code = 0;
        st = rf_rt_dict_intern(x->dict, c->c.s ? c->c.s : "", c->c.s ? c->c.slen : 0, &code);
        RF_A_CONST(*a, at + i) = code;
    }
    return st;
}

/* The string tables of kernel k's plan (its islands over the n rows of
** its sides) into tabs[slot0 ...] and their slots in a. */
rf_status rf_gx_args_rowstr(gx *x, const rf_gpu_kplan *pl, rf_gpu_args *a)
{
    /* string work over two columns reads the rows' strings from the
    ** dictionary's device copy: every code a column can hold is there */
    if (pl->nrowstr <= 0 || RF_A_DICT_OFFSETS(*a)) return RF_OK;
    rf_status st = rf_gpu_dict_sync(&x->str, 0);
    if (st == RF_EDEVMEM) x->dict_unfit = 1;
    RF_A_DICT_OFFSETS(*a) = x->str.dd.off.p;
    RF_A_DICT_BYTES(*a) = x->str.dd.bytes.p;
    return st;
}

rf_status rf_gx_args_islands(gx *x, const rf_hir_kernel *k, const int32_t vars[2], const gptr rows[2], int64_t n,
                             int32_t slot0, gbuf *tabs, rf_gpu_args *a)
{
    const rf_gpu_kplan *pl = &x->plans[k->id];
    rf_status st = RF_OK;
    for (int32_t j = 0; j < pl->nisland && !st; j++) {
        const rf_gpu_island *is = &pl->islands[j];
        int32_t sv = is->side >= 0 ? vars[is->side] : -1;
        int32_t slot = slot0 + j;
        int64_t base = 0;
        st = rf_gx_build_island(x, k, is, sv >= 0 ? &x->vals[sv] : NULL, is->side >= 0 ? rows[is->side] : 0, n,
                                &tabs[slot], &base);
        RF_A_ISLAND_TABLE(*a, slot) = tabs[slot].p;
        RF_A_ISLAND_BASE(*a, slot) = (uint64_t)base;
    }
    return st;
}

/* Does k drop its output's repeated rows itself this time (fuse.c,
** rf_gpu_dedupe_cols: only a unique reads them)? Over as many rows as the
** unique's walk over runs would take (runs_min_rows). */
int rf_gx_repeats_dropped(gx *x, const rf_hir_kernel *k, int64_t n)
{
    return x->plans[k->id].ndedupe > 0 && n > 0 && n >= x->tune.gpu_runs_min;
}

/* The tiles of the one-pass kernels (rf_base.cuh's tiles_of): 4 x
** RF_GPU_TILE rows each. */
static int64_t onepass_tiles(int64_t n) { return (n + 4 * RF_GPU_TILE - 1) / (4 * RF_GPU_TILE); }

rf_status rf_gx_k_map(gx *x, const rf_hir_kernel *k)
{
    int32_t vars[2] = {k->in[0], k->kind == RF_HIR_JOIN_MAP ? k->in[1] : -1};
    const gval *idx = k->kind == RF_HIR_MAP ? NULL : &x->vals[k->idx];
    gptr rows[2] = {idx ? idx->a.p : 0, idx && vars[1] >= 0 ? idx->b.p : 0};
    int64_t n = idx ? idx->nrows : x->vals[k->in[0]].nrows;
    const rf_gpu_kplan *pl = &x->plans[k->id];
    if (!pl->gpu) return rf_gx_map_on_host(x, k, vars, idx, n);
    const rf_hir_var *ov = x->p->vars[k->out];
    gval out;
    memset(&out, 0, sizeof out);
    if (n == 0) {
        rf_gx_var_set(x, k->out, &out);
        return RF_OK;
    }
    rf_gpu_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    rf_gx_args_sides(x, &a, vars, rows);
    rf_status st = RF_OK;
    if (!st) st = rf_gx_args_consts(x, pl, &a, 0);
    gbuf tabs[RF_GPU_MAX_ISLANDS];
    memset(tabs, 0, sizeof tabs);
    if (!st) st = rf_gx_args_islands(x, k, vars, rows, n, 0, tabs, &a);
    if (!st) st = rf_gx_args_rowstr(x, pl, &a);
    gbuf err = {0, 0}, pos = {0, 0};
    int64_t count = n;
    char name[64];
    int dedupe = k->kind == RF_HIR_MAP && rf_gx_repeats_dropped(x, k, n); /* (a join_map: only fused, rf_gx_k_fused) */
    /* a filter or a walk: one kernel (rf_map.cuh's map_onepass; on the H100
    ** at SF 7 p3's map took 1.01 ms in one pass against 1.27 ms in two,
    ** docs/BENCHMARKS.md, ninth session); else the write pass alone */
    int onepass = k->filter || dedupe;
    int64_t bad = -1;
    if (!st && !onepass) st = rf_gx_err_word(x, &err);
    RF_A_MAP_ERR(a) = err.p;
    if (!st && onepass) {
        /* one kernel (rf_map.cuh's map_onepass) into room for every row: the
        ** tiles' words, then the tile counter, the rows written, the walk's
        ** status word and an error word, the last three read back at once */
        int64_t nt = onepass_tiles(n);
        st = galloc(x, (uint64_t)(nt + 4) * 8, &pos);
        if (!st) st = rf_gx_rel_alloc(x, &out, ov->types, ov->ncols, n, n);
        for (int32_t c = 0; c < ov->ncols && !st; c++) a.o[c] = colp(&out, c);
        RF_A_MAP_TILES(a) = pos.p;
        RF_A_MAP_ERR(a) = pos.p + (uint64_t)(nt + 3) * 8;
        RF_A_MAP_CTL(a) = pos.p + (uint64_t)nt * 8;
        RF_A_MAP_RUNS_STATUS(a) = pos.p + (uint64_t)(nt + 2) * 8;
        snprintf(name, sizeof name, "rfk%d_onepass_smem", k->id);
        for (int pass = 0; pass < 2 && !st; pass++) {
            /* the second pass only where the walk gave way: every row kept */
            RF_A_RUNS_WALK(a) = dedupe ? RUNS_LIMIT : 0;
            st = x->g.ops->memset8(&x->g, pos.p, 0, (uint64_t)(nt + 3) * 8);
            if (!st) st = x->g.ops->memset8(&x->g, RF_A_MAP_ERR(a), 0xff, 8);
            if (!st) st = rf_gx_launch(x, name, nt * RF_GPU_TILE, &a);
            int64_t w[3] = {0, 0, -1};
            if (!st) st = x->g.ops->d2h(&x->g, w, RF_A_MAP_CTL(a) + 8, sizeof w);
            count = w[0];
            bad = w[2];
            if (!dedupe || w[1] == 0) break;
            dedupe = 0;
        }
        out.nrows = count;
    } else if (!onepass) {
        if (!st) st = rf_gx_rel_alloc(x, &out, ov->types, ov->ncols, count, count);
        for (int32_t c = 0; c < ov->ncols && !st; c++) a.o[c] = colp(&out, c);
        snprintf(name, sizeof name, "rfk%d_write", k->id);
        if (!st && count > 0) st = rf_gx_launch(x, name, n, &a);
        if (!st) st = get_i64(x, err.p, &bad);
    }
    if (!st && bad != -1) st = rf_gx_map_error(x, k, vars, rows, n, bad);
    gfree(x, &err);
    gfree(x, &pos);
    for (int32_t j = 0; j < RF_GPU_MAX_ISLANDS; j++) gfree(x, &tabs[j]);
    if (st) {
        rf_gx_val_clear(x, &out, ov->ncols);
        return st;
    }
    out.distinct = dedupe;
    rf_gx_var_set(x, k->out, &out);
    return RF_OK;
}
