/*
** skeletons/cpu/cpu_set.c: growing sets of distinct rows for semi-naive
** recursion.
**
** Owns: the set's rows (columns in insertion order) and a persistent hash
** index on them. An insert costs time in the size of the batch: the index
** is only rebuilt when the key encoding must widen (a value outside the
** ranges seen so far, which are padded to make that rare) or when the set
** has grown enough to want more partitions (a geometric schedule).
*/
#include "cpu_internal.h"

struct rf_cpu_set {
    int32_t ncols;
    rf_cpu_kind *kinds;
    rf_cpu_kind *pkinds; /* the key parts of the columns (cpu_table_keys) */
    int32_t np;
    rf_cpu_col *cols; /* data arrays of cap rows; also the view */
    int64_t size, cap;
    int have_enc;
    cpu_enc e;
    cpu_ht ht;   /* keys only, no payload */
    int broken;  /* memory ran out mid-insert: index and rows disagree */
};

rf_status rf_cpu_set_new(int32_t ncols, const rf_cpu_kind *kinds, rf_cpu_set **out)
{
    *out = NULL;
    if (ncols < 0) return RF_EINTERNAL;
    for (int32_t i = 0; i < ncols; i++)
        if ((unsigned)kinds[i] > RF_CPU_I128) return RF_EINTERNAL;
    rf_cpu_set *s = calloc(1, sizeof *s);
    if (!s) return RF_ENOMEM;
    s->ncols = ncols;
    s->kinds = cpu_alloc(ncols, sizeof *s->kinds);
    s->pkinds = cpu_alloc(CPU_KEY_PARTS(ncols), sizeof *s->pkinds);
    s->cols = cpu_zalloc(ncols, sizeof *s->cols);
    if (!s->kinds || !s->pkinds || !s->cols) {
        rf_cpu_set_free(s);
        return RF_ENOMEM;
    }
    for (int32_t i = 0; i < ncols; i++) {
        s->kinds[i] = kinds[i];
        s->cols[i].kind = kinds[i];
    }
    s->np = cpu_kinds_parts(kinds, NULL, ncols, s->pkinds, NULL);
    *out = s;
    return RF_OK;
}

void rf_cpu_set_free(rf_cpu_set *s)
{
    if (!s) return;
    if (s->cols)
        for (int32_t i = 0; i < s->ncols; i++) free(s->cols[i].data);
    free(s->cols);
    free(s->kinds);
    free(s->pkinds);
    cpu_enc_free(&s->e);
    cpu_ht_free(&s->ht);
    free(s);
}

int64_t rf_cpu_set_size(const rf_cpu_set *s) { return s->size; }

void rf_cpu_set_view(const rf_cpu_set *s, rf_cpu_table *view)
{
    view->nrows = s->size;
    view->ncols = s->ncols;
    view->cols = s->cols;
}

void rf_cpu_set_view_from(const rf_cpu_set *s, int64_t begin, rf_cpu_col *cols, rf_cpu_table *view)
{
    if (begin < 0) begin = 0;
    if (begin > s->size) begin = s->size;
    for (int32_t i = 0; i < s->ncols; i++) {
        cols[i].kind = s->kinds[i];
        cols[i].data = (char *)s->cols[i].data + (size_t)begin * (size_t)rf_cpu_kind_size(s->kinds[i]);
    }
    view->nrows = s->size - begin;
    view->ncols = s->ncols;
    view->cols = cols;
}

static rf_status check_table(const rf_cpu_set *s, const rf_cpu_table *t)
{
    if (!t || t->ncols != s->ncols || t->nrows < 0) return RF_EINTERNAL;
    for (int32_t i = 0; i < s->ncols; i++)
        if (t->cols[i].kind != s->kinds[i]) return RF_EINTERNAL;
    return s->broken ? RF_ENOMEM : RF_OK;
}

