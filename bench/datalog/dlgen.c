/*
** bench/datalog/dlgen.c: input generator and reference answers for the
** Datalog benchmark suite (bench/datalog/README.md).
**
** Owns: the graph shapes (uniform random, R-MAT power law, grid, layered
** tree, control-flow-like), the CSPA and CSDA input relations, the writing of
** the suite's .facts files, and an independent reference implementation of
** every benchmark's answer (count and checksum) for small inputs.
**
** usage: dlgen BENCH OUTDIR SEED [key=value ...] [--expect]
**
** BENCH is tc, sg, reach, cspa, csda, tri, clique4, hops, sssp or cc. The files are
** tab-separated "a<TAB>b" lines (what both redfox, through
** lang:input:delimiter, and Soufflé's default .facts reader take). With
** --expect it also writes OUTDIR/expected.txt: one "NAME COUNT CHECKSUM" line
** per output relation of the benchmark's program, computed here by plain
** fixpoint loops over bit matrices (so only for inputs of at most
** REF_MAX_NODES nodes). The checksum of a relation is the sum over its
** tuples of tuple_hash() below, which the .logic and .dl programs compute
** the same way; the sum does not depend on the order of the tuples.
**
** Everything comes from one xorshift64* stream seeded by SEED, so a command
** line gives the same files everywhere.
*/
#define _POSIX_C_SOURCE 200809L /* mkdir */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REF_MAX_NODES 6000
#define MASK31 UINT64_C(2147483647)

/* ---------------------------------------------------------------- random */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(2685821657736338717);
}

static int64_t rng_below(int64_t n) { return (int64_t)(rng_next() % (uint64_t)n); }

static double rng_unit(void) { return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0); }

/* A skewed pick in [0, n): u^alpha concentrates on small ids (few hubs). */
static int64_t rng_skewed(int64_t n, int alpha)
{
    double u = rng_unit(), p = u;
    for (int i = 1; i < alpha; i++) p *= u;
    int64_t v = (int64_t)(p * (double)n);
    return v >= n ? n - 1 : v;
}

/* ------------------------------------------------------------- checksums */

/* The hash of a tuple of non-negative ints below 2^31: fold the columns
** with a multiply and xor kept to 31 bits, then mix once. The programs write
** the same arithmetic (int:bitxor/int:bitand/int:shr in LogiQL, bxor/band/
** bshr in Soufflé); every intermediate stays below 2^62, so no engine
** overflows, and the sum over up to 2^32 tuples stays below 2^63. */
static uint64_t tuple_hash(const int64_t *cols, int n)
{
    uint64_t k = (uint64_t)cols[0];
    for (int i = 1; i < n; i++) k = ((k * 1000003u) ^ (uint64_t)cols[i]) & MASK31;
    uint64_t v = k * UINT64_C(1640531527);
    return (v ^ (v >> 31)) & MASK31;
}

/* ---------------------------------------------------------------- params */

typedef struct {
    const char *key;
    int64_t value;
    int used;
} param;

static param params[32];
static int nparams;

static int64_t param_get(const char *key, int64_t dflt)
{
    for (int i = 0; i < nparams; i++)
        if (!strcmp(params[i].key, key)) {
            params[i].used = 1;
            return params[i].value;
        }
    return dflt;
}

static const char *graph_kind = "uniform";

/* ------------------------------------------------------------- edge sets */

typedef struct {
    int64_t *a, *b;
    int64_t n, cap;
    uint64_t *slots; /* open addressing on (a << 32 | b) + 1; 0 is empty */
    uint64_t mask;
} edge_set;

static void die(const char *msg)
{
    fprintf(stderr, "dlgen: %s\n", msg);
    exit(1);
}

/* Every block is tracked and freed at exit (the generator is short-lived, but
** stays clean under LeakSanitizer). */
static void **blocks;
static size_t nblocks, capblocks;

static void free_blocks(void)
{
    for (size_t i = 0; i < nblocks; i++) free(blocks[i]);
    free(blocks);
    blocks = NULL;
    nblocks = capblocks = 0;
}

static void track(void *p)
{
    if (nblocks == capblocks) {
        capblocks = capblocks ? capblocks * 2 : 64;
        void **nb = realloc(blocks, capblocks * sizeof *nb);
        if (!nb) die("out of memory");
        blocks = nb;
    }
    blocks[nblocks++] = p;
}

static size_t find_block(const void *p)
{
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i] == p) return i;
    die("internal error: untracked block");
    return 0;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) die("out of memory");
    track(p);
    return p;
}

