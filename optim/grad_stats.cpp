#include "optim/grad_stats.h"

#include <cmath>

namespace zt {

GradStats grad_stats_host(const float* grad, std::size_t count) {
  GradStats stats;
  for (std::size_t i = 0; i < count; ++i) {
    double g = grad[i];
    stats.sum_of_squares += g * g;
  }
  // inf or NaN anywhere makes the sum inf or NaN, so one check at the end finds them all.
  stats.non_finite = !std::isfinite(stats.sum_of_squares);
  return stats;
}

float clip_coefficient(double global_norm, double max_norm) {
  if (max_norm <= 0.0 || !std::isfinite(global_norm)) return 1.0f;
  double coefficient = max_norm / (global_norm + 1e-6);
  return coefficient < 1.0 ? static_cast<float>(coefficient) : 1.0f;
}

}  // namespace zt
