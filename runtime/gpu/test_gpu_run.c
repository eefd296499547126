/*
** runtime/gpu/test_gpu_run.c: the GPU backend's test driver: compiles LogiQL
** files to Harmony, runs the program on the GPU device (rf_rt_run_on) and prints the
** outputs exactly as `redfox run --format tbl` does. With --compare it also
** runs the program on the CPU (rf_rt_run) and fails unless both give the
** same bytes, or fail with the same messages.
**
** usage: test_gpu_run [--emulate] [--compare] [--data DIR] [--max-iterations N]
**                     [--profile] [--ptx] [--no-fuse] [--set NAME=VALUE]...
**                     [--skip-missing-data] PROG.logic...
** --emulate sets RF_GPU_EMULATE=1 (kernels run on the CPU); --ptx compiles
** the PTX first and hands it over as a .rfx PTX0 section would be; --no-fuse
** runs every kernel separately (no Kernel Weaver fusion); --set changes a
** tuning setting (rf_rt_tuning.h) for both runs;
** --skip-missing-data exits 77 when the data folder does not exist.
** Exit: 0 ok, 1 the run (or the comparison) failed, 77 no usable GPU.
*/
#include "rf_frontend.h"
#include "rf_gpu_codegen.h"
#include "rf_harmony.h"
#include "rf_queryplan.h"
#include "rf_rt_gpu.h"
#include "rf_runtime.h"
#include "rt_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What `redfox run --format tbl` writes to stdout for a result (the e2e tests' .expected format). */
static char *render(const rf_rt_result *res, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    for (int32_t i = 0; i < res->noutputs; i++) {
        const rf_rt_output *o = &res->outputs[i];
        if (res->noutputs > 1) fprintf(f, "%s%s (%lld row%s)\n", i ? "\n" : "", o->name, (long long)o->rel.nrows, o->rel.nrows == 1 ? "" : "s");
        rf_rt_write_rel(&o->rel, o->var->colnames, res->dict, RF_RT_FORMAT_TBL, f);
    }
    fclose(f);
    return buf;
}

