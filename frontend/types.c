/*
** frontend/types.c: type inference and type checking.
**
** Owns: the types of undeclared predicates' columns and of every variable
** (inferred to a fixpoint from atoms, assignments, aggregates and heads),
** then one checking pass that reports mismatches and makes numeric
** promotions explicit (CAST nodes: int -> decimal -> wide decimal -> float).
**
** The wide decimal (RF_TYPE_DEC128, rf_value.h) is for totals of decimals,
** so that they stay exact beyond decimal's 64 bits (agg_result). It is a
** decimal to the user; its width is this file's choice: a variable or a
** predicate column (declared decimal or not) becomes wide when a wide value
** reaches it, which only ever widens (so inference still ends), except the
** columns of input predicates (files, databases), which stay 64-bit: a wide
** variable that an input's decimal column binds compares with it through a
** filter, and a wide value that a head stores into a 64-bit decimal column
** is narrowed with a run-time range check.
*/
#include "check_internal.h"

#include <string.h>

static int rank(rf_type t)
{
    return t == RF_TYPE_INT ? 0 : t == RF_TYPE_DECIMAL ? 1 : t == RF_TYPE_DEC128 ? 2 : 3;
}

/* A predicate whose columns keep their types (read from files or a database). */
static int is_input(const rf_fe_pred *p) { return p->input_file != NULL; }

static rf_type wider(rf_type a, rf_type b) { return rank(a) >= rank(b) ? a : b; }

static const char *tn(rf_type t) { return t == RF_TYPE_UNKNOWN ? "unknown" : rf_fe_type_name(t); }

static rf_fe_expr *cast_to(rf_checker *c, rf_fe_expr *e, rf_type t)
{
    if (e->type == t) return e;
    if (e->kind == RF_FE_CONST) {
        /* fold constant promotions right away */
        if (e->c.type == RF_TYPE_INT && (t == RF_TYPE_DECIMAL || t == RF_TYPE_DEC128)) {
            int64_t v;
            if (rf_val_dec_from_int(e->c.i, &v, NULL) == RF_OK) {
                e->c.type = e->type = t;
                e->c.i = v;
                return e;
            }
        } else if (e->c.type == RF_TYPE_DECIMAL && t == RF_TYPE_DEC128) {
            /* a wide constant holds a decimal's value (rf_frontend.h) */
            e->c.type = e->type = t;
            return e;
        } else if (t == RF_TYPE_FLOAT && e->c.type == RF_TYPE_DEC128) {
            e->c.f = rf_val_dec_to_float(e->c.i);
            e->c.type = e->type = t;
            return e;
        } else if (t == RF_TYPE_FLOAT && e->c.type == RF_TYPE_INT) {
            e->c.f = (double)e->c.i;
            e->c.type = e->type = t;
            return e;
        } else if (t == RF_TYPE_FLOAT && e->c.type == RF_TYPE_DECIMAL) {
            e->c.f = rf_val_dec_to_float(e->c.i);
            e->c.type = e->type = t;
            return e;
        }
    }
    rf_fe_expr *x = rf_chk_expr_new(c, RF_FE_CAST, e->loc);
    rf_fe_expr **args = rf_arena_alloc(c->a, sizeof *args);
    if (!x || !args) {
        c->oom = 1;
        return e;
    }
    args[0] = e;
    x->args = args;
    x->nargs = 1;
    x->type = t;
    return x;
}

/* Chain e's first i operands as a chain of their own, of type t, in place
** of them (e keeps operands i..n, its first now that chain). */
static int split_chain(rf_checker *c, rf_fe_expr *e, int32_t i, rf_type t)
{
    rf_fe_expr *p = rf_chk_expr_new(c, RF_FE_BINOP, e->loc);
    rf_fe_expr **args = rf_arena_alloc(c->a, (size_t)i * sizeof *args);
    if (!p || !args) {
        c->oom = 1;
        return 0;
    }
    memcpy(args, e->args, (size_t)i * sizeof *args);
    p->op = e->op;
    p->type = t;
    p->args = args;
    p->nargs = i;
    p->oplocs = e->oplocs;
    e->args += i - 1;
    e->args[0] = p;
    e->nargs -= i - 1;
    if (e->oplocs) {
        e->oplocs += i - 1;
        e->loc = e->oplocs[1];
    }
    return 1;
}

