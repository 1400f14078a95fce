#include "models/gpt2_hf_names.h"

#include <string>

namespace zt::models {

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

}  // namespace zt::models
