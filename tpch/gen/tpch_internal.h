/*
** tpch/gen/tpch_internal.h: internals shared by the TPC-H generator's files.
**
** Owns: dbgen's random number generator (the Park-Miller "minimal standard"
** generator, one stream per column, each with a fixed number of draws per
** row so that any row can be reached by jumping ahead), the distributions
** parsed from the embedded dists.dss, the 300 MiB text pool that comments
** are cut from, and the per-table row generators. Nothing here is public.
*/
#ifndef RF_TPCH_INTERNAL_H
#define RF_TPCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "rf_common.h"

/* ---- random numbers ------------------------------------------------ */

#define RF_TPCH_RNG_M 2147483647 /* 2^31 - 1 */
#define RF_TPCH_RNG_A 16807

static inline int64_t rf_tpch_rng_next(int64_t s)
{
    /* s * A < 2^46; folding the bits above 31 back in is the mod 2^31-1. */
    uint64_t x = (uint64_t)s * RF_TPCH_RNG_A;
    x = (x & RF_TPCH_RNG_M) + (x >> 31);
    if (x >= RF_TPCH_RNG_M) x -= RF_TPCH_RNG_M;
    return (int64_t)x;
}

/* dbgen's UnifInt: the double arithmetic (divide, then multiply, then
** truncate) is kept as is, since a rounding difference changes the data. */
static inline int64_t rf_tpch_unif(int64_t *seed, int64_t lo, int64_t hi)
{
    *seed = rf_tpch_rng_next(*seed);
    return lo + (int64_t)((double)*seed / 2147483647.0 * (double)(hi - lo + 1));
}

/* UnifInt(0, 2^31-1): dbgen computes that range in 32 bits, where it
** overflows to -2^31, so the values are negative; a_rnd relies on it. */
static inline int64_t rf_tpch_unif_maxlong(int64_t *seed)
{
    *seed = rf_tpch_rng_next(*seed);
    return (int64_t)((double)*seed / 2147483647.0 * -2147483648.0);
}

/* A^n mod M, and s * A^n mod M: jumping a stream n draws ahead. */
int64_t rf_tpch_rng_mult(int64_t n);
static inline int64_t rf_tpch_mulmod(int64_t a, int64_t b)
{
    /* operands are below 2^31: fold the product twice instead of dividing */
    uint64_t x = (uint64_t)a * (uint64_t)b;
    x = (x & RF_TPCH_RNG_M) + (x >> 31);
    x = (x & RF_TPCH_RNG_M) + (x >> 31);
    if (x >= RF_TPCH_RNG_M) x -= RF_TPCH_RNG_M;
    return (int64_t)x;
}
static inline int64_t rf_tpch_rng_skip(int64_t s, int64_t n)
{
    return rf_tpch_mulmod(s, rf_tpch_rng_mult(n));
}

/* The column streams, numbered as in dbgen; seeds and draws per row are in
** rf_tpch_streams (tpch_tables.c). */
enum {
    RF_TPCH_P_MFG = 0, RF_TPCH_P_BRND = 1, RF_TPCH_P_TYPE = 2, RF_TPCH_P_SIZE = 3,
    RF_TPCH_P_CNTR = 4, RF_TPCH_TEXT_POOL = 5, RF_TPCH_P_CMNT = 6,
    RF_TPCH_PS_QTY = 7, RF_TPCH_PS_SCST = 8, RF_TPCH_PS_CMNT = 9,
    RF_TPCH_O_SUPP = 10, RF_TPCH_O_CLRK = 11, RF_TPCH_O_CMNT = 12, RF_TPCH_O_ODATE = 13,
    RF_TPCH_L_QTY = 14, RF_TPCH_L_DCNT = 15, RF_TPCH_L_TAX = 16, RF_TPCH_L_SHIP = 17,
    RF_TPCH_L_SMODE = 18, RF_TPCH_L_PKEY = 19, RF_TPCH_L_SKEY = 20, RF_TPCH_L_SDTE = 21,
    RF_TPCH_L_CDTE = 22, RF_TPCH_L_RDTE = 23, RF_TPCH_L_RFLG = 24, RF_TPCH_L_CMNT = 25,
    RF_TPCH_C_ADDR = 26, RF_TPCH_C_NTRG = 27, RF_TPCH_C_PHNE = 28, RF_TPCH_C_ABAL = 29,
    RF_TPCH_C_MSEG = 30, RF_TPCH_C_CMNT = 31,
    RF_TPCH_S_ADDR = 32, RF_TPCH_S_NTRG = 33, RF_TPCH_S_PHNE = 34, RF_TPCH_S_ABAL = 35,
    RF_TPCH_S_CMNT = 36, RF_TPCH_P_NAME = 37, RF_TPCH_O_PRIO = 38, RF_TPCH_HVAR = 39,
    RF_TPCH_O_CKEY = 40, RF_TPCH_N_CMNT = 41, RF_TPCH_R_CMNT = 42, RF_TPCH_O_LCNT = 43,
    RF_TPCH_BBB_JNK = 44, RF_TPCH_BBB_TYPE = 45, RF_TPCH_BBB_CMNT = 46, RF_TPCH_BBB_OFFSET = 47,
    RF_TPCH_NSTREAMS = 48
};

