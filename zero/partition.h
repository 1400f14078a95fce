// How a model's flat parameters are split across ranks and grouped into gradient buckets.
//
// The unit of partitioning is a block (a layer with one flat parameter). Each block's flat
// parameter is padded to a multiple of the world size N and cut into N equal chunks; rank r owns
// chunk r of every block. So a block's all-gather is a true all-gather straight into its padded
// flat parameter, and its reduce-scatter a true reduce-scatter.
//
// Buckets group consecutive blocks in backward order (last block first) up to the bucket size;
// a block larger than a bucket gets a bucket of its own. A bucket is laid out rank-major —
// [chunk 0 of each of its blocks][chunk 1 of each]... — so that one reduce-scatter of the bucket
// hands rank r exactly its chunks of those blocks, already in the order of its shard. A rank's
// shard (fp32 master weights, moments, gradient shard) is the concatenation of its chunks in
// bucket order, the same size on every rank.
//
//   block flat param (padded):  [ c0 | c1 | ... | cN-1 ]          chunk = padded / N
//   bucket {B3, B2}:            [ B3.c0 B2.c0 | B3.c1 B2.c1 | ... ]
//   shard of rank r:            [ B3.cr B2.cr | B1.cr B0.cr ]       (bucket order)
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace zt {

struct BlockPlacement {
  std::size_t numel = 0;         // the block's real parameter count
  std::size_t padded_numel = 0;  // numel rounded up to a multiple of N
  std::size_t chunk_numel = 0;   // padded_numel / N: what each rank owns
  std::size_t bucket = 0;        // index of the bucket that reduces its gradient
  std::size_t offset_in_rank_chunk = 0;  // where its chunk sits inside the bucket's per-rank chunk
  std::size_t shard_offset = 0;  // where its chunk sits inside every rank's shard
};

struct BucketPlacement {
  std::vector<std::size_t> blocks;  // in backward order: the order their gradients become ready
  std::size_t rank_chunk_numel = 0;  // sum of the blocks' chunks; the bucket holds N of these
  std::size_t shard_offset = 0;      // where the reduce-scatter output lands in the shard
  std::size_t numel(int world_size) const { return rank_chunk_numel * static_cast<std::size_t>(world_size); }
};

class PartitionPlan {
 public:
  // block_numels: the parameter count of every block in forward order. bucket_numel: the largest
  // bucket in elements (a larger block still gets a bucket of its own). Throws
  // std::invalid_argument for world_size < 1 or bucket_numel == 0.
  PartitionPlan(std::span<const std::size_t> block_numels, int world_size, std::size_t bucket_numel);

  int world_size() const { return world_size_; }
  const std::vector<BlockPlacement>& blocks() const { return blocks_; }
  const std::vector<BucketPlacement>& buckets() const { return buckets_; }
  const BlockPlacement& block(std::size_t index) const { return blocks_.at(index); }
  const BucketPlacement& bucket(std::size_t index) const { return buckets_.at(index); }

  std::size_t shard_numel() const { return shard_numel_; }  // per rank, equal on all ranks
  std::size_t total_numel() const { return total_numel_; }  // real parameters
  std::size_t padded_total_numel() const { return shard_numel_ * static_cast<std::size_t>(world_size_); }
  std::size_t largest_bucket_numel() const;

  // Rank r's chunk of block b: elements [begin, begin + real) of the block's flat parameter are
  // real; the chunk's remaining chunk_numel - real elements are padding (zeros).
  struct Chunk {
    std::size_t begin = 0;
    std::size_t real = 0;
  };
  Chunk chunk(std::size_t block, int rank) const;
  // Offset of rank r's chunk of a bucket inside the bucket buffer.
  std::size_t bucket_rank_offset(std::size_t bucket, int rank) const;

 private:
  int world_size_;
  std::vector<BlockPlacement> blocks_;
  std::vector<BucketPlacement> buckets_;
  std::size_t shard_numel_ = 0;
  std::size_t total_numel_ = 0;
};

}  // namespace zt
