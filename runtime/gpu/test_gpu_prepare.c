/*
** runtime/gpu/test_gpu_prepare.c: rf_rt_gpu_prepare (rt_gpu_prepare.c), no
** GPU needed (NVRTC only): each QUERY.logic, compiled with SCHEMA.logic, is
** one program; their GPU code is compiled together into the NVRTC cache
** under CACHE_DIR (which must be empty), then again, when it must all come
** from the cache; the PTX files must be there. Prints the seconds of both
** (the measurement of docs/BENCHMARKS.md: --threads 1 is one query after
** another, as before).
**
** usage: test_gpu_prepare CACHE_DIR THREADS SCHEMA.logic QUERY.logic...
** Exit: 0 ok, 1 failure, 77 no NVRTC.
*/
#include "rf_frontend.h"
#include "rf_gpu_codegen.h"
#include "rf_harmony.h"
#include "rf_queryplan.h"
#include "rf_rt_gpu.h"
#include "rf_runtime.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_ptx(const char *dir)
{
    char *sub = rf_sprintf("%s/nvrtc", dir);
    DIR *d = sub ? opendir(sub) : NULL;
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".ptx");
    if (d) closedir(d);
    free(sub);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: test_gpu_prepare CACHE_DIR THREADS SCHEMA.logic QUERY.logic...\n");
        return 2;
    }
    char why[256];
    if (!rf_gpu_nvrtc_available(why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return 77;
    }
    int n = argc - 4;
    rf_hir_program **ps = calloc((size_t)n, sizeof *ps);
    rf_arena arena;
    rf_arena_init(&arena);
    for (int i = 0; i < n; i++) {
        rf_diags d;
        rf_diags_init(&d);
        const char *files[2] = {argv[3], argv[4 + i]};
        rf_ast_program *ast = NULL;
        rf_fe_program *fe = NULL;
        rf_qp_program *qp = NULL;
        rf_status st = rf_fe_load_files(files, 2, &arena, &ast, &fe, &d);
        if (!st) st = rf_qp_build(fe, &qp, &d);
        if (!st) st = rf_qp_optimize(qp, &d);
        if (!st) st = rf_hir_lower(qp, &ps[i], &d);
        rf_qp_free(qp);
        if (st) {
            rf_diags_print(&d, stderr);
            return 1;
        }
        rf_diags_free(&d);
    }
    rf_rt_tuning tune;
    rf_rt_tuning_init(&tune);
    tune.cache_dir = argv[1];
    rf_rt_options o;
    memset(&o, 0, sizeof o);
    o.tuning = &tune;
    o.threads = atoi(argv[2]);
    int fails = 0;
    if (count_ptx(argv[1])) {
        fprintf(stderr, "FAIL: %s/nvrtc is not empty\n", argv[1]);
        return 1;
    }
    rf_rt_gpu_prepared a, b;
    rf_rt_gpu_prepare((const rf_hir_program *const *)ps, n, &o, &a);
    printf("cold: %d programs, %d compiled by NVRTC (%.3f s of compiling) on %d threads in %.3f s\n", (int)a.programs,
           (int)a.compiled, a.nvrtc_seconds, a.threads, a.compile_seconds);
    if (a.programs != n || a.compiled != n || count_ptx(argv[1]) != n) {
        fprintf(stderr, "FAIL: the cold pass should compile all %d programs into the cache (%d PTX files)\n", n,
                count_ptx(argv[1]));
        fails++;
    }
    rf_rt_gpu_prepare((const rf_hir_program *const *)ps, n, &o, &b);
    printf("warm: %d programs, %d compiled by NVRTC in %.3f s\n", (int)b.programs, (int)b.compiled, b.compile_seconds);
    if (b.programs != n || b.compiled != 0) {
        fprintf(stderr, "FAIL: the warm pass should find all %d programs in the cache\n", n);
        fails++;
    }
    for (int i = 0; i < n; i++) rf_hir_free(ps[i]);
    free(ps);
    rf_arena_free(&arena);
    return fails ? 1 : 0;
}
