/*
** runtime/rt_input.c: an input predicate's file, read into a relation, for
** both devices.
**
** Owns: the conversion of the loader's text columns into a relation (strings
** interned into the run's dictionary), and the check of a declared
** lang:input:key: no two rows of the file may agree on the key's columns.
** The query plan counts on the key (it drops the dedupes it makes needless),
** so a file that breaks it is an error naming both lines, never a wrong
** answer.
*/
#include "rf_rt_input.h"

#include <stdlib.h>
#include <string.h>

rf_cpu_kind rf_rt_cpu_kind(rf_type t)
{
    switch (t) {
    case RF_TYPE_FLOAT: return RF_CPU_F64;
    case RF_TYPE_DATE: return RF_CPU_I32;
    case RF_TYPE_STRING: return RF_CPU_U32;
    case RF_TYPE_BOOL: return RF_CPU_U8;
    default: return RF_CPU_I64;
    }
}

/* The first row whose key an earlier row has, with that earlier row. */
static rf_status check_key(rf_cpu_pool *pool, const rf_hir_var *v, const rf_rt_rel *r, int64_t *first,
                           int64_t *dup)
{
    *first = *dup = -1;
    if (r->nrows < 2) return RF_OK;
    rf_cpu_table t = {r->nrows, v->ncols, rf_calloc((size_t)v->ncols + 1, sizeof(rf_cpu_col))};
    if (!t.cols) return RF_ENOMEM;
    for (int32_t c = 0; c < v->ncols; c++) t.cols[c] = (rf_cpu_col){rf_rt_cpu_kind(v->types[c]), r->cols[c]};
    rf_cpu_groups g;
    rf_status st = rf_cpu_group(pool, &t, v->input_key, v->ninput_key, &g);
    free(t.cols);
    if (st) return st;
    if (g.ngroups < r->nrows) {
        /* groups are numbered by first occurrence: the first row that is not
        ** its group's first row repeats an earlier key */
        for (int64_t i = 0; i < r->nrows; i++)
            if (g.first_row[g.group_of_row[i]] != i) {
                *first = g.first_row[g.group_of_row[i]];
                *dup = i;
                break;
            }
    }
    rf_cpu_groups_free(&g);
    return RF_OK;
}

static void key_error(const rf_hir_var *v, const char *path, const rf_rt_dict *dict, const rf_rt_rel *r,
                      int64_t first, int64_t dup, rf_diags *d)
{
    rf_buf b;
    rf_buf_init(&b);
    int64_t line = dup + 1 + (v->header ? 1 : 0), fline = first + 1 + (v->header ? 1 : 0);
    rf_buf_puts(&b, "the key (");
    for (int32_t k = 0; k < v->ninput_key; k++)
        rf_buf_printf(&b, "%s%s", k ? ", " : "", v->colnames[v->input_key[k]] ? v->colnames[v->input_key[k]] : "_");
    rf_buf_puts(&b, ") = (");
    for (int32_t k = 0; k < v->ninput_key; k++) {
        if (k) rf_buf_puts(&b, ", ");
        rf_rt_format_value(dict, r, v->input_key[k], dup, &b);
    }
    rf_buf_printf(&b, ") of line %lld is already on line %lld (lang:input:key of `%s`)", (long long)line,
                  (long long)fline, v->name);
    rf_loc loc = rf_mkloc(path, line <= INT32_MAX ? (int32_t)line : 0, 1);
    rf_error(d, loc, "%s", b.data ? b.data : "the input breaks its key");
    rf_buf_free(&b);
}

rf_status rf_rt_check_input_key(const char *path, const rf_hir_var *v, const rf_rt_dict *dict, rf_cpu_pool *pool,
                                const rf_rt_rel *r, rf_diags *d)
{
    if (v->ninput_key <= 0) return RF_OK;
    int64_t first, dup;
    rf_status st = check_key(pool, v, r, &first, &dup);
    if (!st && dup >= 0) {
        key_error(v, path, dict, r, first, dup, d);
        st = RF_EUSER;
    }
    return st;
}

rf_status rf_rt_load_input(const char *path, const rf_hir_var *v, rf_rt_dict *dict, rf_cpu_pool *pool, int threads,
                           rf_rt_rel *out, rf_diags *d)
{
    memset(out, 0, sizeof *out);
    rf_rt_texttable t;
    rf_rt_load_opts lo = {v->delimiter, v->header, threads};
    rf_status st = rf_rt_load_text(path, v->types, v->ncols, &lo, &t, d);
    if (st) return st;
    rf_rt_rel r;
    memset(&r, 0, sizeof r);
    r.nrows = t.nrows;
    r.ncols = v->ncols;
    r.types = v->types;
    r.cols = rf_calloc((size_t)v->ncols + 1, sizeof *r.cols);
    if (!r.cols) {
        rf_rt_texttable_free(&t);
        return RF_ENOMEM;
    }
    for (int32_t c = 0; c < v->ncols && !st; c++) {
        rf_rt_textcol *tc = &t.cols[c];
        if (v->types[c] == RF_TYPE_STRING) {
            uint32_t *codes = rf_malloc((size_t)(t.nrows + 1) * sizeof *codes);
            if (!codes) st = RF_ENOMEM;
            else st = rf_rt_dict_intern_many(dict, tc->str_off, tc->str_bytes, t.nrows, codes, threads);
            r.cols[c] = codes;
        } else {
            r.cols[c] = tc->data;
            tc->data = NULL;
        }
    }
    rf_rt_texttable_free(&t);
    if (!st) st = rf_rt_check_input_key(path, v, dict, pool, &r, d);
    if (st) {
        rf_rt_rel_free(&r);
        return st;
    }
    *out = r;
    return RF_OK;
}
