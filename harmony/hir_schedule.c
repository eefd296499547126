/*
** harmony/hir_schedule.c: list scheduling of each block and the liveness of
** temporaries (Red Fox thesis section 3.2.3).
**
** Owns: the order of kernels within a block and each kernel's release list.
** A kernel may run once the kernels it depends on ran (it reads what they
** write, or overwrites what they read or write). Among the ready kernels the
** scheduler prefers the one that lets the most temporaries die, then the one
** consuming the most recently produced value, so definitions sit next to
** their uses and few temporaries are alive at once. Ties keep program order,
** so the schedule is deterministic. A temporary is allocated when its kernel
** runs and released after its last reader.
*/
#include "hir_internal.h"

#include <string.h>

static int reads(const rf_hir_kernel *k, int32_t v)
{
    for (int32_t i = 0; i < k->nin; i++)
        if (k->in[i] == v) return 1;
    return 0;
}

static int depends(const rf_hir_kernel *later, const rf_hir_kernel *earlier)
{
    if (reads(later, earlier->out)) return 1;   /* read after write */
    if (reads(earlier, later->out)) return 1;   /* write after read */
    return later->out == earlier->out;          /* write after write */
}

static rf_status schedule_block(rf_hir_program *p, rf_hir_block *b, const uint8_t *crosses)
{
    int32_t n = b->nkernels;
    if (n == 0) return RF_OK;
    uint8_t *dep = rf_calloc((size_t)n * (size_t)n, 1); /* dep[j*n+i]: j needs i */
    uint8_t *done = rf_calloc((size_t)n, 1);
    int32_t *order = rf_malloc((size_t)n * sizeof *order);
    int32_t *defpos = rf_malloc((size_t)p->nvars * sizeof *defpos);
    int32_t *readers = rf_calloc((size_t)p->nvars, sizeof *readers);
    if (!dep || !done || !order || !defpos || !readers) {
        free(dep);
        free(done);
        free(order);
        free(defpos);
        free(readers);
        return RF_ENOMEM;
    }
    for (int32_t j = 0; j < n; j++)
        for (int32_t i = 0; i < j; i++) dep[(size_t)j * n + i] = (uint8_t)depends(b->kernels[j], b->kernels[i]);
    for (int32_t v = 0; v < p->nvars; v++) defpos[v] = -1;
    for (int32_t j = 0; j < n; j++)
        for (int32_t i = 0; i < b->kernels[j]->nin; i++) readers[b->kernels[j]->in[i]]++;
    for (int32_t step = 0; step < n; step++) {
        int32_t best = -1, best_dead = -1, best_recent = -1;
        for (int32_t j = 0; j < n; j++) {
            if (done[j]) continue;
            int ready = 1;
            for (int32_t i = 0; i < j && ready; i++)
                if (dep[(size_t)j * n + i] && !done[i]) ready = 0;
            if (!ready) continue;
            const rf_hir_kernel *k = b->kernels[j];
            int32_t dead = 0, recent = -1;
            for (int32_t i = 0; i < k->nin; i++) {
                int32_t v = k->in[i];
                if (p->vars[v]->role == RF_HIR_ROLE_TEMP && readers[v] == 1) dead++;
                if (defpos[v] > recent) recent = defpos[v];
            }
            if (dead > best_dead || (dead == best_dead && recent > best_recent)) {
                best = j;
                best_dead = dead;
                best_recent = recent;
            }
        }
        /* the dependences only point backwards, so some kernel is always ready */
        done[best] = 1;
        order[step] = best;
        const rf_hir_kernel *k = b->kernels[best];
        for (int32_t i = 0; i < k->nin; i++) readers[k->in[i]]--;
        defpos[k->out] = step;
    }
    rf_hir_kernel **sorted = rf_arena_alloc(&p->arena, (size_t)n * sizeof *sorted);
    if (!sorted) {
        free(dep);
        free(done);
        free(order);
        free(defpos);
        free(readers);
        return RF_ENOMEM;
    }
    for (int32_t s = 0; s < n; s++) sorted[s] = b->kernels[order[s]];
    b->kernels = sorted;
    b->capkernels = n;
    /* release points: after the last reader in this block, or right after
    ** the definition when nothing reads it */
    int32_t *last = defpos; /* reuse: last use position */
    for (int32_t v = 0; v < p->nvars; v++) last[v] = -1;
    for (int32_t s = 0; s < n; s++) {
        const rf_hir_kernel *k = sorted[s];
        if (last[k->out] < s) last[k->out] = s;
        for (int32_t i = 0; i < k->nin; i++) last[k->in[i]] = s;
    }
    int32_t *count = readers; /* reuse: releases per kernel */
    memset(count, 0, (size_t)p->nvars * sizeof *count);
    for (int32_t v = 0; v < p->nvars; v++)
        if (last[v] >= 0 && p->vars[v]->role == RF_HIR_ROLE_TEMP && !crosses[v]) count[last[v]]++;
    for (int32_t s = 0; s < n; s++) {
        rf_hir_kernel *k = sorted[s];
        k->nrelease = 0;
        k->release = count[s] ? rf_arena_alloc(&p->arena, (size_t)count[s] * sizeof *k->release) : NULL;
        if (count[s] && !k->release) p->oom = 1;
    }
    for (int32_t v = 0; v < p->nvars && !p->oom; v++)
        if (last[v] >= 0 && p->vars[v]->role == RF_HIR_ROLE_TEMP && !crosses[v]) {
            rf_hir_kernel *k = sorted[last[v]];
            k->release[k->nrelease++] = v;
        }
    free(dep);
    free(done);
    free(order);
    free(defpos);
    free(readers);
    return p->oom ? RF_ENOMEM : RF_OK;
}

rf_status rf_hir_schedule(rf_hir_program *p, rf_diags *d)
{
    (void)d;
    /* temporaries used in more than one block (or tested by a branch) live on */
    uint8_t *crosses = rf_calloc((size_t)p->nvars + 1, 1);
    int32_t *home = rf_malloc(((size_t)p->nvars + 1) * sizeof *home);
    if (!crosses || !home) {
        free(crosses);
        free(home);
        return RF_ENOMEM;
    }
    for (int32_t v = 0; v < p->nvars; v++) home[v] = -1;
    for (int32_t bi = 0; bi < p->nblocks; bi++) {
        rf_hir_block *b = p->blocks[bi];
        for (int32_t j = 0; j < b->nkernels; j++) {
            rf_hir_kernel *k = b->kernels[j];
            for (int32_t i = -1; i < k->nin; i++) {
                int32_t v = i < 0 ? k->out : k->in[i];
                if (home[v] == -1) home[v] = bi;
                else if (home[v] != bi) crosses[v] = 1;
            }
        }
        for (int32_t t = 0; t < b->ntest; t++) crosses[b->test[t]] = 1;
    }
    rf_status st = RF_OK;
    for (int32_t bi = 0; bi < p->nblocks && !st; bi++) st = schedule_block(p, p->blocks[bi], crosses);
    free(crosses);
    free(home);
    return st;
}
