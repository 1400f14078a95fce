#include <stdexcept>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "core/cuda/cuda_check.h"
#include "core/cuda/elementwise.h"

namespace zt::cuda {
namespace {

constexpr int kThreads = 256;

__device__ float to_float(float v) { return v; }
__device__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ float to_float(__half v) { return __half2float(v); }

template <typename T> __device__ T from_float(float v);
template <> __device__ float from_float<float>(float v) { return v; }
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __half from_float<__half>(float v) { return __float2half_rn(v); }

// Grid-stride loops: a grid of at most kMaxBlocks blocks covers any element count.
template <typename Dst, typename Src> __global__ void convert_kernel(Dst* dst, const Src* src, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = from_float<Dst>(to_float(src[i]));
}

template <typename Src> __global__ void accumulate_kernel(float* dst, const Src* src, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] += to_float(src[i]);
}

constexpr std::size_t kMaxBlocks = 4096;
unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::min(kMaxBlocks, std::max<std::size_t>(1, (n + kThreads - 1) / kThreads)));
}

// Calls f with a typed null pointer of the view's element type.
template <typename F> void with_type(DType dtype, F f) {
  switch (dtype) {
    case DType::f32: f(static_cast<float*>(nullptr)); break;
    case DType::bf16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
    case DType::f16: f(static_cast<__half*>(nullptr)); break;
    case DType::i32: throw std::invalid_argument("integers (i32) are copied, not converted");
  }
}

}  // namespace

void convert_copy(BufferView dst, BufferView src, cudaStream_t stream) {
  with_type(dst.dtype, [&](auto* dst_type) {
    with_type(src.dtype, [&](auto* src_type) {
      using Dst = std::remove_pointer_t<decltype(dst_type)>;
      using Src = std::remove_pointer_t<decltype(src_type)>;
      convert_kernel<<<blocks_for(dst.numel), kThreads, 0, stream>>>(static_cast<Dst*>(dst.data),
                                                                     static_cast<const Src*>(src.data), dst.numel);
    });
  });
  ZT_CUDA_CHECK(cudaGetLastError());
}

void accumulate(BufferView dst, BufferView src, cudaStream_t stream) {
  with_type(src.dtype, [&](auto* src_type) {
    using Src = std::remove_pointer_t<decltype(src_type)>;
    accumulate_kernel<<<blocks_for(dst.numel), kThreads, 0, stream>>>(static_cast<float*>(dst.data),
                                                                      static_cast<const Src*>(src.data), dst.numel);
  });
  ZT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace zt::cuda
