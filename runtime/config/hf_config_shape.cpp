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

using nlohmann::json;

// Reads config.json values into zerotrain keys, checked against each key's range as a YAML value
// is (n_head 0 would divide by zero; 2^64 - 1 would wrap to -1).
struct ShapeReader {
  const std::filesystem::path& file;
  const json& config;
  std::vector<std::pair<std::string, ConfigValue>> shape;

  [[noreturn]] void fail(const std::string& hf_key, const std::string& what) const {
    throw UserError(fmt::format("{}: '{}' {}", file.string(), hf_key, what));
  }
  // The value config.json gives `hf_key`, if any (null is Hugging Face's "not given").
  const json* given(const std::string& hf_key) const {
    return config.contains(hf_key) && !config[hf_key].is_null() ? &config[hf_key] : nullptr;
  }
  void store(const std::string& hf_key, const std::string& key, const ConfigValue& value) {
    if (std::optional<std::string> problem = value_problem(*find_config_key(key), value))
      fail(hf_key, fmt::format("gives {}: {}", key, *problem));
    shape.emplace_back(key, value);
  }
  // An integer key; `fallback` when config.json may leave it out (Hugging Face's default).
  std::int64_t integer(const std::string& hf_key, const std::string& key, std::optional<std::int64_t> fallback = {}) {
    const json* v = given(hf_key);
    if (v == nullptr && fallback) {
      store(hf_key, key, *fallback);
      return *fallback;
    }
    if (v == nullptr || !v->is_number_integer()) fail(hf_key, fmt::format("is missing or not an integer (it gives {})", key));
    const NumberRange& range = find_config_key(key)->range;
    const bool fits = v->is_number_unsigned() ? v->get<std::uint64_t>() <= static_cast<std::uint64_t>(range.max)
                                              : v->get<std::int64_t>() <= range.max;
    if (!fits || v->get<double>() < range.min)
      fail(hf_key, fmt::format("is {}; {} takes an integer in {}..{}", v->dump(), key, range.min, range.max));
    store(hf_key, key, v->get<std::int64_t>());
    return v->get<std::int64_t>();
  }
  void number(const std::string& hf_key, const std::string& key, double fallback) {
    const json* v = given(hf_key);
    if (v != nullptr && !v->is_number()) fail(hf_key, fmt::format("is {}; it gives {}, a number", v->dump(), key));
    store(hf_key, key, v != nullptr ? v->get<double>() : fallback);
  }
  void boolean(const std::string& hf_key, const std::string& key, bool fallback) {
    const json* v = config.contains(hf_key) ? &config[hf_key] : nullptr;
    if (v != nullptr && !v->is_boolean()) fail(hf_key, fmt::format("is {}; it gives {}, true or false", v->dump(), key));
    store(hf_key, key, v != nullptr ? v->get<bool>() : fallback);
  }
};

void read_gpt2(ShapeReader& r) {
  r.store("model_type", "model.type", std::string("gpt2"));
  r.integer("n_layer", "model.n_layer");
  r.integer("n_head", "model.n_head");
  r.integer("n_embd", "model.n_embd");
  r.integer("vocab_size", "model.vocab_size");
  r.integer("n_positions", "model.block_size");
}

