/*
** runtime/test_rt_data.c: tests of the run-time data model (rf_rt_data.h):
** the string dictionary, expression evaluation and the output writer.
**   test_rt_data dict | eval | output     one group of unit tests (ctest)
**   test_rt_data                          all groups
**   test_rt_data bench [ROWS]             timings (not a test): interning,
**                                         evaluating and writing ROWS rows
**                                         (default 6000000)
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rf_rt_data.h"
#include "rf_sys.h"

static int failures, checks;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        checks++;                                                                                                      \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                                   \
        }                                                                                                              \
    } while (0)

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- expression builders (in one arena, freed at exit) ------------------ */

static rf_arena A;

static rf_qp_expr *mk(rf_qp_expr_kind k, rf_type t, int32_t nargs)
{
    rf_qp_expr *e = rf_arena_alloc(&A, sizeof *e);
    e->kind = k;
    e->type = t;
    e->nargs = nargs;
    if (nargs) e->args = rf_arena_alloc(&A, (size_t)nargs * sizeof *e->args);
    return e;
}

static rf_qp_expr *col(int32_t side, int32_t c, rf_type t)
{
    rf_qp_expr *e = mk(RF_QP_E_COL, t, 0);
    e->side = side;
    e->col = c;
    return e;
}

static rf_qp_expr *cconst(rf_type t, int64_t i, double f)
{
    rf_qp_expr *e = mk(RF_QP_E_CONST, t, 0);
    e->c.type = t;
    e->c.i = i;
    e->c.f = f;
    return e;
}
static rf_qp_expr *ci(int64_t v) { return cconst(RF_TYPE_INT, v, 0); }
static rf_qp_expr *cd(int64_t scaled) { return cconst(RF_TYPE_DECIMAL, scaled, 0); }
static rf_qp_expr *cf(double v) { return cconst(RF_TYPE_FLOAT, 0, v); }
static rf_qp_expr *cb(int v) { return cconst(RF_TYPE_BOOL, v, 0); }
static rf_qp_expr *cdate(const char *iso)
{
    int32_t d = 0;
    if (rf_val_parse_date(iso, (int64_t)strlen(iso), &d, NULL)) abort();
    return cconst(RF_TYPE_DATE, d, 0);
}
static rf_qp_expr *cslen(const char *s, int64_t n)
{
    rf_qp_expr *e = cconst(RF_TYPE_STRING, 0, 0);
    e->c.s = rf_arena_strndup(&A, s, (size_t)n);
    e->c.slen = n;
    return e;
}
static rf_qp_expr *cs(const char *s) { return cslen(s, (int64_t)strlen(s)); }

static rf_qp_expr *bin(char op, rf_qp_expr *a, rf_qp_expr *b)
{
    rf_qp_expr *e = mk(RF_QP_E_BINOP, a->type, 2);
    e->op = op;
    e->args[0] = a;
    e->args[1] = b;
    return e;
}
static rf_qp_expr *neg(rf_qp_expr *a)
{
    rf_qp_expr *e = mk(RF_QP_E_NEG, a->type, 1);
    e->args[0] = a;
    return e;
}
static rf_qp_expr *cast(rf_type t, rf_qp_expr *a)
{
    rf_qp_expr *e = mk(RF_QP_E_CAST, t, 1);
    e->args[0] = a;
    return e;
}
static rf_qp_expr *call(rf_builtin fn, rf_qp_expr *a, rf_qp_expr *b, rf_qp_expr *c)
{
    const rf_builtin_info *bi = rf_fe_builtin_info(fn);
    rf_qp_expr *e = mk(RF_QP_E_CALL, bi->result, bi->nargs);
    e->fn = fn;
    e->args[0] = a;
    if (bi->nargs > 1) e->args[1] = b;
    if (bi->nargs > 2) e->args[2] = c;
    return e;
}
static rf_qp_expr *cmp(rf_cmp_op op, rf_qp_expr *a, rf_qp_expr *b)
{
    rf_qp_expr *e = mk(RF_QP_E_CMP, RF_TYPE_BOOL, 2);
    e->cmp = op;
    e->args[0] = a;
    e->args[1] = b;
    return e;
}
static rf_qp_expr *and2(rf_qp_expr *a, rf_qp_expr *b)
{
    rf_qp_expr *e = mk(RF_QP_E_AND, RF_TYPE_BOOL, 2);
    e->args[0] = a;
    e->args[1] = b;
    return e;
}
static rf_qp_expr *not1(rf_qp_expr *a)
{
    rf_qp_expr *e = mk(RF_QP_E_NOT, RF_TYPE_BOOL, 1);
    e->args[0] = a;
    return e;
}
static rf_qp_expr *like(rf_qp_expr *a, rf_qp_expr *p)
{
    rf_qp_expr *e = mk(RF_QP_E_LIKE, RF_TYPE_BOOL, 2);
    e->args[0] = a;
    e->args[1] = p;
    return e;
}

/* ---- scalar evaluation -------------------------------------------------- */

static rf_rt_dict *D;

/* Replaces constants by columns of a one-row relation: the same expression
** then runs through the column paths (and LIKE patterns become non-constant). */
typedef struct colz {
    rf_rt_rel rel;
    rf_type types[32];
    void *cols[32];
} colz;

static rf_qp_expr *colize(const rf_qp_expr *e, colz *z)
{
    if (e->kind == RF_QP_E_CONST) {
        int c = z->rel.ncols++;
        z->types[c] = e->type;
        void *p = malloc(16);
        switch (e->type) {
        case RF_TYPE_INT:
        case RF_TYPE_DECIMAL: *(int64_t *)p = e->c.i; break;
        case RF_TYPE_DEC128: *(rf_dec128 *)p = e->c.i; break;
        case RF_TYPE_FLOAT: *(double *)p = e->c.f; break;
        case RF_TYPE_DATE: *(int32_t *)p = (int32_t)e->c.i; break;
        case RF_TYPE_BOOL: *(uint8_t *)p = (uint8_t)e->c.i; break;
        case RF_TYPE_STRING: rf_rt_dict_intern(D, e->c.s, e->c.slen, (uint32_t *)p); break;
        }
        z->cols[c] = p;
        return col(0, c, e->type);
    }
    rf_qp_expr *x = mk(e->kind, e->type, e->nargs);
    rf_qp_expr **args = x->args;
    *x = *e;
    x->args = args;
    for (int32_t i = 0; i < e->nargs; i++) x->args[i] = colize(e->args[i], z);
    return x;
}

static void text_of(const rf_rt_rel *r, int32_t c, int64_t row, char *out, size_t cap)
{
    char t[RF_VAL_FMT_MAX];
    const void *p = r->cols[c];
    switch (r->types[c]) {
    case RF_TYPE_INT: rf_val_write_int(t, ((const int64_t *)p)[row]); break;
    case RF_TYPE_DECIMAL: rf_val_write_dec(t, ((const int64_t *)p)[row]); break;
    case RF_TYPE_DEC128: rf_val_write_dec128(t, ((const rf_dec128 *)p)[row]); break;
    case RF_TYPE_FLOAT: rf_val_write_float(t, ((const double *)p)[row]); break;
    case RF_TYPE_DATE: rf_val_write_date(t, ((const int32_t *)p)[row]); break;
    case RF_TYPE_BOOL: rf_val_write_bool(t, ((const uint8_t *)p)[row]); break;
    case RF_TYPE_STRING: {
        int64_t n;
        const char *s = rf_rt_dict_str(D, ((const uint32_t *)p)[row], &n);
        snprintf(out, cap, "%.*s", (int)n, s ? s : "<bad code>");
        return;
    }
    }
    snprintf(out, cap, "%s", t);
}

/* The value of e (one row, no inputs but its constants) as text, or
** "ERROR:" and the message. */
static void eval_text(rf_qp_expr *e, int columnized, char *out, size_t cap)
{
    colz z;
    memset(&z, 0, sizeof z);
    z.rel.nrows = 1;
    z.rel.types = z.types;
    z.rel.cols = z.cols;
    if (columnized) e = colize(e, &z);
    rf_rt_eval_ctx ctx = {D, 1, rf_mkloc("t.logic", 3, 5), "k1"};
    rf_rt_side sides[2] = {{&z.rel, NULL}, {NULL, NULL}};
    rf_type t = e->type;
    rf_rt_rel res;
    rf_diags d;
    rf_diags_init(&d);
    rf_status st = rf_rt_eval_map(&ctx, NULL, &e, 1, &t, sides, 1, &res, &d);
    if (st)
        snprintf(out, cap, "ERROR:%s", d.count ? d.items[0].msg : "?");
    else
        text_of(&res, 0, 0, out, cap);
    if (!st) rf_rt_rel_free(&res);
    rf_diags_free(&d);
    for (int c = 0; c < z.rel.ncols; c++) free(z.cols[c]);
}

static void expect(int line, rf_qp_expr *e, const char *want)
{
    for (int mode = 0; mode < 2; mode++) {
        char got[4096];
        eval_text(e, mode, got, sizeof got);
        checks++;
        int ok = strncmp(want, "ERROR:", 6) == 0 ? strncmp(got, "ERROR:", 6) == 0 && strstr(got, want + 6) != NULL
                                                 : strcmp(got, want) == 0;
        if (!ok) {
            failures++;
            fprintf(stderr, "%s:%d: %s: got \"%s\", want \"%s\"\n", __FILE__, line, mode ? "columns" : "constants", got,
                    want);
        }
    }
}
#define EXPECT(e, want) expect(__LINE__, (e), (want))

static int64_t dec(const char *s)
{
    int64_t v;
    if (rf_val_parse_decimal(s, (int64_t)strlen(s), &v, NULL)) abort();
    return v;
}

/* ---- dictionary tests ----------------------------------------------------- */

