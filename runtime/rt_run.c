/*
** runtime/rt_run.c: the one driver of a run: rf_rt_run.
**
** Owns: the choice of device (--device, the GPU's availability, for auto
** the placement model's prediction, rt_place_run.c, and the run's records
** for it) and the fallback to the CPU when GPU memory cannot hold the
** program's data; for one run on one device (rf_rt_run_on): the result, the
** string dictionary (the cache's, or the run's own), the host threads, the
** input load timed as the load (rt_inputs.c reads, the device takes; a
** device with a slow start is started beside the reading, rt_start.c), the walk of the block graph
** (blocks, their kernels in order, terminators, the fixpoint watch
** rf_rt_fixpoint with the --max-iterations bound, releases of dead values;
** which of a loop's kernels a round runs is rt_rounds.c's),
** the per-kernel profile, and the outputs; with several ranks, the first
** vote of a run, that every rank runs rank 0's program on its device. A
** device is reached only through rf_rt_device_ops (rt_device.h).
*/
#include "rf_rt_dist.h"
#include "rf_rt_fixpoint.h"
#include "rf_rt_gpu.h"
#include "rf_sys.h"
#include "rt_device.h"
#include "rt_inputs.h"
#include "rt_rounds.h"
#include "rt_start.h"
#include "rf_rt_hold.h"
#include "rf_rt_place.h"

#include <stdlib.h>
#include <string.h>

/* ---- ranks (runtime/dist, issue 22): the driver's hook --------------------
** With several MPI ranks each variable holds this rank's rows; before a
** kernel the dist module says which must move (hashed, gathered, broadcast)
** so that the kernel, run as it is on the device, sees co-located rows. */

static int has_strings(const rf_hir_var *v)
{
    for (int32_t c = 0; c < v->ncols; c++)
        if (v->types[c] == RF_TYPE_STRING) return 1;
    return 0;
}

/* Whether move m goes on the device (*on; rf_rt_dist_move_talks' *mv,
** what): a relation without strings, or whose strings are codes every rank
** shares, does where the device can move rows; one that may hold a rank's
** own strings does when this time no rank's rows hold any (the device
** checks its codes, the ranks vote: every rank asks alike, since the
** program decides which may hold them). */
static rf_status move_on_device(const rf_rt_device_ops *dv, void *dev, const rf_rt_env *env, rf_rt_dist *x,
                                const rf_rt_xport *xp, const rf_rt_dist_move *m, rf_rt_xmove *mv, char *what,
                                size_t nwhat, int *on)
{
    *on = 0;
    if (!xp || !dv->exchange || !rf_rt_dist_move_talks(x, m, mv, what, nwhat)) return RF_OK;
    if (!has_strings(env->p->vars[m->var]) || rf_rt_dist_codes_shared(x, m->var)) {
        *on = 1;
        return RF_OK;
    }
    if (!dv->codes_below || !rf_rt_dist_codes_checkable(x)) return RF_OK;
    double t0 = rf_rt_dist_clock(x);
    int below = 0;
    rf_status st = dv->codes_below(dev, m->var, rf_rt_dist_codes_limit(x), &below);
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_PLAN, t0);
    return rf_rt_dist_codes_check(x, st != RF_OK, !below, on, env->d);
}

/* Variable m->var's rows become those the move gives this rank: moved by
** the device itself (on: move_on_device said so; xp: GPU ranks, NCCL or
** the emulator's memory), else through host memory (the device's view,
** packed, MPI, loaded back). */
static rf_status dist_move(const rf_rt_device_ops *dv, void *dev, const rf_rt_env *env, rf_rt_dist *x,
                           const rf_rt_xport *xp, const rf_rt_dist_move *m, int on, rf_rt_xmove *mv)
{
    double t0 = rf_rt_dist_clock(x);
    if (on) {
        rf_rt_xstat xs = {0, 0, 0, 0, 0};
        rf_status st = dv->exchange(dev, m->var, mv, xp, &xs);
        rf_rt_dist_timed(x, RF_RT_DIST_STEP_DEVMOVE, t0);
        /* (a rank without room on its device for the move: every rank
        ** moves the rows through host memory, below) */
        if (st || !xs.host_instead) {
            rf_rt_dist_moved_on_device(x, m, st, &xs);
            return st;
        }
        t0 = rf_rt_dist_clock(x);
    }
    const rf_rt_rel *cur = dv->view ? dv->view(dev, m->var) : NULL;
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_VIEW, t0);
    if (!cur) {
        rf_error(env->d, rf_mkloc(NULL, 0, 0), "rank %d: the rows of variable %s cannot be read for an exchange",
                 rf_rt_dist_rank(x), env->p->vars[m->var]->name);
        return RF_EINTERNAL;
    }
    rf_rt_rel moved;
    rf_status st = rf_rt_dist_move_rel(x, m, cur, env->dict, &moved, env->d);
    if (st) return st;
    t0 = rf_rt_dist_clock(x);
    dv->free(dev, m->var);
    st = dv->load(dev, m->var, &moved, 0, NULL, NULL);
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_LOAD, t0);
    return st;
}

/* The moves m[0..n) through host memory together (distinct variables): one
** vote and one exchange for all of them. */
static rf_status dist_move_host(const rf_rt_device_ops *dv, void *dev, const rf_rt_env *env, rf_rt_dist *x,
                                const rf_rt_dist_move *m, int32_t n)
{
    const rf_rt_rel **cur = rf_calloc((size_t)n + 1, sizeof *cur);
    rf_rt_rel *moved = rf_calloc((size_t)n + 1, sizeof *moved);
    rf_status st = cur && moved ? RF_OK : RF_ENOMEM;
    double t0 = rf_rt_dist_clock(x);
    for (int32_t i = 0; i < n && !st; i++)
        if (!(cur[i] = dv->view ? dv->view(dev, m[i].var) : NULL)) {
            rf_error(env->d, rf_mkloc(NULL, 0, 0), "rank %d: the rows of variable %s cannot be read for an exchange",
                     rf_rt_dist_rank(x), env->p->vars[m[i].var]->name);
            st = RF_EINTERNAL;
        }
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_VIEW, t0);
    /* (a rank that failed above says so in the next vote, the end's) */
    if (!st) st = rf_rt_dist_move_rels(x, m, n, cur, env->dict, moved, env->d);
    t0 = rf_rt_dist_clock(x);
    for (int32_t i = 0; i < n && !st; i++) {
        dv->free(dev, m[i].var);
        st = dv->load(dev, m[i].var, &moved[i], 0, NULL, NULL);
        memset(&moved[i], 0, sizeof moved[i]); /* (the device took it, or freed it) */
    }
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_LOAD, t0);
    for (int32_t i = 0; moved && i < n; i++) rf_rt_rel_free(&moved[i]);
    free(cur);
    free(moved);
    return st;
}

