/*
** tpch/gen/tpch_tables.c: the rows of the eight TPC-H tables, as dbgen 2.14
** writes them.
**
** Owns: the column streams' seeds and draws per row, dbgen's row counts at a
** scale factor, each column's rule (ranges, pick lists, text lengths, the
** key formulas) and the '|'-separated text format. Every table reserves a
** fixed number of draws per row in each of its streams and skips the unused
** ones at the end of the row (dbgen's row_stop), so a chunk of rows starts
** by jumping each stream ahead: that is what lets chunks run in parallel.
*/
#include <math.h>
#include <string.h>

#include "tpch_internal.h"

/* Seeds and draws per row, in dbgen's stream order. */
const rf_tpch_stream rf_tpch_streams[RF_TPCH_NSTREAMS] = {
    {1, 1},           /* P_MFG */
    {46831694, 1},    /* P_BRND */
    {1841581359, 1},  /* P_TYPE */
    {1193163244, 1},  /* P_SIZE */
    {727633698, 1},   /* P_CNTR */
    {933588178, 1},   /* text pool (never per row) */
    {804159733, 2},   /* P_CMNT */
    {1671059989, 4},  /* PS_QTY: four suppliers per part */
    {1051288424, 4},  /* PS_SCST */
    {1961692154, 8},  /* PS_CMNT */
    {1227283347, 1},  /* O_SUPP (unused) */
    {1171034773, 1},  /* O_CLRK */
    {276090261, 2},   /* O_CMNT */
    {1066728069, 1},  /* O_ODATE */
    {209208115, 7},   /* L_QTY: up to seven lines per order */
    {554590007, 7},   /* L_DCNT */
    {721958466, 7},   /* L_TAX */
    {1371272478, 7},  /* L_SHIP */
    {675466456, 7},   /* L_SMODE */
    {1808217256, 7},  /* L_PKEY */
    {2095021727, 7},  /* L_SKEY */
    {1769349045, 7},  /* L_SDTE */
    {904914315, 7},   /* L_CDTE */
    {373135028, 7},   /* L_RDTE */
    {717419739, 7},   /* L_RFLG */
    {1095462486, 14}, /* L_CMNT */
    {881155353, 9},   /* C_ADDR: length, then one draw per 5 characters */
    {1489529863, 1},  /* C_NTRG */
    {1521138112, 3},  /* C_PHNE */
    {298370230, 1},   /* C_ABAL */
    {1140279430, 1},  /* C_MSEG */
    {1335826707, 2},  /* C_CMNT */
    {706178559, 9},   /* S_ADDR */
    {110356601, 1},   /* S_NTRG */
    {884434366, 3},   /* S_PHNE */
    {962338209, 1},   /* S_ABAL */
    {1341315363, 2},  /* S_CMNT */
    {709314158, 92},  /* P_NAME: a shuffle of the 92 colors */
    {591449447, 1},   /* O_PRIO */
    {431918286, 1},   /* HVAR (unused) */
    {851767375, 1},   /* O_CKEY */
    {606179079, 2},   /* N_CMNT */
    {1500869201, 2},  /* R_CMNT */
    {1434868289, 1},  /* O_LCNT */
    {263032577, 1},   /* BBB_JNK: the gap between "Customer " and the verdict */
    {753643799, 1},   /* BBB_TYPE */
    {202794285, 1},   /* BBB_CMNT */
    {715851524, 1},   /* BBB_OFFSET */
};

/* dbgen's calendar: day numbers count from 1992-01-01 (STARTDATE, 92001). */
#define CURRENT_DAY 1263   /* 1995-06-17, dbgen's CURRENTDATE 95168 */
#define ORDER_DAY_MAX 2405 /* 1998-08-02: room for 121 + 30 days of shipping */

/* Comment and address lengths: dbgen's V_STR bounds, avg * 0.4 .. avg * 1.6. */
#define VLO(avg) ((int)((avg) * 0.4))
#define VHI(avg) ((int)((avg) * 1.6))

