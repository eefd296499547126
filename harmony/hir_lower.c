/*
** harmony/hir_lower.c: query plan -> Harmony kernels.
**
** Owns: the mapping of plan relations to managed variables, the deep copy
** of parameters into the Harmony arena (a Harmony program must outlive the
** plan and be loadable alone), and the expansion of each plan command into
** kernels: a join is JOIN_INDEX (partition and compute) then JOIN_MAP
** (gather, filter, project); an anti-join ANTI_INDEX then GATHER_MAP; an
** aggregation GROUP then REDUCE; a union CONCAT then UNIQUE; an order-limit
** SORT then GATHER.
*/
#include "hir_internal.h"

#include <string.h>

static void *dup_mem(rf_hir_program *p, const void *src, size_t n)
{
    if (!src || !n) return NULL;
    void *d = rf_arena_alloc(&p->arena, n);
    if (!d) {
        p->oom = 1;
        return NULL;
    }
    memcpy(d, src, n);
    return d;
}

const char *rf_hir_strdup(rf_hir_program *p, const char *s)
{
    if (!s) return NULL;
    char *d = rf_arena_strdup(&p->arena, s);
    if (!d) p->oom = 1;
    return d;
}

void rf_hir_copy_const(rf_hir_program *p, rf_fe_const *dst, const rf_fe_const *src)
{
    *dst = *src;
    if (src->type == RF_TYPE_STRING) {
        char *s = rf_arena_strndup(&p->arena, src->s ? src->s : "", (size_t)src->slen);
        if (!s) p->oom = 1;
        dst->s = s;
    }
}

rf_qp_expr *rf_hir_copy_expr(rf_hir_program *p, const rf_qp_expr *e)
{
    if (!e) return NULL;
    rf_qp_expr *x = rf_arena_alloc(&p->arena, sizeof *x);
    if (!x) {
        p->oom = 1;
        return NULL;
    }
    *x = *e;
    rf_hir_copy_const(p, &x->c, &e->c);
    if (e->nargs) {
        x->args = rf_arena_alloc(&p->arena, (size_t)e->nargs * sizeof *x->args);
        if (!x->args) {
            p->oom = 1;
            return NULL;
        }
        for (int32_t i = 0; i < e->nargs; i++) x->args[i] = rf_hir_copy_expr(p, e->args[i]);
    }
    return x;
}

rf_hir_var *rf_hir_add_var(rf_hir_program *p, const char *name, rf_hir_var_kind kind, rf_hir_role role,
                           int32_t ncols)
{
    if (p->nvars == p->capvars) {
        int32_t ncap = p->capvars ? p->capvars * 2 : 32;
        rf_hir_var **n = rf_arena_alloc(&p->arena, (size_t)ncap * sizeof *n);
        if (!n) {
            p->oom = 1;
            return NULL;
        }
        if (p->nvars) memcpy(n, p->vars, (size_t)p->nvars * sizeof *n);
        p->vars = n;
        p->capvars = ncap;
    }
    rf_hir_var *v = rf_arena_alloc(&p->arena, sizeof *v);
    if (!v) {
        p->oom = 1;
        return NULL;
    }
    v->id = p->nvars;
    v->name = rf_hir_strdup(p, name);
    v->kind = kind;
    v->role = role;
    v->ncols = ncols;
    v->types = rf_arena_alloc(&p->arena, (size_t)(ncols + 1) * sizeof *v->types);
    v->colnames = rf_arena_alloc(&p->arena, (size_t)(ncols + 1) * sizeof *v->colnames);
    if (!v->types || !v->colnames) p->oom = 1;
    p->vars[p->nvars++] = v;
    return v;
}

