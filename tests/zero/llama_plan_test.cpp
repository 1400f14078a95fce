// `zerotrain plan` for the real Llama presets: model-state bytes per rank at every ZeRO stage,
// from the published parameter counts (SmolLM-135M: 134,515,008; Llama-3.2-1B: 1,235,814,400)
// and the DESIGN.md table (bf16 parameters, an fp32 gradient shard plus bf16 block gradients
// below stage 2, fp32 master + two moments). Every block of these models divides by 8, so there
// is no padding and the numbers are the textbook ones. That the engine allocates exactly the
// plan is tested with real ranks in engine_test.cpp.
#include <gtest/gtest.h>

#include "models/llama.h"
#include "zero/memory_plan.h"

namespace zt {
namespace {

void expect_textbook_plan(const std::string& preset, std::int64_t psi) {
  models::Llama model(models::LlamaConfig::preset(preset));
  ASSERT_EQ(static_cast<std::int64_t>(model.param_count()), psi);
  const int N = 8;
  ZeroOptions o;
  o.compute_dtype = DType::bf16;
  for (int stage = 0; stage <= 3; ++stage) {
    o.stage = stage;
    const MemoryPlan m = plan_memory(model, o, N, 1, 256, Device::cuda(0));
    SCOPED_TRACE(preset + " stage " + std::to_string(stage));
    EXPECT_EQ(m.padding_elements, 0);
    const std::int64_t shard = stage == 0 ? psi : psi / N;
    EXPECT_EQ(m.params, stage < 3 ? 2 * psi : 2 * psi / N);
    EXPECT_EQ(m.grads, 4 * shard + (stage < 2 ? 2 * psi : 0));
    EXPECT_EQ(m.optimizer, 12 * shard);
  }
}

TEST(LlamaPlan, SmolLM135MAtEveryStageOn8Ranks) { expect_textbook_plan("smollm-135m", 134515008); }
TEST(LlamaPlan, Llama32_1BAtEveryStageOn8Ranks) { expect_textbook_plan("llama-3.2-1b", 1235814400); }

TEST(LlamaPlan, ActivationsGrowWithTheBatchAndAreCountedForTheGpuLayout) {
  models::Llama model(models::LlamaConfig::preset("smollm-135m"));
  ZeroOptions o;
  o.compute_dtype = DType::bf16;
  o.stage = 2;
  const MemoryPlan one = plan_memory(model, o, 8, 1, 2048, Device::cuda(0));
  const MemoryPlan four = plan_memory(model, o, 8, 4, 2048, Device::cuda(0));
  EXPECT_GT(one.activations, 0);
  EXPECT_GT(four.activations, 3 * one.activations);
  EXPECT_EQ(four.model_states(), one.model_states());
}

}  // namespace
}  // namespace zt
