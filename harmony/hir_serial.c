/*
** harmony/hir_serial.c: the HIRS section of a .rfx file (docs/RFX.md).
**
** Owns: the encoding of a Harmony program with the rf_rfx stream functions,
** and the decoder, which trusts nothing: every count is checked against the
** bytes left, every enum against its range, every variable, column and
** block index against what exists, and every expression is type-checked
** against the columns it reads, so that a crafted file cannot make a kernel
** read out of bounds or misinterpret a column.
*/
#include "hir_internal.h"
#include "rf_rfx.h"

#include <string.h>

#define HIRS_VERSION 3 /* 2: input keys; 3: wide decimals (type 6, totals of decimals) */
/* what a plan holds at most (RF_QP_MAX_EXPR_HEIGHT), and the few levels a
** filter's conjunctions and negations add */
#define MAX_EXPR_DEPTH (RF_QP_MAX_EXPR_HEIGHT + 64)

/* ---- encoding --------------------------------------------------------- */

static void put_const(rf_buf *b, const rf_fe_const *c)
{
    rf_rfx_put_u8(b, (uint8_t)c->type);
    switch (c->type) {
    case RF_TYPE_FLOAT: rf_rfx_put_f64(b, c->f); break;
    case RF_TYPE_STRING: rf_rfx_put_str(b, c->s ? c->s : "", (uint64_t)c->slen); break;
    default: rf_rfx_put_i64(b, c->i); break;
    }
}

static void put_expr(rf_buf *b, const rf_qp_expr *e)
{
    rf_rfx_put_u8(b, e ? 1 : 0);
    if (!e) return;
    rf_rfx_put_u8(b, (uint8_t)e->kind);
    rf_rfx_put_u8(b, (uint8_t)e->type);
    rf_rfx_put_i32(b, e->side);
    rf_rfx_put_i32(b, e->col);
    put_const(b, &e->c);
    rf_rfx_put_u8(b, (uint8_t)e->op);
    rf_rfx_put_u8(b, (uint8_t)e->cmp);
    rf_rfx_put_u8(b, (uint8_t)e->fn);
    rf_rfx_put_u64(b, (uint64_t)e->nargs);
    for (int32_t i = 0; i < e->nargs; i++) put_expr(b, e->args[i]);
}

static void put_i32s(rf_buf *b, const int32_t *v, int32_t n)
{
    rf_rfx_put_u64(b, (uint64_t)n);
    for (int32_t i = 0; i < n; i++) rf_rfx_put_i32(b, v[i]);
}

static void put_opt_str(rf_buf *b, const char *s)
{
    rf_rfx_put_u8(b, s ? 1 : 0);
    if (s) rf_rfx_put_cstr(b, s);
}

