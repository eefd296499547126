/*
** frontend/parse.c: runs the lexer and parser over one source text and
** converts numeric literals. Owns nothing after it returns: the tree lives in
** the caller's arena.
*/
#include "rf_frontend.h"
#include "parse_state.h"
#include "parser.h"
#define YYSTYPE RF_YYSTYPE
#define YYLTYPE RF_YYLTYPE
#include "lexer.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int rf_lex_int(struct rf_parse_state *st, const char *text, rf_loc loc, int64_t *out)
{
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        unsigned d = (unsigned)(*p - '0');
        /* allow up to 2^63 so that -9223372036854775808 can be written */
        if (v > (UINT64_C(9223372036854775808) - d) / 10) {
            rf_error(st->diags, loc, "integer literal %s is out of range for int (64-bit)", text);
            return -1;
        }
        v = v * 10 + d;
    }
    /* 2^63 wraps to INT64_MIN: valid only under unary minus, which the parser
    ** marks (op '~'); the checker rejects it elsewhere. */
    *out = (int64_t)v;
    return 0;
}

int rf_lex_decimal(struct rf_parse_state *st, const char *text, rf_loc loc, int64_t *out)
{
    const char *dot = strchr(text, '.');
    int64_t frac_digits = (int64_t)strlen(dot + 1);
    /* trailing zeros beyond 6 digits are harmless: 1.5000000 is 1.5 */
    while (frac_digits > 6 && dot[frac_digits] == '0') frac_digits--;
    if (frac_digits > 6) {
        rf_error(st->diags, loc, "decimal literal %s has more than 6 fraction digits; use a float (%sf) for inexact values",
                 text, text);
        return -1;
    }
    __int128 v = 0;
    for (const char *p = text; p < dot; p++) {
        v = v * 10 + (*p - '0');
        if (v > (__int128)INT64_MAX) goto range;
    }
    for (int i = 0; i < 6; i++) {
        v = v * 10 + (i < frac_digits ? dot[1 + i] - '0' : 0);
        if (v > (__int128)INT64_MAX) goto range;
    }
    *out = (int64_t)v;
    return 0;
range:
    rf_error(st->diags, loc, "decimal literal %s is out of range (at most 9223372036854.775807)", text);
    return -1;
}

int rf_lex_float(struct rf_parse_state *st, const char *text, rf_loc loc, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno == ERANGE && isinf(v)) {
        rf_error(st->diags, loc, "float literal %s is out of range", text);
        return -1;
    }
    *out = v;
    return 0;
}

rf_status rf_fe_parse(const char *file, const char *src, int64_t len, rf_arena *arena,
                      rf_ast_program **out, rf_diags *diags)
{
    *out = NULL;
    struct rf_parse_state st;
    memset(&st, 0, sizeof st);
    st.file = file;
    st.arena = arena;
    st.diags = diags;
    st.line = 1;
    st.col = 1;
    /* a UTF-8 byte order mark, as some editors save a file, is no part of
    ** the program (input files skip it too); columns count after it, as an
    ** editor shows them */
    if (len >= 3 && !memcmp(src, "\xef\xbb\xbf", 3)) {
        src += 3;
        len -= 3;
    }
    if (memchr(src, 0, (size_t)len)) {
        const char *z = memchr(src, 0, (size_t)len);
        int32_t line = 1, col = 1;
        for (const char *p = src; p < z; p++) {
            if (*p == '\n') { line++; col = 1; } else col++;
        }
        rf_error(diags, rf_mkloc(file, line, col), "NUL byte in source file");
        return RF_EUSER;
    }
    yyscan_t scanner;
    if (rf_yylex_init_extra(&st, &scanner)) return RF_ENOMEM;
    YY_BUFFER_STATE b = rf_yy_scan_bytes(src, (int)(len > INT32_MAX ? INT32_MAX : len), scanner);
    int rc = rf_yyparse(scanner, &st);
    rf_yy_delete_buffer(b, scanner);
    rf_yylex_destroy(scanner);
    rf_buf_free(&st.str);
    if (rc != 0) {
        /* the input ended inside a broken clause: its names are unreliable too */
        st.clause_mark = st.dot_mark;
        rf_parse_drop_clause(&st);
    }
    rf_ast_program *p = st.oom ? NULL : rf_arena_alloc(arena, sizeof *p);
    if (p) {
        p->file = file;
        p->nclauses = st.clauses.count;
        p->clauses = rf_arena_alloc(arena, (size_t)(st.clauses.count + 1) * sizeof *p->clauses);
        p->nbroken_names = st.broken.count;
        p->broken_names = rf_arena_alloc(arena, (size_t)(st.broken.count + 1) * sizeof *p->broken_names);
        p->ncut_names = st.cut_names.count;
        p->cut_names = rf_arena_alloc(arena, (size_t)(st.cut_names.count + 1) * sizeof *p->cut_names);
        if (p->clauses && p->broken_names && p->cut_names) {
            for (int64_t i = 0; i < st.clauses.count; i++) p->clauses[i] = st.clauses.items[i];
            for (int64_t i = 0; i < st.broken.count; i++) p->broken_names[i] = st.broken.items[i];
            for (int64_t i = 0; i < st.cut_names.count; i++) p->cut_names[i] = st.cut_names.items[i];
        } else {
            p = NULL;
        }
    }
    rf_ptrvec_free(&st.clauses);
    rf_ptrvec_free(&st.names);
    rf_ptrvec_free(&st.broken);
    rf_ptrvec_free(&st.cut_names);
    if (!p) return RF_ENOMEM;
    *out = p;
    if (len > INT32_MAX) {
        rf_error(diags, rf_mkloc(file, 0, 0), "source file larger than 2 GiB");
        return RF_EUSER;
    }
    if (rc == 2 && !st.too_deep) return RF_ENOMEM;
    return (rc != 0 || diags->nerrors) ? RF_EUSER : RF_OK;
}
