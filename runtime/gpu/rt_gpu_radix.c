/*
** runtime/gpu/rt_gpu_radix.c: kernels in key partitions when their values
** and results do not fit in GPU memory at once (under the --gpu-memory cap,
** or a full GPU) and row ranges (rt_gpu_part.c) do not serve.
**
** Owns: how a GROUP, REDUCE, UNIQUE and SORT run in parts, and a join or
** join map whose other side does not fit beside a range, after the Red Fox
** thesis's chapter 6 (relations that exceed GPU memory are partitioned and
** each partition is processed alone). A range's rows are not independent
** here: a group's rows may lie in every range, a sort's order is global.
** Each partition is run by the kernel itself; the host puts the results
** into the whole kernel's order:
**
**   - GROUP: row i goes to partition hash(group key) mod P, so that the
**     partitions' groups are disjoint; each group's first row (global) is
**     known from its partition, and groups are numbered by first row over
**     all partitions, as the whole kernel numbers them: the same bytes.
**   - REDUCE: groups are numbered, so partition p is a range of group
**     numbers holding about n / P rows, its groups renumbered from 0; the
**     results, concatenated in range order, are the whole result. A group's
**     rows keep their order (float sums on the host add in the same order);
**     an error (an overflow) is met in the lowest failing group.
**   - UNIQUE: by the hash of the whole row (with a functional-dependency
**     check, of the key; the check then runs here over the kept rows, the
**     CPU's message on the first conflicting pair); each partition's first
**     occurrences, merged by row, are the whole kernel's. A partition of one
**     row repeated keeps its first row without the device; one that does
**     not fit and holds several keys halves alone (unique_part).
**   - SORT: runs of row ranges sorted on the GPU (stable), merged on the host
**     by the sort's own keys (integers and dates by value, floats as the GPU
**     orders their bits, strings by bytes, descending keys reversed); a tie
**     takes the earlier run: stable, as the whole sort.
**   - JOIN_INDEX, ANTI_INDEX (after row ranges failed): both sides by the
**     hash of the join key, left partition p meeting right partition p; the
**     pairs (kept left rows) put back by left row, then right row. A
**     self-join reads its right partition from the output's slot.
**   - JOIN_MAP, GATHER_MAP (after row ranges failed): ranges of the index,
**     each with the side rows its entries name gathered in entry order (a
**     self-join's one side: the left rows, then the right rows).
**
** P starts at two and doubles while a partition does not fit (the hash
** salted by P, so that keys whose hashes met part); a kernel
** whose partition of one key (one row) does not fit, or a REDUCE over one
** group of all rows, fails as before, with the message naming the cap, and
** the driver runs the program on the CPU with a warning. The kernel's
** inputs wait in host memory (the spill path, rt_gpu_spill.c), each
** partition comes to the GPU and its result goes back at once; the result
** stays in host memory until a kernel reads it. `--profile` counts the
** kernels run in key partitions and their partitions.
*/
#include "rt_gpu_internal.h"
#include "rf_mix.h"

#include "rf_value.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_PARTS = 1 << 20 };

int rf_gx_radix_can(const gx *x, const rf_hir_kernel *k)
{
    if (k->id < 0 || k->id >= x->nkernels || !x->plans[k->id].gpu || k->nin < 1 || k->out == k->in[0]) return 0;
    /* a reduce reads its relation and its groups (also as in[1]) */
    if (k->kind == RF_HIR_REDUCE)
        return k->idx >= 0 && k->idx != k->out && (k->nin == 1 || (k->nin == 2 && k->in[1] == k->idx));
    if (k->nin != 1) return 0;
    if (k->kind == RF_HIR_GROUP || k->kind == RF_HIR_SORT) return 1;
    if (k->kind == RF_HIR_UNIQUE) {
        /* (a functional-dependency check: on the host, after, fd_check) */
        const rf_hir_var *iv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
        int same = iv->ncols == ov->ncols;
        for (int32_t c = 0; c < iv->ncols && same; c++) same = wid(iv->types[c]) == wid(ov->types[c]);
        return same;
    }
    return 0;
}

int rf_gx_radix_side_can(const gx *x, const rf_hir_kernel *k)
{
    if (k->id < 0 || k->id >= x->nkernels || !x->plans[k->id].gpu) return 0;
    if (k->kind == RF_HIR_JOIN_MAP || k->kind == RF_HIR_GATHER_MAP) {
        /* (the sides are read in place of their values: not the index's or
        ** the output's; a self-join's one side holds both sides' rows,
        ** gathered_parts) */
        int32_t ns = k->kind == RF_HIR_JOIN_MAP ? 2 : 1;
        if (k->idx < 0 || k->nin < ns || k->out == k->idx) return 0;
        for (int32_t i = 0; i < ns; i++)
            if (k->in[i] == k->idx || k->in[i] == k->out) return 0;
        return 1;
    }
    if (k->kind != RF_HIR_JOIN_INDEX && k->kind != RF_HIR_ANTI_INDEX) return 0;
    if (k->nin != 2 || k->nkeys <= 0 || k->out == k->in[0] || k->out == k->in[1]) return 0;
    /* a self-join's right partition is read from the output's slot (run_self) */
    if (k->in[0] == k->in[1] && x->p->vars[k->out]->ncols > x->p->vars[k->in[0]]->ncols) return 0;
    /* equal keys must hash alike on both sides: the same types */
    const rf_hir_var *l = x->p->vars[k->in[0]], *r = x->p->vars[k->in[1]];
    for (int32_t i = 0; i < k->nkeys; i++)
        if (l->types[k->lkeys[i]] != r->types[k->rkeys[i]]) return 0;
    return 1;
}

/* A value's bytes as the pool would reserve them (a multiple of 256, at
** least 256), zeroed: the buffer a held value's slot adopts. */
static void *held_buf(uint64_t bytes, uint64_t *len)
{
    *len = bytes ? (bytes + 255) / 256 * 256 : 256;
    return rf_calloc(1, (size_t)*len);
}

/* A value's bits as one word (a wide decimal's two words folded: equal
** values, equal words; rows_cmp compares wide values whole). */
static uint64_t load_u64(const char *p, int w)
{
    switch (w) {
    case 1: return *(const uint8_t *)p;
    case 4: return *(const uint32_t *)(const void *)p;
    case 16: return ((const uint64_t *)(const void *)p)[0] ^ rf_mix64(((const uint64_t *)(const void *)p)[1]);
    default: return *(const uint64_t *)(const void *)p;
    }
}

