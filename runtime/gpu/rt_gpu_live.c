/*
** runtime/gpu/rt_gpu_live.c: which device values are dead, across the block
** graph, so that the GPU frees them at their last use.
**
** Owns: the liveness of every variable over the program's blocks (a backward
** dataflow: a kernel reads its inputs and defines its output, a branch reads
** its tests at the block's end, a loop's fixpoint watch reads its predicates
** and tests at the block's entry, an output is read at the run's end), and
** from it, per kernel, the values whose next access on every path is a write
** or none (dead after it), and per block, the values live where a
** predecessor ends but dead where it begins (an input read only inside a
** loop dies when the loop exits).
**
** The scheduler's release lists (harmony/hir_schedule.c) free temporaries
** after their last reader within a block (one read across blocks, a result
** hoisted before a loop, where the blocks' liveness finds it dead); this
** frees the rest: inputs after
** their last reader (TPC-H q01's lineitem after its map), a semi-naive
** loop's `new` relation once it is copied into the delta, whatever a later
** block no longer reads. Outputs are never freed, nor a value that a fused
** kernel's stage writes (the fused kernel runs at its first stage, so such a
** value may already hold its next contents when its old ones die).
*/
#include "rt_gpu_internal.h"

#include <stdlib.h>
#include <string.h>

/* Programs whose blocks x variables bitsets would pass this are not analysed
** (no early frees; the release lists still apply). */
#define LIVE_MAX_BITS (UINT64_C(1) << 31)

typedef struct bits {
    uint64_t *w;
    int64_t nw; /* words per set */
} bits;

static inline int bit_has(const uint64_t *s, int32_t v) { return (int)((s[v >> 6] >> (v & 63)) & 1); }
static inline void bit_set(uint64_t *s, int32_t v) { s[v >> 6] |= UINT64_C(1) << (v & 63); }
static inline void bit_clr(uint64_t *s, int32_t v) { s[v >> 6] &= ~(UINT64_C(1) << (v & 63)); }

static int is_loop(const rf_hir_block *bl)
{
    return bl->term == RF_HIR_T_BRANCH && (bl->target == bl->id || bl->else_target == bl->id);
}

/* The loop's fixpoint watch (runtime/rt_fixpoint.c) reads the sizes of its
** predicates and tests when the block begins. */
static void watch_reads(const rf_hir_block *bl, uint64_t *live)
{
    if (!is_loop(bl)) return;
    for (int32_t t = 0; t < bl->ntest; t++) bit_set(live, bl->test[t]);
    for (int32_t j = 0; j < bl->nkernels; j++)
        if (bl->kernels[j]->kind == RF_HIR_INSERT && bl->kernels[j]->out >= 0) bit_set(live, bl->kernels[j]->out);
}

/* live: the set where block bl ends (its successors' live-in), walked back
** to where it begins. Per kernel, with start: the variables it touches that
** are not live after it, counted (pass 0, into start[id + 1]) or listed
** (pass 1, from start[id], cnt[id] so far). */
static void walk_block(const gx *x, const rf_hir_block *bl, uint64_t *live, const uint8_t *keep, int pass,
                       int64_t *start, int64_t *cnt)
{
    for (int32_t t = 0; t < bl->ntest; t++) bit_set(live, bl->test[t]);
    for (int32_t j = bl->nkernels - 1; j >= 0; j--) {
        const rf_hir_kernel *k = bl->kernels[j];
        int own = start && k->id >= 0 && k->id < x->nkernels;
        for (int32_t i = -1; i < k->nin && own; i++) {
            int32_t v = i < 0 ? k->out : k->in[i];
            if (v < 0 || bit_has(live, v) || keep[v]) continue;
            int dup = 0; /* each variable once */
            for (int32_t q = -1; q < i && !dup; q++) dup = (q < 0 ? k->out : k->in[q]) == v;
            if (dup) continue;
            if (pass == 0) start[k->id + 1]++;
            else x->live_dead[start[k->id] + cnt[k->id]++] = v;
        }
        if (k->out >= 0) bit_clr(live, k->out);
        for (int32_t i = 0; i < k->nin; i++)
            if (k->in[i] >= 0) bit_set(live, k->in[i]);
    }
    watch_reads(bl, live);
}

