/*
** runtime/gpu/rt_gpu_stage.c: one kernel of the walk on the GPU: the
** device's run operation (rf_rt_device_ops.run) for the driver's walk
** (runtime/rt_run.c).
**
** Owns: where a kernel runs: a fused kernel at its first stage and its other
** stages skipped (Kernel Weaver, rt_gpu_fused.c), else the kernel alone
** (rf_gx_run_kernel); the GPU's part of the profile: device time between
** two marks, host work, row counts that are not the CPU's, and a fused
** kernel's stages charged as --profile documents them.
*/
#include "rt_gpu_internal.h"

#include "rf_sys.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fused stages (maps, join maps, gather maps) read at most this many variables. */
enum { FUSED_MAX_IN = 8 };

/* Whether a fused kernel's totals need their rows moved first on several
** ranks: a partial aggregate's (queryplan/pass_partagg.c) sum each rank's
** own rows, any other gathers or hashes them before its group runs. */
static int totals_move(const gx *x, const rf_gpu_funit *u)
{
    if (!x->o.world) return 0;
    for (int32_t i = 0; i < u->ntot; i++)
        if (!u->tot[i].reduce->partial) return 1;
    return 0;
}

/* A stage of a fused kernel: the whole kernel runs at its first stage, the
** others are done then. *done = 1 when k needs no run of its own (charged
** to the profile here); 0 when k runs alone (its kernel did not fuse). */
static rf_status fused_stage(gx *x, const rf_hir_kernel *k, rf_rt_kprof *prof, int blocked, int *done, int *moved)
{
    *done = 0;
    *moved = 0;
    int32_t fu = x->fplan && k->id >= 0 && k->id < x->fplan->nkernels ? x->fplan->unit_of[k->id] : -1;
    if (fu < 0) return RF_OK;
    const rf_gpu_funit *u = &x->fplan->units[fu];
    /* several ranks (runtime/dist): totals need every rank's rows on rank 0,
    ** moved before the group runs, which a fused kernel would sum unmoved
    ** at its first stage; such a kernel's stages run one by one (partial
    ** aggregates excepted: they sum each rank's rows where they are) */
    if (totals_move(x, u)) return RF_OK;
    int32_t m = x->fplan->member_of[k->id];
    rf_status st = RF_OK;
    int first = u->src ? m == -1 : m == 0;
    /* its values do not fit at once: a kernel of totals whose input waits
    ** in host memory runs fused in row ranges of it (rt_gpu_fusedpart.c) */
    int ranged = first && blocked && !x->fsplit[fu] && rf_gx_fused_ranges_can(x, u, 1);
    if (first && (blocked || x->fsplit[fu]) && !ranged) {
        /* its values do not fit at once, or (ranks) a move falls between
        ** its stages: the stages run one by one */
        x->fdone[fu] = 0;
        x->fsplit[fu] = 0;
    } else if (first) {
        double t0 = rf_now(), secs = 0;
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
        int64_t ndiag = x->d->count, nerr = x->d->nerrors;
        if (!st) st = ranged ? rf_gx_k_fused_ranges(x, u, &ran) : rf_gx_k_fused(x, u, &ran);
        if (st == RF_EDEVMEM && !ranged && rf_gx_fused_ranges_can(x, u, 0)) {
            /* its input fits, not with the kernel's work: the input to
            ** host memory, in ranges (where that does not serve, the
            ** caller brings back what the first stage alone reads) */
            rf_gx_held_drop_diags(x, ndiag, nerr);
            *moved = 1;
            st = rf_gx_k_fused_ranges(x, u, &ran);
        }
        if (st == RF_EDEVMEM) {
            /* no room for the fused kernel's work (a range of one row for
            ** its work, in ranges): its stages run one by one */
            rf_gx_held_drop_diags(x, ndiag, nerr);
            st = RF_OK;
            ran = 0;
        }
        if (!st && prof && (st = x->g.ops->mark(&x->g, 1)) == RF_OK) st = x->g.ops->elapsed(&x->g, &secs);
        if (st) return st;
        x->fdone[fu] = (uint8_t)ran;
        x->res->gpu_fused += ran;
        if (ran && prof) {
            rf_rt_kstat *s = prof->s;
            double wall = rf_now() - t0;
            s->seconds += wall > secs * 4 ? wall : secs;
            s->rows_in += first_rows;
            s->bytes_in += in_bytes;
        }
    }
    if (!x->fdone[fu]) return RF_OK;
    *done = 1;
    if (!prof) return RF_OK;
    prof->charged = 1;
    /* stages whose output stays in registers have no row
    ** count (-1); the input is read once, by the first */
    rf_rt_kstat *s = prof->s;
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
        return RF_OK;
    }
    if (m < 0) {
        s->rows_out = -1; /* the pairs, never written */
        return RF_OK;
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
    return RF_OK;
}