/* Before an ordered, limited output's rows gather on rank 0 (m->cut): the
** rank keeps only its first rows in the sort's order (runtime/dist/dist_topk.c). */
static rf_status dist_cut(const rf_rt_device_ops *dv, void *dev, const rf_rt_env *env, rf_rt_dist *x,
                          const rf_rt_dist_move *m)
{
    double t0 = rf_rt_dist_clock(x);
    const rf_rt_rel *cur = dv->view ? dv->view(dev, m->var) : NULL;
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_VIEW, t0);
    if (!cur) {
        rf_error(env->d, rf_mkloc(NULL, 0, 0), "rank %d: the rows of variable %s cannot be read for an exchange",
                 rf_rt_dist_rank(x), env->p->vars[m->var]->name);
        return RF_EINTERNAL;
    }
    rf_rt_rel kept;
    t0 = rf_rt_dist_clock(x);
    rf_status st = rf_rt_dist_topk(m->cut, cur, env->dict, &kept);
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_CUT, t0);
    if (st) return st; /* (out of memory: the next vote tells the others) */
    t0 = rf_rt_dist_clock(x);
    dv->free(dev, m->var);
    st = dv->load(dev, m->var, &kept, 0, NULL, NULL);
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_LOAD, t0);
    return st;
}

static rf_status dist_before(const rf_rt_device_ops *dv, void *dev, const rf_rt_env *env, rf_rt_dist *x,
                             const rf_rt_xport *xp, const rf_hir_kernel *k)
{
    rf_rt_dist_move *m = rf_calloc((size_t)k->nin * 2 + 3, sizeof *m);
    rf_rt_dist_move *host = rf_calloc((size_t)k->nin * 2 + 3, sizeof *host);
    int64_t *rows = rf_calloc((size_t)k->nin + 1, sizeof *rows);
    int32_t n = 0, nhost = 0;
    double t0 = rf_rt_dist_clock(x);
    for (int32_t i = 0; rows && i < k->nin; i++) rows[i] = dv->rows(dev, k->in[i]);
    rf_status st = m && host && rows ? rf_rt_dist_plan(x, k, rows, m, &n, env->d) : RF_ENOMEM;
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_PLAN, t0);
    /* the moves through host memory go together when their variables
    ** differ (every rank plans alike, so all batch alike) */
    for (int32_t i = 0; i < n && !st; i++)
        if (m[i].cut) st = dist_cut(dv, dev, env, x, &m[i]);
    int distinct = 1;
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < i; j++) distinct &= m[i].var != m[j].var;
    for (int32_t i = 0; i < n && !st; i++) {
        rf_rt_xmove mv;
        char what[96];
        int on = 0;
        st = move_on_device(dv, dev, env, x, xp, &m[i], &mv, what, sizeof what, &on);
        if (!st && (!distinct || on)) st = dist_move(dv, dev, env, x, xp, &m[i], on, &mv);
        else if (!st) host[nhost++] = m[i];
    }
    if (!st && nhost) st = dist_move_host(dv, dev, env, x, host, nhost);
    free(m);
    free(host);
    free(rows);
    return st;
}

/* An input's share: rows [lo, hi) of what every rank read (a text file with
** quotes, rt_share.c; an input given from memory). */
static rf_status dist_share_input(rf_rt_dist *x, int32_t var, rf_rt_rel *r, int borrowed)
{
    int64_t lo, hi;
    rf_rt_dist_share(x, r->nrows, &lo, &hi);
    for (int32_t c = 0; c < r->ncols && lo > 0; c++) {
        int64_t w = rf_rt_type_width(r->types[c]);
        if (borrowed) r->cols[c] = (char *)r->cols[c] + lo * w; /* the cache's columns */
        else memmove(r->cols[c], (char *)r->cols[c] + lo * w, (size_t)((hi - lo) * w));
    }
    rf_rt_dist_loaded(x, var);
    if (borrowed) return r->nrows = hi - lo, RF_OK;
    return rf_rt_rel_truncate(r, hi - lo);
}

/* ---- the walk ----------------------------------------------------------- */

/* Runs kernel k on the device, and charges it to the profile when it is
** profiled: calls, time, rows and the bytes of the columns it uses. */
static rf_status run_kernel_once(const rf_rt_device_ops *dv, void *dev, const rf_rt_env *env, const rf_hir_kernel *k,
                                 int64_t *in_rows)
{
    rf_rt_result *res = env->res;
    int profiled = env->o->profile && k->id >= 0 && k->id < res->nstats;
    if (!profiled) return dv->run(dev, k, NULL);
    rf_rt_kprof kp;
    memset(&kp, 0, sizeof kp);
    kp.s = &res->stats[k->id];
    kp.device_seconds = -1;
    /* inputs before the kernel runs: it may take over an input's columns,
    ** and an insert grows its first input */
    for (int32_t i = 0; i < k->nin; i++) in_rows[i] = dv->rows(dev, k->in[i]);
    int64_t out_before = dv->rows(dev, k->out);
    double t0 = rf_now();
    rf_status st = dv->run(dev, k, &kp);
    if (st || kp.charged) return st;
    rf_rt_kstat *s = kp.s;
    double wall = rf_now() - t0;
    s->calls++;
    /* a device time far below the wall time: host work took the rest */
    s->seconds += kp.device_seconds < 0 || kp.on_host || wall > kp.device_seconds * 4 ? wall : kp.device_seconds;
    if (kp.device) s->device = kp.device;
    /* -1 (no count comparable with the CPU's) stays */
    if (kp.rows_in_unknown) s->rows_in = -1;
    for (int32_t i = 0; i < k->nin && s->rows_in >= 0; i++) s->rows_in += in_rows[i];
    int64_t out_rows = dv->rows(dev, k->out);
    s->rows_out = kp.rows_out_unknown || s->rows_out < 0 ? -1 : s->rows_out + out_rows;
    /* only the columns the kernel uses (harmony/hir_bytes.c) */
    int64_t bi = 0, bo = 0;
    rf_hir_kernel_bytes(env->p, k, in_rows, out_before, out_rows, &bi, &bo);
    s->bytes_in += bi;
    s->bytes_out += bo;
    return RF_OK;
}

