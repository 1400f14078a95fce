// The fused AdamW update of optim/adamw.h on the GPU: one thread per element, fp32 math,
// identical formula and operation order to adamw_step_host.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "core/cuda/cuda_check.h"
#include "optim/cuda/optimizer_kernels.h"

namespace zt {
namespace {

struct AdamWConstants {
  float beta1, beta2, eps, decay, step_size, sqrt_bias_correction2, grad_multiplier;
};

template <typename Out>
__global__ void adamw_kernel(float* master, float* exp_avg, float* exp_avg_sq, const float* grad, Out* params_out,
                             std::size_t count, AdamWConstants c) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  float g = grad[i] * c.grad_multiplier;
  float p = master[i] * c.decay;
  float m = exp_avg[i] + (1.0f - c.beta1) * (g - exp_avg[i]);
  float v = c.beta2 * exp_avg_sq[i] + (1.0f - c.beta2) * g * g;
  p -= c.step_size * m / (sqrtf(v) / c.sqrt_bias_correction2 + c.eps);
  exp_avg[i] = m;
  exp_avg_sq[i] = v;
  master[i] = p;
  if (params_out) {
    if constexpr (std::is_same_v<Out, float>) params_out[i] = p;
    if constexpr (std::is_same_v<Out, __nv_bfloat16>) params_out[i] = __float2bfloat16_rn(p);
    if constexpr (std::is_same_v<Out, __half>) params_out[i] = __float2half_rn(p);
  }
}

}  // namespace

void cuda::adamw_step(const AdamWStep& a, cudaStream_t s) {
  if (a.count == 0) return;
  const AdamWHyper& h = a.hyper;
  double bias_correction1 = 1.0 - std::pow(static_cast<double>(h.beta1), static_cast<double>(a.step));
  double bias_correction2 = 1.0 - std::pow(static_cast<double>(h.beta2), static_cast<double>(a.step));
  AdamWConstants c{h.beta1,
                   h.beta2,
                   h.eps,
                   static_cast<float>(1.0 - static_cast<double>(h.lr) * h.weight_decay),
                   static_cast<float>(h.lr / bias_correction1),
                   static_cast<float>(std::sqrt(bias_correction2)),
                   a.grad_multiplier};
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
  }
  ZT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace zt
