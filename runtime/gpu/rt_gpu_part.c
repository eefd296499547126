/*
** runtime/gpu/rt_gpu_part.c: a kernel run in row ranges when its values and
** results do not fit in GPU memory at once (under the --gpu-memory cap, or a
** full GPU).
**
** Owns: which kernels can run in parts and how: the row-local kernels, a
** map over one relation (filter, project, arithmetic: row i of the output
** depends on row i of the input alone) and a join map or gather map (a row
** per pair of the index); joins (ranges of one side); unique and difference
** (ranges, then one unique over the ranges' distinct rows); a concat (each
** input a range of its output, put together in host memory) and a copy (a
** concat of one); a join without keys (a cross product's pairs, made in
** host memory: they read no column). The thesis's chapter 6 partitions relations that
** exceed GPU memory; a row-local kernel needs no hashing for that: its
** input (the relation, or the index's pairs) waits in host memory and comes
** in one range at a time, and each range's rows go back to host memory as
** soon as they are made; the ranges' outputs, concatenated in range order,
** are the rows the whole kernel would have made, in the same order. The
** result stays in host memory until a kernel reads it (rt_gpu_spill.c).
** Ranges start at two and double while one range does not fit; a kernel
** that does not fit in ranges of a row fails as before (the driver then
** runs the program on the CPU, with a warning).
**
** A map may drop a run's repeated rows where it makes them (gval.distinct),
** but a run can span two ranges: the parts' result is marked as not
** distinct, and the unique reading it drops the repeats itself, giving the
** same first occurrences. An error of a row (overflow, a bad date) is found
** in the first range that holds a failing row, at its lowest failing row:
** the row the whole kernel reports (or, in an aggregated expression, the
** group all the ranges' rows name: rf_gx_map_error_whole). `--profile` counts the kernels run in
** parts and their ranges.
*/
#include "rt_gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PARTS = 1 << 20 };

int rf_gx_part_can(const gx *x, const rf_hir_kernel *k)
{
    if (k->id < 0 || k->id >= x->nkernels) return 0;
    /* (a map the host computes: read from and left in host memory, whole) */
    if (!x->plans[k->id].gpu)
        return (k->kind == RF_HIR_MAP && k->idx < 0) ||
               ((k->kind == RF_HIR_JOIN_MAP || k->kind == RF_HIR_GATHER_MAP) && k->idx >= 0 && k->out != k->idx &&
                k->out != k->in[0] && (k->kind == RF_HIR_GATHER_MAP || k->out != k->in[1]));
    if (rf_gx_radix_can(x, k)) return 1; /* in key partitions (rt_gpu_radix.c) */
    if (k->kind == RF_HIR_MAP) return k->nin == 1 && k->idx < 0;
    /* (one whose output is a side, `dist = gather_map(dist, dist.sel)`,
    ** too: its ranges' outputs are kept apart, run_ranges) */
    if (k->kind == RF_HIR_JOIN_MAP || k->kind == RF_HIR_GATHER_MAP) return k->idx >= 0 && k->out != k->idx;
    /* (a self-join's range would stand for both sides: key partitions only;
    ** a join without keys is made on the host, cross_on_host) */
    if (k->kind == RF_HIR_JOIN_INDEX || k->kind == RF_HIR_ANTI_INDEX)
        return k->nin == 2 && (k->in[0] != k->in[1] || rf_gx_radix_side_can(x, k) || k->nkeys == 0);
    /* (a functional-dependency check would name another conflicting pair) */
    if (k->kind == RF_HIR_UNIQUE) return k->nin == 1 && !k->check_fd && k->out != k->in[0];
    if (k->kind == RF_HIR_DIFFERENCE) return k->nin == 2 && k->out != k->in[0] && k->out != k->in[1];
    /* (a gather reads its input's rows anywhere: picked in host memory) */
    if (k->kind == RF_HIR_GATHER)
        return k->nin >= 1 && k->nin <= 2 && (k->nin == 1 || k->in[1] == k->idx) && k->idx >= 0 &&
               k->out != k->in[0] && k->out != k->idx && k->idx != k->in[0];
    /* (a copy is a concat of one: made in host memory, as below) */
    if (k->kind == RF_HIR_CONCAT || k->kind == RF_HIR_COPY) {
        for (int32_t i = 0; i < k->nin; i++)
            if (k->in[i] == k->out) return 0;
        return k->nin > 0 && (k->kind == RF_HIR_CONCAT || k->nin == 1);
    }
    return 0;
}

