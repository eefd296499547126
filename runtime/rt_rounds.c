/*
** runtime/rt_rounds.c: which kernels a semi-naive loop's round runs
** (rt_rounds.h), for the one driver's walk (rt_run.c).
**
** Owns: the rule that a loop's kernel of empty driving input is not run
** (its result, empty, made in place), the kernels a round looks at (those
** whose inputs changed), and the count of kernels not run for --profile.
**
** Why. A semi-naive loop runs every rule of its stratum each round, and a
** rule whose deltas are empty derives nothing: in a stratum of N predicates
** where one gained rows, the other rules' kernels would each allocate, free
** (on the GPU: launch) and make nothing, rounds x N times (a cycle of 2000
** copies took 2.6 s on the CPU, of 4000 8.6 s).
**
** The rule. A kernel whose driving input is empty (makes_nothing: a map,
** copy, sort, dedupe or difference of nothing, a join or triejoin with an
** empty side, an anti-join of nothing, a concatenation of nothing, a gather
** or join map of an empty index) makes the empty relation, and an insert of
** nothing leaves its set: that is the kernel's result exactly, so the walk
** frees the output (the device's skip op, which on the GPU keeps its
** liveness frees) instead of running it. A fused kernel (the device's
** fused_until) is not run whole or runs whole; the stages of one that ran
** are the device's. Sizes are the host's (rows: the CPU's counts, and the
** GPU's, read back after every kernel whose size depends on the data): no
** wait for the device. With several ranks a rank's own rows do not tell,
** and every rank must decide alike: the walk keeps which variables are
** empty on every rank (the loop's tests, voted on at the branch, what a
** kernel not run made, what was released), and takes any other as not.
**
** The kernels a round looks at. Not running a kernel still costs a look at
** its inputs, rounds x N again (4000 copies: 0.85 s of looks). So a round
** looks only at a kernel that may run: one whose driving input (or a value
** it releases) was written with rows since it was last looked at, one that
** ran the round before (its output must go), and one that runs every round
** (a kind the rule does not cover, a driving input the loop never writes, an
** output another kernel of the loop writes too). A write at or after the
** reader's place wakes it for the next round, a write before it for this
** one; entering a loop from another block looks at every kernel. A kernel
** not looked at would make nothing, and its output is empty already.
*/
#include "rt_rounds.h"

#include <stdlib.h>
#include <string.h>

/* A loop block's readers and bitsets of positions (kernel indices in the block). */
typedef struct loop_plan {
    int32_t n, nw;             /* kernels; 64-bit words of a set of them */
    uint64_t *cur, *next;      /* to look at this round, and the next */
    uint64_t *always;          /* looked at every round */
    int32_t *rstart, *readers; /* per variable (CSR): the positions it wakes */
    int32_t *head;             /* per position: the first stage of the fused kernel it is in, or itself */
    uint8_t *test;             /* per variable: bit 0 a test of the branch, bit 1 holds rows now */
    int64_t tests_full;        /* the tests that hold rows now (one process) */
} loop_plan;

struct rf_rt_rounds {
    const rf_rt_env *env;
    const rf_hir_program *p;
    const rf_rt_device_ops *dv;
    void *dev;
    rf_rt_dist *dist;
    uint8_t *empty;    /* ranks: per variable, known to hold no rows on any rank */
    int32_t *made;     /* the outputs of a fused kernel's stages that would be empty */
    int32_t nmade;
    int32_t *drv;      /* a kernel's driving inputs (scratch) */
    loop_plan **plans; /* per block: NULL until entered, or not a loop */
    const rf_hir_block *bl;
    loop_plan *lp; /* the block's, NULL: not a loop */
    int32_t prev;  /* the block walked before */
    int32_t span_end; /* a fused kernel that ran: its stages up to here are the device's */
    int64_t *visits;  /* per block */
    int64_t *handed;  /* per kernel id: the times the device had it */
    int32_t nids;
};

static inline void bit_set(uint64_t *s, int32_t i) { s[i >> 6] |= UINT64_C(1) << (i & 63); }
static inline int bit_has(const uint64_t *s, int32_t i) { return (int)((s[i >> 6] >> (i & 63)) & 1); }