rf_hir_block *rf_hir_add_block(rf_hir_program *p, const char *comment)
{
    if (p->nblocks == p->capblocks) {
        int32_t ncap = p->capblocks ? p->capblocks * 2 : 8;
        rf_hir_block **n = rf_arena_alloc(&p->arena, (size_t)ncap * sizeof *n);
        if (!n) {
            p->oom = 1;
            return NULL;
        }
        if (p->nblocks) memcpy(n, p->blocks, (size_t)p->nblocks * sizeof *n);
        p->blocks = n;
        p->capblocks = ncap;
    }
    rf_hir_block *b = rf_arena_alloc(&p->arena, sizeof *b);
    if (!b) {
        p->oom = 1;
        return NULL;
    }
    b->id = p->nblocks;
    b->comment = rf_hir_strdup(p, comment);
    b->target = b->else_target = -1;
    p->blocks[p->nblocks++] = b;
    return b;
}

rf_hir_kernel *rf_hir_add_kernel(rf_hir_program *p, rf_hir_block *b, rf_hir_kind kind, int32_t out,
                                 int32_t nin)
{
    if (b->nkernels == b->capkernels) {
        int32_t ncap = b->capkernels ? b->capkernels * 2 : 8;
        rf_hir_kernel **n = rf_arena_alloc(&p->arena, (size_t)ncap * sizeof *n);
        if (!n) {
            p->oom = 1;
            return NULL;
        }
        if (b->nkernels) memcpy(n, b->kernels, (size_t)b->nkernels * sizeof *n);
        b->kernels = n;
        b->capkernels = ncap;
    }
    rf_hir_kernel *k = rf_arena_alloc(&p->arena, sizeof *k);
    int32_t *in = rf_arena_alloc(&p->arena, (size_t)(nin + 1) * sizeof *in);
    if (!k || !in) {
        p->oom = 1;
        return NULL;
    }
    k->kind = kind;
    k->out = out;
    k->in = in;
    k->nin = nin;
    k->idx = -1;
    k->limit = -1;
    b->kernels[b->nkernels++] = k;
    return k;
}

static rf_hir_role role_of(rf_qp_rel_kind k)
{
    switch (k) {
    case RF_QP_REL_INPUT: return RF_HIR_ROLE_INPUT;
    case RF_QP_REL_OUTPUT: return RF_HIR_ROLE_OUTPUT;
    case RF_QP_REL_TEMP: return RF_HIR_ROLE_TEMP;
    default: return RF_HIR_ROLE_PRED;
    }
}

/* An index variable for one command's intermediate. */
static int32_t index_var(rf_hir_program *p, const rf_qp_rel *dst, const char *what, int32_t ncols)
{
    char name[256];
    snprintf(name, sizeof name, "%s.%s", dst->name, what);
    rf_hir_var *v = rf_hir_add_var(p, name, RF_HIR_V_INDEX, RF_HIR_ROLE_TEMP, ncols);
    if (!v) return -1;
    for (int32_t i = 0; i < ncols; i++) {
        v->types[i] = RF_TYPE_INT;
        v->colnames[i] = i ? "right" : ncols > 1 ? "left" : "row";
    }
    v->card = dst->card;
    return v->id;
}

static rf_qp_expr **copy_outs(rf_hir_program *p, rf_qp_expr *const *outs, int32_t n)
{
    if (!n) return NULL;
    rf_qp_expr **o = rf_arena_alloc(&p->arena, (size_t)n * sizeof *o);
    if (!o) {
        p->oom = 1;
        return NULL;
    }
    for (int32_t i = 0; i < n; i++) o[i] = rf_hir_copy_expr(p, outs[i]);
    return o;
}

