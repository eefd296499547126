/*
** queryplan/qp_ir.c: the query-plan IR's constructors and utilities.
**
** Owns: allocation in the plan's arena, relations, blocks and commands,
** expression construction and rewriting helpers, use counts, compaction of
** the relation table, and rf_qp_free. Properties live in qp_infer.c, the
** verifier in qp_verify.c.
*/
#include "qp_internal.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void *qp_alloc(rf_qp_program *p, size_t n)
{
    if (p->oom) return NULL;
    void *m = rf_arena_alloc(&p->arena, n ? n : 1);
    if (!m) p->oom = 1;
    return m;
}

char *qp_sprintf(rf_qp_program *p, const char *fmt, ...)
{
    if (p->oom) return NULL;
    va_list ap;
    va_start(ap, fmt);
    char *s = rf_vsprintf(fmt, ap);
    va_end(ap);
    if (!s) {
        p->oom = 1;
        return NULL;
    }
    char *r = rf_arena_strdup(&p->arena, s);
    free(s);
    if (!r) p->oom = 1;
    return r;
}

int32_t *qp_ints(rf_qp_program *p, int32_t n) { return qp_alloc(p, (size_t)(n + 1) * sizeof(int32_t)); }

rf_qp_rel *qp_distinct_cols(rf_qp_program *p, rf_qp_block *b, int32_t *at, rf_qp_rel *in, rf_qp_expr *filter,
                            const int32_t *cols, int32_t n, rf_loc loc)
{
    rf_qp_rel *m = qp_temp_new(p, n), *u = qp_temp_new(p, n);
    rf_qp_cmd *mc = qp_cmd_new(p, RF_QP_MAPFILTER, m, 1), *uc = qp_cmd_new(p, RF_QP_UNIQUE, u, 1);
    if (!m || !u || !mc || !uc || !(mc->outs = qp_alloc(p, (size_t)(n + 1) * sizeof *mc->outs))) return NULL;
    mc->in[0] = in;
    mc->filter = filter;
    mc->nouts = n;
    for (int32_t k = 0; k < n; k++) {
        m->types[k] = u->types[k] = in->types[cols[k]];
        m->colnames[k] = u->colnames[k] = in->colnames[cols[k]];
        if (!(mc->outs[k] = qp_e_col(p, 0, cols[k], in->types[cols[k]]))) return NULL;
    }
    mc->loc = uc->loc = loc;
    uc->in[0] = m;
    qp_block_insert(p, b, (*at)++, mc);
    qp_block_insert(p, b, (*at)++, uc);
    return p->oom ? NULL : u;
}

/* Grows an arena array of pointers; the old storage is simply abandoned,
** which is fine for compile-time structures of this size. */
static int grow(rf_qp_program *p, void ***items, int32_t count, int32_t *cap)
{
    if (count < *cap) return 0;
    int32_t ncap = *cap ? *cap * 2 : 16;
    void **n = qp_alloc(p, (size_t)ncap * sizeof *n);
    if (!n) return -1;
    if (count) memcpy(n, *items, (size_t)count * sizeof *n);
    *items = n;
    *cap = ncap;
    return 0;
}

rf_qp_rel *qp_rel_new(rf_qp_program *p, rf_qp_rel_kind kind, const char *name, int32_t ncols)
{
    rf_qp_rel *r = qp_alloc(p, sizeof *r);
    if (!r) return NULL;
    r->kind = kind;
    r->name = name;
    r->ncols = ncols;
    r->types = qp_alloc(p, (size_t)(ncols + 1) * sizeof *r->types);
    r->colnames = qp_alloc(p, (size_t)(ncols + 1) * sizeof *r->colnames);
    r->stratum = -1;
    r->nkeys = -1;
    r->limit = -1;
    r->delimiter = '|';
    if (!r->types || !r->colnames || grow(p, (void ***)&p->rels, p->nrels, &p->caprels)) return NULL;
    r->id = p->nrels;
    p->rels[p->nrels++] = r;
    return r;
}

