// GPT-2 as a family: the config's model keys to a GPT2.
#include "models/family.h"
#include "models/gpt2.h"

namespace zt::models {
namespace {

GPT2Config gpt2_config(const ModelConfig& config) {
  GPT2Config gpt2;
  gpt2.n_layer = static_cast<int>(config.n_layer);
  gpt2.n_head = static_cast<int>(config.n_head);
  gpt2.n_embd = static_cast<int>(config.n_embd);
  gpt2.vocab_size = static_cast<int>(config.vocab_size);
  // Padding the vocabulary to a multiple of 64 keeps the GPU LM-head product aligned; the small
  // byte-level vocabularies are left as they are.
  gpt2.padded_vocab_size = config.vocab_size > 1024 ? static_cast<int>((config.vocab_size + 63) / 64 * 64)
                                                    : static_cast<int>(config.vocab_size);
  gpt2.block_size = static_cast<int>(config.block_size);
  return gpt2;
}

class GPT2Family final : public ModelFamily {
 public:
  std::string_view name() const override { return "gpt2"; }
  ModelType type() const override { return ModelType::gpt2; }
  std::vector<ModelRule> rules() const override { return {heads_divide_width_rule()}; }
  // Its kernels index rows with `int`.
  std::int64_t max_rows_per_micro_batch() const override { return std::numeric_limits<int>::max(); }
  bool reads_tokens() const override { return true; }
  std::unique_ptr<Model> build(const ModelConfig& config) const override {
    return std::make_unique<GPT2>(gpt2_config(config));
  }
  // The MLP's expansion c_fc: (B*T, C) x (C, 4C).
  GemmShape widest_product(const ModelConfig& config, int micro_batch, int seq_len) const override {
    const int C = static_cast<int>(config.n_embd);
    return {micro_batch * seq_len, 4 * C, C};
  }
};

}  // namespace

const ModelFamily& gpt2_family() {
  static const GPT2Family family;
  return family;
}

}  // namespace zt::models
