/*
** frontend/stratify.c: strata from strongly connected components.
**
** Owns: the predicate dependence graph (head depends on body predicates;
** an edge is negative for !p and aggregate for every body predicate of an
** aggregation rule), Tarjan's algorithm (iterative, so deep programs cannot
** overflow the stack), the evaluation order of the strata, and the error
** for negation or aggregation through recursion, naming the cycle.
**
** A negated conjunction !(a(x), y < z) is an auxiliary predicate A whose
** rules may repeat literals of the rule around it (its context: they bind
** z for the comparison). The negation depends only on what the conjunction
** itself names: A's context edges order A (it is evaluated in the stratum of
** what they read, before the rules that negate it: queryplan/qp_build.c),
** and the edge p -> !A is a negation through recursion only when one of A's
** own edges (not a context edge) stays in p's component.
**
** A cycle through a min or max aggregate is handed to monotone.c instead.
*/
#include "check_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct edge {
    int32_t to;
    int kind;    /* 0 positive, 1 negation, 2 aggregation, 3 negation of a conjunction (target aux 2) */
    int context; /* an aux-2 predicate's edge to a literal repeated from the rule that negates it */
    rf_loc loc;
    const rf_fe_rule *rule;
} edge;

typedef struct graph {
    int32_t n;
    int64_t *start; /* CSR: edges of node v are e[start[v] .. start[v+1]) */
    edge *e;
} graph;

static int same_loc(rf_loc a, rf_loc b)
{
    return a.line == b.line && a.col == b.col && (a.file == b.file || (a.file && b.file && !strcmp(a.file, b.file)));
}

/* The rules that negate each aux-2 predicate (CSR by predicate id). */
typedef struct negators {
    int64_t *start;
    const rf_fe_rule **rules;
} negators;

static int negators_build(rf_checker *c, negators *ng)
{
    int32_t n = (int32_t)c->preds.count;
    int64_t m = 0;
    ng->start = rf_calloc((size_t)n + 2, sizeof *ng->start);
    if (!ng->start) return -1;
    for (int pass = 0; pass < 2; pass++) {
        int64_t *fill = NULL;
        if (pass) {
            for (int32_t v = 0; v < n; v++) ng->start[v + 1] += ng->start[v];
            m = ng->start[n];
            ng->rules = rf_malloc((size_t)(m + 1) * sizeof *ng->rules);
            fill = rf_malloc((size_t)(n + 1) * sizeof *fill);
            if (!ng->rules || !fill) {
                free(fill);
                return -1;
            }
            memcpy(fill, ng->start, (size_t)n * sizeof *fill);
        }
        for (int64_t i = 0; i < c->rules.count; i++) {
            const rf_fe_rule *r = c->rules.items[i];
            for (int32_t j = 0; j < r->nbody; j++) {
                const rf_fe_lit *l = r->body[j];
                if (l->kind != RF_FE_ATOM || !l->negated || l->pred->aux != 2) continue;
                if (pass)
                    ng->rules[fill[l->pred->id]++] = r;
                else
                    ng->start[l->pred->id + 1]++;
            }
        }
        free(fill);
    }
    return 0;
}

/* Is l, a positive atom of a rule of aux (a negated conjunction's
** predicate), one the desugaring repeated from a rule that negates aux (the
** same predicate at the same place)? The conjunction's own atoms are written
** inside its parentheses, so never at the place of a literal outside them. */
static int is_context(const negators *ng, const rf_fe_pred *aux, const rf_fe_lit *l)
{
    for (int64_t i = ng->start[aux->id]; i < ng->start[aux->id + 1]; i++) {
        const rf_fe_rule *r = ng->rules[i];
        for (int32_t j = 0; j < r->nbody; j++) {
            const rf_fe_lit *o = r->body[j];
            if (o->kind == RF_FE_ATOM && !o->negated && o->pred == l->pred && same_loc(o->loc, l->loc)) return 1;
        }
    }
    return 0;
}

