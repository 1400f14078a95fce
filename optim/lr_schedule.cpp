#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace zt {

double LrSchedule::at(std::int64_t step) const {
  if (type == Kind::constant) return lr;
  if (type != Kind::warmup_cosine && type != Kind::warmup_linear) return deepspeed_at(step);
  if (step <= warmup_steps) return lr * static_cast<double>(step) / static_cast<double>(warmup_steps);
  std::int64_t decay_steps = std::max<std::int64_t>(1, total_steps - warmup_steps);
  double progress = std::clamp(static_cast<double>(step - warmup_steps) / static_cast<double>(decay_steps), 0.0, 1.0);
  double shape = type == Kind::warmup_cosine ? 0.5 * (1.0 + std::cos(std::numbers::pi * progress)) : 1.0 - progress;
  return min_lr + (lr - min_lr) * shape;
}

// The arithmetic follows DeepSpeed's lr_schedules.py term by term, so that the rates agree to
// the last bit or two (the cosine's ratios are min_lr / lr and warmup_min_lr / lr here).
double LrSchedule::deepspeed_at(std::int64_t step) const {
  const double iteration = static_cast<double>(step - 2);
  const double warmup_iterations = static_cast<double>(std::max<std::int64_t>(2, warmup_steps));
  const double total = static_cast<double>(total_steps);
  const bool cosine = type == Kind::deepspeed_warmup_cosine;
  if (iteration < 0) return cosine ? 0.0 : warmup_min_lr;
  double gamma = 1.0;  // how far up the warmup, 0..1
  if (iteration < warmup_iterations)
    gamma = warmup_type == Warmup::log ? 1.0 / std::log(warmup_iterations) * std::log(iteration + 1)
                                  : iteration / warmup_iterations;
  if (cosine) {
    const double start_ratio = lr > 0 ? warmup_min_lr / lr : 0.0, end_ratio = lr > 0 ? min_lr / lr : 0.0;
    if (iteration < warmup_iterations) return lr * (start_ratio + gamma * (1.0 - start_ratio));
    const double progress =
        std::min(1.0, (iteration - warmup_iterations + 1) / std::max(1.0, total - warmup_iterations));
    const double shape = (1 + std::cos(std::numbers::pi * progress)) / 2;
    return lr * std::max(0.0, end_ratio + (1.0 - end_ratio) * shape);
  }
  if (type == Kind::deepspeed_warmup_decay && iteration >= warmup_iterations)
    gamma = std::max(0.0, (total - iteration) / std::max(1.0, total - warmup_iterations));
  return warmup_min_lr + (lr - warmup_min_lr) * gamma;
}

}  // namespace zt
