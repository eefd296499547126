/*
** queryplan/tests/test_qp.c: unit tests of the query-plan stage.
**
** Owns: loading the small LogiQL programs of this folder through the front
** end, lowering and optimizing them, and asserting structural facts about
** the plans (loops over deltas, folded constants, pushed-down filters, join
** order, dead relations gone, aggregation fed by a dedupe, FD checks), plus
** every pass run alone, and the printers (the YAML must re-parse with
** libyaml's parser). Usage: test_qp DIR   (DIR holds the .logic programs).
** With --dump FILE [--no-opt [PASS]] it prints a plan and with --run FILE
** the outputs of its optimized plan on random inputs, for debugging;
** --check FILE runs the generic and semantic checks on one more program.
*/
#include "qp_internal.h" /* qp_scan_steps */
#include "qp_interp.h"
#include "rf_queryplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static int failures, checks;
static const char *current = "";

#define CHECK(cond)                                                                                        \
    do {                                                                                                   \
        checks++;                                                                                          \
        if (!(cond)) {                                                                                     \
            failures++;                                                                                    \
            fprintf(stderr, "%s:%d: [%s] check failed: %s\n", __FILE__, __LINE__, current, #cond);         \
        }                                                                                                  \
    } while (0)

typedef struct loaded {
    rf_arena arena;
    rf_diags d;
    rf_fe_program *fe;
    rf_qp_program *qp;
} loaded;

static const char *dir = ".";
/* load() lowers without the another-row rewrite (qp_exists.c): the reference */
static int plain_lowering;

/* Loads, checks and lowers a program; optimizes it when opt. */
static int load(loaded *l, const char *name, int opt)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    current = name;
    rf_arena_init(&l->arena);
    rf_diags_init(&l->d);
    l->fe = NULL;
    l->qp = NULL;
    rf_ast_program *ast;
    rf_status st = rf_fe_load_file(path, &l->arena, &ast, &l->fe, &l->d);
    rf_qp_options qo = {.no_exists = plain_lowering};
    if (!st) st = rf_qp_build_opts(l->fe, &qo, &l->qp, &l->d);
    if (!st && opt) st = rf_qp_optimize(l->qp, &l->d);
    if (st) {
        fprintf(stderr, "%s: status %d\n", path, (int)st);
        rf_diags_print(&l->d, stderr);
    }
    CHECK(st == RF_OK);
    return st == RF_OK ? 0 : -1;
}

static void unload(loaded *l)
{
    rf_qp_free(l->qp);
    rf_diags_free(&l->d);
    rf_arena_free(&l->arena);
}

static rf_qp_rel *rel(const rf_qp_program *p, const char *name)
{
    for (int32_t i = 0; i < p->nrels; i++)
        if (strcmp(p->rels[i]->name, name) == 0) return p->rels[i];
    return NULL;
}

/* The command writing r (the first one), or NULL. */
static rf_qp_cmd *writer(const rf_qp_program *p, const rf_qp_rel *r)
{
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++)
            if (p->blocks[b]->cmds[i]->dst == r) return p->blocks[b]->cmds[i];
    return NULL;
}

static int64_t count_op(const rf_qp_program *p, rf_qp_op op)
{
    int64_t n = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) n += p->blocks[b]->cmds[i]->op == op;
    return n;
}

static int64_t reads_of(const rf_qp_program *p, const rf_qp_rel *r)
{
    int64_t n = 0;
    for (int32_t b = 0; b < p->nblocks; b++) {
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++)
            for (int32_t j = 0; j < p->blocks[b]->cmds[i]->nin; j++) n += p->blocks[b]->cmds[i]->in[j] == r;
        for (int32_t j = 0; j < p->blocks[b]->term.nrels; j++) n += p->blocks[b]->term.rels[j] == r;
    }
    return n;
}

/* Every relation a command or terminator names is in the table. */
static void check_refs(const rf_qp_program *p)
{
    int ok = 1;
    for (int32_t b = 0; b < p->nblocks; b++) {
        const rf_qp_block *bl = p->blocks[b];
        for (int32_t i = 0; i < bl->ncmds; i++) {
            const rf_qp_cmd *c = bl->cmds[i];
            ok &= c->dst->id >= 0 && c->dst->id < p->nrels && p->rels[c->dst->id] == c->dst;
            for (int32_t j = 0; j < c->nin; j++)
                ok &= c->in[j]->id >= 0 && c->in[j]->id < p->nrels && p->rels[c->in[j]->id] == c->in[j];
        }
        for (int32_t j = 0; j < bl->term.nrels; j++) ok &= p->rels[bl->term.rels[j]->id] == bl->term.rels[j];
    }
    CHECK(ok);
}

/* Counts expressions with constant operands that an evaluator could fold. */
static int64_t const_ops(const rf_qp_expr *e)
{
    if (!e) return 0;
    int64_t n = 0;
    int allc = e->nargs > 0;
    for (int32_t i = 0; i < e->nargs; i++) {
        n += const_ops(e->args[i]);
        allc &= e->args[i]->kind == RF_QP_E_CONST;
    }
    if (allc && (e->kind == RF_QP_E_BINOP || e->kind == RF_QP_E_NEG || e->kind == RF_QP_E_CAST ||
                 e->kind == RF_QP_E_CMP || e->kind == RF_QP_E_CALL || e->kind == RF_QP_E_LIKE))
        n++;
    return n;
}

static int64_t program_const_ops(const rf_qp_program *p)
{
    int64_t n = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
            const rf_qp_cmd *c = p->blocks[b]->cmds[i];
            n += const_ops(c->filter);
            for (int32_t o = 0; o < c->nouts; o++) n += const_ops(c->outs[o]);
        }
    return n;
}

static int yaml_reparses(const char *text, int64_t len)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    if (!yaml_parser_initialize(&parser)) return 0;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, (size_t)len);
    int ok = 1, done = 0, events = 0;
    while (!done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            fprintf(stderr, "yaml: %s at line %zu\n", parser.problem ? parser.problem : "?", parser.problem_mark.line + 1);
            ok = 0;
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        events++;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    return ok && events > 10;
}

