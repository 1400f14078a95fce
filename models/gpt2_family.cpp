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

// The keys a GPT-2 preset sets (model.type stays as given: gpt2 is its default).
FamilyPreset gpt2_preset(ModelPreset preset, std::string name, std::string description, const GPT2Config& c) {
  return {preset,
          std::move(name),
          std::move(description),
          {{"model.n_layer", std::int64_t{c.n_layer}},
           {"model.n_head", std::int64_t{c.n_head}},
           {"model.n_embd", std::int64_t{c.n_embd}},
           {"model.vocab_size", std::int64_t{c.vocab_size}},
           {"model.block_size", std::int64_t{c.block_size}}}};
}

std::vector<FamilyPreset> gpt2_presets() {
  GPT2Config tiny;  // byte-level, wider and longer than the C++ API's test preset of the same name
  tiny.n_layer = 2, tiny.n_head = 4, tiny.n_embd = 64, tiny.vocab_size = 256, tiny.block_size = 64;
  return {gpt2_preset(ModelPreset::tiny, "tiny", "byte-level toy model that trains in seconds on a CPU", tiny),
          gpt2_preset(ModelPreset::gpt2_124m, "gpt2-124m", "GPT-2 small", GPT2Config::preset("gpt2-124m")),
          gpt2_preset(ModelPreset::gpt2_350m, "gpt2-350m", "GPT-2 medium", GPT2Config::preset("gpt2-350m"))};
}

class GPT2Family final : public ModelFamily {
 public:
  std::string_view name() const override { return "gpt2"; }
  ModelType type() const override { return ModelType::gpt2; }
  std::vector<ModelRule> rules() const override { return {heads_divide_width_rule()}; }
  std::vector<FamilyPreset> presets() const override { return gpt2_presets(); }
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
