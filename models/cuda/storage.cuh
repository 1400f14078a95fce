// Storage types of the CUDA kernels: activations and parameters are float, bf16 or f16 in memory;
// all arithmetic is fp32. load()/store() convert (round to nearest even on store), and
// ZT_DISPATCH_STORAGE runs a templated launcher for the DType chosen at run time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>

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

// Eight consecutive elements as floats, in one 16-byte access (two for float storage): p must be
// 16-byte aligned (vectorizable() below).
template <typename S> __device__ __forceinline__ void load8(const S* p, float (&f)[8]) {
  if constexpr (sizeof(S) == 4) {
    const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
    f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
  } else {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    const S* h = reinterpret_cast<const S*>(&v);
#pragma unroll
    for (int i = 0; i < 8; ++i) f[i] = load(h + i);
  }
}
template <typename S> __device__ __forceinline__ void store8(S* p, const float (&f)[8]) {
  if constexpr (sizeof(S) == 4) {
    reinterpret_cast<float4*>(p)[0] = make_float4(f[0], f[1], f[2], f[3]);
    reinterpret_cast<float4*>(p)[1] = make_float4(f[4], f[5], f[6], f[7]);
  } else {
    uint4 v;
    S* h = reinterpret_cast<S*>(&v);
#pragma unroll
    for (int i = 0; i < 8; ++i) store(h + i, f[i]);
    *reinterpret_cast<uint4*>(p) = v;
  }
}
// The value a float becomes when stored as S (the one rounding of a stored result).
template <typename S> __device__ __forceinline__ float rounded(float v) {
  S s;
  store(&s, v);
  return load(&s);
}

// Whether load8/store8 may serve rows of `width` elements starting at these pointers.
inline bool vectorizable(std::size_t width, std::initializer_list<const void*> pointers) {
  bool ok = width % 8 == 0;
  for (const void* p : pointers) ok = ok && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  return ok;
}

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

