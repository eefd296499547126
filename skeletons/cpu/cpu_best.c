/*
** skeletons/cpu/cpu_best.c: the per-key table of a recursive min or max.
**
** Owns: rf_cpu_best, rows of (key columns, one value column) with one row
** per key, stored in insertion order beside an open-addressing hash table
** from key to row, so that a semi-naive round of a recursive min or max
** finds the candidates that improve a key (rf_cpu_best_improving) and
** stores them (rf_cpu_best_store: values overwritten in place, new keys
** appended) in time proportional to the round's rows, not to the table.
** Keys compare, hash and order by their normalized values (cpu_norm_at: the
** order of rf_value.h, -0.0 equal to 0.0, NaNs equal).
*/
#include "cpu_internal.h"

struct rf_cpu_best {
    int32_t ncols, nk; /* the value is column nk = ncols - 1 */
    rf_cpu_kind *kinds;
    int want_max;
    int64_t nrows, cap;
    void **cols;       /* ncols arrays of cap rows */
    uint64_t *slots;   /* row + 1 per slot, 0: free */
    int64_t nslots;    /* a power of two, at least twice nrows */
};

void rf_cpu_best_free(rf_cpu_best *b)
{
    if (!b) return;
    for (int32_t c = 0; b->cols && c < b->ncols; c++) free(b->cols[c]);
    free(b->cols);
    free(b->kinds);
    free(b->slots);
    free(b);
}

rf_status rf_cpu_best_new(int32_t ncols, const rf_cpu_kind *kinds, int want_max, rf_cpu_best **out)
{
    *out = NULL;
    if (ncols < 1) return RF_EINTERNAL;
    rf_cpu_best *b = calloc(1, sizeof *b);
    if (!b) return RF_ENOMEM;
    b->ncols = ncols;
    b->nk = ncols - 1;
    b->want_max = want_max;
    b->kinds = cpu_alloc(ncols, sizeof *b->kinds);
    b->cols = cpu_zalloc(ncols, sizeof *b->cols);
    b->nslots = 16;
    b->slots = cpu_zalloc(b->nslots, sizeof *b->slots);
    if (!b->kinds || !b->cols || !b->slots) {
        rf_cpu_best_free(b);
        return RF_ENOMEM;
    }
    memcpy(b->kinds, kinds, (size_t)ncols * sizeof *kinds);
    *out = b;
    return RF_OK;
}

int64_t rf_cpu_best_size(const rf_cpu_best *b) { return b->nrows; }

void rf_cpu_best_view(const rf_cpu_best *b, rf_cpu_col *cols, rf_cpu_table *view)
{
    for (int32_t c = 0; c < b->ncols; c++) {
        cols[c].kind = b->kinds[c];
        cols[c].data = b->cols[c];
    }
    view->nrows = b->nrows;
    view->ncols = b->ncols;
    view->cols = cols;
}

static uint64_t key_hash(const rf_cpu_best *b, const void *const *data, int64_t i)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int32_t c = 0; c < b->nk; c++) h = cpu_mix(h ^ cpu_norm_at(b->kinds[c], data[c], i));
    return h;
}

static int key_eq(const rf_cpu_best *b, const void *const *a, int64_t i, const void *const *d, int64_t j)
{
    for (int32_t c = 0; c < b->nk; c++)
        if (cpu_norm_at(b->kinds[c], a[c], i) != cpu_norm_at(b->kinds[c], d[c], j)) return 0;
    return 1;
}

/* The table's row holding the key of row i of data, or -1. */
static int64_t find(const rf_cpu_best *b, const void *const *data, int64_t i)
{
    uint64_t mask = (uint64_t)b->nslots - 1;
    for (uint64_t s = key_hash(b, data, i) & mask;; s = (s + 1) & mask) {
        uint64_t r = b->slots[s];
        if (!r) return -1;
        if (key_eq(b, (const void *const *)b->cols, (int64_t)r - 1, data, i)) return (int64_t)r - 1;
    }
}

/* Whether value row i of data beats the table's row r. */
static int beats(const rf_cpu_best *b, const void *vals, int64_t i, int64_t r)
{
    rf_cpu_kind k = b->kinds[b->nk];
    uint64_t x = cpu_norm_at(k, vals, i), y = cpu_norm_at(k, b->cols[b->nk], r);
    return b->want_max ? x > y : x < y;
}

/* Room for n more rows and their slots. */
static rf_status reserve(rf_cpu_best *b, int64_t n)
{
    int64_t need = b->nrows + n;
    if (need > b->cap) {
        int64_t cap = b->cap ? b->cap : 64;
        while (cap < need) cap *= 2;
        for (int32_t c = 0; c < b->ncols; c++) {
            void *m = realloc(b->cols[c], (size_t)cap * (size_t)rf_cpu_kind_size(b->kinds[c]));
            if (!m) return RF_ENOMEM;
            b->cols[c] = m;
        }
        b->cap = cap;
    }
    if (2 * need > b->nslots) {
        int64_t ns = b->nslots;
        while (2 * need > ns) ns *= 2;
        uint64_t *slots = cpu_zalloc(ns, sizeof *slots), mask = (uint64_t)ns - 1;
        if (!slots) return RF_ENOMEM;
        for (int64_t r = 0; r < b->nrows; r++) {
            uint64_t s = key_hash(b, (const void *const *)b->cols, r) & mask;
            while (slots[s]) s = (s + 1) & mask;
            slots[s] = (uint64_t)r + 1;
        }
        free(b->slots);
        b->slots = slots;
        b->nslots = ns;
    }
    return RF_OK;
}

