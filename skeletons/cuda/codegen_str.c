/*
** skeletons/cuda/codegen_str.c: device code for the string islands of map
** kernels (rf_gpu_island): which islands the GPU evaluates itself, once per
** dictionary code, and the CUDA that does it (one struct with an eval
** function and one kernel per island, over rf_str.cuh).
**
** Owns the rule of what runs where: an island over a column is evaluated on
** the device when it is made only of the column, string and int constants,
** string:substring (constant start and length), string:like, string:length
** and string comparisons, or is date:parse of the column (its table marks
** the strings that are no date: the kernel reading it reports the row, and
** the host words the error), and its result is a boolean, an int, or a string
** that is a piece of the column's own string (substring of substring ... of
** the column): such a piece is handed back as a byte range, and only the
** distinct pieces are interned, on the host. Concatenation makes bytes that
** exist nowhere: islands with it stay on the host (rt_gpu_host.c's
** build_island), as do islands without a column (one value).
**
** String work over two columns (string:like(a, b), a < b) cannot be a table
** by code; made of the same operations, with a boolean or int result, it is
** evaluated per row in the map kernel itself, reading both strings from the
** device dictionary (rf_gpu_emit_rowstr).
*/
#include "rf_gpu_codegen.h"

#include <inttypes.h>
#include <string.h>

static int dev_node(const rf_qp_expr *e)
{
    if (!e) return 0;
    switch (e->kind) {
    case RF_QP_E_COL: return e->type == RF_TYPE_STRING;
    case RF_QP_E_CONST: return e->type == RF_TYPE_STRING || e->type == RF_TYPE_INT;
    case RF_QP_E_LIKE: break;
    case RF_QP_E_CALL:
        if (e->fn == RF_BI_SUBSTRING) {
            if (e->nargs != 3 || !e->args[1] || !e->args[2] || e->args[1]->kind != RF_QP_E_CONST ||
                e->args[2]->kind != RF_QP_E_CONST || e->args[1]->type != RF_TYPE_INT ||
                e->args[2]->type != RF_TYPE_INT)
                return 0;
            break;
        }
        if (e->fn == RF_BI_LIKE && e->nargs == 2) break;
        if (e->fn == RF_BI_LENGTH && e->nargs == 1) break;
        /* (as the island's root only: it yields a date, which nothing in an
        ** island takes) */
        if (e->fn == RF_BI_DATE_PARSE && e->nargs == 1) break;
        return 0;
    case RF_QP_E_CMP:
        if (e->nargs != 2 || !e->args[0] || e->args[0]->type != RF_TYPE_STRING) return 0;
        break;
    default: return 0;
    }
    if (e->kind == RF_QP_E_LIKE && e->nargs != 2) return 0;
    for (int32_t i = 0; i < e->nargs; i++)
        if (!dev_node(e->args[i])) return 0;
    return 1;
}

/* A piece of the column's own string: the column, or a substring of one. */
static int piece_of_col(const rf_qp_expr *e)
{
    if (e->kind == RF_QP_E_COL) return 1;
    return e->kind == RF_QP_E_CALL && e->fn == RF_BI_SUBSTRING && piece_of_col(e->args[0]);
}

int rf_gpu_island_on_device(const rf_gpu_island *is)
{
    const rf_qp_expr *e = is->e;
    if (is->side < 0 || !dev_node(e)) return 0;
    switch (e->type) {
    case RF_TYPE_BOOL:
    case RF_TYPE_INT:
    case RF_TYPE_DATE: return 1;
    case RF_TYPE_STRING: return piece_of_col(e);
    default: return 0;
    }
}

typedef struct sgen {
    rf_buf *b;
    int *nv;   /* the variable counter (shared with the map kernel's code) */
    int row;   /* 1: columns are read per row (any side); 0: the island's code */
    int depth; /* indentation */
    int bad;
} sgen;

static int snew(sgen *g, const char *type)
{
    int v = (*g->nv)++;
    for (int i = 0; i < g->depth + 2; i++) rf_buf_puts(g->b, "    ");
    rf_buf_printf(g->b, "%s v%d = ", type, v);
    return v;
}