rf_qp_rel *qp_temp_new(rf_qp_program *p, int32_t ncols)
{
    const char *name = qp_sprintf(p, "t%lld", (long long)p->next_temp++);
    if (!name) return NULL;
    return qp_rel_new(p, RF_QP_REL_TEMP, name, ncols);
}

rf_qp_block *qp_block_new(rf_qp_program *p, const char *comment)
{
    rf_qp_block *b = qp_alloc(p, sizeof *b);
    if (!b || grow(p, (void ***)&p->blocks, p->nblocks, &p->capblocks)) return NULL;
    b->id = p->nblocks;
    b->comment = comment;
    b->term.kind = RF_QP_T_HALT;
    p->blocks[p->nblocks++] = b;
    return b;
}

rf_qp_cmd *qp_cmd_new(rf_qp_program *p, rf_qp_op op, rf_qp_rel *dst, int32_t nin)
{
    rf_qp_cmd *c = qp_alloc(p, sizeof *c);
    if (!c) return NULL;
    c->op = op;
    c->dst = dst;
    c->nin = nin;
    c->limit = -1;
    c->in = qp_alloc(p, (size_t)(nin + 1) * sizeof *c->in);
    if (!c->in) return NULL;
    return c;
}

void qp_block_insert(rf_qp_program *p, rf_qp_block *b, int32_t at, rf_qp_cmd *c)
{
    if (!c || grow(p, (void ***)&b->cmds, b->ncmds, &b->capcmds)) return;
    memmove(b->cmds + at + 1, b->cmds + at, (size_t)(b->ncmds - at) * sizeof *b->cmds);
    b->cmds[at] = c;
    b->ncmds++;
}

void qp_block_remove(rf_qp_block *b, int32_t at)
{
    memmove(b->cmds + at, b->cmds + at + 1, (size_t)(b->ncmds - at - 1) * sizeof *b->cmds);
    b->ncmds--;
}

int qp_cmd_identity_outs(rf_qp_program *p, rf_qp_cmd *c)
{
    const rf_qp_rel *in = c->in[0];
    c->outs = qp_alloc(p, (size_t)(in->ncols + 1) * sizeof *c->outs);
    if (!c->outs) return -1;
    c->nouts = in->ncols;
    for (int32_t i = 0; i < in->ncols; i++)
        if (!(c->outs[i] = qp_e_col(p, 0, i, in->types[i]))) return -1;
    return 0;
}

/* ---- expressions ----------------------------------------------------- */

rf_qp_expr *qp_e_new(rf_qp_program *p, rf_qp_expr_kind k, rf_type t, int32_t nargs)
{
    rf_qp_expr *e = qp_alloc(p, sizeof *e);
    if (!e) return NULL;
    e->kind = k;
    e->type = t;
    e->nargs = nargs;
    if (nargs && !(e->args = qp_alloc(p, (size_t)nargs * sizeof *e->args))) return NULL;
    return e;
}

rf_qp_expr *qp_e_col(rf_qp_program *p, int32_t side, int32_t col, rf_type t)
{
    rf_qp_expr *e = qp_e_new(p, RF_QP_E_COL, t, 0);
    if (e) {
        e->side = side;
        e->col = col;
    }
    return e;
}

rf_qp_expr *qp_e_const(rf_qp_program *p, const rf_fe_const *c)
{
    rf_qp_expr *e = qp_e_new(p, RF_QP_E_CONST, c->type, 0);
    if (!e) return NULL;
    e->c = *c;
    if (c->type == RF_TYPE_FLOAT) e->c.f = rf_val_float_canon(c->f); /* a literal or a folded -0.0 is 0.0 */
    return e;
}

rf_qp_expr *qp_e_bool(rf_qp_program *p, int v)
{
    rf_fe_const c;
    memset(&c, 0, sizeof c);
    c.type = RF_TYPE_BOOL;
    c.i = v ? 1 : 0;
    return qp_e_const(p, &c);
}

rf_qp_expr *qp_e_cmp(rf_qp_program *p, rf_cmp_op op, rf_qp_expr *a, rf_qp_expr *b)
{
    if (!a || !b) return NULL;
    rf_qp_expr *e = qp_e_new(p, RF_QP_E_CMP, RF_TYPE_BOOL, 2);
    if (!e) return NULL;
    e->cmp = op;
    e->args[0] = a;
    e->args[1] = b;
    return e;
}

