// The `model:` section of an experiment config: which family (model.type), its shape keys and
// where the initial weights come from. The config schema (runtime/config/config_schema.cpp) binds
// each key to a field here; the family (models/family.h) turns it into a Model.
#pragma once

#include <cstdint>
#include <string>

namespace zt::models {

enum class ModelType { gpt2, mlp, llama };
// Named model shapes that fill the model's keys (n_layer, n_head, n_embd, ...) unless given explicitly.
enum class ModelPreset { none, tiny, gpt2_124m, gpt2_350m, llama_tiny, smollm_135m, llama_3_2_1b };

struct ModelConfig {
  ModelType type = ModelType::gpt2;
  ModelPreset preset = ModelPreset::none;
  std::int64_t n_layer = 0;
  std::int64_t n_head = 0;
  std::int64_t n_embd = 0;
  std::int64_t vocab_size = 0;
  std::int64_t block_size = 0;
  // llama only
  std::int64_t n_kv_head = 0;  // 0 = n_head
  std::int64_t intermediate_size = 0;  // 0 = 4 * n_embd
  double rope_theta = 0;
  double rope_scaling_factor = 0;  // 0 = no Llama 3 frequency scaling
  double rope_low_freq_factor = 0;
  double rope_high_freq_factor = 0;
  std::int64_t rope_original_max_position = 0;
  double rms_norm_eps = 0;
  bool tie_embeddings = false;
  bool qk_norm = false;
  std::int64_t mlp_hidden = 0;
  std::int64_t mlp_layers = 0;
  std::int64_t init_seed = 0;
  // A Hugging Face checkpoint (save_pretrained directory or .safetensors file) whose weights start
  // the run instead of init_seed; empty = none.
  std::string init_from;
  bool operator==(const ModelConfig&) const = default;
};

}  // namespace zt::models
