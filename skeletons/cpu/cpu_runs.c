/*
** skeletons/cpu/cpu_runs.c: unique and group-by on rows that arrive in key
** order.
**
** Owns: the detection of a non-decreasing key column with short runs of
** equal values (data files are often written in key order, and filters,
** maps, unique and joins keep the order of their left input), and unique
** and group-by that use it without a hash table: equal rows (keys) share
** their value of that column, so they lie in one run, and a run of at most
** RUN_MAX rows is deduplicated by comparing its rows pairwise.
**
** Results are exactly those of the hash-based paths (first occurrences in
** ascending row order, groups numbered by first occurrence). Chunk
** boundaries depend only on n, and a run belongs to the chunk where it
** starts, so nothing depends on the thread count. When no column qualifies
** (checked on the first rows serially, then on all rows in parallel), the
** callers fall back to hashing.
*/
#include "cpu_internal.h"

enum {
    RUN_MAX = 64,      /* longest run deduplicated pairwise */
    PRECHECK = 4096,   /* rows checked serially before a parallel check */
    MAX_TRIES = 2,     /* full-length checks per call at most */
    RUNS_MIN_ROWS = 64 /* below this, hashing is as cheap */
};

typedef struct runs_ctx {
    int32_t nk;
    const rf_cpu_kind *kinds;
    const void *const *data;
    rf_cpu_kind rkind; /* the run column */
    const void *rdata;
    int32_t rcol;      /* its index among the key columns */
    const void *odata; /* two key columns, the other one 64-bit integers: it */
    int64_t n, grain;
    int64_t *counts;  /* per chunk: rows kept (unique) or groups started (group) */
    int64_t *start, *end; /* per chunk: the rows its runs cover */
    uint8_t *bad;     /* per chunk: not sorted, or a run too long */
    uint8_t *interl;  /* per chunk: a group's rows are not adjacent */
    atomic_int fail;
    /* chunk ch writes the first rows of its groups (unique: the kept rows)
    ** to firsts[start[ch] ...]: the i-th of them is at least start[ch] + i,
    ** so chunks never overlap; they are closed up afterwards */
    int64_t *firsts;
    int64_t *gid;      /* group: group of each row, first within its chunk */
    int64_t *off;      /* per chunk: groups before it (after the walk) */
    int64_t *out;      /* closed-up firsts */
} runs_ctx;

/* Rows a and b of one run agree on the run column by construction: only
** the other key columns are compared. */
static inline int rows_eq(const runs_ctx *c, int64_t a, int64_t b)
{
    for (int32_t k = 0; k < c->nk; k++) {
        if (k == c->rcol) continue;
        const void *d = c->data[k];
        switch (c->kinds[k]) {
        case RF_CPU_I64:
            if (((const int64_t *)d)[a] != ((const int64_t *)d)[b]) return 0;
            break;
        case RF_CPU_I32:
        case RF_CPU_U32:
            if (((const uint32_t *)d)[a] != ((const uint32_t *)d)[b]) return 0;
            break;
        case RF_CPU_U8:
            if (((const uint8_t *)d)[a] != ((const uint8_t *)d)[b]) return 0;
            break;
        default: /* floats: -0.0 equals 0.0, NaNs equal each other */
            if (cpu_norm_at(c->kinds[k], d, a) != cpu_norm_at(c->kinds[k], d, b)) return 0;
        }
    }
    return 1;
}

