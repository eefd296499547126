/*
** skeletons/cuda/test_codegen.c: compiles LogiQL files (one program) down
** to Harmony, generates the program's CUDA source and has NVRTC compile it to
** PTX; exit 0 on success, 77 (skip) where NVRTC cannot be loaded, 1 on any
** failure with the diagnostics. Options: --src FILE writes the CUDA source,
** --ptx FILE the PTX, --arch A picks the target, --time prints the times,
** --no-cache compiles even where the PTX cache (nvrtc.c) holds this source's
** PTX. The cache's key is the source, NVRTC's version and the options, so a
** hit is NVRTC's PTX of this very source: the emulator's runs of the same
** program (test_gpu_run --ptx) and this test then compile it once between
** them (NVRTC takes 2-25 s of CPU a program).
*/
#include "rf_frontend.h"
#include "rf_gpu_codegen.h"
#include "rf_harmony.h"
#include "rf_queryplan.h"
#include "rf_sys.h"

#include <stdio.h>
#include <string.h>

static int write_file(const char *path, const char *data, int64_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fwrite(data, 1, (size_t)n, f) == (size_t)n;
    return fclose(f) == 0 && ok;
}

int main(int argc, char **argv)
{
    const char *files[64], *srcout = NULL, *ptxout = NULL, *arch = NULL;
    int nfiles = 0, timing = 0, no_cache = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--src") && i + 1 < argc) srcout = argv[++i];
        else if (!strcmp(argv[i], "--ptx") && i + 1 < argc) ptxout = argv[++i];
        else if (!strcmp(argv[i], "--arch") && i + 1 < argc) arch = argv[++i];
        else if (!strcmp(argv[i], "--time")) timing = 1;
        else if (!strcmp(argv[i], "--no-cache")) no_cache = 1;
        else if (nfiles < 64) files[nfiles++] = argv[i];
    }
    if (!nfiles) {
        fprintf(stderr, "usage: test_gpu_codegen [--src F] [--ptx F] [--arch A] [--time] [--no-cache] PROG.logic...\n");
        return 2;
    }
    char why[256];
    if (!rf_gpu_nvrtc_available(why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return 77;
    }
    rf_arena arena;
    rf_arena_init(&arena);
    rf_diags d;
    rf_diags_init(&d);
    rf_ast_program *ast = NULL;
    rf_fe_program *fe = NULL;
    rf_qp_program *qp = NULL;
    rf_hir_program *hir = NULL;
    double t0 = rf_now();
    rf_status st = rf_fe_load_files(files, nfiles, &arena, &ast, &fe, &d);
    if (!st) st = rf_qp_build(fe, &qp, &d);
    if (!st) st = rf_qp_optimize(qp, &d);
    if (!st) st = rf_hir_lower(qp, &hir, &d);
    double t1 = rf_now();
    rf_buf src;
    rf_buf_init(&src);
    /* the plans made, stored (GPLN) and read back, as compile and run do:
    ** the source generated from the plans read must be the one they were made with */
    rf_gpu_plan *plan = NULL, *back = NULL;
    rf_buf gpln;
    rf_buf_init(&gpln);
    if (!st) st = rf_gpu_plan_build(hir, 1, &plan, &d);
    if (!st) st = rf_gpu_plan_encode(hir, plan, &gpln);
    if (!st) st = rf_gpu_plan_decode("test.rfx", hir, gpln.data, (uint64_t)gpln.len, &back, &d);
    if (!st) st = rf_gpu_codegen(hir, back, 1, &src, &d);
    if (!st) {
        uint64_t h[2];
        rf_gpu_hash128(src.data, (uint64_t)src.len, h);
        rf_buf again;
        rf_buf_init(&again);
        if (h[0] != plan->src_hash[1][0] || h[1] != plan->src_hash[1][1] ||
            rf_gpu_plan_encode(hir, back, &again) != RF_OK || again.len != gpln.len ||
            memcmp(again.data, gpln.data, (size_t)gpln.len)) {
            fprintf(stderr, "FAIL: the GPU plans do not round-trip through the GPLN section\n");
            st = RF_EINTERNAL;
        }
        rf_buf_free(&again);
    }
    rf_gpu_plan_free(plan);
    rf_gpu_plan_free(back);
    rf_buf_free(&gpln);
    double t2 = rf_now();
    if (!st && srcout && !write_file(srcout, rf_buf_cstr(&src), src.len)) fprintf(stderr, "cannot write %s\n", srcout);
    rf_gpu_ptx ptx;
    memset(&ptx, 0, sizeof ptx);
    rf_gpu_nvrtc_opts o = {arch, no_cache ? "" : NULL, 0, 0}; /* NULL: the default cache folder; "": none */
    if (!st) st = rf_gpu_nvrtc_compile(rf_buf_cstr(&src), (uint64_t)src.len, &o, &ptx, &d);
    double t3 = rf_now();
    if (!st && ptxout && !write_file(ptxout, ptx.ptx, (int64_t)ptx.len)) fprintf(stderr, "cannot write %s\n", ptxout);
    if (!st && (!ptx.ptx || !strstr(ptx.ptx, ".entry"))) {
        fprintf(stderr, "FAIL: the PTX holds no kernel\n");
        st = RF_EINTERNAL;
    }
    if (timing)
        printf("front end + plan + harmony %.3f s, codegen %.3f s (%lld bytes), NVRTC %.3f s (%llu bytes PTX%s)\n",
               t1 - t0, t2 - t1, (long long)src.len, t3 - t2, (unsigned long long)ptx.len,
               ptx.from_cache ? ", from the cache" : "");
    rf_diags_print(&d, stderr);
    rf_gpu_ptx_free(&ptx);
    rf_buf_free(&src);
    rf_hir_free(hir);
    rf_qp_free(qp);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    if (st) {
        printf("FAIL\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
