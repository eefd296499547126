/*
** frontend/parser.y: the LogiQL grammar (reentrant bison with locations).
**
** Owns: the shape of clauses, formulas and expressions. Builds rf_ast nodes
** in the parse state's arena. On a syntax error the parser skips to the end
** of the clause ('.') and goes on, so several errors are reported per run;
** the names of a dropped clause are kept (rf_parse_drop_clause) so that the
** checker does not call them undefined. A clause that runs into the next
** line's start where a '.' could end it is reported as a missing '.', just
** after its last token, and only that clause is dropped.
** Precedence, loosest first: ';' then ',' then '!' then comparisons, then
** '+' '-', then '*' '/' '%', then unary minus.
*/
%define api.pure full
%define api.prefix {rf_yy}
%define api.token.prefix {RF_TOK_}
%define parse.error custom
%locations
%param {void *scanner}
%parse-param {struct rf_parse_state *st}
%expect 0

%code requires {
#include "parse_state.h"
typedef struct rf_exprlist { rf_ast_expr **items; int32_t n, cap; } rf_exprlist;
typedef struct rf_formlist { rf_ast_formula **items; int32_t n, cap; } rf_formlist;
typedef struct rf_atomlist { rf_ast_atom **items; int32_t n, cap; } rf_atomlist;
typedef struct rf_agglist { rf_ast_agg *items; int32_t n, cap; } rf_agglist;
}

%union {
    int64_t ival;
    double fval;
    const char *name;
    struct { const char *p; int64_t len; } str;
    rf_ast_expr *expr;
    rf_ast_formula *form;
    rf_ast_atom *atom;
    rf_exprlist exprs;
    rf_atomlist atoms;
    rf_agglist aggs;
    rf_ast_agg agg;
    int cmp;
}

%code {
#include <stdlib.h>
#include <string.h>
int rf_yylex(RF_YYSTYPE *lval, RF_YYLTYPE *lloc, void *scanner);
static void rf_yyerror(RF_YYLTYPE *l, void *scanner, struct rf_parse_state *st, const char *msg);
static rf_loc L(struct rf_parse_state *st, RF_YYLTYPE l) { rf_loc r = {st->file, l.first_line, l.first_column}; return r; }
#define A (st->arena)
#define NEED(p) do { if (!(p)) { st->oom = 1; YYABORT; } } while (0)
/* bison's stack limit: deeper nesting is reported as "nested too deeply" */
#define YYMAXDEPTH RF_AST_MAX_PARSE_DEPTH
/* An expression node over operands whose height is known: its own height, or
** an error (and the parse stops) past RF_AST_MAX_EXPR_HEIGHT. */
#define HEIGHT(e, h) HEIGHT_AT(e, h, (e)->loc)
#define HEIGHT_AT(e, h, at) do { \
        (e)->height = (h); \
        if ((e)->height > RF_AST_MAX_EXPR_HEIGHT) { \
            rf_error(st->diags, (at), "expression nested too deeply (more than %d levels): compute part of it in a rule of its own", \
                     RF_AST_MAX_EXPR_HEIGHT); \
            st->too_deep = 1; \
            YYABORT; \
        } \
    } while (0)

static int grow(void **items, int32_t *cap, int32_t n, size_t size, rf_arena *a)
{
    if (n < *cap) return 0;
    int32_t ncap = *cap ? *cap * 2 : 4;
    void *m = rf_arena_alloc(a, (size_t)ncap * size);
    if (!m) return -1;
    if (n) memcpy(m, *items, (size_t)n * size);
    *items = m;
    *cap = ncap;
    return 0;
}
#define PUSH(list, x) do { if (grow((void **)&(list).items, &(list).cap, (list).n, sizeof *(list).items, A)) { st->oom = 1; YYABORT; } (list).items[(list).n++] = (x); } while (0)