/* Walks the runs that start in [b, e): for each row, its local group within
** the run (new or the one of an earlier equal row), numbered within the chunk.
** One instance per type of the run column, so that the walk, which touches
** every row, reads it without a switch per value. */
#define RUNS_CHUNK(NAME, RV, EQ)                                                                                   \
    static void NAME(runs_ctx *c, int64_t b, int64_t e)                                                           \
    {                                                                                                              \
        int64_t ch = b / c->grain;                                                                                 \
        if (atomic_load_explicit(&c->fail, memory_order_relaxed)) return;                                          \
        while (b > 0 && b < e && RV(b) == RV(b - 1)) b++;                                                          \
        int64_t i = b;                                                                                             \
        int64_t cnt = 0, *out = c->firsts + b;                                                                     \
        int il = 0;                                                                                                \
        int64_t lg[RUN_MAX];                                                                                       \
        uint64_t prev = i > 0 ? RV(i - 1) : 0;                                                                     \
        while (i < e && i < c->n) {                                                                                \
            uint64_t v = RV(i);                                                                                    \
            if (i > 0 && v < prev) {                                                                               \
                c->bad[ch] = 1;                                                                                    \
                atomic_store(&c->fail, 1);                                                                         \
                return;                                                                                            \
            }                                                                                                      \
            /* the run [i, j) */                                                                                   \
            int64_t j = i + 1;                                                                                     \
            while (j < c->n && j - i <= RUN_MAX && RV(j) == v) j++;                                                \
            if (j - i > RUN_MAX) {                                                                                 \
                c->bad[ch] = 1;                                                                                    \
                atomic_store(&c->fail, 1);                                                                         \
                return;                                                                                            \
            }                                                                                                      \
            int64_t ng = 0;                                                                                        \
            for (int64_t r = i; r < j; r++) {                                                                      \
                int64_t found = -1;                                                                                \
                for (int64_t s = i; s < r && found < 0; s++)                                                       \
                    if (EQ(c, r, s)) found = lg[s - i];                                                            \
                if (found >= 0) {                                                                                  \
                    lg[r - i] = found;                                                                             \
                    if (r > i && lg[r - 1 - i] != found) il = 1;                                                   \
                    if (c->gid) c->gid[r] = cnt - ng + found;                                                      \
                } else {                                                                                           \
                    lg[r - i] = ng++;                                                                              \
                    out[cnt] = r;                                                                                  \
                    if (c->gid) c->gid[r] = cnt;                                                                   \
                    cnt++;                                                                                         \
                }                                                                                                  \
            }                                                                                                      \
            prev = v;                                                                                              \
            i = j;                                                                                                 \
        }                                                                                                          \
        c->start[ch] = b;                                                                                          \
        c->end[ch] = i > b ? i : b;                                                                                \
        c->counts[ch] = cnt;                                                                                       \
        c->interl[ch] = (uint8_t)il;                                                                               \
    }

#define RV_I64(i) cpu_norm_i64(((const int64_t *)c->rdata)[i])
#define RV_I32(i) cpu_norm_i32(((const int32_t *)c->rdata)[i])
#define RV_U32(i) ((uint64_t)((const uint32_t *)c->rdata)[i])
#define RV_ANY(i) cpu_norm_at(c->rkind, c->rdata, i)
/* Two key columns, the other one 64-bit: compared directly. */
#define EQ_OTHER_I64(c, a, b) (((const int64_t *)(c)->odata)[a] == ((const int64_t *)(c)->odata)[b])
RUNS_CHUNK(runs_chunk_i64, RV_I64, rows_eq)
RUNS_CHUNK(runs_chunk_i64_i64, RV_I64, EQ_OTHER_I64)
RUNS_CHUNK(runs_chunk_i32, RV_I32, rows_eq)
RUNS_CHUNK(runs_chunk_u32, RV_U32, rows_eq)
RUNS_CHUNK(runs_chunk_any, RV_ANY, rows_eq)

/* One key column: every run is one group (or one kept row), so a run starts
** wherever the value changes; no pairwise comparisons. Rows past e that
** continue the chunk's last run belong to this chunk. */
#define RUNS_ONE(NAME, RV)                                                                                         \
    static void NAME(runs_ctx *c, int64_t b, int64_t e)                                                           \
    {                                                                                                              \
        int64_t ch = b / c->grain;                                                                                 \
        if (atomic_load_explicit(&c->fail, memory_order_relaxed)) return;                                          \
        while (b > 0 && b < e && RV(b) == RV(b - 1)) b++;                                                          \
        int64_t cnt = 0, i = b, *out = c->firsts + b;                                                              \
        uint64_t prev = i > 0 ? RV(i - 1) : 0;                                                                     \
        for (; i < e; i++) {                                                                                       \
            uint64_t v = RV(i);                                                                                    \
            if (i > 0 && v < prev) {                                                                               \
                c->bad[ch] = 1;                                                                                    \
                atomic_store(&c->fail, 1);                                                                         \
                return;                                                                                            \
            }                                                                                                      \
            if (i == 0 || v != prev) out[cnt++] = i;                                                               \
            if (c->gid) c->gid[i] = cnt - 1;                                                                       \
            prev = v;                                                                                              \
        }                                                                                                          \
        if (i > b)                                                                                                 \
            for (; i < c->n && RV(i) == prev; i++)                                                                 \
                if (c->gid) c->gid[i] = cnt - 1;                                                                   \
        c->start[ch] = b;                                                                                          \
        c->end[ch] = i;                                                                                            \
        c->counts[ch] = cnt;                                                                                       \
        c->interl[ch] = 0;                                                                                         \
    }
