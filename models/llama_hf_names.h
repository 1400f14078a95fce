// The Llama family's tensors as `transformers.LlamaForCausalLM` (and Qwen3ForCausalLM, with
// QK-norm) names them (see hf_tensor_map.h). The names are zerotrain's own under a prefix and
// nothing is transposed or permuted: zerotrain's RoPE uses transformers' rotate_half layout, so
// q_proj and k_proj load as they are.
#pragma once

#include <vector>

#include "models/hf_tensor_map.h"
#include "models/llama.h"

namespace zt::models {

// Every Llama parameter in block order. With tied embeddings Hugging Face's lm_head.weight is
// not listed (save_pretrained leaves it out too); untied, it maps to the head's lm_head.weight.
std::vector<HfTensorMapping> llama_hf_tensors(const LlamaConfig& config);

// The table and LlamaForCausalLM's config.json (Qwen3ForCausalLM's with QK-norm).
HfDescription llama_hf_description(const LlamaConfig& config);

}  // namespace zt::models