static void succ_live(const rf_hir_program *p, const rf_hir_block *bl, const bits *in, uint64_t *out, int64_t nw)
{
    memset(out, 0, (size_t)nw * 8);
    int32_t s[2] = {-1, -1};
    if (bl->term == RF_HIR_T_GOTO) s[0] = bl->target;
    if (bl->term == RF_HIR_T_BRANCH) s[0] = bl->target, s[1] = bl->else_target;
    for (int i = 0; i < 2; i++)
        if (s[i] >= 0 && s[i] < p->nblocks)
            for (int64_t w = 0; w < nw; w++) out[w] |= in->w[(int64_t)s[i] * nw + w];
}

rf_status rf_gx_live_init(gx *x)
{
    x->live_pending = -1;
    const rf_hir_program *p = x->p;
    int64_t nw = ((int64_t)p->nvars + 63) / 64;
    if (p->nblocks <= 0 || nw <= 0 || (uint64_t)p->nblocks * (uint64_t)nw * 64 > LIVE_MAX_BITS) return RF_OK;
    bits in = {rf_calloc((size_t)(p->nblocks * nw), 8), nw};
    uint64_t *cur = rf_calloc((size_t)nw, 8);
    uint8_t *keep = rf_calloc((size_t)p->nvars + 1, 1);
    rf_status st = in.w && cur && keep ? RF_OK : RF_ENOMEM;
    for (int32_t v = 0; !st && v < p->nvars; v++) keep[v] = p->vars[v]->role == RF_HIR_ROLE_OUTPUT;
    /* what a fused stage writes may hold its next contents already */
    for (int32_t b = 0; !st && x->fplan && b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->id >= 0 && k->id < x->fplan->nkernels && x->fplan->unit_of[k->id] >= 0 && k->out >= 0) keep[k->out] = 1;
        }
    /* live-in of every block, to the fixpoint (blocks backwards: few rounds) */
    for (int changed = 1; !st && changed;) {
        changed = 0;
        for (int32_t b = p->nblocks - 1; b >= 0; b--) {
            succ_live(p, p->blocks[b], &in, cur, nw);
            walk_block(x, p->blocks[b], cur, keep, 0, NULL, NULL);
            uint64_t *bi = &in.w[(int64_t)b * nw];
            if (memcmp(bi, cur, (size_t)nw * 8)) {
                memcpy(bi, cur, (size_t)nw * 8);
                changed = 1;
            }
        }
    }
    /* per kernel: what dies after it (counted, then listed) */
    int64_t *start = st ? NULL : rf_calloc((size_t)x->nkernels + 2, sizeof *start);
    if (!st && !start) st = RF_ENOMEM;
    int64_t total = 0;
    for (int pass = 0; pass < 2 && !st; pass++) {
        int64_t *cnt = NULL;
        if (pass == 1 && !(x->live_dead = rf_malloc((size_t)total * sizeof *x->live_dead + 4))) st = RF_ENOMEM;
        if (pass == 1 && !st && !(cnt = rf_calloc((size_t)x->nkernels + 1, sizeof *cnt))) st = RF_ENOMEM;
        for (int32_t b = 0; b < p->nblocks && !st; b++) {
            succ_live(p, p->blocks[b], &in, cur, nw);
            walk_block(x, p->blocks[b], cur, keep, pass, start, cnt);
        }
        if (pass == 0) {
            for (int32_t k = 0; k < x->nkernels; k++) start[k + 1] += start[k];
            total = start[x->nkernels];
        }
        free(cnt);
    }
    /* per block: live where some predecessor ends, dead where it begins (block
    ** 0's predecessor is the load: every input) */
    int64_t *bstart = st ? NULL : rf_calloc((size_t)p->nblocks + 2, sizeof *bstart);
    if (!st && !bstart) st = RF_ENOMEM;
    uint64_t *entry = st ? NULL : rf_calloc((size_t)(p->nblocks * nw), 8);
    if (!st && !entry) st = RF_ENOMEM;
    for (int32_t b = 0; b < p->nblocks && !st; b++) {
        succ_live(p, p->blocks[b], &in, cur, nw);
        int32_t s[2] = {-1, -1};
        if (p->blocks[b]->term == RF_HIR_T_GOTO) s[0] = p->blocks[b]->target;
        if (p->blocks[b]->term == RF_HIR_T_BRANCH) s[0] = p->blocks[b]->target, s[1] = p->blocks[b]->else_target;
        for (int i = 0; i < 2; i++)
            if (s[i] >= 0 && s[i] < p->nblocks)
                for (int64_t w = 0; w < nw; w++) entry[(int64_t)s[i] * nw + w] |= cur[w];
    }
    for (int32_t v = 0; !st && v < p->nvars; v++)
        if (p->vars[v]->role == RF_HIR_ROLE_INPUT) bit_set(entry, v);
    int64_t ntot = 0;
    for (int pass = 0; pass < 2 && !st; pass++) {
        if (pass == 1 && !(x->live_entry = rf_malloc((size_t)ntot * sizeof *x->live_entry + 4))) st = RF_ENOMEM;
        int64_t at = 0;
        for (int32_t b = 0; b < p->nblocks && !st; b++) {
            if (pass == 1) bstart[b] = at;
            for (int32_t v = 0; v < p->nvars; v++)
                if (bit_has(&entry[(int64_t)b * nw], v) && !bit_has(&in.w[(int64_t)b * nw], v) && !keep[v]) {
                    if (pass == 1) x->live_entry[at] = v;
                    at++;
                }
        }
        if (pass == 0) ntot = at;
        else bstart[p->nblocks] = at;
    }
    free(entry);
    free(in.w);
    free(cur);
    free(keep);
    if (st) {
        free(start);
        free(bstart);
        rf_gx_live_free(x);
        return st;
    }
    x->live_start = start;
    x->live_bstart = bstart;
    /* by kernel id: 1 + the block it begins, 0 */
    if (!(x->live_first = rf_calloc((size_t)x->nkernels + 1, sizeof *x->live_first))) {
        rf_gx_live_free(x);
        return RF_ENOMEM;
    }
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_hir_block *bl = p->blocks[b];
        if (bl->nkernels > 0 && bl->kernels[0]->id >= 0 && bl->kernels[0]->id < x->nkernels)
            x->live_first[bl->kernels[0]->id] = b + 1;
    }
    return RF_OK;
}

