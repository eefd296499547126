/*
** api/api_result.c: the outputs of a run as the library hands them out.
**
** Owns: rf_result: its copy of each output's name, column names and types
** (so that it outlives the program), the typed getters, text rendering
** through the runtime's output writer, and the profile.
*/
#include "api_internal.h"
#include "rf_rt_data.h"
#include "rf_txn.h"
#include "rf_value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rf_result_free(rf_result *r)
{
    if (!r) return;
    for (int32_t i = 0; r->outs && r->rr && i < r->rr->noutputs; i++) {
        api_output *o = &r->outs[i];
        free(o->name);
        free(o->types);
        for (int32_t c = 0; o->colnames && c < o->ncols; c++) free(o->colnames[c]);
        free(o->colnames);
    }
    free(r->outs);
    if (r->exec) rf_txn_report_free(r->exec);
    free(r->exec);
    rf_rt_result_free(r->rr);
    free(r);
}

/* Takes rr; its outputs' names and types are copied out of the program. */
rf_status api_result_new(rf_rt_result *rr, rf_result **out)
{
    rf_result *r = rf_calloc(1, sizeof *r);
    if (!r) {
        rf_rt_result_free(rr);
        return RF_ENOMEM;
    }
    r->rr = rr;
    r->outs = rf_calloc((size_t)rr->noutputs + 1, sizeof *r->outs);
    if (!r->outs) {
        rf_result_free(r);
        return RF_ENOMEM;
    }
    for (int32_t i = 0; i < rr->noutputs; i++) {
        rf_rt_output *ro = &rr->outputs[i];
        api_output *o = &r->outs[i];
        o->ncols = ro->var->ncols;
        o->name = rf_strdup(ro->name);
        o->types = rf_calloc((size_t)o->ncols + 1, sizeof *o->types);
        o->colnames = rf_calloc((size_t)o->ncols + 1, sizeof *o->colnames);
        if (!o->name || !o->types || !o->colnames) {
            rf_result_free(r);
            return RF_ENOMEM;
        }
        for (int32_t c = 0; c < o->ncols; c++) {
            o->types[c] = ro->var->types[c];
            const char *cn = ro->var->colnames && ro->var->colnames[c] ? ro->var->colnames[c] : "";
            if (!(o->colnames[c] = rf_strdup(cn))) {
                rf_result_free(r);
                return RF_ENOMEM;
            }
        }
        ro->name = o->name;
        ro->var = NULL; /* the program's: not to be read after this */
        ro->rel.types = o->types;
    }
    *out = r;
    return RF_OK;
}

/* A caller of level 4 or older (rf_run_options.decimal128 0) reads totals
** of decimals as REDFOX_DECIMAL, as before level 5: each wide column is
** narrowed in place (row i's 8 bytes go where row i's 16 began or before,
** so no value is overwritten before it is read), and a value beyond
** decimal's range is an error naming the output, never a wrong number. */
rf_status api_result_narrow_wide(rf_result *r, rf_diags *d)
{
    for (int32_t i = 0; i < r->rr->noutputs; i++) {
        rf_rt_output *ro = &r->rr->outputs[i];
        api_output *o = &r->outs[i];
        for (int32_t c = 0; c < o->ncols; c++) {
            if (o->types[c] != RF_TYPE_DEC128) continue;
            const rf_dec128 *from = ro->rel.cols ? ro->rel.cols[c] : NULL;
            int64_t *to = ro->rel.cols ? ro->rel.cols[c] : NULL;
            for (int64_t row = 0; from && row < ro->rel.nrows; row++) {
                rf_dec128 v = from[row];
                rf_val_err e = {0};
                int64_t n;
                if (rf_val_dec128_to_dec(v, &n, &e)) {
                    rf_error(d, rf_mkloc(NULL, 0, 0),
                             "output %s, column %d (%s), row %lld: decimal out of range: a total of decimals "
                             "beyond 64 bits, which a caller of API level 4 or older reads as REDFOX_DECIMAL (set "
                             "rf_run_options.decimal128, level 5, to read it exactly as REDFOX_DECIMAL128)",
                             o->name, (int)c + 1, o->colnames[c][0] ? o->colnames[c] : "?", (long long)row + 1);
                    return RF_EUSER;
                }
                to[row] = n;
            }
            o->types[c] = RF_TYPE_DECIMAL;
        }
    }
    return RF_OK;
}

const char *rf_result_device(const rf_result *r) { return r ? r->rr->device : NULL; }
double rf_result_load_seconds(const rf_result *r) { return r ? r->rr->load_seconds : 0; }
double rf_result_run_seconds(const rf_result *r) { return r ? r->rr->run_seconds : 0; }
int32_t rf_result_count(const rf_result *r) { return r ? r->rr->noutputs : 0; }