static void test_dict_basic(void)
{
    rf_rt_dict *d = rf_rt_dict_new();
    uint32_t a, b, a2, e, z, big;
    CHECK(rf_rt_dict_count(d) == 0);
    CHECK(rf_rt_dict_intern(d, "apple", 5, &a) == RF_OK && a == 0);
    CHECK(rf_rt_dict_intern(d, "banana", 6, &b) == RF_OK && b == 1);
    CHECK(rf_rt_dict_intern(d, "apple", 5, &a2) == RF_OK && a2 == 0);
    CHECK(rf_rt_dict_intern(d, "", 0, &e) == RF_OK && e == 2);
    CHECK(rf_rt_dict_intern(d, "a\0b", 3, &z) == RF_OK && z == 3); /* bytes, not C strings */
    uint32_t f;
    CHECK(rf_rt_dict_intern(d, "a", 1, &f) == RF_OK && f == 4);
    CHECK(rf_rt_dict_count(d) == 5);
    int64_t n;
    const char *s = rf_rt_dict_str(d, b, &n);
    CHECK(n == 6 && memcmp(s, "banana", 6) == 0 && s[6] == 0);
    s = rf_rt_dict_str(d, e, &n);
    CHECK(n == 0 && s && s[0] == 0);
    s = rf_rt_dict_str(d, z, &n);
    CHECK(n == 3 && memcmp(s, "a\0b", 3) == 0);
    CHECK(rf_rt_dict_str(d, 99, &n) == NULL && n == 0);
    uint32_t c;
    CHECK(rf_rt_dict_find(d, "banana", 6, &c) == 1 && c == 1);
    CHECK(rf_rt_dict_find(d, "cherry", 6, &c) == 0);
    CHECK(rf_rt_dict_count(d) == 5);
    /* byte order: "" < "a" < "a\0b" < "apple" < "banana" */
    CHECK(rf_rt_dict_cmp(d, e, f) < 0 && rf_rt_dict_cmp(d, f, z) < 0 && rf_rt_dict_cmp(d, z, a) < 0);
    CHECK(rf_rt_dict_cmp(d, a, b) < 0 && rf_rt_dict_cmp(d, b, a) > 0 && rf_rt_dict_cmp(d, a, a2) == 0);
    /* a long string gets its own block and reads back */
    size_t bl = 3 << 20;
    char *bs = malloc(bl);
    for (size_t i = 0; i < bl; i++) bs[i] = (char)('a' + i % 26);
    CHECK(rf_rt_dict_intern(d, bs, (int64_t)bl, &big) == RF_OK && big == 5);
    s = rf_rt_dict_str(d, big, &n);
    CHECK(n == (int64_t)bl && memcmp(s, bs, bl) == 0);
    CHECK(rf_rt_dict_intern(d, "apple", 5, &a2) == RF_OK && a2 == 0);
    free(bs);
    /* many strings: codes dense, every string back */
    for (int i = 0; i < 200000; i++) {
        char t[32];
        int l = snprintf(t, sizeof t, "s%d", i);
        uint32_t k;
        if (rf_rt_dict_intern(d, t, l, &k) != RF_OK || k != (uint32_t)(6 + i)) {
            CHECK(!"dense codes");
            break;
        }
    }
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        char t[32];
        int l = snprintf(t, sizeof t, "s%d", i);
        s = rf_rt_dict_str(d, (uint32_t)(6 + i), &n);
        bad += !(n == l && memcmp(s, t, (size_t)l) == 0);
        uint32_t k;
        bad += !(rf_rt_dict_intern(d, t, l, &k) == RF_OK && k == (uint32_t)(6 + i));
    }
    CHECK(bad == 0);
    CHECK(rf_rt_dict_count(d) == 200006);
    rf_rt_dict_free(d);
}

#define NCONC 50000

typedef struct conc_arg {
    rf_rt_dict *d;
    int t;
    uint32_t codes[NCONC];
    int errors;
} conc_arg;

static void conc_name(int i, char *t, int *l) { *l = snprintf(t, 48, "concurrent-string-%d-%x", i, i * 2654435761u); }

static void *conc_main(void *p)
{
    conc_arg *a = p;
    for (int k = 0; k < NCONC; k++) {
        /* each thread walks the strings in its own order */
        int i = a->t % 2 ? NCONC - 1 - k : (k * 7919 + a->t * 13) % NCONC;
        char t[48];
        int l;
        conc_name(i, t, &l);
        if (rf_rt_dict_intern(a->d, t, l, &a->codes[i]) != RF_OK) a->errors++;
        int64_t n;
        const char *s = rf_rt_dict_str(a->d, a->codes[i], &n); /* lock-free read while others add */
        if (!s || n != l || memcmp(s, t, (size_t)l)) a->errors++;
    }
    return NULL;
}

/* Strings longer than a stripe's first chunks (16 KiB) but short enough to
** share chunks (up to 256 KiB): each must get a chunk that holds it (one of
** 20,000 bytes was written 3.6 KB past a 16 KiB chunk, and loading such a
** text field aborted in malloc). A dict of its own, so every stripe starts
** with its smallest chunk; freeing it walks the heap the writes would break. */
/* rf_rt_dict_ends and rf_rt_dict_gather against rf_rt_dict_str, one code at
** a time: ranges that cross the code table's segments (1024, 2048, 4096
** ... entries), start and end inside strings, skip over empty strings,
** and stop short of their last code. */
static void test_dict_ranges(void)
{
    rf_rt_dict *d = rf_rt_dict_new();
    int64_t n = 9000;
    uint32_t code;
    for (int64_t i = 0; i < n; i++) {
        char t[80] = "";
        /* (empty strings intern once: the later ones repeat its code) */
        static const char az[] = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz";
        int l = i % 7 == 3 || i % 1024 == 0 ? 0 : snprintf(t, sizeof t, "s%lld-%.*s", (long long)i, (int)(i % 50), az);
        CHECK(rf_rt_dict_intern(d, t, l, &code) == RF_OK);
    }
    /* and a bulk intern's (its own path to the code table), repeats among them */
    {
        int64_t nb = 6000, *boff = malloc((size_t)(nb + 1) * sizeof *boff);
        char *bb = malloc((size_t)nb * 40);
        uint32_t *bc = malloc((size_t)nb * sizeof *bc);
        int64_t at = 0;
        for (int64_t i = 0; i < nb; i++) {
            boff[i] = at;
            if (i % 11 != 4)
                at += snprintf(bb + at, 40, "bulk-%lld.%.*s", (long long)(i % 4999), (int)(i % 13), "xyzxyzxyzxyzx");
        }
        boff[nb] = at;
        CHECK(rf_rt_dict_intern_many(d, boff, bb, nb, bc, 3) == RF_OK);
        free(boff);
        free(bb);
        free(bc);
    }
    int64_t cnt = rf_rt_dict_count(d);
    uint64_t *ref = malloc((size_t)(cnt + 1) * 8), *ends = malloc((size_t)(cnt + 1) * 8);
    char *all = NULL, *got = NULL;
    ref[0] = 0;
    for (int64_t c = 0; c < cnt; c++) {
        int64_t len = 0;
        rf_rt_dict_str(d, (uint32_t)c, &len);
        ref[c + 1] = ref[c] + (uint64_t)len;
    }
    all = malloc((size_t)ref[cnt] + 1);
    got = malloc((size_t)ref[cnt] + 1);
    for (int64_t c = 0; c < cnt; c++) {
        int64_t len = 0;
        const char *p = rf_rt_dict_str(d, (uint32_t)c, &len);
        memcpy(all + ref[c], p, (size_t)len);
    }
    static const int64_t cuts[][2] = {{0, 0},  {0, 1},      {0, 1024},    {1000, 1100}, {1023, 3073},
                                      {0, -1}, {5000, -1}, {7167, 7169}, {7000, -1},   {3000, 11000}};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        int64_t c0 = cuts[k][0], c1 = cuts[k][1] < 0 || cuts[k][1] > cnt ? cnt : cuts[k][1];
        uint64_t total = rf_rt_dict_ends(d, c0, c1, 77, ends);
        int ok = total == 77 + ref[c1] - ref[c0];
        for (int64_t c = c0; ok && c < c1; c++) ok = ends[c - c0] == 77 + ref[c + 1] - ref[c0];
        CHECK(ok);
        /* every byte range of the codes' strings, from some starts */
        uint64_t nb = ref[c1] - ref[c0];
        for (uint64_t b = 0; b < nb; b += nb / 5 + 1)
            for (uint64_t e = b; e <= nb; e += (nb - b) / 3 + 1) {
                /* the first code that ends after b, as rt_gpu_str.c's fill finds it */
                int64_t c = c0;
                while (c < c1 && ref[c + 1] - ref[c0] <= b) c++;
                memset(got, '#', (size_t)nb + 1);
                if (c < c1) rf_rt_dict_gather(d, c, c1, b - (ref[c] - ref[c0]), got, e - b);
                CHECK(memcmp(got, all + ref[c0] + b, (size_t)(e - b)) == 0 && got[e - b] == '#');
            }
    }
    free(ref);
    free(ends);
    free(all);
    free(got);
    rf_rt_dict_free(d);
}

static void test_dict_medium(void)
{
    rf_rt_dict *d = rf_rt_dict_new();
    static const size_t lens[] = {16380, 20000, 40000, 70000, 140000, 262139, 17, 16384, 100000, 30000};
    const int nl = (int)(sizeof lens / sizeof lens[0]);
    char *bs = malloc(262139);
    uint32_t codes[10];
    for (int i = 0; i < nl; i++) {
        for (size_t j = 0; j < lens[i]; j++) bs[j] = (char)('a' + (i + j) % 26);
        CHECK(rf_rt_dict_intern(d, bs, (int64_t)lens[i], &codes[i]) == RF_OK && codes[i] == (uint32_t)i);
    }
    for (int i = 0; i < nl; i++) {
        int64_t n;
        const char *s = rf_rt_dict_str(d, codes[i], &n);
        int same = n == (int64_t)lens[i];
        for (size_t j = 0; same && j < lens[i]; j++) same = s[j] == (char)('a' + (i + j) % 26);
        CHECK(same && s[n] == 0);
    }
    free(bs);
    rf_rt_dict_free(d);
}

static void test_dict_concurrent(void)
{
    rf_rt_dict *d = rf_rt_dict_new();
    static conc_arg args[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        args[t].d = d;
        args[t].t = t;
        args[t].errors = 0;
        pthread_create(&th[t], NULL, conc_main, &args[t]);
    }
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    int bad = 0;
    for (int t = 0; t < 4; t++) bad += args[t].errors;
    for (int i = 0; i < NCONC; i++)
        for (int t = 1; t < 4; t++) bad += args[t].codes[i] != args[0].codes[i];
    CHECK(bad == 0);
    CHECK(rf_rt_dict_count(d) == NCONC);
    char *seen = calloc(NCONC, 1);
    for (int i = 0; i < NCONC; i++) {
        uint32_t c = args[0].codes[i];
        if (c >= NCONC || seen[c])
            bad++;
        else
            seen[c] = 1;
    }
    CHECK(bad == 0);
    free(seen);
    rf_rt_dict_free(d);
}

/* n strings of which about a third repeat, in the loader's layout. */
static void make_strings(int64_t n, int64_t distinct, int64_t **off, char **bytes)
{
    *off = malloc((size_t)(n + 1) * sizeof **off);
    *bytes = malloc((size_t)n * 40 + 1);
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        (*off)[i] = at;
        int64_t k = rnd() % 3 == 0 ? (int64_t)(rnd() % (uint64_t)distinct) : i % distinct;
        if (k % 1000 == 7) continue; /* some empty strings */
        at += snprintf(*bytes + at, 40, "Customer#%09lld|%s", (long long)k, k % 5 ? "é" : "");
    }
    (*off)[n] = at;
}

typedef struct bulk_side {
    rf_rt_dict *d;
    int stop;
    int errors;
} bulk_side;

static void *side_interner(void *p)
{
    bulk_side *b = p;
    for (int i = 0; i < 20000 && !b->stop; i++) {
        char t[32];
        int l = snprintf(t, sizeof t, "side-%d", i % 5000);
        uint32_t c, c2;
        if (rf_rt_dict_intern(b->d, t, l, &c) || rf_rt_dict_intern(b->d, t, l, &c2) || c != c2) b->errors++;
    }
    return NULL;
}

