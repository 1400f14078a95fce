#include "models/gpt2_hf_names.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "models/ops/layernorm.h"

namespace zt::models {
namespace {

// zerotrain's LayerNorm epsilon as the decimal Hugging Face writes (the float 1e-5f widened would
// print as 9.99999974738e-06).
constexpr double kEpsilon = 1e-5;
static_assert(static_cast<float>(kEpsilon) == cpu::kLayerNormEps);

nlohmann::ordered_json gpt2_config_json(const GPT2Config& c) {
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

// What in an imported config.json GPT-2 here would compute differently.
std::vector<std::string> gpt2_config_differences(const nlohmann::ordered_json&, const nlohmann::json& config_json) {
  std::vector<std::string> problems;
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
  return problems;
}

}  // namespace

std::vector<HfTensorMapping> gpt2_hf_tensors(const GPT2Config& config) {
  std::vector<HfTensorMapping> tensors;
  // wte holds exactly vocab_size rows in Hugging Face: zerotrain's padding rows stay behind.
  tensors.push_back({"transformer.wte.weight", 0, "wte", static_cast<std::size_t>(config.vocab_size), false});
  tensors.push_back({"transformer.wpe.weight", 0, "wpe", 0, false});
  for (int l = 0; l < config.n_layer; ++l) {
    const std::size_t block = 1 + static_cast<std::size_t>(l);
    const std::string prefix = "transformer.h." + std::to_string(l) + ".";
    for (const char* name : {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
                             "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                             "mlp.c_proj.weight", "mlp.c_proj.bias"}) {
      const std::string tensor = name;
      // Conv1D weights are (in, out); zerotrain's are (out, in). Biases and LayerNorm match.
      const bool conv1d_weight = tensor.starts_with("attn.c_") || tensor.starts_with("mlp.c_");
      tensors.push_back({prefix + tensor, block, tensor, 0, conv1d_weight && tensor.ends_with(".weight")});
    }
  }
  const std::size_t head = 1 + static_cast<std::size_t>(config.n_layer);
  tensors.push_back({"transformer.ln_f.weight", head, "ln_f.weight", 0, false});
  tensors.push_back({"transformer.ln_f.bias", head, "ln_f.bias", 0, false});
  return tensors;
}

HfDescription gpt2_hf_description(const GPT2Config& config) {
  return {"gpt2", gpt2_hf_tensors(config), gpt2_config_json(config),
          {".attn.bias", ".attn.masked_bias", "lm_head.weight"}, "transformer.", gpt2_config_differences};
}

}  // namespace zt::models