/* l op r. A left operand that is already a chain of op gets r appended (in
** place: the parser owns it), so that x + x + ... + x is one node of n
** operands, not a tree n levels deep; evaluated left to right it is the
** same computation. Its height: one more than its highest operand's. */
static rf_ast_expr *binop(struct rf_parse_state *st, char op, rf_ast_expr *l, rf_ast_expr *r, rf_loc loc)
{
    rf_ast_expr *e = l;
    if (l->kind != RF_AST_BINOP || l->op != op) {
        e = rf_ast_expr_new(st->arena, RF_AST_BINOP, loc);
        if (!e) return NULL;
        e->op = op;
        if (grow((void **)&e->args, &e->capargs, 0, sizeof *e->args, st->arena)) return NULL;
        e->oplocs = rf_arena_alloc(st->arena, (size_t)e->capargs * sizeof *e->oplocs);
        if (!e->oplocs) return NULL;
        e->args[0] = l;
        e->oplocs[0] = loc;
        e->nargs = 1;
        e->height = l->height + 1;
    } else if (e->nargs == e->capargs) {
        int32_t cap = e->capargs;
        rf_loc *nl = rf_arena_alloc(st->arena, (size_t)cap * 2 * sizeof *nl);
        if (!nl || grow((void **)&e->args, &e->capargs, e->nargs, sizeof *e->args, st->arena)) return NULL;
        memcpy(nl, e->oplocs, (size_t)cap * sizeof *nl);
        e->oplocs = nl;
    }
    e->oplocs[e->nargs] = loc;
    e->args[e->nargs++] = r;
    if (r->height + 1 > e->height) e->height = r->height + 1;
    return e;
}
/* l, r (likewise l ; r) as one flat AND (OR): a left operand that already
** is one gets r's items appended in place (the parser owns it), so that a
** body of n literals is built in time linear in n. items has room for
** capitems. */
static int push_item(struct rf_parse_state *st, rf_ast_formula *f, rf_ast_formula *x)
{
    if (f->nitems == f->capitems) {
        int32_t ncap = f->capitems ? f->capitems * 2 : 4;
        rf_ast_formula **m = rf_arena_alloc(st->arena, (size_t)ncap * sizeof *m);
        if (!m) return -1;
        if (f->nitems) memcpy(m, f->items, (size_t)f->nitems * sizeof *m);
        f->items = m;
        f->capitems = ncap;
    }
    f->items[f->nitems++] = x;
    return 0;
}
static rf_ast_formula *joinf(struct rf_parse_state *st, rf_ast_formula_kind k, rf_ast_formula *l, rf_ast_formula *r)
{
    rf_ast_formula *f = l;
    if (l->kind != k) {
        if (!(f = rf_ast_formula_new(st->arena, k, l->loc)) || push_item(st, f, l)) return NULL;
    }
    if (r->kind == k) {
        for (int32_t j = 0; j < r->nitems; j++)
            if (push_item(st, f, r->items[j])) return NULL;
    } else if (push_item(st, f, r)) {
        return NULL;
    }
    return f;
}
/* c, ending with the '.' at dot; dropped when the lexer skipped a character
** of it: parsed without that character, it would give errors that only
** echo the lexer's (`p(é) <- e(é).`: "`e` takes 1 argument, but 0 are given") */
static void add_clause(struct rf_parse_state *st, rf_ast_clause *c, RF_YYLTYPE dot)
{
    if (rf_parse_clause_skipped(st, dot.first_line, dot.first_column)) return;
    if (c && rf_ptrvec_push(&st->clauses, c)) st->oom = 1;
}
}

%token EOF 0 "end of file"
%token LARROW "<-" RARROW "->" AGGOPEN "<<" AGGCLOSE ">>"
%token LE "<=" GE ">=" NE "!=" LT "<" GT ">" EQ "="
%token NOT "!" LPAREN "(" RPAREN ")" LBRACKET "[" RBRACKET "]"
%token COMMA "," SEMI ";" DOT "." PLUS "+" MINUS "-" STAR "*" SLASH "/" PERCENT "%"
%token AGG "agg" WILDCARD "_"
%token <ival> INT "integer" DECIMAL "decimal" BOOL "boolean"
%token <fval> FLOAT "float"
%token <str> STRING "string"
%token <name> NAME "name" PREDREF "predicate reference"

%type <expr> expr term factor primary
%type <exprs> exprs exprs1
%type <form> formula conj lit
%type <atom> atom headatom
%type <atoms> heads
%type <aggs> aggs
%type <agg> aggone
%type <cmp> cmpop

