#include "models/llama_hf_names.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "models/llama_blocks.h"

namespace zt::models {
namespace {

// LlamaForCausalLM's config (Qwen3ForCausalLM's with QK-norm): SiLU-gated MLP, RMSNorm, RoPE in
// transformers' rotate_half layout, no biases.
nlohmann::ordered_json llama_config_json(const LlamaConfig& c) {
  nlohmann::ordered_json j;
  const bool qwen3 = c.qk_norm;
  j["architectures"] = {qwen3 ? "Qwen3ForCausalLM" : "LlamaForCausalLM"};
  j["model_type"] = qwen3 ? "qwen3" : "llama";
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.n_embd;
  j["intermediate_size"] = c.intermediate_size;
  j["num_hidden_layers"] = c.n_layer;
  j["num_attention_heads"] = c.n_head;
  j["num_key_value_heads"] = c.n_kv_head;
  j["head_dim"] = c.head_size();
  j["max_position_embeddings"] = c.block_size;
  j["hidden_act"] = "silu";
  j["rms_norm_eps"] = static_cast<double>(c.rms_norm_eps);
  j["rope_theta"] = c.rope_theta;
  if (c.rope_scaling.factor > 0) {
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", c.rope_scaling.factor},
                         {"low_freq_factor", c.rope_scaling.low_freq_factor},
                         {"high_freq_factor", c.rope_scaling.high_freq_factor},
                         {"original_max_position_embeddings", c.rope_scaling.original_max_position}};
  } else {
    j["rope_scaling"] = nullptr;
  }
  j["attention_bias"] = false;
  j["attention_dropout"] = 0.0;
  if (!qwen3) j["mlp_bias"] = false;
  j["tie_word_embeddings"] = c.tie_embeddings;
  j["initializer_range"] = 0.02;
  j["torch_dtype"] = "float32";
  return j;
}

// RoPE scaling changes every position's rotation: the checkpoint's must be the run's. zerotrain
// implements Llama 3's ("llama3"); another kind is refused, and so is scaling on one side only.
std::optional<std::string> rope_scaling_difference(const nlohmann::ordered_json& ours, const nlohmann::json& theirs) {
  const nlohmann::json none;
  const nlohmann::json& given = theirs.contains("rope_scaling") ? theirs["rope_scaling"] : none;
  const bool run_scales = ours.contains("rope_scaling") && !ours["rope_scaling"].is_null();
  // transformers writes {"rope_type": "default"} for no scaling.
  const bool default_kind = given.is_object() && (given.value("rope_type", std::string()) == "default" ||
                                                  given.value("type", std::string()) == "default");
  if (given.is_null() || default_kind) {
    if (!run_scales) return std::nullopt;
    return "rope_scaling is null; the run's model scales RoPE (model.rope_scaling_factor > 0)";
  }
  if (!given.is_object()) return fmt::format("rope_scaling is {}; expected an object or null", given.dump());
  const std::string kind = given.contains("rope_type") ? given.value("rope_type", std::string())
                                                        : given.value("type", std::string());
  if (kind != "llama3")
    return fmt::format("rope_scaling of type '{}' is not one zerotrain implements (llama3 only)", kind);
  const std::array<std::pair<const char*, const char*>, 4> keys{{{"factor", "model.rope_scaling_factor"},
                                                                 {"low_freq_factor", "model.rope_low_freq_factor"},
                                                                 {"high_freq_factor", "model.rope_high_freq_factor"},
                                                                 {"original_max_position_embeddings",
                                                                  "model.rope_original_max_position"}}};
  if (!run_scales)
    return fmt::format("rope_scaling is llama3 ({}); the run's model has none: set {} to its values",
                       given.dump(), "model.rope_scaling_factor, rope_low_freq_factor, rope_high_freq_factor and "
                                     "rope_original_max_position");
  for (const auto& [key, zerotrain_key] : keys) {
    const double theirs_value = given.value(key, 0.0), ours_value = ours["rope_scaling"].value(key, 0.0);
    if (std::abs(theirs_value - ours_value) > 1e-6 * std::max(1.0, std::abs(ours_value)))
      return fmt::format("rope_scaling.{} is {}; the run's {} is {}", key, theirs_value, zerotrain_key, ours_value);
  }
  return std::nullopt;
}

// What in an imported config.json the run's Llama would compute differently.
std::vector<std::string> llama_config_differences(const nlohmann::ordered_json& ours, const nlohmann::json& config_json) {
  std::vector<std::string> problems;
  const std::string activation = config_json.value("hidden_act", std::string("silu"));
  if (activation != "silu") problems.push_back(fmt::format("hidden_act is '{}'; zerotrain's SwiGLU uses silu", activation));
  for (const char* bias : {"attention_bias", "mlp_bias"})
    if (config_json.value(bias, false)) problems.push_back(fmt::format("{} is true; zerotrain's Llama has no biases", bias));
  const double eps = config_json.value("rms_norm_eps", 1e-6);
  const double run_eps = ours.value("rms_norm_eps", 1e-6);
  if (std::abs(eps - run_eps) > 1e-3 * run_eps)
    problems.push_back(fmt::format("rms_norm_eps is {}; the run's model.rms_norm_eps is {}", eps, run_eps));
  const double theta = config_json.value("rope_theta", 10000.0);
  if (std::abs(theta - ours.value("rope_theta", 10000.0)) > 1e-6 * theta)
    problems.push_back(fmt::format("rope_theta is {}; the run's model.rope_theta is {}", theta,
                                   ours.value("rope_theta", 10000.0)));
  const bool tied = config_json.value("tie_word_embeddings", false);  // LlamaConfig's and Qwen3Config's default
  if (tied != ours.value("tie_word_embeddings", true))
    problems.push_back(fmt::format("tie_word_embeddings is {}; the run's model.tie_embeddings is {}", tied, !tied));
  if (std::optional<std::string> problem = rope_scaling_difference(ours, config_json))
    problems.push_back(*problem);
  return problems;
}

}  // namespace

std::vector<HfTensorMapping> llama_hf_tensors(const LlamaConfig& config) {
  std::vector<HfTensorMapping> tensors;
  tensors.push_back({"model.embed_tokens.weight", 0, "embed_tokens.weight", 0, false});
  for (int l = 0; l < config.n_layer; ++l) {
    const std::size_t block = 1 + static_cast<std::size_t>(l);
    const std::string prefix = "model.layers." + std::to_string(l) + ".";
    const LlamaDecoderBlock decoder(config, l);
    for (const ParamTensor& t : decoder.layout().tensors()) tensors.push_back({prefix + t.name, block, t.name, 0, false});
  }
  const std::size_t head = 1 + static_cast<std::size_t>(config.n_layer);
  tensors.push_back({"model.norm.weight", head, "norm.weight", 0, false});
  if (!config.tie_embeddings) tensors.push_back({"lm_head.weight", head, "lm_head.weight", 0, false});
  return tensors;
}

HfDescription llama_hf_description(const LlamaConfig& config) {
  // Rotary tables are computed, not stored; a tied head is the embedding (an untied one is in the table).
  std::vector<std::string> ignored = {".rotary_emb.inv_freq"};
  if (config.tie_embeddings) ignored.push_back("lm_head.weight");
  return {config.qk_norm ? "qwen3" : "llama", llama_hf_tensors(config), llama_config_json(config), ignored, "",
          llama_config_differences};
}

}  // namespace zt::models