/* The same, with a --trace span: the kernel as the host ran it (on the GPU:
** as the host issued it; its device operations are spans of their own). */
static rf_status run_kernel(const rf_rt_device_ops *dv, void *dev, const rf_rt_env *env, const rf_hir_kernel *k,
                            int64_t *in_rows)
{
    int64_t nerrors = env->d->nerrors;
    double t0 = env->o->trace ? rf_now() : 0;
    rf_status st = run_kernel_once(dv, dev, env, k, in_rows);
    /* a kernel that ran out of memory without saying where: at its rule */
    if (st == RF_ENOMEM && env->d->nerrors == nerrors) rf_error(env->d, k->loc, "out of memory");
    if (!st && env->o->trace) {
        char name[96];
        snprintf(name, sizeof name, "k%d %s", (int)k->id, rf_hir_kind_name(k->kind));
        env->o->trace(env->o->trace_ctx, "kernel", name, t0, rf_now(), dv->rows(dev, k->out));
    }
    return st;
}

/* ---- one process: a partial aggregate's combining step is a copy ----------
** The pass partagg (queryplan/pass_partagg.c) splits an aggregate into a
** partial one and one that combines the parts by the same group columns, so
** that ranks move one row per group and rank. In one process the partial
** aggregate saw every row: its rows are one per group, so the combining
** group finds each row its own group (in row order) and a total, minimum or
** maximum of one value is that value: the combined rows are its input's,
** row for row. The walk then skips that group and runs its reduce as a
** copy (TPC-H q18 at SF 1: 1.5 M groups not grouped a second time). */

static const rf_hir_kernel *only_writer(const rf_hir_program *p, int32_t var)
{
    const rf_hir_kernel *w = NULL;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->out == var) {
                if (w) return NULL;
                w = p->blocks[b]->kernels[j];
            }
    return w;
}

/* The kernel reading var (NULL: none, or several). */
static const rf_hir_kernel *only_reader(const rf_hir_program *p, int32_t var)
{
    const rf_hir_kernel *r = NULL;
    for (int32_t b = 0; b < p->nblocks; b++) {
        for (int32_t t = 0; t < p->blocks[b]->ntest; t++)
            if (p->blocks[b]->test[t] == var) return NULL;
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            for (int32_t i = 0; i < k->nin; i++)
                if (k->in[i] == var) {
                    if (r && r != k) return NULL;
                    r = k;
                }
        }
    }
    return r;
}

/* By kernel id: 1 a combining group to skip, 2 its reduce, run as a copy.
** NULL when there is none (or no memory: the kernels then run as they are). */
static uint8_t *combine_steps(const rf_hir_program *p)
{
    int32_t ids = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->id >= ids) ids = p->blocks[b]->kernels[j]->id + 1;
    uint8_t *steps = NULL;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *g = p->blocks[b]->kernels[j];
            if (g->kind != RF_HIR_GROUP || g->partial || g->nin != 1 || g->id < 0) continue;
            const rf_hir_kernel *w = only_writer(p, g->in[0]), *r = only_reader(p, g->out);
            if (!w || w->kind != RF_HIR_REDUCE || !w->partial || w->ngroup != g->ngroup || !r ||
                r->kind != RF_HIR_REDUCE || r->idx != g->out || r->in[0] != g->in[0] || r->naggs != w->naggs ||
                r->id < 0 || p->vars[r->out]->ncols != p->vars[g->in[0]]->ncols)
                continue;
            int same = 1;
            for (int32_t i = 0; i < g->ngroup && same; i++) same = g->group[i] == i && r->group[i] == i;
            for (int32_t a = 0; a < r->naggs && same; a++)
                same = r->aggs[a].fn != RF_AGG_COUNT && r->aggs[a].fn != RF_AGG_AVG && r->aggs[a].col == g->ngroup + a;
            for (int32_t c = 0; c < p->vars[r->out]->ncols && same; c++)
                same = p->vars[r->out]->types[c] == p->vars[g->in[0]]->types[c];
            if (!same) continue;
            if (!steps && !(steps = rf_calloc((size_t)ids + 1, 1))) return NULL;
            steps[g->id] = 1;
            steps[r->id] = 2;
        }
    return steps;
}

static rf_status dist_rows_total(void *dist, int32_t n, const int32_t *vars, int64_t *rows, rf_diags *d)
{
    return rf_rt_dist_rows_total(dist, n, vars, rows, d);
}

