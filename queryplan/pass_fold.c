/*
** queryplan/pass_fold.c: the "fold" pass, constant folding.
**
** Owns: evaluating constant subexpressions with the value functions of
** common/rf_value.h, so that compile-time results are bit-identical to the
** kernels' (an operation that would overflow, divide by zero or leave the
** valid range is left for run time, where it is reported with the data that
** caused it); simplifying conjunctions; turning commands whose filter folds
** to false, or that read a temporary known to be empty, into Clear.
*/
#include "qp_internal.h"

#include <math.h>
#include <stdlib.h>

static rf_qp_expr *mk_int(rf_qp_program *p, rf_type t, int64_t v)
{
    rf_fe_const c;
    memset(&c, 0, sizeof c);
    c.type = t;
    c.i = v;
    return qp_e_const(p, &c);
}

static rf_qp_expr *mk_float(rf_qp_program *p, double v)
{
    rf_fe_const c;
    memset(&c, 0, sizeof c);
    c.type = RF_TYPE_FLOAT;
    c.f = v;
    return qp_e_const(p, &c);
}

static rf_qp_expr *mk_str(rf_qp_program *p, const char *a, int64_t na, const char *b, int64_t nb)
{
    char *s = qp_alloc(p, (size_t)(na + nb + 1));
    if (!s) return NULL;
    if (na) memcpy(s, a, (size_t)na);
    if (nb) memcpy(s + na, b, (size_t)nb);
    rf_fe_const c;
    memset(&c, 0, sizeof c);
    c.type = RF_TYPE_STRING;
    c.s = s;
    c.slen = na + nb;
    return qp_e_const(p, &c);
}

/* One step a op b of a chain of type t over constants into *out: 0, or -1
** when it is left for run time (overflow, division by zero, not finite). */
static int fold_step(char op, rf_type t, const rf_fe_const *a, const rf_fe_const *b, rf_fe_const *out)
{
    int64_t r;
    rf_status st = RF_EUSER;
    *out = *a;
    switch (t) {
    case RF_TYPE_INT:
        switch (op) {
        case '+': st = rf_val_int_add(a->i, b->i, &r, NULL); break;
        case '-': st = rf_val_int_sub(a->i, b->i, &r, NULL); break;
        case '*': st = rf_val_int_mul(a->i, b->i, &r, NULL); break;
        case '/': st = rf_val_int_div(a->i, b->i, &r, NULL); break;
        case '%': st = rf_val_int_mod(a->i, b->i, &r, NULL); break;
        }
        break;
    case RF_TYPE_DECIMAL:
        switch (op) {
        case '+': st = rf_val_dec_add(a->i, b->i, &r, NULL); break;
        case '-': st = rf_val_dec_sub(a->i, b->i, &r, NULL); break;
        case '*': st = rf_val_dec_mul(a->i, b->i, &r, NULL); break;
        case '/': st = rf_val_dec_div(a->i, b->i, &r, NULL); break;
        }
        break;
    case RF_TYPE_DEC128: {
        /* a wide constant holds a decimal's value: a result beyond that range
        ** is left for run time, where it is exact */
        rf_dec128 w = 0;
        switch (op) {
        case '+': st = rf_val_dec128_add(a->i, b->i, &w, NULL); break;
        case '-': st = rf_val_dec128_sub(a->i, b->i, &w, NULL); break;
        case '*': st = rf_val_dec128_mul(a->i, b->i, &w, NULL); break;
        case '/': st = rf_val_dec128_div(a->i, b->i, &w, NULL); break;
        }
        if (!st) st = rf_val_dec128_to_dec(w, &r, NULL);
        break;
    }
    case RF_TYPE_FLOAT: {
        double x = a->f, y = b->f, z;
        switch (op) {
        case '+': z = x + y; break;
        case '-': z = x - y; break;
        case '*': z = x * y; break;
        case '/':
            if (y == 0) return -1;
            z = x / y;
            break;
        default: return -1;
        }
        if (!isfinite(z)) return -1;
        out->f = rf_val_float_canon(z); /* as the evaluators compute it: 0.0 * -1.0 is 0.0 */
        return 0;
    }
    default: return -1;
    }
    if (st) return -1;
    out->i = r;
    return 0;
}

