// skeletons/cub/rf_cub.cu: the C interface of rf_cub.h over CUB's
// device-wide algorithms; compiled by nvcc for sm_80 and sm_90 only.
//
// Owns no state. The cudaError_t of every CUB call is handed back unchanged
// so that the runtime can report it; nothing is synchronized here.
#include "rf_cub.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cuda_runtime.h>

namespace {

// Converts the byte flags to 64-bit addends on the fly, so that the scan's
// accumulator is 64-bit (a scan of bytes would accumulate in bytes).
struct to_i64 {
    __host__ __device__ long long operator()(unsigned char f) const { return (long long)f; }
};

inline cudaStream_t S(void *s) { return static_cast<cudaStream_t>(s); }

} // namespace

extern "C" int rf_cub_init(int device) { return (int)cudaSetDevice(device); }

extern "C" const char *rf_cub_error_string(int err) { return cudaGetErrorString((cudaError_t)err); }

extern "C" int rf_cub_sort_pairs_u64_i64(void *temp, size_t *temp_bytes, const uint64_t *keys_in, uint64_t *keys_out,
                                         const int64_t *vals_in, int64_t *vals_out, int64_t n, int begin_bit,
                                         int end_bit, void *stream)
{
    return (int)cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, (const unsigned long long *)keys_in,
                                                (unsigned long long *)keys_out, (const long long *)vals_in,
                                                (long long *)vals_out, (long long)n, begin_bit, end_bit, S(stream));
}

extern "C" int rf_cub_sort_keys_u64(void *temp, size_t *temp_bytes, const uint64_t *keys_in, uint64_t *keys_out,
                                    int64_t n, int begin_bit, int end_bit, void *stream)
{
    return (int)cub::DeviceRadixSort::SortKeys(temp, *temp_bytes, (const unsigned long long *)keys_in,
                                               (unsigned long long *)keys_out, (long long)n, begin_bit, end_bit,
                                               S(stream));
}

extern "C" int rf_cub_exclusive_sum_i64(void *temp, size_t *temp_bytes, const int64_t *in, int64_t *out, int64_t n,
                                        void *stream)
{
    return (int)cub::DeviceScan::ExclusiveScan(temp, *temp_bytes, (const long long *)in, (long long *)out,
                                               ::cuda::std::plus<long long>(), (long long)0, (long long)n, S(stream));
}

extern "C" int rf_cub_exclusive_sum_u8(void *temp, size_t *temp_bytes, const uint8_t *in, int64_t *out, int64_t n,
                                       void *stream)
{
    thrust::transform_iterator<to_i64, const unsigned char *> it((const unsigned char *)in, to_i64());
    return (int)cub::DeviceScan::ExclusiveScan(temp, *temp_bytes, it, (long long *)out,
                                               ::cuda::std::plus<long long>(), (long long)0, (long long)n, S(stream));
}

extern "C" int rf_cub_reduce_by_key_u64_i64(void *temp, size_t *temp_bytes, const uint64_t *keys_in,
                                            uint64_t *unique_out, const int64_t *vals_in, int64_t *sums_out,
                                            int64_t *nruns_dev, int64_t n, void *stream)
{
    return (int)cub::DeviceReduce::ReduceByKey(temp, *temp_bytes, (const unsigned long long *)keys_in,
                                               (unsigned long long *)unique_out, (const long long *)vals_in,
                                               (long long *)sums_out, (long long *)nruns_dev,
                                               ::cuda::std::plus<long long>(), (long long)n, S(stream));
}

extern "C" int rf_cub_select_flagged_i64(void *temp, size_t *temp_bytes, const int64_t *in, const uint8_t *flags,
                                         int64_t *out, int64_t *nsel_dev, int64_t n, void *stream)
{
    if (in)
        return (int)cub::DeviceSelect::Flagged(temp, *temp_bytes, (const long long *)in, flags, (long long *)out,
                                               (long long *)nsel_dev, (long long)n, S(stream));
    thrust::counting_iterator<long long> it(0);
    return (int)cub::DeviceSelect::Flagged(temp, *temp_bytes, it, flags, (long long *)out, (long long *)nsel_dev,
                                           (long long)n, S(stream));
}
