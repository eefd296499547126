/*
** frontend/rf_frontend.h: the public interface of the front end.
**
** Owns: parsing (source text -> rf_ast_program) and checking (AST -> the
** checked, desugared, stratified rf_fe_program). A checked program has no
** disjunction, no nested functional applications, no multi-atom heads and
** no wildcards in expressions: every rule is one head atom over variables
** and constants, and a body of atoms, comparisons, assignments and built-in
** predicates, each variable typed. All of it lives in the rf_arena passed in.
*/
#ifndef RF_FRONTEND_H
#define RF_FRONTEND_H

#include "rf_ast.h"
#include "rf_common.h"
#include "rf_value.h"

/* ---- built-ins ------------------------------------------------------- */

typedef enum rf_builtin {
    RF_BI_NONE = 0,
    RF_BI_LIKE,          /* string:like(s, pattern)           predicate */
    RF_BI_SUBSTRING,     /* string:substring[s, start, len]  string */
    RF_BI_LENGTH,        /* string:length[s]                  int */
    RF_BI_DATE_PARSE,    /* date:parse[s]                     date */
    RF_BI_YEAR,          /* date:year[d]                      int */
    RF_BI_MONTH,
    RF_BI_DAY,
    RF_BI_ADD_DAYS,      /* date:add_days[d, n]               date */
    RF_BI_ADD_MONTHS,
    RF_BI_ADD_YEARS,
    RF_BI_INT_FLOAT,     /* int:float[x] */
    RF_BI_INT_DECIMAL,   /* int:decimal[x] */
    RF_BI_DECIMAL_FLOAT, /* decimal:float[x] */
    RF_BI_FLOAT_DECIMAL, /* float:decimal[x] */
    RF_BI_BITAND,        /* int:bitand[x, y]                  int: bitwise, two's complement */
    RF_BI_BITOR,         /* int:bitor[x, y] */
    RF_BI_BITXOR,        /* int:bitxor[x, y] */
    RF_BI_BITNOT,        /* int:bitnot[x] */
    RF_BI_SHL,           /* int:shl[x, n]: n in 0..63, else a run-time error */
    RF_BI_SHR,           /* int:shr[x, n]: arithmetic */
    RF_BI_INT_MIN,       /* int:min[x, y]: the smaller */
    RF_BI_INT_MAX,       /* int:max[x, y]: the larger */
    RF_BI_COUNT_
} rf_builtin;

typedef struct rf_builtin_info {
    rf_builtin id;
    const char *name;
    int is_predicate; /* used as p(args) rather than f[args] = v */
    int32_t nargs;
    rf_type args[3];
    rf_type result;   /* functions only */
} rf_builtin_info;

/* NULL when name is not a built-in. */
const rf_builtin_info *rf_fe_builtin_lookup(const char *name);
const rf_builtin_info *rf_fe_builtin_info(rf_builtin id);
/* The i-th built-in, or NULL past the last (for suggestions). */
const rf_builtin_info *rf_fe_builtin_at(int64_t i);
/* The type names usable in declarations: int, float, decimal, string, boolean, date. */
int rf_fe_type_from_name(const char *name, rf_type *out);

/* ---- the checked program ---------------------------------------------- */

/* A constant. i holds int, decimal (scaled), boolean and date values. */
typedef struct rf_fe_const {
    rf_type type;
    int64_t i; /* int, decimal (scaled by 10^6), boolean, date; a wide decimal's
                  constant (RF_TYPE_DEC128) holds a value in decimal's range here:
                  constants come from the source, whose decimals are 64-bit */
    double f;
    const char *s; /* strings: bytes, NUL-terminated; slen the length */
    int64_t slen;
} rf_fe_const;

typedef enum rf_fe_expr_kind {
    RF_FE_VAR,   /* var */
    RF_FE_CONST, /* c */
    RF_FE_BINOP, /* op in + - * / % (% on int only) over args[0..nargs), nargs >= 2, left to
                    right: ((args[0] op args[1]) op args[2]) ...; after type checking every
                    operand has the node's type (a chain whose partial result widens is split
                    there: a CAST of the chain so far starts the rest) */
    RF_FE_NEG,   /* args[0] */
    RF_FE_CALL,  /* fn, args: a built-in function */
    RF_FE_CAST   /* args[0] converted to type (numeric widening) */
} rf_fe_expr_kind;

