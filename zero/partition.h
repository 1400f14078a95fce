// How a model's flat parameters are split across ranks and cut into gradient buckets.
//
// The unit of partitioning is a block (a layer with one flat parameter). Each block's flat
// parameter is padded to a multiple of the world size N (times the chunk alignment: the engine's
// chunks are multiples of kChunkAlignment elements) and cut into N equal chunks; rank r owns
// chunk r of every block. So a block's all-gather is a true all-gather straight into its padded
// flat parameter. A rank's shard (fp32 master weights, moments, gradient shard) is the
// concatenation of its chunks in backward order (last block first), the same size on every rank.
//
// Buckets cut that shard order into consecutive pieces: bucket k covers the same range of every
// rank's shard, and is laid out rank-major — [rank 0's range][rank 1's range]... — so that one
// reduce-scatter of the bucket hands rank r exactly its range of the shard. A bucket holds at most
// bucket_numel elements (first_bucket_numel for the first, so that the first reduction starts
// early, as PyTorch DDP's 1 MiB first bucket does), its per-rank range a multiple of the chunk
// alignment. A block that fits in the room a bucket has
// left joins it; one that does not starts a new bucket, and a block larger than a bucket is cut
// into pieces of a bucket's size. So a bucket becomes ready as soon as the last block with a piece
// in it has run backward, and the shard layout never depends on the bucket sizes.
//
//   block flat param (padded):  [ c0 | c1 | ... | cN-1 ]          chunk = padded / N
//   shard of rank r:            [ B3.cr | B2.cr | B1.cr | B0.cr ]  (backward order)
//   buckets over the shard:     [ B3.cr B2.cr' ][ B2.cr'' ][ B1.cr B0.cr ]   (B2 larger than a bucket)
//   bucket 0 buffer:            [ B3.c0 B2.c0' | B3.c1 B2.c1' | ... ]
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/buffer.h"

namespace zt {

// How a bucket's gradient reaches the ranks that update it, chosen per ZeRO stage
// (make_partition_plan, memory_plan.h).
enum class GradientReduction {
  // Stages 1-3: the parameters are in N shards, and one reduce-scatter of a bucket hands rank r
  // the average of its range.
  reduce_scatter,
  // Stage 0 with 16-bit gradients or communication: one shard (every rank updates every
  // parameter), and every rank receives the average of every bucket, copied out of the bucket
  // buffer into the fp32 gradient.
  all_reduce,
  // Stage 0 in fp32 (and stage 1 on one rank): one shard that is the whole fp32 gradient, laid out
  // as the buckets cut it. Backward writes each block's gradient into it, and each bucket is
  // all-reduced where it lies, left as the ranks' sum: no bucket buffers, no copies.
  in_place,
};

struct BlockPlacement {
  std::size_t numel = 0;         // the block's real parameter count
  std::size_t padded_numel = 0;  // numel rounded up to a multiple of N x the chunk alignment
  std::size_t chunk_numel = 0;   // padded_numel / N: what each rank owns
  std::size_t shard_offset = 0;  // where its chunk sits inside every rank's shard
  std::vector<std::size_t> buckets;  // the buckets holding its pieces, in order
};

// Elements [chunk_offset, chunk_offset + numel) of every rank's chunk of a block, placed at
// offset_in_rank_chunk of the bucket's per-rank range.
struct BucketPiece {
  std::size_t block = 0;
  std::size_t chunk_offset = 0;
  std::size_t numel = 0;
  std::size_t offset_in_rank_chunk = 0;
};

struct BucketPlacement {
  std::vector<BucketPiece> pieces;   // in backward order: the order their gradients become ready
  std::size_t rank_chunk_numel = 0;  // the bucket's range of each shard; the bucket holds N of these
  std::size_t shard_offset = 0;      // where the range (and the reduce-scatter output) starts in the shard
  std::size_t numel(int shards) const { return rank_chunk_numel * static_cast<std::size_t>(shards); }
  std::vector<std::size_t> blocks() const;  // the blocks with a piece in it, in backward order
};

// The engine's chunk alignment, in elements, where a plan has several shards (stages 1-3 on more
// than one rank; stage 0 keeps one shard): 128 bytes of a 16-bit dtype, 256 of fp32. Every rank's
// chunk of a gathered block and range of a bucket then starts on such a boundary, which NCCL's
// Simple and LL128 protocols need for their full speed (an all-gather a few bytes off alignment
// runs markedly slower); the padding costs at most 64 x N elements per block.
inline constexpr std::size_t kChunkAlignment = 64;
inline std::size_t engine_chunk_alignment(int shards) { return shards > 1 ? kChunkAlignment : 1; }

// A block of `numel` elements padded so that it cuts into `shards` chunks of whole
// `chunk_alignment` units.
std::size_t padded_block_numel(std::size_t numel, int shards, std::size_t chunk_alignment);

class PartitionPlan {
 public:
  // block_numels: the parameter count of every block in forward order. shards: the ranks the
  // parameters are split over (1 for all_reduce and in_place). bucket_numel: the largest bucket in
  // elements (over all shards); first_bucket_numel: the first bucket's (0: the same).
  // chunk_alignment: chunks and buckets' per-rank ranges are multiples of it (a bucket's range at
  // least one multiple, whatever bucket_numel says). Throws std::invalid_argument for shards < 1,
  // bucket_numel == 0, chunk_alignment == 0, or a reduction that needs one shard given several.
  PartitionPlan(std::span<const std::size_t> block_numels, int shards, std::size_t bucket_numel,
                std::size_t first_bucket_numel = 0,
                GradientReduction reduction = GradientReduction::reduce_scatter, std::size_t chunk_alignment = 1);