static void check_printers(const rf_qp_program *p)
{
    rf_buf t, y, g;
    rf_buf_init(&t);
    rf_buf_init(&y);
    rf_buf_init(&g);
    rf_qp_print_text(p, &t);
    CHECK(!t.oom && t.len > 0 && strstr(rf_buf_cstr(&t), "relations (") != NULL);
    CHECK(rf_qp_print_yaml(p, &y) == RF_OK);
    CHECK(y.len > 0 && yaml_reparses(rf_buf_cstr(&y), y.len));
    rf_qp_print_dot(p, &g);
    CHECK(g.len > 0 && strncmp(rf_buf_cstr(&g), "digraph plan {", 14) == 0);
    /* text output is deterministic */
    rf_buf t2;
    rf_buf_init(&t2);
    rf_qp_print_text(p, &t2);
    CHECK(t2.len == t.len && memcmp(t.data, t2.data, (size_t)t.len) == 0);
    rf_buf_free(&t2);
    rf_buf_free(&t);
    rf_buf_free(&y);
    rf_buf_free(&g);
}

/* Every program: builds, verifies, prints, optimizes, verifies, prints;
** optimizing again keeps it valid; each pass alone keeps it valid. */
static void test_all(const char *name)
{
    loaded l;
    if (load(&l, name, 0) == 0) {
        CHECK(rf_qp_verify(l.qp, &l.d) == RF_OK);
        check_refs(l.qp);
        check_printers(l.qp);
        CHECK(rf_qp_optimize(l.qp, &l.d) == RF_OK);
        check_refs(l.qp);
        check_printers(l.qp);
        CHECK(rf_qp_optimize(l.qp, &l.d) == RF_OK);
        CHECK(rf_qp_verify(l.qp, &l.d) == RF_OK);
        /* after dead elimination every temporary is read */
        for (int32_t i = 0; i < l.qp->nrels; i++)
            if (l.qp->rels[i]->kind == RF_QP_REL_TEMP) CHECK(reads_of(l.qp, l.qp->rels[i]) > 0);
    }
    unload(&l);
    int32_t n;
    const rf_qp_pass *ps = rf_qp_passes(&n);
    for (int32_t k = 0; k < n; k++) {
        if (load(&l, name, 0) == 0) {
            rf_status st = rf_qp_run_pass(l.qp, ps[k].name, &l.d);
            if (st) rf_diags_print(&l.d, stderr);
            CHECK(st == RF_OK);
            check_refs(l.qp);
        }
        unload(&l);
    }
}

static void test_evenodd(void)
{
    for (int opt = 0; opt < 2; opt++) {
        loaded l;
        if (load(&l, "evenodd.logic", opt) == 0) {
            const rf_qp_program *p = l.qp;
            int loops = 0;
            for (int32_t b = 0; b < p->nblocks; b++) {
                const rf_qp_term *t = &p->blocks[b]->term;
                if (t->kind != RF_QP_T_BRANCH || t->target != b) continue;
                loops++;
                CHECK(t->nrels == 2);
                for (int32_t j = 0; j < t->nrels; j++) CHECK(t->rels[j]->kind == RF_QP_REL_DELTA);
                CHECK(t->nrels == 2 && t->rels[0] == rel(p, "even.delta") && t->rels[1] == rel(p, "odd.delta"));
                /* the loop derives new rows, updates deltas and full relations */
                CHECK(writer(p, rel(p, "even.new")) && writer(p, rel(p, "even.new"))->op == RF_QP_DIFFERENCE);
                int unions = 0;
                for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
                    const rf_qp_cmd *c = p->blocks[b]->cmds[i];
                    if (c->op == RF_QP_UNION && c->dst == rel(p, "even")) unions++;
                }
                CHECK(unions == 1);
            }
            CHECK(loops == 1);
            CHECK(p->blocks[p->nblocks - 1]->term.kind == RF_QP_T_HALT);
            CHECK(rel(p, "even.out") && rel(p, "even.out")->kind == RF_QP_REL_OUTPUT);
            CHECK(writer(p, rel(p, "even.out"))->op == RF_QP_ORDERLIMIT);
            CHECK(rel(p, "number")->card == 6 && rel(p, "number")->card_exact);
        }
        unload(&l);
    }
}

static void test_tc(void)
{
    loaded l;
    if (load(&l, "tc.logic", 1) == 0) {
        const rf_qp_program *p = l.qp;
        rf_qp_rel *delta = rel(p, "path.delta");
        CHECK(delta != NULL);
        int64_t variants = 0;
        for (int32_t b = 0; b < p->nblocks; b++)
            for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
                const rf_qp_cmd *c = p->blocks[b]->cmds[i];
                if (c->op == RF_QP_MAPJOIN && (c->in[0] == delta || c->in[1] == delta)) variants++;
            }
        CHECK(variants == 2); /* path(x,y), path(y,z): one variant per recursive atom */
        rf_qp_cmd *o = writer(p, rel(p, "reach1.out"));
        CHECK(o && o->op == RF_QP_ORDERLIMIT && o->limit == 10 && o->norder == 1 && o->order[0].desc);
        CHECK(rel(p, "edge")->kind == RF_QP_REL_INPUT && rel(p, "edge")->card == RF_QP_DEFAULT_INPUT_CARD);
    }
    unload(&l);
}

static void test_mutual(void)
{
    loaded l;
    if (load(&l, "mutual.logic", 1) == 0) {
        int found = 0;
        for (int32_t b = 0; b < l.qp->nblocks; b++) {
            const rf_qp_term *t = &l.qp->blocks[b]->term;
            if (t->kind == RF_QP_T_BRANCH && t->target == b) found = t->nrels == 3;
        }
        CHECK(found);
    }
    unload(&l);
}

