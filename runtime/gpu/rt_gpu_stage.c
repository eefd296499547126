/*
** runtime/gpu/rt_gpu_walk.c: the GPU executor's walk of the block graph.
**
** Owns: the order kernels run in (blocks, their kernels, a fused kernel at
** its first stage and its other stages skipped, the terminators and
** fixpoint watch through rf_rt_fixpoint), the release of dead values,
** and the profile's bookkeeping per kernel (time, rows, bytes; fused
** stages charged as --profile documents them).
*/
#include "rf_rt_fixpoint.h"
#include "rt_gpu_internal.h"

#include "rf_sys.h"
#include <stdlib.h>

/* Fused stages (maps, join maps, gather maps) read at most this many variables. */
enum { FUSED_MAX_IN = 8 };

/* ---- the interpreter ---------------------------------------------------------------- */

static int64_t rows_of_var(const void *ctx, int32_t var) { return var_rows(ctx, var); }

rf_status rf_gx_run_blocks(gx *x)
{
    const rf_hir_program *p = x->p;
    rf_rt_fixpoint fx;
    rf_status fst = rf_rt_fixpoint_init(&fx, p, &x->o, rows_of_var, x);
    int32_t maxin = rf_hir_max_inputs(p);
    int64_t *in_rows = rf_calloc((size_t)maxin, sizeof *in_rows); /* for --profile */
    if (fst || !in_rows) {
        rf_rt_fixpoint_end(&fx);
        free(in_rows);
        return RF_ENOMEM;
    }
    rf_status st = RF_OK;
    int32_t b = 0;
    while (!st) {
        const rf_hir_block *bl = p->blocks[b];
        if ((st = rf_rt_fixpoint_enter(&fx, b, x->d))) break;
        for (int32_t j = 0; j < bl->nkernels && !st; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            int prof = x->o.profile && k->id >= 0 && k->id < x->res->nstats;
            int32_t fu = x->fplan && k->id >= 0 && k->id < x->fplan->nkernels ? x->fplan->unit_of[k->id] : -1;
            if (fu >= 0) {
                /* a stage of a fused kernel: the whole kernel runs at its first stage */
                const rf_gpu_funit *u = &x->fplan->units[fu];
                int32_t m = x->fplan->member_of[k->id];
                double t0 = rf_now(), secs = 0;
                if (u->src ? m == -1 : m == 0) {
                    int ran = 0;
                    if (prof) st = x->g.ops->mark(&x->g, 0);
                    /* what the first stage reads (harmony/hir_bytes.c); its
                    ** output, when written, is charged below with the others */
                    int64_t first_rows = 0, in_bytes = 0, rows_of[FUSED_MAX_IN], bo = 0;
                    for (int32_t i = 0; i < k->nin && i < FUSED_MAX_IN && prof; i++) {
                        rows_of[i] = var_rows(x, k->in[i]);
                        first_rows += rows_of[i];
                    }
                    if (prof && !u->src) {
                        /* the columns its stages, written outputs and totals need, once per row */
                        const gval *ix = k->kind == RF_HIR_MAP ? NULL : &x->vals[k->idx];
                        int64_t r2[2] = {ix ? ix->nrows : var_rows(x, k->in[0]),
                                         ix ? ix->nrows : (k->nin > 1 ? var_rows(x, k->in[1]) : 0)};
                        in_bytes = rf_gpu_funit_input_bytes(x->p, u, r2) + (ix ? ix->nrows * 8 * (k->nin > 1 ? 2 : 1) : 0);
                    } else if (prof && k->nin <= FUSED_MAX_IN) {
                        rf_hir_kernel_bytes(x->p, k, rows_of, 0, 0, &in_bytes, &bo);
                    }
                    if (!st) st = rf_gx_k_fused(x, u, &ran);
                    if (!st && prof && (st = x->g.ops->mark(&x->g, 1)) == RF_OK) st = x->g.ops->elapsed(&x->g, &secs);
                    if (st) break;
                    x->fdone[fu] = (uint8_t)ran;
                    x->res->gpu_fused += ran;
                    if (ran && prof) {
                        rf_rt_kstat *s = &x->res->stats[k->id];
                        double wall = rf_now() - t0;
                        s->seconds += wall > secs * 4 ? wall : secs;
                        s->rows_in += first_rows;
                        s->bytes_in += in_bytes;
                    }
                }
                if (x->fdone[fu]) {
                    if (prof) {
                        /* stages whose output stays in registers have no row
                        ** count (-1); the input is read once, by the first */
                        rf_rt_kstat *s = &x->res->stats[k->id];
                        s->calls++;
                        s->device = "fused";
                        if (m == RF_GPU_MEMBER_TOTAL) {
                            /* the total's rows are its registers' sums; the reduce's result is written */
                            s->rows_in = -1;
                            s->rows_out = k->kind == RF_HIR_REDUCE ? var_rows(x, k->out) : -1;
                            if (k->kind == RF_HIR_REDUCE) {
                                int64_t bi = 0, bw = 0, zero[FUSED_MAX_IN] = {0};
                                if (k->nin <= FUSED_MAX_IN) rf_hir_kernel_bytes(x->p, k, zero, 0, s->rows_out, &bi, &bw);
                                s->bytes_out += bw;
                            }
                            for (int32_t r = 0; r < k->nrelease; r++) rf_gx_var_clear(x, k->release[r]);
                            continue;
                        }
                        if (m < 0) {
                            s->rows_out = -1; /* the pairs, never written */
                            for (int32_t r = 0; r < k->nrelease; r++) rf_gx_var_clear(x, k->release[r]);
                            continue;
                        }
                        const rf_gpu_fmember *mb = &u->m[m];
                        if (u->src) s->rows_in = -1; /* reads the pairs */
                        else if (m > 0 && mb->parent < 0) s->rows_in += var_rows(x, k->in[0]);
                        else if (mb->parent >= 0 && u->m[mb->parent].mat >= 0)
                            s->rows_in += var_rows(x, u->m[mb->parent].k->out);
                        else if (mb->parent >= 0) s->rows_in = -1;
                        if (mb->mat >= 0) {
                            int64_t nout = var_rows(x, k->out), bi = 0, bw = 0, zero[FUSED_MAX_IN] = {0};
                            if (k->nin <= FUSED_MAX_IN) rf_hir_kernel_bytes(x->p, k, zero, 0, nout, &bi, &bw);
                            /* (repeats dropped where made: fewer rows than the CPU's, uncounted) */
                            s->rows_out = x->vals[k->out].distinct || s->rows_out < 0 ? -1 : s->rows_out + nout;
                            s->bytes_out += bw;
                        } else {
                            s->rows_out = -1;
                        }
                    }
                    for (int32_t r = 0; r < k->nrelease; r++) rf_gx_var_clear(x, k->release[r]);
                    continue;
                }
            }
            int64_t out_before = 0;
            if (prof) {
                /* inputs before the kernel runs: insert grows its first input */
                rf_rt_kstat *s = &x->res->stats[k->id];
                for (int32_t i = 0; i < k->nin; i++) {
                    if (s->rows_in >= 0) s->rows_in += var_rows(x, k->in[i]);
                    in_rows[i] = var_rows(x, k->in[i]);
                }
                /* a unique of rows whose repeats were dropped where made:
                ** fewer rows in than the CPU's (rows_out stays comparable) */
                if (k->kind == RF_HIR_UNIQUE && x->vals[k->in[0]].distinct) s->rows_in = -1;
                out_before = var_rows(x, k->out);
            }
            double t0 = rf_now();
            if (prof) st = x->g.ops->mark(&x->g, 0);
            x->on_host = 0;
            if (!st) st = rf_gx_run_kernel(x, k);
            if (st) break;
            if (prof) {
                double secs = 0;
                if ((st = x->g.ops->mark(&x->g, 1)) || (st = x->g.ops->elapsed(&x->g, &secs))) break;
                rf_rt_kstat *s = &x->res->stats[k->id];
                s->calls++;
                /* host work (string tables, fallbacks) counts in wall time */
                double wall = rf_now() - t0;
                s->seconds += x->on_host || wall > secs * 4 ? wall : secs;
                if (x->on_host && x->plans[k->id].gpu) s->device = "gpu+cpu";
                /* (repeats dropped where made: fewer rows than the CPU's, uncounted) */
                s->rows_out = x->vals[k->out].distinct || s->rows_out < 0 ? -1 : s->rows_out + var_rows(x, k->out);
                /* only the columns the kernel uses (harmony/hir_bytes.c) */
                int64_t bi = 0, bo = 0;
                rf_hir_kernel_bytes(x->p, k, in_rows, out_before, var_rows(x, k->out), &bi, &bo);
                s->bytes_in += bi;
                s->bytes_out += bo;
            }
            for (int32_t r = 0; r < k->nrelease; r++) rf_gx_var_clear(x, k->release[r]);
        }
        if (st) break;
        if (bl->term == RF_HIR_T_HALT) break;
        if (bl->term == RF_HIR_T_GOTO) {
            b = bl->target;
            continue;
        }
        int any = 0;
        for (int32_t t = 0; t < bl->ntest && !any; t++) any = var_rows(x, bl->test[t]) > 0;
        b = any ? bl->target : bl->else_target;
    }
    rf_rt_fixpoint_end(&fx);
    free(in_rows);
    return st;
}
