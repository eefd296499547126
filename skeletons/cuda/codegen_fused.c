/*
** skeletons/cuda/codegen_fused.c: the fused kernels' source (rfg<u>_*).
**
** Owns: the CUDA C++ of one Kernel Weaver fused kernel (rf_gpu_funit, made
** by fuse.c): its stages in one pass over the input, the up-front loads of
** the columns that decide a row's fate, the count or flags pass and the
** write pass, a join or anti-join probe consumed as it is found, and the
** totals kernel that sums rows in registers, shared memory and atomics (or,
** grouped, in a table of groups per block: rf_reduce.cuh gt_*).
*/
#include "codegen_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


/* A fused total (rf_gpu_ftotal): where its stage passes, the row is counted
** in acc[t.acc] and each total or average's argument is added to its
** 128-bit sum acc[t.acc + 1 + 2i] (low), acc[t.acc + 2 + 2i] (high), in the
** thread's registers. Counts need no sum of their own. */
/* Cache entries of a grouped total per thread (rf::gt_cache): four for a
** kernel's only one (q01's four groups never leave the registers), fewer
** where there are several. */
/* The blocks of a grouped totals kernel resident on an SM at least
** (__launch_bounds__'s second argument; gen_total_kernel) */
#define RF_GPU_GT_MIN_BLOCKS 2

static int32_t cache_entries(const rf_gpu_funit *u) { return u->ntot == 1 ? 4 : u->ntot == 2 ? 2 : 1; }

/* Whether every group column of grouped total t fits 32 bits (dates,
** string codes, flags): its cache entries then hold and compare the keys as
** u32, one register and one compare each (q01's two flags). */
static int narrow_keys(const rf_hir_program *p, const rf_gpu_funit *u, const rf_gpu_ftotal *t)
{
    const rf_hir_var *ov = p->vars[u->m[t->stage].k->out];
    for (int32_t i = 0; i < t->ngroup; i++) {
        rf_type ty = ov->types[t->reduce->group[i]];
        if (ty != RF_TYPE_DATE && ty != RF_TYPE_STRING && ty != RF_TYPE_BOOL) return 0;
    }
    return 1;
}

static void gen_total_rows(const rf_hir_program *p, const rf_gpu_funit *u, const rf_gpu_ftotal *t, rf_buf *b)
{
    const rf_hir_kernel *r = t->reduce;
    if (t->ngroup) {
        int32_t off = 0; /* its table in the block's shared memory: after the earlier totals' */
        for (const rf_gpu_ftotal *e = u->tot; e < t; e++) off += rf_gpu_ftotal_smem_words(e);
        /* a grouped total: acc holds the block's tables of groups and the
        ** thread's caches in front of them (rf::gt_cache); the keys as the
        ** cache compares them, and widened to u64 as the table holds them */
        const char *kt = narrow_keys(p, u, t) ? "rf::u32" : "rf::u64";
        rf_buf_printf(b, "        if (acc && p%d) {\n            GC &gc = *(GC *)acc;\n            const %s ck[%d] = {",
                      t->stage, kt, t->ngroup);
        for (int32_t i = 0; i < t->ngroup; i++)
            rf_buf_printf(b, "%s(%s)m%d_%d", i ? ", " : "", kt, t->stage, r->group[i]);
        rf_buf_printf(b, "};\n            const rf::u64 gk[%d] = {", t->ngroup);
        for (int32_t i = 0; i < t->ngroup; i++)
            rf_buf_printf(b, "%s(rf::u64)(rf::i64)m%d_%d", i ? ", " : "", t->stage, r->group[i]);
        rf_buf_printf(b, "};\n            const rf::i64 gv[%d] = {", t->nsum ? t->nsum : 1);
        for (int32_t i = 0; i < t->nsum; i++) rf_buf_printf(b, "%s(rf::i64)m%d_%d", i ? ", " : "", t->stage, t->sum_col[i]);
        if (!t->nsum) rf_buf_puts(b, "0");
        rf_buf_printf(b, "};\n            gc.c%d.row(gc.s + %d, (rf::u64 *)a.p[3] + %d, ck, gk, r, gv);\n"
                         "        }\n",
                      (int)(t - u->tot), off, t->acc);
        return;
    }
    rf_buf_printf(b, "        if (acc && p%d) {\n            acc[%d]++;\n", t->stage, t->acc);
    for (int32_t i = 0; i < r->naggs; i++) {
        const rf_qp_agg *ag = &r->aggs[i];
        if (ag->fn == RF_AGG_COUNT) continue;
        int32_t lo = t->acc + 1 + 2 * i;
        rf_buf_printf(b,
                      "            {\n                rf::i64 v = (rf::i64)m%d_%d;\n                rf::u64 o = acc[%d];\n"
                      "                acc[%d] = o + (rf::u64)v;\n"
                      "                acc[%d] += (v < 0 ? ~0ull : 0ull) + (acc[%d] < o ? 1ull : 0ull);\n            }\n",
                      t->stage, ag->col, lo, lo, lo + 1, lo);
    }
    rf_buf_puts(b, "        }\n");
}

