/*
** skeletons/cpu/cpu_keyindex.c: a join index kept across joins.
**
** Owns: rf_cpu_keyindex, the rows of a table that does not change listed by
** their key (a hash table from key to group, the rows of each group in
** ascending order), built once and probed by any number of joins. A
** semi-naive loop joins each round's small delta with the same large input;
** rf_cpu_hash_join builds on the small side and scans the large one, a cost
** in the input's size every round, where probing a kept index costs time in
** the delta only.
*/
#include "cpu_internal.h"

struct rf_cpu_keyindex {
    int32_t nk;
    rf_cpu_kind *kinds;
    int64_t nrows;
    cpu_enc e;
    cpu_ht ht;               /* key -> group id (none when nrows is 0) */
    int64_t *order, *offsets; /* group g's rows: order[offsets[g] .. offsets[g+1]) */
};

void rf_cpu_keyindex_free(rf_cpu_keyindex *ix)
{
    if (!ix) return;
    free(ix->kinds);
    cpu_enc_free(&ix->e);
    cpu_ht_free(&ix->ht);
    free(ix->order);
    free(ix->offsets);
    free(ix);
}

rf_status rf_cpu_keyindex_build(rf_cpu_pool *pool, const rf_cpu_table *t, const int32_t *keys, int32_t nk,
                                rf_cpu_keyindex **out)
{
    *out = NULL;
    if (!t || t->nrows < 0 || nk <= 0) return RF_EINTERNAL;
    rf_cpu_keyindex *ix = calloc(1, sizeof *ix);
    const void **data = cpu_alloc(nk, sizeof *data);
    uint64_t *lo = cpu_alloc(nk, 8), *hi = cpu_alloc(nk, 8);
    int64_t *gid = NULL, *first = NULL, G = 0, m = 0;
    rf_status st = RF_ENOMEM;
    if (!ix || !data || !lo || !hi || !(ix->kinds = cpu_alloc(nk, sizeof *ix->kinds))) goto out;
    ix->nk = nk;
    ix->nrows = t->nrows;
    if ((st = cpu_table_keys(t, keys, nk, ix->kinds, data))) goto out;
    if (t->nrows == 0) goto out; /* st is RF_OK: an index that matches nothing */
    cpu_ranges(pool, nk, ix->kinds, data, t->nrows, lo, hi);
    if ((st = cpu_enc_init(&ix->e, nk, ix->kinds, NULL, lo, hi))) goto out;
    if ((st = cpu_ht_build(pool, &ix->ht, &ix->e, data, t->nrows, 1, &gid, &first, &G))) goto out;
    st = cpu_csr(pool, gid, t->nrows, G, &ix->order, &ix->offsets, &m);
out:
    free(data);
    free(lo);
    free(hi);
    free(gid);
    free(first);
    if (st) {
        rf_cpu_keyindex_free(ix);
        return st;
    }
    *out = ix;
    return RF_OK;
}

typedef struct kjoin {
    const rf_cpu_keyindex *ix;
    const int64_t *gid; /* group of each left row, -1: none */
    int64_t grain;
    int64_t *counts;    /* per chunk: pairs, then where they start */
    int64_t *lidx, *ridx;
} kjoin;

static void kjoin_count(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    kjoin *c = vp;
    int64_t k = 0;
    for (int64_t i = b; i < e; i++)
        if (c->gid[i] >= 0) k += c->ix->offsets[c->gid[i] + 1] - c->ix->offsets[c->gid[i]];
    c->counts[b / c->grain] = k;
}

static void kjoin_emit(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    kjoin *c = vp;
    int64_t k = c->counts[b / c->grain];
    for (int64_t i = b; i < e; i++) {
        int64_t g = c->gid[i];
        if (g < 0) continue;
        for (int64_t j = c->ix->offsets[g]; j < c->ix->offsets[g + 1]; j++) {
            c->lidx[k] = i;
            c->ridx[k++] = c->ix->order[j];
        }
    }
}

rf_status rf_cpu_keyindex_join(rf_cpu_pool *pool, const rf_cpu_keyindex *ix, const rf_cpu_table *left,
                               const int32_t *lkeys, int64_t **lidx, int64_t **ridx, int64_t *n)
{
    *lidx = *ridx = NULL;
    *n = 0;
    if (!ix || !left || left->nrows < 0) return RF_EINTERNAL;
    int64_t ln = left->nrows;
    rf_cpu_kind *kinds = cpu_alloc(ix->nk, sizeof *kinds);
    const void **data = cpu_alloc(ix->nk, sizeof *data);
    kjoin c = {ix, NULL, cpu_grain(ln, 4096), NULL, NULL, NULL};
    int64_t *gid = NULL;
    rf_status st = RF_ENOMEM;
    if (!kinds || !data) goto out;
    if ((st = cpu_table_keys(left, lkeys, ix->nk, kinds, data))) goto out;
    for (int32_t i = 0; i < ix->nk; i++)
        if (kinds[i] != ix->kinds[i]) {
            st = RF_EINTERNAL;
            goto out;
        }
    st = RF_ENOMEM;
    if (ln == 0 || ix->nrows == 0) {
        *lidx = cpu_alloc(0, 8);
        *ridx = cpu_alloc(0, 8);
        if (*lidx && *ridx) st = RF_OK;
        goto out;
    }
    int64_t nch = (ln + c.grain - 1) / c.grain;
    if (!(gid = cpu_alloc(ln, sizeof *gid)) || !(c.counts = cpu_alloc(nch, sizeof *c.counts))) goto out;
    /* keys outside the index's ranges cannot match (check = 1) */
    cpu_ht_probe(pool, &ix->ht, &ix->e, data, ln, 1, gid, NULL);
    c.gid = gid;
    rf_cpu_parallel_for(pool, ln, c.grain, kjoin_count, &c);
    int64_t tot = 0;
    for (int64_t i = 0; i < nch; i++) {
        int64_t x = c.counts[i];
        c.counts[i] = tot;
        tot += x;
    }
    c.lidx = cpu_alloc(tot, 8);
    c.ridx = cpu_alloc(tot, 8);
    if (!c.lidx || !c.ridx) {
        free(c.lidx);
        free(c.ridx);
        goto out;
    }
    rf_cpu_parallel_for(pool, ln, c.grain, kjoin_emit, &c);
    *lidx = c.lidx;
    *ridx = c.ridx;
    *n = tot;
    st = RF_OK;
out:
    if (st) {
        free(*lidx);
        free(*ridx);
        *lidx = *ridx = NULL;
    }
    free(kinds);
    free(data);
    free(gid);
    free(c.counts);
    return st;
}
