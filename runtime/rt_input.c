/*
** runtime/rt_input.c: an input predicate's file, read into a relation, for
** both devices.
**
** Owns: the conversion of the loader's text columns into a relation (strings
** interned into the run's dictionary), and the checks of what the program
** says about an input's rows:
**   - a declared lang:input:key: no two rows of the file may agree on the
**     key's columns (a row repeated whole breaks it too). The query plan
**     counts on the key (it drops the dedupes it makes needless), so a file
**     that breaks it is an error naming both lines, never a wrong answer.
**   - a functional predicate (f[k1, k2] = v): no two rows may agree on the
**     key columns and differ in the value, as for facts written in the
**     program. Predicates are sets, so a row repeated whole is one fact and
**     is accepted (unless a lang:input:key forbids it).
** Both are one hash grouping of the key columns (rf_cpu_group, parallel);
** a key that the declared one implies is not checked again.
** Also the progress of a load for a display (rf_rt_load_progress): its
** phase and bytes, once it has run a second.
*/
#include "rf_rt_input.h"
#include "rf_sys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

rf_cpu_kind rf_rt_cpu_kind(rf_type t)
{
    switch (t) {
    case RF_TYPE_FLOAT: return RF_CPU_F64;
    case RF_TYPE_DATE: return RF_CPU_I32;
    case RF_TYPE_STRING: return RF_CPU_U32;
    case RF_TYPE_BOOL: return RF_CPU_U8;
    case RF_TYPE_DEC128: return RF_CPU_I128;
    default: return RF_CPU_I64;
    }
}

/* Do rows a and b of r agree on columns [c0, ncols)? Floats agree as
** values (docs/LANGUAGE.md, Types): -0.0 is 0.0 and every NaN is one value,
** whatever their bits, as the grouping of the key columns has it. */
static int same_tail(const rf_hir_var *v, const rf_rt_rel *r, int32_t c0, int64_t a, int64_t b)
{
    for (int32_t c = c0; c < v->ncols; c++) {
        const char *col = r->cols[c];
        if (v->types[c] == RF_TYPE_FLOAT) {
            double x, y;
            memcpy(&x, col + (size_t)a * sizeof x, sizeof x);
            memcpy(&y, col + (size_t)b * sizeof y, sizeof y);
            if (!(x == y || (isnan(x) && isnan(y)))) return 0;
            continue;
        }
        size_t w = (size_t)rf_val_type_size(v->types[c]);
        if (v->types[c] == RF_TYPE_STRING) w = sizeof(uint32_t); /* dictionary codes */
        if (memcmp(col + (size_t)a * w, col + (size_t)b * w, w)) return 0;
    }
    return 1;
}

/* The first row whose key (columns keys[0..nkeys)) an earlier row has, with
** that earlier row; with value_from >= 0, only a row that also differs from
** the earlier one in columns [value_from, ncols) counts (a functional
** dependency). */
static rf_status check_key(rf_cpu_pool *pool, const rf_hir_var *v, const rf_rt_rel *r, const int32_t *keys,
                           int32_t nkeys, int32_t value_from, int64_t *first, int64_t *dup)
{
    *first = *dup = -1;
    if (r->nrows < 2) return RF_OK;
    rf_cpu_table t = {r->nrows, v->ncols, rf_calloc((size_t)v->ncols + 1, sizeof(rf_cpu_col))};
    if (!t.cols) return RF_ENOMEM;
    for (int32_t c = 0; c < v->ncols; c++) t.cols[c] = (rf_cpu_col){rf_rt_cpu_kind(v->types[c]), r->cols[c]};
    rf_cpu_groups g;
    rf_status st = rf_cpu_group(pool, &t, keys, nkeys, &g);
    free(t.cols);
    if (st) return st;
    if (g.ngroups < r->nrows) {
        /* groups are numbered by first occurrence: the first row that is not
        ** its group's first row repeats an earlier key; for a dependency, the
        ** first row that differs from its group's first row is the first
        ** that differs from any earlier row of its group */
        for (int64_t i = 0; i < r->nrows; i++) {
            int64_t f = g.first_row[g.group_of_row[i]];
            if (f != i && (value_from < 0 || !same_tail(v, r, value_from, f, i))) {
                *first = f;
                *dup = i;
                break;
            }
        }
    }
    rf_cpu_groups_free(&g);
    return RF_OK;
}

/* The file line of row i: rows map to lines one to one, unless a quoted
** field carried a record over several lines (lines: the loader's, or NULL). */
static int64_t line_of(const rf_hir_var *v, const int64_t *lines, int64_t i)
{
    return lines ? lines[i] : i + 1 + (v->header ? 1 : 0);
}