/* Adds every total's words of src[] to dst[] by atomics (shared or global
** memory), at the given indentation: the count, then each sum's two words. */
static void gen_total_adds(const rf_gpu_funit *u, rf_buf *b, const char *dst, const char *src, const char *ind)
{
    for (int32_t t = 0; t < u->ntot; t++) {
        const rf_gpu_ftotal *T = &u->tot[t];
        rf_buf_printf(b, "%sif (%s[%d]) atomicAdd(&%s[%d], %s[%d]);\n", ind, src, T->acc, dst, T->acc, src, T->acc);
        for (int32_t i = 0; i < T->reduce->naggs; i++) {
            if (T->reduce->aggs[i].fn == RF_AGG_COUNT) continue;
            int32_t lo = T->acc + 1 + 2 * i;
            rf_buf_printf(b, "%sif (%s[%d] || %s[%d]) rf::add128(&%s[%d], &%s[%d], %s[%d], %s[%d]);\n", ind, src, lo, src,
                          lo + 1, dst, lo, dst, lo + 1, src, lo, src, lo + 1);
        }
    }
}

/* The totals' kernel: every thread sums its rows in registers
** (G<id>::row), the CTA adds its threads' sums in shared memory, and
** one thread per CTA adds the CTA's to the result p[3] (layout: gen_total_rows) by
** atomics: sums of integers, so the result does not depend on the order.
** p[0] error words; the rest of the arguments as the flags pass has them. */
static void gen_total_kernel(const rf_gpu_funit *u, rf_buf *b, int row4)
{
    int32_t nacc = u->nacc;
    if (u->ntot > 0 && u->tot[0].ngroup) {
        /* grouped totals (fuse.c: then all of the kernel's totals are): each
        ** one's table of groups in the block's shared memory (rf::gt_*),
        ** zeroed, filled by the rows, merged into its global table in p[3].
        ** A block whose table ran out of records stops (its count, the
        ** records claimed, passes the limit): the host discards them all */
        int32_t words = 0;
        rf_buf cond;
        rf_buf_init(&cond);
        for (int32_t t = 0; t < u->ntot; t++) {
            rf_buf_printf(&cond, " && *(volatile rf::u64 *)(s + %d) <= %d", words, RF_GPU_FUSE_GROUPS);
            words += rf_gpu_ftotal_smem_words(&u->tot[t]);
        }
        /* at least two blocks an SM (at most 128 registers a thread):
        ** unbounded, the driver's compiler gave q01's kernel 160 registers,
        ** one block and 8 warps an SM (12.5 % occupancy, latency-bound:
        ** ncu on an H100); the cache's cold paths (a new group, a spill to
        ** the table) are where the registers go, not the rows' adds */
        rf_buf_printf(b,
                      "extern \"C\" __global__ void __launch_bounds__(%d, %d) rfg%d_total_smem(rf::Args a)\n{\n"
                      "    __shared__ rf::u64 s[%d];\n"
                      "    for (int i = threadIdx.x; i < %d; i += blockDim.x) s[i] = 0;\n"
                      "    __syncthreads();\n"
                      "    const rf::i64 T = rf::nthreads();\n"
                      "    rf::i64 r = rf::tid();\n",
                      RF_GPU_TILE, RF_GPU_GT_MIN_BLOCKS, u->id, words, words);
        rf_buf_printf(b, "    G%d::GC gc;\n    gc.s = s;\n", u->id);
        for (int32_t t = 0; t < u->ntot; t++) rf_buf_printf(b, "    gc.c%d.init();\n", t);
        if (row4)
            rf_buf_printf(b, "    for (; r + 3 * T < a.n%s; r += 4 * T) G%d::row4<false>(a, r, T, (rf::u64 *)&gc);\n",
                          rf_buf_cstr(&cond), u->id);
        rf_buf_printf(b, "    for (; r < a.n%s; r += T) G%d::row<false>(a, r, (rf::u64 *)&gc);\n", rf_buf_cstr(&cond), u->id);
        rf_buf_free(&cond);
        int32_t off = 0;
        for (int32_t t = 0; t < u->ntot; t++) {
            rf_buf_printf(b, "    gc.c%d.flush(s + %d);\n", t, off);
            off += rf_gpu_ftotal_smem_words(&u->tot[t]);
        }
        rf_buf_puts(b, "    __syncthreads();\n");
        off = 0;
        for (int32_t t = 0; t < u->ntot; t++) {
            const rf_gpu_ftotal *T = &u->tot[t];
            rf_buf_printf(b, "    rf::gt_flush<%d, %d, %d, %d>(s + %d, (rf::u64 *)a.p[3] + %d);\n", T->ngroup, T->nsum,
                          RF_GPU_FUSE_GHEADS, RF_GPU_FUSE_GROUPS, off, T->acc);
            off += rf_gpu_ftotal_smem_words(T);
        }
        rf_buf_puts(b, "}\n\n");
        return;
    }
    rf_buf_printf(b,
                  "extern \"C\" __global__ void __launch_bounds__(%d) rfg%d_total_smem(rf::Args a)\n{\n"
                  "    __shared__ rf::u64 s[%d];\n"
                  "    rf::u64 acc[%d];\n"
                  "    for (int i = 0; i < %d; i++) acc[i] = 0;\n"
                  "    for (int i = threadIdx.x; i < %d; i += blockDim.x) s[i] = 0;\n"
                  "    __syncthreads();\n"
                  /* four rows per round, and without a join source
                  ** G::row4 issues the four rows' loads before the first
                  ** row's stages run (the runtime launches half the
                  ** blocks: fused_totals in rt_gpu_fused.c) */
                  "    const rf::i64 T = rf::nthreads();\n"
                  "    rf::i64 r = rf::tid();\n"
                  "    for (; r + 3 * T < a.n; r += 4 * T) {\n",
                  RF_GPU_TILE, u->id, nacc, nacc, nacc, nacc);
    if (row4)
        rf_buf_printf(b, "        G%d::row4<false>(a, r, T, acc);\n", u->id);
    else
        rf_buf_printf(b, "        G%d::row<false>(a, r, acc);\n"
                         "        G%d::row<false>(a, r + T, acc);\n"
                         "        G%d::row<false>(a, r + 2 * T, acc);\n"
                         "        G%d::row<false>(a, r + 3 * T, acc);\n",
                      u->id, u->id, u->id, u->id);
    rf_buf_printf(b, "    }\n"
                     "    for (; r < a.n; r += T) G%d::row<false>(a, r, acc);\n",
                  u->id);
    gen_total_adds(u, b, "s", "acc", "    ");
    rf_buf_puts(b, "    __syncthreads();\n"
                   "    if (threadIdx.x == 0) {\n"
                   "        rf::u64 *out = (rf::u64 *)a.p[3];\n");
    gen_total_adds(u, b, "out", "s", "        ");
    rf_buf_puts(b, "    }\n}\n\n");
}