/* Rows rows[0..n) of v (in host memory) as a relation on the device: the
** columns v has there and want marks (NULL: all), in the order given. */
static rf_status rel_of_rows(gx *x, const gval *v, const rf_hir_var *hv, const int64_t *rows, int64_t n,
                             const uint8_t *want, gval *r)
{
    memset(r, 0, sizeof *r);
    r->nrows = r->cap = n;
    if (!(r->cols = rf_calloc((size_t)hv->ncols + 1, sizeof *r->cols))) return RF_ENOMEM;
    rf_status st = RF_OK;
    char *buf = NULL;
    for (int32_t c = 0; c < hv->ncols && !st; c++) {
        const char *h = rf_gx_held_col(v, c);
        if (!h || (want && !want[c]) || n == 0) continue;
        int w = wid(hv->types[c]);
        if (!(buf = rf_malloc((size_t)n * (size_t)w))) return RF_ENOMEM;
        for (int64_t i = 0; i < n; i++) {
            const char *s = h + rows[i] * w;
            char *d = buf + i * w;
            switch (w) {
            case 1: *d = *s; break;
            case 4: memcpy(d, s, 4); break;
            case 8: memcpy(d, s, 8); break;
            default: memcpy(d, s, (size_t)w); break;
            }
        }
        st = galloc(x, (uint64_t)n * (uint64_t)w, &r->cols[c]);
        if (!st) st = x->g.ops->h2d(&x->g, r->cols[c].p, buf, (uint64_t)n * (uint64_t)w);
        free(buf);
        buf = NULL;
    }
    return st;
}

/* Kernel k with variables vars[0..nv) read as part[0..nv) in place of their
** values; k's output stays in k->out. The parts are cleared after. */
static rf_status run_on(gx *x, const rf_hir_kernel *k, const int32_t *vars, gval *part, int32_t nv)
{
    gval whole[3];
    for (int32_t i = 0; i < nv; i++) {
        whole[i] = x->vals[vars[i]];
        part[i].used = x->epoch; /* in use: never moved out under the kernel */
        x->vals[vars[i]] = part[i];
    }
    rf_status st = rf_gx_run_kernel(x, k);
    for (int32_t i = nv - 1; i >= 0; i--) {
        part[i] = x->vals[vars[i]];
        x->vals[vars[i]] = whole[i];
        rf_gx_val_clear(x, &part[i], x->p->vars[vars[i]]->ncols);
    }
    return st;
}

/* ---- GROUP: partitions by the hash of the group key ------------------------------------------ */

/* Key column c of row i as the partitions hash it (a float's zeros and NaNs as one value each). */
static uint64_t key_word(const rf_hir_var *iv, const gval *v, int32_t c, int64_t i)
{
    const char *col = rf_gx_held_col(v, c);
    int w = wid(iv->types[c]);
    uint64_t b = col ? load_u64(col + i * w, w) : 0;
    if (iv->types[c] == RF_TYPE_FLOAT) {
        double d;
        memcpy(&d, &b, 8);
        b = rf_val_float_hash_bits(d);
    }
    return b;
}

/* Row i's hash of its key columns (keys; NULL: the first nkeys): equal
** keys, equal hashes (a float's zeros and NaNs each hash as one value,
** whatever their bits). */
static uint64_t row_key_hash(const rf_hir_var *iv, const int32_t *keys, int32_t nkeys, const gval *v, int64_t i)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int32_t g = 0; g < nkeys; g++) {
        h = rf_mix64(h ^ key_word(iv, v, keys ? keys[g] : g, i)) + (uint64_t)g;
    }
    return h;
}

/* Partition of each row by its group key: equal keys, one partition. The
** last mix takes the number of partitions as a salt: distinct keys whose
** hashes agree in their low bits (random seed 34's rows (22, "", 14) and
** (27, "", 31), in their low 21) part when the partitions double, instead
** of meeting in one partition at every count up to MAX_PARTS. */
static rf_status rows_by_key(const rf_hir_var *iv, const int32_t *keys, int32_t nkeys, const gval *v, int64_t nparts,
                             int64_t *start, int64_t *rows)
{
    int64_t n = v->nrows;
    uint32_t *part = rf_malloc((size_t)n * 4 + 4);
    if (!part) return RF_ENOMEM;
    for (int64_t i = 0; i < n; i++)
        part[i] = (uint32_t)(rf_mix64(row_key_hash(iv, keys, nkeys, v, i) ^ (uint64_t)nparts * 0xc2b2ae3d27d4eb4full) %
                             (uint64_t)nparts);
    memset(start, 0, (size_t)(nparts + 1) * sizeof *start);
    for (int64_t i = 0; i < n; i++) start[part[i] + 1]++;
    for (int64_t p = 0; p < nparts; p++) start[p + 1] += start[p];
    for (int64_t i = 0; i < n; i++) rows[start[part[i]]++] = i;
    for (int64_t p = nparts; p > 0; p--) start[p] = start[p - 1];
    start[0] = 0;
    free(part);
    return RF_OK;
}

/* Rows R[0..m) of v and Q[0..mq) of w (keys ka, kb; NULL: the first nkeys
** columns) all have one key: no partition by key can split them. */
static int one_key(const rf_hir_var *iv, const gval *v, const int32_t *ka, const int64_t *R, int64_t m,
                   const rf_hir_var *wv, const gval *w, const int32_t *kb, const int64_t *Q, int64_t mq, int32_t nkeys)
{
    if (m <= 0) return 0;
    for (int32_t g = 0; g < nkeys; g++) {
        int32_t c = ka ? ka[g] : g;
        uint64_t k0 = key_word(iv, v, c, R[0]);
        for (int64_t i = 1; i < m; i++)
            if (key_word(iv, v, c, R[i]) != k0) return 0;
        for (int64_t i = 0; w && i < mq; i++)
            if (key_word(wv, w, kb ? kb[g] : g, Q[i]) != k0) return 0;
    }
    return 1;
}

/* A partition of m rows that did not fit: one row, the rows of one key, or neither. */
static void unfit_part(gx *x, int64_t m, int onekey, int unit)
{
    rf_gx_unfit(x, m, m == 1 ? RF_GX_UNIT_ROW : onekey ? unit : RF_GX_UNIT_NONE);
}