/* The type of e, or RF_TYPE_UNKNOWN. With report, errors are reported,
** e->type is set and promotions are inserted. */
static rf_type type_of(rf_checker *c, rf_fe_rule *r, rf_fe_expr *e, int report, int *bad)
{
    rf_type t = RF_TYPE_UNKNOWN;
    switch (e->kind) {
    case RF_FE_VAR: t = r->vars[e->var].type; break;
    case RF_FE_CONST: t = e->c.type; break;
    case RF_FE_CAST: type_of(c, r, e->args[0], report, bad); t = e->type; break;
    case RF_FE_NEG: {
        rf_type a = type_of(c, r, e->args[0], report, bad);
        if (a == RF_TYPE_UNKNOWN) break;
        if (!rf_type_is_numeric(a)) {
            if (report) {
                rf_error(c->d, e->loc, "cannot negate a value of type %s", tn(a));
                *bad = 1;
            }
            break;
        }
        t = a;
        break;
    }
    case RF_FE_BINOP: {
        /* a chain, typed step by step as the nested form would be: the
        ** partial result is acc, each step widens to the wider operand */
        rf_type acc = type_of(c, r, e->args[0], report, bad);
        for (int32_t i = 1; i < e->nargs; i++) {
            rf_type b = type_of(c, r, e->args[i], report, bad);
            if (acc == RF_TYPE_UNKNOWN || b == RF_TYPE_UNKNOWN) {
                acc = RF_TYPE_UNKNOWN;
                continue;
            }
            rf_loc at = e->oplocs ? e->oplocs[i] : e->loc;
            if (e->op == '+' && acc == RF_TYPE_STRING && b == RF_TYPE_STRING) continue;
            if (!rf_type_is_numeric(acc) || !rf_type_is_numeric(b)) {
                if (report) {
                    if (acc == RF_TYPE_DATE || b == RF_TYPE_DATE)
                        rf_error(c->d, at, "cannot apply '%c' to %s and %s; use date:add_days, date:add_months or date:add_years",
                                 e->op, tn(acc), tn(b));
                    else
                        rf_error(c->d, at, "cannot apply '%c' to %s and %s", e->op, tn(acc), tn(b));
                    *bad = 1;
                }
                acc = RF_TYPE_UNKNOWN;
                continue;
            }
            if (e->op == '%' && (acc != RF_TYPE_INT || b != RF_TYPE_INT)) {
                /* an integer remainder: no promotion, a decimal or float operand is an error */
                if (report) {
                    rf_error(c->d, at, "cannot apply '%%' to %s and %s: '%%' is the remainder of int by int", tn(acc),
                             tn(b));
                    *bad = 1;
                }
                acc = RF_TYPE_UNKNOWN;
                continue;
            }
            rf_type w = wider(acc, b);
            if (report) {
                if (w != acc && i > 1) {
                    /* the partial result widens here: the chain so far becomes
                    ** this chain's first operand, cast below */
                    if (!split_chain(c, e, i, acc)) break;
                    i = 1;
                }
                if (i == 1) e->args[0] = cast_to(c, e->args[0], w);
                e->args[i] = cast_to(c, e->args[i], w);
            }
            acc = w;
        }
        t = acc;
        break;
    }
    case RF_FE_CALL: {
        const rf_builtin_info *bi = rf_fe_builtin_info(e->fn);
        int known = 1;
        if (e->fn == RF_BI_DECIMAL_FLOAT && e->nargs == 1 && type_of(c, r, e->args[0], 0, bad) == RF_TYPE_DEC128) {
            /* decimal:float of a wide decimal: the same conversion, as a cast */
            type_of(c, r, e->args[0], report, bad);
            if (report) {
                e->kind = RF_FE_CAST;
                e->type = RF_TYPE_FLOAT;
            }
            t = RF_TYPE_FLOAT;
            break;
        }
        for (int32_t i = 0; i < e->nargs; i++) {
            rf_type a = type_of(c, r, e->args[i], report, bad);
            if (a == RF_TYPE_UNKNOWN) {
                known = 0;
                continue;
            }
            if (a != bi->args[i]) {
                if (report) {
                    rf_error(c->d, e->args[i]->loc, "argument %d of `%s` must be %s %s, not %s", i + 1, bi->name,
                             bi->args[i] == RF_TYPE_INT ? "an" : "a", tn(bi->args[i]), tn(a));
                    *bad = 1;
                }
                known = 0;
            }
        }
        t = known || !report ? bi->result : RF_TYPE_UNKNOWN;
        break;
    }
    }
    if (report) e->type = t;
    return t;
}

