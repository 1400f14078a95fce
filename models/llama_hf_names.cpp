#include "models/llama_hf_names.h"

#include <string>

#include "models/llama_blocks.h"

namespace zt::models {

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

}  // namespace zt::models
