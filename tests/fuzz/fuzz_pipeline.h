/*
** tests/fuzz/fuzz_pipeline.h: the compiler pipeline the fuzz targets drive.
**
** Owns: the declaration of rf_fuzz_compile (tests/fuzz/fuzz_pipeline.c).
*/
#ifndef RF_FUZZ_PIPELINE_H
#define RF_FUZZ_PIPELINE_H

#include <stddef.h>

/* Compiles size bytes of LogiQL named name through every stage but NVRTC;
** aborts on a failed round trip. */
void rf_fuzz_compile(const char *name, const char *data, size_t size);

#endif