/* Kernels whose ranges' results need one more unique over them all: a
** unique (difference) keeps the first occurrence of each row (not in the
** right side); the first occurrences of each range, concatenated in range
** order, hold every row's first occurrence before its other copies. */
static int dedupes(const rf_hir_kernel *k) { return k->kind == RF_HIR_UNIQUE || k->kind == RF_HIR_DIFFERENCE; }

/* Kernels whose output is an index (row numbers of the left side, and of the right). */
static int makes_index(const rf_hir_kernel *k) { return k->kind == RF_HIR_JOIN_INDEX || k->kind == RF_HIR_ANTI_INDEX; }

/* The variable whose rows are split: the relation a map reads, the index a
** join map reads, a join's bigger side (an anti-join's left side: a row's
** absence needs all of the right side). */
static int32_t split_var(const gx *x, const rf_hir_kernel *k)
{
    if (k->kind == RF_HIR_JOIN_MAP || k->kind == RF_HIR_GATHER_MAP) return k->idx;
    if (k->kind == RF_HIR_JOIN_INDEX && x->vals[k->in[1]].nrows > x->vals[k->in[0]].nrows) return k->in[1];
    return k->in[0];
}

rf_status rf_gx_pairs_by_left(int64_t *l, int64_t *r, int64_t n, int64_t nleft)
{
    if (n == 0) return RF_OK;
    int64_t *start = rf_calloc((size_t)nleft + 1, sizeof *start);
    int64_t *nl = rf_malloc((size_t)n * sizeof *nl), *nr = r ? rf_malloc((size_t)n * sizeof *nr) : NULL;
    rf_status st = start && nl && (nr || !r) ? RF_OK : RF_ENOMEM;
    for (int64_t i = 0; i < n && !st; i++) {
        if (l[i] < 0 || l[i] >= nleft) st = RF_EINTERNAL;
        else start[l[i] + 1]++;
    }
    for (int64_t i = 0; i < nleft && !st; i++) start[i + 1] += start[i];
    for (int64_t i = 0; i < n && !st; i++) {
        int64_t at = start[l[i]]++;
        nl[at] = l[i];
        if (r) nr[at] = r[i];
    }
    if (!st) {
        memcpy(l, nl, (size_t)n * sizeof *l);
        if (r) memcpy(r, nr, (size_t)n * sizeof *r);
    }
    free(start);
    free(nl);
    free(nr);
    return st;
}

void rf_gx_acc_free(gacc *a, int32_t ncols)
{
    for (int32_t c = 0; a->col && c < ncols; c++) free(a->col[c]);
    free(a->col);
    free(a->cap);
    free(a->has);
    memset(a, 0, sizeof *a);
}

/* The rows of output value out (on the device) appended to a: a
** relation's columns, or an index's entries (the rows of its side, 0 left
** or 1 right, that was split lo further on). */
rf_status rf_gx_acc_take(gx *x, gacc *a, const rf_hir_var *ov, int index, int side, int64_t lo, const gval *out)
{
    int32_t nc = index ? 2 : ov->ncols;
    for (int32_t c = 0; c < nc; c++) {
        gptr src = index ? (c ? out->b.p : out->a.p) : colp(out, c);
        uint64_t w = index ? 8 : (uint64_t)wid(ov->types[c]), at = (uint64_t)a->rows * w, add = (uint64_t)out->nrows * w;
        if (at + add > a->cap[c]) {
            uint64_t room = a->cap[c] ? a->cap[c] : 4096;
            while (room < at + add) room *= 2;
            char *m = rf_realloc(a->col[c], (size_t)room);
            if (!m) return RF_ENOMEM;
            a->col[c] = m;
            a->cap[c] = room;
        }
        if (!add) continue;
        if (src) {
            rf_status st = x->g.ops->d2h(&x->g, a->col[c] + at, src, add);
            if (st) return st;
            a->has[c] = 1;
        } else {
            memset(a->col[c] + at, 0, (size_t)add); /* a column no kernel reads; an anti-join's right rows */
        }
        if (index && c == side && lo) {
            int64_t *e = (int64_t *)(void *)(a->col[c] + at);
            for (int64_t i = 0; i < out->nrows; i++) e[i] += lo;
        }
    }
    a->rows += out->nrows;
    return RF_OK;
}

