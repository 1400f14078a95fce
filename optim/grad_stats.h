// Gradient statistics for one rank's shard: the squared L2 norm (for global-norm clipping,
// summed across ranks by the engine) and whether any element is inf/NaN (fp16 overflow, or a
// diverging bf16/fp32 run).
#pragma once

#include <cstddef>

namespace zt {

struct GradStats {
  double sum_of_squares = 0.0;  // accumulated in double: shards of 10^8 elements lose no digits
  bool non_finite = false;
};

GradStats grad_stats_host(const float* grad, std::size_t count);

// The factor gradients are multiplied by so that their global norm is at most max_norm
// (max_norm <= 0: no clipping). Like torch.nn.utils.clip_grad_norm_: max_norm / (norm + 1e-6),
// applied only when that is below 1.
float clip_coefficient(double global_norm, double max_norm);

}  // namespace zt
