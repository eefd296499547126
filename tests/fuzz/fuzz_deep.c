/*
** tests/fuzz/fuzz_deep.c: libFuzzer target for large and deep programs. The
** input is not source text but a recipe: its first byte picks a shape, the
** next two a size (up to 65,535, scaled per shape past every limit), the rest
** the operators, operands and types along the way. The generated program goes
** through the whole compiler (tests/fuzz/fuzz_pipeline.c), so the fuzzer
** reaches sizes and depths that mutating small programs never does: chains of
** tens of thousands of rules, operator chains and nestings around the
** expression and parser limits, assignments substituted into each other,
** deep negations and disjunctions.
**
** Owns: the recipe's format and the generator.
*/
#include "fuzz_pipeline.h"
#include "rf_common.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The recipe's choices, read cyclically (0 when there are none). */
typedef struct recipe {
    const uint8_t *p;
    size_t n, at;
} recipe;

static unsigned pick(recipe *r)
{
    if (!r->n) return 0;
    unsigned v = r->p[r->at % r->n];
    r->at++;
    return v;
}

static const char *const OPS[] = {" + ", " - ", " * ", " / "};

/* A leaf: the variable x, or a literal of the recipe's type. */
static void leaf(rf_buf *b, recipe *r)
{
    switch (pick(r) % 6) {
    case 0: rf_buf_puts(b, "1"); break;
    case 1: rf_buf_puts(b, "2.5"); break;   /* decimal: promotes the chain */
    case 2: rf_buf_puts(b, "0.5f"); break;  /* float */
    case 3: rf_buf_puts(b, "-x"); break;
    default: rf_buf_puts(b, "x"); break;
    }
}

static void header(rf_buf *b)
{
    rf_buf_puts(b, "in(1). in(2). in(3).\n");
}

static void generate(rf_buf *b, recipe *r, unsigned shape, int64_t n)
{
    switch (shape % 9) {
    case 0: /* a chain of rules */
        header(b);
        rf_buf_puts(b, "p0(x) <- in(x).\n");
        for (int64_t i = 1; i <= n; i++) {
            rf_buf_printf(b, "p%lld(x) <- p%lld(x)", (long long)i, (long long)(i - 1));
            if (pick(r) % 8 == 0) rf_buf_printf(b, ", x > %u", pick(r) % 4);
            rf_buf_puts(b, ".\n");
        }
        rf_buf_printf(b, "lang:output[`p%lld] = \"out\".\n", (long long)n);
        break;
    case 1: /* a left-leaning operator chain: what users write */
        header(b);
        rf_buf_puts(b, "out(x, y) <- in(x), y = x");
        for (int64_t i = 0; i < n; i++) {
            rf_buf_puts(b, OPS[pick(r) % 4 == 0 ? 1 : pick(r) % 3 == 0 ? 2 : 0]);
            leaf(b, r);
        }
        rf_buf_puts(b, ".\nlang:output[`out] = \"out\".\n");
        break;
    case 2: /* right-nested parentheses */
        header(b);
        rf_buf_puts(b, "out(x, y) <- in(x), y = ");
        for (int64_t i = 0; i < n; i++) {
            leaf(b, r);
            rf_buf_puts(b, OPS[pick(r) % 4]);
            rf_buf_putc(b, '(');
        }
        rf_buf_puts(b, "x");
        for (int64_t i = 0; i < n; i++) rf_buf_putc(b, ')');
        rf_buf_puts(b, ".\nlang:output[`out] = \"out\".\n");
        break;
    case 3: /* prefix minus and parentheses */
        header(b);
        rf_buf_puts(b, "out(x, y) <- in(x), y = ");
        for (int64_t i = 0; i < n; i++) rf_buf_puts(b, pick(r) % 2 ? "-" : "(");
        rf_buf_puts(b, "x");
        r->at = 0;
        for (int64_t i = 0; i < n; i++)
            if (pick(r) % 2 == 0) rf_buf_putc(b, ')');
        rf_buf_puts(b, ".\nlang:output[`out] = \"out\".\n");
        break;
    case 4: /* negations and parenthesized formulas */
        header(b);
        rf_buf_puts(b, "q(2).\nout(x) <- in(x), ");
        for (int64_t i = 0; i < n; i++) rf_buf_puts(b, pick(r) % 3 ? "!" : "!(");
        rf_buf_puts(b, "q(x)");
        r->at = 0;
        for (int64_t i = 0; i < n; i++)
            if (pick(r) % 3 == 0) rf_buf_putc(b, ')');
        rf_buf_puts(b, ".\nlang:output[`out] = \"out\".\n");
        break;
    case 5: /* assignments built on each other, substituted by the plan */
        header(b);
        rf_buf_puts(b, "out(x, y) <- in(x), t0 = x");
        for (int64_t i = 1; i <= n; i++) {
            rf_buf_printf(b, ", t%lld = t%lld", (long long)i, (long long)(i - 1));
            unsigned k = pick(r) % 4;
            for (unsigned j = 0; j <= k; j++) {
                rf_buf_puts(b, OPS[pick(r) % 3]);
                if (pick(r) % 2) rf_buf_printf(b, "t%lld", (long long)(i - 1));
                else leaf(b, r);
            }
        }
        rf_buf_printf(b, ", y = t%lld.\nlang:output[`out] = \"out\".\n", (long long)n);
        break;
    case 6: /* a long conjunction of comparisons, then a disjunction */
        header(b);
        rf_buf_puts(b, "out(x) <- in(x)");
        for (int64_t i = 0; i < n; i++) {
            rf_buf_puts(b, pick(r) % 4 ? ", " : "; ");
            rf_buf_printf(b, "x %s %u", pick(r) % 2 ? "<" : "!=", pick(r));
        }
        rf_buf_puts(b, ".\nlang:output[`out] = \"out\".\n");
        break;
    case 7: /* many rules into one predicate, each with its own arithmetic */
        header(b);
        for (int64_t i = 0; i < n; i++) {
            rf_buf_printf(b, "out(x, y) <- in(x), y = x + %lld", (long long)i);
            if (pick(r) % 2) rf_buf_printf(b, " * %u", pick(r));
            rf_buf_puts(b, ".\n");
        }
        rf_buf_puts(b, "lang:output[`out] = \"out\".\n");
        break;
    default: /* an aggregate over a long expression, grouped */
        header(b);
        rf_buf_puts(b, "out(g, t) <- agg<<t = total(v)>> in(x), g = x / 2, v = x");
        for (int64_t i = 0; i < n; i++) {
            rf_buf_puts(b, OPS[pick(r) % 3]);
            leaf(b, r);
        }
        rf_buf_puts(b, ".\nlang:output[`out] = \"out\".\n");
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    unsigned shape = data[0];
    int64_t n = (int64_t)data[1] | (int64_t)data[2] << 8;
    /* around each limit: rule chains to 32 K, expressions and nesting to
    ** about 4,100 (the parser's stack is 4,000, an expression 1,000 levels) */
    if (shape % 9 != 0 && shape % 9 != 6 && shape % 9 != 7) n %= 4200;
    if (shape % 9 == 5) n %= 200; /* each step may double: the node bound, not the time, should stop it */
    if (shape % 9 == 6 || shape % 9 == 7) n %= 3000;
    n %= 32768;
    recipe r = {data + 3, size - 3, 0};
    rf_buf b;
    rf_buf_init(&b);
    generate(&b, &r, shape, n);
    if (b.data) rf_fuzz_compile("deep.logic", b.data, (size_t)b.len);
    rf_buf_free(&b);
    return 0;
}