typedef struct rf_fe_expr rf_fe_expr;
struct rf_fe_expr {
    rf_fe_expr_kind kind;
    rf_type type;
    rf_loc loc;
    int32_t var;
    rf_fe_const c;
    char op;
    rf_builtin fn;
    rf_fe_expr **args;
    int32_t nargs;
    const rf_loc *oplocs; /* BINOP: where the operator before args[i] is (i >= 1), or NULL */
};

typedef struct rf_fe_pred rf_fe_pred;
typedef struct rf_fe_rule rf_fe_rule;

typedef enum rf_fe_lit_kind {
    RF_FE_ATOM,    /* [!] pred(args): args are VAR or CONST */
    RF_FE_BUILTIN, /* [!] fn(args): a built-in predicate */
    RF_FE_CMP,     /* lhs op rhs, all variables bound before */
    RF_FE_ASSIGN,  /* var = rhs: binds var */
    RF_FE_OR       /* alts[0] ; alts[1] ; ...: each a conjunction of CMP literals whose
                      variables are all bound by the rest of the body (one filter) */
} rf_fe_lit_kind;

typedef struct rf_fe_lit {
    rf_fe_lit_kind kind;
    rf_loc loc;
    int negated;
    rf_fe_pred *pred;
    rf_builtin fn;
    rf_fe_expr **args;
    int32_t nargs;
    rf_cmp_op op;
    rf_fe_expr *lhs, *rhs;
    int32_t var;
    struct rf_fe_lit ***alts; /* OR: nalts conjunctions of altn[i] CMP literals */
    int32_t *altn;
    int32_t nalts;
} rf_fe_lit;

typedef struct rf_fe_var {
    const char *name; /* "_" plus a number for wildcards and temporaries */
    rf_type type;
    rf_loc loc;       /* first occurrence */
    int wildcard;     /* from '_': never read after its atom */
    int temp;         /* introduced by desugaring */
} rf_fe_var;

typedef enum rf_agg_fn { RF_AGG_TOTAL, RF_AGG_COUNT, RF_AGG_MIN, RF_AGG_MAX, RF_AGG_AVG } rf_agg_fn;
const char *rf_agg_fn_name(rf_agg_fn fn);

typedef struct rf_fe_agg {
    rf_agg_fn fn;
    int32_t out_var;
    int32_t arg_var; /* -1 for count() */
    rf_loc loc;
} rf_fe_agg;

struct rf_fe_rule {
    int32_t id;
    rf_loc loc;
    rf_fe_pred *head;
    rf_fe_expr **head_args; /* VAR or CONST, head->arity of them */
    rf_fe_lit **body;       /* evaluation-ready order: atoms, then the rest */
    int32_t nbody;
    rf_fe_var *vars;
    int32_t nvars;
    rf_fe_agg *aggs;        /* aggregation rule when naggs > 0 */
    int32_t naggs;
};

typedef struct rf_fe_order { int32_t col; int desc; } rf_fe_order;

struct rf_fe_pred {
    int32_t id;
    const char *name;
    rf_loc loc;
    int32_t arity;
    int functional;   /* f[keys] = value: the last column is the value */
    rf_type *types;
    const char **cols;
    int declared;
    int aux;          /* introduced by desugaring: 1 a shared body, 2 a negated conjunction */
    const char *shown; /* aux 2: the conjunction as written, !(a(x), b(x)), for messages */
    /* aux 2 whose conjunction is one atom and one disequality, !(q(k, _, c), c != v),
    ** that is "no row of q with these keys and another value than v" (the
    ** planner may test it per key): neq_pred is q; neq_map[j] for each column j
    ** of q is the column of this predicate its argument is (a key, >= 0), -1
    ** (existential) or -2 (c, the compared column); neq_v is the column of this
    ** predicate holding v. NULL when the conjunction has another shape. */
    const rf_fe_pred *neq_pred;
    const int32_t *neq_map;
    int32_t neq_v;
    /* lang: directives */
    const char *input_file;
    char delimiter;
    int header;
    int32_t *input_key;  /* lang:input:key: columns no two rows agree on (checked at load) */
    int32_t ninput_key;  /* 0: no key declared */
    const char *output_name;
    rf_fe_order *order;
    int32_t norder;
    int64_t limit;    /* -1: none */
    /* definition */
    rf_fe_rule **rules;
    int32_t nrules, caprules;
    int32_t stratum;
    int recursive;    /* in a recursive stratum */
    /* a recursive min or max (monotone.c): each key keeps its best value,
    ** which a better one replaces; lattice_fn says which (RF_AGG_MIN, _MAX) */
    int lattice;
    rf_agg_fn lattice_fn;
    /* a predicate of such a cycle that only carries candidate values from
    ** the improvements of one round to the aggregates of the next: it keeps
    ** no rows from earlier rounds */
    int lattice_transient;
};

