/*
** runtime/rt_db_like.c: a string column of a database input that the
** program reads only through string:like with constant patterns (TPC-H
** q13's o_comment: `!string:like(o_comment, "%special%requests%")`).
**
** Owns: finding such a column (rf_rt_like_only) and reading it
** (rf_rt_db_load_like_classes). Two rows whose strings give the same answer
** to every one of those patterns are alike to the program: it never sees
** the strings otherwise (no output, key, join, group, order, comparison or
** other function reads them). So each row gets the code of one
** representative string of its class, the string of the class's first row
** in row order: at most 2^k strings are interned (k patterns; q13: 2)
** instead of every distinct one (q13 at SF 10: 15 M, a gigabyte that the
** dictionary would copy and the GPU's copy of it would move), and the
** column's answers, on the CPU and the GPU alike, are the ones the strings
** themselves give. The classes come from the CPU evaluator's own LIKE,
** over each row's bytes as mapped (checked as any read checks them), on
** the run's threads; the representatives are interned in the order of
** their first rows, so the codes depend on the rows alone.
*/
#include "rf_rt_input.h"

#include <stdlib.h>
#include <string.h>

static int is_like_of(const rf_qp_expr *e, int32_t side, int32_t c)
{
    if (!(e->kind == RF_QP_E_LIKE || (e->kind == RF_QP_E_CALL && e->fn == RF_BI_LIKE)) || e->nargs != 2) return 0;
    const rf_qp_expr *s = e->args[0], *p = e->args[1];
    return s->kind == RF_QP_E_COL && s->side == side && s->col == c && p->kind == RF_QP_E_CONST &&
           p->c.type == RF_TYPE_STRING && p->c.s;
}

/* Adds e's patterns over column c of side to pats (distinct, at most max);
** -1 where the column is read any other way, or there are too many. */
static int walk(const rf_qp_expr *e, int32_t side, int32_t c, const rf_fe_const **pats, int32_t *n, int32_t max)
{
    if (!e) return 0;
    if (is_like_of(e, side, c)) {
        const rf_fe_const *k = &e->args[1]->c;
        for (int32_t i = 0; i < *n; i++)
            if (pats[i]->slen == k->slen && memcmp(pats[i]->s, k->s, (size_t)k->slen) == 0) return 0;
        if (*n == max) return -1;
        pats[(*n)++] = k;
        return 0;
    }
    if (e->kind == RF_QP_E_COL && e->side == side && e->col == c) return -1;
    for (int32_t i = 0; i < e->nargs; i++)
        if (walk(e->args[i], side, c, pats, n, max)) return -1;
    return 0;
}

static int listed(const int32_t *cols, int32_t n, int32_t c)
{
    for (int32_t i = 0; i < n; i++)
        if (cols[i] == c) return 1;
    return 0;
}

int32_t rf_rt_like_only(const rf_hir_program *p, int32_t var, int32_t c, const rf_fe_const **pats, int32_t max)
{
    int32_t n = 0;
    if (!p || var < 0 || var >= p->nvars || c < 0 || c >= p->vars[var]->ncols ||
        p->vars[var]->types[c] != RF_TYPE_STRING)
        return 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->out == var) return 0;
            for (int32_t i = 0; i < k->nin; i++) {
                if (k->in[i] != var) continue;
                switch (k->kind) {
                case RF_HIR_MAP:
                case RF_HIR_GATHER_MAP:
                case RF_HIR_JOIN_MAP:
                    /* as rf_rt_input_cols_read: other inputs are read whole */
                    if (i > 1 || (i == 1 && k->kind != RF_HIR_JOIN_MAP)) return 0;
                    if (walk(k->filter, i, c, pats, &n, max)) return 0;
                    for (int32_t o = 0; o < k->nouts; o++)
                        if (walk(k->outs[o], i, c, pats, &n, max)) return 0;
                    break;
                case RF_HIR_JOIN_INDEX:
                case RF_HIR_ANTI_INDEX:
                    if (i > 1 || listed(i ? k->rkeys : k->lkeys, k->nkeys, c)) return 0;
                    break;
                case RF_HIR_GROUP:
                    if (i || listed(k->group, k->ngroup, c)) return 0;
                    break;
                case RF_HIR_REDUCE:
                    if (i || listed(k->group, k->ngroup, c)) return 0;
                    for (int32_t a = 0; a < k->naggs; a++)
                        if (k->aggs[a].col == c) return 0;
                    break;
                case RF_HIR_SORT:
                    if (i) return 0;
                    for (int32_t o = 0; o < k->norder; o++)
                        if (k->order[o].col == c) return 0;
                    break;
                default:
                    return 0; /* whole rows */
                }
            }
        }
    return n;
}

#define MAX_CLASSES (1 << RF_RT_LIKE_MAX)