/* LFTJ: each input sorted into a trie (SORT by the columns it binds, in
** variable order; GATHER_MAP of those columns), an input read twice the
** same way sorted once, then the LFTJ kernel over the sorted copies. */
static void lower_lftj(rf_hir_program *p, rf_hir_block *b, const rf_qp_cmd *c)
{
    int32_t nin = c->nin, total = 0, off = 0;
    int32_t *sorted = rf_arena_alloc(&p->arena, (size_t)(nin + 1) * sizeof *sorted);
    int32_t *lk = rf_arena_alloc(&p->arena, (size_t)(c->dst->ncols * nin + 1) * sizeof *lk);
    int32_t *rk = rf_arena_alloc(&p->arena, (size_t)(c->dst->ncols * nin + 1) * sizeof *rk);
    int32_t *sortcols = rf_arena_alloc(&p->arena, (size_t)(64 * nin + 1) * sizeof *sortcols);
    int32_t *nsorted = rf_arena_alloc(&p->arena, (size_t)(nin + 1) * sizeof *nsorted);
    if (!sorted || !lk || !rk || !sortcols || !nsorted) {
        p->oom = 1;
        return;
    }
    for (int32_t i = 0; i < nin; i++) {
        const rf_qp_rel *r = c->in[i];
        const int32_t *cv = c->colvar + off;
        /* the columns it binds, by variable */
        int32_t cols[64], vars[64], n = 0;
        for (int32_t v = 0; v < c->dst->ncols && n < 64; v++)
            for (int32_t col = 0; col < r->ncols; col++)
                if (cv[col] == v) {
                    cols[n] = col;
                    vars[n++] = v;
                }
        /* an input read twice with its columns in the same order (t(a, b) and
        ** t(b, c) of a triangle) is one trie */
        sorted[i] = -1;
        for (int32_t j = 0; j < i && sorted[i] < 0; j++)
            if (c->in[j] == r && nsorted[j] == n && !memcmp(sortcols + 64 * j, cols, (size_t)n * sizeof *cols))
                sorted[i] = sorted[j];
        memcpy(sortcols + 64 * i, cols, (size_t)n * sizeof *cols);
        nsorted[i] = n;
        if (sorted[i] < 0) {
            char what[64];
            snprintf(what, sizeof what, "trie%d", i);
            int32_t perm = index_var(p, c->dst, what, 1);
            snprintf(what, sizeof what, "%s.in%d", c->dst->name, i);
            rf_hir_var *t = perm < 0 ? NULL : rf_hir_add_var(p, what, RF_HIR_V_REL, RF_HIR_ROLE_TEMP, n);
            if (!t) return;
            p->vars[perm]->card = t->card = r->card;
            rf_hir_kernel *ks = rf_hir_add_kernel(p, b, RF_HIR_SORT, perm, 1);
            rf_hir_kernel *kg = rf_hir_add_kernel(p, b, RF_HIR_GATHER_MAP, t->id, 2);
            rf_fe_order *o = rf_arena_alloc(&p->arena, (size_t)(n + 1) * sizeof *o);
            rf_qp_expr **outs = rf_arena_alloc(&p->arena, (size_t)(n + 1) * sizeof *outs);
            if (!ks || !kg || !o || !outs) {
                p->oom = 1;
                return;
            }
            for (int32_t j = 0; j < n; j++) {
                t->types[j] = RF_TYPE_INT;
                t->colnames[j] = rf_hir_strdup(p, r->colnames[cols[j]]);
                o[j] = (rf_fe_order){cols[j], 0};
                rf_qp_expr e = {.kind = RF_QP_E_COL, .type = RF_TYPE_INT, .side = 0, .col = cols[j]};
                outs[j] = rf_hir_copy_expr(p, &e);
            }
            ks->in[0] = r->id;
            ks->order = o;
            ks->norder = n;
            ks->loc = c->loc;
            kg->in[0] = r->id;
            kg->in[1] = perm;
            kg->idx = perm;
            kg->outs = outs;
            kg->nouts = n;
            kg->loc = c->loc;
            sorted[i] = t->id;
        }
        for (int32_t j = 0; j < n; j++) {
            lk[total] = vars[j];
            rk[total++] = i;
        }
        off += r->ncols;
    }
    rf_hir_kernel *k = rf_hir_add_kernel(p, b, RF_HIR_LFTJ, c->dst->id, nin);
    if (!k) return;
    memcpy(k->in, sorted, (size_t)nin * sizeof *sorted);
    k->lkeys = lk;
    k->rkeys = rk;
    k->nkeys = total;
    k->filter = rf_hir_copy_expr(p, c->filter);
    k->loc = c->loc;
}

