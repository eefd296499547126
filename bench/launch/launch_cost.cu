// bench/launch/launch_cost.cu: what a kernel launch costs the host, by the
// size of the kernel's parameters (redfox passes every kernel one
// rf_gpu_args by value: 2,352 bytes). Empty kernels, one block of 256
// threads, 2,000 launches per size on one stream after 200 untimed ones;
// prints the host time per launch and the time per launch until the GPU
// has run them all.
//   nvcc -O2 -arch=sm_90 -o launch_cost launch_cost.cu && ./launch_cost
#include <chrono>
#include <cstdio>
#include <cuda_runtime.h>

template <int N> struct P {
    unsigned long long w[N];
};
template <int N> __global__ void k(P<N> p)
{
    if (p.w[0] == 12345 && threadIdx.x == 999) p.w[1]++;
}

template <int N> static void run(cudaStream_t s)
{
    P<N> p = {};
    for (int i = 0; i < 200; i++) k<N><<<1, 256, 0, s>>>(p);
    cudaStreamSynchronize(s);
    const int reps = 2000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; i++) k<N><<<1, 256, 0, s>>>(p);
    auto t1 = std::chrono::steady_clock::now();
    cudaStreamSynchronize(s);
    auto t2 = std::chrono::steady_clock::now();
    double host = std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
    double all = std::chrono::duration<double, std::micro>(t2 - t0).count() / reps;
    printf("%6d bytes of parameters: %6.2f us host per launch, %6.2f us per launch until done\n", (int)sizeof(P<N>), host, all);
}

int main()
{
    cudaStream_t s;
    if (cudaStreamCreate(&s) != cudaSuccess) {
        fprintf(stderr, "launch_cost: no GPU\n");
        return 1;
    }
    run<2>(s);
    run<16>(s);
    run<64>(s);
    run<128>(s);
    run<294>(s);
    run<500>(s);
    return 0;
}
