// Learning-rate schedules: the rate for each 1-based optimizer step.
//
//   constant        lr for every step
//   warmup_cosine   linear warmup from lr/warmup to lr over `warmup_steps`, then cosine decay
//                   from lr to min_lr at `total_steps`
//   warmup_linear   the same warmup, then linear decay from lr to min_lr at `total_steps`
// Warmup starts at lr/warmup_steps (not 0) so that the first step already moves the weights.
#pragma once

#include <cstdint>
#include <string_view>

namespace zt {

struct LrSchedule {
  enum class Kind { constant, warmup_cosine, warmup_linear };
  Kind kind = Kind::constant;
  double lr = 3e-4;
  double min_lr = 0.0;
  std::int64_t warmup_steps = 0;
  std::int64_t total_steps = 1;

  double at(std::int64_t step) const;
  static Kind parse_kind(std::string_view name);  // throws std::invalid_argument
};

}  // namespace zt