/* Follows the block graph from block 0 until Halt. */
static rf_status walk(const rf_rt_device_ops *dv, void *dev, const rf_rt_env *env, rf_rt_dist *dist,
                      const rf_rt_xport *xp)
{
    const rf_hir_program *p = env->p;
    rf_rt_fixpoint fx;
    rf_status fst = rf_rt_fixpoint_init(&fx, p, env->o, dv->rows, dev);
    if (dist) {
        /* the error's sizes: the run's over every rank, not this rank's share */
        fx.totals = dist_rows_total;
        fx.totals_ctx = dist;
    }
    int32_t maxin = rf_hir_max_inputs(p), maxtest = 0;
    for (int32_t i = 0; i < p->nblocks; i++)
        if (p->blocks[i]->ntest > maxtest) maxtest = p->blocks[i]->ntest;
    int64_t *in_rows = rf_calloc((size_t)maxin + 1, sizeof *in_rows); /* for --profile */
    uint8_t *steps = dist ? NULL : combine_steps(p); /* several ranks: the parts must combine */
    /* a loop's kernels of empty input are not run (rt_rounds.c) */
    rf_rt_rounds *rounds = NULL;
    rf_status rst = rf_rt_rounds_new(env, dv, dev, dist, &rounds);
    /* with ranks: a branch's tests' emptiness, here and everywhere */
    uint8_t *tested = dist ? rf_calloc((size_t)maxtest * 2 + 1, 1) : NULL;
    if (fst || rst || !in_rows || (dist && !tested)) {
        rf_rt_fixpoint_end(&fx);
        free(in_rows);
        free(steps);
        rf_rt_rounds_free(rounds);
        free(tested);
        return RF_ENOMEM;
    }
    rf_status st = RF_OK;
    int32_t b = 0;
    while (!st) {
        const rf_hir_block *bl = p->blocks[b];
        if ((st = rf_rt_fixpoint_enter(&fx, b, env->d)) || (st = rf_rt_rounds_enter(rounds, b))) break;
        for (int32_t j = rf_rt_rounds_next(rounds, -1); j < bl->nkernels && !st; j = rf_rt_rounds_next(rounds, j)) {
            const rf_hir_kernel *k = bl->kernels[j];
            int32_t skipped = rf_rt_rounds_skip(rounds, j);
            if (skipped > 0) {
                j += skipped - 1;
                continue;
            }
            int step = steps && k->id >= 0 ? steps[k->id] : 0;
            if (step == 1) { /* a combining group: its rows are its groups */
                for (int32_t r = 0; r < k->nrelease; r++) dv->free(dev, k->release[r]);
                continue;
            }
            if (step == 2) {
                rf_hir_kernel copy = *k;
                copy.kind = RF_HIR_COPY;
                copy.nin = 1;
                copy.idx = -1;
                copy.group = NULL;
                copy.ngroup = 0;
                copy.aggs = NULL;
                copy.naggs = 0;
                if ((st = run_kernel(dv, dev, env, &copy, in_rows))) break;
                for (int32_t r = 0; r < k->nrelease; r++) dv->free(dev, k->release[r]);
                rf_rt_rounds_ran(rounds, j);
                continue;
            }
            if (dist) rf_rt_dist_at(dist, bl, j, dv->rows, dev);
            if (dist && (st = dist_before(dv, dev, env, dist, xp, k))) break;
            /* a fused kernel runs its span at k: a move inside the span would
            ** come after its rows were read, so then its stages run one by one */
            double t0 = dist ? rf_rt_dist_clock(dist) : 0;
            int32_t last = dist && dv->fused_until ? dv->fused_until(dev, k) : -1;
            if (last >= 0 && !rf_rt_dist_span_still(dist, bl, j, last)) dv->unfuse(dev, k);
            if (dist) rf_rt_dist_timed(dist, RF_RT_DIST_STEP_PLAN, t0);
            if (dist) t0 = rf_rt_dist_clock(dist);
            st = run_kernel(dv, dev, env, k, in_rows);
            if (dist) rf_rt_dist_timed(dist, RF_RT_DIST_STEP_KERNELS, t0);
            /* a functional dependency's clash: the ranks name the least */
            if (st && dist && env->fd_clash && env->fd_clash->len > 0)
                rf_rt_dist_fd_clash(dist, env->fd_clash->data, env->fd_clash->len);
            if (st) break;
            if (dist) rf_rt_dist_ran(dist, k);
            rf_rt_rounds_ran(rounds, j);
            for (int32_t r = 0; r < k->nrelease; r++) {
                dv->free(dev, k->release[r]);
                rf_rt_rounds_freed(rounds, k->release[r]);
            }
        }
        if (st) break;
        if (bl->term == RF_HIR_T_HALT) break;
        if (bl->term == RF_HIR_T_GOTO) {
            b = bl->target;
            continue;
        }
        int any = 0;
        if (dist) {
            /* the ranks vote on each test: what is empty on every rank, the next round skips */
            uint8_t *local = tested, *some = tested + bl->ntest;
            for (int32_t t = 0; t < bl->ntest; t++) local[t] = dv->rows(dev, bl->test[t]) > 0;
            if ((st = rf_rt_dist_any_each(dist, bl->ntest, local, some, &any, env->d))) break;
            for (int32_t t = 0; t < bl->ntest; t++) rf_rt_rounds_tested(rounds, bl->test[t], some[t]);
        } else if (!rf_rt_rounds_any(rounds, &any)) {
            for (int32_t t = 0; t < bl->ntest && !any; t++) any = dv->rows(dev, bl->test[t]) > 0;
        }
        b = any ? bl->target : bl->else_target;
    }
    if (env->o->profile) rf_rt_rounds_profile(rounds, env->res);
    rf_rt_fixpoint_end(&fx);
    free(in_rows);
    free(steps);
    rf_rt_rounds_free(rounds);
    free(tested);
    return st;
}

/* ---- one run on one device ------------------------------------------------ */

static int32_t count_kernels(const rf_hir_program *p)
{
    int32_t n = 0;
    for (int32_t b = 0; b < p->nblocks; b++) n += p->blocks[b]->nkernels;
    return n;
}

/* The profile's records, one per kernel (ids are dense, in program order). */
static rf_status stats_new(const rf_rt_device_ops *dv, void *dev, const rf_hir_program *p, rf_rt_result *res)
{
    res->nstats = count_kernels(p);
    res->stats = rf_calloc((size_t)res->nstats + 1, sizeof *res->stats);
    if (!res->stats) return RF_ENOMEM;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->id < 0 || k->id >= res->nstats) continue;
            res->stats[k->id].kernel = k->id;
            res->stats[k->id].what = rf_hir_kind_name(k->kind);
            res->stats[k->id].device = dv->where(dev, k);
        }
    return RF_OK;
}

static rf_status outputs(const rf_rt_device_ops *dv, void *dev, const rf_hir_program *p, rf_rt_result *res)
{
    int32_t n = 0;
    for (int32_t v = 0; v < p->nvars; v++) n += p->vars[v]->role == RF_HIR_ROLE_OUTPUT;
    res->outputs = rf_calloc((size_t)n + 1, sizeof *res->outputs);
    if (!res->outputs) return RF_ENOMEM;
    for (int32_t v = 0; v < p->nvars; v++)
        if (p->vars[v]->role == RF_HIR_ROLE_OUTPUT) {
            rf_rt_output *ou = &res->outputs[res->noutputs];
            ou->name = p->vars[v]->output_name;
            ou->var = p->vars[v];
            rf_status st = dv->to_host(dev, v, &ou->rel);
            if (st) return st;
            res->noutputs++;
        }
    return RF_OK;
}

/* One input read on the host, not yet handed to the device (its start runs). */
typedef struct pending_input {
    int32_t var;
    rf_rt_rel r;
    int borrowed;
    uint64_t *stamps; /* its columns' stamps (rf_rt_inputs_read; owned), or NULL */
    rf_rt_stored **stored; /* its columns held as stored (rf_rt_inputs_read; the array owned), or NULL */
    double t0; /* its read began (for --trace) */
} pending_input;

typedef struct loader {
    const rf_rt_device_ops *dv;
    void **dev;
    rf_rt_start *start; /* NULL: the device opened before the load */
    rf_rt_inputs *in;
    rf_rt_result *res;
    rf_diags *d;
    pending_input *pend;
    int32_t npend;
    double tread, thand; /* seconds reading, handing to the device */
} loader;

static rf_status hand(loader *l, int32_t var, rf_rt_rel *r, int borrowed, const uint64_t *stamps,
                      rf_rt_stored *const *stored, double tr)
{
    int64_t rows = r->nrows;
    double t = rf_now();
    rf_status st = l->dv->load(*l->dev, var, r, borrowed, stamps, stored);
    l->thand += rf_now() - t;
    const rf_rt_options *o = l->in->o;
    if (!st && o->trace) o->trace(o->trace_ctx, "load", l->in->p->vars[var]->name, tr, rf_now(), rows);
    return st;
}

/* The inputs' rows and the bytes of the columns the program reads (the
** placement model's features, rt_place_run.c). */
static void count_input(const rf_hir_program *p, int32_t v, const rf_rt_rel *r, rf_rt_result *res)
{
    uint8_t read[64];
    uint8_t *rd = p->vars[v]->ncols < 64 ? read : rf_malloc((size_t)p->vars[v]->ncols + 1);
    res->input_rows += (double)r->nrows;
    if (!rd) return;
    rf_rt_input_cols_read(p, v, rd);
    for (int32_t c = 0; c < p->vars[v]->ncols; c++)
        if (rd[c]) res->input_bytes += (double)r->nrows * rf_rt_type_width(p->vars[v]->types[c]);
    if (rd != read) free(rd);
}