static void *xrealloc(void *old, size_t size)
{
    if (!old) {
        void *p = malloc(size);
        if (!p) die("out of memory");
        track(p);
        return p;
    }
    size_t i = find_block(old);
    void *p = realloc(old, size);
    if (!p) die("out of memory");
    blocks[i] = p;
    return p;
}

static void xfree(void *p)
{
    if (!p) return;
    size_t i = find_block(p);
    blocks[i] = blocks[--nblocks];
    free(p);
}

/* splitmix64's finalizer: every key bit reaches the low bits the mask keeps */
static uint64_t es_hash(uint64_t key)
{
    key ^= key >> 30;
    key *= UINT64_C(0xBF58476D1CE4E5B9);
    key ^= key >> 27;
    key *= UINT64_C(0x94D049BB133111EB);
    return key ^ (key >> 31);
}

static void es_init(edge_set *s, int64_t expect)
{
    memset(s, 0, sizeof *s);
    uint64_t cap = 1024;
    while (cap < (uint64_t)expect * 2 + 16) cap <<= 1;
    s->slots = xcalloc(cap, sizeof *s->slots);
    s->mask = cap - 1;
}

static void es_grow_slots(edge_set *s)
{
    uint64_t cap = (s->mask + 1) * 2;
    uint64_t *old = s->slots;
    uint64_t oldcap = s->mask + 1;
    s->slots = xcalloc(cap, sizeof *s->slots);
    s->mask = cap - 1;
    for (uint64_t i = 0; i < oldcap; i++) {
        if (!old[i]) continue;
        uint64_t h = es_hash(old[i]);
        while (s->slots[h & s->mask]) h++;
        s->slots[h & s->mask] = old[i];
    }
    xfree(old);
}

/* Adds the edge a -> b unless it is there already; returns whether added. */
static int es_add(edge_set *s, int64_t a, int64_t b)
{
    if ((uint64_t)(s->n + 1) * 2 > s->mask + 1) es_grow_slots(s);
    uint64_t key = ((uint64_t)a << 32 | (uint64_t)b) + 1;
    uint64_t h = es_hash(key);
    for (;; h++) {
        uint64_t *slot = &s->slots[h & s->mask];
        if (!*slot) {
            *slot = key;
            break;
        }
        if (*slot == key) return 0;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->a = xrealloc(s->a, (size_t)s->cap * sizeof *s->a);
        s->b = xrealloc(s->b, (size_t)s->cap * sizeof *s->b);
    }
    s->a[s->n] = a;
    s->b[s->n] = b;
    s->n++;
    return 1;
}

/* ---------------------------------------------------------- graph shapes */

/* Adds an edge (and its reverse when sym) unless it is a self loop. */
static int add_edge(edge_set *s, int64_t a, int64_t b, int sym)
{
    if (a == b) return 0;
    if (sym) {
        if (a > b) {
            int64_t t = a;
            a = b;
            b = t;
        }
        if (!es_add(s, a, b)) return 0;
        es_add(s, b, a);
        return 1;
    }
    return es_add(s, a, b);
}

static void need_edges(int64_t n, int64_t m, int sym)
{
    if (n < 2 || n >= (INT64_C(1) << 31)) die("n must be from 2 to 2^31-1");
    if (m < 1 || (double)m > 0.5 * (double)n * (double)(n - 1) / (sym ? 2.0 : 1.0))
        die("m must be at least 1 and at most half of the possible edges");
}

/* m distinct edges (undirected ones when sym) drawn uniformly over n nodes. */
static void gen_uniform(edge_set *s, int64_t n, int64_t m, int sym)
{
    need_edges(n, m, sym);
    for (int64_t made = 0; made < m;) made += add_edge(s, rng_below(n), rng_below(n), sym);
}