/* Rows [lo, hi) of value v, whose buffers are in host memory, on the device
** as a relation of ncols columns (nothing where v has no column, or cols
** does not mark it). */
static rf_status range_of_rel(gx *x, const gval *v, const rf_hir_var *hv, const uint8_t *cols, int64_t lo, int64_t hi,
                              gval *r)
{
    memset(r, 0, sizeof *r);
    r->nrows = r->cap = hi - lo;
    if (!(r->cols = rf_calloc((size_t)hv->ncols + 1, sizeof *r->cols))) return RF_ENOMEM;
    for (int32_t c = 0; c < hv->ncols; c++) {
        const char *h = rf_gx_held_col(v, c);
        if (!h || (cols && !cols[c])) continue;
        uint64_t w = (uint64_t)wid(hv->types[c]);
        rf_status st = galloc(x, (uint64_t)(hi - lo) * w, &r->cols[c]);
        if (!st) st = x->g.ops->h2d(&x->g, r->cols[c].p, h + (uint64_t)lo * w, (uint64_t)(hi - lo) * w);
        if (st) return st;
    }
    return RF_OK;
}

/* Entries [lo, hi) of index value v (a, and b where it has one) in host memory, on the device. */
static rf_status range_of_index(gx *x, const gval *v, int32_t ncols, int64_t lo, int64_t hi, gval *r)
{
    memset(r, 0, sizeof *r);
    r->nrows = hi - lo;
    const char *ha = rf_gx_held_col(v, ncols), *hb = rf_gx_held_col(v, ncols + 1);
    uint64_t bytes = (uint64_t)(hi - lo) * 8;
    rf_status st = RF_OK;
    if (ha) st = galloc(x, bytes, &r->a);
    if (!st && ha) st = x->g.ops->h2d(&x->g, r->a.p, ha + (uint64_t)lo * 8, bytes);
    if (!st && hb) st = galloc(x, bytes, &r->b);
    if (!st && hb) st = x->g.ops->h2d(&x->g, r->b.p, hb + (uint64_t)lo * 8, bytes);
    return st;
}

rf_status rf_gx_range_of(gx *x, const gval *v, const rf_hir_var *hv, int index, const uint8_t *cols, int64_t lo,
                         int64_t hi, gval *r)
{
    return index ? range_of_index(x, v, hv->ncols, lo, hi, r) : range_of_rel(x, v, hv, cols, lo, hi, r);
}

void rf_gx_unfit(gx *x, int64_t rows, int unit)
{
    x->unfit_rows = rows;
    x->unfit_unit = unit;
    if (rows == 0 && unit == RF_GX_UNIT_NONE) x->dict_unfit = 0; /* (a new attempt) */
}

rf_diag *rf_gx_oom_prefix(gx *x, int64_t from, const char *what)
{
    rf_diags *d = x->d;
    for (int64_t i = d->count - 1; i >= from && i >= 0; i--) {
        if (d->items[i].sev != RF_SEV_ERROR || strncmp(d->items[i].msg, "out of GPU memory", 17)) continue;
        char *m = rf_malloc(strlen(what) + strlen(d->items[i].msg) + 1);
        if (!m) return NULL;
        strcpy(m, what);
        strcat(m, d->items[i].msg);
        free(d->items[i].msg);
        d->items[i].msg = m;
        return &d->items[i];
    }
    return NULL;
}

/* The room a part did not fit in, for the message. */
void rf_gx_cap_text(const gx *x, char *cap, size_t n)
{
    if (x->g.mem_cap)
        snprintf(cap, n, "under the cap (--gpu-memory) of %llu bytes", (unsigned long long)x->g.mem_cap);
    else
        snprintf(cap, n, "in the %llu MiB the device had free", (unsigned long long)(x->g.mem_free >> 20));
}

