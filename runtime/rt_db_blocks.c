/*
** runtime/rt_db_blocks.c: block skipping for inputs read from a database.
**
** Owns: which blocks of a database table a program can need (the table's
** per-block min/max, docs/DATABASE.md "Blocks", against the constant range
** filters of the kernels that read the input), and the input's relation
** made of only those blocks' rows, for both devices (the GPU uploads what
** the CPU would scan).
**
** When it applies. Every kernel reading the input must be a map over it
** alone whose filter is a conjunction that can never fail (columns,
** constants, comparisons, and, not, like: no arithmetic, calls or casts, so
** that no skipped row could have raised an error), and each such filter must
** bound at least one int, decimal or date column by a constant (=, <, <=, >,
** >=). A block is kept when some reader's bounds all meet the block's
** [min, max]. Rows of the kept blocks stay in their order, so every reader
** keeps exactly the rows, in exactly the order, it would have kept from the
** whole table: outputs, errors (no row a reader keeps moves past another)
** and float sums are unchanged. The loader (rt_db_input.c) reads and checks
** only the kept blocks (format 2's per-block checksums): a skipped block is
** never read, so damage there stops no run that skips it. Nothing is skipped when a block test of the
** program counts the input's rows, or when the run says block_skip=off.
*/
#include "rf_rt_input.h"

#include <stdlib.h>
#include <string.h>

/* Can evaluating e fail on some row? Only the node kinds that cannot are
** allowed; anything else (arithmetic overflow, a division, a call, a cast)
** might, and a skipped row must not hide an error. */
static int cannot_fail(const rf_qp_expr *e)
{
    if (!e) return 1;
    switch (e->kind) {
    case RF_QP_E_COL:
    case RF_QP_E_CONST:
    case RF_QP_E_CMP:
    case RF_QP_E_AND:
    case RF_QP_E_NOT:
    case RF_QP_E_LIKE: break;
    default: return 0;
    }
    for (int32_t i = 0; i < e->nargs; i++)
        if (!cannot_fail(e->args[i])) return 0;
    return 1;
}

static int bounded_type(rf_type t) { return t == RF_TYPE_INT || t == RF_TYPE_DECIMAL || t == RF_TYPE_DATE; }

/* Narrows lo[c], hi[c] by one conjunct `col op const` (either way round);
** returns 1 when it bounded a column. */
static int narrow(const rf_qp_expr *e, int32_t ncols, int64_t *lo, int64_t *hi)
{
    if (e->kind != RF_QP_E_CMP || e->nargs != 2) return 0;
    const rf_qp_expr *a = e->args[0], *b = e->args[1];
    rf_cmp_op op = e->cmp;
    if (a->kind == RF_QP_E_CONST && b->kind == RF_QP_E_COL) {
        const rf_qp_expr *t = a;
        a = b;
        b = t;
        /* c op col is col op' c */
        switch (op) {
        case RF_CMP_LT: op = RF_CMP_GT; break;
        case RF_CMP_LE: op = RF_CMP_GE; break;
        case RF_CMP_GT: op = RF_CMP_LT; break;
        case RF_CMP_GE: op = RF_CMP_LE; break;
        default: break;
        }
    }
    if (a->kind != RF_QP_E_COL || b->kind != RF_QP_E_CONST || a->side != 0 || a->col < 0 || a->col >= ncols ||
        !bounded_type(a->type) || b->type != a->type)
        return 0;
    int64_t v = b->c.i, c = a->col;
    switch (op) {
    case RF_CMP_EQ:
        if (v > lo[c]) lo[c] = v;
        if (v < hi[c]) hi[c] = v;
        return 1;
    case RF_CMP_LT:
        if (v == INT64_MIN) lo[c] = INT64_MAX, hi[c] = INT64_MIN; /* nothing */
        else if (v - 1 < hi[c]) hi[c] = v - 1;
        return 1;
    case RF_CMP_LE:
        if (v < hi[c]) hi[c] = v;
        return 1;
    case RF_CMP_GT:
        if (v == INT64_MAX) lo[c] = INT64_MAX, hi[c] = INT64_MIN;
        else if (v + 1 > lo[c]) lo[c] = v + 1;
        return 1;
    case RF_CMP_GE:
        if (v > lo[c]) lo[c] = v;
        return 1;
    case RF_CMP_NE: return 0;
    }
    return 0;
}