%%

program
    : %empty
    | program clause
    ;

clause
    : heads DOT {
        rf_ast_clause *c = rf_arena_alloc(A, sizeof *c); NEED(c);
        c->kind = RF_CLAUSE_RULE; c->loc = L(st, @1);
        c->heads = $1.items; c->nheads = $1.n;
        add_clause(st, c, @2);
      }
    | heads LARROW formula DOT {
        rf_ast_clause *c = rf_arena_alloc(A, sizeof *c); NEED(c);
        c->kind = RF_CLAUSE_RULE; c->loc = L(st, @1);
        c->heads = $1.items; c->nheads = $1.n; c->body = $3;
        add_clause(st, c, @4);
      }
    | heads LARROW AGG AGGOPEN aggs AGGCLOSE formula DOT {
        rf_ast_clause *c = rf_arena_alloc(A, sizeof *c); NEED(c);
        c->kind = RF_CLAUSE_RULE; c->loc = L(st, @1);
        c->heads = $1.items; c->nheads = $1.n; c->body = $7;
        c->aggs = $5.items; c->naggs = $5.n; c->agg_loc = L(st, @3);
        add_clause(st, c, @8);
      }
    | heads RARROW formula DOT {
        rf_ast_clause *c = rf_arena_alloc(A, sizeof *c); NEED(c);
        c->kind = RF_CLAUSE_DECL; c->loc = L(st, @1);
        c->heads = $1.items; c->nheads = $1.n; c->body = $3;
        add_clause(st, c, @4);
      }
    | heads RARROW DOT {
        rf_ast_clause *c = rf_arena_alloc(A, sizeof *c); NEED(c);
        c->kind = RF_CLAUSE_DECL; c->loc = L(st, @1);
        c->heads = $1.items; c->nheads = $1.n; c->body = NULL;
        add_clause(st, c, @3);
      }
    | error DOT { rf_parse_drop_clause(st); yyerrok; }
    ;

heads
    : headatom { $$ = (rf_atomlist){0, 0, 0}; PUSH($$, $1); }
    | heads COMMA headatom { $$ = $1; PUSH($$, $3); }
    ;

headatom
    : atom { $$ = $1; }
    | NAME LBRACKET exprs RBRACKET EQ expr {
        $$ = rf_arena_alloc(A, sizeof *$$); NEED($$);
        $$->name = $1; $$->loc = L(st, @1); $$->functional = 1;
        rf_exprlist l = $3; PUSH(l, $6);
        $$->args = l.items; $$->nargs = l.n;
      }
    ;

atom
    : NAME LPAREN exprs RPAREN {
        $$ = rf_arena_alloc(A, sizeof *$$); NEED($$);
        $$->name = $1; $$->loc = L(st, @1);
        $$->args = $3.items; $$->nargs = $3.n;
      }
    ;

aggs
    : aggone { $$ = (rf_agglist){0, 0, 0}; PUSH($$, $1); }
    | aggs COMMA aggone { $$ = $1; PUSH($$, $3); }
    ;

aggone
    : NAME EQ NAME LPAREN RPAREN { $$ = (rf_ast_agg){$1, $3, NULL, L(st, @3)}; }
    | NAME EQ NAME LPAREN expr RPAREN { $$ = (rf_ast_agg){$1, $3, $5, L(st, @3)}; }
    ;

formula
    : conj { $$ = $1; }
    | formula SEMI conj { $$ = joinf(st, RF_FORM_OR, $1, $3); NEED($$); }
    ;

conj
    : lit { $$ = $1; }
    | conj COMMA lit { $$ = joinf(st, RF_FORM_AND, $1, $3); NEED($$); }
    ;

