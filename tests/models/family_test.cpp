// The family registry: each model type builds its own model from the config's model section, and
// what a family tells the runtime (token or feature model, the measurement copy, the product the
// CPU's MFU ceiling is measured on) matches the model it builds.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "models/family.h"
#include "models/gpt2.h"
#include "models/llama.h"
#include "models/mlp.h"

namespace zt::models::test {
namespace {

ModelConfig shape(ModelType type) {
  ModelConfig c;
  c.type = type;
  c.n_layer = 3, c.n_head = 4, c.n_kv_head = 2, c.n_embd = 32, c.vocab_size = 2000, c.block_size = 16;
  c.intermediate_size = 88, c.rope_theta = 10000, c.rms_norm_eps = 1e-5, c.tie_embeddings = true;
  c.mlp_hidden = 24, c.mlp_layers = 2;
  return c;
}

TEST(ModelFamily, EachTypeBuildsItsOwnModel) {
  EXPECT_NE(dynamic_cast<GPT2*>(model_family(ModelType::gpt2).build(shape(ModelType::gpt2)).get()), nullptr);
  EXPECT_NE(dynamic_cast<Llama*>(model_family(ModelType::llama).build(shape(ModelType::llama)).get()), nullptr);
  EXPECT_NE(dynamic_cast<MLP*>(model_family(ModelType::mlp).build(shape(ModelType::mlp)).get()), nullptr);
}

TEST(ModelFamily, TokenFamiliesBuildTokenModelsWithTheirVocabulary) {
  for (ModelType type : {ModelType::gpt2, ModelType::llama, ModelType::mlp}) {
    const ModelFamily& family = model_family(type);
    const auto model = family.build(shape(type));
    EXPECT_EQ(family.reads_tokens(), model->input_kind() == Model::InputKind::tokens) << model->name();
    EXPECT_EQ(model->vocab_size(), family.reads_tokens() ? 2000 : 0) << model->name();
    EXPECT_EQ(model->hf_description().has_value(), family.reads_tokens()) << model->name();
    EXPECT_EQ(positions_per_row(shape(type), 16), family.reads_tokens() ? 16 : 1) << model->name();
    std::vector<float> features;
    std::vector<std::int32_t> labels;
    if (family.reads_tokens())
      EXPECT_THROW(model->synthetic_batch(1, 4, features, labels), std::logic_error);
    else
      EXPECT_NO_THROW(model->synthetic_batch(1, 4, features, labels));
  }
}

TEST(ModelFamily, GPT2PadsLargeVocabulariesTo64) {
  const auto model = model_family(ModelType::gpt2).build(shape(ModelType::gpt2));
  EXPECT_EQ(static_cast<const GPT2&>(*model).config().padded_vocab_size, 2048);
}

TEST(ModelFamily, TheMeasurementCopyKeepsTheWidthsOfOneLayer) {
  for (ModelType type : {ModelType::gpt2, ModelType::llama}) {
    const ModelFamily& family = model_family(type);
    const ModelConfig copy = family.measurement_copy(shape(type));
    EXPECT_EQ(copy.n_layer, 1);
    EXPECT_EQ(copy.vocab_size, 256);
    EXPECT_EQ(copy.n_embd, 32);
  }
  EXPECT_EQ(model_family(ModelType::mlp).measurement_copy(shape(ModelType::mlp)), shape(ModelType::mlp));
}

TEST(ModelFamily, TheMfuCeilingIsMeasuredOnTheWidestProductOfALayer) {
  const GemmShape gpt2 = model_family(ModelType::gpt2).widest_product(shape(ModelType::gpt2), 4, 16);
  EXPECT_EQ(gpt2.M, 64);  // B*T rows
  EXPECT_EQ(gpt2.K, 32);  // C
  EXPECT_EQ(gpt2.N, 128);  // the MLP's 4C
  const GemmShape llama = model_family(ModelType::llama).widest_product(shape(ModelType::llama), 4, 16);
  EXPECT_EQ(llama.M, 64);
  EXPECT_EQ(llama.K, 32);
  EXPECT_EQ(llama.N, 176);  // gate and up: 2 x intermediate_size
  ModelConfig default_width = shape(ModelType::llama);
  default_width.intermediate_size = 0;  // 0 = 4 * n_embd
  EXPECT_EQ(model_family(ModelType::llama).widest_product(default_width, 4, 16).N, 256);
}

}  // namespace
}  // namespace zt::models::test