static int semit(sgen *g, const rf_qp_expr *e)
{
    int v, x, y, z;
    switch (e->kind) {
    case RF_QP_E_COL:
        v = snew(g, "rf::sv");
        if (g->row)
            rf_buf_printf(g->b, "rf::dict_str(a, (rf::u64)rf::ld<rf::u32>(a.c%d[%d], q%d));\n", e->side, e->col,
                          e->side);
        else
            rf_buf_puts(g->b, "s;\n");
        return v;
    case RF_QP_E_CONST:
        if (e->type == RF_TYPE_INT) {
            v = snew(g, "rf::i64");
            if (e->c.i == INT64_MIN)
                rf_buf_puts(g->b, "(-9223372036854775807LL - 1);\n");
            else
                rf_buf_printf(g->b, "%" PRId64 "LL;\n", e->c.i);
            return v;
        }
        /* the bytes as a literal, each as a 3-digit octal escape (no escape
        ** can run into the next character; NULs are kept) */
        v = snew(g, "rf::sv");
        rf_buf_puts(g->b, "{(const rf::u8 *)\"");
        for (int64_t i = 0; i < (e->c.s ? e->c.slen : 0); i++)
            rf_buf_printf(g->b, "\\%03o", (unsigned)(unsigned char)e->c.s[i]);
        rf_buf_printf(g->b, "\", %" PRId64 "LL};\n", e->c.s ? e->c.slen : (int64_t)0);
        return v;
    case RF_QP_E_LIKE:
        x = semit(g, e->args[0]);
        y = semit(g, e->args[1]);
        v = snew(g, "bool");
        rf_buf_printf(g->b, "rf::str_like(v%d, v%d);\n", x, y);
        return v;
    case RF_QP_E_CALL:
        switch (e->fn) {
        case RF_BI_LIKE:
            x = semit(g, e->args[0]);
            y = semit(g, e->args[1]);
            v = snew(g, "bool");
            rf_buf_printf(g->b, "rf::str_like(v%d, v%d);\n", x, y);
            return v;
        case RF_BI_LENGTH:
            x = semit(g, e->args[0]);
            v = snew(g, "rf::i64");
            rf_buf_printf(g->b, "rf::str_chars(v%d);\n", x);
            return v;
        case RF_BI_DATE_PARSE:
            x = semit(g, e->args[0]);
            v = snew(g, "rf::i64");
            rf_buf_printf(g->b, "rf::str_date(v%d);\n", x);
            return v;
        case RF_BI_SUBSTRING:
            x = semit(g, e->args[0]);
            y = semit(g, e->args[1]);
            z = semit(g, e->args[2]);
            v = snew(g, "rf::sv");
            rf_buf_printf(g->b, "rf::str_sub(v%d, v%d, v%d);\n", x, y, z);
            return v;
        default: break;
        }
        break;
    case RF_QP_E_CMP: {
        static const char *ops[] = {"==", "!=", "<", "<=", ">", ">="};
        x = semit(g, e->args[0]);
        y = semit(g, e->args[1]);
        v = snew(g, "bool");
        if (e->cmp == RF_CMP_EQ)
            rf_buf_printf(g->b, "rf::str_eq(v%d, v%d);\n", x, y);
        else if (e->cmp == RF_CMP_NE)
            rf_buf_printf(g->b, "!rf::str_eq(v%d, v%d);\n", x, y);
        else
            rf_buf_printf(g->b, "rf::str_cmp(v%d, v%d) %s 0;\n", x, y, (unsigned)e->cmp <= RF_CMP_GE ? ops[e->cmp] : "==");
        return v;
    }
    default: break;
    }
    g->bad = 1;
    v = snew(g, "bool");
    rf_buf_puts(g->b, "false;\n");
    return v;
}

int rf_gpu_row_on_device(const rf_qp_expr *e)
{
    return (e->type == RF_TYPE_BOOL || e->type == RF_TYPE_INT) && dev_node(e);
}

int rf_gpu_emit_rowstr(rf_buf *b, const rf_qp_expr *e, int *nv, int depth, int *bad)
{
    sgen g = {b, nv, 1, depth, 0};
    int v = semit(&g, e);
    *bad |= g.bad;
    return v;
}

int rf_gpu_gen_islands(rf_buf *b, int32_t kid, const rf_gpu_kplan *pl)
{
    int bad = 0;
    for (int32_t j = 0; j < pl->nisland; j++) {
        const rf_gpu_island *is = &pl->islands[j];
        if (!is->dev) continue;
        /* (dates: i64 days, RF_I64_MIN where the string is no date) */
        const char *rt = is->e->type == RF_TYPE_BOOL                               ? "rf::u8"
                         : is->e->type == RF_TYPE_INT || is->e->type == RF_TYPE_DATE ? "rf::i64"
                                                                                    : "rf::u64";
        rf_buf_printf(b, "struct KI%d_%d {\n", kid, j);
        rf_buf_printf(b, "    static __device__ __forceinline__ %s eval(const rf::Args &a, rf::u64 code)\n    {\n", rt);
        rf_buf_puts(b, "        const rf::sv s = rf::dict_str(a, code);\n");
        int nv = 0;
        sgen g = {b, &nv, 0, 0, 0};
        int v = semit(&g, is->e);
        if (is->e->type == RF_TYPE_STRING)
            rf_buf_printf(b,
                          "        return ((rf::u64)(v%d.p - s.p) << 32) | (rf::u64)(v%d.p - s.p + v%d.n);\n",
                          v, v, v);
        else if (is->e->type == RF_TYPE_BOOL)
            rf_buf_printf(b, "        return v%d ? 1 : 0;\n", v);
        else
            rf_buf_printf(b, "        return v%d;\n", v);
        rf_buf_puts(b, "    }\n};\n");
        rf_buf_printf(b,
                      "extern \"C\" __global__ void __launch_bounds__(%d) rfk%d_isl%d(rf::Args a) "
                      "{ rf::isl_tab<KI%d_%d, %s, %d>(a); }\n",
                      RF_GPU_TILE, kid, j, kid, j, rt, RF_GPU_TILE);
        bad |= g.bad;
    }
    return bad;
}