/* R-MAT (Chakrabarti et al.): each edge picks a quadrant of the adjacency
** matrix per bit with probabilities 0.57, 0.19, 0.19, 0.05, which gives the
** power-law degrees of social and web graphs; node ids are then shuffled so
** that the hubs are not the small ids. */
static void gen_rmat(edge_set *s, int64_t n, int64_t m, int sym)
{
    need_edges(n, m, sym);
    int scale = 1;
    while ((INT64_C(1) << scale) < n) scale++;
    int64_t *perm = xcalloc((size_t)n, sizeof *perm);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = rng_below(i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    int64_t tries = 0;
    for (int64_t made = 0; made < m;) {
        if (++tries > 100 * m + 1000) die("rmat: too many duplicate edges; lower m");
        int64_t a = 0, b = 0;
        for (int bit = 0; bit < scale; bit++) {
            double u = rng_unit();
            int qa = u >= 0.57 + 0.19, qb = (u >= 0.57 && u < 0.76) || u >= 0.95;
            a = a << 1 | qa;
            b = b << 1 | qb;
        }
        if (a >= n || b >= n) continue;
        made += add_edge(s, perm[a], perm[b], sym);
    }
    xfree(perm);
}

/* A road-like grid: w columns, n / w rows, edges between 4-neighbours in
** both directions, each street kept with probability keep percent. */
static void gen_grid(edge_set *s, int64_t n, int64_t w, int64_t keep)
{
    if (w < 1 || n < w) die("grid: need 1 <= w <= n");
    int64_t h = n / w;
    for (int64_t r = 0; r < h; r++)
        for (int64_t c = 0; c < w; c++) {
            int64_t v = r * w + c;
            if (c + 1 < w && rng_below(100) < keep) add_edge(s, v, v + 1, 1);
            if (r + 1 < h && rng_below(100) < keep) add_edge(s, v, v + w, 1);
        }
}

/* A layered tree for same generation: node 0 is the root, the other nodes
** fill layers of w nodes, and each node's parent is a random node of the
** layer above (edges parent -> child); extra adds that many more random
** edges between consecutive layers (a DAG then). */
static void gen_layered(edge_set *s, int64_t n, int64_t w, int64_t extra)
{
    if (w < 1 || n < 2) die("layered: need w >= 1 and n >= 2");
    for (int64_t i = 1; i < n; i++) {
        int64_t layer = (i - 1) / w; /* 0-based layer below the root */
        int64_t parent = layer == 0 ? 0 : 1 + (layer - 1) * w + rng_below(w);
        add_edge(s, parent, i, 0);
    }
    int64_t layers = (n - 2) / w + 1;
    for (int64_t k = 0; k < extra && layers > 1; k++) {
        int64_t layer = 1 + rng_below(layers - 1);
        int64_t child = 1 + layer * w + rng_below(w), parent = 1 + (layer - 1) * w + rng_below(w);
        if (child < n) add_edge(s, parent, child, 0);
    }
}

/* A control-flow-like graph for CSDA: statements in sequence (i -> i + 1),
** procedures of about 100 statements whose last one returns to a random
** place, forward branches and short loops within a procedure-sized window,
** and calls to anywhere (far per mille of the statements). */
static void gen_cfg(edge_set *s, int64_t n, int64_t far)
{
    if (n < 2) die("cfg: need n >= 2");
    for (int64_t i = 0; i < n; i++) {
        if (rng_below(100) == 0 || i + 1 == n)
            add_edge(s, i, rng_below(n), 0); /* return */
        else
            add_edge(s, i, i + 1, 0);
        if (rng_below(100) < 20) {
            int64_t j = i + 2 + rng_below(64);
            if (j < n) add_edge(s, i, j, 0);
        }
        if (rng_below(100) < 5 && i > 0) add_edge(s, i, i - 1 - rng_below(i < 64 ? i : 64), 0);
        if (rng_below(1000) < far) add_edge(s, i, rng_below(n), 0);
    }
}

static void gen_graph(edge_set *s, int sym)
{
    int64_t n = param_get("n", 1000);
    if (!strcmp(graph_kind, "uniform"))
        gen_uniform(s, n, param_get("m", 4 * n), sym);
    else if (!strcmp(graph_kind, "rmat"))
        gen_rmat(s, n, param_get("m", 4 * n), sym);
    else if (!strcmp(graph_kind, "grid"))
        gen_grid(s, n, param_get("w", 100), param_get("keep", 90));
    else if (!strcmp(graph_kind, "layered"))
        gen_layered(s, n, param_get("w", 100), param_get("extra", 0));
    else if (!strcmp(graph_kind, "cfg"))
        gen_cfg(s, n, param_get("far", 10));
    else
        die("graph= must be uniform, rmat, grid, layered or cfg");
}

/* ----------------------------------------------------------------- files */

static const char *outdir;

static FILE *open_out(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dlgen: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return f;
}

static void close_out(FILE *f)
{
    if (fclose(f)) die("write error");
}

static void write_pairs(const char *name, const edge_set *s)
{
    FILE *f = open_out(name);
    for (int64_t i = 0; i < s->n; i++) fprintf(f, "%lld\t%lld\n", (long long)s->a[i], (long long)s->b[i]);
    close_out(f);
}

static void write_column(const char *name, const int64_t *v, int64_t n)
{
    FILE *f = open_out(name);
    for (int64_t i = 0; i < n; i++) fprintf(f, "%lld\n", (long long)v[i]);
    close_out(f);
}

/* `count` distinct random nodes below n, in the order drawn; with edges,
** tails of random edges (nodes with a way out, hubs more often, as a search
** from a real graph's node would start). */
static int64_t *pick_distinct(int64_t n, int64_t count, const edge_set *edges)
{
    if (count < 1 || count > n) die("sources must be from 1 to n");
    int64_t *v = xcalloc((size_t)count, sizeof *v);
    edge_set seen;
    es_init(&seen, count);
    int64_t tries = 0;
    for (int64_t k = 0; k < count;) {
        if (edges && ++tries > 100 * count + 1000) die("too few nodes with edges for sources=");
        int64_t x = edges && edges->n ? edges->a[rng_below(edges->n)] : rng_below(n);
        if (es_add(&seen, x, 0)) v[k++] = x;
    }
    xfree(seen.slots);
    xfree(seen.a);
    xfree(seen.b);
    return v;
}

/* ------------------------------------------------- reference: bit matrices */

typedef struct {
    int64_t n, words;
    uint64_t *bits;
} bitmat;

static void bm_init(bitmat *m, int64_t n)
{
    m->n = n;
    m->words = (n + 63) / 64;
    m->bits = xcalloc((size_t)(n * m->words), sizeof *m->bits);
}

static uint64_t *bm_row(const bitmat *m, int64_t r) { return m->bits + r * m->words; }
static int bm_get(const bitmat *m, int64_t r, int64_t c) { return (int)(bm_row(m, r)[c / 64] >> (c % 64) & 1); }

static int bm_set(bitmat *m, int64_t r, int64_t c)
{
    uint64_t *w = &bm_row(m, r)[c / 64], bit = UINT64_C(1) << (c % 64);
    if (*w & bit) return 0;
    *w |= bit;
    return 1;
}

/* row r of dst |= row s of src; returns whether dst changed. */
static int bm_or_row(bitmat *dst, int64_t r, const bitmat *src, int64_t s)
{
    uint64_t *d = bm_row(dst, r);
    const uint64_t *x = bm_row(src, s);
    int changed = 0;
    for (int64_t i = 0; i < dst->words; i++) {
        uint64_t nw = d[i] | x[i];
        changed |= nw != d[i];
        d[i] = nw;
    }
    return changed;
}

static void bm_from_edges(bitmat *m, int64_t n, const edge_set *s)
{
    bm_init(m, n);
    for (int64_t i = 0; i < s->n; i++) bm_set(m, s->a[i], s->b[i]);
}

typedef struct {
    uint64_t count, sum;
} stats;

static stats bm_stats(const bitmat *m)
{
    stats st = {0, 0};
    for (int64_t r = 0; r < m->n; r++)
        for (int64_t c = 0; c < m->n; c++)
            if (bm_get(m, r, c)) {
                int64_t t[2] = {r, c};
                st.count++;
                st.sum += tuple_hash(t, 2);
            }
    return st;
}

static FILE *expect_file;

static void expect_line(const char *name, stats st)
{
    fprintf(expect_file, "%s %llu %llu\n", name, (unsigned long long)st.count, (unsigned long long)st.sum);
}

static void need_ref_size(int64_t n)
{
    if (n > REF_MAX_NODES) die("--expect: inputs of at most 6000 nodes only (the reference is quadratic)");
}

/* path = edge+ : the closure by repeated row unions. */
static void ref_closure_rows(bitmat *p, const bitmat *e, const int64_t *rows, int64_t nrows)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int64_t k = 0; k < nrows; k++) {
            int64_t x = rows ? rows[k] : k;
            for (int64_t y = 0; y < p->n; y++)
                if (bm_get(p, x, y)) changed |= bm_or_row(p, x, e, y);
        }
    }
}