static void test_dict_bulk(void)
{
    int64_t n = 300000, *off;
    char *bytes;
    make_strings(n, 100000, &off, &bytes);
    /* the reference: one at a time, in row order, after some existing strings */
    rf_rt_dict *ref = rf_rt_dict_new();
    uint32_t *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
    uint32_t dummy;
    for (int i = 0; i < 1000; i += 3) {
        char t[40];
        int l = snprintf(t, sizeof t, "Customer#%09d|%s", i * 7, (i * 7) % 5 ? "é" : "");
        rf_rt_dict_intern(ref, t, l, &dummy);
    }
    rf_rt_dict_intern(ref, "zzz", 3, &dummy);
    int64_t pre = rf_rt_dict_count(ref);
    for (int64_t i = 0; i < n; i++) rf_rt_dict_intern(ref, bytes + off[i], off[i + 1] - off[i], &want[i]);
    int threads[] = {1, 2, 3, 4, 8};
    for (int ti = 0; ti < 5; ti++) {
        rf_rt_dict *d = rf_rt_dict_new();
        for (int i = 0; i < 1000; i += 3) {
            char t[40];
            int l = snprintf(t, sizeof t, "Customer#%09d|%s", i * 7, (i * 7) % 5 ? "é" : "");
            rf_rt_dict_intern(d, t, l, &dummy);
        }
        rf_rt_dict_intern(d, "zzz", 3, &dummy);
        CHECK(rf_rt_dict_count(d) == pre);
        memset(got, 0xee, (size_t)n * sizeof *got);
        CHECK(rf_rt_dict_intern_many(d, off, bytes, n, got, threads[ti]) == RF_OK);
        CHECK(memcmp(got, want, (size_t)n * sizeof *got) == 0);
        CHECK(rf_rt_dict_count(d) == rf_rt_dict_count(ref));
        int bad = 0;
        for (int64_t c = 0; c < rf_rt_dict_count(d); c++) {
            int64_t n1, n2;
            const char *s1 = rf_rt_dict_str(d, (uint32_t)c, &n1), *s2 = rf_rt_dict_str(ref, (uint32_t)c, &n2);
            bad += !(n1 == n2 && memcmp(s1, s2, (size_t)n1) == 0);
        }
        CHECK(bad == 0);
        /* a second bulk over the same strings finds them all */
        uint32_t *again = malloc((size_t)n * sizeof *again);
        CHECK(rf_rt_dict_intern_many(d, off, bytes, n, again, threads[ti]) == RF_OK);
        CHECK(memcmp(again, want, (size_t)n * sizeof *again) == 0);
        CHECK(rf_rt_dict_count(d) == rf_rt_dict_count(ref));
        /* and single interns after a bulk see its strings */
        uint32_t c;
        CHECK(rf_rt_dict_intern(d, bytes + off[n - 1], off[n] - off[n - 1], &c) == RF_OK && c == want[n - 1]);
        free(again);
        rf_rt_dict_free(d);
    }
    /* small inputs take the one-at-a-time path */
    rf_rt_dict *d = rf_rt_dict_new();
    CHECK(rf_rt_dict_intern_many(d, off, bytes, 100, got, 4) == RF_OK);
    rf_rt_dict *r2 = rf_rt_dict_new();
    int bad = 0;
    for (int i = 0; i < 100; i++) {
        uint32_t c;
        rf_rt_dict_intern(r2, bytes + off[i], off[i + 1] - off[i], &c);
        bad += c != got[i];
    }
    CHECK(bad == 0);
    rf_rt_dict_free(r2);
    rf_rt_dict_free(d);
    d = rf_rt_dict_new();
    CHECK(rf_rt_dict_intern_many(d, off, bytes, n, got, 1) == RF_OK);
    int64_t distinct = rf_rt_dict_count(d);
    rf_rt_dict_free(d);
    /* interns from another thread while a bulk runs: both stay consistent */
    d = rf_rt_dict_new();
    bulk_side side = {d, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, side_interner, &side);
    CHECK(rf_rt_dict_intern_many(d, off, bytes, n, got, 2) == RF_OK);
    pthread_join(th, NULL);
    CHECK(side.errors == 0);
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t l;
        const char *s = rf_rt_dict_str(d, got[i], &l);
        bad += !(s && l == off[i + 1] - off[i] && memcmp(s, bytes + off[i], (size_t)l) == 0);
    }
    CHECK(bad == 0);
    CHECK(rf_rt_dict_count(d) == distinct + 5000);
    rf_rt_dict_free(d);
    rf_rt_dict_free(ref);
    free(want);
    free(got);
    free(off);
    free(bytes);
}

/* ---- expression tests --------------------------------------------------------- */

static void test_scalar_int(void)
{
    EXPECT(bin('+', ci(2), ci(3)), "5");
    EXPECT(bin('-', ci(2), ci(3)), "-1");
    EXPECT(bin('*', ci(-4), ci(3)), "-12");
    EXPECT(bin('/', ci(7), ci(2)), "3");
    EXPECT(bin('/', ci(-7), ci(2)), "-3"); /* truncation toward zero */
    EXPECT(bin('/', ci(7), ci(-2)), "-3");
    EXPECT(bin('+', ci(INT64_MAX), ci(1)), "ERROR:integer overflow in 9223372036854775807 + 1");
    EXPECT(bin('-', ci(INT64_MIN), ci(1)), "ERROR:integer overflow in -9223372036854775808 - 1");
    EXPECT(bin('*', ci(INT64_C(4294967296)), ci(INT64_C(4294967296))),
           "ERROR:integer overflow in 4294967296 * 4294967296");
    EXPECT(bin('/', ci(INT64_MIN), ci(-1)), "ERROR:integer overflow in -9223372036854775808 / -1");
    EXPECT(bin('/', ci(5), ci(0)), "ERROR:division by zero in 5 / 0");
    EXPECT(neg(ci(5)), "-5");
    EXPECT(neg(ci(INT64_MIN)), "ERROR:integer overflow in -(-9223372036854775808)");
    EXPECT(bin('*', ci(INT64_MIN), ci(1)), "-9223372036854775808");
    /* % : the remainder of truncated division, the dividend's sign */
    EXPECT(bin('%', ci(7), ci(3)), "1");
    EXPECT(bin('%', ci(-7), ci(3)), "-1");
    EXPECT(bin('%', ci(7), ci(-3)), "1");
    EXPECT(bin('%', ci(-7), ci(-3)), "-1");
    EXPECT(bin('%', ci(INT64_MIN), ci(-1)), "0");
    EXPECT(bin('%', ci(INT64_MIN), ci(INT64_MAX)), "-1");
    EXPECT(bin('%', ci(5), ci(0)), "ERROR:division by zero in 5 % 0");
    /* the bitwise built-ins */
    EXPECT(call(RF_BI_BITAND, ci(12), ci(-3), NULL), "12");
    EXPECT(call(RF_BI_BITOR, ci(12), ci(3), NULL), "15");
    EXPECT(call(RF_BI_BITXOR, ci(-1), ci(5), NULL), "-6");
    EXPECT(call(RF_BI_BITNOT, ci(INT64_MAX), NULL, NULL), "-9223372036854775808");
    EXPECT(call(RF_BI_SHL, ci(3), ci(62), NULL), "-4611686018427387904");
    EXPECT(call(RF_BI_SHR, ci(-5), ci(1), NULL), "-3");
    EXPECT(call(RF_BI_INT_MIN, ci(-5), ci(3), NULL), "-5");
    EXPECT(call(RF_BI_INT_MAX, ci(-5), ci(3), NULL), "3");
    EXPECT(call(RF_BI_SHR, ci(INT64_MIN), ci(63), NULL), "-1");
    EXPECT(call(RF_BI_SHL, ci(1), ci(64), NULL), "ERROR:shift count 64 out of range (0 to 63) in int:shl[1, 64]");
    EXPECT(call(RF_BI_SHR, ci(1), ci(-1), NULL), "ERROR:shift count -1 out of range (0 to 63) in int:shr[1, -1]");
}

static void test_scalar_decimal(void)
{
    EXPECT(bin('+', cd(dec("1.25")), cd(dec("2.5"))), "3.75");
    EXPECT(bin('-', cd(dec("1.25")), cd(dec("2.5"))), "-1.25");
    EXPECT(bin('*', cd(dec("1.000005")), cd(dec("0.5"))), "0.500003"); /* half away from zero */
    EXPECT(bin('*', cd(dec("-1.000005")), cd(dec("0.5"))), "-0.500003");
    EXPECT(bin('*', cd(dec("1.000004")), cd(dec("0.5"))), "0.500002");
    EXPECT(bin('*', cd(dec("0.000001")), cd(dec("0.4"))), "0.00");
    EXPECT(bin('*', cd(dec("0.000001")), cd(dec("0.5"))), "0.000001");
    EXPECT(bin('*', cd(dec("-0.000001")), cd(dec("0.5"))), "-0.000001");
    EXPECT(bin('/', cd(dec("1")), cd(dec("3"))), "0.333333");
    EXPECT(bin('/', cd(dec("2")), cd(dec("3"))), "0.666667");
    EXPECT(bin('/', cd(dec("-2")), cd(dec("3"))), "-0.666667");
    EXPECT(bin('/', cd(dec("2")), cd(dec("-3"))), "-0.666667");
    EXPECT(bin('/', cd(dec("0.000001")), cd(dec("2"))), "0.000001");
    EXPECT(bin('/', cd(dec("1")), cd(dec("0"))), "ERROR:division by zero in 1.00 / 0.00");
    /* beyond the 64-bit fast paths: the exact 128-bit results */
    EXPECT(bin('*', cd(dec("9000000000000")), cd(dec("0.5"))), "4500000000000.00");
    EXPECT(bin('*', cd(dec("9223372036.854775")), cd(dec("1000"))), "9223372036854.775");
    EXPECT(bin('*', cd(dec("3037000.499976")), cd(dec("3037000.499976"))), "9223372036854.473976");
    EXPECT(bin('/', cd(dec("9000000000000")), cd(dec("0.5"))), "ERROR:decimal overflow in 9000000000000.00 / 0.50");
    EXPECT(bin('/', cd(dec("9000000000000")), cd(dec("3"))), "3000000000000.00");
    EXPECT(bin('*', cd(dec("9000000000000")), cd(dec("2"))), "ERROR:decimal overflow in 9000000000000.00 * 2.00");
    EXPECT(bin('+', cd(RF_DEC_MAX), cd(dec("0.000001"))), "ERROR:decimal overflow in 9223372036854.775807 + 0.000001");
    EXPECT(bin('-', cd(RF_DEC_MIN), cd(dec("0.000001"))), "ERROR:decimal overflow");
    EXPECT(neg(cd(RF_DEC_MIN)), "9223372036854.775807");
    EXPECT(neg(cd(dec("1.5"))), "-1.50");
    /* random operands: fast paths agree with rf_value.h */
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        int64_t a = (int64_t)(rnd() % 2000000000000ull) - 1000000000000, b = (int64_t)(rnd() % 20000000) - 10000000;
        if (i % 3 == 0) b = (int64_t)(rnd() % 2000000000000000ull) - 1000000000000000;
        char want[64], op = "+-*/"[i % 4];
        int64_t r;
        rf_status st = op == '+'   ? rf_val_dec_add(a, b, &r, NULL)
                       : op == '-' ? rf_val_dec_sub(a, b, &r, NULL)
                       : op == '*' ? rf_val_dec_mul(a, b, &r, NULL)
                                   : rf_val_dec_div(a, b, &r, NULL);
        if (st)
            snprintf(want, sizeof want, "ERROR:");
        else
            rf_val_write_dec(want, r);
        char got[256];
        eval_text(bin(op, cd(a), cd(b)), i % 2, got, sizeof got);
        if (st ? strncmp(got, "ERROR:", 6) != 0 : strcmp(got, want) != 0) {
            if (bad++ < 5)
                fprintf(stderr, "decimal %lld %c %lld: got %s want %s\n", (long long)a, op, (long long)b, got, want);
        }
    }
    CHECK(bad == 0);
}

/* The wide decimal (RF_TYPE_DEC128, totals beyond 64 bits): values made by
** widening decimals and ints, then arithmetic, narrowing, float, comparison. */
static rf_qp_expr *wd(const char *s) { return cast(RF_TYPE_DEC128, cd(dec(s))); }

