/*
** skeletons/cpu/rf_cpu.h: the relational primitives of the CPU backend.
**
** Owns: the thread pool, and the data-movement primitives that the runtime
** builds query plans from: gather, stable multi-key sort and top-k, unique,
** group-by with aggregate kernels, equi-joins (inner, semi, anti), set
** difference and union, and a growing row set for semi-naive recursion.
** Expression evaluation is not here.
**
** Conventions (all functions):
**  - Input tables and columns are borrowed and never modified.
**  - Every output array is freshly malloc'ed and owned by the caller, who
**    frees it with free(); output tables are freed with rf_cpu_table_free.
**    Outputs are left NULL / 0 when a function fails.
**  - Every function returns RF_OK, RF_ENOMEM when memory ran out (nothing
**    is ever aborted), or RF_EINTERNAL for invalid arguments (mismatched
**    key kinds, negative counts, out-of-range column numbers).
**  - Row order of every result is fully determined by the inputs: the same
**    inputs give byte-identical outputs whatever the number of threads.
**  - Equality and order of values follow rf_value.h: floats use the total
**    order -inf < ... < inf < nan with -0.0 == 0.0 and all NaNs equal;
**    string codes compare as unsigned integers (the dictionary is sorted).
**  - Counts and row indices are int64_t. pool may be NULL (one thread).
**  - Nothing here prints, and the library keeps no global state: all state
**    lives in pools and sets, which are safe to use from one thread at a
**    time each (a pool that is busy runs nested or concurrent work inline).
*/
#ifndef RF_CPU_H
#define RF_CPU_H

#include <stdint.h>

#include "rf_common.h"
#include "rf_value.h"

/* ---- data ----------------------------------------------------------- */

/* Storage kinds: i64 int and decimal; f64 float; i32 date; u32 string codes;
** u8 boolean; i128 the wide decimal (rf_dec128, 16 bytes: totals of
** decimals). RF_CPU_I128_HI and _LO are not columns' kinds: they are the two
** 64-bit parts a 128-bit key column is compared by (cpu_keys.c), the high
** word signed, then the low word unsigned, which is the order of the values. */
typedef enum rf_cpu_kind {
    RF_CPU_I64,
    RF_CPU_F64,
    RF_CPU_I32,
    RF_CPU_U32,
    RF_CPU_U8,
    RF_CPU_I128,
    RF_CPU_I128_HI,
    RF_CPU_I128_LO
} rf_cpu_kind;

typedef struct rf_cpu_col {
    rf_cpu_kind kind;
    void *data;
} rf_cpu_col;

/* Columns of equal length. Tables passed in are borrowed; tables returned
** own their cols array and every data array (free with rf_cpu_table_free). */
typedef struct rf_cpu_table {
    int64_t nrows;
    int32_t ncols;
    rf_cpu_col *cols;
} rf_cpu_table;

/* Bytes per value of a kind: 8, 8, 4, 4, 1, 16. */
int rf_cpu_kind_size(rf_cpu_kind k);
/* Frees the data of every column and the cols array, and zeroes *t. */
void rf_cpu_table_free(rf_cpu_table *t);
/* An empty table with the given kinds and capacity for nrows rows; the rows
** are uninitialized and t->nrows is set to nrows. */
rf_status rf_cpu_table_alloc(int32_t ncols, const rf_cpu_kind *kinds, int64_t nrows, rf_cpu_table *t);

/* ---- thread pool ---------------------------------------------------- */

typedef struct rf_cpu_pool rf_cpu_pool;

/* threads >= 1 is the total number of threads including the caller's;
** threads - 1 workers are started, or as many as the system starts (a
** thread it cannot start now is left out: rf_cpu_pool_threads says how many
** there are). */
rf_status rf_cpu_pool_new(int threads, rf_cpu_pool **out);
void rf_cpu_pool_free(rf_cpu_pool *pool);
int rf_cpu_pool_threads(const rf_cpu_pool *pool); /* 1 for NULL */

/* Calls fn on consecutive chunks [begin, end) of [0, n) of at most grain
** items (grain <= 0 picks one), from the caller and the workers, and returns
** when all are done. worker is in [0, threads) and identifies the calling
** thread for per-thread scratch. Which thread gets which chunk varies; chunk
** boundaries depend only on n and grain. Runs inline when the pool is NULL,
** has one thread, or is already busy (nested calls). */
void rf_cpu_parallel_for(rf_cpu_pool *pool, int64_t n, int64_t grain,
                         void (*fn)(void *ctx, int64_t begin, int64_t end, int worker), void *ctx);