/* ------------------------------------------------------------ benchmarks */

static int64_t graph_nodes(void) { return param_get("n", 1000); }

static void bench_tc(int expect)
{
    edge_set e;
    es_init(&e, 1024);
    gen_graph(&e, 0);
    write_pairs("edge.facts", &e);
    if (!expect) return;
    int64_t n = graph_nodes();
    need_ref_size(n);
    bitmat em, pm;
    bm_from_edges(&em, n, &e);
    bm_from_edges(&pm, n, &e);
    ref_closure_rows(&pm, &em, NULL, n);
    expect_line("path_stats", bm_stats(&pm));
}

static void bench_sg(int expect)
{
    edge_set e;
    es_init(&e, 1024);
    gen_graph(&e, 0);
    write_pairs("edge.facts", &e);
    if (!expect) return;
    int64_t n = graph_nodes();
    need_ref_size(n);
    bitmat em, sg;
    bm_from_edges(&em, n, &e);
    bm_init(&sg, n);
    /* siblings: edge(p, x), edge(p, y), x != y */
    for (int64_t p = 0; p < n; p++)
        for (int64_t x = 0; x < n; x++)
            if (bm_get(&em, p, x))
                for (int64_t y = 0; y < n; y++)
                    if (y != x && bm_get(&em, p, y)) bm_set(&sg, x, y);
    /* sg(x, y) <- edge(a, x), sg(a, b), edge(b, y) */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int64_t a = 0; a < n; a++)
            for (int64_t b = 0; b < n; b++)
                if (bm_get(&sg, a, b))
                    for (int64_t x = 0; x < n; x++)
                        if (bm_get(&em, a, x)) changed |= bm_or_row(&sg, x, &em, b);
    }
    expect_line("sg_stats", bm_stats(&sg));
}

