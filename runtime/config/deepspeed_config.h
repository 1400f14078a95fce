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

namespace zt {

struct DeepSpeedTranslation {
  std::vector<std::pair<std::string, std::string>> settings;  // zerotrain key path -> YAML value text
  std::vector<std::string> notes;  // one line per key accepted that does nothing in zerotrain
  // The settings as a zerotrain YAML config (sections in the order first set).
  std::string yaml() const;
  // The settings as --set arguments ("train.gradient_clipping=1.0"), to apply over a YAML config.
  std::vector<std::string> overrides() const;
};

// world_size: the number of ranks of the run (train_batch_size is checked against it); `ranks_from`
// says where that number came from, for messages. Throws zt::UserError naming the file and listing
// every problem found (unsupported features with their alternatives, bad values, unknown keys).
DeepSpeedTranslation translate_deepspeed_config(const std::filesystem::path& file, int world_size,
                                                const std::string& ranks_from);

// The number of ranks the launcher started (OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS; else 1)
// and the variable it came from, read before MPI is initialised.
std::pair<int, std::string> launcher_world_size();

}  // namespace zt