typedef struct classify {
    const int64_t *off; /* the mapped offsets (u64, below 2^63) */
    const char *bytes;
    const rf_db_column *col;
    const uint8_t *keep;
    int64_t n, br;
    const rf_fe_const *const *pats;
    int32_t npats;
    uint8_t fast[RF_RT_LIKE_MAX]; /* rf_rt_like_fast_ok(pats[q]) */
    uint32_t *codes; /* the class, then the code */
    const uint32_t *code_of; /* per class (second pass) */
    int T, pass;
    int64_t first[64][MAX_CLASSES]; /* per thread: the first row of each class (-1: none) */
} classify;

static void classify_part(void *arg, int t)
{
    classify *j = arg;
    int64_t lo = j->n * t / j->T, hi = j->n * (t + 1) / j->T;
    if (j->pass) {
        for (int64_t i = lo; i < hi; i++) j->codes[i] = j->code_of[j->codes[i]];
        return;
    }
    int64_t *first = j->first[t];
    for (int k = 0; k < MAX_CLASSES; k++) first[k] = -1;
    for (int64_t i = lo; i < hi; i++) {
        int64_t b = i / j->br;
        if (j->keep && !j->keep[b]) {
            j->codes[i] = MAX_CLASSES; /* never read: code 0 */
            continue;
        }
        /* a block's last row ends where the block does */
        int64_t end = (i + 1) % j->br && i + 1 < j->n ? j->off[i + 1] : j->col->blocks[b].max;
        const char *s = j->bytes + j->off[i];
        uint32_t cls = 0;
        for (int32_t q = 0; q < j->npats; q++) {
            const rf_fe_const *k = j->pats[q];
            int hit = j->fast[q] ? rf_rt_like_fast(s, end - j->off[i], k->s, k->slen)
                                 : rf_val_like(s, end - j->off[i], k->s, k->slen);
            cls |= (uint32_t)(hit != 0) << q;
        }
        j->codes[i] = cls;
        if (first[cls] < 0) first[cls] = i;
    }
}

rf_status rf_rt_db_load_like_classes(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep,
                                     const rf_fe_const *const *pats, int32_t npats, rf_rt_dict *dict, int threads,
                                     uint32_t **out, rf_diags *d)
{
    if (npats < 1 || npats > RF_RT_LIKE_MAX || t->cols[c].enc != RF_DB_ENC_PLAIN) return RF_EINTERNAL;
    rf_db_map m = {0, 0}, sm = {0, 0};
    const uint64_t *off = NULL;
    const char *bytes = NULL;
    rf_status st = rf_db_map_strings(db, t, c, keep, &m, &sm, &off, &bytes, d);
    if (st) return st;
    int64_t n = t->nrows;
    uint32_t *codes = rf_rt_alloc_big(((size_t)n + 1) * sizeof *codes);
    classify *j = rf_calloc(1, sizeof *j);
    if (!codes || !j) st = RF_ENOMEM;
    if (!st) {
        j->off = (const int64_t *)off;
        j->bytes = bytes;
        j->col = &t->cols[c];
        j->keep = keep;
        j->n = n;
        j->br = t->block_rows;
        j->pats = pats;
        j->npats = npats;
        for (int32_t q = 0; q < npats; q++) j->fast[q] = (uint8_t)rf_rt_like_fast_ok(pats[q]->s, pats[q]->slen);
        j->codes = codes;
        j->T = threads < 1 ? 1 : threads > 64 ? 64 : threads;
        if (n < 65536) j->T = 1;
        rf_rt_parallel(j->T, classify_part, j);
        /* the classes' first rows over all threads, then their strings
        ** interned in the order of those rows */
        int64_t first[MAX_CLASSES];
        uint32_t code_of[MAX_CLASSES + 1];
        int order[MAX_CLASSES], nc = 0;
        for (int k = 0; k < MAX_CLASSES; k++) {
            first[k] = -1;
            for (int q = 0; q < j->T && first[k] < 0; q++) first[k] = j->first[q][k];
            if (first[k] >= 0) order[nc++] = k;
        }
        for (int a = 1; a < nc; a++)
            for (int b = a; b > 0 && first[order[b - 1]] > first[order[b]]; b--) {
                int x = order[b];
                order[b] = order[b - 1];
                order[b - 1] = x;
            }
        code_of[MAX_CLASSES] = 0;
        for (int a = 0; a < nc && !st; a++) {
            int64_t i = first[order[a]], b = i / j->br;
            int64_t end = (i + 1) % j->br && i + 1 < n ? j->off[i + 1] : j->col->blocks[b].max;
            st = rf_rt_dict_intern(dict, bytes + j->off[i], end - j->off[i], &code_of[order[a]]);
        }
        if (!st) {
            j->code_of = code_of;
            j->pass = 1;
            rf_rt_parallel(j->T, classify_part, j);
        }
    }
    free(j);
    rf_db_unmap(&m);
    rf_db_unmap(&sm);
    if (st) {
        free(codes);
        return st;
    }
    *out = codes;
    return RF_OK;
}