static void bench_reach(int expect)
{
    edge_set e;
    es_init(&e, 1024);
    gen_graph(&e, 0);
    write_pairs("edge.facts", &e);
    int64_t n = graph_nodes(), k = param_get("sources", 10);
    int64_t *src = pick_distinct(n, k, &e);
    write_column("source.facts", src, k);
    if (!expect) return;
    need_ref_size(n);
    bitmat em, rm;
    bm_from_edges(&em, n, &e);
    bm_init(&rm, n);
    for (int64_t i = 0; i < k; i++) bm_or_row(&rm, src[i], &em, src[i]);
    ref_closure_rows(&rm, &em, src, k);
    expect_line("reach_stats", bm_stats(&rm));
}

/* CSDA: nullEdge holds the null values entering the data flow at a
** statement (x, y), arc the data-flow edges; null = nullEdge followed by
** any number of arcs. */
static void bench_csda(int expect)
{
    if (!strcmp(graph_kind, "uniform")) graph_kind = "cfg"; /* the default shape */
    edge_set arc;
    es_init(&arc, 1024);
    gen_graph(&arc, 0);
    write_pairs("arc.facts", &arc);
    int64_t n = graph_nodes(), k = param_get("sources", 10);
    int64_t *src = pick_distinct(n, k, NULL);
    edge_set ne;
    es_init(&ne, k);
    for (int64_t i = 0; i < k; i++) {
        int64_t y = src[i] + rng_below(16);
        es_add(&ne, src[i], y < n ? y : src[i]);
    }
    write_pairs("nullEdge.facts", &ne);
    if (!expect) return;
    need_ref_size(n);
    bitmat am, nm;
    bm_from_edges(&am, n, &arc);
    bm_from_edges(&nm, n, &ne);
    ref_closure_rows(&nm, &am, NULL, n);
    expect_line("null_stats", bm_stats(&nm));
}