static int is_loop(const rf_hir_block *bl)
{
    return bl->term == RF_HIR_T_BRANCH && (bl->target == bl->id || bl->else_target == bl->id);
}

rf_status rf_rt_rounds_new(const rf_rt_env *env, const rf_rt_device_ops *dv, void *dev, rf_rt_dist *dist,
                           rf_rt_rounds **out)
{
    const rf_hir_program *p = env->p;
    rf_rt_rounds *r = rf_calloc(1, sizeof *r);
    if (!r) return RF_ENOMEM;
    r->env = env;
    r->p = p;
    r->dv = dv;
    r->dev = dev;
    r->dist = dist;
    r->prev = -1;
    r->span_end = -1;
    int32_t maxk = 0;
    for (int32_t b = 0; b < p->nblocks; b++) {
        if (p->blocks[b]->nkernels > maxk) maxk = p->blocks[b]->nkernels;
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->id >= r->nids) r->nids = p->blocks[b]->kernels[j]->id + 1;
    }
    r->made = rf_calloc((size_t)maxk + 1, sizeof *r->made);
    r->drv = rf_calloc((size_t)rf_hir_max_inputs(p) + 2, sizeof *r->drv);
    r->plans = rf_calloc((size_t)p->nblocks + 1, sizeof *r->plans);
    r->visits = rf_calloc((size_t)p->nblocks + 1, sizeof *r->visits);
    r->handed = rf_calloc((size_t)r->nids + 1, sizeof *r->handed);
    if (dist) r->empty = rf_calloc((size_t)p->nvars + 1, 1);
    if (!r->made || !r->drv || !r->plans || !r->visits || !r->handed || (dist && !r->empty)) {
        rf_rt_rounds_free(r);
        return RF_ENOMEM;
    }
    *out = r;
    return RF_OK;
}

static void plan_free(loop_plan *lp)
{
    if (!lp) return;
    free(lp->cur);
    free(lp->next);
    free(lp->always);
    free(lp->rstart);
    free(lp->readers);
    free(lp->head);
    free(lp->test);
    free(lp);
}

void rf_rt_rounds_free(rf_rt_rounds *r)
{
    if (!r) return;
    for (int32_t b = 0; r->plans && b < r->p->nblocks; b++) plan_free(r->plans[b]);
    free(r->plans);
    free(r->made);
    free(r->drv);
    free(r->visits);
    free(r->handed);
    free(r->empty);
    free(r);
}

/* ---- the rule ---------------------------------------------------------- */

static int var_empty(const rf_rt_rounds *r, int32_t v)
{
    if (v < 0) return 0;
    for (int32_t i = 0; i < r->nmade; i++)
        if (r->made[i] == v) return 1;
    return r->dist ? r->empty[v] : r->dv->rows(r->dev, v) == 0;
}

/* How kernel k's driving inputs decide (drivers: them, at most k->nin + 1):
** 1 nothing when one is empty, 2 nothing when all are, 0 it may make rows
** whatever they are (a group or a total of nothing is not always nothing). */
static int drivers(const rf_hir_kernel *k, int32_t *drv, int32_t *ndrv)
{
    *ndrv = 0;
    switch (k->kind) {
    case RF_HIR_MAP:
    case RF_HIR_ANTI_INDEX: /* (the left side's rows that ...) */
    case RF_HIR_UNIQUE:
    case RF_HIR_DIFFERENCE: /* (the first input's rows that ...) */
    case RF_HIR_SORT:
    case RF_HIR_COPY:
        if (k->nin < 1) return 0;
        drv[(*ndrv)++] = k->in[0];
        return 1;
    case RF_HIR_JOIN_MAP:
    case RF_HIR_GATHER_MAP:
    case RF_HIR_GATHER:
        if (k->idx < 0) return 0;
        drv[(*ndrv)++] = k->idx;
        return 1;
    case RF_HIR_JOIN_INDEX:
    case RF_HIR_LFTJ:
        if (k->nin < 1 || (k->kind == RF_HIR_JOIN_INDEX && k->nin < 2)) return 0;
        for (int32_t i = 0; i < k->nin; i++) drv[(*ndrv)++] = k->in[i];
        return 1;
    case RF_HIR_CONCAT:
    case RF_HIR_INSERT: {
        /* an insert adds in[1..] to its set in[0] */
        int32_t i0 = k->kind == RF_HIR_INSERT;
        if (k->nin <= i0 || (i0 && k->in[0] != k->out)) return 0;
        for (int32_t i = i0; i < k->nin; i++) drv[(*ndrv)++] = k->in[i];
        return 2;
    }
    default: return 0;
    }
}

