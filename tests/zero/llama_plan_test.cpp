// `zerotrain plan` for the real Llama presets: model-state bytes per rank at every ZeRO stage,
// from the published parameter counts (SmolLM-135M: 134,515,008; Llama-3.2-1B: 1,235,814,400)
// and the DESIGN.md table (bf16 parameters, an fp32 gradient shard plus bf16 block gradients
// below stage 2, fp32 master + two moments), with the padding that makes every rank's chunk of a
// block a multiple of kChunkAlignment (fewer than 8 x 64 elements a block; none at stage 0, one
// shard). That the engine allocates exactly the plan is tested with real ranks in engine_test.cpp.
#include <gtest/gtest.h>

#include "models/llama.h"
#include "zero/partition.h"
#include "zero/memory_plan.h"

namespace zt {
namespace {

void expect_textbook_plan(const std::string& preset, std::int64_t psi) {
  models::Llama model(models::LlamaConfig::preset(preset));
  ASSERT_EQ(static_cast<std::int64_t>(model.param_count()), psi);
  const int N = 8;
  ZeroOptions o;
  o.compute_dtype = DType::bf16;
  const std::int64_t unit = N * static_cast<std::int64_t>(kChunkAlignment);
  std::int64_t padding = 0;
  for (std::size_t b = 0; b < model.num_blocks(); ++b)
    padding += (unit - static_cast<std::int64_t>(model.block(b).param_count()) % unit) % unit;
  for (int stage = 0; stage <= 3; ++stage) {
    o.stage = stage;
    const MemoryPlan m = plan_memory(model, o, N, 1, 256, Device::cuda(0));
    SCOPED_TRACE(preset + " stage " + std::to_string(stage));
    EXPECT_EQ(m.padding_elements, stage == 0 ? 0 : padding);
    const std::int64_t padded = psi + m.padding_elements;
    const std::int64_t shard = stage == 0 ? psi : padded / N;
    EXPECT_EQ(m.params, stage < 3 ? 2 * padded : 2 * padded / N);
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

// The partition plan names each stage's reduction: stages 1-3 reduce-scatter over one shard per
// rank; stage 0 all-reduces one shard, in place when the gradient and the communication are fp32
// (and so does stage 1 on one rank).
TEST(PartitionPlanReduction, EachStageSaysItsCollective) {
  models::Llama model(models::LlamaConfig::preset("llama-tiny"));
  ZeroOptions o;
  for (DType dtype : {DType::f32, DType::bf16}) {
    o.compute_dtype = o.comm_dtype = dtype;
    for (int stage = 0; stage <= 3; ++stage) {
      o.stage = stage;
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " stage " + std::to_string(stage));
      const PartitionPlan plan = make_partition_plan(model, o, 4);
      if (stage == 0) {
        EXPECT_EQ(plan.reduction(), dtype == DType::f32 ? GradientReduction::in_place : GradientReduction::all_reduce);
        EXPECT_EQ(plan.shards(), 1);
      } else {
        EXPECT_EQ(plan.reduction(), GradientReduction::reduce_scatter);
        EXPECT_EQ(plan.shards(), 4);
        // Every rank's chunk and bucket range starts on a kChunkAlignment boundary.
        for (const BlockPlacement& block : plan.blocks()) EXPECT_EQ(block.chunk_numel % kChunkAlignment, 0u);
        for (const BucketPlacement& bucket : plan.buckets()) EXPECT_EQ(bucket.rank_chunk_numel % kChunkAlignment, 0u);
      }
    }
  }
  o.compute_dtype = o.comm_dtype = DType::f32;
  o.stage = 1;
  EXPECT_EQ(make_partition_plan(model, o, 1).reduction(), GradientReduction::in_place);
}

}  // namespace
}  // namespace zt
