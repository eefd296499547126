/*
** queryplan/rf_queryplan.h: the public interface of the query-plan stage.
**
** Owns: the query-plan IR (relations with typed columns and properties, and
** a control-flow graph of basic blocks of relational commands), the lowering
** from the checked program of the front end (rf_qp_build), the optimization
** passes (each runnable alone by name), a structural verifier, and the text,
** YAML and Graphviz printers. The next stage (Harmony) lowers from the
** structs below, so they are public and documented here.
**
** Memory: a plan owns one arena holding every node. It borrows predicate
** names, column names and constants from the front end's arena, so free the
** plan before that arena. Nothing here prints; problems go to rf_diags.
*/
#ifndef RF_QUERYPLAN_H
#define RF_QUERYPLAN_H

#include "rf_common.h"
#include "rf_frontend.h"
#include "rf_value.h"

/* ---- relations ------------------------------------------------------- */

typedef enum rf_qp_rel_kind {
    RF_QP_REL_INPUT,  /* loaded from input_file before the program starts */
    RF_QP_REL_PRED,   /* the full relation of a derived predicate */
    RF_QP_REL_DELTA,  /* semi-naive: the rows a recursive predicate gained in the last round */
    RF_QP_REL_NEW,    /* semi-naive: the rows derived this round that were not known */
    RF_QP_REL_TEMP,   /* an intermediate result; written once, read in its own block */
    RF_QP_REL_OUTPUT  /* the ordered and limited rows of an output predicate */
} rf_qp_rel_kind;

const char *rf_qp_rel_kind_name(rf_qp_rel_kind k);

/* Default estimated cardinality of an input relation whose size is unknown. */
#define RF_QP_DEFAULT_INPUT_CARD INT64_C(1000000)

/* A functional dependency over a relation's columns (bit c: column c < 64):
** any two rows that agree on the columns lhs agree on the columns rhs too
** (rows repeated whole included, so it holds of bags). Inferred from declared
** keys through maps and joins (qp_infer.c); at most RF_QP_MAX_FDS per
** relation, the rest are forgotten, which only loses precision. */
typedef struct rf_qp_fd {
    uint64_t lhs, rhs;
} rf_qp_fd;
#define RF_QP_MAX_FDS 8

typedef struct rf_qp_rel {
    int32_t id;              /* index in rf_qp_program.rels (renumbered by passes) */
    const char *name;        /* "edge", "path.delta", "path.new", "even.out", "t12" */
    rf_qp_rel_kind kind;
    int32_t ncols;
    rf_type *types;          /* ncols column types */
    const char **colnames;   /* ncols names; an entry may be NULL (unnamed) */
    const rf_fe_pred *pred;  /* the predicate held (all kinds but TEMP), else NULL */
    int32_t stratum;         /* the stratum of pred, -1 for temporaries */

    /* Properties. */
    int32_t nkeys;     /* >= 0: the first nkeys columns are a key (a functional dependency;
                          0: at most one row); -1: no key known */
    int fd_checked;    /* nkeys comes from a functional predicate: writers check it */
    uint64_t keyset;   /* columns (bit c: column c < 64) no two rows agree on; 0: none known.
                          From an input's lang:input:key, carried through maps and joins;
                          a dedupe's whole row, shrunk by fds */
    int32_t nfds;      /* functional dependencies fds[0..nfds) besides keyset and nkeys */
    rf_qp_fd fds[RF_QP_MAX_FDS];
    int unique;        /* duplicate-free (set semantics guaranteed) */
    int32_t nsort;     /* > 0: rows are sorted by sort[0..nsort) */
    rf_fe_order *sort; /* columns and directions of the known order */
    int64_t card;      /* estimated number of rows (saturating) */
    int card_exact;    /* card is exact (facts) */

    /* INPUT: the lang:input settings. */
    const char *input_file;
    char delimiter;
    int header;
    const int32_t *input_key; /* lang:input:key columns (checked by the loader) */
    int32_t ninput_key;
    /* OUTPUT: the lang:output settings (order always filled: default all columns ascending). */
    const char *output_name;
    const rf_fe_order *order;
    int32_t norder;
    int64_t limit;     /* -1: none */
} rf_qp_rel;

/* ---- scalar expressions ---------------------------------------------- */