rf_qp_expr *qp_e_and(rf_qp_program *p, rf_qp_expr *a, rf_qp_expr *b)
{
    if (!a) return b;
    if (!b) return a;
    int32_t na = a->kind == RF_QP_E_AND ? a->nargs : 1, nb = b->kind == RF_QP_E_AND ? b->nargs : 1;
    rf_qp_expr *e = qp_e_new(p, RF_QP_E_AND, RF_TYPE_BOOL, na + nb);
    if (!e) return NULL;
    for (int32_t i = 0; i < na; i++) e->args[i] = a->kind == RF_QP_E_AND ? a->args[i] : a;
    for (int32_t i = 0; i < nb; i++) e->args[na + i] = b->kind == RF_QP_E_AND ? b->args[i] : b;
    return e;
}

rf_qp_expr *qp_e_and_n(rf_qp_program *p, rf_qp_expr *a, rf_qp_expr *const *conj, int32_t n)
{
    int64_t total = 0;
    rf_qp_expr *only = NULL;
    for (int32_t i = -1; i < n; i++) {
        rf_qp_expr *x = i < 0 ? a : conj[i];
        if (!x) continue;
        total += x->kind == RF_QP_E_AND ? x->nargs : 1;
        only = x;
    }
    if (total <= 1 && (!only || only->kind != RF_QP_E_AND || only->nargs == total)) return only;
    rf_qp_expr *e = qp_e_new(p, RF_QP_E_AND, RF_TYPE_BOOL, (int32_t)total);
    if (!e) return NULL;
    int32_t at = 0;
    for (int32_t i = -1; i < n; i++) {
        rf_qp_expr *x = i < 0 ? a : conj[i];
        if (!x) continue;
        if (x->kind == RF_QP_E_AND)
            for (int32_t j = 0; j < x->nargs; j++) e->args[at++] = x->args[j];
        else
            e->args[at++] = x;
    }
    return e;
}

rf_qp_expr *qp_e_not(rf_qp_program *p, rf_qp_expr *a)
{
    if (!a) return NULL;
    if (a->kind == RF_QP_E_NOT) return a->args[0];
    rf_qp_expr *e = qp_e_new(p, RF_QP_E_NOT, RF_TYPE_BOOL, 1);
    if (e) e->args[0] = a;
    return e;
}

rf_qp_expr *qp_e_copy(rf_qp_program *p, const rf_qp_expr *e)
{
    if (!e) return NULL;
    rf_qp_expr *x = qp_e_new(p, e->kind, e->type, e->nargs);
    if (!x) return NULL;
    rf_qp_expr **args = x->args;
    *x = *e;
    x->args = args;
    for (int32_t i = 0; i < e->nargs; i++)
        if (!(x->args[i] = qp_e_copy(p, e->args[i]))) return NULL;
    return x;
}

int qp_const_equal(const rf_fe_const *a, const rf_fe_const *b)
{
    if (a->type != b->type) return 0;
    switch (a->type) {
    case RF_TYPE_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case RF_TYPE_STRING: return a->slen == b->slen && memcmp(a->s, b->s, (size_t)a->slen) == 0;
    default: return a->i == b->i;
    }
}

int qp_const_cmp(const rf_fe_const *a, const rf_fe_const *b)
{
    if (a->type != b->type) return a->type < b->type ? -1 : 1;
    switch (a->type) {
    case RF_TYPE_FLOAT: return rf_val_cmp_float(a->f, b->f);
    case RF_TYPE_STRING: return rf_val_cmp_str(a->s, a->slen, b->s, b->slen);
    default: return rf_val_cmp_int(a->i, b->i);
    }
}

