/*
** frontend/builtins.c: the table of built-in predicates and functions and
** the type names. Adding a built-in starts here.
*/
#include "rf_frontend.h"

#include <string.h>

#define S RF_TYPE_STRING
#define I RF_TYPE_INT
#define D RF_TYPE_DATE
#define F RF_TYPE_FLOAT
#define DEC RF_TYPE_DECIMAL

static const rf_builtin_info builtins[] = {
    {RF_BI_LIKE, "string:like", 1, 2, {S, S}, RF_TYPE_BOOL},
    {RF_BI_SUBSTRING, "string:substring", 0, 3, {S, I, I}, S},
    {RF_BI_LENGTH, "string:length", 0, 1, {S}, I},
    {RF_BI_DATE_PARSE, "date:parse", 0, 1, {S}, D},
    {RF_BI_YEAR, "date:year", 0, 1, {D}, I},
    {RF_BI_MONTH, "date:month", 0, 1, {D}, I},
    {RF_BI_DAY, "date:day", 0, 1, {D}, I},
    {RF_BI_ADD_DAYS, "date:add_days", 0, 2, {D, I}, D},
    {RF_BI_ADD_MONTHS, "date:add_months", 0, 2, {D, I}, D},
    {RF_BI_ADD_YEARS, "date:add_years", 0, 2, {D, I}, D},
    {RF_BI_INT_FLOAT, "int:float", 0, 1, {I}, F},
    {RF_BI_INT_DECIMAL, "int:decimal", 0, 1, {I}, DEC},
    {RF_BI_DECIMAL_FLOAT, "decimal:float", 0, 1, {DEC}, F},
    {RF_BI_FLOAT_DECIMAL, "float:decimal", 0, 1, {F}, DEC},
    {RF_BI_BITAND, "int:bitand", 0, 2, {I, I}, I},
    {RF_BI_BITOR, "int:bitor", 0, 2, {I, I}, I},
    {RF_BI_BITXOR, "int:bitxor", 0, 2, {I, I}, I},
    {RF_BI_BITNOT, "int:bitnot", 0, 1, {I}, I},
    {RF_BI_SHL, "int:shl", 0, 2, {I, I}, I},
    {RF_BI_SHR, "int:shr", 0, 2, {I, I}, I},
    {RF_BI_INT_MIN, "int:min", 0, 2, {I, I}, I},
    {RF_BI_INT_MAX, "int:max", 0, 2, {I, I}, I},
};

const rf_builtin_info *rf_fe_builtin_lookup(const char *name)
{
    for (int64_t i = 0; i < RF_ARRAY_LEN(builtins); i++)
        if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
    return NULL;
}

const rf_builtin_info *rf_fe_builtin_at(int64_t i)
{
    return i >= 0 && i < (int64_t)RF_ARRAY_LEN(builtins) ? &builtins[i] : NULL;
}

const rf_builtin_info *rf_fe_builtin_info(rf_builtin id)
{
    for (int64_t i = 0; i < RF_ARRAY_LEN(builtins); i++)
        if (builtins[i].id == id) return &builtins[i];
    return NULL;
}

static const struct { const char *name; rf_type type; } type_names[] = {
    {"int", RF_TYPE_INT},       {"float", RF_TYPE_FLOAT},   {"decimal", RF_TYPE_DECIMAL},
    {"string", RF_TYPE_STRING}, {"boolean", RF_TYPE_BOOL}, {"date", RF_TYPE_DATE},
};

int rf_fe_type_from_name(const char *name, rf_type *out)
{
    for (int64_t i = 0; i < RF_ARRAY_LEN(type_names); i++)
        if (strcmp(type_names[i].name, name) == 0) {
            *out = type_names[i].type;
            return 1;
        }
    return 0;
}

const char *rf_fe_type_name(rf_type t)
{
    if (t == RF_TYPE_DEC128) return "decimal"; /* the wide decimal is a decimal to the user */
    for (int64_t i = 0; i < RF_ARRAY_LEN(type_names); i++)
        if (type_names[i].type == t) return type_names[i].name;
    return "unknown";
}

const char *rf_agg_fn_name(rf_agg_fn fn)
{
    static const char *n[] = {"total", "count", "min", "max", "avg"};
    return (unsigned)fn < 5 ? n[fn] : "?";
}