static void test_fold(void)
{
    loaded l;
    if (load(&l, "fold.logic", 0) == 0) {
        CHECK(program_const_ops(l.qp) > 5);
        CHECK(rf_qp_run_pass(l.qp, "fold", &l.d) == RF_OK);
        CHECK(program_const_ops(l.qp) == 0);
        rf_qp_cmd *c = writer(l.qp, rel(l.qp, "c"));
        CHECK(c && c->op == RF_QP_CLEAR); /* 2 > 3 */
        /* a(x, y) <- t(x), y = x + 2 * 3 : the product is folded */
        rf_qp_cmd *a = writer(l.qp, writer(l.qp, rel(l.qp, "a"))->in[0]);
        CHECK(a && a->op == RF_QP_MAPFILTER && a->outs[1]->kind == RF_QP_E_BINOP &&
              a->outs[1]->args[1]->kind == RF_QP_E_CONST && a->outs[1]->args[1]->c.i == 6);
        /* the filter 1 < 2 disappears */
        rf_qp_cmd *b = writer(l.qp, writer(l.qp, rel(l.qp, "b"))->in[0]);
        CHECK(b && !b->filter && b->outs[1]->kind == RF_QP_E_CONST && b->outs[1]->type == RF_TYPE_DATE);
        /* "ab" + "cd" and the string filters */
        rf_qp_cmd *d = writer(l.qp, writer(l.qp, rel(l.qp, "d"))->in[0]);
        CHECK(d && !d->filter && d->outs[1]->kind == RF_QP_E_CONST && d->outs[1]->c.slen == 4 &&
              memcmp(d->outs[1]->c.s, "abcd", 4) == 0);
        /* date:month[date:add_months[2000-01-31, 1]] = 2; -(3) < x stays a filter */
        rf_qp_cmd *h = writer(l.qp, writer(l.qp, rel(l.qp, "h"))->in[0]);
        CHECK(h && h->outs[1]->kind == RF_QP_E_CONST && h->outs[1]->c.i == 2 && h->filter &&
              h->filter->args[0]->kind == RF_QP_E_CONST && h->filter->args[0]->c.i == -3);
    }
    unload(&l);
    if (load(&l, "fold_runtime.logic", 0) == 0) {
        CHECK(rf_qp_run_pass(l.qp, "fold", &l.d) == RF_OK);
        /* the overflow (9223372036854775807 + 1) is left for run time */
        CHECK(program_const_ops(l.qp) == 1);
        /* x / (1 - 1): the division by zero too */
        rf_qp_cmd *f = writer(l.qp, writer(l.qp, rel(l.qp, "f"))->in[0]);
        CHECK(f && f->outs[1]->kind == RF_QP_E_BINOP && f->outs[1]->op == '/' &&
              f->outs[1]->args[1]->kind == RF_QP_E_CONST && f->outs[1]->args[1]->c.i == 0);
    }
    unload(&l);
}

static void test_pushdown(void)
{
    loaded l;
    if (load(&l, "pushdown.logic", 0) == 0) {
        rf_qp_program *p = l.qp;
        rf_qp_cmd *j = writer(p, writer(p, rel(p, "q"))->in[0]);
        CHECK(j && j->op == RF_QP_MAPJOIN && j->filter && j->filter->kind == RF_QP_E_AND);
        CHECK(rf_qp_run_pass(p, "select", &l.d) == RF_OK);
        j = writer(p, writer(p, rel(p, "q"))->in[0]);
        /* a > 10 sits on the scan of r, c < 5 on the scan of s; a + c != 7 stays */
        CHECK(j && j->op == RF_QP_MAPJOIN && j->filter && j->filter->kind == RF_QP_E_CMP && j->filter->cmp == RF_CMP_NE);
        rf_qp_cmd *sl = writer(p, j->in[0]), *sr = writer(p, j->in[1]);
        CHECK(sl && sl->op == RF_QP_MAPFILTER && sl->in[0] == rel(p, "r") && sl->filter && sl->filter->cmp == RF_CMP_GT);
        CHECK(sr && sr->op == RF_QP_MAPFILTER && sr->in[0] == rel(p, "s") && sr->filter && sr->filter->cmp == RF_CMP_LT);
        /* q2: b = d becomes a join key, c = 3 a scan */
        rf_qp_cmd *j2 = writer(p, writer(p, rel(p, "q2"))->in[0]);
        CHECK(j2 && j2->op == RF_QP_MAPJOIN && j2->nkeys == 1 && !j2->filter);
        CHECK(j2 && writer(p, j2->in[1]) && writer(p, j2->in[1])->filter);
        /* q3: the constant in s(b, 42) */
        rf_qp_cmd *j3 = writer(p, writer(p, rel(p, "q3"))->in[0]);
        CHECK(j3 && !j3->filter && writer(p, j3->in[1]) && writer(p, j3->in[1])->in[0] == rel(p, "s"));
        CHECK(rf_qp_run_pass(p, "project", &l.d) == RF_OK);
        /* q3's scan of s keeps only the join column */
        j3 = writer(p, writer(p, rel(p, "q3"))->in[0]);
        CHECK(j3 && j3->in[1]->ncols == 1);
    }
    unload(&l);
}

static void test_joinorder(void)
{
    loaded l;
    if (load(&l, "joinorder.logic", 1) == 0) {
        rf_qp_program *p = l.qp;
        int64_t joins = 0, cross = 0;
        for (int32_t b = 0; b < p->nblocks; b++)
            for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
                const rf_qp_cmd *c = p->blocks[b]->cmds[i];
                if (c->op != RF_QP_MAPJOIN) continue;
                joins++;
                cross += c->nkeys == 0;
            }
        CHECK(joins == 3 && cross == 0);
        /* the first join starts from the filtered facts of small */
        rf_qp_cmd *first = NULL;
        for (int32_t i = 0; i < p->blocks[0]->ncmds && !first; i++)
            if (p->blocks[0]->cmds[i]->op == RF_QP_MAPJOIN) first = p->blocks[0]->cmds[i];
        CHECK(first && writer(p, first->in[0]) && writer(p, first->in[0])->in[0] == rel(p, "small"));
    }
    unload(&l);
}