/* Whether a slot of type cur takes t: when unknown, or a decimal that a
** wide value widens. */
static int takes(rf_type cur, rf_type t)
{
    return t != RF_TYPE_UNKNOWN && (cur == RF_TYPE_UNKNOWN || (cur == RF_TYPE_DECIMAL && t == RF_TYPE_DEC128));
}

static int set_var(rf_fe_rule *r, int32_t v, rf_type t)
{
    if (!takes(r->vars[v].type, t)) return 0;
    r->vars[v].type = t;
    return 1;
}

static int set_col(rf_fe_pred *p, int32_t i, rf_type t)
{
    if (!takes(p->types[i], t)) return 0;
    /* a declaration fixes the type (only its decimal's width is inferred);
    ** an input's decimal stays 64-bit */
    if (p->types[i] == RF_TYPE_UNKNOWN ? p->declared : is_input(p)) return 0;
    p->types[i] = t;
    return 1;
}

static rf_type agg_result(rf_agg_fn fn, rf_type arg)
{
    switch (fn) {
    case RF_AGG_COUNT: return RF_TYPE_INT;
    case RF_AGG_AVG:
        if (arg == RF_TYPE_UNKNOWN) return arg;
        return arg == RF_TYPE_FLOAT ? RF_TYPE_FLOAT : RF_TYPE_DECIMAL; /* a mean of decimals is within range */
    case RF_AGG_TOTAL:
        /* a total of decimals is exact to 38 digits: a wide decimal */
        return arg == RF_TYPE_DECIMAL ? RF_TYPE_DEC128 : arg;
    default: return arg;
    }
}

static int infer_rule(rf_checker *c, rf_fe_rule *r)
{
    int changed = 0, bad = 0;
    for (int32_t i = 0; i < r->nbody; i++) {
        rf_fe_lit *l = r->body[i];
        if (l->kind == RF_FE_ATOM) {
            for (int32_t j = 0; j < l->nargs; j++) {
                rf_fe_expr *a = l->args[j];
                if (a->kind == RF_FE_VAR) {
                    /* a negated atom binds nothing: its variables take their
                    ** types where they are bound (check_rule meets the widths) */
                    if (!l->negated) changed |= set_var(r, a->var, l->pred->types[j]);
                    changed |= set_col(l->pred, j, r->vars[a->var].type);
                } else if (a->kind == RF_FE_CONST) {
                    changed |= set_col(l->pred, j, a->c.type);
                }
            }
        } else if (l->kind == RF_FE_ASSIGN) {
            changed |= set_var(r, l->var, type_of(c, r, l->rhs, 0, &bad));
        }
    }
    for (int32_t g = 0; g < r->naggs; g++) {
        rf_type a = r->aggs[g].arg_var >= 0 ? r->vars[r->aggs[g].arg_var].type : RF_TYPE_INT;
        changed |= set_var(r, r->aggs[g].out_var, agg_result(r->aggs[g].fn, a));
    }
    for (int32_t i = 0; i < r->head->arity; i++) {
        rf_fe_expr *a = r->head_args[i];
        rf_type t = a->kind == RF_FE_VAR ? r->vars[a->var].type : a->c.type;
        changed |= set_col(r->head, i, t);
    }
    return changed;
}

/* A constant stored in a column of type t: numeric constants widen. */
static int fits_column(rf_checker *c, rf_fe_expr **slot, rf_type t)
{
    rf_fe_expr *e = *slot;
    if (e->c.type == t) return 1;
    if (rf_type_is_numeric(e->c.type) && rf_type_is_numeric(t) && rank(e->c.type) < rank(t)) {
        *slot = cast_to(c, e, t);
        return (*slot)->kind == RF_FE_CONST;
    }
    return 0;
}