/* A chain's leading constants folded, left to right as the kernels would
** (never reassociated: only a prefix folds), up to the first step that
** fails at run time; the rest of the chain is kept after the result. */
static rf_qp_expr *fold_binop(rf_qp_program *p, rf_qp_expr *e)
{
    int32_t k = 1; /* args[0..k) are folded into acc */
    rf_fe_const acc = e->args[0]->c;
    if (!qp_e_is_const(e->args[0])) return e;
    if (e->type == RF_TYPE_STRING) {
        /* concatenation: the leading constants at once (one copy, not one per step) */
        if (e->op != '+') return e;
        int64_t len = 0;
        while (k < e->nargs && qp_e_is_const(e->args[k])) k++;
        for (int32_t i = 0; i < k; i++) len += e->args[i]->c.slen;
        char *s = qp_alloc(p, (size_t)len + 1);
        if (!s) return NULL;
        len = 0;
        for (int32_t i = 0; i < k; i++) {
            if (e->args[i]->c.slen) memcpy(s + len, e->args[i]->c.s, (size_t)e->args[i]->c.slen);
            len += e->args[i]->c.slen;
        }
        s[len] = 0;
        acc.s = s;
        acc.slen = len;
    } else {
        while (k < e->nargs && qp_e_is_const(e->args[k]) && !fold_step(e->op, e->type, &acc, &e->args[k]->c, &acc)) k++;
    }
    if (k == 1) return e;
    rf_qp_expr *x = qp_e_const(p, &acc);
    if (!x || k == e->nargs) return x;
    /* x, then the operands not folded */
    e->args[0] = x;
    memmove(e->args + 1, e->args + k, (size_t)(e->nargs - k) * sizeof *e->args);
    e->nargs -= k - 1;
    return e;
}

static rf_qp_expr *fold_call(rf_qp_program *p, rf_qp_expr *e)
{
    const rf_fe_const *a = &e->args[0]->c, *b = e->nargs > 1 ? &e->args[1]->c : NULL;
    int64_t r;
    int32_t d;
    switch (e->fn) {
    case RF_BI_INT_FLOAT: return mk_float(p, (double)a->i);
    case RF_BI_INT_DECIMAL: return rf_val_dec_from_int(a->i, &r, NULL) ? e : mk_int(p, RF_TYPE_DECIMAL, r);
    case RF_BI_DECIMAL_FLOAT: return mk_float(p, rf_val_dec_to_float(a->i));
    case RF_BI_FLOAT_DECIMAL: return rf_val_dec_from_float(a->f, &r, NULL) ? e : mk_int(p, RF_TYPE_DECIMAL, r);
    case RF_BI_BITAND: return mk_int(p, RF_TYPE_INT, a->i & b->i);
    case RF_BI_BITOR: return mk_int(p, RF_TYPE_INT, a->i | b->i);
    case RF_BI_BITXOR: return mk_int(p, RF_TYPE_INT, a->i ^ b->i);
    case RF_BI_BITNOT: return mk_int(p, RF_TYPE_INT, ~a->i);
    case RF_BI_INT_MIN: return mk_int(p, RF_TYPE_INT, a->i < b->i ? a->i : b->i);
    case RF_BI_INT_MAX: return mk_int(p, RF_TYPE_INT, a->i > b->i ? a->i : b->i);
    case RF_BI_SHL: return rf_val_int_shl(a->i, b->i, &r, NULL) ? e : mk_int(p, RF_TYPE_INT, r);
    case RF_BI_SHR: return rf_val_int_shr(a->i, b->i, &r, NULL) ? e : mk_int(p, RF_TYPE_INT, r);
    case RF_BI_YEAR: return mk_int(p, RF_TYPE_INT, rf_val_date_year((int32_t)a->i));
    case RF_BI_MONTH: return mk_int(p, RF_TYPE_INT, rf_val_date_month((int32_t)a->i));
    case RF_BI_DAY: return mk_int(p, RF_TYPE_INT, rf_val_date_day((int32_t)a->i));
    case RF_BI_ADD_DAYS: return rf_val_date_add_days((int32_t)a->i, b->i, &d, NULL) ? e : mk_int(p, RF_TYPE_DATE, d);
    case RF_BI_ADD_MONTHS:
        return rf_val_date_add_months((int32_t)a->i, b->i, &d, NULL) ? e : mk_int(p, RF_TYPE_DATE, d);
    case RF_BI_ADD_YEARS: return rf_val_date_add_years((int32_t)a->i, b->i, &d, NULL) ? e : mk_int(p, RF_TYPE_DATE, d);
    case RF_BI_DATE_PARSE: return rf_val_parse_date(a->s, a->slen, &d, NULL) ? e : mk_int(p, RF_TYPE_DATE, d);
    case RF_BI_LENGTH: return mk_int(p, RF_TYPE_INT, rf_val_utf8_chars(a->s, a->slen));
    case RF_BI_SUBSTRING: {
        int64_t i, j;
        rf_val_substring(a->s, a->slen, b->i, e->args[2]->c.i, &i, &j);
        return mk_str(p, a->s + i, j - i, "", 0);
    }
    default: return e;
    }
}

