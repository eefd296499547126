/*
** tests/fuzz/fuzz_gplan.c: libFuzzer target for the GPU plans' decoder (the
** GPLN section of a .rfx file, skeletons/cuda/gplan.c). An input is a u32
** length, that many bytes of LogiQL (the program, compiled as `redfox
** compile` does), then the section's bytes. Any section must be refused with
** one error, or decode to plans that re-encode to the same bytes and from
** which the code generator makes a source or an error; a crash, hang, leak
** or sanitizer report is a bug. Seeds: `test_gplan --seed OUT PROG.logic`.
*/
#include "rf_frontend.h"
#include "rf_gpu_codegen.h"
#include "rf_harmony.h"
#include "rf_queryplan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    uint32_t tl = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
    if (tl > size - 4) return 0;
    const char *names[1] = {"fuzz.logic"};
    const char *texts[1] = {(const char *)data + 4};
    int64_t lens[1] = {(int64_t)tl};
    rf_arena a;
    rf_arena_init(&a);
    rf_diags d;
    rf_diags_init(&d);
    rf_ast_program *ast = NULL;
    rf_fe_program *fe = NULL;
    rf_qp_program *qp = NULL;
    rf_hir_program *hir = NULL;
    rf_status st = rf_fe_load_sources(names, texts, lens, 1, &a, &ast, &fe, &d);
    if (!st) st = rf_qp_build(fe, &qp, &d);
    if (!st) st = rf_qp_optimize(qp, &d);
    if (!st) st = rf_hir_lower(qp, &hir, &d);
    if (!st) {
        const uint8_t *sec = data + 4 + tl;
        uint64_t n = (uint64_t)(size - 4 - tl);
        rf_gpu_plan *pl = NULL;
        st = rf_gpu_plan_decode("fuzz.rfx", hir, sec, n, &pl, &d);
        if (st == RF_OK) {
            rf_buf b;
            rf_buf_init(&b);
            if (rf_gpu_plan_encode(hir, pl, &b) != RF_OK || (uint64_t)b.len != n || memcmp(b.data, sec, (size_t)n))
                abort(); /* decoded plans re-encode to the bytes they came from */
            rf_buf_free(&b);
            for (int fuse = 0; fuse < 2; fuse++) {
                rf_buf src;
                rf_buf_init(&src);
                if (rf_gpu_codegen(hir, pl, fuse, &src, &d) != RF_OK && d.nerrors == 0) abort();
                rf_buf_free(&src);
            }
            rf_gpu_plan_free(pl);
        } else if (st != RF_ENOMEM && d.nerrors != 1) {
            abort(); /* one error naming the file */
        }
    }
    rf_hir_free(hir);
    rf_qp_free(qp);
    rf_diags_free(&d);
    rf_arena_free(&a);
    return 0;
}