static void test_scalar_wide(void)
{
    EXPECT(wd("1.5"), "1.50");
    EXPECT(cconst(RF_TYPE_DEC128, 1500000, 0), "1.50"); /* a wide constant holds a decimal's value */
    EXPECT(cast(RF_TYPE_DEC128, ci(INT64_MAX)), "9223372036854775807.00");
    EXPECT(cast(RF_TYPE_DEC128, ci(INT64_MIN)), "-9223372036854775808.00");
    EXPECT(bin('+', wd("9000000000000"), wd("9000000000000")), "18000000000000.00");
    EXPECT(bin('-', wd("-9000000000000"), wd("9000000000000.000001")), "-18000000000000.000001");
    EXPECT(bin('*', wd("9000000000000"), wd("9000000000000")), "81000000000000000000000000.00");
    EXPECT(bin('*', wd("-0.000001"), wd("0.5")), "-0.000001"); /* half away from zero */
    EXPECT(bin('*', wd("0.000001"), wd("0.4")), "0.00");
    EXPECT(bin('/', wd("1"), wd("3")), "0.333333");
    EXPECT(bin('/', wd("-2"), wd("3")), "-0.666667");
    EXPECT(bin('/', bin('*', wd("9000000000000"), wd("9000000000000")), wd("0.000003")),
           "27000000000000000000000000000000.00");
    EXPECT(bin('/', wd("1"), wd("0")), "ERROR:division by zero in 1.00 / 0.00");
    EXPECT(bin('*', bin('*', wd("9000000000000"), wd("9000000000000")), wd("9000000000000")),
           "ERROR:decimal overflow in 81000000000000000000000000.00 * 9000000000000.00");
    EXPECT(neg(bin('+', wd("9000000000000"), wd("0.5"))), "-9000000000000.50");
    /* narrowing: exact within decimal's range, the clear error beyond it */
    EXPECT(cast(RF_TYPE_DECIMAL, bin('-', wd("9000000000000"), wd("1"))), "8999999999999.00");
    EXPECT(cast(RF_TYPE_DECIMAL, bin('+', wd("9223372036854"), wd("0.775807"))), "9223372036854.775807");
    EXPECT(cast(RF_TYPE_DECIMAL, bin('+', wd("9223372036854"), wd("0.775808"))),
           "ERROR:decimal out of range: 9223372036854.775808 does not fit a 64-bit decimal");
    EXPECT(cast(RF_TYPE_DECIMAL, bin('-', wd("-9223372036854"), wd("0.775808"))), "ERROR:decimal out of range");
    /* to float: (double) of the units / 1e6, as decimal's */
    EXPECT(cast(RF_TYPE_FLOAT, bin('+', wd("9000000000000"), wd("9000000000000"))), "18000000000000.0");
    EXPECT(cast(RF_TYPE_FLOAT, wd("0.1")), "0.1");
    /* comparisons are exact where a float's would not be */
    EXPECT(cmp(RF_CMP_GT, bin('+', wd("9000000000000"), wd("9000000000000")), wd("9223372036854.775807")), "true");
    EXPECT(cmp(RF_CMP_LT, bin('+', wd("9000000000000"), wd("9000000000000")),
               bin('+', wd("9000000000000"), wd("9000000000000.000001"))), "true");
    EXPECT(cmp(RF_CMP_EQ, bin('*', wd("3"), wd("0.1")), wd("0.3")), "true");
    EXPECT(cmp(RF_CMP_NE, bin('*', wd("3"), wd("0.1")), wd("0.3")), "false");
    /* the evaluator agrees with rf_value.h on random operands beyond 64 bits */
    int bad = 0;
    for (int i = 0; i < 4000; i++) {
        int64_t a1 = (int64_t)(rnd() >> 1), a2 = (int64_t)(rnd() % 4000000000) + 1, b = (int64_t)(rnd() >> 2);
        if (i & 1) b = -b;
        char want[64], op = "+-*/"[i % 4];
        rf_dec128 a = (rf_dec128)a1 * a2, r;
        rf_status st = op == '+'   ? rf_val_dec128_add(a, b, &r, NULL)
                       : op == '-' ? rf_val_dec128_sub(a, b, &r, NULL)
                       : op == '*' ? rf_val_dec128_mul(a, b, &r, NULL)
                                   : rf_val_dec128_div(a, b, &r, NULL);
        if (st)
            snprintf(want, sizeof want, "ERROR:");
        else
            rf_val_write_dec128(want, r);
        /* a1 units times the int a2 (a2.000000) is a1 * a2 units, exactly a */
        rf_qp_expr *y = bin('*', cast(RF_TYPE_DEC128, cd(a1)), cast(RF_TYPE_DEC128, ci(a2)));
        char gy[256];
        eval_text(bin(op, y, cast(RF_TYPE_DEC128, cd(b))), i % 2, gy, sizeof gy);
        if (st ? strncmp(gy, "ERROR:", 6) != 0 : strcmp(gy, want) != 0) {
            if (bad++ < 5) fprintf(stderr, "wide %c: got %s want %s\n", op, gy, want);
        }
    }
    CHECK(bad == 0);
}

static void test_scalar_float_cast(void)
{
    EXPECT(bin('+', cf(0.1), cf(0.2)), "0.30000000000000004");
    EXPECT(bin('*', cf(1.5), cf(-2)), "-3.0");
    EXPECT(bin('/', cf(1), cf(0)), "inf"); /* plain IEEE */
    EXPECT(bin('/', cf(0), cf(0)), "nan");
    EXPECT(neg(cf(2.5)), "-2.5");
    EXPECT(cast(RF_TYPE_DECIMAL, ci(42)), "42.00");
    EXPECT(cast(RF_TYPE_DECIMAL, ci(INT64_C(9223372036855))), "ERROR:decimal overflow in int:decimal[9223372036855]");
    EXPECT(cast(RF_TYPE_FLOAT, ci(3)), "3.0");
    EXPECT(cast(RF_TYPE_FLOAT, cd(dec("0.1"))), "0.1");
    EXPECT(call(RF_BI_INT_FLOAT, ci(-7), NULL, NULL), "-7.0");
    EXPECT(call(RF_BI_INT_DECIMAL, ci(-7), NULL, NULL), "-7.00");
    EXPECT(call(RF_BI_INT_DECIMAL, ci(INT64_MIN), NULL, NULL),
           "ERROR:decimal overflow in int:decimal[-9223372036854775808]");
    EXPECT(call(RF_BI_DECIMAL_FLOAT, cd(dec("12.345")), NULL, NULL), "12.345");
    EXPECT(call(RF_BI_FLOAT_DECIMAL, cf(2.0000005), NULL, NULL), "2.000001");
    EXPECT(call(RF_BI_FLOAT_DECIMAL, cf(-2.5), NULL, NULL), "-2.50");
    EXPECT(call(RF_BI_FLOAT_DECIMAL, cf(1e300), NULL, NULL), "ERROR:decimal overflow in float:decimal[1e+300]");
}

static void test_scalar_strings(void)
{
    EXPECT(bin('+', cs("foo"), cs("bar")), "foobar");
    EXPECT(bin('+', cs(""), cs("bar")), "bar");
    EXPECT(bin('+', cs("foo"), cs("")), "foo");
    EXPECT(bin('+', bin('+', cs("a"), cs("é")), cs("b")), "aéb");
    EXPECT(call(RF_BI_LENGTH, cs("héllo"), NULL, NULL), "5");
    EXPECT(call(RF_BI_LENGTH, cs(""), NULL, NULL), "0");
    EXPECT(call(RF_BI_LENGTH, cs("日本語"), NULL, NULL), "3");
    EXPECT(call(RF_BI_SUBSTRING, cs("hello"), ci(1), ci(3)), "ell");
    EXPECT(call(RF_BI_SUBSTRING, cs("hello"), ci(0), ci(5)), "hello");
    EXPECT(call(RF_BI_SUBSTRING, cs("hello"), ci(3), ci(10)), "lo"); /* clipped */
    EXPECT(call(RF_BI_SUBSTRING, cs("hello"), ci(5), ci(2)), "");
    EXPECT(call(RF_BI_SUBSTRING, cs("hello"), ci(9), ci(2)), "");
    EXPECT(call(RF_BI_SUBSTRING, cs("hello"), ci(2), ci(0)), "");
    EXPECT(call(RF_BI_SUBSTRING, cs("hello"), ci(-2), ci(4)), "he"); /* [-2, 2) clipped to [0, 2) */
    EXPECT(call(RF_BI_SUBSTRING, cs("hello"), ci(1), ci(-1)), "");
    EXPECT(call(RF_BI_SUBSTRING, cs("hello"), ci(1), ci(INT64_MAX)), "ello");
    EXPECT(call(RF_BI_SUBSTRING, cs("日本語です"), ci(1), ci(2)), "本語");
    EXPECT(call(RF_BI_SUBSTRING, cs("aé"), ci(1), ci(1)), "é");
    EXPECT(call(RF_BI_LENGTH, call(RF_BI_SUBSTRING, bin('+', cs("ab"), cs("日本")), ci(1), ci(2)), NULL, NULL), "2");
    EXPECT(cmp(RF_CMP_EQ, bin('+', cs("ab"), cs("c")), bin('+', cs("a"), cs("bc"))), "true");
    EXPECT(cmp(RF_CMP_EQ, bin('+', cs("ab"), cs("c")), cs("abc")), "true");
    EXPECT(cmp(RF_CMP_NE, call(RF_BI_SUBSTRING, cs("xabc"), ci(1), ci(3)), cs("abc")), "false");
    EXPECT(cmp(RF_CMP_LT, bin('+', cs("ab"), cs("c")), bin('+', cs("ab"), cs("d"))), "true");
}