static void put_cols(rf_buf *b, const rf_hir_var *v, const int32_t *cols, int32_t n)
{
    rf_buf_putc(b, '(');
    for (int32_t k = 0; k < n; k++)
        rf_buf_printf(b, "%s%s", k ? ", " : "", v->colnames[cols[k]] ? v->colnames[cols[k]] : "_");
    rf_buf_putc(b, ')');
}

static void put_vals(rf_buf *b, const rf_rt_dict *dict, const rf_rt_rel *r, const int32_t *cols, int32_t n,
                     int64_t row)
{
    rf_buf_putc(b, '(');
    for (int32_t k = 0; k < n; k++) {
        if (k) rf_buf_puts(b, ", ");
        rf_rt_format_value(dict, r, cols[k], row, b);
    }
    rf_buf_putc(b, ')');
}

/* Where a check's error points: a text file's line, rows given from
** memory at the row, or (a database's table) the database's manifest, the
** row named in the message. */
static rf_loc dup_loc(const char *path, int db, int64_t line)
{
    return db == RF_RT_ROWS_OF_DB ? rf_mkloc(path, 0, 0) : rf_mkloc(path, line <= INT32_MAX ? (int32_t)line : 0, 1);
}

static void key_error(const rf_hir_var *v, const char *path, int db, const rf_rt_dict *dict, const rf_rt_rel *r,
                      const int64_t *lines, int64_t first, int64_t dup, rf_diags *d)
{
    rf_buf b;
    rf_buf_init(&b);
    int64_t line = db && !lines ? dup + 1 : line_of(v, lines, dup), fline = db && !lines ? first + 1 : line_of(v, lines, first);
    rf_buf_puts(&b, "the key ");
    put_cols(&b, v, v->input_key, v->ninput_key);
    rf_buf_puts(&b, " = ");
    put_vals(&b, dict, r, v->input_key, v->ninput_key, dup);
    if (db == RF_RT_ROWS_OF_DB)
        rf_buf_printf(&b, " of row %lld of the database's table `%s` is already in row %lld (lang:input:key of `%s`)",
                      (long long)line, v->name, (long long)fline, v->name);
    else if (db == RF_RT_ROWS_GIVEN)
        rf_buf_printf(&b, " of row %lld is already in row %lld (lang:input:key of `%s`)", (long long)line,
                      (long long)fline, v->name);
    else
        rf_buf_printf(&b, " of line %lld is already on line %lld (lang:input:key of `%s`)", (long long)line,
                      (long long)fline, v->name);
    rf_loc loc = dup_loc(path, db, line);
    rf_error(d, loc, "%s", b.data ? b.data : "the input breaks its key");
    rf_buf_free(&b);
}

static void fd_error(const rf_hir_var *v, const char *path, int db, const rf_rt_dict *dict, const rf_rt_rel *r,
                     const int32_t *cols, const int64_t *lines, int64_t first, int64_t dup, rf_diags *d)
{
    rf_buf b;
    rf_buf_init(&b);
    int64_t line = db && !lines ? dup + 1 : line_of(v, lines, dup), fline = db && !lines ? first + 1 : line_of(v, lines, first);
    const char *on = db ? "in row" : "on line";
    int32_t nk = v->nkeys, nv = v->ncols - v->nkeys;
    if (nk == 0) {
        /* p[] = v: at most one row */
        rf_buf_printf(&b, "functional dependency violated: `%s` (without key columns) has two values: ", v->name);
    } else {
        rf_buf_printf(&b, "functional dependency violated: `%s` has two values for the key ", v->name);
        put_cols(&b, v, cols, nk);
        rf_buf_puts(&b, " = ");
        put_vals(&b, dict, r, cols, nk, dup);
        rf_buf_puts(&b, ": ");
    }
    put_vals(&b, dict, r, cols + nk, nv, dup);
    rf_buf_printf(&b, " %s %lld%s, but ", on, (long long)line, db == RF_RT_ROWS_OF_DB ? " of the database's table" : "");
    put_vals(&b, dict, r, cols + nk, nv, first);
    rf_buf_printf(&b, " is already %s %lld", on, (long long)fline);
    rf_loc loc = dup_loc(path, db, line);
    rf_error(d, loc, "%s", b.data ? b.data : "the input breaks its functional dependency");
    rf_buf_free(&b);
}

/* Does the declared key make the functional dependency hold (every key
** column among the dependency's key columns)? */
static int key_implies_fd(const rf_hir_var *v)
{
    if (v->ninput_key <= 0) return 0;
    for (int32_t k = 0; k < v->ninput_key; k++)
        if (v->input_key[k] >= v->nkeys) return 0;
    return 1;
}

