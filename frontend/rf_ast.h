/*
** frontend/rf_ast.h: the abstract syntax tree of a LogiQL source file.
**
** Owns: the node types the parser builds. All nodes live in one rf_arena
** owned by the caller of rf_fe_parse; nothing here is freed individually.
** The tree is exactly what was written (no desugaring); rf_fe_check turns it
** into the checked program of rf_program.h.
*/
#ifndef RF_AST_H
#define RF_AST_H

#include "rf_common.h"

typedef enum rf_ast_expr_kind {
    RF_AST_VAR,      /* name */
    RF_AST_WILDCARD, /* _ */
    RF_AST_INT,      /* ival */
    RF_AST_DECIMAL,  /* ival: scaled by 10^6 */
    RF_AST_FLOAT,    /* fval */
    RF_AST_STRING,   /* sval, slen */
    RF_AST_BOOL,     /* ival 0/1 */
    RF_AST_DATE,     /* ival: days since 1970-01-01 (only from folding date:parse) */
    RF_AST_PREDREF,  /* `name: sval */
    RF_AST_BINOP,    /* op over args[0..nargs), nargs >= 2: ((args[0] op args[1]) op args[2]) ...
                        a left-associative chain of one operator, kept flat (a + b + c is one
                        node of three operands; a + (b + c) and a + b - c are two nodes) */
    RF_AST_NEG,      /* -lhs */
    RF_AST_APPLY     /* name[args]: a functional predicate or built-in used as a value */
} rf_ast_expr_kind;

typedef struct rf_ast_expr rf_ast_expr;
struct rf_ast_expr {
    rf_ast_expr_kind kind;
    rf_loc loc;
    char op;           /* BINOP: '+', '-', '*', '/', '%' (the whole chain) */
    const char *name;  /* VAR, APPLY */
    int64_t ival;
    double fval;
    const char *sval;  /* STRING (NUL-terminated, may hold NULs: slen is the length), PREDREF */
    int64_t slen;
    rf_ast_expr *lhs;   /* NEG */
    rf_ast_expr **args; /* APPLY, BINOP */
    int32_t nargs;
    int32_t capargs;    /* BINOP: room in args, for the parser's appends */
    rf_loc *oplocs;     /* BINOP: oplocs[i] is where the operator before args[i] is (i >= 1);
                           oplocs[0] the first operator's, as loc */
    int32_t height;     /* operators nested: 0 for a leaf, else 1 + the highest operand's (the parser keeps it
                           at most RF_AST_MAX_EXPR_HEIGHT, so every walk over an expression
                           recurses at most that deep) */
};

/* The deepest expression a program may hold: a nesting of more levels is
** an error ("expression nested too deeply") naming the operator where the
** limit is passed. A chain a + b + c + ... is one level however long it is. Each later stage's recursion over an
** expression is bounded by a small multiple of it (substituted assignments,
** composed maps: see RF_QP_MAX_EXPR_HEIGHT). */
#define RF_AST_MAX_EXPR_HEIGHT 1000
/* The parser's stack: parentheses, brackets and prefix operators ('-', '!')
** open at once. Deeper nesting is an error ("nested too deeply"). */
#define RF_AST_MAX_PARSE_DEPTH 4000

typedef enum rf_cmp_op { RF_CMP_EQ, RF_CMP_NE, RF_CMP_LT, RF_CMP_LE, RF_CMP_GT, RF_CMP_GE } rf_cmp_op;
const char *rf_cmp_op_name(rf_cmp_op op);

/* p(a, b) or, when functional, f[a] = b (the value is the last argument). */
typedef struct rf_ast_atom {
    const char *name;
    rf_loc loc;
    rf_ast_expr **args;
    int32_t nargs;
    int functional;
} rf_ast_atom;

typedef enum rf_ast_formula_kind {
    RF_FORM_ATOM, /* atom */
    RF_FORM_CMP,  /* op, lhs, rhs (f[x] = v in a body is a comparison with an APPLY) */
    RF_FORM_NOT,  /* sub */
    RF_FORM_AND,  /* items */
    RF_FORM_OR    /* items */
} rf_ast_formula_kind;

typedef struct rf_ast_formula rf_ast_formula;
struct rf_ast_formula {
    rf_ast_formula_kind kind;
    rf_loc loc;
    rf_ast_atom atom;
    rf_cmp_op op;
    rf_ast_expr *lhs, *rhs;
    rf_ast_formula *sub;
    rf_ast_formula **items;
    int32_t nitems;
    int32_t capitems; /* room in items (the parser appends) */
    uint8_t paren;    /* written in parentheses: `!(a)` is a conjunction of one */
};

/* One `v = func(arg)` inside agg<< >>. arg is NULL for count(). */
typedef struct rf_ast_agg {
    const char *var;
    const char *func;
    rf_ast_expr *arg;
    rf_loc loc;
} rf_ast_agg;

typedef enum rf_ast_clause_kind {
    RF_CLAUSE_DECL, /* heads[0] -> body (type atoms) */
    RF_CLAUSE_RULE  /* heads <- [agg] body; a fact when body is NULL */
} rf_ast_clause_kind;

typedef struct rf_ast_clause {
    rf_ast_clause_kind kind;
    rf_loc loc;
    rf_ast_atom **heads;
    int32_t nheads;
    rf_ast_formula *body; /* NULL for facts */
    rf_ast_agg *aggs;
    int32_t naggs;
    rf_loc agg_loc;
} rf_ast_clause;

/* A name the lexer found a bad character inside (ed$ge, edg\u20ac): its clause
** is dropped (the character's error said), and where the name stood before
** '(' or '[' the checker offers the predicate it most likely meant, in that
** error (suggest.c: rf_chk_cut_names). */
typedef struct rf_ast_cut_name {
    rf_loc loc;       /* of the first bad character: where its error is */
    const char *name; /* the name without its bad characters */
    int pred;         /* followed by '(' or '[': a predicate's place */
} rf_ast_cut_name;

typedef struct rf_ast_program {
    const char *file;
    rf_ast_clause **clauses;
    int64_t nclauses;
    /* names in clauses dropped for a syntax error: the checker does not call
    ** them undefined (the clause may have declared or defined them) */
    const char **broken_names;
    int64_t nbroken_names;
    rf_ast_cut_name **cut_names;
    int64_t ncut_names;
} rf_ast_program;

/* Node constructors used by the parser; all allocate in the arena. */
rf_ast_expr *rf_ast_expr_new(rf_arena *a, rf_ast_expr_kind kind, rf_loc loc);
rf_ast_formula *rf_ast_formula_new(rf_arena *a, rf_ast_formula_kind kind, rf_loc loc);

/* Writes the tree as indented text (for `redfox dump --ast`). */
void rf_ast_print_text(const rf_ast_program *p, rf_buf *out);
/* Writes the tree as YAML (libyaml emitter); RF_ENOMEM or RF_EINTERNAL on failure. */
rf_status rf_ast_print_yaml(const rf_ast_program *p, rf_buf *out);
/* Writes an expression in source syntax. */
void rf_ast_expr_print(const rf_ast_expr *e, rf_buf *out);

#endif