static void test_aggregate(void)
{
    loaded l;
    if (load(&l, "aggregate.logic", 0) == 0) {
        rf_qp_program *p = l.qp;
        /* count() ranges over the body's solutions: the aggregate reads a dedupe of every column */
        rf_qp_cmd *u = writer(p, rel(p, "items"));
        rf_qp_cmd *a = u ? writer(p, u->in[0]) : NULL;
        CHECK(u && u->op == RF_QP_UNIQUE && u->check_fd);
        CHECK(a && a->op == RF_QP_AGGREGATE && a->ngroup == 1 && a->naggs == 1 && a->aggs[0].fn == RF_AGG_COUNT &&
              a->aggs[0].col == -1);
        CHECK(a && writer(p, a->in[0])->op == RF_QP_UNIQUE);
        rf_qp_cmd *ps = writer(p, writer(p, rel(p, "per_shop"))->in[0]);
        CHECK(ps && ps->op == RF_QP_AGGREGATE && ps->naggs == 4 && ps->ngroup == 1);
        rf_qp_cmd *all = writer(p, writer(p, rel(p, "all_qty"))->in[0]);
        CHECK(all && all->op == RF_QP_AGGREGATE && all->ngroup == 0);
        CHECK(rf_qp_optimize(p, &l.d) == RF_OK);
        /* grouped by the key: the FD holds, the aggregate writes the predicate */
        a = writer(p, rel(p, "items"));
        CHECK(a && a->op == RF_QP_AGGREGATE);
        /* each split in two (pass partagg): a partial aggregate, then the
        ** combining one (avg_price's then a map dividing its total by its
        ** count in wide decimals, the mean narrowed to decimal); per_shop
        ** and all_qty, totals of ints, stay whole (an int part could
        ** overflow where the whole does not) */
        CHECK(count_op(p, RF_QP_AGGREGATE) == 8);
        int64_t partial = 0;
        for (int32_t b = 0; b < p->nblocks; b++)
            for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) partial += p->blocks[b]->cmds[i]->partial;
        CHECK(partial == 3);
        CHECK(!writer(p, writer(p, rel(p, "per_shop"))->in[0])->partial);
        a = writer(p, rel(p, "avg_price"));
        const rf_qp_expr *mean = a && a->op == RF_QP_MAPFILTER && a->nouts == 2 ? a->outs[1] : NULL;
        CHECK(mean && mean->kind == RF_QP_E_CAST && mean->type == RF_TYPE_DECIMAL && mean->nargs == 1);
        const rf_qp_expr *q = mean ? mean->args[0] : NULL;
        CHECK(q && q->kind == RF_QP_E_BINOP && q->op == '/' && q->type == RF_TYPE_DEC128 && q->nargs == 2);
        /* the total (wide already) over the count widened */
        CHECK(q && q->args[0]->type == RF_TYPE_DEC128 && q->args[1]->kind == RF_QP_E_CAST &&
              q->args[1]->type == RF_TYPE_DEC128 && q->args[1]->args[0]->kind == RF_QP_E_COL &&
              q->args[1]->args[0]->type == RF_TYPE_INT);
    }
    unload(&l);
}

static void test_functional(void)
{
    loaded l;
    if (load(&l, "functional.logic", 1) == 0) {
        rf_qp_program *p = l.qp;
        /* the facts of price satisfy the FD: checked at compile time */
        CHECK(rel(p, "price")->fd_checked && rel(p, "price")->nkeys == 1);
        CHECK(writer(p, rel(p, "price"))->op == RF_QP_FACTS);
        /* cost is derived: the run time checks it */
        rf_qp_cmd *c = writer(p, rel(p, "cost"));
        CHECK(c && c->op == RF_QP_UNIQUE && c->check_fd);
        /* the recursive dist is checked every round */
        int loopcheck = 0;
        for (int32_t b = 0; b < p->nblocks; b++)
            for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
                const rf_qp_cmd *x = p->blocks[b]->cmds[i];
                if (x->op == RF_QP_UNIQUE && x->check_fd && x->dst == rel(p, "dist") && x->in[0] == x->dst) loopcheck++;
            }
        CHECK(loopcheck == 1);
    }
    unload(&l);
}

/* The lftj pass: the triangle and the 4-cycle become leapfrog triejoins,
** the path and the cycle of key joins stay binary; no_lftj keeps all binary. */
static void test_lftj(void)
{
    loaded l;
    if (load(&l, "lftj.logic", 1) == 0) {
        rf_qp_program *p = l.qp;
        CHECK(count_op(p, RF_QP_LFTJ) == 4); /* tri, the two rules of square (its disjunction), square2 */
        rf_qp_cmd *t = writer(p, rel(p, "tri"));
        rf_qp_cmd *j = t ? writer(p, t->in[0]) : NULL;
        while (j && j->op != RF_QP_LFTJ && j->nin == 1) j = writer(p, j->in[0]);
        CHECK(j && j->op == RF_QP_LFTJ && j->nin == 3 && j->dst->ncols == 3);
        rf_qp_cmd *s = writer(p, rel(p, "same_city"));
        CHECK(s && s->op != RF_QP_LFTJ);
    }
    unload(&l);
    rf_arena_init(&l.arena);
    rf_diags_init(&l.d);
    rf_ast_program *ast;
    char path[4096];
    snprintf(path, sizeof path, "%s/lftj.logic", dir);
    rf_qp_options o = {.no_lftj = 1};
    l.qp = NULL;
    rf_status st = rf_fe_load_file(path, &l.arena, &ast, &l.fe, &l.d);
    if (!st) st = rf_qp_build_opts(l.fe, &o, &l.qp, &l.d);
    if (!st) st = rf_qp_optimize(l.qp, &l.d);
    CHECK(st == RF_OK && count_op(l.qp, RF_QP_LFTJ) == 0 && count_op(l.qp, RF_QP_MAPJOIN) >= 8);
    unload(&l);
}

static void test_negation(void)
{
    loaded l;
    if (load(&l, "negation.logic", 1) == 0) {
        rf_qp_program *p = l.qp;
        CHECK(count_op(p, RF_QP_ANTIJOIN) == 4);
        /* sink(x) <- node(x), !edge(x, _): the wildcard is no key, and the
        ** anti-join reads edge's first column without a projection of it */
        rf_qp_cmd *u = writer(p, rel(p, "sink"));
        rf_qp_cmd *aj = u ? writer(p, u->in[0]) : NULL;
        CHECK(aj && aj->op == RF_QP_ANTIJOIN && aj->nkeys == 1 && aj->in[1] == rel(p, "edge") && aj->rkeys[0] == 0);
    }
    unload(&l);
}