static int build(rf_checker *c, graph *g)
{
    int32_t n = (int32_t)c->preds.count;
    g->n = n;
    g->start = rf_calloc((size_t)n + 2, sizeof *g->start);
    int64_t m = 0;
    if (!g->start) return -1;
    for (int64_t i = 0; i < c->rules.count; i++) {
        rf_fe_rule *r = c->rules.items[i];
        for (int32_t j = 0; j < r->nbody; j++)
            if (r->body[j]->kind == RF_FE_ATOM) {
                g->start[r->head->id + 1]++;
                m++;
            }
    }
    for (int32_t v = 0; v < n; v++) g->start[v + 1] += g->start[v];
    g->e = rf_malloc((size_t)(m + 1) * sizeof *g->e);
    int64_t *fill = rf_malloc((size_t)(n + 1) * sizeof *fill);
    if (!g->e || !fill) {
        free(fill);
        return -1;
    }
    memcpy(fill, g->start, (size_t)n * sizeof *fill);
    negators ng = {NULL, NULL};
    if (negators_build(c, &ng)) {
        free(ng.start);
        free(ng.rules);
        free(fill);
        return -1;
    }
    for (int64_t i = 0; i < c->rules.count; i++) {
        rf_fe_rule *r = c->rules.items[i];
        for (int32_t j = 0; j < r->nbody; j++) {
            rf_fe_lit *l = r->body[j];
            if (l->kind != RF_FE_ATOM) continue;
            edge *e = &g->e[fill[r->head->id]++];
            e->to = l->pred->id;
            e->kind = !l->negated ? (r->naggs ? 2 : 0) : l->pred->aux == 2 ? 3 : 1;
            e->context = r->head->aux == 2 && !l->negated && is_context(&ng, r->head, l);
            e->loc = l->loc;
            e->rule = r;
        }
    }
    free(ng.start);
    free(ng.rules);
    free(fill);
    return 0;
}

/* A predicate as messages name it: the auxiliary predicate of a negated
** conjunction by the conjunction as written (it has a "!" of its own). */
static const char *shown(const rf_fe_pred *p) { return p->aux == 2 && p->shown ? p->shown : p->name; }

/* Does aux-2 predicate a have an edge of its own (not a context edge) that
** stays in its component? Then negating it goes through recursion. (A
** negated conjunction nested in it is checked on its own edge.) */
static int own_edge_in(const graph *g, const int32_t *comp, int32_t a)
{
    for (int64_t k = g->start[a]; k < g->start[a + 1]; k++)
        if (!g->e[k].context && g->e[k].kind != 3 && comp[g->e[k].to] == comp[a]) return 1;
    return 0;
}

/* The path from `from` to `to` inside one component, as text; a path out
** of a negated conjunction's predicate starts with one of its own edges. */
static void cycle_text(rf_checker *c, graph *g, const int32_t *comp, int32_t from, int32_t to, rf_buf *out)
{
    int32_t *prev = rf_malloc((size_t)g->n * sizeof *prev);
    int32_t *queue = rf_malloc((size_t)g->n * sizeof *queue);
    if (!prev || !queue) {
        free(prev);
        free(queue);
        return;
    }
    for (int32_t i = 0; i < g->n; i++) prev[i] = -2;
    int32_t qh = 0, qt = 0;
    queue[qt++] = from;
    prev[from] = -1;
    while (qh < qt && prev[to] == -2) {
        int32_t v = queue[qh++];
        for (int64_t k = g->start[v]; k < g->start[v + 1]; k++) {
            int32_t w = g->e[k].to;
            if (comp[w] != comp[from] || prev[w] != -2 || (v == from && g->e[k].context)) continue;
            prev[w] = v;
            queue[qt++] = w;
        }
    }
    /* walk back from `to`; the path is from -> ... -> to */
    int32_t path[64], np = 0;
    for (int32_t v = to; v >= 0 && np < 64; v = prev[v]) path[np++] = v;
    for (int32_t i = np - 1; i >= 0; i--) {
        rf_fe_pred *p = c->preds.items[path[i]];
        rf_buf_printf(out, "%s%s", shown(p), i ? " <- " : "");
    }
    free(prev);
    free(queue);
}

