/*
** skeletons/cpu/cpu_internal.h: what the files of rf_cpu share privately.
**
** Owns: the normalized key encoding (every multi-column key becomes a short
** vector of 64-bit words whose equality is key equality and whose unsigned
** lexicographic order is key order), the one hash table that joins, unique,
** group-by, difference and row sets are all built on, the parallel radix
** sort of (key, value) pairs, and small parallel helpers.
*/
#ifndef RF_CPU_INTERNAL_H
#define RF_CPU_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rf_cpu.h"
#include "rf_mix.h"

/* ---- small helpers -------------------------------------------------- */

static inline int cpu_bitlen(uint64_t x) { return x ? 64 - __builtin_clzll(x) : 0; }

static inline int64_t cpu_pow2_at_least(int64_t x)
{
    int64_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

/* malloc of n elements of size sz with overflow check; n == 0 gives a
** 1-byte block so that callers can tell success from failure. */
void *cpu_alloc(int64_t n, size_t sz);
void *cpu_zalloc(int64_t n, size_t sz);

/* Chunking that depends only on n, so that results assembled chunk by chunk
** are the same for every thread count. */
int64_t cpu_grain(int64_t n, int64_t min_grain);

/* Indices i < n with flags[i] == want, ascending, into *out (*m entries). */
rf_status cpu_compact_flags(rf_cpu_pool *pool, const uint8_t *flags, uint8_t want, int64_t n, int64_t **out,
                            int64_t *m);

/* ---- normalized values ---------------------------------------------- */
/* Order-preserving maps to uint64: unsigned order of the image is the value
** order of rf_value.h, and equal images mean equal values (-0.0 -> 0.0, all
** NaNs -> one image, above +inf). */

static inline uint64_t cpu_norm_i64(int64_t x) { return (uint64_t)x ^ (UINT64_C(1) << 63); }
static inline uint64_t cpu_norm_i32(int32_t x) { return (uint64_t)((uint32_t)x ^ UINT32_C(0x80000000)); }
static inline uint64_t cpu_norm_f64(double x) { return rf_val_float_key(x); }
/* The parts of a 128-bit value: the high word signed, the low word unsigned. */
static inline uint64_t cpu_norm_i128_hi(rf_dec128 x) { return cpu_norm_i64((int64_t)(x >> 64)); }
static inline uint64_t cpu_norm_i128_lo(rf_dec128 x) { return (uint64_t)x; }
static inline uint64_t cpu_norm_at(rf_cpu_kind k, const void *data, int64_t i)
{
    switch (k) {
    case RF_CPU_I128_HI: return cpu_norm_i128_hi(((const rf_dec128 *)data)[i]);
    case RF_CPU_I128_LO: return cpu_norm_i128_lo(((const rf_dec128 *)data)[i]);
    case RF_CPU_I64: return cpu_norm_i64(((const int64_t *)data)[i]);
    case RF_CPU_F64: return cpu_norm_f64(((const double *)data)[i]);
    case RF_CPU_I32: return cpu_norm_i32(((const int32_t *)data)[i]);
    case RF_CPU_U32: return ((const uint32_t *)data)[i];
    default: return ((const uint8_t *)data)[i];
    }
}

/* ---- key encoding --------------------------------------------------- */
/* Each key column c is stored as e = (v - lo) (ascending) or (hi - v)
** (descending) of its normalized value v in bits(hi - lo) bits; columns are
** packed most significant first into words of at most 64 bits. The first
** column also gets +1, so that word 0 of a real key is never 0 and 0 can
** mark an empty hash slot; when that would not fit (a first column spanning
** all 2^64 values) word 0 is a constant 1 instead. Range compression makes
** typical keys one word (two 12-bit node ids: 25 bits). */

typedef struct cpu_kcol {
    rf_cpu_kind kind;
    uint8_t desc;
    int32_t word, shift, bits;
    uint64_t lo, hi; /* the normalized range that can be encoded */
    uint64_t add;
} cpu_kcol;

typedef struct cpu_enc {
    int32_t nk, nw;
    int32_t lead; /* word 0 is a constant 1 */
    cpu_kcol *k;  /* [nk] */
    int32_t *wbits; /* [nw] bits used by each word (values < 2^wbits) */
} cpu_enc;

/* Per-column normalized minimum and maximum over rows [0, n) (n > 0). */
void cpu_ranges(rf_cpu_pool *pool, int32_t nk, const rf_cpu_kind *kinds, const void *const *data, int64_t n,
                uint64_t *lo, uint64_t *hi);
/* Lays out an encoding for ranges [lo[c], hi[c]]; desc may be NULL. */
rf_status cpu_enc_init(cpu_enc *e, int32_t nk, const rf_cpu_kind *kinds, const uint8_t *desc, const uint64_t *lo,
                       const uint64_t *hi);
void cpu_enc_free(cpu_enc *e);
/* Encodes rows (rows ? rows[i] : i) for i in [begin, end) into out: all nw
** words per row (word < 0), or only word `word` (one word per row). When ok
** is non-NULL, ok[i - begin] is cleared for rows whose values fall outside
** the encoding's ranges (their words are then meaningless); the caller sets
** ok to 1 first. */
void cpu_encode(const cpu_enc *e, const void *const *data, const int64_t *rows, int64_t begin, int64_t end,
                int32_t word, uint64_t *out, uint8_t *ok);

static inline uint64_t cpu_hash(const uint64_t *key, int32_t nw)
{
    uint64_t h = rf_mix64(key[0]);
    for (int32_t w = 1; w < nw; w++) h = rf_mix64(h ^ key[w]);
    return h;
}

/* ---- the hash table ------------------------------------------------- */
/* Open addressing with linear probing, split into 2^pbits partitions by the
** top bits of the hash so that a partitioned build is parallel (one thread
** per partition, rows in input order: deterministic) and each partition's
** slots stay cache-sized. A slot is nw key words, plus one payload word when
** the table maps keys to group ids; word 0 == 0 marks an empty slot. */

typedef struct cpu_htpart {
    uint64_t *slots;
    int64_t cap; /* power of two */
    int64_t count;
} cpu_htpart;

typedef struct cpu_ht {
    int32_t nw, stride; /* stride = nw + payload */
    int32_t payload;
    int32_t pbits;
    int64_t nparts;
    cpu_htpart *parts;
    int64_t count; /* distinct keys */
    /* Direct mode, for key sets without payload whose one-word keys are
    ** below 2^dbits: a bitmap indexed by the key itself (no hashing, no
    ** collisions, a bit per possible key). Partition p then owns the keys
    ** whose top pbits bits (of dbits) are p, a word-aligned slice. */
    int32_t direct, dbits;
    uint64_t *bitmap;
    int64_t *pcount; /* direct: keys per partition */
} cpu_ht;

/* The partition of a key with hash h. */
static inline int64_t cpu_part_of(const cpu_ht *ht, uint64_t h)
{
    return ht->pbits ? (int64_t)(h >> (64 - ht->pbits)) : 0;
}

static inline int cpu_key_eq(const uint64_t *a, const uint64_t *b, int32_t nw)
{
    if (a[0] != b[0]) return 0;
    for (int32_t w = 1; w < nw; w++)
        if (a[w] != b[w]) return 0;
    return 1;
}

/* The slot holding key, or NULL. In direct mode, key itself when present
** (there is no payload to read). */
static inline const uint64_t *cpu_ht_find(const cpu_ht *ht, const uint64_t *key, uint64_t h)
{
    if (ht->direct) return ((ht->bitmap[key[0] >> 6] >> (key[0] & 63)) & 1) ? key : NULL;
    const cpu_htpart *p = &ht->parts[cpu_part_of(ht, h)];
    uint64_t mask = (uint64_t)p->cap - 1, i = h & mask;
    for (;;) {
        const uint64_t *s = p->slots + i * (uint64_t)ht->stride;
        if (s[0] == 0) return NULL;
        if (cpu_key_eq(s, key, ht->nw)) return s;
        i = (i + 1) & mask;
    }
}

/* An empty table of 2^pbits partitions, each with room for about
** per_part keys before it grows. */
rf_status cpu_ht_init(cpu_ht *ht, int32_t nw, int32_t payload, int32_t pbits, int64_t per_part);
/* An empty direct-mode key set for one-word keys below 2^dbits (6 <= dbits
** <= 40), 2^pbits partitions (pbits <= dbits - 6). */
rf_status cpu_ht_init_direct(cpu_ht *ht, int32_t dbits, int32_t pbits);
void cpu_ht_free(cpu_ht *ht);
/* The partition count a table of about n keys should use. */
int32_t cpu_pick_pbits(int64_t n);

/* Inserts the rows [0, n) of data (encoded by e) into ht, partition by
** partition in parallel. isnew[r] (optional, zeroed by the caller) is set for
** the first occurrence of each key that was not in the table; when the table
** has a payload, a new key's payload is its row and first[r] (optional)
** receives the payload of row r's key. Partitions grow as needed; on
** RF_ENOMEM the table holds an unspecified subset of the keys. When oor is
** non-NULL the rows are first checked against e's ranges: if any is outside,
** *oor = 1 and nothing is inserted. */
rf_status cpu_ht_insert_rows(rf_cpu_pool *pool, cpu_ht *ht, const cpu_enc *e, const void *const *data,
                             int64_t n, uint8_t *isnew, int64_t *first, int *oor);

/* Builds a table on rows [0, n) (n > 0). *first_row gets the first row of
** each distinct key (ascending, *ngroups entries). With ids, the table's
** payload maps each key to its group id, numbered by first occurrence, and
** *gid_of_row (when gid_of_row is non-NULL) gets the group of each row;
** without, the table holds keys only (smaller; gid_of_row must be NULL).
** Picks a serial build, a probe of the first rows' table (few distinct
** keys), or a partitioned build; the result is the same. */
rf_status cpu_ht_build(rf_cpu_pool *pool, cpu_ht *ht, const cpu_enc *e, const void *const *data, int64_t n,
                       int ids, int64_t **gid_of_row, int64_t **first_row, int64_t *ngroups);

/* For rows [0, n) of data: gid[i] = the payload of the row's key or -1 if
** absent (gid optional), found[i] = 1 / 0 (optional). check: rows may hold
** values outside e's ranges (they are absent). */
void cpu_ht_probe(rf_cpu_pool *pool, const cpu_ht *ht, const cpu_enc *e, const void *const *data, int64_t n,
                  int check, int64_t *gid, uint8_t *found);
/* The same as lists of hits, for probes where most rows miss: rows [0, n)
** are probed in chunks of grain rows (a multiple of the probe block), and
** chunk c writes the rows that match, ascending, to hit_row[c * grain ...],
** their payloads to hit_gid[c * grain ...] and their number to nhit[c].
** Only the hits are written, so [hit_row and hit_gid] may be large
** allocations that are never touched beyond them. Rows may hold values
** outside e's ranges (they miss). */
rf_status cpu_ht_probe_hits(rf_cpu_pool *pool, const cpu_ht *ht, const cpu_enc *e, const void *const *data,
                            int64_t n, int64_t grain, int64_t *hit_row, int64_t *hit_gid, int64_t *nhit);

/* ---- dense key indexes (cpu_dense.c) ------------------------------- */
/* For one-word keys below a bound not much larger than the row count: a
** bitmap of the keys present, the rank of each word's first key, and a
** group id per rank (groups numbered by first occurrence, as in
** cpu_ht_build with ids). */
typedef struct cpu_dense {
    int64_t nbits;    /* keys are < nbits */
    uint64_t *bits;
    uint32_t *base;   /* [nbits / 64] keys present before each word */
    int64_t *gid;     /* [ndistinct] group of each present key, by rank */
    int64_t ndistinct;
} cpu_dense;

/* Whether an index on n rows encoded by e, probed by nprobe rows, may be
** dense (one word, a small range of values). */
int cpu_dense_fits(const cpu_enc *e, int64_t n, int64_t nprobe);
/* As cpu_ht_build with ids, for an encoding that cpu_dense_fits. */
rf_status cpu_dense_build(rf_cpu_pool *pool, cpu_dense *d, const cpu_enc *e, const void *const *data, int64_t n,
                          int64_t **gid_of_row, int64_t **first_row, int64_t *ngroups);
void cpu_dense_free(cpu_dense *d);
/* As cpu_ht_probe with check (rows may be outside e's ranges). */
void cpu_dense_probe(rf_cpu_pool *pool, const cpu_dense *d, const cpu_enc *e, const void *const *data, int64_t n,
                     int64_t *gid, uint8_t *found);
/* Unique over rows [0, n) encoded by e (cpu_dense_fits): the first row of
** each key, ascending, as cpu_ht_build without ids gives them. */
rf_status cpu_dense_unique(rf_cpu_pool *pool, const cpu_enc *e, const void *const *data, int64_t n, int64_t **keep,
                           int64_t *nkeep);
/* Group-by over keys below 2^16 (and not many more than the rows): group
** ids by first occurrence and first rows, as cpu_ht_build with ids. */
int cpu_dense_group_fits(const cpu_enc *e, int64_t n);
rf_status cpu_dense_group(rf_cpu_pool *pool, const cpu_enc *e, const void *const *data, int64_t n,
                          int64_t **gid_of_row, int64_t **first_row, int64_t *ngroups);
/* As cpu_ht_probe_hits. */
void cpu_dense_probe_hits(rf_cpu_pool *pool, const cpu_dense *d, const cpu_enc *e, const void *const *data,
                          int64_t n, int64_t grain, int64_t *hit_row, int64_t *hit_gid, int64_t *nhit);

/* ---- rows in key order (cpu_runs.c) -------------------------------- */
/* Unique over columns [0, nk) / group-by on them without hashing, when one
** of the columns is non-decreasing with short runs of equal values. Results
** are those of the hash paths. *applied = 0 (and nothing is allocated) when
** no column qualifies. Group: *contiguous = 1 when every group's rows are
** adjacent (then rows are ordered by group). */
rf_status cpu_runs_unique(rf_cpu_pool *pool, int32_t nk, const rf_cpu_kind *kinds, const void *const *data,
                          int64_t n, int64_t **keep, int64_t *nkeep, int *applied);
/* lazy: one key column and more than CPU_AGG_SMALL_G groups leave *gid NULL
** (the groups are contiguous; aggregates over them read offsets only). */
rf_status cpu_runs_group(rf_cpu_pool *pool, int32_t nk, const rf_cpu_kind *kinds, const void *const *data,
                         int64_t n, int lazy, int64_t **gid, int64_t **first, int64_t *ngroups, int *contiguous,
                         int *applied);

/* Aggregates with at most this many groups run over row blocks and read
** group_of_row; with more, over the rows listed by group. */
enum { CPU_AGG_SMALL_G = 4096 };

/* ---- sorting -------------------------------------------------------- */

typedef struct cpu_kv {
    uint64_t k;
    int64_t v;
} cpu_kv;

/* Stable sort of a[0..n) by the low `bits` bits of k (the other bits must be
** 0), using tmp (n entries) as scratch; *sorted is a or tmp. */
rf_status cpu_radix_sort(rf_cpu_pool *pool, cpu_kv *a, cpu_kv *tmp, int64_t n, int bits, cpu_kv **sorted);

/* Rows i < n with ids[i] >= 0, ordered by (ids[i], i), into *order (*m
** entries), and offsets[g] (ngroups + 1 entries): group g's rows are
** order[offsets[g] .. offsets[g+1]). */
rf_status cpu_csr(rf_cpu_pool *pool, const int64_t *ids, int64_t n, int64_t ngroups, int64_t **order,
                  int64_t **offsets, int64_t *m);

/* dst[i] = src[idx[i]] for i < n, into caller-provided storage (dst may
** point into a larger column, as row sets append). */
void cpu_gather_into(rf_cpu_pool *pool, rf_cpu_kind kind, const void *src, const int64_t *idx, int64_t n, void *dst);

/* The key parts of the columns cols[0..nk) of t, after checking them: the
** kind and data of each (a 128-bit column is two parts, RF_CPU_I128_HI then
** _LO, over its data), into arrays of CPU_KEY_PARTS(nk) entries; *np gets
** their number. desc (may be NULL: pdesc untouched) is each column's
** direction, pdesc each part's. Everything that hashes, compares or sorts
** keys works on parts. */
#define CPU_KEY_PARTS(nk) (2 * (int64_t)(nk))
rf_status cpu_table_keys(const rf_cpu_table *t, const int32_t *cols, int32_t nk, const uint8_t *desc,
                         rf_cpu_kind *kinds, const void **data, uint8_t *pdesc, int32_t *np);
/* The key parts of column kinds kinds[0..nk) (row sets: every column a key),
** as cpu_table_keys gives them; data[i] is column i's data (data and pdata
** may both be NULL: the kinds only). Returns the number of parts. */
int32_t cpu_kinds_parts(const rf_cpu_kind *kinds, const void *const *data, int32_t nk, rf_cpu_kind *pkinds,
                        const void **pdata);

#endif