/* The start beside the reading has ended (or must: wait): the device is
** the run's, the inputs read so far go to it. */
static rf_status join_start(loader *l)
{
    rf_rt_start *s = l->start;
    if (!s || s->joined) return RF_OK;
    double tw = rf_now();
    rf_status st = rf_rt_start_join(s, l->d, l->dev);
    rf_rt_result *res = l->res;
    res->start_aside = 1;
    res->start_wait_seconds = rf_now() - tw;
    res->device_seconds = s->t_open - s->t0;
    res->program_seconds = s->t_end - s->t_open;
    const rf_rt_options *o = l->in->o;
    if (o->trace) o->trace(o->trace_ctx, "load", "device start (beside the reading)", s->t0, s->t_end, -1);
    for (int32_t i = 0; i < l->npend; i++) {
        pending_input *q = &l->pend[i];
        if (!st) st = hand(l, q->var, &q->r, q->borrowed, q->stamps, q->stored, q->t0);
        else if (q->borrowed) free(q->r.cols);
        else rf_rt_rel_free(&q->r);
        free(q->stamps);
        free(q->stored);
    }
    l->npend = 0;
    return st;
}

/* Reads every input on the host and hands it (with several ranks, this
** rank's share of it) to the device; the phases' times into res
** (--profile): the program readied, reading, copying. With a start beside
** the reading (start not NULL), inputs wait on the host until the device is
** ready; the join comes, at the latest, after the last read. */
static rf_status load_inputs(loader *l, rf_rt_dist *dist)
{
    const rf_hir_program *p = l->in->p;
    rf_rt_result *res = l->res;
    rf_status st = RF_OK;
    if (!l->start) {
        double t0 = rf_now();
        st = l->dv->load_begin(*l->dev);
        res->program_seconds = rf_now() - t0;
    } else if (!(l->pend = rf_calloc((size_t)p->nvars + 1, sizeof *l->pend))) {
        st = RF_ENOMEM;
    }
    for (int32_t v = 0; v < p->nvars && !st; v++)
        if (p->vars[v]->role == RF_HIR_ROLE_INPUT) {
            rf_rt_rel r;
            memset(&r, 0, sizeof r);
            r.ncols = p->vars[v]->ncols;
            r.types = p->vars[v]->types;
            int borrowed = 0, share = 0;
            double tr = rf_now();
            /* (with a cache: the stamps under which a device may keep its copy) */
            uint64_t *stamps = l->in->o->cache ? rf_calloc((size_t)r.ncols + 1, sizeof *stamps) : NULL;
            /* (a device that widens narrow columns itself: the columns held as stored) */
            rf_rt_stored **stored = l->in->takes_stored ? rf_calloc((size_t)r.ncols + 1, sizeof *stored) : NULL;
            if ((l->in->o->cache && !stamps) || (l->in->takes_stored && !stored)) {
                free(stamps);
                free(stored);
                st = RF_ENOMEM;
                break;
            }
            st = rf_rt_inputs_read(l->in, p->vars[v], &r, &borrowed, &share, stamps, stored);
            l->tread += rf_now() - tr;
            if (!st && dist && share == 2) rf_rt_dist_loaded_whole(dist, v);
            else if (!st && dist && share) rf_rt_dist_loaded(dist, v);
            else if (!st && dist) st = dist_share_input(dist, v, &r, borrowed);
            if (!st) count_input(p, v, &r, res);
            if (!st && dist) { /* its share's own strings, where it may have any */
                uint8_t *scan = rf_malloc((size_t)r.ncols + 1);
                if (scan) rf_rt_inputs_codes_to_scan(l->in, p->vars[v], scan);
                rf_rt_dist_codes_input(dist, v, &r, scan);
                free(scan);
            }
            if (!st && l->start && !l->start->joined && rf_rt_start_ready(l->start)) st = join_start(l);
            if (st) {
                if (borrowed) free(r.cols);
                else rf_rt_rel_free(&r);
                free(stamps);
                free(stored);
            } else if (l->start && !l->start->joined) {
                l->pend[l->npend++] = (pending_input){v, r, borrowed, stamps, stored, tr};
            } else {
                st = hand(l, v, &r, borrowed, stamps, stored, tr);
                free(stamps);
                free(stored);
            }
        }
    rf_status jst = join_start(l); /* also after a failed read: the thread ends before the run does */
    if (!st) st = jst;
    double te = rf_now();
    if (!st) st = l->dv->load_end(*l->dev);
    l->thand += rf_now() - te;
    free(l->pend);
    l->pend = NULL;
    res->read_seconds = l->tread;
    res->copy_seconds = l->thand;
    res->db_blocks = l->in->skip.blocks;
    res->db_blocks_skipped = l->in->skip.skipped;
    return st;
}

