#include "optim/adamw.h"

#include "core/cpu_kernel_choice.h"
#include "core/dtype.h"
#include "optim/adamw_update.h"

#include <cmath>
#include <cstddef>

// The update loop is compiled for AVX2 and AVX-512 beside the x86-64 baseline and the best one
// is chosen at load time (GCC function multi-versioning); this file is built with
// -O3 -fno-math-errno (optim/CMakeLists.txt) so that the square root vectorises, and without FMA
// contraction so that every clone, and every lane of one, rounds each element's update alike.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ZT_ADAMW_KERNEL __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define ZT_ADAMW_KERNEL
#endif

namespace zt {
namespace {

// Elements [begin, end) of one AdamW step: one pass, SIMD lanes across elements.
ZT_ADAMW_KERNEL void adamw_range(const AdamWStep& a, const AdamWCoefficients& c, std::size_t begin, std::size_t end) {
  float* __restrict master = a.master;
  float* __restrict exp_avg = a.exp_avg;
  float* __restrict exp_avg_sq = a.exp_avg_sq;
  const float* __restrict grad = a.grad;
  const AdamWCoefficients k = c;
  for (std::size_t i = begin; i < end; ++i) adamw_update(k, grad[i], master[i], exp_avg[i], exp_avg_sq[i]);
}

// The same update in a plain loop, neither cloned nor vectorised: what the vectorised one is
// checked against (train.cpu_reference_kernels).
void adamw_reference_range(const AdamWStep& a, const AdamWCoefficients& c, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) adamw_update(c, a.grad[i], a.master[i], a.exp_avg[i], a.exp_avg_sq[i]);
}

}  // namespace

AdamWCoefficients adamw_coefficients(const AdamWStep& a) {
  const AdamWHyper& h = a.hyper;
  const double bias_correction1 = 1.0 - std::pow(static_cast<double>(h.beta1), static_cast<double>(a.step));
  const double bias_correction2 = 1.0 - std::pow(static_cast<double>(h.beta2), static_cast<double>(a.step));
  return {h.beta1,
          h.beta2,
          h.eps,
          static_cast<float>(1.0 - static_cast<double>(h.lr) * h.weight_decay),
          static_cast<float>(h.lr / bias_correction1),
          static_cast<float>(std::sqrt(bias_correction2)),
          a.grad_multiplier};
}

void adamw_step_host(const AdamWStep& a) {
  const AdamWCoefficients c = adamw_coefficients(a);
  if (reference_cpu_kernels())
    adamw_reference_range(a, c, 0, a.count);
  else
    adamw_range(a, c, 0, a.count);
  if (a.params_out) convert_host(a.master, DType::f32, a.params_out, a.params_dtype, a.count);
}

}  // namespace zt
