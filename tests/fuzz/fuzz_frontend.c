/*
** tests/fuzz/fuzz_frontend.c: libFuzzer target for the whole compiler: the
** input is LogiQL source, run through every stage (tests/fuzz/fuzz_pipeline.c).
** Any crash, hang, leak, sanitizer report or failed round trip is a bug.
*/
#include "fuzz_pipeline.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rf_fuzz_compile("fuzz.logic", (const char *)data, size);
    return 0;
}
