// A small MLP for fast engine tests: n_hidden blocks of Linear + GELU, then an output block of
// Linear + softmax cross-entropy over n_classes. Every row of the (B*T, input_width) input is one
// sample; T only multiplies the batch. Same Block interface as GPT-2, no tying.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.h"

namespace zt::models {

struct MLPConfig {
  int input_width = 32;
  int hidden_width = 64;
  int n_hidden = 3;
  int n_classes = 8;
  void validate() const;
};

class MLP final : public Model {
 public:
  explicit MLP(const MLPConfig& config);
  const MLPConfig& config() const { return config_; }
  std::string name() const override { return "mlp"; }
  InputKind input_kind() const override { return InputKind::features; }
  int input_width() const override { return config_.input_width; }
  int max_seq_len() const override { return 1 << 16; }
  void synthetic_batch(std::uint64_t seed, int rows, std::vector<float>& features,
                       std::vector<std::int32_t>& labels) const override;

 private:
  MLPConfig config_;
};

// A learnable synthetic classification task: features ~ N(0, 1), label = argmax of a fixed random
// linear "teacher" (the same for every seed) applied to them. Deterministic from seed.
void mlp_synthetic_batch(const MLPConfig& config, std::uint64_t seed, int rows, std::vector<float>& features,
                         std::vector<std::int32_t>& labels);

}  // namespace zt::models
