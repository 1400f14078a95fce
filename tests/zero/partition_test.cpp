#include "zero/partition.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <stdexcept>
#include <vector>

namespace zt {
namespace {

TEST(PartitionPlan, PadsEachBlockToTheWorldSizeAndSplitsEvenly) {
  std::vector<std::size_t> blocks = {10, 7, 12};
  PartitionPlan plan(blocks, 4, 1000);
  EXPECT_EQ(plan.block(0).padded_numel, 12u);
  EXPECT_EQ(plan.block(1).padded_numel, 8u);
  EXPECT_EQ(plan.block(2).padded_numel, 12u);
  EXPECT_EQ(plan.block(1).chunk_numel, 2u);
  EXPECT_EQ(plan.total_numel(), 29u);
  EXPECT_EQ(plan.shard_numel(), 3u + 2u + 3u);
  EXPECT_EQ(plan.padded_total_numel(), 32u);
}

TEST(PartitionPlan, BucketsFollowBackwardOrderAndRespectTheSize) {
  // Blocks of 6, 6, 20, 6 elements with 2 ranks and buckets of 12: the last block (6) and the
  // one before it (20) cannot share a bucket, 20 > 12 gets its own, then {6, 6}.
  std::vector<std::size_t> blocks = {6, 6, 20, 6};
  PartitionPlan plan(blocks, 2, 12);
  ASSERT_EQ(plan.buckets().size(), 3u);
  EXPECT_EQ(plan.bucket(0).blocks, (std::vector<std::size_t>{3}));
  EXPECT_EQ(plan.bucket(1).blocks, (std::vector<std::size_t>{2}));
  EXPECT_EQ(plan.bucket(2).blocks, (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(plan.bucket(2).numel(2), 12u);
  EXPECT_EQ(plan.largest_bucket_numel(), 20u);
  // Shard order is bucket order: block 3's chunk first, block 0's last.
  EXPECT_EQ(plan.block(3).shard_offset, 0u);
  EXPECT_EQ(plan.block(2).shard_offset, 3u);
  EXPECT_EQ(plan.block(1).shard_offset, 13u);
  EXPECT_EQ(plan.block(0).shard_offset, 16u);
  EXPECT_EQ(plan.bucket(2).shard_offset, 13u);
  EXPECT_EQ(plan.block(0).offset_in_rank_chunk, 3u);
  EXPECT_EQ(plan.bucket_rank_offset(2, 1), 6u);
}

// Simulates what the engine does with the plan — copy each block's gradient into its bucket
// rank-major, reduce-scatter the bucket, place the output in the shard — and checks that every
// rank ends up owning exactly chunk r of every block, and that the shards tile the model.
TEST(PartitionPlan, ReduceScatterOfEachBucketLandsOnTheRightShardElements) {
  for (int world : {1, 2, 3, 4, 7}) {
    for (std::size_t bucket_numel : {1ul, 5ul, 13ul, 64ul, 100000ul}) {
      std::vector<std::size_t> blocks = {5, 1, 17, 0, 9, 30, 2};
      PartitionPlan plan(blocks, world, bucket_numel);
      // Global id of each padded parameter element: block * 1000 + index (padding: -1).
      std::vector<std::vector<long>> shards(world, std::vector<long>(plan.shard_numel(), -2));
      for (std::size_t k = 0; k < plan.buckets().size(); ++k) {
        const BucketPlacement& bucket = plan.bucket(k);
        std::vector<long> buffer(bucket.numel(world), -3);
        for (std::size_t b : bucket.blocks) {
          const BlockPlacement& block = plan.block(b);
          for (int r = 0; r < world; ++r)
            for (std::size_t i = 0; i < block.chunk_numel; ++i) {
              std::size_t element = r * block.chunk_numel + i;
              buffer[plan.bucket_rank_offset(k, r) + block.offset_in_rank_chunk + i] =
                  element < block.numel ? static_cast<long>(b * 1000 + element) : -1;
            }
        }
        for (int r = 0; r < world; ++r)  // reduce-scatter: rank r receives rank-chunk r
          for (std::size_t i = 0; i < bucket.rank_chunk_numel; ++i)
            shards[r][bucket.shard_offset + i] = buffer[plan.bucket_rank_offset(k, r) + i];
      }
      std::multiset<long> owned;
      for (int r = 0; r < world; ++r)
        for (std::size_t b = 0; b < blocks.size(); ++b) {
          const BlockPlacement& block = plan.block(b);
          for (std::size_t i = 0; i < block.chunk_numel; ++i) {
            std::size_t element = r * block.chunk_numel + i;
            long expected = element < block.numel ? static_cast<long>(b * 1000 + element) : -1;
            ASSERT_EQ(shards[r][block.shard_offset + i], expected)
                << "world " << world << " bucket " << bucket_numel << " rank " << r << " block " << b;
            if (expected >= 0) owned.insert(expected);
          }
        }
      EXPECT_EQ(owned.size(), std::accumulate(blocks.begin(), blocks.end(), 0ul));  // each once
      EXPECT_EQ(std::set<long>(owned.begin(), owned.end()).size(), owned.size());
    }
  }
}

TEST(PartitionPlan, RejectsNonsense) {
  std::vector<std::size_t> blocks = {4};
  EXPECT_THROW(PartitionPlan(blocks, 0, 10), std::invalid_argument);
  EXPECT_THROW(PartitionPlan(blocks, 2, 0), std::invalid_argument);
}

}  // namespace
}  // namespace zt
