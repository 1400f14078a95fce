#include "zero/shard_optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <algorithm>
#include <limits>
#include <vector>

#include "models/compute_context.h"
#include "models/gpt2.h"
#include "zero/memory_plan.h"

namespace zt {
namespace {

// The engine sends each piece of a block's new parameters out as soon as piece_updated says it is
// done (its gather then runs while the rest is updated): the callback must come after the piece's
// last owned element was written and before any later element's, once per piece, pieces covering
// the chunk in order, blocks in forward order, for blocks this rank owns nothing of too.
TEST(ShardOptimizer, UpdatesBlocksInForwardOrderAndSaysWhenEachPieceIsDone) {
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
  std::vector<std::size_t> pieces(n, 1);
  pieces[0] = 3;      // the embedding, in pieces that cut through its tensors
  pieces[n / 2] = 2;  // and a layer
  const float untouched = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::vector<float>> params(n);
  for (std::size_t b = 0; b < n; ++b) params[b].assign(plan.block(b).numel, untouched);
  // Owned elements written in [from, to) of block b's flat parameter.
  auto written = [&](std::size_t b, std::size_t from, std::size_t to) {
    std::size_t count = 0;
    for (std::size_t i = from; i < std::min(to, params[b].size()); ++i) count += !std::isnan(params[b][i]);
    return count;
  };
  auto owned = [&](std::size_t b, std::size_t from, std::size_t to) {
    const PartitionPlan::Chunk chunk = plan.chunk(b, owner);
    const std::size_t lo = std::max(from, chunk.begin), hi = std::min(to, chunk.begin + chunk.real);
    return hi > lo ? hi - lo : 0;
  };
  std::vector<std::size_t> reported_blocks;
  std::size_t next_begin = 0;
  optimizer.update(
      grad.view(), 1e-3, 1.0f, 1,
      [&](std::size_t block, std::size_t block_offset, std::size_t, std::size_t) -> void* {
        return params[block].data() + block_offset;
      },
      pieces,
      [&](std::size_t b, std::size_t begin, std::size_t count) {
        if (reported_blocks.empty() || reported_blocks.back() != b) {
          reported_blocks.push_back(b);
          next_begin = 0;
        }
        EXPECT_EQ(begin, next_begin) << "block " << b << ": pieces out of order";
        next_begin = begin + count;
        const std::size_t base = static_cast<std::size_t>(owner) * plan.block(b).chunk_numel;
        EXPECT_EQ(written(b, 0, base + begin + count), owned(b, 0, base + begin + count))
            << "block " << b << " piece at " << begin << " was not updated before its report";
        EXPECT_EQ(written(b, base + begin + count, params[b].size()), 0u)
            << "block " << b << ": elements after the piece at " << begin << " were updated before its report";
        if (b + 1 < n) {
          EXPECT_EQ(written(b + 1, 0, params[b + 1].size()), 0u)
              << "block " << b + 1 << " was updated before block " << b << "'s report";
        }
        if (next_begin == plan.block(b).chunk_numel) {
          const std::vector<ChunkPiece> expected =
              chunk_pieces(plan.block(b).chunk_numel, pieces[b], plan.chunk_alignment());
          EXPECT_EQ(expected.back().begin, begin) << "block " << b << ": not the last piece";
        }
      },
      ctx->stream());
  std::vector<std::size_t> every(n);
  for (std::size_t b = 0; b < n; ++b) every[b] = b;
  EXPECT_EQ(reported_blocks, every);
}

// Updating in pieces, or the blocks in another order, changes the order of the element-wise
// updates only: the master weights, the moments and the parameters are the same bits as one
// update of each block in block order, and the blocks are reported in the order asked.
TEST(ShardOptimizer, AnUpdateInPiecesIsBitwiseTheWholeUpdate) {
  models::GPT2 model(models::GPT2Config::preset("tiny"));
  ZeroOptions options;
  options.stage = 2;
  options.compute_dtype = DType::bf16;
  const PartitionPlan plan = make_partition_plan(model, options, 3);
  MemoryTracker tracker;
  auto ctx = models::ComputeContext::cpu(1);
  std::vector<float> master(plan.shard_numel()), grad_values(plan.shard_numel());
  for (std::size_t i = 0; i < master.size(); ++i) {
    master[i] = std::sin(0.37f * static_cast<float>(i));
    grad_values[i] = std::cos(0.11f * static_cast<float>(i)) * 1e-2f;
  }
  Buffer grad(Device::cpu(), DType::f32, plan.shard_numel(), MemCategory::grads, tracker);
  std::copy(grad_values.begin(), grad_values.end(), grad.data_as<float>());
  std::vector<std::size_t> reported;
  auto run = [&](const std::vector<std::size_t>& pieces, const std::vector<std::size_t>& order) {
    ShardOptimizer optimizer(model, plan, 1, options, Device::cpu(), tracker);
    optimizer.reset(master, ctx->stream());
    std::vector<std::uint16_t> params(plan.shard_numel(), 0);
    reported.clear();
    for (std::int64_t step = 1; step <= 3; ++step)
      optimizer.update(
          grad.view(), 1e-3, 0.7f, step,
          [&](std::size_t, std::size_t, std::size_t shard_offset, std::size_t) -> void* {
            return params.data() + shard_offset;
          },
          pieces,
          [&](std::size_t block, std::size_t, std::size_t) {
            if (step == 1 && (reported.empty() || reported.back() != block)) reported.push_back(block);
          },
          ctx->stream(), order);
    ShardOptimizer::HostState state = optimizer.download(ctx->stream());
    return std::pair{params, state.master};
  };
  std::vector<std::size_t> pieces(model.num_blocks(), 1);
  pieces[0] = 5;
  pieces[1] = 2;
  std::vector<std::size_t> order(model.num_blocks());
  for (std::size_t b = 0; b < order.size(); ++b) order[b] = (b + 2) % order.size();  // 2, 3, ..., 0, 1
  const auto whole = run({}, {}), in_pieces = run(pieces, {}), reordered = run(pieces, order);
  EXPECT_EQ(reported, order);
  for (const auto* other : {&in_pieces, &reordered}) {
    EXPECT_EQ(whole.first, other->first);
    EXPECT_EQ(std::memcmp(whole.second.data(), other->second.data(), whole.second.size() * sizeof(float)), 0);
  }
  ShardOptimizer refusing(model, plan, 1, options, Device::cpu(), tracker);
  std::vector<std::size_t> repeated = order;
  repeated[1] = repeated[0];
  EXPECT_THROW(refusing.update(
                   grad.view(), 1e-3, 0.7f, 1, [](std::size_t, std::size_t, std::size_t, std::size_t) -> void* { return nullptr; },
                   {}, {}, ctx->stream(), repeated),
               std::invalid_argument);
  // Pieces for some blocks only: refused before anything is updated.
  ShardOptimizer optimizer(model, plan, 1, options, Device::cpu(), tracker);
  EXPECT_THROW(optimizer.update(
                   grad.view(), 1e-3, 0.7f, 1, [](std::size_t, std::size_t, std::size_t, std::size_t) -> void* { return nullptr; },
                   {2}, {}, ctx->stream()),
               std::invalid_argument);
}

// The forward's first block goes out in pieces of at most a bucket; the others whole.
TEST(ShardOptimizer, TheForwardsFirstBlockIsPublishedInPiecesOfABucket) {
  models::GPT2 model(models::GPT2Config::preset("tiny"));
  ZeroOptions options;
  options.stage = 2;
  options.reduce_bucket_size = 512;  // 128 per rank: two alignment units
  const PartitionPlan plan = make_partition_plan(model, options, 4);
  const std::vector<std::size_t> pieces = publish_pieces(plan);
  ASSERT_EQ(pieces.size(), model.num_blocks());
  ASSERT_EQ(plan.block(0).padded_numel, (64u + 16u) * 32u);  // wte and wpe of the tiny preset
  EXPECT_EQ(pieces[0], 5u);                                  // 2560 elements in buckets of 512
  for (std::size_t b = 1; b < pieces.size(); ++b) EXPECT_EQ(pieces[b], 1u) << "block " << b;
  // Equal pieces covering the chunk, the last one shorter.
  const std::vector<ChunkPiece> parts = chunk_pieces(250, 5);
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(parts[1].begin, 50u);
  EXPECT_EQ(parts[4].begin + parts[4].count, 250u);
  // With an alignment the parts start on its boundaries, as the plan's chunks do: 334 rounds up to 384.
  const std::vector<ChunkPiece> aligned = chunk_pieces(1000, 3, 64);
  ASSERT_EQ(aligned.size(), 3u);
  EXPECT_EQ(aligned[1].begin, 384u);
  EXPECT_EQ(aligned[2].count, 1000u - 768u);
  EXPECT_EQ(chunk_pieces(1000, 8, 256).size(), 4u);  // fewer parts than asked
  EXPECT_EQ(plan.chunk_alignment(), kChunkAlignment);
  for (const ChunkPiece& piece : chunk_pieces(plan.block(0).chunk_numel, 7, plan.chunk_alignment()))
    EXPECT_EQ(piece.begin % kChunkAlignment, 0u);
  EXPECT_EQ(chunk_pieces(10, 3).back().count, 2u);  // 4, 4, 2
  EXPECT_EQ(chunk_pieces(0, 3).size(), 1u);         // reported once, empty
  EXPECT_EQ(chunk_pieces(10, 6).size(), 5u);  // equal pieces of 2: five, not six
}

}  // namespace
}  // namespace zt