/* GROUP in nparts partitions: its result, held in host memory, in *g. */
static rf_status group_parts(gx *x, const rf_hir_kernel *k, int64_t nparts, gval *g)
{
    int32_t in = k->in[0];
    const rf_hir_var *iv = x->p->vars[in];
    const gval *v = &x->vals[in];
    int64_t n = v->nrows;
    int64_t *start = rf_malloc((size_t)(nparts + 1) * sizeof *start), *rows = rf_malloc((size_t)n * 8);
    /* each row's group's first row, then (in place) each row's group */
    uint64_t glen = 0, flen = 0;
    int64_t *fr = held_buf((uint64_t)n * 8, &glen), *id = rf_malloc((size_t)n * 8);
    uint8_t *want = rf_calloc((size_t)iv->ncols + 1, 1);
    int64_t *lg = NULL, *lf = NULL, *first = NULL;
    rf_status st = start && rows && fr && id && want ? RF_OK : RF_ENOMEM;
    for (int32_t i = 0; i < k->ngroup && !st; i++) want[k->group[i]] = 1;
    if (!st) st = rows_by_key(iv, k->group, k->ngroup, v, nparts, start, rows);
    for (int64_t p = 0; p < nparts && !st; p++) {
        int64_t m = start[p + 1] - start[p];
        const int64_t *R = rows + start[p];
        if (m == 0) continue;
        gval part;
        st = rel_of_rows(x, v, iv, R, m, want, &part);
        if (!st) st = run_on(x, k, &in, &part, 1);
        else rf_gx_val_clear(x, &part, iv->ncols);
        if (st == RF_EDEVMEM)
            unfit_part(x, m, one_key(iv, v, k->group, R, m, NULL, NULL, NULL, NULL, 0, k->ngroup), RF_GX_UNIT_GROUP);
        const gval *o = &x->vals[k->out];
        if (!st && (!o->has_groups || !o->gid.p || !o->first.p || o->nrows != m)) st = RF_EINTERNAL;
        if (!st) st = rf_gx_host_i64(x, o->gid.p, m, &lg);
        if (!st) st = rf_gx_host_i64(x, o->first.p, o->ngroups, &lf);
        for (int64_t i = 0; i < m && !st; i++) {
            if (lg[i] < 0 || lg[i] >= o->ngroups || lf[lg[i]] < 0 || lf[lg[i]] >= m) st = RF_EINTERNAL;
            else fr[R[i]] = R[lf[lg[i]]];
        }
        free(lg);
        free(lf);
        lg = lf = NULL;
        rf_gx_var_clear(x, k->out);
    }
    /* groups numbered by first row, as the whole kernel numbers them */
    int64_t ng = 0;
    for (int64_t i = 0; i < n && !st; i++)
        if (fr[i] == i) id[i] = ng++;
    if (!st && !(first = held_buf((uint64_t)ng * 8, &flen))) st = RF_ENOMEM;
    for (int64_t i = 0; i < n && !st; i++) {
        if (fr[i] > i) st = RF_EINTERNAL; /* a group's first row comes first */
        else fr[i] = id[fr[i]];
    }
    /* (fr now holds each row's group; its first row is the lowest) */
    for (int64_t i = n - 1; i >= 0 && !st; i--) first[fr[i]] = i;
    free(start);
    free(rows);
    free(id);
    free(want);
    int32_t nc = x->p->vars[k->out]->ncols;
    memset(g, 0, sizeof *g);
    if (!st) {
        g->has_groups = 1;
        g->nrows = n;
        g->ngroups = ng;
        st = rf_gx_held_adopt(g, nc, nc + 2, fr, glen);
        if (st) free(fr);
        fr = NULL;
        if (!st) st = rf_gx_held_adopt(g, nc, nc + 3, first, flen);
        else free(first);
        first = NULL;
    }
    free(fr);
    free(first);
    if (st) rf_gx_val_clear(x, g, nc);
    return st;
}

/* ---- UNIQUE: partitions by the hash of the whole row ---------------------------------------- */

/* The key columns a unique's functional-dependency check reads (the output's
** first nkeys; 0 for a function without key columns, p[] = v, which holds at
** most one row), or -1 where it checks nothing. */
static int32_t fd_keys(const gx *x, const rf_hir_kernel *k)
{
    const rf_hir_var *ov = x->p->vars[k->out];
    return k->check_fd && ov->nkeys >= 0 && ov->nkeys < ov->ncols ? ov->nkeys : -1;
}

/* Rows R[0..m) of v (in host memory) are one row repeated: the same bytes
** in every column it holds there. */
static int rows_alike(const rf_hir_var *iv, const gval *v, const int64_t *R, int64_t m)
{
    for (int32_t c = 0; c < iv->ncols; c++) {
        const char *col = rf_gx_held_col(v, c);
        size_t w = (size_t)wid(iv->types[c]);
        for (int64_t i = 1; col && i < m; i++)
            if (memcmp(col + R[i] * (int64_t)w, col + R[0] * (int64_t)w, w)) return 0;
    }
    return 1;
}

enum { UNIQUE_HALVINGS = 40 }; /* of a partition that does not fit (below) */

/* The unique's first occurrences among rows R[0..m) of v (ascending, a
** partition: equal rows, or with a functional-dependency check equal keys
** (its first nk columns), all among them): keep[r] = 1 for each row r kept;
** idx: room for m row numbers. A partition that does not fit on the device
** and holds more than one key halves by a salted hash of the key, stably,
** and each half runs alone: the partitions' doubling over all rows would
** need about (distinct keys)^2 partitions before no two keys met in one
** (random seed 34 under a 4 KiB cap: a unique of 30,943 rows, about 800
** rows 39 times each, where a partition of two rows did not fit; with the
** salted hash its rounds still took up to 1048576 partitions). */
static rf_status unique_part(gx *x, const rf_hir_var *iv, const gval *v, int32_t nk, int64_t *R, int64_t m, uint8_t *keep,
                             int64_t *idx, int32_t halvings)
{
    int32_t hk = nk > 0 ? nk : iv->ncols;
    if (m == 0) return RF_OK;
    /* one row repeated (a nullary relation's rows are all one): its first
    ** occurrence is its first row, and no key splits it */
    if (rows_alike(iv, v, R, m)) {
        keep[R[0]] = 1;
        return RF_OK;
    }
    int64_t ndiag = x->d->count, nerr = x->d->nerrors, km = 0;
    gval part;
    gbuf kb = {0, 0};
    rf_status st = rel_of_rows(x, v, iv, R, m, NULL, &part);
    if (!st) st = rf_gx_distinct_rows(x, &part, iv, 0, -1, &kb, &km);
    if (!st && (km < 0 || km > m)) st = RF_EINTERNAL;
    if (!st && km > 0) st = x->g.ops->d2h(&x->g, idx, kb.p, (uint64_t)km * 8);
    gfree(x, &kb);
    rf_gx_val_clear(x, &part, iv->ncols);
    if (st == RF_EDEVMEM && halvings < UNIQUE_HALVINGS && !one_key(iv, v, NULL, R, m, NULL, NULL, NULL, NULL, 0, hk)) {
        rf_gx_held_drop_diags(x, ndiag, nerr);
        int64_t *hi = rf_malloc((size_t)m * 8);
        if (!hi) return RF_ENOMEM;
        int64_t nlo = 0, nhi = 0;
        /* (a halving that leaves every row on one side: the next salt) */
        for (; halvings < UNIQUE_HALVINGS && (nlo == 0 || nhi == 0); halvings++) {
            uint64_t salt = (uint64_t)(halvings + 1) * 0x165667b19e3779f9ull;
            nlo = nhi = 0;
            for (int64_t i = 0; i < m; i++) {
                int64_t r = R[i];
                if (rf_mix64(row_key_hash(iv, NULL, hk, v, r) ^ salt) >> 63) hi[nhi++] = r;
                else R[nlo++] = r;
            }
            memcpy(R + nlo, hi, (size_t)nhi * 8);
        }
        free(hi);
        st = unique_part(x, iv, v, nk, R, nlo, keep, idx, halvings);
        if (!st) st = unique_part(x, iv, v, nk, R + nlo, m - nlo, keep, idx, halvings);
        return st;
    }
    if (st == RF_EDEVMEM) unfit_part(x, m, one_key(iv, v, NULL, R, m, NULL, NULL, NULL, NULL, 0, hk), RF_GX_UNIT_KEY);
    for (int64_t j = 0; j < km && !st; j++) {
        if (idx[j] < 0 || idx[j] >= m) st = RF_EINTERNAL;
        else keep[R[idx[j]]] = 1;
    }
    return st;
}