rf_status rf_gx_unfit_error(gx *x, int64_t ndiag, int64_t nerr)
{
    rf_gx_held_drop_diags(x, ndiag, nerr);
    char cap[96];
    rf_gx_cap_text(x, cap, sizeof cap);
    long long n = (long long)x->unfit_rows;
    const char *what = x->unfit_unit == RF_GX_UNIT_ROW ? "one row" : x->unfit_unit == RF_GX_UNIT_KEY ? "one key" : "one group";
    /* (the smallest part failed for the strings' copy its kernel reads,
    ** whatever its rows: a join map comparing strings under a cap that the
    ** strings a rule made grew past) */
    char part[64];
    if (x->unfit_unit == RF_GX_UNIT_ROW || n <= 1) snprintf(part, sizeof part, "one row");
    else snprintf(part, sizeof part, "%s of %lld rows", what, n);
    if (x->dict_unfit)
        rf_error(x->d, rf_mkloc(NULL, 0, 0),
                 "out of GPU memory: the strings' copy, which does not split (the program reads string bytes), does not fit "
                 "%s with the work of its kernel's smallest part (%s)",
                 cap, part);
    else if (x->unfit_unit == RF_GX_UNIT_ROW)
        rf_error(x->d, rf_mkloc(NULL, 0, 0), "out of GPU memory: %s, which does not split, does not fit %s with its kernel's work",
                 what, cap);
    else
        rf_error(x->d, rf_mkloc(NULL, 0, 0),
                 "out of GPU memory: %s of %lld rows, which does not split, does not fit %s with its kernel's work", what, n,
                 cap);
    return RF_EDEVMEM;
}

/* Kernel k reads no value but in. */
static int reads_alone(const rf_hir_kernel *k, int32_t in)
{
    for (int32_t i = 0; i < k->nin; i++)
        if (k->in[i] >= 0 && k->in[i] != in) return 0;
    return k->idx < 0 || k->idx == in;
}

/* Kernel k reads, besides in, only values of at most one row (a join with a
** nullary predicate, one fact): a range of one row of in is then a part of
** one row on each side, which nothing splits further. */
static int others_one_row(const gx *x, const rf_hir_kernel *k, int32_t in)
{
    for (int32_t i = 0; i < k->nin; i++)
        if (k->in[i] >= 0 && k->in[i] != in && x->vals[k->in[i]].nrows > 1) return 0;
    return k->idx < 0 || k->idx == in;
}

/* Kernel k in nparts ranges of its input; the output into a. */
static rf_status run_ranges(gx *x, const rf_hir_kernel *k, int64_t nparts, gacc *a)
{
    const rf_hir_var *ov = x->p->vars[k->out];
    int32_t in = split_var(x, k);
    const rf_hir_var *iv = x->p->vars[in];
    int64_t n = x->vals[in].nrows;
    rf_status st = RF_OK;
    /* an output that is one of the kernel's inputs (a map's side) would
    ** replace it, whole, after the first range: each range's output is kept
    ** apart instead, and the ranges' rows replace the input at the end */
    int aliased = k->out == k->idx;
    for (int32_t i = 0; i < k->nin; i++) aliased |= k->in[i] == k->out;
    gval res;
    memset(&res, 0, sizeof res);
    for (int64_t i = 0; i < nparts && !st; i++) {
        int64_t lo = n / nparts * i + (i < n % nparts ? i : n % nparts);
        int64_t hi = lo + n / nparts + (i < n % nparts);
        if (lo == hi) continue;
        gval r;
        st = in == k->idx ? range_of_index(x, &x->vals[in], iv->ncols, lo, hi, &r)
                          : range_of_rel(x, &x->vals[in], iv, NULL, lo, hi, &r);
        if (!st) {
            /* the kernel reads the range in place of its input */
            gval whole = x->vals[in];
            r.used = x->epoch; /* in use: never moved out under the kernel */
            x->vals[in] = r;
            if (aliased) x->range_out = &res, x->range_out_var = k->out;
            int64_t keep = x->d->count, keep_errors = x->d->nerrors;
            st = rf_gx_run_kernel(x, k);
            x->range_out = NULL;
            r = x->vals[in];
            x->vals[in] = whole;
            /* a map's row error in an aggregated expression: its group over every range */
            if (st == RF_EUSER && k->nouts > 0 &&
                (k->kind == RF_HIR_MAP || k->kind == RF_HIR_JOIN_MAP || k->kind == RF_HIR_GATHER_MAP))
                st = rf_gx_map_error_whole(x, k, keep, keep_errors);
        }
        rf_gx_val_clear(x, &r, iv->ncols);
        /* (a range of one row is the smallest part only where the kernel
        ** reads nothing else, which key partitions could split) */
        if (st == RF_EDEVMEM)
            rf_gx_unfit(x, hi - lo,
                        hi - lo == 1 && (reads_alone(k, in) || others_one_row(x, k, in)) ? RF_GX_UNIT_ROW : RF_GX_UNIT_NONE);
        if (!st) st = rf_gx_acc_take(x, a, ov, makes_index(k), k->nin > 1 && in == k->in[1], lo, aliased ? &res : &x->vals[k->out]);
        if (aliased) rf_gx_val_clear(x, &res, ov->ncols);
        else rf_gx_var_clear(x, k->out);
    }
    return st;
}

