/*
** runtime/test_rt_cache.c: the input cache and declared keys. Two programs
** read one file through one rf_rt_cache: the first declares no key, the
** second declares one that the file breaks. The second must fail with the
** key error (its plan counts on the key), never run on the unchecked rows;
** a third, declaring a key the file keeps, must run. Rows put in the cache
** (rf_rt_cache_put_stamped) that break their key are refused the same way,
** unless the caller vouched for the key (holds: a transaction's states),
** when no run checks it again. Usage: test_rt_cache DIR (DIR holds
** people.tbl: tests/e2e/data).
*/
#include "rf_frontend.h"
#include "rf_harmony.h"
#include "rf_queryplan.h"
#include "rf_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *decl = "person(id, name, born, balance) -> int(id), string(name), date(born), decimal(balance).\n"
                          "lang:input[`person] = \"people.tbl\".\n";

/* src (named name) parsed, checked, planned and lowered into *qp, *hir
** (the caller frees both, the arena and d). */
static rf_status lower(const char *name, const char *src, rf_arena *arena, rf_diags *d, rf_qp_program **qp,
                       rf_hir_program **hir)
{
    const char *names[1] = {name};
    const char *texts[1] = {src};
    int64_t lens[1] = {(int64_t)strlen(src)};
    rf_ast_program *ast = NULL;
    rf_fe_program *fe = NULL;
    rf_status st = rf_fe_load_sources(names, texts, lens, 1, arena, &ast, &fe, d);
    if (!st) st = rf_qp_build(fe, qp, d);
    if (!st) st = rf_qp_optimize(*qp, d);
    if (!st) st = rf_hir_lower(*qp, hir, d);
    return st;
}

/* hir run on the CPU over cache c (its files under dir); then the
** diagnostics into *msg and everything freed but c. */
static rf_status run_hir(rf_status st, rf_hir_program *hir, rf_qp_program *qp, rf_rt_cache *c, const char *dir,
                         rf_arena *arena, rf_diags *d, char *msg, size_t cap)
{
    rf_rt_result *res = NULL;
    if (!st) {
        rf_rt_options o;
        memset(&o, 0, sizeof o);
        o.data_dir = dir;
        o.device = RF_RT_DEVICE_CPU;
        o.cache = c;
        st = rf_rt_run(hir, &o, &res, d);
    }
    msg[0] = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        rf_diags_print(d, f);
        fclose(f);
        snprintf(msg, cap, "%s", buf ? buf : "");
        free(buf);
    }
    rf_rt_result_free(res);
    rf_hir_free(hir);
    rf_qp_free(qp);
    rf_diags_free(d);
    rf_arena_free(arena);
    return st;
}

/* Compiles decl + key + "born(b) <- person(_, _, b, _)." and runs it with
** cache c; returns the status, with the diagnostics in *msg. */
static rf_status run(const char *key, rf_rt_cache *c, const char *dir, char *msg, size_t cap)
{
    char src[1024];
    snprintf(src, sizeof src, "%s%s\nborn(b) <- person(_, _, b, _).\nlang:output[`born] = \"born\".\n", decl, key);
    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_qp_program *qp = NULL;
    rf_hir_program *hir = NULL;
    rf_status st = lower("cache_test.logic", src, &arena, &d, &qp, &hir);
    return run_hir(st, hir, qp, c, dir, &arena, &d, msg, cap);
}

/* "ys(y) <- e(_, y)." over e = {(1, 10), (1, 20)}, put in a cache of its
** own with holds, e's key x broken; returns the status, the diagnostics in
** *msg. */
static rf_status run_put(int holds, char *msg, size_t cap)
{
    static const char src[] = "e(x, y) -> int(x), int(y).\nlang:input[`e] = \"e.tbl\".\n"
                              "lang:input:key[`e] = \"x\".\nys(y) <- e(_, y).\nlang:output[`ys] = \"ys\".\n";
    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_qp_program *qp = NULL;
    rf_hir_program *hir = NULL;
    rf_rt_cache *c = rf_rt_cache_new();
    rf_status st = c ? lower("put_test.logic", src, &arena, &d, &qp, &hir) : RF_ENOMEM;
    const rf_hir_var *v = NULL;
    for (int32_t i = 0; !st && i < hir->nvars && !v; i++)
        if (hir->vars[i]->role == RF_HIR_ROLE_INPUT) v = hir->vars[i];
    if (!st && !v) st = RF_EINTERNAL;
    if (!st) {
        rf_rt_rel r;
        memset(&r, 0, sizeof r);
        st = rf_rt_rel_alloc(&r, v->ncols, v->types, 2);
        if (!st) {
            int64_t *x = r.cols[0], *y = r.cols[1];
            x[0] = x[1] = 1;
            y[0] = 10;
            y[1] = 20;
            st = rf_rt_cache_put_stamped(c, "mem/e.tbl", v, &r, NULL, NULL, holds);
            rf_rt_rel_free(&r);
        }
    }
    st = run_hir(st, hir, qp, c, "mem", &arena, &d, msg, cap);
    rf_rt_cache_free(c);
    return st;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_rt_cache DIR\n");
        return 2;
    }
    rf_rt_cache *c = rf_rt_cache_new();
    if (!c) return 1;
    char msg[2048];
    int fails = 0;
    if (run("", c, argv[1], msg, sizeof msg) != RF_OK) {
        fprintf(stderr, "FAIL: the program without a key: %s\n", msg);
        fails++;
    }
    /* two people share a birthday: the key (born) is broken */
    rf_status st = run("lang:input:key[`person] = \"born\".", c, argv[1], msg, sizeof msg);
    if (st != RF_EUSER || !strstr(msg, "the key (born) = (1985-12-31) of line 4 is already on line 2")) {
        fprintf(stderr, "FAIL: a cached input with a broken key was not rejected (status %d): %s\n", (int)st, msg);
        fails++;
    }
    if (run("lang:input:key[`person] = \"id\".", c, argv[1], msg, sizeof msg) != RF_OK) {
        fprintf(stderr, "FAIL: a key the file keeps: %s\n", msg);
        fails++;
    }
    rf_rt_cache_free(c);
    /* rows put in the cache: checked like a file's, unless vouched for */
    st = run_put(0, msg, sizeof msg);
    if (st != RF_EUSER || !strstr(msg, "key")) {
        fprintf(stderr, "FAIL: rows put with a broken key were not rejected (status %d): %s\n", (int)st, msg);
        fails++;
    }
    st = run_put(1, msg, sizeof msg);
    if (st != RF_OK) {
        fprintf(stderr, "FAIL: rows put with their key vouched for were checked again (status %d): %s\n", (int)st, msg);
        fails++;
    }
    if (!fails) printf("input cache and keys: ok\n");
    return fails ? 1 : 0;
}
