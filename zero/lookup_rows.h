// A tied embedding's gradient sent as rows: the tail that layer-granular schedules leave exposed.
//
// GPT-2's token embedding (a third of GPT-2 124M's parameters) is also the LM head's weight. Its
// gradient is the head's product (dense, complete when the head's backward ends, the first of
// backward) plus the lookup's scatter of the output gradient into the rows of the batch's tokens
// (complete when the embedding's backward ends, the last of backward). Reduced as one gradient, the
// whole table's reduction can only start after backward: no bucket size hides it. Split, the
// head's part is reduced while the rest of backward runs (GradientReducer), and the lookup's part
// is exchanged as what it is: each rank's tokens and output-gradient rows (B·T of them), gathered
// by every rank, which adds every rank's rows, in rank order, into its own part of the reduced
// gradient. For GPT-2 124M on 4 ranks with 1 x 1024 tokens each, what is left after backward is
// 6 MB gathered; the table's 77 MB reduce-scatter (of the head's part) runs during backward.
//
// The sums are ordered differently from the dense reduction's (last bits differ); overlap_comm on
// and off run the same exchange and stay bitwise identical. The add is host code: the split is
// used on CPU devices (and the emulated accelerator), not yet on GPUs (it needs a deterministic
// scatter kernel).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "comm/two_level_all_gather.h"
#include "core/buffer.h"
#include "models/model.h"
#include "zero/engine_options.h"
#include "zero/exposed_time.h"
#include "zero/partition.h"
#include "zero/timeline.h"

namespace zt {

// The block whose gradient the engine exchanges as rows for a job of world_size ranks with
// micro batches of B x T on device, or nullopt. A candidate is a lookup block
// (models::LookupRows) that another block is tied to, with more than one rank. `rows` takes it on
// a CPU device (throws std::invalid_argument naming zero_optimization.embedding_gradient on a
// GPU); `automatic` takes it where the rows gathered after backward are fewer bytes than the
// block's dense reduction (lookup_rows_bytes against dense_reduction_bytes), on a CPU device;
// `dense` never does.
std::optional<std::size_t> rows_exchanged_block(const models::Model& model, const ZeroOptions& options,
                                                int world_size, int B, int T, Device device);

// Bytes one rank receives in the rows exchange (every other rank's tokens and rows), and in the
// dense reduction of the block (reduce-scatter; all-reduce at stage 0).
double lookup_rows_bytes(const models::Model& model, std::size_t block, const ZeroOptions& options, int world_size,
                         int B, int T);
double dense_reduction_bytes(const models::Model& model, std::size_t block, const ZeroOptions& options,
                             int world_size);

// Bytes the exchange's gather buffers take on every rank (counted with the buckets).
std::size_t lookup_rows_buffer_bytes(const models::Model& model, std::size_t block, const ZeroOptions& options,
                                     int world_size, int B, int T);

class LookupRowsExchange {
 public:
  // Exchanges block `block`'s lookup gradient for micro batches of B x T over gather's ranks;
  // waits of the compute stream are measured into exposed.
  LookupRowsExchange(const models::Model& model, std::size_t block, const PartitionPlan& plan, int B, int T,
                     TwoLevelAllGather& gather, Stream& compute, Device device, DType dtype, ExposedTime& exposed,
                     MemoryTracker& tracker);
  // Gathers still in flight write into buffers about to be freed: waits for them.
  ~LookupRowsExchange();

  // Backward reached the lookup block: sends this rank's tokens (i32, B·T) and output gradient
  // (B·T rows) to every rank, on the comm stream.
  void launch(BufferView tokens, BufferView d_output);
  // Waits for the exchange and adds every rank's rows times scale, rank by rank and position by
  // position, into the elements of the block's gradient that lie in this rank's shard: those of
  // plan chunk `chunk_rank` (0 with one shard), at the block's offset in grad_shard (f32).
  void add_into(BufferView grad_shard, int chunk_rank, float scale);
  std::vector<Work> take_completed_works() { return std::exchange(works_, {}); }
  void set_timeline(trace::Timeline* timeline) { timeline_ = timeline; }

 private:
  const PartitionPlan& plan_;
  std::size_t block_;
  models::LookupRows rows_;
  int T_;
  std::size_t positions_;  // B·T per rank
  TwoLevelAllGather& gather_;
  Stream& compute_;
  ExposedTime& exposed_;
  Buffer tokens_, gradients_;  // every rank's, rank-major
  Work tokens_work_, gradients_work_;
  std::vector<float> row_;  // one row in fp32
  std::vector<Work> works_;
  trace::Timeline* timeline_ = nullptr;
};

}  // namespace zt