lit
    : atom {
        $$ = rf_ast_formula_new(A, RF_FORM_ATOM, $1->loc); NEED($$);
        $$->atom = *$1;
      }
    | NOT lit {
        $$ = rf_ast_formula_new(A, RF_FORM_NOT, L(st, @1)); NEED($$);
        $$->sub = $2;
        /* `!(a(x, z))` negates a conjunction of one literal: its variables
        ** used nowhere else are existential, as in `!(a(x, z), z > 0)`;
        ** `!a(x, z)` is a negated atom, whose variables must be bound */
        if ($2->paren && ($2->kind == RF_FORM_ATOM || $2->kind == RF_FORM_CMP)) {
            rf_ast_formula *c = rf_ast_formula_new(A, RF_FORM_AND, $2->loc); NEED(c);
            if (push_item(st, c, $2)) { st->oom = 1; YYABORT; }
            $$->sub = c;
        }
      }
    | expr cmpop expr {
        $$ = rf_ast_formula_new(A, RF_FORM_CMP, L(st, @2)); NEED($$);
        $$->op = (rf_cmp_op)$2; $$->lhs = $1; $$->rhs = $3;
      }
    | LPAREN formula RPAREN { $$ = $2; $$->paren = 1; }
    ;

cmpop
    : EQ { $$ = RF_CMP_EQ; } | NE { $$ = RF_CMP_NE; } | LT { $$ = RF_CMP_LT; }
    | LE { $$ = RF_CMP_LE; } | GT { $$ = RF_CMP_GT; } | GE { $$ = RF_CMP_GE; }
    ;

expr
    : term { $$ = $1; }
    | expr PLUS term { $$ = binop(st, '+', $1, $3, L(st, @2)); NEED($$); HEIGHT_AT($$, $$->height, L(st, @2)); }
    | expr MINUS term { $$ = binop(st, '-', $1, $3, L(st, @2)); NEED($$); HEIGHT_AT($$, $$->height, L(st, @2)); }
    ;

term
    : factor { $$ = $1; }
    | term STAR factor { $$ = binop(st, '*', $1, $3, L(st, @2)); NEED($$); HEIGHT_AT($$, $$->height, L(st, @2)); }
    | term SLASH factor { $$ = binop(st, '/', $1, $3, L(st, @2)); NEED($$); HEIGHT_AT($$, $$->height, L(st, @2)); }
    | term PERCENT factor { $$ = binop(st, '%', $1, $3, L(st, @2)); NEED($$); HEIGHT_AT($$, $$->height, L(st, @2)); }
    ;

factor
    : primary { $$ = $1; }
    | MINUS factor {
        /* fold -literal here so that -9223372036854775808 stays exact; a
        ** literal already negated to -2^63 is not folded again (its negation,
        ** 2^63, is out of range: the checker reports the overflow) */
        if (($2->kind == RF_AST_INT && !($2->op == '~' && $2->ival == INT64_MIN)) || $2->kind == RF_AST_DECIMAL) {
            $$ = $2; $$->ival = (int64_t)(0 - (uint64_t)$2->ival); $$->loc = L(st, @1); $$->op = '~';
        } else if ($2->kind == RF_AST_FLOAT) {
            $$ = $2; $$->fval = rf_val_float_canon(-$2->fval); $$->loc = L(st, @1); /* -0.0f is 0.0f */
        } else {
            $$ = rf_ast_expr_new(A, RF_AST_NEG, L(st, @1)); NEED($$); $$->lhs = $2;
            HEIGHT($$, $2->height + 1);
        }
      }
    ;

primary
    : NAME { $$ = rf_ast_expr_new(A, RF_AST_VAR, L(st, @1)); NEED($$); $$->name = $1; }
    | WILDCARD { $$ = rf_ast_expr_new(A, RF_AST_WILDCARD, L(st, @1)); NEED($$); }
    | INT { $$ = rf_ast_expr_new(A, RF_AST_INT, L(st, @1)); NEED($$); $$->ival = $1; }
    | DECIMAL { $$ = rf_ast_expr_new(A, RF_AST_DECIMAL, L(st, @1)); NEED($$); $$->ival = $1; }
    | FLOAT { $$ = rf_ast_expr_new(A, RF_AST_FLOAT, L(st, @1)); NEED($$); $$->fval = $1; }
    | BOOL { $$ = rf_ast_expr_new(A, RF_AST_BOOL, L(st, @1)); NEED($$); $$->ival = $1; }
    | STRING {
        $$ = rf_ast_expr_new(A, RF_AST_STRING, L(st, @1)); NEED($$);
        $$->sval = $1.p; $$->slen = $1.len;
      }
    | PREDREF { $$ = rf_ast_expr_new(A, RF_AST_PREDREF, L(st, @1)); NEED($$); $$->sval = $1; }
    | NAME LBRACKET exprs RBRACKET {
        $$ = rf_ast_expr_new(A, RF_AST_APPLY, L(st, @1)); NEED($$);
        $$->name = $1; $$->args = $3.items; $$->nargs = $3.n;
        int32_t h = 0;
        for (int32_t i = 0; i < $3.n; i++)
            if ($3.items[i]->height > h) h = $3.items[i]->height;
        HEIGHT($$, h + 1);
      }
    | LPAREN expr RPAREN { $$ = $2; }
    ;

