// Learning-rate schedules: the rate for each 1-based optimizer step.
//
//   constant        lr for every step
//   warmup_cosine   linear warmup from lr/warmup to lr over `warmup_steps`, then cosine decay
//                   from lr to min_lr at `total_steps`
//   warmup_linear   the same warmup, then linear decay from lr to min_lr at `total_steps`
// Warmup starts at lr/warmup_steps (not 0) so that the first step already moves the weights.
//
// DeepSpeed's WarmupLR, WarmupDecayLR and WarmupCosineLR, step for step as DeepSpeed's engine runs
// them, so that a ds_config.json trains with the rates DeepSpeed would use:
//   deepspeed_warmup         warmup from warmup_min_lr to lr (linear or log), then lr
//   deepspeed_warmup_decay   the same warmup, then linear decay back to warmup_min_lr at total_steps
//   deepspeed_warmup_cosine  the same warmup, then cosine decay to min_lr at total_steps
// DeepSpeed builds the scheduler before the first step (at iteration -1) and steps it after each
// optimizer step, so optimizer step s runs at iteration s - 2: the first two steps run at the
// warmup's start (0 for WarmupCosineLR's first), and warmup lasts max(2, warmup_steps) iterations.
#pragma once

#include <cstdint>

namespace zt {

// The schedule's own options: the config's `scheduler:` section is this struct, one field per key
// (runtime/config binds them); the initialisers are the keys' defaults.
struct LrScheduleOptions {
  enum class Kind { constant, warmup_cosine, warmup_linear, deepspeed_warmup, deepspeed_warmup_decay,
                    deepspeed_warmup_cosine };
  enum class Warmup { linear, log };  // DeepSpeed's warmup_type
  Kind type = Kind::warmup_cosine;
  std::int64_t warmup_steps = 0;
  double min_lr = 0.0;
  Warmup warmup_type = Warmup::linear;  // DeepSpeed's schedulers only
  double warmup_min_lr = 0.0;           // DeepSpeed's schedulers only: the rate warmup starts from

  bool is_deepspeeds() const {
    return type == Kind::deepspeed_warmup || type == Kind::deepspeed_warmup_decay ||
           type == Kind::deepspeed_warmup_cosine;
  }
  bool operator==(const LrScheduleOptions&) const = default;
};

struct LrSchedule : LrScheduleOptions {
  double lr = 3e-4;              // the peak (optimizer.lr)
  std::int64_t total_steps = 1;  // train.steps

  double at(std::int64_t step) const;
  // DeepSpeed's schedulers advance per applied update (`at` is given the update's number: a step
  // skipped for fp16 overflow does not move them), zerotrain's own per step.
  bool counts_updates() const { return is_deepspeeds(); }

 private:
  double deepspeed_at(std::int64_t step) const;
};

}  // namespace zt