rf_status rf_rt_db_blocks_needed(const rf_hir_program *p, int32_t var, const rf_db_table *t, uint8_t **keep,
                                 int64_t *nkeep)
{
    *keep = NULL;
    *nkeep = 0;
    const rf_hir_var *v = p->vars[var];
    if (v->role != RF_HIR_ROLE_INPUT || t->ncols != v->ncols || t->nrows == 0) return RF_OK;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ntest; i++)
            if (p->blocks[b]->test[i] == var) return RF_OK;
    int64_t nblocks = t->cols[0].nblocks;
    int32_t nc = v->ncols;
    int64_t *lo = rf_malloc((size_t)nc * sizeof *lo), *hi = rf_malloc((size_t)nc * sizeof *hi);
    uint8_t *k = rf_calloc((size_t)nblocks + 1, 1);
    uint8_t *bounded = rf_calloc((size_t)nc, 1);
    rf_status st = lo && hi && k && bounded ? RF_OK : RF_ENOMEM;
    int readers = 0, ok = !st;
    for (int32_t b = 0; b < p->nblocks && ok; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels && ok; j++) {
            const rf_hir_kernel *kn = p->blocks[b]->kernels[j];
            int reads = kn->out == var;
            for (int32_t i = 0; i < kn->nin; i++) reads |= kn->in[i] == var;
            if (!reads) continue;
            readers++;
            if (kn->kind != RF_HIR_MAP || kn->nin != 1 || kn->in[0] != var || kn->out == var || !kn->filter ||
                !cannot_fail(kn->filter)) {
                ok = 0;
                break;
            }
            for (int32_t c = 0; c < nc; c++) {
                lo[c] = INT64_MIN;
                hi[c] = INT64_MAX;
                bounded[c] = 0;
            }
            int any = 0;
            const rf_qp_expr *f = kn->filter;
            int32_t nconj = f->kind == RF_QP_E_AND ? f->nargs : 1;
            for (int32_t i = 0; i < nconj; i++) {
                const rf_qp_expr *cj = f->kind == RF_QP_E_AND ? f->args[i] : f;
                if (narrow(cj, nc, lo, hi)) {
                    any = 1;
                    bounded[cj->args[cj->args[0]->kind == RF_QP_E_COL ? 0 : 1]->col] = 1;
                }
            }
            if (!any) {
                ok = 0; /* this reader may take a row of any block */
                break;
            }
            /* the blocks this reader can take a row from */
            for (int64_t bl = 0; bl < nblocks; bl++) {
                if (k[bl]) continue;
                int meets = 1;
                for (int32_t c = 0; c < nc && meets; c++) {
                    if (!bounded[c]) continue;
                    const rf_db_block *r = &t->cols[c].blocks[bl];
                    meets = lo[c] <= hi[c] && r->max >= lo[c] && r->min <= hi[c];
                }
                k[bl] = (uint8_t)meets;
            }
        }
    free(lo);
    free(hi);
    free(bounded);
    if (st || !ok || !readers) {
        free(k);
        return st;
    }
    int64_t n = 0;
    for (int64_t bl = 0; bl < nblocks; bl++) n += k[bl];
    *keep = k;
    *nkeep = n;
    return RF_OK;
}

/* The rows of t in the kept blocks. */
static int64_t kept_rows(const rf_db_table *t, const uint8_t *keep)
{
    int64_t rows = 0, nb = t->cols[0].nblocks, br = t->block_rows;
    for (int64_t b = 0; b < nb; b++)
        if (keep[b]) rows += (b + 1) * br > t->nrows ? t->nrows - b * br : br;
    return rows;
}

/* A new column of the kept blocks' rows of col (t->nrows values of width
** bytes), in row order: one copy per run of kept blocks. */
static rf_status gather(const rf_db_table *t, const uint8_t *keep, const void *col, int width, void **out)
{
    int64_t rows = kept_rows(t, keep), nb = t->cols[0].nblocks, br = t->block_rows;
    char *dst = rf_rt_alloc_big((size_t)(rows + 1) * (size_t)width);
    if (!dst) return RF_ENOMEM;
    const char *src = col;
    int64_t at = 0;
    for (int64_t b = 0; b < nb;) {
        if (!keep[b]) {
            b++;
            continue;
        }
        int64_t e = b;
        while (e < nb && keep[e]) e++;
        int64_t r0 = b * br, r1 = e * br > t->nrows ? t->nrows : e * br;
        memcpy(dst + at * width, src + r0 * width, (size_t)(r1 - r0) * (size_t)width);
        at += r1 - r0;
        b = e;
    }
    *out = dst;
    return RF_OK;
}

void rf_rt_dbskip_free(rf_rt_dbskip *s)
{
    for (int32_t i = 0; i < s->n; i++) free(s->cols[i]);
    free(s->cols);
    s->cols = NULL;
    s->n = s->cap = 0;
    for (int32_t i = 0; i < s->nviews; i++) rf_rt_stored_free(s->views[i]);
    free(s->views);
    s->views = NULL;
    s->nviews = s->capviews = 0;
}