/* Whether kernel k makes the empty relation (an insert: adds nothing). */
static int makes_nothing(const rf_rt_rounds *r, const rf_hir_kernel *k, int32_t *drv)
{
    int32_t n;
    int how = drivers(k, drv, &n);
    if (!how) return 0;
    for (int32_t i = 0; i < n; i++)
        if (var_empty(r, drv[i]) == (how == 1)) return how == 1;
    return how == 2;
}

/* ---- a loop's plan ------------------------------------------------------- */

static loop_plan *plan_new(rf_rt_rounds *r, const rf_hir_block *bl)
{
    const rf_hir_program *p = r->p;
    int32_t n = bl->nkernels, maxin = rf_hir_max_inputs(p);
    loop_plan *lp = rf_calloc(1, sizeof *lp);
    uint8_t *written = rf_calloc((size_t)p->nvars + 1, 1);
    int32_t *drv = rf_calloc((size_t)maxin + 2, sizeof *drv);
    if (!lp || !written || !drv) goto oom;
    lp->n = n;
    lp->nw = (n + 63) / 64;
    lp->cur = rf_calloc((size_t)lp->nw + 1, sizeof *lp->cur);
    lp->next = rf_calloc((size_t)lp->nw + 1, sizeof *lp->next);
    lp->always = rf_calloc((size_t)lp->nw + 1, sizeof *lp->always);
    lp->rstart = rf_calloc((size_t)p->nvars + 2, sizeof *lp->rstart);
    lp->head = rf_calloc((size_t)n + 1, sizeof *lp->head);
    lp->test = rf_calloc((size_t)p->nvars + 1, 1);
    if (!lp->cur || !lp->next || !lp->always || !lp->rstart || !lp->head || !lp->test) goto oom;
    for (int32_t t = 0; t < bl->ntest; t++)
        if (bl->test[t] >= 0 && bl->test[t] < p->nvars) lp->test[bl->test[t]] = 1;
    /* written: 1 by one kernel of the block, 2 by several */
    for (int32_t j = 0; j < n; j++) {
        int32_t o = bl->kernels[j]->out;
        if (o >= 0 && written[o] < 2) written[o]++;
    }
    /* the fused kernels' stages: the walk looks at a fused kernel at its first */
    for (int32_t j = 0; j < n; j++) lp->head[j] = j;
    for (int32_t j = 0; j < n && r->dv->fused_until; j++) {
        int32_t last = r->dv->fused_until(r->dev, bl->kernels[j]);
        for (int32_t i = j + 1; last >= 0 && last != bl->kernels[j]->id && i < n; i++) {
            if (lp->head[i] == i) lp->head[i] = j;
            if (bl->kernels[i]->id == last) break;
        }
    }
    /* two passes: count the readers, then place them */
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            for (int32_t v = 0; v < p->nvars; v++) lp->rstart[v + 1] += lp->rstart[v];
            lp->readers = rf_calloc((size_t)lp->rstart[p->nvars] + 1, sizeof *lp->readers);
            if (!lp->readers) goto oom;
        }
        for (int32_t j = 0; j < n; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            int32_t nd = 0, variant = 0;
            int how = drivers(k, drv, &nd);
            for (int32_t i = 0; i < nd; i++) variant += written[drv[i]] > 0;
            /* every round: a kind the rule does not cover, an output another
            ** kernel writes too, a driving input the loop never writes that
            ** alone may make rows (one driver; any of a concatenation's) */
            int always = !how || (k->out >= 0 && written[k->out] > 1) || !variant || (how == 2 && variant < nd);
            if (always) {
                if (!pass) bit_set(lp->always, j);
                continue;
            }
            for (int32_t i = 0; i < nd + k->nrelease; i++) {
                int32_t v = i < nd ? drv[i] : k->release[i - nd];
                if (v < 0 || v >= p->nvars || !written[v]) continue;
                if (!pass) lp->rstart[v + 1]++;
                else lp->readers[lp->rstart[v]++] = j;
            }
        }
        /* a fused kernel's stage looked at every round: its first stage too
        ** (a stage looked at alone would be taken as done by its fused kernel's
        ** last run: the GPU keeps that until the first stage runs again) */
        for (int32_t j = 0; !pass && j < n; j++)
            if (bit_has(lp->always, j)) bit_set(lp->always, lp->head[j]);
        if (pass) /* (the placing moved each start to the next's) */
            for (int32_t v = p->nvars; v > 0; v--) lp->rstart[v] = lp->rstart[v - 1];
        if (pass) lp->rstart[0] = 0;
    }
    free(written);
    free(drv);
    return lp;
