/*
** skeletons/cuda/nvrtc_internal.h: what nvrtc.c and nvrtc_units.c share.
**
** Owns: rf_gpu_nv_result, the outcome of one NVRTC compilation as plain
** data (units compile in processes of their own, and only the caller
** reports into rf_diags), and the two calls between the files. Not
** installed; rf_gpu_codegen.h is the generator's interface.
*/
#ifndef RF_GPU_NVRTC_INTERNAL_H
#define RF_GPU_NVRTC_INTERNAL_H

#include "rf_gpu_codegen.h"

/* What one compilation gave: the PTX (owned, NUL-terminated), or where it
** failed and NVRTC's log (owned, may be NULL). */
typedef enum rf_gpu_nv_stage {
    RF_GPU_NV_OK = 0,
    RF_GPU_NV_CREATE,  /* nvrtcCreateProgram failed */
    RF_GPU_NV_COMPILE, /* nvrtcCompileProgram failed: rc and log say why */
    RF_GPU_NV_PTX,     /* the PTX could not be fetched */
    RF_GPU_NV_NOMEM,   /* memory ran out around the call */
    RF_GPU_NV_MERGE,   /* units' PTX that cannot be put together (nvrtc_units.c) */
    RF_GPU_NV_PROCESS  /* a unit's process failed (nvrtc_units.c): log says how */
} rf_gpu_nv_stage;

typedef struct rf_gpu_nv_result {
    rf_gpu_nv_stage stage;
    int rc; /* NVRTC's result code where stage names an NVRTC call */
    char *ptx;
    uint64_t len;
    char *log;
} rf_gpu_nv_result;

/* One NVRTC program from src with the options. NVRTC must be loaded. */
void rf_gpu_nvrtc_run(const char *src, int nopts, const char *const *opts, rf_gpu_nv_result *r);

/* src compiled whole, or in units at once in up to threads processes (0:
** every core) where it is large enough; the units' PTX put together into
** one text (nvrtc_units.c). */
void rf_gpu_nvrtc_units(const char *src, uint64_t len, int nopts, const char *const *opts, int threads,
                        rf_gpu_nv_result *r);

void rf_gpu_nv_result_free(rf_gpu_nv_result *r);

#endif