static rf_qp_expr *fold(rf_qp_program *p, rf_qp_expr *e, int64_t *changes)
{
    if (!e || p->oom) return e;
    for (int32_t i = 0; i < e->nargs; i++) e->args[i] = fold(p, e->args[i], changes);
    int allconst = e->nargs > 0;
    for (int32_t i = 0; i < e->nargs; i++) allconst &= qp_e_is_const(e->args[i]);
    rf_qp_expr *r = e;
    switch (e->kind) {
    case RF_QP_E_COL:
    case RF_QP_E_CONST: return e;
    case RF_QP_E_BINOP: {
        int32_t n = e->nargs;
        r = fold_binop(p, e);
        if (r == e && e->nargs != n) (*changes)++;
        break;
    }
    case RF_QP_E_NEG:
        if (!allconst) break;
        if (e->type == RF_TYPE_INT && e->args[0]->c.i != INT64_MIN) r = mk_int(p, RF_TYPE_INT, -e->args[0]->c.i);
        else if (e->type == RF_TYPE_DECIMAL) {
            int64_t v;
            if (!rf_val_dec_neg(e->args[0]->c.i, &v, NULL)) r = mk_int(p, RF_TYPE_DECIMAL, v);
        } else if (e->type == RF_TYPE_DEC128) {
            r = mk_int(p, RF_TYPE_DEC128, -e->args[0]->c.i); /* decimal's range is symmetric */
        } else if (e->type == RF_TYPE_FLOAT) {
            r = mk_float(p, -e->args[0]->c.f);
        }
        break;
    case RF_QP_E_CAST:
        if (!allconst) break;
        if (e->type == RF_TYPE_DECIMAL && e->args[0]->type == RF_TYPE_INT) {
            int64_t v;
            if (!rf_val_dec_from_int(e->args[0]->c.i, &v, NULL)) r = mk_int(p, RF_TYPE_DECIMAL, v);
        } else if (e->type == RF_TYPE_FLOAT && e->args[0]->type == RF_TYPE_INT) {
            r = mk_float(p, (double)e->args[0]->c.i);
        } else if (e->type == RF_TYPE_FLOAT &&
                   (e->args[0]->type == RF_TYPE_DECIMAL || e->args[0]->type == RF_TYPE_DEC128)) {
            r = mk_float(p, rf_val_dec_to_float(e->args[0]->c.i));
        } else if (e->type == RF_TYPE_DEC128 && e->args[0]->type == RF_TYPE_DECIMAL) {
            r = mk_int(p, RF_TYPE_DEC128, e->args[0]->c.i); /* wide constants hold decimals' values */
        } else if (e->type == RF_TYPE_DEC128 && e->args[0]->type == RF_TYPE_INT) {
            int64_t v;
            if (!rf_val_dec_from_int(e->args[0]->c.i, &v, NULL)) r = mk_int(p, RF_TYPE_DEC128, v);
        } else if (e->type == RF_TYPE_DECIMAL && e->args[0]->type == RF_TYPE_DEC128) {
            r = mk_int(p, RF_TYPE_DECIMAL, e->args[0]->c.i);
        }
        break;
    case RF_QP_E_CALL:
        if (allconst) r = fold_call(p, e);
        break;
    case RF_QP_E_CMP:
        if (allconst) {
            int c = qp_const_cmp(&e->args[0]->c, &e->args[1]->c), v = 0;
            switch (e->cmp) {
            case RF_CMP_EQ: v = c == 0; break;
            case RF_CMP_NE: v = c != 0; break;
            case RF_CMP_LT: v = c < 0; break;
            case RF_CMP_LE: v = c <= 0; break;
            case RF_CMP_GT: v = c > 0; break;
            case RF_CMP_GE: v = c >= 0; break;
            }
            r = qp_e_bool(p, v);
        }
        break;
    case RF_QP_E_LIKE:
        if (allconst) r = qp_e_bool(p, rf_val_like(e->args[0]->c.s, e->args[0]->c.slen, e->args[1]->c.s, e->args[1]->c.slen));
        break;
    case RF_QP_E_NOT:
        if (allconst) r = qp_e_bool(p, !e->args[0]->c.i);
        else if (e->args[0]->kind == RF_QP_E_NOT) r = e->args[0]->args[0];
        break;
    case RF_QP_E_AND: {
        int32_t n = 0;
        for (int32_t i = 0; i < e->nargs; i++) {
            rf_qp_expr *x = e->args[i];
            if (qp_e_is_const(x) && x->c.i) continue;
            if (qp_e_is_const(x) && !x->c.i) {
                /* false: but a conjunct before it that may fail is still
                ** evaluated, for the rows that reach it (docs/LANGUAGE.md,
                ** "Where such an error is raised"); those after it never are */
                if (qp_e_safe_prefix(e->args, n) == n) {
                    r = qp_e_bool(p, 0);
                    break;
                }
                e->args[n++] = x;
                break;
            }
            e->args[n++] = x;
        }
        if (r != e) break;
        if (n == 0) r = qp_e_bool(p, 1);
        else if (n == 1) r = e->args[0];
        else if (n != e->nargs) {
            e->nargs = n;
            (*changes)++;
        }
        break;
    }
    }
    if (!r) return e; /* out of memory: p->oom is set */
    if (r != e) (*changes)++;
    return r;
}