static void col_desc(rf_buf *b, const rf_fe_pred *p, int32_t i)
{
    if (p->cols[i]) rf_buf_printf(b, "column %d (`%s`) of `%s`", i + 1, p->cols[i], p->name);
    else rf_buf_printf(b, "column %d of `%s`", i + 1, p->name);
}

/* Adds an assignment before the negations, keeping the documented body order
** (atoms, then assignments and filters, then negations). */
static int append_lit(rf_checker *c, rf_fe_rule *r, rf_fe_lit *l)
{
    rf_fe_lit **n = rf_arena_alloc(c->a, (size_t)(r->nbody + 1) * sizeof *n);
    if (!n) {
        c->oom = 1;
        return -1;
    }
    int32_t at = r->nbody;
    while (at > 0 && r->body[at - 1]->negated) at--;
    if (at) memcpy(n, r->body, (size_t)at * sizeof *n);
    n[at] = l;
    if (r->nbody > at) memcpy(n + at + 1, r->body + at, (size_t)(r->nbody - at) * sizeof *n);
    r->nbody++;
    r->body = n;
    return 0;
}

static int32_t append_var(rf_checker *c, rf_fe_rule *r, rf_type t, rf_loc loc)
{
    rf_fe_var *n = rf_arena_alloc(c->a, (size_t)(r->nvars + 1) * sizeof *n);
    if (!n) {
        c->oom = 1;
        return -1;
    }
    if (r->nvars) memcpy(n, r->vars, (size_t)r->nvars * sizeof *n);
    n[r->nvars].name = rf_arena_sprintf(c->a, "_%d", r->nvars);
    n[r->nvars].type = t;
    n[r->nvars].loc = loc;
    n[r->nvars].temp = 1;
    r->vars = n;
    return r->nvars++;
}

/* 1 when e reads a variable that desugaring introduced (its name means
** nothing to the user). */
static int reads_temp(const rf_fe_rule *r, const rf_fe_expr *e)
{
    if (e->kind == RF_FE_VAR) return r->vars[e->var].temp || r->vars[e->var].name[0] == '_';
    for (int32_t i = 0; i < e->nargs; i++)
        if (reads_temp(r, e->args[i])) return 1;
    return 0;
}

/* An operand as the user wrote it: `x`, 3, "a", `(x + 1)`; an expression
** over desugaring's own variables only as "the value". */
static void operand_text(const rf_fe_rule *r, const rf_fe_expr *e, rf_buf *out)
{
    if (e->kind == RF_FE_CONST) {
        rf_fe_const_print(&e->c, out);
    } else if (reads_temp(r, e) || e->kind == RF_FE_CAST) {
        rf_buf_puts(out, "the value");
    } else {
        rf_buf_putc(out, '`');
        rf_fe_expr_print(r, e, out);
        rf_buf_putc(out, '`');
    }
}

/* Atom l's argument j is variable v, wide, where l's column is an input's
** 64-bit decimal: a fresh decimal variable takes v's place there, and a
** filter compares the two exactly. 0 when out of memory. */
static int bind_through_filter(rf_checker *c, rf_fe_rule *r, rf_fe_lit *l, int32_t j)
{
    rf_fe_expr *a = l->args[j];
    int32_t t = append_var(c, r, RF_TYPE_DECIMAL, a->loc);
    rf_fe_expr *nv = rf_chk_expr_new(c, RF_FE_VAR, a->loc), *tv = rf_chk_expr_new(c, RF_FE_VAR, a->loc);
    rf_fe_lit *f = rf_arena_alloc(c->a, sizeof *f);
    if (t < 0 || !nv || !tv || !f) {
        c->oom = 1;
        return 0;
    }
    nv->var = tv->var = t;
    nv->type = tv->type = RF_TYPE_DECIMAL;
    l->args[j] = nv;
    memset(f, 0, sizeof *f);
    f->kind = RF_FE_CMP;
    f->loc = a->loc;
    f->op = RF_CMP_EQ;
    f->lhs = cast_to(c, tv, RF_TYPE_DEC128);
    f->rhs = a;
    return append_lit(c, r, f) == 0;
}