static void test_scalar_like(void)
{
    struct {
        const char *s, *p;
        int want;
    } cases[] = {
        {"", "", 1},
        {"a", "", 0},
        {"", "%", 1},
        {"abc", "%", 1},
        {"", "_", 0},
        {"a", "_", 1},
        {"ab", "_", 0},
        {"abc", "abc", 1},
        {"abc", "ab", 0},
        {"ab", "abc", 0},
        {"abc", "a%", 1},
        {"abc", "%c", 1},
        {"abc", "%b%", 1},
        {"abc", "%d%", 0},
        {"abc", "a_c", 1},
        {"abc", "a__", 1},
        {"abc", "a___", 0},
        {"abc", "%%", 1},
        {"abc", "a%%c", 1},
        {"ABC", "abc", 0},
        {"é", "_", 1},
        {"é", "__", 0},
        {"aéb", "a_b", 1},
        {"aéb", "a%b", 1},
        {"日本語", "_本_", 1},
        {"日本語", "%語", 1},
        {"日本語", "日%", 1},
        {"日本語", "%_語", 1},
        {"x", "%_%", 1},
        {"", "%_%", 0},
        {"aaa", "%aa", 1},
        {"aab", "%ab", 1},
        {"abab", "%ab%ab", 1},
        {"abab", "%ab%ab%ab", 0},
        {"mississippi", "%iss%ppi", 1},
        {"mississippi", "m%ss%ss%", 1},
        {"mississippi", "%ss_pp%", 1},
        {"mississippi", "%ss__pp%", 0},
        {"mississippi", "%s_i%", 1},
        {"a%b", "a%b", 1},
        {"special requests", "%special%requests%", 1},
        {"requests special", "%special%requests%", 0},
        {"ab", "a%%%b", 1},
        {"éa", "%__", 1},
        {"é", "%__", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[256];
        snprintf(line, sizeof line, "%s", cases[i].want ? "true" : "false");
        expect(__LINE__ * 1000 + (int)i, like(cs(cases[i].s), cs(cases[i].p)), line);
        expect(__LINE__ * 1000 + (int)i, not1(like(cs(cases[i].s), cs(cases[i].p))), cases[i].want ? "false" : "true");
    }
    /* random strings and patterns: the constant-pattern path (fast matcher,
    ** per-code cache) agrees with the general one (the pattern a column) */
    const char *alpha[] = {"a", "b", "é", "日", "%", "_"};
    int bad = 0;
    for (int i = 0; i < 3000; i++) {
        char s[64] = "", p[64] = "";
        int ls = (int)(rnd() % 7), lp = (int)(rnd() % 6);
        for (int k = 0; k < ls; k++) strcat(s, alpha[rnd() % 3 + (rnd() % 4 == 0)]);
        for (int k = 0; k < lp; k++) strcat(p, alpha[rnd() % 6]);
        char a[64], b[64];
        rf_qp_expr *e = like(cs(s), cs(p));
        eval_text(e, 0, a, sizeof a);
        eval_text(e, 1, b, sizeof b);
        if (strcmp(a, b)) {
            if (bad++ < 5) fprintf(stderr, "like(\"%s\", \"%s\"): constant %s, column %s\n", s, p, a, b);
        }
    }
    CHECK(bad == 0);
}

static void test_scalar_dates(void)
{
    EXPECT(call(RF_BI_ADD_MONTHS, cdate("1996-01-31"), ci(1), NULL), "1996-02-29");
    EXPECT(call(RF_BI_ADD_MONTHS, cdate("1995-01-31"), ci(1), NULL), "1995-02-28");
    EXPECT(call(RF_BI_ADD_MONTHS, cdate("1995-03-31"), ci(-1), NULL), "1995-02-28");
    EXPECT(call(RF_BI_ADD_MONTHS, cdate("1995-12-15"), ci(1), NULL), "1996-01-15");
    EXPECT(call(RF_BI_ADD_MONTHS, cdate("1995-10-31"), ci(3), NULL), "1996-01-31");
    EXPECT(call(RF_BI_ADD_YEARS, cdate("1996-02-29"), ci(1), NULL), "1997-02-28");
    EXPECT(call(RF_BI_ADD_YEARS, cdate("1996-02-29"), ci(4), NULL), "2000-02-29");
    EXPECT(call(RF_BI_ADD_DAYS, cdate("1996-02-28"), ci(1), NULL), "1996-02-29");
    EXPECT(call(RF_BI_ADD_DAYS, cdate("1995-12-31"), ci(1), NULL), "1996-01-01");
    EXPECT(call(RF_BI_ADD_DAYS, cdate("1995-01-01"), ci(-1), NULL), "1994-12-31");
    EXPECT(call(RF_BI_ADD_DAYS, cdate("9999-12-31"), ci(1), NULL),
           "ERROR:date out of range in date:add_days[9999-12-31, 1]");
    EXPECT(call(RF_BI_ADD_MONTHS, cdate("0001-01-31"), ci(-1), NULL),
           "ERROR:date out of range in date:add_months[0001-01-31, -1]");
    EXPECT(call(RF_BI_ADD_YEARS, cdate("2000-01-01"), ci(INT64_MAX), NULL), "ERROR:date out of range");
    EXPECT(call(RF_BI_YEAR, cdate("1998-12-01"), NULL, NULL), "1998");
    EXPECT(call(RF_BI_MONTH, cdate("1998-12-01"), NULL, NULL), "12");
    EXPECT(call(RF_BI_DAY, cdate("1998-12-01"), NULL, NULL), "1");
    EXPECT(call(RF_BI_YEAR, cdate("0001-01-01"), NULL, NULL), "1");
    EXPECT(call(RF_BI_DATE_PARSE, cs("1995-03-15"), NULL, NULL), "1995-03-15");
    EXPECT(call(RF_BI_DATE_PARSE, cs("1995-02-29"), NULL, NULL), "ERROR:invalid date in date:parse[\"1995-02-29\"]");
    EXPECT(cmp(RF_CMP_LT, cdate("1995-03-15"), cdate("1995-03-16")), "true");
    EXPECT(cmp(RF_CMP_GE, cdate("1995-03-15"), cdate("1995-03-16")), "false");
}

static void test_scalar_cmp_logic(void)
{
    const char *names[] = {"=", "!=", "<", "<=", ">", ">="};
    (void)names;
    /* every operator on every type: a < b, a = a */
    struct {
        rf_qp_expr *lo, *hi;
    } pairs[] = {
        {ci(-5), ci(3)},
        {cd(dec("1.5")), cd(dec("1.500001"))},
        {cf(-0.5), cf(1e-300)},
        {cs("B"), cs("a")}, /* bytes: upper case first */
        {cs("abc"), cs("abd")},
        {cs("ab"), cs("abc")}, /* a proper prefix first */
        {cs("z"), cs("é")},    /* UTF-8 byte order is code point order */
        {cdate("1995-01-01"), cdate("1995-01-02")},
        {cb(0), cb(1)},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        rf_qp_expr *a = pairs[i].lo, *b = pairs[i].hi;
        const char *lt[6] = {"false", "true", "true", "true", "false", "false"};
        const char *eq[6] = {"true", "false", "false", "true", "false", "true"};
        const char *gt[6] = {"false", "true", "false", "false", "true", "true"};
        for (int op = 0; op < 6; op++) {
            expect(__LINE__ * 100 + (int)i * 10 + op, cmp((rf_cmp_op)op, a, b), lt[op]);
            expect(__LINE__ * 100 + (int)i * 10 + op, cmp((rf_cmp_op)op, a, a), eq[op]);
            expect(__LINE__ * 100 + (int)i * 10 + op, cmp((rf_cmp_op)op, b, a), gt[op]);
        }
    }
    /* floats compare in rf_val_cmp_float's total order */
    EXPECT(cmp(RF_CMP_EQ, cf(0.0), cf(-0.0)), "true");
    EXPECT(cmp(RF_CMP_EQ, bin('/', cf(0), cf(0)), bin('/', cf(0), cf(0))), "true");
    EXPECT(cmp(RF_CMP_GT, bin('/', cf(0), cf(0)), bin('/', cf(1), cf(0))), "true");
    EXPECT(and2(cb(1), cb(1)), "true");
    EXPECT(and2(cb(1), cb(0)), "false");
    EXPECT(not1(and2(cb(0), cb(1))), "true");
    EXPECT(not1(cb(1)), "false");
    /* a conjunct is only evaluated where the earlier ones held */
    EXPECT(and2(cmp(RF_CMP_NE, ci(0), ci(0)), cmp(RF_CMP_GT, bin('/', ci(1), ci(0)), ci(0))), "false");
    EXPECT(and2(cmp(RF_CMP_EQ, ci(0), ci(0)), cmp(RF_CMP_GT, bin('/', ci(1), ci(0)), ci(0))), "ERROR:division by zero");
}

/* A relation of one column per type from arrays. */
static rf_type T_INT1[] = {RF_TYPE_INT};

static void rel_ints(rf_rt_rel *r, const int64_t *v, int64_t n)
{
    rf_rt_rel_alloc(r, 1, T_INT1, n);
    if (n) memcpy(r->cols[0], v, (size_t)n * 8);
}

static rf_status run_map(const rf_qp_expr *filter, rf_qp_expr **outs, int32_t nouts, const rf_type *types,
                         const rf_rt_rel *in0, const int64_t *rows0, const rf_rt_rel *in1, const int64_t *rows1,
                         int64_t n, int threads, rf_rt_rel *res, rf_diags *d)
{
    rf_rt_eval_ctx ctx = {D, threads, rf_mkloc("t.logic", 7, 2), "k2"};
    rf_rt_side sides[2] = {{in0, rows0}, {in1, rows1}};
    rf_diags_init(d);
    return rf_rt_eval_map(&ctx, filter, outs, nouts, types, sides, n, res, d);
}

static void test_filters_and_joins(void)
{
    int64_t v[100];
    for (int i = 0; i < 100; i++) v[i] = i - 50;
    rf_rt_rel r;
    rel_ints(&r, v, 100);
    rf_qp_expr *x = col(0, 0, RF_TYPE_INT);
    rf_qp_expr *outs[2] = {bin('*', x, ci(2)), cmp(RF_CMP_GT, x, ci(0))};
    rf_type ot[2] = {RF_TYPE_INT, RF_TYPE_BOOL};
    rf_rt_rel res;
    rf_diags d;
    /* none, some, all */
    CHECK(run_map(cmp(RF_CMP_LT, x, ci(-100)), outs, 2, ot, &r, NULL, NULL, NULL, 100, 1, &res, &d) == RF_OK);
    CHECK(res.nrows == 0 && res.ncols == 2);
    rf_rt_rel_free(&res);
    rf_diags_free(&d);
    CHECK(run_map(cmp(RF_CMP_GE, x, ci(40)), outs, 2, ot, &r, NULL, NULL, NULL, 100, 1, &res, &d) == RF_OK);
    CHECK(res.nrows == 10);
    CHECK(res.nrows == 10 && ((int64_t *)res.cols[0])[0] == 80 && ((int64_t *)res.cols[0])[9] == 98 &&
          ((uint8_t *)res.cols[1])[9] == 1);
    rf_rt_rel_free(&res);
    rf_diags_free(&d);
    CHECK(run_map(cmp(RF_CMP_GE, x, ci(-50)), outs, 2, ot, &r, NULL, NULL, NULL, 100, 1, &res, &d) == RF_OK);
    CHECK(res.nrows == 100 && ((int64_t *)res.cols[0])[0] == -100 && ((uint8_t *)res.cols[1])[50] == 0);
    rf_rt_rel_free(&res);
    rf_diags_free(&d);
    /* x != 0 and 100 / x > 10: no division by zero */
    rf_qp_expr *f = and2(cmp(RF_CMP_NE, x, ci(0)), cmp(RF_CMP_GT, bin('/', ci(100), x), ci(10)));
    CHECK(run_map(f, outs, 1, ot, &r, NULL, NULL, NULL, 100, 1, &res, &d) == RF_OK);
    CHECK(res.nrows == 9 && ((int64_t *)res.cols[0])[0] == 2 && ((int64_t *)res.cols[0])[8] == 18);
    rf_rt_rel_free(&res);
    rf_diags_free(&d);
    /* not (x < 0 and x > -3): every row but -2, -1 */
    f = not1(and2(cmp(RF_CMP_LT, x, ci(0)), cmp(RF_CMP_GT, x, ci(-3))));
    CHECK(run_map(f, outs, 1, ot, &r, NULL, NULL, NULL, 100, 1, &res, &d) == RF_OK);
    CHECK(res.nrows == 98 && ((int64_t *)res.cols[0])[47] == -6 && ((int64_t *)res.cols[0])[48] == 0);
    rf_rt_rel_free(&res);
    rf_diags_free(&d);
    /* a conjunction as a value, under a selection */
    rf_qp_expr *o3[1] = {and2(cmp(RF_CMP_GT, x, ci(45)), cmp(RF_CMP_LT, x, ci(48)))};
    rf_type bt[1] = {RF_TYPE_BOOL};
    CHECK(run_map(cmp(RF_CMP_GT, x, ci(40)), o3, 1, bt, &r, NULL, NULL, NULL, 100, 1, &res, &d) == RF_OK);
    {
        const uint8_t *b = res.nrows == 9 ? res.cols[0] : NULL;
        CHECK(b && !b[0] && !b[4] && b[5] && b[6] && !b[7] && !b[8]);
    }
    rf_rt_rel_free(&res);
    rf_diags_free(&d);
    /* a filter only (no outputs) still counts rows */
    CHECK(run_map(cmp(RF_CMP_GE, x, ci(0)), NULL, 0, NULL, &r, NULL, NULL, NULL, 100, 1, &res, &d) == RF_OK);
    CHECK(res.nrows == 50 && res.ncols == 0);
    rf_rt_rel_free(&res);
    rf_diags_free(&d);
    /* an empty input */
    CHECK(run_map(NULL, outs, 2, ot, &r, NULL, NULL, NULL, 0, 4, &res, &d) == RF_OK);
    CHECK(res.nrows == 0 && res.ncols == 2);
    rf_rt_rel_free(&res);
    rf_diags_free(&d);

    /* join pairs: two sides read through row index arrays */
    rf_type lt[2] = {RF_TYPE_INT, RF_TYPE_STRING}, rt[2] = {RF_TYPE_DECIMAL, RF_TYPE_STRING};
    rf_rt_rel L, R;
    rf_rt_rel_alloc(&L, 2, lt, 3);
    rf_rt_rel_alloc(&R, 2, rt, 2);
    const char *ln[] = {"ant", "bee", "cat"}, *rn[] = {"-x", "-y"};
    for (int i = 0; i < 3; i++) {
        ((int64_t *)L.cols[0])[i] = 10 * (i + 1);
        rf_rt_dict_intern(D, ln[i], 3, &((uint32_t *)L.cols[1])[i]);
    }
    for (int i = 0; i < 2; i++) {
        ((int64_t *)R.cols[0])[i] = dec(i ? "0.25" : "1.5");
        rf_rt_dict_intern(D, rn[i], 2, &((uint32_t *)R.cols[1])[i]);
    }
    int64_t ra[] = {0, 0, 1, 2, 2}, rb[] = {1, 0, 1, 0, 1};
    rf_qp_expr *jo[2] = {bin('*', cast(RF_TYPE_DECIMAL, col(0, 0, RF_TYPE_INT)), col(1, 0, RF_TYPE_DECIMAL)),
                         bin('+', col(0, 1, RF_TYPE_STRING), col(1, 1, RF_TYPE_STRING))};
    rf_type jt[2] = {RF_TYPE_DECIMAL, RF_TYPE_STRING};
    rf_qp_expr *jf = cmp(RF_CMP_NE, col(0, 1, RF_TYPE_STRING), cs("bee"));
    CHECK(run_map(jf, jo, 2, jt, &L, ra, &R, rb, 5, 2, &res, &d) == RF_OK);
    const char *wantj[] = {"2.50|ant-y", "15.00|ant-x", "45.00|cat-x", "7.50|cat-y"};
    CHECK(res.nrows == 4);
    for (int64_t i = 0; i < res.nrows && i < 4; i++) {
        char a[64], b[64], line[160];
        text_of(&res, 0, i, a, sizeof a);
        text_of(&res, 1, i, b, sizeof b);
        snprintf(line, sizeof line, "%s|%s", a, b);
        CHECK(strcmp(line, wantj[i]) == 0);
    }
    rf_rt_rel_free(&res);
    rf_diags_free(&d);
    /* a bad plan is an internal error, not a crash */
    rf_qp_expr *badc[1] = {col(1, 5, RF_TYPE_INT)};
    CHECK(run_map(NULL, badc, 1, T_INT1, &L, NULL, &R, NULL, 3, 1, &res, &d) == RF_EINTERNAL);
    CHECK(d.count == 1 && strstr(d.items[0].msg, "internal error") != NULL);
    rf_diags_free(&d);
    rf_rt_rel_free(&L);
    rf_rt_rel_free(&R);
    rf_rt_rel_free(&r);
}

/* 100k rows of mixed data; the same results, codes and dictionary for any
** thread count. */
#define NBIG 100000

typedef struct big {
    rf_rt_rel rel;
    rf_type types[5];
} big;

static void make_big(big *b, rf_rt_dict *d)
{
    b->types[0] = RF_TYPE_INT;
    b->types[1] = RF_TYPE_DECIMAL;
    b->types[2] = RF_TYPE_STRING;
    b->types[3] = RF_TYPE_DATE;
    b->types[4] = RF_TYPE_FLOAT;
    rf_rt_rel_alloc(&b->rel, 5, b->types, NBIG);
    rng_state = 12345;
    for (int64_t i = 0; i < NBIG; i++) {
        ((int64_t *)b->rel.cols[0])[i] = (int64_t)(rnd() % 1000) - 500;
        ((int64_t *)b->rel.cols[1])[i] = (int64_t)(rnd() % 100000000);
        char t[40];
        int l = snprintf(t, sizeof t, "item %d é%d", (int)(rnd() % 3000), (int)(i % 7));
        rf_rt_dict_intern(d, t, l, &((uint32_t *)b->rel.cols[2])[i]);
        ((int32_t *)b->rel.cols[3])[i] = 9000 + (int32_t)(rnd() % 2000);
        ((double *)b->rel.cols[4])[i] = (double)(rnd() % 1000) / 7.0;
    }
}

static void test_threads_identical(void)
{
    rf_rt_rel res[3];
    rf_rt_dict *dicts[3];
    int th[3] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        dicts[t] = rf_rt_dict_new();
        rf_rt_dict *saved = D;
        D = dicts[t];
        big b;
        make_big(&b, D);
        rf_qp_expr *i = col(0, 0, RF_TYPE_INT), *m = col(0, 1, RF_TYPE_DECIMAL), *s = col(0, 2, RF_TYPE_STRING),
                   *dt = col(0, 3, RF_TYPE_DATE), *fl = col(0, 4, RF_TYPE_FLOAT);
        rf_qp_expr *filter = and2(not1(like(s, cs("%7 é%"))), cmp(RF_CMP_LE, dt, cdate("1997-01-01")));
        rf_qp_expr *outs[9] = {
            bin('*', m, bin('-', cd(dec("1")), cast(RF_TYPE_DECIMAL, i))),
            bin('+', call(RF_BI_SUBSTRING, s, ci(5), ci(3)), cs("/new")), /* new strings */
            call(RF_BI_SUBSTRING, s, ci(0), ci(6)),                       /* mostly existing ones */
            call(RF_BI_ADD_MONTHS, dt, i, NULL),
            call(RF_BI_LENGTH, s, NULL, NULL),
            bin('/', fl, cast(RF_TYPE_FLOAT, i)),
            s,
            cmp(RF_CMP_LT, s, call(RF_BI_SUBSTRING, s, ci(1), ci(4))),
            bin('/', m, cd(dec("3"))),
        };
        /* static: the results borrow it */
        static const rf_type ot[9] = {RF_TYPE_DECIMAL, RF_TYPE_STRING, RF_TYPE_STRING, RF_TYPE_DATE,   RF_TYPE_INT,
                                      RF_TYPE_FLOAT,   RF_TYPE_STRING, RF_TYPE_BOOL,   RF_TYPE_DECIMAL};
        rf_diags d;
        CHECK(run_map(filter, outs, 9, ot, &b.rel, NULL, NULL, NULL, NBIG, th[t], &res[t], &d) == RF_OK);
        rf_diags_free(&d);
        rf_rt_rel_free(&b.rel);
        D = saved;
    }
    CHECK(res[0].nrows > NBIG / 3 && res[0].nrows < NBIG);
    for (int t = 1; t < 3; t++) {
        CHECK(res[t].nrows == res[0].nrows);
        CHECK(rf_rt_dict_count(dicts[t]) == rf_rt_dict_count(dicts[0]));
        if (res[t].nrows != res[0].nrows) continue;
        for (int c = 0; c < 9; c++)
            CHECK(memcmp(res[t].cols[c], res[0].cols[c],
                         (size_t)res[0].nrows * (size_t)rf_rt_type_width(res[0].types[c])) == 0);
        int bad = 0;
        for (int64_t k = 0; k < rf_rt_dict_count(dicts[0]); k++) {
            int64_t n1, n2;
            const char *s1 = rf_rt_dict_str(dicts[0], (uint32_t)k, &n1),
                       *s2 = rf_rt_dict_str(dicts[t], (uint32_t)k, &n2);
            bad += !(n1 == n2 && memcmp(s1, s2, (size_t)n1) == 0);
        }
        CHECK(bad == 0);
    }
    /* two sides through row index arrays (join pairs), on 1, 2 and 4 threads */
    {
        rf_rt_dict *saved = D;
        D = dicts[0];
        big b;
        make_big(&b, D);
        static const rf_type st2[2] = {RF_TYPE_INT, RF_TYPE_STRING};
        rf_rt_rel small;
        rf_rt_rel_alloc(&small, 2, st2, 10);
        for (int k = 0; k < 10; k++) {
            char t[8];
            ((int64_t *)small.cols[0])[k] = k * 100;
            snprintf(t, sizeof t, "s%d", k);
            rf_rt_dict_intern(D, t, 2, &((uint32_t *)small.cols[1])[k]);
        }
        int64_t *ra = malloc(NBIG * sizeof *ra), *rb = malloc(NBIG * sizeof *rb);
        for (int64_t k = 0; k < NBIG; k++) {
            ra[k] = NBIG - 1 - k;
            rb[k] = k % 10;
        }
        rf_qp_expr *jo[3] = {
            bin('+', col(0, 0, RF_TYPE_INT), col(1, 0, RF_TYPE_INT)),
            bin('+', col(1, 1, RF_TYPE_STRING), call(RF_BI_SUBSTRING, col(0, 2, RF_TYPE_STRING), ci(5), ci(2))),
            col(0, 3, RF_TYPE_DATE)};
        static const rf_type jt[3] = {RF_TYPE_INT, RF_TYPE_STRING, RF_TYPE_DATE};
        rf_qp_expr *jf = cmp(RF_CMP_LT, col(0, 0, RF_TYPE_INT), col(1, 0, RF_TYPE_INT));
        rf_rt_rel jr[3];
        for (int t = 0; t < 3; t++) {
            rf_diags d;
            CHECK(run_map(jf, jo, 3, jt, &b.rel, ra, &small, rb, NBIG, th[t], &jr[t], &d) == RF_OK);
            rf_diags_free(&d);
        }
        CHECK(jr[0].nrows > 0 && jr[0].nrows < NBIG);
        for (int t = 1; t < 3; t++) {
            CHECK(jr[t].nrows == jr[0].nrows);
            for (int c = 0; c < 3 && jr[t].nrows == jr[0].nrows; c++)
                CHECK(memcmp(jr[t].cols[c], jr[0].cols[c], (size_t)jr[0].nrows * (size_t)rf_rt_type_width(jt[c])) == 0);
        }
        /* the first output row is the last input row paired with small row 0 */
        int64_t first = 0;
        while (first < NBIG && !(((int64_t *)b.rel.cols[0])[ra[first]] < ((int64_t *)small.cols[0])[rb[first]]))
            first++;
        CHECK(jr[0].nrows > 0 && ((int64_t *)jr[0].cols[0])[0] ==
                                     ((int64_t *)b.rel.cols[0])[ra[first]] + ((int64_t *)small.cols[0])[rb[first]]);
        for (int t = 0; t < 3; t++) rf_rt_rel_free(&jr[t]);
        free(ra);
        free(rb);
        rf_rt_rel_free(&small);
        rf_rt_rel_free(&b.rel);
        D = saved;
    }
    /* spot checks against a direct computation */
    {
        rf_rt_dict *saved = D;
        D = dicts[0];
        char a[64];
        int ok = 1;
        for (int64_t r = 0; r < res[0].nrows && ok; r += 997) {
            char s[64], sub[64];
            text_of(&res[0], 6, r, s, sizeof s);
            text_of(&res[0], 1, r, a, sizeof a);
            /* characters 5 and 6 are ASCII digits or a blank */
            snprintf(sub, sizeof sub, "%.2s", s + 5);
            size_t la = strlen(a);
            ok = strncmp(a, sub, 2) == 0 && la > 4 && strcmp(a + la - 4, "/new") == 0 && strstr(s, "7 é") == NULL;
        }
        CHECK(ok);
        D = saved;
    }
    for (int t = 0; t < 3; t++) {
        rf_rt_rel_free(&res[t]);
        rf_rt_dict_free(dicts[t]);
    }
}