rf_status rf_hir_serialize(const rf_hir_program *p, rf_buf *b)
{
    rf_rfx_put_u32(b, HIRS_VERSION);
    rf_rfx_put_cstr(b, p->source ? p->source : "");
    rf_rfx_put_u64(b, (uint64_t)p->nvars);
    for (int32_t i = 0; i < p->nvars; i++) {
        const rf_hir_var *v = p->vars[i];
        rf_rfx_put_cstr(b, v->name);
        rf_rfx_put_u8(b, (uint8_t)v->kind);
        rf_rfx_put_u8(b, (uint8_t)v->role);
        rf_rfx_put_u64(b, (uint64_t)v->ncols);
        for (int32_t c = 0; c < v->ncols; c++) {
            rf_rfx_put_u8(b, (uint8_t)v->types[c]);
            put_opt_str(b, v->colnames[c]);
        }
        rf_rfx_put_i64(b, v->card);
        put_opt_str(b, v->input_file);
        rf_rfx_put_u8(b, (uint8_t)v->delimiter);
        rf_rfx_put_u8(b, (uint8_t)v->header);
        put_i32s(b, v->input_key, v->ninput_key);
        put_opt_str(b, v->output_name);
        rf_rfx_put_i32(b, v->nkeys);
        put_opt_str(b, v->pred_name);
    }
    rf_rfx_put_u64(b, (uint64_t)p->nblocks);
    for (int32_t bi = 0; bi < p->nblocks; bi++) {
        const rf_hir_block *bl = p->blocks[bi];
        put_opt_str(b, bl->comment);
        rf_rfx_put_u8(b, (uint8_t)bl->term);
        rf_rfx_put_i32(b, bl->target);
        rf_rfx_put_i32(b, bl->else_target);
        put_i32s(b, bl->test, bl->ntest);
        rf_rfx_put_u64(b, (uint64_t)bl->nkernels);
        for (int32_t j = 0; j < bl->nkernels; j++) {
            const rf_hir_kernel *k = bl->kernels[j];
            rf_rfx_put_i32(b, k->id);
            rf_rfx_put_u8(b, (uint8_t)k->kind);
            rf_rfx_put_i32(b, k->out);
            put_i32s(b, k->in, k->nin);
            rf_rfx_put_i32(b, k->idx);
            put_expr(b, k->filter);
            rf_rfx_put_u64(b, (uint64_t)k->nouts);
            for (int32_t i = 0; i < k->nouts; i++) put_expr(b, k->outs[i]);
            put_i32s(b, k->lkeys, k->nkeys);
            put_i32s(b, k->rkeys, k->nkeys);
            put_i32s(b, k->group, k->ngroup);
            rf_rfx_put_u64(b, (uint64_t)k->naggs);
            for (int32_t i = 0; i < k->naggs; i++) {
                rf_rfx_put_u8(b, (uint8_t)k->aggs[i].fn);
                rf_rfx_put_i32(b, k->aggs[i].col);
                rf_rfx_put_u8(b, (uint8_t)k->aggs[i].type);
            }
            rf_rfx_put_u64(b, (uint64_t)k->nrows);
            int64_t nvals = k->kind == RF_HIR_FACTS ? k->nrows * p->vars[k->out]->ncols : 0;
            for (int64_t i = 0; i < nvals; i++) put_const(b, &k->rows[i]);
            rf_rfx_put_u64(b, (uint64_t)k->norder);
            for (int32_t i = 0; i < k->norder; i++) {
                rf_rfx_put_i32(b, k->order[i].col);
                rf_rfx_put_u8(b, (uint8_t)k->order[i].desc);
            }
            rf_rfx_put_i64(b, k->limit);
            rf_rfx_put_u8(b, (uint8_t)(k->check_fd | k->partial << 1)); /* flags: 1 check_fd, 2 partial */
            put_i32s(b, k->release, k->nrelease);
            rf_rfx_put_i32(b, k->loc.line);
            rf_rfx_put_i32(b, k->loc.col);
        }
    }
    return b->oom ? RF_ENOMEM : RF_OK;
}

/* ---- decoding --------------------------------------------------------- */

typedef struct dec {
    rf_rfx_rd rd;
    rf_hir_program *p;
    const char *why; /* the first semantic problem found */
} dec;

static int bad(dec *x, const char *why)
{
    if (!x->why) x->why = why;
    rf_rfx_rd_fail(&x->rd);
    return 0;
}

static int valid_type(uint8_t t) { return t <= RF_TYPE_DEC128; }

static int get_count(dec *x, uint64_t max, uint64_t elem, int32_t *n)
{
    uint64_t v;
    if (!rf_rfx_get_count(&x->rd, max, elem, &v)) return bad(x, "a count is larger than the section");
    *n = (int32_t)v;
    return 1;
}

static char *get_cstr(dec *x)
{
    char *s = NULL;
    if (!rf_rfx_get_cstr(&x->rd, &x->p->arena, &s)) return NULL;
    return s;
}

static const char *get_opt_str(dec *x)
{
    uint8_t has = 0;
    if (!rf_rfx_get_u8(&x->rd, &has)) return NULL;
    if (has > 1) {
        bad(x, "bad optional string flag");
        return NULL;
    }
    return has ? get_cstr(x) : NULL;
}

static int get_const(dec *x, rf_fe_const *c)
{
    uint8_t t = 0;
    memset(c, 0, sizeof *c);
    if (!rf_rfx_get_u8(&x->rd, &t)) return 0;
    if (!valid_type(t)) return bad(x, "bad constant type");
    c->type = (rf_type)t;
    switch (c->type) {
    case RF_TYPE_FLOAT: { /* an older build may have written -0.0: it is 0.0 */
        if (!rf_rfx_get_f64(&x->rd, &c->f)) return 0;
        c->f = rf_val_float_canon(c->f);
        return 1;
    }
    case RF_TYPE_STRING: {
        const char *s;
        uint64_t len;
        if (!rf_rfx_get_str(&x->rd, &s, &len)) return 0;
        char *d = rf_arena_strndup(&x->p->arena, s, (size_t)len);
        if (!d) {
            x->p->oom = 1;
            return bad(x, "out of memory");
        }
        c->s = d;
        c->slen = (int64_t)len;
        return 1;
    }
    case RF_TYPE_BOOL:
        if (!rf_rfx_get_i64(&x->rd, &c->i)) return 0;
        return c->i == 0 || c->i == 1 ? 1 : bad(x, "bad boolean constant");
    case RF_TYPE_DATE:
        if (!rf_rfx_get_i64(&x->rd, &c->i)) return 0;
        return c->i >= RF_DATE_MIN && c->i <= RF_DATE_MAX ? 1 : bad(x, "date constant out of range");
    default: return rf_rfx_get_i64(&x->rd, &c->i);
    }
}

