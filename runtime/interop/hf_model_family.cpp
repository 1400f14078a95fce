#include "runtime/interop/hf_model_family.h"

#include <fmt/format.h>


#include "core/error.h"

namespace zt::interop {

HfModelFamily hf_model_family(const models::Model& model) {
  if (auto description = model.hf_description()) return *std::move(description);
  throw UserError(fmt::format("model type '{}' has no Hugging Face counterpart (supported: gpt2, llama)",
                              model.name()));
}

std::vector<std::string> hf_config_differences(const HfModelFamily& family, const nlohmann::json& config_json) {
  try {
    const std::string model_type = config_json.value("model_type", std::string());
    if (model_type != family.model_type)
      return {fmt::format("model_type is '{}', the run's model is {}", model_type, family.model_type)};
    return family.config_differences(family.config_json, config_json);
  } catch (const nlohmann::json::type_error& e) {  // e.g. "hidden_act": 3, "rms_norm_eps": "small"
    return {fmt::format("a value has the wrong JSON type ({})", e.what())};
  }
}

}  // namespace zt::interop
