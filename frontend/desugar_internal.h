/*
** frontend/desugar_internal.h: the types and functions the desugaring files
** share (private to frontend/: declare.c, desugar.c, desugar_dnf.c,
** desugar_rule.c, desugar_aux.c).
**
** Owns: the disjunctive normal form of a body (conj, dnf), the names a body
** binds outside its disjunctions (bound_names), the builder of one rule
** (rule_builder), and the entry points each desugaring file offers the others.
*/
#ifndef RF_DESUGAR_INTERNAL_H
#define RF_DESUGAR_INTERNAL_H

#include "check_internal.h"

/* A body expands to at most this many conjunctions; more is an error that
** asks for the rule to be split. */
#define RF_DSG_MAX_DISJUNCTS 4096

/* A conjunction of basic formulas (atoms, comparisons, negations of them). */
typedef struct conj {
    const rf_ast_formula **items;
    int32_t n;
} conj;
typedef struct dnf {
    conj *c;
    int32_t n;
    int too_big;
} dnf;

/* Variable names a body binds outside its disjunctions: those of its
** top-level positive atoms and of `v = expr` comparisons at top level. */
typedef struct bound_names {
    const char **names;
    int32_t n, cap;
} bound_names;

/* The builder of one rule. */
typedef struct rule_builder {
    rf_checker *c;
    rf_fe_var *vars;
    int32_t nvars, capvars;
    rf_fe_lit **lits;
    int32_t nlits, caplits;
    int bad; /* an error was reported: drop the rule */
    /* the rule being built, for a negated conjunction (rf_dsg_body_not_conj) */
    const rf_ast_clause *cl;
    const rf_ast_atom *head;
    const conj *k;
} rule_builder;

/* declare.c: a head lang:... is a directive, not a predicate. */
int rf_dsg_is_directive(const rf_ast_atom *h);

/* desugar_dnf.c */
/* The DNF of f; bn (may be NULL) lets a disjunction that only filters
** variables bound outside it stay one item. Sets c->oom or .too_big. */
dnf rf_dsg_dnf_of(rf_checker *c, const rf_ast_formula *f, const bound_names *bn);
int rf_dsg_name_bound(const bound_names *bn, const char *name);
void rf_dsg_add_name(rf_checker *c, bound_names *bn, const char *name);
/* The names bound_names describes, from the conjunction at the top of a body. */
void rf_dsg_collect_bound(rf_checker *c, const rf_ast_formula *f, bound_names *bn);
/* The names a conjunction binds by itself (a subset of what safety accepts). */
void rf_dsg_binds_of(rf_checker *c, const rf_ast_formula *f, bound_names *bn);
/* e is f[...] of a user predicate (a value read from a functional predicate),
** or contains one. */
int rf_dsg_is_user_apply(const rf_ast_expr *e);
int rf_dsg_has_user_apply(const rf_ast_expr *e);

/* desugar_rule.c */
/* Builds one rule for head h over one conjunction (or none for a fact). */
void rf_dsg_build_rule(rf_checker *c, const rf_ast_clause *cl, const rf_ast_atom *h, const conj *k);
/* Adds the literal a (negated or not) to the rule b builds. */
void rf_dsg_body_atom(rule_builder *b, const rf_ast_atom *a, int negated, rf_loc loc);

/* desugar_aux.c */
/* !(a, b, ...) with atoms, negating an auxiliary predicate. */
void rf_dsg_body_not_conj(rule_builder *b, const rf_ast_formula *f);
int rf_dsg_not_conj_is_plain(rule_builder *b, const rf_ast_formula *f);
/* h1(...), h2(...) <- body, through an auxiliary predicate. */
void rf_dsg_multi_head(rf_checker *c, const rf_ast_clause *cl, const dnf *d);
/* An aggregate over a body of several disjuncts, through an auxiliary predicate. */
void rf_dsg_agg_over_disjunction(rf_checker *c, const rf_ast_clause *cl, const dnf *d);

#endif