static void lower_cmd(rf_hir_program *p, rf_hir_block *b, const rf_qp_cmd *c)
{
    int32_t dst = c->dst->id;
    rf_hir_kernel *k = NULL, *k2 = NULL;
    switch (c->op) {
    case RF_QP_MAPFILTER:
        k = rf_hir_add_kernel(p, b, RF_HIR_MAP, dst, 1);
        if (!k) return;
        k->in[0] = c->in[0]->id;
        k->filter = rf_hir_copy_expr(p, c->filter);
        k->outs = copy_outs(p, c->outs, c->nouts);
        k->nouts = c->nouts;
        break;
    case RF_QP_MAPJOIN:
    case RF_QP_ANTIJOIN: {
        int anti = c->op == RF_QP_ANTIJOIN;
        int32_t idx = index_var(p, c->dst, anti ? "sel" : "pairs", anti ? 1 : 2);
        if (idx < 0) return;
        k = rf_hir_add_kernel(p, b, anti ? RF_HIR_ANTI_INDEX : RF_HIR_JOIN_INDEX, idx, 2);
        if (!k) return;
        k->in[0] = c->in[0]->id;
        k->in[1] = c->in[1]->id;
        k->lkeys = dup_mem(p, c->lkeys, (size_t)c->nkeys * sizeof *c->lkeys);
        k->rkeys = dup_mem(p, c->rkeys, (size_t)c->nkeys * sizeof *c->rkeys);
        k->nkeys = c->nkeys;
        k2 = rf_hir_add_kernel(p, b, anti ? RF_HIR_GATHER_MAP : RF_HIR_JOIN_MAP, dst, anti ? 2 : 3);
        if (!k2) return;
        k2->in[0] = c->in[0]->id;
        if (anti) {
            k2->in[1] = idx;
        } else {
            k2->in[1] = c->in[1]->id;
            k2->in[2] = idx;
            k2->filter = rf_hir_copy_expr(p, c->filter);
        }
        k2->idx = idx;
        k2->outs = copy_outs(p, c->outs, c->nouts);
        k2->nouts = c->nouts;
        break;
    }
    case RF_QP_AGGREGATE: {
        int32_t idx = index_var(p, c->dst, "groups", 1);
        if (idx < 0) return;
        k = rf_hir_add_kernel(p, b, RF_HIR_GROUP, idx, 1);
        if (!k) return;
        k->in[0] = c->in[0]->id;
        k->group = dup_mem(p, c->group, (size_t)c->ngroup * sizeof *c->group);
        k->ngroup = c->ngroup;
        k->partial = c->partial;
        k2 = rf_hir_add_kernel(p, b, RF_HIR_REDUCE, dst, 2);
        if (!k2) return;
        k2->in[0] = c->in[0]->id;
        k2->in[1] = idx;
        k2->idx = idx;
        k2->group = k->group;
        k2->ngroup = c->ngroup;
        k2->aggs = dup_mem(p, c->aggs, (size_t)c->naggs * sizeof *c->aggs);
        k2->naggs = c->naggs;
        k2->partial = c->partial;
        break;
    }
    case RF_QP_UNION: {
        int self = -1;
        for (int32_t i = 0; i < c->nin; i++)
            if (c->in[i] == c->dst) self = i;
        if (self >= 0 && c->nin > 1) {
            /* p = p ∪ ...: grow p in place instead of rebuilding it */
            k = rf_hir_add_kernel(p, b, RF_HIR_INSERT, dst, c->nin);
            if (!k) return;
            k->in[0] = dst;
            for (int32_t i = 0, j = 1; i < c->nin; i++)
                if (i != self) k->in[j++] = c->in[i]->id;
            break;
        }
        if (c->nin == 1) {
            k = rf_hir_add_kernel(p, b, RF_HIR_UNIQUE, dst, 1);
            if (!k) return;
            k->in[0] = c->in[0]->id;
            break;
        }
        char name[256];
        snprintf(name, sizeof name, "%s.all", c->dst->name);
        rf_hir_var *all = rf_hir_add_var(p, name, RF_HIR_V_REL, RF_HIR_ROLE_TEMP, c->dst->ncols);
        if (!all) return;
        for (int32_t i = 0; i < c->dst->ncols; i++) {
            all->types[i] = c->dst->types[i];
            all->colnames[i] = rf_hir_strdup(p, c->dst->colnames[i]);
        }
        all->card = c->dst->card;
        k = rf_hir_add_kernel(p, b, RF_HIR_CONCAT, all->id, c->nin);
        if (!k) return;
        for (int32_t i = 0; i < c->nin; i++) k->in[i] = c->in[i]->id;
        k2 = rf_hir_add_kernel(p, b, RF_HIR_UNIQUE, dst, 1);
        if (!k2) return;
        k2->in[0] = all->id;
        break;
    }
    case RF_QP_DIFFERENCE:
        k = rf_hir_add_kernel(p, b, RF_HIR_DIFFERENCE, dst, 2);
        if (!k) return;
        k->in[0] = c->in[0]->id;
        k->in[1] = c->in[1]->id;
        break;
    case RF_QP_UNIQUE:
        k = rf_hir_add_kernel(p, b, RF_HIR_UNIQUE, dst, 1);
        if (!k) return;
        k->in[0] = c->in[0]->id;
        k->check_fd = c->check_fd;
        break;
    case RF_QP_COPY:
        k = rf_hir_add_kernel(p, b, RF_HIR_COPY, dst, 1);
        if (!k) return;
        k->in[0] = c->in[0]->id;
        break;
    case RF_QP_FACTS: {
        k = rf_hir_add_kernel(p, b, RF_HIR_FACTS, dst, 0);
        if (!k) return;
        int64_t n = c->nrows * c->dst->ncols;
        k->rows = n ? rf_arena_alloc(&p->arena, (size_t)n * sizeof *k->rows) : NULL;
        if (n && !k->rows) {
            p->oom = 1;
            return;
        }
        for (int64_t i = 0; i < n; i++) rf_hir_copy_const(p, &k->rows[i], &c->rows[i]);
        k->nrows = c->nrows;
        break;
    }
    case RF_QP_CLEAR:
        k = rf_hir_add_kernel(p, b, RF_HIR_CLEAR, dst, 0);
        break;
    case RF_QP_LFTJ: lower_lftj(p, b, c); return;
    case RF_QP_ORDERLIMIT: {
        int32_t idx = index_var(p, c->dst, "perm", 1);
        if (idx < 0) return;
        k = rf_hir_add_kernel(p, b, RF_HIR_SORT, idx, 1);
        if (!k) return;
        k->in[0] = c->in[0]->id;
        /* ties on the requested columns break by the remaining columns,
        ** ascending: a total order makes the output, and what a limit keeps,
        ** the same on every device and thread count */
        int32_t ncols = c->in[0]->ncols;
        k->order = rf_arena_alloc(&p->arena, (size_t)(c->norder + ncols + 1) * sizeof *k->order);
        if (!k->order) {
            p->oom = 1;
            return;
        }
        int32_t n = 0;
        for (int32_t i = 0; i < c->norder; i++) k->order[n++] = c->order[i];
        for (int32_t col = 0; col < ncols; col++) {
            int seen = 0;
            for (int32_t i = 0; i < c->norder; i++) seen |= c->order[i].col == col;
            if (!seen) k->order[n++] = (rf_fe_order){col, 0};
        }
        k->norder = n;
        /* only the first `limit` places of the order are read */
        k->limit = c->limit;
        k2 = rf_hir_add_kernel(p, b, RF_HIR_GATHER, dst, 2);
        if (!k2) return;
        k2->in[0] = c->in[0]->id;
        k2->in[1] = idx;
        k2->idx = idx;
        k2->limit = c->limit;
        break;
    }
    }
    if (k) k->loc = c->loc;
    if (k2) k2->loc = c->loc;
}

