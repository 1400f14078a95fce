// A model's shape read from a Hugging Face config.json, for `model.init_from`: the shape keys a
// config leaves out are taken from the checkpoint it starts from.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/config/config_schema.h"

namespace zt {

// The config.json that belongs to `init_from`: DIR/config.json for a directory, the config.json
// beside a .safetensors file; nothing when there is none.
std::optional<std::filesystem::path> hf_config_json_for(const std::filesystem::path& init_from);

// zerotrain key path -> value (e.g. "model.n_layer" -> 12) from the config.json, per model_type:
// gpt2 (n_layer, n_head, n_embd, vocab_size, n_positions) and the Llama family (llama, and qwen3
// with QK-norm: every shape key, RoPE's theta and llama3 scaling, the norm's epsilon, tied
// embeddings). Throws zt::UserError naming the file and the key when it cannot be read, its
// model_type is not supported, a key is missing or its value is out of the key's range, or the
// model has something zerotrain's family lacks (a head size other than hidden_size / heads).
std::vector<std::pair<std::string, ConfigValue>> hf_config_shape(const std::filesystem::path& config_json);

}  // namespace zt
