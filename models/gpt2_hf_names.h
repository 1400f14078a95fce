// GPT-2's tensors as `transformers.GPT2LMHeadModel` names them (see hf_tensor_map.h).
#pragma once

#include <vector>

#include "models/gpt2.h"
#include "models/hf_tensor_map.h"

namespace zt::models {

// Every GPT-2 parameter in block order. The LM head is tied to wte, so Hugging Face's
// lm_head.weight is not listed (save_pretrained leaves it out too).
std::vector<HfTensorMapping> gpt2_hf_tensors(const GPT2Config& config);

// The table, GPT2LMHeadModel's config.json (gelu_new, epsilon 1e-5, tied head, no dropout), and
// the buffers a checkpoint may hold besides (the attention mask).
HfDescription gpt2_hf_description(const GPT2Config& config);

}  // namespace zt::models
