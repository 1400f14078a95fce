#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace zt {

double LrSchedule::at(std::int64_t step) const {
  if (kind == Kind::constant) return lr;
  if (step <= warmup_steps) return lr * static_cast<double>(step) / static_cast<double>(warmup_steps);
  std::int64_t decay_steps = std::max<std::int64_t>(1, total_steps - warmup_steps);
  double progress = std::clamp(static_cast<double>(step - warmup_steps) / static_cast<double>(decay_steps), 0.0, 1.0);
  double shape = kind == Kind::warmup_cosine ? 0.5 * (1.0 + std::cos(std::numbers::pi * progress)) : 1.0 - progress;
  return min_lr + (lr - min_lr) * shape;
}

LrSchedule::Kind LrSchedule::parse_kind(std::string_view name) {
  if (name == "constant") return Kind::constant;
  if (name == "warmup_cosine") return Kind::warmup_cosine;
  if (name == "warmup_linear") return Kind::warmup_linear;
  throw std::invalid_argument("unknown scheduler '" + std::string(name) +
                              "' (expected constant, warmup_cosine or warmup_linear)");
}

}  // namespace zt