/* The rows gathered in a become variable var's value, in host memory (an
** index: its entries; else a relation's columns). */
rf_status rf_gx_acc_to_value(gx *x, gacc *a, int32_t var, int index)
{
    const rf_hir_var *ov = x->p->vars[var];
    gval v;
    memset(&v, 0, sizeof v);
    v.nrows = a->rows;
    v.cap = index ? 0 : a->rows;
    rf_status st = index || (v.cols = rf_calloc((size_t)ov->ncols + 1, sizeof *v.cols)) ? RF_OK : RF_ENOMEM;
    int32_t nc = index ? 2 : ov->ncols;
    for (int32_t c = 0; c < nc && !st && a->rows > 0; c++) {
        if (index && !a->has[c]) continue; /* (an anti-join has no right rows) */
        /* as the pool would reserve it: a multiple of 256 bytes */
        uint64_t w = index ? 8 : (uint64_t)wid(ov->types[c]), bytes = (uint64_t)a->rows * w, n = (bytes + 255) / 256 * 256;
        char *m = n > a->cap[c] ? rf_realloc(a->col[c], (size_t)n) : a->col[c];
        if (!m) {
            st = RF_ENOMEM;
            break;
        }
        memset(m + bytes, 0, (size_t)(n - bytes));
        a->col[c] = NULL;
        st = rf_gx_held_adopt(&v, ov->ncols, index ? ov->ncols + c : c, m, n);
    }
    if (st) {
        rf_gx_val_clear(x, &v, ov->ncols);
        return st;
    }
    rf_gx_var_set(x, var, &v);
    return RF_OK;
}

/* The ranges' distinct rows (variable k->out) made distinct over them all:
** a unique of k->out into itself, at once (where it does not fit, the run
** fails as before). */
static rf_status unique_of_ranges(gx *x, const rf_hir_kernel *k)
{
    rf_status st = rf_gx_unspill_var(x, k->out);
    if (st) return st;
    rf_hir_kernel u = *k;
    int32_t in = k->out;
    u.kind = RF_HIR_UNIQUE;
    u.in = &in;
    u.nin = 1;
    u.check_fd = 0;
    u.nrelease = 0;
    u.release = NULL;
    return rf_gx_run_kernel(x, &u);
}

/* A concat (or a copy, a concat of one input) whose inputs and output do
** not fit at once: each input is a range of the output; they wait in host
** memory and are put together there. */
static rf_status concat_on_host(gx *x, const rf_hir_kernel *k)
{
    const rf_hir_var *ov = x->p->vars[k->out];
    int64_t total = 0;
    rf_status st = RF_OK;
    rf_gx_var_clear(x, k->out);
    for (int32_t i = 0; i < k->nin && !st; i++) {
        st = rf_gx_spill_var(x, k->in[i]);
        total += x->vals[k->in[i]].nrows;
    }
    gval v;
    memset(&v, 0, sizeof v);
    v.nrows = v.cap = total;
    if (!st && !(v.cols = rf_calloc((size_t)ov->ncols + 1, sizeof *v.cols))) st = RF_ENOMEM;
    for (int32_t c = 0; c < ov->ncols && !st && total > 0; c++) {
        /* as the pool would reserve it: a multiple of 256 bytes */
        uint64_t w = (uint64_t)wid(ov->types[c]), bytes = (uint64_t)total * w, n = (bytes + 255) / 256 * 256, at = 0;
        char *m = rf_calloc(1, (size_t)n);
        if (!m) st = RF_ENOMEM;
        for (int32_t i = 0; i < k->nin && !st; i++) {
            const char *h = rf_gx_held_col(&x->vals[k->in[i]], c);
            uint64_t add = (uint64_t)x->vals[k->in[i]].nrows * w;
            if (h && add) memcpy(m + at, h, (size_t)add); /* (else a column no kernel reads: zeros) */
            at += add;
        }
        if (!st && (st = rf_gx_held_adopt(&v, ov->ncols, c, m, n))) free(m);
    }
    if (st) {
        rf_gx_val_clear(x, &v, ov->ncols);
        return st;
    }
    rf_gx_var_set(x, k->out, &v);
    x->parted++;
    x->parts += k->nin;
    return RF_OK;
}

