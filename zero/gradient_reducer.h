// Gradient buckets: the backward hooks' side of ZeRO.
//
// After a block's backward, the engine calls block_ready(). Once a block's gradient is complete
// (it ran backward, and every block tied to it added its part: tied_grads_ready() when that block
// says so before its backward ends, as GPT-2's LM head does halfway through), its pieces are packed into their buckets —
// converted to the communication dtype and laid out rank-major (partition.h) — and every bucket
// whose pieces are all packed has its reduction launched on the comm stream: an all-reduce
// (average) for stage 0, a reduce-scatter (average) onto this rank's range otherwise. The reduced
// range is then added into the fp32 gradient shard.
//
// overlap_comm on: each bucket's reduction is launched as soon as the bucket is full and runs
// while backward goes on. `buffers` bucket buffers are used in turn, so the compute stream waits
// for a reduction only when every buffer holds one still running (PartitionPlan::bucket_buffers
// sizes them from a memory budget). overlap_comm off: the same reductions, in the same order on
// the same buffers, but the compute stream waits for each one before backward continues. Both add
// the same values in the same order into the shard, so the results are bitwise identical; only
// the step time differs.
//
// A block exchanged as rows (rows_block: a tied embedding, zero/lookup_rows.h) is complete when
// the blocks tied to it added their parts (its own backward is the rows exchange, which the engine
// runs). Its buckets are then reduced while the rest of backward runs: spread evenly over the
// block_ready and tied_grads_ready calls left (the first with the call that completed it), so that they do not all
// wait for free bucket buffers at once, and never into the buffer of a bucket still filling
// (those left go in finish()); a bucket it shares with other blocks goes with the last of them.
//
// The plan says which collective (PartitionPlan::reduction, partition.h). In place: the block
// gradients are ranges of the
// fp32 shard itself, which is laid out as the buckets cut it. A full bucket is reduced where it
// lies, so there is nothing to pack, no bucket buffer and nothing to add back. The shard then
// holds the ranks' sum, not their average (sum_divisor()): whoever reads it divides, which the
// optimizer does for free in its gradient multiplier.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "comm/communicator.h"
#include "core/buffer.h"
#include "zero/exposed_time.h"
#include "zero/partition.h"
#include "zero/timeline.h"

namespace zt {

// How the reducer packs a rows block's buckets that wait to be packed (its own, none shared with
// another block): `first` of them with the report that completes the block, then `per_report` with
// each of the `later` blocks still to report (those left go when backward finishes). Spread evenly,
// at least one each; but the first report takes as many as the `spare_buffers` take (the bucket
// buffers less one, kept for the next block's bucket): until the next block ends, nothing else
// wants the link, which would otherwise idle after the first bucket (GPT-2's LM head reports the
// embedding's gradient halfway through its long backward).
struct RowsBucketSpread {
  std::size_t first = 1;
  std::size_t per_report = 1;
};
RowsBucketSpread rows_bucket_spread(std::size_t deferred, std::size_t later, std::size_t spare_buffers);

class GradientReducer {
 public:
  // tied_to[b]: the block whose parameters block b also uses (its gradient feeds that block's).
  // Waits of the compute stream for reductions are measured into exposed.
  GradientReducer(const PartitionPlan& plan, std::vector<std::optional<std::size_t>> tied_to, Communicator& comm,
                  Stream& compute, Device device, DType comm_dtype, bool overlap, std::size_t buffers,
                  ExposedTime& exposed, MemoryTracker& tracker, std::optional<std::size_t> rows_block = std::nullopt);