/* Functional dependencies: loc loses its dedupe (lo's key (k, p) and one
** customer per row), lo and every rule that breaks a step of the argument
** keep theirs; test_semantics runs them on many inputs. */
static void test_fds(void)
{
    loaded l;
    if (load(&l, "fds.logic", 1) == 0) {
        const rf_qp_program *p = l.qp;
        const rf_qp_rel *lo = rel(p, "lo");
        CHECK(lo && lo->keyset == 0x5 && lo->nfds == 1 && lo->fds[0].lhs == 0x1 && lo->fds[0].rhs == 0x2);
        CHECK(rel(p, "lo2") && rel(p, "lo2")->nfds == 0);
        CHECK(rel(p, "reach") && rel(p, "reach")->nfds == 0 && rel(p, "reach")->keyset == 0);
        static const char *deduped[] = {"lo", "lob", "np", "lo2c", "pn", "rn"};
        for (size_t i = 0; i < sizeof deduped / sizeof *deduped; i++) {
            const rf_qp_cmd *w = rel(p, deduped[i]) ? writer(p, rel(p, deduped[i])) : NULL;
            CHECK(w && w->op == RF_QP_UNIQUE);
            if (!w || w->op != RF_QP_UNIQUE) fprintf(stderr, "  %s lost its dedupe\n", deduped[i]);
        }
        const rf_qp_cmd *w = rel(p, "loc") ? writer(p, rel(p, "loc")) : NULL;
        CHECK(w && w->op == RF_QP_MAPJOIN);
    }
    unload(&l);
}

static void test_facts_and_dead(void)
{
    loaded l;
    if (load(&l, "facts.logic", 0) == 0) {
        rf_qp_program *p = l.qp;
        CHECK(rel(p, "unused") != NULL);
        /* the duplicate fact is stored once */
        rf_qp_cmd *k = writer(p, rel(p, "k"));
        CHECK(k && k->op == RF_QP_FACTS && k->nrows == 2);
        CHECK(rf_qp_optimize(p, &l.d) == RF_OK);
        CHECK(rel(p, "unused") == NULL);
        /* the anti-join with the empty predicate is gone */
        CHECK(count_op(p, RF_QP_ANTIJOIN) == 0);
    }
    unload(&l);
}

/* The writer of the relation an aggregate named `pred` reads, after the
** passes (NULL when the aggregate reads a predicate or input directly). */
static const rf_qp_cmd *agg_input_writer(const rf_qp_program *p, const char *pred)
{
    const rf_qp_cmd *a = rel(p, pred) ? writer(p, rel(p, pred)) : NULL;
    if (!a || a->op != RF_QP_AGGREGATE) return NULL;
    /* through a partial aggregate (pass partagg) to what it reads */
    const rf_qp_cmd *pa = a->in[0]->kind == RF_QP_REL_TEMP ? writer(p, a->in[0]) : NULL;
    if (pa && pa->op == RF_QP_AGGREGATE && pa->partial) a = pa;
    return a->in[0]->kind == RF_QP_REL_TEMP ? writer(p, a->in[0]) : a;
}

/* Aggregates range over every column of their atoms, wildcards included,
** at no dedupe where the rows are already distinct; atoms of wildcards and
** constants only are existence tests (test_semantics checks the results). */
static void test_wildcards(void)
{
    loaded l;
    if (load(&l, "wildcards.logic", 0) == 0) {
        rf_qp_program *p = l.qp;
        /* before the passes: the wildcard columns reach the dedupe */
        const rf_qp_cmd *u = writer(p, rel(p, "line_count"));
        const rf_qp_cmd *a = u && u->op == RF_QP_UNIQUE ? writer(p, u->in[0]) : NULL;
        CHECK(a && a->op == RF_QP_AGGREGATE && a->in[0]->ncols == 3 && writer(p, a->in[0])->op == RF_QP_UNIQUE);
        CHECK(rf_qp_optimize(p, &l.d) == RF_OK);
        /* keyed input, set predicate with a constant or a repeated variable, a
        ** join of sets that keeps every column: no dedupe */
        static const char *direct[] = {"line_count", "qty_total", "per_order", "from_one", "loops", "paired"};
        for (size_t i = 0; i < sizeof direct / sizeof *direct; i++) {
            const rf_qp_cmd *w = agg_input_writer(p, direct[i]);
            CHECK(w && w->op != RF_QP_UNIQUE);
            if (!w || w->op == RF_QP_UNIQUE) fprintf(stderr, "  %s dedupes before its aggregate\n", direct[i]);
        }
        /* the dropped dedupes' columns are gone: count() over path(1, _) reads none */
        const rf_qp_cmd *w = agg_input_writer(p, "from_one");
        CHECK(w && w->dst->ncols == 0);
        /* an unkeyed input may repeat a row: its dedupe stays */
        w = agg_input_writer(p, "edge_count");
        CHECK(w && w->op == RF_QP_UNIQUE);
        /* existence tests: deduped to no column, crossed in; no cross product
        ** with mark's rows */
        int64_t exists = 0;
        for (int32_t b = 0; b < p->nblocks; b++)
            for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
                const rf_qp_cmd *c = p->blocks[b]->cmds[i];
                if (c->op == RF_QP_UNIQUE && c->dst->ncols == 0) exists++;
                if (c->op == RF_QP_MAPJOIN && c->nkeys == 0) CHECK(c->in[0]->ncols == 0 || c->in[1]->ncols == 0);
            }
        CHECK(exists == 4);
    }
    unload(&l);
}

static void test_api(void)
{
    current = "api";
    rf_qp_free(NULL);
    loaded l;
    if (load(&l, "evenodd.logic", 0) == 0) {
        int64_t before = l.d.nerrors;
        CHECK(rf_qp_run_pass(l.qp, "no-such-pass", &l.d) == RF_EUSAGE);
        CHECK(l.d.nerrors == before + 1);
        int32_t n;
        const rf_qp_pass *ps = rf_qp_passes(&n);
        CHECK(n == 11 && strcmp(ps[0].name, "fold") == 0 && strcmp(ps[n - 1].name, "dead") == 0);
        for (int32_t k = 0; k < n; k++) CHECK(ps[k].run && ps[k].what && *ps[k].what);
    }
    unload(&l);
}

/* Whether block b is a loop (it branches back to itself). */
static int loop_block(const rf_qp_block *bl)
{
    return bl->term.kind == RF_QP_T_BRANCH && (bl->term.target == bl->id || bl->term.else_target == bl->id);
}

