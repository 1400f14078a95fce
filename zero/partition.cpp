#include "zero/partition.h"

#include <algorithm>
#include <stdexcept>

namespace zt {

std::vector<std::size_t> BucketPlacement::blocks() const {
  std::vector<std::size_t> out;
  for (const BucketPiece& piece : pieces)
    if (out.empty() || out.back() != piece.block) out.push_back(piece.block);
  return out;
}

std::size_t padded_block_numel(std::size_t numel, int shards, std::size_t chunk_alignment) {
  const std::size_t unit = static_cast<std::size_t>(shards) * chunk_alignment;
  return (numel + unit - 1) / unit * unit;
}

PartitionPlan::PartitionPlan(std::span<const std::size_t> block_numels, int shards, std::size_t bucket_numel,
                             std::size_t first_bucket_numel, GradientReduction reduction,
                             std::size_t chunk_alignment)
    : shards_(shards), reduction_(reduction), chunk_alignment_(chunk_alignment) {
  if (shards < 1) throw std::invalid_argument("partition plan: at least one shard is needed");
  if (bucket_numel == 0) throw std::invalid_argument("partition plan: bucket size must be at least 1 element");
  if (chunk_alignment == 0) throw std::invalid_argument("partition plan: the chunk alignment must be at least 1");
  if (reduction != GradientReduction::reduce_scatter && shards != 1)
    throw std::invalid_argument("partition plan: an all-reduce of the gradient (stage 0) needs one shard");
  const std::size_t n = static_cast<std::size_t>(shards);
  blocks_.resize(block_numels.size());
  for (std::size_t b = 0; b < block_numels.size(); ++b) {
    BlockPlacement& block = blocks_[b];
    block.numel = block_numels[b];
    block.padded_numel = padded_block_numel(block.numel, shards, chunk_alignment);
    block.chunk_numel = block.padded_numel / n;
    total_numel_ += block.numel;
  }
  // Per-rank capacities: a bucket holds N ranges, each a whole number of alignment units (at least
  // one). Every block's chunk is too, so every piece and range is.
  auto aligned_capacity = [&](std::size_t numel) {
    return std::max(chunk_alignment, numel / n / chunk_alignment * chunk_alignment);
  };
  const std::size_t capacity = aligned_capacity(bucket_numel);
  const std::size_t first_capacity =
      first_bucket_numel == 0 ? capacity : std::min(aligned_capacity(first_bucket_numel), capacity);
  auto room = [&] {
    if (buckets_.empty()) return std::size_t{0};
    return (buckets_.size() == 1 ? first_capacity : capacity) - buckets_.back().rank_chunk_numel;
  };
  // Walk the blocks in backward order; the shard is their chunks in that order.
  for (std::size_t i = block_numels.size(); i-- > 0;) {
    BlockPlacement& block = blocks_[i];
    block.shard_offset = shard_numel_;
    shard_numel_ += block.chunk_numel;
    // A block that does not fit in the room left starts a bucket of its own, so that the bucket
    // before it is ready without waiting for this block's backward.
    if (block.chunk_numel > room() && (buckets_.empty() || buckets_.back().rank_chunk_numel > 0))
      buckets_.push_back({{}, 0, block.shard_offset});
    for (std::size_t done = 0; done < block.chunk_numel;) {
      if (room() == 0) buckets_.push_back({{}, 0, block.shard_offset + done});
      BucketPlacement& bucket = buckets_.back();
      const std::size_t take = std::min(room(), block.chunk_numel - done);
      bucket.pieces.push_back({i, done, take, bucket.rank_chunk_numel});
      bucket.rank_chunk_numel += take;
      block.buckets.push_back(buckets_.size() - 1);
      done += take;
    }
  }
}

PartitionPlan::Chunk PartitionPlan::chunk(std::size_t block, int rank) const {
  const BlockPlacement& placement = blocks_.at(block);
  const std::size_t begin = std::min(placement.numel, static_cast<std::size_t>(rank) * placement.chunk_numel);
  return {begin, std::min(placement.numel, begin + placement.chunk_numel) - begin};
}

std::size_t PartitionPlan::largest_bucket_numel() const {
  std::size_t largest = 0;
  for (const BucketPlacement& bucket : buckets_) largest = std::max(largest, bucket.numel(shards_));
  return largest;
}

std::size_t PartitionPlan::bucket_buffers(std::size_t budget_numel) const {
  const std::size_t largest = largest_bucket_numel();
  if (largest == 0) return 0;
  return std::min(std::max<std::size_t>(2, budget_numel / largest), buckets_.size());
}

std::vector<BufferView> chunk_parts(BufferView block, std::size_t chunk_numel, int ranks, std::size_t begin,
                                    std::size_t count) {
  std::vector<BufferView> parts;
  for (std::size_t q = 0; q < static_cast<std::size_t>(ranks); ++q) parts.push_back(block.slice(q * chunk_numel + begin, count));
  return parts;
}

std::size_t PartitionPlan::bucket_rank_offset(std::size_t bucket, int rank) const {
  return buckets_.at(bucket).rank_chunk_numel * static_cast<std::size_t>(rank);
}

}  // namespace zt
