// skeletons/cub/rf_wire.cu: the device's half of copying a database's narrow
// column as it is stored: a round of its pieces (skeletons/cuda/rf_wire.h),
// copied into device memory, widened into the column's own layout.
//
// Owns: the widening kernel and its launch. Built with the CUB library (not
// the program's generated module), so that it serves every program and
// needs nothing but the context: a column can be copied before or while the
// program's module loads. The emulator widens with the same rf_wire_get on
// the host (runtime/gpu/rt_gpu_wire.c).
#include "rf_cub.h"

#include "../cuda/rf_wire.h"

#include <cuda_runtime.h>

namespace {

enum { WIDEN_THREADS = 256, WIDEN_SPLIT = 8 /* CUDA blocks per piece */ };

// Piece blockIdx.x of the round, its values split over gridDim.y CUDA
// blocks: each thread stores every (WIDEN_THREADS * gridDim.y)-th value.
__global__ void __launch_bounds__(WIDEN_THREADS) rf_wire_widen(const unsigned char *round, int elem, void *dst)
{
    const rf_wire_blk h = ((const rf_wire_blk *)round)[blockIdx.x];
    const unsigned char *p = round + h.at;
    const uint64_t mul = rf_wire_pow10(h.exp);
    const uint32_t step = WIDEN_THREADS * gridDim.y;
    for (uint32_t i = blockIdx.y * WIDEN_THREADS + threadIdx.x; i < h.n; i += step)
        rf_wire_put(dst, elem, h.row + (int64_t)i, rf_wire_get(&h, p, mul, i));
}

} // namespace

extern "C" int rf_cub_wire_widen(const void *round, int32_t nblk, int elem, void *dst, void *stream)
{
    if (nblk <= 0) return 0;
    dim3 grid((unsigned)nblk, WIDEN_SPLIT, 1);
    rf_wire_widen<<<grid, WIDEN_THREADS, 0, static_cast<cudaStream_t>(stream)>>>((const unsigned char *)round, elem,
                                                                                dst);
    return (int)cudaGetLastError();
}

extern "C" int rf_cub_wire_load(void)
{
    cudaFuncAttributes a;
    return (int)cudaFuncGetAttributes(&a, rf_wire_widen);
}