static rf_status check_input(const char *path, int db, const rf_hir_var *v, const rf_rt_dict *dict, rf_cpu_pool *pool,
                             const rf_rt_rel *r, const int64_t *lines, int check_declared, int check_fd,
                             rf_diags *d)
{
    int64_t first, dup;
    rf_status st = RF_OK;
    if (check_declared && v->ninput_key > 0) {
        st = check_key(pool, v, r, v->input_key, v->ninput_key, -1, &first, &dup);
        if (!st && dup >= 0) {
            key_error(v, path, db, dict, r, lines, first, dup, d);
            return RF_EUSER;
        }
    }
    if (!st && check_fd && rf_rt_input_is_functional(v) && !key_implies_fd(v)) {
        int32_t cols[4096];
        for (int32_t c = 0; c < v->ncols; c++) cols[c] = c;
        st = check_key(pool, v, r, cols, v->nkeys, v->nkeys, &first, &dup);
        if (!st && dup >= 0) {
            fd_error(v, path, db, dict, r, cols, lines, first, dup, d);
            return RF_EUSER;
        }
    }
    return st;
}

int rf_rt_input_is_functional(const rf_hir_var *v)
{
    /* nkeys 0 with the predicate's name: p[] = v, at most one row */
    return v->pred_name && v->nkeys >= 0 && v->nkeys < v->ncols && v->ncols <= 4096;
}

rf_status rf_rt_check_input_key(const char *path, int db, const rf_hir_var *v, const rf_rt_dict *dict,
                                rf_cpu_pool *pool, const rf_rt_rel *r, rf_diags *d)
{
    return check_input(path, db, v, dict, pool, r, NULL, 1, 0, d);
}

rf_status rf_rt_check_input_fd(const char *path, int db, const rf_hir_var *v, const rf_rt_dict *dict,
                               rf_cpu_pool *pool, const rf_rt_rel *r, rf_diags *d)
{
    return check_input(path, db, v, dict, pool, r, NULL, 0, 1, d);
}

/* ---- the progress of a load ------------------------------------------- */

#define SHOW_AFTER_S 1.0  /* a load is shown once it has run this long */
#define SHOW_EVERY_S 0.1  /* then redrawn this often */

typedef struct watch {
    rf_rt_load_progress_fn fn;
    void *ctx;
    const char *pred, *path;
    double t0, last;
    int shown;
} watch;

static void tell(void *arg, const char *phase, int64_t done, int64_t total)
{
    watch *w = arg;
    if (!w->fn) return;
    double t = rf_now();
    if (t - w->t0 < SHOW_AFTER_S || (w->shown && t - w->last < SHOW_EVERY_S)) return;
    rf_rt_load_progress pr = {w->pred, w->path, phase, done, total, t - w->t0, 0};
    w->fn(w->ctx, &pr);
    w->shown = 1;
    w->last = t;
}

static void tell_end(watch *w)
{
    if (!w->fn || !w->shown) return;
    rf_rt_load_progress pr = {w->pred, w->path, NULL, 0, 0, rf_now() - w->t0, 1};
    w->fn(w->ctx, &pr);
    w->shown = 0;
}

rf_status rf_rt_load_input(const char *path, const rf_hir_var *v, rf_rt_dict *dict, rf_cpu_pool *pool, int threads,
                           rf_rt_rel *out, rf_diags *d)
{
    return rf_rt_load_input_shown(path, v, dict, pool, threads, NULL, NULL, out, d);
}

rf_status rf_rt_text_to_rel(const rf_hir_var *v, rf_rt_texttable *t, rf_rt_dict *dict, int threads, rf_rt_rel *out,
                            int64_t **lines)
{
    memset(out, 0, sizeof *out);
    if (lines) *lines = NULL;
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    r.nrows = t->nrows;
    r.ncols = v->ncols;
    r.types = v->types;
    r.cols = rf_calloc((size_t)v->ncols + 1, sizeof *r.cols);
    rf_status st = r.cols ? RF_OK : RF_ENOMEM;
    for (int32_t c = 0; c < v->ncols && !st; c++) {
        rf_rt_textcol *tc = &t->cols[c];
        if (v->types[c] == RF_TYPE_STRING) {
            uint32_t *codes = rf_malloc((size_t)(t->nrows + 1) * sizeof *codes);
            if (!codes) st = RF_ENOMEM;
            else st = rf_rt_dict_intern_many(dict, tc->str_off, tc->str_bytes, t->nrows, codes, threads);
            r.cols[c] = codes;
        } else {
            r.cols[c] = tc->data;
            tc->data = NULL;
        }
    }
    if (lines) {
        *lines = t->lines;
        t->lines = NULL;
    }
    rf_rt_texttable_free(t);
    if (st) {
        if (lines) free(*lines), *lines = NULL;
        if (r.cols) rf_rt_rel_free(&r);
        return st;
    }
    *out = r;
    return RF_OK;
}