/* A gather whose input does not fit (a sorted output of a recursive set
** kept in partitions): the rows its index names, picked in host memory. */
static rf_status gather_on_host(gx *x, const rf_hir_kernel *k)
{
    const rf_hir_var *ov = x->p->vars[k->out];
    int32_t in = k->in[0], inc = x->p->vars[k->idx]->ncols;
    rf_gx_var_clear(x, k->out);
    rf_status st = rf_gx_spill_var(x, in);
    if (!st) st = rf_gx_spill_var(x, k->idx);
    if (!st && x->vals[in].narrow) st = RF_EDEVMEM; /* (a narrow set's columns: on the device only) */
    if (st) return st;
    const gval *iv = &x->vals[in], *ix = &x->vals[k->idx];
    int64_t n = ix->nrows;
    if (k->limit >= 0 && k->limit < n) n = k->limit;
    const int64_t *perm = rf_gx_held_col(ix, inc); /* (its slot a; none: the identity) */
    gval v;
    memset(&v, 0, sizeof v);
    v.nrows = v.cap = n;
    if (!(v.cols = rf_calloc((size_t)ov->ncols + 1, sizeof *v.cols))) st = RF_ENOMEM;
    for (int32_t c = 0; c < ov->ncols && !st && n > 0; c++) {
        uint64_t w = (uint64_t)wid(ov->types[c]), len = ((uint64_t)n * w + 255) / 256 * 256;
        const char *h = rf_gx_held_col(iv, c);
        char *m = rf_calloc(1, (size_t)len);
        if (!m) st = RF_ENOMEM;
        for (int64_t i = 0; i < n && !st && h; i++) {
            int64_t r = perm ? perm[i] : i;
            if (r < 0 || r >= iv->nrows) st = RF_EINTERNAL;
            else memcpy(m + (uint64_t)i * w, h + (uint64_t)r * w, (size_t)w);
        }
        if (!st && (st = rf_gx_held_adopt(&v, ov->ncols, c, m, len))) free(m);
        else if (st) free(m);
    }
    if (st) {
        rf_gx_val_clear(x, &v, ov->ncols);
        return st;
    }
    rf_gx_var_set(x, k->out, &v);
    x->parted++;
    x->parts++;
    return RF_OK;
}

/* A join index without keys that does not fit: a cross product's pairs are
** (i / right rows, i % right rows), the rf_cross kernel's; an anti-join
** keeps every left row where the right side is empty, else none. Made in
** host memory at once: it reads no column of either side, so neither comes
** to the device, and its entries would only go back to host memory range by
** range; a relation crossed with itself, which no range or key splits, is
** made so too. */
static rf_status cross_on_host(gx *x, const rf_hir_kernel *k)
{
    int anti = k->kind == RF_HIR_ANTI_INDEX;
    int64_t nl = x->vals[k->in[0]].nrows, nr = x->vals[k->in[1]].nrows;
    if (!anti && nr && nl > INT64_MAX / nr / 8) {
        rf_error(x->d, kloc(x, k), "a cross product of %lld by %lld rows is too large", (long long)nl, (long long)nr);
        return RF_EUSER;
    }
    int64_t n = anti ? (nr ? 0 : nl) : nl * nr;
    int32_t ncols = x->p->vars[k->out]->ncols;
    rf_gx_var_clear(x, k->out);
    gval v;
    memset(&v, 0, sizeof v);
    v.nrows = n;
    /* as the pool would reserve them: multiples of 256 bytes */
    uint64_t len = ((uint64_t)n * 8 + 255) / 256 * 256;
    int64_t *l = n ? rf_calloc(1, (size_t)len) : NULL, *r = n && !anti ? rf_calloc(1, (size_t)len) : NULL;
    rf_status st = !n || (l && (r || anti)) ? RF_OK : RF_ENOMEM;
    for (int64_t i = 0, a = 0, b = 0; i < n && !st; i++) {
        l[i] = anti ? i : a;
        if (anti) continue;
        r[i] = b;
        if (++b == nr) b = 0, a++;
    }
    if (!st && l && !(st = rf_gx_held_adopt(&v, ncols, ncols, l, len))) l = NULL;
    if (!st && r && !(st = rf_gx_held_adopt(&v, ncols, ncols + 1, r, len))) r = NULL;
    free(l);
    free(r);
    if (st) {
        rf_gx_val_clear(x, &v, ncols);
        return st;
    }
    rf_gx_var_set(x, k->out, &v);
    x->parted++;
    x->parts++;
    return RF_OK;
}