/* Commands of loop block bl writing a temporary from relations bl never writes. */
static int32_t invariant_cmds(const rf_qp_block *bl)
{
    int32_t n = 0;
    for (int32_t i = 0; i < bl->ncmds; i++) {
        const rf_qp_cmd *c = bl->cmds[i];
        int inv = c->dst->kind == RF_QP_REL_TEMP;
        for (int32_t j = 0; j < c->nin && inv; j++)
            for (int32_t k = 0; k < bl->ncmds && inv; k++) inv = bl->cmds[k]->dst != c->in[j];
        n += inv;
    }
    return n;
}

/* The block of the map filtering g (hoist.logic's `g(y, c), c < 2`), or -1. */
static int32_t g_filter_block(const rf_qp_program *p)
{
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
            const rf_qp_cmd *c = p->blocks[b]->cmds[i];
            if (c->op == RF_QP_MAPFILTER && c->filter && strcmp(c->in[0]->name, "g") == 0) return b;
        }
    return -1;
}

static void test_hoist(void)
{
    loaded l;
    if (load(&l, "hoist.logic", 0) == 0) {
        rf_qp_program *p = l.qp;
        CHECK(rf_qp_optimize(p, &l.d) == RF_OK);
        /* every loop is left with nothing invariant; each gets a block before
        ** it that only it follows; the filter of g runs there */
        int32_t loops = 0;
        for (int32_t b = 0; b < p->nblocks; b++) {
            const rf_qp_block *bl = p->blocks[b];
            if (!loop_block(bl)) continue;
            loops++;
            CHECK(invariant_cmds(bl) == 0);
            const rf_qp_block *pre = b > 0 ? p->blocks[b - 1] : NULL;
            CHECK(pre && !loop_block(pre) && pre->term.kind == RF_QP_T_GOTO && pre->term.target == b &&
                  pre->ncmds > 0);
            /* nothing else enters the loop */
            for (int32_t o = 0; o < p->nblocks; o++) {
                const rf_qp_term *t = &p->blocks[o]->term;
                if (o == b || o == b - 1 || t->kind == RF_QP_T_HALT) continue;
                CHECK(t->target != b && (t->kind != RF_QP_T_BRANCH || t->else_target != b));
            }
        }
        CHECK(loops == 3);
        int32_t gb = g_filter_block(p);
        CHECK(gb >= 0 && gb + 1 < p->nblocks && !loop_block(p->blocks[gb]) && loop_block(p->blocks[gb + 1]));
    }
    unload(&l);
    /* off: the filter stays in the loop, recomputed every round */
    if (load(&l, "hoist.logic", 0) == 0) {
        l.qp->no_hoist = 1;
        CHECK(rf_qp_optimize(l.qp, &l.d) == RF_OK);
        int32_t gb = g_filter_block(l.qp);
        CHECK(gb >= 0 && loop_block(l.qp->blocks[gb]) && invariant_cmds(l.qp->blocks[gb]) > 0);
    }
    unload(&l);
}

/* Joins of p that are cross products with a filter (the product of two
** non-empty sides of columns, not an existence test). */
static int32_t filtered_crosses(const rf_qp_program *p)
{
    int32_t n = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
            const rf_qp_cmd *c = p->blocks[b]->cmds[i];
            n += c->op == RF_QP_MAPJOIN && c->nkeys == 0 && c->filter && c->in[0]->ncols && c->in[1]->ncols;
        }
    return n;
}

/* Joins of p that are cross products of two inputs with columns. */
static int32_t crosses(const rf_qp_program *p)
{
    int32_t n = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
            const rf_qp_cmd *c = p->blocks[b]->cmds[i];
            n += c->op == RF_QP_MAPJOIN && c->nkeys == 0 && c->in[0]->ncols && c->in[1]->ncols;
        }
    return n;
}

/* Every join of keyjoin.logic and keyjoin_err.logic on a computed value is an
** equi-join; without the pass each is a filtered cross product. A key that
** may fail is computed behind a join with the other side's keys (or its
** existence test): the computing join reads a relation of the other side's
** key columns only. */
static void test_keyjoin(void)
{
    static const char *progs[] = {"keyjoin.logic", "keyjoin_err.logic"};
    for (int k = 0; k < 2; k++) {
        current = progs[k];
        loaded l;
        if (load(&l, progs[k], 0) == 0) {
            CHECK(filtered_crosses(l.qp) > 0);
            CHECK(rf_qp_optimize(l.qp, &l.d) == RF_OK);
            CHECK(filtered_crosses(l.qp) == 0);
            /* no cross product at all: joinorder starts from a connected input */
            CHECK(crosses(l.qp) == 0);
            int32_t guarded = 0;
            for (int32_t b = 0; b < l.qp->nblocks; b++)
                for (int32_t i = 0; i < l.qp->blocks[b]->ncmds; i++) {
                    const rf_qp_cmd *c = l.qp->blocks[b]->cmds[i];
                    if (c->op != RF_QP_MAPJOIN || c->nouts != c->in[0]->ncols + 1) continue;
                    /* the keys' own relation: unique of a map to the key columns */
                    guarded += c->in[1]->ncols == c->nkeys && c->outs[c->nouts - 1]->kind == RF_QP_E_BINOP &&
                               c->outs[c->nouts - 1]->type == RF_TYPE_INT;
                }
            CHECK(guarded >= (k ? 3 : 5));
        }
        unload(&l);
        if (load(&l, progs[k], 0) == 0) {
            l.qp->no_keyjoin = 1;
            CHECK(rf_qp_optimize(l.qp, &l.d) == RF_OK);
            CHECK(filtered_crosses(l.qp) > 0);
        }
        unload(&l);
    }
}