static const api_output *output(const rf_result *r, int32_t i)
{
    return r && i >= 0 && i < r->rr->noutputs ? &r->outs[i] : NULL;
}

const char *rf_result_name(const rf_result *r, int32_t i)
{
    const api_output *o = output(r, i);
    return o ? o->name : NULL;
}

int32_t rf_result_find(const rf_result *r, const char *name)
{
    for (int32_t i = 0; r && name && i < r->rr->noutputs; i++)
        if (!strcmp(r->outs[i].name, name)) return i;
    return -1;
}

int64_t rf_result_rows(const rf_result *r, int32_t i) { return output(r, i) ? r->rr->outputs[i].rel.nrows : 0; }
int32_t rf_result_columns(const rf_result *r, int32_t i) { return output(r, i) ? r->outs[i].ncols : 0; }

const char *rf_result_column_name(const rf_result *r, int32_t i, int32_t c)
{
    const api_output *o = output(r, i);
    return o && c >= 0 && c < o->ncols ? o->colnames[c] : NULL;
}

int rf_result_column_type(const rf_result *r, int32_t i, int32_t c)
{
    const api_output *o = output(r, i);
    return o && c >= 0 && c < o->ncols ? api_type_public(o->types[c]) : -1;
}

const void *rf_result_column_data(const rf_result *r, int32_t i, int32_t c)
{
    const api_output *o = output(r, i);
    if (!o || c < 0 || c >= o->ncols || !r->rr->outputs[i].rel.nrows) return NULL;
    return r->rr->outputs[i].rel.cols[c];
}

/* The value's address when (i, c, row) is in range and of type t, else NULL. */
static const void *cell(const rf_result *r, int32_t i, int32_t c, int64_t row, rf_type t)
{
    const api_output *o = output(r, i);
    if (!o || c < 0 || c >= o->ncols || o->types[c] != t) return NULL;
    const rf_rt_rel *rel = &r->rr->outputs[i].rel;
    if (row < 0 || row >= rel->nrows) return NULL;
    return (const char *)rel->cols[c] + row * rf_rt_type_width(t);
}

int64_t rf_result_int(const rf_result *r, int32_t i, int32_t c, int64_t row)
{
    const int64_t *p = cell(r, i, c, row, RF_TYPE_INT);
    return p ? *p : 0;
}

double rf_result_float(const rf_result *r, int32_t i, int32_t c, int64_t row)
{
    const double *p = cell(r, i, c, row, RF_TYPE_FLOAT);
    return p ? *p : 0;
}

int64_t rf_result_decimal(const rf_result *r, int32_t i, int32_t c, int64_t row)
{
    const int64_t *p = cell(r, i, c, row, RF_TYPE_DECIMAL);
    return p ? *p : 0;
}

int rf_result_decimal128(const rf_result *r, int32_t i, int32_t c, int64_t row, int64_t *hi, uint64_t *lo)
{
    const rf_dec128 *p = cell(r, i, c, row, RF_TYPE_DEC128);
    rf_dec128 v = p ? *p : 0;
    if (hi) *hi = (int64_t)(v >> 64);
    if (lo) *lo = (uint64_t)v;
    return p ? REDFOX_OK : REDFOX_NOTFOUND;
}

int32_t rf_result_date(const rf_result *r, int32_t i, int32_t c, int64_t row)
{
    const int32_t *p = cell(r, i, c, row, RF_TYPE_DATE);
    return p ? *p : 0;
}

int rf_result_bool(const rf_result *r, int32_t i, int32_t c, int64_t row)
{
    const uint8_t *p = cell(r, i, c, row, RF_TYPE_BOOL);
    return p ? *p : 0;
}

const char *rf_result_string_code(const rf_result *r, uint32_t code, int64_t *len)
{
    int64_t n = 0;
    if (len) *len = 0;
    if (!r || !r->rr->dict || (int64_t)code >= rf_rt_dict_count(r->rr->dict)) return NULL;
    const char *s = rf_rt_dict_str(r->rr->dict, code, &n);
    if (len) *len = n;
    return s;
}

const char *rf_result_string(const rf_result *r, int32_t i, int32_t c, int64_t row, int64_t *len)
{
    const uint32_t *p = cell(r, i, c, row, RF_TYPE_STRING);
    if (!p) {
        if (len) *len = 0;
        return NULL;
    }
    return rf_result_string_code(r, *p, len);
}

static int buf_write(void *ctx, const void *p, int64_t n)
{
    rf_buf_append(ctx, p, n);
    return ((rf_buf *)ctx)->oom ? -1 : 0;
}