/* The column types an expression may read: side 0 and side 1. */
typedef struct sides {
    const rf_hir_var *v[2];
} sides;

static int num(rf_type t)
{
    return t == RF_TYPE_INT || t == RF_TYPE_DECIMAL || t == RF_TYPE_DEC128 || t == RF_TYPE_FLOAT;
}

/* Decodes and type-checks one expression. */
static rf_qp_expr *get_expr(dec *x, const sides *s, int depth, int allow_null)
{
    uint8_t has = 0;
    if (!rf_rfx_get_u8(&x->rd, &has)) return NULL;
    if (!has) {
        if (!allow_null) bad(x, "missing expression");
        return NULL;
    }
    if (has != 1) {
        bad(x, "bad expression flag");
        return NULL;
    }
    if (depth > MAX_EXPR_DEPTH) {
        bad(x, "expression nested too deeply");
        return NULL;
    }
    rf_qp_expr *e = rf_arena_alloc(&x->p->arena, sizeof *e);
    if (!e) {
        x->p->oom = 1;
        bad(x, "out of memory");
        return NULL;
    }
    uint8_t kind = 0, type = 0, op = 0, cmp = 0, fn = 0;
    int32_t nargs = 0;
    rf_rfx_get_u8(&x->rd, &kind);
    rf_rfx_get_u8(&x->rd, &type);
    rf_rfx_get_i32(&x->rd, &e->side);
    rf_rfx_get_i32(&x->rd, &e->col);
    get_const(x, &e->c);
    rf_rfx_get_u8(&x->rd, &op);
    rf_rfx_get_u8(&x->rd, &cmp);
    rf_rfx_get_u8(&x->rd, &fn);
    if (!rf_rfx_rd_ok(&x->rd)) return NULL;
    if (kind > RF_QP_E_LIKE || !valid_type(type) || cmp > RF_CMP_GE || fn >= RF_BI_COUNT_) {
        bad(x, "bad expression node");
        return NULL;
    }
    e->kind = (rf_qp_expr_kind)kind;
    e->type = (rf_type)type;
    e->op = (char)op;
    e->cmp = (rf_cmp_op)cmp;
    e->fn = (rf_builtin)fn;
    /* chains and conjunctions are flat: as many operands as the section holds */
    if (!get_count(x, INT32_MAX, 2, &nargs)) return NULL;
    e->nargs = nargs;
    if (nargs) {
        e->args = rf_arena_alloc(&x->p->arena, (size_t)nargs * sizeof *e->args);
        if (!e->args) {
            x->p->oom = 1;
            bad(x, "out of memory");
            return NULL;
        }
        for (int32_t i = 0; i < nargs; i++)
            if (!(e->args[i] = get_expr(x, s, depth + 1, 0))) return NULL;
    }
    /* type rules: what the evaluators rely on */
    rf_qp_expr **a = e->args;
    int ok = 1;
    switch (e->kind) {
    case RF_QP_E_COL:
        ok = nargs == 0 && e->side >= 0 && e->side <= 1 && s->v[e->side] && e->col >= 0 &&
             e->col < s->v[e->side]->ncols && s->v[e->side]->types[e->col] == e->type;
        break;
    case RF_QP_E_CONST: ok = nargs == 0 && e->c.type == e->type; break;
    case RF_QP_E_BINOP:
        ok = nargs >= 2;
        for (int32_t i = 0; ok && i < nargs; i++) ok = a[i]->type == e->type;
        ok = ok &&
             ((num(e->type) && strchr("+-*/", e->op) && e->op) || (e->type == RF_TYPE_STRING && e->op == '+') ||
              (e->type == RF_TYPE_INT && e->op == '%'));
        break;
    case RF_QP_E_NEG: ok = nargs == 1 && num(e->type) && a[0]->type == e->type; break;
    case RF_QP_E_CALL: {
        const rf_builtin_info *bi = rf_fe_builtin_info(e->fn);
        ok = bi && !bi->is_predicate && nargs == bi->nargs && e->type == bi->result;
        for (int32_t i = 0; ok && i < nargs; i++) ok = a[i]->type == bi->args[i];
        break;
    }
    case RF_QP_E_CAST:
        ok = nargs == 1 && ((a[0]->type == RF_TYPE_INT && (e->type == RF_TYPE_DECIMAL || e->type == RF_TYPE_FLOAT)) ||
                            (a[0]->type == RF_TYPE_DECIMAL && e->type == RF_TYPE_FLOAT) ||
                            ((a[0]->type == RF_TYPE_INT || a[0]->type == RF_TYPE_DECIMAL) && e->type == RF_TYPE_DEC128) ||
                            (a[0]->type == RF_TYPE_DEC128 && (e->type == RF_TYPE_DECIMAL || e->type == RF_TYPE_FLOAT)));
        break;
    case RF_QP_E_CMP: ok = nargs == 2 && e->type == RF_TYPE_BOOL && a[0]->type == a[1]->type; break;
    case RF_QP_E_AND:
        ok = nargs >= 1 && e->type == RF_TYPE_BOOL;
        for (int32_t i = 0; ok && i < nargs; i++) ok = a[i]->type == RF_TYPE_BOOL;
        break;
    case RF_QP_E_NOT: ok = nargs == 1 && e->type == RF_TYPE_BOOL && a[0]->type == RF_TYPE_BOOL; break;
    case RF_QP_E_LIKE:
        ok = nargs == 2 && e->type == RF_TYPE_BOOL && a[0]->type == RF_TYPE_STRING && a[1]->type == RF_TYPE_STRING;
        break;
    }
    if (!ok) {
        bad(x, "an expression does not type-check");
        return NULL;
    }
    return e;
}

