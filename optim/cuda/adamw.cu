// The fused AdamW update of optim/adamw.h on the GPU: one thread per element, the element update
// of adamw_update.h (the one the CPU runs), then the rounding into the compute dtype.
#include <stdexcept>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/cuda/cuda_check.h"
#include "optim/adamw_update.h"
#include "optim/cuda/optimizer_kernels.h"

namespace zt {
namespace {

template <typename Out>
__global__ void adamw_kernel(float* master, float* exp_avg, float* exp_avg_sq, const float* grad, Out* params_out,
                             std::size_t count, AdamWCoefficients c) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  adamw_update(c, grad[i], master[i], exp_avg[i], exp_avg_sq[i]);
  if (params_out) {
    const float p = master[i];
    if constexpr (std::is_same_v<Out, float>) params_out[i] = p;
    if constexpr (std::is_same_v<Out, __nv_bfloat16>) params_out[i] = __float2bfloat16_rn(p);
    if constexpr (std::is_same_v<Out, __half>) params_out[i] = __float2half_rn(p);
  }
}

}  // namespace

void cuda::adamw_step(const AdamWStep& a, cudaStream_t s) {
  if (a.count == 0) return;
  const AdamWCoefficients c = adamw_coefficients(a);
  constexpr int kThreads = 256;
  unsigned blocks = static_cast<unsigned>((a.count + kThreads - 1) / kThreads);
  switch (a.params_dtype) {
    case DType::f32:
      adamw_kernel<<<blocks, kThreads, 0, s>>>(a.master, a.exp_avg, a.exp_avg_sq, a.grad,
                                                static_cast<float*>(a.params_out), a.count, c);
      break;
    case DType::bf16:
      adamw_kernel<<<blocks, kThreads, 0, s>>>(a.master, a.exp_avg, a.exp_avg_sq, a.grad,
                                                static_cast<__nv_bfloat16*>(a.params_out), a.count, c);
      break;
    case DType::f16:
      adamw_kernel<<<blocks, kThreads, 0, s>>>(a.master, a.exp_avg, a.exp_avg_sq, a.grad,
                                                static_cast<__half*>(a.params_out), a.count, c);
      break;
    case DType::i32: throw std::invalid_argument("AdamW: parameters cannot be i32");
  }
  ZT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace zt
