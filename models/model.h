// A model: an ordered list of blocks plus what it takes as input. See block.h for the contract of
// a block, activations.h for where the activations live and model_state.h for single-process
// parameter storage.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/block.h"
#include "models/hf_tensor_map.h"

namespace zt::models {

class Model {
 public:
  enum class InputKind {
    tokens,    // int32 (B, T) token ids (GPT-2)
    features,  // (B*T, input_width()) in the compute dtype (MLP)
  };

  virtual ~Model() = default;
  virtual std::string name() const = 0;
  virtual InputKind input_kind() const = 0;
  virtual int input_width() const { return 1; }
  // Largest T a micro batch may have (GPT-2: block_size).
  virtual int max_seq_len() const = 0;
  // Token models: the ids 0..vocab_size()-1. Their loss block keeps the logits of a forward in its
  // saved slot named "logits": B*T rows of at least vocab_size() elements (GPT-2 pads them).
  // 0 for a feature model.
  virtual int vocab_size() const { return 0; }
  // Feature models: `rows` samples of their synthetic task (rows x input_width() features, a
  // label each), deterministic from seed. Token models throw std::logic_error: they read shards.
  virtual void synthetic_batch(std::uint64_t seed, int rows, std::vector<float>& features,
                               std::vector<std::int32_t>& labels) const;
  // The Hugging Face counterpart (tensor names, config.json); nullopt when there is none.
  virtual std::optional<HfDescription> hf_description() const { return std::nullopt; }

  std::size_t num_blocks() const { return blocks_.size(); }
  Block& block(std::size_t i) const { return *blocks_.at(i); }
  std::size_t param_count() const;
  // Forward + backward FLOPs of one micro batch: the sum over blocks (see flops.h).
  double flops_per_step(int B, int T) const;

 protected:
  std::vector<std::unique_ptr<Block>> blocks_;
};

}  // namespace zt::models