static int32_t *get_i32s(dec *x, int32_t max, int32_t *n)
{
    if (!get_count(x, (uint64_t)max, 4, n)) return NULL;
    int32_t *v = rf_arena_alloc(&x->p->arena, (size_t)(*n + 1) * sizeof *v);
    if (!v) {
        x->p->oom = 1;
        bad(x, "out of memory");
        return NULL;
    }
    for (int32_t i = 0; i < *n; i++) rf_rfx_get_i32(&x->rd, &v[i]);
    return rf_rfx_rd_ok(&x->rd) ? v : NULL;
}

static int var_ok(dec *x, int32_t v) { return v >= 0 && v < x->p->nvars; }

static int cols_ok(const rf_hir_var *v, const int32_t *cols, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (cols[i] < 0 || cols[i] >= v->ncols) return 0;
    return 1;
}

/* The inputs and index a kernel kind needs, so the runtime can trust them. */
static int kernel_ok(dec *x, const rf_hir_kernel *k)
{
    rf_hir_var **V = x->p->vars;
    if (!var_ok(x, k->out)) return 0;
    for (int32_t i = 0; i < k->nin; i++)
        if (!var_ok(x, k->in[i])) return 0;
    const rf_hir_var *out = V[k->out];
    int rel_out = out->kind == RF_HIR_V_REL;
#define REL(i) (k->nin > (i) && V[k->in[i]]->kind == RF_HIR_V_REL)
#define IDX(i, nc) (k->nin > (i) && V[k->in[i]]->kind == RF_HIR_V_INDEX && V[k->in[i]]->ncols == (nc) && k->idx == k->in[i])
    switch (k->kind) {
    case RF_HIR_MAP: return k->nin == 1 && REL(0) && rel_out && k->nouts == out->ncols;
    case RF_HIR_JOIN_INDEX:
    case RF_HIR_ANTI_INDEX:
        return k->nin == 2 && REL(0) && REL(1) && out->kind == RF_HIR_V_INDEX &&
               out->ncols == (k->kind == RF_HIR_JOIN_INDEX ? 2 : 1) && cols_ok(V[k->in[0]], k->lkeys, k->nkeys) &&
               cols_ok(V[k->in[1]], k->rkeys, k->nkeys);
    case RF_HIR_JOIN_MAP: return k->nin == 3 && REL(0) && REL(1) && IDX(2, 2) && rel_out && k->nouts == out->ncols;
    case RF_HIR_GATHER_MAP: return k->nin == 2 && REL(0) && IDX(1, 1) && rel_out && k->nouts == out->ncols;
    case RF_HIR_GROUP:
        return k->nin == 1 && REL(0) && out->kind == RF_HIR_V_INDEX && out->ncols == 1 &&
               cols_ok(V[k->in[0]], k->group, k->ngroup);
    case RF_HIR_REDUCE: {
        if (!(k->nin == 2 && REL(0) && IDX(1, 1) && rel_out && out->ncols == k->ngroup + k->naggs &&
              cols_ok(V[k->in[0]], k->group, k->ngroup)))
            return 0;
        for (int32_t i = 0; i < k->ngroup; i++)
            if (out->types[i] != V[k->in[0]]->types[k->group[i]]) return 0;
        for (int32_t i = 0; i < k->naggs; i++) {
            const rf_qp_agg *g = &k->aggs[i];
            if ((unsigned)g->fn > RF_AGG_AVG || !valid_type((uint8_t)g->type)) return 0;
            if (g->fn == RF_AGG_COUNT ? g->col != -1 : (g->col < 0 || g->col >= V[k->in[0]]->ncols)) return 0;
            if (out->types[k->ngroup + i] != g->type) return 0;
        }
        return 1;
    }
    case RF_HIR_INSERT:
        if (k->nin < 2 || k->in[0] != k->out) return 0;
        /* fall through - the inputs are relations of the result's columns */
    case RF_HIR_CONCAT:
    case RF_HIR_UNIQUE:
    case RF_HIR_DIFFERENCE:
    case RF_HIR_COPY:
        if (k->nin < 1 || !rel_out) return 0;
        if ((k->kind == RF_HIR_UNIQUE || k->kind == RF_HIR_COPY) && k->nin != 1) return 0;
        if (k->kind == RF_HIR_DIFFERENCE && k->nin != 2) return 0;
        for (int32_t i = 0; i < k->nin; i++) {
            const rf_hir_var *v = V[k->in[i]];
            if (v->kind != RF_HIR_V_REL || v->ncols != out->ncols) return 0;
            for (int32_t c = 0; c < v->ncols; c++)
                if (v->types[c] != out->types[c]) return 0;
        }
        return !k->check_fd || (out->pred_name && out->nkeys >= 0 && out->nkeys < out->ncols);
    case RF_HIR_SORT:
        if (!(k->nin == 1 && REL(0) && out->kind == RF_HIR_V_INDEX && out->ncols == 1)) return 0;
        for (int32_t i = 0; i < k->norder; i++)
            if (k->order[i].col < 0 || k->order[i].col >= V[k->in[0]]->ncols) return 0;
        return 1;
    case RF_HIR_GATHER: {
        if (!(k->nin == 2 && REL(0) && IDX(1, 1) && rel_out && V[k->in[0]]->ncols == out->ncols)) return 0;
        for (int32_t c = 0; c < out->ncols; c++)
            if (V[k->in[0]]->types[c] != out->types[c]) return 0;
        return 1;
    }
    case RF_HIR_FACTS: return k->nin == 0 && rel_out;
    case RF_HIR_CLEAR: return k->nin == 0;
    case RF_HIR_LFTJ: {
        /* int variables; each input's columns bind increasing variables */
        /* within the executors' limits (runtime/rf_rt_lftj.h): 8 inputs, 16 variables, 16 bounds */
        if (!rel_out || k->nin < 1 || k->nin > 8 || out->ncols < 1 || out->ncols > 16 || k->idx != -1) return 0;
        for (int32_t c = 0; c < out->ncols; c++)
            if (out->types[c] != RF_TYPE_INT) return 0;
        uint64_t seen = 0;
        int32_t j = 0;
        for (int32_t i = 0; i < k->nin; i++) {
            const rf_hir_var *v = V[k->in[i]];
            if (v->kind != RF_HIR_V_REL || v->ncols < 1) return 0;
            for (int32_t c = 0; c < v->ncols; c++, j++) {
                if (j >= k->nkeys || v->types[c] != RF_TYPE_INT || k->rkeys[j] != i) return 0;
                if (k->lkeys[j] < 0 || k->lkeys[j] >= out->ncols || (c && k->lkeys[j] <= k->lkeys[j - 1])) return 0;
                seen |= UINT64_C(1) << k->lkeys[j];
            }
        }
        if (k->filter) {
            const rf_qp_expr *one = k->filter;
            const rf_qp_expr *const *cs = one->kind == RF_QP_E_AND ? (const rf_qp_expr *const *)one->args : &one;
            int32_t n = one->kind == RF_QP_E_AND ? one->nargs : 1;
            if (n > 16) return 0;
            for (int32_t i = 0; i < n; i++) {
                const rf_qp_expr *e = cs[i];
                if (e->kind != RF_QP_E_CMP || e->nargs != 2) return 0;
                for (int32_t a = 0; a < 2; a++)
                    if (e->args[a]->type != RF_TYPE_INT ||
                        (e->args[a]->kind != RF_QP_E_COL && e->args[a]->kind != RF_QP_E_CONST) ||
                        (e->args[a]->kind == RF_QP_E_COL && e->args[a]->side != 0))
                        return 0;
            }
        }
        return j == k->nkeys && seen == (out->ncols == 64 ? UINT64_MAX : (UINT64_C(1) << out->ncols) - 1);
    }
    }
#undef REL
#undef IDX
    return 0;
}