/* Expressions are evaluated per row (MapFilter) or per pair of rows (MapJoin)
** of a command's inputs. Column references name the input side (0 left or
** only input, 1 right input of a join) and the 0-based column there.
** Run-time errors (overflow, division by zero, dates out of range) stop the
** program, so evaluation order matters: the conjuncts of an AND are
** evaluated left to right and stop at the first false one (a guard such as
** y != 0 protects a later x / y), and a command's outs are evaluated only
** for rows that pass its filter. The passes keep conjuncts in that order. */
typedef enum rf_qp_expr_kind {
    RF_QP_E_COL,   /* side, col */
    RF_QP_E_CONST, /* c */
    RF_QP_E_BINOP, /* op in + - * / over args[0..nargs), nargs >= 2, all of the node's type,
                      left to right: ((args[0] op args[1]) op args[2]) ... (a chain: never
                      reassociated); % on ints; + on strings concatenates */
    RF_QP_E_NEG,   /* -args[0] */
    RF_QP_E_CALL,  /* fn(args): a built-in function of rf_frontend.h */
    RF_QP_E_CAST,  /* args[0] converted to type: int->decimal, int->float, decimal->float */
    RF_QP_E_CMP,   /* args[0] cmp args[1], both of one type; boolean */
    RF_QP_E_AND,   /* args[0] and ... args[nargs-1]; boolean */
    RF_QP_E_NOT,   /* not args[0]; boolean */
    RF_QP_E_LIKE   /* string:like(args[0], args[1]); boolean */
} rf_qp_expr_kind;

/* Bounds on one expression of a plan. Source expressions are at most
** RF_AST_MAX_EXPR_HEIGHT deep; substituting assigned variables and composing
** maps may deepen and grow them, up to these bounds (beyond them the builder
** reports an error naming the literal, and the passes keep maps apart), so
** that every later walk over an expression (folding, printing, .rfx files,
** code generation, evaluation) recurses at most RF_QP_MAX_EXPR_HEIGHT deep,
** and NVRTC, whose time grows faster than a kernel's code, gets kernels it
** compiles in seconds (measured: 1,000 chained additions 1.4 s, 2,000: 8 s,
** 3,600: 48 s of CPU). */
#define RF_QP_MAX_EXPR_HEIGHT 1100
#define RF_QP_MAX_EXPR_NODES 1000000

typedef struct rf_qp_expr rf_qp_expr;
struct rf_qp_expr {
    rf_qp_expr_kind kind;
    rf_type type;        /* the result type (boolean for predicates) */
    int32_t side, col;   /* COL */
    rf_fe_const c;       /* CONST */
    char op;             /* BINOP */
    rf_cmp_op cmp;       /* CMP */
    rf_builtin fn;       /* CALL */
    rf_qp_expr **args;
    int32_t nargs;
};

/* ---- commands -------------------------------------------------------- */

/* Every command computes one result and overwrites its destination with it
** (a command inside a loop recomputes it each round). Temporaries have bag
** semantics (they may hold duplicates); Union, Difference, Unique and
** Aggregate produce sets. */
typedef enum rf_qp_op {
    RF_QP_MAPFILTER,  /* in[0]; rows where filter holds, projected to outs (over side 0) */
    RF_QP_MAPJOIN,    /* in[0] x in[1] on lkeys[i] = rkeys[i] (nkeys 0: cross product),
                         then filter and outs over both sides */
    RF_QP_ANTIJOIN,   /* rows of in[0] with no row of in[1] matching on the key pairs
                         (nkeys 0: all rows when in[1] is empty, else none), projected
                         to outs (over side 0 only) */
    RF_QP_AGGREGATE,  /* in[0] grouped by group[] columns; dst = group columns, then one
                         column per aggs[]; no group columns: one row, or none when empty.
                         Every row of in[0] counts (LogiQL's body solutions, the distinct
                         bindings of all atom columns, come from the Unique that the
                         lowering puts before it, or from rows known to be distinct) */
    RF_QP_UNION,      /* set union of in[0..nin) (the result is duplicate-free) */
    RF_QP_DIFFERENCE, /* distinct rows of in[0] that are not in in[1] */
    RF_QP_UNIQUE,     /* distinct rows of in[0]; with check_fd, a run-time error when two
                         rows agree on the first dst->nkeys columns but not on the rest:
                         it names the predicate (dst->pred) and the key */
    RF_QP_COPY,       /* in[0] as is */
    RF_QP_FACTS,      /* the constant rows[nrows * dst->ncols], row-major, sorted, distinct */
    RF_QP_CLEAR,      /* the empty relation */
    RF_QP_ORDERLIMIT, /* in[0] sorted by order[], then the first limit rows; rows equal on
                         the order columns should come in ascending order of all columns,
                         so that the output (and what a limit keeps) is deterministic */
    RF_QP_LFTJ        /* the worst-case-optimal multi-way join (leapfrog triejoin): dst's
                         columns are variables (all int); the distinct rows v with, for every
                         input i, (v[colvar] of its columns with colvar >= 0) in the projection
                         of in[i] onto those columns, and filter (over side 0 = dst: a
                         conjunction of comparisons of two columns or a column and a
                         constant; NULL: true). Variables are bound in column order, each
                         input's columns bound in increasing variable order (pass_lftj.c) */
} rf_qp_op;

