// A model's shape read from a Hugging Face config.json, for `model.init_from`: the shape keys a
// config leaves out are taken from the checkpoint it starts from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zt {

// The config.json that belongs to `init_from`: DIR/config.json for a directory, the config.json
// beside a .safetensors file; nothing when there is none.
std::optional<std::filesystem::path> hf_config_json_for(const std::filesystem::path& init_from);

// zerotrain key path -> value (e.g. "model.n_layer" -> 12) from the config.json, per model_type
// (gpt2: n_layer, n_head, n_embd, vocab_size, n_positions). Throws zt::UserError naming the file
// and the key when it cannot be read, its model_type is not supported, or a key is missing.
std::vector<std::pair<std::string, std::int64_t>> hf_config_shape(const std::filesystem::path& config_json);

}  // namespace zt