typedef struct rf_fe_stratum {
    rf_fe_pred **preds;
    int32_t npreds;
    int recursive;
    int lattice;      /* holds a recursive min or max (rf_fe_pred.lattice) */
} rf_fe_stratum;

typedef struct rf_fe_program {
    const char *file;
    rf_fe_pred **preds;   /* in order of first appearance */
    int32_t npreds;
    rf_fe_rule **rules;   /* all rules, facts included, in source order */
    int32_t nrules;
    rf_fe_stratum *strata; /* evaluation order */
    int32_t nstrata;
} rf_fe_program;

/* Parses one source text. The tree is allocated in arena. Errors go to diags;
** returns RF_EUSER when there were any. */
rf_status rf_fe_parse(const char *file, const char *src, int64_t len, rf_arena *arena,
                      rf_ast_program **out, rf_diags *diags);

/* The namespaces `redfox_txn:` and `redfox_txn_*:` are reserved for the
** programs `redfox exec` generates (txn/, LANGUAGE.md, Transactions): no
** user program declares or defines a predicate there. */
#define RF_FE_TXN_NS "redfox_txn"

/* How the front end checks a program: zeroed (or NULL where a function takes
** a pointer), as every user program is checked. */
typedef struct rf_fe_options {
    /* the name of the one source (one of the names given to
    ** rf_fe_load_sources_opts) whose clauses may declare and define
    ** predicates in the RF_FE_TXN_NS namespaces: the text `redfox exec`
    ** generates, and only exec sets it; NULL: none may */
    const char *txn_source;
} rf_fe_options;

/* Resolves names, desugars, infers and checks types, checks safety and
** stratifies. Returns RF_EUSER with diagnostics when the program is wrong. */
rf_status rf_fe_check(const rf_ast_program *ast, rf_arena *arena, rf_fe_program **out,
                      rf_diags *diags);
/* The same under options o (NULL: the defaults). */
rf_status rf_fe_check_opts(const rf_ast_program *ast, const rf_fe_options *o, rf_arena *arena, rf_fe_program **out,
                           rf_diags *diags);

/* 1 when d is the checker's warning that the program has no lang:output:
** commands that read a program only for its input declarations (import,
** `tpch gen --format db`) leave it out, since they neither print nor write
** the program's outputs. */
int rf_fe_diag_is_no_output(const rf_diag *d);

/* Convenience: parse and check a whole file. */
rf_status rf_fe_load_file(const char *path, rf_arena *arena, rf_ast_program **ast,
                          rf_fe_program **prog, rf_diags *diags);

/* Several source files checked as one program (a shared schema and a query,
** say); each clause keeps its own file in its locations. */
rf_status rf_fe_load_files(const char *const *paths, int32_t n, rf_arena *arena, rf_ast_program **ast,
                           rf_fe_program **prog, rf_diags *diags);

/* The same for sources already in memory (texts[i] of lens[i] bytes named
** names[i]; names must outlive the program). */
rf_status rf_fe_load_sources(const char *const *names, const char *const *texts, const int64_t *lens, int32_t n,
                             rf_arena *arena, rf_ast_program **ast, rf_fe_program **prog, rf_diags *diags);
/* The same under options o (NULL: the defaults). */
rf_status rf_fe_load_sources_opts(const char *const *names, const char *const *texts, const int64_t *lens, int32_t n,
                                  const rf_fe_options *o, rf_arena *arena, rf_ast_program **ast, rf_fe_program **prog,
                                  rf_diags *diags);

/* The checked program in LogiQL-like text (for `redfox dump --rules`). */
void rf_fe_print_program(const rf_fe_program *p, rf_buf *out);
void rf_fe_expr_print(const rf_fe_rule *r, const rf_fe_expr *e, rf_buf *out);
void rf_fe_const_print(const rf_fe_const *c, rf_buf *out);
/* The name a dump gives a cast from one numeric type to another. */
const char *rf_fe_cast_name(rf_type from, rf_type to);
const char *rf_fe_type_name(rf_type t);

#endif