const char *rf_qp_op_name(rf_qp_op op);

typedef struct rf_qp_agg {
    rf_agg_fn fn;  /* total, count, min, max, avg */
    int32_t col;   /* argument column of in[0]; -1 for count() */
    rf_type type;  /* result type: count int; avg decimal (of int or decimal) or float;
                      total, min, max the argument's type */
} rf_qp_agg;

typedef struct rf_qp_cmd {
    rf_qp_op op;
    rf_qp_rel *dst;
    rf_qp_rel **in;        /* nin inputs (see the op) */
    int32_t nin;
    rf_qp_expr *filter;    /* MAPFILTER, MAPJOIN: NULL means true */
    rf_qp_expr **outs;     /* MAPFILTER, MAPJOIN, ANTIJOIN: one per dst column */
    int32_t nouts;
    int32_t *lkeys, *rkeys; /* MAPJOIN, ANTIJOIN: equi-join column pairs */
    int32_t nkeys;
    int32_t *group;        /* AGGREGATE: group-by columns of in[0] */
    int32_t ngroup;
    rf_qp_agg *aggs;       /* AGGREGATE */
    int32_t naggs;
    rf_fe_const *rows;     /* FACTS */
    int64_t nrows;
    rf_fe_order *order;    /* ORDERLIMIT: never empty unless dst has no columns */
    int32_t norder;
    int64_t limit;         /* ORDERLIMIT: -1 none */
    int check_fd;          /* UNIQUE: check the functional dependency of dst */
    int partial;           /* AGGREGATE: the first half of a decomposed aggregate (pass
                              partagg): with several ranks each groups the rows it holds,
                              nothing moving first; the next aggregate combines the parts */
    int32_t *colvar;       /* LFTJ: per column of in[0], then in[1], ...: the variable (dst
                              column) it binds, or -1 (projected away) */
    rf_loc loc;            /* the rule it comes from (line 0: none) */
    const char *note;      /* first command of a rule's pipeline: which rule, which variant */
} rf_qp_cmd;

/* ---- control flow ----------------------------------------------------- */

typedef enum rf_qp_term_kind {
    RF_QP_T_GOTO,    /* goto target */
    RF_QP_T_BRANCH,  /* if any of rels[] is non-empty goto target else goto else_target */
    RF_QP_T_HALT
} rf_qp_term_kind;

typedef struct rf_qp_term {
    rf_qp_term_kind kind;
    int32_t target, else_target; /* block ids */
    rf_qp_rel **rels;
    int32_t nrels;
} rf_qp_term;

typedef struct rf_qp_block {
    int32_t id;           /* index in rf_qp_program.blocks; block 0 is the entry */
    const char *comment;  /* what the block does: "strata 0-2", "stratum 3 loop" */
    rf_qp_cmd **cmds;
    int32_t ncmds, capcmds;
    rf_qp_term term;
} rf_qp_block;