  int shards() const { return shards_; }
  std::size_t chunk_alignment() const { return chunk_alignment_; }
  GradientReduction reduction() const { return reduction_; }
  const std::vector<BlockPlacement>& blocks() const { return blocks_; }
  const std::vector<BucketPlacement>& buckets() const { return buckets_; }
  const BlockPlacement& block(std::size_t index) const { return blocks_.at(index); }
  const BucketPlacement& bucket(std::size_t index) const { return buckets_.at(index); }

  std::size_t shard_numel() const { return shard_numel_; }  // per rank, equal on all ranks
  std::size_t total_numel() const { return total_numel_; }  // real parameters
  std::size_t padded_total_numel() const { return shard_numel_ * static_cast<std::size_t>(shards_); }
  std::size_t largest_bucket_numel() const;
  // How many bucket buffers of largest_bucket_numel() fit in budget_numel elements: at least two
  // (one filling while another reduces), at most one per bucket (0 without buckets).
  std::size_t bucket_buffers(std::size_t budget_numel) const;

  // Rank r's chunk of block b: elements [begin, begin + real) of the block's flat parameter are
  // real; the chunk's remaining chunk_numel - real elements are padding (zeros).
  struct Chunk {
    std::size_t begin = 0;
    std::size_t real = 0;
  };
  Chunk chunk(std::size_t block, int rank) const;
  // Offset of rank r's range of a bucket inside the bucket buffer.
  std::size_t bucket_rank_offset(std::size_t bucket, int rank) const;

 private:
  int shards_;
  GradientReduction reduction_;
  std::size_t chunk_alignment_;
  std::vector<BlockPlacement> blocks_;
  std::vector<BucketPlacement> buckets_;
  std::size_t shard_numel_ = 0;
  std::size_t total_numel_ = 0;
};

// Elements [begin, begin + count) of every rank's chunk of a padded block buffer `block` (chunks of
// chunk_numel, rank order): the output views of an all-gather of that part of the block.
std::vector<BufferView> chunk_parts(BufferView block, std::size_t chunk_numel, int ranks, std::size_t begin,
                                    std::size_t count);

}  // namespace zt
