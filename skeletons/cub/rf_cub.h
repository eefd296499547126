/*
** skeletons/cub/rf_cub.h: device-wide primitives of the GPU backend (radix
** sort, scans, reduce-by-key, flagged selection) and the widening of a
** database's narrow columns copied as stored (rf_wire.cu), built by nvcc
** from CUB.
**
** Owns nothing at run time: every function works on device pointers that the
** caller allocated (from the runtime's memory pool) and enqueues its work on
** the caller's stream. The CUB convention holds throughout: with temp == NULL
** a function only stores in *temp_bytes how much scratch it needs; with
** scratch it does the work. Functions return a cudaError_t as an int (0: ok);
** rf_cub_error_string names it. Nothing here prints or synchronizes.
**
** The library links cudart statically, and cudart loads the driver only on
** its first call, so a binary holding it still starts without a GPU driver.
** cudart uses the context current to the thread: the runtime makes the
** device's primary context current before calling in here.
*/
#ifndef RF_CUB_H
#define RF_CUB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Binds cudart to device `device` (its primary context). */
int rf_cub_init(int device);
const char *rf_cub_error_string(int err);

/* Stable LSD radix sort of n (key, value) pairs by key bits [begin_bit, end_bit). */
int rf_cub_sort_pairs_u64_i64(void *temp, size_t *temp_bytes, const uint64_t *keys_in, uint64_t *keys_out,
                              const int64_t *vals_in, int64_t *vals_out, int64_t n, int begin_bit, int end_bit,
                              void *stream);
int rf_cub_sort_keys_u64(void *temp, size_t *temp_bytes, const uint64_t *keys_in, uint64_t *keys_out, int64_t n,
                         int begin_bit, int end_bit, void *stream);

/* out[i] = sum of in[0..i), for i in [0, n): 64-bit sums. */
int rf_cub_exclusive_sum_i64(void *temp, size_t *temp_bytes, const int64_t *in, int64_t *out, int64_t n,
                             void *stream);
/* The same over byte flags (0 or 1), summed in 64 bits. */
int rf_cub_exclusive_sum_u8(void *temp, size_t *temp_bytes, const uint8_t *in, int64_t *out, int64_t n,
                            void *stream);

/* Runs of equal keys: unique_out[r] and the sum of their values sums_out[r];
** the number of runs goes to *nruns_dev (device memory). */
int rf_cub_reduce_by_key_u64_i64(void *temp, size_t *temp_bytes, const uint64_t *keys_in, uint64_t *unique_out,
                                 const int64_t *vals_in, int64_t *sums_out, int64_t *nruns_dev, int64_t n,
                                 void *stream);

/* out = the i in [0, n) with flags[i] != 0, ascending (in == NULL), or
** in[i] for those i; the count goes to *nsel_dev (device memory). */
int rf_cub_select_flagged_i64(void *temp, size_t *temp_bytes, const int64_t *in, const uint8_t *flags,
                              int64_t *out, int64_t *nsel_dev, int64_t n, void *stream);

/* Widens a round of a narrow column copied as stored
** (skeletons/cuda/rf_wire.h): its nblk pieces, at round in device memory,
** into the column of elem bytes a value (4 or 8) at dst. */
int rf_cub_wire_widen(const void *round, int32_t nblk, int elem, void *dst, void *stream);

/* Loads the widening kernel now (the CUDA runtime loads a kernel at its
** first launch: about 1.3 ms of a fresh process's first copy as stored on
** an H100 host), on the thread that starts the runtime, beside the
** program's load. */
int rf_cub_wire_load(void);

#ifdef __cplusplus
}
#endif

#endif
