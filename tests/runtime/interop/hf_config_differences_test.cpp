// A Hugging Face Llama config.json whose rope_scaling differs from the run's model is refused, named:
// Llama 3's scaling must match key by key, another kind is not implemented, and scaling on one side
// only would silently be another model.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/llama.h"
#include "runtime/interop/hf_model_family.h"

namespace zt::interop {
namespace {

models::LlamaConfig tiny_llama(float scaling_factor) {
  models::LlamaConfig c;
  c.n_layer = 2, c.n_head = 4, c.n_kv_head = 2, c.n_embd = 32, c.intermediate_size = 40, c.vocab_size = 64;
  c.block_size = 16;
  c.rope_scaling = {scaling_factor, 1.0f, 4.0f, 8192};
  return c;
}

std::string differences(float run_factor, const nlohmann::json& rope_scaling) {
  models::Llama model(tiny_llama(run_factor));
  const HfModelFamily family = hf_model_family(model);
  nlohmann::json config = family.config_json;  // the run's own config.json: no difference
  config["rope_scaling"] = rope_scaling;
  std::string all;
  for (const std::string& p : hf_config_differences(family, config)) all += p + "\n";
  return all;
}

const nlohmann::json kLlama3 = {{"rope_type", "llama3"}, {"factor", 32.0}, {"low_freq_factor", 1.0},
                                {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};

TEST(HfConfigDifferences, MatchingRopeScalingPasses) {
  EXPECT_EQ(differences(0.0f, nullptr), "");
  EXPECT_EQ(differences(32.0f, kLlama3), "");
}

TEST(HfConfigDifferences, ScalingOnOneSideOnlyIsRefused) {
  EXPECT_NE(differences(0.0f, kLlama3).find("rope_scaling is llama3"), std::string::npos);
  EXPECT_NE(differences(32.0f, nullptr).find("rope_scaling is null; the run's model scales RoPE"), std::string::npos);
}

TEST(HfConfigDifferences, AnotherFactorOrKindIsRefused) {
  nlohmann::json other = kLlama3;
  other["factor"] = 8.0;
  EXPECT_NE(differences(32.0f, other).find("rope_scaling.factor is 8; the run's model.rope_scaling_factor is 32"),
            std::string::npos)
      << differences(32.0f, other);
  const nlohmann::json yarn = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_NE(differences(32.0f, yarn).find("rope_scaling of type 'yarn' is not one zerotrain implements"),
            std::string::npos);
}

}  // namespace
}  // namespace zt::interop