oom:
    free(written);
    free(drv);
    plan_free(lp);
    return NULL;
}

rf_status rf_rt_rounds_enter(rf_rt_rounds *r, int32_t b)
{
    const rf_hir_block *bl = r->p->blocks[b];
    int fresh = r->prev != b;
    r->visits[b]++;
    r->prev = b;
    r->bl = bl;
    r->lp = NULL;
    r->span_end = -1;
    if (!is_loop(bl)) return RF_OK;
    if (!r->plans[b] && !(r->plans[b] = plan_new(r, bl))) return RF_ENOMEM;
    loop_plan *lp = r->lp = r->plans[b];
    if (fresh) {
        /* entered from another block: every kernel, and the tests' rows as they are */
        memset(lp->cur, 0xff, (size_t)lp->nw * sizeof *lp->cur);
        memset(lp->next, 0, (size_t)lp->nw * sizeof *lp->next);
        lp->tests_full = 0;
        for (int32_t t = 0; t < bl->ntest; t++) {
            int32_t v = bl->test[t];
            if (v < 0 || v >= r->p->nvars) continue;
            lp->test[v] = 1;
            if (!r->dist && r->dv->rows(r->dev, v) > 0 && lp->test[v] == 1) {
                lp->test[v] = 3;
                lp->tests_full++;
            }
        }
        return RF_OK;
    }
    uint64_t *t = lp->cur;
    lp->cur = lp->next;
    lp->next = t;
    for (int32_t w = 0; w < lp->nw; w++) {
        lp->cur[w] |= lp->always[w];
        lp->next[w] = 0;
    }
    return RF_OK;
}

int32_t rf_rt_rounds_next(rf_rt_rounds *r, int32_t j)
{
    loop_plan *lp = r->lp;
    if (!lp) return j + 1;
    int32_t i = j + 1;
    if (i >= lp->n) return lp->n;
    int32_t w = i >> 6;
    uint64_t bits = lp->cur[w] & (~UINT64_C(0) << (i & 63));
    while (!bits) {
        if (++w >= lp->nw) return lp->n;
        bits = lp->cur[w];
    }
    i = w * 64 + __builtin_ctzll(bits);
    return i < lp->n ? i : lp->n;
}

/* Variable v holds rows now (full) or none: a test's count follows it. */
static void note_rows(rf_rt_rounds *r, int32_t v, int full)
{
    loop_plan *lp = r->lp;
    if (!lp || v < 0 || !(lp->test[v] & 1) || ((lp->test[v] >> 1) & 1) == full) return;
    lp->test[v] = (uint8_t)(1 | (full << 1));
    lp->tests_full += full ? 1 : -1;
}

/* Kernel k is not run: its result, empty, in place. */
static void skip_kernel(rf_rt_rounds *r, const rf_hir_kernel *k)
{
    int insert = k->kind == RF_HIR_INSERT;
    if (r->dv->skip) r->dv->skip(r->dev, k);
    else if (!insert && r->dv->rows(r->dev, k->out) > 0) r->dv->free(r->dev, k->out);
    if (!insert) note_rows(r, k->out, 0);
    if (r->dist && !insert) {
        r->empty[k->out] = 1;
        rf_rt_dist_emptied(r->dist, k->out);
    }
    for (int32_t i = 0; i < k->nrelease; i++) {
        r->dv->free(r->dev, k->release[i]);
        note_rows(r, k->release[i], 0);
        if (r->dist) r->empty[k->release[i]] = 1;
    }
}