/* keychain.logic: each chain of computed keys is one join per key (only
** part's q > w, after its chain, still filters a cross product); the sides
** of keys that may fail are computed behind the existence tests of the
** atoms not yet joined (crossed with a relation of no column). Without
** keyjoin every rule crosses its atoms under one filter (fl, whose keys
** cannot fail, under two: joinorder places them). early: a key that cannot
** fail connects fs to gk for joinorder, so they join first. */
static void test_keychain(void)
{
    current = "keychain.logic";
    loaded l;
    if (load(&l, "keychain.logic", 0) == 0) {
        CHECK(rf_qp_optimize(l.qp, &l.d) == RF_OK);
        CHECK(filtered_crosses(l.qp) == 1);
        int32_t guards = 0;
        for (int32_t b = 0; b < l.qp->nblocks; b++)
            for (int32_t i = 0; i < l.qp->blocks[b]->ncmds; i++) {
                const rf_qp_cmd *c = l.qp->blocks[b]->cmds[i];
                guards += c->op == RF_QP_MAPJOIN && c->nkeys == 0 && !c->filter && c->in[1]->ncols == 0;
            }
        CHECK(guards >= 10);
        /* early: hk joins the result of fs with gk, not gk itself */
        current = "keychain.logic: early";
        int32_t hkjoins = 0;
        for (int32_t b = 0; b < l.qp->nblocks; b++)
            for (int32_t i = 0; i < l.qp->blocks[b]->ncmds; i++) {
                const rf_qp_cmd *c = l.qp->blocks[b]->cmds[i];
                if (c->op != RF_QP_MAPJOIN || (c->in[0] != rel(l.qp, "hk") && c->in[1] != rel(l.qp, "hk"))) continue;
                const rf_qp_rel *other = c->in[0] == rel(l.qp, "hk") ? c->in[1] : c->in[0];
                hkjoins++;
                CHECK(other != rel(l.qp, "gk") && writer(l.qp, other) && writer(l.qp, other)->op == RF_QP_MAPJOIN);
            }
        CHECK(hkjoins == 1);
        current = "keychain.logic";
    }
    unload(&l);
    if (load(&l, "keychain.logic", 0) == 0) {
        l.qp->no_keyjoin = 1;
        CHECK(rf_qp_optimize(l.qp, &l.d) == RF_OK);
        CHECK(filtered_crosses(l.qp) == 11);
    }
    unload(&l);
}

/* The note of the first command that has one and names rule `head`. */
static const char *rule_note(const rf_qp_program *p, const char *head)
{
    size_t n = strlen(head);
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t i = 0; i < p->blocks[b]->ncmds; i++) {
            const char *note = p->blocks[b]->cmds[i]->note;
            if (note && !strncmp(note, head, n) && note[n] == ',') return note;
        }
    return "";
}

/* Which rules of exists.logic the another-row rewrite takes (its note says
** so), which it leaves, and nothing without it. */
static void test_exists(void)
{
    static const char *taken[] = {"other", "alone", "waiting", "renamed", "has_items", "crossed"};
    static const char *left[] = {"pairs", "smaller", "count_other", "keyed_other"};
    for (int plain = 0; plain < 2; plain++) {
        loaded l;
        plain_lowering = plain;
        if (load(&l, "exists.logic", 0) == 0) {
            for (size_t i = 0; i < sizeof taken / sizeof *taken; i++) {
                current = taken[i];
                CHECK((strstr(rule_note(l.qp, taken[i]), "exists: ") != NULL) == !plain);
            }
            for (size_t i = 0; i < sizeof left / sizeof *left; i++) {
                current = left[i];
                CHECK(*rule_note(l.qp, left[i]) && !strstr(rule_note(l.qp, left[i]), "exists: "));
            }
            /* the negated conjunctions read no auxiliary predicate once rewritten */
            current = "exists.logic";
            CHECK((count_op(l.qp, RF_QP_AGGREGATE) > 1) == !plain);
        }
        unload(&l);
        plain_lowering = 0;
    }
}

/* The outputs of a plan on random inputs, as text ("ERROR" on a run-time error). */
static void run_outputs(const rf_qp_program *p, uint64_t seed, rf_buf *out)
{
    qpi *q = qpi_new(p);
    if (!q) return;
    qpi_random_inputs(q, seed, 12);
    if (qpi_run(q, 100000)) {
        rf_buf_printf(out, "ERROR %s\n", qpi_error(q));
    } else {
        for (int32_t i = 0; i < p->fe->npreds; i++) {
            const rf_fe_pred *pr = p->fe->preds[i];
            if (!pr->output_name) continue;
            rf_buf_printf(out, "%s:\n", pr->output_name);
            if (qpi_output(q, pr->output_name, out)) rf_buf_puts(out, "(missing)\n");
        }
    }
    qpi_free(q);
}

/* The optimized plan, and the plan after each pass alone, compute what the
** unoptimized plan computes (lowered plainly: without the another-row
** rewrite, which the others have). Returns the unoptimized outputs for seed 1. */
static void test_semantics(const char *name, const char *expect, uint64_t nseeds)
{
    for (uint64_t seed = 1; seed <= nseeds; seed++) {
        loaded base;
        rf_buf want;
        rf_buf_init(&want);
        plain_lowering = 1;
        if (load(&base, name, 0) == 0) run_outputs(base.qp, seed, &want);
        plain_lowering = 0;
        if (seed == 1 && expect) {
            CHECK(strcmp(rf_buf_cstr(&want), expect) == 0);
            if (strcmp(rf_buf_cstr(&want), expect) != 0) fprintf(stderr, "got:\n%s", rf_buf_cstr(&want));
        }
        int32_t n;
        const rf_qp_pass *ps = rf_qp_passes(&n);
        for (int32_t k = -1; k < n; k++) {
            loaded l;
            if (load(&l, name, 0) == 0) {
                rf_status st = k < 0 ? rf_qp_optimize(l.qp, &l.d) : rf_qp_run_pass(l.qp, ps[k].name, &l.d);
                CHECK(st == RF_OK);
                rf_buf got;
                rf_buf_init(&got);
                run_outputs(l.qp, seed, &got);
                int same = got.len == want.len && memcmp(rf_buf_cstr(&got), rf_buf_cstr(&want), (size_t)got.len) == 0;
                CHECK(same);
                if (!same)
                    fprintf(stderr, "%s seed %llu after %s:\n--- want\n%s--- got\n%s", name, (unsigned long long)seed,
                            k < 0 ? "all passes" : ps[k].name, rf_buf_cstr(&want), rf_buf_cstr(&got));
                rf_buf_free(&got);
            }
            unload(&l);
        }
        rf_buf_free(&want);
        unload(&base);
    }
}

