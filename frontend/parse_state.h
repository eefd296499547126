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
    /* for error recovery and its messages (lexer.l's rf_yylex) */
    int32_t prev_end_line, prev_end_col; /* just after the token before the last */
    int32_t end_line, end_col;           /* just after the last token */
    rf_ptrvec names;     /* every NAME token's text, in order */
    int64_t clause_mark; /* names[] from here on are in the clause being read */
    int64_t dot_mark;    /* names[] up to here were read before the last '.' */
    rf_ptrvec broken;    /* names of clauses dropped for a syntax error */
    /* the last token read, kept so that after a missing '.' the lexer can
    ** hand the parser a '.' and then this token again (lexer.l's rf_yylex):
    ** the clause on the next line is then parsed, not skipped */
    int last_tok;
    _Alignas(16) unsigned char last_val[128]; /* its YYSTYPE */
    int32_t last_loc[4];                      /* its YYLTYPE */
    int replay;          /* 1: hand out a '.', 2: then last_tok again */
    int too_deep;        /* nesting or an expression passed its limit (reported): the parse stopped */
    /* the first character the lexer skipped (reported: a stray character,
    ** non-ASCII, a lone '`') since the last clause ended; 0: none. The
    ** parser sees the clause without it, so the clause is dropped as one
    ** with a syntax error is, instead of reporting errors that echo it */
    int32_t skipped_line, skipped_col;
    rf_ptrvec cut_names;          /* rf_ast_cut_name*, in order */
    rf_ast_cut_name *cut_pending; /* the last token was this cut name */
};

/* Marks the names of the clause that error recovery just dropped. */
void rf_parse_drop_clause(struct rf_parse_state *st);
/* 1 when the clause the parser just read, ending with the '.' at
** (dot_line, dot_col), held a character the lexer skipped: its names are
** then marked as a dropped clause's are, and the caller drops it. */
int rf_parse_clause_skipped(struct rf_parse_state *st, int32_t dot_line, int32_t dot_col);

int rf_lex_int(struct rf_parse_state *st, const char *text, rf_loc loc, int64_t *out);
int rf_lex_decimal(struct rf_parse_state *st, const char *text, rf_loc loc, int64_t *out);
int rf_lex_float(struct rf_parse_state *st, const char *text, rf_loc loc, double *out);

#endif
