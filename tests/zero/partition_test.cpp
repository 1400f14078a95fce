#include "zero/partition.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
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

TEST(PartitionPlan, BucketsFollowBackwardOrderAndCutLargeBlocks) {
  // Blocks of 6, 6, 20, 6 elements (chunks 3, 3, 10, 3) with 2 ranks and buckets of 12 (6 per
  // rank): block 3 opens bucket 0; block 2 does not fit in the room left, so it starts bucket 1
  // and, larger than a bucket, is cut into 6 + 4; block 1 does not fit in the 2 left and starts
  // bucket 3, which block 0 joins.
  std::vector<std::size_t> blocks = {6, 6, 20, 6};
  PartitionPlan plan(blocks, 2, 12);
  ASSERT_EQ(plan.buckets().size(), 4u);
  EXPECT_EQ(plan.bucket(0).blocks(), (std::vector<std::size_t>{3}));
  EXPECT_EQ(plan.bucket(1).blocks(), (std::vector<std::size_t>{2}));
  EXPECT_EQ(plan.bucket(2).blocks(), (std::vector<std::size_t>{2}));
  EXPECT_EQ(plan.bucket(3).blocks(), (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(plan.bucket(1).rank_chunk_numel, 6u);
  EXPECT_EQ(plan.bucket(2).rank_chunk_numel, 4u);
  EXPECT_EQ(plan.bucket(2).pieces[0].chunk_offset, 6u);
  EXPECT_EQ(plan.block(2).buckets, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(plan.bucket(3).numel(2), 12u);
  EXPECT_EQ(plan.largest_bucket_numel(), 12u);
  // Shard order is backward order: block 3's chunk first, block 0's last; buckets tile it.
  EXPECT_EQ(plan.block(3).shard_offset, 0u);
  EXPECT_EQ(plan.block(2).shard_offset, 3u);
  EXPECT_EQ(plan.block(1).shard_offset, 13u);
  EXPECT_EQ(plan.block(0).shard_offset, 16u);
  EXPECT_EQ(plan.bucket(2).shard_offset, 9u);
  EXPECT_EQ(plan.bucket(3).shard_offset, 13u);
  EXPECT_EQ(plan.bucket(3).pieces[1].offset_in_rank_chunk, 3u);
  EXPECT_EQ(plan.bucket_rank_offset(3, 1), 6u);
}

TEST(PartitionPlan, TheFirstBucketIsSmaller) {
  // 2 ranks, buckets of 40, the first of 8 (4 per rank): the last block (chunk 10) is cut 4 + 6.
  std::vector<std::size_t> blocks = {30, 20};
  PartitionPlan plan(blocks, 2, 40, 8);
  ASSERT_EQ(plan.buckets().size(), 3u);
  EXPECT_EQ(plan.bucket(0).rank_chunk_numel, 4u);
  EXPECT_EQ(plan.bucket(1).rank_chunk_numel, 6u);
  EXPECT_EQ(plan.bucket(2).rank_chunk_numel, 15u);  // block 0 does not fit in the 14 left
  // A first bucket larger than the others is capped at their size.
  EXPECT_EQ(PartitionPlan(blocks, 2, 40, 1000).bucket(0).rank_chunk_numel, 10u);
}

TEST(PartitionPlan, BucketBuffersFollowTheBudget) {
  std::vector<std::size_t> blocks = {100, 100, 100, 100, 100};
  PartitionPlan plan(blocks, 1, 100);
  ASSERT_EQ(plan.buckets().size(), 5u);
  EXPECT_EQ(plan.bucket_buffers(0), 2u);    // never fewer than two
  EXPECT_EQ(plan.bucket_buffers(399), 3u);  // whole buffers only
  EXPECT_EQ(plan.bucket_buffers(400), 4u);
  EXPECT_EQ(plan.bucket_buffers(10000), 5u);  // never more than the buckets
  std::vector<std::size_t> one = {10};
  EXPECT_EQ(PartitionPlan(one, 1, 100).bucket_buffers(1000), 1u);
}

// Simulates what the engine does with the plan — copy each block's pieces into their buckets
// rank-major, reduce-scatter each bucket, place the output in the shard — and checks that every
// rank ends up owning exactly chunk r of every block, that the buckets tile the shard and that no
// bucket exceeds its size.
// With a chunk alignment, also: every chunk, every bucket's per-rank range and so every rank's
// offset in a bucket buffer is a multiple of it.
TEST(PartitionPlan, ReduceScatterOfEachBucketLandsOnTheRightShardElements) {
  for (int world : {1, 2, 3, 4, 7}) {
    for (std::size_t bucket_numel : {1ul, 5ul, 13ul, 64ul, 100000ul}) {
      for (std::size_t first : {0ul, 7ul}) {
       for (std::size_t alignment : {1ul, 4ul}) {
        std::vector<std::size_t> blocks = {5, 1, 17, 0, 9, 30, 2};
        PartitionPlan plan(blocks, world, bucket_numel, first, GradientReduction::reduce_scatter, alignment);
        const std::string what = "world " + std::to_string(world) + " bucket " + std::to_string(bucket_numel) +
                                 " alignment " + std::to_string(alignment);
        for (const BlockPlacement& block : plan.blocks()) {
          ASSERT_EQ(block.chunk_numel % alignment, 0u) << what;
          ASSERT_LT(block.padded_numel - block.numel, world * alignment) << what;  // no more padding than that
        }
        // Global id of each padded parameter element: block * 1000 + index (padding: -1).
        std::vector<std::vector<long>> shards(world, std::vector<long>(plan.shard_numel(), -2));
        std::size_t tiled = 0;
        for (std::size_t k = 0; k < plan.buckets().size(); ++k) {
          const BucketPlacement& bucket = plan.bucket(k);
          ASSERT_EQ(bucket.shard_offset, tiled) << what;
          tiled += bucket.rank_chunk_numel;
          ASSERT_LE(bucket.rank_chunk_numel, std::max(alignment, bucket_numel / world)) << what;
          ASSERT_EQ(bucket.rank_chunk_numel % alignment, 0u) << what;
          std::vector<long> buffer(bucket.numel(world), -3);
          for (const BucketPiece& piece : bucket.pieces) {
            const BlockPlacement& block = plan.block(piece.block);
            for (int r = 0; r < world; ++r)
              for (std::size_t i = 0; i < piece.numel; ++i) {
                std::size_t element = r * block.chunk_numel + piece.chunk_offset + i;
                buffer[plan.bucket_rank_offset(k, r) + piece.offset_in_rank_chunk + i] =
                    element < block.numel ? static_cast<long>(piece.block * 1000 + element) : -1;
              }
          }
          for (int r = 0; r < world; ++r)  // reduce-scatter: rank r receives rank-chunk r
            for (std::size_t i = 0; i < bucket.rank_chunk_numel; ++i)
              shards[r][bucket.shard_offset + i] = buffer[plan.bucket_rank_offset(k, r) + i];
        }
        ASSERT_EQ(tiled, plan.shard_numel()) << what;
        std::multiset<long> owned;
        for (int r = 0; r < world; ++r)
          for (std::size_t b = 0; b < blocks.size(); ++b) {
            const BlockPlacement& block = plan.block(b);
            for (std::size_t i = 0; i < block.chunk_numel; ++i) {
              std::size_t element = r * block.chunk_numel + i;
              long expected = element < block.numel ? static_cast<long>(b * 1000 + element) : -1;
              ASSERT_EQ(shards[r][block.shard_offset + i], expected) << what << " rank " << r << " block " << b;
              if (expected >= 0) owned.insert(expected);
            }
          }
        EXPECT_EQ(owned.size(), std::accumulate(blocks.begin(), blocks.end(), 0ul));  // each once
        EXPECT_EQ(std::set<long>(owned.begin(), owned.end()).size(), owned.size());
       }
      }
    }
  }
}

// The shard layout (and so every checkpoint) does not depend on the bucket sizes.
TEST(PartitionPlan, ShardLayoutIsIndependentOfBucketSizes) {
  std::vector<std::size_t> blocks = {5, 1, 17, 0, 9, 30, 2};
  PartitionPlan a(blocks, 3, 4, 2), b(blocks, 3, 100000);
  ASSERT_EQ(a.shard_numel(), b.shard_numel());
  for (std::size_t i = 0; i < blocks.size(); ++i) EXPECT_EQ(a.block(i).shard_offset, b.block(i).shard_offset);
}

TEST(PartitionPlan, RejectsNonsense) {
  std::vector<std::size_t> blocks = {4};
  EXPECT_THROW(PartitionPlan(blocks, 0, 10), std::invalid_argument);
  EXPECT_THROW(PartitionPlan(blocks, 2, 0), std::invalid_argument);
  EXPECT_THROW(PartitionPlan(blocks, 2, 10, 0, GradientReduction::reduce_scatter, 0), std::invalid_argument);
}

}  // namespace
}  // namespace zt