static rf_status data_of(const rf_cpu_best *b, const rf_cpu_table *t, const void **data)
{
    if (!t || t->ncols != b->ncols || t->nrows < 0) return RF_EINTERNAL;
    for (int32_t c = 0; c < b->ncols; c++) {
        if (t->cols[c].kind != b->kinds[c]) return RF_EINTERNAL;
        data[c] = t->cols[c].data;
    }
    return RF_OK;
}

typedef struct probe_ctx {
    const rf_cpu_best *b;
    const void *const *data;
    int64_t *row;   /* found row per candidate, -1: a new key */
    uint8_t *flags; /* improving: 1 where the candidate improves */
} probe_ctx;

static void probe_chunk(void *vp, int64_t s, int64_t e, int w)
{
    (void)w;
    probe_ctx *c = vp;
    for (int64_t i = s; i < e; i++) {
        int64_t r = find(c->b, c->data, i);
        if (c->row) c->row[i] = r;
        if (c->flags) c->flags[i] = r < 0 || beats(c->b, c->data[c->b->nk], i, r);
    }
}

rf_status rf_cpu_best_improving(rf_cpu_pool *pool, const rf_cpu_best *b, const rf_cpu_table *t, int64_t **keep,
                                int64_t *nkeep)
{
    *keep = NULL;
    *nkeep = 0;
    const void **data = cpu_alloc(b->ncols, sizeof *data);
    if (!data) return RF_ENOMEM;
    rf_status st = data_of(b, t, data);
    uint8_t *flags = st ? NULL : cpu_alloc(t->nrows, 1);
    if (!st && !flags) st = RF_ENOMEM;
    if (!st) {
        probe_ctx c = {b, data, NULL, flags};
        rf_cpu_parallel_for(pool, t->nrows, cpu_grain(t->nrows, 4096), probe_chunk, &c);
        st = cpu_compact_flags(pool, flags, 1, t->nrows, keep, nkeep);
    }
    free(flags);
    free(data);
    return st;
}

typedef struct store_ctx {
    rf_cpu_best *b;
    const void *const *data;
    const int64_t *row;
} store_ctx;

/* Values of candidates whose key is present (one candidate per key: the
** rows written are distinct). */
static void store_chunk(void *vp, int64_t s, int64_t e, int w)
{
    (void)w;
    store_ctx *c = vp;
    rf_cpu_best *b = c->b;
    int32_t v = b->nk;
    int sz = rf_cpu_kind_size(b->kinds[v]);
    for (int64_t i = s; i < e; i++) {
        int64_t r = c->row[i];
        if (r < 0 || !beats(b, c->data[v], i, r)) continue;
        memcpy((char *)b->cols[v] + r * sz, (const char *)c->data[v] + i * sz, (size_t)sz);
    }
}

rf_status rf_cpu_best_store(rf_cpu_pool *pool, rf_cpu_best *b, const rf_cpu_table *t)
{
    const void **data = cpu_alloc(b->ncols, sizeof *data);
    if (!data) return RF_ENOMEM;
    rf_status st = data_of(b, t, data);
    int64_t n = st ? 0 : t->nrows, *row = st ? NULL : cpu_alloc(n, sizeof *row);
    if (!st && !row) st = RF_ENOMEM;
    if (!st) st = reserve(b, n); /* before the probes: slots do not move after them */
    if (!st) {
        probe_ctx pc = {b, data, row, NULL};
        rf_cpu_parallel_for(pool, n, cpu_grain(n, 4096), probe_chunk, &pc);
        store_ctx sc = {b, data, row};
        rf_cpu_parallel_for(pool, n, cpu_grain(n, 4096), store_chunk, &sc);
        /* new keys, in order (a key repeated among them keeps its best value) */
        uint64_t mask = (uint64_t)b->nslots - 1;
        for (int64_t i = 0; i < n; i++) {
            if (row[i] >= 0) continue;
            int64_t r = find(b, data, i);
            if (r >= 0) {
                if (beats(b, data[b->nk], i, r)) {
                    int sz = rf_cpu_kind_size(b->kinds[b->nk]);
                    memcpy((char *)b->cols[b->nk] + r * sz, (const char *)data[b->nk] + i * sz, (size_t)sz);
                }
                continue;
            }
            r = b->nrows++;
            for (int32_t c = 0; c < b->ncols; c++) {
                int sz = rf_cpu_kind_size(b->kinds[c]);
                memcpy((char *)b->cols[c] + r * sz, (const char *)data[c] + i * sz, (size_t)sz);
            }
            uint64_t s = key_hash(b, data, i) & mask;
            while (b->slots[s]) s = (s + 1) & mask;
            b->slots[s] = (uint64_t)r + 1;
        }
    }
    free(row);
    free(data);
    return st;
}