rf_status rf_rt_run_on(const rf_rt_device_ops *dv, const rf_hir_program *p, const rf_rt_options *o,
                       rf_rt_result **out, rf_diags *d)
{
    *out = NULL;
    rf_rt_env env;
    memset(&env, 0, sizeof env);
    env.p = p;
    env.o = o;
    env.d = d;
    env.threads = o->threads > 0 ? o->threads : rf_online_cpus();
    /* on ranks, a failed functional dependency's clash is voted on */
    rf_buf clash;
    rf_buf_init(&clash);
    if (rf_rt_dist_world_size(o->world) > 1) env.fd_clash = &clash;
    rf_rt_result *res = rf_calloc(1, sizeof *res);
    if (res) res->host_gpu_found = -1; /* set where the driver looks for the GPU (run, below) */
    env.res = res;
    env.dict = o->cache ? rf_rt_cache_dict(o->cache) : rf_rt_dict_new();
    /* a device keeps its copies of the inputs in the cache (a rank's, of
    ** its share: the stamps name the share's rows, rt_inputs.c) */
    env.devcache = rf_rt_cache_device(o->cache);
    rf_status st = res && env.dict ? RF_OK : RF_ENOMEM;
    if (!st) st = rf_cpu_pool_new(env.threads, &env.pool);
    void *dev = NULL;
    rf_rt_start start;
    int aside = 0;
    /* several ranks run on the CPU, which opens at once: no start aside */
    int ranks = rf_rt_dist_world_size(o->world) > 1;
    double t0 = rf_now();
    if (!st) {
        res->dict = env.dict;
        res->dict_borrowed = o->cache != NULL;
        res->device = dv->name;
        aside = dv->attach && !ranks && rf_rt_start_begin(&start, dv, &env);
        if (!aside) {
            double topen = rf_now();
            st = dv->open(&env, &dev);
            res->device_seconds = rf_now() - topen;
            t0 = rf_now();
        }
    }
    rf_rt_dist *dist = NULL; /* several ranks (runtime/dist); NULL: one process */
    const rf_rt_tuning *tu = o->tuning ? o->tuning : rf_rt_tuning_default();
    /* made even after a failure, so that the end's vote tells the others */
    if (res && st != RF_ENOMEM) {
        rf_status dst = rf_rt_dist_new(o->world, p, tu->rank_timeout_s == INT64_MAX ? 0 : (double)tu->rank_timeout_s,
                                       tu->rank_broadcast_bytes, &dist);
        if (!st) st = dst;
        rf_rt_dist_set_threads(dist, env.threads);
    }
    /* GPU ranks: the transport of the device's own moves (NCCL) */
    rf_rt_xport *xp = NULL;
    if (!st && dist && dv->exchange) {
        int emulated = rf_rt_gpu_emulated();
        st = rf_rt_dist_xport_open(dist, emulated, rf_rt_gpu_pci(), &xp, res->rank_exchange,
                                   sizeof res->rank_exchange, d);
        /* real GPUs without NCCL work, slower: never silently */
        if (!st && !xp && !emulated && rf_rt_dist_rank(dist) == 0)
            rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(NULL, 0, 0), "GPU ranks exchange rows %s", res->rank_exchange);
    }
    rf_rt_inputs in;
    rf_rt_inputs_init(&in, &env);
    in.dist = dist;
    in.takes_stored = dv->takes_stored;
    /* several ranks: the strings every rank interns first, alike */
    int64_t top = 0;
    if (!st && dist) st = rf_rt_dist_codes_begin(dist, env.dict);
    if (!st && dist) st = rf_rt_inputs_shared_strings(&in, &top);
    if (dist) rf_rt_dist_codes_mark(dist, env.dict, top);
    loader ld = {dv, &dev, aside ? &start : NULL, &in, res, d, NULL, 0, 0, 0};
    if (!st) st = load_inputs(&ld, dist);
    else if (aside) join_start(&ld);
    if (!st && dist) st = rf_rt_dist_codes_agree(dist, env.dict, d);
    double t1 = rf_now();
    if (dist) rf_rt_dist_run_begins(dist);
    if (!st && o->profile) st = stats_new(dv, dev, p, res);
    if (!st) st = walk(dv, dev, &env, dist, xp);
    if (!st) st = dv->finish(dev);
    rf_rt_dist_move om;
    for (int32_t v = 0; v < p->nvars && !st && dist; v++) { /* outputs to rank 0, which writes them */
        if (p->vars[v]->role != RF_HIR_ROLE_OUTPUT || !rf_rt_dist_output_move(dist, v, &om)) continue;
        rf_rt_xmove mv;
        char what[96];
        int on = 0;
        st = move_on_device(dv, dev, &env, dist, xp, &om, &mv, what, sizeof what, &on);
        if (!st) st = dist_move(dv, dev, &env, dist, xp, &om, on, &mv);
    }
    double t2 = rf_now();
    if (dist) {
        res->nranks = rf_rt_dist_size(dist);
        res->rank = rf_rt_dist_rank(dist);
        if (!res->rank && o->profile && !(res->ranks = rf_calloc((size_t)res->nranks, sizeof *res->ranks)))
            st = st ? st : RF_ENOMEM;
        /* the load's copies, for each rank's profile line */
        rf_rt_dist_copied(dist, (int64_t)res->load_h2d_bytes, (int64_t)res->load_wire_bytes,
                          (int64_t)res->load_found_bytes);
        st = rf_rt_dist_end(dist, st, t2 - t1, res->ranks, d);
        if (res->ranks) rf_rt_dist_codes_note(dist, res->ranks, res->rank_strings, sizeof res->rank_strings);
        rf_rt_dist_xport_close(xp);
        rf_rt_dist_free(dist);
    }
    if (!st) st = outputs(dv, dev, p, res);
    if (res) {
        res->load_seconds = t1 - t0;
        res->run_seconds = t2 - t1;
        res->output_seconds = rf_now() - t2;
    }
    /* a process about to end leaves the teardown to the system: it is wall
    ** time a fresh process pays after its outputs are ready (issue 20) */
    if (!o->process_exits || st) {
        if (dev) dv->close(dev);
        rf_rt_inputs_close(&in);
    } else if (dev && dv->report) {
        dv->report(dev);
    }
    /* the workers end here even so: a process that ends with threads left
    ** waits for each of them to be scheduled and killed */
    rf_cpu_pool_free(env.pool);
    rf_buf_free(&clash);
    if (st) {
        if (res) res->dict = NULL;
        rf_rt_result_free(res);
        if (!o->cache) rf_rt_dict_free(env.dict);
        return st;
    }
    *out = res;
    return RF_OK;
}

/* ---- the device and the fallback ------------------------------------------- */

/* Several ranks on the GPU: each says whether it has one, so that a rank
** without stops them all at once instead of leaving the others waiting in
** their first exchange until rank_timeout_s. */
static rf_status ranks_have_gpu(const rf_rt_options *o, int gpu, rf_diags *d)
{
    rf_rt_dist_world *w = o->world;
    int n = rf_rt_dist_world_size(w), me = rf_rt_dist_world_rank(w);
    rf_rt_dist_vote mine, *all = rf_calloc((size_t)n, sizeof *all);
    if (!all) return RF_ENOMEM;
    memset(&mine, 0, sizeof mine);
    mine.failed = !gpu;
    const rf_rt_tuning *tu = o->tuning ? o->tuning : rf_rt_tuning_default();
    double timeout = tu->rank_timeout_s == INT64_MAX ? 0 : (double)tu->rank_timeout_s;
    rf_status st = rf_rt_dist_allgather_votes(w, timeout, "the ranks' GPU check", &mine, all, d);
    int first = -1;
    for (int r = 0; r < n && !st && first < 0; r++)
        if (all[r].failed) first = r;
    free(all);
    if (st || first < 0) return st;
    rf_rt_dist_set_stopped_by(first);
    if (me != first) {
        /* the lowest rank without a GPU says why; rank 0 names it, and the
        ** others tell their caller the same (a command prints it once) */
        rf_diags_free(d);
        rf_diags_init(d);
        rf_error(d, rf_mkloc(NULL, 0, 0), "--device gpu: rank %d of %d has no usable GPU (its message is %s); all "
                 "ranks stopped", first, n, me == 0 ? "above or below" : "that rank's");
    }
    return RF_EUSER;
}