exprs
    : %empty { $$ = (rf_exprlist){0, 0, 0}; }
    | exprs1 { $$ = $1; }
    ;

exprs1
    : expr { $$ = (rf_exprlist){0, 0, 0}; PUSH($$, $1); }
    | exprs1 COMMA expr { $$ = $1; PUSH($$, $3); }
    ;

%%

static void rf_yyerror(RF_YYLTYPE *l, void *scanner, struct rf_parse_state *st, const char *msg)
{
    (void)scanner;
    if (!strcmp(msg, "memory exhausted") && !st->oom) {
        /* the parser's stack is full: nesting, not memory */
        rf_error(st->diags, L(st, *l), "nested too deeply (more than %d levels of parentheses, brackets and prefix operators)",
                 RF_AST_MAX_PARSE_DEPTH);
        st->too_deep = 1;
        return;
    }
    /* bison's own messages ("memory exhausted"); syntax errors come through
    ** yyreport_syntax_error */
    rf_error(st->diags, L(st, *l), "%s", msg);
}

/* A token kind as users know it: its spelling in quotes, or what it is
** ("name", "integer", "end of file"). */
static void token_text(rf_buf *b, yysymbol_kind_t k)
{
    const char *n = yysymbol_name(k);
    if (k == YYSYMBOL_YYEOF || k >= YYSYMBOL_INT) rf_buf_puts(b, n);
    else rf_buf_printf(b, "'%s'", n);
}

static int yyreport_syntax_error(const yypcontext_t *ctx, void *scanner, struct rf_parse_state *st)
{
    (void)scanner;
    enum { MAX_EXPECTED = 6 };
    yysymbol_kind_t exp[MAX_EXPECTED];
    int nexp = yypcontext_expected_tokens(ctx, exp, MAX_EXPECTED);
    yysymbol_kind_t got = yypcontext_token(ctx);
    const RF_YYLTYPE *at = yypcontext_location(ctx);
    int dot_expected = 0;
    for (int i = 0; i < nexp; i++) dot_expected |= exp[i] == YYSYMBOL_DOT;
    if (nexp == 0 && got != YYSYMBOL_DOT) {
        /* more than MAX_EXPECTED: ask whether '.' is one of them */
        yysymbol_kind_t all[64];
        int nall = yypcontext_expected_tokens(ctx, all, 64);
        for (int i = 0; i < nall; i++) dot_expected |= all[i] == YYSYMBOL_DOT;
    }
    /* the clause ends at a line end but has no '.': say so where it ends */
    if (dot_expected && st->prev_end_line > 0 && (got == YYSYMBOL_YYEOF || at->first_line > st->prev_end_line)) {
        rf_error(st->diags, rf_mkloc(st->file, st->prev_end_line, st->prev_end_col),
                 "syntax error: missing '.' at the end of this clause");
        /* recovery drops this clause; the lexer then gives a '.' and the
        ** skipped token again, so the next clause is still checked */
        st->replay = 1;
        return 0;
    }
    rf_buf b;
    rf_buf_init(&b);
    rf_buf_puts(&b, "syntax error: unexpected ");
    token_text(&b, got);
    if (nexp > 0) {
        rf_buf_puts(&b, ", expecting ");
        for (int i = 0; i < nexp; i++) {
            rf_buf_puts(&b, i == 0 ? "" : i + 1 == nexp ? " or " : ", ");
            token_text(&b, exp[i]);
        }
    }
    rf_error(st->diags, L(st, *at), "%s", b.oom ? "syntax error" : rf_buf_cstr(&b));
    rf_buf_free(&b);
    return 0;
}
