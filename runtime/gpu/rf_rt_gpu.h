/*
** runtime/gpu/rf_rt_gpu.h: the GPU device of the runtime: runs a Harmony
** program's kernels on an NVIDIA GPU with results identical to the CPU
** backend (rt_exec.c), row order of every relation included.
**
** Owns, for the duration of one run: the device (driver opened with dlopen),
** its memory pool, the module loaded from the program's PTX (JIT-compiled
** and cached on disk), and the device-resident values of every variable.
** Inputs are loaded on the host (strings interned there) and copied to the
** GPU once, with the string dictionary's bytes where kernels read them; outputs come back once at the end as host
** relations in the rf_rt_result, which rf_rt_result_free releases as for
** the CPU backend. Nothing here prints.
**
** RF_GPU_EMULATE=1 in the environment replaces the GPU by an emulator that
** runs the same kernels and the same executor on the CPU (for tests on
** machines without a GPU; slow).
*/
#ifndef RF_RT_GPU_H
#define RF_RT_GPU_H

#include "rf_runtime.h"

/* 1 when there is a usable GPU (a driver, a device of compute capability 8.0
** or newer, the CUDA runtime starts); why then describes it ("NVIDIA H100 ...
** (sm_90, 132 SMs, 79 GiB, driver 13.0)"). 0 when not, why saying why. The
** driver is probed once per process. */
int rf_rt_gpu_available(char *why, size_t n);

/* How the runtime loads input files, so that the GPU backend gets exactly
** the CPU backend's rows and string codes, from the runtime's input cache
** where there is one. load fills *out with input variable v's rows,
** interning strings into dict; *borrowed = 1 when the columns belong to
** someone else (a cache): then only out->cols itself is freed here. */
typedef struct rf_rt_gpu_inputs {
    rf_rt_dict *dict; /* the run's dictionary, borrowed by the result; NULL: a new one */
    rf_status (*load)(void *ctx, const rf_hir_var *v, rf_rt_dict *dict, rf_rt_rel *out, int *borrowed,
                      rf_diags *d);
    void *ctx;
} rf_rt_gpu_inputs;

/* Runs p on the GPU. ptx0 / ptx0_size: the PTX0 section of the program's
** .rfx file, or NULL (then the CUDA source is generated and compiled by NVRTC
** now, through the disk cache). A PTX0 made by another version of the GPU
** code generator, or for another program, is not used: the source is
** compiled instead. inputs: NULL reads the input files here (no cache). On
** success *out holds the outputs, res->device is "gpu"; errors (data,
** overflow, no convergence, out of GPU memory) are worded as the CPU backend
** words them. */
rf_status rf_rt_gpu_run(const rf_hir_program *p, const void *ptx0, uint64_t ptx0_size, const rf_rt_options *o,
                        const rf_rt_gpu_inputs *inputs, rf_rt_result **out, rf_diags *d);

#endif
