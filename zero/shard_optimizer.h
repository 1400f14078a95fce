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
  // Blocks are updated in order, and block_updated(b) is called once b's ranges are enqueued, for
  // every block, owned ranges or not: what reads b's new weights can start while later blocks are
  // updated.
  using ParamsOut = std::function<void*(std::size_t block, std::size_t block_offset, std::size_t shard_offset,
                                        std::size_t count)>;
  using BlockUpdated = std::function<void(std::size_t block)>;
  void update(BufferView grad_shard, double lr, float multiplier, std::int64_t step, const ParamsOut& params_out,
              const BlockUpdated& block_updated, Stream& stream);

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
