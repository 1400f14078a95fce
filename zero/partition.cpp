#include "zero/partition.h"

#include <algorithm>
#include <stdexcept>

namespace zt {

PartitionPlan::PartitionPlan(std::span<const std::size_t> block_numels, int world_size, std::size_t bucket_numel)
    : world_size_(world_size) {
  if (world_size < 1) throw std::invalid_argument("partition plan: world size must be at least 1");
  if (bucket_numel == 0) throw std::invalid_argument("partition plan: bucket size must be at least 1 element");
  const std::size_t n = static_cast<std::size_t>(world_size);
  blocks_.resize(block_numels.size());
  for (std::size_t b = 0; b < block_numels.size(); ++b) {
    BlockPlacement& block = blocks_[b];
    block.numel = block_numels[b];
    block.padded_numel = (block.numel + n - 1) / n * n;
    block.chunk_numel = block.padded_numel / n;
    total_numel_ += block.numel;
  }
  // Walk the blocks in backward order, closing a bucket when the next block would overflow it.
  for (std::size_t i = block_numels.size(); i-- > 0;) {
    BlockPlacement& block = blocks_[i];
    bool fits = !buckets_.empty() && (buckets_.back().rank_chunk_numel + block.chunk_numel) * n <= bucket_numel;
    if (!fits) buckets_.push_back({{}, 0, shard_numel_});
    BucketPlacement& bucket = buckets_.back();
    block.bucket = buckets_.size() - 1;
    block.offset_in_rank_chunk = bucket.rank_chunk_numel;
    block.shard_offset = shard_numel_;
    bucket.blocks.push_back(i);
    bucket.rank_chunk_numel += block.chunk_numel;
    shard_numel_ += block.chunk_numel;
  }
}

PartitionPlan::Chunk PartitionPlan::chunk(std::size_t block, int rank) const {
  const BlockPlacement& placement = blocks_.at(block);
  const std::size_t begin = std::min(placement.numel, static_cast<std::size_t>(rank) * placement.chunk_numel);
  return {begin, std::min(placement.numel, begin + placement.chunk_numel) - begin};
}

std::size_t PartitionPlan::largest_bucket_numel() const {
  std::size_t largest = 0;
  for (const BucketPlacement& bucket : buckets_) largest = std::max(largest, bucket.numel(world_size_));
  return largest;
}

std::size_t PartitionPlan::bucket_rank_offset(std::size_t bucket, int rank) const {
  return buckets_.at(bucket).rank_chunk_numel * static_cast<std::size_t>(rank);
}

}  // namespace zt