static int check_outs(const rf_hir_var *out, rf_qp_expr **outs, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (outs[i]->type != out->types[i]) return 0;
    return 1;
}

static rf_status decode(dec *x)
{
    rf_hir_program *p = x->p;
    uint32_t version = 0;
    rf_rfx_get_u32(&x->rd, &version);
    if (rf_rfx_rd_ok(&x->rd) && version < HIRS_VERSION)
        return bad(x, "the program was compiled by an older redfox (Harmony section version older than this one's): compile it again"), RF_EUSER;
    if (rf_rfx_rd_ok(&x->rd) && version != HIRS_VERSION)
        return bad(x, "the program was compiled by a newer redfox (unknown Harmony section version)"), RF_EUSER;
    p->source = get_cstr(x);
    int32_t nvars = 0;
    if (!get_count(x, INT32_MAX / 2, 8, &nvars)) return RF_EUSER;
    for (int32_t i = 0; i < nvars && rf_rfx_rd_ok(&x->rd); i++) {
        char *name = get_cstr(x);
        uint8_t kind = 0, role = 0;
        int32_t ncols = 0;
        rf_rfx_get_u8(&x->rd, &kind);
        rf_rfx_get_u8(&x->rd, &role);
        if (!rf_rfx_rd_ok(&x->rd)) break;
        if (kind > RF_HIR_V_INDEX || role > RF_HIR_ROLE_OUTPUT) return bad(x, "bad variable kind"), RF_EUSER;
        if (!get_count(x, 4096, 2, &ncols)) break;
        rf_hir_var *v = rf_hir_add_var(p, name ? name : "", (rf_hir_var_kind)kind, (rf_hir_role)role, ncols);
        if (!v) return RF_ENOMEM;
        for (int32_t c = 0; c < ncols; c++) {
            uint8_t t = 0;
            rf_rfx_get_u8(&x->rd, &t);
            if (!valid_type(t)) return bad(x, "bad column type"), RF_EUSER;
            v->types[c] = (rf_type)t;
            v->colnames[c] = get_opt_str(x);
        }
        uint8_t delim = 0, header = 0;
        rf_rfx_get_i64(&x->rd, &v->card);
        v->input_file = get_opt_str(x);
        rf_rfx_get_u8(&x->rd, &delim);
        rf_rfx_get_u8(&x->rd, &header);
        v->delimiter = (char)delim;
        v->header = header;
        int32_t nik = 0;
        int32_t *ik = get_i32s(x, 4096, &nik);
        if (!ik) break;
        if (nik > 0 && v->role != RF_HIR_ROLE_INPUT) return bad(x, "a key on a variable that is not an input"), RF_EUSER;
        for (int32_t q = 0; q < nik; q++) {
            if (ik[q] < 0 || ik[q] >= v->ncols) return bad(x, "bad input key column"), RF_EUSER;
            for (int32_t j = 0; j < q; j++)
                if (ik[j] == ik[q]) return bad(x, "an input key names a column twice"), RF_EUSER;
        }
        v->input_key = nik ? ik : NULL;
        v->ninput_key = nik;
        v->output_name = get_opt_str(x);
        rf_rfx_get_i32(&x->rd, &v->nkeys);
        v->pred_name = get_opt_str(x);
        if (!rf_rfx_rd_ok(&x->rd)) break;
        if (v->nkeys < 0 || v->nkeys > v->ncols || header > 1) return bad(x, "bad variable"), RF_EUSER;
        if (v->role == RF_HIR_ROLE_INPUT && (!v->input_file || v->kind != RF_HIR_V_REL || delim == '\n' || delim == '\r'))
            return bad(x, "bad input variable"), RF_EUSER;
        if (v->output_name && (strchr(v->output_name, '/') || v->output_name[0] == '.' || !v->output_name[0]))
            return bad(x, "bad output name"), RF_EUSER;
        if (v->kind == RF_HIR_V_INDEX && (v->ncols < 1 || v->ncols > 2)) return bad(x, "bad index variable"), RF_EUSER;
    }
    int32_t nblocks = 0;
    if (!rf_rfx_rd_ok(&x->rd) || !get_count(x, INT32_MAX / 2, 8, &nblocks)) return RF_EUSER;
    if (nblocks < 1) return bad(x, "no blocks"), RF_EUSER;
    int32_t kernel_count = 0;
    for (int32_t bi = 0; bi < nblocks && rf_rfx_rd_ok(&x->rd); bi++) {
        const char *comment = get_opt_str(x);
        rf_hir_block *b = rf_hir_add_block(p, comment);
        if (!b) return RF_ENOMEM;
        uint8_t term = 0;
        rf_rfx_get_u8(&x->rd, &term);
        rf_rfx_get_i32(&x->rd, &b->target);
        rf_rfx_get_i32(&x->rd, &b->else_target);
        b->test = get_i32s(x, 1 << 20, &b->ntest);
        if (!rf_rfx_rd_ok(&x->rd)) break;
        if (term > RF_HIR_T_HALT) return bad(x, "bad terminator"), RF_EUSER;
        b->term = (rf_hir_term_kind)term;
        if ((b->term != RF_HIR_T_HALT && (b->target < 0 || b->target >= nblocks)) ||
            (b->term == RF_HIR_T_BRANCH && (b->else_target < 0 || b->else_target >= nblocks)))
            return bad(x, "a branch to a block that does not exist"), RF_EUSER;
        for (int32_t t = 0; t < b->ntest; t++)
            if (!var_ok(x, b->test[t])) return bad(x, "a branch tests a variable that does not exist"), RF_EUSER;
        int32_t nk = 0;
        if (!get_count(x, INT32_MAX / 2, 16, &nk)) break;
        for (int32_t j = 0; j < nk && rf_rfx_rd_ok(&x->rd); j++) {
            int32_t id = 0, out = -1;
            uint8_t kind = 0;
            rf_rfx_get_i32(&x->rd, &id);
            rf_rfx_get_u8(&x->rd, &kind);
            rf_rfx_get_i32(&x->rd, &out);
            if (!rf_rfx_rd_ok(&x->rd)) break;
            if (kind > RF_HIR_LFTJ || !var_ok(x, out)) return bad(x, "bad kernel"), RF_EUSER;
            int32_t nin = 0;
            int32_t *in = get_i32s(x, 1 << 16, &nin);
            if (!in) break;
            rf_hir_kernel *k = rf_hir_add_kernel(p, b, (rf_hir_kind)kind, out, nin);
            if (!k) return RF_ENOMEM;
            k->id = id; /* ids are program order; the kernels come in scheduled order */
            kernel_count++;
            memcpy(k->in, in, (size_t)nin * sizeof *in);
            rf_rfx_get_i32(&x->rd, &k->idx);
            for (int32_t i = 0; i < nin; i++)
                if (!var_ok(x, in[i])) return bad(x, "a kernel reads a variable that does not exist"), RF_EUSER;
            if (k->idx != -1 && !var_ok(x, k->idx)) return bad(x, "bad index variable"), RF_EUSER;
            sides s = {{NULL, NULL}};
            if (nin > 0 && p->vars[in[0]]->kind == RF_HIR_V_REL) s.v[0] = p->vars[in[0]];
            if (k->kind == RF_HIR_LFTJ) s.v[0] = p->vars[out]; /* the filter reads the variables */
            if (k->kind == RF_HIR_JOIN_MAP && nin > 1 && p->vars[in[1]]->kind == RF_HIR_V_REL) s.v[1] = p->vars[in[1]];
            k->filter = get_expr(x, &s, 0, 1);
            if (k->filter && k->filter->type != RF_TYPE_BOOL) return bad(x, "a filter is not boolean"), RF_EUSER;
            if (!get_count(x, 4096, 2, &k->nouts)) break;
            k->outs = rf_arena_alloc(&p->arena, (size_t)(k->nouts + 1) * sizeof *k->outs);
            if (!k->outs) return RF_ENOMEM;
            for (int32_t i = 0; i < k->nouts && rf_rfx_rd_ok(&x->rd); i++) k->outs[i] = get_expr(x, &s, 0, 0);
            k->lkeys = get_i32s(x, 4096, &k->nkeys);
            int32_t nr = 0;
            k->rkeys = get_i32s(x, 4096, &nr);
            k->group = get_i32s(x, 4096, &k->ngroup);
            if (!rf_rfx_rd_ok(&x->rd)) break;
            if (nr != k->nkeys) return bad(x, "join key lists differ in length"), RF_EUSER;
            if (!get_count(x, 4096, 6, &k->naggs)) break;
            k->aggs = rf_arena_alloc(&p->arena, (size_t)(k->naggs + 1) * sizeof *k->aggs);
            if (!k->aggs) return RF_ENOMEM;
            for (int32_t i = 0; i < k->naggs; i++) {
                uint8_t fn = 0, t = 0;
                rf_rfx_get_u8(&x->rd, &fn);
                rf_rfx_get_i32(&x->rd, &k->aggs[i].col);
                rf_rfx_get_u8(&x->rd, &t);
                k->aggs[i].fn = (rf_agg_fn)fn;
                k->aggs[i].type = (rf_type)t;
            }
            uint64_t nrows = 0;
            rf_rfx_get_u64(&x->rd, &nrows);
            if (!rf_rfx_rd_ok(&x->rd)) break;
            int32_t ncols = p->vars[out]->ncols;
            if (k->kind == RF_HIR_FACTS) {
                /* each value takes at least 9 bytes */
                if (ncols > 0 && nrows > rf_rfx_rd_remaining(&x->rd) / 9 / (uint64_t)ncols)
                    return bad(x, "a count is larger than the section"), RF_EUSER;
                k->nrows = (int64_t)nrows;
                int64_t nvals = k->nrows * ncols;
                k->rows = rf_arena_alloc(&p->arena, (size_t)(nvals + 1) * sizeof *k->rows);
                if (!k->rows) return RF_ENOMEM;
                for (int64_t i = 0; i < nvals && rf_rfx_rd_ok(&x->rd); i++) {
                    get_const(x, &k->rows[i]);
                    if (rf_rfx_rd_ok(&x->rd) && k->rows[i].type != p->vars[out]->types[i % ncols])
                        return bad(x, "a fact does not match its column type"), RF_EUSER;
                }
            } else if (nrows) {
                return bad(x, "rows given for a kernel that is not facts"), RF_EUSER;
            }
            if (!get_count(x, 4096, 5, &k->norder)) break;
            k->order = rf_arena_alloc(&p->arena, (size_t)(k->norder + 1) * sizeof *k->order);
            if (!k->order) return RF_ENOMEM;
            for (int32_t i = 0; i < k->norder; i++) {
                uint8_t desc = 0;
                rf_rfx_get_i32(&x->rd, &k->order[i].col);
                rf_rfx_get_u8(&x->rd, &desc);
                if (desc > 1) return bad(x, "bad sort direction"), RF_EUSER;
                k->order[i].desc = desc;
            }
            uint8_t fd = 0;
            rf_rfx_get_i64(&x->rd, &k->limit);
            rf_rfx_get_u8(&x->rd, &fd);
            if (fd > 3) return bad(x, "bad kernel flags"), RF_EUSER;
            k->check_fd = fd & 1;
            k->partial = fd >> 1;
            k->release = get_i32s(x, 1 << 20, &k->nrelease);
            rf_rfx_get_i32(&x->rd, &k->loc.line);
            rf_rfx_get_i32(&x->rd, &k->loc.col);
            k->loc.file = p->source;
            if (!rf_rfx_rd_ok(&x->rd)) break;
            for (int32_t i = 0; i < k->nrelease; i++)
                if (!var_ok(x, k->release[i])) return bad(x, "a kernel releases a variable that does not exist"), RF_EUSER;
            if (k->limit < -1) return bad(x, "bad limit"), RF_EUSER;
            if (!kernel_ok(x, k)) return bad(x, "a kernel's inputs do not fit its kind"), RF_EUSER;
            if (k->nouts && !check_outs(p->vars[out], k->outs, k->nouts))
                return bad(x, "a kernel's outputs do not match its result's columns"), RF_EUSER;
        }
    }
    if (!rf_rfx_rd_ok(&x->rd)) return RF_EUSER;
    if (!rf_rfx_rd_at_end(&x->rd)) return bad(x, "trailing bytes after the Harmony program"), RF_EUSER;
    /* kernel ids (profiles index by them) must be 0 .. n-1, each once */
    uint8_t *seen = rf_calloc((size_t)kernel_count + 1, 1);
    if (!seen) return RF_ENOMEM;
    int ids_ok = 1;
    for (int32_t bi = 0; bi < p->nblocks && ids_ok; bi++)
        for (int32_t j = 0; j < p->blocks[bi]->nkernels && ids_ok; j++) {
            int32_t id = p->blocks[bi]->kernels[j]->id;
            ids_ok = id >= 0 && id < kernel_count && !seen[id];
            if (ids_ok) seen[id] = 1;
        }
    free(seen);
    if (!ids_ok) return bad(x, "kernel ids are not 0 .. n-1"), RF_EUSER;
    return p->oom ? RF_ENOMEM : RF_OK;
}

rf_status rf_hir_deserialize(const char *file, const void *data, uint64_t size, rf_hir_program **out,
                             rf_diags *d)
{
    *out = NULL;
    rf_hir_program *p = rf_calloc(1, sizeof *p);
    if (!p) return RF_ENOMEM;
    rf_arena_init(&p->arena);
    dec x;
    memset(&x, 0, sizeof x);
    x.p = p;
    rf_rfx_rd_init(&x.rd, data, size);
    rf_status st = decode(&x);
    if (st == RF_OK && p->oom) st = RF_ENOMEM;
    if (st == RF_EUSER || (st == RF_OK && !rf_rfx_rd_ok(&x.rd))) {
        if (x.rd.oom) st = RF_ENOMEM;
        else {
            rf_error(d, rf_mkloc(file, 0, 0), "the program in this .rfx file is malformed: %s (at byte %llu of the HIRS section)",
                     x.why ? x.why : "it ends too early", (unsigned long long)(x.rd.err_pos));
            st = RF_EUSER;
        }
    }
    if (st) {
        rf_hir_free(p);
        return st;
    }
    *out = p;
    return RF_OK;
}