/* Several ranks: every rank must run the same program on the same device,
** or their collectives pair up wrongly and fail far from the cause (a
** program read from standard input reaches rank 0 only under mpirun: the
** others compiled an empty one, and MPI failed in the end's vote). The
** first vote of every run compares a hash of each rank's Harmony program
** and device with rank 0's; rank 0 names the first rank that differs. */
static rf_status ranks_same_program(const rf_hir_program *p, const rf_rt_options *o, rf_diags *d)
{
    rf_rt_dist_world *w = o->world;
    int n = rf_rt_dist_world_size(w), me = rf_rt_dist_world_rank(w);
    rf_rt_dist_vote mine, *all = rf_calloc((size_t)n, sizeof *all);
    if (!all) return RF_ENOMEM;
    memset(&mine, 0, sizeof mine);
    rf_buf b;
    rf_buf_init(&b);
    rf_status st = rf_hir_serialize(p, &b);
    if (!st && b.oom) st = RF_ENOMEM;
    mine.failed = st != RF_OK; /* (out of memory here: the others stop too) */
    mine.v[0] = st ? 0 : (int64_t)(rf_hash64(b.data, (size_t)b.len, 0) >> 1);
    mine.v[1] = o->device;
    rf_buf_free(&b);
    const rf_rt_tuning *tu = o->tuning ? o->tuning : rf_rt_tuning_default();
    double timeout = tu->rank_timeout_s == INT64_MAX ? 0 : (double)tu->rank_timeout_s;
    rf_status vst = rf_rt_dist_allgather_votes(w, timeout, "the ranks' program check", &mine, all, d);
    int failed = -1, other = -1;
    for (int r = 0; r < n && !vst; r++) {
        if (all[r].failed && failed < 0) failed = r;
        if (other < 0 && (all[r].v[0] != all[0].v[0] || all[r].v[1] != all[0].v[1])) other = r;
    }
    free(all);
    if (vst) return vst;
    if (failed >= 0) {
        rf_rt_dist_set_stopped_by(failed);
        if (me == failed) return st;
        rf_diags_free(d);
        rf_diags_init(d);
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d stopped with an error (its message is %s); all ranks stopped",
                 failed, n, me == 0 ? "above or below" : "that rank's");
        return RF_EUSER;
    }
    if (other < 0) return RF_OK;
    rf_rt_dist_set_stopped_by(0); /* rank 0 reports; every rank stops */
    rf_error(d, rf_mkloc(NULL, 0, 0),
             "rank %d of %d runs another program than rank 0 (or on another device): every rank must compile the "
             "same program with the same options; a program read from standard input reaches rank 0 only (give "
             "its file); all ranks stopped", other, n);
    return RF_EUSER;
}

/* On the GPU where one is chosen; a GPU whose memory cannot hold the
** program's data leaves the run to the CPU, which says so (thesis chapter 6
** would partition: a device of partitions would plug in here). */
/* --device auto: the placement model's choice (rt_place_run.c) when there
** may be a GPU; its prediction goes into the result (--profile prints it). */
static void place_note(rf_rt_result *res, const rf_rt_place_choice *ch, int gpu, int probed)
{
    if (!res || !ch) return;
    res->place_auto = 1;
    res->place_cpu_s = ch->cpu_s;
    res->place_gpu_s = gpu ? ch->gpu_s : -1;
    res->place_records = ch->records;
    res->place_runs = ch->runs;
    res->place_cpu_total_s = ch->cpu_total_s;
    res->place_gpu_total_s = ch->gpu_total_s; /* also without a usable GPU: why it was tried */
    res->place_later_gain_s = ch->later_gain_s;
    res->place_probed = probed;
    res->place_host_gpu = ch->host_gpu;
    res->place_tie = ch->tie;
    res->place_driver_loaded = rf_rt_place_driver_loaded();
    res->place_emulated = rf_rt_gpu_emulated();
    res->place_gpu_started = ch->gpu_started;
    res->place_gpu_held = ch->gpu_held;
    res->place_cpu_read_s = ch->cpu_read_s;
    res->place_gpu_read_s = ch->gpu_read_s;
    res->place_held_guessed = ch->held_guessed;
    res->place_choose_s = ch->choose_s;
    res->place_model_s = ch->model_s;
    res->place_inputs_s = ch->inputs_s;
    res->place_predict_s = ch->predict_s;
}

/* What this run found when it looked for the GPU (for the model's host
** record); the emulator's GPU is no host's. */
static void host_found(rf_rt_result *res, int usable, const char *why)
{
    if (!res || rf_rt_gpu_emulated()) return;
    res->host_gpu_found = usable != 0;
    if (usable) rf_rt_place_gpu_kind(why, res->host_gpu_kind);
}

/* Several ranks with --device gpu: rank r of a host on its GPU r mod count,
** started here on the run's thread (NCCL's communicator takes the device
** the CUDA runtime has current there); no fallback to the CPU one rank at a
** time (the others would wait in exchanges a CPU run does not make), so
** GPU memory running out is an error. */
static rf_status run_ranks_on_gpus(const rf_hir_program *p, const rf_rt_options *o, rf_rt_result **out, rf_diags *d)
{
    rf_rt_gpu_choose(rf_rt_dist_world_local_rank(o->world));
    char why[256];
    int gpu = rf_rt_gpu_available(why, sizeof why);
    if (!gpu) rf_error(d, rf_mkloc(NULL, 0, 0), "--device gpu: no usable GPU: %s", why);
    rf_status st = ranks_have_gpu(o, gpu, d);
    if (st) return st;
    return rf_rt_run_on(&rf_rt_gpu_device, p, o, out, d);
}