/* CSPA: variables and, for each dereferenced pointer p, a node for *p
** (dereference(p, *p)); assign(x, y) for "x = y" between any two of them,
** the sources skewed towards a few hub nodes (alpha) as in real programs
** where a few variables receive many values. The Graspan graphs of httpd,
** PostgreSQL and Linux have about 1.1 nodes per edge and 3 to 4 dereference
** edges per assign edge; n=, assign= and deref= set the sizes. */
static void bench_cspa(int expect)
{
    int64_t vars = param_get("n", 1000), na = param_get("assign", vars / 3), nd = param_get("deref", vars);
    int alpha = (int)param_get("alpha", 2);
    if (vars < 2 || nd < 0 || nd > vars || na < 0 || alpha < 1 || alpha > 6)
        die("cspa: need n >= 2, 0 <= deref <= n, assign >= 0, 1 <= alpha <= 6");
    int64_t nodes = vars + nd;
    if (nodes >= (INT64_C(1) << 31)) die("cspa: too many nodes");
    int64_t *ptrs = pick_distinct(vars, nd > 0 ? nd : 1, NULL);
    edge_set deref, assign;
    es_init(&deref, nd);
    for (int64_t i = 0; i < nd; i++) es_add(&deref, ptrs[i], vars + i);
    es_init(&assign, na);
    if ((double)na > 0.25 * (double)nodes * (double)nodes) die("cspa: too many assign edges");
    for (int64_t made = 0; made < na;) {
        int64_t x = rng_skewed(nodes, alpha), y = rng_below(nodes);
        made += add_edge(&assign, x, y, 0);
    }
    write_pairs("assign.facts", &assign);
    write_pairs("dereference.facts", &deref);
    if (!expect) return;
    need_ref_size(nodes);
    int64_t n = nodes;
    bitmat A, D, VF, MA, VA, T;
    bm_from_edges(&A, n, &assign);
    bm_from_edges(&D, n, &deref);
    bm_from_edges(&VF, n, &assign);
    bm_init(&MA, n);
    bm_init(&VA, n);
    bm_init(&T, n);
    for (int64_t i = 0; i < assign.n; i++) {
        bm_set(&VF, assign.a[i], assign.a[i]);
        bm_set(&VF, assign.b[i], assign.b[i]);
        bm_set(&MA, assign.a[i], assign.a[i]);
        bm_set(&MA, assign.b[i], assign.b[i]);
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int64_t x = 0; x < n; x++)
            for (int64_t z = 0; z < n; z++) {
                if (bm_get(&A, x, z)) changed |= bm_or_row(&VF, x, &MA, z);  /* assign(x,z), MA(z,y) */
                if (bm_get(&VF, x, z)) changed |= bm_or_row(&VF, x, &VF, z); /* VF(x,z), VF(z,y) */
            }
        /* MA(x, w) <- D(y, x), VA(y, z), D(z, w) */
        for (int64_t y = 0; y < n; y++)
            for (int64_t x = 0; x < n; x++)
                if (bm_get(&D, y, x))
                    for (int64_t z = 0; z < n; z++)
                        if (bm_get(&VA, y, z)) changed |= bm_or_row(&MA, x, &D, z);
        /* VA(x, y) <- VF(z, x), VF(z, y); VA(x, y) <- VF(z, x), MA(z, w), VF(w, y) */
        for (int64_t z = 0; z < n; z++) {
            memset(bm_row(&T, z), 0, (size_t)T.words * sizeof(uint64_t));
            bm_or_row(&T, z, &VF, z);
            for (int64_t w = 0; w < n; w++)
                if (bm_get(&MA, z, w)) bm_or_row(&T, z, &VF, w);
            for (int64_t x = 0; x < n; x++)
                if (bm_get(&VF, z, x)) changed |= bm_or_row(&VA, x, &T, z);
        }
    }
    expect_line("ma_stats", bm_stats(&MA));
    expect_line("va_stats", bm_stats(&VA));
    expect_line("vf_stats", bm_stats(&VF));
}

/* Triangles and 4-cliques: an undirected graph, both directions listed. */
static void bench_cliques(int expect, int size)
{
    edge_set e;
    es_init(&e, 1024);
    gen_graph(&e, 1);
    write_pairs("edge.facts", &e);
    if (!expect) return;
    int64_t n = graph_nodes();
    need_ref_size(n);
    bitmat em;
    bm_from_edges(&em, n, &e);
    stats st = {0, 0};
    for (int64_t a = 0; a < n; a++)
        for (int64_t b = a + 1; b < n; b++) {
            if (!bm_get(&em, a, b)) continue;
            for (int64_t c = b + 1; c < n; c++) {
                if (!bm_get(&em, a, c) || !bm_get(&em, b, c)) continue;
                if (size == 3) {
                    int64_t t[3] = {a, b, c};
                    st.count++;
                    st.sum += tuple_hash(t, 3);
                    continue;
                }
                for (int64_t d = c + 1; d < n; d++)
                    if (bm_get(&em, a, d) && bm_get(&em, b, d) && bm_get(&em, c, d)) {
                        int64_t t[4] = {a, b, c, d};
                        st.count++;
                        st.sum += tuple_hash(t, 4);
                    }
            }
        }
    expect_line(size == 3 ? "tri_stats" : "clique_stats", st);
}

/* Shortest hop counts from a set of sources (breadth-first search). */
static void bench_hops(int expect)
{
    edge_set e;
    es_init(&e, 1024);
    gen_graph(&e, 0);
    write_pairs("edge.facts", &e);
    int64_t n = graph_nodes(), k = param_get("sources", 1);
    int64_t *src = pick_distinct(n, k, &e);
    write_column("hop_source.facts", src, k);
    if (!expect) return;
    need_ref_size(n);
    /* breadth-first search over an adjacency list */
    int64_t *deg = xcalloc((size_t)n + 1, sizeof *deg), *adj = xcalloc((size_t)e.n + 1, sizeof *adj);
    for (int64_t i = 0; i < e.n; i++) deg[e.a[i] + 1]++;
    for (int64_t i = 0; i < n; i++) deg[i + 1] += deg[i];
    int64_t *fill = xcalloc((size_t)n, sizeof *fill);
    for (int64_t i = 0; i < e.n; i++) adj[deg[e.a[i]] + fill[e.a[i]]++] = e.b[i];
    int64_t *dist = xcalloc((size_t)n, sizeof *dist), *queue = xcalloc((size_t)n, sizeof *queue);
    for (int64_t i = 0; i < n; i++) dist[i] = -1;
    int64_t qh = 0, qt = 0;
    for (int64_t i = 0; i < k; i++) {
        dist[src[i]] = 0;
        queue[qt++] = src[i];
    }
    while (qh < qt) {
        int64_t x = queue[qh++];
        for (int64_t j = deg[x]; j < deg[x + 1]; j++)
            if (dist[adj[j]] < 0) {
                dist[adj[j]] = dist[x] + 1;
                queue[qt++] = adj[j];
            }
    }
    stats st = {0, 0};
    for (int64_t x = 0; x < n; x++)
        if (dist[x] >= 0) {
            int64_t t[2] = {x, dist[x]};
            st.count++;
            st.sum += tuple_hash(t, 2);
        }
    expect_line("hop_stats", st);
}

