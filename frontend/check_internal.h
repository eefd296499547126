/*
** frontend/check_internal.h: state shared by the checking passes of the
** front end (private to frontend/): declarations (declare.c), name
** resolution and desugaring (desugar.c and the files of
** desugar_internal.h), safety (safety.c), types (types.c), directives
** (directives.c) and stratification (stratify.c).
*/
#ifndef RF_CHECK_INTERNAL_H
#define RF_CHECK_INTERNAL_H

#include "rf_frontend.h"

#define RF_TYPE_UNKNOWN ((rf_type)-1)

typedef struct rf_checker {
    rf_arena *a;
    rf_diags *d;
    const char *file;
    const char *txn_source; /* rf_fe_options.txn_source */
    rf_ptrvec preds;  /* rf_fe_pred* */
    rf_ptrvec rules;  /* rf_fe_rule* */
    /* name -> pred hash table (open addressing, power of two) */
    rf_fe_pred **tab;
    int64_t tabcap;
    int32_t ntemp;    /* counter for auxiliary predicate names */
    /* wildcards of an aggregate's body that every disjunct shares (the same
    ** AST node): while its auxiliary predicate is built, each is the named
    ** variable wild_names[i], a column of that predicate (desugar_aux.c) */
    const rf_ast_expr **wild_nodes;
    const char **wild_names;
    int32_t nwild;
    int oom;
    /* names in clauses dropped for syntax errors (a set, open addressing) */
    const char **broken;
    int64_t brokencap;
    /* names declared or defined in a built-in's namespace (refused there,
    ** once): their uses elsewhere are not called undefined */
    rf_ptrvec refused;
    /* errors reported before the type pass: inference gaps are then
    ** usually their echo (a dropped rule typed nothing), not news */
    int64_t errors_before_types;
} rf_checker;

rf_fe_pred *rf_chk_find(rf_checker *c, const char *name);
/* Where the clause at `there` is, for a message about the one at `here`:
** "line N" in the same file, "FILE:N" in another file of the program
** (several files compile as one). Written into buf, which is returned. */
const char *rf_chk_where(rf_loc there, rf_loc here, char *buf, size_t n);
rf_fe_pred *rf_chk_add_pred(rf_checker *c, const char *name, rf_loc loc, int32_t arity,
                            int functional);
int rf_chk_add_rule_to_pred(rf_checker *c, rf_fe_pred *p, rf_fe_rule *r);
int rf_chk_is_reserved(const char *name); /* type names, built-ins, lang: */
/* The length of name's namespace with its ':' (`int:` 4) where that is a
** built-in's (int:, string:, float:, decimal:, date:), else 0: the
** language's, no user predicate is in one (LANGUAGE.md, Lexical structure). */
int rf_chk_builtin_namespace(const char *name);
/* The same for the namespaces reserved for `redfox exec`'s generated
** programs: `redfox_txn:` and `redfox_txn_*:` (RF_FE_TXN_NS), else 0. */
int rf_chk_txn_namespace(const char *name);
/* The length of the namespace (with its ':') in which a, a declared or
** defined predicate, may not be: a built-in's, or one reserved for exec
** outside the source allowed it (rf_fe_options.txn_source); else 0. */
int rf_chk_refused_namespace(const rf_checker *c, const rf_ast_atom *a);
/* 1 when name appears in a clause that a syntax error dropped, or was
** refused as a name in a built-in's namespace: errors that it is undefined
** would be echoes of that one. */
int rf_chk_in_broken_clause(const rf_checker *c, const char *name);
/* The nearest of n candidate names to name, by edit distance, when near
** enough to be a likely typo; else NULL (suggest.c). */
const char *rf_chk_suggest(const char *name, const char *const *cands, int64_t n);
/* The same over the program's predicates and, when builtins is set, the
** built-in names. */
const char *rf_chk_suggest_name(const rf_checker *c, const char *name, int builtins);
/* Adds "; did you mean `edge`?" to the lexer's error for each name with a
** bad character in a predicate's place (ed$ge(x, y)) where the name without
** it is, or is near, a known predicate or built-in: the clause is dropped,
** so no 'undefined predicate' error would offer it. */
void rf_chk_cut_names(rf_checker *c, const rf_ast_program *ast);

/* Passes, in order. Each reports into c->d; a pass may leave rules out of
** the program when they are wrong, so later passes see only sound rules. */
void rf_chk_declarations(rf_checker *c, const rf_ast_program *ast);
void rf_chk_define_heads(rf_checker *c, const rf_ast_program *ast);
void rf_chk_desugar(rf_checker *c, const rf_ast_program *ast);
int rf_chk_safety(rf_checker *c, rf_fe_rule *r, rf_fe_lit **lits, int32_t nlits);
void rf_chk_directives(rf_checker *c, const rf_ast_program *ast);
void rf_chk_types(rf_checker *c);
void rf_chk_stratify(rf_checker *c, rf_fe_program *p);
/* Recursive min and max (monotone.c): why aggregation rule r cannot be one
** (NULL: it can), and the check of stratum s of p, whose cycle goes through
** such aggregates, which marks its lattice predicates. */
const char *rf_chk_lattice_rule_why(const rf_fe_rule *r);
void rf_chk_lattice(rf_checker *c, rf_fe_program *p, int32_t s);

/* helpers */
rf_fe_expr *rf_chk_expr_new(rf_checker *c, rf_fe_expr_kind k, rf_loc loc);
/* Calls fn for every variable read in e. */
void rf_chk_expr_vars(const rf_fe_expr *e, void (*fn)(void *ctx, int32_t var, rf_loc loc), void *ctx);
int rf_type_is_numeric(rf_type t);

#endif
