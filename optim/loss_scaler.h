// fp16 loss scaling with DeepSpeed's semantics.
//
// Dynamic (loss_scale == 0): start at 2^initial_scale_power. A step whose gradients overflowed on
// any rank is skipped on every rank; the scale is halved on an overflow once `hysteresis`
// overflows have been absorbed since the last growth (the counter refills when the scale grows),
// and never goes below min_loss_scale. After `loss_scale_window` steps without an overflow, the
// scale doubles. At the minimum scale an overflow still skips the step and warns; training goes
// on instead of stopping. Static (loss_scale > 0): the scale never changes; overflowing steps are
// still skipped. bf16 and fp32 runs use a scale of 1 and never skip for overflow here.
#pragma once

#include <cstdint>

namespace zt {

// Also the loss-scaling keys of the config's precision section (runtime/config/config.h): these
// are their defaults.
struct LossScalerOptions {
  double loss_scale = 0.0;  // 0: dynamic
  int initial_scale_power = 16;
  std::int64_t loss_scale_window = 1000;
  int hysteresis = 2;
  double min_loss_scale = 1.0;
  bool operator==(const LossScalerOptions&) const = default;
};

class LossScaler {
 public:
  explicit LossScaler(const LossScalerOptions& options);

  double scale() const { return scale_; }
  // Records the outcome of one step (overflow: some rank's gradients held inf/NaN). Returns true
  // when the optimizer step must be skipped.
  bool update(bool overflow);
  std::int64_t skipped_steps() const { return skipped_steps_; }
  bool dynamic() const { return options_.loss_scale == 0.0; }

  // The mutable state, for checkpoints.
  struct State {
    double scale;
    int hysteresis_left;
    std::int64_t iteration;
    std::int64_t last_overflow_iteration;
    std::int64_t skipped_steps;
  };
  State state() const;
  void restore(const State& state);

 private:
  LossScalerOptions options_;
  double scale_;
  int hysteresis_left_;
  std::int64_t iteration_ = 0;
  std::int64_t last_overflow_iteration_ = -1;
  std::int64_t skipped_steps_ = 0;
};

}  // namespace zt