void rf_tpch_ctx_init(rf_tpch_ctx *c, double sf, const char *pool, const rf_tpch_dists *ds)
{
    memset(c, 0, sizeof *c);
    c->pool = pool;
    c->ds = ds;
    if (sf < 1.0) {
        /* dbgen scales the base counts by thousandths and keeps scale at 1;
        ** sf is a multiple of 0.001 (check_sf), whose binary value may lie
        ** just below it: rounded, not truncated to the thousandth before */
        int64_t thousandths = (int64_t)llround(1000 * sf);
        c->scale = 1;
        c->n_part = thousandths * 200000 / 1000;
        c->n_supp = thousandths * 10000 / 1000;
        c->n_cust = thousandths * 150000 / 1000;
        c->n_orders = thousandths * 1500000 / 1000;
        if (c->n_part < 1) c->n_part = 1;
        if (c->n_supp < 1) c->n_supp = 1;
        if (c->n_cust < 1) c->n_cust = 1;
        if (c->n_orders < 1) c->n_orders = 1;
    } else {
        c->scale = (int64_t)sf;
        c->n_part = 200000 * c->scale;
        c->n_supp = 10000 * c->scale;
        c->n_cust = 150000 * c->scale;
        c->n_orders = 1500000 * c->scale;
    }
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y = 1992, m = 0, day = 1;
    for (int i = 0; i <= RF_TPCH_TOTDATE; i++) {
        char *s = c->dates[i];
        s[0] = (char)('0' + y / 1000);
        s[1] = (char)('0' + y / 100 % 10);
        s[2] = (char)('0' + y / 10 % 10);
        s[3] = (char)('0' + y % 10);
        s[4] = '-';
        s[5] = (char)('0' + (m + 1) / 10);
        s[6] = (char)('0' + (m + 1) % 10);
        s[7] = '-';
        s[8] = (char)('0' + day / 10);
        s[9] = (char)('0' + day % 10);
        s[10] = 0;
        int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        if (++day > mdays[m] + (m == 1 && leap)) {
            day = 1;
            if (++m == 12) {
                m = 0;
                y++;
            }
        }
    }
}

/* ---- output -------------------------------------------------------- */

#define ROW_MAX 1024 /* longer than any row of any table */

/* Makes room for one more row; 0 or -1 (out of memory). */
static int room(rf_tpch_out *o)
{
    if (o->cap - o->len >= ROW_MAX) return 0;
    int64_t ncap = o->cap ? o->cap * 2 : (int64_t)1 << 20;
    char *n = rf_realloc(o->data, (size_t)ncap);
    if (!n) {
        o->oom = 1;
        return -1;
    }
    o->data = n;
    o->cap = ncap;
    return 0;
}

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes v right-aligned in exactly n characters, two digits at a time. */
static inline char *put_digits(char *p, uint64_t v, int n)
{
    char *q = p + n;
    while (q - p >= 2) {
        q -= 2;
        memcpy(q, &digit_pairs[2 * (v % 100)], 2);
        v /= 100;
    }
    if (q > p) *--q = (char)('0' + v % 10);
    return p + n;
}

