#include "runtime/config/hf_config_shape.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "runtime/config/config_schema.h"
#include "runtime/config/json_input.h"
#include "core/safe_file.h"

namespace zt {
namespace {

struct ShapeKey {
  const char* hf;
  const char* zerotrain;
};

// Per Hugging Face model_type: which config.json key gives which zerotrain shape key. Another
// model family adds its row here.
struct FamilyShape {
  const char* model_type;
  std::vector<ShapeKey> keys;
};

const std::vector<FamilyShape>& families() {
  static const std::vector<FamilyShape> table = {
      {"gpt2",
       {{"n_layer", "model.n_layer"},
        {"n_head", "model.n_head"},
        {"n_embd", "model.n_embd"},
        {"vocab_size", "model.vocab_size"},
        {"n_positions", "model.block_size"}}},
  };
  return table;
}

}  // namespace

std::optional<std::filesystem::path> hf_config_json_for(const std::filesystem::path& init_from) {
  std::error_code error;
  std::filesystem::path candidate = std::filesystem::is_directory(init_from, error)
                                        ? init_from / "config.json"
                                        : init_from.parent_path() / "config.json";
  // Anything at that name is the config (a named pipe there is refused when read, not skipped).
  if (std::filesystem::exists(std::filesystem::symlink_status(candidate, error))) return candidate;
  return std::nullopt;
}

std::vector<std::pair<std::string, std::int64_t>> hf_config_shape(const std::filesystem::path& config_json) {
  std::string why;
  const std::optional<std::string> text = read_regular_file(config_json, why);
  if (!text) throw UserError(fmt::format("cannot read {}: {}", config_json.string(), why));
  const nlohmann::json json = parse_json_input(*text, config_json.string());
  const std::string model_type = json.is_object() ? json.value("model_type", std::string()) : std::string();
  std::string known;
  for (const FamilyShape& family : families()) {
    known += (known.empty() ? "" : ", ") + std::string(family.model_type);
    if (family.model_type != model_type) continue;
    std::vector<std::pair<std::string, std::int64_t>> shape;
    for (const ShapeKey& key : family.keys) {
      if (!json.contains(key.hf) || !json[key.hf].is_number_integer())
        throw UserError(fmt::format("{}: '{}' is missing or not an integer (it gives {})", config_json.string(), key.hf,
                                    key.zerotrain));
      // The schema's range of the key it gives, as a YAML value gets (n_head 0 would divide by
      // zero; 2^64 - 1 would wrap to -1).
      const NumberRange& range = find_config_key(key.zerotrain)->range;
      const nlohmann::json& value = json[key.hf];
      const bool fits = value.is_number_unsigned() ? value.get<std::uint64_t>() <= static_cast<std::uint64_t>(range.max)
                                                   : value.get<std::int64_t>() <= range.max;
      if (!fits || value.get<double>() < range.min)
        throw UserError(fmt::format("{}: '{}' is {}; {} takes an integer in {}..{}", config_json.string(), key.hf,
                                    value.dump(), key.zerotrain, range.min, range.max));
      shape.emplace_back(key.zerotrain, value.get<std::int64_t>());
    }
    return shape;
  }
  if (model_type == "llama" || model_type == "qwen3")
    throw UserError(fmt::format("{}: model_type '{}' loads, but its shape is not read from config.json: set "
                                "model.preset (llama-tiny, smollm-135m, llama-3.2-1b), or model.type: llama, "
                                "model.preset: none and every model.* shape key",
                                config_json.string(), model_type));
  throw UserError(fmt::format("{}: model_type '{}' cannot be loaded by zerotrain (supported: {})", config_json.string(),
                              model_type, known));
}

}  // namespace zt