/* UNIQUE in nparts partitions: equal rows meet in one partition, whose
** first occurrences (the unique's own search, rf_gx_distinct_rows) come
** back as row numbers of the partition: keep[i] = 1 for each row kept. No
** rows are gathered on the device nor matched on the host, so a partition
** needs its rows and the search's work alone. */
static rf_status unique_parts(gx *x, const rf_hir_kernel *k, int64_t nparts, uint8_t *keep)
{
    int32_t in = k->in[0];
    const rf_hir_var *iv = x->p->vars[in];
    const gval *v = &x->vals[in];
    int64_t n = v->nrows;
    /* with a check, by the key: rows of one key (equal rows among them) meet */
    int32_t nk = fd_keys(x, k);
    int64_t *start = rf_malloc((size_t)(nparts + 1) * sizeof *start), *rows = rf_malloc((size_t)n * 8 + 8);
    int64_t *idx = rf_malloc((size_t)n * 8 + 8);
    rf_status st = start && rows && idx ? RF_OK : RF_ENOMEM;
    if (!st) st = rows_by_key(iv, NULL, nk > 0 ? nk : iv->ncols, v, nparts, start, rows);
    memset(keep, 0, (size_t)n);
    for (int64_t p = 0; p < nparts && !st; p++)
        st = unique_part(x, iv, v, nk, rows + start[p], start[p + 1] - start[p], keep, idx, 0);
    free(start);
    free(rows);
    free(idx);
    return st;
}

/* Hash of row i's first nk columns (as rows_by_key hashes them). */
static uint64_t key_hash(const rf_type *types, const gval *v, int32_t nk, int64_t i)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int32_t c = 0; c < nk; c++) {
        const char *col = rf_gx_held_col(v, c);
        int w = wid(types[c]);
        h = rf_mix64(h ^ (col ? load_u64(col + i * w, w) : 0)) + (uint64_t)c;
    }
    return rf_mix64(h);
}

static int key_eq(const rf_type *types, const gval *v, int32_t nk, int64_t i, int64_t j)
{
    for (int32_t c = 0; c < nk; c++) {
        const char *col = rf_gx_held_col(v, c);
        int w = wid(types[c]);
        if (col && memcmp(col + i * w, col + j * w, (size_t)w)) return 0;
    }
    return 1;
}

rf_status rf_gx_held_first_repeat(const rf_type *types, const gval *v, int32_t nk, const uint8_t *keep, int64_t *frow,
                                  int64_t *row)
{
    int64_t n = v->nrows, m = 0;
    *frow = *row = -1;
    for (int64_t i = 0; i < n; i++) m += keep ? keep[i] : 1;
    if (m < 2) return RF_OK;
    uint64_t cap = 4;
    while (cap < (uint64_t)m * 2) cap *= 2;
    int64_t *tab = rf_malloc((size_t)cap * 8);
    if (!tab) return RF_ENOMEM;
    memset(tab, 0xff, (size_t)cap * 8);
    for (int64_t i = 0; i < n && *row < 0; i++) {
        if (keep && !keep[i]) continue;
        uint64_t at = key_hash(types, v, nk, i) & (cap - 1);
        while (tab[at] >= 0 && !key_eq(types, v, nk, tab[at], i)) at = (at + 1) & (cap - 1);
        if (tab[at] < 0) tab[at] = i;
        else {
            *frow = tab[at];
            *row = i;
        }
    }
    free(tab);
    return RF_OK;
}

/* A functional predicate must not give two values for one key: over the
** kept rows (the whole unique's rows), the least key with two values and
** its two least values (rt_fd_clash.c), and the CPU's message on the two
** (as rt_gpu_group.c's check_fd words it). */
static rf_status fd_check(gx *x, const rf_hir_kernel *k, const gval *v, const uint8_t *keep)
{
    const rf_hir_var *iv = x->p->vars[k->in[0]], *ov = x->p->vars[k->out];
    int32_t nk = fd_keys(x, k);
    int64_t frow = -1, row = -1;
    if (nk < 0) return RF_OK;
    rf_status st = rf_gx_held_first_repeat(iv->types, v, nk, keep, &frow, &row);
    if (st || row < 0) return st;
    /* a clash: the kept rows, in a relation over the held columns */
    int64_t n = 0;
    int64_t *rows = rf_malloc((size_t)v->nrows * sizeof *rows + 8);
    void **cols = rf_calloc((size_t)ov->ncols + 1, sizeof *cols);
    if (!rows || !cols) st = RF_ENOMEM;
    for (int64_t i = 0; i < v->nrows && !st; i++)
        if (!keep || keep[i]) rows[n++] = i;
    for (int32_t c = 0; c < ov->ncols && !st; c++) cols[c] = (void *)rf_gx_held_col(v, c);
    rf_rt_rel held = {v->nrows, ov->ncols, ov->types, cols};
    int64_t f2 = -1, r2 = -1;
    if (!st) st = rf_rt_fd_least_clash(x->dict, &held, nk, rows, n, &f2, &r2);
    free(rows);
    free(cols);
    if (st) return st;
    /* (none by value only where the values differ in a column no kernel
    ** reads, which is not held: then the first repeat found) */
    if (r2 >= 0) frow = f2, row = r2;
    rf_rt_rel two;
    memset(&two, 0, sizeof two);
    st = rf_rt_rel_alloc(&two, ov->ncols, ov->types, 2);
    for (int32_t c = 0; c < ov->ncols && !st; c++) {
        const char *h = rf_gx_held_col(v, c);
        size_t w = (size_t)wid(ov->types[c]);
        if (!h) { /* (a column no kernel reads: zeros) */
            memset(two.cols[c], 0, 2 * w);
            continue;
        }
        memcpy(two.cols[c], h + (size_t)frow * w, w);
        memcpy((char *)two.cols[c] + w, h + (size_t)row * w, w);
    }
    if (!st) st = rf_rt_fd_fail(x->dict, ov->pred_name ? ov->pred_name : ov->name, &two, nk, 0, 1, kloc(x, k), x->d,
                                x->fd_clash);
    rf_rt_rel_free(&two);
    return st;
}