RUNS_ONE(runs_one_i64, RV_I64)
RUNS_ONE(runs_one_i32, RV_I32)
RUNS_ONE(runs_one_u32, RV_U32)
RUNS_ONE(runs_one_any, RV_ANY)

static void runs_chunk(runs_ctx *c, int64_t b, int64_t e)
{
    if (c->nk == 1) {
        switch (c->rkind) {
        case RF_CPU_I64: runs_one_i64(c, b, e); break;
        case RF_CPU_I32: runs_one_i32(c, b, e); break;
        case RF_CPU_U32: runs_one_u32(c, b, e); break;
        default: runs_one_any(c, b, e); break;
        }
        return;
    }
    if (c->rkind == RF_CPU_I64 && c->odata) {
        runs_chunk_i64_i64(c, b, e);
        return;
    }
    switch (c->rkind) {
    case RF_CPU_I64: runs_chunk_i64(c, b, e); break;
    case RF_CPU_I32: runs_chunk_i32(c, b, e); break;
    case RF_CPU_U32: runs_chunk_u32(c, b, e); break;
    default: runs_chunk_any(c, b, e); break;
    }
}

static void runs_walk(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    runs_chunk(vp, b, e);
}

/* Closes up chunks [b, e)'s first rows and numbers their rows' groups. */
static void runs_fix(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    runs_ctx *c = vp;
    for (int64_t ch = b; ch < e; ch++) {
        int64_t o = c->off[ch];
        if (c->out != c->firsts) memcpy(c->out + o, c->firsts + c->start[ch], (size_t)c->counts[ch] * sizeof(int64_t));
        if (c->gid && o)
            for (int64_t r = c->start[ch]; r < c->end[ch]; r++) c->gid[r] += o;
    }
}

typedef struct label_ctx {
    const int64_t *first; /* ascending first rows of contiguous groups */
    int64_t G, n;
    int64_t *gid;
} label_ctx;

/* gid of rows [b, e) from the groups' first rows */
static void label_rows(void *vp, int64_t b, int64_t e, int w)
{
    (void)w;
    label_ctx *c = vp;
    int64_t lo = 0, hi = c->G - 1; /* the last group starting at or before b */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (c->first[mid] <= b) lo = mid;
        else hi = mid - 1;
    }
    for (int64_t g = lo, r = b; r < e; g++) {
        int64_t end = g + 1 < c->G ? c->first[g + 1] : c->n;
        for (; r < e && r < end; r++) c->gid[r] = g;
    }
}

/* Whether column (kind, data) looks non-decreasing with short runs on its
** first rows. */
static int precheck(rf_cpu_kind kind, const void *data, int64_t n)
{
    int64_t m = n < PRECHECK ? n : PRECHECK, run = 1;
    uint64_t prev = cpu_norm_at(kind, data, 0);
    for (int64_t i = 1; i < m; i++) {
        uint64_t v = cpu_norm_at(kind, data, i);
        if (v < prev) return 0;
        run = v == prev ? run + 1 : 1;
        if (run > RUN_MAX) return 0;
        prev = v;
    }
    return 1;
}