static rf_status run(const rf_hir_program *p, const rf_rt_options *o, rf_rt_result **out, rf_diags *d)
{
    *out = NULL;
    /* several ranks run on the CPU unless --device gpu asks for GPUs */
    int ranks = rf_rt_dist_world_size(o->world) > 1;
    if (ranks) {
        rf_rt_dist_set_stopped_by(-1);
        rf_status st = ranks_same_program(p, o, d);
        if (st) return st;
    }
    if (ranks && o->device == RF_RT_DEVICE_GPU) return run_ranks_on_gpus(p, o, out, d);
    rf_rt_place_choice ch;
    int chosen = 0, fell_back = 0;
    if (o->device == RF_RT_DEVICE_AUTO && !ranks) {
        /* the choice first, from the model and the inputs' sizes alone: where
        ** the CPU wins, the GPU's driver is not even loaded (loading
        ** libcuda.so.1 costs a small program more than its run) */
        int started = rf_rt_gpu_started();
        rf_rt_place_choose(p, o, o->threads > 0 ? o->threads : rf_online_cpus(), started, &ch, d);
        chosen = 1;
        /* a host the model knows to have no usable GPU: not looked for again
        ** (a run with --device gpu looks, and records what it finds), and
        ** the note says so whatever the prediction was */
        if (ch.host_gpu == 0 && !started && !rf_rt_gpu_emulated()) {
            rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(NULL, 0, 0),
                        "running on the CPU: no usable GPU (none on this host when last looked for; --device gpu "
                        "looks again)");
            rf_status st = rf_rt_run_on(&rf_rt_cpu_device, p, o, out, d);
            place_note(*out, &ch, 0, 0);
            return st;
        }
        /* no GPU at all (no driver installed: found without loading one,
        ** which a CPU choice never does): the note says so, not a
        ** prediction against a GPU that is not there */
        char none[256];
        if (!ch.gpu && !started && rf_rt_gpu_absent(none, sizeof none)) {
            rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(NULL, 0, 0), "running on the CPU: no usable GPU (%s)", none);
            rf_status st = rf_rt_run_on(&rf_rt_cpu_device, p, o, out, d);
            place_note(*out, &ch, 0, 0);
            return st;
        }
        if (!ch.gpu) {
            if (ch.tie)
                rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(NULL, 0, 0),
                            "running on the CPU: the GPU predicted within %.0f %% of it (%.3g s against %.3g s%s), "
                            "and the CPU needs no start (--device gpu runs there)",
                            RF_RT_PLACE_TIE * 100, ch.gpu_total_s, ch.cpu_total_s + ch.later_gain_s,
                            ch.runs > 1 ? ", all runs" : "");
            else
                rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(NULL, 0, 0),
                            "running on the CPU: predicted faster than the GPU (%.3g s against %.3g s%s; --device gpu "
                            "runs there)",
                            ch.cpu_total_s, ch.gpu_total_s, ch.runs > 1 ? ", all runs" : "");
            rf_status st = rf_rt_run_on(&rf_rt_cpu_device, p, o, out, d);
            place_note(*out, &ch, 1, started);
            return st;
        }
    }
    if (o->device != RF_RT_DEVICE_CPU && !ranks) {
        char why[256];
        /* the driver's start (about 0.3 s) is not waited for here: the GPU
        ** starts on a thread beside the reading of the inputs (rt_start.c) */
        int gpu = rf_rt_gpu_maybe(why, sizeof why);
        if (o->device == RF_RT_DEVICE_GPU && !gpu) {
            rf_error(d, rf_mkloc(NULL, 0, 0), "--device gpu: no usable GPU: %s", why);
            return RF_EUSER;
        }
        int started = rf_rt_gpu_started();
        if (chosen && !gpu) {
            rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(NULL, 0, 0), "running on the CPU: no usable GPU (%s)", why);
            rf_status st = rf_rt_run_on(&rf_rt_cpu_device, p, o, out, d);
            place_note(*out, &ch, 0, 1);
            host_found(*out, 0, why);
            return st;
        }
        if (gpu) {
            rf_diags gd;
            rf_diags_init(&gd);
            /* asked before the start: a holder that comes later did not shorten it */
            int held = !started && !rf_rt_gpu_emulated() && rf_rt_hold_present();
            rf_status gst = rf_rt_run_on(&rf_rt_gpu_device, p, o, out, &gd);
            if (*out) {
                (*out)->gpu_fresh = !started;
                (*out)->gpu_held = held;
            }
            /* the driver started, or failed to, beside the reading */
            int usable = rf_rt_gpu_available(why, sizeof why);
            if (o->device == RF_RT_DEVICE_AUTO)
                rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(NULL, 0, 0),
                            usable ? "running on the GPU: %s" : "running on the CPU: no usable GPU (%s)", why);
            if (!usable && o->device == RF_RT_DEVICE_AUTO) {
                rf_rt_result_free(*out);
                *out = NULL;
                rf_diags_free(&gd);
                rf_status st = rf_rt_run_on(&rf_rt_cpu_device, p, o, out, d);
                place_note(*out, &ch, 0, 1);
                host_found(*out, 0, why);
                return st;
            }
            host_found(*out, usable, why);
            if (gst != RF_EDEVMEM) {
                for (int64_t i = 0; i < gd.count; i++)
                    rf_diag_add(d, gd.items[i].sev, gd.items[i].loc, "%s", gd.items[i].msg);
                rf_diags_free(&gd);
                if (chosen) place_note(*out, &ch, 1, 1);
                return gst;
            }
            for (int64_t i = 0; i < gd.count; i++)
                if (gd.items[i].sev == RF_SEV_ERROR)
                    rf_diag_add(d, RF_SEV_WARNING, gd.items[i].loc, "%s: running on the CPU instead", gd.items[i].msg);
            rf_diags_free(&gd);
            fell_back = 1;
        }
    }
    rf_status st = rf_rt_run_on(&rf_rt_cpu_device, p, o, out, d);
    if (chosen) place_note(*out, &ch, 1, 1);
    if (*out) (*out)->gpu_fell_back = fell_back;
    return st;
}

/* A finished run's records into the placement model (not several ranks',
** nor the emulator's: its times are not a GPU's). */
static void record(const rf_hir_program *p, const rf_rt_options *o, rf_rt_result *res, rf_diags *d)
{
    if (!res || res->nranks > 1 || (res->device && !strcmp(res->device, "gpu") && rf_rt_gpu_emulated())) return;
    rf_rt_place_record(p, o, res, d);
}

rf_status rf_rt_run(const rf_hir_program *p, const rf_rt_options *o, rf_rt_result **out, rf_diags *d)
{
    const char *dir = o->data_dir ? o->data_dir : ".";
    if (o->cache || !rf_db_is_database(dir)) {
        rf_status st = run(p, o, out, d);
        if (!st) record(p, o, *out, d);
        return st;
    }
    /* a database's columns are mapped, not owned by the run: a cache of this
    ** run holds them, and the result keeps only the dictionary */
    rf_rt_options oo = *o;
    if (!(oo.cache = rf_rt_cache_new())) return RF_ENOMEM;
    rf_status st = run(p, &oo, out, d);
    if (!st) record(p, o, *out, d);
    if (!st) {
        (*out)->dict_borrowed = 0;
        rf_rt_cache_take_dict(oo.cache);
    }
    if (st || !o->process_exits) rf_rt_cache_free(oo.cache); /* else the mappings go with the process */
    return st;
}

void rf_rt_result_free(rf_rt_result *r)
{
    if (!r) return;
    for (int32_t i = 0; i < r->noutputs; i++) rf_rt_rel_free(&r->outputs[i].rel);
    free(r->outputs);
    free(r->stats);
    free(r->ranks);
    free(r->gpu_trace);
    if (!r->dict_borrowed) rf_rt_dict_free(r->dict);
    free(r);
}
