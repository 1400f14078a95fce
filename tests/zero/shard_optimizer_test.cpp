#include "zero/shard_optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "models/compute_context.h"
#include "models/gpt2.h"
#include "zero/memory_plan.h"

namespace zt {
namespace {

// The engine sends each block's new parameters out as soon as block_updated says the block is
// done (its gather then runs while the later blocks are updated): the callback must come after the
// block's last owned element was written and before any later block's first, once per block, in
// forward order, for blocks this rank owns nothing of too.
TEST(ShardOptimizer, UpdatesBlocksInForwardOrderAndSaysWhenEachIsDone) {
  models::GPT2 model(models::GPT2Config::preset("tiny"));
  ZeroOptions options;
  options.stage = 2;
  // The last rank of the smallest world in which it owns nothing of some block (padding only).
  int world = 2;
  auto owns_nothing_somewhere = [&](const PartitionPlan& p) {
    for (std::size_t b = 0; b < model.num_blocks(); ++b)
      if (p.chunk(b, p.shards() - 1).real == 0) return true;
    return false;
  };
  while (world < 256 && !owns_nothing_somewhere(make_partition_plan(model, options, world))) ++world;
  const int owner = world - 1;
  const PartitionPlan plan = make_partition_plan(model, options, world);
  ASSERT_TRUE(owns_nothing_somewhere(plan)) << "the case of a block without owned elements is not exercised";
  MemoryTracker tracker;
  auto ctx = models::ComputeContext::cpu(1);
  ShardOptimizer optimizer(model, plan, owner, options, Device::cpu(), tracker);
  optimizer.reset(std::vector<float>(plan.shard_numel(), 0.5f), ctx->stream());
  Buffer grad(Device::cpu(), DType::f32, plan.shard_numel(), MemCategory::grads, tracker);
  for (std::size_t i = 0; i < plan.shard_numel(); ++i) grad.data_as<float>()[i] = 1.0f;

  const std::size_t n = model.num_blocks();
  const float untouched = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::vector<float>> params(n);
  for (std::size_t b = 0; b < n; ++b) params[b].assign(plan.block(b).numel, untouched);
  auto written = [&](std::size_t b) {
    const PartitionPlan::Chunk chunk = plan.chunk(b, owner);
    std::size_t count = 0;
    for (std::size_t i = chunk.begin; i < chunk.begin + chunk.real; ++i) count += !std::isnan(params[b][i]);
    return count;
  };
  std::vector<std::size_t> reported;
  optimizer.update(
      grad.view(), 1e-3, 1.0f, 1,
      [&](std::size_t block, std::size_t block_offset, std::size_t, std::size_t) -> void* {
        return params[block].data() + block_offset;
      },
      [&](std::size_t b) {
        EXPECT_EQ(written(b), plan.chunk(b, owner).real) << "block " << b << " was not updated before its report";
        if (b + 1 < n) {
          EXPECT_EQ(written(b + 1), 0u) << "block " << b + 1 << " was updated before block " << b << "'s report";
        }
        reported.push_back(b);
      },
      ctx->stream());
  std::vector<std::size_t> every(n);
  for (std::size_t b = 0; b < n; ++b) every[b] = b;
  EXPECT_EQ(reported, every);
}

}  // namespace
}  // namespace zt
