// What exchanging weights with Hugging Face `transformers` takes for one model family: the tensor
// table (models/hf_tensor_map.h), the config.json written with an export, and the checks of a
// config.json that is imported. GPT-2 and the Llama family (Llama, and Qwen3 with QK-norm) describe
// themselves (Model::hf_description); a model without a description has no counterpart.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/hf_tensor_map.h"
#include "models/model.h"

namespace zt::interop {

// What a model family tells of its Hugging Face counterpart (models/hf_tensor_map.h).
using HfModelFamily = models::HfDescription;

// Throws zt::UserError when the model has no Hugging Face counterpart (e.g. the mlp).
HfModelFamily hf_model_family(const models::Model& model);

// What in a checkpoint's config.json zerotrain would compute differently (another activation,
// epsilon, untied head...), one line each; empty when it matches `family`.
std::vector<std::string> hf_config_differences(const HfModelFamily& family, const nlohmann::json& config_json);

}  // namespace zt::interop