typedef struct rf_qp_program {
    rf_arena arena;            /* owns everything below */
    const rf_fe_program *fe;   /* borrowed */
    rf_qp_rel **rels;
    int32_t nrels, caprels;
    rf_qp_block **blocks;
    int32_t nblocks, capblocks;
    int64_t next_temp;         /* for fresh temporary names */
    int inputs_are_sets;       /* input relations are known duplicate-free */
    int no_lftj;               /* the pass `lftj` leaves cyclic joins binary */
    int no_partagg;            /* the pass `partagg` leaves aggregates whole */
    int no_hoist;              /* the pass `hoist` leaves loop-invariant commands in their loop */
    int no_keyjoin;            /* the pass `keyjoin` leaves equalities of computed values as filters */
    int oom;                   /* an allocation failed: the plan is unusable */
} rf_qp_program;

/* ---- building, optimizing, checking ---------------------------------- */

typedef struct rf_qp_options {
    int inputs_are_sets; /* the loader guarantees duplicate-free inputs (default 0) */
    int no_lftj;         /* no worst-case-optimal joins: cyclic bodies stay binary joins */
    int no_partagg;      /* no partial aggregates: each rank's rows move before any grouping
                            (queryplan/pass_partagg.c; default 0, the rewrite is on) */
    int no_hoist;        /* leave loop-invariant commands inside their loop, recomputed every
                            round (queryplan/pass_hoist.c; default 0, the pass is on) */
    int no_exists;       /* keep another-row tests as joins: no per-key least and greatest
                            (queryplan/qp_exists.c; default 0, the rewrite is on) */
    int no_keyjoin;      /* an equality of computed values of a join's two sides stays a filter
                            of the cross product (queryplan/pass_keyjoin.c; default 0, the pass is on) */
} rf_qp_options;

/* Lowers a checked program into a plan (strata in order, semi-naive loops
** for recursive strata, an OrderLimit per output). */
rf_status rf_qp_build(const rf_fe_program *fe, rf_qp_program **out, rf_diags *d);
rf_status rf_qp_build_opts(const rf_fe_program *fe, const rf_qp_options *opt, rf_qp_program **out,
                           rf_diags *d);
/* Runs every pass of rf_qp_passes() in order, verifying the plan after each. */
rf_status rf_qp_optimize(rf_qp_program *p, rf_diags *d);
void rf_qp_free(rf_qp_program *p); /* NULL ok */

/* One pass: rewrites the plan in place; properties are re-inferred after it. */
typedef rf_status (*rf_qp_pass_fn)(rf_qp_program *p, rf_diags *d);
typedef struct rf_qp_pass {
    const char *name;  /* "fold", "select", "keyjoin", "joinorder", "cse", "project", "lftj", "unique", "hoist", "partagg",
                          "dead" */
    const char *what;  /* one line for --help texts */
    rf_qp_pass_fn run;
} rf_qp_pass;

/* The passes in the order rf_qp_optimize runs them. */
const rf_qp_pass *rf_qp_passes(int32_t *count);
/* Runs one pass by name, then re-infers properties and verifies.
** RF_EUSAGE (with a diagnostic) for an unknown name. */
rf_status rf_qp_run_pass(rf_qp_program *p, const char *name, rf_diags *d);

/* Recomputes estimated cardinalities, uniqueness, keys and sortedness. */
void rf_qp_infer(rf_qp_program *p);
/* Checks the plan's invariants (every referenced relation is in rels, column
** indices and types agree, terminators name existing blocks, ...).
** RF_EINTERNAL with a diagnostic naming the problem. */
rf_status rf_qp_verify(const rf_qp_program *p, rf_diags *d);

/* ---- printers --------------------------------------------------------- */

/* Readable and deterministic: relations with types and properties, then the
** blocks, one command per line. */
void rf_qp_print_text(const rf_qp_program *p, rf_buf *out);
/* The same content as YAML, written with libyaml's emitter. */
rf_status rf_qp_print_yaml(const rf_qp_program *p, rf_buf *out);
/* Graphviz: one node per block listing its commands; edges for control flow. */
void rf_qp_print_dot(const rf_qp_program *p, rf_buf *out);
/* One expression as the text printer writes it; in0/in1 name the inputs. */
void rf_qp_print_expr(const rf_qp_expr *e, const char *in0, const char *in1, rf_buf *out);
/* One command as a single line without indentation or newline. */
void rf_qp_print_cmd(const rf_qp_cmd *c, rf_buf *out);

#endif
