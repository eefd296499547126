/*
** skeletons/cuda/test_gplan.c: the GPLN section (gplan.c) of a program,
** damaged every way: test_gplan [--seed OUT] [--refused-for OTHER.logic]
** PROG.logic [MORE.logic ...].
**
** Owns: the checks that the plans round-trip (decoded, they re-encode to the
** same bytes and generate the same source), that every truncation and every
** corrupted byte is refused with one error naming the file or decodes to
** plans that generate a source or fail with an error (never a crash: run it
** under ASan), and that another section version or generator tag is called
** what it is. With --seed, it also writes a fuzz_gplan input (a u32 length,
** the program text, the section) to OUT. With --refused-for OTHER.logic,
** the section must fuse a kernel and be refused for OTHER (the program
** with a kernel the generator does not fuse).
*/
#include "rf_frontend.h"
#include "rf_gpu_codegen.h"
#include "rf_harmony.h"
#include "rf_queryplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;

/* The program of files, down to the Harmony IR (NULL, errors in d, on failure). */
static rf_hir_program *load_hir(const char **files, int nfiles, rf_arena *arena, rf_qp_program **qp, rf_diags *d)
{
    rf_ast_program *ast = NULL;
    rf_fe_program *fe = NULL;
    rf_hir_program *hir = NULL;
    *qp = NULL;
    rf_status st = rf_fe_load_files(files, nfiles, arena, &ast, &fe, d);
    if (!st) st = rf_qp_build(fe, qp, d);
    if (!st) st = rf_qp_optimize(*qp, d);
    if (!st) st = rf_hir_lower(*qp, &hir, d);
    return st ? NULL : hir;
}

#define CHECK(c, ...)                                                                                              \
    do {                                                                                                           \
        if (!(c)) {                                                                                                \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                                                                 \
            fputc('\n', stderr);                                                                                   \
            fails++;                                                                                               \
        }                                                                                                          \
    } while (0)

/* Decodes bytes; on success the plans must generate a source (or fail with
** an error), on failure exactly one error naming the file. 1 if decoded. */
static int try_decode(const rf_hir_program *p, const void *data, uint64_t n, const char *what, const char *expect)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_gpu_plan *pl = NULL;
    rf_status st = rf_gpu_plan_decode("bad.rfx", p, data, n, &pl, &d);
    if (st == RF_OK) {
        for (int fuse = 0; fuse < 2; fuse++) {
            rf_buf src;
            rf_buf_init(&src);
            rf_status cs = rf_gpu_codegen(p, pl, fuse, &src, &d);
            CHECK(cs == RF_OK || d.nerrors > 0, "%s: codegen failed without an error", what);
            rf_buf_free(&src);
        }
        rf_gpu_plan_free(pl);
    } else {
        CHECK(st == RF_EUSER && d.count == 1 && d.items[0].sev == RF_SEV_ERROR && d.items[0].loc.file &&
                  !strcmp(d.items[0].loc.file, "bad.rfx"),
              "%s: not one error naming the file (status %d, %lld messages)", what, (int)st, (long long)d.count);
        if (expect && d.count)
            CHECK(strstr(d.items[0].msg, expect) != NULL, "%s: the message '%s' does not say '%s'", what,
                  d.items[0].msg, expect);
    }
    rf_diags_free(&d);
    return st == RF_OK;
}

