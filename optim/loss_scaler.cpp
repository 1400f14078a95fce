#include "optim/loss_scaler.h"

#include <algorithm>
#include <cmath>

#include "core/log.h"

namespace zt {

LossScaler::LossScaler(const LossScalerOptions& options)
    : options_(options),
      scale_(options.loss_scale > 0.0 ? options.loss_scale : std::ldexp(1.0, options.initial_scale_power)),
      hysteresis_left_(options.hysteresis) {}

bool LossScaler::update(bool overflow) {
  if (overflow) {
    ++skipped_steps_;
    if (dynamic()) {
      if (hysteresis_left_ <= 1) {
        if (scale_ <= options_.min_loss_scale) {
          log::warn("fp16 gradients overflowed at the minimum loss scale {}; skipping the step and going on",
                    options_.min_loss_scale);
        }
        scale_ = std::max(scale_ / 2.0, options_.min_loss_scale);
      } else {
        --hysteresis_left_;
      }
      last_overflow_iteration_ = iteration_;
    }
  } else if (dynamic()) {
    // DeepSpeed's rule (DynamicLossScaler.update_scale): the clean steps since the last overflow,
    // not counting this one; a whole number of windows of them doubles the scale on this step.
    const std::int64_t stable = iteration_ - last_overflow_iteration_ - 1;
    if (stable > 0 && stable % options_.loss_scale_window == 0) {
      hysteresis_left_ = options_.hysteresis;
      scale_ *= 2.0;
    }
  }
  ++iteration_;
  return overflow;
}

LossScaler::State LossScaler::state() const {
  return {scale_, hysteresis_left_, iteration_, last_overflow_iteration_, skipped_steps_};
}

void LossScaler::restore(const State& state) {
  scale_ = state.scale;
  hysteresis_left_ = state.hysteresis_left;
  iteration_ = state.iteration;
  last_overflow_iteration_ = state.last_overflow_iteration;
  skipped_steps_ = state.skipped_steps;
}

}  // namespace zt