int qp_e_equal(const rf_qp_expr *a, const rf_qp_expr *b)
{
    if (!a || !b) return a == b;
    if (a->kind != b->kind || a->type != b->type || a->nargs != b->nargs) return 0;
    switch (a->kind) {
    case RF_QP_E_COL:
        if (a->side != b->side || a->col != b->col) return 0;
        break;
    case RF_QP_E_CONST:
        if (!qp_const_equal(&a->c, &b->c)) return 0;
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
    default: break;
    }
    for (int32_t i = 0; i < a->nargs; i++)
        if (!qp_e_equal(a->args[i], b->args[i])) return 0;
    return 1;
}

rf_qp_expr *qp_e_subst(rf_qp_program *p, const rf_qp_expr *e, int32_t side, rf_qp_expr *const *outs)
{
    if (!e) return NULL;
    if (e->kind == RF_QP_E_COL && e->side == side) return qp_e_copy(p, outs[e->col]);
    rf_qp_expr *x = qp_e_new(p, e->kind, e->type, e->nargs);
    if (!x) return NULL;
    rf_qp_expr **args = x->args;
    *x = *e;
    x->args = args;
    for (int32_t i = 0; i < e->nargs; i++)
        if (!(x->args[i] = qp_e_subst(p, e->args[i], side, outs))) return NULL;
    return x;
}

int32_t qp_e_height(const rf_qp_expr *e)
{
    if (!e) return 0;
    int32_t h = 0;
    for (int32_t i = 0; i < e->nargs; i++) {
        int32_t x = qp_e_height(e->args[i]);
        if (x > h) h = x;
    }
    return h + 1;
}

int64_t qp_e_nodes(const rf_qp_expr *e)
{
    if (!e) return 0;
    int64_t n = 1;
    for (int32_t i = 0; i < e->nargs; i++) n += qp_e_nodes(e->args[i]);
    return n;
}

/* The height of e with each COL(side, c) replaced by an expression of
** height oh[c] and os[c] nodes; the nodes are added to *nodes. */
static int32_t subst_size(const rf_qp_expr *e, int32_t side, const int32_t *oh, const int64_t *os, int32_t nouts,
                          int64_t *nodes)
{
    if (!e) return 0;
    if (e->kind == RF_QP_E_COL && e->side == side) {
        if (e->col < 0 || e->col >= nouts) return 1;
        *nodes += os[e->col];
        return oh[e->col];
    }
    *nodes += 1;
    int32_t h = 0;
    for (int32_t i = 0; i < e->nargs; i++) {
        int32_t x = subst_size(e->args[i], side, oh, os, nouts, nodes);
        if (x > h) h = x;
    }
    return h + 1;
}

int qp_e_subst_fits(rf_qp_program *p, const rf_qp_expr *e, int32_t side, rf_qp_expr *const *outs, int32_t nouts)
{
    int32_t *oh = rf_malloc((size_t)(nouts + 1) * sizeof *oh);
    int64_t *os = rf_malloc((size_t)(nouts + 1) * sizeof *os);
    if (!oh || !os) {
        free(oh);
        free(os);
        p->oom = 1;
        return -1;
    }
    for (int32_t c = 0; c < nouts; c++) {
        oh[c] = qp_e_height(outs[c]);
        os[c] = qp_e_nodes(outs[c]);
    }
    int64_t nodes = 0;
    int32_t h = subst_size(e, side, oh, os, nouts, &nodes);
    free(oh);
    free(os);
    return h <= RF_QP_MAX_EXPR_HEIGHT && nodes <= RF_QP_MAX_EXPR_NODES;
}

void qp_e_remap(rf_qp_expr *e, int32_t side, const int32_t *map)
{
    if (!e) return;
    if (e->kind == RF_QP_E_COL && e->side == side) e->col = map[e->col];
    for (int32_t i = 0; i < e->nargs; i++) qp_e_remap(e->args[i], side, map);
}

void qp_e_set_side(rf_qp_expr *e, int32_t from, int32_t to)
{
    if (!e) return;
    if (e->kind == RF_QP_E_COL && e->side == from) e->side = to;
    for (int32_t i = 0; i < e->nargs; i++) qp_e_set_side(e->args[i], from, to);
}

unsigned qp_e_sides(const rf_qp_expr *e)
{
    if (!e) return 0;
    unsigned s = e->kind == RF_QP_E_COL ? 1u << e->side : 0;
    for (int32_t i = 0; i < e->nargs; i++) s |= qp_e_sides(e->args[i]);
    return s;
}

