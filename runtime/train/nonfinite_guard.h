// Decides what a step whose loss or gradients are inf/NaN means for the job (train.on_nonfinite).
//
// The engine already refuses to apply non-finite gradients (StepStats::skipped, the same on every
// rank), so the parameters are still those of the last good step; what is left to decide is whether
// to go on. `stop` ends the job at the first such step; `skip` goes on with a warning and ends it
// after train.max_consecutive_nonfinite of them in a row (a run that does not recover). Under fp16
// dynamic loss scaling, skipped steps are how the scaler finds its scale, so there only a non-finite
// loss counts. Every input is the same on every rank, so every rank decides the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/config/config.h"
#include "zero/engine.h"

namespace zt {

class NonFiniteGuard {
 public:
  NonFiniteGuard(NonFinitePolicy policy, std::int64_t max_consecutive, bool fp16_loss_scaling);

  // Why the job must stop after `step`, or nothing; warns about a step it lets pass.
  std::optional<std::string> check(std::int64_t step, const StepStats& stats);
  std::int64_t consecutive() const { return consecutive_; }

 private:
  NonFinitePolicy policy_;
  std::int64_t max_consecutive_;
  bool fp16_loss_scaling_;
  std::int64_t consecutive_ = 0;
};

}  // namespace zt
