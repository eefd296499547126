/*
** tests/fuzz/fuzz_pipeline.c: the whole compiler on one source text, for the
** fuzz targets: the parser, the checker (types, safety, directives,
** stratification), the query-plan lowering and passes, the Harmony lowering
** and its encoding (which must decode to the same bytes), Kernel Weaver's
** analysis, the GPU code generator's fusion plan and CUDA source (fused and
** not; no NVRTC), and the printers.
**
** Owns: nothing beyond one call; a crash, hang, leak, sanitizer report or
** failed round trip (abort) is a bug.
*/
#include "fuzz_pipeline.h"

#include "rf_frontend.h"
#include "rf_gpu_codegen.h"
#include "rf_harmony.h"
#include "rf_queryplan.h"
#include "rf_weaver.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void rf_fuzz_compile(const char *name, const char *data, size_t size)
{
    rf_arena a;
    rf_arena_init(&a);
    rf_diags d;
    rf_diags_init(&d);
    rf_ast_program *ast = NULL;
    rf_fe_program *prog = NULL;
    if (rf_fe_parse(name, data, (int64_t)size, &a, &ast, &d) == RF_OK) {
        rf_buf b;
        rf_buf_init(&b);
        rf_ast_print_text(ast, &b);
        rf_ast_print_yaml(ast, &b);
        if (rf_fe_check(ast, &a, &prog, &d) == RF_OK) {
            rf_fe_print_program(prog, &b);
            rf_qp_program *qp = NULL;
            if (rf_qp_build(prog, &qp, &d) == RF_OK && rf_qp_optimize(qp, &d) == RF_OK) {
                rf_qp_print_text(qp, &b);
                rf_hir_program *h = NULL;
                if (rf_hir_lower(qp, &h, &d) == RF_OK) {
                    rf_buf enc;
                    rf_buf_init(&enc);
                    if (rf_hir_serialize(h, &enc) == RF_OK) {
                        rf_hir_program *h2 = NULL;
                        if (rf_hir_deserialize("fuzz.rfx", enc.data, (uint64_t)enc.len, &h2, &d) != RF_OK) abort();
                        rf_buf enc2;
                        rf_buf_init(&enc2);
                        if (rf_hir_serialize(h2, &enc2) != RF_OK || enc2.len != enc.len ||
                            memcmp(enc.data, enc2.data, (size_t)enc.len) != 0)
                            abort();
                        rf_buf_free(&enc2);
                        rf_hir_free(h2);
                    }
                    rf_buf_free(&enc);
                    rf_wv_plan *w = NULL;
                    if (rf_wv_analyze(h, NULL, &w, &d) == RF_OK) {
                        rf_wv_print(h, w, &b);
                        rf_wv_plan_free(w);
                    }
                    rf_gpu_fplan *f = NULL;
                    if (rf_gpu_fplan_build(h, 1, &f, &d) == RF_OK) {
                        rf_gpu_fplan_print(h, f, &b);
                        rf_gpu_fplan_free(f);
                    }
                    rf_gpu_plan *pl = NULL;
                    if (rf_gpu_plan_build(h, 1, &pl, &d) == RF_OK) {
                        /* the plans round-trip through their section */
                        rf_buf enc3;
                        rf_buf_init(&enc3);
                        rf_gpu_plan *back = NULL;
                        if (rf_gpu_plan_encode(h, pl, &enc3) != RF_OK ||
                            rf_gpu_plan_decode("fuzz.rfx", h, enc3.data, (uint64_t)enc3.len, &back, &d) != RF_OK)
                            abort();
                        rf_gpu_plan_free(back);
                        rf_buf_free(&enc3);
                        for (int fuse = 0; fuse < 2; fuse++) {
                            rf_buf src;
                            rf_buf_init(&src);
                            (void)rf_gpu_codegen(h, pl, fuse, &src, &d);
                            rf_buf_free(&src);
                        }
                        rf_gpu_plan_free(pl);
                    }
                    rf_hir_free(h);
                }
            }
            rf_qp_free(qp);
        }
        rf_buf_free(&b);
    }
    rf_buf b;
    rf_buf_init(&b);
    for (int64_t i = 0; i < d.count; i++) rf_buf_puts(&b, d.items[i].msg);
    rf_buf_free(&b);
    rf_diags_free(&d);
    rf_arena_free(&a);
}