void qp_e_mark_cols(const rf_qp_expr *e, int32_t side, uint8_t *mark)
{
    if (!e) return;
    if (e->kind == RF_QP_E_COL && e->side == side) mark[e->col] = 1;
    for (int32_t i = 0; i < e->nargs; i++) qp_e_mark_cols(e->args[i], side, mark);
}

int qp_e_is_const(const rf_qp_expr *e) { return e && e->kind == RF_QP_E_CONST; }

int qp_e_is_col(const rf_qp_expr *e, int32_t side, int32_t col)
{
    return e && e->kind == RF_QP_E_COL && e->side == side && e->col == col;
}

rf_qp_expr **qp_e_conjuncts(rf_qp_program *p, rf_qp_expr *e, int32_t *n)
{
    *n = 0;
    if (!e) return NULL;
    int32_t k = e->kind == RF_QP_E_AND ? e->nargs : 1;
    rf_qp_expr **v = qp_alloc(p, (size_t)(k + 1) * sizeof *v);
    if (!v) return NULL;
    if (e->kind == RF_QP_E_AND) memcpy(v, e->args, (size_t)k * sizeof *v);
    else v[0] = e;
    *n = k;
    return v;
}

int qp_e_may_fail(const rf_qp_expr *e)
{
    switch (e->kind) {
    case RF_QP_E_BINOP:
    case RF_QP_E_NEG:
        if (e->type != RF_TYPE_FLOAT && e->type != RF_TYPE_STRING) return 1;
        break;
    case RF_QP_E_CAST: return 1;
    case RF_QP_E_CALL:
        if (e->fn == RF_BI_SHL || e->fn == RF_BI_SHR || e->fn == RF_BI_ADD_DAYS || e->fn == RF_BI_ADD_MONTHS ||
            e->fn == RF_BI_ADD_YEARS || e->fn == RF_BI_INT_DECIMAL || e->fn == RF_BI_FLOAT_DECIMAL ||
            e->fn == RF_BI_DATE_PARSE)
            return 1;
        break;
    default: break;
    }
    for (int32_t i = 0; i < e->nargs; i++)
        if (qp_e_may_fail(e->args[i])) return 1;
    return 0;
}

int32_t qp_e_safe_prefix(rf_qp_expr *const *conj, int32_t n)
{
    for (int32_t k = 0; k < n; k++)
        if (qp_e_may_fail(conj[k])) return k;
    return n;
}

/* ---- uses ------------------------------------------------------------ */

int qp_uses_compute(rf_qp_program *p, qp_uses *u)
{
    u->n = p->nrels;
    u->reads = rf_calloc((size_t)p->nrels + 1, sizeof *u->reads);
    u->writes = rf_calloc((size_t)p->nrels + 1, sizeof *u->writes);
    if (!u->reads || !u->writes) {
        qp_uses_free(u);
        p->oom = 1;
        return -1;
    }
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++) {
            const rf_qp_cmd *c = bl->cmds[i];
            u->writes[c->dst->id]++;
            for (int32_t j = 0; j < c->nin; j++) u->reads[c->in[j]->id]++;
        }
        for (int32_t j = 0; j < bl->term.nrels; j++) u->reads[bl->term.rels[j]->id]++;
    }
    return 0;
}

void qp_uses_free(qp_uses *u)
{
    free(u->reads);
    free(u->writes);
    u->reads = u->writes = NULL;
}

/* Commands the scans below visit, for the unit test that a pass's work
** grows linearly with a block's commands (qp_scan_steps). */
static _Atomic int64_t scan_steps;

int64_t qp_scan_steps(void) { return atomic_load_explicit(&scan_steps, memory_order_relaxed); }

static void scanned(int64_t n) { atomic_fetch_add_explicit(&scan_steps, n, memory_order_relaxed); }

