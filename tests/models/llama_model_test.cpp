// The Llama family as block lists: presets with the published parameter counts, layouts in
// transformers' names, FLOPs, activations accounting, and whole-model finite-difference checks
// on the CPU (every parameter) for multi-head, grouped-query and multi-query attention, tied and
// untied heads, QK-norm and Llama 3 RoPE scaling.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model_gradcheck.h"
#include "models/activations.h"
#include "models/flops.h"
#include "models/llama.h"
#include "models/model_state.h"

namespace zt::models::test {
namespace {

TEST(LlamaModel, PresetsHaveThePublishedParameterCounts) {
  // transformers' LlamaForCausalLM of each config (tools/make_llama_fixtures.py --counts prints
  // them from the meta device): SmolLM-135M and Llama-3.2-1B, both with tied embeddings.
  EXPECT_EQ(Llama(LlamaConfig::preset("smollm-135m")).param_count(), 134515008u);
  EXPECT_EQ(Llama(LlamaConfig::preset("llama-3.2-1b")).param_count(), 1235814400u);
  LlamaConfig untied = LlamaConfig::preset("llama-3.2-1b");
  untied.tie_embeddings = false;  // an untied head adds a (V, C) lm_head
  EXPECT_EQ(Llama(untied).param_count(), 1235814400u + 128256u * 2048u);
  EXPECT_EQ(Llama(LlamaConfig::preset("llama-tiny")).param_count(), 771200u);
  EXPECT_THROW(LlamaConfig::preset("llama-70b"), std::invalid_argument);
}

TEST(LlamaModel, BlocksAndLayoutsUseTransformersNames) {
  Llama model(LlamaConfig::preset("smollm-135m"));
  ASSERT_EQ(model.num_blocks(), 32u);
  EXPECT_EQ(model.block(0).name(), "embedding");
  EXPECT_EQ(model.block(1).name(), "layers.0");
  EXPECT_EQ(model.block(31).name(), "head");
  EXPECT_EQ(model.block(31).tied_block(), std::optional<std::size_t>(0));
  EXPECT_TRUE(model.block(31).is_loss_block());
  EXPECT_FALSE(model.block(0).backward_reads_params());
  const ParamTensor& emb = model.block(0).layout().find("embed_tokens.weight");
  EXPECT_EQ(emb.shape, (std::vector<std::size_t>{49152, 576}));
  EXPECT_TRUE(emb.embedding);
  const ParamLayout& l = model.block(1).layout();
  EXPECT_EQ(l.find("self_attn.q_proj.weight").shape, (std::vector<std::size_t>{576, 576}));
  EXPECT_EQ(l.find("self_attn.k_proj.weight").shape, (std::vector<std::size_t>{192, 576}));
  EXPECT_EQ(l.find("mlp.down_proj.weight").shape, (std::vector<std::size_t>{576, 1536}));
  // The fused products rely on adjacency: q, k, v one after the other, and gate before up.
  EXPECT_EQ(l.find("self_attn.k_proj.weight").offset, l.find("self_attn.q_proj.weight").offset + 576u * 576);
  EXPECT_EQ(l.find("self_attn.v_proj.weight").offset, l.find("self_attn.k_proj.weight").offset + 192u * 576);
  EXPECT_EQ(l.find("mlp.up_proj.weight").offset, l.find("mlp.gate_proj.weight").offset + 1536u * 576);
  EXPECT_FALSE(l.find("input_layernorm.weight").decay);
  EXPECT_TRUE(l.find("mlp.up_proj.weight").decay);
  EXPECT_THROW(l.find("self_attn.q_norm.weight"), std::out_of_range);
  LlamaConfig c = LlamaConfig::preset("llama-tiny");
  c.qk_norm = true, c.tie_embeddings = false;
  Llama qk(c);
  EXPECT_EQ(qk.block(1).layout().find("self_attn.q_norm.weight").shape, (std::vector<std::size_t>{32}));
  EXPECT_FALSE(qk.block(c.n_layer + 1).tied_block().has_value());
  EXPECT_EQ(qk.block(c.n_layer + 1).layout().find("lm_head.weight").shape, (std::vector<std::size_t>{256, 128}));
}

TEST(LlamaModel, InvalidShapesAreRejected) {
  LlamaConfig c = LlamaConfig::preset("llama-tiny");
  c.n_kv_head = 3;  // does not divide 4 heads
  EXPECT_THROW(Llama{c}, std::invalid_argument);
  c = LlamaConfig::preset("llama-tiny");
  c.n_embd = 132, c.n_head = 4;  // head size 33: RoPE needs pairs
  EXPECT_THROW(Llama{c}, std::invalid_argument);
  c = LlamaConfig::preset("llama-tiny");
  c.rope_scaling.factor = 0.5f;
  EXPECT_THROW(Llama{c}, std::invalid_argument);
}

TEST(LlamaModel, FlopsCountEveryProduct) {
  Llama model(LlamaConfig::preset("llama-3.2-1b"));
  const int B = 2, T = 2048;
  const double C = 2048, I = 8192, V = 128256, kv = 512;
  // Per layer: q, k, v, o, gate, up, down, and attention over the 32 x 64 query channels.
  const double per_token_matrix = 16 * (C * C + 2 * C * kv + C * C + 3 * C * I) + V * C;
  const double expected = B * T * (6.0 * per_token_matrix + 12.0 * 16 * T * C);
  EXPECT_NEAR(model.flops_per_step(B, T) / expected, 1.0, 1e-12);
}

TEST(LlamaModel, ActivationsAreChargedAndPredicted) {
  LlamaConfig c = LlamaConfig::preset("llama-tiny");
  c.qk_norm = true;
  Llama model(c);
  MemoryTracker tracker;
  const std::size_t predicted = Activations::bytes_needed(model, 2, 32, Device::cpu(), DType::f32);
  {
    Activations acts(model, 2, 32, Device::cpu(), DType::f32, tracker);
    EXPECT_EQ(acts.bytes(), predicted);
    EXPECT_EQ(tracker.stats(MemoryTracker::Space::host, MemCategory::activations).current,
              static_cast<std::int64_t>(predicted));
  }
  c.qk_norm = false;  // without QK-norm the raw qkv and its statistics are not kept
  EXPECT_LT(Activations::bytes_needed(Llama(c), 2, 32, Device::cpu(), DType::f32), predicted);
  EXPECT_THROW(Activations::bytes_needed(model, 1, 129, Device::cpu(), DType::f32), std::invalid_argument);
}

LlamaConfig small_llama(int n_head, int n_kv_head, bool tied, bool qk_norm) {
  LlamaConfig c;
  c.n_layer = 2, c.n_head = n_head, c.n_kv_head = n_kv_head, c.n_embd = 4 * n_head, c.intermediate_size = 20,
  c.vocab_size = 11, c.block_size = 6, c.tie_embeddings = tied, c.qk_norm = qk_norm;
  c.rope_theta = 100.0;  // fast rotations, so positions 0..4 differ visibly
  return c;
}

void gradcheck(const LlamaConfig& c) {
  Llama model(c);
  Activations acts(model, 2, 5, Device::cpu(), DType::f32);
  acts.set_tokens(std::vector<std::int32_t>{1, 5, 10, 3, 3, 0, 2, 9, 9, 4},
                  std::vector<std::int32_t>{5, 10, 3, 3, -1, 2, 9, 9, 4, 7});
  // N(0, 0.02) weights give attention scores near 0 and q/k gradients near rounding noise, so
  // matrices are scaled up 5x; embedding rows to unit size (RMSNorm of a row of norm ~0.1 curves
  // too sharply for central differences); RMSNorm gains stay near 1 (scaled gains would saturate
  // the softmax behind QK-norm) but differ from 1, so a gain applied to the wrong channel shows.
  auto prepare = [&](std::vector<float>& flat) {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<float> jitter(0.8f, 1.2f);
    std::size_t at = 0;
    for (std::size_t b = 0; b < model.num_blocks(); at += model.block(b).param_count(), ++b)
      for (const ParamTensor& t : model.block(b).layout().tensors())
        for (std::size_t i = 0; i < t.numel; ++i) {
          float& x = flat[at + t.offset + i];
          x = t.embedding ? 50.0f * x : t.decay ? 5.0f * x : jitter(rng);
        }
  };
  // Step 4e-3: at 2e-3 the fp32 rounding of these activations already dominates the difference.
  check_model_gradients(model, acts, 11, prepare, 4e-3f);
}

TEST(LlamaModel, WholeModelGradcheckGroupedQueryUntied) { gradcheck(small_llama(4, 2, false, false)); }
TEST(LlamaModel, WholeModelGradcheckMultiQueryTiedWithQKNorm) { gradcheck(small_llama(2, 1, true, true)); }
TEST(LlamaModel, WholeModelGradcheckMultiHeadWithLlama3Scaling) {
  LlamaConfig c = small_llama(2, 2, true, false);
  c.rope_scaling = cpu::RopeScaling{4.0f, 1.0f, 4.0f, 16};
  gradcheck(c);
}

TEST(LlamaModel, BackwardAccumulatesAndTheInitialLossIsUniform) {
  Llama model(LlamaConfig::preset("llama-tiny"));
  TinyTraining run(model, 256);
  auto& [ctx, state, acts] = run;
  EXPECT_NEAR(forward(*ctx, model, state, acts), std::log(256.0f), 0.1f);
  backward(*ctx, model, state, acts);
  std::vector<float> once = state.grads_f32();
  forward(*ctx, model, state, acts);
  backward(*ctx, model, state, acts, 2.0f);
  std::vector<float> thrice = state.grads_f32();
  for (std::size_t i = 0; i < once.size(); ++i) ASSERT_NEAR(thrice[i], 3.0f * once[i], 1e-6f + 1e-5f * std::abs(once[i]));
}

}  // namespace
}  // namespace zt::models::test
