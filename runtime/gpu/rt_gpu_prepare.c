/*
** runtime/gpu/rt_gpu_prepare.c: the GPU code of many programs compiled at
** once, before they run one after another (`redfox tpch run` and `tpch
** bench` on the GPU).
**
** Owns: rf_rt_gpu_prepare: for each program, the plans and the CUDA source
** a run would make (rt_gpu_exec.c's load_program: rf_gpu_plan_build, then
** rf_gpu_codegen with the fused kernels), compiled by NVRTC into its PTX
** cache on the host threads together (NVRTC is thread-safe per program),
** then, where the GPU has started, the driver's JIT of each PTX into the
** cubin cache, also together. The runs then find both in the caches: a cold
** cache costs the slowest program's compile, not the sum of them all. The
** driver's start runs as one more item beside the compiles (cudart's start
** goes on beside the JIT and the first query's reading). Also
** rf_rt_gpu_link_ptx0: a .rfx file's PTX linked for this machine's GPU
** when `redfox compile` writes it.
*/
#include "rt_gpu_internal.h"

#include "rf_sys.h"

#include <stdlib.h>
#include <string.h>

typedef struct prep {
    const rf_hir_program *const *ps;
    int32_t n;
    const char *cache_dir;
    rf_gpu_ptx *ptx; /* by program; ptx[i].ptx NULL: none made */
    double *nvrtc;   /* seconds in NVRTC, by program */
    int *jit;        /* by program: its cubin is in the cache */
} prep;

static void compile_one(prep *w, int32_t i)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_gpu_plan *plan = NULL;
    rf_buf src;
    rf_buf_init(&src);
    rf_status st = rf_gpu_plan_build(w->ps[i], 0, &plan, &d);
    if (!st) st = rf_gpu_codegen(w->ps[i], plan, 1, &src, &d);
    if (!st) {
        rf_gpu_nvrtc_opts no = {NULL, w->cache_dir, 0, 1}; /* one thread: the programs compile at once */
        if (!rf_gpu_nvrtc_compile(rf_buf_cstr(&src), (uint64_t)src.len, &no, &w->ptx[i], &d))
            w->nvrtc[i] = w->ptx[i].from_cache ? 0 : w->ptx[i].seconds;
    }
    rf_buf_free(&src);
    rf_gpu_plan_free(plan);
    rf_diags_free(&d); /* the run reports what fails again */
}

/* Item 0 starts the driver (not waiting for cudart's start, which the JIT
** does not need: the first query's load waits for it); item i + 1 compiles
** program i. */
static void compile_part(void *ctx, int64_t begin, int64_t end, int worker)
{
    prep *w = ctx;
    (void)worker;
    for (int64_t i = begin; i < end; i++) {
        if (i == 0) rf_gpu_cuda_start();
        else compile_one(w, (int32_t)(i - 1));
    }
}

static void jit_part(void *ctx, int64_t begin, int64_t end, int worker)
{
    prep *w = ctx;
    (void)worker;
    for (int64_t i = begin; i < end; i++)
        if (w->ptx[i].ptx) w->jit[i] = rf_gpu_cuda_jit_cache(&w->ptx[i], w->cache_dir);
}

void rf_rt_gpu_prepare(const rf_hir_program *const *ps, int32_t n, const rf_rt_options *o, rf_rt_gpu_prepared *out)
{
    memset(out, 0, sizeof *out);
    double t0 = rf_now();
    if (n <= 0 || rf_gpu_emulated() || !rf_gpu_nvrtc_available(NULL, 0)) return;
    const rf_rt_tuning *tu = o->tuning ? o->tuning : rf_rt_tuning_default();
    prep w = {ps, n, tu->cache_dir, rf_calloc((size_t)n, sizeof(rf_gpu_ptx)), rf_calloc((size_t)n, sizeof(double)),
              rf_calloc((size_t)n, sizeof(int))};
    int threads = o->threads > 0 ? o->threads : rf_online_cpus();
    (void)rf_gpu_abi_tag(); /* made once here: it is made lazily, unguarded, by its first caller */
    rf_cpu_pool *pool = NULL;
    if (w.ptx && w.nvrtc && w.jit && !rf_cpu_pool_new(threads, &pool)) {
        out->threads = rf_cpu_pool_threads(pool);
        rf_cpu_parallel_for(pool, (int64_t)n + 1, 1, compile_part, &w);
        out->compile_seconds = rf_now() - t0;
        double t1 = rf_now();
        if (rf_gpu_cuda_start()) rf_cpu_parallel_for(pool, n, 1, jit_part, &w);
        out->jit_seconds = rf_now() - t1;
        for (int32_t i = 0; i < n; i++) {
            out->programs += w.ptx[i].ptx != NULL;
            out->compiled += w.ptx[i].ptx && !w.ptx[i].from_cache;
            out->nvrtc_seconds += w.nvrtc[i];
            out->jitted += w.jit[i];
        }
    }
    rf_cpu_pool_free(pool);
    for (int32_t i = 0; w.ptx && i < n; i++) rf_gpu_ptx_free(&w.ptx[i]);
    free(w.ptx);
    free(w.nvrtc);
    free(w.jit);
    out->seconds = rf_now() - t0;
}

int rf_rt_gpu_link_ptx0(const void *sec, uint64_t size, const char *cache_dir)
{
    if (!size || rf_gpu_emulated() || (cache_dir && !cache_dir[0])) return 0;
    char why[8];
    if (!rf_rt_gpu_maybe(why, sizeof why) || !rf_rt_gpu_available(why, sizeof why)) return 0;
    rf_diags d;
    rf_diags_init(&d);
    rf_gpu_ptx ptx;
    memset(&ptx, 0, sizeof ptx);
    int ok = !rf_gpu_ptx0_decode("", sec, size, &ptx, &d) && rf_gpu_cuda_jit_cache(&ptx, cache_dir);
    rf_gpu_ptx_free(&ptx);
    rf_diags_free(&d);
    return ok;
}