void qp_replace_reads(rf_qp_program *p, rf_qp_rel *from, rf_qp_rel *to)
{
    for (int32_t b = 0; b < p->nblocks; b++) scanned(p->blocks[b]->ncmds);
    for (int32_t b = 0; b < p->nblocks; b++) {
        rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++)
            for (int32_t j = 0; j < bl->cmds[i]->nin; j++)
                if (bl->cmds[i]->in[j] == from) bl->cmds[i]->in[j] = to;
        for (int32_t j = 0; j < bl->term.nrels; j++)
            if (bl->term.rels[j] == from) bl->term.rels[j] = to;
    }
}

int32_t qp_find_writer(const rf_qp_block *b, const rf_qp_rel *r)
{
    for (int32_t i = 0; i < b->ncmds; i++)
        if (b->cmds[i]->dst == r) return scanned(i + 1), i;
    scanned(b->ncmds);
    return -1;
}

int qp_written_between(const rf_qp_block *b, int32_t from, int32_t to, const rf_qp_rel *r)
{
    if (to > from) scanned(to - from);
    for (int32_t i = from; i < to; i++)
        if (b->cmds[i]->dst == r) return 1;
    return 0;
}

int qp_cmd_reads(const rf_qp_cmd *c, const rf_qp_rel *r)
{
    for (int32_t j = 0; j < c->nin; j++)
        if (c->in[j] == r) return 1;
    return 0;
}

/* ---- relation table -------------------------------------------------- */

void qp_compact_rels(rf_qp_program *p)
{
    uint8_t *used = rf_calloc((size_t)p->nrels + 1, 1);
    if (!used) {
        p->oom = 1;
        return;
    }
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++) {
            used[bl->cmds[i]->dst->id] = 1;
            for (int32_t j = 0; j < bl->cmds[i]->nin; j++) used[bl->cmds[i]->in[j]->id] = 1;
        }
        for (int32_t j = 0; j < bl->term.nrels; j++) used[bl->term.rels[j]->id] = 1;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < p->nrels; i++) {
        /* inputs and outputs describe the program's interface: keep them
        ** while anything uses them; everything else goes when unused */
        if (!used[i]) continue;
        p->rels[n] = p->rels[i];
        p->rels[n]->id = n;
        n++;
    }
    p->nrels = n;
    free(used);
    qp_sort_rels(p);
}

void qp_sort_rels(rf_qp_program *p)
{
    /* predicates and their semi-naive companions in creation (source)
    ** order, then outputs, then temporaries in order of definition */
    rf_qp_rel **v = rf_malloc((size_t)(p->nrels + 1) * sizeof *v);
    uint8_t *put = rf_calloc((size_t)p->nrels + 1, 1);
    if (!v || !put) {
        free(v);
        free(put);
        p->oom = 1;
        return;
    }
    /* each predicate's delta and new relations, in table order: lists
    ** threaded through next[] from first[pred id] (linear, not a scan of
    ** the table per predicate) */
    int32_t maxpred = -1;
    for (int32_t i = 0; i < p->nrels; i++)
        if (p->rels[i]->pred && p->rels[i]->pred->id > maxpred) maxpred = p->rels[i]->pred->id;
    int32_t *first = rf_malloc((size_t)(maxpred + 2) * sizeof *first);
    int32_t *tail = rf_malloc((size_t)(maxpred + 2) * sizeof *tail);
    int32_t *next = rf_malloc((size_t)(p->nrels + 1) * sizeof *next);
    if (!first || !tail || !next) {
        free(v);
        free(put);
        free(first);
        free(tail);
        free(next);
        p->oom = 1;
        return;
    }
    for (int32_t i = 0; i <= maxpred; i++) first[i] = tail[i] = -1;
    for (int32_t j = 0; j < p->nrels; j++) {
        rf_qp_rel *x = p->rels[j];
        next[j] = -1;
        if ((x->kind != RF_QP_REL_DELTA && x->kind != RF_QP_REL_NEW) || !x->pred) continue;
        int32_t id = x->pred->id;
        if (tail[id] < 0) first[id] = j;
        else next[tail[id]] = j;
        tail[id] = j;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < p->nrels; i++) {
        rf_qp_rel *r = p->rels[i];
        if (r->kind != RF_QP_REL_INPUT && r->kind != RF_QP_REL_PRED) continue;
        v[n++] = r;
        put[i] = 1;
        /* a predicate's delta and new relations right after it */
        if (!r->pred) continue;
        for (int32_t j = first[r->pred->id]; j >= 0; j = next[j])
            if (!put[j]) {
                v[n++] = p->rels[j];
                put[j] = 1;
            }
    }
    free(first);
    free(tail);
    free(next);
    for (int32_t i = 0; i < p->nrels; i++)
        if (!put[i] && p->rels[i]->kind != RF_QP_REL_TEMP && p->rels[i]->kind != RF_QP_REL_OUTPUT) {
            v[n++] = p->rels[i];
            put[i] = 1;
        }
    for (int32_t i = 0; i < p->nrels; i++)
        if (!put[i] && p->rels[i]->kind == RF_QP_REL_OUTPUT) {
            v[n++] = p->rels[i];
            put[i] = 1;
        }
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++) {
            rf_qp_rel *r = bl->cmds[i]->dst;
            if (put[r->id]) continue;
            put[r->id] = 1;
            v[n++] = r;
        }
    }
    for (int32_t i = 0; i < p->nrels; i++)
        if (!put[i]) v[n++] = p->rels[i];
    for (int32_t i = 0; i < n; i++) {
        p->rels[i] = v[i];
        v[i]->id = i;
    }
    free(v);
    free(put);
}