/* A request that found no room while kernel k ran: the kernel named, where
** its rule is, in the error (the run then goes to the CPU with a warning). */
static void name_kernel(gx *x, const rf_hir_kernel *k, int64_t from)
{
    char what[64];
    snprintf(what, sizeof what, "kernel k%d (%s): ", (int)k->id, rf_hir_kind_name(k->kind));
    rf_diag *g = rf_gx_oom_prefix(x, from, what);
    if (g && !g->loc.file && x->p->source && k->loc.line) {
        rf_loc l = kloc(x, k);
        g->loc.line = l.line;
        g->loc.col = l.col;
        g->loc.file = rf_strdup(l.file);
    }
}

/* A kernel that failed for lack of room can run again when it changed none
** of its inputs: an insert grows its set in place; a unique, difference or
** gather may have taken its input's columns over (cols: the input's columns
** before it ran). */
static int restartable(const gx *x, const rf_hir_kernel *k, const gbuf *cols)
{
    if (k->kind == RF_HIR_INSERT) return 0;
    if (k->kind == RF_HIR_UNIQUE || k->kind == RF_HIR_DIFFERENCE || k->kind == RF_HIR_GATHER)
        return k->nin > 0 && x->vals[k->in[0]].cols == cols;
    return 1;
}

/* The fused kernel that runs at kernel k (its first stage), or NULL. */
static const rf_gpu_funit *unit_at(const gx *x, const rf_hir_kernel *k)
{
    int32_t fu = x->fplan && k->id >= 0 && k->id < x->fplan->nkernels ? x->fplan->unit_of[k->id] : -1;
    if (fu < 0) return NULL;
    const rf_gpu_funit *u = &x->fplan->units[fu];
    int32_t m = x->fplan->member_of[k->id];
    return (u->src ? m == -1 : m == 0) ? u : NULL;
}

/* A later stage of a fused kernel that ran: nothing of its own to run. */
static int stage_done(const gx *x, const rf_hir_kernel *k)
{
    int32_t fu = x->fplan && k->id >= 0 && k->id < x->fplan->nkernels ? x->fplan->unit_of[k->id] : -1;
    return fu >= 0 && !unit_at(x, k) && x->fdone[fu];
}

int32_t rf_gx_fused_until(gx *x, const rf_hir_kernel *k)
{
    const rf_gpu_funit *u = unit_at(x, k);
    /* totals on several ranks run one by one (fused_stage), but partial ones */
    if (!u || u->n < 1 || totals_move(x, u)) return -1;
    /* the span ends at its last stage or at a total's reduce, which run with it */
    int32_t last = u->m[u->n - 1].k->id;
    for (int32_t i = 0; i < u->ntot; i++)
        if (u->tot[i].reduce->id > last) last = u->tot[i].reduce->id;
    return last;
}

void rf_gx_unfuse(gx *x, const rf_hir_kernel *k)
{
    int32_t fu = x->fplan && k->id >= 0 && k->id < x->fplan->nkernels ? x->fplan->unit_of[k->id] : -1;
    if (fu >= 0) x->fsplit[fu] = 1;
}

