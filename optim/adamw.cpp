#include "optim/adamw.h"

#include "core/cpu_kernel_choice.h"
#include "core/dtype.h"

#include <cmath>
#include <cstddef>

// The update loop is compiled for AVX2 and AVX-512 beside the x86-64 baseline and the best one
// is chosen at load time (GCC function multi-versioning); this file is built with
// -O3 -fno-math-errno (optim/CMakeLists.txt) so that the square root vectorises.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ZT_ADAMW_KERNEL __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define ZT_ADAMW_KERNEL
#endif

namespace zt {
namespace {

struct Coefficients {
  float step_size;
  float sqrt_bias_correction2;
  float decay;
};

// Elements [begin, end) of one AdamW step: one pass, SIMD lanes across elements.
ZT_ADAMW_KERNEL void adamw_range(const AdamWStep& a, Coefficients k, std::size_t begin, std::size_t end) {
  const AdamWHyper h = a.hyper;
  float* __restrict master = a.master;
  float* __restrict exp_avg = a.exp_avg;
  float* __restrict exp_avg_sq = a.exp_avg_sq;
  const float* __restrict grad = a.grad;
  const float grad_multiplier = a.grad_multiplier;
  for (std::size_t i = begin; i < end; ++i) {
    float g = grad[i] * grad_multiplier;
    float p = master[i] * k.decay;
    float m = exp_avg[i] + (1.0f - h.beta1) * (g - exp_avg[i]);  // lerp, as PyTorch
    float v = h.beta2 * exp_avg_sq[i] + (1.0f - h.beta2) * g * g;
    p -= k.step_size * m / (std::sqrt(v) / k.sqrt_bias_correction2 + h.eps);
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    master[i] = p;
  }
}

// The simple scalar loop the vectorised one is checked against (train.cpu_reference_kernels).
void adamw_reference_range(const AdamWStep& a, Coefficients k, std::size_t begin, std::size_t end) {
  const AdamWHyper& h = a.hyper;
  for (std::size_t i = begin; i < end; ++i) {
    float g = a.grad[i] * a.grad_multiplier;
    float p = a.master[i] * k.decay;
    float m = a.exp_avg[i] + (1.0f - h.beta1) * (g - a.exp_avg[i]);
    float v = h.beta2 * a.exp_avg_sq[i] + (1.0f - h.beta2) * g * g;
    p -= k.step_size * m / (std::sqrt(v) / k.sqrt_bias_correction2 + h.eps);
    a.exp_avg[i] = m;
    a.exp_avg_sq[i] = v;
    a.master[i] = p;
  }
}

}  // namespace

void adamw_step_host(const AdamWStep& a) {
  const AdamWHyper& h = a.hyper;
  const double bias_correction1 = 1.0 - std::pow(static_cast<double>(h.beta1), static_cast<double>(a.step));
  const double bias_correction2 = 1.0 - std::pow(static_cast<double>(h.beta2), static_cast<double>(a.step));
  const Coefficients k{static_cast<float>(h.lr / bias_correction1), static_cast<float>(std::sqrt(bias_correction2)),
                       static_cast<float>(1.0 - static_cast<double>(h.lr) * h.weight_decay)};
  if (reference_cpu_kernels())
    adamw_reference_range(a, k, 0, a.count);
  else
    adamw_range(a, k, 0, a.count);
  if (a.params_out) convert_host(a.master, DType::f32, a.params_out, a.params_dtype, a.count);
}

}  // namespace zt