void qp_rename_temps(rf_qp_program *p)
{
    int64_t k = 0;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++) {
            rf_qp_rel *r = bl->cmds[i]->dst;
            if (r->kind != RF_QP_REL_TEMP) continue;
            const char *n = qp_sprintf(p, "t%lld", (long long)k++);
            if (n) r->name = n;
        }
    }
    p->next_temp = k;
}

void rf_qp_free(rf_qp_program *p)
{
    if (!p) return;
    rf_arena_free(&p->arena);
    free(p);
}

const char *rf_qp_rel_kind_name(rf_qp_rel_kind k)
{
    static const char *n[] = {"input", "predicate", "delta", "new", "temporary", "output"};
    return (unsigned)k < 6 ? n[k] : "?";
}

const char *rf_qp_op_name(rf_qp_op op)
{
    static const char *n[] = {"map", "join", "antijoin", "aggregate", "union", "difference",
                              "unique", "copy", "facts", "clear", "orderlimit", "lftj"};
    return (unsigned)op < 12 ? n[op] : "?";
}

int64_t qp_count_reads(const rf_qp_program *p, const rf_qp_rel *r)
{
    int64_t n = 0;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_block *bl = p->blocks[b];
        scanned(bl->ncmds);
        for (int32_t i = 0; i < bl->ncmds; i++)
            for (int32_t j = 0; j < bl->cmds[i]->nin; j++) n += bl->cmds[i]->in[j] == r;
        for (int32_t j = 0; j < bl->term.nrels; j++) n += bl->term.rels[j] == r;
    }
    return n;
}

int qp_plain_cols(const rf_qp_cmd *c)
{
    for (int32_t i = 0; i < c->nouts; i++)
        if (c->outs[i]->kind != RF_QP_E_COL) return 0;
    return 1;
}

int32_t qp_uf_find(int32_t *uf, int32_t x)
{
    while (uf[x] != x) {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    return x;
}

void qp_blocks_reachable(const rf_qp_program *p, int32_t avoid, uint8_t *reach, int32_t *stack)
{
    memset(reach, 0, (size_t)p->nblocks);
    int32_t sp = 0;
    stack[sp++] = 0;
    reach[0] = 1;
    while (sp) {
        const rf_qp_term *t = &p->blocks[stack[--sp]]->term;
        int32_t next[2] = {t->kind != RF_QP_T_HALT ? t->target : -1, t->kind == RF_QP_T_BRANCH ? t->else_target : -1};
        for (int k = 0; k < 2; k++)
            if (next[k] >= 0 && next[k] != avoid && !reach[next[k]]) {
                reach[next[k]] = 1;
                stack[sp++] = next[k];
            }
    }
}
