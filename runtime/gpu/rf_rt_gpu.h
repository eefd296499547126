/*
** runtime/gpu/rf_rt_gpu.h: the GPU device of the runtime: runs a Harmony
** program's kernels on an NVIDIA GPU with results identical to the CPU
** executor (runtime/cpu), row order of every relation included.
**
** Owns, for the duration of one run: the device (driver opened with dlopen),
** its memory pool, the module loaded from the program's PTX (JIT-compiled
** and cached on disk), and the device-resident values of every variable.
** Inputs are read on the host by the driver (strings interned there) and copied to the
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
/* The same answer without starting the driver where it has not started
** yet (milliseconds, against the start's hundreds): 1 when there may be a
** usable GPU (the driver's library loads), 0 when there is none for sure,
** why saying why. The driver (rt_run.c) then starts the GPU on a thread
** beside the reading of the inputs. */
int rf_rt_gpu_maybe(char *why, size_t n);
/* Cheaper still, loading nothing: 1 when there is surely no usable GPU (no
** driver installed where the dynamic loader looks, or the probe ran and
** failed; never for the emulator), why saying why; 0 when there may be one.
** --device auto's CPU choice asks it, to say so rather than predict. */
int rf_rt_gpu_absent(char *why, size_t n);
/* The GPUs a process of this host may use, counted without starting any
** (the driver's library and cuInit; the emulator counts as one): 0 when
** there is none, why saying why. For a launcher of several ranks, which
** checks before it starts them. */
int rf_rt_gpu_count(char *why, size_t n);
/* 1 when the GPU's driver runs in this process already (a run's start
** then costs no driver start), or, for the emulator, once it has opened in
** this process: before, --device auto weighs its start as a real GPU's
** (the emulator stands in for one; it never ran "already started"). */
int rf_rt_gpu_started(void);
/* 1 when the GPU is the emulator (RF_GPU_EMULATE, for tests): device
** addresses are then host addresses (GPU ranks move rows over MPI). */
int rf_rt_gpu_emulated(void);

/* What rf_rt_gpu_prepare did. */
typedef struct rf_rt_gpu_prepared {
    int32_t programs;     /* programs whose PTX is in the cache now */
    int32_t compiled;     /* of them, compiled by NVRTC now (the rest came from the cache) */
    int32_t jitted;       /* whose cubin is in the JIT cache now (0 without a started GPU) */
    int threads;          /* host threads that compiled together */
    double nvrtc_seconds; /* NVRTC's time, summed over the programs */
    double compile_seconds, jit_seconds, seconds; /* wall: the compiles (and the driver's start), the JIT, all */
} rf_rt_gpu_prepared;

/* Compiles the GPU code of programs ps[0..n) (compiled in this process, run
** with options o: no .rfx) on o->threads host threads together into the
** caches under the cache_dir setting: NVRTC's PTX, then, once the GPU has
** started (the start runs beside the compiles), the driver's cubins. Their
** runs, one after another, then find their code there (runtime/gpu/
** rt_gpu_prepare.c). Nothing without NVRTC or with the emulator; no
** messages: a run reports again whatever fails here. */
void rf_rt_gpu_prepare(const rf_hir_program *const *ps, int32_t n, const rf_rt_options *o, rf_rt_gpu_prepared *out);

/* Links a .rfx file's PTX0 section (sec, size bytes) for this machine's GPU
** into the JIT cache under cache_dir (NULL: the default; "": none), so that
** the file's first run loads the cubin instead of waiting for the driver's
** JIT (about a second for a Datalog program on an H100). 1 when the cubin
** is in the cache now; 0 without a GPU (the emulator included) or when the
** link fails, which the run then reports. Starts the driver. */
int rf_rt_gpu_link_ptx0(const void *sec, uint64_t size, const char *cache_dir);

/* Several ranks on one host (runtime/dist): this process takes the GPU of
** index index modulo the GPUs visible (rank r on GPU r mod count). Only
** before the first rf_rt_gpu_available, which opens the driver once. */
void rf_rt_gpu_choose(int index);
/* Which physical GPU this process uses: its PCI address plus 1 (ranks on
** one host with the same number share a GPU); 0 without a real GPU (the
** emulator included: its memory is the host's), or where unknown. */
int64_t rf_rt_gpu_pci(void);

/* The GPU executor itself is rf_rt_gpu_device (runtime/rt_device.h), which
** the driver runs (runtime/rt_run.c). It follows the plans of o->gpu_plan
** (the .rfx file's GPLN section; a program not from a .rfx, o->rfx_file
** NULL, is planned when it opens) and loads o->ptx0 (the .rfx's PTX0) when
** its key binds it to those plans, else the source generated from the plans,
** compiled by NVRTC (through the disk cache). A PTX0 made with other options
** or by another ABI is compiled anew; one of other plans is an error naming
** the file, as are stale, damaged or missing plans. */

#endif