void rf_chk_stratify(rf_checker *c, rf_fe_program *prog)
{
    graph g = {0, NULL, NULL};
    int32_t n = (int32_t)c->preds.count;
    int32_t *index = rf_malloc((size_t)(n + 1) * sizeof *index);
    int32_t *low = rf_malloc((size_t)(n + 1) * sizeof *low);
    int32_t *comp = rf_malloc((size_t)(n + 1) * sizeof *comp);
    int32_t *stack = rf_malloc((size_t)(n + 1) * sizeof *stack);
    int32_t *cstack = rf_malloc((size_t)(n + 1) * sizeof *cstack);
    int64_t *citer = rf_malloc((size_t)(n + 1) * sizeof *citer);
    uint8_t *on = rf_calloc((size_t)n + 1, 1);
    int32_t *order = rf_malloc((size_t)(n + 1) * sizeof *order); /* preds by component */
    if (!index || !low || !comp || !stack || !cstack || !citer || !on || !order || build(c, &g)) {
        c->oom = 1;
        goto done;
    }
    for (int32_t i = 0; i < n; i++) index[i] = -1;
    int32_t next = 0, sp = 0, ncomp = 0, nord = 0;
    for (int32_t root = 0; root < n; root++) {
        if (index[root] >= 0) continue;
        int32_t csp = 0;
        cstack[csp] = root;
        citer[csp] = g.start[root];
        csp++;
        index[root] = low[root] = next++;
        stack[sp++] = root;
        on[root] = 1;
        while (csp > 0) {
            int32_t v = cstack[csp - 1];
            if (citer[csp - 1] < g.start[v + 1]) {
                int32_t w = g.e[citer[csp - 1]++].to;
                if (index[w] < 0) {
                    index[w] = low[w] = next++;
                    stack[sp++] = w;
                    on[w] = 1;
                    cstack[csp] = w;
                    citer[csp] = g.start[w];
                    csp++;
                } else if (on[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            csp--;
            if (csp > 0) {
                int32_t u = cstack[csp - 1];
                if (low[v] < low[u]) low[u] = low[v];
            }
            if (low[v] == index[v]) {
                int32_t w;
                do {
                    w = stack[--sp];
                    on[w] = 0;
                    comp[w] = ncomp;
                    order[nord++] = w;
                } while (w != v);
                ncomp++;
            }
        }
    }
    /* Tarjan completes a component after everything it depends on, so the
    ** components come out in evaluation order. */
    rf_fe_stratum *strata = rf_arena_alloc(c->a, (size_t)(ncomp + 1) * sizeof *strata);
    if (!strata) {
        c->oom = 1;
        goto done;
    }
    int32_t k = 0;
    for (int32_t s = 0; s < ncomp; s++) {
        int32_t b = k;
        while (k < nord && comp[order[k]] == s) k++;
        rf_fe_stratum *st = &strata[s];
        st->npreds = k - b;
        st->preds = rf_arena_alloc(c->a, (size_t)st->npreds * sizeof *st->preds);
        if (!st->preds) {
            c->oom = 1;
            goto done;
        }
        /* source order inside a stratum keeps the output deterministic */
        for (int32_t i = 0; i < st->npreds; i++) st->preds[i] = c->preds.items[order[b + i]];
        for (int32_t i = 1; i < st->npreds; i++)
            for (int32_t j = i; j > 0 && st->preds[j - 1]->id > st->preds[j]->id; j--) {
                rf_fe_pred *t = st->preds[j];
                st->preds[j] = st->preds[j - 1];
                st->preds[j - 1] = t;
            }
        int recursive = st->npreds > 1;
        for (int32_t i = 0; i < st->npreds && !recursive; i++) {
            int32_t v = st->preds[i]->id;
            for (int64_t e = g.start[v]; e < g.start[v + 1]; e++)
                if (g.e[e].to == v) recursive = 1;
        }
        st->recursive = recursive;
        for (int32_t i = 0; i < st->npreds; i++) {
            st->preds[i]->stratum = s;
            st->preds[i]->recursive = recursive;
        }
    }
    /* negation and aggregation must not go through a cycle, except a min
    ** or max (monotone.c) */
    uint8_t *lattice = rf_calloc((size_t)ncomp + 1, 1);
    if (!lattice) {
        c->oom = 1;
        goto done;
    }
    for (int32_t v = 0; v < n; v++)
        for (int64_t e = g.start[v]; e < g.start[v + 1]; e++) {
            edge *x = &g.e[e];
            if (!x->kind || comp[x->to] != comp[v]) continue;
            if (x->kind == 3 && !own_edge_in(&g, comp, x->to)) continue; /* only its context recurses */
            const char *why = x->kind == 2 ? rf_chk_lattice_rule_why(x->rule) : NULL;
            if (x->kind == 2 && !why) {
                lattice[comp[v]] |= 1;
                continue;
            }
            lattice[comp[v]] |= 2; /* reported: no lattice check */
            rf_buf b;
            rf_buf_init(&b);
            cycle_text(c, &g, comp, x->to, v, &b);
            rf_fe_pred *h = c->preds.items[v], *t = c->preds.items[x->to];
            int own = t->aux == 2 && t->shown; /* shown(t) says "!" itself */
            rf_error(c->d, x->loc,
                     "%s through recursion: `%s` depends on %s`%s`, which depends on `%s` (cycle: %s <- %s%s)%s%s",
                     x->kind != 2 ? "negation" : "aggregation", shown(h),
                     x->kind != 2 ? (own ? "" : "!") : "an aggregate over ", shown(t), shown(h), shown(h),
                     x->kind != 2 ? (own ? "" : "!") : "agg ", rf_buf_cstr(&b), why ? ": " : "", why ? why : "");
            rf_buf_free(&b);
        }
    prog->strata = strata;
    prog->nstrata = ncomp;
    for (int32_t s = 0; s < ncomp && !c->oom; s++)
        if (lattice[s] == 1) rf_chk_lattice(c, prog, s);
    free(lattice);
done:
    free(index);
    free(low);
    free(comp);
    free(stack);
    free(cstack);
    free(citer);
    free(on);
    free(order);
    free(g.start);
    free(g.e);
}