/* The edges of a graph as an adjacency list: out[off[x] .. off[x+1]) are
** the indexes of x's edges in s. */
static int64_t *adjacency(const edge_set *s, int64_t n, int64_t **off_out)
{
    int64_t *off = xcalloc((size_t)n + 2, sizeof *off), *out = xcalloc((size_t)s->n + 1, sizeof *out);
    int64_t *fill = xcalloc((size_t)n + 1, sizeof *fill);
    for (int64_t i = 0; i < s->n; i++) off[s->a[i] + 1]++;
    for (int64_t i = 0; i < n; i++) off[i + 1] += off[i];
    for (int64_t i = 0; i < s->n; i++) out[off[s->a[i]] + fill[s->a[i]]++] = i;
    xfree(fill);
    *off_out = off;
    return out;
}

/* Shortest weighted paths from a set of sources: weights 1..maxw drawn per
** edge, the reference is Dijkstra's algorithm over a binary heap. */
static void bench_sssp(int expect)
{
    edge_set e;
    es_init(&e, 1024);
    gen_graph(&e, 0);
    int64_t n = graph_nodes(), k = param_get("sources", 1), maxw = param_get("maxw", 100);
    if (maxw < 1) die("maxw must be >= 1");
    int64_t *w = xcalloc((size_t)e.n + 1, sizeof *w);
    FILE *f = open_out("wedge.facts");
    for (int64_t i = 0; i < e.n; i++) {
        w[i] = 1 + rng_below(maxw);
        fprintf(f, "%lld\t%lld\t%lld\n", (long long)e.a[i], (long long)e.b[i], (long long)w[i]);
    }
    close_out(f);
    int64_t *src = pick_distinct(n, k, &e);
    write_column("sssp_source.facts", src, k);
    if (!expect) return;
    need_ref_size(n);
    int64_t *off, *out = adjacency(&e, n, &off);
    int64_t *dist = xcalloc((size_t)n, sizeof *dist), cap = e.n + k + 1, nh = 0;
    int64_t *hd = xcalloc((size_t)cap, sizeof *hd), *hx = xcalloc((size_t)cap, sizeof *hx);
    uint8_t *done = xcalloc((size_t)n, 1);
    for (int64_t i = 0; i < n; i++) dist[i] = -1;
#define HEAP_PUSH(dd, xx)                                                                  \
    do {                                                                                   \
        int64_t c_ = nh++;                                                                 \
        while (c_ > 0 && hd[(c_ - 1) / 2] > (dd)) {                                        \
            hd[c_] = hd[(c_ - 1) / 2];                                                     \
            hx[c_] = hx[(c_ - 1) / 2];                                                     \
            c_ = (c_ - 1) / 2;                                                             \
        }                                                                                  \
        hd[c_] = (dd);                                                                     \
        hx[c_] = (xx);                                                                     \
    } while (0)
    for (int64_t i = 0; i < k; i++) HEAP_PUSH(0, src[i]);
    while (nh > 0) {
        int64_t d = hd[0], x = hx[0], ld = hd[--nh], lx = hx[nh], c = 0;
        for (;;) { /* sift the last entry down from the root */
            int64_t m = 2 * c + 1;
            if (m >= nh) break;
            if (m + 1 < nh && hd[m + 1] < hd[m]) m++;
            if (hd[m] >= ld) break;
            hd[c] = hd[m];
            hx[c] = hx[m];
            c = m;
        }
        hd[c] = ld;
        hx[c] = lx;
        if (done[x]) continue;
        done[x] = 1;
        dist[x] = d;
        for (int64_t j = off[x]; j < off[x + 1]; j++)
            if (!done[e.b[out[j]]]) HEAP_PUSH(d + w[out[j]], e.b[out[j]]);
    }
#undef HEAP_PUSH
    stats st = {0, 0};
    for (int64_t x = 0; x < n; x++)
        if (dist[x] >= 0) {
            int64_t t[2] = {x, dist[x]};
            st.count++;
            st.sum += tuple_hash(t, 2);
        }
    expect_line("sssp_stats", st);
}