/* ---- gather --------------------------------------------------------- */

/* out->data[i] = col->data[idx[i]] for i < n; out->kind = col->kind and
** out->data is allocated. Every idx[i] must be a valid row. */
rf_status rf_cpu_gather(rf_cpu_pool *pool, const rf_cpu_col *col, const int64_t *idx, int64_t n,
                        rf_cpu_col *out);
/* Gathers every column of t: out has n rows (owned). */
rf_status rf_cpu_gather_table(rf_cpu_pool *pool, const rf_cpu_table *t, const int64_t *idx, int64_t n,
                              rf_cpu_table *out);

/* ---- order ---------------------------------------------------------- */

/* A stable sort: *perm (nrows entries) lists the rows of t ordered by the
** key columns keycols[0..nkeys) (column numbers of t), each ascending or,
** where desc[i] != 0, descending (desc may be NULL: all ascending); rows
** with equal keys keep their input order. nkeys = 0 gives the identity.
** Parallel LSD radix sort on range-compressed keys. */
rf_status rf_cpu_sort_perm(rf_cpu_pool *pool, const rf_cpu_table *t, const int32_t *keycols,
                           const uint8_t *desc, int32_t nkeys, int64_t **perm);

/* The first min(k, nrows) rows of the order rf_cpu_sort_perm would give, in
** that order, in *perm (*n entries). A bounded heap per chunk when k is
** small, a full sort otherwise. */
rf_status rf_cpu_top_k(rf_cpu_pool *pool, const rf_cpu_table *t, const int32_t *keycols,
                       const uint8_t *desc, int32_t nkeys, int64_t k, int64_t **perm, int64_t *n);

/* ---- distinct rows, groups ------------------------------------------ */

/* One row per distinct row of t (all columns): the first occurrence of each,
** in ascending row order, in *keep (*nkeep entries). */
rf_status rf_cpu_unique(rf_cpu_pool *pool, const rf_cpu_table *t, int64_t **keep, int64_t *nkeep);

/* A grouping of nrows rows; every array is owned (rf_cpu_groups_free). */
typedef struct rf_cpu_groups {
    int64_t nrows;
    int64_t ngroups;
    int64_t *group_of_row; /* [nrows]: 0..ngroups-1, numbered by first occurrence */
    int64_t *first_row;    /* [ngroups]: the first row of each group (ascending) */
    /* Rows ordered by group, ascending within a group: group g has rows
    ** order[offsets[g] .. offsets[g+1]). NULL until rf_cpu_groups_order;
    ** the aggregates build them on demand when there are many groups. */
    int64_t *order;
    int64_t *offsets; /* [ngroups + 1] */
    /* Set by rf_cpu_group when every group's rows are adjacent (rows already
    ** ordered by group, as in input sorted by the keys): offsets is then
    ** filled and order may stay NULL, meaning the identity, until
    ** rf_cpu_groups_order fills it. */
    int contiguous;
} rf_cpu_groups;

/* Groups the rows of t by keycols[0..nkeys). nkeys = 0 puts every row in
** one group (no group when t has no rows). */
rf_status rf_cpu_group(rf_cpu_pool *pool, const rf_cpu_table *t, const int32_t *keycols, int32_t nkeys,
                       rf_cpu_groups *g);
/* As rf_cpu_group, for a grouping that only the rf_cpu_agg_* functions read:
** group_of_row may stay NULL when the groups are contiguous and many (the
** aggregates then read offsets), which saves labelling every row. */
rf_status rf_cpu_group_for_agg(rf_cpu_pool *pool, const rf_cpu_table *t, const int32_t *keycols, int32_t nkeys,
                               rf_cpu_groups *g);
/* Fills g->order and g->offsets if they are NULL. */
rf_status rf_cpu_groups_order(rf_cpu_pool *pool, rf_cpu_groups *g);
void rf_cpu_groups_free(rf_cpu_groups *g);

