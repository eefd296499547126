/*
** api/api_common.c: the library's version, its error convention (result
** codes, the diagnostics a call leaves on its object), type names and the
** checks of values given in memory.
**
** Owns: rf_libversion, rf_free, rf_type_name, the mapping of internal
** statuses to REDFOX_* codes, and api_diags.
*/
#include "api_internal.h"
#include "rf_value.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *rf_libversion(void) { return RF_VERSION_STRING; }

int rf_libversion_number(void)
{
    int major = 0, minor = 0, patch = 0;
    sscanf(RF_VERSION_STRING, "%d.%d.%d", &major, &minor, &patch);
    return major * 1000000 + minor * 1000 + patch;
}

int rf_api_level(void) { return REDFOX_API_LEVEL; }

void rf_free(void *p) { free(p); }

const char *rf_type_name(int type)
{
    rf_type t;
    return api_type_internal(type, &t) ? NULL : rf_val_type_name(t);
}

int api_type_public(rf_type t)
{
    switch (t) {
    case RF_TYPE_INT: return REDFOX_INT;
    case RF_TYPE_FLOAT: return REDFOX_FLOAT;
    case RF_TYPE_DECIMAL: return REDFOX_DECIMAL;
    case RF_TYPE_STRING: return REDFOX_STRING;
    case RF_TYPE_BOOL: return REDFOX_BOOL;
    case RF_TYPE_DATE: return REDFOX_DATE;
    case RF_TYPE_DEC128: return REDFOX_DECIMAL128;
    }
    return -1;
}

int api_type_internal(int t, rf_type *out)
{
    switch (t) {
    case REDFOX_INT: *out = RF_TYPE_INT; return 0;
    case REDFOX_FLOAT: *out = RF_TYPE_FLOAT; return 0;
    case REDFOX_DECIMAL: *out = RF_TYPE_DECIMAL; return 0;
    case REDFOX_STRING: *out = RF_TYPE_STRING; return 0;
    case REDFOX_BOOL: *out = RF_TYPE_BOOL; return 0;
    case REDFOX_DATE: *out = RF_TYPE_DATE; return 0;
    case REDFOX_DECIMAL128: *out = RF_TYPE_DEC128; return 0;
    }
    return -1;
}

const char *api_type_input(int t, rf_type *out)
{
    if (t == REDFOX_DECIMAL128) return "REDFOX_DECIMAL128 is a type of results only (totals of decimals); give REDFOX_DECIMAL";
    return api_type_internal(t, out) ? "unknown type" : NULL;
}

int api_code(rf_status st)
{
    switch (st) {
    case RF_OK: return REDFOX_OK;
    case RF_EUSER: return REDFOX_ERROR;
    case RF_EUSAGE: return REDFOX_MISUSE;
    case RF_ENOMEM: return REDFOX_NOMEM;
    case RF_EIO: return REDFOX_IO;
    case RF_EDEVMEM: return REDFOX_ERROR;
    case RF_EINTERNAL: return REDFOX_INTERNAL;
    }
    return REDFOX_INTERNAL;
}

void api_diags_clear(api_diags *a)
{
    for (int64_t i = 0; i < a->n; i++) {
        free((char *)a->items[i].file);
        free((char *)a->items[i].message);
    }
    free(a->items);
    free(a->errmsg);
    memset(a, 0, sizeof *a);
}

const char *api_diags_errmsg(const api_diags *a) { return a && a->errmsg ? a->errmsg : ""; }

static char *format_error(const rf_diagnostic *g)
{
    if (!*g->file) return rf_strdup(g->message);
    if (!g->line) return rf_sprintf("%s: %s", g->file, g->message);
    if (!g->column) return rf_sprintf("%s:%d: %s", g->file, (int)g->line, g->message);
    return rf_sprintf("%s:%d:%d: %s", g->file, (int)g->line, (int)g->column, g->message);
}

rf_status api_diags_set(api_diags *a, const rf_diags *d)
{
    api_diags_clear(a);
    if (!d->count) return RF_OK;
    a->items = rf_calloc((size_t)d->count, sizeof *a->items);
    if (!a->items) return RF_ENOMEM;
    for (int64_t i = 0; i < d->count; i++) {
        const rf_diag *s = &d->items[i];
        rf_diagnostic *g = &a->items[a->n];
        g->severity = s->sev == RF_SEV_ERROR ? REDFOX_SEV_ERROR : s->sev == RF_SEV_WARNING ? REDFOX_SEV_WARNING
                                                                                          : REDFOX_SEV_NOTE;
        g->file = rf_strdup(s->loc.file ? s->loc.file : "");
        g->message = rf_strdup(s->msg ? s->msg : "");
        g->line = s->loc.line;
        g->column = s->loc.col;
        if (!g->file || !g->message) {
            free((char *)g->file);
            free((char *)g->message);
            return RF_ENOMEM;
        }
        a->n++;
        if (g->severity == REDFOX_SEV_ERROR && !a->errmsg && !(a->errmsg = format_error(g))) return RF_ENOMEM;
    }
    return RF_OK;
}

void api_diags_error(api_diags *a, const char *fmt, ...)
{
    api_diags_clear(a);
    va_list ap;
    va_start(ap, fmt);
    char *msg = rf_vsprintf(fmt, ap);
    va_end(ap);
    if (!msg) return; /* out of memory: the code says so */
    a->items = rf_calloc(1, sizeof *a->items);
    char *file = rf_strdup("");
    a->errmsg = rf_strdup(msg);
    if (!a->items || !file || !a->errmsg) {
        free(msg);
        free(file);
        api_diags_clear(a);
        return;
    }
    a->items[0].severity = REDFOX_SEV_ERROR;
    a->items[0].file = file;
    a->items[0].message = msg;
    a->n = 1;
}

int api_float_has_negzero(const double *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (v[i] == 0 && signbit(v[i])) return 1;
    return 0;
}

void api_float_canon(double *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) v[i] = rf_val_float_canon(v[i]);
}

int64_t api_check_values(int type, const void *data, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        switch (type) {
        case REDFOX_DECIMAL:
            if (((const int64_t *)data)[i] == INT64_MIN) return i + 1;
            break;
        case REDFOX_DATE: {
            int32_t v = ((const int32_t *)data)[i];
            if (v < RF_DATE_MIN || v > RF_DATE_MAX) return i + 1;
            break;
        }
        case REDFOX_BOOL:
            if (((const uint8_t *)data)[i] > 1) return i + 1;
            break;
        default: return 0;
        }
    }
    return 0;
}