/* Tries the run path over key columns [0, nk): 1 when it applied (outputs
** set), 0 when it did not (nothing allocated), or an error. */
static rf_status runs_try(rf_cpu_pool *pool, int32_t nk, const rf_cpu_kind *kinds, const void *const *data,
                          int64_t n, int group, int64_t **keep, int64_t *nkeep, int64_t **gid, int64_t **first,
                          int *contiguous, int *applied)
{
    *applied = 0;
    if (n < RUNS_MIN_ROWS) return RF_OK;
    int tries = 0;
    for (int32_t k = 0; k < nk && tries < MAX_TRIES; k++) {
        if (!precheck(kinds[k], data[k], n)) continue;
        tries++;
        runs_ctx c;
        memset(&c, 0, sizeof c);
        c.nk = nk;
        c.kinds = kinds;
        c.data = data;
        c.rkind = kinds[k];
        c.rdata = data[k];
        c.rcol = k;
        if (nk == 2 && kinds[1 - k] == RF_CPU_I64) c.odata = data[1 - k];
        c.n = n;
        c.grain = cpu_grain(n, 16384);
        int64_t nch = (n + c.grain - 1) / c.grain;
        atomic_init(&c.fail, 0);
        c.counts = cpu_zalloc(nch + 1, sizeof(int64_t));
        c.start = cpu_zalloc(nch, sizeof(int64_t));
        c.end = cpu_zalloc(nch, sizeof(int64_t));
        c.off = cpu_zalloc(nch, sizeof(int64_t));
        c.bad = cpu_zalloc(nch, 1);
        c.interl = cpu_zalloc(nch, 1);
        c.firsts = cpu_alloc(n, sizeof(int64_t));
        /* one key column: groups are runs, and lazily labelled (below) */
        int lazy = group == 2 && nk == 1;
        if (group && !lazy) c.gid = cpu_alloc(n, sizeof(int64_t));
        rf_status st = RF_OK;
        if (!c.counts || !c.start || !c.end || !c.off || !c.bad || !c.interl || !c.firsts || (group && !lazy && !c.gid)) {
            st = RF_ENOMEM;
            goto next;
        }
        /* one walk: each chunk numbers its own groups; then the chunks'
        ** results are closed up and renumbered in one cheap pass */
        rf_cpu_parallel_for(pool, n, c.grain, runs_walk, &c);
        if (atomic_load(&c.fail)) goto next;
        int il = 0;
        int64_t tot = 0;
        for (int64_t ch = 0; ch < nch; ch++) {
            c.off[ch] = tot;
            tot += c.counts[ch];
            il |= c.interl[ch];
        }
        /* every row a group (kept): firsts is the identity already */
        if (tot == n) {
            c.out = c.firsts;
            c.firsts = NULL;
        } else if (!(c.out = cpu_alloc(tot, sizeof(int64_t)))) {
            st = RF_ENOMEM;
            goto next;
        }
        if (c.firsts || c.gid) {
            if (!c.firsts) c.firsts = c.out; /* runs_fix copies nothing then */
            rf_cpu_parallel_for(pool, nch, 1, runs_fix, &c);
            if (c.firsts == c.out) c.firsts = NULL;
        }
        if (lazy && tot <= CPU_AGG_SMALL_G) {
            /* few groups: the aggregates read the group of each row */
            if (!(c.gid = cpu_alloc(n, sizeof(int64_t)))) {
                free(c.out);
                st = RF_ENOMEM;
                goto next;
            }
            label_ctx lc = {c.out, tot, n, c.gid};
            rf_cpu_parallel_for(pool, n, cpu_grain(n, 16384), label_rows, &lc);
        }
        if (!group) {
            *keep = c.out;
        } else {
            *gid = c.gid;
            *first = c.out;
            *contiguous = !il;
            c.gid = NULL;
        }
        *nkeep = tot;
        *applied = 1;
    next:
        free(c.counts);
        free(c.start);
        free(c.end);
        free(c.off);
        free(c.bad);
        free(c.interl);
        free(c.firsts);
        free(c.gid);
        if (st || *applied) return st;
    }
    return RF_OK;
}

rf_status cpu_runs_unique(rf_cpu_pool *pool, int32_t nk, const rf_cpu_kind *kinds, const void *const *data,
                          int64_t n, int64_t **keep, int64_t *nkeep, int *applied)
{
    return runs_try(pool, nk, kinds, data, n, 0, keep, nkeep, NULL, NULL, NULL, applied);
}

rf_status cpu_runs_group(rf_cpu_pool *pool, int32_t nk, const rf_cpu_kind *kinds, const void *const *data,
                         int64_t n, int lazy, int64_t **gid, int64_t **first, int64_t *ngroups, int *contiguous,
                         int *applied)
{
    return runs_try(pool, nk, kinds, data, n, lazy ? 2 : 1, NULL, ngroups, gid, first, contiguous, applied);
}