/* Aggregate kernels: one value per group (out has g->ngroups entries).
** Every group has at least one row, so min and max are always defined.
** Integer sums are exact (128-bit; decimals are int64 scaled by 10^6, so
** the sum of decimals is an rf_dec128 at the same scale). Float sums are
** deterministic: with few groups they add fixed row blocks in order, with
** many groups each group adds its rows in row order. Min and max use the
** total order above; among equal floats (-0.0 and 0.0, or NaNs) they return
** the least (min) or greatest (max) in IEEE 754 totalOrder (-0.0 < 0.0), so
** the result does not depend on the order of evaluation.
** g may gain its order/offsets arrays (hence not const). */
rf_status rf_cpu_agg_count(rf_cpu_pool *pool, rf_cpu_groups *g, int64_t **out);
rf_status rf_cpu_agg_sum_i64(rf_cpu_pool *pool, rf_cpu_groups *g, const int64_t *vals, rf_dec128 **out);
rf_status rf_cpu_agg_sum_f64(rf_cpu_pool *pool, rf_cpu_groups *g, const double *vals, double **out);
/* rf_cpu_agg_sum_i64 of ncols columns at once (out[c] for vals[c]): with few
** groups, one pass reads the group ids once for all of them. */
rf_status rf_cpu_agg_sums_i64(rf_cpu_pool *pool, rf_cpu_groups *g, int32_t ncols, const int64_t *const *vals,
                              rf_dec128 **out);
/* The min and the max of 64-bit integers per group at once, into mn and mx
** (ngroups entries each, provided by the caller). */
rf_status rf_cpu_agg_minmax_i64(rf_cpu_pool *pool, rf_cpu_groups *g, const int64_t *vals, int64_t *mn, int64_t *mx);
/* The exact sums of 128-bit values (wide decimals) per group; a group whose
** sum leaves [RF_DEC128_MIN, RF_DEC128_MAX] has RF_CPU_I128_OUT as its sum
** (every such group: the caller names the least key), and *bad_group is the
** first such (-1 when none). Only the sum is checked: partial sums beyond
** the range on the way are exact. */
#define RF_CPU_I128_OUT (RF_DEC128_MIN - 1) /* the least 128-bit value: no sum in range */
rf_status rf_cpu_agg_sum_i128(rf_cpu_pool *pool, rf_cpu_groups *g, const rf_dec128 *vals, rf_dec128 **out,
                              int64_t *bad_group);
/* vals of any kind; out->kind = vals->kind and out->data is allocated. */
rf_status rf_cpu_agg_min(rf_cpu_pool *pool, rf_cpu_groups *g, const rf_cpu_col *vals, rf_cpu_col *out);
rf_status rf_cpu_agg_max(rf_cpu_pool *pool, rf_cpu_groups *g, const rf_cpu_col *vals, rf_cpu_col *out);

/* ---- joins ---------------------------------------------------------- */
/* Key columns lkeys[i] of left and rkeys[i] of right must have equal kinds.
** The hash table is built on the smaller side. */

/* Every matching pair (left row lidx[j], right row ridx[j]), j < *n, ordered
** by left row, then right row. nkeys = 0 is the cross product. */
rf_status rf_cpu_hash_join(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                           const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys,
                           int64_t **lidx, int64_t **ridx, int64_t *n);
/* A join's right side prepared once: its key columns indexed (hash table or
** dense index) and its rows listed by key, for a right side that many left
** sides probe (a relation that never changes, joined every round of a
** recursion: building on the small left side each round and scanning the
** big right one made each round cost the right side's size). */
typedef struct rf_cpu_join_side rf_cpu_join_side;
rf_status rf_cpu_join_side_new(rf_cpu_pool *pool, const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys,
                               rf_cpu_join_side **out);
void rf_cpu_join_side_free(rf_cpu_join_side *s);
/* The most right rows one key of s matches. */
int64_t rf_cpu_join_side_most(const rf_cpu_join_side *s);
/* Whether s was prepared on key columns rkeys[0..nkeys). */
int rf_cpu_join_side_keys(const rf_cpu_join_side *s, const int32_t *rkeys, int32_t nkeys);
/* rf_cpu_hash_join of left with the right side s was prepared from (right
** itself, unchanged since): the same pairs in the same order. */
rf_status rf_cpu_hash_join_side(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                                const rf_cpu_table *right, const rf_cpu_join_side *s, int64_t **lidx,
                                int64_t **ridx, int64_t *n);
/* rf_cpu_anti_join of left against the right side s was prepared from: the
** left rows without a match, ascending. */
rf_status rf_cpu_anti_join_side(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                                const rf_cpu_table *right, const rf_cpu_join_side *s, int64_t **keep,
                                int64_t *nkeep);