/* Output i in format through the runtime's writer (the one `redfox run` prints with). */
static int write_output(const rf_result *r, int32_t i, int format, int (*fn)(void *, const void *, int64_t),
                        void *ctx, rf_status *st)
{
    const api_output *o = output(r, i);
    if (!o) return REDFOX_NOTFOUND;
    if (format != REDFOX_FORMAT_TABLE && format != REDFOX_FORMAT_TBL && format != REDFOX_FORMAT_CSV)
        return REDFOX_MISUSE;
    rf_rt_format f = format == REDFOX_FORMAT_TABLE ? RF_RT_FORMAT_TABLE
                     : format == REDFOX_FORMAT_TBL ? RF_RT_FORMAT_TBL
                                                   : RF_RT_FORMAT_CSV;
    *st = rf_rt_write_rel_to(&r->rr->outputs[i].rel, (const char *const *)o->colnames, r->rr->dict, f, fn, ctx);
    return REDFOX_OK;
}

static int file_write(void *ctx, const void *p, int64_t n)
{
    return n <= 0 || fwrite(p, 1, (size_t)n, ctx) == (size_t)n ? 0 : -1;
}

int rf_result_write(const rf_result *r, int32_t i, int format, FILE *f)
{
    if (!r || !f) return REDFOX_MISUSE;
    rf_status st = RF_OK;
    int rc = write_output(r, i, format, file_write, f, &st);
    if (rc) return rc;
    return st == RF_EIO || ferror(f) ? REDFOX_IO : api_code(st);
}

int rf_result_text(const rf_result *r, int32_t i, int format, char **text, int64_t *len)
{
    if (text) *text = NULL;
    if (len) *len = 0;
    if (!r || !text) return REDFOX_MISUSE;
    rf_buf b;
    rf_buf_init(&b);
    rf_status st = RF_OK;
    int rc = write_output(r, i, format, buf_write, &b, &st);
    if (rc) {
        rf_buf_free(&b);
        return rc;
    }
    rf_buf_putc(&b, '\0');
    if (!st && b.oom) st = RF_ENOMEM;
    if (st) {
        rf_buf_free(&b);
        return api_code(st);
    }
    if (len) *len = b.len - 1;
    *text = rf_buf_take(&b);
    return *text ? REDFOX_OK : REDFOX_NOMEM;
}

char *rf_result_value_text(const rf_result *r, int32_t i, int32_t c, int64_t row)
{
    const api_output *o = output(r, i);
    if (!o || c < 0 || c >= o->ncols || row < 0 || row >= r->rr->outputs[i].rel.nrows) return NULL;
    const void *p = cell(r, i, c, row, o->types[c]);
    rf_buf b;
    rf_buf_init(&b);
    switch (o->types[c]) {
    case RF_TYPE_INT: rf_val_fmt_int(&b, *(const int64_t *)p); break;
    case RF_TYPE_DECIMAL: rf_val_fmt_dec(&b, *(const int64_t *)p); break;
    case RF_TYPE_DEC128: rf_val_fmt_dec128(&b, *(const rf_dec128 *)p); break;
    case RF_TYPE_FLOAT: rf_val_fmt_float(&b, *(const double *)p); break;
    case RF_TYPE_DATE: rf_val_fmt_date(&b, *(const int32_t *)p); break;
    case RF_TYPE_BOOL: rf_val_fmt_bool(&b, *(const uint8_t *)p); break;
    case RF_TYPE_STRING: {
        int64_t n = 0;
        const char *s = rf_result_string_code(r, *(const uint32_t *)p, &n);
        rf_buf_append(&b, s ? s : "", n);
        break;
    }
    }
    rf_buf_putc(&b, '\0');
    if (b.oom) {
        rf_buf_free(&b);
        return NULL;
    }
    return rf_buf_take(&b);
}

int32_t rf_result_profile_count(const rf_result *r) { return r ? r->rr->nstats : 0; }

const char *rf_result_profile_kernel(const rf_result *r, int32_t k, int64_t *calls, double *seconds,
                                     int64_t *rows_out)
{
    if (!r || k < 0 || k >= r->rr->nstats) return NULL;
    const rf_rt_kstat *s = &r->rr->stats[k];
    if (calls) *calls = s->calls;
    if (seconds) *seconds = s->seconds;
    if (rows_out) *rows_out = s->rows_out;
    return s->what;
}

int rf_result_write_to(const rf_result *r, int32_t i, int format, rf_write_fn write, void *user)
{
    if (!r || !write) return REDFOX_MISUSE;
    rf_status st = RF_OK;
    int rc = write_output(r, i, format, write, user, &st);
    return rc ? rc : api_code(st);
}

int rf_result_profile_write(const rf_result *r, FILE *f)
{
    if (!r || !f) return REDFOX_MISUSE;
    rf_rt_profile_write(r->rr, f);
    return ferror(f) ? REDFOX_IO : REDFOX_OK;
}

const char *rf_result_device_log(const rf_result *r) { return r ? r->rr->gpu_trace : NULL; }
