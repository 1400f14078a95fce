// The emulated accelerator and its time model (models/device_time.h): a block's time is the
// roofline of its FLOPs and bytes, split 1/3 forward and 2/3 backward; AdamW's is its bytes; and
// a block on the emulated device computes nothing and keeps its stream busy at least that long.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "models/compute_context.h"
#include "models/device_time.h"
#include "models/gpt2.h"
#include "models/model_state.h"

namespace zt::models::test {
namespace {

GPT2Config small_gpt2() {
  GPT2Config c = GPT2Config::preset("tiny");
  c.n_layer = 2, c.n_embd = 64, c.n_head = 4, c.vocab_size = 512, c.padded_vocab_size = 512, c.block_size = 32;
  return c;
}

TEST(DeviceTime, ABlockTakesTheLongerOfItsFlopsAndItsBytesSplitAThirdForward) {
  GPT2 model(small_gpt2());
  const Block& layer = model.block(1);
  const int B = 2, T = 32;
  const double flops = layer.flops(B, T), bytes = block_bytes(layer, B, T, DType::bf16);
  ASSERT_GT(flops, 0.0);
  // bytes: 3 x the bf16 parameters at least (read twice, gradient written once), plus activations.
  EXPECT_GT(bytes, 3.0 * 2.0 * static_cast<double>(layer.param_count()));

  const BlockTime compute_bound = block_time(layer, B, T, DType::bf16, {.flops_per_s = 1e9, .bytes_per_s = 1e15});
  EXPECT_DOUBLE_EQ(compute_bound.total(), flops / 1e9);
  EXPECT_DOUBLE_EQ(compute_bound.forward_s, flops / 1e9 / 3.0);
  EXPECT_DOUBLE_EQ(compute_bound.backward_s, 2.0 * flops / 1e9 / 3.0);
  const BlockTime memory_bound = block_time(layer, B, T, DType::bf16, {.flops_per_s = 1e18, .bytes_per_s = 1e6});
  EXPECT_DOUBLE_EQ(memory_bound.total(), bytes / 1e6);
  const BlockTime flops_only = block_time(layer, B, T, DType::bf16, {.flops_per_s = 1e9, .bytes_per_s = 0.0});
  EXPECT_DOUBLE_EQ(flops_only.total(), flops / 1e9);
  // fp32 storage moves twice the bytes of bf16 for parameters and activations alike.
  EXPECT_GT(block_bytes(layer, B, T, DType::f32), 1.9 * bytes);

  // The embedding does no products: memory alone sets its time.
  EXPECT_EQ(model.block(0).flops(B, T), 0.0);
  EXPECT_GT(block_time(model.block(0), B, T, DType::bf16, {.flops_per_s = 1e9, .bytes_per_s = 1e6}).total(), 0.0);

  EXPECT_THROW(block_time(layer, B, T, DType::bf16, {.flops_per_s = 0.0, .bytes_per_s = 1.0}), std::invalid_argument);
  EXPECT_THROW(block_time(layer, B, T, DType::bf16, {.flops_per_s = 1.0, .bytes_per_s = -1.0}), std::invalid_argument);
}

TEST(DeviceTime, AdamWIsItsBytesOverTheBandwidth) {
  EXPECT_DOUBLE_EQ(optimizer_step_seconds(1000, DType::bf16, {.flops_per_s = 1e12, .bytes_per_s = 1e6}),
                   1000.0 * 30.0 / 1e6);
  EXPECT_DOUBLE_EQ(optimizer_step_seconds(1000, DType::f32, {.flops_per_s = 1e12, .bytes_per_s = 1e6}),
                   1000.0 * 32.0 / 1e6);
  EXPECT_EQ(optimizer_step_seconds(1000, DType::bf16, {.flops_per_s = 1e12, .bytes_per_s = 0.0}), 0.0);
}

TEST(DeviceTime, GradientStatisticsReadTheFp32ShardOnce) {
  EXPECT_DOUBLE_EQ(gradient_statistics_seconds(1000, {.flops_per_s = 1e12, .bytes_per_s = 1e6}), 1000.0 * 4.0 / 1e6);
  EXPECT_EQ(gradient_statistics_seconds(1000, {.flops_per_s = 1e12, .bytes_per_s = 0.0}), 0.0);
}

TEST(EmulatedDevice, BlocksComputeNothingAndOccupyTheStreamForTheirModelledTime) {
  GPT2 model(small_gpt2());
  const int B = 2, T = 32;
  // A rate that makes the whole micro batch take about 0.12 s: long enough to measure, short to run.
  const DeviceRates rates{.flops_per_s = model.flops_per_step(B, T) / 0.12, .bytes_per_s = 1e12};
  auto ctx = ComputeContext::emulated(rates, DType::bf16);
  ASSERT_NE(ctx->emulation(), nullptr);
  EXPECT_EQ(ctx->emulation()->flops_per_s, rates.flops_per_s);
  EXPECT_EQ(ComputeContext::cpu()->emulation(), nullptr);
  EXPECT_TRUE(ctx->device().is_cpu());
  EXPECT_EQ(ctx->dtype(), DType::bf16);

  ModelState state(model, Device::cpu(), DType::bf16);
  state.init(5);
  Activations acts(model, B, T, Device::cpu(), DType::bf16);
  std::vector<std::int32_t> tokens(B * T, 3), targets(B * T, 4);
  acts.set_tokens(tokens, targets);
  // Every activation byte set to a pattern that no computation would leave behind.
  BlockIO io = acts.io(1);
  std::memset(io.output.data, 0x5a, io.output.bytes());
  const std::vector<std::byte> before(static_cast<std::byte*>(io.output.data),
                                      static_cast<std::byte*>(io.output.data) + io.output.bytes());

  double modelled = 0.0, elapsed = 0.0;
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    const BlockTime t = block_time(model.block(b), B, T, DType::bf16, rates);
    const auto start = std::chrono::steady_clock::now();
    forward_block(*ctx, model, b, state.block_params(b), acts);
    backward_block(*ctx, model, b, state.block_params(b), state.grads(b), {}, acts, 1.0f);
    elapsed += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    modelled += t.total();
  }
  EXPECT_NEAR(modelled, 0.12, 0.12 * 0.02);  // the memory side is negligible at this bandwidth
  EXPECT_GE(elapsed, modelled);               // a wait on the clock never ends early
  EXPECT_EQ(std::memcmp(before.data(), io.output.data, before.size()), 0) << "an emulated block wrote its output";

  EXPECT_THROW(ComputeContext::emulated({.flops_per_s = 0.0, .bytes_per_s = 1.0}, DType::bf16), std::invalid_argument);
  EXPECT_THROW(ComputeContext::emulated(rates, DType::i32), std::invalid_argument);
}

}  // namespace
}  // namespace zt::models::test
