// The AdamW update of one element (adamw.h), written once: the CPU loops (adamw.cpp) and the CUDA
// kernel (cuda/adamw.cu) call it, so the two devices run the same operations in the same order.
#pragma once

#include <cmath>

#include "optim/adamw.h"

#if defined(__CUDACC__)
#define ZT_HOST_DEVICE __host__ __device__
#else
#define ZT_HOST_DEVICE
#endif

namespace zt {

// What one step's update needs besides the element's own values, the same for every element.
struct AdamWCoefficients {
  float beta1, beta2, eps;
  float decay;                  // 1 - lr * weight_decay
  float step_size;              // lr / (1 - beta1^t)
  float sqrt_bias_correction2;  // sqrt(1 - beta2^t)
  float grad_multiplier;        // 1 / loss_scale * clip coefficient
};

// Computed in f64 and rounded once, on the host.
AdamWCoefficients adamw_coefficients(const AdamWStep& step);

// Updates master, exp_avg (m) and exp_avg_sq (v) in place from the raw reduced gradient.
ZT_HOST_DEVICE inline void adamw_update(const AdamWCoefficients& c, float grad, float& master, float& exp_avg,
                                        float& exp_avg_sq) {
  const float g = grad * c.grad_multiplier;
  float p = master * c.decay;
  const float m = exp_avg + (1.0f - c.beta1) * (g - exp_avg);  // lerp, as PyTorch
  const float v = c.beta2 * exp_avg_sq + (1.0f - c.beta2) * g * g;
  p -= c.step_size * m / (sqrtf(v) / c.sqrt_bias_correction2 + c.eps);
  exp_avg = m;
  exp_avg_sq = v;
  master = p;
}

}  // namespace zt