static int dump(const char *path, int opt, const char *pass)
{
    loaded l;
    char *slash = strrchr(path, '/');
    dir = ".";
    if (slash) {
        *slash = 0;
        dir = path;
        path = slash + 1;
    }
    if (load(&l, path, opt) == 0) {
        rf_buf b;
        rf_buf_init(&b);
        if (pass && rf_qp_run_pass(l.qp, pass, &l.d)) rf_diags_print(&l.d, stderr);
        rf_qp_print_text(l.qp, &b);
        fwrite(b.data, 1, (size_t)b.len, stdout);
        rf_buf_free(&b);
    }
    unload(&l);
    return failures ? 1 : 0;
}

/* test_qp --run FILE: the outputs of the optimized plan on seed 1. */
static int run_file(const char *path)
{
    loaded l;
    char *slash = strrchr(path, '/');
    if (slash) {
        *slash = 0;
        dir = path;
        path = slash + 1;
    }
    if (load(&l, path, 1) == 0) {
        rf_buf b;
        rf_buf_init(&b);
        run_outputs(l.qp, 1, &b);
        fwrite(b.data, 1, (size_t)b.len, stdout);
        rf_buf_free(&b);
    }
    unload(&l);
    return failures ? 1 : 0;
}

/* The passes select, joinorder, cse, project, lftj and unique find a
** temporary's readers and writer through indexes kept as they edit
** (qp_index.c, project's reader lists, cse's hash of the commands), not by
** scanning the program per join or per temporary: the commands that the
** scans of qp_ir.c's helpers visit during each pass grow linearly with a
** block's rules. disj8.logic has 4 times the rules of disj6.logic (256 and
** 64, one block), chain256.logic 4 times those of chain64.logic: a pass
** that scans per join (as joinorder, lftj and cse did: a clause of 4,096
** disjuncts took minutes) or per dedupe (unique) visits 16 times as many
** or more. Counted, not timed. */
static void test_linear_passes(void)
{
    static const char *watched[] = {"select", "joinorder", "cse", "project", "lftj", "unique"};
    enum { NW = sizeof watched / sizeof *watched };
    static const char *family[2][2] = {{"disj6.logic", "disj8.logic"}, {"chain64.logic", "chain256.logic"}};
    for (int f = 0; f < 2; f++) {
        int64_t steps[2][NW];
        const char **names = family[f];
        for (int s = 0; s < 2; s++) {
            for (int k = 0; k < NW; k++) steps[s][k] = -1;
            loaded l;
            if (load(&l, names[s], 0) == 0) {
                int32_t np;
                const rf_qp_pass *ps = rf_qp_passes(&np);
                for (int32_t i = 0; i < np; i++) {
                    int64_t before = qp_scan_steps();
                    rf_status st = rf_qp_run_pass(l.qp, ps[i].name, &l.d);
                    CHECK(st == RF_OK);
                    if (st) break;
                    for (int k = 0; k < NW; k++)
                        if (strcmp(ps[i].name, watched[k]) == 0) steps[s][k] = qp_scan_steps() - before;
                }
            }
            unload(&l);
        }
        for (int k = 0; k < NW; k++) {
            current = watched[k];
            if (steps[1][k] > 6 * steps[0][k] + 100)
                fprintf(stderr, "pass %s: %lld commands scanned for %s, %lld for %s\n", watched[k],
                        (long long)steps[0][k], names[0], (long long)steps[1][k], names[1]);
            CHECK(steps[0][k] >= 0 && steps[1][k] >= 0 && steps[1][k] <= 6 * steps[0][k] + 100);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--run") == 0) return run_file(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "--check") == 0) {
        /* the semantic checks on one more program (used by fuzzing scripts) */
        char *slash = strrchr(argv[2], '/');
        if (slash) *slash = 0;
        dir = slash ? argv[2] : ".";
        test_all(slash ? slash + 1 : argv[2]);
        test_semantics(slash ? slash + 1 : argv[2], NULL, 4);
        printf("test_qp: %d checks, %d failures\n", checks, failures);
        return failures ? 1 : 0;
    }
    if (argc >= 3 && strcmp(argv[1], "--dump") == 0)
        return dump(argv[2], !(argc > 3 && strcmp(argv[3], "--no-opt") == 0),
                    argc > 4 && strcmp(argv[3], "--no-opt") == 0 ? argv[4] : NULL);
    if (argc > 1) dir = argv[1];
    static const char *programs[] = {"evenodd.logic", "tc.logic",        "mutual.logic",    "negation.logic",
                                     "aggregate.logic", "functional.logic", "fold.logic", "fold_runtime.logic", "pushdown.logic",
                                     "joinorder.logic", "facts.logic", "edge.logic", "fds.logic",
                                     "wildcards.logic", "lattice.logic", "lftj.logic", "exists.logic",
                                     "hoist.logic", "keyjoin.logic", "keyjoin_err.logic", "keychain.logic",
                                     "disj6.logic"};
    for (size_t i = 0; i < sizeof programs / sizeof *programs; i++) test_all(programs[i]);
    test_evenodd();
    test_tc();
    test_mutual();
    test_fold();
    test_pushdown();
    test_joinorder();
    test_aggregate();
    test_functional();
    test_negation();
    test_lftj();
    test_fds();
    test_facts_and_dead();
    test_wildcards();
    test_exists();
    test_hoist();
    test_keyjoin();
    test_keychain();
    test_linear_passes();
    test_api();
    /* fds.logic on many inputs: a wrongly dropped dedupe shows only on some */
    for (size_t i = 0; i < sizeof programs / sizeof *programs; i++)
        test_semantics(programs[i], strcmp(programs[i], "evenodd.logic") == 0
                                        ? "even:\n0\n2\n4\nodd:\n1\n3\n5\n" : NULL,
                       strcmp(programs[i], "fds.logic") == 0 || strcmp(programs[i], "wildcards.logic") == 0 ||
                               strcmp(programs[i], "exists.logic") == 0 || strcmp(programs[i], "hoist.logic") == 0 ||
                               strncmp(programs[i], "keyjoin", 7) == 0 || strcmp(programs[i], "keychain.logic") == 0
                           ? 64
                           : 4);
    printf("test_qp: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
