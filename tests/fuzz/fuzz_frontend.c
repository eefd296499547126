/*
** tests/fuzz/fuzz_frontend.c: libFuzzer target for the parser and the
** checker (types, safety, directives, stratification) and the printers.
** Any crash, hang, leak or sanitizer report is a bug.
*/
#include "rf_frontend.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rf_arena a;
    rf_arena_init(&a);
    rf_diags d;
    rf_diags_init(&d);
    rf_ast_program *ast = NULL;
    rf_fe_program *prog = NULL;
    if (rf_fe_parse("fuzz.logic", (const char *)data, (int64_t)size, &a, &ast, &d) == RF_OK) {
        rf_buf b;
        rf_buf_init(&b);
        rf_ast_print_text(ast, &b);
        rf_ast_print_yaml(ast, &b);
        if (rf_fe_check(ast, &a, &prog, &d) == RF_OK) rf_fe_print_program(prog, &b);
        rf_buf_free(&b);
    }
    rf_buf b;
    rf_buf_init(&b);
    for (int64_t i = 0; i < d.count; i++) rf_buf_puts(&b, d.items[i].msg);
    rf_buf_free(&b);
    rf_diags_free(&d);
    rf_arena_free(&a);
    return 0;
}