static inline int ndigits(uint64_t v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

static inline char *put_u(char *p, uint64_t v) { return put_digits(p, v, ndigits(v)); }

/* zero-padded to width digits, wider when the value needs it (%0*d) */
static inline char *put_pad(char *p, uint64_t v, int width)
{
    int n = ndigits(v);
    return put_digits(p, v, n > width ? n : width);
}

static inline char *put_i(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u(p, (uint64_t)v);
}

/* dbgen prints money as a sign, then dollars "." two-digit cents. */
static inline char *put_money(char *p, int64_t cents)
{
    uint64_t v = (uint64_t)cents;
    if (cents < 0) {
        *p++ = '-';
        v = (uint64_t)0 - v;
    }
    p = put_u(p, v / 100);
    *p++ = '.';
    *p++ = (char)('0' + v % 100 / 10);
    *p++ = (char)('0' + v % 10);
    return p;
}

static inline char *put_s(char *p, const char *s, int64_t n)
{
    memcpy(p, s, (size_t)n);
    return p + n;
}

/* Copies in 16-byte blocks, past the end: rows have ROW_MAX of room, the
** pool and the distribution strings at least 16 bytes of padding. Short
** fixed-size moves beat a call to memcpy for these 5 to 200 byte strings. */
static inline char *put_blocks(char *p, const char *s, int64_t n)
{
    for (int64_t i = 0; i < n; i += 16) memcpy(p + i, s + i, 16);
    return p + n;
}

static inline char *put_dist(char *p, const rf_tpch_dist *d, int32_t i)
{
    return put_blocks(p, d->text[i], d->len[i]);
}

/* dbgen's TEXT: a random offset into the pool, then a random length. */
static inline char *put_text(char *p, const rf_tpch_ctx *c, int64_t *seed, int min, int max)
{
    int64_t off = rf_tpch_unif(seed, 0, RF_TPCH_POOL_SIZE - max);
    int64_t len = rf_tpch_unif(seed, min, max);
    return put_blocks(p, c->pool + off, len);
}

/* dbgen's a_rnd: a random length, then 6 bits per character from one draw
** per 5 characters. The draws are negative (see rf_tpch_unif_maxlong); the
** low 30 bits used here are the same in two's complement either way. */
static inline char *put_alnum(char *p, int64_t *seed, int min, int max)
{
    static const char alpha[] =
        "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,";
    int64_t len = rf_tpch_unif(seed, min, max);
    uint64_t bits = 0;
    for (int64_t i = 0; i < len; i++) {
        if (i % 5 == 0) bits = (uint64_t)rf_tpch_unif_maxlong(seed);
        *p++ = alpha[bits & 63];
        bits >>= 6;
    }
    return p;
}

/* "CC-AAA-EEE-NNNN": country code 10 + nation, then area code, exchange and
** number from three draws. */
static inline char *put_phone(char *p, int64_t nation, int64_t *seed)
{
    int64_t area = rf_tpch_unif(seed, 100, 999);
    int64_t exchange = rf_tpch_unif(seed, 100, 999);
    int64_t number = rf_tpch_unif(seed, 1000, 9999);
    p = put_pad(p, (uint64_t)(10 + nation % 25), 2);
    *p++ = '-';
    p = put_pad(p, (uint64_t)area, 3);
    *p++ = '-';
    p = put_pad(p, (uint64_t)exchange, 3);
    *p++ = '-';
    return put_pad(p, (uint64_t)number, 4);
}

#define SEP(p) (*(p)++ = '|')
#define EOL(p) (*(p)++ = '|', *(p)++ = '\n')

/* The streams of one table: positioned at a row, stepped one row at a time. */
typedef struct streams {
    int n;
    int64_t row[24];  /* seed at the start of the current row */
    int64_t step[24]; /* A^(draws per row) */
} streams;

static void streams_init(streams *s, const int32_t *ids, int n, int64_t first_row)
{
    s->n = n;
    for (int i = 0; i < n; i++) {
        const rf_tpch_stream *st = &rf_tpch_streams[ids[i]];
        s->row[i] = rf_tpch_rng_skip(st->seed, (first_row - 1) * st->per_row);
        s->step[i] = rf_tpch_rng_mult(st->per_row);
    }
}

/* Seeds for this row's draws; the row's unused draws are skipped by next. */
static inline void streams_row(const streams *s, int64_t *seed)
{
    memcpy(seed, s->row, (size_t)s->n * sizeof *seed);
}

static inline void streams_next(streams *s)
{
    for (int i = 0; i < s->n; i++) s->row[i] = rf_tpch_mulmod(s->row[i], s->step[i]);
}

/* Comments are cut from random places in the 300 MiB pool, so nearly every
** one is a cache miss. The generators run a second copy of the comment
** streams a few rows ahead and fetch those bytes early. */
#define AHEAD 4

static inline void prefetch_text(const rf_tpch_ctx *c, int64_t *seed, int max)
{
    const char *p = c->pool + rf_tpch_unif(seed, 0, RF_TPCH_POOL_SIZE - max);
    *seed = rf_tpch_rng_next(*seed); /* the length draw */
    for (int b = 0; b < max; b += 64) __builtin_prefetch(p + b);
    __builtin_prefetch(p + max - 1);
}

/* ---- part and partsupp --------------------------------------------- */

static int64_t retail_price(int64_t key)
{
    return 90000 + (key / 10) % 20001 + 100 * (key % 1000);
}

/* Supplier number snum (0..3) of a part, spread so that each supplier gets
** parts from across the key range. */
static int64_t part_supplier(int64_t part, int64_t snum, int64_t n_supp)
{
    return (part + snum * (n_supp / 4 + (part - 1) / n_supp)) % n_supp + 1;
}

int rf_tpch_gen_part(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *part,
                     rf_tpch_out *psupp)
{
    enum { NAME, MFG, BRND, TYPE, SIZE, CNTR, CMNT, QTY, SCST, PCMNT, N };
    static const int32_t ids[N] = {RF_TPCH_P_NAME, RF_TPCH_P_MFG, RF_TPCH_P_BRND,
                                   RF_TPCH_P_TYPE, RF_TPCH_P_SIZE, RF_TPCH_P_CNTR,
                                   RF_TPCH_P_CMNT, RF_TPCH_PS_QTY, RF_TPCH_PS_SCST,
                                   RF_TPCH_PS_CMNT};
    const rf_tpch_dists *ds = c->ds;
    const int32_t ncolors = ds->colors.count;
    int32_t perm[256];
    streams st;
    int64_t s[N];
    streams_init(&st, ids, N, first);
    static const int32_t aids[2] = {RF_TPCH_P_CMNT, RF_TPCH_PS_CMNT};
    streams ahead;
    int64_t a[2];
    streams_init(&ahead, aids, 2, first + AHEAD);
    for (int64_t key = first; key < first + count; key++, streams_next(&st), streams_next(&ahead)) {
        streams_row(&ahead, a);
        if (part) prefetch_text(c, &a[0], VHI(14));
        if (psupp)
            for (int k = 0; k < 4; k++) prefetch_text(c, &a[1], VHI(124));
        streams_row(&st, s);
        if (part) {
            if (room(part)) return -1;
            char *p = part->data + part->len;
            p = put_u(p, (uint64_t)key);
            SEP(p);
            /* The name is the first five colors of a fresh shuffle; later
            ** swaps never touch the first five places, so the shuffle stops
            ** there (the stream skips the remaining draws anyway). */
            for (int32_t i = 0; i < ncolors; i++) perm[i] = i;
            for (int32_t i = 0; i < 5; i++) {
                int64_t r = rf_tpch_unif(&s[NAME], i, ncolors - 1);
                int32_t t = perm[r];
                perm[r] = perm[i];
                perm[i] = t;
                if (i) *p++ = ' ';
                p = put_dist(p, &ds->colors, perm[i]);
            }
            SEP(p);
            int64_t mfgr = rf_tpch_unif(&s[MFG], 1, 5);
            p = put_s(p, "Manufacturer#", 13);
            p = put_u(p, (uint64_t)mfgr);
            SEP(p);
            int64_t brand = rf_tpch_unif(&s[BRND], 1, 5);
            p = put_s(p, "Brand#", 6);
            p = put_pad(p, (uint64_t)(mfgr * 10 + brand), 2);
            SEP(p);
            p = put_dist(p, &ds->p_types, rf_tpch_pick(&ds->p_types, &s[TYPE]));
            SEP(p);
            p = put_u(p, (uint64_t)rf_tpch_unif(&s[SIZE], 1, 50));
            SEP(p);
            p = put_dist(p, &ds->p_cntr, rf_tpch_pick(&ds->p_cntr, &s[CNTR]));
            SEP(p);
            p = put_money(p, retail_price(key));
            SEP(p);
            p = put_text(p, c, &s[CMNT], VLO(14), VHI(14));
            EOL(p);
            part->len = p - part->data;
        }
        if (psupp) {
            for (int64_t snum = 0; snum < 4; snum++) {
                if (room(psupp)) return -1;
                char *p = psupp->data + psupp->len;
                p = put_u(p, (uint64_t)key);
                SEP(p);
                p = put_u(p, (uint64_t)part_supplier(key, snum, c->n_supp));
                SEP(p);
                p = put_u(p, (uint64_t)rf_tpch_unif(&s[QTY], 1, 9999));
                SEP(p);
                p = put_money(p, rf_tpch_unif(&s[SCST], 100, 100000));
                SEP(p);
                p = put_text(p, c, &s[PCMNT], VLO(124), VHI(124));
                EOL(p);
                psupp->len = p - psupp->data;
            }
        }
    }
    return 0;
}

/* ---- supplier ------------------------------------------------------ */

int rf_tpch_gen_supplier(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *out)
{
    enum { ADDR, NTRG, PHNE, ABAL, CMNT, BCMNT, BTYPE, BJNK, BOFF, N };
    static const int32_t ids[N] = {RF_TPCH_S_ADDR, RF_TPCH_S_NTRG, RF_TPCH_S_PHNE,
                                   RF_TPCH_S_ABAL, RF_TPCH_S_CMNT, RF_TPCH_BBB_CMNT,
                                   RF_TPCH_BBB_TYPE, RF_TPCH_BBB_JNK, RF_TPCH_BBB_OFFSET};
    streams st;
    int64_t s[N];
    streams_init(&st, ids, N, first);
    static const int32_t aids[1] = {RF_TPCH_S_CMNT};
    streams ahead;
    int64_t a[1];
    streams_init(&ahead, aids, 1, first + AHEAD);
    for (int64_t key = first; key < first + count; key++, streams_next(&st), streams_next(&ahead)) {
        streams_row(&ahead, a);
        prefetch_text(c, &a[0], VHI(63));
        streams_row(&st, s);
        if (room(out)) return -1;
        char *p = out->data + out->len;
        p = put_u(p, (uint64_t)key);
        SEP(p);
        p = put_s(p, "Supplier#", 9);
        p = put_pad(p, (uint64_t)key, 9);
        SEP(p);
        p = put_alnum(p, &s[ADDR], VLO(25), VHI(25));
        SEP(p);
        int64_t nation = rf_tpch_unif(&s[NTRG], 0, c->ds->nations.count - 1);
        p = put_u(p, (uint64_t)nation);
        SEP(p);
        p = put_phone(p, nation, &s[PHNE]);
        SEP(p);
        p = put_money(p, rf_tpch_unif(&s[ABAL], -99999, 999999));
        SEP(p);
        char *comment = p;
        p = put_text(p, c, &s[CMNT], VLO(63), VHI(63));
        /* The Better Business Bureau rows for Q16: one supplier in a
        ** thousand gets "Customer ...Complaints" or "...Recommends" written
        ** over its comment. The draws are made for every row. */
        int64_t clen = p - comment;
        int64_t bad = rf_tpch_unif(&s[BCMNT], 1, 10000);
        int64_t type = rf_tpch_unif(&s[BTYPE], 0, 100);
        int64_t noise = rf_tpch_unif(&s[BJNK], 0, clen - 19);
        int64_t off = rf_tpch_unif(&s[BOFF], 0, clen - (19 + noise));
        if (bad <= 10) {
            memcpy(comment + off, "Customer ", 9);
            memcpy(comment + off + 9 + noise, type < 50 ? "Complaints" : "Recommends", 10);
        }
        EOL(p);
        out->len = p - out->data;
    }
    return 0;
}

/* ---- customer ------------------------------------------------------ */

int rf_tpch_gen_customer(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *out)
{
    enum { ADDR, NTRG, PHNE, ABAL, MSEG, CMNT, N };
    static const int32_t ids[N] = {RF_TPCH_C_ADDR, RF_TPCH_C_NTRG, RF_TPCH_C_PHNE,
                                   RF_TPCH_C_ABAL, RF_TPCH_C_MSEG, RF_TPCH_C_CMNT};
    const rf_tpch_dists *ds = c->ds;
    streams st;
    int64_t s[N];
    streams_init(&st, ids, N, first);
    static const int32_t aids[1] = {RF_TPCH_C_CMNT};
    streams ahead;
    int64_t a[1];
    streams_init(&ahead, aids, 1, first + AHEAD);
    for (int64_t key = first; key < first + count; key++, streams_next(&st), streams_next(&ahead)) {
        streams_row(&ahead, a);
        prefetch_text(c, &a[0], VHI(73));
        streams_row(&st, s);
        if (room(out)) return -1;
        char *p = out->data + out->len;
        p = put_u(p, (uint64_t)key);
        SEP(p);
        p = put_s(p, "Customer#", 9);
        p = put_pad(p, (uint64_t)key, 9);
        SEP(p);
        p = put_alnum(p, &s[ADDR], VLO(25), VHI(25));
        SEP(p);
        int64_t nation = rf_tpch_unif(&s[NTRG], 0, ds->nations.count - 1);
        p = put_u(p, (uint64_t)nation);
        SEP(p);
        p = put_phone(p, nation, &s[PHNE]);
        SEP(p);
        p = put_money(p, rf_tpch_unif(&s[ABAL], -99999, 999999));
        SEP(p);
        p = put_dist(p, &ds->msegmnt, rf_tpch_pick(&ds->msegmnt, &s[MSEG]));
        SEP(p);
        p = put_text(p, c, &s[CMNT], VLO(73), VHI(73));
        EOL(p);
        out->len = p - out->data;
    }
    return 0;
}

/* ---- orders and lineitem ------------------------------------------- */

/* Order keys use only the first 8 of every 32 numbers: dbgen's mk_sparse
** keeps the low 3 bits and leaves 2 bits free for the update sets. */
static int64_t order_key(int64_t i)
{
    return ((i >> 3) << 5) | (i & 7);
}

int rf_tpch_gen_orders(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *orders,
                       rf_tpch_out *lines)
{
    enum {
        CKEY, PRIO, CLRK, ODATE, OCMNT, LCNT,
        QTY, DCNT, TAX, SHIP, SMODE, PKEY, SKEY, SDTE, CDTE, RDTE, RFLG, LCMNT, N
    };
    static const int32_t ids[N] = {
        RF_TPCH_O_CKEY, RF_TPCH_O_PRIO, RF_TPCH_O_CLRK, RF_TPCH_O_ODATE, RF_TPCH_O_CMNT,
        RF_TPCH_O_LCNT, RF_TPCH_L_QTY, RF_TPCH_L_DCNT, RF_TPCH_L_TAX, RF_TPCH_L_SHIP,
        RF_TPCH_L_SMODE, RF_TPCH_L_PKEY, RF_TPCH_L_SKEY, RF_TPCH_L_SDTE, RF_TPCH_L_CDTE,
        RF_TPCH_L_RDTE, RF_TPCH_L_RFLG, RF_TPCH_L_CMNT};
    const rf_tpch_dists *ds = c->ds;
    const int64_t clerks = c->scale * 1000;
    streams st;
    int64_t s[N];
    streams_init(&st, ids, N, first);
    static const int32_t aids[3] = {RF_TPCH_O_CMNT, RF_TPCH_O_LCNT, RF_TPCH_L_CMNT};
    streams ahead;
    int64_t a[3];
    streams_init(&ahead, aids, 3, first + AHEAD);
    for (int64_t i = first; i < first + count; i++, streams_next(&st), streams_next(&ahead)) {
        streams_row(&ahead, a);
        if (orders) prefetch_text(c, &a[0], VHI(49));
        if (lines)
            for (int64_t k = rf_tpch_unif(&a[1], 1, 7); k > 0; k--) prefetch_text(c, &a[2], VHI(27));
        streams_row(&st, s);
        int64_t okey = order_key(i);
        char kbuf[24];
        int klen = (int)(put_u(kbuf, (uint64_t)okey) - kbuf);

        /* a third of the customers (keys divisible by 3) never order */
        int64_t cust = rf_tpch_unif(&s[CKEY], 1, c->n_cust);
        int64_t delta = 1;
        while (cust % 3 == 0) {
            cust += delta;
            if (cust > c->n_cust) cust = c->n_cust;
            delta = -delta;
        }
        int32_t prio = rf_tpch_pick(&ds->o_oprio, &s[PRIO]);
        int64_t clerk = rf_tpch_unif(&s[CLRK], 1, clerks);
        int64_t oday = rf_tpch_unif(&s[ODATE], 92001, 92001 + ORDER_DAY_MAX) - 92001;
        char ocomment[128];
        int64_t oclen = put_text(ocomment, c, &s[OCMNT], VLO(49), VHI(49)) - ocomment;
        int64_t nlines = rf_tpch_unif(&s[LCNT], 1, 7);

        int64_t total = 0, shipped = 0;
        for (int64_t ln = 1; ln <= nlines; ln++) {
            int64_t qty = rf_tpch_unif(&s[QTY], 1, 50);
            int64_t disc = rf_tpch_unif(&s[DCNT], 0, 10);
            int64_t tax = rf_tpch_unif(&s[TAX], 0, 8);
            int64_t pkey = rf_tpch_unif(&s[PKEY], 1, c->n_part);
            int64_t snum = rf_tpch_unif(&s[SKEY], 0, 3);
            int64_t sday = oday + rf_tpch_unif(&s[SDTE], 1, 121);
            int64_t cday = oday + rf_tpch_unif(&s[CDTE], 30, 90);
            int64_t rday = sday + rf_tpch_unif(&s[RDTE], 1, 30);
            int64_t price = retail_price(pkey) * qty;
            /* dbgen's integer rounding, in cents */
            total += ((price * (100 - disc)) / 100) * (100 + tax) / 100;
            if (sday <= CURRENT_DAY) shipped++;
            if (!lines) continue;

            if (room(lines)) return -1;
            char *p = lines->data + lines->len;
            p = put_blocks(p, kbuf, klen);
            SEP(p);
            p = put_u(p, (uint64_t)pkey);
            SEP(p);
            p = put_u(p, (uint64_t)part_supplier(pkey, snum, c->n_supp));
            SEP(p);
            p = put_u(p, (uint64_t)ln);
            SEP(p);
            p = put_u(p, (uint64_t)qty);
            SEP(p);
            p = put_money(p, price);
            SEP(p);
            p = put_money(p, disc);
            SEP(p);
            p = put_money(p, tax);
            SEP(p);
            /* returns only happened to items received by the current date */
            if (rday <= CURRENT_DAY) p = put_dist(p, &ds->rflag, rf_tpch_pick(&ds->rflag, &s[RFLG]));
            else *p++ = 'N';
            SEP(p);
            *p++ = sday <= CURRENT_DAY ? 'F' : 'O';
            SEP(p);
            p = put_s(p, c->dates[sday], 10);
            SEP(p);
            p = put_s(p, c->dates[cday], 10);
            SEP(p);
            p = put_s(p, c->dates[rday], 10);
            SEP(p);
            p = put_dist(p, &ds->instruct, rf_tpch_pick(&ds->instruct, &s[SHIP]));
            SEP(p);
            p = put_dist(p, &ds->smode, rf_tpch_pick(&ds->smode, &s[SMODE]));
            SEP(p);
            p = put_text(p, c, &s[LCMNT], VLO(27), VHI(27));
            EOL(p);
            lines->len = p - lines->data;
        }
        if (!orders) continue;

        if (room(orders)) return -1;
        char *p = orders->data + orders->len;
        p = put_blocks(p, kbuf, klen);
        SEP(p);
        p = put_u(p, (uint64_t)cust);
        SEP(p);
        *p++ = shipped == nlines ? 'F' : shipped ? 'P' : 'O';
        SEP(p);
        p = put_money(p, total);
        SEP(p);
        p = put_s(p, c->dates[oday], 10);
        SEP(p);
        p = put_dist(p, &ds->o_oprio, prio);
        SEP(p);
        p = put_s(p, "Clerk#", 6);
        p = put_pad(p, (uint64_t)clerk, 9);
        SEP(p);
        *p++ = '0'; /* ship priority */
        SEP(p);
        p = put_blocks(p, ocomment, oclen);
        EOL(p);
        orders->len = p - orders->data;
    }
    return 0;
}

/* ---- nation and region --------------------------------------------- */

int rf_tpch_gen_nation(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *out)
{
    static const int32_t ids[1] = {RF_TPCH_N_CMNT};
    const rf_tpch_dist *n = &c->ds->nations;
    streams st;
    int64_t s[1];
    streams_init(&st, ids, 1, first);
    for (int64_t i = first; i < first + count; i++, streams_next(&st)) {
        streams_row(&st, s);
        if (room(out)) return -1;
        char *p = out->data + out->len;
        p = put_u(p, (uint64_t)(i - 1));
        SEP(p);
        p = put_dist(p, n, (int32_t)(i - 1));
        SEP(p);
        /* the nations' weights, summed, are their region keys */
        p = put_i(p, n->cum[i - 1]);
        SEP(p);
        p = put_text(p, c, &s[0], VLO(72), VHI(72));
        EOL(p);
        out->len = p - out->data;
    }
    return 0;
}

int rf_tpch_gen_region(const rf_tpch_ctx *c, int64_t first, int64_t count, rf_tpch_out *out)
{
    static const int32_t ids[1] = {RF_TPCH_R_CMNT};
    streams st;
    int64_t s[1];
    streams_init(&st, ids, 1, first);
    for (int64_t i = first; i < first + count; i++, streams_next(&st)) {
        streams_row(&st, s);
        if (room(out)) return -1;
        char *p = out->data + out->len;
        p = put_u(p, (uint64_t)(i - 1));
        SEP(p);
        p = put_dist(p, &c->ds->regions, (int32_t)(i - 1));
        SEP(p);
        p = put_text(p, c, &s[0], VLO(72), VHI(72));
        EOL(p);
        out->len = p - out->data;
    }
    return 0;
}