/* The data of t's key parts (the set's pkinds). */
static rf_status data_of(const rf_cpu_table *t, const void ***data)
{
    *data = cpu_alloc(CPU_KEY_PARTS(t->ncols), sizeof **data);
    rf_cpu_kind *k = cpu_alloc(CPU_KEY_PARTS(t->ncols), sizeof *k), *pk = cpu_alloc(CPU_KEY_PARTS(t->ncols), sizeof *pk);
    const void **d = cpu_alloc(t->ncols, sizeof *d);
    rf_status st = RF_ENOMEM;
    if (*data && k && pk && d) {
        for (int32_t i = 0; i < t->ncols; i++) {
            k[i] = t->cols[i].kind;
            d[i] = t->cols[i].data;
        }
        cpu_kinds_parts(k, d, t->ncols, pk, *data);
        st = RF_OK;
    }
    free(k);
    free(pk);
    free(d);
    if (st) {
        free(*data);
        *data = NULL;
    }
    return st;
}

static uint64_t sat_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }
static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* The index layout for about n keys under encoding e. A bitmap when keys
** are one word and the bitmap is no larger than 4 MiB or than a hash table
** would be (16 bytes a key); partitions of at most 2^21 bits (256 KiB) so
** that each stays in cache. */
typedef struct layout {
    int direct;
    int32_t dbits, pbits;
} layout;

static layout pick_layout(const cpu_enc *e, int64_t n)
{
    layout l = {0, 0, cpu_pick_pbits(n)};
    int32_t b = e->wbits[0] < 6 ? 6 : e->wbits[0];
    if (e->nw == 1 && (b <= 25 || (b <= 34 && ((int64_t)1 << (b - 3)) <= 16 * n))) {
        l.direct = 1;
        l.dbits = b;
        l.pbits = b - 21 > 4 ? b - 21 : 4;
        if (l.pbits > b - 6) l.pbits = b - 6;
    }
    return l;
}

/* Replaces the index by one with encoding e (taken over on success) and
** layout l, built from the stored rows. */
static rf_status rebuild(rf_cpu_pool *pool, rf_cpu_set *s, cpu_enc *e, layout l)
{
    cpu_ht ht;
    rf_status st = l.direct ? cpu_ht_init_direct(&ht, l.dbits, l.pbits)
                            : cpu_ht_init(&ht, e->nw, 0, l.pbits, (s->size >> l.pbits) + 1);
    if (st) return st;
    if (s->size > 0) {
        rf_cpu_table v;
        const void **data;
        rf_cpu_set_view(s, &v);
        if (!(st = data_of(&v, &data))) {
            st = cpu_ht_insert_rows(pool, &ht, e, data, s->size, NULL, NULL, NULL);
            free(data);
        }
        if (st) {
            cpu_ht_free(&ht);
            return st;
        }
    }
    cpu_ht_free(&s->ht);
    s->ht = ht;
    if (e != &s->e) {
        cpu_enc_free(&s->e);
        s->e = *e;
        memset(e, 0, sizeof *e);
    }
    s->have_enc = 1;
    return RF_OK;
}

/* A new encoding that covers the set's rows and those of data, padded so
** that values drifting a little further do not force another rebuild. */
static rf_status widen(rf_cpu_pool *pool, rf_cpu_set *s, const void *const *data, int64_t n, cpu_enc *ne)
{
    int64_t nc = s->np;
    uint64_t *lo = cpu_alloc(nc, 8), *hi = cpu_alloc(nc, 8);
    rf_status st = RF_ENOMEM;
    if (lo && hi) {
        cpu_ranges(pool, (int32_t)nc, s->pkinds, data, n, lo, hi);
        for (int64_t c = 0; c < nc; c++) {
            if (s->have_enc) {
                if (s->e.k[c].lo < lo[c]) lo[c] = s->e.k[c].lo;
                if (s->e.k[c].hi > hi[c]) hi[c] = s->e.k[c].hi;
            }
            uint64_t pad = (hi[c] - lo[c]) / 2 + 16;
            lo[c] = sat_sub(lo[c], pad);
            hi[c] = sat_add(hi[c], pad);
        }
        st = cpu_enc_init(ne, (int32_t)nc, s->pkinds, NULL, lo, hi);
    }
    free(lo);
    free(hi);
    return st;
}