/* The rows of v that keep marks, in order, as value *out held in host memory. */
static rf_status kept_rows(gx *x, const gval *v, const rf_hir_var *ov, const uint8_t *keep, gval *out)
{
    int64_t n = v->nrows, m = 0;
    for (int64_t i = 0; i < n; i++) m += keep[i];
    memset(out, 0, sizeof *out);
    out->nrows = out->cap = m;
    rf_status st = (out->cols = rf_calloc((size_t)ov->ncols + 1, sizeof *out->cols)) ? RF_OK : RF_ENOMEM;
    for (int32_t c = 0; c < ov->ncols && !st && m > 0; c++) {
        const char *h = rf_gx_held_col(v, c);
        if (!h) continue;
        uint64_t len = 0, w = (uint64_t)wid(ov->types[c]);
        char *d = held_buf((uint64_t)m * w, &len);
        if (!d) {
            st = RF_ENOMEM;
            break;
        }
        for (int64_t i = 0, j = 0; i < n; i++)
            if (keep[i]) memcpy(d + (uint64_t)j++ * w, h + (uint64_t)i * w, (size_t)w);
        if ((st = rf_gx_held_adopt(out, ov->ncols, c, d, len))) free(d);
    }
    if (st) rf_gx_val_clear(x, out, ov->ncols);
    return st;
}

/* ---- JOIN_INDEX, ANTI_INDEX: both sides in partitions by the hash of the join key -------------- */

/* A self-join (in[0] == in[1]) on its two partitions: the right one is read
** from the output's slot (the join reads only its key columns there, by the
** left side's types, which are the same); the kernel's result replaces it,
** which frees the first columns of it (as many as the output variable
** has), and the rest are freed here. */
static rf_status run_self(gx *x, const rf_hir_kernel *k, gval *part, int32_t rncols)
{
    rf_hir_kernel kk = *k;
    int32_t in[2] = {k->in[0], k->out};
    kk.in = in;
    kk.nrelease = 0;
    kk.release = NULL;
    gbuf *saved = rf_calloc((size_t)rncols + 1, sizeof *saved);
    if (!saved) {
        rf_gx_val_clear(x, &part[0], rncols);
        rf_gx_val_clear(x, &part[1], rncols);
        return RF_ENOMEM;
    }
    for (int32_t c = 0; c < rncols && part[1].cols; c++) saved[c] = part[1].cols[c];
    gval whole = x->vals[k->in[0]];
    part[0].used = part[1].used = x->epoch;
    x->vals[k->in[0]] = part[0];
    x->vals[k->out] = part[1];
    rf_status st = rf_gx_run_kernel(x, &kk);
    part[0] = x->vals[k->in[0]];
    x->vals[k->in[0]] = whole;
    rf_gx_val_clear(x, &part[0], rncols);
    if (st) rf_gx_var_clear(x, k->out); /* (still the right partition: its column array) */
    for (int32_t c = x->p->vars[k->out]->ncols; c < rncols; c++) gfree(x, &saved[c]);
    free(saved);
    return st;
}

/* A join (anti-join) in nparts partitions: left partition p meets right
** partition p alone; its pairs (kept left rows) mapped back to the sides'
** rows and put in the whole join's order; the index into *out. */
static rf_status join_parts(gx *x, const rf_hir_kernel *k, int64_t nparts, gval *out)
{
    int anti = k->kind == RF_HIR_ANTI_INDEX;
    int32_t vars[2] = {k->in[0], k->in[1]};
    const rf_hir_var *hv[2] = {x->p->vars[vars[0]], x->p->vars[vars[1]]};
    const gval *v[2] = {&x->vals[vars[0]], &x->vals[vars[1]]};
    const int32_t *keys[2] = {k->lkeys, k->rkeys};
    int64_t n[2] = {v[0]->nrows, v[1]->nrows};
    int64_t *start[2] = {NULL, NULL}, *rows[2] = {NULL, NULL};
    uint8_t *want[2] = {NULL, NULL};
    rf_status st = RF_OK;
    for (int s = 0; s < 2 && !st; s++) {
        start[s] = rf_malloc((size_t)(nparts + 1) * 8);
        rows[s] = rf_malloc((size_t)n[s] * 8 + 8);
        want[s] = rf_calloc((size_t)hv[s]->ncols + 1, 1);
        if (!start[s] || !rows[s] || !want[s]) st = RF_ENOMEM;
        for (int32_t i = 0; i < k->nkeys && !st; i++) want[s][keys[s][i]] = 1;
        if (!st) st = rows_by_key(hv[s], keys[s], k->nkeys, v[s], nparts, start[s], rows[s]);
    }
    int64_t np = 0, room = 0, *pl = NULL, *pr = NULL, *la = NULL, *rb = NULL;
    for (int64_t p = 0; p < nparts && !st; p++) {
        int64_t ml = start[0][p + 1] - start[0][p], mr = start[1][p + 1] - start[1][p];
        const int64_t *L = rows[0] + start[0][p], *R = rows[1] + start[1][p];
        if (ml == 0 || (!anti && mr == 0)) continue;
        gval part[2];
        memset(part, 0, sizeof part);
        st = rel_of_rows(x, v[0], hv[0], L, ml, want[0], &part[0]);
        if (!st) st = rel_of_rows(x, v[1], hv[1], R, mr, want[1], &part[1]);
        if (!st && vars[0] == vars[1]) st = run_self(x, k, part, hv[0]->ncols);
        else if (!st) st = run_on(x, k, vars, part, 2);
        else {
            rf_gx_val_clear(x, &part[0], hv[0]->ncols);
            rf_gx_val_clear(x, &part[1], hv[1]->ncols);
        }
        if (st == RF_EDEVMEM)
            unfit_part(x, ml + mr, one_key(hv[0], v[0], keys[0], L, ml, hv[1], v[1], keys[1], R, mr, k->nkeys),
                       RF_GX_UNIT_KEY);
        const gval *o = &x->vals[k->out];
        int64_t m = st ? 0 : o->nrows;
        if (m > 0 && (!o->a.p || (!anti && !o->b.p))) st = RF_EINTERNAL;
        if (!st && np + m > room) {
            room = (np + m) * 2;
            int64_t *a2 = rf_realloc(pl, (size_t)room * 8), *b2 = a2 ? rf_realloc(pr, (size_t)room * 8) : NULL;
            if (a2) pl = a2;
            if (b2) pr = b2;
            if (!a2 || !b2) st = RF_ENOMEM;
        }
        if (!st && m > 0) st = rf_gx_host_i64(x, o->a.p, m, &la);
        if (!st && m > 0 && !anti) st = rf_gx_host_i64(x, o->b.p, m, &rb);
        for (int64_t i = 0; i < m && !st; i++) {
            if (la[i] < 0 || la[i] >= ml || (!anti && (rb[i] < 0 || rb[i] >= mr))) st = RF_EINTERNAL;
            else {
                pl[np + i] = L[la[i]];
                if (!anti) pr[np + i] = R[rb[i]];
            }
        }
        free(la);
        free(rb);
        la = rb = NULL;
        np += m;
        rf_gx_var_clear(x, k->out);
    }
    for (int s = 0; s < 2; s++) {
        free(start[s]);
        free(rows[s]);
        free(want[s]);
    }
    /* (each left row's matches all lie in one partition, whose rows ascend) */
    if (!st) st = rf_gx_pairs_by_left(pl, anti ? NULL : pr, np, n[0]);
    int32_t nc = x->p->vars[k->out]->ncols;
    memset(out, 0, sizeof *out);
    out->nrows = np;
    for (int s = 0; s < (anti ? 1 : 2) && !st && np > 0; s++) {
        uint64_t len = 0;
        int64_t *h = held_buf((uint64_t)np * 8, &len);
        if (!h) st = RF_ENOMEM;
        else memcpy(h, s ? pr : pl, (size_t)np * 8);
        if (!st && (st = rf_gx_held_adopt(out, nc, nc + s, h, len))) free(h);
    }
    free(pl);
    free(pr);
    if (st) rf_gx_val_clear(x, out, nc);
    return st;
}