/* The input columns a later stage's filter reads through its parents'
** registers, where each parent on the way copies the column unchanged
** (a chain of selects): they decide a row's fate like the first filter's
** columns, so they are loaded with them (pre[m]: what stage m, which reads
** the input, loads up front besides its filter's columns). */
typedef struct prelist {
    const rf_qp_expr *e[RF_GPU_MAXC];
    int32_t n;
} prelist;

static void trace_filter_cols(const rf_gpu_funit *u, int32_t m, const rf_qp_expr *e, prelist *pre)
{
    if (!e) return;
    if (e->kind == RF_QP_E_COL && e->side == 0) {
        int32_t par = u->m[m].parent;
        const rf_hir_kernel *pk = par >= 0 ? u->m[par].k : NULL;
        if (!pk || e->col < 0 || e->col >= pk->nouts) return;
        const rf_qp_expr *o = pk->outs[e->col];
        if (o->kind != RF_QP_E_COL) return;
        if (u->m[par].parent >= 0) {
            trace_filter_cols(u, par, o, pre);
        } else if (o->side >= 0 && o->side < 2 && pre[par].n < RF_GPU_MAXC) {
            pre[par].e[pre[par].n++] = o;
        }
        return;
    }
    for (int32_t i = 0; i < e->nargs; i++) trace_filter_cols(u, m, e->args[i], pre);
}

/* One kernel for the stages of a fused unit (rf_gpu_fplan): every row of the
** input runs the stages in schedule order (stages()), a stage only where the
** stage it reads passed; values a later stage reads stay in registers
** m<stage>_<col>. A written output s is stored at w[s] in the write pass
** (W) and hit[s] says whether the row reached it.
**
** Without a join source, a row is a row of the input (through r0/r1 for an
** index): the flags pass writes one flag per written output, the host scans
** them, the write pass recomputes the rows that some written output keeps.
**   p[0] u64 error word per stage; p[1] u8 flags, written output s at
**   s * (n + 1); p[2] i64 positions, the same layout; o[] the written
**   outputs' columns, one after the other.
** With an anti-join source, a row is a left row and the stages run where it
** has no match (as above otherwise: flags, scan, write; c1 the right side's
** columns, the build side in p[4..7] and x[0], m right rows).
** With a join source (a probe), a row is a left row and the stages run for
** each of its matches in ascending right row: the count pass writes per
** written output the left row's count, the host scans them, the write pass
** writes at the scanned positions. So rows come ordered by left row, then
** right row, as the unfused join_index + join_map give them.
**   c0 / c1 the left and right relations (no r0 / r1); n left rows, m right
**   rows; p[0] error words; p[1] i64 counts (layout as above); p[2] i64
**   positions; p[4..6] the build side (hashes sorted by bucket, their rows
**   or null, the bucket starts), x[0..2] the hash's parameters (rf_join.cuh
**   struct jh). */
/* A join-source unit's probe of row r as generated code: the key columns
** (keys), then pr started and peeked (build: the sorted hashes and rows). */
static void gen_probe_open(rf_buf *b, const char *keys, const char *sig, const char *build)
{
    rf_buf_printf(b, "%s        rf::probe<KS_%s> pr;\n"
                     "        pr.start(lk, (const rf::i64 *)a.p[6], rf::jh::of(a), r);\n"
                     "        pr.peek(%s, a.m);\n",
                  keys, sig, build);
}

