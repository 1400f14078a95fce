// Storage types of the CUDA kernels: activations and parameters are float, bf16 or f16 in memory;
// all arithmetic is fp32. load()/store() convert (round to nearest even on store), and
// ZT_DISPATCH_STORAGE runs a templated launcher for the DType chosen at run time.
#pragma once

#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdexcept>

#include "core/cuda/cuda_check.h"
#include "core/dtype.h"
#include "models/cuda/launch_grid.h"

namespace zt::models::cuda {

__device__ __forceinline__ float load(const float* p) { return *p; }
__device__ __forceinline__ float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ float load(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ __forceinline__ void store(__half* p, float v) { *p = __float2half_rn(v); }

// Sum over a warp, every lane gets the result.
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// At least one block, so that an empty tensor is a launch that does nothing rather than an
// invalid configuration; kernels guard their index.

inline void check_launch() { ZT_CUDA_CHECK(cudaGetLastError()); }

}  // namespace zt::models::cuda

// Calls LAUNCHER<T>(args...) with T the storage type of dtype DT.
#define ZT_DISPATCH_STORAGE(DT, LAUNCHER, ...)                                         \
  do {                                                                                 \
    switch (DT) {                                                                      \
      case ::zt::DType::f32: LAUNCHER<float>(__VA_ARGS__); break;                      \
      case ::zt::DType::bf16: LAUNCHER<__nv_bfloat16>(__VA_ARGS__); break;             \
      case ::zt::DType::f16: LAUNCHER<__half>(__VA_ARGS__); break;                     \
      case ::zt::DType::i32: throw std::invalid_argument("a float kernel given i32 storage"); \
    }                                                                                  \
    ::zt::models::cuda::check_launch();                                                \
  } while (0)