/* ---- JOIN_MAP, GATHER_MAP: each range's side rows gathered -------------------------------------- */

/* A join map (gather map) whose sides do not fit beside its index: the
** index's entries in nparts ranges, and for each range the rows of each
** side its entries name, gathered in host memory in entry order, so that
** entry i reads row i of each side; the outputs appended to a in order. */
static rf_status gathered_parts(gx *x, const rf_hir_kernel *k, int64_t nparts, gacc *a)
{
    int32_t ns = k->kind == RF_HIR_JOIN_MAP ? 2 : 1;
    int32_t vars[3] = {k->in[0], ns > 1 ? k->in[1] : k->idx, k->idx};
    int self = ns > 1 && k->in[0] == k->in[1];
    const rf_hir_var *ov = x->p->vars[k->out];
    const gval *iv = &x->vals[k->idx];
    int32_t inc = x->p->vars[k->idx]->ncols;
    const int64_t *e[2] = {rf_gx_held_col(iv, inc), rf_gx_held_col(iv, inc + 1)};
    int64_t n = iv->nrows;
    rf_status st = RF_OK;
    for (int32_t s = 0; s < ns; s++)
        if (n > 0 && !e[s]) st = RF_EINTERNAL;
    for (int64_t p = 0; p < nparts && !st; p++) {
        int64_t lo = n / nparts * p + (p < n % nparts ? p : n % nparts);
        int64_t m = n / nparts + (p < n % nparts);
        if (m == 0) continue;
        gval part[3];
        memset(part, 0, sizeof part);
        if (self) {
            /* one variable, both sides: the left rows the entries name,
            ** then the right rows; entry i reads rows i and m + i */
            int64_t *rows = rf_malloc((size_t)(2 * m) * sizeof *rows), *right = rf_malloc((size_t)m * sizeof *right);
            if (!rows || !right) st = RF_ENOMEM;
            for (int64_t i = 0; i < m && !st; i++) {
                rows[i] = e[0][lo + i];
                rows[m + i] = e[1][lo + i];
                right[i] = m + i;
            }
            if (!st) st = rel_of_rows(x, &x->vals[vars[0]], x->p->vars[vars[0]], rows, 2 * m, NULL, &part[0]);
            part[1].nrows = m;
            if (!st) st = rf_gx_iota(x, m, &part[1].a);
            if (!st) st = galloc(x, (uint64_t)m * 8, &part[1].b);
            if (!st) st = x->g.ops->h2d(&x->g, part[1].b.p, right, (uint64_t)m * 8);
            free(rows);
            free(right);
            int32_t v2[2] = {vars[0], k->idx};
            if (!st) st = run_on(x, k, v2, part, 2);
            else
                for (int32_t s = 0; s < 2; s++) rf_gx_val_clear(x, &part[s], x->p->vars[v2[s]]->ncols);
        } else {
            for (int32_t s = 0; s < ns && !st; s++)
                st = rel_of_rows(x, &x->vals[vars[s]], x->p->vars[vars[s]], e[s] + lo, m, NULL, &part[s]);
            gval *ix = &part[ns];
            ix->nrows = m;
            if (!st) st = rf_gx_iota(x, m, &ix->a);
            if (!st && ns > 1) st = rf_gx_iota(x, m, &ix->b);
            int32_t v3[3] = {vars[0], ns > 1 ? vars[1] : k->idx, k->idx};
            if (!st) st = run_on(x, k, v3, part, ns + 1);
            else
                for (int32_t s = 0; s <= ns; s++) rf_gx_val_clear(x, &part[s], x->p->vars[v3[s]]->ncols);
        }
        if (st == RF_EDEVMEM) unfit_part(x, m, 0, RF_GX_UNIT_NONE);
        if (!st) st = rf_gx_acc_take(x, a, ov, 0, 0, 0, &x->vals[k->out]);
        rf_gx_var_clear(x, k->out);
    }
    return st;
}

/* ---- REDUCE: partitions by ranges of group numbers ------------------------------------------- */