/* The first failing row wins whatever the thread count and the batches. */
static void test_first_error(void)
{
    int64_t n = 60000;
    rf_type tt[2] = {RF_TYPE_INT, RF_TYPE_INT};
    rf_rt_rel r;
    rf_rt_rel_alloc(&r, 2, tt, n);
    int64_t *x = r.cols[0], *y = r.cols[1];
    for (int64_t i = 0; i < n; i++) {
        x[i] = 1 + i % 5;
        y[i] = i;
    }
    x[20600] = 0;                /* the filter divides by it */
    y[20100] = INT64_C(1) << 62; /* the output doubles it */
    x[50000] = 0;
    rf_qp_expr *cx = col(0, 0, RF_TYPE_INT), *cy = col(0, 1, RF_TYPE_INT);
    rf_qp_expr *f = cmp(RF_CMP_GT, bin('/', ci(10), cx), ci(0));
    rf_qp_expr *o[1] = {bin('*', cy, ci(2))};
    for (int th = 1; th <= 4; th++) {
        rf_rt_rel res;
        rf_diags d;
        CHECK(run_map(f, o, 1, T_INT1, &r, NULL, NULL, NULL, n, th, &res, &d) == RF_EUSER);
        CHECK(d.count == 1 && strcmp(d.items[0].msg, "integer overflow in 4611686018427387904 * 2") == 0);
        if (th == 1 && d.count) {
            FILE *tf = tmpfile();
            rf_diags_print(&d, tf);
            rewind(tf);
            char line[256] = "";
            CHECK(fgets(line, sizeof line, tf) != NULL);
            CHECK(strcmp(line, "t.logic:7:2: error: integer overflow in 4611686018427387904 * 2\n") == 0);
            fclose(tf);
        }
        rf_diags_free(&d);
    }
    y[20100] = 5;
    for (int th = 1; th <= 4; th++) {
        rf_rt_rel res;
        rf_diags d;
        CHECK(run_map(f, o, 1, T_INT1, &r, NULL, NULL, NULL, n, th, &res, &d) == RF_EUSER);
        CHECK(d.count == 1 && strcmp(d.items[0].msg, "division by zero in 10 / 0") == 0);
        rf_diags_free(&d);
    }
    rf_rt_rel_free(&r);
}

