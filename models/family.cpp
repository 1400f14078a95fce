#include "models/family.h"

#include <algorithm>

namespace zt::models {

const ModelFamily& gpt2_family();
const ModelFamily& llama_family();
const ModelFamily& mlp_family();

const ModelFamily& model_family(ModelType type) {
  switch (type) {
    case ModelType::gpt2: return gpt2_family();
    case ModelType::llama: return llama_family();
    case ModelType::mlp: return mlp_family();
  }
  return gpt2_family();
}

ModelConfig ModelFamily::measurement_copy(const ModelConfig& config) const {
  ModelConfig copy = config;
  copy.n_layer = 1;
  copy.vocab_size = std::min<std::int64_t>(config.vocab_size, 256);
  return copy;
}

int positions_per_row(const ModelConfig& config, std::int64_t seq_len) {
  return model_family(config.type).reads_tokens() ? static_cast<int>(seq_len) : 1;
}

}  // namespace zt::models
