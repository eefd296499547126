/*
** frontend/parse_state.h: state shared by the lexer and the parser of one
** source file (private to frontend/).
*/
#ifndef RF_PARSE_STATE_H
#define RF_PARSE_STATE_H

#include "rf_ast.h"
#include "rf_value.h"

struct rf_parse_state {
    const char *file;
    rf_arena *arena;
    rf_diags *diags;
    int32_t line, col;   /* position of the next character */
    rf_loc tok_loc;      /* start of a multi-token construct (string, comment) */
    rf_buf str;          /* string literal being scanned */
    int str_bad;
    int oom;
    rf_ptrvec clauses;   /* rf_ast_clause* in source order */
    int64_t depth;       /* nesting depth guard */
    int too_deep;        /* nesting or an expression passed its limit (reported): the parse stopped */
};

int rf_lex_int(struct rf_parse_state *st, const char *text, rf_loc loc, int64_t *out);
int rf_lex_decimal(struct rf_parse_state *st, const char *text, rf_loc loc, int64_t *out);
int rf_lex_float(struct rf_parse_state *st, const char *text, rf_loc loc, double *out);

#endif