/* The error pass (rf_rt_eval_map_all): every row evaluated, each
** expression's first failure in a row listed with the row's place in the
** output, whatever the thread count. */
static void test_all_errors(void)
{
    int64_t n = 60000;
    rf_type tt[2] = {RF_TYPE_INT, RF_TYPE_INT}, ot[3] = {RF_TYPE_INT, RF_TYPE_INT, RF_TYPE_INT};
    rf_rt_rel r;
    rf_rt_rel_alloc(&r, 2, tt, n);
    int64_t *x = r.cols[0], *y = r.cols[1];
    for (int64_t i = 0; i < n; i++) {
        x[i] = 1 + i % 5;
        y[i] = i;
    }
    x[20600] = x[50000] = 0;                       /* the filter divides by them */
    y[20100] = y[30000] = INT64_C(1) << 62;        /* every output overflows there */
    rf_qp_expr *cx = col(0, 0, RF_TYPE_INT), *cy = col(0, 1, RF_TYPE_INT);
    rf_qp_expr *f = cmp(RF_CMP_GT, bin('/', ci(10), cx), ci(0));
    /* (the third fails twice in a row: its first failure is listed) */
    rf_qp_expr *o[3] = {bin('*', cy, ci(2)), bin('*', cy, ci(3)), bin('+', bin('*', cy, ci(2)), bin('*', cy, ci(4)))};
    for (int th = 1; th <= 4; th++) {
        rf_rt_eval_ctx ctx = {D, th, rf_mkloc("t.logic", 7, 2), "k2"};
        rf_rt_side sides[2] = {{&r, NULL}, {NULL, NULL}};
        rf_rt_rel res;
        rf_diags d;
        rf_diags_init(&d);
        rf_rt_eval_failure *fl = NULL;
        int64_t nf = -1;
        CHECK(rf_rt_eval_map_all(&ctx, f, o, 3, ot, sides, n, &res, &fl, &nf, &d) == RF_OK);
        CHECK(d.count == 0 && res.nrows == n - 2 && nf == 8);
        int seen = 0;
        for (int64_t i = 0; i < nf; i++) {
            const rf_rt_eval_failure *e = &fl[i];
            if (e->expr < 0) {
                CHECK((e->row == 20600 || e->row == 50000) && e->pos == -1 &&
                      strcmp(e->msg, "division by zero in 10 / 0") == 0);
                seen |= e->row == 20600 ? 1 : 2;
                continue;
            }
            CHECK(e->row == 20100 || e->row == 30000);
            CHECK(e->pos == (e->row == 20100 ? 20100 : 29999));
            CHECK(strcmp(e->msg, e->expr == 1 ? "integer overflow in 4611686018427387904 * 3"
                                              : "integer overflow in 4611686018427387904 * 2") == 0);
            seen |= 1 << (2 + e->expr + 3 * (e->row == 30000));
        }
        CHECK(seen == 0xff);
        rf_rt_eval_failures_free(fl, nf);
        rf_rt_rel_free(&res);
        rf_diags_free(&d);
    }
    rf_rt_rel_free(&r);
}

/* ---- output tests ----------------------------------------------------------- */

static char *capture(const rf_rt_rel *r, const char *const *names, rf_rt_format f)
{
    FILE *tf = tmpfile();
    CHECK(rf_rt_write_rel(r, names, D, f, tf) == RF_OK);
    long n = ftell(tf);
    rewind(tf);
    char *s = calloc((size_t)n + 1, 1);
    if (fread(s, 1, (size_t)n, tf) != (size_t)n) s[0] = 0;
    fclose(tf);
    return s;
}

/* RFC 4180: quoted only where needed, quotes doubled, no backslash escapes,
** and a one-column empty string that is not a blank line. */
static void test_output_rfc_csv(void)
{
    rf_type t[3] = {RF_TYPE_INT, RF_TYPE_STRING, RF_TYPE_DECIMAL};
    rf_rt_rel r;
    rf_rt_rel_alloc(&r, 3, t, 6);
    const char *sv[6] = {"plain", "a,b", "say \"hi\"", "two\nlines", "cr\rhere", "back\\slash|pipe"};
    for (int i = 0; i < 6; i++) {
        ((int64_t *)r.cols[0])[i] = i - 2;
        rf_rt_dict_intern(D, sv[i], (int64_t)strlen(sv[i]), &((uint32_t *)r.cols[1])[i]);
        ((int64_t *)r.cols[2])[i] = dec("-1.5");
    }
    const char *names[3] = {"id", "na,me", NULL};
    char *csv = capture(&r, names, RF_RT_FORMAT_CSV);
    const char *want = "id,\"na,me\",col3\n"
                       "-2,plain,-1.50\n"
                       "-1,\"a,b\",-1.50\n"
                       "0,\"say \"\"hi\"\"\",-1.50\n"
                       "1,\"two\nlines\",-1.50\n"
                       "2,\"cr\rhere\",-1.50\n"
                       "3,back\\slash|pipe,-1.50\n";
    CHECK(strcmp(csv, want) == 0);
    if (strcmp(csv, want)) fprintf(stderr, "rfc csv:\n%s", csv);
    free(csv);
    rf_rt_rel_free(&r);
    rf_type ts[1] = {RF_TYPE_STRING};
    rf_rt_rel_alloc(&r, 1, ts, 2);
    rf_rt_dict_intern(D, "", 0, &((uint32_t *)r.cols[0])[0]);
    rf_rt_dict_intern(D, "x", 1, &((uint32_t *)r.cols[0])[1]);
    const char *n1[1] = {"s"};
    csv = capture(&r, n1, RF_RT_FORMAT_CSV);
    CHECK(strcmp(csv, "s\n\"\"\nx\n") == 0);
    free(csv);
    rf_rt_rel_free(&r);
}

static void test_output(void)
{
    rf_type t[6] = {RF_TYPE_INT, RF_TYPE_STRING, RF_TYPE_DECIMAL, RF_TYPE_FLOAT, RF_TYPE_DATE, RF_TYPE_BOOL};
    rf_rt_rel r;
    rf_rt_rel_alloc(&r, 6, t, 3);
    int64_t iv[3] = {1, -42, 1234567};
    const char *sv[3] = {"plain", "naïve|x", "two\nlines"};
    const char *dv[3] = {"1.5", "-0.1234", "1000000"};
    double fv[3] = {0.1, -2, 1e20};
    const char *tv[3] = {"1995-03-15", "2000-02-29", "0001-01-01"};
    for (int i = 0; i < 3; i++) {
        ((int64_t *)r.cols[0])[i] = iv[i];
        rf_rt_dict_intern(D, sv[i], (int64_t)strlen(sv[i]), &((uint32_t *)r.cols[1])[i]);
        ((int64_t *)r.cols[2])[i] = dec(dv[i]);
        ((double *)r.cols[3])[i] = fv[i];
        rf_val_parse_date(tv[i], 10, &((int32_t *)r.cols[4])[i], NULL);
        ((uint8_t *)r.cols[5])[i] = (uint8_t)(i != 1);
    }
    const char *names[6] = {"id", "name", "price", "ratio", NULL, "ok"};
    char *csv = capture(&r, names, RF_RT_FORMAT_TBL);
    const char *want_csv = "id|name|price|ratio|col5|ok\n"
                           "1|plain|1.50|0.1|1995-03-15|true\n"
                           "-42|\"naïve|x\"|-0.1234|-2.0|2000-02-29|false\n"
                           "1234567|\"two\nlines\"|1000000.00|1e+20|0001-01-01|true\n";
    CHECK(strcmp(csv, want_csv) == 0);
    if (strcmp(csv, want_csv)) fprintf(stderr, "csv:\n%s", csv);
    char *tab = capture(&r, names, RF_RT_FORMAT_TABLE);
    const char *want_tab = "     id  name             price  ratio  col5        ok\n"
                           "-------  ----------  ----------  -----  ----------  -----\n"
                           "      1  plain             1.50    0.1  1995-03-15  true\n"
                           "    -42  naïve\\|x       -0.1234   -2.0  2000-02-29  false\n"
                           "1234567  two\\nlines  1000000.00  1e+20  0001-01-01  true\n";
    CHECK(strcmp(tab, want_tab) == 0);
    if (strcmp(tab, want_tab)) fprintf(stderr, "table:\n%s", tab);
    free(csv);
    free(tab);
    /* no rows: the header (and the dashes) only */
    rf_rt_rel e;
    rf_rt_rel_alloc(&e, 2, t, 0);
    const char *n2[2] = {"a", "b"};
    csv = capture(&e, n2, RF_RT_FORMAT_TBL);
    CHECK(strcmp(csv, "a|b\n") == 0);
    free(csv);
    csv = capture(&e, n2, RF_RT_FORMAT_CSV);
    CHECK(strcmp(csv, "a,b\n") == 0);
    tab = capture(&e, n2, RF_RT_FORMAT_TABLE);
    CHECK(strcmp(tab, "a  b\n-  -\n") == 0);
    free(csv);
    free(tab);
    rf_rt_rel_free(&e);
    /* table: cells as wide as a terminal shows them (a wide character two
    ** columns, a combining mark none), a tab written \t */
    {
        rf_type tw[2] = {RF_TYPE_STRING, RF_TYPE_INT};
        rf_rt_rel w;
        rf_rt_rel_alloc(&w, 2, tw, 4);
        const char *wv[4] = {"\xe6\x97\xa5\xe6\x9c\xac", "e\xcc\x81", "a\tb", "\xf0\x9f\x98\x80x"};
        for (int i = 0; i < 4; i++) {
            rf_rt_dict_intern(D, wv[i], (int64_t)strlen(wv[i]), &((uint32_t *)w.cols[0])[i]);
            ((int64_t *)w.cols[1])[i] = i;
        }
        const char *nw[2] = {"s", "n"};
        tab = capture(&w, nw, RF_RT_FORMAT_TABLE);
        const char *want_w = "s     n\n"
                             "----  -\n"
                             "\xe6\x97\xa5\xe6\x9c\xac  0\n"
                             "e\xcc\x81     1\n"
                             "a\\tb  2\n"
                             "\xf0\x9f\x98\x80x   3\n";
        CHECK(strcmp(tab, want_w) == 0);
        if (strcmp(tab, want_w)) fprintf(stderr, "table widths:\n%s", tab);
        free(tab);
        rf_rt_rel_free(&w);
    }
    test_output_rfc_csv();
    /* truncate keeps the first rows */
    CHECK(rf_rt_rel_truncate(&r, 1) == RF_OK && r.nrows == 1);
    CHECK(rf_rt_rel_truncate(&r, 2) == RF_EINTERNAL);
    csv = capture(&r, names, RF_RT_FORMAT_TBL);
    CHECK(strcmp(csv, "id|name|price|ratio|col5|ok\n1|plain|1.50|0.1|1995-03-15|true\n") == 0);
    free(csv);
    CHECK(rf_rt_rel_truncate(&r, 0) == RF_OK && r.nrows == 0 && r.cols[0] == NULL);
    rf_rt_rel_free(&r);
    CHECK(rf_rt_type_width(RF_TYPE_INT) == 8 && rf_rt_type_width(RF_TYPE_FLOAT) == 8 &&
          rf_rt_type_width(RF_TYPE_DECIMAL) == 8 && rf_rt_type_width(RF_TYPE_STRING) == 4 &&
          rf_rt_type_width(RF_TYPE_BOOL) == 1 && rf_rt_type_width(RF_TYPE_DATE) == 4);
    rf_rt_index x = {0};
    x.a = malloc(16);
    x.first = malloc(16);
    rf_rt_index_free(&x);
    CHECK(x.a == NULL && x.n == 0);
}