int main(int argc, char **argv)
{
    const char *files[64];
    int nfiles = 0;
    const char *seed = NULL, *other = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = argv[++i];
        else if (!strcmp(argv[i], "--refused-for") && i + 1 < argc) other = argv[++i];
        else if (nfiles < 64) files[nfiles++] = argv[i];
    }
    if (!nfiles) {
        fprintf(stderr, "usage: test_gplan [--seed OUT] [--refused-for OTHER.logic] PROG.logic [MORE.logic ...]\n");
        return 2;
    }
    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_qp_program *qp = NULL;
    rf_hir_program *hir = load_hir(files, nfiles, &arena, &qp, &d);
    rf_status st = hir ? RF_OK : RF_EUSER;
    rf_gpu_plan *plan = NULL;
    rf_buf enc;
    rf_buf_init(&enc);
    if (!st) st = rf_gpu_plan_build(hir, 1, &plan, &d);
    if (!st) st = rf_gpu_plan_encode(hir, plan, &enc);
    if (st) {
        rf_diags_print(&d, stderr);
        return 1;
    }
    const unsigned char *b = (const unsigned char *)enc.data;
    uint64_t n = (uint64_t)enc.len;
    /* the round trip */
    CHECK(try_decode(hir, b, n, "the section as made", NULL), "the section as made does not decode");
    rf_gpu_plan *back = NULL;
    if (!rf_gpu_plan_decode("good.rfx", hir, b, n, &back, &d)) {
        rf_buf again;
        rf_buf_init(&again);
        CHECK(rf_gpu_plan_encode(hir, back, &again) == RF_OK && (uint64_t)again.len == n && !memcmp(again.data, b, n),
              "decoded plans do not re-encode to the same bytes");
        rf_buf_free(&again);
        rf_gpu_plan_free(back);
    }
    /* every truncation */
    for (uint64_t k = 0; k < n; k++) {
        char what[64];
        snprintf(what, sizeof what, "truncated to %llu bytes", (unsigned long long)k);
        CHECK(!try_decode(hir, b, k, what, NULL), "%s: decoded", what);
    }
    /* every byte corrupted, several ways (a decoded result is fine if it generates code safely) */
    unsigned char *c = malloc((size_t)n + 1);
    const unsigned char flips[] = {0xFF, 0x01, 0x80, 0x7F};
    int decoded = 0;
    for (uint64_t k = 0; c && k < n; k++)
        for (size_t f = 0; f < sizeof flips; f++) {
            memcpy(c, b, (size_t)n);
            c[k] ^= flips[f];
            char what[64];
            snprintf(what, sizeof what, "byte %llu ^ 0x%02x", (unsigned long long)k, flips[f]);
            decoded += try_decode(hir, c, n, what, NULL);
        }
    /* trailing bytes */
    if (c) {
        unsigned char *t = malloc((size_t)n + 1);
        if (t) {
            memcpy(t, b, (size_t)n);
            t[n] = 0;
            CHECK(!try_decode(hir, t, n + 1, "a byte too many", "malformed"), "a trailing byte: decoded");
            free(t);
        }
        /* another section version, another generator */
        memcpy(c, b, (size_t)n);
        c[0] = 2;
        CHECK(!try_decode(hir, c, n, "version 2", "format version 2"), "version 2: decoded");
        memcpy(c, b, (size_t)n);
        c[12 + 6] ^= 0x01; /* in the tag's hex digits (u32 version, u64 length, "rfgpu-") */
        CHECK(!try_decode(hir, c, n, "another generator", "stale"), "another generator: decoded");
    }
    free(c);
    if (other) {
        /* a program of the same kernels, one of which is not to be fused */
        rf_qp_program *oqp = NULL;
        rf_hir_program *ohir = load_hir(&other, 1, &arena, &oqp, &d);
        CHECK(ohir != NULL, "%s does not compile", other);
        CHECK(plan->f->nunits > 0, "the section fuses no kernel: nothing to refuse");
        if (ohir) CHECK(!try_decode(ohir, b, n, "for another program", "malformed"), "decoded for %s", other);
        rf_hir_free(ohir);
        rf_qp_free(oqp);
    }
    printf("GPLN of %lld bytes: %lld kernels, %d fused; %d of %lld corruptions decode (and generate safely)\n",
           (long long)n, (long long)plan->nkernels, (int)plan->f->nunits, decoded, (long long)n * 4);
    if (seed) {
        /* a fuzz_gplan input: u32 length of the program text, the text, the section */
        FILE *o = fopen(seed, "wb");
        rf_buf text;
        rf_buf_init(&text);
        for (int i = 0; i < nfiles; i++) {
            char *data = NULL;
            int64_t len = 0;
            const char *why = NULL;
            if (!rf_read_file(files[i], &data, &len, &why)) rf_buf_append(&text, data, len);
            rf_buf_putc(&text, '\n');
            free(data);
        }
        uint32_t tl = (uint32_t)text.len;
        unsigned char l4[4] = {(unsigned char)tl, (unsigned char)(tl >> 8), (unsigned char)(tl >> 16),
                               (unsigned char)(tl >> 24)};
        CHECK(o && fwrite(l4, 1, 4, o) == 4 && fwrite(text.data, 1, (size_t)text.len, o) == (size_t)text.len &&
                  fwrite(b, 1, (size_t)n, o) == (size_t)n,
              "cannot write %s", seed);
        if (o) fclose(o);
        rf_buf_free(&text);
    }
    rf_gpu_plan_free(plan);
    rf_buf_free(&enc);
    rf_hir_free(hir);
    rf_qp_free(qp);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    if (fails) fprintf(stderr, "%d failures\n", fails);
    return fails ? 1 : 0;
}
