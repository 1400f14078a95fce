// `model.init_from`: Hugging Face weights (a save_pretrained directory or a .safetensors file) as
// the starting point of a fresh run. As a ShardSource it gives the engine any range of any block
// (so every ZeRO stage and world size loads it), with zero AdamW moments: a fresh optimizer.
#pragma once

#include <filesystem>
#include <vector>

#include "models/model.h"
#include "zero/engine.h"

namespace zt::interop {

// The safetensors file of `init_from` (the directory's model.safetensors, or init_from itself
// when it is a file), or a zt::UserError saying what is there instead (nothing, a sharded or a
// pytorch_model.bin checkpoint).
std::filesystem::path hf_weights_file(const std::filesystem::path& init_from);

class HfWeights final : public ShardSource {
 public:
  // Reads and checks the whole checkpoint now: every tensor the model needs is present with the
  // shape the config gives it, nothing unknown is left over, and its config.json (when there is
  // one) describes the same computation. Every problem found goes into one zt::UserError, each
  // naming the tensor (or key) and what was expected and found. Holds the model's fp32 parameters.
  HfWeights(const std::filesystem::path& init_from, const models::Model& model);

  void read(std::size_t block, std::size_t begin, std::size_t count, float* master, float* exp_avg,
            float* exp_avg_sq) override;
  std::size_t tensor_count() const { return tensor_count_; }

 private:
  std::vector<std::vector<float>> blocks_;  // each block's flat parameter (padding zero)
  std::size_t tensor_count_ = 0;
};

}  // namespace zt::interop
