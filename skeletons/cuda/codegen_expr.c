/*
** skeletons/cuda/codegen_expr.c: rf_qp_expr trees -> device code.
**
** Owns: the translation of one kernel's expressions into CUDA C++ with the
** CPU's evaluation order and error rules (a node's arguments left to right
** before the node, a conjunction stopped at its first false argument), the
** string constants and string tables a plan assigns read from their slots,
** the loads hoisted ahead of a filter (all in flight at once), and long
** chains and conjunctions (more than RF_GPU_CHAIN_CHUNK operands) as loops
** over operand tables and calls of noinline helpers, so that NVRTC's time
** grows linearly with them. Map kernels (codegen.c) and fused kernels
** (codegen_fused.c) both emit through it; rf_cg_gen (codegen_internal.h) is
** one kernel's emission state.
*/
#include "codegen_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A decimal is an i64 count of millionths; a wide decimal (a total of
** decimals) an i128 one, with rf_base.cuh's *_w arithmetic (rf_value.c's). */
static int is_dec(rf_type t) { return t == RF_TYPE_DECIMAL; }
static int is_wide(rf_type t) { return t == RF_TYPE_DEC128; }

const char *rf_cg_ctype(rf_type t)
{
    switch (t) {
    case RF_TYPE_FLOAT: return "double";
    case RF_TYPE_DATE: return "rf::i32";
    case RF_TYPE_STRING: return "rf::u32";
    case RF_TYPE_BOOL: return "bool";
    case RF_TYPE_DEC128: return "rf::i128";
    default: return "rf::i64";
    }
}

const char *rf_cg_stype(rf_type t)
{
    switch (t) {
    case RF_TYPE_FLOAT: return "double";
    case RF_TYPE_DATE: return "rf::i32";
    case RF_TYPE_STRING: return "rf::u32";
    case RF_TYPE_BOOL: return "rf::u8";
    case RF_TYPE_DEC128: return "rf::i128";
    default: return "rf::i64";
    }
}

static void ind(rf_cg_gen *g)
{
    for (int i = 0; i < g->depth + 2; i++) rf_buf_puts(g->b, "    ");
}

static void put_i64(rf_buf *b, int64_t v)
{
    if (v == INT64_MIN)
        rf_buf_puts(b, "(-9223372036854775807LL - 1)");
    else
        rf_buf_printf(b, "%" PRId64 "LL", v);
}

static int new_var(rf_cg_gen *g, rf_type t)
{
    int v = g->nv++;
    ind(g);
    rf_buf_printf(g->b, "%s v%d", rf_cg_ctype(t), v);
    return v;
}

