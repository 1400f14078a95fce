// What GPT-2's attention keeps between forward and backward, checked without a GPU: where a CUDA
// context takes the flash kernels (16-bit, hs 64) the saved `att` slot and the attention scratch
// hold one float per (b, h, t), not the (B, NH, T, T) probabilities, and the memory plan
// (Activations::bytes_needed, what `zerotrain plan` reports) shrinks by exactly that.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "models/activations.h"
#include "models/gpt2.h"
#include "models/llama.h"
#include "models/ops/attention.h"
#include "models/ops/gqa_attention.h"

namespace zt::models {
namespace {

constexpr std::size_t kAlign = 256;  // Activations starts every slot on this boundary
std::size_t aligned(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

TEST(AttentionMemory, TheFlashPathKeepsRowStatisticsNotProbabilities) {
  const Device gpu = Device::cuda(0), cpu = Device::cpu();
  const int B = 16, T = 1024, C = 768, NH = 12;  // GPT-2 124M at T 1024: hs 64
  const std::size_t probabilities = std::size_t{16} * 12 * 1024 * 1024, rows = std::size_t{16} * 12 * 1024;
  for (DType dt : {DType::bf16, DType::f16}) {
    EXPECT_TRUE(ops::attention_takes_flash(gpu, dt, B, T, C, NH));
    EXPECT_EQ(ops::attention_saved_numel(gpu, dt, B, T, C, NH), 2 * rows);    // a float is two elements
    EXPECT_EQ(ops::attention_scratch_numel(gpu, dt, B, T, C, NH), 2 * rows);  // backward's rowsum
    EXPECT_EQ(ops::attention_saved_numel(cpu, dt, B, T, C, NH), probabilities);
    EXPECT_EQ(ops::attention_scratch_numel(cpu, dt, B, T, C, NH), std::size_t{1024} * 1024);
  }
  // The materialised path: fp32 (TF32 products), a head size other than 64, widths not a multiple
  // of 8, T of 1, the CPU.
  const std::size_t materialised_scratch = 7 * std::size_t{B} * T * C + probabilities;
  EXPECT_FALSE(ops::attention_takes_flash(gpu, DType::f32, B, T, C, NH));
  EXPECT_EQ(ops::attention_saved_numel(gpu, DType::f32, B, T, C, NH), probabilities);
  EXPECT_EQ(ops::attention_scratch_numel(gpu, DType::f32, B, T, C, NH), materialised_scratch);
  EXPECT_FALSE(ops::attention_takes_flash(gpu, DType::bf16, B, T, 768, 6));  // hs 128
  EXPECT_FALSE(ops::attention_takes_flash(gpu, DType::bf16, B, T, 260, 4));  // hs 65, C % 8 != 0
  EXPECT_FALSE(ops::attention_takes_flash(gpu, DType::bf16, B, 1, C, NH));
  EXPECT_FALSE(ops::attention_takes_flash(cpu, DType::bf16, B, T, C, NH));
  // f16 and bf16 alike: a float takes two elements, also for an odd count of rows.
  EXPECT_EQ(ops::attention_saved_numel(gpu, DType::bf16, 1, 3, 64, 1), 6u);
}

// Grouped-query attention (SmolLM-135M: 9 query heads, 3 key/value heads, hs 64) follows the same
// rule, with one float per query head's row.
TEST(AttentionMemory, GroupedQueryAttentionFollowsTheSameRule) {
  const Device gpu = Device::cuda(0), cpu = Device::cpu();
  const int B = 8, T = 2048, NH = 9, KV = 3, hs = 64;
  const std::size_t rows = std::size_t{B} * NH * T, probabilities = rows * T;
  for (DType dt : {DType::bf16, DType::f16}) {
    EXPECT_TRUE(ops::gqa_attention_takes_flash(gpu, dt, B, T, NH, KV, hs));
    EXPECT_EQ(ops::gqa_attention_saved_numel(gpu, dt, B, T, NH, KV, hs), 2 * rows);
    EXPECT_EQ(ops::gqa_attention_scratch_numel(gpu, dt, B, T, NH, KV, hs), 2 * rows);
    EXPECT_EQ(ops::gqa_attention_saved_numel(cpu, dt, B, T, NH, KV, hs), probabilities);
  }
  EXPECT_FALSE(ops::gqa_attention_takes_flash(gpu, DType::f32, B, T, NH, KV, hs));
  EXPECT_FALSE(ops::gqa_attention_takes_flash(gpu, DType::bf16, B, T, NH, KV, 32));   // llama-tiny's hs
  EXPECT_FALSE(ops::gqa_attention_takes_flash(gpu, DType::bf16, B, T, NH, 2, hs));    // 2 does not divide 9
  EXPECT_EQ(ops::gqa_attention_scratch_numel(gpu, DType::f32, B, T, NH, KV, hs),
            7 * std::size_t{B} * T * NH * hs + probabilities);
  // The whole model's plan: every decoder layer's att slot and the attention scratch, as for GPT-2.
  Llama model(LlamaConfig::preset("smollm-135m"));
  const std::size_t b = 2, t = 2048, layers = 30, es = 2, r = b * NH * t;
  const std::size_t on_cpu = Activations::bytes_needed(model, b, t, cpu, DType::bf16);
  const std::size_t on_gpu = Activations::bytes_needed(model, b, t, gpu, DType::bf16);
  EXPECT_EQ(on_cpu - on_gpu, layers * (aligned(r * t * es) - aligned(r * 4)) + (aligned(t * t * es) - aligned(r * 4)));
}

// The GPU plan in bf16 against the CPU's: the same slots but for every layer's att (the
// probabilities on the CPU, row statistics on the GPU) and the attention scratch inside the one
// scratch region that all blocks share (the transformer block's is the largest: d_ln, d_qkv,
// d_atty, d_fc, attn).
TEST(AttentionMemory, GPT2sActivationPlanOnAGpuLeavesTheProbabilitiesOut) {
  GPT2 model(GPT2Config::preset("gpt2-124m"));
  const std::size_t B = 4, T = 1024, NH = 12, layers = 12, es = 2;
  const std::size_t probabilities = B * NH * T * T, rows = B * NH * T;
  const std::size_t cpu = Activations::bytes_needed(model, B, T, Device::cpu(), DType::bf16);
  const std::size_t gpu = Activations::bytes_needed(model, B, T, Device::cuda(0), DType::bf16);
  const std::size_t cpu_att = aligned(probabilities * es), gpu_att = aligned(rows * 4);
  const std::size_t cpu_attn_scratch = aligned(T * T * es), gpu_attn_scratch = aligned(rows * 4);
  EXPECT_EQ(cpu - gpu, layers * (cpu_att - gpu_att) + (cpu_attn_scratch - gpu_attn_scratch));
}

// The figures models/README.md quotes: GPT-2 124M, bf16, B 16, T 1024 on a GPU, 6.35 GiB of
// activations where the probabilities took 11.38.
TEST(AttentionMemory, GPT2Small124MAtBatch16) {
  GPT2 model(GPT2Config::preset("gpt2-124m"));
  const double gib = 1024.0 * 1024.0 * 1024.0;
  EXPECT_NEAR(Activations::bytes_needed(model, 16, 1024, Device::cuda(0), DType::bf16) / gib, 6.35, 0.005);
}

}  // namespace
}  // namespace zt::models
