/*
** tests/fuzz/regress_main.c: runs a fuzz target's entry point over the
** files given on the command line, without libFuzzer, so that every input a
** fuzzer once crashed on stays a regression test in the normal build.
*/
#include "rf_common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char *data;
        int64_t len;
        const char *why = "";
        if (rf_read_file(argv[i], &data, &len, &why)) {
            fprintf(stderr, "%s: %s\n", argv[i], why);
            return 1;
        }
        LLVMFuzzerTestOneInput((const uint8_t *)data, (size_t)len);
        free(data);
        printf("ok %s\n", argv[i]);
    }
    return 0;
}