/* REDUCE in nparts ranges of groups, about n / nparts rows each; the
** results appended to a in range order. */
static rf_status reduce_parts(gx *x, const rf_hir_kernel *k, int64_t nparts, gacc *a)
{
    int32_t vars[2] = {k->in[0], k->idx};
    const rf_hir_var *iv = x->p->vars[vars[0]], *ov = x->p->vars[k->out];
    const gval *v = &x->vals[vars[0]], *gv = &x->vals[vars[1]];
    int32_t gnc = x->p->vars[vars[1]]->ncols;
    const int64_t *gid = rf_gx_held_col(gv, gnc + 2), *first = rf_gx_held_col(gv, gnc + 3);
    int64_t n = v->nrows, ng = gv->ngroups;
    if (!gv->has_groups) return RF_EINTERNAL;
    if (ng <= 1 || !gid || !first) return RF_EINTERNAL; /* (one group: rf_gx_run_radix said so) */
    /* rows per group, then the ranges' ends at group boundaries */
    int64_t *cnt = rf_calloc((size_t)ng + 1, sizeof *cnt), *rows = rf_malloc((size_t)n * 8 + 8);
    int64_t *lg = rf_malloc((size_t)n * 8 + 8), *lf = rf_malloc((size_t)ng * 8 + 8);
    rf_status st = cnt && rows && lg && lf ? RF_OK : RF_ENOMEM;
    for (int64_t i = 0; i < n && !st; i++) {
        if (gid[i] < 0 || gid[i] >= ng) st = RF_EINTERNAL;
        else cnt[gid[i]]++;
    }
    int64_t glo = 0, seen = 0;
    for (int64_t p = 0; p < nparts && glo < ng && !st; p++) {
        /* groups [glo, ghi): at least one, rows up to the p + 1-th share */
        int64_t ghi = glo, m = 0, goal = p == nparts - 1 ? n : (n / nparts) * (p + 1);
        while (ghi < ng && (ghi == glo || seen + m + cnt[ghi] <= goal)) m += cnt[ghi++];
        if (p == nparts - 1)
            while (ghi < ng) m += cnt[ghi++];
        /* the range's rows ascending, their groups from 0, each group's first row among them */
        int64_t j = 0;
        for (int64_t i = 0; i < n; i++) {
            if (gid[i] < glo || gid[i] >= ghi) continue;
            if (first[gid[i]] == i) lf[gid[i] - glo] = j;
            lg[j] = gid[i] - glo;
            rows[j++] = i;
        }
        if (j != m) st = RF_EINTERNAL;
        gval part[2];
        memset(part, 0, sizeof part);
        if (!st) st = rel_of_rows(x, v, iv, rows, m, NULL, &part[0]);
        part[1].has_groups = 1;
        part[1].nrows = m;
        part[1].ngroups = ghi - glo;
        if (!st) st = galloc(x, (uint64_t)m * 8, &part[1].gid);
        if (!st) st = x->g.ops->h2d(&x->g, part[1].gid.p, lg, (uint64_t)m * 8);
        if (!st) st = galloc(x, (uint64_t)(ghi - glo) * 8, &part[1].first);
        if (!st) st = x->g.ops->h2d(&x->g, part[1].first.p, lf, (uint64_t)(ghi - glo) * 8);
        if (!st) st = run_on(x, k, vars, part, 2);
        else {
            rf_gx_val_clear(x, &part[0], iv->ncols);
            rf_gx_val_clear(x, &part[1], gnc);
        }
        if (st == RF_EDEVMEM) unfit_part(x, m, ghi - glo == 1, RF_GX_UNIT_GROUP);
        if (!st) st = rf_gx_acc_take(x, a, ov, 0, 0, 0, &x->vals[k->out]);
        rf_gx_var_clear(x, k->out);
        seen += m;
        glo = ghi;
    }
    if (!st && (glo != ng || a->rows != ng)) st = RF_EINTERNAL;
    free(cnt);
    free(rows);
    free(lg);
    free(lf);
    return st;
}

/* ---- SORT: sorted runs, merged ----------------------------------------------------------------- */

typedef struct sorter {
    const gx *x;
    const rf_hir_kernel *k;
    const rf_type *types;
    const char **col; /* by order key: the column in host memory */
} sorter;

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

/* The GPU's order of a float (rf_base.cuh's norm): NaN last, zeros equal. */
static uint64_t float_key(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return rf_val_float_key(d);
}

/* Rows i and j by the sort's keys: < 0, 0 (ties), > 0. */
static int rows_cmp(const sorter *s, int64_t i, int64_t j)
{
    for (int32_t o = 0; o < s->k->norder; o++) {
        int32_t c = s->k->order[o].col;
        rf_type t = s->types[c];
        int w = wid(t);
        const char *col = s->col[o];
        if (!col) continue; /* (a column no kernel reads: all zeros) */
        uint64_t a = load_u64(col + i * w, w), b = load_u64(col + j * w, w);
        int r;
        if (t == RF_TYPE_DEC128) {
            rf_dec128 va, vb;
            memcpy(&va, col + i * w, 16);
            memcpy(&vb, col + j * w, 16);
            r = rf_val_cmp_dec128(va, vb);
        } else if (t == RF_TYPE_STRING) r = rf_rt_dict_cmp(s->x->dict, (uint32_t)a, (uint32_t)b);
        else if (t == RF_TYPE_FLOAT) r = cmp_u64(float_key(a), float_key(b));
        else if (w == 8) r = (int64_t)a < (int64_t)b ? -1 : (int64_t)a > (int64_t)b;
        else if (w == 4) r = (int32_t)a < (int32_t)b ? -1 : (int32_t)a > (int32_t)b;
        else r = cmp_u64(a, b);
        if (r) return s->k->order[o].desc ? -r : r;
    }
    return 0;
}