int rf_rt_input_checks(const rf_hir_var *v)
{
    return (v->ninput_key > 0 ? RF_RT_CHECK_KEY : 0) |
           (rf_rt_input_is_functional(v) && !key_implies_fd(v) ? RF_RT_CHECK_FD : 0);
}

rf_status rf_rt_input_dup(rf_cpu_pool *pool, const rf_hir_var *v, const rf_rt_rel *r, int which, int64_t *first,
                          int64_t *dup)
{
    *first = *dup = -1;
    if (which == RF_RT_CHECK_KEY) return check_key(pool, v, r, v->input_key, v->ninput_key, -1, first, dup);
    int32_t cols[4096];
    for (int32_t c = 0; c < v->ncols && c < 4096; c++) cols[c] = c;
    return check_key(pool, v, r, cols, v->nkeys, v->nkeys, first, dup);
}

void rf_rt_input_dup_error(const char *path, int db, const rf_hir_var *v, const rf_rt_dict *dict, const rf_rt_rel *r,
                           const int64_t *lines, int which, int64_t first, int64_t dup, rf_diags *d)
{
    if (which == RF_RT_CHECK_KEY) {
        key_error(v, path, db, dict, r, lines, first, dup, d);
        return;
    }
    int32_t cols[4096];
    for (int32_t c = 0; c < v->ncols && c < 4096; c++) cols[c] = c;
    fd_error(v, path, db, dict, r, cols, lines, first, dup, d);
}

/* path (text NULL), or the bytes *text of path, read from it first where
** *text is NULL (rf_rt_load_input_once) */
static rf_status load_shown(const char *path, char **text, int64_t *size, const rf_hir_var *v, rf_rt_dict *dict,
                            rf_cpu_pool *pool, int threads, rf_rt_load_progress_fn fn, void *ctx, rf_rt_rel *out,
                            rf_diags *d)
{
    watch w = {fn, ctx, v->pred_name ? v->pred_name : v->name, path, fn ? rf_now() : 0, 0, 0};
    memset(out, 0, sizeof *out);
    rf_rt_texttable t;
    rf_rt_load_opts lo = {v->delimiter, v->header, threads, v->name, fn ? tell : NULL, &w};
    rf_status st = RF_OK;
    if (text && !*text) st = rf_rt_read_whole(path, &lo, text, size, d);
    if (!st)
        st = text ? rf_rt_load_mem(path, *text, *size, 1, v->types, v->ncols, &lo, &t, d)
                  : rf_rt_load_text(path, v->types, v->ncols, &lo, &t, d);
    if (st) {
        tell_end(&w);
        return st;
    }
    for (int32_t c = 0; c < v->ncols; c++)
        if (v->types[c] == RF_TYPE_STRING) tell(&w, "interning strings", 0, 0);
    rf_rt_rel r;
    int64_t *lines = NULL; /* kept for the messages of the checks */
    st = rf_rt_text_to_rel(v, &t, dict, threads, &r, &lines);
    if (!st && (v->ninput_key > 0 || rf_rt_input_is_functional(v))) tell(&w, "checking", 0, 0);
    if (!st) st = check_input(path, 0, v, dict, pool, &r, lines, 1, 1, d);
    free(lines);
    tell_end(&w);
    if (st) {
        if (r.cols) rf_rt_rel_free(&r);
        return st;
    }
    *out = r;
    return RF_OK;
}

rf_status rf_rt_load_input_shown(const char *path, const rf_hir_var *v, rf_rt_dict *dict, rf_cpu_pool *pool,
                                 int threads, rf_rt_load_progress_fn fn, void *ctx, rf_rt_rel *out, rf_diags *d)
{
    return load_shown(path, NULL, NULL, v, dict, pool, threads, fn, ctx, out, d);
}

rf_status rf_rt_load_input_once(const char *path, char **text, int64_t *size, const rf_hir_var *v, rf_rt_dict *dict,
                                rf_cpu_pool *pool, int threads, rf_rt_load_progress_fn fn, void *ctx, rf_rt_rel *out,
                                rf_diags *d)
{
    return load_shown(path, text, size, v, dict, pool, threads, fn, ctx, out, d);
}
