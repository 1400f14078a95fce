// GPT-2 and MLP as block lists: layouts, initialisation, activations accounting, FLOPs, and
// whole-model finite-difference gradient checks on the CPU (every parameter).
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <numeric>

#include "gradcheck.h"
#include "model_gradcheck.h"
#include "models/activations.h"
#include "models/flops.h"
#include "models/gpt2.h"
#include "models/mlp.h"
#include "models/model_state.h"
#include "models/ops/embedding.h"

namespace zt::models::test {
namespace {

GPT2Config small_gpt2() {
  GPT2Config c;
  c.n_layer = 2, c.n_head = 2, c.n_embd = 16, c.vocab_size = 11, c.padded_vocab_size = 16, c.block_size = 6;
  return c;
}

TEST(GPT2Model, BlocksLayoutsAndParameterCounts) {
  GPT2Config c = GPT2Config::preset("gpt2-124m");
  c.padded_vocab_size = c.vocab_size;
  GPT2 model(c);
  EXPECT_EQ(model.num_blocks(), 14u);
  EXPECT_EQ(model.param_count(), 124439808u);  // the published GPT-2 small count (wte tied)
  EXPECT_EQ(model.block(0).name(), "embedding");
  EXPECT_EQ(model.block(1).name(), "h0");
  EXPECT_EQ(model.block(13).name(), "head");
  EXPECT_EQ(model.block(13).tied_block(), std::optional<std::size_t>(0));
  EXPECT_FALSE(model.block(5).tied_block().has_value());
  EXPECT_TRUE(model.block(13).is_loss_block());
  EXPECT_FALSE(model.block(0).backward_reads_params());
  EXPECT_TRUE(model.block(13).backward_reads_params());
  const ParamLayout& l = model.block(1).layout();
  EXPECT_EQ(l.tensors().size(), 12u);
  EXPECT_EQ(l.find("attn.c_attn.weight").shape, (std::vector<std::size_t>{2304, 768}));
  EXPECT_EQ(l.find("attn.c_attn.weight").offset, 2 * 768u);
  EXPECT_FALSE(l.find("ln_1.weight").decay);
  EXPECT_EQ(l.numel(), 12u * 768 * 768 + 13u * 768);
  EXPECT_EQ(GPT2(GPT2Config::preset("gpt2-350m")).param_count() -
                (50304u - 50257u) * 1024u,  // the preset pads the vocabulary
            354823168u);
  EXPECT_THROW(GPT2Config::preset("gpt2-xxl"), std::invalid_argument);
  GPT2Config bad = c;
  bad.n_head = 7;
  EXPECT_THROW(GPT2{bad}, std::invalid_argument);
}

TEST(GPT2Model, FlopsFollowTheDocumentedFormula) {
  GPT2Config c = GPT2Config::preset("gpt2-124m");
  GPT2 model(c);
  const int B = 4, T = 1024;
  // Weights in matrix products; the LM head's product is as wide as the padded vocabulary.
  double N = 12.0 * (12.0 * 768 * 768) + 50304.0 * 768;
  double expected = B * T * (6.0 * N + 12.0 * 12 * 1024 * 768);
  EXPECT_NEAR(model.flops_per_step(B, T) / expected, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(model.flops_per_step(B, T), flops::gpt2_step(12, 768, 50304, B, T));
}

TEST(GPT2Model, InitIsDeterministicAndFollowsGPT2) {
  GPT2Config c = GPT2Config::preset("tiny");
  c.n_layer = 8;
  GPT2 model(c);
  ModelState a(model, Device::cpu(), DType::f32), b(model, Device::cpu(), DType::f32), other(model, Device::cpu(), DType::f32);
  a.init(7);
  b.init(7);
  other.init(8);
  EXPECT_EQ(a.params_f32(), b.params_f32());
  EXPECT_NE(a.params_f32(), other.params_f32());
  // Statistics of one block: weights N(0, 0.02), residual projections N(0, 0.02/sqrt(2L)),
  // biases 0, LayerNorm gains 1.
  const ParamLayout& l = model.block(1).layout();
  const float* p = a.params(1).as<float>();
  auto stats = [&](const std::string& name) {
    const ParamTensor& t = l.find(name);
    double s = 0, s2 = 0;
    for (std::size_t i = 0; i < t.numel; ++i) s += p[t.offset + i], s2 += double(p[t.offset + i]) * p[t.offset + i];
    return std::pair{s / t.numel, std::sqrt(s2 / t.numel)};
  };
  EXPECT_NEAR(stats("attn.c_attn.weight").second, 0.02, 0.002);
  EXPECT_NEAR(stats("mlp.c_proj.weight").second, 0.02 / std::sqrt(16.0), 0.0006);
  EXPECT_EQ(stats("attn.c_attn.bias").second, 0.0);
  EXPECT_EQ(stats("ln_1.weight").first, 1.0);
  // A block's values do not depend on the other blocks (ZeRO ranks may initialise only theirs).
  GPT2Config shallow = c;
  shallow.n_layer = 8;
  GPT2 same(shallow);
  ModelState s(same, Device::cpu(), DType::f32);
  s.init(7);
  EXPECT_EQ(std::vector<float>(s.params(0).as<float>(), s.params(0).as<float>() + s.params(0).numel),
            std::vector<float>(a.params(0).as<float>(), a.params(0).as<float>() + a.params(0).numel));
}

TEST(GPT2Model, ActivationsAreChargedAndPredicted) {
  GPT2 model(GPT2Config::preset("tiny"));
  MemoryTracker tracker;
  std::size_t predicted = Activations::bytes_needed(model, 3, 16, Device::cpu(), DType::f32);
  {
    Activations acts(model, 3, 16, Device::cpu(), DType::f32, tracker);
    EXPECT_EQ(acts.bytes(), predicted);
    EXPECT_EQ(tracker.stats(MemoryTracker::Space::host, MemCategory::activations).current,
              static_cast<std::int64_t>(predicted));
  }
  EXPECT_EQ(tracker.stats(MemoryTracker::Space::host, MemCategory::activations).current, 0);
  EXPECT_GT(Activations::bytes_needed(model, 6, 16, Device::cpu(), DType::f32), predicted);
  EXPECT_THROW(Activations::bytes_needed(model, 1, 17, Device::cpu(), DType::f32), std::invalid_argument);
  ModelState state(model, Device::cpu(), DType::f32, tracker);
  EXPECT_EQ(tracker.stats(MemoryTracker::Space::host, MemCategory::params).current,
            static_cast<std::int64_t>(model.param_count() * 4));
  EXPECT_EQ(tracker.stats(MemoryTracker::Space::host, MemCategory::grads).current,
            static_cast<std::int64_t>(model.param_count() * 4));
}

// Activation checkpointing: the transformer layers (not the embedding, whose backward reads no
// parameters, nor the loss block) are recomputed, the first and every k-th after it, and their
// saved tensors share one region with the loss block's (each slot 256-byte aligned).
TEST(GPT2Model, ActivationCheckpointingSharesTheRecomputedBlocksSavedTensors) {
  GPT2 model(GPT2Config::preset("tiny"));
  ASSERT_EQ(model.num_blocks(), 4u);  // embedding, two layers, head
  EXPECT_EQ(Activations::recomputed_blocks(model, 0), (std::vector<bool>{false, false, false, false}));
  EXPECT_EQ(Activations::recomputed_blocks(model, 1), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(Activations::recomputed_blocks(model, 2), (std::vector<bool>{false, true, false, false}));
  EXPECT_THROW(Activations::recomputed_blocks(model, -1), std::invalid_argument);
  auto saved_bytes = [&](std::size_t block) {
    std::size_t bytes = 0;
    for (const ActivationSlot& slot : model.block(block).saved_slots(3, 16, Device::cpu(), DType::f32))
      bytes += (slot.numel * 4 + 255) / 256 * 256;
    return bytes;
  };
  const std::size_t layer = saved_bytes(1), head = saved_bytes(3);
  ASSERT_GT(layer, 0u);
  ASSERT_NE(layer, head);
  const std::size_t kept = Activations::bytes_needed(model, 3, 16, Device::cpu(), DType::f32);
  EXPECT_EQ(Activations::bytes_needed(model, 3, 16, Device::cpu(), DType::f32, 1),
            kept - 2 * layer - head + std::max(layer, head));
  EXPECT_EQ(Activations::bytes_needed(model, 3, 16, Device::cpu(), DType::f32, 2), kept - std::min(layer, head));
  MemoryTracker tracker;
  Activations acts(model, 3, 16, Device::cpu(), DType::f32, tracker, 1);
  EXPECT_EQ(acts.bytes(), kept - 2 * layer - head + std::max(layer, head));
  EXPECT_TRUE(acts.recomputes(1));
  EXPECT_FALSE(acts.recomputes(3));
  // The two layers' and the head's saved tensors begin at the same place; the outputs are their own.
  EXPECT_EQ(acts.io(1).saved.front().data, acts.io(2).saved.front().data);
  EXPECT_EQ(acts.io(1).saved.front().data, acts.io(3).saved.front().data);
  EXPECT_NE(acts.io(1).output.data, acts.io(2).output.data);
}

// Token ids and targets live in i32 buffers, and the ops take them only as i32 views.
TEST(GPT2Model, TokensAndTargetsAreIntegerViews) {
  GPT2 model(GPT2Config::preset("tiny"));
  Activations acts(model, 1, 4, Device::cpu(), DType::f32);
  EXPECT_EQ(acts.input().dtype, DType::i32);
  EXPECT_EQ(acts.targets().dtype, DType::i32);
  auto ctx = ComputeContext::cpu();
  const GPT2Config& c = model.config();
  Buffer tokens_as_floats(Device::cpu(), DType::f32, 4, MemCategory::workspace);
  Buffer out(Device::cpu(), DType::f32, 4 * c.n_embd, MemCategory::workspace);
  Buffer wte(Device::cpu(), DType::f32, c.padded_vocab_size * c.n_embd, MemCategory::workspace);
  Buffer wpe(Device::cpu(), DType::f32, c.block_size * c.n_embd, MemCategory::workspace);
  EXPECT_THROW(ops::embedding_forward(*ctx, out.view(), tokens_as_floats.view(), wte.view(), wpe.view(), 1, 4, c.n_embd),
               std::invalid_argument);
  EXPECT_THROW(ops::int32_view(tokens_as_floats.view()), std::invalid_argument);
}

TEST(GPT2Model, WholeModelGradcheckIncludingTiedHead) {
  GPT2 model(small_gpt2());
  Activations acts(model, 2, 5, Device::cpu(), DType::f32);
  acts.set_tokens(std::vector<std::int32_t>{1, 5, 10, 3, 3, 0, 2, 9, 9, 4},
                  std::vector<std::int32_t>{5, 10, 3, 3, -1, 2, 9, 9, 4, 7});
  EXPECT_EQ(acts.valid_targets(), 9);
  check_model_gradients(model, acts, 11);
}

TEST(GPT2Model, BackwardAccumulatesAndLossScaleScales) {
  GPT2 model(GPT2Config::preset("tiny"));
  TinyTraining run(model, 64);
  auto& [ctx, state, acts] = run;
  float loss = forward(*ctx, model, state, acts);
  EXPECT_NEAR(loss, std::log(64.0f), 0.1f);  // near-uniform predictions at init
  backward(*ctx, model, state, acts);
  std::vector<float> once = state.grads_f32();
  forward(*ctx, model, state, acts);
  backward(*ctx, model, state, acts, 2.0f);
  std::vector<float> thrice = state.grads_f32();
  for (std::size_t i = 0; i < once.size(); ++i) ASSERT_NEAR(thrice[i], 3.0f * once[i], 1e-6f + 1e-5f * std::abs(once[i]));
  state.zero_grad(*ctx);
  for (float g : state.grads_f32()) ASSERT_EQ(g, 0.0f);
}

// The LM head reports its tied table's gradient done (BlockGrads::tied_grads_done) before it
// computes its input's gradient, so that the engine reduces the table meanwhile: at the report the
// table's gradient is final and the input's gradient not yet written. A block that does not split
// its backward is reported done at its end, once.
TEST(GPT2Model, TheHeadReportsItsTiedGradientBeforeItsInputsGradient) {
  GPT2 model(GPT2Config::preset("tiny"));
  TinyTraining run(model, 64);
  auto& [ctx, state, acts] = run;
  forward(*ctx, model, state, acts);
  auto values = [](BufferView v) { return std::vector<float>(v.as<float>(), v.as<float>() + v.numel); };
  const std::size_t head = model.num_blocks() - 1;
  const BufferView d_input = acts.d_input(head);
  std::fill(d_input.as<float>(), d_input.as<float>() + d_input.numel, 7.0f);
  const std::vector<float> untouched = values(d_input);
  int reports = 0;
  std::vector<float> table_at_report, d_input_at_report;
  backward_block(*ctx, model, head, state.block_params(head), state.grads(head), state.grads(0), acts, 1.0f, [&] {
    ++reports;
    table_at_report = values(state.grads(0));
    d_input_at_report = values(d_input);
  });
  EXPECT_EQ(reports, 1);
  EXPECT_EQ(table_at_report, values(state.grads(0)));
  EXPECT_NE(table_at_report, std::vector<float>(table_at_report.size(), 0.0f));
  EXPECT_EQ(d_input_at_report, untouched);
  EXPECT_NE(values(d_input), untouched);
  EXPECT_EQ(model.block(head).tied_grads_done_share(), 0.5);

  const std::size_t last_layer = head - 1;
  reports = 0;
  backward_block(*ctx, model, last_layer, state.block_params(last_layer), state.grads(last_layer), {}, acts, 1.0f,
                 [&] { ++reports; });
  EXPECT_EQ(reports, 1);
  EXPECT_EQ(model.block(last_layer).tied_grads_done_share(), 1.0);
}

TEST(MLPModel, WholeModelGradcheck) {
  MLPConfig c{6, 10, 2, 4};
  MLP model(c);
  EXPECT_EQ(model.num_blocks(), 3u);
  EXPECT_EQ(model.param_count(), (6u * 10 + 10) + (10u * 10 + 10) + (10u * 4 + 4));
  std::vector<float> x;
  std::vector<std::int32_t> y;
  mlp_synthetic_batch(c, 5, 6, x, y);
  y[2] = -1;
  Activations acts(model, 2, 3, Device::cpu(), DType::f32);
  acts.set_features(x, y);
  check_model_gradients(model, acts, 4);
}

TEST(MLPModel, SyntheticBatchesAreDeterministicAndLabelled) {
  MLPConfig c;
  std::vector<float> x1, x2;
  std::vector<std::int32_t> y1, y2;
  mlp_synthetic_batch(c, 1, 256, x1, y1);
  mlp_synthetic_batch(c, 1, 256, x2, y2);
  EXPECT_EQ(x1, x2);
  EXPECT_EQ(y1, y2);
  std::vector<int> counts(c.n_classes);
  for (auto label : y1) counts.at(label)++;
  for (int n : counts) EXPECT_GT(n, 0);  // every class occurs
}

}  // namespace
}  // namespace zt::models::test