/* The sorted runs e[b[r] .. b[r + 1]) merged pairwise (a tie takes the
** earlier run: its rows come first) until one run is left in *e. */
static rf_status merge_runs(const sorter *s, int64_t **e, int64_t *b, int64_t nruns)
{
    int64_t n = b[nruns];
    int64_t *src = *e, *dst = rf_malloc((size_t)n * 8 + 8);
    if (!dst) return RF_ENOMEM;
    while (nruns > 1) {
        int64_t nr = 0;
        for (int64_t r = 0; r < nruns; r += 2) {
            int64_t lo = b[r], mid = r + 1 < nruns ? b[r + 1] : b[r], hi = r + 1 < nruns ? b[r + 2] : b[r + 1];
            if (r + 1 >= nruns) mid = hi;
            int64_t i = lo, j = mid, at = lo;
            while (i < mid && j < hi) dst[at++] = rows_cmp(s, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid) dst[at++] = src[i++];
            while (j < hi) dst[at++] = src[j++];
            b[nr++] = lo;
        }
        b[nr] = n;
        nruns = nr;
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    /* the rows end in *e (room as the pool reserves it, for the held value) */
    if (src != *e) {
        memcpy(*e, src, (size_t)n * 8);
        free(src);
    } else {
        free(dst);
    }
    return RF_OK;
}

/* SORT in nparts runs of row ranges, merged; the permutation into *out (an
** index held in host memory). */
static rf_status sort_parts(gx *x, const rf_hir_kernel *k, int64_t nparts, gval *out)
{
    int32_t in = k->in[0];
    const rf_hir_var *iv = x->p->vars[in];
    const gval *v = &x->vals[in];
    int64_t n = v->nrows;
    uint64_t elen = 0;
    int64_t *e = held_buf((uint64_t)n * 8, &elen), *b = rf_malloc((size_t)(nparts + 2) * 8), *rows = NULL;
    uint8_t *want = rf_calloc((size_t)iv->ncols + 1, 1);
    const char **cols = rf_calloc((size_t)k->norder + 1, sizeof *cols);
    rf_status st = e && b && want && cols ? RF_OK : RF_ENOMEM;
    for (int32_t o = 0; o < k->norder && !st; o++) {
        want[k->order[o].col] = 1;
        cols[o] = rf_gx_held_col(v, k->order[o].col);
    }
    int64_t at = 0, nruns = 0, most = n / nparts + 1;
    if (!st && !(rows = rf_malloc((size_t)most * 8))) st = RF_ENOMEM;
    for (int64_t p = 0; p < nparts && !st; p++) {
        int64_t lo = n / nparts * p + (p < n % nparts ? p : n % nparts);
        int64_t hi = lo + n / nparts + (p < n % nparts);
        if (lo == hi) continue;
        for (int64_t i = lo; i < hi; i++) rows[i - lo] = i;
        gval part;
        st = rel_of_rows(x, v, iv, rows, hi - lo, want, &part);
        if (!st) st = run_on(x, k, &in, &part, 1);
        else rf_gx_val_clear(x, &part, iv->ncols);
        if (st == RF_EDEVMEM) unfit_part(x, hi - lo, 0, RF_GX_UNIT_NONE);
        const gval *o = &x->vals[k->out];
        /* (a limited sort keeps fewer: the rows that can reach the first places) */
        int64_t m = st ? 0 : o->nrows;
        if (!st && (m > hi - lo || (m > 1 && !o->a.p))) st = RF_EINTERNAL;
        if (!st && o->a.p) st = x->g.ops->d2h(&x->g, e + at, o->a.p, (uint64_t)m * 8);
        for (int64_t i = 0; i < m && !st; i++) e[at + i] = o->a.p ? e[at + i] + lo : lo + i;
        rf_gx_var_clear(x, k->out);
        b[nruns++] = at;
        at += m;
    }
    b[nruns] = at;
    sorter s = {x, k, iv->types, cols};
    if (!st && nruns > 1) st = merge_runs(&s, &e, b, nruns);
    free(rows);
    free(want);
    free(cols);
    free(b);
    memset(out, 0, sizeof *out);
    int32_t nc = x->p->vars[k->out]->ncols;
    if (!st) {
        out->nrows = at;
        st = rf_gx_held_adopt(out, nc, nc, e, elen);
        if (st) free(e);
        e = NULL;
    }
    free(e);
    if (st) rf_gx_val_clear(x, out, nc);
    return st;
}

/* ---- the kernel in partitions ----------------------------------------------------------------- */

static rf_status run_in(gx *x, const rf_hir_kernel *k, int64_t nparts)
{
    gval r;
    if (k->kind == RF_HIR_GROUP) {
        rf_status st = group_parts(x, k, nparts, &r);
        if (!st) rf_gx_var_set(x, k->out, &r);
        return st;
    }
    if (k->kind == RF_HIR_JOIN_INDEX || k->kind == RF_HIR_ANTI_INDEX) {
        rf_status st = join_parts(x, k, nparts, &r);
        if (!st) rf_gx_var_set(x, k->out, &r);
        return st;
    }
    if (k->kind == RF_HIR_SORT) {
        rf_status st = sort_parts(x, k, nparts, &r);
        if (!st) rf_gx_var_set(x, k->out, &r);
        return st;
    }
    const rf_hir_var *ov = x->p->vars[k->out];
    if (k->kind == RF_HIR_JOIN_MAP || k->kind == RF_HIR_GATHER_MAP) {
        gacc g;
        memset(&g, 0, sizeof g);
        g.col = rf_calloc((size_t)ov->ncols + 1, sizeof *g.col);
        g.cap = rf_calloc((size_t)ov->ncols + 1, sizeof *g.cap);
        g.has = rf_calloc((size_t)ov->ncols + 1, 1);
        rf_status st = g.col && g.cap && g.has ? gathered_parts(x, k, nparts, &g) : RF_ENOMEM;
        if (!st) st = rf_gx_acc_to_value(x, &g, k->out, 0);
        rf_gx_acc_free(&g, ov->ncols);
        return st;
    }
    if (k->kind == RF_HIR_UNIQUE) {
        const gval *v = &x->vals[k->in[0]];
        uint8_t *keep = rf_malloc((size_t)v->nrows + 1);
        rf_status st = keep ? unique_parts(x, k, nparts, keep) : RF_ENOMEM;
        if (!st) st = fd_check(x, k, v, keep);
        if (!st) st = kept_rows(x, v, ov, keep, &r);
        free(keep);
        if (!st) rf_gx_var_set(x, k->out, &r);
        return st;
    }
    gacc a;
    memset(&a, 0, sizeof a);
    a.col = rf_calloc((size_t)ov->ncols + 1, sizeof *a.col);
    a.cap = rf_calloc((size_t)ov->ncols + 1, sizeof *a.cap);
    a.has = rf_calloc((size_t)ov->ncols + 1, 1);
    rf_status st = a.col && a.cap && a.has ? reduce_parts(x, k, nparts, &a) : RF_ENOMEM;
    if (!st) st = rf_gx_acc_to_value(x, &a, k->out, 0);
    rf_gx_acc_free(&a, ov->ncols);
    return st;
}

rf_status rf_gx_run_radix(gx *x, const rf_hir_kernel *k)
{
    int32_t in = k->in[0];
    /* a group of all rows (no group key) reads no column: no parts needed */
    if (k->kind == RF_HIR_GROUP && (k->ngroup == 0 || x->vals[in].nrows == 0)) return rf_gx_run_kernel(x, k);
    /* the input (and the groups) wait in host memory */
    rf_gx_var_clear(x, k->out);
    rf_status st = RF_OK;
    for (int32_t i = 0; i < k->nin && !st; i++) st = rf_gx_spill_var(x, k->in[i]);
    int gathered = k->kind == RF_HIR_JOIN_MAP || k->kind == RF_HIR_GATHER_MAP;
    if (!st && k->idx >= 0) st = rf_gx_spill_var(x, k->idx);
    if (st) return st;
    int64_t n = x->vals[gathered ? k->idx : in].nrows, ndiag = x->d->count, nerr = x->d->nerrors;
    if (k->kind == RF_HIR_REDUCE) {
        const gval *gv = &x->vals[k->idx];
        int32_t gnc = x->p->vars[k->idx]->ncols;
        if (gv->ngroups <= 1 || !rf_gx_held_col(gv, gnc + 2)) {
            rf_gx_unfit(x, n, RF_GX_UNIT_GROUP);
            return rf_gx_unfit_error(x, ndiag, nerr);
        }
    }
    for (int64_t parts = 2;; parts *= 2) {
        rf_gx_unfit(x, 0, RF_GX_UNIT_NONE);
        st = run_in(x, k, parts);
        /* (a partition that failed splits further unless it is one row,
        ** one key or one group; hashes of distinct keys part in the end) */
        int unit = st == RF_EDEVMEM && x->unfit_unit != RF_GX_UNIT_NONE;
        int more = st == RF_EDEVMEM && !unit && x->unfit_rows > 1 && parts < MAX_PARTS;
        if (!more) {
            if (!st) {
                x->radixed++;
                x->radix_parts += parts;
            }
            if (unit) st = rf_gx_unfit_error(x, ndiag, nerr);
            return st;
        }
        rf_gx_var_clear(x, k->out);
        rf_gx_held_drop_diags(x, ndiag, nerr); /* (smaller partitions next) */
    }
}