typedef struct rf_tpch_stream {
    int64_t seed;     /* value before the first row */
    int64_t per_row;  /* draws reserved per row of the owning table */
} rf_tpch_stream;
extern const rf_tpch_stream rf_tpch_streams[RF_TPCH_NSTREAMS];

/* ---- distributions ------------------------------------------------- */

typedef struct rf_tpch_dist {
    int32_t count;
    int32_t total;       /* sum of the weights: picks draw from 1..total */
    const char **text;   /* count entries, each followed by 16 bytes of zero padding */
    int32_t *len;        /* strlen of each entry */
    int32_t *cum;        /* cumulative weights, as dbgen keeps them */
    int32_t *lut;        /* lut[j], j in 1..total: the entry a draw of j picks */
} rf_tpch_dist;

typedef struct rf_tpch_dists {
    rf_tpch_dist p_cntr, instruct, msegmnt, nations, regions, o_oprio, rflag, smode,
        p_types, colors, nouns, verbs, adverbs, articles, prepositions, auxillaries,
        terminators, adjectives, grammar, np, vp;
    rf_arena arena; /* owns every array and string above */
} rf_tpch_dists;

/* Parses the embedded dists.dss; RF_EINTERNAL if it lacks something. */
rf_status rf_tpch_dists_load(rf_tpch_dists *ds, rf_diags *d);
void rf_tpch_dists_free(rf_tpch_dists *ds);

/* dbgen's pick_str: one draw from the column's stream. */
static inline int32_t rf_tpch_pick(const rf_tpch_dist *dist, int64_t *seed)
{
    return dist->lut[rf_tpch_unif(seed, 1, dist->total)];
}

/* ---- text pool ----------------------------------------------------- */

#define RF_TPCH_POOL_SIZE ((int64_t)300 * 1024 * 1024)

/* Builds the text pool with up to `jobs` threads; the result (POOL_SIZE
** bytes plus a NUL) is freed with rf_tpch_pool_free. NULL with a diagnostic
** on error. */
char *rf_tpch_pool_build(const rf_tpch_dists *ds, int jobs, rf_status *st, rf_diags *d);
void rf_tpch_pool_free(char *pool);

/* ---- table generation ---------------------------------------------- */

/* dbgen's calendar runs from 1992-01-01 for 2557 days (through 1998-12-31). */
#define RF_TPCH_TOTDATE 2557

typedef struct rf_tpch_ctx {
    int64_t scale; /* dbgen's integer scale: 1 below SF 1 */
    int64_t n_part, n_supp, n_cust, n_orders;
    const char *pool;
    const rf_tpch_dists *ds;
    char dates[RF_TPCH_TOTDATE + 1][12]; /* "YYYY-MM-DD" by day number */
} rf_tpch_ctx;

/* Counts dbgen uses at a scale factor already validated by the caller. */
void rf_tpch_ctx_init(rf_tpch_ctx *c, double sf, const char *pool, const rf_tpch_dists *ds);

/* A growable output buffer; rows are written straight into it. */
typedef struct rf_tpch_out {
    char *data;
    int64_t len, cap;
    int oom;
} rf_tpch_out;

/* Generators for rows first..first+count-1 (1-based, as dbgen numbers
** them). A NULL buffer means the table is not wanted: its columns are still
** computed where another table depends on them (order totals need the
** lines). Return 0, or -1 when a buffer could not grow. */
int rf_tpch_gen_part(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *part,
                     rf_tpch_out *psupp);
int rf_tpch_gen_supplier(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *out);
int rf_tpch_gen_customer(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *out);
int rf_tpch_gen_orders(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *orders,
                       rf_tpch_out *lines);
int rf_tpch_gen_nation(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *out);
int rf_tpch_gen_region(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *out);

#endif
