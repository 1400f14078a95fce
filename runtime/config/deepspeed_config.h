// A DeepSpeed config (ds_config.json) read as zerotrain settings, for `zerotrain train --deepspeed`
// and a .json given to --config.
//
// Every DeepSpeed key with a zerotrain equivalent is mapped (fp16/bf16, optimizer AdamW/Adam,
// the WarmupLR/WarmupDecayLR/WarmupCosineLR schedulers, train_batch_size against micro batch x
// accumulation x ranks, steps_per_print, gradient_clipping, zero_optimization's buckets...);
// "auto" leaves the value to the rest of the config; keys that change nothing here are accepted
// with a note; keys of features zerotrain lacks are reported all together, each with what to use
// instead.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "runtime/config/config.h"

namespace zt {

struct DeepSpeedTranslation {
  using Settings = std::vector<std::pair<std::string, std::string>>;  // zerotrain key path -> YAML value text
  Settings settings;  // what the file states
  // DeepSpeed's own values for what the file leaves out (a rate that is constant without a
  // scheduler, no clipping, no weight decay, fp32, stage 0...): below a --config YAML, which
  // overrides them only where it states a key. Keys the file gives as "auto" are not here: they
  // take the rest of the config's value, as the Hugging Face Trainer fills them from its arguments.
  Settings deepspeed_defaults;
  // Keys DeepSpeed computes as a ratio of the optimizer's rate (WarmupCosineLR's ratios), stored
  // once optimizer.lr is known: key path -> ratio.
  std::vector<std::pair<std::string, double>> ratios_of_lr;
  std::vector<std::pair<std::string, double>> default_ratios_of_lr;  // the same, of DeepSpeed's defaults
  std::vector<std::string> notes;  // one line per key accepted that does nothing in zerotrain

  // The settings as a zerotrain YAML config (sections in the order first set).
  std::string yaml() const;
  std::string defaults_yaml() const;
};

// What DeepSpeed would run with the file that `config` (the resolved config of a run given the
// file) runs differently: one line per key, e.g. "optimizer.weight_decay is 0.1 (from the rest of
// the config); DeepSpeed runs this file with 0".
std::vector<std::string> differences_from_deepspeed(const DeepSpeedTranslation& translation, const Config& config);

// world_size: the number of ranks of the run (train_batch_size is checked against it); `ranks_from`
// says where that number came from, for messages. Throws zt::UserError naming the file and listing
// every problem found (unsupported features with their alternatives, bad values, unknown keys).
DeepSpeedTranslation translate_deepspeed_config(const std::filesystem::path& file, int world_size,
                                                const std::string& ranks_from);

}  // namespace zt
