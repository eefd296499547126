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
** so the schedule is deterministic. The dependences are edges from each
** variable's last writer and readers, the ready kernels a heap: linear in the
** block's kernels and inputs up to a log factor. A temporary is allocated when its kernel
** runs and released after its last reader. One read in another block than its
** writer's (a result the plan's pass `hoist` computes before a loop, read every
** round) is released where a liveness over the blocks finds it dead: after
** its last use in a block whose end it does not outlive, or after the first
** kernel of a block it is dead at while a predecessor ended with it live (the
** loop's exit).
*/
#include "hir_internal.h"

#include <stdlib.h>
#include <string.h>

/* Scratch arrays shared by every block: per variable (indexed by variable
** id, reset only where a block touched them, so a program of many small
** blocks costs what its kernels cost, not blocks * variables) and per
** kernel. */
typedef struct sched_scratch {
    int32_t *last_writer;  /* per variable: the last kernel (block index) writing it, -1 */
    int32_t *epoch_first;  /* per variable: head of the readers-since-last-write list, -1 */
    int32_t *defpos;       /* per variable: the step that defined it, -1 */
    int32_t *readers;      /* per variable: occurrences still to run among this block's inputs */
    int32_t *var_first;    /* per variable: head of its list of reader occurrences, -1 */
} sched_scratch;

/* A ready kernel in the heap; stale entries (an older dead count) are skipped. */
typedef struct ready_ent { int32_t dead, recent, j; } ready_ent;

/* Whether a should be taken before b: more temporaries dying, then the most
** recently produced input, then program order (the schedule's tie rule). */
static int ent_before(ready_ent a, ready_ent b)
{
    if (a.dead != b.dead) return a.dead > b.dead;
    if (a.recent != b.recent) return a.recent > b.recent;
    return a.j < b.j;
}

static void heap_push(ready_ent *h, int32_t *n, ready_ent e)
{
    int32_t i = (*n)++;
    h[i] = e;
    while (i > 0) {
        int32_t up = (i - 1) / 2;
        if (!ent_before(h[i], h[up])) break;
        ready_ent t = h[i];
        h[i] = h[up];
        h[up] = t;
        i = up;
    }
}

static ready_ent heap_pop(ready_ent *h, int32_t *n)
{
    ready_ent top = h[0];
    h[0] = h[--*n];
    int32_t i = 0;
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && ent_before(h[l], h[m])) m = l;
        if (r < *n && ent_before(h[r], h[m])) m = r;
        if (m == i) break;
        ready_ent t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    return top;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The temporaries whose last reader j would be. */
static int32_t dead_count(const rf_hir_program *p, const rf_hir_kernel *k, const int32_t *readers)
{
    int32_t dead = 0;
    for (int32_t i = 0; i < k->nin; i++) {
        int32_t v = k->in[i];
        if (p->vars[v]->role == RF_HIR_ROLE_TEMP && readers[v] == 1) dead++;
    }
    return dead;
}

/* List scheduling of one block, in O((kernels + inputs) log kernels): a
** kernel j must follow each earlier kernel it reads from (read after write),
** overwrites the input of (write after read) or overwrites the output of
** (write after write). Only the last earlier writer of a variable and the
** readers since that write need edges: every older access is ordered before
** that writer already. */
static rf_status schedule_block(rf_hir_program *p, rf_hir_block *b, const uint8_t *crosses, sched_scratch *sc)
{
    int32_t n = b->nkernels;
    if (n == 0) return RF_OK;
    int64_t nocc = 0;
    for (int32_t j = 0; j < n; j++) nocc += b->kernels[j]->nin;
    /* edges: at most one per input (its last writer), one for the output's
    ** last writer, and one per earlier reader of the output since that write */
    int64_t maxedges = 2 * nocc + n;
    int32_t *succ_first = rf_malloc((size_t)n * sizeof *succ_first);
    int32_t *edge_to = rf_malloc((size_t)(maxedges + 1) * sizeof *edge_to);
    int32_t *edge_next = rf_malloc((size_t)(maxedges + 1) * sizeof *edge_next);
    int32_t *indeg = rf_calloc((size_t)n, sizeof *indeg);
    int32_t *occ_kernel = rf_malloc((size_t)(nocc + 1) * sizeof *occ_kernel); /* reader occurrence -> kernel */
    int32_t *occ_next = rf_malloc((size_t)(nocc + 1) * sizeof *occ_next);      /* next occurrence of the same variable */
    int32_t *epoch_next = rf_malloc((size_t)(nocc + 1) * sizeof *epoch_next);  /* next in the readers-since-write list */
    int32_t *cur_dead = rf_malloc((size_t)n * sizeof *cur_dead);
    uint8_t *state = rf_calloc((size_t)n, 1); /* 0 waiting, 1 ready, 2 done */
    int32_t *order = rf_malloc((size_t)n * sizeof *order);
    ready_ent *heap = rf_malloc((size_t)(n + nocc + 1) * sizeof *heap);
    rf_hir_kernel **sorted = rf_arena_alloc(&p->arena, (size_t)n * sizeof *sorted);
    rf_status st = RF_OK;
    if (!succ_first || !edge_to || !edge_next || !indeg || !occ_kernel || !occ_next || !epoch_next || !cur_dead ||
        !state || !order || !heap || !sorted) {
        st = RF_ENOMEM;
        goto out;
    }
    int64_t nedges = 0;
#define ADD_EDGE(from, to)                                                                                             \
    do {                                                                                                               \
        edge_to[nedges] = (to);                                                                                        \
        edge_next[nedges] = succ_first[from];                                                                          \
        succ_first[from] = (int32_t)nedges++;                                                                          \
        indeg[to]++;                                                                                                   \
    } while (0)
    for (int32_t j = 0; j < n; j++) succ_first[j] = -1;
    int64_t occ = 0;
    for (int32_t j = 0; j < n; j++) {
        const rf_hir_kernel *k = b->kernels[j];
        for (int32_t i = 0; i < k->nin; i++) {
            int32_t v = k->in[i];
            if (sc->last_writer[v] >= 0) ADD_EDGE(sc->last_writer[v], j);
        }
        int32_t o = k->out;
        if (sc->last_writer[o] >= 0 && sc->last_writer[o] != j) ADD_EDGE(sc->last_writer[o], j);
        for (int32_t e = sc->epoch_first[o]; e >= 0; e = epoch_next[e])
            if (occ_kernel[e] != j) ADD_EDGE(occ_kernel[e], j);
        sc->epoch_first[o] = -1;
        sc->last_writer[o] = j;
        for (int32_t i = 0; i < k->nin; i++, occ++) {
            int32_t v = k->in[i];
            occ_kernel[occ] = j;
            occ_next[occ] = sc->var_first[v];
            sc->var_first[v] = (int32_t)occ;
            if (v == o) continue; /* its own write comes after this read */
            epoch_next[occ] = sc->epoch_first[v];
            sc->epoch_first[v] = (int32_t)occ;
            sc->readers[v]++;
        }
        for (int32_t i = 0; i < k->nin; i++)
            if (k->in[i] == o) sc->readers[o]++;
    }
#undef ADD_EDGE
    int32_t nheap = 0;
    for (int32_t j = 0; j < n; j++)
        if (indeg[j] == 0) {
            state[j] = 1;
            cur_dead[j] = dead_count(p, b->kernels[j], sc->readers);
            heap_push(heap, &nheap, (ready_ent){cur_dead[j], -1, j});
        }
    for (int32_t step = 0; step < n; step++) {
        ready_ent e;
        do {
            if (nheap == 0) { /* the dependences only point backwards, so some kernel is always ready */
                st = RF_EINTERNAL;
                goto out;
            }
            e = heap_pop(heap, &nheap);
        } while (state[e.j] != 1 || e.dead != cur_dead[e.j]);
        int32_t best = e.j;
        state[best] = 2;
        order[step] = best;
        const rf_hir_kernel *k = b->kernels[best];
        for (int32_t i = 0; i < k->nin; i++) {
            int32_t v = k->in[i];
            if (--sc->readers[v] != 1 || p->vars[v]->role != RF_HIR_ROLE_TEMP) continue;
            /* the one reader left now lets v die: raise its priority if it is ready */
            for (int32_t o = sc->var_first[v]; o >= 0; o = occ_next[o]) {
                int32_t r = occ_kernel[o];
                if (state[r] != 1) continue;
                int32_t d = dead_count(p, b->kernels[r], sc->readers);
                if (d != cur_dead[r]) {
                    cur_dead[r] = d;
                    int32_t recent = -1;
                    const rf_hir_kernel *kr = b->kernels[r];
                    for (int32_t x = 0; x < kr->nin; x++)
                        if (sc->defpos[kr->in[x]] > recent) recent = sc->defpos[kr->in[x]];
                    heap_push(heap, &nheap, (ready_ent){d, recent, r});
                }
            }
        }
        sc->defpos[k->out] = step;
        for (int32_t s = succ_first[best]; s >= 0; s = edge_next[s]) {
            int32_t to = edge_to[s];
            if (--indeg[to]) continue;
            state[to] = 1;
            const rf_hir_kernel *kt = b->kernels[to];
            int32_t recent = -1;
            for (int32_t x = 0; x < kt->nin; x++)
                if (sc->defpos[kt->in[x]] > recent) recent = sc->defpos[kt->in[x]];
            cur_dead[to] = dead_count(p, kt, sc->readers);
            heap_push(heap, &nheap, (ready_ent){cur_dead[to], recent, to});
        }
    }
    for (int32_t s = 0; s < n; s++) sorted[s] = b->kernels[order[s]];
    b->kernels = sorted;
    b->capkernels = n;
    /* release points: after the last reader in this block, or right after
    ** the definition when nothing reads it; last[] reuses defpos, count[]
    ** reuses readers (both back to their resting values below) */
    int32_t *last = sc->defpos;
    for (int32_t s = 0; s < n; s++) {
        const rf_hir_kernel *k = sorted[s];
        last[k->out] = -1;
        for (int32_t i = 0; i < k->nin; i++) last[k->in[i]] = -1;
    }
    for (int32_t s = 0; s < n; s++) {
        const rf_hir_kernel *k = sorted[s];
        if (last[k->out] < s) last[k->out] = s;
        for (int32_t i = 0; i < k->nin; i++) last[k->in[i]] = s;
    }
    int32_t *count = cur_dead; /* per step: releases after it */
    memset(count, 0, (size_t)n * sizeof *count);
    for (int32_t s = 0; s < n; s++) {
        const rf_hir_kernel *k = sorted[s];
        for (int32_t i = -1; i < k->nin; i++) {
            int32_t v = i < 0 ? k->out : k->in[i];
            /* count each variable once: at its last use, only when first met there */
            if (last[v] >= 0 && p->vars[v]->role == RF_HIR_ROLE_TEMP && !crosses[v] && sc->readers[v] == 0) {
                count[last[v]]++;
                sc->readers[v] = -1; /* counted */
            }
        }
    }
    for (int32_t s = 0; s < n; s++) {
        rf_hir_kernel *k = sorted[s];
        k->nrelease = 0;
        k->release = count[s] ? rf_arena_alloc(&p->arena, (size_t)count[s] * sizeof *k->release) : NULL;
        if (count[s] && !k->release) p->oom = 1;
    }
    /* releases in variable order, as before: collect the block's variables, sort */
    if (!p->oom) {
        int32_t *vs2 = rf_malloc((size_t)(nocc + n + 1) * sizeof *vs2);
        if (!vs2) {
            st = RF_ENOMEM;
            goto out;
        }
        int32_t nv = 0;
        for (int32_t s = 0; s < n; s++) {
            const rf_hir_kernel *k = sorted[s];
            for (int32_t i = -1; i < k->nin; i++) {
                int32_t v = i < 0 ? k->out : k->in[i];
                if (sc->readers[v] == -1) {
                    sc->readers[v] = -2; /* listed */
                    vs2[nv++] = v;
                }
            }
        }
        qsort(vs2, (size_t)nv, sizeof *vs2, cmp_i32);
        for (int32_t x = 0; x < nv; x++) {
            rf_hir_kernel *k = sorted[last[vs2[x]]];
            k->release[k->nrelease++] = vs2[x];
        }
        free(vs2);
    }
    if (p->oom) st = RF_ENOMEM;
out:
    /* back to the resting values for the next block */
    for (int32_t j = 0; j < n; j++) {
        const rf_hir_kernel *k = b->kernels[j];
        for (int32_t i = -1; i < k->nin; i++) {
            int32_t v = i < 0 ? k->out : k->in[i];
            sc->last_writer[v] = -1;
            sc->epoch_first[v] = -1;
            sc->defpos[v] = -1;
            sc->readers[v] = 0;
            sc->var_first[v] = -1;
        }
    }
    free(succ_first);
    free(edge_to);
    free(edge_next);
    free(indeg);
    free(occ_kernel);
    free(occ_next);
    free(epoch_next);
    free(cur_dead);
    free(state);
    free(order);
    free(heap);
    return st;
}

/* Adds v to k's release list (once). */
static void add_release(rf_hir_program *p, rf_hir_kernel *k, int32_t v)
{
    for (int32_t i = 0; i < k->nrelease; i++)
        if (k->release[i] == v) return;
    int32_t *r = rf_arena_alloc(&p->arena, (size_t)(k->nrelease + 1) * sizeof *r);
    if (!r) {
        p->oom = 1;
        return;
    }
    if (k->nrelease) memcpy(r, k->release, (size_t)k->nrelease * sizeof *r);
    r[k->nrelease++] = v;
    k->release = r;
}

static int touches(const rf_hir_kernel *k, int32_t v)
{
    if (k->out == v) return 1;
    for (int32_t i = 0; i < k->nin; i++)
        if (k->in[i] == v) return 1;
    return 0;
}

/* The release points of the temporaries used in more than one block: per
** such variable a backward liveness over the blocks (it is written once, so
** a block's use is a read before the block writes it). */
static rf_status release_crossing(rf_hir_program *p, const uint8_t *crosses)
{
    int32_t nb = p->nblocks;
    uint8_t *use = rf_calloc((size_t)nb + 1, 4);
    if (!use) return RF_ENOMEM;
    uint8_t *def = use + nb + 1, *lin = def + nb + 1, *lout = lin + nb + 1;
    for (int32_t v = 0; v < p->nvars && !p->oom; v++) {
        if (!crosses[v] || p->vars[v]->role != RF_HIR_ROLE_TEMP) continue;
        for (int32_t b = 0; b < nb; b++) {
            const rf_hir_block *bl = p->blocks[b];
            use[b] = def[b] = lin[b] = lout[b] = 0;
            for (int32_t j = 0; j < bl->nkernels; j++) {
                const rf_hir_kernel *k = bl->kernels[j];
                for (int32_t i = 0; i < k->nin; i++)
                    if (k->in[i] == v && !def[b]) use[b] = 1;
                if (k->out == v) def[b] = 1;
            }
            for (int32_t t = 0; t < bl->ntest; t++)
                if (bl->test[t] == v && !def[b]) use[b] = 1;
        }
        for (int changed = 1; changed;) {
            changed = 0;
            for (int32_t b = nb - 1; b >= 0; b--) {
                const rf_hir_block *bl = p->blocks[b];
                uint8_t out = 0;
                if (bl->term != RF_HIR_T_HALT) out |= lin[bl->target];
                if (bl->term == RF_HIR_T_BRANCH) out |= lin[bl->else_target];
                uint8_t in = use[b] || (out && !def[b]);
                if (out != lout[b] || in != lin[b]) changed = 1;
                lout[b] = out;
                lin[b] = in;
            }
        }
        for (int32_t b = 0; b < nb; b++) {
            rf_hir_block *bl = p->blocks[b];
            /* dead at the end of a block using it: after its last use there */
            if (!lout[b] && (use[b] || def[b]))
                for (int32_t j = bl->nkernels - 1; j >= 0; j--)
                    if (touches(bl->kernels[j], v)) {
                        add_release(p, bl->kernels[j], v);
                        break;
                    }
            /* live where b ends, dead where a successor that does not use it begins */
            if (!lout[b] || bl->term == RF_HIR_T_HALT) continue;
            int32_t succ[2] = {bl->target, bl->term == RF_HIR_T_BRANCH ? bl->else_target : -1};
            for (int s = 0; s < 2; s++) {
                int32_t sb = succ[s];
                if (sb < 0 || lin[sb] || use[sb] || def[sb] || p->blocks[sb]->nkernels == 0) continue;
                add_release(p, p->blocks[sb]->kernels[0], v);
            }
        }
    }
    free(use);
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
    sched_scratch sc;
    size_t nv = (size_t)p->nvars + 1;
    sc.last_writer = rf_malloc(nv * sizeof *sc.last_writer);
    sc.epoch_first = rf_malloc(nv * sizeof *sc.epoch_first);
    sc.defpos = rf_malloc(nv * sizeof *sc.defpos);
    sc.readers = rf_calloc(nv, sizeof *sc.readers);
    sc.var_first = rf_malloc(nv * sizeof *sc.var_first);
    rf_status st = RF_OK;
    if (!sc.last_writer || !sc.epoch_first || !sc.defpos || !sc.readers || !sc.var_first) st = RF_ENOMEM;
    else
        for (int32_t v = 0; v < p->nvars; v++)
            sc.last_writer[v] = sc.epoch_first[v] = sc.defpos[v] = sc.var_first[v] = -1;
    for (int32_t bi = 0; bi < p->nblocks && !st; bi++) st = schedule_block(p, p->blocks[bi], crosses, &sc);
    if (!st) st = release_crossing(p, crosses);
    free(sc.last_writer);
    free(sc.epoch_first);
    free(sc.defpos);
    free(sc.readers);
    free(sc.var_first);
    free(crosses);
    free(home);
    return st;
}
