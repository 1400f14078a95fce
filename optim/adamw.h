// Fused AdamW over one contiguous range of this rank's shard.
//
// One pass reads the reduced gradient (scaled by grad_multiplier, which folds in loss-scale
// unscaling and gradient clipping), updates the moments and the fp32 master weights, and writes
// the updated weights in the compute dtype for the next forward. The update follows
// torch.optim.AdamW (decoupled weight decay, bias correction folded into the step size and the
// denominator) so zerotrain and PyTorch agree to rounding:
//   p   <- p * (1 - lr * wd)
//   m   <- m + (1 - b1) * (g - m)
//   v   <- b2 * v + (1 - b2) * g^2
//   p   <- p - (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// Weight decay is per call: the caller splits a shard into decayed and non-decayed segments.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace zt {

// What one update computes with: fp32, as the update runs.
struct AdamWHyper {
  float lr = 3e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
};

// The optimizer's own options: the config's `optimizer:` section is this struct, one field per key
// (runtime/config binds them); the initialisers are the keys' defaults.
struct AdamWOptions {
  double lr = 3e-4;  // the peak; the schedule gives each step's rate
  std::array<double, 2> betas{0.9, 0.95};
  double eps = 1e-8;
  double weight_decay = 0.1;
  bool no_decay_bias_and_norm = true;  // biases and norm gains are not decayed
  bool no_decay_embeddings = false;    // token and position embeddings are not decayed

  // These options at rate lr, in the update's fp32.
  AdamWHyper hyper(double rate) const {
    return {static_cast<float>(rate), static_cast<float>(betas[0]), static_cast<float>(betas[1]),
            static_cast<float>(eps), static_cast<float>(weight_decay)};
  }
  bool operator==(const AdamWOptions&) const = default;
};

struct AdamWStep {
  float* master = nullptr;        // fp32 master weights, updated in place
  float* exp_avg = nullptr;       // m
  float* exp_avg_sq = nullptr;    // v
  const float* grad = nullptr;    // fp32 reduced gradient
  void* params_out = nullptr;     // updated weights in params_dtype; may be null
  DType params_dtype = DType::f32;
  std::size_t count = 0;
  std::int64_t step = 1;          // 1-based step number of this update, for bias correction
  float grad_multiplier = 1.0f;   // 1 / loss_scale * clip coefficient
  AdamWHyper hyper;
};

// The update on host pointers, on the calling thread (optimizer_ops.h runs it on a device).
void adamw_step_host(const AdamWStep& args);

}  // namespace zt