static char *render_diags(const rf_diags *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    rf_diags_print(d, f);
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    const char *files[64], *data = ".";
    int nfiles = 0, compare = 0, profile = 0, with_ptx = 0, skip_missing = 0, no_fuse = 0;
    int64_t maxit = 0;
    rf_rt_tuning tune;
    rf_rt_tuning_init(&tune);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--emulate")) setenv("RF_GPU_EMULATE", "1", 1);
        else if (!strcmp(argv[i], "--compare")) compare = 1;
        else if (!strcmp(argv[i], "--profile")) profile = 1;
        else if (!strcmp(argv[i], "--ptx")) with_ptx = 1;
        else if (!strcmp(argv[i], "--no-fuse")) no_fuse = 1;
        else if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
        else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            char why[200];
            if (rf_rt_tuning_set(&tune, argv[++i], why, sizeof why)) {
                fprintf(stderr, "test_gpu_run: --set: %s\n", why);
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--skip-missing-data")) skip_missing = 1;
        else if (!strcmp(argv[i], "--max-iterations") && i + 1 < argc) maxit = atoll(argv[++i]);
        else if (nfiles < 64) files[nfiles++] = argv[i];
    }
    if (!nfiles) {
        fprintf(stderr, "usage: test_gpu_run [--emulate] [--compare] [--data DIR] [--max-iterations N] PROG.logic...\n");
        return 2;
    }
    struct stat sb;
    if (skip_missing && (stat(data, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        printf("SKIP: no data folder %s\n", data);
        return 77;
    }
    char why[256];
    if (!rf_rt_gpu_available(why, sizeof why)) {
        printf("SKIP: no usable GPU: %s\n", why);
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
    rf_status st = rf_fe_load_files(files, nfiles, &arena, &ast, &fe, &d);
    if (!st) st = rf_qp_build(fe, &qp, &d);
    if (!st) st = rf_qp_optimize(qp, &d);
    if (!st) st = rf_hir_lower(qp, &hir, &d);
    if (st) {
        rf_diags_print(&d, stderr);
        return 1;
    }
    /* as `redfox compile` does: the plans made and encoded (GPLN), the PTX
    ** made from them; the run then reads the section as `redfox run` does */
    rf_buf ptx0, gpln;
    rf_buf_init(&ptx0);
    rf_buf_init(&gpln);
    rf_gpu_plan *plan = NULL;
    st = rf_gpu_plan_build(hir, 1, &plan, &d);
    if (!st) st = rf_gpu_plan_encode(hir, plan, &gpln);
    rf_gpu_nvrtc_opts nopts = {NULL, NULL, no_fuse, 0};
    if (!st && with_ptx) st = rf_gpu_make_ptx0(hir, plan, &nopts, &ptx0, &d);
    if (!st && with_ptx && ptx0.len) {
        /* the section must round-trip and be bound to the plans, or the run would recompile */
        rf_gpu_ptx x;
        memset(&x, 0, sizeof x);
        st = rf_gpu_ptx0_decode("PTX0", ptx0.data, (uint64_t)ptx0.len, &x, &d);
        uint64_t key[2] = {0, 0};
        if (!st) {
            rf_gpu_ptx want = x;
            memcpy(want.src_hash, plan->src_hash[!no_fuse], sizeof want.src_hash);
            rf_gpu_ptx_key(&want, key);
        }
        if (!st && (strcmp(x.abi, rf_gpu_abi_tag()) || key[0] != x.key[0] || key[1] != x.key[1] ||
                    !strstr(x.ptx, ".entry"))) {
            fprintf(stderr, "FAIL: the PTX0 section does not match the program\n");
            st = RF_EINTERNAL;
        }
        rf_gpu_ptx_free(&x);
    }
    rf_gpu_plan_free(plan);
    if (st) {
        rf_diags_print(&d, stderr);
        return 1;
    }
    rf_rt_options o;
    memset(&o, 0, sizeof o);
    o.data_dir = data;
    o.device = RF_RT_DEVICE_GPU;
    /* with --compare, per-kernel row counts of both runs are compared too:
    ** the first kernel that differs is where to look */
    o.profile = profile || compare;
    o.max_iterations = maxit;
    o.no_fuse = no_fuse;
    o.tuning = &tune;
    o.gpu_plan = gpln.data;
    o.gpu_plan_size = (uint64_t)gpln.len;
    o.rfx_file = "test.rfx";
    rf_rt_hugepages(tune.hugepages);
    rf_rt_result *res = NULL;
    o.ptx0 = ptx0.len ? ptx0.data : NULL;
    o.ptx0_size = (uint64_t)ptx0.len;
    st = rf_rt_run_on(&rf_rt_gpu_device, hir, &o, &res, &d);
    size_t glen = 0;
    char *gout = st ? NULL : render(res, &glen);
    char *gerr = render_diags(&d);
    fputs(gerr ? gerr : "", stderr);
    if (!st && profile)
        for (int32_t i = 0; i < res->nstats; i++)
            if (res->stats[i].calls)
                fprintf(stderr, "k%-4d %-12s %-8s %6lld %10.3f ms %12lld rows out\n", res->stats[i].kernel,
                        res->stats[i].what, res->stats[i].device, (long long)res->stats[i].calls,
                        res->stats[i].seconds * 1e3, (long long)res->stats[i].rows_out);
    if (!st && profile) fprintf(stderr, "fused kernels run: %d\n", (int)res->gpu_fused);
    if (gout) fwrite(gout, 1, glen, stdout);
    int rc = st ? 1 : 0;
    if (compare) {
        rf_diags dc;
        rf_diags_init(&dc);
        rf_rt_result *cres = NULL;
        o.device = RF_RT_DEVICE_CPU;
        rf_status cst = rf_rt_run(hir, &o, &cres, &dc);
        for (int32_t i = 0; !st && !cst && i < res->nstats && i < cres->nstats; i++) {
            const rf_rt_kstat *g = &res->stats[i], *c = &cres->stats[i];
            /* a fused stage whose rows stay in registers has no counts (-1);
            ** a loop's kernel of empty input that one device skipped, the
            ** other may run inside a fused kernel of its own (the CPU's and
            ** the GPU's spans differ): reached as often, no rows more out
            ** (an empty join still reads its other side: rows in differ) */
            int skips = g->skipped || c->skipped;
            int calls_differ = skips ? g->calls + g->skipped != c->calls + c->skipped : g->calls != c->calls;
            if (calls_differ || (!skips && g->rows_in >= 0 && g->rows_in != c->rows_in) ||
                (g->rows_out >= 0 && g->rows_out != c->rows_out)) {
                fprintf(stderr,
                        "FAIL: k%d %s differs first: calls %lld/%lld, rows in %lld/%lld, rows out %lld/%lld (CPU/GPU)\n",
                        i, c->what, (long long)c->calls, (long long)g->calls, (long long)c->rows_in,
                        (long long)g->rows_in, (long long)c->rows_out, (long long)g->rows_out);
                rc = 1;
                break;
            }
        }
        size_t clen = 0;
        char *cout = cst ? NULL : render(cres, &clen);
        char *cerr = render_diags(&dc);
        if (!!cst != !!st) {
            fprintf(stderr, "FAIL: the CPU run %s, the GPU run %s\n", cst ? "failed" : "succeeded", st ? "failed" : "succeeded");
            if (cerr) fprintf(stderr, "CPU said:\n%s", cerr);
            rc = 1;
        } else if (st && strcmp(cerr ? cerr : "", gerr ? gerr : "")) {
            fprintf(stderr, "FAIL: the CPU and GPU runs fail differently; CPU said:\n%s", cerr ? cerr : "");
            rc = 1;
        } else if (!st && (clen != glen || memcmp(cout, gout, glen))) {
            size_t i = 0;
            while (i < clen && i < glen && cout[i] == gout[i]) i++;
            size_t ls = i;
            while (ls > 0 && gout[ls - 1] != '\n') ls--;
            fprintf(stderr, "FAIL: the outputs differ at byte %zu (CPU %zu bytes, GPU %zu bytes)\nCPU: %.200s\nGPU: %.200s\n",
                    i, clen, glen, cout + ls, gout + ls);
            rc = 1;
        }
        free(cout);
        free(cerr);
        if (cres) rf_rt_result_free(cres);
        rf_diags_free(&dc);
    }
    free(gout);
    free(gerr);
    if (res) rf_rt_result_free(res);
    rf_buf_free(&ptx0);
    rf_buf_free(&gpln);
    rf_hir_free(hir);
    rf_qp_free(qp);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    return rc;
}