void rf_gx_live_free(gx *x)
{
    free(x->live_start);
    free(x->live_dead);
    free(x->live_bstart);
    free(x->live_entry);
    free(x->live_first);
    x->live_start = x->live_bstart = NULL;
    x->live_dead = x->live_entry = x->live_first = NULL;
    x->live_pending = -1;
}

int rf_gx_live_dies(const gx *x, const rf_hir_kernel *k, int32_t var)
{
    if (!x->live_start || k->id < 0 || k->id >= x->nkernels) return 0;
    for (int64_t i = x->live_start[k->id]; i < x->live_start[k->id + 1]; i++)
        if (x->live_dead[i] == var) return 1;
    return 0;
}

/* Frees what died after the kernel that ran before k and, when k begins
** its block, what is dead where the block begins. Deferred to here so that
** the driver's profile still reads the last kernel's row counts. */
void rf_gx_live_before(gx *x, const rf_hir_kernel *k)
{
    if (!x->live_start) return;
    int32_t prev = x->live_pending;
    x->live_pending = k->id >= 0 && k->id < x->nkernels ? k->id : -1;
    if (prev >= 0)
        for (int64_t i = x->live_start[prev]; i < x->live_start[prev + 1]; i++) rf_gx_var_clear(x, x->live_dead[i]);
    int32_t b = x->live_pending >= 0 ? x->live_first[x->live_pending] - 1 : -1;
    if (b >= 0)
        for (int64_t i = x->live_bstart[b]; i < x->live_bstart[b + 1]; i++) rf_gx_var_clear(x, x->live_entry[i]);
}
