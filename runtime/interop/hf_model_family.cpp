#include "runtime/interop/hf_model_family.h"

#include <fmt/format.h>

#include <cmath>

#include "models/gpt2.h"
#include "models/gpt2_hf_names.h"
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

}  // namespace

HfModelFamily hf_model_family(const models::Model& model) {
  if (const auto* gpt2 = dynamic_cast<const models::GPT2*>(&model)) {
    return {"gpt2", models::gpt2_hf_tensors(gpt2->config()), gpt2_config_json(gpt2->config()),
            {".attn.bias", ".attn.masked_bias", "lm_head.weight"}, "transformer."};
  }
  throw UserError(fmt::format("model type '{}' has no Hugging Face counterpart (supported: gpt2)", model.name()));
}

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
  return problems;
}

}  // namespace zt::interop