/* Negated atom l's argument j is variable v, a decimal, where l's column
** is wide: a fresh wide variable, assigned v widened before the
** negations, takes v's place there. 0 when out of memory. */
static int widen_for_negation(rf_checker *c, rf_fe_rule *r, rf_fe_lit *l, int32_t j)
{
    rf_fe_expr *a = l->args[j];
    int32_t t = append_var(c, r, RF_TYPE_DEC128, a->loc);
    rf_fe_expr *nv = rf_chk_expr_new(c, RF_FE_VAR, a->loc);
    rf_fe_lit *f = rf_arena_alloc(c->a, sizeof *f);
    if (t < 0 || !nv || !f) {
        c->oom = 1;
        return 0;
    }
    nv->var = t;
    nv->type = RF_TYPE_DEC128;
    l->args[j] = nv;
    memset(f, 0, sizeof *f);
    f->kind = RF_FE_ASSIGN;
    f->loc = a->loc;
    f->var = t;
    f->rhs = cast_to(c, a, RF_TYPE_DEC128);
    return append_lit(c, r, f) == 0;
}

/* A comparison: like types, or numbers widened to the wider type. */
static void type_cmp(rf_checker *c, rf_fe_rule *r, rf_fe_lit *l, int *bad)
{
    rf_type a = type_of(c, r, l->lhs, 1, bad);
    rf_type bt = type_of(c, r, l->rhs, 1, bad);
    if (a == RF_TYPE_UNKNOWN || bt == RF_TYPE_UNKNOWN || a == bt) return;
    if (rf_type_is_numeric(a) && rf_type_is_numeric(bt)) {
        rf_type w = wider(a, bt);
        l->lhs = cast_to(c, l->lhs, w);
        l->rhs = cast_to(c, l->rhs, w);
        return;
    }
    rf_buf da, db;
    rf_buf_init(&da);
    rf_buf_init(&db);
    operand_text(r, l->lhs, &da);
    operand_text(r, l->rhs, &db);
    rf_error(c->d, l->loc, "cannot compare %s with %s: %s is %s, %s is %s", tn(a), tn(bt), rf_buf_cstr(&da), tn(a),
             rf_buf_cstr(&db), tn(bt));
    rf_buf_free(&da);
    rf_buf_free(&db);
}

/* Where rule r's body first binds variable v (an atom's argument or an
** assignment), else fallback. */
static rf_loc first_use(const rf_fe_rule *r, int32_t v, rf_loc fallback)
{
    for (int32_t i = 0; i < r->nbody; i++) {
        const rf_fe_lit *l = r->body[i];
        if (l->kind == RF_FE_ATOM && !l->negated) {
            for (int32_t j = 0; j < l->nargs; j++)
                if (l->args[j]->kind == RF_FE_VAR && l->args[j]->var == v) return l->args[j]->loc;
        } else if (l->kind == RF_FE_ASSIGN && l->var == v)
            return l->loc;
    }
    return fallback;
}