  // Starts a backward pass whose gradients are reduced into grad_shard (f32, shard_numel);
  // block_grad(b) is block b's complete gradient (any dtype, b's numel elements), asked for once
  // the block and every block tied to it ran backward. In place, block_grad(b) must be b's range
  // of grad_shard. landed(b), if given, is called once block b's chunk of grad_shard holds this
  // pass's reduction (all its buckets added in), in the compute stream's order: work queued then
  // on the compute stream reads the chunk after it.
  void begin(BufferView grad_shard, std::function<BufferView(std::size_t)> block_grad,
             std::function<void(std::size_t)> landed = {});
  // Block b ran backward (never the rows block). Returns the blocks whose gradients were complete
  // and have now been copied into their buckets (their buffers may be reused once the compute
  // stream passes this point).
  std::vector<std::size_t> block_ready(std::size_t block);
  // Block b, tied to another, has added all it adds into that one's gradient, before the rest of
  // its backward (models::BlockGrads::tied_grads_done): the tied block's gradient may be complete
  // now. Returns what block_ready returns; block_ready(b) then reports b alone.
  std::vector<std::size_t> tied_grads_ready(std::size_t block);
  // Waits for every reduction of this pass and folds it into the shard. Returns the blocks packed
  // only now (the rows block's last buckets), as block_ready does.
  std::vector<std::size_t> finish();
  std::vector<Work> take_completed_works() { return std::exchange(works_, {}); }
  // What the reduced shard must be divided by to give the ranks' average: 1, or the world size in
  // place.
  int sum_divisor() const { return in_place_ ? comm_.world_size() : 1; }
  // Reductions and the waits for them go to timeline from now on; null stops recording.
  void set_timeline(trace::Timeline* timeline) { timeline_ = timeline; }

 private:
  struct Slot {
    Buffer buffer;
    std::optional<std::size_t> bucket;  // the bucket whose reduction uses it
    Work work;
  };
  void contribute(std::size_t block, std::vector<std::size_t>& packed);  // one of its contributors ran backward
  void pack_deferred_share(std::vector<std::size_t>& packed);            // the rows buckets due now
  void pack(std::size_t block, std::vector<std::size_t>& packed);
  // The rows block is complete: its buckets wait in deferred_, or go with their other blocks.
  void defer_rows_block(std::vector<std::size_t>& packed);
  void pack_rows_piece(std::size_t bucket, std::vector<std::size_t>& packed);
  bool rows_piece_waits_in(std::size_t bucket) const;
  bool next_rows_buffer_free() const;  // the buffer next in turn holds no bucket that is filling
  void pack_piece(const BucketPiece& piece, BufferView grad, Slot& slot, std::size_t bucket);
  void launch(std::size_t bucket);
  Slot& acquire_slot(std::size_t bucket);
  void drain(Slot& slot);  // waits for the slot's reduction and adds its output into the shard
  void landed(std::size_t bucket);  // the bucket's reduction is in the shard
  void wait(std::size_t bucket, const Work& work);

  const PartitionPlan& plan_;
  Communicator& comm_;
  Stream& compute_;
  DType comm_dtype_;
  bool overlap_;
  bool in_place_;    // plan_.reduction() is in_place
  bool all_reduce_;  // plan_.reduction() is all_reduce or in_place: every rank reduces every bucket
  std::vector<std::optional<std::size_t>> tied_to_;
  std::vector<std::size_t> contributors_;  // per block: itself + the blocks tied to it
  std::vector<std::size_t> pending_;       // per block: contributors that have not run backward
  std::vector<bool> tied_reported_;        // per block: its tied gradient was reported before its end
  std::optional<std::size_t> rows_block_;
  bool rows_block_complete_ = false;       // this pass
  BufferView rows_grad_;                   // its gradient (the tied blocks' part), asked for once when it completed
  std::deque<std::size_t> deferred_;       // its own buckets, not packed yet
  std::size_t rows_buckets_left_ = 0;      // its buckets not packed yet
  std::size_t deferred_now_ = 1;           // deferred buckets the next report packs
  std::size_t deferred_per_block_ = 1;     // deferred buckets packed after each later report
  std::function<BufferView(std::size_t)> block_grad_;
  std::function<void(std::size_t)> landed_;
  std::vector<std::size_t> unlanded_;      // per block: its buckets whose reduction is not in the shard yet
  std::vector<std::size_t> unpacked_;      // per bucket: pieces not packed yet
  std::vector<std::optional<std::size_t>> slot_of_bucket_;
  std::vector<Slot> slots_;            // none in place
  std::size_t next_slot_ = 0;
  std::vector<std::pair<std::size_t, Work>> in_place_works_;  // in place: launched, not waited for
  BufferView grad_shard_;
  ExposedTime& exposed_;
  std::vector<Work> works_;
  trace::Timeline* timeline_ = nullptr;
};

}  // namespace zt