rf_status rf_hir_lower(const rf_qp_program *qp, rf_hir_program **out, rf_diags *d)
{
    *out = NULL;
    rf_hir_program *p = rf_calloc(1, sizeof *p);
    if (!p) return RF_ENOMEM;
    rf_arena_init(&p->arena);
    p->source = rf_hir_strdup(p, qp->fe && qp->fe->file ? qp->fe->file : "");
    /* variables: the plan's relations keep their ids */
    for (int32_t i = 0; i < qp->nrels && !p->oom; i++) {
        const rf_qp_rel *r = qp->rels[i];
        rf_hir_var *v = rf_hir_add_var(p, r->name, RF_HIR_V_REL, role_of(r->kind), r->ncols);
        if (!v) break;
        for (int32_t c = 0; c < r->ncols; c++) {
            v->types[c] = r->types[c];
            v->colnames[c] = rf_hir_strdup(p, r->colnames[c]);
        }
        v->card = r->card;
        v->input_file = rf_hir_strdup(p, r->input_file);
        v->delimiter = r->delimiter;
        v->header = r->header;
        if (r->ninput_key > 0) {
            v->input_key = rf_arena_alloc(&p->arena, (size_t)r->ninput_key * sizeof *v->input_key);
            if (!v->input_key) {
                p->oom = 1;
                break;
            }
            memcpy(v->input_key, r->input_key, (size_t)r->ninput_key * sizeof *v->input_key);
            v->ninput_key = r->ninput_key;
        }
        v->output_name = rf_hir_strdup(p, r->output_name);
        if (r->fd_checked) {
            v->nkeys = r->nkeys;
            v->pred_name = rf_hir_strdup(p, r->pred ? r->pred->name : r->name);
        } else if (r->kind == RF_QP_REL_INPUT && r->pred && r->pred->functional && r->ncols >= 1) {
            /* the loader checks a functional input's dependency (nkeys 0:
            ** p[] = v, at most one row) */
            v->nkeys = r->ncols - 1;
            v->pred_name = rf_hir_strdup(p, r->pred->name);
        }
    }
    for (int32_t i = 0; i < qp->nblocks && !p->oom; i++) {
        const rf_qp_block *qb = qp->blocks[i];
        rf_hir_block *b = rf_hir_add_block(p, qb->comment);
        if (!b) break;
        for (int32_t j = 0; j < qb->ncmds && !p->oom; j++) lower_cmd(p, b, qb->cmds[j]);
        switch (qb->term.kind) {
        case RF_QP_T_GOTO: b->term = RF_HIR_T_GOTO; break;
        case RF_QP_T_BRANCH: b->term = RF_HIR_T_BRANCH; break;
        case RF_QP_T_HALT: b->term = RF_HIR_T_HALT; break;
        }
        b->target = qb->term.target;
        b->else_target = qb->term.else_target;
        b->ntest = qb->term.nrels;
        b->test = rf_arena_alloc(&p->arena, (size_t)(b->ntest + 1) * sizeof *b->test);
        if (!b->test) p->oom = 1;
        else
            for (int32_t t = 0; t < b->ntest; t++) b->test[t] = qb->term.rels[t]->id;
    }
    /* kernel ids in program order, for stable names in dumps and profiles;
    ** each kernel's rule's file held by the program (of several sources, a
    ** run-time error names the rule's own file, not the program's name) */
    int32_t kid = 0;
    for (int32_t i = 0; i < p->nblocks; i++)
        for (int32_t j = 0; j < p->blocks[i]->nkernels; j++) {
            rf_hir_kernel *k = p->blocks[i]->kernels[j];
            k->id = kid++;
            const char *f = k->loc.file;
            k->loc.file = !f || !strcmp(f, p->source) ? p->source : rf_hir_strdup(p, f);
        }
    if (p->oom) {
        rf_hir_free(p);
        return RF_ENOMEM;
    }
    rf_status st = rf_hir_schedule(p, d);
    if (st) {
        rf_hir_free(p);
        return st;
    }
    *out = p;
    return RF_OK;
}

void rf_hir_free(rf_hir_program *p)
{
    if (!p) return;
    rf_arena_free(&p->arena);
    free(p);
}