rf_status rf_cg_gen_fused_kernel(const rf_hir_program *p, const rf_gpu_plan *plan, const rf_gpu_funit *u, rf_buf *b,
                                 rf_diags *d)
{
    int32_t nm = u->nmat > 0 ? u->nmat : 1;
    /* without a join source, a row's up-front loads (below) are a struct
    ** of their own (L: load, then pin, then stages): the totals kernel
    ** issues four rows' loads before the first row's stages run. Inside
    ** stages, a failing operation's store to the error words may alias the
    ** columns, so the compiler cannot move the next row's loads above it */
    int split = !u->src;
    int bad = 0, nv = 0;
    /* the input columns that decide a row's fate or that every row needs
    ** (the stages reading the input all read the same row): the filter's of
    ** each such stage, those later filters read through unchanged copies
    ** (trace_filter_cols), and where such a stage has no filter, its used
    ** outputs'. Loaded and pinned before the first stage runs, a row waits
    ** once for all of them, not once per stage or branch. (Columns only a
    ** passing row's outputs need stay where they are: a selective filter then
    ** saves their bytes.) */
    uint8_t rset[2][RF_GPU_MAXC], pinned[2][RF_GPU_MAXC], need[RF_GPU_FUSE_MAX][RF_GPU_MAXC], in[2][RF_GPU_MAXC];
    uint8_t always[2][RF_GPU_MAXC]; /* pinned in every pass, not only the write pass */
    int rv[2][RF_GPU_MAXC];
    rf_type rt[2][RF_GPU_MAXC];
    memset(rset, 0, sizeof rset);
    memset(pinned, 0, sizeof pinned);
    memset(always, 0, sizeof always);
    memset(rv, 0, sizeof rv);
    memset(rt, 0, sizeof rt);
    rf_gpu_funit_needs(p, u, need, in);
    prelist pre[RF_GPU_FUSE_MAX];
    memset(pre, 0, sizeof pre);
    for (int32_t m = 0; m < u->n; m++)
        if (u->m[m].parent >= 0) trace_filter_cols(u, m, u->m[m].k->filter, pre);
    rf_buf hb; /* the up-front loads and pins, as the top of stages has them */
    rf_buf_init(&hb);
    for (int32_t m = 0; m < u->n; m++) {
        const rf_gpu_fmember *mb = &u->m[m];
        if (mb->parent >= 0) continue;
        const rf_gpu_kplan *pl = &plan->k[mb->k->id];
        rf_cg_gen g = {.b = &hb, .pl = pl, .nv = nv, .regs_of = -1, .kconst = mb->kconst, .kisland = mb->kisland};
        memcpy(g.hset, rset, sizeof rset);
        memcpy(g.hv, rv, sizeof rv);
        memcpy(g.ht, rt, sizeof rt);
        rf_cg_hoist_loads(&g, mb->k->filter);
        for (int32_t i = 0; i < pre[m].n; i++) rf_cg_hoist_loads(&g, pre[m].e[i]);
        uint8_t before[2][RF_GPU_MAXC];
        memcpy(before, pinned, sizeof before);
        rf_cg_pin_hoisted(&g, pinned, "");
        for (int s = 0; s < 2; s++)
            for (int c = 0; c < RF_GPU_MAXC; c++) always[s][c] |= pinned[s][c] && !before[s][c];
        for (int32_t c = 0; c < mb->k->nouts && c < RF_GPU_MAXC && !mb->k->filter; c++)
            if (need[m][c]) rf_cg_hoist_loads(&g, mb->k->outs[c]);
        /* outputs only: the flags or count pass (W false) of a kernel
        ** without totals does not need them at all */
        rf_cg_pin_hoisted(&g, pinned, u->ntot ? "" : "if (W) ");
        if (u->ntot) memcpy(always, pinned, sizeof always);
        memcpy(rset, g.hset, sizeof rset);
        memcpy(rv, g.hv, sizeof rv);
        memcpy(rt, g.ht, sizeof rt);
        nv = g.nv;
        bad |= g.bad;
    }
    rf_buf_printf(b, "struct G%d {\n", u->id);
    if (u->ntot > 0 && u->tot[0].ngroup) {
        /* grouped totals: what the totals kernel hands its rows through acc,
        ** the block's tables and the thread's caches in front of them */
        rf_buf_puts(b, "    struct GC {\n        rf::u64 *s;\n");
        for (int32_t t = 0; t < u->ntot; t++)
            rf_buf_printf(b, "        rf::gt_cache<%d, %d, %d, %d, %d, %s> c%d;\n", u->tot[t].ngroup, u->tot[t].nsum,
                          RF_GPU_FUSE_GHEADS, RF_GPU_FUSE_GROUPS, cache_entries(u),
                          narrow_keys(p, u, &u->tot[t]) ? "rf::u32" : "rf::u64", t);
        rf_buf_puts(b, "    };\n");
    }
    if (split) {
        rf_buf_puts(b, "    struct L {\n");
        for (int s = 0; s < 2; s++)
            for (int c = 0; c < RF_GPU_MAXC; c++)
                if (rset[s][c]) rf_buf_printf(b, "        %s v%d;\n", rf_cg_ctype(rt[s][c]), rv[s][c]);
        rf_buf_puts(b, "    };\n"
                       "    static __device__ __forceinline__ void load(const rf::Args &a, rf::i64 q0, rf::i64 q1, L &l)\n    {\n"
                       "        (void)a; (void)q0; (void)q1; (void)l;\n");
        for (int s = 0; s < 2; s++)
            for (int c = 0; c < RF_GPU_MAXC; c++) {
                if (!rset[s][c]) continue;
                if (rt[s][c] == RF_TYPE_BOOL)
                    rf_buf_printf(b, "        l.v%d = rf::ld<rf::u8>(a.c%d[%d], q%d) != 0;\n", rv[s][c], s, c, s);
                else
                    rf_buf_printf(b, "        l.v%d = rf::ld<%s>(a.c%d[%d], q%d);\n", rv[s][c], rf_cg_stype(rt[s][c]), s, c, s);
            }
        rf_buf_puts(b, "    }\n"
                       "    template <bool W> static __device__ __forceinline__ void pin(const L &l)\n    {\n"
                       "        (void)l;\n");
        for (int s = 0; s < 2; s++)
            for (int c = 0; c < RF_GPU_MAXC; c++)
                if (pinned[s][c]) rf_buf_printf(b, "        %srf::pin(l.v%d);\n", always[s][c] ? "" : "if (W) ", rv[s][c]);
        rf_buf_puts(b, "    }\n");
    }
    rf_buf_printf(b, "    template <bool W>\n"
                     "    static __device__ __forceinline__ void stages(const rf::Args &a, rf::i64 r, rf::i64 q0, rf::i64 q1,\n"
                     "                                                  const rf::i64 *w, bool *hit, rf::u64 *acc%s)\n    {\n"
                     "        (void)r; (void)q0; (void)q1; (void)w; (void)hit; (void)acc;\n",
                  split ? ", const L &l" : "");
    if (split) {
        for (int s = 0; s < 2; s++)
            for (int c = 0; c < RF_GPU_MAXC; c++)
                if (rset[s][c]) rf_buf_printf(b, "        %s v%d = l.v%d;\n", rf_cg_ctype(rt[s][c]), rv[s][c], rv[s][c]);
    } else {
        rf_buf_puts(b, rf_buf_cstr(&hb));
    }
    rf_buf_free(&hb);
    for (int32_t m = 0; m < u->n; m++) {
        const rf_gpu_fmember *mb = &u->m[m];
        const rf_hir_kernel *k = mb->k;
        const rf_hir_var *ov = p->vars[k->out];
        const rf_gpu_kplan *pl = &plan->k[k->id];
        char fail[96];
        snprintf(fail, sizeof fail, "{ rf::fail((rf::u64 *)a.p[0] + %d, r); break; }", m);
        rf_cg_gen g = {.b = b, .pl = pl, .failstmt = fail, .nv = nv, .regs_of = mb->parent, .kconst = mb->kconst, .kisland = mb->kisland,
                       .cse = 1};
        if (mb->parent < 0) {
            memcpy(g.hset, rset, sizeof rset);
            memcpy(g.hv, rv, sizeof rv);
        }
        rf_buf_printf(b, "        // stage %d: k%d %s\n        bool p%d = false;\n", m, k->id, rf_hir_kind_name(k->kind), m);
        if (mb->has_children)
            for (int32_t c = 0; c < ov->ncols; c++)
                rf_buf_printf(b, "        %s m%d_%d = %s();\n", rf_cg_ctype(ov->types[c]), m, c, rf_cg_ctype(ov->types[c]));
        rf_buf_puts(b, "        do {\n");
        g.depth = 1;
        if (mb->parent >= 0) rf_buf_printf(b, "            if (!p%d) break;\n", mb->parent);
        /* what the row-wide loads above left out (a filter over a join
        ** pair's right row; in a kernel of totals, the outputs of a stage
        ** with a filter) is loaded before the stage's filter, unpinned: the
        ** compiler may still sink it behind the filter */
        rf_cg_hoist_loads(&g, k->filter);
        for (int32_t i = 0; i < k->nouts && mb->parent < 0 && u->ntot; i++) rf_cg_hoist_loads(&g, k->outs[i]);
        if (k->filter) {
            int v = rf_cg_emit(&g, k->filter);
            rf_buf_printf(b, "            if (!v%d) break;\n", v);
        }
        for (int32_t i = 0; i < k->nouts; i++) {
            int v = rf_cg_emit(&g, k->outs[i]);
            if (mb->has_children) rf_buf_printf(b, "            m%d_%d = v%d;\n", m, i, v);
            if (mb->mat >= 0) {
                if (ov->types[i] == RF_TYPE_BOOL)
                    rf_buf_printf(b, "            if (W) rf::st<rf::u8>(a.o[%d], w[%d], (rf::u8)(v%d ? 1 : 0));\n",
                                  mb->ocol + i, mb->mat, v);
                else
                    rf_buf_printf(b, "            if (W) rf::st<%s>(a.o[%d], w[%d], v%d);\n", rf_cg_stype(ov->types[i]),
                                  mb->ocol + i, mb->mat, v);
            }
        }
        rf_buf_printf(b, "            p%d = true;\n        } while (0);\n", m);
        if (mb->mat >= 0) rf_buf_printf(b, "        hit[%d] = p%d;\n", mb->mat, m);
        for (int32_t t = 0; t < u->ntot; t++)
            if (u->tot[t].stage == m) gen_total_rows(p, u, &u->tot[t], b);
        nv = g.nv;
        bad |= g.bad;
    }
    rf_buf_puts(b, "    }\n");
    int anti = u->src && u->src->kind == RF_HIR_ANTI_INDEX;
    if (!u->src || anti) {
        rf_buf_puts(b, "    template <bool W> static __device__ __forceinline__ void row(const rf::Args &a, rf::i64 r,\n"
                       "                                                             rf::u64 *acc = nullptr)\n    {\n");
        rf_buf_puts(b, "        const rf::i64 n1 = a.n + 1;\n"
                       "        rf::u8 *flags = (rf::u8 *)a.p[1];\n"
                       "        const rf::i64 *pos = (const rf::i64 *)a.p[2];\n"
                       "        (void)n1; (void)flags; (void)pos;\n");
        if (u->nmat > 0) {
            rf_buf_puts(b, "        if (W && !(0");
            for (int32_t s = 0; s < u->nmat; s++) rf_buf_printf(b, " | flags[%d * n1 + r]", s);
            rf_buf_puts(b, ")) return;\n");
        }
        rf_buf_printf(b, "        rf::i64 w[%d];\n        bool hit[%d];\n", nm, nm);
        rf_buf_printf(b, "        for (int s = 0; s < %d; s++) {\n            w[s] = W && pos ? pos[s * n1 + r] : 0;\n"
                         "            hit[s] = false;\n        }\n", nm);
        if (anti) {
            /* an anti-join's probe: the left row goes on where it has no
            ** match (every row, when the right side is empty: m == 0) */
            const rf_hir_kernel *j = u->src;
            char sig[RF_GPU_MAXC + 1];
            rf_gpu_sig(p->vars[j->in[0]]->types, j->lkeys, j->nkeys, sig);
            rf_buf_printf(b, "        const void *lk[%d] = {", j->nkeys);
            for (int32_t i = 0; i < j->nkeys; i++) rf_buf_printf(b, "%sa.c0[%d]", i ? ", " : "", j->lkeys[i]);
            rf_buf_printf(b, "};\n        const void *rk[%d] = {", j->nkeys);
            for (int32_t i = 0; i < j->nkeys; i++) rf_buf_printf(b, "%sa.c1[%d]", i ? ", " : "", j->rkeys[i]);
            rf_buf_puts(b, "};\n        rf::any_f pf = {false};\n");
            rf_buf_printf(b, "        if (a.m > 0)\n"
                             "            rf::join_matches_k<KS_%s>(lk, rk, (const rf::u64 *)a.p[4], (const rf::i64 *)a.p[5],\n"
                             "                                     (const rf::i64 *)a.p[6], rf::jh::of(a), a.m, r, pf);\n"
                             "        if (!pf.any) stages<W>(a, r, r, r, w, hit, acc);\n",
                          sig);
        } else {
            rf_buf_puts(b, "        const rf::i64 q0 = a.r0 ? a.r0[r] : r, q1 = a.r1 ? a.r1[r] : r;\n"
                           "        L l;\n"
                           "        load(a, q0, q1, l);\n"
                           "        pin<W>(l);\n"
                           "        stages<W>(a, r, q0, q1, w, hit, acc, l);\n");
        }
        if (u->nmat > 0)
            rf_buf_printf(b, "        if (!W)\n            for (int s = 0; s < %d; s++) flags[s * n1 + r] = hit[s] ? 1 : 0;\n",
                          u->nmat);
        rf_buf_puts(b, "    }\n");
        if (split && u->ntot && u->nmat == 0) {
            /* the totals kernel's round of four rows (gen_total_kernel): all
            ** their loads in flight before the first row's stages */
            rf_buf_printf(b, "    template <bool W>\n"
                             "    static __device__ __forceinline__ void row4(const rf::Args &a, rf::i64 r, rf::i64 T, rf::u64 *acc)\n"
                             "    {\n"
                             "        L l[4];\n"
                             "        rf::i64 q0[4], q1[4];\n"
                             "        rf::i64 w[%d];\n"
                             "        bool hit[%d];\n",
                          nm, nm);
            for (int i = 0; i < 4; i++)
                rf_buf_printf(b, "        q0[%d] = a.r0 ? a.r0[r + %d * T] : r + %d * T;\n"
                                 "        q1[%d] = a.r1 ? a.r1[r + %d * T] : r + %d * T;\n"
                                 "        load(a, q0[%d], q1[%d], l[%d]);\n",
                              i, i, i, i, i, i, i, i, i);
            for (int i = 0; i < 4; i++) rf_buf_printf(b, "        pin<W>(l[%d]);\n", i);
            for (int i = 0; i < 4; i++)
                rf_buf_printf(b, "        for (int s = 0; s < %d; s++) {\n            w[s] = 0;\n            hit[s] = false;\n        }\n"
                                 "        stages<W>(a, r + %d * T, q0[%d], q1[%d], w, hit, acc, l[%d]);\n",
                              nm, i, i, i, i);
            rf_buf_puts(b, "    }\n");
        }
        rf_buf_puts(b, "};\n");
    } else {
        const rf_hir_kernel *j = u->src;
        char sig[RF_GPU_MAXC + 1];
        rf_gpu_sig(p->vars[j->in[0]]->types, j->lkeys, j->nkeys, sig);
        /* dropping repeats (u->dedupe, a.x[5] > 0): where every right-side
        ** output is a key column, all of a row's matches make one row (the
        ** first is kept: one); otherwise a second match raises the status */
        int one = 1;
        for (int32_t i = 0; u->dedupe && i < u->m[0].k->nouts; i++) {
            const rf_qp_expr *e = u->m[0].k->outs[i];
            int key = e->side != 1;
            for (int32_t q = 0; q < j->nkeys && !key; q++) key = j->rkeys[q] == e->col;
            one &= key;
        }
        rf_buf_printf(b, "    template <bool W> struct F {\n"
                         "        const rf::Args *a;\n        rf::i64 r;\n        rf::u64 *acc;\n        rf::i64 w[%d], c[%d];\n"
                         "        bool one;\n"
                         "        __device__ __forceinline__ bool operator()(rf::i64 j)\n        {\n"
                         "            bool hit[%d];\n"
                         "            for (int s = 0; s < %d; s++) hit[s] = false;\n"
                         "            stages<W>(*a, r, r, j, w, hit, acc);\n"
                         "            for (int s = 0; s < %d; s++)\n"
                         "                if (hit[s]) {\n                    c[s]++;\n                    w[s]++;\n                }\n"
                         "            return !(one && c[0] > 0);\n        }\n    };\n",
                      nm, nm, nm, nm, nm);
        /* a row's probe in three steps (rf::probe: start, peek, walk), so
        ** that row4 has four rows' first loads in flight before it walks */
        const char *build = "(const rf::u64 *)a.p[4], (const rf::i64 *)a.p[5]"; /* hs, js */
        char keys[16 * RF_GPU_MAXC + 64];
        int kl = snprintf(keys, sizeof keys, "        const void *lk[%d] = {", j->nkeys);
        for (int32_t i = 0; i < j->nkeys; i++)
            kl += snprintf(keys + kl, sizeof keys - (size_t)kl, "%sa.c0[%d]", i ? ", " : "", j->lkeys[i]);
        kl += snprintf(keys + kl, sizeof keys - (size_t)kl, "};\n        const void *rk[%d] = {", j->nkeys);
        for (int32_t i = 0; i < j->nkeys; i++)
            kl += snprintf(keys + kl, sizeof keys - (size_t)kl, "%sa.c1[%d]", i ? ", " : "", j->rkeys[i]);
        snprintf(keys + kl, sizeof keys - (size_t)kl, "};\n        (void)lk; (void)rk;\n");
        /* pre: whether row r probes (1), has nothing to do (0), or repeats
        ** an earlier row and counts none (2); no stores and no branches, so
        ** that row4's four calls have their loads in flight together */
        rf_buf_puts(b, "    template <bool W> static __device__ __forceinline__ int pre(const rf::Args &a, rf::i64 r)\n    {\n"
                       "        const rf::i64 n1 = a.n + 1;\n"
                       "        const rf::i64 *pos = (const rf::i64 *)a.p[2];\n"
                       "        (void)n1; (void)pos; (void)r;\n"
                       "        int g = 1;\n");
        if (u->nmat > 0)
            /* the write pass skips the rows the count pass gave no rows */
            rf_buf_printf(b, "        if (W && pos) {\n            bool any = false;\n"
                             "            for (int s = 0; s < %d; s++) any |= pos[s * n1 + r + 1] != pos[s * n1 + r];\n"
                             "            g = any ? 1 : 0;\n        }\n",
                          u->nmat);
        if (u->dedupe)
            /* a left row that repeats an earlier one in the compared columns
            ** (runs_first's flags in p[3]; they hold the keys) has the same
            ** matches: only repeats */
            rf_buf_puts(b, "        if (!W && a.x[5] > 0 && !((const rf::u8 *)a.p[3])[r]) g = 2;\n");
        rf_buf_puts(b, "        return g;\n    }\n");
        /* none: the count of a row that repeats an earlier one */
        rf_buf_puts(b, "    template <bool W> static __device__ __forceinline__ void none(const rf::Args &a, rf::i64 r)\n    {\n"
                       "        if (!W) ((rf::i64 *)a.p[1])[r] = 0;\n    }\n");
        /* walk: the matches of a row that probes, from its peeked first entry */
        rf_buf_printf(b, "    template <bool W>\n"
                         "    static __device__ __forceinline__ void walk(const rf::Args &a, rf::i64 r, rf::u64 *acc, rf::probe<KS_%s> &pr)\n"
                         "    {\n"
                         "        const rf::i64 n1 = a.n + 1;\n"
                         "        rf::i64 *cnt = (rf::i64 *)a.p[1];\n"
                         "        const rf::i64 *pos = (const rf::i64 *)a.p[2];\n"
                         "        (void)n1; (void)cnt; (void)pos;\n%s",
                      sig, keys);
        rf_buf_puts(b, "        F<W> f;\n        f.a = &a;\n        f.r = r;\n        f.acc = acc;\n");
        rf_buf_printf(b, "        f.one = %s;\n", u->dedupe && one ? "a.x[5] > 0" : "false");
        rf_buf_printf(b, "        for (int s = 0; s < %d; s++) {\n            f.w[s] = W && pos ? pos[s * n1 + r] : 0;\n"
                         "            f.c[s] = 0;\n        }\n", nm);
        rf_buf_printf(b, "        pr.walk(lk, rk, %s, (rf::u64)a.x[0], a.m, r, f);\n", build);
        if (u->nmat > 0)
            rf_buf_printf(b, "        if (!W)\n            for (int s = 0; s < %d; s++) cnt[s * n1 + r] = f.c[s];\n", u->nmat);
        if (u->dedupe && !one)
            rf_buf_puts(b, "        if (!W && a.x[5] > 0 && f.c[0] > 1) rf::runs_status((rf::u64 *)a.p[7], RF_RUNS_AMBIGUOUS);\n");
        rf_buf_puts(b, "    }\n");
        rf_buf_puts(b, "    template <bool W> static __device__ __forceinline__ void row(const rf::Args &a, rf::i64 r,\n"
                       "                                                             rf::u64 *acc = nullptr)\n    {\n"
                       "        const int g = pre<W>(a, r);\n"
                       "        if (g == 2) none<W>(a, r);\n"
                       "        if (g != 1) return;\n");
        gen_probe_open(b, keys, sig, build);
        rf_buf_puts(b, "        walk<W>(a, r, acc, pr);\n    }\n");
        /* rows r, r + T, r + 2T, r + 3T */
        rf_buf_printf(b, "    template <bool W>\n"
                         "    static __device__ __forceinline__ void row4(const rf::Args &a, rf::i64 r, rf::i64 T, rf::u64 *acc = nullptr)\n"
                         "    {\n%s"
                         "        rf::probe<KS_%s> pr[4];\n"
                         "        int go[4];\n",
                      keys, sig);
        for (int q = 0; q < 4; q++) rf_buf_printf(b, "        go[%d] = pre<W>(a, r + %d * T);\n", q, q);
        for (int q = 0; q < 4; q++)
            rf_buf_printf(b, "        if (go[%d] == 1)\n            pr[%d].start(lk, (const rf::i64 *)a.p[6], rf::jh::of(a), r + %d * T);\n"
                             "        else\n            pr[%d].none();\n",
                          q, q, q, q);
        for (int q = 0; q < 4; q++) rf_buf_printf(b, "        pr[%d].peek(%s, a.m);\n", q, build);
        for (int q = 0; q < 4; q++)
            rf_buf_printf(b, "        if (go[%d] == 1)\n            walk<W>(a, r + %d * T, acc, pr[%d]);\n"
                             "        else if (go[%d] == 2)\n            none<W>(a, r + %d * T);\n",
                          q, q, q, q, q);
        rf_buf_puts(b, "    }\n");
        rf_buf_puts(b, "};\n");
    }
    int row4 = (u->src && !anti) || (split && u->ntot && u->nmat == 0);
    for (int wr = 0; wr < 2; wr++) {
        const char *W = wr ? "true" : "false";
        rf_buf_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d) rfg%d_%s(rf::Args a)\n{\n", RF_GPU_TILE, u->id,
                      wr ? "write" : "flags");
        /* a row a round: four (row4) made the H100's p2 flags and write
        ** passes slower (0.64 -> 0.72 and 1.17 -> 1.35 ms at SF 7) while its
        ** total kernel gained (0.96 -> 0.80 ms) */
        rf_buf_printf(b, "    RF_FOR(r, a.n) G%d::row<%s>(a, r);\n}\n", u->id, W);
    }
    rf_buf_putc(b, '\n');
    if (u->ntot) gen_total_kernel(u, b, row4);
    if (bad) {
        rf_internal_error(d, rf_mkloc(p->source, u->m[0].k->loc.line, u->m[0].k->loc.col),
                 "fused kernel rfg%d: an expression the GPU code generator cannot translate", u->id);
        return RF_EINTERNAL;
    }
    return RF_OK;
}