/* "if (!CALL) fail" for a fallible operation writing v. */
static void checked(rf_cg_gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void checked(rf_cg_gen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = rf_vsprintf(fmt, ap);
    va_end(ap);
    ind(g);
    rf_buf_printf(g->b, "if (!(%s)) %s\n", s ? s : "false", g->failstmt);
    free(s);
}

int rf_cg_emit(rf_cg_gen *g, const rf_qp_expr *e);

static int emit_island(rf_cg_gen *g, const rf_qp_expr *e, int j, const rf_gpu_island *is)
{
    int code = -1;
    int jt = g->kisland + j; /* the table's slot */
    if (is->side >= 0) {
        code = g->nv++;
        ind(g);
        rf_buf_printf(g->b, "rf::i64 v%d = (rf::i64)rf::ld<rf::u32>(a.c%d[%d], q%d) - (rf::i64)a.k[%d];\n", code,
                      is->side, is->col, is->side, RF_GPU_KISLAND + g->kisland + j);
    }
    char idx[32];
    if (code >= 0)
        snprintf(idx, sizeof idx, "v%d", code);
    else
        snprintf(idx, sizeof idx, "0");
    int v;
    switch (e->type) {
    case RF_TYPE_BOOL:
        v = new_var(g, e->type);
        rf_buf_printf(g->b, " = ((const rf::u8 *)a.t[%d])[%s] != 0;\n", jt, idx);
        break;
    case RF_TYPE_STRING:
        v = new_var(g, e->type);
        rf_buf_printf(g->b, " = ((const rf::u32 *)a.t[%d])[%s];\n", jt, idx);
        break;
    case RF_TYPE_DATE: {
        int w = g->nv++;
        ind(g);
        rf_buf_printf(g->b, "rf::i64 v%d = ((const rf::i64 *)a.t[%d])[%s];\n", w, jt, idx);
        ind(g);
        rf_buf_printf(g->b, "if (v%d == RF_I64_MIN) %s\n", w, g->failstmt);
        v = new_var(g, e->type);
        rf_buf_printf(g->b, " = (rf::i32)v%d;\n", w);
        break;
    }
    default:
        v = new_var(g, e->type);
        rf_buf_printf(g->b, " = ((const rf::i64 *)a.t[%d])[%s];\n", jt, idx);
        break;
    }
    return v;
}

static const char *wide_fn(char op)
{
    switch (op) {
    case '+': return "rf::add_w";
    case '-': return "rf::sub_w";
    case '*': return "rf::mul_w";
    default: return "rf::div_w";
    }
}

static const char *dec_fn(char op, int dec)
{
    switch (op) {
    case '+': return dec ? "rf::add_d" : "rf::add_i";
    case '-': return dec ? "rf::sub_d" : "rf::sub_i";
    case '*': return dec ? "rf::mul_d" : "rf::mul_i";
    case '%': return "rf::mod_i"; /* int only (the checker) */
    default: return dec ? "rf::div_d" : "rf::div_i";
    }
}

/* from -> to conversion of variable a into a new variable. */
static int emit_convert(rf_cg_gen *g, rf_type from, rf_type to, int a)
{
    int v = new_var(g, to);
    if (from == to) {
        rf_buf_printf(g->b, " = v%d;\n", a);
    } else if (to == RF_TYPE_DEC128 && (from == RF_TYPE_INT || from == RF_TYPE_DECIMAL)) {
        rf_buf_printf(g->b, " = rf::%s(v%d);\n", from == RF_TYPE_INT ? "int_to_w" : "dec_to_w", a);
    } else if (from == RF_TYPE_DEC128 && to == RF_TYPE_DECIMAL) {
        rf_buf_puts(g->b, ";\n");
        checked(g, "rf::w_to_dec(v%d, &v%d)", a, v);
    } else if (from == RF_TYPE_DEC128 && to == RF_TYPE_FLOAT) {
        rf_buf_printf(g->b, " = rf::w_to_float(v%d);\n", a);
    } else if (from == RF_TYPE_INT && to == RF_TYPE_DECIMAL) {
        rf_buf_puts(g->b, ";\n");
        checked(g, "rf::int_to_dec(v%d, &v%d)", a, v);
    } else if (from == RF_TYPE_INT && to == RF_TYPE_FLOAT) {
        rf_buf_printf(g->b, " = rf::int_to_float(v%d);\n", a);
    } else if (from == RF_TYPE_DECIMAL && to == RF_TYPE_FLOAT) {
        rf_buf_printf(g->b, " = rf::dec_to_float(v%d);\n", a);
    } else if (from == RF_TYPE_FLOAT && to == RF_TYPE_DECIMAL) {
        rf_buf_puts(g->b, ";\n");
        checked(g, "rf::float_to_dec(v%d, &v%d)", a, v);
    } else {
        rf_buf_puts(g->b, " = 0;\n");
        g->bad = 1;
    }
    return v;
}

/* Operands per helper function (rf_gpu_codegen.h). */
#define CHUNK RF_GPU_CHAIN_CHUNK

static void emit_step(rf_cg_gen *g, const rf_qp_expr *e, int v, int b)
{
    if (e->type == RF_TYPE_FLOAT) {
        ind(g);
        rf_buf_printf(g->b, "v%d = rf::fz(v%d %c v%d);\n", v, v, e->op, b); /* a zero has no sign */
    } else if (is_wide(e->type) && e->op != '%') {
        checked(g, "%s(v%d, v%d, &v%d)", wide_fn(e->op), v, b, v);
    } else if (e->type == RF_TYPE_INT || is_dec(e->type)) {
        checked(g, "%s(v%d, v%d, &v%d)", dec_fn(e->op, is_dec(e->type)), v, b, v);
    } else {
        g->bad = 1;
    }
}

static void emit_conjunct(rf_cg_gen *g, const rf_qp_expr *x, int v)
{
    ind(g);
    rf_buf_printf(g->b, "if (v%d) {\n", v);
    g->depth++;
    int r = rf_cg_emit(g, x);
    ind(g);
    rf_buf_printf(g->b, "v%d = v%d;\n", v, r);
    g->depth--;
    ind(g);
    rf_buf_puts(g->b, "}\n");
}

/* Operands [from, to) of chain (or conjunction) e folded into v%d by a
** helper function hN(a, r, acc), false where an operation fails; the call
** goes where the operands would have been. Columns are loaded in the
** helper (the caller's up-front loads are not in scope). */
static void emit_chunk(rf_cg_gen *g, const rf_qp_expr *e, int32_t from, int32_t to, int v)
{
    int id = g->nhelp++;
    ind(g);
    if (e->kind == RF_QP_E_AND) rf_buf_printf(g->b, "if (v%d && !h%d(a, r, v%d)) %s\n", v, id, v, g->failstmt);
    else rf_buf_printf(g->b, "if (!h%d(a, r, v%d)) %s\n", id, v, g->failstmt);
    rf_buf hb, *saved_b = g->b;
    const char *saved_fail = g->failstmt;
    int saved_depth = g->depth, saved_cse = g->cse;
    uint8_t saved_hset[2][RF_GPU_MAXC];
    memcpy(saved_hset, g->hset, sizeof saved_hset);
    memset(g->hset, 0, sizeof g->hset);
    rf_buf_init(&hb);
    g->b = &hb;
    g->failstmt = "return false;";
    g->depth = 0;
    g->cse = 0; /* the helper's variables are its own */
    rf_buf_printf(&hb, "    static __device__ __noinline__ bool h%d(const rf::Args &a, rf::i64 r, %s &acc)\n    {\n", id,
                  rf_cg_ctype(e->type));
    int used[2] = {1, 1};
    rf_cg_row_indices(&hb, used);
    int w = new_var(g, e->type);
    rf_buf_puts(&hb, " = acc;\n        (void)q0; (void)q1;\n");
    for (int32_t i = from; i < to; i++) rf_cg_hoist_loads(g, e->args[i]); /* each column once */
    for (int32_t i = from; i < to; i++) {
        if (e->kind == RF_QP_E_AND) emit_conjunct(g, e->args[i], w);
        else emit_step(g, e, w, rf_cg_emit(g, e->args[i]));
    }
    rf_buf_printf(&hb, "        acc = v%d;\n        return true;\n    }\n", w);
    g->b = saved_b;
    g->failstmt = saved_fail;
    g->depth = saved_depth;
    g->cse = saved_cse;
    memcpy(g->hset, saved_hset, sizeof saved_hset);
    rf_buf_puts(g->helpers, rf_buf_cstr(&hb));
    if (hb.oom) g->bad = 1;
    rf_buf_free(&hb);
}

/* A leaf a table loop reads: a column of the kernel's inputs or a
** constant, of 8 bytes (int, decimal, float). */
static int table_leaf(const rf_cg_gen *g, const rf_qp_expr *x)
{
    if (x->type != RF_TYPE_INT && !is_dec(x->type) && x->type != RF_TYPE_FLOAT) return 0;
    if (x->kind == RF_QP_E_CONST) return 1;
    if (x->kind != RF_QP_E_COL || x->side < 0 || x->side > 1 || x->col < 0 || x->col >= RF_GPU_MAXC) return 0;
    for (int32_t j = 0; j < g->pl->nisland; j++)
        if (g->pl->islands[j].e == x) return 0;
    return 1;
}

/* Whether operand i of chain or conjunction e goes to a table loop: a
** chain's leaf, or a conjunction's comparison of two leaves of one type. */
static int table_item(const rf_cg_gen *g, const rf_qp_expr *e, int32_t i)
{
    const rf_qp_expr *x = e->args[i];
    if (e->kind == RF_QP_E_BINOP) return table_leaf(g, x);
    return x->kind == RF_QP_E_CMP && x->nargs == 2 && table_leaf(g, x->args[0]) && table_leaf(g, x->args[1]) &&
           x->args[0]->type == x->args[1]->type;
}

static void table_int(rf_buf *b, const char *name, const int32_t *v, int32_t n)
{
    rf_buf_printf(b, "__device__ const rf::i32 %s[%d] = {", name, n);
    for (int32_t i = 0; i < n; i++) rf_buf_printf(b, "%s%d", !i ? "\n    " : i % 16 ? "," : ",\n    ", v[i]);
    rf_buf_puts(b, "};\n");
}

/* A leaf's table entries: its column (side << 16 | col), or -1 and its
** value's 64 bits. */
static void leaf_entry(const rf_qp_expr *x, int32_t *col, int64_t *val)
{
    *col = -1;
    *val = 0;
    if (x->kind == RF_QP_E_COL) *col = x->side << 16 | x->col;
    else if (x->type == RF_TYPE_FLOAT) memcpy(val, &x->c.f, 8);
    else *val = x->c.i;
}

/* The leaf at table entry t[i] as a value of C type T ("rf::i64" or
** "double"): its constant or its column's row. */
static void leaf_read(rf_cg_gen *g, const char *T, const char *col, const char *val, int sides)
{
    const char *cv = strcmp(T, "double") ? "" : "rf::bitsd((rf::u64)";
    const char *ce = strcmp(T, "double") ? "" : ")";
    if (sides == 0) rf_buf_printf(g->b, "%s%s[i]%s", cv, val, ce);
    else if (sides == 1)
        rf_buf_printf(g->b, "%s[i] < 0 ? %s%s[i]%s : rf::ld<%s>(a.c0[%s[i]], q0)", col, cv, val, ce, T, col);
    else
        rf_buf_printf(g->b, "%s[i] < 0 ? %s%s[i]%s : %s[i] >> 16 ? rf::ld<%s>(a.c1[%s[i] & 0xffff], q1) : rf::ld<%s>(a.c0[%s[i]], q0)",
                      col, cv, val, ce, col, T, col, T, col);
}

/* One branch of a table loop's comparison: entry i's two leaves as values of
** C type T, compared by cmp ("rf::fcmp" or "rf::icmp") into c. */
static void compare_leaves(rf_cg_gen *g, const char *T, const char *cmp, const char *c0, const char *v0, const char *c1,
                           const char *v1, int sides)
{
    const char *name[2] = {"x", "y"}, *col[2] = {c0, c1}, *val[2] = {v0, v1};
    for (int l = 0; l < 2; l++) {
        ind(g);
        rf_buf_printf(g->b, "    const %s %s = ", T, name[l]);
        leaf_read(g, T, col[l], val[l], sides);
        rf_buf_puts(g->b, ";\n");
    }
    ind(g);
    rf_buf_printf(g->b, "    c = %s(x, y);\n", cmp);
}

/* Operands [from, to) of chain or conjunction e (table_item each) as one
** loop over tables of their columns and constants: the code does not grow
** with them, so neither does NVRTC's time. Folded into v%d in order, with
** the checks and the early stop of the unrolled form. */
static void emit_table_loop(rf_cg_gen *g, const rf_qp_expr *e, int32_t from, int32_t to, int v)
{
    int32_t n = to - from, id = g->ntab++;
    int nl = e->kind == RF_QP_E_AND ? 2 : 1;
    int32_t *cols = malloc((size_t)n * nl * sizeof *cols + 1), *ops = malloc((size_t)n * sizeof *ops + 1);
    int64_t *vals = malloc((size_t)n * nl * sizeof *vals + 1);
    if (!cols || !ops || !vals) {
        g->bad = 1;
        free(cols);
        free(ops);
        free(vals);
        return;
    }
    int sides = 0; /* 0: constants only, 1: side 0 too, 2: both sides */
    for (int32_t i = 0; i < n; i++) {
        const rf_qp_expr *x = e->args[from + i];
        for (int l = 0; l < nl; l++) {
            const rf_qp_expr *leaf = e->kind == RF_QP_E_AND ? x->args[l] : x;
            leaf_entry(leaf, &cols[l * n + i], &vals[l * n + i]);
            if (leaf->kind == RF_QP_E_COL) sides = leaf->side ? 2 : sides > 1 ? 2 : 1;
        }
        /* a comparison: its operator, plus 8 where it compares floats */
        ops[i] = e->kind == RF_QP_E_AND ? (int32_t)x->cmp + (x->args[0]->type == RF_TYPE_FLOAT ? 8 : 0) : 0;
    }
    char name[64];
    for (int l = 0; l < nl; l++) {
        snprintf(name, sizeof name, "rfk%d_t%d_c%d", g->kid, id, l);
        table_int(g->tables, name, cols + l * n, n);
        rf_buf_printf(g->tables, "__device__ const rf::i64 rfk%d_t%d_v%d[%d] = {", g->kid, id, l, n);
        for (int32_t i = 0; i < n; i++)
            rf_buf_printf(g->tables, "%s(rf::i64)%" PRIu64 "ull", !i ? "\n    " : i % 8 ? "," : ",\n    ",
                          (uint64_t)vals[l * n + i]);
        rf_buf_puts(g->tables, "};\n");
    }
    if (e->kind == RF_QP_E_AND) {
        snprintf(name, sizeof name, "rfk%d_t%d_o", g->kid, id);
        table_int(g->tables, name, ops, n);
    }
    free(cols);
    free(ops);
    free(vals);
    char c0[64], v0[64], c1[64], v1[64];
    snprintf(c0, sizeof c0, "rfk%d_t%d_c0", g->kid, id);
    snprintf(v0, sizeof v0, "rfk%d_t%d_v0", g->kid, id);
    snprintf(c1, sizeof c1, "rfk%d_t%d_c1", g->kid, id);
    snprintf(v1, sizeof v1, "rfk%d_t%d_v1", g->kid, id);
    ind(g);
    if (e->kind == RF_QP_E_AND) {
        rf_buf_printf(g->b, "for (rf::i64 i = 0; i < %d && v%d; i++) {\n", n, v);
        g->depth++;
        ind(g);
        rf_buf_printf(g->b, "const int o = rfk%d_t%d_o[i];\n", g->kid, id);
        ind(g);
        rf_buf_puts(g->b, "int c;\n");
        ind(g);
        rf_buf_puts(g->b, "if (o & 8) {\n");
        compare_leaves(g, "double", "rf::fcmp", c0, v0, c1, v1, sides);
        ind(g);
        rf_buf_puts(g->b, "} else {\n");
        compare_leaves(g, "rf::i64", "rf::icmp", c0, v0, c1, v1, sides);
        ind(g);
        rf_buf_puts(g->b, "}\n");
        ind(g);
        rf_buf_printf(g->b,
                      "switch (o & 7) { case %d: v%d = c == 0; break; case %d: v%d = c != 0; break; case %d: v%d = c < 0; break; "
                      "case %d: v%d = c <= 0; break; case %d: v%d = c > 0; break; default: v%d = c >= 0; break; }\n",
                      RF_CMP_EQ, v, RF_CMP_NE, v, RF_CMP_LT, v, RF_CMP_LE, v, RF_CMP_GT, v, v);
    } else {
        int fl = e->type == RF_TYPE_FLOAT;
        rf_buf_printf(g->b, "for (rf::i64 i = 0; i < %d; i++) {\n", n);
        g->depth++;
        ind(g);
        rf_buf_printf(g->b, "const %s x = ", fl ? "double" : "rf::i64");
        leaf_read(g, fl ? "double" : "rf::i64", c0, v0, sides);
        rf_buf_puts(g->b, ";\n");
        if (fl) {
            ind(g);
            rf_buf_printf(g->b, "v%d = rf::fz(v%d %c x);\n", v, v, e->op);
        } else {
            checked(g, "%s(v%d, x, &v%d)", dec_fn(e->op, is_dec(e->type)), v, v);
        }
    }
    g->depth--;
    ind(g);
    rf_buf_puts(g->b, "}\n");
}

/* Operands from i on of e that a table loop takes, up to n: their end (i: none). */
static int32_t table_run(const rf_cg_gen *g, const rf_qp_expr *e, int32_t i)
{
    if (!g->tables || g->regs_of >= 0 || e->nargs <= CHUNK) return i;
    int32_t j = i;
    while (j < e->nargs && table_item(g, e, j)) j++;
    return j - i >= CHUNK ? j : i;
}


/* Whether operands [i, n) of e go to helpers: long chains only, and not in
** a fused stage (its registers are not in a helper's scope). */
static int chunked(const rf_cg_gen *g, const rf_qp_expr *e, int32_t i)
{
    return g->helpers && g->regs_of < 0 && e->nargs > CHUNK && i < e->nargs;
}

/* Operands i.. of chain e folded into v as a table loop or a chunk, where
** they group so: the index after them; else i (the caller emits operand i
** alone). */
static int32_t emit_grouped(rf_cg_gen *g, const rf_qp_expr *e, int32_t i, int v)
{
    int32_t run = table_run(g, e, i);
    if (run > i) {
        emit_table_loop(g, e, i, run, v);
        return run;
    }
    if (chunked(g, e, i)) {
        int32_t to = i + CHUNK < e->nargs ? i + CHUNK : e->nargs;
        emit_chunk(g, e, i, to, v);
        return to;
    }
    return i;
}

/* Whether the plan gives e code of its own (a string table or string work,
** found by identity): never one of two equal expressions. */
static int planned(const rf_cg_gen *g, const rf_qp_expr *e)
{
    for (int32_t j = 0; j < g->pl->nisland; j++)
        if (g->pl->islands[j].e == e) return 1;
    for (int32_t j = 0; j < g->pl->nrowstr; j++)
        if (g->pl->rowstr[j] == e) return 1;
    return 0;
}

/* Whether a and b compute the same value from the same row (for cse). */
static int same_expr(const rf_cg_gen *g, const rf_qp_expr *a, const rf_qp_expr *b)
{
    if (a == b) return 1;
    if (a->kind != b->kind || a->type != b->type || a->nargs != b->nargs || planned(g, a) || planned(g, b)) return 0;
    switch (a->kind) {
    case RF_QP_E_COL:
        if (a->side != b->side || a->col != b->col) return 0;
        break;
    case RF_QP_E_CONST:
        /* strings: each constant has its own slot */
        if (a->type == RF_TYPE_STRING) return 0;
        if (a->type == RF_TYPE_FLOAT ? memcmp(&a->c.f, &b->c.f, sizeof a->c.f) != 0 : a->c.i != b->c.i) return 0;
        break;
    case RF_QP_E_BINOP:
        if (a->op != b->op) return 0;
        break;
    case RF_QP_E_CMP:
        if (a->cmp != b->cmp) return 0;
        break;
    case RF_QP_E_CALL:
        if (a->fn != b->fn) return 0;
        break;
    case RF_QP_E_NEG:
    case RF_QP_E_CAST:
    case RF_QP_E_NOT: break;
    default: return 0;
    }
    for (int32_t i = 0; i < a->nargs; i++)
        if (!same_expr(g, a->args[i], b->args[i])) return 0;
    return 1;
}

/* What cse looks up: a computation inside the stage (depth 1 and deeper;
** it remembers only those at depth 1, not inside a conjunction's branch or
** a loop, so that each is in scope and computed wherever it is reused). */
static int cse_kind(const rf_cg_gen *g, const rf_qp_expr *e)
{
    return g->cse && g->depth >= 1 &&
           (e->kind == RF_QP_E_BINOP || e->kind == RF_QP_E_NEG || e->kind == RF_QP_E_CAST || e->kind == RF_QP_E_CALL);
}

static int emit_expr(rf_cg_gen *g, const rf_qp_expr *e);

int rf_cg_emit(rf_cg_gen *g, const rf_qp_expr *e)
{
    if (!cse_kind(g, e)) return emit_expr(g, e);
    for (int i = 0; i < g->nseen; i++)
        if (same_expr(g, g->seen[i], e)) return g->seen_v[i];
    int v = emit_expr(g, e);
    if (g->nseen < RF_CG_SEEN && g->depth == 1) {
        g->seen[g->nseen] = e;
        g->seen_v[g->nseen++] = v;
    }
    return v;
}

static int emit_expr(rf_cg_gen *g, const rf_qp_expr *e)
{
    for (int32_t j = 0; j < g->pl->nisland; j++)
        if (g->pl->islands[j].e == e) return emit_island(g, e, j, &g->pl->islands[j]);
    for (int32_t j = 0; j < g->pl->nrowstr; j++)
        if (g->pl->rowstr[j] == e) return rf_gpu_emit_rowstr(g->b, e, &g->nv, g->depth, &g->bad);
    int v;
    switch (e->kind) {
    case RF_QP_E_COL:
        if (e->side >= 0 && e->side < 2 && e->col >= 0 && e->col < RF_GPU_MAXC && g->hset[e->side][e->col]) {
            v = new_var(g, e->type);
            rf_buf_printf(g->b, " = v%d;\n", g->hv[e->side][e->col]);
            return v;
        }
        v = new_var(g, e->type);
        if (g->regs_of >= 0 && e->side == 0)
            rf_buf_printf(g->b, " = m%d_%d;\n", g->regs_of, e->col);
        else if (e->type == RF_TYPE_BOOL)
            rf_buf_printf(g->b, " = rf::ld<rf::u8>(a.c%d[%d], q%d) != 0;\n", e->side, e->col, e->side);
        else
            rf_buf_printf(g->b, " = rf::ld<%s>(a.c%d[%d], q%d);\n", rf_cg_stype(e->type), e->side, e->col, e->side);
        return v;
    case RF_QP_E_CONST:
        v = new_var(g, e->type);
        switch (e->type) {
        case RF_TYPE_FLOAT: {
            uint64_t bits;
            memcpy(&bits, &e->c.f, 8);
            rf_buf_printf(g->b, " = rf::bitsd(0x%016" PRIx64 "ull);\n", bits);
            break;
        }
        case RF_TYPE_DATE: rf_buf_printf(g->b, " = (rf::i32)%" PRId64 ";\n", e->c.i); break;
        case RF_TYPE_BOOL: rf_buf_printf(g->b, " = %s;\n", e->c.i ? "true" : "false"); break;
        case RF_TYPE_STRING: {
            int32_t slot = -1;
            for (int32_t i = 0; i < g->pl->nconst; i++)
                if (g->pl->consts[i] == e) slot = i;
            if (slot < 0) g->bad = 1;
            rf_buf_printf(g->b, " = (rf::u32)a.k[%d];\n", g->kconst + (slot < 0 ? 0 : slot));
            break;
        }
        default:
            rf_buf_puts(g->b, " = ");
            put_i64(g->b, e->c.i);
            rf_buf_puts(g->b, ";\n");
            break;
        }
        return v;
    case RF_QP_E_BINOP: {
        /* a chain: one accumulator, each operand folded into it in turn */
        int a = rf_cg_emit(g, e->args[0]);
        v = new_var(g, e->type);
        rf_buf_printf(g->b, " = v%d;\n", a);
        for (int32_t i = 1; i < e->nargs;) {
            int32_t next = emit_grouped(g, e, i, v);
            if (next > i) {
                i = next;
                continue;
            }
            emit_step(g, e, v, rf_cg_emit(g, e->args[i]));
            i++;
        }
        return v;
    }
    case RF_QP_E_NEG: {
        int a = rf_cg_emit(g, e->args[0]);
        v = new_var(g, e->type);
        if (e->type == RF_TYPE_FLOAT) {
            rf_buf_printf(g->b, " = rf::fz(-v%d);\n", a);
        } else if (is_wide(e->type)) {
            rf_buf_puts(g->b, ";\n");
            checked(g, "rf::neg_w(v%d, &v%d)", a, v);
        } else {
            rf_buf_puts(g->b, ";\n");
            checked(g, "rf::neg_i(v%d, &v%d)", a, v);
        }
        return v;
    }
    case RF_QP_E_CAST: {
        int a = rf_cg_emit(g, e->args[0]);
        return emit_convert(g, e->args[0]->type, e->type, a);
    }
    case RF_QP_E_CALL: {
        int a = e->nargs > 0 ? rf_cg_emit(g, e->args[0]) : -1;
        int b = e->nargs > 1 ? rf_cg_emit(g, e->args[1]) : -1;
        switch (e->fn) {
        case RF_BI_YEAR:
        case RF_BI_MONTH:
        case RF_BI_DAY:
            v = new_var(g, e->type);
            rf_buf_printf(g->b, " = rf::date_part(v%d, %d);\n", a,
                          e->fn == RF_BI_YEAR ? 0 : e->fn == RF_BI_MONTH ? 1 : 2);
            return v;
        case RF_BI_ADD_DAYS:
        case RF_BI_ADD_MONTHS:
        case RF_BI_ADD_YEARS:
            v = new_var(g, e->type);
            rf_buf_puts(g->b, ";\n");
            checked(g, "rf::%s(v%d, v%d, &v%d)",
                    e->fn == RF_BI_ADD_DAYS     ? "add_days"
                    : e->fn == RF_BI_ADD_MONTHS ? "add_months"
                                                : "add_years",
                    a, b, v);
            return v;
        case RF_BI_BITAND:
        case RF_BI_BITOR:
        case RF_BI_BITXOR:
            v = new_var(g, e->type);
            rf_buf_printf(g->b, " = v%d %c v%d;\n", a, e->fn == RF_BI_BITAND ? '&' : e->fn == RF_BI_BITOR ? '|' : '^',
                          b);
            return v;
        case RF_BI_INT_MIN:
        case RF_BI_INT_MAX:
            v = new_var(g, e->type);
            rf_buf_printf(g->b, " = v%d %c v%d ? v%d : v%d;\n", a, e->fn == RF_BI_INT_MIN ? '<' : '>', b, a, b);
            return v;
        case RF_BI_BITNOT:
            v = new_var(g, e->type);
            rf_buf_printf(g->b, " = ~v%d;\n", a);
            return v;
        case RF_BI_SHL:
        case RF_BI_SHR:
            v = new_var(g, e->type);
            rf_buf_puts(g->b, ";\n");
            checked(g, "rf::%s(v%d, v%d, &v%d)", e->fn == RF_BI_SHL ? "shl_i" : "shr_i", a, b, v);
            return v;
        case RF_BI_INT_FLOAT: return emit_convert(g, RF_TYPE_INT, RF_TYPE_FLOAT, a);
        case RF_BI_INT_DECIMAL: return emit_convert(g, RF_TYPE_INT, RF_TYPE_DECIMAL, a);
        case RF_BI_DECIMAL_FLOAT: return emit_convert(g, is_wide(e->args[0]->type) ? RF_TYPE_DEC128 : RF_TYPE_DECIMAL, RF_TYPE_FLOAT, a);
        case RF_BI_FLOAT_DECIMAL: return emit_convert(g, RF_TYPE_FLOAT, RF_TYPE_DECIMAL, a);
        default:
            v = new_var(g, e->type);
            rf_buf_puts(g->b, " = 0;\n");
            g->bad = 1;
            return v;
        }
    }
    case RF_QP_E_CMP: {
        int a = rf_cg_emit(g, e->args[0]), b = rf_cg_emit(g, e->args[1]);
        rf_type t = e->args[0]->type;
        static const char *ops[] = {"==", "!=", "<", "<=", ">", ">="};
        v = new_var(g, RF_TYPE_BOOL);
        if (t == RF_TYPE_STRING && e->cmp != RF_CMP_EQ && e->cmp != RF_CMP_NE) g->bad = 1;
        if (is_wide(t) != is_wide(e->args[1]->type)) g->bad = 1; /* (the checker widens both) */
        rf_buf_printf(g->b, " = rf::%s(v%d, v%d) %s 0;\n", t == RF_TYPE_FLOAT ? "fcmp" : "icmp", a, b,
                      (unsigned)e->cmp <= RF_CMP_GE ? ops[e->cmp] : "==");
        return v;
    }
    case RF_QP_E_AND:
        v = new_var(g, RF_TYPE_BOOL);
        rf_buf_puts(g->b, " = true;\n");
        for (int32_t i = 0; i < e->nargs;) {
            int32_t next = emit_grouped(g, e, i, v);
            if (next > i) {
                i = next;
                continue;
            }
            emit_conjunct(g, e->args[i], v);
            i++;
        }
        return v;
    case RF_QP_E_NOT: {
        int a = rf_cg_emit(g, e->args[0]);
        v = new_var(g, RF_TYPE_BOOL);
        rf_buf_printf(g->b, " = !v%d;\n", a);
        return v;
    }
    case RF_QP_E_LIKE: break;
    }
    v = new_var(g, e->type);
    rf_buf_puts(g->b, " = 0;\n");
    g->bad = 1;
    return v;
}

void rf_cg_uses_sides(const rf_qp_expr *e, int used[2])
{
    if (!e) return;
    if (e->kind == RF_QP_E_COL && e->side >= 0 && e->side < 2) used[e->side] = 1;
    for (int32_t i = 0; i < e->nargs; i++) rf_cg_uses_sides(e->args[i], used);
}

/* Loads every input column e reads before e is evaluated: a filter's
** conjuncts are evaluated in order and stop at the first false one, so
** their loads would otherwise wait for one another; loaded up front they are
** all in flight at once (loading a column of a valid row cannot fail). The
** columns of string tables and of string work are left to them. */
void rf_cg_hoist_loads(rf_cg_gen *g, const rf_qp_expr *e)
{
    if (!e) return;
    for (int32_t j = 0; j < g->pl->nisland; j++)
        if (g->pl->islands[j].e == e) return;
    for (int32_t j = 0; j < g->pl->nrowstr; j++)
        if (g->pl->rowstr[j] == e) return;
    if (e->kind == RF_QP_E_COL) {
        if (e->side < 0 || e->side > 1 || e->col < 0 || e->col >= RF_GPU_MAXC) return;
        if (g->hset[e->side][e->col] || (g->regs_of >= 0 && e->side == 0)) return;
        int v = rf_cg_emit(g, e);
        g->hset[e->side][e->col] = 1;
        g->hv[e->side][e->col] = v;
        g->ht[e->side][e->col] = e->type;
        return;
    }
    for (int32_t i = 0; i < e->nargs; i++) rf_cg_hoist_loads(g, e->args[i]);
}

/* Pins (rf::pin) the loads hoist_loads made since hset was `before`: they
** stay where they are, all in flight at once. Only loads that are used: a
** pinned value is live, so a column nothing reads would be loaded anyway. */
void rf_cg_pin_hoisted(rf_cg_gen *g, uint8_t before[2][RF_GPU_MAXC], const char *guard)
{
    for (int s = 0; s < 2; s++)
        for (int c = 0; c < RF_GPU_MAXC; c++)
            if (g->hset[s][c] && !before[s][c]) {
                rf_buf_printf(g->b, "%*s%srf::pin(v%d);\n", 8 + 4 * g->depth, "", guard, g->hv[s][c]);
                before[s][c] = 1;
            }
}

void rf_cg_row_indices(rf_buf *b, const int used[2])
{
    for (int s = 0; s < 2; s++)
        if (used[s]) rf_buf_printf(b, "        const rf::i64 q%d = a.r%d ? a.r%d[r] : r;\n", s, s, s);
}
