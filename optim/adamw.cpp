#include "optim/adamw.h"

#include "core/dtype.h"

#include <cmath>

namespace zt {

void adamw_step_host(const AdamWStep& a) {
  const AdamWHyper& h = a.hyper;
  const double bias_correction1 = 1.0 - std::pow(static_cast<double>(h.beta1), static_cast<double>(a.step));
  const double bias_correction2 = 1.0 - std::pow(static_cast<double>(h.beta2), static_cast<double>(a.step));
  const float step_size = static_cast<float>(h.lr / bias_correction1);
  const float sqrt_bias_correction2 = static_cast<float>(std::sqrt(bias_correction2));
  const float decay = static_cast<float>(1.0 - static_cast<double>(h.lr) * h.weight_decay);
  for (std::size_t i = 0; i < a.count; ++i) {
    float g = a.grad[i] * a.grad_multiplier;
    float p = a.master[i] * decay;
    float m = a.exp_avg[i] + (1.0f - h.beta1) * (g - a.exp_avg[i]);  // lerp, as PyTorch
    float v = h.beta2 * a.exp_avg_sq[i] + (1.0f - h.beta2) * g * g;
    p -= step_size * m / (std::sqrt(v) / sqrt_bias_correction2 + h.eps);
    a.exp_avg[i] = m;
    a.exp_avg_sq[i] = v;
    a.master[i] = p;
  }
  if (a.params_out) convert_host(a.master, DType::f32, a.params_out, a.params_dtype, a.count);
}

}  // namespace zt