rf_status rf_gx_run(gx *x, const rf_hir_kernel *k, rf_rt_kprof *prof)
{
    /* the values that died after the kernel before (rt_gpu_live.c): room
    ** before this kernel's own values come back */
    rf_gx_live_before(x, k);
    rf_gx_jidx_before(x, k); /* (builds kept for a loop that was left, or on what k writes) */
    x->dict_unfit = 0;        /* (this kernel's parts say whether the strings' copy failed them) */
    int done = 0, blocked = 0, parts = 0;
    int64_t ndiag = x->d->count, nerr = x->d->nerrors;
    /* a recursive set in partitions (rt_gpu_recpart.c): its own kernels
    ** run partition by partition, without the whole set coming back */
    int recp = rf_gx_recpart_on(x, k);
    /* its values (with a fused kernel's, all of its stages') come back from
    ** host memory first; where they do not fit at once, the fused kernel's
    ** stages run one by one, and a kernel whose own values do not fit runs
    ** in row ranges where it can (rt_gpu_part.c) */
    const rf_gpu_funit *u = unit_at(x, k);
    if (!recp && u && rf_gx_fused_ranges_first(x, u)) {
        /* a kernel of totals whose input waits in host memory, too big to
        ** come back: fused, in row ranges of it (rt_gpu_fusedpart.c);
        ** where that does not serve, its stages run one by one, below */
        int moved;
        rf_status st = fused_stage(x, k, prof, 1, &done, &moved);
        if (st || done) return st;
        rf_gx_held_drop_diags(x, ndiag, nerr);
        rf_gx_unfuse(x, k);
        u = NULL;
    }
    rf_status st = recp || stage_done(x, k) ? RF_OK : rf_gx_hold_kernel(x, k, u);
    if (st == RF_EDEVMEM && u) {
        rf_gx_held_drop_diags(x, ndiag, nerr);
        blocked = 1;
        st = rf_gx_hold_kernel(x, k, NULL);
    }
    if (st == RF_EDEVMEM) {
        /* free room in pieces: every value to host memory, then this kernel's back, together */
        rf_gx_held_drop_diags(x, ndiag, nerr);
        st = rf_gx_compact(x);
        if (!st) st = rf_gx_hold_kernel(x, k, NULL);
    }
    if (st == RF_EDEVMEM && rf_gx_recpart_can(x, k)) {
        rf_gx_held_drop_diags(x, ndiag, nerr);
        recp = 1;
        st = RF_OK;
    }
    if (st == RF_EDEVMEM && rf_gx_part_can(x, k)) {
        rf_gx_held_drop_diags(x, ndiag, nerr);
        parts = 1;
        st = RF_OK;
    }
    /* narrow sets that a kernel other than their own reads: 64-bit first
    ** (rt_gpu_narrow.c; with their values on the device) */
    if (!st && !recp) st = rf_gx_widen_for(x, k, u);
    int moved = 0;
    if (!st && !recp) st = fused_stage(x, k, prof, blocked || parts, &done, &moved);
    /* (its values did not come back: the warning names it, and says where
    ** they cannot split) */
    if (st == RF_EDEVMEM && k->kind == RF_HIR_LFTJ) st = rf_gx_lftj_unfit(x, k, ndiag, nerr);
    if (st == RF_EDEVMEM) name_kernel(x, k, ndiag);
    if (st || done) return st;
    if (moved && !parts) {
        /* ranges of the fused kernel's input that did not serve: what the
        ** first stage reads back, or its own ranges */
        ndiag = x->d->count;
        nerr = x->d->nerrors;
        st = rf_gx_hold_kernel(x, k, NULL);
        if (st == RF_EDEVMEM && rf_gx_part_can(x, k)) {
            rf_gx_held_drop_diags(x, ndiag, nerr);
            parts = 1;
            st = RF_OK;
        }
        if (st) return st;
    }
    /* a unique of rows whose repeats were dropped where made:
    ** fewer rows in than the CPU's (rows_out stays comparable) */
    if (prof && k->kind == RF_HIR_UNIQUE && x->vals[k->in[0]].distinct) prof->rows_in_unknown = 1;
    if (prof) st = x->g.ops->mark(&x->g, 0);
    x->on_host = 0;
    if (!st && !parts && !recp) {
        ndiag = x->d->count;
        nerr = x->d->nerrors;
        const gbuf *cols = k->nin > 0 ? x->vals[k->in[0]].cols : NULL;
        st = rf_gx_run_kernel(x, k);
        if (st == RF_EDEVMEM && restartable(x, k, cols)) {
            /* the free room in pieces: once more with every value to host
            ** memory and this kernel's back, together */
            rf_gx_held_drop_diags(x, ndiag, nerr);
            st = rf_gx_compact(x);
            if (!st) st = rf_gx_hold_kernel(x, k, NULL);
            if (!st) st = rf_gx_run_kernel(x, k);
        }
        /* a recursive set that does not fit: in partitions (an insert
        ** left its set whole where it failed; running it again adds no row twice) */
        if (st == RF_EDEVMEM && rf_gx_recpart_can(x, k) && (k->kind == RF_HIR_INSERT || restartable(x, k, cols))) {
            rf_gx_held_drop_diags(x, ndiag, nerr);
            recp = 1;
            st = RF_OK;
        }
        /* (not where it took its input's columns over: they are gone) */
        if (st == RF_EDEVMEM && restartable(x, k, cols) && rf_gx_part_can(x, k)) {
            rf_gx_held_drop_diags(x, ndiag, nerr);
            parts = 1;
            st = RF_OK;
        }
    }
    if (!st && recp) {
        int64_t rd = x->d->count, re = x->d->nerrors;
        st = rf_gx_recpart_run(x, k);
        /* candidates that hash alike do not split by row hash (a nullary
        ** relation's rows are all one row): a difference then runs in ranges
        ** of its candidates against the whole set, as any difference */
        if (st == RF_EDEVMEM && k->kind == RF_HIR_DIFFERENCE && rf_gx_part_can(x, k)) {
            rf_gx_held_drop_diags(x, rd, re);
            parts = 1;
            /* (the set whole again, in host memory, its table made anew;
            ** the kernel's values in use again: never moved out under
            ** the ranges, which recpart's epoch had let happen) */
            st = rf_gx_recpart_join(x, k->in[1]);
            for (int32_t i = 0; i < k->nin; i++)
                if (k->in[i] >= 0) x->vals[k->in[i]].used = x->epoch;
        }
    }
    if (!st && parts) st = rf_gx_run_parts(x, k);
    if (st == RF_EDEVMEM) name_kernel(x, k, ndiag);
    if (st || !prof) return st;
    double secs = 0;
    if ((st = x->g.ops->mark(&x->g, 1)) || (st = x->g.ops->elapsed(&x->g, &secs))) return st;
    /* host work (string tables, fallbacks) counts in wall time */
    prof->device_seconds = secs;
    prof->on_host = x->on_host;
    if (x->on_host && x->plans[k->id].gpu) prof->device = "gpu+cpu";
    /* (repeats dropped where made: fewer rows than the CPU's, uncounted) */
    prof->rows_out_unknown = x->vals[k->out].distinct;
    return RF_OK;
}