/* ---- benchmark ---------------------------------------------------------------- */

static void bench(int64_t n)
{
    printf("rows: %lld\n", (long long)n);
    int64_t *off;
    char *bytes;
    rng_state = 777;
    /* ~25-byte strings, mostly distinct */
    off = malloc((size_t)(n + 1) * sizeof *off);
    bytes = malloc((size_t)n * 32);
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        off[i] = at;
        int64_t k = rnd() % 10 == 0 ? (int64_t)(rnd() % (uint64_t)n) : i;
        at += snprintf(bytes + at, 32, "Customer#%09lld-%05d", (long long)k, (int)(k % 99991));
    }
    off[n] = at;
    printf("strings: %.1f bytes each\n", (double)at / (double)n);
    uint32_t *codes = malloc((size_t)n * sizeof *codes);
    for (int th = 1; th <= 2; th++) {
        rf_rt_dict *d = rf_rt_dict_new();
        double t0 = rf_now();
        rf_rt_dict_intern_many(d, off, bytes, n, codes, th);
        double t1 = rf_now();
        printf("intern_many, %d thread%s: %.3f s (%lld distinct)\n", th, th > 1 ? "s" : "", t1 - t0,
               (long long)rf_rt_dict_count(d));
        rf_rt_dict_free(d);
    }
    {
        rf_rt_dict *d = rf_rt_dict_new();
        double t0 = rf_now();
        for (int64_t i = 0; i < n; i++) rf_rt_dict_intern(d, bytes + off[i], off[i + 1] - off[i], &codes[i]);
        printf("rf_rt_dict_intern one by one: %.3f s\n", rf_now() - t0);
        rf_rt_dict_free(d);
    }
    free(codes);

    /* lineitem-like: price * (1 - disc) * (1 + tax) where shipdate <= 1998-09-02 */
    rf_rt_dict *saved = D;
    D = rf_rt_dict_new();
    rf_type lt[5] = {RF_TYPE_DECIMAL, RF_TYPE_DECIMAL, RF_TYPE_DECIMAL, RF_TYPE_DATE, RF_TYPE_STRING};
    rf_rt_rel L;
    rf_rt_rel_alloc(&L, 5, lt, n);
    uint32_t flags[3];
    rf_rt_dict_intern(D, "A", 1, &flags[0]);
    rf_rt_dict_intern(D, "N", 1, &flags[1]);
    rf_rt_dict_intern(D, "R", 1, &flags[2]);
    for (int64_t i = 0; i < n; i++) {
        ((int64_t *)L.cols[0])[i] = (int64_t)(90000 + rnd() % 10000000) * 10000;
        ((int64_t *)L.cols[1])[i] = (int64_t)(rnd() % 11) * 10000;
        ((int64_t *)L.cols[2])[i] = (int64_t)(rnd() % 9) * 10000;
        ((int32_t *)L.cols[3])[i] = 8036 + (int32_t)(rnd() % 2526);
        ((uint32_t *)L.cols[4])[i] = flags[rnd() % 3];
    }
    rf_qp_expr *price = col(0, 0, RF_TYPE_DECIMAL), *disc = col(0, 1, RF_TYPE_DECIMAL),
               *tax = col(0, 2, RF_TYPE_DECIMAL);
    rf_qp_expr *f = cmp(RF_CMP_LE, col(0, 3, RF_TYPE_DATE), cdate("1998-09-02"));
    rf_qp_expr *outs[3] = {col(0, 4, RF_TYPE_STRING),
                           bin('*', bin('*', price, bin('-', cd(RF_DEC_ONE), disc)), bin('+', cd(RF_DEC_ONE), tax)),
                           bin('*', price, bin('-', cd(RF_DEC_ONE), disc))};
    rf_type ot[3] = {RF_TYPE_STRING, RF_TYPE_DECIMAL, RF_TYPE_DECIMAL};
    for (int th = 1; th <= 2; th++) {
        rf_rt_rel res;
        rf_diags d;
        double t0 = rf_now();
        rf_status st = run_map(f, outs, 3, ot, &L, NULL, NULL, NULL, n, th, &res, &d);
        double t1 = rf_now();
        printf("eval filter + price*(1-disc)*(1+tax) + price*(1-disc), %d thread%s: %.3f s (%lld rows out, st %d)\n",
               th, th > 1 ? "s" : "", t1 - t0, (long long)res.nrows, (int)st);
        rf_rt_rel_free(&res);
        rf_diags_free(&d);
    }
    rf_qp_expr *like_outs[1] = {price};
    {
        /* LIKE on a column of mostly distinct strings */
        rf_type st1[1] = {RF_TYPE_STRING};
        rf_rt_rel S;
        rf_rt_rel_alloc(&S, 1, st1, n);
        rf_rt_dict_intern_many(D, off, bytes, n, S.cols[0], 2);
        rf_qp_expr *lf = like(col(0, 0, RF_TYPE_STRING), cs("%#0000%-1%"));
        rf_qp_expr *lo[1] = {col(0, 0, RF_TYPE_STRING)};
        for (int th = 1; th <= 2; th++) {
            rf_rt_rel res;
            rf_diags d;
            double t0 = rf_now();
            run_map(lf, lo, 1, st1, &S, NULL, NULL, NULL, n, th, &res, &d);
            printf("eval like(s, \"%%#0000%%-1%%\") on distinct strings, %d thread%s: %.3f s (%lld rows out)\n", th,
                   th > 1 ? "s" : "", rf_now() - t0, (long long)res.nrows);
            rf_rt_rel_free(&res);
            rf_diags_free(&d);
        }
        rf_rt_rel_free(&S);
    }
    (void)like_outs;

    /* CSV of 1M rows: int, string, decimal, decimal, date */
    int64_t m = n < 1000000 ? n : 1000000;
    rf_type wt[5] = {RF_TYPE_INT, RF_TYPE_STRING, RF_TYPE_DECIMAL, RF_TYPE_DECIMAL, RF_TYPE_DATE};
    rf_rt_rel W;
    rf_rt_rel_alloc(&W, 5, wt, m);
    for (int64_t i = 0; i < m; i++) {
        ((int64_t *)W.cols[0])[i] = i * 37;
        ((uint32_t *)W.cols[1])[i] = flags[i % 3];
        ((int64_t *)W.cols[2])[i] = ((int64_t *)L.cols[0])[i];
        ((int64_t *)W.cols[3])[i] = ((int64_t *)L.cols[1])[i];
        ((int32_t *)W.cols[4])[i] = ((int32_t *)L.cols[3])[i];
    }
    const char *wn[5] = {"orderkey", "flag", "price", "disc", "shipdate"};
    FILE *devnull = fopen("/dev/null", "w");
    double t0 = rf_now();
    rf_rt_write_rel(&W, wn, D, RF_RT_FORMAT_CSV, devnull);
    printf("write %lld rows as CSV (to /dev/null): %.3f s\n", (long long)m, rf_now() - t0);
    t0 = rf_now();
    rf_rt_write_rel(&W, wn, D, RF_RT_FORMAT_TBL, devnull);
    printf("write %lld rows as tbl (to /dev/null): %.3f s\n", (long long)m, rf_now() - t0);
    t0 = rf_now();
    rf_rt_write_rel(&W, wn, D, RF_RT_FORMAT_TABLE, devnull);
    printf("write %lld rows as a table (to /dev/null): %.3f s\n", (long long)m, rf_now() - t0);
    fclose(devnull);
    rf_rt_rel_free(&W);
    rf_rt_rel_free(&L);
    rf_rt_dict_free(D);
    D = saved;
    free(off);
    free(bytes);
}

int main(int argc, char **argv)
{
    rf_arena_init(&A);
    D = rf_rt_dict_new();
    const char *what = argc > 1 ? argv[1] : "all";
    int all = strcmp(what, "all") == 0;
    if (strcmp(what, "bench") == 0) {
        bench(argc > 2 ? atoll(argv[2]) : 6000000);
    } else {
        if (all || strcmp(what, "dict") == 0) {
            test_dict_basic();
            test_dict_medium();
            test_dict_ranges();
            test_dict_concurrent();
            test_dict_bulk();
        }
        if (all || strcmp(what, "eval") == 0) {
            test_scalar_int();
            test_scalar_decimal();
            test_scalar_wide();
            test_scalar_float_cast();
            test_scalar_strings();
            test_scalar_like();
            test_scalar_dates();
            test_scalar_cmp_logic();
            test_filters_and_joins();
            test_threads_identical();
            test_first_error();
            test_all_errors();
        }
        if (all || strcmp(what, "output") == 0) test_output();
        printf("%d checks, %d failures\n", checks, failures);
    }
    rf_rt_dict_free(D);
    rf_arena_free(&A);
    return failures ? 1 : 0;
}