static void make_clear(rf_qp_cmd *c)
{
    c->op = RF_QP_CLEAR;
    c->nin = 0;
    c->filter = NULL;
    c->outs = NULL;
    c->nouts = 0;
    c->nkeys = 0;
    c->check_fd = 0;
}

rf_status rf_qp_pass_fold(rf_qp_program *p, rf_diags *d)
{
    (void)d;
    int64_t changes = 0;
    uint8_t *empty = rf_calloc((size_t)p->nrels + 1, 1);
    int64_t *writes = rf_calloc((size_t)p->nrels + 1, sizeof *writes);
    if (!empty || !writes) {
        free(empty);
        free(writes);
        return RF_ENOMEM;
    }
    /* a relation only ever cleared is empty everywhere (declared, never defined) */
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
            const rf_qp_cmd *c = p->blocks[b]->cmds[i];
            writes[c->dst->id]++;
            if (c->op != RF_QP_CLEAR) empty[c->dst->id] = 2;
        }
    for (int32_t i = 0; i < p->nrels; i++) empty[i] = writes[i] > 0 && empty[i] != 2;
    free(writes);
    for (int32_t b = 0; b < p->nblocks; b++) {
        rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++) {
            rf_qp_cmd *c = bl->cmds[i];
            for (int32_t j = 0; j < c->nouts; j++) c->outs[j] = fold(p, c->outs[j], &changes);
            if (c->filter) {
                c->filter = fold(p, c->filter, &changes);
                if (qp_e_is_const(c->filter)) {
                    if (c->filter->c.i) c->filter = NULL;
                    else make_clear(c);
                }
            }
            /* a temporary known to be empty empties what depends on it row by row */
            int reads_empty = 0;
            switch (c->op) {
            case RF_QP_MAPFILTER:
            case RF_QP_ANTIJOIN:
            case RF_QP_UNIQUE:
            case RF_QP_COPY:
            case RF_QP_DIFFERENCE:
            case RF_QP_ORDERLIMIT: reads_empty = empty[c->in[0]->id]; break;
            case RF_QP_MAPJOIN: reads_empty = empty[c->in[0]->id] || empty[c->in[1]->id]; break;
            case RF_QP_AGGREGATE: reads_empty = empty[c->in[0]->id]; break; /* no bindings, no group */
            case RF_QP_LFTJ:
                for (int32_t j = 0; j < c->nin; j++) reads_empty |= empty[c->in[j]->id];
                break;
            case RF_QP_UNION: {
                int32_t n = 0;
                for (int32_t j = 0; j < c->nin; j++)
                    if (!empty[c->in[j]->id]) c->in[n++] = c->in[j];
                if (n != c->nin) changes++;
                c->nin = n;
                reads_empty = n == 0;
                break;
            }
            default: break;
            }
            if (c->op == RF_QP_ANTIJOIN && !reads_empty && empty[c->in[1]->id]) {
                /* nothing to subtract: the anti-join is its projection */
                c->op = RF_QP_MAPFILTER;
                c->nin = 1;
                c->nkeys = 0;
                changes++;
            }
            if (reads_empty) {
                make_clear(c);
                changes++;
            }
            if (c->op == RF_QP_CLEAR && c->dst->kind == RF_QP_REL_TEMP) empty[c->dst->id] = 1;
            if (c->op != RF_QP_CLEAR) empty[c->dst->id] = 0;
        }
    }
    free(empty);
    return p->oom ? RF_ENOMEM : RF_OK;
}