/* The same pairs in parts, for a caller that consumes them as they come
** (a recursion's candidates, deduplicated part by part: all of a round's
** pairs at once were most of its memory). Prepared as rf_cpu_hash_join
** prepares (s NULL), or on a side s prepared from right (rkeys, nkeys then
** unused); then each rf_cpu_join_parts_next gives the pairs of the next
** run of left rows, in rf_cpu_hash_join's order, at most max_pairs of them
** (at least 1): whole chunks of left rows (ln / 4096 of them, at least
** 1024) where they fit, a chunk with more pairs in pieces on the caller's
** thread (so does a left side of at most 16384 rows); *n = 0 when all were
** given. The tables and s must stay unchanged until rf_cpu_join_parts_free. */
typedef struct rf_cpu_join_parts rf_cpu_join_parts;
rf_status rf_cpu_join_parts_new(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                                const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys,
                                const rf_cpu_join_side *s, rf_cpu_join_parts **out);
/* Every part's pairs together. */
int64_t rf_cpu_join_parts_total(const rf_cpu_join_parts *p);
rf_status rf_cpu_join_parts_next(rf_cpu_pool *pool, rf_cpu_join_parts *p, int64_t max_pairs, int64_t **lidx,
                                 int64_t **ridx, int64_t *n);
void rf_cpu_join_parts_free(rf_cpu_join_parts *p);
/* The same join delivered as columns: out (owned) has the columns
** lcols[0..nl) of left followed by rcols[0..nr) of right, one row per
** matching pair in the order above. Cheaper than rf_cpu_hash_join and
** gathers, as the index pairs are never materialized. */
rf_status rf_cpu_join_project(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                              const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys, const int32_t *lcols,
                              int32_t nl, const int32_t *rcols, int32_t nr, rf_cpu_table *out);
/* The left rows that have (semi) or have not (anti) a match on the right, in
** ascending order. With nkeys = 0, a match is any right row. */
rf_status rf_cpu_semi_join(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                           const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys,
                           int64_t **keep, int64_t *nkeep);
rf_status rf_cpu_anti_join(rf_cpu_pool *pool, const rf_cpu_table *left, const int32_t *lkeys,
                           const rf_cpu_table *right, const int32_t *rkeys, int32_t nkeys,
                           int64_t **keep, int64_t *nkeep);

/* ---- set operations (all columns; kinds of a and b must match) -------- */

/* The rows of a that are not rows of b, in ascending order. */
rf_status rf_cpu_difference(rf_cpu_pool *pool, const rf_cpu_table *a, const rf_cpu_table *b,
                            int64_t **keep, int64_t *nkeep);
/* out (owned) = the rows of a in order, then the rows of b that are not in
** a, in order. With a and b duplicate-free, out is their set union. */
rf_status rf_cpu_union(rf_cpu_pool *pool, const rf_cpu_table *a, const rf_cpu_table *b, rf_cpu_table *out);

/* ---- growing row sets (semi-naive recursion) ------------------------ */
/* A set of distinct rows that stores its rows in insertion order and keeps
** a hash index on them, so that "new facts = candidates - known; known +=
** new facts" costs time in the number of candidates, not in the size of the
** set. Inserting unions, deduplicates and differences in one pass. */

typedef struct rf_cpu_set rf_cpu_set;

rf_status rf_cpu_set_new(int32_t ncols, const rf_cpu_kind *kinds, rf_cpu_set **out);
void rf_cpu_set_free(rf_cpu_set *s);
int64_t rf_cpu_set_size(const rf_cpu_set *s);
/* A borrowed view of the rows, in insertion order; valid until the next
** insert or free. view->cols is owned by the set. */
void rf_cpu_set_view(const rf_cpu_set *s, rf_cpu_table *view);
/* A borrowed view of the rows from row `begin` on (0 <= begin <= size),
** e.g. the rows the last insert added (the delta of semi-naive evaluation)
** without copying them; cols is caller storage for ncols columns. Valid
** until the next insert or free. */
void rf_cpu_set_view_from(const rf_cpu_set *s, int64_t begin, rf_cpu_col *cols, rf_cpu_table *view);
/* Inserts the rows of t (kinds equal to the set's) that are not yet in the
** set; *new_idx lists the inserted rows of t (the first occurrence of each
** new distinct row) in ascending order (*nnew entries). new_idx may be
** NULL. On RF_ENOMEM the set is unchanged, unless memory ran out in the
** middle of the insert: then the set is unusable (every later call returns
** RF_ENOMEM) and can only be freed. */
rf_status rf_cpu_set_insert(rf_cpu_pool *pool, rf_cpu_set *s, const rf_cpu_table *t, int64_t **new_idx,
                            int64_t *nnew);
/* The rows of t that are (negate = 0) or are not (negate = 1) in the set,
** in ascending order. */
rf_status rf_cpu_set_probe(rf_cpu_pool *pool, const rf_cpu_set *s, const rf_cpu_table *t, int negate,
                           int64_t **keep, int64_t *nkeep);

#endif
