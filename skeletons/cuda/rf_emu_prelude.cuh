// skeletons/cuda/rf_emu_prelude.cuh: what makes a generated CUDA program
// compile as host C++, for the GPU emulator of runtime/gpu (tests without a
// GPU run the real kernels and the real executor on the CPU this way).
//
// Owns the emulated CUDA built-ins: the thread coordinates, which the
// emulator's launcher sets before it runs each emulated thread, the atomics
// (threads run one at a time, so plain read-modify-writes are atomic), and
// __syncthreads, which yields to the launcher (it runs the threads of a block
// as coroutines where a kernel uses barriers). Only what the skeletons use.
#include <cmath>
#include <cstring>

#define __device__
#define __global__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static

struct rf_emu_dim3 {
    unsigned x, y, z;
};
extern "C" {
rf_emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
void (*rf_emu_sync_fn)(void);
}
static inline void __syncthreads() { rf_emu_sync_fn(); }
static inline void __threadfence() {}

static inline long long __double_as_longlong(double x)
{
    long long b;
    std::memcpy(&b, &x, 8);
    return b;
}
static inline double __longlong_as_double(long long b)
{
    double x;
    std::memcpy(&x, &b, 8);
    return x;
}
using std::round;

static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    unsigned long long o = *p;
    *p = o + v;
    return o;
}
static inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long cmp, unsigned long long v)
{
    unsigned long long o = *p;
    if (o == cmp) *p = v;
    return o;
}
static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v)
{
    unsigned long long o = *p;
    if (v < o) *p = v;
    return o;
}
static inline unsigned int atomicCAS(unsigned int *p, unsigned int cmp, unsigned int v)
{
    unsigned int o = *p;
    if (o == cmp) *p = v;
    return o;
}
static inline unsigned int atomicMin(unsigned int *p, unsigned int v)
{
    unsigned int o = *p;
    if (v < o) *p = v;
    return o;
}
static inline unsigned long long atomicMax(unsigned long long *p, unsigned long long v)
{
    unsigned long long o = *p;
    if (v > o) *p = v;
    return o;
}