static rf_status run_in_ranges(gx *x, const rf_hir_kernel *k)
{
    int32_t in = split_var(x, k);
    const rf_hir_var *ov = x->p->vars[k->out];
    /* the input waits in host memory; the other side(s) of a join map stay */
    rf_status st = rf_gx_spill_var(x, in);
    for (int32_t i = 0; i < k->nin && !st; i++)
        if (k->in[i] != in) st = rf_gx_unspill_var(x, k->in[i]);
    if (st) return st;
    int64_t n = x->vals[in].nrows, ndiag = x->d->count, nerr = x->d->nerrors;
    for (int64_t parts = 2;; parts *= 2) {
        rf_gx_unfit(x, 0, RF_GX_UNIT_NONE);
        gacc a;
        memset(&a, 0, sizeof a);
        int32_t nc = makes_index(k) ? 2 : ov->ncols;
        a.col = rf_calloc((size_t)nc + 1, sizeof *a.col);
        a.cap = rf_calloc((size_t)nc + 1, sizeof *a.cap);
        a.has = rf_calloc((size_t)nc + 1, 1);
        st = a.col && a.cap && a.has ? run_ranges(x, k, parts, &a) : RF_ENOMEM;
        /* split on its right side: the pairs, range by range, into the whole join's order */
        if (!st && makes_index(k) && in == k->in[1])
            st = rf_gx_pairs_by_left((int64_t *)(void *)a.col[0], (int64_t *)(void *)a.col[1], a.rows,
                                     x->vals[k->in[0]].nrows);
        if (!st) st = rf_gx_acc_to_value(x, &a, k->out, makes_index(k));
        rf_gx_acc_free(&a, nc);
        int last = 0; /* (more ranges would not make the unique over them smaller) */
        if (!st && dedupes(k)) last = (st = unique_of_ranges(x, k)) != RF_OK;
        if (st != RF_EDEVMEM || last || parts >= n || parts >= MAX_PARTS) {
            if (!st) {
                x->parted++;
                x->parts += parts;
            }
            /* (a range of one row: the message says so) */
            if (st == RF_EDEVMEM && !last && x->unfit_unit == RF_GX_UNIT_ROW) st = rf_gx_unfit_error(x, ndiag, nerr);
            return st;
        }
        rf_gx_held_drop_diags(x, ndiag, nerr); /* (smaller ranges next) */
    }
}

rf_status rf_gx_run_parts(gx *x, const rf_hir_kernel *k)
{
    x->dict_unfit = 0;
    if (!x->plans[k->id].gpu) {
        rf_status st = rf_gx_map_held(x, k);
        if (!st) x->parted++, x->parts++;
        return st;
    }
    if (rf_gx_radix_can(x, k)) return rf_gx_run_radix(x, k);
    if (k->kind == RF_HIR_CONCAT || k->kind == RF_HIR_COPY) return concat_on_host(x, k);
    if (k->kind == RF_HIR_GATHER) return gather_on_host(x, k);
    if ((k->kind == RF_HIR_JOIN_INDEX || k->kind == RF_HIR_ANTI_INDEX) && k->nkeys == 0) return cross_on_host(x, k);
    int64_t ndiag = x->d->count, nerr = x->d->nerrors;
    /* (a self-join's range would stand for both sides: key partitions only) */
    int self = (k->kind == RF_HIR_JOIN_INDEX || k->kind == RF_HIR_ANTI_INDEX) && k->in[0] == k->in[1];
    rf_status st = self ? RF_EDEVMEM : run_in_ranges(x, k);
    /* ranges keep a join's other side (a join map's sides) whole on the
    ** device; where it does not fit: both sides in key partitions (the join
    ** map's sides gathered range by range, rt_gpu_radix.c) */
    if (st == RF_EDEVMEM && rf_gx_radix_side_can(x, k)) {
        rf_gx_held_drop_diags(x, ndiag, nerr);
        st = rf_gx_run_radix(x, k);
    }
    return st;
}