/* Stored column *sc as the selection of keep's blocks, the selection kept in s. */
static rf_status select_stored(rf_rt_dbskip *s, const uint8_t *keep, int64_t block_rows, rf_rt_stored **sc)
{
    if (s->nviews == s->capviews) {
        int32_t cap = s->capviews ? 2 * s->capviews : 16;
        rf_rt_stored **n = rf_realloc(s->views, (size_t)cap * sizeof *n);
        if (!n) return RF_ENOMEM;
        s->views = n;
        s->capviews = cap;
    }
    rf_rt_stored *v = NULL;
    rf_status st = rf_rt_stored_select(*sc, keep, block_rows, &v);
    if (st) return st;
    s->views[s->nviews++] = v;
    *sc = v;
    return RF_OK;
}

/* rel cut to the rows of blocks [b0, b1) (views into its columns; a
** column held as stored, NULL in rel, becomes the selection of those blocks,
** owned by s). */
static rf_status cut_rows(const rf_db_table *t, int64_t b0, int64_t b1, rf_rt_rel *rel, rf_rt_stored **stored,
                          rf_rt_dbskip *s)
{
    int64_t r0 = b0 * t->block_rows, r1 = b1 * t->block_rows < t->nrows ? b1 * t->block_rows : t->nrows;
    if (r1 < r0) r1 = r0;
    uint8_t *range = NULL;
    rf_status st = RF_OK;
    for (int32_t c = 0; c < rel->ncols && !st; c++) {
        if (stored && stored[c]) {
            int64_t nb = t->cols[0].nblocks;
            if (!range && (range = rf_calloc((size_t)nb + 1, 1)) != NULL)
                for (int64_t b = b0; b < b1; b++) range[b] = 1;
            st = range ? select_stored(s, range, t->block_rows, &stored[c]) : RF_ENOMEM;
            continue;
        }
        if (rel->cols[c]) rel->cols[c] = (char *)rel->cols[c] + r0 * rf_rt_type_width(rel->types[c]);
    }
    free(range);
    rel->nrows = r1 - r0;
    return st;
}

/* The flags of blocks [b0, b1) of nb (malloc'd), for *kept; NULL where memory runs out. */
static uint8_t *block_range(int64_t nb, int64_t b0, int64_t b1)
{
    uint8_t *k = rf_calloc((size_t)nb + 1, 1);
    for (int64_t b = b0; b < b1 && k; b++) k[b] = 1;
    return k;
}

rf_status rf_rt_db_skip_blocks(const rf_hir_program *p, const rf_db *db, int32_t var, const rf_rt_tuning *tuning,
                               int64_t b0, int64_t b1, rf_rt_rel *rel, rf_rt_stored **stored, rf_rt_dbskip *s,
                               uint8_t **kept)
{
    if (kept) *kept = NULL;
    const rf_hir_var *v = p->vars[var];
    const rf_db_table *t = rf_db_find_table(db, v->input_file);
    if (!t || t->ncols != v->ncols) return RF_OK;
    int64_t nb = t->cols[0].nblocks;
    if (b1 > nb) b1 = nb;
    if (b0 > b1) b0 = b1;
    int whole = b0 == 0 && b1 == nb;
    s->blocks += b1 - b0;
    uint8_t *keep = NULL;
    int64_t nkeep = 0;
    rf_status st = RF_OK;
    if ((tuning ? tuning : rf_rt_tuning_default())->block_skip) st = rf_rt_db_blocks_needed(p, var, t, &keep, &nkeep);
    if (!st && keep && !whole) {
        /* another rank's blocks are not this rank's to keep */
        nkeep = 0;
        for (int64_t b = 0; b < nb; b++) {
            if (b < b0 || b >= b1) keep[b] = 0;
            nkeep += keep[b];
        }
    }
    if (st || !keep || nkeep == b1 - b0) {
        free(keep);
        if (!st && !whole) st = cut_rows(t, b0, b1, rel, stored, s);
        if (!st && !whole && kept && !(*kept = block_range(nb, b0, b1))) st = RF_ENOMEM;
        return st;
    }
    uint8_t *want = rf_malloc((size_t)v->ncols + 1);
    if (want && s->n + v->ncols > s->cap) {
        int32_t cap = s->n + v->ncols + 16;
        void **n = rf_realloc(s->cols, (size_t)cap * sizeof *n);
        if (n) {
            s->cols = n;
            s->cap = cap;
        }
    }
    if (!want || s->n + v->ncols > s->cap) st = RF_ENOMEM;
    if (!st) rf_rt_input_cols_read(p, var, want);
    for (int32_t c = 0; c < v->ncols && !st; c++) {
        if (!want[c]) continue; /* no kernel reads it: what stands in for it stays */
        if (stored && stored[c]) {
            st = select_stored(s, keep, t->block_rows, &stored[c]);
            continue;
        }
        void *col = NULL;
        st = gather(t, keep, rel->cols[c], rf_rt_type_width(v->types[c]), &col);
        if (!st) rel->cols[c] = s->cols[s->n++] = col;
    }
    if (!st) {
        rel->nrows = kept_rows(t, keep);
        s->skipped += b1 - b0 - nkeep;
    }
    free(want);
    if (!st && kept) *kept = keep;
    else free(keep);
    return st;
}