/* Connected components of the graph taken as undirected, each node labelled
** with its component's least node; the reference is union-find. */
static void bench_cc(int expect)
{
    edge_set e;
    es_init(&e, 1024);
    gen_graph(&e, 0);
    write_pairs("edge.facts", &e);
    if (!expect) return;
    int64_t n = graph_nodes();
    need_ref_size(n);
    int64_t *parent = xcalloc((size_t)n, sizeof *parent);
    uint8_t *has = xcalloc((size_t)n, 1);
    for (int64_t i = 0; i < n; i++) parent[i] = i;
    for (int64_t i = 0; i < e.n; i++) {
        int64_t a = e.a[i], b = e.b[i];
        has[a] = has[b] = 1;
        while (parent[a] != a) a = parent[a] = parent[parent[a]];
        while (parent[b] != b) b = parent[b] = parent[parent[b]];
        if (a < b) parent[b] = a; /* the root is the least node */
        else if (b < a) parent[a] = b;
    }
    stats st = {0, 0};
    for (int64_t x = 0; x < n; x++) {
        if (!has[x]) continue;
        int64_t r = x;
        while (parent[r] != r) r = parent[r];
        int64_t t[2] = {x, r};
        st.count++;
        st.sum += tuple_hash(t, 2);
    }
    expect_line("cc_stats", st);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: dlgen tc|sg|reach|cspa|csda|tri|clique4|hops|sssp|cc OUTDIR SEED [key=value ...] [--expect]\n"
                        "  graph=uniform|rmat|grid|layered|cfg n= m= w= keep= extra= far= sources= maxw=\n"
                        "  (cspa: n= assign= deref= alpha=)\n");
        return 2;
    }
    const char *bench = argv[1];
    outdir = argv[2];
    char *end;
    errno = 0;
    long long seed = strtoll(argv[3], &end, 10);
    if (errno || *end || end == argv[3]) {
        fprintf(stderr, "dlgen: SEED must be a number\n");
        return 2;
    }
    atexit(free_blocks);
    rng_state = (uint64_t)seed * UINT64_C(0x9E3779B97F4A7C15) + 1;
    int expect = 0;
    for (int i = 4; i < argc; i++) {
        if (!strcmp(argv[i], "--expect")) {
            expect = 1;
            continue;
        }
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "dlgen: expected key=value, got '%s'\n", argv[i]);
            return 2;
        }
        *eq = 0;
        if (!strcmp(argv[i], "graph")) {
            graph_kind = eq + 1;
            continue;
        }
        if (nparams == 32) {
            fprintf(stderr, "dlgen: too many parameters\n");
            return 2;
        }
        errno = 0;
        long long v = strtoll(eq + 1, &end, 10);
        if (errno || *end || end == eq + 1 || v < 0) {
            fprintf(stderr, "dlgen: %s= takes a number >= 0\n", argv[i]);
            return 2;
        }
        params[nparams].key = argv[i];
        params[nparams].value = v;
        nparams++;
    }
    if (mkdir(outdir, 0777) && errno != EEXIST) {
        fprintf(stderr, "dlgen: cannot create %s: %s\n", outdir, strerror(errno));
        return 1;
    }
    if (expect) expect_file = open_out("expected.txt");
    if (!strcmp(bench, "tc"))
        bench_tc(expect);
    else if (!strcmp(bench, "sg"))
        bench_sg(expect);
    else if (!strcmp(bench, "reach"))
        bench_reach(expect);
    else if (!strcmp(bench, "csda"))
        bench_csda(expect);
    else if (!strcmp(bench, "cspa"))
        bench_cspa(expect);
    else if (!strcmp(bench, "tri"))
        bench_cliques(expect, 3);
    else if (!strcmp(bench, "clique4"))
        bench_cliques(expect, 4);
    else if (!strcmp(bench, "hops"))
        bench_hops(expect);
    else if (!strcmp(bench, "sssp"))
        bench_sssp(expect);
    else if (!strcmp(bench, "cc"))
        bench_cc(expect);
    else {
        fprintf(stderr, "dlgen: unknown benchmark '%s'\n", bench);
        return 2;
    }
    for (int i = 0; i < nparams; i++)
        if (!params[i].used) {
            fprintf(stderr, "dlgen: %s= means nothing for %s with graph=%s\n", params[i].key, bench, graph_kind);
            return 2;
        }
    if (expect) close_out(expect_file);
    return 0;
}
