/*
** runtime/rt_eval_internal.h: the inside of the CPU expression evaluator
** (rf_rt_eval_map), shared by its two files.
**
** Owns: the compiled expression (en), a worker thread's state (wk) and a
** call's (call), and the functions the files share: rt_eval.c (a call: the
** compiled form, threads, errors, the strings computed interned at the end)
** and rt_eval_ops.c (the evaluation of one node over a batch of rows, the
** strings a thread computes, LIKE). rt_eval.c's opening comment
** describes the design.
*/
#ifndef RT_EVAL_INTERNAL_H
#define RT_EVAL_INTERNAL_H

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rf_rt_data.h"

#define BATCH 1024
#define SLOT_WIDTH 16 /* bytes per element of a scratch vector at most: the widest type (a wide decimal) */
#define PEND 0x80000000u
#define MIN_ROWS_PER_THREAD 4096
#define SUBCACHE 1024 /* direct-mapped substring results per worker and node */
#define LCHUNK ((size_t)64 << 10)
#define MAX_CVEC 1024 /* constants with a vector of their own (8 KiB each); the rest fill one per batch */

typedef struct en en;
struct en {
    const rf_qp_expr *e;
    rf_qp_expr_kind kind; /* a CALL of string:like is turned into LIKE */
    rf_type type;
    int id;   /* node index */
    int slot; /* scratch vector index: its depth in the stack of values live at
                 once (rt_eval.c, compile), so that a chain of n operands needs a
                 few vectors, not n */
    int32_t nargs;
    en **args;
    /* COL */
    const void *col;
    const int64_t *rows;
    int width;
    /* CONST: BATCH copies of the value, shared by the threads (read only) */
    void *cvec;
    /* LIKE with a constant pattern */
    int pat_const, pat_fast;
    const char *pat;
    int64_t patlen;
    _Atomic unsigned char *cache; /* per code: 0 unknown, 1 false, 2 true */
    int64_t ncache;
    uint32_t code; /* a string constant's code */
    /* AND */
    int and_slot;
    /* string:substring with constant start and length: its result cache */
    int sub_slot; /* -1: none */
};

typedef struct lent {
    const char *p;
    int64_t len;
    uint32_t h, code;
} lent;

typedef struct lchunk {
    struct lchunk *next;
} lchunk;

struct call;

typedef struct wk {
    struct call *c;
    int64_t lo, hi, r0;
    char *scratch;    /* nslots x slot_bytes */
    size_t slot_bytes; /* one scratch vector: BATCH x the call's widest value (16 bytes with a wide
                          decimal, else 8: the vectors stay as dense as before the wide type) */
    uint16_t *fsel;   /* the filter's selection */
    uint16_t *andbuf; /* 3 x BATCH per AND node */
    uint32_t *subcache;
    int64_t err_row;
    char *err_msg;
    int oom;
    /* output: this thread's olen rows go to out[ostart ..] */
    int64_t olen, ostart;
    uint64_t *selbits; /* pass 1: the filter's selection, BATCH bits per batch */
    int64_t nb1;       /* batches pass 1 evaluated */
    /* strings this thread computed (see the file comment) */
    lent *ents;
    int64_t nents, capents;
    uint32_t *lslots; /* entry index + 1; 0 empty */
    uint64_t lcap;
    int64_t *pend; /* temporary code -> entry index */
    int64_t npend, cappend;
    lchunk *chunks;
    char *cur;
    size_t left;
    char *tbuf;
    size_t tcap;
    /* an error pass (call.collect): every failure, one per row and expression */
    rf_rt_eval_failure *fails;
    int64_t nfails, capfails;
    int32_t cur_expr; /* the expression being evaluated: -1 the filter, else the output */
    uint8_t *failed;  /* per batch index: cur_expr failed there already */
} wk;

typedef struct call {
    const rf_rt_eval_ctx *ctx;
    rf_rt_dict *dict;
    const rf_rt_side *sides;
    en *nodes;
    int nnodes, nand, nsub;
    int nslots, ncvec; /* scratch vectors; constants given a vector of their own */
    int width;         /* bytes of the widest value a node makes (8 at least) */
    en *filter;
    en **outs;
    int32_t nouts;
    const rf_type *out_types;
    int64_t n;
    int T;
    wk *w;
    _Atomic int64_t err_row;
    rf_rt_rel *out;
    rf_diags *d;
    rf_status st;
    int collect; /* an error pass: a failure stops nothing and is listed (wk.fails) */
} call;

/* Characters [start, start + len) of s, clipped to s, as a byte range. */
static inline const char *sget(const wk *w, uint32_t code, int64_t *len)
{
    if (code & PEND) {
        const lent *e = &w->ents[w->pend[code & ~PEND]];
        *len = e->len;
        return e->p;
    }
    const char *p = rf_rt_dict_str(w->c->dict, code, len);
    return p ? p : "";
}

static inline const char *fdec(char *buf, int64_t v)
{
    rf_val_write_dec(buf, v);
    return buf;
}

static inline const char *fdate(char *buf, int32_t v)
{
    rf_val_write_date(buf, v);
    return buf;
}

static inline void *scr(wk *w, const en *x) { return w->scratch + (size_t)x->slot * w->slot_bytes; }

/* rt_eval.c: errors */
/* Records an error of the row at position j unless an earlier row failed
** (an error pass: lists it, unless that row's expression failed already). */
void rf_rt_ev_fail(wk *w, const uint16_t *sel, int j, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* rt_eval_ops.c: node x's values on the k selected rows of the batch (sel
** NULL: all); ev_sel: the rows where boolean x holds, into out (their count) */
const void *rf_rt_ev(wk *w, en *x, const uint16_t *sel, int k);
int rf_rt_ev_sel(wk *w, en *x, const uint16_t *sel, int k, uint16_t *out);
void rf_rt_ev_gather_col(const wk *w, const en *x, const uint16_t *sel, int k, void *o);

#endif
