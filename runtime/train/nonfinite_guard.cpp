#include "runtime/train/nonfinite_guard.h"

#include <fmt/format.h>

#include <cmath>

#include "core/log.h"

namespace zt {
namespace {

// NaN's sign bit means nothing to a user: "nan", "inf", "-inf" or the value.
std::string number_text(double value) {
  if (std::isnan(value)) return "nan";
  return fmt::format("{:.4g}", value);
}

// "the loss is nan and the gradients are not finite (grad norm inf)"
std::string describe(const StepStats& stats, bool gradients_bad) {
  std::string text = fmt::format("the loss is {}", number_text(stats.loss));
  if (gradients_bad)
    text += fmt::format(" and the gradients are not finite (grad norm {})", number_text(stats.grad_norm));
  return text;
}

}  // namespace

NonFiniteGuard::NonFiniteGuard(NonFinitePolicy policy, std::int64_t max_consecutive, bool fp16_loss_scaling)
    : policy_(policy), max_consecutive_(max_consecutive), fp16_loss_scaling_(fp16_loss_scaling) {}

std::optional<std::string> NonFiniteGuard::check(std::int64_t step, const StepStats& stats) {
  const bool loss_bad = !std::isfinite(stats.loss);
  const bool gradients_bad = stats.skipped && !fp16_loss_scaling_;
  if (!loss_bad && !gradients_bad) {
    consecutive_ = 0;
    return std::nullopt;
  }
  ++consecutive_;
  const std::string what = describe(stats, gradients_bad);
  const char* update = stats.skipped ? "the update was skipped" : "the update was applied";
  if (policy_ == NonFinitePolicy::stop)
    return fmt::format("step {}: {} ({}); stopping because train.on_nonfinite is stop (skip goes on past such steps)",
                       step, what, update);
  if (consecutive_ >= max_consecutive_)
    return fmt::format("step {}: {}; that is {} non-finite steps in a row (train.max_consecutive_nonfinite = {}): "
                       "the run does not recover, stopping",
                       step, what, consecutive_, max_consecutive_);
  // The same decision on every rank: one warning is enough.
  if (log::rank() == 0)
    log::warn("step {}: {}; {}, going on (train.on_nonfinite: skip; {} in a row, the job stops at {})", step, what,
              update, consecutive_, max_consecutive_);
  return std::nullopt;
}

}  // namespace zt
