// This rank's part of the optimizer: the fp32 master weights and AdamW moments of its shard
// (partition.h), the fused update, and their checkpoint form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/buffer.h"
#include "core/stream.h"
#include "models/model.h"
#include "zero/engine_options.h"
#include "zero/partition.h"

namespace zt {

// A run of real (non-padding) parameters of one block that this rank owns.
struct OwnedRange {
  std::size_t block;
  std::size_t begin;         // first element, in the block's flat parameter
  std::size_t count;
  std::size_t shard_offset;  // where element `begin` sits in this rank's shard
};

// Where a checkpoint load gets this rank's fp32 optimizer state from: elements [begin,
// begin + count) of block `block`'s flat parameter (never padding), written to the three outputs.
// The reader behind it may map the range onto files of another world size or ZeRO stage.
class ShardSource {
 public:
  virtual ~ShardSource() = default;
  virtual void read(std::size_t block, std::size_t begin, std::size_t count, float* master, float* exp_avg,
                    float* exp_avg_sq) = 0;
};

// The parts of block b's chunk that ShardOptimizer::update updates and reports one after another:
// [begin, begin + count) of the chunk for each of `pieces` equal parts, their size rounded up to a
// multiple of `alignment` (the plan's chunk alignment, so that each part's all-gather starts on the
// same boundary as the chunks); the last may be shorter, and there may be fewer parts than asked.
struct ChunkPiece {
  std::size_t begin = 0;
  std::size_t count = 0;
};
std::vector<ChunkPiece> chunk_pieces(std::size_t chunk_numel, std::size_t pieces, std::size_t alignment = 1);

// How many pieces the optimizer updates each block's chunk in at stages 1-3 (ShardOptimizer::update):
// block 0, which the forward reads first (a block is only ever tied to an earlier one), in pieces
// of at most a bucket over all ranks, so that the all-gather the next forward waits for first
// starts after one piece's update instead of after the whole block's (GPT-2's embedding: a third
// of the model); every other block in one, its update done while the blocks before it are still
// being gathered.
std::vector<std::size_t> publish_pieces(const PartitionPlan& plan);

class ShardOptimizer {
 public:
  // owner: the plan rank whose chunks this rank updates (stage 0: 0, every rank the whole model).
  ShardOptimizer(const models::Model& model, const PartitionPlan& plan, int owner, const ZeroOptions& options,
                 Device device, MemoryTracker& tracker);

  int owner() const { return owner_; }
  std::vector<OwnedRange> owned_ranges() const;
  BufferView master() const { return master_.view(); }

  // Master weights from host values of the whole shard (padding zero); moments zeroed.
  void reset(const std::vector<float>& master, Stream& stream);
  // AdamW on every owned range: grad_shard (f32) times multiplier (unscaling and clipping). The
  // new weights go, in the compute dtype, to params_out(block, block_offset, shard_offset, count).
  // Blocks are updated in `order` (empty: 0, 1, ...; the elements' values do not depend on it),
  // each in pieces[b] equal parts of its chunk (empty: one), and piece_updated(b, begin, count) is
  // called once elements [begin, begin + count) of the chunk are enqueued, for every piece of every
  // block, owned elements or not: what reads them (the all-gather of that part of every rank's
  // chunk) can start while the rest is updated.
  using ParamsOut = std::function<void*(std::size_t block, std::size_t block_offset, std::size_t shard_offset,
                                        std::size_t count)>;
  using PieceUpdated = std::function<void(std::size_t block, std::size_t begin, std::size_t count)>;
  void update(BufferView grad_shard, double lr, float multiplier, std::int64_t step, const ParamsOut& params_out,
              const std::vector<std::size_t>& pieces, const PieceUpdated& piece_updated, Stream& stream,
              const std::vector<std::size_t>& order = {});

  struct HostState {
    std::vector<float> master, exp_avg, exp_avg_sq;  // the whole shard, padding included (zeros)
  };
  HostState download(Stream& stream) const;
  // The same into `into`, whose vectors keep their memory when their size is unchanged (a
  // snapshot buffer reused save after save: no allocation, no first-touch page faults).
  void download(Stream& stream, HostState& into) const;
  // The owned ranges read from source; returns the new master weights of the whole shard.
  std::vector<float> load(ShardSource& source, Stream& stream);

 private:
  struct Segment {  // a run of this rank's shard under one weight-decay setting
    std::size_t block;
    std::size_t block_offset;  // first element, in the block's flat parameter
    std::size_t shard_offset;
    std::size_t count;
    bool decay;
  };

  const PartitionPlan& plan_;
  int owner_;
  ZeroOptions options_;
  MemoryTracker& tracker_;
  std::vector<Segment> segments_;
  Buffer master_, exp_avg_, exp_avg_sq_;
};

// Host fp32 values to a device view of any dtype, and back, synchronised on stream: for start-up
// and checkpoints, never inside a step.
void upload_f32(BufferView dst, const float* host, Stream& stream, MemoryTracker& tracker);
std::vector<float> download_f32(BufferView src, Stream& stream, MemoryTracker& tracker);
void download_f32(BufferView src, Stream& stream, MemoryTracker& tracker, std::vector<float>& values);

}  // namespace zt
