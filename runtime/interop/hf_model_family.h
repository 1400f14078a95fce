// What exchanging weights with Hugging Face `transformers` takes for one model family: the tensor
// table (models/hf_tensor_map.h), the config.json written with an export, and the checks of a
// config.json that is imported. GPT-2 and the Llama family (Llama, and Qwen3 with QK-norm); another
// family adds a case in hf_model_family.cpp.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/hf_tensor_map.h"
#include "models/model.h"

namespace zt::interop {

struct HfModelFamily {
  std::string model_type;  // config.json's model_type, e.g. "gpt2"
  std::vector<models::HfTensorMapping> tensors;
  // config.json for `transformers.AutoConfig` (every shape field, activation, epsilon, tying).
  nlohmann::ordered_json config_json;
  // Tensors a Hugging Face checkpoint may hold that are not parameters here (buffers such as
  // GPT-2's attention mask, the LM head tied to wte): matched by name suffix, skipped on import.
  std::vector<std::string> ignored_suffixes;
  // A prefix some checkpoints leave out (GPT2Model rather than GPT2LMHeadModel): "transformer.".
  std::string optional_prefix;
};

// Throws zt::UserError when the model has no Hugging Face counterpart (e.g. the mlp).
HfModelFamily hf_model_family(const models::Model& model);

// What in a checkpoint's config.json zerotrain would compute differently (another activation,
// epsilon, untied head...), one line each; empty when it matches `family`.
std::vector<std::string> hf_config_differences(const HfModelFamily& family, const nlohmann::json& config_json);

}  // namespace zt::interop