// Hugging Face's LlamaConfig and Qwen3Config defaults for what a config.json leaves out. What
// changes the computation beyond the shape (the activation, biases) is checked against the model
// when the weights load (runtime/interop/hf_model_family.h).
void read_llama_family(ShapeReader& r, bool qk_norm) {
  r.store("model_type", "model.type", std::string("llama"));
  r.store("model_type", "model.qk_norm", qk_norm);
  r.integer("num_hidden_layers", "model.n_layer");
  const std::int64_t heads = r.integer("num_attention_heads", "model.n_head");
  r.integer("num_key_value_heads", "model.n_kv_head", qk_norm ? 32 : heads);  // Qwen3Config's default is 32
  const std::int64_t hidden = r.integer("hidden_size", "model.n_embd");
  r.integer("intermediate_size", "model.intermediate_size");
  r.integer("vocab_size", "model.vocab_size");
  r.integer("max_position_embeddings", "model.block_size");
  r.number("rope_theta", "model.rope_theta", 10000.0);
  r.number("rms_norm_eps", "model.rms_norm_eps", 1e-6);
  r.boolean("tie_word_embeddings", "model.tie_embeddings", false);
  // Llama's head size is hidden_size / heads unless said; Qwen3Config's is 128 unless said.
  const json head_dim = r.config.contains("head_dim") && !r.config["head_dim"].is_null() ? r.config["head_dim"]
                        : qk_norm                                                        ? json(128)
                                                                                          : json(hidden / heads);
  if (head_dim != json(hidden / heads))
    r.fail("head_dim", fmt::format("is {}{}; zerotrain's heads are hidden_size / num_attention_heads = {} wide",
                                   head_dim.dump(), r.config.contains("head_dim") ? "" : " (Qwen3's default)",
                                   hidden / heads));
  const json& scaling = r.config.contains("rope_scaling") ? r.config["rope_scaling"] : json();
  if (scaling.is_null()) {
    r.store("rope_scaling", "model.rope_scaling_factor", 0.0);
    return;
  }
  const json& kind_value = !scaling.is_object()          ? json()
                           : scaling.contains("rope_type") ? scaling["rope_type"]
                                                           : scaling.value("type", json());
  const std::string kind = kind_value.is_string() ? kind_value.get<std::string>() : "";
  if (kind == "default") {  // transformers' spelling of "no scaling"
    r.store("rope_scaling", "model.rope_scaling_factor", 0.0);
    return;
  }
  if (kind != "llama3")
    r.fail("rope_scaling", fmt::format("is {}; zerotrain implements RoPE scaling of rope_type llama3 only",
                                       scaling.dump()));
  // transformers requires all four of llama3's keys.
  ShapeReader inner{r.file, scaling, {}};
  for (const char* key : {"factor", "low_freq_factor", "high_freq_factor"})
    if (!scaling.contains(key)) r.fail("rope_scaling", fmt::format("is llama3 without '{}'", key));
  inner.number("factor", "model.rope_scaling_factor", 0.0);
  inner.number("low_freq_factor", "model.rope_low_freq_factor", 1.0);
  inner.number("high_freq_factor", "model.rope_high_freq_factor", 4.0);
  inner.integer("original_max_position_embeddings", "model.rope_original_max_position");
  for (auto& entry : inner.shape) r.shape.push_back(std::move(entry));
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

std::vector<std::pair<std::string, ConfigValue>> hf_config_shape(const std::filesystem::path& config_json) {
  std::string why;
  const std::optional<std::string> text = read_regular_file(config_json, why);
  if (!text) throw UserError(fmt::format("cannot read {}: {}", config_json.string(), why));
  const json config = parse_json_input(*text, config_json.string());
  const json type = config.is_object() && config.contains("model_type") ? config["model_type"] : json();
  const std::string model_type = type.is_string() ? type.get<std::string>() : type.dump();
  ShapeReader reader{config_json, config, {}};
  if (model_type == "gpt2") {
    read_gpt2(reader);
  } else if (model_type == "llama" || model_type == "qwen3") {
    read_llama_family(reader, model_type == "qwen3");
  } else if (model_type == "qwen2") {
    throw UserError(fmt::format("{}: model_type 'qwen2' (Qwen2, Qwen2.5) cannot be loaded: its attention adds biases "
                                "to the query, key and value projections, which zerotrain's Llama family does not "
                                "have (loadable: gpt2, llama, qwen3)",
                                config_json.string()));
  } else {
    throw UserError(fmt::format("{}: model_type '{}' cannot be loaded by zerotrain (loadable: gpt2, llama, qwen3)",
                                config_json.string(), model_type));
  }
  return reader.shape;
}

}  // namespace zt
