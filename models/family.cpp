#include "models/family.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace zt::models {

const ModelFamily& gpt2_family();
const ModelFamily& llama_family();
const ModelFamily& mlp_family();

std::span<const ModelFamily* const> model_families() {
  static const std::array<const ModelFamily*, 3> families{&gpt2_family(), &mlp_family(), &llama_family()};
  return families;
}

const ModelFamily& model_family(ModelType type) {
  for (const ModelFamily* family : model_families())
    if (family->type() == type) return *family;
  throw std::logic_error("model_family: a model type without a family");
}

ModelRule heads_divide_width_rule() {
  return {"`model.n_embd` is a multiple of `model.n_head`.",
          {"model.n_embd", "model.n_head", "model.preset"},
          [](const ModelConfig& m) -> std::optional<std::string> {
            if (m.n_embd % m.n_head == 0) return std::nullopt;
            return fmt::format("model.n_embd = {} is not a multiple of model.n_head = {} (every head gets n_embd / "
                               "n_head channels)",
                               m.n_embd, m.n_head);
          }};
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