int32_t rf_rt_rounds_skip(rf_rt_rounds *r, int32_t j)
{
    const rf_hir_block *bl = r->bl;
    if (!r->lp || j <= r->span_end) return 0;
    const rf_hir_kernel *k = bl->kernels[j];
    int32_t *dv = r->drv;
    if (!makes_nothing(r, k, dv)) return 0;
    int32_t last = r->dv->fused_until ? r->dv->fused_until(r->dev, k) : -1;
    int32_t n = 0;
    if (last < 0 || last == k->id) n = 1;
    else {
        /* a fused kernel: all of its stages make nothing, or it runs */
        r->nmade = 0;
        for (int32_t i = j; i < bl->nkernels; i++) {
            const rf_hir_kernel *ki = bl->kernels[i];
            if (i > j && !makes_nothing(r, ki, dv)) break;
            if (ki->kind != RF_HIR_INSERT) r->made[r->nmade++] = ki->out;
            if (ki->id == last) {
                n = i - j + 1;
                break;
            }
        }
        r->nmade = 0;
    }
    for (int32_t i = 0; i < n; i++) skip_kernel(r, bl->kernels[j + i]);
    return n;
}

/* Position i of the loop is looked at: this round when after pos, else the next. */
static void wake(loop_plan *lp, int32_t pos, int32_t i)
{
    int32_t h = lp->head[i];
    if (i > pos) {
        bit_set(lp->cur, i);
        if (h > pos) bit_set(lp->cur, h);
    } else {
        bit_set(lp->next, i);
        bit_set(lp->next, h);
    }
}

void rf_rt_rounds_ran(rf_rt_rounds *r, int32_t j)
{
    const rf_hir_kernel *k = r->bl->kernels[j];
    if (k->id >= 0 && k->id < r->nids) r->handed[k->id]++;
    if (r->empty && k->out >= 0) r->empty[k->out] = 0;
    loop_plan *lp = r->lp;
    if (!lp) return;
    if (j > r->span_end && r->dv->fused_until) {
        /* a fused kernel ran at its first stage: the others are the device's */
        int32_t last = r->dv->fused_until(r->dev, k);
        for (int32_t i = j + 1; last >= 0 && last != k->id && i < lp->n; i++) {
            bit_set(lp->cur, i);
            if (r->bl->kernels[i]->id == last) {
                r->span_end = i;
                break;
            }
        }
    }
    /* its output goes (or is made anew) next round */
    bit_set(lp->next, j);
    int32_t o = k->out;
    if (o < 0) return;
    int full = r->dist ? !r->empty[o] : r->dv->rows(r->dev, o) > 0;
    note_rows(r, o, full);
    if (!full) return;
    for (int32_t i = lp->rstart[o]; i < lp->rstart[o + 1]; i++) wake(lp, j, lp->readers[i]);
}

void rf_rt_rounds_freed(rf_rt_rounds *r, int32_t var)
{
    if (r->empty && var >= 0) r->empty[var] = 1;
    note_rows(r, var, 0);
}

int rf_rt_rounds_any(const rf_rt_rounds *r, int *any)
{
    if (!r->lp || r->dist) return 0;
    *any = r->lp->tests_full > 0;
    return 1;
}

void rf_rt_rounds_tested(rf_rt_rounds *r, int32_t var, int some)
{
    if (r->empty && var >= 0) r->empty[var] = !some;
}

void rf_rt_rounds_profile(const rf_rt_rounds *r, rf_rt_result *res)
{
    for (int32_t b = 0; b < r->p->nblocks; b++) {
        const rf_hir_block *bl = r->p->blocks[b];
        if (!is_loop(bl)) continue;
        for (int32_t j = 0; j < bl->nkernels; j++) {
            int32_t id = bl->kernels[j]->id;
            if (id < 0 || id >= res->nstats || id >= r->nids) continue;
            int64_t not_run = r->visits[b] - r->handed[id];
            res->stats[id].skipped = not_run > 0 ? not_run : 0;
        }
    }
}