static rf_status reserve_rows(rf_cpu_set *s, int64_t need)
{
    if (need <= s->cap) return RF_OK;
    int64_t cap = s->cap * 2 > need ? s->cap * 2 : need;
    if (cap < 1024) cap = 1024;
    for (int32_t i = 0; i < s->ncols; i++) {
        size_t sz = (size_t)rf_cpu_kind_size(s->kinds[i]);
        if ((uint64_t)cap > SIZE_MAX / 2 / sz) return RF_ENOMEM;
        void *p = realloc(s->cols[i].data, (size_t)cap * sz);
        if (!p) return RF_ENOMEM; /* the columns keep their contents */
        s->cols[i].data = p;
    }
    s->cap = cap;
    return RF_OK;
}

rf_status rf_cpu_set_insert(rf_cpu_pool *pool, rf_cpu_set *s, const rf_cpu_table *t, int64_t **new_idx,
                            int64_t *nnew)
{
    if (new_idx) *new_idx = NULL;
    if (nnew) *nnew = 0;
    rf_status st = check_table(s, t);
    if (st) return st;
    int64_t n = t->nrows;
    if (n == 0) {
        if (new_idx && !(*new_idx = cpu_alloc(0, 8))) return RF_ENOMEM;
        return RF_OK;
    }
    const void **data = NULL;
    uint8_t *isnew = NULL;
    int64_t *idx = NULL, m = 0;
    cpu_enc ne = {0};
    if ((st = data_of(t, &data))) goto out;

    if (!s->have_enc) {
        if ((st = widen(pool, s, data, n, &ne)) || (st = rebuild(pool, s, &ne, pick_layout(&ne, n)))) goto out;
    } else {
        /* Grow the index ahead of the batch: more partitions, or a bitmap
        ** once the set is large enough to pay for one. */
        layout l = pick_layout(&s->e, s->size + n);
        if (!s->ht.direct && (l.direct || l.pbits >= s->ht.pbits + 2) && (st = rebuild(pool, s, &s->e, l))) goto out;
    }
    st = RF_ENOMEM;
    if (reserve_rows(s, s->size + n)) goto out;
    isnew = cpu_zalloc(n, 1);
    if (!isnew) goto out;
    int oor;
    if ((st = cpu_ht_insert_rows(pool, &s->ht, &s->e, data, n, isnew, NULL, &oor))) goto broken;
    if (oor) {
        /* Nothing was inserted: widen the encoding, then insert. */
        if ((st = widen(pool, s, data, n, &ne)) || (st = rebuild(pool, s, &ne, pick_layout(&ne, s->size + n))))
            goto out;
        if ((st = cpu_ht_insert_rows(pool, &s->ht, &s->e, data, n, isnew, NULL, NULL))) goto broken;
    }
    /* From here a failure leaves keys in the index whose rows are not
    ** stored, so the set is marked unusable. */
    if ((st = cpu_compact_flags(pool, isnew, 1, n, &idx, &m))) goto broken;
    for (int32_t i = 0; i < s->ncols; i++) {
        size_t sz = (size_t)rf_cpu_kind_size(s->kinds[i]);
        cpu_gather_into(pool, s->kinds[i], t->cols[i].data, idx, m, (char *)s->cols[i].data + (size_t)s->size * sz);
    }
    s->size += m;
    if (nnew) *nnew = m;
    if (new_idx) {
        *new_idx = idx;
        idx = NULL;
    }
    st = RF_OK;
    goto out;
broken:
    s->broken = 1;
out:
    cpu_enc_free(&ne);
    free(data);
    free(isnew);
    free(idx);
    return st;
}

rf_status rf_cpu_set_probe(rf_cpu_pool *pool, const rf_cpu_set *s, const rf_cpu_table *t, int negate,
                           int64_t **keep, int64_t *nkeep)
{
    *keep = NULL;
    *nkeep = 0;
    rf_status st = check_table(s, t);
    if (st) return st;
    int64_t n = t->nrows;
    uint8_t *found = cpu_zalloc(n, 1);
    const void **data = NULL;
    if (!found || data_of(t, &data)) {
        free(found);
        return RF_ENOMEM;
    }
    if (s->size > 0) cpu_ht_probe(pool, &s->ht, &s->e, data, n, 1, NULL, found);
    st = cpu_compact_flags(pool, found, negate ? 0 : 1, n, keep, nkeep);
    free(found);
    free(data);
    return st;
}
