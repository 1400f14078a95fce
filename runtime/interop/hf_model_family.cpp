#include "runtime/interop/hf_model_family.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "models/gpt2.h"
#include "models/gpt2_hf_names.h"
#include "models/llama.h"
#include "models/llama_hf_names.h"
#include "models/layers/layernorm.h"
#include "core/error.h"

namespace zt::interop {
namespace {

// zerotrain's LayerNorm epsilon as the decimal Hugging Face writes (the float 1e-5f widened would
// print as 9.99999974738e-06).
constexpr double kEpsilon = 1e-5;
static_assert(static_cast<float>(kEpsilon) == models::cpu::kLayerNormEps);

nlohmann::ordered_json gpt2_config_json(const models::GPT2Config& c) {
  nlohmann::ordered_json j;
  j["architectures"] = {"GPT2LMHeadModel"};
  j["model_type"] = "gpt2";
  j["vocab_size"] = c.vocab_size;  // not the padded size: the export holds exactly these rows
  j["n_positions"] = c.block_size;
  j["n_ctx"] = c.block_size;
  j["n_embd"] = c.n_embd;
  j["n_layer"] = c.n_layer;
  j["n_head"] = c.n_head;
  j["n_inner"] = 4 * c.n_embd;
  j["activation_function"] = "gelu_new";  // the tanh approximation, as zerotrain's GELU
  j["layer_norm_epsilon"] = kEpsilon;
  j["resid_pdrop"] = 0.0;  // zerotrain has no dropout
  j["embd_pdrop"] = 0.0;
  j["attn_pdrop"] = 0.0;
  j["initializer_range"] = 0.02;
  j["scale_attn_weights"] = true;
  j["scale_attn_by_inverse_layer_idx"] = false;
  j["reorder_and_upcast_attn"] = false;
  j["tie_word_embeddings"] = true;
  j["torch_dtype"] = "float32";
  if (c.vocab_size == 50257) {  // GPT-2's BPE: <|endoftext|> is the last token
    j["bos_token_id"] = 50256;
    j["eos_token_id"] = 50256;
  }
  return j;
}

// LlamaForCausalLM's config (Qwen3ForCausalLM's with QK-norm): SiLU-gated MLP, RMSNorm, RoPE in
// transformers' rotate_half layout, no biases.
nlohmann::ordered_json llama_config_json(const models::LlamaConfig& c) {
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

}  // namespace

HfModelFamily hf_model_family(const models::Model& model) {
  if (const auto* gpt2 = dynamic_cast<const models::GPT2*>(&model)) {
    return {"gpt2", models::gpt2_hf_tensors(gpt2->config()), gpt2_config_json(gpt2->config()),
            {".attn.bias", ".attn.masked_bias", "lm_head.weight"}, "transformer."};
  }
  if (const auto* llama = dynamic_cast<const models::Llama*>(&model)) {
    const models::LlamaConfig& c = llama->config();
    // Rotary tables are computed, not stored; a tied head is the embedding (an untied one is in the table).
    std::vector<std::string> ignored = {".rotary_emb.inv_freq"};
    if (c.tie_embeddings) ignored.push_back("lm_head.weight");
    return {c.qk_norm ? "qwen3" : "llama", models::llama_hf_tensors(c), llama_config_json(c), ignored, ""};
  }
  throw UserError(fmt::format("model type '{}' has no Hugging Face counterpart (supported: gpt2, llama)",
                              model.name()));
}

namespace {

// RoPE scaling changes every position's rotation: the checkpoint's must be the run's. zerotrain
// implements Llama 3's ("llama3"); another kind is refused, and so is scaling on one side only.
std::optional<std::string> rope_scaling_difference(const nlohmann::ordered_json& ours, const nlohmann::json& theirs) {
  const nlohmann::json none;
  const nlohmann::json& given = theirs.contains("rope_scaling") ? theirs["rope_scaling"] : none;
  const bool run_scales = ours.contains("rope_scaling") && !ours["rope_scaling"].is_null();
  if (given.is_null()) {
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

}  // namespace

std::vector<std::string> hf_config_differences(const HfModelFamily& family, const nlohmann::json& config_json) {
  std::vector<std::string> problems;
  const std::string model_type = config_json.value("model_type", std::string());
  if (model_type != family.model_type) {
    problems.push_back(fmt::format("model_type is '{}', the run's model is {}", model_type, family.model_type));
    return problems;
  }
  if (family.model_type == "gpt2") {
    const std::string activation = config_json.value("activation_function", std::string("gelu_new"));
    if (activation != "gelu_new" && activation != "gelu_pytorch_tanh")
      problems.push_back(fmt::format("activation_function is '{}'; zerotrain's GPT-2 uses the tanh GELU "
                                     "(gelu_new or gelu_pytorch_tanh)", activation));
    const double eps = config_json.value("layer_norm_epsilon", 1e-5);
    if (std::abs(eps - kEpsilon) > 1e-12)
      problems.push_back(fmt::format("layer_norm_epsilon is {}; zerotrain's LayerNorm uses {}", eps, kEpsilon));
    const auto n_embd = config_json.value("n_embd", 0);
    if (config_json.contains("n_inner") && !config_json["n_inner"].is_null() && config_json["n_inner"] != 4 * n_embd)
      problems.push_back(fmt::format("n_inner is {}; zerotrain's MLP is 4 * n_embd = {} wide",
                                     config_json["n_inner"].dump(), 4 * n_embd));
    if (!config_json.value("tie_word_embeddings", true))
      problems.push_back("tie_word_embeddings is false; zerotrain's LM head is tied to wte");
    if (config_json.value("scale_attn_by_inverse_layer_idx", false))
      problems.push_back("scale_attn_by_inverse_layer_idx is true; zerotrain scales attention by 1/sqrt(head size) only");
    if (!config_json.value("scale_attn_weights", true))
      problems.push_back("scale_attn_weights is false; zerotrain scales attention by 1/sqrt(head size)");
  }
  if (family.model_type == "llama" || family.model_type == "qwen3") {
    const std::string activation = config_json.value("hidden_act", std::string("silu"));
    if (activation != "silu") problems.push_back(fmt::format("hidden_act is '{}'; zerotrain's SwiGLU uses silu", activation));
    for (const char* bias : {"attention_bias", "mlp_bias"})
      if (config_json.value(bias, false)) problems.push_back(fmt::format("{} is true; zerotrain's Llama has no biases", bias));
    const double eps = config_json.value("rms_norm_eps", 1e-6);
    const double ours = family.config_json.value("rms_norm_eps", 1e-6);
    if (std::abs(eps - ours) > 1e-3 * ours)
      problems.push_back(fmt::format("rms_norm_eps is {}; the run's model.rms_norm_eps is {}", eps, ours));
    const double theta = config_json.value("rope_theta", 10000.0);
    if (std::abs(theta - family.config_json.value("rope_theta", 10000.0)) > 1e-6 * theta)
      problems.push_back(fmt::format("rope_theta is {}; the run's model.rope_theta is {}", theta,
                                     family.config_json.value("rope_theta", 10000.0)));
    const bool tied = config_json.value("tie_word_embeddings", true);
    if (tied != family.config_json.value("tie_word_embeddings", true))
      problems.push_back(fmt::format("tie_word_embeddings is {}; the run's model.tie_embeddings is {}", tied, !tied));
    if (std::optional<std::string> problem = rope_scaling_difference(family.config_json, config_json))
      problems.push_back(*problem);
  }
  return problems;
}

}  // namespace zt::interop