static void check_rule(rf_checker *c, rf_fe_rule *r)
{
    int bad = 0;
    int64_t errors_before = c->d->nerrors;
    rf_buf b;
    rf_buf_init(&b);
    for (int32_t i = 0; i < r->nbody; i++) {
        rf_fe_lit *l = r->body[i];
        switch (l->kind) {
        case RF_FE_ATOM:
            for (int32_t j = 0; j < l->nargs; j++) {
                rf_fe_expr *a = l->args[j];
                rf_type ct = l->pred->types[j];
                if (ct == RF_TYPE_UNKNOWN) continue; /* reported per predicate */
                if (a->kind == RF_FE_VAR) {
                    rf_fe_var *v = &r->vars[a->var];
                    if (v->type == RF_TYPE_UNKNOWN) v->type = ct; /* wildcard */
                    a->type = v->type;
                    if (v->type == RF_TYPE_DEC128 && ct == RF_TYPE_DECIMAL && !l->negated) {
                        if (!bind_through_filter(c, r, l, j)) break;
                        continue;
                    }
                    if (v->type == RF_TYPE_DECIMAL && ct == RF_TYPE_DEC128 && l->negated) {
                        /* a decimal looked up in a wide column: widened first */
                        if (!widen_for_negation(c, r, l, j)) break;
                        continue;
                    }
                    if (v->type == RF_TYPE_DEC128 && ct == RF_TYPE_DECIMAL) {
                        /* (negated: a wide value has no 64-bit key to look up) */
                        b.len = 0;
                        col_desc(&b, l->pred, j);
                        rf_error(c->d, a->loc,
                                 "`%s` is a total of decimals (exact beyond 64 bits), which a negation cannot look "
                                 "up in %s, an input's 64-bit decimal: match them in a rule of their own (`P(..., %s) "
                                 "<- ..., %s(..., %s, ...).`) and negate that",
                                 v->temp ? "the value" : v->name, rf_buf_cstr(&b), v->temp ? "t" : v->name,
                                 l->pred->name, v->temp ? "t" : v->name);
                        continue;
                    }
                    if (v->type != ct) {
                        b.len = 0;
                        col_desc(&b, l->pred, j);
                        rf_error(c->d, a->loc, "type mismatch: `%s` is %s here, but %s is %s",
                                 v->temp ? "the value" : v->name, tn(v->type), rf_buf_cstr(&b), tn(ct));
                    }
                } else if (!fits_column(c, &l->args[j], ct)) {
                    b.len = 0;
                    col_desc(&b, l->pred, j);
                    rf_error(c->d, a->loc, "type mismatch: a %s constant given for %s, which is %s", tn(a->c.type),
                             rf_buf_cstr(&b), tn(ct));
                }
            }
            break;
        case RF_FE_BUILTIN: {
            const rf_builtin_info *bi = rf_fe_builtin_info(l->fn);
            for (int32_t j = 0; j < l->nargs; j++) {
                rf_type a = type_of(c, r, l->args[j], 1, &bad);
                if (a != RF_TYPE_UNKNOWN && a != bi->args[j])
                    rf_error(c->d, l->args[j]->loc, "argument %d of `%s` must be a %s, not %s", j + 1, bi->name,
                             tn(bi->args[j]), tn(a));
            }
            break;
        }
        case RF_FE_CMP: type_cmp(c, r, l, &bad); break;
        case RF_FE_OR:
            for (int32_t a = 0; a < l->nalts; a++)
                for (int32_t j = 0; j < l->altn[a]; j++) type_cmp(c, r, l->alts[a][j], &bad);
            break;
        case RF_FE_ASSIGN: {
            rf_type a = type_of(c, r, l->rhs, 1, &bad);
            if (a != RF_TYPE_UNKNOWN && a != r->vars[l->var].type)
                rf_error(c->d, l->loc, "type mismatch: `%s` is %s, but the value is %s", r->vars[l->var].name,
                         tn(r->vars[l->var].type), tn(a));
            break;
        }
        }
    }
    for (int32_t g = 0; g < r->naggs; g++) {
        rf_fe_agg *ag = &r->aggs[g];
        if (ag->arg_var < 0) continue;
        rf_type a = r->vars[ag->arg_var].type;
        /* unknown: an error already said why (an undefined predicate the
        ** argument comes from), as for the literals above */
        if (a == RF_TYPE_UNKNOWN) continue;
        if ((ag->fn == RF_AGG_TOTAL || ag->fn == RF_AGG_AVG) && !rf_type_is_numeric(a))
            rf_error(c->d, ag->loc, "%s() needs a number (int, decimal or float), not %s", rf_agg_fn_name(ag->fn),
                     tn(a));
        if ((ag->fn == RF_AGG_MIN || ag->fn == RF_AGG_MAX) && a == RF_TYPE_BOOL)
            rf_error(c->d, ag->loc, "%s() of a boolean is not supported", rf_agg_fn_name(ag->fn));
    }
    for (int32_t i = 0; i < r->head->arity; i++) {
        rf_fe_expr *a = r->head_args[i];
        rf_type ct = r->head->types[i];
        if (ct == RF_TYPE_UNKNOWN) continue;
        if (a->kind == RF_FE_CONST) {
            if (!fits_column(c, &r->head_args[i], ct)) {
                b.len = 0;
                col_desc(&b, r->head, i);
                rf_error(c->d, a->loc, "type mismatch: a %s value given for %s, which is %s", tn(a->c.type),
                         rf_buf_cstr(&b), tn(ct));
            }
            continue;
        }
        rf_type vt = r->vars[a->var].type;
        a->type = vt;
        if (vt == ct) continue;
        if (rf_type_is_numeric(vt) && rf_type_is_numeric(ct) &&
            ((rank(vt) < rank(ct) && (r->head->declared || ct == RF_TYPE_DEC128)) ||
             (vt == RF_TYPE_DEC128 && ct == RF_TYPE_DECIMAL))) {
            /* widen through a fresh variable: head(t) <- ..., t = cast(x);
            ** a wide value into an input's decimal column narrows, with a
            ** run-time range check */
            int32_t t = append_var(c, r, ct, a->loc);
            rf_fe_lit *l = rf_arena_alloc(c->a, sizeof *l);
            rf_fe_expr *v = rf_chk_expr_new(c, RF_FE_VAR, a->loc);
            if (t < 0 || !l || !v) {
                c->oom = 1;
                break;
            }
            v->var = t;
            v->type = ct;
            l->kind = RF_FE_ASSIGN;
            l->loc = a->loc;
            l->var = t;
            l->rhs = cast_to(c, a, ct);
            if (append_lit(c, r, l)) break;
            r->head_args[i] = v;
            continue;
        }
        if (vt != RF_TYPE_UNKNOWN && r->head->aux == 1) {
            /* the head is the shared body of a disjunction (an aggregate's,
            ** or several heads'): one rule a disjunct, the column's type
            ** set by an earlier one; the user wrote neither the predicate
            ** nor its head, so name the disjunct's own use of the variable */
            rf_error(c->d, first_use(r, a->var, a->loc),
                     "type mismatch: `%s` is %s in this disjunct, but %s in an earlier one (a variable that "
                     "every disjunct binds must have one type in all of them)",
                     r->vars[a->var].temp ? "the value" : r->vars[a->var].name, tn(vt), tn(ct));
            continue;
        }
        b.len = 0;
        col_desc(&b, r->head, i);
        if (vt != RF_TYPE_UNKNOWN)
            rf_error(c->d, a->loc, "type mismatch: `%s` is %s, but %s is %s",
                     r->vars[a->var].temp ? "the value" : r->vars[a->var].name, tn(vt), rf_buf_cstr(&b), tn(ct));
    }
    /* only now: an unknown type is usually the echo of an error above, or
    ** of a rule an earlier pass left out */
    if (c->d->nerrors == errors_before && !c->errors_before_types)
        for (int32_t v = 0; v < r->nvars; v++)
            if (r->vars[v].type == RF_TYPE_UNKNOWN && !r->vars[v].wildcard) {
                if (r->vars[v].temp) rf_error(c->d, r->vars[v].loc, "cannot infer the type of this expression");
                else rf_error(c->d, r->vars[v].loc, "cannot infer the type of variable `%s`", r->vars[v].name);
            }
    rf_buf_free(&b);
}

void rf_chk_types(rf_checker *c)
{
    /* each round fixes at least one type, so this ends */
    for (int changed = 1; changed && !c->oom;) {
        changed = 0;
        for (int64_t i = 0; i < c->rules.count; i++) changed |= infer_rule(c, c->rules.items[i]);
    }
    for (int64_t i = 0; i < c->rules.count && !c->oom; i++) check_rule(c, c->rules.items[i]);
    if (c->d->nerrors) return;
    for (int64_t i = 0; i < c->preds.count; i++) {
        rf_fe_pred *p = c->preds.items[i];
        for (int32_t j = 0; j < p->arity; j++)
            if (p->types[j] == RF_TYPE_UNKNOWN) {
                if (p->nrules)
                    rf_error(c->d, p->loc, "cannot infer the type of column %d of `%s`; declare it, as in %s(x) -> int(x).",
                             j + 1, p->name, p->name);
                else
                    rf_error(c->d, p->loc, "`%s` has no rules, facts or declaration", p->name);
                break;
            }
    }

}
